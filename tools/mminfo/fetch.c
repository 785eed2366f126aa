/*
 * fetch.c - stream query results from nsrmmdbd, optionally sorted.
 *
 * Without an ordering, memory is one batch (MM_BATCH_MAX rows) however
 * many rows match.  With one, every row is kept and sorted with a stable
 * multi-key comparison (ties keep the daemon's order).
 */
#include "nsr/compat.h"

#include <stdlib.h>
#include <string.h>

#include "nsr/cmp.h"
#include "nsr/err.h"
#include "nsr/grow.h"
#include "nsr/mmdb.h"
#include "nsr/mmdb_clnt.h"
#include "nsr/nameix.h"
#include "fetch.h"
#include "rows.h"

#define BATCH MM_BATCH_MAX

/* mminfo_order_valid - only the known letters. */
int mminfo_order_valid(const char *order)
{
	for (const char *p = order; *p; p++)
		if (!strchr("tcnmelR", *p))
			return 0;
	return 1;
}

/* vol_cmp - compare two volumes by the order letters. */
static int vol_cmp(const void *pa, const void *pb, const char *order)
{
	const struct mmdb_volume *a = pa, *b = pb;
	int d = 0;

	for (const char *p = order; *p && !d; p++) {
		switch (*p) {
		case 'm': d = strcmp(a->name, b->name); break;
		case 'e': d = NSR_CMP(a->volretent, b->volretent); break;
		case 'l': d = NSR_CMP(a->written, b->written); break;
		case 't': d = NSR_CMP(a->labeled, b->labeled); break;
		default: break;
		}
	}
	return d;
}

/*
 * A kind of element mminfo fetches: save set rows or volumes.  Volumes
 * are kept in arrival order as they are; sorting sorts their indexes,
 * with the index as the last key, so -o is stable.  Rows are kept in
 * their compact form (rows.h) and sorted there.
 */
struct kind {
	size_t size;
	int (*cmp)(const void *a, const void *b, const char *order);
	int (*emit)(void *fn, void *arg, const void *elem);
};

struct kept {
	char *items;	/* n elements of kind->size, in arrival order */
	size_t *idx;	/* sort order */
	size_t n, cap;
	const struct kind *k;
	const char *order;
	struct mminfo_rows rows; /* rows kept (k is row_kind) */
	struct nsr_nameix names; /* volumes kept, by name (mminfo -m of
				  * save set rows) */
};

/* The typed callbacks, boxed so fetch() can carry either. */
struct row_cb {
	mminfo_row_fn fn;
};

struct vol_cb {
	mminfo_vol_fn fn;
};

/* emit_row, emit_vol - hand one element to the typed callback. */
static int emit_row(void *cb, void *arg, const void *e)
{
	return ((const struct row_cb *)cb)->fn(arg, e);
}

/* emit_vol - see emit_row. */
static int emit_vol(void *cb, void *arg, const void *e)
{
	return ((const struct vol_cb *)cb)->fn(arg, e);
}

static const struct kind row_kind = {sizeof(struct mmdb_ss_row), NULL,
				     emit_row};
static const struct kind vol_kind = {sizeof(struct mmdb_volume), vol_cmp,
				     emit_vol};

/* keep - append one element (copied) to k. */
static int keep(struct kept *k, const void *elem)
{
	if (k->k == &row_kind)
		return mminfo_rows_add(&k->rows, elem);
	if (nsr_grow((void **)&k->items, k->n, &k->cap, k->k->size, 1024) !=
	    NSR_OK)
		return NSR_ERR_NOMEM;
	memcpy(k->items + k->n * k->k->size, elem, k->k->size);
	k->n++;
	return NSR_OK;
}

/* idx_cmp - order two kept elements; ties keep arrival order. */
static int idx_cmp(const void *pa, const void *pb, void *arg)
{
	const struct kept *k = arg;
	size_t ia = *(const size_t *)pa, ib = *(const size_t *)pb;
	int d = k->k->cmp(k->items + ia * k->k->size,
			  k->items + ib * k->k->size, k->order);

	if (strchr(k->order, 'R'))
		d = -d;
	return d ? d : NSR_CMP(ia, ib);
}

