/*
 * vol_reader.c - the volume reader: verifies the label, then walks blocks
 * and chunks, either from a fragment's position delivering one save set's
 * data (demultiplexed by ssid) or over the whole volume reporting every
 * chunk (scan mode, for `scanner`).
 *
 * Reading one save set reads only what it must: from the fragment's first
 * block to its end chunk, and in between a block whose header names
 * another save set (format version 2: one session per block) is passed
 * without looking at its chunks; where the device shows a record's head
 * without reading it (vtape), such a block is not even read, the reader
 * spaces over it (nsr_dev_peek, nsr_dev_fsr).  The header's checksum
 * covers the save set id, so trusting it is safe; damage inside another
 * save set's block is that save set's business.  Version 1 volumes may
 * mix sessions in a block and are read chunk by chunk.
 *
 * Damage handling: a block whose header fails (checksum, magic, volume id,
 * out of place) is skipped; a chunk that fails its checksum ends the walk
 * of its block.  Which save sets lost data shows later as a gap in their
 * chunk numbers (invariant 3 of the writer); a save set whose end chunk
 * never comes is reported as unfinished.  Reading goes on after damage;
 * the functions return the first damage code at the end.
 *
 * Counting (nsr_vol_reader_damaged_blocks): every damaged block counts
 * once.  A scan reports it at once without a save set (ssid 0) and then
 * names each save set it cost data through that save set's gap; a gap
 * that follows damaged blocks is their consequence and is not counted
 * again (only a gap with no damaged block before it counts, as one).  A
 * positioned read holds damaged blocks back (pend) until it knows whether
 * they held data of its save set: a gap in its chunks, or the end of the
 * walk before its end chunk, makes them its damage (reported once, with
 * the first block's place and the number of blocks); its next chunk in
 * sequence shows they belonged to other save sets, and they are dropped.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/media_fmt.h"

#include "vol_int.h"

struct rstate {
	uint32_t ssid;
	uint32_t next_seq;
	uint64_t bytes;
	uint64_t bad_mark; /* nbad when its last chunk was seen */
};

/* What the reader is doing (nsr_vol_reader.reading). */
enum { MODE_SCAN, MODE_READ, MODE_SETS };

/* Sets mode: one wanted fragment and how far it got. */
enum { W_PENDING, W_OPEN, W_DONE };
struct want {
	struct nsr_vol_frag f;
	int state;
	uint32_t next_seq;
	uint64_t bytes;
	uint64_t bad_mark; /* nbad when its last chunk was seen */
	struct nsr_vol_loc bad_loc; /* the first damaged block since */
	char bad_msg[400];
};

struct nsr_vol_reader {
	struct nsr_dev *dev;
	struct nsr_vol_label lab;
	int seq;
	int can_peek; /* the device shows a record's head (vtape) */
	uint8_t *blk;
	struct nsr_vol_rstats stats; /* of the last read or scan */
	char errmsg[512];
	/* where the next block comes from */
	struct nsr_vol_loc at;
	struct nsr_dev_file *f; /* adv_file */
	/* reporting */
	const struct nsr_vol_scan_ops *ops;
	void *arg;
	int first_damage;
	int last_bad; /* code of the last bad block, for gap reports */
	struct nsr_vol_loc bad_at; /* where the last bad block was */
	uint64_t nbad;	   /* damaged blocks met by this walk */
	uint64_t ndamaged; /* damaged blocks counted (see the top) */
	/* read mode: damaged blocks not yet known to be ours */
	uint64_t pend;
	int pend_rc;
	struct nsr_vol_loc pend_loc; /* the first of them */
	char pend_msg[400];
	/* scan mode: open save sets */
	struct rstate *st;
	size_t nst, ast;
	/* sets mode: the wanted fragments, in volume order */
	struct want *want;
	size_t nwant;
	/* read mode */
	int reading; /* MODE_* */
	uint32_t want_ssid, want_frag;
	nsr_vol_data_fn fn;
	void *fn_arg;
	int began, done, stop_rc;
	uint64_t delivered;
	uint32_t next_seq;
};

/* report - say where damage is and remember the first code. */
static void report(struct nsr_vol_reader *r, uint32_t ssid, int rc,
		   const struct nsr_vol_loc *loc, const char *msg)
{
	snprintf(r->errmsg, sizeof(r->errmsg),
		 "volume %s, file %" PRIu32 " block %" PRIu64 ": %s",
		 r->lab.name, loc->file, loc->record, msg);
	if (r->first_damage == 0)
		r->first_damage = rc;
	if (r->ops != NULL && r->ops->damage != NULL)
		r->ops->damage(r->arg, ssid, rc, loc, r->errmsg);
}

/* bad_block - a damaged block, save set unknown: a scan reports and
 * counts it now, a read holds it back (see the top). */
static void bad_block(struct nsr_vol_reader *r, int rc,
		      const struct nsr_vol_loc *loc, const char *fmt, ...)
	NSR_PRINTF(4, 5);
static void bad_block(struct nsr_vol_reader *r, int rc,
		      const struct nsr_vol_loc *loc, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->last_bad = rc;
	r->bad_at = *loc;
	r->nbad++;
	if (r->reading == MODE_SETS) {
		/* Known through the gaps it leaves (sets_gap). */
		for (size_t i = 0; i < r->nwant; i++) {
			struct want *w = &r->want[i];

			if (w->state != W_OPEN || w->bad_mark + 1 != r->nbad)
				continue;
			w->bad_loc = *loc;
			snprintf(w->bad_msg, sizeof(w->bad_msg), "%s", msg);
		}
		return;
	}
	if (r->reading == MODE_SCAN) {
		r->ndamaged++;
		report(r, 0, rc, loc, msg);
		return;
	}
	if (r->pend++ == 0) {
		r->pend_rc = rc;
		r->pend_loc = *loc;
		snprintf(r->pend_msg, sizeof(r->pend_msg), "%s", msg);
	}
}

