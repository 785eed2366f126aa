/*
 * recover - restore files saved with save.
 *
 *   recover [-fkq] [-s server] [-c client] [-d dir] [-t time] [-iN|Y|R] -a path ...
 *   recover [-fkq] [-s server] [-d dir] [-iN|Y|R] -S ssid [-S ssid ...] [path ...]
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
#include "nsr/index_clnt.h"
#include "nsr/log.h"
#include "nsr/mmd_clnt.h"
#include "nsr/restore.h"
#include "nsr/nsrd_clnt.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsrd.h"
#include "nsr/xmalloc.h"

#define READ_CHUNK (1u << 20)

struct rec_opts {
	const char *server, *client, *dest;
	int conflict, quiet, verbose, keep_damaged;
	int64_t browse;
};

/* usage - print --help text. */
static void usage(FILE *f)
{
	fprintf(f,
		"usage: recover [-fkqv] [-s server] [-c client] [-d dir] [-t time] "
		"[-i{nNyYrR}] -a path ...\n"
		"       recover [-fkqv] [-s server] [-d dir] [-i{nNyYrR}] -S ssid "
		"[-S ssid ...] [path ...]\n"
		"  -a          recover the named paths (newest version as of -t)\n"
		"  -S ssid     recover save set ssid (optionally only the paths named)\n"
		"  -d dir      relocate: /a/b is restored as dir/a/b\n"
		"  -c client   whose index to browse (default: this host)\n"
		"  -t time     browse time (nsr_getdate syntax; default: now)\n"
		"  -i{n|y|r}   existing files: n skip (default), y overwrite, r rename\n"
		"  -f          overwrite existing files (same as -iY)\n"
		"  -k          keep a damaged file's bytes as name.damaged\n"
		"              (default: remove it)\n"
		"  -s server   OpenNSR server (default: this host); -q quiet; -v verbose\n");
}

/* One save set's restore: the options and every saved path the restore
 * reported on, so that after damage the index can name the files whose
 * records were lost with the damaged data. */
struct rec_run {
	const struct rec_opts *o;
	char **seen;
	size_t nseen, cap;
	uint32_t ssid;
	uint64_t lost;
};

/* seen_add - remember that the restore reported on path. */
static void seen_add(struct rec_run *run, const char *path)
{
	if (run->nseen == run->cap) {
		run->cap = run->cap ? 2 * run->cap : 256;
		run->seen = nsr_xrealloc(run->seen, run->cap * sizeof(*run->seen));
	}
	run->seen[run->nseen++] = nsr_xstrdup(path);
}

/* on_error - a file that could not be restored intact. */
static void on_error(void *ctx, const char *path, int rc, int sys_errno, const char *what)
{
	seen_add(ctx, path);
	nsr_error("%s: %s: %s", path, what,
		  rc == NSR_ERR_SYSTEM ? strerror(sys_errno) : nsr_strerror(rc));
}

/* on_warn - restored, with metadata not applied. */
static void on_warn(void *ctx, const char *path, int rc, int sys_errno, const char *what)
{
	seen_add(ctx, path);
	nsr_warn("%s: %s: %s", path, what,
		 rc == NSR_ERR_SYSTEM ? strerror(sys_errno) : nsr_strerror(rc));
}

/* on_restored - one object restored (-v lists it). */
static void on_restored(void *ctx, const struct nsr_asm_file *f, const char *target)
{
	struct rec_run *run = ctx;
	const struct rec_opts *o = run->o;

	seen_add(run, f->path);
	if (o->verbose)
		printf("%s\n", target);
}

/* on_skipped - an existing file kept. */
static void on_skipped(void *ctx, const char *path, const char *target)
{
	seen_add(ctx, path);
	nsr_warn("%s exists, not overwritten (use -iY or -f to overwrite)", target);
}

/* A fragment and the mover that reads its volume (host "" = the
 * server). */
struct rec_piece {
	struct nsr_vol_frag f;
	int port;
	const char *host;
};

/* by_seq - qsort order of pieces: save-set order. */
static int by_seq(const void *a, const void *b)
{
	const struct rec_piece *x = a, *y = b;

	return x->f.frag_seq < y->f.frag_seq ? -1 : x->f.frag_seq > y->f.frag_seq;
}

/* frags_in_order - nsrd's fragments into frags[] in save-set order, with
 * each one's mover port in ports[] and storage node in hosts[] (borrowed
 * from r; all have frags_len entries). */
