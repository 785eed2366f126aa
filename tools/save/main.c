/*
 * save - back up files and directories to an OpenNSR server.
 *
 *   save [-qvn] [-s server] [-c client] [-N name] [-l level] [-b pool]
 *        [-g group]
 *        [-w browse] [-y retention] path ...
 *   save --pipe=NAME [--pipe-read=SIZE] [options] -- command [arg ...]
 *   save --pipe=NAME [--pipe-read=SIZE] [options] -
 *
 * The save stream goes to the data mover nsrd chose (pipelined one-way
 * calls), the file index entries to nsrindexd in batches.  The save set is
 * reported complete to nsrd only after the mover has made the data durable
 * and nsrindexd has committed the index; if anything fails, the save set is
 * marked aborted with the reason and save exits non-zero.  Every file that
 * could not be saved whole is named with the reason, and the summary at
 * the end counts them by reason; the exit status says which case it was
 * (save(1), EXIT STATUS).
 */
#include "nsr/compat.h"

#include <getopt.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/getdate.h"
#include "nsr/host.h"
#include "nsr/log.h"
#include "nsr/mmd_clnt.h"
#include "nsr/mmreport.h"
#include "nsr/pss.h"
#include "nsr/runcmd.h"
#include "nsr/session.h"
#include "nsr/size.h"
#include "nsr/xmalloc.h"

/* Exit status (save(1)). */
enum {
	SAVE_EXIT_OK = 0,	/* everything saved, browsable */
	SAVE_EXIT_FAILED = 1,	/* no complete save set */
	SAVE_EXIT_USAGE = 2,
	SAVE_EXIT_SKIPPED = 3,	/* complete, but files not saved whole */
	SAVE_EXIT_NO_INDEX = 4, /* complete, not browsable */
};

#define UI_STREAMS 32 /* streams kept for the progress line */

/* Long options without a letter. */
enum {
	OPT_PIPE = 0x100,
	OPT_PIPE_READ,
	OPT_STRIPES,
	OPT_ENCRYPT,
	OPT_COMPRESS
};

struct save_ui {
	int verbose;
	int live;		/* stderr is a terminal: show progress */
	int shown;		/* a progress line is on the screen */
	uint64_t files, bytes;	/* files started, stream bytes (progress) */
	struct timespec t0, last;
	/* --pss on a terminal: the streams for the progress line */
	struct ui_stream {
		const char *sp;
		unsigned index;
		uint64_t bytes;
		int on;
	} streams[UI_STREAMS];
	int nstreams;
	int pss_verbose; /* -v: print each stream becoming active or idle */
};

/* ui_stream - the entry of stream index of save point sp, made if new
 * (the first idle one is reused when all are taken), or NULL. */
static struct ui_stream *ui_stream(struct save_ui *ui, const char *sp,
				   unsigned index)
{
	int i;

	for (i = 0; i < ui->nstreams; i++)
		if (ui->streams[i].sp == sp && ui->streams[i].index == index)
			return &ui->streams[i];
	if (ui->nstreams < UI_STREAMS)
		i = ui->nstreams++;
	else
		for (i = 0; i < UI_STREAMS && ui->streams[i].on; i++)
			;
	if (i == UI_STREAMS)
		return NULL;
	ui->streams[i].sp = sp;
	ui->streams[i].index = index;
	ui->streams[i].bytes = 0;
	ui->streams[i].on = 0;
	return &ui->streams[i];
}

