/*
 * res_parse.c - the parser for nsradmin's resource text format.
 *
 * Owns turning hostile text into resources (res.h has the grammar).  The
 * parser walks bytes once, tracking line and column, and stops at the
 * first problem with a message saying what it expected there.  It never
 * reads past len and enforces the NSR_RES_MAX_* bounds.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/res.h"

#include "res_int.h"

struct rp {
	const char *s;
	size_t len, pos;
	unsigned line, col;
	int one;		/* one attribute list: newlines are blanks */
	struct nsr_res_error *err;
};

#define RP_EOF (-1)

/* peek - the current byte or RP_EOF. */
static int peek(const struct rp *p)
{
	return p->pos < p->len ? (unsigned char)p->s[p->pos] : RP_EOF;
}

/* advance - consume one byte, keeping line and column. */
static void advance(struct rp *p)
{
	if (p->pos >= p->len)
		return;
	if (p->s[p->pos] == '\n') {
		p->line++;
		p->col = 1;
	} else {
		p->col++;
	}
	p->pos++;
}

/* fail - record an error at (line, col) and return rc. */
static int fail(struct rp *p, int rc, unsigned line, unsigned col,
		const char *msg)
{
	if (p->err) {
		p->err->line = line;
		p->err->col = col;
		snprintf(p->err->msg, sizeof(p->err->msg), "%s", msg);
	}
	return rc;
}

/* fail_here - fail at the current position. */
static int fail_here(struct rp *p, int rc, const char *msg)
{
	return fail(p, rc, p->line, p->col, msg);
}

