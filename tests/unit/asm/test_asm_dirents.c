/*
 * test_asm_dirents.c - DIRENTS, a directory's entry list in the save
 * stream (asm.h): round trip whole and in pieces, lists split over many
 * records, the empty list, encoder misuse, and hand-made records the
 * decoder must refuse (order, count, names, placement).
 */
#include "nsr/compat.h"

#include "nsr/asm.h"
#include "nsr/buf.h"
#include "nsr/bytes.h"
#include "nsr/crc32c.h"
#include "nsr/err.h"
#include "nsr_test.h"

#include "asm_util.h"

/* on_dirent - log "index/total name" per name, "empty" for none. */
static int on_dirent(void *ctx, const char *name, uint32_t index,
		     uint32_t total)
{
	struct nsr_buf *log = ctx;

	if (name == NULL)
		return nsr_buf_addf(log, "empty %u %u\n", index, total);
	return nsr_buf_addf(log, "%u/%u %s\n", index, total, name);
}

/* on_file - log a FILE as "F path". */
static int on_file(void *ctx, const struct nsr_asm_file *f, uint64_t off)
{
	NSR_UNUSED(off);
	return nsr_buf_addf(ctx, "F %s\n", f->path);
}

static const struct nsr_asm_dec_ops ops = {
	.file = on_file,
	.dirent = on_dirent,
};

/* decode - feed s in pieces of step bytes; the first error or finish. */
static int decode(const struct nsr_buf *s, size_t step, struct nsr_buf *log)
{
	nsr_buf_reset(log);
	return decode_steps(s, step, &ops, log);
}

/* start - an encoder on s with the header written. */
static struct nsr_asm_enc *start(struct nsr_buf *s)
{
	return start_stream(s, "/d");
}

/* file - begin a FILE record of type at path. */
static int file(struct nsr_asm_enc *e, const char *path, int type)
{
	struct nsr_asm_file f;

	memset(&f, 0, sizeof(f));
	f.type = type;
	f.mode = 0755;
	f.nlink = 1;
	f.path = path;
	f.user = "";
	f.group = "";
	return nsr_asm_enc_file(e, &f, NULL);
}

/* listed - a stream of one directory /d listing names[0..n). */
static void listed(struct nsr_buf *s, const char *const *names, size_t n)
{
	struct nsr_asm_enc *e = start(s);

	assert_int_equal(file(e, "/d", NSR_ASM_DIR), NSR_OK);
	assert_int_equal(nsr_asm_enc_dirents(e, names, n), NSR_OK);
	assert_int_equal(nsr_asm_enc_file_end(e, NSR_ASM_FILE_OK), NSR_OK);
	assert_int_equal(nsr_asm_enc_end(e), NSR_OK);
	nsr_asm_enc_free(e);
}

/* test_round_trip - names come back in order, with index and total. */
static void test_round_trip(void **state)
{
	static const char *const names[] = {"a", "b c", "caf\xc3\xa9", "z"};
	struct nsr_buf s, log;
	struct nsr_asm_enc *e;

	NSR_UNUSED(state);
	nsr_buf_init(&s, 0);
	nsr_buf_init(&log, 0);
	e = start(&s);
	assert_int_equal(file(e, "/d", NSR_ASM_DIR), NSR_OK);
	assert_int_equal(nsr_asm_enc_xattr(e, "user.x", "1", 1), NSR_OK);
	assert_int_equal(nsr_asm_enc_dirents(e, names, 4), NSR_OK);
	assert_int_equal(nsr_asm_enc_file_end(e, NSR_ASM_FILE_OK), NSR_OK);
	assert_int_equal(file(e, "/d/empty", NSR_ASM_DIR), NSR_OK);
	assert_int_equal(nsr_asm_enc_dirents(e, NULL, 0), NSR_OK);
	assert_int_equal(nsr_asm_enc_file_end(e, NSR_ASM_FILE_OK), NSR_OK);
	assert_int_equal(file(e, "/d/unlisted", NSR_ASM_DIR), NSR_OK);
	assert_int_equal(nsr_asm_enc_file_end(e, NSR_ASM_FILE_OK), NSR_OK);
	assert_int_equal(nsr_asm_enc_end(e), NSR_OK);
	nsr_asm_enc_free(e);
	for (size_t step = 1; step <= s.len; step = step * 3 + 1) {
		assert_int_equal(decode(&s, step, &log), NSR_OK);
		assert_string_equal(log.data,
				    "F /d\n0/4 a\n1/4 b c\n2/4 caf\xc3\xa9\n"
				    "3/4 z\nF /d/empty\nempty 0 0\n"
				    "F /d/unlisted\n");
	}
	nsr_buf_release(&s);
	nsr_buf_release(&log);
}

