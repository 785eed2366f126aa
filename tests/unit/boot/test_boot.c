/*
 * test_boot.c - the bootstrap's file side (src/boot): staging copies
 * res/ without the jobs database, index/ and tls/ whole; install moves a
 * staging directory into an empty root where the daemons expect each
 * part; the empty-root check names what is there; the staging directory
 * is found from a restored path; the lock keeps a second holder out; the
 * newest whole candidate is picked.
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nsr/boot.h"
#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr_test.h"

/* mkdirs - dir/rel, parents too. */
static void mkdirs(const char *dir, const char *rel)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/%s'", dir, rel);
	assert_int_equal(system(cmd), 0);
}

/* has - does dir/rel exist with exactly text? */
static int has(const char *dir, const char *rel, const char *text)
{
	char p[4096], buf[256] = "";
	FILE *f;
	size_t n;

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	f = fopen(p, "r");
	if (f == NULL)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strcmp(buf, text) == 0;
}

/* exists - does dir/rel exist? */
static int exists(const char *dir, const char *rel)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	return access(p, F_OK) == 0;
}

static void test_stage_then_install(void **state)
{
	char *old = nsr_test_tmpdir("boot-old");
	char *new = nsr_test_tmpdir("boot-new");
	struct nsr_buf err;
	char *stage = NULL, p[4096];
	uint64_t files = 0;
	int lock = -1;

	NSR_UNUSED(state);
	nsr_buf_init(&err, 0);
	mkdirs(old, "res/nsrdb");
	mkdirs(old, "index/c1/db");
	mkdirs(old, "tls");
	nsr_test_mkfile(old, "res/nsrdb/r1", "type: NSR;\n");
	nsr_test_mkfile(old, "res/nsrim.prv", "123\n");
	nsr_test_mkfile(old, "res/jobsdb", "live db");
	nsr_test_mkfile(old, "res/jobsdb-wal", "live wal");
	nsr_test_mkfile(old, "index/c1/db/rec1", "records");
	nsr_test_mkfile(old, "tls/ca.pem", "CA");
	snprintf(p, sizeof(p), "%s/index/c1/link", old);
	assert_int_equal(symlink("/etc/passwd", p), 0);

	assert_int_equal(nsr_boot_lock(old, 0, &lock, &err), NSR_OK);
	assert_int_equal(nsr_boot_prepare(old, &stage, &err), NSR_OK);
	/* what the daemons write */
	nsr_test_mkfile(stage, NSR_BOOT_MMDB, "snapshot");
	nsr_test_mkfile(stage, NSR_BOOT_JOBSDB, "jobs copy");
	assert_int_equal(nsr_boot_stage(old, stage, &files, &err), NSR_OK);
	assert_int_equal(files, 4);
	assert_true(has(stage, "res/nsrdb/r1", "type: NSR;\n"));
	assert_true(has(stage, "index/c1/db/rec1", "records"));
	assert_true(has(stage, "tls/ca.pem", "CA"));
	assert_false(exists(stage, "res/jobsdb"));
	assert_false(exists(stage, "res/jobsdb-wal"));
	assert_false(exists(stage, "index/c1/link")); /* symlinks skipped */

	/* a new root, as a fresh daemon start leaves it: tls/ there */
	mkdirs(new, "tls");
	nsr_test_mkfile(new, "tls/ca.pem", "fresh CA");
	assert_int_equal(nsr_boot_check_empty(new, &err), NSR_OK);
	assert_int_equal(nsr_boot_install(stage, new, &err), NSR_OK);
	assert_true(has(new, "mm/mmdb", "snapshot"));
	assert_true(has(new, "jobs/jobsdb", "jobs copy"));
	assert_true(has(new, "res/nsrdb/r1", "type: NSR;\n"));
	assert_true(has(new, "res/nsrim.prv", "123\n"));
	assert_true(has(new, "index/c1/db/rec1", "records"));
	assert_true(has(new, "tls/ca.pem", "CA")); /* the bootstrap's wins */

	nsr_buf_reset(&err);
	assert_int_equal(nsr_boot_check_empty(new, &err), NSR_ERR_EXISTS);
	assert_non_null(strstr(err.data, "a media database"));
	assert_non_null(strstr(err.data, "client file indexes"));

	assert_int_equal(nsr_boot_remove_tree(stage), NSR_OK);
	assert_false(exists(old, NSR_BOOT_DIR));
	assert_int_equal(nsr_boot_remove_tree(stage), NSR_OK); /* gone: ok */
	assert_true(has(old, "res/jobsdb", "live db"));
	nsr_boot_unlock(lock);
	free(stage);
	nsr_buf_release(&err);
	nsr_test_rmrf(old);
	nsr_test_rmrf(new);
	free(old);
	free(new);
}

static void test_lock_excludes(void **state)
{
	char *root = nsr_test_tmpdir("boot-lock");
	struct nsr_buf err;
	int a = -1, b = -1;

	NSR_UNUSED(state);
	nsr_buf_init(&err, 0);
	assert_int_equal(nsr_boot_lock(root, 0, &a, &err), NSR_OK);
	assert_int_equal(nsr_boot_lock(root, 400, &b, &err), NSR_ERR_BUSY);
	assert_int_equal(b, -1);
	assert_non_null(strstr(err.data, "another bootstrap"));
	nsr_boot_unlock(a);
	assert_int_equal(nsr_boot_lock(root, 0, &b, &err), NSR_OK);
	nsr_boot_unlock(b);
	nsr_buf_release(&err);
	nsr_test_rmrf(root);
	free(root);
}

static void test_stage_of(void **state)
{
	char out[64];

	NSR_UNUSED(state);
	assert_int_equal(nsr_boot_stage_of("/x/nsr/bootstrap/mmdb", out,
					   sizeof(out)), NSR_OK);
	assert_string_equal(out, "/x/nsr/bootstrap");
	assert_int_equal(nsr_boot_stage_of("/bootstrap/mmdb", out,
					   sizeof(out)), NSR_ERR_NOTFOUND);
	assert_int_equal(nsr_boot_stage_of("/x/bootstrap/index/mmdb", out,
					   sizeof(out)), NSR_ERR_NOTFOUND);
	assert_int_equal(nsr_boot_stage_of("/x/notbootstrap/mmdbx", out,
					   sizeof(out)), NSR_ERR_NOTFOUND);
	assert_int_equal(nsr_boot_stage_of("mmdb", out, sizeof(out)),
			 NSR_ERR_NOTFOUND);
	assert_int_equal(nsr_boot_stage_of("/a/very/long/path/bootstrap/mmdb",
					   out, 8), NSR_ERR_TOOBIG);
}

static void test_pick(void **state)
{
	const struct nsr_boot_cand c[] = {
		{10, 100, 1}, {11, 300, 0}, {12, 200, 1}, {13, 200, 1},
	};

	NSR_UNUSED(state);
	assert_int_equal(nsr_boot_pick(c, 4, 0), 3); /* newest whole, later */
	assert_int_equal(nsr_boot_pick(c, 4, 10), 0);
	assert_int_equal(nsr_boot_pick(c, 4, 11), -1); /* not whole */
	assert_int_equal(nsr_boot_pick(c, 4, 99), -1);
	assert_int_equal(nsr_boot_pick(c, 0, 0), -1);
	assert_int_equal(nsr_boot_pick(&c[1], 1, 0), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stage_then_install),
		cmocka_unit_test(test_lock_excludes),
		cmocka_unit_test(test_stage_of),
		cmocka_unit_test(test_pick),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
