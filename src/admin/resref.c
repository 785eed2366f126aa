/*
 * resref.c - references between resources (part of resdb, resdb.h): a
 * client names its groups, schedule, pool and policies, a group its
 * schedule and clone pool, a pool its groups, label template and
 * devices.  A change that names a resource that does not exist is
 * refused; so is deleting (or renaming) a resource something names,
 * with the names of the users.  Names compare exactly, as queries do.
 * Two enabled Backup pools whose selection criteria could both claim one
 * save (nsrd's pool.c would have to break the tie by name) are refused
 * too, naming the other pool.
 *
 * Invariant: with opts->refs, every reference in refs[] made through
 * this database names an existing resource when the change is stored
 * (resources loaded from disk are not re-checked: the database stays
 * loadable whatever an editor did to its files).
 */
#include "nsr/compat.h"

#include <strings.h>

#include "nsr/access.h"
#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/glob.h"
#include "nsr/resdb.h"

/* Who names what: attr of a resource of type names a resource of
 * target type. */
static const struct {
	const char *type, *attr, *target;
} refs[] = {
	{ "NSR client", "group", "NSR group" },
	{ "NSR client", "schedule", "NSR schedule" },
	{ "NSR client", "pool", "NSR pool" },
	{ "NSR client", "browse policy", "NSR policy" },
	{ "NSR client", "retention policy", "NSR policy" },
	{ "NSR group", "schedule", "NSR schedule" },
	{ "NSR group", "clone pool", "NSR pool" },
	{ "NSR pool", "groups", "NSR group" },
	{ "NSR pool", "label template", "NSR label" },
	{ "NSR pool", "devices", "NSR device" },
};

/* Users named in one "in use" message at most. */
#define RESREF_MAX_USERS 5

/* exists - is there a resource of type named name? */
static int exists(const struct nsr_resdb *db, const char *type,
		  const char *name)
{
	struct nsr_res *q = nsr_res_new();
	long i = -1;

	if (q && nsr_res_set1(q, "type", type) == NSR_OK &&
	    nsr_res_set1(q, "name", name) == NSR_OK)
		i = nsr_resdb_find(db, q, 0);
	nsr_res_free(q);
	return i >= 0;
}

/* check_targets - every reference r makes names an existing resource. */
static int check_targets(const struct nsr_resdb *db, const struct nsr_res *r,
			 struct nsr_buf *why)
{
	const char *type = nsr_res_type(r), *name = nsr_res_get(r, "name");

	for (size_t k = 0; k < NSR_ARRAY_SIZE(refs); k++) {
		long i;

		if (!nsr_res_name_eq(type, refs[k].type))
			continue;
		i = nsr_res_find(r, refs[k].attr);
		for (size_t j = 0; i >= 0 &&
				   j < nsr_res_attr_nvalues(r, (size_t)i);
		     j++) {
			const char *v = nsr_res_attr_value(r, (size_t)i, j);

			if (!*v || exists(db, refs[k].target, v))
				continue;
			if (why)
				nsr_buf_addf(why, "%s %s: %s '%s' does not "
					     "exist; create it first "
					     "(create type: %s; name: %s) "
					     "or name one that exists",
					     refs[k].type, name ? name : "",
					     refs[k].attr, v, refs[k].target,
					     v);
			return NSR_ERR_NOTFOUND;
		}
	}
	return NSR_OK;
}

/* names - does attribute attr of o have the value name? */
static int names(const struct nsr_res *o, const char *attr, const char *name)
{
	long i = nsr_res_find(o, attr);

	for (size_t j = 0; i >= 0 && j < nsr_res_attr_nvalues(o, (size_t)i);
	     j++)
		if (strcmp(nsr_res_attr_value(o, (size_t)i, j), name) == 0)
			return 1;
	return 0;
}

/* check_users - nothing names old (going away or renamed). */
static int check_users(const struct nsr_resdb *db, const struct nsr_res *old,
		       struct nsr_buf *why)
{
	const char *type = nsr_res_type(old), *name = nsr_res_get(old, "name");
	size_t users = 0;

