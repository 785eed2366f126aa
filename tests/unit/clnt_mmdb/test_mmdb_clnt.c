/*
 * test_mmdb_clnt.c - the nsrmmdbd client library against a scripted
 * in-process server (the real transport, canned answers): status codes
 * and messages reach the caller, replies that break the protocol are
 * refused, batches and the query state behave, over-long arguments are
 * refused before they could cost the connection, and a connection lost
 * mid-call is replaced by the next call.  Deleting many save sets:
 * MM_SS_DELETE_MANY in bounded batches, and one MM_SS_DELETE each from
 * an older nsrmmdbd (a second fake, without MM_SS_DELETE_MANY, that
 * answers it PROC_UNAVAIL), its open query left as it was.
 */
#include "nsr/compat.h"

#include <poll.h>
#include <pthread.h>
#include <string.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/mmdb.h"
#include "nsr/mmdb_clnt.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsrmmdb.h"
#include "nsr_test.h"

static struct nsr_rpc_server *g_srv;
static pthread_t g_thread;
static volatile int g_stop;
static int g_port;
static int g_rows_total;	/* rows the fake query yields */
static int g_rows_sent;
static int g_overfill;		/* send more rows than asked for */
static int g_drop_next;		/* close the connection on the next N SS_GETs */
static struct nsr_rpc_server *g_old; /* an nsrmmdbd without DELETE_MANY */
static int g_old_port;
static unsigned g_singles; /* MM_SS_DELETE calls */
static unsigned g_manys;   /* MM_SS_DELETE_MANY calls */
static unsigned g_most;	   /* the most ssids in one of them */

/* status - fill st. */
static void status(nsr_status *st, int code, const char *msg)
{
	st->code = code;
	st->msg = strdup(msg);
}

/* vol_get - NOTFOUND for "nosuch", else a volume named as asked. */
static int vol_get(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	mm_name_args *a = args;
	mm_vol_res *r = res;
	struct mmdb_volume v;

	NSR_UNUSED(ctx);
	NSR_UNUSED(call);
	memset(&v, 0, sizeof(v));
	if (!strcmp(a->name, "nosuch")) {
		status(&r->st, NSR_ERR_NOTFOUND, "volume nosuch is not in the "
		       "media database");
	} else {
		snprintf(v.name, sizeof(v.name), "%s", a->name);
		v.written = 42;
		status(&r->st, NSR_OK, "");
	}
	mmdb_clnt_vol_to_wire(&v, &r->vol);
	return NSR_OK;
}

/* ss_get - a bad level for ssid 7, a dropped connection on request. */
static int ss_get(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	u_int ssid = *(u_int *)args;
	mm_ss_res *r = res;
	struct mmdb_saveset ss;

	NSR_UNUSED(ctx);
	NSR_UNUSED(call);
	if (g_drop_next > 0) {
		g_drop_next--;
		return NSR_RPC_CLOSE;
	}
	memset(&ss, 0, sizeof(ss));
	ss.ssid = ssid;
	snprintf(ss.name, sizeof(ss.name), "/var");
	mmdb_clnt_ss_to_wire(&ss, &r->ss);
	if (ssid == 7)
		r->ss.level = 99;	/* not a level: a broken server */
	status(&r->st, ssid == 5 ? 3 : NSR_OK, "");	/* 3: not our code */
	return NSR_OK;
}

/* query_open - "bad" is a syntax error, anything else g_rows_total rows. */
static int query_open(void *ctx, void *args, void *res,
		      struct nsr_rpc_call *call)
{
	mm_query_args *a = args;
	nsr_void_res *r = res;

	NSR_UNUSED(ctx);
	NSR_UNUSED(call);
	g_rows_sent = 0;
	if (!strcmp(a->query, "bad"))
		status(&r->st, NSR_ERR_SYNTAX, "query \"bad\": column 1: "
		       "unknown attribute 'bad'");
	else
		status(&r->st, NSR_OK, "");
	return NSR_OK;
}

