/*
 * test_grow.c - nsr_grow (grow.h): room made by doubling from the first
 * capacity, elements kept, nothing done while there is room, and a size
 * that would overflow refused with the array as it was.
 */
#include "nsr/compat.h"

#include <stdint.h>
#include <stdlib.h>

#include "nsr/err.h"
#include "nsr/grow.h"
#include "nsr_test.h"

/* test_doubling - 1,000 appends keep every element; capacity 4, 8, ... */
static void test_doubling(void **state)
{
	uint32_t *v = NULL;
	size_t cap = 0;

	NSR_UNUSED(state);
	for (uint32_t i = 0; i < 1000; i++) {
		assert_int_equal(nsr_grow((void **)&v, i, &cap, sizeof(*v), 4),
				 NSR_OK);
		assert_true(cap > i);
		assert_true(cap >= 4 && (cap & (cap - 1)) == 0);
		v[i] = i * 7;
	}
	assert_int_equal(cap, 1024);
	for (uint32_t i = 0; i < 1000; i++)
		assert_int_equal(v[i], i * 7);
	/* room left: nothing changes */
	assert_int_equal(nsr_grow((void **)&v, 1000, &cap, sizeof(*v), 4),
			 NSR_OK);
	assert_int_equal(cap, 1024);
	free(v);
}

/* test_overflow - a size past SIZE_MAX is refused, the array kept. */
static void test_overflow(void **state)
{
	uint64_t *v = NULL, *was;
	size_t cap = 0;

	NSR_UNUSED(state);
	assert_int_equal(nsr_grow((void **)&v, 0, &cap, sizeof(*v), 0),
			 NSR_OK);
	assert_int_equal(cap, 1); /* first 0 means 1 */
	v[0] = 42;
	was = v;
	assert_int_equal(nsr_grow((void **)&v, 1, &cap, SIZE_MAX / 2 + 1, 1),
			 NSR_ERR_NOMEM);
	assert_ptr_equal(v, was);
	assert_int_equal(cap, 1);
	assert_int_equal(v[0], 42);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_doubling),
		cmocka_unit_test(test_overflow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
