/*
 * lease.c - the session leases a client renews at nsrd (session_int.h).
 *
 * nsrd owns every save and recover session and settles one whose lease
 * (120 s by default) lapses.  A client renews the leases of all its
 * sessions from one thread of its own, over a connection of its own, so
 * a session that moves no data for a long time (a walk over unchanged
 * files, a slow source, a recover waiting for its mover) keeps its lease.
 * A save is renewed by ssid, a recover by job id (ssid 0).  The threads
 * that do the work only read what the renewer found (a session nsrd has
 * settled, a warning).
 *
 * Invariants:
 *  1. mu guards everything in struct session_lease below it; the renewer
 *     never holds mu during an RPC.
 *  2. A session removed (session_lease_remove) is never renewed again
 *     once the call returns.
 */
#include "nsr/compat.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/nsrd_clnt.h"
#include "nsr/rpc.h"
#include "nsr/session.h"

#include "session_int.h"

/* How often the leases are renewed (nsrd's lease is 120 s). */
#define LEASE_RENEW_SEC 30
/* Sessions one lease renews. */
#define LEASE_MAX 256

struct lease_entry {
	int64_t jobid;
	uint32_t ssid; /* 0: a recover, renewed by job id */
	int settled;   /* nsrd answered that it settled the session */
};

struct session_lease {
	char *server;
	char *client;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;
	size_t n;
	struct lease_entry e[LEASE_MAX];
	char warn[512]; /* a failed renewal, for the working threads */
};

/* session_lease_period - seconds between renewals: a quarter of the lease
 * when a test shortens it (NSR_LEASE_SEC, as nsrd reads it), else 30. */
time_t session_lease_period(void)
{
	const char *e = getenv("NSR_LEASE_SEC");
	long v = e && *e ? strtol(e, NULL, 10) / 4 : 0;

	return v > 0 && v < LEASE_RENEW_SEC ? (time_t)v : LEASE_RENEW_SEC;
}

/* renew_one - one SAVE_RENEW over d: 1 when nsrd answers that it settled
 * the session meanwhile, else 0 (a failure is put in warn). */
static int renew_one(struct nsr_nsrd *d, const struct lease_entry *le,
		     const char *client, char *warn, size_t wlen)
{
	save_renew_args a;
	nsr_void_res r;
	int rc;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.ssid = le->ssid;
	a.jobid = le->jobid;
	a.client = (char *)client;
	rc = d ? nsr_nsrd_save_renew(d, &a, &r) : NSR_ERR_CONNECT;
	if (rc != NSR_OK && rc != NSR_ERR_STATE) {
		if (le->ssid)
			snprintf(warn, wlen, "cannot renew the lease of save "
				 "set %u at nsrd: %s", le->ssid,
				 d ? nsr_nsrd_errmsg(d) : "no connection");
		else
			snprintf(warn, wlen, "cannot renew the lease of "
				 "recover job %lld at nsrd: %s",
				 (long long)le->jobid,
				 d ? nsr_nsrd_errmsg(d) : "no connection");
	}
	xdr_free(NSR_XDR(xdr_nsr_void_res), (char *)&r);
	return rc == NSR_ERR_STATE;
}

/* lease_main - the renewer thread: renew every session every period
 * until told to stop (the wait for a restarting nsrd is bounded by the
 * period, so stopping never waits long). */
static void *lease_main(void *arg)
{
	struct session_lease *l = arg;
	struct nsr_nsrd *d = NULL;
	struct nsr_buf err;
	struct timespec until;
	char warn[sizeof(l->warn)];

	nsr_buf_init(&err, 0);
	pthread_mutex_lock(&l->mu);
	while (!l->stop) {
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += session_lease_period();
		while (!l->stop &&
		       pthread_cond_timedwait(&l->cv, &l->mu, &until) !=
			       ETIMEDOUT)
			;
		/* One session at a time, mu released for each call. */
		for (size_t i = 0; !l->stop && i < l->n; i++) {
			struct lease_entry le = l->e[i];
			int settled;

			if (le.settled)
				continue;
			pthread_mutex_unlock(&l->mu);
			warn[0] = '\0';
			if (!d &&
			    nsr_nsrd_open(l->server, &d, &err) == NSR_OK)
				nsr_nsrd_set_wait(
					d, (int)session_lease_period() * 500);
			settled = renew_one(d, &le, l->client, warn,
					    sizeof(warn));
			nsr_buf_reset(&err);
			pthread_mutex_lock(&l->mu);
			/* The entry may have moved (removed meanwhile). */
			for (size_t k = 0; settled && k < l->n; k++)
				if (l->e[k].jobid == le.jobid &&
				    l->e[k].ssid == le.ssid)
					l->e[k].settled = 1;
			if (warn[0])
				snprintf(l->warn, sizeof(l->warn), "%s", warn);
		}
	}
	pthread_mutex_unlock(&l->mu);
	nsr_nsrd_close(d);
	nsr_buf_release(&err);
	return NULL;
}

