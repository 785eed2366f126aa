/*
 * vol_writer.c - the volume writer: save-set sessions framed as chunks in
 * blocks of the label's block size.  Every session fills a block buffer
 * of its own.  On tape (and vtape) the sessions of a writer take turns on
 * the one medium, so their blocks interleave (multiplexing by block): each
 * record holds one session's chunks and, from format version 2 on, names
 * its save set in the block header, so a reader of one save set passes
 * over the other sessions' records by their header alone.  On adv_file
 * each session writes its own session file, so sessions run in parallel
 * threads without sharing anything but the writer's counters.
 *
 * Invariants:
 *  1. a session's data is counted in `pending` while it sits in a block
 *     buffer and moves to `on_vol` only when that block was written, so
 *     a fragment never claims bytes that are not on the medium;
 *  2. once the medium is full (end of medium, early warning on tape,
 *     ENOSPC on disk) no further block is written: every later write of
 *     every session returns NSR_ERR_EOM and its bytes go to the session's
 *     carry, together with the chunks of the block that failed, so
 *     on_vol + carry == all bytes the caller gave;
 *  3. a chunk never crosses a block boundary; chunk numbers of a session
 *     run 0 (begin), 1, 2, ... without gaps, so a reader sees lost chunks;
 *  4. tape: w->tfile/w->tseq is where the next block will land; the
 *     writer alone moves the tape while it is open, and a session's
 *     begin chunk is in the first block it writes (s->file/s->record are
 *     set when that block goes out);
 *  5. every block holds the chunks of one session only.
 * Locking: w->lock guards the session list, the full flag and (tape) every
 * session's block and the tape position; adv_file sessions take it only
 * to register and finish.
 */
#include "nsr/compat.h"

#include <pthread.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/media_fmt.h"

#include "vol_int.h"

struct vblk {
	uint8_t *p;    /* block_size bytes */
	uint32_t used; /* chunk bytes after the header */
	uint32_t file;
	uint64_t seq;
};

struct nsr_vol_writer {
	struct nsr_dev *dev;
	struct nsr_vol_label lab;
	struct nsr_vol_wopts o;
	int seq; /* sequential device (tape, vtape) */
	pthread_mutex_t lock;
	pthread_mutex_t errlock; /* errmsg and broken (AFTD threads) */
	struct nsr_vol_session *sessions;
	int full;   /* end of medium reached */
	int broken; /* sticky error code, 0 if none */
	uint32_t tfile; /* tape: where the next block lands */
	uint64_t tseq;
	uint64_t seg_bytes;
	int wrote; /* tape: a block went out since open */
	char errmsg[512];
};

struct nsr_vol_session {
	struct nsr_vol_writer *w;
	struct nsr_vol_session *next;
	uint32_t ssid;
	struct nsr_vol_span sp;
	uint32_t chunk_seq;
	uint32_t file;	 /* where the begin chunk went */
	uint64_t record;
	uint64_t on_vol;
	uint64_t pending;
	int begin_done, end_pending, end_done;
	int eom;
	int committed; /* adv_file: the file has its final name */
	struct nsr_buf carry;
	struct nsr_dev_file *f; /* adv_file */
	struct vblk own;	/* the session's block */
};

/* w_fail - remember a message for nsr_vol_writer_errmsg, return rc. */
static int w_fail(struct nsr_vol_writer *w, int rc, const char *fmt, ...)
	NSR_PRINTF(3, 4);
static int w_fail(struct nsr_vol_writer *w, int rc, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&w->errlock);
	va_start(ap, fmt);
	vsnprintf(w->errmsg, sizeof(w->errmsg), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&w->errlock);
	return rc;
}

/* get_broken - the sticky error, 0 if none. */
static int get_broken(struct nsr_vol_writer *w)
{
	return __atomic_load_n(&w->broken, __ATOMIC_ACQUIRE);
}

