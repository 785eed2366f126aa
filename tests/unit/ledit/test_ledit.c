/*
 * test_ledit.c - the line editor on keystrokes fed through a pipe (the
 * editor forced on, as on a terminal): insert, backspace, arrows and
 * Delete, Home/End, history up and down, ^U, ^C abandoning a line, ^D
 * ending the input, the bound of a line; and plain lines from a pipe.
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/ledit.h"
#include "nsr_test.h"

/* The editor reading what feed() wrote, echoing to /dev/null. */
struct fx {
	int in[2], null;
	struct nsr_ledit *le;
	struct nsr_buf line;
};

/* open_fx - a pipe for keystrokes and an editor on it. */
static void open_fx(struct fx *f, int tty)
{
	assert_int_equal(pipe(f->in), 0);
	f->null = open("/dev/null", O_WRONLY);
	assert_true(f->null >= 0);
	assert_int_equal(nsr_ledit_new(f->in[0], f->null, tty, &f->le),
			 NSR_OK);
	nsr_buf_init(&f->line, 0);
}

/* close_fx - free everything. */
static void close_fx(struct fx *f)
{
	nsr_ledit_free(f->le);
	nsr_buf_release(&f->line);
	close(f->in[0]);
	if (f->in[1] >= 0)
		close(f->in[1]);
	close(f->null);
}

/* feed - type s (then, with end, close the input). */
static void feed(struct fx *f, const char *s, size_t n, int end)
{
	assert_int_equal(write(f->in[1], s, n), (ssize_t)n);
	if (end) {
		close(f->in[1]);
		f->in[1] = -1;
	}
}

/* next - the next line read, or NULL at the end of input. */
static const char *next(struct fx *f)
{
	int rc = nsr_ledit_read(f->le, "> ", &f->line);

	assert_true(rc == 0 || rc == 1);
	return rc == 1 ? f->line.data : NULL;
}

/* test_editing - keys that edit one line. */
static void test_editing(void **state)
{
	static const char keys[] =
		"lx\x7fs\r"		  /* backspace */
		"ad\x1b[Dd\r"		  /* left, insert: "add" */
		"abc\x1b[D\x1b[D\x1b[3~\r" /* Delete under the cursor: "ac" */
		"bc\x01" "a\x05" "d\r"	  /* ^A, ^E: "abcd" */
		"zz\x1b[H>\x1b[F<\r"	  /* Home, End: ">zz<" */
		"gone\x03"		  /* ^C abandons */
		"ok\r"
		"xy\x15" "u\r"		  /* ^U */
		"\x04";			  /* ^D on an empty line */
	struct fx f;

	NSR_UNUSED(state);
	open_fx(&f, 1);
	feed(&f, keys, sizeof(keys) - 1, 0);
	assert_string_equal(next(&f), "ls");
	assert_string_equal(next(&f), "add");
	assert_string_equal(next(&f), "ac");
	assert_string_equal(next(&f), "abcd");
	assert_string_equal(next(&f), ">zz<");
	assert_string_equal(next(&f), "ok");
	assert_string_equal(next(&f), "u");
	assert_null(next(&f));
	close_fx(&f);
}

/* test_history - up and down walk the lines entered; the line being
 * typed comes back at the bottom; repeats are kept once. */
static void test_history(void **state)
{
	static const char keys[] = "one\rtwo\rtwo\r"
				   "\x1b[A\x1b[A\r"     /* up, up: "one" */
				   "new\x1b[A\x1b[B!\r" /* up, down: "new!" */
				   "\x1b[A\x1b[A\x1b[A\x1b[A\x1b[A\r";
	struct fx f;

	NSR_UNUSED(state);
	open_fx(&f, 1);
	feed(&f, keys, sizeof(keys) - 1, 1);
	assert_string_equal(next(&f), "one");
	assert_string_equal(next(&f), "two");
	assert_string_equal(next(&f), "two");
	assert_string_equal(next(&f), "one");
	assert_string_equal(next(&f), "new!");
	/* history: one two one new! -- five ups stop at the oldest */
	assert_string_equal(next(&f), "one");
	assert_null(next(&f));
	close_fx(&f);
}

/* test_plain - lines from a pipe: no editing, the last line without a
 * newline still counts, a line over the bound is refused whole. */
static void test_plain(void **state)
{
	char *big = malloc(NSR_LEDIT_MAX + 2);
	struct fx f;

	NSR_UNUSED(state);
	assert_non_null(big);
	memset(big, 'x', NSR_LEDIT_MAX + 1);
	big[NSR_LEDIT_MAX + 1] = '\n';
	open_fx(&f, 0);
	feed(&f, "a\x7f b\n", 5, 0);
	feed(&f, big, NSR_LEDIT_MAX + 2, 0);
	feed(&f, "\nlast", 5, 1);
	assert_string_equal(next(&f), "a\x7f b");
	assert_int_equal(nsr_ledit_read(f.le, "> ", &f.line), NSR_ERR_TOOBIG);
	assert_string_equal(next(&f), "");
	assert_string_equal(next(&f), "last");
	assert_null(next(&f));
	close_fx(&f);
	free(big);
}

/* main - run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_editing),
		cmocka_unit_test(test_history),
		cmocka_unit_test(test_plain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
