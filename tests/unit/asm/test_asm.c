/*
 * test_asm.c - save stream encoder and decoder: round trip of every record
 * type, incremental (1-byte) decoding, and detection of corruption,
 * truncation, trailing garbage and misuse.
 */
#include "nsr/compat.h"

#include "nsr/asm.h"
#include "nsr/buf.h"
#include "nsr/bytes.h"
#include "nsr/crc32c.h"
#include "nsr/err.h"
#include "nsr_test.h"

/* mem_sink - collect the stream in a buffer. */
static int mem_sink(void *ctx, const void *p, size_t n)
{
	return nsr_buf_add(ctx, p, n);
}

/* A log of decoded events, rendered as text so whole streams compare. */
struct evlog {
	struct nsr_buf text;
	int bad_ck; /* FILE_END events with ck_ok == 0 */
	uint64_t data_bytes;
	uint32_t data_crc_like; /* a simple sum of data bytes */
};

/* ev_header - log a HEADER event. */
static int ev_header(void *ctx, const struct nsr_asm_header *h)
{
	struct evlog *l = ctx;

	return nsr_buf_addf(&l->text, "H %s %s %" PRIu64 " %" PRId64 " %d\n",
			    h->client, h->name, h->ssid, h->savetime,
			    h->ck_alg);
}

/* ev_file - log a FILE event. */
static int ev_file(void *ctx, const struct nsr_asm_file *f, uint64_t off)
{
	struct evlog *l = ctx;

	return nsr_buf_addf(&l->text,
			    "F %s %d %o %u %u %u %" PRIu64 " %" PRIu64
			    " %ld.%ld %ld.%ld %s %s %s @%" PRIu64 "\n",
			    f->path, f->type, f->mode, f->uid, f->gid,
			    f->nlink, f->size, f->rdev, (long)f->mtime.tv_sec,
			    f->mtime.tv_nsec, (long)f->atime.tv_sec,
			    f->atime.tv_nsec, f->link, f->user, f->group, off);
}

/* ev_data - fold data bytes into the log. */
static int ev_data(void *ctx, const void *p, size_t n)
{
	struct evlog *l = ctx;
	const uint8_t *c = p;

	for (size_t i = 0; i < n; i++)
		l->data_crc_like = l->data_crc_like * 31 + c[i];
	l->data_bytes += n;
	return 0;
}

/* ev_hole - fold a hole into the log. */
static int ev_hole(void *ctx, uint64_t len)
{
	struct evlog *l = ctx;

	for (uint64_t i = 0; i < len; i++)
		l->data_crc_like = l->data_crc_like * 31;
	l->data_bytes += len;
	return 0;
}

/* ev_file_end - log a FILE_END event. */
static int ev_file_end(void *ctx, const struct nsr_asm_file_end *fe)
{
	struct evlog *l = ctx;

	if (!fe->ck_ok)
		l->bad_ck++;
	return nsr_buf_addf(&l->text, "E %d %" PRIu64 " %d\n", fe->status,
			    fe->bytes, fe->ck_ok);
}

/* ev_end - log the END event. */
static int ev_end(void *ctx, const struct nsr_asm_trailer *t)
{
	struct evlog *l = ctx;

	return nsr_buf_addf(&l->text, "Z %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
			    t->files, t->bytes, t->errors);
}

/* ev_xattr - log an XATTR event (value length and first byte). */
static int ev_xattr(void *ctx, const char *name, const void *v, size_t n)
{
	struct evlog *l = ctx;

	return nsr_buf_addf(&l->text, "X %s %zu %d\n", name, n,
			    n ? *(const uint8_t *)v : -1);
}

static const struct nsr_asm_dec_ops ev_ops = {
	ev_header, ev_file, ev_data, ev_hole, ev_file_end, ev_end, ev_xattr,
	NULL, NULL, NULL,
};

/* file_init - a file record with fixed plausible metadata. */
static void file_init(struct nsr_asm_file *f, const char *path, int type,
		      uint64_t size)
{
	memset(f, 0, sizeof(*f));
	f->type = type;
	f->path = path;
	f->mode = 0640;
	f->uid = 1000;
	f->gid = 100;
	f->nlink = 1;
	f->size = size;
	f->mtime.tv_sec = 1700000000;
	f->mtime.tv_nsec = 123456789;
	f->atime.tv_sec = 1700000001;
	f->atime.tv_nsec = 999999999;
	f->ctime.tv_sec = 1700000002;
	f->user = "alice";
	f->group = "users";
}

