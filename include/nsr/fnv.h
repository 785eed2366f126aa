/*
 * fnv.h - FNV-1a, 64 bits: the hash of the in-memory tables keyed by
 * names (nameix.h, nsrd's tallies and fair queue, the restore map,
 * nsrd's device cache keys).  Not for anything stored or
 * sent: those use CRC-32C (crc32c.h) or a MAC.
 */
#ifndef NSR_FNV_H
#define NSR_FNV_H

#include <stddef.h>
#include <stdint.h>

#define NSR_FNV1A_BASIS 14695981039346656037ull /* the offset basis */

/* nsr_fnv1a - continue h (start with NSR_FNV1A_BASIS) over n bytes. */
static inline uint64_t nsr_fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

/* nsr_fnv1a_str - the hash of a string (its bytes before the NUL). */
static inline uint64_t nsr_fnv1a_str(const char *s)
{
	uint64_t h = NSR_FNV1A_BASIS;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	return h;
}

#endif /* NSR_FNV_H */
