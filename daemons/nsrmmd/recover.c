/*
 * recover.c - recover sessions: MMD_READ_OPEN with a save set's fragments,
 * then MMD_READ_NEXT until eof.  The volume reader pushes data through a
 * callback, the RPC client pulls; a thread per session runs the reader
 * and feeds a small bounded queue that MMD_READ_NEXT drains, so memory per
 * session stays below QUEUE_MAX whatever the save set's size.
 *
 * Invariants:
 *  1. the reader thread alone touches the volume reader and its device,
 *     and the piece it fills (fill), which is not in the queue;
 *  2. q_bytes <= QUEUE_MAX + PIECE_CAP;
 *  3. done is set once, after the last piece was queued; err/errmsg are
 *     final when done is set and are reported after the queued data;
 *  4. the reader's data is copied once in this process: into a piece of
 *     PIECE_CAP bytes, which is queued when full (or at the end) and
 *     whose buffer becomes the MMD_READ_NEXT reply as it is when the
 *     client asks for that much (it does: NSR_MMD_CHUNK_DEFAULT), copied
 *     again only for a client that asks for less.  The profile of a
 *     cold recover showed 19 % of the mover's time in the second copy.
 *
 * Damage: a damaged block is reported (the first one in errmsg) and
 * skipped; the rest of the save set is still delivered, so the client's
 * restore can resynchronise and recover what is intact.  The volume
 * reader counts the damaged blocks that held data of this save set, each
 * once; the session ends with the first damage code instead of eof, and
 * the save set is marked suspect in the media database.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/log.h"
#include "nsr/mmd_clnt.h"
#include "nsr/mmdb.h"
#include "nsr/mmdb_clnt.h"
#include "nsr/xmalloc.h"

#include "mmd.h"
#include "recover_int.h"

/* mmd_piece_free - free a piece and its buffer. */
void mmd_piece_free(struct mmd_piece *pc)
{
	if (pc) {
		free(pc->data);
		free(pc->msg);
		free(pc);
	}
}

/* mmd_read_queue - append pc to the queue (reader thread). */
void mmd_read_queue(struct mmd_read *r, struct mmd_piece *pc)
{
	pthread_mutex_lock(&r->mu);
	if (r->tail)
		r->tail->next = pc;
	else
		r->head = pc;
	r->tail = pc;
	r->q_bytes += pc->len;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
}

/* mmd_read_seal - queue the piece being filled, if it holds anything
 * (reader thread). */
void mmd_read_seal(struct mmd_read *r)
{
	struct mmd_piece *pc = r->fill;

	if (pc == NULL || pc->len == 0)
		return;
	r->fill = NULL;
	mmd_read_queue(r, pc);
}

/* push - reader callback: data of the session's save set. */
static int push(void *arg, const void *p, size_t len)
{
	struct mmd_read *r = arg;

	return mmd_read_push(r, r->ssid, p, len);
}

/* mmd_read_push - copy data of save set ssid into the piece being
 * filled, queueing it when full or when ssid changes; wait for room
 * before starting a new one.  1 if the session was cancelled. */
int mmd_read_push(struct mmd_read *r, uint32_t ssid, const void *p,
		  size_t len)
{
	const char *c = p;

	if (r->fill && r->fill->ssid != ssid)
		mmd_read_seal(r);
	while (len > 0) {
		struct mmd_piece *pc = r->fill;
		size_t n;

		if (pc == NULL) {
			int cancel;

			pthread_mutex_lock(&r->mu);
			while (r->q_bytes >= QUEUE_MAX && !r->cancel)
				pthread_cond_wait(&r->cv, &r->mu);
			cancel = r->cancel;
			pthread_mutex_unlock(&r->mu);
			if (cancel)
				return 1;
			pc = nsr_xcalloc(1, sizeof(*pc));
			pc->ssid = ssid;
			pc->data = nsr_xmalloc(PIECE_CAP);
			r->fill = pc;
		}
		n = NSR_MIN(len, PIECE_CAP - pc->len);
		memcpy(pc->data + pc->len, c, n);
		pc->len += n;
		c += n;
		len -= n;
		if (pc->len == PIECE_CAP)
			mmd_read_seal(r);
	}
	return 0;
}

