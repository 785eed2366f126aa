/*
 * jobdb.h - the jobs database: nsrjobd's record of every job and its log.
 *
 * One SQLite file in WAL mode holds one row per job (save, recover, clone,
 * ...) and, in a separate table, each job's log lines in order.  Job ids are
 * assigned by the database, start at 1 and only ever grow (never reused, even
 * after a purge).  The library never logs and never exits: every function
 * returns NSR_OK or a negative NSR_ERR_* code (err.h).
 *
 * Threads: a handle is used by one thread at a time.  Open one handle per
 * thread; WAL lets readers run beside the one writer, and a writer waits for
 * another's transaction (busy timeout), which the purge keeps short by
 * deleting in small batches and by giving way, between batches, to writers
 * of the same process that are waiting.  A daemon that purges on a worker
 * thread should open its other handles with background_checkpoint and call
 * nsr_jobdb_checkpoint() from that worker every second or so.
 *
 * Calling sequence of a daemon:
 *   1. nsr_jobdb_open()        create or open the file, set up the schema;
 *   2. nsr_jobdb_recover()     once at startup: queued/active jobs of the
 *                              previous run become FAILED;
 *   3. nsr_jobdb_create() / _update() / _log_append() as jobs run;
 *   4. nsr_jobdb_purge()       on the hourly timer tick;
 *   5. nsr_jobdb_close().
 *
 * Query language (jobquery, nsradmin-like; see nsr_jobsdb(5)):
 *   . type: save job; job state: completed; client: web01   set the query
 *   show job id; name; job state                            set the columns
 *   print [attr: value; ...]                                list matching jobs
 * nsr_jobdb_query_parse() turns one line into a structured, validated
 * filter; a cursor evaluates it inside SQLite with bound parameters only
 * and hands back one row at a time, so memory stays flat however many jobs
 * match.
 */
#ifndef NSR_JOBDB_H
#define NSR_JOBDB_H

#include <stddef.h>
#include <stdint.h>

#include "nsr/buf.h"

struct nsr_jobdb;	 /* open database handle */
struct nsr_jobdb_query;	 /* query-language session: filter + show list */
struct nsr_jobdb_cursor; /* streaming result of a query */

/* Job types; the text names are the values of the `type` attribute. */
enum nsr_jobdb_type {
	NSR_JOBDB_TYPE_SAVE = 1,	  /* "save job" */
	NSR_JOBDB_TYPE_RECOVER = 2,	  /* "recover job" */
	NSR_JOBDB_TYPE_CLONE = 3,	  /* "clone job" */
	NSR_JOBDB_TYPE_INDEX_SAVE = 4,	  /* "index save job" */
	NSR_JOBDB_TYPE_BOOTSTRAP_SAVE = 5, /* "bootstrap save job" */
	NSR_JOBDB_TYPE_MAINTENANCE = 6,	  /* "maintenance job" */
	NSR_JOBDB_TYPE_SAVEGRP = 7,	  /* "savegrp job" */
};

/* Job states.  COMPLETED, FAILED and ABORTED are "finished": only finished
 * jobs are ever purged. */
enum nsr_jobdb_state {
	NSR_JOBDB_QUEUED = 1,
	NSR_JOBDB_ACTIVE = 2,
	NSR_JOBDB_COMPLETED = 3,
	NSR_JOBDB_FAILED = 4,
	NSR_JOBDB_ABORTED = 5,
};

/*
 * One job.  Text fields may be NULL (= unset, stored as NULL and printed
 * empty).  Times are seconds since the Epoch, 0 = unset.
 *
 * As input (create, update) the strings stay the caller's; they are copied.
 * As output (get, cursor) the strings point into storage owned by whoever
 * filled the struct: nsr_jobdb_job_release() for nsr_jobdb_get(), the cursor
 * (valid until its next step or close) for nsr_jobdb_cursor_next().
 */
