/*
 * handlers.c - the record procedures of nsrmmdbd: volumes, save sets,
 * fragments and the database check, each mapped onto one mmdb call (or
 * one transaction for the read-modify-write of MM_VOL_WRITTEN).
 *
 * Every write is committed by the engine (fsync'd) before the handler
 * returns, so a reply of success always means "durable".  Every result
 * string is non-NULL: the transport cannot encode NULL strings.
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/cmp.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/log.h"
#include "nsr/mmdb.h"
#include "nsr/mmdb_clnt.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsrmmdb.h"
#include "nsr/stripes.h"
#include "nsr/xmalloc.h"
#include "mmdbd.h"

#define CHECK_REPORT_MAX 65000 /* under the protocol's 65536 */

/* hint - what an administrator can do about an engine error, or "". */
static const char *hint(int rc)
{
	switch (rc) {
	case NSR_ERR_STATE:
		return "; the media database stopped accepting work after an "
		       "I/O error: fix the cause, then restart nsrmmdbd (it "
		       "recovers from its log)";
	case NSR_ERR_NOSPACE:
		return "; the file system holding the media database is full";
	case NSR_ERR_CORRUPT:
	case NSR_ERR_CHECKSUM:
		return "; the media database is damaged: run nsrmmdbd -t to "
		       "check it";
	case NSR_ERR_IO:
		return "; see the system log for disk errors";
	default:
		return "";
	}
}

/* mmdbd_db_status - st for a failed engine call. */
void mmdbd_db_status(nsr_status *st, int rc, const char *fmt, ...)
{
	va_list ap;
	struct nsr_buf b;

	nsr_buf_init(&b, 0);
	va_start(ap, fmt);
	if (nsr_buf_vaddf(&b, fmt, ap) != NSR_OK)
		nsr_fatal("out of memory");
	va_end(ap);
	if (nsr_buf_addf(&b, ": %s%s", nsr_strerror(rc), hint(rc)) != NSR_OK)
		nsr_fatal("out of memory");
	if (rc == NSR_ERR_STATE || rc == NSR_ERR_IO || rc == NSR_ERR_NOSPACE ||
	    rc == NSR_ERR_CORRUPT || rc == NSR_ERR_CHECKSUM)
		nsr_log(NSR_LOG_ERROR, "%s", b.data);
	free(st->msg);
	st->code = rc;
	st->msg = nsr_buf_detach(&b, NULL);
}

/* hexid - 32 hex digits of a volid into buf (>= 33 bytes). */
static const char *hexid(const uint8_t *id, char *buf)
{
	for (int i = 0; i < 16; i++)
		snprintf(buf + 2 * i, 3, "%02x", id[i]);
	return buf;
}

/* begin - take the life lock; 0, or -1 with st set when stopping. */
static int begin(nsr_status *st)
{
	pthread_rwlock_rdlock(&g_mmdbd.life);
	if (g_mmdbd.db)
		return 0;
	pthread_rwlock_unlock(&g_mmdbd.life);
	nsr_status_set(st, NSR_ERR_AGAIN,
		     "nsrmmdbd is shutting down: retry once it is restarted");
	return -1;
}

/* end - release the life lock. */
static void end(void)
{
	pthread_rwlock_unlock(&g_mmdbd.life);
}

/* vol_reply - fill a volume result (empty strings for no volume). */
static void vol_reply(mm_vol_res *r, const struct mmdb_volume *v)
{
	static const struct mmdb_volume none;

	if (mmdb_clnt_vol_to_wire(v ? v : &none, &r->vol) != NSR_OK)
		nsr_fatal("out of memory");
	if (!r->st.msg)
		nsr_status_set(&r->st, NSR_OK, "%s", "");
}

/* vol_get - MM_VOL_GET. */
static int vol_get(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	mm_name_args *a = args;
	mm_vol_res *r = res;
	struct mmdb_volume v;
	int rc;

	NSR_UNUSED(ctx);
	NSR_UNUSED(call);
	if (begin(&r->st)) {
		vol_reply(r, NULL);
		return NSR_OK;
	}
	rc = mmdb_vol_get(g_mmdbd.db, a->name, &v);
	end();
	if (rc == NSR_ERR_NOTFOUND)
		nsr_status_set(&r->st, rc,
			     "volume %s is not in the media database", a->name);
	else if (rc)
		mmdbd_db_status(&r->st, rc, "cannot read volume %s", a->name);
	vol_reply(r, rc ? NULL : &v);
	return NSR_OK;
}

/* vol_get_by_id - MM_VOL_GET_BY_ID. */
static int vol_get_by_id(void *ctx, void *args, void *res,
			 struct nsr_rpc_call *call)
{
	const uint8_t *id = args;
	mm_vol_res *r = res;
	struct mmdb_volume v;
	char hex[33];
	int rc;

	NSR_UNUSED(ctx);
	NSR_UNUSED(call);
	if (begin(&r->st)) {
		vol_reply(r, NULL);
		return NSR_OK;
	}
	rc = mmdb_vol_get_by_id(g_mmdbd.db, id, &v);
	end();
	if (rc == NSR_ERR_NOTFOUND)
		nsr_status_set(&r->st, rc, "no volume with volume id %s is in "
			     "the media database", hexid(id, hex));
	else if (rc)
		mmdbd_db_status(&r->st, rc, "cannot read volume id %s",
				hexid(id, hex));
	vol_reply(r, rc ? NULL : &v);
	return NSR_OK;
}

/* vol_put - MM_VOL_PUT. */
static int vol_put(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	nsr_void_res *r = res;
	struct mmdb_volume v;
	int rc;

	NSR_UNUSED(ctx);
	if (mmdb_clnt_vol_from_wire(args, &v) != NSR_OK) {
		nsr_status_set(&r->st, NSR_ERR_INVAL,
			       "volume record from %s has "
			       "a field longer than the media database allows",
			       nsr_rpc_call_peer(call));
		return NSR_OK;
	}
	if (begin(&r->st))
		return NSR_OK;
	rc = mmdb_vol_put(g_mmdbd.db, NULL, &v);
	end();
	if (rc == NSR_ERR_EXISTS)
		nsr_status_set(&r->st, rc, "cannot store volume %s: its volume "
			     "id belongs to another volume", v.name);
	else if (rc)
		mmdbd_db_status(&r->st, rc, "cannot store volume %s", v.name);
	else
		nsr_status_set(&r->st, NSR_OK, "%s", "");
	return NSR_OK;
}

/* vol_delete - MM_VOL_DELETE. */
static int vol_delete(void *ctx, void *args, void *res,
		      struct nsr_rpc_call *call)
{
	mm_name_args *a = args;
	nsr_void_res *r = res;
	int rc;