/* damage - a corrupted block of our save set: remember the first. */
static void damage(void *arg, uint32_t ssid, int rc,
		   const struct nsr_vol_loc *loc, const char *msg)
{
	struct mmd_read *r = arg;

	nsr_error("save set %u on volume %s (device %s): damaged block at "
		  "file %u record %llu: %s", ssid ? ssid : r->ssid, r->volname,
		  r->m->dev_name, loc ? loc->file : 0,
		  (unsigned long long)(loc ? loc->record : 0), msg);
	pthread_mutex_lock(&r->mu);
	if (r->err == NSR_OK) {
		r->err = rc;
		r->errmsg = nsr_xasprintf(
			"save set %u on volume %s (device %s): damaged block "
			"at file %u record %llu: %s", r->ssid, r->volname,
			r->m->dev_name, loc ? loc->file : 0,
			(unsigned long long)(loc ? loc->record : 0), msg);
	}
	pthread_mutex_unlock(&r->mu);
}

/* mmd_mark_suspect - tell the media database that save set ssid holds
 * damaged data (its suspect flag, until scanner reads it intact). */
void mmd_mark_suspect(struct mmd *m, uint32_t ssid, uint64_t ndamage)
{
	struct mmdb_clnt *c = NULL;
	struct nsr_buf err;

	if (!m->server)
		return;
	nsr_buf_init(&err, 0);
	if (mmdb_clnt_open(m->server, &c, &err) != NSR_OK)
		nsr_error("cannot mark save set %u suspect: %s", ssid,
			  err.data);
	else if (mmdb_clnt_ss_flags(c, ssid, MMDB_SS_SUSPECT, 0) != NSR_OK)
		nsr_error("cannot mark save set %u suspect: %s", ssid,
			  mmdb_clnt_errmsg(c));
	else
		nsr_info("save set %u marked suspect in the media database "
			 "(%llu damaged blocks)", ssid,
			 (unsigned long long)ndamage);
	mmdb_clnt_close(c);
	nsr_buf_release(&err);
}

/* mmd_damage_total - msg (freed) with the count of damaged blocks added
 * when there were several. */
char *mmd_damage_total(char *msg, uint64_t n)
{
	char *all;

	if (n <= 1 || !msg)
		return msg;
	all = nsr_xasprintf("%s (%llu damaged blocks in all)", msg,
			    (unsigned long long)n);
	free(msg);
	return all;
}

/* add_cost - count what reading one fragment cost. */
static void add_cost(struct mmd_read *r)
{
	struct nsr_vol_rstats st;

	nsr_vol_reader_stats(r->rd, &st);
	r->cost.blocks_read += st.blocks_read;
	r->cost.blocks_skipped += st.blocks_skipped;
	r->cost.blocks_passed += st.blocks_passed;
	r->cost.positions += st.positions;
}