	if (!name || !*name)
		return NSR_OK;
	for (size_t i = 0; i < nsr_resdb_count(db); i++) {
		const struct nsr_res *o = nsr_resdb_at(db, i);

		for (size_t k = 0; k < NSR_ARRAY_SIZE(refs); k++) {
			if (!nsr_res_name_eq(type, refs[k].target) ||
			    !nsr_res_name_eq(nsr_res_type(o), refs[k].type) ||
			    !names(o, refs[k].attr, name))
				continue;
			if (why && users == 0)
				nsr_buf_addf(why, "%s '%s' is in use by",
					     type, name);
			if (why && users < RESREF_MAX_USERS)
				nsr_buf_addf(why, "%s %s %s (%s)",
					     users ? "," : "", refs[k].type,
					     nsr_res_get(o, "name")
						     ? nsr_res_get(o, "name")
						     : "?",
					     refs[k].attr);
			users++;
		}
	}
	if (!users)
		return NSR_OK;
	if (why && users > RESREF_MAX_USERS)
		nsr_buf_addf(why, " and %zu more",
			     users - RESREF_MAX_USERS);
	if (why)
		nsr_buf_addstr(why, "; change those first");
	return NSR_ERR_BUSY;
}

/* The pool selection criteria as daemons/nsrd/pool.c ranks them: a save
 * matches a pool when every criterion the pool sets holds the save's
 * value (shell wildcards in save sets; the others without case). */
static const struct {
	const char *attr;
	int glob;
} criteria[] = {
	{ "groups", 0 },
	{ "clients", 0 },
	{ "save sets", 1 },
	{ "levels", 0 },
};

/* selects - does pool p take part in pool selection (enabled, Backup)? */
static int selects(const struct nsr_res *p)
{
	const char *type = nsr_res_get(p, "pool type");
	const char *en = nsr_res_get(p, "enabled");

	return nsr_res_name_eq(nsr_res_type(p), "NSR pool") &&
	       (!type || strcasecmp(type, "Backup") == 0) &&
	       (!en || strcasecmp(en, "No") != 0);
}

/* is_set - does p give attr a non-empty value? */
static int is_set(const struct nsr_res *p, const char *attr)
{
	long i = nsr_res_find(p, attr);

	for (size_t j = 0; i >= 0 && j < nsr_res_attr_nvalues(p, (size_t)i);
	     j++)
		if (*nsr_res_attr_value(p, (size_t)i, j))
			return 1;
	return 0;
}

/* common_value - a value of attr of a that one save's value could match
 * together with one of b's (the same value, or for save sets two
 * patterns some name matches both of: "/d*" and "*a", nsr_glob_overlap),
 * or NULL. */
static const char *common_value(const struct nsr_res *a,
				const struct nsr_res *b, const char *attr,
				int glob)
{
	long ia = nsr_res_find(a, attr), ib = nsr_res_find(b, attr);

	for (size_t j = 0; ia >= 0 && ib >= 0 &&
			   j < nsr_res_attr_nvalues(a, (size_t)ia);
	     j++) {
		const char *va = nsr_res_attr_value(a, (size_t)ia, j);

		for (size_t k = 0; *va &&
				   k < nsr_res_attr_nvalues(b, (size_t)ib);
		     k++) {
			const char *vb = nsr_res_attr_value(b, (size_t)ib, k);

			if (!*vb)
				continue;
			if (glob ? strcmp(va, vb) == 0 ||
					   nsr_glob_overlap(va, vb)
				 : strcasecmp(va, vb) == 0)
				return va;
		}
	}
	return NULL;
}

/* same_claim - could one save match pools a and b at the same rank (the
 * same criteria set, each with a value in common)?  desc gets those
 * values ("groups Nightly; levels full"). */
static int same_claim(const struct nsr_res *a, const struct nsr_res *b,
		      struct nsr_buf *desc)
{
	size_t nset = 0;

