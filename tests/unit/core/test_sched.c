/*
 * test_sched.c - NSR schedules, start times and intervals (sched.h).
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/level.h"
#include "nsr/sched.h"
#include "nsr_test.h"

#define F NSR_LEVEL_FULL
#define I NSR_LEVEL_INCR
#define SKIP NSR_SCHED_SKIP

static struct nsr_sched g_s;

/* refused - parsing must fail with a message containing want. */
static void refused(const char *period, const char *action,
		    const char *over, const char *want)
{
	struct nsr_buf why;
	const char *ov[1] = {over};

	nsr_buf_init(&why, 0);
	assert_int_equal(nsr_sched_parse(period, action, ov, over ? 1 : 0,
					 &g_s, &why),
			 NSR_ERR_SYNTAX);
	assert_non_null(why.data);
	if (!strstr(why.data, want))
		fail_msg("'%s' lacks '%s'", why.data, want);
	nsr_buf_release(&why);
}

/* at - the level of g_s at local noon of year-mon-mday. */
static int at(int year, int mon, int mday)
{
	struct tm tm = {0};

	tm.tm_year = year - 1900;
	tm.tm_mon = mon - 1;
	tm.tm_mday = mday;
	tm.tm_hour = 12;
	tm.tm_isdst = -1;
	return nsr_sched_level_at(&g_s, mktime(&tm));
}

/* test_levels - level words, skip included, spelled back. */
static void test_levels(void **state)
{
	NSR_UNUSED(state);
	assert_int_equal(nsr_sched_level_parse("Full"), F);
	assert_int_equal(nsr_sched_level_parse("INCR"), I);
	assert_int_equal(nsr_sched_level_parse("skip"), SKIP);
	assert_int_equal(nsr_sched_level_parse("5"), 5);
	assert_int_equal(nsr_sched_level_parse("0"), -1);
	assert_int_equal(nsr_sched_level_parse("10"), -1);
	assert_int_equal(nsr_sched_level_parse("manual"), -1);
	assert_string_equal(nsr_sched_level_name(SKIP), "skip");
	assert_string_equal(nsr_sched_level_name(I), "incr");
	assert_string_equal(nsr_sched_level_name(NSR_LEVEL_MANUAL), "?");
}

/* test_week - the default week: full on Sunday, incr else. */
static void test_week(void **state)
{
	NSR_UNUSED(state);
	setenv("TZ", "UTC", 1);
	tzset();
	assert_int_equal(nsr_sched_parse(NULL, NULL, NULL, 0, &g_s, NULL),
			 NSR_OK);
	/* 2026-11-22 is a Sunday. */
	assert_int_equal(at(2026, 11, 22), F);
	for (int d = 23; d <= 28; d++)
		assert_int_equal(at(2026, 11, d), I);
	assert_int_equal(at(2026, 11, 29), F);
	assert_int_equal(nsr_sched_parse("week", "incr 5 incr skip incr 9 "
					 " FULL", NULL, 0, &g_s, NULL),
			 NSR_OK);
	assert_int_equal(at(2026, 11, 22), I);
	assert_int_equal(at(2026, 11, 23), 5);
	assert_int_equal(at(2026, 11, 25), SKIP);
	assert_int_equal(at(2026, 11, 27), 9);
	assert_int_equal(at(2026, 11, 28), F);
}

/* test_month - one level per day of the month. */
static void test_month(void **state)
{
	char action[200] = "full";
	size_t len = 4;

	NSR_UNUSED(state);
	setenv("TZ", "UTC", 1);
	tzset();
	for (int i = 2; i <= 31; i++)
		len += (size_t)snprintf(action + len, sizeof(action) - len,
					"%s", i == 15	? " 5"
					      : i == 31 ? " skip"
							: " incr");
	assert_int_equal(nsr_sched_parse("Month", action, NULL, 0, &g_s,
					 NULL),
			 NSR_OK);
	assert_int_equal(at(2026, 2, 1), F);
	assert_int_equal(at(2026, 2, 15), 5);
	assert_int_equal(at(2026, 2, 28), I);
	assert_int_equal(at(2026, 3, 31), SKIP);
}

/* test_override - dates that replace the period's level. */
static void test_override(void **state)
{
	const char *ov[] = {"full 11/25/2026", "skip 2026-12-24",
			    " 3  02/29/2028 "};

	NSR_UNUSED(state);
	setenv("TZ", "UTC", 1);
	tzset();
	assert_int_equal(nsr_sched_parse("Week", NULL, ov, 3, &g_s, NULL),
			 NSR_OK);
	assert_int_equal(g_s.nover, 3);
	assert_int_equal(at(2026, 11, 24), I);
	assert_int_equal(at(2026, 11, 25), F);
	assert_int_equal(at(2026, 12, 24), SKIP);
	assert_int_equal(at(2028, 2, 29), 3);
	assert_int_equal(nsr_sched_level_on(&g_s, 2026, 11, 25, 3), F);
}

