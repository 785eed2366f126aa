/*
 * test_restore.c - save and restore round trips of a generated tree with
 * every file type, proved identical with nsr_treecmp; incremental feeding,
 * corruption reported by path, filters, relocation, in-place restore,
 * conflict policies, index offsets and per-file save errors.
 */
#include "nsr/compat.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "nsr/asm.h"
#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/restore.h"
#include "nsr/saver.h"
#include "nsr/treecmp.h"
#include "nsr/walk.h"
#include "nsr_test.h"
#include "../../../src/client/restore_int.h"

#define BIG_PART (1024 * 1024 + 3)

/* Writer workers of every restore() (0: none); set by the setups. */
static int g_workers;
/* How the workers' files took their names over a group (enum
 * rst_named), so each fault group can show that its own way ran. */
static uint64_t g_named[RST_NAMED_N];
/* 1: the workers name files the way without O_TMPFILE; set by setups. */

struct fixture {
	char *tmp;
	char src[PATH_MAX];
	struct nsr_buf stream;
	struct nsr_buf index; /* "offset path\n" from the saver */
	struct nsr_buf log;   /* saver/restore problems, "path what\n" */
	int nobjects;	      /* objects in the tree that are saved */
	int xattrs;	      /* the file system took user.* attributes */
};

/* p - tmp-relative path in one of a few static buffers. */
static const char *p(const struct fixture *f, const char *rel)
{
	static char b[8][PATH_MAX];
	static int k;

	k = (k + 1) % 8;
	assert_true(snprintf(b[k], sizeof(b[k]), "%s/%s", f->src, rel) > 0);
	return b[k];
}

/* jp - "a/b" in one of a few static buffers. */
static const char *jp(const char *a, const char *b)
{
	static char buf[4][PATH_MAX];
	static int k;

	k = (k + 1) % 4;
	assert_true(snprintf(buf[k], sizeof(buf[k]), "%s/%s", a, b) > 0);
	return buf[k];
}

/* put - create a file with content and mode. */
static void put(const char *path, const void *data, size_t n, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	if (n > 0)
		assert_int_equal(write(fd, data, n), (ssize_t)n);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

/* stamp - give an object distinct times with nanoseconds. */
static int stamp(const char *path, const struct stat *st, int flag,
		 struct FTW *ftw)
{
	struct timespec t[2];
	uint32_t h = 2166136261u;

	NSR_UNUSED(st);
	NSR_UNUSED(flag);
	NSR_UNUSED(ftw);
	for (const char *c = path; *c; c++)
		h = (h ^ (uint8_t)*c) * 16777619u;
	t[0].tv_sec = 1600000000 + (h % 1000000);
	t[0].tv_nsec = (long)(h % 999999999u);
	t[1].tv_sec = 1500000000 + (h % 777777);
	t[1].tv_nsec = (long)((h >> 3) % 999999999u);
	return utimensat(AT_FDCWD, path, t, AT_SYMLINK_NOFOLLOW);
}

/* build_tree - every file type the saver handles, plus a socket. */
static void build_tree(struct fixture *f)
{
	static char big[BIG_PART];
	static const char zeros[100000];
	struct sockaddr_un sa;
	int fd, s;

	f->nobjects = 0;
	assert_int_equal(mkdir(f->src, 0755), 0);
	put(p(f, "empty"), "", 0, 0644);
	put(p(f, "small"), "small-file-content", 18, 0640);
	put(p(f, "exec"), "#!/bin/sh\necho hi\n", 18, 0755);
	put(p(f, "setid"), "x", 1, 02711);
	put(p(f, "zeros"), zeros, sizeof(zeros), 0600);
	f->nobjects += 5;
	/* sparse-ish: data, a large hole, data, and a trailing hole */
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)(i * 31 + (i >> 12));
	fd = open(p(f, "big"), O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, big, sizeof(big), 0), (ssize_t)sizeof(big));
	assert_int_equal(pwrite(fd, big, sizeof(big), 3 * BIG_PART),
			 (ssize_t)sizeof(big));
	assert_int_equal(ftruncate(fd, 5 * BIG_PART), 0);
	close(fd);
	f->nobjects++;
	assert_int_equal(mkdir(p(f, "sub"), 0750), 0);
	assert_int_equal(mkdir(p(f, "sub/deep"), 0700), 0);
	put(p(f, "sub/deep/file"), "deep", 4, 0444);
	assert_int_equal(link(p(f, "small"), p(f, "sub/hardlink")), 0);
	assert_int_equal(link(p(f, "small"), p(f, "sub/deep/hl2")), 0);
	assert_int_equal(mkdir(p(f, "ro"), 0755), 0);
	put(p(f, "ro/file"), "read only dir", 13, 0600);
	assert_int_equal(chmod(p(f, "ro"), 0555), 0);
	f->nobjects += 7;
	assert_int_equal(symlink("small", p(f, "link")), 0);
	assert_int_equal(symlink("nowhere/x", p(f, "dangling")), 0);
	assert_int_equal(symlink("/etc/passwd", p(f, "abslink")), 0);
	assert_int_equal(mkfifo(p(f, "fifo"), 0640), 0);
	f->nobjects += 4;
	if (geteuid() == 0) {
		assert_int_equal(mknod(p(f, "null"), S_IFCHR | 0666,
				       makedev(1, 3)), 0);
		assert_int_equal(mknod(p(f, "blk"), S_IFBLK | 0600,
				       makedev(7, 200)), 0);
		assert_int_equal(chown(p(f, "small"), 1234, 5678), 0);
		assert_int_equal(lchown(p(f, "link"), 4321, 8765), 0);
		assert_int_equal(chown(p(f, "sub"), 42, 43), 0);
		f->nobjects += 2;
	}
	/* extended attributes: on a file with hard links, a large one, on
	 * a directory, and (root only) a trusted one on a FIFO */
	f->xattrs = setxattr(p(f, "small"), "user.comment", "hello", 5, 0) == 0;
	if (f->xattrs) {
		/* ext4 keeps a value within one block: 3000 bytes fit */
		assert_int_equal(setxattr(p(f, "exec"), "user.big", big, 3000,
					  0), 0);
		assert_int_equal(setxattr(p(f, "exec"), "user.empty", "", 0, 0),
				 0);
		assert_int_equal(setxattr(p(f, "sub"), "user.dir", "d", 1, 0),
				 0);
		if (geteuid() == 0)
			assert_int_equal(lsetxattr(p(f, "fifo"), "trusted.t",
						   "tt", 2, 0), 0);
	}
	/* a socket: skipped by save */
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (s >= 0 && strlen(p(f, "sock")) < sizeof(sa.sun_path)) {
		assert_true(snprintf(sa.sun_path, sizeof(sa.sun_path), "%s",
				     p(f, "sock")) > 0);
		assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)),
				 0);
	}
	if (s >= 0)
		close(s);
	f->nobjects++; /* the root */
	/* times last, children before parents */
	assert_int_equal(nftw(f->src, stamp, 16, FTW_DEPTH | FTW_PHYS), 0);
}

/* setup - per-test setup. */
static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	unsetenv("NSR_READ_SIZE");
	f->tmp = nsr_test_tmpdir("restore");
	assert_true(snprintf(f->src, sizeof(f->src), "%s/src", f->tmp) > 0);
	nsr_buf_init(&f->stream, 0);
	nsr_buf_init(&f->index, 0);
	nsr_buf_init(&f->log, 0);
	build_tree(f);
	*state = f;
	g_workers = 0;
	return 0;
}

/* setup_workers - setup, and every restore with four writer workers:
 * the same results, directories' metadata after their files (the tree
 * has a read-only directory and directory times are compared), hard
 * links after their targets, damaged files kept apart. */
static int setup_workers(void **state)
{
	setup(state);
	g_workers = 4;
	return 0;
}

/* setup_by_name - setup_workers where O_TMPFILE does not serve (the
 * restore's test fault): the workers create each file under a temporary
 * name and rename it. */
static int setup_by_name(void **state)
{
	setup_workers(state);
	setenv("NSR_TEST_RESTORE_FAULT", "tmpfile", 1);
	return 0;
}

/* setup_proc_link - setup_workers where an unnamed file cannot be linked
 * by its descriptor (AT_EMPTY_PATH refused): linked through
 * /proc/self/fd. */
static int setup_proc_link(void **state)
{
	setup_workers(state);
	setenv("NSR_TEST_RESTORE_FAULT", "emptypath", 1);
	return 0;
}

/* setup_no_link - setup_workers where an unnamed file cannot be linked
 * at all: the first job writes its file again by name, and every later
 * one goes by name. */
static int setup_no_link(void **state)
{
	setup_workers(state);
	setenv("NSR_TEST_RESTORE_FAULT", "link", 1);
	return 0;
}

/* teardown - per-test cleanup. */
static int teardown(void **state)
{
	struct fixture *f = *state;

	unsetenv("NSR_TEST_RESTORE_FAULT");
	nsr_test_rmrf(f->tmp);
	free(f->tmp);
	nsr_buf_release(&f->stream);
	nsr_buf_release(&f->index);
	nsr_buf_release(&f->log);
	free(f);
	return 0;
}

