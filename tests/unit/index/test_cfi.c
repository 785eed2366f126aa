/*
 * test_cfi.c - the client file index: add/commit/lookup/delete, browse
 * times, reopen, one writer, leftovers of uncommitted save sets, large
 * save sets, damaged and torn record files, rebuild from a stream, and
 * the record decoders on truncated input.
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nsr/asm.h"
#include "nsr/buf.h"
#include "nsr/bytes.h"
#include "nsr/cfi.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "cfi_int.h" /* cfi_cat_put: a catalogue no writer makes */
#include "nsr_test.h"
#include "cfi_test.h"

/* ent - an entry with the given path, size and mtime. */
static struct nsr_cfi_entry ent(const char *path, int type, uint64_t size,
				int64_t mtime)
{
	struct nsr_cfi_entry e;

	memset(&e, 0, sizeof(e));
	e.path = path;
	e.type = type;
	e.mode = type == NSR_ASM_DIR ? 0755 : 0644;
	e.uid = 1;
	e.gid = 2;
	e.size = size;
	e.mtime = mtime;
	e.mtime_nsec = 5;
	e.offset = size * 3;
	return e;
}

/* two_savesets - a full at 100 and an incremental at 200. */
static void two_savesets(struct nsr_cfi *c)
{
	struct nsr_cfi_entry full[] = {
		ent("/", NSR_ASM_DIR, 0, 90),
		ent("/a", NSR_ASM_DIR, 0, 90),
		ent("/a/x", NSR_ASM_REG, 10, 91),
		ent("/a/y", NSR_ASM_REG, 20, 92),
		ent("/a/y/deeper", NSR_ASM_REG, 1, 92),
		ent("/b", NSR_ASM_REG, 30, 93),
	};
	struct nsr_cfi_entry incr[] = {
		ent("/a", NSR_ASM_DIR, 0, 190),
		ent("/a/x", NSR_ASM_REG, 11, 191),
		ent("/a/z", NSR_ASM_REG, 40, 192),
	};

	assert_int_equal(nsr_cfi_begin(c, 1, 100, "/"), NSR_OK);
	assert_int_equal(nsr_cfi_add(c, 1, full, 3), NSR_OK);
	assert_int_equal(nsr_cfi_add(c, 1, full + 3, 3), NSR_OK);
	assert_int_equal(nsr_cfi_commit(c, 1), NSR_OK);
	assert_int_equal(nsr_cfi_begin(c, 2, 200, "/"), NSR_OK);
	assert_int_equal(nsr_cfi_add(c, 2, incr, 3), NSR_OK);
	assert_int_equal(nsr_cfi_commit(c, 2), NSR_OK);
}

/* test_browse - browse times, find, delete, reopen and one writer. */
static void test_browse(void **state)
{
	char *root = nsr_test_tmpdir("cfi");
	struct nsr_cfi *c = NULL, *r = NULL, *w2 = NULL;
	struct nsr_buf b;

	NSR_UNUSED(state);
	nsr_buf_init(&b, 0);
	assert_int_equal(nsr_cfi_open(&c, root, "client1", 0),
			 NSR_ERR_NOTFOUND);
	assert_int_equal(nsr_cfi_open(&c, root, "client1", NSR_CFI_CREATE),
			 NSR_OK);
	two_savesets(c);
	assert_string_equal(cfi_test_ls(c, "/a", 50, &b), "");
	assert_string_equal(cfi_test_ls(c, "/a", 150, &b),
			    "1 /a/x 10\n1 /a/y 20\n");
	assert_string_equal(cfi_test_ls(c, "/a/", 250, &b),
			    "2 /a/x 11\n1 /a/y 20\n2 /a/z 40\n");
	assert_string_equal(cfi_test_ls(c, "/", 250, &b), "2 /a 0\n1 /b 30\n");
	nsr_buf_reset(&b);
	assert_int_equal(nsr_cfi_find(c, "/a/x", 1000, cfi_test_show, &b),
			 NSR_OK);
	assert_string_equal(b.data, "2 /a/x 11\n1 /a/x 10\n");
	nsr_buf_reset(&b);
	assert_int_equal(nsr_cfi_find(c, "/a/x", 199, cfi_test_show, &b),
			 NSR_OK);
	assert_string_equal(b.data, "1 /a/x 10\n");

	/* one writer at a time; readers need no lock */
	assert_int_equal(nsr_cfi_open(&w2, root, "client1", 0), NSR_ERR_BUSY);
	assert_null(w2);
	assert_int_equal(nsr_cfi_open(&r, root, "client1", NSR_CFI_RDONLY),
			 NSR_OK);
	assert_string_equal(cfi_test_ls(r, "/a", 250, &b),
			    "2 /a/x 11\n1 /a/y 20\n2 /a/z 40\n");
	assert_int_equal(nsr_cfi_begin(r, 9, 1, "/"), NSR_ERR_READONLY);
	nsr_cfi_close(r);

	/* errors */
	assert_int_equal(nsr_cfi_begin(c, 1, 300, "/"), NSR_ERR_EXISTS);
	assert_int_equal(nsr_cfi_add(c, 77, NULL, 0), NSR_ERR_NOTFOUND);
	assert_int_equal(nsr_cfi_delete(c, 77), NSR_ERR_NOTFOUND);

	/* delete the full: the incremental alone remains */
	assert_int_equal(nsr_cfi_delete(c, 1), NSR_OK);
	assert_string_equal(cfi_test_ls(c, "/a", 250, &b),
			    "2 /a/x 11\n2 /a/z 40\n");
	nsr_cfi_close(c);

	/* everything survives a reopen */
	assert_int_equal(nsr_cfi_open(&c, root, "client1", 0), NSR_OK);
	assert_string_equal(cfi_test_ls(c, "/a", 250, &b),
			    "2 /a/x 11\n2 /a/z 40\n");
	nsr_cfi_close(c);
	nsr_buf_release(&b);
	nsr_test_rmrf(root);
	free(root);
}

