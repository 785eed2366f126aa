/*
 * jobd_clnt.c - the client of nsrjobd (nsrjob.x): connect, record jobs,
 * stream query results one batch at a time.  The handle owns at most one
 * decoded JOB_QUERY_NEXT batch; the job handed out points into it.  Unset
 * text fields travel as "" (XDR has no NULL string) and come back as NULL,
 * so the output matches nsr_jobdb_cursor_print's on the server.
 */
#include "nsr/compat.h"

#include <stdarg.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/jobd_clnt.h"
#include "nsr/jobdb.h"
#include "nsr/peer.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsrjob.h"

#include "jobd_clnt_int.h"

/* set_err - replace err's text (err may be NULL); returns rc. */
static int set_err(struct nsr_buf *err, int rc, const char *fmt, ...)
	NSR_PRINTF(3, 4);

static int set_err(struct nsr_buf *err, int rc, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return rc;
	nsr_buf_reset(err);
	va_start(ap, fmt);
	nsr_buf_vaddf(err, fmt, ap);
	va_end(ap);
	return rc;
}

/* call - one RPC through the peer; transport failures and a non-zero
 * status become rc.  JOB_UPDATE (it sets fields) and JOB_QUERY_OPEN (it
 * opens the cursor of the connection it arrives on, a new one after a
 * failure) may be repeated after a transport failure: a query then waits
 * for an nsrjobd that is restarting, as its other calls do, instead of
 * failing on the connection its dying predecessor accepted. */
static int call(struct nsr_jobd *j, uint32_t proc, xdrproc_t xargs,
		void *args, xdrproc_t xres, void *res, const nsr_status *st,
		struct nsr_buf *err)
{
	int rc = nsr_peer_call(j->peer, proc, xargs, args, xres, res,
			       proc == JOB_UPDATE || proc == JOB_QUERY_OPEN
				       ? NSR_PEER_RETRY
				       : 0);

	if (rc)
		return set_err(err, rc, "%s", nsr_peer_errmsg(j->peer));
	if (st->code)
		return set_err(err, st->code < 0 ? st->code : NSR_ERR_PROTO,
			       "%s", st->msg ? st->msg : "nsrjobd failed");
	return NSR_OK;
}

/* make - a handle for nsrjobd on host (port 0 = locate); connects now
 * unless wait_ms < 0 (then on the first call, waiting -wait_ms - 1). */
static int make(const char *host, int port, int wait_ms,
		struct nsr_jobd **out, struct nsr_buf *err)
{
	struct nsr_jobd *j;
	int rc;

	*out = NULL;
	j = calloc(1, sizeof(*j));
	if (!j)
		return NSR_ERR_NOMEM;
	rc = nsr_peer_new(host && *host ? host : "localhost", port,
			  NSRJOBD_PROG, NSRJOBD_V1, &j->peer);
	if (rc == NSR_OK && wait_ms < 0) {
		nsr_peer_set_wait(j->peer, -wait_ms - 1);
	} else if (rc == NSR_OK) {
		rc = nsr_peer_connect(j->peer);
		if (rc && err)
			nsr_buf_addstr(err, nsr_peer_errmsg(j->peer));
	}
	if (rc) {
		nsr_jobd_close(j);
		return rc;
	}
	*out = j;
	return NSR_OK;
}

/* nsr_jobd_open - locate nsrjobd through the server's nsrexecd. */
int nsr_jobd_open(const char *server, struct nsr_jobd **out,
		  struct nsr_buf *err)
{
	return make(server, 0, 0, out, err);
}

/* nsr_jobd_new - a long-lived handle that connects on first use. */
int nsr_jobd_new(const char *server, int wait_ms, struct nsr_jobd **out)
{
	return make(server, 0, -(wait_ms > 0 ? wait_ms : 0) - 1, out, NULL);
}

/* nsr_jobd_connect - connect to a known port. */
int nsr_jobd_connect(const char *host, int port, struct nsr_jobd **out,
		     struct nsr_buf *err)
{
	return make(host, port, 0, out, err);
}

/* drop_batch - free the decoded batch, if any. */
static void drop_batch(struct nsr_jobd *j)
{
	if (j->have_batch)
		xdr_free(NSR_XDR(xdr_job_next_res), (char *)&j->batch);
	memset(&j->batch, 0, sizeof(j->batch));
	j->have_batch = 0;
	j->pos = 0;
	j->row = NULL;
}

