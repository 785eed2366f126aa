/*
 * test_rpc_bounds.c - the server transport's bounds over loopback: the
 * grace time closes a connection that never sends, the idle time closes
 * one between requests (and the client's next connection works), more
 * callers than worker threads all get answers on their own long-lived
 * connections, at the connection cap and at the per-address cap silent
 * connections make room for a working client, a peer that stops in the
 * middle of a request is dropped after the read timeout, and a call sent
 * just before a hang-up is still served.  Every bound is set through the
 * environment, as an administrator would, before the server is created.
 */
#include "nsr/compat.h"

#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/peer.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsrexecd.h"
#include "nsr/xmalloc.h"
#include "nsr_test.h"

static atomic_int in_handler, max_in_handler, answered, oneway_seen;

/* h_work - LOC_GETPORT: 100 ms of "work"; records the concurrency. */
static int h_work(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	loc_key *k = args;
	loc_get_res *r = res;
	int now = atomic_fetch_add(&in_handler, 1) + 1;
	int max = atomic_load(&max_in_handler);

	NSR_UNUSED(ctx);
	NSR_UNUSED(call);
	while (now > max &&
	       !atomic_compare_exchange_weak(&max_in_handler, &max, now))
		;
	poll(NULL, 0, 100);
	atomic_fetch_sub(&in_handler, 1);
	atomic_fetch_add(&answered, 1);
	r->st.msg = nsr_xstrdup("");
	r->port = (int)k->prog;
	return NSR_OK;
}

/* h_session - LOC_UNREGISTER: attach state to the connection. */
static int h_session(void *ctx, void *args, void *res,
		     struct nsr_rpc_call *call)
{
	nsr_void_res *r = res;

	NSR_UNUSED(ctx);
	NSR_UNUSED(args);
	if (!nsr_rpc_call_conn_data(call))
		nsr_rpc_call_set_conn_data(call, nsr_xstrdup("session"), free);
	r->st.msg = nsr_xstrdup("");
	return NSR_OK;
}

/* h_oneway - LOC_REGISTER as a one-way call: count. */
static int h_oneway(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	NSR_UNUSED(ctx);
	NSR_UNUSED(args);
	NSR_UNUSED(res);
	NSR_UNUSED(call);
	atomic_fetch_add(&oneway_seen, 1);
	return NSR_RPC_NOREPLY;
}

static const struct nsr_rpc_proc procs[] = {
	{LOC_GETPORT, "work", NSR_XDR(xdr_loc_key), sizeof(loc_key),
	 NSR_XDR(xdr_loc_get_res), sizeof(loc_get_res), h_work, 0},
	{LOC_REGISTER, "oneway", NSR_XDR(xdr_loc_reg_args),
	 sizeof(loc_reg_args), NSR_XDR(xdr_nsr_void_res), sizeof(nsr_void_res),
	 h_oneway, 0},
	{LOC_UNREGISTER, "session", NSR_XDR(xdr_loc_key), sizeof(loc_key),
	 NSR_XDR(xdr_nsr_void_res), sizeof(nsr_void_res), h_session, 0},
};

static const struct nsr_rpc_prog progs[] = {
	{NSREXECD_PROG, NSREXECD_V1, procs, NSR_ARRAY_SIZE(procs), NULL, NULL},
};

struct server {
	struct nsr_rpc_server *srv;
	pthread_t tid;
	int port;
	atomic_int stop;
};

/* accept_loop - the part of the daemon loop that accepts connections. */
static void *accept_loop(void *arg)
{
	struct server *s = arg;
	struct pollfd p = {.fd = nsr_rpc_server_listen_fd(s->srv, 0),
			   .events = POLLIN};

	while (!atomic_load(&s->stop))
		if (poll(&p, 1, 50) > 0)
			nsr_rpc_server_accept(s->srv, 0);
	return NULL;
}

