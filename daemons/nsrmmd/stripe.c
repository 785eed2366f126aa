/*
 * stripe.c - one save session over several connections (AFTD only).
 *
 * A single TCP connection carries at most its window per round trip (4 MiB
 * of send buffer by default: 210 MB/s at 20 ms), so a save over a long
 * link stripes its data calls over more connections: MMD_SS_STRIPE on the
 * session's own connection hands out a random token, and other
 * connections MMD_SS_JOIN the session with it.  Data calls come over any
 * of them, numbered (seq); they pass through the session's reorder buffer
 * (reorder.h) and are written in number order by whichever thread brings
 * the one whose turn it is, so the volume holds exactly the bytes one
 * connection would have written.  A call too far ahead of the next one
 * waits (its connection's TCP then pushes back on the client) and fails
 * the session only after STRIPE_WAIT_SEC.  MMD_SS_SYNC and MMD_SS_END stay
 * on the first connection: a sync waits until every call numbered below
 * its seq is written.
 *
 * Tapes and vtapes are not striped (MMD_SS_STRIPE answers
 * NSR_ERR_UNSUPPORTED; the client then uses one connection).  When an
 * AFTD fills, a striped session stops like any other (save.c): its data
 * calls are dropped from then on, whichever connection brings them, and
 * a sync waits for nothing more (stopped()); the client settles it with
 * MMD_SS_END, closes the joined connections and goes on elsewhere.
 *
 * Invariants:
 *  1. once a session has a stripe, every access to the session from any
 *     connection holds st->mu;
 *  2. st->s is the session until mmd_stripe_detach, NULL afterwards; a
 *     joined connection finding NULL or st->closed drops its data;
 *  3. the stripe is freed when the session and every joined connection
 *     let go of it (st->refs, under struct mmd.mu, like m->stripes);
 *  4. a joined connection that closes while the session is open and not
 *     ended fails the session, as the session's own connection would.
 */
#include "nsr/compat.h"

#include <sys/random.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/log.h"
#include "nsr/rpc_status.h"
#include "nsr/xmalloc.h"

#include "mmd.h"

/* Chunks held out of order at most, and their bytes. */
#define STRIPE_REORDER_CHUNKS 64
#define STRIPE_REORDER_BYTES  (32u << 20)
/* How long a data call waits for its turn or a sync for the calls before
 * it (a lost connection is found sooner, by TCP_USER_TIMEOUT). */
#define STRIPE_WAIT_SEC 120

/* stripe_unref - one user fewer; free after the last (invariant 3). */
static void stripe_unref(struct mmd *m, struct mmd_stripe *st)
{
	struct mmd_stripe **pp;
	int last;

	pthread_mutex_lock(&m->mu);
	last = --st->refs == 0;
	if (last)
		for (pp = &m->stripes; *pp; pp = &(*pp)->next)
			if (*pp == st) {
				*pp = st->next;
				break;
			}
	pthread_mutex_unlock(&m->mu);
	if (!last)
		return;
	mmd_reorder_release(&st->ro);
	pthread_cond_destroy(&st->cv);
	pthread_mutex_destroy(&st->mu);
	free(st);
}

static pthread_once_t g_wait_once = PTHREAD_ONCE_INIT;
static int g_wait_sec = STRIPE_WAIT_SEC;

/* wait_init - STRIPE_WAIT_SEC, or the test knob NSR_TEST_STRIPE_WAIT_SEC
 * (1 to STRIPE_WAIT_SEC) so a test sees a timeout in seconds. */
static void wait_init(void)
{
	const char *e = getenv("NSR_TEST_STRIPE_WAIT_SEC");
	long v = e && *e ? strtol(e, NULL, 10) : 0;

	if (v >= 1 && v <= STRIPE_WAIT_SEC)
		g_wait_sec = (int)v;
}

