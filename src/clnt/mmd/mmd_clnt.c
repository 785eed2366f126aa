/*
 * mmd_clnt.c - client calls for nsrmmd, the data mover (label, save
 * sessions, recover sessions; nsrsnmd has its own library, snmd_clnt).
 * It owns the conversion between the media library's structs (struct
 * nsr_vol_*) and the XDR types, the chunking of save-set data into
 * pipelined one-way calls, the acknowledgement window and replay buffer
 * of a save session, spanning to the next volume, and the wording of
 * transport errors.  Library code: no logging, no exit.
 *
 * A save session's data: ss_write copies into chunk-sized segments; a
 * full segment goes out as one one-way MMD_SS_DATA and joins the replay
 * queue (head..tail, in save-set order).  Every sync_every bytes an
 * MMD_SS_SYNC is sent with nsr_rpc_call_send; at most sync_depth are
 * outstanding, and the oldest reply is read before one more is sent, so
 * data keeps flowing while acknowledgements travel.  A reply's placed
 * offset frees the segments before it.  A reply of NSR_ERR_EOM (the
 * volume filled) starts span(): settle the session at the full volume's
 * mover, ask the caller's span function for the next volume, begin the
 * next fragment at its mover and send the queue again from the resume
 * offset.
 *
 * The window adapts to the link: when it is full (the oldest reply must
 * be read before another sync may go) and TCP has sent every byte it was
 * given (nsr_rpc_unsent() == 0), the network could carry more than the
 * window lets out, so the depth grows by one instead of waiting, up to
 * depth_cap.  A slow mover or a full TCP window leaves bytes unsent and
 * the depth as it is.  The depth never shrinks within a connection: the
 * link it measured stays the same.
 *
 * Striping (nsr_mmd_set_stripes): a session whose mover is not on
 * loopback asks the mover (MMD_SS_STRIPE) for a token and opens more
 * connections that join the session (MMD_SS_JOIN) through the same
 * transport (TLS on each), all at once, one thread each, so that their
 * handshakes overlap on a long link.  Data call number n goes over
 * connection n % (joined + 1), each written out at once; syncs and the
 * end stay on the first connection, and one more sync goes out before
 * MMD_SS_END, so the final drain means every data call is written.  A
 * mover of a tape or vtape refuses, and the session stays on one
 * connection.  A striped session that spans settles at the full volume's
 * mover, closes the joined connections there and stripes again at the
 * next volume's mover.
 *
 * Invariants (save session):
 *  1. the replay queue holds every byte in [acked, sent), in order, and
 *     fill holds the bytes from sent on that are not sent yet;
 *  2. acked only grows, never past sent; bytes before acked are placed on
 *     a volume (or recorded on a full one) and are never sent again;
 *  3. sent - acked <= NSR_MMD_REPLAY_MAX(every, depth, chunk) after each
 *     reply is read; a mover that lags more is a protocol error;
 *  4. while syncs are outstanding no blocking call goes out on the
 *     connection (replies come in call order);
 *  5. a session ends well only when the mover's last fragment holds
 *     every byte sent since it began (frag_off..sent): a byte that did
 *     not reach the volume fails the save, it is never reported saved.
 */
#include "nsr/compat.h"

#include <pthread.h>
#include <stdarg.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/mmd_clnt.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsrmmd.h"

/* At most this many volumes follow the first in one save session. */
#define SPANS_MAX (MMD_FRAGS_MAX - 1)
/* Spare segments kept for reuse. */
#define SPARES_MAX 8

struct seg {
	struct seg *next;
	uint64_t off; /* save-set offset of data[0] */
	size_t len;
	char data[];  /* chunk_cap bytes */
};

struct mmd_sync {
	uint32_t xid;
	uint64_t off; /* sent when the sync went out */
};

struct nsr_mmd {
	struct nsr_rpc_clnt *c;
	char host[256];	  /* the mover, for more connections */
	int port;
	unsigned stripes; /* wanted: 0 automatic, 1 none */
	size_t chunk_cap; /* size of one data call */
	size_t sync_every;
	unsigned sync_depth;
	unsigned depth_cap; /* sync_depth grows up to this (== it: fixed) */
	nsr_mmd_span_fn span_fn;
	void *span_ctx;
	/* The save session. */
	int in_session;
	struct nsr_vol_sshdr hdr; /* for the next fragment's begin */
	uint32_t cloneid;	  /* a clone session's instance; 0 = save */
	uint64_t seq;		  /* next data call number at this mover */
	uint64_t sent;		  /* save-set offset after the last sent byte */
	uint64_t acked;		  /* placed: everything before is on a volume */
	uint64_t sync_at;	  /* sent when the last sync went out */
	struct seg *fill;	  /* not sent yet */
	struct seg *head, *tail;  /* the replay queue */
	struct seg *spare;
	unsigned nspare;
	struct mmd_sync sync[NSR_MMD_SYNC_DEPTH_MAX];
	unsigned nsync, sync_head;
	int eom; /* the mover said its volume is full: span */
	uint64_t resume;
	uint64_t frag_off; /* save-set offset where this fragment begins */
	uint32_t frag_seq;
	uint8_t full_volid[16];
	char eom_msg[512];
	unsigned spans;
	int err; /* sticky failure of the session */
	char errmsg[1024];
	/* Striping of the session (MMD_SS_STRIPE said yes). */
	int striped;
	struct nsr_rpc_clnt *xc[MMD_STRIPES_MAX - 1]; /* joined connections */
	unsigned nx;
	unsigned used; /* connections the last session used */
	uint64_t test_lose; /* NSR_TEST_STRIPE_LOSE_CALL: 1 + a data call
			     * number never sent when striped; 0 = none */
	/* nsrd's grants (nsr_mmd_grant), sent with begins and reads. */
	nsr_grant grants[MMD_SETS_MAX];
	unsigned ngrants;
};

