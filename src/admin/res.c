/*
 * res.c - the in-memory resource: an ordered attribute list with values.
 *
 * Owns creation, copying, lookup by (case- and blank-insensitive) name,
 * editing, query matching and resource lists.  Parsing lives in
 * res_parse.c, printing in res_print.c, the type schema in restypes.c.
 */
#include "nsr/compat.h"

#include <ctype.h>
#include <strings.h>

#include "nsr/err.h"
#include "nsr/res.h"

#include "res_int.h"

/* nsr_res_new - an empty resource. */
struct nsr_res *nsr_res_new(void)
{
	return calloc(1, sizeof(struct nsr_res));
}

/* attr_release - free one attribute's name and values. */
static void attr_release(struct res_attr *a)
{
	for (size_t j = 0; j < a->n; j++)
		free(a->values[j]);
	free(a->values);
	free(a->name);
	memset(a, 0, sizeof(*a));
}

/* nsr_res_free - free a resource. */
void nsr_res_free(struct nsr_res *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		attr_release(&r->attrs[i]);
	free(r->attrs);
	free(r);
}

/* nsr_res_dup - deep copy. */
struct nsr_res *nsr_res_dup(const struct nsr_res *r)
{
	struct nsr_res *c = nsr_res_new();

	if (!c)
		return NULL;
	for (size_t i = 0; i < r->n; i++) {
		const struct res_attr *a = &r->attrs[i];
		long k = res_add_attr(c, a->name, strlen(a->name));

		if (k < 0)
			goto fail;
		for (size_t j = 0; j < a->n; j++)
			if (res_add_value(c, (size_t)k, a->values[j],
					  strlen(a->values[j])) != NSR_OK)
				goto fail;
	}
	return c;
fail:
	nsr_res_free(c);
	return NULL;
}

/* res_name_ok - names must survive a print/parse round trip. */
int res_name_ok(const char *name)
{
	size_t len = strlen(name);

	if (len == 0 || len > NSR_RES_MAX_NAME)
		return 0;
	if (name[0] == ' ' || name[0] == '\t' || name[len - 1] == ' ' ||
	    name[len - 1] == '\t')
		return 0;
	for (const char *p = name; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if (c < 0x20 && c != '\t')
			return 0;
		if (strchr(":;,#\"", c))
			return 0;
	}
	return 1;
}

/* res_add_attr - append an attribute with no values. */
long res_add_attr(struct nsr_res *r, const char *name, size_t namelen)
{
	struct res_attr *a;

	if (r->n >= NSR_RES_MAX_ATTRS)
		return NSR_ERR_TOOBIG;
	if (r->n == r->cap) {
		size_t ncap = r->cap ? r->cap * 2 : 8;
		struct res_attr *p = realloc(r->attrs, ncap * sizeof(*p));

		if (!p)
			return NSR_ERR_NOMEM;
		r->attrs = p;
		r->cap = ncap;
	}
	a = &r->attrs[r->n];
	memset(a, 0, sizeof(*a));
	a->name = strndup(name, namelen);
	if (!a->name)
		return NSR_ERR_NOMEM;
	return (long)r->n++;
}

/* res_add_value - append a value to attribute i. */
int res_add_value(struct nsr_res *r, size_t i, const char *v, size_t len)
{
	struct res_attr *a = &r->attrs[i];
	char *copy;

	if (a->n >= NSR_RES_MAX_VALUES)
		return NSR_ERR_TOOBIG;
	if (a->n == a->cap) {
		size_t ncap = a->cap ? a->cap * 2 : 4;
		char **p = realloc(a->values, ncap * sizeof(*p));

		if (!p)
			return NSR_ERR_NOMEM;
		a->values = p;
		a->cap = ncap;
	}
	copy = strndup(v, len);
	if (!copy)
		return NSR_ERR_NOMEM;
	a->values[a->n++] = copy;
	return NSR_OK;
}

