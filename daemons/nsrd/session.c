/*
 * session.c - admission of save and recover sessions.
 *
 * SAVE_START: admit under server, group and client parallelism
 * (admit.c), decide the level (level.c),
 * pick a writable volume of the pool mounted on an enabled device (fewest
 * sessions first), create the job
 * (nsrjobd) and the save set (nsrmmdbd, flagged in progress), get the
 * device's data mover from the storage node (nsrsnmd), and tell the client
 * where to stream.  The save set and the job are created with the RPC
 * mutex released (nsrd.h, invariants 1-3): a burst of starts then shares
 * nsrmmdbd's group commit instead of paying one fsync after another while
 * every other start waits.  The mover request stays under the mutex: the
 * storage node picks a mover by the load nsrd reports, which must count
 * every session before it; but a local mover that already serves
 * sessions of nsrd's below its target sessions takes one more without a
 * question (devcache.h), and the device's volume record is read once per
 * DEVCACHE_VOL_TTL_MS, not once per start.  SAVE_END marks the save
 * set complete and browsable only after the client reported the data
 * and the index durable; a failed save leaves the save set aborted and
 * the job failed, with the reason.
 * RECOVER_START finds the fragments of a save set and, for each, the mover
 * of the device its volume is mounted on.  NEXT_VOLUME tells the client
 * of a save whose volume filled up where the save set continues (the
 * client then goes on at that volume's mover itself).
 */
#include "nsr/compat.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "nsr/buf.h"
#include "nsr/clock.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/host.h"
#include "nsr/jobd_clnt.h"
#include "nsr/level.h"
#include "nsr/log.h"
#include "nsr/proc.h"
#include "nsr/mmd_clnt.h"
#include "nsr/mmdb_clnt.h"
#include "nsr/mmquery.h"
#include "nsr/peer.h"
#include "nsr/pssspec.h"
#include "nsr/size.h"
#include "nsr/snmd_clnt.h"
#include "nsr/stripes.h"
#include "nsr/xmalloc.h"
#include "devcache.h"
#include "nsrd.h"

/* open_jobd - the connection to nsrjobd; jobs are bookkeeping, so a
 * missing nsrjobd is logged by the callers but does not stop a backup. */
static struct nsr_jobd *open_jobd(void)
{
	return g_nsrd.jobd;
}

/* nsrd_sessions_init - see nsrd.h. */
int nsrd_sessions_init(struct nsrd *n)
{
	n->nlive = 0;
	n->nfree = 0;
	for (int i = NSRD_MAX_SESSIONS - 1; i >= 0; i--)
		n->free_slots[n->nfree++] = (uint16_t)i; /* all free at start */
	if (tally_init(&n->by_client, 1024) || tally_init(&n->by_group, 64) ||
	    tally_init(&n->by_device, 64) || tally_init(&n->by_mover, 256))
		return -1;
	return 0;
}

/* untally - give back what s counts in the tallies. */
static void untally(struct nsrd *n, struct nsrd_session *s)
{
	tally_put(&n->by_client, s->t_client);
	tally_put(&n->by_group, s->t_group);
	tally_put(&n->by_device, s->t_device);
	tally_put(&n->by_mover, s->t_mover);
	s->t_client = s->t_group = s->t_device = s->t_mover = NULL;
}

/* count_in - one count of name in t (an empty name is not counted);
 * a count that cannot be kept makes admission count by passes. */
static struct tally_node *count_in(struct nsrd *n, struct tally *t,
				   const char *name)
{
	struct tally_node *node;

	if (!name[0])
		return NULL;
	node = tally_get(t, name);
	if (!node)
		n->tally_lost = 1;
	return node;
}

/* nsrd_session_tally - see nsrd.h (invariant 5). */
void nsrd_session_tally(struct nsrd *n, struct nsrd_session *s)
{
	untally(n, s);
	n->sess_gen++;
	if (!s->used)
		return;
	if (!s->recover) {
		s->t_client = count_in(n, &n->by_client, s->client);
		s->t_group = count_in(n, &n->by_group, s->group);
	}
	s->t_device = count_in(n, &n->by_device, s->device);
	if (s->device[0] && s->mover_pid > 0) {
		char key[sizeof(s->device) + 24];

		snprintf(key, sizeof(key), "%ld %s", (long)s->mover_pid,
			 s->device);
		s->t_mover = count_in(n, &n->by_mover, key);
	}
}

/* same_count - the used sessions whose string field at off is v (saves
 * only, with saves). */
static unsigned same_count(const struct nsrd *n, size_t off, const char *v,
			   int saves)
{
	unsigned c = 0;

	for (int i = 0; i < NSRD_MAX_SESSIONS; i++) {
		const struct nsrd_session *x = &n->sessions[i];

		if (x->used && (!saves || !x->recover) &&
		    strcmp((const char *)x + off, v) == 0)
			c++;
	}
	return c;
}

/* nsrd_tally_check - NSR_TEST_TALLY_CHECK=1 (the system tests set it):
 * every count of the tallies against a pass over the session table
 * (nsrd.h invariants 4, 5); a difference is logged and nsrd aborts, so
 * the test that met it fails.  O(sessions^2): tests only. */
void nsrd_tally_check(struct nsrd *n)
{
	static int on = -1;
	int live = 0;

	if (on < 0) {
		const char *e = getenv("NSR_TEST_TALLY_CHECK");

		on = e && *e && strcmp(e, "0") != 0;
	}
	if (!on)
		return;
	for (int i = 0; i < NSRD_MAX_SESSIONS; i++) {
		const struct nsrd_session *s = &n->sessions[i];
		unsigned want, got;
		const char *what = NULL;

		live += s->used != 0;
		if (!s->used || n->tally_lost)
			continue;
		if (!s->recover && s->client[0] &&
		    (want = same_count(n, offsetof(struct nsrd_session,
						    client), s->client, 1)) !=
			    (got = tally_count(&n->by_client, s->client)))
			what = "client";
		else if (!s->recover && s->group[0] &&
			 (want = same_count(n, offsetof(struct nsrd_session,
							 group),
					    s->group, 1)) !=
				 (got = tally_count(&n->by_group, s->group)))
			what = "group";
		else if (s->device[0] &&
			 (want = same_count(n, offsetof(struct nsrd_session,
							 device),
					    s->device, 0)) !=
				 (got = tally_count(&n->by_device, s->device)))
			what = "device";
		if (!what && s->device[0] && s->mover_pid > 0) {
			char key[sizeof(s->device) + 24];

			want = 0;
			for (int k = 0; k < NSRD_MAX_SESSIONS; k++)
				want += n->sessions[k].used &&
					n->sessions[k].mover_pid ==
						s->mover_pid &&
					strcmp(n->sessions[k].device,
					       s->device) == 0;
			snprintf(key, sizeof(key), "%ld %s",
				 (long)s->mover_pid, s->device);
			got = tally_count(&n->by_mover, key);
			if (got != want)
				what = "mover";
		}
		if (what) {
			nsr_error("session tally: %s of session %d counted %u "
				  "times, %u sessions have it", what, i, got,
				  want);
			abort();
		}
	}
	if (live != n->nlive || live + n->nfree != NSRD_MAX_SESSIONS) {
		nsr_error("session tally: %d sessions live, counted %d, %d "
			  "slots free", live, n->nlive, n->nfree);
		abort();
	}
}

/* nsrd_device_sessions - see nsrd.h: from the tally (invariant 5), or
 * by a pass when a count was lost. */
int nsrd_device_sessions(struct nsrd *n, const char *device)
{
	int c = 0;

	if (!device)
		return n->nlive;
	if (!n->tally_lost)
		return (int)tally_count(&n->by_device, device);
	for (int i = 0; i < NSRD_MAX_SESSIONS; i++)
		if (n->sessions[i].used &&
		    strcmp(n->sessions[i].device, device) == 0)
			c++;
	return c;
}

/* lease_sec - the session lease (NSR_LEASE_SEC for tests). */
static time_t lease_sec(void)
{
	const char *e = getenv("NSR_LEASE_SEC");
	long v = e && *e ? strtol(e, NULL, 10) : 0;

	return v > 0 && v <= 86400 ? (time_t)v : NSRD_LEASE_SEC;
}

/* conn_closed - WARNING: runs on the connection's thread as it ends,
 * outside the RPC mutex: take it, and mark the sessions this connection
 * owned for settling at the next tick. */
static void conn_closed(void *data)
{
	uint64_t id = *(uint64_t *)data;
	struct nsrd *n = &g_nsrd;

	free(data);
	if (!n->d || !n->d->srv)
		return;
	nsr_rpc_server_lock(n->d->srv);
	for (int i = 0; i < NSRD_MAX_SESSIONS; i++)
		if (n->sessions[i].used && n->sessions[i].conn == id) {
			/* A short grace: the mover ends its part first. */
			time_t t = time(NULL) + NSRD_ORPHAN_GRACE_SEC;

			if (n->sessions[i].lease_until > t)
				n->sessions[i].lease_until = t;
			n->sessions[i].conn = 0;
		}
	nsr_rpc_server_unlock(n->d->srv);
}

/* conn_id - the id of the calling connection, made on first use. */
static uint64_t conn_id(struct nsrd *n, struct nsr_rpc_call *call)
{
	uint64_t *id;

	if (!call)
		return 0;
	id = nsr_rpc_call_conn_data(call);
	if (!id) {
		id = nsr_xcalloc(1, sizeof(*id));
		*id = ++n->next_conn;
		nsr_rpc_call_set_conn_data(call, id, conn_closed);
	}
	return *id;
}

/* new_session - a free slot owned by the calling connection, or NULL. */
static struct nsrd_session *new_session(struct nsrd *n,
					struct nsr_rpc_call *call)
{
	struct nsrd_session *s;

	if (n->nfree == 0)
		return NULL;
	s = &n->sessions[n->free_slots[--n->nfree]]; /* invariant 4 */
	memset(s, 0, sizeof(*s));
	s->used = 1;
	s->started = time(NULL);
	s->conn = conn_id(n, call);
	s->lease_until = time(NULL) + lease_sec();
	n->nlive++;
	n->sess_gen++;
	return s;
}

/* find_session - a save session by ssid (an adopted one has no job id
 * yet), else any session by job id. */
static struct nsrd_session *find_session(struct nsrd *n, int64_t jobid,
					 uint32_t ssid)
{
	for (int i = 0; i < NSRD_MAX_SESSIONS; i++) {
		struct nsrd_session *s = &n->sessions[i];

		if (!s->used || s->starting)
			continue;
		if (ssid ? !s->recover && s->ssid == ssid : s->jobid == jobid)
			return s;
	}
	return NULL;
}

static const struct nsr_res *device_with_volume(struct nsrd *n,
						const char *volume);

/* unmounted_volume - a volume of pool that could take data but is not
 * mounted on any device (name into out), or 0: the advice to mount it
 * rather than label another. */
static int unmounted_volume(struct nsrd *n, struct mmdb_clnt *mc,
			    const char *pool, char *out, size_t len)
{
	struct mmdb_volume v[32];
	char q[160];
	size_t got = 0;
	int done = 0, found = 0;

	if (strpbrk(pool, ",=\"'\\") ||
	    snprintf(q, sizeof(q), "pool=%s", pool) >= (int)sizeof(q) ||
	    mmdb_clnt_query_open(mc, q, 1, 0) != NSR_OK)
		return 0;
	while (!done && !found &&
	       mmdb_clnt_query_next_vols(mc, v, NSR_ARRAY_SIZE(v), &got,
					 &done) == NSR_OK) {
		for (size_t i = 0; i < got && !found; i++)
			if (!(v[i].flags & (MMDB_VOL_FULL | MMDB_VOL_READONLY |
					    MMDB_VOL_RECYCLABLE)) &&
			    !device_with_volume(n, v[i].name)) {
				size_t l = strnlen(v[i].name, len - 1);

				memcpy(out, v[i].name, l);
				out[l] = '\0';
				found = 1;
			}
		if (got == 0)
			break;
	}
	/* the cursor ends with the connection's next query */
	return found;
}