/* wait_sec - how long a call waits for its turn. */
static int wait_sec(void)
{
	pthread_once(&g_wait_once, wait_init);
	return g_wait_sec;
}

/* deadline - now + wait_sec() on the monotonic clock. */
static struct timespec deadline(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += wait_sec();
	return t;
}

/* wait_timed_out - wait on st->cv until the deadline; 1 if it passed. */
static int wait_timed_out(struct mmd_stripe *st, const struct timespec *dl)
{
	return pthread_cond_timedwait(&st->cv, &st->mu, dl) == ETIMEDOUT;
}

/* stopped - the session no longer takes data (gone, ended, failed or at
 * the end of its medium). */
static int stopped(const struct mmd_stripe *st)
{
	return !st->s || st->closed || st->s->err != NSR_OK || st->s->eom;
}

/* mmd_stripe_data - hold, write in order, or wait for room. */
void mmd_stripe_data(struct mmd *m, struct mmd_stripe *st, mmd_data_args *a)
{
	struct timespec dl = deadline();
	int timed_out = 0;
	void *p;
	size_t len;
	int rc;

	pthread_mutex_lock(&st->mu);
	for (;;) {
		if (stopped(st))
			goto drop;
		rc = mmd_reorder_check(&st->ro, a->seq, a->data.data_len);
		if (rc != NSR_ERR_LIMIT)
			break;
		if (timed_out) {
			mmd_save_fail(
				st->s, NSR_ERR_TIMEOUT,
				nsr_xasprintf(
					"save set %u: data call %llu "
					"waited %d s for call %llu on "
					"another connection of the "
					"session",
					st->ssid, (unsigned long long)a->seq,
					wait_sec(),
					(unsigned long long)mmd_reorder_next(
						&st->ro)));
			goto out;
		}
		timed_out = wait_timed_out(st, &dl);
	}
	/* The chunk's bytes change hands: the RPC layer frees NULL. */
	p = a->data.data_val;
	len = a->data.data_len;
	a->data.data_val = NULL;
	a->data.data_len = 0;
	if (rc == NSR_OK)
		rc = mmd_reorder_put(&st->ro, a->seq, p, len);
	if (rc != NSR_OK) {
		free(p);
		mmd_save_fail(
			st->s, rc,
			rc == NSR_ERR_NOMEM
				? nsr_xasprintf("save set %u: out of "
						"memory for the reorder "
						"buffer",
						st->ssid)
				: nsr_xasprintf(
					  "save set %u: data call %llu "
					  "came twice or after its "
					  "turn (next is %llu)",
					  st->ssid, (unsigned long long)a->seq,
					  (unsigned long long)mmd_reorder_next(
						  &st->ro)));
		goto out;
	}
	while (mmd_reorder_take(&st->ro, &p, &len)) {
		mmd_save_chunk(m, st->s, mmd_reorder_next(&st->ro) - 1, p, len);
		free(p);
	}
	goto out;
drop:
	if (st->s && st->s->eom)
		st->s->dropped += a->data.data_len;
	else if (st->closed && !st->late_warned) {
		st->late_warned = 1;
		nsr_warn("save set %u: data after the end of the session "
			 "dropped (logged once)",
			 st->ssid);
	}
out:
	pthread_cond_broadcast(&st->cv);
	pthread_mutex_unlock(&st->mu);
}

/* mmd_stripe_wait_locked - until the calls before seq are written. */
void mmd_stripe_wait_locked(struct mmd_stripe *st, uint64_t seq)
{
	struct timespec dl = deadline();
	int timed_out = 0;

	while (!stopped(st) && st->s->next_seq < seq) {
		if (timed_out) {
			mmd_save_fail(
				st->s, NSR_ERR_TIMEOUT,
				nsr_xasprintf(
					"save set %u: data call %llu "
					"did not arrive on any "
					"connection of the session "
					"within %d s",
					st->ssid,
					(unsigned long long)st->s->next_seq,
					wait_sec()));
			pthread_cond_broadcast(&st->cv);
			return;
		}
		timed_out = wait_timed_out(st, &dl);
	}
}

