/*
 * save.c - save sessions: MMD_SS_BEGIN opens (or shares) the volume writer
 * of the device and starts a session bound to the connection; MMD_SS_DATA
 * is one-way and only remembers the session's first error; MMD_SS_SYNC
 * answers how much of the session is placed on the volume (the client's
 * acknowledgement window); MMD_SS_END makes the fragment durable, reports
 * it to the media database, and answers with the fragment or that first
 * error.
 *
 * Spanning: when a volume fills up (a tape's end of medium, an AFTD's
 * file system or capacity), the part of the session on it is made
 * durable, the volume is marked full, and the session stops here: its
 * later data calls are dropped and its next MMD_SS_SYNC or MMD_SS_END is
 * answered NSR_ERR_EOM with the resume offset (the first byte not on the
 * volume), the next fragment number and the full volume.  The client,
 * which kept every byte after the last placed offset, settles the session
 * with MMD_SS_END (the part on the full volume is recorded then, unless
 * the client aborts because the save set cannot go on), asks nsrd for the
 * next volume and continues at that volume's mover itself.  This mover
 * never talks to another mover.  A session that begins on a volume
 * already full (nsrd chose it before it learned) starts in that state,
 * with nothing on the volume, so its client goes on at once.
 *
 * Striping (stripe.c): an AFTD session's data calls may come over several
 * connections; they reach mmd_save_chunk in seq order, and every use of
 * such a session holds its stripe's mutex (MMD_SS_SYNC waits there for
 * the calls before it).
 *
 * Invariants:
 *  1. a fragment is reported to nsrmmdbd only after nsr_vol_session_end
 *     or nsr_vol_session_eom returned NSR_OK (the data is durable);
 *  2. m->sessions counts the struct mmd_save that hold the writer
 *     (s->held); the writer is closed when it drops to zero; a session
 *     lets go of it at the end of medium; m->saves counts every struct
 *     mmd_save from its begin to its free, so a label waits for a
 *     session past the end of medium whose part is not recorded yet;
 *  3. after the first error of a session, its data calls are dropped;
 *  4. after an end of medium (s->eom) a session has no volume session and
 *     holds no writer; its data calls are dropped and every reply-bearing
 *     call answers NSR_ERR_EOM with the same resume offset;
 *  5. the placed offset answered by MMD_SS_SYNC never exceeds the resume
 *     offset of a later end of medium (the writer's bytes on the volume
 *     only grow, and the fragment on a full volume holds all of them);
 *  6. the part on a full volume is recorded only when the client settles
 *     the session with MMD_SS_END after it was told of the end of medium,
 *     and not if it aborts: a save set that cannot go on leaves no
 *     fragment.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/log.h"
#include "nsr/mmd_clnt.h"
#include "nsr/mmdb.h"
#include "nsr/rpc_status.h"
#include "nsr/xmalloc.h"

#include "mmd.h"

/* mmd_save_fail - remember the first error of the session. */
void mmd_save_fail(struct mmd_save *s, int rc, char *msg)
{
	if (s->err != NSR_OK) {
		free(msg);
		return;
	}
	s->err = rc;
	s->errmsg = msg;
	nsr_error("%s", msg);
}

/* release_writer - one session fewer; close the writer after the last. */
static void release_writer(struct mmd *m, struct mmd_save *s)
{
	if (!s->held)
		return;
	s->held = 0;
	pthread_mutex_lock(&m->mu);
	if (m->sessions > 0)
		m->sessions--;
	if (m->sessions == 0 && m->w) {
		int rc = nsr_vol_writer_close(m->w);

		if (rc != NSR_OK)
			nsr_warn("closing the volume in device %s: %s",
				 m->dev_name, nsr_strerror(rc));
		m->w = NULL;
	}
	mmd_touch(m);
	pthread_mutex_unlock(&m->mu);
}

