/*
 * jobdb.c - the jobs database handle: opening the SQLite file in WAL mode,
 * creating the schema (see jobdb_int.h), transactions, error mapping, and
 * the names of job types and states.  Job rows live in job.c, the purge in
 * purge.c, the query language in query.c and the cursor in cursor.c.
 */
#include "nsr/compat.h"

#include <strings.h>

#include "nsr/err.h"
#include "nsr/jobdb.h"

#include "jobdb_int.h"

static const char *const jobdb_schema =
	"CREATE TABLE IF NOT EXISTS meta("
	" key TEXT PRIMARY KEY, value) WITHOUT ROWID;"
	"CREATE TABLE IF NOT EXISTS jobs("
	" id INTEGER PRIMARY KEY AUTOINCREMENT,"
	" parent_id INTEGER NOT NULL DEFAULT 0,"
	" type INTEGER NOT NULL,"
	" client TEXT, name TEXT, level TEXT, grp TEXT, action TEXT,"
	" host TEXT, pid INTEGER NOT NULL DEFAULT 0,"
	" state INTEGER NOT NULL, finished INTEGER NOT NULL,"
	" status TEXT,"
	" start_time INTEGER NOT NULL DEFAULT 0,"
	" end_time INTEGER NOT NULL DEFAULT 0,"
	" bytes INTEGER NOT NULL DEFAULT 0, files INTEGER NOT NULL DEFAULT 0,"
	" ssids TEXT, command TEXT, nlog INTEGER NOT NULL DEFAULT 0);"
	"CREATE INDEX IF NOT EXISTS jobs_purge ON jobs(finished, end_time);"
	"CREATE INDEX IF NOT EXISTS jobs_parent ON jobs(parent_id)"
	" WHERE parent_id!=0;"
	"CREATE TABLE IF NOT EXISTS job_log("
	" job_id INTEGER NOT NULL, seq INTEGER NOT NULL,"
	" time INTEGER NOT NULL, line TEXT NOT NULL,"
	" PRIMARY KEY(job_id, seq)) WITHOUT ROWID;"
	"INSERT OR IGNORE INTO meta(key, value) VALUES('schema', 1);";

static const char *const type_names[] = {
	NULL, "save job", "recover job", "clone job", "index save job",
	"bootstrap save job", "maintenance job", "savegrp job",
};

static const char *const state_names[] = {
	NULL, "QUEUED", "ACTIVE", "COMPLETED", "FAILED", "ABORTED",
};

/* jobdb_rc - map an SQLite result code to an NSR_ERR_* code. */
int jobdb_rc(int src)
{
	switch (src & 0xff) {
	case SQLITE_OK:
	case SQLITE_DONE:
	case SQLITE_ROW:
		return NSR_OK;
	case SQLITE_NOMEM:
		return NSR_ERR_NOMEM;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return NSR_ERR_BUSY;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
	case SQLITE_SCHEMA:
		return NSR_ERR_CORRUPT;
	case SQLITE_FULL:
		return NSR_ERR_NOSPACE;
	case SQLITE_READONLY:
		return NSR_ERR_READONLY;
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return NSR_ERR_PERM;
	case SQLITE_CONSTRAINT:
	case SQLITE_MISMATCH:
	case SQLITE_RANGE:
		return NSR_ERR_INVAL;
	case SQLITE_TOOBIG:
		return NSR_ERR_TOOBIG;
	default:
		return NSR_ERR_IO;
	}
}

/* jobdb_exec - run SQL text that takes no parameters. */
int jobdb_exec(struct nsr_jobdb *db, const char *sql)
{
	return jobdb_rc(sqlite3_exec(db->db, sql, NULL, NULL, NULL));
}

/* jobdb_commit - commit the open transaction. */
int jobdb_commit(struct nsr_jobdb *db)
{
	int rc = jobdb_exec(db, "COMMIT");

	if (rc)
		jobdb_rollback(db);
	return rc;
}

/* jobdb_rollback - abandon the open transaction, if any. */
void jobdb_rollback(struct nsr_jobdb *db)
{
	if (!sqlite3_get_autocommit(db->db))
		sqlite3_exec(db->db, "ROLLBACK", NULL, NULL, NULL);
}

/* jobdb_bind_text - bind a string, or NULL for an unset one. */
int jobdb_bind_text(sqlite3_stmt *st, int idx, const char *s)
{
	if (!s)
		return sqlite3_bind_null(st, idx);
	return sqlite3_bind_text(st, idx, s, -1, SQLITE_STATIC);
}

/* env_unsigned - a positive number from the environment, or 0. */
static unsigned env_unsigned(const char *name)
{
	const char *s = getenv(name);
	char *end = NULL;
	unsigned long v;

	if (!s || !*s)
		return 0;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v == 0 || v > 1000000)
		return 0;
	return (unsigned)v;
}

/* prepare - compile one of the handle's long-lived statements. */
static int prepare(struct nsr_jobdb *db, const char *sql, sqlite3_stmt **st)
{
	return jobdb_rc(sqlite3_prepare_v3(
		db->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL));
}

