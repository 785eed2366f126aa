/*
 * test_job.c - job rows, log lines and startup recovery (src/jobdb/job.c,
 * jobdb.c).
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include "nsr/err.h"
#include "nsr/jobdb.h"

#include "jobdb_test.h"

static void test_create_get_roundtrip(void **state)
{
	struct jt *t = *state;
	struct nsr_jobdb_job in = {0}, out;
	int64_t id = 0;

	in.type = NSR_JOBDB_TYPE_SAVE;
	in.client = "web01";
	in.name = "/var";
	in.level = "incr";
	in.group = "Default";
	in.action = "backup";
	in.host = "bksrv";
	in.pid = 4242;
	in.state = NSR_JOBDB_ACTIVE;
	in.start_time = 1717452003;
	in.bytes = 123456789012LL;
	in.files = 77;
	in.ssids = "4129018274 4129018275";
	in.command = "save -s bksrv -g Default /var";
	assert_int_equal(nsr_jobdb_create(t->db, &in, &id), NSR_OK);
	assert_int_equal(id, 1);
	assert_int_equal(nsr_jobdb_get(t->db, id, &out), NSR_OK);
	assert_int_equal(out.id, 1);
	assert_int_equal(out.parent_id, 0);
	assert_int_equal(out.type, NSR_JOBDB_TYPE_SAVE);
	assert_string_equal(out.client, "web01");
	assert_string_equal(out.name, "/var");
	assert_string_equal(out.level, "incr");
	assert_string_equal(out.group, "Default");
	assert_string_equal(out.action, "backup");
	assert_string_equal(out.host, "bksrv");
	assert_int_equal(out.pid, 4242);
	assert_int_equal(out.state, NSR_JOBDB_ACTIVE);
	assert_null(out.status);
	assert_int_equal(out.start_time, 1717452003);
	assert_int_equal(out.end_time, 0);
	assert_int_equal(out.bytes, 123456789012LL);
	assert_int_equal(out.files, 77);
	assert_string_equal(out.ssids, "4129018274 4129018275");
	assert_string_equal(out.command, "save -s bksrv -g Default /var");
	nsr_jobdb_job_release(&out);
	assert_null(out.client);

	assert_int_equal(nsr_jobdb_get(t->db, 2, &out), NSR_ERR_NOTFOUND);
}

static void test_create_defaults_and_invalid(void **state)
{
	struct jt *t = *state;
	struct nsr_jobdb_job j = {0}, out;
	int64_t id = 7;

	j.type = NSR_JOBDB_TYPE_RECOVER;
	assert_int_equal(nsr_jobdb_create(t->db, &j, &id), NSR_OK);
	assert_int_equal(nsr_jobdb_get(t->db, id, &out), NSR_OK);
	assert_int_equal(out.state, NSR_JOBDB_QUEUED);
	assert_null(out.client);
	nsr_jobdb_job_release(&out);

	/* A job created finished gets an end time. */
	j.state = NSR_JOBDB_COMPLETED;
	assert_int_equal(nsr_jobdb_create(t->db, &j, &id), NSR_OK);
	assert_int_equal(nsr_jobdb_get(t->db, id, &out), NSR_OK);
	assert_true(out.end_time > 0);
	nsr_jobdb_job_release(&out);

	j.state = 0;
	j.type = 0;
	assert_int_equal(nsr_jobdb_create(t->db, &j, &id), NSR_ERR_INVAL);
	assert_int_equal(id, 0);
	j.type = 8;
	assert_int_equal(nsr_jobdb_create(t->db, &j, &id), NSR_ERR_INVAL);
	j.type = NSR_JOBDB_TYPE_CLONE;
	j.state = 6;
	assert_int_equal(nsr_jobdb_create(t->db, &j, &id), NSR_ERR_INVAL);
	/* A parent must be an earlier job. */
	j.state = 0;
	j.parent_id = 99;
	assert_int_equal(nsr_jobdb_create(t->db, &j, &id), NSR_ERR_INVAL);
	j.parent_id = 2;
	assert_int_equal(nsr_jobdb_create(t->db, &j, &id), NSR_OK);
	assert_int_equal(id, 3);
}