	NSR_UNUSED(ctx);
	if (begin(&r->st))
		return NSR_OK;
	rc = mmdb_vol_delete(g_mmdbd.db, NULL, a->name);
	end();
	if (rc == NSR_ERR_NOTFOUND)
		nsr_status_set(&r->st, rc,
			     "volume %s is not in the media database", a->name);
	else if (rc)
		mmdbd_db_status(&r->st, rc, "cannot delete volume %s", a->name);
	else {
		nsr_info("volume %s deleted by %s", a->name,
			 nsr_rpc_call_peer(call));
		nsr_status_set(&r->st, NSR_OK, "%s", "");
	}
	return NSR_OK;
}

/*
 * Serialise MM_VOL_WRITTEN on one volume from read to durable commit.
 * The engine's reads see committed state only and it has no read inside
 * a write transaction; with group commit the writer slot may pass to the
 * next transaction before the previous one is visible, so the writer slot
 * alone would let two updates read the same old count.  Locks are striped
 * by volume id, so updates of different volumes still share fsyncs.
 */
static struct nsr_stripes written;
static pthread_once_t written_once = PTHREAD_ONCE_INIT;

/* written_init - set up the striped locks once. */
static void written_init(void)
{
	nsr_stripes_init(&written);
}

/* written_stripe - the stripe of volid. */
static unsigned written_stripe(const uint8_t *volid)
{
	pthread_once(&written_once, written_init);
	return nsr_stripe_of(volid, 16);
}

/* live_on - a save set with a fragment on volume name that is not
 * recyclable (its data is wanted): its ssid, 0 when every one there is
 * (or none is), UINT32_MAX when they cannot be read (counts as live). */
static uint32_t live_on(const char *name)
{
	struct mmdb_pred pred = {MMDB_A_VOLUME, MMDB_OP_EQ, 0, name};
	struct mmdb_query q = {&pred, 1};
	struct mmdb_cursor *cur = NULL;
	struct mmdb_ss_row row;
	uint32_t live = 0;
	int rc = mmdb_ss_query(g_mmdbd.db, &q, 0, &cur);

	while (rc == NSR_OK && !live && (rc = mmdb_ss_next(cur, &row)) > 0) {
		if (!(row.ss.flags & MMDB_SS_RECYCLABLE))
			live = row.ss.ssid;
		rc = NSR_OK;
	}
	mmdb_cursor_free(cur);
	return rc < 0 ? UINT32_MAX : live;
}

/* vol_written_txn - the read-modify-write of MM_VOL_WRITTEN in one
 * transaction, under the volume's lock.  Marking a volume recyclable
 * (nsrim) is refused with NSR_ERR_STATE, *live naming the save set,
 * while it holds a save set that is not: nsrim judged the volume from
 * what it had read before, and a copy or save recorded on it since
 * would be destroyed by its relabel (under the volume's lock, no
 * fragment of it is recorded meanwhile). */
static int vol_written_txn(const mm_vol_written_args *a,
			   struct mmdb_volume *v, uint32_t *live)
{
	unsigned stripe = written_stripe((const uint8_t *)a->volid);
	struct mmdb_txn *txn = NULL;
	int rc;

	nsr_stripes_lock(&written, stripe);
	rc = mmdb_txn_begin(g_mmdbd.db, &txn);
	if (rc)
		goto out;
	rc = mmdb_vol_get_by_id(g_mmdbd.db, (const uint8_t *)a->volid, v);
	if (rc)
		goto out;
	if ((a->set_flags & MMDB_VOL_RECYCLABLE) &&
	    !(v->flags & MMDB_VOL_RECYCLABLE) && (*live = live_on(v->name))) {
		rc = NSR_ERR_STATE;
		goto out;
	}
	v->written += a->add_written;
	v->written -= NSR_MIN(v->written, a->sub_written);
	v->flags &= ~(a->clear_flags & MMDB_VOL_ALLFLAGS);
	v->flags |= a->set_flags & MMDB_VOL_ALLFLAGS;
	/* The append position only moves forward. */
	if (a->next_file > v->next_file ||
	    (a->next_file == v->next_file && a->next_record > v->next_record)) {
		v->next_file = a->next_file;
		v->next_record = a->next_record;
	}
	rc = mmdb_vol_put(g_mmdbd.db, txn, v);
out:
	rc = mmdb_txn_end(txn, rc);
	nsr_stripes_unlock(&written, stripe);
	return rc;
}

/* Bytes to take off the written figure of one volume. */
struct vol_sub {
	uint64_t sub;
	uint8_t volid[16];
};

/* by_volid - order of vol_sub entries: volume id. */
static int by_volid(const void *a, const void *b)
{
	const struct vol_sub *x = a, *y = b;

	return memcmp(x->volid, y->volid, 16);
}

/* subs_add - the fragments fr[0..nf) (only those of clone instance
 * cloneid, unless 0) as entries of subs.  NSR_OK or NSR_ERR_NOMEM. */
static int subs_add(struct nsr_buf *subs, const struct mmdb_fragment *fr,
		    size_t nf, uint32_t cloneid)
{
	int rc = NSR_OK;

	for (size_t i = 0; rc == NSR_OK && i < nf; i++) {
		struct vol_sub e;

		if (cloneid && fr[i].cloneid != cloneid)
			continue;
		memset(&e, 0, sizeof(e));
		e.sub = fr[i].size;
		memcpy(e.volid, fr[i].volid, 16);
		rc = nsr_buf_add(subs, &e, sizeof(e));
	}
	return rc;
}

/* subs_merge - the entries of subs sorted by volume, one per volume
 * (their bytes summed); adds each volume's stripe to *held. */
static void subs_merge(struct nsr_buf *subs, nsr_stripe_set *held)
{
	struct vol_sub *v = (struct vol_sub *)(void *)subs->data;
	size_t n = subs->len / sizeof(*v), k = 0;

	qsort(v, n, sizeof(*v), by_volid);
	for (size_t i = 0; i < n; i++) {
		if (k && memcmp(v[k - 1].volid, v[i].volid, 16) == 0) {
			v[k - 1].sub += v[i].sub;
			continue;
		}
		v[k++] = v[i];
		nsr_stripe_set_add(held, written_stripe(v[i].volid));
	}
	nsr_buf_setlen(subs, k * sizeof(*v));
}

/* subs_give_back - in txn, take each entry's bytes of subs (merged)
 * off the written figure of its volume if it is an AFTD (clearing
 * full); a volume not in the database is skipped.  The caller holds
 * the volumes' stripes, so the figures read (committed) are the ones
 * replaced.  NSR_OK or the engine's error. */
