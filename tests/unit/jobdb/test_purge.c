/*
 * test_purge.c - the retention purge (src/jobdb/purge.c): exactly the
 * expired finished jobs go, in batches, with their logs and children.
 */
#include "nsr/compat.h"

#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nsr/err.h"
#include "nsr/jobdb.h"

#include "jobdb_int.h" /* jobdb_purging */
#include "jobdb_test.h"

#define NOW 1800000000LL
#define HOUR 3600LL

static void test_purge_exactly_expired(void **state)
{
	struct jt *t = *state;
	struct nsr_jobdb_purge_stats st;
	int64_t cutoff = NOW - 72 * HOUR;
	int64_t old_done, old_failed, old_aborted, at_cutoff, inside, active,
		queued, old_active;

	old_done = jt_add(t->db, NSR_JOBDB_TYPE_SAVE, "a", "/", 3,
			  cutoff - 100, cutoff - 1, 0);
	old_failed = jt_add(t->db, NSR_JOBDB_TYPE_RECOVER, "a", "/", 4,
			    cutoff - 900, cutoff - 500, 0);
	old_aborted = jt_add(t->db, NSR_JOBDB_TYPE_CLONE, "a", "/", 5,
			     cutoff - 9000, cutoff - 8000, 0);
	at_cutoff = jt_add(t->db, NSR_JOBDB_TYPE_SAVE, "a", "/", 3,
			   cutoff - 10, cutoff, 0);
	inside = jt_add(t->db, NSR_JOBDB_TYPE_SAVE, "a", "/", 3, NOW - 100,
			NOW - 50, 0);
	/* Unfinished jobs are never purged, however old. */
	active = jt_add(t->db, NSR_JOBDB_TYPE_SAVE, "a", "/", 2,
			cutoff - 100000, 0, 0);
	queued = jt_add(t->db, NSR_JOBDB_TYPE_SAVE, "a", "/", 1, 0, 0, 0);
	old_active = jt_add(t->db, NSR_JOBDB_TYPE_SAVE, "a", "/", 2,
			    cutoff - 100000, cutoff - 99999, 0);
	assert_int_equal(nsr_jobdb_log_append(t->db, old_done, 1, "x"), NSR_OK);
	assert_int_equal(nsr_jobdb_log_append(t->db, old_done, 2, "y"), NSR_OK);
	assert_int_equal(nsr_jobdb_log_append(t->db, inside, 3, "z"), NSR_OK);

	assert_int_equal(nsr_jobdb_purge(t->db, 72, NOW, &st), NSR_OK);
	assert_int_equal(st.jobs, 3);
	assert_int_equal(st.logs, 2);
	assert_false(jt_exists(t->db, old_done));
	assert_false(jt_exists(t->db, old_failed));
	assert_false(jt_exists(t->db, old_aborted));
	assert_true(jt_exists(t->db, at_cutoff));
	assert_true(jt_exists(t->db, inside));
	assert_true(jt_exists(t->db, active));
	assert_true(jt_exists(t->db, queued));
	assert_true(jt_exists(t->db, old_active));

	/* Nothing left to do: a second purge deletes nothing. */
	assert_int_equal(nsr_jobdb_purge(t->db, 72, NOW, &st), NSR_OK);
	assert_int_equal(st.jobs, 0);
	assert_int_equal(st.batches, 0);
}

static void test_retention_change_next_purge(void **state)
{
	struct jt *t = *state;
	struct nsr_jobdb_purge_stats st;
	int64_t two_days = jt_add(t->db, NSR_JOBDB_TYPE_SAVE, "a", "/", 3,
				  NOW - 49 * HOUR, NOW - 48 * HOUR, 0);
	int64_t two_hours = jt_add(t->db, NSR_JOBDB_TYPE_SAVE, "a", "/", 3,
				   NOW - 3 * HOUR, NOW - 2 * HOUR, 0);

	assert_int_equal(nsr_jobdb_purge(t->db, NSR_JOBDB_RETENTION_DEFAULT,
					 NOW, &st),
			 NSR_OK);
	assert_int_equal(st.jobs, 0);
	assert_int_equal(nsr_jobdb_purge(t->db, 24, NOW, &st), NSR_OK);
	assert_int_equal(st.jobs, 1);
	assert_false(jt_exists(t->db, two_days));
	assert_true(jt_exists(t->db, two_hours));
	assert_int_equal(nsr_jobdb_purge(t->db, 1, NOW, &st), NSR_OK);
	assert_int_equal(st.jobs, 1);
	assert_false(jt_exists(t->db, two_hours));
}

