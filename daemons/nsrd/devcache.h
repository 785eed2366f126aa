/*
 * devcache.h - what nsrd remembers of its devices between SAVE_STARTs, so
 * that a burst of starts does not ask the media database and nsrsnmd the
 * same questions, one at a time under the RPC server mutex, once per
 * session:
 *  - the volume each device has mounted, as the media database last said
 *    (read again after DEVCACHE_VOL_TTL_MS, and at once after nsrd itself
 *    changed a volume: label, mount, unmount, mode, delete, recycle);
 *  - the movers (pid, port) nsrsnmd handed out for each device, so that a
 *    mover below its target sessions, idle or serving sessions of nsrd's,
 *    takes one more without asking (devcache_mover_pick: the same rule as
 *    nsrsnmd's policy), an idle one only while the device's settings are
 *    those nsrsnmd last saw with it.
 * No daemon state: tests/unit/nsrd tests it.  Used under the RPC server
 * mutex only.
 */
#ifndef NSRD_DEVCACHE_H
#define NSRD_DEVCACHE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "nsr/mmdb.h"
#include "nsr/snmd_clnt.h"

/* How long a volume's record read from the media database is used for a
 * device.  Bounds what nsrd cannot see: a mover that marks its volume
 * full, nsrim marking one recyclable.  A save whose volume filled asks
 * NEXT_VOLUME, which makes nsrd read the volumes again
 * (devcache_vol_forget), as a failed save does; a save started in
 * between is still sent to the full volume, whose mover answers "full"
 * at its first byte, and goes on with NEXT_VOLUME as well. */
#define DEVCACHE_VOL_TTL_MS 500

/* devcache_vol_fetch_fn - read volume from the media database into *v:
 * NSR_OK, NSR_ERR_NOTFOUND or another error (never cached). */
typedef int (*devcache_vol_fetch_fn)(void *arg, const char *volume,
				     struct mmdb_volume *v);

/* devcache_vol_get - the record of volume, mounted on device, at now_ms
 * (a monotonic clock): the cached one while it is younger than the TTL
 * and the device still has that volume, else fetched (and cached unless
 * the fetch failed other than NSR_ERR_NOTFOUND).  Returns the fetch's
 * code (NSR_OK: *v set). */
int devcache_vol_get(const char *device, const char *volume, long long now_ms,
		     devcache_vol_fetch_fn fetch, void *arg,
		     struct mmdb_volume *v);

/* devcache_vol_forget - volume (NULL: every volume) changed: read it
 * again next time. */
void devcache_vol_forget(const char *volume);

/* devcache_mover_key - a key of what nsrsnmd is told of a device beside
 * its name and load (media type, path, capacity, segment size, target
 * and max sessions, max movers): equal keys, the same settings. */
uint64_t devcache_mover_key(const struct nsr_snmd_device *d);

/* devcache_mover_learn - nsrsnmd handed out mover pid, serving on port,
 * for device, asked with settings of key. */
void devcache_mover_learn(const char *device, pid_t pid, int port,
			  uint64_t key);

/* devcache_mover_forget - pid (0: every mover of device; device NULL:
 * every device) is gone or may be. */
void devcache_mover_forget(const char *device, pid_t pid);

/* devcache_mover_pick - a mover of device to hand one more session
 * without asking nsrsnmd, by nsrsnmd's own rule: the least loaded of the
 * movers nsrsnmd handed out for it (their sessions as nsrd counts them in
 * load, 0 when not there), if it serves fewer than target_sessions (0:
 * nsrsnmd's default, 4) and, when idle (no session counted), was handed
 * out with settings of key (the device's now), and alive(pid, idle) says
 * it runs (idle: it may have exited; alive NULL: all run); one that does
 * not is forgotten.  1 with *pid and *port, or 0: ask nsrsnmd (it may
 * start a mover, or tell of the settings a running one keeps). */
int devcache_mover_pick(const char *device,
			const struct nsr_snmd_load *load,
			size_t nload, unsigned target_sessions, uint64_t key,
			int (*alive)(pid_t pid, int idle), pid_t *pid,
			int *port);

/* devcache_clear - forget everything (stop, tests). */
void devcache_clear(void);

#endif /* NSRD_DEVCACHE_H */