/* nsr_jobd_close - close and free. */
void nsr_jobd_close(struct nsr_jobd *j)
{
	if (!j)
		return;
	drop_batch(j);
	nsr_jobdb_query_free(j->q);
	nsr_peer_free(j->peer);
	free(j);
}

/* nsr_jobd_set_timeout - reply timeout of later calls. */
void nsr_jobd_set_timeout(struct nsr_jobd *j, int reply_ms)
{
	nsr_peer_set_timeout(j->peer, reply_ms);
}

/* text_in - a job's text member for the wire ("" for NULL). */
static char *text_in(const char *s)
{
	return (char *)(s ? s : "");
}

/* cut_line - line as the wire takes it: itself, or its first
 * JOB_LOG_MAX bytes in a malloc'ed copy that *cut keeps for the caller
 * to free.  NULL without memory. */
static char *cut_line(const char *line, char **cut)
{
	char *s = text_in(line);

	*cut = NULL;
	if (strlen(s) <= JOB_LOG_MAX)
		return s;
	*cut = strndup(s, JOB_LOG_MAX);
	return *cut;
}

/* nsr_jobd_rec_from_job - point a job_rec at job's members (no copies). */
void nsr_jobd_rec_from_job(job_rec *r, const struct nsr_jobdb_job *job)
{
	r->id = job->id;
	r->parent_id = job->parent_id;
	r->type = (int)job->type;
	r->client = text_in(job->client);
	r->name = text_in(job->name);
	r->level = text_in(job->level);
	r->group = text_in(job->group);
	r->action = text_in(job->action);
	r->host = text_in(job->host);
	r->pid = job->pid;
	r->state = (int)job->state;
	r->status = text_in(job->status);
	r->start_time = job->start_time;
	r->end_time = job->end_time;
	r->bytes = job->bytes;
	r->files = job->files;
	r->ssids = text_in(job->ssids);
	r->command = text_in(job->command);
}

/* nsr_jobd_create - JOB_CREATE. */
int nsr_jobd_create(struct nsr_jobd *j, const struct nsr_jobdb_job *job,
		    int64_t *id, struct nsr_buf *err)
{
	job_rec rec;
	job_create_res res;
	int rc;

	*id = 0;
	nsr_jobd_rec_from_job(&rec, job);
	memset(&res, 0, sizeof(res));
	rc = call(j, JOB_CREATE, NSR_XDR(xdr_job_rec), &rec,
		  NSR_XDR(xdr_job_create_res), &res, &res.st, err);
	if (!rc)
		*id = res.id;
	xdr_free(NSR_XDR(xdr_job_create_res), (char *)&res);
	return rc;
}

/* nsr_jobd_create_log - JOB_CREATE_LOG; JOB_CREATE without lines. */
int nsr_jobd_create_log(struct nsr_jobd *j, const struct nsr_jobdb_job *job,
			const char *const *lines, size_t nlines, int64_t *id,
			struct nsr_buf *err)
{
	job_create_log_args a;
	job_create_res res;
	char *cut[JOB_CREATE_LINES_MAX] = {NULL};
	job_line text[JOB_CREATE_LINES_MAX];
	int rc = NSR_OK;

	*id = 0;
	if (nlines == 0)
		return nsr_jobd_create(j, job, id, err);
	if (nlines > JOB_CREATE_LINES_MAX)
		return set_err(err, NSR_ERR_INVAL, "%zu log lines for a new "
			       "job: at most %d go with it, log the others "
			       "after", nlines, JOB_CREATE_LINES_MAX);
	memset(&a, 0, sizeof(a));
	nsr_jobd_rec_from_job(&a.job, job);
	for (size_t i = 0; !rc && i < nlines; i++) {
		text[i] = cut_line(lines[i], &cut[i]);
		if (!text[i])
			rc = set_err(err, NSR_ERR_NOMEM, "out of memory");
	}
	a.lines.lines_val = text;
	a.lines.lines_len = (u_int)nlines;
	memset(&res, 0, sizeof(res));
	if (!rc)
		rc = call(j, JOB_CREATE_LOG, NSR_XDR(xdr_job_create_log_args),
			  &a, NSR_XDR(xdr_job_create_res), &res, &res.st, err);
	if (!rc)
		*id = res.id;
	xdr_free(NSR_XDR(xdr_job_create_res), (char *)&res);
	for (size_t i = 0; i < nlines; i++)
		free(cut[i]);
	return rc;
}

