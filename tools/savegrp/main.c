/*
 * savegrp - run a group of scheduled backups now, or preview it (-n);
 * with -O only the bootstrap of the server's state (nsrbootstrap).
 *
 * nsrd plans the run (each client's save sets and level of the day),
 * starts it as a savegrp job and has each client's nsrexecd run save;
 * with -R it plans only the clients the group's last run did not save,
 * each at the level it ran at;
 * savegrp follows the job in nsrjobd until it ends and prints each
 * client's result.  Exit: 0 every client succeeded (or the preview was
 * printed), 1 a client failed after its retries, 2 usage, 3 the group
 * could not be started or followed.
 */
#include "nsr/compat.h"

#include <getopt.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/jobd_clnt.h"
#include "nsr/log.h"
#include "nsr/peer.h"
#include "nsr/nsrd_clnt.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsrd.h"
#include "nsr/xmalloc.h"

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2, EXIT_ERROR = 3 };

#define MAX_CLIENTS 1024

/* usage - the synopsis to f. */
static void usage(FILE *f)
{
	fprintf(f,
		"usage: savegrp [-nvOR] [-s server] [-l level] [-c client]... "
		"[-G] group\n"
		"  -s server   the server (default: this host)\n"
		"  -l level    full, incr or 1-9 for every client (default: "
		"each client's\n"
		"              schedule, or the group's level or schedule)\n"
		"  -c client   only this client (repeatable)\n"
		"  -n          preview: print what would run, run nothing\n"
		"  -O          only the bootstrap (the server's state, client "
		"file indexes\n"
		"              included), no client save\n"
		"  -R          restart: only the clients the group's last run "
		"did not\n"
		"              save, each at the level it ran at (not with -l, "
		"-O)\n"
		"  -v          print every client's job log (a failed "
		"client's always)\n"
		"  -G group    the group (or give it as the last argument)\n"
		"exit: 0 all clients succeeded, 1 a client failed, 2 usage, "
		"3 could not run\n");
}

/* print_plan - a preview, one save set a line. */
static void print_plan(const savegrp_res *r, const char *group)
{
	printf("savegrp: group %s would run %u save set(s):\n", group,
	       r->plan.plan_len);
	printf("%-30s %-6s %s\n", "client", "level", "save set");
	for (u_int i = 0; i < r->plan.plan_len; i++)
		printf("%-30s %-6s %s\n", r->plan.plan_val[i].client,
		       r->plan.plan_val[i].level, r->plan.plan_val[i].saveset);
}

/* print_log - a job's log line, indented (nsr_jobdb_log_fn). */
static int print_log(void *arg, int64_t seq, int64_t time, const char *line)
{
	NSR_UNUSED(arg);
	NSR_UNUSED(seq);
	NSR_UNUSED(time);
	printf("    %s\n", line);
	return 0;
}

/* job_state - the state of job id (0 when it cannot be read). */
static int job_state(struct nsr_jobd *j, int64_t id, char *status,
		     size_t len, struct nsr_buf *err)
{
	const struct nsr_jobdb_job *job;
	char q[64];
	int st = 0;

	snprintf(q, sizeof(q), ". job id: %lld", (long long)id);
	if (nsr_jobd_query_open_text(j, q, 0, err) != NSR_OK)
		return 0;
	while (nsr_jobd_query_next(j, &job, err) == NSR_OK) {
		st = (int)job->state;
		snprintf(status, len, "%s", job->status ? job->status : "");
	}
	return st;
}

/* follow - wait for the group's job to end; print the clients; the exit
 * status. */
static int follow(const char *server, int64_t id, int verbose)
{
	const struct nsr_jobdb_job *job;
	struct nsr_jobd *j = NULL;
	struct nsr_buf err;
	char q[64], status[512] = "";
	int st = 0, rc;

	nsr_buf_init(&err, 0);
	/* a long-lived handle: a restart of the jobs database (it restarts
	 * with nsrd) is waited for, not taken for the end of the run */
	if (nsr_jobd_new(server, nsr_peer_wait_default(), &j) != NSR_OK) {
		nsr_error("out of memory");
		nsr_buf_release(&err);
		return EXIT_ERROR;
	}
	for (;;) {
		nsr_buf_clear(&err);
		st = job_state(j, id, status, sizeof(status), &err);
		if (st == 0 && err.len) {
			nsr_error("cannot read job %lld: %s", (long long)id,
				  err.data);
			break;
		}
		if (st >= NSR_JOBDB_COMPLETED)
			break;
		sleep(1);
	}
	snprintf(q, sizeof(q), ". parent job id: %lld", (long long)id);
	rc = nsr_jobd_query_open_text(j, q, 1, &err);
	while (rc == NSR_OK &&
	       nsr_jobd_query_next(j, &job, &err) == NSR_OK) {
		printf("  %-30s %-6s %-10s %s\n",
		       job->client ? job->client : "",
		       job->level ? job->level : "",
		       nsr_jobdb_state_name(job->state),
		       job->status ? job->status : "");
		if (verbose || job->state != NSR_JOBDB_COMPLETED)
			nsr_jobd_log_read(j, print_log, NULL);
	}
	nsr_jobd_close(j);
	nsr_buf_release(&err);
	if (st == NSR_JOBDB_COMPLETED) {
		printf("savegrp: group job %lld succeeded\n", (long long)id);
		return EXIT_OK;
	}
	printf("savegrp: group job %lld %s\n", (long long)id,
	       st ? "failed" : "ended in an unknown state");
	return st ? EXIT_FAILED : EXIT_ERROR;
}