/* blk_room - payload bytes a new chunk can still carry in b. */
static size_t blk_room(const struct nsr_vol_writer *w, const struct vblk *b)
{
	size_t left = w->lab.block_size - MEDIA_FMT_BLOCK_HDR - b->used;

	return left > MEDIA_FMT_CHUNK_HDR ? left - MEDIA_FMT_CHUNK_HDR : 0;
}

/* find_session - the open session with ssid, or NULL. */
static struct nsr_vol_session *find_session(struct nsr_vol_writer *w,
					    uint32_t ssid)
{
	struct nsr_vol_session *s;

	for (s = w->sessions; s != NULL; s = s->next)
		if (s->ssid == ssid)
			return s;
	return NULL;
}

/* settle - a block was written: its sessions' bytes are on the volume. */
static void settle(struct nsr_vol_session *s)
{
	s->on_vol += s->pending;
	s->pending = 0;
	s->begin_done = 1;
	if (s->end_pending)
		s->end_done = 1;
}

/* lose_block - s's block did not get onto the medium: give s its data
 * chunks back as carry and end its writing here (invariant 2). */
static int lose_block(struct nsr_vol_session *s)
{
	struct media_fmt_chunk c;
	const uint8_t *payload;
	struct vblk *b = &s->own;
	size_t off = MEDIA_FMT_BLOCK_HDR;
	size_t end = MEDIA_FMT_BLOCK_HDR + b->used;
	int rc = NSR_OK;

	while (off < end) {
		if (media_fmt_chunk_decode(b->p + off, end - off, &c,
					   &payload) != NSR_OK)
			break; /* cannot happen: we framed it */
		if (c.kind == MEDIA_FMT_DATA &&
		    nsr_buf_add(&s->carry, payload, c.len) != NSR_OK)
			rc = NSR_ERR_NOMEM;
		off += MEDIA_FMT_CHUNK_HDR + c.len;
	}
	s->pending = 0;
	s->end_pending = 0;
	s->eom = 1;
	b->used = 0;
	return rc;
}

/* lose_blocks - the medium is full: s's block and, on tape, every other
 * session's buffered block go back to their sessions (on adv_file the
 * other sessions belong to other threads and find out at their next
 * block). */
static int lose_blocks(struct nsr_vol_writer *w, struct nsr_vol_session *s)
{
	struct nsr_vol_session *t;
	int rc = lose_block(s);

	if (!w->seq)
		return rc;
	for (t = w->sessions; t != NULL; t = t->next)
		if (t != s && lose_block(t) != NSR_OK)
			rc = NSR_ERR_NOMEM;
	return rc;
}

/* after_tape_block - early warning and segment filemarks. */
static int after_tape_block(struct nsr_vol_writer *w)
{
	struct nsr_dev_info info;
	int rc;

	nsr_dev_get_info(w->dev, &info);
	if (info.early_warning) {
		w->full = 1;
		return NSR_OK;
	}
	w->seg_bytes += w->lab.block_size;
	if (w->o.segment_size == 0 || w->seg_bytes < w->o.segment_size)
		return NSR_OK;
	rc = nsr_dev_weof(w->dev, 1);
	if (rc == NSR_ERR_EOM) {
		w->full = 1;
		return NSR_OK;
	}
	if (rc != NSR_OK)
		return w_fail(w, rc, "%s", nsr_dev_errmsg(w->dev));
	w->tfile++;
	w->tseq = 0;
	w->seg_bytes = 0;
	return NSR_OK;
}

/* flush_block - write s's block (padded) to the medium: the session's
 * own file on adv_file, the next record on tape. */