/* claim_pending - read mode: the damaged blocks held back cost our save
 * set data; report them once (why says how that showed) and count them.
 * Returns 1 if there were any. */
static int claim_pending(struct nsr_vol_reader *r, const char *why)
{
	char msg[400];

	if (r->pend == 0)
		return 0;
	if (r->pend > 1)
		snprintf(msg, sizeof(msg), "%.200s; %.100s (%" PRIu64
			 " damaged blocks from here)", r->pend_msg, why,
			 r->pend);
	else
		snprintf(msg, sizeof(msg), "%.200s; %.100s", r->pend_msg, why);
	r->ndamaged += r->pend;
	r->pend = 0;
	report(r, r->want_ssid, r->pend_rc, &r->pend_loc, msg);
	return 1;
}

/* ss_damage - damage known to hit save set ssid.  explained: damaged
 * blocks already counted (or held back) account for it. */
static void ss_damage(struct nsr_vol_reader *r, uint32_t ssid, int rc,
		      int explained, const struct nsr_vol_loc *loc,
		      const char *fmt, ...) NSR_PRINTF(6, 7);
static void ss_damage(struct nsr_vol_reader *r, uint32_t ssid, int rc,
		      int explained, const struct nsr_vol_loc *loc,
		      const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (r->reading == MODE_READ && claim_pending(r, msg))
		return;
	if (!explained)
		r->ndamaged++;
	report(r, ssid, rc, loc, msg);
}

/* nsr_vol_reader_open - read and verify the label. */
int nsr_vol_reader_open(struct nsr_dev *dev, const uint8_t *expect_volid,
			struct nsr_vol_reader **out, struct nsr_buf *why)
{
	struct nsr_vol_reader *r;
	struct nsr_dev_info info;
	char want[33], got[33];
	int rc;

	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return NSR_ERR_NOMEM;
	r->dev = dev;
	rc = vol_read_label(dev, &r->lab, why);
	if (rc == NSR_OK && expect_volid != NULL &&
	    memcmp(expect_volid, r->lab.volid, 16) != 0) {
		vol_volid_str(expect_volid, want);
		vol_volid_str(r->lab.volid, got);
		vol_why(why, "%s: volume %s has id %s, not %s",
			nsr_dev_path(dev), r->lab.name, got, want);
		rc = NSR_ERR_MISMATCH;
	}
	if (rc == NSR_OK) {
		r->blk = malloc(r->lab.block_size);
		if (r->blk == NULL)
			rc = NSR_ERR_NOMEM;
	}
	if (rc != NSR_OK) {
		free(r->blk);
		free(r);
		return rc;
	}
	nsr_dev_get_info(dev, &info);
	r->seq = info.sequential;
	r->can_peek = r->seq;
	*out = r;
	return NSR_OK;
}

/* nsr_vol_reader_label - the label read at open. */
const struct nsr_vol_label *nsr_vol_reader_label(
	const struct nsr_vol_reader *r)
{
	return &r->lab;
}

/* nsr_vol_reader_errmsg - the last failure or damage in words. */
const char *nsr_vol_reader_errmsg(const struct nsr_vol_reader *r)
{
	return r->errmsg;
}

/* nsr_vol_reader_close - free. */
void nsr_vol_reader_close(struct nsr_vol_reader *r)
{
	if (r == NULL)
		return;
	nsr_dev_file_close(r->f);
	free(r->st);
	free(r->blk);
	free(r);
}

/* next_block - the next block into r->blk.  NSR_OK (*len bytes, *loc
 * where), NSR_ERR_EOF (tape filemark / end of an AFTD session file),
 * NSR_ERR_EOD, or an I/O error. */
static int next_block(struct nsr_vol_reader *r, size_t *len,
		      struct nsr_vol_loc *loc)
{
	size_t bs = r->lab.block_size;
	int rc;

	*len = 0;
	*loc = r->at;
	if (!r->seq) {
		if (r->f == NULL)
			return NSR_ERR_EOD;
		rc = nsr_dev_file_pread(r->f, r->blk, bs, r->at.record * bs,
					len);
		if (rc != NSR_OK)
			goto fail;
		if (*len == 0)
			return NSR_ERR_EOF;
		r->at.record++;
		r->stats.blocks_read++;
		return NSR_OK;
	}
	for (;;) {
		rc = nsr_dev_read(r->dev, r->blk, bs, len);
		if (rc == NSR_OK) {
			r->at.record++;
			r->stats.blocks_read++;
			return NSR_OK;
		}
		if (rc == NSR_ERR_EOF) {
			r->at.file++;
			r->at.record = 0;
			return rc;
		}
		if (rc == NSR_ERR_EOD)
			return rc;
		if (rc != NSR_ERR_TOOBIG)
			goto fail;
		bad_block(r, NSR_ERR_CORRUPT, loc,
			  "record longer than the block size %zu", bs);
		r->at.record++;
		*loc = r->at;
	}
fail:
	snprintf(r->errmsg, sizeof(r->errmsg), "volume %s: %s", r->lab.name,
		 nsr_dev_errmsg(r->dev));
	return rc;
}

