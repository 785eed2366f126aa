/*
 * clone.c - the client side of a clone session (clone.h): CLONE_START at
 * nsrd, the copy read from its movers and written to the destination's
 * mover under the new clone id, CLONE_END; and the choice of save sets
 * by an mminfo query.
 *
 * The bytes pass through this process: a reader thread pulls pieces from
 * the source mover into a small ring while the caller's thread queues
 * them to the pipelined writer, so reads, writes and both movers' disk
 * work overlap.  Damage read from the source fails the clone: a copy is made
 * only of intact data.
 */
#include "nsr/compat.h"

#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/clone.h"
#include "nsr/err.h"
#include "nsr/mmd_clnt.h"
#include "nsr/mmdb_clnt.h"
#include "nsr/nsrd_clnt.h"
#include "nsr/rpc.h"
#include "nsr/rpc_status.h"
#include "nsr/session.h"

#include "session_int.h"

/* Bytes asked of the source mover per read: its piece size, which it
 * hands over without a copy (nsrmmd recover.c). */
#define CLONE_READ NSR_MMD_CHUNK_DEFAULT

/* A clone in progress. */
struct clone_run {
	struct nsr_nsrd *d;
	const struct nsr_clone_opts *o;
	clone_start_res r;
	struct nsr_mmd *dst;
	struct session_lease *lease; /* lease.c: renews the clone session */
	uint64_t bytes;
	char volume[65];	/* the destination volume being written */
	unsigned spans;		/* volumes gone on to after the first */
};

/* notice - one line to the caller. */
static void notice(const struct nsr_clone_opts *o, const char *msg)
{
	if (o->notice && msg && *msg)
		o->notice(o->ctx, msg);
}

/* renewed - what the lease renewer found: NSR_ERR_STATE once nsrd
 * settled the clone session, else NSR_OK (a failed renewal is told). */
static int renewed(struct clone_run *c, struct nsr_buf *err)
{
	char warn[512];

	if (session_lease_check(c->lease, 0, warn, sizeof(warn))) {
		nsr_buf_addf(err, "nsrd ended the clone session (see the "
			     "server's log)");
		return NSR_ERR_STATE;
	}
	if (warn[0])
		notice(c->o, warn);
	return NSR_OK;
}

/* test_stall - the test knob NSR_TEST_CLONE_STALL_SEC (<= 600): once,
 * after the first piece went to the destination, wait that long (a test
 * kills nsrclone in the middle of a clone). */
static void test_stall(void)
{
	static int done;
	const char *e = getenv("NSR_TEST_CLONE_STALL_SEC");
	long v = e ? strtol(e, NULL, 10) : 0;

	if (done || v <= 0 || v > 600)
		return;
	done = 1;
	sleep((unsigned)v);
}

/* frag_of - the wire fragment w as the mover library's. */
static void frag_of(const rec_frag *w, struct nsr_vol_frag *f)
{
	memset(f, 0, sizeof(*f));
	memcpy(f->volid, w->volid, 16);
	f->ssid = w->ssid;
	f->frag_seq = w->seq;
	f->ss_offset = w->ss_offset;
	f->file = w->file;
	f->record = w->record;
	f->offset = w->offset;
	f->size = w->size;
	f->complete = w->complete;
}

/* The reader of one volume's run: a thread pulling pieces from the
 * source mover into a ring of CLONE_SLOTS buffers while the caller writes
 * the filled ones to the destination, so a read's round trip overlaps
 * with the writes.  Invariants: the reader alone fills slot (head + n) %
 * CLONE_SLOTS, outside the lock, and only while n < CLONE_SLOTS; the
 * writer alone reads slot head, outside the lock, and only while n > 0;
 * n, done and stop change under mu. */
#define CLONE_SLOTS 4

struct clone_reader {
	struct nsr_mmd *src;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char *buf[CLONE_SLOTS];
	size_t len[CLONE_SLOTS];
	size_t head, n;
	int done;		/* the reader ended: rc, err final */
	int stop;		/* the writer gave up: end now */
	int rc;
	struct nsr_buf err;
};

/* reader_main - the reader thread: fill slots until eof, an error or
 * stop. */
