/*
 * nsradmin.c - the nsradmin command interpreter (see nsradmin.h).
 *
 * Owns command lookup by unique prefix, line continuation, the current
 * query, the show list and display options, and the wording of every
 * message.  Resources come from and go to the caller's backend; all text
 * goes out through the caller's write callback.
 */
#include "nsr/compat.h"

#include <ctype.h>
#include <strings.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/nsradmin.h"
#include "nsr/res.h"

#define NSRADMIN_MAX_CMD (1u << 20)	/* one command, continuations joined */

struct nsradmin {
	struct nsradmin_opts o;
	struct nsr_res *query;		/* NULL = none set */
	struct nsr_res *show;		/* names to print; NULL = all */
	int opt_dynamic, opt_hidden, opt_resid;
	struct nsr_buf pending;		/* continued command so far */
	int has_pending;
};

/* say - format a message onto a stream. */
static void say(struct nsradmin *a, enum nsradmin_stream s,
		const char *fmt, ...) NSR_PRINTF(3, 4);

static void say(struct nsradmin *a, enum nsradmin_stream s,
		const char *fmt, ...)
{
	struct nsr_buf b;
	va_list ap;

	nsr_buf_init(&b, 0);
	va_start(ap, fmt);
	if (nsr_buf_vaddf(&b, fmt, ap) == NSR_OK)
		a->o.write(a->o.arg, s, b.data, b.len);
	va_end(ap);
	nsr_buf_release(&b);
}

/* put - write a buffer to standard output. */
static void put(struct nsradmin *a, const struct nsr_buf *b)
{
	a->o.write(a->o.arg, NSRADMIN_OUT, b->data, b->len);
}

/* fail_rc - report a backend failure for cmd and return rc. */
static int fail_rc(struct nsradmin *a, const char *cmd, int rc,
		   const struct nsr_buf *why)
{
	say(a, NSRADMIN_ERR, "%s failed: %s\n", cmd,
	    why->len ? why->data : nsr_strerror(rc));
	return rc;
}

/* confirm - ask the caller, yes when there is nobody to ask. */
static int confirm(struct nsradmin *a, const char *prompt)
{
	return a->o.confirm ? a->o.confirm(a->o.arg, prompt) : 1;
}

/* parse_args - an attribute list typed after a command that starts at
 * column col0 (0-based) of the command; errors are written. */
static int parse_args(struct nsradmin *a, const char *cmd, const char *args,
		      size_t col0, struct nsr_res **out)
{
	struct nsr_res_error err;
	int rc = nsr_res_parse_attrs(args, out, &err);

	if (rc == NSR_ERR_NOMEM)
		say(a, NSRADMIN_ERR, "%s: out of memory\n", cmd);
	else if (rc != NSR_OK && err.line <= 1)
		say(a, NSRADMIN_ERR, "%s: column %zu: %s\n", cmd,
		    col0 + err.col, err.msg);
	else if (rc != NSR_OK)
		say(a, NSRADMIN_ERR, "%s: line %u, column %u: %s\n", cmd,
		    err.line, err.col, err.msg);
	return rc;
}

/* shown - whether attribute i of r is displayed under the options. */
static int shown(const struct nsradmin *a, const struct nsr_res *r, size_t i,
		 const struct nsr_res_schema *s)
{
	const char *name = nsr_res_attr_name(r, i);
	const struct nsr_res_typedef *t;
	const struct nsr_res_attrdef *d;

	if (a->show && nsr_res_find(a->show, name) < 0)
		return 0;
	if (nsr_res_name_eq(name, NSR_RES_ID_ATTR))
		return a->opt_resid;
	t = s ? nsr_res_schema_type(s, nsr_res_type(r)) : NULL;
	d = t ? nsr_res_schema_attr(t, name) : NULL;
	if (d && (d->flags & NSR_RES_HIDDEN) && !a->opt_hidden)
		return 0;
	if (d && (d->flags & NSR_RES_READONLY) && !a->opt_dynamic)
		return 0;
	return 1;
}