/* ---- callbacks ------------------------------------------------------- */

/* sink - collect the stream in memory. */
static int sink(void *ctx, const void *data, size_t n)
{
	return nsr_buf_add(&((struct fixture *)ctx)->stream, data, n);
}

/* index_cb - record an index entry. */
static int index_cb(void *ctx, const struct nsr_asm_file *file, uint64_t off)
{
	struct fixture *f = ctx;

	return nsr_buf_addf(&f->index, "%" PRIu64 " %s\n", off, file->path);
}

/* save_err - record a save problem. */
static void save_err(void *ctx, const char *path, int err, const char *what)
{
	struct fixture *f = ctx;

	nsr_buf_addf(&f->log, "%s %s %d\n", path, what, err);
}

/* rst_err - record a restore problem. */
static void rst_err(void *ctx, const char *path, int rc, int e,
		    const char *what)
{
	struct fixture *f = ctx;

	nsr_buf_addf(&f->log, "%s %s %d/%d\n", path, what, rc, e);
}

/* save - stream the given paths into f->stream. */
static void save(struct fixture *f, const char *const *paths, size_t n,
		 int ck, struct nsr_saver_stats *st)
{
	struct nsr_saver_opts o = { 0 };
	struct nsr_saver_cb cb = { 0 };
	struct nsr_saver *s = NULL;

	o.client = "client1";
	o.name = paths[0];
	o.savetime = 1700000000;
	o.ssid = 77;
	o.ck_alg = ck;
	cb.write = sink;
	cb.write_ctx = f;
	cb.index = index_cb;
	cb.index_ctx = f;
	cb.error = save_err;
	cb.error_ctx = f;
	nsr_buf_reset(&f->stream);
	nsr_buf_reset(&f->index);
	assert_int_equal(nsr_saver_new(&s, &o, &cb), NSR_OK);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(nsr_saver_add_path(s, paths[i]), NSR_OK);
	assert_int_equal(nsr_saver_finish(s), NSR_OK);
	nsr_saver_stats(s, st);
	nsr_saver_free(s);
}

/* restore - feed the stream in pieces of step bytes. */
static int restore(struct fixture *f, const void *data, size_t len,
		   size_t step, const struct nsr_restore_opts *o,
		   struct nsr_restore_stats *st)
{
	struct nsr_restore_cb cb = { 0 };
	struct nsr_restore_opts wo = *o;
	struct nsr_restore *r = NULL;
	const char *c = data;
	int rc = NSR_OK;

	cb.error = rst_err;
	cb.ctx = f;
	wo.workers = g_workers;
	assert_int_equal(nsr_restore_new(&r, &wo, &cb), NSR_OK);
	for (size_t i = 0; i < len && rc == NSR_OK; i += step)
		rc = nsr_restore_feed(r, c + i, NSR_MIN(step, len - i));
	if (rc == NSR_OK)
		rc = nsr_restore_finish(r);
	nsr_restore_stats(r, st);
	for (int i = 0; i < RST_NAMED_N; i++)
		g_named[i] += r->named[i];
	nsr_restore_free(r);
	return rc;
}

/* on_diff - record a tree difference. */
static void on_diff(void *ctx, const char *rel, const char *what)
{
	nsr_buf_addf(ctx, "%s: %s\n", rel, what);
}

/* compare - treecmp a and b; returns the differences as text. */
static size_t compare(const char *a, const char *b, int flags,
		      struct nsr_buf *out)
{
	size_t n = 0;

	nsr_buf_reset(out);
	assert_int_equal(nsr_treecmp(a, b, flags, on_diff, out, &n), NSR_OK);
	return n;
}

/* ---- tests ----------------------------------------------------------- */

/* off_cb - record a FILE offset (index offsets must match these). */
static int off_cb(void *ctx, const struct nsr_asm_file *file, uint64_t off)
{
	return nsr_buf_addf(ctx, "%" PRIu64 " %s\n", off, file->path);
}

/* test_round_trip_relocated - a relocated restore is identical. */
static void test_round_trip_relocated(void **state)
{
	struct fixture *f = *state;
	const char *paths[1] = { f->src };
	struct nsr_saver_stats ss;
	struct nsr_restore_stats rs;
	struct nsr_restore_opts o = { 0 };
	struct nsr_asm_dec_ops ops = { 0 };
	struct nsr_asm_dec *d = NULL;
	struct nsr_buf offs, diff;
	char dest[PATH_MAX], rsrc[PATH_MAX];
	struct stat a, b;

	save(f, paths, 1, NSR_ASM_CK_CRC32C, &ss);
	assert_int_equal(ss.errors, 0);
	assert_int_equal(ss.files, f->nobjects);
	assert_int_equal(ss.bytes, 18 + 18 + 1 + 100000 + 5 * BIG_PART + 4 +
					   13);
	assert_int_equal(ss.stream_bytes, f->stream.len);
	/* holes were not sent as data */
	assert_true(f->stream.len < 2 * BIG_PART + 100000);

	nsr_buf_init(&offs, 0);
	ops.file = off_cb;
	assert_int_equal(nsr_asm_dec_new(&d, &ops, &offs), NSR_OK);
	assert_int_equal(nsr_asm_dec_feed(d, f->stream.data, f->stream.len),
			 NSR_OK);
	assert_int_equal(nsr_asm_dec_finish(d), NSR_OK);
	nsr_asm_dec_free(d);
	assert_string_equal(offs.data, f->index.data);
	nsr_buf_release(&offs);

	assert_true(snprintf(dest, sizeof(dest), "%s/dest", f->tmp) > 0);
	o.dest = dest;
	assert_int_equal(restore(f, f->stream.data, f->stream.len, 65536, &o,
				 &rs), NSR_OK);
	assert_string_equal(f->log.data, "");
	assert_int_equal(rs.errors, 0);
	assert_int_equal(rs.ck_errors, 0);
	assert_int_equal(rs.files, f->nobjects);
	assert_int_equal(rs.bytes, ss.bytes);

	assert_true(snprintf(rsrc, sizeof(rsrc), "%s%s", dest, f->src) > 0);
	/* atime restored too (checked before anything reads the files) */
	assert_int_equal(lstat(p(f, "exec"), &a), 0);
	assert_int_equal(lstat(jp(rsrc, "exec"), &b), 0);
	assert_int_equal(a.st_atim.tv_sec, b.st_atim.tv_sec);
	assert_int_equal(a.st_atim.tv_nsec, b.st_atim.tv_nsec);
	nsr_buf_init(&diff, 0);
	/* The only difference: the socket, which is never saved. */
	assert_int_equal(compare(f->src, rsrc, 0, &diff), 1);
	assert_string_equal(diff.data, "sock: only in first tree\n");

	/* A missing attribute is a difference. */
	if (f->xattrs) {
		assert_int_equal(removexattr(jp(rsrc, "exec"), "user.big"), 0);
		assert_int_equal(compare(f->src, rsrc, 0, &diff), 2);
		assert_non_null(strstr(diff.data,
				       "exec: xattr user.big only in "
				       "first tree\n"));
		assert_int_equal(compare(f->src, rsrc, NSR_TREECMP_NO_XATTR,
					 &diff), 1);
	}
	nsr_buf_release(&diff);

	/* the big file stayed sparse */
	assert_int_equal(lstat(jp(rsrc, "big"), &b), 0);
	assert_true((uint64_t)b.st_blocks * 512 < (uint64_t)b.st_size);
}

/* test_side_by_side - two restores fill one tree from one stream, as
 * recover's one pass feeds the save sets of a point-in-time chain: one
 * restores the directories, the other every other object (exact,
 * disjoint), and the second is fed past the first.  With dirs_last,
 * both flushed, then finished, the tree is the source's, directory
 * times included (without dirs_last, a directory's times are those from
 * before the other restore applied them). */
