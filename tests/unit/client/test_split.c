/*
 * test_split.c - split files (asm.h version 7, restore.h "Split
 * files"): a file saved as a head and four parts in three streams by
 * nsr_saver_add_part comes back identical (data, hole, mode, times,
 * attribute) from three restores sharing one registry, fed in any
 * interleaving; a piece missing is reported and leaves nothing behind;
 * a damaged part makes the file damaged; the skip policy keeps an
 * existing file once; a temporary name taken away between pieces is
 * said once; a split file does not go to a command; many split
 * files waiting for their parts hold few descriptors; a saver not told
 * of split files refuses parts.
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <libgen.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "nsr/asm.h"
#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/restore.h"
#include "nsr/saver.h"
#include "nsr/walk.h"
#include "nsr_test.h"

#define TOTAL 350000u
#define PART 100000u
#define NPARTS 4u

struct fixture {
	char *tmp;
	char src[PATH_MAX];	/* the file */
	struct nsr_buf s[3];	/* the streams: A, B, C */
	struct nsr_buf log;	/* restore problems, "path what rc\n" */
	int xattr;		/* the file system took user.kind */
};

/* sink - collect a stream. */
static int sink(void *ctx, const void *p, size_t n)
{
	return nsr_buf_add(ctx, p, n);
}

/* on_error - record a restore problem. */
static void on_error(void *ctx, const char *path, int rc, int e,
		     const char *what)
{
	NSR_UNUSED(e);
	nsr_buf_addf(ctx, "%s %s %d\n", path, what, rc);
}

/* stream - the pieces pieces[0..n) (0 = head) of the file as one
 * stream in out. */
static void stream(struct fixture *f, struct nsr_buf *out,
		   const uint32_t *pieces, size_t n)
{
	struct nsr_saver_opts o = { 0 };
	struct nsr_saver_cb cb = { 0 };
	struct nsr_saver *s = NULL;
	struct nsr_walk_ent e;

	memset(&e, 0, sizeof(e));
	e.path = f->src;
	e.type = NSR_ASM_REG;
	e.dirfd = AT_FDCWD;
	assert_int_equal(lstat(f->src, &e.st), 0);
	o.client = "c1";
	o.name = "/sp";
	o.split = true;
	cb.write = sink;
	cb.write_ctx = out;
	nsr_buf_reset(out);
	assert_int_equal(nsr_saver_new(&s, &o, &cb), NSR_OK);
	for (size_t i = 0; i < n; i++) {
		struct nsr_saver_part p = { pieces[i], NPARTS, 0, 0, TOTAL };

		if (pieces[i]) {
			p.off = (uint64_t)(pieces[i] - 1) * PART;
			p.len = NSR_MIN((uint64_t)PART, TOTAL - p.off);
		}
		assert_int_equal(nsr_saver_add_part(s, &e, &p), NSR_OK);
	}
	assert_int_equal(nsr_saver_finish(s), NSR_OK);
	nsr_saver_free(s);
}

/* setup - the file (data, a hole, data; mode 0640, an attribute) and
 * its streams: A the head and part 1, B parts 4 and 2, C part 3.  The
 * hole is part 2 and half of part 3. */
static int setup(void **state)
{
	static const uint32_t a[] = { 0, 1 }, b[] = { 4, 2 }, c[] = { 3 };
	struct fixture *f = calloc(1, sizeof(*f));
	uint8_t buf[PART];
	struct timespec t[2] = { { 1600000000, 5 }, { 1600000001, 7 } };
	int fd;

	assert_non_null(f);
	f->tmp = nsr_test_tmpdir("split");
	snprintf(f->src, sizeof(f->src), "%s/big", f->tmp);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 7 + i / 251);
	fd = open(f->src, O_WRONLY | O_CREAT | O_EXCL, 0640);
	assert_true(fd >= 0);
	assert_int_equal(nsr_pwrite_full(fd, buf, PART, 0), NSR_OK);
	/* 100,000 .. 250,000: a hole */
	assert_int_equal(nsr_pwrite_full(fd, buf, TOTAL - 250000, 250000),
			 NSR_OK);
	f->xattr = fsetxattr(fd, "user.kind", "big", 3, 0) == 0;
	assert_int_equal(futimens(fd, t), 0);
	close(fd);
	assert_int_equal(chmod(f->src, 0640), 0);
	for (int i = 0; i < 3; i++)
		nsr_buf_init(&f->s[i], 0);
	nsr_buf_init(&f->log, 0);
	stream(f, &f->s[0], a, 2);
	stream(f, &f->s[1], b, 2);
	stream(f, &f->s[2], c, 1);
	*state = f;
	return 0;
}

