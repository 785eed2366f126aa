/*
 * test_asm_sealed.c - encryption at rest in the save stream (crypt.h,
 * SEALED records, version 5): key derivation and ids, round trips with
 * AES-256-GCM and zlib fed whole and in pieces, the compression ratio on
 * compressible data, a wrong key, an unknown key (no data passed on, the
 * file's FILE_END says nokey), tampered bytes anywhere in a record
 * (NSR_ERR_CHECKSUM; another key id in one record: NSR_ERR_CORRUPT; with
 * resync the file is abandoned), data in clear among encrypted data
 * refused, and a SEALED record in an older version refused.
 */
#include "nsr/compat.h"

#include "nsr/asm.h"
#include "nsr/buf.h"
#include "nsr/bytes.h"
#include "nsr/crc32c.h"
#include "nsr/crypt.h"
#include "nsr/err.h"
#include "nsr_test.h"

#include "asm_util.h"

#define BIG ((size_t)3 * 1024 * 1024 + 4321)

/* What the decoder saw. */
struct seen {
	struct nsr_buf data;  /* the data passed on, holes as zeros */
	int files, ends, ck_ok, nokey, damaged, asked;
	uint8_t nokey_id[8];
	const struct nsr_crypt_key *key; /* the key lookup's answer */
};

/* on_file - count files. */
static int on_file(void *ctx, const struct nsr_asm_file *f, uint64_t off)
{
	struct seen *s = ctx;

	NSR_UNUSED(f);
	NSR_UNUSED(off);
	s->files++;
	return 0;
}

/* on_data - keep the data. */
static int on_data(void *ctx, const void *p, size_t n)
{
	struct seen *s = ctx;

	return nsr_buf_add(&s->data, p, n);
}

/* on_hole - zeros. */
static int on_hole(void *ctx, uint64_t len)
{
	struct seen *s = ctx;

	for (uint64_t i = 0; i < len; i++)
		nsr_buf_addch(&s->data, 0);
	return 0;
}

/* on_file_end - count checksums that matched and files without keys. */
static int on_file_end(void *ctx, const struct nsr_asm_file_end *fe)
{
	struct seen *s = ctx;

	s->ends++;
	s->ck_ok += fe->ck_ok;
	if (fe->nokey) {
		s->nokey++;
		memcpy(s->nokey_id, fe->key_id, 8);
	}
	return 0;
}

/* on_damaged - count damage. */
static int on_damaged(void *ctx, uint64_t offset, int why)
{
	struct seen *s = ctx;

	NSR_UNUSED(offset);
	NSR_UNUSED(why);
	s->damaged++;
	return 0;
}

/* on_key - the test's key, if its id is the one asked for. */
static int on_key(void *ctx, const uint8_t *id, uint8_t *key)
{
	struct seen *s = ctx;

	s->asked++;
	if (s->key == NULL || memcmp(id, s->key->id, 8) != 0)
		return -1;
	memcpy(key, s->key->key, 32);
	return 0;
}

static const struct nsr_asm_dec_ops ops = {
	.file = on_file,
	.data = on_data,
	.hole = on_hole,
	.file_end = on_file_end,
	.damaged = on_damaged,
	.key = on_key,
};

/* pattern - compressible bytes: text lines with a counter. */
static uint8_t *pattern(size_t n)
{
	uint8_t *p = malloc(n);
	size_t i = 0;
	unsigned line = 0;

	assert_non_null(p);
	while (i < n) {
		char l[64];
		int k = snprintf(l, sizeof(l), "line %08u of the sample\n",
				 line++);

		for (int j = 0; j < k && i < n; j++)
			p[i++] = (uint8_t)l[j];
	}
	return p;
}

/* sealed_stream - a stream of one directory and one file holding
 * data[0..n), a hole and a tail, transformed by x. */