/* schema_of - the backend's schema, or NULL. */
static const struct nsr_res_schema *schema_of(struct nsradmin *a)
{
	return a->o.ops->schema ? a->o.ops->schema(a->o.ctx) : NULL;
}

/* print_res - r as nsradmin displays it, blank line included. */
static int print_res(struct nsradmin *a, const struct nsr_res *r)
{
	const struct nsr_res_schema *s = schema_of(a);
	struct nsr_res_print_opts po;
	struct nsr_res *c = nsr_res_new();
	struct nsr_buf b;
	int rc = NSR_OK;

	if (!c)
		return NSR_ERR_NOMEM;
	nsr_buf_init(&b, 0);
	for (size_t i = 0; i < nsr_res_nattrs(r) && rc == NSR_OK; i++) {
		size_t n = nsr_res_attr_nvalues(r, i);
		const char **v = calloc(n ? n : 1, sizeof(*v));

		if (!v) {
			rc = NSR_ERR_NOMEM;
			break;
		}
		for (size_t j = 0; j < n; j++)
			v[j] = nsr_res_attr_value(r, i, j);
		if (shown(a, r, i, s))
			rc = nsr_res_set(c, nsr_res_attr_name(r, i), v, n);
		free(v);
	}
	memset(&po, 0, sizeof(po));
	po.hidden = 1;
	if (rc == NSR_OK)
		rc = nsr_res_print(c, &po, &b);
	if (rc == NSR_OK)
		put(a, &b);
	nsr_buf_release(&b);
	nsr_res_free(c);
	return rc;
}

/* print_none - "No resources found for query:" and the query. */
static void print_none(struct nsradmin *a, const struct nsr_res *q)
{
	struct nsr_buf b;

	if (!q || nsr_res_nattrs(q) == 0) {
		say(a, NSRADMIN_ERR, "No resources found\n");
		return;
	}
	nsr_buf_init(&b, 0);
	if (nsr_res_print(q, NULL, &b) == NSR_OK) {
		say(a, NSRADMIN_ERR, "No resources found for query:\n");
		a->o.write(a->o.arg, NSRADMIN_ERR, b.data,
			   b.len ? b.len - 1 : 0);
	}
	nsr_buf_release(&b);
}

/* unknown_type - a type q asks for that the schema lacks, or NULL. */
static const char *unknown_type(struct nsradmin *a, const struct nsr_res *q)
{
	const struct nsr_res_schema *s = schema_of(a);
	long i = q ? nsr_res_find(q, "type") : -1;

	for (size_t j = 0; s && i >= 0 &&
			   j < nsr_res_attr_nvalues(q, (size_t)i);
	     j++) {
		const char *t = nsr_res_attr_value(q, (size_t)i, j);

		if (!nsr_res_schema_type(s, t))
			return t;
	}
	return NULL;
}

/* list - the resources matching q from the backend (a type the schema
 * does not know is an error, not "No resources found"). */
static int list(struct nsradmin *a, const char *cmd, const struct nsr_res *q,
		struct nsr_res_list *out)
{
	const char *bad = unknown_type(a, q);
	struct nsr_buf why;
	int rc;

	if (bad) {
		say(a, NSRADMIN_ERR, "%s: there is no resource type '%s'; "
		    "the \"types\" command lists them\n", cmd, bad);
		return NSR_ERR_INVAL;
	}
	nsr_buf_init(&why, 0);
	rc = a->o.ops->list(a->o.ctx, q, out, &why);
	if (rc != NSR_OK)
		fail_rc(a, cmd, rc, &why);
	nsr_buf_release(&why);
	return rc;
}

/* set_query - replace the current query (NULL clears it). */
static void set_query(struct nsradmin *a, struct nsr_res *q)
{
	nsr_res_free(a->query);
	a->query = q;
}