/* prepare_all - compile the statements job.c uses on every call. */
static int prepare_all(struct nsr_jobdb *db)
{
	int rc;

	rc = prepare(db,
		     "INSERT INTO jobs(parent_id, type, client, name, level,"
		     " grp, action, host, pid, state, finished, status,"
		     " start_time, end_time, bytes, files, ssids, command)"
		     " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
		     &db->st_insert);
	if (!rc)
		rc = prepare(db,
			     "SELECT " JOBDB_COLUMNS " FROM jobs WHERE id=?",
			     &db->st_get);
	if (!rc)
		rc = prepare(db,
			     "UPDATE jobs SET nlog=nlog+1 WHERE id=?"
			     " RETURNING nlog",
			     &db->st_log_next);
	if (!rc)
		rc = prepare(db,
			     "INSERT INTO job_log(job_id, seq, time, line)"
			     " VALUES(?,?,?,?)",
			     &db->st_log_add);
	if (!rc)
		rc = prepare(db,
			     "SELECT seq, time, line FROM job_log"
			     " WHERE job_id=? ORDER BY seq",
			     &db->st_log_read);
	if (!rc)
		rc = prepare(
			db, "SELECT seq FROM sqlite_sequence WHERE name='jobs'",
			&db->st_top_id);
	if (!rc)
		rc = prepare(db,
			     "UPDATE jobs SET end_time=?1 WHERE id=?2"
			     " AND finished AND end_time<=0",
			     &db->st_fix_end);
	return rc;
}

/* check_schema_version - refuse a file written by a newer schema. */
static int check_schema_version(struct nsr_jobdb *db)
{
	sqlite3_stmt *st = NULL;
	int rc;

	rc = jobdb_rc(sqlite3_prepare_v2(
		db->db, "SELECT value FROM meta WHERE key='schema'", -1, &st,
		NULL));
	if (rc)
		goto out;
	if (sqlite3_step(st) != SQLITE_ROW) {
		rc = NSR_ERR_CORRUPT;
		goto out;
	}
	if (sqlite3_column_int64(st, 0) != JOBDB_SCHEMA_VERSION)
		rc = NSR_ERR_UNSUPPORTED;
out:
	sqlite3_finalize(st);
	return rc;
}

/* setup - pragmas and schema of a freshly opened connection. */
static int setup(struct nsr_jobdb *db, unsigned cache_kib)
{
	char sql[128];
	int rc;

	/* auto_vacuum only takes effect before the first table exists. */
	rc = jobdb_exec(db, "PRAGMA auto_vacuum=INCREMENTAL");
	if (!rc)
		rc = jobdb_exec(db, "PRAGMA journal_mode=WAL");
	if (!rc)
		rc = jobdb_exec(db, "PRAGMA synchronous=NORMAL");
	/* A WAL size limit makes the connection that restarts the WAL cut the
	 * file back (measured up to 0.5 s in nsrjobd): only handles that
	 * checkpoint themselves keep it; background_checkpoint handles leave
	 * the WAL to the purge handle. */
	if (!rc)
		rc = jobdb_exec(
			db, db->bg_ckpt ? "PRAGMA journal_size_limit=-1"
					: "PRAGMA journal_size_limit=16777216");
	if (!rc)
		rc = jobdb_exec(db, "PRAGMA mmap_size=0");
	if (!rc)
		rc = jobdb_exec(db, "PRAGMA temp_store=FILE");
	if (rc)
		return rc;
	snprintf(sql, sizeof(sql), "PRAGMA cache_size=-%u", cache_kib);
	rc = jobdb_exec(db, sql);
	if (rc)
		return rc;
	rc = jobdb_begin(db);
	if (rc)
		return rc;
	rc = jobdb_exec(db, jobdb_schema);
	if (rc) {
		jobdb_rollback(db);
		return rc;
	}
	rc = jobdb_commit(db);
	if (rc)
		return rc;
	return check_schema_version(db);
}

/* nsr_jobdb_open - open or create the jobs database at path. */
int nsr_jobdb_open(const char *path, const struct nsr_jobdb_options *opt,
		   struct nsr_jobdb **out)
{
	struct nsr_jobdb *db = NULL;
	unsigned cache_kib = JOBDB_CACHE_KIB_DEFAULT;
	unsigned busy_ms = JOBDB_BUSY_MS_DEFAULT;
	int rc;

	*out = NULL;
	if (!path || !*path)
		return NSR_ERR_INVAL;
	db = calloc(1, sizeof(*db));
	if (!db)
		return NSR_ERR_NOMEM;
	db->batch_rows = JOBDB_BATCH_DEFAULT;
	if (opt && opt->batch_rows)
		db->batch_rows = opt->batch_rows;
	if (opt && opt->cache_kib)
		cache_kib = opt->cache_kib;
	if (opt && opt->busy_ms)
		busy_ms = opt->busy_ms;
	if (opt && opt->background_checkpoint)
		db->bg_ckpt = 1;
	if (env_unsigned("NSR_TEST_JOBDB_BATCH"))
		db->batch_rows = env_unsigned("NSR_TEST_JOBDB_BATCH");