static void test_update_mask(void **state)
{
	struct jt *t = *state;
	struct nsr_jobdb_job v = {0}, out;
	int64_t id = jt_add(t->db, NSR_JOBDB_TYPE_SAVE, "c1", "/home",
			    NSR_JOBDB_QUEUED, 100, 0, 0);

	/* Only the masked fields change. */
	v.state = NSR_JOBDB_ACTIVE;
	v.pid = 555;
	v.client = "ignored";
	assert_int_equal(nsr_jobdb_update(t->db, id,
					  NSR_JOBDB_F_STATE | NSR_JOBDB_F_PID,
					  &v),
			 NSR_OK);
	assert_int_equal(nsr_jobdb_get(t->db, id, &out), NSR_OK);
	assert_int_equal(out.state, NSR_JOBDB_ACTIVE);
	assert_int_equal(out.pid, 555);
	assert_string_equal(out.client, "c1");
	assert_int_equal(out.end_time, 0);
	nsr_jobdb_job_release(&out);

	/* Finishing without an end time stamps one. */
	v.state = NSR_JOBDB_COMPLETED;
	v.status = "succeeded";
	v.bytes = 1000;
	v.client = NULL;
	assert_int_equal(nsr_jobdb_update(t->db, id,
					  NSR_JOBDB_F_STATE |
						  NSR_JOBDB_F_STATUS |
						  NSR_JOBDB_F_BYTES |
						  NSR_JOBDB_F_CLIENT,
					  &v),
			 NSR_OK);
	assert_int_equal(nsr_jobdb_get(t->db, id, &out), NSR_OK);
	assert_int_equal(out.state, NSR_JOBDB_COMPLETED);
	assert_string_equal(out.status, "succeeded");
	assert_int_equal(out.bytes, 1000);
	assert_null(out.client);
	assert_true(out.end_time > 0);
	nsr_jobdb_job_release(&out);

	/* An explicit end time is kept. */
	v.end_time = 4242;
	assert_int_equal(nsr_jobdb_update(t->db, id, NSR_JOBDB_F_END, &v),
			 NSR_OK);
	assert_int_equal(nsr_jobdb_get(t->db, id, &out), NSR_OK);
	assert_int_equal(out.end_time, 4242);
	nsr_jobdb_job_release(&out);

	assert_int_equal(nsr_jobdb_update(t->db, id + 1, NSR_JOBDB_F_PID, &v),
			 NSR_ERR_NOTFOUND);
	v.state = 9;
	assert_int_equal(nsr_jobdb_update(t->db, id, NSR_JOBDB_F_STATE, &v),
			 NSR_ERR_INVAL);
	v.type = 0;
	assert_int_equal(nsr_jobdb_update(t->db, id, NSR_JOBDB_F_TYPE, &v),
			 NSR_ERR_INVAL);
	v.parent_id = id;
	assert_int_equal(nsr_jobdb_update(t->db, id, NSR_JOBDB_F_PARENT, &v),
			 NSR_ERR_INVAL);
	assert_int_equal(nsr_jobdb_update(t->db, id, 1u << 20, &v),
			 NSR_ERR_INVAL);
}

/* Collects log lines for checking. */
struct lines {
	int n;
	int64_t seq[8];
	int64_t time[8];
	char text[8][64];
};

/* collect - log callback that keeps up to 8 lines. */
static int collect(void *arg, int64_t seq, int64_t time, const char *line)
{
	struct lines *l = arg;

	if (l->n == 8)
		return -100;
	l->seq[l->n] = seq;
	l->time[l->n] = time;
	snprintf(l->text[l->n], sizeof(l->text[0]), "%s", line);
	l->n++;
	return 0;
}

