/*
 * nsradmin_resdb.c - the nsradmin backend over a local resource database
 * (nsradmin -d resdir, used while the daemons are down).
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/nsradmin.h"
#include "nsr/res.h"
#include "nsr/resdb.h"

/* rdb_list - copies of the matching resources. */
static int rdb_list(void *ctx, const struct nsr_res *query,
		    struct nsr_res_list *out, struct nsr_buf *why)
{
	const struct nsr_resdb *db = ctx;
	long i;

	NSR_UNUSED(why);
	for (i = nsr_resdb_find(db, query, 0); i >= 0;
	     i = nsr_resdb_find(db, query, (size_t)i + 1)) {
		struct nsr_res *c = nsr_res_dup(nsr_resdb_at(db, (size_t)i));

		if (!c || nsr_res_list_take(out, c) != NSR_OK)
			return NSR_ERR_NOMEM;
	}
	return NSR_OK;
}

/* rdb_create - nsr_resdb_create. */
static int rdb_create(void *ctx, const struct nsr_res *r, char **id_out,
		      struct nsr_buf *why)
{
	return nsr_resdb_create(ctx, r, id_out, why);
}

/* rdb_update - nsr_resdb_update. */
static int rdb_update(void *ctx, const char *id, const struct nsr_res *r,
		      struct nsr_buf *why)
{
	return nsr_resdb_update(ctx, id, r, why);
}

/* rdb_remove - nsr_resdb_delete. */
static int rdb_remove(void *ctx, const char *id, struct nsr_buf *why)
{
	return nsr_resdb_delete(ctx, id, why);
}

/* rdb_schema - the database's schema. */
static const struct nsr_res_schema *rdb_schema(void *ctx)
{
	return nsr_resdb_schema(ctx);
}

static const struct nsradmin_ops rdb_ops = {
	rdb_list, rdb_create, rdb_update, rdb_remove, rdb_schema,
};

/* nsradmin_resdb_ops - the backend table. */
const struct nsradmin_ops *nsradmin_resdb_ops(void)
{
	return &rdb_ops;
}
