/*
 * nameix.c - an index of names to item numbers (nameix.h): open
 * addressing, linear probing, FNV-1a, deletion by backward shift.
 */
#include "nsr/compat.h"

#include <stdlib.h>
#include <string.h>

#include "nsr/err.h"
#include "nsr/fnv.h"
#include "nsr/nameix.h"

#define NAMEIX_MIN 64 /* slots of a first table */

/* home - the first slot of the len bytes at p in a table of cap slots. */
static size_t home(const char *p, size_t len, size_t cap)
{
	return (size_t)nsr_fnv1a(NSR_FNV1A_BASIS, p, len) & (cap - 1);
}

/* item_home - the first slot of item i's name. */
static size_t item_home(const struct nsr_nameix *x, size_t i)
{
	size_t len;
	const char *p = x->name(x->ctx, i, &len);

	return home(p, len, x->cap);
}

/* probe - the slot holding the item named by the len bytes at p, or the
 * empty slot where the run ends (invariant 2); cap is not 0. */
static size_t probe(const struct nsr_nameix *x, const char *p, size_t len)
{
	size_t k = home(p, len, x->cap);

	while (x->slot[k]) {
		size_t qlen;
		const char *q = x->name(x->ctx, x->slot[k] - 1, &qlen);

		if (qlen == len && memcmp(q, p, len) == 0)
			return k;
		k = (k + 1) & (x->cap - 1);
	}
	return k;
}

/* slot_of - the slot holding item i, or cap when i is not indexed. */
static size_t slot_of(const struct nsr_nameix *x, size_t i)
{
	size_t k;

	if (!x->cap)
		return 0;
	for (k = item_home(x, i); x->slot[k]; k = (k + 1) & (x->cap - 1))
		if (x->slot[k] == i + 1)
			return k;
	return x->cap;
}

/* nsr_nameix_init - an empty index whose items are named by name(ctx, i). */
void nsr_nameix_init(struct nsr_nameix *x, nsr_nameix_name_fn name,
		     const void *ctx)
{
	memset(x, 0, sizeof(*x));
	x->name = name;
	x->ctx = ctx;
}

/* nsr_nameix_free - free the index (not the items); empty again. */
void nsr_nameix_free(struct nsr_nameix *x)
{
	free(x->slot);
	x->slot = NULL;
	x->cap = 0;
	x->n = 0;
}

/* nsr_nameix_find - the item named by the len bytes at p, or
 * NSR_NAMEIX_NONE. */
size_t nsr_nameix_find(const struct nsr_nameix *x, const char *p,
		       size_t len)
{
	size_t k;

	if (!x->cap)
		return NSR_NAMEIX_NONE;
	k = probe(x, p, len);
	return x->slot[k] ? (size_t)x->slot[k] - 1 : NSR_NAMEIX_NONE;
}

/* grow - room for one more item (invariant 1): NSR_OK, or
 * NSR_ERR_NOMEM with the index as it was. */
static int grow(struct nsr_nameix *x)
{
	size_t cap = x->cap ? x->cap : NAMEIX_MIN, ocap = x->cap;
	uint32_t *old = x->slot;

	while (cap < 2 * (x->n + 1))
		cap *= 2;
	if (cap == x->cap)
		return NSR_OK;
	x->slot = calloc(cap, sizeof(*x->slot));
	if (!x->slot) {
		x->slot = old;
		return NSR_ERR_NOMEM;
	}
	x->cap = cap;
	for (size_t k = 0; k < ocap; k++)
		if (old[k]) {
			size_t j = item_home(x, old[k] - 1);

			while (x->slot[j])
				j = (j + 1) & (cap - 1);
			x->slot[j] = old[k];
		}
	free(old);
	return NSR_OK;
}

/* nsr_nameix_add - index item i under its name (which no indexed item
 * has): NSR_OK, NSR_ERR_NOMEM (growing) or NSR_ERR_INVAL (i past
 * NSR_NAMEIX_MAX), the index then unchanged. */
int nsr_nameix_add(struct nsr_nameix *x, size_t i)
{
	size_t k;
	int rc;

	if (i >= NSR_NAMEIX_MAX || x->n >= NSR_NAMEIX_MAX)
		return NSR_ERR_INVAL;
	rc = grow(x);
	if (rc != NSR_OK)
		return rc;
	for (k = item_home(x, i); x->slot[k]; k = (k + 1) & (x->cap - 1))
		;
	x->slot[k] = (uint32_t)(i + 1);
	x->n++;
	return NSR_OK;
}

/* nsr_nameix_del - item i leaves the index (nothing when it is not in):
 * the entries after its slot in the run move back where their home
 * slots allow (invariant 2). */
void nsr_nameix_del(struct nsr_nameix *x, size_t i)
{
	size_t k = slot_of(x, i), j = k;

	if (k == x->cap)
		return;
	x->slot[k] = 0;
	x->n--;
	for (;;) {
		size_t h;

		j = (j + 1) & (x->cap - 1);
		if (!x->slot[j])
			return;
		h = item_home(x, x->slot[j] - 1);
		/* It moves unless its home is cyclically within (k, j]. */
		if ((j > k && (h <= k || h > j)) ||
		    (j < k && h <= k && h > j)) {
			x->slot[k] = x->slot[j];
			x->slot[j] = 0;
			k = j;
		}
	}
}

/* nsr_nameix_move - item from (indexed, its name unchanged) is now item
 * to, a number no indexed item has. */
void nsr_nameix_move(struct nsr_nameix *x, size_t from, size_t to)
{
	size_t k = slot_of(x, from);

	if (k != x->cap && to < NSR_NAMEIX_MAX)
		x->slot[k] = (uint32_t)(to + 1);
}
