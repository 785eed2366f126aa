/*
 * test_cursor.c - running queries (src/jobdb/cursor.c): the rows a filter
 * selects match the same predicate computed here, the cursor streams a
 * snapshot, values never become SQL, and both output formats are exact.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/jobdb.h"

#include "jobdb_test.h"

#define NJOBS 60

/* The known data set: job i+1 is built from i. */
struct row {
	int type, state;
	char client[8];
	int has_client;
	const char *name;
	const char *status;
	int64_t start, end, bytes;
};

static struct row rows[NJOBS];

/* fill_rows - the deterministic data set, also stored in db. */
static void fill_rows(struct nsr_jobdb *db)
{
	static const char *const names[] = {"/var", "/home/u[1]", "/home/x",
					    "C:\\"};
	static const char *const status[] = {NULL, "succeeded", "", "failed"};

	for (int i = 0; i < NJOBS; i++) {
		struct row *r = &rows[i];
		struct nsr_jobdb_job j = {0};
		int64_t id = 0;

		r->type = 1 + i % 7;
		r->state = 1 + i % 5;
		r->has_client = i % 11 != 0;
		snprintf(r->client, sizeof(r->client), "web%02d", i % 5);
		r->name = names[i % 4];
		r->status = status[i % 4];
		r->start = 1000 + i;
		r->end = r->state >= 3 ? 2000 + i : 0;
		r->bytes = i * 100;
		j.type = r->type;
		j.state = r->state;
		j.client = r->has_client ? r->client : NULL;
		j.name = r->name;
		j.status = r->status;
		j.start_time = r->start;
		j.end_time = r->end;
		j.bytes = r->bytes;
		assert_int_equal(nsr_jobdb_create(db, &j, &id), NSR_OK);
		assert_int_equal(id, i + 1);
	}
}

/* client_is - does row r have client c? */
static int client_is(const struct row *r, const char *c)
{
	return r->has_client && strcmp(r->client, c) == 0;
}

/* The predicates the queries below must agree with. */
static int p_save(const struct row *r) { return r->type == 1; }
static int p_clients_states(const struct row *r)
{
	return (client_is(r, "web01") || client_is(r, "web03")) &&
	       (r->state == 3 || r->state == 4);
}
static int p_bytes(const struct row *r)
{
	return r->bytes >= 1000 || r->bytes < 300;
}
static int p_home(const struct row *r)
{
	return strncmp(r->name, "/home/", 6) == 0;
}
static int p_u1(const struct row *r)
{
	return strcmp(r->name, "/home/u[1]") == 0;
}
static int p_not_web01(const struct row *r) { return !client_is(r, "web01"); }
static int p_no_status(const struct row *r)
{
	return !r->status || !*r->status;
}
static int p_none(const struct row *r)
{
	NSR_UNUSED(r);
	return 0;
}
static int p_ids(const struct row *r)
{
	int id = (int)(r - rows) + 1;

	return id == 5 || id == 7 || id >= 58;
}
static int p_mixed(const struct row *r)
{
	return r->type == 7 && r->start > 1030 && r->has_client;
}
static int p_backslash(const struct row *r)
{
	return strcmp(r->name, "C:\\") == 0;
}
static int p_all(const struct row *r)
{
	NSR_UNUSED(r);
	return 1;
}

static void test_filters_match_predicates(void **state)
{
	static const struct {
		const char *line;
		int (*pred)(const struct row *);
	} cases[] = {
		{". type: save job", p_save},
		{". client: web01, web03; job state: completed, FAILED",
		 p_clients_states},
		{". bytes: >= 1000, < 300", p_bytes},
		{". name: /home/*", p_home},
		{". name: \"/home/u[1]\"", p_u1},
		{". name: /home/u[1]", p_u1},
		{". name: /home/u[1*", p_u1},
		{". client: != web01", p_not_web01},
		{". completion status:", p_no_status},
		{". name: \"x'); DROP TABLE jobs; --\"", p_none},
		{". name: x' OR '1'='1", p_none},
		{". job id: 5, 7, >= 58", p_ids},
		{". type: savegrp; start time: > 1030; client: web0?", p_mixed},
		{". name: \"C:\\\\\"", p_backslash},
		{".", p_all},
	};
	struct jt *t = *state;
	struct nsr_jobdb_query *q = NULL;
	enum nsr_jobdb_cmd cmd;
	uint64_t n = 0;

	fill_rows(t->db);
	for (size_t i = 0; i < NSR_ARRAY_SIZE(cases); i++) {
		struct nsr_jobdb_cursor *c = NULL;
		const struct nsr_jobdb_job *job;
		int want = 0, got = 0, next = 0, rc;

		assert_int_equal(nsr_jobdb_query_new(&q), NSR_OK);
		assert_int_equal(nsr_jobdb_query_parse(q, cases[i].line,
						       strlen(cases[i].line),
						       &cmd, NULL),
				 NSR_OK);
		assert_int_equal(nsr_jobdb_cursor_open(t->db, q, &c), NSR_OK);
		for (;;) {
			rc = nsr_jobdb_cursor_next(c, &job);
			if (rc != NSR_OK)
				break;
			/* Rows come in id order and match the predicate. */
			assert_true(job->id > next);
			next = (int)job->id;
			assert_true(job->id >= 1 && job->id <= NJOBS);
			if (!cases[i].pred(&rows[job->id - 1]))
				fail_msg("'%s' returned job %" PRId64,
					 cases[i].line, job->id);
			got++;
		}
		assert_int_equal(rc, NSR_ERR_EOF);
		for (int k = 0; k < NJOBS; k++)
			want += cases[i].pred(&rows[k]);
		if (got != want)
			fail_msg("'%s': %d rows, want %d", cases[i].line, got,
				 want);
		nsr_jobdb_cursor_close(c);
		nsr_jobdb_query_free(q);
	}
	/* The injection attempts changed nothing. */
	assert_int_equal(nsr_jobdb_count(t->db, &n), NSR_OK);
	assert_int_equal(n, NJOBS);
}

