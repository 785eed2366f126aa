/*
 * rows.c - kept save set rows in XDR form with compact sort keys
 * (rows.h).
 *
 * Invariants:
 * 1. Row i's XDR form starts at key[i].off of xdr, and offsets grow
 *    with i (arrival order), so the offset breaks ties stably.
 * 2. Until emission a key's c, n and m are string numbers of s; from the
 *    sort on they are the strings' ranks (strs_rank turns them over
 *    once), which order as strcmp(3) orders the strings.
 */
#include "nsr/compat.h"

#include <stdlib.h>
#include <string.h>

#include <rpc/rpc.h>

#include "nsr/cmp.h"
#include "nsr/err.h"
#include "nsr/grow.h"
#include "nsr/mmdb_clnt.h"
#include "rows.h"

/* The most a row's XDR form takes: its struct holds the longest strings
 * (with their NULs) and numbers at least as wide as XDR's; XDR adds a
 * length and at most three bytes of padding per string, far less than
 * this slack. */
#define ROW_XDR_MAX (sizeof(struct mmdb_ss_row) + 1024)

/* A kept row's sort keys (the order letters' fields) and its XDR form. */
struct mminfo_rkey {
	int64_t t;	  /* savetime */
	int64_t e;	  /* ssretent */
	uint64_t l;	  /* totalsize */
	uint32_t c, n, m; /* client, name, volume (invariant 2) */
	uint64_t off;	  /* invariant 1 */
};

/* str_of - nsr_nameix_name_fn of the strings: string i. */
static const char *str_of(const void *ctx, size_t i, size_t *len)
{
	const struct mminfo_strs *s = ctx;
	const char *p = s->b.data + s->off[i];

	*len = strlen(p);
	return p;
}

/* strs_id - the number of string p, added if new: NSR_OK or
 * NSR_ERR_NOMEM (nothing added). */
static int strs_id(struct mminfo_strs *s, const char *p, uint32_t *id)
{
	size_t len = strlen(p), i = nsr_nameix_find(&s->ix, p, len);
	size_t at = s->b.len;
	int rc;

	if (i != NSR_NAMEIX_NONE) {
		*id = (uint32_t)i;
		return NSR_OK;
	}
	rc = nsr_grow((void **)&s->off, s->n, &s->cap, sizeof(*s->off), 256);
	if (rc != NSR_OK)
		return rc;
	rc = nsr_buf_add(&s->b, p, len + 1);
	if (rc != NSR_OK)
		return rc;
	s->off[s->n] = at;
	rc = nsr_nameix_add(&s->ix, s->n);
	if (rc != NSR_OK) {
		nsr_buf_setlen(&s->b, at);
		return rc;
	}
	*id = (uint32_t)s->n++;
	return NSR_OK;
}

/* by_str - qsort_r order of two string numbers by their strings. */
static int by_str(const void *a, const void *b, void *ctx)
{
	const struct mminfo_strs *s = ctx;

	return strcmp(s->b.data + s->off[*(const uint32_t *)a],
		      s->b.data + s->off[*(const uint32_t *)b]);
}

/* strs_rank - s->rank of every string: NSR_OK or NSR_ERR_NOMEM. */
static int strs_rank(struct mminfo_strs *s)
{
	uint32_t *ids = malloc((s->n ? s->n : 1) * sizeof(*ids));

	free(s->rank);
	s->rank = malloc((s->n ? s->n : 1) * sizeof(*s->rank));
	if (!ids || !s->rank) {
		free(ids);
		return NSR_ERR_NOMEM;
	}
	for (size_t i = 0; i < s->n; i++)
		ids[i] = (uint32_t)i;
	qsort_r(ids, s->n, sizeof(*ids), by_str, s);
	for (size_t i = 0; i < s->n; i++)
		s->rank[ids[i]] = (uint32_t)i;
	free(ids);
	return NSR_OK;
}

/* mminfo_rows_init - no rows kept. */
void mminfo_rows_init(struct mminfo_rows *r)
{
	memset(r, 0, sizeof(*r));
	nsr_buf_init(&r->xdr, 0);
	nsr_buf_init(&r->s.b, 0);
	nsr_nameix_init(&r->s.ix, str_of, &r->s);
}

/* encode - row's XDR form appended to r->xdr: NSR_OK, NSR_ERR_NOMEM or
 * NSR_ERR_INVAL (the arena then as it was). */
static int encode(struct mminfo_rows *r, const struct mmdb_ss_row *row)
{
	mm_row w;
	XDR x;
	int rc, ok;

	memset(&w, 0, sizeof(w));
	rc = nsr_buf_grow(&r->xdr, ROW_XDR_MAX);
	if (rc == NSR_OK)
		rc = mmdb_clnt_row_to_wire(row, &w);
	if (rc == NSR_OK) {
		xdrmem_create(&x, r->xdr.data + r->xdr.len, ROW_XDR_MAX,
			      XDR_ENCODE);
		ok = xdr_mm_row(&x, &w);
		if (ok)
			nsr_buf_setlen(&r->xdr, r->xdr.len + xdr_getpos(&x));
		xdr_destroy(&x);
		rc = ok ? NSR_OK : NSR_ERR_INVAL;
	}
	xdr_free((xdrproc_t)xdr_mm_row, (char *)&w);
	return rc;
}

