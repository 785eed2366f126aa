/*
 * mmquery.c - mminfo queryspecs compiled into struct mmdb_query.
 *
 * Owns the -q language (mmquery.h), its error messages and the strings
 * the compiled predicates point to.  Each spec is parsed into a scratch
 * list first and appended only when all of it is valid, so a bad -q never
 * leaves half a query behind.
 */
#include "nsr/compat.h"

#include <ctype.h>
#include <time.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/getdate.h"
#include "nsr/mmdb.h"
#include "nsr/mmquery.h"
#include "nsr/size.h"

struct nsr_mmquery {
	struct mmdb_pred *preds;
	size_t n, cap;
	char **strs;		/* owned strings the predicates point to */
	size_t nstrs, capstrs;
	struct mmdb_query view;
};

/* nsr_mmquery_new - an empty query. */
int nsr_mmquery_new(struct nsr_mmquery **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? NSR_OK : NSR_ERR_NOMEM;
}

/* nsr_mmquery_free - free a query. */
void nsr_mmquery_free(struct nsr_mmquery *q)
{
	if (!q)
		return;
	for (size_t i = 0; i < q->nstrs; i++)
		free(q->strs[i]);
	free(q->strs);
	free(q->preds);
	free(q);
}

/* keep_str - take ownership of s (freed on failure). */
static int keep_str(struct nsr_mmquery *q, char *s)
{
	if (q->nstrs == q->capstrs) {
		size_t ncap = q->capstrs ? q->capstrs * 2 : 8;
		char **p = realloc(q->strs, ncap * sizeof(*p));

		if (!p) {
			free(s);
			return NSR_ERR_NOMEM;
		}
		q->strs = p;
		q->capstrs = ncap;
	}
	q->strs[q->nstrs++] = s;
	return NSR_OK;
}

/* add_pred - append a predicate (str, if any, already kept). */
static int add_pred(struct nsr_mmquery *q, const struct mmdb_pred *p)
{
	if (q->n >= NSR_MMQUERY_MAX_PREDS)
		return NSR_ERR_TOOBIG;
	if (q->n == q->cap) {
		size_t ncap = q->cap ? q->cap * 2 : 8;
		struct mmdb_pred *np = realloc(q->preds, ncap * sizeof(*np));

		if (!np)
			return NSR_ERR_NOMEM;
		q->preds = np;
		q->cap = ncap;
	}
	q->preds[q->n++] = *p;
	q->view.preds = q->preds;
	q->view.npreds = q->n;
	return NSR_OK;
}

/* add_str_pred - a predicate with a copied string value. */
static int add_str_pred(struct nsr_mmquery *q, enum mmdb_attr attr,
			enum mmdb_op op, const char *v, size_t len)
{
	struct mmdb_pred p;
	char *s = strndup(v, len);
	int rc;

	if (!s)
		return NSR_ERR_NOMEM;
	rc = keep_str(q, s);
	if (rc != NSR_OK)
		return rc;
	memset(&p, 0, sizeof(p));
	p.attr = attr;
	p.op = op;
	p.str = s;
	return add_pred(q, &p);
}

/* set_err - fill the error (if any) and return rc. */
static int set_err(struct nsr_mmquery_error *err, int rc, size_t off,
		   size_t len, const char *fmt, ...) NSR_PRINTF(5, 6);

static int set_err(struct nsr_mmquery_error *err, int rc, size_t off,
		   size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return rc;
	err->offset = off;
	err->len = len;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return rc;
}


/* list_names - append every queryable attribute name to b. */
static void list_names(struct nsr_buf *b)
{
	for (size_t i = 0; i < MMDB_A_COUNT; i++)
		nsr_buf_addf(b, "%s%s", i ? ", " : "", mmdb_attrs[i].name);
}

/* Where a value came from in the spec, for error offsets. */
struct val {
	char *text;		/* unquoted value, owned */
	size_t off, len;	/* span in the spec */
};

/* scan_value - read a value at *pos (quoted or up to ','). */
static int scan_value(const char *s, size_t *pos, struct val *v,
		      struct nsr_mmquery_error *err)
{
	struct nsr_buf b;
	size_t i = *pos;
	int rc = NSR_OK;

