/*
 * admit.c - sessions that wait to start: a ticket queue in nsrd.
 *
 * SAVE_START answers NSR_ERR_WAIT with a ticket when a session cannot
 * start yet: server parallelism is reached (it is queued, first come
 * first served, and never times out for that alone), or no writable
 * volume of its pool is mounted (a mount request, which times out after
 * the server's "save mount timeout"); a recover waits the same way for
 * a volume of its save set to be mounted.  The client asks again with its
 * ticket after the retry time it was given; each ask keeps the ticket
 * alive, and a ticket nobody asked for within NSRD_WAIT_LAPSE_SEC lapses
 * (its client gave up or died), so no wait outlives its client.  All of
 * it runs under the RPC server mutex, like the session table.
 *
 * Invariants:
 *  1. a ticket is never handed out twice (they count up from 1);
 *  2. under server parallelism an older ticket is admitted first: a
 *     session starts only while the running sessions and the queued
 *     ones older than it are together below the limit;
 *  3. a mount request ends (satisfied, failed, timed out or lapsed)
 *     with a log line, as it began with one.
 */
#include "nsr/compat.h"

#include "nsr/log.h"

#include "nsrd.h"

/* is_mount - a mount request (a save's or a recover's)? */
static int is_mount(int kind)
{
	return kind == NSRD_WAIT_VOLUME || kind == NSRD_WAIT_READ;
}

/* wait_log_end - invariant 3's closing line of a mount request. */
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
	if (ticket == 0)
		return NULL;
	for (int i = 0; i < NSRD_MAX_WAITS; i++)
		if (n->waits[i].ticket == ticket)
			return &n->waits[i];
	return NULL;
}

/* nsrd_wait_join - the wait w asked for again, or a new one. */
struct nsrd_wait *nsrd_wait_join(struct nsrd *n, struct nsrd_wait *w,
				 int kind, const char *client,
				 const char *name, const char *pool)
{
	time_t now = time(NULL);

	for (int i = 0; !w && i < NSRD_MAX_WAITS; i++)
		if (n->waits[i].ticket == 0) {
			w = &n->waits[i];
			memset(w, 0, sizeof(*w));
			w->ticket = ++n->next_ticket;
			w->first = now;
			snprintf(w->client, sizeof(w->client), "%s", client);
			snprintf(w->name, sizeof(w->name), "%s", name);
		}
	if (!w)
		return NULL;
	snprintf(w->pool, sizeof(w->pool), "%s", pool ? pool : "");
	if (kind != w->kind && is_mount(w->kind))
		wait_log_end(w, "satisfied");
	if (kind != w->kind && is_mount(kind))
		w->first = now; /* a queue's wait does not count against
				 * the mount timeout */
	if (kind == NSRD_WAIT_VOLUME && w->kind != NSRD_WAIT_VOLUME)
		nsr_info("mount request %llu: the save of %s:%s waits for a "
			 "writable volume of pool %s; label one (nsrmm -l -b "
			 "'%s' -f DEVICE) or mount one (nsrmm -m VOLUME -f "
			 "DEVICE)", (unsigned long long)w->ticket, client,
			 name, w->pool, w->pool);
	if (kind == NSRD_WAIT_READ && w->kind != NSRD_WAIT_READ)
		nsr_info("mount request %llu: the recover of %s for %s waits "
			 "for volume %s; mount it (nsrmm -m %s -f DEVICE)",
			 (unsigned long long)w->ticket, name, client, w->pool,
			 w->pool);
	w->kind = kind;
	w->last = now;
	return w;
}

/* nsrd_wait_end - the wait is over. */
void nsrd_wait_end(struct nsrd *n, struct nsrd_wait *w, const char *how)
{
	NSR_UNUSED(n);
	if (!w)
		return;
	wait_log_end(w, how);
	memset(w, 0, sizeof(*w));
}

/* nsrd_wait_ahead - queued sessions older than ticket (0: all). */
int nsrd_wait_ahead(const struct nsrd *n, uint64_t ticket)
{
	int c = 0;

	for (int i = 0; i < NSRD_MAX_WAITS; i++) {
		const struct nsrd_wait *w = &n->waits[i];

		if (w->ticket && w->kind == NSRD_WAIT_SLOT &&
		    (ticket == 0 || w->ticket < ticket))
			c++;
	}
	return c;
}

/* nsrd_wait_lapse - drop the waits nobody asked for lately. */
void nsrd_wait_lapse(struct nsrd *n)
{
	time_t now = time(NULL);

	for (int i = 0; i < NSRD_MAX_WAITS; i++) {
		struct nsrd_wait *w = &n->waits[i];

		if (w->ticket && now - w->last > NSRD_WAIT_LAPSE_SEC)
			nsrd_wait_end(n, w, "lapsed (its client stopped "
				      "asking)");
	}
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
