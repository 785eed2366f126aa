/*
 * bench_admission - N concurrent sessions asking nsrd to start at once.
 *
 *   bench_admission -s server [-a] [-n N] [-c CLIENTS] [-g GROUP]
 *                   [-o FILE] [-x TAG] [-H HOLD_MS] [-p NAME=PID,...]
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
 * With -a the N sessions are driven by one thread instead of N: their
 * connections are made first, then every SAVE_START is sent at once and
 * the answers are taken as they come (epoll), which is how N clients on
 * other hosts load the server, without N threads of the driver on the
 * server's CPUs; a session's latency runs from its own send.
 * With -p, the CPU time (user + system, /proc/PID/stat) each named
 * process and the driver itself used from the barrier to the last
 * admission: where the admission window's CPU goes.
 * Exit 0 if every session was admitted, 1 otherwise, 2 on usage.
 */
#include "nsr/compat.h"

#include <pthread.h>
#include <sys/epoll.h>
#include <time.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/nsrd_clnt.h"
#include "nsr/proc.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsrd.h"

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

/* -p: processes whose CPU over the admission window is reported. */
#define PROCS_MAX 64
static struct proc {
	char name[32];
	int pid;		/* 0: the driver itself */
	double t0, t1;		/* CPU seconds at the barrier, at the end */
} g_procs[PROCS_MAX];
static int g_nprocs, g_admitted;
static pthread_mutex_t g_admit_mu = PTHREAD_MUTEX_INITIALIZER;

/* procs_parse - -p NAME=PID,...; the driver is added as "driver". */
static int procs_parse(char *spec)
{
	char *save = NULL;

	for (char *t = strtok_r(spec, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '=');

		if (!eq || g_nprocs >= PROCS_MAX - 1)
			return -1;
		*eq = '\0';
		snprintf(g_procs[g_nprocs].name, sizeof(g_procs[0].name), "%s",
			 t);
		g_procs[g_nprocs++].pid = atoi(eq + 1);
	}
	snprintf(g_procs[g_nprocs].name, sizeof(g_procs[0].name), "driver");
	g_procs[g_nprocs++].pid = 0;
	return 0;
}

/* procs_read - every -p process's CPU now, into t0 or t1. */
static void procs_read(int end)
{
	for (int i = 0; i < g_nprocs; i++) {
		double c = -1;

		nsr_proc_cpu(g_procs[i].pid, &c);

		if (end)
			g_procs[i].t1 = c;
		else
			g_procs[i].t0 = c;
	}
}

