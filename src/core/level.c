/*
 * level.c - backup level names and the level decision (level.h).
 */
#include "nsr/compat.h"

#include "nsr/err.h"
#include "nsr/level.h"

static const char *const level_names[] = {
	"full", "1", "2", "3", "4", "5", "6", "7", "8", "9", "incr", "manual"};

/* nsr_level_name - mminfo spelling of a level. */
const char *nsr_level_name(unsigned level)
{
	return level < NSR_ARRAY_SIZE(level_names) ? level_names[level] : "?";
}

/* nsr_level_parse - level from its name; -1 if unknown. */
int nsr_level_parse(const char *s)
{
	for (size_t i = 0; i < NSR_ARRAY_SIZE(level_names); i++)
		if (strcmp(level_names[i], s) == 0)
			return (int)i;
	return -1;
}

/* serves - may save set p be the reference of a save at level want? */
static int serves(const struct nsr_level_prev *p, unsigned want)
{
	if (!p->usable || p->level > NSR_LEVEL_INCR)
		return 0;
	return want == NSR_LEVEL_INCR || p->level < want;
}

/* newest - index of the newest save set in prev serving want, or -1. */
static long newest(const struct nsr_level_prev *prev, size_t n, unsigned want)
{
	long best = -1;

	for (size_t i = 0; i < n; i++)
		if (serves(&prev[i], want) &&
		    (best < 0 || prev[i].savetime >= prev[best].savetime))
			best = (long)i;
	return best;
}

/* nsr_level_decide - effective level, reference and since time. */
int nsr_level_decide(unsigned requested, const struct nsr_level_prev *prev,
		     size_t n, struct nsr_level_decision *d)
{
	memset(d, 0, sizeof(*d));
	d->ref = -1;
	if (requested > NSR_LEVEL_MAX)
		return NSR_ERR_INVAL;
	d->level = requested;
	if (requested == NSR_LEVEL_FULL || requested == NSR_LEVEL_MANUAL)
		return NSR_OK;
	/* Every chain starts at a full: without one, this save is it. */
	if (newest(prev, n, 1) < 0) {
		d->level = NSR_LEVEL_FULL;
		d->promoted = 1;
		return NSR_OK;
	}
	d->ref = newest(prev, n, requested);
	d->ref_ssid = prev[d->ref].ssid;
	d->ref_level = prev[d->ref].level;
	d->since = prev[d->ref].savetime;
	return NSR_OK;
}

/* ts_at_or_after - a >= b. */
static int ts_at_or_after(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec != b->tv_sec ? a->tv_sec > b->tv_sec
				      : a->tv_nsec >= b->tv_nsec;
}

/* nsr_level_changed - must an object be saved since since? */
int nsr_level_changed(const struct timespec *mtime,
		      const struct timespec *ctime,
		      const struct timespec *since)
{
	if (since->tv_sec == 0 && since->tv_nsec == 0)
		return 1;
	return ts_at_or_after(mtime, since) || ts_at_or_after(ctime, since);
}