/* main - parse options, ask nsrd, follow the run. */
int main(int argc, char **argv)
{
	static const struct option lo[] = {{"help", no_argument, NULL, 'h'},
					   {NULL, 0, NULL, 0}};
	static savegrp_name clients[MAX_CLIENTS];
	const char *server = NULL, *group = NULL, *level = "";
	struct nsr_nsrd *d = NULL;
	struct nsr_buf err;
	savegrp_args a;
	savegrp_res r;
	int opt, nc = 0, preview = 0, verbose = 0, only_boot = 0, rc;
	int restart = 0;

	nsr_log_init("savegrp", NSR_LOG_STDERR | NSR_LOG_BARE);
	while ((opt = getopt_long(argc, argv, "s:l:c:G:nvORh", lo, NULL)) !=
	       -1) {
		switch (opt) {
		case 's': server = optarg; break;
		case 'l': level = optarg; break;
		case 'c':
			if (nc == MAX_CLIENTS) {
				nsr_error("at most %d clients (-c)",
					  MAX_CLIENTS);
				return EXIT_USAGE;
			}
			clients[nc++] = optarg;
			break;
		case 'G': group = optarg; break;
		case 'n': preview = 1; break;
		case 'v': verbose = 1; break;
		case 'O': only_boot = 1; break;
		case 'R': restart = 1; break;
		case 'h': usage(stdout); return EXIT_OK;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (!group && optind < argc)
		group = argv[optind++];
	if (restart && (only_boot || *level)) {
		nsr_error("-R runs each client at the level it ran at, and "
			  "client saves only: not with -l or -O");
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!group || optind < argc) {
		nsr_error(group ? "one group only" : "name the group to run");
		usage(stderr);
		return EXIT_USAGE;
	}
	nsr_buf_init(&err, 0);
	if (nsr_nsrd_open(server, &d, &err) != NSR_OK) {
		nsr_error("%s", err.data);
		nsr_buf_release(&err);
		return EXIT_ERROR;
	}
	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.group = (char *)group;
	a.level = (char *)level;
	a.clients.clients_len = (u_int)nc;
	a.clients.clients_val = clients;
	a.preview = preview;
	a.only_bootstrap = only_boot;
	a.restart = restart;
	rc = nsr_nsrd_savegrp(d, &a, &r);
	if (rc == NSR_OK && restart && r.note && *r.note)
		printf("savegrp: %s\n", r.note);
	if (rc != NSR_OK) {
		nsr_error("group %s: %s", group, nsr_nsrd_errmsg(d));
		rc = EXIT_ERROR;
	} else if (restart && !r.jobid && !r.plan.plan_len) {
		rc = EXIT_OK; /* nothing to restart: the note says why */
	} else if (restart && preview) {
		printf("savegrp: a restart of job %lld\n",
		       (long long)r.restart_of);
		print_plan(&r, group);
		rc = EXIT_OK;
	} else if (preview && only_boot) {
		printf("savegrp: group %s would save only the bootstrap (-O): "
		       "no client save\n", group);
		rc = EXIT_OK;
	} else if (preview) {
		print_plan(&r, group);
		rc = EXIT_OK;
	} else {
		if (restart)
			printf("savegrp: group %s restarted (job %lld, a "
			       "restart of job %lld)\n", group,
			       (long long)r.jobid, (long long)r.restart_of);
		else
			printf("savegrp: group %s started (job %lld)\n",
			       group, (long long)r.jobid);
		fflush(stdout);
		rc = follow(server, r.jobid, verbose);
	}
	xdr_free(NSR_XDR(xdr_savegrp_res), (char *)&r);
	nsr_nsrd_close(d);
	nsr_buf_release(&err);
	return rc;
}
