/*
 * pss.h - parallel save streams (PSS): save points, each backed up by
 * several save streams at once, as NetWorker 9's PSS does.
 *
 * nsr_pss_save() backs up each save point sp (an absolute path) as a
 * master save set "sp" and dependents "<1>sp", "<2>sp", ... (one per
 * further stream, nsr_pssspec_streams of the spec: default 4, at most 8).
 * Each stream is a save session of its own (session.h) to nsrd, the
 * mover and the file index.  One traversal per save point feeds all its
 * streams through a shared queue (pss_int.h: files balanced one by one,
 * the largest waiting first; directories, hard links and their targets
 * to the master), so the save point's objects are spread over its save
 * sets, each saved once.  The master starts first: nsrd decides the
 * level for the whole save point (a changed number of streams makes it
 * a full) and gives the master the latest save time of the group; the
 * dependents follow its level.  The traversal applies the level filter.
 * The master holds every directory with its entry list, so a browse and
 * a point-in-time recover see one tree (session_pit.c), and recover -S of
 * the master restores its dependents first, then the master.
 *
 * Dynamic PSS: at most parallelism (client parallelism CP) streams are
 * active (reading and sending) at any time over all save points.  Save
 * points start in order while the streams of those running are fewer
 * than CP; a started stream waits idle for a free slot; when a stream's
 * save point has nothing left for it, its slot goes to a waiting stream
 * (of the same or of a later save point).
 *
 * Test knob (environment): NSR_TEST_PSS_RATE=SIZE limits each active
 * stream to SIZE bytes of file data per second (benchmarks model streams
 * of one speed).  Callbacks of opts->save are called from several
 * threads, one at a time.
 */
#ifndef NSR_PSS_H
#define NSR_PSS_H

#include <stddef.h>
#include <stdint.h>

#include "nsr/pssspec.h"
#include "nsr/session.h"

struct nsr_pss_opts {
	/* server, client, level, pool, command, browse and retention
	 * time and the callbacks, for every stream (name, bigasm, dry_run,
	 * feed and the pss fields are set here) */
	const struct nsr_session_save_opts *save;
	const struct nsr_pssspec *spec; /* NULL: 4 streams each */
	unsigned parallelism;		/* client parallelism; 0 = 4 */
	/* Optional: a stream became active (holds a slot) or idle;
	 * active is how many are active now, over all save points. */
	void (*stream)(void *ctx, const char *sp, unsigned index, int on,
		       unsigned active);
	/* Optional: a stream's own stream bytes so far, at each of its
	 * progress reports (after the save's progress callback). */
	void (*stream_bytes)(void *ctx, const char *sp, unsigned index,
			     uint64_t bytes);
};

struct nsr_pss_result {
	char name[1024];	/* the save point */
	unsigned streams;	/* save sets made or tried */
	int rc;			/* NSR_OK: every stream complete */
	char err[1024];		/* the first failure, if any */
	/* the master's outcome (ssid, savetime, level, since, ...), with
	 * st the sum over all streams */
	struct nsr_session_save_result master;
	uint32_t dependents[NSR_PSS_STREAMS_MAX]; /* ssids, 0 = none */
};

/* nsr_pss_save - back up save points sps[0..n) (absolute paths) with
 * parallel save streams; res[0..n) gets each one's outcome.  NSR_OK when
 * every save point is complete, else the first failure's code. */
int nsr_pss_save(const struct nsr_pss_opts *o, char *const *sps, size_t n,
		 struct nsr_pss_result *res);

#endif /* NSR_PSS_H */
