/*
 * bench_admission - N concurrent sessions asking nsrd to start at once.
 *
 *   bench_admission -s server [-n N] [-c CLIENTS] [-g GROUP] [-o FILE]
 *                   [-x TAG] [-H HOLD_MS]
 *
 * N threads each connect to nsrd (src/clnt/nsrd), wait at a barrier,
 * then SAVE_START save set /bench/admissionTAG/N of client
 * "bench(N % CLIENTS)" (asking again
 * with the ticket while nsrd says wait), and hold the session until all
 * N have started (with -H: for HOLD_MS after it started, so that with
 * a server parallelism below N the queue moves); then each ends its
 * session with SAVE_END (status
 * aborted: no data is sent, what is measured is admission, not the
 * data path).  Prints one line of figures: admission latency (from the
 * barrier to the answer that admitted it, waits included) p50, p99 and
 * max in ms, the time from the barrier (all connected) to the last
 * admission, waits and failures, and, when all end together (no -H),
 * the SAVE_END latency p50 and p99 in ms and the time from the first
 * SAVE_END to the last answer; with -o the per-session latencies.
 * Exit 0 if every session was admitted, 1 otherwise, 2 on usage.
 */
#include "nsr/compat.h"

#include <pthread.h>
#include <time.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/nsrd_clnt.h"
#include "nsr/rpc.h"

/* One session's thread. */
struct sess {
	pthread_t th;
	int i;
	double lat_ms;	/* barrier to admission */
	double done_s;	/* admission, seconds after the barrier */
	double end_ms;	/* SAVE_END's round trip */
	struct timespec end0, end1; /* when it was asked, answered */
	int waits, ok;
};

static const char *g_server, *g_group = "", *g_tag = "";
static int g_n = 1024, g_clients = 64, g_hold_ms = -1;
static pthread_barrier_t g_ready, g_all_in;
static struct timespec g_t0;

