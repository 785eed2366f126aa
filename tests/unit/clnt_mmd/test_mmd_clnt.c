/*
 * test_mmd_clnt.c - the mover client library's save sessions against a
 * fake mover on loopback: the acknowledgement window, and spanning with
 * the replay from the resume offset when a volume fills at many places
 * (mid-chunk, on a chunk boundary, before anything fits, only noticed by
 * MMD_SS_END, on several volumes in a row), a missing or failing span
 * function, and a mover that acknowledges more than was sent.
 *
 * The fake mover serves every "volume" (volid[0] is its number): volume i
 * keeps at most cap[i] bytes of the save set, places data in blocks of
 * BLK bytes (the placed offset lags by less than a block), drops what
 * does not fit and answers NSR_ERR_EOM like nsrmmd.  What each volume
 * kept is copied into got[] at its save-set offset, so the test compares
 * got[] with what was written.
 */
#include "nsr/compat.h"

#include <pthread.h>
#include <poll.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/mmd_clnt.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsrmmd.h"
#include "nsr/xmalloc.h"
#include "nsr_test.h"

#define BLK 16384
#define NVOL 8
#define TOTAL_MAX (1u << 20)

/* The fake mover's world (guarded by mu). */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
	uint64_t cap[NVOL];	/* bytes each volume takes */
	int lie;		/* answer syncs with more than was sent */
	unsigned char got[TOTAL_MAX];
	uint64_t expect_off;	/* where the next fragment must begin */
	uint32_t expect_seq;
	unsigned nfrags;	/* fragments recorded (settled or ended) */
	unsigned syncs;		/* sync calls answered */
	unsigned spans_asked;	/* span function calls */
	int bad_begin;		/* a begin at the wrong offset/sequence */
	int ended;		/* MMD_SS_END completed the save set */
	int sync_delay_ms;	/* each sync answered this late (a long link) */
	unsigned wcap;		/* run(): the window may grow to this */
	unsigned depth_after;	/* run(): the window's depth at the end */
} w;

/* One session at the fake mover (its connection's data). */
struct fsess {
	int vol;
	uint32_t seq;
	uint64_t start, recv, dropped;
	int eom, told;
};

/* f_begin - MMD_SS_BEGIN: check the fragment's place, start it. */
static int f_begin(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	mmd_begin_args *a = args;
	nsr_void_res *r = res;
	struct fsess *s = nsr_xcalloc(1, sizeof(*s));

	NSR_UNUSED(ctx);
	s->vol = (unsigned char)a->volid[0];
	s->seq = a->frag_seq;
	s->start = a->ss_offset;
	pthread_mutex_lock(&mu);
	if (a->ss_offset != w.expect_off || a->frag_seq != w.expect_seq ||
	    s->vol >= NVOL)
		w.bad_begin = 1;
	pthread_mutex_unlock(&mu);
	free(nsr_rpc_call_conn_data(call));
	nsr_rpc_call_set_conn_data(call, s, free);
	r->st.msg = nsr_xstrdup("");
	return NSR_OK;
}

/* f_data - MMD_SS_DATA: keep what fits on the volume, drop the rest. */
static int f_data(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	mmd_data_args *a = args;
	struct fsess *s = nsr_rpc_call_conn_data(call);
	uint64_t cap, n, fit;

	NSR_UNUSED(ctx);
	NSR_UNUSED(res);
	if (!s)
		return NSR_RPC_NOREPLY;
	n = a->data.data_len;
	if (s->eom) {
		s->dropped += n;
		return NSR_RPC_NOREPLY;
	}
	pthread_mutex_lock(&mu);
	cap = w.cap[s->vol];
	fit = s->recv < cap ? NSR_MIN(n, cap - s->recv) : 0;
	if (s->start + s->recv + fit <= TOTAL_MAX)
		memcpy(w.got + s->start + s->recv, a->data.data_val, fit);
	pthread_mutex_unlock(&mu);
	s->recv += fit;
	if (fit < n) {
		s->eom = 1;
		s->dropped += n - fit;
	}
	return NSR_RPC_NOREPLY;
}

/* eom_fill - NSR_ERR_EOM and where the save set resumes. */
static void eom_fill(struct fsess *s, nsr_status *st, mmd_eom *e)
{
	e->spans = TRUE;
	e->resume = s->start + s->recv;
	e->frag_seq = s->recv > 0 ? s->seq + 1 : s->seq;
	memset(e->full_volid, 0, sizeof(e->full_volid));
	e->full_volid[0] = (char)s->vol;
	st->code = NSR_ERR_EOM;
	st->msg = nsr_xstrdup("fake volume is full");
	s->told = 1;
}

