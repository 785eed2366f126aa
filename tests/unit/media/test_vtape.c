/*
 * test_vtape.c - vtape semantics through the device interface: records
 * keep their boundaries, filemarks, end of data, overwrite truncates,
 * FSF/BSF/FSR/BSR, seek/tell, early warning then end of medium, reopen.
 */
#include "nsr/compat.h"

#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/dev.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "media_test.h"
#include "nsr_test.h"

/* fill - a recognisable pattern for record (tag, n). */
static void fill(uint8_t *p, size_t len, unsigned tag)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(tag * 31 + i * 7);
}

/* expect_rec - the next read is a record of len bytes with tag. */
static void expect_rec(struct nsr_dev *dev, size_t len, unsigned tag)
{
	static uint8_t got[70000], want[70000];
	size_t n = 0;

	assert_int_equal(nsr_dev_read(dev, got, sizeof(got), &n), NSR_OK);
	assert_int_equal(n, len);
	fill(want, len, tag);
	assert_memory_equal(got, want, len);
}

/* expect_pos - tell gives file/record. */
static void expect_pos(struct nsr_dev *dev, uint32_t file, uint64_t rec)
{
	struct nsr_dev_pos p;

	assert_int_equal(nsr_dev_tell(dev, &p), NSR_OK);
	assert_int_equal(p.file, file);
	assert_int_equal(p.record, rec);
}

static void test_records_filemarks(void **state)
{
	static const size_t sizes[] = { 1, 513, 32768, 65536, 60000 };
	static uint8_t buf[70000];
	char *dir = nsr_test_tmpdir("vtape");
	struct nsr_dev *dev = mt_vtape(dir, "tape.vt", 0, 0);
	struct nsr_dev_pos p;
	size_t i, n;

	NSR_UNUSED(state);
	/* File 0: five records of different sizes; file 1: two records. */
	for (i = 0; i < NSR_ARRAY_SIZE(sizes); i++) {
		fill(buf, sizes[i], (unsigned)i);
		assert_int_equal(nsr_dev_write(dev, buf, sizes[i]), NSR_OK);
	}
	assert_int_equal(nsr_dev_weof(dev, 1), NSR_OK);
	for (i = 10; i < 12; i++) {
		fill(buf, 1000, (unsigned)i);
		assert_int_equal(nsr_dev_write(dev, buf, 1000), NSR_OK);
	}
	assert_int_equal(nsr_dev_weof(dev, 1), NSR_OK);
	expect_pos(dev, 2, 0);

	assert_int_equal(nsr_dev_rewind(dev), NSR_OK);
	for (i = 0; i < NSR_ARRAY_SIZE(sizes); i++)
		expect_rec(dev, sizes[i], (unsigned)i);
	assert_int_equal(nsr_dev_read(dev, buf, sizeof(buf), &n), NSR_ERR_EOF);
	expect_pos(dev, 1, 0);
	expect_rec(dev, 1000, 10);
	expect_rec(dev, 1000, 11);
	assert_int_equal(nsr_dev_read(dev, buf, sizeof(buf), &n), NSR_ERR_EOF);
	assert_int_equal(nsr_dev_read(dev, buf, sizeof(buf), &n), NSR_ERR_EOD);

	/* A short buffer: TOOBIG, positioned after that record. */
	assert_int_equal(nsr_dev_rewind(dev), NSR_OK);
	assert_int_equal(nsr_dev_fsr(dev, 1), NSR_OK);
	assert_int_equal(nsr_dev_read(dev, buf, 100, &n), NSR_ERR_TOOBIG);
	expect_rec(dev, 32768, 2);

	/* FSF / BSF / FSR / BSR. */
	assert_int_equal(nsr_dev_rewind(dev), NSR_OK);
	assert_int_equal(nsr_dev_fsf(dev, 1), NSR_OK);
	expect_pos(dev, 1, 0);
	expect_rec(dev, 1000, 10);
	assert_int_equal(nsr_dev_bsf(dev, 1), NSR_OK); /* before FM 0 */
	expect_pos(dev, 0, 5);
	assert_int_equal(nsr_dev_bsr(dev, 2), NSR_OK);
	expect_rec(dev, 65536, 3);
	assert_int_equal(nsr_dev_fsr(dev, 5), NSR_ERR_EOF);
	expect_pos(dev, 1, 0);
	/* Backward over the filemark: crossed, at the end of file 0. */
	assert_int_equal(nsr_dev_bsr(dev, 1), NSR_ERR_EOF);
	expect_pos(dev, 0, 5);
	assert_int_equal(nsr_dev_fsf(dev, 5), NSR_ERR_EOD);
	assert_int_equal(nsr_dev_bsf(dev, 5), NSR_ERR_EOD);
	expect_pos(dev, 0, 0);
	assert_int_equal(nsr_dev_bsr(dev, 1), NSR_ERR_EOD);

	/* Seek. */
	p.file = 1;
	p.record = 1;
	assert_int_equal(nsr_dev_seek(dev, &p), NSR_OK);
	expect_rec(dev, 1000, 11);
	p.file = 7;
	assert_int_equal(nsr_dev_seek(dev, &p), NSR_ERR_EOD);

	/* Overwrite in the middle truncates the rest; EOD + append. */
	assert_int_equal(nsr_dev_rewind(dev), NSR_OK);
	assert_int_equal(nsr_dev_fsr(dev, 2), NSR_OK);
	fill(buf, 777, 20);
	assert_int_equal(nsr_dev_write(dev, buf, 777), NSR_OK);
	assert_int_equal(nsr_dev_read(dev, buf, sizeof(buf), &n), NSR_ERR_EOD);
	assert_int_equal(nsr_dev_rewind(dev), NSR_OK);
	assert_int_equal(nsr_dev_eod(dev), NSR_OK);
	expect_pos(dev, 0, 3);
	assert_int_equal(nsr_dev_weof(dev, 1), NSR_OK);
	assert_int_equal(nsr_dev_weof(dev, 0), NSR_OK);
	assert_int_equal(nsr_dev_close(dev), NSR_OK);

	/* Everything survives a reopen. */
	dev = mt_vtape(dir, "tape.vt", 0, 0);
	expect_rec(dev, 1, 0);
	expect_rec(dev, 513, 1);
	expect_rec(dev, 777, 20);
	assert_int_equal(nsr_dev_read(dev, buf, sizeof(buf), &n), NSR_ERR_EOF);
	assert_int_equal(nsr_dev_read(dev, buf, sizeof(buf), &n), NSR_ERR_EOD);
	assert_int_equal(nsr_dev_close(dev), NSR_OK);
	nsr_test_rmrf(dir);
	free(dir);
}