	nsr_buf_init(&b, 0);
	while (s[i] == ' ' || s[i] == '\t')
		i++;
	v->off = i;
	if (s[i] == '\'' || s[i] == '"') {
		char qc = s[i++];

		for (;;) {
			if (s[i] == '\0') {
				rc = set_err(err, NSR_ERR_SYNTAX, v->off,
					     i - v->off,
					     "unterminated quoted value");
				goto out;
			}
			if (s[i] == qc && s[i + 1] == qc) {
				rc = nsr_buf_addch(&b, qc);
				i += 2;
			} else if (s[i] == qc) {
				i++;
				break;
			} else {
				rc = nsr_buf_addch(&b, s[i++]);
			}
			if (rc != NSR_OK)
				goto out;
		}
		v->len = i - v->off;
		while (s[i] == ' ' || s[i] == '\t')
			i++;
		if (s[i] != ',' && s[i] != '\0') {
			rc = set_err(err, NSR_ERR_SYNTAX, i, 1,
				     "expected ',' after the quoted value");
			goto out;
		}
	} else {
		size_t end;

		while (s[i] != ',' && s[i] != '\0')
			i++;
		end = i;
		while (end > v->off &&
		       (s[end - 1] == ' ' || s[end - 1] == '\t'))
			end--;
		v->len = end - v->off;
		rc = nsr_buf_add(&b, s + v->off, v->len);
		if (rc == NSR_OK && v->len == 0)
			rc = set_err(err, NSR_ERR_SYNTAX, v->off, 0,
				     "expected a value");
		if (rc != NSR_OK)
			goto out;
	}
	*pos = i;
	v->text = nsr_buf_detach(&b, NULL);
out:
	nsr_buf_release(&b);
	return rc;
}

/* negate - the comparator that "!name op value" means. */
static enum mmdb_op negate(enum mmdb_op op)
{
	switch (op) {
	case MMDB_OP_EQ:
		return MMDB_OP_NE;
	case MMDB_OP_NE:
		return MMDB_OP_EQ;
	case MMDB_OP_LT:
		return MMDB_OP_GE;
	case MMDB_OP_LE:
		return MMDB_OP_GT;
	case MMDB_OP_GT:
		return MMDB_OP_LE;
	case MMDB_OP_GE:
		return MMDB_OP_LT;
	default:
		return op;
	}
}

/* is_hex32 - 32 hexadecimal digits. */
static int is_hex32(const char *s)
{
	size_t n = 0;

	while (isxdigit((unsigned char)s[n]))
		n++;
	return n == 32 && s[n] == '\0';
}

/* typed_pred - turn one compared constraint into a predicate. */
static int typed_pred(struct nsr_mmquery *q, const struct mmdb_attr_info *a,
		      enum mmdb_op op, struct val *v, time_t now,
		      struct nsr_mmquery_error *err)
{
	struct nsr_getdate_error gerr;
	struct mmdb_pred p;
	long long n;
	time_t t;
	int rc, lvl;

