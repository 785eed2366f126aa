/*
 * bench_media.c - volume write/read throughput on vtape and adv_file
 * against dd(1) with the same block size, measured side by side in one
 * run (not run by ctest): dd writes a plain file in the same directory,
 * and reads the very file our reader reads (the vtape file, the AFTD
 * session file), so both reads see the same bytes in the same place on
 * the disk.
 *
 *   bench_media [-b KB] [-d dir] [-s MB] [-r reps] [-w]
 *
 * Default (durable) mode: every write ends with fdatasync (dd
 * conv=fdatasync; the volume writer's own sync at session end / writer
 * close), and every read starts cold: the file's pages are dropped with
 * posix_fadvise(DONTNEED) before the read, for dd and for us alike.
 * With -w (warm) nothing is synced and reads come from the page cache,
 * which shows the CPU cost of framing and checksums.
 * Each figure is the best of `reps` runs; ratios are ours / dd.  The
 * three writers, and then the four readers (dd on the vtape file, AFTD,
 * vtape, dd on the AFTD file), take turns in a rotating order (run r
 * starts with contender r mod 3, r mod 4): on the virtio disk we measure
 * on, a cold read right after another cold read of 256 MiB was up to 2x
 * slower than the first, whoever did it, so a fixed order measured the
 * position, not the reader; and a read right after a read of the same
 * file was faster (the host caches the virtual disk), so the two reads of
 * one file are never next to each other and each goes first equally
 * often.  Reps that are multiples of 3 and 4 give every
 * contender every place equally often.  A last table gives, per block
 * size, the median over the runs of dd's time / ours within one run,
 * which shrugs off single slow runs better than best-of figures.  A second
 * table gives CPU seconds (user + system) per GiB, also best of `reps`:
 * on a shared machine it is steadier than wall time and shows the cost of
 * framing and checksums.
 */
#include "nsr/compat.h"

#include <dirent.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nsr/dev.h"
#include "nsr/err.h"
#include "nsr/vol.h"

extern char **environ;

static const uint32_t sizes[] = { 32u << 10,  64u << 10, 256u << 10,
				  1u << 20,   4u << 20,	 8u << 20 };
static const char *dir = ".";
static uint64_t total = 256ull << 20;
static uint32_t only_bs; /* -b: run only this block size (0: all) */
static int reps = 3;
static int warm;

/* now - monotonic seconds. */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* cpu - user + system seconds of this process (who = RUSAGE_SELF) or of
 * its waited-for children (RUSAGE_CHILDREN). */
static double cpu(int who)
{
	struct rusage ru;

	getrusage(who, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static double last_cpu; /* CPU seconds of the last measured run */

/* die - report and exit. */
static void die(const char *what, int rc)
{
	fprintf(stderr, "bench_media: %s: %s\n", what, nsr_strerror(rc));
	exit(1);
}

/* settle - let the file system finish what earlier runs left behind
 * before the next timed run: syncfs commits the journal, and with it the
 * discards of deleted files on a file system mounted with `discard`,
 * which otherwise land on the disk while the next contender runs. */
static void settle(void)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY);

	if (fd < 0)
		return;
	(void)syncfs(fd);
	close(fd);
}

/* drop_cache - make the next read of path cold (durable mode). */
static void drop_cache(const char *path)
{
	int fd;

	if (warm)
		return;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return;
	fdatasync(fd);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
}

/* drop_dir - drop_cache for every file in a directory. */
static void drop_dir(const char *d)
{
	char path[1024];
	struct dirent *de;
	DIR *dp = opendir(d);

	if (dp == NULL)
		return;
	while ((de = readdir(dp)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", d, de->d_name);
		drop_cache(path);
	}
	closedir(dp);
}

/* dd's fixed arguments (-Wwrite-strings: argv wants char *). */
static char a_dd[] = "dd", a_zero[] = "if=/dev/zero", a_null[] = "of=/dev/null",
	    a_quiet[] = "status=none", a_sync[] = "conv=fdatasync";

/* run_dd - time one dd command. */
static double run_dd(char *const argv[])
{
	pid_t pid;
	int st;
	double c0 = cpu(RUSAGE_CHILDREN);
	double t0 = now();

	if (posix_spawnp(&pid, "dd", NULL, NULL, argv, environ) != 0)
		die("spawn dd", NSR_ERR_SYSTEM);
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0)
		die("dd failed", NSR_ERR_SYSTEM);
	t0 = now() - t0;
	last_cpu = cpu(RUSAGE_CHILDREN) - c0;
	return t0;
}

