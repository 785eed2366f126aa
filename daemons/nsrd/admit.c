/*
 * admit.c - admission: server, group and client parallelism, and the
 * ticket queue of sessions that wait to start.
 *
 * SAVE_START answers NSR_ERR_WAIT with a ticket when a session cannot
 * start yet: a parallelism limit is reached (it is queued, and never
 * times out for that alone), or no writable volume of its pool is mounted
 * (a mount request, which times out after the server's "save mount
 * timeout"), or every device of its pool is at max sessions (queued for a
 * device); a recover waits the same way for a volume of its save set.
 * The client asks again with its ticket after the retry time it was
 * given; each ask keeps the ticket alive, and a ticket nobody asked for
 * within NSRD_WAIT_LAPSE_SEC lapses (its client gave up or died), so no
 * wait outlives its client.  All of it runs under the RPC server mutex,
 * like the session table.
 *
 * Three limits, read live from the resources at every ask (an nsradmin
 * change takes effect at once): the NSR resource's "parallelism" (the
 * running recovers count against it, but a recover is never held back
 * by it, as before), the NSR group's "savegrp parallelism"
 * (0 = none) for the saves started in that group (save -g; a manual save
 * without -g is in no group, as in NetWorker, so only the server and
 * client limits apply to it), and the NSR client's "parallelism" for its
 * saves (NSRD_CLIENT_PARALLELISM when the client has no resource).  The
 * queue is fair (fairq.c): a slot that frees is granted to the waiting
 * session whose group, then client, has the fewest sessions, oldest
 * first (manual saves, in no group, share as one group in that order,
 * without a group limit); the granted session starts when it asks next
 * (queued sessions ask every NSRD_QUEUE_RETRY_MS, less often when many
 * wait), or at once if its ask is being held: a queued save's ask is
 * answered only when it may start or after NSRD_HOLD_MS
 * (nsrd_admit_hold: up to NSRD_HOLDERS_MAX at a time, waiting on
 * admit_cv with the RPC mutex released, woken by nsrd_admit_wake).  A
 * granted session whose client died holds its slot until its ticket
 * lapses.
 *
 * Invariants:
 *  1. a ticket is never handed out twice (they count up from 1);
 *  2. a session passes admission only while, counting the running
 *     sessions and the granted waits, the server, its group and its
 *     client are below their limits; a new session or one that waited
 *     for another reason is admitted past the queued ones only when
 *     none of them could take the slot (fairq_grant ran first);
 *  3. only queued (NSRD_WAIT_SLOT) waits hold grants; a wait that becomes
 *     a session, changes kind or ends gives its grant back;
 *  4. a mount request ends (satisfied, failed, timed out or lapsed)
 *     with a log line, as it began with one;
 *  5. at most nsrd_wait_cap() waits exist (NSRD_MAX_WAITS, or fewer
 *     under NSR_MAX_WAITS for tests); one more is refused with
 *     NSR_ERR_LIMIT and a message, never dropped silently.
 */
#include "nsr/compat.h"

#include <stdarg.h>
#include <time.h>

#include "nsr/clock.h"
#include "nsr/err.h"
#include "nsr/log.h"
#include "nsr/xmalloc.h"

#include "fairq.h"
#include "nsrd.h"

/* is_mount - a mount request (a save's or a recover's)? */
static int is_mount(int kind)
{
	return kind == NSRD_WAIT_VOLUME || kind == NSRD_WAIT_READ;
}

/* nsrd_wait_cap - invariant 5's size of the wait table. */
int nsrd_wait_cap(void)
{
	const char *e = getenv("NSR_MAX_WAITS");
	long v = e && *e ? strtol(e, NULL, 10) : 0;

	return v > 0 && v < NSRD_MAX_WAITS ? (int)v : NSRD_MAX_WAITS;
}

/* wait_log_end - invariant 4's closing line of a mount request. */
static void wait_log_end(const struct nsrd_wait *w, const char *how)
{
	if (is_mount(w->kind))
		nsr_info("mount request %llu (%s:%s, %s %s) %s after %lld s",
			 (unsigned long long)w->ticket, w->client, w->name,
			 w->kind == NSRD_WAIT_READ ? "volume" : "pool",
			 w->pool, how, (long long)(time(NULL) - w->first));
}

