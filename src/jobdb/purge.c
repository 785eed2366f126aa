/*
 * purge.c - deleting expired jobs without stalling the server.
 *
 * A purge walks the finished jobs whose end time is before the cutoff in
 * (end_time, id) order through the jobs_purge index, so a purge that finds
 * nothing costs one index probe however large the database is.  The unit of
 * deletion is a root job (no parent, or its parent already gone) with all
 * its descendants and their logs; a unit is deleted only when every job in
 * it is finished and expired, so active work and anything inside retention
 * is never touched.  Each transaction collects about batch_rows jobs of
 * such units, deletes them (and their logs) by runs of consecutive ids --
 * ids are given in time order, so a batch is usually one run, which SQLite
 * deletes in one pass instead of one b-tree search per job -- and then
 * releases the write lock, so inserts and updates from other connections
 * wait at most one batch.  Afterwards the freed pages go back to the file
 * system in small incremental_vacuum steps.
 */
#include "nsr/compat.h"

#include <time.h>
#include <unistd.h>

#include "nsr/cmp.h"
#include "nsr/err.h"
#include "nsr/jobdb.h"

#include "jobdb_int.h"

/* The statements of one purge run. */
struct purge_stmts {
	sqlite3_stmt *probe;	   /* any expired finished job at all? */
	sqlite3_stmt *candidates;  /* next expired jobs after a position */
	sqlite3_stmt *root;	   /* a root's state now */
	sqlite3_stmt *children;	   /* a job's children */
	sqlite3_stmt *del_log;	   /* delete the logs of an id range */
	sqlite3_stmt *del_job;	   /* delete the jobs of an id range */
};

/* The jobs of one batch: units appended one after the other, each a root
 * and its descendants, breadth first. */
struct purge_unit {
	int64_t *id;
	size_t n, cap;
};

/* One candidate root job found by the index walk. */
struct purge_cand {
	int64_t id;
	int64_t end;
};

/* mono_ms - monotonic clock in milliseconds. */
static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* note_hold - record how long a write transaction begun at t0 held the
 * lock. */
static void note_hold(struct nsr_jobdb_purge_stats *st, double t0)
{
	uint64_t us = (uint64_t)((mono_ms() - t0) * 1000.0);

	if (us > st->longest_us)
		st->longest_us = us;
}

/* purge_prepare - compile the purge statements. */
static int purge_prepare(struct nsr_jobdb *db, struct purge_stmts *s)
{
	static const struct {
		size_t off;
		const char *sql;
	} tab[] = {
		{offsetof(struct purge_stmts, probe),
		 "SELECT 1 FROM jobs WHERE finished=1 AND end_time<?1 LIMIT 1"},
		/* Roots only: a job whose parent exists goes with it. */
		{offsetof(struct purge_stmts, candidates),
		 "SELECT id, end_time FROM jobs j"
		 " WHERE finished=1 AND end_time<?1 AND (end_time, id)>(?2, ?3)"
		 " AND (parent_id=0 OR NOT EXISTS"
		 "  (SELECT 1 FROM jobs p WHERE p.id=j.parent_id))"
		 " ORDER BY end_time, id LIMIT ?4"},
		{offsetof(struct purge_stmts, root),
		 "SELECT finished, end_time FROM jobs WHERE id=?1"},
		{offsetof(struct purge_stmts, children),
		 "SELECT id, finished, end_time FROM jobs"
		 " WHERE parent_id=?1 AND parent_id!=0"},
		{offsetof(struct purge_stmts, del_log),
		 "DELETE FROM job_log WHERE job_id BETWEEN ?1 AND ?2"},
		/* The conditions only double-check what collect_unit saw
		 * in this transaction; the unary + keeps SQLite on the rowid
		 * range instead of the jobs_purge index. */
		{offsetof(struct purge_stmts, del_job),
		 "DELETE FROM jobs WHERE id BETWEEN ?1 AND ?2"
		 " AND +finished=1 AND +end_time<?3"},
	};
	int rc = NSR_OK;

	memset(s, 0, sizeof(*s));
	for (size_t i = 0; !rc && i < NSR_ARRAY_SIZE(tab); i++) {
		sqlite3_stmt **p = (sqlite3_stmt **)((char *)s + tab[i].off);

		rc = jobdb_rc(sqlite3_prepare_v2(db->db, tab[i].sql, -1, p,
						 NULL));
	}
	return rc;
}

/* purge_finalize - free the purge statements. */
static void purge_finalize(struct purge_stmts *s)
{
	sqlite3_finalize(s->probe);
	sqlite3_finalize(s->candidates);
	sqlite3_finalize(s->root);
	sqlite3_finalize(s->children);
	sqlite3_finalize(s->del_log);
	sqlite3_finalize(s->del_job);
}

/* query_int - bind up to two integers, step once: *v = first column of the
 * row, or 0 with *found = 0 if there is none. */
