/*
 * test_cfi_pit.c - browsing the client file index as of a time across a
 * full/incremental chain whose save sets record directory entry lists:
 * deletions, renames of files and directories, a name that comes back,
 * a save set without lists after the newest list, lists in pieces, bad
 * pieces refused, lists rebuilt from a stream's DIRENTS, the record
 * decoder on list records, the lists gone with their save set, and
 * pages of a listing served from the listing the handle keeps; the
 * queries kept for paging (versions, find by name, a save set's entries),
 * in memory and spilled to a file, and pages of either in any order.
 */
#include "nsr/compat.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nsr/asm.h"
#include "nsr/buf.h"
#include "nsr/bytes.h"
#include "nsr/cfi.h"
#include "nsr/crc32c.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr_test.h"
#include "cfi_int.h" /* cfi_list_windows */
#include "cfi_test.h"

/* Each test's index: client "pit" under a fresh root, and a buffer. */
struct fx {
	char *root;
	struct nsr_cfi *c;
	struct nsr_buf b; /* listings as text */
};

/* setup - a fresh root and the index of client "pit" in it. */
static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->root = nsr_test_tmpdir("cfipit");
	nsr_buf_init(&f->b, 0);
	assert_int_equal(nsr_cfi_open(&f->c, f->root, "pit", NSR_CFI_CREATE),
			 NSR_OK);
	*state = f;
	return 0;
}

/* teardown - close the index (if open) and remove the root. */
static int teardown(void **state)
{
	struct fx *f = *state;

	nsr_cfi_close(f->c);
	nsr_buf_release(&f->b);
	nsr_test_rmrf(f->root);
	free(f->root);
	free(f);
	return 0;
}

/* One object of a save set: a path, and for a directory its list. */
struct obj {
	const char *path;
	uint64_t size; /* ~0 = a directory */
	const char *list[6];
};

#define DIR_ ~(uint64_t)0

/* put_set - begin, add the objects (and the lists of directories that
 * have one), commit. */
static void put_set(struct nsr_cfi *c, uint64_t ssid, int64_t t,
		    const struct obj *o, size_t n)
{
	assert_int_equal(nsr_cfi_begin(c, ssid, t, "/t"), NSR_OK);
	for (size_t i = 0; i < n; i++) {
		struct nsr_cfi_entry e;
		size_t k = 0;

		memset(&e, 0, sizeof(e));
		e.path = o[i].path;
		e.type = o[i].size == DIR_ ? NSR_ASM_DIR : NSR_ASM_REG;
		e.size = o[i].size == DIR_ ? 0 : o[i].size;
		e.mode = 0644;
		assert_int_equal(nsr_cfi_add(c, ssid, &e, 1), NSR_OK);
		if (o[i].size != DIR_ || o[i].list[0] == NULL)
			continue;
		while (k < 6 && o[i].list[k] != NULL)
			k++;
		if (strcmp(o[i].list[0], "-") == 0) /* an empty directory */
			k = 0;
		assert_int_equal(nsr_cfi_add_list(c, ssid, o[i].path,
						  (uint32_t)k, 0, o[i].list,
						  k),
				 NSR_OK);
	}
	assert_int_equal(nsr_cfi_commit(c, ssid), NSR_OK);
}

/* The chain: a full at 100, an incr at 200 (a file deleted, one renamed,
 * one added, a directory renamed, one removed with its contents), an
 * incr at 300 (a file changed, the deleted name back as a new file, an
 * empty directory). */
static const struct obj full[] = {
	{"/t", DIR_, {"a", "d", "gone"}},
	{"/t/a", DIR_, {"del", "keep", "old"}},
	{"/t/a/del", 20, {0}},
	{"/t/a/keep", 10, {0}},
	{"/t/a/old", 30, {0}},
	{"/t/d", DIR_, {"f"}},
	{"/t/d/f", 40, {0}},
	{"/t/gone", DIR_, {"x"}},
	{"/t/gone/x", 50, {0}},
};
static const struct obj incr1[] = {
	{"/t", DIR_, {"a", "e"}},
	{"/t/a", DIR_, {"add", "keep", "new"}},
	{"/t/a/add", 60, {0}},
	{"/t/a/new", 30, {0}},
	{"/t/e", DIR_, {"f"}},
	{"/t/e/f", 40, {0}},
};
static const struct obj incr2[] = {
	{"/t", DIR_, {"a", "e", "empty"}},
	{"/t/a", DIR_, {"add", "del", "keep", "new"}},
	{"/t/a/del", 21, {0}},
	{"/t/a/keep", 11, {0}},
	{"/t/e", DIR_, {"f"}},
	{"/t/empty", DIR_, {"-"}},
};

/* test_chain - each save time and the times between. */
static void test_chain(void **state)
{
	struct fx *f = *state;
	struct nsr_cfi *c = f->c;
	const char *root = f->root;
	const struct obj extra[] = {{"/t/a/extra", 70, {0}}};

	put_set(c, 1, 100, full, NSR_ARRAY_SIZE(full));
	put_set(c, 2, 200, incr1, NSR_ARRAY_SIZE(incr1));
	put_set(c, 3, 300, incr2, NSR_ARRAY_SIZE(incr2));

	assert_string_equal(cfi_test_ls(c, "/t/a", 99, &f->b), "");
	for (int64_t t = 100; t <= 199; t += 99) {
		assert_string_equal(cfi_test_ls(c, "/t", t, &f->b),
				    "1 /t/a 0\n1 /t/d 0\n1 /t/gone 0\n");
		assert_string_equal(cfi_test_ls(c, "/t/a", t, &f->b),
				    "1 /t/a/del 20\n1 /t/a/keep 10\n"
				    "1 /t/a/old 30\n");
	}
	for (int64_t t = 200; t <= 299; t += 99) {
		assert_string_equal(cfi_test_ls(c, "/t", t, &f->b),
				    "2 /t/a 0\n2 /t/e 0\n");
		assert_string_equal(cfi_test_ls(c, "/t/a", t, &f->b),
				    "2 /t/a/add 60\n1 /t/a/keep 10\n"
				    "2 /t/a/new 30\n");
		assert_string_equal(cfi_test_ls(c, "/t/e", t, &f->b),
				    "2 /t/e/f 40\n");
	}
	assert_string_equal(cfi_test_ls(c, "/t", 300, &f->b),
			    "3 /t/a 0\n3 /t/e 0\n3 /t/empty 0\n");
	assert_string_equal(cfi_test_ls(c, "/t/a", 300, &f->b),
			    "2 /t/a/add 60\n3 /t/a/del 21\n3 /t/a/keep 11\n"
			    "2 /t/a/new 30\n");
	assert_string_equal(cfi_test_ls(c, "/t/e/", 5000, &f->b),
			    "2 /t/e/f 40\n");
	assert_string_equal(cfi_test_ls(c, "/t/empty", 5000, &f->b), "");

	/* a save set without lists after the newest list adds to it */
	assert_int_equal(nsr_cfi_begin(c, 4, 400, "/t/a/extra"), NSR_OK);
	assert_int_equal(nsr_cfi_commit(c, 4), NSR_OK);
	put_set(c, 5, 400, extra, 1);
	assert_string_equal(cfi_test_ls(c, "/t/a", 400, &f->b),
			    "2 /t/a/add 60\n3 /t/a/del 21\n5 /t/a/extra 70\n"
			    "3 /t/a/keep 11\n2 /t/a/new 30\n");

	/* the lists survive a reopen and leave with their save set */
	nsr_cfi_close(c);
	f->c = NULL;
	assert_int_equal(nsr_cfi_open(&c, root, "pit", 0), NSR_OK);
	f->c = c;
	assert_string_equal(cfi_test_ls(c, "/t", 250, &f->b),
			    "2 /t/a 0\n2 /t/e 0\n");
	assert_int_equal(nsr_cfi_delete(c, 2), NSR_OK);
	assert_string_equal(cfi_test_ls(c, "/t/a", 250, &f->b),
			    "1 /t/a/del 20\n1 /t/a/keep 10\n1 /t/a/old 30\n");
	assert_string_equal(cfi_test_ls(c, "/t/a", 300, &f->b),
			    "3 /t/a/del 21\n3 /t/a/keep 11\n");
}

/* test_pieces - a list added in pieces; bad pieces are refused; a list
 * left unfinished is ignored. */
