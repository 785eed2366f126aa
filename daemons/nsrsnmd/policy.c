/*
 * policy.c - when nsrsnmd may start a mover (policy, kept apart from the
 * fork/exec mechanism in spawn.c as Postfix keeps master_avail.c apart
 * from master_spawn.c).  A mover that dies abnormally within QUICK_SEC of
 * its start is throttled: the next start waits 1 s, then 2, 4, ... up to
 * HOLD_MAX_SEC while it keeps failing; a mover that ran a while, or that
 * exited normally (idle timeout), clears the throttle.
 */
#include "nsr/compat.h"

#include <sys/wait.h>

#include "snmd.h"

#define QUICK_SEC 10
#define HOLD_MAX_SEC 60
#define TS_DEFAULT 4
#define MS_DEFAULT 32

/* snmd_policy_mover_limit - movers allowed for one device. */
unsigned snmd_policy_mover_limit(const struct snmd_slot *s)
{
	unsigned ts = s->target_sessions ? s->target_sessions : TS_DEFAULT;
	unsigned ms = s->max_sessions ? s->max_sessions : MS_DEFAULT;

	if (strcmp(s->media_type, "adv_file") != 0)
		return 1;
	return ms / ts + 4;
}

/* snmd_policy_may_start - honour the throttle. */
int snmd_policy_may_start(const struct snmd_slot *s, time_t now,
			  unsigned *wait)
{
	*wait = 0;
	if (now >= s->hold_until)
		return 1;
	*wait = (unsigned)(s->hold_until - now);
	return 0;
}

/* snmd_policy_exited - account for a mover's end. */
int snmd_policy_exited(struct snmd_slot *s, int status, time_t now)
{
	int normal = status != -1 && WIFEXITED(status) &&
		     WEXITSTATUS(status) == 0;
	unsigned hold;

	if (normal || now - s->started >= QUICK_SEC) {
		s->quick_fails = 0;
		s->hold_until = 0;
		return 0;
	}
	s->quick_fails++;
	hold = 1u << NSR_MIN(s->quick_fails - 1, 6u);
	s->hold_until = now + NSR_MIN(hold, (unsigned)HOLD_MAX_SEC);
	return 1;
}
