/*
 * test_access.c - access list entries (access.h): which entries are
 * valid, user@host matching with * wildcards, domain names against short
 * patterns, and a caller that stated no user.
 */
#include "nsr/compat.h"

#include "nsr/access.h"
#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr_test.h"

/* test_entries - good and bad entries; a bad one says how to write it. */
static void test_entries(void **state)
{
	static const char *const good[] = {
		"root@backup1", "*@*", "alice@cl1.example.com",
		"root@*.example.com", "svc$@win1", "*@198.18.0.2",
		"root@::1",
	};
	static const char *const bad[] = {
		"", "root", "@host", "root@", "a@b@c", "root @host",
		"root@ho st", "ro/ot@host", "root@host;rm",
	};
	struct nsr_buf why;

	NSR_UNUSED(state);
	for (size_t i = 0; i < NSR_ARRAY_SIZE(good); i++)
		assert_int_equal(nsr_access_check_entry(good[i], NULL),
				 NSR_OK);
	for (size_t i = 0; i < NSR_ARRAY_SIZE(bad); i++)
		assert_int_equal(nsr_access_check_entry(bad[i], NULL),
				 NSR_ERR_INVAL);
	nsr_buf_init(&why, 0);
	assert_int_equal(nsr_access_check_entry("root", &why),
			 NSR_ERR_INVAL);
	assert_non_null(strstr(why.data, "user@host"));
	nsr_buf_release(&why);
}

/* test_match - users exactly, hosts without case, wildcards. */
static void test_match(void **state)
{
	NSR_UNUSED(state);
	assert_true(nsr_access_match("root@backup1", "root", "backup1"));
	assert_true(nsr_access_match("root@backup1", "root", "BACKUP1"));
	assert_false(nsr_access_match("root@backup1", "Root", "backup1"));
	assert_false(nsr_access_match("root@backup1", "alice", "backup1"));
	assert_false(nsr_access_match("root@backup1", "root", "backup2"));
	assert_true(nsr_access_match("*@cl1", "alice", "cl1"));
	assert_true(nsr_access_match("*@*", "bob", "anything.example"));
	assert_true(nsr_access_match("root@*.example.com", "root",
				     "cl1.example.com"));
	assert_false(nsr_access_match("root@*.example.com", "root",
				      "cl1.example.org"));
	assert_true(nsr_access_match("a*e@cl*", "alice", "cl42"));
	assert_false(nsr_access_match("a*e@cl*", "alic", "cl42"));
	assert_true(nsr_access_match("*@198.18.0.*", "root", "198.18.0.2"));
	/* a short pattern matches a domain name by its first label */
	assert_true(nsr_access_match("root@cl1", "root", "cl1.example.com"));
	assert_false(nsr_access_match("root@cl1.lab", "root",
				      "cl1.example.com"));
	/* no user stated: only a * user admits it */
	assert_false(nsr_access_match("root@cl1", NULL, "cl1"));
	assert_true(nsr_access_match("*@cl1", NULL, "cl1"));
	/* invalid entries admit nobody */
	assert_false(nsr_access_match("root", "root", "root"));
	assert_false(nsr_access_match("*", "root", "cl1"));
	assert_false(nsr_access_match("root@cl1", "root", ""));
}

/* test_backtracking - a pattern of many stars against a long name that
 * does not match ends (and says no). */
static void test_backtracking(void **state)
{
	char pat[NSR_ACCESS_ENTRY_MAX + 1], host[256];
	size_t n = 0;

	NSR_UNUSED(state);
	n += (size_t)snprintf(pat, sizeof(pat), "*@");
	while (n + 3 < NSR_ACCESS_ENTRY_MAX) {
		pat[n++] = '*';
		pat[n++] = 'a';
	}
	pat[n++] = 'b';
	pat[n] = '\0';
	memset(host, 'a', sizeof(host) - 1);
	host[sizeof(host) - 1] = '\0';
	assert_false(nsr_access_match(pat, "root", host));
	host[sizeof(host) - 2] = 'b';
	assert_true(nsr_access_match(pat, "root", host));
}

/* main - run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_entries),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_backtracking),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