/* why - append printf-formatted text to err (NULL is fine). */
static void why(struct nsr_buf *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void why(struct nsr_buf *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	nsr_buf_vaddf(err, fmt, ap);
	va_end(ap);
}

/* status_rc - turn a reply's nsr_status into a return code + message. */
static int status_rc(const nsr_status *st, struct nsr_buf *err)
{
	if (st->code == NSR_OK)
		return NSR_OK;
	why(err, "%s", st->msg && *st->msg ? st->msg : nsr_strerror(st->code));
	/* A peer must send a negative code; anything else is a failure too. */
	return st->code < 0 ? st->code : NSR_ERR_PROTO;
}

/* call - one blocking call on the mover connection with error wording. */
static int call(struct nsr_mmd *m, uint32_t proc, xdrproc_t xa, void *a,
		xdrproc_t xr, void *r, struct nsr_buf *err)
{
	int rc = nsr_rpc_call(m->c, proc, xa, a, xr, r);

	if (rc != NSR_OK)
		why(err, "%s", nsr_rpc_last_error(m->c));
	return rc;
}

/* window_from_env - test knob NSR_TEST_MMD_WINDOW="EVERY,DEPTH[,CHUNK]"
 * (a fixed window). */
static void window_from_env(struct nsr_mmd *m)
{
	const char *e = getenv("NSR_TEST_MMD_WINDOW");
	unsigned long long every = 0, chunk = 0;
	unsigned depth = 0;

	if (!e || sscanf(e, "%llu,%u,%llu", &every, &depth, &chunk) < 2)
		return;
	nsr_mmd_set_window(m, (size_t)every, depth, depth);
	if (chunk)
		nsr_mmd_set_chunk(m, (size_t)chunk);
}

/* lose_from_env - the test knob NSR_TEST_STRIPE_LOSE_CALL=N: a striped
 * session never sends its data call number N (as a connection that
 * stalls for good), so a test sees the mover's reorder timeouts. */
static void lose_from_env(struct nsr_mmd *m)
{
	const char *e = getenv("NSR_TEST_STRIPE_LOSE_CALL");

	if (e && *e)
		m->test_lose = strtoull(e, NULL, 10) + 1;
}

/* stripes_from_env - NSR_MMD_STRIPES=N: connections per save session
 * (1 = no striping), unless the program sets them. */
static void stripes_from_env(struct nsr_mmd *m)
{
	const char *e = getenv("NSR_MMD_STRIPES");

	if (e && *e)
		nsr_mmd_set_stripes(m, (unsigned)strtoul(e, NULL, 10));
}

/* nsr_mmd_connect - connect to one mover. */
int nsr_mmd_connect(const char *host, int port, struct nsr_mmd **out,
		    struct nsr_buf *err)
{
	struct nsr_mmd *m;
	int rc;

	*out = NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NSR_ERR_NOMEM;
	m->chunk_cap = NSR_MMD_CHUNK_DEFAULT;
	m->sync_every = NSR_MMD_SYNC_EVERY_DEFAULT;
	m->sync_depth = NSR_MMD_SYNC_DEPTH_DEFAULT;
	m->depth_cap = NSR_MMD_SYNC_DEPTH_AUTO;
	rc = nsr_rpc_connect(host, port, NSRMMD_PROG, NSRMMD_V1, 0, &m->c,
			     err);
	if (rc != NSR_OK) {
		free(m);
		return rc;
	}
	window_from_env(m);
	snprintf(m->host, sizeof(m->host), "%s", host);
	m->port = port;
	stripes_from_env(m);
	lose_from_env(m);
	*out = m;
	return NSR_OK;
}

/* segs_free - free a list of segments. */
static void segs_free(struct seg *g)
{
	while (g) {
		struct seg *n = g->next;

		free(g);
		g = n;
	}
}

/* stripes_close - close the session's joined connections. */
static void stripes_close(struct nsr_mmd *m)
{
	for (unsigned i = 0; i < m->nx; i++)
		nsr_rpc_close(m->xc[i]);
	m->nx = 0;
	m->striped = 0;
}

/* session_drop - free everything a save session holds. */
static void session_drop(struct nsr_mmd *m)
{
	stripes_close(m);
	segs_free(m->head);
	segs_free(m->fill);
	m->head = m->tail = m->fill = NULL;
	m->in_session = 0;
}

/* nsr_mmd_set_chunk - size of one data call. */
void nsr_mmd_set_chunk(struct nsr_mmd *m, size_t chunk)
{
	if (m->in_session)
		return; /* not while a session holds segments */
	m->chunk_cap = NSR_MAX(NSR_MIN(chunk, (size_t)MMD_CHUNK_MAX),
			       (size_t)32768);
	segs_free(m->spare);
	m->spare = NULL;
	m->nspare = 0;
}

/* nsr_mmd_set_window - acknowledgement window of save sessions. */
void nsr_mmd_set_window(struct nsr_mmd *m, size_t every, unsigned depth,
			unsigned cap)
{
	m->sync_every = NSR_MAX(NSR_MIN(every, (size_t)MMD_CHUNK_MAX * 8),
				(size_t)32768);
	m->sync_depth = NSR_MAX(NSR_MIN(depth, NSR_MMD_SYNC_DEPTH_MAX), 1u);
	m->depth_cap = NSR_MAX(NSR_MIN(cap, NSR_MMD_SYNC_DEPTH_MAX),
			       m->sync_depth);
}

/* nsr_mmd_window_depth - syncs the window holds now (it may have grown). */
unsigned nsr_mmd_window_depth(const struct nsr_mmd *m)
{
	return m->sync_depth;
}

/* nsr_mmd_set_stripes - connections per save session. */
void nsr_mmd_set_stripes(struct nsr_mmd *m, unsigned n)
{
	m->stripes = NSR_MIN(n, (unsigned)MMD_STRIPES_MAX);
}

/* nsr_mmd_stripes - connections the last save session used. */
unsigned nsr_mmd_stripes(const struct nsr_mmd *m)
{
	return m->used;
}

/* nsr_mmd_set_span_fn - who names the next volume at end of medium. */
void nsr_mmd_set_span_fn(struct nsr_mmd *m, nsr_mmd_span_fn fn, void *ctx)
{
	m->span_fn = fn;
	m->span_ctx = ctx;
}

/* nsr_mmd_peer - the mover's address. */
const char *nsr_mmd_peer(const struct nsr_mmd *m)
{
	return nsr_rpc_peer(m->c);
}

/* nsr_mmd_errmsg - words on the save session's failure. */
const char *nsr_mmd_errmsg(const struct nsr_mmd *m)
{
	return m->errmsg[0] ? m->errmsg : nsr_rpc_last_error(m->c);
}

/* nsr_mmd_spans - volumes the session went on to after its first. */
unsigned nsr_mmd_spans(const struct nsr_mmd *m)
{
	return m->spans;
}

/* nsr_mmd_close - close and free. */
void nsr_mmd_close(struct nsr_mmd *m)
{
	if (!m)
		return;
	nsr_rpc_close(m->c);
	session_drop(m);
	segs_free(m->spare);
	free(m);
}

/* label_from_xdr - the public label from the XDR one. */
static void label_from_xdr(struct nsr_vol_label *out, const mmd_label *l)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", l->volume);
	memcpy(out->volid, l->volid, sizeof(out->volid));
	snprintf(out->pool, sizeof(out->pool), "%s", l->pool);
	out->block_size = l->block_size;
	out->created = l->created;
	snprintf(out->media_type, sizeof(out->media_type), "%s",
		 l->media_type);
}

