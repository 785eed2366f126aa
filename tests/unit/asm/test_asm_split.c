/*
 * test_asm_split.c - split files in the save stream (asm.h, version 7):
 * a head and its parts round trip with their fields, a master's version
 * 7 header has no PSS fields set, the encoder refuses split records it
 * was not told of and fields that break the rules, and the decoder
 * refuses the same when a record says them (CRC made right).
 */
#include "nsr/compat.h"

#include "nsr/asm.h"
#include "nsr/buf.h"
#include "nsr/bytes.h"
#include "nsr/crc32c.h"
#include "nsr/err.h"
#include "nsr_test.h"

#include "asm_util.h"

/* What the decoder passed on. */
struct seen {
	struct nsr_asm_dec *d;
	uint32_t version, master, index;
	int nfiles;
	struct nsr_asm_file f[4];
	uint64_t data[4];
	int ck_ok[4];
	int xattrs;
};

/* on_header - the version and the PSS fields. */
static int on_header(void *ctx, const struct nsr_asm_header *h)
{
	struct seen *g = ctx;

	g->version = h->version;
	return 0;
}

/* on_file - keep the record (strings are not kept). */
static int on_file(void *ctx, const struct nsr_asm_file *f, uint64_t off)
{
	struct seen *g = ctx;

	NSR_UNUSED(off);
	assert_true(g->nfiles < 4);
	g->f[g->nfiles] = *f;
	g->f[g->nfiles].path = g->f[g->nfiles].user = NULL;
	g->f[g->nfiles].group = g->f[g->nfiles].link = NULL;
	g->nfiles++;
	return 0;
}

/* on_data - count the current file's data. */
static int on_data(void *ctx, const void *p, size_t n)
{
	struct seen *g = ctx;

	NSR_UNUSED(p);
	g->data[g->nfiles - 1] += n;
	return 0;
}

/* on_xattr - count attributes. */
static int on_xattr(void *ctx, const char *name, const void *v, size_t n)
{
	NSR_UNUSED(name);
	NSR_UNUSED(v);
	NSR_UNUSED(n);
	((struct seen *)ctx)->xattrs++;
	return 0;
}

/* on_file_end - the checksum verdict. */
static int on_file_end(void *ctx, const struct nsr_asm_file_end *fe)
{
	struct seen *g = ctx;

	g->ck_ok[g->nfiles - 1] = fe->ck_ok;
	return 0;
}

static const struct nsr_asm_dec_ops ops = {
	.header = on_header,
	.file = on_file,
	.data = on_data,
	.xattr = on_xattr,
	.file_end = on_file_end,
};

/* reg - a regular file record of path. */
static struct nsr_asm_file reg(const char *path)
{
	struct nsr_asm_file f;

	memset(&f, 0, sizeof(f));
	f.type = NSR_ASM_REG;
	f.mode = 0640;
	f.nlink = 1;
	f.path = path;
	f.user = f.group = "";
	return f;
}

/* split_stream - a master-like stream (no PSS fields) holding the head
 * of /big (3 parts, 10,000 bytes) with one attribute and parts 2 and 3;
 * part 1 is elsewhere. */
