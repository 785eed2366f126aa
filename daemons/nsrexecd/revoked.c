/*
 * revoked.c - the datazone's revocations reach this host: a thread asks
 * each server named with -S, and the server whose CA enrolled this host
 * (nsr_tls_ca_server: a client that runs no saves for a server learns
 * them as well), for its revocation list (REVOKED_GET) at start, every
 * NSR_REVOKED_POLL_SEC seconds (default EXECD_REVOKED_POLL_SEC) and at
 * once when a server says its list changed (REVOKED_NOTIFY, at most once
 * a second), and adds what <root>/tls/revoked lacks.  Every
 * daemon under this root (nsrexecd, nsrsnmd, the movers) re-reads that
 * file when it changes, so a host revoked on the server is refused here
 * within one poll, on new connections and on open ones.
 *
 * Revocations are only added: a list that shrank on the server (it never
 * does: nsrtrust only revokes) changes nothing here.  A server that
 * cannot be reached is logged once, and again when it answers.
 */
#include "nsr/compat.h"

#include <pthread.h>
#include <time.h>

#include "nsr/buf.h"
#include "nsr/daemon.h"
#include "nsr/err.h"
#include "nsr/host.h"
#include "nsr/log.h"
#include "nsr/nsrd_clnt.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsrexecd.h"
#include "nsr/rpc_status.h"
#include "nsr/tls.h"
#include "execd.h"

/* How a server's list is fetched, per -S server. */
struct revoked_peer {
	const char *server;
	struct nsr_nsrd *nsrd; /* made on first use */
	int failing;	       /* the last poll failed (logged once) */
};

static struct {
	pthread_t thread;
	int started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;
	int now;	/* REVOKED_NOTIFY: poll without waiting */
	const char *root;
	unsigned poll_sec;
	struct revoked_peer peer[EXECD_SERVERS_MAX + 1];
	int npeers;
	char ca_server[NSR_HOST_MAX + 1]; /* the enrolling server, or "" */
} g_rev = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* poll_sec - NSR_REVOKED_POLL_SEC (1 to 86400), else the default. */
static unsigned poll_sec(void)
{
	const char *e = getenv("NSR_REVOKED_POLL_SEC");
	long v = e && *e ? strtol(e, NULL, 10) : 0;

	return v >= 1 && v <= 86400 ? (unsigned)v : EXECD_REVOKED_POLL_SEC;
}

/* poll_one - fetch p's list and merge it into ours. */
static void poll_one(struct revoked_peer *p)
{
	revoked_res r;
	struct nsr_buf err;
	int rc;

	memset(&r, 0, sizeof(r));
	nsr_buf_init(&err, 0);
	rc = p->nsrd ? NSR_OK : nsr_nsrd_new(p->server, 0, &p->nsrd);
	if (rc == NSR_OK)
		rc = nsr_nsrd_revoked_get(p->nsrd, &r);
	if (rc != NSR_OK) {
		if (!p->failing)
			nsr_warn("cannot fetch the revocation list of server "
				 "%s: %s; trying again every %u s",
				 p->server,
				 p->nsrd ? nsr_nsrd_errmsg(p->nsrd)
					 : nsr_strerror(rc),
				 g_rev.poll_sec);
		p->failing = 1;
		goto out;
	}
	if (p->failing)
		nsr_info("the revocation list of server %s is fetched again",
			 p->server);
	p->failing = 0;
	rc = nsr_tls_revoked_merge(g_rev.root, r.text ? r.text : "", &err);
	if (rc > 0)
		nsr_info("%d certificate(s) revoked on server %s added to "
			 "%s/tls/revoked: their hosts are refused from now on",
			 rc, p->server, g_rev.root);
	else if (rc < 0)
		nsr_error("cannot add server %s's revocations: %s", p->server,
			  err.data);
out:
	xdr_free(NSR_XDR(xdr_revoked_res), (char *)&r);
	nsr_buf_release(&err);
}

