/*
 * save - back up files and directories to an OpenNSR server.
 *
 *   save [-qvn] [-s server] [-c client] [-N name] [-l level] [-b pool]
 *        [-w browse] [-y retention] path ...
 *
 * The save stream goes to the data mover nsrd chose (pipelined one-way
 * calls), the file index entries to nsrindexd in batches.  The save set is
 * reported complete to nsrd only after the mover has made the data durable
 * and nsrindexd has committed the index; if anything fails, the save set is
 * marked aborted with the reason and save exits non-zero.
 */
#include "nsr/compat.h"

#include <getopt.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/cfi.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/getdate.h"
#include "nsr/index_clnt.h"
#include "nsr/log.h"
#include "nsr/mmd_clnt.h"
#include "nsr/mmreport.h"
#include "nsr/nsrd_clnt.h"
#include "nsr/peer.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsrd.h"
#include "nsr/saver.h"
#include "nsr/xmalloc.h"

/* How often save renews its session lease at nsrd (nsrd settles a
 * session whose lease of NSRD_LEASE_SEC, 120 s, lapses). */
#define NSR_SAVE_RENEW_SEC 30

struct save_ctx {
	struct nsr_nsrd *nsrd;
	const save_start_res *ss;
	const char *client;
	time_t renew_at; /* next lease renewal at nsrd */
	struct nsr_mmd *mmd;
	struct nsr_ixclnt *ix;
	int verbose, quiet;
	int failed;
	char err[1024];
};

/* usage - print --help text. */
static void usage(FILE *f)
{
	fprintf(f,
		"usage: save [-qvn] [-s server] [-c client] [-N name] [-l level] "
		"[-b pool]\n"
		"            [-w browse-time] [-y retention-time] path ...\n"
		"  -s server     OpenNSR server (default: this host)\n"
		"  -c client     client name for the index (default: this host)\n"
		"  -N name       save set name (default: the first path)\n"
		"  -l level      full, incr, 1-9 (default: manual, an ad hoc save)\n"
		"  -b pool       destination pool (default: the client's, or Default)\n"
		"  -w time       browse time; -y time: retention time (nsr_getdate)\n"
		"  -n            walk and report what would be saved, save nothing\n"
		"  -v            list each file; -q quiet\n"
		"  -h, --help    this help\n");
}

/* renew_sec - seconds between renewals: a quarter of the lease when a
 * test shortens it (NSR_LEASE_SEC, as nsrd reads it), else 30. */
static time_t renew_sec(void)
{
	const char *e = getenv("NSR_LEASE_SEC");
	long v = e && *e ? strtol(e, NULL, 10) / 4 : 0;

	return v > 0 && v < NSR_SAVE_RENEW_SEC ? (time_t)v : NSR_SAVE_RENEW_SEC;
}

/* renew - renew the session's lease at nsrd while streaming, so nsrd
 * knows this client is alive (a lapsed lease gets the save set settled).
 * A failed renewal is not fatal: the data path decides; only an answer
 * that the save set was settled meanwhile stops the save. */
static int renew(struct save_ctx *c)
{
	save_renew_args a;
	nsr_void_res r;
	int rc, stop;

	c->renew_at = time(NULL) + renew_sec();
	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.ssid = c->ss->ssid;
	a.jobid = c->ss->jobid;
	a.client = (char *)c->client;
	rc = nsr_nsrd_save_renew(c->nsrd, &a, &r);
	stop = rc == NSR_ERR_STATE;
	if (rc)
		nsr_warn("renewing the session lease: %s",
			 nsr_nsrd_errmsg(c->nsrd));
	xdr_free(NSR_XDR(xdr_nsr_void_res), &r);
	return stop ? NSR_ERR_STATE : NSR_OK;
}

/* to_mover - the saver's sink: stream bytes to nsrmmd. */
static int to_mover(void *arg, const void *p, size_t n)
{
	struct save_ctx *c = arg;

	if (!c->mmd)
		return NSR_OK;
	if (time(NULL) >= c->renew_at && renew(c) != NSR_OK)
		return NSR_ERR_STATE;
	return nsr_mmd_ss_write(c->mmd, p, n);
}

/* to_index - one index entry per saved file. */
static int to_index(void *arg, const struct nsr_asm_file *f, uint64_t offset)
{
	struct save_ctx *c = arg;
	struct nsr_cfi_entry e;

	if (c->verbose)
		printf("%s\n", f->path);
	if (!c->ix)
		return NSR_OK;
	nsr_cfi_entry_from_file(&e, f, offset);
	return nsr_ixclnt_add(c->ix, &e);
}

