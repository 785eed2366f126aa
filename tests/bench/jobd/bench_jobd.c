/*
 * bench_jobd - the daemon-level part of the jobs-db benchmark (not run by
 * ctest).  Fills a jobs db with N finished jobs, PER_DAY per simulated day
 * (straight through the library, before the daemon starts), starts
 * nsrexecd and nsrjobd on free loopback ports, then measures through RPC:
 *   - a purge that finds nothing to delete, at N jobs;
 *   - a client streaming all N jobs (time, and nsrjobd's VmHWM/VmRSS);
 *   - purges lowering the retention step by step down to a few hundred
 *     jobs, each with a second client inserting jobs meanwhile (insert
 *     latency: max and 99th percentile) and nsrjobd's peak RSS;
 * and prints one line per measurement.
 *
 *   bench_jobd BINDIR WORKDIR [N [PER_DAY]]
 *
 * env BENCH_JOBD_SEED=file: copy the filled db from file if it exists,
 * else save a copy there after filling (the fill takes ~10 minutes for a
 * million jobs; the job times then age by the time between runs).
 */
#include "nsr/compat.h"

#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/jobd_clnt.h"
#include "nsr/jobdb.h"
#include "nsr/xmalloc.h"

#define MAX_SAMPLES (1 << 20)

static pid_t execd_pid, jobd_pid;

/* die - print and exit 1. */
static void die(const char *fmt, ...) NSR_PRINTF(1, 2) NSR_NORETURN;

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("bench_jobd: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (jobd_pid > 0)
		kill(jobd_pid, SIGKILL);
	if (execd_pid > 0)
		kill(execd_pid, SIGKILL);
	exit(1);
}

/* now_s - monotonic seconds. */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* proc_kb - a "Vm...:" value of pid's /proc status in KiB. */
static long proc_kb(pid_t pid, const char *key)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, klen) == 0 && line[klen] == ':')
			v = atol(line + klen + 1);
	fclose(f);
	return v;
}

/* fill - n finished jobs, per_day per day, one log line each; job i
 * ends (n - 1 - i) / per_day days before the newest, which ended 50
 * minutes ago, so a one-hour retention keeps a few hundred. */
static void fill(const char *path, long n, long per_day)
{
	struct nsr_jobdb *db = NULL;
	struct nsr_jobdb_job job;
	int64_t newest = (int64_t)time(NULL) - 3000;
	double t0 = now_s();
	int rc = nsr_jobdb_open(path, NULL, &db);

	memset(&job, 0, sizeof(job));
	job.type = NSR_JOBDB_TYPE_SAVE;
	job.state = NSR_JOBDB_COMPLETED;
	job.level = "incr";
	job.group = "Default";
	job.status = "succeeded";
	job.bytes = 123456789;
	job.files = 1234;
	for (long i = 0; !rc && i < n; i++) {
		char client[32], name[32];
		int64_t id;

		snprintf(client, sizeof(client), "client%03ld", i % 500);
		snprintf(name, sizeof(name), "/data/fs%ld", i % 7);
		job.client = client;
		job.name = name;
		job.end_time = newest - (int64_t)(n - 1 - i) * 86400 / per_day;
		job.start_time = job.end_time - 60;
		rc = nsr_jobdb_create(db, &job, &id);
		if (!rc)
			rc = nsr_jobdb_log_append(db, id, job.end_time,
						  "save completed: 1234 files");
		if (i && i % 100000 == 0)
			fprintf(stderr, "# filled %ld jobs, %.1f s\n", i,
				now_s() - t0);
	}
	nsr_jobdb_close(db);
	if (rc)
		die("fill %s: %s", path, nsr_strerror(rc));
	printf("fill: %ld jobs (%ld per day) in %.1f s\n", n, per_day,
	       now_s() - t0);
}

/* copy_file - copy src to dst (new file); 0 or -1. */
static int copy_file(const char *src, const char *dst)
{
	struct nsr_buf b;
	int rc;

	nsr_buf_init(&b, 0);
	rc = nsr_file_read(src, &b, (size_t)1 << 34);
	if (!rc)
		rc = nsr_file_replace(dst, b.data, b.len, 0644);
	nsr_buf_release(&b);
	return rc ? -1 : 0;
}

