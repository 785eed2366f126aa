/*
 * bench_demux.c - the volume reader restoring one save set of four
 * multiplexed on a vtape, against the same save set written alone, with
 * no daemons in between: what part 2 of run-sessions.sh measures through
 * nsrmmd and recover, here down to the reader's own cost.
 *
 * Four sessions of MB megabytes each are written round robin in pieces of
 * 1 MiB (what a mover receives per data call) onto a vtape labeled in
 * format version 1 (blocks name no save set: the reader looks into every
 * block from the save set's first to its last, as every reader did before
 * version 2) and onto one labeled in version 2 (the reader spaces over
 * the other sessions' blocks by their header); and one session alone
 * onto a third vtape.  The last save set is then read back from each,
 * and once more from the version 2 volume with NSR_TEST_VTAPE_NO_PEEK set
 * (the vtape then reads like a drive, which must read a record to see
 * its header: the reader reads every block but looks into ours only),
 * RUNS times, in turns; the page cache is warm (no syncs), so the figures
 * are the reader's CPU cost; with -c every read starts cold (the file's
 * pages dropped with posix_fadvise(DONTNEED) first), so they include what
 * the disk must deliver.  Each figure is the best run; CPU is user +
 * system seconds per GiB delivered.
 *
 *   bench_demux [-c] [-d DIR] [-s MB] [-r RUNS] [-b KB]
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "nsr/dev.h"
#include "nsr/err.h"
#include "nsr/vol.h"

#define NSESS 4
#define PIECE (1u << 20)

/* stamp - the monotonic clock and this process's CPU time (user +
 * system), in seconds. */