/* nsr_jobd_create_many - JOB_CREATE_MANY (see jobd_clnt.h). */
int nsr_jobd_create_many(struct nsr_jobd *j, const struct nsr_jobdb_new *v,
			 size_t n, int64_t *ids, int *answered,
			 struct nsr_buf *err)
{
	job_create_many_args a;
	job_create_many_res res;
	job_create_log_args *x = NULL;
	job_line *text = NULL;
	char **cut = NULL;
	size_t nl = 0;
	int rc = NSR_OK;

	if (answered)
		*answered = 0;
	for (size_t i = 0; i < n; i++)
		ids[i] = 0;
	if (n > JOB_CREATE_MANY_MAX)
		return set_err(err, NSR_ERR_INVAL, "%zu jobs in one call: at "
			       "most %d", n, JOB_CREATE_MANY_MAX);
	for (size_t i = 0; i < n; i++) {
		if (v[i].nlines > JOB_CREATE_LINES_MAX)
			return set_err(err, NSR_ERR_INVAL, "%zu log lines for "
				       "a new job: at most %d go with it",
				       v[i].nlines, JOB_CREATE_LINES_MAX);
		nl += v[i].nlines;
	}
	if (n == 0)
		return NSR_OK;
	x = calloc(n, sizeof(*x));
	text = calloc(nl ? nl : 1, sizeof(*text));
	cut = calloc(nl ? nl : 1, sizeof(*cut));
	if (!x || !text || !cut)
		rc = set_err(err, NSR_ERR_NOMEM, "out of memory");
	for (size_t i = 0, k = 0; !rc && i < n; i++) {
		nsr_jobd_rec_from_job(&x[i].job, v[i].job);
		x[i].lines.lines_val = text + k;
		x[i].lines.lines_len = (u_int)v[i].nlines;
		for (size_t l = 0; !rc && l < v[i].nlines; l++, k++) {
			text[k] = cut_line(v[i].lines[l], &cut[k]);
			if (!text[k])
				rc = set_err(err, NSR_ERR_NOMEM,
					     "out of memory");
		}
	}
	memset(&res, 0, sizeof(res));
	if (!rc) {
		a.jobs.jobs_val = x;
		a.jobs.jobs_len = (u_int)n;
		rc = nsr_peer_call(j->peer, JOB_CREATE_MANY,
				   NSR_XDR(xdr_job_create_many_args), &a,
				   NSR_XDR(xdr_job_create_many_res), &res, 0);
		if (rc)
			rc = set_err(err, rc, "%s", nsr_peer_errmsg(j->peer));
		else if (answered)
			*answered = 1;
		if (!rc && res.st.code)
			rc = set_err(err, res.st.code < 0 ? res.st.code
							  : NSR_ERR_PROTO,
				     "%s", res.st.msg ? res.st.msg
						      : "nsrjobd failed");
		if (!rc && res.ids.ids_len != n) {
			/* made, but which ids are whose is not known */
			if (answered)
				*answered = 0;
			rc = set_err(err, NSR_ERR_PROTO, "nsrjobd answered "
				     "%u job ids for %zu jobs",
				     res.ids.ids_len, n);
		}
		for (size_t i = 0; !rc && i < n; i++)
			ids[i] = res.ids.ids_val[i];
	}
	xdr_free(NSR_XDR(xdr_job_create_many_res), (char *)&res);
	for (size_t k = 0; cut && k < nl; k++)
		free(cut[k]);
	free(cut);
	free(text);
	free(x);
	return rc;
}