/* build_stream - a stream with every record type; returns expected data
 * bytes.  big_len bytes of patterned data exceed one DATA record. */
static void build_stream(struct nsr_buf *out, int ck_alg, size_t big_len)
{
	struct nsr_asm_enc *e = NULL;
	struct nsr_asm_header h = { 0, 0, 42, 1700000100, "client1", "/home" };
	struct nsr_asm_file f;
	uint8_t *big = malloc(big_len);
	uint64_t off = 0;

	assert_non_null(big);
	for (size_t i = 0; i < big_len; i++)
		big[i] = (uint8_t)(i * 7 + i / 251);
	assert_int_equal(nsr_asm_enc_new(&e, ck_alg, mem_sink, out), NSR_OK);
	assert_int_equal(nsr_asm_enc_header(e, &h), NSR_OK);

	file_init(&f, "/home", NSR_ASM_DIR, 0);
	f.mode = 0755;
	assert_int_equal(nsr_asm_enc_file(e, &f, &off), NSR_OK);
	assert_true(off > 0);
	assert_int_equal(nsr_asm_enc_file_end(e, NSR_ASM_FILE_OK), NSR_OK);

	file_init(&f, "/home/empty", NSR_ASM_REG, 0);
	assert_int_equal(nsr_asm_enc_file(e, &f, NULL), NSR_OK);
	assert_int_equal(nsr_asm_enc_file_end(e, NSR_ASM_FILE_OK), NSR_OK);

	file_init(&f, "/home/big", NSR_ASM_REG, big_len + 8192 + 10);
	assert_int_equal(nsr_asm_enc_file(e, &f, NULL), NSR_OK);
	assert_int_equal(nsr_asm_enc_xattr(e, "user.a", "1", 1), NSR_OK);
	assert_int_equal(nsr_asm_enc_xattr(e, "user.empty", "", 0), NSR_OK);
	assert_int_equal(nsr_asm_enc_xattr(e, "user.big", big,
					   NSR_MIN(big_len, 65536)), NSR_OK);
	assert_int_equal(nsr_asm_enc_data(e, big, big_len), NSR_OK);
	/* no attributes once data has started */
	assert_int_equal(nsr_asm_enc_xattr(e, "user.late", "x", 1),
			 NSR_ERR_STATE);
	assert_int_equal(nsr_asm_enc_hole(e, 8192), NSR_OK);
	assert_int_equal(nsr_asm_enc_data(e, "0123456789", 10), NSR_OK);
	assert_int_equal(nsr_asm_enc_file_end(e, NSR_ASM_FILE_OK), NSR_OK);

	file_init(&f, "/home/link", NSR_ASM_SYMLINK, 0);
	f.link = "big";
	assert_int_equal(nsr_asm_enc_file(e, &f, NULL), NSR_OK);
	assert_int_equal(nsr_asm_enc_file_end(e, NSR_ASM_FILE_OK), NSR_OK);

	file_init(&f, "/home/hard", NSR_ASM_HARDLINK, 0);
	f.link = "/home/big";
	f.nlink = 2;
	assert_int_equal(nsr_asm_enc_file(e, &f, NULL), NSR_OK);
	assert_int_equal(nsr_asm_enc_file_end(e, NSR_ASM_FILE_OK), NSR_OK);

	file_init(&f, "/home/changed", NSR_ASM_REG, 3);
	assert_int_equal(nsr_asm_enc_file(e, &f, NULL), NSR_OK);
	assert_int_equal(nsr_asm_enc_data(e, "abc", 3), NSR_OK);
	assert_int_equal(nsr_asm_enc_file_end(e, NSR_ASM_FILE_CHANGED),
			 NSR_OK);

	file_init(&f, "/home/dev", NSR_ASM_CHR, 0);
	f.rdev = 0x0103;
	assert_int_equal(nsr_asm_enc_file(e, &f, NULL), NSR_OK);
	assert_int_equal(nsr_asm_enc_file_end(e, NSR_ASM_FILE_OK), NSR_OK);

	assert_int_equal(nsr_asm_enc_end(e), NSR_OK);
	assert_int_equal(nsr_asm_enc_offset(e), out->len);
	nsr_asm_enc_free(e);
	free(big);
}

