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

#include "nsr/err.h"
#include "nsr/mmdb.h"
#include "nsr/mmdb_clnt.h"
#include "fetch.h"

#define BATCH MM_BATCH_MAX

/* One kept row with its arrival number (for a stable sort). */
struct kept_row {
	struct mmdb_ss_row row;
	size_t seq;
};

struct kept_vol {
	struct mmdb_volume vol;
	size_t seq;
};

/* mminfo_order_valid - only the known letters. */
int mminfo_order_valid(const char *order)
{
	for (const char *p = order; *p; p++)
		if (!strchr("tcnmelR", *p))
			return 0;
	return 1;
}

/* cmp_u64 - three-way compare. */
static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

/* cmp_i64 - three-way compare. */
static int cmp_i64(int64_t a, int64_t b)
{
	return a < b ? -1 : a > b;
}

/* row_cmp - compare two kept rows by the order letters in arg. */
static int row_cmp(const void *pa, const void *pb, void *arg)
{
	const struct kept_row *a = pa, *b = pb;
	const char *order = arg;
	int rev = strchr(order, 'R') != NULL;
	int d = 0;

	for (const char *p = order; *p && !d; p++) {
		switch (*p) {
		case 't':
			d = cmp_i64(a->row.ss.savetime, b->row.ss.savetime);
			break;
		case 'c':
			d = strcmp(a->row.ss.client, b->row.ss.client);
			break;
		case 'n':
			d = strcmp(a->row.ss.name, b->row.ss.name);
			break;
		case 'm':
			d = strcmp(a->row.vol.name, b->row.vol.name);
			break;
		case 'e':
			d = cmp_i64(a->row.ss.ssretent, b->row.ss.ssretent);
			break;
		case 'l':
			d = cmp_u64(a->row.ss.totalsize, b->row.ss.totalsize);
			break;
		default:
			break;
		}
	}
	if (rev)
		d = -d;
	return d ? d : cmp_u64(a->seq, b->seq);
}

/* vol_cmp - compare two kept volumes by the order letters in arg. */
static int vol_cmp(const void *pa, const void *pb, void *arg)
{
	const struct kept_vol *a = pa, *b = pb;
	const char *order = arg;
	int rev = strchr(order, 'R') != NULL;
	int d = 0;

	for (const char *p = order; *p && !d; p++) {
		switch (*p) {
		case 'm':
			d = strcmp(a->vol.name, b->vol.name);
			break;
		case 'e':
			d = cmp_i64(a->vol.volretent, b->vol.volretent);
			break;
		case 'l':
			d = cmp_u64(a->vol.written, b->vol.written);
			break;
		case 't':
			d = cmp_i64(a->vol.labeled, b->vol.labeled);
			break;
		default:
			break;
		}
	}
	if (rev)
		d = -d;
	return d ? d : cmp_u64(a->seq, b->seq);
}

/* keep - append one element to a growable array. */
static int keep(void **arr, size_t *n, size_t *cap, size_t size,
		const void *elem)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 1024;
		void *p = realloc(*arr, nc * size);

		if (!p)
			return NSR_ERR_NOMEM;
		*arr = p;
		*cap = nc;
	}
	memcpy((char *)*arr + *n * size, elem, size);
	(*n)++;
	return NSR_OK;
}

