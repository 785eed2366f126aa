/*
 * dec_resync.c - resynchronisation of the save stream decoder after
 * damage (nsr_asm_dec_resync).  The bytes after the start of a damaged
 * record (its frame and payload, which a damaged length may have made
 * swallow intact records) and the input that follows go into a window
 * that is scanned byte by byte for an intact FILE, LONGSTR (a long path's
 * first piece resumes; a later one fails and the hunt goes on) or END
 * record: right
 * type, zero reserved bytes, a length within bounds and a matching
 * CRC-32C.  Decoding resumes there; what followed it in the window is
 * queued and decoded before new input.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/bytes.h"
#include "nsr/crc32c.h"
#include "nsr/err.h"

#include "asm_int.h"

/* asm_dec_recoverable - may decoding go on after this error (resync on)? */
int asm_dec_recoverable(const struct nsr_asm_dec *d, int rc)
{
	if (!d->resync || d->cb_err || d->state == DEC_DONE)
		return 0;
	return rc == NSR_ERR_CORRUPT || rc == NSR_ERR_CHECKSUM ||
	       rc == NSR_ERR_TOOBIG || rc == NSR_ERR_UNSUPPORTED;
}

/* win_add - append bytes to the hunt window (room is ensured). */
static void win_add(struct nsr_asm_dec *d, const void *p, size_t n)
{
	memcpy(d->win + d->win_len, p, n);
	d->win_len += n;
}

/* asm_dec_start_hunt - damage at the current record: tell the caller, drop the
 * current file, and look for the next intact FILE or END record from the
 * byte after the damaged record's start (its retained bytes first). */
int asm_dec_start_hunt(struct nsr_asm_dec *d, int why, size_t frame_bytes)
{
	int rc;

	if (d->win == NULL)
		d->win = malloc(HUNT_CAP);
	if (d->win == NULL)
		return NSR_ERR_NOMEM;
	d->damaged++;
	if (d->ops.damaged) {
		rc = d->ops.damaged(d->ctx, d->rec_offset, why);
		if (rc)
			return asm_dec_cb_rc(d, rc);
	}
	d->win_len = 0;
	d->win_pos = 0;
	/* what is retained of the damaged record: its frame and, for a
	 * metadata record, the payload read so far */
	if (frame_bytes > 1)
		win_add(d, d->frame + 1, frame_bytes - 1);
	if (frame_bytes == NSR_ASM_FRAME_LEN && d->type != NSR_ASM_REC_DATA &&
	    d->type != NSR_ASM_REC_SEALED)
		win_add(d, d->meta, d->got); /* got is 0 if the frame failed */
	if (d->ck_alg == 0) { /* the header was lost */
		d->ck_alg = NSR_ASM_CK_CRC32C;
		d->ck_guess = 1;
	}
	d->in_payload = 0;
	d->frame_fill = 0;
	d->path[0] = '\0';
	d->path_long = 0;
	d->lng[0].total = d->lng[0].got = 0;
	d->lng[1].total = d->lng[1].got = 0;
	d->hunting = 1;
	return NSR_OK;
}

/* candidate - is there an intact FILE, LONGSTR or END record at p (n
 * bytes available)?  1 yes, 0 no, -1 cannot tell yet (more bytes needed). */
static int candidate(const uint8_t *p, size_t n)
{
	uint32_t len, crc;

	if (n < NSR_ASM_FRAME_LEN)
		return -1;
	if ((p[0] != NSR_ASM_REC_FILE && p[0] != NSR_ASM_REC_END &&
	     p[0] != NSR_ASM_REC_LONGSTR) ||
	    p[1] != 0 || p[2] != 0 || p[3] != 0)
		return 0;
	len = nsr_get_u32(p + 4);
	if (len > NSR_ASM_MAX_META || (p[0] == NSR_ASM_REC_END && len != 24))
		return 0;
	if (n < NSR_ASM_FRAME_LEN + (size_t)len)
		return -1;
	crc = nsr_crc32c(0, p, 8);
	crc = nsr_crc32c(crc, p + NSR_ASM_FRAME_LEN, len);
	return crc == nsr_get_u32(p + 8);
}

/* asm_dec_hunt - scan the window for a record to resume at.  On success the
 * record is decoded and the bytes after it are queued for decoding. */