/* query_next - up to max rows (or one more with g_overfill). */
static int query_next(void *ctx, void *args, void *res,
		      struct nsr_rpc_call *call)
{
	mm_next_args *a = args;
	mm_next_res *r = res;
	u_int n = 0, want = a->max + (g_overfill ? 1 : 0);
	struct mmdb_ss_row row;

	NSR_UNUSED(ctx);
	NSR_UNUSED(call);
	r->rows.rows_val = calloc(want + 1, sizeof(mm_row));
	while (n < want && g_rows_sent < g_rows_total) {
		memset(&row, 0, sizeof(row));
		row.ss.ssid = (uint32_t)++g_rows_sent;
		mmdb_clnt_row_to_wire(&row, &r->rows.rows_val[n++]);
	}
	r->rows.rows_len = n;
	r->done = g_rows_sent >= g_rows_total;
	status(&r->st, NSR_OK, "");
	return NSR_OK;
}

/* ss_create_many - ssid 100 + i for the i-th; a save set named
 * "short" gets one answer fewer than asked (a broken server), one
 * named "full" a refusal. */
static int ss_create_many(void *ctx, void *args, void *res,
			  struct nsr_rpc_call *call)
{
	mm_ss_create_many_args *a = args;
	mm_ss_create_many_res *r = res;
	u_int n = a->sets.sets_len;

	NSR_UNUSED(ctx);
	NSR_UNUSED(call);
	r->made.made_val = calloc(n + 1, sizeof(mm_ss_create_res));
	if (n && !strcmp(a->sets.sets_val[0].name, "full")) {
		status(&r->st, NSR_ERR_NOSPACE, "cannot create 1 save sets: "
		       "no space left");
		return NSR_OK;
	}
	if (n && !strcmp(a->sets.sets_val[0].name, "short"))
		n--;
	for (u_int i = 0; i < n; i++) {
		status(&r->made.made_val[i].st, NSR_OK, "");
		r->made.made_val[i].ssid = 100 + i;
		r->made.made_val[i].cloneid = 200 + i;
		r->made.made_val[i].longid[0] = (char)i;
	}
	r->made.made_len = n;
	status(&r->st, NSR_OK, "");
	return NSR_OK;
}

/* gone - the fake's verdict on deleting ssid: odd ones are in the
 * database, even ones not, 999 fails. */
static int gone(uint32_t ssid)
{
	if (ssid == 999)
		return NSR_ERR_IO;
	return ssid % 2 ? NSR_OK : NSR_ERR_NOTFOUND;
}

/* ss_delete - MM_SS_DELETE of one save set. */
static int ss_delete(void *ctx, void *args, void *res,
		     struct nsr_rpc_call *call)
{
	nsr_void_res *r = res;
	int rc = gone(*(u_int *)args);

	NSR_UNUSED(ctx);
	NSR_UNUSED(call);
	g_singles++;
	status(&r->st, rc, rc ? "fake media database: no" : "");
	return NSR_OK;
}

/* ss_delete_many - MM_SS_DELETE_MANY: count the calls and the largest. */
static int ss_delete_many(void *ctx, void *args, void *res,
			  struct nsr_rpc_call *call)
{
	mm_ss_delete_many_args *a = args;
	mm_ss_delete_many_res *r = res;

	NSR_UNUSED(ctx);
	NSR_UNUSED(call);
	g_manys++;
	g_most = NSR_MAX(g_most, a->ssids.ssids_len);
	for (u_int i = 0; i < a->ssids.ssids_len; i++)
		r->deleted += gone(a->ssids.ssids_val[i]) == NSR_OK;
	r->missing = a->ssids.ssids_len - r->deleted;
	status(&r->st, NSR_OK, "");
	return NSR_OK;
}

/* The entries both fakes have. */
#define QUERY_PROCS                                                          \
	{MM_QUERY_OPEN, "query_open", NSR_XDR(xdr_mm_query_args),            \
	 sizeof(mm_query_args), NSR_XDR(xdr_nsr_void_res),                   \
	 sizeof(nsr_void_res), query_open, NSR_RPC_SERIAL},                  \
	{MM_QUERY_NEXT, "query_next", NSR_XDR(xdr_mm_next_args),             \
	 sizeof(mm_next_args), NSR_XDR(xdr_mm_next_res), sizeof(mm_next_res), \
	 query_next, NSR_RPC_SERIAL}