/* want_find - sets mode: the wanted fragment of ssid in state st (the
 * first in volume order), or NULL. */
static struct want *want_find(const struct nsr_vol_reader *r, uint32_t ssid,
			      int st)
{
	for (size_t i = 0; i < r->nwant; i++)
		if (r->want[i].f.ssid == ssid && r->want[i].state == st)
			return &r->want[i];
	return NULL;
}

/* other_ss - the block header b (verified, in place) says every chunk of
 * the block is of a save set other than the one(s) being read. */
static int other_ss(const struct nsr_vol_reader *r,
		    const struct media_fmt_block *b)
{
	if (r->reading == MODE_SCAN || (b->flags & MEDIA_FMT_BLK_ONE_SS) == 0)
		return 0;
	if (r->reading == MODE_SETS)
		return !want_find(r, b->ssid, W_OPEN) &&
		       !want_find(r, b->ssid, W_PENDING);
	return b->ssid != r->want_ssid;
}

/* any_open - sets mode: a wanted fragment has begun and not ended. */
static int any_open(const struct nsr_vol_reader *r)
{
	for (size_t i = 0; i < r->nwant; i++)
		if (r->want[i].state == W_OPEN)
			return 1;
	return 0;
}

/* pass_other - read mode: if the next record is, by its header alone, a
 * block of another save set, space over it without reading it.  1 if
 * passed, 0 if it is to be read (ours, damaged, a filemark, or a device
 * that cannot show a record's head), or a negative error. */
static int pass_other(struct nsr_vol_reader *r)
{
	uint8_t h[MEDIA_FMT_BLOCK_HDR];
	struct media_fmt_block b;
	size_t got = 0, len = 0;
	int rc;

	if (r->reading == MODE_SCAN || !r->can_peek ||
	    (r->reading == MODE_READ && !r->began) ||
	    (r->reading == MODE_SETS && !any_open(r)))
		return 0;
	rc = nsr_dev_peek(r->dev, h, sizeof(h), &got, &len);
	if (rc == NSR_ERR_UNSUPPORTED)
		r->can_peek = 0;
	if (rc != NSR_OK || got < sizeof(h) || len != r->lab.block_size ||
	    media_fmt_block_head_decode(h, len, &b) != NSR_OK ||
	    memcmp(b.volid, r->lab.volid, 16) != 0 || b.file != r->at.file ||
	    b.seq != r->at.record || !other_ss(r, &b))
		return 0;
	rc = nsr_dev_fsr(r->dev, 1);
	if (rc != NSR_OK) {
		snprintf(r->errmsg, sizeof(r->errmsg), "volume %s: %s",
			 r->lab.name, nsr_dev_errmsg(r->dev));
		return rc;
	}
	r->at.record++;
	r->stats.blocks_passed++;
	return 1;
}

/* find_state - scan-mode state of ssid, or NULL. */
static struct rstate *find_state(struct nsr_vol_reader *r, uint32_t ssid)
{
	size_t i;

	for (i = 0; i < r->nst; i++)
		if (r->st[i].ssid == ssid)
			return &r->st[i];
	return NULL;
}

/* At most this many save sets are followed at once in a scan: far more
 * than a device multiplexes, and it bounds a hostile volume's cost. */
#define MAX_OPEN_SS 1024

/* add_state - a new open save set (scan mode); NULL when out of memory
 * or over MAX_OPEN_SS. */
static struct rstate *add_state(struct nsr_vol_reader *r, uint32_t ssid)
{
	struct rstate *s;

	if (r->nst >= MAX_OPEN_SS)
		return NULL;
	if (r->nst == r->ast) {
		size_t na = r->ast ? r->ast * 2 : 16;

		s = realloc(r->st, na * sizeof(*s));
		if (s == NULL)
			return NULL;
		r->st = s;
		r->ast = na;
	}
	s = &r->st[r->nst++];
	memset(s, 0, sizeof(*s));
	s->ssid = ssid;
	return s;
}

/* drop_state - forget an open save set. */
static void drop_state(struct nsr_vol_reader *r, struct rstate *s)
{
	*s = r->st[--r->nst];
}

/* finish_states - report every open save set as unfinished. */
static void finish_states(struct nsr_vol_reader *r)
{
	size_t i;

	for (i = 0; i < r->nst; i++)
		if (r->ops != NULL && r->ops->unfinished != NULL)
			r->ops->unfinished(r->arg, r->st[i].ssid,
					   r->st[i].bytes);
	r->nst = 0;
}

/* check_seq - a chunk number gap means chunks of ssid were lost; it is
 * explained by the damaged blocks met since ssid's last chunk (mark). */
static void check_seq(struct nsr_vol_reader *r, uint32_t ssid,
		      uint32_t want, uint32_t got, uint64_t mark,
		      const struct nsr_vol_loc *loc)
{
	if (want == got)
		return;
	ss_damage(r, ssid, r->last_bad ? r->last_bad : NSR_ERR_CORRUPT,
		  r->nbad > mark, loc, "save set %" PRIu32 " lost chunks %"
		  PRIu32 "..%" PRIu32 " (in a damaged block)", ssid, want,
		  got - 1);
}

/* too_many - a save set that cannot be followed: reported as damage,
 * the scan goes on (NOMEM stops it). */