static void test_early_warning_eom(void **state)
{
	static uint8_t buf[10000];
	char *dir = nsr_test_tmpdir("vtape-eom");
	struct nsr_dev *dev = mt_vtape(dir, "tape.vt", 100000, 30000);
	struct nsr_dev_info info;
	int i, rc, before_ew = -1, written = 0;

	NSR_UNUSED(state);
	/* Each record takes 10016 bytes of the 100000. */
	for (i = 0; i < 20; i++) {
		fill(buf, sizeof(buf), (unsigned)i);
		rc = nsr_dev_write(dev, buf, sizeof(buf));
		if (rc != NSR_OK)
			break;
		written++;
		nsr_dev_get_info(dev, &info);
		if (info.early_warning && before_ew < 0)
			before_ew = i;
	}
	assert_int_equal(rc, NSR_ERR_EOM);
	assert_int_equal(before_ew, 6); /* 7 * 10016 + 30000 >= 100000 */
	assert_int_equal(written, 9);	/* 10 * 10016 > 100000 */
	/* A filemark still fits; all nine records read back. */
	assert_int_equal(nsr_dev_weof(dev, 1), NSR_OK);
	assert_int_equal(nsr_dev_rewind(dev), NSR_OK);
	nsr_dev_get_info(dev, &info);
	assert_false(info.early_warning);
	for (i = 0; i < 9; i++)
		expect_rec(dev, sizeof(buf), (unsigned)i);
	assert_int_equal(nsr_dev_close(dev), NSR_OK);
	nsr_test_rmrf(dir);
	free(dir);
}

static void test_torn_tail(void **state)
{
	static uint8_t buf[4096];
	char *dir = nsr_test_tmpdir("vtape-torn");
	struct nsr_dev *dev = mt_vtape(dir, "tape.vt", 0, 0);
	char path[512];
	FILE *fp;
	size_t n;

	NSR_UNUSED(state);
	fill(buf, sizeof(buf), 1);
	assert_int_equal(nsr_dev_write(dev, buf, sizeof(buf)), NSR_OK);
	assert_int_equal(nsr_dev_close(dev), NSR_OK);
	/* Half an entry at the end (a crash mid-write) is not data. */
	snprintf(path, sizeof(path), "%s/tape.vt", dir);
	fp = fopen(path, "ab");
	assert_non_null(fp);
	fwrite("\0\0\0\1\0\0\x10\0garbage", 1, 15, fp);
	fclose(fp);
	dev = mt_vtape(dir, "tape.vt", 0, 0);
	expect_rec(dev, sizeof(buf), 1);
	assert_int_equal(nsr_dev_read(dev, buf, sizeof(buf), &n), NSR_ERR_EOD);
	fill(buf, 100, 2);
	assert_int_equal(nsr_dev_write(dev, buf, 100), NSR_OK);
	assert_int_equal(nsr_dev_close(dev), NSR_OK);
	dev = mt_vtape(dir, "tape.vt", 0, 0);
	assert_int_equal(nsr_dev_fsr(dev, 1), NSR_OK);
	expect_rec(dev, 100, 2);
	assert_int_equal(nsr_dev_close(dev), NSR_OK);
	/* Not a vtape at all. */
	fp = fopen(path, "wb");
	fwrite("hello", 1, 5, fp);
	fclose(fp);
	assert_int_equal(nsr_dev_open(NSR_DEV_VTAPE, path, NULL, &dev, NULL),
			 NSR_ERR_CORRUPT);
	nsr_test_rmrf(dir);
	free(dir);
}