/* vol_fetch - a volume's record from the media database (devcache.h). */
static int vol_fetch(void *arg, const char *volume, struct mmdb_volume *v)
{
	return mmdb_clnt_vol_get(arg, volume, v);
}

/* pick_device_in - the enabled device with a writable volume of pool
 * mounted and the fewest sessions below its max sessions, never one of
 * the nexcl volumes whose ids exclude holds (16 bytes each).  On failure
 * st says why; the caller may replace it. */
static const struct nsr_res *pick_device_in(struct nsrd *n,
					    struct mmdb_clnt *mc,
					    const char *pool,
					    const uint8_t *exclude,
					    size_t nexcl,
					    struct mmdb_volume *vol,
					    nsr_status *st)
{
	const struct nsr_res *best = NULL;
	int best_load = INT32_MAX, seen_full = 0, seen_busy = 0, dberr = 0, rc;
	char spare[NSR_VOL_NAME_MAX + 1];

	for (long i = nsr_resdb_next_of_type(n->res, "NSR device", -1); i >= 0;
	     i = nsr_resdb_next_of_type(n->res, "NSR device", i)) {
		const struct nsr_res *dev = nsr_resdb_at(n->res, (size_t)i);
		const char *vname = nsr_res_get(dev, "volume name");
		const char *en = nsr_res_get(dev, "enabled");
		const char *ro = nsr_res_get(dev, "read only");
		const char *ms = nsr_res_get(dev, "max sessions");
		struct mmdb_volume v;
		int load;

		if (!vname || !*vname || (en && strcasecmp(en, "Yes") != 0) ||
		    (ro && strcasecmp(ro, "Yes") == 0))
			continue;
		rc = devcache_vol_get(nsr_res_get(dev, "name"), vname,
				      nsr_clock_mono_ms(), vol_fetch, mc, &v);
		if (rc != NSR_OK && rc != NSR_ERR_NOTFOUND) {
			nsr_status_set(st, rc, "the media database is not "
				       "available: %s", mmdb_clnt_errmsg(mc));
			best = NULL;
			dberr = 1;
			break;
		}
		if (rc != NSR_OK || strcmp(v.pool, pool) != 0)
			continue;
		for (size_t x = 0; x < nexcl && rc == NSR_OK; x++)
			if (memcmp(v.volid, exclude + 16 * x, 16) == 0)
				rc = NSR_ERR_EXISTS; /* excluded */
		if (rc != NSR_OK)
			continue;
		if (v.flags & (MMDB_VOL_FULL | MMDB_VOL_READONLY |
			       MMDB_VOL_RECYCLABLE)) {
			seen_full = 1;
			continue;
		}
		load = nsrd_device_sessions(n, nsr_res_get(dev, "name"));
		if (ms && load >= atoi(ms)) {
			seen_busy = 1;
			continue;
		}
		if (load < best_load) {
			best = dev;
			best_load = load;
			*vol = v;
		}
	}
	if (!best && !dberr && seen_busy)
		nsr_status_set(st, NSR_ERR_BUSY,
			       "every device with a writable volume of pool "
			       "'%s' serves its max sessions", pool);
	else if (!best && !dberr && unmounted_volume(n, mc, pool, spare,
						     sizeof(spare)))
		nsr_status_set(st, NSR_ERR_NOTFOUND,
			    "no writable volume of pool '%s' is mounted on an "
			    "enabled device; volume %s of that pool can take "
			    "data: mount it with: nsrmm -m %s -f DEVICE", pool,
			    spare, spare);
	else if (!best && !dberr)
		nsr_status_set(
			st, NSR_ERR_NOTFOUND,
			"no writable volume of pool '%s' is mounted on an "
			"enabled "
			"device%s; label one with: nsrmm -l -b '%s' -f DEVICE",
			pool,
			seen_full ? " (the mounted ones are full, read-only "
				    "or recyclable)"
				  : "",
			pool);
	return best;
}

/* pick_device - pick_device_in never choosing the volume exclude (NULL =
 * none). */
static const struct nsr_res *pick_device(struct nsrd *n, struct mmdb_clnt *mc,
					 const char *pool,
					 const uint8_t *exclude,
					 struct mmdb_volume *vol,
					 nsr_status *st)
{
	return pick_device_in(n, mc, pool, exclude, exclude ? 1 : 0, vol, st);
}

/* nsrd_device_host - the storage node of a device and its path there:
 * NetWorker's "rd=HOST:PATH" (in the name or the device access
 * information) names a device on another host. */
const char *nsrd_device_host(const struct nsr_res *dev, char *host,
			     size_t hlen)
{
	const char *name = nsr_res_get(dev, "name");
	const char *dai = nsr_res_get(dev, "device access information");
	const char *path = nsr_host_remote_device(name ? name : "", host, hlen);
	char h2[NSR_HOST_MAX + 1];

	if (path && dai && *dai) {
		path = nsr_host_remote_device(dai, h2, sizeof(h2));
		if (path && h2[0] && !host[0])
			snprintf(host, hlen, "%s", h2);
	}
	return path && *path ? path : NULL;
}

/* nsrd_snmd_for - the connection to nsrsnmd on host ("" = this server); NULL
 * when the table is full. */
struct nsr_snmd *nsrd_snmd_for(struct nsrd *n, const char *host)
{
	const char *h = host[0] ? host : "localhost";

	for (int i = 0; i < n->nsnmd; i++)
		if (strcmp(nsr_snmd_host(n->snmd[i]), h) == 0)
			return n->snmd[i];
	/* A storage node's nsrsnmd that is starting (or restarting) is
	 * waited for a little; the server's own a little longer. */
	if (n->nsnmd >= NSRD_MAX_SNODES ||
	    nsr_snmd_new(h, host[0] ? 3000 : 5000, &n->snmd[n->nsnmd]) !=
		    NSR_OK)
		return NULL;
	return n->snmd[n->nsnmd++];
}

/* nsrd_device_max_movers - how many movers the device may have: its "max
 * nsrmmd count" (empty: max sessions / target sessions + 4) while its
 * storage node's "dynamic nsrmmds" is not No; 1 otherwise. */
unsigned nsrd_device_max_movers(struct nsrd *n, const struct nsr_res *dev,
				const char *host, unsigned ts, unsigned ms)
{
	const struct nsr_res *sn;
	const char *dyn, *mc;

	sn = nsrd_res_find1(n, "NSR storage node",
			    host[0] ? host : n->server_name);
	dyn = sn ? nsr_res_get(sn, "dynamic nsrmmds") : NULL;
	if (dyn && strcasecmp(dyn, "No") == 0)
		return 1;
	mc = nsr_res_get(dev, "max nsrmmd count");
	if (mc && *mc && atoi(mc) > 0)
		return (unsigned)atoi(mc);
	return (ms ? ms : 32) / (ts ? ts : 4) + 4;
}

/* The movers of one device with their sessions, gathered from the
 * by_mover tally. */
struct mover_load {
	const char *device;
	struct nsr_snmd_load *load;
	size_t max, n;
};

/* mover_load_add - one "PID DEVICE" of the tally, if of ml's device. */
static void mover_load_add(void *ctx, const char *name, unsigned count)
{
	struct mover_load *ml = ctx;
	char *end;
	long pid = strtol(name, &end, 10);

	if (*end != ' ' || strcmp(end + 1, ml->device) != 0 ||
	    ml->n == ml->max)
		return;
	ml->load[ml->n].pid = (pid_t)pid;
	ml->load[ml->n++].sessions = count;
}

/* device_load - the sessions each mover of the device serves now. */
static size_t device_load(struct nsrd *n, const char *device,
			  struct nsr_snmd_load *load, size_t max)
{
	struct mover_load ml = {device, load, max, 0};
	size_t nl = 0, j;

	if (!n->tally_lost) { /* invariant 5 */
		tally_each(&n->by_mover, mover_load_add, &ml);
		return ml.n;
	}
	for (int i = 0; i < NSRD_MAX_SESSIONS; i++) {
		const struct nsrd_session *s = &n->sessions[i];

		if (!s->used || s->mover_pid <= 0 ||
		    strcmp(s->device, device) != 0)
			continue;
		for (j = 0; j < nl && load[j].pid != s->mover_pid; j++)
			;
		if (j == nl) {
			if (nl == max)
				continue;
			load[nl].pid = s->mover_pid;
			load[nl++].sessions = 0;
		}
		load[j].sessions++;
	}
	return nl;
}

/* mover_alive - is the local mover pid still there (devcache.h)?  For an
 * idle one (no session of ours on it), also an nsrmmd that has not
 * exited; when in doubt, no: nsrsnmd is asked. */
static int mover_alive(pid_t pid, int idle)
{
	/* Idle: it may have exited (a zombie nsrsnmd has yet to reap) and
	 * its pid may even be another program's now; busy: kill's word
	 * (no /proc read per start). */
	if (idle)
		return nsr_proc_live(pid, "nsrmmd");
	return kill(pid, 0) == 0 || errno == EPERM;
}

/* nsrd_device_capacity - see nsrd.h. */
int nsrd_device_capacity(const struct nsr_res *dev, uint64_t *bytes)
{
	const char *v = nsr_res_get(dev, "volume default capacity");
	long long c = 0;

	*bytes = 0;
	if (v && *v && nsr_size_parse(v, &c) != NSR_OK)
		return NSR_ERR_SYNTAX;
	*bytes = (uint64_t)c;
	return NSR_OK;
}

/* nsrd_device_mover - a data mover of a device from its storage node
 * (this server's own nsrsnmd through loopback for local devices). */
int nsrd_device_mover(struct nsrd *n, const struct nsr_res *dev, char *host,
		      size_t hlen, int *port, pid_t *pidp, struct nsr_buf *err)
{
	struct nsr_snmd_load load[64];
	struct nsr_snmd_device md;
	struct nsr_snmd *sn;
	int rc;
	const char *ts = nsr_res_get(dev, "target sessions");
	const char *ms = nsr_res_get(dev, "max sessions");
	const char *seg = nsr_res_get(dev, "segment size");
	long long segv = 0;
	uint64_t key;
	pid_t pid;

	memset(&md, 0, sizeof(md));
	md.name = nsr_res_get(dev, "name");
	md.path = nsrd_device_host(dev, host, hlen);
	if (!md.path) {
		nsr_buf_addf(err, "device %s: the name or device access "
			     "information is not a path or rd=HOST:PATH",
			     md.name);
		return NSR_ERR_INVAL;
	}
	/* Resources made before the attribute existed get its default. */
	if (nsr_size_parse(seg ? seg : NSRD_SEGMENT_DEFAULT, &segv) !=
	    NSR_OK) {
		nsr_buf_addf(err, "device %s: segment size '%s' is not a size "
			     "(e.g. 4000 MB; 0 for no filemarks between "
			     "segments)", md.name, seg);
		return NSR_ERR_INVAL;
	}
	md.segment_size = (uint64_t)segv;
	if (nsrd_device_capacity(dev, &md.capacity) != NSR_OK) {
		nsr_buf_addf(err,
			     "device %s: volume default capacity '%s' is "
			     "not a size (e.g. 500 GB; empty for none)",
			     md.name,
			     nsr_res_get(dev, "volume default capacity"));
		return NSR_ERR_INVAL;
	}
	md.media_type = nsr_res_get(dev, "media type");
	md.target_sessions = ts ? (unsigned)atoi(ts) : 0;
	md.max_sessions = ms ? (unsigned)atoi(ms) : 0;
	md.max_movers = nsrd_device_max_movers(n, dev, host,
					       md.target_sessions,
					       md.max_sessions);
	md.load = load;
	md.nload = device_load(n, md.name, load, NSR_ARRAY_SIZE(load));
	/* A local mover below its target sessions takes one more without a
	 * question to nsrsnmd (devcache.h): nsrsnmd would neither start a
	 * mover then nor count differently, and picks the least loaded too;
	 * an idle one only with the settings nsrsnmd last saw. */
	key = devcache_mover_key(&md);
	if (!host[0] && devcache_mover_pick(md.name, load, md.nload,
					    md.target_sessions, key,
					    mover_alive, &pid, port)) {
		if (pidp)
			*pidp = pid;
		return NSR_OK;
	}
	sn = nsrd_snmd_for(n, host);
	if (!sn) {
		nsr_buf_addf(err, "more than %d storage nodes",
			     NSRD_MAX_SNODES);
		return NSR_ERR_LIMIT;
	}
	/* A remote mover reports to this server by name; a local one
	 * through loopback. */
	rc = nsr_snmd_mover(sn, &md, host[0] ? n->server_name : "localhost",
			    port, &pid, err);
	if (pidp)
		*pidp = rc == NSR_OK ? pid : 0;
	if (rc == NSR_OK && !host[0])
		devcache_mover_learn(md.name, pid, *port, key);
	return rc;
}

