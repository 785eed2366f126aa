/*
 * job.c - job rows and their log lines: create, update, get, append and
 * read the log, and the startup recovery that fails the jobs a dead server
 * left queued or active.  Every write is one short transaction.
 */
#include "nsr/compat.h"

#include <time.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/jobdb.h"

#include "jobdb_int.h"

#define JOBDB_MAX_LOG_LINE 65536

/* Columns nsr_jobdb_update() may set, in enum nsr_jobdb_field bit order. */
static const char *const update_columns[] = {
	"parent_id", "type", "client", "name", "level", "grp", "action",
	"host", "pid", "state", "status", "start_time", "end_time", "bytes",
	"files", "ssids", "command",
};

/* now_seconds - the wall clock in seconds. */
static int64_t now_seconds(void)
{
	return (int64_t)time(NULL);
}

/* is_finished - COMPLETED, FAILED or ABORTED. */
static int is_finished(enum nsr_jobdb_state s)
{
	return s >= NSR_JOBDB_COMPLETED;
}

/* valid_type - a known job type. */
static int valid_type(enum nsr_jobdb_type t)
{
	return nsr_jobdb_type_name(t) != NULL;
}

/* valid_state - a known job state. */
static int valid_state(enum nsr_jobdb_state s)
{
	return nsr_jobdb_state_name(s) != NULL;
}

/* step_done - step a statement that returns no rows, then reset it. */
static int step_done(sqlite3_stmt *st)
{
	int src = sqlite3_step(st);

	sqlite3_reset(st);
	return src == SQLITE_DONE ? NSR_OK : jobdb_rc(src);
}

/* check_line - a log line the database takes: NSR_OK, NSR_ERR_INVAL for
 * NULL, NSR_ERR_TOOBIG over JOBDB_MAX_LOG_LINE bytes. */
static int check_line(const char *line)
{
	if (!line)
		return NSR_ERR_INVAL;
	if (strlen(line) > JOBDB_MAX_LOG_LINE)
		return NSR_ERR_TOOBIG;
	return NSR_OK;
}

/* insert_job - the INSERT of a new job, inside the caller's transaction;
 * *id gets the id the database assigned. */
static int insert_job(struct nsr_jobdb *db, const struct nsr_jobdb_job *job,
		      enum nsr_jobdb_state state, int64_t end, int64_t *id)
{
	sqlite3_stmt *st = db->st_insert;
	int rc = NSR_OK;

	/* A parent must already exist or have existed (invariant 2). */
	if (job->parent_id) {
		int64_t top = 0;
		int src = sqlite3_step(db->st_top_id);

		if (src == SQLITE_ROW)
			top = sqlite3_column_int64(db->st_top_id, 0);
		else if (src != SQLITE_DONE)
			rc = jobdb_rc(src);
		sqlite3_reset(db->st_top_id);
		if (!rc && job->parent_id > top)
			rc = NSR_ERR_INVAL;
		if (rc)
			return rc;
	}
	sqlite3_bind_int64(st, 1, job->parent_id);
	sqlite3_bind_int(st, 2, job->type);
	jobdb_bind_text(st, 3, job->client);
	jobdb_bind_text(st, 4, job->name);
	jobdb_bind_text(st, 5, job->level);
	jobdb_bind_text(st, 6, job->group);
	jobdb_bind_text(st, 7, job->action);
	jobdb_bind_text(st, 8, job->host);
	sqlite3_bind_int64(st, 9, job->pid);
	sqlite3_bind_int(st, 10, state);
	sqlite3_bind_int(st, 11, is_finished(state));
	jobdb_bind_text(st, 12, job->status);
	sqlite3_bind_int64(st, 13, job->start_time);
	sqlite3_bind_int64(st, 14, end);
	sqlite3_bind_int64(st, 15, job->bytes);
	sqlite3_bind_int64(st, 16, job->files);
	jobdb_bind_text(st, 17, job->ssids);
	jobdb_bind_text(st, 18, job->command);
	rc = step_done(st);
	sqlite3_clear_bindings(st);
	if (!rc)
		*id = sqlite3_last_insert_rowid(db->db);
	return rc;
}

