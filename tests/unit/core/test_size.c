/*
 * test_size.c - the one size grammar (size.h).
 */
#include "nsr/compat.h"

#include "nsr/err.h"
#include "nsr/size.h"
#include "nsr_test.h"

/* test_sizes - units, fractions, junk and overflow. */
static void test_sizes(void **state)
{
	long long n;

	NSR_UNUSED(state);
	assert_int_equal(nsr_size_parse("512", &n), NSR_OK);
	assert_int_equal(n, 512);
	assert_int_equal(nsr_size_parse("7k", &n), NSR_OK);
	assert_int_equal(n, 7168);
	assert_int_equal(nsr_size_parse("2 MB", &n), NSR_OK);
	assert_int_equal(n, 2 << 20);
	assert_int_equal(nsr_size_parse("0.5GB", &n), NSR_OK);
	assert_int_equal(n, 1 << 29);
	assert_int_equal(nsr_size_parse("3B", &n), NSR_OK);
	assert_int_equal(n, 3);
	/* five or six decimals of a PB: frac << 50 must not wrap (fuzzing) */
	assert_int_equal(nsr_size_parse("0.123456 PB", &n), NSR_OK);
	assert_int_equal(n, 138999098899162LL);
	assert_int_equal(nsr_size_parse("1.999999P", &n), NSR_OK);
	assert_int_equal(n, (1LL << 50) + 1125898780942717LL);
	assert_int_equal(nsr_size_parse("1.", &n), NSR_ERR_SYNTAX);
	assert_int_equal(nsr_size_parse("GB", &n), NSR_ERR_SYNTAX);
	assert_int_equal(nsr_size_parse("5 GBx", &n), NSR_ERR_SYNTAX);
	assert_int_equal(nsr_size_parse("9000000 PB", &n),
			 NSR_ERR_TOOBIG);
	assert_int_equal(nsr_size_parse("99999999999999999999", &n),
			 NSR_ERR_TOOBIG);

	/* What the block size grammars of nsrmm and nsrd used to let
	 * through is refused now. */
	assert_int_equal(nsr_size_parse("256Kx", &n), NSR_ERR_SYNTAX);
	assert_int_equal(nsr_size_parse("", &n), NSR_ERR_SYNTAX);
	assert_int_equal(nsr_size_parse("-1", &n), NSR_ERR_SYNTAX);
	assert_int_equal(nsr_size_parse("4000 MB", &n), NSR_OK);
	assert_int_equal(n, 4000LL << 20);
	assert_int_equal(nsr_size_parse(" 8 m ", &n), NSR_OK);
	assert_int_equal(n, 8 << 20);
}

/* main - run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