/* test_many - a list larger than one record is split and comes back
 * whole; a truncated list or a missing record is refused. */
static void test_many(void **state)
{
	enum { N = 5000 };
	char **names = calloc(N, sizeof(*names));
	struct nsr_buf s, log;
	size_t records = 0, lines = 0;

	NSR_UNUSED(state);
	assert_non_null(names);
	for (size_t i = 0; i < N; i++)
		assert_true(asprintf(&names[i], "entry-%06zu-%s", i,
				     "padding-padding") > 0);
	nsr_buf_init(&s, 0);
	nsr_buf_init(&log, 0);
	listed(&s, (const char *const *)names, N);
	for (size_t off = 0; off + 12 <= s.len;
	     off += 12 + nsr_get_u32((uint8_t *)s.data + off + 4))
		records += s.data[off] == NSR_ASM_REC_DIRENTS;
	assert_true(records >= 8); /* ~125 KB in records of 16 KB */
	assert_int_equal(decode(&s, 4096, &log), NSR_OK);
	for (const char *c = log.data; (c = strchr(c, '\n')) != NULL; c++)
		lines++;
	assert_int_equal(lines, N + 1);
	assert_non_null(strstr(log.data, "4999/5000 entry-004999-"));

	/* Without its last DIRENTS record the list is short at FILE_END. */
	{
		size_t off = 0, last = 0, end = 0;
		struct nsr_buf t;

		for (; off + 12 <= s.len;
		     off += 12 + nsr_get_u32((uint8_t *)s.data + off + 4)) {
			if (s.data[off] == NSR_ASM_REC_DIRENTS)
				last = off;
			if (s.data[off] == NSR_ASM_REC_FILE_END && !end)
				end = off;
		}
		nsr_buf_init(&t, 0);
		nsr_buf_add(&t, s.data, last);
		nsr_buf_add(&t, s.data + end, s.len - end);
		assert_int_equal(decode(&t, t.len, &log), NSR_ERR_CORRUPT);
		nsr_buf_release(&t);
	}
	for (size_t i = 0; i < N; i++)
		free(names[i]);
	free(names);
	nsr_buf_release(&s);
	nsr_buf_release(&log);
}

/* test_encoder_misuse - what the encoder refuses. */
static void test_encoder_misuse(void **state)
{
	static const char *const unsorted[] = {"b", "a"};
	static const char *const dup[] = {"a", "a"};
	static const char *const dot[] = {"."};
	static const char *const dotdot[] = {".."};
	static const char *const slash[] = {"a/b"};
	static const char *const empty[] = {""};
	static const char *const ok[] = {"a"};
	char longname[NSR_ASM_NAME_MAX + 2];
	const char *const toolong[] = {longname};
	struct nsr_buf s;
	struct nsr_asm_enc *e;

	NSR_UNUSED(state);
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	nsr_buf_init(&s, 0);
	e = start(&s);
	assert_int_equal(nsr_asm_enc_dirents(e, ok, 1), NSR_ERR_STATE);
	assert_int_equal(file(e, "/d/f", NSR_ASM_REG), NSR_OK);
	assert_int_equal(nsr_asm_enc_dirents(e, ok, 1), NSR_ERR_STATE);
	assert_int_equal(nsr_asm_enc_file_end(e, NSR_ASM_FILE_OK), NSR_OK);
	assert_int_equal(file(e, "/d", NSR_ASM_DIR), NSR_OK);
	assert_int_equal(nsr_asm_enc_dirents(e, unsorted, 2), NSR_ERR_INVAL);
	assert_int_equal(nsr_asm_enc_dirents(e, dup, 2), NSR_ERR_INVAL);
	assert_int_equal(nsr_asm_enc_dirents(e, dot, 1), NSR_ERR_INVAL);
	assert_int_equal(nsr_asm_enc_dirents(e, dotdot, 1), NSR_ERR_INVAL);
	assert_int_equal(nsr_asm_enc_dirents(e, slash, 1), NSR_ERR_INVAL);
	assert_int_equal(nsr_asm_enc_dirents(e, empty, 1), NSR_ERR_INVAL);
	assert_int_equal(nsr_asm_enc_dirents(e, toolong, 1), NSR_ERR_INVAL);
	assert_int_equal(nsr_asm_enc_dirents(e, ok, 1), NSR_OK);
	assert_int_equal(nsr_asm_enc_dirents(e, ok, 1), NSR_ERR_STATE);
	assert_int_equal(nsr_asm_enc_xattr(e, "user.late", "1", 1),
			 NSR_ERR_STATE);
	assert_int_equal(nsr_asm_enc_file_end(e, NSR_ASM_FILE_OK), NSR_OK);
	assert_int_equal(nsr_asm_enc_end(e), NSR_OK);
	nsr_asm_enc_free(e);
	nsr_buf_release(&s);
}

