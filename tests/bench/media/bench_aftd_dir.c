/*
 * bench_aftd_dir.c - what an AFTD volume holding many save sets costs
 * the operations that read its whole directory (not run by ctest): a
 * mover opens the device at its start and sweeps leftovers, recovers and
 * removals list its session files.  A volume keeps every save set of its
 * retention period, one file each, so a large site's AFTD holds hundreds
 * of thousands.
 *
 *   bench_aftd_dir [-d dir] [-n files,...] [-r reps] [-R sets,...] [-C]
 *
 * For each count (default 10000,50000,200000) it makes that many empty
 * session files, numbered in a shuffled order as ext4 lists them in
 * hash order anyway, and times nsr_dev_open (the scan for the next file
 * number), nsr_dev_open with a quota (which also sums the files' sizes),
 * nsr_dev_file_sweep and nsr_dev_file_list: the best of reps runs each,
 * in milliseconds, and per 1,000 files, which stays flat when the cost is
 * linear; and 256 MiB appended in 1 MiB writes (not synced) to a session
 * file of that device with a quota, in MB/s (a quota makes the handle sum
 * the directory again now and then, as other movers write into it).
 *
 * Then, for each count given with -R (default 2000,10000), a labeled
 * volume (32 KB blocks) with that many small save sets, written through
 * the volume writer without syncs: 10 of them removed one call each, as
 * nsrd deletes save sets, with the session file the media database
 * records named, and 10 others without (each removal then reads the first
 * block of every file, from the page cache here; with -C the volume's
 * files are dropped from the page cache before each group of 10, so the
 * blocks come from the disk).  Milliseconds per removal, best of reps.
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/dev.h"
#include "nsr/err.h"
#include "nsr/vol.h"

/* now - monotonic seconds. */
static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* make_files - n empty session files in path, numbers 1..n shuffled. */
static int make_files(const char *path, uint32_t n)
{
	uint32_t *v = malloc((size_t)n * sizeof(*v)), seed = 12345;
	char name[4200];
	int rc = 0;

	if (!v)
		return -1;
	for (uint32_t i = 0; i < n; i++)
		v[i] = i + 1;
	for (uint32_t i = n - 1; i > 0; i--) {
		uint32_t j, t;

		seed = seed * 1103515245u + 12345u;
		j = (seed >> 8) % (i + 1);
		t = v[i];
		v[i] = v[j];
		v[j] = t;
	}
	for (uint32_t i = 0; i < n && rc == 0; i++) {
		int fd;

		snprintf(name, sizeof(name), "%s/ss.%010" PRIu32, path, v[i]);
		fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0)
			rc = -1;
		else
			close(fd);
	}
	free(v);
	return rc;
}

/* remove_files - the files and the directory make_files made. */
static void remove_files(const char *path, uint32_t n)
{
	char name[4200];

	for (uint32_t i = 1; i <= n; i++) {
		snprintf(name, sizeof(name), "%s/ss.%010" PRIu32, path, i);
		unlink(name);
	}
	rmdir(path);
}

/* write_quota - seconds to append 256 MiB in 1 MiB writes to a new
 * session file of dev (discarded after); -1 on error. */
static double write_quota(struct nsr_dev *dev)
{
	static uint8_t buf[1 << 20];
	struct nsr_dev_file *f = NULL;
	uint32_t no;
	double t0 = now();
	int rc = nsr_dev_file_create(dev, &no, &f);

	for (int i = 0; rc == NSR_OK && i < 256; i++)
		rc = nsr_dev_file_append(f, buf, sizeof(buf));
	t0 = now() - t0;
	if (f)
		nsr_dev_file_discard(f);
	return rc == NSR_OK ? t0 : -1;
}