/* cmd_dot - ". [query]". */
static int cmd_dot(struct nsradmin *a, const char *args, size_t col0)
{
	struct nsr_res *q = NULL;
	struct nsr_buf b;
	int rc;

	if (!*args) {
		if (!a->query) {
			say(a, NSRADMIN_OUT, "No current query\n");
			return NSR_OK;
		}
		nsr_buf_init(&b, 0);
		rc = nsr_res_print(a->query, NULL, &b);
		if (rc == NSR_OK) {
			say(a, NSRADMIN_OUT, "Current query:\n");
			put(a, &b);
		}
		nsr_buf_release(&b);
		return rc;
	}
	rc = parse_args(a, ".", args, col0, &q);
	if (rc != NSR_OK)
		return rc;
	set_query(a, q);
	say(a, NSRADMIN_OUT, "Current query set\n");
	return NSR_OK;
}

/* cmd_print - "print [query]". */
static int cmd_print(struct nsradmin *a, const char *args, size_t col0)
{
	struct nsr_res_list l;
	struct nsr_res *q = NULL;
	int rc;

	if (*args) {
		rc = parse_args(a, "print", args, col0, &q);
		if (rc != NSR_OK)
			return rc;
		set_query(a, q);
	}
	nsr_res_list_init(&l);
	rc = list(a, "print", a->query, &l);
	if (rc == NSR_OK && l.n == 0)
		print_none(a, a->query);
	for (size_t i = 0; i < l.n && rc == NSR_OK; i++)
		rc = print_res(a, l.items[i]);
	nsr_res_list_release(&l);
	return rc;
}

/* cmd_show - "show [attr; ...]". */
static int cmd_show(struct nsradmin *a, const char *args, size_t col0)
{
	struct nsr_res *s = NULL;
	int rc;

	if (!*args) {
		nsr_res_free(a->show);
		a->show = NULL;
		say(a, NSRADMIN_OUT, "Will show all attributes\n");
		return NSR_OK;
	}
	rc = parse_args(a, "show", args, col0, &s);
	if (rc != NSR_OK)
		return rc;
	nsr_res_free(a->show);
	a->show = s;
	return NSR_OK;
}

/* cmd_create - "create attrlist". */
static int cmd_create(struct nsradmin *a, const char *args, size_t col0)
{
	struct nsr_res *r = NULL;
	struct nsr_buf why;
	char *id = NULL;
	int rc;

	if (!*args) {
		say(a, NSRADMIN_ERR, "create: expected an attribute list, "
		    "e.g. create type: NSR client; name: web01\n");
		return NSR_ERR_SYNTAX;
	}
	rc = parse_args(a, "create", args, col0, &r);
	if (rc != NSR_OK)
		return rc;
	nsr_buf_init(&why, 0);
	if (!confirm(a, "Create?"))
		goto out;
	rc = a->o.ops->create(a->o.ctx, r, &id, &why);
	if (rc == NSR_OK)
		say(a, NSRADMIN_OUT, "created resource id %s\n", id);
	else
		fail_rc(a, "create", rc, &why);
out:
	free(id);
	nsr_buf_release(&why);
	nsr_res_free(r);
	return rc;
}

/* apply_each - merge changes into every listed resource and update it. */
static int apply_each(struct nsradmin *a, const char *cmd,
		      const struct nsr_res_list *l, const struct nsr_res *chg,
		      int append)
{
	struct nsr_buf why;
	int rc, last = NSR_OK;

	nsr_buf_init(&why, 0);
	for (size_t i = 0; i < l->n; i++) {
		struct nsr_res *c = nsr_res_dup(l->items[i]);
		const char *id = nsr_res_id(l->items[i]);

		nsr_buf_reset(&why);
		rc = c && id ? nsr_res_merge(c, chg, append) : NSR_ERR_NOMEM;
		if (!id)
			rc = NSR_ERR_PROTO;
		if (rc == NSR_OK)
			rc = a->o.ops->update(a->o.ctx, id, c, &why);
		if (rc == NSR_OK)
			say(a, NSRADMIN_OUT, "updated resource id %s\n", id);
		else
			last = fail_rc(a, cmd, rc, &why);
		nsr_res_free(c);
	}
	nsr_buf_release(&why);
	return last;
}

