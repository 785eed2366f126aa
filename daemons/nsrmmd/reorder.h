/*
 * reorder.h - the reorder buffer of a striped save session: data calls
 * numbered 0, 1, 2, ... arrive over several connections in any order and
 * leave in number order, with a bound on how many (and how many bytes)
 * wait out of order.  Pure data structure: no locking (the caller holds
 * the session's mutex), no logging.
 *
 * Calling sequence:
 *   1. mmd_reorder_init(&r, max_chunks, max_bytes);
 *   2. for each arriving chunk: mmd_reorder_check(&r, seq, len) says
 *      whether it can be taken now (NSR_OK), is a duplicate or late
 *      (NSR_ERR_PROTO: fail the session) or lies beyond the bound
 *      (NSR_ERR_LIMIT: wait for the gap to close, or fail);
 *      mmd_reorder_put(&r, seq, data, len) takes it (ownership of the
 *      malloc'ed data passes on NSR_OK);
 *   3. while mmd_reorder_take(&r, &data, &len) returns 1: write the data
 *      (the chunk numbered mmd_reorder_next() - 1), then free it;
 *   4. mmd_reorder_release(&r) frees what is still held.
 * The chunk numbered next is always taken whatever the byte bound (it
 * leaves at once), so the bound cannot stall the stream.
 */
#ifndef NSRMMD_REORDER_H
#define NSRMMD_REORDER_H

#include <stddef.h>
#include <stdint.h>

struct mmd_reorder_slot {
	void *data; /* NULL: empty */
	size_t len;
};

struct mmd_reorder {
	uint64_t next;	     /* number of the next chunk to leave */
	unsigned max_chunks; /* slots: chunks next .. next + max - 1 */
	uint64_t max_bytes;  /* bytes held at most (but see above) */
	uint64_t bytes;	     /* bytes held now */
	unsigned held;	     /* chunks held now */
	struct mmd_reorder_slot *slot; /* by seq % max_chunks */
};

/* mmd_reorder_init - empty buffer, next chunk 0; NSR_ERR_NOMEM. */
int mmd_reorder_init(struct mmd_reorder *r, unsigned max_chunks,
		     uint64_t max_bytes);
/* mmd_reorder_release - free every chunk held and the slots. */
void mmd_reorder_release(struct mmd_reorder *r);
/* mmd_reorder_check - could chunk seq of len bytes be put now: NSR_OK,
 * NSR_ERR_PROTO (already taken or held: a duplicate), NSR_ERR_LIMIT (too
 * far ahead of the next chunk, or too many bytes held). */
int mmd_reorder_check(const struct mmd_reorder *r, uint64_t seq, size_t len);
/* mmd_reorder_put - hold chunk seq (data malloc'ed; owned by the buffer
 * on NSR_OK, still the caller's otherwise); errors as mmd_reorder_check. */
int mmd_reorder_put(struct mmd_reorder *r, uint64_t seq, void *data,
		    size_t len);
/* mmd_reorder_take - 1 and the next chunk (the caller frees *data) if it
 * is held, 0 if it has not arrived yet. */
int mmd_reorder_take(struct mmd_reorder *r, void **data, size_t *len);
/* mmd_reorder_next - the number of the next chunk to leave. */
uint64_t mmd_reorder_next(const struct mmd_reorder *r);
/* mmd_reorder_held - chunks waiting out of order. */
unsigned mmd_reorder_held(const struct mmd_reorder *r);

#endif /* NSRMMD_REORDER_H */