static void frags_in_order(const rec_start_res *r, struct nsr_vol_frag *frags,
			   int *ports, const char **hosts)
{
	size_t n = r->frags.frags_len;
	struct rec_piece *p = nsr_xcalloc(n + 1, sizeof(*p));

	for (size_t i = 0; i < n; i++) {
		const rec_frag *w = &r->frags.frags_val[i];

		memcpy(p[i].f.volid, w->volid, 16);
		p[i].f.ssid = w->ssid;
		p[i].f.frag_seq = w->seq;
		p[i].f.ss_offset = w->ss_offset;
		p[i].f.file = w->file;
		p[i].f.record = w->record;
		p[i].f.offset = w->offset;
		p[i].f.size = w->size;
		p[i].f.complete = w->complete;
		p[i].port = w->mover_port ? w->mover_port : r->mover_port;
		p[i].host = w->mover_port ? w->mover_host : r->mover_host;
	}
	qsort(p, n, sizeof(*p), by_seq);
	for (size_t i = 0; i < n; i++) {
		frags[i] = p[i].f;
		ports[i] = p[i].port;
		hosts[i] = p[i].host;
	}
	free(p);
}

/* is_damage - a read error that names damaged data (the rest came). */
static int is_damage(int rc)
{
	return rc == NSR_ERR_CHECKSUM || rc == NSR_ERR_CORRUPT;
}

/* by_str - qsort/bsearch order of C strings. */
static int by_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* in_filter - 1 if path is one of paths or below one (none = all). */
static int in_filter(const char *path, const char *const *paths, size_t npaths)
{
	if (npaths == 0)
		return 1;
	for (size_t i = 0; i < npaths; i++) {
		size_t n = strlen(paths[i]);

		if (strncmp(path, paths[i], n) == 0 &&
		    (path[n] == '\0' || path[n] == '/' || (n == 1 && paths[i][0] == '/')))
			return 1;
	}
	return 0;
}

/* What the index walk after damage needs. */
struct lost_walk {
	struct rec_run *run;
	struct nsr_ixclnt *ix;
	const char *client;
	int64_t savetime;
	const char *const *paths;
	size_t npaths;
	char **dirs; /* directories of the save set still to list */
	size_t ndirs, cap;
};

/* lost_visit - an index entry: name it if it is of our save set, wanted,
 * and the restore never saw it (its record was in the damaged data). */
static int lost_visit(void *arg, const struct nsr_cfi_saveset *ss,
		      const struct nsr_cfi_entry *e)
{
	struct lost_walk *w = arg;
	const char *key = e->path;

	if (ss->ssid != w->run->ssid)
		return 0;
	if (e->type == NSR_ASM_DIR) {
		if (w->ndirs == w->cap) {
			w->cap = w->cap ? 2 * w->cap : 16;
			w->dirs = nsr_xrealloc(w->dirs, w->cap * sizeof(*w->dirs));
		}
		w->dirs[w->ndirs++] = nsr_xstrdup(e->path);
	}
	if (!in_filter(e->path, w->paths, w->npaths) ||
	    bsearch(&key, w->run->seen, w->run->nseen, sizeof(char *), by_str))
		return 0;
	nsr_error("%s: lost in the damaged part of save set %u: not recovered",
		  e->path, w->run->ssid);
	w->run->lost++;
	return 0;
}

/* name_lost - after damage: walk the save set in the client file index
 * from start and name every file the restore never saw. */
static void name_lost(struct rec_run *run, const struct rec_opts *o, const char *client,
		      int64_t savetime, const char *start, const char *const *paths,
		      size_t npaths)
{
	struct lost_walk w;
	struct nsr_buf err;
	size_t done = 0;

	memset(&w, 0, sizeof(w));
	nsr_buf_init(&err, 0);
	if (nsr_ixclnt_open(o->server, &w.ix, &err) != NSR_OK) {
		nsr_warn("cannot ask the client file index which files of save set %u were "
			 "lost with the damaged data: %s", run->ssid, err.data);
		nsr_buf_release(&err);
		return;
	}
	qsort(run->seen, run->nseen, sizeof(char *), by_str);
	w.run = run;
	w.client = client;
	w.savetime = savetime;
	w.paths = paths;
	w.npaths = npaths;
	if (nsr_ixclnt_find(w.ix, client, start, savetime, lost_visit, &w) < 0)
		nsr_warn("%s: %s", start, nsr_ixclnt_errmsg(w.ix));
	while (done < w.ndirs) {
		char *dir = w.dirs[done++];

		if (nsr_ixclnt_list(w.ix, client, dir, savetime, lost_visit, &w) < 0)
			nsr_warn("%s: %s", dir, nsr_ixclnt_errmsg(w.ix));
	}
	for (size_t i = 0; i < w.ndirs; i++)
		free(w.dirs[i]);
	free(w.dirs);
	nsr_ixclnt_close(w.ix);
	nsr_buf_release(&err);
}