/* test_bad_schedules - what is refused and what the message says. */
static void test_bad_schedules(void **state)
{
	NSR_UNUSED(state);
	refused("Year", NULL, NULL, "Week or Month");
	refused("Week", "full incr", NULL, "7 levels");
	refused("Week", "full incr incr incr incr incr incr incr", NULL,
		"more given");
	refused("Month", "full incr", NULL, "31 levels");
	refused("Week", "full incr incr incr incr incr often", NULL,
		"'often' is not a level");
	refused("Week", "full incr incr incr incr incr 0", NULL,
		"'0' is not a level");
	refused("Week", NULL, "full", "write a level and a date");
	refused("Week", NULL, "full 12/25/2026 now", "a level and a date");
	refused("Week", NULL, "always 12/25/2026", "'always' is not a level");
	refused("Week", NULL, "full 02/30/2026", "is not a date");
	refused("Week", NULL, "full 02/29/2027", "is not a date");
	refused("Week", NULL, "full 13/01/2026", "is not a date");
	refused("Week", NULL, "full 12/25/26", "is not a date");
	refused("Week", NULL, "full 2026-1-", "is not a date");
	refused("Week", NULL, "full 12/25", "is not a date");
	refused("Week", NULL, "full 1969-12-31", "is not a date");
}

/* test_duplicate_override - one date, one level. */
static void test_duplicate_override(void **state)
{
	const char *ov[] = {"full 12/25/2026", "incr 2026-12-25"};
	struct nsr_buf why;

	NSR_UNUSED(state);
	nsr_buf_init(&why, 0);
	assert_int_equal(nsr_sched_parse("Week", NULL, ov, 2, &g_s, &why),
			 NSR_ERR_SYNTAX);
	assert_non_null(strstr(why.data, "two levels"));
	nsr_buf_release(&why);
}

/* test_start - group start times; 25:00 refused with a clear message. */
static void test_start(void **state)
{
	struct nsr_buf why;
	int s = -1;

	NSR_UNUSED(state);
	assert_int_equal(nsr_sched_parse_start("3:33", &s, NULL), NSR_OK);
	assert_int_equal(s, 3 * 3600 + 33 * 60);
	assert_int_equal(nsr_sched_parse_start("00:00", &s, NULL), NSR_OK);
	assert_int_equal(s, 0);
	assert_int_equal(nsr_sched_parse_start("23:59", &s, NULL), NSR_OK);
	assert_int_equal(s, 86340);
	nsr_buf_init(&why, 0);
	assert_int_equal(nsr_sched_parse_start("25:00", &s, &why),
			 NSR_ERR_SYNTAX);
	assert_non_null(strstr(why.data, "no such time of day"));
	nsr_buf_clear(&why);
	assert_int_equal(nsr_sched_parse_start("21:3", &s, &why),
			 NSR_ERR_SYNTAX);
	assert_non_null(strstr(why.data, "as 21:30"));
	nsr_buf_release(&why);
	assert_int_equal(nsr_sched_parse_start("12:60", &s, NULL),
			 NSR_ERR_SYNTAX);
	assert_int_equal(nsr_sched_parse_start("123:00", &s, NULL),
			 NSR_ERR_SYNTAX);
	assert_int_equal(nsr_sched_parse_start("", &s, NULL), NSR_ERR_SYNTAX);
	assert_int_equal(nsr_sched_parse_start("1:00 ", &s, NULL),
			 NSR_ERR_SYNTAX);
}

/* test_interval - 00:01 to 24:00. */
static void test_interval(void **state)
{
	int s = -1;

	NSR_UNUSED(state);
	assert_int_equal(nsr_sched_parse_interval("24:00", &s, NULL), NSR_OK);
	assert_int_equal(s, 86400);
	assert_int_equal(nsr_sched_parse_interval("0:01", &s, NULL), NSR_OK);
	assert_int_equal(s, 60);
	assert_int_equal(nsr_sched_parse_interval("6:30", &s, NULL), NSR_OK);
	assert_int_equal(s, 6 * 3600 + 1800);
	assert_int_equal(nsr_sched_parse_interval("0:00", &s, NULL),
			 NSR_ERR_SYNTAX);
	assert_int_equal(nsr_sched_parse_interval("24:01", &s, NULL),
			 NSR_ERR_SYNTAX);
	assert_int_equal(nsr_sched_parse_interval("daily", &s, NULL),
			 NSR_ERR_SYNTAX);
}

/* test_next_run - the start time, then every interval until midnight. */
static void test_next_run(void **state)
{
	/* 2026-11-25 00:00:00 UTC */
	const time_t day = 1795564800;

	NSR_UNUSED(state);
	setenv("TZ", "UTC", 1);
	tzset();
	assert_int_equal(nsr_sched_next_run(day, 3 * 3600, 86400),
			 day + 3 * 3600);
	/* At the start time itself: the next day's. */
	assert_int_equal(nsr_sched_next_run(day + 3 * 3600, 3 * 3600, 86400),
			 day + 86400 + 3 * 3600);
	/* Every 8 hours from 03:00: 03, 11, 19, then 03 the next day. */
	assert_int_equal(nsr_sched_next_run(day + 4 * 3600, 3 * 3600,
					    8 * 3600),
			 day + 11 * 3600);
	assert_int_equal(nsr_sched_next_run(day + 20 * 3600, 3 * 3600,
					    8 * 3600),
			 day + 86400 + 3 * 3600);
}

/* main - run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_levels),
		cmocka_unit_test(test_week),
		cmocka_unit_test(test_month),
		cmocka_unit_test(test_override),
		cmocka_unit_test(test_bad_schedules),
		cmocka_unit_test(test_duplicate_override),
		cmocka_unit_test(test_start),
		cmocka_unit_test(test_interval),
		cmocka_unit_test(test_next_run),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