/* add_line - append one checked line to job id's log, inside the
 * caller's transaction. */
static int add_line(struct nsr_jobdb *db, int64_t id, int64_t time,
		    const char *line)
{
	sqlite3_stmt *st = db->st_log_add;
	int64_t seq = 0;
	int rc = jobdb_log_next_seq(db, id, &seq);

	if (rc)
		return rc;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, seq);
	sqlite3_bind_int64(st, 3, time ? time : now_seconds());
	sqlite3_bind_text(st, 4, line, -1, SQLITE_STATIC);
	rc = step_done(st);
	sqlite3_clear_bindings(st);
	return rc;
}

/* nsr_jobdb_create - insert a job; the database assigns the id. */
int nsr_jobdb_create(struct nsr_jobdb *db, const struct nsr_jobdb_job *job,
		     int64_t *id)
{
	return nsr_jobdb_create_log(db, job, NULL, 0, 0, id);
}

/* check_new - is v a job nsr_jobdb_create_log would take? */
static int check_new(const struct nsr_jobdb_new *v)
{
	const struct nsr_jobdb_job *job = v->job;
	enum nsr_jobdb_state state = job->state ? job->state : NSR_JOBDB_QUEUED;
	int rc;

	if (!valid_type(job->type) || !valid_state(state) ||
	    job->parent_id < 0 || (v->nlines && !v->lines))
		return NSR_ERR_INVAL;
	for (size_t i = 0; i < v->nlines; i++) {
		rc = check_line(v->lines[i]);
		if (rc)
			return rc;
	}
	return NSR_OK;
}

/* insert_new - v's job and lines inside the caller's transaction. */
static int insert_new(struct nsr_jobdb *db, const struct nsr_jobdb_new *v,
		      int64_t *id)
{
	const struct nsr_jobdb_job *job = v->job;
	enum nsr_jobdb_state state = job->state ? job->state : NSR_JOBDB_QUEUED;
	int64_t end = job->end_time;
	int rc;

	if (is_finished(state) && end <= 0)
		end = now_seconds();
	rc = insert_job(db, job, state, end, id);
	for (size_t i = 0; !rc && i < v->nlines; i++)
		rc = add_line(db, *id, v->time, v->lines[i]);
	return rc;
}

/* nsr_jobdb_create_many - see jobdb.h: checked whole first, then one
 * transaction. */
int nsr_jobdb_create_many(struct nsr_jobdb *db,
			  const struct nsr_jobdb_new *v, size_t n,
			  int64_t *ids)
{
	int rc = NSR_OK;

	for (size_t i = 0; i < n; i++)
		ids[i] = 0;
	for (size_t i = 0; !rc && i < n; i++)
		rc = check_new(&v[i]);
	if (rc || n == 0)
		return rc;
	rc = jobdb_begin(db);
	if (rc)
		return rc;
	for (size_t i = 0; !rc && i < n; i++)
		rc = insert_new(db, &v[i], &ids[i]);
	if (!rc)
		rc = jobdb_commit(db);
	else
		jobdb_rollback(db);
	if (rc)
		for (size_t i = 0; i < n; i++)
			ids[i] = 0;
	return rc;
}

/* nsr_jobdb_create_log - a job and its first log lines, one transaction. */
int nsr_jobdb_create_log(struct nsr_jobdb *db, const struct nsr_jobdb_job *job,
			 const char *const *lines, size_t nlines, int64_t time,
			 int64_t *id)
{
	struct nsr_jobdb_new v = {job, lines, nlines, time};

	return nsr_jobdb_create_many(db, &v, 1, id);
}

