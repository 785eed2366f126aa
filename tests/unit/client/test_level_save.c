/*
 * test_level_save.c - a level save (saver.h with since set): only what
 * changed at or after since is stored (modified, chmod'ed, renamed,
 * moved in with an old modification time), every directory is recorded
 * with exactly the names it holds (the walker's list, walk.h), and a
 * full save stores everything and no list; a renamed or moved directory
 * is stored with everything below it; every save, full too, gives every
 * list to the list callback (the client file index).  Parallel save
 * streams filter in walk order and hand the kept objects to prefiltered
 * savers, out of walk order.
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "nsr/asm.h"
#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/saver.h"
#include "nsr/walk.h"
#include "nsr_test.h"
#include "../../../src/client/pss_int.h"

/* What a decoded stream held, as text: "F rel" per object, "L rel: a b"
 * per directory list (paths relative to the tree). */
struct seen {
	struct nsr_buf text;
	struct nsr_buf lists; /* the list callback's: "rel: a b" */
	size_t root_len;
};

/* on_list - the list callback: "rel: a b". */
static int on_list(void *ctx, const char *dir, const char *const *names,
		   size_t n)
{
	struct seen *s = ctx;

	nsr_buf_addf(&s->lists, "%s:", dir + s->root_len);
	for (size_t i = 0; i < n; i++)
		nsr_buf_addf(&s->lists, " %s", names[i]);
	return nsr_buf_addstr(&s->lists, "\n");
}

/* mem_sink - collect the stream. */
static int mem_sink(void *ctx, const void *p, size_t n)
{
	return nsr_buf_add(ctx, p, n);
}

/* on_file - "F rel". */
static int on_file(void *ctx, const struct nsr_asm_file *f, uint64_t off)
{
	struct seen *s = ctx;

	NSR_UNUSED(off);
	return nsr_buf_addf(&s->text, "F %s\n", f->path + s->root_len);
}

/* on_dirent - " name" after "L:" for the first name of a list. */
static int on_dirent(void *ctx, const char *name, uint32_t index,
		     uint32_t total)
{
	struct seen *s = ctx;

	if (index == 0)
		nsr_buf_addstr(&s->text, "L:");
	if (name)
		nsr_buf_addf(&s->text, " %s", name);
	if (name == NULL || index + 1 == total)
		nsr_buf_addstr(&s->text, "\n");
	return 0;
}

/* Short names: the tree is built in many small steps. */
#define mk nsr_test_mkfile
#define at nsr_test_path

/* md - make directory rel under root. */
static void md(const char *root, const char *rel)
{
	assert_int_equal(mkdir(at(root, rel), 0755), 0);
}

/* build - make spec[0..n) under root: "d/" a directory, else a file
 * holding its own name. */
static void build(const char *root, const char *const *spec, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (spec[i][strlen(spec[i]) - 1] == '/')
			assert_int_equal(mkdir(at(root, spec[i]), 0755), 0);
		else
			mk(root, spec[i], spec[i]);
	}
}

/* save - save root at since (zero = full) and decode what was stored;
 * *unchanged gets the saver's count of objects left out. */
static void save(const char *root, struct timespec since, struct seen *out,
		 uint64_t *unchanged)
{
	static const struct nsr_asm_dec_ops ops = {
		.file = on_file,
		.dirent = on_dirent,
	};
	struct nsr_saver_opts o = {.client = "c", .name = root};
	struct nsr_saver_cb cb = {0};
	struct nsr_saver_stats st;
	struct nsr_saver *sv = NULL;
	struct nsr_asm_dec *d = NULL;
	struct nsr_buf stream;

	nsr_buf_init(&stream, 0);
	nsr_buf_reset(&out->text);
	nsr_buf_reset(&out->lists);
	out->root_len = strlen(root);
	o.since = since;
	cb.write = mem_sink;
	cb.write_ctx = &stream;
	cb.list = on_list;
	cb.list_ctx = out;
	assert_int_equal(nsr_saver_new(&sv, &o, &cb), NSR_OK);
	assert_int_equal(nsr_saver_add_path(sv, root), NSR_OK);
	assert_int_equal(nsr_saver_finish(sv), NSR_OK);
	nsr_saver_stats(sv, &st);
	*unchanged = st.unchanged;
	nsr_saver_free(sv);
	assert_int_equal(nsr_asm_dec_new(&d, &ops, out), NSR_OK);
	assert_int_equal(nsr_asm_dec_feed(d, stream.data, stream.len), NSR_OK);
	assert_int_equal(nsr_asm_dec_finish(d), NSR_OK);
	nsr_asm_dec_free(d);
	nsr_buf_release(&stream);
}

/* pause_ms - let file times move on past the coarse kernel clock. */
static void pause_ms(long ms)
{
	struct timespec t = {0, ms * 1000000L};

	nanosleep(&t, NULL);
}