/* reader_main - the session thread: read each fragment in order. */
static void *reader_main(void *arg)
{
	struct mmd_read *r = arg;
	struct nsr_vol_scan_ops ops;
	const struct nsr_vol_frag *f = NULL;
	uint64_t got = 0;
	int rc = NSR_OK;

	memset(&ops, 0, sizeof(ops));
	ops.damage = damage;
	for (size_t i = 0; i < r->nfrags && !r->cancel; i++) {
		f = &r->frags[i];
		got = 0;
		rc = nsr_vol_reader_read(r->rd, f, push, r, &ops, r, &got);
		r->ndamage += nsr_vol_reader_damaged_blocks(r->rd);
		add_cost(r);
		if (rc == NSR_ERR_EOM)
			rc = NSR_OK; /* continues on another volume */
		if (rc != NSR_OK && r->ndamage > 0 && !r->cancel) {
			/* Reported and skipped; read the other fragments. */
			rc = NSR_OK;
			f = NULL;
			continue;
		}
		if (rc == NSR_OK && f->complete && got != f->size)
			break; /* reported below */
		if (rc != NSR_OK)
			break;
	}
	mmd_read_seal(r); /* the rest, before done (invariant 3) */
	if (r->ndamage > 0 && !r->cancel)
		mmd_mark_suspect(r->m, r->ssid, r->ndamage);
	nsr_info("save set %u from volume %s: %llu blocks read (%llu of "
		 "them other save sets'), %llu blocks of other save sets "
		 "passed unread", r->ssid, r->volname,
		 (unsigned long long)r->cost.blocks_read,
		 (unsigned long long)r->cost.blocks_skipped,
		 (unsigned long long)r->cost.blocks_passed);
	pthread_mutex_lock(&r->mu);
	r->errmsg = mmd_damage_total(r->errmsg, r->ndamage);
	if (rc == NSR_OK && f && f->complete && got != f->size &&
	    r->err == NSR_OK && !r->cancel) {
		/* The caller's fragment does not describe what is there. */
		r->err = NSR_ERR_CORRUPT;
		r->errmsg = nsr_xasprintf(
			"save set %u: volume %s (device %s) gave %llu bytes at "
			"file %u record %llu where the fragment says %llu; the "
			"fragment record is wrong or the data is lost", r->ssid,
			r->volname, r->m->dev_name, (unsigned long long)got,
			f->file, (unsigned long long)f->record,
			(unsigned long long)f->size);
		nsr_error("%s", r->errmsg);
	}
	if (rc != NSR_OK && r->err == NSR_OK && !r->cancel) {
		r->err = rc;
		r->errmsg = nsr_xasprintf(
			"reading save set %u from volume %s (device %s) "
			"failed: %s", r->ssid, r->volname, r->m->dev_name,
			*nsr_vol_reader_errmsg(r->rd)
				? nsr_vol_reader_errmsg(r->rd)
				: nsr_strerror(rc));
		nsr_error("%s", r->errmsg);
	}
	r->done = 1;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

/* mmd_read_free - stop the thread, free the queue, give the device back. */
void mmd_read_free(struct mmd *m, struct mmd_read *r)
{
	struct mmd_piece *p, *next;

	if (r->started) {
		pthread_mutex_lock(&r->mu);
		r->cancel = 1;
		pthread_cond_broadcast(&r->cv);
		pthread_mutex_unlock(&r->mu);
		pthread_join(r->thread, NULL);
	}
	for (p = r->head; p; p = next) {
		next = p->next;
		mmd_piece_free(p);
	}
	mmd_piece_free(r->fill);
	nsr_vol_reader_close(r->rd);
	nsr_dev_close(r->own_dev);
	pthread_mutex_lock(&m->mu);
	if (m->readers > 0)
		m->readers--;
	mmd_touch(m);
	pthread_mutex_unlock(&m->mu);
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->cv);
	free(r->frags);
	mmd_ctr_close(r->ctr);
	for (size_t i = 0; i < r->nsets; i++) {
		free(r->sets[i].errmsg);
		mmd_ctr_close(r->sets[i].ctr);
	}
	free(r->sets);
	free(r->errmsg);
	free(r);
}

/* by_seq - qsort order of fragments. */
static int by_seq(const void *a, const void *b)
{
	const struct nsr_vol_frag *x = a, *y = b;

	return x->frag_seq < y->frag_seq ? -1 : x->frag_seq > y->frag_seq;
}