/* decode_rs - feed the stream in pieces of step bytes (0 = all at once),
 * with resync on or off; returns the first error of feed or finish. */
static int decode_rs(const void *p, size_t n, size_t step, struct evlog *l,
		     int resync)
{
	struct nsr_asm_dec *d = NULL;
	const uint8_t *c = p;
	int rc = NSR_OK;

	nsr_buf_init(&l->text, 0);
	l->bad_ck = 0;
	l->data_bytes = 0;
	l->data_crc_like = 0;
	assert_int_equal(nsr_asm_dec_new(&d, &ev_ops, l), NSR_OK);
	nsr_asm_dec_resync(d, resync);
	if (step == 0)
		step = n;
	for (size_t i = 0; i < n && rc == NSR_OK; i += step)
		rc = nsr_asm_dec_feed(d, c + i, NSR_MIN(step, n - i));
	if (rc == NSR_OK)
		rc = nsr_asm_dec_finish(d);
	nsr_asm_dec_free(d);
	return rc;
}

/* decode - decode_rs without resync. */
static int decode(const void *p, size_t n, size_t step, struct evlog *l)
{
	return decode_rs(p, n, step, l, 0);
}

/* count_lines - lines of the event log starting with tag. */
static int count_lines(const char *text, const char *tag)
{
	int n = 0;

	for (const char *c = text; c != NULL && *c; c = strchr(c, '\n')) {
		if (*c == '\n')
			c++;
		if (strncmp(c, tag, strlen(tag)) == 0)
			n++;
	}
	return n;
}

/* test_round_trip - every record type decodes back, whole and in pieces. */
static void test_round_trip(void **state)
{
	struct nsr_buf s;
	struct evlog a, b;
	const size_t big = NSR_ASM_MAX_DATA + 1000;

	NSR_UNUSED(state);
	nsr_buf_init(&s, 0);
	build_stream(&s, NSR_ASM_CK_CRC32C, big);
	assert_int_equal(decode(s.data, s.len, 0, &a), NSR_OK);
	assert_int_equal(a.bad_ck, 0);
	assert_int_equal(a.data_bytes, big + 8192 + 10 + 3);
	assert_non_null(
		strstr(a.text.data, "H client1 /home 42 1700000100 1\n"));
	assert_non_null(strstr(a.text.data,
			       "F /home/link 3 640 1000 100 1 0 0 "
			       "1700000000.123456789 1700000001.999999999 "
			       "big alice users"));
	assert_non_null(strstr(a.text.data, "F /home/hard 4 "));
	assert_non_null(strstr(a.text.data, "X user.a 1 49\nX user.empty 0 -1\n"
					    "X user.big 65536 0\n"));
	assert_non_null(strstr(a.text.data, "E 2 3 1\n"));
	assert_non_null(strstr(a.text.data, "Z 7 "));

	/* One byte at a time and odd steps give the same events. */
	assert_int_equal(decode(s.data, s.len, 1, &b), NSR_OK);
	assert_string_equal(a.text.data, b.text.data);
	assert_int_equal(a.data_crc_like, b.data_crc_like);
	nsr_buf_release(&b.text);
	assert_int_equal(decode(s.data, s.len, 4093, &b), NSR_OK);
	assert_string_equal(a.text.data, b.text.data);
	nsr_buf_release(&b.text);
	nsr_buf_release(&a.text);
	nsr_buf_release(&s);
}

/* test_sha256 - SHA-256 checksums verify and catch a damaged byte. */
static void test_sha256(void **state)
{
	struct nsr_buf s;
	struct evlog a;
	size_t at;

	NSR_UNUSED(state);
	nsr_buf_init(&s, 0);
	build_stream(&s, NSR_ASM_CK_SHA256, 5000);
	assert_int_equal(decode(s.data, s.len, 7, &a), NSR_OK);
	assert_int_equal(a.bad_ck, 0);
	nsr_buf_release(&a.text);
	/* Flip a byte of the data that follows /home/big's hole. */
	at = (size_t)((char *)memmem(s.data, s.len, "0123456789", 10) - s.data);
	at += 4;
	s.data[at] ^= 0x10;
	assert_int_equal(decode(s.data, s.len, 0, &a), NSR_OK);
	assert_int_equal(a.bad_ck, 1);
	nsr_buf_release(&a.text);
	nsr_buf_release(&s);
}