static void *reader_main(void *arg)
{
	struct clone_reader *rd = arg;
	int rc = NSR_OK, eof = 0;

	while (rc == NSR_OK && !eof) {
		size_t slot, got = 0;

		pthread_mutex_lock(&rd->mu);
		while (rd->n == CLONE_SLOTS && !rd->stop)
			pthread_cond_wait(&rd->cv, &rd->mu);
		slot = (rd->head + rd->n) % CLONE_SLOTS;
		eof = rd->stop;
		pthread_mutex_unlock(&rd->mu);
		if (eof)
			break;
		rc = nsr_mmd_read_next(rd->src, rd->buf[slot], CLONE_READ,
				       &got, &eof, &rd->err);
		pthread_mutex_lock(&rd->mu);
		if (rc == NSR_OK && got) {
			rd->len[slot] = got;
			rd->n++;
		}
		pthread_cond_broadcast(&rd->cv);
		pthread_mutex_unlock(&rd->mu);
	}
	pthread_mutex_lock(&rd->mu);
	rd->rc = rc;
	rd->done = 1;
	pthread_cond_broadcast(&rd->cv);
	pthread_mutex_unlock(&rd->mu);
	return NULL;
}

/* write_pieces - write what the reader fills until it is done; NSR_OK,
 * the destination's error (words in err) or nsrd's end of the session. */
static int write_pieces(struct clone_run *c, struct clone_reader *rd,
			struct nsr_buf *err)
{
	int rc = NSR_OK;

	for (;;) {
		size_t slot;

		pthread_mutex_lock(&rd->mu);
		while (rd->n == 0 && !rd->done)
			pthread_cond_wait(&rd->cv, &rd->mu);
		if (rd->n == 0) {
			pthread_mutex_unlock(&rd->mu);
			return NSR_OK;
		}
		slot = rd->head;
		pthread_mutex_unlock(&rd->mu);
		rc = nsr_mmd_ss_write(c->dst, rd->buf[slot], rd->len[slot]);
		if (rc != NSR_OK) {
			nsr_buf_addf(err, "writing to volume %s: %s",
				     c->volume, nsr_mmd_errmsg(c->dst));
			return rc;
		}
		c->bytes += rd->len[slot];
		pthread_mutex_lock(&rd->mu);
		rd->head = (rd->head + 1) % CLONE_SLOTS;
		rd->n--;
		pthread_cond_broadcast(&rd->cv);
		pthread_mutex_unlock(&rd->mu);
		test_stall();
		rc = renewed(c, err);
		if (rc != NSR_OK)
			return rc;
	}
}

/* copy_run - the fragments frags[i..j) (one volume) from its mover to the
 * destination, the reader thread reading ahead. */
static int copy_run(struct clone_run *c, uint32_t ssid, size_t i, size_t j,
		    struct nsr_buf *err)
{
	const rec_frag *w = &c->r.frags.frags_val[i];
	const char *host = w->mover_host[0] ? w->mover_host : c->o->server;
	struct nsr_vol_frag f[NSRD_FRAGS_MAX];
	struct clone_reader rd;
	pthread_t th;
	int rc, started = 0;

	memset(&rd, 0, sizeof(rd));
	pthread_mutex_init(&rd.mu, NULL);
	pthread_cond_init(&rd.cv, NULL);
	nsr_buf_init(&rd.err, 0);
	for (size_t k = i; k < j; k++)
		frag_of(&c->r.frags.frags_val[k], &f[k - i]);
	rc = nsr_mmd_connect(host, w->mover_port, &rd.src, err);
	if (rc == NSR_OK)
		rc = nsr_mmd_grant(rd.src, &c->r.read_grant);
	if (rc == NSR_OK)
		rc = nsr_mmd_read_open(rd.src, ssid, f, j - i, err);
	for (int k = 0; rc == NSR_OK && k < CLONE_SLOTS; k++) {
		rd.buf[k] = malloc(CLONE_READ);
		if (!rd.buf[k]) {
			nsr_buf_addstr(err, "out of memory");
			rc = NSR_ERR_NOMEM;
		}
	}
	if (rc == NSR_OK) {
		rc = pthread_create(&th, NULL, reader_main, &rd) == 0
			     ? NSR_OK
			     : NSR_ERR_NOMEM;
		started = rc == NSR_OK;
	}
	if (rc == NSR_OK)
		rc = write_pieces(c, &rd, err);
	if (started) {
		pthread_mutex_lock(&rd.mu);
		rd.stop = 1;
		pthread_cond_broadcast(&rd.cv);
		pthread_mutex_unlock(&rd.mu);
		pthread_join(th, NULL);
		if (rc == NSR_OK && rd.rc != NSR_OK) {
			rc = rd.rc;
			nsr_buf_addstr(err, rd.err.data);
		}
	}
	if (rc != NSR_OK && rc != NSR_ERR_STATE)
		nsr_buf_addf(err, " (reading save set %u from volume %s)", ssid,
			     w->volume);
	nsr_mmd_close(rd.src);
	for (int k = 0; k < CLONE_SLOTS; k++)
		free(rd.buf[k]);
	nsr_buf_release(&rd.err);
	pthread_cond_destroy(&rd.cv);
	pthread_mutex_destroy(&rd.mu);
	return rc;
}