static int too_many(struct nsr_vol_reader *r, uint32_t ssid,
		    const struct nsr_vol_loc *loc)
{
	if (r->nst < MAX_OPEN_SS)
		return NSR_ERR_NOMEM;
	/* Not damage of a block: counted as none. */
	ss_damage(r, ssid, NSR_ERR_LIMIT, 1, loc,
		  "save set %" PRIu32 " not followed: more than %d save sets "
		  "open at once", ssid, MAX_OPEN_SS);
	return 0;
}

/* scan_chunk - scan mode: one verified chunk. */
static int scan_chunk(struct nsr_vol_reader *r,
		      const struct media_fmt_chunk *c, const uint8_t *payload,
		      const struct nsr_vol_loc *loc)
{
	const struct nsr_vol_scan_ops *ops = r->ops;
	struct rstate *s = find_state(r, c->ssid);
	struct nsr_vol_sshdr h;
	struct nsr_vol_span sp;
	struct nsr_vol_sstail t;
	int rc = 0;

	if (c->kind == MEDIA_FMT_BEGIN) {
		if (media_fmt_sshdr_decode(payload, c->len, &h, &sp) !=
			    NSR_OK ||
		    h.ssid != c->ssid) {
			ss_damage(r, c->ssid, NSR_ERR_CORRUPT, 0, loc,
				  "bad save-set header of save set %" PRIu32,
				  c->ssid);
			return 0;
		}
		if (s != NULL) {
			if (ops->unfinished != NULL)
				ops->unfinished(r->arg, s->ssid, s->bytes);
			drop_state(r, s);
		}
		s = add_state(r, c->ssid);
		if (s == NULL)
			return too_many(r, c->ssid, loc);
		s->next_seq = c->seq + 1;
		s->bad_mark = r->nbad;
		if (c->seq != 0)
			check_seq(r, c->ssid, 0, c->seq, 0, loc);
		return ops->begin ? ops->begin(r->arg, &h, &sp, loc) : 0;
	}
	if (s == NULL) {
		ss_damage(r, c->ssid,
			  r->last_bad ? r->last_bad : NSR_ERR_CORRUPT,
			  r->last_bad != 0, loc, "save set %" PRIu32
			  ": chunk %" PRIu32 " without its begin chunk",
			  c->ssid, c->seq);
		s = add_state(r, c->ssid);
		if (s == NULL)
			return too_many(r, c->ssid, loc);
	} else {
		check_seq(r, c->ssid, s->next_seq, c->seq, s->bad_mark, loc);
	}
	s->next_seq = c->seq + 1;
	s->bad_mark = r->nbad;
	if (c->kind == MEDIA_FMT_DATA) {
		s->bytes += c->len;
		return ops->data ? ops->data(r->arg, c->ssid, payload, c->len)
				 : 0;
	}
	if (media_fmt_sstail_decode(payload, c->len, &t) != NSR_OK) {
		ss_damage(r, c->ssid, NSR_ERR_CORRUPT, 0, loc,
			  "bad trailer of save set %" PRIu32, c->ssid);
		drop_state(r, s);
		return 0;
	}
	if (ops->end != NULL)
		rc = ops->end(r->arg, c->ssid, &t, s->bytes, loc);
	drop_state(r, s);
	return rc;
}

/* read_chunk - read mode: one verified chunk; only ours matter. */
static int read_chunk(struct nsr_vol_reader *r,
		      const struct media_fmt_chunk *c, const uint8_t *payload,
		      const struct nsr_vol_loc *loc)
{
	struct nsr_vol_sshdr h;
	struct nsr_vol_span sp;
	int rc;

	if (c->ssid != r->want_ssid)
		return 0;
	if (c->kind == MEDIA_FMT_BEGIN) {
		if (r->began) {
			/* A new session of the same save set: ours ended
			 * without its end chunk. */
			r->stop_rc = NSR_ERR_EOM;
			return 1;
		}
		if (media_fmt_sshdr_decode(payload, c->len, &h, &sp) !=
			    NSR_OK ||
		    sp.frag_seq != r->want_frag)
			return 0;
		r->began = 1;
		r->next_seq = c->seq + 1;
		return 0;
	}
	if (!r->began)
		return 0;
	/* Damaged blocks held back are ours if chunks are missing, else
	 * they held other save sets' data (check_seq claims them). */
	check_seq(r, c->ssid, r->next_seq, c->seq, r->nbad, loc);
	r->pend = 0;
	r->next_seq = c->seq + 1;
	if (c->kind == MEDIA_FMT_END) {
		r->done = 1;
		return 1;
	}
	rc = r->fn(r->fn_arg, payload, c->len);
	r->delivered += c->len;
	if (rc != 0) {
		r->stop_rc = rc < 0 ? rc : NSR_ERR_INVAL;
		return 1;
	}
	return 0;
}

/* sets_stop - sets mode: a callback's non-zero answer stops the read. */
static int sets_stop(struct nsr_vol_reader *r, int rc)
{
	if (rc == 0)
		return 0;
	r->stop_rc = rc < 0 ? rc : NSR_ERR_INVAL;
	return 1;
}

/* all_done - sets mode: 1 when no wanted fragment is left. */
static int all_done(const struct nsr_vol_reader *r)
{
	for (size_t i = 0; i < r->nwant; i++)
		if (r->want[i].state != W_DONE)
			return 0;
	return 1;
}

/* sets_gap - sets mode: w lost data (what says how it showed).  After
 * damaged blocks since its last chunk, they are its damage: reported
 * once, at the first of them, and counted; else one count here. */
