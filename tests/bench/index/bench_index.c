/*
 * bench_index.c - the client file index at the library level: build a
 * client's index of 30 save sets totalling -n entries over a synthetic
 * tree, then measure what a browse costs.
 *
 * The tree: directories of varied size (70 % hold 1-16 files, 25 %
 * 16-256, 5 % 256-8192), each directory the child of a random earlier
 * one.  Save sets: two fulls (the 1st and the 16th), each holding every
 * directory and file with every directory's entry list, and 28
 * incrementals sharing what is left of -n: each saves every directory
 * and its entry list (as a level save does: nsr_saver never skips a
 * directory) and a run of changed files in each, about the same
 * fraction everywhere (files are never deleted, so every list names
 * every child; with -c, some directories gain a file each day).
 *
 * Reported: insert rate (entries per second of begin/add/add_list/
 * commit, lists included in the time, not in the count; per wall second
 * and per CPU second of the process, the latter what a loaded machine
 * does not stretch; fsync waits are in the first only), bytes per entry
 * on disk (every file of the client's index directory / entries),
 * directory listing latency (nsr_cfi_list_dir of -q random directories
 * as of random times between the first save and after the last, p50/p99/
 * max), versions latency (nsr_cfi_versions of -q random files).
 *
 * Usage: bench_index [-n entries] [-q queries] [-d dir] [-s seed] [-r] [-L]
 *                    [-c pct]
 *   -r  reuse the index an earlier run left in dir (skip the build)
 *   -c  in each incremental, pct % of the directories (at random) gain a
 *       new file, saved then, so their lists change (default 0)
 *   -L  no entry lists (the bytes of the entries alone; browsing then
 *       merges every save set, as for an index written before lists)
 * Not run by ctest; results go to tests/bench/index/RESULTS.md.
 */
#include "nsr/compat.h"

#include <dirent.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nsr/asm.h"
#include "nsr/cfi.h"
#include "nsr/err.h"
#include "nsr/fileio.h"

#define NSS 30
#define BASE_TIME 1700000000LL
#define DAY 86400LL
#define BATCH 1024
#define CLIENT "bench"

/* One directory of the synthetic tree. */
struct dir {
	char *path;
	uint32_t parent;
	uint32_t files;
	uint32_t *sub; /* subdirectory indexes */
	uint32_t nsub;
};

static struct dir *dirs;
static uint32_t ndirs;
static uint64_t seed = 42;
static uint64_t names; /* list names written */
static int no_lists;   /* -L */
static unsigned churn; /* -c: % of directories changed a day */

/* die - report a failed call and exit. */
static void die(const char *what, int rc)
{
	fprintf(stderr, "bench_index: %s: %s\n", what, nsr_strerror(rc));
	exit(1);
}

/* rnd - xorshift64* pseudo-random numbers (reproducible). */
static uint64_t rnd(void)
{
	seed ^= seed >> 12;
	seed ^= seed << 25;
	seed ^= seed >> 27;
	return seed * 2685821657736338717ULL;
}

/* cpu - this process's CPU seconds (what a loaded machine does not
 * stretch as it stretches wall time). */
static double cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* mono - monotonic seconds. */
static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* dir_size - files of a new directory: 70 % small, 25 % middle, 5 %
 * large. */
static uint32_t dir_size(void)
{
	uint64_t r = rnd() % 100;

	if (r < 70)
		return 1 + (uint32_t)(rnd() % 16);
	if (r < 95)
		return 16 + (uint32_t)(rnd() % 241);
	return 256 + (uint32_t)(rnd() % 7937);
}