	for (size_t k = 0; k < NSR_ARRAY_SIZE(criteria); k++) {
		int sa = is_set(a, criteria[k].attr);
		const char *v;

		if (sa != is_set(b, criteria[k].attr))
			return 0;
		if (!sa)
			continue;
		v = common_value(a, b, criteria[k].attr, criteria[k].glob);
		if (!v)
			return 0;
		nsr_buf_addf(desc, "%s%s %s", nset ? "; " : "",
			     criteria[k].attr, v);
		nset++;
	}
	return nset > 0;
}

/* check_pool_criteria - no other pool in selection claims the saves pool
 * p (new or changed; old = its previous version) claims. */
static int check_pool_criteria(const struct nsr_resdb *db,
			       const struct nsr_res *old,
			       const struct nsr_res *p, struct nsr_buf *why)
{
	const char *name = nsr_res_get(p, "name");
	struct nsr_buf desc;
	int rc = NSR_OK;

	if (!selects(p))
		return NSR_OK;
	nsr_buf_init(&desc, 0);
	for (size_t i = 0; rc == NSR_OK && i < nsr_resdb_count(db); i++) {
		const struct nsr_res *o = nsr_resdb_at(db, i);
		const char *oname = nsr_res_get(o, "name");

		nsr_buf_reset(&desc);
		if (o == old || !selects(o) || !same_claim(p, o, &desc))
			continue;
		if (why)
			nsr_buf_addf(why, "NSR pool %s: its selection "
				     "criteria (%s) claim the same saves as "
				     "those of pool %s, so a save could go "
				     "to either; make the groups, clients, "
				     "save sets or levels of one of them "
				     "differ, or disable one (enabled: No)",
				     name ? name : "", desc.data,
				     oname ? oname : "?");
		rc = NSR_ERR_EXISTS;
	}
	nsr_buf_release(&desc);
	return rc;
}

/* Access lists (access.h): every value must be a valid user@host entry,
 * so a typing error never silently admits nobody, or everybody. */
static const struct {
	const char *type, *attr;
} access_attrs[] = {
	{ "NSR", "administrator" },
	{ "NSR client", "remote access" },
};

/* check_access - the access list attributes of r hold valid entries. */
static int check_access(const struct nsr_res *r, struct nsr_buf *why)
{
	const char *type = nsr_res_type(r);

	for (size_t i = 0; type && i < NSR_ARRAY_SIZE(access_attrs); i++) {
		long a;

		if (strcmp(type, access_attrs[i].type) != 0)
			continue;
		a = nsr_res_find(r, access_attrs[i].attr);
		for (size_t j = 0;
		     a >= 0 && j < nsr_res_attr_nvalues(r, (size_t)a); j++) {
			const char *v = nsr_res_attr_value(r, (size_t)a, j);

			if (nsr_access_check_entry(v, NULL) == NSR_OK)
				continue;
			nsr_buf_addf(why, "%s: ", access_attrs[i].attr);
			return nsr_access_check_entry(v, why);
		}
	}
	return NSR_OK;
}

/* nsr_resdb_check_refs - the reference rules for one change. */
int nsr_resdb_check_refs(const struct nsr_resdb *db, enum nsr_resdb_op op,
			 const struct nsr_res *old,
			 const struct nsr_res *new_res, struct nsr_buf *why)
{
	int rc = NSR_OK;

	if (new_res)
		rc = check_access(new_res, why);
	if (new_res && rc == NSR_OK)
		rc = check_targets(db, new_res, why);
	if (rc == NSR_OK && new_res)
		rc = check_pool_criteria(db, old, new_res, why);
	if (rc == NSR_OK && old &&
	    (op == NSR_RESDB_DELETE ||
	     (new_res && nsr_res_get(old, "name") &&
	      (!nsr_res_get(new_res, "name") ||
	       strcmp(nsr_res_get(old, "name"),
		      nsr_res_get(new_res, "name")) != 0))))
		rc = check_users(db, old, why);
	return rc;
}