static void sets_gap(struct nsr_vol_reader *r, struct want *w,
		     const struct nsr_vol_loc *loc, const char *what)
{
	uint64_t n = r->nbad - w->bad_mark;

	if (n == 0) {
		ss_damage(r, w->f.ssid, NSR_ERR_CORRUPT, 0, loc, "%s", what);
		return;
	}
	r->ndamaged += n;
	if (n > 1)
		ss_damage(r, w->f.ssid, r->last_bad, 1, &w->bad_loc,
			  "%.200s; %.100s (%" PRIu64 " damaged blocks from "
			  "here)",
			  w->bad_msg, what, n);
	else
		ss_damage(r, w->f.ssid, r->last_bad, 1, &w->bad_loc,
			  "%.200s; %.100s",
			  w->bad_msg, what);
}

/* want_unfinished - sets mode: fragment w ends without its end chunk
 * here; after damaged blocks since its last chunk that is damage. */
static int want_unfinished(struct nsr_vol_reader *r, struct want *w,
			   const struct nsr_vol_loc *loc)
{
	if (r->nbad > w->bad_mark)
		sets_gap(r, w, loc, "the end of the save set was not reached");
	w->state = W_DONE;
	if (r->ops->unfinished != NULL)
		r->ops->unfinished(r->arg, w->f.ssid, w->bytes);
	return 0;
}

/* want_pos - the block where w begins, in the reader's terms. */
static struct nsr_vol_loc want_pos(const struct nsr_vol_reader *r,
				   const struct want *w)
{
	struct nsr_vol_loc l = { w->f.file, w->f.record };

	if (!r->seq)
		l.record = w->f.offset / r->lab.block_size;
	return l;
}

/* loc_cmp - order of two places on the volume. */
static int loc_cmp(const struct nsr_vol_loc *a, const struct nsr_vol_loc *b)
{
	if (a->file != b->file)
		return a->file < b->file ? -1 : 1;
	if (a->record != b->record)
		return a->record < b->record ? -1 : 1;
	return 0;
}

/* want_lost - sets mode: fragment w's begin is not where it says: its
 * first block is damaged (damage: what is in it is lost), or it is not
 * there at all (NSR_ERR_NOTFOUND). */
static void want_lost(struct nsr_vol_reader *r, struct want *w)
{
	struct nsr_vol_loc loc = { w->f.file, w->f.record };
	struct nsr_vol_loc at = want_pos(r, w);

	if (r->nbad > 0 && loc_cmp(&r->bad_at, &at) == 0) {
		r->ndamaged++;
		report(r, w->f.ssid, r->last_bad, &loc, "the fragment's first "
		       "block is damaged: the fragment is lost");
	} else {
		report(r, w->f.ssid, NSR_ERR_NOTFOUND, &loc, "no begin of "
		       "save set there (fragment not on the volume)");
	}
	w->state = W_DONE;
	if (r->ops->unfinished != NULL)
		r->ops->unfinished(r->arg, w->f.ssid, 0);
}

/* sets_begin - sets mode: a begin chunk of a wanted save set. */
static int sets_begin(struct nsr_vol_reader *r,
		      const struct media_fmt_chunk *c, const uint8_t *payload,
		      const struct nsr_vol_loc *loc)
{
	struct want *w = want_find(r, c->ssid, W_OPEN);
	struct nsr_vol_sshdr h;
	struct nsr_vol_span sp;
	int rc;

	if (media_fmt_sshdr_decode(payload, c->len, &h, &sp) != NSR_OK ||
	    h.ssid != c->ssid)
		return 0; /* its gap or lost end shows it, if it is ours */
	if (w != NULL) {
		/* A new session of the same save set: the open fragment
		 * ended without its end chunk. */
		rc = want_unfinished(r, w, loc);
		if (rc != 0)
			return rc;
	}
	for (size_t i = 0; i < r->nwant; i++) {
		w = &r->want[i];
		if (w->state != W_PENDING || w->f.ssid != c->ssid ||
		    w->f.frag_seq != sp.frag_seq)
			continue;
		w->state = W_OPEN;
		w->next_seq = c->seq + 1;
		w->bad_mark = r->nbad;
		return r->ops->begin ? sets_stop(r, r->ops->begin(r->arg, &h,
								  &sp, loc))
				     : 0;
	}
	return all_done(r);
}

/* sets_chunk - sets mode: one verified chunk; only wanted ones matter. */
static int sets_chunk(struct nsr_vol_reader *r,
		      const struct media_fmt_chunk *c, const uint8_t *payload,
		      const struct nsr_vol_loc *loc)
{
	struct want *w;
	struct nsr_vol_sstail t;
	int rc = 0;

	if (c->kind == MEDIA_FMT_BEGIN)
		return want_find(r, c->ssid, W_PENDING) ||
			       want_find(r, c->ssid, W_OPEN)
		       ? sets_begin(r, c, payload, loc)
		       : 0;
	w = want_find(r, c->ssid, W_OPEN);
	if (w == NULL)
		return 0;
	if (c->seq != w->next_seq) {
		char what[100];

		snprintf(what, sizeof(what), "save set %" PRIu32 " lost chunks "
			 "%" PRIu32 "..%" PRIu32 " (in a damaged block)",
			 c->ssid, w->next_seq, c->seq - 1);
		sets_gap(r, w, loc, what);
	}
	w->next_seq = c->seq + 1;
	w->bad_mark = r->nbad;
	if (c->kind == MEDIA_FMT_DATA) {
		w->bytes += c->len;
		return r->ops->data ? sets_stop(r, r->ops->data(r->arg, c->ssid,
								payload,
								c->len))
				    : 0;
	}
	if (media_fmt_sstail_decode(payload, c->len, &t) != NSR_OK) {
		ss_damage(r, c->ssid, NSR_ERR_CORRUPT, 0, loc,
			  "bad trailer of save set %" PRIu32, c->ssid);
		return want_unfinished(r, w, loc);
	}
	w->state = W_DONE;
	if (r->ops->end != NULL)
		rc = sets_stop(r, r->ops->end(r->arg, c->ssid, &t, w->bytes,
					     loc));
	return rc != 0 ? rc : all_done(r);
}

