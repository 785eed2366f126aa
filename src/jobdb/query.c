/*
 * query.c - the jobquery language: one line at a time into a structured
 * filter and show list (struct nsr_jobdb_query, see jobdb_int.h).
 *
 *   line    = ws* ( "" | "#" any* | "." terms | "show" names
 *                 | "print" terms ) ws*
 *   terms   = [ term ( ";" term )* [ ";" ] ]
 *   term    = name ws* ":" values
 *   values  = ws* | value ( "," value )*
 *   value   = ws* [ "=" | "!=" | "<" | "<=" | ">" | ">=" ] ws*
 *             ( quoted | bare ) ws*
 *   names   = [ name ( ";" name )* [ ";" ] ]
 *   name    = letters separated by blanks, case-insensitive ("Job  State")
 *
 * Values of one term are ORed, terms are ANDed.  Bare text values with '*'
 * or '?' are wildcards; quoting ("...", with \" and \\) makes them literal.
 * `start time` and `end time` also take nsr_getdate expressions, resolved
 * to seconds when the line is parsed.
 * The input is hostile (it arrives over RPC): every error returns
 * NSR_ERR_SYNTAX (or NSR_ERR_TOOBIG for the limits) with the 1-based column
 * and what was expected, and leaves the session unchanged.  The parser never
 * builds SQL; cursor.c turns the filter into a parameterised statement.
 */
#include "nsr/compat.h"

#include <ctype.h>
#include <strings.h>
#include <time.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/getdate.h"
#include "nsr/jobdb.h"

#include "jobdb_int.h"

const struct jobq_attr jobq_attrs[JA_COUNT] = {
	[JA_ID] = {"job id", "id", JOBQ_INT},
	[JA_PARENT] = {"parent job id", "parent_id", JOBQ_INT},
	[JA_TYPE] = {"type", "type", JOBQ_TYPE},
	[JA_NAME] = {"name", "name", JOBQ_TEXT},
	[JA_CLIENT] = {"client", "client", JOBQ_TEXT},
	[JA_LEVEL] = {"level", "level", JOBQ_TEXT},
	[JA_GROUP] = {"group", "grp", JOBQ_TEXT},
	[JA_ACTION] = {"action", "action", JOBQ_TEXT},
	[JA_HOST] = {"host", "host", JOBQ_TEXT},
	[JA_PID] = {"pid", "pid", JOBQ_INT},
	[JA_STATE] = {"job state", "state", JOBQ_STATE},
	[JA_STATUS] = {"completion status", "status", JOBQ_TEXT},
	[JA_START] = {"start time", "start_time", JOBQ_INT},
	[JA_END] = {"end time", "end_time", JOBQ_INT},
	[JA_BYTES] = {"bytes", "bytes", JOBQ_INT},
	[JA_FILES] = {"files", "files", JOBQ_INT},
	[JA_SSIDS] = {"ssids", "ssids", JOBQ_TEXT},
	[JA_COMMAND] = {"command", "command", JOBQ_TEXT},
	[JA_LOG] = {"job log", NULL, JOBQ_LOG},
};

static const char *const op_text[] = {
	[JOBQ_EQ] = "", [JOBQ_NE] = "!=", [JOBQ_LT] = "<", [JOBQ_LE] = "<=",
	[JOBQ_GT] = ">", [JOBQ_GE] = ">=", [JOBQ_GLOB] = "=",
	[JOBQ_NOGLOB] = "!=", [JOBQ_EMPTY] = "",
};

/* Parser state over one line. */
struct lexer {
	const char *s;
	size_t len;
	size_t pos;
	struct nsr_jobdb_syntax *err;
};

/* fail - record an error at byte offset at; returns rc. */
static int fail(struct lexer *lx, size_t at, int rc, const char *fmt, ...)
	NSR_PRINTF(4, 5);