static void sealed_stream(struct nsr_buf *s, const struct nsr_asm_xform *x,
			  const uint8_t *data, size_t n)
{
	struct nsr_asm_header h = {0, 0, 7, 1700000000, "c", "/s"};
	struct nsr_asm_enc *e = NULL;
	struct nsr_asm_file f;

	nsr_buf_reset(s);
	assert_int_equal(nsr_asm_enc_new(&e, NSR_ASM_CK_SHA256, mem_sink, s),
			 NSR_OK);
	if (x)
		assert_int_equal(nsr_asm_enc_xform(e, x), NSR_OK);
	assert_int_equal(nsr_asm_enc_header(e, &h), NSR_OK);
	memset(&f, 0, sizeof(f));
	f.type = NSR_ASM_DIR;
	f.path = "/s";
	f.mode = 0755;
	assert_int_equal(nsr_asm_enc_file(e, &f, NULL), NSR_OK);
	assert_int_equal(nsr_asm_enc_file_end(e, NSR_ASM_FILE_OK), NSR_OK);
	f.type = NSR_ASM_REG;
	f.path = "/s/file";
	f.mode = 0644;
	f.size = n + 5000 + 7;
	assert_int_equal(nsr_asm_enc_file(e, &f, NULL), NSR_OK);
	/* in uneven pieces, some over a record */
	for (size_t i = 0, k = 1; i < n; i += k, k = k * 3 + 17)
		assert_int_equal(nsr_asm_enc_data(e, data + i,
						  NSR_MIN(k, n - i)), NSR_OK);
	assert_int_equal(nsr_asm_enc_hole(e, 5000), NSR_OK);
	assert_int_equal(nsr_asm_enc_data(e, "the end", 7), NSR_OK);
	assert_int_equal(nsr_asm_enc_file_end(e, NSR_ASM_FILE_OK), NSR_OK);
	assert_int_equal(nsr_asm_enc_end(e), NSR_OK);
	/* a transform only before the header */
	assert_int_equal(nsr_asm_enc_xform(e, x), NSR_ERR_STATE);
	nsr_asm_enc_free(e);
}

/* check_data - what was passed on is the file's data. */
static void check_data(const struct seen *s, const uint8_t *data, size_t n)
{
	assert_int_equal(s->data.len, n + 5000 + 7);
	assert_memory_equal(s->data.data, data, n);
	for (size_t i = n; i < n + 5000; i++)
		assert_int_equal(((const uint8_t *)s->data.data)[i], 0);
	assert_memory_equal((const char *)s->data.data + n + 5000,
			    "the end", 7);
}

/* find - does hay hold needle? */
static int find(const struct nsr_buf *hay, const void *needle, size_t n)
{
	return memmem(hay->data, hay->len, needle, n) != NULL;
}

/* test_derive - pass phrases to keys and ids. */
static void test_derive(void **state)
{
	struct nsr_crypt_key a, b, c;
	char hex[NSR_CRYPT_ID_HEX];
	uint8_t id[8];

	NSR_UNUSED(state);
	assert_int_equal(nsr_crypt_derive("correct horse", &a), NSR_OK);
	assert_int_equal(nsr_crypt_derive("correct horse", &b), NSR_OK);
	assert_int_equal(nsr_crypt_derive("correct horsf", &c), NSR_OK);
	assert_memory_equal(&a, &b, sizeof(a));
	assert_memory_not_equal(a.key, c.key, 32);
	assert_memory_not_equal(a.id, c.id, 8);
	nsr_crypt_id_hex(a.id, hex);
	assert_int_equal(strlen(hex), 16);
	assert_int_equal(nsr_crypt_id_parse(hex, id), NSR_OK);
	assert_memory_equal(id, a.id, 8);
	assert_int_equal(nsr_crypt_id_parse("12345", id), NSR_ERR_SYNTAX);
	assert_int_equal(nsr_crypt_id_parse("zz345678901234ab", id),
			 NSR_ERR_SYNTAX);
	assert_int_equal(nsr_crypt_derive("", &c), NSR_ERR_INVAL);
	assert_int_equal(nsr_crypt_derive("two\nlines", &c), NSR_ERR_INVAL);
}