static void split_stream(struct nsr_buf *s)
{
	struct nsr_asm_header h = {0, 0, 9, 1700000000, "c", "/sp"};
	struct nsr_asm_enc *e = NULL;
	struct nsr_asm_file f = reg("/big");
	uint8_t buf[4000];

	memset(buf, 'x', sizeof(buf));
	nsr_buf_reset(s);
	assert_int_equal(nsr_asm_enc_new(&e, NSR_ASM_CK_CRC32C, mem_sink, s),
			 NSR_OK);
	assert_int_equal(nsr_asm_enc_split(e), NSR_OK);
	assert_int_equal(nsr_asm_enc_header(e, &h), NSR_OK);
	f.nparts = 3;
	f.total = 10000;
	assert_int_equal(nsr_asm_enc_file(e, &f, NULL), NSR_OK);
	assert_int_equal(nsr_asm_enc_xattr(e, "user.a", "1", 1), NSR_OK);
	assert_int_equal(nsr_asm_enc_file_end(e, NSR_ASM_FILE_OK), NSR_OK);
	f.part = 2;
	f.part_off = 4000;
	f.size = 4000;
	assert_int_equal(nsr_asm_enc_file(e, &f, NULL), NSR_OK);
	/* a part carries no attributes: they are the head's */
	assert_int_equal(nsr_asm_enc_xattr(e, "user.a", "1", 1),
			 NSR_ERR_STATE);
	assert_int_equal(nsr_asm_enc_data(e, buf, 4000), NSR_OK);
	assert_int_equal(nsr_asm_enc_file_end(e, NSR_ASM_FILE_OK), NSR_OK);
	f.part = 3;
	f.part_off = 8000;
	f.size = 2000;
	assert_int_equal(nsr_asm_enc_file(e, &f, NULL), NSR_OK);
	assert_int_equal(nsr_asm_enc_data(e, buf, 2000), NSR_OK);
	assert_int_equal(nsr_asm_enc_file_end(e, NSR_ASM_FILE_OK), NSR_OK);
	assert_int_equal(nsr_asm_enc_end(e), NSR_OK);
	nsr_asm_enc_free(e);
}

/* test_round_trip - every field back, in pieces of any size. */
static void test_round_trip(void **state)
{
	struct nsr_buf s;

	NSR_UNUSED(state);
	nsr_buf_init(&s, 0);
	split_stream(&s);
	for (size_t step = 1; step < 200; step += 37) {
		struct seen g;

		memset(&g, 0, sizeof(g));
		assert_int_equal(decode_steps(&s, step, &ops, &g), NSR_OK);
		assert_int_equal(g.version, 7);
		assert_int_equal(g.nfiles, 3);
		assert_int_equal(g.xattrs, 1);
		assert_int_equal(g.f[0].part, 0);
		assert_int_equal(g.f[0].nparts, 3);
		assert_int_equal(g.f[0].total, 10000);
		assert_int_equal(g.f[0].size, 0);
		assert_int_equal(g.data[0], 0);
		assert_int_equal(g.f[1].part, 2);
		assert_int_equal(g.f[1].part_off, 4000);
		assert_int_equal(g.f[1].size, 4000);
		assert_int_equal(g.data[1], 4000);
		assert_int_equal(g.f[2].part, 3);
		assert_int_equal(g.f[2].part_off, 8000);
		assert_int_equal(g.data[2], 2000);
		assert_int_equal(g.f[2].mode, 0640);
		for (int i = 0; i < 3; i++)
			assert_int_equal(g.ck_ok[i], 1);
	}
	nsr_buf_release(&s);
}

/* test_encoder_refuses - split records in a stream not told of them,
 * and fields against the rules; nothing is written for them. */
static void test_encoder_refuses(void **state)
{
	struct nsr_asm_header h = {0, 0, 9, 1700000000, "c", "/sp"};
	struct nsr_buf s;
	struct nsr_asm_enc *e;
	struct nsr_asm_file f = reg("/big");
	struct {
		uint32_t part, nparts;
		uint64_t off, size, total;
		int type;
	} bad[] = {
		{0, 2, 0, 5, 10, NSR_ASM_REG},	/* a head with data */
		{0, 2, 3, 0, 10, NSR_ASM_REG},	/* a head with an offset */
		{0, 2, 0, 0, 0, NSR_ASM_REG},	/* no total */
		{3, 2, 0, 5, 10, NSR_ASM_REG},	/* part over nparts */
		{1, 2, 8, 5, 10, NSR_ASM_REG},	/* past the end */
		{1, 2, 10, 1, 10, NSR_ASM_REG}, /* starts at the end */
		{1, 2, 0, 0, 10, NSR_ASM_REG},	/* an empty part */
		{1, NSR_ASM_PARTS_MAX + 1, 0, 5, 10, NSR_ASM_REG},
		{0, 2, 0, 0, 10, NSR_ASM_DIR},	/* not a regular file */
		{1, 0, 0, 5, 10, NSR_ASM_REG},	/* a part of nothing */
	};

	NSR_UNUSED(state);
	nsr_buf_init(&s, 0);
	e = start_stream(&s, "/sp");
	assert_int_equal(nsr_asm_enc_split(e), NSR_ERR_STATE);
	f.nparts = 2;
	f.total = 10;
	assert_int_equal(nsr_asm_enc_file(e, &f, NULL), NSR_ERR_STATE);
	nsr_asm_enc_free(e);

	nsr_buf_reset(&s);
	assert_int_equal(nsr_asm_enc_new(&e, NSR_ASM_CK_CRC32C, mem_sink, &s),
			 NSR_OK);
	assert_int_equal(nsr_asm_enc_split(e), NSR_OK);
	assert_int_equal(nsr_asm_enc_header(e, &h), NSR_OK);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct nsr_asm_file b = reg("/big");

		b.type = bad[i].type;
		b.part = bad[i].part;
		b.nparts = bad[i].nparts;
		b.part_off = bad[i].off;
		b.size = bad[i].size;
		b.total = bad[i].total;
		if (b.type == NSR_ASM_DIR)
			b.size = 0;
		assert_int_equal(nsr_asm_enc_file(e, &b, NULL), NSR_ERR_INVAL);
	}
	nsr_asm_enc_free(e);
	nsr_buf_release(&s);
}