static void stamp(double *wall, double *cpu)
{
	struct timespec ts;
	struct rusage ru;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	getrusage(RUSAGE_SELF, &ru);
	*wall = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	*cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* die - report and exit. */
static void die(const char *what, int rc)
{
	fprintf(stderr, "bench_demux: %s: %s\n", what, nsr_strerror(rc));
	exit(1);
}

/* open_vtape - dir/name, created if missing. */
static struct nsr_dev *open_vtape(const char *dir, const char *name, int ro)
{
	struct nsr_dev_opts o;
	struct nsr_dev *dev = NULL;
	char path[1024];
	int rc;

	memset(&o, 0, sizeof(o));
	o.create = !ro;
	o.read_only = ro;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	rc = nsr_dev_open(NSR_DEV_VTAPE, path, &o, &dev, NULL);
	if (rc != NSR_OK)
		die(path, rc);
	return dev;
}

/* write_volume - label a vtape in format version ver and write nsess
 * sessions of total bytes each, round robin; *last = the last one's
 * fragment. */
static void write_volume(const char *dir, const char *name, uint32_t ver,
			 uint32_t bs, int nsess, uint64_t total,
			 const uint8_t *data, struct nsr_vol_frag *last)
{
	struct nsr_dev *dev = open_vtape(dir, name, 0);
	struct nsr_vol_session *s[NSESS];
	struct nsr_vol_wopts wo = { NULL, 0, 1 };
	struct nsr_vol_sstail t = { total, 1, NSR_VOL_SS_OK };
	struct nsr_vol_writer *w = NULL;
	struct nsr_vol_label lab;
	struct nsr_vol_sshdr h;
	uint64_t off;
	int i, rc;

	rc = nsr_vol_label_init(&lab, name, "Default", bs, "vtape", NULL);
	lab.version = ver;
	if (rc == NSR_OK)
		rc = nsr_vol_label_write(dev, &lab, 1, NULL);
	if (rc == NSR_OK)
		rc = nsr_vol_writer_open(dev, &wo, &w, NULL);
	if (rc != NSR_OK)
		die("label", rc);
	memset(&h, 0, sizeof(h));
	snprintf(h.client, sizeof(h.client), "bench");
	snprintf(h.level, sizeof(h.level), "full");
	for (i = 0; i < nsess; i++) {
		h.ssid = (uint32_t)(i + 1);
		snprintf(h.name, sizeof(h.name), "/s%d", i + 1);
		rc = nsr_vol_session_begin(w, &h, NULL, &s[i]);
		if (rc != NSR_OK)
			die("begin", rc);
	}
	for (off = 0; off < total; off += PIECE) {
		size_t n = (size_t)NSR_MIN((uint64_t)PIECE, total - off);

		for (i = 0; i < nsess; i++) {
			rc = nsr_vol_session_write(s[i], data, n);
			if (rc != NSR_OK)
				die("write", rc);
		}
	}
	for (i = 0; i < nsess; i++) {
		rc = nsr_vol_session_end(s[i], &t, last);
		if (rc != NSR_OK)
			die("end", rc);
	}
	rc = nsr_vol_writer_close(w);
	if (rc == NSR_OK)
		rc = nsr_dev_close(dev);
	if (rc != NSR_OK)
		die("close", rc);
}

/* sink - count what the reader delivers. */
static int sink(void *arg, const void *p, size_t len)
{
	NSR_UNUSED(p);
	*(uint64_t *)arg += len;
	return 0;
}

static int cold; /* -c: drop the file's pages before each read */

/* drop_cache - make the next read of path come from the disk. */
static void drop_cache(const char *path)
{
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return;
	(void)fdatasync(fd);
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
}

struct result {
	double wall, cpu; /* best */
	struct nsr_vol_rstats st;
};

/* read_one - read frag from dir/name once; keep the best times. */
static void read_one(const char *dir, const char *name,
		     const struct nsr_vol_frag *f, uint64_t want,
		     struct result *res)
{
	struct nsr_dev *dev;
	struct nsr_vol_reader *r = NULL;
	uint64_t got = 0, n = 0;
	double t0, c0, t, c;
	char path[1024];
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (cold)
		drop_cache(path);
	dev = open_vtape(dir, name, 1);

	stamp(&t0, &c0);
	rc = nsr_vol_reader_open(dev, NULL, &r, NULL);
	if (rc == NSR_OK)
		rc = nsr_vol_reader_read(r, f, sink, &n, NULL, NULL, &got);
	stamp(&t, &c);
	t -= t0;
	c -= c0;
	if (rc != NSR_OK || n != want)
		die("read", rc != NSR_OK ? rc : NSR_ERR_CORRUPT);
	nsr_vol_reader_stats(r, &res->st);
	nsr_vol_reader_close(r);
	nsr_dev_close(dev);
	if (res->wall == 0 || t < res->wall)
		res->wall = t;
	if (res->cpu == 0 || c < res->cpu)
		res->cpu = c;
}

/* row - one line of the table. */
static void row(const char *what, const struct result *x, uint64_t bytes,
		const struct result *alone)
{
	double gib = (double)bytes / (1u << 30);

	printf("| %s | %.0f | %.2f | %.2f | %.2f | %" PRIu64 " | %" PRIu64
	       " | %" PRIu64 " |\n", what, (double)bytes / x->wall / 1e6,
	       alone->wall / x->wall, x->cpu / gib, alone->cpu / x->cpu,
	       x->st.blocks_read, x->st.blocks_skipped, x->st.blocks_passed);
}

/* main - write the three volumes, read in turns, print the table. */
int main(int argc, char **argv)
{
	static const char *names[3] = { "alone.vt", "v1.vt", "v2.vt" };
	const char *dir = ".";
	uint64_t total;
	uint32_t bs = 256u << 10;
	struct nsr_vol_frag f[3];
	struct result res[4];
	uint8_t *data;
	char path[1024];
	int c, mb = 256, runs = 5, i, k;

	while ((c = getopt(argc, argv, "cd:s:r:b:")) != -1) {
		switch (c) {
		case 'c': cold = 1; break;
		case 'd': dir = optarg; break;
		case 's': mb = atoi(optarg); break;
		case 'r': runs = atoi(optarg); break;
		case 'b': bs = (uint32_t)atoi(optarg) << 10; break;
		default:
			fprintf(stderr, "usage: bench_demux [-c] [-d DIR] "
				"[-s MB] [-r RUNS] [-b KB]\n");
			return 2;
		}
	}
	if (mb < 1 || runs < 1)
		return 2;
	total = (uint64_t)mb << 20;
	data = malloc(PIECE);
	if (data == NULL)
		die("malloc", NSR_ERR_NOMEM);
	srand(1);
	for (i = 0; i < (int)PIECE; i++)
		data[i] = (uint8_t)rand();
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	write_volume(dir, names[0], 2, bs, 1, total, data, &f[0]);
	write_volume(dir, names[1], 1, bs, NSESS, total, data, &f[1]);
	write_volume(dir, names[2], 2, bs, NSESS, total, data, &f[2]);
	memset(res, 0, sizeof(res));
	for (k = 0; k < runs; k++) {
		for (i = 0; i < 3; i++)
			read_one(dir, names[i], &f[i], total, &res[i]);
		setenv("NSR_TEST_VTAPE_NO_PEEK", "1", 1);
		read_one(dir, names[2], &f[2], total, &res[3]);
		unsetenv("NSR_TEST_VTAPE_NO_PEEK");
	}
	printf("# %d MB per save set, %u KB blocks, best of %d; %s\n", mb,
	       bs >> 10, runs,
	       cold ? "cold reads (pages dropped)" : "warm page cache");
	printf("| read of one save set | MB/s | x alone | CPU s/GiB | "
	       "x alone (CPU) | blocks read | of them skipped | passed "
	       "unread |\n|---|---|---|---|---|---|---|---|\n");
	row("written alone", &res[0], total, &res[0]);
	row("one of 4, version 1 (every block read)", &res[1], total,
	    &res[0]);
	row("one of 4, version 2 (others passed)", &res[2], total, &res[0]);
	row("one of 4, version 2, read like a drive", &res[3], total,
	    &res[0]);
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	free(data);
	return 0;
}