/* drop_part - the part of s on its full AFTD will not be recorded (the
 * client aborted, or went away before it settled): its session file goes,
 * so no byte of the disk is held by nothing (its bytes were never added
 * to the volume's written figure: settle adds them when it records it).
 * The one file is unlinked by its number, with no intent record: the
 * disk is full, and a crash can only leave it as it was, unrecorded.
 * A tape's part stays on the medium, counted, until it is relabeled. */
static void drop_part(struct mmd *m, struct mmd_save *s)
{
	struct nsr_dev *dev = NULL;
	struct nsr_buf why;
	int rc;

	if (m->dev_type != NSR_DEV_AFTD || s->eom_frag.size == 0)
		return;
	nsr_buf_init(&why, 0);
	rc = mmd_dev_open_extra(m, 0, &dev, &why);
	if (rc == NSR_OK) {
		rc = nsr_dev_file_remove(dev, s->eom_frag.file);
		if (rc != NSR_OK)
			nsr_buf_addstr(&why, nsr_dev_errmsg(dev));
	}
	if (rc != NSR_OK)
		nsr_error("save set %u: cannot remove its unrecorded part "
			  "(session file %u) from volume %s in device %s: %s",
			  s->hdr.ssid, s->eom_frag.file, s->volname,
			  m->dev_name, why.len ? why.data : nsr_strerror(rc));
	else
		nsr_info("save set %u: its unrecorded part on volume %s "
			 "removed (session file %u, %llu bytes)",
			 s->hdr.ssid, s->volname, s->eom_frag.file,
			 (unsigned long long)s->eom_frag.size);
	nsr_dev_close(dev);
	nsr_buf_release(&why);
}

/* mmd_save_free - the connection went away with a session open. */
void mmd_save_free(struct mmd *m, struct mmd_save *s)
{
	if (s->stripe) {
		/* First: no joined connection touches s after this. */
		mmd_stripe_detach(m, s->stripe);
		s->stripe = NULL;
	}
	if (s->vs) {
		nsr_warn("save set %u (%s:%s) aborted: the client connection "
			 "closed before the session ended", s->hdr.ssid,
			 s->hdr.client, s->hdr.name);
		nsr_vol_session_abort(s->vs);
	}
	if (s->eom && !s->settled && s->err == NSR_OK) {
		nsr_warn("save set %u (%s:%s): the client connection closed "
			 "before it settled the session after volume %s filled;"
			 " the part on that volume is not recorded",
			 s->hdr.ssid, s->hdr.client, s->hdr.name, s->volname);
		drop_part(m, s);
	}
	free(s->errmsg);
	mmd_ctr_close(s->ctr);
	release_writer(m, s);
	pthread_mutex_lock(&m->mu);
	if (m->saves > 0)
		m->saves--;
	pthread_mutex_unlock(&m->mu);
	free(s);
}

/* copy_str - bounded copy of a hostile string; -1 if too long. */
static int copy_str(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src);

	if (n >= size)
		return -1;
	memcpy(dst, src, n + 1);
	return 0;
}

/* hdr_from_args - the save-set header from MMD_SS_BEGIN's arguments. */
static int hdr_from_args(struct nsr_vol_sshdr *h, const mmd_begin_args *a)
{
	memset(h, 0, sizeof(*h));
	h->ssid = a->ssid;
	memcpy(h->longid, a->longid, sizeof(h->longid));
	if (copy_str(h->client, sizeof(h->client), a->client) ||
	    copy_str(h->name, sizeof(h->name), a->name) ||
	    copy_str(h->level, sizeof(h->level), a->level) ||
	    copy_str(h->pool, sizeof(h->pool), a->pool))
		return -1;
	h->savetime = a->savetime;
	h->browse_time = a->browse_time;
	h->retention_time = a->retention_time;
	return 0;
}

/* volid_zero - 1 if the volume id is all zero ("whatever is mounted"). */
static int volid_zero(const char *v)
{
	for (int i = 0; i < 16; i++)
		if (v[i])
			return 0;
	return 1;
}

