/*
 * test_asm_unsized.c - files of unsized data in the save stream (asm.h,
 * version 4: save --pipe): round trip whole and in pieces, the size given
 * by FILE_END, encoder misuse, and hand-patched records the decoder must
 * refuse (unknown flags, the flag on a directory or with a size, in an
 * older version, a wrong total).
 */
#include "nsr/compat.h"

#include "nsr/asm.h"
#include "nsr/buf.h"
#include "nsr/bytes.h"
#include "nsr/crc32c.h"
#include "nsr/err.h"
#include "nsr_test.h"

#include "asm_util.h"

/* What the decoder reported. */
struct seen {
	int unsized;
	uint64_t file_size; /* as FILE said */
	uint64_t data;	    /* DATA plus HOLE bytes */
	uint64_t end_bytes; /* as FILE_END said */
	int ck_ok;
	uint32_t sum; /* CRC-32C of the data (holes as zeros) */
};

/* on_file - remember what FILE said. */
static int on_file(void *ctx, const struct nsr_asm_file *f, uint64_t off)
{
	struct seen *s = ctx;

	NSR_UNUSED(off);
	s->unsized = f->unsized;
	s->file_size = f->size;
	return 0;
}

/* on_data - count and checksum the data. */
static int on_data(void *ctx, const void *p, size_t n)
{
	struct seen *s = ctx;

	s->data += n;
	s->sum = nsr_crc32c(s->sum, p, n);
	return 0;
}

/* on_hole - count a hole as zeros. */
static int on_hole(void *ctx, uint64_t len)
{
	static const uint8_t zero[4096];
	struct seen *s = ctx;

	s->data += len;
	for (uint64_t i = 0; i < len; i += sizeof(zero))
		s->sum = nsr_crc32c(s->sum, zero,
				    (size_t)NSR_MIN(len - i, sizeof(zero)));
	return 0;
}

/* on_file_end - remember the total and the verdict. */
static int on_file_end(void *ctx, const struct nsr_asm_file_end *fe)
{
	struct seen *s = ctx;

	s->end_bytes = fe->bytes;
	s->ck_ok = fe->ck_ok;
	return 0;
}

static const struct nsr_asm_dec_ops ops = {
	.file = on_file,
	.data = on_data,
	.hole = on_hole,
	.file_end = on_file_end,
};

/* decode - feed s in pieces of step bytes; the first error or finish. */
static int decode(const struct nsr_buf *s, size_t step, struct seen *out)
{
	memset(out, 0, sizeof(*out));
	return decode_steps(s, step, &ops, out);
}

/* start - an encoder on s with the header written. */
static struct nsr_asm_enc *start(struct nsr_buf *s)
{
	return start_stream(s, "/PIPE/x");
}

/* file - begin a FILE record of type at path, unsized or of size. */
static int file(struct nsr_asm_enc *e, int type, int unsized, uint64_t size)
{
	struct nsr_asm_file f;

	memset(&f, 0, sizeof(f));
	f.type = type;
	f.mode = 0600;
	f.nlink = 1;
	f.path = "/PIPE/x";
	f.user = "";
	f.group = "";
	f.unsized = unsized;
	f.size = size;
	return nsr_asm_enc_file(e, &f, NULL);
}

/* piped - a stream of one unsized file: n bytes of a pattern written in
 * pieces of 5000 (so DATA records of several sizes), a 8 KB hole in the
 * middle; *sum gets the data's CRC-32C. */