/* add_expired - n finished, expired jobs with one log line each. */
static void add_expired(struct nsr_jobdb *db, int n)
{
	for (int i = 0; i < n; i++) {
		int64_t id = jt_add(db, NSR_JOBDB_TYPE_SAVE, "c", "/", 3,
				    1000 + i, 2000 + i, 0);

		assert_int_equal(nsr_jobdb_log_append(db, id, 1, "done"),
				 NSR_OK);
	}
}

static void test_purge_in_small_batches(void **state)
{
	struct jt *t = *state;
	struct nsr_jobdb_options opt = {.batch_rows = 3};
	struct nsr_jobdb_purge_stats st;
	uint64_t n = 1;

	jt_open(t, &opt);
	add_expired(t->db, 20);
	jt_add(t->db, NSR_JOBDB_TYPE_SAVE, "c", "/", 2, 1000, 0, 0);
	assert_int_equal(nsr_jobdb_purge(t->db, 72, NOW, &st), NSR_OK);
	assert_int_equal(st.jobs, 20);
	assert_int_equal(st.logs, 20);
	/* 20 jobs at 3 per transaction: 7 transactions. */
	assert_int_equal(st.batches, 7);
	assert_int_equal(nsr_jobdb_count(t->db, &n), NSR_OK);
	assert_int_equal(n, 1);
}

static void test_batch_env_knob(void **state)
{
	struct jt *t = *state;
	struct nsr_jobdb_purge_stats st;

	assert_int_equal(setenv("NSR_TEST_JOBDB_BATCH", "1", 1), 0);
	jt_open(t, NULL);
	assert_int_equal(unsetenv("NSR_TEST_JOBDB_BATCH"), 0);
	add_expired(t->db, 5);
	assert_int_equal(nsr_jobdb_purge(t->db, 72, NOW, &st), NSR_OK);
	assert_int_equal(st.jobs, 5);
	assert_int_equal(st.batches, 5);
	/* Without the knob, the default batch takes them in one go. */
	jt_open(t, NULL);
	add_expired(t->db, 5);
	assert_int_equal(nsr_jobdb_purge(t->db, 72, NOW, &st), NSR_OK);
	assert_int_equal(st.jobs, 5);
	assert_int_equal(st.batches, 1);
}