static int subs_give_back(struct mmdb_txn *txn, const struct nsr_buf *subs)
{
	const struct vol_sub *v = (const void *)subs->data;
	size_t n = subs->len / sizeof(*v);
	int rc = NSR_OK;

	for (size_t i = 0; rc == NSR_OK && i < n; i++) {
		struct mmdb_volume vol;

		rc = mmdb_vol_get_by_id(g_mmdbd.db, v[i].volid, &vol);
		if (rc == NSR_ERR_NOTFOUND) {
			rc = NSR_OK;
			continue;
		}
		if (rc != NSR_OK || strcmp(vol.type, "adv_file") != 0)
			continue;
		vol.written -= NSR_MIN(vol.written, v[i].sub);
		vol.flags &= ~(uint32_t)MMDB_VOL_FULL;
		rc = mmdb_vol_put(g_mmdbd.db, txn, &vol);
	}
	return rc;
}

/* ss_subs - the fragments of save set ssid (only those of clone instance
 * cloneid, unless 0) as entries of subs.  NSR_OK, NSR_ERR_NOTFOUND or
 * another engine error. */
static int ss_subs(uint32_t ssid, uint32_t cloneid, struct nsr_buf *subs)
{
	struct mmdb_fragment *fr = malloc(MMDB_FRAGS_MAX * sizeof(*fr));
	size_t nf = 0;
	int rc = NSR_ERR_NOMEM;

	if (!fr)
		return rc;
	rc = mmdb_frag_list(g_mmdbd.db, ssid, fr, MMDB_FRAGS_MAX, &nf);
	if (rc == NSR_OK)
		rc = subs_add(subs, fr, NSR_MIN(nf, (size_t)MMDB_FRAGS_MAX),
			      cloneid);
	free(fr);
	return rc;
}

/* ss_delete_txn - delete save set ssid (cloneid 0) or only its clone
 * instance cloneid and, in the same transaction, take the deleted
 * fragments' bytes off the written figure of each AFTD volume holding
 * them (clearing full): an AFTD's space comes back with the record (nsrd
 * has the mover remove the files first), so a delete that is repeated
 * after a crash never lowers a figure twice.  The stripe locks are taken
 * in index order, so they cannot deadlock with MM_VOL_WRITTEN, which
 * takes one. */
static int ss_delete_txn(uint32_t ssid, uint32_t cloneid)
{
	nsr_stripe_set held = 0;
	struct mmdb_txn *txn = NULL;
	struct nsr_buf subs;
	int rc;

	nsr_buf_init(&subs, 0);
	rc = ss_subs(ssid, cloneid, &subs);
	if (rc != NSR_OK)
		goto out;
	subs_merge(&subs, &held);
	nsr_stripes_lock_set(&written, held);
	rc = mmdb_txn_begin(g_mmdbd.db, &txn);
	if (rc == NSR_OK)
		rc = subs_give_back(txn, &subs);
	if (rc == NSR_OK)
		rc = cloneid ? mmdb_clone_remove(g_mmdbd.db, txn, ssid, cloneid)
			     : mmdb_ss_delete(g_mmdbd.db, txn, ssid);
	rc = mmdb_txn_end(txn, rc);
	nsr_stripes_unlock_set(&written, held);
out:
	nsr_buf_release(&subs);
	return rc;
}

/* ss_delete_many_txn - MM_SS_DELETE_MANY: every save set of ids[0..n)
 * (sorted here, a repeat skipped) deleted as ss_delete_txn does, all in
 * one transaction: the written figures of the volumes they held are
 * lowered once each, by the sum of their bytes (reads see committed
 * records, so a volume replaced twice in one transaction would keep
 * only its last change).  *deleted and *missing count what went and
 * what was not there. */
static int ss_delete_many_txn(u_int *ids, size_t n, unsigned *deleted,
			      unsigned *missing)
{
	nsr_stripe_set held = 0;
	struct mmdb_txn *txn = NULL;
	struct nsr_buf subs;
	int rc = NSR_OK;

	*deleted = *missing = 0;
	nsr_buf_init(&subs, 0);
	qsort(ids, n, sizeof(*ids), nsr_cmp_u32);
	for (size_t i = 0; rc == NSR_OK && i < n; i++) {
		if (i > 0 && ids[i] == ids[i - 1])
			continue;
		rc = ss_subs(ids[i], 0, &subs);
		if (rc == NSR_ERR_NOTFOUND)
			rc = NSR_OK; /* counted below */
	}
	if (rc != NSR_OK)
		goto out;
	subs_merge(&subs, &held);
	nsr_stripes_lock_set(&written, held);
	rc = mmdb_txn_begin(g_mmdbd.db, &txn);
	if (rc == NSR_OK)
		rc = subs_give_back(txn, &subs);
	for (size_t i = 0; rc == NSR_OK && i < n; i++) {
		if (i > 0 && ids[i] == ids[i - 1]) {
			(*missing)++;
			continue;
		}
		rc = mmdb_ss_delete(g_mmdbd.db, txn, ids[i]);
		if (rc == NSR_ERR_NOTFOUND) {
			(*missing)++;
			rc = NSR_OK;
		} else if (rc == NSR_OK) {
			(*deleted)++;
		}
	}
	rc = mmdb_txn_end(txn, rc);
	nsr_stripes_unlock_set(&written, held);
	if (rc != NSR_OK)
		*deleted = *missing = 0;
out:
	nsr_buf_release(&subs);
	return rc;
}

/* vol_written - MM_VOL_WRITTEN. */
static int vol_written(void *ctx, void *args, void *res,
		       struct nsr_rpc_call *call)
{
	mm_vol_written_args *a = args;
	nsr_void_res *r = res;
	struct mmdb_volume v;
	uint32_t live = 0;
	char hex[33];
	int rc;

	NSR_UNUSED(ctx);
	NSR_UNUSED(call);
	if (begin(&r->st))
		return NSR_OK;
	memset(&v, 0, sizeof(v));
	/* Test knob: refuse one update (nsrmmdbd(8)). */
	rc = nsr_test_once("NSR_TEST_MMDBD_FAIL_WRITTEN")
		     ? NSR_ERR_IO
		     : vol_written_txn(a, &v, &live);
	end();
	hexid((const uint8_t *)a->volid, hex);
	if (rc == NSR_ERR_STATE && live == UINT32_MAX)
		nsr_status_set(&r->st, rc, "volume %s not marked recyclable: "
			       "cannot read the save sets it holds", v.name);
	else if (rc == NSR_ERR_STATE && live)
		nsr_status_set(&r->st, rc, "volume %s not marked recyclable: "
			       "it holds save set %u, which is not", v.name,
			       live);
	else if (rc == NSR_ERR_NOTFOUND)
		nsr_status_set(&r->st, rc, "no volume with volume id %s is in "
			     "the media database", hex);
	else if (rc)
		mmdbd_db_status(&r->st, rc, "cannot update written bytes of "
				"volume %s", v.name[0] ? v.name : hex);
	else
		nsr_status_set(&r->st, NSR_OK, "%s", "");
	return NSR_OK;
}