/* writer_get_locked - the writer for volume volid (holds mu). */
static int writer_get_locked(struct mmd *m, const char *volid,
			     struct nsr_buf *why)
{
	struct nsr_vol_wopts o;
	char want[33], have[33];
	int rc;

	if (m->w) {
		const struct nsr_vol_label *l = nsr_vol_writer_label(m->w);

		if (volid_zero(volid) || memcmp(l->volid, volid, 16) == 0)
			return NSR_OK;
		mmd_volid_str((const uint8_t *)volid, want);
		mmd_volid_str(l->volid, have);
		nsr_buf_addf(why, "device %s holds volume %s (id %s), not the "
			     "volume with id %s", m->dev_name, l->name, have,
			     want);
		return NSR_ERR_MISMATCH;
	}
	if (m->readers > 0 && m->dev_type != NSR_DEV_AFTD) {
		nsr_buf_addf(why, "device %s is being read by %u recover "
			     "sessions", m->dev_name, m->readers);
		return NSR_ERR_BUSY;
	}
	rc = mmd_dev_open_locked(m, 1, why);
	if (rc != NSR_OK)
		return rc;
	memset(&o, 0, sizeof(o));
	o.expect_volid = volid_zero(volid) ? NULL : (const uint8_t *)volid;
	o.no_sync = m->no_sync;
	o.segment_size = m->segment_size; /* the writer uses it on tape */
	rc = nsr_vol_writer_open(m->dev, &o, &m->w, why);
	if (rc != NSR_OK)
		m->w = NULL;
	return rc;
}

/* volume_filled - end of medium (a tape's end, a full AFTD, or a volume
 * found full at the session's begin: no volume session then): make the
 * part on the volume durable, mark the volume full, let go of the writer
 * and stop the session here (invariant 4); the client continues it
 * elsewhere.  The session's error, if making the part durable failed. */
static int volume_filled(struct mmd *m, struct mmd_save *s)
{
	struct nsr_buf why;
	int rc;

	nsr_buf_init(&why, 4096);
	memset(&s->eom_frag, 0, sizeof(s->eom_frag));
	rc = s->vs ? nsr_vol_session_eom(s->vs, &s->eom_frag, NULL) : NSR_OK;
	s->vs = NULL;
	release_writer(m, s);
	if (rc != NSR_OK) {
		mmd_save_fail(
			s, rc,
			nsr_xasprintf("save set %u: volume %s in device %s "
				      "is full and the part of the save set "
				      "on it could not be made durable: %s",
				      s->hdr.ssid, s->volname, m->dev_name,
				      nsr_strerror(rc)));
		goto out;
	}
	/* An AFTD's part counts when it is recorded (settle), or goes. */
	if (mmd_report_written(m, s->volid,
			       m->dev_type == NSR_DEV_AFTD ? 0
							  : s->eom_frag.size,
			       0, 0, MMDB_VOL_FULL, &why) != NSR_OK)
		nsr_warn("cannot mark volume %s full in the media database: %s",
			 s->volname, why.data);
	s->eom = 1;
	nsr_info("volume %s in device %s is full: save set %u (%s:%s) has "
		 "%llu bytes on it; the client goes on from offset %llu on "
		 "another volume", s->volname, m->dev_name, s->hdr.ssid,
		 s->hdr.client, s->hdr.name,
		 (unsigned long long)s->eom_frag.size,
		 (unsigned long long)(s->span.ss_offset + s->eom_frag.size));
out:
	nsr_buf_release(&why);
	return s->err;
}

/* begin_session - MMD_SS_BEGIN and MMD_CLONE_BEGIN: the fragment is
 * reported under cloneid (0 = the one the save time names). */
static int begin_session(struct mmd *m, const mmd_begin_args *a,
			 uint32_t cloneid, nsr_void_res *r,
			 struct nsr_rpc_call *call)
{
	struct mmd_conn *c = mmd_conn_get(call, m);
	struct nsr_vol_span sp;
	struct mmd_save *s = NULL;
	struct nsr_buf why;
	int rc, full = 0;

