/*
 * test_pipe.c - pipeline saves end to end without a server: a command
 * behind a pipe (runcmd.h: output, exit status, signal, the stderr tail,
 * a command that cannot run, no shell), its output saved by
 * nsr_saver_add_pipe as an unsized file in pieces of the read size, and
 * the stream restored into another command (restore.h to_fd) and into a
 * file.
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/restore.h"
#include "nsr/runcmd.h"
#include "nsr/saver.h"
#include "nsr_test.h"

/* run_read - run argv reading its output into out; wait; its status. */
static int run_read(const char *const argv[], struct nsr_buf *out,
		    struct nsr_runcmd_status *st, struct nsr_runcmd **c)
{
	char buf[4096];
	ssize_t n;

	assert_int_equal(nsr_runcmd_start(c, argv, NSR_RUNCMD_READ, out),
			 NSR_OK);
	while ((n = read(nsr_runcmd_fd(*c), buf, sizeof(buf))) > 0)
		nsr_buf_add(out, buf, (size_t)n);
	return nsr_runcmd_wait(*c, st);
}

/* test_runcmd - output, status, signal, stderr, not found, no shell. */
static void test_runcmd(void **state)
{
	const char *echo[] = {"printf", "%s|", "a b", "$HOME", "*", NULL};
	const char *fails[] = {"sh", "-c", "echo out; echo bad >&2; exit 3",
			       NULL};
	const char *killed[] = {"sh", "-c", "kill -TERM $$", NULL};
	const char *noisy[] = {"sh", "-c",
			 "head -c 100000 /dev/zero | tr '\\0' x >&2; "
			 "printf end >&2", NULL};
	const char *none[] = {"no-such-command-test-pipe", NULL};
	struct nsr_runcmd_status st;
	struct nsr_runcmd *c = NULL;
	struct nsr_buf out, m;

	NSR_UNUSED(state);
	nsr_buf_init(&out, 0);
	nsr_buf_init(&m, 0);
	/* the arguments as they are: no shell expands them */
	assert_int_equal(run_read(echo, &out, &st, &c), NSR_OK);
	assert_string_equal(out.data, "a b|$HOME|*|");
	assert_int_equal(st.exited, 1);
	assert_int_equal(st.err_len, 0);
	nsr_runcmd_free(c);

	nsr_buf_reset(&out);
	assert_int_equal(run_read(fails, &out, &st, &c), NSR_ERR_IO);
	assert_string_equal(out.data, "out\n");
	assert_int_equal(st.code, 3);
	assert_string_equal(st.err, "bad\n");
	nsr_runcmd_describe("sh", &st, 100, &m);
	assert_string_equal(m.data,
			    "command sh exited with status 3; its stderr: bad");
	nsr_runcmd_free(c);

	nsr_buf_reset(&out);
	assert_int_equal(run_read(killed, &out, &st, &c), NSR_ERR_IO);
	assert_int_equal(st.exited, 0);
	assert_int_equal(st.signal, SIGTERM);
	nsr_buf_reset(&m);
	nsr_runcmd_describe("sh", &st, 0, &m);
	assert_non_null(strstr(m.data, "killed by signal 15"));
	nsr_runcmd_free(c);

	/* only the last 64 KB of stderr are kept; what came before counted */
	nsr_buf_reset(&out);
	assert_int_equal(run_read(noisy, &out, &st, &c), NSR_OK);
	assert_int_equal(st.err_len, NSR_RUNCMD_STDERR_MAX);
	assert_int_equal(st.err_dropped, 100003 - NSR_RUNCMD_STDERR_MAX);
	assert_memory_equal(st.err + st.err_len - 4, "xend", 4);
	nsr_buf_reset(&m);
	nsr_runcmd_describe("sh", &st, 10, &m);
	assert_string_equal(m.data, "command sh exited with status 0; its "
				    "stderr ended with: ...xxxxxxxend");
	nsr_runcmd_free(c);

	nsr_buf_reset(&out);
	assert_int_equal(nsr_runcmd_start(&c, none, NSR_RUNCMD_READ, &out),
			 NSR_ERR_NOTFOUND);
	assert_null(c);
	assert_non_null(strstr(out.data, "cannot run no-such-command"));
	assert_int_equal(nsr_runcmd_start(&c, none, 3, &out), NSR_ERR_INVAL);
	nsr_buf_release(&out);
	nsr_buf_release(&m);
}