static void test_log_lines(void **state)
{
	struct jt *t = *state;
	struct lines l = {0};
	int64_t a = jt_add(t->db, NSR_JOBDB_TYPE_SAVE, "c", "/", 1, 1, 0, 0);
	int64_t b = jt_add(t->db, NSR_JOBDB_TYPE_SAVE, "c", "/", 1, 1, 0, 0);

	assert_int_equal(nsr_jobdb_log_append(t->db, a, 10, "first"), NSR_OK);
	assert_int_equal(nsr_jobdb_log_append(t->db, b, 11, "other job"),
			 NSR_OK);
	assert_int_equal(nsr_jobdb_log_append(t->db, a, 12, "second"), NSR_OK);
	assert_int_equal(nsr_jobdb_log_append(t->db, a, 0, ""), NSR_OK);
	assert_int_equal(nsr_jobdb_log_append(t->db, 99, 1, "x"),
			 NSR_ERR_NOTFOUND);
	assert_int_equal(nsr_jobdb_log_append(t->db, a, 1, NULL),
			 NSR_ERR_INVAL);
	assert_int_equal(nsr_jobdb_log_read(t->db, a, collect, &l), NSR_OK);
	assert_int_equal(l.n, 3);
	assert_int_equal(l.seq[0], 1);
	assert_int_equal(l.seq[1], 2);
	assert_int_equal(l.seq[2], 3);
	assert_string_equal(l.text[0], "first");
	assert_string_equal(l.text[1], "second");
	assert_string_equal(l.text[2], "");
	assert_int_equal(l.time[0], 10);
	assert_true(l.time[2] > 1000000000); /* 0 meant now */

	/* A callback's non-zero return stops the walk and is returned. */
	l.n = 8;
	assert_int_equal(nsr_jobdb_log_read(t->db, a, collect, &l), -100);
	l.n = 0;
	assert_int_equal(nsr_jobdb_log_read(t->db, 99, collect, &l), NSR_OK);
	assert_int_equal(l.n, 0);
}

static void test_recover_marks_unfinished(void **state)
{
	struct jt *t = *state;
	struct nsr_jobdb_job out;
	struct lines l = {0};
	uint64_t marked = 99;
	int64_t q = jt_add(t->db, NSR_JOBDB_TYPE_SAVE, "c", "/q",
			   NSR_JOBDB_QUEUED, 0, 0, 0);
	int64_t a = jt_add(t->db, NSR_JOBDB_TYPE_CLONE, "c", "/a",
			   NSR_JOBDB_ACTIVE, 50, 0, 0);
	int64_t d = jt_add(t->db, NSR_JOBDB_TYPE_SAVE, "c", "/d",
			   NSR_JOBDB_COMPLETED, 50, 60, 0);

	assert_int_equal(nsr_jobdb_log_append(t->db, a, 55, "writing"), NSR_OK);
	/* Simulate a restart: close and reopen before recovering. */
	jt_open(t, NULL);
	assert_int_equal(nsr_jobdb_recover(t->db, 1000, &marked), NSR_OK);
	assert_int_equal(marked, 2);

	assert_int_equal(nsr_jobdb_get(t->db, a, &out), NSR_OK);
	assert_int_equal(out.state, NSR_JOBDB_FAILED);
	assert_string_equal(out.status, NSR_JOBDB_RESTART_REASON);
	assert_int_equal(out.end_time, 1000);
	nsr_jobdb_job_release(&out);
	assert_int_equal(nsr_jobdb_log_read(t->db, a, collect, &l), NSR_OK);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.text[0], "writing");
	assert_string_equal(l.text[1], "interrupted: server restarted");
	assert_int_equal(l.seq[1], 2);

	assert_int_equal(nsr_jobdb_get(t->db, q, &out), NSR_OK);
	assert_int_equal(out.state, NSR_JOBDB_FAILED);
	nsr_jobdb_job_release(&out);

	/* A finished job is left alone. */
	assert_int_equal(nsr_jobdb_get(t->db, d, &out), NSR_OK);
	assert_int_equal(out.state, NSR_JOBDB_COMPLETED);
	assert_null(out.status);
	assert_int_equal(out.end_time, 60);
	nsr_jobdb_job_release(&out);

	assert_int_equal(nsr_jobdb_recover(t->db, 2000, &marked), NSR_OK);
	assert_int_equal(marked, 0);
}

static void test_reopen_persists_and_ids_grow(void **state)
{
	struct jt *t = *state;
	uint64_t n = 0;
	int64_t a = jt_add(t->db, NSR_JOBDB_TYPE_SAVE, "c", "/", 3, 1, 10, 0);
	int64_t b = jt_add(t->db, NSR_JOBDB_TYPE_SAVE, "c", "/", 3, 1, 10, 0);

	/* Purging the newest job must not let its id come back. */
	assert_int_equal(nsr_jobdb_purge(t->db, 1, 100000, NULL), NSR_OK);
	assert_false(jt_exists(t->db, a));
	assert_false(jt_exists(t->db, b));
	jt_open(t, NULL);
	assert_int_equal(nsr_jobdb_count(t->db, &n), NSR_OK);
	assert_int_equal(n, 0);
	assert_int_equal(jt_add(t->db, NSR_JOBDB_TYPE_SAVE, "c", "/", 1, 0, 0,
				0),
			 b + 1);
	jt_open(t, NULL);
	assert_int_equal(nsr_jobdb_count(t->db, &n), NSR_OK);
	assert_int_equal(n, 1);
}