static void test_children_go_with_parent(void **state)
{
	struct jt *t = *state;
	struct nsr_jobdb_options opt = {.batch_rows = 2};
	struct nsr_jobdb_purge_stats st;
	int64_t p, c1, c2, g1, p2, d1, p3, e1, e2;
	struct nsr_jobdb_job v = {0};

	jt_open(t, &opt);
	/* A finished, expired workflow run with children and a grandchild. */
	p = jt_add(t->db, NSR_JOBDB_TYPE_SAVEGRP, "srv", "Default", 1, 100, 0,
		   0);
	c1 = jt_add(t->db, NSR_JOBDB_TYPE_SAVE, "a", "/", 3, 110, 200, p);
	c2 = jt_add(t->db, NSR_JOBDB_TYPE_SAVE, "b", "/", 3, 110, 210, p);
	g1 = jt_add(t->db, NSR_JOBDB_TYPE_INDEX_SAVE, "a", "idx", 3, 210,
		    220, c1);
	v.state = NSR_JOBDB_COMPLETED;
	v.end_time = 300;
	assert_int_equal(nsr_jobdb_update(t->db, p,
					  NSR_JOBDB_F_STATE | NSR_JOBDB_F_END,
					  &v),
			 NSR_OK);
	assert_int_equal(nsr_jobdb_log_append(t->db, g1, 1, "index"), NSR_OK);
	assert_int_equal(nsr_jobdb_log_append(t->db, p, 1, "group"), NSR_OK);

	/* An expired parent whose child is still active stays whole. */
	p2 = jt_add(t->db, NSR_JOBDB_TYPE_SAVEGRP, "srv", "G2", 3, 100, 150, 0);
	d1 = jt_add(t->db, NSR_JOBDB_TYPE_SAVE, "a", "/", 2, 110, 0, p2);

	/* Expired children of a parent inside retention stay too. */
	p3 = jt_add(t->db, NSR_JOBDB_TYPE_SAVEGRP, "srv", "G3", 3, 100,
		    NOW - HOUR, 0);
	e1 = jt_add(t->db, NSR_JOBDB_TYPE_SAVE, "a", "/", 3, 110, 120, p3);
	e2 = jt_add(t->db, NSR_JOBDB_TYPE_SAVE, "a", "/", 4, 110, 130, p3);

	assert_int_equal(nsr_jobdb_purge(t->db, 72, NOW, &st), NSR_OK);
	assert_int_equal(st.jobs, 4);
	assert_int_equal(st.logs, 2);
	assert_false(jt_exists(t->db, p));
	assert_false(jt_exists(t->db, c1));
	assert_false(jt_exists(t->db, c2));
	assert_false(jt_exists(t->db, g1));
	assert_true(jt_exists(t->db, p2));
	assert_true(jt_exists(t->db, d1));
	assert_true(jt_exists(t->db, p3));
	assert_true(jt_exists(t->db, e1));
	assert_true(jt_exists(t->db, e2));

	/* When the active child finishes, the whole run expires together. */
	v.state = NSR_JOBDB_FAILED;
	v.end_time = 160;
	assert_int_equal(nsr_jobdb_update(t->db, d1,
					  NSR_JOBDB_F_STATE | NSR_JOBDB_F_END,
					  &v),
			 NSR_OK);
	assert_int_equal(nsr_jobdb_purge(t->db, 72, NOW, &st), NSR_OK);
	assert_int_equal(st.jobs, 2);
	assert_false(jt_exists(t->db, p2));
	assert_false(jt_exists(t->db, d1));
	assert_true(jt_exists(t->db, e1));

	/* And the third run goes once its parent has expired. */
	assert_int_equal(nsr_jobdb_purge(t->db, 72, NOW + 72 * HOUR, &st),
			 NSR_OK);
	assert_int_equal(st.jobs, 3);
	assert_false(jt_exists(t->db, p3));
	assert_false(jt_exists(t->db, e1));
	assert_false(jt_exists(t->db, e2));
}

/* file_size - bytes of the database file (0 if missing). */
static off_t file_size(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 ? sb.st_size : 0;
}

/* add_big - n finished jobs ending at end, end + 1, ... through db, each
 * with a command line of len - 1 bytes (len <= 60000). */
static void add_big(struct nsr_jobdb *db, int n, size_t len, int64_t end)
{
	static char cmd[60000];

	memset(cmd, 'y', len - 1);
	cmd[len - 1] = '\0';
	for (int i = 0; i < n; i++) {
		struct nsr_jobdb_job j = {0};
		int64_t id = 0;

		j.type = NSR_JOBDB_TYPE_SAVE;
		j.state = NSR_JOBDB_COMPLETED;
		j.end_time = end + i;
		j.command = cmd;
		assert_int_equal(nsr_jobdb_create(db, &j, &id), NSR_OK);
	}
}

static void test_purge_shrinks_file(void **state)
{
	struct jt *t = *state;
	struct nsr_jobdb_purge_stats st;
	off_t full, after;

	add_big(t->db, 1500, 2048, 1000);
	jt_open(t, NULL); /* closing checkpoints the WAL into the file */
	full = file_size(t->path);
	assert_true(full > 1500 * 2048);
	assert_int_equal(nsr_jobdb_purge(t->db, 72, NOW, &st), NSR_OK);
	assert_int_equal(st.jobs, 1500);
	assert_true(st.vacuumed > 500);
	jt_open(t, NULL);
	after = file_size(t->path);
	assert_true(after < full / 10);
}