/* make_tree - directories until files + directories reach want. */
static void make_tree(uint64_t want)
{
	uint64_t have = 0;
	uint32_t cap = 0;

	while (have < want) {
		struct dir *d;
		uint32_t i = ndirs;

		if (ndirs == cap) {
			cap = cap ? cap * 2 : 1024;
			dirs = realloc(dirs, cap * sizeof(*dirs));
			if (dirs == NULL)
				die("tree", NSR_ERR_NOMEM);
		}
		d = &dirs[ndirs++];
		memset(d, 0, sizeof(*d));
		d->files = dir_size();
		if (i == 0) {
			d->path = strdup("/bench");
		} else {
			struct dir *p;

			d->parent = (uint32_t)(rnd() % i);
			p = &dirs[d->parent];
			if (asprintf(&d->path, "%s/dir%05u", p->path, i) < 0)
				d->path = NULL;
			p->sub = realloc(p->sub, (p->nsub + 1) *
							 sizeof(*p->sub));
			if (p->sub == NULL)
				die("tree", NSR_ERR_NOMEM);
			p->sub[p->nsub++] = i;
		}
		if (d->path == NULL)
			die("tree", NSR_ERR_NOMEM);
		have += 1 + d->files;
	}
}

/* file_name - the name of file k of a directory. */
static void file_name(char *out, size_t n, uint32_t k)
{
	snprintf(out, n, "file%06u.dat", k);
}

struct writer {
	struct nsr_cfi *c;
	uint64_t ssid;
	int64_t t;
	uint64_t off, entries;
	struct nsr_cfi_entry e[BATCH];
	char paths[BATCH][256];
	size_t n;
};

/* w_flush - add the batched entries. */
static void w_flush(struct writer *w)
{
	int rc = nsr_cfi_add(w->c, w->ssid, w->e, w->n);

	if (rc)
		die("add", rc);
	w->entries += w->n;
	w->n = 0;
}

/* w_entry - batch one entry of path. */
static void w_entry(struct writer *w, const char *dir, const char *name,
		    int isdir)
{
	struct nsr_cfi_entry *e = &w->e[w->n];

	if (name)
		snprintf(w->paths[w->n], sizeof(w->paths[0]), "%s/%s", dir,
			 name);
	else
		snprintf(w->paths[w->n], sizeof(w->paths[0]), "%s", dir);
	memset(e, 0, sizeof(*e));
	e->path = w->paths[w->n];
	e->type = isdir ? NSR_ASM_DIR : NSR_ASM_REG;
	e->mode = isdir ? 0755 : 0644;
	e->uid = 1000;
	e->gid = 1000;
	e->size = isdir ? 4096 : rnd() % 1000000;
	e->mtime = w->t - (int64_t)(rnd() % (30 * DAY));
	e->mtime_nsec = (uint32_t)(rnd() % 1000000000u);
	e->offset = w->off;
	w->off += 512 + e->size;
	if (++w->n == BATCH)
		w_flush(w);
}

/* w_list - the directory's whole entry list (subdirectories and files,
 * sorted: "dir" < "file"). */
static void w_list(struct writer *w, uint32_t di)
{
	struct dir *d = &dirs[di];
	uint32_t total = d->nsub + d->files, k = 0;
	char (*nm)[24] = malloc((size_t)(total ? total : 1) * sizeof(*nm));
	const char **v = malloc((size_t)(total ? total : 1) * sizeof(*v));
	int rc;

	if (nm == NULL || v == NULL)
		die("list", NSR_ERR_NOMEM);
	for (uint32_t i = 0; i < d->nsub; i++, k++) {
		snprintf(nm[k], sizeof(nm[k]), "%s",
			 strrchr(dirs[d->sub[i]].path, '/') + 1);
		v[k] = nm[k];
	}
	for (uint32_t i = 0; i < d->files; i++, k++) {
		file_name(nm[k], sizeof(nm[k]), i);
		v[k] = nm[k];
	}
	if (no_lists) {
		free(nm);
		free(v);
		return;
	}
	names += total;
	w_flush(w); /* entries before the list, as a saver sends them */
	rc = nsr_cfi_add_list(w->c, w->ssid, d->path, total, 0,
			      total ? v : NULL, total);
	if (rc)
		die("add_list", rc);
	free(nm);
	free(v);
}

/* save_full - every directory, file and list. */
static void save_full(struct writer *w)
{
	char name[24];

	for (uint32_t di = 0; di < ndirs; di++) {
		w_entry(w, dirs[di].path, NULL, 1);
		for (uint32_t k = 0; k < dirs[di].files; k++) {
			file_name(name, sizeof(name), k);
			w_entry(w, dirs[di].path, name, 0);
		}
		w_list(w, di);
	}
}