static void piped(struct nsr_buf *s, size_t n, uint32_t *sum)
{
	static const uint8_t zero[8192];
	struct nsr_asm_enc *e = start(s);
	uint8_t piece[5000];

	*sum = 0;
	assert_int_equal(file(e, NSR_ASM_REG, 1, 0), NSR_OK);
	for (size_t done = 0; done < n;) {
		size_t k = NSR_MIN(sizeof(piece), n - done);

		for (size_t i = 0; i < k; i++)
			piece[i] = (uint8_t)((done + i) * 7 + 1);
		assert_int_equal(nsr_asm_enc_data(e, piece, k), NSR_OK);
		*sum = nsr_crc32c(*sum, piece, k);
		done += k;
		if (done >= n / 2 && done - k < n / 2) {
			assert_int_equal(nsr_asm_enc_hole(e, sizeof(zero)),
					 NSR_OK);
			*sum = nsr_crc32c(*sum, zero, sizeof(zero));
		}
	}
	assert_int_equal(nsr_asm_enc_file_end(e, NSR_ASM_FILE_OK), NSR_OK);
	assert_int_equal(nsr_asm_enc_end(e), NSR_OK);
	nsr_asm_enc_free(e);
}

/* record_at - the stream offset of the nth record of type (0 = first),
 * walking the frames; fails the test if there is none. */
static size_t record_at(const struct nsr_buf *s, int type, int nth)
{
	const uint8_t *p = (const uint8_t *)s->data;

	for (size_t at = 0; at + NSR_ASM_FRAME_LEN <= s->len;
	     at += NSR_ASM_FRAME_LEN + nsr_get_u32(p + at + 4))
		if (p[at] == type && nth-- == 0)
			return at;
	fail_msg("no record of type %d", type);
	return 0;
}

/* test_round_trip - the data and its total come back, in any pieces. */
static void test_round_trip(void **state)
{
	static const size_t steps[] = {1, 3, 12, 4096, 1u << 20};
	struct nsr_buf s;
	struct seen got;
	uint32_t sum;

	NSR_UNUSED(state);
	nsr_buf_init(&s, 0);
	piped(&s, 60000, &sum);
	for (size_t i = 0; i < NSR_ARRAY_SIZE(steps); i++) {
		assert_int_equal(decode(&s, steps[i], &got), NSR_OK);
		assert_int_equal(got.unsized, 1);
		assert_int_equal(got.file_size, 0);
		assert_int_equal(got.data, 60000 + 8192);
		assert_int_equal(got.end_bytes, 60000 + 8192);
		assert_int_equal(got.ck_ok, 1);
		assert_int_equal(got.sum, sum);
	}
	/* More than one DATA record's worth, and nothing at all. */
	piped(&s, 3u << 20, &sum);
	assert_int_equal(decode(&s, 65536, &got), NSR_OK);
	assert_int_equal(got.end_bytes, (3u << 20) + 8192);
	assert_int_equal(got.sum, sum);
	piped(&s, 0, &sum);
	assert_int_equal(decode(&s, 1, &got), NSR_OK);
	assert_int_equal(got.unsized, 1);
	assert_int_equal(got.end_bytes, 0); /* an empty output */
	/* Cut before the terminator: truncated, not complete. */
	s.len = record_at(&s, NSR_ASM_REC_FILE_END, 0);
	assert_int_equal(decode(&s, 1, &got), NSR_ERR_TRUNCATED);
	nsr_buf_release(&s);
}

/* test_encoder_misuse - only a regular file of size 0 is unsized. */
static void test_encoder_misuse(void **state)
{
	struct nsr_buf s;
	struct nsr_asm_enc *e;

	NSR_UNUSED(state);
	nsr_buf_init(&s, 0);
	e = start(&s);
	assert_int_equal(file(e, NSR_ASM_REG, 1, 10), NSR_ERR_INVAL);
	assert_int_equal(file(e, NSR_ASM_DIR, 1, 0), NSR_ERR_INVAL);
	/* A sized file still may not run over its size. */
	assert_int_equal(file(e, NSR_ASM_REG, 0, 2), NSR_OK);
	assert_int_equal(nsr_asm_enc_data(e, "abc", 3), NSR_ERR_INVAL);
	assert_int_equal(nsr_asm_enc_data(e, "ab", 2), NSR_OK);
	assert_int_equal(nsr_asm_enc_file_end(e, NSR_ASM_FILE_OK), NSR_OK);
	nsr_asm_enc_free(e);
	nsr_buf_release(&s);
}