/* cmd_change - "update attrlist" (append = 0) or "append attrlist". */
static int cmd_change(struct nsradmin *a, const char *args, size_t col0,
		      int append)
{
	const char *cmd = append ? "append" : "update";
	struct nsr_res_list l;
	struct nsr_res *chg = NULL;
	struct nsr_buf b;
	int rc;

	nsr_res_list_init(&l);
	nsr_buf_init(&b, 0);
	if (!*args) {
		say(a, NSRADMIN_ERR, "%s: expected an attribute list\n", cmd);
		return NSR_ERR_SYNTAX;
	}
	rc = parse_args(a, cmd, args, col0, &chg);
	if (rc != NSR_OK)
		return rc;
	if (!a->query) {
		say(a, NSRADMIN_ERR, "%s: no current query; select resources "
		    "with '. query' first\n", cmd);
		rc = NSR_ERR_INVAL;
		goto out;
	}
	rc = list(a, cmd, a->query, &l);
	if (rc != NSR_OK)
		goto out;
	if (l.n == 0) {
		print_none(a, a->query);
		goto out;
	}
	rc = nsr_res_print(chg, NULL, &b);
	if (rc != NSR_OK)
		goto out;
	a->o.write(a->o.arg, NSRADMIN_OUT, b.data, b.len ? b.len - 1 : 0);
	if (confirm(a, append ? "Append?" : "Update?"))
		rc = apply_each(a, cmd, &l, chg, append);
out:
	nsr_buf_release(&b);
	nsr_res_list_release(&l);
	nsr_res_free(chg);
	return rc;
}

/* cmd_delete - "delete [query]". */
static int cmd_delete(struct nsradmin *a, const char *args, size_t col0)
{
	struct nsr_res_list l;
	struct nsr_res *q = NULL;
	struct nsr_buf why;
	int rc, failed = NSR_OK;

	if (*args) {
		rc = parse_args(a, "delete", args, col0, &q);
		if (rc != NSR_OK)
			return rc;
		set_query(a, q);
	}
	if (!a->query || nsr_res_nattrs(a->query) == 0) {
		say(a, NSRADMIN_ERR, "delete: no current query; refusing to "
		    "delete every resource\n");
		return NSR_ERR_INVAL;
	}
	nsr_res_list_init(&l);
	nsr_buf_init(&why, 0);
	rc = list(a, "delete", a->query, &l);
	if (rc == NSR_OK && l.n == 0)
		print_none(a, a->query);
	for (size_t i = 0; i < l.n && rc == NSR_OK; i++) {
		const char *id = nsr_res_id(l.items[i]);
		int r2;

		rc = print_res(a, l.items[i]);
		if (rc != NSR_OK || !id || !confirm(a, "Delete?"))
			continue;
		nsr_buf_reset(&why);
		r2 = a->o.ops->remove(a->o.ctx, id, &why);
		if (r2 == NSR_OK)
			say(a, NSRADMIN_OUT, "deleted resource id %s\n", id);
		else
			failed = fail_rc(a, "delete", r2, &why);
	}
	nsr_buf_release(&why);
	nsr_res_list_release(&l);
	return rc != NSR_OK ? rc : failed;
}

/* add_type - append type to the "Known types" line unless listed. */
static int add_type(struct nsr_buf *b, struct nsr_res *seen, const char *t)
{
	const char *v = t;

	if (!t || nsr_res_find(seen, t) >= 0 || nsr_res_set(seen, t, &v, 0))
		return NSR_OK;
	return nsr_buf_addf(b, "%s%s", b->len ? ", " : "", t);
}

