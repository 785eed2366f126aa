/*
 * nsrim - apply the browse and retention policies (nsrim.h):
 *
 *   nsrim [-n] [-v] [-s server] [-c client] [-N saveset] [-V volume]
 *
 * Exit status: 0 done (or, with -n, reported), 1 usage, 2 the run failed
 * or could not reach the server (the next run completes it), 3 done but
 * some index entries could not be removed (run it again).
 */
#include "nsr/compat.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/nsrim.h"

/* usage - the --help text. */
static void usage(FILE *f)
{
	fprintf(f,
		"usage: nsrim [-l] [-n] [-v] [-s server] [-c client] "
		"[-N saveset] [-V volume]\n"
		"  Removes the index entries of save sets past their browse "
		"time and\n"
		"  marks save sets past their retention time recyclable, and "
		"volumes\n"
		"  whose save sets all are.  Recyclable data stays on its "
		"volume until\n"
		"  the volume is relabeled (nsrd relabels a recyclable volume "
		"when a\n"
		"  save needs one).\n"
		"  -l  also take the oldest full cycle of each client's save "
		"set name out\n"
		"      of the index (its full and what was saved after it "
		"before the next\n"
		"      full), when a newer full is there, whatever the browse "
		"policy says\n"
		"  -n  report what would be done, change nothing\n"
		"  -v  a line per save set changed\n"
		"  -s  the NetWorker server (default: this host)\n"
		"  -c  only the save sets of this client change\n"
		"  -N  only the save sets of this save set name change\n"
		"  -V  only the save sets on this volume change, and only "
		"this volume\n"
		"      is judged (every save set is still read, so that a "
		"backup's\n"
		"      chain keeps what later backups build on)\n");
}

/* main - parse the options, run once, print the summary. */
int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 }
	};
	struct nsr_nsrim_opts o;
	struct nsr_nsrim_stats st;
	struct nsr_buf err;
	char line[512];
	int c, rc;

	memset(&o, 0, sizeof(o));
	o.out = stdout;
	/* tests: a crash point (an interrupted run, redone by the next) */
	if (getenv("NSR_TEST_NSRIM_STOP_AFTER"))
		o.stop_after = (unsigned)atoi(
			getenv("NSR_TEST_NSRIM_STOP_AFTER"));
	while ((c = getopt_long(argc, argv, "lnvs:c:N:V:h", longopts, NULL)) !=
	       -1) {
		switch (c) {
		case 'c': o.client = optarg; break;
		case 'N': o.name = optarg; break;
		case 'V': o.volume = optarg; break;
		case 'l': o.oldest_cycle = 1; break;
		case 'n': o.dry_run = 1; break;
		case 'v': o.verbose = 1; break;
		case 's': o.server = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 1;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "nsrim: unexpected argument '%s'\n",
			argv[optind]);
		usage(stderr);
		return 1;
	}
	nsr_buf_init(&err, 0);
	rc = nsr_nsrim_run(&o, &st, &err);
	nsr_nsrim_summary(&st, o.dry_run, line, sizeof(line));
	printf("%s\n", line);
	if (rc != NSR_OK) {
		fprintf(stderr, "nsrim: %s; nothing done is undone: run nsrim "
			"again once the server answers\n",
			err.len ? err.data : nsr_strerror(rc));
		nsr_buf_release(&err);
		return 2;
	}
	nsr_buf_release(&err);
	return st.index_failures ? 3 : 0;
}