/* nsr_mmd_label - MMD_LABEL. */
int nsr_mmd_label(struct nsr_mmd *m, const char *volume, const char *pool,
		  uint32_t block_size, int force, struct nsr_vol_label *out,
		  struct nsr_buf *err)
{
	mmd_label_args a;
	mmd_label_res r;
	int rc;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.volume = (char *)volume;
	a.pool = (char *)(pool ? pool : "Default");
	a.block_size = block_size;
	a.force = force ? TRUE : FALSE;
	rc = call(m, MMD_LABEL, NSR_XDR(xdr_mmd_label_args), &a,
		  NSR_XDR(xdr_mmd_label_res), &r, err);
	if (rc != NSR_OK)
		return rc;
	rc = status_rc(&r.st, err);
	if (rc == NSR_OK && out)
		label_from_xdr(out, &r.label);
	xdr_free(NSR_XDR(xdr_mmd_label_res), (char *)&r);
	return rc;
}

/* nsr_mmd_ss_remove - MMD_SS_REMOVE. */
int nsr_mmd_ss_remove(struct nsr_mmd *m, const uint32_t *ssids,
		      const uint32_t *where, size_t n, uint32_t *files,
		      uint64_t *bytes, struct nsr_buf *err)
{
	mmd_remove_args a;
	mmd_remove_res r;
	int rc;

	if (files)
		*files = 0;
	if (bytes)
		*bytes = 0;
	if (n > MMD_REMOVE_MAX) {
		why(err, "at most %d save sets can be removed in one call",
		    MMD_REMOVE_MAX);
		return NSR_ERR_LIMIT;
	}
	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.ssids.ssids_len = (u_int)n;
	a.ssids.ssids_val = (u_int *)ssids;
	if (where) {
		a.where.where_len = (u_int)n;
		a.where.where_val = (u_int *)where;
	}
	rc = call(m, MMD_SS_REMOVE, NSR_XDR(xdr_mmd_remove_args), &a,
		  NSR_XDR(xdr_mmd_remove_res), &r, err);
	if (rc != NSR_OK)
		return rc;
	rc = status_rc(&r.st, err);
	if (rc == NSR_OK && files)
		*files = r.files;
	if (rc == NSR_OK && bytes)
		*bytes = r.bytes;
	xdr_free(NSR_XDR(xdr_mmd_remove_res), (char *)&r);
	return rc;
}

/* nsr_mmd_read_label - MMD_READ_LABEL. */
int nsr_mmd_read_label(struct nsr_mmd *m, struct nsr_vol_label *out,
		       int *has_data, struct nsr_buf *err)
{
	mmd_label_res r;
	int rc;

	memset(&r, 0, sizeof(r));
	memset(out, 0, sizeof(*out));
	if (has_data)
		*has_data = 0;
	rc = call(m, MMD_READ_LABEL, NSR_XDR(xdr_void), NULL,
		  NSR_XDR(xdr_mmd_label_res), &r, err);
	if (rc != NSR_OK)
		return rc;
	rc = status_rc(&r.st, err);
	if (rc == NSR_OK) {
		label_from_xdr(out, &r.label);
		if (has_data)
			*has_data = r.has_data ? 1 : 0;
	}
	xdr_free(NSR_XDR(xdr_mmd_label_res), (char *)&r);
	return rc;
}

/* nsr_mmd_grant - keep g (see mmd_clnt.h). */
int nsr_mmd_grant(struct nsr_mmd *m, const nsr_grant *g)
{
	unsigned i;

	for (i = 0; i < m->ngrants; i++)
		if (m->grants[i].kind == g->kind &&
		    m->grants[i].ssid == g->ssid)
			break;
	if (i == m->ngrants && m->ngrants == MMD_SETS_MAX)
		return NSR_ERR_LIMIT;
	m->grants[i] = *g;
	if (i == m->ngrants)
		m->ngrants++;
	return NSR_OK;
}

/* grant_of - the kept grant of kind for ssid, or NULL. */
static const nsr_grant *grant_of(const struct nsr_mmd *m, uint32_t kind,
				 uint32_t ssid)
{
	for (unsigned i = 0; i < m->ngrants; i++)
		if (m->grants[i].kind == kind && m->grants[i].ssid == ssid)
			return &m->grants[i];
	return NULL;
}

/* read_grants - the kept grants into a (pointing into m): the mover
 * takes the read grant of each save set it is asked for. */
static void read_grants(struct nsr_mmd *m, mmd_read_args *a)
{
	a->grants.grants_len = m->ngrants;
	a->grants.grants_val = m->ngrants ? m->grants : NULL;
}

/* begin_call - MMD_SS_BEGIN of a fragment of m->hdr on volid. */
static int begin_call(struct nsr_mmd *m, const uint8_t volid[16],
		      uint32_t frag_seq, uint64_t ss_offset,
		      struct nsr_buf *err)
{
	const struct nsr_vol_sshdr *hdr = &m->hdr;
	mmd_begin_args a;
	nsr_void_res r;
	int rc;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.ssid = hdr->ssid;
	memcpy(a.longid, hdr->longid, sizeof(a.longid));
	a.client = (char *)hdr->client;
	a.name = (char *)hdr->name;
	a.level = (char *)hdr->level;
	a.pool = (char *)hdr->pool;
	a.savetime = hdr->savetime;
	a.browse_time = hdr->browse_time;
	a.retention_time = hdr->retention_time;
	memcpy(a.volid, volid, sizeof(a.volid));
	a.frag_seq = frag_seq;
	a.ss_offset = ss_offset;
	if (grant_of(m, NSR_GRANT_WRITE, hdr->ssid))
		a.grant = *grant_of(m, NSR_GRANT_WRITE, hdr->ssid);
	if (m->cloneid) {
		mmd_clone_begin_args ca = {.b = a, .cloneid = m->cloneid};

		rc = call(m, MMD_CLONE_BEGIN,
			  NSR_XDR(xdr_mmd_clone_begin_args), &ca,
			  NSR_XDR(xdr_nsr_void_res), &r, err);
	} else {
		rc = call(m, MMD_SS_BEGIN, NSR_XDR(xdr_mmd_begin_args), &a,
			  NSR_XDR(xdr_nsr_void_res), &r, err);
	}
	if (rc != NSR_OK)
		return rc;
	rc = status_rc(&r.st, err);
	xdr_free(NSR_XDR(xdr_nsr_void_res), (char *)&r);
	return rc;
}

/* stripes_wanted - connections for this session: as set, else one for
 * a mover on loopback and NSR_MMD_STRIPES_AUTO for any other. */
static unsigned stripes_wanted(const struct nsr_mmd *m)
{
	if (m->stripes)
		return m->stripes;
	return nsr_rpc_peer_local(m->c) ? 1 : NSR_MMD_STRIPES_AUTO;
}

