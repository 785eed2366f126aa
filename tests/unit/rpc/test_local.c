/*
 * test_local.c - same-host connections (nsr/rpc.h, "Same-host
 * connections"; src/rpc/local.c): a client calling a server of this
 * host goes over the server's local socket under the root and the
 * handler knows it; NSR_LOCAL_SOCKETS=0, a socket directory others can
 * write, or a dead socket send it over TCP instead; a live socket is
 * never taken over by a second server, a stale one is; a server removes
 * only its own socket at stop; a root too long for a socket address
 * leaves TCP alone; with TLS on, a local socket answers a STARTTLS
 * probe plain and names its caller's host with this host's certified
 * name.  As root, a process of another uid
 * (nobody) is known by its uid's name, and refused when it states
 * another (invariant 3 of local.c); the library does not even try.
 */
#include "nsr/compat.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsrexecd.h"
#include "nsr/tls.h"
#include "nsr/xmalloc.h"
#include "nsr_test.h"
#include "rpc_testsrv.h"

static char g_root[64];
static char seen_who[200]; /* user@host the last handler saw */
static int seen_local;	   /* and whether it came over a local socket */

/* h_who - remember who called and how. */
static int h_who(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	loc_get_res *r = res;

	NSR_UNUSED(ctx);
	NSR_UNUSED(args);
	nsr_rpc_call_who(call, seen_who, sizeof(seen_who));
	seen_local = nsr_rpc_call_local(call);
	r->st.msg = nsr_xstrdup("");
	r->port = 42;
	return NSR_OK;
}

static const struct nsr_rpc_proc procs[] = {
	{1, "who", NSR_XDR(xdr_loc_key), sizeof(loc_key),
	 NSR_XDR(xdr_loc_get_res), sizeof(loc_get_res), h_who, 0},
};

static const struct nsr_rpc_prog progs[] = {
	{NSREXECD_PROG, NSREXECD_V1, procs, 1, NULL, NULL},
};

static void bind_stale(const char *path);

/* start - a server on 127.0.0.1 and, if local, on its local socket
 * under g_root (asserted to succeed); local 2: a stale socket file
 * lies there first. */
static void start(struct test_server *s, int local)
{
	char path[128];
	struct nsr_buf why;

	test_server_listen(s, progs, 1);
	if (local == 2) {
		assert_int_equal(nsr_rpc_local_path(g_root, s->port, path,
						    sizeof(path)),
				 NSR_OK);
		bind_stale(path);
	}
	nsr_buf_init(&why, 0);
	if (local)
		assert_int_equal(nsr_rpc_server_listen_local(s->srv, g_root,
							     s->port, &why),
				 NSR_OK);
	nsr_buf_release(&why);
	test_server_run(s);
}

/* ask - connect to host:port and call; NSR_OK with seen_* set, or the
 * failure.  *peer (if given) gets what the client says it talks to. */
static int ask(const char *host, int port, char *peer, size_t len)
{
	struct nsr_rpc_clnt *c = NULL;
	loc_key k = {.prog = 1, .vers = 1};
	loc_get_res r;
	int rc;

	seen_who[0] = '\0';
	seen_local = -1;
	rc = nsr_rpc_connect(host, port, NSREXECD_PROG, NSREXECD_V1, 5000, &c,
			     NULL);
	if (rc)
		return rc;
	if (peer)
		snprintf(peer, len, "%s", nsr_rpc_peer(c));
	memset(&r, 0, sizeof(r));
	rc = nsr_rpc_call(c, 1, NSR_XDR(xdr_loc_key), &k,
			  NSR_XDR(xdr_loc_get_res), &r);
	if (rc == NSR_OK && r.port != 42)
		rc = NSR_ERR_PROTO;
	xdr_free(NSR_XDR(xdr_loc_get_res), (char *)&r);
	nsr_rpc_close(c);
	return rc;
}

/* sock_path - <g_root>/sockets/<port>. */
static void sock_path(int port, char *out, size_t len)
{
	assert_int_equal(nsr_rpc_local_path(g_root, port, out, len), NSR_OK);
}

/* raw_claim - as a client that ignores the rules: on the local socket
 * of port, call procedure 1 stating user; 0 answered, 1 denied, 2 any
 * other failure (run in a child: no assertions). */
