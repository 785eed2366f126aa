/*
 * test_query.c - the jobquery language parser (src/jobdb/query.c): valid
 * lines and their canonical form, errors with columns, limits, and
 * deterministic mutations of valid lines.
 */
#include "nsr/compat.h"

#include <time.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/jobdb.h"

#include "jobdb_test.h"

/* parse - parse one line into q; returns the code. */
static int parse(struct nsr_jobdb_query *q, const char *line,
		 enum nsr_jobdb_cmd *cmd, struct nsr_jobdb_syntax *err)
{
	return nsr_jobdb_query_parse(q, line, strlen(line), cmd, err);
}

/* describe - canonical text of q in a static buffer. */
static const char *describe(const struct nsr_jobdb_query *q)
{
	static char text[4096];
	struct nsr_buf b;

	nsr_buf_init(&b, 0);
	assert_int_equal(nsr_jobdb_query_describe(q, &b), NSR_OK);
	snprintf(text, sizeof(text), "%s", b.data);
	nsr_buf_release(&b);
	return text;
}

static void test_valid_lines(void **state)
{
	static const struct {
		const char *line;
		enum nsr_jobdb_cmd cmd;
		const char *canon;
	} cases[] = {
		{"", NSR_JOBDB_CMD_NONE, ".\nshow\n"},
		{"   # a comment; with: colons", NSR_JOBDB_CMD_NONE,
		 ".\nshow\n"},
		{". type: save job; job state: completed; client: web01",
		 NSR_JOBDB_CMD_QUERY,
		 ". type: save job; job state: COMPLETED; client: \"web01\"\n"
		 "show\n"},
		{".TYPE:Recover;Job   State : ACTIVE , queued;",
		 NSR_JOBDB_CMD_QUERY,
		 ". type: recover job; job state: ACTIVE, QUEUED\nshow\n"},
		{"print type: index save job", NSR_JOBDB_CMD_PRINT,
		 ". type: index save job\nshow\n"},
		{". bytes: >= 100, < 5; start time: >1717452003; pid: =7",
		 NSR_JOBDB_CMD_QUERY,
		 ". bytes: >=100, <5; start time: >1717452003; pid: 7\nshow\n"},
		{". name: /var/*; client: != web*; level: \"a*b\"",
		 NSR_JOBDB_CMD_QUERY,
		 ". name: =/var/*; client: !=web*; level: \"a*b\"\nshow\n"},
		{". name: \"x; y, \\\"z\\\\\"", NSR_JOBDB_CMD_QUERY,
		 ". name: \"x; y, \\\"z\\\\\"\nshow\n"},
		{". completion status:", NSR_JOBDB_CMD_QUERY,
		 ". completion status: \nshow\n"},
		{". name: a[1]*", NSR_JOBDB_CMD_QUERY,
		 ". name: =a[1]*\nshow\n"},
		{".", NSR_JOBDB_CMD_QUERY, ".\nshow\n"},
		{"show job id; name; Job State;name; job log",
		 NSR_JOBDB_CMD_SHOW,
		 ".\nshow job id; name; job state; job log\n"},
		{"SHOW", NSR_JOBDB_CMD_SHOW, ".\nshow\n"},
		{"print\r\n", NSR_JOBDB_CMD_PRINT, ".\nshow\n"},
	};
	struct nsr_jobdb_query *q = NULL;
	struct nsr_jobdb_syntax err;
	enum nsr_jobdb_cmd cmd;

	NSR_UNUSED(state);
	for (size_t i = 0; i < NSR_ARRAY_SIZE(cases); i++) {
		assert_int_equal(nsr_jobdb_query_new(&q), NSR_OK);
		if (parse(q, cases[i].line, &cmd, &err) != NSR_OK)
			fail_msg("'%s': column %zu: %s", cases[i].line,
				 err.column, err.msg);
		assert_int_equal(cmd, cases[i].cmd);
		assert_string_equal(describe(q), cases[i].canon);
		nsr_jobdb_query_free(q);
	}
}