/* test_die_after - the test knobs NSR_TEST_MMDBD_DIE_AFTER_CREATE and
 * NSR_TEST_MMDBD_DIE_AFTER_DELETE_MANY (knob): once, die (SIGKILL)
 * after a change (what, n: "creating save set", its ssid; "deleting
 * save sets, count", how many) is committed, before the reply, so the
 * caller loses the reply of a change that happened. */
static void test_die_after(const char *knob, const char *what, unsigned n)
{
	if (!nsr_test_once(knob))
		return;
	nsr_warn("test knob: dying after %s %u, before the reply", what, n);
	raise(SIGKILL);
}

/* ss_create - MM_SS_CREATE. */
static int ss_create(void *ctx, void *args, void *res,
		     struct nsr_rpc_call *call)
{
	mm_ss_create_res *r = res;
	struct mmdb_saveset ss;
	uint32_t cloneid = 0;
	int rc;

	NSR_UNUSED(ctx);
	if (mmdb_clnt_ss_from_wire(args, &ss) != NSR_OK) {
		nsr_status_set(&r->st, NSR_ERR_INVAL, "save set record from %s "
			     "has a field out of range (name, client, level or "
			     "dependents)", nsr_rpc_call_peer(call));
		return NSR_OK;
	}
	if (begin(&r->st))
		return NSR_OK;
	rc = mmdb_ss_create(g_mmdbd.db, NULL, &ss, 0, &cloneid);
	end();
	if (rc) {
		mmdbd_db_status(&r->st, rc, "cannot create save set %s:%s",
				ss.client, ss.name);
		return NSR_OK;
	}
	test_die_after("NSR_TEST_MMDBD_DIE_AFTER_CREATE", "creating save set",
		       ss.ssid);
	r->ssid = ss.ssid;
	r->cloneid = cloneid;
	memcpy(r->longid, ss.longid, sizeof(r->longid));
	nsr_status_set(&r->st, NSR_OK, "%s", "");
	return NSR_OK;
}

/* create_many_txn - the save sets of a in one transaction (all or
 * none); made[i] gets the i-th one's ids. */
static int create_many_txn(mm_ss_create_many_args *a, mm_ss_create_res *made)
{
	struct mmdb_txn *txn = NULL;
	struct mmdb_saveset ss;
	int rc = mmdb_txn_begin(g_mmdbd.db, &txn);

	memset(&ss, 0, sizeof(ss));
	for (u_int i = 0; rc == NSR_OK && i < a->sets.sets_len; i++) {
		uint32_t cloneid = 0;

		rc = mmdb_clnt_ss_from_wire(&a->sets.sets_val[i], &ss);
		if (rc == NSR_OK)
			rc = mmdb_ss_create(g_mmdbd.db, txn, &ss, 0, &cloneid);
		made[i].ssid = ss.ssid;
		made[i].cloneid = cloneid;
		memcpy(made[i].longid, ss.longid, sizeof(made[i].longid));
	}
	rc = mmdb_txn_end(txn, rc);
	return rc;
}

/* ss_create_many - MM_SS_CREATE_MANY: save sets created in one
 * transaction, so a burst of starts shares its page writes and fsync. */
static int ss_create_many(void *ctx, void *args, void *res,
			  struct nsr_rpc_call *call)
{
	mm_ss_create_many_args *a = args;
	mm_ss_create_many_res *r = res;
	u_int n = a->sets.sets_len;
	int rc;

	NSR_UNUSED(ctx);
	r->made.made_val = calloc(n ? n : 1, sizeof(*r->made.made_val));
	if (!r->made.made_val) {
		nsr_status_set(&r->st, NSR_ERR_NOMEM, "out of memory");
		return NSR_OK;
	}
	if (begin(&r->st))
		return NSR_OK;
	rc = create_many_txn(a, r->made.made_val);
	end();
	if (rc == NSR_ERR_INVAL) {
		nsr_status_set(&r->st, rc, "save set records from %s: one has "
			       "a field out of range (name, client, level or "
			       "dependents); none was created",
			       nsr_rpc_call_peer(call));
		return NSR_OK;
	}
	if (rc) {
		mmdbd_db_status(&r->st, rc, "cannot create %u save sets", n);
		return NSR_OK;
	}
	for (u_int i = 0; i < n; i++)
		nsr_status_set(&r->made.made_val[i].st, NSR_OK, "%s", "");
	r->made.made_len = n;
	if (n)
		test_die_after("NSR_TEST_MMDBD_DIE_AFTER_CREATE",
			       "creating save set", r->made.made_val[0].ssid);
	nsr_status_set(&r->st, NSR_OK, "%s", "");
	return NSR_OK;
}

/* ss_restore - MM_SS_RESTORE: a save set under its own ssid. */
static int ss_restore(void *ctx, void *args, void *res,
		      struct nsr_rpc_call *call)
{
	mm_ss_restore_args *a = args;
	mm_ss_create_res *r = res;
	struct mmdb_saveset ss;
	int rc;

	NSR_UNUSED(ctx);
	if (mmdb_clnt_ss_from_wire(&a->ss, &ss) != NSR_OK || ss.ssid == 0) {
		nsr_status_set(&r->st, NSR_ERR_INVAL, "save set record from %s "
			     "has a field out of range (ssid, name, client, "
			     "level or dependents)", nsr_rpc_call_peer(call));
		return NSR_OK;
	}
	if (begin(&r->st))
		return NSR_OK;
	rc = mmdb_ss_restore(g_mmdbd.db, NULL, &ss, a->cloneid);
	end();
	if (rc) {
		mmdbd_db_status(&r->st, rc,
				"cannot restore save set %u (%s:%s)", ss.ssid,
				ss.client, ss.name);
		return NSR_OK;
	}
	r->ssid = ss.ssid;
	r->cloneid = a->cloneid ? a->cloneid : (uint32_t)ss.savetime;
	memcpy(r->longid, ss.longid, sizeof(r->longid));
	nsr_status_set(&r->st, NSR_OK, "%s", "");
	return NSR_OK;
}

/* ss_update - MM_SS_UPDATE. */
static int ss_update(void *ctx, void *args, void *res,
		     struct nsr_rpc_call *call)
{
	nsr_void_res *r = res;
	struct mmdb_saveset ss;
	int rc;

