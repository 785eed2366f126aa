/*
 * tally.h - counts of nsrd's live sessions by name (a client, a group, a
 * device, a device's mover), kept as sessions come and go, so that
 * admitting a save reads its client's, group's and device's load
 * without a pass over the session table (which costs a cache miss per
 * slot: a pass over 1,024 slots took longer than the rest of an
 * admission under the RPC mutex).  No daemon state: unit-tested in
 * tests/unit/nsrd.
 *
 * A tally is a hash table of counted names.  Each holder of a count
 * keeps the node it got and gives that node back, whatever the name it
 * counted has become since; a node goes when its count reaches 0, so
 * the table holds only names with live sessions.
 *
 * Invariants:
 *  1. a node's count is the number of tally_get calls that returned it
 *     minus the tally_put calls given it, and is >= 1 while it is in the
 *     table;
 *  2. at most one node per name;
 *  3. total is the sum of the counts.
 */
#ifndef NSRD_TALLY_H
#define NSRD_TALLY_H

#include <stddef.h>

struct tally_node {
	char *name;
	unsigned count;
	struct tally_node *next; /* in its bucket */
};

struct tally {
	struct tally_node **b;
	size_t nb;    /* buckets, a power of 2 */
	size_t nodes; /* names held */
	size_t total; /* invariant 3 */
};

/* tally_init - an empty tally of nb buckets (rounded up to a power of
 * 2).  0, or -1 when out of memory. */
int tally_init(struct tally *t, size_t nb);
/* tally_free - release every node (NULL buckets are fine). */
void tally_free(struct tally *t);
/* tally_get - one more count of name: its node (made if new), to give
 * back with tally_put; NULL when out of memory (nothing counted). */
struct tally_node *tally_get(struct tally *t, const char *name);
/* tally_put - one count fewer of the node tally_get gave (NULL is fine);
 * the node goes when it reaches 0. */
void tally_put(struct tally *t, struct tally_node *n);
/* tally_count - how many counts name has now (0 when none). */
unsigned tally_count(const struct tally *t, const char *name);
/* tally_each - fn for every counted name, in no order. */
void tally_each(const struct tally *t,
		void (*fn)(void *ctx, const char *name, unsigned count),
		void *ctx);

#endif /* NSRD_TALLY_H */