static void test_open_rejects_garbage(void **state)
{
	struct jt *t = *state;
	struct nsr_jobdb *db = (struct nsr_jobdb *)&db;
	char *p = nsr_test_tmpdir("jobdb-garbage");
	char path[512];
	int fd;

	NSR_UNUSED(t);
	snprintf(path, sizeof(path), "%s/jobsdb", p);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	for (int i = 0; i < 64; i++)
		assert_int_equal(write(fd, "not a database, not at all! ", 28),
				 28);
	close(fd);
	assert_int_equal(nsr_jobdb_open(path, NULL, &db), NSR_ERR_CORRUPT);
	assert_null(db);
	assert_int_equal(nsr_jobdb_open("", NULL, &db), NSR_ERR_INVAL);
	snprintf(path, sizeof(path), "%s/no/such/dir/jobsdb", p);
	assert_int_equal(nsr_jobdb_open(path, NULL, &db), NSR_ERR_IO);
	nsr_test_rmrf(p);
	free(p);
}

/* raw_exec - run SQL on the file behind the library's back. */
static void raw_exec(const char *path, const char *sql)
{
	sqlite3 *h = NULL;

	assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
}

/* count - the jobs in db. */
static uint64_t count(struct nsr_jobdb *db)
{
	uint64_t n = 0;

	assert_int_equal(nsr_jobdb_count(db, &n), NSR_OK);
	return n;
}

static void test_create_log(void **state)
{
	static const char *const three[] = {"saving c:/ to volume V on d",
					    "level: incr promoted to full",
					    ""};
	struct jt *t = *state;
	struct nsr_jobdb_job j = {0}, out;
	struct lines l = {0};
	const char *bad[2] = {"fine", NULL};
	char *huge = malloc(65538);
	int64_t id = 0, id2 = 0;

	assert_non_null(huge);
	memset(huge, 'x', 65537);
	huge[65537] = '\0';
	j.type = NSR_JOBDB_TYPE_SAVE;
	j.client = "c";
	j.state = NSR_JOBDB_ACTIVE;
	assert_int_equal(nsr_jobdb_create_log(t->db, &j, three, 3, 10, &id),
			 NSR_OK);
	assert_int_equal(id, 1);
	assert_int_equal(nsr_jobdb_get(t->db, id, &out), NSR_OK);
	assert_string_equal(out.client, "c");
	assert_int_equal(out.state, NSR_JOBDB_ACTIVE);
	nsr_jobdb_job_release(&out);
	/* The lines in order, seq 1..3, and the count follows: the next
	 * line is 4. */
	assert_int_equal(nsr_jobdb_log_append(t->db, id, 11, "later"),
			 NSR_OK);
	assert_int_equal(nsr_jobdb_log_read(t->db, id, collect, &l), NSR_OK);
	assert_int_equal(l.n, 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(l.seq[i], i + 1);
		assert_int_equal(l.time[i], i < 3 ? 10 : 11);
		assert_string_equal(l.text[i], i < 3 ? three[i] : "later");
	}
	/* Time 0 is now; no lines is a plain create. */
	assert_int_equal(nsr_jobdb_create_log(t->db, &j, three, 1, 0, &id),
			 NSR_OK);
	l.n = 0;
	assert_int_equal(nsr_jobdb_log_read(t->db, id, collect, &l), NSR_OK);
	assert_int_equal(l.n, 1);
	assert_true(l.time[0] > 1000000000);
	assert_int_equal(nsr_jobdb_create_log(t->db, &j, NULL, 0, 0, &id2),
			 NSR_OK);
	assert_int_equal(id2, id + 1);
	l.n = 0;
	assert_int_equal(nsr_jobdb_log_read(t->db, id2, collect, &l), NSR_OK);
	assert_int_equal(l.n, 0);
	assert_int_equal(count(t->db), 3);

	/* Refused lines, type or parent: nothing is recorded. */
	bad[1] = huge;
	assert_int_equal(nsr_jobdb_create_log(t->db, &j, bad, 2, 0, &id),
			 NSR_ERR_TOOBIG);
	assert_int_equal(id, 0);
	bad[1] = NULL;
	assert_int_equal(nsr_jobdb_create_log(t->db, &j, bad, 2, 0, &id),
			 NSR_ERR_INVAL);
	assert_int_equal(nsr_jobdb_create_log(t->db, &j, NULL, 1, 0, &id),
			 NSR_ERR_INVAL);
	j.parent_id = 99;
	assert_int_equal(nsr_jobdb_create_log(t->db, &j, three, 3, 0, &id),
			 NSR_ERR_INVAL);
	j.parent_id = 0;
	j.type = 0;
	assert_int_equal(nsr_jobdb_create_log(t->db, &j, three, 3, 0, &id),
			 NSR_ERR_INVAL);
	j.type = NSR_JOBDB_TYPE_SAVE;
	assert_int_equal(count(t->db), 3);

	/* A line the database refuses after the job and a first line went
	 * in: the whole transaction is rolled back, and the id is not
	 * used up. */
	raw_exec(t->path, "CREATE TRIGGER boom BEFORE INSERT ON job_log "
			  "WHEN NEW.line='boom' BEGIN "
			  "SELECT RAISE(ABORT, 'boom'); END");
	bad[1] = "boom";
	assert_int_equal(nsr_jobdb_create_log(t->db, &j, bad, 2, 0, &id),
			 NSR_ERR_INVAL);
	assert_int_equal(id, 0);
	assert_int_equal(count(t->db), 3);
	assert_int_equal(jt_exists(t->db, id2 + 1), 0);
	raw_exec(t->path, "DROP TRIGGER boom");
	assert_int_equal(nsr_jobdb_create_log(t->db, &j, bad, 1, 0, &id),
			 NSR_OK);
	assert_int_equal(id, id2 + 1);
	free(huge);
}

