/*
 * recover - restore files saved with save.
 *
 *   recover [-fkq] [-s server] [-c client] [-d dir] [-t time] [-iN|Y|R]
 *           -a path ...
 *   recover [-fkq] [-s server] [-d dir] [-iN|Y|R] -S ssid [-S ssid ...]
 *           [path ...]
 *   recover [-q] [-s server] [-c client] [-t time] {-S ssid | -a path}
 *           --pipe -- command [arg ...]
 *
 * With -a, the client file index (nsrindexd) tells which save set holds the
 * newest version of each path as of the browse time; with -S the save set is
 * named directly.  nsrd finds the fragments of the save set and, for each,
 * the data mover of the device its volume is mounted on; the fragments are
 * read in order, volume after volume, into one stream that is checked and
 * recreated with its metadata, under -d dir if given.  A damaged block is
 * named and skipped: every intact file is still recovered, the damaged ones
 * are named (and removed, or with -k kept as name.damaged), and the exit
 * status is 1.  With --pipe the one file selected is not created but
 * written to the standard input of command (run without a shell), and
 * the command's exit status decides recover's.
 *
 * Without -a and -S, recover is interactive (src/browse): the recover>
 * prompt browses the index as of -t (a path argument is the directory
 * to start in), marks files and recovers them; lines are edited on a
 * terminal (src/ledit) and read plainly from a pipe.
 */
#include "nsr/compat.h"

#include <getopt.h>
#include <signal.h>
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
#include "nsr/runcmd.h"
#include "nsr/session.h"
#include "nsr/xmalloc.h"

struct rec_ui {
	int quiet, verbose;
	FILE *out; /* progress: stdout, or stderr when it is a command's */
};

/* Long options without a letter. */
enum { OPT_PIPE = 0x100 };

/* usage - print --help text. */
static void usage(FILE *f)
{
	fprintf(f,
		"usage: recover [-fkqv] [-j n] [-s server] [-c client] "
		"[-d dir] [-t time] "
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
		"paths named);\n"
		"              -S ssid/cloneid reads that copy (clone)\n"
		"  -d dir      relocate: /a/b is restored as dir/a/b\n"
		"  -c client   whose index to browse (default: this host)\n"
		"  -t time     browse time (nsr_getdate syntax; default: now)\n"
		"  -i{n|y|r}   existing files: n skip (default), y overwrite, "
		"r rename\n"
		"  -f          overwrite existing files (same as -iY)\n"
		"  -k          keep a damaged file's bytes as name.damaged\n"
		"              (default: remove it)\n"
		"  -j N        N threads write small files (default: the "
		"CPUs, 2 to 8; 1: one)\n"
		"  -s server   OpenNSR server (default: this host); -q quiet; "
		"-v verbose\n"
		"       recover [-q] [-s server] [-c client] [-t time] "
		"{-S ssid | -a path}\n"
		"               --pipe -- command [arg ...]\n"
		"  --pipe      write the one file selected (a pipeline save's) "
		"to the\n"
		"              standard input of command, run without a shell; "
		"its exit\n"
		"              status decides recover's\n");
}

/* on_restored - -v lists each restored object. */
static void on_restored(void *ctx, const struct nsr_asm_file *f,
			const char *target)
{
	const struct rec_ui *ui = ctx;

	NSR_UNUSED(f);
	if (ui->verbose)
		fprintf(ui->out, "%s\n", target);
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
		fprintf(ui->out, "%s\n", text);
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

/* end_of_options - the index of a "--" in argv (so that what follows
 * it, a command, is not taken for paths), or argc. */
static int end_of_options(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0)
			return i;
	return argc;
}

/* pipe_start - --pipe: run the command after "--" with a pipe to its
 * standard input, as the restore's target. */
static struct nsr_runcmd *pipe_start(struct nsr_session_recover_opts *o,
				     char **cmd)
{
	struct nsr_runcmd *c = NULL;
	struct nsr_buf err;

	if (o->dest || o->conflict != NSR_RESTORE_SKIP || o->keep_damaged)
		nsr_fatal("--pipe creates no files: -d, -i, -f and -k do not "
			  "go with it");
	signal(SIGPIPE, SIG_IGN); /* a command that stops reading: EPIPE */
	nsr_buf_init(&err, 0);
	if (nsr_runcmd_start(&c, (const char *const *)cmd, NSR_RUNCMD_WRITE,
			     &err) != NSR_OK)
		nsr_fatal("%s; nothing was recovered", err.data);
	nsr_buf_release(&err);
	o->to_fd = 1;
	o->out_fd = nsr_runcmd_fd(c);
	return c;
}

/* pipe_end - the command's end after the data went to it: its stderr
 * went to ours already; its status, and the exit status it means:
 * recover's own failure first (1), else the command's (128 + signal
 * when killed). */
static int pipe_end(struct nsr_runcmd *c, const char *name, int failed,
		    uint64_t files)
{
	struct nsr_runcmd_status st;
	struct nsr_buf m;
	int rc = nsr_runcmd_wait(c, &st), status = 0;

	nsr_buf_init(&m, 0);
	if (!failed && files == 0) {
		nsr_error("no file was selected to send to %s", name);
		failed = 1;
	}
	if (rc == NSR_ERR_SYSTEM) {
		nsr_error("cannot wait for %s: %s", name, strerror(errno));
		status = 1;
	} else if (rc != NSR_OK) {
		nsr_runcmd_describe(name, &st, 0, &m);
		nsr_error("%s", m.data);
		status = st.exited ? st.code : 128 + st.signal;
	}
	nsr_buf_release(&m);
	nsr_runcmd_free(c);
	return failed ? 1 : status;
}

