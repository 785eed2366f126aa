/*
 * bench_jobdb.c - the jobs-db paper's method at the library level.
 *
 * Fill a jobs db at 30,000 records per simulated day up to -n records
 * (default 1,000,000); at every 100,000 records time a purge that finds
 * nothing to delete; stream every job through the JSON printer; then purge
 * down to a few hundred records by lowering the retention step by step
 * (-m steps, the paper's 30, 20, 15, 10, 5, 1 days and then hours) or in
 * one call (-m all).  While purging, a second thread inserts jobs through
 * its own handle and a third runs queries, and their latencies are
 * recorded.  Peak RSS is getrusage ru_maxrss of the whole process.
 *
 * Usage: bench_jobdb [-n records] [-m steps|all|none] [-d dir] [-r] [-L]
 *   -m none  fill (and stream) only
 *   -m idle  no purge: the load threads alone for 30 s (baseline)
 *   -r  reuse the db left by an earlier run with the same -n (skip fill)
 *   -L  purge without the load threads (for profiling)
 *   -C  the inserter checkpoints on its own commits (SQLite's usual way)
 *       instead of leaving it to the purging/main handle, which calls
 *       nsr_jobdb_checkpoint() every second as a daemon would
 * Not run by ctest; results go to tests/bench/jobdb/RESULTS.md.
 */
#include "nsr/compat.h"

#include <pthread.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/jobdb.h"

#define PER_DAY 30000
#define STEP 100000
#define BASE_TIME 1700000000LL
#define DAY 86400LL
#define UNFINISHED 300 /* the newest jobs are still running */

static int64_t nrecords = 1000000;
static int64_t sim_now; /* simulated clock: end of the data */
static const char *path;
static int no_load; /* -L: no inserter/query threads */
static int ckpt_mode = 1; /* -C: inserts checkpoint themselves */

/* die - report a failed call and exit. */
static void die(const char *what, int rc)
{
	fprintf(stderr, "bench_jobdb: %s: %s\n", what, nsr_strerror(rc));
	exit(1);
}

/* mono - monotonic seconds. */
static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* cpu_thread - CPU seconds (user + system) of the calling thread. */
static double cpu_thread(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* peak_rss_mb - peak resident set of the process in MiB. */
static double peak_rss_mb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_maxrss / 1024.0;
}

/* load1 - the machine's one-minute load average (it is shared). */
static double load1(void)
{
	double l[1] = {0};

	return getloadavg(l, 1) == 1 ? l[0] : -1;
}

/* file_mb - size of a file in MiB (0 if missing). */
static double file_mb(const char *p)
{
	struct stat sb;

	return stat(p, &sb) == 0 ? (double)sb.st_size / 1048576.0 : 0;
}

/* job_time - simulated start time of record k. */
static int64_t job_time(int64_t k)
{
	return BASE_TIME + (k / PER_DAY) * DAY + (k % PER_DAY) * DAY / PER_DAY;
}

/* add_record - create record k (blocks of 10: a savegrp run with seven
 * children, then a clone and a recover or maintenance job). */
static void add_record(struct nsr_jobdb *db, int64_t k, int64_t *parent)
{
	static const char *const fs[] = {"/", "/var", "/home", "/opt",
					 "/srv", "/usr", "/data"};
	struct nsr_jobdb_job j = {0};
	char client[32], line[96];
	int64_t id = 0, slot = k % 10;
	int unfinished = k >= nrecords - UNFINISHED;
	int rc;

	snprintf(client, sizeof(client), "client%03d", (int)(k / 10 % 200));
	j.client = client;
	j.host = "bksrv";
	j.name = fs[k % 7];
	j.group = "Default";
	j.action = "backup";
	j.start_time = job_time(k);
	j.end_time = j.start_time + 60 + k % 600;
	j.state = unfinished ? NSR_JOBDB_ACTIVE
			     : (k % 97 == 0 ? NSR_JOBDB_FAILED
					    : NSR_JOBDB_COMPLETED);
	j.status = unfinished ? NULL : "succeeded";
	j.bytes = (k * 7919) % 1000000000;
	j.files = k % 5000;
	j.pid = 1000 + k % 30000;
	j.level = "incr";
	j.command = "save -s bksrv -g Default -LL -m client -l incr /var";
	if (unfinished)
		j.end_time = 0;
	if (slot == 0) {
		j.type = NSR_JOBDB_TYPE_SAVEGRP;
		j.state = NSR_JOBDB_ACTIVE;
		j.end_time = 0;
		j.status = NULL;
	} else if (slot <= 7) {
		j.type = slot == 7 ? NSR_JOBDB_TYPE_INDEX_SAVE
				   : NSR_JOBDB_TYPE_SAVE;
		j.parent_id = *parent;
	} else if (slot == 8) {
		j.type = NSR_JOBDB_TYPE_CLONE;
	} else {
		j.type = k % 5000 == 9 ? NSR_JOBDB_TYPE_MAINTENANCE
				       : NSR_JOBDB_TYPE_RECOVER;
	}
	rc = nsr_jobdb_create(db, &j, &id);
	if (rc)
		die("create", rc);
	if (slot == 0)
		*parent = id;
	snprintf(line, sizeof(line), "%s:%s: %" PRId64 " files, %" PRId64
		 " bytes", client, j.name, j.files, j.bytes);
	rc = nsr_jobdb_log_append(db, id, j.start_time, line);
	if (rc)
		die("log", rc);
	/* The run finishes after its last child. */
	if (slot == 7 && !unfinished) {
		struct nsr_jobdb_job v = {0};

		v.state = NSR_JOBDB_COMPLETED;
		v.status = "succeeded";
		v.end_time = j.end_time + 10;
		rc = nsr_jobdb_update(db, *parent,
				      NSR_JOBDB_F_STATE | NSR_JOBDB_F_STATUS |
					      NSR_JOBDB_F_END,
				      &v);
		if (rc)
			die("update", rc);
	}
}