/* test_create_many - several jobs with their lines in one transaction:
 * ids in order, each job's own lines; one refused job (bad type, a line
 * the database refuses) and none is recorded, no id used up. */
static void test_create_many(void **state)
{
	static const char *const la[] = {"saving a:/ to volume V on d"};
	static const char *const lb[] = {"saving b:/ to volume V on d",
					 "level: incr promoted to full"};
	struct jt *t = *state;
	struct nsr_jobdb_job a = {0}, b = {0}, bad = {0}, out;
	struct nsr_jobdb_new v[3];
	struct lines l = {0};
	int64_t ids[3] = {7, 7, 7};

	a.type = b.type = NSR_JOBDB_TYPE_SAVE;
	a.client = "a";
	b.client = "b";
	a.state = b.state = NSR_JOBDB_ACTIVE;
	v[0] = (struct nsr_jobdb_new){&a, la, 1, 20};
	v[1] = (struct nsr_jobdb_new){&b, lb, 2, 21};
	v[2] = (struct nsr_jobdb_new){&a, NULL, 0, 0};
	assert_int_equal(nsr_jobdb_create_many(t->db, v, 3, ids), NSR_OK);
	assert_int_equal(ids[0], 1);
	assert_int_equal(ids[1], 2);
	assert_int_equal(ids[2], 3);
	assert_int_equal(nsr_jobdb_get(t->db, 2, &out), NSR_OK);
	assert_string_equal(out.client, "b");
	nsr_jobdb_job_release(&out);
	assert_int_equal(nsr_jobdb_log_read(t->db, 2, collect, &l), NSR_OK);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.text[1], lb[1]);
	assert_int_equal(l.time[0], 21);
	l.n = 0;
	assert_int_equal(nsr_jobdb_log_read(t->db, 1, collect, &l), NSR_OK);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.text[0], la[0]);
	l.n = 0;
	assert_int_equal(nsr_jobdb_log_read(t->db, 3, collect, &l), NSR_OK);
	assert_int_equal(l.n, 0);
	assert_int_equal(count(t->db), 3);

	/* The last one is refused: nothing of the three is recorded. */
	bad = a;
	bad.type = 0;
	v[2].job = &bad;
	assert_int_equal(nsr_jobdb_create_many(t->db, v, 3, ids),
			 NSR_ERR_INVAL);
	assert_int_equal(ids[0] | ids[1] | ids[2], 0);
	assert_int_equal(count(t->db), 3);
	/* A line the database refuses in the second: rolled back whole,
	 * and the next ids follow the first three. */
	raw_exec(t->path, "CREATE TRIGGER boom BEFORE INSERT ON job_log "
			  "WHEN NEW.line LIKE '%promoted%' BEGIN "
			  "SELECT RAISE(ABORT, 'boom'); END");
	v[2].job = &a;
	assert_int_not_equal(nsr_jobdb_create_many(t->db, v, 3, ids), NSR_OK);
	assert_int_equal(ids[0] | ids[1] | ids[2], 0);
	assert_int_equal(count(t->db), 3);
	raw_exec(t->path, "DROP TRIGGER boom");
	assert_int_equal(nsr_jobdb_create_many(t->db, v, 2, ids), NSR_OK);
	assert_int_equal(ids[0], 4);
	assert_int_equal(ids[1], 5);
	/* None is fine. */
	assert_int_equal(nsr_jobdb_create_many(t->db, v, 0, ids), NSR_OK);
	assert_int_equal(count(t->db), 5);
}