#define SS_DELETE_PROC                                                       \
	{MM_SS_DELETE, "ss_delete", NSR_XDR(xdr_u_int), sizeof(u_int),       \
	 NSR_XDR(xdr_nsr_void_res), sizeof(nsr_void_res), ss_delete,         \
	 NSR_RPC_SERIAL}

static const struct nsr_rpc_proc procs[] = {
	{MM_VOL_GET, "vol_get", NSR_XDR(xdr_mm_name_args),
	 sizeof(mm_name_args), NSR_XDR(xdr_mm_vol_res), sizeof(mm_vol_res),
	 vol_get, NSR_RPC_SERIAL},
	{MM_SS_GET, "ss_get", NSR_XDR(xdr_u_int), sizeof(u_int),
	 NSR_XDR(xdr_mm_ss_res), sizeof(mm_ss_res), ss_get, NSR_RPC_SERIAL},
	QUERY_PROCS,
	{MM_SS_CREATE_MANY, "ss_create_many",
	 NSR_XDR(xdr_mm_ss_create_many_args), sizeof(mm_ss_create_many_args),
	 NSR_XDR(xdr_mm_ss_create_many_res), sizeof(mm_ss_create_many_res),
	 ss_create_many, NSR_RPC_SERIAL},
	SS_DELETE_PROC,
	{MM_SS_DELETE_MANY, "ss_delete_many",
	 NSR_XDR(xdr_mm_ss_delete_many_args), sizeof(mm_ss_delete_many_args),
	 NSR_XDR(xdr_mm_ss_delete_many_res), sizeof(mm_ss_delete_many_res),
	 ss_delete_many, NSR_RPC_SERIAL},
};

/* An nsrmmdbd older than MM_SS_DELETE_MANY. */
static const struct nsr_rpc_proc old_procs[] = {
	QUERY_PROCS,
	SS_DELETE_PROC,
};

static const struct nsr_rpc_prog progs[] = {
	{NSRMMDBD_PROG, NSRMMDBD_V1, procs, NSR_ARRAY_SIZE(procs), NULL, NULL},
};

static const struct nsr_rpc_prog old_progs[] = {
	{NSRMMDBD_PROG, NSRMMDBD_V1, old_procs, NSR_ARRAY_SIZE(old_procs), NULL,
	 NULL},
};

/* serve - accept connections to both fakes until g_stop. */
static void *serve(void *arg)
{
	struct pollfd p[2] = {
		{.fd = nsr_rpc_server_listen_fd(g_srv, 0), .events = POLLIN},
		{.fd = nsr_rpc_server_listen_fd(g_old, 0), .events = POLLIN},
	};

	NSR_UNUSED(arg);
	while (!g_stop) {
		if (poll(p, 2, 50) <= 0)
			continue;
		if (p[0].revents)
			nsr_rpc_server_accept(g_srv, 0);
		if (p[1].revents)
			nsr_rpc_server_accept(g_old, 0);
	}
	return NULL;
}

static int setup(void **state)
{
	NSR_UNUSED(state);
	g_stop = 0;
	assert_int_equal(nsr_rpc_server_new(progs, 1, &g_srv), NSR_OK);
	assert_int_equal(nsr_rpc_server_listen(g_srv, NULL, 0, &g_port),
			 NSR_OK);
	assert_int_equal(nsr_rpc_server_new(old_progs, 1, &g_old), NSR_OK);
	assert_int_equal(nsr_rpc_server_listen(g_old, NULL, 0, &g_old_port),
			 NSR_OK);
	assert_int_equal(pthread_create(&g_thread, NULL, serve, NULL), 0);
	return 0;
}