/* A connection joining a striped session, opened on a thread of its own
 * so that the handshakes of all of them (TCP, TLS, MMD_SS_JOIN: three
 * round trips or more each) overlap instead of adding up on a long link. */
struct joiner {
	const struct nsr_mmd *m;
	const mmd_stripe_res *sr;
	struct nsr_rpc_clnt *c; /* joined, or NULL */
	pthread_t tid;
	int started;
};

/* join - open one more connection and join it to the striped session;
 * NULL if it cannot (the session goes on with the others). */
static struct nsr_rpc_clnt *join(const struct nsr_mmd *m,
				 const mmd_stripe_res *sr)
{
	struct nsr_rpc_clnt *c = NULL;
	mmd_join_args a;
	nsr_void_res r;
	struct nsr_buf ignore;
	int rc;

	nsr_buf_init(&ignore, 0);
	rc = nsr_rpc_connect(m->host, m->port, NSRMMD_PROG, NSRMMD_V1, 0, &c,
			     &ignore);
	nsr_buf_release(&ignore);
	if (rc != NSR_OK)
		return NULL;
	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.ssid = m->hdr.ssid;
	memcpy(a.token, sr->token, sizeof(a.token));
	if (getenv("NSR_TEST_MMD_BAD_TOKEN"))
		a.token[0] ^= 1; /* tests: the mover must refuse the join */
	rc = nsr_rpc_call(c, MMD_SS_JOIN, NSR_XDR(xdr_mmd_join_args), &a,
			  NSR_XDR(xdr_nsr_void_res), &r);
	if (rc == NSR_OK && r.st.code != NSR_OK)
		rc = r.st.code;
	xdr_free(NSR_XDR(xdr_nsr_void_res), (char *)&r);
	if (rc != NSR_OK) {
		nsr_rpc_close(c);
		return NULL;
	}
	return c;
}

/* joiner_main - thread body: one join. */
static void *joiner_main(void *arg)
{
	struct joiner *j = arg;

	j->c = join(j->m, j->sr);
	return NULL;
}

/* join_all - want more connections into the session, joined at once;
 * a thread that cannot start joins on this one. */
static void join_all(struct nsr_mmd *m, const mmd_stripe_res *sr,
		     unsigned want)
{
	struct joiner j[MMD_STRIPES_MAX - 1];

	memset(j, 0, sizeof(j));
	for (unsigned i = 0; i < want; i++) {
		j[i].m = m;
		j[i].sr = sr;
		j[i].started = pthread_create(&j[i].tid, NULL, joiner_main,
					      &j[i]) == 0;
		if (!j[i].started)
			j[i].c = join(m, sr);
	}
	for (unsigned i = 0; i < want; i++) {
		if (j[i].started)
			pthread_join(j[i].tid, NULL);
		if (j[i].c)
			m->xc[m->nx++] = j[i].c;
	}
}

/* stripe_open - stripe the session just begun over more connections, if
 * wanted and the mover agrees.  Only a failure of the first connection
 * is an error: a refusal, or a connection that cannot be opened or
 * joined, leaves the session on the connections it has. */
static int stripe_open(struct nsr_mmd *m, struct nsr_buf *err)
{
	unsigned want = stripes_wanted(m);
	mmd_stripe_res r;
	int rc;

	m->used = 1;
	if (want <= 1)
		return NSR_OK;
	memset(&r, 0, sizeof(r));
	rc = call(m, MMD_SS_STRIPE, NSR_XDR(xdr_void), NULL,
		  NSR_XDR(xdr_mmd_stripe_res), &r, err);
	if (rc != NSR_OK)
		return rc;
	if (r.st.code == NSR_OK) {
		m->striped = 1;
		want = NSR_MIN(want - 1, r.conns);
		want = NSR_MIN(want, (unsigned)NSR_ARRAY_SIZE(m->xc));
		join_all(m, &r, want);
		m->used = m->nx + 1;
	}
	xdr_free(NSR_XDR(xdr_mmd_stripe_res), (char *)&r);
	return NSR_OK;
}

/* session_begin - the first fragment's begin of a save (cloneid 0) or
 * clone session. */
static int session_begin(struct nsr_mmd *m, const struct nsr_vol_sshdr *hdr,
			 const uint8_t volid[16],
			 const struct nsr_vol_span *sp, uint32_t cloneid,
			 struct nsr_buf *err)
{
	int rc;

	if (m->in_session) {
		why(err, "a save session is already open on this connection");
		return NSR_ERR_BUSY;
	}
	session_drop(m);
	m->hdr = *hdr;
	m->cloneid = cloneid;
	rc = begin_call(m, volid, sp ? sp->frag_seq : 0,
			sp ? sp->ss_offset : 0, err);
	if (rc != NSR_OK)
		return rc;
	m->in_session = 1;
	m->seq = 0;
	m->sent = m->acked = m->sync_at = sp ? sp->ss_offset : 0;
	m->frag_off = m->sent;
	m->nsync = m->sync_head = 0;
	m->eom = 0;
	m->spans = 0;
	m->err = NSR_OK;
	m->errmsg[0] = '\0';
	rc = stripe_open(m, err);
	if (rc != NSR_OK)
		session_drop(m);
	return rc;
}

/* nsr_mmd_ss_begin - MMD_SS_BEGIN of the session's first fragment. */
int nsr_mmd_ss_begin(struct nsr_mmd *m, const struct nsr_vol_sshdr *hdr,
		     const uint8_t volid[16], const struct nsr_vol_span *sp,
		     struct nsr_buf *err)
{
	return session_begin(m, hdr, volid, sp, 0, err);
}

/* nsr_mmd_clone_begin - MMD_CLONE_BEGIN: a copy under clone cloneid. */
int nsr_mmd_clone_begin(struct nsr_mmd *m, const struct nsr_vol_sshdr *hdr,
			const uint8_t volid[16], uint32_t cloneid,
			struct nsr_buf *err)
{
	if (cloneid == 0) {
		why(err, "a clone session needs a clone id");
		return NSR_ERR_INVAL;
	}
	return session_begin(m, hdr, volid, NULL, cloneid, err);
}

