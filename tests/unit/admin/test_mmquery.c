/*
 * test_mmquery.c - mminfo queryspecs compiled to struct mmdb_query, with
 * the examples administrators use in the field and the mistakes they make.
 */
#include "nsr/compat.h"

#include <time.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/mmdb.h"
#include "nsr/mmquery.h"
#include "nsr_test.h"

/* Wednesday 2024-06-05 14:30:15 UTC. */
#define NOW ((time_t)1717597815)

/* compile - a query from one spec, failing the test on error. */
static struct nsr_mmquery *compile(const char *spec)
{
	struct nsr_mmquery_error err;
	struct nsr_mmquery *q = NULL;

	assert_int_equal(nsr_mmquery_new(&q), NSR_OK);
	if (nsr_mmquery_add_spec(q, spec, NOW, &err) != NSR_OK)
		fail_msg("'%s': at %zu: %s", spec, err.offset, err.msg);
	return q;
}

/* pred - predicate i of q, checked for attribute and operator. */
static const struct mmdb_pred *pred(const struct nsr_mmquery *q, size_t i,
				    enum mmdb_attr attr, enum mmdb_op op)
{
	const struct mmdb_query *mq = nsr_mmquery_get(q);

	assert_true(i < mq->npreds);
	assert_int_equal(mq->preds[i].attr, attr);
	assert_int_equal(mq->preds[i].op, op);
	return &mq->preds[i];
}

static void test_field_examples(void **state)
{
	struct nsr_mmquery *q;

	NSR_UNUSED(state);
	setenv("TZ", "UTC", 1);
	tzset();
	q = compile("savetime>=48 hours ago,pool=Default");
	assert_int_equal(nsr_mmquery_get(q)->npreds, 2);
	assert_int_equal(pred(q, 0, MMDB_A_SAVETIME, MMDB_OP_GE)->num,
			 NOW - 48 * 3600);
	assert_string_equal(pred(q, 1, MMDB_A_POOL, MMDB_OP_EQ)->str,
			    "Default");
	nsr_mmquery_free(q);

	q = compile("copies<2,pssid=0,!incomplete,!ssrecycle");
	assert_int_equal(pred(q, 0, MMDB_A_COPIES, MMDB_OP_LT)->num, 2);
	assert_int_equal(pred(q, 1, MMDB_A_PSSID, MMDB_OP_EQ)->num, 0);
	pred(q, 2, MMDB_A_INCOMPLETE, MMDB_OP_CLEAR);
	pred(q, 3, MMDB_A_SSRECYCLE, MMDB_OP_CLEAR);
	nsr_mmquery_free(q);

	q = compile("type=Data Domain,copies=1,pool=VMIP,"
		    "savetime>=2 day ago");
	assert_string_equal(pred(q, 0, MMDB_A_TYPE, MMDB_OP_EQ)->str,
			    "Data Domain");
	assert_int_equal(pred(q, 3, MMDB_A_SAVETIME, MMDB_OP_GE)->num,
			 NOW - 2 * 86400);
	nsr_mmquery_free(q);

	q = compile(" %used > 20 , %used<80,!full , suspect");
	assert_int_equal(pred(q, 0, MMDB_A_PCTUSED, MMDB_OP_GT)->num, 20);
	assert_int_equal(pred(q, 1, MMDB_A_PCTUSED, MMDB_OP_LT)->num, 80);
	pred(q, 2, MMDB_A_FULL, MMDB_OP_CLEAR);
	pred(q, 3, MMDB_A_SUSPECT, MMDB_OP_SET);
	nsr_mmquery_free(q);

	q = compile("family=tape,location=LIB1,level=Full,level=incr,"
		    "savetime<=06/03/24");
	assert_string_equal(pred(q, 2, MMDB_A_LEVEL, MMDB_OP_EQ)->str,
			    "full");
	assert_string_equal(pred(q, 3, MMDB_A_LEVEL, MMDB_OP_EQ)->str,
			    "incr");
	assert_int_equal(pred(q, 4, MMDB_A_SAVETIME, MMDB_OP_LE)->num,
			 1717372800); /* 2024-06-03 00:00 UTC */
	nsr_mmquery_free(q);
}