/* count_ss - count save sets. */
static int count_ss(void *ctx, const struct nsr_cfi_saveset *ss)
{
	NSR_UNUSED(ss);
	(*(int *)ctx)++;
	return 0;
}

/* test_uncommitted_dropped - uncommitted save sets vanish. */
static void test_uncommitted_dropped(void **state)
{
	char *root = nsr_test_tmpdir("cfi");
	struct nsr_cfi *c = NULL;
	struct nsr_cfi_entry e = ent("/tmp/f", NSR_ASM_REG, 1, 1);
	struct stat st;
	char *f5;
	int n = 0;

	NSR_UNUSED(state);
	assert_true(asprintf(&f5, "%s/index/c2/ss-5.rec", root) > 0);
	assert_int_equal(nsr_cfi_open(&c, root, "c2", NSR_CFI_CREATE), NSR_OK);
	assert_int_equal(nsr_cfi_busy(c), 0);
	assert_int_equal(nsr_cfi_begin(c, 5, 10, "/tmp"), NSR_OK);
	assert_int_equal(nsr_cfi_busy(c), 1);
	assert_int_equal(nsr_cfi_add(c, 5, &e, 1), NSR_OK);
	assert_int_equal(nsr_cfi_abort(c, 5), NSR_OK);
	assert_int_equal(nsr_cfi_busy(c), 0);
	assert_int_equal(stat(f5, &st), -1);
	/* a begun save set of a process that dies leaves a file behind */
	assert_int_equal(nsr_cfi_begin(c, 5, 10, "/tmp"), NSR_OK);
	assert_int_equal(nsr_cfi_add(c, 5, &e, 1), NSR_OK);
	assert_int_equal(nsr_cfi_commit(c, 5), NSR_OK);
	assert_int_equal(nsr_cfi_delete(c, 5), NSR_OK);
	assert_int_equal(nsr_cfi_begin(c, 6, 10, "/tmp"), NSR_OK);
	nsr_cfi_close(c); /* drops 6 */
	assert_int_equal(nsr_fsync_dir(f5, 0), NSR_OK);
	assert_int_equal(nsr_file_replace(f5, "leftover", 8, 0600), NSR_OK);
	assert_int_equal(nsr_cfi_open(&c, root, "c2", 0), NSR_OK);
	assert_int_equal(stat(f5, &st), -1); /* removed as a leftover */
	assert_int_equal(nsr_cfi_savesets(c, count_ss, &n), NSR_OK);
	assert_int_equal(n, 0);
	nsr_cfi_close(c);
	free(f5);
	nsr_test_rmrf(root);
	free(root);
}

struct seq {
	uint64_t n;
	int bad;
};

/* check_seq - check entries come back in order. */
static int check_seq(void *ctx, const struct nsr_cfi_saveset *ss,
		     const struct nsr_cfi_entry *e)
{
	struct seq *s = ctx;
	char want[64];

	NSR_UNUSED(ss);
	snprintf(want, sizeof(want), "/big/dir%03" PRIu64 "/file%06" PRIu64,
		 s->n / 1000, s->n);
	if (strcmp(e->path, want) != 0 || e->size != s->n)
		s->bad++;
	s->n++;
	return 0;
}

/* test_large_and_damage - large save sets, torn tails and damage. */
static void test_large_and_damage(void **state)
{
	char *root = nsr_test_tmpdir("cfi");
	struct nsr_cfi *c = NULL;
	struct nsr_cfi_entry batch[100];
	char paths[100][64];
	struct seq s = { 0, 0 };
	char *f;
	int fd;
	off_t mid;
	const uint64_t total = 30000;

	NSR_UNUSED(state);
	assert_int_equal(nsr_cfi_open(&c, root, "big", NSR_CFI_CREATE), NSR_OK);
	assert_int_equal(nsr_cfi_begin(c, 42, 1000, "/big"), NSR_OK);
	for (uint64_t i = 0; i < total; i += 100) {
		for (int k = 0; k < 100; k++) {
			snprintf(paths[k], sizeof(paths[k]),
				 "/big/dir%03" PRIu64 "/file%06" PRIu64,
				 (i + k) / 1000, i + k);
			batch[k] = ent(paths[k], NSR_ASM_REG, i + k, 1);
		}
		assert_int_equal(nsr_cfi_add(c, 42, batch, 100), NSR_OK);
	}
	assert_int_equal(nsr_cfi_commit(c, 42), NSR_OK);
	assert_int_equal(nsr_cfi_entries(c, 42, check_seq, &s), NSR_OK);
	assert_int_equal(s.n, total);
	assert_int_equal(s.bad, 0);

	/* bytes past the committed length (a torn append) are not seen */
	assert_true(asprintf(&f, "%s/index/big/ss-42.rec", root) > 0);
	fd = open(f, O_WRONLY);
	assert_true(fd >= 0);
	mid = lseek(fd, 0, SEEK_END) / 2;
	assert_int_equal(pwrite(fd, "\0\0\0\x40garbage", 11,
				lseek(fd, 0, SEEK_END)), 11);
	s.n = 0;
	assert_int_equal(nsr_cfi_entries(c, 42, check_seq, &s), NSR_OK);
	assert_int_equal(s.n, total);
	/* a flipped byte inside is a checksum error */
	assert_int_equal(pwrite(fd, "Z", 1, mid), 1);
	close(fd);
	s.n = 0;
	assert_int_equal(nsr_cfi_entries(c, 42, check_seq, &s),
			 NSR_ERR_CHECKSUM);
	nsr_cfi_close(c);
	free(f);
	nsr_test_rmrf(root);
	free(root);
}