static int fail(struct lexer *lx, size_t at, int rc, const char *fmt, ...)
{
	va_list ap;

	if (lx->err) {
		lx->err->column = at + 1;
		va_start(ap, fmt);
		vsnprintf(lx->err->msg, sizeof(lx->err->msg), fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* peek - current byte, or 0 at the end. */
static int peek(const struct lexer *lx)
{
	return lx->pos < lx->len ? (unsigned char)lx->s[lx->pos] : 0;
}

/* at_end - no more input. */
static int at_end(const struct lexer *lx)
{
	return lx->pos >= lx->len;
}

/* skip_ws - step over blanks. */
static void skip_ws(struct lexer *lx)
{
	while (!at_end(lx) && (peek(lx) == ' ' || peek(lx) == '\t'))
		lx->pos++;
}

/* jobq_filter_release - free the terms; the filter is left empty. */
void jobq_filter_release(struct jobq_filter *f)
{
	for (size_t i = 0; i < f->nterm; i++) {
		for (size_t k = 0; k < f->term[i]->nval; k++)
			free(f->term[i]->val[k].text);
		free(f->term[i]);
	}
	f->nterm = 0;
}

/* parse_name - an attribute name; *id gets it. */
static int parse_name(struct lexer *lx, enum jobq_attr_id *id)
{
	char name[40];
	size_t start, n = 0, i;

	skip_ws(lx);
	start = lx->pos;
	while (!at_end(lx) && (isalpha(peek(lx)) || peek(lx) == ' ' ||
			       peek(lx) == '\t')) {
		int c = peek(lx);

		lx->pos++;
		if (c == ' ' || c == '\t') {
			if (n && name[n - 1] != ' ' && n < sizeof(name) - 1)
				name[n++] = ' ';
			continue;
		}
		if (n < sizeof(name) - 1)
			name[n++] = (char)tolower(c);
	}
	while (n && name[n - 1] == ' ')
		n--;
	name[n] = '\0';
	if (n == 0)
		return fail(lx, start, NSR_ERR_SYNTAX,
			    "expected an attribute name");
	for (i = 0; i < JA_COUNT; i++) {
		if (strcmp(name, jobq_attrs[i].name) == 0) {
			*id = (enum jobq_attr_id)i;
			return NSR_OK;
		}
	}
	return fail(lx, start, NSR_ERR_SYNTAX, "unknown attribute '%s'", name);
}

/* parse_op - an optional comparison operator. */
static enum jobq_op parse_op(struct lexer *lx)
{
	int c = peek(lx);
	int next = lx->pos + 1 < lx->len ? (unsigned char)lx->s[lx->pos + 1]
					 : 0;

	if (c == '!' && next == '=') {
		lx->pos += 2;
		return JOBQ_NE;
	}
	if ((c == '<' || c == '>') && next == '=') {
		lx->pos += 2;
		return c == '<' ? JOBQ_LE : JOBQ_GE;
	}
	if (c == '<' || c == '>') {
		lx->pos++;
		return c == '<' ? JOBQ_LT : JOBQ_GT;
	}
	if (c == '=')
		lx->pos++;
	return JOBQ_EQ;
}

/* parse_quoted - a "..." value into out; lx->pos is at the quote. */
static int parse_quoted(struct lexer *lx, struct nsr_buf *out)
{
	size_t start = lx->pos;
	int rc;

	lx->pos++;
	for (;;) {
		int c = peek(lx);

		if (at_end(lx))
			return fail(lx, start, NSR_ERR_SYNTAX,
				    "unterminated quoted value");
		lx->pos++;
		if (c == '"')
			return NSR_OK;
		if (c == '\\') {
			if (at_end(lx))
				return fail(lx, start, NSR_ERR_SYNTAX,
					    "unterminated quoted value");
			c = peek(lx);
			lx->pos++;
		}
		rc = nsr_buf_addch(out, c);
		if (rc == NSR_ERR_TOOBIG)
			return fail(lx, start, rc, "value longer than %d bytes",
				    JOBQ_MAX_VALUE_LEN);
		if (rc)
			return rc;
	}
}

/* parse_bare - an unquoted value: up to ',' or ';', trailing blanks cut. */
static int parse_bare(struct lexer *lx, struct nsr_buf *out)
{
	size_t start = lx->pos;
	int rc;

	while (!at_end(lx) && peek(lx) != ',' && peek(lx) != ';') {
		if (peek(lx) == '"')
			return fail(lx, lx->pos, NSR_ERR_SYNTAX,
				    "unexpected '\"' inside a value (quote "
				    "the whole value)");
		rc = nsr_buf_addch(out, peek(lx));
		if (rc == NSR_ERR_TOOBIG)
			return fail(lx, start, rc, "value longer than %d bytes",
				    JOBQ_MAX_VALUE_LEN);
		if (rc)
			return rc;
		lx->pos++;
	}
	while (out->len && (out->data[out->len - 1] == ' ' ||
			    out->data[out->len - 1] == '\t'))
		nsr_buf_setlen(out, out->len - 1);
	return NSR_OK;
}

/* parse_int - a non-negative decimal integer. */
static int parse_int(const char *s, int64_t *v)
{
	int64_t x = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		if (x > (INT64_MAX - (*s - '0')) / 10)
			return -1;
		x = x * 10 + (*s - '0');
	}
	*v = x;
	return 0;
}

/* glob_escape - text as a GLOB pattern where only * and ? are special. */
static int glob_escape(const char *s, char **out)
{
	struct nsr_buf b;
	int rc = NSR_OK;

	nsr_buf_init(&b, 0);
	for (; !rc && *s; s++)
		rc = *s == '[' ? nsr_buf_addstr(&b, "[[]")
			       : nsr_buf_addch(&b, *s);
	if (rc) {
		nsr_buf_release(&b);
		return rc;
	}
	*out = nsr_buf_detach(&b, NULL);
	return NSR_OK;
}

/* type_value - a job type name, with or without the trailing " job". */
static enum nsr_jobdb_type type_value(const char *s)
{
	char longer[64];
	enum nsr_jobdb_type t = nsr_jobdb_type_parse(s);

	if (t || strlen(s) > 40)
		return t;
	snprintf(longer, sizeof(longer), "%s job", s);
	return nsr_jobdb_type_parse(longer);
}

/* parse_time - a time value that is not a plain number: an nsr_getdate
 * expression ("yesterday", "3 days ago", "2024-02-24 10:00"), resolved
 * now, so the canonical form holds the seconds. */
static int parse_time(struct lexer *lx, size_t at, enum jobq_attr_id a,
		      const char *text, struct jobq_value *v)
{
	struct nsr_getdate_error gerr;
	time_t t = 0;
	int rc = nsr_getdate_err(text, time(NULL), &t, &gerr);

	if (rc == NSR_OK && t >= 0) {
		v->num = (int64_t)t;
		return NSR_OK;
	}
	if (rc == NSR_OK)
		gerr.msg[0] = '\0';
	return fail(lx, at, NSR_ERR_SYNTAX,
		    "expected seconds or a date for '%s'%s%s",
		    jobq_attrs[a].name, gerr.msg[0] ? ": " : "", gerr.msg);
}

/* convert - give value text its meaning for attribute a. */
static int convert(struct lexer *lx, size_t at, enum jobq_attr_id a,
		   int quoted, const char *text, struct jobq_value *v)
{
	enum jobq_kind kind = jobq_attrs[a].kind;

	if (kind != JOBQ_INT && v->op != JOBQ_EQ && v->op != JOBQ_NE)
		return fail(lx, at, NSR_ERR_SYNTAX,
			    "operator '%s' needs a numeric attribute",
			    op_text[v->op]);
	switch (kind) {
	case JOBQ_INT:
		if (parse_int(text, &v->num) == 0)
			return NSR_OK;
		if (a == JA_START || a == JA_END)
			return parse_time(lx, at, a, text, v);
		return fail(lx, at, NSR_ERR_SYNTAX,
			    "expected a number for '%s'", jobq_attrs[a].name);
	case JOBQ_TYPE:
		v->num = type_value(text);
		if (!v->num)
			return fail(lx, at, NSR_ERR_SYNTAX,
				    "unknown job type; expected e.g. "
				    "'save job' or 'recover job'");
		return NSR_OK;
	case JOBQ_STATE:
		v->num = nsr_jobdb_state_parse(text);
		if (!v->num)
			return fail(lx, at, NSR_ERR_SYNTAX,
				    "unknown job state; expected QUEUED, "
				    "ACTIVE, COMPLETED, FAILED or ABORTED");
		return NSR_OK;
	default:
		break;
	}
	if (!quoted && strpbrk(text, "*?")) {
		v->op = v->op == JOBQ_NE ? JOBQ_NOGLOB : JOBQ_GLOB;
		return glob_escape(text, &v->text);
	}
	v->text = strdup(text);
	return v->text ? NSR_OK : NSR_ERR_NOMEM;
}

/* parse_value - one value of a term (may be the empty value). */
static int parse_value(struct lexer *lx, struct jobq_term *t, int first)
{
	struct jobq_value *v = &t->val[t->nval];
	struct nsr_buf text;
	size_t at;
	int quoted = 0, rc;

	nsr_buf_init(&text, JOBQ_MAX_VALUE_LEN);
	memset(v, 0, sizeof(*v));
	skip_ws(lx);
	at = lx->pos;
	if (first && (at_end(lx) || peek(lx) == ';')) {
		if (jobq_attrs[t->attr].kind != JOBQ_TEXT)
			return fail(lx, at, NSR_ERR_SYNTAX,
				    "expected a value for '%s'",
				    jobq_attrs[t->attr].name);
		v->op = JOBQ_EMPTY;
		t->nval++;
		return NSR_OK;
	}
	v->op = parse_op(lx);
	skip_ws(lx);
	if (peek(lx) == '"') {
		quoted = 1;
		rc = parse_quoted(lx, &text);
	} else {
		rc = parse_bare(lx, &text);
	}
	if (rc)
		goto out;
	if (!quoted && text.len == 0) {
		rc = fail(lx, at, NSR_ERR_SYNTAX, "expected a value");
		goto out;
	}
	rc = convert(lx, at, t->attr, quoted, text.data, v);
	if (!rc)
		t->nval++;
out:
	nsr_buf_release(&text);
	return rc;
}

/* parse_term - "name: v1, v2" into a new term of f. */
static int parse_term(struct lexer *lx, struct jobq_filter *f)
{
	struct jobq_term *t;
	enum jobq_attr_id a = JA_ID;
	size_t start;
	int rc;

	skip_ws(lx);
	start = lx->pos;
	rc = parse_name(lx, &a);
	if (rc)
		return rc;
	skip_ws(lx);
	if (peek(lx) != ':')
		return fail(lx, lx->pos, NSR_ERR_SYNTAX,
			    "expected ':' after attribute name");
	lx->pos++;
	if (jobq_attrs[a].kind == JOBQ_LOG)
		return fail(lx, start, NSR_ERR_SYNTAX,
			    "'job log' cannot be used in a query");
	for (size_t i = 0; i < f->nterm; i++)
		if (f->term[i]->attr == a)
			return fail(lx, start, NSR_ERR_SYNTAX,
				    "attribute '%s' given twice",
				    jobq_attrs[a].name);
	if (f->nterm == JOBQ_MAX_TERMS)
		return fail(lx, start, NSR_ERR_TOOBIG,
			    "more than %d attributes", JOBQ_MAX_TERMS);
	t = calloc(1, sizeof(*t));
	if (!t)
		return NSR_ERR_NOMEM;
	t->attr = a;
	f->term[f->nterm++] = t;
	for (;;) {
		if (t->nval == JOBQ_MAX_VALUES)
			return fail(lx, lx->pos, NSR_ERR_TOOBIG,
				    "more than %d values", JOBQ_MAX_VALUES);
		rc = parse_value(lx, t, t->nval == 0);
		if (rc)
			return rc;
		skip_ws(lx);
		if (at_end(lx) || peek(lx) == ';')
			return NSR_OK;
		if (peek(lx) != ',')
			return fail(lx, lx->pos, NSR_ERR_SYNTAX,
				    "expected ',' or ';' after a value");
		lx->pos++;
	}
}

/* parse_terms - "t1; t2; ..." to the end of the line. */
static int parse_terms(struct lexer *lx, struct jobq_filter *f)
{
	int rc;

	skip_ws(lx);
	while (!at_end(lx)) {
		rc = parse_term(lx, f);
		if (rc)
			return rc;
		/* parse_term stops at ';' or the end. */
		if (!at_end(lx))
			lx->pos++;
		skip_ws(lx);
	}
	return NSR_OK;
}

/* parse_names - "show" arguments: "a; b; c". */
static int parse_names(struct lexer *lx, struct nsr_jobdb_query *q)
{
	skip_ws(lx);
	while (!at_end(lx)) {
		enum jobq_attr_id a = JA_ID;
		size_t i;
		int rc = parse_name(lx, &a);

		if (rc)
			return rc;
		for (i = 0; i < q->nshow && q->show[i] != a; i++)
			;
		if (i == q->nshow)
			q->show[q->nshow++] = a;
		skip_ws(lx);
		if (!at_end(lx) && peek(lx) != ';')
			return fail(lx, lx->pos, NSR_ERR_SYNTAX,
				    "expected ';' between attribute names");
		if (!at_end(lx))
			lx->pos++;
		skip_ws(lx);
	}
	return NSR_OK;
}

/* check_bytes - refuse control characters (and NUL) anywhere. */
static int check_bytes(struct lexer *lx)
{
	for (size_t i = 0; i < lx->len; i++) {
		unsigned char c = (unsigned char)lx->s[i];

		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return fail(lx, i, NSR_ERR_SYNTAX,
				    "control character 0x%02x", c);
	}
	return NSR_OK;
}

/* parse_command - the command word; *cmd gets it. */
static int parse_command(struct lexer *lx, enum nsr_jobdb_cmd *cmd)
{
	size_t start = lx->pos, n;

	if (peek(lx) == '.') {
		lx->pos++;
		*cmd = NSR_JOBDB_CMD_QUERY;
		return NSR_OK;
	}
	while (!at_end(lx) && isalpha(peek(lx)))
		lx->pos++;
	n = lx->pos - start;
	if (n == 4 && strncasecmp(lx->s + start, "show", 4) == 0)
		*cmd = NSR_JOBDB_CMD_SHOW;
	else if (n == 5 && strncasecmp(lx->s + start, "print", 5) == 0)
		*cmd = NSR_JOBDB_CMD_PRINT;
	else
		return fail(lx, start, NSR_ERR_SYNTAX,
			    "unknown command; expected '.', 'show' or 'print'");
	if (!at_end(lx) && peek(lx) != ' ' && peek(lx) != '\t')
		return fail(lx, lx->pos, NSR_ERR_SYNTAX,
			    "expected a blank after the command");
	return NSR_OK;
}

/* nsr_jobdb_query_parse - parse one line and apply it to q. */
int nsr_jobdb_query_parse(struct nsr_jobdb_query *q, const char *line,
			  size_t len, enum nsr_jobdb_cmd *cmd,
			  struct nsr_jobdb_syntax *err)
{
	struct lexer lx = {line, len, 0, err};
	struct jobq_filter f = {0};
	struct nsr_jobdb_query shown = {0};
	int rc;

	*cmd = NSR_JOBDB_CMD_NONE;
	if (err) {
		err->column = 0;
		err->msg[0] = '\0';
	}
	if (len > JOBQ_MAX_LINE)
		return fail(&lx, JOBQ_MAX_LINE, NSR_ERR_TOOBIG,
			    "line longer than %d bytes", JOBQ_MAX_LINE);
	/* A trailing newline is not part of the line. */
	while (lx.len && (line[lx.len - 1] == '\n' || line[lx.len - 1] == '\r'))
		lx.len--;
	rc = check_bytes(&lx);
	if (rc)
		return rc;
	skip_ws(&lx);
	if (at_end(&lx) || peek(&lx) == '#')
		return NSR_OK;
	rc = parse_command(&lx, cmd);
	if (rc)
		goto out;
	if (*cmd == NSR_JOBDB_CMD_SHOW) {
		rc = parse_names(&lx, &shown);
		if (rc)
			goto out;
		q->nshow = shown.nshow;
		memcpy(q->show, shown.show, sizeof(q->show));
		return NSR_OK;
	}
	rc = parse_terms(&lx, &f);
	if (rc)
		goto out;
	/* "print" alone keeps the current query; "." alone clears it. */
	if (*cmd == NSR_JOBDB_CMD_PRINT && f.nterm == 0)
		return NSR_OK;
	jobq_filter_release(&q->filter);
	q->filter = f;
	return NSR_OK;
out:
	jobq_filter_release(&f);
	*cmd = NSR_JOBDB_CMD_NONE;
	return rc;
}

/* nsr_jobdb_query_new - an empty session. */
int nsr_jobdb_query_new(struct nsr_jobdb_query **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? NSR_OK : NSR_ERR_NOMEM;
}

/* nsr_jobdb_query_free - free a session. */
void nsr_jobdb_query_free(struct nsr_jobdb_query *q)
{
	if (!q)
		return;
	jobq_filter_release(&q->filter);
	free(q);
}

/* nsr_jobdb_query_shows_log - is `job log` among the shown attributes? */
int nsr_jobdb_query_shows_log(const struct nsr_jobdb_query *q)
{
	if (q->nshow == 0)
		return 1;
	for (size_t i = 0; i < q->nshow; i++)
		if (q->show[i] == JA_LOG)
			return 1;
	return 0;
}

/* describe_text - a text value as the parser reads it back. */
static int describe_text(const struct jobq_value *v, struct nsr_buf *out)
{
	int rc = NSR_OK;

	if (v->op == JOBQ_GLOB || v->op == JOBQ_NOGLOB) {
		/* Bare wildcard: undo the '[' escaping. */
		for (const char *s = v->text; !rc && *s; s++) {
			rc = nsr_buf_addch(out, *s);
			if (*s == '[' && strncmp(s, "[[]", 3) == 0)
				s += 2;
		}
		return rc;
	}
	return nsr_jobdb_query_quote(v->text, out);
}

/* nsr_jobdb_query_quote - text as a "..." value (parse_quoted's
 * inverse). */
int nsr_jobdb_query_quote(const char *text, struct nsr_buf *out)
{
	int rc = nsr_buf_addch(out, '"');

	for (const char *s = text; !rc && *s; s++) {
		if (*s == '"' || *s == '\\')
			rc = nsr_buf_addch(out, '\\');
		if (!rc)
			rc = nsr_buf_addch(out, *s);
	}
	if (!rc)
		rc = nsr_buf_addch(out, '"');
	return rc;
}

/* describe_value - one value in canonical form. */
static int describe_value(const struct jobq_term *t,
			  const struct jobq_value *v, struct nsr_buf *out)
{
	int rc;

	if (v->op == JOBQ_EMPTY)
		return NSR_OK;
	rc = nsr_buf_addstr(out, op_text[v->op]);
	if (rc)
		return rc;
	switch (jobq_attrs[t->attr].kind) {
	case JOBQ_INT:
		return nsr_buf_addf(out, "%" PRId64, v->num);
	case JOBQ_TYPE:
		return nsr_buf_addstr(
			out, nsr_jobdb_type_name((enum nsr_jobdb_type)v->num));
	case JOBQ_STATE:
		return nsr_buf_addstr(
			out,
			nsr_jobdb_state_name((enum nsr_jobdb_state)v->num));
	default:
		return describe_text(v, out);
	}
}

/* nsr_jobdb_query_describe - canonical text of q. */
int nsr_jobdb_query_describe(const struct nsr_jobdb_query *q,
			     struct nsr_buf *out)
{
	int rc = nsr_buf_addstr(out, ".");

	for (size_t i = 0; !rc && i < q->filter.nterm; i++) {
		const struct jobq_term *t = q->filter.term[i];

		rc = nsr_buf_addf(out, "%s %s:", i ? ";" : "",
				  jobq_attrs[t->attr].name);
		for (size_t k = 0; !rc && k < t->nval; k++) {
			rc = nsr_buf_addstr(out, k ? ", " : " ");
			if (!rc)
				rc = describe_value(t, &t->val[k], out);
		}
	}
	if (!rc)
		rc = nsr_buf_addstr(out, "\nshow");
	for (size_t i = 0; !rc && i < q->nshow; i++)
		rc = nsr_buf_addf(out, "%s %s", i ? ";" : "",
				  jobq_attrs[q->show[i]].name);
	if (!rc)
		rc = nsr_buf_addch(out, '\n');
	return rc;
}
