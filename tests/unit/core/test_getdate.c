/*
 * test_getdate.c - nsr_getdate against a fixed "now" in fixed time zones.
 * Expected values are computed independently with timegm().
 */
#include "nsr/compat.h"

#include <time.h>

#include "nsr/err.h"
#include "nsr/getdate.h"
#include "nsr_test.h"

/* Wednesday 2024-06-05 14:30:15 UTC. */
#define NOW ((time_t)1717597815)

/* utc - seconds for a UTC calendar time. */
static time_t utc(int y, int mo, int d, int h, int mi, int s)
{
	struct tm tm;

	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = s;
	return timegm(&tm);
}

/* set_tz - switch the process time zone. */
static void set_tz(const char *tz)
{
	setenv("TZ", tz, 1);
	tzset();
}

/* check - text evaluates to want relative to now. */
static void check(const char *text, time_t now, time_t want)
{
	struct nsr_getdate_error err;
	time_t got = 0;
	int rc = nsr_getdate_err(text, now, &got, &err);

	if (rc != NSR_OK)
		fail_msg("'%s': error %d at %zu: %s", text, rc, err.offset,
			 err.msg);
	if (got != want)
		fail_msg("'%s': got %lld, want %lld (diff %lld s)", text,
			 (long long)got, (long long)want,
			 (long long)(got - want));
}

/* check_err - text fails at offset with a message containing what. */
static void check_err(const char *text, int rc, size_t offset,
		      const char *what)
{
	struct nsr_getdate_error err;
	time_t got = 12345;

	memset(&err, 0, sizeof(err));
	assert_int_equal(nsr_getdate_err(text, NOW, &got, &err), rc);
	assert_int_equal(got, 12345);
	if (err.offset != offset || !strstr(err.msg, what))
		fail_msg("'%s': got offset %zu '%s', want %zu '%s'", text,
			 err.offset, err.msg, offset, what);
}

static void test_relative(void **state)
{
	NSR_UNUSED(state);
	set_tz("UTC");
	check("now", NOW, NOW);
	check("3 days ago", NOW, NOW - 3 * 86400);
	check("22 hours ago", NOW, NOW - 22 * 3600);
	check("48 hours ago", NOW, NOW - 48 * 3600);
	check("2 day ago", NOW, NOW - 2 * 86400);
	check("-2 days", NOW, NOW - 2 * 86400);
	check("+1 week", NOW, NOW + 7 * 86400);
	check("1 fortnight", NOW, NOW + 14 * 86400);
	check("last week", NOW, NOW - 7 * 86400);
	check("next week", NOW, NOW + 7 * 86400);
	check("last month", NOW, utc(2024, 5, 5, 14, 30, 15));
	check("last year", NOW, utc(2023, 6, 5, 14, 30, 15));
	check("a week ago", NOW, NOW - 7 * 86400);
	check("1 day 2 hours ago", NOW, NOW - 26 * 3600);
	check("90 MINUTES AGO", NOW, NOW - 5400);
	check("10 secs ago", NOW, NOW - 10);
	check("now -1 hour", NOW, NOW - 3600);
	check("1 month ago", utc(2024, 3, 31, 0, 0, 0),
	      utc(2024, 3, 2, 0, 0, 0)); /* Feb 31 rolls over, as mktime */
}

static void test_days(void **state)
{
	NSR_UNUSED(state);
	set_tz("UTC");
	check("today", NOW, utc(2024, 6, 5, 0, 0, 0));
	check("yesterday", NOW, utc(2024, 6, 4, 0, 0, 0));
	check("tomorrow", NOW, utc(2024, 6, 6, 0, 0, 0));
	check("yesterday 22:00", NOW, utc(2024, 6, 4, 22, 0, 0));
	check("today noon", NOW, utc(2024, 6, 5, 12, 0, 0));
	/* NOW is a Wednesday. */
	check("wednesday", NOW, utc(2024, 6, 5, 0, 0, 0));
	check("friday", NOW, utc(2024, 6, 7, 0, 0, 0));
	check("monday", NOW, utc(2024, 6, 10, 0, 0, 0));
	check("last monday", NOW, utc(2024, 6, 3, 0, 0, 0));
	check("last wednesday", NOW, utc(2024, 5, 29, 0, 0, 0));
	check("next wednesday", NOW, utc(2024, 6, 12, 0, 0, 0));
	check("last Fri 3pm", NOW, utc(2024, 5, 31, 15, 0, 0));
	check("tues", NOW, utc(2024, 6, 11, 0, 0, 0));
}

