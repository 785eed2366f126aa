/*
 * test_aftd.c - adv_file volumes: sessions in parallel threads each get
 * their own session file; a full disk (quota) marks the volume full and
 * damages nothing already written; truncated files and blocks from
 * another volume are reported with the save set they hit; blocks read
 * back in any order, and dropped behind the reads.
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <pthread.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/media_fmt.h"
#include "dev_int.h"
#include "media_test.h"
#include "nsr_test.h"

#define NTHREADS 4

struct job {
	struct nsr_vol_writer *w;
	uint32_t ssid;
	uint64_t total;
	struct nsr_vol_frag frag;
	int rc;
};

/* job_run - one session from a thread, odd piece sizes. */
static void *job_run(void *arg)
{
	struct job *j = arg;
	struct nsr_vol_session *s = NULL;
	struct nsr_vol_sshdr h;
	struct nsr_vol_sstail t = { j->total, 5, NSR_VOL_SS_OK };
	static __thread uint8_t buf[70000];
	uint32_t seed = j->ssid * 7919u;
	uint64_t off = 0;

	mt_hdr(&h, j->ssid);
	j->rc = nsr_vol_session_begin(j->w, &h, NULL, &s);
	while (j->rc == NSR_OK && off < j->total) {
		size_t n = 1 + mt_rand(&seed) % sizeof(buf);

		n = (size_t)NSR_MIN((uint64_t)n, j->total - off);
		mt_fill(j->ssid, off, buf, n);
		j->rc = nsr_vol_session_write(s, buf, n);
		off += n;
	}
	if (j->rc == NSR_OK)
		j->rc = nsr_vol_session_end(s, &t, &j->frag);
	return NULL;
}

struct found {
	struct nsr_vol_reader *r;
	struct nsr_vol_frag f[NTHREADS];
	int n;
};

/* found_begin - keep the fragment each begin chunk describes. */
static int found_begin(void *arg, const struct nsr_vol_sshdr *h,
		       const struct nsr_vol_span *sp,
		       const struct nsr_vol_loc *loc)
{
	struct found *fd = arg;

	if (fd->n < NTHREADS)
		nsr_vol_reader_frag(fd->r, h, sp, loc, &fd->f[fd->n++]);
	return 0;
}

static void test_parallel_sessions(void **state)
{
	char *dir = nsr_test_tmpdir("aftd-par");
	struct nsr_dev *dev = mt_aftd(dir, "disk1", 0);
	struct nsr_vol_label lab;
	struct nsr_vol_wopts o = { NULL, 0, 0 }; /* with fsync */
	struct nsr_vol_writer *w = NULL;
	struct nsr_vol_reader *r = NULL;
	struct job jobs[NTHREADS];
	pthread_t th[NTHREADS];
	struct mt_scan scan;
	struct found found;
	const struct nsr_vol_scan_ops found_ops = { .begin = found_begin };
	struct nsr_buf out;
	uint64_t got;
	int i, k;

	NSR_UNUSED(state);
	mt_label(dev, "AFTD.001", 256u << 10, &lab);
	assert_int_equal(nsr_vol_writer_open(dev, &o, &w, NULL), NSR_OK);
	for (i = 0; i < NTHREADS; i++) {
		memset(&jobs[i], 0, sizeof(jobs[i]));
		jobs[i].w = w;
		jobs[i].ssid = (uint32_t)(100 + i);
		jobs[i].total = 700000u + (uint64_t)i * 111111u;
		assert_int_equal(pthread_create(&th[i], NULL, job_run,
						&jobs[i]),
				 0);
	}
	for (i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(nsr_vol_writer_close(w), NSR_OK);
	for (i = 0; i < NTHREADS; i++) {
		assert_int_equal(jobs[i].rc, NSR_OK);
		assert_int_equal(jobs[i].frag.size, jobs[i].total);
		assert_int_equal(jobs[i].frag.offset, 0);
		for (k = 0; k < i; k++)
			assert_int_not_equal(jobs[i].frag.file,
					     jobs[k].frag.file);
	}

	assert_int_equal(nsr_vol_reader_open(dev, lab.volid, &r, NULL),
			 NSR_OK);
	nsr_buf_init(&out, 0);
	for (i = 0; i < NTHREADS; i++) {
		nsr_buf_reset(&out);
		assert_int_equal(nsr_vol_reader_read(r, &jobs[i].frag,
						     mt_collect, &out, NULL,
						     NULL, &got),
				 NSR_OK);
		assert_int_equal(out.len, jobs[i].total);
		assert_true(mt_check(jobs[i].ssid, 0, (uint8_t *)out.data,
				     out.len));
	}
	memset(&scan, 0, sizeof(scan));
	assert_int_equal(nsr_vol_reader_scan(r, &mt_scan_ops, &scan), NSR_OK);
	assert_int_equal(scan.begins, NTHREADS);
	assert_int_equal(scan.ends, NTHREADS);
	/* Without the databases: a scan finds where each save set starts,
	 * and that is enough to read it back (what scanner does). */
	memset(&found, 0, sizeof(found));
	found.r = r;
	assert_int_equal(nsr_vol_reader_scan(r, &found_ops, &found), NSR_OK);
	assert_int_equal(found.n, NTHREADS);
	for (i = 0; i < NTHREADS; i++) {
		for (k = 0; k < NTHREADS; k++)
			if (jobs[k].ssid == found.f[i].ssid)
				break;
		assert_true(k < NTHREADS);
		assert_int_equal(found.f[i].file, jobs[k].frag.file);
		assert_int_equal(found.f[i].offset, jobs[k].frag.offset);
		nsr_buf_reset(&out);
		assert_int_equal(nsr_vol_reader_read(r, &found.f[i],
						     mt_collect, &out, NULL,
						     NULL, &got),
				 NSR_OK);
		assert_int_equal(out.len, jobs[k].total);
	}
	nsr_buf_release(&out);
	nsr_vol_reader_close(r);
	assert_int_equal(nsr_dev_close(dev), NSR_OK);
	nsr_test_rmrf(dir);
	free(dir);
}

static void test_full_disk(void **state)
{
	char *dir = nsr_test_tmpdir("aftd-full");
	/* Room for 20 blocks of 32 KB. */
	struct nsr_dev *dev = mt_aftd(dir, "small", 20 * 32768);
	struct nsr_vol_label lab;
	struct nsr_vol_writer *w;
	struct nsr_vol_reader *r = NULL;
	struct nsr_vol_session *s = NULL;
	struct nsr_vol_frag done, part;
	struct nsr_vol_sshdr h;
	struct nsr_dev_info info;
	struct nsr_buf carry, out;
	uint8_t buf[10000];
	char path[512];
	struct stat st;
	uint64_t off = 0, got = 0;
	int rc = NSR_OK;

	NSR_UNUSED(state);
	nsr_buf_init(&carry, 0);
	nsr_buf_init(&out, 0);
	mt_label(dev, "SMALL", 32768, &lab);
	w = mt_writer(dev);
	mt_write_ss(w, 1, 5 * 32000, 3000, &done); /* 5 blocks + end */
	mt_hdr(&h, 2);
	assert_int_equal(nsr_vol_session_begin(w, &h, NULL, &s), NSR_OK);
	while (rc == NSR_OK) {
		mt_fill(2, off, buf, sizeof(buf));
		rc = nsr_vol_session_write(s, buf, sizeof(buf));
		off += sizeof(buf);
		assert_true(off < 2000000);
	}
	assert_int_equal(rc, NSR_ERR_EOM);
	assert_non_null(strstr(nsr_vol_writer_errmsg(w), "full"));
	nsr_dev_get_info(dev, &info);
	assert_true(info.full);
	assert_int_equal(nsr_vol_session_eom(s, &part, &carry), NSR_OK);
	assert_int_equal(part.size + carry.len, off);
	assert_true(part.size > 0);
	/* The session file ends on the last whole block. */
	snprintf(path, sizeof(path), "%s/small/ss.%010" PRIu32, dir,
		 part.file);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size % 32768, 0);
	assert_true(st.st_size > 0);
	assert_int_equal(nsr_vol_writer_close(w), NSR_OK);

	/* Nothing written before is damaged; the part is readable. */
	assert_int_equal(nsr_vol_reader_open(dev, NULL, &r, NULL), NSR_OK);
	assert_int_equal(nsr_vol_reader_read(r, &done, mt_collect, &out, NULL,
					     NULL, &got),
			 NSR_OK);
	assert_int_equal(out.len, 5 * 32000);
	assert_true(mt_check(1, 0, (uint8_t *)out.data, out.len));
	nsr_buf_reset(&out);
	assert_int_equal(nsr_vol_reader_read(r, &part, mt_collect, &out, NULL,
					     NULL, &got),
			 NSR_ERR_EOM);
	assert_int_equal(out.len, part.size);
	assert_true(mt_check(2, 0, (uint8_t *)out.data, out.len));
	nsr_vol_reader_close(r);
	nsr_buf_release(&carry);
	nsr_buf_release(&out);
	assert_int_equal(nsr_dev_close(dev), NSR_OK);
	nsr_test_rmrf(dir);
	free(dir);
}

