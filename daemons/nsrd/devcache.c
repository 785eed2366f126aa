/*
 * devcache.c - nsrd's memory of its devices' volumes and movers
 * (devcache.h).
 *
 * Two small tables, searched linearly (a datazone has tens of devices):
 *  1. vols: one entry per device, the record of the volume it had
 *     mounted when the media database was last asked; an entry is used
 *     only while its device still names the same volume and it is younger
 *     than DEVCACHE_VOL_TTL_MS, so a mount, unmount or label (they change
 *     the device's volume name) is seen at once even unforgotten;
 *  2. movers: (device, pid, port) as nsrsnmd answered, with the key of
 *     the device's settings it was asked with.  A mover below target
 *     sessions is handed out from here, the least loaded first, as
 *     nsrsnmd would; an idle one (nsrd counts no session on it) only
 *     while the device's settings are those nsrsnmd last saw with it
 *     (else nsrsnmd is asked, and says what a running mover keeps) and
 *     once alive() says it has not exited; alive() also catches one that
 *     died while it served.
 * When a table is full the oldest entry makes room: forgetting is always
 * safe, it costs one question more.
 */
#include <stdint.h>
#include <string.h>

#include "devcache.h"
#include "nsr/err.h"
#include "nsr/fnv.h"

#define VOLS_MAX 256
#define MOVERS_MAX 256
#define TS_DEFAULT 4 /* nsrsnmd's target sessions when nsrd sends 0 */

struct vol_entry {
	int used;
	char device[256];
	char volume[MMDB_VOLNAME_MAX + 1];
	long long at_ms;
	int rc; /* NSR_OK or NSR_ERR_NOTFOUND */
	struct mmdb_volume v;
};

struct mover_entry {
	char device[256]; /* "" = free */
	pid_t pid;
	int port;
	uint64_t key; /* devcache_mover_key of the question it answered */
	uint64_t age; /* learned at this count */
};

static struct vol_entry g_vols[VOLS_MAX];
static struct mover_entry g_movers[MOVERS_MAX];
static uint64_t g_learned;

/* copy - bounded string copy; 0 if src did not fit (then not cached). */
static int copy(char *dst, size_t len, const char *src)
{
	size_t l = strlen(src);

	if (l >= len)
		return 0;
	memcpy(dst, src, l + 1);
	return 1;
}

/* vol_slot - the entry of device, or a free or the oldest one. */
static struct vol_entry *vol_slot(const char *device)
{
	struct vol_entry *free_e = NULL, *old = NULL;

	for (size_t i = 0; i < VOLS_MAX; i++) {
		struct vol_entry *e = &g_vols[i];

		if (e->used && strcmp(e->device, device) == 0)
			return e;
		if (!e->used && !free_e)
			free_e = e;
		if (e->used && (!old || e->at_ms < old->at_ms))
			old = e;
	}
	return free_e ? free_e : old;
}

/* devcache_vol_get - see devcache.h. */
int devcache_vol_get(const char *device, const char *volume, long long now_ms,
		     devcache_vol_fetch_fn fetch, void *arg,
		     struct mmdb_volume *v)
{
	struct vol_entry *e = vol_slot(device);
	int rc;

	if (e->used && strcmp(e->device, device) == 0 &&
	    strcmp(e->volume, volume) == 0 && now_ms >= e->at_ms &&
	    now_ms - e->at_ms < DEVCACHE_VOL_TTL_MS) {
		if (e->rc == NSR_OK)
			*v = e->v;
		return e->rc;
	}
	rc = fetch(arg, volume, v);
	e->used = 0;
	if ((rc == NSR_OK || rc == NSR_ERR_NOTFOUND) &&
	    copy(e->device, sizeof(e->device), device) &&
	    copy(e->volume, sizeof(e->volume), volume)) {
		e->at_ms = now_ms;
		e->rc = rc;
		if (rc == NSR_OK)
			e->v = *v;
		e->used = 1;
	}
	return rc;
}

