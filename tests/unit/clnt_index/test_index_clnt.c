/*
 * test_index_clnt.c - the index client's pipelined batches against a fake
 * nsrindexd on loopback (one server that is also the host's locator):
 * every entry and list arrives in order and before IX_COMMIT; more
 * batches than the pipeline holds; a batch the server refuses fails a
 * later add or the commit with the server's words, and the commit is
 * then never sent; a call after the batches reads their replies first.
 * Deleting many save sets: IX_DELETE_MANY in bounded batches, and one
 * IX_DELETE each from an older nsrindexd (a second fake, without
 * IX_DELETE_MANY, that answers it PROC_UNAVAIL).
 */
#include "nsr/compat.h"

#include <poll.h>
#include <pthread.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/index_clnt.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsrexecd.h"
#include "nsr/rpc/nsrindex.h"
#include "nsr/xmalloc.h"
#include "nsr_test.h"

/* The fake index's world (guarded by mu). */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
	unsigned entries;   /* entries received, in order */
	unsigned batches;   /* IX_ADD calls */
	unsigned names;	    /* list names received */
	unsigned refuse_at; /* refuse the IX_ADD batch of this number (1..) */
	int out_of_order;   /* an entry's path was not the next one */
	int commits;	    /* IX_COMMIT calls */
	unsigned at_commit; /* entries received when IX_COMMIT came */
	unsigned singles;   /* IX_DELETE calls */
	unsigned manys;	    /* IX_DELETE_MANY calls */
	unsigned most;	    /* the most ssids in one call */
	int port;
	int ixport; /* nsrindexd's port the locator answers (0: port) */
} w;

/* ok - an nsr_void_res saying OK. */
static int ok(nsr_void_res *r)
{
	r->st.code = NSR_OK;
	r->st.msg = nsr_xstrdup("");
	return NSR_OK;
}

/* f_getport - LOC_GETPORT: nsrindexd is on this server's port. */
static int f_getport(void *ctx, void *args, void *res,
		     struct nsr_rpc_call *call)
{
	loc_get_res *r = res;

	NSR_UNUSED(ctx);
	NSR_UNUSED(args);
	NSR_UNUSED(call);
	r->st.msg = nsr_xstrdup("");
	r->port = w.ixport ? w.ixport : w.port;
	return NSR_OK;
}

/* f_begin - IX_BEGIN. */
static int f_begin(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	NSR_UNUSED(ctx);
	NSR_UNUSED(args);
	NSR_UNUSED(call);
	return ok(res);
}

/* f_add - IX_ADD: count entries, check their order, refuse one batch. */
static int f_add(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	ix_add_args *a = args;
	nsr_void_res *r = res;
	char want[64];

	NSR_UNUSED(ctx);
	NSR_UNUSED(call);
	pthread_mutex_lock(&mu);
	if (++w.batches == w.refuse_at) {
		pthread_mutex_unlock(&mu);
		r->st.code = NSR_ERR_IO;
		r->st.msg = nsr_xstrdup("fake index: disk full");
		return NSR_OK;
	}
	for (u_int i = 0; i < a->entries.entries_len; i++) {
		snprintf(want, sizeof(want), "/d/f%u", w.entries);
		if (strcmp(a->entries.entries_val[i].path, want) != 0)
			w.out_of_order = 1;
		w.entries++;
	}
	pthread_mutex_unlock(&mu);
	return ok(r);
}

/* f_lists - IX_ADD_LISTS: count names. */
static int f_lists(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	ix_lists_args *a = args;

	NSR_UNUSED(ctx);
	NSR_UNUSED(call);
	pthread_mutex_lock(&mu);
	for (u_int i = 0; i < a->lists.lists_len; i++)
		w.names += a->lists.lists_val[i].names.names_len;
	pthread_mutex_unlock(&mu);
	return ok(res);
}

/* f_commit - IX_COMMIT: note how much had arrived. */
static int f_commit(void *ctx, void *args, void *res,
		    struct nsr_rpc_call *call)
{
	NSR_UNUSED(ctx);
	NSR_UNUSED(args);
	NSR_UNUSED(call);
	pthread_mutex_lock(&mu);
	w.commits++;
	w.at_commit = w.entries;
	pthread_mutex_unlock(&mu);
	return ok(res);
}

/* f_abort - IX_ABORT. */
static int f_abort(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	NSR_UNUSED(ctx);
	NSR_UNUSED(args);
	NSR_UNUSED(call);
	return ok(res);
}

/* gone - the fake's verdict on deleting ssid: odd ones are in the
 * index, even ones not, 999 fails. */