/* bind_field - bind member `bit` of v to parameter idx. */
static void bind_field(sqlite3_stmt *st, int idx, unsigned bit,
		       const struct nsr_jobdb_job *v)
{
	switch (bit) {
	case NSR_JOBDB_F_PARENT:
		sqlite3_bind_int64(st, idx, v->parent_id);
		break;
	case NSR_JOBDB_F_TYPE: sqlite3_bind_int(st, idx, v->type); break;
	case NSR_JOBDB_F_CLIENT: jobdb_bind_text(st, idx, v->client); break;
	case NSR_JOBDB_F_NAME: jobdb_bind_text(st, idx, v->name); break;
	case NSR_JOBDB_F_LEVEL: jobdb_bind_text(st, idx, v->level); break;
	case NSR_JOBDB_F_GROUP: jobdb_bind_text(st, idx, v->group); break;
	case NSR_JOBDB_F_ACTION: jobdb_bind_text(st, idx, v->action); break;
	case NSR_JOBDB_F_HOST: jobdb_bind_text(st, idx, v->host); break;
	case NSR_JOBDB_F_PID: sqlite3_bind_int64(st, idx, v->pid); break;
	case NSR_JOBDB_F_STATE: sqlite3_bind_int(st, idx, v->state); break;
	case NSR_JOBDB_F_STATUS: jobdb_bind_text(st, idx, v->status); break;
	case NSR_JOBDB_F_START:
		sqlite3_bind_int64(st, idx, v->start_time);
		break;
	case NSR_JOBDB_F_END: sqlite3_bind_int64(st, idx, v->end_time); break;
	case NSR_JOBDB_F_BYTES: sqlite3_bind_int64(st, idx, v->bytes); break;
	case NSR_JOBDB_F_FILES: sqlite3_bind_int64(st, idx, v->files); break;
	case NSR_JOBDB_F_SSIDS: jobdb_bind_text(st, idx, v->ssids); break;
	case NSR_JOBDB_F_COMMAND: jobdb_bind_text(st, idx, v->command); break;
	default: break;
	}
}

/* build_update - the UPDATE text for a field mask (fixed column names). */
static int build_update(unsigned fields, struct nsr_buf *sql)
{
	int rc = nsr_buf_addstr(sql, "UPDATE jobs SET id=id");

	for (size_t i = 0; !rc && i < NSR_ARRAY_SIZE(update_columns); i++) {
		if (!(fields & (1u << i)))
			continue;
		rc = nsr_buf_addf(sql, ", %s=?%zu", update_columns[i], i + 1);
	}
	/* finished follows state (SET expressions see the old row, so it is
	 * computed from the parameter, not the column). */
	if (!rc && (fields & NSR_JOBDB_F_STATE))
		rc = nsr_buf_addf(sql, ", finished=(?%d>=3)",
				  __builtin_ctz(NSR_JOBDB_F_STATE) + 1);
	if (!rc)
		rc = nsr_buf_addstr(sql, " WHERE id=?30");
	return rc;
}

/* nsr_jobdb_update - store the masked members of v into job id. */
int nsr_jobdb_update(struct nsr_jobdb *db, int64_t id, unsigned fields,
		     const struct nsr_jobdb_job *v)
{
	struct nsr_buf sql;
	sqlite3_stmt *st = NULL;
	int rc;

	nsr_buf_init(&sql, 0);
	if ((fields & ~(unsigned)NSR_JOBDB_F_ALL) || id <= 0)
		return NSR_ERR_INVAL;
	if ((fields & NSR_JOBDB_F_TYPE) && !valid_type(v->type))
		return NSR_ERR_INVAL;
	if ((fields & NSR_JOBDB_F_STATE) && !valid_state(v->state))
		return NSR_ERR_INVAL;
	if ((fields & NSR_JOBDB_F_PARENT) &&
	    (v->parent_id < 0 || (v->parent_id && v->parent_id >= id)))
		return NSR_ERR_INVAL;
	rc = build_update(fields, &sql);
	if (rc)
		goto out;
	rc = jobdb_rc(sqlite3_prepare_v2(db->db, sql.data, -1, &st, NULL));
	if (rc)
		goto out;
	for (size_t i = 0; i < NSR_ARRAY_SIZE(update_columns); i++)
		if (fields & (1u << i))
			bind_field(st, (int)i + 1, 1u << i, v);
	sqlite3_bind_int64(st, 30, id);
	rc = jobdb_begin(db);
	if (rc)
		goto out;
	rc = step_done(st);
	if (!rc && sqlite3_changes(db->db) == 0)
		rc = NSR_ERR_NOTFOUND;
	if (!rc) {
		sqlite3_bind_int64(db->st_fix_end, 1, now_seconds());
		sqlite3_bind_int64(db->st_fix_end, 2, id);
		rc = step_done(db->st_fix_end);
	}
	if (rc)
		jobdb_rollback(db);
	else
		rc = jobdb_commit(db);
out:
	sqlite3_finalize(st);
	nsr_buf_release(&sql);
	return rc;
}

