/*
 * res_print.c - printing resources in nsradmin's aligned layout.
 *
 * Owns the text form that nsradmin shows and the resource database stores:
 * names right-aligned so the ':' lands on one column, values separated by
 * ", ", quoted only when they would not parse back unchanged, long lists
 * wrapped after a ',' onto lines indented past the ':'.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/res.h"

#include "res_int.h"

#define WRAP_COLUMN 79

/* needs_quotes - 1 if v must be written in quotes to parse back. */
static int needs_quotes(const char *v)
{
	size_t len = strlen(v);

	if (len == 0 || v[0] == ' ' || v[0] == '\t' || v[0] == '"' ||
	    v[len - 1] == ' ' || v[len - 1] == '\t')
		return 1;
	for (const char *p = v; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if (c < 0x20 || c == 0x7f || strchr(",;#", c))
			return 1;
	}
	return 0;
}

/* nsr_res_print_value - append one value, quoted if needed. */
int nsr_res_print_value(const char *value, struct nsr_buf *out)
{
	int rc;

	if (!needs_quotes(value))
		return nsr_buf_addstr(out, value);
	rc = nsr_buf_addch(out, '"');
	for (const char *p = value; *p && rc == NSR_OK; p++) {
		switch (*p) {
		case '"':
			rc = nsr_buf_addstr(out, "\\\"");
			break;
		case '\\':
			rc = nsr_buf_addstr(out, "\\\\");
			break;
		case '\n':
			rc = nsr_buf_addstr(out, "\\n");
			break;
		case '\t':
			rc = nsr_buf_addstr(out, "\\t");
			break;
		case '\r':
			rc = nsr_buf_addstr(out, "\\r");
			break;
		default:
			rc = nsr_buf_addch(out, *p);
			break;
		}
	}
	if (rc == NSR_OK)
		rc = nsr_buf_addch(out, '"');
	return rc;
}

/* is_hidden - whether attribute name of r's type is hidden. */
static int is_hidden(const struct nsr_res *r, const char *name,
		     const struct nsr_res_schema *s)
{
	const struct nsr_res_typedef *t;
	const struct nsr_res_attrdef *a;

	if (nsr_res_name_eq(name, NSR_RES_ID_ATTR))
		return 1;
	if (!s)
		return 0;
	t = nsr_res_schema_type(s, nsr_res_type(r));
	if (!t)
		return 0;
	a = nsr_res_schema_attr(t, name);
	return a && (a->flags & NSR_RES_HIDDEN);
}

/* is_shown - whether the show list selects name. */
static int is_shown(const char *name, const struct nsr_res_print_opts *o)
{
	if (!o || o->nshow == 0)
		return 1;
	for (size_t i = 0; i < o->nshow; i++)
		if (nsr_res_name_eq(name, o->show[i]))
			return 1;
	return 0;
}

/* print_attr - one attribute line (or lines, when wrapped). */
static int print_attr(const struct res_attr *a, struct nsr_buf *out)
{
	size_t nlen = strlen(a->name), line_start;
	struct nsr_buf v;
	int rc;

	nsr_buf_init(&v, 0);
	line_start = out->len;
	rc = nsr_buf_addf(out, "%*s%s:", nlen < NSR_RES_PRINT_COLUMN ?
			  (int)(NSR_RES_PRINT_COLUMN - nlen) : 0, "", a->name);
	for (size_t j = 0; j < a->n && rc == NSR_OK; j++) {
		nsr_buf_reset(&v);
		rc = nsr_res_print_value(a->values[j], &v);
		if (rc != NSR_OK)
			break;
		/* Wrap after the ',' if this value would pass the margin. */
		if (j > 0 && out->len - line_start + 2 + v.len > WRAP_COLUMN) {
			rc = nsr_buf_addch(out, '\n');
			line_start = out->len;
			if (rc == NSR_OK)
				rc = nsr_buf_addf(out, "%*s",
						  NSR_RES_PRINT_COLUMN + 1, "");
		}
		if (rc == NSR_OK)
			rc = nsr_buf_addch(out, ' ');
		if (rc == NSR_OK)
			rc = nsr_buf_add(out, v.data, v.len);
		if (rc == NSR_OK && j + 1 < a->n)
			rc = nsr_buf_addch(out, ',');
	}
	if (rc == NSR_OK)
		rc = nsr_buf_addstr(out, a->n ? ";\n" : " ;\n");
	nsr_buf_release(&v);
	return rc;
}

/* nsr_res_print - append r in nsradmin's layout plus a blank line. */
int nsr_res_print(const struct nsr_res *r,
		  const struct nsr_res_print_opts *opts, struct nsr_buf *out)
{
	int rc = NSR_OK;

	for (size_t i = 0; i < r->n && rc == NSR_OK; i++) {
		const struct res_attr *a = &r->attrs[i];

		if (!is_shown(a->name, opts))
			continue;
		if ((!opts || !opts->hidden) &&
		    is_hidden(r, a->name, opts ? opts->schema : NULL))
			continue;
		rc = print_attr(a, out);
	}
	if (rc == NSR_OK)
		rc = nsr_buf_addch(out, '\n');
	return rc;
}
