/*
 * test_walk.c - the file-system walk: order, types, hard links, symlinks
 * not followed, sockets skipped, per-object errors.
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "nsr/asm.h"
#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/walk.h"
#include "nsr_test.h"

/* mkfile - create path with text. */
static void mkfile(const char *dir, const char *name, const char *text)
{
	char p[PATH_MAX];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* at - dir/name in a static buffer. */
static const char *at(const char *dir, const char *name)
{
	static char p[4][PATH_MAX];
	static int k;

	k = (k + 1) % 4;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
	return p[k];
}

/* walk_text - one line per entry: rel path, type, link (relative to
 * root). */
static int walk_text(const char *root, const char *const *paths, size_t n,
		     struct nsr_buf *out)
{
	struct nsr_walk *w = NULL;
	const struct nsr_walk_ent *e;
	size_t rl = strlen(root);
	int rc;

	assert_int_equal(nsr_walk_new(&w, paths, n, NULL), NSR_OK);
	for (rc = nsr_walk_next(w, &e); rc == NSR_OK;
	     rc = nsr_walk_next(w, &e)) {
		const char *link = e->link ? e->link : "";

		if (strncmp(link, root, rl) == 0)
			link += rl;
		nsr_buf_addf(out, "%s %s %s%s%s\n", e->path + rl,
			     e->err ? "ERR" : nsr_asm_ftype_name(e->type),
			     link, e->err ? " " : "", e->err ? e->what : "");
	}
	nsr_walk_free(w);
	return rc;
}

/* test_order_and_types - sorted pre-order walk with every type. */
static void test_order_and_types(void **state)
{
	char *root = nsr_test_tmpdir("walk");
	const char *paths[1];
	struct nsr_buf out;
	struct sockaddr_un sa;
	int s;

	NSR_UNUSED(state);
	assert_int_equal(mkdir(at(root, "t"), 0755), 0);
	assert_int_equal(mkdir(at(root, "t/b"), 0755), 0);
	assert_int_equal(mkdir(at(root, "t/a"), 0755), 0);
	mkfile(root, "t/z", "z");
	mkfile(root, "t/a/2", "two");
	mkfile(root, "t/a/10", "ten");
	mkfile(root, "t/B", "upper");
	assert_int_equal(link(at(root, "t/a/2"), at(root, "t/b/hard")), 0);
	assert_int_equal(symlink("a", at(root, "t/link")), 0);
	assert_int_equal(mkfifo(at(root, "t/fifo"), 0600), 0);
	/* a socket is not saved */
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(s >= 0);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", at(root, "t/sock"));
	if (strlen(at(root, "t/sock")) < sizeof(sa.sun_path))
		assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)),
				 0);
	close(s);

	nsr_buf_init(&out, 0);
	paths[0] = at(root, "t/"); /* trailing slash dropped */
	assert_int_equal(walk_text(root, paths, 1, &out), NSR_ERR_EOF);
	assert_string_equal(out.data,
			    "/t dir \n"
			    "/t/B file \n"
			    "/t/a dir \n"
			    "/t/a/10 file \n"
			    "/t/a/2 file \n"
			    "/t/b dir \n"
			    "/t/b/hard hardlink /t/a/2\n"
			    "/t/fifo fifo \n"
			    "/t/link symlink a\n"
			    "/t/z file \n");
	nsr_buf_release(&out);
	nsr_test_rmrf(root);
	free(root);
}

