/*
 * test_log.c - logging: messages of any length reach the log whole, a
 * message past NSR_LOG_TEXT_MAX and a long path in a message are
 * shortened in the middle with a marker, never cut off.
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/log.h"
#include "nsr_test.h"

/* pattern - n bytes of "0123456789..." with a NUL after them. */
static char *pattern(size_t n)
{
	char *p = malloc(n + 1);

	assert_non_null(p);
	for (size_t i = 0; i < n; i++)
		p[i] = (char)('0' + i % 10);
	p[n] = '\0';
	return p;
}

/* test_shorten - short strings stay, long ones keep head and tail and
 * say how much was left out. */
static void test_shorten(void **state)
{
	char out[256], *s = pattern(1000);
	size_t n;

	NSR_UNUSED(state);
	assert_int_equal(nsr_log_shorten(out, sizeof(out), "/etc/passwd", 100),
			 11);
	assert_string_equal(out, "/etc/passwd");
	n = nsr_log_shorten(out, sizeof(out), s, 100);
	assert_int_equal(n, strlen(out));
	assert_string_equal(out, "01234567890123456789012345678901234567890123"
				 "456789...[900 bytes]..."
				 "01234567890123456789012345678901234567890123"
				 "456789");
	/* out smaller than max: shortened to fit, never cut off */
	n = nsr_log_shorten(out, 100, s, 1000);
	assert_true(n < 100);
	assert_non_null(strstr(out, "...["));
	assert_int_equal(out[n - 1], '9');
	/* exactly max bytes: unchanged */
	s[100] = '\0';
	assert_int_equal(nsr_log_shorten(out, sizeof(out), s, 100), 100);
	assert_string_equal(out, s);
	free(s);
}

/* test_shorten_utf8 - a cut never splits a UTF-8 character. */
static void test_shorten_utf8(void **state)
{
	struct nsr_buf b;
	char out[256];

	NSR_UNUSED(state);
	nsr_buf_init(&b, 0);
	for (int i = 0; i < 200; i++)
		nsr_buf_addstr(&b, "\xc3\xa9"); /* e acute */
	nsr_log_shorten(out, sizeof(out), b.data, 101);
	/* both halves are whole characters */
	assert_non_null(strstr(out, "\xc3\xa9...["));
	assert_non_null(strstr(out, "]...\xc3\xa9"));
	nsr_buf_release(&b);
}

/* read_log - the whole log file. */
static void read_log(const char *path, struct nsr_buf *b)
{
	int fd = open(path, O_RDONLY);
	char tmp[65536];
	ssize_t n;

	assert_true(fd >= 0);
	nsr_buf_reset(b);
	while ((n = read(fd, tmp, sizeof(tmp))) > 0)
		nsr_buf_add(b, tmp, (size_t)n);
	close(fd);
}

