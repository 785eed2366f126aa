/*
 * test_backup.c - nsr_jobdb_backup (src/jobdb/backup.c): the copy opens
 * as a jobs database with the same jobs and log lines, passes the
 * database check, is not touched by later changes to the original, and
 * a copy to a path that cannot be written fails and leaves nothing.
 */
#include "nsr/compat.h"

#include <sys/stat.h>
#include <unistd.h>

#include "nsr/err.h"
#include "nsr/jobdb.h"

#include "jobdb_test.h"

/* count_lines - nsr_jobdb_log_read's callback: count the lines. */
static int count_lines(void *arg, int64_t seq, int64_t time,
		       const char *line)
{
	NSR_UNUSED(seq);
	NSR_UNUSED(time);
	NSR_UNUSED(line);
	(*(int *)arg)++;
	return 0;
}

static void test_backup_copies_jobs_and_logs(void **state)
{
	struct jt *t = *state;
	char *copy = strdup(nsr_test_path(t->dir, "copy.db"));
	struct nsr_jobdb *c = NULL;
	struct nsr_jobdb_job j;
	uint64_t n = 0, bytes = 0;
	int64_t id;
	int lines = 0;

	assert_non_null(copy);
	for (int i = 0; i < 50; i++)
		jt_add(t->db, NSR_JOBDB_TYPE_SAVE, "c1", "/data",
		       NSR_JOBDB_COMPLETED, 1000 + i, 1001 + i, 0);
	id = jt_add(t->db, NSR_JOBDB_TYPE_BOOTSTRAP_SAVE, "srv", "bootstrap",
		    NSR_JOBDB_ACTIVE, 2000, 0, 0);
	assert_int_equal(nsr_jobdb_log_append(t->db, id, 2001, "one"), NSR_OK);
	assert_int_equal(nsr_jobdb_log_append(t->db, id, 2002, "two"), NSR_OK);

	assert_int_equal(nsr_jobdb_backup(t->db, copy, &bytes), NSR_OK);
	assert_true(bytes > 0);
	assert_int_equal(access(nsr_test_path(t->dir, "copy.db.tmp"), F_OK),
			 -1);
	/* a later change to the original is not in the copy */
	jt_add(t->db, NSR_JOBDB_TYPE_SAVE, "c2", "/late", NSR_JOBDB_ACTIVE,
	       3000, 0, 0);

	assert_int_equal(nsr_jobdb_open(copy, NULL, &c), NSR_OK);
	assert_int_equal(nsr_jobdb_check(c), NSR_OK);
	assert_int_equal(nsr_jobdb_count(c, &n), NSR_OK);
	assert_int_equal(n, 51);
	assert_int_equal(nsr_jobdb_get(c, id, &j), NSR_OK);
	assert_string_equal(j.name, "bootstrap");
	assert_int_equal(j.type, NSR_JOBDB_TYPE_BOOTSTRAP_SAVE);
	nsr_jobdb_job_release(&j);
	assert_int_equal(nsr_jobdb_log_read(c, id, count_lines, &lines),
			 NSR_OK);
	assert_int_equal(lines, 2);
	nsr_jobdb_close(c);
	free(copy);
}

static void test_backup_to_missing_dir_fails(void **state)
{
	struct jt *t = *state;
	char *bad = strdup(nsr_test_path(t->dir, "no/such/dir/copy.db"));
	struct stat st;

	assert_non_null(bad);
	jt_add(t->db, NSR_JOBDB_TYPE_SAVE, "c1", "/data", NSR_JOBDB_ACTIVE, 1,
	       0, 0);
	assert_int_not_equal(nsr_jobdb_backup(t->db, bad, NULL), NSR_OK);
	assert_int_equal(stat(bad, &st), -1);
	free(bad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, jt_setup, jt_teardown)
		T(test_backup_copies_jobs_and_logs),
		T(test_backup_to_missing_dir_fails),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