	nsr_buf_init(&why, 4096);
	if (c->save) {
		mmd_status(&r->st, NSR_ERR_BUSY, "save set %u: the session of "
			   "save set %u is still open on this connection",
			   a->ssid, c->save->hdr.ssid);
		goto out;
	}
	s = nsr_xcalloc(1, sizeof(*s));
	if (hdr_from_args(&s->hdr, a) != 0) {
		mmd_status(&r->st, NSR_ERR_INVAL, "save set %u: client, name, "
			   "level or pool is too long", a->ssid);
		goto out;
	}
	s->cloneid = cloneid ? cloneid : (uint32_t)a->savetime;
	sp.frag_seq = a->frag_seq;
	sp.ss_offset = a->ss_offset;
	s->span = sp;

	pthread_mutex_lock(&m->mu);
	mmd_touch(m);
	rc = writer_get_locked(m, a->volid, &why);
	if (rc == NSR_OK) {
		rc = nsr_vol_session_begin(m->w, &s->hdr, &sp, &s->vs);
		full = rc == NSR_ERR_EOM; /* the writer found it full */
		if (full)
			rc = NSR_OK;
	}
	if (rc == NSR_OK) {
		const struct nsr_vol_label *l = nsr_vol_writer_label(m->w);

		memcpy(s->volid, l->volid, 16);
		snprintf(s->volname, sizeof(s->volname), "%s", l->name);
		m->sessions++;
		m->saves++;
		s->held = 1;
	} else if (m->w && m->sessions == 0) {
		if (!why.len)
			nsr_buf_addstr(&why, nsr_vol_writer_errmsg(m->w));
		nsr_vol_writer_close(m->w);
		m->w = NULL;
	}
	pthread_mutex_unlock(&m->mu);
	if (rc != NSR_OK) {
		mmd_status(&r->st, rc, "cannot start save set %u (%s:%s) on "
			   "device %s: %s", a->ssid, a->client, a->name,
			   m->dev_name, why.len ? why.data : nsr_strerror(rc));
		goto out;
	}
	nsr_info("save set %u (%s:%s, level %s) started on volume %s in "
		 "device %s%s, from %s", s->hdr.ssid, s->hdr.client,
		 s->hdr.name, s->hdr.level, s->volname, m->dev_name,
		 cloneid ? " (a clone)" : "", nsr_rpc_call_peer(call));
	s->ctr = mmd_ctr_open(s->hdr.ssid, 0);
	if (full)
		volume_filled(m, s); /* the client goes on at once */
	c->save = s;
	s = NULL;
	mmd_status(&r->st, NSR_OK, "%s", "");
out:
	free(s);
	nsr_buf_release(&why);
	return NSR_OK;
}

/* mmd_h_ss_begin - MMD_SS_BEGIN. */
int mmd_h_ss_begin(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	return begin_session(ctx, args, 0, res, call);
}

/* mmd_h_clone_begin - MMD_CLONE_BEGIN: a save session writing a copy of
 * a save set under the clone instance nsrd made for it. */
int mmd_h_clone_begin(void *ctx, void *args, void *res,
		      struct nsr_rpc_call *call)
{
	mmd_clone_begin_args *a = args;

	if (a->cloneid == 0) {
		mmd_status(&((nsr_void_res *)res)->st, NSR_ERR_INVAL,
			   "save set %u: a clone session needs a clone id",
			   a->b.ssid);
		return NSR_OK;
	}
	return begin_session(ctx, &a->b, a->cloneid, res, call);
}

