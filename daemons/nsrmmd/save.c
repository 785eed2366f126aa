/*
 * save.c - save sessions: MMD_SS_BEGIN opens (or shares) the volume writer
 * of the device and starts a session bound to the connection; MMD_SS_DATA
 * is one-way and only remembers the session's first error; MMD_SS_END
 * makes the fragment durable, reports it to the media database, and
 * answers with the fragment or that first error.
 *
 * Spanning: when a tape or vtape volume fills up, the part on it is
 * recorded as a fragment, the volume is marked full, and nsrd names the
 * next writable volume of the pool (NEXT_VOLUME).  This mover then acts as
 * a client of that volume's mover: it begins the next fragment there,
 * sends the bytes that did not fit, forwards every later data call and, at
 * the end, the client's MMD_SS_END; the reply carries the last fragment.
 * A full AFTD fails the session (the disk is full, not the medium).
 *
 * Invariants:
 *  1. a fragment is reported to nsrmmdbd only after nsr_vol_session_end
 *     returned NSR_OK (the data is durable);
 *  2. m->sessions counts the open struct mmd_save of all connections; the
 *     writer is closed when it drops to zero;
 *  3. after the first error of a session, its data calls are dropped;
 *  4. a session has either a volume session (vs) or, after spanning, a
 *     connection to the next mover (next), never both.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/log.h"
#include "nsr/mmd_clnt.h"
#include "nsr/mmdb.h"
#include "nsr/nsrd_clnt.h"
#include "nsr/rpc/nsrd.h"
#include "nsr/xmalloc.h"

#include "mmd.h"

struct mmd_save {
	struct nsr_vol_session *vs; /* NULL after an end of medium */
	struct nsr_vol_sshdr hdr;
	uint32_t cloneid;
	uint8_t volid[16];
	char volname[NSR_VOL_NAME_MAX + 1];
	struct nsr_vol_span span; /* this fragment's place in the save set */
	struct nsr_mmd *next;	  /* after spanning: the next volume's mover */
	char nextvol[NSR_VOL_NAME_MAX + 1];
	uint64_t next_seq; /* expected data call number */
	uint64_t bytes;	   /* data bytes received */
	int err;	   /* first error, NSR_OK if none */
	char *errmsg;
};