	NSR_UNUSED(ctx);
	if (mmdb_clnt_ss_from_wire(args, &ss) != NSR_OK) {
		nsr_status_set(&r->st, NSR_ERR_INVAL, "save set record from %s "
			     "has a field out of range (name, client, level or "
			     "dependents)", nsr_rpc_call_peer(call));
		return NSR_OK;
	}
	if (begin(&r->st))
		return NSR_OK;
	rc = mmdb_ss_update(g_mmdbd.db, NULL, &ss);
	end();
	if (rc == NSR_ERR_NOTFOUND)
		nsr_status_set(&r->st, rc, "save set %u is not in the media "
			     "database", ss.ssid);
	else if (rc)
		mmdbd_db_status(&r->st, rc, "cannot update save set %u",
				ss.ssid);
	else
		nsr_status_set(&r->st, NSR_OK, "%s", "");
	return NSR_OK;
}

/* ss_flags_txn - the read-modify-write of MM_SS_FLAGS in one
 * transaction (the engine has one writer at a time). */
static int ss_flags_txn(const mm_ss_flags_args *a)
{
	struct mmdb_txn *txn = NULL;
	struct mmdb_saveset ss;
	int rc;

	rc = mmdb_txn_begin(g_mmdbd.db, &txn);
	if (rc)
		goto out;
	rc = mmdb_ss_get(g_mmdbd.db, a->ssid, &ss);
	if (rc)
		goto out;
	ss.flags |= a->set & MMDB_SS_ALLFLAGS;
	ss.flags &= ~(a->clear & MMDB_SS_ALLFLAGS);
	rc = mmdb_ss_update(g_mmdbd.db, txn, &ss);
out:
	return mmdb_txn_end(txn, rc);
}

/* A change of MM_SS_FLAGS_MANY with its place in the call. */
struct flags_at {
	mm_ss_flags_args f;
	u_int at;
};

/* by_ssid_at - order: ssid, then place in the call. */
static int by_ssid_at(const void *a, const void *b)
{
	const struct flags_at *x = a, *y = b;

	if (x->f.ssid != y->f.ssid)
		return x->f.ssid < y->f.ssid ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}

/* flags_merge - changes of one save set in call order as one: applying
 * (set, clear) then (set2, clear2) is (set & ~clear2 | set2,
 * clear & ~set2 | clear2). */
static size_t flags_merge(struct flags_at *v, size_t n)
{
	size_t k = 0;

	qsort(v, n, sizeof(*v), by_ssid_at);
	for (size_t i = 0; i < n; i++) {
		mm_ss_flags_args *p = k ? &v[k - 1].f : NULL;

		if (p && p->ssid == v[i].f.ssid) {
			p->set = (p->set & ~v[i].f.clear) | v[i].f.set;
			p->clear = (p->clear & ~v[i].f.set) | v[i].f.clear;
		} else {
			v[k++] = v[i];
		}
	}
	return k;
}

/* flags_many_txn - every change of a in one transaction (those of one
 * save set merged, as the engine reads committed records); *missing
 * counts the save sets not there. */
static int flags_many_txn(const mm_ss_flags_many_args *a, unsigned *missing)
{
	struct mmdb_txn *txn = NULL;
	struct mmdb_saveset ss;
	struct flags_at *v;
	size_t n = a->items.items_len;
	int rc;

	*missing = 0;
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return NSR_ERR_NOMEM;
	for (size_t i = 0; i < n; i++) {
		v[i].f = a->items.items_val[i];
		v[i].at = (u_int)i;
	}
	n = flags_merge(v, n);
	rc = mmdb_txn_begin(g_mmdbd.db, &txn);
	for (size_t i = 0; rc == NSR_OK && i < n; i++) {
		const mm_ss_flags_args *f = &v[i].f;

		rc = mmdb_ss_get(g_mmdbd.db, f->ssid, &ss);
		if (rc == NSR_ERR_NOTFOUND) {
			(*missing)++;
			rc = NSR_OK;
			continue;
		}
		if (rc)
			break;
		ss.flags |= f->set & MMDB_SS_ALLFLAGS;
		ss.flags &= ~(f->clear & MMDB_SS_ALLFLAGS);
		rc = mmdb_ss_update(g_mmdbd.db, txn, &ss);
	}
	rc = mmdb_txn_end(txn, rc);
	free(v);
	return rc;
}

/* many_status - the reply of a batch call (MM_SS_FLAGS_MANY,
 * MM_VOL_RETENT_MANY) that ended with rc: "cannot VERB N WHAT". */
static void many_status(mm_ss_flags_many_res *r, int rc, const char *verb,
			u_int n, const char *what)
{
	if (rc)
		mmdbd_db_status(&r->st, rc, "cannot %s %u %s", verb, n, what);
	else
		nsr_status_set(&r->st, NSR_OK, "%s", "");
}

/* ss_flags_many - MM_SS_FLAGS_MANY: all of them or none. */
static int ss_flags_many(void *ctx, void *args, void *res,
			 struct nsr_rpc_call *call)
{
	mm_ss_flags_many_args *a = args;
	mm_ss_flags_many_res *r = res;
	int rc;

	NSR_UNUSED(ctx);
	NSR_UNUSED(call);
	if (begin(&r->st))
		return NSR_OK;
	rc = flags_many_txn(a, &r->missing);
	end();
	many_status(r, rc, "change the flags of", a->items.items_len,
		    "save sets");
	return NSR_OK;
}

/* retent_many_txn - every retention time of a in one transaction, under
 * the locks of the volumes' stripes (taken in index order, as
 * ss_delete_txn does, so MM_VOL_WRITTEN's read-modify-writes never
 * interleave); *missing counts the volumes not there. */
static int retent_many_txn(const mm_vol_retent_many_args *a,
			   unsigned *missing)
{
	nsr_stripe_set held = 0;
	struct mmdb_txn *txn = NULL;
	struct mmdb_volume v;
	int rc;

	*missing = 0;
	for (u_int i = 0; i < a->items.items_len; i++)
		nsr_stripe_set_add(&held,
				   written_stripe((const uint8_t *)a->items
							  .items_val[i]
							  .volid));
	nsr_stripes_lock_set(&written, held);
	rc = mmdb_txn_begin(g_mmdbd.db, &txn);
	for (u_int i = 0; rc == NSR_OK && i < a->items.items_len; i++) {
		const mm_vol_retent *it = &a->items.items_val[i];

		rc = mmdb_vol_get_by_id(g_mmdbd.db,
					(const uint8_t *)it->volid, &v);
		if (rc == NSR_ERR_NOTFOUND) {
			(*missing)++;
			rc = NSR_OK;
			continue;
		}
		if (rc == NSR_OK && v.volretent != it->volretent) {
			v.volretent = it->volretent;
			rc = mmdb_vol_put(g_mmdbd.db, txn, &v);
		}
	}
	rc = mmdb_txn_end(txn, rc);
	nsr_stripes_unlock_set(&written, held);
	return rc;
}