/* walk_block - check the block in r->blk and hand on its chunks.
 * Returns 0 to go on, 1 to stop (read mode done), or a negative code. */
static int walk_block(struct nsr_vol_reader *r, size_t len,
		      const struct nsr_vol_loc *loc)
{
	struct media_fmt_block b;
	struct media_fmt_chunk c;
	const uint8_t *payload;
	size_t off, end;
	int rc;

	rc = media_fmt_block_decode(r->blk, len, &b);
	if (rc != NSR_OK) {
		bad_block(r, rc, loc, "unreadable block (%zu bytes): %s", len,
			  nsr_strerror(rc));
		return 0;
	}
	if (memcmp(b.volid, r->lab.volid, 16) != 0) {
		bad_block(r, NSR_ERR_MISMATCH, loc,
			  "block belongs to another volume");
		return 0;
	}
	if (b.file != loc->file || b.seq != loc->record) {
		bad_block(r, NSR_ERR_CORRUPT, loc,
			  "block out of place (it says file %" PRIu32
			  " block %" PRIu64 ")", b.file, b.seq);
		return 0;
	}
	if (other_ss(r, &b)) {
		/* Read (the device cannot space by header): not ours. */
		r->stats.blocks_skipped++;
		return 0;
	}
	off = MEDIA_FMT_BLOCK_HDR;
	end = MEDIA_FMT_BLOCK_HDR + b.used;
	while (off < end) {
		rc = media_fmt_chunk_decode(r->blk + off, end - off, &c,
					    &payload);
		if (rc != NSR_OK) {
			bad_block(r, rc, loc,
				  "damaged chunk at byte %zu: %s (rest of the "
				  "block skipped)", off, nsr_strerror(rc));
			return 0;
		}
		if (r->reading == MODE_SETS)
			rc = sets_chunk(r, &c, payload, loc);
		else if (r->reading == MODE_READ)
			rc = read_chunk(r, &c, payload, loc);
		else
			rc = scan_chunk(r, &c, payload, loc);
		if (rc != 0)
			return rc;
		off += MEDIA_FMT_CHUNK_HDR + c.len;
	}
	return 0;
}

/* sets_next - sets mode, nothing open: 0 if the next wanted fragment
 * begins at the next block, 1 to position elsewhere (or all done).
 * Fragments whose place was passed without their begin are lost. */
static int sets_next(struct nsr_vol_reader *r)
{
	for (size_t i = 0; i < r->nwant; i++) {
		struct want *w = &r->want[i];
		struct nsr_vol_loc l;
		int c;

		if (w->state != W_PENDING)
			continue;
		l = want_pos(r, w);
		c = loc_cmp(&l, &r->at);
		if (c == 0)
			return 0;
		if (c > 0)
			return 1;
		want_lost(r, w);
	}
	return 1;
}

/* walk - blocks until the end (or a stop); AFTD: one session file. */
static int walk(struct nsr_vol_reader *r, int first_only_check)
{
	struct nsr_vol_loc loc;
	size_t len;
	int rc, n = 0;

	for (;;) {
		if (r->reading == MODE_SETS && !any_open(r)) {
			rc = sets_next(r);
			if (rc != 0)
				return rc > 0 ? NSR_OK : rc;
		}
		rc = pass_other(r);
		if (rc < 0)
			return rc;
		if (rc > 0)
			continue;
		rc = next_block(r, &len, &loc);
		if (rc == NSR_ERR_EOF && r->seq)
			continue; /* a segment filemark */
		if (rc == NSR_ERR_EOF || rc == NSR_ERR_EOD)
			return NSR_OK;
		if (rc != NSR_OK)
			return rc;
		rc = walk_block(r, len, &loc);
		if (rc < 0)
			return rc;
		if (rc > 0)
			return NSR_OK;
		if (first_only_check && ++n == 1 && !r->began) {
			/* The fragment's first block: its begin is lost. */
			claim_pending(r, "the fragment's first block");
			return r->first_damage ? r->first_damage
					       : NSR_ERR_NOTFOUND;
		}
	}
}