/* nsr_jobd_update - JOB_UPDATE. */
int nsr_jobd_update(struct nsr_jobd *j, int64_t id, unsigned fields,
		    const struct nsr_jobdb_job *v, struct nsr_buf *err)
{
	job_update_args a;
	nsr_void_res res;
	int rc;

	memset(&a, 0, sizeof(a));
	a.id = id;
	a.fields = fields;
	nsr_jobd_rec_from_job(&a.job, v);
	memset(&res, 0, sizeof(res));
	rc = call(j, JOB_UPDATE, NSR_XDR(xdr_job_update_args), &a,
		  NSR_XDR(xdr_nsr_void_res), &res, &res.st, err);
	xdr_free(NSR_XDR(xdr_nsr_void_res), (char *)&res);
	return rc;
}

/* nsr_jobd_set_state - JOB_UPDATE of state (and status). */
int nsr_jobd_set_state(struct nsr_jobd *j, int64_t id,
		       enum nsr_jobdb_state state, const char *status,
		       struct nsr_buf *err)
{
	struct nsr_jobdb_job v;
	unsigned fields = NSR_JOBDB_F_STATE;

	memset(&v, 0, sizeof(v));
	v.state = state;
	if (status) {
		v.status = status;
		fields |= NSR_JOBDB_F_STATUS;
	}
	return nsr_jobd_update(j, id, fields, &v, err);
}

/* nsr_jobd_log - JOB_LOG (time 0: the server stamps it). */
int nsr_jobd_log(struct nsr_jobd *j, int64_t id, const char *line,
		 struct nsr_buf *err)
{
	job_log_args a;
	nsr_void_res res;
	char *cut = NULL;
	int rc;

	memset(&a, 0, sizeof(a));
	a.id = id;
	a.text = cut_line(line, &cut);
	if (!a.text)
		return set_err(err, NSR_ERR_NOMEM, "out of memory");
	memset(&res, 0, sizeof(res));
	rc = call(j, JOB_LOG, NSR_XDR(xdr_job_log_args), &a,
		  NSR_XDR(xdr_nsr_void_res), &res, &res.st, err);
	xdr_free(NSR_XDR(xdr_nsr_void_res), (char *)&res);
	free(cut);
	return rc;
}

/* nsr_jobd_logf - formatted JOB_LOG. */
int nsr_jobd_logf(struct nsr_jobd *j, int64_t id, struct nsr_buf *err,
		  const char *fmt, ...)
{
	struct nsr_buf line;
	va_list ap;
	int rc;

	nsr_buf_init(&line, 0);
	va_start(ap, fmt);
	rc = nsr_buf_vaddf(&line, fmt, ap);
	va_end(ap);
	if (rc)
		rc = set_err(err, rc, "out of memory");
	else
		rc = nsr_jobd_log(j, id, line.data, err);
	nsr_buf_release(&line);
	return rc;
}

/* nsr_jobd_query_open_text - JOB_QUERY_OPEN with raw text. */
int nsr_jobd_query_open_text(struct nsr_jobd *j, const char *text,
			     int with_log, struct nsr_buf *err)
{
	job_query_args a;
	nsr_void_res res;
	int rc;

	drop_batch(j);
	j->open = 0;
	j->done = 0;
	j->with_log = with_log;
	nsr_jobdb_query_free(j->q);
	j->q = NULL;
	if (strlen(text) > JOB_QUERY_MAX)
		return set_err(err, NSR_ERR_TOOBIG,
			       "query longer than %d bytes", JOB_QUERY_MAX);
	a.query = (char *)text;
	memset(&res, 0, sizeof(res));
	rc = call(j, JOB_QUERY_OPEN, NSR_XDR(xdr_job_query_args), &a,
		  NSR_XDR(xdr_nsr_void_res), &res, &res.st, err);
	xdr_free(NSR_XDR(xdr_nsr_void_res), (char *)&res);
	if (!rc)
		j->open = 1;
	return rc;
}

/* copy_query - j's own copy of the query whose canonical text is text, for
 * printing (the caller may change or free its query). */
static int copy_query(struct nsr_jobd *j, const char *text)
{
	struct nsr_jobdb_query *q = NULL;
	enum nsr_jobdb_cmd cmd;
	int rc = nsr_jobdb_query_new(&q);

	while (!rc && *text) {
		size_t len = strcspn(text, "\n");

		rc = nsr_jobdb_query_parse(q, text, len, &cmd, NULL);
		text += len + (text[len] == '\n');
	}
	if (rc) {
		nsr_jobdb_query_free(q);
		return rc;
	}
	j->q = q;
	return NSR_OK;
}