/* A vtape file without write permission is a write-protected cartridge:
 * refused for writing (also to root), fine for reading. */
static void test_write_protect(void **state)
{
	char *dir = nsr_test_tmpdir("vt-wp");
	struct nsr_dev_opts o;
	struct nsr_dev *dev = mt_vtape(dir, "tape.vt", 0, 0);
	struct nsr_buf why;
	uint8_t buf[100];
	char path[512];

	NSR_UNUSED(state);
	fill(buf, sizeof(buf), 3);
	assert_int_equal(nsr_dev_write(dev, buf, sizeof(buf)), NSR_OK);
	assert_int_equal(nsr_dev_close(dev), NSR_OK);
	snprintf(path, sizeof(path), "%s/tape.vt", dir);
	assert_int_equal(chmod(path, 0444), 0);
	nsr_buf_init(&why, 0);
	memset(&o, 0, sizeof(o));
	dev = NULL;
	assert_int_equal(nsr_dev_open(NSR_DEV_VTAPE, path, &o, &dev, &why),
			 NSR_ERR_READONLY);
	assert_null(dev);
	assert_non_null(strstr(why.data, "write-protected"));
	o.read_only = 1;
	assert_int_equal(nsr_dev_open(NSR_DEV_VTAPE, path, &o, &dev, NULL),
			 NSR_OK);
	expect_rec(dev, sizeof(buf), 3);
	assert_int_equal(nsr_dev_close(dev), NSR_OK);
	nsr_buf_release(&why);
	nsr_test_rmrf(dir);
	free(dir);
}

/* test_drop_behind - on a disk file system, a vtape keeps none of what
 * it wrote in the page cache once flushed (but the page it ends in), and
 * drops what it read NSR_DROP_LAG stretches behind its reads, whole
 * pages though records (with their headers) do not end on pages. */
static void test_drop_behind(void **state)
{
	char *dir = nsr_test_tmpdir("vtape-drop");
	struct nsr_dev *dev = mt_vtape(dir, "tape.vt", 0, 0);
	const size_t rec = 1u << 20, nrec = 5 * NSR_DROP_STRETCH / rec;
	const size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	static uint8_t buf[1u << 20];
	struct statfs sf;
	struct stat st;
	char path[512];
	size_t i, n;

	NSR_UNUSED(state);
	snprintf(path, sizeof(path), "%s/tape.vt", dir);
	assert_int_equal(statfs(dir, &sf), 0);
	for (i = 0; i < nrec; i++) {
		fill(buf, rec, (unsigned)i);
		assert_int_equal(nsr_dev_write(dev, buf, rec), NSR_OK);
	}
	assert_int_equal(nsr_dev_weof(dev, 0), NSR_OK);
	assert_int_equal(stat(path, &st), 0);
	if (sf.f_type != TMPFS_MAGIC)
		assert_int_equal(
			nsr_test_cached(path, 0,
					(size_t)st.st_size -
						(size_t)st.st_size % pg),
			0);
	assert_int_equal(nsr_dev_rewind(dev), NSR_OK);
	for (i = 0; i < nrec; i++) {
		uint8_t want[64];

		assert_int_equal(nsr_dev_read(dev, buf, sizeof(buf), &n),
				 NSR_OK);
		assert_int_equal(n, rec);
		fill(want, sizeof(want), (unsigned)i);
		assert_memory_equal(buf, want, sizeof(want));
	}
	if (sf.f_type != TMPFS_MAGIC) {
		/* at the last read (in the fifth stretch) the first two are
		 * gone, the tape's header page and the pages where records
		 * straddle the drops' ends too; the last one is there */
		assert_int_equal(nsr_test_cached(path, 0, 2 * NSR_DROP_STRETCH),
				 0);
		assert_int_not_equal(nsr_test_cached(path,
						     4 * NSR_DROP_STRETCH,
						     NSR_DROP_STRETCH),
				     0);
	}
	assert_int_equal(nsr_dev_close(dev), NSR_OK);
	nsr_test_rmrf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_records_filemarks),
		cmocka_unit_test(test_early_warning_eom),
		cmocka_unit_test(test_torn_tail),
		cmocka_unit_test(test_write_protect),
		cmocka_unit_test(test_drop_behind),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
