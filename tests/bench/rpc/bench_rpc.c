/*
 * bench_rpc.c - server transport benchmark (not run by ctest); see
 * RESULTS.md.  In one process, over loopback:
 *   1. round trips: one client, sequential calls on one connection;
 *   2. the same with 32 clients at once, each on its own connection;
 *   3. pipelined one-way calls (100,000) followed by one call;
 *   4. round trips of one client while `idle` other connections are open
 *      and silent (argument 1, default 4000), then the process's threads
 *      and resident memory.
 * Prints one line per part: calls, seconds, calls/s, microseconds/call.
 */
#include "nsr/compat.h"

#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsrexecd.h"
#include "nsr/xmalloc.h"

#define RT_CALLS 20000
#define PAR_CLIENTS 32
#define PAR_CALLS 2000
#define ONEWAY_CALLS 100000

static long oneway_seen;

/* h_echo - LOC_GETPORT: echo the program number. */
static int h_echo(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	loc_key *k = args;
	loc_get_res *r = res;

	(void)ctx;
	(void)call;
	r->st.msg = nsr_xstrdup("");
	r->port = (int)k->prog;
	return NSR_OK;
}

/* h_oneway - LOC_REGISTER, one-way: count. */
static int h_oneway(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	(void)ctx;
	(void)args;
	(void)res;
	(void)call;
	oneway_seen++;
	return NSR_RPC_NOREPLY;
}

static const struct nsr_rpc_proc procs[] = {
	{LOC_GETPORT, "echo", NSR_XDR(xdr_loc_key), sizeof(loc_key),
	 NSR_XDR(xdr_loc_get_res), sizeof(loc_get_res), h_echo, 0},
	{LOC_REGISTER, "oneway", NSR_XDR(xdr_loc_reg_args),
	 sizeof(loc_reg_args), NSR_XDR(xdr_nsr_void_res), sizeof(nsr_void_res),
	 h_oneway, 0},
};

static const struct nsr_rpc_prog progs[] = {
	{NSREXECD_PROG, NSREXECD_V1, procs, NSR_ARRAY_SIZE(procs), NULL, NULL},
};

static struct nsr_rpc_server *srv;
static int port;
static volatile int stopping;

/* now_s - monotonic seconds. */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* accept_loop - the daemon loop's accepting part. */
static void *accept_loop(void *arg)
{
	struct pollfd p = {.fd = nsr_rpc_server_listen_fd(srv, 0),
			   .events = POLLIN};

	(void)arg;
	while (!stopping)
		if (poll(&p, 1, 50) > 0)
			nsr_rpc_server_accept(srv, 0);
	return NULL;
}

/* client - a connected client or exit. */
static struct nsr_rpc_clnt *client(void)
{
	struct nsr_rpc_clnt *c = NULL;

	if (nsr_rpc_connect("127.0.0.1", port, NSREXECD_PROG, NSREXECD_V1, 5000,
			    &c, NULL) != NSR_OK) {
		fprintf(stderr, "bench_rpc: cannot connect\n");
		exit(1);
	}
	return c;
}

/* round_trips - n sequential calls on c. */
static void round_trips(struct nsr_rpc_clnt *c, int n)
{
	for (int i = 0; i < n; i++) {
		loc_key k = {.prog = (uint32_t)i, .vers = 1};
		loc_get_res r;

		memset(&r, 0, sizeof(r));
		if (nsr_rpc_call(c, LOC_GETPORT, NSR_XDR(xdr_loc_key), &k,
				 NSR_XDR(xdr_loc_get_res), &r) != NSR_OK ||
		    r.port != i) {
			fprintf(stderr, "bench_rpc: call failed\n");
			exit(1);
		}
		xdr_free(NSR_XDR(xdr_loc_get_res), &r);
	}
}

/* par_main - one of the parallel clients. */
static void *par_main(void *arg)
{
	struct nsr_rpc_clnt *c = client();

	(void)arg;
	round_trips(c, PAR_CALLS);
	nsr_rpc_close(c);
	return NULL;
}

/* report - one result line. */
static void report(const char *what, long calls, double sec)
{
	printf("%-34s %8ld calls %7.3f s %9.0f calls/s %7.1f us/call\n", what,
	       calls, sec, (double)calls / sec, sec * 1e6 / (double)calls);
}

/* proc_status - this process's threads and resident memory. */
static void proc_status(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "Threads:", 8) ||
		    !strncmp(line, "VmRSS:", 6))
			printf("  %s", line);
	if (f)
		fclose(f);
}

/* idle_conns - n silent TCP connections to the server. */
static int *idle_conns(int n)
{
	int *fd = nsr_xmalloc((size_t)n * sizeof(*fd));
	struct sockaddr_in a;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (int i = 0; i < n; i++) {
		fd[i] = socket(AF_INET, SOCK_STREAM, 0);
		if (fd[i] < 0 ||
		    connect(fd[i], (struct sockaddr *)&a, sizeof(a)) != 0) {
			fprintf(stderr, "bench_rpc: idle connection %d: %s\n",
				i, strerror(errno));
			exit(1);
		}
	}
	return fd;
}

int main(int argc, char **argv)
{
	pthread_t acc, par[PAR_CLIENTS];
	struct nsr_rpc_clnt *c;
	int nidle = argc > 1 ? atoi(argv[1]) : 4000, *fds;
	char name[] = "n";
	double t;

	if (nsr_rpc_server_new(progs, 1, &srv) != NSR_OK ||
	    nsr_rpc_server_listen(srv, "127.0.0.1", 0, &port) != NSR_OK)
		return 1;
	pthread_create(&acc, NULL, accept_loop, NULL);

	c = client();
	round_trips(c, 1000); /* warm up */
	t = now_s();
	round_trips(c, RT_CALLS);
	report("round trips, 1 client", RT_CALLS, now_s() - t);

	t = now_s();
	for (int i = 0; i < PAR_CLIENTS; i++)
		pthread_create(&par[i], NULL, par_main, NULL);
	for (int i = 0; i < PAR_CLIENTS; i++)
		pthread_join(par[i], NULL);
	report("round trips, 32 clients", (long)PAR_CLIENTS * PAR_CALLS,
	       now_s() - t);

	t = now_s();
	for (int i = 0; i < ONEWAY_CALLS; i++) {
		loc_reg_args a = {.prog = 1, .vers = 1, .port = i,
				  .name = name};

		if (nsr_rpc_send(c, LOC_REGISTER, NSR_XDR(xdr_loc_reg_args),
				 &a) != NSR_OK)
			return 1;
	}
	round_trips(c, 1);
	report("one-way calls, pipelined", ONEWAY_CALLS, now_s() - t);

	fds = idle_conns(nidle);
	t = now_s();
	round_trips(c, RT_CALLS);
	printf("with %d idle connections open:\n", nidle);
	report("round trips, 1 client", RT_CALLS, now_s() - t);
	proc_status();
	for (int i = 0; i < nidle; i++)
		close(fds[i]);
	free(fds);

	nsr_rpc_close(c);
	stopping = 1;
	pthread_join(acc, NULL);
	nsr_rpc_server_free(srv);
	return oneway_seen == ONEWAY_CALLS ? 0 : 1;
}