/* test_roundtrip - encrypted and compressed, whole and in pieces. */
static void test_roundtrip(void **state)
{
	struct nsr_crypt_key k;
	struct nsr_asm_xform x = {6, NULL, NULL};
	struct nsr_buf s;
	uint8_t *data = pattern(BIG);
	static const size_t steps[] = {BIG * 2, 65536, 4099, 977};

	NSR_UNUSED(state);
	assert_int_equal(nsr_crypt_derive("pass phrase one", &k), NSR_OK);
	x.key = k.key;
	x.key_id = k.id;
	nsr_buf_init(&s, 0);
	sealed_stream(&s, &x, data, BIG);
	/* the data is not in the stream in clear */
	assert_false(find(&s, "line 00001234 of the sample", 27));
	assert_false(find(&s, "the end", 7));
	/* the version says SEALED records may come */
	assert_int_equal(nsr_get_u16((uint8_t *)s.data + 16), 5);
	for (size_t i = 0; i < NSR_ARRAY_SIZE(steps); i++) {
		struct seen v;

		memset(&v, 0, sizeof(v));
		nsr_buf_init(&v.data, 0);
		v.key = &k;
		assert_int_equal(decode_steps(&s, steps[i], &ops, &v), NSR_OK);
		assert_int_equal(v.files, 2);
		assert_int_equal(v.ck_ok, 2);
		assert_int_equal(v.nokey, 0);
		assert_int_equal(v.asked, 1); /* once per id */
		check_data(&v, data, BIG);
		nsr_buf_release(&v.data);
	}
	nsr_buf_release(&s);
	free(data);
}

/* test_compress_ratio - compression alone: smaller, no key needed; and
 * random data is stored as it was. */
static void test_compress_ratio(void **state)
{
	struct nsr_asm_xform x = {1, NULL, NULL};
	struct nsr_buf s;
	struct seen v;
	uint8_t *data = pattern(BIG);

	NSR_UNUSED(state);
	nsr_buf_init(&s, 0);
	sealed_stream(&s, &x, data, BIG);
	assert_true(s.len * 4 < BIG); /* text-like data: at least 4:1 */
	memset(&v, 0, sizeof(v));
	nsr_buf_init(&v.data, 0);
	assert_int_equal(decode_steps(&s, 100000, &ops, &v), NSR_OK);
	check_data(&v, data, BIG);
	assert_int_equal(v.ck_ok, 2);
	assert_int_equal(v.asked, 0);
	nsr_buf_release(&v.data);

	/* incompressible data: plain DATA records, no larger */
	assert_int_equal(nsr_crypt_random(data, BIG), NSR_OK);
	sealed_stream(&s, &x, data, BIG);
	assert_true(s.len < BIG + 5000);
	memset(&v, 0, sizeof(v));
	nsr_buf_init(&v.data, 0);
	assert_int_equal(decode_steps(&s, 100000, &ops, &v), NSR_OK);
	check_data(&v, data, BIG);
	nsr_buf_release(&v.data);
	nsr_buf_release(&s);
	free(data);
}

/* test_wrong_key - a key the decoder does not have: nothing passed on,
 * nokey with the id; a lookup answering with a wrong key: the tag fails. */
static void test_wrong_key(void **state)
{
	struct nsr_crypt_key k, other;
	struct nsr_asm_xform x = {0, NULL, NULL};
	struct nsr_buf s;
	struct seen v;
	uint8_t *data = pattern(BIG);

	NSR_UNUSED(state);
	assert_int_equal(nsr_crypt_derive("the right one", &k), NSR_OK);
	assert_int_equal(nsr_crypt_derive("another one", &other), NSR_OK);
	x.key = k.key;
	x.key_id = k.id;
	nsr_buf_init(&s, 0);
	sealed_stream(&s, &x, data, BIG);

	memset(&v, 0, sizeof(v));
	nsr_buf_init(&v.data, 0);
	v.key = &other;
	assert_int_equal(decode_steps(&s, 65536, &ops, &v), NSR_OK);
	assert_int_equal(v.ends, 2);
	assert_int_equal(v.nokey, 1);
	assert_memory_equal(v.nokey_id, k.id, 8);
	assert_int_equal(v.data.len, 5000); /* the hole only */
	assert_int_equal(v.ck_ok, 1);	    /* the directory */
	nsr_buf_release(&v.data);

	/* no key callback at all (scanner, nsrinfo): the same */
	memset(&v, 0, sizeof(v));
	nsr_buf_init(&v.data, 0);
	{
		struct nsr_asm_dec_ops o = ops;

		o.key = NULL;
		assert_int_equal(decode_steps(&s, 65536, &o, &v), NSR_OK);
	}
	assert_int_equal(v.nokey, 1);
	assert_int_equal(v.data.len, 5000);
	nsr_buf_release(&v.data);

	/* a lookup that claims the id but gives another key */
	memcpy(other.id, k.id, 8);
	memset(&v, 0, sizeof(v));
	nsr_buf_init(&v.data, 0);
	v.key = &other;
	assert_int_equal(decode_steps(&s, 65536, &ops, &v), NSR_ERR_CHECKSUM);
	assert_int_equal(v.data.len, 0);
	nsr_buf_release(&v.data);
	nsr_buf_release(&s);
	free(data);
}