/* teardown - remove the tree. */
static int teardown(void **state)
{
	struct fixture *f = *state;

	for (int i = 0; i < 3; i++)
		nsr_buf_release(&f->s[i]);
	nsr_buf_release(&f->log);
	nsr_test_rmrf(f->tmp);
	free(f->tmp);
	free(f);
	return 0;
}

/* restores_new - n restores into dest sharing a new registry *sp,
 * problems into f's log. */
static void restores_new(struct fixture *f, const char *dest, int conflict,
			 struct nsr_restore_split **sp, struct nsr_restore **r,
			 size_t n)
{
	struct nsr_restore_opts o = { 0 };
	struct nsr_restore_cb cb = { 0 };

	assert_int_equal(nsr_restore_split_new(sp), NSR_OK);
	o.dest = dest;
	o.conflict = conflict;
	o.dirs_last = 1;
	o.split = *sp;
	cb.error = on_error;
	cb.ctx = &f->log;
	for (size_t i = 0; i < n; i++)
		assert_int_equal(nsr_restore_new(&r[i], &o, &cb), NSR_OK);
}

/* restores_end - end sp (how many files were not whole into *missing),
 * then finish and free the n restores; the files they restored. */
static uint64_t restores_end(struct nsr_restore_split *sp,
			     struct nsr_restore **r, size_t n,
			     size_t *missing)
{
	struct nsr_restore_stats st;
	uint64_t files = 0;

	*missing = nsr_restore_split_end(sp);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(nsr_restore_finish(r[i]), NSR_OK);
		nsr_restore_stats(r[i], &st);
		files += st.files;
		nsr_restore_free(r[i]);
	}
	nsr_restore_split_free(sp);
	return files;
}

/* run - restore streams which[0..n) into dest side by side, sharing a
 * registry, fed step bytes at a time in turn; the files restored and
 * the registry's count of files not whole. */
static uint64_t run(struct fixture *f, const char *dest, const int *which,
		    size_t n, size_t step, int conflict, size_t *missing)
{
	struct nsr_restore_split *sp = NULL;
	struct nsr_restore *r[3] = { NULL, NULL, NULL };
	size_t at = 0;
	int more = 1;

	restores_new(f, dest, conflict, &sp, r, n);
	while (more) {
		more = 0;
		for (size_t i = 0; i < n; i++) {
			const struct nsr_buf *s = &f->s[which[i]];

			if (at >= s->len)
				continue;
			assert_int_equal(nsr_restore_feed(r[i], s->data + at,
							  NSR_MIN(step,
								  s->len -
									  at)),
					 NSR_OK);
			more = 1;
		}
		at += step;
	}
	return restores_end(sp, r, n, missing);
}

/* target - where the file lands under dest. */
static const char *target(const struct fixture *f, const char *dest)
{
	static char b[2 * PATH_MAX];

	snprintf(b, sizeof(b), "%s%s", dest, f->src);
	return b;
}

/* no_tmp - nothing named .nsr-restore.* in the file's directory. */
static int no_tmp(const char *file)
{
	char cmd[2 * PATH_MAX + 64], dir[2 * PATH_MAX];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", file);
	slash = strrchr(dir, '/');
	*slash = '\0';
	snprintf(cmd, sizeof(cmd), "ls -a '%s' | grep -q '^\\.nsr-restore'",
		 dir);
	return system(cmd) != 0;
}

/* same - the restored file equals the source: bytes, mode, times,
 * attribute, and its hole. */
