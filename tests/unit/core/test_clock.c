/*
 * test_clock.c - the real clock and the test clock a file advances
 * (clock.h).
 */
#include "nsr/compat.h"

#include <stdio.h>
#include <unistd.h>

#include "nsr/clock.h"
#include "nsr/err.h"
#include "nsr_test.h"

/* put - write text to path through a rename, as tests do. */
static void put(const char *path, const char *text)
{
	char tmp[512];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(rename(tmp, path), 0);
}

/* test_parse - offsets with signs and blanks; garbage refused. */
static void test_parse(void **state)
{
	int64_t v = 1;

	NSR_UNUSED(state);
	assert_int_equal(nsr_clock_parse_offset("86400\n", 6, &v), NSR_OK);
	assert_int_equal(v, 86400);
	assert_int_equal(nsr_clock_parse_offset(" -3600 ", 7, &v), NSR_OK);
	assert_int_equal(v, -3600);
	assert_int_equal(nsr_clock_parse_offset("+5", 2, &v), NSR_OK);
	assert_int_equal(v, 5);
	assert_int_equal(nsr_clock_parse_offset("", 0, &v), NSR_ERR_SYNTAX);
	assert_int_equal(nsr_clock_parse_offset("-", 1, &v), NSR_ERR_SYNTAX);
	assert_int_equal(nsr_clock_parse_offset("12x", 3, &v),
			 NSR_ERR_SYNTAX);
	assert_int_equal(nsr_clock_parse_offset("1 2", 3, &v),
			 NSR_ERR_SYNTAX);
	assert_int_equal(nsr_clock_parse_offset("99999999999999999999", 20,
						&v),
			 NSR_ERR_SYNTAX);
}

/* test_real - without NSR_TEST_CLOCK the clock is the real time. */
static void test_real(void **state)
{
	time_t a, b, c;

	NSR_UNUSED(state);
	unsetenv("NSR_TEST_CLOCK");
	a = time(NULL);
	b = nsr_clock_now();
	c = time(NULL);
	assert_true(a <= b && b <= c);
	assert_int_equal(nsr_clock_offset(), 0);
}

/* test_advance - the clock follows the file as a test rewrites it. */
static void test_advance(void **state)
{
	char dir[] = "/tmp/nsr_clock_XXXXXX";
	char path[512];
	time_t now;

	NSR_UNUSED(state);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/clock", dir);
	setenv("NSR_TEST_CLOCK", path, 1);
	/* No file yet: real time. */
	assert_int_equal(nsr_clock_offset(), 0);
	put(path, "86400\n");
	assert_int_equal(nsr_clock_offset(), 86400);
	now = time(NULL);
	assert_true(nsr_clock_now() >= now + 86400);
	assert_true(nsr_clock_now() <= time(NULL) + 86400);
	/* Advanced by a week: re-read although the size is the same. */
	put(path, "691200");
	assert_int_equal(nsr_clock_offset(), 691200);
	put(path, "-60");
	assert_int_equal(nsr_clock_offset(), -60);
	/* A malformed content counts as no offset. */
	put(path, "soon");
	assert_int_equal(nsr_clock_offset(), 0);
	put(path, "120");
	assert_int_equal(nsr_clock_offset(), 120);
	/* The file removed: real time again. */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(nsr_clock_offset(), 0);
	unsetenv("NSR_TEST_CLOCK");
	assert_int_equal(rmdir(dir), 0);
}

/* test_mono - the monotonic clock in ms and us agree and do not go
 * back; a 20 ms sleep shows in both. */
static void test_mono(void **state)
{
	long long ms = nsr_clock_mono_ms(), us = nsr_clock_mono_us();

	NSR_UNUSED(state);
	assert_true(us / 1000 >= ms && us / 1000 - ms <= 1000);
	usleep(20000);
	assert_true(nsr_clock_mono_us() - us >= 20000);
	assert_true(nsr_clock_mono_ms() - ms >= 20);
}

/* main - run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_real),
		cmocka_unit_test(test_advance),
		cmocka_unit_test(test_mono),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