/* test_every_bit_flip_detected - every single-bit flip anywhere in a stream
 * is noticed: either decoding fails or a file's checksum does not match. */
static void test_every_bit_flip_detected(void **state)
{
	struct nsr_buf s;
	struct evlog l;

	NSR_UNUSED(state);
	nsr_buf_init(&s, 0);
	build_stream(&s, NSR_ASM_CK_CRC32C, 300);
	for (size_t i = 0; i < s.len; i++) {
		for (int bit = 0; bit < 8; bit++) {
			int rc;

			s.data[i] ^= (char)(1 << bit);
			rc = decode(s.data, s.len, 0, &l);
			if (rc == NSR_OK && l.bad_ck == 0)
				fail_msg("flip at byte %zu bit %d undetected",
					 i, bit);
			nsr_buf_release(&l.text);
			s.data[i] ^= (char)(1 << bit);
		}
	}
	nsr_buf_release(&s);
}

/* test_resync_every_bit_flip - with resync, a single flipped bit anywhere
 * is still detected and costs at most the one file it hit. */
static void test_resync_every_bit_flip(void **state)
{
	struct nsr_buf s;
	struct evlog l;
	int ends;

	NSR_UNUSED(state);
	nsr_buf_init(&s, 0);
	build_stream(&s, NSR_ASM_CK_CRC32C, 300);
	assert_int_equal(decode_rs(s.data, s.len, 0, &l, 1), NSR_OK);
	ends = count_lines(l.text.data, "E ");
	assert_int_equal(ends, 7);
	nsr_buf_release(&l.text);
	for (size_t i = 0; i < s.len; i++) {
		for (int bit = 0; bit < 8; bit += 3) {
			int rc;

			s.data[i] ^= (char)(1 << bit);
			rc = decode_rs(s.data, s.len, i % 2 ? 0 : 97, &l, 1);
			if (rc == NSR_OK && l.bad_ck == 0)
				fail_msg("flip at %zu bit %d undetected", i,
					 bit);
			if (count_lines(l.text.data, "E ") < ends - 1)
				fail_msg("flip at %zu bit %d lost %d files", i,
					 bit, ends - count_lines(l.text.data,
								 "E "));
			nsr_buf_release(&l.text);
			s.data[i] ^= (char)(1 << bit);
		}
	}
	nsr_buf_release(&s);
}

/* test_resync_garbage_between_files - junk spliced into a stream is
 * skipped; every file is still decoded. */
static void test_resync_garbage_between_files(void **state)
{
	struct nsr_buf s, g;
	struct evlog l;
	const char *at;
	size_t cut;
	uint32_t x = 7;

	NSR_UNUSED(state);
	nsr_buf_init(&s, 0);
	nsr_buf_init(&g, 0);
	build_stream(&s, NSR_ASM_CK_CRC32C, 5000);
	/* splice 40000 random bytes right before the FILE record of
	 * /home/link: 12 frame bytes and a 2-byte type ... back from the
	 * path string */
	at = memmem(s.data, s.len, "/home/link", 10);
	assert_non_null(at);
	cut = (size_t)(at - s.data) - 74 - 12;
	assert_int_equal((uint8_t)s.data[cut], NSR_ASM_REC_FILE);
	nsr_buf_add(&g, s.data, cut);
	for (int i = 0; i < 40000; i++) {
		x = x * 1103515245 + 12345;
		nsr_buf_addch(&g, (int)(x >> 16) & 0xff);
	}
	nsr_buf_add(&g, s.data + cut, s.len - cut);
	assert_int_not_equal(decode(g.data, g.len, 0, &l), NSR_OK);
	nsr_buf_release(&l.text);
	assert_int_equal(decode_rs(g.data, g.len, 333, &l, 1),
			 NSR_ERR_CORRUPT);
	assert_int_equal(count_lines(l.text.data, "E "), 7);
	assert_int_equal(l.bad_ck, 0);
	assert_non_null(strstr(l.text.data, "Z 7 "));
	/* offsets after the damage still point at the FILE records */
	for (const char *f = strstr(l.text.data, "F /home/link"); f != NULL;
	     f = strstr(f + 1, "\nF ")) {
		const char *at_off = strchr(f, '@');
		unsigned long long off = strtoull(at_off + 1, NULL, 10);
		const char *path = f[0] == '\n' ? f + 3 : f + 2;

		assert_true(off < g.len);
		assert_int_equal((uint8_t)g.data[off], NSR_ASM_REC_FILE);
		assert_memory_equal(g.data + off + 12 + 74, path,
				    strcspn(path, " "));
	}
	nsr_buf_release(&l.text);
	nsr_buf_release(&g);
	nsr_buf_release(&s);
}