/* nsr_res_nattrs - number of attributes. */
size_t nsr_res_nattrs(const struct nsr_res *r)
{
	return r->n;
}

/* nsr_res_attr_name - name of attribute i. */
const char *nsr_res_attr_name(const struct nsr_res *r, size_t i)
{
	return i < r->n ? r->attrs[i].name : NULL;
}

/* nsr_res_attr_nvalues - value count of attribute i. */
size_t nsr_res_attr_nvalues(const struct nsr_res *r, size_t i)
{
	return i < r->n ? r->attrs[i].n : 0;
}

/* nsr_res_attr_value - value j of attribute i. */
const char *nsr_res_attr_value(const struct nsr_res *r, size_t i, size_t j)
{
	if (i >= r->n || j >= r->attrs[i].n)
		return NULL;
	return r->attrs[i].values[j];
}

/* skip_blanks - advance over spaces and tabs. */
static const char *skip_blanks(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* nsr_res_name_eq - compare names ignoring case and blank runs. */
int nsr_res_name_eq(const char *a, const char *b)
{
	a = skip_blanks(a);
	b = skip_blanks(b);
	for (;;) {
		int ba = (*a == ' ' || *a == '\t');
		int bb = (*b == ' ' || *b == '\t');

		if (ba || bb) {
			a = skip_blanks(a);
			b = skip_blanks(b);
			/* Trailing blanks do not count; inner runs
			 * must pair. */
			if (*a == '\0' || *b == '\0')
				return *a == *b;
			if (!ba || !bb)
				return 0;
			continue;
		}
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return 0;
		if (*a == '\0')
			return 1;
		a++;
		b++;
	}
}

/* nsr_res_find - index of the named attribute or -1. */
long nsr_res_find(const struct nsr_res *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (nsr_res_name_eq(r->attrs[i].name, name))
			return (long)i;
	return -1;
}

/* nsr_res_get - first value of the named attribute. */
const char *nsr_res_get(const struct nsr_res *r, const char *name)
{
	long i = nsr_res_find(r, name);

	if (i < 0 || r->attrs[i].n == 0)
		return NULL;
	return r->attrs[i].values[0];
}

/* nsr_res_type - the resource's type. */
const char *nsr_res_type(const struct nsr_res *r)
{
	return nsr_res_get(r, "type");
}

/* nsr_res_id - the resource's id. */
const char *nsr_res_id(const struct nsr_res *r)
{
	return nsr_res_get(r, NSR_RES_ID_ATTR);
}

/* nsr_res_set - replace the values of an attribute (adding it if absent). */
int nsr_res_set(struct nsr_res *r, const char *name,
		const char *const *values, size_t n)
{
	struct res_attr fresh;
	long i;
	int rc = NSR_OK;

	if (!res_name_ok(name))
		return NSR_ERR_INVAL;
	if (n > NSR_RES_MAX_VALUES)
		return NSR_ERR_TOOBIG;
	/* Build the new value array aside so failure leaves r unchanged. */
	memset(&fresh, 0, sizeof(fresh));
	fresh.values = calloc(n ? n : 1, sizeof(char *));
	if (!fresh.values)
		return NSR_ERR_NOMEM;
	fresh.cap = n ? n : 1;
	for (; fresh.n < n; fresh.n++) {
		fresh.values[fresh.n] = strdup(values[fresh.n]);
		if (!fresh.values[fresh.n]) {
			rc = NSR_ERR_NOMEM;
			goto out;
		}
	}
	i = nsr_res_find(r, name);
	if (i < 0) {
		i = res_add_attr(r, name, strlen(name));
		if (i < 0) {
			rc = (int)i;
			goto out;
		}
	}
	fresh.name = r->attrs[i].name;
	r->attrs[i].name = NULL;
	attr_release(&r->attrs[i]);
	r->attrs[i] = fresh;
	return NSR_OK;
out:
	attr_release(&fresh);
	return rc;
}

/* nsr_res_set1 - set a single value. */
int nsr_res_set1(struct nsr_res *r, const char *name, const char *value)
{
	return nsr_res_set(r, name, &value, 1);
}

/* has_value - 1 if attribute a already holds v. */
static int has_value(const struct res_attr *a, const char *v)
{
	for (size_t j = 0; j < a->n; j++)
		if (strcmp(a->values[j], v) == 0)
			return 1;
	return 0;
}

/* nsr_res_append - add values not already present. */
int nsr_res_append(struct nsr_res *r, const char *name,
		   const char *const *values, size_t n)
{
	long i;
	int rc;

	if (!res_name_ok(name))
		return NSR_ERR_INVAL;
	i = nsr_res_find(r, name);
	if (i < 0) {
		i = res_add_attr(r, name, strlen(name));
		if (i < 0)
			return (int)i;
	}
	for (size_t k = 0; k < n; k++) {
		if (has_value(&r->attrs[i], values[k]))
			continue;
		rc = res_add_value(r, (size_t)i, values[k], strlen(values[k]));
		if (rc != NSR_OK)
			return rc;
	}
	return NSR_OK;
}

/* nsr_res_unset - remove an attribute. */
int nsr_res_unset(struct nsr_res *r, const char *name)
{
	long i = nsr_res_find(r, name);

	if (i < 0)
		return NSR_ERR_NOTFOUND;
	attr_release(&r->attrs[i]);
	memmove(&r->attrs[i], &r->attrs[i + 1],
		(r->n - (size_t)i - 1) * sizeof(r->attrs[0]));
	r->n--;
	return NSR_OK;
}

/* nsr_res_merge - set (or append) every attribute of src in dst. */
int nsr_res_merge(struct nsr_res *dst, const struct nsr_res *src, int append)
{
	int rc;

	for (size_t i = 0; i < src->n; i++) {
		const struct res_attr *a = &src->attrs[i];
		const char *const *v = (const char *const *)a->values;

		if (append)
			rc = nsr_res_append(dst, a->name, v, a->n);
		else
			rc = nsr_res_set(dst, a->name, v, a->n);
		if (rc != NSR_OK)
			return rc;
	}
	return NSR_OK;
}

/* nsr_res_match - does r satisfy every attribute of query? */
int nsr_res_match(const struct nsr_res *r, const struct nsr_res *query)
{
	if (!query)
		return 1;
	for (size_t i = 0; i < query->n; i++) {
		const struct res_attr *q = &query->attrs[i];
		long k = nsr_res_find(r, q->name);
		int is_type = nsr_res_name_eq(q->name, "type");

		if (k < 0)
			return 0;
		for (size_t j = 0; j < q->n; j++) {
			const struct res_attr *a = &r->attrs[k];
			int found = 0;

			for (size_t m = 0; m < a->n && !found; m++) {
				if (is_type)
					found = nsr_res_name_eq(a->values[m],
								q->values[j]);
				else
					found = strcmp(a->values[m],
						       q->values[j]) == 0;
			}
			if (!found)
				return 0;
		}
	}
	return 1;
}

/* nsr_res_list_init - empty list. */
void nsr_res_list_init(struct nsr_res_list *l)
{
	memset(l, 0, sizeof(*l));
}

/* nsr_res_list_release - free all resources and the array. */
void nsr_res_list_release(struct nsr_res_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		nsr_res_free(l->items[i]);
	free(l->items);
	nsr_res_list_init(l);
}

/* nsr_res_list_take - append r, owning it. */
int nsr_res_list_take(struct nsr_res_list *l, struct nsr_res *r)
{
	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 8;
		struct nsr_res **p = realloc(l->items, ncap * sizeof(*p));

		if (!p) {
			nsr_res_free(r);
			return NSR_ERR_NOMEM;
		}
		l->items = p;
		l->cap = ncap;
	}
	l->items[l->n++] = r;
	return NSR_OK;
}