/* job_fill - a session's job record, active from now (strings are
 * borrowed). */
static void job_fill(struct nsr_jobdb_job *job, enum nsr_jobdb_type type,
		     const char *client, const char *name, const char *level,
		     int64_t pid, const char *command, const char *ssids)
{
	memset(job, 0, sizeof(*job));
	job->type = type;
	job->client = client;
	job->name = name;
	job->level = level;
	job->host = client;
	job->pid = pid;
	job->state = NSR_JOBDB_ACTIVE;
	job->start_time = time(NULL);
	job->command = command;
	job->ssids = ssids;
}

/* job_record - job with its first nlines log lines, in one call and one
 * transaction; its id, or 0 if nsrjobd is away (logged). */
static int64_t job_record(struct nsr_jobd *j, const struct nsr_jobdb_job *job,
			  const char *const *lines, size_t nlines)
{
	struct nsr_buf err;
	int64_t id = 0;

	if (!j)
		return 0;
	nsr_buf_init(&err, 0);
	if (nsr_jobd_create_log(j, job, lines, nlines, &id, &err) != NSR_OK) {
		nsr_warn("cannot record the job of %s:%s: %s", job->client,
			 job->name, err.data);
		id = 0;
	}
	nsr_buf_release(&err);
	return id;
}

/* job_create - the job record of a session (0 if nsrjobd is away); ssids
 * NULL when it has none yet; its first nlines log lines go with it, in
 * the same call and transaction. */
static int64_t job_create(struct nsr_jobd *j, enum nsr_jobdb_type type,
			  const char *client, const char *name,
			  const char *level, int64_t pid, const char *command,
			  const char *ssids, const char *const *lines,
			  size_t nlines)
{
	struct nsr_jobdb_job job;

	job_fill(&job, type, client, name, level, pid, command, ssids);
	return job_record(j, &job, lines, nlines);
}

/* job_finish - close a job with its outcome and a log line. */
static void job_finish_on(struct nsr_jobd *j, int64_t id, int ok,
			  uint64_t bytes, uint64_t files, const char *ssids,
			  const char *msg)
{
	struct nsr_jobdb_job v;
	struct nsr_buf err;

	if (!id || !j)
		return;
	memset(&v, 0, sizeof(v));
	v.state = ok ? NSR_JOBDB_COMPLETED : NSR_JOBDB_FAILED;
	v.status = ok ? "succeeded" : "failed";
	v.end_time = time(NULL);
	v.bytes = (int64_t)bytes;
	v.files = (int64_t)files;
	v.ssids = ssids;
	nsr_buf_init(&err, 0);
	if (nsr_jobd_update(j, id,
			    NSR_JOBDB_F_STATE | NSR_JOBDB_F_STATUS |
				    NSR_JOBDB_F_END | NSR_JOBDB_F_BYTES |
				    NSR_JOBDB_F_FILES |
				    (ssids ? NSR_JOBDB_F_SSIDS : 0),
			    &v, &err) != NSR_OK)
		nsr_warn("cannot update job %lld: %s", (long long)id, err.data);
	if (msg && *msg)
		nsr_jobd_log(j, id, msg, NULL);
	nsr_buf_release(&err);
}

/* job_finish - job_finish_on through the shared handle (RPC mutex held). */
static void job_finish(int64_t id, int ok, uint64_t bytes, uint64_t files,
		       const char *ssids, const char *msg)
{
	job_finish_on(open_jobd(), id, ok, bytes, files, ssids, msg);
}

/* find_created - after a create whose reply was lost: the in-progress
 * save set with ss's client, name and savetime, if the create did reach
 * the media database.  1 found (ss and *cloneid filled), 0 not, -1 the
 * media database cannot tell. */
static int find_created(struct mmdb_clnt *mc, struct mmdb_saveset *ss,
			uint32_t *cloneid)
{
	struct mmdb_ss_row rows[64];
	size_t got = 0;
	int done = 0, found = 0, rc;

	rc = mmdb_clnt_query_open(mc, "inprogress", 0, time(NULL));
	while (rc == NSR_OK && !done) {
		rc = mmdb_clnt_query_next_rows(mc, rows, 64, &got, &done);
		for (size_t i = 0; rc == NSR_OK && i < got && !found; i++) {
			const struct mmdb_saveset *x = &rows[i].ss;

			if (x->savetime == ss->savetime &&
			    strcmp(x->client, ss->client) == 0 &&
			    strcmp(x->name, ss->name) == 0) {
				*ss = *x;
				*cloneid = rows[i].clone.cloneid;
				found = 1;
			}
		}
	}
	return rc != NSR_OK ? -1 : found;
}

/* create_retry - after a create that failed with rc (answered: nsrmmdbd
 * replied, so it did not create): when the reply was lost the create may
 * or may not have been committed, so look for it before creating it
 * again.  A save set is never left in progress without a session that
 * owns it. */
static int create_retry(struct mmdb_clnt *mc, struct mmdb_saveset *ss,
			uint32_t *cloneid, int rc, int answered)
{
	for (int attempt = 0; attempt < 2 && rc != NSR_OK; attempt++) {
		int found;

		if (answered)
			return rc; /* nsrmmdbd answered: it did not create */
		found = find_created(mc, ss, cloneid);
		if (found < 0)
			return rc;
		if (found) {
			nsr_info("save set %u of %s:%s: its create was "
				 "committed before the media database's reply "
				 "was lost; not created twice", ss->ssid,
				 ss->client, ss->name);
			return NSR_OK;
		}
		rc = mmdb_clnt_ss_create(mc, ss, cloneid);
		answered = mmdb_clnt_answered(mc);
	}
	return rc;
}

/* create_saveset - MM_SS_CREATE, made safe to repeat (create_retry). */
static int create_saveset(struct mmdb_clnt *mc, struct mmdb_saveset *ss,
			  uint32_t *cloneid)
{
	int rc = mmdb_clnt_ss_create(mc, ss, cloneid);

	return create_retry(mc, ss, cloneid, rc, mmdb_clnt_answered(mc));
}

/* save_wait - SAVE_START's "not yet" (admit.c's nsrd_wait_answer) with
 * the kind of wait the client is told. */
static void save_wait(struct nsrd *n, save_start_res *r, struct nsrd_wait **w,
		      const struct nsrd_wait_ask *q, const char *why)
{
	if (nsrd_wait_answer(n, w, q, &r->st, &r->ticket, &r->retry_ms, "%s",
			     why) == NSR_ERR_WAIT)
		r->wait_kind = q->kind == NSRD_WAIT_VOLUME ? SAVE_WAIT_MOUNT
							   : SAVE_WAIT_QUEUED;
}

/* A dependent may still start this long after its master completed. */
#define PSS_LATE_DEPENDENT_SEC 600

/* pss_dependent - SAVE_START of a PSS dependent: its master (*m), in
 * progress or complete within PSS_LATE_DEPENDENT_SEC, of the same
 * client, named as the dependent's name says ("<index>" + the master's
 * name), with room for it. */
static int pss_dependent(struct mmdb_clnt *mc, const save_start_args *a,
			 struct mmdb_saveset *m, nsr_status *st)
{
	char want[MMDB_SSNAME_MAX + 16];
	int recent;

	if (mmdb_clnt_ss_get(mc, a->pss_master, m) != NSR_OK) {
		nsr_status_set(st, NSR_ERR_NOTFOUND, "PSS master save set %u "
			       "of dependent %s: %s", a->pss_master, a->name,
			       mmdb_clnt_errmsg(mc));
		return NSR_ERR_NOTFOUND;
	}
	snprintf(want, sizeof(want), "<%u>%s", a->pss_index, m->name);
	/* A small save point's master may be done before a dependent's
	 * start arrives: one complete a moment ago still takes it (the
	 * dependent then finds nothing left and ends empty). */
	recent = (m->flags & MMDB_SS_FINISHED) &&
		 !(m->flags & MMDB_SS_ABORTED) &&
		 m->sscomp >= time(NULL) - PSS_LATE_DEPENDENT_SEC;
	if (strcmp(m->client, a->client) != 0 || strcmp(want, a->name) != 0 ||
	    !((m->flags & MMDB_SS_INPROGRESS) || recent) || m->pssid != 0 ||
	    a->pss_index < 1 || a->pss_index >= NSR_PSS_STREAMS_MAX) {
		nsr_status_set(st, NSR_ERR_INVAL, "save set %u is no PSS "
			       "master in progress (or complete within %d s) "
			       "of %s for dependent %s (index 1 to 7, named "
			       "<index> and the master's name)",
			       a->pss_master, PSS_LATE_DEPENDENT_SEC,
			       a->client, a->name);
		return NSR_ERR_INVAL;
	}
	return NSR_OK;
}

/* Save set records are changed by reading, changing and writing back
 * the whole record (mmdb_clnt_ss_get, mmdb_clnt_ss_update): two changes
 * of one record at once would lose one of them.  SAVE_END's (end_db, run
 * without the RPC mutex) and a PSS dependent's naming in its master
 * (under it) do meet: a master that ends while a dependent starts, whose
 * naming then wrote the master back in progress (or the end wrote it back
 * without the new dependent).  Every such change holds the lock of its
 * save set's stripe from the read to the write; no RPC mutex is taken
 * while one is held. */
static struct nsr_stripes g_ss_stripes;
static pthread_once_t g_ss_stripes_once = PTHREAD_ONCE_INIT;

/* ss_stripes_init - the stripes' mutexes. */
static void ss_stripes_init(void)
{
	nsr_stripes_init(&g_ss_stripes);
}

/* ss_lock - hold save set ssid's record for a read-change-write. */
static void ss_lock(uint32_t ssid)
{
	pthread_once(&g_ss_stripes_once, ss_stripes_init);
	nsr_stripes_lock(&g_ss_stripes, nsr_stripe_of(&ssid, sizeof(ssid)));
}

/* ss_unlock - let ssid's record go. */
static void ss_unlock(uint32_t ssid)
{
	nsr_stripes_unlock(&g_ss_stripes, nsr_stripe_of(&ssid, sizeof(ssid)));
}

/* test_end_delay - the test knob NSR_TEST_SS_END_DELAY_MS (<= 5000):
 * SAVE_END sleeps between reading the save set and writing it back, so
 * a test can have a PSS dependent named in its master right then
 * (356-pss-master-ends). */
static void test_end_delay(void)
{
	nsr_test_pause("NSR_TEST_SS_END_DELAY_MS", 5000);
}

/* pss_name_dependent - the master names dependent d (in the order of
 * their indexes' arrival) and anchors at its earliest save time. */