static int flush_block(struct nsr_vol_writer *w, struct nsr_vol_session *s)
{
	struct vblk *b = &s->own;
	struct media_fmt_block h;
	size_t end = MEDIA_FMT_BLOCK_HDR + b->used;
	int rc;

	if (b->used == 0)
		return NSR_OK;
	if (get_broken(w))
		return get_broken(w);
	if (__atomic_load_n(&w->full, __ATOMIC_ACQUIRE)) {
		rc = lose_blocks(w, s);
		return rc != NSR_OK ? rc : NSR_ERR_EOM;
	}
	if (w->seq) {
		b->file = w->tfile;
		b->seq = w->tseq;
	}
	memset(&h, 0, sizeof(h));
	h.version = (uint16_t)w->lab.version;
	memcpy(h.volid, w->lab.volid, 16);
	h.file = b->file;
	h.block_size = w->lab.block_size;
	h.seq = b->seq;
	h.used = b->used;
	if (w->lab.version >= 2) {
		h.flags = MEDIA_FMT_BLK_ONE_SS;
		h.ssid = s->ssid;
	}
	media_fmt_block_encode(&h, b->p);
	memset(b->p + end, 0, w->lab.block_size - end);
	if (w->seq)
		rc = nsr_dev_write(w->dev, b->p, w->lab.block_size);
	else
		rc = nsr_dev_file_append(s->f, b->p, w->lab.block_size);
	if (rc == NSR_ERR_EOM) {
		__atomic_store_n(&w->full, 1, __ATOMIC_RELEASE);
		w_fail(w, rc, "volume %s is full: %s", w->lab.name,
		       nsr_dev_errmsg(w->dev));
		rc = lose_blocks(w, s);
		return rc != NSR_OK ? rc : NSR_ERR_EOM;
	}
	if (rc != NSR_OK) {
		__atomic_store_n(&w->broken, rc, __ATOMIC_RELEASE);
		return w_fail(w, rc, "volume %s: %s", w->lab.name,
			      nsr_dev_errmsg(w->dev));
	}
	if (!s->begin_done) {
		/* Invariant 4: the begin chunk is in the first block. */
		s->file = b->file;
		s->record = b->seq;
	}
	settle(s);
	b->used = 0;
	b->seq++;
	if (!w->seq)
		return NSR_OK;
	w->wrote = 1;
	w->tseq++;
	return after_tape_block(w);
}

/* put_chunk - frame payload as one chunk in the session's block, making
 * room first.  For data, *n is in/out: how much of it fitted. */
static int put_chunk(struct nsr_vol_session *s, uint8_t kind,
		     const void *payload, size_t *n)
{
	struct nsr_vol_writer *w = s->w;
	struct vblk *b = &s->own;
	struct media_fmt_chunk c;
	size_t room = blk_room(w, b);
	uint8_t *at;
	int rc;

	/* Begin and end go whole; data is split but never into slivers. */
	if (room < *n && (kind != MEDIA_FMT_DATA || room < 256)) {
		rc = flush_block(w, s);
		if (rc != NSR_OK)
			return rc;
		room = blk_room(w, b);
	}
	if (*n > room)
		*n = room;
	at = b->p + MEDIA_FMT_BLOCK_HDR + b->used;
	c.ssid = s->ssid;
	c.seq = s->chunk_seq++;
	c.kind = kind;
	c.len = (uint32_t)*n;
	media_fmt_chunk_put(&c, at, payload);
	b->used += (uint32_t)(MEDIA_FMT_CHUNK_HDR + *n);
	if (kind == MEDIA_FMT_DATA)
		s->pending += *n;
	else if (kind == MEDIA_FMT_END)
		s->end_pending = 1;
	return NSR_OK;
}

/* nsr_vol_writer_open - label check, position at the end of data. */
int nsr_vol_writer_open(struct nsr_dev *dev, const struct nsr_vol_wopts *o,
			struct nsr_vol_writer **out, struct nsr_buf *why)
{
	static const struct nsr_vol_wopts defaults;
	struct nsr_vol_writer *w;
	struct nsr_dev_info info;
	struct nsr_dev_pos pos;
	int rc;