static void same(const struct fixture *f, const char *t)
{
	struct nsr_buf a, b;
	struct stat sa, sb;
	char v[16];

	nsr_buf_init(&a, 0);
	nsr_buf_init(&b, 0);
	assert_int_equal(nsr_file_read(f->src, &a, 1 << 20), NSR_OK);
	assert_int_equal(nsr_file_read(t, &b, 1 << 20), NSR_OK);
	assert_int_equal(a.len, TOTAL);
	assert_int_equal(b.len, TOTAL);
	assert_memory_equal(a.data, b.data, TOTAL);
	assert_int_equal(stat(f->src, &sa), 0);
	assert_int_equal(stat(t, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0640);
	assert_int_equal(sb.st_mtim.tv_sec, sa.st_mtim.tv_sec);
	assert_int_equal(sb.st_mtim.tv_nsec, sa.st_mtim.tv_nsec);
	/* the hole was not written: fewer blocks than bytes */
	assert_true((uint64_t)sb.st_blocks * 512 < TOTAL);
	if (f->xattr) {
		assert_int_equal(getxattr(t, "user.kind", v, sizeof(v)), 3);
		assert_memory_equal(v, "big", 3);
	}
	nsr_buf_release(&a);
	nsr_buf_release(&b);
}

/* test_streams - what each stream holds: A the head (no data) and
 * part 1 (data), B part 4 (data) and part 2 (a hole), C part 3 (half
 * a hole, half data). */
static void test_streams(void **state)
{
	struct fixture *f = *state;

	assert_true(f->s[0].len > PART && f->s[0].len < PART + 4096);
	assert_true(f->s[1].len > 50000 && f->s[1].len < 50000 + 4096);
	assert_true(f->s[2].len > 50000 && f->s[2].len < 50000 + 4096);
}

/* test_together - three restores, any interleaving. */
static void test_together(void **state)
{
	struct fixture *f = *state;
	static const int orders[][3] = { { 0, 1, 2 }, { 2, 1, 0 } };
	static const size_t steps[] = { 1, 777, 65536, 1 << 20 };
	char dest[PATH_MAX];
	size_t missing;
	int k = 0;

	for (size_t o = 0; o < 2; o++)
		for (size_t s = 0; s < 4; s++) {
			snprintf(dest, sizeof(dest), "%s/r%d", f->tmp, k++);
			assert_int_equal(run(f, dest, orders[o], 3, steps[s],
					     NSR_RESTORE_SKIP, &missing),
					 1);
			assert_int_equal(missing, 0);
			assert_string_equal(f->log.data, "");
			same(f, target(f, dest));
			assert_true(no_tmp(target(f, dest)));
		}
}

/* test_missing - a stream left out: said once, nothing left behind;
 * one restore on its own (its own registry) says it at its finish. */
static void test_missing(void **state)
{
	struct fixture *f = *state;
	static const int ab[] = { 0, 1 };
	struct nsr_restore *r = NULL;
	struct nsr_restore_opts o = { 0 };
	struct nsr_restore_cb cb = { 0 };
	struct nsr_restore_stats st;
	char dest[PATH_MAX];
	size_t missing;

	snprintf(dest, sizeof(dest), "%s/m1", f->tmp);
	assert_int_equal(run(f, dest, ab, 2, 4096, NSR_RESTORE_SKIP,
			     &missing),
			 0);
	assert_int_equal(missing, 1);
	assert_non_null(strstr(f->log.data, "its head and 3 of its 4 parts "
					    "were read, not all"));
	assert_true(access(target(f, dest), F_OK) != 0);
	assert_true(no_tmp(target(f, dest)));

	nsr_buf_reset(&f->log);
	snprintf(dest, sizeof(dest), "%s/m2", f->tmp);
	o.dest = dest;
	cb.error = on_error;
	cb.ctx = &f->log;
	assert_int_equal(nsr_restore_new(&r, &o, &cb), NSR_OK);
	assert_int_equal(nsr_restore_feed(r, f->s[2].data, f->s[2].len),
			 NSR_OK);
	assert_int_equal(nsr_restore_finish(r), NSR_OK);
	nsr_restore_stats(r, &st);
	nsr_restore_free(r);
	assert_int_equal(st.files, 0);
	assert_int_equal(st.errors, 1);
	assert_non_null(strstr(f->log.data, "not its head and 1 of its 4"));
	assert_true(access(target(f, dest), F_OK) != 0);
	assert_true(no_tmp(target(f, dest)));
}

/* test_damaged_part - a data byte of part 2 changed: the file is
 * damaged, not under its name (kept apart with keep_damaged). */
static void test_damaged_part(void **state)
{
	struct fixture *f = *state;
	static const int all[] = { 0, 1, 2 };
	char dest[PATH_MAX], kept[2 * PATH_MAX + 16];
	size_t missing;

	/* B: part 4's 50,000 bytes of data first, then part 2 (a hole):
	 * its middle is part 4's data */
	f->s[1].data[f->s[1].len / 2] ^= 0x5a;
	snprintf(dest, sizeof(dest), "%s/d1", f->tmp);
	assert_int_equal(run(f, dest, all, 3, 8192, NSR_RESTORE_SKIP,
			     &missing),
			 0);
	assert_int_equal(missing, 0);
	assert_non_null(strstr(f->log.data, "checksum: damaged"));
	assert_true(access(target(f, dest), F_OK) != 0);
	snprintf(kept, sizeof(kept), "%s.damaged", target(f, dest));
	assert_true(access(kept, F_OK) != 0);
	assert_true(no_tmp(target(f, dest)));
	f->s[1].data[f->s[1].len / 2] ^= 0x5a;
}

/* test_skip_existing - the skip policy keeps an existing file, said
 * once, whichever piece comes first. */
static void test_skip_existing(void **state)
{
	struct fixture *f = *state;
	static const int cba[] = { 2, 1, 0 };
	char dest[PATH_MAX];
	struct nsr_buf keep;
	size_t missing;

	snprintf(dest, sizeof(dest), "%s/s1", f->tmp);
	assert_int_equal(nsr_mkdir_p(dest, 0755), NSR_OK);
	snprintf(dest, sizeof(dest), "%s/s1%s", f->tmp, f->tmp);
	assert_int_equal(nsr_mkdir_p(dest, 0755), NSR_OK);
	snprintf(dest, sizeof(dest), "%s/s1", f->tmp);
	assert_int_equal(nsr_file_replace(target(f, dest), "mine", 4, 0644),
			 NSR_OK);
	assert_int_equal(run(f, dest, cba, 3, 4096, NSR_RESTORE_SKIP,
			     &missing),
			 0);
	assert_int_equal(missing, 0);
	assert_string_equal(f->log.data, "");
	nsr_buf_init(&keep, 0);
	assert_int_equal(nsr_file_read(target(f, dest), &keep, 100), NSR_OK);
	assert_int_equal(keep.len, 4);
	assert_memory_equal(keep.data, "mine", 4);
	nsr_buf_release(&keep);
	assert_true(no_tmp(target(f, dest)));
	/* overwrite: replaced by the whole file */
	assert_int_equal(run(f, dest, cba, 3, 4096, NSR_RESTORE_OVERWRITE,
			     &missing),
			 1);
	same(f, target(f, dest));
}

/* test_disagree - a piece that names another size for the file: said
 * once, and the file is not recovered (what came is removed). */
static void test_disagree(void **state)
{
	struct fixture *f = *state;
	static const int all[] = { 0, 1, 2 };
	struct nsr_saver_opts so = { 0 };
	struct nsr_saver_cb scb = { 0 };
	struct nsr_saver *sv = NULL;
	struct nsr_saver_part p3 = { 3, NPARTS, 2 * PART, PART, TOTAL + 1 };
	struct nsr_walk_ent e;
	char dest[PATH_MAX];
	size_t missing;

	memset(&e, 0, sizeof(e));
	e.path = f->src;
	e.type = NSR_ASM_REG;
	e.dirfd = AT_FDCWD;
	assert_int_equal(lstat(f->src, &e.st), 0);
	so.client = "c1";
	so.name = "/sp";
	so.split = true;
	scb.write = sink;
	scb.write_ctx = &f->s[2];
	nsr_buf_reset(&f->s[2]);
	assert_int_equal(nsr_saver_new(&sv, &so, &scb), NSR_OK);
	assert_int_equal(nsr_saver_add_part(sv, &e, &p3), NSR_OK);
	assert_int_equal(nsr_saver_finish(sv), NSR_OK);
	nsr_saver_free(sv);
	snprintf(dest, sizeof(dest), "%s/dis", f->tmp);
	assert_int_equal(run(f, dest, all, 3, 4096, NSR_RESTORE_SKIP,
			     &missing),
			 0);
	assert_int_equal(missing, 1);
	assert_non_null(strstr(f->log.data, "its pieces disagree on its "
					    "size"));
	assert_true(access(target(f, dest), F_OK) != 0);
	assert_true(no_tmp(target(f, dest)));
}

/* test_tmp_gone - the file's temporary name taken away while it waits
 * for its other pieces (stream A restored, then the name removed, then
 * B and C): the next piece cannot open it again, which is said once;
 * the file is not recovered and nothing of it is left. */
static void test_tmp_gone(void **state)
{
	struct fixture *f = *state;
	struct nsr_restore_split *sp = NULL;
	struct nsr_restore *r[3] = { NULL, NULL, NULL };
	char dest[PATH_MAX], rm[2 * PATH_MAX + 64];
	size_t missing;

	snprintf(dest, sizeof(dest), "%s/gone", f->tmp);
	restores_new(f, dest, 0, &sp, r, 3);
	assert_int_equal(nsr_restore_feed(r[0], f->s[0].data, f->s[0].len),
			 NSR_OK);
	assert_false(no_tmp(target(f, dest))); /* it waits under one */
	snprintf(rm, sizeof(rm), "rm -f '%s'/.nsr-restore*",
		 dirname(strdupa(target(f, dest))));
	assert_int_equal(system(rm), 0);
	for (int i = 1; i < 3; i++)
		assert_int_equal(nsr_restore_feed(r[i], f->s[i].data,
						  f->s[i].len),
				 NSR_OK);
	assert_int_equal(restores_end(sp, r, 3, &missing), 0);
	assert_int_equal(missing, 0);
	assert_non_null(strstr(f->log.data, "open again"));
	/* said once, for the first piece that could not open it */
	assert_null(strstr(strstr(f->log.data, "open again") + 1,
			   "open again"));
	assert_true(access(target(f, dest), F_OK) != 0);
	assert_true(no_tmp(target(f, dest)));
}

/* test_to_command - a split file does not go to a command: said once
 * for its two pieces in stream A, nothing written. */
static void test_to_command(void **state)
{
	struct fixture *f = *state;
	struct nsr_restore *r = NULL;
	struct nsr_restore_opts o = { 0 };
	struct nsr_restore_cb cb = { 0 };
	struct nsr_restore_stats st;
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	o.to_fd = 1;
	o.out_fd = fd;
	cb.error = on_error;
	cb.ctx = &f->log;
	assert_int_equal(nsr_restore_new(&r, &o, &cb), NSR_OK);
	assert_int_equal(nsr_restore_feed(r, f->s[0].data, f->s[0].len),
			 NSR_OK);
	assert_int_equal(nsr_restore_finish(r), NSR_OK);
	nsr_restore_stats(r, &st);
	nsr_restore_free(r);
	close(fd);
	assert_int_equal(st.errors, 1);
	assert_int_equal(st.bytes, 0);
	assert_non_null(strstr(f->log.data, "cannot go to a command"));
}

/* test_many_files - 300 split files, all their heads in one stream and
 * all their parts in another, restored one stream after the other
 * under a limit of 64 open descriptors: every one comes back (a parked
 * file holds no descriptor but its directory's, which they share). */
static void test_many_files(void **state)
{
	struct fixture *f = *state;
	struct nsr_restore_split *sp = NULL;
	struct nsr_restore *r[2] = { NULL, NULL };
	struct nsr_saver *sv[2] = { NULL, NULL };
	struct nsr_saver_opts so = { 0 };
	struct nsr_saver_cb scb = { 0 };
	struct nsr_buf s[2], a, b;
	struct rlimit was, low;
	char dir[PATH_MAX], src[PATH_MAX + 32], dest[PATH_MAX];
	char got[2 * PATH_MAX + 64];
	size_t missing;
	enum { N = 300 };

	snprintf(dir, sizeof(dir), "%s/many", f->tmp);
	snprintf(dest, sizeof(dest), "%s/rm", f->tmp);
	assert_int_equal(nsr_mkdir_p(dir, 0755), NSR_OK);
	for (int k = 0; k < 2; k++)
		nsr_buf_init(&s[k], 0);
	so.client = "c1";
	so.name = "/sp";
	so.split = true;
	scb.write = sink;
	for (int k = 0; k < 2; k++) {
		scb.write_ctx = &s[k];
		assert_int_equal(nsr_saver_new(&sv[k], &so, &scb), NSR_OK);
	}
	for (int i = 0; i < N; i++) {
		struct nsr_walk_ent e;
		char data[1000];

		memset(data, 'a' + i % 26, sizeof(data));
		data[0] = (char)i;
		snprintf(src, sizeof(src), "%s/f%03d", dir, i);
		assert_int_equal(
			nsr_file_replace(src, data, sizeof(data), 0644),
			NSR_OK);
		memset(&e, 0, sizeof(e));
		e.path = src;
		e.type = NSR_ASM_REG;
		e.dirfd = AT_FDCWD;
		assert_int_equal(lstat(src, &e.st), 0);
		for (uint32_t p = 0; p <= 2; p++) {
			struct nsr_saver_part pt = {p, 2, p ? (p - 1) * 600 : 0,
						    p == 0   ? 0
						    : p == 1 ? 600
							     : 400,
						    1000};

			assert_int_equal(
				nsr_saver_add_part(sv[p ? 1 : 0], &e, &pt),
				NSR_OK);
		}
	}
	for (int k = 0; k < 2; k++) {
		assert_int_equal(nsr_saver_finish(sv[k]), NSR_OK);
		nsr_saver_free(sv[k]);
	}
	restores_new(f, dest, 0, &sp, r, 2);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &was), 0);
	low = was;
	low.rlim_cur = 64;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	for (int k = 0; k < 2; k++)
		assert_int_equal(nsr_restore_feed(r[k], s[k].data, s[k].len),
				 NSR_OK);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &was), 0);
	restores_end(sp, r, 2, &missing);
	assert_int_equal(missing, 0);
	assert_string_equal(f->log.data, "");
	nsr_buf_init(&a, 0);
	nsr_buf_init(&b, 0);
	for (int i = 0; i < N; i++) {
		snprintf(src, sizeof(src), "%s/f%03d", dir, i);
		snprintf(got, sizeof(got), "%s%s", dest, src);
		nsr_buf_reset(&a);
		nsr_buf_reset(&b);
		assert_int_equal(nsr_file_read(src, &a, 4096), NSR_OK);
		assert_int_equal(nsr_file_read(got, &b, 4096), NSR_OK);
		assert_int_equal(b.len, 1000);
		assert_memory_equal(a.data, b.data, 1000);
	}
	nsr_buf_release(&a);
	nsr_buf_release(&b);
	for (int k = 0; k < 2; k++)
		nsr_buf_release(&s[k]);
}