static void test_pieces(void **state)
{
	struct fx *f = *state;
	struct nsr_cfi *c = f->c;
	const char *n1[] = {"a", "b"}, *n2[] = {"c"}, *bad[] = {"b", "a"};
	const char *dot[] = {"."}, *slash[] = {"x/y"};
	struct nsr_cfi_entry e[4];
	const char *p[] = {"/d", "/d/a", "/d/c", "/d/z"};

	memset(e, 0, sizeof(e));
	for (int i = 0; i < 4; i++) {
		e[i].path = p[i];
		e[i].type = i ? NSR_ASM_REG : NSR_ASM_DIR;
	}
	assert_int_equal(nsr_cfi_begin(c, 7, 10, "/d"), NSR_OK);
	assert_int_equal(nsr_cfi_add(c, 7, e, 4), NSR_OK);
	assert_int_equal(nsr_cfi_add_list(c, 7, "/d", 3, 0, bad, 2),
			 NSR_ERR_INVAL);
	assert_int_equal(nsr_cfi_add_list(c, 7, "/d", 1, 0, dot, 1),
			 NSR_ERR_INVAL);
	assert_int_equal(nsr_cfi_add_list(c, 7, "/d", 1, 0, slash, 1),
			 NSR_ERR_INVAL);
	assert_int_equal(nsr_cfi_add_list(c, 7, "/d", 3, 1, n2, 1),
			 NSR_ERR_INVAL); /* does not continue a list */
	assert_int_equal(nsr_cfi_add_list(c, 7, "/d", 1, 0, n1, 2),
			 NSR_ERR_INVAL); /* more names than the total */
	assert_int_equal(nsr_cfi_add_list(c, 7, "/d", 2, 0, NULL, 0),
			 NSR_ERR_INVAL);
	assert_int_equal(nsr_cfi_add_list(c, 8, "/d", 0, 0, NULL, 0),
			 NSR_ERR_NOTFOUND);
	/* an unfinished list of /d, then a whole one in two pieces */
	assert_int_equal(nsr_cfi_add_list(c, 7, "/d", 9, 0, n1, 2), NSR_OK);
	assert_int_equal(nsr_cfi_add_list(c, 7, "/d", 3, 0, n1, 2), NSR_OK);
	assert_int_equal(nsr_cfi_add_list(c, 7, "/d", 3, 2, n1 + 1, 1),
			 NSR_ERR_INVAL); /* "b" again: not sorted */
	assert_int_equal(nsr_cfi_add_list(c, 7, "/d", 3, 2, n2, 1), NSR_OK);
	assert_int_equal(nsr_cfi_commit(c, 7), NSR_OK);
	assert_string_equal(cfi_test_ls(c, "/d", 10, &f->b),
			    "7 /d/a 0\n7 /d/c 0\n");
	/* the same save set with only the unfinished list: ignored */
	assert_int_equal(nsr_cfi_begin(c, 9, 20, "/d"), NSR_OK);
	assert_int_equal(nsr_cfi_add(c, 9, e, 4), NSR_OK);
	assert_int_equal(nsr_cfi_add_list(c, 9, "/d", 9, 0, n1, 2), NSR_OK);
	assert_int_equal(nsr_cfi_commit(c, 9), NSR_OK);
	assert_string_equal(cfi_test_ls(c, "/d", 20, &f->b),
			    "9 /d/a 0\n9 /d/c 0\n9 /d/z 0\n");
}

/* test_long_list - a list larger than one record, in one call. */
static void test_long_list(void **state)
{
	struct fx *f = *state;
	struct nsr_cfi *c = f->c;
	enum { N = 3000 };
	char **names = calloc(N, sizeof(char *));
	struct nsr_cfi_entry e;
	size_t lines = 0;

	assert_int_equal(nsr_cfi_begin(c, 1, 10, "/big"), NSR_OK);
	for (int i = 0; i < N; i++) {
		char path[300];

		names[i] = malloc(256);
		/* 250-byte names: 3000 of them fill about 12 records */
		snprintf(names[i], 256, "%05d%0245d", i, 0);
		snprintf(path, sizeof(path), "/big/%s", names[i]);
		memset(&e, 0, sizeof(e));
		e.path = path;
		e.type = NSR_ASM_REG;
		/* every file is listed, every third saved */
		if (i % 3 == 0)
			assert_int_equal(nsr_cfi_add(c, 1, &e, 1), NSR_OK);
	}
	assert_int_equal(nsr_cfi_add_list(c, 1, "/big", N, 0,
					  (const char *const *)names, N),
			 NSR_OK);
	assert_int_equal(nsr_cfi_commit(c, 1), NSR_OK);
	cfi_test_ls(c, "/big", 10, &f->b);
	for (size_t i = 0; i < f->b.len; i++)
		lines += f->b.data[i] == '\n';
	assert_int_equal(lines, N / 3);
	for (int i = 0; i < N; i++)
		free(names[i]);
	free(names);
}

/* A page of a listing being collected. */
struct page {
	struct nsr_buf b;
	int left;
};

/* page_one - render one entry; stop when the page is full. */
static int page_one(void *ctx, const struct nsr_cfi_saveset *ss,
		    const struct nsr_cfi_entry *e)
{
	struct page *pg = ctx;

	if (pg->left-- == 0)
		return 1;
	return cfi_test_show(&pg->b, ss, e);
}

/* test_paging - pages of a listing are slices of the whole one, served
 * from the listing the handle keeps (no record file is read again); a
 * commit makes the next listing new. */
static void test_paging(void **state)
{
	struct fx *f = *state;
	struct nsr_cfi *c = f->c;
	const char *root = f->root;
	struct nsr_buf whole;
	struct page pg;
	char *rec;

	nsr_buf_init(&whole, 0);
	nsr_buf_init(&pg.b, 0);
	put_set(c, 1, 100, full, NSR_ARRAY_SIZE(full));
	put_set(c, 2, 200, incr1, NSR_ARRAY_SIZE(incr1));
	nsr_buf_addstr(&whole, cfi_test_ls(c, "/t/a", 250, &f->b));
	/* pages of two: the first from a scan, the rest kept */
	for (size_t skip = 0; skip < 4; skip += 2) {
		pg.left = 2;
		assert_int_equal(nsr_cfi_list_dir_from(c, "/t/a", 250, skip,
						       page_one, &pg),
				 skip == 0 ? 1 : NSR_OK);
		if (skip == 0) { /* the record files go away */
			rec = nsr_path_join(root, "index/pit/ss-1.rec");
			assert_int_equal(unlink(rec), 0);
			free(rec);
		}
	}
	assert_string_equal(pg.b.data, whole.data);
	/* another listing reads the record files again */
	assert_int_equal(nsr_cfi_list_dir(c, "/t", 250, cfi_test_show, &f->b),
			 NSR_ERR_NOTFOUND);
	nsr_buf_release(&whole);
	nsr_buf_release(&pg.b);
}

/* win_set - save set ssid at t in "/w": the files i of [0, n) with
 * i % every == 0 (size size), named n%03d and, when add, n%03dx too; a
 * list of "/w" naming the names of [0, n) not deleted (i % del != 0;
 * del 0: none deleted) and the added ones, when del >= 0. */
static void win_set(struct nsr_cfi *c, uint64_t ssid, int64_t t, int n,
		    int every, uint64_t size, int add, int del)
{
	char **names = calloc((size_t)n * 2, sizeof(char *));
	struct nsr_cfi_entry e;
	char path[64];
	size_t k = 0;

	assert_non_null(names);
	assert_int_equal(nsr_cfi_begin(c, ssid, t, "/w"), NSR_OK);
	for (int i = 0; i < n; i++) {
		for (int x = 0; x <= add; x++) {
			snprintf(path, sizeof(path), "/w/n%03d%s", i,
				 x ? "x" : "");
			memset(&e, 0, sizeof(e));
			e.path = path;
			e.type = NSR_ASM_REG;
			e.size = size;
			if (x || i % every == 0)
				assert_int_equal(nsr_cfi_add(c, ssid, &e, 1),
						 NSR_OK);
			if (x || del <= 0 || i % del != 0)
				names[k++] = strdup(path + 3);
		}
	}
	if (del >= 0)
		assert_int_equal(nsr_cfi_add_list(c, ssid, "/w", (uint32_t)k,
						  0,
						  (const char *const *)names,
						  k),
				 NSR_OK);
	assert_int_equal(nsr_cfi_commit(c, ssid), NSR_OK);
	for (size_t i = 0; i < k; i++)
		free(names[i]);
	free(names);
}

/* show_first - render the first entry visited and stop there (a page
 * that does not look past its last name). */