/* first_sealed - offset of the first SEALED record's frame. */
static size_t first_sealed(const struct nsr_buf *s)
{
	const uint8_t *p = (const uint8_t *)s->data;
	size_t off = 0;

	while (off + NSR_ASM_FRAME_LEN <= s->len) {
		if (p[off] == NSR_ASM_REC_SEALED)
			return off;
		off += NSR_ASM_FRAME_LEN + nsr_get_u32(p + off + 4);
	}
	fail();
	return 0;
}

/* test_tampered - one byte changed in the header (additional data), the
 * nonce, the body or the tag: NSR_ERR_CHECKSUM and no data; with resync
 * the file is abandoned and the stream ends as damaged. */
static void test_tampered(void **state)
{
	struct nsr_crypt_key k;
	struct nsr_asm_xform x = {1, NULL, NULL};
	struct nsr_buf s;
	uint8_t *data = pattern(BIG);
	size_t rec, where[4];

	NSR_UNUSED(state);
	assert_int_equal(nsr_crypt_derive("tamper", &k), NSR_OK);
	x.key = k.key;
	x.key_id = k.id;
	nsr_buf_init(&s, 0);
	sealed_stream(&s, &x, data, BIG);
	rec = first_sealed(&s);
	where[0] = rec + NSR_ASM_FRAME_LEN + 10;	/* key id: unknown */
	where[1] = rec + NSR_ASM_FRAME_LEN + 20;	/* nonce */
	where[2] = rec + NSR_ASM_FRAME_LEN + 100;	/* body */
	where[3] = rec + NSR_ASM_FRAME_LEN +
		   nsr_get_u32((uint8_t *)s.data + rec + 4) - 1; /* tag */
	for (size_t i = 0; i < NSR_ARRAY_SIZE(where); i++) {
		struct seen v;
		struct nsr_asm_dec *d = NULL;
		int rc;

		((uint8_t *)s.data)[where[i]] ^= 0x40;
		memset(&v, 0, sizeof(v));
		nsr_buf_init(&v.data, 0);
		v.key = &k;
		rc = decode_steps(&s, 65536, &ops, &v);
		/* another id in one record: not what an encoder writes */
		assert_int_equal(rc, i == 0 ? NSR_ERR_CORRUPT
					    : NSR_ERR_CHECKSUM);
		assert_int_equal(v.data.len, 0);
		nsr_buf_release(&v.data);

		/* resync: the damaged file is abandoned, nothing of it out */
		memset(&v, 0, sizeof(v));
		nsr_buf_init(&v.data, 0);
		v.key = &k;
		assert_int_equal(nsr_asm_dec_new(&d, &ops, &v), NSR_OK);
		nsr_asm_dec_resync(d, 1);
		rc = nsr_asm_dec_feed(d, s.data, s.len);
		if (rc == NSR_OK)
			rc = nsr_asm_dec_finish(d);
		nsr_asm_dec_free(d);
		assert_int_equal(rc, NSR_ERR_CORRUPT);
		assert_int_equal(v.damaged, 1);
		assert_int_equal(v.data.len, 0);
		assert_int_equal(v.ends, 1); /* the directory */
		nsr_buf_release(&v.data);
		((uint8_t *)s.data)[where[i]] ^= 0x40;
	}
	nsr_buf_release(&s);
	free(data);
}