/* usage - print --help text. */
static void usage(FILE *f)
{
	fprintf(f,
		"usage: save [-qvn] [-s server] [-c client] [-N name] [-l "
		"level] "
		"[-b pool]\n"
		"            [-g group] [-w browse-time] [-y retention-time] "
		"[-B size] path ...\n"
		"  -s server     OpenNSR server (default: this host)\n"
		"  -c client     client name for the index (default: this "
		"host)\n"
		"  -N name       save set name (default: the first path)\n"
		"  -l level      full, incr, 1-9: incr and 1-9 save what "
		"changed since\n"
		"                an earlier backup (default: manual, all)\n"
		"  -b pool       destination pool (default: the client's, or "
		"Default)\n"
		"  -g group      the group this save runs in, for its "
		"savegrp parallelism\n"
		"                (default: none, a manual save)\n"
		"  -w time       browse time; -y time: retention time "
		"(nsr_getdate)\n"
		"  -n            read test: walk and read everything as a save "
		"would,\n"
		"                report the rate, save nothing (uasm-style)\n"
		"  -B size       bigasm test: save a file of size bytes made "
		"in "
		"memory\n"
		"                under each path given (default /bigasm), read "
		"nothing\n"
		"  --pss[=SPEC]  parallel save streams: each path a save "
		"point with SPEC\n"
		"                streams (PSS:streams_per_ss syntax or a "
		"number; default 4)\n"
		"  --parallelism=N  at most N streams active at once (PSS; "
		"default 4)\n"
		"  --stripes=N   send the data to the mover over N "
		"connections (1-16;\n"
		"                default 1 on loopback, 4 to other hosts; "
		"AFTD only)\n"
		"  --encrypt     encrypt file data (AES-256-GCM) with the key "
		"of the\n"
		"                datazone pass phrase, before it leaves this "
		"host\n"
		"  --compress[=LEVEL]  compress file data (zlib, level 1-9, "
		"default 1)\n"
		"                before any encryption\n"
		"  -v            list each file; -q quiet\n"
		"  -h, --help    this help\n"
		"pipeline save: save --pipe=NAME [--pipe-read=SIZE] [options] "
		"-- command [arg ...]\n"
		"  --pipe=NAME      save the command's standard output (or, "
		"given -, save's\n"
		"                   own standard input) as the file NAME, an "
		"absolute\n"
		"                   pseudo-path such as /PIPE/pgdump (the save "
		"set name\n"
		"                   unless -N); the command runs without a "
		"shell, and if\n"
		"                   it fails the save set is not complete\n"
		"  --pipe-read=SIZE read size, 4 KB to 8 MB (default 64 "
		"KB)\n");
}