/* eom_answer - NSR_ERR_EOM and where the save set resumes (invariant 4). */
static void eom_answer(struct mmd *m, struct mmd_save *s, nsr_status *st,
		       mmd_eom *e)
{
	const struct nsr_vol_frag *f = &s->eom_frag;

	e->spans = TRUE;
	e->resume = s->span.ss_offset + f->size;
	e->frag_seq = f->size > 0 ? s->span.frag_seq + 1 : s->span.frag_seq;
	memcpy(e->full_volid, s->volid, sizeof(e->full_volid));
	nsr_status_set(st, NSR_ERR_EOM, "volume %s in device %s is full at "
		       "byte %llu of save set %u", s->volname, m->dev_name,
		       (unsigned long long)e->resume, s->hdr.ssid);
	s->eom_told = 1;
}

/* mmd_save_chunk - write data call seq in order (invariant 3, 4). */
void mmd_save_chunk(struct mmd *m, struct mmd_save *s, uint64_t seq,
		    const void *p, size_t len)
{
	int rc;

	if (s->err != NSR_OK)
		return;
	if (s->eom) {
		s->dropped += len;
		return;
	}
	if (seq != s->next_seq) {
		mmd_save_fail(s, NSR_ERR_PROTO,
			      nsr_xasprintf("save set %u: data call %llu "
					    "arrived where %llu was expected; "
					    "the client lost data on the way",
					    s->hdr.ssid,
					    (unsigned long long)seq,
					    (unsigned long long)s->next_seq));
		return;
	}
	s->next_seq++;
	s->bytes += len;
	mmd_ctr_add(s->ctr, len);
	rc = nsr_vol_session_write(s->vs, p, len);
	if (rc == NSR_ERR_EOM)
		volume_filled(m, s);
	else if (rc != NSR_OK)
		mmd_save_fail(s, rc,
			      nsr_xasprintf("save set %u: writing to volume %s "
					    "in device %s failed: %s",
					    s->hdr.ssid, s->volname,
					    m->dev_name,
					    nsr_vol_writer_errmsg(m->w)));
}

/* mmd_h_ss_data - MMD_SS_DATA (one-way: never replies). */
int mmd_h_ss_data(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	struct mmd *m = ctx;
	mmd_data_args *a = args;
	struct mmd_conn *c = mmd_conn_get(call, m);
	struct mmd_save *s = c->save;

	NSR_UNUSED(res);
	if (c->joined || (s && s->stripe)) {
		mmd_stripe_data(m, c->joined ? c->joined : s->stripe, a);
		return NSR_RPC_NOREPLY;
	}
	if (!s) {
		if (!c->warned)
			nsr_warn("data from %s without a save session: "
				 "dropped (logged once per connection)",
				 nsr_rpc_call_peer(call));
		c->warned = 1;
		return NSR_RPC_NOREPLY;
	}
	mmd_save_chunk(m, s, a->seq, a->data.data_val, a->data.data_len);
	return NSR_RPC_NOREPLY;
}

/* sync_answer - how far the session is placed (invariant 5).  Striped,
 * the data calls before the sync came over other connections too: wait
 * for them first. */
static void sync_answer(struct mmd *m, struct mmd_save *s,
			const mmd_sync_args *a, mmd_sync_res *r)
{
	uint64_t on_vol = 0;

	if (s->stripe)
		mmd_stripe_wait_locked(s->stripe, a->seq);
	if (s->err == NSR_OK && !s->eom &&
	    (s->stripe ? a->seq > s->next_seq : a->seq != s->next_seq))
		mmd_save_fail(s, NSR_ERR_PROTO,
			      nsr_xasprintf("save set %u: %llu data calls "
					    "were sent before a sync, %llu "
					    "arrived",
					    s->hdr.ssid,
					    (unsigned long long)a->seq,
					    (unsigned long long)s->next_seq));
	if (s->err != NSR_OK) {
		nsr_status_set(&r->st, s->err, "%s", s->errmsg);
		return;
	}
	if (s->eom) {
		eom_answer(m, s, &r->st, &r->eom);
		return;
	}
	/* Invariant 5: bytes in blocks written stay in the fragment. */
	nsr_vol_session_bytes(s->vs, &on_vol, NULL);
	r->placed = s->span.ss_offset + on_vol;
	nsr_status_set(&r->st, NSR_OK, "%s", "");
}

