/*
 * revnotify.c - a changed revocation list is announced at once: the tick
 * watches <root>/tls/revoked (inode, size, modification time) and, when
 * it changes (nsrtrust revoke), a thread of its own tells the nsrexecd
 * of every other host the resources name (the storage nodes of rd=HOST:
 * devices, the clients) with REVOKED_NOTIFY, and each fetches the list
 * from nsrd (REVOKED_GET) within a second.  Their own polls (every 30 s)
 * catch what a notice missed: a host that was down, a client whose
 * nsrexecd serves no server.
 */
#include "nsr/compat.h"

#include <pthread.h>
#include <sys/stat.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/execd_clnt.h"
#include "nsr/fileio.h"
#include "nsr/host.h"
#include "nsr/log.h"
#include "nsr/res.h"
#include "nsr/resdb.h"
#include "nsr/rpc.h"
#include "nsr/tls.h"
#include "nsrd.h"

#define NOTIFY_REPLY_MS 3000 /* a host that does not answer is skipped */

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	int started, stop;
	int seen;		/* the file's identity below is known */
	struct stat last;	/* as the last tick saw it */
	char **hosts;		/* to tell, handed to the thread */
	size_t nhosts;
} g_rn = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* stopping - nsrd is stopping: tell no more hosts. */
static int stopping(void)
{
	int stop;

	pthread_mutex_lock(&g_rn.mu);
	stop = g_rn.stop;
	pthread_mutex_unlock(&g_rn.mu);
	return stop;
}

/* tell_all - REVOKED_NOTIFY to each host (the thread, no lock held);
 * nsrd's stop ends it between two hosts. */
static void tell_all(char **hosts, size_t n)
{
	size_t told = 0;
	struct nsr_buf err, missed;

	nsr_buf_init(&err, 0);
	nsr_buf_init(&missed, 0);
	for (size_t i = 0; i < n; i++) {
		struct nsr_execd *h = NULL;

		nsr_buf_reset(&err);
		if (stopping()) {
			free(hosts[i]);
			continue;
		}
		if (nsr_execd_new(hosts[i], 0, &h) == NSR_OK) {
			nsr_execd_set_timeout(h, NOTIFY_REPLY_MS);
			if (nsr_execd_revoked_notify(h, &err) == NSR_OK)
				told++;
			else
				nsr_buf_addf(&missed, "%s%s", missed.len
							? ", " : "",
					     hosts[i]);
		}
		nsr_execd_close(h);
		free(hosts[i]);
	}
	free(hosts);
	nsr_info("revocation list changed: %zu of %zu hosts told%s%s%s", told,
		 n, missed.len ? " (not reached: " : "",
		 missed.len ? missed.data : "", missed.len ? "; their "
		 "nsrexecd fetches it within 30 s of coming back)" : "");
	nsr_buf_release(&err);
	nsr_buf_release(&missed);
}

/* notifier - tells the hosts each list the tick hands over. */
static void *notifier(void *arg)
{
	NSR_UNUSED(arg);
	pthread_mutex_lock(&g_rn.mu);
	while (!g_rn.stop) {
		char **hosts = g_rn.hosts;
		size_t n = g_rn.nhosts;

		if (!hosts) {
			pthread_cond_wait(&g_rn.cv, &g_rn.mu);
			continue;
		}
		g_rn.hosts = NULL;
		g_rn.nhosts = 0;
		pthread_mutex_unlock(&g_rn.mu);
		tell_all(hosts, n);
		pthread_mutex_lock(&g_rn.mu);
	}
	pthread_mutex_unlock(&g_rn.mu);
	return NULL;
}

/* add_host - host into v (no duplicates, not this host), or -1. */
static int add_host(char ***v, size_t *n, const char *host, const char *self)
{
	char **nv;

	if (!host || !*host || strcasecmp(host, self) == 0 ||
	    strcasecmp(host, "localhost") == 0)
		return 0;
	for (size_t i = 0; i < *n; i++)
		if (strcasecmp((*v)[i], host) == 0)
			return 0;
	nv = realloc(*v, (*n + 1) * sizeof(*nv));
	if (!nv)
		return -1;
	*v = nv;
	nv[*n] = strdup(host);
	if (!nv[*n])
		return -1;
	(*n)++;
	return 0;
}

/* hosts_of - the hosts the resources name: storage nodes of devices and
 * clients (RPC mutex held). */
static int hosts_of(struct nsrd *n, char ***v, size_t *nv)
{
	size_t count = nsr_resdb_count(n->res);
	char host[NSR_HOST_MAX + 1];

	for (size_t i = 0; i < count; i++) {
		const struct nsr_res *r = nsr_resdb_at(n->res, i);
		const char *type = nsr_res_get(r, "type");
		const char *name = nsr_res_get(r, "name");

		if (!type || !name)
			continue;
		if (strcasecmp(type, "NSR client") == 0) {
			if (add_host(v, nv, name, n->server_name))
				return -1;
		} else if (strcasecmp(type, "NSR device") == 0) {
			host[0] = '\0';
			if (nsrd_device_host(r, host, sizeof(host)) &&
			    add_host(v, nv, host, n->server_name))
				return -1;
		}
	}
	return 0;
}

/* nsrd_revoked_tick - see nsrd.h. */
void nsrd_revoked_tick(struct nsrd *n)
{
	char path[4096];
	struct stat st;
	char **hosts = NULL;
	size_t nh = 0;

	snprintf(path, sizeof(path), "%s/tls/revoked", n->d->root);
	if (stat(path, &st) != 0)
		memset(&st, 0, sizeof(st)); /* none yet */
	if (!g_rn.seen) {
		g_rn.last = st;
		g_rn.seen = 1;
		return;
	}
	if (nsr_stat_same(&st, &g_rn.last))
		return;
	g_rn.last = st;
	if (hosts_of(n, &hosts, &nh) != 0) {
		nsr_warn("out of memory while listing the hosts to tell of a "
			 "revocation: they fetch it within 30 s");
		for (size_t i = 0; i < nh; i++)
			free(hosts[i]);
		free(hosts);
		return;
	}
	pthread_mutex_lock(&g_rn.mu);
	if (!g_rn.started && !g_rn.stop) {
		if (nsr_rpc_cond_init(&g_rn.cv) == NSR_OK &&
		    pthread_create(&g_rn.thread, NULL, notifier, NULL) == 0)
			g_rn.started = 1;
	}
	if (g_rn.started && !g_rn.hosts) {
		g_rn.hosts = hosts;
		g_rn.nhosts = nh;
		hosts = NULL;
		pthread_cond_broadcast(&g_rn.cv);
	}
	pthread_mutex_unlock(&g_rn.mu);
	if (hosts) { /* no thread, or one still telling: their polls will */
		for (size_t i = 0; i < nh; i++)
			free(hosts[i]);
		free(hosts);
	}
}

/* nsrd_revoked_stop - see nsrd.h. */
void nsrd_revoked_stop(void)
{
	pthread_mutex_lock(&g_rn.mu);
	g_rn.stop = 1;
	if (!g_rn.started) {
		pthread_mutex_unlock(&g_rn.mu);
		return;
	}
	pthread_cond_broadcast(&g_rn.cv);
	pthread_mutex_unlock(&g_rn.mu);
	pthread_join(g_rn.thread, NULL);
	pthread_cond_destroy(&g_rn.cv);
	g_rn.started = 0;
	for (size_t i = 0; i < g_rn.nhosts; i++)
		free(g_rn.hosts[i]);
	free(g_rn.hosts);
	g_rn.hosts = NULL;
	g_rn.nhosts = 0;
}