/* sfail - make rc the session's sticky failure, with words. */
static int sfail(struct nsr_mmd *m, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int sfail(struct nsr_mmd *m, int rc, const char *fmt, ...)
{
	va_list ap;

	if (m->err != NSR_OK)
		return m->err;
	va_start(ap, fmt);
	vsnprintf(m->errmsg, sizeof(m->errmsg), fmt, ap);
	va_end(ap);
	m->err = rc;
	return rc;
}

/* seg_new - a segment for data from save-set offset off. */
static struct seg *seg_new(struct nsr_mmd *m, uint64_t off)
{
	struct seg *g = m->spare;

	if (g) {
		m->spare = g->next;
		m->nspare--;
	} else {
		g = malloc(sizeof(*g) + m->chunk_cap);
		if (!g)
			return NULL;
	}
	g->next = NULL;
	g->off = off;
	g->len = 0;
	return g;
}

/* seg_put - give a segment back (kept for reuse, bounded). */
static void seg_put(struct nsr_mmd *m, struct seg *g)
{
	if (m->nspare >= SPARES_MAX) {
		free(g);
		return;
	}
	g->next = m->spare;
	m->spare = g;
	m->nspare++;
}

/* trim - free the queued segments wholly before offset off. */
static void trim(struct nsr_mmd *m, uint64_t off)
{
	while (m->head && m->head->off + m->head->len <= off) {
		struct seg *g = m->head;

		m->head = g->next;
		if (!m->head)
			m->tail = NULL;
		seg_put(m, g);
	}
}

/* replay_max - invariant 3's bound for this connection's settings. */
static uint64_t replay_max(const struct nsr_mmd *m)
{
	return NSR_MMD_REPLAY_MAX((uint64_t)m->sync_every, m->sync_depth,
				  (uint64_t)m->chunk_cap);
}

/* take_eom - remember where the save set resumes (first report wins). */
static void take_eom(struct nsr_mmd *m, const mmd_eom *e, const char *msg)
{
	if (m->eom)
		return;
	m->eom = 1;
	m->resume = e->resume;
	m->frag_seq = e->frag_seq;
	memcpy(m->full_volid, e->full_volid, sizeof(m->full_volid));
	snprintf(m->eom_msg, sizeof(m->eom_msg), "%s", msg ? msg : "");
}

/* recv_sync - read the oldest outstanding sync reply. */
static int recv_sync(struct nsr_mmd *m)
{
	struct mmd_sync *y = &m->sync[m->sync_head];
	mmd_sync_res r;
	int rc;

	memset(&r, 0, sizeof(r));
	rc = nsr_rpc_call_recv(m->c, y->xid, NSR_XDR(xdr_mmd_sync_res), &r);
	m->sync_head = (m->sync_head + 1) % NSR_MMD_SYNC_DEPTH_MAX;
	m->nsync--;
	if (rc != NSR_OK) {
		xdr_free(NSR_XDR(xdr_mmd_sync_res), (char *)&r);
		return sfail(m, rc, "%s", nsr_rpc_last_error(m->c));
	}
	if (r.st.code == NSR_ERR_EOM && r.eom.spans) {
		take_eom(m, &r.eom, r.st.msg);
	} else if (r.st.code != NSR_OK) {
		rc = sfail(m, r.st.code < 0 ? r.st.code : NSR_ERR_PROTO, "%s",
			   r.st.msg && *r.st.msg ? r.st.msg
						 : nsr_strerror(r.st.code));
	} else if (!m->eom && r.placed > (m->striped ? m->sent : y->off)) {
		rc = sfail(m, NSR_ERR_PROTO, "mover %s says %llu bytes of save "
			   "set %u are placed, only %llu were sent",
			   nsr_rpc_peer(m->c), (unsigned long long)r.placed,
			   m->hdr.ssid, (unsigned long long)y->off);
	} else if (!m->eom) {
		if (r.placed > m->acked)
			m->acked = r.placed;
		trim(m, m->acked);
		if (m->sent - m->acked > replay_max(m))
			rc = sfail(m, NSR_ERR_PROTO, "mover %s has placed save "
				   "set %u only up to %llu of %llu bytes sent",
				   nsr_rpc_peer(m->c), m->hdr.ssid,
				   (unsigned long long)m->acked,
				   (unsigned long long)m->sent);
	}
	xdr_free(NSR_XDR(xdr_mmd_sync_res), (char *)&r);
	return rc;
}

/* drain - read every outstanding sync reply. */
static int drain(struct nsr_mmd *m)
{
	int rc = NSR_OK;

	while (m->nsync > 0 && rc == NSR_OK)
		rc = recv_sync(m);
	return rc;
}

/* unsent - bytes not yet sent by TCP on every connection of the session
 * (-1: unknown). */
static long unsent(const struct nsr_mmd *m)
{
	long u = nsr_rpc_unsent(m->c);

	for (unsigned i = 0; i < m->nx && u >= 0; i++) {
		long v = nsr_rpc_unsent(m->xc[i]);

		u = v < 0 ? -1 : u + v;
	}
	return u;
}

/* window_grows - the window is full: grow it by one sync if the link is
 * idle (TCP sent everything) and the cap allows. */
static int window_grows(struct nsr_mmd *m)
{
	if (m->sync_depth >= m->depth_cap || unsent(m) != 0)
		return 0;
	m->sync_depth++;
	return 1;
}

/* send_sync - one more MMD_SS_SYNC, the oldest reply read first if the
 * window is full and does not grow.  After an end of medium, none is
 * sent. */
static int send_sync(struct nsr_mmd *m)
{
	mmd_sync_args a;
	unsigned i;
	int rc;

	if (m->nsync >= m->sync_depth && !window_grows(m)) {
		rc = recv_sync(m);
		if (rc != NSR_OK || m->eom)
			return rc;
	}
	a.seq = m->seq;
	i = (m->sync_head + m->nsync) % NSR_MMD_SYNC_DEPTH_MAX;
	rc = nsr_rpc_call_send(m->c, MMD_SS_SYNC, NSR_XDR(xdr_mmd_sync_args),
			       &a, &m->sync[i].xid);
	if (rc != NSR_OK)
		return sfail(m, rc, "%s", nsr_rpc_last_error(m->c));
	m->sync[i].off = m->sent;
	m->nsync++;
	m->sync_at = m->sent;
	return NSR_OK;
}

/* send_data - one one-way MMD_SS_DATA of len bytes at offset sent, and a
 * sync when sync_every bytes went out since the last. */
static int send_data(struct nsr_mmd *m, const void *p, size_t len)
{
	struct nsr_rpc_clnt *c = m->c;
	mmd_data_args a;
	int rc;

	a.seq = m->seq;
	a.data.data_len = (u_int)len;
	a.data.data_val = (char *)p;
	if (m->striped) {
		unsigned k = (unsigned)(m->seq % (m->nx + 1));

		c = k ? m->xc[k - 1] : m->c;
		/* Out at once: the mover may need it before this
		 * connection's next call, which comes nx calls later. */
		rc = m->test_lose == m->seq + 1
			     ? NSR_OK
			     : nsr_rpc_send_now(c, MMD_SS_DATA,
						NSR_XDR(xdr_mmd_data_args),
						&a);
	} else {
		rc = nsr_rpc_send(c, MMD_SS_DATA, NSR_XDR(xdr_mmd_data_args),
				  &a);
	}
	if (rc != NSR_OK)
		return sfail(m, rc, "%s", nsr_rpc_last_error(c));
	m->seq++;
	m->sent += len;
	if (m->sent - m->sync_at >= m->sync_every)
		return send_sync(m);
	return NSR_OK;
}

/* settle_old - MMD_SS_END at the mover of the full volume: record the
 * part on it (or not: aborted). */
static int settle_old(struct nsr_mmd *m, int aborted, struct nsr_buf *err)
{
	mmd_end_args a;
	mmd_end_res r;
	int rc;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.status = aborted ? NSR_VOL_SS_ABORTED : NSR_VOL_SS_OK;
	rc = call(m, MMD_SS_END, NSR_XDR(xdr_mmd_end_args), &a,
		  NSR_XDR(xdr_mmd_end_res), &r, err);
	if (rc != NSR_OK)
		return rc;
	if (r.st.code == NSR_ERR_EOM && r.eom.spans) {
		if (r.eom.resume != m->resume) {
			why(err, "mover %s moved the resume offset of save set "
			    "%u from %llu to %llu", nsr_rpc_peer(m->c),
			    m->hdr.ssid, (unsigned long long)m->resume,
			    (unsigned long long)r.eom.resume);
			rc = NSR_ERR_PROTO;
		}
	} else {
		rc = status_rc(&r.st, err);
		if (rc == NSR_OK) {
			why(err, "mover %s did not settle save set %u",
			    nsr_rpc_peer(m->c), m->hdr.ssid);
			rc = NSR_ERR_PROTO;
		}
	}
	xdr_free(NSR_XDR(xdr_mmd_end_res), (char *)&r);
	return rc;
}

/* move_on - the next volume's mover: connect, begin the next fragment
 * at the resume offset, stripe it as the first was (if the mover is
 * remote and agrees). */
static int move_on(struct nsr_mmd *m, const struct nsr_mmd_next *nx,
		   struct nsr_buf *err)
{
	struct nsr_rpc_clnt *c = NULL;
	int rc;

	rc = nsr_rpc_connect(nx->host, nx->port, NSRMMD_PROG, NSRMMD_V1, 0,
			     &c, err);
	if (rc != NSR_OK)
		return rc;
	nsr_rpc_close(m->c);
	m->c = c;
	snprintf(m->host, sizeof(m->host), "%s", nx->host);
	m->port = nx->port;
	rc = begin_call(m, nx->volid, m->frag_seq, m->resume, err);
	if (rc == NSR_OK)
		rc = stripe_open(m, err);
	return rc;
}

/* replay - send the queue again from the resume offset (invariant 1). */
static int replay(struct nsr_mmd *m)
{
	struct seg *g, *next;
	int rc = NSR_OK;

	m->seq = 0;
	m->acked = m->sent = m->sync_at = m->frag_off = m->resume;
	trim(m, m->resume);
	for (g = m->head; g && rc == NSR_OK && !m->eom; g = next) {
		size_t skip = g->off < m->resume ? m->resume - g->off : 0;

		next = g->next; /* g may be freed by an acknowledgement */
		rc = send_data(m, g->data + skip, g->len - skip);
	}
	return rc;
}

/* test_span_hold - the test knob NSR_TEST_SPAN_HOLD_MS (<= 60000): once
 * the next volume is known, wait that long before the full volume's
 * session is settled, as a slow client or network would (473). */
static void test_span_hold(void)
{
	nsr_test_pause("NSR_TEST_SPAN_HOLD_MS", 60000);
}

/* span - the mover's volume is full: settle there, get the next volume
 * from the span function, go on at its mover from the resume offset. */
static int span(struct nsr_mmd *m)
{
	struct nsr_mmd_next nx;
	struct nsr_buf e;
	int rc;

	nsr_buf_init(&e, 0);
	rc = drain(m);
	if (rc != NSR_OK)
		goto out;
	if (m->resume < m->acked || m->resume > m->sent) {
		rc = sfail(m, NSR_ERR_PROTO, "mover %s: save set %u resumes at "
			   "%llu, outside the %llu..%llu bytes not yet placed",
			   nsr_rpc_peer(m->c), m->hdr.ssid,
			   (unsigned long long)m->resume,
			   (unsigned long long)m->acked,
			   (unsigned long long)m->sent);
		goto out;
	}
	memset(&nx, 0, sizeof(nx));
	if (m->spans >= SPANS_MAX)
		nsr_buf_addf(&e, "it already spans %u volumes", m->spans + 1);
	else if (!m->span_fn)
		nsr_buf_addstr(&e, "this client has no way to ask for "
			       "another volume");
	rc = e.len ? NSR_ERR_EOM
		   : m->span_fn(m->span_ctx, m->hdr.ssid, m->hdr.pool,
				m->full_volid, &nx, &e);
	if (rc != NSR_OK) {
		struct nsr_buf ignore;

		nsr_buf_init(&ignore, 0);
		settle_old(m, 1, &ignore);
		nsr_buf_release(&ignore);
		rc = sfail(m, rc, "%s, and it cannot continue on another "
			   "volume: %s", m->eom_msg,
			   e.len ? e.data : nsr_strerror(rc));
		goto out;
	}
	test_span_hold();
	rc = settle_old(m, 0, &e);
	if (rc == NSR_OK) {
		/* Settled: the mover drops what the other connections of a
		 * striped session still bring, and they may close. */
		stripes_close(m);
		rc = move_on(m, &nx, &e);
	}
	if (rc != NSR_OK) {
		rc = sfail(m, rc, "save set %u cannot continue on volume %s "
			   "(mover %s:%d): %s", m->hdr.ssid, nx.volume, nx.host,
			   nx.port, e.len ? e.data : nsr_strerror(rc));
		goto out;
	}
	m->eom = 0;
	m->spans++;
	rc = replay(m);
out:
	nsr_buf_release(&e);
	return rc;
}

/* go_on - span as often as the movers report a full volume. */
static int go_on(struct nsr_mmd *m)
{
	int rc = m->err;

	for (unsigned i = 0; rc == NSR_OK && m->eom && i <= SPANS_MAX; i++)
		rc = span(m);
	if (rc == NSR_OK && m->eom)
		rc = sfail(m, NSR_ERR_LIMIT, "save set %u: too many volumes",
			   m->hdr.ssid);
	return rc;
}

/* flush_fill - send the filled segment and queue it for a replay. */
static int flush_fill(struct nsr_mmd *m)
{
	struct seg *g = m->fill;
	int rc;

	if (!g || g->len == 0)
		return NSR_OK;
	rc = go_on(m);
	if (rc != NSR_OK)
		return rc;
	m->fill = NULL;
	if (m->tail)
		m->tail->next = g;
	else
		m->head = g;
	m->tail = g;
	rc = send_data(m, g->data, g->len);
	if (rc == NSR_OK)
		rc = go_on(m);
	return rc;
}

/* nsr_mmd_ss_write - collect data into segments and send full ones. */
int nsr_mmd_ss_write(struct nsr_mmd *m, const void *p, size_t len)
{
	const char *q = p;
	int rc;

	if (!m->in_session)
		return NSR_ERR_STATE;
	if (m->err != NSR_OK)
		return m->err;
	while (len > 0) {
		size_t n;

		if (!m->fill) {
			m->fill = seg_new(m, m->sent);
			if (!m->fill)
				return sfail(m, NSR_ERR_NOMEM, "out of memory "
					     "for the replay buffer");
		}
		n = NSR_MIN(len, m->chunk_cap - m->fill->len);
		memcpy(m->fill->data + m->fill->len, q, n);
		m->fill->len += n;
		q += n;
		len -= n;
		if (m->fill->len == m->chunk_cap) {
			rc = flush_fill(m);
			if (rc != NSR_OK)
				return rc;
		}
	}
	return NSR_OK;
}

/* nsr_mmd_frag_from_wire - the public fragment from the XDR one. */
void nsr_mmd_frag_from_wire(struct nsr_vol_frag *out, const mmd_frag *f)
{
	memset(out, 0, sizeof(*out));
	memcpy(out->volid, f->volid, sizeof(out->volid));
	out->ssid = f->ssid;
	out->frag_seq = f->seq;
	out->ss_offset = f->ss_offset;
	out->file = f->file;
	out->record = f->record;
	out->offset = f->offset;
	out->size = f->size;
	out->complete = f->complete ? 1 : 0;
}

/* nsr_mmd_frag_to_wire - the XDR fragment from the public one. */
void nsr_mmd_frag_to_wire(mmd_frag *out, const struct nsr_vol_frag *f)
{
	memset(out, 0, sizeof(*out));
	memcpy(out->volid, f->volid, sizeof(out->volid));
	out->ssid = f->ssid;
	out->seq = f->frag_seq;
	out->ss_offset = f->ss_offset;
	out->file = f->file;
	out->record = f->record;
	out->offset = f->offset;
	out->size = f->size;
	out->complete = f->complete ? TRUE : FALSE;
}

/* end_call - MMD_SS_END with the totals; *eom set if the volume filled
 * (the reply's NSR_ERR_EOM is taken then, not returned). */
static int end_call(struct nsr_mmd *m, const struct nsr_vol_sstail *tail,
		    struct nsr_vol_frag *frag, struct nsr_buf *err)
{
	mmd_end_args a;
	mmd_end_res r;
	int rc;

	memset(&r, 0, sizeof(r));
	a.bytes = tail->bytes;
	a.files = tail->files;
	a.status = tail->status;
	rc = call(m, MMD_SS_END, NSR_XDR(xdr_mmd_end_args), &a,
		  NSR_XDR(xdr_mmd_end_res), &r, err);
	if (rc != NSR_OK)
		return rc;
	if (r.st.code == NSR_ERR_EOM && r.eom.spans)
		take_eom(m, &r.eom, r.st.msg);
	else
		rc = status_rc(&r.st, err);
	if (rc == NSR_OK && !m->eom && frag)
		nsr_mmd_frag_from_wire(frag, &r.frag);
	xdr_free(NSR_XDR(xdr_mmd_end_res), (char *)&r);
	return rc;
}

/* nsr_mmd_ss_end - send the rest, MMD_SS_END; span and repeat while the
 * movers report a full volume. */
int nsr_mmd_ss_end(struct nsr_mmd *m, const struct nsr_vol_sstail *tail,
		   struct nsr_vol_frag *frag, struct nsr_buf *err)
{
	struct nsr_vol_frag fr;
	int rc;

	memset(&fr, 0, sizeof(fr));
	if (frag)
		memset(frag, 0, sizeof(*frag));
	if (!m->in_session) {
		why(err, "no save session is open on this connection");
		return NSR_ERR_STATE;
	}
	rc = m->err != NSR_OK ? m->err : flush_fill(m);
	for (unsigned i = 0; rc == NSR_OK && i <= SPANS_MAX + 1; i++) {
		/* Striped, the calls on the other connections are written
		 * when a sync after them is answered: one more, after a
		 * span's replay too, so the drain below covers them all. */
		if (!m->eom && m->striped && m->sent > m->sync_at)
			rc = send_sync(m);
		/* Invariant 4: no END while syncs are outstanding. */
		if (rc == NSR_OK)
			rc = drain(m);
		if (rc == NSR_OK && m->eom) {
			rc = go_on(m);
			continue;
		}
		if (rc == NSR_OK)
			rc = end_call(m, tail, &fr, err);
		if (rc != NSR_OK || !m->eom)
			break;
		rc = go_on(m);
	}
	if (rc == NSR_OK && !m->eom && fr.size != m->sent - m->frag_off)
		rc = sfail(m, NSR_ERR_PROTO, "mover %s placed %llu bytes of "
			   "save set %u from byte %llu on, where %llu were "
			   "sent: the save set is not complete",
			   nsr_rpc_peer(m->c), (unsigned long long)fr.size,
			   m->hdr.ssid, (unsigned long long)m->frag_off,
			   (unsigned long long)(m->sent - m->frag_off));
	if (rc == NSR_OK && !m->eom && frag)
		*frag = fr;
	if (rc == NSR_OK && m->eom)
		rc = sfail(m, NSR_ERR_LIMIT, "save set %u: too many volumes",
			   m->hdr.ssid);
	if (rc != NSR_OK && m->err != NSR_OK)
		why(err, "%s", m->errmsg);
	session_drop(m);
	return rc;
}

/* read_open - a READ_OPEN-style call with args a, whose fragment list
 * (*len, *val) is filled from frags[0..n) for the call. */
static int read_open(struct nsr_mmd *m, uint32_t proc, xdrproc_t xa, void *a,
		     u_int *len, mmd_frag **val,
		     const struct nsr_vol_frag *frags, size_t n,
		     struct nsr_buf *err)
{
	nsr_void_res r;
	int rc;

	memset(&r, 0, sizeof(r));
	*len = (u_int)n;
	*val = calloc(n, sizeof(mmd_frag));
	if (!*val)
		return NSR_ERR_NOMEM;
	for (size_t i = 0; i < n; i++)
		nsr_mmd_frag_to_wire(&(*val)[i], &frags[i]);
	rc = call(m, proc, xa, a, NSR_XDR(xdr_nsr_void_res), &r, err);
	free(*val);
	*val = NULL;
	if (rc != NSR_OK)
		return rc;
	rc = status_rc(&r.st, err);
	xdr_free(NSR_XDR(xdr_nsr_void_res), (char *)&r);
	return rc;
}

/* nsr_mmd_read_open - MMD_READ_OPEN. */
int nsr_mmd_read_open(struct nsr_mmd *m, uint32_t ssid,
		      const struct nsr_vol_frag *frags, size_t n,
		      struct nsr_buf *err)
{
	mmd_read_args a;

	if (n == 0 || n > MMD_FRAGS_MAX) {
		why(err, "save set %u: %zu fragments (1..%d allowed)", ssid, n,
		    MMD_FRAGS_MAX);
		return NSR_ERR_INVAL;
	}
	memset(&a, 0, sizeof(a));
	a.ssid = ssid;
	read_grants(m, &a);
	return read_open(m, MMD_READ_OPEN, NSR_XDR(xdr_mmd_read_args), &a,
			 &a.frags.frags_len, &a.frags.frags_val, frags, n,
			 err);
}

/* nsr_mmd_read_next - MMD_READ_NEXT into the caller's buffer. */
int nsr_mmd_read_next(struct nsr_mmd *m, void *p, size_t cap, size_t *got,
		      int *eof, struct nsr_buf *err)
{
	mmd_next_args a;
	mmd_next_res r;
	int rc;

	*got = 0;
	*eof = 0;
	memset(&r, 0, sizeof(r));
	a.max = (u_int)NSR_MIN(cap, (size_t)MMD_CHUNK_MAX);
	rc = call(m, MMD_READ_NEXT, NSR_XDR(xdr_mmd_next_args), &a,
		  NSR_XDR(xdr_mmd_next_res), &r, err);
	if (rc != NSR_OK)
		return rc;
	rc = status_rc(&r.st, err);
	if (rc == NSR_OK && r.data.data_len > a.max) {
		why(err, "mover %s sent %u bytes, %u were asked for",
		    nsr_rpc_peer(m->c), r.data.data_len, a.max);
		rc = NSR_ERR_PROTO;
	}
	if (rc == NSR_OK) {
		if (r.data.data_len > 0)
			memcpy(p, r.data.data_val, r.data.data_len);
		*got = r.data.data_len;
		*eof = r.eof ? 1 : 0;
	}
	xdr_free(NSR_XDR(xdr_mmd_next_res), (char *)&r);
	return rc;
}

/* nsr_mmd_read_sets_open - MMD_READ_OPEN with ssid 0. */
int nsr_mmd_read_sets_open(struct nsr_mmd *m, const struct nsr_vol_frag *frags,
			   size_t n, struct nsr_buf *err)
{
	mmd_read_args a;

	if (n == 0 || n > MMD_FRAGS_MAX) {
		why(err, "%zu fragments in one pass (1..%d allowed)", n,
		    MMD_FRAGS_MAX);
		return NSR_ERR_INVAL;
	}
	memset(&a, 0, sizeof(a));
	read_grants(m, &a);
	return read_open(m, MMD_READ_OPEN, NSR_XDR(xdr_mmd_read_args), &a,
			 &a.frags.frags_len, &a.frags.frags_val, frags, n,
			 err);
}

/* nsr_mmd_counters - MMD_COUNTERS: the mover's sessions (*out
 * malloc'ed, *n entries; NULL when none). */
int nsr_mmd_counters(struct nsr_mmd *m, struct nsr_mmd_counter **out,
		     size_t *n, struct nsr_buf *err)
{
	mmd_counters_res r;
	int rc;

	*out = NULL;
	*n = 0;
	memset(&r, 0, sizeof(r));
	rc = call(m, MMD_COUNTERS, NSR_XDR(xdr_void), NULL,
		  NSR_XDR(xdr_mmd_counters_res), &r, err);
	if (rc != NSR_OK)
		return rc;
	rc = status_rc(&r.st, err);
	if (rc == NSR_OK && r.sessions.sessions_len > 0) {
		*out = calloc(r.sessions.sessions_len, sizeof(**out));
		if (!*out)
			rc = NSR_ERR_NOMEM;
	}
	for (u_int i = 0; rc == NSR_OK && i < r.sessions.sessions_len; i++) {
		const mmd_counter *c = &r.sessions.sessions_val[i];

		(*out)[i].ssid = c->ssid;
		(*out)[i].recover = c->recover ? 1 : 0;
		(*out)[i].bytes = c->bytes;
		(*out)[i].usec = c->usec;
		*n = i + 1;
	}
	xdr_free(NSR_XDR(xdr_mmd_counters_res), (char *)&r);
	return rc;
}

/* nsr_mmd_read_sets_next - MMD_READ_SETS_NEXT: each piece to fn. */
int nsr_mmd_read_sets_next(struct nsr_mmd *m, size_t cap,
			   nsr_mmd_piece_fn fn, void *arg, int *eof,
			   struct nsr_buf *err)
{
	mmd_next_args a;
	mmd_sets_next_res r;
	size_t total = 0;
	int rc;

	*eof = 0;
	memset(&r, 0, sizeof(r));
	a.max = (u_int)NSR_MIN(cap, (size_t)MMD_CHUNK_MAX);
	rc = call(m, MMD_READ_SETS_NEXT, NSR_XDR(xdr_mmd_next_args), &a,
		  NSR_XDR(xdr_mmd_sets_next_res), &r, err);
	if (rc != NSR_OK)
		return rc;
	rc = status_rc(&r.st, err);
	for (u_int i = 0; rc == NSR_OK && i < r.pieces.pieces_len; i++)
		total += r.pieces.pieces_val[i].data.data_len;
	if (rc == NSR_OK && total > a.max) {
		why(err, "mover %s sent %zu bytes, %u were asked for",
		    nsr_rpc_peer(m->c), total, a.max);
		rc = NSR_ERR_PROTO;
	}
	for (u_int i = 0; rc == NSR_OK && i < r.pieces.pieces_len; i++) {
		const mmd_sets_piece *w = &r.pieces.pieces_val[i];
		struct nsr_mmd_sets_piece pc;

		pc.ssid = w->ssid;
		pc.data = w->data.data_val;
		pc.len = w->data.data_len;
		pc.ss_end = w->ss_end ? 1 : 0;
		pc.ss_code = w->ss_end ? w->ss_code : NSR_OK;
		pc.ss_msg = w->ss_msg && w->ss_msg[0]
				    ? w->ss_msg
				    : nsr_strerror(pc.ss_code);
		rc = fn(arg, &pc);
	}
	if (rc == NSR_OK)
		*eof = r.eof ? 1 : 0;
	xdr_free(NSR_XDR(xdr_mmd_sets_next_res), (char *)&r);
	return rc;
}