/* mmd_read_device - take the device for reading (holds m->mu). */
int mmd_read_device(struct mmd *m, struct mmd_read *r, struct nsr_buf *why)
{
	if (m->dev_type == NSR_DEV_AFTD) {
		/* AFTD: read beside the writers with a handle of our own. */
		int rc = mmd_dev_open_extra(m, 1, &r->own_dev, why);

		r->dev = r->own_dev;
		return rc;
	}
	/* The caller has counted this session in m->readers already. */
	if (m->sessions > 0 || m->readers > 1) {
		nsr_buf_addf(why, "device %s is busy with %u save and %u "
			     "recover sessions", m->dev_name, m->sessions,
			     m->readers - 1);
		return NSR_ERR_BUSY;
	}
	if (m->w) {
		nsr_vol_writer_close(m->w);
		m->w = NULL;
	}
	r->dev = NULL;
	if (mmd_dev_open_locked(m, 0, why) != NSR_OK)
		return NSR_ERR_IO;
	r->dev = m->dev;
	return NSR_OK;
}

/* select_frags - keep the fragments on the mounted volume, in order. */
static size_t select_frags(struct mmd_read *r, const mmd_read_args *a,
			   const uint8_t *volid)
{
	r->frags = nsr_xcalloc(a->frags.frags_len + 1, sizeof(*r->frags));
	for (u_int i = 0; i < a->frags.frags_len; i++) {
		const mmd_frag *x = &a->frags.frags_val[i];

		if (memcmp(x->volid, volid, 16) != 0 || x->ssid != a->ssid)
			continue;
		nsr_mmd_frag_from_wire(&r->frags[r->nfrags++], x);
	}
	qsort(r->frags, r->nfrags, sizeof(*r->frags), by_seq);
	return r->nfrags;
}

/* mmd_read_new - a recover session on connection c (replacing an older
 * one there): the device taken and the volume's label read. */
int mmd_read_new(struct mmd *m, struct mmd_conn *c, struct mmd_read **out,
		 struct nsr_buf *why)
{
	struct mmd_read *rd;
	int rc;

	*out = NULL;
	if (c->save) {
		nsr_buf_addf(why, "a save session is open on this connection; "
			     "end it before reading");
		return NSR_ERR_BUSY;
	}
	if (c->read) {
		mmd_read_free(m, c->read); /* a new read replaces the old */
		c->read = NULL;
	}
	rd = nsr_xcalloc(1, sizeof(*rd));
	rd->m = m;
	pthread_mutex_init(&rd->mu, NULL);
	pthread_cond_init(&rd->cv, NULL);
	pthread_mutex_lock(&m->mu);
	mmd_touch(m);
	m->readers++; /* from here on mmd_read_free gives it back */
	rc = mmd_read_device(m, rd, why);
	pthread_mutex_unlock(&m->mu);
	if (rc == NSR_OK)
		rc = nsr_vol_reader_open(rd->dev, NULL, &rd->rd, why);
	if (rc != NSR_OK) {
		mmd_read_free(m, rd);
		return rc;
	}
	snprintf(rd->volname, sizeof(rd->volname), "%s",
		 nsr_vol_reader_label(rd->rd)->name);
	*out = rd;
	return NSR_OK;
}

/* mmd_h_read_open - MMD_READ_OPEN. */
int mmd_h_read_open(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	struct mmd *m = ctx;
	mmd_read_args *a = args;
	nsr_void_res *r = res;
	struct mmd_conn *c = mmd_conn_get(call, m);
	struct mmd_read *rd = NULL;
	struct nsr_buf why;
	int rc;

	if (a->ssid == 0)
		return mmd_read_sets_open(m, c, a, r);
	nsr_buf_init(&why, 4096);
	rc = mmd_read_new(m, c, &rd, &why);
	if (rc != NSR_OK) {
		mmd_status(&r->st, rc, "cannot read save set %u from device "
			   "%s: %s", a->ssid, m->dev_name,
			   why.len ? why.data : nsr_strerror(rc));
		goto fail;
	}
	rd->ssid = a->ssid;
	if (select_frags(rd, a, nsr_vol_reader_label(rd->rd)->volid) == 0) {
		mmd_status(&r->st, NSR_ERR_NOTFOUND, "none of the %u fragments "
			   "given for save set %u is on volume %s in device "
			   "%s", a->frags.frags_len, a->ssid, rd->volname,
			   m->dev_name);
		goto fail;
	}
	if (pthread_create(&rd->thread, NULL, reader_main, rd) != 0) {
		mmd_status(&r->st, NSR_ERR_SYSTEM, "cannot start a reader "
			   "thread for save set %u: %s", a->ssid,
			   strerror(errno));
		goto fail;
	}
	rd->started = 1;
	rd->ctr = mmd_ctr_open(rd->ssid, 1);
	c->read = rd;
	nsr_info("reading save set %u (%zu fragments) from volume %s in "
		 "device %s", a->ssid, rd->nfrags, rd->volname, m->dev_name);
	mmd_status(&r->st, NSR_OK, "%s", "");
	nsr_buf_release(&why);
	return NSR_OK;
fail:
	if (rd)
		mmd_read_free(m, rd);
	nsr_buf_release(&why);
	return NSR_OK;
}

