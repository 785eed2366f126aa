/*
 * purge.c - nsrjobd's purge worker.  The skeleton's one-second tick
 * decides when a purge is due (run_with_period style, main.c); this
 * thread does the work on its own database handle, so a long purge
 * neither stalls the accept loop nor holds the RPC server-wide mutex.
 * The library deletes in small transactions; writers on the other handle
 * wait at most one batch (SQLite busy timeout).
 *
 * Checkpoints: the writer and query handles are opened with the library's
 * background_checkpoint option, so no RPC insert pays for copying the WAL
 * into the database and its fsync; this worker runs a passive checkpoint
 * (nsr_jobdb_checkpoint, never waiting for anybody) every tick on the
 * purge handle, and the purge checkpoints between its own transactions.
 */
#include "nsr/compat.h"

#include <pthread.h>
#include <time.h>

#include "nsr/err.h"
#include "nsr/jobdb.h"
#include "nsr/log.h"
#include "nsr/res.h"
#include "nsr/nsrd_clnt.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsrd.h"

#include "jobd.h"

/* checkpoint - copy committed WAL frames into the database, without
 * waiting for anybody (the worker thread pays the fsync). */
static void checkpoint(struct jobd *jd)
{
	int rc;

	pthread_mutex_lock(&jd->purge_mu);
	rc = jd->pdb ? nsr_jobdb_checkpoint(jd->pdb) : NSR_OK;
	pthread_mutex_unlock(&jd->purge_mu);
	if (rc && rc != NSR_ERR_BUSY)
		nsr_warn("checkpoint of %s: %s", jd->dbpath, nsr_strerror(rc));
}

/* jobd_now_ms - monotonic milliseconds. */
long long jobd_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ask_nsrd - the server resource's "jobsdb retention in hours" as nsrd
 * has it now; 0 when the value is missing or out of range, -1 when nsrd
 * does not answer (nsrjobd running on its own, nsrd restarting or
 * busy). */
static long ask_nsrd(void)
{
	res_query_args a = {.query = (char *)"type: NSR"};
	struct nsr_nsrd *c = NULL;
	struct nsr_res_list list;
	res_list_res r;
	long hours = -1;

	if (nsr_nsrd_open("localhost", &c, NULL) != NSR_OK)
		return -1;
	nsr_nsrd_set_timeout(c, 5000);
	memset(&r, 0, sizeof(r));
	nsr_res_list_init(&list);
	if (nsr_nsrd_res_query(c, &a, &r) == NSR_OK &&
	    nsr_res_parse(r.text, strlen(r.text), &list, NULL) == NSR_OK &&
	    list.n > 0) {
		const char *v =
			nsr_res_get(list.items[0], "jobsdb retention in hours");
		long h = v ? atol(v) : 0;

		hours = h > 0 && h <= JOBD_RETENTION_MAX ? h : 0;
	}
	nsr_res_list_release(&list);
	xdr_free(NSR_XDR(xdr_res_list_res), &r);
	nsr_nsrd_close(c);
	return hours;
}

/* server_retention - the retention a purge uses: nsrd's answer now (so
 * a change made with nsradmin takes effect at the next purge), -r when
 * its resource has none; when nsrd does not answer, its last answer, so
 * a purge while nsrd restarts keeps jobs as long as the administrator
 * set, not -r hours; -r when it never answered. */
static unsigned server_retention(struct jobd *jd)
{
	long got = ask_nsrd();
	unsigned use;
	int was_silent, last;

	pthread_mutex_lock(&jd->mu);
	was_silent = jd->nsrd_silent;
	jd->nsrd_silent = got < 0;
	if (got >= 0)
		jd->server_hours = (unsigned)got;
	last = jd->server_hours != 0;
	use = last ? jd->server_hours : jd->retention;
	pthread_mutex_unlock(&jd->mu);
	if (got < 0 && !was_silent)
		nsr_warn("nsrd does not answer: purging with %s retention, "
			 "%u hours, until it does",
			 last ? "its last" : "the -r", use);
	else if (got >= 0 && was_silent)
		nsr_info("nsrd answers again: retention %u hours", use);
	return use;
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
		retention = server_retention(jd);
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
		int purge, ckpt;

		while (!jd->purge_wanted && !jd->ckpt_wanted && !jd->stopping)
			pthread_cond_wait(&jd->cv, &jd->mu);
		if (jd->stopping)
			break;
		purge = jd->purge_wanted;
		ckpt = jd->ckpt_wanted;
		jd->purge_wanted = 0;
		jd->ckpt_wanted = 0;
		pthread_mutex_unlock(&jd->mu);
		if (purge)
			jobd_purge_run(jd, 0, NULL);
		if (ckpt || purge)
			checkpoint(jd);
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

/* jobd_purge_kick - wake the worker for a purge (purge != 0) or a
 * checkpoint. */
void jobd_purge_kick(struct jobd *jd, int purge)
{
	pthread_mutex_lock(&jd->mu);
	if (purge)
		jd->purge_wanted = 1;
	else
		jd->ckpt_wanted = 1;
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
