/*
 * res.h - resources in nsradmin's text format: parse, print, edit, match.
 *
 * A resource is an ordered list of attributes; each attribute has a name
 * and a list of zero or more string values.  The text form (also the
 * on-disk form of the resource database) is
 *
 *	resource       ::= attribute-list <blank line>
 *	attribute-list ::= attribute [ ; attribute ]*
 *	attribute      ::= name [ : value [ , value ]* ]
 *
 * Names are compared case-insensitively with runs of blanks folded to one
 * space ("Save  Set" == "save set"); a resource keeps the spelling it was
 * first given.  Values may be "quoted" (backslash escapes \" \\ \n \t);
 * a line ending in ',' or ';' continues on the next line; '#' starts a
 * comment outside quotes.  "type" selects the resource type ("NSR client").
 *
 * A query is simply a resource used as a pattern: see nsr_res_match().
 *
 * Resource types are described by a schema (struct nsr_res_schema): which
 * types exist, which attributes each has, their defaults and constraints.
 * nsr_res_schema_std() returns the built-in table for the standard types;
 * resdb.h enforces it, nsradmin uses it for "types" and hidden attributes.
 *
 * Ownership: struct nsr_res is opaque, created by nsr_res_new() or the
 * parser and freed with nsr_res_free() (NULL is fine).  Strings returned by
 * accessors belong to the resource and stay valid until it is changed or
 * freed.  Setters copy their arguments.  Functions return NSR_OK or a
 * negative nsr_err code (NSR_ERR_NOMEM, NSR_ERR_INVAL, NSR_ERR_SYNTAX,
 * NSR_ERR_NOTFOUND as documented); nothing here prints or logs.
 */
#ifndef NSR_RES_H
#define NSR_RES_H

#include <stddef.h>

struct nsr_buf;
struct nsr_res;
struct nsr_res_schema;

/* Name of the hidden attribute holding a stored resource's id. */
#define NSR_RES_ID_ATTR "resource identifier"

/* Bounds the parser enforces on hostile text (NSR_ERR_TOOBIG beyond). */
#define NSR_RES_MAX_NAME 256		/* bytes in an attribute name */
#define NSR_RES_MAX_VALUE 65536		/* bytes in one value */
#define NSR_RES_MAX_ATTRS 1024		/* attributes per resource */
#define NSR_RES_MAX_VALUES 65536	/* values per attribute */

/* Where and why parsing failed.  file is empty unless resdb filled it. */
struct nsr_res_error {
	char file[512];
	unsigned line;		/* 1-based; 0 = not about a position */
	unsigned col;		/* 1-based column (bytes) */
	char msg[256];		/* e.g. "expected ':' or ';' after name" */
};

/* nsr_res_error_format - append "file:line:col: msg" (parts that are
 * unset are left out) to out. */
int nsr_res_error_format(const struct nsr_res_error *err, struct nsr_buf *out);

/* ---- one resource ---- */

/* nsr_res_new - an empty resource, or NULL when out of memory. */
struct nsr_res *nsr_res_new(void);
/* nsr_res_free - free a resource and everything it owns (NULL ok). */
void nsr_res_free(struct nsr_res *r);
/* nsr_res_dup - a deep copy, or NULL when out of memory. */
struct nsr_res *nsr_res_dup(const struct nsr_res *r);

/* nsr_res_nattrs - number of attributes. */
size_t nsr_res_nattrs(const struct nsr_res *r);
/* nsr_res_attr_name - the name of attribute i (i < nattrs). */
const char *nsr_res_attr_name(const struct nsr_res *r, size_t i);
/* nsr_res_attr_nvalues - the number of values of attribute i. */
size_t nsr_res_attr_nvalues(const struct nsr_res *r, size_t i);
/* nsr_res_attr_value - value j of attribute i. */
const char *nsr_res_attr_value(const struct nsr_res *r, size_t i, size_t j);

