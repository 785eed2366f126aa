/*
 * report.c - what nsrmmd tells the media database (nsrmmdbd on the
 * server): a fragment once it is durable (MM_FRAG_ADD) and the bytes and
 * append position of the volume (MM_VOL_WRITTEN, which also marks a full
 * volume).  Through the media database's client library, on one
 * long-lived connection shared by the sessions under report_mu; while
 * nsrmmdbd restarts, a report waits for it (bounded, peer.h) instead of
 * failing the save.  Without a server (-s not given) nothing is reported.
 */
#include "nsr/compat.h"

#include <pthread.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/mmdb.h"
#include "nsr/mmdb_clnt.h"
#include "nsr/peer.h"

#include "mmd.h"

static pthread_mutex_t report_mu = PTHREAD_MUTEX_INITIALIZER;
static struct mmdb_clnt *report_db; /* guarded by report_mu */

/* frag_flags - MMDB_FRAG_* for a fragment's place in its save set. */
static uint32_t frag_flags(const struct nsr_vol_frag *f)
{
	if (f->frag_seq == 0)
		return f->complete ? MMDB_FRAG_COMPLETE : MMDB_FRAG_HEAD;
	return f->complete ? MMDB_FRAG_TAIL : MMDB_FRAG_MIDDLE;
}

/* db_locked - the connection to the server's nsrmmdbd (holds report_mu). */
static struct mmdb_clnt *db_locked(struct mmd *m)
{
	if (!report_db &&
	    mmdb_clnt_new(m->server, nsr_peer_wait_default(), &report_db) !=
		    NSR_OK)
		report_db = NULL;
	if (report_db)
		mmdb_clnt_set_timeout(report_db, 60000);
	return report_db;
}

/* mmd_report_frag - MM_FRAG_ADD. */
int mmd_report_frag(struct mmd *m, const struct nsr_vol_frag *f,
		    uint32_t cloneid, struct nsr_buf *why)
{
	struct mmdb_fragment a;
	struct mmdb_clnt *db;
	int rc;

	if (!m->server)
		return NSR_OK;
	memset(&a, 0, sizeof(a));
	a.ssid = f->ssid;
	a.cloneid = cloneid;
	memcpy(a.volid, f->volid, sizeof(a.volid));
	a.seq = f->frag_seq;
	a.ss_offset = f->ss_offset;
	a.size = f->size;
	a.file = f->file;
	a.record = f->record;
	a.offset = f->offset;
	a.flags = frag_flags(f);
	pthread_mutex_lock(&report_mu);
	db = db_locked(m);
	rc = db ? mmdb_clnt_frag_add(db, &a) : NSR_ERR_NOMEM;
	if (rc != NSR_OK)
		nsr_buf_addstr(why, db ? mmdb_clnt_errmsg(db)
				       : nsr_strerror(rc));
	pthread_mutex_unlock(&report_mu);
	return rc;
}

/* mmd_report_written - MM_VOL_WRITTEN. */
int mmd_report_written(struct mmd *m, const uint8_t volid[16], uint64_t add,
		       uint32_t next_file, uint64_t next_record,
		       uint32_t set_flags, struct nsr_buf *why)
{
	struct mmdb_clnt *db;
	int rc;

	if (!m->server)
		return NSR_OK;
	pthread_mutex_lock(&report_mu);
	db = db_locked(m);
	rc = db ? mmdb_clnt_vol_written(db, volid, add, next_file,
					next_record, set_flags)
		: NSR_ERR_NOMEM;
	if (rc != NSR_OK)
		nsr_buf_addstr(why, db ? mmdb_clnt_errmsg(db)
				       : nsr_strerror(rc));
	pthread_mutex_unlock(&report_mu);
	return rc;
}
