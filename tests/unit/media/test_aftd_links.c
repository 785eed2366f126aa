/*
 * test_aftd_links.c - an AFTD mover never leaves its directory through a
 * symbolic link (dev_aftd.c, invariant 4): a session file or a label
 * that is a link to a file outside is refused, not read, and a new
 * session never writes through a link planted under its next name.
 */
#include "nsr/compat.h"

#include <sys/stat.h>
#include <unistd.h>

#include "nsr/dev.h"
#include "nsr/err.h"
#include "nsr/vol.h"
#include "media_test.h"
#include "nsr_test.h"

/* test_links_refused - links to the outside are refused everywhere. */
static void test_links_refused(void **state)
{
	char *dir = nsr_test_tmpdir("aftd-links");
	struct nsr_dev *dev = mt_aftd(dir, "disk1", 0);
	struct nsr_dev_file *f = NULL;
	struct nsr_vol_label lab;
	char out[600], p[600], buf[64];
	uint32_t no = 0;
	size_t got = 0;

	NSR_UNUSED(state);
	mt_label(dev, "Disk.001", 65536, &lab);
	nsr_test_mkfile(dir, "secret", "not the mover's business\n");
	snprintf(out, sizeof(out), "%s/secret", dir);

	/* a session file that is a link */
	snprintf(p, sizeof(p), "%s/disk1/ss.0000000007", dir);
	assert_int_equal(symlink(out, p), 0);
	assert_int_equal(nsr_dev_file_open(dev, 7, &f), NSR_ERR_PERM);
	assert_null(f);

	/* a link planted under the next in-progress name (the device was
	 * opened empty: 1) is not written through: the session takes
	 * another number */
	snprintf(p, sizeof(p), "%s/disk1/ss.0000000001.part", dir);
	assert_int_equal(symlink(out, p), 0);
	assert_int_equal(nsr_dev_file_create(dev, &no, &f), NSR_OK);
	assert_int_equal(no, 2);
	assert_int_equal(nsr_dev_file_append(f, "x", 1), NSR_OK);
	assert_int_equal(nsr_dev_file_discard(f), NSR_OK);

	/* a label that is a link */
	snprintf(p, sizeof(p), "%s/disk1/label", dir);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(symlink(out, p), 0);
	assert_int_equal(nsr_dev_label_get(dev, buf, sizeof(buf), &got),
			 NSR_ERR_PERM);
	assert_int_equal(got, 0);

	{
		struct stat st;

		assert_int_equal(stat(out, &st), 0);
		assert_int_equal(st.st_size, 25); /* untouched */
	}
	nsr_dev_close(dev);
	nsr_test_rmrf(dir);
	free(dir);
}

/* main - run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_links_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