/* reference - the time a reference backup begins, between changes. */
static void reference(struct timespec *since)
{
	pause_ms(50);
	assert_int_equal(clock_gettime(CLOCK_REALTIME, since), 0);
	pause_ms(50);
}

/* test_level_save - what an incremental stores, and what a full does. */
static void test_level_save(void **state)
{
	char *root = nsr_test_tmpdir("levelsave");
	struct timespec since, old[2] = {{1000000000, 0}, {1000000000, 0}};
	struct sockaddr_un sa;
	struct seen s;
	uint64_t unchanged = 0;
	int sock;

	NSR_UNUSED(state);
	nsr_buf_init(&s.text, 0);
	nsr_buf_init(&s.lists, 0);
	/* The tree as the reference backup saw it. */
	md(root, "t");
	md(root, "t/sub");
	md(root, "t/quiet");
	mk(at(root, "t"), "keep", "k");
	mk(at(root, "t"), "modify", "m");
	mk(at(root, "t"), "chmod", "c");
	mk(at(root, "t"), "rename-me", "r");
	mk(at(root, "t"), "delete-me", "d");
	mk(at(root, "t/sub"), "inner", "i");
	mk(at(root, "t/quiet"), "still", "s");
	assert_int_equal(link(at(root, "t/keep"), at(root, "t/keep-link")), 0);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", at(root, "t/sock"));
	sock = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(sock >= 0);
	assert_int_equal(bind(sock, (struct sockaddr *)&sa, sizeof(sa)), 0);

	/* The reference begins; then the changes. */
	reference(&since);
	mk(at(root, "t"), "modify", "changed");
	assert_int_equal(chmod(at(root, "t/chmod"), 0600), 0);
	assert_int_equal(
		rename(at(root, "t/rename-me"), at(root, "t/sub/renamed")), 0);
	assert_int_equal(unlink(at(root, "t/delete-me")), 0);
	mk(at(root, "t"), "moved-in", "old times");
	assert_int_equal(utimensat(AT_FDCWD, at(root, "t/moved-in"), old, 0),
			 0);

	save(at(root, "t"), since, &s, &unchanged);
	assert_string_equal(s.text.data,
			    "F \nL: chmod keep keep-link modify moved-in quiet "
			    "sock sub\n"
			    "F /chmod\n"
			    "F /modify\n"
			    "F /moved-in\n"
			    "F /quiet\nL: still\n"
			    "F /sub\nL: inner renamed\n"
			    "F /sub/renamed\n");
	/* keep, keep-link, quiet/still, sub/inner */
	assert_int_equal(unchanged, 4);
	assert_string_equal(s.lists.data,
			    ": chmod keep keep-link modify moved-in quiet sock "
			    "sub\n/quiet: still\n/sub: inner renamed\n");

	/* A full: everything, no list in the stream, every list to the
	 * callback. */
	since.tv_sec = 0;
	since.tv_nsec = 0;
	save(at(root, "t"), since, &s, &unchanged);
	assert_null(strstr(s.text.data, "L:"));
	assert_string_equal(s.lists.data,
			    ": chmod keep keep-link modify moved-in quiet sock "
			    "sub\n/quiet: still\n/sub: inner renamed\n");
	assert_non_null(strstr(s.text.data, "F /keep\nF /keep-link\n"));
	assert_non_null(strstr(s.text.data, "F /quiet/still\n"));
	assert_int_equal(unchanged, 0);

	/* An empty directory is listed as empty. */
	md(root, "e");
	since.tv_sec = 1;
	save(at(root, "e"), since, &s, &unchanged);
	assert_string_equal(s.text.data, "F \nL:\n");

	close(sock);
	nsr_buf_release(&s.text);
	nsr_buf_release(&s.lists);
	nsr_test_rmrf(root);
	free(root);
}

/* test_moved_dir - a directory renamed or moved since the reference
 * keeps its times and so do its files: it is stored with everything
 * below it; one whose entries changed is not. */
static void test_moved_dir(void **state)
{
	static const char *const tree[] = {
		"t/", "t/old/", "t/old/deep/", "t/busy/", "t/to/",
		"t/old/x", "t/old/deep/y", "t/busy/z",
	};
	char *root = nsr_test_tmpdir("levelsave");
	struct timespec since;
	struct seen s;
	uint64_t unchanged = 0;

	NSR_UNUSED(state);
	nsr_buf_init(&s.text, 0);
	nsr_buf_init(&s.lists, 0);
	build(root, tree, NSR_ARRAY_SIZE(tree));
	reference(&since);
	assert_int_equal(rename(at(root, "t/old"), at(root, "t/to/new")), 0);
	mk(at(root, "t/busy"), "added", "a");

	save(at(root, "t"), since, &s, &unchanged);
	assert_string_equal(s.text.data,
			    "F \nL: busy to\n"
			    "F /busy\nL: added z\n"
			    "F /busy/added\n"
			    "F /to\nL: new\n"
			    "F /to/new\nL: deep x\n"
			    "F /to/new/deep\nL: y\n"
			    "F /to/new/deep/y\n"
			    "F /to/new/x\n");
	assert_int_equal(unchanged, 1); /* busy/z */
	nsr_buf_release(&s.text);
	nsr_buf_release(&s.lists);
	nsr_test_rmrf(root);
	free(root);
}