/* nsrd_wait_find - the live wait of ticket, or NULL. */
struct nsrd_wait *nsrd_wait_find(struct nsrd *n, uint64_t ticket)
{
	int seen = 0;

	if (ticket == 0)
		return NULL;
	for (int i = 0; i < NSRD_MAX_WAITS && seen < n->nwaits; i++) {
		seen += n->waits[i].ticket != 0;
		if (n->waits[i].ticket == ticket)
			return &n->waits[i];
	}
	return NULL;
}

/* wait_new - a free entry made a new wait, or NULL (invariant 5). */
static struct nsrd_wait *wait_new(struct nsrd *n, const char *client,
				  const char *group, const char *name)
{
	struct nsrd_wait *w = NULL;

	if (n->nwaits >= nsrd_wait_cap())
		return NULL;
	for (int i = 0; i < NSRD_MAX_WAITS && !w; i++)
		if (!n->waits[i].ticket)
			w = &n->waits[i];
	if (!w)
		return NULL;
	n->nwaits++;
	memset(w, 0, sizeof(*w));
	w->ticket = ++n->next_ticket;
	w->first = time(NULL);
	snprintf(w->client, sizeof(w->client), "%s", client);
	snprintf(w->group, sizeof(w->group), "%s", group ? group : "");
	snprintf(w->name, sizeof(w->name), "%s", name);
	return w;
}

/* nsrd_wait_join - the wait w asked for again, or a new one. */
struct nsrd_wait *nsrd_wait_join(struct nsrd *n, struct nsrd_wait *w,
				 const struct nsrd_wait_ask *q)
{
	const char *what = q->what ? q->what : "save";
	time_t now = time(NULL);
	int kind = q->kind;

	if (!w)
		w = wait_new(n, q->client, q->group, q->name);
	if (!w)
		return NULL;
	snprintf(w->pool, sizeof(w->pool), "%s", q->pool ? q->pool : "");
	if (kind != w->kind && is_mount(w->kind))
		wait_log_end(w, "satisfied");
	if (kind != w->kind && is_mount(kind))
		w->first = now; /* a queue's wait does not count against
				 * the mount timeout */
	if (kind == NSRD_WAIT_VOLUME && w->kind != NSRD_WAIT_VOLUME)
		nsr_info("mount request %llu: the %s of %s:%s waits for a "
			 "writable volume of pool %s; label one (nsrmm -l -b "
			 "'%s' -f DEVICE) or mount one (nsrmm -m VOLUME -f "
			 "DEVICE)", (unsigned long long)w->ticket, what,
			 q->client, q->name, w->pool, w->pool);
	if (kind == NSRD_WAIT_READ && w->kind != NSRD_WAIT_READ)
		nsr_info("mount request %llu: the %s of %s for %s waits for "
			 "volume %s; mount it (nsrmm -m %s -f DEVICE)",
			 (unsigned long long)w->ticket, what, q->name,
			 q->client, w->pool, w->pool);
	if (kind != NSRD_WAIT_SLOT)
		w->granted = 0; /* invariant 3 */
	w->kind = kind;
	w->last = now;
	return w;
}

/* nsrd_wait_end - the wait is over. */
void nsrd_wait_end(struct nsrd *n, struct nsrd_wait *w, const char *how)
{
	if (!w || !w->ticket)
		return;
	wait_log_end(w, how);
	if (w->granted)
		nsrd_admit_wake(n); /* its grant is free again */
	memset(w, 0, sizeof(*w));
	n->nwaits--;
}

/* nsrd_admit_wake - wake the held answers (they check for themselves). */
void nsrd_admit_wake(struct nsrd *n)
{
	if (n->holders > 0)
		pthread_cond_broadcast(&n->admit_cv);
}

/* nsrd_admit_hold - hold a queued save's answer until it is admitted.
 * Woken by nsrd_admit_wake, and every 100 ms regardless (a change that
 * wakes nobody costs at most that); each time the wait is kept alive
 * and admission asked again, exactly as if the client had asked. */