static void test_canonical_form_reparses(void **state)
{
	static const char *const lines[] = {
		". type: save job; job state: completed; client: web01",
		". name: /var/*; client: != web*; level: \"a*b\"; host:",
		". name: \"x; y, \\\"z\\\\\"; job id: 1, 2, >= 300",
		". name: a[1]*, ==b*, \"[c]\"",
	};
	struct nsr_jobdb_query *q = NULL, *r = NULL;
	enum nsr_jobdb_cmd cmd;
	char first[4096];

	NSR_UNUSED(state);
	for (size_t i = 0; i < NSR_ARRAY_SIZE(lines); i++) {
		const char *nl;

		assert_int_equal(nsr_jobdb_query_new(&q), NSR_OK);
		assert_int_equal(nsr_jobdb_query_new(&r), NSR_OK);
		assert_int_equal(parse(q, lines[i], &cmd, NULL), NSR_OK);
		snprintf(first, sizeof(first), "%s", describe(q));
		nl = strchr(first, '\n');
		assert_non_null(nl);
		assert_int_equal(nsr_jobdb_query_parse(r, first,
						       (size_t)(nl - first),
						       &cmd, NULL),
				 NSR_OK);
		assert_string_equal(describe(r), first);
		nsr_jobdb_query_free(q);
		nsr_jobdb_query_free(r);
	}
}

static void test_errors_have_columns(void **state)
{
	static const struct {
		const char *line;
		size_t column;
		const char *msg; /* a substring of the message */
	} cases[] = {
		{"list jobs", 1, "unknown command"},
		{"showx", 1, "unknown command"},
		{"print:x", 6, "blank after the command"},
		{". typ: save job", 3, "unknown attribute 'typ'"},
		{". type save job", 3, "unknown attribute 'type save job'"},
		{". client web01", 3, "unknown attribute"},
		{". job id 5", 10, "expected ':'"},
		{". type: backup job", 9, "unknown job type"},
		{". job state: running", 14, "unknown job state"},
		{". job id: abc", 11, "expected a number for 'job id'"},
		{". job id: 99999999999999999999", 11, "expected a number"},
		{". job id:", 10, "expected a value for 'job id'"},
		{". client: a,,b", 13, "expected a value"},
		{". client: a b \"c\"", 15, "unexpected '\"'"},
		{". name: \"abc", 9, "unterminated quoted value"},
		{". name: \"abc\" x", 15, "expected ',' or ';'"},
		{". client: > a", 11, "needs a numeric attribute"},
		{". job log: x", 3, "'job log' cannot be used"},
		{". client: a; Client: b", 14, "given twice"},
		{". ; client: a", 3, "expected an attribute name"},
		{". client: a;; name: b", 13, "expected an attribute name"},
		{"show name, client", 10, "expected ';' between"},
		{"show nonsense", 6, "unknown attribute 'nonsense'"},
		{". client: a\001b", 12, "control character 0x01"},
		{". client:, a", 10, "expected a value"},
	};
	struct nsr_jobdb_query *q = NULL;
	struct nsr_jobdb_syntax err;
	enum nsr_jobdb_cmd cmd;

	NSR_UNUSED(state);
	assert_int_equal(nsr_jobdb_query_new(&q), NSR_OK);
	assert_int_equal(parse(q, ". client: keep", &cmd, NULL), NSR_OK);
	assert_int_equal(parse(q, "show name", &cmd, NULL), NSR_OK);
	for (size_t i = 0; i < NSR_ARRAY_SIZE(cases); i++) {
		int rc = parse(q, cases[i].line, &cmd, &err);

		if (rc != NSR_ERR_SYNTAX || err.column != cases[i].column ||
		    !strstr(err.msg, cases[i].msg))
			fail_msg("'%s': rc %d column %zu '%s', want column %zu "
				 "'%s'",
				 cases[i].line, rc, err.column, err.msg,
				 cases[i].column, cases[i].msg);
		assert_int_equal(cmd, NSR_JOBDB_CMD_NONE);
		/* A bad line leaves the session as it was. */
		assert_string_equal(describe(q),
				    ". client: \"keep\"\nshow name\n");
	}
	nsr_jobdb_query_free(q);
}

