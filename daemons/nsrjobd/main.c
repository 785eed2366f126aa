/*
 * nsrjobd - the jobs database daemon.  It owns <root>/jobs/jobsdb (SQLite,
 * WAL; <root>/res/jobsdb before, moved at start): nsrd, save and recover
 * record their jobs and job logs here over RPC (nsrjob.x, client in
 * src/clnt/jobd), jobquery reads them back.
 * At start-up, jobs that were queued or active when the server died are
 * marked failed.  Finished jobs older than the retention (-r hours) are
 * purged every -P seconds by a worker thread the one-second tick wakes;
 * JOB_PURGE purges on demand.
 */
#include "nsr/compat.h"

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nsr/boot.h"
#include "nsr/daemon.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/jobdb.h"
#include "nsr/log.h"
#include "nsr/policy.h"
#include "nsr/xmalloc.h"

#include "jobd.h"

struct jobd g_jobd = {
	.retention = NSR_JOBDB_RETENTION_DEFAULT,
	.interval = JOBD_PURGE_INTERVAL_DEFAULT,
	.purge_mu = PTHREAD_MUTEX_INITIALIZER,
	.mu = PTHREAD_MUTEX_INITIALIZER,
	.cv = PTHREAD_COND_INITIALIZER,
};

/* parse_uint - a decimal in [lo, hi]; 0 ok, -1 (message printed). */
static int parse_uint(const char *what, const char *arg, unsigned lo,
		      unsigned hi, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (!*arg || *end || errno || *arg == '-' || v < lo || v > hi) {
		fprintf(stderr, "nsrjobd: bad %s '%s' (expected %u to %u)\n",
			what, arg, lo, hi);
		return -1;
	}
	*out = (unsigned)v;
	return 0;
}

/* jobd_option - -P purge interval (seconds), -r retention (hours). */
static int jobd_option(struct nsr_daemon *d, int opt, const char *arg)
{
	NSR_UNUSED(d);
	if (opt == 'P') {
		g_jobd.interval_set = 1;
		return parse_uint("purge interval", arg, 1, 7 * 24 * 3600,
				  &g_jobd.interval);
	}
	if (opt == 'r')
		return parse_uint("retention", arg, 0, JOBD_RETENTION_MAX,
				  &g_jobd.retention);
	return -1;
}

/* test_interval - env NSR_TEST_JOBS_PURGE_INTERVAL unless -P was given. */
static int test_interval(void)
{
	const char *v = getenv("NSR_TEST_JOBS_PURGE_INTERVAL");

	if (!v || !*v || g_jobd.interval_set)
		return 0;
	if (parse_uint("NSR_TEST_JOBS_PURGE_INTERVAL", v, 1, 7 * 24 * 3600,
		       &g_jobd.interval))
		return -1;
	return 0;
}

/* Everything nsrjobd writes is under <root>/jobs (-u runs it as a user),
 * and its snapshot into nsrbootstrap's staging directory. */
#define JOBD_DIR "jobs"
#define JOBD_DB JOBD_DIR "/jobsdb"
#define JOBD_OLD_DB "res/jobsdb" /* before it had a directory of its own */
static const char *const jobd_dirs[] = {JOBD_DIR, NULL};

/* jobd_prepare - step 3, still root: <root>/jobs, and a jobs database of
 * the older layout (res/jobsdb, -wal, -shm) moved into it, its log files
 * first, so an interrupted move finishes at the next start and never
 * leaves a database apart from its log. */
static int jobd_prepare(struct nsr_daemon *d)
{
	static const char *const sfx[] = {"-wal", "-shm", ""};
	char *dir = nsr_xcheck(nsr_daemon_path(d, JOBD_DIR));
	char *neu = nsr_xcheck(nsr_daemon_path(d, JOBD_DB));
	char *old = nsr_xcheck(nsr_daemon_path(d, JOBD_OLD_DB));
	struct stat st;
	int rc = 0;

	if (nsr_mkdir_p(dir, 0750) != NSR_OK)
		rc = nsr_error("cannot create %s: %s", dir, strerror(errno));
	if (!rc && stat(old, &st) == 0 && stat(neu, &st) != 0) {
		for (size_t i = 0; !rc && i < NSR_ARRAY_SIZE(sfx); i++) {
			char from[PATH_MAX], to[PATH_MAX];

			snprintf(from, sizeof(from), "%s%s", old, sfx[i]);
			snprintf(to, sizeof(to), "%s%s", neu, sfx[i]);
			if (rename(from, to) != 0 && errno != ENOENT)
				rc = nsr_error("cannot move %s to %s: %s",
					       from, to, strerror(errno));
		}
		if (!rc && nsr_fsync_dir(dir, 1) != NSR_OK)
			rc = nsr_error("cannot sync %s: %s", dir,
				       strerror(errno));
		if (!rc)
			nsr_info("jobs database moved from %s to %s", old,
				 neu);
	} else if (!rc && stat(old, &st) == 0) {
		nsr_warn("%s (the older layout) is left as it is: %s is the "
			 "jobs database in use; remove the older one once you "
			 "no longer need its jobs", old, neu);
	}
	free(dir);
	free(neu);
	free(old);
	return rc ? -1 : 0;
}

