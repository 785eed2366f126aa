/*
 * fuzz_res.c - nsradmin resource text (the resource database's on-disk
 * format and what nsradmin users type).  Whatever parses must print and
 * parse back to the same resources; nothing may crash.  The same bytes
 * are also fed as an nsradmin -i script to the interpreter over a small
 * in-memory backend.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/nsradmin.h"
#include "nsr/res.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* same - 1 if two resources have equal names and values in order. */
static int same(const struct nsr_res *a, const struct nsr_res *b)
{
	if (nsr_res_nattrs(a) != nsr_res_nattrs(b))
		return 0;
	for (size_t i = 0; i < nsr_res_nattrs(a); i++) {
		if (strcmp(nsr_res_attr_name(a, i), nsr_res_attr_name(b, i)))
			return 0;
		if (nsr_res_attr_nvalues(a, i) != nsr_res_attr_nvalues(b, i))
			return 0;
		for (size_t j = 0; j < nsr_res_attr_nvalues(a, i); j++)
			if (strcmp(nsr_res_attr_value(a, i, j),
				   nsr_res_attr_value(b, i, j)))
				return 0;
	}
	return 1;
}

/* check_roundtrip - print every resource and parse the text back. */
static void check_roundtrip(const struct nsr_res_list *l)
{
	struct nsr_res_print_opts po;
	struct nsr_res_list back;
	struct nsr_buf text;
	size_t want = 0;

	memset(&po, 0, sizeof(po));
	po.hidden = 1;
	nsr_buf_init(&text, 0);
	nsr_res_list_init(&back);
	for (size_t i = 0; i < l->n; i++) {
		if (nsr_res_nattrs(l->items[i]) == 0)
			continue;
		want++;
		if (nsr_res_print(l->items[i], &po, &text) != NSR_OK)
			abort();
	}
	if (nsr_res_parse(text.data, text.len, &back, NULL) != NSR_OK ||
	    back.n != want)
		abort();
	for (size_t i = 0, k = 0; i < l->n; i++) {
		if (nsr_res_nattrs(l->items[i]) == 0)
			continue;
		if (!same(l->items[i], back.items[k++]))
			abort();
	}
	nsr_res_list_release(&back);
	nsr_buf_release(&text);
}

/* mem_list - the backend's matching resources. */
static int mem_list(void *ctx, const struct nsr_res *q,
		    struct nsr_res_list *out, struct nsr_buf *why)
{
	struct nsr_res_list *l = ctx;

	NSR_UNUSED(why);
	for (size_t i = 0; i < l->n; i++) {
		struct nsr_res *c;

		if (!nsr_res_match(l->items[i], q))
			continue;
		c = nsr_res_dup(l->items[i]);
		if (!c || nsr_res_list_take(out, c) != NSR_OK)
			return NSR_ERR_NOMEM;
	}
	return NSR_OK;
}

/* mem_create - store a copy with an id (at most 64 resources). */
static int mem_create(void *ctx, const struct nsr_res *r, char **id,
		      struct nsr_buf *why)
{
	struct nsr_res_list *l = ctx;
	struct nsr_res *c;
	char buf[32];
	int rc;

	if (l->n >= 64) {
		nsr_buf_addstr(why, "full");
		return NSR_ERR_LIMIT;
	}
	c = nsr_res_dup(r);
	if (!c)
		return NSR_ERR_NOMEM;
	snprintf(buf, sizeof(buf), "%zu.0.0.0.0.0.0.0.0.0.0.0", l->n + 1);
	rc = nsr_res_set1(c, NSR_RES_ID_ATTR, buf);
	if (rc != NSR_OK) {
		nsr_res_free(c);
		return rc;
	}
	rc = nsr_res_list_take(l, c);
	if (rc == NSR_OK)
		*id = strdup(buf);
	return rc;
}

/* mem_find - index of id or -1. */
static long mem_find(struct nsr_res_list *l, const char *id)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(nsr_res_id(l->items[i]), id) == 0)
			return (long)i;
	return -1;
}

/* mem_update - replace a resource. */
static int mem_update(void *ctx, const char *id, const struct nsr_res *r,
		      struct nsr_buf *why)
{
	struct nsr_res_list *l = ctx;
	long i = mem_find(l, id);
	struct nsr_res *c;

	NSR_UNUSED(why);
	if (i < 0)
		return NSR_ERR_NOTFOUND;
	c = nsr_res_dup(r);
	if (!c)
		return NSR_ERR_NOMEM;
	nsr_res_free(l->items[i]);
	l->items[i] = c;
	return NSR_OK;
}

/* mem_remove - forget a resource (its slot keeps the last one). */
static int mem_remove(void *ctx, const char *id, struct nsr_buf *why)
{
	struct nsr_res_list *l = ctx;
	long i = mem_find(l, id);

	NSR_UNUSED(why);
	if (i < 0)
		return NSR_ERR_NOTFOUND;
	nsr_res_free(l->items[i]);
	l->items[i] = l->items[--l->n];
	return NSR_OK;
}

static const struct nsradmin_ops mem_ops = {
	mem_list, mem_create, mem_update, mem_remove, NULL,
};

/* sink - discard interpreter output, checking it is sane. */
static void sink(void *arg, enum nsradmin_stream s, const char *t, size_t n)
{
	NSR_UNUSED(arg);
	if ((s != NSRADMIN_OUT && s != NSRADMIN_ERR) || (n && !t))
		abort();
}

/* run_script - the input as nsradmin commands, one per line. */
static void run_script(const char *text)
{
	struct nsr_res_list store;
	struct nsradmin_opts o;
	struct nsradmin *a = NULL;
	char *copy = strdup(text), *line, *nl;

	nsr_res_list_init(&store);
	memset(&o, 0, sizeof(o));
	o.ops = &mem_ops;
	o.ctx = &store;
	o.write = sink;
	if (!copy || nsradmin_new(&o, &a) != NSR_OK)
		goto out;
	for (line = copy; line; line = nl) {
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = '\0';
		if (nsradmin_feed(a, line) == NSRADMIN_QUIT)
			break;
	}
out:
	nsradmin_free(a);
	nsr_res_list_release(&store);
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nsr_res_list l;
	struct nsr_res_error err;
	struct nsr_res *one = NULL;
	char *copy;

	nsr_res_list_init(&l);
	if (nsr_res_parse((const char *)data, size, &l, &err) == NSR_OK)
		check_roundtrip(&l);
	nsr_res_list_release(&l);

	copy = strndup((const char *)data, size);
	if (!copy)
		return 0;
	if (nsr_res_parse_attrs(copy, &one, &err) == NSR_OK) {
		nsr_res_list_init(&l);
		if (nsr_res_list_take(&l, one) == NSR_OK)
			check_roundtrip(&l);
		nsr_res_list_release(&l);
	}
	run_script(copy);
	free(copy);
	return 0;
}