/* sink - the stream into a buffer. */
static int sink(void *ctx, const void *p, size_t n)
{
	return nsr_buf_add(ctx, p, n);
}

/* Index calls seen. */
struct ix {
	int calls;
	uint64_t size;
	int unsized;
};

/* index_cb - remember the index call. */
static int index_cb(void *ctx, const struct nsr_asm_file *f, uint64_t off)
{
	struct ix *x = ctx;

	NSR_UNUSED(off);
	x->calls++;
	x->size = f->size;
	x->unsized = f->unsized;
	return 0;
}

/* new_saver - a saver of save set /PIPE/t writing to s, index calls to
 * x (NULL: none). */
static struct nsr_saver *new_saver(struct nsr_buf *s, struct ix *x)
{
	struct nsr_saver_opts o;
	struct nsr_saver_cb cb;
	struct nsr_saver *sv = NULL;

	memset(&o, 0, sizeof(o));
	memset(&cb, 0, sizeof(cb));
	o.client = "c";
	o.name = "/PIPE/t";
	cb.write = sink;
	cb.write_ctx = s;
	cb.index = x ? index_cb : NULL;
	cb.index_ctx = x;
	assert_int_equal(nsr_saver_new(&sv, &o, &cb), NSR_OK);
	return sv;
}

/* piped_save - save argv's output as /PIPE/t in reads of rsize; the
 * stream in s. */
static void piped_save(const char *const argv[], size_t rsize,
		       struct nsr_buf *s, struct ix *x,
		       struct nsr_saver_stats *st)
{
	struct nsr_saver *sv;
	struct nsr_runcmd_status rs;
	struct nsr_runcmd *c = NULL;
	struct nsr_buf err;

	memset(x, 0, sizeof(*x));
	nsr_buf_init(&err, 0);
	sv = new_saver(s, x);
	assert_int_equal(nsr_runcmd_start(&c, argv, NSR_RUNCMD_READ, &err),
			 NSR_OK);
	assert_int_equal(nsr_saver_add_pipe(sv, "/PIPE/t", nsr_runcmd_fd(c),
					    rsize),
			 NSR_OK);
	assert_int_equal(nsr_runcmd_wait(c, &rs), NSR_OK);
	assert_int_equal(nsr_saver_finish(sv), NSR_OK);
	nsr_saver_stats(sv, st);
	nsr_saver_free(sv);
	nsr_runcmd_free(c);
	nsr_buf_release(&err);
}

/* to_command - restore stream s into argv's standard input (to_fd);
 * the restore's verdict, *files the files sent. */
static int to_command(const struct nsr_buf *s, const char *const argv[],
		      uint64_t *files)
{
	struct nsr_restore_opts ro;
	struct nsr_restore_stats rst;
	struct nsr_restore *r = NULL;
	struct nsr_runcmd_status st;
	struct nsr_runcmd *c = NULL;
	struct nsr_buf err;
	int rc;

	nsr_buf_init(&err, 0);
	assert_int_equal(nsr_runcmd_start(&c, argv, NSR_RUNCMD_WRITE, &err),
			 NSR_OK);
	memset(&ro, 0, sizeof(ro));
	ro.to_fd = 1;
	ro.out_fd = nsr_runcmd_fd(c);
	assert_int_equal(nsr_restore_new(&r, &ro, NULL), NSR_OK);
	rc = nsr_restore_feed(r, s->data, s->len);
	if (rc == NSR_OK)
		rc = nsr_restore_finish(r);
	nsr_restore_stats(r, &rst);
	*files = rst.files;
	if (rst.errors)
		rc = NSR_ERR_IO;
	nsr_restore_free(r);
	assert_int_equal(nsr_runcmd_wait(c, &st), NSR_OK);
	nsr_runcmd_free(c);
	nsr_buf_release(&err);
	return rc;
}

/* test_save_and_restore - 3 MB of output with a run of zeros saved in
 * reads of 16 KB, restored into cmp against the same output and into a
 * file; a bad read size refused. */
