/*
 * crc32c.c - CRC-32C with a hardware path (SSE4.2, three interleaved
 * streams are not needed at our block sizes: one stream runs at several
 * GB/s) and a portable slicing-by-1 table fallback.
 */
#include "nsr/compat.h"

#include "nsr/crc32c.h"

#include <pthread.h>

static uint32_t crc_table[256];
static int crc_have_hw;
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

/* crc_init - build the table and probe the CPU once. */
static void crc_init(void)
{
	uint32_t i, j, c;

	for (i = 0; i < 256; i++) {
		c = i;
		for (j = 0; j < 8; j++)
			c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
		crc_table[i] = c;
	}
#if defined(__x86_64__) && defined(__GNUC__)
	__builtin_cpu_init();
	crc_have_hw = __builtin_cpu_supports("sse4.2");
	if (getenv("NSR_TEST_CRC_SOFT"))
		crc_have_hw = 0;
#endif
}

/* crc_soft - table-driven CRC-32C. */
static uint32_t crc_soft(uint32_t crc, const uint8_t *p, size_t len)
{
	while (len--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

#if defined(__x86_64__) && defined(__GNUC__)
/* crc_hw - SSE4.2 CRC-32C, 8 bytes per instruction. */
__attribute__((target("sse4.2"))) static uint32_t
crc_hw(uint32_t crc, const uint8_t *p, size_t len)
{
	uint64_t c = crc, v;

	while (len && ((uintptr_t)p & 7)) {
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
		len--;
	}
	while (len >= 8) {
		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
		p += 8;
		len -= 8;
	}
	while (len--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return (uint32_t)c;
}
#endif

/* nsr_crc32c - continue a CRC-32C over len bytes. */
uint32_t nsr_crc32c(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	pthread_once(&crc_once, crc_init);
	crc = ~crc;
#if defined(__x86_64__) && defined(__GNUC__)
	if (crc_have_hw)
		return ~crc_hw(crc, p, len);
#endif
	return ~crc_soft(crc, p, len);
}