/* spawn - start bin/name -R root (foreground), output to the log. */
static pid_t spawn(const char *bin, const char *name, const char *root,
		   const char *logpath)
{
	char *exe = nsr_xcheck(nsr_path_join(bin, name));
	pid_t pid = fork();

	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		FILE *f = freopen(logpath, "a", stderr);

		if (!f || !freopen("/dev/null", "w", stdout))
			_exit(127);
		execl(exe, name, "-R", root, (char *)NULL);
		_exit(127);
	}
	free(exe);
	return pid;
}

/* connect_jobd - wait (<= 60 s) until nsrjobd answers. */
static struct nsr_jobd *connect_jobd(void)
{
	struct nsr_buf err;
	struct nsr_jobd *j = NULL;

	nsr_buf_init(&err, 0);
	for (int i = 0; i < 600; i++) {
		nsr_buf_reset(&err);
		if (nsr_jobd_open("127.0.0.1", &j, &err) == NSR_OK)
			break;
		usleep(100 * 1000);
	}
	if (!j)
		die("nsrjobd did not come up: %s", err.data);
	nsr_buf_release(&err);
	return j;
}

/* Insert load during a purge. */
struct inserter {
	pthread_t th;
	volatile int stop;
	double *lat; /* seconds per create */
	double *at;  /* when each create started */
	size_t n;
};

/* cmp_double - qsort order. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* insert_loop - create ACTIVE jobs one after another, timing each. */
static void *insert_loop(void *arg)
{
	struct inserter *in = arg;
	struct nsr_jobd *j = connect_jobd();
	struct nsr_jobdb_job job;
	struct nsr_buf err;

	nsr_buf_init(&err, 0);
	memset(&job, 0, sizeof(job));
	job.type = NSR_JOBDB_TYPE_SAVE;
	job.state = NSR_JOBDB_ACTIVE;
	job.client = "inserter";
	job.start_time = (int64_t)time(NULL);
	while (!in->stop && in->n < MAX_SAMPLES) {
		double t0 = now_s();
		int64_t id;

		if (nsr_jobd_create(j, &job, &id, &err) != NSR_OK)
			die("insert during purge: %s", err.data);
		in->at[in->n] = t0;
		in->lat[in->n++] = now_s() - t0;
		usleep(1000);
	}
	nsr_buf_release(&err);
	nsr_jobd_close(j);
	return NULL;
}

/* RSS sampling of nsrjobd. */
struct sampler {
	pthread_t th;
	volatile int stop;
	long max_rss;
};

/* hwm_loop - sample VmRSS every 10 ms until stop; keep the max. */
static void *hwm_loop(void *arg)
{
	struct sampler *s = arg;

	while (!s->stop) {
		long v = proc_kb(jobd_pid, "VmRSS");

		if (v > s->max_rss)
			s->max_rss = v;
		usleep(10 * 1000);
	}
	return NULL;
}

/* purge_step - one JOB_PURGE with insert load and RSS sampling.  Insert
 * latency counts the creates that overlap the purge's RPC.  hours 0: a
 * baseline of the same inserts for 3 s with no purge. */
