/*
 * res_int.h - the layout of a resource, shared by the files of src/admin
 * that implement res.h (res.c, res_parse.c, res_print.c, restypes.c).
 */
#ifndef NSR_ADMIN_RES_INT_H
#define NSR_ADMIN_RES_INT_H

#include <stddef.h>

struct res_attr {
	char *name;		/* spelling as first given, trimmed */
	char **values;
	size_t n, cap;
};

struct nsr_res {
	struct res_attr *attrs;
	size_t n, cap;
};

/* res_add_attr - append a new attribute with no values; returns its index
 * or a negative nsr_err code. */
long res_add_attr(struct nsr_res *r, const char *name, size_t namelen);
/* res_add_value - append a value (len bytes) to attribute i. */
int res_add_value(struct nsr_res *r, size_t i, const char *v, size_t len);
/* res_name_ok - 1 if name can be printed and parsed back unchanged. */
int res_name_ok(const char *name);

#endif /* NSR_ADMIN_RES_INT_H */
