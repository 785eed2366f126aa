/*
 * recover - restore files saved with save.
 *
 *   recover [-fkq] [-s server] [-c client] [-d dir] [-t time] [-iN|Y|R]
 *           -a path ...
 *   recover [-fkq] [-s server] [-d dir] [-iN|Y|R] -S ssid [-S ssid ...]
 *           [path ...]
 *
 * With -a, the client file index (nsrindexd) tells which save set holds the
 * newest version of each path as of the browse time; with -S the save set is
 * named directly.  nsrd finds the fragments of the save set and, for each,
 * the data mover of the device its volume is mounted on; the fragments are
 * read in order, volume after volume, into one stream that is checked and
 * recreated with its metadata, under -d dir if given.  A damaged block is
 * named and skipped: every intact file is still recovered, the damaged ones
 * are named (and removed, or with -k kept as name.damaged), and the exit
 * status is 1.  The interactive browser (recover>
 * prompt) is not written yet.
 */
#include "nsr/compat.h"

#include <getopt.h>
#include <time.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/getdate.h"
#include "nsr/host.h"
#include "nsr/log.h"
#include "nsr/restore.h"
#include "nsr/session.h"
#include "nsr/xmalloc.h"

struct rec_ui {
	int quiet, verbose;
};

/* usage - print --help text. */
static void usage(FILE *f)
{
	fprintf(f,
		"usage: recover [-fkqv] [-s server] [-c client] [-d dir] [-t "
		"time] "
		"[-i{nNyYrR}] -a path ...\n"
		"       recover [-fkqv] [-s server] [-d dir] [-i{nNyYrR}] -S "
		"ssid "
		"[-S ssid ...] [path ...]\n"
		"  -a          recover the named paths (newest version as of "
		"-t)\n"
		"  -S ssid     recover save set ssid (optionally only the "
		"paths named)\n"
		"  -d dir      relocate: /a/b is restored as dir/a/b\n"
		"  -c client   whose index to browse (default: this host)\n"
		"  -t time     browse time (nsr_getdate syntax; default: now)\n"
		"  -i{n|y|r}   existing files: n skip (default), y overwrite, "
		"r rename\n"
		"  -f          overwrite existing files (same as -iY)\n"
		"  -k          keep a damaged file's bytes as name.damaged\n"
		"              (default: remove it)\n"
		"  -s server   OpenNSR server (default: this host); -q quiet; "
		"-v verbose\n");
}

/* on_restored - -v lists each restored object. */
static void on_restored(void *ctx, const struct nsr_asm_file *f,
			const char *target)
{
	const struct rec_ui *ui = ctx;

	NSR_UNUSED(f);
	if (ui->verbose)
		printf("%s\n", target);
}

/* on_message - the session's messages: progress on standard output
 * (unless -q), problems as warnings and errors. */
static void on_message(void *ctx, enum nsr_session_msg kind, const char *text)
{
	const struct rec_ui *ui = ctx;

	if (kind == NSR_SESSION_ERROR)
		nsr_error("%s", text);
	else if (kind == NSR_SESSION_WARN)
		nsr_warn("%s", text);
	else if (!ui->quiet)
		printf("%s\n", text);
}

