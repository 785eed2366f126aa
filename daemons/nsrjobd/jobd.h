/*
 * jobd.h - private to nsrjobd: the daemon's state shared by main.c (the
 * skeleton's callbacks), proc.c (RPC handlers) and purge.c (the purge
 * worker).
 *
 * Locking:
 *  - db, the writer handle, is used only by NSR_RPC_SERIAL handlers
 *    (create, update, log), so the server-wide mutex guards it;
 *  - pdb, the purge handle, is used only under purge_mu, by the purge
 *    worker and by JOB_PURGE; a purge never takes the server-wide mutex,
 *    so inserts go on between its batches (SQLite's busy wait covers the
 *    one batch that may be running);
 *  - each query connection opens its own read handle (proc.c).
 */
#ifndef NSRJOBD_JOBD_H
#define NSRJOBD_JOBD_H

#include <pthread.h>

#include <stdint.h>
#include <time.h>

#include "nsr/daemon.h"
#include "nsr/jobdb.h"
#include "nsr/rpc.h"

#define JOBD_PURGE_INTERVAL_DEFAULT 3600 /* seconds */
#define JOBD_RETENTION_MAX (24 * 366 * 100) /* hours */

struct jobd {
	char *dbpath;		 /* <root>/jobs/jobsdb */
	char *bootdir;		 /* <root>/bootstrap (nsrbootstrap) */
	char *bootcopy;		 /* <root>/bootstrap/jobsdb */
	struct nsr_jobdb *db;	 /* writer handle (SERIAL handlers) */
	unsigned retention;	 /* hours, -r */
	unsigned interval;	 /* seconds between purges, -P */
	int interval_set;	 /* -P given (beats the test variable) */
	long long next_purge_ms; /* monotonic time of the next purge */

	/* Purge worker. */
	pthread_mutex_t purge_mu; /* guards pdb; one purge at a time */
	struct nsr_jobdb *pdb;	  /* purge handle */
	pthread_mutex_t mu;	  /* guards the fields below */
	pthread_cond_t cv;
	int purge_wanted;
	int ckpt_wanted;
	int stopping;
	int have_thread;
	pthread_t thread;
	unsigned server_hours; /* nsrd's retention at its last answer, 0 */
	int nsrd_silent;       /* its last ask went unanswered (logged) */
	struct nsr_policy *policy; /* who administers (JOB_PURGE) */
};

extern struct jobd g_jobd;
extern const struct nsr_rpc_prog jobd_progs[1];

/* jobd_authz - authz of the dispatch table (proc.c): JOB_PURGE only for
 * an administrator of the server, JOB_BACKUP also for its programs. */
int jobd_authz(void *ctx, const struct nsr_rpc_call *call,
	       const struct nsr_rpc_proc *p, const void *args,
	       struct nsr_buf *why);

/* jobd_purge_start - start the purge worker (and open its handle). */
int jobd_purge_start(struct jobd *jd);
/* jobd_purge_kick - ask the worker for a purge (purge != 0) or a
 * checkpoint (from the tick). */
void jobd_purge_kick(struct jobd *jd, int purge);
/* jobd_purge_run - purge now in this thread, with retention hours (0 =
 * the configured retention); *st gets the counts. */
int jobd_purge_run(struct jobd *jd, unsigned retention,
		   struct nsr_jobdb_purge_stats *st);
/* jobd_purge_stop - stop the worker and close its handle. */
void jobd_purge_stop(struct jobd *jd);
/* jobd_now_ms - monotonic milliseconds. */
long long jobd_now_ms(void);

#endif /* NSRJOBD_JOBD_H */
