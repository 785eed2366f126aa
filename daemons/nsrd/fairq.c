/*
 * fairq.c - nsrd's fair admission queue (fairq.h).
 *
 * One call counts the sessions per client and per group in a small hash
 * table (running ones and granted waits alike), then hands out free
 * server slots one at a time to the least served eligible wait.
 *
 * Invariants:
 *  1. after a call, running plus granted sessions never exceed the server
 *     limit, nor any group's (when it has one) or client's limit, unless
 *     they did before the call (a limit lowered while sessions run): a
 *     call never grants past a limit;
 *  2. a grant is never taken back here (the caller drops it when the
 *     wait ends or becomes a session);
 *  3. among eligible waits the one granted first has the fewest sessions
 *     in its group, then in its client, then the oldest ticket, so a
 *     client or group with many waits cannot starve one with few;
 *  4. nothing changes when memory runs out (-1).
 */
#include <stdlib.h>
#include <string.h>

#include "nsr/fnv.h"

#include "fairq.h"

struct slot {
	const char *name; /* NULL = free */
	long load;	  /* running + granted */
	long limit;	  /* -1 = not looked up yet; 0 = none */
};

struct table {
	struct slot *s;
	size_t cap; /* a power of two */
};

/* hash - FNV-1a of a name. */
static size_t hash(const char *p)
{
	return (size_t)nsr_fnv1a_str(p);
}

/* table_init - room for n names at most half full; 0 or -1 (memory). */
static int table_init(struct table *t, size_t n)
{
	t->cap = 16;
	while (t->cap < 2 * n + 2)
		t->cap *= 2;
	t->s = calloc(t->cap, sizeof(*t->s));
	return t->s ? 0 : -1;
}

/* table_get - the slot of name, made on first use (never full). */
static struct slot *table_get(struct table *t, const char *name)
{
	size_t i = hash(name) & (t->cap - 1);

	while (t->s[i].name && strcmp(t->s[i].name, name) != 0)
		i = (i + 1) & (t->cap - 1);
	if (!t->s[i].name) {
		t->s[i].name = name;
		t->s[i].limit = -1;
	}
	return &t->s[i];
}

/* Counts of one call: per client and per group. */
struct counts {
	struct table clients, groups;
	long total;
};

/* counts_make - count run and the granted waits; 0 or -1 (memory). */
static int counts_make(struct counts *c, const struct fairq_item *run,
		       size_t nrun, const struct fairq_item *wait,
		       size_t nwait, size_t extra)
{
	size_t n = nrun + nwait + extra;

	c->total = 0;
	c->groups.s = NULL;
	if (table_init(&c->clients, n) != 0 || table_init(&c->groups, n) != 0)
		return -1;
	for (size_t i = 0; i < nrun + nwait; i++) {
		const struct fairq_item *it = i < nrun ? &run[i]
						       : &wait[i - nrun];

		if (i >= nrun && !it->granted)
			continue;
		table_get(&c->clients, it->client)->load++;
		table_get(&c->groups, it->group)->load++;
		c->total++;
	}
	return 0;
}

/* counts_free - release the tables. */
static void counts_free(struct counts *c)
{
	free(c->clients.s);
	free(c->groups.s);
}

/* limit_of - a slot's limit, looked up once. */
static long limit_of(struct slot *s, const struct fairq_limits *lim,
		     int group)
{
	if (s->limit < 0) {
		if (group)
			s->limit = s->name[0] && lim->group_limit
					   ? lim->group_limit(lim->arg, s->name)
					   : 0;
		else
			s->limit = lim->client_limit
					   ? lim->client_limit(lim->arg,
							       s->name)
					   : 0;
		if (s->limit < 0)
			s->limit = 0;
	}
	return s->limit;
}

/* room - one more session in client slot cs and group slot gs fits. */
static int room(const struct slot *cs, const struct slot *gs)
{
	return (cs->limit == 0 || cs->load < cs->limit) &&
	       (gs->limit == 0 || gs->load < gs->limit);
}

/* fairq_fits - one more session of client in group within the limits? */
int fairq_fits(const struct fairq_item *run, size_t nrun,
	       const struct fairq_item *wait, size_t nwait,
	       const struct fairq_limits *lim, const char *client,
	       const char *group)
{
	struct counts c;
	struct slot *cs, *gs;
	int fit;

	if (counts_make(&c, run, nrun, wait, nwait, 1) != 0) {
		counts_free(&c);
		return -1;
	}
	cs = table_get(&c.clients, client);
	gs = table_get(&c.groups, group);
	limit_of(cs, lim, 0);
	limit_of(gs, lim, 1);
	fit = c.total >= lim->server ? FAIRQ_SERVER
	      : gs->limit && gs->load >= gs->limit ? FAIRQ_GROUP
	      : cs->limit && cs->load >= cs->limit ? FAIRQ_CLIENT
						   : FAIRQ_FITS;
	counts_free(&c);
	return fit;
}

/* better - is wait a (client slot ac, group ac) served before b? */
static int better(const struct fairq_item *a, const struct slot *ac,
		  const struct slot *ag, const struct fairq_item *b,
		  const struct slot *bc, const struct slot *bg)
{
	if (ag->load != bg->load)
		return ag->load < bg->load;
	if (ac->load != bc->load)
		return ac->load < bc->load;
	return a->ticket < b->ticket;
}

/* fairq_grant - hold slots for the least served eligible waits. */
long fairq_grant(const struct fairq_item *run, size_t nrun,
		 struct fairq_item *wait, size_t nwait,
		 const struct fairq_limits *lim)
{
	struct counts c;
	struct slot **cs = NULL, **gs = NULL;
	long granted = 0;

	if (counts_make(&c, run, nrun, wait, nwait, 0) != 0)
		goto nomem;
	cs = calloc(nwait ? nwait : 1, sizeof(*cs));
	gs = calloc(nwait ? nwait : 1, sizeof(*gs));
	if (!cs || !gs)
		goto nomem;
	for (size_t i = 0; i < nwait; i++) {
		cs[i] = table_get(&c.clients, wait[i].client);
		gs[i] = table_get(&c.groups, wait[i].group);
		if (!wait[i].granted) {
			limit_of(cs[i], lim, 0);
			limit_of(gs[i], lim, 1);
		}
	}
	while (c.total < lim->server) {
		long best = -1;

		for (size_t i = 0; i < nwait; i++) {
			if (wait[i].granted || !room(cs[i], gs[i]))
				continue;
			if (best < 0 || better(&wait[i], cs[i], gs[i],
					       &wait[best], cs[best],
					       gs[best]))
				best = (long)i;
		}
		if (best < 0)
			break;
		wait[best].granted = 1;
		cs[best]->load++;
		gs[best]->load++;
		c.total++;
		granted++;
	}
	free(cs);
	free(gs);
	counts_free(&c);
	return granted;
nomem:
	free(cs);
	free(gs);
	counts_free(&c);
	return -1;
}