/* never_write - a filter saver's sink: it must write nothing. */
static int never_write(void *ctx, const void *p, size_t n)
{
	NSR_UNUSED(ctx);
	NSR_UNUSED(p);
	NSR_UNUSED(n);
	return NSR_ERR_STATE;
}

/* test_prefiltered - parallel save streams: a filter saver decides in
 * walk order (nsr_saver_skip), and a prefiltered saver given the kept
 * objects out of walk order (directories first, as the master takes
 * them) stores them all: nothing below the moved directory is lost. */
static void test_prefiltered(void **state)
{
	static const char *const tree[] = {
		"t/", "t/old/", "t/old/deep/", "t/busy/", "t/to/",
		"t/old/x", "t/old/deep/y", "t/busy/z",
	};
	static const struct nsr_asm_dec_ops ops = { .file = on_file };
	char *root = nsr_test_tmpdir("levelsave");
	const char *top;
	struct nsr_saver_opts fo = {.client = "c", .name = "t"}, so = fo;
	struct nsr_saver_cb fcb = {.write = never_write}, cb = {0};
	struct nsr_saver *filter = NULL, *sv = NULL;
	struct nsr_saver_stats st;
	struct nsr_walk *w = NULL;
	const struct nsr_walk_ent *e;
	struct pss_item *kept[16];
	struct nsr_asm_dec *d = NULL;
	struct nsr_buf stream;
	struct seen s;
	size_t n = 0;
	int rc;

	NSR_UNUSED(state);
	nsr_buf_init(&s.text, 0);
	nsr_buf_init(&s.lists, 0);
	nsr_buf_init(&stream, 0);
	build(root, tree, NSR_ARRAY_SIZE(tree));
	reference(&fo.since);
	assert_int_equal(rename(at(root, "t/old"), at(root, "t/to/new")), 0);
	mk(at(root, "t/busy"), "added", "a");
	top = at(root, "t");
	s.root_len = strlen(top);
	assert_int_equal(nsr_saver_new(&filter, &fo, &fcb), NSR_OK);
	assert_int_equal(nsr_walk_new(&w, &top, 1, NULL), NSR_OK);
	while ((rc = nsr_walk_next(w, &e)) == NSR_OK) {
		bool skip;

		assert_int_equal(nsr_saver_skip(filter, e, &skip), NSR_OK);
		if (!skip) {
			assert_true(n < NSR_ARRAY_SIZE(kept));
			assert_int_equal(pss_item_new(e, &kept[n++]), NSR_OK);
		}
	}
	assert_int_equal(rc, NSR_ERR_EOF);
	nsr_walk_free(w);
	nsr_saver_stats(filter, &st);
	assert_int_equal(st.unchanged, 1); /* busy/z */
	nsr_saver_free(filter);

	so.since = fo.since;
	so.prefiltered = true;
	cb.write = mem_sink;
	cb.write_ctx = &stream;
	assert_int_equal(nsr_saver_new(&sv, &so, &cb), NSR_OK);
	for (int dirs = 1; dirs >= 0; dirs--)
		for (size_t i = 0; i < n; i++)
			if ((kept[i]->e.type == NSR_ASM_DIR) == dirs)
				assert_int_equal(
					nsr_saver_add_entry(sv, &kept[i]->e),
					NSR_OK);
	assert_int_equal(nsr_saver_finish(sv), NSR_OK);
	nsr_saver_stats(sv, &st);
	assert_int_equal(st.unchanged, 0);
	nsr_saver_free(sv);
	assert_int_equal(nsr_asm_dec_new(&d, &ops, &s), NSR_OK);
	assert_int_equal(nsr_asm_dec_feed(d, stream.data, stream.len), NSR_OK);
	assert_int_equal(nsr_asm_dec_finish(d), NSR_OK);
	nsr_asm_dec_free(d);
	assert_string_equal(s.text.data,
			    "F \nF /busy\nF /to\nF /to/new\n"
			    "F /to/new/deep\n"
			    "F /busy/added\nF /to/new/deep/y\nF /to/new/x\n");
	for (size_t i = 0; i < n; i++)
		pss_item_free(kept[i]);
	nsr_buf_release(&stream);
	nsr_buf_release(&s.text);
	nsr_buf_release(&s.lists);
	nsr_test_rmrf(root);
	free(root);
}

/* main - run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_level_save),
		cmocka_unit_test(test_moved_dir),
		cmocka_unit_test(test_prefiltered),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
