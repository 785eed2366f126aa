/*
 * fuzz_res.c - nsradmin resource text (the resource database's on-disk
 * format and what nsradmin users type).  Whatever parses must print and
 * parse back to the same resources; nothing may crash.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
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
	free(copy);
	return 0;
}
