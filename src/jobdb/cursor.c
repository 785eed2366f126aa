/*
 * cursor.c - running a parsed query: the filter becomes one parameterised
 * SELECT (column names and operators come from fixed tables, every value is
 * a bound parameter), rows are handed out one at a time straight from
 * SQLite's row buffer, so memory does not grow with the result.  Also the
 * two output formats: nsradmin-style "attribute: value;" blocks and JSON
 * lines (one object per job).
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/jobdb.h"

#include "jobdb_int.h"

#define NSRADMIN_NAME_WIDTH 28 /* names right-aligned to this column */

struct nsr_jobdb_cursor {
	struct nsr_jobdb *db;
	const struct nsr_jobdb_query *q;
	sqlite3_stmt *st;
	struct nsr_jobdb_job job; /* current row (strings in st's row) */
	int have_row;
};

/* sql_value - the SQL condition for one value; ?N is parameter n. */
static int sql_value(const char *col, const struct jobq_value *v, int n,
		     struct nsr_buf *sql)
{
	switch (v->op) {
	case JOBQ_EQ: return nsr_buf_addf(sql, "%s = ?%d", col, n);
	case JOBQ_NE: return nsr_buf_addf(sql, "%s IS NOT ?%d", col, n);
	case JOBQ_LT: return nsr_buf_addf(sql, "%s < ?%d", col, n);
	case JOBQ_LE: return nsr_buf_addf(sql, "%s <= ?%d", col, n);
	case JOBQ_GT: return nsr_buf_addf(sql, "%s > ?%d", col, n);
	case JOBQ_GE: return nsr_buf_addf(sql, "%s >= ?%d", col, n);
	case JOBQ_GLOB: return nsr_buf_addf(sql, "%s GLOB ?%d", col, n);
	case JOBQ_NOGLOB:
		return nsr_buf_addf(sql, "(%s IS NULL OR %s NOT GLOB ?%d)", col,
				    col, n);
	case JOBQ_EMPTY:
		return nsr_buf_addf(sql, "(%s IS NULL OR %s = '')", col, col);
	}
	return NSR_ERR_INVAL;
}

/* build_select - SQL text for filter f; parameters numbered in order. */
static int build_select(const struct jobq_filter *f, struct nsr_buf *sql)
{
	int n = 0;
	int rc = nsr_buf_addstr(sql, "SELECT " JOBDB_COLUMNS
				     " FROM jobs WHERE 1");

	for (size_t i = 0; !rc && i < f->nterm; i++) {
		const struct jobq_term *t = f->term[i];
		const char *col = jobq_attrs[t->attr].column;

		rc = nsr_buf_addstr(sql, " AND (");
		for (size_t k = 0; !rc && k < t->nval; k++) {
			if (k)
				rc = nsr_buf_addstr(sql, " OR ");
			if (!rc)
				rc = sql_value(col, &t->val[k], ++n, sql);
		}
		if (!rc)
			rc = nsr_buf_addch(sql, ')');
	}
	if (!rc)
		rc = nsr_buf_addstr(sql, " ORDER BY id");
	return rc;
}

/* bind_filter - bind every value of f in build_select's order. */
static int bind_filter(sqlite3_stmt *st, const struct jobq_filter *f)
{
	int n = 0, src = SQLITE_OK;

	for (size_t i = 0; src == SQLITE_OK && i < f->nterm; i++) {
		const struct jobq_term *t = f->term[i];

		for (size_t k = 0; src == SQLITE_OK && k < t->nval; k++) {
			const struct jobq_value *v = &t->val[k];

			++n;
			if (v->op == JOBQ_EMPTY)
				continue;
			if (jobq_attrs[t->attr].kind == JOBQ_TEXT)
				src = sqlite3_bind_text(st, n, v->text, -1,
							SQLITE_STATIC);
			else
				src = sqlite3_bind_int64(st, n, v->num);
		}
	}
	return jobdb_rc(src);
}

/* nsr_jobdb_cursor_open - prepare the query's statement. */
int nsr_jobdb_cursor_open(struct nsr_jobdb *db,
			  const struct nsr_jobdb_query *q,
			  struct nsr_jobdb_cursor **out)
{
	struct nsr_jobdb_cursor *c = NULL;
	struct nsr_buf sql;
	int rc;

