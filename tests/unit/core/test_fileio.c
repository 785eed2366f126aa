/*
 * test_fileio.c - durable replace, bounded whole-file reads, mkdir -p.
 */
#include "nsr/compat.h"

#include <dirent.h>
#include <sys/stat.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/xmalloc.h"
#include "nsr_test.h"

static void test_replace_and_read(void **state)
{
	char *dir = nsr_test_tmpdir("fileio"), *path, *deep;
	struct nsr_buf b;
	struct dirent *de;
	DIR *d;
	int n = 0;

	NSR_UNUSED(state);
	path = nsr_xcheck(nsr_path_join(dir, "res"));
	nsr_buf_init(&b, 0);
	assert_int_equal(nsr_file_read(path, &b, 0), NSR_ERR_NOTFOUND);
	assert_int_equal(nsr_file_replace(path, "one\n", 4, 0600), NSR_OK);
	assert_int_equal(nsr_file_replace(path, "two!\n", 5, 0600), NSR_OK);
	assert_int_equal(nsr_file_read(path, &b, 0), NSR_OK);
	assert_string_equal(b.data, "two!\n");
	nsr_buf_reset(&b);
	assert_int_equal(nsr_file_read(path, &b, 3), NSR_ERR_TOOBIG);
	/* No temp file is left behind. */
	d = opendir(dir);
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	assert_int_equal(n, 1);
	deep = nsr_xcheck(nsr_path_join(dir, "a/b/c"));
	assert_int_equal(nsr_mkdir_p(deep, 0755), NSR_OK);
	assert_int_equal(nsr_mkdir_p(deep, 0755), NSR_OK);
	/* Replacing into a missing directory fails and says so. */
	free(path);
	path = nsr_xcheck(nsr_path_join(dir, "missing/res"));
	assert_int_equal(nsr_file_replace(path, "x", 1, 0600), NSR_ERR_SYSTEM);
	nsr_buf_release(&b);
	nsr_test_rmrf(dir);
	free(deep);
	free(path);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replace_and_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
