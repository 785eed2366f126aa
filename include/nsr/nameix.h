/*
 * nameix.h - an index of names to the numbers of items the caller keeps.
 *
 * The caller keeps its items in an array of its own (numbered 0 .. n-1)
 * and says what an item's name is through a function; the index finds an
 * item by its name in constant time: open addressing with linear probing
 * on the name's FNV-1a hash, at most half full.  It holds only numbers,
 * so the caller's array may move (realloc) as it likes; when an item
 * takes another number (the last one moved into a hole), say so with
 * nsr_nameix_move.  Names are byte strings of a length: a C string, or a
 * prefix of one (a directory of a path, looked up without copying it).
 *
 * Used by the recover browser's marks, mminfo's kept volumes, nsrim's
 * volume table and the index's directory map, which each wrote one out.
 *
 * Invariants:
 * 1. cap is 0 (nothing indexed, slot NULL) or a power of two with
 *    2 * n <= cap, so a probe always meets an empty slot.
 * 2. Every item added and not deleted sits in the run of occupied slots
 *    that starts at its home slot (hash & (cap - 1)), so a lookup that
 *    stops at the first empty slot finds it.  Deletion keeps this by
 *    moving later entries of the run back (no tombstones).
 * 3. A failed call leaves the index as it was.
 *
 * Not safe for concurrent use: callers hold their own locks.
 */
#ifndef NSR_NAMEIX_H
#define NSR_NAMEIX_H

#include <stddef.h>
#include <stdint.h>

#define NSR_NAMEIX_NONE ((size_t)-1) /* "no such item" of a lookup */
#define NSR_NAMEIX_MAX (UINT32_MAX - 1u) /* items an index can hold */

/* The name of item i of the caller's items (ctx as given to init): its
 * bytes, and their number in *len. */
typedef const char *(*nsr_nameix_name_fn)(const void *ctx, size_t i,
					  size_t *len);

struct nsr_nameix {
	uint32_t *slot; /* item + 1, 0 = empty */
	size_t cap;	/* slots (invariant 1) */
	size_t n;	/* items indexed */
	nsr_nameix_name_fn name;
	const void *ctx;
};

/* nsr_nameix_init - an empty index whose items are named by name(ctx, i). */
void nsr_nameix_init(struct nsr_nameix *x, nsr_nameix_name_fn name,
		     const void *ctx);

/* nsr_nameix_free - free the index (not the items); empty again. */
void nsr_nameix_free(struct nsr_nameix *x);

/* nsr_nameix_find - the item named by the len bytes at p, or
 * NSR_NAMEIX_NONE. */
size_t nsr_nameix_find(const struct nsr_nameix *x, const char *p,
		       size_t len);

/* nsr_nameix_add - index item i under its name (which no indexed item
 * has): NSR_OK, NSR_ERR_NOMEM (growing) or NSR_ERR_INVAL (i past
 * NSR_NAMEIX_MAX), the index then unchanged. */
int nsr_nameix_add(struct nsr_nameix *x, size_t i);

/* nsr_nameix_del - item i leaves the index (nothing when it is not in). */
void nsr_nameix_del(struct nsr_nameix *x, size_t i);

/* nsr_nameix_move - item from (indexed, its name unchanged) is now item
 * to, a number no indexed item has. */
void nsr_nameix_move(struct nsr_nameix *x, size_t from, size_t to);

#endif /* NSR_NAMEIX_H */
