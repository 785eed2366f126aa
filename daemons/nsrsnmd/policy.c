/*
 * policy.c - when nsrsnmd may start a mover (policy, kept apart from the
 * fork/exec mechanism in spawn.c as Postfix keeps master_avail.c apart
 * from master_spawn.c).  Dynamic nsrmmd: a disk device gets another
 * mover when every running one serves target sessions or more, up to its
 * mover limit; sessions go to the least loaded mover otherwise (movers
 * that stay idle exit by themselves: nsrmmd -i).  A mover that dies
 * abnormally within QUICK_SEC of
 * its start is throttled: the next start waits 1 s, then 2, 4, ... up to
 * HOLD_MAX_SEC while it keeps failing; a mover that ran a while, or that
 * exited normally (idle timeout), clears the throttle.
 */
#include "nsr/compat.h"

#include <sys/wait.h>
#include <time.h>

#include "snmd.h"

#define QUICK_MS 10000
#define HOLD_MAX_MS 60000
#define TS_DEFAULT 4

/* snmd_policy_mover_limit - movers allowed for one device. */
unsigned snmd_policy_mover_limit(const struct snmd_slot *s)
{
	if (strcmp(s->media_type, "adv_file") != 0 || s->max_movers <= 1)
		return 1;
	return NSR_MIN(s->max_movers, (unsigned)SNMD_MOVERS_MAX);
}

/* snmd_policy_choose - least loaded running mover, or -1: start one. */
int snmd_policy_choose(const struct snmd_slot *s, const int *running,
		       const unsigned *sessions)
{
	unsigned ts = s->target_sessions ? s->target_sessions : TS_DEFAULT;
	unsigned n = 0;
	int best = -1;

	for (int i = 0; i < SNMD_MOVERS_MAX; i++) {
		if (!running[i])
			continue;
		n++;
		if (best < 0 || sessions[i] < sessions[best])
			best = i;
	}
	if (best >= 0 && sessions[best] >= ts &&
	    n < snmd_policy_mover_limit(s))
		return -1;
	return best;
}
/* snmd_policy_now - monotonic milliseconds. */
long long snmd_policy_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* snmd_policy_may_start - honour the throttle. */
int snmd_policy_may_start(const struct snmd_slot *s, long long now,
			  unsigned *wait_ms)
{
	*wait_ms = 0;
	if (now >= s->hold_until)
		return 1;
	*wait_ms = (unsigned)(s->hold_until - now);
	return 0;
}

/* snmd_policy_exited - account for a mover's end. */
int snmd_policy_exited(struct snmd_slot *s, long long started_ms, int status,
		       long long now)
{
	int normal = status != -1 && WIFEXITED(status) &&
		     WEXITSTATUS(status) == 0;
	long long hold;

	if (normal || now - started_ms >= QUICK_MS) {
		s->quick_fails = 0;
		s->hold_until = 0;
		return 0;
	}
	s->quick_fails++;
	hold = 1000LL << NSR_MIN(s->quick_fails - 1, 6u);
	s->hold_until = now + NSR_MIN(hold, (long long)HOLD_MAX_MS);
	return 1;
}