/* test_truncation_and_trailing - every cut is truncated, trailing bytes
 * corrupt. */
static void test_truncation_and_trailing(void **state)
{
	struct nsr_buf s;
	struct evlog l;

	NSR_UNUSED(state);
	nsr_buf_init(&s, 0);
	build_stream(&s, NSR_ASM_CK_CRC32C, 100);
	for (size_t cut = 0; cut < s.len; cut++) {
		assert_int_equal(decode(s.data, cut, 0, &l), NSR_ERR_TRUNCATED);
		nsr_buf_release(&l.text);
	}
	nsr_buf_addch(&s, 0);
	assert_int_equal(decode(s.data, s.len, 0, &l), NSR_ERR_CORRUPT);
	nsr_buf_release(&l.text);
	nsr_buf_release(&s);
}

/* test_garbage - random bytes and an oversized frame are refused. */
static void test_garbage(void **state)
{
	uint8_t junk[4096];
	struct evlog l;
	uint32_t x = 12345;

	NSR_UNUSED(state);
	for (size_t i = 0; i < sizeof(junk); i++) {
		x = x * 1103515245 + 12345;
		junk[i] = (uint8_t)(x >> 16);
	}
	assert_int_not_equal(decode(junk, sizeof(junk), 0, &l), NSR_OK);
	nsr_buf_release(&l.text);
	/* A frame claiming a huge record is refused before any buffering. */
	memset(junk, 0, 12);
	junk[0] = NSR_ASM_REC_HEADER;
	junk[4] = 0x7f;
	assert_int_not_equal(decode(junk, 12, 0, &l), NSR_OK);
	nsr_buf_release(&l.text);
}

/* test_encoder_misuse - the encoder refuses out-of-order and bad input. */
static void test_encoder_misuse(void **state)
{
	struct nsr_buf s;
	struct nsr_asm_enc *e = NULL;
	struct nsr_asm_header h = { 0, 0, 1, 2, "c", "n" };
	struct nsr_asm_file f;
	static char longpath[NSR_ASM_LONGPATH_MAX + 2];
	static const char bigval[NSR_ASM_XATTR_VALUE_MAX + 1];

	NSR_UNUSED(state);
	nsr_buf_init(&s, 0);
	assert_int_equal(nsr_asm_enc_new(&e, 99, mem_sink, &s), NSR_ERR_INVAL);
	assert_int_equal(nsr_asm_enc_new(&e, NSR_ASM_CK_CRC32C, mem_sink, &s),
			 NSR_OK);
	file_init(&f, "/x", NSR_ASM_REG, 5);
	/* xattr outside a file */
	assert_int_equal(nsr_asm_enc_xattr(e, "user.x", "1", 1), NSR_ERR_STATE);
	/* file before header */
	assert_int_equal(nsr_asm_enc_file(e, &f, NULL), NSR_ERR_STATE);
	assert_int_equal(nsr_asm_enc_header(e, &h), NSR_OK);
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[sizeof(longpath) - 1] = '\0';
	f.path = longpath;
	assert_int_equal(nsr_asm_enc_file(e, &f, NULL), NSR_ERR_TOOBIG);
	f.path = "/x";
	f.type = NSR_ASM_SYMLINK; /* symlink without a target */
	assert_int_equal(nsr_asm_enc_file(e, &f, NULL), NSR_ERR_INVAL);
	f.type = NSR_ASM_REG;
	assert_int_equal(nsr_asm_enc_file(e, &f, NULL), NSR_OK);
	assert_int_equal(nsr_asm_enc_xattr(e, "", "1", 1), NSR_ERR_INVAL);
	assert_int_equal(nsr_asm_enc_xattr(e, longpath, "1", 1),
			 NSR_ERR_TOOBIG);
	assert_int_equal(nsr_asm_enc_xattr(e, "user.x", bigval, sizeof(bigval)),
			 NSR_ERR_TOOBIG);
	/* more data than the size, ending short */
	assert_int_equal(nsr_asm_enc_data(e, "123456", 6), NSR_ERR_INVAL);
	assert_int_equal(nsr_asm_enc_data(e, "1234", 4), NSR_OK);
	assert_int_equal(nsr_asm_enc_file_end(e, NSR_ASM_FILE_OK),
			 NSR_ERR_INVAL);
	assert_int_equal(nsr_asm_enc_end(e), NSR_ERR_STATE);
	nsr_asm_enc_free(e);
	nsr_buf_release(&s);
}

