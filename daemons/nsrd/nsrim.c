/*
 * nsrim.c - nsrd runs nsrim (nsrim.h) once a day on nsrd's clock (the
 * test clock in tests), in a thread of its own with its own connections,
 * so the RPC server never waits for it.  The clock time of the last run
 * is kept in <root>/res/nsrim.prv (NetWorker's /nsr/mm/nsrim.prv): a run
 * starts when 23 hours have passed since (NetWorker's 23-hour rule, so a
 * daily run does not drift), and at the first tick after a start without
 * the file.  NSR_NSRIM_DAILY=no turns the daily run off (tests that run
 * nsrim by hand).
 *
 * Invariants:
 *   1. at most one run at a time (running is set by the tick before the
 *      thread starts and cleared by the thread as its last act);
 *   2. nsrim.prv is written after a run succeeded, so a run cut short
 *      (nsrd stopped, a database away) is repeated at the next tick
 *      (a run is idempotent: nsrim.h invariant 1).
 */
#include "nsr/compat.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "nsr/buf.h"
#include "nsr/clock.h"
#include "nsr/daemon.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/log.h"
#include "nsr/nsrim.h"
#include "nsrd.h"

#define NSRIM_EVERY (23 * 3600)

static struct {
	pthread_t thread;
	int started;	    /* a thread to join */
	atomic_int running; /* invariant 1 */
	int loaded;	    /* last read from nsrim.prv */
	int64_t last;	    /* clock time of the last successful run */
	int64_t started_at; /* clock time of the run under way */
	time_t retry_at;    /* real time a failed run may be retried */
	char *prv;	    /* path of nsrim.prv */
} g_im;

/* im_main - the thread: one run, logged; nsrim.prv on success. */
static void *im_main(void *arg)
{
	struct nsr_nsrim_opts o;
	struct nsr_nsrim_stats st;
	struct nsr_buf err;
	char line[512], t[32];
	int rc;

	(void)arg;
	memset(&o, 0, sizeof(o));
	o.now = g_im.started_at;
	nsr_buf_init(&err, 0);
	rc = nsr_nsrim_run(&o, &st, &err);
	nsr_nsrim_summary(&st, 0, line, sizeof(line));
	if (rc == NSR_OK) {
		nsr_info("daily %s", line);
		snprintf(t, sizeof(t), "%lld\n", (long long)o.now);
		if (nsr_file_replace(g_im.prv, t, strlen(t), 0644) != NSR_OK)
			nsr_warn("cannot write %s: the next tick runs nsrim "
				 "again", g_im.prv);
		else
			g_im.last = o.now;
	} else {
		g_im.retry_at = time(NULL) + 60;
		nsr_warn("daily nsrim cut short (%s): it runs again in a "
			 "minute", err.len ? err.data : nsr_strerror(rc));
	}
	nsr_buf_release(&err);
	atomic_store(&g_im.running, 0);
	return NULL;
}

/* load_prv - the last run's time from nsrim.prv (0 if none). */
static void load_prv(struct nsrd *n)
{
	struct nsr_buf b;

	g_im.loaded = 1;
	g_im.prv = nsr_daemon_path(n->d, "res/nsrim.prv");
	nsr_buf_init(&b, 0);
	if (g_im.prv && nsr_file_read(g_im.prv, &b, 64) == NSR_OK && b.len)
		g_im.last = strtoll(b.data, NULL, 10);
	nsr_buf_release(&b);
}

/* nsrd_nsrim_tick - from the tick: join a finished run, start one when
 * due. */
void nsrd_nsrim_tick(struct nsrd *n)
{
	const char *off = getenv("NSR_NSRIM_DAILY");
	int64_t now;

	if (atomic_load(&g_im.running))
		return;
	if (g_im.started) {
		pthread_join(g_im.thread, NULL);
		g_im.started = 0;
	}
	if ((off && strcasecmp(off, "no") == 0) || !n->mmdb ||
	    time(NULL) < g_im.retry_at)
		return;
	if (!g_im.loaded)
		load_prv(n);
	now = (int64_t)nsr_clock_now();
	if (!g_im.prv || (g_im.last && now - g_im.last < NSRIM_EVERY &&
			  now >= g_im.last))
		return;
	g_im.started_at = now;
	atomic_store(&g_im.running, 1);
	if (pthread_create(&g_im.thread, NULL, im_main, NULL) != 0) {
		atomic_store(&g_im.running, 0);
		g_im.retry_at = time(NULL) + 60;
		nsr_warn("cannot start the daily nsrim thread: out of "
			 "resources; it is tried again in a minute");
		return;
	}
	g_im.started = 1;
}

/* nsrd_nsrim_stop - wait for a run under way (nsrd stops). */
void nsrd_nsrim_stop(struct nsrd *n)
{
	NSR_UNUSED(n);
	if (g_im.started)
		pthread_join(g_im.thread, NULL);
	g_im.started = 0;
	free(g_im.prv);
	g_im.prv = NULL;
	g_im.loaded = 0;
}