/* mmd_stripe_end_locked - no data after MMD_SS_END. */
void mmd_stripe_end_locked(struct mmd_stripe *st)
{
	unsigned held = mmd_reorder_held(&st->ro);

	st->closed = 1;
	if (held > 0 && st->s && st->s->err == NSR_OK && !st->s->eom)
		mmd_save_fail(st->s, NSR_ERR_PROTO,
			      nsr_xasprintf("save set %u: the session ended "
					    "with %u data calls still waiting "
					    "for call %llu",
					    st->ssid, held,
					    (unsigned long long)
						    mmd_reorder_next(&st->ro)));
	pthread_cond_broadcast(&st->cv);
}

/* mmd_stripe_detach - the session is going away (invariant 2). */
void mmd_stripe_detach(struct mmd *m, struct mmd_stripe *st)
{
	pthread_mutex_lock(&st->mu);
	st->s = NULL;
	st->closed = 1;
	pthread_cond_broadcast(&st->cv);
	pthread_mutex_unlock(&st->mu);
	stripe_unref(m, st);
}

/* mmd_stripe_leave - a joined connection closed (invariant 4). */
void mmd_stripe_leave(struct mmd *m, struct mmd_stripe *st)
{
	pthread_mutex_lock(&st->mu);
	if (!stopped(st))
		mmd_save_fail(st->s, NSR_ERR_RPC,
			      nsr_xasprintf("save set %u: a connection of the "
					    "striped session closed before "
					    "the session ended; the save set "
					    "is failed",
					    st->ssid));
	pthread_cond_broadcast(&st->cv);
	pthread_mutex_unlock(&st->mu);
	stripe_unref(m, st);
}

/* stripe_new - the stripe of session s, listed in m->stripes. */
static int stripe_new(struct mmd *m, struct mmd_save *s,
		      struct nsr_rpc_call *call, struct mmd_stripe **out)
{
	struct mmd_stripe *st = nsr_xcalloc(1, sizeof(*st));
	const char *host = nsr_rpc_call_peer_host(call);
	int rc;

	*out = NULL;
	if (getrandom(st->token, sizeof(st->token), 0) !=
	    (ssize_t)sizeof(st->token)) {
		free(st);
		return NSR_ERR_SYSTEM;
	}
	rc = mmd_reorder_init(&st->ro, STRIPE_REORDER_CHUNKS,
			      STRIPE_REORDER_BYTES);
	if (rc != NSR_OK) {
		free(st);
		return rc;
	}
	rc = nsr_rpc_cond_init(&st->cv);
	if (rc != NSR_OK) {
		mmd_reorder_release(&st->ro);
		free(st);
		return rc;
	}
	pthread_mutex_init(&st->mu, NULL);
	st->s = s;
	st->ssid = s->hdr.ssid;
	snprintf(st->peer_host, sizeof(st->peer_host), "%s", host ? host : "");
	st->refs = 1;
	pthread_mutex_lock(&m->mu);
	st->next = m->stripes;
	m->stripes = st;
	pthread_mutex_unlock(&m->mu);
	*out = st;
	return NSR_OK;
}