/* volume_name - the name nsrd gave for volume volid. */
static const char *volume_name(const rec_start_res *r, const uint8_t *volid)
{
	for (u_int k = 0; k < r->frags.frags_len; k++)
		if (memcmp(r->frags.frags_val[k].volid, volid, 16) == 0)
			return r->frags.frags_val[k].volume;
	return "(unknown)";
}

/* rec_end - close the job at nsrd. */
static void rec_end(struct nsr_nsrd *nsrd, int64_t jobid, int status,
		    uint64_t bytes, uint64_t files, const char *msg)
{
	rec_end_args a = {.jobid = jobid, .status = status, .bytes = bytes,
			  .files = files, .msg = (char *)(msg ? msg : "")};
	nsr_void_res r;

	memset(&r, 0, sizeof(r));
	if (nsr_nsrd_recover_end(nsrd, &a, &r) != NSR_OK)
		nsr_warn("the job of this recover stays open: %s",
			 nsr_nsrd_errmsg(nsrd));
	xdr_free(NSR_XDR(xdr_nsr_void_res), &r);
}

/* recover_ssid - restore save set ssid (filtered by paths, if any).
 * Returns 0 if everything came back intact, 1 otherwise. */
static int recover_ssid(struct nsr_nsrd *nsrd, const struct rec_opts *o,
			uint32_t ssid, const char *const *paths, size_t npaths)
{
	rec_start_args a;
	rec_start_res r;
	struct nsr_vol_frag *frags = NULL;
	int *ports = NULL;
	const char **hosts = NULL;
	size_t nfrags = 0, damaged = 0;
	struct nsr_restore *rs = NULL;
	struct nsr_restore_opts ro;
	struct nsr_restore_cb cb;
	struct nsr_restore_stats st;
	struct nsr_mmd *m = NULL;
	struct rec_run run;
	struct nsr_buf err;
	char msg[1024] = "";
	char *buf = NULL;
	int rc, eof = 0, result = 1;
	char cmd[64];

	memset(&r, 0, sizeof(r));
	memset(&st, 0, sizeof(st));
	memset(&run, 0, sizeof(run));
	run.o = o;
	run.ssid = ssid;
	nsr_buf_init(&err, 0);
	snprintf(cmd, sizeof(cmd), "recover -S %u", ssid);
	a.ssid = ssid;
	a.client = (char *)o->client;
	a.pid = getpid();
	a.command = cmd;
	rc = nsr_nsrd_recover_start(nsrd, &a, &r);
	if (rc) {
		nsr_error("%s", nsr_nsrd_errmsg(nsrd));
		goto out;
	}
	nfrags = r.frags.frags_len;
	frags = nsr_xcalloc(nfrags + 1, sizeof(*frags));
	ports = nsr_xcalloc(nfrags + 1, sizeof(*ports));
	hosts = nsr_xcalloc(nfrags + 1, sizeof(*hosts));
	frags_in_order(&r, frags, ports, hosts);
	memset(&ro, 0, sizeof(ro));
	memset(&cb, 0, sizeof(cb));
	ro.dest = o->dest;
	ro.paths = paths;
	ro.npaths = npaths;
	ro.conflict = o->conflict;
	ro.keep_damaged = o->keep_damaged;
	cb.restored = on_restored;
	cb.skipped = on_skipped;
	cb.error = on_error;
	cb.warn = on_warn;
	cb.ctx = &run;
	rc = nsr_restore_new(&rs, &ro, &cb);
	if (rc) {
		snprintf(msg, sizeof(msg), "cannot start the restore: %s", nsr_strerror(rc));
		nsr_error("%s", msg);
		goto out;
	}
	if (!o->quiet)
		printf("Recovering save set %u (%s:%s) into %s\n", ssid, r.ss_client,
		       r.ss_name, o->dest ? o->dest : "its original place");
	buf = nsr_xmalloc(READ_CHUNK);
	/* One volume at a time: the run of fragments on it, from its mover. */
	for (size_t i = 0, j; i < nfrags && !msg[0]; i = j) {
		for (j = i + 1; j < nfrags && memcmp(frags[j].volid, frags[i].volid, 16) == 0;)
			j++;
		nsr_buf_reset(&err);
		if (nsr_mmd_connect(hosts[i] && hosts[i][0] ? hosts[i] : o->server,
				    ports[i], &m, &err) != NSR_OK ||
		    nsr_mmd_read_open(m, ssid, frags + i, j - i, &err) != NSR_OK) {
			snprintf(msg, sizeof(msg), "cannot read save set %u from volume "
				 "%s: %s", ssid, volume_name(&r, frags[i].volid), err.data);
			nsr_error("%s", msg);
			break;
		}
		eof = 0;
		while (!eof) {
			size_t got = 0;

			nsr_buf_reset(&err);
			rc = nsr_mmd_read_next(m, buf, READ_CHUNK, &got, &eof, &err);
			if (rc && is_damage(rc)) {
				/* Named by the mover; what follows was delivered. */
				nsr_error("%s", err.len ? err.data : nsr_strerror(rc));
				damaged++;
				eof = 1;
				break;
			}
			if (rc) {
				snprintf(msg, sizeof(msg), "reading save set %u failed: %s",
					 ssid, err.len ? err.data : nsr_strerror(rc));
				nsr_error("%s", msg);
				break;
			}
			if (got && (rc = nsr_restore_feed(rs, buf, got)) != NSR_OK) {
				snprintf(msg, sizeof(msg), "save set %u: bad save stream: %s",
					 ssid, nsr_strerror(rc));
				nsr_error("%s", msg);
				break;
			}
		}
		nsr_mmd_close(m);
		m = NULL;
	}
	if (eof && !msg[0]) {
		rc = nsr_restore_finish(rs);
		if (rc == NSR_ERR_CORRUPT || (rc == NSR_OK && damaged)) {
			name_lost(&run, o, r.ss_client, r.savetime,
				  npaths == 1 ? paths[0] : r.ss_name, paths, npaths);
			snprintf(msg, sizeof(msg), "save set %u is damaged: every intact "
				 "file was recovered, the damaged ones are named above", ssid);
		}
		else if (rc)
			snprintf(msg, sizeof(msg), "save set %u: stream incomplete: %s", ssid,
				 nsr_strerror(rc));
		if (rc)
			nsr_error("%s", msg);
	}
	nsr_restore_stats(rs, &st);
	if (!msg[0] && st.errors) {
		snprintf(msg, sizeof(msg), "%llu file(s) of save set %u could not be "
			 "recovered intact", (unsigned long long)st.errors, ssid);
		nsr_error("%s", msg);
	}
	if (!o->quiet)
		printf("Received %llu file(s) from NSR server `%s'\n",
		       (unsigned long long)st.files, o->server);
	result = msg[0] ? 1 : 0;
out:
	if (r.jobid)
		rec_end(nsrd, r.jobid, result ? NSR_ERR_IO : 0, st.bytes, st.files, msg);
	nsr_restore_free(rs);
	nsr_mmd_close(m);
	free(buf);
	free(frags);
	free(ports);
	free(hosts);
	for (size_t i = 0; i < run.nseen; i++)
		free(run.seen[i]);
	free(run.seen);
	xdr_free(NSR_XDR(xdr_rec_start_res), &r);
	nsr_buf_release(&err);
	return result;
}