/* secs - seconds from a to b. */
static double secs(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) +
	       (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

/* start_args - session i's SAVE_START: save set /bench/admissionTAG/i of
 * client "bench(i % CLIENTS)", the names in client[32] and name[64]. */
static void start_args(save_start_args *a, int i, char client[32],
		       char name[64])
{
	snprintf(client, 32, "bench%d", i % g_clients);
	snprintf(name, 64, "/bench/admission%s/%d", g_tag, i);
	memset(a, 0, sizeof(*a));
	a->client = client;
	a->name = name;
	a->level = (char *)"";
	a->pool = (char *)"";
	a->group = (char *)g_group;
	a->command = (char *)"bench_admission";
	a->savetime = time(NULL);
	a->pid = getpid();
}

/* end_args - the SAVE_END of the session r admitted: aborted, no data. */
static void end_args(save_end_args *e, const save_start_res *r)
{
	memset(e, 0, sizeof(*e));
	e->ssid = r->ssid;
	e->jobid = r->jobid;
	e->status = NSR_ERR_INVAL;
	e->msg = (char *)"admission benchmark: no data sent";
}

/* start_one - SAVE_START until admitted (or failed); 0 ok. */
static int start_one(struct nsr_nsrd *d, struct sess *s, save_start_res *r)
{
	char client[32], name[64];
	save_start_args a;
	int rc;

	start_args(&a, s->i, client, name);
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
	pthread_mutex_lock(&g_admit_mu);
	if (++g_admitted == g_n && g_nprocs)
		procs_read(1); /* the last one: the window closes */
	pthread_mutex_unlock(&g_admit_mu);
	if (rc != NSR_OK && d)
		fprintf(stderr, "session %d: %s\n", s->i, nsr_nsrd_errmsg(d));
	if (g_hold_ms < 0)
		pthread_barrier_wait(&g_all_in);
	else
		usleep((useconds_t)g_hold_ms * 1000);
	if (s->ok) {
		save_end_args e;
		nsr_void_res v;

		end_args(&e, &r);
		memset(&v, 0, sizeof(v));
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

/* -a: one thread drives every session.  A session's steps. */
enum astep {
	A_START,	/* SAVE_START sent, answer awaited */
	A_RETRY,	/* told to wait: asks again at due */
	A_HOLD,		/* admitted: ends at due (-H), or with all (no -H) */
	A_END,		/* SAVE_END sent, answer awaited */
	A_DONE		/* ended, or failed */
};

struct asess {
	struct nsr_rpc_clnt *c;
	enum astep step;
	uint32_t xid;
	struct timespec first, due; /* its first ask; when to go on */
	save_start_args a;
	save_start_res r;
	char client[32], name[64];
};

/* ms_until - ms from now to t, at least 0. */
static int ms_until(const struct timespec *t)
{
	struct timespec now;
	double d;

	clock_gettime(CLOCK_MONOTONIC, &now);
	d = secs(&now, t) * 1000;
	return d <= 0 ? 0 : (int)d + 1;
}

/* after_ms - now + ms. */
static struct timespec after_ms(int ms)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (long)(ms % 1000) * 1000000;
	if (t.tv_nsec >= 1000000000) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000;
	}
	return t;
}

/* a_send_start - (re)send session i's SAVE_START; 0 or -1. */
static int a_send_start(struct asess *x, struct sess *s)
{
	x->step = A_START;
	if (s->waits == 0) /* its first ask: latency runs from here */
		clock_gettime(CLOCK_MONOTONIC, &x->first);
	return nsr_rpc_call_send(x->c, SAVE_START, NSR_XDR(xdr_save_start_args),
				 &x->a, &x->xid) == NSR_OK ? 0 : -1;
}

/* a_send_end - session i's SAVE_END (aborted: no data sent). */
static int a_send_end(struct asess *x, struct sess *s)
{
	save_end_args e;

	end_args(&e, &x->r);
	x->step = A_END;
	clock_gettime(CLOCK_MONOTONIC, &s->end0);
	return nsr_rpc_call_send(x->c, SAVE_END, NSR_XDR(xdr_save_end_args),
				 &e, &x->xid) == NSR_OK ? 0 : -1;
}

/* a_fail - session i is over without success. */
static void a_fail(struct asess *x, struct sess *s, const char *why)
{
	fprintf(stderr, "session %d: %s\n", s->i, why);
	x->step = A_DONE;
}

/* a_answer - the answer that came for session i; returns 1 when it was
 * the admission (or failure) of its start. */
static int a_answer(struct asess *x, struct sess *s)
{
	struct timespec now;
	nsr_void_res v;
	int rc;

	if (x->step == A_END) {
		memset(&v, 0, sizeof(v));
		rc = nsr_rpc_call_recv(x->c, x->xid, NSR_XDR(xdr_nsr_void_res),
				       &v);
		clock_gettime(CLOCK_MONOTONIC, &s->end1);
		s->end_ms = secs(&s->end0, &s->end1) * 1000;
		xdr_free(NSR_XDR(xdr_nsr_void_res), (char *)&v);
		x->step = A_DONE;
		return 0;
	}
	xdr_free(NSR_XDR(xdr_save_start_res), (char *)&x->r);
	memset(&x->r, 0, sizeof(x->r));
	rc = nsr_rpc_call_recv(x->c, x->xid, NSR_XDR(xdr_save_start_res),
			       &x->r);
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (rc != NSR_OK) {
		a_fail(x, s, nsr_rpc_last_error(x->c));
		return 1;
	}
	if (x->r.st.code == NSR_ERR_WAIT) {
		s->waits++;
		x->a.ticket = x->r.ticket;
		x->step = A_RETRY;
		x->due = after_ms((int)NSR_MAX(x->r.retry_ms, 10u));
		return 0;
	}
	if (x->r.st.code != NSR_OK) {
		a_fail(x, s, x->r.st.msg ? x->r.st.msg : "refused");
		return 1;
	}
	s->lat_ms = secs(&x->first, &now) * 1000;
	s->done_s = secs(&g_t0, &now);
	s->ok = 1;
	x->step = A_HOLD;
	x->due = after_ms(g_hold_ms < 0 ? 0 : g_hold_ms);
	return 1;
}

/* run_async - -a: every session from this thread (see the top). */
static int run_async(struct sess *ss)
{
	struct asess *xs = calloc((size_t)g_n, sizeof(*xs));
	struct epoll_event ev, evs[64];
	struct nsr_buf err;
	int ep = epoll_create1(EPOLL_CLOEXEC), left = g_n, active = 1;

	if (!xs || ep < 0)
		return -1;
	nsr_buf_init(&err, 0);
	for (int i = 0; i < g_n; i++) {
		struct asess *x = &xs[i];

		ss[i].i = i;
		start_args(&x->a, i, x->client, x->name);
		if (nsr_rpc_open(g_server, NSRD_PROG, NSRD_V1, &x->c, &err) !=
		    NSR_OK) {
			a_fail(x, &ss[i], err.data);
			left--;
			continue;
		}
		ev.events = EPOLLIN;
		ev.data.u32 = (uint32_t)i;
		epoll_ctl(ep, EPOLL_CTL_ADD, nsr_rpc_fd(x->c), &ev);
	}
	if (g_nprocs)
		procs_read(0);
	clock_gettime(CLOCK_MONOTONIC, &g_t0); /* all connected: go */
	for (int i = 0; i < g_n; i++)
		if (xs[i].c && a_send_start(&xs[i], &ss[i]) != 0) {
			a_fail(&xs[i], &ss[i], nsr_rpc_last_error(xs[i].c));
			left--;
		}
	/* Bounded: every wait is an answer or a due time, and an answer
	 * that never comes ends the run after 120 s. */
	while (active) {
		int tmo = 120000, k;

		active = 0;
		for (int i = 0; i < g_n; i++) {
			struct asess *x = &xs[i];

			active += x->step != A_DONE;
			if (x->step == A_RETRY ||
			    (x->step == A_HOLD && g_hold_ms >= 0))
				tmo = NSR_MIN(tmo, ms_until(&x->due));
		}
		if (!active)
			break;
		k = epoll_wait(ep, evs, 64, tmo);
		if (k < 0 && errno != EINTR)
			break;
		if (k == 0 && tmo == 120000) {
			fprintf(stderr, "no answer for 120 s\n");
			break;
		}
		for (int e = 0; e < k; e++) {
			int i = (int)evs[e].data.u32;

			if (xs[i].step != A_START && xs[i].step != A_END)
				continue;
			if (a_answer(&xs[i], &ss[i]) && --left == 0 &&
			    g_nprocs) {
				pthread_mutex_lock(&g_admit_mu);
				procs_read(1); /* the last admission */
				pthread_mutex_unlock(&g_admit_mu);
			}
		}
		for (int i = 0; i < g_n; i++) {
			struct asess *x = &xs[i];
			int due = (x->step == A_RETRY ||
				   (x->step == A_HOLD &&
				    (g_hold_ms >= 0 || left == 0))) &&
				  ms_until(&x->due) == 0;

			if (!due)
				continue;
			if (x->step == A_RETRY ? a_send_start(x, &ss[i])
					       : a_send_end(x, &ss[i])) {
				left -= x->step == A_START; /* never admitted */
				a_fail(x, &ss[i], nsr_rpc_last_error(x->c));
			}
		}
	}
	for (int i = 0; i < g_n; i++) {
		xdr_free(NSR_XDR(xdr_save_start_res), (char *)&xs[i].r);
		nsr_rpc_close(xs[i].c);
	}
	close(ep);
	free(xs);
	nsr_buf_release(&err);
	return 0;
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
		"[-H hold-ms] [-p name=pid,...] [-a]\n");
}