/* f_sync - MMD_SS_SYNC: placed in whole blocks, or the end of medium. */
static int f_sync(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	mmd_sync_res *r = res;
	struct fsess *s = nsr_rpc_call_conn_data(call);

	NSR_UNUSED(ctx);
	NSR_UNUSED(args);
	if (w.sync_delay_ms)
		poll(NULL, 0, w.sync_delay_ms);
	pthread_mutex_lock(&mu);
	w.syncs++;
	r->placed = s ? s->start + s->recv / BLK * BLK : 0;
	if (s && w.lie)
		r->placed = s->start + s->recv + 1;
	pthread_mutex_unlock(&mu);
	if (s && s->eom) {
		eom_fill(s, &r->st, &r->eom);
		return NSR_OK;
	}
	r->st.msg = nsr_xstrdup("");
	return NSR_OK;
}

/* record - a fragment of s is on its volume: the next begins after it. */
static void record(struct fsess *s)
{
	pthread_mutex_lock(&mu);
	if (s->recv > 0) {
		w.nfrags++;
		w.expect_seq = s->seq + 1;
	}
	w.expect_off = s->start + s->recv;
	pthread_mutex_unlock(&mu);
}

/* f_end - MMD_SS_END: the end, or the end of medium told / settled. */
static int f_end(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	mmd_end_args *a = args;
	mmd_end_res *r = res;
	struct fsess *s = nsr_rpc_call_conn_data(call);
	int told;

	NSR_UNUSED(ctx);
	if (!s) {
		r->st.code = NSR_ERR_STATE;
		r->st.msg = nsr_xstrdup("no session");
		return NSR_OK;
	}
	if (!s->eom) {
		record(s);
		pthread_mutex_lock(&mu);
		w.ended = 1;
		pthread_mutex_unlock(&mu);
		r->frag.seq = s->seq;
		r->frag.ss_offset = s->start;
		r->frag.size = s->recv;
		r->frag.complete = TRUE;
		r->st.msg = nsr_xstrdup("");
		nsr_rpc_call_set_conn_data(call, NULL, NULL);
		free(s);
		return NSR_OK;
	}
	told = s->told;
	eom_fill(s, &r->st, &r->eom);
	if (told) {
		if (a->status != NSR_VOL_SS_ABORTED)
			record(s);
		nsr_rpc_call_set_conn_data(call, NULL, NULL);
		free(s);
	}
	return NSR_OK;
}

static const struct nsr_rpc_proc procs[] = {
	{MMD_SS_BEGIN, "ss_begin", NSR_XDR(xdr_mmd_begin_args),
	 sizeof(mmd_begin_args), NSR_XDR(xdr_nsr_void_res),
	 sizeof(nsr_void_res), f_begin, 0},
	{MMD_SS_DATA, "ss_data", NSR_XDR(xdr_mmd_data_args),
	 sizeof(mmd_data_args), NSR_XDR(xdr_void), 0, f_data, 0},
	{MMD_SS_END, "ss_end", NSR_XDR(xdr_mmd_end_args), sizeof(mmd_end_args),
	 NSR_XDR(xdr_mmd_end_res), sizeof(mmd_end_res), f_end, 0},
	{MMD_SS_SYNC, "ss_sync", NSR_XDR(xdr_mmd_sync_args),
	 sizeof(mmd_sync_args), NSR_XDR(xdr_mmd_sync_res),
	 sizeof(mmd_sync_res), f_sync, 0},
};

static const struct nsr_rpc_prog progs[] = {
	{NSRMMD_PROG, NSRMMD_V1, procs, NSR_ARRAY_SIZE(procs), NULL, NULL},
};

struct server {
	struct nsr_rpc_server *srv;
	pthread_t tid;
	int port;
	volatile int stop;
};

/* accept_loop - accept connections until told to stop. */
static void *accept_loop(void *arg)
{
	struct server *s = arg;
	struct pollfd p = {.fd = nsr_rpc_server_listen_fd(s->srv, 0),
			   .events = POLLIN};

	while (!s->stop)
		if (poll(&p, 1, 20) > 0)
			nsr_rpc_server_accept(s->srv, 0);
	return NULL;
}

static struct server g_srv;

/* span_next - the span function: the next fake volume, same server. */
static int span_next(void *ctx, uint32_t ssid, const char *pool,
		     const uint8_t full_volid[16], struct nsr_mmd_next *nx,
		     struct nsr_buf *err)
{
	int fail = ctx != NULL;