	*out = NULL;
	nsr_buf_init(&sql, 0);
	c = calloc(1, sizeof(*c));
	if (!c) {
		rc = NSR_ERR_NOMEM;
		goto out;
	}
	c->db = db;
	c->q = q;
	rc = build_select(&q->filter, &sql);
	if (!rc)
		rc = jobdb_rc(sqlite3_prepare_v2(db->db, sql.data, -1, &c->st,
						 NULL));
	if (!rc)
		rc = bind_filter(c->st, &q->filter);
out:
	nsr_buf_release(&sql);
	if (rc) {
		nsr_jobdb_cursor_close(c);
		return rc;
	}
	*out = c;
	return NSR_OK;
}

/* nsr_jobdb_cursor_next - step to the next matching job. */
int nsr_jobdb_cursor_next(struct nsr_jobdb_cursor *c,
			  const struct nsr_jobdb_job **job)
{
	int src;

	*job = NULL;
	c->have_row = 0;
	src = sqlite3_step(c->st);
	if (src == SQLITE_DONE)
		return NSR_ERR_EOF;
	if (src != SQLITE_ROW)
		return jobdb_rc(src);
	jobdb_row_to_job(c->st, &c->job);
	c->have_row = 1;
	*job = &c->job;
	return NSR_OK;
}

/* nsr_jobdb_cursor_close - finalize; ends the read snapshot. */
void nsr_jobdb_cursor_close(struct nsr_jobdb_cursor *c)
{
	if (!c)
		return;
	sqlite3_finalize(c->st);
	free(c);
}

/* --- nsradmin format ---------------------------------------------------- */

/* needs_quotes - would the bare text not read back as the same value? */
static int needs_quotes(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || s[0] == ' ' || s[n - 1] == ' ' || strchr("<>=!", s[0]))
		return 1;
	for (; *s; s++)
		if (strchr(";,\"\\*?", *s) || (unsigned char)*s < 0x20)
			return 1;
	return 0;
}

/* add_text - a text value, quoted and escaped when needed. */
static int add_text(struct nsr_buf *out, const char *s)
{
	int rc;

	if (!s)
		return NSR_OK;
	if (!needs_quotes(s))
		return nsr_buf_addstr(out, s);
	rc = nsr_buf_addch(out, '"');
	for (; !rc && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			rc = nsr_buf_addf(out, "\\%c", c);
		else if (c == '\n')
			rc = nsr_buf_addstr(out, "\\n");
		else if (c < 0x20)
			rc = nsr_buf_addf(out, "\\x%02x", c);
		else
			rc = nsr_buf_addch(out, c);
	}
	if (!rc)
		rc = nsr_buf_addch(out, '"');
	return rc;
}

/* Context for printing log lines. */
struct log_print {
	struct nsr_buf *out;
	int json;
	int first;
};

/* log_nsradmin - one log line as a continued nsradmin value. */
static int log_nsradmin(void *arg, int64_t seq, int64_t time,
			const char *line)
{
	struct log_print *lp = arg;
	int rc = NSR_OK;

	NSR_UNUSED(seq);
	NSR_UNUSED(time);
	if (!lp->first)
		rc = nsr_buf_addf(lp->out, ",\n%*s", NSRADMIN_NAME_WIDTH + 2,
				  "");
	lp->first = 0;
	if (!rc)
		rc = add_text(lp->out, line);
	return rc;
}

/* int_value - the integer member of job for attribute a. */
static int64_t int_value(const struct nsr_jobdb_job *job, enum jobq_attr_id a)
{
	switch (a) {
	case JA_ID: return job->id;
	case JA_PARENT: return job->parent_id;
	case JA_TYPE: return job->type;
	case JA_PID: return job->pid;
	case JA_STATE: return job->state;
	case JA_START: return job->start_time;
	case JA_END: return job->end_time;
	case JA_BYTES: return job->bytes;
	case JA_FILES: return job->files;
	default: return 0;
	}
}

/* text_value - the text member of job for attribute a. */
static const char *text_value(const struct nsr_jobdb_job *job,
			      enum jobq_attr_id a)
{
	switch (a) {
	case JA_TYPE: return nsr_jobdb_type_name(job->type);
	case JA_STATE: return nsr_jobdb_state_name(job->state);
	case JA_NAME: return job->name;
	case JA_CLIENT: return job->client;
	case JA_LEVEL: return job->level;
	case JA_GROUP: return job->group;
	case JA_ACTION: return job->action;
	case JA_HOST: return job->host;
	case JA_STATUS: return job->status;
	case JA_SSIDS: return job->ssids;
	case JA_COMMAND: return job->command;
	default: return NULL;
	}
}

/* A job to print and where its log lines come from. */
struct print_job {
	const struct nsr_jobdb_job *job;
	nsr_jobdb_log_src logs; /* NULL: no log lines */
	void *src;
};

