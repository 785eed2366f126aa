/*
 * test_clone_items.c - the save sets nsrclone and nsrstage copy: rows of
 * the media database come one per copy and volume, and each save set is
 * kept once, its first row's copy, in the order save sets first came;
 * a list of a few hundred thousand rows is made unique in n log n.
 */
#include "nsr/compat.h"

#include "nsr/clone.h"
#include "nsr/err.h"
#include "nsr_test.h"

/* test_unique - first entries kept, in first-come order. */
static void test_unique(void **state)
{
	struct nsr_clone_item v[] = {
		{7, 1}, {3, 2}, {7, 3}, {5, 4}, {3, 5}, {9, 6}, {5, 7}, {7, 8},
	};
	size_t n = NSR_ARRAY_SIZE(v);

	NSR_UNUSED(state);
	assert_int_equal(nsr_clone_items_unique(v, &n), NSR_OK);
	assert_int_equal(n, 4);
	assert_int_equal(v[0].ssid, 7);
	assert_int_equal(v[0].cloneid, 1);
	assert_int_equal(v[1].ssid, 3);
	assert_int_equal(v[1].cloneid, 2);
	assert_int_equal(v[2].ssid, 5);
	assert_int_equal(v[2].cloneid, 4);
	assert_int_equal(v[3].ssid, 9);
	n = 0;
	assert_int_equal(nsr_clone_items_unique(v, &n), NSR_OK);
	assert_int_equal(n, 0);
	n = 1;
	assert_int_equal(nsr_clone_items_unique(v, &n), NSR_OK);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].ssid, 7);
}

/* test_large - 300,000 rows, every save set on three volumes (as a
 * staging of a large volume lists them): 100,000 left, in order. */
static void test_large(void **state)
{
	enum { SETS = 100000, COPIES = 3 };
	struct nsr_clone_item *v = malloc(SETS * COPIES * sizeof(*v));
	size_t n = 0;

	NSR_UNUSED(state);
	assert_non_null(v);
	for (uint32_t c = 0; c < COPIES; c++)
		for (uint32_t i = 0; i < SETS; i++) {
			v[n].ssid = (i * 7919u) % SETS + 1;
			v[n++].cloneid = c + 1;
		}
	assert_int_equal(nsr_clone_items_unique(v, &n), NSR_OK);
	assert_int_equal(n, SETS);
	for (uint32_t i = 0; i < SETS; i++) {
		assert_int_equal(v[i].ssid, (i * 7919u) % SETS + 1);
		assert_int_equal(v[i].cloneid, 1);
	}
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unique),
		cmocka_unit_test(test_large),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
