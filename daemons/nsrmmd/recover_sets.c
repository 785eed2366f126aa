/*
 * recover_sets.c - one pass for several save sets of one volume:
 * MMD_READ_OPEN with ssid 0 and the save sets' fragments, then
 * MMD_READ_SETS_NEXT until eof.  One reader thread walks the volume once
 * (nsr_vol_reader_read_sets: from the first wanted fragment on, blocks of
 * other save sets passed or skipped, positioning forward between
 * fragments) and queues each save set's data tagged with its ssid; when
 * a save set's last fragment on this volume has ended, an end mark with
 * its outcome follows its data.  The queue, its bound and the invariants
 * are those of recover.c; a piece holds data of one save set only.
 *
 * Outcome of a save set, as for MMD_READ_NEXT: NSR_OK (its fragments
 * ended here: at their end chunk, or continuing on another volume), a
 * damage code after all its intact data (it is then marked suspect), or
 * the error that cut the pass short.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/log.h"
#include "nsr/mmd_clnt.h"
#include "nsr/xmalloc.h"

#include "mmd.h"
#include "recover_int.h"

/* rset_of - the session's save set ssid, or NULL. */
static struct mmd_rset *rset_of(struct mmd_read *r, uint32_t ssid)
{
	for (size_t i = 0; i < r->nsets; i++)
		if (r->sets[i].ssid == ssid)
			return &r->sets[i];
	return NULL;
}

/* rset_fail - the first error of save set s is code, msg (taken). */
static void rset_fail(struct mmd_rset *s, int code, char *msg)
{
	if (s->err != NSR_OK) {
		free(msg);
		return;
	}
	s->err = code;
	s->errmsg = msg;
}

/* rset_end - queue s's end mark after its data (reader thread). */
static void rset_end(struct mmd_read *r, struct mmd_rset *s)
{
	struct mmd_piece *pc = nsr_xcalloc(1, sizeof(*pc));

	mmd_read_seal(r);
	if (s->ndamage > 0 && !r->cancel)
		mmd_mark_suspect(r->m, s->ssid, s->ndamage);
	s->errmsg = mmd_damage_total(s->errmsg, s->ndamage);
	pc->ssid = s->ssid;
	pc->end = 1;
	pc->code = s->err;
	pc->msg = s->errmsg;
	s->errmsg = NULL;
	s->next = s->nfrags; /* ended */
	mmd_read_queue(r, pc);
}

/* frag_done - the current fragment of s ended here with got bytes. */
static void frag_done(struct mmd_read *r, struct mmd_rset *s, uint64_t got)
{
	const struct nsr_vol_frag *f;

	if (s->next >= s->nfrags)
		return;
	f = &r->frags[s->first + s->next];
	if (f->complete && got != f->size && s->ndamage == 0)
		rset_fail(s, NSR_ERR_CORRUPT, nsr_xasprintf(
			"save set %u: volume %s (device %s) gave %llu bytes at "
			"file %u record %llu where the fragment says %llu; the "
			"fragment record is wrong or the data is lost", s->ssid,
			r->volname, r->m->dev_name, (unsigned long long)got,
			f->file, (unsigned long long)f->record,
			(unsigned long long)f->size));
	if (++s->next == s->nfrags)
		rset_end(r, s);
}

/* on_begin - a wanted fragment begins. */
static int on_begin(void *arg, const struct nsr_vol_sshdr *hdr,
		    const struct nsr_vol_span *sp,
		    const struct nsr_vol_loc *loc)
{
	struct mmd_read *r = arg;
	struct mmd_rset *s = rset_of(r, hdr->ssid);

	NSR_UNUSED(sp);
	NSR_UNUSED(loc);
	if (s)
		s->got = 0;
	return r->cancel;
}

/* on_data - data of a wanted save set, into the queue. */
static int on_data(void *arg, uint32_t ssid, const void *p, size_t len)
{
	struct mmd_read *r = arg;
	struct mmd_rset *s = rset_of(r, ssid);

	if (s)
		s->got += len;
	return mmd_read_push(r, ssid, p, len);
}