/* find_file - the n-th FILE record's frame in s. */
static uint8_t *find_file(struct nsr_buf *s, int n)
{
	size_t at = 0;

	while (at + NSR_ASM_FRAME_LEN <= s->len) {
		uint8_t *f = (uint8_t *)s->data + at;
		uint32_t len = nsr_get_u32(f + 4);

		if (f[0] == NSR_ASM_REC_FILE && n-- == 0)
			return f;
		at += NSR_ASM_FRAME_LEN + len;
	}
	fail_msg("no FILE record %d", n);
	return NULL;
}

/* refix - recompute a metadata record's CRC after an edit. */
static void refix(uint8_t *f)
{
	uint32_t len = nsr_get_u32(f + 4);
	uint32_t crc = nsr_crc32c(0, f, 8);

	crc = nsr_crc32c(crc, f + NSR_ASM_FRAME_LEN, len);
	nsr_put_u32(f + 8, crc);
}

/* test_decoder_refuses - edited records: part fields past the end,
 * part 0 marked a part, two flags at once, and split records in a
 * version 6 stream. */
static void test_decoder_refuses(void **state)
{
	struct nsr_buf s;

	NSR_UNUSED(state);
	nsr_buf_init(&s, 0);
	for (int which = 0; which < 5; which++) {
		uint8_t *f, *hdr;
		uint32_t len;
		struct seen g;

		split_stream(&s);
		f = find_file(&s, 1); /* part 2 */
		len = nsr_get_u32(f + 4);
		switch (which) {
		case 0: /* offset 9000: 4000 bytes run past 10,000 */
			nsr_put_u64(f + NSR_ASM_FRAME_LEN + len - 16, 9000);
			break;
		case 1: /* part 0 in a PART record */
			nsr_put_u32(f + NSR_ASM_FRAME_LEN + len - 24, 0);
			break;
		case 2: /* SPLIT and PART */
			f[NSR_ASM_FRAME_LEN + 1] |= NSR_ASM_FILE_SPLIT;
			break;
		case 3: /* a version 6 header (a dependent's) */
			hdr = (uint8_t *)s.data;
			nsr_put_u16(hdr + NSR_ASM_FRAME_LEN + 4, 6);
			len = nsr_get_u32(hdr + 4);
			nsr_put_u32(hdr + NSR_ASM_FRAME_LEN + len - 5, 7);
			hdr[NSR_ASM_FRAME_LEN + len - 1] = 1;
			refix(hdr);
			break;
		case 4: /* a master's fields half set */
			hdr = (uint8_t *)s.data;
			len = nsr_get_u32(hdr + 4);
			hdr[NSR_ASM_FRAME_LEN + len - 1] = 1;
			refix(hdr);
			break;
		}
		refix(f);
		memset(&g, 0, sizeof(g));
		assert_int_equal(decode_steps(&s, 4096, &ops, &g),
				 NSR_ERR_CORRUPT);
	}
	nsr_buf_release(&s);
}

/* main - run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_encoder_refuses),
		cmocka_unit_test(test_decoder_refuses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
