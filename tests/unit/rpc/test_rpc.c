/*
 * test_rpc.c - the RPC transport over loopback: calls and replies,
 * pipelined one-way calls arriving in order before the next call, calls
 * whose replies are read later (a window of outstanding calls while
 * one-way calls flow), the
 * standard RPC errors (unknown program, version, procedure, undecodable
 * arguments), reply timeouts, a worker's XDR stream kept across
 * connections closed between records, a refused connection naming host
 * and port, per-connection data freed at close, and an orderly server
 * shutdown.
 *
 * The server uses the locator program's types (loc_key, loc_reg_args,
 * loc_get_res) with test handlers.
 */
#include "nsr/compat.h"

#include <pthread.h>
#include <poll.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsrexecd.h"
#include "nsr/xmalloc.h"
#include "nsr_test.h"
#include "rpc_testsrv.h"

struct srv_state {
	int oneway_seen;	/* one-way calls received */
	int last_port;		/* port field of the last one-way call */
	int in_order;		/* every one-way call came in sequence */
	int conn_data_freed;
};

static struct srv_state g;

static void free_conn_data(void *p)
{
	free(p);
	g.conn_data_freed++;
}

/* h_oneway - LOC_REGISTER as a one-way call: count and check order. */
static int h_oneway(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	loc_reg_args *a = args;

	NSR_UNUSED(ctx);
	NSR_UNUSED(res);
	if (!nsr_rpc_call_conn_data(call))
		nsr_rpc_call_set_conn_data(call, nsr_xstrdup("x"),
					   free_conn_data);
	if (a->port != g.last_port + 1)
		g.in_order = 0;
	g.last_port = a->port;
	g.oneway_seen++;
	return NSR_RPC_NOREPLY;
}

/* h_count - LOC_GETPORT: reply with how many one-way calls came so far. */
static int h_count(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	loc_key *k = args;
	loc_get_res *r = res;

	NSR_UNUSED(ctx);
	NSR_UNUSED(call);
	r->st.code = 0;
	r->st.msg = nsr_xstrdup(k->prog == 7 ? "seven" : "");
	r->port = g.oneway_seen;
	return NSR_OK;
}

/* h_slow - LOC_UNREGISTER: answers after 1.5 s (for the timeout test). */
static int h_slow(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	nsr_void_res *r = res;

	NSR_UNUSED(ctx);
	NSR_UNUSED(args);
	NSR_UNUSED(call);
	poll(NULL, 0, 1500);
	r->st.msg = nsr_xstrdup("");
	return NSR_OK;
}

/* h_fail - LOC_DUMP: a handler error becomes SYSTEM_ERR. */
static int h_fail(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	NSR_UNUSED(ctx);
	NSR_UNUSED(args);
	NSR_UNUSED(res);
	NSR_UNUSED(call);
	return NSR_ERR_IO;
}

static const struct nsr_rpc_proc procs[] = {
	{LOC_GETPORT, "count", NSR_XDR(xdr_loc_key), sizeof(loc_key),
	 NSR_XDR(xdr_loc_get_res), sizeof(loc_get_res), h_count,
	 NSR_RPC_SERIAL},
	{LOC_REGISTER, "oneway", NSR_XDR(xdr_loc_reg_args),
	 sizeof(loc_reg_args), NSR_XDR(xdr_nsr_void_res), sizeof(nsr_void_res),
	 h_oneway, 0},
	{LOC_UNREGISTER, "slow", NSR_XDR(xdr_loc_key), sizeof(loc_key),
	 NSR_XDR(xdr_nsr_void_res), sizeof(nsr_void_res), h_slow, 0},
	{LOC_DUMP, "fail", NSR_XDR(xdr_void), 0, NSR_XDR(xdr_loc_dump_res),
	 sizeof(loc_dump_res), h_fail, 0},
};

static const struct nsr_rpc_prog progs[] = {
	{NSREXECD_PROG, NSREXECD_V1, procs, NSR_ARRAY_SIZE(procs), NULL, NULL},
};

/* send_oneways - n one-way calls (ports 1 .. n) on c, buffered; with
 * flush the last one is written out at once. */