	rc = sqlite3_open_v2(path, &db->db,
			     SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
				     SQLITE_OPEN_NOMUTEX,
			     NULL);
	if (rc != SQLITE_OK) {
		rc = rc == SQLITE_NOMEM ? NSR_ERR_NOMEM : NSR_ERR_IO;
		goto out;
	}
	sqlite3_extended_result_codes(db->db, 1);
	db->busy_ms = busy_ms;
	jobdb_lock_setup(db);
	rc = setup(db, cache_kib);
	if (!rc)
		rc = prepare_all(db);
out:
	if (rc) {
		nsr_jobdb_close(db);
		return rc;
	}
	*out = db;
	return NSR_OK;
}

/* nsr_jobdb_close - finalize the statements and close the file. */
void nsr_jobdb_close(struct nsr_jobdb *db)
{
	if (!db)
		return;
	jobdb_purging(db, 0);
	sqlite3_finalize(db->st_insert);
	sqlite3_finalize(db->st_get);
	sqlite3_finalize(db->st_log_next);
	sqlite3_finalize(db->st_log_add);
	sqlite3_finalize(db->st_log_read);
	sqlite3_finalize(db->st_top_id);
	sqlite3_finalize(db->st_fix_end);
	sqlite3_close_v2(db->db);
	free(db);
}

/* single_int - run a one-row, one-column query and return its value. */
static int single_int(struct nsr_jobdb *db, const char *sql, int64_t *v)
{
	sqlite3_stmt *st = NULL;
	int rc;

	rc = jobdb_rc(sqlite3_prepare_v2(db->db, sql, -1, &st, NULL));
	if (rc)
		goto out;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*v = sqlite3_column_int64(st, 0);
		rc = NSR_OK;
	} else {
		rc = rc == SQLITE_DONE ? NSR_ERR_NOTFOUND : jobdb_rc(rc);
	}
out:
	sqlite3_finalize(st);
	return rc;
}

/* nsr_jobdb_count - number of jobs. */
int nsr_jobdb_count(struct nsr_jobdb *db, uint64_t *n)
{
	int64_t v = 0;
	int rc = single_int(db, "SELECT count(*) FROM jobs", &v);

	*n = rc ? 0 : (uint64_t)v;
	return rc;
}

/* nsr_jobdb_check - SQLite's integrity check plus our invariants. */
int nsr_jobdb_check(struct nsr_jobdb *db)
{
	sqlite3_stmt *st = NULL;
	int64_t bad = 0;
	int rc;

	rc = jobdb_rc(sqlite3_prepare_v2(db->db, "PRAGMA integrity_check", -1,
					 &st, NULL));
	if (rc)
		goto out;
	if (sqlite3_step(st) != SQLITE_ROW ||
	    strcmp((const char *)sqlite3_column_text(st, 0), "ok") != 0) {
		rc = NSR_ERR_CORRUPT;
		goto out;
	}
	rc = single_int(
		db,
		"SELECT (SELECT count(*) FROM job_log l WHERE NOT EXISTS"
		" (SELECT 1 FROM jobs j WHERE j.id=l.job_id))"
		" + (SELECT count(*) FROM jobs WHERE"
		"  finished != (state >= 3) OR (finished AND end_time <= 0)"
		"  OR (parent_id != 0 AND parent_id >= id)"
		"  OR nlog != (SELECT count(*) FROM job_log"
		"   WHERE job_id=id))",
		&bad);
	if (!rc && bad)
		rc = NSR_ERR_CORRUPT;
out:
	sqlite3_finalize(st);
	return rc;
}

/* nsr_jobdb_type_name - "save job" etc. */
const char *nsr_jobdb_type_name(enum nsr_jobdb_type t)
{
	if ((int)t < 1 || (size_t)t >= NSR_ARRAY_SIZE(type_names))
		return NULL;
	return type_names[t];
}

/* nsr_jobdb_state_name - "COMPLETED" etc. */
const char *nsr_jobdb_state_name(enum nsr_jobdb_state s)
{
	if ((int)s < 1 || (size_t)s >= NSR_ARRAY_SIZE(state_names))
		return NULL;
	return state_names[s];
}

/* nsr_jobdb_type_parse - type for a name, case-insensitive; 0 if none. */
enum nsr_jobdb_type nsr_jobdb_type_parse(const char *s)
{
	for (size_t i = 1; s && i < NSR_ARRAY_SIZE(type_names); i++)
		if (strcasecmp(s, type_names[i]) == 0)
			return (enum nsr_jobdb_type)i;
	return 0;
}

/* nsr_jobdb_state_parse - state for a name, case-insensitive; 0 if none. */
enum nsr_jobdb_state nsr_jobdb_state_parse(const char *s)
{
	for (size_t i = 1; s && i < NSR_ARRAY_SIZE(state_names); i++)
		if (strcasecmp(s, state_names[i]) == 0)
			return (enum nsr_jobdb_state)i;
	return 0;
}