/* count_lines_n - lines in a text. */
static int count_lines_n(const char *t)
{
	int n = 0;

	for (; *t; t++)
		n += *t == '\n';
	return n;
}

/* mem_sink - cfi_test_show a stream in memory. */
static int mem_sink(void *ctx, const void *p, size_t n)
{
	return nsr_buf_add(ctx, p, n);
}

/* offs - record FILE offsets as "offset path\n". */
static int offs(void *ctx, const struct nsr_asm_file *f, uint64_t off)
{
	return nsr_buf_addf(ctx, "%" PRIu64 " %s\n", off, f->path);
}

/* collect_off - render entry offsets. */
static int collect_off(void *ctx, const struct nsr_cfi_saveset *ss,
		       const struct nsr_cfi_entry *e)
{
	NSR_UNUSED(ss);
	return nsr_buf_addf(ctx, "%" PRIu64 " %s\n", e->offset, e->path);
}

/* test_rebuild_from_stream - rebuild an index from a stream. */
static void test_rebuild_from_stream(void **state)
{
	char *root = nsr_test_tmpdir("cfi");
	struct nsr_cfi *c = NULL;
	struct nsr_cfi_rebuild *rb = NULL;
	struct nsr_asm_enc *e = NULL;
	struct nsr_asm_dec *d = NULL;
	struct nsr_asm_dec_ops ops = { 0 };
	struct nsr_asm_header h = { 0, 0, 321, 5000, "c3", "/srv" };
	struct nsr_asm_file f;
	struct nsr_buf s, want, got;
	char name[64];

	NSR_UNUSED(state);
	nsr_buf_init(&s, 0);
	nsr_buf_init(&want, 0);
	nsr_buf_init(&got, 0);
	assert_int_equal(nsr_asm_enc_new(&e, NSR_ASM_CK_CRC32C, mem_sink, &s),
			 NSR_OK);
	assert_int_equal(nsr_asm_enc_header(e, &h), NSR_OK);
	for (int i = 0; i < 1200; i++) {
		memset(&f, 0, sizeof(f));
		snprintf(name, sizeof(name), "/srv/f%04d", i);
		f.type = NSR_ASM_REG;
		f.path = name;
		f.mode = 0600;
		f.size = (uint64_t)(i % 7);
		assert_int_equal(nsr_asm_enc_file(e, &f, NULL), NSR_OK);
		assert_int_equal(nsr_asm_enc_data(e, "abcdefg", f.size),
				 NSR_OK);
		assert_int_equal(nsr_asm_enc_file_end(e, 0), NSR_OK);
	}
	assert_int_equal(nsr_asm_enc_end(e), NSR_OK);
	nsr_asm_enc_free(e);
	ops.file = offs;
	assert_int_equal(nsr_asm_dec_new(&d, &ops, &want), NSR_OK);
	assert_int_equal(nsr_asm_dec_feed(d, s.data, s.len), NSR_OK);
	nsr_asm_dec_free(d);

	assert_int_equal(nsr_cfi_open(&c, root, "c3", NSR_CFI_CREATE), NSR_OK);
	/* a cut stream commits nothing */
	assert_int_equal(nsr_cfi_rebuild_new(&rb, c, 0), NSR_OK);
	assert_int_equal(nsr_cfi_rebuild_feed(rb, s.data, s.len / 2), NSR_OK);
	assert_int_equal(nsr_cfi_rebuild_finish(rb), NSR_ERR_TRUNCATED);
	nsr_cfi_rebuild_free(rb);
	assert_int_equal(nsr_cfi_entries(c, 321, collect_off, &got),
			 NSR_ERR_NOTFOUND);
	/* the whole stream, in odd pieces */
	assert_int_equal(nsr_cfi_rebuild_new(&rb, c, 0), NSR_OK);
	for (size_t i = 0; i < s.len; i += 333)
		assert_int_equal(nsr_cfi_rebuild_feed(rb, s.data + i,
						      NSR_MIN(333, s.len - i)),
				 NSR_OK);
	assert_int_equal(nsr_cfi_rebuild_finish(rb), NSR_OK);
	nsr_cfi_rebuild_free(rb);
	assert_int_equal(nsr_cfi_entries(c, 321, collect_off, &got), NSR_OK);
	assert_string_equal(got.data, want.data);

	/* a damaged stream: strictly nothing, with resync the intact rest */
	s.data[s.len / 2] ^= 0x55;
	s.data[s.len / 2 + 1] ^= 0x55;
	assert_int_equal(nsr_cfi_rebuild_new(&rb, c, 322), NSR_OK);
	assert_int_not_equal(nsr_cfi_rebuild_feed(rb, s.data, s.len), NSR_OK);
	nsr_cfi_rebuild_free(rb);
	assert_int_equal(nsr_cfi_entries(c, 322, collect_off, &got),
			 NSR_ERR_NOTFOUND);
	assert_int_equal(nsr_cfi_rebuild_new(&rb, c, 322), NSR_OK);
	nsr_cfi_rebuild_resync(rb, 1);
	assert_int_equal(nsr_cfi_rebuild_feed(rb, s.data, s.len), NSR_OK);
	assert_int_equal(nsr_cfi_rebuild_finish(rb), NSR_ERR_CORRUPT);
	nsr_cfi_rebuild_free(rb);
	nsr_buf_reset(&got);
	assert_int_equal(nsr_cfi_entries(c, 322, collect_off, &got), NSR_OK);
	/* at most the file hit by the damage is missing */
	assert_true(count_lines_n(got.data) >= 1199);
	nsr_cfi_close(c);
	nsr_buf_release(&s);
	nsr_buf_release(&want);
	nsr_buf_release(&got);
	nsr_test_rmrf(root);
	free(root);
}