static int show_first(void *ctx, const struct nsr_cfi_saveset *ss,
		      const struct nsr_cfi_entry *e)
{
	assert_int_equal(cfi_test_show(ctx, ss, e), NSR_OK);
	return 1;
}

/* page_at - the page of one name at listing index at; the window
 * builds it cost. */
static size_t page_at(struct nsr_cfi *c, int64_t t, size_t at,
		      const struct nsr_buf *whole, const size_t *start)
{
	size_t was = cfi_list_windows;
	struct page pg;

	nsr_buf_init(&pg.b, 0);
	assert_int_equal(nsr_cfi_list_dir_from(c, "/w", t, at, show_first,
					       &pg.b),
			 1);
	assert_true(pg.b.len > 0);
	assert_true(strncmp(whole->data + start[at], pg.b.data, pg.b.len) ==
		    0);
	nsr_buf_release(&pg.b);
	return cfi_list_windows - was;
}

/* back_pages - after a listing was read to its end with windows of
 * wsize names: its pages of one name from the last to the first each
 * cost at most one window build (invariant 6: the start of every
 * window reached is kept), and with more names than a window, a jump
 * from the first to the last and back costs exactly one each. */
static void back_pages(struct nsr_cfi *c, int64_t t,
		       const struct nsr_buf *whole, size_t wsize)
{
	size_t lines = 0;
	size_t *start = calloc(whole->len + 1, sizeof(*start));

	assert_non_null(start);
	for (size_t i = 0; i < whole->len; i++)
		if (i == 0 || whole->data[i - 1] == '\n')
			start[lines++] = i;
	for (size_t i = lines; i-- > 0;)
		assert_true(page_at(c, t, i, whole, start) <= 1);
	assert_int_equal(page_at(c, t, 0, whole, start), 0);
	assert_int_equal(page_at(c, t, lines - 1, whole, start),
			 lines > wsize ? 1 : 0);
	assert_int_equal(page_at(c, t, 0, whole, start),
			 lines > wsize ? 1 : 0);
	free(start);
}

/* test_windows - a listing built a window at a time (invariant 6 of
 * cfi.c) is the listing built at once, whole or page by page, windows
 * of one name up to more than the directory, pages crossing windows,
 * a page asked for again after later ones, across a chain whose lists
 * delete and add names and a save set without a list. */
static void test_windows(void **state)
{
	struct fx *f = *state;
	struct nsr_cfi *c = f->c;
	const size_t wins[] = {1, 2, 7, 16, 1000};
	const int64_t times[] = {150, 250, INT64_MAX};
	struct nsr_buf whole;
	struct page pg;

	nsr_buf_init(&whole, 0);
	nsr_buf_init(&pg.b, 0);
	win_set(c, 1, 100, 60, 1, 1, 0, 0);  /* full: 60, listed */
	win_set(c, 2, 200, 60, 4, 2, 1, 5);  /* incr: every 5th deleted,
					       * n%03dx added */
	win_set(c, 3, 300, 60, 6, 3, 0, -1); /* incr without a list */
	for (size_t ti = 0; ti < NSR_ARRAY_SIZE(times); ti++) {
		nsr_cfi_set_list_window(NSR_CFI_LIST_WINDOW);
		nsr_buf_reset(&whole);
		nsr_buf_addstr(&whole, cfi_test_ls(c, "/w", times[ti], &f->b));
		assert_true(whole.len > 0);
		for (size_t wi = 0; wi < NSR_ARRAY_SIZE(wins); wi++) {
			size_t scans;

			nsr_cfi_set_list_window(wins[wi]);
			/* whole, window by window: at most 120 names (60
			 * and 60 added), so at most 120 / w + 1 scans (the
			 * kept window is let go by listing "/") */
			(void)cfi_test_ls(c, "/", times[ti], &f->b);
			scans = cfi_list_windows;
			assert_string_equal(cfi_test_ls(c, "/w", times[ti],
							&f->b),
					    whole.data);
			scans = cfi_list_windows - scans;
			assert_true(scans <= 120 / wins[wi] + 1);
			assert_true(wins[wi] > 100 || scans > 1);
			/* pages of three, in order: no more scans (each
			 * page from the kept window or the next) */
			(void)cfi_test_ls(c, "/", times[ti], &f->b);
			cfi_list_windows = 0;
			nsr_buf_reset(&pg.b);
			for (size_t skip = 0;; skip += 3) {
				size_t was = pg.b.len;

				pg.left = 3;
				assert_true(nsr_cfi_list_dir_from(
						    c, "/w", times[ti], skip,
						    page_one, &pg) >= 0);
				if (pg.b.len == was)
					break;
			}
			assert_string_equal(pg.b.data, whole.data);
			assert_int_equal(cfi_list_windows, scans);
			/* pages again after the last, backwards: each one
			 * costs one window build when it lies before the
			 * kept window (its start was kept), none in it */
			back_pages(c, times[ti], &whole, wins[wi]);
		}
	}
	nsr_cfi_set_list_window(NSR_CFI_LIST_WINDOW);
	nsr_buf_release(&whole);
	nsr_buf_release(&pg.b);
}

/* test_kept_listing_renewed - a commit renews the kept listing. */
static void test_kept_listing_renewed(void **state)
{
	struct fx *f = *state;
	struct nsr_cfi *c = f->c;

	put_set(c, 1, 100, full, NSR_ARRAY_SIZE(full));
	assert_string_equal(cfi_test_ls(c, "/t", INT64_MAX, &f->b),
			    "1 /t/a 0\n1 /t/d 0\n1 /t/gone 0\n");
	put_set(c, 2, 200, incr1, NSR_ARRAY_SIZE(incr1));
	assert_string_equal(cfi_test_ls(c, "/t", INT64_MAX, &f->b),
			    "2 /t/a 0\n2 /t/e 0\n");
	assert_int_equal(nsr_cfi_delete(c, 2), NSR_OK);
	assert_string_equal(cfi_test_ls(c, "/t", INT64_MAX, &f->b),
			    "1 /t/a 0\n1 /t/d 0\n1 /t/gone 0\n");
}

/* sink - collect stream bytes. */
static int sink(void *ctx, const void *p, size_t n)
{
	return nsr_buf_add(ctx, p, n);
}

/* enc_obj - one object into a stream, with a list for a directory. */
static void enc_obj(struct nsr_asm_enc *e, const char *path, int dir,
		    const char *const *names, size_t n)
{
	struct nsr_asm_file f;

	memset(&f, 0, sizeof(f));
	f.type = dir ? NSR_ASM_DIR : NSR_ASM_REG;
	f.path = path;
	f.mode = 0644;
	assert_int_equal(nsr_asm_enc_file(e, &f, NULL), NSR_OK);
	if (dir)
		assert_int_equal(nsr_asm_enc_dirents(e, names, n), NSR_OK);
	assert_int_equal(nsr_asm_enc_file_end(e, 0), NSR_OK);
}

/* test_rebuild_lists - scanner -i keeps a level stream's DIRENTS. */
static void test_rebuild_lists(void **state)
{
	struct fx *f = *state;
	struct nsr_cfi *c = f->c;
	struct nsr_cfi_rebuild *rb = NULL;
	struct nsr_asm_enc *e = NULL;
	struct nsr_asm_header h = {0, 0, 42, 500, "pit", "/r"};
	const char *top[] = {"a", "b"};
	struct nsr_cfi_entry old[3];
	const char *op[] = {"/r", "/r/a", "/r/gone"};
	struct nsr_buf s;

	nsr_buf_init(&s, 0);
	/* an older save set from before lists existed */
	memset(old, 0, sizeof(old));
	for (int i = 0; i < 3; i++) {
		old[i].path = op[i];
		old[i].type = i ? NSR_ASM_REG : NSR_ASM_DIR;
	}
	assert_int_equal(nsr_cfi_begin(c, 41, 400, "/r"), NSR_OK);
	assert_int_equal(nsr_cfi_add(c, 41, old, 3), NSR_OK);
	assert_int_equal(nsr_cfi_commit(c, 41), NSR_OK);
	assert_string_equal(cfi_test_ls(c, "/r", 500, &f->b),
			    "41 /r/a 0\n41 /r/gone 0\n");

	assert_int_equal(nsr_asm_enc_new(&e, NSR_ASM_CK_CRC32C, sink, &s),
			 NSR_OK);
	assert_int_equal(nsr_asm_enc_header(e, &h), NSR_OK);
	enc_obj(e, "/r", 1, top, 2);
	enc_obj(e, "/r/b", 1, NULL, 0);
	assert_int_equal(nsr_asm_enc_end(e), NSR_OK);
	nsr_asm_enc_free(e);
	assert_int_equal(nsr_cfi_rebuild_new(&rb, c, 0), NSR_OK);
	assert_int_equal(nsr_cfi_rebuild_feed(rb, s.data, s.len), NSR_OK);
	assert_int_equal(nsr_cfi_rebuild_finish(rb), NSR_OK);
	nsr_cfi_rebuild_free(rb);
	assert_string_equal(cfi_test_ls(c, "/r", 500, &f->b),
			    "41 /r/a 0\n42 /r/b 0\n");
	assert_string_equal(cfi_test_ls(c, "/r/b", 500, &f->b), "");
	nsr_buf_release(&s);
}