static void test_cursor_streams_a_snapshot(void **state)
{
	struct jt *t = *state;
	struct nsr_jobdb *other = NULL;
	struct nsr_jobdb_query *q = NULL;
	struct nsr_jobdb_cursor *c = NULL;
	const struct nsr_jobdb_job *job;
	uint64_t n = 0;
	int seen = 0, rc;

	for (int i = 0; i < 3000; i++)
		jt_add(t->db, NSR_JOBDB_TYPE_SAVE, "c", "/", 3, i, i + 1, 0);
	assert_int_equal(nsr_jobdb_open(t->path, NULL, &other), NSR_OK);
	assert_int_equal(nsr_jobdb_query_new(&q), NSR_OK);
	assert_int_equal(nsr_jobdb_cursor_open(t->db, q, &c), NSR_OK);
	for (;;) {
		rc = nsr_jobdb_cursor_next(c, &job);
		if (rc != NSR_OK)
			break;
		/* A writer on another handle is not blocked by the reader. */
		if (++seen == 10)
			for (int i = 0; i < 5; i++)
				jt_add(other, NSR_JOBDB_TYPE_RECOVER, "d", "/",
				       1, 0, 0, 0);
	}
	assert_int_equal(rc, NSR_ERR_EOF);
	assert_int_equal(seen, 3000);
	nsr_jobdb_cursor_close(c);
	assert_int_equal(nsr_jobdb_count(t->db, &n), NSR_OK);
	assert_int_equal(n, 3005);
	nsr_jobdb_query_free(q);
	nsr_jobdb_close(other);
}

/* print_one - the output for job 1 with show list `show` in fmt. */
static void print_one(struct jt *t, const char *show,
		      enum nsr_jobdb_format fmt, struct nsr_buf *out)
{
	struct nsr_jobdb_query *q = NULL;
	struct nsr_jobdb_cursor *c = NULL;
	const struct nsr_jobdb_job *job;
	enum nsr_jobdb_cmd cmd;

	assert_int_equal(nsr_jobdb_query_new(&q), NSR_OK);
	assert_int_equal(nsr_jobdb_query_parse(q, show, strlen(show), &cmd,
					       NULL),
			 NSR_OK);
	assert_int_equal(nsr_jobdb_query_parse(q, ". job id: 1", 11, &cmd,
					       NULL),
			 NSR_OK);
	assert_int_equal(nsr_jobdb_cursor_open(t->db, q, &c), NSR_OK);
	assert_int_equal(nsr_jobdb_cursor_print(c, fmt, out), NSR_ERR_STATE);
	assert_int_equal(nsr_jobdb_cursor_next(c, &job), NSR_OK);
	assert_int_equal(nsr_jobdb_cursor_print(c, fmt, out), NSR_OK);
	assert_int_equal(nsr_jobdb_cursor_next(c, &job), NSR_ERR_EOF);
	nsr_jobdb_cursor_close(c);
	nsr_jobdb_query_free(q);
}

/* add_print_job - job 1 with awkward text and two log lines. */
static void add_print_job(struct nsr_jobdb *db, const char *client)
{
	struct nsr_jobdb_job j = {0};
	int64_t id = 0;

	j.type = NSR_JOBDB_TYPE_SAVE;
	j.state = NSR_JOBDB_COMPLETED;
	j.name = "/var";
	j.client = client;
	j.status = "succeeded";
	j.start_time = 1717452003;
	j.end_time = 1717452100;
	j.bytes = 5;
	assert_int_equal(nsr_jobdb_create(db, &j, &id), NSR_OK);
	assert_int_equal(id, 1);
	assert_int_equal(nsr_jobdb_log_append(db, 1, 10, "first line"),
			 NSR_OK);
	assert_int_equal(nsr_jobdb_log_append(db, 1, 11, "second; line"),
			 NSR_OK);
}

