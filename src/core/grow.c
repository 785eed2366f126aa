/*
 * grow.c - room in a growing array (grow.h).
 */
#include "nsr/compat.h"

#include <stdint.h>
#include <stdlib.h>

#include "nsr/err.h"
#include "nsr/grow.h"

/* nsr_grow - room for element n of *v: see grow.h. */
int nsr_grow(void **v, size_t n, size_t *cap, size_t size, size_t first)
{
	size_t nc = *cap ? *cap : first ? first : 1;
	void *nv;

	if (n < *cap)
		return NSR_OK;
	while (nc <= n) {
		if (nc > SIZE_MAX / 2)
			return NSR_ERR_NOMEM;
		nc *= 2;
	}
	if (nc == *cap || size == 0 || nc > SIZE_MAX / size)
		return NSR_ERR_NOMEM;
	nv = realloc(*v, nc * size);
	if (!nv)
		return NSR_ERR_NOMEM;
	*v = nv;
	*cap = nc;
	return NSR_OK;
}