/* collect_split - "path size mode" of each entry. */
static int collect_split(void *ctx, const struct nsr_cfi_saveset *ss,
			 const struct nsr_cfi_entry *e)
{
	NSR_UNUSED(ss);
	return nsr_buf_addf(ctx, "%s %" PRIu64 " %o\n", e->path, e->size,
			    (unsigned)e->mode);
}

/* test_rebuild_split - a split file's head is its one entry, with its
 * total size and NSR_CFI_SPLIT, which the record files keep; its parts
 * are no entries. */
static void test_rebuild_split(void **state)
{
	char *root = nsr_test_tmpdir("cfi");
	struct nsr_cfi *c = NULL;
	struct nsr_cfi_rebuild *rb = NULL;
	struct nsr_asm_enc *e = NULL;
	struct nsr_asm_header h = { 0, 0, 331, 5000, "c4", "/srv" };
	struct nsr_asm_file f;
	struct nsr_cfi_entry ent;
	struct nsr_buf s, got;
	uint8_t data[100] = { 0 };

	NSR_UNUSED(state);
	nsr_buf_init(&s, 0);
	nsr_buf_init(&got, 0);
	assert_int_equal(nsr_asm_enc_new(&e, NSR_ASM_CK_CRC32C, mem_sink, &s),
			 NSR_OK);
	assert_int_equal(nsr_asm_enc_split(e), NSR_OK);
	assert_int_equal(nsr_asm_enc_header(e, &h), NSR_OK);
	memset(&f, 0, sizeof(f));
	f.type = NSR_ASM_REG;
	f.path = "/srv/big";
	f.mode = 0644;
	f.nlink = 1;
	f.nparts = 2;
	f.total = 150;
	assert_int_equal(nsr_cfi_entry_from_file(&ent, &f, 0), 1);
	assert_int_equal(ent.size, 150);
	assert_int_equal(ent.mode, 0644 | NSR_CFI_SPLIT);
	assert_int_equal(nsr_asm_enc_file(e, &f, NULL), NSR_OK);
	assert_int_equal(nsr_asm_enc_file_end(e, NSR_ASM_FILE_OK), NSR_OK);
	for (uint32_t i = 1; i <= 2; i++) {
		f.part = i;
		f.part_off = (i - 1) * 100;
		f.size = i == 1 ? 100 : 50;
		assert_int_equal(nsr_cfi_entry_from_file(&ent, &f, 0), 0);
		assert_int_equal(nsr_asm_enc_file(e, &f, NULL), NSR_OK);
		assert_int_equal(nsr_asm_enc_data(e, data, f.size), NSR_OK);
		assert_int_equal(nsr_asm_enc_file_end(e, NSR_ASM_FILE_OK),
				 NSR_OK);
	}
	assert_int_equal(nsr_asm_enc_end(e), NSR_OK);
	nsr_asm_enc_free(e);

	assert_int_equal(nsr_cfi_open(&c, root, "c4", NSR_CFI_CREATE), NSR_OK);
	assert_int_equal(nsr_cfi_rebuild_new(&rb, c, 0), NSR_OK);
	assert_int_equal(nsr_cfi_rebuild_feed(rb, s.data, s.len), NSR_OK);
	assert_int_equal(nsr_cfi_rebuild_finish(rb), NSR_OK);
	nsr_cfi_rebuild_free(rb);
	assert_int_equal(nsr_cfi_entries(c, 331, collect_split, &got), NSR_OK);
	assert_string_equal(got.data, "/srv/big 150 200644\n");
	nsr_cfi_close(c);
	/* and read back from the record files, after a reopen */
	nsr_buf_reset(&got);
	assert_int_equal(nsr_cfi_open(&c, root, "c4", NSR_CFI_RDONLY), NSR_OK);
	assert_int_equal(nsr_cfi_entries(c, 331, collect_split, &got), NSR_OK);
	assert_string_equal(got.data, "/srv/big 150 200644\n");
	nsr_cfi_close(c);
	nsr_buf_release(&s);
	nsr_buf_release(&got);
	nsr_test_rmrf(root);
	free(root);
}

