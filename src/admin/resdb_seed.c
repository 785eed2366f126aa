/*
 * resdb_seed.c - the preconfigured resources a new server starts with:
 * the server resource, Default pools and label templates, the Default
 * group and schedule, and the classic time policies.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/res.h"
#include "nsr/resdb.h"

/* One preconfigured resource as attribute-list text; %s = server name. */
static const char *const seeds[] = {
	"type: NSR label; name: Default; fields: %s, 001-999; separator: .",
	"type: NSR label; name: Default Clone; fields: %s.clone, 001-999; "
	"separator: .",
	"type: NSR label; name: Archive; fields: %s.archive, 001-999; "
	"separator: .",
	"type: NSR label; name: Archive Clone; "
	"fields: %s.archive.clone, 001-999; separator: .",
	"type: NSR pool; name: Default; pool type: Backup; "
	"label template: Default",
	"type: NSR pool; name: Default Clone; pool type: Backup Clone; "
	"label template: Default Clone",
	"type: NSR pool; name: Archive; pool type: Archive; "
	"label template: Archive; store index entries: No",
	"type: NSR pool; name: Archive Clone; pool type: Archive Clone; "
	"label template: Archive Clone; store index entries: No",
	"type: NSR group; name: Default",
	"type: NSR schedule; name: Default; period: Week; "
	"action: full incr incr incr incr incr incr",
	"type: NSR policy; name: Week; period: Weeks; number of periods: 1",
	"type: NSR policy; name: Month; period: Months; number of periods: 1",
	"type: NSR policy; name: Quarter; period: Months; "
	"number of periods: 3",
	"type: NSR policy; name: Year; period: Years; number of periods: 1",
	"type: NSR policy; name: Decade; period: Years; "
	"number of periods: 10",
};

/* exists - 1 if a resource of r's type with r's name is stored (for the
 * singleton server resource: any of its type). */
static int exists(const struct nsr_resdb *db, const struct nsr_res *r,
		  int singleton)
{
	struct nsr_res *q = nsr_res_new();
	int found;

	if (!q)
		return -1;
	if (nsr_res_set1(q, "type", nsr_res_type(r)) != NSR_OK ||
	    (!singleton && nsr_res_set1(q, "name", nsr_res_get(r, "name")) !=
	     NSR_OK)) {
		nsr_res_free(q);
		return -1;
	}
	found = nsr_resdb_find(db, q, 0) >= 0;
	nsr_res_free(q);
	return found;
}

/* seed_one - create one resource from text unless it exists. */
static int seed_one(struct nsr_resdb *db, const char *text, int singleton,
		    struct nsr_buf *why)
{
	struct nsr_res *r = NULL;
	int rc, e;

	rc = nsr_res_parse_attrs(text, &r, NULL);
	if (rc != NSR_OK)
		return rc;
	e = exists(db, r, singleton);
	if (e < 0)
		rc = NSR_ERR_NOMEM;
	else if (!e)
		rc = nsr_resdb_create(db, r, NULL, why);
	nsr_res_free(r);
	return rc;
}

/* nsr_resdb_seed - create the missing preconfigured resources. */
int nsr_resdb_seed(struct nsr_resdb *db, const char *server_name,
		   struct nsr_buf *why)
{
	struct nsr_buf text;
	int rc;

	nsr_buf_init(&text, 0);
	rc = nsr_buf_addstr(&text, "type: NSR; name: ");
	if (rc == NSR_OK)
		rc = nsr_res_print_value(server_name, &text);
	if (rc == NSR_OK)
		rc = seed_one(db, text.data, 1, why);
	for (size_t i = 0; i < NSR_ARRAY_SIZE(seeds) && rc == NSR_OK; i++) {
		nsr_buf_reset(&text);
		rc = nsr_buf_addf(&text, seeds[i], server_name);
		if (rc == NSR_OK)
			rc = seed_one(db, text.data, 0, why);
	}
	nsr_buf_release(&text);
	return rc;
}