static void test_truncated_and_foreign(void **state)
{
	char *dir = nsr_test_tmpdir("aftd-bad");
	struct nsr_dev *d1 = mt_aftd(dir, "one", 0);
	struct nsr_dev *d2 = mt_aftd(dir, "two", 0);
	struct nsr_vol_label l1, l2;
	struct nsr_vol_writer *w;
	struct nsr_vol_reader *r = NULL;
	struct nsr_vol_frag f1, f2, f3;
	struct mt_scan scan;
	char from[512], to[512], cmd[1200];
	int rc;

	NSR_UNUSED(state);
	mt_label(d1, "ONE", 32768, &l1);
	mt_label(d2, "TWO", 32768, &l2);
	w = mt_writer(d1);
	mt_write_ss(w, 1, 100000, 5000, &f1);
	mt_write_ss(w, 2, 100000, 5000, &f2);
	assert_int_equal(nsr_vol_writer_close(w), NSR_OK);
	w = mt_writer(d2);
	mt_write_ss(w, 3, 100000, 5000, &f3);
	assert_int_equal(nsr_vol_writer_close(w), NSR_OK);

	/* Cut save set 2's file in the middle of its second block. */
	snprintf(to, sizeof(to), "%s/one/ss.%010" PRIu32, dir, f2.file);
	assert_int_equal(truncate(to, 32768 + 1000), 0);
	/* Put volume TWO's session file into volume ONE. */
	snprintf(from, sizeof(from), "%s/two/ss.%010" PRIu32, dir, f3.file);
	snprintf(to, sizeof(to), "%s/one/ss.0000000099", dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", from, to);
	assert_int_equal(system(cmd), 0);

	assert_int_equal(nsr_vol_reader_open(d1, NULL, &r, NULL), NSR_OK);
	memset(&scan, 0, sizeof(scan));
	rc = nsr_vol_reader_scan(r, &mt_scan_ops, &scan);
	assert_int_equal(rc, NSR_ERR_TRUNCATED);
	/* 1 is whole; 2 is unfinished; the foreign blocks are refused. */
	assert_int_equal(scan.ends, 1);
	assert_int_equal(scan.end_ssid[0], 1);
	assert_int_equal(scan.begins, 2);
	assert_true(mt_scan_has(scan.unfinished_ssid, scan.unfinished, 2));
	assert_true(mt_scan_has((const uint32_t *)scan.damage_rc,
				scan.damages, (uint32_t)NSR_ERR_MISMATCH));
	assert_false(mt_scan_has(scan.begin_ssid, scan.begins, 3));
	nsr_vol_reader_close(r);
	assert_int_equal(nsr_dev_close(d1), NSR_OK);
	assert_int_equal(nsr_dev_close(d2), NSR_OK);
	nsr_test_rmrf(dir);
	free(dir);
}

/* read_check_at - read block no (bs bytes) of the file into a buffer at
 * an aligned address or, with mis, one byte past it, and compare. */
static void read_check_at(struct nsr_dev_file *f, uint64_t no, size_t bs,
			  uint64_t fsize, int mis)
{
	_Alignas(4096) static uint8_t buf[(512 << 10) + 4096];
	uint8_t *p = buf + (mis ? 1 : 0);
	size_t got = 99;
	uint64_t off = no * bs;
	size_t want = off >= fsize ? 0 : (size_t)NSR_MIN(bs, fsize - off);

	assert_true(bs <= sizeof(buf) - 4096);
	assert_int_equal(nsr_dev_file_pread(f, p, bs, off, &got), NSR_OK);
	assert_int_equal(got, want);
	assert_true(mt_check(1, off, p, got));
}

/* read_check - read_check_at with an aligned buffer. */
static void read_check(struct nsr_dev_file *f, uint64_t no, size_t bs,
		       uint64_t fsize)
{
	read_check_at(f, no, bs, fsize, 0);
}

/* flip_at - xor one byte of a file. */
static void flip_at(const char *path, off_t off)
{
	int fd = open(path, O_RDWR);
	uint8_t c;

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &c, 1, off), 1);
	c ^= 0x5a;
	assert_int_equal(pwrite(fd, &c, 1, off), 1);
	close(fd);
}