/* One hand-made DIRENTS record: the total, the index of its first name
 * and its names (NULL-terminated). */
struct rec {
	uint32_t total, first;
	const char *names[3];
};

/* Records following a directory's FILE record; xattr: an XATTR record
 * comes after them. */
struct seq {
	struct rec r[2];
	size_t n;
	int xattr;
};

/* frame_add - append a record of type with payload p[0..n) and a good
 * CRC. */
static void frame_add(struct nsr_buf *s, int type, const void *p, size_t n)
{
	uint8_t fr[12];
	uint32_t crc;

	memset(fr, 0, sizeof(fr));
	fr[0] = (uint8_t)type;
	nsr_put_u32(fr + 4, (uint32_t)n);
	crc = nsr_crc32c(nsr_crc32c(0, fr, 8), p, n);
	nsr_put_u32(fr + 8, crc);
	nsr_buf_add(s, fr, sizeof(fr));
	nsr_buf_add(s, p, n);
}

/* raw - append the DIRENTS record r. */
static void raw(struct nsr_buf *s, const struct rec *r)
{
	struct nsr_buf p;
	uint8_t t[4];

	nsr_buf_init(&p, 0);
	nsr_put_u32(t, r->total);
	nsr_buf_add(&p, t, 4);
	nsr_put_u32(t, r->first);
	nsr_buf_add(&p, t, 4);
	for (size_t i = 0; r->names[i] != NULL; i++) {
		size_t l = strlen(r->names[i]);

		t[0] = (uint8_t)(l >> 8);
		t[1] = (uint8_t)l;
		nsr_buf_add(&p, t, 2);
		nsr_buf_add(&p, r->names[i], l);
	}
	frame_add(s, NSR_ASM_REC_DIRENTS, p.data, p.len);
	nsr_buf_release(&p);
}

/* crafted - decode header, FILE of type, the records of q, FILE_END and
 * END; the decoder's verdict. */
static int crafted(int type, const struct seq *q)
{
	static const uint8_t x[] = {0, 1, 'u', 0, 0, 0, 1, 'v'};
	struct nsr_buf s, log;
	struct nsr_asm_enc *e;
	int rc;

	nsr_buf_init(&s, 0);
	nsr_buf_init(&log, 0);
	e = start(&s);
	assert_int_equal(file(e, "/d", type), NSR_OK);
	for (size_t i = 0; i < q->n; i++)
		raw(&s, &q->r[i]);
	if (q->xattr)
		frame_add(&s, NSR_ASM_REC_XATTR, x, sizeof(x));
	assert_int_equal(nsr_asm_enc_file_end(e, NSR_ASM_FILE_OK), NSR_OK);
	assert_int_equal(nsr_asm_enc_end(e), NSR_OK);
	nsr_asm_enc_free(e);
	rc = decode(&s, 1, &log);
	nsr_buf_release(&s);
	nsr_buf_release(&log);
	return rc;
}

