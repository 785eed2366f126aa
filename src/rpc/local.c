/*
 * local.c - same-host connections over Unix-domain sockets (nsr/rpc.h,
 * "Same-host connections").
 *
 * A daemon that listens on TCP port P also listens on <root>/sockets/P.
 * A client that calls a program on this host (the host it names is
 * localhost, a loopback address, this host's name or its certified
 * name) and finds that socket under its own root connects there
 * instead of to TCP: no TLS is needed, because the kernel tells each
 * end who the other is (SO_PEERCRED), which is what the certificates
 * prove across the network.  Anything that does not check out falls
 * back to TCP with TLS, silently: the socket is missing or dead, the
 * directory could have been written by someone else, the listener is
 * not root, the client's own uid or the directory's owner.
 *
 * Invariants:
 *  1. a client uses a socket only in a directory that is a real
 *     directory (not a symlink), owned by root, by this process's uid
 *     or by the root's owner, and not writable by group or others,
 *     under a root (a link to one is followed) that is not writable by
 *     group or others either: only its owner (or root) can have bound a
 *     socket there;
 *  2. a client talks over a socket only to a listener whose uid the
 *     kernel reports as root, its own, or the directory's owner;
 *  3. the server takes a caller's user from the kernel: the name of its
 *     uid, unless the uid is root or the server's own (processes that
 *     can read this host's key, or the daemon's memory, and would be
 *     believed over TLS too), whose stated user is believed; a caller
 *     whose uid has no valid name may state none (server.c take_user);
 *  4. a daemon never removes a socket another live daemon listens on:
 *     it binds over a stale one only after a connect to it failed;
 *  5. the socket is removed at stop only if it is still the one bound;
 *  6. a daemon run without root (-u) binds its socket while still root
 *     (the daemon skeleton) and cannot remove it from root's directory
 *     at stop: such a dead socket is removed by root's daemons with
 *     nsr_rpc_local_sweep (nsrsnmd for a mover it reaped, nsrexecd for
 *     every socket at start, at stop and every minute), and only when a
 *     connect to it is refused, which a live listener never does.
 */
#include "nsr/compat.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/host.h"
#include "nsr/rpc.h"
#include "nsr/tls.h"
#include "rpc_int.h"
#include "server_int.h"

#define LOCAL_DIR "sockets"

/* nsr_rpc_local_enabled - 0 when NSR_LOCAL_SOCKETS=0 (every connection
 * then goes over TCP) or a test proxy must see every connection
 * (NSR_TEST_CONNECT_VIA). */
int nsr_rpc_local_enabled(void)
{
	const char *e = getenv("NSR_LOCAL_SOCKETS");
	const char *via = getenv("NSR_TEST_CONNECT_VIA");

	return !(e && strcmp(e, "0") == 0) && !(via && *via);
}

/* nsr_rpc_local_path - "<root>/sockets/<port>" (port 0: the directory)
 * into out[len]; NSR_ERR_TOOBIG if it would not fit a socket address. */
int nsr_rpc_local_path(const char *root, int port, char *out, size_t len)
{
	size_t cap = sizeof(((struct sockaddr_un *)0)->sun_path);
	int n = port > 0 ? snprintf(out, len, "%s/%s/%d", root, LOCAL_DIR,
				    port)
			 : snprintf(out, len, "%s/%s", root, LOCAL_DIR);

	return n < 0 || (size_t)n >= len || (size_t)n >= cap ? NSR_ERR_TOOBIG
							     : NSR_OK;
}

/* uid_name - the user name of uid into out (valid for NSR_AUTH_USER):
 * 1, or 0 when it has none. */
static int uid_name(uid_t uid, char out[NSR_RPC_USER_MAX + 1])
{
	struct passwd pw, *res = NULL;
	char buf[4096];

	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) != 0 || !res ||
	    !nsr_rpc_user_valid(pw.pw_name))
		return 0;
	snprintf(out, NSR_RPC_USER_MAX + 1, "%s", pw.pw_name);
	return 1;
}

/* mark_local - c, wrapping fd, is a same-host connection. */
static void mark_local(struct nsr_conn *c, int fd)
{
	nsr_conn_init_unix(c, fd);
	c->local = 1;
	c->peer_loopback = 1;
}

/* nsr_conn_init_local - wrap fd, accepted on a local listener: who the
 * kernel says the caller is (invariant 3). */