/* nsr_res_find - the index of the named attribute, or -1 if absent. */
long nsr_res_find(const struct nsr_res *r, const char *name);
/* nsr_res_get - first value of the named attribute; NULL if the attribute
 * is absent or has no values. */
const char *nsr_res_get(const struct nsr_res *r, const char *name);
/* nsr_res_type - shorthand for nsr_res_get(r, "type"). */
const char *nsr_res_type(const struct nsr_res *r);
/* nsr_res_id - shorthand for nsr_res_get(r, NSR_RES_ID_ATTR). */
const char *nsr_res_id(const struct nsr_res *r);

/* nsr_res_set - give the named attribute exactly these n values (n may be
 * 0); it is added at the end if absent.  NSR_OK, NSR_ERR_NOMEM,
 * NSR_ERR_INVAL (empty name). */
int nsr_res_set(struct nsr_res *r, const char *name,
		const char *const *values, size_t n);
/* nsr_res_set1 - nsr_res_set with one value. */
int nsr_res_set1(struct nsr_res *r, const char *name, const char *value);
/* nsr_res_append - add n values to the named attribute (created if
 * absent), skipping values it already has. */
int nsr_res_append(struct nsr_res *r, const char *name,
		   const char *const *values, size_t n);
/* nsr_res_unset - remove the named attribute: NSR_OK or NSR_ERR_NOTFOUND. */
int nsr_res_unset(struct nsr_res *r, const char *name);
/* nsr_res_merge - for each attribute of src, set it in dst (append mode:
 * add its values instead).  Used by nsradmin's update/append. */
int nsr_res_merge(struct nsr_res *dst, const struct nsr_res *src, int append);

/* nsr_res_name_eq - 1 if two attribute names are equal (case and blank
 * runs ignored), else 0. */
int nsr_res_name_eq(const char *a, const char *b);

/* nsr_res_match - 1 if r matches query, else 0.  Every attribute of the
 * query must be present in r; each value the query gives for it must be
 * one of r's values (the "type" attribute compares case-insensitively,
 * other values exactly).  A query attribute without values only requires
 * presence.  An empty query (or NULL) matches everything. */
int nsr_res_match(const struct nsr_res *r, const struct nsr_res *query);

/* ---- lists of resources ---- */

/* A caller-owned list; the list owns the resources in it. */
struct nsr_res_list {
	struct nsr_res **items;
	size_t n;
	size_t cap; /* private */
};

/* nsr_res_list_init - set up an empty list. */
void nsr_res_list_init(struct nsr_res_list *l);
/* nsr_res_list_release - free every resource and the array. */
void nsr_res_list_release(struct nsr_res_list *l);
/* nsr_res_list_take - append r, taking ownership (also on failure, when
 * r is freed and NSR_ERR_NOMEM returned). */
int nsr_res_list_take(struct nsr_res_list *l, struct nsr_res *r);

/* ---- text ---- */

/* nsr_res_parse - parse text (len bytes, need not be NUL-terminated)
 * holding zero or more resources separated by blank lines, appending them
 * to out.  NSR_OK; NSR_ERR_SYNTAX or NSR_ERR_TOOBIG with err filled
 * (line, column, what was expected) and out left as it was; NSR_ERR_NOMEM.
 * err may be NULL. */
int nsr_res_parse(const char *text, size_t len, struct nsr_res_list *out,
		  struct nsr_res_error *err);
/* nsr_res_parse_attrs - parse one attribute list (as typed after nsradmin's
 * ". ", "print", "create", "update"; blank lines are not separators) into
 * a new resource *out (caller frees).  Empty text gives an empty resource.
 * Returns as nsr_res_parse. */
int nsr_res_parse_attrs(const char *text, struct nsr_res **out,
			struct nsr_res_error *err);

/* Column at which nsradmin aligns the ':' after right-aligned names. */
#define NSR_RES_PRINT_COLUMN 28