/* server_start - a server with the bounds given as "NAME=value" pairs. */
static void server_start(struct server *s, const char *const *env)
{
	static const char *const names[] = {
		"NSR_RPC_MAX_CONNS", "NSR_RPC_MAX_THREADS", "NSR_RPC_GRACE_SEC",
		"NSR_RPC_IDLE_SEC", "NSR_RPC_READ_SEC", "NSR_RPC_MAX_PER_PEER"};

	for (size_t i = 0; i < NSR_ARRAY_SIZE(names); i++)
		unsetenv(names[i]);
	for (; *env; env++) {
		char *kv = nsr_xstrdup(*env), *eq = strchr(kv, '=');

		*eq = '\0';
		setenv(kv, eq + 1, 1);
		free(kv);
	}
	memset(s, 0, sizeof(*s));
	assert_int_equal(nsr_rpc_server_new(progs, 1, &s->srv), NSR_OK);
	assert_int_equal(nsr_rpc_server_listen(s->srv, "127.0.0.1", 0,
					       &s->port), NSR_OK);
	pthread_create(&s->tid, NULL, accept_loop, s);
}

/* server_stop - stop accepting, free the server. */
static void server_stop(struct server *s)
{
	atomic_store(&s->stop, 1);
	pthread_join(s->tid, NULL);
	nsr_rpc_server_free(s->srv);
}

/* raw_connect - a plain TCP connection that sends nothing. */
static int raw_connect(int port)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* closed_by_server - fd sees EOF (or a reset) within ms. */
static int closed_by_server(int fd, int ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	char c;

	if (poll(&p, 1, ms) != 1)
		return 0;
	return read(fd, &c, 1) <= 0;
}

/* work_call - one LOC_GETPORT call; NSR_OK and the echoed value. */
static int work_call(struct nsr_rpc_clnt *c, int v)
{
	loc_key k = {.prog = (uint32_t)v, .vers = 1};
	loc_get_res r;
	int rc;

	memset(&r, 0, sizeof(r));
	rc = nsr_rpc_call(c, LOC_GETPORT, NSR_XDR(xdr_loc_key), &k,
			  NSR_XDR(xdr_loc_get_res), &r);
	if (rc == NSR_OK && r.port != v)
		rc = NSR_ERR_PROTO;
	xdr_free(NSR_XDR(xdr_loc_get_res), &r);
	return rc;
}

/* connect_to - a client of the test server. */
static struct nsr_rpc_clnt *connect_to(int port)
{
	struct nsr_rpc_clnt *c = NULL;
	struct nsr_buf err;

	nsr_buf_init(&err, 0);
	assert_int_equal(nsr_rpc_connect("127.0.0.1", port, NSREXECD_PROG,
					 NSREXECD_V1, 2000, &c, &err), NSR_OK);
	nsr_buf_release(&err);
	return c;
}

static void test_grace_closes_silent(void **state)
{
	static const char *const env[] = {"NSR_RPC_GRACE_SEC=1", NULL};
	struct nsr_rpc_stats st;
	struct server s;
	struct nsr_rpc_clnt *c;
	int fd;

	NSR_UNUSED(state);
	server_start(&s, env);
	fd = raw_connect(s.port);
	c = connect_to(s.port);
	assert_int_equal(work_call(c, 1), NSR_OK);
	/* Closed after about a second, not at once, not never. */
	assert_false(closed_by_server(fd, 300));
	assert_true(closed_by_server(fd, 5000));
	close(fd);
	/* A connection that sent a request is not subject to the grace. */
	assert_int_equal(work_call(c, 2), NSR_OK);
	nsr_rpc_server_stats(s.srv, &st, 1);
	assert_int_equal(st.closed_silent, 1);
	assert_int_equal(st.closed_idle, 0);
	nsr_rpc_close(c);
	server_stop(&s);
}

static void test_idle_closes_and_client_reconnects(void **state)
{
	static const char *const env[] = {"NSR_RPC_IDLE_SEC=1", NULL};
	struct nsr_rpc_stats st;
	struct server s;
	struct nsr_rpc_clnt *c;
	int i;

	NSR_UNUSED(state);
	server_start(&s, env);
	c = connect_to(s.port);
	assert_int_equal(work_call(c, 1), NSR_OK);
	for (i = 0; i < 100; i++) {
		nsr_rpc_server_stats(s.srv, &st, 0);
		if (st.closed_idle == 1)
			break;
		poll(NULL, 0, 50);
	}
	assert_int_equal(st.closed_idle, 1);
	assert_int_equal(st.conns, 0);
	/* The old connection is gone; a new one serves the next call, as the
	 * clients in src/clnt do after a transport failure. */
	assert_int_not_equal(work_call(c, 2), NSR_OK);
	nsr_rpc_close(c);
	c = connect_to(s.port);
	assert_int_equal(work_call(c, 3), NSR_OK);
	nsr_rpc_close(c);
	server_stop(&s);
}