void nsr_conn_init_local(struct nsr_conn *c, int fd)
{
	struct ucred cr;
	socklen_t sl = sizeof(cr);

	mark_local(c, fd);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &sl) != 0) {
		/* Unknown caller: no statement is believed. */
		c->peer_uid = -1;
		c->user_fixed = 1;
		return;
	}
	c->peer_uid = (long)cr.uid;
	snprintf(c->peer, sizeof(c->peer), "local pid %ld uid %ld",
		 (long)cr.pid, (long)cr.uid);
	/* Its names are looked up by the worker that serves its first call
	 * (nsr_conn_local_resolve), not here in the daemon's loop. */
	if (cr.uid != 0 && cr.uid != geteuid())
		c->user_fixed = 1;
}

/* nsr_conn_local_resolve - once, on a worker: a local caller's user, the
 * name of its uid when the kernel's word fixes it (invariant 3; "" when
 * it has no valid one), into user; its host, this one as TLS would have
 * certified it, into c->peer_host. */
void nsr_conn_local_resolve(struct nsr_conn *c,
			    char user[NSR_RPC_USER_MAX + 1])
{
	if (!c->local || c->resolved)
		return;
	c->resolved = 1;
	if (c->user_fixed && (c->peer_uid < 0 ||
			      !uid_name((uid_t)c->peer_uid, user)))
		user[0] = '\0';
	if (!nsr_tls_self_name(c->peer_host, sizeof(c->peer_host)))
		c->peer_host[0] = '\0';
}

/* private_dir - invariant 1 for one directory: a directory (a real
 * one unless follow: the root may be a link, e.g. /nsr to a larger
 * disk, which only the owner of the link's directory could change),
 * not writable by group or others; its owner into *owner. */
static int private_dir(const char *path, int follow, uid_t *owner)
{
	struct stat st;

	if ((follow ? stat(path, &st) : lstat(path, &st)) != 0 ||
	    !S_ISDIR(st.st_mode) ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)))
		return 0;
	*owner = st.st_uid;
	return 1;
}

/* this_host - 1 if host names this host: localhost, a loopback
 * address, its host name or the name its certificate states. */
static int this_host(const char *host)
{
	char self[NSR_HOST_MAX + 1];
	struct in_addr a4;
	struct in6_addr a6;

	if (strcasecmp(host, "localhost") == 0 ||
	    strncasecmp(host, "localhost.", 10) == 0)
		return 1;
	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, host, &a6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&a6);
	nsr_host_self(self, sizeof(self));
	if (nsr_host_same(host, self))
		return 1;
	return nsr_tls_self_name(self, sizeof(self)) &&
	       nsr_host_same(host, self);
}

/* believed - 1 if a listener of uid will take user (NULL: none) as
 * this process's statement (invariant 3): root, the listener's own uid,
 * or the name of this process's uid. */
static int believed(uid_t listener, const char *user)
{
	char me[NSR_RPC_USER_MAX + 1];

	return !user || geteuid() == 0 || geteuid() == listener ||
	       (uid_name(geteuid(), me) && strcmp(me, user) == 0);
}

/* nsr_conn_connect_local - connect to host:port through this host's
 * socket for port, to state user (NULL: none): NSR_OK and c connected,
 * or 1 (nothing done) when the socket is not to be used (see the top;
 * also when the listener would not take user from this uid: a daemon
 * run with -u states root, which its host key proves over TLS). */
int nsr_conn_connect_local(struct nsr_conn *c, const char *host, int port,
			   const char *user)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	const char *root = nsr_tls_root();
	struct ucred cr;
	socklen_t sl = sizeof(cr);
	uid_t rowner, downer;
	char dir[sizeof(a.sun_path)];
	int fd;

	if (!nsr_rpc_local_enabled() || !this_host(host) ||
	    nsr_rpc_local_path(root, port, a.sun_path, sizeof(a.sun_path)) ||
	    nsr_rpc_local_path(root, 0, dir, sizeof(dir)) ||
	    !private_dir(root, 1, &rowner) || !private_dir(dir, 0, &downer) ||
	    (downer != 0 && downer != geteuid() && downer != rowner))
		return 1;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 1;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &sl) != 0 ||
	    (cr.uid != 0 && cr.uid != geteuid() && cr.uid != downer) ||
	    !believed(cr.uid, user)) {
		close(fd); /* invariants 2 and 3 */
		return 1;
	}
	mark_local(c, fd);
	snprintf(c->peer, sizeof(c->peer), "%s:%d (local socket)", host, port);
	return NSR_OK;
}

/* probe - what a connect to the socket at path says, without waiting:
 * 0 when a listener is there (it took the connection, or its queue is
 * full), else the errno (ECONNREFUSED: nothing listens; invariants 4
 * and 6). */