static void send_oneways(struct nsr_rpc_clnt *c, int n, int flush)
{
	char name[] = "n";

	for (int i = 1; i <= n; i++) {
		loc_reg_args a = {.prog = 1, .vers = 1, .port = i,
				  .name = name};

		assert_int_equal((i == n && flush ? nsr_rpc_send_now
						  : nsr_rpc_send)(
					 c, LOC_REGISTER,
					 NSR_XDR(xdr_loc_reg_args), &a),
				 NSR_OK);
	}
}

static void test_pipelined_oneway_then_call(void **state)
{
	struct test_server s;
	struct nsr_rpc_clnt *c;
	loc_get_res r;
	loc_key k = {.prog = 7, .vers = 1};

	NSR_UNUSED(state);
	memset(&g, 0, sizeof(g));
	g.in_order = 1;
	test_server_start(&s, progs, NSR_ARRAY_SIZE(progs));
	c = test_connect(s.port, NSREXECD_PROG, NSREXECD_V1);
	send_oneways(c, 5000, 0);
	memset(&r, 0, sizeof(r));
	assert_int_equal(nsr_rpc_call(c, LOC_GETPORT, NSR_XDR(xdr_loc_key), &k,
				      NSR_XDR(xdr_loc_get_res), &r), NSR_OK);
	/* The call is answered after every one-way call before it. */
	assert_int_equal(r.port, 5000);
	assert_string_equal(r.st.msg, "seven");
	assert_true(g.in_order);
	xdr_free(NSR_XDR(xdr_loc_get_res), &r);
	nsr_rpc_close(c);
	test_server_stop(&s);
	assert_int_equal(g.conn_data_freed, 1);
}

/* test_call_window - calls sent with nsr_rpc_call_send between one-way
 * calls; each reply, read oldest first, counts the one-way calls before
 * its call; reading out of turn and a plain call meanwhile are refused. */
/* wait_for - poll up to 5 s until *v reaches want; its last value. */
static int wait_for(volatile int *v, int want)
{
	for (int i = 0; i < 500 && *v < want; i++)
		poll(NULL, 0, 10);
	return *v;
}

/* test_stream_kept - a connection closed between records leaves the
 * worker's XDR stream for the next one (no new buffers per session),
 * and a close right after pipelined one-way calls still has every one
 * of them handled, in order. */
static void test_stream_kept(void **state)
{
	struct test_server s;
	struct nsr_rpc_stats st;
	loc_key k = {.prog = 7, .vers = 1};

	NSR_UNUSED(state);
	memset(&g, 0, sizeof(g));
	g.in_order = 1;
	test_server_start(&s, progs, NSR_ARRAY_SIZE(progs));
	nsr_rpc_server_stats(s.srv, &st, 1);
	for (int i = 0; i < 20; i++) {
		struct nsr_rpc_clnt *c = test_connect(s.port, NSREXECD_PROG,
						      NSREXECD_V1);
		loc_get_res r;

		memset(&r, 0, sizeof(r));
		assert_int_equal(nsr_rpc_call(c, LOC_GETPORT,
					      NSR_XDR(xdr_loc_key), &k,
					      NSR_XDR(xdr_loc_get_res), &r),
				 NSR_OK);
		xdr_free(NSR_XDR(xdr_loc_get_res), (char *)&r);
		nsr_rpc_close(c);
		/* the server has seen the close: the next one is new */
		for (int j = 0; j < 500; j++) {
			nsr_rpc_server_stats(s.srv, &st, 0);
			if (st.conns == 0)
				break;
			poll(NULL, 0, 10);
		}
		assert_int_equal(st.conns, 0);
	}
	nsr_rpc_server_stats(s.srv, &st, 0);
	/* One stream per worker at most, not one per connection. */
	assert_true(st.threads < 20);
	assert_true(st.streams_made >= 1);
	assert_true(st.streams_made <= st.threads);
	/* Pipelined one-way calls, then close: all of them are handled. */
	{
		struct nsr_rpc_clnt *c = test_connect(s.port, NSREXECD_PROG,
						      NSREXECD_V1);

		send_oneways(c, 300, 1);
		nsr_rpc_close(c);
	}
	assert_int_equal(wait_for(&g.oneway_seen, 300), 300);
	assert_int_equal(g.in_order, 1);
	test_server_stop(&s);
}