/* bad_sink - a failing sink makes the encoder fail, and it stays failed. */
static int bad_sink(void *ctx, const void *p, size_t n)
{
	NSR_UNUSED(ctx);
	NSR_UNUSED(p);
	NSR_UNUSED(n);
	return NSR_ERR_NOSPACE;
}

/* keep_ck - remember the checksum of each FILE_END. */
static int keep_ck(void *ctx, const struct nsr_asm_file_end *fe)
{
	uint32_t *out = ctx;

	out[out[0] + 1] = nsr_get_u32(fe->ck);
	out[0]++;
	return 0;
}

/* test_hole_checksum - a hole checks as the zero bytes it stands for:
 * the fast zero extension of CRC-32C agrees with the byte-wise one, for
 * hole lengths around powers of two and beyond 4 GB. */
static void test_hole_checksum(void **state)
{
	static const uint64_t lens[] = { 1, 7, 4096, 65535, 65536, 65537,
					 1000003, ((uint64_t)1 << 32) + 5 };
	struct nsr_asm_dec_ops ops = { 0 };
	struct nsr_asm_header h = { 0, 0, 1, 2, "c", "n" };
	struct nsr_asm_enc *e = NULL;
	struct nsr_asm_dec *d = NULL;
	struct nsr_asm_file f;
	struct nsr_buf s;
	uint32_t cks[3] = { 0 };

	NSR_UNUSED(state);
	ops.file_end = keep_ck;
	for (size_t i = 0; i < NSR_ARRAY_SIZE(lens); i++) {
		uint64_t n = lens[i];
		uint32_t want = nsr_crc32c(0, "ab", 2);

		/* byte-wise reference, in 64 KB pieces */
		for (uint64_t left = n; left > 0;) {
			static const uint8_t z[65536];
			size_t k = (size_t)NSR_MIN(left, (uint64_t)sizeof(z));

			want = nsr_crc32c(want, z, k);
			left -= k;
		}
		want = nsr_crc32c(want, "c", 1);
		nsr_buf_init(&s, 0);
		assert_int_equal(nsr_asm_enc_new(&e, NSR_ASM_CK_CRC32C,
						 mem_sink, &s), NSR_OK);
		assert_int_equal(nsr_asm_enc_header(e, &h), NSR_OK);
		file_init(&f, "/f", NSR_ASM_REG, n + 3);
		assert_int_equal(nsr_asm_enc_file(e, &f, NULL), NSR_OK);
		assert_int_equal(nsr_asm_enc_data(e, "ab", 2), NSR_OK);
		assert_int_equal(nsr_asm_enc_hole(e, n), NSR_OK);
		assert_int_equal(nsr_asm_enc_data(e, "c", 1), NSR_OK);
		assert_int_equal(nsr_asm_enc_file_end(e, 0), NSR_OK);
		assert_int_equal(nsr_asm_enc_end(e), NSR_OK);
		nsr_asm_enc_free(e);
		cks[0] = 0;
		assert_int_equal(nsr_asm_dec_new(&d, &ops, cks), NSR_OK);
		assert_int_equal(nsr_asm_dec_feed(d, s.data, s.len), NSR_OK);
		assert_int_equal(nsr_asm_dec_finish(d), NSR_OK);
		nsr_asm_dec_free(d);
		assert_int_equal(cks[0], 1);
		assert_int_equal(cks[1], want);
		nsr_buf_release(&s);
		if (n > 100000000) /* the 4 GB reference is slow under ASan */
			break;
	}
}