	NSR_UNUSED(ssid);
	assert_string_equal(pool, "P");
	pthread_mutex_lock(&mu);
	w.spans_asked++;
	pthread_mutex_unlock(&mu);
	if (fail) {
		nsr_buf_addstr(err, "no writable volume of pool 'P' left");
		return NSR_ERR_NOTFOUND;
	}
	snprintf(nx->host, sizeof(nx->host), "127.0.0.1");
	nx->port = g_srv.port;
	memset(nx->volid, 0, sizeof(nx->volid));
	nx->volid[0] = (uint8_t)(full_volid[0] + 1);
	snprintf(nx->volume, sizeof(nx->volume), "V%d", nx->volid[0]);
	return NSR_OK;
}

/* setup - start the fake mover. */
static int setup(void **state)
{
	NSR_UNUSED(state);
	memset(&g_srv, 0, sizeof(g_srv));
	assert_int_equal(nsr_rpc_server_new(progs, NSR_ARRAY_SIZE(progs),
					    &g_srv.srv), NSR_OK);
	assert_int_equal(nsr_rpc_server_listen(g_srv.srv, "127.0.0.1", 0,
					       &g_srv.port), NSR_OK);
	pthread_create(&g_srv.tid, NULL, accept_loop, &g_srv);
	return 0;
}

/* teardown - stop it. */
static int teardown(void **state)
{
	NSR_UNUSED(state);
	g_srv.stop = 1;
	pthread_join(g_srv.tid, NULL);
	nsr_rpc_server_free(g_srv.srv);
	return 0;
}

/* pattern - the save-set byte at offset i. */
static unsigned char pattern(uint64_t i)
{
	return (unsigned char)(i * 7 + (i >> 9) * 13 + 1);
}

/* run - save `total` bytes in writes of `piece` with a window of `every`
 * bytes, `depth` deep, in `chunk` calls; the volumes take caps[].  The
 * session's result; *frag gets the last fragment. */
static int run(const uint64_t *caps, size_t ncaps, size_t total, size_t piece,
	       size_t every, unsigned depth, size_t chunk, void *span_ctx,
	       int with_fn, struct nsr_vol_frag *frag, struct nsr_buf *err)
{
	struct nsr_mmd *m = NULL;
	struct nsr_vol_sshdr hdr;
	struct nsr_vol_sstail tail = {.bytes = total, .files = 1};
	unsigned char *buf = malloc(total);
	uint8_t volid[16] = {0};
	int rc;

	assert_non_null(buf);
	pthread_mutex_lock(&mu);
	memset(w.cap, 0, sizeof(w.cap));
	for (size_t i = 0; i < ncaps; i++)
		w.cap[i] = caps[i];
	memset(w.got, 0, sizeof(w.got));
	w.expect_off = 0;
	w.expect_seq = 0;
	w.nfrags = w.syncs = w.spans_asked = 0;
	w.bad_begin = w.ended = 0;
	pthread_mutex_unlock(&mu);
	for (size_t i = 0; i < total; i++)
		buf[i] = pattern(i);
	memset(&hdr, 0, sizeof(hdr));
	hdr.ssid = 42;
	snprintf(hdr.pool, sizeof(hdr.pool), "P");
	assert_int_equal(nsr_mmd_connect("127.0.0.1", g_srv.port, &m, err),
			 NSR_OK);
	nsr_mmd_set_chunk(m, chunk);
	nsr_mmd_set_window(m, every, depth, w.wcap);
	if (with_fn)
		nsr_mmd_set_span_fn(m, span_next, span_ctx);
	rc = nsr_mmd_ss_begin(m, &hdr, volid, NULL, err);
	for (size_t off = 0; rc == NSR_OK && off < total; off += piece)
		rc = nsr_mmd_ss_write(m, buf + off,
				      NSR_MIN(piece, total - off));
	if (rc != NSR_OK)
		nsr_buf_addstr(err, nsr_mmd_errmsg(m));
	if (rc == NSR_OK)
		rc = nsr_mmd_ss_end(m, &tail, frag, err);
	else
		nsr_mmd_ss_end(m, &tail, frag, err);
	w.depth_after = nsr_mmd_window_depth(m);
	nsr_mmd_close(m);
	if (rc == NSR_OK)
		assert_memory_equal(w.got, buf, total);
	free(buf);
	return rc;
}

/* test_no_span - the save set fits: syncs flow, one fragment. */
static void test_no_span(void **state)
{
	const uint64_t caps[] = {TOTAL_MAX};
	struct nsr_vol_frag f;
	struct nsr_buf err;

	NSR_UNUSED(state);
	nsr_buf_init(&err, 0);
	assert_int_equal(run(caps, 1, 600000, 10000, 65536, 2, 32768, NULL, 1,
			     &f, &err), NSR_OK);
	assert_int_equal(f.size, 600000);
	assert_int_equal(w.spans_asked, 0);
	assert_true(w.syncs >= 8);
	nsr_buf_release(&err);
}

/* test_span_offsets - volumes filling at many places, each case read
 * back whole from the fragments. */