static void purge_step(struct nsr_jobd *j, unsigned hours)
{
	struct nsr_jobdb_purge_stats st;
	struct inserter in = {0};
	struct sampler s = {0};
	struct nsr_buf err;
	double t0, t, *during, outside = 0;
	size_t nd = 0;
	int rc;

	nsr_buf_init(&err, 0);
	in.lat = calloc(MAX_SAMPLES, sizeof(double));
	in.at = calloc(MAX_SAMPLES, sizeof(double));
	during = calloc(MAX_SAMPLES, sizeof(double));
	if (!in.lat || !in.at || !during)
		die("out of memory");
	pthread_create(&s.th, NULL, hwm_loop, &s);
	pthread_create(&in.th, NULL, insert_loop, &in);
	usleep(200 * 1000); /* the inserter is connected and running */
	t0 = now_s();
	if (hours) {
		rc = nsr_jobd_purge(j, hours, &st, &err);
	} else {
		/* Baseline: the same inserts for 3 s without a purge. */
		memset(&st, 0, sizeof(st));
		usleep(3000 * 1000);
		rc = NSR_OK;
	}
	t = now_s() - t0;
	usleep(100 * 1000);
	in.stop = 1;
	pthread_join(in.th, NULL);
	s.stop = 1;
	pthread_join(s.th, NULL);
	if (rc)
		die("purge: %s", err.data);
	for (size_t i = 0; i < in.n; i++) {
		if (in.at[i] + in.lat[i] >= t0 && in.at[i] <= t0 + t)
			during[nd++] = in.lat[i];
		else if (in.lat[i] > outside)
			outside = in.lat[i];
	}
	for (size_t i = 0; i < in.n && hours; i++)
		if (in.lat[i] > 0.1)
			fprintf(stderr, "# slow insert: %.1f ms at %+.2f s of "
				"the %.2f s purge\n", in.lat[i] * 1e3,
				in.at[i] - t0, t);
	qsort(during, nd, sizeof(double), cmp_double);
	if (!hours)
		printf("baseline, no purge, 3 s: ");
	else
		printf("purge retention %4uh: ", hours);
	printf("%7" PRIu64 " jobs in %6.2f s "
	       "(%" PRIu64 " batches); %zu inserts during it: max %.1f ms, "
	       "p99 %.1f ms (outside it max %.1f ms); nsrjobd max VmRSS "
	       "%ld KiB, VmHWM %ld KiB\n",
	       st.jobs, t, st.batches, nd,
	       nd ? during[nd - 1] * 1e3 : 0.0,
	       nd ? during[nd * 99 / 100] * 1e3 : 0.0, outside * 1e3,
	       s.max_rss, proc_kb(jobd_pid, "VmHWM"));
	fflush(stdout);
	free(in.lat);
	free(in.at);
	free(during);
	nsr_buf_release(&err);
}

/* stream_all - every job through one client; time and RSS. */
static void stream_all(struct nsr_jobd *j, long expect, int with_log)
{
	struct nsr_jobdb_query *q = NULL;
	const struct nsr_jobdb_job *job;
	struct sampler s = {0};
	enum nsr_jobdb_cmd cmd;
	struct nsr_buf err, out;
	const char *show = with_log ? "show" : "show job id; type; name; "
			   "client; level; job state; start time; end time; "
			   "bytes; files";
	long n = 0;
	double t0;
	int rc;

	nsr_buf_init(&err, 0);
	nsr_buf_init(&out, 0);
	if (nsr_jobdb_query_new(&q) ||
	    nsr_jobdb_query_parse(q, show, strlen(show), &cmd, NULL))
		die("query setup");
	pthread_create(&s.th, NULL, hwm_loop, &s);
	t0 = now_s();
	rc = nsr_jobd_query_open(j, q, &err);
	while (!rc) {
		rc = nsr_jobd_query_next(j, &job, &err);
		if (rc)
			break;
		nsr_buf_reset(&out);
		rc = nsr_jobd_print(j, NSR_JOBDB_FMT_JSON, &out);
		n++;
	}
	s.stop = 1;
	pthread_join(s.th, NULL);
	if (rc != NSR_ERR_EOF)
		die("stream: %s", err.data);
	printf("stream %s: %ld jobs (expected %ld) in %.1f s, %.0f jobs/s; "
	       "nsrjobd max VmRSS %ld KiB, VmHWM %ld KiB\n",
	       with_log ? "all attributes + log" : "10 attributes", n, expect,
	       now_s() - t0, (double)n / (now_s() - t0), s.max_rss,
	       proc_kb(jobd_pid, "VmHWM"));
	fflush(stdout);
	nsr_jobdb_query_free(q);
	nsr_buf_release(&err);
	nsr_buf_release(&out);
}

