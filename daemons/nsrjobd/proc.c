/*
 * proc.c - nsrjobd's RPC handlers (nsrjob.x).  Create (alone or with the
 * job's first log lines), update and log share the writer handle and run
 * under the server-wide mutex (NSR_RPC_SERIAL).  A query belongs to its
 * connection: JOB_QUERY_OPEN parses the jobquery text here (a mistake is
 * reported by line and column), opens a read handle and a cursor for
 * that connection, and JOB_QUERY_NEXT hands out at most JOB_BATCH_MAX
 * jobs and about BATCH_BYTES per reply, so memory does not grow with the
 * result.
 * JOB_PURGE runs in the caller's thread on the purge handle.
 */
#include "nsr/compat.h"

#include <signal.h>
#include <sys/stat.h>
#include <time.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/jobd_clnt.h"
#include "nsr/jobdb.h"
#include "nsr/policy.h"
#include "nsr/log.h"
#include "nsr/rpc.h"
#include "nsr/rpc_status.h"
#include "nsr/rpc/nsrjob.h"
#include "nsr/xmalloc.h"

#include "jobd.h"

#define BATCH_DEFAULT 64
#define BATCH_BYTES (1024 * 1024) /* soft byte budget of one reply */
#define LOG_BYTES (JOB_LOG_MAX * 15) /* encoded log per row (< 65536) */
#define QUERY_CACHE_KIB 512	      /* page cache of a query handle */

/* Per-connection query state. */
struct qconn {
	struct nsr_jobdb *db;
	struct nsr_jobdb_query *q;
	struct nsr_jobdb_cursor *cur;
	/* Who asked (at JOB_QUERY_OPEN): an administrator or one of the
	 * server's programs sees every job, anyone else the jobs of the
	 * clients they may read (policy.h, as mminfo's save sets). */
	int all, stated;
	char user[NSR_RPC_USER_MAX + 1];
	char host[256];
	/* The last client judged and the verdict: rows of one client come
	 * together, so the resources are looked at once per run of them. */
	char last[JOB_STR_MAX + 1];
	int have_last, last_ok;
};

/* may_read - may the query's caller see a job of client? */
static int may_read(struct jobd *jd, struct qconn *qc, const char *client)
{
	if (qc->all)
		return 1;
	if (!client)
		client = "";
	if (!qc->have_last || strcmp(client, qc->last) != 0) {
		snprintf(qc->last, sizeof(qc->last), "%s", client);
		qc->have_last = 1;
		qc->last_ok = nsr_policy_reader(jd->policy, client,
						qc->stated ? qc->user : NULL,
						qc->host);
	}
	return qc->last_ok;
}

/* dup_text - a malloc'ed wire copy of a job member ("" for NULL), cut
 * to the protocol's bound (at a UTF-8 character boundary): a job written
 * by another tool with a longer value must not make the reply
 * unencodable and break the whole query. */
static char *dup_text(const char *s, size_t max)
{
	size_t n;

	if (!s)
		return nsr_xstrdup("");
	n = strlen(s);
	if (n <= max)
		return nsr_xstrdup(s);
	n = max;
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return nsr_xstrndup(s, n);
}

/* rec_from_job - a wire record with malloc'ed copies of job's strings;
 * returns its approximate encoded size. */
static size_t rec_from_job(job_rec *r, const struct nsr_jobdb_job *job)
{
	char **text[] = {&r->client, &r->name,	 &r->level,
			 &r->group,  &r->action, &r->host,
			 &r->status, &r->ssids,	 &r->command};
	size_t len = 128;

	nsr_jobd_rec_from_job(r, job);
	for (size_t i = 0; i < NSR_ARRAY_SIZE(text); i++) {
		const char *v = *text[i];

		*text[i] = dup_text(*v ? v : NULL, text[i] == &r->command
						       ? JOB_CMD_MAX
						       : JOB_STR_MAX);
		len += strlen(*text[i]);
	}
	return len;
}

/* job_from_rec - point job's members at r's; the id is the server's. */
static void job_from_rec(struct nsr_jobdb_job *job, const job_rec *r)
{
	nsr_jobd_job_from_rec(job, r);
	job->id = 0;
}

