/*
 * nsrwatch - what the server is doing: devices, movers, sessions, saves
 * that wait (queued, mount requests).
 *
 *   nsrwatch [-s server] [-p seconds] [-n count] [-x json]
 *
 * On a terminal the screen is redrawn every -p seconds (default 2) until
 * interrupted or -n screens were shown; otherwise, and with -x json, it
 * prints once (-n repeats).  The status comes from nsrd (STATUS); the
 * rendering is src/admin/watch.c.
 */
#include "nsr/compat.h"

#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/log.h"
#include "nsr/nsrd_clnt.h"
#include "nsr/rpc.h"
#include "nsr/watch.h"

static volatile sig_atomic_t stop;

/* on_signal - SIGINT/SIGTERM: stop after this screen (flag only). */
static void on_signal(int sig)
{
	NSR_UNUSED(sig);
	stop = 1;
}

/* usage - print --help text. */
static void usage(FILE *f)
{
	fprintf(f, "usage: nsrwatch [-s server] [-p seconds] [-n count] [-x "
		   "json]\n"
		   "  -s server   the NetWorker-style server (default: this "
		   "host)\n"
		   "  -p seconds  redraw interval on a terminal (default 2)\n"
		   "  -n count    show this many screens, then exit\n"
		   "  -x json     one JSON object per screen, for scripts\n");
}

/* screen - one STATUS and its rates (STATUS_RATES; left out, with a
 * note on stderr, if nsrd cannot give them), rendered to stdout; 0, or 1
 * on failure. */
static int screen(struct nsr_nsrd *c, int json, int live)
{
	status_res r;
	rates_res rt;
	const rates_res *rates = &rt;
	struct nsr_buf out;
	int rc;

	memset(&r, 0, sizeof(r));
	memset(&rt, 0, sizeof(rt));
	rc = nsr_nsrd_status(c, &r);
	if (rc != NSR_OK) {
		fprintf(stderr, "nsrwatch: %s\n", nsr_nsrd_errmsg(c));
		xdr_free(NSR_XDR(xdr_status_res), (char *)&r);
		return 1;
	}
	if (nsr_nsrd_status_rates(c, &rt) != NSR_OK) {
		fprintf(stderr, "nsrwatch: no rates: %s\n",
			nsr_nsrd_errmsg(c));
		rates = NULL;
	}
	nsr_buf_init(&out, 0);
	rc = json ? nsr_watch_json_rates(&r, rates, &out)
		  : nsr_watch_text_rates(&r, rates, &out);
	xdr_free(NSR_XDR(xdr_status_res), (char *)&r);
	xdr_free(NSR_XDR(xdr_rates_res), (char *)&rt);
	if (rc == NSR_OK) {
		if (live)
			fputs("\033[H\033[2J", stdout);
		fwrite(out.data, 1, out.len, stdout);
		fflush(stdout);
	}
	nsr_buf_release(&out);
	return rc == NSR_OK ? 0 : 1;
}

/* main - parse options, show the screens, exit status. */
int main(int argc, char **argv)
{
	static const struct option lo[] = {{"help", no_argument, NULL, 'h'},
					   {NULL, 0, NULL, 0}};
	const char *server = NULL;
	long every = 2, count = 0;
	int json = 0, live, opt, failed = 0;
	struct nsr_nsrd *c = NULL;
	struct nsr_buf err;
	char *end;

	nsr_log_init("nsrwatch", NSR_LOG_STDERR | NSR_LOG_BARE);
	while ((opt = getopt_long(argc, argv, "s:p:n:x:h", lo, NULL)) != -1) {
		switch (opt) {
		case 's': server = optarg; break;
		case 'p':
			every = strtol(optarg, &end, 10);
			if (*end || every < 1 || every > 3600) {
				fprintf(stderr, "nsrwatch: -p takes seconds "
					"from 1 to 3600\n");
				return 2;
			}
			break;
		case 'n':
			count = strtol(optarg, &end, 10);
			if (*end || count < 1) {
				fprintf(stderr, "nsrwatch: -n takes a count "
					"of 1 or more\n");
				return 2;
			}
			break;
		case 'x':
			if (strcmp(optarg, "json") != 0) {
				fprintf(stderr, "nsrwatch: -x takes json\n");
				return 2;
			}
			json = 1;
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		usage(stderr);
		return 2;
	}
	live = !json && isatty(1);
	if (!count)
		count = live ? -1 : 1;
	nsr_buf_init(&err, 0);
	if (nsr_nsrd_open(server, &c, &err) != NSR_OK) {
		fprintf(stderr, "nsrwatch: %s\n", err.data);
		nsr_buf_release(&err);
		return 1;
	}
	nsr_buf_release(&err);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	for (long i = 0; !stop && (count < 0 || i < count); i++) {
		if (i > 0)
			poll(NULL, 0, (int)(every * 1000));
		if (!stop)
			failed |= screen(c, json, live);
	}
	nsr_nsrd_close(c);
	return failed;
}
