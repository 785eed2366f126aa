/*
 * bench_aftd_dir.c - what an AFTD volume holding many save sets costs
 * the operations that read its whole directory (not run by ctest): a
 * mover opens the device at its start and sweeps leftovers, recovers and
 * removals list its session files.  A volume keeps every save set of its
 * retention period, one file each, so a large site's AFTD holds hundreds
 * of thousands.
 *
 *   bench_aftd_dir [-d dir] [-n files,...] [-r reps]
 *
 * For each count (default 10000,50000,200000) it makes that many empty
 * session files, numbered in a shuffled order as ext4 lists them in
 * hash order anyway, and times nsr_dev_open (the scan for the next file
 * number), nsr_dev_open with a quota (which also sums the files' sizes),
 * nsr_dev_file_sweep and nsr_dev_file_list: the best of reps runs each,
 * in milliseconds, and per 1,000 files, which stays flat when the cost is
 * linear.
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/dev.h"
#include "nsr/err.h"

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

/* one_run - the four timings of one run, in seconds; 0 or -1. */
static int one_run(const char *path, uint32_t n, double t[4])
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
	free(nums);
	nsr_dev_close(dev);
	if (rc != NSR_OK || got != n) {
		fprintf(stderr, "bench_aftd_dir: %s: %s (%zu of %u files)\n",
			path, nsr_strerror(rc), got, n);
		return -1;
	}
	return 0;
}

/* main - options, then a table row per count. */
int main(int argc, char **argv)
{
	const char *dir = ".", *counts = "10000,50000,200000";
	char path[4096];
	int reps = 3, c;

	while ((c = getopt(argc, argv, "d:n:r:")) != -1) {
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
		default:
			fprintf(stderr, "usage: bench_aftd_dir [-d dir] "
					"[-n files,...] [-r reps]\n");
			return 2;
		}
	}
	if (reps < 1)
		reps = 1;
	printf("| files | open ms | open, quota ms | sweep ms | list ms | "
	       "per 1,000 files: open | list |\n|---|---|---|---|---|---|---|\n");
	for (const char *p = counts; *p;) {
		uint32_t n = (uint32_t)strtoul(p, (char **)&p, 10);
		double best[4] = {1e9, 1e9, 1e9, 1e9}, t[4];

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
			for (int k = 0; k < 4; k++)
				best[k] = NSR_MIN(best[k], t[k]);
		}
		remove_files(path, n);
		printf("| %u", n);
		for (int k = 0; k < 4; k++)
			printf(" | %.1f", best[k] * 1e3);
		printf(" | %.3f | %.3f |\n", best[0] * 1e6 / n,
		       best[3] * 1e6 / n);
	}
	return 0;
}