/* peer_call - work_call through a peer: a plain call (not flagged as
 * repeatable), so only the silent reconnect can save it. */
static int peer_call(struct nsr_peer *p, int v)
{
	loc_key k = {.prog = (uint32_t)v, .vers = 1};
	loc_get_res r;
	int rc;

	memset(&r, 0, sizeof(r));
	rc = nsr_peer_call(p, LOC_GETPORT, NSR_XDR(xdr_loc_key), &k,
			   NSR_XDR(xdr_loc_get_res), &r, 0);
	if (rc == NSR_OK && r.port != v)
		rc = NSR_ERR_PROTO;
	xdr_free(NSR_XDR(xdr_loc_get_res), &r);
	return rc;
}

/* test_peer_survives_idle_close - a long-lived peer whose connection the
 * server closed while idle sends its next call on a new connection,
 * without an error and without the call being repeated. */
static void test_peer_survives_idle_close(void **state)
{
	static const char *const env[] = {"NSR_RPC_IDLE_SEC=1", NULL};
	struct nsr_rpc_stats st;
	struct nsr_peer *p = NULL;
	struct server s;
	int i;

	NSR_UNUSED(state);
	server_start(&s, env);
	assert_int_equal(nsr_peer_new("127.0.0.1", s.port, NSREXECD_PROG,
				      NSREXECD_V1, &p), NSR_OK);
	assert_int_equal(peer_call(p, 1), NSR_OK);
	assert_int_equal(nsr_rpc_closed(nsr_peer_clnt(p)), 0);
	for (i = 0; i < 100; i++) {
		nsr_rpc_server_stats(s.srv, &st, 0);
		if (st.closed_idle == 1)
			break;
		poll(NULL, 0, 50);
	}
	assert_int_equal(st.closed_idle, 1);
	assert_int_equal(nsr_rpc_closed(nsr_peer_clnt(p)), 1);
	assert_int_equal(peer_call(p, 2), NSR_OK);
	assert_int_equal(nsr_rpc_closed(nsr_peer_clnt(p)), 0);
	nsr_peer_free(p);
	server_stop(&s);
}

#define CALLERS 8
#define CALLS 4

struct caller {
	int port, id, ok;
};

/* caller_main - CALLS calls on one connection of its own. */
static void *caller_main(void *arg)
{
	struct caller *cl = arg;
	struct nsr_rpc_clnt *c = NULL;
	struct nsr_buf err;

	nsr_buf_init(&err, 0);
	if (nsr_rpc_connect("127.0.0.1", cl->port, NSREXECD_PROG, NSREXECD_V1,
			    2000, &c, &err) == NSR_OK)
		for (int i = 0; i < CALLS; i++)
			if (work_call(c, cl->id * 100 + i) == NSR_OK)
				cl->ok++;
	nsr_rpc_close(c);
	nsr_buf_release(&err);
	return NULL;
}

static void test_more_callers_than_threads(void **state)
{
	static const char *const env[] = {"NSR_RPC_MAX_THREADS=2", NULL};
	struct caller cl[CALLERS];
	pthread_t tid[CALLERS];
	struct nsr_rpc_stats st;
	struct server s;

	NSR_UNUSED(state);
	atomic_store(&max_in_handler, 0);
	atomic_store(&answered, 0);
	server_start(&s, env);
	for (int i = 0; i < CALLERS; i++) {
		cl[i] = (struct caller){.port = s.port, .id = i + 1};
		pthread_create(&tid[i], NULL, caller_main, &cl[i]);
	}
	for (int i = 0; i < CALLERS; i++) {
		pthread_join(tid[i], NULL);
		assert_int_equal(cl[i].ok, CALLS);
	}
	/* Eight long-lived connections, two threads: every connection went
	 * back to the waiting room between its calls. */
	assert_int_equal(atomic_load(&answered), CALLERS * CALLS);
	assert_true(atomic_load(&max_in_handler) <= 2);
	nsr_rpc_server_stats(s.srv, &st, 1);
	assert_true(st.threads <= 2);
	assert_true(st.thread_waits > 0);
	server_stop(&s);
}

