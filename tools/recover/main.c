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
 * status is 1.
 *
 * Without -a and -S, recover is interactive (src/browse): the recover>
 * prompt browses the index as of -t (a path argument is the directory
 * to start in), marks files and recovers them; lines are edited on a
 * terminal (src/ledit) and read plainly from a pipe.
 */
#include "nsr/compat.h"

#include <getopt.h>
#include <time.h>
#include <unistd.h>

#include "nsr/browse.h"
#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/getdate.h"
#include "nsr/host.h"
#include "nsr/ledit.h"
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
		"       recover [-fkqv] [-s server] [-c client] [-d dir] [-t "
		"time] [-i{nNyYrR}] [dir]\n"
		"              (interactive: the recover> prompt; help there "
		"lists the commands)\n"
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

/* read_line - the browser's line reader: the line editor on a terminal,
 * plain lines otherwise; a line too long is said and read as empty. */
static int read_line(void *ctx, const char *prompt, struct nsr_buf *line)
{
	int rc = nsr_ledit_read(ctx, prompt, line);

	if (rc == NSR_ERR_TOOBIG) {
		fprintf(stdout, "line longer than %d bytes ignored\n",
			NSR_LEDIT_MAX);
		nsr_buf_reset(line);
		return 1;
	}
	return rc;
}

/* interactive - the recover> dialogue (src/browse) starting in dir. */
static int interactive(const struct nsr_session_recover_opts *o,
		       int64_t browse, const char *dir)
{
	struct nsr_browse_opts bo;
	struct nsr_ledit *le;
	struct nsr_buf err;
	char cwd[4096];
	int rc;

	memset(&bo, 0, sizeof(bo));
	bo.rec = *o;
	bo.browse = browse;
	bo.cwd = dir ? dir : getcwd(cwd, sizeof(cwd));
	bo.out = stdout;
	if (nsr_ledit_new(STDIN_FILENO, STDOUT_FILENO, 0, &le) != NSR_OK)
		nsr_fatal("out of memory");
	bo.read = read_line;
	bo.read_ctx = le;
	nsr_buf_init(&err, 0);
	rc = nsr_browse_run(&bo, &err);
	if (rc < 0)
		nsr_error("%s", err.len ? err.data : nsr_strerror(rc));
	nsr_ledit_free(le);
	nsr_buf_release(&err);
	return rc < 0 ? 1 : rc;
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
	if (!automatic && !nssid && argc - optind > 1) {
		fprintf(stderr, "recover: name one directory to start the "
				"interactive browser in, or use -a path ...\n");
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
	if (!automatic && !nssid) {
		char *dir = optind < argc ? absolute(argv[optind]) : NULL;

		failed = interactive(&o, browse, dir);
		free(dir);
		nsr_buf_release(&err);
		return failed;
	}
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