/* absolute - malloc'ed absolute path (symlinks not resolved). */
static char *absolute(const char *path)
{
	char cwd[4096];

	if (path[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		return nsr_xstrdup(path);
	return nsr_xcheck(nsr_path_join(cwd, path));
}

/* main - parse options, do the work, exit status. */
int main(int argc, char **argv)
{
	static const struct option lo[] = {{"help", no_argument, NULL, 'h'},
					   {NULL, 0, NULL, 0}};
	struct nsr_session_recover_opts o;
	struct nsr_session_recover *sr = NULL;
	struct rec_ui ui = {0};
	uint32_t ssids[64];
	int nssid = 0, automatic = 0, opt, failed = 0;
	int64_t browse = 0;
	char host[256];
	struct nsr_buf err;
	time_t bt;

	nsr_log_init("recover", NSR_LOG_STDERR | NSR_LOG_BARE);
	memset(&o, 0, sizeof(o));
	nsr_buf_init(&err, 0);
	o.conflict = NSR_RESTORE_SKIP;
	while ((opt = getopt_long(argc, argv, "s:c:d:t:i:S:afkqvh", lo,
				  NULL)) != -1) {
		switch (opt) {
		case 's': o.server = optarg; break;
		case 'c': o.client = optarg; break;
		case 'd': o.dest = optarg; break;
		case 't':
			if (nsr_getdate(optarg, time(NULL), &bt) != NSR_OK)
				nsr_fatal("cannot understand browse time '%s'",
					  optarg);
			browse = bt;
			break;
		case 'i':
			switch (optarg[0]) {
			case 'n':
			case 'N':
				o.conflict = NSR_RESTORE_SKIP;
				break;
			case 'y':
			case 'Y':
				o.conflict = NSR_RESTORE_OVERWRITE;
				break;
			case 'r':
			case 'R':
				o.conflict = NSR_RESTORE_RENAME;
				break;
			default:
				fprintf(stderr,
					"recover: -i takes n, y or r\n");
				return 2;
			}
			break;
		case 'f': o.conflict = NSR_RESTORE_OVERWRITE; break;
		case 'k': o.keep_damaged = 1; break;
		case 'S': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);

			if (end == optarg || (*end && *end != '/') || v == 0 ||
			    v > UINT32_MAX) {
				fprintf(stderr,
					"recover: bad save set id '%s'\n",
					optarg);
				return 2;
			}
			if (nssid == (int)NSR_ARRAY_SIZE(ssids)) {
				fprintf(stderr,
					"recover: too many -S options\n");
				return 2;
			}
			ssids[nssid++] = (uint32_t)v;
			break;
		}
		case 'a': automatic = 1; break;
		case 'q': ui.quiet = 1; break;
		case 'v': ui.verbose = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!automatic && !nssid) {
		fprintf(stderr, "recover: the interactive browser is not "
				"available yet; "
				"use -a path ... or -S ssid\n");
		usage(stderr);
		return 2;
	}
	if (automatic && optind >= argc) {
		fprintf(stderr, "recover: -a needs at least one path\n");
		return 2;
	}
	nsr_host_self(host, sizeof(host));
	if (!o.server)
		o.server = host;
	if (!o.client)
		o.client = host;
	o.restored = on_restored;
	o.message = on_message;
	o.ctx = &ui;
	if (nsr_session_recover_open(&o, &sr, &err) != NSR_OK)
		nsr_fatal("cannot reach the OpenNSR server %s: %s", o.server,
			  err.data);

	if (nssid) {
		const char **paths = NULL;
		int np = argc - optind;

		if (np > 0) {
			paths = nsr_xcalloc((size_t)np, sizeof(char *));
			for (int i = 0; i < np; i++)
				paths[i] = absolute(argv[optind + i]);
		}
		for (int i = 0; i < nssid; i++)
			failed |= nsr_session_recover_ssid(sr, ssids[i], paths,
							   (size_t)np, NULL);
		for (int i = 0; i < np; i++)
			free((char *)paths[i]);
		free(paths);
	} else {
		for (int i = optind; i < argc; i++) {
			char *p = absolute(argv[i]);

			failed |= nsr_session_recover_path(sr, p, browse, NULL);
			free(p);
		}
	}
	/* The completion line only for a recover that completed. */
	if (!ui.quiet && !failed) {
		time_t now = time(NULL);
		char when[64];

		strftime(when, sizeof(when), "%a %b %e %H:%M:%S %Y",
			 localtime(&now));
		printf("Recover completion time: %s\n", when);
	}
	nsr_session_recover_close(sr);
	nsr_buf_release(&err);
	return failed ? 1 : 0;
}
