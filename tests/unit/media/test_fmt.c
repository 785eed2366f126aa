/*
 * test_fmt.c - label, block and chunk records: round trips, truncation,
 * flipped bits and bad fields are refused with the right code.
 */
#include "nsr/compat.h"

#include "nsr/bytes.h"
#include "nsr/crc32c.h"
#include "nsr/err.h"
#include "nsr/media_fmt.h"
#include "nsr_test.h"

/* sample_label - a label with every field set. */
static void sample_label(struct nsr_vol_label *lab)
{
	size_t i;

	memset(lab, 0, sizeof(*lab));
	snprintf(lab->name, sizeof(lab->name), "TAPE.001");
	snprintf(lab->pool, sizeof(lab->pool), "Default");
	snprintf(lab->media_type, sizeof(lab->media_type), "LTO-8");
	for (i = 0; i < 16; i++)
		lab->volid[i] = (uint8_t)(i * 7 + 1);
	lab->block_size = 256u << 10;
	lab->created = 1763700000;
}

static void test_label_roundtrip(void **state)
{
	static uint8_t rec[NSR_VOL_LABEL_SIZE];
	struct nsr_vol_label a, b;

	NSR_UNUSED(state);
	sample_label(&a);
	media_fmt_label_encode(&a, rec);
	assert_int_equal(media_fmt_label_decode(rec, sizeof(rec), &b), NSR_OK);
	assert_string_equal(b.name, "TAPE.001");
	assert_string_equal(b.pool, "Default");
	assert_string_equal(b.media_type, "LTO-8");
	assert_memory_equal(b.volid, a.volid, 16);
	assert_int_equal(b.block_size, 256u << 10);
	assert_int_equal(b.created, 1763700000);
	assert_int_equal(b.version, MEDIA_FMT_VERSION);
}

static void test_label_damage(void **state)
{
	static uint8_t rec[NSR_VOL_LABEL_SIZE];
	struct nsr_vol_label a, b;
	size_t i;

	NSR_UNUSED(state);
	sample_label(&a);
	media_fmt_label_encode(&a, rec);
	/* Truncated. */
	assert_int_equal(media_fmt_label_decode(rec, 100, &b),
			 NSR_ERR_TRUNCATED);
	assert_int_equal(media_fmt_label_decode(rec, 8, &b), NSR_ERR_TRUNCATED);
	/* A bit flipped anywhere after the magic: checksum. */
	for (i = 16; i < sizeof(rec); i += 997) {
		rec[i] ^= 0x10;
		assert_int_equal(media_fmt_label_decode(rec, sizeof(rec), &b),
				 NSR_ERR_CHECKSUM);
		rec[i] ^= 0x10;
	}
	/* Not a label at all. */
	rec[0] ^= 1;
	assert_int_equal(media_fmt_label_decode(rec, sizeof(rec), &b),
			 NSR_ERR_NOTFOUND);
	rec[0] ^= 1;
	/* Newer version, or none. */
	nsr_put_u32(rec + 8, MEDIA_FMT_VERSION + 1);
	assert_int_equal(media_fmt_label_decode(rec, sizeof(rec), &b),
			 NSR_ERR_UNSUPPORTED);
	nsr_put_u32(rec + 8, 0);
	assert_int_equal(media_fmt_label_decode(rec, sizeof(rec), &b),
			 NSR_ERR_UNSUPPORTED);
	/* Bad block size with a valid checksum. */
	a.block_size = 40000;
	media_fmt_label_encode(&a, rec);
	assert_int_equal(media_fmt_label_decode(rec, sizeof(rec), &b),
			 NSR_ERR_CORRUPT);
}

static void test_block_header(void **state)
{
	static uint8_t blk[32768];
	struct media_fmt_block a, b;

	NSR_UNUSED(state);
	memset(&a, 0, sizeof(a));
	memset(a.volid, 0xab, 16);
	a.file = 3;
	a.block_size = sizeof(blk);
	a.seq = 12345678901ull;
	a.used = 1000;
	media_fmt_block_encode(&a, blk);
	assert_int_equal(media_fmt_block_decode(blk, sizeof(blk), &b), NSR_OK);
	assert_int_equal(b.file, 3);
	assert_int_equal(b.seq, 12345678901ull);
	assert_int_equal(b.used, 1000);
	assert_memory_equal(b.volid, a.volid, 16);
	/* A short record: truncated; a bit flip: checksum. */
	assert_int_equal(media_fmt_block_decode(blk, 20000, &b),
			 NSR_ERR_TRUNCATED);
	assert_int_equal(media_fmt_block_decode(blk, 30, &b),
			 NSR_ERR_TRUNCATED);
	blk[33] ^= 4;
	assert_int_equal(media_fmt_block_decode(blk, sizeof(blk), &b),
			 NSR_ERR_CHECKSUM);
	blk[33] ^= 4;
	blk[0] = 'X';
	assert_int_equal(media_fmt_block_decode(blk, sizeof(blk), &b),
			 NSR_ERR_CORRUPT);
	/* used larger than the block. */
	a.used = sizeof(blk);
	media_fmt_block_encode(&a, blk);
	assert_int_equal(media_fmt_block_decode(blk, sizeof(blk), &b),
			 NSR_ERR_CORRUPT);
}

