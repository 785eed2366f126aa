/*
 * counters.c - what each session of this mover has moved, for
 * MMD_COUNTERS (nsrd turns the samples into rates for nsrwatch): a
 * fixed table of slots, one per open save or recover session (or save
 * set of a one-pass recover), under a lock of its own.  A handle is
 * the slot number plus one; 0 is "none" (the table was full), and every
 * function takes it.
 */
#include "nsr/compat.h"

#include <time.h>

#include "nsr/err.h"
#include "nsr/xmalloc.h"

#include "mmd.h"

struct ctr {
	int used;
	uint32_t ssid;
	int recover;
	uint64_t bytes;
	struct timespec began;
};

static struct ctr g_ctr[MMD_COUNTERS_MAX];
static pthread_mutex_t g_ctr_mu = PTHREAD_MUTEX_INITIALIZER;

/* mmd_ctr_open - a slot for a session of save set ssid; 0 if none is
 * free (the session is then not counted). */
int mmd_ctr_open(uint32_t ssid, int recover)
{
	int h = 0;

	pthread_mutex_lock(&g_ctr_mu);
	for (int i = 0; i < MMD_COUNTERS_MAX && !h; i++) {
		if (g_ctr[i].used)
			continue;
		memset(&g_ctr[i], 0, sizeof(g_ctr[i]));
		g_ctr[i].used = 1;
		g_ctr[i].ssid = ssid;
		g_ctr[i].recover = recover;
		clock_gettime(CLOCK_MONOTONIC, &g_ctr[i].began);
		h = i + 1;
	}
	pthread_mutex_unlock(&g_ctr_mu);
	return h;
}

/* mmd_ctr_add - n more data bytes moved by session h. */
void mmd_ctr_add(int h, uint64_t n)
{
	if (h <= 0 || h > MMD_COUNTERS_MAX)
		return;
	pthread_mutex_lock(&g_ctr_mu);
	g_ctr[h - 1].bytes += n;
	pthread_mutex_unlock(&g_ctr_mu);
}

/* mmd_ctr_close - session h is over. */
void mmd_ctr_close(int h)
{
	if (h <= 0 || h > MMD_COUNTERS_MAX)
		return;
	pthread_mutex_lock(&g_ctr_mu);
	g_ctr[h - 1].used = 0;
	pthread_mutex_unlock(&g_ctr_mu);
}

/* mmd_h_counters - MMD_COUNTERS: every open session's counts. */
int mmd_h_counters(void *ctx, void *args, void *res,
		   struct nsr_rpc_call *call)
{
	mmd_counters_res *r = res;
	struct timespec now;

	NSR_UNUSED(ctx);
	NSR_UNUSED(args);
	NSR_UNUSED(call);
	clock_gettime(CLOCK_MONOTONIC, &now);
	r->sessions.sessions_val = nsr_xcalloc(MMD_COUNTERS_MAX,
					       sizeof(mmd_counter));
	pthread_mutex_lock(&g_ctr_mu);
	for (int i = 0; i < MMD_COUNTERS_MAX; i++) {
		const struct ctr *c = &g_ctr[i];
		mmd_counter *o;

		if (!c->used)
			continue;
		o = &r->sessions.sessions_val[r->sessions.sessions_len++];
		o->ssid = c->ssid;
		o->recover = c->recover ? TRUE : FALSE;
		o->bytes = c->bytes;
		o->usec = (uint64_t)(now.tv_sec - c->began.tv_sec) * 1000000u +
			  (uint64_t)((now.tv_nsec - c->began.tv_nsec) / 1000);
	}
	pthread_mutex_unlock(&g_ctr_mu);
	mmd_status(&r->st, NSR_OK, "%s", "");
	return NSR_OK;
}