/* dd_write - dd from /dev/zero to a plain file. */
static double dd_write(uint32_t bs)
{
	char of[600], bsa[32], cnt[32];
	char *argv[] = { a_dd, a_zero, of, bsa, cnt, a_quiet,
			 warm ? NULL : a_sync, NULL };

	/* A fresh file each time, as the volume writer gets. */
	snprintf(of, sizeof(of), "%s/dd.out", dir);
	unlink(of);
	settle();
	snprintf(of, sizeof(of), "of=%s/dd.out", dir);
	snprintf(bsa, sizeof(bsa), "bs=%" PRIu32, bs);
	snprintf(cnt, sizeof(cnt), "count=%" PRIu64, total / bs);
	return run_dd(argv);
}

/* dev_file - the file our reader reads: the vtape file, or the AFTD
 * session file of fragment f. */
static void dev_file(enum nsr_dev_type t, const struct nsr_vol_frag *f,
		     char *path, size_t size)
{
	if (t == NSR_DEV_VTAPE)
		snprintf(path, size, "%s/bench.vt", dir);
	else
		snprintf(path, size, "%s/bench.aftd/ss.%010" PRIu32, dir,
			 f->file);
}

/* dd_read - dd from the file our reader of type t reads to /dev/null. */
static double dd_read(enum nsr_dev_type t, const struct nsr_vol_frag *f,
		      uint32_t bs)
{
	char in[620], bsa[32], path[600];
	char *argv[] = { a_dd, in, a_null, bsa, a_quiet, NULL };

	dev_file(t, f, path, sizeof(path));
	snprintf(in, sizeof(in), "if=%s", path);
	snprintf(bsa, sizeof(bsa), "bs=%" PRIu32, bs);
	drop_cache(path);
	settle();
	return run_dd(argv);
}

/* open_dev - a fresh labeled device of type t. */
static struct nsr_dev *open_dev(enum nsr_dev_type t, uint32_t bs)
{
	struct nsr_dev_opts o;
	struct nsr_dev *dev = NULL;
	struct nsr_vol_label lab;
	char path[600], cmd[700];
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir,
		 t == NSR_DEV_VTAPE ? "bench.vt" : "bench.aftd");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	if (system(cmd) != 0)
		die("rm", NSR_ERR_SYSTEM);
	settle();
	memset(&o, 0, sizeof(o));
	o.create = 1;
	rc = nsr_dev_open(t, path, &o, &dev, NULL);
	if (rc == NSR_OK)
		rc = nsr_vol_label_init(&lab, "BENCH", "Default", bs, "bench",
					NULL);
	if (rc == NSR_OK)
		rc = nsr_vol_label_write(dev, &lab, 1, NULL);
	if (rc != NSR_OK)
		die("label", rc);
	return dev;
}

/* ours_write - one save set of `total` bytes in bs-sized writes. */
static double ours_write(enum nsr_dev_type t, uint32_t bs, uint8_t *buf,
			 struct nsr_vol_frag *frag)
{
	struct nsr_dev *dev = open_dev(t, bs);
	struct nsr_vol_wopts o = { NULL, 0, warm };
	struct nsr_vol_writer *w = NULL;
	struct nsr_vol_session *s = NULL;
	struct nsr_vol_sshdr h;
	struct nsr_vol_sstail tl = { total, 1, 0 };
	uint64_t off;
	double t0, c0;
	int rc;

	memset(&h, 0, sizeof(h));
	h.ssid = 1;
	snprintf(h.client, sizeof(h.client), "bench");
	snprintf(h.name, sizeof(h.name), "/bench");
	c0 = cpu(RUSAGE_SELF);
	t0 = now();
	rc = nsr_vol_writer_open(dev, &o, &w, NULL);
	if (rc == NSR_OK)
		rc = nsr_vol_session_begin(w, &h, NULL, &s);
	for (off = 0; rc == NSR_OK && off < total; off += bs)
		rc = nsr_vol_session_write(s, buf, bs);
	if (rc == NSR_OK)
		rc = nsr_vol_session_end(s, &tl, frag);
	if (rc == NSR_OK)
		rc = nsr_vol_writer_close(w);
	t0 = now() - t0;
	last_cpu = cpu(RUSAGE_SELF) - c0;
	if (rc != NSR_OK)
		die("write", rc);
	nsr_dev_close(dev);
	return t0;
}

/* sink - count delivered bytes. */
static int sink(void *arg, const void *p, size_t len)
{
	NSR_UNUSED(p);
	*(uint64_t *)arg += len;
	return 0;
}