static int pss_name_dependent(struct mmdb_clnt *mc,
			      const struct mmdb_saveset *m0,
			      const struct mmdb_saveset *d)
{
	struct mmdb_saveset m;
	int rc;

	ss_lock(m0->ssid);
	rc = mmdb_clnt_ss_get(mc, m0->ssid, &m);
	if (rc == NSR_OK && m.ndependents >= MMDB_PSS_MAX)
		rc = NSR_ERR_TOOBIG;
	if (rc == NSR_OK) {
		m.dependents[m.ndependents++] = d->ssid;
		if (m.anchor_time == 0 || d->savetime < m.anchor_time)
			m.anchor_time = d->savetime;
		rc = mmdb_clnt_ss_update(mc, &m);
	}
	ss_unlock(m0->ssid);
	return rc;
}

/* What SAVE_START's unlocked part works on: copies (nsrd.h invariant 3). */
struct save_create {
	const save_start_args *a;
	struct mmdb_saveset ss;		   /* in: to create; out: made */
	uint32_t cloneid;
	int64_t jobid;
	int job_done;	/* out: the batch recorded the job (jobid), or
			 * tried and must not be tried again (0) */
	const char *level, *device, *volume, *llog;
};

/* save_set_create - the save set of a starting save, in progress until
 * SAVE_END, through mc.  The caller holds its session slot (starting);
 * it may or may not hold the mutex.  NSR_OK, or an error with st set. */
static int save_set_create(struct mmdb_clnt *mc, struct save_create *c,
			   nsr_status *st)
{
	if (create_saveset(mc, &c->ss, &c->cloneid) != NSR_OK) {
		nsr_status_set(st, NSR_ERR_IO, "cannot create the save set "
			       "in the media database: %s",
			       mmdb_clnt_errmsg(mc));
		return NSR_ERR_IO;
	}
	return NSR_OK;
}

/* One start's save set in a batch (nsrd_create_batch). */
struct create_req {
	struct save_create *c;
	nsr_status *st;
	int nolane, closed;	/* out: no lane (stopping: closed) */
};

static void batch_jobs(struct nsrd *nd, struct batch_item **items,
		       size_t n);

/* nsrd_create_batch - see nsrd.h: the save sets of n starts, through
 * one lane's media database half, in one MM_SS_CREATE_MANY; when that
 * fails, each on its own (create_retry: a lost reply is looked for, not
 * created twice). */
void nsrd_create_batch(void *ctx, struct batch_item **items, size_t n)
{
	struct nsrd *nd = ctx;
	struct mmdb_saveset *ss; /* on the heap: workers' stacks are small */
	uint32_t cloneid[BATCH_MAX];
	struct lane *l;
	int closed = 0, rc, answered;

	l = lanes_get(&nd->lanes, LANE_MMDB, &closed);
	for (size_t i = 0; !l && i < n; i++) {
		struct create_req *q = items[i]->arg;

		q->nolane = 1;
		q->closed = closed;
		items[i]->rc = NSR_ERR_BUSY;
	}
	if (!l)
		return;
	ss = nsr_xcalloc(n, sizeof(*ss));
	for (size_t i = 0; i < n; i++)
		ss[i] = ((struct create_req *)items[i]->arg)->c->ss;
	rc = mmdb_clnt_ss_create_many(l->mmdb, ss, n, cloneid);
	answered = mmdb_clnt_answered(l->mmdb);
	for (size_t i = 0; i < n; i++) {
		struct create_req *q = items[i]->arg;
		struct save_create *c = q->c;

		if (rc == NSR_OK) {
			c->ss = ss[i];
			c->cloneid = cloneid[i];
		} else if (answered) { /* none was made: each on its own */
			items[i]->rc = save_set_create(l->mmdb, c, q->st);
			continue;
		} else if (create_retry(l->mmdb, &c->ss, &c->cloneid, rc,
					0) != NSR_OK) {
			nsr_status_set(q->st, NSR_ERR_IO, "cannot create the "
				       "save set in the media database: %s",
				       mmdb_clnt_errmsg(l->mmdb));
			items[i]->rc = NSR_ERR_IO;
			continue;
		}
		items[i]->rc = NSR_OK;
	}
	free(ss);
	lanes_put(&nd->lanes, l, LANE_MMDB);
	batch_jobs(nd, items, n);
}

/* One starting save's job as it goes to nsrjobd: the record and its
 * first log lines, with the text they point into. */
struct save_job {
	struct nsr_jobdb_job job;
	char ssid[16];
	struct nsr_buf first;
	const char *lines[2];
	size_t nlines;
};

/* save_job_make - c's job: "saving C:N to volume V on D", and the level
 * line when nsrd changed the level; release with save_job_free. */
static void save_job_make(struct save_job *sj, const struct save_create *c)
{
	const save_start_args *a = c->a;

	snprintf(sj->ssid, sizeof(sj->ssid), "%u", c->ss.ssid);
	nsr_buf_init(&sj->first, 0);
	sj->nlines = 0;
	if (nsr_buf_addf(&sj->first, "saving %s:%s to volume %s on %s",
			 a->client, a->name, c->volume, c->device) == NSR_OK) {
		sj->lines[sj->nlines++] = sj->first.data;
		if (c->llog[0])
			sj->lines[sj->nlines++] = c->llog;
	}
	job_fill(&sj->job, nsrd_bootstrap_is(a->name)
				   ? NSR_JOBDB_TYPE_BOOTSTRAP_SAVE
				   : NSR_JOBDB_TYPE_SAVE,
		 a->client, a->name, c->level, a->pid, a->command, sj->ssid);
}

/* save_job_free - what save_job_make allocated. */
static void save_job_free(struct save_job *sj)
{
	nsr_buf_release(&sj->first);
}

/* save_job_create - the job of a starting save whose save set is made,
 * with its first log lines, through j: one call to nsrjobd and one
 * transaction there.  c->jobid is 0 if nsrjobd is away (logged). */
static void save_job_create(struct nsr_jobd *j, struct save_create *c)
{
	struct save_job sj;

	save_job_make(&sj, c);
	c->jobid = job_record(j, &sj.job, sj.lines, sj.nlines);
	save_job_free(&sj);
}

/* job_of_ssid - the id of the save job recorded for save set ssid, 0
 * when nsrjobd says there is none, or -1 when it cannot say (err says
 * why; a batch whose reply was lost: its jobs were recorded or not). */
static int64_t job_of_ssid(struct nsr_jobd *j, uint32_t ssid,
			   struct nsr_buf *err)
{
	const struct nsr_jobdb_job *job;
	char q[96];
	int64_t id = 0;
	int rc;

	snprintf(q, sizeof(q), ". type: save job; ssids: %u", ssid);
	rc = nsr_jobd_query_open_text(j, q, 0, err);
	while (rc == NSR_OK &&
	       (rc = nsr_jobd_query_next(j, &job, err)) == NSR_OK)
		if (!id)
			id = job->id;
	return rc == NSR_ERR_EOF ? id : -1;
}

/* batch_jobs - the jobs of the starts of a batch whose save sets were
 * made, with their first lines, in one JOB_CREATE_MANY through a lane's
 * jobs half (one transaction in nsrjobd instead of one each).  Each
 * recorded one, or one that may have been (the call failed on the way,
 * logged, and nsrjobd cannot say now whether it was: job id 0), is
 * job_done; after a lost reply each job is looked up by its save set, and
 * one nsrjobd says it has not is recorded on its own, as are all when
 * nsrjobd refused them (nothing made) or there is no lane
 * (save_create_unlocked). */
static void batch_jobs(struct nsrd *nd, struct batch_item **items, size_t n)
{
	struct save_job *sj = calloc(n, sizeof(*sj));
	struct nsr_jobdb_new *v = calloc(n, sizeof(*v));
	struct save_create **of = calloc(n, sizeof(*of));
	int64_t *ids = calloc(n, sizeof(*ids));
	struct nsr_buf err;
	struct lane *l = NULL;
	size_t m = 0;
	int closed = 0, answered = 0, rc;

	if (sj && v && of && ids)
		l = lanes_get(&nd->lanes, LANE_JOBD, &closed);
	for (size_t i = 0; l && i < n; i++) {
		struct save_create *c = ((struct create_req *)items[i]->arg)->c;

		if (items[i]->rc != NSR_OK)
			continue;
		save_job_make(&sj[m], c);
		v[m].job = &sj[m].job;
		v[m].lines = sj[m].lines;
		v[m].nlines = sj[m].nlines;
		of[m++] = c;
	}
	nsr_buf_init(&err, 0);
	if (m) {
		rc = nsr_jobd_create_many(l->jobd, v, m, ids, &answered,
					  &err);
		if (rc != NSR_OK)
			nsr_warn("cannot record the jobs of %zu starting "
				 "saves at once: %s%s", m, err.data,
				 answered ? "; each is recorded on its own"
					  : "");
		for (size_t k = 0; k < m; k++) {
			int64_t id = ids[k];

			if (rc != NSR_OK && !answered) {
				nsr_buf_reset(&err);
				id = job_of_ssid(l->jobd, of[k]->ss.ssid,
						 &err);
			}
			if (id < 0)
				nsr_warn("save set %u: nsrjobd cannot say now "
					 "whether its job was recorded: %s; "
					 "it is looked for again when the save "
					 "ends", of[k]->ss.ssid, err.data);
			of[k]->jobid = id > 0 ? id : 0;
			/* refused, or not there after all: made on its own */
			of[k]->job_done =
				rc == NSR_OK || (!answered && id != 0);
			save_job_free(&sj[k]);
		}
	}
	if (l)
		lanes_put(&nd->lanes, l, LANE_JOBD);
	nsr_buf_release(&err);
	free(ids);
	free(of);
	free(v);
	free(sj);
}

/* save_create_locked - the save set, then the job, under the RPC mutex
 * with the shared handles. */
static int save_create_locked(struct nsrd *n, struct save_create *c,
			      nsr_status *st)
{
	int rc = save_set_create(n->mmdb, c, st);

	if (rc == NSR_OK)
		save_job_create(open_jobd(), c);
	return rc;
}

/* create_job_alone - after a batch, unlocked: the job the batch could not
 * record (not job_done) through a lane's jobs half; 1 if it went there,
 * 0 if it is left for create_settle (no lane free of a stopping nsrd). */
static int create_job_alone(struct nsrd *n, struct create_req *q, int rc)
{
	struct lane *jl = NULL;
	int closed = 0;

	if (!q->nolane && rc == NSR_OK && !q->c->job_done)
		jl = lanes_get(&n->lanes, LANE_JOBD, &closed);
	if (!jl)
		return 0;
	save_job_create(jl->jobd, q->c);
	lanes_put(&n->lanes, jl, LANE_JOBD);
	return 1;
}

/* create_settle - back under the mutex after a batch (rc its result for
 * q, lane_job create_job_alone's): the job still missing through the
 * shared handle, or everything through it when the batch had no lane.
 * NSR_OK, or an error with q->st set (then no save set was made). */
static int create_settle(struct nsrd *n, struct create_req *q, int rc,
			 int lane_job)
{
	if (!q->nolane && rc == NSR_OK && !lane_job && !q->c->job_done)
		/* its job: the shared one */
		save_job_create(open_jobd(), q->c);
	if (!q->nolane)
		return rc;
	if (q->closed) { /* stop closes the shared handles next */
		nsr_status_set(q->st, NSR_ERR_BUSY, "nsrd is stopping: run the "
			       "save again once it is back");
		return NSR_ERR_BUSY;
	}
	return save_create_locked(n, q->c, q->st);
}

/* save_create_unlocked - the save set and then the job of one starting
 * save with the RPC mutex released: the save set in a batch with the
 * other starts' (n->creates), the job through a lane's half of its own
 * (nsrd.h invariants 1-3); under the mutex with the shared handles when
 * there is no lane (stopping, no memory).  Called (by a save asking
 * again, start_alone) and returns with the server's mutex held.  NSR_OK,
 * or an error with st set (then no save set was made). */