static int query_int(sqlite3_stmt *st, int64_t a, int64_t b, int64_t *v)
{
	int src, rc = NSR_OK;

	sqlite3_bind_int64(st, 1, a);
	if (sqlite3_bind_parameter_count(st) >= 2)
		sqlite3_bind_int64(st, 2, b);
	*v = 0;
	src = sqlite3_step(st);
	if (src == SQLITE_ROW)
		*v = sqlite3_column_int64(st, 0);
	else if (src == SQLITE_DONE)
		*v = 0;
	else
		rc = jobdb_rc(src);
	sqlite3_reset(st);
	return rc;
}

/* exec_del - run a DELETE with ?1 = a, ?2 = b (and ?3 = c); *n += rows
 * deleted. */
static int exec_del(struct nsr_jobdb *db, sqlite3_stmt *st, int64_t a,
		    int64_t b, int64_t c, uint64_t *n)
{
	int src;

	sqlite3_bind_int64(st, 1, a);
	sqlite3_bind_int64(st, 2, b);
	if (sqlite3_bind_parameter_count(st) >= 3)
		sqlite3_bind_int64(st, 3, c);
	src = sqlite3_step(st);
	sqlite3_reset(st);
	if (src != SQLITE_DONE)
		return jobdb_rc(src);
	*n += (uint64_t)sqlite3_changes64(db->db);
	return NSR_OK;
}

/* unit_push - append a job id to the unit. */
static int unit_push(struct purge_unit *u, int64_t id)
{
	if (u->n == u->cap) {
		size_t cap = u->cap ? u->cap * 2 : 64;
		int64_t *p = realloc(u->id, cap * sizeof(*p));

		if (!p)
			return NSR_ERR_NOMEM;
		u->id = p;
		u->cap = cap;
	}
	u->id[u->n++] = id;
	return NSR_OK;
}

/* collect_unit - append root and all its descendants to u; *blocked = 1
 * (and u as it was) if any of them is unfinished or inside retention. */
static int collect_unit(struct purge_stmts *s, int64_t root, int64_t cutoff,
			struct purge_unit *u, int *blocked)
{
	sqlite3_stmt *st = s->children;
	size_t base = u->n;
	int rc = NSR_OK, src = SQLITE_DONE;

	*blocked = 0;
	/* The root may have changed since it was found. */
	sqlite3_bind_int64(s->root, 1, root);
	src = sqlite3_step(s->root);
	if (src == SQLITE_ROW && (!sqlite3_column_int(s->root, 0) ||
				  sqlite3_column_int64(s->root, 1) >= cutoff))
		*blocked = 1;
	sqlite3_reset(s->root);
	if (src != SQLITE_ROW || *blocked)
		return src == SQLITE_DONE || src == SQLITE_ROW ? NSR_OK
							       : jobdb_rc(src);
	rc = unit_push(u, root);
	for (size_t i = base; !rc && !*blocked && i < u->n; i++) {
		sqlite3_bind_int64(st, 1, u->id[i]);
		for (;;) {
			src = sqlite3_step(st);
			if (src != SQLITE_ROW)
				break;
			if (!sqlite3_column_int(st, 1) ||
			    sqlite3_column_int64(st, 2) >= cutoff) {
				*blocked = 1;
				break;
			}
			rc = unit_push(u, sqlite3_column_int64(st, 0));
			if (rc)
				break;
		}
		if (!rc && src != SQLITE_ROW && src != SQLITE_DONE)
			rc = jobdb_rc(src);
		sqlite3_reset(st);
	}
	if (*blocked)
		u->n = base;
	return rc;
}

/* delete_batch - delete the jobs in u (every one checked by collect_unit
 * in this transaction) and their logs, one pair of range DELETEs per run
 * of consecutive ids; *jobs, *logs count what went.  A run whose rows do
 * not all pass the double check is an inconsistency: NSR_ERR_CORRUPT, and
 * the caller rolls the batch back. */
static int delete_batch(struct nsr_jobdb *db, struct purge_stmts *s,
			struct purge_unit *u, int64_t cutoff, uint64_t *jobs,
			uint64_t *logs)
{
	size_t i = 0, j;
	int rc = NSR_OK;

	qsort(u->id, u->n, sizeof(*u->id), nsr_cmp_i64);
	while (!rc && i < u->n) {
		uint64_t n = 0;

		for (j = i + 1; j < u->n && u->id[j] == u->id[j - 1] + 1; j++)
			;
		rc = exec_del(db, s->del_job, u->id[i], u->id[j - 1], cutoff,
			      &n);
		if (!rc && n != j - i)
			rc = NSR_ERR_CORRUPT;
		if (!rc)
			rc = exec_del(db, s->del_log, u->id[i], u->id[j - 1], 0,
				      logs);
		*jobs += n;
		i = j;
	}
	u->n = 0;
	return rc;
}