static void test_time_expressions(void **state)
{
	struct nsr_jobdb_query *q = NULL;
	struct nsr_jobdb_syntax err;
	enum nsr_jobdb_cmd cmd;
	time_t now = time(NULL);
	char want[128];
	long long t;

	NSR_UNUSED(state);
	assert_int_equal(setenv("TZ", "UTC0", 1), 0);
	tzset();
	assert_int_equal(nsr_jobdb_query_new(&q), NSR_OK);
	/* Dates become seconds when parsed; the canonical form has them. */
	assert_int_equal(parse(q, ". start time: >= @1700000000; end time: < "
				  "2023-11-14, \"November 15, 2023 10:00\"",
			       &cmd, &err),
			 NSR_OK);
	assert_string_equal(describe(q),
			    ". start time: >=1700000000; end time: <1699920000,"
			    " 1700042400\nshow\n");
	/* Relative ones are resolved against the clock. */
	assert_int_equal(parse(q, ". start time: > yesterday", &cmd, &err),
			 NSR_OK);
	assert_int_equal(sscanf(describe(q), ". start time: >%lld", &t), 1);
	assert_true(t <= now && t >= now - 2 * 86400);
	snprintf(want, sizeof(want), ". start time: >%lld\nshow\n", t);
	assert_string_equal(describe(q), want);
	/* Only the time attributes take dates. */
	assert_int_equal(parse(q, ". start time: soonish", &cmd, &err),
			 NSR_ERR_SYNTAX);
	assert_int_equal(err.column, 15);
	assert_non_null(strstr(err.msg, "expected seconds or a date for "
					"'start time'"));
	assert_int_equal(parse(q, ". bytes: yesterday", &cmd, &err),
			 NSR_ERR_SYNTAX);
	assert_non_null(strstr(err.msg, "expected a number for 'bytes'"));
	nsr_jobdb_query_free(q);
}

/* test_quote_reads_back - a name with quotes, backslashes, ';', ',' and
 * wildcards, quoted by nsr_jobdb_query_quote, parses back as that very
 * text (what savegrp -R builds its queries with). */
static void test_quote_reads_back(void **state)
{
	static const char *const names[] = {"plain", "a\"b", "c\\d",
					    "e;f, g", "*?[x]", " lead"};
	struct nsr_jobdb_query *q = NULL;
	enum nsr_jobdb_cmd cmd;
	struct nsr_buf line, want;

	NSR_UNUSED(state);
	for (size_t i = 0; i < NSR_ARRAY_SIZE(names); i++) {
		nsr_buf_init(&line, 0);
		nsr_buf_init(&want, 0);
		assert_int_equal(nsr_buf_addstr(&line, ". group: "), NSR_OK);
		assert_int_equal(nsr_jobdb_query_quote(names[i], &line),
				 NSR_OK);
		assert_int_equal(nsr_jobdb_query_new(&q), NSR_OK);
		assert_int_equal(parse(q, line.data, &cmd, NULL), NSR_OK);
		/* the canonical form quotes the same text the same way */
		assert_int_equal(nsr_buf_addf(&want, "%s\nshow\n", line.data),
				 NSR_OK);
		assert_string_equal(describe(q), want.data);
		nsr_jobdb_query_free(q);
		nsr_buf_release(&line);
		nsr_buf_release(&want);
	}
}

static void test_print_keeps_or_replaces(void **state)
{
	struct nsr_jobdb_query *q = NULL;
	enum nsr_jobdb_cmd cmd;

	NSR_UNUSED(state);
	assert_int_equal(nsr_jobdb_query_new(&q), NSR_OK);
	assert_int_equal(parse(q, ". client: a", &cmd, NULL), NSR_OK);
	assert_int_equal(parse(q, "print", &cmd, NULL), NSR_OK);
	assert_int_equal(cmd, NSR_JOBDB_CMD_PRINT);
	assert_string_equal(describe(q), ". client: \"a\"\nshow\n");
	assert_int_equal(parse(q, "print client: b", &cmd, NULL), NSR_OK);
	assert_string_equal(describe(q), ". client: \"b\"\nshow\n");
	assert_int_equal(parse(q, ". ", &cmd, NULL), NSR_OK);
	assert_string_equal(describe(q), ".\nshow\n");
	assert_int_equal(nsr_jobdb_query_shows_log(q), 1);
	assert_int_equal(parse(q, "show job id; name", &cmd, NULL), NSR_OK);
	assert_int_equal(nsr_jobdb_query_shows_log(q), 0);
	assert_int_equal(parse(q, "show name; JOB  LOG", &cmd, NULL), NSR_OK);
	assert_int_equal(nsr_jobdb_query_shows_log(q), 1);
	nsr_jobdb_query_free(q);
}