static void test_save_and_restore(void **state)
{
	const char *gen[] = {"sh", "-c",
		       "seq 1 200000; head -c 70000 /dev/zero; seq 5 90000",
		       NULL};
	const char *none[] = {"true", NULL};
	char *dir = nsr_test_tmpdir("pipe");
	const char *cmp[] = {"cmp", "-", NULL, NULL};
	struct nsr_restore_opts ro;
	struct nsr_restore *r = NULL;
	struct nsr_saver_stats st;
	struct nsr_buf s, want;
	struct ix x;
	struct stat sb;
	uint64_t files = 0;
	char *wantpath;
	int fd;

	NSR_UNUSED(state);
	nsr_buf_init(&s, 0);
	nsr_buf_init(&want, 0);
	piped_save(gen, 16384, &s, &x, &st);
	assert_int_equal(st.files, 1);
	assert_int_equal(st.last_read_size, 16384);
	assert_int_equal(x.calls, 1);
	assert_int_equal(x.unsized, 0); /* the index gets the real size */
	assert_true(x.size > 1000000);
	assert_int_equal(st.bytes, x.size);

	/* the reference: the generator's output in a file */
	wantpath = strdup(nsr_test_path(dir, "want"));
	fd = open(wantpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	{
		struct nsr_runcmd *c = NULL;
		struct nsr_runcmd_status rs;
		char buf[65536];
		ssize_t n;

		assert_int_equal(nsr_runcmd_start(&c, gen, NSR_RUNCMD_READ,
						  &want),
				 NSR_OK);
		while ((n = read(nsr_runcmd_fd(c), buf, sizeof(buf))) > 0)
			assert_int_equal(nsr_write_full(fd, buf, (size_t)n),
					 NSR_OK);
		assert_int_equal(nsr_runcmd_wait(c, &rs), NSR_OK);
		nsr_runcmd_free(c);
	}
	close(fd);
	assert_int_equal(stat(wantpath, &sb), 0);
	assert_int_equal((uint64_t)sb.st_size, x.size);

	/* into a command: cmp exits 0 only for the same bytes */
	cmp[2] = wantpath;
	assert_int_equal(to_command(&s, cmp, &files), NSR_OK);
	assert_int_equal(files, 1);

	/* into a file: the size from FILE_END */
	memset(&ro, 0, sizeof(ro));
	ro.dest = dir;
	assert_int_equal(nsr_restore_new(&r, &ro, NULL), NSR_OK);
	assert_int_equal(nsr_restore_feed(r, s.data, s.len), NSR_OK);
	assert_int_equal(nsr_restore_finish(r), NSR_OK);
	nsr_restore_free(r);
	assert_int_equal(stat(nsr_test_path(dir, "PIPE/t"), &sb), 0);
	assert_int_equal((uint64_t)sb.st_size, x.size);

	/* an empty output is an empty file */
	nsr_buf_reset(&s);
	piped_save(none, 0, &s, &x, &st);
	assert_int_equal(x.size, 0);
	assert_int_equal(st.last_read_size, NSR_SAVER_PIPE_DEFAULT);

	free(wantpath);
	nsr_buf_release(&s);
	nsr_buf_release(&want);
	nsr_test_rmrf(dir);
	free(dir);
}

/* test_bad_read_size - below 4 KB or above 8 MB is refused. */
static void test_bad_read_size(void **state)
{
	struct nsr_saver *sv;
	struct nsr_buf s;

	NSR_UNUSED(state);
	nsr_buf_init(&s, 0);
	sv = new_saver(&s, NULL);
	assert_int_equal(nsr_saver_add_pipe(sv, "/PIPE/t", 0, 4095),
			 NSR_ERR_INVAL);
	assert_int_equal(nsr_saver_add_pipe(sv, "/PIPE/t", 0,
					    NSR_SAVER_PIPE_MAX + 1),
			 NSR_ERR_INVAL);
	nsr_saver_free(sv);
	nsr_buf_release(&s);
}

/* main - run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runcmd),
		cmocka_unit_test(test_save_and_restore),
		cmocka_unit_test(test_bad_read_size),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
