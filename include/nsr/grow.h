/*
 * grow.h - room in a growing array: the one copy of "if it is full,
 * double it" that arrays of records kept by count and capacity use.
 */
#ifndef NSR_GROW_H
#define NSR_GROW_H

#include <stddef.h>

/* nsr_grow - room for element n of the array *v of *cap elements of
 * size bytes: nothing when n < *cap, else *v reallocated to twice *cap
 * (at least first) elements.  NSR_OK, or NSR_ERR_NOMEM with *v and *cap
 * as they were (also when the size would overflow). */
int nsr_grow(void **v, size_t n, size_t *cap, size_t size, size_t first);

#endif /* NSR_GROW_H */
