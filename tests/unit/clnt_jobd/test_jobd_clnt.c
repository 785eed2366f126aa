/*
 * test_jobd_clnt.c - the nsrjobd client library against nsrjobd's own
 * handlers (daemons/nsrjobd/proc.c) on the real transport, with a jobs
 * database in a private directory: JOB_CREATE_LOG records a job and its
 * first log lines exactly as JOB_CREATE and one JOB_LOG per line do
 * (jobquery prints the same), all or nothing, and its bounds hold; a
 * query whose connection drops is made again on a new one.
 */
#include "nsr/compat.h"

#include <string.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/jobd_clnt.h"
#include "nsr/jobdb.h"
#include "nsr/policy.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsrjob.h"
#include "nsr_test.h"

#include "../rpc/rpc_testsrv.h"
#include "jobd.h"

/* The daemon state proc.c works on (main.c's is not linked in). */
struct jobd g_jobd;

static struct test_server g_srv;
static struct nsr_rpc_prog g_prog;
static char *g_dir;

/* allow - every caller may write jobs (the policy is nsrjobd's, tested
 * by the system tests). */
static int allow(void *ctx, const struct nsr_rpc_call *call,
		 const struct nsr_rpc_proc *p, const void *args,
		 struct nsr_buf *why)
{
	NSR_UNUSED(ctx);
	NSR_UNUSED(call);
	NSR_UNUSED(p);
	NSR_UNUSED(args);
	NSR_UNUSED(why);
	return NSR_OK;
}

/* JOB_QUERY_OPEN's handler, and how many of its calls to drop. */
static nsr_rpc_fn g_query_open;
static int g_drop_queries;
static struct nsr_rpc_proc g_procs[64];

/* dropping_query_open - JOB_QUERY_OPEN, or its connection closed without
 * an answer while g_drop_queries counts down. */
static int dropping_query_open(void *ctx, void *args, void *res,
			       struct nsr_rpc_call *call)
{
	if (g_drop_queries > 0) {
		g_drop_queries--;
		return NSR_RPC_CLOSE;
	}
	return g_query_open(ctx, args, res, call);
}

/* setup - a fresh database served by nsrjobd's handlers. */
static int setup(void **state)
{
	NSR_UNUSED(state);
	memset(&g_jobd, 0, sizeof(g_jobd));
	g_dir = nsr_test_tmpdir("clnt_jobd");
	g_jobd.dbpath = strdup(nsr_test_path(g_dir, "jobsdb"));
	assert_non_null(g_jobd.dbpath);
	assert_int_equal(nsr_jobdb_open(g_jobd.dbpath, NULL, &g_jobd.db),
			 NSR_OK);
	/* no resources there: the default administrators (queries) */
	assert_int_equal(nsr_policy_open(g_dir, &g_jobd.policy), NSR_OK);
	g_prog = jobd_progs[0];
	g_prog.authz = allow;
	assert_true(g_prog.nprocs <= NSR_ARRAY_SIZE(g_procs));
	memcpy(g_procs, g_prog.procs, g_prog.nprocs * sizeof(*g_procs));
	for (size_t i = 0; i < g_prog.nprocs; i++)
		if (g_procs[i].proc == JOB_QUERY_OPEN) {
			g_query_open = g_procs[i].fn;
			g_procs[i].fn = dropping_query_open;
		}
	g_prog.procs = g_procs;
	g_drop_queries = 0;
	test_server_start(&g_srv, &g_prog, 1);
	return 0;
}

/* teardown - stop serving; the database must pass its own check. */
static int teardown(void **state)
{
	NSR_UNUSED(state);
	test_server_stop(&g_srv);
	assert_int_equal(nsr_jobdb_check(g_jobd.db), NSR_OK);
	nsr_jobdb_close(g_jobd.db);
	nsr_policy_close(g_jobd.policy);
	free(g_jobd.dbpath);
	nsr_test_rmrf(g_dir);
	free(g_dir);
	return 0;
}

/* open_clnt - a client of the test server. */
static struct nsr_jobd *open_clnt(void)
{
	struct nsr_jobd *j = NULL;

	assert_int_equal(nsr_jobd_connect("127.0.0.1", g_srv.port, &j, NULL),
			 NSR_OK);
	return j;
}

/* count - jobs in the database, read on a handle of the test's own. */
static uint64_t count(void)
{
	struct nsr_jobdb *db = NULL;
	uint64_t n = 0;

	assert_int_equal(nsr_jobdb_open(g_jobd.dbpath, NULL, &db), NSR_OK);
	assert_int_equal(nsr_jobdb_count(db, &n), NSR_OK);
	nsr_jobdb_close(db);
	return n;
}

