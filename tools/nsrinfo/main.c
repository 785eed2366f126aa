/*
 * nsrinfo - list a client's file index contents (src/browse/info.c).
 *
 *   nsrinfo [-v] [-s server] [-t time] [-S ssid] [-N filename] client
 *
 * Exit status: 0 listed, 1 the server, client, save time or save set was
 * not found or could not be reached (the message says which), 2 usage.
 */
#include "nsr/compat.h"

#include <getopt.h>
#include <time.h>

#include "nsr/browse.h"
#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/getdate.h"
#include "nsr/host.h"
#include "nsr/log.h"

/* usage - print --help text. */
static void usage(FILE *f)
{
	fprintf(f,
		"usage: nsrinfo [-v] [-s server] [-t time] [-S ssid] "
		"[-N filename] client\n"
		"  List the client file index of client: every entry of "
		"every save set\n"
		"  (oldest first), as \"path, date=SAVETIME DATE\".\n"
		"  -s server    OpenNSR server (default: this host)\n"
		"  -t time      only the save sets of exactly this save time "
		"(seconds, as\n"
		"               mminfo prints nsavetime, or an nsr_getdate(1) "
		"date)\n"
		"  -S ssid      only save set ssid (an OpenNSR extension)\n"
		"  -N filename  only entries with exactly this path\n"
		"  -v           also size, ssid, type and mode of each entry\n"
		"Exit status: 0 listed, 1 not found or unreachable, 2 "
		"usage.\n");
}

/* parse_time - a save time: all digits are seconds, else nsr_getdate. */
static int parse_time(const char *s, int64_t *out)
{
	char *end;
	long long v;
	time_t t;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (*s && !*end && !errno && v > 0) {
		*out = v;
		return 0;
	}
	if (nsr_getdate(s, time(NULL), &t) != NSR_OK)
		return -1;
	*out = t;
	return 0;
}

/* main - parse options, do the work, exit status. */
int main(int argc, char **argv)
{
	static const struct option lo[] = {{"help", no_argument, NULL, 'h'},
					   {NULL, 0, NULL, 0}};
	struct nsr_browse_info_opts o;
	struct nsr_buf err;
	char host[256], *end;
	int opt, rc;

	nsr_log_init("nsrinfo", NSR_LOG_STDERR | NSR_LOG_BARE);
	memset(&o, 0, sizeof(o));
	o.out = stdout;
	while ((opt = getopt_long(argc, argv, "s:t:S:N:vh", lo, NULL)) != -1) {
		switch (opt) {
		case 's':
			o.server = optarg;
			break;
		case 't':
			if (parse_time(optarg, &o.savetime)) {
				fprintf(stderr,
					"nsrinfo: cannot understand save "
					"time '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'S':
			errno = 0;
			o.ssid = strtoull(optarg, &end, 10);
			if (end == optarg || *end || errno || o.ssid == 0) {
				fprintf(stderr,
					"nsrinfo: bad save set id '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'N':
			o.name = optarg;
			break;
		case 'v':
			o.verbose = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "nsrinfo: name one client\n");
		usage(stderr);
		return 2;
	}
	o.client = argv[optind];
	nsr_host_self(host, sizeof(host));
	if (!o.server)
		o.server = host;
	nsr_buf_init(&err, 0);
	rc = nsr_browse_info(&o, &err);
	if (rc)
		nsr_error("%s", err.len ? err.data : nsr_strerror(rc));
	nsr_buf_release(&err);
	return rc ? 1 : 0;
}