/* is_blank - horizontal white space. */
static int is_blank(int c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* skip_blanks - skip horizontal blanks (and newlines in one-list mode). */
static void skip_blanks(struct rp *p)
{
	for (;;) {
		int c = peek(p);

		if (is_blank(c) || (p->one && c == '\n'))
			advance(p);
		else
			return;
	}
}

/* skip_comment - skip from '#' to the end of the line (not the newline). */
static void skip_comment(struct rp *p)
{
	while (peek(p) != RP_EOF && peek(p) != '\n')
		advance(p);
}

/* parse_quoted - a "..." value with \ escapes into val. */
static int parse_quoted(struct rp *p, struct nsr_buf *val)
{
	unsigned line = p->line, col = p->col;
	int c, rc;

	advance(p); /* the opening quote */
	for (;;) {
		c = peek(p);
		if (c == RP_EOF)
			return fail(p, NSR_ERR_SYNTAX, line, col,
				    "unterminated quoted value");
		if (c == '\0')
			return fail_here(p, NSR_ERR_SYNTAX,
					 "NUL byte in value");
		advance(p);
		if (c == '"')
			return NSR_OK;
		if (c == '\\') {
			int e = peek(p);

			if (e == '"' || e == '\\')
				c = e;
			else if (e == 'n')
				c = '\n';
			else if (e == 't')
				c = '\t';
			else if (e == 'r')
				c = '\r';
			else
				return fail_here(
					p, NSR_ERR_SYNTAX,
					"unknown escape in quoted value "
					"(use \\\" \\\\ \\n \\t \\r)");
			advance(p);
		}
		rc = nsr_buf_addch(val, c);
		if (rc == NSR_ERR_TOOBIG)
			return fail(p, rc, line, col, "value too long");
		if (rc != NSR_OK)
			return rc;
	}
}

/* parse_plain - an unquoted value up to , ; newline # or end. */
static int parse_plain(struct rp *p, struct nsr_buf *val)
{
	unsigned line = p->line, col = p->col;
	int c, rc;

	for (;;) {
		c = peek(p);
		if (c == RP_EOF || c == ',' || c == ';' || c == '#' ||
		    (c == '\n'))
			break;
		if (c == '\0')
			return fail_here(p, NSR_ERR_SYNTAX,
					 "NUL byte in value");
		rc = nsr_buf_addch(val, c);
		if (rc == NSR_ERR_TOOBIG)
			return fail(p, rc, line, col, "value too long");
		if (rc != NSR_OK)
			return rc;
		advance(p);
	}
	while (val->len && is_blank((unsigned char)val->data[val->len - 1]))
		nsr_buf_setlen(val, val->len - 1);
	return NSR_OK;
}

/* parse_values - the values after "name:"; *cont says whether the list
 * ended with ';' (the attribute list goes on). */
static int parse_values(struct rp *p, struct nsr_res *r, size_t ai, int *cont)
{
	struct nsr_buf val;
	int c, rc = NSR_OK;

	nsr_buf_init(&val, NSR_RES_MAX_VALUE);
	*cont = 0;
	skip_blanks(p);
	c = peek(p);
	if (c == ';') {
		advance(p);
		*cont = 1;
		goto out;
	}
	if (c == RP_EOF || c == '\n' || c == '#')
		goto out;
	for (;;) {
		unsigned line = p->line, col = p->col;

		nsr_buf_reset(&val);
		if (peek(p) == '"')
			rc = parse_quoted(p, &val);
		else if (peek(p) == ',' || peek(p) == ';')
			rc = fail_here(p, NSR_ERR_SYNTAX, "expected a value");
		else
			rc = parse_plain(p, &val);
		if (rc != NSR_OK)
			goto out;
		rc = res_add_value(r, ai, val.data, val.len);
		if (rc == NSR_ERR_TOOBIG)
			rc = fail(p, rc, line, col, "too many values");
		if (rc != NSR_OK)
			goto out;
		skip_blanks(p);
		c = peek(p);
		if (c == ',') {
			advance(p);
			/* A trailing comma continues on the next line. */
			for (;;) {
				c = peek(p);
				if (is_blank(c) || c == '\n')
					advance(p);
				else if (c == '#')
					skip_comment(p);
				else
					break;
			}
			if (c == RP_EOF || c == ',' || c == ';') {
				rc = fail_here(p, NSR_ERR_SYNTAX,
					       "expected a value after ','");
				goto out;
			}
			continue;
		}
		if (c == ';') {
			advance(p);
			*cont = 1;
			goto out;
		}
		if (c == RP_EOF || c == '\n' || c == '#')
			goto out;
		rc = fail_here(p, NSR_ERR_SYNTAX,
			       "expected ',' or ';' after a value");
		goto out;
	}
out:
	nsr_buf_release(&val);
	return rc;
}

/* parse_attr - one attribute starting at a name character. */
static int parse_attr(struct rp *p, struct nsr_res *r, int *cont)
{
	unsigned line = p->line, col = p->col;
	size_t start = p->pos, end;
	char name[NSR_RES_MAX_NAME + 1];
	long ai;
	int c;

	for (;;) {
		c = peek(p);
		if (c == RP_EOF || c == ':' || c == ';' || c == '\n' ||
		    c == '#')
			break;
		if (c == ',' || c == '"' || c == '\0')
			return fail_here(
				p, NSR_ERR_SYNTAX,
				c == ',' ? "unexpected ',' in attribute "
					   "name (expected ':')"
					 : "unexpected character in "
					   "attribute name");
		advance(p);
	}
	end = p->pos;
	while (end > start && is_blank((unsigned char)p->s[end - 1]))
		end--;
	if (end - start > NSR_RES_MAX_NAME)
		return fail(p, NSR_ERR_TOOBIG, line, col,
			    "attribute name too long");
	memcpy(name, p->s + start, end - start);
	name[end - start] = '\0';
	if (!res_name_ok(name))
		return fail(p, NSR_ERR_SYNTAX, line, col,
			    "control character in attribute name");
	if (nsr_res_find(r, name) >= 0)
		return fail(p, NSR_ERR_SYNTAX, line, col,
			    "attribute given twice in one resource");
	ai = res_add_attr(r, name, end - start);
	if (ai == NSR_ERR_TOOBIG)
		return fail(p, NSR_ERR_TOOBIG, line, col,
			    "too many attributes");
	if (ai < 0)
		return (int)ai;
	*cont = 0;
	if (c == ':') {
		advance(p);
		return parse_values(p, r, (size_t)ai, cont);
	}
	if (c == ';') {
		advance(p);
		*cont = 1;
	}
	return NSR_OK;
}

/* parse_resource - one resource; *got is NULL at end of input. */
static int parse_resource(struct rp *p, struct nsr_res **got)
{
	struct nsr_res *r = NULL;
	int content = 0;	/* this line had a token */
	int comment = 0;	/* this line had a comment */
	int cont = 1;		/* the last attribute ended with ';' */
	int closed = 0;		/* list ended; waiting for a blank line */
	int c, rc = NSR_OK;

	*got = NULL;
	r = nsr_res_new();
	if (!r)
		return NSR_ERR_NOMEM;
	for (;;) {
		skip_blanks(p);
		c = peek(p);
		if (c == RP_EOF)
			break;
		if (c == '#') {
			skip_comment(p);
			comment = 1;
			continue;
		}
		if (c == '\n') {
			advance(p);
			if (!content && !comment && (r->n || closed))
				break;	/* blank line ends the resource */
			if (content && !cont)
				closed = 1;
			content = comment = 0;
			continue;
		}
		if (closed) {
			rc = fail_here(
				p, NSR_ERR_SYNTAX,
				"expected a blank line between resources "
				"(or ';' at the end of the previous line)");
			goto out;
		}
		content = 1;
		if (c == ';') {	/* empty attribute */
			advance(p);
			cont = 1;
			continue;
		}
		if (c == ':' || c == ',') {
			rc = fail_here(p, NSR_ERR_SYNTAX,
				       "expected an attribute name");
			goto out;
		}
		rc = parse_attr(p, r, &cont);
		if (rc != NSR_OK)
			goto out;
	}
	if (r->n || p->one) {
		*got = r;
		r = NULL;
	}
out:
	nsr_res_free(r);
	return rc;
}

/* rp_init - set up a parser over text. */
static void rp_init(struct rp *p, const char *text, size_t len, int one,
		    struct nsr_res_error *err)
{
	memset(p, 0, sizeof(*p));
	p->s = text;
	p->len = len;
	p->line = 1;
	p->col = 1;
	p->one = one;
	p->err = err;
	if (err)
		memset(err, 0, sizeof(*err));
}

/* nsr_res_parse - text with resources separated by blank lines. */
int nsr_res_parse(const char *text, size_t len, struct nsr_res_list *out,
		  struct nsr_res_error *err)
{
	struct nsr_res_list tmp;
	struct rp p;
	int rc = NSR_OK;

	nsr_res_list_init(&tmp);
	rp_init(&p, text, len, 0, err);
	while (p.pos < p.len) {
		struct nsr_res *r;

		rc = parse_resource(&p, &r);
		if (rc != NSR_OK)
			goto out;
		if (!r)
			break;
		rc = nsr_res_list_take(&tmp, r);
		if (rc != NSR_OK)
			goto out;
	}
	/* Move everything over only once all of it parsed. */
	for (size_t i = 0; i < tmp.n; i++) {
		rc = nsr_res_list_take(out, tmp.items[i]);
		tmp.items[i] = NULL;
		if (rc != NSR_OK) {
			/* Undo so out is as it was. */
			while (i-- > 0)
				nsr_res_free(out->items[--out->n]);
			goto out;
		}
	}
	tmp.n = 0;
out:
	nsr_res_list_release(&tmp);
	return rc;
}

/* nsr_res_parse_attrs - one attribute list into a new resource. */
int nsr_res_parse_attrs(const char *text, struct nsr_res **out,
			struct nsr_res_error *err)
{
	struct rp p;
	int rc;

	*out = NULL;
	rp_init(&p, text, strlen(text), 1, err);
	rc = parse_resource(&p, out);
	if (rc == NSR_OK && !*out)
		rc = NSR_ERR_NOMEM;
	return rc;
}

/* nsr_res_error_format - "file:line:col: msg". */
int nsr_res_error_format(const struct nsr_res_error *err, struct nsr_buf *out)
{
	int rc = NSR_OK;

	if (err->file[0])
		rc = nsr_buf_addf(out, "%s:", err->file);
	if (rc == NSR_OK && err->line)
		rc = nsr_buf_addf(out, "%u:%u:", err->line, err->col);
	if (rc == NSR_OK)
		rc = nsr_buf_addf(out, "%s%s", out->len ? " " : "", err->msg);
	return rc;
}