/* read_damaged - read f back: the code, the damaged blocks counted and
 * the damage reports of the read, then of a scan. */
static void read_damaged(struct nsr_dev *dev, const struct nsr_vol_frag *f,
			 int *rc, uint64_t *nread, int *reports,
			 uint64_t *nscan)
{
	struct nsr_vol_reader *r = NULL;
	struct mt_scan scan;
	struct nsr_buf out;
	uint64_t got;

	nsr_buf_init(&out, 0);
	assert_int_equal(nsr_vol_reader_open(dev, NULL, &r, NULL), NSR_OK);
	memset(&scan, 0, sizeof(scan));
	*rc = nsr_vol_reader_read(r, f, mt_collect, &out, &mt_scan_ops, &scan,
				  &got);
	*nread = nsr_vol_reader_damaged_blocks(r);
	*reports = scan.damages;
	assert_true(mt_scan_has(scan.damage_ssid, scan.damages, f->ssid));
	assert_false(mt_scan_has(scan.damage_ssid, scan.damages, 0));
	memset(&scan, 0, sizeof(scan));
	assert_int_not_equal(nsr_vol_reader_scan(r, &mt_scan_ops, &scan),
			     NSR_OK);
	*nscan = nsr_vol_reader_damaged_blocks(r);
	nsr_vol_reader_close(r);
	nsr_buf_release(&out);
}

/* One damaged block is counted once, by a read and by a scan (the gap it
 * leaves in the save set's chunks is its consequence, not a second
 * block); two damaged blocks are two; a damaged last block (the end
 * chunk) is one. */
static void test_damage_count(void **state)
{
	char *dir = nsr_test_tmpdir("aftd-dmg");
	struct nsr_dev *dev = mt_aftd(dir, "disk1", 0);
	struct nsr_vol_label lab;
	struct nsr_vol_writer *w;
	struct nsr_vol_frag f;
	char path[512];
	uint64_t nread, nscan;
	int rc, reports;

	NSR_UNUSED(state);
	mt_label(dev, "DMG", 32768, &lab);
	w = mt_writer(dev);
	mt_write_ss(w, 7, 400000, 10000, &f); /* 13 blocks */
	assert_int_equal(nsr_vol_writer_close(w), NSR_OK);
	snprintf(path, sizeof(path), "%s/disk1/ss.%010" PRIu32, dir, f.file);

	flip_at(path, (off_t)f.offset + 5 * 32768 + 10000);
	read_damaged(dev, &f, &rc, &nread, &reports, &nscan);
	assert_true(rc == NSR_ERR_CHECKSUM || rc == NSR_ERR_CORRUPT);
	assert_int_equal(nread, 1);
	assert_int_equal(reports, 1);
	assert_int_equal(nscan, 1);

	flip_at(path, (off_t)f.offset + 8 * 32768 + 20000);
	read_damaged(dev, &f, &rc, &nread, &reports, &nscan);
	assert_int_equal(nread, 2);
	assert_int_equal(reports, 2);
	assert_int_equal(nscan, 2);

	/* Damage from block 8 byte 20000 to block 9 byte 100 and beyond: one
	 * stretch of lost data, one report naming the first, two counted. */
	flip_at(path, (off_t)f.offset + 9 * 32768 + 100);
	read_damaged(dev, &f, &rc, &nread, &reports, &nscan);
	assert_int_equal(nread, 3);
	assert_int_equal(reports, 2);
	assert_int_equal(nscan, 3);

	/* The last block, which holds the end chunk. */
	flip_at(path, (off_t)f.offset + 12 * 32768 + 100);
	read_damaged(dev, &f, &rc, &nread, &reports, &nscan);
	assert_int_equal(nread, 4);
	assert_int_equal(nscan, 4);

	assert_int_equal(nsr_dev_close(dev), NSR_OK);
	nsr_test_rmrf(dir);
	free(dir);
}

/* drop_cached - write the file at path back and drop its pages. */
static void drop_cached(const char *path)
{
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fdatasync(fd), 0);
	assert_int_equal(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	close(fd);
}

/* Session files read back block by block, in any order, into aligned
 * and misaligned buffers; the tail is short and after it comes end of
 * file.  A short file's pages are dropped by the fdatasync that makes it
 * durable.  Read front to back, what lies NSR_DROP_LAG stretches behind the
 * reads leaves the page cache (on a disk file system: tmpfs pages cannot
 * be dropped), unless NSR_DROP_BEHIND=0 keeps it; a read further back
 * starts dropping from there. */
