/*
 * expire.c - browse and retention times of new save sets (expiry.h
 * rules 1-3, from the client's and the pool's time policies).
 */
#include "nsr/compat.h"

#include <string.h>

#include "nsr/clock.h"
#include "nsr/err.h"
#include "nsr/expiry.h"
#include "nsr/log.h"
#include "nsr/mmdb.h"
#include "nsr/res.h"
#include "nsrd.h"

/* find_policy - the time policy called name: an NSR policy resource, else
 * a preconfigured one.  NSR_OK, or NSR_ERR_NOTFOUND (logged: the caller
 * falls back to NetWorker's default). */
static int find_policy(struct nsrd *n, const char *name, const char *whose,
		       struct nsr_expiry_policy *p)
{
	const struct nsr_res *r = nsrd_res_find1(n, "NSR policy", name);

	if (r && nsr_expiry_policy_parse(nsr_res_get(r, "period"),
					 nsr_res_get(r, "number of periods"),
					 p) == NSR_OK)
		return NSR_OK;
	if (!r && nsr_expiry_builtin(name, p) == NSR_OK)
		return NSR_OK;
	nsr_warn("%s names time policy '%s', which %s: using the default "
		 "(create it with nsradmin: create type: NSR policy; name: "
		 "%s; period: Weeks; number of periods: 2)", whose, name,
		 r ? "has a bad period" : "does not exist", name);
	return NSR_ERR_NOTFOUND;
}

/* nsrd_expiry_new - set ss->ssbrowse and ss->ssretent of a new save set
 * of client in pool: the save's explicit times (0 = none), else the
 * client's browse and retention policies and the pool's retention
 * policy if longer, counted from now on nsrd's clock. */
void nsrd_expiry_new(struct nsrd *n, const char *client, const char *pool,
		     int64_t browse_time, int64_t retention_time,
		     struct mmdb_saveset *ss)
{
	const struct nsr_res *c = nsrd_res_find1(n, "NSR client", client);
	const struct nsr_res *pr = nsrd_res_find1(n, "NSR pool", pool);
	struct nsr_expiry_policy b, r, p;
	struct nsr_expiry_in in;
	const char *v;
	char whose[300];

	memset(&in, 0, sizeof(in));
	in.base = (int64_t)nsr_clock_now();
	in.browse_time = browse_time;
	in.retention_time = retention_time;
	snprintf(whose, sizeof(whose), "client %s", client);
	v = c ? nsr_res_get(c, "browse policy") : NULL;
	if (v && *v && find_policy(n, v, whose, &b) == NSR_OK)
		in.browse = &b;
	v = c ? nsr_res_get(c, "retention policy") : NULL;
	if (v && *v && find_policy(n, v, whose, &r) == NSR_OK)
		in.retention = &r;
	snprintf(whose, sizeof(whose), "pool %s", pool);
	v = pr ? nsr_res_get(pr, "retention policy") : NULL;
	if (v && *v && find_policy(n, v, whose, &p) == NSR_OK)
		in.pool_retention = &p;
	nsr_expiry_times(&in, &ss->ssbrowse, &ss->ssretent);
}