/* one_run - the five timings of one run, in seconds; 0 or -1. */
static int one_run(const char *path, uint32_t n, double t[5])
{
	struct nsr_dev_opts quota;
	struct nsr_dev *dev = NULL;
	uint32_t *nums = NULL, cnt = 0;
	uint64_t bytes = 0;
	size_t got = 0;
	double t0;
	int rc;

	memset(&quota, 0, sizeof(quota));
	quota.aftd_quota = 1ull << 50;
	t0 = now();
	rc = nsr_dev_open(NSR_DEV_AFTD, path, NULL, &dev, NULL);
	t[0] = now() - t0;
	nsr_dev_close(dev);
	dev = NULL;
	t0 = now();
	if (rc == NSR_OK)
		rc = nsr_dev_open(NSR_DEV_AFTD, path, &quota, &dev, NULL);
	t[1] = now() - t0;
	t0 = now();
	if (rc == NSR_OK)
		rc = nsr_dev_file_sweep(dev, &cnt, &bytes);
	t[2] = now() - t0;
	t0 = now();
	if (rc == NSR_OK)
		rc = nsr_dev_file_list(dev, &nums, &got);
	t[3] = now() - t0;
	t[4] = rc == NSR_OK ? write_quota(dev) : -1;
	if (rc == NSR_OK && t[4] < 0)
		rc = NSR_ERR_IO;
	free(nums);
	nsr_dev_close(dev);
	if (rc != NSR_OK || got != n) {
		fprintf(stderr, "bench_aftd_dir: %s: %s (%zu of %u files)\n",
			path, nsr_strerror(rc), got, n);
		return -1;
	}
	return 0;
}

/* write_sets - label the AFTD dev and write n save sets of 1,000 bytes,
 * ssids 1..n; file[i] the session file of ssid i + 1. */
static int write_sets(struct nsr_dev *dev, uint32_t n, uint32_t *file)
{
	static uint8_t data[1000];
	struct nsr_vol_label lab;
	struct nsr_vol_wopts o;
	struct nsr_vol_writer *w = NULL;
	int rc;

	memset(&o, 0, sizeof(o));
	o.no_sync = 1;
	rc = nsr_vol_label_init(&lab, "BENCH", "Default", 32768, "adv_file",
				NULL);
	if (rc == NSR_OK)
		rc = nsr_vol_label_write(dev, &lab, 0, NULL);
	if (rc == NSR_OK)
		rc = nsr_vol_writer_open(dev, &o, &w, NULL);
	for (uint32_t i = 0; rc == NSR_OK && i < n; i++) {
		struct nsr_vol_sstail t = {sizeof(data), 1, NSR_VOL_SS_OK};
		struct nsr_vol_session *vs = NULL;
		struct nsr_vol_sshdr h;
		struct nsr_vol_frag fr;

		memset(&h, 0, sizeof(h));
		h.ssid = i + 1;
		snprintf(h.client, sizeof(h.client), "bench");
		snprintf(h.name, sizeof(h.name), "/set%" PRIu32, i + 1);
		snprintf(h.level, sizeof(h.level), "full");
		snprintf(h.pool, sizeof(h.pool), "Default");
		h.savetime = 1763700000;
		rc = nsr_vol_session_begin(w, &h, NULL, &vs);
		if (rc == NSR_OK)
			rc = nsr_vol_session_write(vs, data, sizeof(data));
		if (rc == NSR_OK)
			rc = nsr_vol_session_end(vs, &t, &fr);
		file[i] = fr.file;
	}
	if (w && nsr_vol_writer_close(w) != NSR_OK && rc == NSR_OK)
		rc = NSR_ERR_IO;
	return rc;
}

/* drop_cached - sync, then drop the pages of session files 1..n of the
 * AFTD at path (-C: their first blocks then come from the disk). */