	memset(&p, 0, sizeof(p));
	p.attr = a->id;
	p.op = op;
	if (a->id == MMDB_A_LEVEL) {
		/* Levels are words to users: "Full" is full. */
		for (char *c = v->text; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		lvl = nsr_level_parse(v->text);
		if (lvl < 0)
			return set_err(err, NSR_ERR_SYNTAX, v->off, v->len,
				       "'%s' is not a level (full, incr, 1-9, "
				       "manual)", v->text);
		return add_str_pred(q, a->id, op, nsr_level_name((unsigned)lvl),
				    strlen(nsr_level_name((unsigned)lvl)));
	}
	switch (a->type) {
	case MMDB_T_TIME:
		rc = nsr_getdate_err(v->text, now, &t, &gerr);
		if (rc != NSR_OK)
			return set_err(err, NSR_ERR_SYNTAX, v->off, v->len,
				       "'%s' is not a time for '%s': %s at "
				       "'%.*s'", v->text, a->name,
				       rc == NSR_ERR_SYNTAX ? gerr.msg
							     : nsr_strerror(rc),
				       (int)gerr.len, v->text + NSR_MIN(
				       gerr.offset, strlen(v->text)));
		p.num = (int64_t)t;
		return add_pred(q, &p);
	case MMDB_T_NUMBER:
		rc = nsr_size_parse(v->text, &n);
		if (rc != NSR_OK)
			return set_err(err, NSR_ERR_SYNTAX, v->off, v->len,
				       "'%s' is not a number for '%s'",
				       v->text, a->name);
		p.num = n;
		return add_pred(q, &p);
	case MMDB_T_FLAGS:
		if (op != MMDB_OP_EQ)
			return set_err(err, NSR_ERR_SYNTAX, v->off, v->len,
				       "'%s' takes only '=' (all letters set)",
				       a->name);
		break;
	default:
		break;
	}
	if (a->id == MMDB_A_VOLID && !is_hex32(v->text))
		return set_err(err, NSR_ERR_SYNTAX, v->off, v->len,
			       "a volume id is 32 hexadecimal digits");
	return add_str_pred(q, a->id, op, v->text, strlen(v->text));
}

/* scan_op - the comparator at s+*pos, if any (0 if none). */
static int scan_op(const char *s, size_t *pos, enum mmdb_op *op)
{
	static const struct { const char *t; enum mmdb_op op; } ops[] = {
		{ "!=", MMDB_OP_NE }, { "<=", MMDB_OP_LE },
		{ ">=", MMDB_OP_GE }, { "=", MMDB_OP_EQ },
		{ "<", MMDB_OP_LT }, { ">", MMDB_OP_GT },
	};

	for (size_t i = 0; i < NSR_ARRAY_SIZE(ops); i++) {
		size_t n = strlen(ops[i].t);

		if (strncmp(s + *pos, ops[i].t, n) == 0) {
			*pos += n;
			*op = ops[i].op;
			return 1;
		}
	}
	return 0;
}

/* parse_one - one constraint starting at *pos, into scratch. */
static int parse_one(struct nsr_mmquery *scratch, const char *s, size_t *pos,
		     time_t now, struct nsr_mmquery_error *err)
{
	const struct mmdb_attr_info *a;
	struct val v = { NULL, 0, 0 };
	size_t i = *pos, nstart, nend;
	enum mmdb_op op;
	char name[64];
	int bang = 0, rc;

	while (s[i] == ' ' || s[i] == '\t')
		i++;
	if (s[i] == '!') {
		bang = 1;
		i++;
		while (s[i] == ' ' || s[i] == '\t')
			i++;
	}
	nstart = i;
	while (s[i] && !strchr(",=!<>", s[i]))
		i++;
	nend = i;
	while (nend > nstart && (s[nend - 1] == ' ' || s[nend - 1] == '\t'))
		nend--;
	if (nend == nstart)
		return set_err(err, NSR_ERR_SYNTAX, nstart, 0,
			       "expected an attribute name");
	if (nend - nstart >= sizeof(name))
		return set_err(err, NSR_ERR_SYNTAX, nstart, nend - nstart,
			       "attribute name too long");
	memcpy(name, s + nstart, nend - nstart);
	name[nend - nstart] = '\0';
	a = mmdb_attr_lookup(name);
	if (!a) {
		struct nsr_buf b;

		nsr_buf_init(&b, 0);
		list_names(&b);
		rc = set_err(err, NSR_ERR_SYNTAX, nstart, nend - nstart,
			     "unknown attribute '%s' (known: %s)", name,
			     b.data);
		nsr_buf_release(&b);
		return rc;
	}
	if (!scan_op(s, &i, &op)) {
		struct mmdb_pred p;

		if (s[i] != ',' && s[i] != '\0')
			return set_err(
				err, NSR_ERR_SYNTAX, i, 1,
				"expected a comparator (= != < <= > >=)");
		if (a->type != MMDB_T_FLAG)
			return set_err(err, NSR_ERR_SYNTAX, nstart,
				       nend - nstart, "'%s' needs a comparator "
				       "and a value (e.g. %s=...)", name, name);
		memset(&p, 0, sizeof(p));
		p.attr = a->id;
		p.op = bang ? MMDB_OP_CLEAR : MMDB_OP_SET;
		*pos = i;
		return add_pred(scratch, &p);
	}
	if (a->type == MMDB_T_FLAG)
		return set_err(err, NSR_ERR_SYNTAX, nstart, nend - nstart,
			       "'%s' is a flag: write %s or !%s", name, name,
			       name);
	rc = scan_value(s, &i, &v, err);
	if (rc == NSR_OK)
		rc = typed_pred(scratch, a, bang ? negate(op) : op, &v, now,
				err);
	free(v.text);
	if (rc == NSR_OK)
		*pos = i;
	return rc;
}

/* merge - move scratch's predicates and strings into q. */
static int merge(struct nsr_mmquery *q, struct nsr_mmquery *scratch)
{
	size_t n0 = q->n, s0 = q->nstrs;
	int rc = NSR_OK;

	for (size_t i = 0; i < scratch->n && rc == NSR_OK; i++)
		rc = add_pred(q, &scratch->preds[i]);
	for (size_t i = 0; i < scratch->nstrs && rc == NSR_OK; i++) {
		rc = keep_str(q, scratch->strs[i]);
		if (rc == NSR_OK)
			scratch->strs[i] = NULL;
	}
	if (rc != NSR_OK) {
		/* Give the strings back so scratch frees them; drop preds. */
		for (size_t i = s0; i < q->nstrs; i++)
			scratch->strs[i - s0] = q->strs[i];
		q->nstrs = s0;
		q->n = n0;
		q->view.npreds = n0;
	}
	return rc;
}

/* nsr_mmquery_add_spec - parse one -q queryspec. */
int nsr_mmquery_add_spec(struct nsr_mmquery *q, const char *spec, time_t now,
			 struct nsr_mmquery_error *err)
{
	struct nsr_mmquery *scratch = NULL;
	size_t pos = 0;
	int rc;