struct nsr_jobdb_job {
	int64_t id;	   /* assigned by nsr_jobdb_create(); ignored there */
	int64_t parent_id; /* group/workflow run; 0 = none */
	enum nsr_jobdb_type type;
	const char *client;
	const char *name; /* save set name */
	const char *level;
	const char *group; /* group or workflow */
	const char *action;
	const char *host;
	int64_t pid;
	enum nsr_jobdb_state state; /* 0 on create means QUEUED */
	const char *status;	    /* completion status text */
	int64_t start_time;
	int64_t end_time;
	int64_t bytes;
	int64_t files;
	const char *ssids; /* save set ids, space separated */
	const char *command;
	void *priv_mem; /* private: storage behind the strings (get) */
};

/* Field mask for nsr_jobdb_update(): which members of the job to store. */
enum nsr_jobdb_field {
	NSR_JOBDB_F_PARENT = 1u << 0,
	NSR_JOBDB_F_TYPE = 1u << 1,
	NSR_JOBDB_F_CLIENT = 1u << 2,
	NSR_JOBDB_F_NAME = 1u << 3,
	NSR_JOBDB_F_LEVEL = 1u << 4,
	NSR_JOBDB_F_GROUP = 1u << 5,
	NSR_JOBDB_F_ACTION = 1u << 6,
	NSR_JOBDB_F_HOST = 1u << 7,
	NSR_JOBDB_F_PID = 1u << 8,
	NSR_JOBDB_F_STATE = 1u << 9,
	NSR_JOBDB_F_STATUS = 1u << 10,
	NSR_JOBDB_F_START = 1u << 11,
	NSR_JOBDB_F_END = 1u << 12,
	NSR_JOBDB_F_BYTES = 1u << 13,
	NSR_JOBDB_F_FILES = 1u << 14,
	NSR_JOBDB_F_SSIDS = 1u << 15,
	NSR_JOBDB_F_COMMAND = 1u << 16,
	NSR_JOBDB_F_ALL = (1u << 17) - 1,
};

/* Open options; a NULL pointer or zero members mean the defaults. */
struct nsr_jobdb_options {
	unsigned batch_rows; /* jobs deleted per purge transaction (1000);
			      * env NSR_TEST_JOBDB_BATCH overrides it */
	unsigned cache_kib;  /* SQLite page cache per handle (2048 KiB) */
	unsigned busy_ms;    /* wait for another writer (5000 ms) */
	unsigned background_checkpoint; /* 1: commits on this handle leave
			      * WAL checkpoints (and their fsyncs) to
			      * nsr_jobdb_checkpoint() or a purge, up to a
			      * 64 MiB WAL, and never truncate the WAL
			      * file; 0: checkpoint every ~4 MiB and cut
			      * the WAL back to 16 MiB */
};

/* Result of one nsr_jobdb_purge(). */
struct nsr_jobdb_purge_stats {
	uint64_t jobs;	    /* job rows deleted (parents and children) */
	uint64_t logs;	    /* log lines deleted */
	uint64_t batches;   /* write transactions used */
	uint64_t vacuumed;  /* free pages returned to the file system */
	uint64_t longest_us; /* longest time the purge held the write lock */
};

#define NSR_JOBDB_RETENTION_DEFAULT 72 /* hours */
#define NSR_JOBDB_RESTART_REASON "interrupted: server restarted"

/* --- Database ----------------------------------------------------------- */

/* nsr_jobdb_open - open (creating if needed) the jobs db at path.
 * *out is NULL on failure.  NSR_ERR_INVAL (empty path), NSR_ERR_IO (cannot
 * open/create), NSR_ERR_CORRUPT (not an SQLite file or damaged),
 * NSR_ERR_UNSUPPORTED (written by a newer schema), NSR_ERR_BUSY (locked),
 * NSR_ERR_NOMEM. */
int nsr_jobdb_open(const char *path, const struct nsr_jobdb_options *opt,
		   struct nsr_jobdb **out);
