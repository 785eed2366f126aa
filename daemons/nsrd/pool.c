/*
 * pool.c - which pool a save writes to when it names none: NetWorker's
 * pool selection criteria.  An enabled NSR pool of type Backup matches a
 * save when each of its criteria that is set holds the save's value (OR
 * within an attribute, AND across them): "groups" its group, "clients"
 * its client, "save sets" its save set name (shell wildcards allowed),
 * "levels" its level (the level asked for; "manual" for an ad hoc save).
 * Among the pools that match, the one whose criteria rank highest wins,
 * group before client before save set before level (NetWorker's
 * precedence), then the one with more criteria, then the first by name;
 * when none matches, the Default pool.  save -b and the client's "pool"
 * attribute come before all of it (session.c).
 *
 * Invariants:
 *  1. a pool with no criteria at all never matches (it is chosen only by
 *     name), so the Default pool, which has none, is only the fallback;
 *  2. the choice depends on the resources alone, not on their order in
 *     the database (ties are broken by name).
 */
#include "nsr/compat.h"

#include <fnmatch.h>
#include <strings.h>

#include "nsrd.h"

/* Precedence weights of the criteria (a higher one always wins). */
static const struct {
	const char *attr;
	unsigned weight;
} criteria[] = {
	{"groups", 8},
	{"clients", 4},
	{"save sets", 2},
	{"levels", 1},
};

/* holds - does attribute attr of pool p (values; wildcards when glob)
 * hold value?  -1 when the attribute is not set. */
static int holds(const struct nsr_res *p, const char *attr,
		 const char *value, int glob)
{
	long i = nsr_res_find(p, attr);
	size_t nv = i >= 0 ? nsr_res_attr_nvalues(p, (size_t)i) : 0;
	int set = 0;

	for (size_t j = 0; j < nv; j++) {
		const char *v = nsr_res_attr_value(p, (size_t)i, j);

		if (!v || !*v)
			continue;
		set = 1;
		if (glob ? fnmatch(v, value, 0) == 0
			 : strcasecmp(v, value) == 0)
			return 1;
	}
	return set ? 0 : -1;
}

/* rank - the precedence rank of pool p for the save, 0 if it does not
 * match (invariant 1); *ncrit gets its number of criteria. */
static unsigned rank(const struct nsr_res *p,
		     const char *const value[NSR_ARRAY_SIZE(criteria)],
		     unsigned *ncrit)
{
	unsigned r = 0;

	*ncrit = 0;
	for (size_t k = 0; k < NSR_ARRAY_SIZE(criteria); k++) {
		int h = holds(p, criteria[k].attr, value[k],
			      strcmp(criteria[k].attr, "save sets") == 0);

		if (h == 0)
			return 0;
		if (h == 1) {
			r += criteria[k].weight;
			(*ncrit)++;
		}
	}
	return r;
}

/* nsrd_pool_select - the pool a save of client's save set name in group
 * (may be "") at level (may be "") writes to, by the pools' selection
 * criteria; "Default" when none matches.  Under the RPC mutex. */
const char *nsrd_pool_select(struct nsrd *n, const char *client,
			     const char *group, const char *name,
			     const char *level)
{
	const char *value[NSR_ARRAY_SIZE(criteria)] = {
		group, client, name, level && *level ? level : "manual"};
	const struct nsr_res *best = NULL;
	unsigned best_rank = 0, best_n = 0;

	for (long i = nsr_resdb_next_of_type(n->res, "NSR pool", -1); i >= 0;
	     i = nsr_resdb_next_of_type(n->res, "NSR pool", i)) {
		const struct nsr_res *p = nsr_resdb_at(n->res, (size_t)i);
		const char *type = nsr_res_get(p, "pool type");
		const char *en = nsr_res_get(p, "enabled");
		unsigned r, nc;

		if ((type && strcasecmp(type, "Backup") != 0) ||
		    (en && strcasecmp(en, "No") == 0))
			continue;
		r = rank(p, value, &nc);
		if (!r || r < best_rank || (r == best_rank && nc < best_n))
			continue;
		if (best && r == best_rank && nc == best_n &&
		    strcasecmp(nsr_res_get(p, "name"),
			       nsr_res_get(best, "name")) >= 0)
			continue;
		best = p;
		best_rank = r;
		best_n = nc;
	}
	return best ? nsr_res_get(best, "name") : "Default";
}