/* vol_retent_many - MM_VOL_RETENT_MANY: all of them or none. */
static int vol_retent_many(void *ctx, void *args, void *res,
			   struct nsr_rpc_call *call)
{
	mm_vol_retent_many_args *a = args;
	mm_ss_flags_many_res *r = res;
	int rc;

	NSR_UNUSED(ctx);
	NSR_UNUSED(call);
	if (begin(&r->st))
		return NSR_OK;
	rc = retent_many_txn(a, &r->missing);
	end();
	many_status(r, rc, "set the retention times of", a->items.items_len,
		    "volumes");
	return NSR_OK;
}

/* ss_flags - MM_SS_FLAGS. */
static int ss_flags(void *ctx, void *args, void *res,
		    struct nsr_rpc_call *call)
{
	mm_ss_flags_args *a = args;
	nsr_void_res *r = res;
	int rc;

	NSR_UNUSED(ctx);
	if (begin(&r->st))
		return NSR_OK;
	rc = ss_flags_txn(a);
	end();
	if (rc == NSR_ERR_NOTFOUND)
		nsr_status_set(&r->st, rc, "save set %u is not in the media "
			     "database", a->ssid);
	else if (rc)
		mmdbd_db_status(&r->st, rc, "cannot change the flags of save "
				"set %u", a->ssid);
	else
		nsr_status_set(&r->st, NSR_OK, "%s", "");
	if (rc == NSR_OK && (a->set | a->clear) & MMDB_SS_SUSPECT)
		nsr_info("save set %u %s suspect (asked by %s)", a->ssid,
			 a->set & MMDB_SS_SUSPECT ? "marked" : "no longer",
			 nsr_rpc_call_peer(call));
	return NSR_OK;
}

/* ss_get - MM_SS_GET. */
static int ss_get(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	static const struct mmdb_saveset none;
	u_int ssid = *(u_int *)args;
	mm_ss_res *r = res;
	struct mmdbd_reader who;
	struct mmdb_saveset ss;
	int rc = NSR_ERR_AGAIN;

	NSR_UNUSED(ctx);
	if (!begin(&r->st)) {
		rc = mmdb_ss_get(g_mmdbd.db, ssid, &ss);
		end();
		mmdbd_reader_of(call, &who);
		if (rc == NSR_ERR_NOTFOUND)
			nsr_status_set(&r->st, rc, "save set %u is not in the "
				     "media database", ssid);
		else if (rc)
			mmdbd_db_status(&r->st, rc, "cannot read save set %u",
					ssid);
		else if (!mmdbd_reader_may(&who, ss.client))
			mmdbd_reader_deny(call, ssid, ss.client, &r->st);
		else
			nsr_status_set(&r->st, NSR_OK, "%s", "");
		if (r->st.code)
			rc = r->st.code;
	}
	if (mmdb_clnt_ss_to_wire(rc ? &none : &ss, &r->ss) != NSR_OK)
		nsr_fatal("out of memory");
	return NSR_OK;
}

/* ss_delete - MM_SS_DELETE. */
static int ss_delete(void *ctx, void *args, void *res,
		     struct nsr_rpc_call *call)
{
	u_int ssid = *(u_int *)args;
	nsr_void_res *r = res;
	int rc;

	NSR_UNUSED(ctx);
	if (begin(&r->st))
		return NSR_OK;
	rc = ss_delete_txn(ssid, 0);
	end();
	if (rc == NSR_ERR_NOTFOUND)
		nsr_status_set(&r->st, rc, "save set %u is not in the media "
			     "database", ssid);
	else if (rc)
		mmdbd_db_status(&r->st, rc, "cannot delete save set %u", ssid);
	else {
		nsr_info("save set %u deleted by %s", ssid,
			 nsr_rpc_call_peer(call));
		nsr_status_set(&r->st, NSR_OK, "%s", "");
	}
	return NSR_OK;
}

/* ss_delete_many - MM_SS_DELETE_MANY: all of them or none. */
static int ss_delete_many(void *ctx, void *args, void *res,
			  struct nsr_rpc_call *call)
{
	mm_ss_delete_many_args *a = args;
	mm_ss_delete_many_res *r = res;
	u_int n = a->ssids.ssids_len;
	int rc;

	NSR_UNUSED(ctx);
	if (begin(&r->st))
		return NSR_OK;
	rc = ss_delete_many_txn(a->ssids.ssids_val, n, &r->deleted,
				&r->missing);
	end();
	if (rc) {
		mmdbd_db_status(&r->st, rc, "cannot delete %u save sets", n);
		return NSR_OK;
	}
	if (r->deleted) {
		nsr_info("%u save set(s) deleted by %s (%u not there)",
			 r->deleted, nsr_rpc_call_peer(call), r->missing);
		test_die_after("NSR_TEST_MMDBD_DIE_AFTER_DELETE_MANY",
			       "deleting save sets, count", r->deleted);
	}
	nsr_status_set(&r->st, NSR_OK, "%s", "");
	return NSR_OK;
}

/* clone_add - MM_CLONE_ADD: a new clone instance (nsrd, for nsrclone). */
static int clone_add(void *ctx, void *args, void *res,
		     struct nsr_rpc_call *call)
{
	mm_clone_add_res *r = res;
	struct mmdb_clone cl;
	uint32_t id = 0;
	int rc;

	NSR_UNUSED(ctx);
	mmdb_clnt_clone_from_wire(args, &cl);
	if (begin(&r->st))
		return NSR_OK;
	rc = mmdb_clone_add(g_mmdbd.db, NULL, &cl, &id);
	end();
	if (rc == NSR_ERR_NOTFOUND)
		nsr_status_set(&r->st, rc, "save set %u is not in the media "
			     "database", cl.ssid);
	else if (rc == NSR_ERR_TOOBIG)
		nsr_status_set(&r->st, rc, "save set %u has %d clone instances "
			     "already, the most it can have: delete one "
			     "(nsrmm -d -V of a volume holding one) first",
			     cl.ssid, MMDB_CLONES_MAX);
	else if (rc)
		mmdbd_db_status(&r->st, rc, "cannot add a clone instance to "
				"save set %u", cl.ssid);
	else {
		r->cloneid = id;
		nsr_info("save set %u: clone instance %u added by %s", cl.ssid,
			 id, nsr_rpc_call_peer(call));
		nsr_status_set(&r->st, NSR_OK, "%s", "");
	}
	return NSR_OK;
}

/* clone_set - MM_CLONE_SET: change a clone instance's flags, or remove
 * the instance with its fragments. */
static int clone_set(void *ctx, void *args, void *res,
		     struct nsr_rpc_call *call)
{
	mm_clone_set_args *a = args;
	nsr_void_res *r = res;
	int rc;