static int probe(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
			0), e = 0;

	if (fd < 0)
		return errno;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0 &&
	    errno != EAGAIN)
		e = errno;
	close(fd);
	return e;
}

/* sweep_one - remove the socket at path if it is one, was bound at least
 * min_age_s seconds before now and nothing listens on it (invariant 6);
 * 1 if it was removed. */
static int sweep_one(const char *path, int min_age_s, time_t now)
{
	struct stat st, again;

	if (lstat(path, &st) != 0 || !S_ISSOCK(st.st_mode) ||
	    now - st.st_mtime < min_age_s || probe(path) != ECONNREFUSED)
		return 0;
	/* still that socket: not one bound in its place meanwhile */
	if (lstat(path, &again) != 0 || again.st_ino != st.st_ino)
		return 0;
	return unlink(path) == 0;
}

/* nsr_rpc_local_sweep - see nsr/rpc.h (invariant 6). */
int nsr_rpc_local_sweep(const char *root, int port, int min_age_s)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char path[sizeof(dir)];
	time_t now = time(NULL);
	struct dirent *e;
	DIR *dp;
	int n = 0;

	if (port > 0)
		return nsr_rpc_local_path(root, port, path, sizeof(path)) ==
				       NSR_OK
			       ? sweep_one(path, min_age_s, now)
			       : 0;
	if (nsr_rpc_local_path(root, 0, dir, sizeof(dir)) != NSR_OK)
		return 0;
	dp = opendir(dir);
	if (!dp)
		return 0;
	while ((e = readdir(dp)) != NULL) {
		long p;
		char *end;

		errno = 0;
		p = strtol(e->d_name, &end, 10);
		if (*end || p <= 0 || p > 65535 || errno ||
		    nsr_rpc_local_path(root, (int)p, path, sizeof(path)))
			continue; /* not a port's socket */
		n += sweep_one(path, min_age_s, now);
	}
	closedir(dp);
	return n;
}

/* nsr_rpc_server_listen_local - listen on <root>/sockets/<port> too. */
int nsr_rpc_server_listen_local(struct nsr_rpc_server *s, const char *root,
				int port, struct nsr_buf *err)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	char dir[sizeof(a.sun_path)];
	struct stat st;
	uid_t owner;
	int fd;

	if (s->nlisten >= MAX_LISTEN) {
		nsr_buf_addf(err, "%d listeners already", MAX_LISTEN);
		return NSR_ERR_LIMIT;
	}
	if (nsr_rpc_local_path(root, port, a.sun_path, sizeof(a.sun_path)) ||
	    nsr_rpc_local_path(root, 0, dir, sizeof(dir))) {
		nsr_buf_addf(err, "the root's path is too long for a socket");
		return NSR_ERR_TOOBIG;
	}
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		nsr_buf_addf(err, "cannot create %s: %s", dir, strerror(errno));
		return NSR_ERR_SYSTEM;
	}
	if (!private_dir(dir, 0, &owner)) {
		nsr_buf_addf(err, "%s is not a directory only its owner can "
			     "write (chmod go-w it)", dir);
		return NSR_ERR_PERM;
	}
	if (lstat(a.sun_path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode) || probe(a.sun_path) == 0) {
			nsr_buf_addf(err, "%s is in use", a.sun_path);
			return NSR_ERR_EXISTS;
		}
		unlink(a.sun_path); /* a stale one (invariant 4) */
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    chmod(a.sun_path, 0666) != 0 || listen(fd, SOMAXCONN) != 0 ||
	    lstat(a.sun_path, &st) != 0) {
		nsr_buf_addf(err, "%s: %s", a.sun_path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NSR_ERR_SYSTEM;
	}
	s->lpath[s->nlisten] = strdup(a.sun_path);
	s->lino[s->nlisten] = st.st_ino;
	s->lfd[s->nlisten++] = fd;
	return NSR_OK;
}

/* nsr_rpc_server_unlink_local - remove the sockets this server bound,
 * if they are still its own (invariant 5). */
void nsr_rpc_server_unlink_local(struct nsr_rpc_server *s)
{
	struct stat st;

	for (int i = 0; i < s->nlisten; i++) {
		if (!s->lpath[i])
			continue;
		if (lstat(s->lpath[i], &st) == 0 && st.st_ino == s->lino[i])
			unlink(s->lpath[i]);
		free(s->lpath[i]);
		s->lpath[i] = NULL;
	}
}