/* test_symlink_root_and_errors - symlink roots and missing paths. */
static void test_symlink_root_and_errors(void **state)
{
	char *root = nsr_test_tmpdir("walk");
	const char *paths[3];
	struct nsr_buf out;

	NSR_UNUSED(state);
	assert_int_equal(mkdir(at(root, "d"), 0755), 0);
	mkfile(root, "d/f", "x");
	assert_int_equal(symlink(at(root, "d"), at(root, "l")), 0);
	nsr_buf_init(&out, 0);
	/* A symlink given as a path is reported, not followed; a missing
	 * path is an error entry and the walk goes on. */
	paths[0] = at(root, "l");
	paths[1] = at(root, "missing");
	paths[2] = at(root, "d");
	assert_int_equal(walk_text(root, paths, 3, &out), NSR_ERR_EOF);
	assert_non_null(strstr(out.data, "/l symlink "));
	assert_non_null(strstr(out.data, "/missing ERR  lstat\n"));
	assert_non_null(strstr(out.data, "/d dir \n/d/f file \n"));
	assert_null(strstr(out.data, "/l/f"));
	nsr_buf_release(&out);
	if (geteuid() != 0) {
		/* An unreadable directory: reported, siblings still walked. */
		assert_int_equal(chmod(at(root, "d"), 0), 0);
		nsr_buf_init(&out, 0);
		paths[0] = at(root, "d");
		assert_int_equal(walk_text(root, paths, 1, &out), NSR_ERR_EOF);
		assert_non_null(strstr(out.data, "/d ERR  opendir\n"));
		nsr_buf_release(&out);
		chmod(at(root, "d"), 0755);
	}
	{
		struct nsr_walk *w = NULL;
		const char *bad[1] = { "" };

		assert_int_equal(nsr_walk_new(&w, bad, 1, NULL), NSR_ERR_INVAL);
		assert_null(w);
	}
	nsr_test_rmrf(root);
	free(root);
}

/* walk_has - does a walk of root (with cross) yield path? */
static int walk_has(const char *root, bool cross, const char *path)
{
	struct nsr_walk_opts o = { cross };
	struct nsr_walk *w = NULL;
	const struct nsr_walk_ent *e;
	int found = 0;

	assert_int_equal(nsr_walk_new(&w, &root, 1, &o), NSR_OK);
	while (nsr_walk_next(w, &e) == NSR_OK)
		if (strcmp(e->path, path) == 0)
			found = 1;
	nsr_walk_free(w);
	return found;
}

/* test_mount_points - mount points are reported but not entered unless
 * asked. Uses the devpts mount at /dev/pts, which always holds ptmx; skipped
 * where that is not a separate mount. */
static void test_mount_points(void **state)
{
	struct stat d, p, x;

	NSR_UNUSED(state);
	if (lstat("/dev", &d) != 0 || lstat("/dev/pts", &p) != 0 ||
	    lstat("/dev/pts/ptmx", &x) != 0 || d.st_dev == p.st_dev)
		skip();
	assert_true(walk_has("/dev", false, "/dev/pts"));
	assert_false(walk_has("/dev", false, "/dev/pts/ptmx"));
	assert_true(walk_has("/dev", true, "/dev/pts/ptmx"));
	/* a mount point given as a path is entered */
	assert_true(walk_has("/dev/pts", false, "/dev/pts/ptmx"));
}

/* test_swap_parent_for_symlink - entries below a directory are reached
 * through its descriptor: replacing the directory by a symlink during the
 * walk does not lead the walk (or a reader of dirfd/name) elsewhere. */
static void test_swap_parent_for_symlink(void **state)
{
	char *root = nsr_test_tmpdir("walk");
	const char *paths[1];
	struct nsr_walk *w = NULL;
	const struct nsr_walk_ent *e;
	char buf[16] = "";
	int fd, seen = 0;

	NSR_UNUSED(state);
	assert_int_equal(mkdir(at(root, "t"), 0755), 0);
	assert_int_equal(mkdir(at(root, "t/d"), 0755), 0);
	mkfile(root, "t/d/f", "inside");
	assert_int_equal(mkdir(at(root, "elsewhere"), 0755), 0);
	mkfile(root, "elsewhere/f", "outside");
	paths[0] = at(root, "t");
	assert_int_equal(nsr_walk_new(&w, paths, 1, NULL), NSR_OK);
	while (nsr_walk_next(w, &e) == NSR_OK) {
		if (strcmp(e->path + strlen(root), "/t/d") == 0) {
			/* the directory was entered; now swap it */
			assert_int_equal(rename(at(root, "t/d"),
						at(root, "t/d.moved")), 0);
			assert_int_equal(symlink(at(root, "elsewhere"),
						 at(root, "t/d")), 0);
		}
		if (strcmp(e->path + strlen(root), "/t/d/f") == 0) {
			assert_int_equal(e->type, NSR_ASM_REG);
			assert_non_null(e->name);
			fd = openat(e->dirfd, e->name, O_RDONLY | O_NOFOLLOW);
			assert_true(fd >= 0);
			assert_true(read(fd, buf, sizeof(buf) - 1) > 0);
			close(fd);
			assert_string_equal(buf, "inside");
			seen = 1;
		}
	}
	nsr_walk_free(w);
	assert_true(seen);
	nsr_test_rmrf(root);
	free(root);
}

