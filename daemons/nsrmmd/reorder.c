/*
 * reorder.c - the reorder buffer of a striped save session (reorder.h):
 * a ring of max_chunks slots indexed by chunk number, the window starting
 * at the next chunk to leave.
 *
 * Invariants:
 *  1. every held chunk's number n satisfies next < n < next + max_chunks
 *     (the next chunk itself leaves as soon as it is put);
 *  2. held and bytes count exactly the non-empty slots and their lengths;
 *  3. bytes <= max_bytes, except for a chunk put as the next one, which
 *     leaves at the following take.
 */
#include "nsr/compat.h"

#include "nsr/err.h"

#include "reorder.h"

/* mmd_reorder_init - an empty buffer of max_chunks slots. */
int mmd_reorder_init(struct mmd_reorder *r, unsigned max_chunks,
		     uint64_t max_bytes)
{
	memset(r, 0, sizeof(*r));
	r->max_chunks = max_chunks ? max_chunks : 1;
	r->max_bytes = max_bytes;
	r->slot = calloc(r->max_chunks, sizeof(*r->slot));
	return r->slot ? NSR_OK : NSR_ERR_NOMEM;
}

/* mmd_reorder_release - free the held chunks and the ring. */
void mmd_reorder_release(struct mmd_reorder *r)
{
	if (r->slot)
		for (unsigned i = 0; i < r->max_chunks; i++)
			free(r->slot[i].data);
	free(r->slot);
	memset(r, 0, sizeof(*r));
}

/* mmd_reorder_check - whether chunk seq can be put now. */
int mmd_reorder_check(const struct mmd_reorder *r, uint64_t seq, size_t len)
{
	if (seq < r->next)
		return NSR_ERR_PROTO;
	if (seq - r->next >= r->max_chunks)
		return NSR_ERR_LIMIT; /* its slot is not its own yet */
	if (r->slot[seq % r->max_chunks].data)
		return NSR_ERR_PROTO;
	if (seq != r->next && r->bytes + len > r->max_bytes)
		return NSR_ERR_LIMIT; /* the next one leaves at once */
	return NSR_OK;
}

/* mmd_reorder_put - hold chunk seq until its turn. */
int mmd_reorder_put(struct mmd_reorder *r, uint64_t seq, void *data, size_t len)
{
	struct mmd_reorder_slot *s;
	int rc = mmd_reorder_check(r, seq, len);

	if (rc != NSR_OK)
		return rc;
	s = &r->slot[seq % r->max_chunks];
	/* An empty chunk still takes its turn: keep a non-NULL marker. */
	s->data = data ? data : malloc(1);
	if (!s->data)
		return NSR_ERR_NOMEM;
	s->len = data ? len : 0;
	r->held++;
	r->bytes += s->len;
	return NSR_OK;
}

/* mmd_reorder_take - the next chunk if it has arrived. */
int mmd_reorder_take(struct mmd_reorder *r, void **data, size_t *len)
{
	struct mmd_reorder_slot *s = &r->slot[r->next % r->max_chunks];

	*data = NULL;
	*len = 0;
	if (!s->data)
		return 0;
	*data = s->data;
	*len = s->len;
	s->data = NULL;
	s->len = 0;
	r->held--;
	r->bytes -= *len;
	r->next++;
	return 1;
}

/* mmd_reorder_next - number of the next chunk to leave. */
uint64_t mmd_reorder_next(const struct mmd_reorder *r)
{
	return r->next;
}

/* mmd_reorder_held - chunks held out of order. */
unsigned mmd_reorder_held(const struct mmd_reorder *r)
{
	return r->held;
}