static int gone(uint64_t ssid)
{
	if (ssid == 999)
		return NSR_ERR_IO;
	return ssid % 2 ? NSR_OK : NSR_ERR_NOTFOUND;
}

/* count_call - one more call of a kind (*calls), of n ssids. */
static void count_call(unsigned *calls, unsigned n)
{
	pthread_mutex_lock(&mu);
	(*calls)++;
	w.most = NSR_MAX(w.most, n);
	pthread_mutex_unlock(&mu);
}

/* f_delete - IX_DELETE of one save set. */
static int f_delete(void *ctx, void *args, void *res,
		    struct nsr_rpc_call *call)
{
	ix_ss_args *a = args;
	nsr_void_res *r = res;

	NSR_UNUSED(ctx);
	NSR_UNUSED(call);
	count_call(&w.singles, 1);
	r->st.code = gone(a->ssid);
	r->st.msg = nsr_xstrdup(r->st.code ? "fake index: no" : "");
	return NSR_OK;
}

/* f_delete_many - IX_DELETE_MANY: count the calls and the largest. */
static int f_delete_many(void *ctx, void *args, void *res,
			 struct nsr_rpc_call *call)
{
	ix_delete_args *a = args;
	ix_delete_res *r = res;

	NSR_UNUSED(ctx);
	NSR_UNUSED(call);
	count_call(&w.manys, a->ssids.ssids_len);
	r->st.msg = nsr_xstrdup("");
	for (u_int i = 0; i < a->ssids.ssids_len; i++)
		if (gone(a->ssids.ssids_val[i]) == NSR_OK)
			r->removed++;
	r->notfound = a->ssids.ssids_len - r->removed;
	return NSR_OK;
}

static const struct nsr_rpc_proc loc_procs[] = {
	{LOC_GETPORT, "getport", NSR_XDR(xdr_loc_key), sizeof(loc_key),
	 NSR_XDR(xdr_loc_get_res), sizeof(loc_get_res), f_getport, 0},
};

static const struct nsr_rpc_proc ix_procs[] = {
	{IX_BEGIN, "begin", NSR_XDR(xdr_ix_begin_args), sizeof(ix_begin_args),
	 NSR_XDR(xdr_nsr_void_res), sizeof(nsr_void_res), f_begin, 0},
	{IX_ADD, "add", NSR_XDR(xdr_ix_add_args), sizeof(ix_add_args),
	 NSR_XDR(xdr_nsr_void_res), sizeof(nsr_void_res), f_add, 0},
	{IX_ADD_LISTS, "lists", NSR_XDR(xdr_ix_lists_args),
	 sizeof(ix_lists_args), NSR_XDR(xdr_nsr_void_res),
	 sizeof(nsr_void_res), f_lists, 0},
	{IX_COMMIT, "commit", NSR_XDR(xdr_ix_ss_args), sizeof(ix_ss_args),
	 NSR_XDR(xdr_nsr_void_res), sizeof(nsr_void_res), f_commit, 0},
	{IX_ABORT, "abort", NSR_XDR(xdr_ix_ss_args), sizeof(ix_ss_args),
	 NSR_XDR(xdr_nsr_void_res), sizeof(nsr_void_res), f_abort, 0},
	{IX_DELETE, "delete", NSR_XDR(xdr_ix_ss_args), sizeof(ix_ss_args),
	 NSR_XDR(xdr_nsr_void_res), sizeof(nsr_void_res), f_delete, 0},
	{IX_DELETE_MANY, "delete many", NSR_XDR(xdr_ix_delete_args),
	 sizeof(ix_delete_args), NSR_XDR(xdr_ix_delete_res),
	 sizeof(ix_delete_res), f_delete_many, 0},
};

/* An nsrindexd older than IX_DELETE_MANY. */
static const struct nsr_rpc_proc old_procs[] = {
	{IX_DELETE, "delete", NSR_XDR(xdr_ix_ss_args), sizeof(ix_ss_args),
	 NSR_XDR(xdr_nsr_void_res), sizeof(nsr_void_res), f_delete, 0},
};

static const struct nsr_rpc_prog progs[] = {
	{NSREXECD_PROG, NSREXECD_V1, loc_procs, NSR_ARRAY_SIZE(loc_procs),
	 NULL, NULL},
	{NSRINDEXD_PROG, NSRINDEXD_V1, ix_procs, NSR_ARRAY_SIZE(ix_procs),
	 NULL, NULL},
};

static const struct nsr_rpc_prog old_progs[] = {
	{NSRINDEXD_PROG, NSRINDEXD_V1, old_procs, NSR_ARRAY_SIZE(old_procs),
	 NULL, NULL},
};

