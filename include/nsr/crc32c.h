/*
 * crc32c.h - CRC-32C (Castagnoli), the checksum of volume blocks, chunks and
 * database pages.  Uses the SSE4.2 instruction (three lanes) when the CPU
 * has it and a table otherwise; both give the same result.
 */
#ifndef NSR_CRC32C_H
#define NSR_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* nsr_crc32c - continue crc over len bytes (start with crc = 0). */
uint32_t nsr_crc32c(uint32_t crc, const void *p, size_t len);
/* nsr_crc32c_copy - copy len bytes src -> dst (not overlapping) and
 * continue crc over them, in one pass over the data. */
uint32_t nsr_crc32c_copy(uint32_t crc, void *dst, const void *src, size_t len);

#endif /* NSR_CRC32C_H */