	NSR_UNUSED(ctx);
	if (begin(&r->st))
		return NSR_OK;
	if (a->remove)
		rc = a->cloneid ? ss_delete_txn(a->ssid, a->cloneid)
				: NSR_ERR_NOTFOUND;
	else
		rc = mmdb_clone_set(g_mmdbd.db, NULL, a->ssid, a->cloneid,
				    a->set & 0xfu, a->clear & 0xfu);
	end();
	if (rc == NSR_ERR_NOTFOUND)
		nsr_status_set(&r->st, rc, "save set %u has no clone instance "
			     "%u in the media database", a->ssid, a->cloneid);
	else if (rc == NSR_ERR_STATE && a->remove)
		nsr_status_set(&r->st, rc, "clone instance %u is the only "
			     "copy of save set %u: delete the save set "
			     "instead (nsrmm -d -S %u)", a->cloneid, a->ssid,
			     a->ssid);
	else if (rc)
		mmdbd_db_status(&r->st, rc, "cannot change clone instance %u "
				"of save set %u", a->cloneid, a->ssid);
	else {
		if (a->remove)
			nsr_info("save set %u: clone instance %u removed by %s",
				 a->ssid, a->cloneid, nsr_rpc_call_peer(call));
		nsr_status_set(&r->st, NSR_OK, "%s", "");
	}
	return NSR_OK;
}

/* frag_add_txn - record fragment f and, in the same transaction and
 * under its volume's lock (as MM_VOL_WRITTEN), raise the volume's
 * retention time to the save set's: volretent is the latest retention
 * of what the volume holds (nsrim sets it exactly, chains included).
 * A volume marked recyclable that takes a fragment of a save set that
 * is not loses the mark: a copy or save that was being written when
 * nsrim judged the volume (it saw no fragment of it yet) would
 * otherwise be destroyed by the volume's relabel. */
static int frag_add_txn(const struct mmdb_fragment *f)
{
	unsigned stripe = written_stripe(f->volid);
	struct mmdb_txn *txn = NULL;
	struct mmdb_saveset ss;
	struct mmdb_volume v;
	int rc;

	nsr_stripes_lock(&written, stripe);
	rc = mmdb_txn_begin(g_mmdbd.db, &txn);
	if (rc == NSR_OK)
		rc = mmdb_frag_add(g_mmdbd.db, txn, f);
	if (rc == NSR_OK && mmdb_ss_get(g_mmdbd.db, f->ssid, &ss) == NSR_OK &&
	    mmdb_vol_get_by_id(g_mmdbd.db, f->volid, &v) == NSR_OK &&
	    (ss.ssretent > v.volretent ||
	     ((v.flags & MMDB_VOL_RECYCLABLE) &&
	      !(ss.flags & MMDB_SS_RECYCLABLE)))) {
		v.volretent = NSR_MAX(v.volretent, ss.ssretent);
		if (!(ss.flags & MMDB_SS_RECYCLABLE)) {
			if (v.flags & MMDB_VOL_RECYCLABLE)
				nsr_warn("volume %s is recyclable no more: "
					 "save set %u, which is not, was "
					 "recorded on it", v.name, f->ssid);
			v.flags &= ~(uint32_t)MMDB_VOL_RECYCLABLE;
		}
		rc = mmdb_vol_put(g_mmdbd.db, txn, &v);
	}
	rc = mmdb_txn_end(txn, rc);
	nsr_stripes_unlock(&written, stripe);
	return rc;
}

/* frag_add - MM_FRAG_ADD. */
static int frag_add(void *ctx, void *args, void *res,
		    struct nsr_rpc_call *call)
{
	nsr_void_res *r = res;
	struct mmdb_fragment f;
	char hex[33];
	int rc;

	NSR_UNUSED(ctx);
	NSR_UNUSED(call);
	mmdb_clnt_frag_from_wire(args, &f);
	if (begin(&r->st))
		return NSR_OK;
	rc = frag_add_txn(&f);
	end();
	if (rc == NSR_ERR_NOTFOUND)
		nsr_status_set(&r->st, rc, "cannot record fragment %u of save "
			     "set %u/%u: the save set, its clone or volume id "
			     "%s is not in the media database", f.seq, f.ssid,
			     f.cloneid, hexid(f.volid, hex));
	else if (rc)
		mmdbd_db_status(&r->st, rc, "cannot record fragment %u of save "
				"set %u/%u", f.seq, f.ssid, f.cloneid);
	else
		nsr_status_set(&r->st, NSR_OK, "%s", "");
	return NSR_OK;
}

/* frag_list - MM_FRAG_LIST. */
static int frag_list(void *ctx, void *args, void *res,
		     struct nsr_rpc_call *call)
{
	u_int ssid = *(u_int *)args;
	mm_frag_list_res *r = res;
	struct mmdb_fragment *f;
	size_t n = 0;
	int rc;

	NSR_UNUSED(ctx);
	NSR_UNUSED(call);
	if (begin(&r->st))
		return NSR_OK;
	f = nsr_xcalloc(MMDB_FRAGS_MAX, sizeof(*f));
	/* Test knob: refuse one listing (nsrmmdbd(8)). */
	rc = nsr_test_once("NSR_TEST_MMDBD_FAIL_FRAG_LIST")
		     ? NSR_ERR_IO
		     : mmdb_frag_list(g_mmdbd.db, ssid, f, MMDB_FRAGS_MAX, &n);
	end();
	if (rc == NSR_ERR_NOTFOUND)
		nsr_status_set(&r->st, rc, "save set %u is not in the media "
			     "database", ssid);
	else if (rc)
		mmdbd_db_status(&r->st, rc, "cannot list the fragments of "
				"save set %u", ssid);
	else {
		n = NSR_MIN(n, (size_t)MMDB_FRAGS_MAX);
		r->frags.frags_val = nsr_xcalloc(n + 1, sizeof(mm_fragment));
		for (size_t i = 0; i < n; i++)
			mmdb_clnt_frag_to_wire(&f[i], &r->frags.frags_val[i]);
		r->frags.frags_len = (u_int)n;
		nsr_status_set(&r->st, NSR_OK, "%s", "");
	}
	free(f);
	return NSR_OK;
}

/* check - MM_CHECK: run the engine's check, report bounded. */
static int check(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	mm_check_res *r = res;
	struct nsr_buf rep;
	int rc;

	NSR_UNUSED(ctx);
	NSR_UNUSED(args);
	nsr_buf_init(&rep, 0);
	if (begin(&r->st)) {
		r->report = nsr_xstrdup("");
		nsr_buf_release(&rep);
		return NSR_OK;
	}
	rc = mmdb_check(g_mmdbd.db, &rep);
	end();
	if (rep.len > CHECK_REPORT_MAX) {
		nsr_buf_setlen(&rep, CHECK_REPORT_MAX);
		nsr_buf_addstr(&rep, "\n... (report truncated)\n");
	}
	nsr_info("media database check requested by %s: %s",
		 nsr_rpc_call_peer(call), rc ? nsr_strerror(rc) : "ok");
	if (rc == NSR_ERR_CORRUPT)
		nsr_status_set(&r->st, rc, "the media database %s is damaged; "
			     "see the report", g_mmdbd.dir);
	else if (rc)
		mmdbd_db_status(&r->st, rc, "cannot check the media database "
				"%s", g_mmdbd.dir);
	else
		nsr_status_set(&r->st, NSR_OK, "%s", "");
	r->report = nsr_buf_detach(&rep, NULL);
	return NSR_OK;
}