/* poller - every poll_sec seconds until told to stop. */
static void *poller(void *arg)
{
	NSR_UNUSED(arg);
	pthread_mutex_lock(&g_rev.mu);
	while (!g_rev.stop) {
		struct timespec t;

		pthread_mutex_unlock(&g_rev.mu);
		for (int i = 0; i < g_rev.npeers; i++)
			poll_one(&g_rev.peer[i]);
		pthread_mutex_lock(&g_rev.mu);
		/* at most one poll a second, however often notified */
		clock_gettime(CLOCK_MONOTONIC, &t);
		t.tv_sec += 1;
		while (!g_rev.stop &&
		       pthread_cond_timedwait(&g_rev.cv, &g_rev.mu, &t) == 0)
			;
		t.tv_sec += (time_t)g_rev.poll_sec - 1;
		while (!g_rev.stop && !g_rev.now &&
		       pthread_cond_timedwait(&g_rev.cv, &g_rev.mu, &t) == 0)
			;
		g_rev.now = 0;
	}
	pthread_mutex_unlock(&g_rev.mu);
	return NULL;
}

/* execd_revoked_notify - see execd.h. */
int execd_revoked_notify(void *ctx, void *argp, void *resp,
			 struct nsr_rpc_call *call)
{
	nsr_void_res *r = resp;

	NSR_UNUSED(ctx);
	NSR_UNUSED(argp);
	NSR_UNUSED(call);
	pthread_mutex_lock(&g_rev.mu);
	if (g_rev.started) {
		g_rev.now = 1;
		pthread_cond_broadcast(&g_rev.cv);
	}
	pthread_mutex_unlock(&g_rev.mu);
	nsr_status_set(&r->st, NSR_OK, "%s", "");
	return NSR_OK;
}

/* add_peer - poll server too, unless it is polled already (by the same
 * name) or the table is full; 1 if added. */
static int add_peer(const char *server)
{
	if (g_rev.npeers >= (int)NSR_ARRAY_SIZE(g_rev.peer))
		return 0;
	for (int i = 0; i < g_rev.npeers; i++)
		if (strcasecmp(g_rev.peer[i].server, server) == 0)
			return 0;
	g_rev.peer[g_rev.npeers].server = server;
	g_rev.peer[g_rev.npeers].nsrd = NULL;
	g_rev.peer[g_rev.npeers++].failing = 0;
	return 1;
}

/* execd_revoked_start - see execd.h. */
void execd_revoked_start(struct nsr_daemon *d)
{
	g_rev.root = d->root;
	g_rev.poll_sec = poll_sec();
	g_rev.npeers = 0;
	for (int i = 0; i < execd_run_nservers() &&
			i < EXECD_SERVERS_MAX; i++)
		add_peer(execd_run_server(i));
	if (!nsr_tls_disabled() &&
	    nsr_tls_ca_server(d->root, g_rev.ca_server,
			      sizeof(g_rev.ca_server)) == NSR_OK &&
	    add_peer(g_rev.ca_server))
		nsr_info("this host was enrolled by server %s: its revocation "
			 "list is fetched from there every %u s",
			 g_rev.ca_server, g_rev.poll_sec);
	if (g_rev.npeers == 0)
		return;
	g_rev.stop = 0;
	if (nsr_rpc_cond_init(&g_rev.cv) != NSR_OK ||
	    pthread_create(&g_rev.thread, NULL, poller, NULL) != 0) {
		nsr_error("cannot start the revocation poll: revocations "
			  "made on the server reach this host only when "
			  "%s/tls/revoked is copied here", d->root);
		return;
	}
	pthread_mutex_lock(&g_rev.mu);
	g_rev.started = 1;
	pthread_mutex_unlock(&g_rev.mu);
}

/* execd_revoked_stop - see execd.h. */
void execd_revoked_stop(void)
{
	pthread_mutex_lock(&g_rev.mu);
	if (!g_rev.started) {
		pthread_mutex_unlock(&g_rev.mu);
		return;
	}
	g_rev.stop = 1;
	g_rev.started = 0; /* a REVOKED_NOTIFY from now on signals nothing */
	pthread_cond_broadcast(&g_rev.cv);
	pthread_mutex_unlock(&g_rev.mu);
	pthread_join(g_rev.thread, NULL);
	pthread_cond_destroy(&g_rev.cv);
	for (int i = 0; i < g_rev.npeers; i++) {
		nsr_nsrd_close(g_rev.peer[i].nsrd);
		g_rev.peer[i].nsrd = NULL;
	}
}