/* mmd_h_ss_sync - MMD_SS_SYNC: how far the session is placed. */
int mmd_h_ss_sync(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	struct mmd *m = ctx;
	mmd_sync_res *r = res;
	struct mmd_conn *c = mmd_conn_get(call, m);
	struct mmd_save *s = c->save;
	struct mmd_stripe *st;

	if (!s) {
		mmd_status(&r->st, NSR_ERR_STATE,
			   "no save session is open on this connection");
		return NSR_OK;
	}
	st = s->stripe;
	if (st)
		pthread_mutex_lock(&st->mu);
	sync_answer(m, s, args, r);
	if (st)
		pthread_mutex_unlock(&st->mu);
	return NSR_OK;
}

/* finish - end the volume session and record the fragment (an end of
 * medium on tape/vtape stops the session instead: s->eom). */
static int finish(struct mmd *m, struct mmd_save *s, const mmd_end_args *a,
		  struct nsr_vol_frag *frag)
{
	struct nsr_vol_sstail t;
	struct nsr_buf why;
	int rc;

	t.bytes = a->bytes;
	t.files = a->files;
	t.status = a->status;
	rc = nsr_vol_session_end(s->vs, &t, frag);
	if (rc == NSR_ERR_EOM)
		return volume_filled(m, s);
	s->vs = NULL;
	if (rc != NSR_OK) {
		mmd_save_fail(
			s, rc,
			nsr_xasprintf("save set %u: ending it on volume %s "
				      "in device %s failed: %s",
				      s->hdr.ssid, s->volname, m->dev_name,
				      nsr_strerror(rc)));
		return rc;
	}
	nsr_buf_init(&why, 4096);
	rc = mmd_report_frag(m, frag, s->cloneid, &why);
	if (rc != NSR_OK) {
		mmd_save_fail(
			s, rc,
			nsr_xasprintf("save set %u is on volume %s but the "
				      "media database on %s did not record "
				      "it: %s; run scanner -m on the volume "
				      "to add it",
				      s->hdr.ssid, s->volname, m->server,
				      why.data));
		goto out;
	}
	/* The fragment is recorded: the save set is safe whatever
	 * becomes of the volume's figures, so a failure here only warns. */
	if (mmd_report_written(m, frag->volid, frag->size,
			       frag->file + (m->dev_type == NSR_DEV_AFTD),
			       frag->record, 0, &why) != NSR_OK)
		nsr_warn("save set %u is on volume %s and recorded, but the "
			 "media database on %s did not add its %llu bytes to "
			 "the volume's written figure: %s; the save set is "
			 "safe and recoverable, only the volume's written "
			 "figure (mminfo -m) is low by that much", s->hdr.ssid,
			 s->volname, m->server,
			 (unsigned long long)frag->size, why.data);
out:
	nsr_buf_release(&why);
	return rc;
}

/* settle - MMD_SS_END after the client was told of the end of medium:
 * record the part on the full volume unless it aborts (invariant 6). */