/* by_seq - order of the wire fragments: save-set order. */
static int by_seq(const void *a, const void *b)
{
	const rec_frag *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* clone_span - the destination's span function (mmd_clnt.h): its volume
 * is full, nsrd names the next writable volume of the pool that holds
 * no copy of the save set, and the copy goes on there. */
static int clone_span(void *ctx, uint32_t ssid, const char *pool,
		      const uint8_t full_volid[16], struct nsr_mmd_next *nx,
		      struct nsr_buf *err)
{
	struct clone_run *c = ctx;
	char line[256];
	int rc;

	rc = nsr_session_next_volume(c->d, c->o->server, ssid, pool,
				     full_volid, nx, err);
	if (rc != NSR_OK)
		return rc;
	snprintf(line, sizeof(line), "save set %u: volume %s is full, the "
		 "copy goes on on volume %s", ssid, c->volume, nx->volume);
	notice(c->o, line);
	snprintf(c->volume, sizeof(c->volume), "%s", nx->volume);
	c->spans++;
	return NSR_OK;
}

/* copy_all - begin the destination session, copy every run, end it. */
static int copy_all(struct clone_run *c, uint32_t ssid, struct nsr_buf *err)
{
	const clone_start_res *r = &c->r;
	const char *host = r->mover_host[0] ? r->mover_host : c->o->server;
	struct nsr_vol_sshdr h;
	struct nsr_vol_sstail t;
	size_t n = r->frags.frags_len;
	int rc;

	memset(&h, 0, sizeof(h));
	h.ssid = ssid;
	memcpy(h.longid, r->longid, 16);
	snprintf(h.client, sizeof(h.client), "%s", r->ss_client);
	snprintf(h.name, sizeof(h.name), "%s", r->ss_name);
	snprintf(h.level, sizeof(h.level), "%s", r->level);
	snprintf(h.pool, sizeof(h.pool), "%s", c->o->pool);
	h.savetime = r->savetime;
	h.browse_time = r->browse_time;
	h.retention_time = r->retention_time;
	snprintf(c->volume, sizeof(c->volume), "%s", r->volume);
	rc = nsr_mmd_connect(host, r->mover_port, &c->dst, err);
	if (rc == NSR_OK) {
		nsr_mmd_set_span_fn(c->dst, clone_span, c);
		rc = nsr_mmd_grant(c->dst, &r->write_grant);
	}
	if (rc == NSR_OK)
		rc = nsr_mmd_clone_begin(c->dst, &h, (const uint8_t *)r->volid,
					 r->cloneid, err);
	qsort(r->frags.frags_val, n, sizeof(rec_frag), by_seq);
	for (size_t i = 0, j; rc == NSR_OK && i < n; i = j) {
		for (j = i + 1; j < n && memcmp(r->frags.frags_val[j].volid,
						r->frags.frags_val[i].volid,
						16) == 0;)
			j++;
		rc = copy_run(c, ssid, i, j, err);
	}
	if (rc == NSR_OK && c->bytes != r->totalsize) {
		nsr_buf_addf(err, "save set %u: %llu bytes read, but the "
			     "media database says it holds %llu", ssid,
			     (unsigned long long)c->bytes,
			     (unsigned long long)r->totalsize);
		rc = NSR_ERR_CORRUPT;
	}
	if (rc != NSR_OK)
		return rc;
	memset(&t, 0, sizeof(t));
	t.bytes = c->bytes;
	t.files = r->nfiles;
	rc = nsr_mmd_ss_end(c->dst, &t, NULL, err);
	if (rc != NSR_OK)
		nsr_buf_addf(err, " (ending the copy on volume %s)", c->volume);
	return rc;
}

/* clone_end - CLONE_END with the outcome rc; the reply's note goes to the
 * caller.  Returns rc, or nsrd's error if rc was NSR_OK. */
static int clone_end(struct clone_run *c, uint32_t ssid, int rc,
		     struct nsr_buf *err)
{
	clone_end_args a;
	clone_end_res r;
	int erc;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.ssid = ssid;
	a.cloneid = c->r.cloneid;
	a.jobid = c->r.jobid;
	a.status = rc;
	a.bytes = c->bytes;
	a.remove_cloneid = c->o->stage && rc == NSR_OK ? c->r.src_cloneid : 0;
	a.msg = (char *)(rc == NSR_OK ? "" : err->data);
	erc = nsr_nsrd_clone_end(c->d, &a, &r);
	if (rc == NSR_OK && erc != NSR_OK) {
		nsr_buf_addf(err, "%s", nsr_nsrd_errmsg(c->d));
		rc = erc;
	} else if (rc == NSR_OK && r.note && r.note[0]) {
		char line[NSR_MSG_MAX + 128];

		snprintf(line, sizeof(line), "save set %u: the copy read "
			 "(clone %u) removed from %s", ssid, c->r.src_cloneid,
			 r.note);
		notice(c->o, line);
	}
	xdr_free(NSR_XDR(xdr_clone_end_res), (char *)&r);
	return rc;
}

/* start - CLONE_START at nsrd, waiting while it answers "not yet" (a
 * mount request: the volume to read, or a writable volume of the pool),
 * told to the caller whenever the reason changes; nsrd ends a wait at
 * its mount timeout. */
static int start(struct clone_run *c, clone_start_args *a)
{
	char said[NSR_MSG_MAX + 16] = "", line[NSR_MSG_MAX + 16];
	unsigned retry_ms;
	int rc;

	for (;;) {
		rc = nsr_nsrd_clone_start(c->d, a, &c->r);
		if (rc != NSR_ERR_WAIT)
			return rc;
		if (c->r.ticket == 0)
			return NSR_ERR_PROTO;
		snprintf(line, sizeof(line), "waiting: %s",
			 nsr_nsrd_errmsg(c->d));
		if (strcmp(line, said) != 0) {
			notice(c->o, line);
			memcpy(said, line, sizeof(said));
		}
		a->ticket = c->r.ticket;
		retry_ms = c->r.retry_ms;
		xdr_free(NSR_XDR(xdr_clone_start_res), (char *)&c->r);
		memset(&c->r, 0, sizeof(c->r));
		session_pause(retry_ms);
	}
}

/* nsr_clone_ssid - see clone.h. */
int nsr_clone_ssid(struct nsr_nsrd *d, const struct nsr_clone_opts *o,
		   uint32_t ssid, uint32_t cloneid,
		   struct nsr_clone_result *res, struct nsr_buf *err)
{
	struct clone_run c;
	clone_start_args a;
	char cmd[64];
	int rc;

	memset(&c, 0, sizeof(c));
	memset(&a, 0, sizeof(a));
	c.d = d;
	c.o = o;
	snprintf(cmd, sizeof(cmd), "nsrclone -S %u", ssid);
	a.ssid = ssid;
	a.cloneid = cloneid;
	a.pool = (char *)o->pool;
	a.client = (char *)(o->client ? o->client : "");
	a.pid = getpid();
	a.command = (char *)(o->command ? o->command : cmd);
	rc = start(&c, &a);
	if (rc != NSR_OK) {
		nsr_buf_addf(err, "%s", nsr_nsrd_errmsg(d));
		xdr_free(NSR_XDR(xdr_clone_start_res), (char *)&c.r);
		return rc;
	}
	notice(o, c.r.src_msg);
	/* Renewed by job id from a thread of its own, so a copy that
	 * stalls keeps its session as a save does. */
	rc = session_lease_start(o->server, o->client ? o->client : "",
				 &c.lease, err);
	if (rc == NSR_OK)
		rc = session_lease_add(c.lease, c.r.jobid, 0);
	/* A lease that cannot be kept: nothing is copied, and the session
	 * ends aborted below. */
	if (rc == NSR_OK && c.r.frags.frags_len == 0) {
		nsr_buf_addf(err, "nsrd named no fragment to read");
		rc = NSR_ERR_PROTO;
	} else if (rc == NSR_OK) {
		rc = copy_all(&c, ssid, err);
	}
	/* A failed destination session is aborted by closing it. */
	nsr_mmd_close(c.dst);
	c.dst = NULL;
	session_lease_stop(c.lease);
	rc = clone_end(&c, ssid, rc, err);
	if (res) {
		memset(res, 0, sizeof(*res));
		res->cloneid = c.r.cloneid;
		res->src_cloneid = c.r.src_cloneid;
		res->bytes = c.bytes;
		res->spans = c.spans;
		snprintf(res->volume, sizeof(res->volume), "%s", c.r.volume);
		snprintf(res->last_volume, sizeof(res->last_volume), "%s",
			 c.volume[0] ? c.volume : c.r.volume);
	}
	xdr_free(NSR_XDR(xdr_clone_start_res), (char *)&c.r);
	return rc;
}

/* item_add - ssid (its copy cloneid, 0 = any) onto *v (rows come one
 * per copy and volume: nsr_clone_items_unique keeps one). */
static int item_add(struct nsr_clone_item **v, size_t *n, size_t *cap,
		    uint32_t ssid, uint32_t cloneid)
{
	struct nsr_clone_item *nv;

	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;

		nv = realloc(*v, nc * sizeof(**v));
		if (!nv)
			return NSR_ERR_NOMEM;
		*v = nv;
		*cap = nc;
	}
	(*v)[*n].ssid = ssid;
	(*v)[*n].cloneid = cloneid;
	(*n)++;
	return NSR_OK;
}