/* test_decoders_truncated - decoders refuse cut and damaged images. */
static void test_decoders_truncated(void **state)
{
	char *root = nsr_test_tmpdir("cfi");
	struct nsr_cfi *c = NULL;
	struct nsr_buf img, cat;
	char *f;
	int n = 0;

	NSR_UNUSED(state);
	nsr_buf_init(&img, 0);
	nsr_buf_init(&cat, 0);
	assert_int_equal(nsr_cfi_open(&c, root, "c4", NSR_CFI_CREATE), NSR_OK);
	two_savesets(c);
	nsr_cfi_close(c);
	assert_true(asprintf(&f, "%s/index/c4/ss-1.rec", root) > 0);
	assert_int_equal(nsr_file_read(f, &img, 1 << 20), NSR_OK);
	free(f);
	assert_true(asprintf(&f, "%s/index/c4/catalog", root) > 0);
	assert_int_equal(nsr_file_read(f, &cat, 1 << 20), NSR_OK);
	free(f);
	assert_int_equal(nsr_cfi_decode_file(img.data, img.len, NULL, NULL),
			 NSR_OK);
	/* Version 3 ends with its directory table and footer: any cut is
	 * detected, and so is any flipped bit. */
	for (size_t i = 0; i < img.len; i++) {
		assert_int_not_equal(
			nsr_cfi_decode_file(img.data, i, NULL, NULL), NSR_OK);
		img.data[i] ^= 0x10;
		assert_int_not_equal(
			nsr_cfi_decode_file(img.data, img.len, NULL, NULL),
			NSR_OK);
		img.data[i] ^= 0x10;
	}
	/* A version 2 file has no end marker (the catalogue keeps its
	 * length): a cut is detected unless it falls on a record boundary. */
	cfi_test_to_v2(&img);
	assert_int_equal(nsr_cfi_decode_file(img.data, img.len, NULL, NULL),
			 NSR_OK);
	for (size_t i = 0, next = 28; i < img.len; i++) {
		int rc = nsr_cfi_decode_file(img.data, i, NULL, NULL);

		if (i == next) {
			assert_int_equal(rc, NSR_OK);
			next += 8 + nsr_get_u32((uint8_t *)img.data + i);
		} else {
			assert_int_not_equal(rc, NSR_OK);
		}
	}
	assert_int_equal(nsr_cfi_decode_catalog(cat.data, cat.len, count_ss,
						&n), NSR_OK);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < cat.len; i++)
		if (nsr_cfi_decode_catalog(cat.data, i, NULL, NULL) == NSR_OK)
			fail_msg(
				"truncated catalogue of %zu/%zu bytes accepted",
				i, cat.len);
	/* a damaged catalogue is refused at open */
	cat.data[13] ^= 1;
	assert_true(asprintf(&f, "%s/index/c4/catalog", root) > 0);
	assert_int_equal(nsr_file_replace(f, cat.data, cat.len, 0600), NSR_OK);
	free(f);
	assert_int_equal(nsr_cfi_open(&c, root, "c4", 0), NSR_ERR_CHECKSUM);
	/* bad client names */
	assert_int_equal(nsr_cfi_open(&c, root, "../x", NSR_CFI_CREATE),
			 NSR_ERR_INVAL);
	assert_int_equal(nsr_cfi_open(&c, root, "", NSR_CFI_CREATE),
			 NSR_ERR_INVAL);
	assert_int_equal(nsr_cfi_open(&c, root, ".hidden", NSR_CFI_CREATE),
			 NSR_ERR_INVAL);
	nsr_buf_release(&img);
	nsr_buf_release(&cat);
	nsr_test_rmrf(root);
	free(root);
}

/* test_spill_decoder - spill records (cfi_spill_put) decode to what was
 * put, with their ssid and savetime; every cut is refused unless it
 * falls on a record boundary, and every flipped bit is refused. */
static void test_spill_decoder(void **state)
{
	const char *paths[] = {"/s", "/s/a", "/s/a/a-much-longer-name"};
	struct nsr_cfi_entry e;
	struct nsr_buf img, got;

	NSR_UNUSED(state);
	nsr_buf_init(&img, 0);
	nsr_buf_init(&got, 0);
	memset(&e, 0, sizeof(e));
	e.type = NSR_ASM_REG;
	e.mode = 0644;
	for (size_t i = 0; i < NSR_ARRAY_SIZE(paths); i++) {
		e.path = paths[i];
		e.size = 10 * i;
		assert_int_equal(cfi_spill_put(&img, 7 + i, -5, &e), NSR_OK);
	}
	e.path = "";
	assert_int_equal(cfi_spill_put(&img, 1, 1, &e), NSR_ERR_INVAL);
	assert_int_equal(nsr_cfi_decode_spill(img.data, img.len,
					      cfi_test_show, &got),
			 NSR_OK);
	assert_string_equal(got.data, "7 /s 0\n8 /s/a 10\n"
				      "9 /s/a/a-much-longer-name 20\n");
	for (size_t i = 0, next = 0; i < img.len; i++) {
		int rc = nsr_cfi_decode_spill(img.data, i, cfi_test_count,
					      &(int){0});

		if (i == next) {
			assert_int_equal(rc, NSR_OK);
			next += 8 + nsr_get_u32((uint8_t *)img.data + i);
		} else {
			assert_true(rc == NSR_ERR_TRUNCATED ||
				    rc == NSR_ERR_CORRUPT);
		}
		img.data[i] ^= 0x10;
		assert_int_not_equal(nsr_cfi_decode_spill(img.data, img.len,
							  cfi_test_count,
							  &(int){0}),
				     NSR_OK);
		img.data[i] ^= 0x10;
	}
	nsr_buf_release(&img);
	nsr_buf_release(&got);
}

