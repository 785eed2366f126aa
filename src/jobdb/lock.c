/*
 * lock.c - sharing the jobs db between handles: the busy handler that
 * polls for the write lock, the purge's hand-off to writers waiting in
 * this process, where WAL checkpoints (and their fsyncs) happen, and the
 * lock-wait counters.
 *
 * SQLite lets one writer in at a time and gives no fairness: a waiter
 * sleeps in its busy handler and a purge that commits and begins again at
 * once would keep the lock.  So writers waiting in jobdb_begin() poll
 * every JOBDB_BUSY_POLL_US and are counted; between two transactions the
 * purge pauses, and keeps pausing while any are counted (up to
 * JOBDB_YIELD_MAX_MS), so they get the lock even when the machine is slow
 * to wake them.  (Writers in other processes only get the pause.)
 * Checkpoints run after commits once the WAL is JOBDB_CKPT_FRAMES long.
 * While a purge runs, only the purging handle does them (every
 * JOBDB_CKPT_FRAMES_PURGE frames, between its transactions): a
 * checkpoint after incremental_vacuum also cuts the database file back,
 * and on a file system mounted with online discard that truncate waits
 * for the disk to discard every freed extent (192 ms measured, in an
 * insert that happened to do the checkpoint).  Another handle's passive
 * checkpoint could not get further than the purge's own anyway.  Outside
 * purges, a handle opened with background_checkpoint waits for
 * JOBDB_CKPT_FRAMES_MAX (a safety net; the daemon's worker checkpoints on
 * its tick), so inserts do not copy pages and fsync.
 */
#include "nsr/compat.h"

#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "nsr/err.h"
#include "nsr/jobdb.h"

#include "jobdb_int.h"

/* mono_us - monotonic clock in microseconds. */
static uint64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Purges running in this process; while one runs, other handles leave
 * checkpoints to it. */
static atomic_int jobdb_purges;

/* Handles of this process now waiting in BEGIN for the write lock. */
static atomic_int jobdb_waiters;

/* busy_wait - SQLite busy handler: poll every 200 us until busy_ms have
 * passed.  SQLite's default backs off to 100 ms sleeps, which would let a
 * purge re-take the write lock between batches before a waiting insert
 * wakes up; short polls let the waiter in during the purge's pause. */
static int busy_wait(void *arg, int count)
{
	struct nsr_jobdb *db = arg;
	uint64_t now = mono_us(), waited;

	if (count == 0) {
		db->busy_start_us = now;
		db->stats.busy_waits++;
	}
	if (db->in_begin && !db->waiting && !db->purging) {
		db->waiting = 1;
		atomic_fetch_add(&jobdb_waiters, 1);
	}
	waited = now - db->busy_start_us;
	if (waited >= (uint64_t)db->busy_ms * 1000)
		return 0;
	usleep(JOBDB_BUSY_POLL_US);
	db->stats.busy_us += mono_us() - now;
	waited = mono_us() - db->busy_start_us;
	if (waited > db->stats.busy_max_us)
		db->stats.busy_max_us = waited;
	return 1;
}

/* nsr_jobdb_stats - lock-wait counters. */
void nsr_jobdb_stats(const struct nsr_jobdb *db, struct nsr_jobdb_stats *st)
{
	*st = db->stats;
}

/* jobdb_begin - start a write transaction, taking the write lock now so a
 * busy database is waited for here and not half-way through.  While this
 * handle waits it counts as a waiter that a purge gives way to. */
int jobdb_begin(struct nsr_jobdb *db)
{
	int rc;

	db->in_begin = 1;
	rc = jobdb_exec(db, "BEGIN IMMEDIATE");
	db->in_begin = 0;
	if (db->waiting) {
		db->waiting = 0;
		atomic_fetch_sub(&jobdb_waiters, 1);
	}
	return rc;
}

/* jobdb_yield - called by a purge between transactions: pause, and while
 * another handle of this process waits in jobdb_begin, keep out of its
 * way (up to JOBDB_YIELD_MAX_MS) until it has the lock, even when the
 * machine is too busy to wake it within a fixed short pause. */
void jobdb_yield(void)
{
	uint64_t start = mono_us();

	usleep(JOBDB_PAUSE_US);
	while (atomic_load(&jobdb_waiters) > 0 &&
	       mono_us() - start < JOBDB_YIELD_MAX_MS * 1000u)
		usleep(JOBDB_BUSY_POLL_US);
}

/* jobdb_purging - mark this handle as purging (on != 0) or not. */
void jobdb_purging(struct nsr_jobdb *db, int on)
{
	if (on == db->purging)
		return;
	db->purging = on;
	atomic_fetch_add(&jobdb_purges, on ? 1 : -1);
}

/* wal_hook - after each commit: a PASSIVE (never blocking) checkpoint
 * once the WAL is long enough for this handle (see the top of the file). */
static int wal_hook(void *arg, sqlite3 *h, const char *name, int frames)
{
	struct nsr_jobdb *db = arg;
	int limit = JOBDB_CKPT_FRAMES;

	if (db->purging) {
		/* The purge checkpoints between its transactions. */
		if (frames >= JOBDB_CKPT_FRAMES_PURGE)
			db->ckpt_due = 1;
		return SQLITE_OK;
	}
	if (atomic_load(&jobdb_purges) > 0)
		return SQLITE_OK; /* the purge checkpoints as often as it can */
	if (db->bg_ckpt)
		limit = JOBDB_CKPT_FRAMES_MAX;
	if (frames >= limit)
		sqlite3_wal_checkpoint_v2(h, name, SQLITE_CHECKPOINT_PASSIVE,
					  NULL, NULL);
	return SQLITE_OK;
}

/* jobdb_purge_checkpoint - the checkpoint a purge's commit asked for. */
void jobdb_purge_checkpoint(struct nsr_jobdb *db)
{
	if (!db->ckpt_due)
		return;
	db->ckpt_due = 0;
	sqlite3_wal_checkpoint_v2(db->db, NULL, SQLITE_CHECKPOINT_PASSIVE,
				  NULL, NULL);
}

/* nsr_jobdb_checkpoint - PASSIVE checkpoint of the whole WAL. */
int nsr_jobdb_checkpoint(struct nsr_jobdb *db)
{
	int src = sqlite3_wal_checkpoint_v2(db->db, NULL,
					    SQLITE_CHECKPOINT_PASSIVE, NULL,
					    NULL);

	return src == SQLITE_BUSY ? NSR_OK : jobdb_rc(src);
}

/* jobdb_lock_setup - install the busy handler and the WAL hook. */
void jobdb_lock_setup(struct nsr_jobdb *db)
{
	sqlite3_busy_handler(db->db, busy_wait, db);
	sqlite3_wal_hook(db->db, wal_hook, db);
}
