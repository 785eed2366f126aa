/*
 * jobdb_int.h - private to src/jobdb: the handle, the schema's column
 * table, and the parsed form of a query.
 *
 * On-disk schema (also in nsr_jobsdb(5)):
 *   jobs(id INTEGER PRIMARY KEY AUTOINCREMENT, parent_id, type, client,
 *        name, level, grp, action, host, pid, state, finished, status,
 *        start_time, end_time, bytes, files, ssids, command, nlog)
 *     finished = 1 exactly when state is COMPLETED, FAILED or ABORTED;
 *     nlog = number of log lines = seq of the last one;
 *     index jobs_purge(finished, end_time)  -- purge is one probe;
 *     index jobs_parent(parent_id)           -- units of parent + children.
 *   job_log(job_id, seq, time, line) WITHOUT ROWID, PRIMARY KEY(job_id, seq)
 *   meta(key, value): "schema" = JOBDB_SCHEMA_VERSION.
 *
 * Invariants:
 *  1. every job_log row has a jobs row (purge deletes logs first, in the
 *     same transaction as their job);
 *  2. a job's parent_id is 0 or smaller than its id, so parent links never
 *     form a cycle and every unit has one root;
 *  3. a finished job has end_time > 0.
 */
#ifndef NSR_JOBDB_INT_H
#define NSR_JOBDB_INT_H

#include <sqlite3.h>

#include "nsr/jobdb.h"

#define JOBDB_SCHEMA_VERSION 1
#define JOBDB_BATCH_DEFAULT 1000
#define JOBDB_CACHE_KIB_DEFAULT 2048
#define JOBDB_BUSY_MS_DEFAULT 5000
#define JOBDB_VACUUM_STEP 128 /* pages freed per vacuum transaction */
#define JOBDB_BUSY_POLL_US 200 /* busy handler poll interval */
#define JOBDB_BATCH_MAX_MS 10  /* a purge batch commits after this long */
#define JOBDB_PAUSE_US 300     /* purge pause between batches */
#define JOBDB_YIELD_MAX_MS 50  /* longest hand-off to waiting writers */
#define JOBDB_CKPT_FRAMES 1000 /* WAL frames that trigger a checkpoint */
#define JOBDB_CKPT_FRAMES_PURGE 8192 /* ... on a purging handle */
#define JOBDB_CKPT_FRAMES_MAX 16000 /* ... on any handle (64 MiB WAL) */

/* Limits of the query language (documented in nsr_jobsdb(5)). */
#define JOBQ_MAX_LINE 65536
#define JOBQ_MAX_TERMS 32
#define JOBQ_MAX_VALUES 64
#define JOBQ_MAX_VALUE_LEN 4096

struct nsr_jobdb {
	sqlite3 *db;
	unsigned batch_rows;
	unsigned busy_ms;
	int purging; /* a purge runs on this handle */
	int bg_ckpt; /* leave checkpoints to others (background_checkpoint) */
	int in_begin; /* inside jobdb_begin's BEGIN IMMEDIATE */
	int ckpt_due; /* a purge commit filled the WAL: checkpoint next */
	int waiting;  /* counted in the process's waiting writers */
	struct nsr_jobdb_stats stats;
	uint64_t busy_start_us; /* when the current wait began */
	sqlite3_stmt *st_insert;
	sqlite3_stmt *st_get;
	sqlite3_stmt *st_log_next; /* bump nlog, returning it */
	sqlite3_stmt *st_log_add;
	sqlite3_stmt *st_log_read;
	sqlite3_stmt *st_top_id;  /* highest id ever assigned */
	sqlite3_stmt *st_fix_end; /* stamp a finished job's end time */
};

/* Kinds of attribute. */
enum jobq_kind {
	JOBQ_INT = 1,	/* integer column */
	JOBQ_TEXT = 2,	/* text column */
	JOBQ_TYPE = 3,	/* integer column, values are type names */
	JOBQ_STATE = 4, /* integer column, values are state names */
	JOBQ_LOG = 5,	/* the job log: show only, never in a filter */
};