/* ours_read - read the save set back through the reader. */
static double ours_read(enum nsr_dev_type t, const struct nsr_vol_frag *f)
{
	struct nsr_dev_opts o;
	struct nsr_dev *dev = NULL;
	struct nsr_vol_reader *r = NULL;
	char path[600];
	uint64_t n = 0, got = 0;
	double t0, c0;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir,
		 t == NSR_DEV_VTAPE ? "bench.vt" : "bench.aftd");
	if (t == NSR_DEV_VTAPE)
		drop_cache(path);
	else
		drop_dir(path);
	settle();
	memset(&o, 0, sizeof(o));
	o.read_only = 1;
	c0 = cpu(RUSAGE_SELF);
	t0 = now();
	rc = nsr_dev_open(t, path, &o, &dev, NULL);
	if (rc == NSR_OK)
		rc = nsr_vol_reader_open(dev, NULL, &r, NULL);
	if (rc == NSR_OK)
		rc = nsr_vol_reader_read(r, f, sink, &n, NULL, NULL, &got);
	t0 = now() - t0;
	last_cpu = cpu(RUSAGE_SELF) - c0;
	if (rc != NSR_OK || n != total)
		die("read", rc ? rc : NSR_ERR_IO);
	nsr_vol_reader_close(r);
	nsr_dev_close(dev);
	return t0;
}

/* best - keep the shortest time. */
static void best(double *b, double t)
{
	if (*b == 0 || t < *b)
		*b = t;
}

/* Writers: dd, vtape, AFTD.  Readers: dd on the vtape file, vtape, AFTD,
 * dd on the AFTD session file. */
enum { DDW, VTW, AFW, DVT, VTR, AFR, DAF, N };

#define MAX_REPS 64
/* runs[c][r]: the time of contender c in run r of the current block size;
 * medtab[k][c]: the median over the runs of dd's time / c's time in the
 * same run (runs next to each other in time see the disk in the same
 * mood, which best-of figures taken minutes apart do not). */
static double runs[N][MAX_REPS];
static double medtab[NSR_ARRAY_SIZE(sizes)][N];

/* cmp_dbl - qsort order of doubles. */
static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* median_ratio - median over the runs of runs[ref][r] / runs[c][r]. */
static double median_ratio(size_t ref, size_t c)
{
	double r[MAX_REPS];
	int i;

	for (i = 0; i < reps; i++)
		r[i] = runs[ref][i] / runs[c][i];
	qsort(r, (size_t)reps, sizeof(r[0]), cmp_dbl);
	return reps % 2 ? r[reps / 2] : (r[reps / 2 - 1] + r[reps / 2]) / 2;
}

/* measure - run contender (turn mod 3) of the writers (reading 0) or
 * (turn mod 4) of the readers (reading 1) once and keep its best time and
 * CPU. */
static void measure(size_t k, int rep, size_t turn, uint32_t bs,
		    uint8_t *buf, double *t, double (*cputab)[N],
		    struct nsr_vol_frag *fv, struct nsr_vol_frag *fa,
		    int reading)
{
	/* Two reads of the same file are never next to each other: the
	 * second would find it in the host's cache of the virtual disk. */
	static const size_t rorder[4] = { DVT, AFR, VTR, DAF };
	size_t c = reading ? rorder[turn % 4] : DDW + turn % 3;
	double x;

	switch (c) {
	case DDW: x = dd_write(bs); break;
	case VTW: x = ours_write(NSR_DEV_VTAPE, bs, buf, fv); break;
	case AFW: x = ours_write(NSR_DEV_AFTD, bs, buf, fa); break;
	case DVT: x = dd_read(NSR_DEV_VTAPE, fv, bs); break;
	case DAF: x = dd_read(NSR_DEV_AFTD, fa, bs); break;
	case VTR: x = ours_read(NSR_DEV_VTAPE, fv); break;
	default: x = ours_read(NSR_DEV_AFTD, fa); break;
	}
	best(&t[c], x);
	best(&cputab[k][c], last_cpu);
	runs[c][rep] = x;
}

/* picked - is sizes[k] one this run measures? */
static int picked(size_t k)
{
	return only_bs == 0 || sizes[k] == only_bs;
}