/* main - run the tests. */
/* A catalogue naming one save set twice is refused at open. */
static void test_duplicate_ssid_refused(void **state)
{
	char *root = nsr_test_tmpdir("cfi-dup");
	struct nsr_cfi_entry e = ent("/a", NSR_ASM_REG, 1, 1);
	struct nsr_cfi *c = NULL;
	struct cfi_ss *ss = NULL, *three;
	struct nsr_buf b;
	size_t n = 0;
	char path[600];

	NSR_UNUSED(state);
	assert_int_equal(nsr_cfi_open(&c, root, "dup", NSR_CFI_CREATE), NSR_OK);
	for (uint64_t id = 7; id <= 9; id += 2) {
		assert_int_equal(nsr_cfi_begin(c, id, (int64_t)id * 100, "/a"),
				 NSR_OK);
		assert_int_equal(nsr_cfi_add(c, id, &e, 1), NSR_OK);
		assert_int_equal(nsr_cfi_commit(c, id), NSR_OK);
	}
	nsr_cfi_close(c);
	/* Read the catalogue back and name save set 7 a second time, last,
	 * so the two are not neighbours in any order. */
	snprintf(path, sizeof(path), "%s/index/dup/catalog", root);
	nsr_buf_init(&b, 0);
	assert_int_equal(nsr_file_read(path, &b, 1 << 20), NSR_OK);
	assert_int_equal(cfi_cat_get((const uint8_t *)b.data, b.len, &ss, &n,
				     NULL, NULL),
			 NSR_OK);
	assert_int_equal(n, 2);
	three = calloc(3, sizeof(*three));
	assert_non_null(three);
	memcpy(three, ss, 2 * sizeof(*ss));
	three[2] = ss[0].ssid == 7 ? ss[0] : ss[1];
	three[2].savetime = 900;
	nsr_buf_reset(&b);
	assert_int_equal(cfi_cat_put(&b, three, 3, NULL, 0), NSR_OK);
	assert_int_equal(nsr_file_replace(path, b.data, b.len, 0600), NSR_OK);
	c = NULL;
	assert_int_equal(nsr_cfi_open(&c, root, "dup", 0), NSR_ERR_CORRUPT);
	assert_null(c);
	/* The first two alone open again. */
	nsr_buf_reset(&b);
	assert_int_equal(cfi_cat_put(&b, three, 2, NULL, 0), NSR_OK);
	assert_int_equal(nsr_file_replace(path, b.data, b.len, 0600), NSR_OK);
	assert_int_equal(nsr_cfi_open(&c, root, "dup", 0), NSR_OK);
	nsr_cfi_close(c);
	free(three);
	cfi_ss_free(ss, n);
	nsr_buf_release(&b);
	nsr_test_rmrf(root);
	free(root);
}

/* put_table - give save set 1 of client "tab" (two_savesets) a new
 * directory table: every record under its key, but with wrong = 1
 * "/a/y/deeper" under "/a", with wrong = 2 no "/b"; the catalogue's
 * length follows. */
static void put_table(const char *root, int wrong)
{
	struct nsr_buf img, cat;
	struct cfi_dirmap *m = cfi_dirmap_new();
	struct cfi_ss *ss = NULL;
	char *rp, *cp;
	size_t n = 0, at = 28, end;
	char path[64];

	assert_non_null(m);
	assert_true(asprintf(&rp, "%s/index/tab/ss-1.rec", root) > 0);
	assert_true(asprintf(&cp, "%s/index/tab/catalog", root) > 0);
	nsr_buf_init(&img, 0);
	nsr_buf_init(&cat, 0);
	assert_int_equal(nsr_file_read(rp, &img, 1 << 20), NSR_OK);
	end = (size_t)nsr_get_u64((uint8_t *)img.data + img.len - 20);
	for (; at < end; at += 8 + nsr_get_u32((uint8_t *)img.data + at)) {
		const uint8_t *r = (uint8_t *)img.data + at + 4;
		struct cfi_blk_rd rd;
		size_t k;

		assert_int_equal(cfi_blk_open(&rd, r, nsr_get_u32(r - 4)),
				 NSR_OK);
		k = rd.klen;
		memcpy(path, rd.key, k);
		path[k] = '\0';
		if (wrong == 1 && strcmp(path, "/a/y") == 0)
			k = 2; /* "/a/y/deeper" under "/a" */
		/* the last block holds "/b" alone */
		if (wrong == 2 && at + 8 + nsr_get_u32(r - 4) == end)
			continue;
		assert_int_equal(cfi_dirmap_add(m, path, k, 0, at), NSR_OK);
	}
	nsr_buf_setlen(&img, end);
	assert_int_equal(cfi_dirmap_put(m, &img, end), NSR_OK);
	cfi_dirmap_free(m);
	assert_int_equal(nsr_file_replace(rp, img.data, img.len, 0600), NSR_OK);
	assert_int_equal(nsr_file_read(cp, &cat, 1 << 20), NSR_OK);
	assert_int_equal(cfi_cat_get((uint8_t *)cat.data, cat.len, &ss, &n,
				     NULL, NULL),
			 NSR_OK);
	for (size_t i = 0; i < n; i++)
		if (ss[i].ssid == 1)
			ss[i].length = img.len;
	nsr_buf_reset(&cat);
	assert_int_equal(cfi_cat_put(&cat, ss, n, NULL, 0), NSR_OK);
	assert_int_equal(nsr_file_replace(cp, cat.data, cat.len, 0600), NSR_OK);
	cfi_ss_free(ss, n);
	nsr_buf_release(&img);
	nsr_buf_release(&cat);
	free(rp);
	free(cp);
}