static void test_side_by_side(void **state)
{
	struct fixture *f = *state;
	const char *paths[1] = { f->src };
	const char **dirs = NULL, **rest = NULL;
	size_t ndirs = 0, nrest = 0, step = 4096, half;
	struct nsr_saver_stats ss;
	struct nsr_restore_opts oa = { 0 }, ob = { 0 };
	struct nsr_restore_cb cb = { 0 };
	struct nsr_restore *ra = NULL, *rb = NULL;
	struct nsr_buf diff;
	char dest[PATH_MAX], rsrc[PATH_MAX];
	char *idx, *line, *save_ptr = NULL;
	struct stat st;

	save(f, paths, 1, NSR_ASM_CK_CRC32C, &ss);
	idx = strdup(f->index.data);
	assert_non_null(idx);
	dirs = calloc((size_t)f->nobjects + 2, sizeof(char *));
	rest = calloc((size_t)f->nobjects + 2, sizeof(char *));
	assert_true(dirs && rest);
	for (line = strtok_r(idx, "\n", &save_ptr); line;
	     line = strtok_r(NULL, "\n", &save_ptr)) {
		const char *path = strchr(line, ' ') + 1;

		assert_int_equal(lstat(path, &st), 0);
		if (S_ISDIR(st.st_mode))
			dirs[ndirs++] = path;
		else
			rest[nrest++] = path;
	}
	assert_true(ndirs >= 3 && nrest >= 5);
	assert_true(snprintf(dest, sizeof(dest), "%s/side", f->tmp) > 0);
	oa.dest = ob.dest = dest;
	oa.exact = ob.exact = 1;
	oa.dirs_last = ob.dirs_last = 1;
	oa.workers = ob.workers = g_workers;
	oa.paths = dirs;
	oa.npaths = ndirs;
	ob.paths = rest;
	ob.npaths = nrest;
	cb.error = rst_err;
	cb.ctx = f;
	assert_int_equal(nsr_restore_new(&ra, &oa, &cb), NSR_OK);
	assert_int_equal(nsr_restore_new(&rb, &ob, &cb), NSR_OK);
	/* The files' restore stops inside "big", the directories' one
	 * runs to its end, then the files' one goes on: big lands in its
	 * directory after the other restore was through with it. */
	half = f->stream.len / 2;
	for (size_t i = 0; i < half; i += step)
		assert_int_equal(nsr_restore_feed(rb, f->stream.data + i,
						  NSR_MIN(step, half - i)),
				 NSR_OK);
	for (size_t i = 0; i < f->stream.len; i += step)
		assert_int_equal(nsr_restore_feed(ra, f->stream.data + i,
						  NSR_MIN(step,
							  f->stream.len - i)),
				 NSR_OK);
	for (size_t i = half; i < f->stream.len; i += step)
		assert_int_equal(nsr_restore_feed(rb, f->stream.data + i,
						  NSR_MIN(step,
							  f->stream.len - i)),
				 NSR_OK);
	assert_int_equal(nsr_restore_flush(ra), NSR_OK);
	assert_int_equal(nsr_restore_flush(rb), NSR_OK);
	assert_int_equal(nsr_restore_finish(rb), NSR_OK);
	assert_int_equal(nsr_restore_finish(ra), NSR_OK);
	nsr_restore_free(ra);
	nsr_restore_free(rb);
	assert_string_equal(f->log.data, "");
	assert_true(snprintf(rsrc, sizeof(rsrc), "%s%s", dest, f->src) > 0);
	nsr_buf_init(&diff, 0);
	/* The only difference: the socket, which is never saved. */
	assert_int_equal(compare(f->src, rsrc, 0, &diff), 1);
	assert_string_equal(diff.data, "sock: only in first tree\n");
	nsr_buf_release(&diff);
	free(dirs);
	free(rest);
	free(idx);
}

/* test_one_byte_feeding - every byte fed one at a time, SHA-256 checksums,
 * in a subtree. */
static void test_one_byte_feeding(void **state)
{
	struct fixture *f = *state;
	const char *paths[1] = { p(f, "sub") };
	struct nsr_saver_stats ss;
	struct nsr_restore_stats rs;
	struct nsr_restore_opts o = { 0 };
	struct nsr_buf diff;
	char dest[PATH_MAX], rsub[PATH_MAX];

	save(f, paths, 1, NSR_ASM_CK_SHA256, &ss);
	assert_int_equal(ss.files, 5);
	assert_true(snprintf(dest, sizeof(dest), "%s/dest1", f->tmp) > 0);
	o.dest = dest;
	assert_int_equal(restore(f, f->stream.data, f->stream.len, 1, &o, &rs),
			 NSR_OK);
	assert_int_equal(rs.files, 5);
	assert_int_equal(rs.errors, 0);
	assert_true(snprintf(rsub, sizeof(rsub), "%s%s", dest, p(f, "sub")) >
		    0);
	nsr_buf_init(&diff, 0);
	assert_int_equal(compare(p(f, "sub"), rsub, 0, &diff), 0);
	nsr_buf_release(&diff);
}

/* test_small_reads_relative_dest - a tiny forced read size (many reads,
 * holes split across reads) and a relative destination still give an
 * identical tree; a malformed NSR_READ_SIZE is refused. */
static void test_small_reads_relative_dest(void **state)
{
	struct fixture *f = *state;
	const char *paths[1] = { f->src };
	struct nsr_saver_stats ss;
	struct nsr_restore_stats rs;
	struct nsr_restore_opts o = { 0 };
	struct nsr_saver_opts so = { 0 };
	struct nsr_saver_cb cb = { 0 };
	struct nsr_saver *s = NULL;
	struct nsr_buf diff;
	char cwd[PATH_MAX], rsrc[PATH_MAX];

	setenv("NSR_READ_SIZE", "5000", 1);
	save(f, paths, 1, NSR_ASM_CK_CRC32C, &ss);
	assert_int_equal(ss.last_read_size, 5000);
	setenv("NSR_READ_SIZE", "lots", 1);
	so.client = "c";
	so.name = "n";
	cb.write = sink;
	assert_int_equal(nsr_saver_new(&s, &so, &cb), NSR_ERR_INVAL);
	assert_null(s);
	unsetenv("NSR_READ_SIZE");

	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(f->tmp), 0);
	o.dest = "reldest";
	assert_int_equal(restore(f, f->stream.data, f->stream.len, 65536, &o,
				 &rs), NSR_OK);
	assert_int_equal(chdir(cwd), 0);
	assert_int_equal(rs.errors, 0);
	assert_true(snprintf(rsrc, sizeof(rsrc), "%s/reldest%s", f->tmp,
			     f->src) > 0);
	nsr_buf_init(&diff, 0);
	assert_int_equal(compare(f->src, rsrc, 0, &diff), 1); /* socket */
	nsr_buf_release(&diff);
}

/* test_huge_sparse - a 5 GB file with a few bytes of data (offsets past
 * 32 bits): its holes are found without reading them, and it comes back
 * identical and sparse. */
static void test_huge_sparse(void **state)
{
	struct fixture *f = *state;
	const char *paths[1];
	struct nsr_saver_stats ss;
	struct nsr_restore_stats rs;
	struct nsr_restore_opts o = { 0 };
	struct nsr_buf diff;
	char dir[PATH_MAX], file[PATH_MAX + 8], dest[PATH_MAX];
	char rdir[2 * PATH_MAX];
	const off_t big = (off_t)5 << 30;
	struct stat st;
	int fd;

	assert_true(snprintf(dir, sizeof(dir), "%s/huge", f->tmp) > 0);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_true(snprintf(file, sizeof(file), "%s/disk.img", dir) > 0);
	fd = open(file, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "head", 4, 0), 4);
	assert_int_equal(pwrite(fd, "middle", 6, ((off_t)1 << 32) + 7), 6);
	assert_int_equal(pwrite(fd, "tail", 4, big - 4), 4);
	close(fd);
	assert_int_equal(nftw(dir, stamp, 4, FTW_DEPTH | FTW_PHYS), 0);
	paths[0] = dir;
	save(f, paths, 1, NSR_ASM_CK_CRC32C, &ss);
	assert_int_equal(ss.errors, 0);
	assert_int_equal(ss.bytes, (uint64_t)big);
	assert_true(f->stream.len < 1024 * 1024);
	assert_true(snprintf(dest, sizeof(dest), "%s/dest9", f->tmp) > 0);
	o.dest = dest;
	assert_int_equal(restore(f, f->stream.data, f->stream.len, 65536, &o,
				 &rs), NSR_OK);
	assert_int_equal(rs.errors, 0);
	assert_true(snprintf(rdir, sizeof(rdir), "%s%s", dest, dir) > 0);
	assert_int_equal(lstat(jp(rdir, "disk.img"), &st), 0);
	assert_int_equal(st.st_size, big);
	assert_true((uint64_t)st.st_blocks * 512 < 1024 * 1024);
	nsr_buf_init(&diff, 0);
	assert_int_equal(compare(dir, rdir, 0, &diff), 0);
	/* the sparse-aware compare still sees a byte in a hole */
	fd = open(jp(rdir, "disk.img"), O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "x", 1, (off_t)3 << 30), 1);
	close(fd);
	assert_int_equal(compare(dir, rdir, NSR_TREECMP_NO_MTIME, &diff), 1);
	assert_string_equal(diff.data, "disk.img: content differs\n");
	nsr_buf_release(&diff);
}

/* test_owner_by_name - owner_by_name maps known names to local ids and
 * keeps unknown ones numeric; the default restores the saved numbers. */
