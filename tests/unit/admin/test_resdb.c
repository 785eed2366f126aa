/*
 * test_resdb.c - the resource database directory: create, update, delete,
 * reload, validation, strict loading of damaged files, seeding; lookups
 * by type and name from the index agree with the scan.
 */
#include "nsr/compat.h"

#include <dirent.h>
#include <sys/stat.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/res.h"
#include "nsr/resdb.h"
#include "nsr/xmalloc.h"
#include "nsr_test.h"

/* parse_one - attribute list text to a resource. */
static struct nsr_res *parse_one(const char *text)
{
	struct nsr_res *r = NULL;

	assert_int_equal(nsr_res_parse_attrs(text, &r, NULL), NSR_OK);
	return r;
}

/* create_text - create a resource from text; returns rc, *id malloc'ed. */
static int create_text(struct nsr_resdb *db, const char *text, char **id,
		       struct nsr_buf *why)
{
	struct nsr_res *r = parse_one(text);
	int rc = nsr_resdb_create(db, r, id, why);

	nsr_res_free(r);
	return rc;
}

/* count_files - regular entries in dir not starting with '.'. */
static int count_files(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	assert_non_null(d);
	for (de = readdir(d); de; de = readdir(d))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* open_db - open dir (creating it), failing the test on error. */
static struct nsr_resdb *open_db(const char *dir)
{
	struct nsr_resdb_opts o;
	struct nsr_res_error err;
	struct nsr_resdb *db = NULL;

	memset(&o, 0, sizeof(o));
	o.create = 1;
	if (nsr_resdb_open(dir, &o, &db, &err) != NSR_OK)
		fail_msg("open %s: %s:%u: %s", dir, err.file, err.line,
			 err.msg);
	return db;
}

static void test_create_reload(void **state)
{
	char *tmp = nsr_test_tmpdir("resdb");
	char *dir = nsr_xcheck(nsr_path_join(tmp, "nsrdb"));
	struct nsr_resdb *db;
	struct nsr_buf why;
	char *id1 = NULL, *id2 = NULL;
	const struct nsr_res *r;
	struct nsr_res *q;

	NSR_UNUSED(state);
	nsr_buf_init(&why, 0);
	db = open_db(dir);
	assert_int_equal(nsr_resdb_count(db), 0);
	assert_int_equal(create_text(db, "type: NSR client; name: web01; "
				     "save set: /var, /etc", &id1, &why),
			 NSR_OK);
	assert_int_equal(create_text(db, "type: NSR device; name: /aftd1; "
				     "media type: adv_file", &id2, &why),
			 NSR_OK);
	assert_string_not_equal(id1, id2);
	assert_int_equal(count_files(dir), 2);
	r = nsr_resdb_get(db, id1);
	assert_non_null(r);
	assert_string_equal(nsr_res_id(r), id1);
	assert_string_equal(nsr_res_get(r, "parallelism"), "4");
	nsr_resdb_close(db);

	/* Everything, including defaults and ids, comes back from disk. */
	db = open_db(dir);
	assert_int_equal(nsr_resdb_count(db), 2);
	assert_string_equal(nsr_res_id(nsr_resdb_at(db, 0)), id1);
	r = nsr_resdb_get(db, id2);
	assert_non_null(r);
	assert_string_equal(nsr_res_get(r, "target sessions"), "4");
	assert_string_equal(nsr_res_get(r, "max sessions"), "32");
	assert_string_equal(nsr_res_get(r, "device block size"),
			    "handler default");
	r = nsr_resdb_get(db, id1);
	assert_int_equal(nsr_res_attr_nvalues(r, (size_t)nsr_res_find(r,
				"save set")), 2);
	q = parse_one("type: NSR device");
	assert_int_equal(nsr_resdb_find(db, q, 0), 1);
	assert_int_equal(nsr_resdb_find(db, q, 2), -1);
	nsr_res_free(q);

	/* Ids keep growing after a reload. */
	free(id1);
	assert_int_equal(create_text(db, "type: NSR client; name: web02",
				     &id1, &why), NSR_OK);
	assert_true(strtoul(id1, NULL, 10) > strtoul(id2, NULL, 10));
	nsr_resdb_close(db);
	free(id1);
	free(id2);
	nsr_buf_release(&why);
	nsr_test_rmrf(tmp);
	free(dir);
	free(tmp);
}

static void test_validation(void **state)
{
	char *tmp = nsr_test_tmpdir("resdb");
	struct nsr_resdb *db = open_db(tmp);
	struct nsr_buf why;
	char *id = NULL;

	NSR_UNUSED(state);
	nsr_buf_init(&why, 0);
	assert_int_equal(create_text(db, "type: NSR pool; name: Fast", &id,
				     &why), NSR_OK);
	free(id);
	nsr_buf_reset(&why);
	assert_int_equal(create_text(db, "type: NSR pool; name: fast", &id,
				     &why), NSR_ERR_EXISTS);
	assert_null(id);
	assert_non_null(strstr(why.data, "already exists"));
	/* Client names need not be unique. */
	assert_int_equal(create_text(db, "type: NSR client; name: a", NULL,
				     &why), NSR_OK);
	assert_int_equal(create_text(db, "type: NSR client; name: a; "
				     "save set: /x", NULL, &why), NSR_OK);
	assert_int_equal(create_text(db, "type: NSR; name: s1", NULL, &why),
			 NSR_OK);
	nsr_buf_reset(&why);
	assert_int_equal(create_text(db, "type: NSR; name: s2", NULL, &why),
			 NSR_ERR_EXISTS);
	assert_non_null(strstr(why.data, "only one"));
	nsr_buf_reset(&why);
	assert_int_equal(create_text(db, "type: NSR toaster; name: t", NULL,
				     &why), NSR_ERR_INVAL);
	assert_non_null(strstr(why.data, "unknown resource type"));
	nsr_buf_reset(&why);
	assert_int_equal(create_text(db, "type: NSR device; name: d; "
				     "media type: adv_file; max sessions: "
				     "lots", NULL, &why), NSR_ERR_INVAL);
	assert_non_null(strstr(why.data, "max sessions"));
	assert_int_equal(nsr_resdb_count(db), 4);
	assert_int_equal(count_files(tmp), 4);
	nsr_resdb_close(db);
	nsr_buf_release(&why);
	nsr_test_rmrf(tmp);
	free(tmp);
}

static void test_update_delete(void **state)
{
	char *tmp = nsr_test_tmpdir("resdb");
	struct nsr_resdb *db = open_db(tmp);
	struct nsr_buf why;
	char *id = NULL, *other = NULL;
	struct nsr_res *r;

	NSR_UNUSED(state);
	nsr_buf_init(&why, 0);
	assert_int_equal(create_text(db, "type: NSR device; name: /aftd1; "
				     "media type: adv_file", &id, &why),
			 NSR_OK);
	assert_int_equal(create_text(db, "type: NSR device; name: /aftd2; "
				     "media type: adv_file", &other, &why),
			 NSR_OK);
	r = nsr_res_dup(nsr_resdb_get(db, id));
	assert_int_equal(nsr_res_set1(r, "target sessions", "8"), NSR_OK);
	assert_int_equal(nsr_resdb_update(db, id, r, &why), NSR_OK);
	assert_string_equal(nsr_res_get(nsr_resdb_get(db, id),
					"target sessions"), "8");
	/* The media type is fixed at creation. */
	assert_int_equal(nsr_res_set1(r, "media type", "tape"), NSR_OK);
	nsr_buf_reset(&why);
	assert_int_equal(nsr_resdb_update(db, id, r, &why), NSR_ERR_READONLY);
	assert_non_null(strstr(why.data, "media type"));
	assert_int_equal(nsr_res_set1(r, "media type", "adv_file"), NSR_OK);
	/* Renaming onto another device's name is refused. */
	assert_int_equal(nsr_res_set1(r, "name", "/aftd2"), NSR_OK);
	assert_int_equal(nsr_resdb_update(db, id, r, &why), NSR_ERR_EXISTS);
	assert_int_equal(nsr_res_set1(r, "type", "NSR pool"), NSR_OK);
	assert_int_equal(nsr_resdb_update(db, id, r, &why), NSR_ERR_READONLY);
	nsr_res_free(r);
	/* Removing an attribute gives it its default back. */
	r = parse_one("type: NSR device; name: /aftd1; media type: adv_file");
	assert_int_equal(nsr_resdb_update(db, id, r, &why), NSR_OK);
	assert_string_equal(nsr_res_get(nsr_resdb_get(db, id),
					"target sessions"), "4");
	nsr_res_free(r);
	r = parse_one("type: NSR pool; name: x");
	assert_int_equal(nsr_resdb_update(db, "9.0.0.0.0.0.0.0.0.0.0.0", r,
					  &why), NSR_ERR_NOTFOUND);
	nsr_res_free(r);
	nsr_resdb_close(db);

	db = open_db(tmp);
	assert_string_equal(nsr_res_get(nsr_resdb_get(db, id), "name"),
			    "/aftd1");
	assert_int_equal(nsr_resdb_delete(db, id, &why), NSR_OK);
	assert_null(nsr_resdb_get(db, id));
	assert_int_equal(nsr_resdb_delete(db, id, &why), NSR_ERR_NOTFOUND);
	assert_int_equal(count_files(tmp), 1);
	nsr_resdb_close(db);
	db = open_db(tmp);
	assert_int_equal(nsr_resdb_count(db), 1);
	assert_string_equal(nsr_res_id(nsr_resdb_at(db, 0)), other);
	nsr_resdb_close(db);
	free(id);
	free(other);
	nsr_buf_release(&why);
	nsr_test_rmrf(tmp);
	free(tmp);
}

/* find_scan - what nsr_resdb_lookup must give: the scan of a query. */
static const struct nsr_res *find_scan(struct nsr_resdb *db, const char *type,
				       const char *name)
{
	struct nsr_res *q = nsr_res_new();
	long i;

	assert_int_equal(nsr_res_set1(q, "type", type), NSR_OK);
	if (name)
		assert_int_equal(nsr_res_set1(q, "name", name), NSR_OK);
	i = nsr_resdb_find(db, q, 0);
	nsr_res_free(q);
	return i < 0 ? NULL : nsr_resdb_at(db, (size_t)i);
}

/* types_agree - nsr_resdb_next_of_type walks each type as the scan
 * does, also from an index of another type. */
static void types_agree(struct nsr_resdb *db, const char *type)
{
	struct nsr_res *q = nsr_res_new();
	long i, j = -1;

	assert_int_equal(nsr_res_set1(q, "type", type), NSR_OK);
	for (i = nsr_resdb_find(db, q, 0); i >= 0;
	     i = nsr_resdb_find(db, q, (size_t)i + 1)) {
		j = nsr_resdb_next_of_type(db, type, j);
		assert_int_equal(j, i);
	}
	assert_int_equal(nsr_resdb_next_of_type(db, type, j), -1);
	for (size_t k = 0; k < nsr_resdb_count(db); k += 7) /* any start */
		assert_int_equal(nsr_resdb_next_of_type(db, type, (long)k),
				 nsr_resdb_find(db, q, k + 1));
	nsr_res_free(q);
}

/* lookups_agree - every lookup of the types (spelled as users may) and
 * names c0..c29 (and none) gives what the scan gives; so does every walk
 * of a type. */
static void lookups_agree(struct nsr_resdb *db)
{
	static const char *types[] = {"NSR client", "nsr  CLIENT ",
				      " nsr pool", "NSR policy", "NSR bogus"};
	char name[16];

	for (size_t t = 0; t < NSR_ARRAY_SIZE(types); t++) {
		types_agree(db, types[t]);
		assert_ptr_equal(nsr_resdb_lookup(db, types[t], NULL),
				 find_scan(db, types[t], NULL));
		for (int i = 0; i < 30; i++) {
			snprintf(name, sizeof(name), "c%d", i);
			assert_ptr_equal(nsr_resdb_lookup(db, types[t], name),
					 find_scan(db, types[t], name));
		}
	}
}

/* test_lookup - nsr_resdb_lookup and nsr_resdb_next_of_type (an index)
 * find what the scan finds, through 300 random creates, renames and
 * deletes of clients and pools (pools and clients share names), when no
 * index can be made, and after a reload. */
static void test_lookup(void **state)
{
	char *tmp = nsr_test_tmpdir("resdb");
	struct nsr_resdb *db = open_db(tmp);
	unsigned seed = 7;
	char text[128];
	int found = 0;

	NSR_UNUSED(state);
	lookups_agree(db); /* the defaults only */
	for (int op = 0; op < 300; op++) {
		const char *type = (seed = seed * 1103515245u + 12345u) & 1
					   ? "NSR client"
					   : "NSR pool";
		int k = (int)((seed >> 8) % 30), what = (int)((seed >> 16) % 4);
		size_t n = nsr_resdb_count(db);
		const struct nsr_res *r = n ? nsr_resdb_at(db, (seed >> 4) % n)
					    : NULL;

		if (what < 2 || !r) {
			snprintf(text, sizeof(text), "type: %s; name: c%d",
				 type, k);
			(void)create_text(db, text, NULL, NULL);
		} else if (what == 2) {
			struct nsr_res *c = nsr_res_dup(r);

			snprintf(text, sizeof(text), "c%d", k);
			assert_int_equal(nsr_res_set1(c, "name", text),
					 NSR_OK);
			(void)nsr_resdb_update(db, nsr_res_id(r), c, NULL);
			nsr_res_free(c);
		} else {
			char *id = nsr_xstrdup(nsr_res_id(r));

			(void)nsr_resdb_delete(db, id, NULL);
			free(id);
		}
		lookups_agree(db);
	}
	for (int i = 0; i < 30; i++) {
		snprintf(text, sizeof(text), "c%d", i);
		found += nsr_resdb_lookup(db, "NSR client", text) != NULL;
	}
	assert_true(found > 0 && found < 30); /* both answers were asked */
	/* Without an index (no memory for it), the same answers by scans. */
	setenv("NSR_TEST_RESDB_NO_INDEX", "1", 1);
	(void)create_text(db, "type: NSR client; name: c1", NULL, NULL);
	lookups_agree(db);
	unsetenv("NSR_TEST_RESDB_NO_INDEX");
	lookups_agree(db);
	nsr_resdb_close(db);
	db = open_db(tmp);
	lookups_agree(db);
	nsr_resdb_close(db);
	nsr_test_rmrf(tmp);
	free(tmp);
}

/* veto - refuse to delete the Default group. */
static int veto(void *arg, enum nsr_resdb_op op, const struct nsr_res *old,
		const struct nsr_res *nr, struct nsr_buf *why)
{
	int *calls = arg;

	(*calls)++;
	NSR_UNUSED(nr);
	if (op == NSR_RESDB_DELETE &&
	    nsr_res_name_eq(nsr_res_type(old), "NSR group") &&
	    strcmp(nsr_res_get(old, "name"), "Default") == 0) {
		nsr_buf_addstr(why, "the Default group cannot be deleted");
		return NSR_ERR_PERM;
	}
	return NSR_OK;
}

static void test_hook_and_seed(void **state)
{
	char *tmp = nsr_test_tmpdir("resdb");
	struct nsr_resdb_opts o;
	struct nsr_resdb *db = NULL;
	struct nsr_buf why;
	struct nsr_res *q;
	long i;
	size_t n;
	int calls = 0;

	NSR_UNUSED(state);
	nsr_buf_init(&why, 0);
	memset(&o, 0, sizeof(o));
	o.hook = veto;
	o.hook_arg = &calls;
	assert_int_equal(nsr_resdb_open(tmp, &o, &db, NULL), NSR_OK);
	assert_int_equal(nsr_resdb_seed(db, "bksrv", &why), NSR_OK);
	n = nsr_resdb_count(db);
	assert_int_equal(n, 16);
	assert_int_equal(calls, 16);
	assert_int_equal(nsr_resdb_seed(db, "bksrv", &why), NSR_OK);
	assert_int_equal(nsr_resdb_count(db), n);

	q = parse_one("type: NSR label; name: Default");
	i = nsr_resdb_find(db, q, 0);
	assert_true(i >= 0);
	assert_string_equal(nsr_res_get(nsr_resdb_at(db, (size_t)i), "fields"),
			    "bksrv");
	nsr_res_free(q);
	q = parse_one("type: NSR group; name: Default");
	i = nsr_resdb_find(db, q, 0);
	assert_true(i >= 0);
	nsr_res_free(q);
	assert_int_equal(nsr_resdb_delete(db, nsr_res_id(nsr_resdb_at(db,
					(size_t)i)), &why), NSR_ERR_PERM);
	assert_non_null(strstr(why.data, "cannot be deleted"));
	assert_int_equal(nsr_resdb_count(db), n);
	nsr_resdb_close(db);
	nsr_buf_release(&why);
	nsr_test_rmrf(tmp);
	free(tmp);
}

/* find_id - the id of the first resource matching query text. */
static const char *find_id(struct nsr_resdb *db, const char *text)
{
	struct nsr_res *q = parse_one(text);
	long i = nsr_resdb_find(db, q, 0);

	nsr_res_free(q);
	assert_true(i >= 0);
	return nsr_res_id(nsr_resdb_at(db, (size_t)i));
}

/* expect_why - rc is want and why says what. */
static void expect_why(int rc, int want, struct nsr_buf *why,
		       const char *what)
{
	assert_int_equal(rc, want);
	if (!why->data || !strstr(why->data, what))
		fail_msg("'%s' lacks '%s'", why->data ? why->data : "",
			 what);
	nsr_buf_reset(why);
}

/* open_refs - a seeded database under tmp that checks references. */
static struct nsr_resdb *open_refs(const char *tmp)
{
	struct nsr_resdb_opts o;
	struct nsr_resdb *db = NULL;

	memset(&o, 0, sizeof(o));
	o.refs = 1;
	assert_int_equal(nsr_resdb_open(tmp, &o, &db, NULL), NSR_OK);
	assert_int_equal(nsr_resdb_seed(db, "bksrv", NULL), NSR_OK);
	return db;
}

/* test_refs - with opts.refs: references must exist; a resource in use
 * cannot be deleted or renamed; parallelism out of range is refused. */
static void test_refs(void **state)
{
	char *tmp = nsr_test_tmpdir("resdb");
	struct nsr_resdb *db = open_refs(tmp);
	struct nsr_res *chg;
	struct nsr_buf why;

	NSR_UNUSED(state);
	nsr_buf_init(&why, 0);
	expect_why(create_text(db, "type: NSR client; name: web01; "
			       "group: Nightly", NULL, &why),
		   NSR_ERR_NOTFOUND, &why,
		   "NSR client web01: group 'Nightly' does not exist");
	expect_why(create_text(db, "type: NSR client; name: web01; "
			       "schedule: Never", NULL, &why),
		   NSR_ERR_NOTFOUND, &why, "schedule 'Never' does not exist");
	expect_why(create_text(db, "type: NSR client; name: web01; "
			       "pool: Tapes", NULL, &why),
		   NSR_ERR_NOTFOUND, &why, "pool 'Tapes' does not exist");
	expect_why(create_text(db, "type: NSR client; name: web01; "
			       "retention policy: Ages", NULL, &why),
		   NSR_ERR_NOTFOUND, &why,
		   "retention policy 'Ages' does not exist");
	expect_why(create_text(db, "type: NSR client; name: web01; "
			       "parallelism: 0", NULL, &why),
		   NSR_ERR_INVAL, &why, "a number from 1 to 1024");
	assert_int_equal(create_text(db, "type: NSR group; name: Nightly; "
				     "savegrp parallelism: 3", NULL, &why),
			 NSR_OK);
	assert_int_equal(create_text(db, "type: NSR pool; name: Tapes; "
				     "groups: Nightly", NULL, &why), NSR_OK);
	assert_int_equal(create_text(db, "type: NSR client; name: web01; "
				     "group: Default, Nightly; pool: Tapes",
				     NULL, &why), NSR_OK);
	/* In use: not deleted, not renamed; the users are named. */
	expect_why(nsr_resdb_delete(db, find_id(db, "type: NSR group; name: "
						"Nightly"), &why),
		   NSR_ERR_BUSY, &why, "NSR group 'Nightly' is in use by NSR "
		   "pool Tapes (groups), NSR client web01 (group); change "
		   "those first");
	chg = parse_one("type: NSR group; name: Weekly");
	expect_why(nsr_resdb_update(db, find_id(db, "type: NSR group; name: "
						"Nightly"), chg, &why),
		   NSR_ERR_BUSY, &why, "in use by");
	nsr_res_free(chg);
	expect_why(nsr_resdb_delete(db, find_id(db, "type: NSR policy; name: "
						"Year"), &why),
		   NSR_ERR_BUSY, &why, "NSR client web01 (retention policy)");
	/* Once nothing names it, it goes. */
	assert_int_equal(nsr_resdb_delete(db, find_id(db, "type: NSR client; "
						      "name: web01"), &why),
			 NSR_OK);
	assert_int_equal(nsr_resdb_delete(db, find_id(db, "type: NSR pool; "
						      "name: Tapes"), &why),
			 NSR_OK);
	assert_int_equal(nsr_resdb_delete(db, find_id(db, "type: NSR group; "
						      "name: Nightly"), &why),
			 NSR_OK);
	/* The server's parallelism: 1 .. 1024. */
	chg = parse_one("type: NSR; name: bksrv; parallelism: 5000");
	expect_why(nsr_resdb_update(db, find_id(db, "type: NSR"), chg, &why),
		   NSR_ERR_INVAL, &why, "'5000' is not a valid value for "
		   "'parallelism' (a number from 1 to 1024)");
	nsr_res_free(chg);
	nsr_resdb_close(db);
	nsr_buf_release(&why);
	nsr_test_rmrf(tmp);
	free(tmp);
}

/* test_pool_criteria - two enabled Backup pools that could both claim a
 * save (the same criteria set, a value in common each) are refused,
 * naming the other pool; different criteria sets, no common value, a
 * disabled or non-Backup pool, and a pool's own update are not. */
static void test_pool_criteria(void **state)
{
	char *tmp = nsr_test_tmpdir("resdb");
	struct nsr_resdb *db = open_refs(tmp);
	struct nsr_res *chg;
	struct nsr_buf why;

	NSR_UNUSED(state);
	nsr_buf_init(&why, 0);
	assert_int_equal(create_text(db, "type: NSR group; name: Nightly",
				     NULL, &why), NSR_OK);
	assert_int_equal(create_text(db, "type: NSR group; name: Weekly",
				     NULL, &why), NSR_OK);
	assert_int_equal(create_text(db, "type: NSR pool; name: A; groups: "
				     "Nightly; levels: full", NULL, &why),
			 NSR_OK);
	/* the same claim, values in another order and case */
	expect_why(create_text(db, "type: NSR pool; name: B; groups: Weekly, "
			       "Nightly; levels: incr, FULL", NULL, &why),
		   NSR_ERR_EXISTS, &why, "NSR pool B: its selection criteria "
		   "(groups Nightly; levels FULL) claim the same saves as "
		   "those of pool A");
	/* a criterion more or less ranks differently: allowed */
	assert_int_equal(create_text(db, "type: NSR pool; name: C; groups: "
				     "Nightly", NULL, &why), NSR_OK);
	assert_int_equal(create_text(db, "type: NSR pool; name: D; groups: "
				     "Nightly; levels: full; clients: web01",
				     NULL, &why), NSR_OK);
	/* no value in common: allowed */
	assert_int_equal(create_text(db, "type: NSR pool; name: E; groups: "
				     "Weekly; levels: full", NULL, &why),
			 NSR_OK);
	/* save set patterns: one matching the other's value collides */
	assert_int_equal(create_text(db, "type: NSR pool; name: F; "
				     "save sets: /data*", NULL, &why), NSR_OK);
	expect_why(create_text(db, "type: NSR pool; name: G; save sets: "
			       "/home, /data/db", NULL, &why),
		   NSR_ERR_EXISTS, &why, "those of pool F");
	assert_int_equal(create_text(db, "type: NSR pool; name: G; save sets: "
				     "/home", NULL, &why), NSR_OK);
	/* two patterns that one name matches ("/data/x.log") collide;
	 * patterns no name matches both of do not */
	expect_why(create_text(db, "type: NSR pool; name: J; save sets: "
			       "*.log", NULL, &why),
		   NSR_ERR_EXISTS, &why, "those of pool F");
	assert_int_equal(create_text(db, "type: NSR pool; name: J; save sets: "
				     "/srv/[a-m]*", NULL, &why), NSR_OK);
	assert_int_equal(create_text(db, "type: NSR pool; name: K; save sets: "
				     "/srv/[n-z]*, /opt/*.log", NULL, &why),
			 NSR_OK);
	/* disabled or not a Backup pool: not in selection */
	assert_int_equal(create_text(db, "type: NSR pool; name: H; groups: "
				     "Nightly; enabled: No", NULL, &why),
			 NSR_OK);
	assert_int_equal(create_text(db, "type: NSR pool; name: I; groups: "
				     "Nightly; pool type: Backup Clone", NULL,
				     &why), NSR_OK);
	/* enabling H collides with C; C's own update does not */
	chg = parse_one("type: NSR pool; name: H; groups: Nightly; "
			"enabled: Yes");
	expect_why(nsr_resdb_update(db, find_id(db, "type: NSR pool; name: H"),
				    chg, &why),
		   NSR_ERR_EXISTS, &why, "those of pool C");
	nsr_res_free(chg);
	chg = parse_one("type: NSR pool; name: C; groups: Nightly, Weekly");
	assert_int_equal(nsr_resdb_update(db, find_id(db, "type: NSR pool; "
						      "name: C"), chg, &why),
			 NSR_OK);
	nsr_res_free(chg);
	/* an update into another's claim is refused as well */
	chg = parse_one("type: NSR pool; name: E; groups: Nightly; "
			"levels: full");
	expect_why(nsr_resdb_update(db, find_id(db, "type: NSR pool; name: E"),
				    chg, &why),
		   NSR_ERR_EXISTS, &why, "those of pool A");
	nsr_res_free(chg);
	nsr_resdb_close(db);
	nsr_buf_release(&why);
	nsr_test_rmrf(tmp);
	free(tmp);
}

/* expect_load_error - a damaged file must stop the open with its name. */
static void expect_load_error(const char *name, const char *content,
			      const char *what, unsigned line)
{
	char *tmp = nsr_test_tmpdir("resdb");
	char *path = nsr_xcheck(nsr_path_join(tmp, name));
	struct nsr_resdb *db = NULL;
	struct nsr_res_error err;

	assert_int_equal(nsr_file_replace(path, content, strlen(content),
					  0600), NSR_OK);
	assert_true(nsr_resdb_open(tmp, NULL, &db, &err) < 0);
	assert_null(db);
	assert_string_equal(err.file, path);
	assert_int_equal(err.line, line);
	if (!strstr(err.msg, what))
		fail_msg("%s: '%s' lacks '%s'", name, err.msg, what);
	nsr_test_rmrf(tmp);
	free(path);
	free(tmp);
}

static void test_strict_load(void **state)
{
	NSR_UNUSED(state);
	expect_load_error("3.0.0.0.0.0.0.0.0.0.0.0",
			  "type: NSR pool;\nname: \"broken\n",
			  "unterminated", 2);
	expect_load_error("3.0.0.0.0.0.0.0.0.0.0.0",
			  "type: NSR pool; resource identifier: "
			  "4.0.0.0.0.0.0.0.0.0.0.0\n", "does not match", 0);
	expect_load_error("3.0.0.0.0.0.0.0.0.0.0.0",
			  "type: NSR pool; resource identifier: "
			  "3.0.0.0.0.0.0.0.0.0.0.0\n\ntype: NSR pool\n",
			  "more than one", 0);
	expect_load_error("3.0.0.0.0.0.0.0.0.0.0.0", "# empty\n",
			  "no resource", 0);
	expect_load_error("notes.txt", "type: NSR pool\n", "not a resource id",
			  0);
}

static void test_crash_leftovers(void **state)
{
	char *tmp = nsr_test_tmpdir("resdb");
	char *junk = nsr_xcheck(
		nsr_path_join(tmp, "5.0.1.2.3.4.0.0.0.0.0.0.tmp.4242"));
	struct nsr_resdb *db;
	char *id = NULL;

	NSR_UNUSED(state);
	db = open_db(tmp);
	assert_int_equal(create_text(db, "type: NSR pool; name: P", &id, NULL),
			 NSR_OK);
	nsr_resdb_close(db);
	/* A write that died before its rename: half a resource. */
	assert_int_equal(nsr_file_replace(junk, "type: NSR po", 12, 0600),
			 NSR_OK);
	assert_int_equal(count_files(tmp), 2);
	db = open_db(tmp);
	assert_int_equal(nsr_resdb_count(db), 1);
	assert_string_equal(nsr_res_id(nsr_resdb_at(db, 0)), id);
	assert_int_equal(count_files(tmp), 1);
	nsr_resdb_close(db);
	/* Anything else unexpected still stops the open. */
	free(junk);
	junk = nsr_xcheck(nsr_path_join(tmp, "5.0.1.2.3.4.0.0.0.0.0.0.tmp.x"));
	assert_int_equal(nsr_file_replace(junk, "x", 1, 0600), NSR_OK);
	db = NULL;
	assert_int_equal(nsr_resdb_open(tmp, NULL, &db, NULL), NSR_ERR_CORRUPT);
	assert_null(db);
	free(id);
	free(junk);
	nsr_test_rmrf(tmp);
	free(tmp);
}

static void test_lock_and_readonly(void **state)
{
	char *tmp = nsr_test_tmpdir("resdb");
	char *junk = nsr_xcheck(
		nsr_path_join(tmp, "9.0.0.0.0.0.0.0.0.0.0.0.tmp.77"));
	struct nsr_resdb_opts ro;
	struct nsr_res_error err;
	struct nsr_resdb *db, *other = NULL;
	struct nsr_buf why;
	char *id = NULL;

	NSR_UNUSED(state);
	nsr_buf_init(&why, 0);
	db = open_db(tmp);
	assert_int_equal(create_text(db, "type: NSR pool; name: P", &id, NULL),
			 NSR_OK);
	/* A second writer is refused while the first holds the lock. */
	assert_int_equal(nsr_resdb_open(tmp, NULL, &other, &err),
			 NSR_ERR_BUSY);
	assert_null(other);
	assert_non_null(strstr(err.msg, "in use"));
	/* A reader sees the data, leaves a live temporary alone and may not
	 * change anything. */
	assert_int_equal(nsr_file_replace(junk, "x", 1, 0600), NSR_OK);
	memset(&ro, 0, sizeof(ro));
	ro.readonly = 1;
	assert_int_equal(nsr_resdb_open(tmp, &ro, &other, &err), NSR_OK);
	assert_int_equal(nsr_resdb_count(other), 1);
	assert_int_equal(count_files(tmp), 2);
	assert_int_equal(create_text(other, "type: NSR pool; name: Q", NULL,
				     &why), NSR_ERR_READONLY);
	assert_non_null(strstr(why.data, "read-only"));
	assert_int_equal(nsr_resdb_update(other, id, nsr_resdb_at(other, 0),
					  NULL), NSR_ERR_READONLY);
	assert_int_equal(nsr_resdb_delete(other, id, NULL), NSR_ERR_READONLY);
	nsr_resdb_close(other);
	/* After the writer closes, another writer may open. */
	nsr_resdb_close(db);
	db = open_db(tmp);
	assert_int_equal(count_files(tmp), 1);
	nsr_resdb_close(db);
	free(id);
	free(junk);
	nsr_buf_release(&why);
	nsr_test_rmrf(tmp);
	free(tmp);
}

static void test_missing_dir(void **state)
{
	struct nsr_resdb *db = NULL;
	struct nsr_res_error err;

	NSR_UNUSED(state);
	assert_int_equal(nsr_resdb_open("/nonexistent/nsr/res", NULL, &db,
					&err), NSR_ERR_NOTFOUND);
	assert_null(db);
	assert_string_equal(err.file, "/nonexistent/nsr/res");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_reload),
		cmocka_unit_test(test_validation),
		cmocka_unit_test(test_update_delete),
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_hook_and_seed),
		cmocka_unit_test(test_refs),
		cmocka_unit_test(test_pool_criteria),
		cmocka_unit_test(test_strict_load),
		cmocka_unit_test(test_crash_leftovers),
		cmocka_unit_test(test_lock_and_readonly),
		cmocka_unit_test(test_missing_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
