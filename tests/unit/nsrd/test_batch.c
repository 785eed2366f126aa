/*
 * test_batch.c - flat combining (daemons/nsrd/batch.c): every request
 * comes back done with the rc its batch's run gave it, exactly once, in
 * batches of at most BATCH_MAX, with never more batches running than
 * allowed; while batches run, requests queue and the next batch takes
 * many at once.
 */
#include "nsr/compat.h"

#include <pthread.h>
#include <time.h>

#include "batch.h"
#include "nsr/err.h"
#include "nsr_test.h"

#define THREADS 200

static struct batch g_b;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_running, g_most;	  /* batches in run now, at most */
static int g_seen[THREADS];	  /* times each request was run */
static size_t g_biggest;	  /* largest batch */

/* A request: its index. */
struct req {
	int i;
};

/* run - the batch's work: note what it saw, give each item rc -i. */
static void run(void *ctx, struct batch_item **items, size_t n)
{
	struct timespec ts = {0, 2 * 1000 * 1000};

	NSR_UNUSED(ctx);
	pthread_mutex_lock(&g_mu);
	g_running++;
	if (g_running > g_most)
		g_most = g_running;
	if (n > g_biggest)
		g_biggest = n;
	for (size_t k = 0; k < n; k++) {
		struct req *r = items[k]->arg;

		g_seen[r->i]++;
	}
	pthread_mutex_unlock(&g_mu);
	nanosleep(&ts, NULL); /* long enough for others to queue */
	for (size_t k = 0; k < n; k++)
		items[k]->rc = -((struct req *)items[k]->arg)->i;
	pthread_mutex_lock(&g_mu);
	g_running--;
	pthread_mutex_unlock(&g_mu);
}

/* one - a thread's request; fails the test if its rc is not its own. */
static void *one(void *arg)
{
	struct req *r = arg;
	int rc;

	rc = batch_do(&g_b, r);
	return (void *)(intptr_t)(rc == -r->i);
}

/* burst - THREADS requests at once with leaders batches allowed. */
static void burst(int leaders)
{
	pthread_t th[THREADS];
	struct req r[THREADS];

	memset(g_seen, 0, sizeof(g_seen));
	g_running = g_most = 0;
	g_biggest = 0;
	batch_init(&g_b, leaders, run, NULL);
	for (int i = 0; i < THREADS; i++) {
		r[i].i = i;
		assert_int_equal(pthread_create(&th[i], NULL, one, &r[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		void *ok = NULL;

		assert_int_equal(pthread_join(th[i], &ok), 0);
		assert_true(ok != NULL); /* its own rc came back */
		assert_int_equal(g_seen[i], 1);
	}
	assert_true(g_most >= 1);
	assert_true(g_most <= leaders);
	assert_true(g_biggest <= BATCH_MAX);
	assert_int_equal(g_b.items, THREADS);
	/* Requests queued while batches ran: fewer batches than requests. */
	assert_true(g_b.batches < THREADS);
	assert_null(g_b.head);
	assert_int_equal(g_b.leaders, 0);
}

static void test_one_leader(void **state)
{
	NSR_UNUSED(state);
	burst(1);
	/* One at a time, 2 ms each: 200 requests cannot take 200 batches'
	 * worth of time one by one; they pile up behind each batch. */
	assert_true(g_biggest > 1);
}

static void test_four_leaders(void **state)
{
	NSR_UNUSED(state);
	burst(4);
}

static void test_alone(void **state)
{
	struct req r = {7};

	NSR_UNUSED(state);
	batch_init(&g_b, 4, run, NULL);
	memset(g_seen, 0, sizeof(g_seen));
	assert_int_equal(batch_do(&g_b, &r), -7);
	assert_int_equal(g_seen[7], 1);
	assert_int_equal(g_b.batches, 1);
	assert_int_equal(g_b.items, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alone),
		cmocka_unit_test(test_one_leader),
		cmocka_unit_test(test_four_leaders),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