/* test_saver_refuses - parts need opts.split, and sane pieces. */
static void test_saver_refuses(void **state)
{
	struct fixture *f = *state;
	struct nsr_saver_opts o = { 0 };
	struct nsr_saver_cb cb = { 0 };
	struct nsr_saver *s = NULL;
	struct nsr_walk_ent e;
	struct nsr_buf out;
	struct nsr_saver_part p = { 1, NPARTS, 0, PART, TOTAL };
	struct nsr_saver_part head_with_data = { 0, NPARTS, 0, 5, TOTAL };

	memset(&e, 0, sizeof(e));
	e.path = f->src;
	e.type = NSR_ASM_REG;
	e.dirfd = AT_FDCWD;
	assert_int_equal(lstat(f->src, &e.st), 0);
	nsr_buf_init(&out, 0);
	o.client = "c1";
	o.name = "/sp";
	cb.write = sink;
	cb.write_ctx = &out;
	assert_int_equal(nsr_saver_new(&s, &o, &cb), NSR_OK);
	assert_int_equal(nsr_saver_add_part(s, &e, &p), NSR_ERR_INVAL);
	nsr_saver_free(s);
	o.split = true;
	assert_int_equal(nsr_saver_new(&s, &o, &cb), NSR_OK);
	assert_int_equal(nsr_saver_add_part(s, &e, &head_with_data),
			 NSR_ERR_INVAL);
	nsr_saver_free(s);
	nsr_buf_release(&out);
}

/* main - run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_streams, setup, teardown),
		cmocka_unit_test_setup_teardown(test_together, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged_part, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_skip_existing, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_disagree, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_tmp_gone, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_to_command, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_many_files, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_saver_refuses, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