/* test_odd_paths - paths whose key does not rebuild them in a block
 * ("//x", "a//b") and paths without a '/' or with a trailing one are
 * stored and found as given, in saved order, and listed as before. */
static void test_odd_paths(void **state)
{
	static const char *paths[] = {"/", "//x", "/a", "/a//b", "/a/c",
				      "rel", "rel/y", "/a/d/", "/a/e"};
	char *root = nsr_test_tmpdir("cfi-odd");
	struct nsr_cfi_entry e[NSR_ARRAY_SIZE(paths)];
	struct nsr_cfi *c = NULL;
	struct nsr_buf b;
	size_t problems = 9;
	int n;

	NSR_UNUSED(state);
	nsr_buf_init(&b, 0);
	for (size_t i = 0; i < NSR_ARRAY_SIZE(paths); i++)
		e[i] = ent(paths[i], NSR_ASM_REG, i + 1, 1000 - (int64_t)i);
	assert_int_equal(nsr_cfi_open(&c, root, "odd", NSR_CFI_CREATE), NSR_OK);
	assert_int_equal(nsr_cfi_begin(c, 1, 100, "/"), NSR_OK);
	assert_int_equal(nsr_cfi_add(c, 1, e, NSR_ARRAY_SIZE(e)), NSR_OK);
	assert_int_equal(nsr_cfi_commit(c, 1), NSR_OK);
	assert_int_equal(nsr_cfi_entries(c, 1, cfi_test_show, &b), NSR_OK);
	assert_string_equal(b.data, "1 / 1\n1 //x 2\n1 /a 3\n1 /a//b 4\n"
				    "1 /a/c 5\n1 rel 6\n1 rel/y 7\n"
				    "1 /a/d/ 8\n1 /a/e 9\n");
	for (size_t i = 0; i < NSR_ARRAY_SIZE(paths); i++) {
		n = 0;
		assert_int_equal(nsr_cfi_find(c, paths[i], 200, cfi_test_count,
					      &n),
				 NSR_OK);
		/* a trailing '/' is trimmed from what is looked for */
		assert_int_equal(n, strcmp(paths[i], "/a/d/") == 0 ? 0 : 1);
	}
	assert_string_equal(cfi_test_ls(c, "/a", 200, &b),
			    "1 /a/c 5\n1 /a/e 9\n");
	assert_string_equal(cfi_test_ls(c, "/", 200, &b), "1 /a 3\n");
	assert_string_equal(cfi_test_ls(c, "rel", 200, &b), "1 rel/y 7\n");
	assert_int_equal(nsr_cfi_check(c, NULL, NULL, &problems), NSR_OK);
	assert_int_equal(problems, 0);
	nsr_cfi_close(c);
	nsr_buf_release(&b);
	nsr_test_rmrf(root);
	free(root);
}

/* note_problem - keep the last problem's text (nsr_cfi_check). */
static void note_problem(void *ctx, uint64_t ssid, const char *what)
{
	snprintf(ctx, 128, "%" PRIu64 " %s", ssid, what);
}

/* test_bad_table - a directory table that names a record under the
 * wrong directory, or misses one, is found by nsr_cfi_check, and a
 * browse through the wrong entry fails instead of showing it; the same
 * table rebuilt right passes (the rewrite itself is sound). */
static void test_bad_table(void **state)
{
	char *root = nsr_test_tmpdir("cfi-tab");
	struct nsr_cfi *c = NULL;
	struct nsr_buf b;
	char what[128];
	size_t problems;

	NSR_UNUSED(state);
	nsr_buf_init(&b, 0);
	assert_int_equal(nsr_cfi_open(&c, root, "tab", NSR_CFI_CREATE), NSR_OK);
	two_savesets(c);
	nsr_cfi_close(c);
	for (int wrong = 0; wrong <= 2; wrong++) {
		put_table(root, wrong);
		assert_int_equal(nsr_cfi_open(&c, root, "tab", 0), NSR_OK);
		what[0] = '\0';
		assert_int_equal(nsr_cfi_check(c, note_problem, what,
					       &problems), NSR_OK);
		assert_int_equal(problems, wrong ? 1 : 0);
		if (wrong)
			assert_string_equal(what, "1 directory table: "
					    "data is corrupt");
		nsr_buf_reset(&b);
		assert_int_equal(nsr_cfi_list_dir(c, "/a", 150, cfi_test_show,
						  &b),
				 wrong == 1 ? NSR_ERR_CORRUPT : NSR_OK);
		if (wrong != 1)
			assert_string_equal(b.data, "1 /a/x 10\n1 /a/y 20\n");
		nsr_cfi_close(c);
	}
	nsr_buf_release(&b);
	nsr_test_rmrf(root);
	free(root);
}

/* add_client - note a client name (nsr_cfi_clients) in a buffer. */
static int add_client(void *ctx, const char *client)
{
	return nsr_buf_addf(ctx, "%s,", client);
}

/* test_check_levels - level 1 finds a cut record file and a damaged
 * table without reading records, but not a flipped byte inside a
 * record; level 6 finds that too; bad levels are refused; the clients
 * with an index are listed, sorted. */