/* read_logs - feed fn the job's log lines, if there is a source. */
static int read_logs(const struct print_job *p, nsr_jobdb_log_fn fn,
		     void *arg)
{
	return p->logs ? p->logs(p->src, fn, arg) : NSR_OK;
}

/* print_nsradmin_attr - "        name: value;" for one attribute. */
static int print_nsradmin_attr(const struct print_job *p,
			       enum jobq_attr_id a, struct nsr_buf *out)
{
	const struct jobq_attr *at = &jobq_attrs[a];
	int rc = nsr_buf_addf(out, "%*s: ", NSRADMIN_NAME_WIDTH, at->name);

	if (rc)
		return rc;
	if (at->kind == JOBQ_INT) {
		rc = nsr_buf_addf(out, "%" PRId64, int_value(p->job, a));
	} else if (at->kind == JOBQ_LOG) {
		struct log_print lp = {out, 0, 1};

		rc = read_logs(p, log_nsradmin, &lp);
	} else {
		rc = add_text(out, text_value(p->job, a));
	}
	if (!rc)
		rc = nsr_buf_addstr(out, ";\n");
	return rc;
}

/* --- JSON lines --------------------------------------------------------- */

/* log_json - one log line as a JSON object in an array. */
static int log_json(void *arg, int64_t seq, int64_t time, const char *line)
{
	struct log_print *lp = arg;
	int rc = nsr_buf_addf(lp->out,
			      "%s{\"seq\":%" PRId64 ",\"time\":%" PRId64
			      ",\"line\":",
			      lp->first ? "" : ",", seq, time);

	lp->first = 0;
	if (!rc)
		rc = nsr_buf_add_json_str(lp->out, line);
	if (!rc)
		rc = nsr_buf_addch(lp->out, '}');
	return rc;
}

/* print_json_attr - "name":value for one attribute. */
static int print_json_attr(const struct print_job *p, enum jobq_attr_id a,
			   int first, struct nsr_buf *out)
{
	const struct jobq_attr *at = &jobq_attrs[a];
	int rc = nsr_buf_addf(out, "%s\"%s\":", first ? "" : ",", at->name);

	if (rc)
		return rc;
	if (at->kind == JOBQ_INT)
		return nsr_buf_addf(out, "%" PRId64, int_value(p->job, a));
	if (at->kind == JOBQ_LOG) {
		struct log_print lp = {out, 1, 1};

		rc = nsr_buf_addch(out, '[');
		if (!rc)
			rc = read_logs(p, log_json, &lp);
		if (!rc)
			rc = nsr_buf_addch(out, ']');
		return rc;
	}
	return nsr_buf_add_json_str(out, text_value(p->job, a));
}

/* nsr_jobdb_print - append job in format fmt, limited to q's show list. */
int nsr_jobdb_print(const struct nsr_jobdb_query *q,
		    const struct nsr_jobdb_job *job, nsr_jobdb_log_src logs,
		    void *src, enum nsr_jobdb_format fmt, struct nsr_buf *out)
{
	struct print_job p = {job, logs, src};
	size_t n = q->nshow ? q->nshow : JA_COUNT;
	int rc;

	if (fmt != NSR_JOBDB_FMT_NSRADMIN && fmt != NSR_JOBDB_FMT_JSON)
		return NSR_ERR_INVAL;
	rc = fmt == NSR_JOBDB_FMT_JSON ? nsr_buf_addch(out, '{') : NSR_OK;
	for (size_t i = 0; !rc && i < n; i++) {
		enum jobq_attr_id a = q->nshow ? q->show[i]
					       : (enum jobq_attr_id)i;

		if (fmt == NSR_JOBDB_FMT_JSON)
			rc = print_json_attr(&p, a, i == 0, out);
		else
			rc = print_nsradmin_attr(&p, a, out);
	}
	if (!rc)
		rc = nsr_buf_addstr(out, fmt == NSR_JOBDB_FMT_JSON ? "}\n"
								   : "\n");
	return rc;
}

/* cursor_logs - log source for the cursor's current job. */
static int cursor_logs(void *src, nsr_jobdb_log_fn fn, void *arg)
{
	struct nsr_jobdb_cursor *c = src;

	return nsr_jobdb_log_read(c->db, c->job.id, fn, arg);
}

/* nsr_jobdb_cursor_print - append the current job in format fmt. */
int nsr_jobdb_cursor_print(struct nsr_jobdb_cursor *c,
			   enum nsr_jobdb_format fmt, struct nsr_buf *out)
{
	if (!c->have_row)
		return NSR_ERR_STATE;
	return nsr_jobdb_print(c->q, &c->job, cursor_logs, c, fmt, out);
}