static void test_owner_by_name(void **state)
{
	struct fixture *f = *state;
	struct nsr_asm_enc *e = NULL;
	struct nsr_asm_header h = { 0, 0, 1, 1, "c", "/o" };
	struct nsr_asm_file fl;
	struct nsr_restore_stats rs;
	struct nsr_restore_opts o = { 0 };
	char dest[PATH_MAX];
	struct stat st;

	if (geteuid() != 0)
		skip();
	nsr_buf_reset(&f->stream);
	assert_int_equal(nsr_asm_enc_new(&e, NSR_ASM_CK_CRC32C, sink, f),
			 NSR_OK);
	assert_int_equal(nsr_asm_enc_header(e, &h), NSR_OK);
	memset(&fl, 0, sizeof(fl));
	fl.type = NSR_ASM_REG;
	fl.mode = 0644;
	fl.path = "/o/named";
	fl.uid = 4242; /* on the saving host root was 4242 */
	fl.gid = 4343;
	fl.user = "root";
	fl.group = "root";
	assert_int_equal(nsr_asm_enc_file(e, &fl, NULL), NSR_OK);
	assert_int_equal(nsr_asm_enc_file_end(e, 0), NSR_OK);
	fl.path = "/o/unknown";
	fl.user = "no-such-user-here";
	fl.group = "";
	assert_int_equal(nsr_asm_enc_file(e, &fl, NULL), NSR_OK);
	assert_int_equal(nsr_asm_enc_file_end(e, 0), NSR_OK);
	assert_int_equal(nsr_asm_enc_end(e), NSR_OK);
	nsr_asm_enc_free(e);

	assert_true(snprintf(dest, sizeof(dest), "%s/dest10", f->tmp) > 0);
	o.dest = dest;
	o.owner_by_name = 1;
	assert_int_equal(restore(f, f->stream.data, f->stream.len, 65536, &o,
				 &rs), NSR_OK);
	assert_int_equal(lstat(jp(dest, "o/named"), &st), 0);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(st.st_gid, 0);
	assert_int_equal(lstat(jp(dest, "o/unknown"), &st), 0);
	assert_int_equal(st.st_uid, 4242);
	assert_int_equal(st.st_gid, 4343);
	assert_true(snprintf(dest, sizeof(dest), "%s/dest11", f->tmp) > 0);
	o.owner_by_name = 0;
	assert_int_equal(restore(f, f->stream.data, f->stream.len, 65536, &o,
				 &rs), NSR_OK);
	assert_int_equal(lstat(jp(dest, "o/named"), &st), 0);
	assert_int_equal(st.st_uid, 4242);
}

/* test_no_xattrs - with no_xattrs the data and metadata come back, the
 * attributes do not. */
static void test_no_xattrs(void **state)
{
	struct fixture *f = *state;
	struct nsr_saver_opts o = { 0 };
	struct nsr_saver_cb cb = { 0 };
	struct nsr_saver *s = NULL;
	struct nsr_restore_stats rs;
	struct nsr_restore_opts ro = { 0 };
	struct nsr_buf diff;
	char dest[PATH_MAX], rsub[PATH_MAX];

	if (!f->xattrs)
		skip();
	o.client = "c";
	o.name = "n";
	o.no_xattrs = true;
	cb.write = sink;
	cb.write_ctx = f;
	assert_int_equal(nsr_saver_new(&s, &o, &cb), NSR_OK);
	assert_int_equal(nsr_saver_add_path(s, p(f, "sub")), NSR_OK);
	assert_int_equal(nsr_saver_finish(s), NSR_OK);
	nsr_saver_free(s);
	assert_true(snprintf(dest, sizeof(dest), "%s/dest8", f->tmp) > 0);
	ro.dest = dest;
	assert_int_equal(restore(f, f->stream.data, f->stream.len, 65536, &ro,
				 &rs), NSR_OK);
	assert_true(snprintf(rsub, sizeof(rsub), "%s%s", dest, p(f, "sub")) >
		    0);
	nsr_buf_init(&diff, 0);
	assert_int_equal(compare(p(f, "sub"), rsub, NSR_TREECMP_NO_XATTR,
				 &diff), 0);
	/* sub itself, and the two names of small's inode */
	assert_int_equal(compare(p(f, "sub"), rsub, 0, &diff), 3);
	nsr_buf_release(&diff);
}

/* test_corruption_reported_by_path - a damaged data byte is reported against
 * its file; the rest restores. */
static void test_corruption_reported_by_path(void **state)
{
	struct fixture *f = *state;
	const char *paths[1] = { f->src };
	struct nsr_saver_stats ss;
	struct nsr_restore_stats rs;
	struct nsr_restore_opts o = { 0 };
	char dest[PATH_MAX], want[PATH_MAX + 64];
	char rsrc[PATH_MAX];
	struct nsr_buf diff;
	char *hit;

	save(f, paths, 1, NSR_ASM_CK_CRC32C, &ss);
	hit = memmem(f->stream.data, f->stream.len, "small-file-content", 18);
	assert_non_null(hit);
	hit[3] ^= 0x20;
	assert_true(snprintf(dest, sizeof(dest), "%s/dest2", f->tmp) > 0);
	o.dest = dest;
	assert_int_equal(restore(f, f->stream.data, f->stream.len, 4096, &o,
				 &rs), NSR_OK);
	/* small is not left under its name, nor are its two other names
	 * (their inode was not restored) */
	assert_int_equal(rs.ck_errors, 1);
	assert_int_equal(rs.damaged, 1);
	assert_int_equal(rs.errors, 3);
	assert_true(snprintf(want, sizeof(want),
			     "%s checksum: damaged, not recovered %d/0\n",
			     p(f, "small"), NSR_ERR_CHECKSUM) > 0);
	assert_true(strncmp(f->log.data, want, strlen(want)) == 0);
	assert_int_equal(rs.files, f->nobjects - 3);
	assert_true(snprintf(rsrc, sizeof(rsrc), "%s%s", dest, p(f, "small"))
		    > 0);
	assert_int_equal(access(rsrc, F_OK), -1);
	assert_true(snprintf(want, sizeof(want), "%s.damaged", rsrc) > 0);
	assert_int_equal(access(want, F_OK), -1);

	/* With keep_damaged its bytes are kept, under small.damaged. */
	nsr_buf_reset(&f->log);
	assert_true(snprintf(dest, sizeof(dest), "%s/dest2k", f->tmp) > 0);
	o.keep_damaged = 1;
	assert_int_equal(restore(f, f->stream.data, f->stream.len, 4096, &o,
				 &rs), NSR_OK);
	o.keep_damaged = 0;
	assert_int_equal(rs.damaged, 1);
	assert_true(snprintf(rsrc, sizeof(rsrc), "%s%s", dest, p(f, "small"))
		    > 0);
	assert_int_equal(access(rsrc, F_OK), -1);
	assert_true(snprintf(want, sizeof(want), "%s.damaged", rsrc) > 0);
	assert_int_equal(access(want, F_OK), 0);
	assert_non_null(strstr(f->log.data, "checksum: damaged, kept as "));
	assert_non_null(strstr(f->log.data, want));

	/* Overwriting: a damaged file replaces nothing.  The file that is
	 * there stays as it was, and no temporary name is left. */
	assert_true(snprintf(dest, sizeof(dest), "%s/dest2o", f->tmp) > 0);
	assert_true(snprintf(rsrc, sizeof(rsrc), "%s%s", dest, p(f, "small"))
		    > 0);
	assert_int_equal(nsr_mkdir_p(rsrc, 0755), NSR_OK);
	assert_int_equal(rmdir(rsrc), 0);
	put(rsrc, "keep-me", 7, 0600);
	o.conflict = NSR_RESTORE_OVERWRITE;
	nsr_buf_reset(&f->log);
	assert_int_equal(restore(f, f->stream.data, f->stream.len, 4096, &o,
				 &rs), NSR_OK);
	o.conflict = NSR_RESTORE_SKIP;
	assert_int_equal(rs.damaged, 1);
	{
		struct nsr_buf got;

		nsr_buf_init(&got, 0);
		assert_int_equal(nsr_file_read(rsrc, &got, 1 << 20), NSR_OK);
		assert_string_equal(got.data, "keep-me");
		nsr_buf_release(&got);
	}
	assert_true(snprintf(want, sizeof(want),
			     "ls -a '%s' | grep -q '^\\.nsr-restore\\.'",
			     jp(dest, f->src + 1)) > 0);
	assert_int_not_equal(system(want), 0);

	/* A damaged file record costs that file only: the restore skips to
	 * the next intact record, reports the damage and ends with
	 * NSR_ERR_CORRUPT; everything else comes back identical. */
	save(f, paths, 1, NSR_ASM_CK_CRC32C, &ss); /* undamaged again */
	assert_true(snprintf(want, sizeof(want), "%s/sub/deep/file", f->src) >
		    0);
	hit = memmem(f->stream.data, f->stream.len, want, strlen(want));
	assert_non_null(hit);
	hit[strlen(want) - 1] ^= 1;
	nsr_buf_reset(&f->log);
	assert_true(snprintf(dest, sizeof(dest), "%s/dest3", f->tmp) > 0);
	assert_int_equal(restore(f, f->stream.data, f->stream.len, 4096, &o,
				 &rs), NSR_ERR_CORRUPT);
	assert_int_equal(rs.files, f->nobjects - 1);
	assert_non_null(strstr(f->log.data, "damaged stream at offset"));
	assert_true(snprintf(rsrc, sizeof(rsrc), "%s%s", dest, f->src) > 0);
	nsr_buf_init(&diff, 0);
	assert_int_equal(compare(f->src, rsrc, 0, &diff), 2);
	assert_non_null(strstr(diff.data, "sub/deep/file: only in first tree"));
	assert_non_null(strstr(diff.data, "sock: only in first tree"));
	nsr_buf_release(&diff);
	/* and a truncated stream is reported as such, naming the file it
	 * cut short */
	nsr_buf_reset(&f->log);
	save(f, paths, 1, NSR_ASM_CK_CRC32C, &ss); /* undamaged again */
	hit = memmem(f->stream.data, f->stream.len, "small-file-content", 18);
	assert_non_null(hit);
	assert_true(snprintf(dest, sizeof(dest), "%s/dest3b", f->tmp) > 0);
	assert_int_equal(restore(f, f->stream.data,
				 (size_t)(hit - f->stream.data) + 5, 7, &o,
				 &rs),
			 NSR_ERR_TRUNCATED);
	assert_true(snprintf(want, sizeof(want),
			     "%s incomplete: damaged, not recovered %d/0\n",
			     p(f, "small"), NSR_ERR_TRUNCATED) > 0);
	assert_string_equal(f->log.data, want);
	assert_true(snprintf(rsrc, sizeof(rsrc), "%s%s", dest, p(f, "small"))
		    > 0);
	assert_int_equal(access(rsrc, F_OK), -1);
}

