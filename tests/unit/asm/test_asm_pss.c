/*
 * test_asm_pss.c - the PSS fields of the save stream header (asm.h,
 * version 6): a dependent's master and stream index round trip, every
 * other stream stays version 4, encoder misuse, and a version 6 header
 * without a master or index is refused.
 */
#include "nsr/compat.h"

#include "nsr/asm.h"
#include "nsr/buf.h"
#include "nsr/bytes.h"
#include "nsr/crc32c.h"
#include "nsr/err.h"
#include "nsr_test.h"

#include "asm_util.h"

/* What the header callback saw, read through the decoder. */
struct got {
	struct nsr_asm_dec *d;
	uint32_t version, master, index;
};

/* on_header - the version, and the PSS fields the decoder kept. */
static int on_header(void *ctx, const struct nsr_asm_header *h)
{
	struct got *g = ctx;

	g->version = h->version;
	nsr_asm_dec_pss(g->d, &g->master, &g->index);
	return 0;
}

/* decode - the whole stream s; the decoder's verdict. */
static int decode(const struct nsr_buf *s, struct got *g)
{
	const struct nsr_asm_dec_ops ops = {.header = on_header};
	int rc;

	assert_int_equal(nsr_asm_dec_new(&g->d, &ops, g), NSR_OK);
	rc = nsr_asm_dec_feed(g->d, s->data, s->len);
	if (rc == NSR_OK)
		rc = nsr_asm_dec_finish(g->d);
	nsr_asm_dec_free(g->d);
	return rc;
}

/* stream - an empty save set's stream in s, of dependent index of
 * master (0: no PSS fields). */
static void stream(struct nsr_buf *s, uint32_t master, uint32_t index)
{
	struct nsr_asm_header h = {0, 0, 9, 1700000000, "c", "<2>/sp"};
	struct nsr_asm_enc *e = NULL;

	nsr_buf_reset(s);
	assert_int_equal(nsr_asm_enc_new(&e, NSR_ASM_CK_CRC32C, mem_sink, s),
			 NSR_OK);
	if (master)
		assert_int_equal(nsr_asm_enc_pss(e, master, index), NSR_OK);
	assert_int_equal(nsr_asm_enc_header(e, &h), NSR_OK);
	assert_int_equal(nsr_asm_enc_end(e), NSR_OK);
	nsr_asm_enc_free(e);
}

/* test_round_trip - version 6 with the fields, 4 without. */
static void test_round_trip(void **state)
{
	struct nsr_buf s;
	struct got g;

	NSR_UNUSED(state);
	nsr_buf_init(&s, 0);
	stream(&s, 4129018274u, 2);
	memset(&g, 0, sizeof(g));
	assert_int_equal(decode(&s, &g), NSR_OK);
	assert_int_equal(g.version, 6);
	assert_int_equal(g.master, 4129018274u);
	assert_int_equal(g.index, 2);
	stream(&s, 0, 0);
	memset(&g, 0, sizeof(g));
	assert_int_equal(decode(&s, &g), NSR_OK);
	assert_int_equal(g.version, 4);
	assert_int_equal(g.master, 0);
	assert_int_equal(g.index, 0);
	nsr_buf_release(&s);
}

/* test_misuse - no master, no index, an index over a byte, or after
 * the header. */
static void test_misuse(void **state)
{
	struct nsr_asm_header h = {0, 0, 9, 1700000000, "c", "/sp"};
	struct nsr_asm_enc *e = NULL;
	struct nsr_buf s;

	NSR_UNUSED(state);
	nsr_buf_init(&s, 0);
	assert_int_equal(nsr_asm_enc_new(&e, NSR_ASM_CK_CRC32C, mem_sink, &s),
			 NSR_OK);
	assert_int_equal(nsr_asm_enc_pss(e, 0, 1), NSR_ERR_INVAL);
	assert_int_equal(nsr_asm_enc_pss(e, 7, 0), NSR_ERR_INVAL);
	assert_int_equal(nsr_asm_enc_pss(e, 7, 256), NSR_ERR_INVAL);
	assert_int_equal(nsr_asm_enc_header(e, &h), NSR_OK);
	assert_int_equal(nsr_asm_enc_pss(e, 7, 1), NSR_ERR_STATE);
	nsr_asm_enc_free(e);
	nsr_buf_release(&s);
}

/* test_refused - a version 6 header whose master or index is 0 (CRC
 * made right), or that ends early, is corrupt. */
static void test_refused(void **state)
{
	struct nsr_buf s;
	struct got g;
	uint8_t *f;
	uint32_t len, crc;

	NSR_UNUSED(state);
	nsr_buf_init(&s, 0);
	for (int which = 0; which < 2; which++) {
		stream(&s, 77, 3);
		f = (uint8_t *)s.data; /* the HEADER's frame */
		len = nsr_get_u32(f + 4);
		if (which == 0)
			nsr_put_u32(f + NSR_ASM_FRAME_LEN + len - 5, 0);
		else
			f[NSR_ASM_FRAME_LEN + len - 1] = 0;
		crc = nsr_crc32c(0, f, 8);
		crc = nsr_crc32c(crc, f + NSR_ASM_FRAME_LEN, len);
		nsr_put_u32(f + 8, crc);
		memset(&g, 0, sizeof(g));
		assert_int_equal(decode(&s, &g), NSR_ERR_CORRUPT);
	}
	nsr_buf_release(&s);
}

/* main - run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_misuse),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