#define CAP 8

static void test_cap_evicts_silent(void **state)
{
	static const char *const env[] = {"NSR_RPC_MAX_CONNS=8", NULL};
	struct nsr_rpc_limits lim;
	struct nsr_rpc_stats st;
	struct server s;
	struct nsr_rpc_clnt *c;
	int fd[CAP], closed = 0;

	NSR_UNUSED(state);
	server_start(&s, env);
	nsr_rpc_server_limits(s.srv, &lim);
	assert_int_equal(lim.max_conns, CAP);
	for (int i = 0; i < CAP; i++)
		fd[i] = raw_connect(s.port);
	/* The table is full of silent connections: a working client still
	 * gets in, in place of the oldest of them. */
	c = connect_to(s.port);
	assert_int_equal(work_call(c, 7), NSR_OK);
	assert_true(closed_by_server(fd[0], 2000));
	for (int i = 1; i < CAP; i++)
		closed += closed_by_server(fd[i], 0);
	assert_int_equal(closed, 0);
	nsr_rpc_server_stats(s.srv, &st, 1);
	assert_int_equal(st.evicted, 1);
	assert_int_equal(st.refused, 0);
	assert_int_equal(st.conns, CAP);
	for (int i = 0; i < CAP; i++)
		close(fd[i]);
	nsr_rpc_close(c);
	server_stop(&s);
}

/* session_call - LOC_UNREGISTER: the connection becomes a session. */
static int session_call(struct nsr_rpc_clnt *c)
{
	loc_key k = {.prog = 1, .vers = 1};
	nsr_void_res r;
	int rc;

	memset(&r, 0, sizeof(r));
	rc = nsr_rpc_call(c, LOC_UNREGISTER, NSR_XDR(xdr_loc_key), &k,
			  NSR_XDR(xdr_nsr_void_res), &r);
	xdr_free(NSR_XDR(xdr_nsr_void_res), &r);
	return rc;
}

static void test_cap_spares_sessions(void **state)
{
	static const char *const env[] = {"NSR_RPC_MAX_CONNS=3", NULL};
	struct nsr_rpc_clnt *sess, *plain1, *plain2, *c;
	struct nsr_rpc_stats st;
	struct server s;

	NSR_UNUSED(state);
	server_start(&s, env);
	/* Idle longest: a session; then two plain connections. */
	sess = connect_to(s.port);
	assert_int_equal(session_call(sess), NSR_OK);
	plain1 = connect_to(s.port);
	assert_int_equal(work_call(plain1, 1), NSR_OK);
	plain2 = connect_to(s.port);
	assert_int_equal(work_call(plain2, 2), NSR_OK);
	poll(NULL, 0, 50); /* past the workers' linger: all idle */
	/* Full and nothing silent: the plain connection idle longest makes
	 * room, not the session. */
	c = connect_to(s.port);
	assert_int_equal(work_call(c, 3), NSR_OK);
	assert_int_equal(session_call(sess), NSR_OK);
	assert_int_not_equal(work_call(plain1, 4), NSR_OK);
	nsr_rpc_server_stats(s.srv, &st, 1);
	assert_int_equal(st.evicted, 1);
	nsr_rpc_close(sess);
	nsr_rpc_close(plain1);
	nsr_rpc_close(plain2);
	nsr_rpc_close(c);
	server_stop(&s);
}

static void test_stalled_request_dropped(void **state)
{
	static const char *const env[] = {"NSR_RPC_READ_SEC=1", NULL};
	/* A record mark announcing 100 bytes, then 4 of them. */
	static const unsigned char half[] = {0x80, 0, 0, 100, 0, 0, 0, 1};
	struct nsr_rpc_stats st;
	struct server s;
	struct nsr_rpc_clnt *c;
	int fd;

	NSR_UNUSED(state);
	server_start(&s, env);
	fd = raw_connect(s.port);
	assert_int_equal(write(fd, half, sizeof(half)), (ssize_t)sizeof(half));
	/* The worker waits for the rest about a second, not for ever, and
	 * others are served meanwhile. */
	c = connect_to(s.port);
	assert_int_equal(work_call(c, 5), NSR_OK);
	assert_false(closed_by_server(fd, 300));
	assert_true(closed_by_server(fd, 5000));
	nsr_rpc_server_stats(s.srv, &st, 1);
	assert_int_equal(st.closed_stalled, 1);
	close(fd);
	nsr_rpc_close(c);
	server_stop(&s);
}