/* take - move up to max queued bytes into out (holds r->mu). */
static size_t take(struct mmd_read *r, char *out, size_t max)
{
	size_t got = 0;

	while (r->head && got < max) {
		struct mmd_piece *p = r->head;
		size_t n = NSR_MIN(max - got, p->len - p->off);

		memcpy(out + got, p->data + p->off, n);
		got += n;
		p->off += n;
		if (p->off == p->len) {
			r->head = p->next;
			if (!r->head)
				r->tail = NULL;
			r->q_bytes -= p->len;
			mmd_piece_free(p);
		}
	}
	return got;
}

/* mmd_read_max - the most a reply may carry for a client asking max. */
size_t mmd_read_max(u_int max)
{
	if (max == 0)
		return 1u << 20;
	return NSR_MIN((size_t)max, (size_t)MMD_CHUNK_MAX);
}

/* mmd_read_wait - lock r->mu and wait for queued data or the end. */
void mmd_read_wait(struct mmd_read *r)
{
	pthread_mutex_lock(&r->mu);
	while (!r->head && !r->done)
		pthread_cond_wait(&r->cv, &r->mu);
}

/* mmd_h_read_next - MMD_READ_NEXT: the next queued bytes, then eof/error. */
int mmd_h_read_next(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	struct mmd *m = ctx;
	mmd_next_args *a = args;
	mmd_next_res *r = res;
	struct mmd_conn *c = mmd_conn_get(call, m);
	struct mmd_read *rd = c->read;
	size_t max = mmd_read_max(a->max);

	if (!rd) {
		mmd_status(&r->st, NSR_ERR_STATE,
			   "no recover session is open on this connection");
		return NSR_OK;
	}
	mmd_read_wait(rd);
	if (rd->head && rd->head->off == 0 && rd->head->len <= max) {
		/* the piece's buffer is the reply (invariant 4) */
		struct mmd_piece *p = rd->head;

		rd->head = p->next;
		if (!rd->head)
			rd->tail = NULL;
		rd->q_bytes -= p->len;
		r->data.data_val = p->data;
		r->data.data_len = (u_int)p->len;
		free(p);
	} else {
		r->data.data_val = nsr_xmalloc(max);
		r->data.data_len = (u_int)take(rd, r->data.data_val, max);
	}
	mmd_ctr_add(rd->ctr, r->data.data_len);
	pthread_cond_broadcast(&rd->cv);
	if (!rd->head && rd->done) {
		if (rd->err != NSR_OK && r->data.data_len == 0) {
			r->st.code = rd->err;
			r->st.msg = nsr_xstrdup(rd->errmsg);
		} else if (rd->err == NSR_OK) {
			r->eof = TRUE;
		}
	}
	pthread_mutex_unlock(&rd->mu);
	if (!r->st.msg)
		mmd_status(&r->st, NSR_OK, "%s", "");
	pthread_mutex_lock(&m->mu);
	mmd_touch(m);
	pthread_mutex_unlock(&m->mu);
	return NSR_OK;
}
