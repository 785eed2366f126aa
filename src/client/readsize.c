/*
 * readsize.c - adaptive read size: hill climbing on the measured read rate
 * between 64 KB and 8 MB (see readsize.h).
 *
 * States:
 *   EXPLORE  the size doubles (or halves, dir = -1) after each window while
 *            the rate beats the best rate seen by more than 5% (halving:
 *            while it stays within 5% of it, so that a device which does
 *            not care ends small).  The first time growing does not help,
 *            the other direction is tried once from the best size; when
 *            that does not help either, the best size is taken and the
 *            state becomes SETTLED.
 *   SETTLED  the size holds while the rate stays within -20%/+25% of the
 *            rate measured when it settled; outside that band (the device
 *            or the data changed) exploration starts again from here.
 * A window is WINDOW_READS reads; rates are bytes per second over it.
 */
#include "nsr/compat.h"

#include <time.h>

#include "nsr/err.h"
#include "nsr/readsize.h"

#define WINDOW_READS 4

enum { EXPLORE, SETTLED };

struct nsr_readsize {
	nsr_readsize_clock_fn clock;
	void *clock_ctx;
	int forced;
	size_t size;
	/* current window */
	uint64_t t0;
	uint64_t win_ns, win_bytes;
	int win_reads;
	/* climbing */
	int state, dir, reversed;
	double ref_rate; /* best (EXPLORE) or settled (SETTLED) rate */
	size_t best_size;
};

/* mono_ns - CLOCK_MONOTONIC in nanoseconds. */
static uint64_t mono_ns(void *ctx)
{
	struct timespec ts;

	NSR_UNUSED(ctx);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* nsr_readsize_parse - parse a size with an optional K or M suffix. */
int nsr_readsize_parse(const char *s, size_t *out)
{
	char *end = NULL;
	unsigned long long v, unit = 1;

	*out = 0;
	if (s == NULL || *s < '0' || *s > '9')
		return NSR_ERR_INVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0)
		return NSR_ERR_INVAL;
	if (*end == 'k' || *end == 'K') {
		unit = 1024;
		end++;
	} else if (*end == 'm' || *end == 'M') {
		unit = 1024 * 1024;
		end++;
	}
	/* bound before multiplying: a huge count of K must not wrap */
	if (*end != '\0' || v == 0 || v > (1ull << 40) / unit)
		return NSR_ERR_INVAL;
	*out = (size_t)(v * unit);
	return NSR_OK;
}

/* nsr_readsize_new - allocate the read sizer (forced or adaptive). */
int nsr_readsize_new(struct nsr_readsize **out, size_t force,
		     nsr_readsize_clock_fn clock, void *clock_ctx)
{
	struct nsr_readsize *r;
	const char *env = getenv("NSR_READ_SIZE");
	size_t env_size = 0;

	*out = NULL;
	if (force == 0 && env != NULL && *env != '\0') {
		if (nsr_readsize_parse(env, &env_size) != NSR_OK)
			return NSR_ERR_INVAL;
		force = env_size;
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return NSR_ERR_NOMEM;
	r->clock = clock ? clock : mono_ns;
	r->clock_ctx = clock_ctx;
	if (force != 0) {
		r->forced = 1;
		r->size = NSR_MAX(NSR_READSIZE_FORCE_MIN,
				  NSR_MIN(force, NSR_READSIZE_FORCE_MAX));
	} else {
		r->size = NSR_READSIZE_START;
	}
	r->state = EXPLORE;
	r->dir = 1;
	r->best_size = r->size;
	*out = r;
	return NSR_OK;
}

/* nsr_readsize_free - free the read sizer. */
void nsr_readsize_free(struct nsr_readsize *r)
{
	free(r);
}

/* nsr_readsize_get - the size for the next read. */
size_t nsr_readsize_get(const struct nsr_readsize *r)
{
	return r->size;
}

/* nsr_readsize_forced - is the size fixed?. */
int nsr_readsize_forced(const struct nsr_readsize *r)
{
	return r->forced;
}

/* nsr_readsize_begin - note the start time of a read. */
void nsr_readsize_begin(struct nsr_readsize *r)
{
	if (!r->forced)
		r->t0 = r->clock(r->clock_ctx);
}

/* step - move the size one step in dir, within bounds. */
static size_t step(size_t size, int dir)
{
	if (dir > 0)
		return NSR_MIN(size * 2, NSR_READSIZE_MAX);
	return NSR_MAX(size / 2, NSR_READSIZE_MIN);
}

/* explore - one window's verdict while exploring.  Growing must pay (5%
 * faster); going down, as fast (within 5% of the best rate seen) is as
 * good: smaller reads hold less memory, so a device that does not care
 * ends at the smallest size. */
static void explore(struct nsr_readsize *r, double rate)
{
	int better = r->ref_rate == 0 || rate > r->ref_rate * 1.05;
	int as_good = r->dir < 0 && rate >= r->ref_rate * 0.95;
	size_t next;

	if (better || as_good) {
		if (rate > r->ref_rate)
			r->ref_rate = rate;
		r->best_size = r->size;
		next = step(r->size, r->dir);
		if (next != r->size) {
			r->size = next;
			return;
		}
		/* At a bound and still improving: this is the best. */
	} else if (!r->reversed) {
		/* Moving this way did not help: try the other side once. */
		r->reversed = 1;
		r->dir = -r->dir;
		next = step(r->best_size, r->dir);
		if (next != r->best_size) {
			r->size = next;
			return;
		}
	}
	r->size = r->best_size;
	r->state = SETTLED;
	r->ref_rate = 0; /* measured again at the settled size */
}

/* settled - one window's verdict while settled. */
static void settled(struct nsr_readsize *r, double rate)
{
	if (r->ref_rate == 0) {
		r->ref_rate = rate;
		return;
	}
	if (rate >= r->ref_rate * 0.8 && rate <= r->ref_rate * 1.25)
		return;
	/* Conditions changed: climb again from here, upwards first. */
	r->state = EXPLORE;
	r->dir = 1;
	r->reversed = 0;
	r->ref_rate = 0;
	explore(r, rate);
}

/* nsr_readsize_end - account one read and adapt at window ends. */
void nsr_readsize_end(struct nsr_readsize *r, size_t bytes)
{
	uint64_t now;
	double rate;

	if (r->forced)
		return;
	now = r->clock(r->clock_ctx);
	r->win_ns += now > r->t0 ? now - r->t0 : 0;
	r->win_bytes += bytes;
	if (++r->win_reads < WINDOW_READS)
		return;
	rate = (double)r->win_bytes * 1e9 / (double)NSR_MAX(r->win_ns, 1u);
	r->win_ns = 0;
	r->win_bytes = 0;
	r->win_reads = 0;
	if (r->state == EXPLORE)
		explore(r, rate);
	else
		settled(r, rate);
}