static int raw_claim(int port, const char *user)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	loc_key k = {.prog = 1, .vers = 1};
	struct rpc_msg m, r;
	uint8_t buf[4096];
	uint32_t mark, len;
	size_t got;
	int fd, rc = 2;
	XDR x;

	if (nsr_rpc_local_path(g_root, port, a.sun_path, sizeof(a.sun_path)))
		return 2;
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
		return 2;
	test_call_msg(&m, 1);
	m.rm_call.cb_cred.oa_flavor = NSR_AUTH_USER;
	m.rm_call.cb_cred.oa_base = (caddr_t)(uintptr_t)user;
	m.rm_call.cb_cred.oa_length = (u_int)strlen(user);
	xdrmem_create(&x, (char *)buf + 4, sizeof(buf) - 4, XDR_ENCODE);
	if (!xdr_callmsg(&x, &m) || !xdr_loc_key(&x, &k))
		goto out;
	len = xdr_getpos(&x);
	xdr_destroy(&x);
	mark = htonl(0x80000000u | len);
	memcpy(buf, &mark, 4);
	if (write(fd, buf, 4 + len) != (ssize_t)(4 + len) ||
	    nsr_read_full(fd, buf, 4, &got) != NSR_OK || got != 4)
		goto out;
	memcpy(&mark, buf, 4);
	len = ntohl(mark) & 0x7fffffffu;
	if (len >= sizeof(buf) ||
	    nsr_read_full(fd, buf, len, &got) != NSR_OK || got != len)
		goto out;
	memset(&r, 0, sizeof(r));
	r.acpted_rply.ar_results.proc = NSR_XDR(xdr_void);
	xdrmem_create(&x, (char *)buf, len, XDR_DECODE);
	if (xdr_replymsg(&x, &r))
		rc = r.rm_reply.rp_stat == MSG_DENIED ? 1 : 0;
	xdr_destroy(&x);
out:
	close(fd);
	return rc;
}

/* A child that runs as nobody.  It is forked while this process has no
 * other thread (a child of a threaded process may find a lock held
 * forever, malloc's or ASan's, by a thread it does not have), and waits
 * on a pipe for the port before it acts. */
struct nobody {
	pid_t pid;
	int fd; /* the pipe's write end: the port goes there */
};

/* nobody_fork - c: a child as nobody that will do what, 0 ask through
 * the library (stating NSR_TEST_USER when test_user is set), 1 a raw
 * call on the local socket stating root; its exit status says how. */
