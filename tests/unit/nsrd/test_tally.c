/*
 * test_tally.c - nsrd's session tallies (daemons/nsrd/tally.c): a count
 * per name, nodes handed to the holders and given back whatever the
 * name became, a node gone at 0, names that share a bucket kept apart,
 * and a long random run of gets and puts against a plain array of
 * counts (counts, totals and the listed names agree at every step).
 */
#include "nsr/compat.h"

#include "nsr_test.h"
#include "tally.h"

/* test_counts - gets and puts of a few names. */
static void test_counts(void **state)
{
	struct tally t;
	struct tally_node *a1, *a2, *b1;

	(void)state;
	assert_int_equal(tally_init(&t, 3), 0);
	assert_int_equal(t.nb, 4); /* rounded up to a power of 2 */
	assert_int_equal(tally_count(&t, "a"), 0);
	a1 = tally_get(&t, "a");
	a2 = tally_get(&t, "a");
	b1 = tally_get(&t, "b");
	assert_non_null(a1);
	assert_ptr_equal(a1, a2); /* one node per name */
	assert_ptr_not_equal(a1, b1);
	assert_int_equal(tally_count(&t, "a"), 2);
	assert_int_equal(tally_count(&t, "b"), 1);
	assert_int_equal(t.nodes, 2);
	assert_int_equal(t.total, 3);
	tally_put(&t, a1);
	assert_int_equal(tally_count(&t, "a"), 1);
	tally_put(&t, a2);
	assert_int_equal(tally_count(&t, "a"), 0); /* gone at 0 */
	assert_int_equal(t.nodes, 1);
	tally_put(&t, NULL); /* nothing counted: nothing given back */
	assert_int_equal(t.total, 1);
	tally_put(&t, b1);
	assert_int_equal(t.nodes, 0);
	assert_int_equal(t.total, 0);
	tally_free(&t);
}

/* Names of the random run: 200 names in 8 buckets, so that most
 * buckets chain many of them. */
#define NAMES 200

/* Tally of what tally_each listed, to compare with the model. */
struct seen {
	unsigned count[NAMES];
	int bad;
};

/* see - one listed name. */
static void see(void *ctx, const char *name, unsigned count)
{
	struct seen *s = ctx;
	int i = atoi(name + 1);

	if (name[0] != 'n' || i < 0 || i >= NAMES || s->count[i])
		s->bad = 1;
	else
		s->count[i] = count;
}

/* test_random - 20,000 random gets and puts against a model. */
static void test_random(void **state)
{
	static struct tally_node *held[4096];
	static int held_name[4096];
	unsigned model[NAMES] = {0};
	size_t nheld = 0, total = 0;
	struct tally t;
	unsigned seed = 42;

	(void)state;
	assert_int_equal(tally_init(&t, 8), 0);
	for (int step = 0; step < 20000; step++) {
		seed = seed * 1103515245u + 12345u;
		if (nheld < 4096 && (nheld == 0 || (seed >> 16) % 3 != 0)) {
			char name[16];
			int i = (int)((seed >> 8) % NAMES);

			snprintf(name, sizeof(name), "n%d", i);
			held[nheld] = tally_get(&t, name);
			assert_non_null(held[nheld]);
			held_name[nheld++] = i;
			model[i]++;
			total++;
		} else {
			size_t k = (seed >> 4) % nheld;

			tally_put(&t, held[k]);
			model[held_name[k]]--;
			total--;
			held[k] = held[--nheld];
			held_name[k] = held_name[nheld];
		}
		if (step % 997 == 0 || step == 19999) {
			struct seen s;
			size_t names = 0;

			memset(&s, 0, sizeof(s));
			tally_each(&t, see, &s);
			assert_false(s.bad);
			for (int i = 0; i < NAMES; i++) {
				char name[16];

				snprintf(name, sizeof(name), "n%d", i);
				assert_int_equal(tally_count(&t, name),
						 model[i]);
				assert_int_equal(s.count[i], model[i]);
				names += model[i] > 0;
			}
			assert_int_equal(t.nodes, names);
			assert_int_equal(t.total, total);
		}
	}
	while (nheld)
		tally_put(&t, held[--nheld]);
	assert_int_equal(t.nodes, 0);
	assert_int_equal(t.total, 0);
	tally_free(&t);
}

/* main - the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