/* empty_purges - purges that find nothing, over RPC. */
static void empty_purges(struct nsr_jobd *j, unsigned hours)
{
	struct nsr_jobdb_purge_stats st;
	struct nsr_buf err;
	double best = 1e9, worst = 0;

	nsr_buf_init(&err, 0);
	for (int i = 0; i < 5; i++) {
		double t0 = now_s(), t;

		if (nsr_jobd_purge(j, hours, &st, &err) != NSR_OK)
			die("purge: %s", err.data);
		t = now_s() - t0;
		if (st.jobs)
			die("a purge with retention %u h deleted %" PRIu64
			    " jobs", hours, st.jobs);
		best = t < best ? t : best;
		worst = t > worst ? t : worst;
	}
	printf("purge with nothing to delete (RPC round trip included): "
	       "best %.2f ms, worst %.2f ms of 5\n", best * 1e3, worst * 1e3);
	fflush(stdout);
	nsr_buf_release(&err);
}

int main(int argc, char **argv)
{
	const char *bin, *work;
	long n = 1000000, per_day = 30000, days;
	char *root, *res, *db, *logpath;
	const char *seed;
	struct nsr_jobd *j;
	char port[16];

	if (argc < 3 || argc > 5)
		die("usage: bench_jobd BINDIR WORKDIR [N [PER_DAY]]");
	bin = argv[1];
	work = argv[2];
	if (argc > 3)
		n = atol(argv[3]);
	if (argc > 4)
		per_day = atol(argv[4]);
	if (n <= 0 || per_day <= 0)
		die("bad N or PER_DAY");
	days = (n + per_day - 1) / per_day;
	root = nsr_xcheck(nsr_path_join(work, "root"));
	res = nsr_xcheck(nsr_path_join(root, "res"));
	db = nsr_xcheck(nsr_path_join(res, "jobsdb"));
	logpath = nsr_xcheck(nsr_path_join(work, "daemons.log"));
	if (nsr_mkdir_p(res, 0755) != NSR_OK)
		die("cannot create %s", res);
	if (access(db, F_OK) == 0)
		die("%s exists: use an empty WORKDIR", db);

	seed = getenv("BENCH_JOBD_SEED");
	if (seed && access(seed, F_OK) == 0) {
		/* Reuse a filled db: the fill takes minutes, the rest not. */
		if (copy_file(seed, db))
			die("cannot copy %s to %s", seed, db);
		printf("fill: copied %s (filled earlier, %ld jobs)\n", seed, n);
	} else {
		fill(db, n, per_day);
		if (seed && copy_file(db, seed))
			die("cannot save %s", seed);
	}
	fflush(stdout); /* before fork: children must not flush it again */

	snprintf(port, sizeof(port), "%d", 20000 + (int)(getpid() % 20000));
	setenv("NSR_PORTMAP_PORT", port, 1);
	snprintf(port, sizeof(port), "%d", 40000 + (int)(getpid() % 20000));
	setenv("NSR_EXEC_PORT", port, 1);
	execd_pid = spawn(bin, "nsrexecd", root, logpath);
	usleep(300 * 1000);
	jobd_pid = spawn(bin, "nsrjobd", root, logpath);
	j = connect_jobd();
	printf("nsrjobd started: VmHWM %ld KiB, VmRSS %ld KiB\n",
	       proc_kb(jobd_pid, "VmHWM"), proc_kb(jobd_pid, "VmRSS"));

	empty_purges(j, (unsigned)(days + 2) * 24);
	stream_all(j, n, 0);
	stream_all(j, n, 1);

	purge_step(j, 0);
	/* Lower the retention step by step, down to one hour. */
	for (long d = days * 3 / 4; d >= 1; d = d > 4 ? d / 2 : d - 1)
		purge_step(j, (unsigned)d * 24);
	purge_step(j, 1);
	purge_step(j, 0);
	empty_purges(j, 2);
	printf("nsrjobd peak over the whole run: VmHWM %ld KiB\n",
	       proc_kb(jobd_pid, "VmHWM"));

	nsr_jobd_close(j);
	kill(jobd_pid, SIGTERM);
	waitpid(jobd_pid, NULL, 0);
	kill(execd_pid, SIGTERM);
	waitpid(execd_pid, NULL, 0);
	free(root);
	free(res);
	free(db);
	free(logpath);
	return 0;
}