/* default_workers - writer threads when -j is not given: one per online
 * CPU, 2 to 8.  More writers than CPUs only contend for the directory
 * being filled: on 2 CPUs 50,000 small files took 4.4 s with 2 and 5.1 s
 * with 4 (tests/bench/recover/RESULTS.md). */
static int default_workers(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 2 ? 2 : n > 8 ? 8 : (int)n;
}

/* main - parse options, do the work, exit status. */
int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"help", no_argument, NULL, 'h'},
		{"pipe", no_argument, NULL, OPT_PIPE},
		{NULL, 0, NULL, 0}};
	struct nsr_runcmd *cmd = NULL;
	struct nsr_restore_stats st, sum = {0};
	int to_pipe = 0, dd = end_of_options(argc, argv), ncmd = 0;
	char **cmdv = argv + argc;
	struct nsr_session_recover_opts o;
	struct nsr_session_recover *sr = NULL;
	struct rec_ui ui = {0};
	uint32_t ssids[64], clones[64];
	int nssid = 0, automatic = 0, opt, failed = 0;
	int64_t browse = 0;
	char host[256];
	struct nsr_buf err;
	time_t bt;

	nsr_log_init("recover", NSR_LOG_STDERR | NSR_LOG_BARE);
	memset(&o, 0, sizeof(o));
	nsr_buf_init(&err, 0);
	o.conflict = NSR_RESTORE_SKIP;
	o.workers = default_workers();
	ui.out = stdout;
	/* options and paths before a "--", a --pipe command after it */
	if (dd < argc) {
		cmdv = argv + dd + 1;
		ncmd = argc - dd - 1;
		argv[dd] = NULL;
		argc = dd;
	}
	while ((opt = getopt_long(argc, argv, "s:c:d:t:i:S:j:afkqvh", lo,
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
		case 'j': {
			char *end;
			long v = strtol(optarg, &end, 10);

			if (end == optarg || *end || v < 1 || v > 64) {
				fprintf(stderr, "recover: -j takes a number "
						"of writer threads, 1 to 64\n");
				return 2;
			}
			o.workers = (int)v;
			break;
		}
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
			clones[nssid] = 0;
			if (*end == '/') {
				const char *c = end + 1;
				unsigned long cl = strtoul(c, &end, 10);

				if (end == c || *end || !cl ||
				    cl > UINT32_MAX) {
					fprintf(stderr, "recover: bad clone id "
						"in '%s' (ssid/cloneid)\n",
						optarg);
					return 2;
				}
				clones[nssid] = (uint32_t)cl;
			}
			ssids[nssid++] = (uint32_t)v;
			break;
		}
		case 'a': automatic = 1; break;
		case OPT_PIPE: to_pipe = 1; break;
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
	if (!to_pipe && ncmd > 0) { /* "--" ends the options: paths */
		for (int i = 0; i < ncmd; i++)
			argv[argc++] = cmdv[i];
		argv[argc] = NULL;
	}
	if (to_pipe && ncmd == 0)
		nsr_fatal("--pipe wants a command after --");
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
	if (to_pipe) { /* once the server answers: the command sees data */
		cmd = pipe_start(&o, cmdv);
		ui.out = stderr; /* stdout is the command's too */
	}

	if (nssid) {
		const char **paths = NULL;
		int np = argc - optind;

		if (np > 0) {
			paths = nsr_xcalloc((size_t)np, sizeof(char *));
			for (int i = 0; i < np; i++)
				paths[i] = absolute(argv[optind + i]);
		}
		for (int i = 0; i < nssid; i++) { /* -S ssid/cloneid */
			if (!clones[i] || nsr_session_recover_copy(
					sr, ssids[i], clones[i]) == NSR_OK)
				continue;
			fprintf(stderr, "recover: too many -S ssid/cloneid\n");
			failed = 1;
		}
		failed |= nsr_session_recover_ssids(sr, ssids, (size_t)nssid,
						    paths, (size_t)np, &st);
		sum.files += st.files;
		for (int i = 0; i < np; i++)
			free((char *)paths[i]);
		free(paths);
	} else {
		int np = argc - optind;
		const char **paths = nsr_xcalloc((size_t)np + 1,
						 sizeof(char *));

		for (int i = 0; i < np; i++)
			paths[i] = absolute(argv[optind + i]);
		failed |= nsr_session_recover_paths(sr, paths, (size_t)np,
						    browse, &st);
		sum.files += st.files;
		for (int i = 0; i < np; i++)
			free((char *)paths[i]);
		free(paths);
	}
	nsr_session_recover_close(sr);
	if (cmd)
		failed = pipe_end(cmd, cmdv[0], failed, sum.files);
	/* The completion line only for a recover that completed. */
	if (!ui.quiet && !failed) {
		time_t now = time(NULL);
		char when[64];

		strftime(when, sizeof(when), "%a %b %e %H:%M:%S %Y",
			 localtime(&now));
		fprintf(ui.out, "Recover completion time: %s\n", when);
	}
	nsr_buf_release(&err);
	return failed;
}
