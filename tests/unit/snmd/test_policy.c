/*
 * test_policy.c - nsrsnmd's mover policy (daemons/nsrsnmd/policy.c): how
 * many movers a device may have, which mover takes one more session or
 * whether another starts (dynamic nsrmmd), and the throttle of a mover
 * that keeps dying right after its start.
 */
#include "nsr/compat.h"

#include <sys/wait.h>

#include "nsr_test.h"
#include "snmd.h"

/* slot - a device of media type with target sessions ts and the movers
 * nsrd allows (max nsrmmd count). */
static struct snmd_slot slot(const char *media, unsigned ts, unsigned max)
{
	struct snmd_slot s;

	memset(&s, 0, sizeof(s));
	s.media_type = (char *)media;
	s.target_sessions = ts;
	s.max_movers = max;
	return s;
}

/* test_limit - one mover for a tape or vtape whatever nsrd asks; an AFTD
 * what nsrd asks, at least 1, at most SNMD_MOVERS_MAX. */
static void test_limit(void **state)
{
	struct snmd_slot s;

	NSR_UNUSED(state);
	s = slot("tape", 4, 8);
	assert_int_equal(snmd_policy_mover_limit(&s), 1);
	s = slot("vtape", 4, 8);
	assert_int_equal(snmd_policy_mover_limit(&s), 1);
	s = slot("adv_file", 4, 0);
	assert_int_equal(snmd_policy_mover_limit(&s), 1);
	s = slot("adv_file", 4, 1);
	assert_int_equal(snmd_policy_mover_limit(&s), 1);
	s = slot("adv_file", 4, 5);
	assert_int_equal(snmd_policy_mover_limit(&s), 5);
	s = slot("adv_file", 4, 1000);
	assert_int_equal(snmd_policy_mover_limit(&s), SNMD_MOVERS_MAX);
}

/* test_choose - the least loaded running mover; another one (-1) when
 * none runs, or when every running one serves target sessions or more
 * and the limit allows; at the limit the least loaded, over its target. */
static void test_choose(void **state)
{
	struct snmd_slot s = slot("adv_file", 3, 3);
	int running[SNMD_MOVERS_MAX] = {0};
	unsigned sessions[SNMD_MOVERS_MAX] = {0};

	NSR_UNUSED(state);
	assert_int_equal(snmd_policy_choose(&s, running, sessions), -1);
	running[4] = 1;
	sessions[4] = 2;
	assert_int_equal(snmd_policy_choose(&s, running, sessions), 4);
	sessions[4] = 3; /* at its target: start another */
	assert_int_equal(snmd_policy_choose(&s, running, sessions), -1);
	running[7] = 1;
	sessions[7] = 1;
	assert_int_equal(snmd_policy_choose(&s, running, sessions), 7);
	sessions[2] = 0; /* not running: its count does not matter */
	assert_int_equal(snmd_policy_choose(&s, running, sessions), 7);
	sessions[7] = 5;
	assert_int_equal(snmd_policy_choose(&s, running, sessions), -1);
	running[9] = 1;
	sessions[9] = 4; /* three run, the limit: the least loaded */
	assert_int_equal(snmd_policy_choose(&s, running, sessions), 4);
	/* a tape's one mover takes every session */
	s = slot("tape", 1, 8);
	memset(running, 0, sizeof(running));
	running[0] = 1;
	sessions[0] = 9;
	assert_int_equal(snmd_policy_choose(&s, running, sessions), 0);
	/* target sessions 0: the default of 4 */
	s = slot("adv_file", 0, 2);
	sessions[0] = 3;
	assert_int_equal(snmd_policy_choose(&s, running, sessions), 0);
	sessions[0] = 4;
	assert_int_equal(snmd_policy_choose(&s, running, sessions), -1);
}

/* test_throttle - a mover that dies abnormally within 10 s of its start
 * holds the next start 1 s, then 2, 4, ... up to 60 s; one that exits
 * normally or ran longer clears the hold; one that never got ready
 * (status -1) counts as dying. */
static void test_throttle(void **state)
{
	struct snmd_slot s = slot("adv_file", 4, 4);
	int killed = SIGKILL; /* a wait status: killed by the signal */
	long long now = 1000000, hold = 1000;
	unsigned wait = 7;

	NSR_UNUSED(state);
	assert_int_equal(snmd_policy_may_start(&s, now, &wait), 1);
	assert_int_equal(wait, 0);
	for (int i = 0; i < 9; i++) {
		assert_int_equal(snmd_policy_exited(&s, now - 500, killed,
						    now),
				 1);
		assert_int_equal(s.quick_fails, (unsigned)i + 1);
		assert_int_equal(snmd_policy_may_start(&s, now, &wait), 0);
		assert_int_equal(wait, (unsigned)hold);
		assert_int_equal(snmd_policy_may_start(&s, now + hold, &wait),
				 1);
		hold = hold * 2 > 60000 ? 60000 : hold * 2;
	}
	/* a normal exit clears it, right after the start or not */
	assert_int_equal(snmd_policy_exited(&s, now - 500, 0, now), 0);
	assert_int_equal(s.quick_fails, 0);
	assert_int_equal(snmd_policy_may_start(&s, now, &wait), 1);
	/* not ready at all */
	assert_int_equal(snmd_policy_exited(&s, now - 10, -1, now), 1);
	assert_int_equal(snmd_policy_may_start(&s, now + 999, &wait), 0);
	assert_int_equal(wait, 1);
	/* killed after running a while: not a crash loop */
	assert_int_equal(snmd_policy_exited(&s, now - 10000, killed, now), 0);
	assert_int_equal(s.quick_fails, 0);
	assert_int_equal(snmd_policy_may_start(&s, now, &wait), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_limit),
		cmocka_unit_test(test_choose),
		cmocka_unit_test(test_throttle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