static void test_read_blocks(void **state)
{
	char *dir = nsr_test_tmpdir("aftd-rd");
	struct nsr_dev *dev = mt_aftd(dir, "rd", 0);
	struct nsr_dev_file *f = NULL;
	const uint64_t bs = 256 << 10, fsize = 10 * (256 << 10) + 1000;
	const uint64_t st = NSR_DROP_STRETCH, big = 5 * st;
	const size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	static uint8_t buf[5 * NSR_DROP_STRETCH];
	struct statfs sf;
	char path[512];
	uint32_t no = 0, bigno = 0;
	uint64_t k;

	NSR_UNUSED(state);
	mt_fill(1, 0, buf, sizeof(buf));
	assert_int_equal(nsr_dev_file_create(dev, &no, &f), NSR_OK);
	assert_int_equal(nsr_dev_file_append(f, buf, fsize), NSR_OK);
	assert_int_equal(nsr_dev_file_sync(f), NSR_OK);
	assert_int_equal(nsr_dev_file_commit(f), NSR_OK);
	assert_int_equal(nsr_dev_file_close(f), NSR_OK);
	assert_int_equal(statfs(dir, &sf), 0);
	snprintf(path, sizeof(path), "%s/rd/ss.%010" PRIu32, dir, no);
	if (sf.f_type != TMPFS_MAGIC)
		/* too short to drop while written, dropped once durable
		 * but for the page it ends in (nsr_drop_synced) */
		assert_int_equal(nsr_test_cached(path, 0, fsize - fsize % pg),
				 0);
	/* whole blocks (the last one short: the file ends 1000 bytes into
	 * it), reads into a misaligned buffer between them */
	assert_int_equal(nsr_dev_file_open(dev, no, &f), NSR_OK);
	for (k = 0; k <= 11; k++)
		read_check(f, k, bs, fsize);
	read_check(f, 7, bs, fsize);
	read_check_at(f, 7, bs, fsize, 1);
	read_check(f, 2, bs, fsize);
	read_check_at(f, 10, bs, fsize, 1);
	read_check(f, 10, bs, fsize);
	read_check(f, 1, 2 * bs, fsize);
	read_check(f, 5, 2 * bs, fsize);
	assert_int_equal(nsr_dev_file_close(f), NSR_OK);

	/* drop-behind: five stretches read front to back, then from the
	 * start again */
	assert_int_equal(nsr_dev_file_create(dev, &bigno, &f), NSR_OK);
	assert_int_equal(nsr_dev_file_append(f, buf, big), NSR_OK);
	assert_int_equal(nsr_dev_file_commit(f), NSR_OK);
	assert_int_equal(nsr_dev_file_close(f), NSR_OK);
	snprintf(path, sizeof(path), "%s/rd/ss.%010" PRIu32, dir, bigno);
	for (int keep = 0; keep < 2; keep++) {
		drop_cached(path);
		if (keep)
			setenv("NSR_DROP_BEHIND", "0", 1);
		assert_int_equal(nsr_dev_file_open(dev, bigno, &f), NSR_OK);
		unsetenv("NSR_DROP_BEHIND");
		for (k = 0; k < big / (512 << 10); k++)
			read_check(f, k, 512 << 10, big);
		if (sf.f_type != TMPFS_MAGIC) {
			/* dropped a stretch at a time, NSR_DROP_LAG or more
			 * behind: at the last read (in the fifth stretch)
			 * the first two */
			size_t in = nsr_test_cached(path, 0, 2 * st);

			assert_int_equal(in, keep ? 2 * st / pg : 0);
			assert_int_not_equal(
				nsr_test_cached(path, big - st, st), 0);
		}
		/* back to the start: read and dropped again from there */
		for (k = 0; k < big / (512 << 10); k++)
			read_check(f, k, 512 << 10, big);
		if (sf.f_type != TMPFS_MAGIC && !keep)
			assert_int_equal(nsr_test_cached(path, 0, st), 0);
		assert_int_equal(nsr_dev_file_close(f), NSR_OK);
	}
	assert_int_equal(nsr_dev_close(dev), NSR_OK);
	nsr_test_rmrf(dir);
	free(dir);
}

/* count_files - directory entries of dir/sub whose names end in sfx. */
static int count_files(const char *dir, const char *sub, const char *sfx)
{
	char cmd[1024], line[64];
	FILE *p;
	int n = 0;

	snprintf(cmd, sizeof(cmd), "ls -1 '%s/%s' | grep -c '%s$'", dir, sub,
		 sfx);
	p = popen(cmd, "r");
	assert_non_null(p);
	if (fgets(line, sizeof(line), p) != NULL)
		n = atoi(line);
	pclose(p);
	return n;
}

/* A session file has its final name only once its end is durable: one
 * whose writer dies (closed without commit) is invisible to listings and
 * readers, never has its number reused, and is removed by a sweep; an
 * aborted session leaves nothing; an ended one is listed. */