/* nsr_vol_reader_scan - every chunk of the volume through ops. */
int nsr_vol_reader_scan(struct nsr_vol_reader *r,
			const struct nsr_vol_scan_ops *ops, void *arg)
{
	static const struct nsr_vol_scan_ops none;
	struct nsr_dev_pos pos = { 1, 0 };
	uint32_t *nums = NULL;
	size_t n = 0, i;
	int rc;

	r->ops = ops ? ops : &none;
	r->arg = arg;
	r->reading = MODE_SCAN;
	r->first_damage = 0;
	r->last_bad = 0;
	r->nbad = r->ndamaged = r->pend = 0;
	r->nst = 0;
	memset(&r->stats, 0, sizeof(r->stats));
	if (r->seq) {
		rc = nsr_dev_seek(r->dev, &pos);
		if (rc == NSR_ERR_EOD || rc == NSR_ERR_EOF)
			return NSR_OK; /* labeled, no data */
		if (rc != NSR_OK) {
			snprintf(r->errmsg, sizeof(r->errmsg), "%s",
				 nsr_dev_errmsg(r->dev));
			return rc;
		}
		r->at.file = 1;
		r->at.record = 0;
		rc = walk(r, 0);
		finish_states(r);
		return rc != NSR_OK ? rc : r->first_damage;
	}
	rc = nsr_dev_file_list(r->dev, &nums, &n);
	for (i = 0; rc == NSR_OK && i < n; i++) {
		rc = nsr_dev_file_open(r->dev, nums[i], &r->f);
		if (rc != NSR_OK)
			break;
		r->at.file = nums[i];
		r->at.record = 0;
		rc = walk(r, 0);
		finish_states(r);
		nsr_dev_file_close(r->f);
		r->f = NULL;
	}
	free(nums);
	if (rc != NSR_OK && r->errmsg[0] == '\0')
		snprintf(r->errmsg, sizeof(r->errmsg), "%s",
			 nsr_dev_errmsg(r->dev));
	return rc != NSR_OK ? rc : r->first_damage;
}

/* nsr_vol_reader_damaged_blocks - damaged blocks counted by the last
 * scan (all) or read (those that held data of its save set). */
uint64_t nsr_vol_reader_damaged_blocks(const struct nsr_vol_reader *r)
{
	return r->ndamaged;
}

/* nsr_vol_reader_stats - what the last scan or read cost. */
void nsr_vol_reader_stats(const struct nsr_vol_reader *r,
			  struct nsr_vol_rstats *out)
{
	*out = r->stats;
}

/* nsr_vol_reader_frag - a fragment from what a scan reported. */
void nsr_vol_reader_frag(const struct nsr_vol_reader *r,
			 const struct nsr_vol_sshdr *hdr,
			 const struct nsr_vol_span *sp,
			 const struct nsr_vol_loc *loc,
			 struct nsr_vol_frag *out)
{
	memset(out, 0, sizeof(*out));
	memcpy(out->volid, r->lab.volid, 16);
	out->ssid = hdr->ssid;
	out->frag_seq = sp->frag_seq;
	out->ss_offset = sp->ss_offset;
	out->file = loc->file;
	out->record = loc->record;
	out->offset = r->seq ? 0 : loc->record * r->lab.block_size;
}

/* nsr_vol_reader_read - one fragment's data, in order, to fn. */
int nsr_vol_reader_read(struct nsr_vol_reader *r,
			const struct nsr_vol_frag *frag, nsr_vol_data_fn fn,
			void *arg, const struct nsr_vol_scan_ops *ops,
			void *ops_arg, uint64_t *bytes)
{
	static const struct nsr_vol_scan_ops none;
	struct nsr_dev_pos pos;
	int rc;

	if (bytes != NULL)
		*bytes = 0;
	if (memcmp(frag->volid, r->lab.volid, 16) != 0) {
		snprintf(r->errmsg, sizeof(r->errmsg),
			 "fragment of save set %" PRIu32
			 " is not on volume %s", frag->ssid, r->lab.name);
		return NSR_ERR_MISMATCH;
	}
	r->ops = ops ? ops : &none;
	r->arg = ops_arg;
	r->reading = MODE_READ;
	r->want_ssid = frag->ssid;
	r->want_frag = frag->frag_seq;
	r->fn = fn;
	r->fn_arg = arg;
	r->began = r->done = r->stop_rc = 0;
	r->delivered = 0;
	r->first_damage = 0;
	r->last_bad = 0;
	r->nbad = r->ndamaged = r->pend = 0;
	memset(&r->stats, 0, sizeof(r->stats));
	r->at.file = frag->file;
	r->at.record = frag->record;
	r->stats.positions++;
	if (r->seq) {
		pos.file = frag->file;
		pos.record = frag->record;
		rc = nsr_dev_seek(r->dev, &pos);
	} else {
		nsr_dev_file_close(r->f);
		r->f = NULL;
		rc = nsr_dev_file_open(r->dev, frag->file, &r->f);
		r->at.record = frag->offset / r->lab.block_size;
	}
	if (rc != NSR_OK) {
		snprintf(r->errmsg, sizeof(r->errmsg),
			 "volume %s: cannot position to file %" PRIu32
			 " block %" PRIu64 ": %s", r->lab.name, frag->file,
			 frag->record, nsr_dev_errmsg(r->dev));
		return rc == NSR_ERR_EOD || rc == NSR_ERR_EOF
			       ? NSR_ERR_NOTFOUND
			       : rc;
	}
	rc = walk(r, 1);
	if (!r->done && (r->stop_rc == 0 || r->stop_rc == NSR_ERR_EOM))
		claim_pending(r, "the end of the save set was not reached");
	r->pend = 0;
	nsr_dev_file_close(r->f);
	r->f = NULL;
	if (bytes != NULL)
		*bytes = r->delivered;
	if (rc == NSR_ERR_NOTFOUND)
		snprintf(r->errmsg, sizeof(r->errmsg),
			 "volume %s: no begin of save set %" PRIu32
			 " fragment %" PRIu32 " at file %" PRIu32
			 " block %" PRIu64, r->lab.name, frag->ssid,
			 frag->frag_seq, frag->file, frag->record);
	if (rc != NSR_OK)
		return rc;
	if (r->stop_rc != 0 && r->stop_rc != NSR_ERR_EOM)
		return r->stop_rc;
	if (r->first_damage != 0)
		return r->first_damage;
	return r->done ? NSR_OK : NSR_ERR_EOM;
}