/* nsr_jobd_query_open - JOB_QUERY_OPEN with q's canonical text. */
int nsr_jobd_query_open(struct nsr_jobd *j, const struct nsr_jobdb_query *q,
			struct nsr_buf *err)
{
	struct nsr_buf text;
	int rc;

	nsr_buf_init(&text, 0);
	rc = nsr_jobdb_query_describe(q, &text);
	if (rc) {
		rc = set_err(err, rc, "cannot describe the query: %s",
			     nsr_strerror(rc));
		goto out;
	}
	rc = nsr_jobd_query_open_text(j, text.data,
				      nsr_jobdb_query_shows_log(q), err);
	if (rc)
		goto out;
	rc = copy_query(j, text.data);
	if (rc)
		rc = set_err(err, rc, "cannot keep a copy of the query");
out:
	nsr_buf_release(&text);
	return rc;
}

/* text_out - a wire string as a job member (NULL for ""). */
static const char *text_out(const char *s)
{
	return s && *s ? s : NULL;
}

/* nsr_jobd_job_from_rec - point job's members at r's. */
void nsr_jobd_job_from_rec(struct nsr_jobdb_job *job, const job_rec *r)
{
	memset(job, 0, sizeof(*job));
	job->id = r->id;
	job->parent_id = r->parent_id;
	job->type = (enum nsr_jobdb_type)r->type;
	job->client = text_out(r->client);
	job->name = text_out(r->name);
	job->level = text_out(r->level);
	job->group = text_out(r->group);
	job->action = text_out(r->action);
	job->host = text_out(r->host);
	job->pid = r->pid;
	job->state = (enum nsr_jobdb_state)r->state;
	job->status = text_out(r->status);
	job->start_time = r->start_time;
	job->end_time = r->end_time;
	job->bytes = r->bytes;
	job->files = r->files;
	job->ssids = text_out(r->ssids);
	job->command = text_out(r->command);
}

/* fetch - the next batch from the server. */
static int fetch(struct nsr_jobd *j, struct nsr_buf *err)
{
	job_next_args a;
	int rc;

	drop_batch(j);
	a.max = NSR_JOBD_BATCH;
	a.with_log = j->with_log ? TRUE : FALSE;
	rc = call(j, JOB_QUERY_NEXT, NSR_XDR(xdr_job_next_args), &a,
		  NSR_XDR(xdr_job_next_res), &j->batch, &j->batch.st, err);
	j->have_batch = 1;
	if (rc)
		return rc;
	if (j->batch.done)
		j->done = 1;
	return NSR_OK;
}

/* nsr_jobd_query_next - the next job of the open query. */
int nsr_jobd_query_next(struct nsr_jobd *j, const struct nsr_jobdb_job **job,
			struct nsr_buf *err)
{
	int rc;

	*job = NULL;
	j->row = NULL;
	if (!j->open)
		return set_err(err, NSR_ERR_STATE, "no query is open");
	while (!j->have_batch || j->pos >= j->batch.rows.rows_len) {
		if (j->done && j->have_batch) {
			j->open = 0;
			return NSR_ERR_EOF;
		}
		rc = fetch(j, err);
		if (rc) {
			j->open = 0;
			return rc;
		}
	}
	j->row = &j->batch.rows.rows_val[j->pos++];
	nsr_jobd_job_from_rec(&j->job, &j->row->job);
	*job = &j->job;
	return NSR_OK;
}

/* nsr_jobd_log_read - the current job's log lines. */
int nsr_jobd_log_read(struct nsr_jobd *j, nsr_jobdb_log_fn fn, void *arg)
{
	if (!j->row)
		return NSR_ERR_STATE;
	return nsr_jobd_log_decode(j->row->log, fn, arg);
}

/* log_source - nsr_jobdb_print's log source: the lines nsrjobd sent. */
static int log_source(void *src, nsr_jobdb_log_fn fn, void *arg)
{
	return nsr_jobd_log_read(src, fn, arg);
}

/* nsr_jobd_print - append the current job as the jobs library prints it
 * (the very same printer, so output over RPC equals local output). */
int nsr_jobd_print(struct nsr_jobd *j, enum nsr_jobdb_format fmt,
		   struct nsr_buf *out)
{
	if (!j->row || !j->q)
		return NSR_ERR_STATE;
	return nsr_jobdb_print(j->q, &j->job, log_source, j, fmt, out);
}

