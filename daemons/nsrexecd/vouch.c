/*
 * vouch.c - nsrexecd vouches for the users of its host (nsrexecd(8),
 * VOUCHING): a Unix socket <root>/nsrexecd.sock (mode 0666) where a
 * process that cannot read this host's key asks for a connection to an
 * OpenNSR program; the kernel tells who it is (SO_PEERCRED), and the
 * relay (src/rpc/vouch.c) connects as this host stating that uid's
 * name.  One thread accepts, one detached thread serves each relay, at
 * most MAX_RELAYS at once (more are told to wait).
 */
#include "nsr/compat.h"

#include <pthread.h>
#include <pwd.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "nsr/daemon.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/log.h"
#include "nsr/rpc.h"
#include "execd.h"

#define MAX_RELAYS 256

static int lfd = -1;
static pthread_t acceptor;
static int started;
static atomic_int relays;

struct relay {
	int fd;
	char user[NSR_RPC_USER_MAX + 1];
};

/* relay_main - serve one vouched connection, then end. */
static void *relay_main(void *arg)
{
	struct relay *r = arg;

	nsr_rpc_vouch_serve(r->fd, r->user);
	close(r->fd);
	free(r);
	atomic_fetch_sub(&relays, 1);
	return NULL;
}

/* peer_user - the name of the uid at the other end of fd, or -1. */
static int peer_user(int fd, char *out, size_t len)
{
	struct ucred cr;
	socklen_t sl = sizeof(cr);
	struct passwd pw, *res = NULL;
	char buf[4096];

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &sl) != 0 ||
	    getpwuid_r(cr.uid, &pw, buf, sizeof(buf), &res) != 0 || !res)
		return -1;
	snprintf(out, len, "%s", res->pw_name);
	return 0;
}

/* accept_main - accept requesters until the socket is shut down. */
static void *accept_main(void *arg)
{
	static const char busy[] = "error: busy or unknown user\n";

	NSR_UNUSED(arg);
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		struct relay *r;
		pthread_attr_t at;
		pthread_t t;

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return NULL;
		}
		r = calloc(1, sizeof(*r));
		if (!r || peer_user(fd, r->user, sizeof(r->user)) != 0 ||
		    atomic_fetch_add(&relays, 1) >= MAX_RELAYS) {
			if (r && r->user[0])
				atomic_fetch_sub(&relays, 1);
			(void)nsr_write_full(fd, busy, sizeof(busy) - 1);
			close(fd);
			free(r);
			continue;
		}
		r->fd = fd;
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &at, relay_main, r) != 0) {
			close(fd);
			free(r);
			atomic_fetch_sub(&relays, 1);
		}
		pthread_attr_destroy(&at);
	}
}

/* execd_vouch_start - open <root>/nsrexecd.sock and accept on it; a
 * failure is logged and leaves vouching off. */
void execd_vouch_start(struct nsr_daemon *d)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};

	if (nsr_rpc_vouch_path(d->root, a.sun_path, sizeof(a.sun_path))) {
		nsr_warn("root %s is too long for the vouching socket; users "
			 "other than root cannot reach servers", d->root);
		return;
	}
	unlink(a.sun_path);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    chmod(a.sun_path, 0666) != 0 || listen(lfd, 64) != 0 ||
	    pthread_create(&acceptor, NULL, accept_main, NULL) != 0) {
		nsr_warn("cannot serve %s (%s); users other than root cannot "
			 "reach servers", a.sun_path, strerror(errno));
		if (lfd >= 0)
			close(lfd);
		lfd = -1;
		return;
	}
	started = 1;
	nsr_info("vouching for this host's users on %s", a.sun_path);
}

/* execd_vouch_stop - stop accepting; relays under way end with their
 * peers (the process exits). */
void execd_vouch_stop(struct nsr_daemon *d)
{
	char path[200];

	if (!started)
		return;
	shutdown(lfd, SHUT_RDWR);
	pthread_join(acceptor, NULL);
	close(lfd);
	lfd = -1;
	started = 0;
	if (nsr_rpc_vouch_path(d->root, path, sizeof(path)) == NSR_OK)
		unlink(path);
}
