/*
 * report.c - what nsrmmd tells the media database (nsrmmdbd on the
 * server): a fragment once it is durable (MM_FRAG_ADD) and the bytes and
 * append position of the volume (MM_VOL_WRITTEN, which also marks a full
 * volume).  One short connection per report: sessions end seldom compared
 * with the data they carry, and a restarted nsrmmdbd needs no reconnect
 * logic here.  Without a server (-s not given) nothing is reported.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/mmdb.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsrmmdb.h"

#include "mmd.h"

/* frag_flags - MMDB_FRAG_* for a fragment's place in its save set. */
static uint32_t frag_flags(const struct nsr_vol_frag *f)
{
	if (f->frag_seq == 0)
		return f->complete ? MMDB_FRAG_COMPLETE : MMDB_FRAG_HEAD;
	return f->complete ? MMDB_FRAG_TAIL : MMDB_FRAG_MIDDLE;
}

/* simple_call - one call with an nsr_void_res answer to nsrmmdbd. */
static int simple_call(struct mmd *m, uint32_t proc, xdrproc_t xa, void *a,
		       struct nsr_buf *why)
{
	struct nsr_rpc_clnt *c = NULL;
	nsr_void_res r;
	int rc;

	memset(&r, 0, sizeof(r));
	rc = nsr_rpc_open(m->server, NSRMMDBD_PROG, NSRMMDBD_V1, &c, why);
	if (rc != NSR_OK)
		return rc;
	nsr_rpc_set_timeout(c, 60000);
	rc = nsr_rpc_call(c, proc, xa, a, NSR_XDR(xdr_nsr_void_res), &r);
	if (rc != NSR_OK) {
		nsr_buf_addstr(why, nsr_rpc_last_error(c));
	} else if (r.st.code != NSR_OK) {
		rc = r.st.code < 0 ? r.st.code : NSR_ERR_PROTO;
		nsr_buf_addstr(why, r.st.msg ? r.st.msg : "");
	}
	xdr_free(NSR_XDR(xdr_nsr_void_res), (char *)&r);
	nsr_rpc_close(c);
	return rc;
}

/* mmd_report_frag - MM_FRAG_ADD. */
int mmd_report_frag(struct mmd *m, const struct nsr_vol_frag *f,
		    uint32_t cloneid, struct nsr_buf *why)
{
	mm_fragment a;

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
	return simple_call(m, MM_FRAG_ADD, NSR_XDR(xdr_mm_fragment), &a, why);
}

/* mmd_report_written - MM_VOL_WRITTEN. */
int mmd_report_written(struct mmd *m, const uint8_t volid[16], uint64_t add,
		       uint32_t next_file, uint64_t next_record,
		       uint32_t set_flags, struct nsr_buf *why)
{
	mm_vol_written_args a;

	if (!m->server)
		return NSR_OK;
	memset(&a, 0, sizeof(a));
	memcpy(a.volid, volid, sizeof(a.volid));
	a.add_written = add;
	a.next_file = next_file;
	a.next_record = next_record;
	a.set_flags = set_flags;
	return simple_call(m, MM_VOL_WRITTEN, NSR_XDR(xdr_mm_vol_written_args),
			   &a, why);
}