/* test_decode_lists - the record decoder checks list records: a good
 * file decodes, a version 1 file may not hold one, and each damaged
 * field is refused. */
static void test_decode_lists(void **state)
{
	struct fx *f = *state;
	struct nsr_cfi *c = f->c;
	const char *root = f->root;
	const char *names[] = {"x", "y"};
	struct nsr_cfi_entry e;
	struct nsr_buf img;
	char *path;
	uint8_t *rec;
	int n = 0;

	nsr_buf_init(&img, 0);
	memset(&e, 0, sizeof(e));
	e.path = "/l/x";
	e.type = NSR_ASM_REG;
	assert_int_equal(nsr_cfi_begin(c, 5, 10, "/l"), NSR_OK);
	assert_int_equal(nsr_cfi_add_list(c, 5, "/l", 2, 0, names, 2),
			 NSR_OK);
	assert_int_equal(nsr_cfi_add(c, 5, &e, 1), NSR_OK);
	assert_int_equal(nsr_cfi_commit(c, 5), NSR_OK);
	nsr_cfi_close(c);
	f->c = NULL;
	path = nsr_path_join(root, "index/pit/ss-5.rec");
	assert_int_equal(nsr_file_read(path, &img, 1 << 20), NSR_OK);
	assert_int_equal(
		nsr_cfi_decode_file(img.data, img.len, cfi_test_count, &n),
		NSR_OK);
	assert_int_equal(n, 1);
	/* version 3 front-codes the names: 4 length, payload (14 + 2 path +
	 * 0 shared, 1, "x", 0 shared, 1, "y"), 4 CRC; sharing more than the
	 * name before has is refused */
	rec = (uint8_t *)img.data + 28;
	assert_int_equal(nsr_get_u32(rec), 22);
	assert_int_equal(rec[4 + 19], 0);
	rec[4 + 19] = 2;
	nsr_put_u32(rec + 26, nsr_crc32c(0, rec + 4, 22));
	assert_int_equal(nsr_cfi_decode_file(img.data, img.len, NULL, NULL),
			 NSR_ERR_CORRUPT);
	rec[4 + 19] = 0;
	nsr_put_u32(rec + 26, nsr_crc32c(0, rec + 4, 22));
	/* the same records as version 2 (no directory table) */
	cfi_test_to_v2(&img);
	n = 0;
	assert_int_equal(
		nsr_cfi_decode_file(img.data, img.len, cfi_test_count, &n),
		NSR_OK);
	assert_int_equal(n, 1);

	/* the list record follows the 28-byte header: 4 length, payload
	 * (14 + 2 path + 2 + 2 names), 4 CRC */
	rec = (uint8_t *)img.data + 28;
	assert_int_equal(nsr_get_u32(rec), 20);
	/* version 1 holds no list records */
	img.data[5] = 1;
	nsr_put_u32((uint8_t *)img.data + 24, nsr_crc32c(0, img.data, 24));
	assert_int_equal(nsr_cfi_decode_file(img.data, img.len, NULL, NULL),
			 NSR_ERR_CORRUPT);
	img.data[5] = 2;
	nsr_put_u32((uint8_t *)img.data + 24, nsr_crc32c(0, img.data, 24));
	/* unsorted names, a '/', more names than the total: refused even
	 * with the CRC made right */
	for (int k = 0; k < 3; k++) {
		uint8_t save[20];

		memcpy(save, rec + 4, 20);
		if (k == 0)
			rec[4 + 19] = 'a'; /* "x", "a" */
		else if (k == 1)
			rec[4 + 17] = '/';
		else
			nsr_put_u32(rec + 4 + 4, 1);
		nsr_put_u32(rec + 24, nsr_crc32c(0, rec + 4, 20));
		assert_int_equal(nsr_cfi_decode_file(img.data, img.len, NULL,
						     NULL),
				 NSR_ERR_CORRUPT);
		memcpy(rec + 4, save, 20);
		nsr_put_u32(rec + 24, nsr_crc32c(0, rec + 4, 20));
	}
	assert_int_equal(nsr_cfi_decode_file(img.data, img.len, NULL, NULL),
			 NSR_OK);
	free(path);
	nsr_buf_release(&img);
}

/* downgrade - rewrite the record file of save set ssid of client "pit"
 * as version 2 (cfi_test_to_v2) and its committed length in the
 * catalogue, as main wrote an index before directory tables. */
static void downgrade(const char *root, uint64_t ssid)
{
	struct nsr_buf img, cat;
	char *rp, *cp = nsr_path_join(root, "index/pit/catalog");
	uint8_t *p;
	size_t at = 12;

	assert_true(asprintf(&rp, "%s/index/pit/ss-%" PRIu64 ".rec", root,
			     ssid) > 0);
	nsr_buf_init(&img, 0);
	nsr_buf_init(&cat, 0);
	assert_int_equal(nsr_file_read(rp, &img, 1 << 20), NSR_OK);
	assert_int_equal(nsr_file_read(cp, &cat, 1 << 20), NSR_OK);
	cfi_test_to_v2(&img);
	p = (uint8_t *)cat.data;
	while (nsr_get_u64(p + at) != ssid) {
		at += 34 + nsr_get_u16(p + at + 32); /* catalogue version 2: */
		at += 4 + 8 * (size_t)nsr_get_u32(p + at); /* and its refs */
		assert_true(at + 4 < cat.len);
	}
	nsr_put_u64(p + at + 24, img.len);
	nsr_put_u32(p + cat.len - 4, nsr_crc32c(0, p, cat.len - 4));
	assert_int_equal(nsr_file_replace(rp, img.data, img.len, 0600),
			 NSR_OK);
	assert_int_equal(nsr_file_replace(cp, cat.data, cat.len, 0600),
			 NSR_OK);
	nsr_buf_release(&img);
	nsr_buf_release(&cat);
	free(rp);
	free(cp);
}

/* chain_text - every listing and version query of the chain, at each
 * time, as text (in b). */
static void chain_text(struct nsr_cfi *c, struct nsr_buf *b)
{
	static const char *dirs[] = {"/t", "/t/a", "/t/d", "/t/e",
				     "/t/gone", "/t/empty", "/"};
	static const char *paths[] = {"/t/a/del", "/t/a/keep", "/t/e/f",
				      "/t", "/t/a/nothere"};
	struct nsr_buf one;

	nsr_buf_init(&one, 0);
	nsr_buf_reset(b);
	for (int64_t t = 50; t <= 350; t += 50) {
		for (size_t i = 0; i < NSR_ARRAY_SIZE(dirs); i++)
			assert_int_equal(
				nsr_buf_addf(b, "ls %s %" PRId64 ":\n%s",
					     dirs[i], t,
					     cfi_test_ls(c, dirs[i], t, &one)),
				NSR_OK);
		for (size_t i = 0; i < NSR_ARRAY_SIZE(paths); i++) {
			assert_int_equal(nsr_buf_addf(b, "find %s:\n",
						      paths[i]),
					 NSR_OK);
			assert_int_equal(nsr_cfi_find(c, paths[i], t,
						      cfi_test_show, b),
					 NSR_OK);
		}
	}
	nsr_buf_release(&one);
}

/* test_trim_tables - tables read by lookups are held and counted; a
 * trim lets the least recently used go first, down to what it may keep,
 * and the lookups after it read them again and answer the same. */
