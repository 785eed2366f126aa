/*
 * test_policy.c - the authorization rules over a resource database
 * (policy.h): the default administrators and an administrator list,
 * a client's own host by name and alias, remote access, the server's
 * programs (root on the server and on storage nodes named by devices),
 * and a policy handle's copy following changes made to the database.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/host.h"
#include "nsr/policy.h"
#include "nsr/res.h"
#include "nsr/resdb.h"
#include "nsr/xmalloc.h"
#include "nsr_test.h"

/* add - create a resource from text in db (asserted). */
static void add(struct nsr_resdb *db, const char *text, char **id)
{
	struct nsr_res *r = NULL;
	struct nsr_buf why;

	nsr_buf_init(&why, 0);
	assert_int_equal(nsr_res_parse_attrs(text, &r, NULL), NSR_OK);
	if (nsr_resdb_create(db, r, id, &why) != NSR_OK)
		fail_msg("create %s: %s", text, why.data);
	nsr_res_free(r);
	nsr_buf_release(&why);
}

/* open_db - root/res/nsrdb, created, writable. */
static struct nsr_resdb *open_db(const char *root)
{
	struct nsr_resdb_opts o;
	struct nsr_resdb *db = NULL;
	char *dir = nsr_xcheck(nsr_path_join(root, "res/nsrdb"));

	memset(&o, 0, sizeof(o));
	o.create = 1;
	assert_int_equal(nsr_resdb_open(dir, &o, &db, NULL), NSR_OK);
	free(dir);
	return db;
}

/* test_rules - every rule on one database. */
static void test_rules(void **state)
{
	char *root = nsr_test_tmpdir("policy");
	struct nsr_resdb *db = open_db(root);

	NSR_UNUSED(state);
	/* no NSR resource: root on the server and on localhost */
	assert_true(nsr_policy_is_admin(db, "srv", "root", "srv"));
	assert_true(nsr_policy_is_admin(db, "srv", "root", "localhost"));
	assert_false(nsr_policy_is_admin(db, "srv", "alice", "srv"));
	assert_false(nsr_policy_is_admin(db, "srv", "root", "cl1"));
	assert_false(nsr_policy_is_admin(db, "srv", NULL, "srv"));
	assert_true(nsr_policy_is_admin(NULL, "srv", "root", "srv"));

	add(db, "type: NSR; name: srv; administrator: alice@*, "
		"root@adm*", NULL);
	assert_true(nsr_policy_is_admin(db, "srv", "alice", "cl9"));
	assert_true(nsr_policy_is_admin(db, "srv", "root", "adm1"));
	assert_false(nsr_policy_is_admin(db, "srv", "root", "srv"));
	assert_false(nsr_policy_is_admin(db, "srv", "root", "localhost"));

	add(db, "type: NSR client; name: cb; aliases: cb-backup, "
		"cb.example.com; remote access: root@ca, *@ops*", NULL);
	assert_true(nsr_policy_own_client(db, "cb", "cb"));
	assert_true(nsr_policy_own_client(db, "cb", "CB.example.com"));
	assert_true(nsr_policy_own_client(db, "cb", "cb-backup"));
	assert_false(nsr_policy_own_client(db, "cb", "ca"));
	/* a client without a resource: its name alone */
	assert_true(nsr_policy_own_client(db, "cz", "cz"));
	assert_false(nsr_policy_own_client(db, "cz", "cb"));

	assert_true(nsr_policy_may_read(db, "srv", "cb", "bob", "cb"));
	assert_true(nsr_policy_may_read(db, "srv", "cb", "root", "ca"));
	assert_false(nsr_policy_may_read(db, "srv", "cb", "bob", "ca"));
	assert_true(nsr_policy_may_read(db, "srv", "cb", "bob", "ops2"));
	assert_true(nsr_policy_may_read(db, "srv", "cb", "alice", "cx"));
	assert_false(nsr_policy_may_read(db, "srv", "cz", "root", "ca"));

	/* the server's programs: root on the server, localhost, a storage
	 * node a device names; not root elsewhere, not others there */
	add(db, "type: NSR device; name: rd=sn1:/backup/a1; media type: "
		"adv_file", NULL);
	add(db, "type: NSR device; name: d2; media type: adv_file; "
		"device access information: rd=sn2:/backup/a2", NULL);
	assert_true(nsr_policy_is_daemon(db, "srv", "root", "srv"));
	assert_true(nsr_policy_is_daemon(db, "srv", "root", "localhost"));
	assert_true(nsr_policy_is_daemon(db, "srv", "root", "sn1"));
	assert_true(nsr_policy_is_daemon(db, "srv", "root", "sn2"));
	assert_false(nsr_policy_is_daemon(db, "srv", "bob", "sn1"));
	assert_false(nsr_policy_is_daemon(db, "srv", "root", "cb"));
	assert_true(nsr_policy_is_daemon(db, "srv", "alice", "cb"));
	nsr_resdb_close(db);
	nsr_test_rmrf(root);
	free(root);
}

/* test_handle_follows - a handle's copy sees a change at the next
 * refresh, and no resources means the defaults. */
static void test_handle_follows(void **state)
{
	char *root = nsr_test_tmpdir("policy-h");
	struct nsr_policy *p = NULL;
	struct nsr_resdb *db;
	char self[256];

	NSR_UNUSED(state);
	nsr_host_self(self, sizeof(self));
	assert_int_equal(nsr_policy_open(root, &p), NSR_OK);
	nsr_policy_refresh(p); /* no database yet */
	assert_true(nsr_policy_admin(p, "root", self));
	assert_false(nsr_policy_admin(p, "alice", self));

	db = open_db(root);
	add(db, "type: NSR client; name: cb; remote access: root@ca", NULL);
	nsr_policy_refresh(p);
	assert_true(nsr_policy_reader(p, "cb", "root", "ca"));
	assert_false(nsr_policy_reader(p, "cb", "bob", "ca"));

	add(db, "type: NSR; name: srv; administrator: bob@ca", NULL);
	nsr_policy_refresh(p);
	assert_true(nsr_policy_admin(p, "bob", "ca"));
	assert_false(nsr_policy_admin(p, "root", self));
	assert_true(nsr_policy_reader(p, "cb", "bob", "ca"));
	nsr_resdb_close(db);
	nsr_policy_close(p);
	nsr_test_rmrf(root);
	free(root);
}

/* main - run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_handle_follows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