/* bad_job - the administrator's message for a refused create/update. */
static void bad_job(nsr_status *st, int rc, const char *what, int64_t id,
		    const job_rec *r)
{
	if (rc == NSR_ERR_NOTFOUND)
		nsr_status_set(st, rc, "cannot %s job %" PRId64 ": no such job "
			   "(it was purged or never created)", what, id);
	else if (rc == NSR_ERR_INVAL && (r->type < 1 || r->type > 7))
		nsr_status_set(st, rc, "cannot %s job %" PRId64 ": type %d is "
			   "not a job type (1-7)", what, id, r->type);
	else if (rc == NSR_ERR_INVAL)
		nsr_status_set(st, rc, "cannot %s job %" PRId64 ": state %d is "
			   "not a job state (1-5)", what, id, r->state);
	else
		nsr_status_set(st, rc, "cannot %s job %" PRId64 " in the jobs "
			   "database %s: %s", what, id, g_jobd.dbpath,
			   nsr_strerror(rc));
}

/* no_db - the writer handle is gone (shutting down). */
static int no_db(nsr_status *st)
{
	nsr_status_set(st, NSR_ERR_STATE, "nsrjobd is shutting down; retry "
		   "when it is back");
	return NSR_OK;
}

/* create - record job r with its first log lines (one transaction),
 * answering in res. */
static int create(struct jobd *jd, const job_rec *r,
		  const char *const *lines, size_t nlines, int64_t time,
		  job_create_res *res)
{
	struct nsr_jobdb_job job;
	int64_t id = 0;
	int rc;

	if (!jd->db)
		return no_db(&res->st);
	job_from_rec(&job, r);
	rc = nsr_jobdb_create_log(jd->db, &job, lines, nlines, time, &id);
	if (rc) {
		bad_job(&res->st, rc, "create", 0, r);
		return NSR_OK;
	}
	res->id = id;
	nsr_status_set(&res->st, NSR_OK, "%s", "");
	return NSR_OK;
}

/* job_create - JOB_CREATE. */
static int job_create(void *ctx, void *argp, void *resp,
		      struct nsr_rpc_call *call)
{
	NSR_UNUSED(call);
	return create(ctx, argp, NULL, 0, 0, resp);
}

/* job_create_log - JOB_CREATE_LOG: the job and its first lines at once
 * (one round trip and one commit where JOB_CREATE and JOB_LOGs take
 * one each). */
static int job_create_log(void *ctx, void *argp, void *resp,
			  struct nsr_rpc_call *call)
{
	job_create_log_args *a = argp;

	NSR_UNUSED(call);
	return create(ctx, &a->job, (const char *const *)a->lines.lines_val,
		      a->lines.lines_len, a->time, resp);
}

/* job_create_many - JOB_CREATE_MANY: jobs with their first lines, one
 * transaction for all (nsr_jobdb_create_many). */
static int job_create_many(void *ctx, void *argp, void *resp,
			   struct nsr_rpc_call *call)
{
	struct jobd *jd = ctx;
	job_create_many_args *a = argp;
	job_create_many_res *res = resp;
	struct nsr_jobdb_job job[JOB_CREATE_MANY_MAX];
	struct nsr_jobdb_new v[JOB_CREATE_MANY_MAX] = {{0}};
	u_int n = NSR_MIN(a->jobs.jobs_len, (u_int)JOB_CREATE_MANY_MAX);
	int64_t *ids;
	int rc;

	NSR_UNUSED(call);
	if (!jd->db)
		return no_db(&res->st);
	ids = calloc(n ? n : 1, sizeof(*ids));
	if (!ids)
		return NSR_ERR_NOMEM;
	for (u_int i = 0; i < n; i++) {
		const job_create_log_args *x = &a->jobs.jobs_val[i];

		job_from_rec(&job[i], &x->job);
		v[i].job = &job[i];
		v[i].lines = (const char *const *)x->lines.lines_val;
		v[i].nlines = x->lines.lines_len;
		v[i].time = x->time;
	}
	if (nsr_test_once("NSR_TEST_JOBD_REFUSE_MANY")) {
		free(ids);
		nsr_warn("test knob: refusing %u jobs at once", n);
		nsr_status_set(&res->st, NSR_ERR_IO, "%s",
			       "test knob: refused, nothing recorded");
		return NSR_OK;
	}
	if (nsr_test_once("NSR_TEST_JOBD_DIE_BEFORE_MANY")) {
		nsr_warn("test knob: dying before recording %u jobs at once",
			 n);
		raise(SIGKILL);
	}
	rc = nsr_jobdb_create_many(jd->db, v, n, ids);
	if (rc == NSR_OK && nsr_test_once("NSR_TEST_JOBD_DIE_AFTER_MANY")) {
		nsr_warn("test knob: dying after recording %u jobs at once, "
			 "before the reply", n);
		raise(SIGKILL);
	}
	if (rc) {
		u_int bad = 0; /* the one whose type is wrong, if any */

		while (bad + 1 < n && a->jobs.jobs_val[bad].job.type >= 1 &&
		       a->jobs.jobs_val[bad].job.type <= 7)
			bad++;
		free(ids);
		bad_job(&res->st, rc, "create", 0, &a->jobs.jobs_val[bad].job);
		return NSR_OK;
	}
	res->ids.ids_val = ids;
	res->ids.ids_len = n;
	nsr_status_set(&res->st, NSR_OK, "%s", "");
	return NSR_OK;
}

