/*
 * jobd_print.c - printing jobs received from nsrjobd, in the two formats
 * of nsr_jobdb_cursor_print (nsr_jobsdb(5)): nsradmin-style aligned
 * "attribute: value;" blocks and JSON lines.  The output must stay byte
 * for byte the same as the library's, so that jobquery over RPC prints
 * what the jobs db prints locally; the unit test compares the two.
 */
#include "nsr/compat.h"

#include <strings.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/jobd_clnt.h"

#include "jobd_clnt_int.h"

#define NSRADMIN_NAME_WIDTH 28 /* names right-aligned to this column */

enum jd_kind { JK_INT, JK_TEXT, JK_LOG };

static const struct {
	const char *name;
	enum jd_kind kind;
} attrs[JD_COUNT] = {
	[JD_ID] = {"job id", JK_INT},
	[JD_PARENT] = {"parent job id", JK_INT},
	[JD_TYPE] = {"type", JK_TEXT},
	[JD_NAME] = {"name", JK_TEXT},
	[JD_CLIENT] = {"client", JK_TEXT},
	[JD_LEVEL] = {"level", JK_TEXT},
	[JD_GROUP] = {"group", JK_TEXT},
	[JD_ACTION] = {"action", JK_TEXT},
	[JD_HOST] = {"host", JK_TEXT},
	[JD_PID] = {"pid", JK_INT},
	[JD_STATE] = {"job state", JK_TEXT},
	[JD_STATUS] = {"completion status", JK_TEXT},
	[JD_START] = {"start time", JK_INT},
	[JD_END] = {"end time", JK_INT},
	[JD_BYTES] = {"bytes", JK_INT},
	[JD_FILES] = {"files", JK_INT},
	[JD_SSIDS] = {"ssids", JK_TEXT},
	[JD_COMMAND] = {"command", JK_TEXT},
	[JD_LOG] = {"job log", JK_LOG},
};

/* attr_lookup - attribute id for a name of len bytes, or -1. */
static int attr_lookup(const char *s, size_t len)
{
	for (int i = 0; i < JD_COUNT; i++)
		if (strlen(attrs[i].name) == len &&
		    strncasecmp(attrs[i].name, s, len) == 0)
			return i;
	return -1;
}

/* jobd_show_from_text - parse "show a; b; c" out of canonical text. */
int jobd_show_from_text(struct nsr_jobd *j, const char *text)
{
	const char *p = strstr(text, "\nshow");
	const char *end;

	j->nshow = 0;
	j->with_log = 1;
	if (!p)
		return NSR_ERR_INVAL;
	p += 5;
	end = strchr(p, '\n');
	if (!end)
		end = p + strlen(p);
	while (p < end) {
		const char *semi = memchr(p, ';', (size_t)(end - p));
		const char *stop = semi ? semi : end;
		int a;

		while (p < stop && *p == ' ')
			p++;
		a = attr_lookup(p, (size_t)(stop - p));
		if (a < 0 || j->nshow >= JD_COUNT)
			return NSR_ERR_INVAL;
		j->show[j->nshow++] = (enum jobd_attr)a;
		p = semi ? semi + 1 : end;
	}
	if (j->nshow) {
		j->with_log = 0;
		for (size_t i = 0; i < j->nshow; i++)
			if (j->show[i] == JD_LOG)
				j->with_log = 1;
	}
	return NSR_OK;
}

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

/* utf8_len - length of a valid UTF-8 sequence at s, or 0. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* json_str - a JSON string; invalid UTF-8 becomes U+FFFD. */
static int json_str(struct nsr_buf *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int rc;

	if (!s)
		return nsr_buf_addstr(out, "null");
	rc = nsr_buf_addch(out, '"');
	while (!rc && *p) {
		size_t n = utf8_len(p);

		if (n == 0) {
			rc = nsr_buf_addstr(out, "\\ufffd");
			p++;
		} else if (*p == '"' || *p == '\\') {
			rc = nsr_buf_addf(out, "\\%c", *p);
			p++;
		} else if (*p == '\n') {
			rc = nsr_buf_addstr(out, "\\n");
			p++;
		} else if (*p < 0x20 || *p == 0x7f) {
			rc = nsr_buf_addf(out, "\\u%04x", *p);
			p++;
		} else {
			rc = nsr_buf_add(out, p, n);
			p += n;
		}
	}
	if (!rc)
		rc = nsr_buf_addch(out, '"');
	return rc;
}