int nsrd_admit_hold(struct nsrd *n, uint64_t ticket, const char *client,
		    const char *group, char *why, size_t len)
{
	long long until = nsr_clock_mono_ms() + NSRD_HOLD_MS, left;
	int admitted = 0;

	if (!ticket || n->holders >= NSRD_HOLDERS_MAX || !n->d || !n->d->srv)
		return 0;
	n->holders++;
	while (!admitted && (left = until - nsr_clock_mono_ms()) > 0) {
		struct nsrd_wait *w = nsrd_wait_find(n, ticket);

		if (w)
			w->held = 1;
		nsr_rpc_server_wait(n->d->srv, &n->admit_cv,
				    (unsigned)NSR_MIN(left, 100));
		w = nsrd_wait_find(n, ticket);
		if (w)
			w->held = 0;
		if (!w || w->kind != NSRD_WAIT_SLOT)
			break; /* it lapsed or changed: the caller says so */
		w->last = time(NULL);
		admitted = nsrd_admit(n, w, client, group, why, len);
	}
	n->holders--;
	return admitted;
}

static unsigned queue_retry_ms(struct nsrd *n);

/* nsrd_wait_answer - a session's "not yet": the mount timeout, the wait
 * joined or made, and the status, ticket and retry time of the answer. */
int nsrd_wait_answer(struct nsrd *n, struct nsrd_wait **w,
		     const struct nsrd_wait_ask *q, nsr_status *st,
		     uint64_t *ticket, unsigned *retry_ms, const char *fmt,
		     ...)
{
	char why[NSR_MSG_MAX / 2];
	va_list ap;
	time_t tmo = nsrd_mount_timeout(n);

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (*w && is_mount(q->kind) && (*w)->kind == q->kind &&
	    time(NULL) - (*w)->first >= tmo) {
		nsr_status_set(st, NSR_ERR_TIMEOUT, "%s within %lld s: %s",
			       q->timed_out, (long long)tmo, q->advice);
		nsrd_wait_end(n, *w, "timed out");
		*w = NULL;
		return st->code;
	}
	*w = nsrd_wait_join(n, *w, q);
	if (!*w) {
		nsr_status_set(st, NSR_ERR_LIMIT, "%s, and %d sessions "
			       "already wait (the most nsrd keeps); try again "
			       "later", why, nsrd_wait_cap());
		return st->code;
	}
	*ticket = (*w)->ticket;
	*retry_ms = q->kind == NSRD_WAIT_SLOT ? queue_retry_ms(n) : 1000;
	if (is_mount(q->kind))
		nsr_status_set(st, NSR_ERR_WAIT, "%s (mount request %llu; "
			       "the %s waits up to %lld s)", why,
			       (unsigned long long)(*w)->ticket, q->what,
			       (long long)tmo);
	else
		nsr_status_set(st, NSR_ERR_WAIT, "%s (queued%s: ticket %llu)",
			       why, q->kind == NSRD_WAIT_DEVICE
					    ? " for a device" : "",
			       (unsigned long long)(*w)->ticket);
	*w = NULL; /* it goes on waiting */
	return st->code;
}

/* nsrd_wait_lapse - drop the waits nobody asked for lately. */
void nsrd_wait_lapse(struct nsrd *n)
{
	time_t now = time(NULL);
	int seen = 0, live = n->nwaits;

	for (int i = 0; i < NSRD_MAX_WAITS && seen < live; i++) {
		struct nsrd_wait *w = &n->waits[i];

		seen += w->ticket != 0;
		if (w->ticket && now - w->last > NSRD_WAIT_LAPSE_SEC)
			nsrd_wait_end(n, w, "lapsed (its client stopped "
				      "asking)");
	}
}

/* group_limit - a group's "savegrp parallelism" (0 = none). */
static long group_limit(void *arg, const char *group)
{
	const struct nsr_res *g = nsrd_res_find1(arg, "NSR group", group);
	const char *v = g ? nsr_res_get(g, "savegrp parallelism") : NULL;

	return v && *v ? atol(v) : 0;
}

/* client_limit - a client's "parallelism" (the default without one). */
static long client_limit(void *arg, const char *client)
{
	const struct nsr_res *c = nsrd_res_find1(arg, "NSR client", client);
	const char *v = c ? nsr_res_get(c, "parallelism") : NULL;

	return v && atol(v) > 0 ? atol(v) : NSRD_CLIENT_PARALLELISM;
}

/* A snapshot of the running sessions and the queued waits for fairq. */
struct snapshot {
	struct fairq_item *run, *wait;
	struct nsrd_wait **of; /* the wait of each wait item */
	size_t nrun, nwait;
	struct fairq_limits lim;
};

