/*
 * test_stripes.c - striped locks (nsr/stripes.h): a key's stripe is in
 * range, stable, and keys spread over every stripe; a stripe excludes
 * (counters changed read-yield-write by four threads come out exact);
 * holders of overlapping sets, built in opposite key orders, never
 * deadlock (bounded rounds).
 */
#include "nsr/compat.h"

#include <pthread.h>
#include <sched.h>

#include "nsr/stripes.h"
#include "nsr_test.h"

#define ROUNDS 20000

static struct nsr_stripes g_s;
static unsigned g_count[8]; /* one counter per key 0..7 */

/* test_spread - stable, in range, every stripe used by 6,400 ids. */
static void test_spread(void **state)
{
	unsigned used[NSR_STRIPES] = {0}, min = ~0u, max = 0;

	NSR_UNUSED(state);
	for (uint32_t id = 1; id <= 6400; id++) {
		unsigned s = nsr_stripe_of(&id, sizeof(id));

		assert_true(s < NSR_STRIPES);
		assert_int_equal(s, nsr_stripe_of(&id, sizeof(id)));
		used[s]++;
	}
	for (int i = 0; i < NSR_STRIPES; i++) {
		min = NSR_MIN(min, used[i]);
		max = NSR_MAX(max, used[i]);
	}
	assert_true(min > 0);
	assert_true(max < 4 * 100); /* 100 each if even */
}

/* bump - ROUNDS times: key k's counter, read, yield, write, under its
 * stripe. */
static void *bump(void *arg)
{
	uint32_t k = (uint32_t)(uintptr_t)arg % 8;

	for (int i = 0; i < ROUNDS; i++) {
		unsigned s = nsr_stripe_of(&k, sizeof(k)), v;

		nsr_stripes_lock(&g_s, s);
		v = g_count[k];
		if (i % 64 == 0)
			sched_yield();
		g_count[k] = v + 1;
		nsr_stripes_unlock(&g_s, s);
	}
	return NULL;
}

/* test_exclusion - four threads, two per key. */
static void test_exclusion(void **state)
{
	pthread_t t[4];

	NSR_UNUSED(state);
	for (uintptr_t i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, bump,
						(void *)(i % 2)),
				 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(g_count[0], 2 * ROUNDS);
	assert_int_equal(g_count[1], 2 * ROUNDS);
}

/* sets - ROUNDS times: keys 0..7 (reversed when arg is set) as a set,
 * then each counter bumped under the set. */
static void *sets(void *arg)
{
	int rev = arg != NULL;

	for (int i = 0; i < ROUNDS; i++) {
		nsr_stripe_set set = 0;

		for (uint32_t j = 0; j < 8; j++) {
			uint32_t k = rev ? 7 - j : j;

			nsr_stripe_set_add(&set, nsr_stripe_of(&k, sizeof(k)));
		}
		nsr_stripes_lock_set(&g_s, set);
		for (int k = 2; k < 8; k++)
			g_count[k]++;
		nsr_stripes_unlock_set(&g_s, set);
	}
	return NULL;
}

/* test_sets - two set holders in opposite orders and a one-stripe
 * holder: no deadlock, every count exact. */
static void test_sets(void **state)
{
	pthread_t a, b;

	NSR_UNUSED(state);
	memset(g_count, 0, sizeof(g_count));
	assert_int_equal(pthread_create(&a, NULL, sets, NULL), 0);
	assert_int_equal(pthread_create(&b, NULL, sets, (void *)1), 0);
	bump((void *)1);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	for (int k = 2; k < 8; k++)
		assert_int_equal(g_count[k], 2 * ROUNDS);
	assert_int_equal(g_count[1], ROUNDS);
}

/* main - run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spread),
		cmocka_unit_test(test_exclusion),
		cmocka_unit_test(test_sets),
	};

	nsr_stripes_init(&g_s);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