/* count_nl - newlines in s. */
static size_t count_nl(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* log_to_file - logging to a new file "log" in a new directory *dir (to
 * remove); the file's path, to free. */
static char *log_to_file(char **dir)
{
	char *path = NULL;

	*dir = nsr_test_tmpdir("log");
	assert_true(asprintf(&path, "%s/log", *dir) > 0);
	nsr_log_init("test_log", 0);
	assert_int_equal(nsr_log_open_file(path), 0);
	return path;
}

/* test_long_messages - 10,000 bytes reach the log whole on one line;
 * 200,000 bytes are shortened in the middle, with the marker. */
static void test_long_messages(void **state)
{
	char *dir, *path = log_to_file(&dir);
	char *mid = pattern(10000), *big = pattern(200000);
	struct nsr_buf b;
	const char *at;

	NSR_UNUSED(state);
	nsr_buf_init(&b, 0);
	nsr_warn("%s: cannot open: %s", mid, "Permission denied");
	read_log(path, &b);
	assert_int_equal(count_nl(b.data), 1);
	at = strstr(b.data, "warn: 0123");
	assert_non_null(at);
	assert_non_null(strstr(at, mid));
	assert_non_null(strstr(at, "9: cannot open: Permission denied\n"));

	nsr_error("%s end", big);
	read_log(path, &b);
	assert_int_equal(count_nl(b.data), 2);
	at = strstr(b.data, "error: 0123");
	assert_non_null(at);
	assert_non_null(strstr(at, "...[134468 bytes]..."));
	assert_non_null(strstr(at, "9 end\n"));
	assert_true(strlen(at) < NSR_LOG_TEXT_MAX + 100);

	nsr_buf_release(&b);
	nsr_test_rmrf(dir);
	free(dir);
	free(path);
	free(mid);
	free(big);
}

/* test_held - lines a thread holds reach the file at the outer release,
 * in order; 32 KB of them are written without waiting for it; a line
 * longer than that goes at once, after the ones held before it. */
static void test_held(void **state)
{
	char *dir, *path = log_to_file(&dir), *big = pattern(40000);
	struct nsr_buf b;
	const char *p;

	NSR_UNUSED(state);
	nsr_buf_init(&b, 0);
	nsr_log_hold();
	nsr_info("line one");
	nsr_log_hold();
	nsr_info("line two");
	nsr_log_release();
	nsr_warn("line three");
	read_log(path, &b);
	assert_int_equal(b.len, 0);
	nsr_log_release();
	read_log(path, &b);
	assert_int_equal(count_nl(b.data), 3);
	p = strstr(b.data, "info: line one\n");
	assert_non_null(p);
	p = strstr(p, "info: line two\n");
	assert_non_null(p);
	assert_non_null(strstr(p, "warn: line three\n"));

	nsr_log_hold();
	for (int i = 0; i < 400; i++) /* about 100 bytes each */
		nsr_info("held line %03d %060d", i, i);
	read_log(path, &b);
	assert_true(count_nl(b.data) > 3);   /* the full buffer went */
	assert_true(count_nl(b.data) < 403); /* not all of it */
	nsr_error("%s", big);
	read_log(path, &b);
	assert_int_equal(count_nl(b.data), 404);
	p = strstr(b.data, "held line 399");
	assert_non_null(p);
	assert_non_null(strstr(p, "error: 0123")); /* after the held ones */
	nsr_log_release();
	read_log(path, &b);
	assert_int_equal(count_nl(b.data), 404);

	nsr_buf_release(&b);
	nsr_test_rmrf(dir);
	free(dir);
	free(path);
	free(big);
}

/* The allocation of this size fails (0: none): the code under test is
 * linked with -Wl,--wrap=malloc (CMakeLists.txt). */
static size_t g_fail_size;
void *__real_malloc(size_t n);
void *__wrap_malloc(size_t n);

/* __wrap_malloc - malloc, failing a g_fail_size allocation. */
void *__wrap_malloc(size_t n)
{
	if (g_fail_size && n == g_fail_size)
		return NULL;
	return __real_malloc(n);
}

/* test_held_nomem - a hold that gets no memory for its buffer holds
 * nothing: each line goes at once, whole, and the release is harmless. */
static void test_held_nomem(void **state)
{
	char *dir, *path = log_to_file(&dir);
	struct nsr_buf b;

	NSR_UNUSED(state);
	nsr_buf_init(&b, 0);
	g_fail_size = 32u * 1024u; /* log.c's LOG_HOLD_MAX */
	nsr_log_hold();
	g_fail_size = 0;
	nsr_info("not held one");
	read_log(path, &b);
	assert_int_equal(count_nl(b.data), 1);
	nsr_info("not held two");
	read_log(path, &b);
	assert_int_equal(count_nl(b.data), 2);
	nsr_log_release();
	read_log(path, &b);
	assert_int_equal(count_nl(b.data), 2);
	assert_non_null(strstr(b.data, "info: not held one\n"));
	assert_non_null(strstr(b.data, "info: not held two\n"));
	/* and the next hold, with memory, holds again */
	nsr_log_hold();
	nsr_info("held three");
	read_log(path, &b);
	assert_int_equal(count_nl(b.data), 2);
	nsr_log_release();
	read_log(path, &b);
	assert_int_equal(count_nl(b.data), 3);
	nsr_buf_release(&b);
	nsr_test_rmrf(dir);
	free(dir);
	free(path);
}

/* main - run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shorten),
		cmocka_unit_test(test_shorten_utf8),
		cmocka_unit_test(test_long_messages),
		cmocka_unit_test(test_held),
		cmocka_unit_test(test_held_nomem),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