/* fetch_candidates - up to max expired jobs after position (end, id). */
static int fetch_candidates(struct purge_stmts *s, int64_t cutoff,
			    int64_t end, int64_t id, struct purge_cand *out,
			    size_t max, size_t *n)
{
	sqlite3_stmt *st = s->candidates;
	int src;

	*n = 0;
	sqlite3_bind_int64(st, 1, cutoff);
	sqlite3_bind_int64(st, 2, end);
	sqlite3_bind_int64(st, 3, id);
	sqlite3_bind_int64(st, 4, (int64_t)max);
	for (;;) {
		src = sqlite3_step(st);
		if (src != SQLITE_ROW || *n == max)
			break;
		out[*n].id = sqlite3_column_int64(st, 0);
		out[*n].end = sqlite3_column_int64(st, 1);
		(*n)++;
	}
	sqlite3_reset(st);
	return src == SQLITE_DONE || src == SQLITE_ROW ? NSR_OK
							: jobdb_rc(src);
}

/* purge_batches - delete expired units, one transaction per batch. */
static int purge_batches(struct nsr_jobdb *db, struct purge_stmts *s,
			 int64_t cutoff, struct nsr_jobdb_purge_stats *st)
{
	size_t max = db->batch_rows, n = 0, i = 0, done;
	struct purge_cand *cand = calloc(max, sizeof(*cand));
	struct purge_unit unit = {0};
	int64_t end = INT64_MIN, id = 0;
	int rc = NSR_OK, last = 0;

	if (!cand)
		return NSR_ERR_NOMEM;
	for (;;) {
		double t0;

		rc = jobdb_begin(db);
		if (rc)
			break;
		t0 = mono_ms(); /* the write lock is ours from here */
		/* Candidates left from the last batch are checked again by
		 * collect_unit, so refetch only when they are used up. */
		if (i == n) {
			rc = fetch_candidates(s, cutoff, end, id, cand, max,
					      &n);
			i = 0;
			last = n < max;
		}
		if (!rc && n == 0) {
			jobdb_rollback(db); /* nothing written */
			break;
		}
		for (done = 0; !rc && i < n; done++) {
			int blocked = 0;

			rc = collect_unit(s, cand[i].id, cutoff, &unit,
					  &blocked);
			end = cand[i].end;
			id = cand[i].id;
			i++;
			/* A full batch, a big unit or a slow disk: delete. */
			if (unit.n >= max ||
			    ((done & 7) == 7 &&
			     mono_ms() - t0 > JOBDB_BATCH_MAX_MS))
				break;
		}
		if (!rc)
			rc = delete_batch(db, s, &unit, cutoff, &st->jobs,
					  &st->logs);
		if (rc) {
			jobdb_rollback(db);
			break;
		}
		rc = jobdb_commit(db);
		if (rc)
			break;
		note_hold(st, t0);
		jobdb_purge_checkpoint(db);
		st->batches++;
		if (last && i == n)
			break;
		/* Let writers waiting on other connections in. */
		jobdb_yield();
	}
	free(cand);
	free(unit.id);
	return rc;
}

/* freelist - pages on the free list. */
static int freelist(struct nsr_jobdb *db, int64_t *n)
{
	sqlite3_stmt *st = NULL;
	int rc;

	*n = 0;
	rc = jobdb_rc(sqlite3_prepare_v2(db->db, "PRAGMA freelist_count", -1,
					 &st, NULL));
	if (!rc && sqlite3_step(st) == SQLITE_ROW)
		*n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc;
}

/* purge_vacuum - hand free pages back in small steps, each its own short
 * write transaction, then let the WAL be checkpointed without waiting. */
static int purge_vacuum(struct nsr_jobdb *db, struct nsr_jobdb_purge_stats *st)
{
	char sql[64];
	int64_t before = 0, after = 0;
	int rc;

	rc = freelist(db, &before);
	if (rc || before == 0)
		return rc;
	snprintf(sql, sizeof(sql), "PRAGMA incremental_vacuum(%d)",
		 JOBDB_VACUUM_STEP);
	while (before > 0) {
		double t0 = mono_ms();

		rc = jobdb_exec(db, sql);
		note_hold(st, t0);
		jobdb_purge_checkpoint(db);
		if (!rc)
			rc = freelist(db, &after);
		if (rc || after >= before)
			break;
		st->vacuumed += (uint64_t)(before - after);
		before = after;
		if (before > 0)
			jobdb_yield(); /* let other writers in */
	}
	if (!rc)
		sqlite3_wal_checkpoint_v2(
			db->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
	return rc;
}

/* nsr_jobdb_purge - delete finished jobs older than the retention. */
int nsr_jobdb_purge(struct nsr_jobdb *db, unsigned retention_hours,
		    int64_t now, struct nsr_jobdb_purge_stats *st)
{
	struct nsr_jobdb_purge_stats local = {0};
	struct purge_stmts s;
	int64_t cutoff, any = 0;
	int rc;

	if (!st)
		st = &local;
	memset(st, 0, sizeof(*st));
	cutoff = now - (int64_t)retention_hours * 3600;
	rc = purge_prepare(db, &s);
	if (rc)
		goto out;
	rc = query_int(s.probe, cutoff, 0, &any);
	if (rc)
		goto out;
	jobdb_purging(db, 1);
	if (any)
		rc = purge_batches(db, &s, cutoff, st);
	if (!rc)
		rc = purge_vacuum(db, st);
	jobdb_purging(db, 0);
out:
	purge_finalize(&s);
	return rc;
}