/* Shared with the writer thread of test_purge_with_concurrent_writer. */
struct writer {
	const char *path;
	volatile int stop;
	int inserted;
	int rc;
};

/* writer - insert jobs on its own handle until told to stop. */
static void *writer(void *arg)
{
	struct writer *w = arg;
	struct nsr_jobdb_options opt = {.background_checkpoint = 1};
	struct nsr_jobdb *db = NULL;

	w->rc = nsr_jobdb_open(w->path, &opt, &db);
	while (!w->rc && (!w->stop || w->inserted < 50)) {
		struct nsr_jobdb_job j = {0};
		int64_t id = 0;

		j.type = NSR_JOBDB_TYPE_RECOVER;
		j.state = NSR_JOBDB_COMPLETED;
		j.end_time = NOW;
		w->rc = nsr_jobdb_create(db, &j, &id);
		if (!w->rc)
			w->rc = nsr_jobdb_log_append(db, id, NOW, "live");
		if (!w->rc)
			w->inserted++;
	}
	if (!w->rc)
		w->rc = nsr_jobdb_checkpoint(db);
	nsr_jobdb_close(db);
	return NULL;
}

static void test_purge_with_concurrent_writer(void **state)
{
	struct jt *t = *state;
	struct nsr_jobdb_options opt = {.batch_rows = 5};
	struct nsr_jobdb_purge_stats st;
	struct writer w = {t->path, 0, 0, 0};
	pthread_t th;
	uint64_t n = 0;

	jt_open(t, &opt);
	add_expired(t->db, 400);
	assert_int_equal(pthread_create(&th, NULL, writer, &w), 0);
	/* Every insert must get through between the purge's batches. */
	assert_int_equal(nsr_jobdb_purge(t->db, 72, NOW, &st), NSR_OK);
	w.stop = 1;
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(w.rc, NSR_OK);
	assert_int_equal(st.jobs, 400);
	assert_int_equal(st.logs, 400);
	assert_true(st.batches >= 80);
	assert_int_equal(nsr_jobdb_count(t->db, &n), NSR_OK);
	assert_int_equal(n, (uint64_t)w.inserted);
	assert_int_equal(nsr_jobdb_checkpoint(t->db), NSR_OK);
}

/* add_units - n savegrp runs of one parent and three children, all
 * finished and expired, each job with a log line. */
static void add_units(struct nsr_jobdb *db, int n)
{
	for (int i = 0; i < n; i++) {
		int64_t p = jt_add(db, NSR_JOBDB_TYPE_SAVEGRP, "s", "g", 3, 10,
				   500 + i, 0);

		assert_int_equal(nsr_jobdb_log_append(db, p, 1, "run"), NSR_OK);
		for (int k = 0; k < 3; k++) {
			int64_t c = jt_add(db, NSR_JOBDB_TYPE_SAVE, "c", "/", 3,
					   20, 400 + i, p);

			assert_int_equal(nsr_jobdb_log_append(db, c, 1, "x"),
					 NSR_OK);
		}
	}
}

/* unit_whole - every remaining run still has its parent and all three
 * children: a purge never leaves half a unit behind. */
static void assert_units_whole(struct nsr_jobdb *db)
{
	struct nsr_jobdb_query *q = NULL;
	struct nsr_jobdb_cursor *c = NULL;
	const struct nsr_jobdb_job *job;
	enum nsr_jobdb_cmd cmd;
	int64_t parent = 0;
	int children = 3, rc;

	assert_int_equal(nsr_jobdb_query_new(&q), NSR_OK);
	assert_int_equal(nsr_jobdb_query_parse(q, ".", 1, &cmd, NULL), NSR_OK);
	assert_int_equal(nsr_jobdb_cursor_open(db, q, &c), NSR_OK);
	for (;;) {
		rc = nsr_jobdb_cursor_next(c, &job);
		if (rc != NSR_OK)
			break;
		if (job->parent_id == 0) {
			assert_int_equal(children, 3);
			parent = job->id;
			children = 0;
		} else {
			assert_int_equal(job->parent_id, parent);
			children++;
		}
	}
	assert_int_equal(rc, NSR_ERR_EOF);
	assert_int_equal(children, 3);
	nsr_jobdb_cursor_close(c);
	nsr_jobdb_query_free(q);
}