/* save_incr - every directory with its list (a level save reads and
 * saves every directory) and a fraction f of the files, a random run of
 * each directory's files (rounded at random). */
static void save_incr(struct writer *w, double f)
{
	char name[24];

	for (uint32_t di = 0; di < ndirs; di++) {
		struct dir *d = &dirs[di];
		double x = d->files * f + (double)(rnd() % 1000) / 1000.0;
		uint32_t ch = (uint32_t)x, from;

		if (ch > d->files)
			ch = d->files;
		from = (uint32_t)(rnd() % (d->files - ch + 1));
		w_entry(w, d->path, NULL, 1);
		for (uint32_t k = from; k < from + ch; k++) {
			file_name(name, sizeof(name), k);
			w_entry(w, d->path, name, 0);
		}
		if (churn > 0 && rnd() % 100 < churn) { /* a new file */
			file_name(name, sizeof(name), d->files++);
			w_entry(w, d->path, name, 0);
		}
		w_list(w, di);
	}
}

/* disk_bytes - bytes of the regular files in dir. */
static uint64_t disk_bytes(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	uint64_t sum = 0;
	struct stat st;

	if (d == NULL)
		die(dir, NSR_ERR_SYSTEM);
	while ((de = readdir(d)) != NULL)
		if (fstatat(dirfd(d), de->d_name, &st, 0) == 0 &&
		    S_ISREG(st.st_mode))
			sum += (uint64_t)st.st_size;
	closedir(d);
	return sum;
}

/* cmp_dbl - qsort order of doubles. */
static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* report - p50, p99 and max of n latencies in ms. */
static void report(const char *what, double *v, size_t n, uint64_t items)
{
	qsort(v, n, sizeof(*v), cmp_dbl);
	printf("%-9s n=%zu p50=%.3f ms p99=%.3f ms max=%.3f ms "
	       "(%.1f results each)\n",
	       what, n, v[n / 2] * 1e3, v[(n * 99) / 100] * 1e3,
	       v[n - 1] * 1e3, (double)items / (double)n);
}

/* count_one - count a visited entry. */
static int count_one(void *ctx, const struct nsr_cfi_saveset *ss,
		     const struct nsr_cfi_entry *e)
{
	(void)ss;
	(void)e;
	(*(uint64_t *)ctx)++;
	return 0;
}