static int save_create_unlocked(struct nsrd *n, struct save_create *c,
				nsr_status *st)
{
	struct create_req q = {c, st, 0, 0};
	int rc, lane_job;

	nsr_rpc_server_unlock(n->d->srv);
	rc = batch_do(&n->creates, &q);
	lane_job = create_job_alone(n, &q, rc);
	nsr_rpc_server_lock(n->d->srv);
	return create_settle(n, &q, rc, lane_job);
}

/* nsrd_session_free - the slot is free; held answers may go on. */
void nsrd_session_free(struct nsrd *n, struct nsrd_session *s)
{
	if (!s->used)
		return;
	nsrd_tally_check(n);
	untally(n, s);
	s->used = 0;
	n->free_slots[n->nfree++] = (uint16_t)(s - n->sessions);
	n->sess_gen++;
	/* Every count is given back: nothing is missing any more. */
	if (--n->nlive == 0)
		n->tally_lost = 0;
	nsrd_tally_check(n);
	nsrd_admit_wake(n);
}

/*
 * One SAVE_START between its two parts under the RPC mutex.  The first
 * (start_first) checks the call, admits it and reserves its session, and
 * prepares its save set (c); the save set and job are then created
 * without the mutex; the second (start_last) fills the answer.  A burst
 * of starts goes through the starts' batches (nsrd_start_batch): one
 * thread runs the first part of every start of a batch in one hold of
 * the mutex, their creates in one MM_SS_CREATE_MANY and one
 * JOB_CREATE_MANY, and their second parts in one more hold, instead of
 * two hand-offs of the mutex per start between the workers.
 */
enum start_step {
	START_ANSWERED,	/* answered by the first part (refused, waits) */
	START_CREATE,	/* admitted: its save set and job to be created */
	START_ALONE,	/* a queued save asking again: its thread runs it
			 * (it may hold its answer, nsrd_admit_hold) */
	START_REFUSED	/* not authorized (nsr_rpc_authorize) */
};

struct start {
	struct nsrd *n;
	save_start_args *a;
	save_start_res *r;
	struct nsr_rpc_call *call;
	enum start_step step;
	struct nsrd_session *s;		/* its session, once reserved */
	struct nsrd_wait *w;		/* its wait, if it had one */
	struct mmdb_volume vol;
	struct mmdb_saveset master;	/* a PSS dependent's */
	struct nsr_level_decision ld;
	struct nsr_buf err, lmsg, llog;
	char poolbuf[sizeof(((struct mmdb_saveset *)0)->pool)];
	const char *pool;
	struct save_create c;
	char mhost[NSR_HOST_MAX + 1], devname[256];
	int port;
	/* in a batch: its create (nsrd_create_batch) and whether its job
	 * went through a lane of its own (create_job_alone) */
	struct create_req q;
	struct batch_item bi;
	int lane_job;
};

/* start_init - st for one call. */
static void start_init(struct start *st, struct nsrd *n, save_start_args *a,
		       save_start_res *r, struct nsr_rpc_call *call)
{
	memset(st, 0, sizeof(*st));
	st->n = n;
	st->a = a;
	st->r = r;
	st->call = call;
	r->pool = nsr_rpc_str("");
	r->volume = nsr_rpc_str("");
	r->mover_host = nsr_rpc_str("");
	r->level = nsr_rpc_str("");
	r->level_msg = nsr_rpc_str("");
	nsr_buf_init(&st->err, 0);
	nsr_buf_init(&st->lmsg, 0);
	nsr_buf_init(&st->llog, 0);
}

/* queued_again - under the mutex: is this start a queued save asking
 * again with its ticket (whose answer may be held: it runs alone)? */
static int queued_again(struct nsrd *n, const save_start_args *a)
{
	struct nsrd_wait *w = a->ticket ? nsrd_wait_find(n, a->ticket) : NULL;

	return w && w->kind == NSRD_WAIT_SLOT;
}

/* start_first - the first part, under the mutex: the call checked and
 * admitted (server, group and client parallelism, admit.c), a device and
 * its mover chosen, the level decided, the session reserved (starting,
 * counted: nsrd.h invariant 2) and its save set prepared in st->c; step
 * START_CREATE.  Anything else is answered in st->r (START_ANSWERED).
 * A queued save asking again may have its answer held here
 * (nsrd_admit_hold), so only its own thread runs it (start_alone). */
static void start_first(struct start *st)
{
	struct nsrd *n = st->n;
	save_start_args *a = st->a;
	save_start_res *r = st->r;
	struct mmdb_clnt *mc = n->mmdb;
	const struct nsr_res *client, *dev;
	struct nsrd_wait_ask q;
	int64_t latest = 0;
	int level;
	char why[NSR_MSG_MAX / 2], tmo[128], advice[256];

	st->step = START_ANSWERED;
	memset(&q, 0, sizeof(q));
	level = a->level[0] ? nsr_level_parse(a->level) : NSR_LEVEL_MANUAL;
	if (level < 0) {
		nsr_status_set(&r->st, NSR_ERR_INVAL,
			       "unknown level '%s' (use full, incr, 1-9)",
			       a->level);
		return;
	}
	if (a->pss_streams > NSR_PSS_STREAMS_MAX ||
	    (a->pss_streams && a->pss_master)) {
		nsr_status_set(&r->st, NSR_ERR_INVAL, "parallel save streams: "
			       "1 to %d streams per save point, and a save "
			       "set is a master or a dependent, not both",
			       NSR_PSS_STREAMS_MAX);
		return;
	}
	client = nsrd_res_find1(n, "NSR client", a->client);
	/* save -b, else the client's pool, else the selection criteria */
	st->pool = a->pool[0] ? a->pool
		   : client && nsr_res_get(client, "pool") &&
				   *nsr_res_get(client, "pool")
			   ? nsr_res_get(client, "pool")
			   : nsrd_pool_select(n, a->client, a->group, a->name,
					      a->level);
	/* a copy: resources may change while SAVE_START works unlocked */
	snprintf(st->poolbuf, sizeof(st->poolbuf), "%s", st->pool);
	st->pool = st->poolbuf;
	if (!nsrd_res_find1(n, "NSR pool", st->pool)) {
		nsr_status_set(&r->st, NSR_ERR_NOTFOUND,
			       "pool '%s' does not exist", st->pool);
		return;
	}
	/* Admission: server, group and client parallelism (admit.c). */
	if (a->group[0] && !nsrd_res_find1(n, "NSR group", a->group)) {
		nsr_status_set(&r->st, NSR_ERR_NOTFOUND, "group '%s' does not "
			       "exist: create it (nsradmin: create type: NSR "
			       "group; name: %s) or save without -g",
			       a->group, a->group);
		return;
	}
	q.client = a->client;
	q.group = a->group;
	q.name = a->name;
	q.pool = st->pool;
	q.what = "save";
	st->w = nsrd_wait_find(n, a->ticket);
	if (!nsrd_admit(n, st->w, a->client, a->group, why, sizeof(why)) &&
	    !(st->w && st->w->kind == NSRD_WAIT_SLOT &&
	      nsrd_admit_hold(n, a->ticket, a->client, a->group, why,
			      sizeof(why)))) {
		st->w = nsrd_wait_find(n, a->ticket); /* the hold let go */
		q.kind = NSRD_WAIT_SLOT;
		save_wait(n, r, &st->w, &q, why);
		return;
	}
	st->w = nsrd_wait_find(n, a->ticket);
	dev = pick_device(n, mc, st->pool, NULL, &st->vol, &r->st);
	if (!dev && r->st.code == NSR_ERR_NOTFOUND &&
	    nsrd_auto_recycle(n, st->pool)) /* media.c */
		dev = pick_device(n, mc, st->pool, NULL, &st->vol, &r->st);
	if (!dev && r->st.code == NSR_ERR_NOTFOUND) {
		/* A mount request: wait for a volume, up to the timeout. */
		snprintf(tmo, sizeof(tmo), "no writable volume of pool '%s' "
			 "was mounted", st->pool);
		snprintf(advice, sizeof(advice), "label one (nsrmm -l -b '%s' "
			 "-f DEVICE) or mount one (nsrmm -m VOLUME), then run "
			 "the save again", st->pool);
		q.kind = NSRD_WAIT_VOLUME;
		q.timed_out = tmo;
		q.advice = advice;
		save_wait(n, r, &st->w, &q, r->st.msg);
		return;
	}
	if (!dev && r->st.code == NSR_ERR_BUSY) {
		/* The pool's devices are at max sessions: queued. */
		q.kind = NSRD_WAIT_DEVICE;
		save_wait(n, r, &st->w, &q, r->st.msg);
		return;
	}
	if (!dev)
		return;
	/* What a level save builds on (level.c), once it may start; a PSS
	 * dependent follows its master. */
	if (a->pss_master) {
		if (pss_dependent(mc, a, &st->master, &r->st) != NSR_OK)
			return;
		memset(&st->ld, 0, sizeof(st->ld));
		st->ld.level = st->master.level;
	} else if (nsrd_level_decide(n, a->client, a->name, (unsigned)level,
				     a->pss_streams, &st->ld, &latest,
				     &st->lmsg, &st->llog) != NSR_OK) {
		nsr_status_set(&r->st, NSR_ERR_IO, "cannot read the earlier "
			       "save sets of %s:%s from the media database: "
			       "%s", a->client, a->name, mmdb_clnt_errmsg(mc));
		return;
	}
	level = (int)st->ld.level;
	st->s = new_session(n, st->call);
	if (!st->s) {
		nsr_status_set(&r->st, NSR_ERR_LIMIT, "too many sessions");
		return;
	}
	/* Counted against its client, group and device from here on, also
	 * while it works unlocked (nsrd.h invariant 2). */
	snprintf(st->s->client, sizeof(st->s->client), "%s", a->client);
	snprintf(st->s->group, sizeof(st->s->group), "%s", a->group);
	snprintf(st->s->device, sizeof(st->s->device), "%s",
		 nsr_res_get(dev, "name"));
	nsrd_session_tally(n, st->s);
	if (nsrd_device_mover(n, dev, st->mhost, sizeof(st->mhost), &st->port,
			      &st->s->mover_pid, &st->err) != NSR_OK) {
		nsr_status_set(&r->st, NSR_ERR_CONNECT,
			    "cannot get the data mover of device '%s': %s",
			    nsr_res_get(dev, "name"), st->err.data);
		return;
	}
	nsrd_session_tally(n, st->s); /* and in its mover's load */

	/* The save set, in progress until SAVE_END. */
	st->c.a = a;
	snprintf(st->c.ss.client, sizeof(st->c.ss.client), "%s", a->client);
	snprintf(st->c.ss.name, sizeof(st->c.ss.name), "%s", a->name);
	snprintf(st->c.ss.pool, sizeof(st->c.ss.pool), "%s", st->pool);
	snprintf(st->c.ss.group, sizeof(st->c.ss.group), "%s", a->group);
	st->c.ss.level = (uint8_t)level;
	st->c.ss.flags = MMDB_SS_INPROGRESS;
	st->c.ss.savetime = a->savetime ? a->savetime : time(NULL);
	if (a->pss_master) {
		st->c.ss.savetime = st->master.savetime - a->pss_index;
		st->c.ss.pssid = st->master.ssid;
	} else if (a->pss_streams > 0) {
		/* Its dependents' times (this one's - 1 ..) after all
		 * earlier ones: a browse orders the backups by time. */
		st->c.ss.savetime = NSR_MAX(st->c.ss.savetime,
					    latest + (int64_t)a->pss_streams);
	}
	st->c.ss.sscreate = time(NULL);
	nsrd_expiry_new(n, a->client, st->pool, a->browse_time,
			a->retention_time, &st->c.ss); /* expire.c */
	st->c.level = nsr_level_name((unsigned)level);
	snprintf(st->devname, sizeof(st->devname), "%s", st->s->device);
	st->c.device = st->devname;
	st->c.volume = st->vol.name;
	st->c.llog = st->llog.len ? st->llog.data : "";
	/* Its wait is over: it holds its slot as a session now (admit.c
	 * invariant 3), and the wait table may change while unlocked. */
	if (st->w)
		nsrd_wait_end(n, st->w, "satisfied");
	st->w = NULL;
	st->s->starting = 1;
	st->step = START_CREATE;
}