/* mminfo_fetch_rows - stream or collect+sort save set rows. */
int mminfo_fetch_rows(struct mmdb_clnt *c, const char *query, int64_t now,
		      const char *order, mminfo_row_fn fn, void *arg,
		      size_t *count)
{
	struct mmdb_ss_row *batch = NULL;
	struct kept_row *kept = NULL, k;
	size_t n, nkept = 0, cap = 0;
	int sorted = order && *order, done = 0, rc;

	*count = 0;
	batch = calloc(BATCH, sizeof(*batch));
	if (!batch)
		return NSR_ERR_NOMEM;
	rc = mmdb_clnt_query_open(c, query, 0, now);
	while (!rc && !done) {
		rc = mmdb_clnt_query_next_rows(c, batch, BATCH, &n, &done);
		for (size_t i = 0; !rc && i < n; i++) {
			if (!sorted) {
				rc = fn(arg, &batch[i]);
			} else {
				k.row = batch[i];
				k.seq = *count;
				rc = keep((void **)&kept, &nkept, &cap,
					  sizeof(k), &k);
			}
			(*count)++;
		}
	}
	if (!rc && sorted) {
		qsort_r(kept, nkept, sizeof(*kept), row_cmp, (void *)order);
		for (size_t i = 0; !rc && i < nkept; i++)
			rc = fn(arg, &kept[i].row);
	}
	free(kept);
	free(batch);
	return rc;
}

/* mminfo_fetch_vols - stream or collect+sort volumes. */
int mminfo_fetch_vols(struct mmdb_clnt *c, const char *query, int64_t now,
		      const char *order, mminfo_vol_fn fn, void *arg,
		      size_t *count)
{
	struct mmdb_volume *batch = NULL;
	struct kept_vol *kept = NULL, k;
	size_t n, nkept = 0, cap = 0;
	int sorted = order && *order, done = 0, rc;

	*count = 0;
	batch = calloc(BATCH, sizeof(*batch));
	if (!batch)
		return NSR_ERR_NOMEM;
	rc = mmdb_clnt_query_open(c, query, 1, now);
	while (!rc && !done) {
		rc = mmdb_clnt_query_next_vols(c, batch, BATCH, &n, &done);
		for (size_t i = 0; !rc && i < n; i++) {
			if (!sorted) {
				rc = fn(arg, &batch[i]);
			} else {
				k.vol = batch[i];
				k.seq = *count;
				rc = keep((void **)&kept, &nkept, &cap,
					  sizeof(k), &k);
			}
			(*count)++;
		}
	}
	if (!rc && sorted) {
		qsort_r(kept, nkept, sizeof(*kept), vol_cmp, (void *)order);
		for (size_t i = 0; !rc && i < nkept; i++)
			rc = fn(arg, &kept[i].vol);
	}
	free(kept);
	free(batch);
	return rc;
}

/* add_volume - keep vol once (by name); volumes are few, a scan is fine. */
static int add_volume(struct kept_vol **kept, size_t *n, size_t *cap,
		      const struct mmdb_volume *vol)
{
	struct kept_vol k;

	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*kept)[i].vol.name, vol->name))
			return NSR_OK;
	k.vol = *vol;
	k.seq = *n;
	return keep((void **)kept, n, cap, sizeof(k), &k);
}

/* mminfo_fetch_vols_of_rows - the volumes holding the save set rows. */
int mminfo_fetch_vols_of_rows(struct mmdb_clnt *c, const char *query,
			      int64_t now, const char *order,
			      mminfo_vol_fn fn, void *arg, size_t *count)
{
	struct mmdb_ss_row *batch = NULL;
	struct kept_vol *kept = NULL;
	size_t n, nkept = 0, cap = 0;
	int done = 0, rc;

	*count = 0;
	batch = calloc(BATCH, sizeof(*batch));
	if (!batch)
		return NSR_ERR_NOMEM;
	rc = mmdb_clnt_query_open(c, query, 0, now);
	while (!rc && !done) {
		rc = mmdb_clnt_query_next_rows(c, batch, BATCH, &n, &done);
		for (size_t i = 0; !rc && i < n; i++)
			if (batch[i].has_volume)
				rc = add_volume(&kept, &nkept, &cap,
						&batch[i].vol);
	}
	if (!rc && order && *order)
		qsort_r(kept, nkept, sizeof(*kept), vol_cmp, (void *)order);
	for (size_t i = 0; !rc && i < nkept; i++)
		rc = fn(arg, &kept[i].vol);
	if (!rc)
		*count = nkept;
	free(kept);
	free(batch);
	return rc;
}
