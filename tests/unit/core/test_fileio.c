/*
 * test_fileio.c - durable replace, bounded whole-file reads, mkdir -p,
 * drop-behind of a file written.
 */
#include "nsr/compat.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

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

/* Write-back marks: a stretch is started once NSR_DROP_STRETCH bytes
 * gathered, a file cut back moves the marks back; what lies NSR_DROP_LAG
 * stretches behind is dropped from the page cache, on a disk file system
 * (tmpfs pages cannot be dropped) and once written back (the test syncs
 * before the last stretch, whose call drops the two stretches before the
 * lag: the new one and, again, the one dropped before), unless
 * NSR_DROP_BEHIND=0 keeps it. */
static void test_drop_write(void **state)
{
	char *dir = nsr_test_tmpdir("fileio-drop");
	const uint64_t st = NSR_DROP_STRETCH, size = 5 * st + 5;
	const uint64_t dropped = size - (size % st) - NSR_DROP_LAG * st;
	static uint8_t chunk[1 << 20];
	struct nsr_drop wb;
	struct statfs sf;
	char path[512];
	int fd;

	NSR_UNUSED(state);
	assert_int_equal(statfs(dir, &sf), 0);
	snprintf(path, sizeof(path), "%s/wb", dir);
	for (int keep = 0; keep < 2; keep++) {
		uint64_t end = 0;

		if (keep)
			setenv("NSR_DROP_BEHIND", "0", 1);
		nsr_drop_init(&wb, 0);
		unsetenv("NSR_DROP_BEHIND");
		assert_int_equal(wb.keep, keep);
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		assert_true(fd >= 0);
		/* five stretches and a bit, a megabyte at a time */
		while (end < size) {
			size_t n = (size_t)NSR_MIN(sizeof(chunk), size - end);

			memset(chunk, (int)(end >> 20), n);
			assert_int_equal(pwrite(fd, chunk, n, (off_t)end),
					 (ssize_t)n);
			if (end + n == 5 * st)
				assert_int_equal(fdatasync(fd), 0);
			end += n;
			nsr_drop_write(fd, &wb, end);
			/* started only on whole stretches, dropped behind */
			assert_true(end - wb.started < st);
			assert_int_equal(wb.started % st, 0);
			if (keep)
				assert_int_equal(wb.dropped, 0);
			else
				assert_true(wb.dropped + NSR_DROP_LAG * st >=
					    wb.started);
		}
		assert_int_equal(wb.started, 5 * st);
		assert_int_equal(wb.dropped, keep ? 0 : dropped);
		if (sf.f_type != TMPFS_MAGIC) {
			/* what the last call dropped, all written back */
			size_t pg = (size_t)sysconf(_SC_PAGESIZE);
			size_t in =
				nsr_test_cached(path, dropped - 2 * st, 2 * st);

			assert_int_equal(in, keep ? 2 * st / pg : 0);
		}
		close(fd);
	}
	/* the file was cut back: both marks follow */
	wb.started = wb.dropped = 3 * st;
	fd = open("/dev/null", O_WRONLY);
	assert_true(fd >= 0);
	nsr_drop_write(fd, &wb, 100);
	assert_int_equal(wb.started, 100);
	assert_int_equal(wb.dropped, 100);
	nsr_drop_write(fd, &wb, 100 + st - 1);
	assert_int_equal(wb.started, 100);
	nsr_drop_write(fd, &wb, 100 + st);
	assert_int_equal(wb.started, 100 + st);
	close(fd);
	nsr_test_rmrf(dir);
	free(dir);
}

/* test_drop_synced - a file too short for nsr_drop_write to drop
 * anything leaves no page behind once nsr_drop_synced follows its
 * fdatasync, except the one it ends in; with NSR_DROP_BEHIND=0 all stay;
 * appending after it goes on from both marks. */
static void test_drop_synced(void **state)
{
	char *dir = nsr_test_tmpdir("fileio-synced");
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	const size_t size = 3 * (1u << 20) + 100; /* under a stretch */
	uint8_t *buf = malloc(size);
	struct nsr_drop d;
	struct statfs sf;
	char path[512];
	int fd;

	NSR_UNUSED(state);
	assert_non_null(buf);
	memset(buf, 0x5a, size);
	assert_int_equal(statfs(dir, &sf), 0);
	snprintf(path, sizeof(path), "%s/short", dir);
	for (int keep = 0; keep < 2; keep++) {
		if (keep)
			setenv("NSR_DROP_BEHIND", "0", 1);
		nsr_drop_init(&d, 0);
		unsetenv("NSR_DROP_BEHIND");
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		assert_true(fd >= 0);
		assert_int_equal(pwrite(fd, buf, size, 0), (ssize_t)size);
		nsr_drop_write(fd, &d, size);
		assert_int_equal(d.dropped, 0); /* too short for it */
		assert_int_equal(fdatasync(fd), 0);
		nsr_drop_synced(fd, &d, size);
		assert_int_equal(d.started, size);
		assert_int_equal(d.dropped, keep ? 0 : size - size % pg);
		if (sf.f_type != TMPFS_MAGIC) {
			size_t in = nsr_test_cached(path, 0, size - size % pg);

			assert_int_equal(in, keep ? size / pg : 0);
			assert_int_equal(nsr_test_cached(path,
							 size - size % pg, 1),
					 1);
		}
		/* the next append goes on where the marks are */
		assert_int_equal(pwrite(fd, buf, pg, (off_t)size),
				 (ssize_t)pg);
		nsr_drop_write(fd, &d, size + pg);
		assert_int_equal(d.started, size);
		close(fd);
	}
	free(buf);
	nsr_test_rmrf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replace_and_read),
		cmocka_unit_test(test_drop_write),
		cmocka_unit_test(test_drop_synced),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