/* cmp_double - qsort order. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* empty_purge - time purges that find nothing (retention 60 days). */
static void empty_purge(struct nsr_jobdb *db, int64_t records)
{
	double t[7], cpu0 = cpu_thread();
	struct nsr_jobdb_purge_stats st;

	for (int i = 0; i < 7; i++) {
		double t0 = mono();
		int rc = nsr_jobdb_purge(db, 60 * 24, sim_now, &st);

		t[i] = (mono() - t0) * 1000.0;
		if (rc)
			die("purge", rc);
		if (st.jobs)
			die("purge deleted jobs", NSR_ERR_STATE);
	}
	qsort(t, 7, sizeof(t[0]), cmp_double);
	printf("| %7" PRId64 " | %.3f | %.3f | %.3f | %.3f | %.1f | %.1f |\n",
	       records, t[0], t[3], t[6], (cpu_thread() - cpu0) * 1000.0 / 7,
	       peak_rss_mb(), load1());
	fflush(stdout);
}

/* stream_all - run a query over every job, printing each as JSON. */
static void stream_all(struct nsr_jobdb *db)
{
	struct nsr_jobdb_query *q = NULL;
	struct nsr_jobdb_cursor *c = NULL;
	const struct nsr_jobdb_job *job;
	struct nsr_buf out;
	enum nsr_jobdb_cmd cmd;
	double t0 = mono(), cpu0 = cpu_thread();
	uint64_t rows = 0, bytes = 0;
	int rc;

	nsr_buf_init(&out, 0);
	if (nsr_jobdb_query_new(&q) ||
	    nsr_jobdb_query_parse(q, "show", 4, &cmd, NULL) ||
	    nsr_jobdb_cursor_open(db, q, &c))
		die("query", NSR_ERR_STATE);
	for (;;) {
		rc = nsr_jobdb_cursor_next(c, &job);
		if (rc != NSR_OK)
			break;
		rc = nsr_jobdb_cursor_print(c, NSR_JOBDB_FMT_JSON, &out);
		if (rc)
			die("print", rc);
		rows++;
		bytes += out.len;
		nsr_buf_reset(&out);
	}
	if (rc != NSR_ERR_EOF)
		die("cursor", rc);
	nsr_jobdb_cursor_close(c);
	nsr_jobdb_query_free(q);
	nsr_buf_release(&out);
	printf("\nStream all jobs (every attribute incl. job log, JSON): "
	       "%" PRIu64
	       " rows, %.1f MiB of output, %.2f s, CPU %.2f s, peak RSS "
	       "%.1f MiB\n",
	       rows, (double)bytes / 1048576.0, mono() - t0,
	       cpu_thread() - cpu0, peak_rss_mb());
	fflush(stdout);
}

/* Shared state of the load threads during the purge. */
static volatile int load_stop;
static double run_t0; /* when the load threads started */

struct lat {
	double *v;
	size_t n, cap;
};

static struct lat lock_wait; /* inserter: time waiting for the lock */

/* lat_add - record one latency in ms. */
static void lat_add(struct lat *l, double ms)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 1024;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		if (!l->v)
			die("realloc", NSR_ERR_NOMEM);
	}
	l->v[l->n++] = ms;
}

/* lat_report - count, p50, p99, max and how many over limit ms. */
static void lat_report(const char *what, struct lat *l, double limit)
{
	size_t over = 0;

	if (!l->n) {
		printf("%s: none\n", what);
		return;
	}
	qsort(l->v, l->n, sizeof(*l->v), cmp_double);
	for (size_t i = 0; i < l->n; i++)
		over += l->v[i] > limit;
	printf("%s: %zu ops, p50 %.2f ms, p99 %.2f ms, max %.2f ms, "
	       "%zu over %.0f ms\n",
	       what, l->n, l->v[l->n / 2], l->v[l->n * 99 / 100],
	       l->v[l->n - 1], over, limit);
}