/* snap_take - sessions and queued waits as fairq items. */
static void snap_take(struct nsrd *n, struct snapshot *sn)
{
	memset(sn, 0, sizeof(*sn));
	sn->run = nsr_xcalloc(NSRD_MAX_SESSIONS, sizeof(*sn->run));
	sn->wait = nsr_xcalloc((size_t)n->nwaits + 1, sizeof(*sn->wait));
	sn->of = nsr_xcalloc((size_t)n->nwaits + 1, sizeof(*sn->of));
	for (int i = 0; i < NSRD_MAX_SESSIONS; i++) {
		const struct nsrd_session *s = &n->sessions[i];
		struct fairq_item *it = &sn->run[sn->nrun];

		if (!s->used)
			continue;
		/* A recover counts against the server only. */
		it->client = s->recover ? "" : s->client;
		it->group = s->recover ? "" : s->group;
		sn->nrun++;
	}
	for (int i = 0, seen = 0; i < NSRD_MAX_WAITS && seen < n->nwaits;
	     i++) {
		struct nsrd_wait *w = &n->waits[i];
		struct fairq_item *it = &sn->wait[sn->nwait];

		seen += w->ticket != 0;
		if (!w->ticket || w->kind != NSRD_WAIT_SLOT)
			continue;
		it->client = w->client;
		it->group = w->group;
		it->ticket = w->ticket;
		it->granted = w->granted;
		sn->of[sn->nwait++] = w;
	}
	sn->lim.server = (long)nsrd_server_attr_num(n, "parallelism", 32);
	sn->lim.group_limit = group_limit;
	sn->lim.client_limit = client_limit;
	sn->lim.arg = n;
}

/* snap_free - release a snapshot. */
static void snap_free(struct snapshot *sn)
{
	free(sn->run);
	free(sn->wait);
	free(sn->of);
}

/* Cheap figures of the admission state, taken without allocating. */
struct brief {
	size_t nrun, nslot, ngranted;
	long server;
	uint64_t fp; /* changes when anything fairq_grant reads may have */
};

/* mix - fold x into a fingerprint. */
static uint64_t mix(uint64_t h, uint64_t x)
{
	return (h ^ x) * 1099511628211ull;
}

/* brief_take - count sessions and queued waits, fingerprint them. */
static void brief_take(struct nsrd *n, struct brief *b)
{
	uint64_t h = 1469598103934665603ull;

	memset(b, 0, sizeof(*b));
	/* The sessions as fairq reads them change only with sess_gen
	 * (nsrd.h invariant 6): no pass over the table. */
	b->nrun = (size_t)n->nlive;
	h = mix(h, n->sess_gen);
	for (int i = 0, seen = 0; i < NSRD_MAX_WAITS && seen < n->nwaits;
	     i++) {
		const struct nsrd_wait *w = &n->waits[i];

		seen += w->ticket != 0;
		if (!w->ticket || w->kind != NSRD_WAIT_SLOT)
			continue;
		b->nslot++;
		b->ngranted += w->granted != 0;
		h = mix(h, w->ticket * 2 + (w->granted != 0));
	}
	b->server = (long)nsrd_server_attr_num(n, "parallelism", 32);
	h = mix(h, (uint64_t)b->server);
	b->fp = mix(h, n->res_gen);
}

/* why_not - the words for a fairq_fits answer that is not FAIRQ_FITS
 * for a new session, or FAIRQ_FITS for a queued one passed over. */
static void why_not(struct nsrd *n, int fit, const char *client,
		    const char *group, long server, size_t nrun,
		    size_t nwait, char *why, size_t len)
{
	if (fit == FAIRQ_GROUP)
		snprintf(why, len, "savegrp parallelism of group %s (%ld) "
			 "reached", group, group_limit(n, group));
	else if (fit == FAIRQ_CLIENT)
		snprintf(why, len, "client parallelism of %s (%ld) reached",
			 client, client_limit(n, client));
	else if (fit == FAIRQ_SERVER)
		snprintf(why, len, "server parallelism (%ld) reached: %zu "
			 "sessions run, %zu wait", server, nrun, nwait);
	else if (fit == FAIRQ_FITS)
		snprintf(why, len, "waiting sessions of less served clients "
			 "go first (%zu wait)", nwait);
	else
		snprintf(why, len, "out of memory while queueing");
}