/* jobdb_row_to_job - fill job from a JOBDB_COLUMNS row (no copies). */
void jobdb_row_to_job(sqlite3_stmt *st, struct nsr_jobdb_job *job)
{
	memset(job, 0, sizeof(*job));
	job->id = sqlite3_column_int64(st, 0);
	job->parent_id = sqlite3_column_int64(st, 1);
	job->type = (enum nsr_jobdb_type)sqlite3_column_int(st, 2);
	job->client = (const char *)sqlite3_column_text(st, 3);
	job->name = (const char *)sqlite3_column_text(st, 4);
	job->level = (const char *)sqlite3_column_text(st, 5);
	job->group = (const char *)sqlite3_column_text(st, 6);
	job->action = (const char *)sqlite3_column_text(st, 7);
	job->host = (const char *)sqlite3_column_text(st, 8);
	job->pid = sqlite3_column_int64(st, 9);
	job->state = (enum nsr_jobdb_state)sqlite3_column_int(st, 10);
	job->status = (const char *)sqlite3_column_text(st, 11);
	job->start_time = sqlite3_column_int64(st, 12);
	job->end_time = sqlite3_column_int64(st, 13);
	job->bytes = sqlite3_column_int64(st, 14);
	job->files = sqlite3_column_int64(st, 15);
	job->ssids = (const char *)sqlite3_column_text(st, 16);
	job->command = (const char *)sqlite3_column_text(st, 17);
}

/* copy_strings - move the job's strings into one block it owns. */
static int copy_strings(struct nsr_jobdb_job *job)
{
	const char **f[] = {
		&job->client, &job->name, &job->level, &job->group,
		&job->action, &job->host, &job->status, &job->ssids,
		&job->command,
	};
	size_t total = 1, off = 0;
	char *mem;

	for (size_t i = 0; i < NSR_ARRAY_SIZE(f); i++)
		if (*f[i])
			total += strlen(*f[i]) + 1;
	mem = malloc(total);
	if (!mem)
		return NSR_ERR_NOMEM;
	for (size_t i = 0; i < NSR_ARRAY_SIZE(f); i++) {
		size_t n;

		if (!*f[i])
			continue;
		n = strlen(*f[i]) + 1;
		memcpy(mem + off, *f[i], n);
		*f[i] = mem + off;
		off += n;
	}
	job->priv_mem = mem;
	return NSR_OK;
}

/* nsr_jobdb_get - read one job into caller-released storage. */
int nsr_jobdb_get(struct nsr_jobdb *db, int64_t id, struct nsr_jobdb_job *out)
{
	sqlite3_stmt *st = db->st_get;
	int src, rc;

	memset(out, 0, sizeof(*out));
	sqlite3_bind_int64(st, 1, id);
	src = sqlite3_step(st);
	if (src == SQLITE_ROW) {
		jobdb_row_to_job(st, out);
		rc = copy_strings(out);
		if (rc)
			memset(out, 0, sizeof(*out));
	} else {
		rc = src == SQLITE_DONE ? NSR_ERR_NOTFOUND : jobdb_rc(src);
	}
	sqlite3_reset(st);
	return rc;
}

/* nsr_jobdb_job_release - free what nsr_jobdb_get allocated. */
void nsr_jobdb_job_release(struct nsr_jobdb_job *job)
{
	if (!job)
		return;
	free(job->priv_mem);
	memset(job, 0, sizeof(*job));
}