/* start_end - under the mutex, last: a start not admitted frees its
 * session (no save set), a wait it had ends; its buffers go. */
static void start_end(struct start *st)
{
	if (st->s)
		nsrd_session_free(st->n, st->s); /* not admitted */
	st->s = NULL;
	if (st->w) /* it waited: over now */
		nsrd_wait_end(st->n, st->w,
			      st->r->st.code == NSR_OK ? "satisfied"
						       : "failed");
	st->w = NULL;
	nsr_buf_release(&st->err);
	nsr_buf_release(&st->lmsg);
	nsr_buf_release(&st->llog);
}

/* start_last - under the mutex after the create (rc): the session
 * admitted and the answer filled, or, on an error, freed; then
 * start_end. */
static void start_last(struct start *st, int rc)
{
	struct nsrd *n = st->n;
	save_start_args *a = st->a;
	save_start_res *r = st->r;
	struct mmdb_saveset *ss = &st->c.ss;

	st->s->starting = 0;
	if (rc != NSR_OK) {
		start_end(st);
		return;
	}
	/* Under the mutex: a read-modify-write of the master's record,
	 * which its dependents starting at once must not interleave. */
	if (a->pss_master &&
	    pss_name_dependent(n->mmdb, &st->master, ss) != NSR_OK)
		nsr_warn("save set %u: cannot name it a dependent of PSS "
			 "master %u in the media database: %s", ss->ssid,
			 st->master.ssid, mmdb_clnt_errmsg(n->mmdb));
	st->s->ssid = ss->ssid;
	st->s->jobid = st->c.jobid;

	r->ssid = ss->ssid;
	r->cloneid = st->c.cloneid;
	memcpy(r->longid, ss->longid, 16);
	r->jobid = st->s->jobid;
	r->savetime = ss->savetime;
	r->browse_time = ss->ssbrowse;
	r->retention_time = ss->ssretent;
	free(r->pool);
	r->pool = nsr_rpc_str(st->pool);
	free(r->volume);
	r->volume = nsr_rpc_str(st->vol.name);
	memcpy(r->volid, st->vol.volid, 16);
	/* mover_host "" = the host the client reached us on */
	free(r->mover_host);
	r->mover_host = nsr_rpc_str(st->mhost);
	r->mover_port = st->port;
	nsrd_grant(NSR_GRANT_WRITE, ss->ssid, &r->grant);
	free(r->level);
	r->level = nsr_rpc_str(nsr_level_name(ss->level));
	r->since = st->ld.since;
	r->since_ssid = st->ld.ref_ssid;
	free(r->level_msg);
	r->level_msg = nsr_rpc_str(st->lmsg.data);
	if (st->lmsg.len)
		nsr_info("save set %u: %s", ss->ssid, st->lmsg.data);
	nsr_status_set(&r->st, NSR_OK, "%s", "");
	nsr_info("save of %s:%s admitted: ssid %u, job %lld, volume %s on %s",
		 a->client, a->name, ss->ssid, (long long)st->s->jobid,
		 st->vol.name, st->s->device);
	st->s = NULL; /* admitted: the session lives on */
	start_end(st);
}

/* start_alone - a queued save asking again, by its own thread, the
 * mutex held: the first part (its answer held if need be), its create
 * through n->creates, the second part. */
static void start_alone(struct start *st)
{
	start_first(st);
	if (st->step == START_CREATE)
		start_last(st, save_create_unlocked(st->n, &st->c,
						    &st->r->st));
	else
		start_end(st);
}

/* nsrd_start_batch - see nsrd.h: the run function of n->starts. */
void nsrd_start_batch(void *ctx, struct batch_item **items, size_t n)
{
	struct nsrd *nd = ctx;
	struct batch_item *v[BATCH_MAX];
	size_t m = 0;

	/* A line per start, written together when the mutex is let go
	 * (not held over the creates, which may wait for a database). */
	nsr_log_hold();
	nsr_rpc_server_lock(nd->d->srv);
	for (size_t i = 0; i < n; i++) {
		struct start *st = items[i]->arg;

		if (queued_again(nd, st->a))
			st->step = START_ALONE;
		else if (nsr_rpc_authorize(st->call, st->a) != NSR_OK)
			st->step = START_REFUSED;
		else
			start_first(st);
		if (st->step == START_ANSWERED)
			start_end(st);
		if (st->step != START_CREATE)
			continue;
		st->q.c = &st->c;
		st->q.st = &st->r->st;
		st->bi.arg = &st->q;
		v[m++] = &st->bi;
	}
	nsr_rpc_server_unlock(nd->d->srv);
	nsr_log_release();
	/* The admitted ones' save sets and jobs, in one batch each. */
	if (m)
		nsrd_create_batch(nd, v, m);
	for (size_t i = 0; i < n; i++) {
		struct start *st = items[i]->arg;

		if (st->step == START_CREATE)
			st->lane_job = create_job_alone(nd, &st->q, st->bi.rc);
	}
	nsr_log_hold();
	nsr_rpc_server_lock(nd->d->srv);
	for (size_t i = 0; i < n; i++) {
		struct start *st = items[i]->arg;

		if (st->step == START_CREATE)
			start_last(st, create_settle(nd, &st->q, st->bi.rc,
						     st->lane_job));
	}
	nsr_rpc_server_unlock(nd->d->srv);
	nsr_log_release(); /* before any of them is answered */
}

/* nsrd_save_start - SAVE_START: admit a save and say where to stream.
 * NSR_RPC_LOCKS_ITSELF: called without the RPC mutex; its parts run in a
 * batch of starts (nsrd_start_batch), a queued save asking again by its
 * own thread (start_alone). */
int nsrd_save_start(void *ctx, void *argp, void *resp,
		    struct nsr_rpc_call *call)
{
	struct nsrd *n = ctx;
	struct start *st = calloc(1, sizeof(*st)); /* workers' stacks */

	if (!st)
		return NSR_ERR_NOMEM;
	start_init(st, n, argp, resp, call);
	batch_do(&n->starts, st);
	if (st->step == START_ALONE) {
		nsr_rpc_server_lock(n->d->srv);
		if (nsr_rpc_authorize(call, argp) != NSR_OK)
			st->step = START_REFUSED;
		else
			start_alone(st);
		nsr_rpc_server_unlock(n->d->srv);
	}
	if (st->step == START_REFUSED) {
		start_end(st);
		free(st);
		return NSR_RPC_REFUSED;
	}
	free(st);
	return NSR_OK;
}

/* next_exclude - the volumes save set ssid may not go on to: the full
 * one and every volume holding a fragment of any copy of it (a clone
 * spanning must not put its tail beside another copy: a save set gets at
 * most one copy per volume), into excl (16 bytes each), their count into
 * *n.  NSR_OK, or the media database's error in st. */
static int next_exclude(struct nsrd *n, uint32_t ssid, const uint8_t full[16],
			uint8_t *excl, size_t *nexcl, nsr_status *st)
{
	struct mmdb_fragment fr[MMDB_FRAGS_MAX];
	size_t nf = 0;

	memcpy(excl, full, 16);
	*nexcl = 1;
	if (nsrd_frags(n, ssid, fr, &nf, st) != NSR_OK)
		return NSR_ERR_IO;
	for (size_t i = 0; i < nf; i++)
		memcpy(excl + 16 * (*nexcl)++, fr[i].volid, 16);
	return NSR_OK;
}

/* nsrd_next_volume - NEXT_VOLUME: the volume of save set a->ssid filled
 * up (its client, or nsrclone for a copy, asks); choose the next
 * writable volume of the pool (as SAVE_START does, never the full one
 * nor one holding a copy of the save set) and hand back its device's
 * mover. */
int nsrd_next_volume(void *ctx, void *argp, void *resp,
		     struct nsr_rpc_call *call)
{
	struct nsrd *n = ctx;
	next_vol_args *a = argp;
	next_vol_res *r = resp;
	struct mmdb_clnt *mc = NULL;
	const struct nsr_res *dev;
	struct mmdb_volume vol;
	struct nsr_buf err;
	uint8_t excl[(MMDB_FRAGS_MAX + 1) * 16];
	size_t nexcl;
	char mhost[NSR_HOST_MAX + 1] = "";
	int port = 0;
	pid_t mpid = 0;

	NSR_UNUSED(call);
	r->volume = nsr_rpc_str("");
	r->device = nsr_rpc_str("");
	r->mover_host = nsr_rpc_str("");
	nsr_buf_init(&err, 0);
	/* A volume filled: what nsrd remembers of volumes is out of date. */
	devcache_vol_forget(NULL);
	mc = n->mmdb;
	if (next_exclude(n, a->ssid, (const uint8_t *)a->exclude, excl,
			 &nexcl, &r->st) != NSR_OK)
		goto out;
	dev = pick_device_in(n, mc, a->pool, excl, nexcl, &vol, &r->st);
	/* Auto media management, as at SAVE_START: a recyclable volume
	 * holds no part or copy of this save set (it would not be
	 * recyclable), so it may take the rest. */
	if (!dev && r->st.code == NSR_ERR_NOTFOUND &&
	    nsrd_auto_recycle(n, a->pool)) /* media.c */
		dev = pick_device_in(n, mc, a->pool, excl, nexcl, &vol,
				     &r->st);
	if (!dev) {
		nsr_status_set(
			&r->st, NSR_ERR_NOTFOUND,
			"no writable volume of pool '%s' left for save set "
			"%u%s: label one with: nsrmm -l -b '%s' -f DEVICE",
			a->pool, a->ssid, nexcl > 1 ? " (volumes that hold "
			"part or a copy of it do not count)" : "", a->pool);
		goto out;
	}
	if (nsrd_device_mover(n, dev, mhost, sizeof(mhost), &port, &mpid,
			      &err) != NSR_OK) {
		nsr_status_set(&r->st, NSR_ERR_CONNECT,
			       "save set %u continues on volume %s, but the "
			       "data mover of "
			       "device '%s' is not available: %s",
			       a->ssid, vol.name, nsr_res_get(dev, "name"),
			       err.data);
		goto out;
	}
	for (int i = 0; i < NSRD_MAX_SESSIONS; i++) {
		struct nsrd_session *s = &n->sessions[i];

		if (s->used && !s->starting && !s->recover &&
		    s->ssid == a->ssid) {
			snprintf(s->device, sizeof(s->device), "%s",
				 nsr_res_get(dev, "name"));
			s->mover_pid = mpid;
			nsrd_session_tally(n, s);
		}
	}
	free(r->volume);
	r->volume = nsr_rpc_str(vol.name);
	memcpy(r->volid, vol.volid, 16);
	free(r->device);
	r->device = nsr_rpc_str(nsr_res_get(dev, "name"));
	/* "" = the mover is on this server: the asking client reaches it
	 * under the server's name, as it reaches nsrd. */
	free(r->mover_host);
	r->mover_host = nsr_rpc_str(mhost);
	r->mover_port = port;
	nsr_status_set(&r->st, NSR_OK, "%s", "");
	nsr_info("save set %u continues on volume %s in device %s", a->ssid,
		 vol.name, nsr_res_get(dev, "name"));
out:
	nsr_buf_release(&err);
	return NSR_OK;
}