/* A job's log as a printer's source, every line's time shown as 0. */
struct logsrc {
	struct nsr_jobdb *db;
	int64_t id;
	nsr_jobdb_log_fn fn;
	void *arg;
};

/* untimed - pass a line on without its time. */
static int untimed(void *arg, int64_t seq, int64_t time, const char *line)
{
	struct logsrc *s = arg;

	NSR_UNUSED(time);
	return s->fn(s->arg, seq, 0, line);
}

/* log_lines - nsr_jobdb_log_src over the database. */
static int log_lines(void *src, nsr_jobdb_log_fn fn, void *arg)
{
	struct logsrc *s = src;

	s->fn = fn;
	s->arg = arg;
	return nsr_jobdb_log_read(s->db, s->id, untimed, s);
}

/* print - job id as jobquery prints it (every attribute and the log), in
 * format fmt, with the id shown as 1 and log times as 0: what two
 * identical jobs made at different moments have in common. */
static void print(int64_t id, enum nsr_jobdb_format fmt, struct nsr_buf *out)
{
	struct nsr_jobdb *db = NULL;
	struct nsr_jobdb_query *q = NULL;
	struct nsr_jobdb_job job;
	struct logsrc s = {0};

	assert_int_equal(nsr_jobdb_open(g_jobd.dbpath, NULL, &db), NSR_OK);
	assert_int_equal(nsr_jobdb_query_new(&q), NSR_OK);
	assert_int_equal(nsr_jobdb_get(db, id, &job), NSR_OK);
	job.id = 1;
	s.db = db;
	s.id = id;
	assert_int_equal(nsr_jobdb_print(q, &job, log_lines, &s, fmt, out),
			 NSR_OK);
	nsr_jobdb_job_release(&job);
	nsr_jobdb_query_free(q);
	nsr_jobdb_close(db);
}

/* keep_len - log callback: the length of the first line. */
static int keep_len(void *arg, int64_t seq, int64_t time, const char *line)
{
	NSR_UNUSED(time);
	if (seq == 1)
		*(size_t *)arg = strlen(line);
	return 0;
}

/* first_len - the length of job id's first log line. */
static size_t first_len(int64_t id)
{
	struct nsr_jobdb *db = NULL;
	size_t n = 0;

	assert_int_equal(nsr_jobdb_open(g_jobd.dbpath, NULL, &db), NSR_OK);
	assert_int_equal(nsr_jobdb_log_read(db, id, keep_len, &n), NSR_OK);
	nsr_jobdb_close(db);
	return n;
}

/* a_job - the job record nsrd makes when it admits a save. */
static void a_job(struct nsr_jobdb_job *job)
{
	memset(job, 0, sizeof(*job));
	job->type = NSR_JOBDB_TYPE_SAVE;
	job->client = "web01";
	job->name = "/var";
	job->level = "full";
	job->host = "web01";
	job->pid = 4242;
	job->state = NSR_JOBDB_ACTIVE;
	job->start_time = 1717452003;
	job->ssids = "4129018274";
	job->command = "save -s bksrv /var";
}

static void test_same_as_create_and_log(void **state)
{
	static const char *const lines[] = {
		"saving web01:/var to volume V.001 on aftd",
		"level incr: no full of web01:/var, promoted to full",
	};
	struct nsr_jobd *j = open_clnt();
	struct nsr_jobdb_job job;
	struct nsr_buf err, a, b;
	int64_t one = 0, two = 0;

	NSR_UNUSED(state);
	nsr_buf_init(&err, 0);
	nsr_buf_init(&a, 0);
	nsr_buf_init(&b, 0);
	a_job(&job);
	/* As nsrd did before: three calls. */
	assert_int_equal(nsr_jobd_create(j, &job, &one, &err), NSR_OK);
	for (size_t i = 0; i < NSR_ARRAY_SIZE(lines); i++)
		assert_int_equal(nsr_jobd_log(j, one, lines[i], &err), NSR_OK);
	/* One call. */
	assert_int_equal(nsr_jobd_create_log(j, &job, lines, 2, &two, &err),
			 NSR_OK);
	assert_int_equal(two, one + 1);
	print(one, NSR_JOBDB_FMT_NSRADMIN, &a);
	print(two, NSR_JOBDB_FMT_NSRADMIN, &b);
	assert_string_equal(a.data, b.data);
	assert_non_null(strstr(b.data, "promoted to full"));
	nsr_buf_reset(&a);
	nsr_buf_reset(&b);
	print(one, NSR_JOBDB_FMT_JSON, &a);
	print(two, NSR_JOBDB_FMT_JSON, &b);
	assert_string_equal(a.data, b.data);
	/* The log goes on after the first lines. */
	assert_int_equal(nsr_jobd_log(j, two, "done", &err), NSR_OK);
	assert_int_equal(nsr_jobd_log(j, one, "done", &err), NSR_OK);
	nsr_buf_reset(&a);
	nsr_buf_reset(&b);
	print(one, NSR_JOBDB_FMT_NSRADMIN, &a);
	print(two, NSR_JOBDB_FMT_NSRADMIN, &b);
	assert_string_equal(a.data, b.data);
	/* No lines: a plain JOB_CREATE. */
	assert_int_equal(nsr_jobd_create_log(j, &job, NULL, 0, &two, &err),
			 NSR_OK);
	assert_int_equal(two, one + 2);
	assert_int_equal(count(), 3);
	nsr_buf_release(&a);
	nsr_buf_release(&b);
	nsr_buf_release(&err);
	nsr_jobd_close(j);
}