/* jobd_check - -t: options, and the jobs db if it exists. */
static int jobd_check(struct nsr_daemon *d)
{
	char *path = nsr_xcheck(nsr_daemon_path(d, JOBD_DB));
	struct nsr_jobdb *db = NULL;
	struct stat sb;
	int rc = 0;

	if (test_interval())
		rc = -1;
	if (!rc && stat(path, &sb) == 0) {
		int e = nsr_jobdb_open(path, NULL, &db);

		if (!e)
			e = nsr_jobdb_check(db);
		if (e) {
			fprintf(stderr, "nsrjobd: jobs database %s: %s\n", path,
				nsr_strerror(e));
			rc = -1;
		}
		nsr_jobdb_close(db);
	}
	free(path);
	return rc;
}

/* jobd_init - open the jobs db and mark jobs the last run left behind. */
static int jobd_init(struct nsr_daemon *d)
{
	uint64_t marked = 0, n = 0;
	int rc;

	if (test_interval())
		return -1;
	g_jobd.dbpath = nsr_xcheck(nsr_daemon_path(d, JOBD_DB));
	g_jobd.bootdir = nsr_xcheck(nsr_daemon_path(d, NSR_BOOT_DIR));
	g_jobd.bootcopy = nsr_xcheck(nsr_path_join(g_jobd.bootdir,
						   NSR_BOOT_JOBSDB));
	if (nsr_policy_open(d->root, &g_jobd.policy) != NSR_OK)
		return -1;
	{
		struct nsr_jobdb_options opt;

		memset(&opt, 0, sizeof(opt));
		opt.background_checkpoint =
			1; /* the purge worker checkpoints */
		rc = nsr_jobdb_open(g_jobd.dbpath, &opt, &g_jobd.db);
	}
	if (rc)
		return nsr_error("cannot open the jobs database %s: %s; if it "
				 "is damaged, move it aside and restart "
				 "(the job history is lost, backups are not)",
				 g_jobd.dbpath, nsr_strerror(rc));
	rc = nsr_jobdb_recover(g_jobd.db, (int64_t)time(NULL), &marked);
	if (rc)
		return nsr_error("cannot mark interrupted jobs in %s: %s",
				 g_jobd.dbpath, nsr_strerror(rc));
	if (marked)
		nsr_warn("%" PRIu64 " jobs were queued or active when the "
			 "server stopped; marked failed (\"%s\")", marked,
			 NSR_JOBDB_RESTART_REASON);
	nsr_jobdb_count(g_jobd.db, &n);
	nsr_info("jobs database %s: %" PRIu64 " jobs; retention %u hours, "
		 "purge every %u s", g_jobd.dbpath, n, g_jobd.retention,
		 g_jobd.interval);
	return 0;
}

/* jobd_started - start the purge worker; the first purge is one
 * interval from now. */
static int jobd_started(struct nsr_daemon *d)
{
	NSR_UNUSED(d);
	g_jobd.next_purge_ms = jobd_now_ms() + 1000LL * g_jobd.interval;
	return jobd_purge_start(&g_jobd);
}

/* jobd_tick - every second: a checkpoint, or a purge when one is due
 * (run_with_period). */
static void jobd_tick(struct nsr_daemon *d)
{
	long long now = jobd_now_ms();

	NSR_UNUSED(d);
	if (now < g_jobd.next_purge_ms) {
		jobd_purge_kick(&g_jobd, 0);
		return;
	}
	g_jobd.next_purge_ms = now + 1000LL * g_jobd.interval;
	jobd_purge_kick(&g_jobd, 1);
}

/* jobd_stop - stop purging, close the writer handle under the server
 * lock so no handler is using it. */
static void jobd_stop(struct nsr_daemon *d)
{
	jobd_purge_stop(&g_jobd);
	nsr_rpc_server_lock(d->srv);
	nsr_jobdb_close(g_jobd.db);
	g_jobd.db = NULL;
	nsr_rpc_server_unlock(d->srv);
}

static const struct nsr_daemon_ops jobd_ops = {
	.name = "nsrjobd",
	.summary = "OpenNSR jobs database daemon",
	.extra_opts = "P:r:",
	.extra_usage =
		"  -P seconds  purge interval (env "
		"NSR_TEST_JOBS_PURGE_INTERVAL,"
		" default 3600)\n"
		"  -r hours    keep finished jobs this long (default 72)\n",
	.tick_ms = 1000,
	.progs = jobd_progs,
	.nprogs = NSR_ARRAY_SIZE(jobd_progs),
	.own_dirs = jobd_dirs,
	.option = jobd_option,
	.check = jobd_check,
	.prepare = jobd_prepare,
	.init = jobd_init,
	.started = jobd_started,
	.tick = jobd_tick,
	.stop = jobd_stop,
};

/* main - run the daemon on the skeleton. */
int main(int argc, char **argv)
{
	int rc = nsr_daemon_main(argc, argv, &jobd_ops, &g_jobd);

	free(g_jobd.dbpath);
	free(g_jobd.bootdir);
	free(g_jobd.bootcopy);
	return rc;
}