static struct {
	struct nsr_rpc_server *srv, *old; /* the fake, an older one */
	int old_port;
	pthread_t tid;
	volatile int stop;
} g;

/* accept_loop - accept connections to both until told to stop. */
static void *accept_loop(void *arg)
{
	struct pollfd p[2] = {
		{.fd = nsr_rpc_server_listen_fd(g.srv, 0), .events = POLLIN},
		{.fd = nsr_rpc_server_listen_fd(g.old, 0), .events = POLLIN},
	};

	NSR_UNUSED(arg);
	while (!g.stop) {
		if (poll(p, 2, 20) <= 0)
			continue;
		if (p[0].revents)
			nsr_rpc_server_accept(g.srv, 0);
		if (p[1].revents)
			nsr_rpc_server_accept(g.old, 0);
	}
	return NULL;
}

/* setup - start the fake index; the locator is asked on its port. */
static int setup(void **state)
{
	char port[16];

	NSR_UNUSED(state);
	assert_int_equal(nsr_rpc_server_new(progs, NSR_ARRAY_SIZE(progs),
					    &g.srv), NSR_OK);
	assert_int_equal(nsr_rpc_server_listen(g.srv, "127.0.0.1", 0,
					       &w.port), NSR_OK);
	assert_int_equal(nsr_rpc_server_new(old_progs,
					    NSR_ARRAY_SIZE(old_progs), &g.old),
			 NSR_OK);
	assert_int_equal(nsr_rpc_server_listen(g.old, "127.0.0.1", 0,
					       &g.old_port), NSR_OK);
	snprintf(port, sizeof(port), "%d", w.port);
	setenv("NSR_PORTMAP_PORT", port, 1);
	pthread_create(&g.tid, NULL, accept_loop, NULL);
	return 0;
}

/* teardown - stop it. */
static int teardown(void **state)
{
	NSR_UNUSED(state);
	g.stop = 1;
	pthread_join(g.tid, NULL);
	nsr_rpc_server_free(g.srv);
	nsr_rpc_server_free(g.old);
	return 0;
}

/* reset - a fresh world; refuse batch refuse_at (0: none). */
static void reset(unsigned refuse_at)
{
	int port = w.port;

	pthread_mutex_lock(&mu);
	memset(&w, 0, sizeof(w));
	w.port = port;
	w.refuse_at = refuse_at;
	pthread_mutex_unlock(&mu);
}

/* add_n - add entries /d/f0../d/f<n-1>; the first failure, if any. */
static int add_n(struct nsr_ixclnt *ix, unsigned n)
{
	char path[64];
	int rc = NSR_OK;

	for (unsigned i = 0; i < n && rc == NSR_OK; i++) {
		struct nsr_cfi_entry e = {.path = path, .type = 1,
					  .size = i};

		snprintf(path, sizeof(path), "/d/f%u", i);
		rc = nsr_ixclnt_add(ix, &e);
	}
	return rc;
}

/* open_begun - a connected index client with a save set begun. */
static struct nsr_ixclnt *open_begun(void)
{
	struct nsr_ixclnt *ix = NULL;
	struct nsr_buf err;

	nsr_buf_init(&err, 0);
	assert_int_equal(nsr_ixclnt_open("127.0.0.1", &ix, &err), NSR_OK);
	nsr_buf_release(&err);
	assert_int_equal(nsr_ixclnt_begin(ix, "c", 7, 1000, "/d"), NSR_OK);
	return ix;
}

/* test_many_batches - 40 batches (five pipelines' worth) and a list: all
 * arrive in order before the commit. */
static void test_many_batches(void **state)
{
	const char *names[] = {"a", "b", "c"};
	struct nsr_ixclnt *ix;

	NSR_UNUSED(state);
	reset(0);
	ix = open_begun();
	assert_int_equal(add_n(ix, 40 * 512 + 7), NSR_OK);
	assert_int_equal(nsr_ixclnt_add_list(ix, "/d", names, 3), NSR_OK);
	assert_int_equal(nsr_ixclnt_commit(ix), NSR_OK);
	nsr_ixclnt_close(ix);
	assert_int_equal(w.entries, 40 * 512 + 7);
	assert_int_equal(w.batches, 41);
	assert_int_equal(w.names, 3);
	assert_false(w.out_of_order);
	assert_int_equal(w.commits, 1);
	assert_int_equal(w.at_commit, 40 * 512 + 7);
}

/* test_refused_batch - the third batch is refused: a later add fails
 * with the server's words and nothing is committed. */