/* Index lookup: the newest version's save set of one path. */
struct pick {
	uint64_t ssid;
};

/* pick_first - keep the save set of the first (newest) version. */
static int pick_first(void *arg, const struct nsr_cfi_saveset *ss,
		      const struct nsr_cfi_entry *e)
{
	struct pick *p = arg;

	NSR_UNUSED(e);
	p->ssid = ss->ssid;
	return 1; /* newest first: the first one is what a browse shows */
}

/* absolute - malloc'ed absolute path (symlinks not resolved). */
static char *absolute(const char *path)
{
	char cwd[4096];

	if (path[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		return nsr_xstrdup(path);
	return nsr_path_join(cwd, path);
}

/* main - parse options, do the work, exit status. */
int main(int argc, char **argv)
{
	static const struct option lo[] = {{"help", no_argument, NULL, 'h'},
					   {NULL, 0, NULL, 0}};
	struct rec_opts o;
	uint32_t ssids[64];
	int nssid = 0, automatic = 0, opt, failed = 0;
	char host[256];
	struct nsr_nsrd *nsrd = NULL;
	struct nsr_buf err;
	time_t bt;

	nsr_log_init("recover", NSR_LOG_STDERR | NSR_LOG_BARE);
	memset(&o, 0, sizeof(o));
	nsr_buf_init(&err, 0);
	o.conflict = NSR_RESTORE_SKIP;
	while ((opt = getopt_long(argc, argv, "s:c:d:t:i:S:afkqvh", lo, NULL)) != -1) {
		switch (opt) {
		case 's': o.server = optarg; break;
		case 'c': o.client = optarg; break;
		case 'd': o.dest = optarg; break;
		case 't':
			if (nsr_getdate(optarg, time(NULL), &bt) != NSR_OK)
				nsr_fatal("cannot understand browse time '%s'", optarg);
			o.browse = bt;
			break;
		case 'i':
			switch (optarg[0]) {
			case 'n': case 'N': o.conflict = NSR_RESTORE_SKIP; break;
			case 'y': case 'Y': o.conflict = NSR_RESTORE_OVERWRITE; break;
			case 'r': case 'R': o.conflict = NSR_RESTORE_RENAME; break;
			default:
				fprintf(stderr, "recover: -i takes n, y or r\n");
				return 2;
			}
			break;
		case 'f': o.conflict = NSR_RESTORE_OVERWRITE; break;
		case 'k': o.keep_damaged = 1; break;
		case 'S': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);

			if (end == optarg || (*end && *end != '/') || v == 0 || v > UINT32_MAX) {
				fprintf(stderr, "recover: bad save set id '%s'\n", optarg);
				return 2;
			}
			if (nssid == (int)NSR_ARRAY_SIZE(ssids)) {
				fprintf(stderr, "recover: too many -S options\n");
				return 2;
			}
			ssids[nssid++] = (uint32_t)v;
			break;
		}
		case 'a': automatic = 1; break;
		case 'q': o.quiet = 1; break;
		case 'v': o.verbose = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!automatic && !nssid) {
		fprintf(stderr, "recover: the interactive browser is not available yet; "
				"use -a path ... or -S ssid\n");
		usage(stderr);
		return 2;
	}
	if (automatic && optind >= argc) {
		fprintf(stderr, "recover: -a needs at least one path\n");
		return 2;
	}
	if (gethostname(host, sizeof(host) - 1) != 0)
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	if (!o.server)
		o.server = host;
	if (!o.client)
		o.client = host;
	if (nsr_nsrd_open(o.server, &nsrd, &err) != NSR_OK)
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
			failed |= recover_ssid(nsrd, &o, ssids[i], paths, (size_t)np);
		for (int i = 0; i < np; i++)
			free((char *)paths[i]);
		free(paths);
	} else {
		struct nsr_ixclnt *ix = NULL;

		if (nsr_ixclnt_open(o.server, &ix, &err) != NSR_OK)
			nsr_fatal("cannot reach the index daemon on %s: %s", o.server, err.data);
		for (int i = optind; i < argc; i++) {
			char *p = absolute(argv[i]);
			const char *one[1] = {p};
			struct pick pk = {0};
			int rc = nsr_ixclnt_find(ix, o.client, p, o.browse, pick_first, &pk);

			if (rc < 0) {
				nsr_error("%s: %s", p, nsr_ixclnt_errmsg(ix));
				failed = 1;
			} else if (!pk.ssid) {
				nsr_error("%s: not in the index of client %s%s", p, o.client,
					  o.browse ? " as of the browse time" : "");
				failed = 1;
			} else {
				failed |= recover_ssid(nsrd, &o, (uint32_t)pk.ssid, one, 1);
			}
			free(p);
		}
		nsr_ixclnt_close(ix);
	}
	if (!o.quiet) {
		time_t now = time(NULL);
		char when[64];

		strftime(when, sizeof(when), "%a %b %e %H:%M:%S %Y", localtime(&now));
		printf("Recover completion time: %s\n", when);
	}
	nsr_nsrd_close(nsrd);
	nsr_buf_release(&err);
	return failed ? 1 : 0;
}