	*out = NULL;
	w = calloc(1, sizeof(*w));
	if (w == NULL)
		return NSR_ERR_NOMEM;
	w->dev = dev;
	w->o = o ? *o : defaults;
	w->o.expect_volid = NULL;
	pthread_mutex_init(&w->lock, NULL);
	pthread_mutex_init(&w->errlock, NULL);
	rc = vol_read_label(dev, &w->lab, why);
	if (rc != NSR_OK)
		goto out;
	if (o != NULL && o->expect_volid != NULL &&
	    memcmp(o->expect_volid, w->lab.volid, 16) != 0) {
		rc = w_fail(w, NSR_ERR_MISMATCH,
			    "%s: volume %s is not the volume asked for",
			    nsr_dev_path(dev), w->lab.name);
		goto out;
	}
	nsr_dev_get_info(dev, &info);
	w->seq = info.sequential;
	if (w->seq) {
		rc = nsr_dev_eod(dev);
		if (rc == NSR_OK)
			rc = nsr_dev_tell(dev, &pos);
		if (rc != NSR_OK) {
			w_fail(w, rc, "%s", nsr_dev_errmsg(dev));
			goto out;
		}
		if (pos.file == 0) {
			rc = w_fail(w, NSR_ERR_CORRUPT,
				    "%s: volume %s: the label file is not "
				    "closed by a filemark", nsr_dev_path(dev),
				    w->lab.name);
			goto out;
		}
		w->tfile = pos.file;
		w->tseq = pos.record;
	}
	*out = w;
	w = NULL;
out:
	if (w != NULL) {
		if (rc != NSR_OK && w->errmsg[0] != '\0')
			vol_why(why, "%s", w->errmsg);
		pthread_mutex_destroy(&w->lock);
		pthread_mutex_destroy(&w->errlock);
		free(w);
	}
	return rc;
}

/* nsr_vol_writer_label - the volume's label. */
const struct nsr_vol_label *nsr_vol_writer_label(
	const struct nsr_vol_writer *w)
{
	return &w->lab;
}

/* nsr_vol_writer_errmsg - the last failure in words. */
const char *nsr_vol_writer_errmsg(struct nsr_vol_writer *w)
{
	return w->errmsg;
}

/* nsr_vol_writer_flush - write every session's partly filled block now
 * (tape). */
int nsr_vol_writer_flush(struct nsr_vol_writer *w)
{
	struct nsr_vol_session *s;
	int rc = NSR_OK;

	if (!w->seq)
		return NSR_OK;
	pthread_mutex_lock(&w->lock);
	for (s = w->sessions; s != NULL && rc == NSR_OK; s = s->next)
		rc = flush_block(w, s);
	pthread_mutex_unlock(&w->lock);
	return rc;
}

/* nsr_vol_writer_close - closing filemark, free. */
int nsr_vol_writer_close(struct nsr_vol_writer *w)
{
	int rc = NSR_OK, rc2 = NSR_OK;

	if (w == NULL)
		return NSR_OK;
	if (w->sessions != NULL)
		rc = NSR_ERR_BUSY;
	if (w->seq && w->wrote) {
		/* Aborted sessions took their blocks with them. */
		rc2 = nsr_dev_weof(w->dev, 1);
		if (rc2 == NSR_OK && !w->o.no_sync)
			rc2 = nsr_dev_weof(w->dev, 0);
		if (rc == NSR_OK)
			rc = rc2;
	}
	pthread_mutex_destroy(&w->lock);
	pthread_mutex_destroy(&w->errlock);
	free(w);
	return rc;
}

/* session_free - unlink from the writer and free. */
static void session_free(struct nsr_vol_session *s)
{
	struct nsr_vol_session **pp;

	for (pp = &s->w->sessions; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	}
	/* AFTD: a file whose end was not made durable goes (invariant 1
	 * of dev_aftd.c). */
	if (s->committed)
		nsr_dev_file_close(s->f);
	else
		nsr_dev_file_discard(s->f);
	free(s->own.p);
	nsr_buf_release(&s->carry);
	free(s);
}

