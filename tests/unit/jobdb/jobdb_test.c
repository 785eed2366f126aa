/*
 * jobdb_test.c - fixture shared by the jobs-db unit tests.
 */
#include "nsr/compat.h"

#include "nsr/err.h"
#include "nsr/xmalloc.h"

#include "jobdb_test.h"

/* jt_open - (re)open the fixture's database. */
void jt_open(struct jt *t, const struct nsr_jobdb_options *opt)
{
	nsr_jobdb_close(t->db);
	t->db = NULL;
	assert_int_equal(nsr_jobdb_open(t->path, opt, &t->db), NSR_OK);
	assert_non_null(t->db);
}

/* jt_setup - a fresh database in a private directory. */
int jt_setup(void **state)
{
	struct jt *t = nsr_xcalloc(1, sizeof(*t));

	t->dir = nsr_test_tmpdir("jobdb");
	t->path = nsr_xasprintf("%s/jobsdb", t->dir);
	jt_open(t, NULL);
	*state = t;
	return 0;
}

/* jt_teardown - check the invariants, close, remove. */
int jt_teardown(void **state)
{
	struct jt *t = *state;

	if (t->db)
		assert_int_equal(nsr_jobdb_check(t->db), NSR_OK);
	nsr_jobdb_close(t->db);
	nsr_test_rmrf(t->dir);
	free(t->path);
	free(t->dir);
	free(t);
	return 0;
}

/* jt_add - create a job with the common fields. */
int64_t jt_add(struct nsr_jobdb *db, enum nsr_jobdb_type type,
	       const char *client, const char *name,
	       enum nsr_jobdb_state state, int64_t start, int64_t end,
	       int64_t parent)
{
	struct nsr_jobdb_job j = {0};
	int64_t id = 0;

	j.type = type;
	j.client = client;
	j.name = name;
	j.state = state;
	j.start_time = start;
	j.end_time = end;
	j.parent_id = parent;
	assert_int_equal(nsr_jobdb_create(db, &j, &id), NSR_OK);
	assert_true(id > 0);
	return id;
}

/* jt_exists - does job id exist? */
int jt_exists(struct nsr_jobdb *db, int64_t id)
{
	struct nsr_jobdb_job j;
	int rc = nsr_jobdb_get(db, id, &j);

	if (rc == NSR_ERR_NOTFOUND)
		return 0;
	assert_int_equal(rc, NSR_OK);
	nsr_jobdb_job_release(&j);
	return 1;
}