/* by_ssid - qsort order of items. */
static int by_ssid(const void *a, const void *b)
{
	const struct nsr_clone_item *x = a, *y = b;

	return x->ssid < y->ssid ? -1 : x->ssid > y->ssid;
}

/* An item and where it stood, for nsr_clone_items_unique. */
struct placed {
	struct nsr_clone_item it;
	size_t at;
};

/* by_ssid_at - qsort order: ssid, then place. */
static int by_ssid_at(const void *a, const void *b)
{
	const struct placed *x = a, *y = b;

	if (x->it.ssid != y->it.ssid)
		return x->it.ssid < y->it.ssid ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}

/* by_at - qsort order: place. */
static int by_at(const void *a, const void *b)
{
	const struct placed *x = a, *y = b;

	return x->at < y->at ? -1 : x->at > y->at;
}

/* nsr_clone_items_unique - see clone.h. */
int nsr_clone_items_unique(struct nsr_clone_item *v, size_t *n)
{
	struct placed *p;
	size_t m = 0;

	if (*n < 2)
		return NSR_OK;
	p = malloc(*n * sizeof(*p));
	if (!p)
		return NSR_ERR_NOMEM;
	for (size_t i = 0; i < *n; i++) {
		p[i].it = v[i];
		p[i].at = i;
	}
	qsort(p, *n, sizeof(*p), by_ssid_at);
	for (size_t i = 0; i < *n; i++)
		if (m == 0 || p[i].it.ssid != p[m - 1].it.ssid)
			p[m++] = p[i];
	qsort(p, m, sizeof(*p), by_at);
	for (size_t i = 0; i < m; i++)
		v[i] = p[i].it;
	*n = m;
	free(p);
	return NSR_OK;
}

