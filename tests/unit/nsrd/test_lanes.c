/*
 * test_lanes.c - SAVE_START's lanes (daemons/nsrd/lanes.c): the media
 * database and jobs database halves of a lane are held apart, a start
 * waits for a half only while every lane's half of that kind is taken,
 * and is woken when one comes back; closing hands out no more and waits
 * for every half to come back.  Handles are made on first use and
 * connect only at their first call, which these tests never make.
 */
#include "nsr/compat.h"

#include <pthread.h>
#include <time.h>

#include "lanes.h"
#include "nsr/err.h"
#include "nsr_test.h"

static struct lanes g_ls;

/* A thread that takes a half and says when it has it. */
struct taker {
	pthread_t th;
	enum lane_half h;
	struct lane *got;
	int closed;
	volatile int done;
};

/* take - lanes_get in a thread of its own. */
static void *take(void *arg)
{
	struct taker *t = arg;

	t->got = lanes_get(&g_ls, t->h, &t->closed);
	t->done = 1;
	return NULL;
}

/* closer - lanes_close in a thread of its own. */
static void *closer(void *arg)
{
	lanes_close(arg);
	return NULL;
}

/* nap - 20 ms, for a thread that is not supposed to get anywhere. */
static void nap(void)
{
	struct timespec ts = {0, 20 * 1000 * 1000};

	nanosleep(&ts, NULL);
}

static int setup(void **state)
{
	NSR_UNUSED(state);
	lanes_init(&g_ls);
	return 0;
}

static int teardown(void **state)
{
	NSR_UNUSED(state);
	if (!g_ls.closed)
		lanes_close(&g_ls);
	return 0;
}

static void test_halves_apart(void **state)
{
	struct lane *m[NSRD_LANES], *j;
	struct taker t = {0};
	int closed = 1;

	NSR_UNUSED(state);
	for (int i = 0; i < NSRD_LANES; i++) {
		m[i] = lanes_get(&g_ls, LANE_MMDB, &closed);
		assert_non_null(m[i]);
		assert_int_equal(closed, 0);
		assert_non_null(m[i]->mmdb);
		assert_null(m[i]->jobd); /* made when that half is first used */
	}
	/* Every media database half is taken: the jobs database half of a
	 * lane still comes at once. */
	j = lanes_get(&g_ls, LANE_JOBD, &closed);
	assert_ptr_equal(j, m[0]);
	assert_non_null(j->jobd);
	/* Another media database half waits... */
	t.h = LANE_MMDB;
	assert_int_equal(pthread_create(&t.th, NULL, take, &t), 0);
	nap();
	assert_int_equal(t.done, 0);
	/* ... and a jobs database half coming back does not wake it. */
	lanes_put(&g_ls, j, LANE_JOBD);
	nap();
	assert_int_equal(t.done, 0);
	/* A media database half coming back does; the handle stays. */
	lanes_put(&g_ls, m[5], LANE_MMDB);
	assert_int_equal(pthread_join(t.th, NULL), 0);
	assert_ptr_equal(t.got, m[5]);
	assert_int_equal(t.closed, 0);
	for (int i = 0; i < NSRD_LANES; i++)
		lanes_put(&g_ls, m[i], LANE_MMDB);
}

static void test_close_waits(void **state)
{
	struct lane *l, *m[NSRD_LANES];
	struct taker t = {0};
	pthread_t c;
	int closed = 0;

	NSR_UNUSED(state);
	for (int i = 0; i < NSRD_LANES; i++)
		m[i] = lanes_get(&g_ls, LANE_MMDB, &closed);
	l = lanes_get(&g_ls, LANE_JOBD, &closed);
	assert_non_null(l);
	/* A start waiting for a media database half is let go by the
	 * close, with nothing. */
	t.h = LANE_MMDB;
	assert_int_equal(pthread_create(&t.th, NULL, take, &t), 0);
	nap();
	assert_int_equal(t.done, 0);
	assert_int_equal(pthread_create(&c, NULL, closer, &g_ls), 0);
	assert_int_equal(pthread_join(t.th, NULL), 0);
	assert_null(t.got);
	assert_int_equal(t.closed, 1);
	/* The close waits for the halves still taken. */
	nap();
	assert_non_null(l->jobd);
	for (int i = 0; i < NSRD_LANES; i++)
		lanes_put(&g_ls, m[i], LANE_MMDB);
	nap();
	assert_non_null(l->jobd); /* its jobs database half is still out */
	lanes_put(&g_ls, l, LANE_JOBD);
	assert_int_equal(pthread_join(c, NULL), 0);
	assert_null(l->jobd);
	assert_null(m[0]->mmdb);
	/* Closed: nothing more is handed out. */
	assert_null(lanes_get(&g_ls, LANE_JOBD, &closed));
	assert_int_equal(closed, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_halves_apart, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_close_waits, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