/* jobdb_log_next_seq - bump job id's line count; *seq gets the new one. */
int jobdb_log_next_seq(struct nsr_jobdb *db, int64_t id, int64_t *seq)
{
	sqlite3_stmt *st = db->st_log_next;
	int src, rc = NSR_OK;

	sqlite3_bind_int64(st, 1, id);
	src = sqlite3_step(st);
	if (src == SQLITE_ROW)
		*seq = sqlite3_column_int64(st, 0);
	else
		rc = src == SQLITE_DONE ? NSR_ERR_NOTFOUND : jobdb_rc(src);
	/* Run RETURNING to completion before the insert. */
	while (src == SQLITE_ROW)
		src = sqlite3_step(st);
	if (!rc && src != SQLITE_DONE)
		rc = jobdb_rc(src);
	sqlite3_reset(st);
	return rc;
}

/* nsr_jobdb_log_append - add one line at the end of job id's log. */
int nsr_jobdb_log_append(struct nsr_jobdb *db, int64_t id, int64_t time,
			 const char *line)
{
	int rc = check_line(line);

	if (rc)
		return rc;
	rc = jobdb_begin(db);
	if (rc)
		return rc;
	rc = add_line(db, id, time, line);
	if (rc) {
		jobdb_rollback(db);
		return rc;
	}
	return jobdb_commit(db);
}

/* nsr_jobdb_log_read - call fn on each log line of job id, in order. */
int nsr_jobdb_log_read(struct nsr_jobdb *db, int64_t id, nsr_jobdb_log_fn fn,
		       void *arg)
{
	sqlite3_stmt *st = db->st_log_read;
	int src, rc = NSR_OK;

	sqlite3_bind_int64(st, 1, id);
	for (;;) {
		src = sqlite3_step(st);
		if (src != SQLITE_ROW)
			break;
		rc = fn(arg, sqlite3_column_int64(st, 0),
			sqlite3_column_int64(st, 1),
			(const char *)sqlite3_column_text(st, 2));
		if (rc)
			break;
	}
	if (!rc && src != SQLITE_DONE)
		rc = jobdb_rc(src);
	sqlite3_reset(st);
	return rc;
}

/* nsr_jobdb_recover - fail every job a previous server run left behind. */
int nsr_jobdb_recover(struct nsr_jobdb *db, int64_t now, uint64_t *marked)
{
	sqlite3_stmt *log = NULL, *upd = NULL;
	int rc;

	if (marked)
		*marked = 0;
	rc = jobdb_rc(sqlite3_prepare_v2(
		db->db,
		"INSERT INTO job_log(job_id, seq, time, line)"
		" SELECT id, nlog+1, ?1, ?2 FROM jobs WHERE finished=0",
		-1, &log, NULL));
	if (!rc)
		rc = jobdb_rc(sqlite3_prepare_v2(
			db->db,
			"UPDATE jobs SET nlog=nlog+1, state=4, finished=1,"
			" status=?2, end_time=?1 WHERE finished=0",
			-1, &upd, NULL));
	if (rc)
		goto out;
	sqlite3_bind_int64(log, 1, now);
	sqlite3_bind_text(log, 2, NSR_JOBDB_RESTART_REASON, -1, SQLITE_STATIC);
	sqlite3_bind_int64(upd, 1, now);
	sqlite3_bind_text(upd, 2, NSR_JOBDB_RESTART_REASON, -1, SQLITE_STATIC);
	rc = jobdb_begin(db);
	if (rc)
		goto out;
	rc = step_done(log);
	if (!rc)
		rc = step_done(upd);
	if (rc) {
		jobdb_rollback(db);
		goto out;
	}
	if (marked)
		*marked = (uint64_t)sqlite3_changes64(db->db);
	rc = jobdb_commit(db);
	if (rc && marked)
		*marked = 0;
out:
	sqlite3_finalize(log);
	sqlite3_finalize(upd);
	return rc;
}