static void test_values(void **state)
{
	struct nsr_mmquery *q;

	NSR_UNUSED(state);
	q = compile("name='/a,b',client=\"it\"\"s\",name='x''y' ,"
		    "totalsize>10GB,totalsize<=1.5 TB,nfiles!=7,"
		    "!client=mars,!totalsize>5,"
		    "volid=0123456789abcdef0123456789ABCDEF");
	assert_string_equal(pred(q, 0, MMDB_A_NAME, MMDB_OP_EQ)->str, "/a,b");
	assert_string_equal(pred(q, 1, MMDB_A_CLIENT, MMDB_OP_EQ)->str,
			    "it\"s");
	assert_string_equal(pred(q, 2, MMDB_A_NAME, MMDB_OP_EQ)->str, "x'y");
	assert_int_equal(pred(q, 3, MMDB_A_TOTALSIZE, MMDB_OP_GT)->num,
			 10LL << 30);
	assert_int_equal(pred(q, 4, MMDB_A_TOTALSIZE, MMDB_OP_LE)->num,
			 (3LL << 40) / 2);
	assert_int_equal(pred(q, 5, MMDB_A_NFILES, MMDB_OP_NE)->num, 7);
	assert_string_equal(pred(q, 6, MMDB_A_CLIENT, MMDB_OP_NE)->str,
			    "mars");
	assert_int_equal(pred(q, 7, MMDB_A_TOTALSIZE, MMDB_OP_LE)->num, 5);
	pred(q, 8, MMDB_A_VOLID, MMDB_OP_EQ);
	assert_false(nsr_mmquery_volume_only(q));
	nsr_mmquery_free(q);

	q = compile("volume=V1,%used>=50");
	assert_true(nsr_mmquery_volume_only(q));
	nsr_mmquery_free(q);
}

static void test_shorthands(void **state)
{
	struct nsr_mmquery_error err;
	struct nsr_mmquery *q = NULL;

	NSR_UNUSED(state);
	setenv("TZ", "UTC", 1);
	tzset();
	assert_int_equal(nsr_mmquery_new(&q), NSR_OK);
	assert_int_equal(nsr_mmquery_get(q)->npreds, 0);
	assert_false(nsr_mmquery_volume_only(q));
	assert_int_equal(nsr_mmquery_add_time(q, "22 hours ago", NOW, &err),
			 NSR_OK);
	assert_int_equal(nsr_mmquery_add_client(q, "web,01"), NSR_OK);
	assert_int_equal(nsr_mmquery_add_name(q, "index:client1"), NSR_OK);
	assert_int_equal(nsr_mmquery_add_volume(q, "VOL001"), NSR_OK);
	assert_int_equal(pred(q, 0, MMDB_A_SAVETIME, MMDB_OP_GE)->num,
			 NOW - 22 * 3600);
	assert_string_equal(pred(q, 1, MMDB_A_CLIENT, MMDB_OP_EQ)->str,
			    "web,01");
	assert_string_equal(pred(q, 2, MMDB_A_NAME, MMDB_OP_EQ)->str,
			    "index:client1");
	assert_string_equal(pred(q, 3, MMDB_A_VOLUME, MMDB_OP_EQ)->str,
			    "VOL001");
	assert_int_equal(nsr_mmquery_add_time(q, "last fortnite", NOW, &err),
			 NSR_ERR_SYNTAX);
	assert_int_equal(err.offset, 5);
	assert_non_null(strstr(err.msg, "expected a unit"));
	assert_int_equal(nsr_mmquery_get(q)->npreds, 4);
	nsr_mmquery_free(q);
}

