/*
 * jobdb_test.h - fixture shared by the jobs-db unit tests: a fresh database
 * in a private directory per test, checked by nsr_jobdb_check() before it
 * is closed, and a short way to add a job.
 */
#ifndef NSR_JOBDB_TEST_H
#define NSR_JOBDB_TEST_H

#include "nsr/jobdb.h"
#include "nsr_test.h"

struct jt {
	char *dir;
	char *path;
	struct nsr_jobdb *db;
};

/* jt_setup / jt_teardown - cmocka fixtures; *state is a struct jt. */
int jt_setup(void **state);
int jt_teardown(void **state);
/* jt_open - (re)open the fixture's db with options (NULL = defaults). */
void jt_open(struct jt *t, const struct nsr_jobdb_options *opt);
/* jt_add - create a job; returns its id. */
int64_t jt_add(struct nsr_jobdb *db, enum nsr_jobdb_type type,
	       const char *client, const char *name,
	       enum nsr_jobdb_state state, int64_t start, int64_t end,
	       int64_t parent);
/* jt_exists - does job id exist? */
int jt_exists(struct nsr_jobdb *db, int64_t id);

#endif