static void test_crash_safe_naming(void **state)
{
	char *dir = nsr_test_tmpdir("aftd-part");
	struct nsr_dev *dev = mt_aftd(dir, "d", 0);
	struct nsr_vol_label lab;
	struct nsr_vol_writer *w;
	struct nsr_vol_session *vs = NULL;
	struct nsr_vol_sshdr h;
	struct nsr_dev_file *f = NULL, *g = NULL;
	struct nsr_vol_frag fr;
	static uint8_t buf[100000];
	uint32_t no = 0, no2 = 0, *nums = NULL, cnt = 0;
	uint64_t bytes = 0;
	size_t n = 0;

	NSR_UNUSED(state);
	mt_fill(1, 0, buf, sizeof(buf));
	/* A writer that "dies": the file stays in progress. */
	assert_int_equal(nsr_dev_file_create(dev, &no, &f), NSR_OK);
	assert_int_equal(nsr_dev_file_append(f, buf, sizeof(buf)), NSR_OK);
	assert_int_equal(nsr_dev_file_sync(f), NSR_OK);
	assert_int_equal(nsr_dev_file_close(f), NSR_OK);
	assert_int_equal(count_files(dir, "d", ".part"), 1);
	assert_int_equal(nsr_dev_file_list(dev, &nums, &n), NSR_OK);
	assert_int_equal(n, 0);
	assert_int_equal(nsr_dev_file_open(dev, no, &f), NSR_ERR_NOTFOUND);
	/* After a restart its number is not reused. */
	assert_int_equal(nsr_dev_close(dev), NSR_OK);
	dev = mt_aftd(dir, "d", 0);
	assert_int_equal(nsr_dev_file_create(dev, &no2, &g), NSR_OK);
	assert_true(no2 > no);
	assert_int_equal(nsr_dev_file_discard(g), NSR_OK);
	assert_int_equal(count_files(dir, "d", ".part"), 1);
	/* The sweep removes it and says how much. */
	assert_int_equal(nsr_dev_file_sweep(dev, &cnt, &bytes), NSR_OK);
	assert_int_equal(cnt, 1);
	assert_int_equal(bytes, sizeof(buf));
	assert_int_equal(count_files(dir, "d", ".part"), 0);
	assert_int_equal(nsr_dev_file_sweep(dev, &cnt, &bytes), NSR_OK);
	assert_int_equal(cnt, 0);

	/* Through the volume writer: abort leaves nothing, end a file. */
	mt_label(dev, "PART", 32768, &lab);
	w = mt_writer(dev);
	mt_hdr(&h, 5);
	assert_int_equal(nsr_vol_session_begin(w, &h, NULL, &vs), NSR_OK);
	assert_int_equal(nsr_vol_session_write(vs, buf, sizeof(buf)), NSR_OK);
	assert_int_equal(count_files(dir, "d", ".part"), 1);
	nsr_vol_session_abort(vs);
	assert_int_equal(count_files(dir, "d", ".part"), 0);
	mt_write_ss(w, 6, 100000, 7000, &fr);
	assert_int_equal(nsr_vol_writer_close(w), NSR_OK);
	assert_int_equal(count_files(dir, "d", ".part"), 0);
	assert_int_equal(nsr_dev_file_list(dev, &nums, &n), NSR_OK);
	assert_int_equal(n, 1);
	assert_int_equal(nums[0], fr.file);
	free(nums);
	assert_int_equal(nsr_dev_close(dev), NSR_OK);
	nsr_test_rmrf(dir);
	free(dir);
}