/* nsr_jobdb_close - close the handle; NULL is allowed. */
void nsr_jobdb_close(struct nsr_jobdb *db);

/* nsr_jobdb_create - insert a new job; *id gets its id (0 on failure).
 * NSR_ERR_INVAL for a bad type or state, or a parent_id that is not the id
 * of an earlier job. */
int nsr_jobdb_create(struct nsr_jobdb *db, const struct nsr_jobdb_job *job,
		     int64_t *id);
/* nsr_jobdb_create_log - nsr_jobdb_create, then nlines lines appended to
 * the new job's log (seq 1 to nlines, stamped time, 0 = now), in one
 * transaction: the job and all its lines, or nothing (*id 0).  Besides
 * nsr_jobdb_create's errors: NSR_ERR_INVAL for a NULL line, NSR_ERR_TOOBIG
 * for a line over 65536 bytes. */
int nsr_jobdb_create_log(struct nsr_jobdb *db, const struct nsr_jobdb_job *job,
			 const char *const *lines, size_t nlines, int64_t time,
			 int64_t *id);
/* A job to create with its first log lines (nsr_jobdb_create_many). */
struct nsr_jobdb_new {
	const struct nsr_jobdb_job *job;
	const char *const *lines;
	size_t nlines;
	int64_t time; /* of the lines; 0 = now */
};

/* nsr_jobdb_create_many - nsr_jobdb_create_log of v[0..n) in one
 * transaction: all of them with their lines, ids[i] for v[i], or none
 * (every id 0), with nsr_jobdb_create_log's errors. */
int nsr_jobdb_create_many(struct nsr_jobdb *db,
			  const struct nsr_jobdb_new *v, size_t n,
			  int64_t *ids);
/* nsr_jobdb_update - store the members of v named in fields (a mask of
 * enum nsr_jobdb_field) into job id.  Setting a finished state while the
 * job has no end time stamps end time = now.  NSR_ERR_NOTFOUND; NSR_ERR_INVAL
 * for unknown field bits, a bad type or state, or a parent_id not below
 * id. */
int nsr_jobdb_update(struct nsr_jobdb *db, int64_t id, unsigned fields,
		     const struct nsr_jobdb_job *v);
/* nsr_jobdb_get - read one job into *out (owned storage: release it with
 * nsr_jobdb_job_release).  NSR_ERR_NOTFOUND if there is no such job. */
int nsr_jobdb_get(struct nsr_jobdb *db, int64_t id, struct nsr_jobdb_job *out);
/* nsr_jobdb_job_release - free what nsr_jobdb_get put in *job; zeroes it. */
void nsr_jobdb_job_release(struct nsr_jobdb_job *job);

/* nsr_jobdb_log_append - append one line to job id's log (time 0 = now).
 * NSR_ERR_NOTFOUND if the job does not exist, NSR_ERR_TOOBIG for a line
 * over 65536 bytes, NSR_ERR_INVAL for NULL. */
int nsr_jobdb_log_append(struct nsr_jobdb *db, int64_t id, int64_t time,
			 const char *line);
/* Callback for nsr_jobdb_log_read: non-zero return stops and is returned. */
typedef int (*nsr_jobdb_log_fn)(void *arg, int64_t seq, int64_t time,
				const char *line);
/* nsr_jobdb_log_read - call fn for each log line of job id, in order
 * (seq = 1, 2, ...).  The line is valid only during the call. */
int nsr_jobdb_log_read(struct nsr_jobdb *db, int64_t id, nsr_jobdb_log_fn fn,
		       void *arg);

/* nsr_jobdb_recover - startup recovery: every QUEUED or ACTIVE job becomes
 * FAILED with completion status and a log line NSR_JOBDB_RESTART_REASON and
 * end time now.  *marked (may be NULL) gets the count. */
int nsr_jobdb_recover(struct nsr_jobdb *db, int64_t now, uint64_t *marked);