/* test_filter - filters select paths and their subtrees; a hard link whose
 * first path was filtered out is reported. */
static void test_filter(void **state)
{
	struct fixture *f = *state;
	const char *paths[1] = { f->src };
	const char *sel[2];
	struct nsr_saver_stats ss;
	struct nsr_restore_stats rs;
	struct nsr_restore_opts o = { 0 };
	char dest[PATH_MAX], rsrc[PATH_MAX], want[PATH_MAX + 64];
	struct stat st;

	save(f, paths, 1, NSR_ASM_CK_CRC32C, &ss);
	assert_true(snprintf(dest, sizeof(dest), "%s/dest4", f->tmp) > 0);
	assert_true(snprintf(rsrc, sizeof(rsrc), "%s%s", dest, f->src) > 0);
	sel[0] = p(f, "sub/deep/");
	sel[1] = p(f, "link");
	o.dest = dest;
	o.paths = sel;
	o.npaths = 2;
	assert_int_equal(restore(f, f->stream.data, f->stream.len, 65536, &o,
				 &rs), NSR_OK);
	assert_int_equal(lstat(jp(rsrc, "sub/deep/file"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0444);
	assert_int_equal(lstat(jp(rsrc, "link"), &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(lstat(jp(rsrc, "small"), &st), -1);
	assert_int_equal(lstat(jp(rsrc, "sub/hardlink"), &st), -1);
	assert_int_equal(lstat(jp(rsrc, "sub/deep/hl2"), &st), -1);
	assert_int_equal(rs.files, 3); /* deep, deep/file, link */
	assert_int_equal(rs.filtered, f->nobjects - 4);
	assert_int_equal(rs.errors, 1);
	assert_true(snprintf(want, sizeof(want),
			     "%s hardlink target not restored %d/%d\n",
			     p(f, "sub/deep/hl2"), NSR_ERR_SYSTEM, ENOENT) > 0);
	assert_string_equal(f->log.data, want);
}

/* test_filter_exact - exact filters select the objects named, in any
 * order, and nothing below them; missing parents are created. */
static void test_filter_exact(void **state)
{
	struct fixture *f = *state;
	const char *paths[1] = { f->src };
	const char *sel[3];
	struct nsr_saver_stats ss;
	struct nsr_restore_stats rs;
	struct nsr_restore_opts o = { 0 };
	char dest[PATH_MAX], rsrc[PATH_MAX];
	struct stat st;

	save(f, paths, 1, NSR_ASM_CK_CRC32C, &ss);
	assert_true(snprintf(dest, sizeof(dest), "%s/dest7", f->tmp) > 0);
	assert_true(snprintf(rsrc, sizeof(rsrc), "%s%s", dest, f->src) > 0);
	sel[0] = p(f, "sub/deep/file");
	sel[1] = p(f, "sub");
	sel[2] = p(f, "exec");
	o.dest = dest;
	o.paths = sel;
	o.npaths = 3;
	o.exact = 1;
	assert_int_equal(restore(f, f->stream.data, f->stream.len, 65536, &o,
				 &rs), NSR_OK);
	assert_int_equal(lstat(jp(rsrc, "sub/deep/file"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0444);
	assert_int_equal(lstat(jp(rsrc, "sub"), &st), 0);
	assert_int_equal(st.st_mode & 07777, 0750);
	assert_int_equal(lstat(jp(rsrc, "exec"), &st), 0);
	assert_int_equal(lstat(jp(rsrc, "sub/hardlink"), &st), -1);
	assert_int_equal(lstat(jp(rsrc, "small"), &st), -1);
	assert_int_equal(rs.files, 3);
	assert_int_equal(rs.filtered, f->nobjects - 3);
	assert_int_equal(rs.errors, 0);
}

/* test_in_place - in-place restore (no relocation) of a subtree that was
 * moved away. */
static void test_in_place(void **state)
{
	struct fixture *f = *state;
	const char *paths[1] = { p(f, "sub") };
	struct nsr_saver_stats ss;
	struct nsr_restore_stats rs;
	struct nsr_restore_opts o = { 0 };
	struct nsr_buf diff;
	char moved[PATH_MAX];

	save(f, paths, 1, NSR_ASM_CK_CRC32C, &ss);
	assert_true(snprintf(moved, sizeof(moved), "%s/sub.orig", f->tmp) > 0);
	assert_int_equal(rename(p(f, "sub"), moved), 0);
	assert_int_equal(restore(f, f->stream.data, f->stream.len, 999, &o,
				 &rs), NSR_OK);
	assert_int_equal(rs.errors, 0);
	nsr_buf_init(&diff, 0);
	assert_int_equal(compare(moved, p(f, "sub"), 0, &diff), 0);
	nsr_buf_release(&diff);
}

/* test_conflicts - skip keeps what exists, overwrite replaces it, rename
 * puts it aside. */
static void test_conflicts(void **state)
{
	struct fixture *f = *state;
	const char *paths[1] = { f->src };
	const char *sel[1];
	struct nsr_saver_stats ss;
	struct nsr_restore_stats rs;
	struct nsr_restore_opts o = { 0 };
	struct nsr_buf diff, got;
	char dest[PATH_MAX], rsrc[PATH_MAX];

	save(f, paths, 1, NSR_ASM_CK_CRC32C, &ss);
	assert_true(snprintf(dest, sizeof(dest), "%s/dest5", f->tmp) > 0);
	assert_true(snprintf(rsrc, sizeof(rsrc), "%s%s", dest, f->src) > 0);
	o.dest = dest;
	assert_int_equal(restore(f, f->stream.data, f->stream.len, 65536, &o,
				 &rs), NSR_OK);
	put(jp(rsrc, "exec"), "changed", 7, 0600);

	/* skip: nothing but directories is touched; a missing second name
	 * of a kept file is linked to the file that is there */
	assert_int_equal(unlink(jp(rsrc, "sub/hardlink")), 0);
	assert_int_equal(restore(f, f->stream.data, f->stream.len, 65536, &o,
				 &rs), NSR_OK);
	assert_int_equal(rs.skipped, f->nobjects - 5); /* 4 dirs, 1 link */
	assert_int_equal(rs.errors, 0);
	assert_int_equal(rs.files, 5);
	nsr_buf_init(&got, 0);
	assert_int_equal(nsr_file_read(jp(rsrc, "exec"), &got, 1 << 20),
			 NSR_OK);
	assert_string_equal(got.data, "changed");

	/* overwrite one file */
	sel[0] = p(f, "exec");
	o.paths = sel;
	o.npaths = 1;
	o.conflict = NSR_RESTORE_OVERWRITE;
	assert_int_equal(restore(f, f->stream.data, f->stream.len, 65536, &o,
				 &rs), NSR_OK);
	assert_int_equal(rs.files, 1);
	nsr_buf_init(&diff, 0);
	/* only the socket: the directory's times were kept as well */
	assert_int_equal(compare(f->src, rsrc, 0, &diff), 1);

	/* rename: the restored copy goes next to the existing one */
	sel[0] = p(f, "small");
	o.conflict = NSR_RESTORE_RENAME;
	assert_int_equal(restore(f, f->stream.data, f->stream.len, 65536, &o,
				 &rs), NSR_OK);
	assert_int_equal(rs.files, 1);
	nsr_buf_reset(&got);
	assert_int_equal(nsr_file_read(jp(rsrc, "small.R"), &got, 1 << 20),
			 NSR_OK);
	assert_string_equal(got.data, "small-file-content");
	assert_int_equal(restore(f, f->stream.data, f->stream.len, 65536, &o,
				 &rs), NSR_OK);
	nsr_buf_reset(&got);
	assert_int_equal(nsr_file_read(jp(rsrc, "small.R1"), &got, 1 << 20),
			 NSR_OK);
	nsr_buf_release(&got);
	nsr_buf_release(&diff);
}

/* plain_saver - a saver of client "c", save set "n", into the fixture's
 * stream, its errors into the fixture's log. */
static struct nsr_saver *plain_saver(struct fixture *f)
{
	struct nsr_saver_opts o = { 0 };
	struct nsr_saver_cb cb = { 0 };
	struct nsr_saver *s = NULL;

	o.client = "c";
	o.name = "n";
	cb.write = sink;
	cb.write_ctx = f;
	cb.error = save_err;
	cb.error_ctx = f;
	assert_int_equal(nsr_saver_new(&s, &o, &cb), NSR_OK);
	return s;
}

/* test_save_errors - files that vanish or cannot be read are reported; the
 * save goes on and the stream stays valid. */
static void test_save_errors(void **state)
{
	struct fixture *f = *state;
	struct nsr_saver *s;
	struct nsr_saver_stats st;
	struct nsr_walk_ent e;
	struct nsr_restore_stats rs;
	struct nsr_restore_opts ro = { 0 };
	char dest[PATH_MAX];

	s = plain_saver(f);
	memset(&e, 0, sizeof(e));
	e.path = p(f, "vanished");
	e.type = NSR_ASM_REG;
	assert_int_equal(nsr_saver_add_entry(s, &e), NSR_OK);
	/* a file that became a FIFO after the walk: no hang, reported */
	e.path = p(f, "fifo");
	assert_int_equal(nsr_saver_add_entry(s, &e), NSR_OK);
	assert_int_equal(nsr_saver_add_path(s, p(f, "missing")), NSR_OK);
	assert_int_equal(nsr_saver_add_path(s, p(f, "exec")), NSR_OK);
	assert_int_equal(nsr_saver_finish(s), NSR_OK);
	nsr_saver_stats(s, &st);
	nsr_saver_free(s);
	assert_int_equal(st.errors, 3);
	assert_int_equal(st.files, 1);
	assert_non_null(strstr(f->log.data, "/vanished open 2\n"));
	assert_true(snprintf(dest, sizeof(dest), "/fifo open %d\n", ESTALE) >
		    0);
	assert_non_null(strstr(f->log.data, dest));
	assert_non_null(strstr(f->log.data, "/missing lstat 2\n"));
	assert_true(snprintf(dest, sizeof(dest), "%s/dest6", f->tmp) > 0);
	ro.dest = dest;
	assert_int_equal(restore(f, f->stream.data, f->stream.len, 3, &ro,
				 &rs), NSR_OK);
	assert_int_equal(rs.files, 1);
}

/* spit - a file of text under the fixture. */
static void spit(struct fixture *f, const char *rel, const char *text)
{
	int fd = open(p(f, rel), O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* test_save_has_fd - an entry that brings its descriptor (a file opened
 * ahead, pss_int.h) is read from it, not from its name, and the
 * descriptor stays its owner's; one that is no regular file is reported
 * and stays open too. */
static void test_save_has_fd(void **state)
{
	struct fixture *f = *state;
	struct nsr_saver *s;
	struct nsr_saver_stats st;
	struct nsr_walk_ent e;
	struct nsr_restore_stats rs;
	struct nsr_restore_opts ro = { 0 };
	char dest[PATH_MAX], got[64] = "";
	int fd, dfd, n;

	spit(f, "ahead", "read through the descriptor\n");
	spit(f, "named", "read by name\n");
	s = plain_saver(f);
	memset(&e, 0, sizeof(e));
	e.path = p(f, "named");
	e.type = NSR_ASM_REG;
	fd = open(p(f, "ahead"), O_RDONLY);
	assert_true(fd >= 0);
	e.has_fd = true;
	e.fd = fd;
	assert_int_equal(nsr_saver_add_entry(s, &e), NSR_OK);
	dfd = open(f->tmp, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	e.fd = dfd; /* a descriptor of no regular file */
	assert_int_equal(nsr_saver_add_entry(s, &e), NSR_OK);
	assert_int_equal(nsr_saver_finish(s), NSR_OK);
	nsr_saver_stats(s, &st);
	nsr_saver_free(s);
	assert_int_not_equal(fcntl(fd, F_GETFD), -1);
	assert_int_not_equal(fcntl(dfd, F_GETFD), -1);
	close(fd);
	close(dfd);
	assert_int_equal(st.files, 1);
	assert_int_equal(st.errors, 1);
	assert_true(snprintf(dest, sizeof(dest), "/named open %d\n", ESTALE) >
		    0);
	assert_non_null(strstr(f->log.data, dest));
	assert_true(snprintf(dest, sizeof(dest), "%s/dest7", f->tmp) > 0);
	ro.dest = dest;
	assert_int_equal(restore(f, f->stream.data, f->stream.len, 5, &ro,
				 &rs), NSR_OK);
	assert_int_equal(rs.files, 1);
	assert_true(snprintf(dest, sizeof(dest), "%s/dest7%s", f->tmp,
			     p(f, "named")) > 0);
	fd = open(dest, O_RDONLY);
	assert_true(fd >= 0);
	n = (int)read(fd, got, sizeof(got) - 1);
	close(fd);
	assert_true(n > 0);
	got[n] = '\0';
	assert_string_equal(got, "read through the descriptor\n");
}

/* test_hostile_paths - a hostile stream cannot escape the destination
 * through a symlink it restored itself, nor with ".." components. */
static void test_hostile_paths(void **state)
{
	struct fixture *f = *state;
	struct nsr_asm_enc *e = NULL;
	struct nsr_asm_header h = { 0, 0, 1, 1, "evil", "/" };
	struct nsr_asm_file fl;
	struct nsr_restore_stats rs;
	struct nsr_restore_opts o = { 0 };
	char dest[PATH_MAX], outside[PATH_MAX];
	struct stat st;

	nsr_buf_reset(&f->stream);
	assert_true(snprintf(outside, sizeof(outside), "%s/outside", f->tmp) >
		    0);
	assert_int_equal(mkdir(outside, 0755), 0);
	assert_int_equal(nsr_asm_enc_new(&e, NSR_ASM_CK_CRC32C, sink, f),
			 NSR_OK);
	assert_int_equal(nsr_asm_enc_header(e, &h), NSR_OK);
	memset(&fl, 0, sizeof(fl));
	fl.type = NSR_ASM_SYMLINK;
	fl.path = "/esc";
	fl.link = outside;
	fl.mode = 0777;
	assert_int_equal(nsr_asm_enc_file(e, &fl, NULL), NSR_OK);
	assert_int_equal(nsr_asm_enc_file_end(e, 0), NSR_OK);
	fl.type = NSR_ASM_REG;
	fl.link = NULL;
	fl.mode = 0644;
	fl.path = "/esc/pwned";
	fl.size = 1;
	assert_int_equal(nsr_asm_enc_file(e, &fl, NULL), NSR_OK);
	assert_int_equal(nsr_asm_enc_data(e, "x", 1), NSR_OK);
	assert_int_equal(nsr_asm_enc_file_end(e, 0), NSR_OK);
	fl.path = "/a/../../pwned2";
	assert_int_equal(nsr_asm_enc_file(e, &fl, NULL), NSR_OK);
	assert_int_equal(nsr_asm_enc_data(e, "x", 1), NSR_OK);
	assert_int_equal(nsr_asm_enc_file_end(e, 0), NSR_OK);
	assert_int_equal(nsr_asm_enc_end(e), NSR_OK);
	nsr_asm_enc_free(e);

	assert_true(snprintf(dest, sizeof(dest), "%s/dest7", f->tmp) > 0);
	o.dest = dest;
	assert_int_equal(restore(f, f->stream.data, f->stream.len, 65536, &o,
				 &rs), NSR_OK);
	assert_int_equal(rs.errors, 2);
	assert_int_equal(rs.files, 1); /* the symlink itself */
	assert_int_equal(lstat(jp(outside, "pwned"), &st), -1);
	assert_int_equal(lstat(jp(f->tmp, "pwned2"), &st), -1);
}

/* ---- directories this restore made ---------------------------------- */

/* enc_reg - a regular file record: data, then a hole of hole bytes. */
static void enc_reg(struct nsr_asm_enc *e, const char *path, uint32_t mode,
		    const char *data, uint64_t hole)
{
	struct nsr_asm_file fl;

	memset(&fl, 0, sizeof(fl));
	fl.type = NSR_ASM_REG;
	fl.path = path;
	fl.mode = mode;
	fl.uid = geteuid();
	fl.gid = getegid();
	fl.nlink = 1;
	fl.size = strlen(data) + hole;
	fl.mtime.tv_sec = 1600000000;
	fl.mtime.tv_nsec = 123456789;
	fl.atime = fl.mtime;
	assert_int_equal(nsr_asm_enc_file(e, &fl, NULL), NSR_OK);
	assert_int_equal(nsr_asm_enc_data(e, data, strlen(data)), NSR_OK);
	if (hole)
		assert_int_equal(nsr_asm_enc_hole(e, hole), NSR_OK);
	assert_int_equal(nsr_asm_enc_file_end(e, 0), NSR_OK);
}

/* enc_d - a new stream in f->stream starting with directory /d. */
static struct nsr_asm_enc *enc_d(struct fixture *f)
{
	struct nsr_asm_enc *e = NULL;
	struct nsr_asm_header h = { 0, 0, 1, 1, "d", "/" };
	struct nsr_asm_file fl;

	nsr_buf_reset(&f->stream);
	assert_int_equal(nsr_asm_enc_new(&e, NSR_ASM_CK_CRC32C, sink, f),
			 NSR_OK);
	assert_int_equal(nsr_asm_enc_header(e, &h), NSR_OK);
	memset(&fl, 0, sizeof(fl));
	fl.type = NSR_ASM_DIR;
	fl.path = "/d";
	fl.mode = 0755;
	fl.uid = geteuid();
	fl.gid = getegid();
	fl.nlink = 2;
	assert_int_equal(nsr_asm_enc_file(e, &fl, NULL), NSR_OK);
	assert_int_equal(nsr_asm_enc_file_end(e, 0), NSR_OK);
	return e;
}

/* dup_stream - /d (new to the restore), /d/f twice ("one", then "two"),
 * /d/g (mode 0640, data then a trailing hole), /d/h (mode 0664, which
 * the umask would narrow). */
static void dup_stream(struct fixture *f)
{
	struct nsr_asm_enc *e = enc_d(f);

	enc_reg(e, "/d/f", 0644, "one", 0);
	enc_reg(e, "/d/f", 0644, "two", 0);
	enc_reg(e, "/d/g", 0640, "gg", 100000);
	enc_reg(e, "/d/h", 0664, "hh", 0);
	assert_int_equal(nsr_asm_enc_end(e), NSR_OK);
	nsr_asm_enc_free(e);
}

/* text_of - a small file's contents ("" if it cannot be read). */
static const char *text_of(const char *dir, const char *name)
{
	static char b[64];
	int fd = open(jp(dir, name), O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, b, sizeof(b) - 1) : -1;

	if (fd >= 0)
		close(fd);
	b[n > 0 ? n : 0] = '\0';
	return b;
}

/* test_fresh_dir_conflicts - in a directory the restore made itself no
 * name is looked up before a file is written, yet a name the stream
 * brings twice still follows the policy; modes the umask would narrow,
 * trailing holes and nanosecond times come out as saved. */
static void test_fresh_dir_conflicts(void **state)
{
	static const int pol[3] = { NSR_RESTORE_SKIP, NSR_RESTORE_OVERWRITE,
				    NSR_RESTORE_RENAME };
	static const char *const want[3] = { "one", "two", "one" };
	struct fixture *f = *state;
	struct nsr_restore_stats rs;
	struct nsr_restore_opts o = { 0 };
	char dest[PATH_MAX], d[PATH_MAX];
	mode_t old = umask(022);
	struct stat st;

	dup_stream(f);
	for (int i = 0; i < 3; i++) {
		assert_true(snprintf(dest, sizeof(dest), "%s/fresh%d", f->tmp,
				     i) > 0);
		assert_true(snprintf(d, sizeof(d), "%s/d", dest) > 0);
		o.dest = dest;
		o.conflict = pol[i];
		nsr_buf_reset(&f->log);
		assert_int_equal(restore(f, f->stream.data, f->stream.len,
					 7, &o, &rs), NSR_OK);
		assert_int_equal(rs.errors, 0);
		assert_int_equal(rs.skipped, pol[i] == NSR_RESTORE_SKIP);
		assert_int_equal(rs.files,
				 pol[i] == NSR_RESTORE_SKIP ? 4 : 5);
		assert_string_equal(text_of(d, "f"), want[i]);
		if (pol[i] == NSR_RESTORE_RENAME)
			assert_string_equal(text_of(d, "f.R"), "two");
		else
			assert_int_equal(lstat(jp(d, "f.R"), &st), -1);
		assert_int_equal(lstat(jp(d, "g"), &st), 0);
		assert_int_equal(st.st_size, 100002);
		assert_int_equal(st.st_mode & 07777, 0640);
		assert_int_equal(st.st_mtim.tv_nsec, 123456789);
		assert_int_equal(lstat(jp(d, "h"), &st), 0);
		assert_int_equal(st.st_mode & 07777, 0664);
		assert_int_equal(lstat(jp(d, "f"), &st), 0);
		assert_int_equal(st.st_mode & 07777, 0644);
		assert_int_equal(st.st_mtim.tv_sec, 1600000000);
		assert_int_equal(lstat(d, &st), 0);
		assert_int_equal(st.st_mode & 07777, 0755);
	}
	umask(old);
}

/* test_error_names_file - a file that cannot be written (larger than
 * RLIMIT_FSIZE; in a writer worker when there are some) is an error
 * naming it, and so is one whose name is too long; nothing is left under
 * a temporary name and the rest is restored. */
static void test_error_names_file(void **state)
{
	static char big[100001];
	struct fixture *f = *state;
	struct nsr_asm_enc *e;
	struct nsr_restore_stats rs;
	struct nsr_restore_opts o = { 0 };
	char dest[PATH_MAX], d[PATH_MAX], lng[NAME_MAX + 40];
	struct rlimit old, lim;
	struct dirent *de;
	DIR *dir;
	int n = 0, rc;

	memset(big, 'b', sizeof(big) - 1);
	memset(lng, 'x', sizeof(lng));
	memcpy(lng, "/d/", 3);
	lng[sizeof(lng) - 1] = '\0';
	e = enc_d(f);
	enc_reg(e, "/d/big", 0644, big, 0);
	enc_reg(e, lng, 0644, "long", 0);
	enc_reg(e, "/d/ok", 0644, "kept", 0);
	assert_int_equal(nsr_asm_enc_end(e), NSR_OK);
	nsr_asm_enc_free(e);

	assert_true(snprintf(dest, sizeof(dest), "%s/err", f->tmp) > 0);
	assert_true(snprintf(d, sizeof(d), "%s/d", dest) > 0);
	o.dest = dest;
	nsr_buf_reset(&f->log);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 65536;
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	rc = restore(f, f->stream.data, f->stream.len, 65536, &o, &rs);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	assert_int_equal(rc, NSR_OK);
	assert_int_equal(rs.errors, 2);
	assert_int_equal(rs.files, 2); /* d and ok */
	assert_non_null(strstr(f->log.data, "/d/big write "));
	assert_non_null(strstr(f->log.data, lng));
	assert_string_equal(text_of(d, "ok"), "kept");
	dir = opendir(d);
	assert_non_null(dir);
	for (de = readdir(dir); de != NULL; de = readdir(dir))
		n += strcmp(de->d_name, ".") != 0 &&
		     strcmp(de->d_name, "..") != 0;
	closedir(dir);
	assert_int_equal(n, 1); /* ok alone */
}

/* ---- long paths and deep trees -------------------------------------- */

/* putat - a file at fd/name with text. */
static void putat(int fd, const char *name, const char *text)
{
	int o = openat(fd, name, O_WRONLY | O_CREAT | O_EXCL, 0640);

	assert_true(o >= 0);
	assert_int_equal(write(o, text, strlen(text)), (ssize_t)strlen(text));
	close(o);
}

/* build_long - under dir: a chain of 26 directories of 200-byte names
 * (paths over 5,200 bytes) holding a file with an attribute and odd
 * times, a hard link to it, a symlink and a FIFO; and a chain of 1,100
 * one-byte names (deeper than the descriptor limit) with a file. */
static void build_long(const char *dir, int xattrs)
{
	struct timespec t[2] = { { 1600000000, 123456789 },
				 { 1600000001, 987654321 } };
	char at[512];
	int fd;

	assert_int_equal(mkdir(dir, 0755), 0);
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	fd = nsr_test_mkchain(fd, 26, 'a', 200);
	putat(fd, "data", "long path data");
	assert_int_equal(utimensat(fd, "data", t, 0), 0);
	assert_int_equal(linkat(fd, "data", fd, "hard", 0), 0);
	assert_int_equal(symlinkat("data", fd, "sym"), 0);
	assert_int_equal(mkfifoat(fd, "fifo", 0600), 0);
	if (xattrs) {
		assert_non_null(nsr_at_path(at, sizeof(at), fd, "data"));
		assert_int_equal(setxattr(at, "user.long", "v", 1, 0), 0);
		assert_int_equal(fsetxattr(fd, "user.dir", "dv", 2, 0), 0);
	}
	close(fd);
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	fd = nsr_test_mkchain(fd, 1100, 'A', 1);
	putat(fd, "bottom", "deepest");
	close(fd);
}

/* tree_text - every object under root, by the walker (no path is used
 * whole): relative path, type, mode, size, mtime, link, content and
 * user.* attribute of each, one line each. */
static void tree_text(const char *root, struct nsr_buf *out)
{
	const char *paths[1] = { root };
	const struct nsr_walk_ent *e;
	struct nsr_walk *w = NULL;
	size_t rl = strlen(root);
	char buf[256], at[512];

	nsr_buf_reset(out);
	assert_int_equal(nsr_walk_new(&w, paths, 1, NULL), NSR_OK);
	while (nsr_walk_next(w, &e) == NSR_OK) {
		const char *link = e->link ? e->link : "";
		ssize_t n = 0;

		assert_int_equal(e->err, 0);
		if (strncmp(link, root, rl) == 0)
			link += rl;
		nsr_buf_addf(out, "%s %s %o %lld %lld.%09ld %s", e->path + rl,
			     nsr_asm_ftype_name(e->type),
			     (unsigned)e->st.st_mode & 07777,
			     (long long)e->st.st_size,
			     (long long)e->st.st_mtim.tv_sec,
			     e->st.st_mtim.tv_nsec, link);
		if (e->type == NSR_ASM_REG) {
			int fd = openat(e->dirfd, e->name, O_RDONLY);

			assert_true(fd >= 0);
			n = read(fd, buf, sizeof(buf) - 1);
			close(fd);
			assert_true(n >= 0);
			buf[n] = '\0';
			nsr_buf_addf(out, " [%s]", buf);
		}
		if (e->type != NSR_ASM_SYMLINK && e->type != NSR_ASM_HARDLINK) {
			assert_non_null(nsr_at_path(at, sizeof(at), e->dirfd,
						    e->name));
			n = lgetxattr(at, e->type == NSR_ASM_DIR ? "user.dir"
								 : "user.long",
				      buf, sizeof(buf) - 1);
			if (n > 0) {
				buf[n] = '\0';
				nsr_buf_addf(out, " x=%s", buf);
			}
		}
		nsr_buf_addch(out, '\n');
	}
	nsr_walk_free(w);
}

/* overwrite_data - the same number of other bytes in every file named
 * "data" under root, reached by the walker. */
static void overwrite_data(const char *root)
{
	const char *paths[1] = { root };
	const struct nsr_walk_ent *e;
	struct nsr_walk *w = NULL;

	assert_int_equal(nsr_walk_new(&w, paths, 1, NULL), NSR_OK);
	while (nsr_walk_next(w, &e) == NSR_OK) {
		int fd;

		if (e->type != NSR_ASM_REG || strcmp(e->name, "data") != 0)
			continue;
		fd = openat(e->dirfd, e->name, O_WRONLY);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, "LONG", 4), 4);
		close(fd);
	}
	nsr_walk_free(w);
}

/* test_long_paths - a tree with paths over 5,000 bytes and 1,100 levels
 * deep saves without a problem and restores identical, relocated, with
 * every file type, its attributes and nanosecond times. */
static void test_long_paths(void **state)
{
	struct fixture *f = *state;
	struct nsr_saver_stats ss;
	struct nsr_restore_stats rs;
	struct nsr_restore_opts o = { 0 };
	struct nsr_buf a, b;
	char src[PATH_MAX], dest[PATH_MAX], rsrc[2 * PATH_MAX];
	const char *paths[1] = { src };
	size_t longest = 0;

	nsr_buf_init(&a, 0);
	nsr_buf_init(&b, 0);
	assert_true(snprintf(src, sizeof(src), "%s/lp", f->tmp) > 0);
	build_long(src, f->xattrs);
	save(f, paths, 1, NSR_ASM_CK_CRC32C, &ss);
	assert_string_equal(f->log.data, "");
	assert_int_equal(ss.errors, 0);
	assert_int_equal(ss.files, 1 + 26 + 4 + 1100 + 1);
	for (const char *c = f->index.data; *c;) {
		const char *nl = strchr(c, '\n');

		longest = NSR_MAX(longest, (size_t)(nl - c));
		c = nl + 1;
	}
	assert_true(longest > 5200);

	assert_true(snprintf(dest, sizeof(dest), "%s/dest", f->tmp) > 0);
	o.dest = dest;
	assert_int_equal(restore(f, f->stream.data, f->stream.len, 4099, &o,
				 &rs), NSR_OK);
	assert_string_equal(f->log.data, "");
	assert_int_equal(rs.errors, 0);
	assert_int_equal(rs.files, ss.files);
	tree_text(src, &a);
	assert_true(snprintf(rsrc, sizeof(rsrc), "%s%s", dest, src) > 0);
	tree_text(rsrc, &b);
	assert_string_equal(a.data, b.data);
	/* nsr_treecmp agrees, and finds a change 5,000 bytes down */
	assert_int_equal(compare(src, rsrc, 0, &b), 0);
	overwrite_data(rsrc);
	assert_int_equal(compare(src, rsrc, NSR_TREECMP_NO_MTIME, &b), 2);
	assert_non_null(strstr(b.data, "/data: content differs\n"));
	assert_non_null(strstr(b.data, "/hard: content differs\n"));
	assert_non_null(strstr(a.data, "/data file 640 14 1600000001.987654321"
				       "  [long path data]"));
	assert_non_null(strstr(a.data, "/S/T/bottom file 640 7 "));
	if (f->xattrs)
		assert_non_null(strstr(a.data, "[long path data] x=v\n"));
	nsr_buf_release(&a);
	nsr_buf_release(&b);
}

/* named_reset - group setup: no file named yet (the group's last test
 * checks how they were). */
static int named_reset(void **state)
{
	NSR_UNUSED(state);
	memset(g_named, 0, sizeof(g_named));
	return 0;
}

/* named_says - fd, proc and tmp files were
 * named each way (-1: at least one, 0: none, 1: any number); prints
 * the counts on failure. */
static int named_says(int fd, int proc, int tmp)
{
	const int want[RST_NAMED_N] = {fd, proc, tmp};
	int ok = 1;

	for (int i = 0; i < RST_NAMED_N; i++)
		if ((want[i] == -1 && g_named[i] == 0) ||
		    (want[i] == 0 && g_named[i] != 0))
			ok = 0;
	if (!ok)
		fprintf(stderr, "named by descriptor %" PRIu64 ", through "
			"/proc %" PRIu64 ", by temporary name %" PRIu64 "\n",
			g_named[0], g_named[1], g_named[2]);
	return ok ? 0 : -1;
}

/* test_named_linked - last of its group: the workers' unnamed files
 * were linked (by descriptor as root, through /proc otherwise). */
static void test_named_linked(void **state)
{
	NSR_UNUSED(state);
	assert_int_equal(geteuid() == 0 ? named_says(-1, 0, 1)
					: named_says(0, -1, 1), 0);
}

/* test_named_proc - last of its group: linked through /proc only. */
static void test_named_proc(void **state)
{
	NSR_UNUSED(state);
	assert_int_equal(named_says(0, -1, 1), 0);
}

/* test_named_tmp - last of its group: by temporary name only. */
static void test_named_tmp(void **state)
{
	NSR_UNUSED(state);
	assert_int_equal(named_says(0, 0, -1), 0);
}

/* main - run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip_relocated,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_side_by_side, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_one_byte_feeding, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_small_reads_relative_dest,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_xattrs, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_owner_by_name, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_huge_sparse, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_corruption_reported_by_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_filter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_filter_exact, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_in_place, setup, teardown),
		cmocka_unit_test_setup_teardown(test_conflicts, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_save_errors, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_save_has_fd, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_long_paths, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_fresh_dir_conflicts,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_error_names_file, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_hostile_paths, setup,
						teardown),
	};

	const struct CMUnitTest with_workers[] = {
		cmocka_unit_test_setup_teardown(test_round_trip_relocated,
						setup_workers, teardown),
		cmocka_unit_test_setup_teardown(test_side_by_side,
						setup_workers, teardown),
		cmocka_unit_test_setup_teardown(test_one_byte_feeding,
						setup_workers, teardown),
		cmocka_unit_test_setup_teardown(
			test_corruption_reported_by_path, setup_workers,
			teardown),
		cmocka_unit_test_setup_teardown(test_in_place, setup_workers,
						teardown),
		cmocka_unit_test_setup_teardown(test_conflicts, setup_workers,
						teardown),
		cmocka_unit_test_setup_teardown(test_long_paths,
						setup_workers, teardown),
		cmocka_unit_test_setup_teardown(test_fresh_dir_conflicts,
						setup_workers, teardown),
		cmocka_unit_test_setup_teardown(test_error_names_file,
						setup_workers, teardown),
		cmocka_unit_test(test_named_linked),
	};

	const struct CMUnitTest by_name[] = {
		cmocka_unit_test_setup_teardown(test_round_trip_relocated,
						setup_by_name, teardown),
		cmocka_unit_test_setup_teardown(
			test_corruption_reported_by_path, setup_by_name,
			teardown),
		cmocka_unit_test_setup_teardown(test_conflicts, setup_by_name,
						teardown),
		cmocka_unit_test_setup_teardown(test_fresh_dir_conflicts,
						setup_by_name, teardown),
		cmocka_unit_test(test_named_tmp),
	};
	const struct CMUnitTest proc_link[] = {
		cmocka_unit_test_setup_teardown(test_round_trip_relocated,
						setup_proc_link, teardown),
		cmocka_unit_test_setup_teardown(test_conflicts,
						setup_proc_link, teardown),
		cmocka_unit_test(test_named_proc),
	};
	const struct CMUnitTest no_link[] = {
		cmocka_unit_test_setup_teardown(test_round_trip_relocated,
						setup_no_link, teardown),
		cmocka_unit_test_setup_teardown(
			test_corruption_reported_by_path, setup_no_link,
			teardown),
		cmocka_unit_test_setup_teardown(test_conflicts, setup_no_link,
						teardown),
		cmocka_unit_test(test_named_tmp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL) |
	       cmocka_run_group_tests_name("restore with writer workers",
					   with_workers, named_reset, NULL) |
	       cmocka_run_group_tests_name("writer workers, by name",
					   by_name, named_reset, NULL) |
	       cmocka_run_group_tests_name("writer workers, linked through "
					   "/proc/self/fd",
					   proc_link, named_reset, NULL) |
	       cmocka_run_group_tests_name("writer workers, no link",
					   no_link, named_reset, NULL);
}