/* secs - seconds from a to b. */
static double secs(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) +
	       (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

/* start_one - SAVE_START until admitted (or failed); 0 ok. */
static int start_one(struct nsr_nsrd *d, struct sess *s, save_start_res *r)
{
	char client[32], name[64];
	save_start_args a;
	int rc;

	snprintf(client, sizeof(client), "bench%d", s->i % g_clients);
	snprintf(name, sizeof(name), "/bench/admission%s/%d", g_tag, s->i);
	memset(&a, 0, sizeof(a));
	a.client = client;
	a.name = name;
	a.level = (char *)"";
	a.pool = (char *)"";
	a.group = (char *)g_group;
	a.command = (char *)"bench_admission";
	a.savetime = time(NULL);
	a.pid = getpid();
	for (;;) {
		memset(r, 0, sizeof(*r));
		rc = nsr_nsrd_save_start(d, &a, r);
		if (rc != NSR_ERR_WAIT)
			return rc;
		s->waits++;
		a.ticket = r->ticket;
		usleep((useconds_t)NSR_MAX(r->retry_ms, 10u) * 1000);
		xdr_free(NSR_XDR(xdr_save_start_res), (char *)r);
	}
}

/* run - one session: connect, barrier, start, hold, end. */
static void *run(void *arg)
{
	struct sess *s = arg;
	struct nsr_nsrd *d = NULL;
	struct nsr_buf err;
	struct timespec t, t1;
	save_start_res r;
	int rc;

	nsr_buf_init(&err, 0);
	rc = nsr_nsrd_open(g_server, &d, &err);
	if (rc != NSR_OK)
		fprintf(stderr, "session %d: %s\n", s->i, err.data);
	pthread_barrier_wait(&g_ready);
	clock_gettime(CLOCK_MONOTONIC, &t);
	memset(&r, 0, sizeof(r));
	if (rc == NSR_OK)
		rc = start_one(d, s, &r);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s->lat_ms = secs(&t, &t1) * 1000;
	s->done_s = secs(&g_t0, &t1);
	s->ok = rc == NSR_OK;
	if (rc != NSR_OK && d)
		fprintf(stderr, "session %d: %s\n", s->i, nsr_nsrd_errmsg(d));
	if (g_hold_ms < 0)
		pthread_barrier_wait(&g_all_in);
	else
		usleep((useconds_t)g_hold_ms * 1000);
	if (s->ok) {
		save_end_args e;
		nsr_void_res v;

		memset(&e, 0, sizeof(e));
		memset(&v, 0, sizeof(v));
		e.ssid = r.ssid;
		e.jobid = r.jobid;
		e.status = NSR_ERR_INVAL;
		e.msg = (char *)"admission benchmark: no data sent";
		clock_gettime(CLOCK_MONOTONIC, &s->end0);
		nsr_nsrd_save_end(d, &e, &v);
		clock_gettime(CLOCK_MONOTONIC, &s->end1);
		s->end_ms = secs(&s->end0, &s->end1) * 1000;
		xdr_free(NSR_XDR(xdr_nsr_void_res), (char *)&v);
	}
	xdr_free(NSR_XDR(xdr_save_start_res), (char *)&r);
	nsr_nsrd_close(d);
	nsr_buf_release(&err);
	return NULL;
}

/* cmp_d - order doubles. */
static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* usage - the synopsis. */
static void usage(FILE *f)
{
	fprintf(f, "usage: bench_admission -s server [-n sessions] "
		"[-c clients] [-g group] [-o latencies-file] [-x tag] "
		"[-H hold-ms]\n");
}

/* main - options, threads, figures. */
int main(int argc, char **argv)
{
	const char *out = NULL;
	struct sess *ss;
	double *lat, last = 0;
	int opt, ok = 0, waits = 0;
	pthread_attr_t at;

	while ((opt = getopt(argc, argv, "s:n:c:g:o:x:H:h")) != -1) {
		switch (opt) {
		case 's': g_server = optarg; break;
		case 'n': g_n = atoi(optarg); break;
		case 'c': g_clients = atoi(optarg); break;
		case 'g': g_group = optarg; break;
		case 'o': out = optarg; break;
		case 'x': g_tag = optarg; break;
		case 'H': g_hold_ms = atoi(optarg); break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!g_server || g_n < 1 || g_n > 100000 || g_clients < 1) {
		usage(stderr);
		return 2;
	}
	ss = calloc((size_t)g_n, sizeof(*ss));
	lat = calloc((size_t)g_n, sizeof(*lat));
	if (!ss || !lat)
		return 1;
	pthread_barrier_init(&g_ready, NULL, (unsigned)g_n + 1);
	pthread_barrier_init(&g_all_in, NULL, (unsigned)g_n);
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 256 * 1024);
	for (int i = 0; i < g_n; i++) {
		ss[i].i = i;
		if (pthread_create(&ss[i].th, &at, run, &ss[i]) != 0) {
			fprintf(stderr, "bench_admission: cannot start thread "
				"%d\n", i);
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &g_t0); /* all connected: go */
	pthread_barrier_wait(&g_ready);
	for (int i = 0; i < g_n; i++)
		pthread_join(ss[i].th, NULL);
	for (int i = 0; i < g_n; i++) {
		lat[i] = ss[i].lat_ms;
		ok += ss[i].ok;
		waits += ss[i].waits;
		if (ss[i].done_s > last)
			last = ss[i].done_s;
	}
	qsort(lat, (size_t)g_n, sizeof(*lat), cmp_d);
	printf("sessions %d admitted %d asks_waited %d p50_ms %.1f p99_ms %.1f "
	       "max_ms %.1f all_running_s %.3f", g_n, ok, waits,
	       lat[g_n / 2], lat[(g_n * 99) / 100], lat[g_n - 1], last);
	if (g_hold_ms < 0 && ok == g_n) {
		/* the ends, released together by the all-in barrier */
		struct timespec first = ss[0].end0, lastend = ss[0].end1;

		for (int i = 0; i < g_n; i++) {
			lat[i] = ss[i].end_ms;
			if (secs(&ss[i].end0, &first) > 0)
				first = ss[i].end0;
			if (secs(&lastend, &ss[i].end1) > 0)
				lastend = ss[i].end1;
		}
		qsort(lat, (size_t)g_n, sizeof(*lat), cmp_d);
		printf(" end_p50_ms %.1f end_p99_ms %.1f ends_s %.3f",
		       lat[g_n / 2], lat[(g_n * 99) / 100],
		       secs(&first, &lastend));
	}
	printf("\n");
	if (out) {
		FILE *f = fopen(out, "w");

		for (int i = 0; f && i < g_n; i++)
			fprintf(f, "%.3f\n", ss[i].lat_ms);
		if (f)
			fclose(f);
	}
	free(ss);
	free(lat);
	return ok == g_n ? 0 : 1;
}
