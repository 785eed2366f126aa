/*
 * test_level.c - level names, the level decision and the change
 * predicate (level.h).
 */
#include "nsr/compat.h"

#include "nsr/err.h"
#include "nsr/level.h"
#include "nsr_test.h"

#define F NSR_LEVEL_FULL
#define I NSR_LEVEL_INCR
#define M NSR_LEVEL_MANUAL

/* decide - nsr_level_decide that must succeed. */
static struct nsr_level_decision decide(unsigned want,
					const struct nsr_level_prev *p,
					size_t n)
{
	struct nsr_level_decision d;

	assert_int_equal(nsr_level_decide(want, p, n, &d), NSR_OK);
	return d;
}

/* expect_promoted - d is a full promoted from a level save. */
static void expect_promoted(const struct nsr_level_decision *d)
{
	assert_int_equal(d->level, F);
	assert_int_equal(d->promoted, 1);
	assert_int_equal(d->ref, -1);
	assert_int_equal(d->since, 0);
}

/* test_names - every level spelled and parsed back. */
static void test_names(void **state)
{
	NSR_UNUSED(state);
	for (unsigned l = 0; l <= NSR_LEVEL_MAX; l++)
		assert_int_equal(nsr_level_parse(nsr_level_name(l)), (int)l);
	assert_string_equal(nsr_level_name(NSR_LEVEL_MAX + 1), "?");
	assert_int_equal(nsr_level_parse("10"), -1);
	assert_int_equal(nsr_level_parse("Full"), -1);
}

/* test_full_manual - full and manual never build on anything. */
static void test_full_manual(void **state)
{
	const struct nsr_level_prev p[] = {{F, 100, 1, 1}, {I, 200, 2, 1}};
	struct nsr_level_decision d;

	NSR_UNUSED(state);
	d = decide(F, p, 2);
	assert_int_equal(d.level, F);
	assert_int_equal(d.ref, -1);
	assert_int_equal(d.since, 0);
	d = decide(M, p, 2);
	assert_int_equal(d.level, M);
	assert_int_equal(d.promoted, 0);
	assert_int_equal(d.since, 0);
	assert_int_equal(nsr_level_decide(NSR_LEVEL_MAX + 1, p, 2, &d),
			 NSR_ERR_INVAL);
	assert_int_equal(d.level, F);
}

/* test_promoted - incr and 1-9 with no usable full become full. */
static void test_promoted(void **state)
{
	const struct nsr_level_prev only_unusable[] = {
		{F, 100, 1, 0}, /* aborted, suspect, ... */
		{M, 150, 2, 1}, /* manual never serves */
		{I, 200, 3, 1}, /* an incr alone is no chain */
		{3, 250, 4, 1},
	};
	struct nsr_level_decision d;

	NSR_UNUSED(state);
	d = decide(I, NULL, 0);
	expect_promoted(&d);
	for (unsigned want = 1; want <= I; want++) {
		d = decide(want, only_unusable, 4);
		expect_promoted(&d);
	}
}

/* test_incr - incr builds on the newest usable save set of any level. */
static void test_incr(void **state)
{
	const struct nsr_level_prev p[] = {
		{I, 400, 14, 1}, /* the newest that serves */
		{F, 100, 11, 1}, /* the chain's full */
		{5, 300, 13, 1}, /* a level 5 before it */
		{M, 500, 15, 1}, /* newer, but manual */
		{I, 600, 16, 0}, /* newer, but not usable */
		{1, 200, 12, 1}, /* a level 1 before it */
	};
	struct nsr_level_decision d;

	NSR_UNUSED(state);
	d = decide(I, p, 6);
	assert_int_equal(d.level, I);
	assert_int_equal(d.promoted, 0);
	assert_int_equal(d.ref, 0);
	assert_int_equal(d.ref_ssid, 14);
	assert_int_equal(d.ref_level, I);
	assert_int_equal(d.since, 400);
}