/* fits_now - fairq_fits when nothing waits for a slot (no grants to
 * count, nobody to pass over): from the session tallies (nsrd.h
 * invariant 5) without a snapshot, the same answer in O(1). */
static int fits_now(struct nsrd *n, const struct brief *b,
		    const char *client, const char *group)
{
	long gl = group[0] ? group_limit(n, group) : 0;
	long cl = client_limit(n, client);

	if ((long)b->nrun >= b->server)
		return FAIRQ_SERVER;
	if (gl > 0 && (long)tally_count(&n->by_group, group) >= gl)
		return FAIRQ_GROUP;
	if (cl > 0 && (long)tally_count(&n->by_client, client) >= cl)
		return FAIRQ_CLIENT;
	return FAIRQ_FITS;
}

/* nsrd_admit - may a save of client in group start now (invariant 2)?
 * Queued sessions ask often: when the server is full, or nothing that
 * fairq_grant reads changed since it last ran (the fingerprint), the
 * answer is known without running it.  A new session while no session
 * waits for a slot is answered from the tallies, without a snapshot. */
int nsrd_admit(struct nsrd *n, struct nsrd_wait *w, const char *client,
	       const char *group, char *why, size_t len)
{
	int queued = w && w->kind == NSRD_WAIT_SLOT;
	struct snapshot sn;
	struct brief b;
	int fit;

	if (queued && w->granted)
		return 1;
	nsrd_tally_check(n);
	brief_take(n, &b);
	if (b.nrun + b.ngranted >= (size_t)NSR_MAX(b.server, 0)) {
		snprintf(why, len, "server parallelism (%ld) reached: %zu "
			 "sessions run, %zu wait", b.server, b.nrun, b.nslot);
		return 0;
	}
	if (queued && b.fp == n->admit_fp) {
		snprintf(why, len, "parallelism reached: %zu sessions run, "
			 "%zu wait", b.nrun, b.nslot);
		return 0;
	}
	if (!queued && b.nslot == 0 && !n->tally_lost) {
		n->admit_fp = b.fp;
		fit = fits_now(n, &b, client, group);
		if (fit == FAIRQ_FITS)
			return 1;
		why_not(n, fit, client, group, b.server, b.nrun, 0, why, len);
		return 0;
	}
	snap_take(n, &sn);
	if (sn.nwait && fairq_grant(sn.run, sn.nrun, sn.wait, sn.nwait,
				    &sn.lim) > 0) {
		for (size_t i = 0; i < sn.nwait; i++)
			sn.of[i]->granted = sn.wait[i].granted;
		brief_take(n, &b); /* else b is what the grant saw */
	}
	n->admit_fp = b.fp; /* what this grant saw, grants included */
	if (queued && w->granted) {
		snap_free(&sn);
		return 1;
	}
	/* Not granted (or not queued yet): would one more fit?  A queued
	 * one that fits was passed over for less served ones. */
	fit = fairq_fits(sn.run, sn.nrun, sn.wait, sn.nwait, &sn.lim, client,
			 group);
	if (fit == FAIRQ_FITS && !queued) {
		snap_free(&sn);
		return 1;
	}
	why_not(n, fit, client, group, sn.lim.server, sn.nrun, sn.nwait, why,
		len);
	snap_free(&sn);
	return 0;
}

/* queue_retry_ms - how soon a queued session asks again: every
 * NSRD_QUEUE_RETRY_MS, a little less often as the queue grows (a
 * quarter second more per 256 waiting, at most 2 s). */
static unsigned queue_retry_ms(struct nsrd *n)
{
	struct brief b;

	brief_take(n, &b);
	return (unsigned)NSR_MIN(NSRD_QUEUE_RETRY_MS * (1 + b.nslot / 256),
				 2000u);
}

/* nsrd_mount_timeout - seconds a save waits for a volume: the NSR
 * resource's "save mount timeout" in minutes (NSR_MOUNT_TIMEOUT_SEC, in
 * seconds, for tests). */
time_t nsrd_mount_timeout(struct nsrd *n)
{
	const char *e = getenv("NSR_MOUNT_TIMEOUT_SEC");

	if (e && atol(e) > 0)
		return (time_t)atol(e);
	return (time_t)nsrd_server_attr_num(n, "save mount timeout",
					    NSRD_MOUNT_TIMEOUT_MIN) * 60;
}