/* inserter - create a job and log a line every millisecond. */
static void *inserter(void *arg)
{
	struct lat *l = arg;
	struct nsr_jobdb_options opt = {.background_checkpoint = 1};
	struct nsr_jobdb *db = NULL;
	int rc = nsr_jobdb_open(path, ckpt_mode ? &opt : NULL, &db);

	if (rc)
		die("open inserter", rc);
	while (!load_stop) {
		struct nsr_jobdb_job j = {0};
		struct nsr_jobdb_stats before, after;
		int64_t id = 0;
		double t0 = mono(), t1, c0 = cpu_thread();

		j.type = NSR_JOBDB_TYPE_RECOVER;
		j.client = "live";
		j.state = NSR_JOBDB_COMPLETED;
		j.end_time = sim_now;
		nsr_jobdb_stats(db, &before);
		rc = nsr_jobdb_create(db, &j, &id);
		t1 = mono();
		if (!rc)
			rc = nsr_jobdb_log_append(db, id, sim_now, "recovered");
		if (rc)
			die("insert during purge", rc);
		lat_add(l, (mono() - t0) * 1000.0);
		nsr_jobdb_stats(db, &after);
		lat_add(&lock_wait, (double)(after.busy_us - before.busy_us) /
					    1000.0);
		if (mono() - t0 > 0.1)
			fprintf(stderr,
				"slow insert at +%.2f s: create %.1f ms,"
				" log %.1f ms, CPU %.1f ms\n",
				t0 - run_t0, (t1 - t0) * 1e3,
				(mono() - t1) * 1e3, (cpu_thread() - c0) * 1e3);
		usleep(1000);
	}
	nsr_jobdb_close(db);
	return NULL;
}

/* prober - no database at all: how late does a 1 ms sleep wake up?  The
 * machine is shared, so this is the floor under every latency above. */
static void *prober(void *arg)
{
	struct lat *l = arg;

	while (!load_stop) {
		double t0 = mono();

		usleep(1000);
		lat_add(l, (mono() - t0) * 1000.0 - 1.0);
	}
	return NULL;
}

/* querier - repeatedly stream the recover jobs of one client. */
static void *querier(void *arg)
{
	struct lat *l = arg;
	struct nsr_jobdb *db = NULL;
	struct nsr_jobdb_query *q = NULL;
	enum nsr_jobdb_cmd cmd;
	struct nsr_buf out;
	static const char line[] = ". type: recover job; client: client1*";
	int rc = nsr_jobdb_open(path, NULL, &db);

	if (rc || nsr_jobdb_query_new(&q) ||
	    nsr_jobdb_query_parse(q, line, sizeof(line) - 1, &cmd, NULL))
		die("open querier", NSR_ERR_STATE);
	nsr_buf_init(&out, 0);
	while (!load_stop) {
		struct nsr_jobdb_cursor *c = NULL;
		const struct nsr_jobdb_job *job;
		double t0 = mono();

		rc = nsr_jobdb_cursor_open(db, q, &c);
		while (!rc) {
			rc = nsr_jobdb_cursor_next(c, &job);
			if (rc != NSR_OK)
				break;
			rc = nsr_jobdb_cursor_print(c, NSR_JOBDB_FMT_NSRADMIN,
						    &out);
			nsr_buf_reset(&out);
		}
		nsr_jobdb_cursor_close(c);
		if (rc != NSR_ERR_EOF)
			die("query during purge", rc);
		lat_add(l, (mono() - t0) * 1000.0);
		usleep(20000);
	}
	nsr_buf_release(&out);
	nsr_jobdb_query_free(q);
	nsr_jobdb_close(db);
	return NULL;
}