/* nsr_vol_session_begin - register a session and frame its begin chunk. */
int nsr_vol_session_begin(struct nsr_vol_writer *w,
			  const struct nsr_vol_sshdr *hdr,
			  const struct nsr_vol_span *sp,
			  struct nsr_vol_session **out)
{
	static const struct nsr_vol_span first;
	struct nsr_vol_session *s;
	uint8_t payload[MEDIA_FMT_SSHDR_MAX];
	size_t n;
	int rc = NSR_OK;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NSR_ERR_NOMEM;
	s->w = w;
	s->ssid = hdr->ssid;
	s->sp = sp ? *sp : first;
	nsr_buf_init(&s->carry, 0);
	pthread_mutex_lock(&w->lock);
	if (get_broken(w))
		rc = get_broken(w);
	else if (__atomic_load_n(&w->full, __ATOMIC_ACQUIRE))
		rc = w_fail(w, NSR_ERR_EOM, "volume %s is full", w->lab.name);
	else if (find_session(w, hdr->ssid) != NULL)
		rc = w_fail(w, NSR_ERR_EXISTS,
			    "save set %" PRIu32 " already has a session",
			    hdr->ssid);
	if (rc == NSR_OK) {
		s->own.p = malloc(w->lab.block_size);
		if (s->own.p == NULL)
			rc = NSR_ERR_NOMEM;
	}
	if (rc == NSR_OK && !w->seq) {
		rc = nsr_dev_file_create(w->dev, &s->own.file, &s->f);
		if (rc == NSR_ERR_EOM)
			__atomic_store_n(&w->full, 1, __ATOMIC_RELEASE);
		if (rc != NSR_OK && rc != NSR_ERR_NOMEM)
			w_fail(w, rc, "%s", nsr_dev_errmsg(w->dev));
	}
	if (rc != NSR_OK) {
		pthread_mutex_unlock(&w->lock);
		nsr_dev_file_close(s->f);
		free(s->own.p);
		free(s);
		return rc;
	}
	/* The begin chunk goes first into the session's empty block. */
	n = media_fmt_sshdr_encode(hdr, &s->sp, payload);
	rc = put_chunk(s, MEDIA_FMT_BEGIN, payload, &n);
	if (rc == NSR_ERR_EOM)
		s->eom = 1;
	if (rc == NSR_OK || rc == NSR_ERR_EOM) {
		s->next = w->sessions;
		w->sessions = s;
	}
	pthread_mutex_unlock(&w->lock);
	if (rc != NSR_OK && rc != NSR_ERR_EOM) {
		nsr_dev_file_discard(s->f);
		free(s->own.p);
		nsr_buf_release(&s->carry);
		free(s);
		return rc;
	}
	/* On EOM the session exists and the caller spans it (_eom). */
	*out = s;
	return rc;
}

/* session_lock - take the writer lock where the session shares it. */
static void session_lock(struct nsr_vol_session *s)
{
	if (s->w->seq)
		pthread_mutex_lock(&s->w->lock);
}

/* session_unlock - the other half. */
static void session_unlock(struct nsr_vol_session *s)
{
	if (s->w->seq)
		pthread_mutex_unlock(&s->w->lock);
}

/* nsr_vol_session_write - frame data as chunks. */
int nsr_vol_session_write(struct nsr_vol_session *s, const void *p,
			  size_t len)
{
	const uint8_t *q = p;
	size_t n;
	int rc = NSR_OK;

	session_lock(s);
	rc = get_broken(s->w);
	if (rc != NSR_OK) {
		session_unlock(s);
		return rc;
	}
	while (len > 0 && !s->eom) {
		n = len;
		rc = put_chunk(s, MEDIA_FMT_DATA, q, &n);
		if (rc != NSR_OK)
			break;
		q += n;
		len -= n;
	}
	if (s->eom) {
		/* Invariant 2: whatever did not fit is carried. */
		if (nsr_buf_add(&s->carry, q, len) != NSR_OK)
			rc = NSR_ERR_NOMEM;
		else
			rc = NSR_ERR_EOM;
	}
	session_unlock(s);
	return rc;
}

/* fill_frag - describe what of s is on this volume. */
static void fill_frag(const struct nsr_vol_session *s,
		      struct nsr_vol_frag *f)
{
	memset(f, 0, sizeof(*f));
	memcpy(f->volid, s->w->lab.volid, 16);
	f->ssid = s->ssid;
	f->frag_seq = s->sp.frag_seq;
	f->ss_offset = s->sp.ss_offset;
	if (s->begin_done) {
		f->file = s->file;
		f->record = s->record;
		f->offset = s->w->seq ? 0 : s->record * s->w->lab.block_size;
	}
	f->size = s->on_vol;
	f->complete = s->end_done;
}