static void test_trim_tables(void **state)
{
	struct fx *f = *state;
	struct nsr_cfi *c = f->c;
	struct nsr_buf want, got;
	size_t one, all;

	nsr_buf_init(&want, 0);
	nsr_buf_init(&got, 0);
	put_set(c, 1, 100, full, NSR_ARRAY_SIZE(full));
	put_set(c, 2, 200, incr1, NSR_ARRAY_SIZE(incr1));
	put_set(c, 3, 300, incr2, NSR_ARRAY_SIZE(incr2));
	assert_int_equal(nsr_cfi_trim_tables(c, 0), 0);
	chain_text(c, &want);
	all = nsr_cfi_tables_held();
	assert_true(all > 0);

	/* the table of save set 1 alone, then all three */
	assert_int_equal(nsr_cfi_trim_tables(c, 0), 0);
	cfi_test_ls(c, "/t", 150, &got);
	one = nsr_cfi_tables_held();
	assert_true(one > 0 && one < all);
	cfi_test_ls(c, "/t", 300, &got);
	assert_int_equal(nsr_cfi_tables_held(), all);

	/* save set 1's used last: 2 and 3 go first, 1 stays */
	cfi_test_ls(c, "/t", 150, &got);
	assert_int_equal(nsr_cfi_trim_tables(c, one), one);
	assert_int_equal(nsr_cfi_trim_tables(c, all), one); /* no-op */
	chain_text(c, &got);
	assert_string_equal(got.data, want.data);
	assert_int_equal(nsr_cfi_tables_held(), all);

	/* closing the index lets every table go */
	nsr_cfi_close(c);
	f->c = NULL;
	assert_int_equal(nsr_cfi_tables_held(), 0);
	nsr_buf_release(&want);
	nsr_buf_release(&got);
}

/* test_old_versions - an index main wrote before directory tables
 * (version 2 record files) browses as the same index with them, also
 * mixed (an old full, new incrementals); nsr_cfi_check passes both. */
static void test_old_versions(void **state)
{
	struct fx *f = *state;
	struct nsr_buf want;
	size_t problems = 9;

	put_set(f->c, 1, 100, full, NSR_ARRAY_SIZE(full));
	put_set(f->c, 2, 200, incr1, NSR_ARRAY_SIZE(incr1));
	put_set(f->c, 3, 300, incr2, NSR_ARRAY_SIZE(incr2));
	nsr_buf_init(&want, 0);
	chain_text(f->c, &want);
	assert_non_null(strstr(want.data, "ls /t/a 250:\n2 /t/a/add 60\n"));
	nsr_cfi_close(f->c);
	downgrade(f->root, 1);
	assert_int_equal(nsr_cfi_open(&f->c, f->root, "pit", 0), NSR_OK);
	chain_text(f->c, &f->b);
	assert_string_equal(f->b.data, want.data);
	assert_int_equal(nsr_cfi_check(f->c, NULL, NULL, &problems), NSR_OK);
	assert_int_equal(problems, 0);
	nsr_cfi_close(f->c);
	downgrade(f->root, 2);
	downgrade(f->root, 3);
	assert_int_equal(nsr_cfi_open(&f->c, f->root, "pit", NSR_CFI_RDONLY),
			 NSR_OK);
	chain_text(f->c, &f->b);
	assert_string_equal(f->b.data, want.data);
	assert_int_equal(nsr_cfi_check(f->c, NULL, NULL, &problems), NSR_OK);
	assert_int_equal(problems, 0);
	nsr_cfi_close(f->c);
	f->c = NULL;
	nsr_buf_release(&want);
}

/* rec_size - bytes of save set ssid's record file of client "pit", 0
 * when there is none. */
static off_t rec_size(const char *root, uint64_t ssid)
{
	struct stat st;
	char *p;
	off_t n = 0;

	assert_true(asprintf(&p, "%s/index/pit/ss-%" PRIu64 ".rec", root,
			     ssid) > 0);
	if (stat(p, &st) == 0)
		n = st.st_size;
	free(p);
	return n;
}

/* count_ss - count the browsable save sets. */
static int count_ss(void *ctx, const struct nsr_cfi_saveset *ss)
{
	NSR_UNUSED(ss);
	(*(int *)ctx)++;
	return 0;
}

/* test_shared_lists - a list the same as the newest earlier one of its
 * directory is stored as a reference to the save set holding it
 * (record file version 4): browsing is unchanged, nsrck's check passes,
 * a holder deleted while lists name it is kept (also across a reopen
 * and for a save set still being written) and goes once none does; a
 * reference whose holder is gone is found by the check and refused by
 * browsing. */
static void test_shared_lists(void **state)
{
	static const struct {
		const char *dir;
		int64_t t;
		const char *want;
	} same[] = {
		{"/t/a", 150,
		 "1 /t/a/del 20\n1 /t/a/keep 10\n1 /t/a/old 30\n"},
		{"/t/a", 250,
		 "2 /t/a/del 20\n2 /t/a/keep 10\n2 /t/a/old 30\n"},
		{"/t", 250, "2 /t/a 0\n2 /t/d 0\n2 /t/gone 0\n"},
	};
	struct fx *f = *state;
	struct nsr_cfi *c = f->c;
	struct nsr_buf cat;
	struct cfi_ss *ss = NULL;
	size_t problems = 9, n = 0;
	char *cp;
	int k = 0;

	put_set(c, 1, 100, full, NSR_ARRAY_SIZE(full));
	put_set(c, 2, 200, full, NSR_ARRAY_SIZE(full));
	/* the same entries, no list records: only references */
	assert_true(rec_size(f->root, 2) < rec_size(f->root, 1) - 40);
	for (size_t i = 0; i < NSR_ARRAY_SIZE(same); i++)
		assert_string_equal(cfi_test_ls(c, same[i].dir, same[i].t,
						&f->b),
				    same[i].want);
	/* changed lists are stored whole; a third list names save set 1
	 * too, not save set 2 (which holds none) */
	put_set(c, 3, 300, incr1, NSR_ARRAY_SIZE(incr1));
	assert_int_equal(nsr_cfi_check(c, NULL, NULL, &problems), NSR_OK);
	assert_int_equal(problems, 0);
	assert_string_equal(cfi_test_ls(c, "/t/a", 350, &f->b),
			    "3 /t/a/add 60\n2 /t/a/keep 10\n"
			    "3 /t/a/new 30\n");

	/* save set 4, being written, names 1 for /t/d's list */
	assert_int_equal(nsr_cfi_begin(c, 4, 400, "/t"), NSR_OK);
	assert_int_equal(nsr_cfi_add_list(c, 4, "/t/d", 1, 0, full[5].list,
					  1),
			 NSR_OK);
	/* deleting 1 keeps its file for 2 and 4; 2 browses as before */
	assert_int_equal(nsr_cfi_delete(c, 1), NSR_OK);
	assert_int_equal(nsr_cfi_commit(c, 4), NSR_OK);
	assert_true(rec_size(f->root, 1) > 0);
	assert_int_equal(nsr_cfi_savesets(c, count_ss, &k), NSR_OK);
	assert_int_equal(k, 3);
	nsr_cfi_close(c);
	assert_int_equal(nsr_cfi_open(&c, f->root, "pit", 0), NSR_OK);
	f->c = c;
	assert_string_equal(cfi_test_ls(c, "/t/a", 250, &f->b),
			    "2 /t/a/del 20\n2 /t/a/keep 10\n"
			    "2 /t/a/old 30\n");
	assert_string_equal(cfi_test_ls(c, "/t/d", 450, &f->b),
			    "2 /t/d/f 40\n");
	assert_int_equal(nsr_cfi_check(c, NULL, NULL, &problems), NSR_OK);
	assert_int_equal(problems, 0);
	/* still named by 4 after 2 goes; gone with 4 */
	assert_int_equal(nsr_cfi_delete(c, 2), NSR_OK);
	assert_true(rec_size(f->root, 1) > 0);
	assert_string_equal(cfi_test_ls(c, "/t/d", 450, &f->b), "");
	assert_int_equal(nsr_cfi_delete(c, 4), NSR_OK);
	assert_true(rec_size(f->root, 1) == 0);
	assert_true(rec_size(f->root, 2) == 0);
	assert_string_equal(cfi_test_ls(c, "/t/a", 350, &f->b),
			    "3 /t/a/add 60\n3 /t/a/new 30\n");

	/* a reference whose holder the catalogue lost */
	put_set(c, 5, 500, incr1, NSR_ARRAY_SIZE(incr1));
	nsr_cfi_close(c);
	f->c = NULL;
	cp = nsr_path_join(f->root, "index/pit/catalog");
	nsr_buf_init(&cat, 0);
	assert_int_equal(nsr_file_read(cp, &cat, 1 << 20), NSR_OK);
	assert_int_equal(cfi_cat_get((uint8_t *)cat.data, cat.len, &ss, &n,
				     NULL, NULL),
			 NSR_OK);
	assert_int_equal(n, 2);
	assert_int_equal(ss[1].ssid, 5);
	assert_int_equal(ss[1].nrefs, 1);
	nsr_buf_reset(&cat);
	assert_int_equal(cfi_cat_put(&cat, ss + 1, 1, NULL, 0), NSR_OK);
	assert_int_equal(nsr_file_replace(cp, cat.data, cat.len, 0600),
			 NSR_OK);
	assert_int_equal(nsr_cfi_open(&f->c, f->root, "pit", NSR_CFI_RDONLY),
			 NSR_OK);
	assert_int_equal(nsr_cfi_check(f->c, NULL, NULL, &problems), NSR_OK);
	assert_int_equal(problems, 1);
	assert_int_equal(nsr_cfi_list_dir(f->c, "/t/a", 600, cfi_test_show,
					  &f->b),
			 NSR_ERR_CORRUPT);
	cfi_ss_free(ss, n);
	nsr_buf_release(&cat);
	free(cp);
}