int asm_dec_hunt(struct nsr_asm_dec *d)
{
	while (d->win_len - d->win_pos > 0) {
		const uint8_t *p = d->win + d->win_pos;
		size_t avail = d->win_len - d->win_pos, rest;
		int c = candidate(p, avail);
		struct nsr_buf nq;
		int rc;

		if (c < 0 && !d->at_end)
			return NSR_OK; /* wait for more */
		if (c < 0)
			c = 0; /* nothing more will come to complete it */
		if (c == 0) {
			d->win_pos++;
			continue;
		}
		/* Resume: decode this record as if it came next. */
		d->hunting = 0;
		d->state = DEC_BETWEEN;
		memcpy(d->frame, p, NSR_ASM_FRAME_LEN);
		d->type = p[0];
		d->len = nsr_get_u32(p + 4);
		d->got = d->len;
		memcpy(d->meta, p + NSR_ASM_FRAME_LEN, d->len);
		rest = avail - NSR_ASM_FRAME_LEN - d->len;
		/* the window was counted in offset: place the record, and
		 * uncount the tail, which is decoded (and counted) again */
		d->offset -= rest;
		d->rec_offset = d->offset - NSR_ASM_FRAME_LEN - d->len;
		/* the window's tail, then what was queued, go first */
		nsr_buf_init(&nq, 0);
		rc = nsr_buf_add(&nq, p + NSR_ASM_FRAME_LEN + d->len, rest);
		if (rc == NSR_OK)
			rc = nsr_buf_add(&nq, d->q.data + d->q_pos,
					 d->q.len - d->q_pos);
		if (rc) {
			nsr_buf_release(&nq);
			return rc;
		}
		nsr_buf_release(&d->q);
		d->q = nq;
		d->q_pos = 0;
		d->win_len = d->win_pos = 0;
		return asm_dec_on_meta(d);
	}
	return NSR_OK;
}

/* asm_dec_win_take - move up to n input bytes into the hunt window; returns how
 * many were taken. */
size_t asm_dec_win_take(struct nsr_asm_dec *d, const uint8_t *c, size_t n)
{
	size_t k;

	if (d->win_pos > 0) { /* compact */
		memmove(d->win, d->win + d->win_pos, d->win_len - d->win_pos);
		d->win_len -= d->win_pos;
		d->win_pos = 0;
	}
	k = NSR_MIN(n, HUNT_CAP - d->win_len);
	win_add(d, c, k);
	d->offset += k;
	return k;
}

/* swallowed - the stream ended inside a metadata record: did a damaged
 * length make it swallow intact records?  (Is one among the bytes kept?) */
static int swallowed(const struct nsr_asm_dec *d, size_t *frame_bytes)
{
	uint8_t *tmp;
	size_t n = 0;
	int found = 0;

	*frame_bytes = d->in_payload ? NSR_ASM_FRAME_LEN : d->frame_fill;
	if ((d->in_payload && (d->type == NSR_ASM_REC_DATA ||
			       d->type == NSR_ASM_REC_SEALED)) ||
	    *frame_bytes <= 1)
		return 0;
	tmp = malloc(NSR_ASM_FRAME_LEN + NSR_ASM_MAX_XATTR_REC);
	if (tmp == NULL)
		return 0;
	memcpy(tmp, d->frame + 1, *frame_bytes - 1);
	n = *frame_bytes - 1;
	if (d->in_payload) {
		memcpy(tmp + n, d->meta, d->got);
		n += d->got;
	}
	for (size_t i = 0; i < n && !found; i++)
		found = candidate(tmp + i, n - i) == 1;
	free(tmp);
	return found;
}

/* asm_dec_drain - at the end of input with resync on: if the last record
 * swallowed intact ones, resume at them and decode what is left. */
int asm_dec_drain(struct nsr_asm_dec *d)
{
	size_t fb;
	int rc;

	d->at_end = 1;
	if (!d->hunting && d->state != DEC_DONE && swallowed(d, &fb)) {
		rc = asm_dec_start_hunt(d, NSR_ERR_CORRUPT, fb);
		if (rc)
			return asm_dec_fail(d, rc);
	}
	while (d->hunting || d->q_pos < d->q.len) {
		if (d->hunting) {
			rc = asm_dec_hunt(d);
			if (rc && asm_dec_recoverable(d, rc))
				rc = asm_dec_start_hunt(d, rc,
							NSR_ASM_FRAME_LEN);
			if (rc)
				return asm_dec_fail(d, rc);
			if (d->hunting && d->q_pos >= d->q.len)
				break; /* nothing intact in what is left */
		}
		if (d->q_pos < d->q.len) {
			rc = nsr_asm_dec_feed(d, NULL, 0);
			if (rc)
				return rc;
		}
	}
	return NSR_OK;
}

/* nsr_asm_dec_resync - after damage, skip to the next intact record. */
void nsr_asm_dec_resync(struct nsr_asm_dec *d, int on)
{
	d->resync = on;
}

/* nsr_asm_dec_damaged - how many times damage was skipped. */
int nsr_asm_dec_damaged(const struct nsr_asm_dec *d)
{
	return d->damaged;
}
