/*
 * test_expiry.c - time policies, the browse/retention rules and the
 * dependency rule of backup chains (expiry.h).
 */
#include "nsr/compat.h"

#include <stdlib.h>
#include <time.h>

#include "nsr/err.h"
#include "nsr/expiry.h"
#include "nsr/level.h"
#include "nsr_test.h"

#define DAY 86400
#define F NSR_LEVEL_FULL
#define I NSR_LEVEL_INCR

/* test_parse - periods and numbers, and garbage refused. */
static void test_parse(void **state)
{
	struct nsr_expiry_policy p;

	NSR_UNUSED(state);
	assert_int_equal(nsr_expiry_policy_parse("Weeks", "3", &p), NSR_OK);
	assert_int_equal(p.unit, NSR_EXPIRY_WEEKS);
	assert_int_equal(p.count, 3);
	assert_int_equal(nsr_expiry_policy_parse("day", NULL, &p), NSR_OK);
	assert_int_equal(p.unit, NSR_EXPIRY_DAYS);
	assert_int_equal(p.count, 1);
	assert_int_equal(nsr_expiry_policy_parse("Years", "", &p), NSR_OK);
	assert_int_equal(nsr_expiry_policy_parse("Fortnights", "1", &p),
			 NSR_ERR_SYNTAX);
	assert_int_equal(nsr_expiry_policy_parse("Daysx", "1", &p),
			 NSR_ERR_SYNTAX);
	assert_int_equal(nsr_expiry_policy_parse("Days", "0", &p),
			 NSR_ERR_SYNTAX);
	assert_int_equal(nsr_expiry_policy_parse("Days", "2x", &p),
			 NSR_ERR_SYNTAX);
	assert_int_equal(nsr_expiry_policy_parse("Days", " 1", &p),
			 NSR_ERR_SYNTAX);
	assert_int_equal(nsr_expiry_policy_parse("Days", "+1", &p),
			 NSR_ERR_SYNTAX);
	assert_int_equal(nsr_expiry_policy_parse(NULL, "1", &p),
			 NSR_ERR_SYNTAX);
	assert_int_equal(nsr_expiry_builtin("quarter", &p), NSR_OK);
	assert_int_equal(p.unit, NSR_EXPIRY_MONTHS);
	assert_int_equal(p.count, 3);
	assert_int_equal(nsr_expiry_builtin("Decade", &p), NSR_OK);
	assert_int_equal(p.count, 10);
	assert_int_equal(nsr_expiry_builtin("Fortnight", &p),
			 NSR_ERR_NOTFOUND);
}

/* test_add - calendar arithmetic in local time. */
static void test_add(void **state)
{
	struct nsr_expiry_policy p = { NSR_EXPIRY_MONTHS, 1 };
	struct tm tm = { 0 };
	time_t t, got;

	NSR_UNUSED(state);
	tm.tm_year = 126;
	tm.tm_mon = 0;
	tm.tm_mday = 15;
	tm.tm_hour = 12;
	tm.tm_isdst = -1;
	t = mktime(&tm);
	got = (time_t)nsr_expiry_add(&p, t);
	localtime_r(&got, &tm);
	assert_int_equal(tm.tm_mon, 1);
	assert_int_equal(tm.tm_mday, 15);
	assert_int_equal(tm.tm_hour, 12);
	p.unit = NSR_EXPIRY_WEEKS;
	p.count = 2;
	got = (time_t)nsr_expiry_add(&p, t);
	localtime_r(&got, &tm);
	assert_int_equal(tm.tm_mday, 29);
	p.unit = NSR_EXPIRY_YEARS;
	p.count = 1;
	got = (time_t)nsr_expiry_add(&p, t);
	localtime_r(&got, &tm);
	assert_int_equal(tm.tm_year, 127);
}

/* test_add_zone - a sum remembered (nsr_expiry_add's memo) is the
 * answer of the zone it was made in: one month from 2026-03-01 12:00 UTC
 * is 31 days in UTC and an hour less where DST starts in between (a
 * POSIX rule: no zone files needed), asked alternately, twice each. */
static void test_add_zone(void **state)
{
	struct nsr_expiry_policy p = { NSR_EXPIRY_MONTHS, 1 };
	const int64_t base = 1772366400; /* 2026-03-01 12:00:00 UTC */
	const char *old = getenv("TZ");
	char *keep = old ? strdup(old) : NULL;

	NSR_UNUSED(state);
	for (int round = 0; round < 2; round++) {
		setenv("TZ", "UTC0", 1);
		tzset();
		assert_int_equal(nsr_expiry_add(&p, base) - base, 31 * 86400);
		setenv("TZ", "EST5EDT,M3.2.0,M11.1.0", 1);
		tzset();
		assert_int_equal(nsr_expiry_add(&p, base) - base,
				 31 * 86400 - 3600);
	}
	if (keep)
		setenv("TZ", keep, 1);
	else
		unsetenv("TZ");
	tzset();
	free(keep);
}

/* test_times - explicit times, defaults, the pool's longer retention and
 * retention never before browse. */
