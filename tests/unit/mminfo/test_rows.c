/*
 * test_rows.c - mminfo's kept rows (tools/mminfo/rows.h): random rows
 * (few clients, names and volumes, so that keys tie; every field set)
 * come back whole, each one, in the order a stable sort of the rows as
 * structs by the same letters gives, for every order mminfo takes and
 * in arrival order without one; a callback stops the emission.
 */
#include "nsr/compat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nsr/err.h"
#include "nsr/mmdb.h"
#include "nsr_test.h"
#include "rows.h"

#define NROWS 3000

/* rnd - a pseudo-random number below n. */
static uint32_t rnd(unsigned *seed, uint32_t n)
{
	return (uint32_t)rand_r(seed) % n;
}

/* make_row - row number i, every field set from seed. */
static void make_row(struct mmdb_ss_row *r, unsigned *seed, uint32_t i)
{
	memset(r, 0, sizeof(*r));
	r->ss.ssid = i + 1;
	for (int k = 0; k < 16; k++)
		r->ss.longid[k] = (uint8_t)rnd(seed, 256);
	snprintf(r->ss.client, sizeof(r->ss.client), "client%u",
		 rnd(seed, 7));
	snprintf(r->ss.name, sizeof(r->ss.name), "/data/%c%u",
		 'a' + (int)rnd(seed, 3), rnd(seed, 4));
	snprintf(r->ss.pool, sizeof(r->ss.pool), "Default");
	snprintf(r->ss.group, sizeof(r->ss.group), "g%u", rnd(seed, 3));
	r->ss.level = (uint8_t)rnd(seed, 10);
	r->ss.flags = MMDB_SS_VALID | MMDB_SS_FINISHED | MMDB_SS_BROWSABLE;
	r->ss.savetime = 1700000000 + rnd(seed, 50) * 60;
	r->ss.sscreate = r->ss.savetime + 1;
	r->ss.sscomp = r->ss.savetime + 2;
	r->ss.ssbrowse = r->ss.savetime + 86400 * (1 + rnd(seed, 3));
	r->ss.ssretent = r->ss.ssbrowse + 86400 * rnd(seed, 3);
	r->ss.totalsize = (uint64_t)rnd(seed, 5) << 33;
	r->ss.nfiles = rnd(seed, 100000);
	r->ss.pssid = rnd(seed, 2) ? i : 0;
	r->ss.anchor_time = r->ss.pssid ? r->ss.savetime : 0;
	r->ss.ndependents = rnd(seed, 3);
	for (uint32_t k = 0; k < r->ss.ndependents; k++)
		r->ss.dependents[k] = i + 2 + k;
	r->clone.ssid = r->ss.ssid;
	r->clone.cloneid = 1 + rnd(seed, 2);
	r->clone.clone_time = r->ss.sscomp;
	r->clone.clretent = r->ss.ssretent;
	r->clone.flags = rnd(seed, 2) ? MMDB_CLONE_SUSPECT : 0;
	r->copies = 1 + rnd(seed, 2);
	r->has_volume = rnd(seed, 10) != 0; /* some rows without one */
	if (r->has_volume) {
		snprintf(r->vol.name, sizeof(r->vol.name), "vol.%03u",
			 rnd(seed, 9));
		r->vol.volid[0] = 1;
		r->vol.volid[1] = (uint8_t)rnd(seed, 256);
		snprintf(r->vol.pool, sizeof(r->vol.pool), "Default");
		snprintf(r->vol.type, sizeof(r->vol.type), "adv_file");
		snprintf(r->vol.location, sizeof(r->vol.location), "rack");
		r->vol.block_size = 262144;
		r->vol.flags = MMDB_VOL_FULL;
		r->vol.written = rnd(seed, 1000000);
		r->vol.capacity = 1ull << 40;
		r->vol.labeled = r->vol.olabel = 1690000000;
		r->vol.volretent = r->ss.ssretent;
		r->vol.mounts = rnd(seed, 9);
		r->vol.next_file = rnd(seed, 99);
		r->vol.next_record = rnd(seed, 99999);
	}
	r->frag_flags = MMDB_FRAG_COMPLETE;
	r->sumsize = r->ss.totalsize;
	r->first_file = rnd(seed, 99);
	r->first_record = rnd(seed, 9999);
}

/* Reference sort: rows as structs, the order letters, then arrival. */
struct ref {
	const struct mmdb_ss_row *rows;
	const char *order;
};

/* cmp_str - strcmp as -1, 0, 1. */
static int cmp_str(const char *a, const char *b)
{
	int d = strcmp(a, b);

	return (d > 0) - (d < 0);
}