/* on_file_error - a per-file problem: reported, the save goes on. */
static void on_file_error(void *arg, const char *path, int err, const char *what)
{
	struct save_ctx *c = arg;

	NSR_UNUSED(c);
	nsr_warn("%s: %s: %s", path, what, err == NSR_ERR_SYSTEM ? strerror(errno)
								  : nsr_strerror(err));
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
		p = strcmp(path, ".") == 0 ? nsr_xstrdup(cwd)
					   : nsr_path_join(cwd, path);
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
		nsr_fatal("cannot understand %s time '%s' (try e.g. \"1 year\", "
			  "\"12/31/27\", \"+2 weeks\")", what, text);
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

/* save_end - report the outcome to nsrd (best effort on failure paths). */
static int save_end(struct nsr_nsrd *nsrd, const save_start_res *ss,
		    int status, uint64_t size, uint64_t files, const char *msg)
{
	save_end_args a;
	nsr_void_res r;
	int rc;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.ssid = ss->ssid;
	a.jobid = ss->jobid;
	a.status = status;
	a.totalsize = size;
	a.nfiles = files;
	a.msg = (char *)(msg ? msg : "");
	rc = nsr_nsrd_save_end(nsrd, &a, &r);
	if (rc)
		nsr_error("%s", nsr_nsrd_errmsg(nsrd));
	xdr_free(NSR_XDR(xdr_nsr_void_res), &r);
	return rc;
}

/* main - parse options, do the work, exit status. */
int main(int argc, char **argv)
{
	static const struct option lo[] = {{"help", no_argument, NULL, 'h'},
					   {NULL, 0, NULL, 0}};
	char host[256], cmd[4096] = "", sizebuf[32];
	const char *server = NULL, *client = NULL, *name = NULL, *level = "",
		   *pool = "";
	int64_t browse = 0, retent = 0;
	int opt, dry = 0, rc, exit_code = 1;
	struct save_ctx c;
	struct nsr_nsrd *nsrd = NULL;
	struct nsr_saver *sv = NULL;
	struct nsr_saver_stats st;
	struct nsr_buf err;
	save_start_args sa;
	save_start_res ss;
	char **paths;
	int npaths;
	time_t t0 = time(NULL);

	nsr_log_init("save", NSR_LOG_STDERR | NSR_LOG_BARE);
	memset(&c, 0, sizeof(c));
	memset(&ss, 0, sizeof(ss));
	nsr_buf_init(&err, 0);
	while ((opt = getopt_long(argc, argv, "s:c:N:l:b:w:y:e:nvqh", lo, NULL)) != -1) {
		switch (opt) {
		case 's': server = optarg; break;
		case 'c': client = optarg; break;
		case 'N': name = optarg; break;
		case 'l': level = optarg; break;
		case 'b': pool = optarg; break;
		case 'w': browse = parse_time("browse", optarg); break;
		case 'y':
		case 'e': retent = parse_time("retention", optarg); break;
		case 'n': dry = 1; break;
		case 'v': c.verbose = 1; break;
		case 'q': c.quiet = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "save: name at least one path to save\n");
		usage(stderr);
		return 2;
	}
	if (gethostname(host, sizeof(host) - 1) != 0)
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	if (!server)
		server = host;
	if (!client)
		client = host;

	/* Every path must exist before anything is recorded anywhere. */
	npaths = argc - optind;
	paths = nsr_xcalloc((size_t)npaths, sizeof(char *));
	for (int i = 0; i < npaths; i++) {
		struct stat sb;

		paths[i] = absolute(argv[optind + i]);
		if (lstat(paths[i], &sb) != 0)
			nsr_fatal("%s: %s; nothing was saved", argv[optind + i],
				  strerror(errno));
	}
	if (!name)
		name = paths[0];
	for (int i = 0; i < argc; i++) {
		size_t l = strlen(cmd);

		snprintf(cmd + l, sizeof(cmd) - l, "%s%s", i ? " " : "", argv[i]);
	}

	if (!dry) {
		/* 1. Ask nsrd for a session. */
		if (nsr_nsrd_open(server, &nsrd, &err) != NSR_OK)
			nsr_fatal("cannot reach the OpenNSR server %s: %s",
				  server, err.data);
		/* A restarting nsrd is waited for at the end of the save. */
		nsr_nsrd_set_wait(nsrd, nsr_peer_wait_default());
		memset(&sa, 0, sizeof(sa));
		sa.client = (char *)client;
		sa.name = (char *)name;
		sa.level = (char *)level;
		sa.pool = (char *)pool;
		sa.group = (char *)"";
		sa.savetime = time(NULL);
		sa.browse_time = browse;
		sa.retention_time = retent;
		sa.pid = getpid();
		sa.command = cmd;
		if (nsr_nsrd_save_start(nsrd, &sa, &ss) != NSR_OK)
			nsr_fatal("%s", nsr_nsrd_errmsg(nsrd));
		c.nsrd = nsrd;
		c.ss = &ss;
		c.client = client;
		c.renew_at = time(NULL) + renew_sec();

		/* 2. Data mover and index. */
		if (nsr_mmd_connect(ss.mover_host[0] ? ss.mover_host : server,
				    ss.mover_port, &c.mmd, &err) != NSR_OK) {
			snprintf(c.err, sizeof(c.err), "cannot reach the data mover: %s", err.data);
			goto fail;
		} else {
			struct nsr_vol_sshdr hdr;

			memset(&hdr, 0, sizeof(hdr));
			hdr.ssid = ss.ssid;
			memcpy(hdr.longid, ss.longid, 16);
			snprintf(hdr.client, sizeof(hdr.client), "%s", client);
			snprintf(hdr.name, sizeof(hdr.name), "%s", name);
			snprintf(hdr.level, sizeof(hdr.level), "%s", level[0] ? level : "manual");
			snprintf(hdr.pool, sizeof(hdr.pool), "%s", ss.pool);
			hdr.savetime = ss.savetime;
			hdr.browse_time = ss.browse_time;
			hdr.retention_time = ss.retention_time;
			nsr_buf_reset(&err);
			if (nsr_mmd_ss_begin(c.mmd, &hdr, (const uint8_t *)ss.volid, NULL, &err) != NSR_OK) {
				snprintf(c.err, sizeof(c.err), "%s", err.data);
				goto fail;
			}
		}
		nsr_buf_reset(&err);
		if (nsr_ixclnt_open(server, &c.ix, &err) != NSR_OK) {
			snprintf(c.err, sizeof(c.err), "cannot reach the index daemon: %s",
				 err.data);
			goto fail;
		}
		if (nsr_ixclnt_begin(c.ix, client, ss.ssid, ss.savetime, name) != NSR_OK) {
			snprintf(c.err, sizeof(c.err), "%s", nsr_ixclnt_errmsg(c.ix));
			goto fail;
		}
	}

	/* 3. Walk and stream. */
	{
		struct nsr_saver_opts so;
		struct nsr_saver_cb cb;

		memset(&so, 0, sizeof(so));
		memset(&cb, 0, sizeof(cb));
		so.client = client;
		so.name = name;
		so.savetime = dry ? time(NULL) : ss.savetime;
		so.ssid = dry ? 0 : ss.ssid;
		cb.write = to_mover;
		cb.write_ctx = &c;
		cb.index = to_index;
		cb.index_ctx = &c;
		cb.error = on_file_error;
		cb.error_ctx = &c;
		rc = nsr_saver_new(&sv, &so, &cb);
		for (int i = 0; rc == NSR_OK && i < npaths; i++)
			rc = nsr_saver_add_path(sv, paths[i]);
		if (rc == NSR_OK)
			rc = nsr_saver_finish(sv);
		if (sv)
			nsr_saver_stats(sv, &st);
		if (rc) {
			snprintf(c.err, sizeof(c.err), "save stream failed: %s",
				 nsr_strerror(rc));
			goto fail;
		}
	}
	if (dry) {
		human(st.bytes, sizebuf, sizeof(sizebuf));
		printf("save: %s  %s  %llu files (nothing saved: -n)\n", name, sizebuf,
		       (unsigned long long)st.files);
		exit_code = 0;
		goto out;
	}

	/* 4. Durable on the volume, then the index, then complete. */
	{
		struct nsr_vol_sstail tail = {.bytes = st.stream_bytes, .files = st.files,
					      .status = st.errors ? NSR_VOL_SS_SUSPECT
								  : NSR_VOL_SS_OK};
		struct nsr_vol_frag frag;

		nsr_buf_reset(&err);
		if (nsr_mmd_ss_end(c.mmd, &tail, &frag, &err) != NSR_OK) {
			snprintf(c.err, sizeof(c.err), "%s", err.data);
			goto fail;
		}
	}
	if (nsr_ixclnt_commit(c.ix) != NSR_OK) {
		snprintf(c.err, sizeof(c.err), "index commit failed: %s",
			 nsr_ixclnt_errmsg(c.ix));
		goto fail;
	}
	if (save_end(nsrd, &ss, 0, st.stream_bytes, st.files, NULL) != NSR_OK)
		goto out;
	if (!c.quiet) {
		long secs = (long)(time(NULL) - t0);

		human(st.stream_bytes, sizebuf, sizeof(sizebuf));
		printf("save: %s  %s %02ld:%02ld:%02ld  %llu files\n", name, sizebuf,
		       secs / 3600, (secs / 60) % 60, secs % 60,
		       (unsigned long long)st.files);
	}
	if (st.errors)
		nsr_warn("%llu file(s) could not be saved (see above)",
			 (unsigned long long)st.errors);
	printf("completed savetime=%lld\n", (long long)ss.savetime);
	exit_code = st.errors ? 1 : 0;
	goto out;

fail:
	nsr_error("%s", c.err);
	if (c.ix)
		nsr_ixclnt_abort(c.ix);
	if (nsrd && ss.ssid &&
	    save_end(nsrd, &ss, NSR_ERR_IO, 0, 0, c.err) == NSR_OK)
		nsr_error("save of %s failed; the save set was marked aborted",
			  name);
	else if (nsrd && ss.ssid)
		nsr_error("save of %s failed; the server could not be told, so "
			  "it settles save set %u itself (aborted unless the "
			  "data reached the volume)", name, ss.ssid);
	else
		nsr_error("save of %s failed", name);
out:
	nsr_saver_free(sv);
	nsr_mmd_close(c.mmd);
	nsr_ixclnt_close(c.ix);
	nsr_nsrd_close(nsrd);
	xdr_free(NSR_XDR(xdr_save_start_res), &ss);
	for (int i = 0; i < npaths; i++)
		free(paths[i]);
	free(paths);
	nsr_buf_release(&err);
	return exit_code;
}