/* session_lease_start - a lease renewer for client's sessions at nsrd on
 * server (NULL: as nsr_nsrd_open takes it); none yet.  NSR_OK,
 * NSR_ERR_NOMEM or NSR_ERR_SYSTEM (err says why). */
int session_lease_start(const char *server, const char *client,
			struct session_lease **out, struct nsr_buf *err)
{
	struct session_lease *l = calloc(1, sizeof(*l));
	int e;

	*out = NULL;
	if (!l || (server && !(l->server = strdup(server))) ||
	    !(l->client = strdup(client ? client : ""))) {
		if (l) {
			free(l->server);
			free(l);
		}
		return NSR_ERR_NOMEM;
	}
	pthread_mutex_init(&l->mu, NULL);
	pthread_cond_init(&l->cv, NULL);
	e = pthread_create(&l->thread, NULL, lease_main, l);
	if (e != 0) {
		nsr_buf_addf(err, "cannot start the lease renewer: %s",
			     strerror(e));
		pthread_cond_destroy(&l->cv);
		pthread_mutex_destroy(&l->mu);
		free(l->client);
		free(l->server);
		free(l);
		return NSR_ERR_SYSTEM;
	}
	*out = l;
	return NSR_OK;
}

/* session_lease_add - renew the session of jobid (a save: its ssid; a
 * recover: ssid 0) from now on.  NSR_ERR_LIMIT when LEASE_MAX are. */
int session_lease_add(struct session_lease *l, int64_t jobid, uint32_t ssid)
{
	int rc = NSR_ERR_LIMIT;

	if (!l)
		return NSR_ERR_INVAL;
	pthread_mutex_lock(&l->mu);
	if (l->n < LEASE_MAX) {
		l->e[l->n].jobid = jobid;
		l->e[l->n].ssid = ssid;
		l->e[l->n].settled = 0;
		l->n++;
		rc = NSR_OK;
	}
	pthread_mutex_unlock(&l->mu);
	return rc;
}

/* session_lease_remove - stop renewing the session of jobid (its end was
 * told to nsrd, or is about to be). */
void session_lease_remove(struct session_lease *l, int64_t jobid)
{
	if (!l)
		return;
	pthread_mutex_lock(&l->mu);
	for (size_t i = 0; i < l->n; i++)
		if (l->e[i].jobid == jobid) {
			l->e[i] = l->e[--l->n];
			break;
		}
	pthread_mutex_unlock(&l->mu);
}

/* session_lease_check - what the renewer found since the last check: a
 * warning into warn (empty if none), and 1 if nsrd settled the session
 * of jobid (0 = any session), else 0. */
int session_lease_check(struct session_lease *l, int64_t jobid, char *warn,
			size_t wlen)
{
	int settled = 0;

	if (wlen)
		warn[0] = '\0';
	if (!l)
		return 0;
	pthread_mutex_lock(&l->mu);
	for (size_t i = 0; i < l->n; i++)
		if (l->e[i].settled && (!jobid || l->e[i].jobid == jobid))
			settled = 1;
	if (wlen)
		snprintf(warn, wlen, "%s", l->warn);
	l->warn[0] = '\0';
	pthread_mutex_unlock(&l->mu);
	return settled;
}

/* session_lease_stop - stop the renewer, wait for it and free it (NULL
 * is fine). */
void session_lease_stop(struct session_lease *l)
{
	if (!l)
		return;
	pthread_mutex_lock(&l->mu);
	l->stop = 1;
	pthread_cond_signal(&l->cv);
	pthread_mutex_unlock(&l->mu);
	pthread_join(l->thread, NULL);
	pthread_cond_destroy(&l->cv);
	pthread_mutex_destroy(&l->mu);
	free(l->client);
	free(l->server);
	free(l);
}
