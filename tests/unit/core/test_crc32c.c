/*
 * test_crc32c.c - CRC-32C known answers; hardware and table paths agree.
 */
#include "nsr/compat.h"

#include "nsr/crc32c.h"
#include "nsr_test.h"

static void test_known_answers(void **state)
{
	uint8_t zeros[32] = {0}, ones[32];

	NSR_UNUSED(state);
	memset(ones, 0xff, sizeof(ones));
	/* RFC 3720 appendix B.4 test vectors. */
	assert_int_equal(nsr_crc32c(0, zeros, 32), 0x8A9136AA);
	assert_int_equal(nsr_crc32c(0, ones, 32), 0x62A8AB43);
	assert_int_equal(nsr_crc32c(0, "123456789", 9), 0xE3069283);
	assert_int_equal(nsr_crc32c(0, "", 0), 0);
}

static void test_incremental_and_unaligned(void **state)
{
	uint8_t buf[4099];
	uint32_t whole, part;

	NSR_UNUSED(state);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 31 + 7);
	for (size_t off = 0; off < 9; off++) {
		whole = nsr_crc32c(0, buf + off, sizeof(buf) - off);
		part = nsr_crc32c(0, buf + off, 1000);
		part = nsr_crc32c(part, buf + off + 1000,
				  sizeof(buf) - off - 1000);
		assert_int_equal(whole, part);
	}
}

static void test_copy_and_long_lanes(void **state)
{
	size_t n = 3 * 8192 * 2 + 3 * 256 + 13; /* every lane size and a tail */
	uint8_t *src = malloc(n + 8), *dst = malloc(n + 8);
	uint32_t a, b, soft;

	NSR_UNUSED(state);
	for (size_t i = 0; i < n + 8; i++)
		src[i] = (uint8_t)(i * 131 + (i >> 7));
	for (size_t off = 0; off < 8; off += 3) {
		a = nsr_crc32c(0, src + off, n);
		memset(dst, 0, n + 8);
		b = nsr_crc32c_copy(0, dst + off, src + off, n);
		assert_int_equal(a, b);
		assert_memory_equal(dst + off, src + off, n);
		/* Bit-by-bit reference over the same bytes. */
		soft = 0xffffffffu;
		for (size_t i = 0; i < n; i++) {
			soft ^= src[off + i];
			for (int k = 0; k < 8; k++)
				soft = (soft & 1) ? (soft >> 1) ^ 0x82F63B78u
						  : soft >> 1;
		}
		assert_int_equal(a, ~soft);
	}
	free(src);
	free(dst);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_answers),
		cmocka_unit_test(test_incremental_and_unaligned),
		cmocka_unit_test(test_copy_and_long_lanes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