/* test_delete_many - save sets removed in one call, as many single
 * deletes would: absent, repeated and kept ssids are skipped and
 * counted out, a removed holder that other lists (committed, or of a
 * save set being written) name keeps its record file, "kept", and a
 * later call that removes the last of them lets it go; the catalogue
 * read again holds the same. */
static void test_delete_many(void **state)
{
	const uint64_t first[] = {2, 77, 1, 2}, second[] = {4, 1, 3};
	const uint64_t last[] = {5}, none[] = {88, 99};
	struct fx *f = *state;
	struct nsr_cfi *c = f->c, *ro = NULL;
	size_t problems = 9, removed = 9;
	int k = 0;

	put_set(c, 1, 100, full, NSR_ARRAY_SIZE(full));
	put_set(c, 2, 200, full, NSR_ARRAY_SIZE(full)); /* names 1 */
	put_set(c, 3, 300, incr1, NSR_ARRAY_SIZE(incr1));
	put_set(c, 4, 400, full, NSR_ARRAY_SIZE(full)); /* names 1 */
	/* save set 5, being written, names 1 for /t/d's list */
	assert_int_equal(nsr_cfi_begin(c, 5, 500, "/t"), NSR_OK);
	assert_int_equal(nsr_cfi_add_list(c, 5, "/t/d", 1, 0, full[5].list,
					  1),
			 NSR_OK);

	/* nothing asked, nothing found: no change */
	assert_int_equal(nsr_cfi_delete_many(c, NULL, 0, &removed), NSR_OK);
	assert_int_equal(removed, 0);
	assert_int_equal(nsr_cfi_delete_many(c, none, 2, &removed), NSR_OK);
	assert_int_equal(removed, 0);
	assert_int_equal(nsr_cfi_delete(c, 77), NSR_ERR_NOTFOUND);

	/* 1 and 2 go (77 absent, 2 twice); 1 is kept for 4 and 5 */
	assert_int_equal(nsr_cfi_delete_many(c, first, 4, &removed), NSR_OK);
	assert_int_equal(removed, 2);
	assert_true(rec_size(f->root, 1) > 0);
	assert_true(rec_size(f->root, 2) == 0);
	assert_int_equal(nsr_cfi_savesets(c, count_ss, &k), NSR_OK);
	assert_int_equal(k, 2);
	assert_string_equal(cfi_test_ls(c, "/t/d", 450, &f->b),
			    "4 /t/d/f 40\n");
	assert_string_equal(cfi_test_ls(c, "/t/a", 250, &f->b), "");
	assert_int_equal(nsr_cfi_check(c, NULL, NULL, &problems), NSR_OK);
	assert_int_equal(problems, 0);
	assert_int_equal(nsr_cfi_commit(c, 5), NSR_OK);

	/* read again: the same; a reader may not delete */
	nsr_cfi_close(c);
	assert_int_equal(nsr_cfi_open(&ro, f->root, "pit", NSR_CFI_RDONLY),
			 NSR_OK);
	assert_int_equal(nsr_cfi_delete_many(ro, last, 1, &removed),
			 NSR_ERR_READONLY);
	nsr_cfi_close(ro);
	assert_int_equal(nsr_cfi_open(&c, f->root, "pit", 0), NSR_OK);
	f->c = c;
	assert_true(rec_size(f->root, 1) > 0);
	assert_string_equal(cfi_test_ls(c, "/t/d", 550, &f->b),
			    "4 /t/d/f 40\n");
	k = 0;
	assert_int_equal(nsr_cfi_savesets(c, count_ss, &k), NSR_OK);
	assert_int_equal(k, 3);

	/* 3 and 4 go; 1 (kept: not committed) is not found, and stays
	 * while 5 names it */
	assert_int_equal(nsr_cfi_delete_many(c, second, 3, &removed), NSR_OK);
	assert_int_equal(removed, 2);
	assert_true(rec_size(f->root, 1) > 0);
	assert_true(rec_size(f->root, 3) == 0);
	assert_true(rec_size(f->root, 4) == 0);
	assert_int_equal(nsr_cfi_check(c, NULL, NULL, &problems), NSR_OK);
	assert_int_equal(problems, 0);
	/* the last one naming 1 goes, and 1 with it */
	assert_int_equal(nsr_cfi_delete_many(c, last, 1, &removed), NSR_OK);
	assert_int_equal(removed, 1);
	assert_true(rec_size(f->root, 1) == 0);
	assert_true(rec_size(f->root, 5) == 0);
	nsr_cfi_close(c);
	assert_int_equal(nsr_cfi_open(&c, f->root, "pit", 0), NSR_OK);
	f->c = c;
	k = 0;
	assert_int_equal(nsr_cfi_savesets(c, count_ss, &k), NSR_OK);
	assert_int_equal(k, 0);
	assert_int_equal(nsr_cfi_check(c, NULL, NULL, &problems), NSR_OK);
	assert_int_equal(problems, 0);
}

/* results_text - a result set as text (cfi_test_show), from .. from+n. */
static const char *results_text(const struct nsr_cfi_results *r, size_t from,
				size_t n, struct nsr_buf *b)
{
	nsr_buf_reset(b);
	assert_int_equal(nsr_cfi_results_visit(r, from, n, cfi_test_show, b),
			 0);
	return b->data;
}

/* test_queries - the queries kept for paging over the chain: versions
 * newest first and bounded by the time, find by name pattern as a browse
 * shows the tree (deleted and renamed-away names absent), a save set's
 * entries, pages out of the kept results, and results that outlive a
 * delete of their save set (test_queries_spilled: the same with every
 * result in the spill file). */
static void test_queries(void **state)
{
	struct fx *f = *state;
	struct nsr_cfi *c = f->c;
	struct nsr_cfi_results *r;

	put_set(c, 1, 100, full, NSR_ARRAY_SIZE(full));
	put_set(c, 2, 200, incr1, NSR_ARRAY_SIZE(incr1));
	put_set(c, 3, 300, incr2, NSR_ARRAY_SIZE(incr2));

	assert_int_equal(nsr_cfi_versions(c, "/t/a/keep", INT64_MAX, &r),
			 NSR_OK);
	assert_int_equal(nsr_cfi_results_count(r), 2);
	assert_string_equal(results_text(r, 0, 10, &f->b),
			    "3 /t/a/keep 11\n1 /t/a/keep 10\n");
	nsr_cfi_results_free(r);
	assert_int_equal(nsr_cfi_versions(c, "/t/a/keep", 299, &r), NSR_OK);
	assert_string_equal(results_text(r, 0, 10, &f->b), "1 /t/a/keep 10\n");
	nsr_cfi_results_free(r);
	assert_int_equal(nsr_cfi_versions(c, "/nowhere", INT64_MAX, &r),
			 NSR_OK);
	assert_int_equal(nsr_cfi_results_count(r), 0);
	nsr_cfi_results_free(r);

	/* find: at 150 the full's tree, at 250 "old" renamed to "new" and
	 * "gone" removed with its contents */
	assert_int_equal(nsr_cfi_match(c, "/t", "*e*", 150, &r), NSR_OK);
	assert_string_equal(results_text(r, 0, 100, &f->b),
			    "1 /t/gone 0\n1 /t/a/del 20\n1 /t/a/keep 10\n");
	nsr_cfi_results_free(r);
	assert_int_equal(nsr_cfi_match(c, "/t", "*e*", 250, &r), NSR_OK);
	assert_string_equal(results_text(r, 0, 100, &f->b),
			    "2 /t/e 0\n1 /t/a/keep 10\n2 /t/a/new 30\n");
	nsr_cfi_results_free(r);
	assert_int_equal(nsr_cfi_match(c, "/t/", NULL, 5000, &r), NSR_OK);
	assert_int_equal(nsr_cfi_results_count(r), 8);
	/* pages out of the kept results */
	assert_string_equal(results_text(r, 3, 2, &f->b),
			    "2 /t/a/add 60\n3 /t/a/del 21\n");
	assert_string_equal(results_text(r, 7, 5, &f->b), "2 /t/e/f 40\n");
	assert_string_equal(results_text(r, 8, 5, &f->b), "");
	nsr_cfi_results_free(r);
	assert_int_equal(nsr_cfi_match(c, "", "*", 5000, &r), NSR_ERR_INVAL);
	assert_null(r);

	/* a save set's entries; kept results outlive its delete */
	assert_int_equal(nsr_cfi_saveset_results(c, 2, &r), NSR_OK);
	assert_int_equal(nsr_cfi_results_count(r), NSR_ARRAY_SIZE(incr1));
	assert_int_equal(nsr_cfi_delete(c, 2), NSR_OK);
	assert_string_equal(results_text(r, 0, 2, &f->b),
			    "2 /t 0\n2 /t/a 0\n");
	nsr_cfi_results_free(r);
	assert_int_equal(nsr_cfi_saveset_results(c, 2, &r), NSR_ERR_NOTFOUND);
	assert_null(r);
	nsr_cfi_results_free(NULL);
}