/* nsr_jobd_purge - JOB_PURGE. */
int nsr_jobd_purge(struct nsr_jobd *j, unsigned retention_hours,
		   struct nsr_jobdb_purge_stats *st, struct nsr_buf *err)
{
	job_purge_args a;
	job_purge_res res;
	int rc;

	if (st)
		memset(st, 0, sizeof(*st));
	a.retention_hours = retention_hours;
	memset(&res, 0, sizeof(res));
	rc = call(j, JOB_PURGE, NSR_XDR(xdr_job_purge_args), &a,
		  NSR_XDR(xdr_job_purge_res), &res, &res.st, err);
	if (!rc && st) {
		st->jobs = res.jobs;
		st->logs = res.logs;
		st->batches = res.batches;
	}
	xdr_free(NSR_XDR(xdr_job_purge_res), (char *)&res);
	return rc;
}

/* nsr_jobd_backup - JOB_BACKUP. */
int nsr_jobd_backup(struct nsr_jobd *j, uint64_t *bytes,
		    struct nsr_buf *err)
{
	job_backup_res res;
	int rc;

	memset(&res, 0, sizeof(res));
	rc = call(j, JOB_BACKUP, NSR_XDR(xdr_void), NULL,
		  NSR_XDR(xdr_job_backup_res), &res, &res.st, err);
	if (!rc && bytes)
		*bytes = res.bytes;
	xdr_free(NSR_XDR(xdr_job_backup_res), (char *)&res);
	return rc;
}

/* nsr_jobd_log_encode - "<seq> <time> <escaped text>\n". */
int nsr_jobd_log_encode(struct nsr_buf *out, int64_t seq, int64_t time,
			const char *line)
{
	int rc = nsr_buf_addf(out, "%" PRId64 " %" PRId64 " ", seq, time);

	for (const char *s = line ? line : ""; !rc && *s; s++) {
		if (*s == '\\')
			rc = nsr_buf_addstr(out, "\\\\");
		else if (*s == '\n')
			rc = nsr_buf_addstr(out, "\\n");
		else
			rc = nsr_buf_addch(out, *s);
	}
	if (!rc)
		rc = nsr_buf_addch(out, '\n');
	return rc;
}

/* parse_i64 - a decimal number ending at a blank; advances *p. */
static int parse_i64(const char **p, int64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoll(*p, &end, 10);
	if (end == *p || *end != ' ' || errno)
		return NSR_ERR_CORRUPT;
	*p = end + 1;
	return NSR_OK;
}

/* decode_line - unescape one line [s, nl) into text. */
static int decode_line(const char *s, const char *nl, struct nsr_buf *text)
{
	int rc = NSR_OK;

	nsr_buf_reset(text);
	for (; !rc && s < nl; s++) {
		if (*s != '\\') {
			rc = nsr_buf_addch(text, *s);
			continue;
		}
		if (s + 1 >= nl)
			return NSR_ERR_CORRUPT;
		s++;
		if (*s == 'n')
			rc = nsr_buf_addch(text, '\n');
		else if (*s == '\\')
			rc = nsr_buf_addch(text, '\\');
		else
			return NSR_ERR_CORRUPT;
	}
	return rc;
}

/* nsr_jobd_log_decode - walk an encoded log. */
int nsr_jobd_log_decode(const char *log, nsr_jobdb_log_fn fn, void *arg)
{
	struct nsr_buf text;
	const char *p = log ? log : "";
	int rc = NSR_OK;

	nsr_buf_init(&text, 0);
	while (!rc && *p) {
		const char *nl = strchr(p, '\n');
		int64_t seq, time;

		if (!nl) {
			rc = NSR_ERR_CORRUPT;
			break;
		}
		rc = parse_i64(&p, &seq);
		if (!rc)
			rc = parse_i64(&p, &time);
		if (!rc && p > nl)
			rc = NSR_ERR_CORRUPT;
		if (!rc)
			rc = decode_line(p, nl, &text);
		if (!rc)
			rc = fn(arg, seq, time, text.data);
		p = nl + 1;
	}
	nsr_buf_release(&text);
	return rc;
}