static void test_purge_killed_midway(void **state)
{
	struct jt *t = *state;
	struct nsr_jobdb_purge_stats st;
	uint64_t n = 0, prev = 400;

	add_units(t->db, 100);
	nsr_jobdb_close(t->db);
	t->db = NULL;
	/* Kill a purging process at different points; whatever it managed
	 * must leave a consistent database with whole units. */
	for (int round = 0; round < 8; round++) {
		struct nsr_jobdb_options opt = {.batch_rows = 4};
		int status = 0, fds[2];
		char ready;
		pid_t pid;

		assert_int_equal(pipe(fds), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			struct nsr_jobdb *db = NULL;

			if (nsr_jobdb_open(t->path, &opt, &db) == NSR_OK &&
			    write(fds[1], "r", 1) == 1)
				nsr_jobdb_purge(db, 72, NOW, NULL);
			_exit(0);
		}
		close(fds[1]);
		/* Wait until the child is about to purge, then let it run
		 * a little longer each round. */
		assert_int_equal(read(fds[0], &ready, 1), 1);
		close(fds[0]);
		usleep(3000 * (unsigned)round);
		kill(pid, SIGKILL);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		jt_open(t, NULL);
		assert_int_equal(nsr_jobdb_check(t->db), NSR_OK);
		assert_int_equal(nsr_jobdb_count(t->db, &n), NSR_OK);
		assert_true(n <= prev);
		assert_int_equal(n % 4, 0);
		assert_units_whole(t->db);
		print_message("killed after %d ms: %" PRIu64 " jobs left\n",
			      3 * round, n);
		prev = n;
		nsr_jobdb_close(t->db);
		t->db = NULL;
	}
	/* A purge after the crashes finishes the work. */
	jt_open(t, NULL);
	assert_int_equal(nsr_jobdb_purge(t->db, 72, NOW, &st), NSR_OK);
	assert_int_equal(st.jobs, prev);
	assert_int_equal(nsr_jobdb_count(t->db, &n), NSR_OK);
	assert_int_equal(n, 0);
}

/* While a purge runs in the process, another handle's commits never
 * checkpoint, however long the WAL grows (the purge checkpoints between
 * its transactions): a checkpoint after a vacuum cuts the file back, which
 * can stall on discards.  Without a purge the same WAL is checkpointed. */
static void test_checkpoints_left_to_purge(void **state)
{
	struct jt *t = *state;
	struct nsr_jobdb *w = NULL; /* checkpoints itself (no background) */
	const int n = JOBDB_CKPT_FRAMES_MAX / 16 + 100; /* ~16 frames a job */
	off_t before;

	jt_open(t, NULL);
	assert_int_equal(nsr_jobdb_open(t->path, NULL, &w), NSR_OK);
	assert_int_equal(nsr_jobdb_checkpoint(t->db), NSR_OK);
	before = file_size(t->path);
	jobdb_purging(t->db, 1); /* as nsr_jobdb_purge does while it runs */
	add_big(w, n, 60000, NOW); /* WAL past JOBDB_CKPT_FRAMES_MAX */
	assert_int_equal(file_size(t->path), before);
	jobdb_purging(t->db, 0);
	add_big(w, 1, 60000, NOW); /* this commit checkpoints the WAL */
	assert_true(file_size(t->path) > before + (off_t)n * 60000);
	nsr_jobdb_close(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, jt_setup, jt_teardown)
		T(test_purge_exactly_expired),
		T(test_retention_change_next_purge),
		T(test_purge_in_small_batches),
		T(test_batch_env_knob),
		T(test_children_go_with_parent),
		T(test_purge_shrinks_file),
		T(test_purge_with_concurrent_writer),
		T(test_purge_killed_midway),
		T(test_checkpoints_left_to_purge),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