static void test_absolute(void **state)
{
	NSR_UNUSED(state);
	set_tz("UTC");
	check("06/03/24", NOW, utc(2024, 6, 3, 0, 0, 0));
	check("12/31/99", NOW, utc(1999, 12, 31, 0, 0, 0));
	check("02/29/2024", NOW, utc(2024, 2, 29, 0, 0, 0));
	check("7/4", NOW, utc(2024, 7, 4, 0, 0, 0));
	check("2022-02-24", NOW, utc(2022, 2, 24, 0, 0, 0));
	check("2022-02-24T10:11:12", NOW, utc(2022, 2, 24, 10, 11, 12));
	check("2022-02-24 10:11", NOW, utc(2022, 2, 24, 10, 11, 0));
	check("24 February 2022", NOW, utc(2022, 2, 24, 0, 0, 0));
	check("February 24, 2022", NOW, utc(2022, 2, 24, 0, 0, 0));
	check("Feb. 24 2022 08:38:40 PM", NOW, utc(2022, 2, 24, 20, 38, 40));
	check("sept 9", NOW, utc(2024, 9, 9, 0, 0, 0));
	check("24 feb 10:00", NOW, utc(2024, 2, 24, 10, 0, 0));
	check("05/06/09 08:38:40 AM", NOW, utc(2009, 5, 6, 8, 38, 40));
	check("12:00 am", NOW, utc(2024, 6, 5, 0, 0, 0));
	check("12:30 pm", NOW, utc(2024, 6, 5, 12, 30, 0));
	check("10pm", NOW, utc(2024, 6, 5, 22, 0, 0));
	check("3:33", NOW, utc(2024, 6, 5, 3, 33, 0));
	check("06/01/24 -1 day", NOW, utc(2024, 5, 31, 0, 0, 0));
	check("1717597815", 0, NOW);
	check("@1717597815", 0, NOW);
	check("@0", NOW, 0);
}

static void test_local_zone(void **state)
{
	/* 2024-03-11 12:00 EDT, the day after clocks went forward. */
	time_t now = utc(2024, 3, 11, 16, 0, 0);

	NSR_UNUSED(state);
	set_tz("EST5EDT,M3.2.0,M11.1.0");
	check("today", now, utc(2024, 3, 11, 4, 0, 0));
	check("yesterday", now, utc(2024, 3, 10, 5, 0, 0));
	/* A calendar day back is 23 real hours across the change. */
	check("1 day ago", now, utc(2024, 3, 10, 16, 0, 0));
	check("24 hours ago", now, now - 86400);
	check("03/01/24 09:00", now, utc(2024, 3, 1, 14, 0, 0));
	set_tz("UTC");
}

/* test_text - nsr_getdate_text writes what nsr_getdate reads back to
 * the same second, in two time zones and over the two-digit years' edge
 * (four digits outside 1970-2069). */
static void test_text(void **state)
{
	static const time_t ts[] = { 0, 86399, 1795881739, 3124137599LL,
				     3155760000LL, 4102444800LL };
	static const char *const zones[] = { "UTC",
					     "EST5EDT,M3.2.0,M11.1.0" };
	char buf[32];

	NSR_UNUSED(state);
	for (size_t z = 0; z < 2; z++) {
		set_tz(zones[z]);
		for (size_t i = 0; i < sizeof(ts) / sizeof(ts[0]); i++) {
			nsr_getdate_text(ts[i], buf, sizeof(buf));
			check(buf, NOW, ts[i]);
		}
	}
	set_tz("UTC");
	nsr_getdate_text(utc(2026, 11, 28, 16, 42, 19), buf, sizeof(buf));
	assert_string_equal(buf, "11/28/26 16:42:19");
	nsr_getdate_text(utc(2070, 1, 1, 0, 0, 0), buf, sizeof(buf));
	assert_string_equal(buf, "01/01/2070 00:00:00");
}

static void test_errors(void **state)
{
	char longtext[NSR_GETDATE_MAX + 8];

	NSR_UNUSED(state);
	set_tz("UTC");
	check_err("", NSR_ERR_SYNTAX, 0, "empty");
	check_err("3 dayz ago", NSR_ERR_SYNTAX, 0, "expected a date");
	check_err("yesterday blah", NSR_ERR_SYNTAX, 10, "unknown word");
	check_err("02/30/24", NSR_ERR_SYNTAX, 0, "no such day");
	check_err("13/01/24", NSR_ERR_SYNTAX, 0, "month out of range");
	check_err("25:00", NSR_ERR_SYNTAX, 0, "hour out of range");
	check_err("10:61", NSR_ERR_SYNTAX, 0, "minutes out of range");
	check_err("13pm", NSR_ERR_SYNTAX, 0, "am/pm");
	check_err("today yesterday", NSR_ERR_SYNTAX, 6, "more than one date");
	check_err("10:00 11:00", NSR_ERR_SYNTAX, 6, "more than one time");
	check_err("ago", NSR_ERR_SYNTAX, 0, "'ago' without");
	check_err("3 days ago ago", NSR_ERR_SYNTAX, 11, "'ago' without");
	check_err("last", NSR_ERR_SYNTAX, 4, "expected a unit");
	check_err("- 3", NSR_ERR_SYNTAX, 3, "expected a unit");
	check_err("01/", NSR_ERR_SYNTAX, 3, "expected a day");
	check_err("now; rm", NSR_ERR_SYNTAX, 3, "unexpected character");
	check_err("1 2", NSR_ERR_SYNTAX, 0, "expected a date");
	check_err("99999999999999999999", NSR_ERR_SYNTAX, 0, "too large");
	check_err("999999999 years ago", NSR_ERR_SYNTAX, 0, "too large");
	check_err("february", NSR_ERR_SYNTAX, 8, "expected a day");
	check_err("@", NSR_ERR_SYNTAX, 1, "expected seconds");
	memset(longtext, 'a', sizeof(longtext) - 1);
	longtext[sizeof(longtext) - 1] = '\0';
	check_err(longtext, NSR_ERR_TOOBIG, NSR_GETDATE_MAX, "too long");
	assert_int_equal(nsr_getdate("99999999 years", NOW, &(time_t){0}),
			 NSR_ERR_INVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_relative),
		cmocka_unit_test(test_days),
		cmocka_unit_test(test_absolute),
		cmocka_unit_test(test_local_zone),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