static void drop_cached(const char *path, uint32_t n)
{
	char name[4200];

	sync();
	for (uint32_t i = 1; i <= n; i++) {
		int fd;

		snprintf(name, sizeof(name), "%s/ss.%010" PRIu32, path, i);
		fd = open(name, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		close(fd);
	}
}

/* remove_bench - the removal table's row for n save sets. */
static int remove_bench(const char *dir, uint32_t n, int reps, int cold)
{
	struct nsr_dev_opts create;
	struct nsr_dev *dev = NULL;
	uint32_t *file = calloc(n, sizeof(*file)), next = 1;
	double best[2] = {1e9, 1e9};
	char path[4096], name[4200];
	int rc;

	memset(&create, 0, sizeof(create));
	create.create = 1;
	snprintf(path, sizeof(path), "%s/bench_aftd_rm.%u", dir, n);
	rc = file ? nsr_dev_open(NSR_DEV_AFTD, path, &create, &dev, NULL)
		  : NSR_ERR_NOMEM;
	if (rc == NSR_OK)
		rc = write_sets(dev, n, file);
	for (int r = 0; rc == NSR_OK && r < reps && next + 20 <= n; r++) {
		for (int named = 1; rc == NSR_OK && named >= 0; named--) {
			double t0;

			if (cold)
				drop_cached(path, n);
			t0 = now();

			for (int k = 0; rc == NSR_OK && k < 10; k++, next++) {
				struct nsr_vol_removed rm;

				rc = nsr_vol_remove_ss(dev, &next,
						       named ? &file[next - 1]
							     : NULL,
						       1, &rm, NULL);
				if (rc == NSR_OK && rm.files != 1)
					rc = NSR_ERR_NOTFOUND;
			}
			best[!named] = NSR_MIN(best[!named],
					       (now() - t0) / 10);
		}
	}
	nsr_dev_close(dev);
	/* What the volume holds: its label and session files 1..n. */
	remove_files(path, n);
	snprintf(name, sizeof(name), "%s/label", path);
	unlink(name);
	rmdir(path);
	free(file);
	if (rc != NSR_OK) {
		fprintf(stderr, "bench_aftd_dir: removal bench with %u save "
			"sets: %s\n", n, nsr_strerror(rc));
		return -1;
	}
	printf("| %u | %.2f | %.2f | %.0f x |\n", n, best[0] * 1e3,
	       best[1] * 1e3, best[1] / best[0]);
	return 0;
}

/* main - options, then a table row per count. */
int main(int argc, char **argv)
{
	const char *dir = ".", *counts = "10000,50000,200000";
	const char *sets = "2000,10000";
	char path[4096];
	int reps = 3, cold = 0, c;

	while ((c = getopt(argc, argv, "d:n:r:R:C")) != -1) {
		switch (c) {
		case 'd':
			dir = optarg;
			break;
		case 'n':
			counts = optarg;
			break;
		case 'r':
			reps = atoi(optarg);
			break;
		case 'R':
			sets = optarg;
			break;
		case 'C':
			cold = 1;
			break;
		default:
			fprintf(stderr, "usage: bench_aftd_dir [-d dir] "
					"[-n files,...] [-r reps] "
					"[-R sets,...] [-C]\n");
			return 2;
		}
	}
	if (reps < 1)
		reps = 1;
	printf("| files | open ms | open, quota ms | sweep ms | list ms | "
	       "per 1,000 files: open | list | write with a quota, MB/s "
	       "|\n|---|---|---|---|---|---|---|---|\n");
	for (const char *p = counts; *p;) {
		uint32_t n = (uint32_t)strtoul(p, (char **)&p, 10);
		double best[5] = {1e9, 1e9, 1e9, 1e9, 1e9}, t[5];

		if (*p == ',')
			p++;
		if (n == 0)
			continue;
		snprintf(path, sizeof(path), "%s/bench_aftd_dir.%u", dir, n);
		if (mkdir(path, 0755) != 0 || make_files(path, n) != 0) {
			fprintf(stderr, "bench_aftd_dir: cannot make %u files "
				"in %s: %s\n", n, path, strerror(errno));
			remove_files(path, n);
			return 1;
		}
		for (int r = 0; r < reps; r++) {
			if (one_run(path, n, t) != 0) {
				remove_files(path, n);
				return 1;
			}
			for (int k = 0; k < 5; k++)
				best[k] = NSR_MIN(best[k], t[k]);
		}
		remove_files(path, n);
		printf("| %u", n);
		for (int k = 0; k < 4; k++)
			printf(" | %.1f", best[k] * 1e3);
		printf(" | %.3f | %.3f | %.0f |\n", best[0] * 1e6 / n,
		       best[3] * 1e6 / n, 256.0 * 1.048576 / best[4]);
	}
	printf("\n| save sets on the volume | removal, file named, ms | "
	       "not named, ms | ratio |\n|---|---|---|---|\n");
	for (const char *p = sets; *p;) {
		uint32_t n = (uint32_t)strtoul(p, (char **)&p, 10);

		if (*p == ',')
			p++;
		if (n > 0 && remove_bench(dir, n, reps, cold) != 0)
			return 1;
	}
	return 0;
}