static void test_call_window(void **state)
{
	struct test_server s;
	struct nsr_rpc_clnt *c;
	loc_get_res r;
	loc_key k = {.prog = 7, .vers = 1};
	char name[] = "n";
	uint32_t xid[40];
	unsigned n = 0, next = 0;

	NSR_UNUSED(state);
	memset(&g, 0, sizeof(g));
	g.in_order = 1;
	test_server_start(&s, progs, NSR_ARRAY_SIZE(progs));
	c = test_connect(s.port, NSREXECD_PROG, NSREXECD_V1);
	for (int i = 1; i <= 400; i++) {
		loc_reg_args a = {.prog = 1,
				  .vers = 1,
				  .port = i,
				  .pid = 0,
				  .name = name};

		assert_int_equal(nsr_rpc_send(c, LOC_REGISTER,
					      NSR_XDR(xdr_loc_reg_args), &a),
				 NSR_OK);
		if (i % 10 != 0)
			continue;
		if (nsr_rpc_pending(c) == 4) {
			/* Window of 4: the oldest reply before one
			 * more call. */
			memset(&r, 0, sizeof(r));
			assert_int_equal(
				nsr_rpc_call_recv(c, xid[next],
						  NSR_XDR(xdr_loc_get_res), &r),
				NSR_OK);
			assert_int_equal(r.port, (int)(next + 1) * 10);
			xdr_free(NSR_XDR(xdr_loc_get_res), &r);
			next++;
		}
		assert_int_equal(nsr_rpc_call_send(c, LOC_GETPORT,
						   NSR_XDR(xdr_loc_key), &k,
						   &xid[n]),
				 NSR_OK);
		n++;
	}
	assert_int_equal(nsr_rpc_pending(c), 4);
	/* Out of turn, and a blocking call while replies are unread. */
	assert_int_equal(nsr_rpc_call_recv(c, xid[next + 1],
					   NSR_XDR(xdr_loc_get_res), &r),
			 NSR_ERR_STATE);
	assert_int_equal(nsr_rpc_call(c, LOC_GETPORT, NSR_XDR(xdr_loc_key), &k,
				      NSR_XDR(xdr_loc_get_res), &r),
			 NSR_ERR_STATE);
	while (next < n) {
		memset(&r, 0, sizeof(r));
		assert_int_equal(nsr_rpc_call_recv(c, xid[next],
						   NSR_XDR(xdr_loc_get_res),
						   &r),
				 NSR_OK);
		assert_int_equal(r.port, (int)(next + 1) * 10);
		xdr_free(NSR_XDR(xdr_loc_get_res), &r);
		next++;
	}
	assert_int_equal(nsr_rpc_pending(c), 0);
	memset(&r, 0, sizeof(r));
	assert_int_equal(nsr_rpc_call(c, LOC_GETPORT, NSR_XDR(xdr_loc_key), &k,
				      NSR_XDR(xdr_loc_get_res), &r), NSR_OK);
	assert_int_equal(r.port, 400);
	assert_true(g.in_order);
	xdr_free(NSR_XDR(xdr_loc_get_res), &r);
	nsr_rpc_close(c);
	test_server_stop(&s);
}