/* ended_again - SAVE_END of a save set no longer in progress: a repeated
 * end, or one that comes after the session was settled (the client could
 * not renew its lease).  1 = record it as the client says (complete
 * stays complete, and becomes browsable if the index is there); 0 = the
 * answer is in st: a failed end changes nothing, and a save set settled
 * as aborted is never reported complete to a client that did not see it
 * so. */
static int ended_again(const save_end_args *a, const struct mmdb_saveset *ss,
		       nsr_status *st)
{
	int ok = a->status == 0 || a->status == SAVE_END_NOINDEX;

	if (ok && !(ss->flags & MMDB_SS_ABORTED))
		return 1;
	if (!ok)
		nsr_status_set(st, NSR_OK, "%s", "");
	else
		nsr_status_set(st, NSR_ERR_STATE, "save set %u was settled as "
			       "aborted while this client did not renew its "
			       "lease (see the server's log): it is not "
			       "complete, save it again", a->ssid);
	return 0;
}

/* end_record - save set a->ssid's record complete or aborted, read,
 * changed and written back under its lock (nsrd.h invariant 3a) into
 * *ss.  1 when written; 0 when st holds the answer and there is nothing
 * more to do. */
static int end_record(struct mmdb_clnt *mc, const save_end_args *a,
		      struct mmdb_saveset *ss, nsr_status *st)
{
	int ok = a->status == 0 || a->status == SAVE_END_NOINDEX;
	int written = 0;

	ss_lock(a->ssid);
	if (mmdb_clnt_ss_get(mc, a->ssid, ss) != NSR_OK) {
		nsr_status_set(st, NSR_ERR_NOTFOUND,
			       "save set %u is not in the media database: %s",
			       a->ssid, mmdb_clnt_errmsg(mc));
	} else if ((ss->flags & MMDB_SS_INPROGRESS) ||
		   ended_again(a, ss, st)) {
		test_end_delay();
		ss->flags &= ~(uint32_t)MMDB_SS_INPROGRESS;
		ss->sscomp = time(NULL);
		ss->totalsize = a->totalsize;
		ss->nfiles = a->nfiles;
		if (ok)
			ss->flags |= MMDB_SS_FINISHED | MMDB_SS_VALID |
				     (a->status == 0 ? MMDB_SS_BROWSABLE : 0);
		else
			ss->flags |= MMDB_SS_ABORTED | MMDB_SS_INCOMPLETE;
		written = mmdb_clnt_ss_update(mc, ss) == NSR_OK;
		if (!written)
			nsr_status_set(st, NSR_ERR_IO,
				       "cannot complete save set %u: %s",
				       a->ssid, mmdb_clnt_errmsg(mc));
	}
	ss_unlock(a->ssid);
	return written;
}

/* end_db - SAVE_END's database work through mc and j: the save set
 * complete or aborted, its job closed, a log line; r answered.  Touches
 * nothing of struct nsrd (it may run with the RPC mutex released). */
static void end_db(struct mmdb_clnt *mc, struct nsr_jobd *j,
		   const save_end_args *a, nsr_void_res *r)
{
	struct mmdb_saveset ss;
	char ssidtxt[32], done[4096];
	int ok = a->status == 0 || a->status == SAVE_END_NOINDEX;
	int browsable = a->status == 0;
	int64_t jobid = a->jobid;

	if (!end_record(mc, a, &ss, &r->st))
		return;
	snprintf(ssidtxt, sizeof(ssidtxt), "%u", a->ssid);
	/* A save that started without a job id may have one all the same
	 * (nsrjobd could not say at the start whether a batch recorded
	 * it): looked up by its save set. */
	if (!jobid && j) {
		struct nsr_buf err;

		nsr_buf_init(&err, 0);
		jobid = job_of_ssid(j, a->ssid, &err);
		if (jobid > 0)
			nsr_info("save set %u: its job %lld, found by its "
				 "save set, is completed with it", a->ssid,
				 (long long)jobid);
		nsr_buf_release(&err);
	}
	/* a complete save's message says how it went (read size, a
	 * pipeline command's end): after the verdict */
	snprintf(done, sizeof(done), "%s%s%s",
		 browsable ? "save completed"
		 : nsrd_bootstrap_is(ss.name)
			   ? "bootstrap save completed (no file index "
			     "entries, by design)"
			   : "save completed, but its file index entries "
			     "were lost: recover it by save set id",
		 a->msg[0] ? "; " : "", a->msg);
	job_finish_on(j, jobid > 0 ? jobid : 0, ok, a->totalsize, a->nfiles,
		      ssidtxt, !ok ? a->msg : done);
	nsr_info("save set %u of %s:%s %s (%llu bytes, %llu files)%s%s",
		 a->ssid, ss.client, ss.name, ok ? "completed" : "FAILED",
		 (unsigned long long)a->totalsize,
		 (unsigned long long)a->nfiles, ok ? "" : ": ",
		 ok ? "" : a->msg);
	nsr_status_set(&r->st, NSR_OK, "%s", "");
}

/* nsrd_save_end - SAVE_END: mark the save set complete (or aborted) and
 * close the job, with the RPC mutex released (nsrd.h invariant 2: the
 * session is marked ending meanwhile), through a lane's two halves, so
 * that the ends of many saves share nsrmmdbd's group commits and no
 * start waits behind their commits; under the mutex with the shared
 * handles when there is no lane (stopping) or no server (tests).  The
 * call that marked the session frees its slot. */
int nsrd_save_end(void *ctx, void *argp, void *resp, struct nsr_rpc_call *call)
{
	struct nsrd *n = ctx;
	save_end_args *a = argp;
	nsr_void_res *r = resp;
	struct nsrd_session *s = find_session(n, a->jobid, a->ssid);
	int ok = a->status == 0 || a->status == SAVE_END_NOINDEX;
	struct lane *ml = NULL, *jl = NULL;
	int closed = 0;

	NSR_UNUSED(call);
	/* A failed save may have filled its volume (the pool had no other
	 * to go on to): what nsrd remembers of volumes is read again. */
	if (!ok)
		devcache_vol_forget(NULL);
	if (s && s->ending)
		s = NULL; /* another call ends it: this one only answers */
	if (s)
		s->ending = 1;
	if (n->d && n->d->srv) {
		nsr_rpc_server_unlock(n->d->srv);
		/* the media half before the jobs half, as everywhere */
		ml = lanes_get(&n->lanes, LANE_MMDB, &closed);
		if (ml)
			jl = lanes_get(&n->lanes, LANE_JOBD, &closed);
		if (ml && jl)
			end_db(ml->mmdb, jl->jobd, a, r);
		if (jl)
			lanes_put(&n->lanes, jl, LANE_JOBD);
		if (ml)
			lanes_put(&n->lanes, ml, LANE_MMDB);
		nsr_rpc_server_lock(n->d->srv);
	}
	if (!jl)
		end_db(n->mmdb, open_jobd(), a, r);
	if (s) {
		s->ending = 0;
		nsrd_session_free(n, s);
	}
	return NSR_OK;
}

/* device_with_volume - the enabled device that has volume mounted. */
static const struct nsr_res *device_with_volume(struct nsrd *n,
						const char *volume)
{
	struct nsr_res *q = nsr_res_new();
	const struct nsr_res *dev = NULL;
	long i;

	nsr_res_set1(q, "type", "NSR device");
	nsr_res_set1(q, "volume name", volume);
	i = nsr_resdb_find(n->res, q, 0);
	if (i >= 0)
		dev = nsr_resdb_at(n->res, (size_t)i);
	nsr_res_free(q);
	return dev;
}

/* rec_wait - RECOVER_START's "not yet": volume (of save set a->ssid) is
 * not mounted, a mount request, up to the mount timeout; *w is the wait
 * (NULL afterwards: it stays, or it ended). */
static void rec_wait(struct nsrd *n, const rec_start_args *a,
		     rec_start_res *r, struct nsrd_wait **w,
		     const char *volume)
{
	char what[32], tmo[512], advice[512];
	struct nsrd_wait_ask q;

	snprintf(what, sizeof(what), "save set %u", a->ssid);
	snprintf(tmo, sizeof(tmo), "volume %s (holding save set %u) was not "
		 "mounted", volume, a->ssid);
	snprintf(advice, sizeof(advice), "mount it (nsrmm -m %s -f DEVICE), "
		 "then run the recover again", volume);
	memset(&q, 0, sizeof(q));
	q.kind = NSRD_WAIT_READ;
	q.client = a->client;
	q.group = "";
	q.name = what;
	q.pool = volume;
	q.what = "recover";
	q.timed_out = tmo;
	q.advice = advice;
	nsrd_wait_answer(n, w, &q, &r->st, &r->ticket, &r->retry_ms,
			 "volume %s (holding save set %u) is not mounted; "
			 "mount it with: nsrmm -m %s -f DEVICE", volume,
			 a->ssid, volume);
}

/* nsrd_recover_start - RECOVER_START: fragments of a save set and its
 * volume's mover. */
int nsrd_recover_start(void *ctx, void *argp, void *resp,
		       struct nsr_rpc_call *call)
{
	struct nsrd *n = ctx;
	rec_start_args *a = argp;
	rec_start_res *r = resp;
	struct mmdb_clnt *mc = NULL;
	const struct nsr_res *dev = NULL;
	struct mmdb_saveset ss;
	struct nsrd_session *s;
	struct nsrd_copy cp;
	struct nsr_buf err;
	char mhost[NSR_HOST_MAX + 1] = "";
	int port = 0, rc;
	pid_t rpid = 0;
	struct nsrd_wait *wt = nsrd_wait_find(n, a->ticket);

	memset(&cp, 0, sizeof(cp));
	r->ss_client = nsr_rpc_str("");
	r->ss_name = nsr_rpc_str("");
	r->mover_host = nsr_rpc_str("");
	r->clone_msg = nsr_rpc_str("");
	nsr_buf_init(&err, 0);
	mc = n->mmdb;
	if (mmdb_clnt_ss_get(mc, a->ssid, &ss) != NSR_OK) {
		nsr_status_set(&r->st, NSR_ERR_NOTFOUND,
			       "save set %u is not in the media "
			       "database",
			       a->ssid);
		goto out;
	}
	if (nsrd_authz_client(n, call, ss.client, "recover", &err)) {
		nsr_status_set(&r->st, NSR_ERR_PERM, "%s", err.data);
		goto out;
	}
	r->pss_dependents.pss_dependents_val =
		nsr_xcalloc(MMDB_PSS_MAX, sizeof(u_int));
	for (uint32_t i = 0; i < ss.ndependents && i < MMDB_PSS_MAX; i++)
		r->pss_dependents.pss_dependents_val[i] = ss.dependents[i];
	r->pss_dependents.pss_dependents_len =
		NSR_MIN(ss.ndependents, (uint32_t)MMDB_PSS_MAX);
	if (!(ss.flags & MMDB_SS_FINISHED)) {
		nsr_status_set(&r->st, NSR_ERR_STATE,
			       "save set %u (%s:%s) is %s; only "
			       "complete save sets can be recovered",
			       a->ssid, ss.client, ss.name,
			       (ss.flags & MMDB_SS_INPROGRESS)
				       ? "still in progress"
				       : "incomplete (aborted)");
		goto out;
	}
	/* Which copy: clone.c. */
	rc = nsrd_copy_pick(n, a->ssid, a->cloneid, a->skip_cloneid, &cp,
			    &r->st);
	if (rc == NSR_ERR_WAIT) {
		rec_wait(n, a, r, &wt, cp.wait_volume);
		goto out;
	}
	if (rc != NSR_OK)
		goto out;
	r->frags.frags_val = cp.frags;
	r->frags.frags_len = cp.nfrags;
	cp.frags = NULL;
	dev = cp.dev;
	port = cp.port;
	rpid = cp.pid;
	snprintf(mhost, sizeof(mhost), "%s", cp.mhost);
	r->cloneid = cp.cloneid;
	free(r->clone_msg);
	r->clone_msg = nsr_rpc_str(cp.msg);
	if (cp.msg[0])
		nsr_info("recover of save set %u: %s", a->ssid, cp.msg);
	s = new_session(n, call);
	if (!s) {
		nsr_status_set(&r->st, NSR_ERR_LIMIT, "too many sessions");
		goto out;
	}
	s->recover = 1;
	s->mover_pid = rpid;
	s->ssid = a->ssid;
	snprintf(s->client, sizeof(s->client), "%s", a->client);
	snprintf(s->device, sizeof(s->device), "%s", nsr_res_get(dev, "name"));
	nsrd_session_tally(n, s);
	s->jobid = job_create(open_jobd(), NSR_JOBDB_TYPE_RECOVER, a->client,
			      ss.name, NULL, a->pid, a->command, NULL, NULL, 0);
	r->jobid = s->jobid;
	free(r->ss_client);
	free(r->ss_name);
	r->ss_client = nsr_rpc_str(ss.client);
	r->ss_name = nsr_rpc_str(ss.name);
	r->savetime = ss.savetime;
	r->totalsize = ss.totalsize;
	free(r->mover_host);
	r->mover_host = nsr_rpc_str(mhost);
	r->mover_port = port;
	nsrd_grant(NSR_GRANT_READ, a->ssid, &r->grant);
	nsr_status_set(&r->st, NSR_OK, "%s", "");
	nsr_info("recover of save set %u (%s:%s) for %s: job %lld, device %s",
		 a->ssid, ss.client, ss.name, a->client, (long long)s->jobid,
		 s->device);
out:
	if (wt) /* it waited: over now */
		nsrd_wait_end(n, wt, r->st.code == NSR_OK ? "satisfied"
							  : "failed");
	nsrd_copy_release(&cp);
	nsr_buf_release(&err);
	return NSR_OK;
}

