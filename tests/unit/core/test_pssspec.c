/*
 * test_pssspec.c - the PSS:streams_per_ss parser and matcher
 * (pssspec.h): NetWorker's examples, the precedence of exact patterns,
 * the default, and the errors.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/pssspec.h"
#include "nsr_test.h"

/* parse - a spec that must parse. */
static struct nsr_pssspec *parse(const char *text)
{
	struct nsr_pssspec *s = NULL;

	assert_int_equal(nsr_pssspec_parse(text, &s, NULL), NSR_OK);
	assert_non_null(s);
	return s;
}

/* bad - a spec that must be refused, with a message naming the item. */
static void bad(const char *text, const char *item)
{
	struct nsr_pssspec *s = NULL;
	struct nsr_buf err;

	nsr_buf_init(&err, 0);
	assert_int_equal(nsr_pssspec_parse(text, &s, &err), NSR_ERR_SYNTAX);
	assert_null(s);
	assert_non_null(strstr(err.data, item));
	nsr_buf_release(&err);
}

/* test_unix_example - the guide's UNIX example. */
static void test_unix_example(void **state)
{
	struct nsr_pssspec *s =
		parse("PSS:streams_per_ss=1,* , 2,/data[1-3] , 8,/data[4-5]");

	NSR_UNUSED(state);
	assert_int_equal(nsr_pssspec_count(s), 3);
	assert_int_equal(nsr_pssspec_streams(s, "/home"), 1);
	assert_int_equal(nsr_pssspec_streams(s, "/data1"), 2);
	assert_int_equal(nsr_pssspec_streams(s, "/data3"), 2);
	assert_int_equal(nsr_pssspec_streams(s, "/data4"), 8);
	assert_int_equal(nsr_pssspec_streams(s, "/data5"), 8);
	assert_int_equal(nsr_pssspec_streams(s, "/data6"), 1);
	assert_int_equal(nsr_pssspec_streams(s, "/a/b/c"), 1);
	nsr_pssspec_free(s);
}

/* test_windows_example - several patterns per count, backslashes. */
static void test_windows_example(void **state)
{
	struct nsr_pssspec *s = parse("2,C:\\ , D:\\ , 8 , E:\\ , F:\\HR");

	NSR_UNUSED(state);
	assert_int_equal(nsr_pssspec_streams(s, "C:\\"), 2);
	assert_int_equal(nsr_pssspec_streams(s, "D:\\"), 2);
	assert_int_equal(nsr_pssspec_streams(s, "E:\\"), 8);
	assert_int_equal(nsr_pssspec_streams(s, "F:\\HR"), 8);
	assert_int_equal(nsr_pssspec_streams(s, "G:\\"),
			 NSR_PSS_STREAMS_DEFAULT);
	nsr_pssspec_free(s);
}

/* test_precedence - an exact name beats wildcards; the last wildcard
 * match wins; a bare count applies to all; NULL is the default. */
static void test_precedence(void **state)
{
	struct nsr_pssspec *s = parse("3,/sp , 1,* , 5,/s*");

	NSR_UNUSED(state);
	assert_int_equal(nsr_pssspec_streams(s, "/sp"), 3);
	assert_int_equal(nsr_pssspec_streams(s, "/sq"), 5);
	assert_int_equal(nsr_pssspec_streams(s, "/x"), 1);
	nsr_pssspec_free(s);
	s = parse(" 6 ");
	assert_int_equal(nsr_pssspec_count(s), 0);
	assert_int_equal(nsr_pssspec_streams(s, "/any"), 6);
	nsr_pssspec_free(s);
	assert_int_equal(nsr_pssspec_streams(NULL, "/any"), 4);
}

/* test_errors - what is refused, and that the message says where. */
static void test_errors(void **state)
{
	NSR_UNUSED(state);
	bad("", "item 1: empty");
	bad("/data", "item 1: a save point before");
	bad("2,/a,,/b", "item 3: empty");
	bad("9,/a", "item 1: stream count out of range");
	bad("0,/a", "item 1: stream count out of range");
	bad("99999999999999999999,/a", "out of range");
	bad("2,/a,3", "item 3: a stream count with no save point after it");
	bad("2,3,/a", "item 2: a stream count with no save point");
	bad("2,/a,", "item 3: empty");
}

/* test_limits - 64 patterns parse, 65 do not; a long pattern fails. */
static void test_limits(void **state)
{
	struct nsr_buf t;
	struct nsr_pssspec *s = NULL;
	char *longp;

	NSR_UNUSED(state);
	nsr_buf_init(&t, 0);
	nsr_buf_addstr(&t, "2");
	for (int i = 0; i < NSR_PSS_SPEC_MAX; i++)
		nsr_buf_addf(&t, ",/p%d", i);
	s = parse(t.data);
	assert_int_equal(nsr_pssspec_streams(s, "/p63"), 2);
	nsr_pssspec_free(s);
	nsr_buf_addstr(&t, ",/one-more");
	bad(t.data, "too many");
	nsr_buf_release(&t);
	longp = malloc(NSR_PSS_PATTERN_MAX + 8);
	assert_non_null(longp);
	memset(longp, 'a', NSR_PSS_PATTERN_MAX + 7);
	memcpy(longp, "1,/", 3);
	longp[NSR_PSS_PATTERN_MAX + 7] = '\0';
	bad(longp, "too long");
	free(longp);
}

/* test_from_ops - the spec among a client's save operations, quoted
 * (one value) or split at its commas by the resource syntax. */
static void test_from_ops(void **state)
{
	const char *quoted[] = {"VSS:*=off",
				"PSS:streams_per_ss=1,* , 2,/data[1-3]"};
	const char *split[] = {"PSS:streams_per_ss=1", "*", "2",
			       "/data[1-3]", "VSS:*=off"};
	const char *none[] = {"VSS:*=off"};
	struct nsr_pssspec *s;
	struct nsr_buf b;

	NSR_UNUSED(state);
	nsr_buf_init(&b, 0);
	assert_int_equal(nsr_pssspec_from_ops(quoted, 2, &b), 1);
	assert_string_equal(b.data, quoted[1]);
	nsr_buf_reset(&b);
	assert_int_equal(nsr_pssspec_from_ops(split, 5, &b), 1);
	assert_string_equal(b.data, "PSS:streams_per_ss=1,*,2,/data[1-3]");
	s = parse(b.data);
	assert_int_equal(nsr_pssspec_streams(s, "/data2"), 2);
	assert_int_equal(nsr_pssspec_streams(s, "/home"), 1);
	nsr_pssspec_free(s);
	nsr_buf_reset(&b);
	assert_int_equal(nsr_pssspec_from_ops(none, 1, &b), 0);
	assert_int_equal(b.len, 0);
	nsr_buf_release(&b);
}

/* main - run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unix_example),
		cmocka_unit_test(test_windows_example),
		cmocka_unit_test(test_precedence),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_from_ops),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