static void test_rpc_errors(void **state)
{
	struct test_server s;
	struct nsr_rpc_clnt *c;
	loc_get_res r;
	loc_dump_res d;
	loc_key k = {.prog = 1, .vers = 1};

	NSR_UNUSED(state);
	test_server_start(&s, progs, NSR_ARRAY_SIZE(progs));

	/* Unknown procedure (PROC_UNAVAIL: an older server). */
	c = test_connect(s.port, NSREXECD_PROG, NSREXECD_V1);
	memset(&r, 0, sizeof(r));
	assert_int_equal(nsr_rpc_call(c, 99, NSR_XDR(xdr_loc_key), &k,
				      NSR_XDR(xdr_loc_get_res), &r),
			 NSR_ERR_UNSUPPORTED);
	assert_non_null(strstr(nsr_rpc_last_error(c), "procedure 99"));
	/* The connection is still usable after an RPC-level error. */
	memset(&r, 0, sizeof(r));
	assert_int_equal(nsr_rpc_call(c, LOC_GETPORT, NSR_XDR(xdr_loc_key), &k,
				      NSR_XDR(xdr_loc_get_res), &r), NSR_OK);
	xdr_free(NSR_XDR(xdr_loc_get_res), &r);
	/* Undecodable arguments: a loc_key where loc_reg_args is expected. */
	memset(&r, 0, sizeof(r));
	assert_int_equal(nsr_rpc_call(c, LOC_REGISTER, NSR_XDR(xdr_loc_key), &k,
				      NSR_XDR(xdr_nsr_void_res), &r),
			 NSR_ERR_RPC);
	assert_non_null(strstr(nsr_rpc_last_error(c), "decode"));
	/* A failing handler. */
	memset(&d, 0, sizeof(d));
	assert_int_equal(nsr_rpc_call(c, LOC_DUMP, NSR_XDR(xdr_void), NULL,
				      NSR_XDR(xdr_loc_dump_res), &d),
			 NSR_ERR_RPC);
	nsr_rpc_close(c);

	/* Wrong version, wrong program. */
	c = test_connect(s.port, NSREXECD_PROG, 9);
	assert_int_equal(nsr_rpc_call(c, LOC_GETPORT, NSR_XDR(xdr_loc_key), &k,
				      NSR_XDR(xdr_loc_get_res), &r),
			 NSR_ERR_RPC);
	assert_non_null(strstr(nsr_rpc_last_error(c), "versions 1-1"));
	nsr_rpc_close(c);
	c = test_connect(s.port, 0x20390999, 1);
	assert_int_equal(nsr_rpc_call(c, LOC_GETPORT, NSR_XDR(xdr_loc_key), &k,
				      NSR_XDR(xdr_loc_get_res), &r),
			 NSR_ERR_RPC);
	assert_non_null(strstr(nsr_rpc_last_error(c), "does not serve"));
	nsr_rpc_close(c);

	/* A reply that does not come in time. */
	c = test_connect(s.port, NSREXECD_PROG, NSREXECD_V1);
	nsr_rpc_set_timeout(c, 200);
	{
		nsr_void_res v;

		memset(&v, 0, sizeof(v));
		assert_int_equal(nsr_rpc_call(c, LOC_UNREGISTER,
					      NSR_XDR(xdr_loc_key), &k,
					      NSR_XDR(xdr_nsr_void_res), &v),
				 NSR_ERR_TIMEOUT);
		assert_non_null(strstr(nsr_rpc_last_error(c), "timed out"));
		/* A timed-out client is broken: later calls fail at once. */
		assert_int_equal(nsr_rpc_call(c, LOC_GETPORT,
					      NSR_XDR(xdr_loc_key), &k,
					      NSR_XDR(xdr_loc_get_res), &r),
				 NSR_ERR_RPC);
	}
	nsr_rpc_close(c);
	test_server_stop(&s);
}

static void test_connect_refused(void **state)
{
	struct nsr_rpc_server *srv;
	struct nsr_rpc_clnt *c = NULL;
	struct nsr_buf err;
	char want[64];
	int port;

	NSR_UNUSED(state);
	/* A port that was just free: bind, learn it, close. */
	assert_int_equal(nsr_rpc_server_new(progs, 1, &srv), NSR_OK);
	assert_int_equal(nsr_rpc_server_listen(srv, "127.0.0.1", 0, &port),
			 NSR_OK);
	nsr_rpc_server_free(srv);
	nsr_buf_init(&err, 0);
	assert_int_equal(nsr_rpc_connect("127.0.0.1", port, NSREXECD_PROG, 1,
					 2000, &c, &err),
			 NSR_ERR_CONNECT);
	assert_null(c);
	snprintf(want, sizeof(want), "127.0.0.1:%d", port);
	assert_non_null(strstr(err.data, want));
	nsr_buf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pipelined_oneway_then_call),
		cmocka_unit_test(test_stream_kept),
		cmocka_unit_test(test_call_window),
		cmocka_unit_test(test_rpc_errors),
		cmocka_unit_test(test_connect_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