static int teardown(void **state)
{
	NSR_UNUSED(state);
	g_stop = 1;
	pthread_join(g_thread, NULL);
	nsr_rpc_server_free(g_srv);
	nsr_rpc_server_free(g_old);
	return 0;
}

/* open_at - a client on the fake server listening on port. */
static struct mmdb_clnt *open_at(int port)
{
	struct mmdb_clnt *c = NULL;

	assert_int_equal(mmdb_clnt_connect("127.0.0.1", port, &c, NULL),
			 NSR_OK);
	return c;
}

/* open_clnt - a client on the fake server. */
static struct mmdb_clnt *open_clnt(void)
{
	return open_at(g_port);
}

static void test_status(void **state)
{
	struct mmdb_clnt *c = open_clnt();
	struct mmdb_volume v;
	struct mmdb_saveset ss;
	char longname[MMDB_VOLNAME_MAX + 2];

	NSR_UNUSED(state);
	assert_int_equal(mmdb_clnt_vol_get(c, "TAPE1", &v), NSR_OK);
	assert_string_equal(v.name, "TAPE1");
	assert_int_equal(v.written, 42);
	assert_string_equal(mmdb_clnt_errmsg(c), "");

	assert_int_equal(mmdb_clnt_vol_get(c, "nosuch", &v), NSR_ERR_NOTFOUND);
	assert_string_equal(mmdb_clnt_errmsg(c),
			    "volume nosuch is not in the media database");

	/* Too long to encode: refused here, the connection stays. */
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(mmdb_clnt_vol_get(c, longname, &v), NSR_ERR_INVAL);
	assert_non_null(strstr(mmdb_clnt_errmsg(c), "longer than"));
	assert_int_equal(mmdb_clnt_vol_get(c, "TAPE2", &v), NSR_OK);

	/* A broken server: a level out of range, a positive status code. */
	assert_int_equal(mmdb_clnt_ss_get(c, 7, &ss), NSR_ERR_PROTO);
	assert_non_null(strstr(mmdb_clnt_errmsg(c), "malformed"));
	assert_int_equal(mmdb_clnt_ss_get(c, 5, &ss), NSR_ERR_PROTO);
	assert_int_equal(mmdb_clnt_ss_get(c, 6, &ss), NSR_OK);
	assert_int_equal(ss.ssid, 6);
	assert_string_equal(ss.name, "/var");
	mmdb_clnt_close(c);
}

static void test_reconnect(void **state)
{
	struct mmdb_clnt *c = open_clnt();
	struct mmdb_saveset ss;
	int rc;

	NSR_UNUSED(state);
	/* A read is idempotent: one dropped connection is repeated on a new
	 * one without the caller seeing it. */
	g_drop_next = 1;
	assert_int_equal(mmdb_clnt_ss_get(c, 1, &ss), NSR_OK);
	assert_int_equal(ss.ssid, 1);
	assert_int_equal(g_drop_next, 0);
	/* It is repeated only once. */
	g_drop_next = 2;
	rc = mmdb_clnt_ss_get(c, 1, &ss);
	assert_true(rc == NSR_ERR_RPC || rc == NSR_ERR_PROTO);
	assert_non_null(strstr(mmdb_clnt_errmsg(c), "127.0.0.1"));
	assert_non_null(strstr(mmdb_clnt_errmsg(c), "nsrmmdbd"));
	/* The next call connects again by itself. */
	assert_int_equal(mmdb_clnt_ss_get(c, 2, &ss), NSR_OK);
	assert_int_equal(ss.ssid, 2);
	mmdb_clnt_close(c);
}