/* devcache_vol_forget - see devcache.h. */
void devcache_vol_forget(const char *volume)
{
	for (size_t i = 0; i < VOLS_MAX; i++)
		if (g_vols[i].used &&
		    (!volume || strcmp(g_vols[i].volume, volume) == 0))
			g_vols[i].used = 0;
}

/* devcache_mover_key - see devcache.h. */
uint64_t devcache_mover_key(const struct nsr_snmd_device *d)
{
	uint64_t h = NSR_FNV1A_BASIS;
	uint64_t v[5] = {d->capacity, d->segment_size, d->target_sessions,
			 d->max_sessions, d->max_movers};

	h = nsr_fnv1a(h, d->media_type, strlen(d->media_type) + 1);
	h = nsr_fnv1a(h, d->path, strlen(d->path) + 1);
	return nsr_fnv1a(h, v, sizeof(v));
}

/* devcache_mover_learn - see devcache.h. */
void devcache_mover_learn(const char *device, pid_t pid, int port,
			  uint64_t key)
{
	struct mover_entry *e = NULL;

	if (pid <= 0 || port <= 0 || !device[0])
		return;
	for (size_t i = 0; i < MOVERS_MAX; i++) {
		struct mover_entry *m = &g_movers[i];

		if (m->device[0] && m->pid == pid &&
		    strcmp(m->device, device) == 0) {
			e = m;
			break;
		}
		if (!e || (e->device[0] &&
			   (!m->device[0] || m->age < e->age)))
			e = m;
	}
	if (!copy(e->device, sizeof(e->device), device)) {
		e->device[0] = '\0';
		return;
	}
	e->pid = pid;
	e->port = port;
	e->key = key;
	e->age = ++g_learned;
}

/* devcache_mover_forget - see devcache.h. */
void devcache_mover_forget(const char *device, pid_t pid)
{
	for (size_t i = 0; i < MOVERS_MAX; i++) {
		struct mover_entry *m = &g_movers[i];

		if (m->device[0] &&
		    (!device || strcmp(m->device, device) == 0) &&
		    (!pid || m->pid == pid))
			m->device[0] = '\0';
	}
}

/* counted - mover pid's sessions in load (0 when not there). */
static unsigned counted(const struct nsr_snmd_load *load, size_t nload,
			pid_t pid)
{
	for (size_t i = 0; i < nload; i++)
		if (load[i].pid == pid)
			return load[i].sessions;
	return 0;
}

/* devcache_mover_pick - see devcache.h. */
int devcache_mover_pick(const char *device,
			const struct nsr_snmd_load *load,
			size_t nload, unsigned target_sessions, uint64_t key,
			int (*alive)(pid_t pid, int idle), pid_t *pid,
			int *port)
{
	unsigned ts = target_sessions ? target_sessions : TS_DEFAULT;

	/* Least loaded first (nsrsnmd's rule), each checked before it is
	 * handed out; a dead one is forgotten and the next is tried. */
	for (int tries = 0; tries < MOVERS_MAX; tries++) {
		struct mover_entry *best = NULL;
		unsigned best_n = 0;

		for (size_t i = 0; i < MOVERS_MAX; i++) {
			struct mover_entry *m = &g_movers[i];
			unsigned n;

			if (!m->device[0] || strcmp(m->device, device) != 0)
				continue;
			n = counted(load, nload, m->pid);
			if (n >= ts || (n == 0 && m->key != key))
				continue;
			if (!best || n < best_n) {
				best = m;
				best_n = n;
			}
		}
		if (!best)
			return 0;
		if (alive && !alive(best->pid, best_n == 0)) {
			best->device[0] = '\0'; /* forgotten */
			continue;
		}
		*pid = best->pid;
		*port = best->port;
		return 1;
	}
	return 0;
}

/* devcache_clear - see devcache.h. */
void devcache_clear(void)
{
	memset(g_vols, 0, sizeof(g_vols));
	memset(g_movers, 0, sizeof(g_movers));
	g_learned = 0;
}