/* nsr_jobdb_purge - delete finished jobs whose end time is more than
 * retention_hours before now, with their logs.  A job with a parent goes
 * only with its parent, as one unit; a unit goes only when every job in it
 * is finished and expired.  Deletes in batches of batch_rows jobs per
 * transaction (committing early after 10 ms), gives way between batches to
 * writers of this process that are waiting, then returns freed pages to
 * the file system.  A purge with nothing to delete is one index probe.
 * *st (may be NULL) gets the counts, also on failure. */
int nsr_jobdb_purge(struct nsr_jobdb *db, unsigned retention_hours,
		    int64_t now, struct nsr_jobdb_purge_stats *st);

/* nsr_jobdb_checkpoint - copy the WAL into the database file (SQLite
 * PASSIVE checkpoint: never waits for readers or writers).  A daemon whose
 * writers use background_checkpoint calls this every second or so from
 * another thread, so that no insert pays for the copy and its fsync. */
int nsr_jobdb_checkpoint(struct nsr_jobdb *db);

/* nsr_jobdb_backup - a consistent copy of db, as of now, written to the
 * file path (through path.tmp and a rename; SQLite's backup API, in
 * steps, so other handles' writers go on); *bytes (may be NULL) gets its
 * size.  For the bootstrap save (nsrbootstrap(8)). */
int nsr_jobdb_backup(struct nsr_jobdb *db, const char *path,
		     uint64_t *bytes);

/* Lock waits of one handle, for monitoring. */
struct nsr_jobdb_stats {
	uint64_t busy_waits;   /* operations that found the db locked */
	uint64_t busy_us;      /* total time spent waiting for a lock */
	uint64_t busy_max_us;  /* longest single wait (up to the last poll) */
};

/* nsr_jobdb_stats - the handle's lock-wait counters since open. */
void nsr_jobdb_stats(const struct nsr_jobdb *db, struct nsr_jobdb_stats *st);

/* nsr_jobdb_count - number of jobs in the database. */
int nsr_jobdb_count(struct nsr_jobdb *db, uint64_t *n);
/* nsr_jobdb_check - SQLite integrity check plus the jobs-db invariants
 * (no log line without a job, finished flag matches the state, a finished
 * job has an end time, parent ids below job ids, line counts right; see
 * nsr_jobsdb(5)).  NSR_OK or NSR_ERR_CORRUPT.  Reads the whole file. */
int nsr_jobdb_check(struct nsr_jobdb *db);

/* nsr_jobdb_type_name / _state_name - text for an enum ("save job",
 * "COMPLETED"); NULL if out of range. */
const char *nsr_jobdb_type_name(enum nsr_jobdb_type t);
const char *nsr_jobdb_state_name(enum nsr_jobdb_state s);
/* nsr_jobdb_type_parse / _state_parse - enum for a text name, compared
 * case-insensitively; 0 if unknown. */
enum nsr_jobdb_type nsr_jobdb_type_parse(const char *s);
enum nsr_jobdb_state nsr_jobdb_state_parse(const char *s);

/* --- Query language ----------------------------------------------------- */

/* What a parsed line asks the caller to do. */
enum nsr_jobdb_cmd {
	NSR_JOBDB_CMD_NONE = 0,	 /* blank line or # comment */
	NSR_JOBDB_CMD_QUERY = 1, /* ". ..." set (or with no terms clear) */
	NSR_JOBDB_CMD_SHOW = 2,	 /* "show ..." set (no names: all) */
	NSR_JOBDB_CMD_PRINT = 3, /* "print [...]": run the query now */
};

/* Where and why a line did not parse. */
struct nsr_jobdb_syntax {
	size_t column;	/* 1-based byte column of the offending token */
	char msg[128];	/* e.g. "expected ':' after attribute name" */
};

/* nsr_jobdb_query_new - an empty session (matches all jobs, shows all
 * attributes).  Free it with nsr_jobdb_query_free. */