static void test_check_levels(void **state)
{
	char *root = nsr_test_tmpdir("cfi-lvl"), *f;
	struct nsr_cfi *c = NULL;
	struct nsr_buf b;
	char what[128];
	size_t problems;
	off_t size;
	int fd;

	NSR_UNUSED(state);
	nsr_buf_init(&b, 0);
	assert_int_equal(nsr_cfi_clients(root, add_client, &b),
			 NSR_ERR_NOTFOUND);
	assert_int_equal(nsr_cfi_open(&c, root, "zed", NSR_CFI_CREATE), NSR_OK);
	nsr_cfi_close(c);
	assert_int_equal(nsr_cfi_open(&c, root, "lvl", NSR_CFI_CREATE), NSR_OK);
	two_savesets(c);
	assert_int_equal(nsr_cfi_check_level(c, 0, NULL, NULL, &problems),
			 NSR_ERR_INVAL);
	assert_int_equal(nsr_cfi_check_level(c, 7, NULL, NULL, &problems),
			 NSR_ERR_INVAL);
	for (int level = 1; level <= 6; level += 5) {
		assert_int_equal(nsr_cfi_check_level(c, level, NULL, NULL,
						     &problems), NSR_OK);
		assert_int_equal(problems, 0);
	}
	nsr_cfi_close(c);
	assert_int_equal(nsr_cfi_clients(root, add_client, &b), NSR_OK);
	assert_string_equal(b.data, "lvl,zed,");
	assert_true(asprintf(&f, "%s/index/lvl/ss-1.rec", root) > 0);
	fd = open(f, O_RDWR);
	assert_true(fd >= 0);
	size = lseek(fd, 0, SEEK_END);
	/* a byte inside the first record: only the full check sees it */
	assert_int_equal(pwrite(fd, "Z", 1, 40), 1);
	assert_int_equal(nsr_cfi_open(&c, root, "lvl", NSR_CFI_RDONLY),
			 NSR_OK);
	assert_int_equal(nsr_cfi_check_level(c, 1, NULL, NULL, &problems),
			 NSR_OK);
	assert_int_equal(problems, 0);
	assert_int_equal(nsr_cfi_check_level(c, 6, note_problem, what,
					     &problems), NSR_OK);
	assert_int_equal(problems, 1);
	assert_string_equal(what, "1 record file: checksum mismatch");
	/* the table's last byte, then a cut: level 1 sees both */
	assert_int_equal(pwrite(fd, "\xff", 1, size - 25), 1);
	assert_int_equal(nsr_cfi_check_level(c, 1, note_problem, what,
					     &problems), NSR_OK);
	assert_int_equal(problems, 1);
	assert_string_equal(what, "1 record file: checksum mismatch");
	assert_int_equal(ftruncate(fd, size - 1), 0);
	assert_int_equal(nsr_cfi_check_level(c, 1, note_problem, what,
					     &problems), NSR_OK);
	assert_int_equal(problems, 1);
	assert_string_equal(what, "1 record file: truncated input");
	close(fd);
	nsr_cfi_close(c);
	free(f);
	nsr_buf_release(&b);
	nsr_test_rmrf(root);
	free(root);
}

/* test_crosscheck - the index's save sets (1 and 2) against lists from
 * the media database: equal, one missing on either side, repeats. */
static void test_crosscheck(void **state)
{
	static const uint64_t same[] = {1, 1, 2}, fewer[] = {2},
			      more[] = {0, 1, 2, 2, 5};
	char *root = nsr_test_tmpdir("cfi-xc");
	struct nsr_cfi *c = NULL;
	char what[128];
	size_t problems = 9;

	NSR_UNUSED(state);
	assert_int_equal(nsr_cfi_open(&c, root, "xc", NSR_CFI_CREATE), NSR_OK);
	two_savesets(c);
	assert_int_equal(nsr_cfi_crosscheck(c, same, 3, NULL, NULL,
					    &problems), NSR_OK);
	assert_int_equal(problems, 0);
	assert_int_equal(nsr_cfi_crosscheck(c, fewer, 1, note_problem, what,
					    &problems), NSR_OK);
	assert_int_equal(problems, 1);
	assert_string_equal(what, "1 in the index, not a browsable save set "
				  "in the media database");
	assert_int_equal(nsr_cfi_crosscheck(c, more, 5, note_problem, what,
					    &problems), NSR_OK);
	assert_int_equal(problems, 2);
	assert_string_equal(what, "5 browsable in the media database, not in "
				  "the index");
	assert_int_equal(nsr_cfi_crosscheck(c, NULL, 0, NULL, NULL,
					    &problems), NSR_OK);
	assert_int_equal(problems, 2);
	nsr_cfi_close(c);
	nsr_test_rmrf(root);
	free(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_browse),
		cmocka_unit_test(test_uncommitted_dropped),
		cmocka_unit_test(test_large_and_damage),
		cmocka_unit_test(test_rebuild_from_stream),
		cmocka_unit_test(test_rebuild_split),
		cmocka_unit_test(test_decoders_truncated),
		cmocka_unit_test(test_spill_decoder),
		cmocka_unit_test(test_duplicate_ssid_refused),
		cmocka_unit_test(test_bad_table),
		cmocka_unit_test(test_odd_paths),
		cmocka_unit_test(test_check_levels),
		cmocka_unit_test(test_crosscheck),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