/* ref_cmp - qsort_r order of two row numbers (the former mminfo's). */
static int ref_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct ref *f = ctx;
	uint32_t ia = *(const uint32_t *)pa, ib = *(const uint32_t *)pb;
	const struct mmdb_ss_row *a = &f->rows[ia], *b = &f->rows[ib];
	int d = 0;

	for (const char *p = f->order; *p && !d; p++) {
		switch (*p) {
		case 't': d = (a->ss.savetime > b->ss.savetime) -
			      (a->ss.savetime < b->ss.savetime); break;
		case 'c': d = cmp_str(a->ss.client, b->ss.client); break;
		case 'n': d = cmp_str(a->ss.name, b->ss.name); break;
		case 'm': d = cmp_str(a->vol.name, b->vol.name); break;
		case 'e': d = (a->ss.ssretent > b->ss.ssretent) -
			      (a->ss.ssretent < b->ss.ssretent); break;
		case 'l': d = (a->ss.totalsize > b->ss.totalsize) -
			      (a->ss.totalsize < b->ss.totalsize); break;
		default: break;
		}
	}
	if (strchr(f->order, 'R'))
		d = -d;
	return d ? d : (ia > ib) - (ia < ib);
}

/* What the emission saw. */
struct seen {
	const struct mmdb_ss_row *rows;
	const uint32_t *want; /* row numbers in the expected order */
	size_t n;
	int stop_at; /* return 7 at this row (-1: never) */
};

/* see - mminfo_rows_emit's callback: the next expected row, whole. */
static int see(void *arg, const struct mmdb_ss_row *row)
{
	struct seen *s = arg;

	if ((int)s->n == s->stop_at)
		return 7;
	assert_memory_equal(row, &s->rows[s->want[s->n]], sizeof(*row));
	s->n++;
	return 0;
}

/* check_order - keep rows, emit them by order, compare with ref. */
static void check_order(const struct mmdb_ss_row *rows, size_t n,
			const char *order)
{
	struct mminfo_rows kept;
	uint32_t *want = malloc(n * sizeof(*want));
	struct ref f = {rows, order};
	struct seen s = {rows, want, 0, -1};

	assert_non_null(want);
	mminfo_rows_init(&kept);
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(mminfo_rows_add(&kept, &rows[i]), NSR_OK);
		want[i] = i;
	}
	if (*order)
		qsort_r(want, n, sizeof(*want), ref_cmp, &f);
	assert_int_equal(mminfo_rows_emit(&kept, order, see, &s), NSR_OK);
	assert_int_equal(s.n, n);
	mminfo_rows_free(&kept);
	free(want);
}

/* test_orders - every order letter alone, combined and reversed. */
static void test_orders(void **state)
{
	static const char *const orders[] = {
		"", "t", "c", "n", "m", "e", "l", "tR", "cn", "cnt", "mt",
		"ncR", "lc", "ec", "R",
	};
	struct mmdb_ss_row *rows = calloc(NROWS, sizeof(*rows));
	unsigned seed = 1129;

	NSR_UNUSED(state);
	assert_non_null(rows);
	for (uint32_t i = 0; i < NROWS; i++)
		make_row(&rows[i], &seed, i);
	for (size_t k = 0; k < sizeof(orders) / sizeof(orders[0]); k++)
		check_order(rows, NROWS, orders[k]);
	free(rows);
}

/* test_stop - a callback's nonzero return stops the emission and is
 * returned. */
static void test_stop(void **state)
{
	struct mmdb_ss_row *rows = calloc(3, sizeof(*rows));
	struct mminfo_rows kept;
	uint32_t want[] = {0, 2, 1};
	struct seen s = {NULL, want, 0, -1};
	unsigned seed = 5;

	NSR_UNUSED(state);
	assert_non_null(rows);
	s.rows = rows;
	for (uint32_t i = 0; i < 3; i++)
		make_row(&rows[i], &seed, i);
	rows[0].ss.savetime = 1;
	rows[1].ss.savetime = 3;
	rows[2].ss.savetime = 2;
	mminfo_rows_init(&kept);
	assert_int_equal(mminfo_rows_add(&kept, &rows[0]), NSR_OK);
	assert_int_equal(mminfo_rows_add(&kept, &rows[1]), NSR_OK);
	assert_int_equal(mminfo_rows_add(&kept, &rows[2]), NSR_OK);
	s.stop_at = 2;
	assert_int_equal(mminfo_rows_emit(&kept, "t", see, &s), 7);
	assert_int_equal(s.n, 2);
	mminfo_rows_free(&kept);
	free(rows);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_orders),
		cmocka_unit_test(test_stop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