/* put_file - dir/sub/name with len bytes. */
static void put_file(const char *dir, const char *sub, const char *name,
		     size_t len)
{
	char path[1024];
	static const uint8_t zero[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s/%s", dir, sub, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_true(len <= sizeof(zero));
	assert_int_equal(write(fd, zero, len), (ssize_t)len);
	close(fd);
}

/* test_many_files - a volume that holds many save sets, its files
 * created in scrambled order beside a leftover in progress and names
 * that are not session files: the list is every final file in
 * ascending order, a new file is numbered past the leftover, and a
 * quota counts the sizes of all session files found when opened. */
static void test_many_files(void **state)
{
	enum { NF = 5000, STEP = 3, LEFTOVER = NF * STEP + 7 };
	char *dir = nsr_test_tmpdir("aftd-many"), sub[64], name[64];
	struct nsr_dev *dev;
	struct nsr_dev_file *f = NULL;
	uint32_t *nums = NULL, no = 0, seed = 77;
	static uint32_t order[NF];
	static uint8_t buf[200];
	uint64_t sizes = 0;
	size_t n = 0;

	NSR_UNUSED(state);
	snprintf(sub, sizeof(sub), "%s/m", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	for (uint32_t i = 0; i < NF; i++)
		order[i] = (i + 1) * STEP; /* numbers with gaps */
	for (uint32_t i = NF - 1; i > 0; i--) { /* shuffle */
		uint32_t j = mt_rand(&seed) % (i + 1), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	for (uint32_t i = 0; i < NF; i++) {
		snprintf(name, sizeof(name), "ss.%010" PRIu32, order[i]);
		put_file(dir, "m", name, order[i] % 17);
		sizes += order[i] % 17;
	}
	snprintf(name, sizeof(name), "ss.%010d.part", LEFTOVER);
	put_file(dir, "m", name, 100);
	put_file(dir, "m", "label", 64);
	put_file(dir, "m", "ss.12x", 50);
	put_file(dir, "m", "ss.99999999999", 50); /* past 32 bits */
	put_file(dir, "m", "ss.0000000001.tmp", 50);
	sizes += 100;

	/* Room for exactly 150 bytes more than the session files hold. */
	dev = mt_aftd(dir, "m", sizes + 150);
	assert_int_equal(nsr_dev_file_list(dev, &nums, &n), NSR_OK);
	assert_int_equal(n, NF);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(nums[i], (i + 1) * STEP);
	free(nums);
	assert_int_equal(nsr_dev_file_create(dev, &no, &f), NSR_OK);
	assert_int_equal(no, LEFTOVER + 1);
	assert_int_equal(nsr_dev_file_append(f, buf, 150), NSR_OK);
	assert_int_equal(nsr_dev_file_append(f, buf, 1), NSR_ERR_EOM);
	assert_int_equal(nsr_dev_file_discard(f), NSR_OK);
	assert_int_equal(nsr_dev_close(dev), NSR_OK);
	nsr_test_rmrf(dir);
	free(dir);
}

/* test_quota_shared - two movers on one AFTD with a quota (two device
 * handles, dynamic nsrmmd): each sees what the other wrote, so together
 * they stop near the quota, not near twice it; a removal gives space
 * back to both. */
static void test_quota_shared(void **state)
{
	const uint64_t quota = 4u << 20;
	char *dir = nsr_test_tmpdir("aftd-quota");
	struct nsr_dev *a = mt_aftd(dir, "q", quota), *b;
	struct nsr_dev_file *f = NULL, *g = NULL;
	static uint8_t buf[65536];
	uint32_t no = 0, no2 = 0;
	uint64_t total;
	int fa = NSR_OK, fb = NSR_OK;

	NSR_UNUSED(state);
	mt_fill(3, 0, buf, sizeof(buf));
	b = mt_aftd(dir, "q", quota);
	assert_int_equal(nsr_dev_file_create(a, &no, &f), NSR_OK);
	assert_int_equal(nsr_dev_file_create(b, &no2, &g), NSR_OK);
	for (int i = 0; i < 200 && (fa == NSR_OK || fb == NSR_OK); i++) {
		if (fa == NSR_OK)
			fa = nsr_dev_file_append(f, buf, sizeof(buf));
		if (fb == NSR_OK)
			fb = nsr_dev_file_append(g, buf, sizeof(buf));
	}
	assert_int_equal(fa, NSR_ERR_EOM);
	assert_int_equal(fb, NSR_ERR_EOM);
	total = nsr_dev_file_size(f) + nsr_dev_file_size(g);
	/* at most what one handle wrote since its last sum (a sixteenth
	 * of the quota, and one append) past it */
	assert_true(total <= quota + quota / 16 + sizeof(buf));
	assert_true(total >= quota - 2 * sizeof(buf));
	assert_int_equal(nsr_dev_file_sync(f), NSR_OK);
	assert_int_equal(nsr_dev_file_commit(f), NSR_OK);
	assert_int_equal(nsr_dev_file_close(f), NSR_OK);
	assert_int_equal(nsr_dev_file_discard(g), NSR_OK);
	/* b removed its own file: a third handle sees the room it left */
	assert_int_equal(nsr_dev_close(b), NSR_OK);
	b = mt_aftd(dir, "q", quota);
	assert_int_equal(nsr_dev_file_create(b, &no2, &g), NSR_OK);
	assert_int_equal(nsr_dev_file_append(g, buf, sizeof(buf)), NSR_OK);
	assert_int_equal(nsr_dev_file_discard(g), NSR_OK);
	assert_int_equal(nsr_dev_close(a), NSR_OK);
	assert_int_equal(nsr_dev_close(b), NSR_OK);
	nsr_test_rmrf(dir);
	free(dir);
}

/* test_sweep_spares_live_writers - two movers on one AFTD (two device
 * handles): a sweep by one leaves the other's file in progress alone
 * while it is written, and removes it once its writer is gone. */
static void test_sweep_spares_live_writers(void **state)
{
	char *dir = nsr_test_tmpdir("aftd-live");
	struct nsr_dev *a = mt_aftd(dir, "d", 0), *b;
	struct nsr_dev_file *f = NULL, *g = NULL;
	static uint8_t buf[50000];
	uint32_t no = 0, no2 = 0, cnt = 0;
	uint64_t bytes = 0;

	NSR_UNUSED(state);
	mt_fill(2, 0, buf, sizeof(buf));
	b = mt_aftd(dir, "d", 0);
	assert_int_equal(nsr_dev_file_create(a, &no, &f), NSR_OK);
	assert_int_equal(nsr_dev_file_append(f, buf, sizeof(buf)), NSR_OK);
	/* b starts (its sweep) while a writes: nothing is removed. */
	assert_int_equal(nsr_dev_file_sweep(b, &cnt, &bytes), NSR_OK);
	assert_int_equal(cnt, 0);
	assert_int_equal(count_files(dir, "d", ".part"), 1);
	/* b's own session gets another number. */
	assert_int_equal(nsr_dev_file_create(b, &no2, &g), NSR_OK);
	assert_true(no2 != no);
	assert_int_equal(count_files(dir, "d", ".part"), 2);
	assert_int_equal(nsr_dev_file_append(f, buf, sizeof(buf)), NSR_OK);
	assert_int_equal(nsr_dev_file_sync(f), NSR_OK);
	assert_int_equal(nsr_dev_file_commit(f), NSR_OK);
	assert_int_equal(nsr_dev_file_close(f), NSR_OK);
	/* b's writer "dies": a's sweep now removes that file only. */
	assert_int_equal(nsr_dev_file_close(g), NSR_OK);
	assert_int_equal(nsr_dev_file_sweep(a, &cnt, &bytes), NSR_OK);
	assert_int_equal(cnt, 1);
	assert_int_equal(count_files(dir, "d", ".part"), 0);
	assert_int_equal(nsr_dev_file_open(b, no, &f), NSR_OK);
	assert_int_equal(nsr_dev_file_size(f), 2 * sizeof(buf));
	assert_int_equal(nsr_dev_file_close(f), NSR_OK);
	assert_int_equal(nsr_dev_close(a), NSR_OK);
	assert_int_equal(nsr_dev_close(b), NSR_OK);
	nsr_test_rmrf(dir);
	free(dir);
}

/* resume_intent - dir/d/remove.intent holding text, as a crash left it,
 * finished by nsr_vol_remove_resume: the files it removed (the record is
 * gone afterwards). */
static uint32_t resume_intent(struct nsr_dev *dev, const char *dir,
			      const char *text)
{
	struct nsr_vol_removed rm;
	char path[1024];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/d/remove.intent", dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
	assert_int_equal(nsr_vol_remove_resume(dev, &rm, NULL), NSR_OK);
	assert_int_equal(access(path, F_OK), -1);
	return rm.files;
}

/* Removing save sets gives their session files back; an intent record
 * left by a crash is finished by nsr_vol_remove_resume. */
static void test_remove_ss(void **state)
{
	char *dir = nsr_test_tmpdir("aftd-rm");
	struct nsr_dev *dev = mt_aftd(dir, "d", 0);
	struct nsr_vol_label lab;
	struct nsr_vol_writer *w;
	struct nsr_vol_frag f1, f2, f3;
	struct nsr_vol_removed rm;
	uint32_t two = 2, *nums = NULL;
	size_t n = 0;

	NSR_UNUSED(state);
	mt_label(dev, "RM", 32768, &lab);
	w = mt_writer(dev);
	mt_write_ss(w, 1, 100000, 9000, &f1);
	mt_write_ss(w, 2, 200000, 9000, &f2);
	mt_write_ss(w, 3, 50000, 9000, &f3);
	assert_int_equal(nsr_vol_writer_close(w), NSR_OK);
	assert_int_equal(nsr_vol_remove_ss(dev, &two, NULL, 1, &rm, NULL),
			 NSR_OK);
	assert_int_equal(rm.files, 1);
	assert_true(rm.bytes >= 200000);
	assert_int_equal(nsr_dev_file_list(dev, &nums, &n), NSR_OK);
	assert_int_equal(n, 2);
	assert_int_equal(nums[0], f1.file);
	assert_int_equal(nums[1], f3.file);
	free(nums);
	/* Again: nothing left to remove, no error. */
	assert_int_equal(nsr_vol_remove_ss(dev, &two, NULL, 1, &rm, NULL),
			 NSR_OK);
	assert_int_equal(rm.files, 0);

	/* A crash after the intent record for 3 was written. */
	assert_int_equal(resume_intent(dev, dir, "3\n"), 1);
	assert_int_equal(nsr_dev_file_list(dev, &nums, &n), NSR_OK);
	assert_int_equal(n, 1);
	assert_int_equal(nums[0], f1.file);
	free(nums);
	assert_int_equal(nsr_vol_remove_resume(dev, &rm, NULL), NSR_OK);
	assert_int_equal(rm.files, 0);
	assert_int_equal(nsr_dev_close(dev), NSR_OK);
	nsr_test_rmrf(dir);
	free(dir);
}

/* test_remove_named - a removal told where the media database has each
 * save set reads and removes those files only: a second file of the
 * same save set that was not named stays (no look through the volume);
 * a named file holding another save set is left alone and the save set
 * is looked for everywhere; a named file already gone counts as done;
 * an intent record with files named finishes after a crash; the record's
 * lines read back as written, and reading stops at a bad line. */
static void test_remove_named(void **state)
{
	char *dir = nsr_test_tmpdir("aftd-rmnamed");
	struct nsr_dev *dev = mt_aftd(dir, "d", 0);
	struct nsr_vol_label lab;
	struct nsr_vol_writer *w;
	struct nsr_vol_frag f1, f2a, f2b, f3, f4;
	struct nsr_vol_removed rm;
	uint32_t id, at, *nums = NULL, ids[4], where[4];
	struct nsr_buf rec;
	char line[64];
	size_t n = 0;

	NSR_UNUSED(state);
	mt_label(dev, "RMN", 32768, &lab);
	w = mt_writer(dev);
	mt_write_ss(w, 1, 50000, 9000, &f1);
	mt_write_ss(w, 2, 60000, 9000, &f2a);
	mt_write_ss(w, 2, 70000, 9000, &f2b);
	mt_write_ss(w, 3, 80000, 9000, &f3);
	mt_write_ss(w, 4, 90000, 9000, &f4);
	assert_int_equal(nsr_vol_writer_close(w), NSR_OK);

	/* Named: that file only. */
	id = 2;
	at = f2a.file;
	assert_int_equal(nsr_vol_remove_ss(dev, &id, &at, 1, &rm, NULL),
			 NSR_OK);
	assert_int_equal(rm.files, 1);
	assert_int_equal(nsr_dev_file_list(dev, &nums, &n), NSR_OK);
	assert_int_equal(n, 4);
	assert_int_equal(nums[1], f2b.file);
	free(nums);
	/* Named again, now gone: done, and f2b still not looked for. */
	assert_int_equal(nsr_vol_remove_ss(dev, &id, &at, 1, &rm, NULL),
			 NSR_OK);
	assert_int_equal(rm.files, 0);
	/* Not named: found by its begin chunk. */
	assert_int_equal(nsr_vol_remove_ss(dev, &id, NULL, 1, &rm, NULL),
			 NSR_OK);
	assert_int_equal(rm.files, 1);
	/* Named wrongly (f1 holds save set 1): f1 stays, f3 is found. */
	id = 3;
	at = f1.file;
	assert_int_equal(nsr_vol_remove_ss(dev, &id, &at, 1, &rm, NULL),
			 NSR_OK);
	assert_int_equal(rm.files, 1);
	assert_int_equal(nsr_dev_file_list(dev, &nums, &n), NSR_OK);
	assert_int_equal(n, 2);
	assert_int_equal(nums[0], f1.file);
	assert_int_equal(nums[1], f4.file);
	free(nums);

	/* A crash after the intent record for 4 in f4 was written. */
	snprintf(line, sizeof(line), "4 %u\n", (unsigned)f4.file);
	assert_int_equal(resume_intent(dev, dir, line), 1);
	assert_int_equal(nsr_dev_file_list(dev, &nums, &n), NSR_OK);
	assert_int_equal(n, 1);
	assert_int_equal(nums[0], f1.file);
	free(nums);
	assert_int_equal(nsr_dev_close(dev), NSR_OK);

	/* The record's lines. */
	ids[0] = 5;
	where[0] = 0;
	ids[1] = 6;
	where[1] = 7;
	ids[2] = 4294967295u;
	where[2] = 1;
	nsr_buf_init(&rec, 0);
	assert_int_equal(nsr_vol_remove_intent_format(ids, where, 3, &rec),
			 NSR_OK);
	assert_string_equal(rec.data, "5\n6 7\n4294967295 1\n");
	memset(ids, 0, sizeof(ids));
	memset(where, 0xff, sizeof(where));
	assert_int_equal(nsr_vol_remove_intent_parse(rec.data, rec.len, ids,
						     where, 4), 3);
	assert_int_equal(ids[0], 5);
	assert_int_equal(where[0], 0);
	assert_int_equal(ids[1], 6);
	assert_int_equal(where[1], 7);
	assert_int_equal(ids[2], 4294967295u);
	assert_int_equal(where[2], 1);
	assert_int_equal(nsr_vol_remove_intent_parse(rec.data, rec.len, ids,
						     where, 2), 2);
	nsr_buf_release(&rec);
	assert_int_equal(nsr_vol_remove_intent_parse("5\n6 \n7\n", 7, ids,
						     where, 4), 1);
	assert_int_equal(nsr_vol_remove_intent_parse("4294967296\n", 11, ids,
						     where, 4), 0);
	assert_int_equal(nsr_vol_remove_intent_parse("0\n", 2, ids, where, 4),
			 0);
	assert_int_equal(nsr_vol_remove_intent_parse("5 0\n", 4, ids, where,
						     4), 0);
	assert_int_equal(nsr_vol_remove_intent_parse("5\n6", 3, ids, where,
						     4), 1);
	nsr_test_rmrf(dir);
	free(dir);
}

/* A relabel is finished by nsr_vol_label_resume once its intent record
 * is durable, whatever a crash left of the old volume; a relabel that
 * ends leaves no intent record. */
static void test_relabel_resume(void **state)
{
	char *dir = nsr_test_tmpdir("aftd-relabel");
	struct nsr_dev *dev = mt_aftd(dir, "d", 0);
	struct nsr_vol_label lab, nlab, got;
	struct nsr_vol_writer *w;
	struct nsr_vol_frag f1, f2;
	uint8_t *rec = malloc(NSR_VOL_LABEL_SIZE);
	uint32_t *nums = NULL;
	char path[1024];
	size_t n = 0;
	int finished = -1;
	FILE *fp;

	NSR_UNUSED(state);
	assert_non_null(rec);
	mt_label(dev, "OLD", 32768, &lab);
	w = mt_writer(dev);
	mt_write_ss(w, 1, 100000, 9000, &f1);
	mt_write_ss(w, 2, 100000, 9000, &f2);
	assert_int_equal(nsr_vol_writer_close(w), NSR_OK);
	/* No intent record: nothing to do. */
	assert_int_equal(nsr_vol_label_resume(dev, &finished, NULL), NSR_OK);
	assert_int_equal(finished, 0);

	/* A crash after the intent record and the first removal. */
	assert_int_equal(nsr_vol_label_init(&nlab, "OLD", "Default", 32768,
					    "adv_file", NULL), NSR_OK);
	media_fmt_label_encode(&nlab, rec);
	snprintf(path, sizeof(path), "%s/d/label.intent", dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	assert_int_equal(fwrite(rec, 1, NSR_VOL_LABEL_SIZE, fp),
			 NSR_VOL_LABEL_SIZE);
	fclose(fp);
	assert_int_equal(nsr_dev_file_remove(dev, f1.file), NSR_OK);
	assert_int_equal(nsr_vol_label_resume(dev, &finished, NULL), NSR_OK);
	assert_int_equal(finished, 1);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(nsr_dev_file_list(dev, &nums, &n), NSR_OK);
	assert_int_equal(n, 0);
	free(nums);
	assert_int_equal(nsr_vol_label_read(dev, &got, NULL), NSR_OK);
	assert_memory_equal(got.volid, nlab.volid, 16);
	assert_int_equal(nsr_vol_label_resume(dev, &finished, NULL), NSR_OK);
	assert_int_equal(finished, 0);

	/* A relabel that is not cut short leaves no intent record. */
	w = mt_writer(dev);
	mt_write_ss(w, 3, 50000, 9000, &f1);
	assert_int_equal(nsr_vol_writer_close(w), NSR_OK);
	assert_int_equal(nsr_vol_label_init(&lab, "NEW", "Default", 32768,
					    "adv_file", NULL), NSR_OK);
	assert_int_equal(nsr_vol_label_write(dev, &lab, 0, NULL),
			 NSR_ERR_EXISTS);
	assert_int_equal(nsr_vol_label_write(dev, &lab, 1, NULL), NSR_OK);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(nsr_dev_file_list(dev, &nums, &n), NSR_OK);
	assert_int_equal(n, 0);
	free(nums);
	assert_int_equal(nsr_dev_close(dev), NSR_OK);
	free(rec);
	nsr_test_rmrf(dir);
	free(dir);
}

/* test_commit_noreplace - a session file is never committed over one
 * of the same number (another process's mover took it between this
 * one's check and its create): the commit fails with NSR_ERR_EXISTS and
 * the file already there keeps its bytes. */
static void test_commit_noreplace(void **state)
{
	char *dir = nsr_test_tmpdir("aftd-norepl");
	struct nsr_dev *dev = mt_aftd(dir, "nr", 0);
	struct nsr_dev_file *f = NULL;
	static const char other[] = "the other mover's recorded file";
	char path[512], back[64];
	uint32_t no = 0;
	FILE *fp;

	NSR_UNUSED(state);
	assert_int_equal(nsr_dev_file_create(dev, &no, &f), NSR_OK);
	assert_int_equal(nsr_dev_file_append(f, "mine", 4), NSR_OK);
	assert_int_equal(nsr_dev_file_sync(f), NSR_OK);
	snprintf(path, sizeof(path), "%s/nr/ss.%010" PRIu32, dir, no);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(other, fp);
	fclose(fp);
	assert_int_equal(nsr_dev_file_commit(f), NSR_ERR_EXISTS);
	assert_non_null(strstr(nsr_dev_errmsg(dev), "exists already"));
	nsr_dev_file_close(f);
	fp = fopen(path, "r");
	assert_non_null(fp);
	assert_non_null(fgets(back, sizeof(back), fp));
	fclose(fp);
	assert_string_equal(back, other);
	assert_int_equal(nsr_dev_close(dev), NSR_OK);
	nsr_test_rmrf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parallel_sessions),
		cmocka_unit_test(test_full_disk),
		cmocka_unit_test(test_commit_noreplace),
		cmocka_unit_test(test_truncated_and_foreign),
		cmocka_unit_test(test_read_blocks),
		cmocka_unit_test(test_damage_count),
		cmocka_unit_test(test_crash_safe_naming),
		cmocka_unit_test(test_quota_shared),
		cmocka_unit_test(test_many_files),
		cmocka_unit_test(test_sweep_spares_live_writers),
		cmocka_unit_test(test_remove_ss),
		cmocka_unit_test(test_remove_named),
		cmocka_unit_test(test_relabel_resume),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