/* test_out_of_descriptors - a tree deeper than the descriptor limit is
 * still walked whole (levels fall back to paths). */
static void test_out_of_descriptors(void **state)
{
	char *root = nsr_test_tmpdir("walk");
	struct rlimit old, low;
	struct nsr_buf rel, out;
	const char *paths[1];
	int dirs = 0;

	NSR_UNUSED(state);
	nsr_buf_init(&rel, 0);
	nsr_buf_addstr(&rel, "deep");
	assert_int_equal(mkdir(at(root, rel.data), 0755), 0);
	for (int i = 0; i < 80; i++) {
		nsr_buf_addstr(&rel, "/d");
		assert_int_equal(mkdir(at(root, rel.data), 0755), 0);
	}
	nsr_buf_addstr(&rel, "/file");
	mkfile(root, rel.data, "bottom");
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = 40;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	nsr_buf_init(&out, 0);
	paths[0] = at(root, "deep");
	assert_int_equal(walk_text(root, paths, 1, &out), NSR_ERR_EOF);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	for (const char *c = strstr(out.data, " dir "); c != NULL;
	     c = strstr(c + 1, " dir "))
		dirs++;
	assert_int_equal(dirs, 81);
	assert_null(strstr(out.data, "ERR"));
	assert_non_null(strstr(out.data, "/d/file file \n"));
	nsr_buf_release(&out);
	nsr_buf_release(&rel);
	nsr_test_rmrf(root);
	free(root);
}

/* test_long_and_deep - paths over 6,000 bytes, 230 levels deep, with
 * 40 descriptors: walked whole, every object reachable by (dirfd,
 * name), though no path fits in PATH_MAX. */
static void test_long_and_deep(void **state)
{
	char *root = nsr_test_tmpdir("walk"), buf[16];
	const struct nsr_walk_ent *e;
	struct nsr_walk *w = NULL;
	struct rlimit old, low;
	const char *paths[1];
	size_t dirs = 0, longest = 0;
	int fd, rc, found = 0;

	NSR_UNUSED(state);
	fd = open(root, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	fd = nsr_test_mkchain(fd, 30, 'a', 200);
	/* visited after the deep chain below: its level is reopened */
	rc = openat(fd, "~tail", O_WRONLY | O_CREAT, 0644);
	assert_true(rc >= 0);
	assert_int_equal(write(rc, "deep", 4), 4);
	close(rc);
	fd = nsr_test_mkchain(fd, 200, 'a', 1);
	assert_int_equal(mkfifoat(fd, "p", 0600), 0);
	rc = openat(fd, "bottom", O_WRONLY | O_CREAT, 0644);
	assert_true(rc >= 0);
	assert_int_equal(write(rc, "deep", 4), 4);
	close(rc);
	close(fd);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = 40;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	paths[0] = root;
	assert_int_equal(nsr_walk_new(&w, paths, 1, NULL), NSR_OK);
	while ((rc = nsr_walk_next(w, &e)) == NSR_OK) {
		assert_int_equal(e->err, 0);
		dirs += e->type == NSR_ASM_DIR;
		longest = NSR_MAX(longest, strlen(e->path));
		if (e->type == NSR_ASM_REG) {
			fd = openat(e->dirfd, e->name, O_RDONLY);
			assert_true(fd >= 0);
			assert_int_equal(read(fd, buf, sizeof(buf)), 4);
			close(fd);
			assert_memory_equal(buf, "deep", 4);
			found++;
		}
	}
	nsr_walk_free(w);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	assert_int_equal(rc, NSR_ERR_EOF);
	assert_int_equal(dirs, 1 + 30 + 200);
	assert_int_equal(found, 2);
	assert_true(longest > 6400);
	nsr_test_rmrf(root);
	free(root);
}

/* main - run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_and_types),
		cmocka_unit_test(test_symlink_root_and_errors),
		cmocka_unit_test(test_mount_points),
		cmocka_unit_test(test_swap_parent_for_symlink),
		cmocka_unit_test(test_out_of_descriptors),
		cmocka_unit_test(test_long_and_deep),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