static void test_query(void **state)
{
	struct mmdb_clnt *c = open_clnt();
	struct mmdb_ss_row rows[10];
	struct mmdb_volume vols[2];
	size_t n, total = 0;
	int done = 0, batches = 0;

	NSR_UNUSED(state);
	/* Batches before any open, and of the wrong kind, are refused. */
	assert_int_equal(mmdb_clnt_query_next_rows(c, rows, 10, &n, &done),
			 NSR_ERR_STATE);
	assert_int_equal(mmdb_clnt_query_open(c, "bad", 0, 0), NSR_ERR_SYNTAX);
	assert_non_null(strstr(mmdb_clnt_errmsg(c), "column 1"));

	g_rows_total = 25;
	g_overfill = 0;
	assert_int_equal(mmdb_clnt_query_open(c, "", 0, 0), NSR_OK);
	assert_int_equal(mmdb_clnt_query_next_vols(c, vols, 2, &n, &done),
			 NSR_ERR_STATE);
	while (!done) {
		assert_int_equal(mmdb_clnt_query_next_rows(c, rows, 10, &n,
							   &done), NSR_OK);
		for (size_t i = 0; i < n; i++)
			assert_int_equal(rows[i].ss.ssid, total + i + 1);
		total += n;
		batches++;
	}
	assert_int_equal(total, 25);
	assert_int_equal(batches, 3);
	/* Exhausted: the query is closed. */
	assert_int_equal(mmdb_clnt_query_next_rows(c, rows, 10, &n, &done),
			 NSR_ERR_STATE);

	/* A server sending more than asked would overrun rows[]: refused. */
	g_overfill = 1;
	assert_int_equal(mmdb_clnt_query_open(c, "", 0, 0), NSR_OK);
	assert_int_equal(mmdb_clnt_query_next_rows(c, rows, 5, &n, &done),
			 NSR_ERR_PROTO);
	assert_int_equal(n, 0);
	g_overfill = 0;
	mmdb_clnt_close(c);
}

static void test_create_many(void **state)
{
	struct mmdb_clnt *c = open_clnt();
	struct mmdb_saveset ss[MM_CREATE_MANY_MAX + 1];
	uint32_t cloneid[MM_CREATE_MANY_MAX + 1];

	NSR_UNUSED(state);
	memset(ss, 0, sizeof(ss));
	for (int i = 0; i <= MM_CREATE_MANY_MAX; i++) {
		snprintf(ss[i].client, sizeof(ss[i].client), "c%d", i);
		snprintf(ss[i].name, sizeof(ss[i].name), "/s%d", i);
		ss[i].level = 9;
	}
	assert_int_equal(mmdb_clnt_ss_create_many(c, ss, 3, cloneid), NSR_OK);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(ss[i].ssid, 100 + i);
		assert_int_equal(cloneid[i], 200 + i);
		assert_int_equal(ss[i].longid[0], i);
	}
	assert_int_equal(mmdb_clnt_ss_create_many(c, ss, MM_CREATE_MANY_MAX,
						  cloneid),
			 NSR_OK);
	assert_int_equal(ss[MM_CREATE_MANY_MAX - 1].ssid,
			 100 + MM_CREATE_MANY_MAX - 1);
	/* Too many or none: refused here, and known not to have created. */
	assert_int_equal(mmdb_clnt_ss_create_many(c, ss,
						  MM_CREATE_MANY_MAX + 1,
						  cloneid),
			 NSR_ERR_INVAL);
	assert_int_equal(mmdb_clnt_answered(c), 1);
	assert_int_equal(mmdb_clnt_ss_create_many(c, ss, 0, cloneid),
			 NSR_ERR_INVAL);
	/* The server's refusal reaches the caller with its message. */
	snprintf(ss[0].name, sizeof(ss[0].name), "full");
	assert_int_equal(mmdb_clnt_ss_create_many(c, ss, 2, cloneid),
			 NSR_ERR_NOSPACE);
	assert_int_equal(mmdb_clnt_answered(c), 1);
	assert_non_null(strstr(mmdb_clnt_errmsg(c), "no space left"));
	/* An answer for fewer save sets than asked is refused. */
	snprintf(ss[0].name, sizeof(ss[0].name), "short");
	assert_int_equal(mmdb_clnt_ss_create_many(c, ss, 2, cloneid),
			 NSR_ERR_PROTO);
	assert_non_null(strstr(mmdb_clnt_errmsg(c), "malformed"));
	mmdb_clnt_close(c);
}