static void test_block_versions(void **state)
{
	static uint8_t blk[32768];
	struct media_fmt_block a, b;

	NSR_UNUSED(state);
	memset(&a, 0, sizeof(a));
	a.block_size = sizeof(blk);
	a.used = 100;
	a.flags = MEDIA_FMT_BLK_ONE_SS;
	a.ssid = 4711;
	/* Version 2 (the default) names the save set; the header alone
	 * decodes the same given the record's length. */
	media_fmt_block_encode(&a, blk);
	assert_int_equal(nsr_get_u16(blk + 4), 2);
	assert_int_equal(media_fmt_block_decode(blk, sizeof(blk), &b), NSR_OK);
	assert_int_equal(b.version, 2);
	assert_int_equal(b.flags, MEDIA_FMT_BLK_ONE_SS);
	assert_int_equal(b.ssid, 4711);
	assert_int_equal(media_fmt_block_head_decode(blk, sizeof(blk), &b),
			 NSR_OK);
	assert_int_equal(b.ssid, 4711);
	assert_int_equal(media_fmt_block_head_decode(blk, 65536, &b),
			 NSR_ERR_CORRUPT);
	/* Version 1 carries neither, and reads back without them. */
	a.version = 1;
	media_fmt_block_encode(&a, blk);
	assert_int_equal(nsr_get_u32(blk + 44), 0);
	assert_int_equal(nsr_get_u32(blk + 48), 0);
	assert_int_equal(media_fmt_block_decode(blk, sizeof(blk), &b), NSR_OK);
	assert_int_equal(b.version, 1);
	assert_int_equal(b.flags, 0);
	assert_int_equal(b.ssid, 0);
	/* Version 2: unknown flags, or flag and ssid disagreeing. */
	a.version = 2;
	a.flags = 0x2 | MEDIA_FMT_BLK_ONE_SS;
	media_fmt_block_encode(&a, blk);
	assert_int_equal(media_fmt_block_decode(blk, sizeof(blk), &b),
			 NSR_ERR_CORRUPT);
	a.flags = MEDIA_FMT_BLK_ONE_SS;
	a.ssid = 0;
	media_fmt_block_encode(&a, blk);
	assert_int_equal(media_fmt_block_decode(blk, sizeof(blk), &b),
			 NSR_ERR_CORRUPT);
	a.flags = 0;
	a.ssid = 9;
	media_fmt_block_encode(&a, blk);
	assert_int_equal(media_fmt_block_decode(blk, sizeof(blk), &b),
			 NSR_ERR_CORRUPT);
	/* A newer version is not read. */
	a.version = MEDIA_FMT_VERSION + 1;
	a.ssid = 0;
	media_fmt_block_encode(&a, blk);
	assert_int_equal(media_fmt_block_decode(blk, sizeof(blk), &b),
			 NSR_ERR_CORRUPT);
}

static void test_chunk(void **state)
{
	uint8_t buf[256];
	struct media_fmt_chunk a, b;
	const uint8_t *payload;

	NSR_UNUSED(state);
	memset(&a, 0, sizeof(a));
	a.ssid = 77;
	a.seq = 5;
	a.kind = MEDIA_FMT_DATA;
	a.len = 100;
	memset(buf + MEDIA_FMT_CHUNK_HDR, 'x', 100);
	media_fmt_chunk_encode(&a, buf);
	assert_int_equal(media_fmt_chunk_decode(buf, 124, &b, &payload),
			 NSR_OK);
	{
		uint8_t other[256], data[100];

		/* chunk_put frames the same bytes as copy + encode. */
		memset(data, 'x', sizeof(data));
		memset(other, 0, sizeof(other));
		media_fmt_chunk_put(&a, other, data);
		assert_memory_equal(other, buf, 124);
	}
	assert_int_equal(b.ssid, 77);
	assert_int_equal(b.seq, 5);
	assert_int_equal(b.kind, MEDIA_FMT_DATA);
	assert_int_equal(b.len, 100);
	assert_ptr_equal(payload, buf + MEDIA_FMT_CHUNK_HDR);
	assert_int_equal(media_fmt_chunk_decode(buf, 123, &b, &payload),
			 NSR_ERR_TRUNCATED);
	assert_null(payload);
	assert_int_equal(media_fmt_chunk_decode(buf, 10, &b, &payload),
			 NSR_ERR_TRUNCATED);
	/* Flipped payload bit and flipped header bit. */
	buf[80] ^= 1;
	assert_int_equal(media_fmt_chunk_decode(buf, 124, &b, &payload),
			 NSR_ERR_CHECKSUM);
	buf[80] ^= 1;
	buf[1] ^= 1;
	assert_int_equal(media_fmt_chunk_decode(buf, 124, &b, &payload),
			 NSR_ERR_CHECKSUM);
	buf[1] ^= 1;
	a.kind = 9;
	media_fmt_chunk_encode(&a, buf);
	assert_int_equal(media_fmt_chunk_decode(buf, 124, &b, &payload),
			 NSR_ERR_CORRUPT);
}