/* recrc - make the CRC of the metadata record at `at` match again. */
static void recrc(struct nsr_buf *s, size_t at)
{
	uint8_t *p = (uint8_t *)s->data + at;
	uint32_t len = nsr_get_u32(p + 4);

	nsr_put_u32(p + 8, nsr_crc32c(nsr_crc32c(0, p, 8),
				      p + NSR_ASM_FRAME_LEN, len));
}

/* patched - a piped stream with byte off of record (type, nth) set to
 * v (CRC fixed); the decoder's verdict. */
static int patched(int type, int nth, size_t off, uint8_t v)
{
	struct nsr_buf s;
	struct seen got;
	uint32_t sum;
	size_t at;
	int rc;

	nsr_buf_init(&s, 0);
	piped(&s, 3000, &sum);
	at = record_at(&s, type, nth);
	((uint8_t *)s.data)[at + NSR_ASM_FRAME_LEN + off] = v;
	recrc(&s, at);
	rc = decode(&s, 7, &got);
	nsr_buf_release(&s);
	return rc;
}

/* test_decoder_refuses - flags, placement, versions and totals. */
static void test_decoder_refuses(void **state)
{
	NSR_UNUSED(state);
	/* unchanged: fine */
	assert_int_equal(patched(NSR_ASM_REC_FILE, 0, 1, 1), NSR_OK);
	/* unknown flags */
	assert_int_equal(patched(NSR_ASM_REC_FILE, 0, 1, 3), NSR_ERR_CORRUPT);
	assert_int_equal(patched(NSR_ASM_REC_FILE, 0, 1, 0x80),
			 NSR_ERR_CORRUPT);
	/* not unsized: the data runs over size 0 */
	assert_int_equal(patched(NSR_ASM_REC_FILE, 0, 1, 0), NSR_ERR_CORRUPT);
	/* the flag on a directory */
	assert_int_equal(patched(NSR_ASM_REC_FILE, 0, 0, NSR_ASM_DIR),
			 NSR_ERR_CORRUPT);
	/* the flag with a size (FILE: size at 20..27) */
	assert_int_equal(patched(NSR_ASM_REC_FILE, 0, 27, 1),
			 NSR_ERR_CORRUPT);
	/* FILE_END's total (at 4..11) one more, or one less */
	assert_int_equal(patched(NSR_ASM_REC_FILE_END, 0, 11,
				 (3000 + 8192 + 1) & 0xff),
			 NSR_ERR_CORRUPT);
	assert_int_equal(patched(NSR_ASM_REC_FILE_END, 0, 11,
				 (3000 + 8192 - 1) & 0xff),
			 NSR_ERR_CORRUPT);
	/* END's byte total (at 8..15) */
	assert_int_equal(patched(NSR_ASM_REC_END, 0, 15, 0), NSR_ERR_CORRUPT);
	/* older versions have no unsized files (HEADER: version at 4..5) */
	for (uint8_t v = 1; v <= 3; v++)
		assert_int_equal(patched(NSR_ASM_REC_HEADER, 0, 5, v),
				 NSR_ERR_CORRUPT);
	/* version 5 (SEALED records) is read; versions 6 and 7 need the
	 * PSS fields (test_asm_pss, test_asm_split), and a newer one is
	 * not read */
	assert_int_equal(patched(NSR_ASM_REC_HEADER, 0, 5, 6),
			 NSR_ERR_CORRUPT);
	assert_int_equal(patched(NSR_ASM_REC_HEADER, 0, 5, 7),
			 NSR_ERR_CORRUPT);
	assert_int_equal(patched(NSR_ASM_REC_HEADER, 0, 5, 8),
			 NSR_ERR_UNSUPPORTED);
}

/* main - run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_encoder_misuse),
		cmocka_unit_test(test_decoder_refuses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