static void test_check_finds_broken_invariants(void **state)
{
	static const char *const breakage[] = {
		"INSERT INTO job_log VALUES(999, 1, 1, 'orphan')",
		"UPDATE jobs SET finished=0 WHERE id=1",
		"UPDATE jobs SET end_time=0 WHERE id=1",
		"UPDATE jobs SET parent_id=5 WHERE id=2",
		"UPDATE jobs SET nlog=7 WHERE id=1",
		"UPDATE meta SET value=2 WHERE key='schema'",
	};
	struct jt *t = *state;

	for (size_t i = 0; i < NSR_ARRAY_SIZE(breakage); i++) {
		int64_t a, b;

		nsr_jobdb_close(t->db);
		t->db = NULL;
		remove(t->path);
		jt_open(t, NULL);
		a = jt_add(t->db, NSR_JOBDB_TYPE_SAVEGRP, "c", "g", 3, 1, 9, 0);
		b = jt_add(t->db, NSR_JOBDB_TYPE_SAVE, "c", "/", 3, 2, 8, a);
		assert_int_equal(nsr_jobdb_log_append(t->db, a, 1, "x"),
				 NSR_OK);
		assert_int_equal(b, 2);
		assert_int_equal(nsr_jobdb_check(t->db), NSR_OK);
		raw_exec(t->path, breakage[i]);
		if (i == NSR_ARRAY_SIZE(breakage) - 1) {
			/* A newer schema version is refused at open. */
			struct nsr_jobdb *db = NULL;

			assert_int_equal(nsr_jobdb_open(t->path, NULL, &db),
					 NSR_ERR_UNSUPPORTED);
			raw_exec(t->path,
				 "UPDATE meta SET value=1 WHERE key='schema'");
			continue;
		}
		assert_int_equal(nsr_jobdb_check(t->db), NSR_ERR_CORRUPT);
		raw_exec(t->path, "DELETE FROM job_log; DELETE FROM jobs;"
				  " UPDATE jobs SET nlog=0");
	}
}

static void test_names(void **state)
{
	NSR_UNUSED(state);
	assert_string_equal(nsr_jobdb_type_name(NSR_JOBDB_TYPE_INDEX_SAVE),
			    "index save job");
	assert_null(nsr_jobdb_type_name(0));
	assert_null(nsr_jobdb_type_name(8));
	assert_int_equal(nsr_jobdb_type_parse("Bootstrap Save Job"),
			 NSR_JOBDB_TYPE_BOOTSTRAP_SAVE);
	assert_int_equal(nsr_jobdb_type_parse("save"), 0);
	assert_string_equal(nsr_jobdb_state_name(NSR_JOBDB_ABORTED), "ABORTED");
	assert_int_equal(nsr_jobdb_state_parse("completed"),
			 NSR_JOBDB_COMPLETED);
	assert_int_equal(nsr_jobdb_state_parse("done"), 0);
	assert_null(nsr_jobdb_state_name(6));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, jt_setup, jt_teardown)
		T(test_create_get_roundtrip),
		T(test_create_defaults_and_invalid),
		T(test_update_mask),
		T(test_log_lines),
		T(test_create_log),
		T(test_create_many),
		T(test_recover_marks_unfinished),
		T(test_reopen_persists_and_ids_grow),
		T(test_open_rejects_garbage),
		T(test_check_finds_broken_invariants),
		T(test_names),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