/* nsrd_recover_end - RECOVER_END: close the recover job. */
int nsrd_recover_end(void *ctx, void *argp, void *resp,
		     struct nsr_rpc_call *call)
{
	struct nsrd *n = ctx;
	rec_end_args *a = argp;
	nsr_void_res *r = resp;
	struct nsrd_session *s = find_session(n, a->jobid, 0);

	NSR_UNUSED(call);
	job_finish(a->jobid, a->status == 0, a->bytes, a->files, NULL,
		   a->status == 0 ? "recover completed" : a->msg);
	if (s)
		nsrd_session_free(n, s);
	nsr_status_set(&r->st, NSR_OK, "%s", "");
	return NSR_OK;
}

/* settle_save - the fate of a save whose owner is gone: complete if the
 * mover recorded all of it (a complete or tail fragment), else aborted
 * with the reason.  0 = settled, -1 = the media database could not be
 * asked: try again at a later tick. */
static int settle_save(struct nsrd *n, struct nsrd_session *s,
		       const char *why)
{
	struct mmdb_fragment frags[MMDB_FRAGS_MAX];
	struct mmdb_saveset ss;
	uint64_t bytes = 0;
	size_t nf = 0;
	int complete = 0, rc;
	char msg[512];

	ss_lock(s->ssid);
	rc = mmdb_clnt_ss_get(n->mmdb, s->ssid, &ss);
	if (rc == NSR_OK && !(ss.flags & MMDB_SS_INPROGRESS))
		rc = NSR_ERR_NOTFOUND; /* its SAVE_END came after all */
	if (rc == NSR_OK &&
	    mmdb_clnt_frag_list(n->mmdb, s->ssid, frags, MMDB_FRAGS_MAX,
				&nf) != NSR_OK)
		rc = NSR_ERR_IO;
	if (rc != NSR_OK) {
		ss_unlock(s->ssid);
		return rc == NSR_ERR_NOTFOUND ? 0 : -1;
	}
	for (size_t i = 0; i < nf && i < MMDB_FRAGS_MAX; i++) {
		bytes += frags[i].size;
		if (frags[i].flags & (MMDB_FRAG_COMPLETE | MMDB_FRAG_TAIL))
			complete = 1;
	}
	ss.flags &= ~(uint32_t)MMDB_SS_INPROGRESS;
	ss.sscomp = time(NULL);
	if (complete) {
		ss.flags |= MMDB_SS_FINISHED | MMDB_SS_VALID;
		ss.totalsize = bytes;
		snprintf(msg, sizeof(msg), "%s after its data mover had made "
			 "all of it durable (%llu bytes): settled as complete, "
			 "but its file index entries may be missing (recover "
			 "it with recover -S %u)", why,
			 (unsigned long long)bytes, s->ssid);
	} else {
		ss.flags |= MMDB_SS_ABORTED | MMDB_SS_INCOMPLETE;
		snprintf(msg, sizeof(msg), "%s before its data was durable: "
			 "settled as aborted", why);
	}
	rc = mmdb_clnt_ss_update(n->mmdb, &ss);
	ss_unlock(s->ssid);
	if (rc != NSR_OK)
		return -1;
	job_finish(s->jobid, complete, bytes, 0, NULL, msg);
	nsr_warn("save set %u of %s:%s: %s", s->ssid, ss.client, ss.name, msg);
	return 0;
}

/* nsrd_settle_orphans - settle sessions whose lease lapsed. */
void nsrd_settle_orphans(struct nsrd *n)
{
	time_t now = time(NULL);

	if (!n->mmdb)
		return;
	/* From the main loop: never wait for a restarting nsrmmdbd here
	 * (the loop restarts it); an unsettled session waits a tick. */
	mmdb_clnt_set_wait(n->mmdb, 0);
	for (int i = 0; i < NSRD_MAX_SESSIONS; i++) {
		struct nsrd_session *s = &n->sessions[i];
		const char *why;

		if (!s->used || s->starting || s->ending ||
		    s->lease_until > now)
			continue;
		why = s->conn == 0 && s->lease_until + NSRD_ORPHAN_GRACE_SEC >
						  now
			      ? "the client went away"
			      : "the client stopped renewing its lease";
		if (s->clone) {
			if (nsrd_clone_settle(n, s, why) != 0)
				continue; /* clone.c; next tick */
		} else if (s->recover) {
			job_finish(s->jobid, 0, 0, 0, NULL,
				   "the recover client went away");
			nsr_warn("recover of save set %u for %s: the client "
				 "went away; its slot is free again", s->ssid,
				 s->client);
		} else if (settle_save(n, s, why) != 0) {
			continue; /* the media database is away: next tick */
		}
		nsrd_session_free(n, s);
	}
	mmdb_clnt_set_wait(n->mmdb, nsr_peer_wait_default());
}

/* nsrd_save_renew - SAVE_RENEW: renew a save's lease; a session this
 * nsrd does not know (it restarted) is adopted while its save set is
 * still in progress. */
int nsrd_save_renew(void *ctx, void *argp, void *resp,
		    struct nsr_rpc_call *call)
{
	struct nsrd *n = ctx;
	save_renew_args *a = argp;
	nsr_void_res *r = resp;
	struct nsrd_session *s = find_session(n, a->jobid, a->ssid);
	struct mmdb_saveset ss;

	if (!s) {
		if (mmdb_clnt_ss_get(n->mmdb, a->ssid, &ss) != NSR_OK ||
		    !(ss.flags & MMDB_SS_INPROGRESS)) {
			nsr_status_set(&r->st, NSR_ERR_STATE, "save set %u is "
				       "no longer in progress on the server "
				       "(settled while this client was "
				       "away)", a->ssid);
			return NSR_OK;
		}
		s = new_session(n, call);
		if (!s) {
			nsr_status_set(&r->st, NSR_ERR_LIMIT,
				       "too many sessions");
			return NSR_OK;
		}
		s->ssid = a->ssid;
		snprintf(s->client, sizeof(s->client), "%s", a->client);
		nsrd_session_tally(n, s);
		nsr_info("save set %u of %s adopted again after a restart",
			 a->ssid, a->client);
	}
	s->jobid = a->jobid ? a->jobid : s->jobid;
	s->conn = conn_id(n, call);
	s->lease_until = time(NULL) + lease_sec();
	nsr_status_set(&r->st, NSR_OK, "%s", "");
	return NSR_OK;
}

/* nsrd_reconcile - sessions for the save sets left in progress. */
void nsrd_reconcile(struct nsrd *n)
{
	struct mmdb_ss_row rows[64];
	size_t got = 0, adopted = 0;
	int done = 0, rc;

	rc = mmdb_clnt_query_open(n->mmdb, "inprogress", 0, time(NULL));
	while (rc == NSR_OK && !done) {
		rc = mmdb_clnt_query_next_rows(n->mmdb, rows, 64, &got,
					       &done);
		for (size_t i = 0; rc == NSR_OK && i < got; i++) {
			struct nsrd_session *s = find_session(
				n, 0, rows[i].ss.ssid);

			if (s)
				continue; /* one row per clone instance */
			s = new_session(n, NULL);
			if (!s)
				break;
			s->ssid = rows[i].ss.ssid;
			snprintf(s->client, sizeof(s->client), "%s",
				 rows[i].ss.client);
			nsrd_session_tally(n, s);
			adopted++;
		}
	}
	if (rc != NSR_OK)
		nsr_error("cannot list the save sets left in progress: %s; "
			  "they are settled when their clients end them",
			  mmdb_clnt_errmsg(n->mmdb));
	else if (adopted)
		nsr_warn("%zu save set(s) were in progress when nsrd last "
			 "stopped: each is settled within %ld s unless its "
			 "client renews or ends it", adopted,
			 (long)lease_sec());
}

/* The session helpers clone.c shares (nsrd.h). */

/* nsrd_session_new - new_session for the other handler files. */
struct nsrd_session *nsrd_session_new(struct nsrd *n,
				      struct nsr_rpc_call *call)
{
	return new_session(n, call);
}

/* nsrd_session_find - find_session for the other handler files. */
struct nsrd_session *nsrd_session_find(struct nsrd *n, int64_t jobid,
				       uint32_t ssid)
{
	return find_session(n, jobid, ssid);
}

/* nsrd_frags - see nsrd.h. */
int nsrd_frags(struct nsrd *n, uint32_t ssid, struct mmdb_fragment *fr,
	       size_t *nf, nsr_status *st)
{
	*nf = 0;
	if (mmdb_clnt_frag_list(n->mmdb, ssid, fr, MMDB_FRAGS_MAX, nf) !=
	    NSR_OK) {
		nsr_status_set(st, NSR_ERR_IO, "cannot read the fragments of "
			       "save set %u: %s", ssid,
			       mmdb_clnt_errmsg(n->mmdb));
		return NSR_ERR_IO;
	}
	*nf = NSR_MIN(*nf, (size_t)MMDB_FRAGS_MAX);
	return NSR_OK;
}

/* nsrd_pick_device - pick_device_in for the other handler files. */
const struct nsr_res *nsrd_pick_device(struct nsrd *n, const char *pool,
				       const uint8_t *exclude, size_t nexcl,
				       struct mmdb_volume *vol, nsr_status *st)
{
	return pick_device_in(n, n->mmdb, pool, exclude, nexcl, vol, st);
}

/* nsrd_device_with_volume - device_with_volume for the other files. */
const struct nsr_res *nsrd_device_with_volume(struct nsrd *n,
					      const char *volume)
{
	return device_with_volume(n, volume);
}

/* nsrd_job_create - job_create through nsrd's own nsrjobd handle. */
int64_t nsrd_job_create(enum nsr_jobdb_type type, const char *client,
			const char *name, const char *level, int64_t pid,
			const char *command, const char *ssids)
{
	return job_create(open_jobd(), type, client, name, level, pid, command,
			  ssids, NULL, 0);
}

/* nsrd_job_finish - job_finish for the other handler files. */
void nsrd_job_finish(int64_t id, int ok, uint64_t bytes, const char *msg)
{
	job_finish(id, ok, bytes, 0, NULL, msg);
}