static void test_refused_batch(void **state)
{
	struct nsr_ixclnt *ix;
	int rc;

	NSR_UNUSED(state);
	reset(3);
	ix = open_begun();
	rc = add_n(ix, 40 * 512);
	assert_int_equal(rc, NSR_ERR_IO);
	assert_non_null(strstr(nsr_ixclnt_errmsg(ix), "disk full"));
	assert_int_equal(nsr_ixclnt_abort(ix), NSR_OK);
	nsr_ixclnt_close(ix);
	assert_int_equal(w.commits, 0);
	/* Pipelined: batches 4..10 went out before the reply of 3 was
	 * read (8 outstanding at most), and the abort read their replies
	 * first.  One call at a time would have stopped at 3. */
	assert_int_equal(w.batches, 3 + 8 - 1);
}

/* test_refused_last - the only batch is refused: the commit fails
 * with the server's words and IX_COMMIT is never sent. */
static void test_refused_last(void **state)
{
	struct nsr_ixclnt *ix;

	NSR_UNUSED(state);
	reset(1);
	ix = open_begun();
	assert_int_equal(add_n(ix, 100), NSR_OK); /* queued, not sent */
	assert_int_equal(nsr_ixclnt_commit(ix), NSR_ERR_IO);
	assert_non_null(strstr(nsr_ixclnt_errmsg(ix), "disk full"));
	nsr_ixclnt_close(ix);
	assert_int_equal(w.batches, 1);
	assert_int_equal(w.commits, 0);
}

/* ids_from - ssids first .. first + n - 1, in a new array. */
static uint64_t *ids_from(uint64_t first, size_t n)
{
	uint64_t *v = nsr_xcalloc(n, sizeof(*v));

	for (size_t i = 0; i < n; i++)
		v[i] = first + i;
	return v;
}

/* delete_many_at - nsr_ixclnt_delete_many of ids[0..n) on a new handle
 * to the fake on port (0: the one that knows IX_DELETE_MANY). */
static int delete_many_at(int port, const uint64_t *ids, size_t n,
			  size_t *done, size_t *removed)
{
	struct nsr_ixclnt *ix = NULL;
	struct nsr_buf err;
	int rc;

	reset(0);
	w.ixport = port;
	nsr_buf_init(&err, 0);
	assert_int_equal(nsr_ixclnt_open("127.0.0.1", &ix, &err), NSR_OK);
	nsr_buf_release(&err);
	rc = nsr_ixclnt_delete_many(ix, "c", ids, n, done, removed);
	if (rc == NSR_OK && port) { /* the handle remembers: no new try */
		unsigned singles = w.singles;

		assert_int_equal(nsr_ixclnt_delete_many(ix, "c", ids, 2, NULL,
							NULL),
				 NSR_OK);
		assert_int_equal(w.singles, singles + 2);
	}
	nsr_ixclnt_close(ix);
	return rc;
}

/* test_delete_many - 20,000 ssids (half in the index) in three
 * IX_DELETE_MANY of at most IX_DELETE_MAX; none singly. */
static void test_delete_many(void **state)
{
	uint64_t *ids = ids_from(1000, 20000);
	size_t done = 0, removed = 0;

	NSR_UNUSED(state);
	assert_int_equal(delete_many_at(0, ids, 20000, &done, &removed),
			 NSR_OK);
	assert_int_equal(done, 20000);
	assert_int_equal(removed, 10000);
	assert_int_equal(w.manys, 3);
	assert_int_equal(w.most, IX_DELETE_MAX);
	assert_int_equal(w.singles, 0);
	free(ids);
}

/* test_delete_many_older - an nsrindexd that answers IX_DELETE_MANY
 * PROC_UNAVAIL gets one IX_DELETE per ssid (not found is no failure);
 * the first failure stops it, *done saying how far it came. */
static void test_delete_many_older(void **state)
{
	uint64_t *ids = ids_from(1, 10);
	const uint64_t bad[] = {1, 2, 999, 5};
	size_t done = 0, removed = 0;

	NSR_UNUSED(state);
	assert_int_equal(delete_many_at(g.old_port, ids, 10, &done, &removed),
			 NSR_OK);
	assert_int_equal(done, 10);
	assert_int_equal(removed, 5);
	assert_int_equal(w.manys, 0);
	assert_int_equal(delete_many_at(g.old_port, bad, 4, &done, &removed),
			 NSR_ERR_IO);
	assert_int_equal(done, 2);
	assert_int_equal(removed, 1);
	assert_int_equal(w.singles, 3);
	free(ids);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_many_batches),
		cmocka_unit_test(test_refused_batch),
		cmocka_unit_test(test_refused_last),
		cmocka_unit_test(test_delete_many),
		cmocka_unit_test(test_delete_many_older),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