/* expect_err - spec fails at offset with msg containing what; the query
 * keeps the one predicate it had. */
static void expect_err(const char *spec, size_t offset, const char *what)
{
	struct nsr_mmquery_error err;
	struct nsr_mmquery *q = compile("client=keep");

	memset(&err, 0, sizeof(err));
	assert_int_equal(nsr_mmquery_add_spec(q, spec, NOW, &err),
			 NSR_ERR_SYNTAX);
	if (err.offset != offset || !strstr(err.msg, what))
		fail_msg("'%s': got %zu '%s', want %zu '%s'", spec, err.offset,
			 err.msg, offset, what);
	assert_int_equal(nsr_mmquery_get(q)->npreds, 1);
	nsr_mmquery_free(q);
}

static void test_errors(void **state)
{
	NSR_UNUSED(state);
	expect_err("pool=a,sise>3", 7, "unknown attribute 'sise'");
	expect_err("sise>3", 0, "known: ssid, cloneid");
	expect_err("incomplete=1", 0, "is a flag");
	expect_err("client", 0, "needs a comparator");
	expect_err("!client", 1, "needs a comparator");
	expect_err("savetime>=blah", 10, "not a time");
	expect_err("savetime>=3 dayz ago", 10, "expected a date");
	expect_err("client='abc", 7, "unterminated");
	expect_err("client='a'b", 10, "expected ','");
	expect_err("totalsize>ten", 10, "not a number");
	expect_err("totalsize>10XB", 10, "not a number");
	expect_err("client=a,,pool=b", 9, "expected an attribute name");
	expect_err("client=", 7, "expected a value");
	expect_err("client=a,", 9, "expected an attribute name");
	expect_err("level=huge", 6, "not a level");
	expect_err("volid=xyz", 6, "32 hexadecimal");
	expect_err("ssflags>vF", 8, "only '='");
	expect_err("", 0, "expected an attribute name");
	expect_err("=5", 0, "expected an attribute name");
}

static void test_sizes_and_limits(void **state)
{
	struct nsr_mmquery_error err;
	struct nsr_mmquery *q = NULL;
	struct nsr_buf big;

	NSR_UNUSED(state);
	/* Too many constraints in one query. */
	nsr_buf_init(&big, 0);
	for (int i = 0; i <= NSR_MMQUERY_MAX_PREDS; i++)
		assert_int_equal(nsr_buf_addstr(&big, i ? ",suspect"
							: "suspect"), NSR_OK);
	assert_int_equal(nsr_mmquery_new(&q), NSR_OK);
	assert_int_equal(nsr_mmquery_add_spec(q, big.data, NOW, &err),
			 NSR_ERR_TOOBIG);
	assert_int_equal(nsr_mmquery_get(q)->npreds, 0);
	nsr_mmquery_free(q);
	nsr_buf_release(&big);
}

/* test_quote - any text quoted by nsr_mmquery_quote compares verbatim. */
static void test_quote(void **state)
{
	static const char *const values[] = {
		"/home", "a,b", "it's", "''", " padded ", "\"x\"", "",
	};

	NSR_UNUSED(state);
	for (size_t i = 0; i < NSR_ARRAY_SIZE(values); i++) {
		struct nsr_buf spec;
		struct nsr_mmquery *q;
		const struct mmdb_query *c;

		nsr_buf_init(&spec, 0);
		nsr_buf_addstr(&spec, "client=c,name=");
		assert_int_equal(nsr_mmquery_quote(values[i], &spec), NSR_OK);
		q = compile(spec.data);
		c = nsr_mmquery_get(q);
		assert_int_equal(c->npreds, 2);
		assert_string_equal(c->preds[1].str, values[i]);
		nsr_mmquery_free(q);
		nsr_buf_release(&spec);
	}
}

/* main - run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_field_examples),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_shorthands),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_sizes_and_limits),
		cmocka_unit_test(test_quote),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