static void nobody_fork(struct nobody *c, const struct passwd *pw, int what,
			const char *test_user)
{
	int p[2];

	assert_int_equal(pipe(p), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (c->pid == 0) {
		int port = 0;

		close(p[1]);
		if (read(p[0], &port, sizeof(port)) != (ssize_t)sizeof(port))
			_exit(8);
		if (test_user)
			setenv("NSR_TEST_USER", test_user, 1);
		else
			unsetenv("NSR_TEST_USER");
		if (setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0)
			_exit(9);
		_exit(what ? raw_claim(port, "root")
			   : ask("localhost", port, NULL, 0) == NSR_OK ? 0
								       : 1);
	}
	close(p[0]);
	c->fd = p[1];
}

/* nobody_run - let c go at port; its exit status. */
static int nobody_run(struct nobody *c, int port)
{
	int st;

	assert_int_equal(write(c->fd, &port, sizeof(port)),
			 (ssize_t)sizeof(port));
	close(c->fd);
	assert_int_equal(waitpid(c->pid, &st, 0), c->pid);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* test_other_uid - run first, before this process states a user: as
 * root, a process running as nobody is named nobody by the kernel on
 * the local socket; one that would state root is not sent there by the
 * library (it goes over TCP, where only the host key makes a statement
 * believed), and one that states root on the socket anyway is refused.
 * Skipped unless root. */
static void test_other_uid(void **state)
{
	struct passwd *pw = getpwnam("nobody");
	struct test_server s;
	struct nobody kid[3];

	NSR_UNUSED(state);
	if (geteuid() != 0 || !pw) {
		skip();
		return;
	}
	/* the children first, while there is no other thread */
	nobody_fork(&kid[0], pw, 0, NULL);
	nobody_fork(&kid[1], pw, 0, "root");
	nobody_fork(&kid[2], pw, 1, NULL);
	start(&s, 1);
	assert_int_equal(nobody_run(&kid[0], s.port), 0);
	assert_string_equal(seen_who, "nobody@localhost");
	assert_int_equal(seen_local, 1);

	assert_int_equal(nobody_run(&kid[1], s.port), 0);
	assert_int_equal(seen_local, 0); /* TCP (plain in this test) */

	seen_local = -1;
	assert_int_equal(nobody_run(&kid[2], s.port), 1);
	assert_int_equal(seen_local, -1); /* the handler never ran */
	test_server_stop(&s);
}

/* test_local_used - a client of this host uses the socket; with
 * NSR_LOCAL_SOCKETS=0 it uses TCP; a server without one, TCP. */
static void test_local_used(void **state)
{
	char peer[128];
	struct test_server s;

	NSR_UNUSED(state);
	start(&s, 1);
	assert_int_equal(ask("127.0.0.1", s.port, peer, sizeof(peer)), NSR_OK);
	assert_int_equal(seen_local, 1);
	assert_string_equal(seen_who, "tester@localhost");
	assert_non_null(strstr(peer, "(local socket)"));
	assert_int_equal(ask("localhost", s.port, NULL, 0), NSR_OK);
	assert_int_equal(seen_local, 1);

	setenv("NSR_LOCAL_SOCKETS", "0", 1);
	assert_int_equal(ask("127.0.0.1", s.port, peer, sizeof(peer)), NSR_OK);
	assert_int_equal(seen_local, 0);
	assert_null(strstr(peer, "local"));
	unsetenv("NSR_LOCAL_SOCKETS");
	test_server_stop(&s);

	start(&s, 0);
	assert_int_equal(ask("127.0.0.1", s.port, NULL, 0), NSR_OK);
	assert_int_equal(seen_local, 0);
	test_server_stop(&s);
}

/* test_unsafe_dir - a socket directory (or root) that others can write,
 * or a socket directory that is a link, is not trusted: the client goes
 * over TCP, and a server will not listen there; a root that is a link
 * is followed. */
static void test_unsafe_dir(void **state)
{
	char dir[128], link[128], away[160];
	struct nsr_buf why;
	struct test_server s;

	NSR_UNUSED(state);
	start(&s, 1);
	sock_path(0, dir, sizeof(dir));
	assert_int_equal(chmod(dir, 0777), 0);
	assert_int_equal(ask("127.0.0.1", s.port, NULL, 0), NSR_OK);
	assert_int_equal(seen_local, 0);
	assert_int_equal(chmod(dir, 0755), 0);
	assert_int_equal(chmod(g_root, 0770), 0);
	assert_int_equal(ask("127.0.0.1", s.port, NULL, 0), NSR_OK);
	assert_int_equal(seen_local, 0);
	assert_int_equal(chmod(g_root, 0700), 0);
	assert_int_equal(ask("127.0.0.1", s.port, NULL, 0), NSR_OK);
	assert_int_equal(seen_local, 1);

	/* A root reached through a link (/nsr to another disk) is
	 * followed; a socket directory that is a link is not. */
	snprintf(link, sizeof(link), "%s.link", g_root);
	assert_int_equal(symlink(g_root, link), 0);
	setenv("NSR_ROOT", link, 1);
	assert_int_equal(ask("127.0.0.1", s.port, NULL, 0), NSR_OK);
	assert_int_equal(seen_local, 1);
	setenv("NSR_ROOT", g_root, 1);
	unlink(link);
	snprintf(away, sizeof(away), "%s.away", dir);
	assert_int_equal(rename(dir, away), 0);
	assert_int_equal(symlink(away, dir), 0);
	assert_int_equal(ask("127.0.0.1", s.port, NULL, 0), NSR_OK);
	assert_int_equal(seen_local, 0);
	assert_int_equal(unlink(dir), 0);
	assert_int_equal(rename(away, dir), 0);

	assert_int_equal(chmod(dir, 0775), 0);
	nsr_buf_init(&why, 0);
	assert_int_equal(nsr_rpc_server_listen_local(s.srv, g_root, 1, &why),
			 NSR_ERR_PERM);
	assert_non_null(strstr(why.data, "chmod go-w"));
	nsr_buf_release(&why);
	assert_int_equal(chmod(dir, 0755), 0);
	test_server_stop(&s);
}

/* bind_stale - a socket file at path nobody listens on. */
static void bind_stale(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	unlink(path);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	close(fd);
}

/* test_stale_and_live - a dead socket sends the client to TCP and is
 * replaced by the next server; a live one is not taken over; a server
 * at stop leaves a socket that is no longer its own. */
static void test_stale_and_live(void **state)
{
	char path[128];
	struct nsr_buf why;
	struct nsr_rpc_server *other;
	struct test_server s;
	struct stat st;

	NSR_UNUSED(state);
	start(&s, 0);
	sock_path(s.port, path, sizeof(path));
	bind_stale(path);
	assert_int_equal(ask("127.0.0.1", s.port, NULL, 0), NSR_OK);
	assert_int_equal(seen_local, 0);
	test_server_stop(&s);
	unlink(path);

	start(&s, 2); /* over a stale one (asserted in start) */
	sock_path(s.port, path, sizeof(path));
	assert_int_equal(nsr_rpc_server_new(progs, 1, &other), NSR_OK);
	nsr_buf_init(&why, 0);
	assert_int_equal(nsr_rpc_server_listen_local(other, g_root, s.port,
						     &why),
			 NSR_ERR_EXISTS);
	nsr_buf_release(&why);
	nsr_rpc_server_free(other);
	assert_int_equal(ask("127.0.0.1", s.port, NULL, 0), NSR_OK);
	assert_int_equal(seen_local, 1);

	bind_stale(path); /* someone else's now */
	test_server_stop(&s);
	assert_int_equal(lstat(path, &st), 0);
	unlink(path);

	start(&s, 1);
	sock_path(s.port, path, sizeof(path));
	test_server_stop(&s);
	assert_int_equal(lstat(path, &st), -1);
}

/* age - set the time the socket at path was bound to secs ago. */
static void age(const char *path, int secs)
{
	struct timespec t[2];

	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= secs;
	t[1] = t[0];
	assert_int_equal(utimensat(AT_FDCWD, path, t, AT_SYMLINK_NOFOLLOW), 0);
}

/* test_sweep - nsr_rpc_local_sweep removes a socket nothing listens on
 * once it is old enough, never a live one nor another file; for one
 * port, that port's alone; without a directory to read, nothing. */
static void test_sweep(void **state)
{
	char live[128], dead[128], young[128], other[128], file[160];
	char longroot[200];
	struct test_server s;
	struct stat st;
	int fd;

	NSR_UNUSED(state);
	start(&s, 1);
	sock_path(s.port, live, sizeof(live));
	age(live, 60);
	sock_path(65001, dead, sizeof(dead));
	bind_stale(dead);
	age(dead, 60);
	sock_path(65002, young, sizeof(young));
	bind_stale(young);
	sock_path(65003, other, sizeof(other));
	bind_stale(other);
	snprintf(file, sizeof(file), "%s/sockets/65004", g_root);
	fd = open(file, O_WRONLY | O_CREAT, 0644); /* not a socket */
	assert_true(fd >= 0);
	close(fd);
	age(file, 60);

	assert_int_equal(nsr_rpc_local_sweep(g_root, 0, 10), 1);
	assert_int_equal(lstat(dead, &st), -1);
	assert_int_equal(lstat(live, &st), 0);
	assert_int_equal(lstat(young, &st), 0);
	assert_int_equal(lstat(file, &st), 0);
	/* one port: that one, however young */
	assert_int_equal(nsr_rpc_local_sweep(g_root, 65002, 0), 1);
	assert_int_equal(lstat(young, &st), -1);
	assert_int_equal(lstat(other, &st), 0);
	assert_int_equal(nsr_rpc_local_sweep(g_root, s.port, 0), 0);
	assert_int_equal(ask("127.0.0.1", s.port, NULL, 0), NSR_OK);
	assert_int_equal(seen_local, 1); /* still served there */
	test_server_stop(&s);
	unlink(other);
	unlink(file);
	/* a root without its sockets directory, or too long a root for a
	 * socket address: nothing removed, no error to the caller */
	snprintf(file, sizeof(file), "%s/no-such-root", g_root);
	assert_int_equal(nsr_rpc_local_sweep(file, 0, 0), 0);
	assert_int_equal(nsr_rpc_local_sweep(file, 65001, 0), 0);
	memset(longroot, 'r', sizeof(longroot) - 1);
	longroot[0] = '/';
	longroot[sizeof(longroot) - 1] = '\0';
	assert_int_equal(nsr_rpc_local_sweep(longroot, 0, 0), 0);
	assert_int_equal(nsr_rpc_local_sweep(longroot, 65001, 0), 0);
}

/* test_long_root - a root whose socket path would not fit a socket
 * address: the server says so and listens on TCP alone, a client of that
 * root goes over TCP. */
static void test_long_root(void **state)
{
	char root[200], path[256];
	struct nsr_buf why;
	struct test_server s;

	NSR_UNUSED(state);
	snprintf(root, sizeof(root), "%s/%0120d", g_root, 0);
	assert_int_equal(nsr_rpc_local_path(root, 1, path, sizeof(path)),
			 NSR_ERR_TOOBIG);
	start(&s, 0);
	nsr_buf_init(&why, 0);
	assert_int_equal(nsr_rpc_server_listen_local(s.srv, root, s.port,
						     &why),
			 NSR_ERR_TOOBIG);
	assert_non_null(strstr(why.data, "too long"));
	nsr_buf_release(&why);
	setenv("NSR_ROOT", root, 1);
	assert_int_equal(ask("127.0.0.1", s.port, NULL, 0), NSR_OK);
	assert_int_equal(seen_local, 0);
	setenv("NSR_ROOT", g_root, 1);
	test_server_stop(&s);
}

/* probe - send the RFC 9289 STARTTLS probe on a connected fd and read
 * the reply: 1 STARTTLS offered, 0 answered plain (asserted to be one
 * of them). */
static int probe(int fd)
{
	uint8_t call[NSR_TLS_CALL_MAX], reply[4 + NSR_TLS_REPLY_MAX];
	size_t n = nsr_tls_probe_call(5, NSREXECD_PROG, NSREXECD_V1, call);
	size_t got, need = 0;
	uint32_t mark;
	int rc;

	assert_int_equal(write(fd, call, n), (ssize_t)n);
	assert_int_equal(nsr_read_full(fd, reply, 4, &got), NSR_OK);
	memcpy(&mark, reply, 4);
	n = ntohl(mark) & 0x7fffffffu;
	assert_true(n <= NSR_TLS_REPLY_MAX);
	assert_int_equal(nsr_read_full(fd, reply + 4, n, &got), NSR_OK);
	rc = nsr_tls_probe_reply(reply, 4 + n, 5, &need);
	assert_true(rc == 0 || rc == 1);
	return rc;
}

/* test_certified_host - with TLS on (this root has a certificate): a
 * STARTTLS probe on the local socket is answered plain while TCP offers
 * STARTTLS, and a local caller's host is this host's certified name: at
 * once when this process made the certificate, and no longer about a
 * second after its files went away (tls.c invariant 4). */
static void test_certified_host(void **state)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct sockaddr_in in = {.sin_family = AF_INET};
	struct test_server s;
	struct nsr_buf err;
	char tls[128], away[160];
	int fd;

	NSR_UNUSED(state);
	unsetenv("NSR_TEST_NO_TLS");
	start(&s, 1);
	/* no certificate yet: the host as the caller named it */
	assert_int_equal(ask("127.0.0.1", s.port, NULL, 0), NSR_OK);
	assert_string_equal(seen_who, "tester@localhost");
	nsr_buf_init(&err, 0);
	assert_int_equal(nsr_tls_provision(g_root, "unit-host", &err), NSR_OK);
	nsr_buf_release(&err);

	sock_path(s.port, a.sun_path, sizeof(a.sun_path));
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(probe(fd), 0);
	close(fd);
	in.sin_port = htons((uint16_t)s.port);
	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&in, sizeof(in)), 0);
	assert_int_equal(probe(fd), 1);
	close(fd);

	assert_int_equal(ask("127.0.0.1", s.port, NULL, 0), NSR_OK);
	assert_int_equal(seen_local, 1);
	assert_string_equal(seen_who, "tester@unit-host");
	/* the certificate taken away behind the process's back */
	snprintf(tls, sizeof(tls), "%s/tls", g_root);
	snprintf(away, sizeof(away), "%s/tls.away", g_root);
	assert_int_equal(rename(tls, away), 0);
	usleep(1100 * 1000);
	assert_int_equal(ask("127.0.0.1", s.port, NULL, 0), NSR_OK);
	assert_int_equal(seen_local, 1);
	assert_string_equal(seen_who, "tester@localhost");
	test_server_stop(&s);
	setenv("NSR_TEST_NO_TLS", "1", 1);
	nsr_test_rmrf(away);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_other_uid),
		cmocka_unit_test(test_local_used),
		cmocka_unit_test(test_unsafe_dir),
		cmocka_unit_test(test_stale_and_live),
		cmocka_unit_test(test_sweep),
		cmocka_unit_test(test_long_root),
		cmocka_unit_test(test_certified_host),
	};
	int rc;

	snprintf(g_root, sizeof(g_root), "/tmp/nsr-local-XXXXXX");
	if (!mkdtemp(g_root))
		return 1;
	/* nobody must reach the socket through the root (invariant 1
	 * holds: only the owner may write it). */
	chmod(g_root, 0755);
	setenv("NSR_ROOT", g_root, 1);
	setenv("NSR_TEST_NO_TLS", "1", 1);
	setenv("NSR_TEST_USER", "tester", 1);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	nsr_test_rmrf(g_root);
	return rc;
}