/* test_decoder_refuses - order, count, names and placement checked. */
static void test_decoder_refuses(void **state)
{
	static const struct seq two = {
		{{3, 0, {"a", "b"}}, {3, 2, {"c"}}}, 2, 0};
	static const struct seq empty = {{{0, 0, {NULL}}}, 1, 0};
	static const struct seq refused[] = {
		{{{2, 1, {"a", "b"}}}, 1, 0},		     /* first at 1 */
		{{{4, 0, {"a", "b"}}, {4, 3, {"c"}}}, 2, 0}, /* a gap */
		{{{3, 0, {"a", "b"}}, {4, 2, {"c"}}}, 2, 0}, /* total moved */
		{{{3, 0, {"a", "b"}}}, 1, 0},		     /* short */
		{{{1, 0, {"a", "b"}}}, 1, 0},		     /* over */
		{{{2, 0, {"b", "a"}}}, 1, 0},		     /* unsorted */
		{{{3, 0, {"a", "b"}}, {3, 2, {"b"}}}, 2, 0}, /* across */
		{{{2, 0, {"a", "a"}}}, 1, 0},		     /* repeated */
		{{{1, 0, {"x/y"}}}, 1, 0},		     /* a slash */
		{{{1, 0, {".."}}}, 1, 0},		     /* dot-dot */
		{{{2, 0, {NULL}}}, 1, 0},		     /* no names */
		{{{0, 0, {NULL}}, {0, 0, {NULL}}}, 2, 0},    /* empty twice */
		{{{0, 0, {"a"}}}, 1, 0}, /* empty with one */
		{{{1, 0, {"c"}}}, 1, 1}, /* XATTR after */
	};

	NSR_UNUSED(state);
	assert_int_equal(crafted(NSR_ASM_DIR, &two), NSR_OK);
	assert_int_equal(crafted(NSR_ASM_DIR, &empty), NSR_OK);
	/* Only a directory has a list. */
	assert_int_equal(crafted(NSR_ASM_REG, &two), NSR_ERR_CORRUPT);
	assert_int_equal(crafted(NSR_ASM_FIFO, &empty), NSR_ERR_CORRUPT);
	for (size_t i = 0; i < NSR_ARRAY_SIZE(refused); i++)
		assert_int_equal(crafted(NSR_ASM_DIR, &refused[i]),
				 NSR_ERR_CORRUPT);
}

/* test_bit_flips - every flipped bit of a listed stream is refused. */
static void test_bit_flips(void **state)
{
	static const char *const ab[] = {"a", "b"};
	struct nsr_buf s, log;

	NSR_UNUSED(state);
	nsr_buf_init(&s, 0);
	nsr_buf_init(&log, 0);
	listed(&s, ab, 2);
	for (size_t bit = 0; bit < s.len * 8; bit++) {
		s.data[bit / 8] ^= (char)(1 << (bit % 8));
		assert_int_not_equal(decode(&s, 7, &log), NSR_OK);
		s.data[bit / 8] ^= (char)(1 << (bit % 8));
	}
	assert_int_equal(decode(&s, 7, &log), NSR_OK);
	nsr_buf_release(&s);
	nsr_buf_release(&log);
}

/* test_older_versions - a version 1 or 2 stream has no DIRENTS. */
static void test_older_versions(void **state)
{
	static const char *const ab[] = {"a", "b"};
	struct nsr_buf s, log;
	uint8_t *p;
	uint32_t len;

	NSR_UNUSED(state);
	nsr_buf_init(&s, 0);
	nsr_buf_init(&log, 0);
	listed(&s, ab, 2);
	p = (uint8_t *)s.data;
	len = nsr_get_u32(p + 4);
	assert_int_equal(decode(&s, 5, &log), NSR_OK);
	for (uint8_t v = 1; v <= 2; v++) {
		p[NSR_ASM_FRAME_LEN + 5] = v; /* HEADER: version at 4 */
		nsr_put_u32(p + 8, nsr_crc32c(nsr_crc32c(0, p, 8),
					      p + NSR_ASM_FRAME_LEN, len));
		assert_int_equal(decode(&s, 5, &log), NSR_ERR_CORRUPT);
	}
	nsr_buf_release(&s);
	nsr_buf_release(&log);
}

/* main - run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_many),
		cmocka_unit_test(test_encoder_misuse),
		cmocka_unit_test(test_decoder_refuses),
		cmocka_unit_test(test_bit_flips),
		cmocka_unit_test(test_older_versions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