/* main - the table. */
int main(int argc, char **argv)
{
	static double cputab[NSR_ARRAY_SIZE(sizes)][N];
	struct nsr_vol_frag fv, fa;
	uint8_t *buf;
	size_t k, i;
	int c, rep;
	double mb;

	while ((c = getopt(argc, argv, "b:d:s:r:w")) != -1) {
		switch (c) {
		case 'b':
			only_bs = (uint32_t)strtoul(optarg, NULL, 10) << 10;
			break;
		case 'd':
			dir = optarg;
			break;
		case 's':
			total = strtoull(optarg, NULL, 10) << 20;
			break;
		case 'r':
			reps = atoi(optarg);
			if (reps < 1 || reps > MAX_REPS) {
				fprintf(stderr, "bench_media: -r 1..%d\n",
					MAX_REPS);
				return 2;
			}
			break;
		case 'w':
			warm = 1;
			break;
		default:
			fprintf(stderr, "usage: bench_media [-b KB] [-d dir] "
					"[-s MB] [-r reps] [-w]\n");
			return 2;
		}
	}
	buf = malloc(8u << 20);
	if (buf == NULL)
		die("malloc", NSR_ERR_NOMEM);
	for (i = 0; i < (8u << 20); i++)
		buf[i] = (uint8_t)(i * 131 + (i >> 12));
	mb = (double)total / 1048576.0;
	printf("# bench_media: %" PRIu64 " MiB per run, best of %d, %s\n",
	       total >> 20, reps,
	       warm ? "warm: no sync, reads from page cache"
		    : "durable: fdatasync after writes, cold reads "
		      "(fadvise DONTNEED)");
	printf("| block | dd write | vtape write | ratio | aftd write | "
	       "ratio | dd read vtape file | vtape read | ratio | "
	       "dd read aftd file | aftd read | ratio |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (k = 0; k < NSR_ARRAY_SIZE(sizes); k++) {
		double t[N] = { 0 };
		uint32_t bs = sizes[k];

		if (!picked(k))
			continue;
		for (rep = 0; rep < reps; rep++) {
			for (i = 0; i < 3; i++)
				measure(k, rep, (size_t)rep + i, bs, buf, t,
					cputab, &fv, &fa, 0);
			for (i = 0; i < 4; i++)
				measure(k, rep, (size_t)rep + i, bs, buf, t,
					cputab, &fv, &fa, 1);
		}
		for (i = VTW; i <= AFW; i++)
			medtab[k][i] = median_ratio(DDW, i);
		medtab[k][VTR] = median_ratio(DVT, VTR);
		medtab[k][AFR] = median_ratio(DAF, AFR);
		printf("| %" PRIu32 " KB | %.0f | %.0f | %.2f | %.0f | %.2f "
		       "| %.0f | %.0f | %.2f | %.0f | %.0f | %.2f |\n",
		       bs >> 10, mb / t[DDW], mb / t[VTW], t[DDW] / t[VTW],
		       mb / t[AFW], t[DDW] / t[AFW], mb / t[DVT],
		       mb / t[VTR], t[DVT] / t[VTR], mb / t[DAF],
		       mb / t[AFR], t[DAF] / t[AFR]);
		fflush(stdout);
	}
	printf("# MiB/s of save-set data; ratio = dd's time / ours (>= 0.95 "
	       "is the target from 256 KB up)\n\n");
	printf("| block | CPU s/GiB: dd write | vtape write | aftd write | "
	       "dd read (vtape file) | vtape read | aftd read |\n");
	printf("|---|---|---|---|---|---|---|\n");
	for (k = 0; k < NSR_ARRAY_SIZE(sizes); k++)
		if (picked(k))
			printf("| %" PRIu32 " KB | %.2f | %.2f | %.2f | %.2f | "
			       "%.2f | %.2f |\n", sizes[k] >> 10,
			       cputab[k][DDW] * 1024 / mb,
			       cputab[k][VTW] * 1024 / mb,
			       cputab[k][AFW] * 1024 / mb,
			       cputab[k][DVT] * 1024 / mb,
			       cputab[k][VTR] * 1024 / mb,
			       cputab[k][AFR] * 1024 / mb);
	printf("\n| block | median run ratio: vtape write | aftd write | "
	       "vtape read | aftd read |\n");
	printf("|---|---|---|---|---|\n");
	for (k = 0; k < NSR_ARRAY_SIZE(sizes); k++)
		if (picked(k))
			printf("| %" PRIu32 " KB | %.2f | %.2f | %.2f | %.2f "
			       "|\n", sizes[k] >> 10, medtab[k][VTW],
			       medtab[k][AFW], medtab[k][VTR], medtab[k][AFR]);
	printf("# per run (one of each contender, back to back): dd's time "
	       "/ ours; the median over the %d runs\n", reps);
	free(buf);
	return 0;
}