/* job_update - JOB_UPDATE. */
static int job_update(void *ctx, void *argp, void *resp,
		      struct nsr_rpc_call *call)
{
	struct jobd *jd = ctx;
	job_update_args *a = argp;
	nsr_void_res *res = resp;
	struct nsr_jobdb_job job;
	int rc;

	NSR_UNUSED(call);
	if (!jd->db)
		return no_db(&res->st);
	if (a->fields & ~(unsigned)NSR_JOBDB_F_ALL) {
		nsr_status_set(&res->st, NSR_ERR_INVAL,
			       "cannot update job %" PRId64
			       ": unknown field bits 0x%x",
			       a->id, a->fields & ~(unsigned)NSR_JOBDB_F_ALL);
		return NSR_OK;
	}
	job_from_rec(&job, &a->job);
	rc = nsr_jobdb_update(jd->db, a->id, a->fields, &job);
	if (!(a->fields & NSR_JOBDB_F_TYPE))
		a->job.type = 1; /* not sent: not the culprit */
	if (rc)
		bad_job(&res->st, rc, "update", a->id, &a->job);
	else
		nsr_status_set(&res->st, NSR_OK, "%s", "");
	return NSR_OK;
}

/* job_log - JOB_LOG. */
static int job_log(void *ctx, void *argp, void *resp,
		   struct nsr_rpc_call *call)
{
	struct jobd *jd = ctx;
	job_log_args *a = argp;
	nsr_void_res *res = resp;
	int rc;

	NSR_UNUSED(call);
	if (!jd->db)
		return no_db(&res->st);
	rc = nsr_jobdb_log_append(jd->db, a->id,
				  a->time ? a->time : (int64_t)time(NULL),
				  a->text);
	if (rc == NSR_ERR_NOTFOUND)
		nsr_status_set(&res->st, rc,
			       "cannot log to job %" PRId64 ": no "
			       "such job (it was purged or never created)",
			       a->id);
	else if (rc)
		nsr_status_set(&res->st, rc,
			       "cannot log to job %" PRId64 " in %s: "
			       "%s",
			       a->id, jd->dbpath, nsr_strerror(rc));
	else
		nsr_status_set(&res->st, NSR_OK, "%s", "");
	return NSR_OK;
}

/* qconn_end - close the cursor and query (keeps the handle). */
static void qconn_end(struct qconn *qc)
{
	nsr_jobdb_cursor_close(qc->cur);
	qc->cur = NULL;
	nsr_jobdb_query_free(qc->q);
	qc->q = NULL;
}

/* qconn_free - connection closed: its query state goes. */
static void qconn_free(void *p)
{
	struct qconn *qc = p;

	qconn_end(qc);
	nsr_jobdb_close(qc->db);
	free(qc);
}

/* qconn_get - this connection's query state, made on first use. */
static struct qconn *qconn_get(struct nsr_rpc_call *call)
{
	struct qconn *qc = nsr_rpc_call_conn_data(call);

	if (!qc) {
		qc = nsr_xcalloc(1, sizeof(*qc));
		nsr_rpc_call_set_conn_data(call, qc, qconn_free);
	}
	return qc;
}

/* parse_text - apply each line of text to q; errors name line and column. */
static int parse_text(struct nsr_jobdb_query *q, const char *text,
		      nsr_status *st)
{
	const char *p = text;

	for (int line = 1; *p; line++) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		struct nsr_jobdb_syntax err;
		enum nsr_jobdb_cmd cmd;
		int rc = nsr_jobdb_query_parse(q, p, len, &cmd, &err);

		if (rc == NSR_ERR_SYNTAX || rc == NSR_ERR_TOOBIG) {
			nsr_status_set(st, rc, "line %d, column %zu: %s", line,
				   err.column, err.msg);
			return rc;
		}
		if (rc) {
			nsr_status_set(st, rc, "cannot parse the query: %s",
				   nsr_strerror(rc));
			return rc;
		}
		p += len;
		if (*p == '\n')
			p++;
	}
	return NSR_OK;
}

