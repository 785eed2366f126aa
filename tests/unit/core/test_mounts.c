/*
 * test_mounts.c - the local file systems of a mount table (mounts.h).
 */
#include "nsr/compat.h"

#include "nsr/err.h"
#include "nsr/mounts.h"
#include "nsr_test.h"

/* test_local - pseudo and network file systems are left out. */
static void test_local(void **state)
{
	static const char table[] =
		"/dev/sda1 / ext4 rw,relatime 0 0\n"
		"proc /proc proc rw 0 0\n"
		"sysfs /sys sysfs rw 0 0\n"
		"tmpfs /run tmpfs rw 0 0\n"
		"cgroup2 /sys/fs/cgroup cgroup2 rw 0 0\n"
		"/dev/sda2 /home xfs rw 0 0\n"
		"srv:/export /mnt/nfs nfs4 rw 0 0\n"
		"//srv/share /mnt/smb cifs rw 0 0\n"
		"sshfs#u@h: /mnt/ssh fuse.sshfs rw 0 0\n"
		"/dev/sdb1 /data\\040disk btrfs rw 0 0\n"
		"\n"
		"/dev/sda2 /home xfs rw 0 0\n"
		"overlay /var/lib/c overlay rw 0 0";
	struct nsr_mounts m;

	NSR_UNUSED(state);
	assert_int_equal(nsr_mounts_parse(table, sizeof(table) - 1, &m),
			 NSR_OK);
	assert_int_equal(m.n, 4);
	assert_string_equal(m.path[0], "/");
	assert_string_equal(m.path[1], "/home");
	assert_string_equal(m.path[2], "/data disk");
	assert_string_equal(m.path[3], "/var/lib/c");
	nsr_mounts_free(&m);
	assert_int_equal(m.n, 0);
}

/* test_bad - malformed lines and tables over the bound are refused. */
static void test_bad(void **state)
{
	struct nsr_mounts m;
	char big[NSR_MOUNTS_MAX * 40 + 64];
	size_t len = 0;

	NSR_UNUSED(state);
	assert_int_equal(nsr_mounts_parse("/dev/sda1 /\n", 12, &m),
			 NSR_ERR_CORRUPT);
	nsr_mounts_free(&m);
	assert_int_equal(nsr_mounts_parse("a /x ext4\0b", 11, &m),
			 NSR_ERR_CORRUPT);
	nsr_mounts_free(&m);
	for (int i = 0; i <= NSR_MOUNTS_MAX; i++)
		len += (size_t)snprintf(big + len, sizeof(big) - len,
					"/dev/x /m%d ext4 rw 0 0\n", i);
	assert_int_equal(nsr_mounts_parse(big, len, &m), NSR_ERR_LIMIT);
	assert_int_equal(m.n, NSR_MOUNTS_MAX);
	nsr_mounts_free(&m);
	assert_int_equal(nsr_mounts_is_local("ext4"), 1);
	assert_int_equal(nsr_mounts_is_local("fuse.gvfsd"), 0);
	assert_int_equal(nsr_mounts_is_local(""), 0);
}

/* test_self - this host's table reads (whatever it holds). */
static void test_self(void **state)
{
	struct nsr_mounts m;

	NSR_UNUSED(state);
	assert_int_equal(nsr_mounts_read(NULL, &m), NSR_OK);
	for (size_t i = 0; i < m.n; i++)
		assert_true(m.path[i][0] == '/');
	nsr_mounts_free(&m);
	assert_int_equal(nsr_mounts_read("/nonexistent/mounts", &m),
			 NSR_ERR_NOTFOUND);
}

/* main - run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_local),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_self),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