/* test_numbered - level N builds on the newest of a lower level. */
static void test_numbered(void **state)
{
	/* full, 5, 3, incr, 7: the NetWorker example of a week. */
	const struct nsr_level_prev p[] = {
		{F, 100, 1, 1}, {5, 200, 2, 1}, {3, 300, 3, 1},
		{I, 400, 4, 1}, {7, 500, 5, 1},
	};
	struct nsr_level_decision d;

	NSR_UNUSED(state);
	d = decide(1, p, 5); /* nothing below 1 but the full */
	assert_int_equal(d.ref_ssid, 1);
	assert_int_equal(d.since, 100);
	d = decide(3, p, 5); /* 3 is not below 3 */
	assert_int_equal(d.ref_ssid, 1);
	d = decide(4, p, 5); /* the 3 */
	assert_int_equal(d.ref_ssid, 3);
	assert_int_equal(d.ref_level, 3);
	d = decide(6, p, 5); /* 5 is older than 3: the newest below wins */
	assert_int_equal(d.ref_ssid, 3);
	d = decide(9, p, 5); /* the 7; incr never serves a number */
	assert_int_equal(d.ref_ssid, 5);
	assert_int_equal(d.since, 500);
	assert_int_equal(d.level, 9);
	/* A newer full ends the old chain. */
	{
		const struct nsr_level_prev q[] = {
			{F, 100, 1, 1},
			{1, 200, 2, 1},
			{F, 300, 3, 1},
		};

		d = decide(2, q, 3);
		assert_int_equal(d.ref_ssid, 3);
		d = decide(I, q, 3);
		assert_int_equal(d.ref_ssid, 3);
	}
}

/* test_ties - equal save times: the later in the list wins. */
static void test_ties(void **state)
{
	const struct nsr_level_prev p[] = {{F, 100, 1, 1}, {I, 100, 2, 1}};
	struct nsr_level_decision d;

	NSR_UNUSED(state);
	d = decide(I, p, 2);
	assert_int_equal(d.ref_ssid, 2);
	assert_int_equal(d.since, 100);
}

/* ts - a timespec. */
static struct timespec ts(time_t s, long ns)
{
	struct timespec t = {s, ns};

	return t;
}

/* test_changed - mtime or ctime at or after since, nanoseconds. */
static void test_changed(void **state)
{
	struct timespec since = ts(1000, 500), zero = ts(0, 0);
	struct timespec old = ts(999, 999999999), m, c;

	NSR_UNUSED(state);
	/* A full saves everything, however old. */
	assert_true(nsr_level_changed(&old, &old, &zero));
	/* Unchanged: both before since, by one nanosecond. */
	m = ts(1000, 499);
	assert_false(nsr_level_changed(&m, &m, &since));
	assert_false(nsr_level_changed(&old, &old, &since));
	/* At since counts. */
	m = ts(1000, 500);
	assert_true(nsr_level_changed(&m, &old, &since));
	/* Modified after. */
	m = ts(1000, 501);
	assert_true(nsr_level_changed(&m, &old, &since));
	m = ts(2000, 0);
	assert_true(nsr_level_changed(&m, &old, &since));
	/* Old mtime, new ctime: renamed, chmod'ed, moved in with old times. */
	c = ts(1001, 0);
	assert_true(nsr_level_changed(&old, &c, &since));
	/* A second-granular since (a save time) and a change in that very
	 * second, before or after the instant the save began. */
	since = ts(1000, 0);
	m = ts(1000, 0);
	assert_true(nsr_level_changed(&m, &m, &since));
	m = ts(1000, 999999999);
	assert_true(nsr_level_changed(&old, &m, &since));
	assert_false(nsr_level_changed(&old, &old, &since));
}

/* main - run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_full_manual),
		cmocka_unit_test(test_promoted),
		cmocka_unit_test(test_incr),
		cmocka_unit_test(test_numbered),
		cmocka_unit_test(test_ties),
		cmocka_unit_test(test_changed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