/* Access classes: reads are public (query rows and ss_get show only what
 * the caller may read: authz.c), but for a volume by name or id (only
 * the server's programs look one up: nsrd, scanner); writes are ADMIN
 * (mmdbd_authz: the server's programs and administrators). */
#define PROC(num, name, xa, sa, xr, sr, fn) \
	{num, name, NSR_XDR(xa), sa, NSR_XDR(xr), sr, fn, 0}
#define WRITE(num, name, xa, sa, xr, sr, fn) \
	{num, name, NSR_XDR(xa), sa, NSR_XDR(xr), sr, fn, NSR_RPC_ADMIN}
#define DAEMON WRITE

static const struct nsr_rpc_proc mmdbd_procs[] = {
	DAEMON(MM_VOL_GET, "vol_get", xdr_mm_name_args, sizeof(mm_name_args),
	       xdr_mm_vol_res, sizeof(mm_vol_res), vol_get),
	DAEMON(MM_VOL_GET_BY_ID, "vol_get_by_id", xdr_mm_volid,
	       sizeof(mm_volid), xdr_mm_vol_res, sizeof(mm_vol_res),
	       vol_get_by_id),
	WRITE(MM_VOL_PUT, "vol_put", xdr_mm_volume, sizeof(mm_volume),
	     xdr_nsr_void_res, sizeof(nsr_void_res), vol_put),
	WRITE(MM_VOL_DELETE, "vol_delete", xdr_mm_name_args,
	     sizeof(mm_name_args), xdr_nsr_void_res, sizeof(nsr_void_res),
	     vol_delete),
	WRITE(MM_VOL_WRITTEN, "vol_written", xdr_mm_vol_written_args,
	     sizeof(mm_vol_written_args), xdr_nsr_void_res,
	     sizeof(nsr_void_res), vol_written),
	WRITE(MM_SS_CREATE, "ss_create", xdr_mm_saveset, sizeof(mm_saveset),
	     xdr_mm_ss_create_res, sizeof(mm_ss_create_res), ss_create),
	WRITE(MM_SS_CREATE_MANY, "ss_create_many",
	      xdr_mm_ss_create_many_args, sizeof(mm_ss_create_many_args),
	      xdr_mm_ss_create_many_res, sizeof(mm_ss_create_many_res),
	      ss_create_many),
	WRITE(MM_SS_UPDATE, "ss_update", xdr_mm_saveset, sizeof(mm_saveset),
	     xdr_nsr_void_res, sizeof(nsr_void_res), ss_update),
	PROC(MM_SS_GET, "ss_get", xdr_u_int, sizeof(u_int), xdr_mm_ss_res,
	     sizeof(mm_ss_res), ss_get),
	WRITE(MM_SS_DELETE, "ss_delete", xdr_u_int, sizeof(u_int),
	     xdr_nsr_void_res, sizeof(nsr_void_res), ss_delete),
	WRITE(MM_SS_DELETE_MANY, "ss_delete_many",
	      xdr_mm_ss_delete_many_args, sizeof(mm_ss_delete_many_args),
	      xdr_mm_ss_delete_many_res, sizeof(mm_ss_delete_many_res),
	      ss_delete_many),
	WRITE(MM_FRAG_ADD, "frag_add", xdr_mm_fragment, sizeof(mm_fragment),
	     xdr_nsr_void_res, sizeof(nsr_void_res), frag_add),
	PROC(MM_FRAG_LIST, "frag_list", xdr_u_int, sizeof(u_int),
	     xdr_mm_frag_list_res, sizeof(mm_frag_list_res), frag_list),
	PROC(MM_QUERY_OPEN, "query_open", xdr_mm_query_args,
	     sizeof(mm_query_args), xdr_nsr_void_res, sizeof(nsr_void_res),
	     mmdbd_query_open),
	PROC(MM_QUERY_NEXT, "query_next", xdr_mm_next_args,
	     sizeof(mm_next_args), xdr_mm_next_res, sizeof(mm_next_res),
	     mmdbd_query_next),
	PROC(MM_CHECK, "check", xdr_void, 0, xdr_mm_check_res,
	     sizeof(mm_check_res), check),
	WRITE(MM_SS_RESTORE, "ss_restore", xdr_mm_ss_restore_args,
	     sizeof(mm_ss_restore_args), xdr_mm_ss_create_res,
	     sizeof(mm_ss_create_res), ss_restore),
	WRITE(MM_SS_FLAGS, "ss_flags", xdr_mm_ss_flags_args,
	     sizeof(mm_ss_flags_args), xdr_nsr_void_res,
	     sizeof(nsr_void_res), ss_flags),
	WRITE(MM_CLONE_ADD, "clone_add", xdr_mm_clone, sizeof(mm_clone),
	     xdr_mm_clone_add_res, sizeof(mm_clone_add_res), clone_add),
	WRITE(MM_CLONE_SET, "clone_set", xdr_mm_clone_set_args,
	     sizeof(mm_clone_set_args), xdr_nsr_void_res,
	     sizeof(nsr_void_res), clone_set),
	WRITE(MM_SNAPSHOT, "snapshot", xdr_void, 0, xdr_mm_snapshot_res,
	     sizeof(mm_snapshot_res), mmdbd_snapshot),
	WRITE(MM_SS_FLAGS_MANY, "ss_flags_many", xdr_mm_ss_flags_many_args,
	     sizeof(mm_ss_flags_many_args), xdr_mm_ss_flags_many_res,
	     sizeof(mm_ss_flags_many_res), ss_flags_many),
	WRITE(MM_VOL_RETENT_MANY, "vol_retent_many",
	      xdr_mm_vol_retent_many_args, sizeof(mm_vol_retent_many_args),
	      xdr_mm_ss_flags_many_res, sizeof(mm_ss_flags_many_res),
	      vol_retent_many),
};

const struct nsr_rpc_prog mmdbd_progs[1] = {
	{NSRMMDBD_PROG, NSRMMDBD_V1, mmdbd_procs,
	 NSR_ARRAY_SIZE(mmdbd_procs), &g_mmdbd, mmdbd_authz},
};