/* on_end - a wanted fragment's end chunk. */
static int on_end(void *arg, uint32_t ssid, const struct nsr_vol_sstail *t,
		  uint64_t bytes_here, const struct nsr_vol_loc *loc)
{
	struct mmd_read *r = arg;
	struct mmd_rset *s = rset_of(r, ssid);

	NSR_UNUSED(t);
	NSR_UNUSED(loc);
	if (s)
		frag_done(r, s, bytes_here);
	return r->cancel;
}

/* on_unfinished - a wanted fragment has no more data here. */
static void on_unfinished(void *arg, uint32_t ssid, uint64_t bytes_here)
{
	struct mmd_read *r = arg;
	struct mmd_rset *s = rset_of(r, ssid);

	if (s)
		frag_done(r, s, bytes_here);
}

/* on_damage - damage that cost a wanted save set data (or its begin). */
static void on_damage(void *arg, uint32_t ssid, int rc,
		      const struct nsr_vol_loc *loc, const char *msg)
{
	struct mmd_read *r = arg;
	struct mmd_rset *s = rset_of(r, ssid);
	const char *what = rc == NSR_ERR_NOTFOUND ? "fragment not found"
						  : "damaged block";
	char *text = nsr_xasprintf(
		"save set %u on volume %s (device %s): %s at file %u record "
		"%llu: %s", ssid, r->volname, r->m->dev_name, what,
		loc ? loc->file : 0,
		(unsigned long long)(loc ? loc->record : 0), msg);

	nsr_error("%s", text);
	if (!s) {
		free(text);
		return;
	}
	if (rc != NSR_ERR_NOTFOUND) {
		/* The reader counts the blocks of one stretch once. */
		uint64_t now = nsr_vol_reader_damaged_blocks(r->rd);

		s->ndamage += now > r->ndamage ? now - r->ndamage : 1;
		r->ndamage = now;
	}
	rset_fail(s, rc, text);
}

/* sets_names - "101, 102, ..." for the log. */
static char *sets_names(const struct mmd_read *r)
{
	struct nsr_buf b;
	char *out;

	nsr_buf_init(&b, 0);
	for (size_t i = 0; i < r->nsets; i++)
		nsr_buf_addf(&b, "%s%u", i ? ", " : "", r->sets[i].ssid);
	out = nsr_xstrdup(b.data);
	nsr_buf_release(&b);
	return out;
}