/* make_durable - fsync the session file / flush the drive. */
static int make_durable(struct nsr_vol_session *s)
{
	struct nsr_vol_writer *w = s->w;
	int rc;

	if (w->o.no_sync || (!w->seq && s->f == NULL))
		return NSR_OK;
	rc = w->seq ? nsr_dev_weof(w->dev, 0) : nsr_dev_file_sync(s->f);
	if (rc != NSR_OK)
		w_fail(w, rc, "volume %s: %s", w->lab.name,
		       nsr_dev_errmsg(w->dev));
	return rc;
}

/* commit_file - AFTD: the session file's end is durable; final name. */
static int commit_file(struct nsr_vol_session *s)
{
	int rc;

	if (s->w->seq || s->f == NULL)
		return NSR_OK;
	rc = nsr_dev_file_commit(s->f);
	if (rc != NSR_OK)
		w_fail(s->w, rc, "volume %s: %s", s->w->lab.name,
		       nsr_dev_errmsg(s->w->dev));
	else
		s->committed = 1;
	return rc;
}

/* nsr_vol_session_end - end chunk, flush, sync, free. */
int nsr_vol_session_end(struct nsr_vol_session *s,
			const struct nsr_vol_sstail *tail,
			struct nsr_vol_frag *frag)
{
	struct nsr_vol_writer *w = s->w;
	uint8_t payload[MEDIA_FMT_SSTAIL_LEN];
	size_t n = sizeof(payload);
	int rc;

	session_lock(s);
	rc = s->eom ? NSR_ERR_EOM : get_broken(w);
	if (rc == NSR_OK) {
		media_fmt_sstail_encode(tail, payload);
		rc = put_chunk(s, MEDIA_FMT_END, payload, &n);
	}
	if (rc == NSR_OK)
		rc = flush_block(w, s);
	if (rc == NSR_OK)
		rc = make_durable(s);
	if (rc == NSR_OK)
		rc = commit_file(s);
	session_unlock(s);
	if (rc == NSR_ERR_EOM)
		return rc;
	if (frag != NULL)
		fill_frag(s, frag);
	pthread_mutex_lock(&w->lock);
	session_free(s);
	pthread_mutex_unlock(&w->lock);
	return rc;
}

/* nsr_vol_session_eom - the fragment on this volume and the carry. */
int nsr_vol_session_eom(struct nsr_vol_session *s, struct nsr_vol_frag *frag,
			struct nsr_buf *carry)
{
	struct nsr_vol_writer *w = s->w;
	int rc;

	session_lock(s);
	rc = make_durable(s);
	if (rc == NSR_OK && s->on_vol > 0)
		rc = commit_file(s); /* else nothing is recorded: it goes */
	session_unlock(s);
	if (frag != NULL)
		fill_frag(s, frag);
	if (carry != NULL && nsr_buf_add(carry, s->carry.data, s->carry.len) !=
				     NSR_OK)
		rc = NSR_ERR_NOMEM;
	pthread_mutex_lock(&w->lock);
	session_free(s);
	pthread_mutex_unlock(&w->lock);
	return rc;
}

/* nsr_vol_session_bytes - what of the session is out and what waits. */
void nsr_vol_session_bytes(struct nsr_vol_session *s, uint64_t *on_volume,
			   uint64_t *buffered)
{
	session_lock(s);
	if (on_volume != NULL)
		*on_volume = s->on_vol;
	if (buffered != NULL)
		*buffered = s->pending;
	session_unlock(s);
}

/* nsr_vol_session_abort - drop the session without an end chunk. */
void nsr_vol_session_abort(struct nsr_vol_session *s)
{
	struct nsr_vol_writer *w = s->w;

	pthread_mutex_lock(&w->lock);
	session_free(s);
	pthread_mutex_unlock(&w->lock);
}