/* One attribute of the query language. */
struct jobq_attr {
	const char *name;   /* lower case, single spaces: "job state" */
	const char *column; /* SQL column, fixed text (never from input) */
	enum jobq_kind kind;
};

/* Index of each attribute in jobq_attrs[] (also the canonical order). */
enum jobq_attr_id {
	JA_ID, JA_PARENT, JA_TYPE, JA_NAME, JA_CLIENT, JA_LEVEL, JA_GROUP,
	JA_ACTION, JA_HOST, JA_PID, JA_STATE, JA_STATUS, JA_START, JA_END,
	JA_BYTES, JA_FILES, JA_SSIDS, JA_COMMAND, JA_LOG, JA_COUNT
};

extern const struct jobq_attr jobq_attrs[JA_COUNT];

/* Comparison of one value. */
enum jobq_op {
	JOBQ_EQ = 0, JOBQ_NE, JOBQ_LT, JOBQ_LE, JOBQ_GT, JOBQ_GE,
	JOBQ_GLOB,   /* text with * or ?: SQLite GLOB (case-sensitive) */
	JOBQ_NOGLOB, /* "!=" with * or ?: NULL or NOT GLOB */
	JOBQ_EMPTY, /* "attr:" with no value: text is NULL or "" */
};

struct jobq_value {
	enum jobq_op op;
	int64_t num; /* INT, TYPE, STATE */
	char *text;  /* TEXT (GLOB: already escaped for GLOB) */
};

/* attr: v1, v2, ...  -- the values are ORed. */
struct jobq_term {
	enum jobq_attr_id attr;
	size_t nval;
	struct jobq_value val[JOBQ_MAX_VALUES];
};

/* Terms are ANDed. */
struct jobq_filter {
	size_t nterm;
	struct jobq_term *term[JOBQ_MAX_TERMS];
};

struct nsr_jobdb_query {
	struct jobq_filter filter;
	size_t nshow; /* 0 = all attributes in canonical order */
	enum jobq_attr_id show[JA_COUNT];
};

/* jobdb_rc - map an SQLite result code to an NSR_ERR_* code. */
int jobdb_rc(int src);
/* jobdb_exec - run SQL text without parameters. */
int jobdb_exec(struct nsr_jobdb *db, const char *sql);
/* jobdb_begin / jobdb_commit / jobdb_rollback - write transactions. */
int jobdb_begin(struct nsr_jobdb *db);
int jobdb_commit(struct nsr_jobdb *db);
void jobdb_rollback(struct nsr_jobdb *db);
/* jobdb_purging - mark db as running a purge (checkpoints move to it). */
void jobdb_purging(struct nsr_jobdb *db, int on);
/* jobdb_lock_setup - busy handler and WAL hook of a new handle. */
void jobdb_lock_setup(struct nsr_jobdb *db);
/* jobdb_purge_checkpoint - run the checkpoint a purge's commit asked
 * for, after the commit, so it is not counted as holding the lock. */
void jobdb_purge_checkpoint(struct nsr_jobdb *db);
/* jobdb_yield - a purge's pause between transactions (see lock.c). */
void jobdb_yield(void);
/* jobdb_bind_text - bind a possibly NULL string. */
int jobdb_bind_text(sqlite3_stmt *st, int idx, const char *s);
/* jobdb_row_to_job - fill job from a row of JOBDB_COLUMNS (strings point
 * into the statement's row). */
void jobdb_row_to_job(sqlite3_stmt *st, struct nsr_jobdb_job *job);
/* jobdb_log_next_seq - bump job id's line count; *seq gets the new one. */
int jobdb_log_next_seq(struct nsr_jobdb *db, int64_t id, int64_t *seq);

/* jobq_filter_release - free the filter's terms; leaves it empty. */
void jobq_filter_release(struct jobq_filter *f);

/* The column list every job read uses, in struct nsr_jobdb_job order. */
#define JOBDB_COLUMNS                                                     \
	"id, parent_id, type, client, name, level, grp, action, host, pid, " \
	"state, status, start_time, end_time, bytes, files, ssids, command"

#endif /* NSR_JOBDB_INT_H */