int nsr_jobdb_query_new(struct nsr_jobdb_query **out);
/* nsr_jobdb_query_free - NULL is allowed. */
void nsr_jobdb_query_free(struct nsr_jobdb_query *q);
/* nsr_jobdb_query_parse - parse one line (len bytes, no NUL needed) and
 * apply it to q.  *cmd says what the line was.  On NSR_ERR_SYNTAX, *err
 * (may be NULL) says where and q is unchanged.  NSR_ERR_TOOBIG for lines
 * or term counts over the limits in nsr_jobsdb(5). */
int nsr_jobdb_query_parse(struct nsr_jobdb_query *q, const char *line,
			  size_t len, enum nsr_jobdb_cmd *cmd,
			  struct nsr_jobdb_syntax *err);
/* nsr_jobdb_query_describe - append the canonical text of q (one "." line
 * and one "show" line) to out; parsing it again gives the same query. */
int nsr_jobdb_query_describe(const struct nsr_jobdb_query *q,
			     struct nsr_buf *out);

/* nsr_jobdb_query_quote - append text as a quoted value that
 * nsr_jobdb_query_parse reads back as exactly text (to build a query
 * line from a name: ". type: savegrp job; group: " + quoted name). */
int nsr_jobdb_query_quote(const char *text, struct nsr_buf *out);

/* nsr_jobdb_query_shows_log - 1 if `job log` is shown (an empty show list
 * shows everything), else 0: a remote reader fetches logs only then. */
int nsr_jobdb_query_shows_log(const struct nsr_jobdb_query *q);

/* --- Cursor and output -------------------------------------------------- */

/* Output formats of nsr_jobdb_cursor_print. */
enum nsr_jobdb_format {
	NSR_JOBDB_FMT_NSRADMIN = 0, /* aligned "attribute: value;" blocks */
	NSR_JOBDB_FMT_JSON = 1,	    /* one JSON object per line per job */
};

/* nsr_jobdb_cursor_open - start streaming the jobs that match q's filter,
 * in job id order.  q must outlive the cursor.  The cursor holds a read
 * snapshot: it sees the database as of its first step. */
int nsr_jobdb_cursor_open(struct nsr_jobdb *db,
			  const struct nsr_jobdb_query *q,
			  struct nsr_jobdb_cursor **out);
/* nsr_jobdb_cursor_next - step to the next job; *job points at a row owned
 * by the cursor, valid until the next step or close.  NSR_OK, NSR_ERR_EOF
 * at the end, or an error. */
int nsr_jobdb_cursor_next(struct nsr_jobdb_cursor *c,
			  const struct nsr_jobdb_job **job);
/* nsr_jobdb_cursor_print - append the current job, limited to q's show
 * list, to out in format fmt (reads its log if `job log` is shown). */
int nsr_jobdb_cursor_print(struct nsr_jobdb_cursor *c,
			   enum nsr_jobdb_format fmt, struct nsr_buf *out);
/* Where nsr_jobdb_print gets a job's log lines: call fn(arg, ...) for each
 * line in order and return fn's first non-zero result or NSR_OK.  (The
 * cursor reads the db; a remote reader replays the lines it received.) */
typedef int (*nsr_jobdb_log_src)(void *src, nsr_jobdb_log_fn fn, void *arg);

/* nsr_jobdb_print - append job, limited to q's show list, to out in format
 * fmt; the same bytes nsr_jobdb_cursor_print produces.  logs (may be NULL:
 * an empty log) and src supply the `job log` lines if it is shown.  Lets
 * a program print jobs that did not come from a local cursor. */
int nsr_jobdb_print(const struct nsr_jobdb_query *q,
		    const struct nsr_jobdb_job *job, nsr_jobdb_log_src logs,
		    void *src, enum nsr_jobdb_format fmt, struct nsr_buf *out);
/* nsr_jobdb_cursor_close - finish; NULL is allowed. */
void nsr_jobdb_cursor_close(struct nsr_jobdb_cursor *c);

#endif /* NSR_JOBDB_H */