	if (strnlen(spec, NSR_MMQUERY_MAX_TEXT + 1) > NSR_MMQUERY_MAX_TEXT)
		return set_err(err, NSR_ERR_TOOBIG, NSR_MMQUERY_MAX_TEXT, 0,
			       "query too long");
	rc = nsr_mmquery_new(&scratch);
	if (rc != NSR_OK)
		return rc;
	for (;;) {
		rc = parse_one(scratch, spec, &pos, now, err);
		if (rc == NSR_ERR_TOOBIG)
			rc = set_err(err, rc, pos, 0, "too many constraints");
		if (rc != NSR_OK)
			goto out;
		if (spec[pos] == '\0')
			break;
		pos++;	/* the ',' */
	}
	if (q->n + scratch->n > NSR_MMQUERY_MAX_PREDS) {
		rc = set_err(err, NSR_ERR_TOOBIG, 0, 0, "too many constraints");
		goto out;
	}
	rc = merge(q, scratch);
out:
	nsr_mmquery_free(scratch);
	return rc;
}

/* nsr_mmquery_add_time - -t: savetime >= time. */
int nsr_mmquery_add_time(struct nsr_mmquery *q, const char *text, time_t now,
			 struct nsr_mmquery_error *err)
{
	struct nsr_getdate_error gerr;
	struct mmdb_pred p;
	time_t t;
	int rc = nsr_getdate_err(text, now, &t, &gerr);

	if (rc != NSR_OK)
		return set_err(err, NSR_ERR_SYNTAX, gerr.offset, gerr.len,
			       "'%s' is not a time: %s", text, gerr.msg);
	memset(&p, 0, sizeof(p));
	p.attr = MMDB_A_SAVETIME;
	p.op = MMDB_OP_GE;
	p.num = (int64_t)t;
	return add_pred(q, &p);
}

/* nsr_mmquery_add_client - -c client. */
int nsr_mmquery_add_client(struct nsr_mmquery *q, const char *client)
{
	return add_str_pred(q, MMDB_A_CLIENT, MMDB_OP_EQ, client,
			    strlen(client));
}

/* nsr_mmquery_add_name - -N name. */
int nsr_mmquery_add_name(struct nsr_mmquery *q, const char *name)
{
	return add_str_pred(q, MMDB_A_NAME, MMDB_OP_EQ, name, strlen(name));
}

/* nsr_mmquery_add_volume - a volname operand. */
int nsr_mmquery_add_volume(struct nsr_mmquery *q, const char *volume)
{
	return add_str_pred(q, MMDB_A_VOLUME, MMDB_OP_EQ, volume,
			    strlen(volume));
}

/* nsr_mmquery_get - the compiled query. */
const struct mmdb_query *nsr_mmquery_get(const struct nsr_mmquery *q)
{
	return &q->view;
}

/* nsr_mmquery_volume_only - every predicate has volume scope. */
int nsr_mmquery_volume_only(const struct nsr_mmquery *q)
{
	if (q->n == 0)
		return 0;
	for (size_t i = 0; i < q->n; i++)
		if (mmdb_attrs[q->preds[i].attr].scope != MMDB_S_VOLUME)
			return 0;
	return 1;
}

/* nsr_mmquery_quote - value as a quoted queryspec value. */
int nsr_mmquery_quote(const char *value, struct nsr_buf *out)
{
	int rc = nsr_buf_addch(out, '\'');

	for (const char *c = value; rc == NSR_OK && *c; c++)
		rc = *c == '\'' ? nsr_buf_addstr(out, "''")
				: nsr_buf_addch(out, *c);
	return rc == NSR_OK ? nsr_buf_addch(out, '\'') : rc;
}