static void test_print_nsradmin(void **state)
{
	struct jt *t = *state;
	struct nsr_buf out;

	add_print_job(t->db, "web01");
	nsr_buf_init(&out, 0);
	print_one(t,
		  "show job id; name; job state; completion status; "
		  "start time; level; job log",
		  NSR_JOBDB_FMT_NSRADMIN, &out);
	assert_string_equal(out.data,
			    "                      job id: 1;\n"
			    "                        name: /var;\n"
			    "                   job state: COMPLETED;\n"
			    "           completion status: succeeded;\n"
			    "                  start time: 1717452003;\n"
			    "                       level: ;\n"
			    "                     job log: first line,\n"
			    "                              \"second; line\";\n"
			    "\n");
	nsr_buf_release(&out);
}

static void test_print_json(void **state)
{
	struct jt *t = *state;
	struct nsr_buf out;

	add_print_job(t->db, "we\"b\001\xff\xc3\xa9");
	nsr_buf_init(&out, 0);
	print_one(t, "show job id; type; client; level; bytes; job log",
		  NSR_JOBDB_FMT_JSON, &out);
	assert_string_equal(out.data,
			    "{\"job id\":1,\"type\":\"save job\","
			    "\"client\":\"we\\\"b\\u0001\\ufffd\xc3\xa9\","
			    "\"level\":null,\"bytes\":5,"
			    "\"job log\":[{\"seq\":1,\"time\":10,"
			    "\"line\":\"first line\"},{\"seq\":2,\"time\":11,"
			    "\"line\":\"second; line\"}]}\n");

	/* With no show list every attribute appears, in canonical order. */
	nsr_buf_reset(&out);
	print_one(t, "show", NSR_JOBDB_FMT_JSON, &out);
	assert_true(strncmp(out.data, "{\"job id\":1,\"parent job id\":0,"
				      "\"type\":\"save job\",\"name\":\"/var\"",
			    60) == 0);
	assert_non_null(strstr(out.data, "\"job state\":\"COMPLETED\""));
	assert_non_null(strstr(out.data, "\"end time\":1717452100,"));
	assert_non_null(strstr(out.data, "\"command\":null,\"job log\":[{"));
	assert_string_equal(out.data + out.len - 3, "]}\n");
	nsr_buf_release(&out);
}

/* replay_logs - a log source that replays two fixed lines. */
static int replay_logs(void *src, nsr_jobdb_log_fn fn, void *arg)
{
	int rc;

	NSR_UNUSED(src);
	rc = fn(arg, 1, 10, "first line");
	return rc ? rc : fn(arg, 2, 11, "second; line");
}

static void test_print_without_cursor(void **state)
{
	struct jt *t = *state;
	struct nsr_jobdb_query *q = NULL;
	struct nsr_jobdb_job job;
	enum nsr_jobdb_cmd cmd;
	struct nsr_buf a, b;

	add_print_job(t->db, "web\"01");
	nsr_buf_init(&a, 0);
	nsr_buf_init(&b, 0);
	assert_int_equal(nsr_jobdb_get(t->db, 1, &job), NSR_OK);
	assert_int_equal(nsr_jobdb_query_new(&q), NSR_OK);
	/* Same bytes as the cursor, in both formats, for a full show list. */
	for (int fmt = 0; fmt < 2; fmt++) {
		nsr_buf_reset(&a);
		nsr_buf_reset(&b);
		print_one(t, "show", (enum nsr_jobdb_format)fmt, &a);
		assert_int_equal(nsr_jobdb_print(q, &job, replay_logs, NULL,
						 (enum nsr_jobdb_format)fmt,
						 &b),
				 NSR_OK);
		assert_string_equal(a.data, b.data);
	}
	/* No log source: an empty log. */
	assert_int_equal(nsr_jobdb_query_parse(q, "show job id; job log", 20,
					       &cmd, NULL),
			 NSR_OK);
	nsr_buf_reset(&b);
	assert_int_equal(nsr_jobdb_print(q, &job, NULL, NULL,
					 NSR_JOBDB_FMT_NSRADMIN, &b),
			 NSR_OK);
	assert_string_equal(b.data, "                      job id: 1;\n"
				    "                     job log: ;\n\n");
	nsr_buf_reset(&b);
	assert_int_equal(nsr_jobdb_print(q, &job, NULL, NULL, 7, &b),
			 NSR_ERR_INVAL);
	nsr_jobdb_job_release(&job);
	nsr_jobdb_query_free(q);
	nsr_buf_release(&a);
	nsr_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, jt_setup, jt_teardown)
		T(test_filters_match_predicates),
		T(test_cursor_streams_a_snapshot),
		T(test_print_nsradmin),
		T(test_print_json),
		T(test_print_without_cursor),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