/* job_query_open - JOB_QUERY_OPEN: parse, open this connection's cursor. */
static int job_query_open(void *ctx, void *argp, void *resp,
			  struct nsr_rpc_call *call)
{
	struct jobd *jd = ctx;
	job_query_args *a = argp;
	nsr_void_res *res = resp;
	struct qconn *qc = qconn_get(call);
	struct nsr_jobdb_options opt = {0};
	int rc;

	qconn_end(qc);
	if (nsr_test_once("NSR_TEST_JOBD_QUERY_FAIL")) {
		nsr_warn("test knob: failing a query");
		nsr_status_set(&res->st, NSR_ERR_IO, "%s",
			       "test knob: the query failed");
		return NSR_OK;
	}
	qc->stated = nsr_rpc_call_user(call) != NULL;
	snprintf(qc->user, sizeof(qc->user), "%s",
		 qc->stated ? nsr_rpc_call_user(call) : "");
	snprintf(qc->host, sizeof(qc->host), "%s", nsr_rpc_call_host(call));
	qc->have_last = 0;
	qc->all = nsr_policy_call_daemon(jd->policy, call) ||
		  nsr_policy_admin(jd->policy, qc->stated ? qc->user : NULL,
				   qc->host);
	rc = nsr_jobdb_query_new(&qc->q);
	if (rc) {
		nsr_status_set(&res->st, rc, "out of memory");
		return NSR_OK;
	}
	if (parse_text(qc->q, a->query, &res->st)) {
		qconn_end(qc);
		return NSR_OK;
	}
	if (!qc->db) {
		opt.cache_kib = QUERY_CACHE_KIB;
		opt.background_checkpoint = 1;
		rc = nsr_jobdb_open(jd->dbpath, &opt, &qc->db);
		if (rc) {
			nsr_status_set(&res->st, rc,
				       "cannot open the jobs database "
				       "%s for reading: %s",
				       jd->dbpath, nsr_strerror(rc));
			qconn_end(qc);
			return NSR_OK;
		}
	}
	rc = nsr_jobdb_cursor_open(qc->db, qc->q, &qc->cur);
	if (rc) {
		nsr_status_set(&res->st, rc, "cannot run the query on %s: %s",
			   jd->dbpath, nsr_strerror(rc));
		qconn_end(qc);
		return NSR_OK;
	}
	nsr_status_set(&res->st, NSR_OK, "%s", "");
	return NSR_OK;
}

/* Building one row's encoded log within a byte budget. */
struct log_acc {
	struct nsr_buf *out;
	int64_t skipped;
};

/* log_add - encode one log line unless the row's budget is spent. */
static int log_add(void *arg, int64_t seq, int64_t time, const char *line)
{
	struct log_acc *la = arg;
	size_t before = la->out->len;
	int rc;

	if (la->skipped) {
		la->skipped++;
		return 0;
	}
	rc = nsr_jobd_log_encode(la->out, seq, time, line);
	if (rc)
		return rc;
	if (la->out->len > LOG_BYTES) {
		nsr_buf_setlen(la->out, before);
		la->skipped = 1;
	}
	return 0;
}

/* row_log - a malloc'ed encoded log of job id (cut at LOG_BYTES). */
static int row_log(struct nsr_jobdb *db, int64_t id, char **out)
{
	struct nsr_buf b;
	struct log_acc la = {&b, 0};
	int rc;

	nsr_buf_init(&b, 0);
	rc = nsr_jobdb_log_read(db, id, log_add, &la);
	if (!rc && la.skipped) {
		char note[96];

		snprintf(note, sizeof(note), "[%" PRId64 " more log lines not "
			 "shown: over %d bytes]", la.skipped, LOG_BYTES);
		rc = nsr_jobd_log_encode(&b, 0, 0, note);
	}
	if (rc) {
		nsr_buf_release(&b);
		return rc;
	}
	*out = nsr_buf_detach(&b, NULL);
	return NSR_OK;
}

/* job_query_next - JOB_QUERY_NEXT: the next bounded batch of rows. */
static int job_query_next(void *ctx, void *argp, void *resp,
			  struct nsr_rpc_call *call)
{
	struct jobd *jd = ctx;
	job_next_args *a = argp;
	job_next_res *res = resp;
	struct qconn *qc = nsr_rpc_call_conn_data(call);
	unsigned max = a->max ? NSR_MIN(a->max, JOB_BATCH_MAX) : BATCH_DEFAULT;
	size_t bytes = 0;
	u_int n = 0;
	int rc = NSR_OK;