static void test_per_peer_cap(void **state)
{
	static const char *const env[] = {"NSR_RPC_MAX_PER_PEER=3",
					  "NSR_TEST_RPC_PEER_LOOPBACK=1", NULL};
	struct nsr_rpc_stats st;
	struct server s;
	struct nsr_rpc_clnt *c;
	int fd[3];

	NSR_UNUSED(state);
	server_start(&s, env);
	for (int i = 0; i < 3; i++)
		fd[i] = raw_connect(s.port);
	/* The address is at its cap with silent connections: its own oldest
	 * one makes room for the working client. */
	c = connect_to(s.port);
	assert_int_equal(work_call(c, 9), NSR_OK);
	assert_true(closed_by_server(fd[0], 2000));
	assert_false(closed_by_server(fd[1], 0));
	nsr_rpc_server_stats(s.srv, &st, 1);
	assert_int_equal(st.peer_evicted, 1);
	assert_string_equal(st.peer_last, "127.0.0.1");
	assert_int_equal(st.conns, 3);
	for (int i = 0; i < 3; i++)
		close(fd[i]);
	nsr_rpc_close(c);
	server_stop(&s);
}

/* oneway_record - one complete LOC_REGISTER call record into buf. */
static size_t oneway_record(unsigned char *buf, size_t len)
{
	char name[] = "n";
	loc_reg_args a = {.prog = 1, .vers = 1, .port = 1, .name = name};
	struct rpc_msg m;
	XDR x;
	uint32_t mark;

	memset(&m, 0, sizeof(m));
	m.rm_xid = 1;
	m.rm_direction = CALL;
	m.rm_call.cb_rpcvers = 2;
	m.rm_call.cb_prog = NSREXECD_PROG;
	m.rm_call.cb_vers = NSREXECD_V1;
	m.rm_call.cb_proc = LOC_REGISTER;
	m.rm_call.cb_cred = _null_auth;
	m.rm_call.cb_verf = _null_auth;
	xdrmem_create(&x, (char *)buf + 4, (u_int)(len - 4), XDR_ENCODE);
	assert_true(xdr_callmsg(&x, &m) && xdr_loc_reg_args(&x, &a));
	mark = htonl(0x80000000u | xdr_getpos(&x));
	memcpy(buf, &mark, 4);
	len = 4 + xdr_getpos(&x);
	xdr_destroy(&x);
	return len;
}

static void test_call_then_hangup_served(void **state)
{
	static const char *const env[] = {NULL};
	unsigned char rec[256];
	size_t n = oneway_record(rec, sizeof(rec));
	struct server s;
	int fd, i;

	NSR_UNUSED(state);
	atomic_store(&oneway_seen, 0);
	server_start(&s, env);
	/* A one-way call and an immediate close: the call arrives with the
	 * hang-up and must still be served, as a thread per connection did. */
	fd = raw_connect(s.port);
	assert_int_equal(write(fd, rec, n), (ssize_t)n);
	close(fd);
	for (i = 0; i < 100 && atomic_load(&oneway_seen) < 1; i++)
		poll(NULL, 0, 20);
	assert_int_equal(atomic_load(&oneway_seen), 1);
	server_stop(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grace_closes_silent),
		cmocka_unit_test(test_idle_closes_and_client_reconnects),
		cmocka_unit_test(test_peer_survives_idle_close),
		cmocka_unit_test(test_more_callers_than_threads),
		cmocka_unit_test(test_cap_evicts_silent),
		cmocka_unit_test(test_cap_spares_sessions),
		cmocka_unit_test(test_stalled_request_dropped),
		cmocka_unit_test(test_per_peer_cap),
		cmocka_unit_test(test_call_then_hangup_served),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