/* sets_main - the session thread: one pass over the volume. */
static void *sets_main(void *arg)
{
	struct mmd_read *r = arg;
	struct nsr_vol_scan_ops ops;
	char *names;
	int rc;

	memset(&ops, 0, sizeof(ops));
	ops.begin = on_begin;
	ops.data = on_data;
	ops.end = on_end;
	ops.unfinished = on_unfinished;
	ops.damage = on_damage;
	rc = nsr_vol_reader_read_sets(r->rd, r->frags, r->nfrags, &ops, r);
	nsr_vol_reader_stats(r->rd, &r->cost);
	for (size_t i = 0; i < r->nsets && !r->cancel; i++) {
		struct mmd_rset *s = &r->sets[i];

		if (s->next >= s->nfrags)
			continue;
		rset_fail(s, rc != NSR_OK ? rc : NSR_ERR_IO, nsr_xasprintf(
			"reading save set %u from volume %s (device %s) "
			"failed: %s", s->ssid, r->volname, r->m->dev_name,
			*nsr_vol_reader_errmsg(r->rd)
				? nsr_vol_reader_errmsg(r->rd)
				: nsr_strerror(rc)));
		nsr_error("%s", s->errmsg);
		rset_end(r, s);
	}
	mmd_read_seal(r);
	names = sets_names(r);
	nsr_info("save sets %s from volume %s in one pass: %llu blocks read "
		 "(%llu of them other save sets'), %llu blocks of other save "
		 "sets passed unread, %llu positionings", names, r->volname,
		 (unsigned long long)r->cost.blocks_read,
		 (unsigned long long)r->cost.blocks_skipped,
		 (unsigned long long)r->cost.blocks_passed,
		 (unsigned long long)r->cost.positions);
	free(names);
	pthread_mutex_lock(&r->mu);
	r->done = 1;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

/* by_seq - qsort order of one save set's fragments. */
static int by_seq(const void *a, const void *b)
{
	const struct nsr_vol_frag *x = a, *y = b;

	return x->frag_seq < y->frag_seq ? -1 : x->frag_seq > y->frag_seq;
}

/* select_sets - the save sets with fragments in a (in the order they
 * first appear) and their fragments on this volume; NSR_OK, or an error
 * in why. */
static int select_sets(struct mmd_read *r, const mmd_read_args *a,
		       struct nsr_buf *why)
{
	const uint8_t *volid = nsr_vol_reader_label(r->rd)->volid;
	u_int nf = a->frags.frags_len;

	r->sets = nsr_xcalloc(MMD_SETS_MAX, sizeof(*r->sets));
	r->frags = nsr_xcalloc(nf + 1, sizeof(*r->frags));
	for (u_int i = 0; i < nf; i++) {
		uint32_t ssid = a->frags.frags_val[i].ssid;

		if (rset_of(r, ssid))
			continue;
		if (r->nsets == MMD_SETS_MAX) {
			nsr_buf_addf(why, "more than %d save sets in one pass",
				     MMD_SETS_MAX);
			return NSR_ERR_LIMIT;
		}
		r->sets[r->nsets++].ssid = ssid;
	}
	/* Each save set's fragments on this volume together, in order. */
	for (size_t i = 0; i < r->nsets; i++) {
		struct mmd_rset *s = &r->sets[i];

		s->first = r->nfrags;
		for (u_int k = 0; k < nf; k++) {
			const mmd_frag *x = &a->frags.frags_val[k];

			if (x->ssid != s->ssid ||
			    memcmp(x->volid, volid, 16) != 0)
				continue;
			nsr_mmd_frag_from_wire(&r->frags[r->nfrags++], x);
			s->nfrags++;
		}
		qsort(r->frags + s->first, s->nfrags, sizeof(*r->frags),
		      by_seq);
	}
	for (size_t i = 0; i < r->nsets; i++)
		if (r->sets[i].nfrags == 0) {
			nsr_buf_addf(why, "none of the fragments given for "
				     "save set %u is on volume %s",
				     r->sets[i].ssid, r->volname);
			return NSR_ERR_NOTFOUND;
		}
	if (r->nsets == 0 || r->nfrags > NSR_VOL_SETS_MAX) {
		nsr_buf_addf(why, "%zu fragments on volume %s (1..%d in one "
			     "pass)", r->nfrags, r->volname, NSR_VOL_SETS_MAX);
		return NSR_ERR_LIMIT;
	}
	return NSR_OK;
}

/* mmd_read_sets_open - MMD_READ_OPEN with ssid 0. */
int mmd_read_sets_open(struct mmd *m, struct mmd_conn *c,
		       const mmd_read_args *a, nsr_void_res *r)
{
	struct mmd_read *rd = NULL;
	struct nsr_buf why;
	int rc;

	nsr_buf_init(&why, 4096);
	rc = mmd_read_new(m, c, &rd, &why);
	if (rc == NSR_OK)
		rc = select_sets(rd, a, &why);
	if (rc == NSR_OK &&
	    pthread_create(&rd->thread, NULL, sets_main, rd) != 0) {
		rc = NSR_ERR_SYSTEM;
		nsr_buf_addf(&why, "cannot start a reader thread: %s",
			     strerror(errno));
	}
	if (rc != NSR_OK) {
		mmd_status(&r->st, rc, "cannot read save sets in one pass "
			   "from device %s: %s", m->dev_name,
			   why.len ? why.data : nsr_strerror(rc));
		if (rd)
			mmd_read_free(m, rd);
		nsr_buf_release(&why);
		return NSR_OK;
	}
	rd->started = 1;
	for (size_t i = 0; i < rd->nsets; i++)
		rd->sets[i].ctr = mmd_ctr_open(rd->sets[i].ssid, 1);
	c->read = rd;
	nsr_info("reading %zu save sets (%zu fragments) from volume %s in "
		 "device %s in one pass", rd->nsets, rd->nfrags, rd->volname,
		 m->dev_name);
	mmd_status(&r->st, NSR_OK, "%s", "");
	nsr_buf_release(&why);
	return NSR_OK;
}

/* pop - unlink the queue's head (holds r->mu). */
static void pop(struct mmd_read *r)
{
	struct mmd_piece *p = r->head;

	r->head = p->next;
	if (!r->head)
		r->tail = NULL;
	r->q_bytes -= p->len;
}

/* next_piece - the queue's head (one save set's data, or its end) into
 * out, at most max bytes (holds r->mu, head not NULL).  Returns the
 * data bytes taken. */
static size_t next_piece(struct mmd_read *r, mmd_sets_piece *out,
			 size_t max)
{
	struct mmd_piece *p = r->head;
	size_t n;

	out->ssid = p->ssid;
	if (p->end) {
		out->ss_end = TRUE;
		out->ss_code = p->code;
		out->ss_msg = p->msg ? p->msg : nsr_xstrdup("");
		p->msg = NULL;
		pop(r);
		mmd_piece_free(p);
		return 0;
	}
	out->ss_msg = nsr_xstrdup("");
	if (p->off == 0 && p->len <= max) {
		/* the piece's buffer is the reply (recover.c invariant 4) */
		pop(r);
		out->data.data_val = p->data;
		out->data.data_len = (u_int)p->len;
		p->data = NULL;
		mmd_piece_free(p);
		return out->data.data_len;
	}
	n = NSR_MIN(max, p->len - p->off);
	out->data.data_val = nsr_xmalloc(n);
	memcpy(out->data.data_val, p->data + p->off, n);
	out->data.data_len = (u_int)n;
	p->off += n;
	if (p->off == p->len) {
		pop(r);
		mmd_piece_free(p);
	}
	return n;
}

/* next_reply - queued pieces into the reply, in order: the first one
 * (cut to max if it must be), then whole ones while they fit (holds
 * r->mu, head not NULL).  One reply carries what a block-by-block
 * interleave cuts into many small pieces. */
static void next_reply(struct mmd_read *r, mmd_sets_next_res *res,
		       size_t max)
{
	size_t used = 0;

	res->pieces.pieces_val = nsr_xcalloc(MMD_PIECES_MAX,
					     sizeof(mmd_sets_piece));
	do {
		mmd_sets_piece *pc =
			&res->pieces.pieces_val[res->pieces.pieces_len++];
		struct mmd_rset *s;

		used += next_piece(r, pc, max - used);
		s = rset_of(r, pc->ssid);
		if (s)
			mmd_ctr_add(s->ctr, pc->data.data_len);
	} while (r->head && res->pieces.pieces_len < MMD_PIECES_MAX &&
		 r->head->len - r->head->off <= max - used);
}

/* mmd_h_read_sets_next - MMD_READ_SETS_NEXT. */
int mmd_h_read_sets_next(void *ctx, void *args, void *res,
			 struct nsr_rpc_call *call)
{
	struct mmd *m = ctx;
	mmd_next_args *a = args;
	mmd_sets_next_res *r = res;
	struct mmd_conn *c = mmd_conn_get(call, m);
	struct mmd_read *rd = c->read;

	if (!rd || !rd->sets) {
		mmd_status(&r->st, NSR_ERR_STATE, "no recover session of "
			   "several save sets is open on this connection");
		return NSR_OK;
	}
	mmd_read_wait(rd);
	if (rd->head)
		next_reply(rd, r, mmd_read_max(a->max));
	if (!rd->head && rd->done)
		r->eof = TRUE;
	pthread_cond_broadcast(&rd->cv);
	pthread_mutex_unlock(&rd->mu);
	mmd_status(&r->st, NSR_OK, "%s", "");
	pthread_mutex_lock(&m->mu);
	mmd_touch(m);
	pthread_mutex_unlock(&m->mu);
	return NSR_OK;
}