/* test_queries_spilled - test_queries with every result spilled and
 * two marks (the step doubling at every other result). */
static void test_queries_spilled(void **state)
{
	size_t marks = cfi_results_marks;

	nsr_cfi_set_results_mem(0);
	cfi_results_marks = 2;
	test_queries(state);
	cfi_results_marks = marks;
	nsr_cfi_set_results_mem(NSR_CFI_RESULTS_MEM);
}

/* big_set - save set ssid at t: NDIRS directories /s/dNN of NFILES
 * files each, names of 1 to 200 bytes, and one path of 60,000 bytes
 * (records larger than most pages read); size = the file's number plus
 * ssid * 1000000. */
#define NDIRS 12
#define NFILES 150
static void big_set(struct nsr_cfi *c, uint64_t ssid, int64_t t)
{
	char *path = malloc(60001);
	struct nsr_cfi_entry e;

	assert_non_null(path);
	assert_int_equal(nsr_cfi_begin(c, ssid, t, "/s"), NSR_OK);
	memset(&e, 0, sizeof(e));
	e.path = path;
	e.mode = 0755;
	e.type = NSR_ASM_DIR;
	snprintf(path, 60001, "/s");
	assert_int_equal(nsr_cfi_add(c, ssid, &e, 1), NSR_OK);
	for (int d = 0; d < NDIRS; d++) {
		e.type = NSR_ASM_DIR;
		snprintf(path, 60001, "/s/d%02d", d);
		assert_int_equal(nsr_cfi_add(c, ssid, &e, 1), NSR_OK);
		e.type = NSR_ASM_REG;
		for (int i = 0; i < NFILES; i++) {
			int len = snprintf(path, 60001, "/s/d%02d/f%04d-", d,
					   i);

			memset(path + len, 'x', (size_t)(i * 37 % 200));
			path[len + i * 37 % 200] = '\0';
			e.size = (uint64_t)(d * NFILES + i) + ssid * 1000000;
			assert_int_equal(nsr_cfi_add(c, ssid, &e, 1), NSR_OK);
		}
	}
	memset(path, 'y', 60000);
	memcpy(path, "/s/d00/", 7);
	path[60000] = '\0';
	assert_int_equal(nsr_cfi_add(c, ssid, &e, 1), NSR_OK);
	assert_int_equal(nsr_cfi_commit(c, ssid), NSR_OK);
	free(path);
}

/* lines_of - the offset of each line of text (and its end). */
static size_t lines_of(const char *text, size_t len, size_t **out)
{
	size_t n = 0, *v = calloc(len + 2, sizeof(*v));

	assert_non_null(v);
	for (size_t i = 0; i < len; i++)
		if (i == 0 || text[i - 1] == '\n')
			v[n++] = i;
	v[n] = len;
	*out = v;
	return n;
}

/* same_pages - r, paged forwards in pages of several sizes, then
 * backwards, and page by page from odd places, shows the lines of
 * want (the in-memory results' text). */
static void same_pages(const struct nsr_cfi_results *r, const char *want)
{
	const size_t sizes[] = {3, 64, 1024, 100000};
	size_t *ln, n = lines_of(want, strlen(want), &ln);
	struct nsr_buf b;

	nsr_buf_init(&b, 0);
	assert_int_equal(nsr_cfi_results_count(r), n);
	for (size_t k = 0; k < NSR_ARRAY_SIZE(sizes); k++) {
		size_t p = sizes[k];

		/* forwards, then backwards from the last page */
		for (int back = 0; back < 2; back++)
			for (size_t i = 0; i < (n + p - 1) / p; i++) {
				size_t at = (back ? (n + p - 1) / p - 1 - i
						  : i) * p;
				size_t end = at + p < n ? at + p : n;

				nsr_buf_reset(&b);
				assert_int_equal(nsr_cfi_results_visit(
							 r, at, p,
							 cfi_test_show, &b),
						 NSR_OK);
				assert_int_equal(b.len, ln[end] - ln[at]);
				assert_memory_equal(b.data, want + ln[at],
						    b.len);
			}
	}
	/* pages at 3 mod 5 of 2, and past the end */
	for (size_t at = 3; at < n + 3; at += 5) {
		size_t end = at + 2 < n ? at + 2 : n;

		nsr_buf_reset(&b);
		assert_int_equal(nsr_cfi_results_visit(r, at, 2, cfi_test_show,
						       &b),
				 NSR_OK);
		assert_int_equal(b.len, at < n ? ln[end] - ln[at] : 0);
		if (at < n)
			assert_memory_equal(b.data, want + ln[at], b.len);
	}
	free(ln);
	nsr_buf_release(&b);
}

/* gather - query q (0 versions, 1 match, 2 a save set's entries) into
 * *r. */
static void gather(struct nsr_cfi *c, int q, struct nsr_cfi_results **r)
{
	int rc = q == 0	  ? nsr_cfi_versions(c, "/s/d03/f0000-", INT64_MAX, r)
		 : q == 1 ? nsr_cfi_match(c, "/s", "*", INT64_MAX, r)
			  : nsr_cfi_saveset_results(c, 2, r);

	assert_int_equal(rc, NSR_OK);
}

/* count_files - names in directory dir. */
static size_t count_files(const char *dir)
{
	DIR *d = opendir(dir);
	size_t n = 0;

	assert_non_null(d);
	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return n;
}

/* test_spill_pages - results of each query gathered in memory, then
 * under memory bounds that keep none, a part or most of them (the rest
 * spilled) and with marks that thin out (2, 4) or not, with O_TMPFILE
 * and without: every page, in any order, shows the same results in the
 * same order; the spill file has no name (the index directory holds
 * what it did), a named one left over goes at the next writer open;
 * a find whose waiting directories pass their bound fails. */