/* Context for printing log lines. */
struct log_print {
	struct nsr_buf *out;
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
		rc = json_str(lp->out, line);
	if (!rc)
		rc = nsr_buf_addch(lp->out, '}');
	return rc;
}

/* int_value - the integer member of job for attribute a. */
static int64_t int_value(const struct nsr_jobdb_job *job, enum jobd_attr a)
{
	switch (a) {
	case JD_ID: return job->id;
	case JD_PARENT: return job->parent_id;
	case JD_PID: return job->pid;
	case JD_START: return job->start_time;
	case JD_END: return job->end_time;
	case JD_BYTES: return job->bytes;
	case JD_FILES: return job->files;
	default: return 0;
	}
}

/* text_value - the text member of job for attribute a. */
static const char *text_value(const struct nsr_jobdb_job *job,
			      enum jobd_attr a)
{
	switch (a) {
	case JD_TYPE: return nsr_jobdb_type_name(job->type);
	case JD_STATE: return nsr_jobdb_state_name(job->state);
	case JD_NAME: return job->name;
	case JD_CLIENT: return job->client;
	case JD_LEVEL: return job->level;
	case JD_GROUP: return job->group;
	case JD_ACTION: return job->action;
	case JD_HOST: return job->host;
	case JD_STATUS: return job->status;
	case JD_SSIDS: return job->ssids;
	case JD_COMMAND: return job->command;
	default: return NULL;
	}
}

/* print_attr - one attribute of the current job in format fmt. */
static int print_attr(struct nsr_jobd *j, enum jobd_attr a, int first,
		      enum nsr_jobdb_format fmt, struct nsr_buf *out)
{
	int json = fmt == NSR_JOBDB_FMT_JSON;
	struct log_print lp = {out, 1};
	int rc;

	if (json)
		rc = nsr_buf_addf(out, "%s\"%s\":", first ? "" : ",",
				  attrs[a].name);
	else
		rc = nsr_buf_addf(out, "%*s: ", NSRADMIN_NAME_WIDTH,
				  attrs[a].name);
	if (rc)
		return rc;
	if (attrs[a].kind == JK_INT) {
		rc = nsr_buf_addf(out, "%" PRId64, int_value(&j->job, a));
	} else if (attrs[a].kind == JK_LOG) {
		rc = json ? nsr_buf_addch(out, '[') : NSR_OK;
		if (!rc)
			rc = nsr_jobd_log_read(j, json ? log_json
						       : log_nsradmin, &lp);
		if (!rc && json)
			rc = nsr_buf_addch(out, ']');
	} else if (json) {
		rc = json_str(out, text_value(&j->job, a));
	} else {
		rc = add_text(out, text_value(&j->job, a));
	}
	if (!rc && !json)
		rc = nsr_buf_addstr(out, ";\n");
	return rc;
}

/* nsr_jobd_print - append the current job in format fmt. */
int nsr_jobd_print(struct nsr_jobd *j, enum nsr_jobdb_format fmt,
		   struct nsr_buf *out)
{
	size_t n = j->nshow ? j->nshow : JD_COUNT;
	int json = fmt == NSR_JOBDB_FMT_JSON;
	int rc;

	if (!j->row)
		return NSR_ERR_STATE;
	if (fmt != NSR_JOBDB_FMT_NSRADMIN && !json)
		return NSR_ERR_INVAL;
	rc = json ? nsr_buf_addch(out, '{') : NSR_OK;
	for (size_t i = 0; !rc && i < n; i++) {
		enum jobd_attr a = j->nshow ? j->show[i] : (enum jobd_attr)i;

		rc = print_attr(j, a, i == 0, fmt, out);
	}
	if (!rc)
		rc = nsr_buf_addstr(out, json ? "}\n" : "\n");
	return rc;
}