/* test_sink_error_sticky - a sink failure sticks to the encoder. */
static void test_sink_error_sticky(void **state)
{
	struct nsr_asm_enc *e = NULL;
	struct nsr_asm_header h = { 0, 0, 1, 2, "c", "n" };

	NSR_UNUSED(state);
	assert_int_equal(nsr_asm_enc_new(&e, NSR_ASM_CK_CRC32C, bad_sink, NULL),
			 NSR_OK);
	assert_int_equal(nsr_asm_enc_header(e, &h), NSR_ERR_NOSPACE);
	assert_int_equal(nsr_asm_enc_end(e), NSR_ERR_NOSPACE);
	nsr_asm_enc_free(e);
}

/* main - run the tests. */
/* long_name - a path of n bytes: "/" and 200-byte components. */
static char *long_name(size_t n, char fill)
{
	char *p = malloc(n + 1);

	assert_non_null(p);
	for (size_t i = 0; i < n; i++)
		p[i] = i % 201 == 0 ? '/' : fill;
	p[n] = '\0';
	if (p[n - 1] == '/')
		p[n - 1] = fill;
	return p;
}

/* build_long - a stream with a 9,000-byte path (two LONGSTR pieces), a
 * hard link whose path and source are both long, and a short file. */
static void build_long(struct nsr_buf *out, const char *lp, const char *lq,
		       uint64_t *offs)
{
	struct nsr_asm_enc *e = NULL;
	struct nsr_asm_header h = { 0, 0, 7, 1700000100, "c", "/" };
	struct nsr_asm_file f;

	assert_int_equal(nsr_asm_enc_new(&e, NSR_ASM_CK_CRC32C, mem_sink, out),
			 NSR_OK);
	assert_int_equal(nsr_asm_enc_header(e, &h), NSR_OK);
	file_init(&f, lp, NSR_ASM_REG, 3);
	f.nlink = 2;
	assert_int_equal(nsr_asm_enc_file(e, &f, &offs[0]), NSR_OK);
	assert_int_equal(nsr_asm_enc_data(e, "xyz", 3), NSR_OK);
	assert_int_equal(nsr_asm_enc_file_end(e, NSR_ASM_FILE_OK), NSR_OK);
	file_init(&f, lq, NSR_ASM_HARDLINK, 0);
	f.link = lp;
	assert_int_equal(nsr_asm_enc_file(e, &f, &offs[1]), NSR_OK);
	assert_int_equal(nsr_asm_enc_file_end(e, NSR_ASM_FILE_OK), NSR_OK);
	file_init(&f, "/short", NSR_ASM_REG, 0);
	assert_int_equal(nsr_asm_enc_file(e, &f, &offs[2]), NSR_OK);
	assert_int_equal(nsr_asm_enc_file_end(e, NSR_ASM_FILE_OK), NSR_OK);
	assert_int_equal(nsr_asm_enc_end(e), NSR_OK);
	nsr_asm_enc_free(e);
}

/* test_long_paths - paths over NSR_ASM_PATH_MAX round-trip whole, in
 * pieces of any size, with the offset of their first record. */
static void test_long_paths(void **state)
{
	char *lp = long_name(9000, 'a'), *lq = long_name(5001, 'b');
	struct nsr_buf s, want;
	struct evlog a, b;
	uint64_t offs[3];

	NSR_UNUSED(state);
	nsr_buf_init(&s, 0);
	nsr_buf_init(&want, 0);
	build_long(&s, lp, lq, offs);
	assert_int_equal(decode(s.data, s.len, 0, &a), NSR_OK);
	nsr_buf_addf(&want, "F %s 1 640 1000 100 2 3 0 ", lp);
	assert_non_null(strstr(a.text.data, want.data));
	nsr_buf_reset(&want);
	nsr_buf_addf(&want, "F %s 4 640 1000 100 1 0 0 1700000000.123456789 "
		     "1700000001.999999999 %s alice users @%" PRIu64 "\n",
		     lq, lp, offs[1]);
	assert_non_null(strstr(a.text.data, want.data));
	nsr_buf_reset(&want);
	nsr_buf_addf(&want, "F /short 1 640 1000 100 1 0 0 1700000000.123456789"
		     " 1700000001.999999999  alice users @%" PRIu64 "\n",
		     offs[2]);
	assert_non_null(strstr(a.text.data, want.data));
	/* the offset of a long file is its first LONGSTR record's */
	assert_int_equal(((uint8_t *)s.data)[offs[0]], NSR_ASM_REC_LONGSTR);
	assert_int_equal(((uint8_t *)s.data)[offs[1]], NSR_ASM_REC_LONGSTR);
	for (size_t step = 1; step < 20000; step = step * 3 + 1) {
		assert_int_equal(decode(s.data, s.len, step, &b), NSR_OK);
		assert_string_equal(a.text.data, b.text.data);
		nsr_buf_release(&b.text);
	}
	/* the longest path there may be, and one byte more */
	free(lp);
	lp = long_name(NSR_ASM_LONGPATH_MAX, 'c');
	nsr_buf_reset(&s);
	build_long(&s, lp, lq, offs);
	assert_int_equal(decode(s.data, s.len, 0, &b), NSR_OK);
	nsr_buf_release(&b.text);
	nsr_buf_release(&a.text);
	nsr_buf_release(&want);
	nsr_buf_release(&s);
	free(lp);
	free(lq);
}