/* save_fail - remember the first error of the session. */
static void save_fail(struct mmd_save *s, int rc, char *msg)
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
static void release_writer(struct mmd *m)
{
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

/* mmd_save_free - the connection went away with a session open. */
void mmd_save_free(struct mmd *m, struct mmd_save *s)
{
	if (s->vs) {
		nsr_warn("save set %u (%s:%s) aborted: the client connection "
			 "closed before the session ended", s->hdr.ssid,
			 s->hdr.client, s->hdr.name);
		nsr_vol_session_abort(s->vs);
	}
	nsr_mmd_close(s->next); /* aborts a forwarded session left open */
	free(s->errmsg);
	free(s);
	release_writer(m);
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

/* mmd_h_ss_begin - MMD_SS_BEGIN. */
int mmd_h_ss_begin(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	struct mmd *m = ctx;
	mmd_begin_args *a = args;
	nsr_void_res *r = res;
	struct mmd_conn *c = mmd_conn_get(call, m);
	struct nsr_vol_span sp;
	struct mmd_save *s = NULL;
	struct nsr_buf why;
	int rc;

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
	s->cloneid = (uint32_t)a->savetime;
	sp.frag_seq = a->frag_seq;
	sp.ss_offset = a->ss_offset;
	s->span = sp;

	pthread_mutex_lock(&m->mu);
	mmd_touch(m);
	rc = writer_get_locked(m, a->volid, &why);
	if (rc == NSR_OK)
		rc = nsr_vol_session_begin(m->w, &s->hdr, &sp, &s->vs);
	if (rc == NSR_OK) {
		const struct nsr_vol_label *l = nsr_vol_writer_label(m->w);

		memcpy(s->volid, l->volid, 16);
		snprintf(s->volname, sizeof(s->volname), "%s", l->name);
		m->sessions++;
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
		 "device %s", s->hdr.ssid, s->hdr.client, s->hdr.name,
		 s->hdr.level, s->volname, m->dev_name);
	c->save = s;
	s = NULL;
	mmd_status(&r->st, NSR_OK, "%s", "");
out:
	free(s);
	nsr_buf_release(&why);
	return NSR_OK;
}

/* volume_full - end of medium: mark the volume full, fail the session. */
static void volume_full(struct mmd *m, struct mmd_save *s)
{
	struct nsr_vol_frag frag;
	struct nsr_buf carry, why;
	int rc;

	nsr_buf_init(&carry, 0);
	nsr_buf_init(&why, 4096);
	memset(&frag, 0, sizeof(frag));
	rc = nsr_vol_session_eom(s->vs, &frag, &carry);
	s->vs = NULL;
	if (rc != NSR_OK)
		nsr_warn("save set %u: end of medium bookkeeping failed: %s",
			 s->hdr.ssid, nsr_strerror(rc));
	rc = mmd_report_written(m, s->volid, frag.size, 0, 0, MMDB_VOL_FULL,
				&why);
	if (rc != NSR_OK)
		nsr_warn("cannot mark volume %s full in the media database: %s",
			 s->volname, why.data);
	save_fail(s, NSR_ERR_EOM,
		  nsr_xasprintf("volume %s in device %s is full: save set %u "
				"(%s:%s) got %llu of the %llu bytes received "
				"so far onto it; the "
				"volume is marked full and the save set failed: "
				"label or mount another volume of pool %s and "
				"run it again", s->volname, m->dev_name,
				s->hdr.ssid, s->hdr.client, s->hdr.name,
				(unsigned long long)frag.size,
				(unsigned long long)s->bytes, s->hdr.pool));
	nsr_buf_release(&carry);
	nsr_buf_release(&why);
}

/* ask_next_volume - NEXT_VOLUME at nsrd: where save set s continues. */
static int ask_next_volume(struct mmd *m, struct mmd_save *s,
			   next_vol_res *r, struct nsr_buf *why)
{
	struct nsr_nsrd *c = NULL;
	next_vol_args a;
	int rc;

	if (!m->server) {
		nsr_buf_addstr(why, "this mover reports to no server, so it "
			       "cannot ask for another volume");
		return NSR_ERR_NOTFOUND;
	}
	memset(&a, 0, sizeof(a));
	a.ssid = s->hdr.ssid;
	a.pool = s->hdr.pool;
	memcpy(a.exclude, s->volid, sizeof(a.exclude));
	rc = nsr_nsrd_open(m->server, &c, why);
	if (rc != NSR_OK)
		return rc;
	nsr_nsrd_set_timeout(c, 120000);
	rc = nsr_nsrd_next_volume(c, &a, r);
	if (rc != NSR_OK)
		nsr_buf_addstr(why, nsr_nsrd_errmsg(c));
	nsr_nsrd_close(c);
	return rc;
}

/* span_on - end of medium on tape/vtape: mark the volume full, ask nsrd
 * for the next one, record the part on this volume, and continue the save
 * set through the mover of the next volume (the carry first).  NSR_OK, or
 * the session has failed. */
static int span_on(struct mmd *m, struct mmd_save *s)
{
	struct nsr_vol_frag frag;
	struct nsr_buf carry, why;
	next_vol_res nv;
	const char *host;
	int rc;

	nsr_buf_init(&carry, 0);
	nsr_buf_init(&why, 4096);
	memset(&frag, 0, sizeof(frag));
	memset(&nv, 0, sizeof(nv));
	rc = nsr_vol_session_eom(s->vs, &frag, &carry);
	s->vs = NULL;
	if (rc != NSR_OK) {
		save_fail(s, rc,
			  nsr_xasprintf("save set %u: volume %s in device %s "
					"is full and the part of the save set "
					"on it could not be made durable: %s",
					s->hdr.ssid, s->volname, m->dev_name,
					nsr_strerror(rc)));
		goto out;
	}
	if (mmd_report_written(m, s->volid, frag.size, 0, 0, MMDB_VOL_FULL,
			       &why) != NSR_OK)
		nsr_warn("cannot mark volume %s full in the media database: %s",
			 s->volname, why.data);
	nsr_buf_reset(&why);
	rc = ask_next_volume(m, s, &nv, &why);
	if (rc != NSR_OK) {
		/* Like a full AFTD: the failed save set gets no fragment. */
		save_fail(s, rc,
			  nsr_xasprintf("volume %s in device %s is full and "
					"save set %u (%s:%s) cannot continue "
					"on another volume: %s", s->volname,
					m->dev_name, s->hdr.ssid,
					s->hdr.client, s->hdr.name, why.data));
		goto out;
	}
	nsr_buf_reset(&why);
	if (frag.size > 0) {
		rc = mmd_report_frag(m, &frag, s->cloneid, &why);
		if (rc != NSR_OK) {
			save_fail(s, rc,
				  nsr_xasprintf("save set %u: the media "
						"database on %s did not record "
						"its part on the full volume "
						"%s: %s", s->hdr.ssid,
						m->server, s->volname,
						why.data));
			goto out;
		}
		s->span.frag_seq++;
		s->span.ss_offset += frag.size;
	}
	snprintf(s->nextvol, sizeof(s->nextvol), "%s", nv.volume);
	host = nv.mover_host[0] ? nv.mover_host : m->server;
	rc = nsr_mmd_connect(host, nv.mover_port, &s->next, &why);
	if (rc == NSR_OK)
		rc = nsr_mmd_ss_begin(s->next, &s->hdr,
				      (const uint8_t *)nv.volid, &s->span,
				      &why);
	if (rc == NSR_OK && carry.len > 0)
		rc = nsr_mmd_ss_write(s->next, carry.data, carry.len);
	if (rc != NSR_OK) {
		save_fail(s, rc,
			  nsr_xasprintf("save set %u cannot continue on "
					"volume %s in device %s: %s",
					s->hdr.ssid, nv.volume, nv.device,
					why.len ? why.data : nsr_strerror(rc)));
		goto out;
	}
	nsr_info("volume %s in device %s is full: save set %u (%s:%s) has "
		 "%llu bytes on it and continues on volume %s in device %s "
		 "(fragment %u at offset %llu)", s->volname, m->dev_name,
		 s->hdr.ssid, s->hdr.client, s->hdr.name,
		 (unsigned long long)frag.size, nv.volume, nv.device,
		 s->span.frag_seq, (unsigned long long)s->span.ss_offset);
out:
	xdr_free(NSR_XDR(xdr_next_vol_res), (char *)&nv);
	nsr_buf_release(&carry);
	nsr_buf_release(&why);
	return s->err;
}

/* end_of_medium - NSR_ERR_EOM in a session: span or fail (AFTD). */
static int end_of_medium(struct mmd *m, struct mmd_save *s)
{
	if (m->dev_type == NSR_DEV_AFTD) {
		volume_full(m, s);
		return s->err;
	}
	return span_on(m, s);
}

/* mmd_h_ss_data - MMD_SS_DATA (one-way: never replies). */
int mmd_h_ss_data(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	struct mmd *m = ctx;
	mmd_data_args *a = args;
	struct mmd_conn *c = mmd_conn_get(call, m);
	struct mmd_save *s = c->save;
	int rc;

	NSR_UNUSED(res);
	if (!s) {
		if (!c->warned)
			nsr_warn("data from %s without a save session: "
				 "dropped (logged once per connection)",
				 nsr_rpc_call_peer(call));
		c->warned = 1;
		return NSR_RPC_NOREPLY;
	}
	if (s->err != NSR_OK)
		return NSR_RPC_NOREPLY;
	if (a->seq != s->next_seq) {
		save_fail(s, NSR_ERR_PROTO,
			  nsr_xasprintf("save set %u: data call %llu arrived "
					"where %llu was expected; the client "
					"lost data on the way", s->hdr.ssid,
					(unsigned long long)a->seq,
					(unsigned long long)s->next_seq));
		return NSR_RPC_NOREPLY;
	}
	s->next_seq++;
	s->bytes += a->data.data_len;
	if (s->next) {
		rc = nsr_mmd_ss_write(s->next, a->data.data_val,
				      a->data.data_len);
		if (rc != NSR_OK)
			save_fail(s, rc,
				  nsr_xasprintf("save set %u: passing data on "
						"to the mover of volume %s "
						"(%s) failed: %s", s->hdr.ssid,
						s->nextvol,
						nsr_mmd_peer(s->next),
						nsr_strerror(rc)));
		return NSR_RPC_NOREPLY;
	}
	rc = nsr_vol_session_write(s->vs, a->data.data_val, a->data.data_len);
	if (rc == NSR_ERR_EOM) {
		end_of_medium(m, s);
		return NSR_RPC_NOREPLY;
	}
	if (rc != NSR_OK) {
		save_fail(s, rc,
			  nsr_xasprintf("save set %u: writing to volume %s in "
					"device %s failed: %s", s->hdr.ssid,
					s->volname, m->dev_name,
					nsr_vol_writer_errmsg(m->w)));
		return NSR_RPC_NOREPLY;
	}
	return NSR_RPC_NOREPLY;
}

/* forward_end - the client's end, passed to the next volume's mover;
 * *frag gets the last fragment. */
static int forward_end(struct mmd_save *s, const struct nsr_vol_sstail *t,
		       struct nsr_vol_frag *frag)
{
	struct nsr_buf why;
	int rc;

	nsr_buf_init(&why, 4096);
	rc = nsr_mmd_ss_end(s->next, t, frag, &why);
	if (rc != NSR_OK)
		save_fail(s, rc,
			  nsr_xasprintf("save set %u (continued on volume "
					"%s): %s", s->hdr.ssid, s->nextvol,
					why.len ? why.data
						: nsr_strerror(rc)));
	nsr_buf_release(&why);
	return rc;
}

/* finish - end the volume session and record the fragment (or pass the
 * end on to the mover of the next volume). */
static int finish(struct mmd *m, struct mmd_save *s, const mmd_end_args *a,
		  struct nsr_vol_frag *frag)
{
	struct nsr_vol_sstail t;
	struct nsr_buf why;
	int rc;

	t.bytes = a->bytes;
	t.files = a->files;
	t.status = a->status;
	if (s->next)
		return forward_end(s, &t, frag);
	rc = nsr_vol_session_end(s->vs, &t, frag);
	if (rc == NSR_ERR_EOM) {
		if (end_of_medium(m, s) != NSR_OK)
			return s->err;
		return forward_end(s, &t, frag);
	}
	s->vs = NULL;
	if (rc != NSR_OK) {
		save_fail(s, rc,
			  nsr_xasprintf("save set %u: ending it on volume %s "
					"in device %s failed: %s", s->hdr.ssid,
					s->volname, m->dev_name,
					nsr_strerror(rc)));
		return rc;
	}
	nsr_buf_init(&why, 4096);
	rc = mmd_report_frag(m, frag, s->cloneid, &why);
	if (rc == NSR_OK)
		rc = mmd_report_written(m, frag->volid, frag->size,
					frag->file + (m->dev_type ==
						      NSR_DEV_AFTD),
					frag->record, 0, &why);
	if (rc != NSR_OK)
		save_fail(s, rc,
			  nsr_xasprintf("save set %u is on volume %s but the "
					"media database on %s did not record "
					"it: %s; run scanner -m on the volume "
					"to add it", s->hdr.ssid, s->volname,
					m->server, why.data));
	nsr_buf_release(&why);
	return rc;
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
	c->save = NULL;
	memset(&frag, 0, sizeof(frag));
	if (s->err == NSR_OK)
		finish(m, s, a, &frag);
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
		mmd_status(&r->st, NSR_OK, "%s", "");
		nsr_info("save set %u (%s:%s) done: %llu bytes on volume %s "
			 "file %u record %llu", s->hdr.ssid, s->hdr.client,
			 s->hdr.name, (unsigned long long)frag.size,
			 s->next ? s->nextvol : s->volname, frag.file,
			 (unsigned long long)frag.record);
	}
	mmd_save_free(m, s);
	return NSR_OK;
}