static void test_bounds_and_refusals(void **state)
{
	const char *lines[JOB_CREATE_LINES_MAX + 1];
	char *longline = malloc(JOB_LOG_MAX + 100);
	struct nsr_jobd *j = open_clnt();
	struct nsr_jobdb_job job;
	struct nsr_buf err, a, b;
	int64_t id = 0, one = 0, two = 0;

	NSR_UNUSED(state);
	assert_non_null(longline);
	nsr_buf_init(&err, 0);
	nsr_buf_init(&a, 0);
	nsr_buf_init(&b, 0);
	a_job(&job);
	for (size_t i = 0; i < NSR_ARRAY_SIZE(lines); i++)
		lines[i] = "line";
	/* More lines than go with a job: refused before sending. */
	assert_int_equal(nsr_jobd_create_log(j, &job, lines,
					     JOB_CREATE_LINES_MAX + 1, &id,
					     &err),
			 NSR_ERR_INVAL);
	assert_int_equal(id, 0);
	assert_non_null(strstr(err.data, "at most 8"));
	assert_int_equal(count(), 0);
	/* The most there may be. */
	assert_int_equal(nsr_jobd_create_log(j, &job, lines,
					     JOB_CREATE_LINES_MAX, &id, &err),
			 NSR_OK);
	assert_int_equal(id, 1);
	/* A job nsrjobd refuses is not recorded, nor are its lines. */
	job.type = 0;
	assert_int_equal(nsr_jobd_create_log(j, &job, lines, 2, &id, &err),
			 NSR_ERR_INVAL);
	assert_int_equal(id, 0);
	assert_non_null(strstr(err.data, "type 0 is not a job type"));
	job.type = NSR_JOBDB_TYPE_SAVE;
	job.parent_id = 99;
	assert_int_equal(nsr_jobd_create_log(j, &job, lines, 2, &id, &err),
			 NSR_ERR_INVAL);
	job.parent_id = 0;
	assert_int_equal(count(), 1);
	/* An over-long line is cut as JOB_LOG cuts it. */
	memset(longline, 'x', JOB_LOG_MAX + 99);
	longline[JOB_LOG_MAX + 99] = '\0';
	lines[0] = longline;
	assert_int_equal(nsr_jobd_create(j, &job, &one, &err), NSR_OK);
	assert_int_equal(nsr_jobd_log(j, one, longline, &err), NSR_OK);
	assert_int_equal(nsr_jobd_create_log(j, &job, lines, 1, &two, &err),
			 NSR_OK);
	print(one, NSR_JOBDB_FMT_JSON, &a);
	print(two, NSR_JOBDB_FMT_JSON, &b);
	assert_string_equal(a.data, b.data);
	assert_int_equal(first_len(two), JOB_LOG_MAX);
	assert_int_equal(count(), 3);
	free(longline);
	nsr_buf_release(&a);
	nsr_buf_release(&b);
	nsr_buf_release(&err);
	nsr_jobd_close(j);
}

/* test_create_many - JOB_CREATE_MANY: the jobs as JOB_CREATE_LOG records
 * them, ids in order; too many jobs or lines refused before sending
 * (*answered 0); a job nsrjobd refuses fails the call answered (nothing
 * made, *answered 1). */