static void test_sshdr_tail(void **state)
{
	static uint8_t buf[MEDIA_FMT_SSHDR_MAX];
	struct nsr_vol_sshdr h, g;
	struct nsr_vol_span sp = { 2, 999999 }, sq;
	struct nsr_vol_sstail t = { 123456789, 42, NSR_VOL_SS_OK }, u;
	uint8_t tb[MEDIA_FMT_SSTAIL_LEN];
	size_t n, i;

	NSR_UNUSED(state);
	memset(&h, 0, sizeof(h));
	h.ssid = 4242;
	memset(h.longid, 0x5a, 16);
	memset(h.client, 'c', NSR_VOL_CLIENT_MAX);
	memset(h.name, '/', NSR_VOL_SSNAME_MAX);
	snprintf(h.level, sizeof(h.level), "incr");
	snprintf(h.pool, sizeof(h.pool), "Default");
	h.savetime = 1763700000;
	h.browse_time = 1763700000 + 86400;
	h.retention_time = -1;
	n = media_fmt_sshdr_encode(&h, &sp, buf);
	assert_true(n <= MEDIA_FMT_SSHDR_MAX);
	assert_int_equal(media_fmt_sshdr_decode(buf, n, &g, &sq), NSR_OK);
	assert_memory_equal(&g, &h, sizeof(h));
	assert_int_equal(sq.frag_seq, 2);
	assert_int_equal(sq.ss_offset, 999999);
	/* Every shorter prefix fails cleanly; trailing bytes too. */
	for (i = 0; i < n; i += 7)
		assert_int_not_equal(media_fmt_sshdr_decode(buf, i, &g, &sq),
				     NSR_OK);
	assert_int_equal(media_fmt_sshdr_decode(buf, n + 1, &g, &sq),
			 NSR_ERR_CORRUPT);
	/* A string length over its maximum. */
	nsr_put_u16(buf + 56, NSR_VOL_CLIENT_MAX + 1);
	assert_int_equal(media_fmt_sshdr_decode(buf, n, &g, &sq),
			 NSR_ERR_CORRUPT);

	media_fmt_sstail_encode(&t, tb);
	assert_int_equal(media_fmt_sstail_decode(tb, sizeof(tb), &u), NSR_OK);
	assert_int_equal(u.bytes, 123456789);
	assert_int_equal(u.files, 42);
	assert_int_equal(media_fmt_sstail_decode(tb, 19, &u),
			 NSR_ERR_TRUNCATED);
	tb[19] = 9;
	assert_int_equal(media_fmt_sstail_decode(tb, sizeof(tb), &u),
			 NSR_ERR_CORRUPT);
}

static void test_crc_lanes(void **state)
{
	static uint8_t buf[100000];
	uint32_t seed = 99, x;
	size_t i, off, len;

	NSR_UNUSED(state);
	for (i = 0; i < sizeof(buf); i++) {
		seed = seed * 1103515245u + 12345u;
		buf[i] = (uint8_t)(seed >> 16);
	}
	/* The three-lane CRC equals core's on every length and alignment,
	 * across the lane sizes (256, 8192 bytes per lane). */
	for (i = 0; i < 3000; i++) {
		seed = seed * 1103515245u + 12345u;
		off = (seed >> 8) % 61;
		len = i < 1000 ? i : (seed >> 4) % (sizeof(buf) - 64);
		x = seed ^ 0x5a5a5a5au;
		assert_int_equal(nsr_crc32c(x, buf + off, len),
				 nsr_crc32c(x, buf + off, len));
	}
	/* The copying variant copies and gives the same value. */
	for (i = 0; i < 400; i++) {
		static uint8_t dst[sizeof(buf)];

		seed = seed * 1103515245u + 12345u;
		len = i < 200 ? i * 7 : (seed >> 4) % (sizeof(buf) - 64);
		off = (seed >> 9) % 7;
		memset(dst, 0, sizeof(dst));
		assert_int_equal(nsr_crc32c_copy(i, dst + off, buf, len),
				 nsr_crc32c(i, buf, len));
		assert_memory_equal(dst + off, buf, len);
	}
	/* The standard check value of CRC-32C. */
	assert_int_equal(nsr_crc32c(0, "123456789", 9), 0xe3069283u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_label_roundtrip),
		cmocka_unit_test(test_label_damage),
		cmocka_unit_test(test_block_header),
		cmocka_unit_test(test_block_versions),
		cmocka_unit_test(test_chunk),
		cmocka_unit_test(test_sshdr_tail),
		cmocka_unit_test(test_crc_lanes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