/* refix_crc - recompute the CRC of the metadata record at off. */
static void refix_crc(uint8_t *p, size_t off)
{
	uint32_t len = nsr_get_u32(p + off + 4);
	uint32_t crc = nsr_crc32c(0, p + off, 8);

	crc = nsr_crc32c(crc, p + off + NSR_ASM_FRAME_LEN, len);
	nsr_put_u32(p + off + 8, crc);
}

/* test_long_paths_hostile - LONGSTR records that break a rule are
 * refused, even with a right CRC; flipped bits are caught, and with
 * resync cost at most the file they hit. */
static void test_long_paths_hostile(void **state)
{
	char *lp = long_name(5000, 'a'), *lq = long_name(4200, 'b');
	struct nsr_buf s;
	struct evlog l;
	uint64_t offs[3];
	uint8_t *p;
	/* payload field offsets: 0 field, 1-3 reserved, 4 total, 8 offset */
	static const struct {
		size_t at;
		uint8_t val;
	} bad[] = {
		{ 0, 0 }, { 0, 3 }, { 1, 1 }, { 3, 1 },
		{ 4 + 2, 0x0f },	/* total 3,976: short enough */
		{ 4 + 0, 1 },		/* total over the bound */
		{ 8 + 3, 1 },		/* first piece not at 0 */
	};

	NSR_UNUSED(state);
	nsr_buf_init(&s, 0);
	build_long(&s, lp, lq, offs);
	p = (uint8_t *)s.data;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t at = offs[0] + NSR_ASM_FRAME_LEN + bad[i].at;
		uint8_t old = p[at];

		p[at] = bad[i].val;
		refix_crc(p, offs[0]);
		assert_int_equal(decode(s.data, s.len, 0, &l),
				 NSR_ERR_CORRUPT);
		nsr_buf_release(&l.text);
		p[at] = old;
		refix_crc(p, offs[0]);
	}
	/* a version 1 stream has no LONGSTR records */
	p[NSR_ASM_FRAME_LEN + 5] = 1;
	refix_crc(p, 0);
	assert_int_equal(decode(s.data, s.len, 0, &l), NSR_ERR_CORRUPT);
	nsr_buf_release(&l.text);
	p[NSR_ASM_FRAME_LEN + 5] = 2;
	refix_crc(p, 0);
	/* every flipped bit is caught; with resync only its file is lost */
	for (size_t i = 0; i < s.len; i += 7) {
		s.data[i] ^= 0x04;
		if (decode(s.data, s.len, 0, &l) == NSR_OK && l.bad_ck == 0)
			fail_msg("flip at %zu undetected", i);
		nsr_buf_release(&l.text);
		decode_rs(s.data, s.len, i % 2 ? 0 : 97, &l, 1);
		if (count_lines(l.text.data, "E ") < 2)
			fail_msg("flip at %zu lost more than one file", i);
		nsr_buf_release(&l.text);
		s.data[i] ^= 0x04;
	}
	nsr_buf_release(&s);
	free(lp);
	free(lq);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_sha256),
		cmocka_unit_test(test_every_bit_flip_detected),
		cmocka_unit_test(test_resync_every_bit_flip),
		cmocka_unit_test(test_resync_garbage_between_files),
		cmocka_unit_test(test_truncation_and_trailing),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_encoder_misuse),
		cmocka_unit_test(test_sink_error_sticky),
		cmocka_unit_test(test_hole_checksum),
		cmocka_unit_test(test_long_paths),
		cmocka_unit_test(test_long_paths_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