static void test_spill_pages(void **state)
{
	const size_t mems[] = {0, 3000, 200000};
	const size_t marks[] = {2, 4, 16384};
	struct fx *f = *state;
	struct nsr_cfi *c = f->c;
	struct nsr_cfi_results *r, *keep[3];
	struct nsr_buf want;
	size_t before = 0, during = 0, saved = cfi_results_marks;
	char *dir = nsr_path_join(f->root, "index/pit");

	nsr_buf_init(&want, 0);
	big_set(c, 1, 100);
	big_set(c, 2, 200);
	assert_non_null(dir);
	before = count_files(dir);
	for (int q = 0; q < 3; q++) {
		nsr_cfi_set_results_mem(NSR_CFI_RESULTS_MEM);
		gather(c, q, &r);
		assert_int_equal(nsr_cfi_results_spilled(r), 0);
		nsr_buf_reset(&want);
		assert_int_equal(nsr_cfi_results_visit(r, 0, SIZE_MAX,
						       cfi_test_show, &want),
				 NSR_OK);
		if (q == 0)
			assert_int_equal(nsr_cfi_results_count(r), 2);
		else
			assert_true(nsr_cfi_results_count(r) >
				    NDIRS * NFILES);
		nsr_cfi_results_free(r);
		for (size_t m = 0; m < NSR_ARRAY_SIZE(mems); m++)
			for (size_t k = 0; k < NSR_ARRAY_SIZE(marks); k++) {
				nsr_cfi_set_results_mem(mems[m]);
				cfi_results_marks = marks[k];
				cfi_spill_no_tmpfile = (int)(k == 1);
				gather(c, q, &r);
				if (mems[m] == 0)
					assert_int_equal(
						nsr_cfi_results_spilled(r),
						nsr_cfi_results_count(r));
				else if (q > 0)
					assert_true(
						nsr_cfi_results_spilled(r) >
							0 &&
						nsr_cfi_results_spilled(r) <
							nsr_cfi_results_count(
								r));
				same_pages(r, want.data);
				nsr_cfi_results_free(r);
			}
		/* kept while the index changes: nothing named is left,
		 * with O_TMPFILE or without */
		nsr_cfi_set_results_mem(0);
		cfi_spill_no_tmpfile = q % 2;
		gather(c, q, &keep[q]);
		cfi_spill_no_tmpfile = 0;
	}
	during = count_files(dir);
	assert_int_equal(during, before);
	/* a spill file a kill left named goes at the next writer open */
	nsr_cfi_close(c);
	f->c = NULL;
	nsr_test_mkfile(dir, CFI_SPILL_NAME "Ab12Cd", "x");
	assert_int_equal(count_files(dir), before + 1);
	assert_int_equal(nsr_cfi_open(&f->c, f->root, "pit", 0), NSR_OK);
	c = f->c;
	assert_int_equal(count_files(dir), before);
	/* a find whose waiting directories pass the bound fails whole */
	cfi_match_queue_max = 100; /* /s holds 12 of 15 bytes each */
	assert_int_equal(nsr_cfi_match(c, "/s", "*", INT64_MAX, &r),
			 NSR_ERR_LIMIT);
	assert_null(r);
	cfi_match_queue_max = 64u << 20;
	for (int q = 0; q < 3; q++)
		nsr_cfi_results_free(keep[q]);
	cfi_results_marks = saved;
	nsr_cfi_set_results_mem(NSR_CFI_RESULTS_MEM);
	nsr_buf_release(&want);
	free(dir);
}

/* spill_fd - the descriptor of the one spill file open (an unnamed file
 * of the index directory dir), or -1. */
static int spill_fd(const char *dir)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	char to[4096];
	size_t n = strlen(dir);
	int fd = -1;

	assert_non_null(d);
	while ((de = readdir(d)) != NULL) {
		ssize_t len;

		len = readlinkat(dirfd(d), de->d_name, to, sizeof(to) - 1);
		if (len <= 0)
			continue;
		to[len] = '\0';
		if (strncmp(to, dir, n) == 0 && to[n] == '/' &&
		    strstr(to, "(deleted)") != NULL)
			fd = atoi(de->d_name);
	}
	closedir(d);
	return fd;
}

/* visit_all - visit every result of r in pages of 100: the first
 * error, or NSR_OK. */
static int visit_all(const struct nsr_cfi_results *r)
{
	size_t n = nsr_cfi_results_count(r);
	int rc = NSR_OK, k = 0;

	for (size_t at = 0; at < n && rc == NSR_OK; at += 100)
		rc = nsr_cfi_results_visit(r, at, 100, cfi_test_count, &k);
	return rc;
}

/* test_spill_damaged - a spill file damaged under its reader (a flipped
 * byte, a length past the file, a file cut short) gives NSR_ERR_CORRUPT
 * for the pages it touches, never a wrong or short page, and pages
 * before the damage still read. */
static void test_spill_damaged(void **state)
{
	struct fx *f = *state;
	struct nsr_cfi_results *r;
	char *dir = nsr_path_join(f->root, "index/pit");
	uint8_t b, big[4] = {0x7f, 0xff, 0xff, 0xff}, len[4];
	struct stat st;
	int fd, k = 0;

	assert_non_null(dir);
	big_set(f->c, 1, 100);
	nsr_cfi_set_results_mem(0);
	assert_int_equal(nsr_cfi_saveset_results(f->c, 1, &r), NSR_OK);
	nsr_cfi_set_results_mem(NSR_CFI_RESULTS_MEM);
	fd = spill_fd(dir);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(visit_all(r), NSR_OK);
	/* a byte of a record in the middle */
	assert_int_equal(pread(fd, &b, 1, st.st_size / 2), 1);
	b ^= 0x40;
	assert_int_equal(pwrite(fd, &b, 1, st.st_size / 2), 1);
	assert_int_equal(visit_all(r), NSR_ERR_CORRUPT);
	assert_int_equal(nsr_cfi_results_visit(r, 0, 10, cfi_test_count, &k),
			 NSR_OK);
	assert_int_equal(k, 10);
	b ^= 0x40;
	assert_int_equal(pwrite(fd, &b, 1, st.st_size / 2), 1);
	assert_int_equal(visit_all(r), NSR_OK);
	/* the first record's length past anything */
	assert_int_equal(pread(fd, len, 4, 0), 4);
	assert_int_equal(pwrite(fd, big, 4, 0), 4);
	assert_int_equal(nsr_cfi_results_visit(r, 0, 1, cfi_test_count, &k),
			 NSR_ERR_CORRUPT);
	assert_int_equal(pwrite(fd, len, 4, 0), 4);
	/* cut short: the results past the cut are refused */
	assert_int_equal(ftruncate(fd, st.st_size / 3), 0);
	assert_int_equal(visit_all(r), NSR_ERR_CORRUPT);
	assert_int_equal(nsr_cfi_results_visit(r, 0, 10, cfi_test_count, &k),
			 NSR_OK);
	nsr_cfi_results_free(r);
	assert_int_equal(spill_fd(dir), -1);
	free(dir);
}

/* keep_one - keep the versions of "/t/a/keep" for client as a cursor. */
static uint64_t keep_one(struct nsr_cfi *c, struct nsr_cfi_cursors *k,
			 const char *client)
{
	struct nsr_cfi_results *r;

	assert_int_equal(nsr_cfi_versions(c, "/t/a/keep", INT64_MAX, &r),
			 NSR_OK);
	return nsr_cfi_cursors_keep(k, client, r);
}

/* test_cursors - kept queries: found by id and client only, the least
 * recently used dropped when one more is kept, ids never reused, a
 * dropped one gone. */
static void test_cursors(void **state)
{
	struct fx *f = *state;
	struct nsr_cfi_cursors *k;
	uint64_t id[4];

	put_set(f->c, 1, 100, full, NSR_ARRAY_SIZE(full));
	assert_int_equal(nsr_cfi_cursors_new(0, &k), NSR_ERR_INVAL);
	assert_int_equal(nsr_cfi_cursors_new(3, &k), NSR_OK);
	for (int i = 0; i < 3; i++)
		id[i] = keep_one(f->c, k, "pit");
	assert_true(id[0] == 1 && id[1] == 2 && id[2] == 3);
	assert_null(nsr_cfi_cursors_get(k, "other", id[0]));
	assert_null(nsr_cfi_cursors_get(k, "pit", 0));
	/* using the oldest makes the second the least recently used */
	assert_int_equal(
		nsr_cfi_results_count(nsr_cfi_cursors_get(k, "pit", id[0])),
		1);
	id[3] = keep_one(f->c, k, "pit");
	assert_int_equal(id[3], 4);
	assert_null(nsr_cfi_cursors_get(k, "pit", id[1]));
	assert_non_null(nsr_cfi_cursors_get(k, "pit", id[0]));
	assert_non_null(nsr_cfi_cursors_get(k, "pit", id[2]));
	assert_non_null(nsr_cfi_cursors_get(k, "pit", id[3]));
	nsr_cfi_cursors_drop(k, "other", id[0]); /* not its client */
	assert_non_null(nsr_cfi_cursors_get(k, "pit", id[0]));
	nsr_cfi_cursors_drop(k, "pit", id[0]);
	assert_null(nsr_cfi_cursors_get(k, "pit", id[0]));
	nsr_cfi_cursors_drop(k, "pit", 999);
	/* a freed slot is reused, its id is new */
	assert_int_equal(keep_one(f->c, k, "pit"), 5);
	nsr_cfi_cursors_free(k);
	nsr_cfi_cursors_free(NULL);
}

/* main - run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_chain, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pieces, setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_list, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_paging, setup, teardown),
		cmocka_unit_test_setup_teardown(test_windows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kept_listing_renewed,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_rebuild_lists, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_decode_lists, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_trim_tables, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_old_versions, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_shared_lists, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_delete_many, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_queries, setup, teardown),
		cmocka_unit_test_setup_teardown(test_queries_spilled, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_spill_pages, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_spill_damaged, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_cursors, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