/* test_old_version - a SEALED record in a version 4 stream is refused. */
static void test_old_version(void **state)
{
	struct nsr_asm_xform x = {1, NULL, NULL};
	struct nsr_buf s;
	struct seen v;
	uint8_t *data = pattern(100000), *p;
	uint32_t len, crc;

	NSR_UNUSED(state);
	nsr_buf_init(&s, 0);
	sealed_stream(&s, &x, data, 100000);
	p = (uint8_t *)s.data;
	nsr_put_u16(p + 16, 4);
	len = nsr_get_u32(p + 4);
	crc = nsr_crc32c(0, p, 8);
	nsr_put_u32(p + 8, nsr_crc32c(crc, p + NSR_ASM_FRAME_LEN, len));
	memset(&v, 0, sizeof(v));
	nsr_buf_init(&v.data, 0);
	assert_int_equal(decode_steps(&s, 4096, &ops, &v), NSR_ERR_CORRUPT);
	assert_int_equal(v.data.len, 0);
	nsr_buf_release(&v.data);
	nsr_buf_release(&s);
	free(data);
}

/* test_mixed - a DATA record in an encrypted stream (a record in clear
 * put in place of an encrypted one) is refused. */
static void test_mixed(void **state)
{
	struct nsr_crypt_key k;
	struct nsr_asm_xform x = {0, NULL, NULL};
	struct nsr_buf s, plain;
	struct seen v;
	uint8_t *data = pattern(100000), *p;
	size_t rec, prec;

	NSR_UNUSED(state);
	assert_int_equal(nsr_crypt_derive("mixed", &k), NSR_OK);
	x.key = k.key;
	x.key_id = k.id;
	nsr_buf_init(&s, 0);
	nsr_buf_init(&plain, 0);
	sealed_stream(&s, &x, data, 100000);
	sealed_stream(&plain, NULL, data, 100000);
	/* the plain stream's first DATA record where the SEALED one was */
	rec = first_sealed(&s);
	p = (uint8_t *)plain.data;
	for (prec = 0; p[prec] != NSR_ASM_REC_DATA;)
		prec += NSR_ASM_FRAME_LEN + nsr_get_u32(p + prec + 4);
	{
		struct nsr_buf m;
		size_t slen = NSR_ASM_FRAME_LEN +
			      nsr_get_u32((uint8_t *)s.data + rec + 4);
		size_t plen = NSR_ASM_FRAME_LEN + nsr_get_u32(p + prec + 4);

		nsr_buf_init(&m, 0);
		nsr_buf_add(&m, s.data, rec);
		nsr_buf_add(&m, p + prec, plen);
		nsr_buf_add(&m, s.data + rec + slen, s.len - rec - slen);
		memset(&v, 0, sizeof(v));
		nsr_buf_init(&v.data, 0);
		v.key = &k;
		assert_int_equal(decode_steps(&m, 4096, &ops, &v),
				 NSR_ERR_CORRUPT);
		nsr_buf_release(&v.data);
		nsr_buf_release(&m);
	}
	nsr_buf_release(&plain);
	nsr_buf_release(&s);
	free(data);
}

/* test_xform_invalid - what the encoder refuses. */
static void test_xform_invalid(void **state)
{
	struct nsr_asm_enc *e = NULL;
	struct nsr_buf s;
	struct nsr_asm_xform none = {0, NULL, NULL}, bad = {10, NULL, NULL};
	uint8_t key[32] = {0};
	struct nsr_asm_xform noid = {0, key, NULL};

	NSR_UNUSED(state);
	nsr_buf_init(&s, 0);
	assert_int_equal(nsr_asm_enc_new(&e, NSR_ASM_CK_CRC32C, mem_sink, &s),
			 NSR_OK);
	assert_int_equal(nsr_asm_enc_xform(e, &none), NSR_ERR_INVAL);
	assert_int_equal(nsr_asm_enc_xform(e, &bad), NSR_ERR_INVAL);
	assert_int_equal(nsr_asm_enc_xform(e, &noid), NSR_ERR_INVAL);
	nsr_asm_enc_free(e);
	nsr_buf_release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_derive),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_compress_ratio),
		cmocka_unit_test(test_wrong_key),
		cmocka_unit_test(test_tampered),
		cmocka_unit_test(test_old_version),
		cmocka_unit_test(test_mixed),
		cmocka_unit_test(test_xform_invalid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
