/*
 * nsrmmdbd - the media database daemon.  It owns <root>/mm (the page
 * engine of mmdb.h: volumes, save sets, fragments, clone instances) and
 * serves it over the NSRMMDBD RPC program: record procedures (handlers.c)
 * and mminfo queries evaluated here and streamed in batches (query.c).
 * Every write is durable before its reply.  nsrd normally starts and
 * supervises it; -t checks the database offline.
 */
#include "nsr/compat.h"

#include <pthread.h>

#include "nsr/buf.h"
#include "nsr/daemon.h"
#include "nsr/err.h"
#include "nsr/log.h"
#include "nsr/mmdb.h"
#include "nsr/xmalloc.h"
#include "mmdbd.h"

struct mmdbd g_mmdbd = {
	.life = PTHREAD_RWLOCK_INITIALIZER,
	.qlock = PTHREAD_MUTEX_INITIALIZER,
};

/* open_failed - the fatal message for a database that will not open. */
static int open_failed(const char *dir, int rc)
{
	if (rc == NSR_ERR_CORRUPT || rc == NSR_ERR_CHECKSUM)
		return nsr_error("media database %s/mmdb is damaged (%s): "
				 "stop nsrd, run \"nsrmmdbd -t -R <root>\" to "
				 "see the damage, and restore the database "
				 "from the last bootstrap", dir,
				 nsr_strerror(rc));
	if (rc == NSR_ERR_BUSY)
		return nsr_error("media database %s is in use by another "
				 "process", dir);
	return nsr_error("cannot open media database %s: %s%s%s", dir,
			 nsr_strerror(rc), rc == NSR_ERR_SYSTEM ? ": " : "",
			 rc == NSR_ERR_SYSTEM ? strerror(errno) : "");
}

/* mmdbd_check - -t: open the database read-only and run its check. */
static int mmdbd_check(struct nsr_daemon *d)
{
	struct mmdb_opts opts;
	struct mmdb *db = NULL;
	struct nsr_buf rep;
	char *dir = nsr_xcheck(nsr_daemon_path(d, "mm"));
	int rc;

	nsr_buf_init(&rep, 0);
	mmdb_opts_init(&opts);
	opts.flags = MMDB_OPEN_READONLY;
	rc = mmdb_open(dir, &opts, &db);
	if (rc) {
		open_failed(dir, rc);
		goto out;
	}
	rc = mmdb_check(db, &rep);
	if (rep.len)
		fputs(rep.data, stdout);
	if (rc)
		nsr_error("media database %s: check failed: %s", dir,
			  nsr_strerror(rc));
	else
		printf("nsrmmdbd: media database %s is consistent\n", dir);
out:
	mmdb_close(db);
	nsr_buf_release(&rep);
	free(dir);
	return rc ? -1 : 0;
}

/* mmdbd_init - open (create, recover) <root>/mm before serving. */
static int mmdbd_init(struct nsr_daemon *d)
{
	struct mmdb_stats st;
	int rc;

	g_mmdbd.dir = nsr_xcheck(nsr_daemon_path(d, "mm"));
	if (mmdbd_authz_init(d->root) != NSR_OK)
		return -1;
	rc = mmdb_open(g_mmdbd.dir, NULL, &g_mmdbd.db);
	if (rc)
		return open_failed(g_mmdbd.dir, rc);
	if (mmdb_stats(g_mmdbd.db, &st) == NSR_OK)
		nsr_info("media database %s: %llu volumes, %llu save sets, "
			 "commit %llu", g_mmdbd.dir,
			 (unsigned long long)st.volumes,
			 (unsigned long long)st.savesets,
			 (unsigned long long)st.commit_seq);
	return 0;
}

/* mmdbd_tick - periodic work: end idle query cursors. */
static void mmdbd_tick(struct nsr_daemon *d)
{
	NSR_UNUSED(d);
	mmdbd_query_reap();
}

/* mmdbd_stop - wait for running handlers, end cursors, close the db. */
static void mmdbd_stop(struct nsr_daemon *d)
{
	struct mmdb_stats st;

	NSR_UNUSED(d);
	pthread_rwlock_wrlock(&g_mmdbd.life);
	mmdbd_query_close_all();
	if (mmdb_stats(g_mmdbd.db, &st) == NSR_OK)
		nsr_info("media database %s: %llu commits in %llu fsyncs since "
			 "start, %llu volumes, %llu save sets", g_mmdbd.dir,
			 (unsigned long long)st.commits,
			 (unsigned long long)st.fsyncs,
			 (unsigned long long)st.volumes,
			 (unsigned long long)st.savesets);
	mmdb_close(g_mmdbd.db);
	g_mmdbd.db = NULL;
	pthread_rwlock_unlock(&g_mmdbd.life);
	nsr_info("media database %s closed", g_mmdbd.dir);
}

/* Everything nsrmmdbd writes is under <root>/mm (-u runs it as a user). */
static const char *const mmdbd_dirs[] = {"mm", NULL};

static const struct nsr_daemon_ops mmdbd_ops = {
	.name = "nsrmmdbd",
	.summary = "OpenNSR media database daemon: volumes, save sets, "
		   "fragments; mminfo queries",
	.default_port = 0,
	.tick_ms = 1000,
	.progs = mmdbd_progs,
	.nprogs = NSR_ARRAY_SIZE(mmdbd_progs),
	.own_dirs = mmdbd_dirs,
	.check = mmdbd_check,
	.init = mmdbd_init,
	.tick = mmdbd_tick,
	.stop = mmdbd_stop,
};

/* main - run the daemon on the skeleton. */
int main(int argc, char **argv)
{
	int rc = nsr_daemon_main(argc, argv, &mmdbd_ops, NULL);

	free(g_mmdbd.dir);
	return rc;
}
