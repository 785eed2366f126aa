/*
 * purge.c - nsrjobd's purge worker.  The skeleton's one-second tick
 * decides when a purge is due (run_with_period style, main.c); this
 * thread does the work on its own database handle, so a long purge
 * neither stalls the accept loop nor holds the RPC server-wide mutex.
 * The library deletes in small transactions; writers on the other handle
 * wait at most one batch (SQLite busy timeout).
 */
#include "nsr/compat.h"

#include <pthread.h>
#include <time.h>

#include "nsr/err.h"
#include "nsr/jobdb.h"
#include "nsr/log.h"

#include "jobd.h"

/* jobd_now_ms - monotonic milliseconds. */
long long jobd_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* jobd_purge_run - one purge under purge_mu, logged. */
int jobd_purge_run(struct jobd *jd, unsigned retention,
		   struct nsr_jobdb_purge_stats *st)
{
	struct nsr_jobdb_purge_stats s;
	long long t0 = jobd_now_ms();
	int rc;

	memset(&s, 0, sizeof(s));
	if (!retention)
		retention = jd->retention;
	pthread_mutex_lock(&jd->purge_mu);
	if (!jd->pdb)
		rc = NSR_ERR_STATE;
	else
		rc = nsr_jobdb_purge(jd->pdb, retention, (int64_t)time(NULL),
				     &s);
	pthread_mutex_unlock(&jd->purge_mu);
	if (rc)
		nsr_error("purge of %s failed after %" PRIu64 " jobs: %s",
			  jd->dbpath, s.jobs, nsr_strerror(rc));
	else if (s.jobs)
		nsr_info("purged %" PRIu64 " jobs (%" PRIu64 " log lines) "
			 "finished more than %u hours ago, in %" PRIu64
			 " batches, %lld ms",
			 s.jobs, s.logs, retention, s.batches,
			 jobd_now_ms() - t0);
	else
		nsr_debug("purge: nothing older than %u hours (%lld ms)",
			  retention, jobd_now_ms() - t0);
	if (st)
		*st = s;
	return rc;
}

/* worker - wait for a kick, purge, repeat until stopping. */
static void *worker(void *arg)
{
	struct jobd *jd = arg;

	pthread_mutex_lock(&jd->mu);
	for (;;) {
		while (!jd->purge_wanted && !jd->stopping)
			pthread_cond_wait(&jd->cv, &jd->mu);
		if (jd->stopping)
			break;
		jd->purge_wanted = 0;
		pthread_mutex_unlock(&jd->mu);
		jobd_purge_run(jd, 0, NULL);
		pthread_mutex_lock(&jd->mu);
	}
	pthread_mutex_unlock(&jd->mu);
	return NULL;
}

/* jobd_purge_start - open the purge handle and start the worker. */
int jobd_purge_start(struct jobd *jd)
{
	sigset_t all, old;
	int rc;

	rc = nsr_jobdb_open(jd->dbpath, NULL, &jd->pdb);
	if (rc)
		return nsr_error("cannot open %s for purging: %s", jd->dbpath,
				 nsr_strerror(rc));
	/* The worker must not take the daemon's signals. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&jd->thread, NULL, worker, jd);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		return nsr_error("cannot start the purge thread: %s",
				 strerror(rc));
	jd->have_thread = 1;
	return 0;
}

/* jobd_purge_kick - wake the worker for one purge. */
void jobd_purge_kick(struct jobd *jd)
{
	pthread_mutex_lock(&jd->mu);
	jd->purge_wanted = 1;
	pthread_cond_signal(&jd->cv);
	pthread_mutex_unlock(&jd->mu);
}

/* jobd_purge_stop - let a running purge finish its batch loop, join. */
void jobd_purge_stop(struct jobd *jd)
{
	if (jd->have_thread) {
		pthread_mutex_lock(&jd->mu);
		jd->stopping = 1;
		pthread_cond_signal(&jd->cv);
		pthread_mutex_unlock(&jd->mu);
		pthread_join(jd->thread, NULL);
		jd->have_thread = 0;
	}
	pthread_mutex_lock(&jd->purge_mu);
	nsr_jobdb_close(jd->pdb);
	jd->pdb = NULL;
	pthread_mutex_unlock(&jd->purge_mu);
}