/* mmd_h_ss_stripe - MMD_SS_STRIPE: a token for more connections. */
int mmd_h_ss_stripe(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	struct mmd *m = ctx;
	mmd_stripe_res *r = res;
	struct mmd_conn *c = mmd_conn_get(call, m);
	struct mmd_save *s = c->save;
	struct mmd_stripe *st;
	int rc;

	NSR_UNUSED(args);
	if (!s) {
		mmd_status(&r->st, NSR_ERR_STATE,
			   "no save session is open on this connection");
		return NSR_OK;
	}
	if (m->dev_type != NSR_DEV_AFTD) {
		/* Not an error for the client: it stays on one. */
		nsr_status_set(&r->st, NSR_ERR_UNSUPPORTED,
			       "device %s is a "
			       "%s: its save sessions may span volumes and use "
			       "one connection",
			       m->dev_name, nsr_dev_type_name(m->dev_type));
		return NSR_OK;
	}
	if (s->stripe || s->next_seq > 0 || s->err != NSR_OK) {
		mmd_status(&r->st, NSR_ERR_STATE,
			   "save set %u: striping is "
			   "asked for once, before the first data",
			   s->hdr.ssid);
		return NSR_OK;
	}
	rc = stripe_new(m, s, call, &st);
	if (rc != NSR_OK) {
		mmd_status(&r->st, rc,
			   "save set %u: cannot stripe the "
			   "session: %s",
			   s->hdr.ssid, nsr_strerror(rc));
		return NSR_OK;
	}
	s->stripe = st;
	memcpy(r->token, st->token, sizeof(r->token));
	r->conns = MMD_STRIPES_MAX - 1;
	r->reorder = STRIPE_REORDER_BYTES;
	nsr_status_set(&r->st, NSR_OK, "%s", "");
	return NSR_OK;
}

/* token_eq - compare tokens in constant time. */
static int token_eq(const uint8_t *a, const char *b)
{
	unsigned d = 0;

	for (int i = 0; i < 16; i++)
		d |= a[i] ^ (uint8_t)b[i];
	return d == 0;
}

/* join_find - the stripe of save set ssid whose token is token (holds
 * m->mu); NULL if none. */
static struct mmd_stripe *join_find(struct mmd *m, uint32_t ssid,
				    const char *token)
{
	for (struct mmd_stripe *st = m->stripes; st; st = st->next)
		if (st->ssid == ssid && token_eq(st->token, token))
			return st;
	return NULL;
}

/* mmd_h_ss_join - MMD_SS_JOIN: this connection carries data of a
 * striped session. */
int mmd_h_ss_join(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	struct mmd *m = ctx;
	mmd_join_args *a = args;
	nsr_void_res *r = res;
	struct mmd_conn *c = mmd_conn_get(call, m);
	const char *host = nsr_rpc_call_peer_host(call);
	struct mmd_stripe *st;
	int rc = NSR_OK;
	unsigned n = 0;

	if (c->save || c->read || c->joined) {
		mmd_status(&r->st, NSR_ERR_BUSY,
			   "save set %u: this connection "
			   "already has a session; join from a new one",
			   a->ssid);
		return NSR_OK;
	}
	pthread_mutex_lock(&m->mu);
	st = join_find(m, a->ssid, a->token);
	if (!st)
		rc = NSR_ERR_PERM;
	else if (st->peer_host[0] && (!host || strcmp(host, st->peer_host)))
		rc = NSR_ERR_PERM;
	else if (st->conns >= MMD_STRIPES_MAX - 1)
		rc = NSR_ERR_LIMIT;
	if (rc == NSR_OK) {
		n = ++st->conns;
		st->refs++;
	}
	pthread_mutex_unlock(&m->mu);
	if (rc == NSR_ERR_LIMIT) {
		mmd_status(&r->st, rc,
			   "save set %u already has %d "
			   "connections, the most a session may have",
			   a->ssid, MMD_STRIPES_MAX);
		return NSR_OK;
	}
	if (rc != NSR_OK) {
		mmd_status(
			&r->st, rc,
			"refused a connection from %s: no "
			"striped save session of save set %u with that token "
			"from that host on this mover",
			nsr_rpc_call_peer(call), a->ssid);
		return NSR_OK;
	}
	c->joined = st;
	nsr_info("save set %u: connection %u joined from %s", a->ssid, n + 1,
		 nsr_rpc_call_peer(call));
	nsr_status_set(&r->st, NSR_OK, "%s", "");
	return NSR_OK;
}