static void test_create_many(void **state)
{
	static const char *const lines[] = {
		"saving web01:/var to volume V.001 on aftd",
		"level incr: no full of web01:/var, promoted to full",
	};
	const char *many[JOB_CREATE_LINES_MAX + 1];
	struct nsr_jobdb_new v[JOB_CREATE_MANY_MAX + 1];
	int64_t ids[JOB_CREATE_MANY_MAX + 1], one = 0;
	struct nsr_jobd *j = open_clnt();
	struct nsr_jobdb_job job, bad;
	struct nsr_buf err, a, b;
	int answered = 7;

	NSR_UNUSED(state);
	nsr_buf_init(&err, 0);
	nsr_buf_init(&a, 0);
	nsr_buf_init(&b, 0);
	a_job(&job);
	for (size_t i = 0; i < NSR_ARRAY_SIZE(many); i++)
		many[i] = "line";
	for (size_t i = 0; i < NSR_ARRAY_SIZE(v); i++)
		v[i] = (struct nsr_jobdb_new){&job, lines, 2, 0};
	assert_int_equal(nsr_jobd_create_log(j, &job, lines, 2, &one, &err),
			 NSR_OK);
	assert_int_equal(nsr_jobd_create_many(j, v, 3, ids, &answered, &err),
			 NSR_OK);
	assert_int_equal(answered, 1);
	for (int i = 0; i < 3; i++)
		assert_int_equal(ids[i], one + 1 + i);
	print(one, NSR_JOBDB_FMT_NSRADMIN, &a);
	print(ids[2], NSR_JOBDB_FMT_NSRADMIN, &b);
	assert_string_equal(a.data, b.data);
	assert_int_equal(count(), 4);
	/* Bounds: refused before sending. */
	assert_int_equal(nsr_jobd_create_many(j, v, JOB_CREATE_MANY_MAX + 1,
					      ids, &answered, &err),
			 NSR_ERR_INVAL);
	assert_int_equal(answered, 0);
	v[1].lines = many;
	v[1].nlines = JOB_CREATE_LINES_MAX + 1;
	assert_int_equal(nsr_jobd_create_many(j, v, 2, ids, NULL, &err),
			 NSR_ERR_INVAL);
	v[1].lines = lines;
	v[1].nlines = 2;
	assert_int_equal(count(), 4);
	/* The most there may be, in one call. */
	assert_int_equal(nsr_jobd_create_many(j, v, JOB_CREATE_MANY_MAX, ids,
					      &answered, &err),
			 NSR_OK);
	assert_int_equal(ids[JOB_CREATE_MANY_MAX - 1],
			 one + 3 + JOB_CREATE_MANY_MAX);
	assert_int_equal(count(), 4 + JOB_CREATE_MANY_MAX);
	/* One refused job: none of the call is recorded; answered. */
	bad = job;
	bad.type = 0;
	v[2].job = &bad;
	nsr_buf_reset(&err);
	assert_int_equal(nsr_jobd_create_many(j, v, 3, ids, &answered, &err),
			 NSR_ERR_INVAL);
	assert_int_equal(answered, 1);
	assert_int_equal(ids[0] | ids[1] | ids[2], 0);
	assert_non_null(strstr(err.data, "type 0 is not a job type"));
	assert_int_equal(count(), 4 + JOB_CREATE_MANY_MAX);
	nsr_buf_release(&a);
	nsr_buf_release(&b);
	nsr_buf_release(&err);
	nsr_jobd_close(j);
}

/* test_query_after_drop - a query whose connection is dropped before
 * the answer (as by an nsrjobd dying) is made again on a new one
 * (JOB_QUERY_OPEN may be repeated), finding the job made before. */
static void test_query_after_drop(void **state)
{
	static const char *const lines[] = {"saving web01:/var"};
	const struct nsr_jobdb_job *got = NULL;
	struct nsr_jobd *j = open_clnt();
	struct nsr_jobdb_job job;
	struct nsr_buf err;
	int64_t id = 0;

	NSR_UNUSED(state);
	nsr_buf_init(&err, 0);
	a_job(&job);
	assert_int_equal(nsr_jobd_create_log(j, &job, lines, 1, &id, &err),
			 NSR_OK);
	g_drop_queries = 1;
	assert_int_equal(nsr_jobd_query_open_text(j, ". type: save job", 0,
						  &err),
			 NSR_OK);
	assert_int_equal(g_drop_queries, 0); /* the first one was dropped */
	assert_int_equal(nsr_jobd_query_next(j, &got, &err), NSR_OK);
	assert_int_equal(got->id, id);
	assert_int_equal(nsr_jobd_query_next(j, &got, &err), NSR_ERR_EOF);
	nsr_buf_release(&err);
	nsr_jobd_close(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_same_as_create_and_log,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_query_after_drop,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_many, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bounds_and_refusals,
						setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