static void test_times(void **state)
{
	struct nsr_expiry_policy d10 = { NSR_EXPIRY_DAYS, 10 };
	struct nsr_expiry_policy d20 = { NSR_EXPIRY_DAYS, 20 };
	struct nsr_expiry_policy d30 = { NSR_EXPIRY_DAYS, 30 };
	struct nsr_expiry_policy d5 = { NSR_EXPIRY_DAYS, 5 };
	struct nsr_expiry_policy month = { NSR_EXPIRY_MONTHS, 1 };
	struct nsr_expiry_policy year = { NSR_EXPIRY_YEARS, 1 };
	struct nsr_expiry_in in = { 0 };
	int64_t base = 1767268800, b, r; /* 2026-01-01 12:00 UTC */

	NSR_UNUSED(state);
	in.base = base;
	nsr_expiry_times(&in, &b, &r); /* defaults: Month / Year */
	assert_int_equal(b, nsr_expiry_add(&month, base));
	assert_int_equal(r, nsr_expiry_add(&year, base));
	in.browse = &d10;
	in.retention = &d20;
	nsr_expiry_times(&in, &b, &r);
	assert_int_equal(b, nsr_expiry_add(&d10, base));
	assert_int_equal(r, nsr_expiry_add(&d20, base));
	in.pool_retention = &d30; /* longer: wins */
	nsr_expiry_times(&in, &b, &r);
	assert_int_equal(r, nsr_expiry_add(&d30, base));
	in.pool_retention = &d5; /* shorter: the client's stays */
	nsr_expiry_times(&in, &b, &r);
	assert_int_equal(r, nsr_expiry_add(&d20, base));
	in.retention_time = base + 3 * DAY; /* explicit beats both ... */
	in.browse_time = base + DAY;
	nsr_expiry_times(&in, &b, &r);
	assert_int_equal(b, base + DAY);
	assert_int_equal(r, base + 3 * DAY);
	in.browse_time = base + 7 * DAY; /* ... but not before browse */
	nsr_expiry_times(&in, &b, &r);
	assert_int_equal(b, base + 7 * DAY);
	assert_int_equal(r, base + 7 * DAY);
}

/* ss - a chain member whose own times are browse b, retention r days. */
static struct nsr_expiry_ss ss(uint32_t ssid, unsigned level, int64_t t,
			       int64_t b, int64_t r)
{
	struct nsr_expiry_ss s = { 0 };

	s.ssid = ssid;
	s.level = level;
	s.savetime = t;
	s.usable = 1;
	s.browse = b * DAY;
	s.retention = r * DAY;
	return s;
}

/* find - the member with ssid. */
static const struct nsr_expiry_ss *find(const struct nsr_expiry_ss *v,
					size_t n, uint32_t ssid)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].ssid == ssid)
			return &v[i];
	fail();
	return NULL;
}

/* test_chain - full, incrs and levels hand their times back; a new full
 * starts a new chain; manual and unusable save sets are no one's
 * parent. */
static void test_chain(void **state)
{
	/* Given out of order: the chain sorts by save time. */
	struct nsr_expiry_ss v[] = {
		ss(4, I, 4, 14, 24),  ss(1, F, 1, 11, 21),
		ss(2, I, 2, 12, 22),  ss(3, 5, 3, 13, 23),
		ss(5, F, 5, 15, 25),  ss(6, I, 6, 16, 26),
		ss(7, NSR_LEVEL_MANUAL, 7, 50, 60), ss(8, I, 8, 18, 28),
		ss(9, 3, 9, 19, 29),  ss(10, I, 10, 20, 30),
	};
	size_t n = sizeof(v) / sizeof(v[0]);
	const struct nsr_expiry_ss *s;

	NSR_UNUSED(state);
	nsr_expiry_chain(NULL, 0); /* nothing: no call on NULL */
	v[8].usable = 0; /* ssid 9: aborted level 3 */
	nsr_expiry_chain(v, n);
	for (size_t i = 1; i < n; i++)
		assert_true(v[i - 1].savetime < v[i].savetime);
	/* 4 (incr) on 3 (level 5) on 1 (full); 2 (incr) on 1. */
	s = find(v, n, 4);
	assert_int_equal(s->parent, 3);
	assert_int_equal(s->eff_browse, 14 * DAY);
	s = find(v, n, 3);
	assert_int_equal(s->parent, 1);
	assert_int_equal(s->eff_browse, 14 * DAY);
	assert_int_equal(s->eff_retention, 24 * DAY);
	s = find(v, n, 2);
	assert_int_equal(s->parent, 1);
	assert_int_equal(s->eff_browse, 12 * DAY); /* nothing on it */
	s = find(v, n, 1);
	assert_int_equal(s->parent, 0);
	assert_int_equal(s->eff_browse, 14 * DAY);
	assert_int_equal(s->eff_retention, 24 * DAY);
	/* 10 on 8 (skipping the unusable 9) on 6 (skipping manual 7) on
	 * the new full 5. */
	assert_int_equal(find(v, n, 10)->parent, 8);
	assert_int_equal(find(v, n, 8)->parent, 6);
	assert_int_equal(find(v, n, 9)->parent, 0); /* holds nothing */
	assert_int_equal(find(v, n, 7)->parent, 0);
	s = find(v, n, 5);
	assert_int_equal(s->eff_browse, 20 * DAY);
	assert_int_equal(s->eff_retention, 30 * DAY);
	s = find(v, n, 7); /* manual keeps its own */
	assert_int_equal(s->eff_browse, 50 * DAY);
	assert_int_equal(find(v, n, 6)->eff_retention, 30 * DAY);
}

/* main - run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_add),
		cmocka_unit_test(test_add_zone),
		cmocka_unit_test(test_times),
		cmocka_unit_test(test_chain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