static void test_span_offsets(void **state)
{
	static const struct {
		uint64_t caps[NVOL];
		size_t total, piece, every, chunk;
		unsigned depth, spans;
	} c[] = {
		/* mid-chunk, several volumes, a small window */
		{{100000, 100000, 100000, 100000, 100000, 100000}, 500000,
		 7000, 65536, 32768, 2, 4},
		/* on chunk boundaries */
		{{3 * 32768, 3 * 32768, TOTAL_MAX}, 300000, 32768, 32768,
		 32768, 1, 2},
		/* a volume that takes nothing (same fragment number next) */
		{{50000, 0, TOTAL_MAX}, 200000, 4096, 65536, 32768, 3, 2},
		/* stop-and-wait window, big volume, then small ones */
		{{400000, 1, 40000, TOTAL_MAX}, 700000, 100000, 32768, 32768,
		 1, 3},
		/* a window larger than the save set: only the end hears */
		{{250000, TOTAL_MAX}, 260000, 65536, 8 << 20, 65536, 4, 1},
		/* one byte too many for the first volume */
		{{299999, TOTAL_MAX}, 300000, 300000, 1 << 20, 32768, 4, 1},
	};
	struct nsr_vol_frag f;
	struct nsr_buf err;

	NSR_UNUSED(state);
	for (size_t i = 0; i < NSR_ARRAY_SIZE(c); i++) {
		nsr_buf_init(&err, 0);
		assert_int_equal(run(c[i].caps, NVOL, c[i].total, c[i].piece,
				     c[i].every, c[i].depth, c[i].chunk, NULL,
				     1, &f, &err), NSR_OK);
		assert_int_equal(w.spans_asked, c[i].spans);
		assert_false(w.bad_begin);
		assert_true(w.ended);
		assert_int_equal(f.ss_offset + f.size, c[i].total);
		nsr_buf_release(&err);
	}
}

/* test_span_refused - no span function, or it fails: the session fails
 * with the reason and the part on the full volume is not recorded. */
static void test_span_refused(void **state)
{
	const uint64_t caps[] = {100000, TOTAL_MAX};
	struct nsr_vol_frag f;
	struct nsr_buf err;

	NSR_UNUSED(state);
	nsr_buf_init(&err, 0);
	assert_int_equal(run(caps, 2, 300000, 32768, 65536, 2, 32768, NULL, 0,
			     &f, &err), NSR_ERR_EOM);
	assert_non_null(strstr(err.data, "fake volume is full"));
	assert_int_equal(w.nfrags, 0);
	nsr_buf_release(&err);

	nsr_buf_init(&err, 0);
	assert_int_equal(run(caps, 2, 300000, 32768, 65536, 2, 32768,
			     (void *)1, 1, &f, &err), NSR_ERR_NOTFOUND);
	assert_non_null(strstr(err.data, "pool 'P'"));
	assert_int_equal(w.spans_asked, 1);
	assert_int_equal(w.nfrags, 0);
	nsr_buf_release(&err);
}

/* test_lying_mover - an acknowledgement beyond what was sent. */
static void test_lying_mover(void **state)
{
	const uint64_t caps[] = {TOTAL_MAX};
	struct nsr_vol_frag f;
	struct nsr_buf err;

	NSR_UNUSED(state);
	nsr_buf_init(&err, 0);
	w.lie = 1;
	assert_int_equal(run(caps, 1, 400000, 32768, 32768, 1, 32768, NULL, 1,
			     &f, &err), NSR_ERR_PROTO);
	w.lie = 0;
	assert_non_null(strstr(err.data, "placed"));
	nsr_buf_release(&err);
}

/* test_window_grows - syncs answered late while the link is idle: the
 * window grows to its cap; a fixed window (cap == depth) stays. */
static void test_window_grows(void **state)
{
	const uint64_t caps[] = {TOTAL_MAX};
	struct nsr_vol_frag f;
	struct nsr_buf err;

	NSR_UNUSED(state);
	w.sync_delay_ms = 20;
	for (unsigned cap = 1; cap <= 6; cap += 5) {
		nsr_buf_init(&err, 0);
		w.wcap = cap;
		assert_int_equal(run(caps, 1, TOTAL_MAX, 65536, 32768, 1, 32768,
				     NULL, 1, &f, &err), NSR_OK);
		assert_int_equal(f.size, TOTAL_MAX);
		assert_int_equal(w.depth_after, cap);
		nsr_buf_release(&err);
	}
	w.sync_delay_ms = 0;
	w.wcap = 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_span),
		cmocka_unit_test(test_span_offsets),
		cmocka_unit_test(test_span_refused),
		cmocka_unit_test(test_lying_mover),
		cmocka_unit_test(test_window_grows),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
