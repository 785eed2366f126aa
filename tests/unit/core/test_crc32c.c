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
		part = nsr_crc32c(part, buf + off + 1000, sizeof(buf) - off - 1000);
		assert_int_equal(whole, part);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_answers),
		cmocka_unit_test(test_incremental_and_unaligned),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