	if (!qc || !qc->cur) {
		nsr_status_set(&res->st, NSR_ERR_STATE,
			       "no query is open on this "
			       "connection: send JOB_QUERY_OPEN first");
		res->done = TRUE;
		return NSR_OK;
	}
	res->rows.rows_val = nsr_xcalloc(max, sizeof(job_row));
	while (n < max && bytes < BATCH_BYTES) {
		const struct nsr_jobdb_job *job;
		job_row *row = &res->rows.rows_val[n];

		rc = nsr_jobdb_cursor_next(qc->cur, &job);
		if (rc)
			break;
		if (!may_read(jd, qc, job->client))
			continue; /* another client's job */
		bytes += rec_from_job(&row->job, job);
		row->log = NULL;
		if (a->with_log)
			rc = row_log(qc->db, job->id, &row->log);
		if (!row->log)
			row->log = nsr_xstrdup("");
		bytes += strlen(row->log);
		n++;
		if (rc)
			break;
	}
	res->rows.rows_len = n;
	if (rc == NSR_ERR_EOF) {
		res->done = TRUE;
		qconn_end(qc); /* ends the read snapshot */
		rc = NSR_OK;
	}
	if (rc) {
		nsr_status_set(&res->st, rc,
			       "reading the jobs database %s failed: "
			       "%s",
			       jd->dbpath, nsr_strerror(rc));
		res->done = TRUE;
		qconn_end(qc);
		return NSR_OK;
	}
	nsr_status_set(&res->st, NSR_OK, "%s", "");
	return NSR_OK;
}

/* job_purge - JOB_PURGE: purge now, in this connection's thread. */
static int job_purge(void *ctx, void *argp, void *resp,
		     struct nsr_rpc_call *call)
{
	struct jobd *jd = ctx;
	job_purge_args *a = argp;
	job_purge_res *res = resp;
	struct nsr_jobdb_purge_stats st;
	int rc;

	NSR_UNUSED(call);
	if (a->retention_hours > JOBD_RETENTION_MAX) {
		nsr_status_set(&res->st, NSR_ERR_INVAL,
			       "retention of %u hours is "
			       "out of range (0-%d)",
			       a->retention_hours, JOBD_RETENTION_MAX);
		return NSR_OK;
	}
	rc = jobd_purge_run(jd, a->retention_hours, &st);
	res->jobs = st.jobs;
	res->logs = st.logs;
	res->batches = st.batches;
	if (rc)
		nsr_status_set(&res->st, rc,
			       "purge of the jobs database %s failed "
			       "after %" PRIu64 " jobs: %s",
			       jd->dbpath, st.jobs, nsr_strerror(rc));
	else
		nsr_status_set(&res->st, NSR_OK, "%s", "");
	return NSR_OK;
}

/* job_backup - JOB_BACKUP: a copy of the database into the bootstrap's
 * staging directory, which must exist (nsrbootstrap(8) makes it).  Runs
 * on the writer handle under the server mutex (SERIAL): the copy is of
 * one moment, and short. */
static int job_backup(void *ctx, void *argp, void *resp,
		      struct nsr_rpc_call *call)
{
	struct jobd *jd = ctx;
	job_backup_res *res = resp;
	uint64_t bytes = 0;
	struct stat st;
	int rc;