/* main - build (unless -r) and measure. */
int main(int argc, char **argv)
{
	uint64_t want = 1000000, total = 0, items = 0;
	size_t q = 200;
	const char *root = "/tmp/bench_index";
	int reuse = 0, opt, rc;
	struct nsr_cfi *c;
	struct writer *w;
	double t0, c0, busy = 0, cbusy = 0, *lat;
	char *idir;

	while ((opt = getopt(argc, argv, "n:q:d:s:c:rLh")) != -1) {
		switch (opt) {
		case 'n':
			want = strtoull(optarg, NULL, 10);
			break;
		case 'q':
			q = strtoull(optarg, NULL, 10);
			break;
		case 'd':
			root = optarg;
			break;
		case 's':
			seed = strtoull(optarg, NULL, 10) | 1;
			break;
		case 'r':
			reuse = 1;
			break;
		case 'L':
			no_lists = 1;
			break;
		case 'c':
			churn = (unsigned)strtoul(optarg, NULL, 10);
			break;
		default:
			fprintf(stderr, "usage: bench_index [-n entries] "
					"[-q queries] [-d dir] [-s seed] "
					"[-r] [-L] [-c pct]\n");
			return opt == 'h' ? 0 : 2;
		}
	}
	if (want < 10000 || q == 0 || churn > 100) {
		fprintf(stderr, "bench_index: -n >= 10000, -q >= 1, "
				"-c 0..100\n");
		return 2;
	}
	/* two fulls take most of the entries: M + D each, 28 incrementals
	 * D + f M each; M = want / 2.7 makes f about 2 % */
	make_tree((uint64_t)((double)want / 2.7));
	if (asprintf(&idir, "%s/index/%s", root, CLIENT) < 0)
		die("path", NSR_ERR_NOMEM);
	if (!reuse) {
		char *cmd;

		if (asprintf(&cmd, "rm -rf '%s'", idir) < 0 ||
		    system(cmd) != 0)
			die("clean", NSR_ERR_SYSTEM);
		free(cmd);
	}
	rc = nsr_cfi_open(&c, root, CLIENT, NSR_CFI_CREATE);
	if (rc)
		die("open", rc);
	w = calloc(1, sizeof(*w));
	if (w == NULL)
		die("writer", NSR_ERR_NOMEM);
	w->c = c;
	for (int i = 0; i < NSS && !reuse; i++) {
		double files = 0, f;

		for (uint32_t d = 0; d < ndirs; d++)
			files += dirs[d].files;
		f = ((double)want - 2 * (files + ndirs) -
		     (NSS - 2) * (double)ndirs) / ((NSS - 2) * files);
		f = f < 0 ? 0 : f;
		w->ssid = 1000 + (uint64_t)i;
		w->t = BASE_TIME + i * DAY;
		w->off = 0;
		t0 = mono();
		c0 = cpu();
		rc = nsr_cfi_begin(c, w->ssid, w->t, "/bench");
		if (rc)
			die("begin", rc);
		if (i == 0 || i == NSS / 2)
			save_full(w);
		else
			save_incr(w, f);
		w_flush(w);
		rc = nsr_cfi_commit(c, w->ssid);
		if (rc)
			die("commit", rc);
		busy += mono() - t0;
		cbusy += cpu() - c0;
	}
	total = w->entries;
	if (!reuse) {
		printf("entries %" PRIu64 " in %d save sets, %u directories, "
		       "%" PRIu64 " list names\n", total, NSS, ndirs, names);
		printf("insert    %.0f entries/s (%.2f s)\n",
		       (double)total / busy, busy);
		printf("insert    %.0f entries per CPU second (%.2f s CPU)\n",
		       (double)total / cbusy, cbusy);
		printf("disk      %" PRIu64 " bytes, %.1f bytes/entry\n",
		       disk_bytes(idir), (double)disk_bytes(idir) /
						 (double)total);
	}
	/* a fresh handle: nothing cached from the build */
	nsr_cfi_close(c);
	rc = nsr_cfi_open(&c, root, CLIENT, NSR_CFI_RDONLY);
	if (rc)
		die("reopen", rc);
	lat = calloc(q, sizeof(*lat));
	if (lat == NULL)
		die("latency", NSR_ERR_NOMEM);
	for (size_t i = 0; i < q; i++) {
		uint32_t di = (uint32_t)(rnd() % ndirs);
		int64_t t = BASE_TIME + (int64_t)(rnd() % ((NSS + 1) * DAY));

		t0 = mono();
		rc = nsr_cfi_list_dir(c, dirs[di].path, t, count_one, &items);
		if (rc)
			die("list_dir", rc);
		lat[i] = mono() - t0;
	}
	report("listing", lat, q, items);
	items = 0;
	for (size_t i = 0; i < q; i++) {
		uint32_t di = (uint32_t)(rnd() % ndirs);
		struct nsr_cfi_results *r = NULL;
		char path[300], name[24];

		file_name(name, sizeof(name),
			  (uint32_t)(rnd() % dirs[di].files));
		snprintf(path, sizeof(path), "%s/%s", dirs[di].path, name);
		t0 = mono();
		rc = nsr_cfi_versions(c, path, INT64_MAX, &r);
		if (rc)
			die("versions", rc);
		lat[i] = mono() - t0;
		items += nsr_cfi_results_count(r);
		nsr_cfi_results_free(r);
	}
	report("versions", lat, q, items);
	printf("tables    %.1f MB of directory tables held after the "
	       "queries\n", (double)nsr_cfi_tables_held() / 1e6);
	nsr_cfi_close(c);
	free(lat);
	free(w);
	free(idir);
	for (uint32_t d = 0; d < ndirs; d++) {
		free(dirs[d].path);
		free(dirs[d].sub);
	}
	free(dirs);
	return 0;
}
