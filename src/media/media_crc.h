/*
 * media_crc.h - private to src/media: the three-lane CRC-32C used for
 * block and chunk checksums (crc.c).  Same values as nsr_crc32c().
 */
#ifndef NSR_MEDIA_CRC_H
#define NSR_MEDIA_CRC_H

#include <stddef.h>
#include <stdint.h>

/* media_crc32c - continue crc over len bytes (start with crc = 0). */
uint32_t media_crc32c(uint32_t crc, const void *p, size_t len);

/* media_crc32c_copy - copy len bytes src -> dst (not overlapping) and
 * continue crc over them in the same pass. */
uint32_t media_crc32c_copy(uint32_t crc, void *dst, const void *src,
			   size_t len);

#endif /* NSR_MEDIA_CRC_H */