static void settle(struct mmd *m, struct mmd_save *s, const mmd_end_args *a)
{
	struct nsr_buf why;

	if (a->status == NSR_VOL_SS_ABORTED) {
		nsr_warn("save set %u (%s:%s) cannot go on after volume %s "
			 "filled; its part on that volume is not recorded",
			 s->hdr.ssid, s->hdr.client, s->hdr.name, s->volname);
		drop_part(m, s);
		return;
	}
	if (s->eom_frag.size == 0)
		return; /* not even its begin chunk reached the volume */
	nsr_buf_init(&why, 4096);
	if (mmd_report_frag(m, &s->eom_frag, s->cloneid, &why) != NSR_OK)
		mmd_save_fail(
			s, NSR_ERR_IO,
			nsr_xasprintf("save set %u: the media database on "
				      "%s did not record its part on the "
				      "full volume %s: %s",
				      s->hdr.ssid, m->server, s->volname,
				      why.data));
	else if (m->dev_type == NSR_DEV_AFTD &&
		 mmd_report_written(m, s->volid, s->eom_frag.size, 0, 0, 0,
				    &why) != NSR_OK)
		nsr_warn("save set %u is recorded on volume %s, but its %llu "
			 "bytes there are not in the volume's written figure: "
			 "%s", s->hdr.ssid, s->volname,
			 (unsigned long long)s->eom_frag.size, why.data);
	else
		nsr_info("save set %u (%s:%s): %llu bytes on the full volume "
			 "%s recorded (fragment %u); received %llu bytes, "
			 "dropped %llu after the end of medium, passed none on",
			 s->hdr.ssid, s->hdr.client, s->hdr.name,
			 (unsigned long long)s->eom_frag.size, s->volname,
			 s->eom_frag.frag_seq,
			 (unsigned long long)(s->bytes + s->dropped),
			 (unsigned long long)s->dropped);
	nsr_buf_release(&why);
}

/* mmd_h_ss_end - MMD_SS_END. */
int mmd_h_ss_end(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	struct mmd *m = ctx;
	mmd_end_args *a = args;
	mmd_end_res *r = res;
	struct mmd_conn *c = mmd_conn_get(call, m);
	struct mmd_save *s = c->save;
	struct nsr_vol_frag frag;

	if (!s) {
		mmd_status(&r->st, NSR_ERR_STATE,
			   "no save session is open on this connection");
		return NSR_OK;
	}
	memset(&frag, 0, sizeof(frag));
	if (s->stripe) {
		/* Joined connections drop what still comes from now on, so
		 * the rest runs on this thread alone. */
		pthread_mutex_lock(&s->stripe->mu);
		mmd_stripe_end_locked(s->stripe);
		pthread_mutex_unlock(&s->stripe->mu);
	}
	if (s->err == NSR_OK && s->eom && s->eom_told) {
		s->settled = 1;
		settle(m, s, a);
		if (s->err == NSR_OK)
			nsr_mmd_frag_to_wire(&r->frag, &s->eom_frag);
	} else if (s->err == NSR_OK && !s->eom) {
		finish(m, s, a, &frag);
	}
	if (s->err == NSR_OK && s->eom) {
		/* Told now, or settled: NSR_ERR_EOM and the resume offset;
		 * the session stays open until the client settles it. */
		eom_answer(m, s, &r->st, &r->eom);
		if (!s->settled)
			return NSR_OK;
		c->save = NULL;
		mmd_save_free(m, s);
		return NSR_OK;
	}
	c->save = NULL;
	if (s->vs) {
		/* Failed earlier: leave no end chunk (reads as incomplete). */
		nsr_vol_session_abort(s->vs);
		s->vs = NULL;
	}
	if (s->err != NSR_OK) {
		r->st.code = s->err;
		r->st.msg = s->errmsg;
		s->errmsg = NULL;
	} else {
		nsr_mmd_frag_to_wire(&r->frag, &frag);
		/* Tests: a reply naming a byte fewer than the volume holds,
		 * which the client must not take for a whole save set. */
		if (r->frag.size > 0 &&
		    nsr_test_once("NSR_TEST_MMD_SHORT_REPLY"))
			r->frag.size--;
		mmd_status(&r->st, NSR_OK, "%s", "");
		nsr_info("save set %u (%s:%s) done: %llu bytes on volume %s "
			 "file %u record %llu; received %llu bytes",
			 s->hdr.ssid, s->hdr.client, s->hdr.name,
			 (unsigned long long)frag.size, s->volname, frag.file,
			 (unsigned long long)frag.record,
			 (unsigned long long)s->bytes);
	}
	mmd_save_free(m, s);
	return NSR_OK;
}