/* by_place - qsort order of wanted fragments: where they begin. */
static int by_place(const void *a, const void *b)
{
	const struct want *x = a, *y = b;

	if (x->f.file != y->f.file)
		return x->f.file < y->f.file ? -1 : 1;
	if (x->f.record + x->f.offset != y->f.record + y->f.offset)
		return x->f.record + x->f.offset < y->f.record + y->f.offset
			       ? -1
			       : 1;
	return 0;
}

/* sets_position - go to where w begins (tape: seek; AFTD: its session
 * file).  NSR_ERR_NOTFOUND if the volume has no such place. */
static int sets_position(struct nsr_vol_reader *r, const struct want *w)
{
	struct nsr_dev_pos pos = { w->f.file, w->f.record };
	int rc;

	r->at = want_pos(r, w);
	r->stats.positions++;
	if (r->seq) {
		rc = nsr_dev_seek(r->dev, &pos);
	} else {
		nsr_dev_file_close(r->f);
		r->f = NULL;
		rc = nsr_dev_file_open(r->dev, w->f.file, &r->f);
	}
	if (rc == NSR_ERR_EOD || rc == NSR_ERR_EOF || rc == NSR_ERR_NOTFOUND)
		return NSR_ERR_NOTFOUND;
	if (rc != NSR_OK)
		snprintf(r->errmsg, sizeof(r->errmsg),
			 "volume %s: cannot position to file %" PRIu32
			 " block %" PRIu64 ": %s", r->lab.name, w->f.file,
			 w->f.record, nsr_dev_errmsg(r->dev));
	return rc;
}

/* sets_setup - sets mode: the wanted fragments in volume order. */
static int sets_setup(struct nsr_vol_reader *r,
		      const struct nsr_vol_frag *frags, size_t n,
		      const struct nsr_vol_scan_ops *ops, void *arg)
{
	static const struct nsr_vol_scan_ops none;

	if (n == 0 || n > NSR_VOL_SETS_MAX) {
		snprintf(r->errmsg, sizeof(r->errmsg), "%zu fragments to read "
			 "in one pass (1..%d allowed)", n, NSR_VOL_SETS_MAX);
		return NSR_ERR_INVAL;
	}
	for (size_t i = 0; i < n; i++)
		if (memcmp(frags[i].volid, r->lab.volid, 16) != 0) {
			snprintf(r->errmsg, sizeof(r->errmsg),
				 "fragment of save set %" PRIu32
				 " is not on volume %s", frags[i].ssid,
				 r->lab.name);
			return NSR_ERR_MISMATCH;
		}
	r->want = calloc(n, sizeof(*r->want));
	if (r->want == NULL)
		return NSR_ERR_NOMEM;
	for (size_t i = 0; i < n; i++)
		r->want[i].f = frags[i];
	r->nwant = n;
	qsort(r->want, n, sizeof(*r->want), by_place);
	r->ops = ops ? ops : &none;
	r->arg = arg;
	r->reading = MODE_SETS;
	r->stop_rc = 0;
	r->first_damage = 0;
	r->last_bad = 0;
	r->nbad = r->ndamaged = r->pend = 0;
	memset(&r->stats, 0, sizeof(r->stats));
	return NSR_OK;
}

/* sets_close_open - sets mode: the fragments still open end here. */
static void sets_close_open(struct nsr_vol_reader *r)
{
	for (size_t i = 0; i < r->nwant; i++)
		if (r->want[i].state == W_OPEN)
			want_unfinished(r, &r->want[i], &r->at);
}

/* nsr_vol_reader_read_sets - several save sets in one pass. */
int nsr_vol_reader_read_sets(struct nsr_vol_reader *r,
			     const struct nsr_vol_frag *frags, size_t n,
			     const struct nsr_vol_scan_ops *ops, void *arg)
{
	int rc = sets_setup(r, frags, n, ops, arg);

	while (rc == NSR_OK && r->stop_rc == 0 && !all_done(r)) {
		struct want *p = NULL;

		for (size_t i = 0; i < r->nwant && !p; i++)
			if (r->want[i].state == W_PENDING)
				p = &r->want[i];
		if (p == NULL)
			break;
		rc = sets_position(r, p);
		if (rc == NSR_ERR_NOTFOUND) {
			want_lost(r, p);
			rc = NSR_OK;
			continue;
		}
		if (rc == NSR_OK)
			rc = walk(r, 0);
		if (rc != NSR_OK || r->stop_rc != 0)
			break;
		/* The session file or the volume ended. */
		sets_close_open(r);
		if (p->state == W_PENDING)
			want_lost(r, p); /* nothing was there */
	}
	if (rc == NSR_OK && r->stop_rc == 0)
		for (size_t i = 0; i < r->nwant; i++)
			if (r->want[i].state != W_DONE)
				want_unfinished(r, &r->want[i], &r->at);
	nsr_dev_file_close(r->f);
	r->f = NULL;
	free(r->want);
	r->want = NULL;
	r->nwant = 0;
	r->reading = MODE_SCAN;
	if (rc == NSR_OK && r->stop_rc != 0)
		rc = r->stop_rc;
	return rc;
}
