/*
 * cmp.h - the qsort(3) and bsearch(3) comparators of plain numbers,
 * ascending: one copy instead of one per file that sorts ids.
 */
#ifndef NSR_CMP_H
#define NSR_CMP_H

#include <stdint.h>

/* NSR_CMP - three-way order of two numbers of one type: -1, 0 or 1. */
#define NSR_CMP(a, b) (((a) > (b)) - ((a) < (b)))

/* nsr_cmp_u32 - order of two uint32_t. */
static inline int nsr_cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* nsr_cmp_u64 - order of two uint64_t. */
static inline int nsr_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* nsr_cmp_i64 - order of two int64_t. */
static inline int nsr_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

#endif /* NSR_CMP_H */