/* main - options, threads, figures. */
int main(int argc, char **argv)
{
	const char *out = NULL;
	struct sess *ss;
	double *lat, last = 0;
	int opt, ok = 0, waits = 0, async = 0;
	pthread_attr_t at;

	while ((opt = getopt(argc, argv, "as:n:c:g:o:x:H:p:h")) != -1) {
		switch (opt) {
		case 'a': async = 1; break;
		case 's': g_server = optarg; break;
		case 'n': g_n = atoi(optarg); break;
		case 'c': g_clients = atoi(optarg); break;
		case 'g': g_group = optarg; break;
		case 'o': out = optarg; break;
		case 'x': g_tag = optarg; break;
		case 'H': g_hold_ms = atoi(optarg); break;
		case 'p':
			if (procs_parse(optarg) != 0) {
				usage(stderr);
				return 2;
			}
			break;
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
	if (async) {
		if (run_async(ss) != 0)
			return 1;
		goto figures;
	}
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
	if (g_nprocs)
		procs_read(0);
	clock_gettime(CLOCK_MONOTONIC, &g_t0); /* all connected: go */
	pthread_barrier_wait(&g_ready);
	for (int i = 0; i < g_n; i++)
		pthread_join(ss[i].th, NULL);
figures:
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
	for (int i = 0; i < g_nprocs; i++)
		if (g_procs[i].t1 - g_procs[i].t0 > 0 || g_procs[i].pid == 0)
			printf("%s%s:%.0f", i ? "," : " admit_cpu_ms ",
			       g_procs[i].name,
			       (g_procs[i].t1 - g_procs[i].t0) * 1000);
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