/* purge_step - one purge at a retention, reported as a table row. */
static void purge_step(struct nsr_jobdb *db, unsigned hours, double *total)
{
	struct nsr_jobdb_purge_stats st;
	double t0 = mono(), cpu0 = cpu_thread(), dt;
	uint64_t left = 0;
	int rc = nsr_jobdb_purge(db, hours, sim_now, &st);

	dt = mono() - t0;
	if (rc)
		die("purge", rc);
	*total += dt;
	nsr_jobdb_count(db, &left);
	printf("| %4u h | %7" PRIu64 " | %7" PRIu64 " | %5" PRIu64
	       " | %7" PRIu64 " | %.1f | %.2f | %.2f | %7" PRIu64 " | %.1f |"
	       " %.1f | %.1f |\n",
	       hours, st.jobs, st.logs, st.batches, st.vacuumed,
	       (double)st.longest_us / 1000.0, dt,
	       cpu_thread() - cpu0, left, peak_rss_mb(), file_mb(path),
	       load1());
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static const unsigned steps[] = {30 * 24, 20 * 24, 15 * 24, 10 * 24,
					 5 * 24,  24,	   6,	    1, 0};
	struct lat ins = {0}, qry = {0}, prb = {0};
	const char *mode = "steps", *dir = ".";
	struct nsr_jobdb *db = NULL;
	pthread_t t1, t2, t3;
	char pbuf[4096];
	int64_t parent = 0;
	double total = 0, t0;
	int opt, rc, reuse = 0;

	for (;;) {
		opt = getopt(argc, argv, "n:m:d:rLC");
		if (opt == -1)
			break;
		switch (opt) {
		case 'n': nrecords = strtoll(optarg, NULL, 10); break;
		case 'm': mode = optarg; break;
		case 'd': dir = optarg; break;
		case 'r': reuse = 1; break;
		case 'L': no_load = 1; break;
		case 'C': ckpt_mode = 0; break;
		default:
			fprintf(stderr,
				"usage: bench_jobdb [-n records] "
				"[-m steps|all|idle|none] [-d dir] [-r] [-L] "
				"[-C]\n");
			return 2;
		}
	}
	snprintf(pbuf, sizeof(pbuf), "%s/bench_jobsdb", dir);
	path = pbuf;
	if (!reuse)
		remove(path);
	rc = nsr_jobdb_open(path, NULL, &db);
	if (rc)
		die("open", rc);
	if (reuse) {
		sim_now = job_time(nrecords - 1) + 3600;
		goto purge;
	}

	printf("Fill to %" PRId64 " records, %d per simulated day; "
	       "purge with nothing to delete at every %d\n\n",
	       nrecords, PER_DAY, STEP);
	printf("| records | min ms | median ms | max ms | CPU ms/purge | "
	       "peak RSS MiB | load |\n|---|---|---|---|---|---|---|\n");
	t0 = mono();
	for (int64_t k = 0; k < nrecords; k++) {
		add_record(db, k, &parent);
		sim_now = job_time(k) + 3600;
		if ((k + 1) % STEP == 0)
			empty_purge(db, k + 1);
	}
	printf("\nFill: %.1f s (%.0f jobs/s incl. one log line each), "
	       "file %.1f MiB\n",
	       mono() - t0, (double)nrecords / (mono() - t0), file_mb(path));
	stream_all(db);
	if (strcmp(mode, "none") == 0) {
		nsr_jobdb_close(db);
		return 0;
	}
purge:

	printf("\nPurge (%s), %s\n\n", mode,
	       no_load ? "no other threads"
		       : "with an inserter (1 job + 1 log line per ms) and a "
			 "query loop on other handles");
	printf("| retention | jobs | log lines | batches | pages freed | "
	       "longest lock ms | seconds | CPU s | jobs left | peak RSS MiB | "
	       "file MiB | load |\n"
	       "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	run_t0 = mono();
	if (!no_load) {
		pthread_create(&t1, NULL, inserter, &ins);
		pthread_create(&t2, NULL, querier, &qry);
		pthread_create(&t3, NULL, prober, &prb);
	}
	if (strcmp(mode, "all") == 0) {
		purge_step(db, 0, &total);
	} else if (strcmp(mode, "idle") == 0) {
		/* Baseline: the same load for 30 s without any purge. */
		for (int i = 0; i < 30; i++) {
			sleep(1);
			if (!getenv("BENCH_NO_CKPT"))
				nsr_jobdb_checkpoint(db);
		}
	} else {
		for (size_t i = 0; i < NSR_ARRAY_SIZE(steps); i++) {
			purge_step(db, steps[i], &total);
			nsr_jobdb_checkpoint(db);
		}
	}
	load_stop = 1;
	if (!no_load) {
		pthread_join(t1, NULL);
		pthread_join(t2, NULL);
		pthread_join(t3, NULL);
	}
	printf("\nTotal purge time %.2f s\n", total);
	lat_report("Inserts during purge (create + log line)", &ins, 100);
	lat_report("  of which waiting for the write lock", &lock_wait, 100);
	lat_report("Queries during purge (type: recover job; client: "
		   "client1*)", &qry, 1000);
	lat_report("Oversleep of a 1 ms sleep, no database (machine floor)",
		   &prb, 100);
	rc = nsr_jobdb_check(db);
	printf("Integrity check after purge: %s\n", nsr_strerror(rc));
	printf("Peak RSS of the whole run: %.1f MiB\n", peak_rss_mb());
	nsr_jobdb_close(db);
	free(ins.v);
	free(qry.v);
	free(prb.v);
	free(lock_wait.v);
	return rc ? 1 : 0;
}