/* since - seconds from a to b. */
static double since(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) +
	       (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

/* progress - on a terminal, the files started and the bytes streamed so
 * far and the rate, redrawn in place at most twice a second; done: erase
 * it (before any other line). */
static void progress(struct save_ui *ui, int done)
{
	struct timespec now;
	struct nsr_buf b;
	double secs;

	if (done) {
		if (ui->shown)
			fprintf(stderr, "\r%-78s\r", "");
		ui->shown = 0;
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	if ((ui->shown && since(&ui->last, &now) < 0.5) ||
	    (ui->files == 0 && ui->bytes == 0))
		return;
	ui->last = now;
	secs = NSR_MAX(since(&ui->t0, &now), 0.001);
	nsr_buf_init(&b, 0);
	nsr_mmreport_size(ui->bytes, 1, &b);
	nsr_buf_addstr(&b, "  ");
	nsr_mmreport_size((uint64_t)((double)ui->bytes / secs), 1, &b);
	fprintf(stderr, "\rsave: %llu files  %s/s  %.0f s",
		(unsigned long long)ui->files, b.data, secs);
	/* with parallel save streams: the bytes of each active one */
	nsr_buf_reset(&b);
	for (int i = 0, n = 0; i < ui->nstreams; i++) {
		if (!ui->streams[i].on)
			continue;
		nsr_buf_addstr(&b, n++ ? ", " : "");
		nsr_mmreport_size(ui->streams[i].bytes, 1, &b);
	}
	if (b.len)
		fprintf(stderr, "  streams: %s", b.data);
	fprintf(stderr, "   ");
	nsr_buf_release(&b);
	ui->shown = 1;
}

/* on_file - -v lists each saved file; on a terminal, progress. */
static void on_file(void *ctx, const struct nsr_asm_file *f)
{
	struct save_ui *ui = ctx;

	if (ui->verbose)
		printf("%s\n", f->path);
	ui->files++;
	if (ui->live)
		progress(ui, 0);
}

/* on_progress - the stream has grown: the progress line. */
static void on_progress(void *ctx, uint64_t stream_bytes)
{
	struct save_ui *ui = ctx;

	ui->bytes = stream_bytes;
	if (ui->live)
		progress(ui, 0);
}

/* consequence - what a failed step means for the file. */
static const char *consequence(const char *what)
{
	static const char *const lost[] = { "open", "fstat", "lstat", "path",
					    "readlink", "walk" };

	for (size_t i = 0; i < sizeof(lost) / sizeof(lost[0]); i++)
		if (strcmp(what, lost[i]) == 0)
			return "not saved";
	if (strcmp(what, "opendir") == 0)
		return "contents not saved";
	if (strcmp(what, "read") == 0 || strcmp(what, "lseek") == 0)
		return "saved incomplete";
	return "saved without it";
}

/* on_file_error - a per-file problem: the file named (a long path
 * shortened in the middle) with the reason; the save goes on. */
static void on_file_error(void *ctx, const char *path, int err,
			  const char *what)
{
	char shown[NSR_LOG_PATH_SHOW + 64];

	progress(ctx, 1);
	nsr_log_shorten(shown, sizeof(shown), path, NSR_LOG_PATH_SHOW);
	if (err == 0) {
		nsr_warn("%s: %s", shown, what);
		return;
	}
	nsr_warn("%s: %s: %s: %s", shown, consequence(what), what,
		 nsr_saver_reason_name(err));
}

/* on_warn - a problem the save survives (a lease renewal that failed). */
static void on_warn(void *ctx, const char *msg)
{
	progress(ctx, 1);
	nsr_warn("%s", msg);
}

/* on_pipe_stderr - what the pipeline command wrote to its stderr (the
 * last 64 KB), shown whole once it ended. */
static void on_pipe_stderr(void *ctx, const char *text, size_t len)
{
	progress(ctx, 1);
	fprintf(stderr, "save: the command's stderr%s:\n",
		len >= NSR_RUNCMD_STDERR_MAX ? " (its last 64 KB)" : "");
	fwrite(text, 1, len, stderr);
	if (len > 0 && text[len - 1] != '\n')
		fputc('\n', stderr);
}

/* pipe_args - check a pipeline save's arguments: NAME an absolute
 * pseudo-path, the read size within bounds, "-" alone or a command
 * after "--" (args[0..n)).  Returns a usage message or NULL; sets
 * so->pipe_argv (NULL for "-"). */
static const char *pipe_args(struct nsr_session_save_opts *so,
			     const char *size, char **args, int n,
			     int dashdash)
{
	long long v = 0;

	if (so->pipe[0] != '/' || so->pipe[1] == '\0' ||
	    strlen(so->pipe) > 4095 || strstr(so->pipe, "//"))
		return "--pipe wants an absolute pseudo-path such as "
		       "/PIPE/pgdump";
	if (size && (nsr_size_parse(size, &v) != NSR_OK ||
		     v < (long long)NSR_SAVER_PIPE_MIN ||
		     v > (long long)NSR_SAVER_PIPE_MAX))
		return "--pipe-read wants a size from 4 KB to 8 MB, e.g. "
		       "64K or 1M";
	so->pipe_read = (size_t)v;
	if (so->bigasm)
		return "--pipe and -B do not go together";
	if (so->level[0] && strcmp(so->level, "full") != 0)
		return "a pipeline save is always whole: -l full or none";
	if (n == 1 && strcmp(args[0], "-") == 0 && !dashdash)
		return NULL; /* save's own standard input */
	if (n == 0)
		return "--pipe wants a command after --, or - for the "
		       "standard input";
	if (!dashdash)
		return "put -- before the command of --pipe";
	so->pipe_argv = (const char *const *)args;
	return NULL;
}

/* absolute - malloc'ed absolute form of path (no symlink resolution). */
static char *absolute(const char *path)
{
	char cwd[4096];
	size_t n;
	char *p;

	if (path[0] == '/')
		p = nsr_xstrdup(path);
	else if (getcwd(cwd, sizeof(cwd)))
		p = strcmp(path, ".") == 0
			    ? nsr_xstrdup(cwd)
			    : nsr_xcheck(nsr_path_join(cwd, path));
	else
		p = nsr_xstrdup(path);
	n = strlen(p);
	while (n > 1 && p[n - 1] == '/')
		p[--n] = '\0';
	return p;
}

/* parse_time - nsr_getdate or fatal with the position. */
static int64_t parse_time(const char *what, const char *text)
{
	time_t t;

	if (nsr_getdate(text, time(NULL), &t) != NSR_OK)
		nsr_fatal(
			"cannot understand %s time '%s' (try e.g. \"1 year\", "
			"\"12/31/27\", \"+2 weeks\")",
			what, text);
	return (int64_t)t;
}

/* human - the size as mminfo prints it ("2456 KB"). */
static void human(uint64_t v, char *out, size_t len)
{
	struct nsr_buf b;

	nsr_buf_init(&b, 0);
	nsr_mmreport_size(v, 1, &b);
	snprintf(out, len, "%s", b.data);
	nsr_buf_release(&b);
}

/* elapsed - seconds since t0 (monotonic), at least a millisecond. */
static double elapsed(const struct timespec *t0)
{
	struct timespec t;
	double s;

	clock_gettime(CLOCK_MONOTONIC, &t);
	s = (double)(t.tv_sec - t0->tv_sec) +
	    (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
	return s > 0.001 ? s : 0.001;
}

/* summary - what was saved, how fast, and what was not, unless -q. */
static void summary(const char *name, const char *level,
		    const struct nsr_saver_stats *st, double secs)
{
	char size[32], rate[32];
	long s = (long)secs;
	struct nsr_buf why;

	human(st->stream_bytes, size, sizeof(size));
	human((uint64_t)((double)st->stream_bytes / secs), rate, sizeof(rate));
	printf("save: %s  %s %02ld:%02ld:%02ld  %llu files  %s/s  level %s\n",
	       name, size, s / 3600, (s / 60) % 60, s % 60,
	       (unsigned long long)st->files, rate,
	       level[0] ? level : "manual");
	nsr_buf_init(&why, 0);
	nsr_saver_problems_text(st, "\nsave: ", &why);
	if (why.len) /* each line after its newline */
		printf("%s\n", why.data + 1);
	nsr_buf_release(&why);
}

/* exit_status - what the session's outcome means for a script. */
static int exit_status(int rc, const struct nsr_session_save_result *res)
{
	if (rc != NSR_OK && res->ssid && res->no_index)
		return SAVE_EXIT_NO_INDEX;
	if (rc != NSR_OK)
		return SAVE_EXIT_FAILED;
	if (res->st.errors || res->st.changed)
		return SAVE_EXIT_SKIPPED;
	return SAVE_EXIT_OK;
}

/* print_level - what a level save built on, for the summary. */
static void print_level(const struct nsr_session_save_result *res)
{
	time_t t = (time_t)res->since;
	char when[32];
	struct tm tm;

	if (!res->since)
		return;
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S",
		 localtime_r(&t, &tm));
	printf("save: level %s: what changed since %s (save set %u); "
	       "%llu unchanged files left out\n", res->level, when,
	       res->since_ssid, (unsigned long long)res->st.unchanged);
}

/* PSS options (--pss, --parallelism), kept apart from the rest. */
struct save_pss {
	int on;
	struct nsr_pssspec *spec; /* NULL: 4 streams each */
	unsigned parallelism;
	int verbose;
};

/* on_stream - PSS: a stream became active or idle: kept for the
 * progress line; with -v also printed. */
static void on_stream(void *ctx, const char *sp, unsigned index, int on,
		      unsigned active)
{
	struct save_ui *ui = ctx;
	struct ui_stream *s = ui_stream(ui, sp, index);

	if (s)
		s->on = on;
	if (!ui->pss_verbose)
		return;
	progress(ctx, 1);
	printf("pss: %s stream %u %s (%u active)\n", sp, index,
	       on ? "active" : "idle", active);
}

/* on_stream_bytes - PSS on a terminal: a stream's bytes so far. */
static void on_stream_bytes(void *ctx, const char *sp, unsigned index,
			    uint64_t bytes)
{
	struct ui_stream *s = ui_stream(ctx, sp, index);

	if (s)
		s->bytes = bytes;
}

/* pss_report - one save point's outcome; its exit status. */
static int pss_report(const struct nsr_session_save_opts *so,
		      const struct nsr_pss_result *r, double secs, int quiet)
{
	struct nsr_buf deps;
	int status = exit_status(r->rc, &r->master);

	nsr_buf_init(&deps, 0);
	for (unsigned k = 0; k + 1 < r->streams; k++)
		if (r->dependents[k])
			nsr_buf_addf(&deps, " %u", r->dependents[k]);
	if (r->rc != NSR_OK) {
		char size[32];

		human(r->master.st.stream_bytes, size, sizeof(size));
		nsr_error("%s", r->err);
		nsr_error("parallel save streams of %s failed after %llu "
			  "files, %s, %.1f s (%u streams: master save set %u, "
			  "dependents%s)", r->name,
			  (unsigned long long)r->master.st.files, size, secs,
			  r->streams, r->master.ssid,
			  deps.len ? deps.data : " none");
		nsr_buf_release(&deps);
		return status;
	}
	if (!quiet) {
		summary(r->name, r->master.level[0] ? r->master.level
							: so->level,
			&r->master.st, secs);
		print_level(&r->master);
		printf("save: %s: %u parallel save streams: master save set "
		       "%u, dependents%s\n", r->name, r->streams,
		       r->master.ssid, deps.len ? deps.data : " none");
	}
	printf("completed savetime=%lld\n", (long long)r->master.savetime);
	nsr_buf_release(&deps);
	return status;
}

/* run_pss - --pss: each path a save point with parallel save streams. */
static int run_pss(struct save_ui *ui, struct nsr_session_save_opts *so,
		   const struct save_pss *p, char **paths, int npaths,
		   int quiet, const struct timespec *t0)
{
	struct nsr_pss_opts po;
	struct nsr_pss_result *res;
	int status = SAVE_EXIT_OK, s;

	memset(&po, 0, sizeof(po));
	po.save = so;
	po.spec = p->spec;
	po.parallelism = p->parallelism;
	ui->pss_verbose = p->verbose;
	po.stream = p->verbose || ui->live ? on_stream : NULL;
	po.stream_bytes = ui->live ? on_stream_bytes : NULL;
	res = nsr_xcalloc((size_t)npaths, sizeof(*res));
	nsr_pss_save(&po, paths, (size_t)npaths, res);
	progress(ui, 1);
	for (int i = 0; i < npaths; i++) {
		s = pss_report(so, &res[i], elapsed(t0), quiet);
		/* the worst: failed, then not browsable, then skipped */
		if (s == SAVE_EXIT_FAILED || status != SAVE_EXIT_FAILED)
			status = s == SAVE_EXIT_FAILED ? s : NSR_MAX(status, s);
	}
	free(res);
	return status;
}

/* parse_pss - --pss[=SPEC]; 0, or -1 with the reason said. */
static int parse_pss(const char *text, struct save_pss *p)
{
	struct nsr_buf err;
	int rc = 0;

	p->on = 1;
	nsr_pssspec_free(p->spec);
	p->spec = NULL;
	nsr_buf_init(&err, 0);
	if (text && nsr_pssspec_parse(text, &p->spec, &err) != NSR_OK) {
		fprintf(stderr, "save: --pss: %s (e.g. --pss=4 or "
			"--pss='1,* , 8,/data[1-3]')\n", err.data);
		rc = -1;
	}
	nsr_buf_release(&err);
	return rc;
}

/* parse_parallelism - --parallelism=N, 1 .. 1024; 0 if it is not. */
static unsigned parse_parallelism(const char *text)
{
	char *end;
	long v = strtol(text, &end, 10);

	if (*text == '\0' || *end != '\0' || v < 1 || v > 1024) {
		fprintf(stderr, "save: --parallelism wants a number from 1 "
			"to 1024, not '%s'\n", text);
		return 0;
	}
	return (unsigned)v;
}

/* parse_stripes - --stripes=N, 1 .. MMD_STRIPES_MAX; 0 if it is not. */
static unsigned parse_stripes(const char *text)
{
	char *end;
	long v = strtol(text, &end, 10);

	if (*text == '\0' || *end != '\0' || v < 1 || v > MMD_STRIPES_MAX) {
		fprintf(stderr, "save: --stripes wants a number from 1 to %d, "
			"not '%s'\n", MMD_STRIPES_MAX, text);
		return 0;
	}
	return (unsigned)v;
}

/* main - parse options, run the session, report, exit status. */
int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"help", no_argument, NULL, 'h'},
		{"bigasm", required_argument, NULL, 'B'},
		{"pss", optional_argument, NULL, 'P' + 256},
		{"parallelism", required_argument, NULL, 'p' + 256},
		{"pipe", required_argument, NULL, OPT_PIPE},
		{"pipe-read", required_argument, NULL, OPT_PIPE_READ},
		{"stripes", required_argument, NULL, OPT_STRIPES},
		{"encrypt", no_argument, NULL, OPT_ENCRYPT},
		{"compress", optional_argument, NULL, OPT_COMPRESS},
		{NULL, 0, NULL, 0}};
	static struct save_pss pss; /* static: reachable until exit */
	static char *bigasm_path[] = {(char *)"/bigasm"};
	static char *pipe_path[1];
	char host[256], cmd[4096] = "", sizebuf[32], *pipe_read = NULL;
	long long big = 0;
	struct timespec t0;
	struct nsr_session_save_opts so;
	struct nsr_session_save_result res;
	struct save_ui ui = {0};
	struct nsr_buf err;
	char **paths;
	int opt, quiet = 0, rc, npaths, status;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	nsr_log_init("save", NSR_LOG_STDERR | NSR_LOG_BARE);
	memset(&so, 0, sizeof(so));
	so.level = "";
	so.pool = "";
	while ((opt = getopt_long(argc, argv, "s:c:N:l:b:g:w:y:e:B:nvqh", lo,
				  NULL)) != -1) {
		switch (opt) {
		case 's': so.server = optarg; break;
		case 'c': so.client = optarg; break;
		case 'N': so.name = optarg; break;
		case 'l': so.level = optarg; break;
		case 'b': so.pool = optarg; break;
		case 'g': so.group = optarg; break;
		case 'w': so.browse_time = parse_time("browse", optarg); break;
		case 'y':
		case 'e':
			so.retention_time = parse_time("retention", optarg);
			break;
		case 'n': so.dry_run = 1; break;
		case 'B':
			if (nsr_size_parse(optarg, &big) != NSR_OK ||
			    big <= 0) {
				fprintf(stderr, "save: -B wants a size, e.g. "
					"10 GB or 512M, not '%s'\n", optarg);
				return SAVE_EXIT_USAGE;
			}
			so.bigasm = (uint64_t)big;
			break;
		case OPT_PIPE: so.pipe = optarg; break;
		case OPT_PIPE_READ: pipe_read = optarg; break;
		case OPT_STRIPES:
			so.stripes = parse_stripes(optarg);
			if (!so.stripes)
				return SAVE_EXIT_USAGE;
			break;
		case OPT_ENCRYPT: so.encrypt = 1; break;
		case OPT_COMPRESS:
			so.compress = optarg ? atoi(optarg) : 1;
			if (so.compress < 1 || so.compress > 9 ||
			    (optarg && strspn(optarg, "0123456789") !=
					   strlen(optarg))) {
				fprintf(stderr, "save: --compress wants a "
					"level from 1 to 9, not '%s'\n",
					optarg);
				return SAVE_EXIT_USAGE;
			}
			break;
		case 'v': ui.verbose = 1; break;
		case 'q': quiet = 1; break;
		case 'P' + 256:
			if (parse_pss(optarg, &pss) != 0)
				return SAVE_EXIT_USAGE;
			break;
		case 'p' + 256:
			pss.parallelism = parse_parallelism(optarg);
			if (!pss.parallelism)
				return SAVE_EXIT_USAGE;
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return SAVE_EXIT_USAGE;
		}
	}
	if (so.pipe) {
		int dashdash = strcmp(argv[optind - 1], "--") == 0;
		const char *why = pipe_args(&so, pipe_read, argv + optind,
					    argc - optind, dashdash);

		if (why) {
			fprintf(stderr, "save: %s\n", why);
			usage(stderr);
			return SAVE_EXIT_USAGE;
		}
	} else if (pipe_read) {
		fprintf(stderr, "save: --pipe-read goes with --pipe\n");
		return SAVE_EXIT_USAGE;
	}
	if (optind >= argc && !so.bigasm) {
		fprintf(stderr, "save: name at least one path to save\n");
		usage(stderr);
		return SAVE_EXIT_USAGE;
	}
	if (pss.on && (so.bigasm || so.dry_run || so.name || so.pipe)) {
		fprintf(stderr, "save: --pss saves each path as a save point "
			"named by its path; it does not go with -N, -n, -B "
			"or --pipe\n");
		return SAVE_EXIT_USAGE;
	}
	for (int i = 0; i < argc; i++) {
		size_t l = strlen(cmd);

		snprintf(cmd + l, sizeof(cmd) - l, "%s%s", i ? " " : "",
			 argv[i]);
	}
	if (so.pipe) { /* the pseudo-path is the one "path" */
		pipe_path[0] = (char *)so.pipe;
		argv = pipe_path;
		argc = 1;
		optind = 0;
	} else if (optind >= argc) { /* bigasm: the generated file's name */
		argv = bigasm_path;
		argc = 1;
		optind = 0;
	}
	nsr_host_self(host, sizeof(host));
	if (!so.server)
		so.server = host;
	if (!so.client)
		so.client = host;

	/* Every path must exist before anything is recorded anywhere. */
	npaths = argc - optind;
	paths = nsr_xcalloc((size_t)npaths, sizeof(char *));
	for (int i = 0; i < npaths; i++) {
		struct stat sb;

		paths[i] = absolute(argv[optind + i]);
		if (!so.bigasm && !so.pipe && lstat(paths[i], &sb) != 0)
			nsr_fatal("%s: %s; nothing was saved", argv[optind + i],
				  strerror(errno));
	}
	if (!so.name)
		so.name = paths[0];
	so.command = cmd;
	so.file = on_file;
	so.file_error = on_file_error;
	so.warn = on_warn;
	so.progress = on_progress;
	so.pipe_stderr = on_pipe_stderr;
	so.ctx = &ui;
	ui.live = !quiet && !ui.verbose && isatty(2);
	clock_gettime(CLOCK_MONOTONIC, &ui.t0);

	if (pss.on) {
		pss.verbose = ui.verbose;
		status = run_pss(&ui, &so, &pss, paths, npaths, quiet, &t0);
		nsr_pssspec_free(pss.spec);
		for (int i = 0; i < npaths; i++)
			free(paths[i]);
		free(paths);
		return status;
	}
	nsr_buf_init(&err, 0);
	rc = nsr_session_save(&so, paths, (size_t)npaths, &res, &err);
	progress(&ui, 1);
	status = exit_status(rc, &res);
	if (rc != NSR_OK) {
		nsr_error("%s", err.len ? err.data : nsr_strerror(rc));
		if (!res.ssid)
			nsr_error("save of %s failed; nothing was saved",
				  so.name);
		else if (res.no_index)
			nsr_error("save set %u of %s is complete but cannot "
				  "be browsed", res.ssid, so.name);
		else if (res.told_server)
			nsr_error("save of %s failed; save set %u was marked "
				  "aborted", so.name, res.ssid);
		else
			nsr_error("save of %s failed; the server could not be "
				  "told, so it settles save set %u itself "
				  "(complete only if all of it reached the "
				  "volume)", so.name, res.ssid);
	} else if (so.dry_run) {
		double secs = elapsed(&t0);
		char rate[32];

		human(res.st.bytes, sizebuf, sizeof(sizebuf));
		human((uint64_t)((double)res.st.bytes / secs), rate,
		      sizeof(rate));
		printf("save: %s  %s  %llu files  %.2f s  %s/s  read size %zu "
		       "KB at the end (read test: nothing saved, -n)\n",
		       so.name, sizebuf, (unsigned long long)res.st.files,
		       secs, rate, res.st.last_read_size / 1024);
	} else {
		if (!quiet) {
			summary(so.name,
				res.level[0] ? res.level : so.level, &res.st,
				elapsed(&t0));
			print_level(&res);
			if (ui.verbose && res.stripes > 1)
				printf("save: the data went to the mover over "
				       "%u connections\n", res.stripes);
			if (so.pipe)
				printf("save: read size %zu KB%s%s\n",
				       res.st.last_read_size / 1024,
				       res.pipe_end[0] ? "; " : "",
				       res.pipe_end);
		} else if (res.st.errors || res.st.changed) {
			nsr_warn("%llu file(s) not saved whole, %llu changed "
				 "while being saved (see above)",
				 (unsigned long long)res.st.errors,
				 (unsigned long long)res.st.changed);
		}
		printf("completed savetime=%lld\n", (long long)res.savetime);
	}
	for (int i = 0; i < npaths; i++)
		free(paths[i]);
	free(paths);
	nsr_buf_release(&err);
	return status;
}