/* nsr_clone_select - see clone.h. */
int nsr_clone_select(const char *server, const char *query, int pin,
		     struct nsr_clone_item **out, size_t *n,
		     struct nsr_buf *err)
{
	struct mmdb_ss_row rows[64];
	struct mmdb_clnt *mc = NULL;
	struct nsr_buf q;
	size_t cap = 0, got = 0;
	int done = 0, rc;

	*out = NULL;
	*n = 0;
	nsr_buf_init(&q, 0);
	nsr_buf_addf(&q, "%s%scomplete", query && *query ? query : "",
		     query && *query ? "," : "");
	rc = mmdb_clnt_open(server, &mc, err);
	if (rc == NSR_OK) {
		rc = mmdb_clnt_query_open(mc, q.data, 0, 0);
		if (rc != NSR_OK)
			nsr_buf_addf(err, "%s", mmdb_clnt_errmsg(mc));
	}
	while (rc == NSR_OK && !done) {
		rc = mmdb_clnt_query_next_rows(mc, rows, NSR_ARRAY_SIZE(rows),
					       &got, &done);
		if (rc != NSR_OK)
			nsr_buf_addf(err, "%s", mmdb_clnt_errmsg(mc));
		for (size_t i = 0; rc == NSR_OK && i < got; i++)
			rc = item_add(out, n, &cap, rows[i].ss.ssid,
				      pin ? rows[i].clone.cloneid : 0);
		if (got == 0)
			break;
	}
	mmdb_clnt_close(mc);
	nsr_buf_release(&q);
	if (rc == NSR_OK)
		rc = nsr_clone_items_unique(*out, n);
	if (rc != NSR_OK) {
		free(*out);
		*out = NULL;
		*n = 0;
		return rc;
	}
	if (*n)
		qsort(*out, *n, sizeof(**out), by_ssid);
	return NSR_OK;
}