/* cmd_types - "types". */
static int cmd_types(struct nsradmin *a, const char *args, size_t col0)
{
	const struct nsr_res_schema *s = schema_of(a);
	struct nsr_res *seen = nsr_res_new();
	struct nsr_res_list l;
	struct nsr_buf b;
	int rc = NSR_OK;

	NSR_UNUSED(args);
	NSR_UNUSED(col0);
	if (!seen)
		return NSR_ERR_NOMEM;
	nsr_buf_init(&b, 0);
	nsr_res_list_init(&l);
	for (size_t i = 0; s && i < s->ntypes && rc == NSR_OK; i++)
		rc = add_type(&b, seen, s->types[i].type);
	if (!s) {
		rc = list(a, "types", NULL, &l);
		for (size_t i = 0; i < l.n && rc == NSR_OK; i++)
			rc = add_type(&b, seen, nsr_res_type(l.items[i]));
	}
	if (rc == NSR_OK)
		say(a, NSRADMIN_OUT, "Known types: %s;\n", b.data);
	nsr_res_list_release(&l);
	nsr_buf_release(&b);
	nsr_res_free(seen);
	return rc;
}

/* option_flag - the flag an option name selects, or NULL. */
static int *option_flag(struct nsradmin *a, const char *name, size_t len)
{
	if (len == 7 && strncasecmp(name, "dynamic", len) == 0)
		return &a->opt_dynamic;
	if (len == 6 && strncasecmp(name, "hidden", len) == 0)
		return &a->opt_hidden;
	if ((len == 11 && strncasecmp(name, "resource id", len) == 0) ||
	    (len == 10 && strncasecmp(name, "resourceid", len) == 0))
		return &a->opt_resid;
	return NULL;
}

/* cmd_options - "option [opt ...]" (on = 1) or "unset opt ...". */
static int cmd_options(struct nsradmin *a, const char *args, int on)
{
	const char *p = args;

	if (!*args && on) {
		say(a, NSRADMIN_OUT, "Display options:\n"
		    "\tDynamic: %s;\n\tHidden: %s;\n\tResource ID: %s;\n",
		    a->opt_dynamic ? "On" : "Off", a->opt_hidden ? "On" : "Off",
		    a->opt_resid ? "On" : "Off");
		return NSR_OK;
	}
	if (!*args) {
		say(a, NSRADMIN_ERR, "unset: expected an option name\n");
		return NSR_ERR_SYNTAX;
	}
	while (*p) {
		size_t len = strcspn(p, " \t,;");
		int *flag;

		/* "Resource ID" is two words. */
		if (len == 8 && strncasecmp(p, "resource", 8) == 0 &&
		    (p[8] == ' ' || p[8] == '\t') &&
		    strncasecmp(p + 9 + strspn(p + 9, " \t"), "id", 2) == 0) {
			flag = &a->opt_resid;
			len = 9 + strspn(p + 9, " \t") + 2;
		} else {
			flag = option_flag(a, p, len);
		}
		if (!flag) {
			say(a, NSRADMIN_ERR,
			    "%s: unknown or unsupported option "
			    "'%.*s' (Dynamic, Hidden, Resource ID)\n",
			    on ? "option" : "unset", (int)len, p);
			return NSR_ERR_INVAL;
		}
		*flag = on;
		p += len;
		p += strspn(p, " \t,;");
	}
	return NSR_OK;
}

/* cmd_help - "help" / "?". */
static int cmd_help(struct nsradmin *a, const char *args, size_t col0)
{
	NSR_UNUSED(args);
	NSR_UNUSED(col0);
	say(a, NSRADMIN_OUT,
	    "Legal commands are:\n"
	    "\t. [query]\t\tset the current query (or show it)\n"
	    "\tprint [query]\t\tprint resources matching the query\n"
	    "\tshow [attr; ...]\tprint only these attributes\n"
	    "\tcreate attrlist\t\tcreate a resource\n"
	    "\tupdate attrlist\t\tset attributes of the selected resources\n"
	    "\tappend attrlist\t\tadd values to attributes of the selected "
	    "resources\n"
	    "\tdelete [query]\t\tdelete resources matching the query\n"
	    "\ttypes\t\t\tlist the resource types\n"
	    "\toption [opt ...]\tDynamic, Hidden, Resource ID; alone: list\n"
	    "\tunset opt ...\t\tturn display options off\n"
	    "\thelp, ?\t\t\tthis text\n"
	    "\tquit\t\t\tleave nsradmin\n"
	    "An attrlist is name: value, value; name: value ...  A line "
	    "ending in ',' or ';'\ncontinues on the next line.  Any unique "
	    "prefix of a command works.\n");
	return NSR_OK;
}