/* Printing options; a zeroed struct prints every non-hidden attribute. */
struct nsr_res_print_opts {
	const char *const *show;	/* print only these names (in the */
	size_t nshow;			/* resource's order); 0 = all     */
	int hidden;			/* also print hidden attributes   */
	const struct nsr_res_schema *schema; /* which ones are hidden; */
					/* NULL = only NSR_RES_ID_ATTR is */
};

/* nsr_res_print - append r in nsradmin's layout to out: one attribute per
 * line, name right-aligned so the ':' is at NSR_RES_PRINT_COLUMN,
 * "name: v1, v2;" with values quoted when needed and long lists wrapped
 * onto continuation lines; a blank line ends the resource.  The output
 * parses back to an equal resource.  opts may be NULL. */
int nsr_res_print(const struct nsr_res *r,
		  const struct nsr_res_print_opts *opts, struct nsr_buf *out);
/* nsr_res_print_value - append one value, quoted if it needs to be. */
int nsr_res_print_value(const char *value, struct nsr_buf *out);

/* ---- schema: resource types and their attributes ---- */

/* Attribute flags. */
#define NSR_RES_REQUIRED 0x01	/* must have a non-empty value */
#define NSR_RES_UNIQUE 0x02	/* value unique among resources of the type */
#define NSR_RES_SINGLE 0x04	/* at most one value */
#define NSR_RES_HIDDEN 0x08	/* printed only with "option hidden" */
#define NSR_RES_CREATEONLY 0x10	/* cannot change after creation */
#define NSR_RES_NUMBER 0x20	/* decimal integer in [min, max] */
#define NSR_RES_READONLY 0x40	/* set by the server only (dynamic) */

struct nsr_res_attrdef {
	const char *name;
	const char *defval;	/* default values as an attribute value */
				/* list ("a, b"), NULL = none            */
	unsigned flags;
	const char *choices;	/* "Yes|No|Service" (case-insensitive), */
				/* NULL = free text                       */
	long long min, max;	/* for NSR_RES_NUMBER */
};

/* Type flags. */
#define NSR_RES_SINGLETON 0x01	/* exactly one may exist ("NSR") */
#define NSR_RES_OPEN 0x02	/* attributes not listed are accepted */

struct nsr_res_typedef {
	const char *type;	/* "NSR client" */
	unsigned flags;
	const struct nsr_res_attrdef *attrs;
	size_t nattrs;
};

struct nsr_res_schema {
	const struct nsr_res_typedef *types;
	size_t ntypes;
};

/* nsr_res_schema_std - the built-in schema for the standard types (NSR,
 * NSR client, NSR device, NSR pool, NSR label, NSR storage node,
 * NSR group, NSR schedule, NSR policy) with the documented defaults.
 * Static storage; never NULL. */
const struct nsr_res_schema *nsr_res_schema_std(void);
/* nsr_res_schema_type - the definition of a type (case-insensitive), or
 * NULL. */
const struct nsr_res_typedef *
nsr_res_schema_type(const struct nsr_res_schema *s, const char *type);
/* nsr_res_schema_attr - the definition of one attribute of a type, or
 * NULL. */
const struct nsr_res_attrdef *
nsr_res_schema_attr(const struct nsr_res_typedef *t, const char *name);

/* nsr_res_fill_defaults - add every attribute of r's type that r lacks,
 * with its default values (none if it has no default), in the schema's
 * order.  NSR_ERR_INVAL if r has no known type. */
int nsr_res_fill_defaults(struct nsr_res *r, const struct nsr_res_schema *s);
/* nsr_res_check - check r against its type: known type, known attribute
 * names (unless the type is NSR_RES_OPEN), required, single, choices,
 * numbers.  Uniqueness and create-only need the database (resdb.h).
 * NSR_OK or NSR_ERR_INVAL with a message in why (may be NULL). */
int nsr_res_check(const struct nsr_res *r, const struct nsr_res_schema *s,
		  struct nsr_buf *why);

#endif /* NSR_RES_H */
