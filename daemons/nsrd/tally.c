/*
 * tally.c - counted names with their nodes handed to the holders
 * (tally.h): a chained hash table of FNV-1a hashes.
 */
#include "nsr/compat.h"

#include <stdint.h>

#include "nsr/fnv.h"

#include "tally.h"

/* hash - FNV-1a of name. */
static uint64_t hash(const char *name)
{
	return nsr_fnv1a_str(name);
}

/* tally_init - see tally.h. */
int tally_init(struct tally *t, size_t nb)
{
	size_t n = 1;

	while (n < nb)
		n *= 2;
	t->b = calloc(n, sizeof(*t->b));
	t->nb = t->b ? n : 0;
	t->nodes = 0;
	t->total = 0;
	return t->b ? 0 : -1;
}

/* tally_free - see tally.h. */
void tally_free(struct tally *t)
{
	for (size_t i = 0; i < t->nb; i++)
		while (t->b[i]) {
			struct tally_node *n = t->b[i];

			t->b[i] = n->next;
			free(n->name);
			free(n);
		}
	free(t->b);
	t->b = NULL;
	t->nb = t->nodes = t->total = 0;
}

/* find - the node of name in its bucket, or NULL; *slot the link that
 * points at it (or the bucket's last link). */
static struct tally_node *find(const struct tally *t, const char *name,
			       struct tally_node ***slot)
{
	struct tally_node **l = &t->b[hash(name) & (t->nb - 1)];

	while (*l && strcmp((*l)->name, name) != 0)
		l = &(*l)->next;
	if (slot)
		*slot = l;
	return *l;
}

/* tally_get - see tally.h. */
struct tally_node *tally_get(struct tally *t, const char *name)
{
	struct tally_node **l, *n;

	if (!t->b)
		return NULL;
	n = find(t, name, &l);
	if (!n) {
		n = calloc(1, sizeof(*n));
		if (!n || !(n->name = strdup(name))) {
			free(n);
			return NULL;
		}
		*l = n;
		t->nodes++;
	}
	n->count++;
	t->total++;
	return n;
}

/* tally_put - see tally.h. */
void tally_put(struct tally *t, struct tally_node *n)
{
	struct tally_node **l;

	if (!n)
		return;
	t->total--;
	if (--n->count > 0)
		return;
	find(t, n->name, &l);
	*l = n->next; /* invariant 2: *l is n */
	t->nodes--;
	free(n->name);
	free(n);
}

/* tally_count - see tally.h. */
unsigned tally_count(const struct tally *t, const char *name)
{
	const struct tally_node *n = t->b ? find(t, name, NULL) : NULL;

	return n ? n->count : 0;
}

/* tally_each - see tally.h. */
void tally_each(const struct tally *t,
		void (*fn)(void *ctx, const char *name, unsigned count),
		void *ctx)
{
	for (size_t i = 0; i < t->nb; i++)
		for (const struct tally_node *n = t->b[i]; n; n = n->next)
			fn(ctx, n->name, n->count);
}