/* flush_kept - sort (if an order is given) and emit every kept element. */
static int flush_kept(struct kept *k, void *fn, void *arg)
{
	int rc = NSR_OK;

	if (k->k == &row_kind)
		return mminfo_rows_emit(&k->rows, k->order,
					((struct row_cb *)fn)->fn, arg);
	k->idx = calloc(k->n ? k->n : 1, sizeof(size_t));
	if (!k->idx)
		return NSR_ERR_NOMEM;
	for (size_t i = 0; i < k->n; i++)
		k->idx[i] = i;
	if (k->order && *k->order)
		qsort_r(k->idx, k->n, sizeof(size_t), idx_cmp, k);
	for (size_t i = 0; !rc && i < k->n; i++)
		rc = k->k->emit(fn, arg, k->items + k->idx[i] * k->k->size);
	return rc;
}

/* vol_name - nsr_nameix_name_fn of the kept volumes: volume i's name. */
static const char *vol_name(const void *ctx, size_t i, size_t *len)
{
	const struct kept *k = ctx;
	const struct mmdb_volume *v =
		(const void *)(k->items + i * k->k->size);

	*len = strlen(v->name);
	return v->name;
}

/* has_volume - volume name already kept (a row per save set and volume
 * comes: looked up by name, not by a scan of the kept volumes). */
static int has_volume(const struct kept *k, const char *name)
{
	return nsr_nameix_find(&k->names, name, strlen(name)) !=
	       NSR_NAMEIX_NONE;
}

/* keep_volume - keep volume v (not kept yet), indexed by name. */
static int keep_volume(struct kept *k, const struct mmdb_volume *v)
{
	int rc = keep(k, v);

	if (rc == NSR_OK) {
		rc = nsr_nameix_add(&k->names, k->n - 1);
		if (rc != NSR_OK)
			k->n--; /* not kept after all */
	}
	return rc;
}

/* fetch - stream (no order) or collect, sort and emit what a query gives:
 * save set rows, or with volumes set, volumes; with of_rows, the distinct
 * volumes holding the matching save set rows. */
static int fetch(struct mmdb_clnt *c, const char *query, int64_t now,
		 const char *order, int volumes, int of_rows, void *fn,
		 void *arg, size_t *count)
{
	const struct kind *kd = volumes && !of_rows ? &vol_kind : &row_kind;
	struct kept k = {.k = of_rows ? &vol_kind : kd, .order = order};
	int keep_all = of_rows || (order && *order), done = 0, rc;
	void *batch = calloc(BATCH, kd->size);
	size_t n;

	nsr_nameix_init(&k.names, vol_name, &k);
	mminfo_rows_init(&k.rows);
	*count = 0;
	if (!batch)
		return NSR_ERR_NOMEM;
	rc = mmdb_clnt_query_open(c, query, volumes && !of_rows, now);
	while (!rc && !done) {
		rc = volumes && !of_rows
			     ? mmdb_clnt_query_next_vols(c, batch, BATCH, &n,
							 &done)
			     : mmdb_clnt_query_next_rows(c, batch, BATCH, &n,
							 &done);
		for (size_t i = 0; !rc && i < n; i++) {
			const void *e = (const char *)batch + i * kd->size;

			if (of_rows) {
				const struct mmdb_ss_row *row = e;

				if (row->has_volume &&
				    !has_volume(&k, row->vol.name))
					rc = keep_volume(&k, &row->vol);
				continue;
			}
			rc = keep_all ? keep(&k, e) : kd->emit(fn, arg, e);
			(*count)++;
		}
	}
	if (!rc && keep_all)
		rc = flush_kept(&k, fn, arg);
	if (!rc && of_rows)
		*count = k.n;
	free(k.items);
	free(k.idx);
	nsr_nameix_free(&k.names);
	mminfo_rows_free(&k.rows);
	free(batch);
	return rc;
}

/* mminfo_fetch_rows - stream or collect+sort save set rows. */
int mminfo_fetch_rows(struct mmdb_clnt *c, const char *query, int64_t now,
		      const char *order, mminfo_row_fn fn, void *arg,
		      size_t *count)
{
	struct row_cb f = {fn};

	return fetch(c, query, now, order, 0, 0, &f, arg, count);
}

/* mminfo_fetch_vols - stream or collect+sort volumes. */
int mminfo_fetch_vols(struct mmdb_clnt *c, const char *query, int64_t now,
		      const char *order, mminfo_vol_fn fn, void *arg,
		      size_t *count)
{
	struct vol_cb f = {fn};

	return fetch(c, query, now, order, 1, 0, &f, arg, count);
}

/* mminfo_fetch_vols_of_rows - the volumes holding the save set rows. */
int mminfo_fetch_vols_of_rows(struct mmdb_clnt *c, const char *query,
			      int64_t now, const char *order,
			      mminfo_vol_fn fn, void *arg, size_t *count)
{
	struct vol_cb f = {fn};

	return fetch(c, query, now, order, 1, 1, &f, arg, count);
}