	NSR_UNUSED(argp);
	if (stat(jd->bootdir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		nsr_status_set(&res->st, NSR_ERR_NOTFOUND, "no staging "
			       "directory %s: a copy is made only for "
			       "nsrbootstrap, which makes it", jd->bootdir);
		return NSR_OK;
	}
	rc = nsr_jobdb_backup(jd->db, jd->bootcopy, &bytes);
	res->bytes = bytes;
	if (rc)
		nsr_status_set(&res->st, rc, "cannot copy the jobs database "
			       "%s to %s: %s", jd->dbpath, jd->bootcopy,
			       rc == NSR_ERR_SYSTEM ? strerror(errno)
						    : nsr_strerror(rc));
	else
		nsr_status_set(&res->st, NSR_OK, "%s", "");
	nsr_info("jobs database copy for %s: %s (%llu bytes)",
		 nsr_rpc_call_peer(call), rc ? nsr_strerror(rc) : "written",
		 (unsigned long long)bytes);
	return NSR_OK;
}

static const struct nsr_rpc_proc jobd_procs[] = {
	/* access class: the server's programs (nsrd) and administrators
	 * (jobd_authz): a job record is what the server says happened */
	{JOB_CREATE, "create", NSR_XDR(xdr_job_rec), sizeof(job_rec),
	 NSR_XDR(xdr_job_create_res), sizeof(job_create_res), job_create,
	 NSR_RPC_SERIAL | NSR_RPC_ADMIN},
	{JOB_UPDATE, "update", NSR_XDR(xdr_job_update_args),
	 sizeof(job_update_args), NSR_XDR(xdr_nsr_void_res),
	 sizeof(nsr_void_res), job_update, NSR_RPC_SERIAL | NSR_RPC_ADMIN},
	{JOB_LOG, "log", NSR_XDR(xdr_job_log_args), sizeof(job_log_args),
	 NSR_XDR(xdr_nsr_void_res), sizeof(nsr_void_res), job_log,
	 NSR_RPC_SERIAL | NSR_RPC_ADMIN},
	{JOB_QUERY_OPEN, "query_open", NSR_XDR(xdr_job_query_args),
	 sizeof(job_query_args), NSR_XDR(xdr_nsr_void_res),
	 sizeof(nsr_void_res), job_query_open, 0},
	{JOB_QUERY_NEXT, "query_next", NSR_XDR(xdr_job_next_args),
	 sizeof(job_next_args), NSR_XDR(xdr_job_next_res),
	 sizeof(job_next_res), job_query_next, 0},
	/* access class: administrators only (jobd_authz) */
	{JOB_PURGE, "purge", NSR_XDR(xdr_job_purge_args),
	 sizeof(job_purge_args), NSR_XDR(xdr_job_purge_res),
	 sizeof(job_purge_res), job_purge, NSR_RPC_ADMIN},
	/* access class: the server's programs (nsrbootstrap) and
	 * administrators (jobd_authz) */
	{JOB_BACKUP, "backup", NSR_XDR(xdr_void), 0,
	 NSR_XDR(xdr_job_backup_res), sizeof(job_backup_res), job_backup,
	 NSR_RPC_SERIAL | NSR_RPC_ADMIN},
	/* access class: as JOB_CREATE */
	{JOB_CREATE_LOG, "create_log", NSR_XDR(xdr_job_create_log_args),
	 sizeof(job_create_log_args), NSR_XDR(xdr_job_create_res),
	 sizeof(job_create_res), job_create_log,
	 NSR_RPC_SERIAL | NSR_RPC_ADMIN},
	/* access class: as JOB_CREATE */
	{JOB_CREATE_MANY, "create_many", NSR_XDR(xdr_job_create_many_args),
	 sizeof(job_create_many_args), NSR_XDR(xdr_job_create_many_res),
	 sizeof(job_create_many_res), job_create_many,
	 NSR_RPC_SERIAL | NSR_RPC_ADMIN},
};

/* jobd_authz - JOB_PURGE: an administrator of the server; JOB_BACKUP
 * and the writes of job records: also the server's programs (nsrd,
 * nsrbootstrap) (policy.h); refusals logged. */
int jobd_authz(void *ctx, const struct nsr_rpc_call *call,
	       const struct nsr_rpc_proc *p, const void *args,
	       struct nsr_buf *why)
{
	struct jobd *jd = ctx;
	int daemon = p->proc != JOB_PURGE;
	char what[64];

	NSR_UNUSED(args);
	if (daemon ? nsr_policy_call_daemon(jd->policy, call)
		   : nsr_policy_call_admin(jd->policy, call))
		return NSR_OK;
	snprintf(what, sizeof(what), "jobs database %s",
		 p->proc == JOB_BACKUP	       ? "copy"
		 : p->proc == JOB_CREATE_LOG ||
			 p->proc == JOB_CREATE_MANY ? "create"
						    : p->name);
	nsr_policy_deny(call, what,
			daemon ? NSR_POLICY_NOT_DAEMON : NSR_POLICY_NOT_ADMIN,
			why);
	nsr_warn("%s", why->data);
	return NSR_ERR_PERM;
}

const struct nsr_rpc_prog jobd_progs[1] = {
	{NSRJOBD_PROG, NSRJOBD_V1, jobd_procs, NSR_ARRAY_SIZE(jobd_procs),
	 &g_jobd, jobd_authz},
};