/* ids_from - ssids first .. first + n - 1, in a new array. */
static uint32_t *ids_from(uint32_t first, size_t n)
{
	uint32_t *v = calloc(n, sizeof(*v));

	assert_non_null(v);
	for (size_t i = 0; i < n; i++)
		v[i] = first + (uint32_t)i;
	return v;
}

/* test_delete_many - 3,000 ssids (half in the database) in three
 * MM_SS_DELETE_MANY of at most MM_DELETE_MANY_MAX, none singly; 20 in
 * three of at most 7 with NSR_TEST_MMDB_DELETE_BATCH=7. */
static void test_delete_many(void **state)
{
	struct mmdb_clnt *c = open_clnt();
	uint32_t *ids = ids_from(1000, 3000);
	size_t done = 0, deleted = 0;

	NSR_UNUSED(state);
	g_singles = g_manys = g_most = 0;
	assert_int_equal(
		mmdb_clnt_ss_delete_many(c, ids, 3000, &done, &deleted),
		NSR_OK);
	assert_int_equal(done, 3000);
	assert_int_equal(deleted, 1500);
	assert_int_equal(g_manys, 3);
	assert_int_equal(g_most, MM_DELETE_MANY_MAX);
	assert_int_equal(g_singles, 0);
	assert_int_equal(mmdb_clnt_ss_delete_many(c, ids, 0, &done, &deleted),
			 NSR_OK);
	assert_int_equal(done, 0);
	assert_int_equal(g_manys, 3);
	/* The test knob makes the batches smaller. */
	g_manys = g_most = 0;
	assert_int_equal(setenv("NSR_TEST_MMDB_DELETE_BATCH", "7", 1), 0);
	assert_int_equal(mmdb_clnt_ss_delete_many(c, ids, 20, &done, &deleted),
			 NSR_OK);
	unsetenv("NSR_TEST_MMDB_DELETE_BATCH");
	assert_int_equal(done, 20);
	assert_int_equal(deleted, 10);
	assert_int_equal(g_manys, 3);
	assert_int_equal(g_most, 7);
	free(ids);
	mmdb_clnt_close(c);
}

/* test_delete_many_older - an nsrmmdbd that answers MM_SS_DELETE_MANY
 * PROC_UNAVAIL gets one MM_SS_DELETE per ssid (not found is no
 * failure), on the same connection, its open query going on after; the
 * first failure stops it, *done saying how far it came. */
static void test_delete_many_older(void **state)
{
	struct mmdb_clnt *c = open_at(g_old_port);
	uint32_t *ids = ids_from(1, 10);
	const uint32_t bad[] = {1, 2, 999, 5};
	struct mmdb_ss_row rows[10];
	size_t done = 0, deleted = 0, n;
	int end = 0;

	NSR_UNUSED(state);
	g_singles = g_manys = 0;
	g_rows_total = 15;
	assert_int_equal(mmdb_clnt_query_open(c, "", 0, 0), NSR_OK);
	assert_int_equal(mmdb_clnt_query_next_rows(c, rows, 10, &n, &end),
			 NSR_OK);
	assert_int_equal(mmdb_clnt_ss_delete_many(c, ids, 10, &done, &deleted),
			 NSR_OK);
	assert_int_equal(done, 10);
	assert_int_equal(deleted, 5);
	assert_int_equal(g_singles, 10);
	assert_int_equal(mmdb_clnt_query_next_rows(c, rows, 10, &n, &end),
			 NSR_OK);
	assert_int_equal(n, 5);
	assert_int_equal(rows[0].ss.ssid, 11);
	assert_int_equal(mmdb_clnt_ss_delete_many(c, bad, 4, &done, &deleted),
			 NSR_ERR_IO);
	assert_int_equal(done, 2);
	assert_int_equal(deleted, 1);
	assert_int_equal(g_singles, 13);
	assert_int_equal(g_manys, 0);
	assert_non_null(strstr(mmdb_clnt_errmsg(c), "fake media database"));
	free(ids);
	mmdb_clnt_close(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_status, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reconnect, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_query, setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_many, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_delete_many, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_delete_many_older, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