/* Command table: names in order for prefix lookup. */
struct cmd {
	const char *name;
	int kind;
};

enum { C_DOT, C_APPEND, C_BIND, C_CREATE, C_DELETE, C_EDIT, C_HELP,
       C_OPTION, C_PRINT, C_QUIT, C_SERVER, C_SHOW, C_TYPES, C_UNSET,
       C_UPDATE, C_VISUAL };

static const struct cmd cmds[] = {
	{ "append", C_APPEND }, { "bind", C_BIND }, { "create", C_CREATE },
	{ "delete", C_DELETE }, { "edit", C_EDIT }, { "help", C_HELP },
	{ "option", C_OPTION }, { "print", C_PRINT }, { "quit", C_QUIT },
	{ "server", C_SERVER }, { "show", C_SHOW }, { "types", C_TYPES },
	{ "unset", C_UNSET }, { "update", C_UPDATE }, { "visual", C_VISUAL },
};

/* lookup_cmd - the command for word (unique prefix), or -1 with a
 * message. */
static int lookup_cmd(struct nsradmin *a, const char *word, size_t len)
{
	int found = -1, count = 0;
	struct nsr_buf names;

	for (size_t i = 0; i < NSR_ARRAY_SIZE(cmds); i++) {
		if (strlen(cmds[i].name) == len &&
		    strncasecmp(cmds[i].name, word, len) == 0)
			return cmds[i].kind;
		if (strncasecmp(cmds[i].name, word, len) == 0) {
			found = cmds[i].kind;
			count++;
		}
	}
	if (count == 1)
		return found;
	if (count == 0) {
		say(a, NSRADMIN_ERR, "unknown command '%.*s' (type 'help' for "
		    "a list)\n", (int)len, word);
		return -1;
	}
	nsr_buf_init(&names, 0);
	for (size_t i = 0; i < NSR_ARRAY_SIZE(cmds); i++)
		if (strncasecmp(cmds[i].name, word, len) == 0)
			nsr_buf_addf(&names, "%s%s", names.len ? ", " : "",
				     cmds[i].name);
	say(a, NSRADMIN_ERR, "ambiguous command '%.*s': %s\n", (int)len, word,
	    names.data);
	nsr_buf_release(&names);
	return -1;
}

