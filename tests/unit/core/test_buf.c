/*
 * test_buf.c - nsr_buf and the bounded read cursor.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/bytes.h"
#include "nsr/err.h"
#include "nsr_test.h"

/* check_invariants - what buf.h promises after every operation. */
static void check_invariants(const struct nsr_buf *b)
{
	assert_non_null(b->data);
	assert_int_equal(b->data[b->len], '\0');
	if (b->max)
		assert_true(b->len <= b->max);
	if (b->cap)
		assert_true(b->len < b->cap);
}

static void test_add_and_format(void **state)
{
	struct nsr_buf b;

	NSR_UNUSED(state);
	nsr_buf_init(&b, 0);
	check_invariants(&b);
	assert_int_equal(b.len, 0);
	assert_int_equal(nsr_buf_addstr(&b, "volume"), NSR_OK);
	assert_int_equal(nsr_buf_addch(&b, '.'), NSR_OK);
	assert_int_equal(nsr_buf_addf(&b, "%03d", 7), NSR_OK);
	check_invariants(&b);
	assert_string_equal(b.data, "volume.007");
	for (int i = 0; i < 1000; i++)
		assert_int_equal(nsr_buf_addf(&b, "%d,", i), NSR_OK);
	check_invariants(&b);
	assert_true(b.len > 3000);
	nsr_buf_setlen(&b, 6);
	assert_string_equal(b.data, "volume");
	nsr_buf_reset(&b);
	check_invariants(&b);
	assert_int_equal(b.len, 0);
	nsr_buf_release(&b);
	check_invariants(&b);
}

static void test_max_is_hard(void **state)
{
	struct nsr_buf b;

	NSR_UNUSED(state);
	nsr_buf_init(&b, 8);
	assert_int_equal(nsr_buf_add(&b, "12345678", 8), NSR_OK);
	assert_int_equal(nsr_buf_addch(&b, '9'), NSR_ERR_TOOBIG);
	assert_string_equal(b.data, "12345678");
	nsr_buf_reset(&b);
	assert_int_equal(nsr_buf_addf(&b, "%s", "123456789"), NSR_ERR_TOOBIG);
	check_invariants(&b);
	assert_int_equal(b.len, 0);
	nsr_buf_release(&b);
}

static void test_detach(void **state)
{
	struct nsr_buf b;
	size_t len;
	char *p;

	NSR_UNUSED(state);
	nsr_buf_init(&b, 0);
	p = nsr_buf_detach(&b, &len);
	assert_string_equal(p, "");
	assert_int_equal(len, 0);
	free(p);
	nsr_buf_addstr(&b, "pool");
	p = nsr_buf_detach(&b, &len);
	assert_string_equal(p, "pool");
	assert_int_equal(len, 4);
	check_invariants(&b);
	assert_int_equal(b.len, 0);
	free(p);
}

static void test_rd_cursor(void **state)
{
	uint8_t enc[15];
	struct nsr_rd r;
	uint8_t tail[2];

	NSR_UNUSED(state);
	nsr_put_u16(enc, 0xBEEF);
	nsr_put_u32(enc + 2, 0xDEADBEEF);
	nsr_put_u64(enc + 6, 0x0102030405060708ull);
	enc[14] = 9;
	nsr_rd_init(&r, enc, sizeof(enc));
	assert_int_equal(nsr_rd_u16(&r), 0xBEEF);
	assert_int_equal(nsr_rd_u32(&r), 0xDEADBEEF);
	assert_true(nsr_rd_u64(&r) == 0x0102030405060708ull);
	assert_int_equal(nsr_rd_u8(&r), 9);
	assert_int_equal(nsr_rd_error(&r), NSR_OK);
	/* Past the end: error, zeroes, and the error sticks. */
	nsr_rd_bytes(&r, tail, sizeof(tail));
	assert_int_equal(tail[0], 0);
	assert_int_equal(nsr_rd_error(&r), NSR_ERR_TRUNCATED);
	nsr_rd_init(&r, enc, 3);
	assert_int_equal(nsr_rd_u32(&r), 0);
	assert_int_equal(nsr_rd_u8(&r), 0);
	assert_int_equal(nsr_rd_error(&r), NSR_ERR_TRUNCATED);
}

static void test_strerror(void **state)
{
	NSR_UNUSED(state);
	assert_string_equal(nsr_strerror(NSR_OK), "success");
	assert_string_equal(nsr_strerror(NSR_ERR_CHECKSUM),
			    "checksum mismatch");
	assert_string_equal(nsr_strerror(-999), "unknown error");
}

/* test_json_str - quotes, control characters, UTF-8 kept, invalid
 * UTF-8 replaced, NULL as null. */
static void test_json_str(void **state)
{
	struct nsr_buf b;

	NSR_UNUSED(state);
	nsr_buf_init(&b, 0);
	assert_int_equal(nsr_buf_add_json_str(&b, "a\"b\\c\n\x01\x7f"),
			 NSR_OK);
	assert_string_equal(b.data, "\"a\\\"b\\\\c\\n\\u0001\\u007f\"");
	nsr_buf_reset(&b);
	assert_int_equal(nsr_buf_add_json_str(&b, "caf\xc3\xa9 \xff\xc3"),
			 NSR_OK);
	assert_string_equal(b.data, "\"caf\xc3\xa9 \\ufffd\\ufffd\"");
	nsr_buf_reset(&b);
	assert_int_equal(nsr_buf_add_json_str(&b, NULL), NSR_OK);
	assert_string_equal(b.data, "null");
	nsr_buf_release(&b);
}

/* test_unnul - every NUL in the contents, and only those, becomes the
 * byte asked for; the terminator stays; an empty buffer is fine. */
static void test_unnul(void **state)
{
	struct nsr_buf b;

	NSR_UNUSED(state);
	nsr_buf_init(&b, 0);
	nsr_buf_unnul(&b, '\n');
	check_invariants(&b);
	assert_int_equal(nsr_buf_add(&b, "\0a 1\0\0b 2\0", 10), NSR_OK);
	nsr_buf_unnul(&b, '\n');
	check_invariants(&b);
	assert_int_equal(b.len, 10);
	assert_memory_equal(b.data, "\na 1\n\nb 2\n", 11);
	nsr_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_and_format),
		cmocka_unit_test(test_max_is_hard),
		cmocka_unit_test(test_detach),
		cmocka_unit_test(test_rd_cursor),
		cmocka_unit_test(test_strerror),
		cmocka_unit_test(test_json_str),
		cmocka_unit_test(test_unnul),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