static void test_limits(void **state)
{
	static const char *const names[] = {
		"job id", "parent job id", "type", "name", "client", "level",
		"group", "action", "host", "pid", "job state",
		"completion status", "start time", "end time", "bytes",
		"files", "ssids", "command",
	};
	struct nsr_jobdb_query *q = NULL;
	struct nsr_jobdb_syntax err;
	enum nsr_jobdb_cmd cmd;
	struct nsr_buf b;
	char *big;

	NSR_UNUSED(state);
	assert_int_equal(nsr_jobdb_query_new(&q), NSR_OK);
	nsr_buf_init(&b, 0);

	/* Every attribute at once parses. */
	assert_int_equal(nsr_buf_addstr(&b, "."), NSR_OK);
	for (size_t i = 0; i < NSR_ARRAY_SIZE(names); i++)
		assert_int_equal(nsr_buf_addf(&b, " %s: %s;", names[i],
					      i == 2 ? "clone job"
					      : i == 10 ? "failed"
							: "1"),
				 NSR_OK);
	assert_int_equal(parse(q, b.data, &cmd, &err), NSR_OK);

	/* 65 values for one attribute is one too many. */
	nsr_buf_reset(&b);
	assert_int_equal(nsr_buf_addstr(&b, ". job id: 0"), NSR_OK);
	for (int i = 1; i < 65; i++)
		assert_int_equal(nsr_buf_addf(&b, ", %d", i), NSR_OK);
	assert_int_equal(parse(q, b.data, &cmd, &err), NSR_ERR_TOOBIG);
	assert_non_null(strstr(err.msg, "more than 64 values"));
	nsr_buf_setlen(&b, b.len - 4); /* drop ", 64" */
	assert_int_equal(parse(q, b.data, &cmd, &err), NSR_OK);

	/* Values and lines have maximum lengths. */
	big = malloc(70000);
	assert_non_null(big);
	memcpy(big, ". name: ", 8);
	memset(big + 8, 'v', 4097);
	big[8 + 4097] = '\0';
	assert_int_equal(parse(q, big, &cmd, &err), NSR_ERR_TOOBIG);
	assert_int_equal(err.column, 9);
	big[8 + 4096] = '\0';
	assert_int_equal(parse(q, big, &cmd, &err), NSR_OK);
	memset(big, ' ', 70000);
	assert_int_equal(nsr_jobdb_query_parse(q, big, 70000, &cmd, &err),
			 NSR_ERR_TOOBIG);
	free(big);
	nsr_buf_release(&b);
	nsr_jobdb_query_free(q);
}

static uint64_t rng_state = 0x243F6A8885A308D3ull;

/* rng - xorshift64*, deterministic. */
static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static void test_mutations_never_crash(void **state)
{
	static const char *const seeds[] = {
		". type: save job; job state: completed; client: web01",
		"show job id; name; job state; start time; job log",
		"print name: \"a;b\", c*; bytes: >= 10",
		". completion status:; host: != x?",
	};
	struct nsr_jobdb_query *q = NULL;
	struct nsr_jobdb_syntax err;
	enum nsr_jobdb_cmd cmd;
	char buf[256];

	NSR_UNUSED(state);
	assert_int_equal(nsr_jobdb_query_new(&q), NSR_OK);
	for (int iter = 0; iter < 4000; iter++) {
		const char *s = seeds[iter % NSR_ARRAY_SIZE(seeds)];
		size_t n = strlen(s);
		int rc;

		memcpy(buf, s, n);
		if (iter % 3 == 0)
			n = rng() % (n + 1); /* truncate */
		for (int k = 0; n && k < 3; k++)
			buf[rng() % n] ^= (char)(1u << (rng() % 8));
		rc = nsr_jobdb_query_parse(q, buf, n, &cmd, &err);
		if (rc == NSR_OK)
			continue;
		assert_true(rc == NSR_ERR_SYNTAX || rc == NSR_ERR_TOOBIG);
		assert_true(err.column >= 1 && err.column <= n + 1);
		assert_true(err.msg[0] != '\0');
	}
	nsr_jobdb_query_free(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_lines),
		cmocka_unit_test(test_canonical_form_reparses),
		cmocka_unit_test(test_errors_have_columns),
		cmocka_unit_test(test_time_expressions),
		cmocka_unit_test(test_quote_reads_back),
		cmocka_unit_test(test_print_keeps_or_replaces),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_mutations_never_crash),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