/* nsradmin_exec - run one complete command. */
int nsradmin_exec(struct nsradmin *a, const char *cmd)
{
	const char *p = cmd + strspn(cmd, " \t"), *args;
	size_t wlen;
	int kind;

	if (*p == '\0' || *p == '#')
		return NSR_OK;
	if (*p == '.' || *p == '?') {
		kind = *p == '.' ? C_DOT : C_HELP;
		wlen = 1;
	} else {
		wlen = 0;
		while (isalpha((unsigned char)p[wlen]))
			wlen++;
		if (wlen == 0 ||
		    (p[wlen] && !isspace((unsigned char)p[wlen]))) {
			wlen += strcspn(p + wlen, " \t");
			say(a, NSRADMIN_ERR, "unknown command '%.*s' (type "
			    "'help' for a list)\n", (int)wlen, p);
			return NSR_ERR_SYNTAX;
		}
		kind = lookup_cmd(a, p, wlen);
		if (kind < 0)
			return NSR_ERR_SYNTAX;
	}
	args = p + wlen;
	args += strspn(args, " \t");
	switch (kind) {
	case C_DOT:
		return cmd_dot(a, args, (size_t)(args - cmd));
	case C_PRINT:
		return cmd_print(a, args, (size_t)(args - cmd));
	case C_SHOW:
		return cmd_show(a, args, (size_t)(args - cmd));
	case C_CREATE:
		return cmd_create(a, args, (size_t)(args - cmd));
	case C_UPDATE:
		return cmd_change(a, args, (size_t)(args - cmd), 0);
	case C_APPEND:
		return cmd_change(a, args, (size_t)(args - cmd), 1);
	case C_DELETE:
		return cmd_delete(a, args, (size_t)(args - cmd));
	case C_TYPES:
		return cmd_types(a, args, (size_t)(args - cmd));
	case C_OPTION:
		return cmd_options(a, args, 1);
	case C_UNSET:
		return cmd_options(a, args, 0);
	case C_HELP:
		return cmd_help(a, args, 0);
	case C_QUIT:
		return NSRADMIN_QUIT;
	default:
		say(a, NSRADMIN_ERR, "%.*s: not supported by this nsradmin\n",
		    (int)wlen, p);
		return NSR_ERR_UNSUPPORTED;
	}
}

/* continues - 1 if the text ends with ',' or ';' (ignoring blanks). */
static int continues(const char *s, size_t len)
{
	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	return len && (s[len - 1] == ',' || s[len - 1] == ';');
}

/* nsradmin_feed - one input line, joining continuations. */
int nsradmin_feed(struct nsradmin *a, const char *line)
{
	const char *p = line + strspn(line, " \t");
	int rc;

	if (!a->has_pending && (*p == '\0' || *p == '#'))
		return NSR_OK;
	if (a->has_pending)
		rc = nsr_buf_addch(&a->pending, '\n');
	else
		rc = NSR_OK;
	if (rc == NSR_OK)
		rc = nsr_buf_addstr(&a->pending, line);
	if (rc != NSR_OK) {
		say(a, NSRADMIN_ERR, "command too long\n");
		nsr_buf_reset(&a->pending);
		a->has_pending = 0;
		return rc;
	}
	if (continues(a->pending.data, a->pending.len)) {
		a->has_pending = 1;
		return NSRADMIN_MORE;
	}
	a->has_pending = 0;
	rc = nsradmin_exec(a, a->pending.data);
	nsr_buf_reset(&a->pending);
	return rc;
}

/* nsradmin_pending - a continued command is waiting. */
int nsradmin_pending(const struct nsradmin *a)
{
	return a->has_pending;
}

/* nsradmin_set_query - the command-line query. */
int nsradmin_set_query(struct nsradmin *a, const char *text)
{
	struct nsr_res *q = NULL;
	int rc = parse_args(a, "query", text, 0, &q);

	if (rc == NSR_OK)
		set_query(a, q);
	return rc;
}

/* nsradmin_prompt - the interactive prompt. */
const char *nsradmin_prompt(const struct nsradmin *a)
{
	NSR_UNUSED(a);
	return "nsradmin> ";
}

/* nsradmin_new - a fresh interpreter. */
int nsradmin_new(const struct nsradmin_opts *opts, struct nsradmin **out)
{
	struct nsradmin *a;

	*out = NULL;
	if (!opts || !opts->ops || !opts->write || !opts->ops->list ||
	    !opts->ops->create || !opts->ops->update || !opts->ops->remove)
		return NSR_ERR_INVAL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return NSR_ERR_NOMEM;
	a->o = *opts;
	nsr_buf_init(&a->pending, NSRADMIN_MAX_CMD);
	*out = a;
	return NSR_OK;
}

/* nsradmin_free - free the interpreter. */
void nsradmin_free(struct nsradmin *a)
{
	if (!a)
		return;
	nsr_res_free(a->query);
	nsr_res_free(a->show);
	nsr_buf_release(&a->pending);
	free(a);
}