/* mminfo_rows_add - keep row: NSR_OK, NSR_ERR_NOMEM, or NSR_ERR_INVAL
 * (it does not encode; nothing kept then). */
int mminfo_rows_add(struct mminfo_rows *r, const struct mmdb_ss_row *row)
{
	struct mminfo_rkey k = {.t = row->ss.savetime,
				.e = row->ss.ssretent,
				.l = row->ss.totalsize,
				.off = r->xdr.len};
	const char *vol = row->has_volume ? row->vol.name : "";
	int rc;

	rc = nsr_grow((void **)&r->key, r->n, &r->cap, sizeof(*r->key), 1024);
	if (rc == NSR_OK)
		rc = strs_id(&r->s, row->ss.client, &k.c);
	if (rc == NSR_OK)
		rc = strs_id(&r->s, row->ss.name, &k.n);
	if (rc == NSR_OK)
		rc = strs_id(&r->s, vol, &k.m);
	if (rc == NSR_OK)
		rc = encode(r, row);
	if (rc == NSR_OK)
		r->key[r->n++] = k;
	return rc; /* strings added on the way stay: harmless */
}

/* key_cmp - qsort_r order of two keys by the order letters (invariant
 * 2: strings by rank), R reversing it; ties by arrival (invariant 1). */
static int key_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct mminfo_rkey *a = pa, *b = pb;
	const char *order = ctx;
	int d = 0;

	for (const char *p = order; *p && !d; p++) {
		switch (*p) {
		case 't': d = NSR_CMP(a->t, b->t); break;
		case 'c': d = NSR_CMP(a->c, b->c); break;
		case 'n': d = NSR_CMP(a->n, b->n); break;
		case 'm': d = NSR_CMP(a->m, b->m); break;
		case 'e': d = NSR_CMP(a->e, b->e); break;
		case 'l': d = NSR_CMP(a->l, b->l); break;
		default: break;
		}
	}
	if (strchr(order, 'R'))
		d = -d;
	return d ? d : NSR_CMP(a->off, b->off);
}

/* decode - the kept row of key k, whole: NSR_OK or NSR_ERR_CORRUPT. */
static int decode(const struct mminfo_rows *r, const struct mminfo_rkey *k,
		  struct mmdb_ss_row *row)
{
	size_t left = r->xdr.len - k->off;
	mm_row w;
	XDR x;
	int rc;

	memset(&w, 0, sizeof(w));
	xdrmem_create(&x, r->xdr.data + k->off,
		      (u_int)(left < ROW_XDR_MAX ? left : ROW_XDR_MAX),
		      XDR_DECODE);
	rc = xdr_mm_row(&x, &w) ? mmdb_clnt_row_from_wire(&w, row)
				 : NSR_ERR_CORRUPT;
	xdr_destroy(&x);
	xdr_free((xdrproc_t)xdr_mm_row, (char *)&w);
	return rc ? NSR_ERR_CORRUPT : NSR_OK;
}

/* mminfo_rows_emit - call fn(arg, row) for every kept row, sorted by the
 * order letters: NSR_OK, NSR_ERR_NOMEM, NSR_ERR_CORRUPT, or fn's
 * nonzero return, which stops it. */
int mminfo_rows_emit(struct mminfo_rows *r, const char *order,
		     int (*fn)(void *arg, const struct mmdb_ss_row *row),
		     void *arg)
{
	struct mmdb_ss_row *row;
	int rc = NSR_OK;

	if (order && *order && r->n > 1) {
		rc = strs_rank(&r->s);
		for (size_t i = 0; rc == NSR_OK && i < r->n; i++) {
			r->key[i].c = r->s.rank[r->key[i].c];
			r->key[i].n = r->s.rank[r->key[i].n];
			r->key[i].m = r->s.rank[r->key[i].m];
		}
		if (rc == NSR_OK)
			qsort_r(r->key, r->n, sizeof(*r->key), key_cmp,
				(void *)order);
	}
	row = malloc(sizeof(*row));
	if (!row)
		rc = NSR_ERR_NOMEM;
	for (size_t i = 0; rc == NSR_OK && i < r->n; i++) {
		rc = decode(r, &r->key[i], row);
		if (rc == NSR_OK)
			rc = fn(arg, row);
	}
	free(row);
	return rc;
}

/* mminfo_rows_free - free what is kept; no rows kept again. */
void mminfo_rows_free(struct mminfo_rows *r)
{
	nsr_buf_release(&r->xdr);
	nsr_buf_release(&r->s.b);
	nsr_nameix_free(&r->s.ix);
	free(r->s.off);
	free(r->s.rank);
	free(r->key);
	mminfo_rows_init(r);
}
