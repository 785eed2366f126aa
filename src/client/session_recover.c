/*
 * session_recover.c - the client's recover session driver (session.h):
 * RECOVER_START at nsrd, the save set's fragments read volume after
 * volume from the mover of each (on whichever storage node holds it),
 * one stream restored with its metadata, RECOVER_END with the outcome.
 * After damage it asks the client file index which files were lost with
 * the damaged data and names them.  Nothing here prints or logs: every
 * message goes to the caller's callback.
 */
#include "nsr/compat.h"


#include <stdarg.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/index_clnt.h"
#include "nsr/log.h"
#include "nsr/mmd_clnt.h"
#include "nsr/nsrd_clnt.h"
#include "nsr/restore.h"
#include "nsr/rpc.h"
#include "nsr/session.h"

#include "session_int.h"

#define READ_CHUNK (1u << 20)

/* One save set's restore: the options and every saved path the restore
 * reported on, so that after damage the index can name the files whose
 * records were lost with the damaged data. */
struct rec_run {
	const struct nsr_session_recover_opts *o;
	int oom; /* an allocation failed: the lost-file list is partial */
	char **seen;
	size_t nseen, cap;
	uint32_t ssid;
	uint64_t lost;
};

/* say - one message to the caller (printf-style, never cut). */
static void say(struct rec_run *run, enum nsr_session_msg kind,
		const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(struct rec_run *run, enum nsr_session_msg kind,
		const char *fmt, ...)
{
	struct nsr_buf text;
	va_list ap;

	if (!run->o->message)
		return;
	nsr_buf_init(&text, 0);
	va_start(ap, fmt);
	if (nsr_buf_vaddf(&text, fmt, ap) != NSR_OK)
		run->oom = 1;
	va_end(ap);
	run->o->message(run->o->ctx, kind, text.data);
	nsr_buf_release(&text);
}

/* shown - path for a message: a long one shortened in the middle. */
static const char *shown(const char *path, char *out, size_t cap)
{
	nsr_log_shorten(out, cap, path, NSR_LOG_PATH_SHOW);
	return out;
}

/* seen_add - remember that the restore reported on path. */
static void seen_add(struct rec_run *run, const char *path)
{
	char *copy;

	if (run->nseen == run->cap) {
		size_t cap = run->cap ? 2 * run->cap : 256;
		char **v = realloc(run->seen, cap * sizeof(*v));

		if (!v) {
			run->oom = 1;
			return;
		}
		run->seen = v;
		run->cap = cap;
	}
	copy = strdup(path);
	if (!copy) {
		run->oom = 1;
		return;
	}
	run->seen[run->nseen++] = copy;
}

/* report - a file restored with a reservation (kind WARN) or not intact
 * (ERROR): remembered as seen, said with the reason. */
static void report(struct rec_run *run, enum nsr_session_msg kind,
		   const char *path, int rc, int sys_errno, const char *what)
{
	char sp[NSR_LOG_PATH_SHOW + 64];

	seen_add(run, path);
	say(run, kind, "%s: %s: %s", shown(path, sp, sizeof(sp)), what,
	    rc == NSR_ERR_SYSTEM ? strerror(sys_errno) : nsr_strerror(rc));
}

/* on_error - a file that could not be restored intact. */
static void on_error(void *ctx, const char *path, int rc, int sys_errno,
		     const char *what)
{
	report(ctx, NSR_SESSION_ERROR, path, rc, sys_errno, what);
}

/* on_warn - restored, with metadata not applied. */
static void on_warn(void *ctx, const char *path, int rc, int sys_errno,
		    const char *what)
{
	report(ctx, NSR_SESSION_WARN, path, rc, sys_errno, what);
}

/* on_restored - one object restored (-v lists it). */
static void on_restored(void *ctx, const struct nsr_asm_file *f,
			const char *target)
{
	struct rec_run *run = ctx;

	seen_add(run, f->path);
	if (run->o->restored)
		run->o->restored(run->o->ctx, f, target);
}

/* on_skipped - an existing file kept. */
static void on_skipped(void *ctx, const char *path, const char *target)
{
	char sp[NSR_LOG_PATH_SHOW + 64];

	seen_add(ctx, path);
	say(ctx, NSR_SESSION_WARN, "%s exists, not overwritten (use -iY or -f "
	    "to overwrite)", shown(target, sp, sizeof(sp)));
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

	return x->f.frag_seq < y->f.frag_seq ? -1
					     : x->f.frag_seq > y->f.frag_seq;
}

/* frags_in_order - nsrd's fragments into frags[] in save-set order, with
 * each one's mover port in ports[] and storage node in hosts[] (borrowed
 * from r; all have frags_len entries). */
static int frags_in_order(const rec_start_res *r, struct nsr_vol_frag *frags,
			  int *ports, const char **hosts)
{
	size_t n = r->frags.frags_len;
	struct rec_piece *p = calloc(n + 1, sizeof(*p));

	if (!p)
		return NSR_ERR_NOMEM;
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
	return NSR_OK;
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
		    (path[n] == '\0' || path[n] == '/' ||
		     (n == 1 && paths[i][0] == '/')))
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
			size_t cap = w->cap ? 2 * w->cap : 16;
			char **v = realloc(w->dirs, cap * sizeof(*v));

			if (!v)
				return NSR_ERR_NOMEM;
			w->dirs = v;
			w->cap = cap;
		}
		w->dirs[w->ndirs] = strdup(e->path);
		if (!w->dirs[w->ndirs])
			return NSR_ERR_NOMEM;
		w->ndirs++;
	}
	if (!in_filter(e->path, w->paths, w->npaths) ||
	    bsearch(&key, w->run->seen, w->run->nseen, sizeof(char *), by_str))
		return 0;
	say(w->run, NSR_SESSION_ERROR, "%s: lost in the damaged part of save "
	    "set %u: not recovered", e->path, w->run->ssid);
	w->run->lost++;
	return 0;
}

/* name_lost - after damage: walk the save set in the client file index
 * from start and name every file the restore never saw. */
static void name_lost(struct rec_run *run,
		      const struct nsr_session_recover_opts *o,
		      const char *client, int64_t savetime, const char *start,
		      const char *const *paths, size_t npaths)
{
	struct lost_walk w;
	struct nsr_buf err;
	size_t done = 0;

	memset(&w, 0, sizeof(w));
	nsr_buf_init(&err, 0);
	if (nsr_ixclnt_open(o->server, &w.ix, &err) != NSR_OK) {
		say(run, NSR_SESSION_WARN, "cannot ask the client file index "
		    "which files of save set %u were lost with the damaged "
		    "data: %s", run->ssid, err.data);
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
		say(run, NSR_SESSION_WARN, "%s: %s", start,
		    nsr_ixclnt_errmsg(w.ix));
	while (done < w.ndirs) {
		char *dir = w.dirs[done++];

		if (nsr_ixclnt_list(w.ix, client, dir, savetime, lost_visit,
				    &w) < 0)
			say(run, NSR_SESSION_WARN, "%s: %s", dir,
			    nsr_ixclnt_errmsg(w.ix));
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
static void rec_end(struct rec_run *run, struct nsr_nsrd *nsrd,
		    int64_t jobid, int status, uint64_t bytes, uint64_t files,
		    const char *msg)
{
	rec_end_args a = {.jobid = jobid, .status = status, .bytes = bytes,
			  .files = files, .msg = (char *)(msg ? msg : "")};
	nsr_void_res r;

	memset(&r, 0, sizeof(r));
	if (nsr_nsrd_recover_end(nsrd, &a, &r) != NSR_OK)
		say(run, NSR_SESSION_WARN,
		    "the job of this recover stays open: "
		    "%s",
		    nsr_nsrd_errmsg(nsrd));
	xdr_free(NSR_XDR(xdr_nsr_void_res), &r);
}

/* other_copy - the copy nsrd gave (r) cannot be read and nothing of it
 * was restored: if it named no copy by request and this is the first
 * failure, close its job, say so and ask for another copy (a->skip_cloneid
 * set, r freed): 1.  Else 0 (the caller reports the failure). */
static int other_copy(struct rec_run *run, struct nsr_nsrd *nsrd,
		      rec_start_args *a, rec_start_res *r,
		      const struct nsr_buf *err)
{
	char msg[1024];

	if (a->cloneid || a->skip_cloneid || !r->cloneid)
		return 0;
	snprintf(msg, sizeof(msg), "cannot read copy %u of save set %u: %s; "
		 "trying another copy", r->cloneid, a->ssid, err->data);
	say(run, NSR_SESSION_WARN, "%s", msg);
	rec_end(run, nsrd, r->jobid, NSR_ERR_IO, 0, 0, msg);
	a->skip_cloneid = r->cloneid;
	a->ticket = 0;
	xdr_free(NSR_XDR(xdr_rec_start_res), (char *)r);
	memset(r, 0, sizeof(*r));
	return 1;
}

/* start - RECOVER_START; while nsrd says a volume must be mounted first
 * (a mount request), say so once and ask again with the ticket. */
static int start(struct rec_run *run, struct nsr_nsrd *nsrd,
		 rec_start_args *a, rec_start_res *r)
{
	int rc;

	for (;;) {
		rc = nsr_nsrd_recover_start(nsrd, a, r);
		if (rc != NSR_ERR_WAIT || r->ticket == 0)
			return rc;
		if (a->ticket == 0)
			say(run, NSR_SESSION_WARN, "waiting: %s",
			    nsr_nsrd_errmsg(nsrd));
		a->ticket = r->ticket;
		session_pause(r->retry_ms);
		xdr_free(NSR_XDR(xdr_rec_start_res), (char *)r);
		memset(r, 0, sizeof(*r));
	}
}

/* nsr_session_recover_ssid - restore save set ssid (filtered by paths,
 * if any).  0 if everything came back intact, 1 otherwise. */
int nsr_session_recover_ssid(struct nsr_session_recover *sr, uint32_t ssid,
			     const char *const *paths, size_t npaths,
			     struct nsr_restore_stats *out)
{
	int failed;

	sr->pss_whole = 1;
	failed = session_recover_set(sr, ssid, paths, npaths, 0, out);
	sr->pss_whole = 0;
	return failed;
}

/* session_add_stats - sum restore statistics. */
void session_add_stats(struct nsr_restore_stats *t,
		       const struct nsr_restore_stats *s)
{
	t->files += s->files;
	t->bytes += s->bytes;
	t->skipped += s->skipped;
	t->filtered += s->filtered;
	t->errors += s->errors;
	t->ck_errors += s->ck_errors;
	t->damaged += s->damaged;
	t->warnings += s->warnings;
}

/* dependents - a PSS master's dependents restored before the master
 * itself (whose directories then get their metadata last), as one save
 * point.  1 if one did not come back intact. */
static int dependents(struct nsr_session_recover *sr, const rec_start_res *r,
		      const char *const *paths, size_t npaths, int exact,
		      struct nsr_restore_stats *out)
{
	struct nsr_restore_stats st;
	int failed = 0;

	if (!sr->pss_whole)
		return 0;
	sr->pss_whole = 0; /* dependents have none */
	for (u_int i = 0; i < r->pss_dependents.pss_dependents_len; i++) {
		memset(&st, 0, sizeof(st));
		failed |= session_recover_set(
			sr, r->pss_dependents.pss_dependents_val[i], paths,
			npaths, exact, &st);
		session_add_stats(out, &st);
	}
	sr->pss_whole = 1;
	return failed;
}

/* session_recover_set - restore save set ssid: with exact, only the
 * objects paths names (not what is below them). */
int session_recover_set(struct nsr_session_recover *sr, uint32_t ssid,
			const char *const *paths, size_t npaths, int exact,
			struct nsr_restore_stats *out)
{
	const struct nsr_session_recover_opts *o = sr->o;
	struct nsr_nsrd *nsrd = sr->nsrd;
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
	int rc, eof = 0, result = 1, dfailed = 0, fed = 0, retry = 0;
	struct nsr_restore_stats dst;
	char cmd[64];

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	memset(&st, 0, sizeof(st));
	memset(&dst, 0, sizeof(dst));
	memset(&run, 0, sizeof(run));
	run.o = o;
	run.ssid = ssid;
	nsr_buf_init(&err, 0);
	snprintf(cmd, sizeof(cmd), "recover -S %u", ssid);
	a.ssid = ssid;
	a.client = (char *)o->client;
	a.pid = getpid();
	a.command = cmd;
	a.cloneid = ssid == sr->want_ssid ? sr->want_cloneid : 0;
again:
	rc = start(&run, nsrd, &a, &r);
	if (rc) {
		say(&run, NSR_SESSION_ERROR, "%s", nsr_nsrd_errmsg(nsrd));
		goto out;
	}
	if (r.clone_msg && r.clone_msg[0])
		say(&run, NSR_SESSION_NOTICE, "%s", r.clone_msg);
	if (!a.skip_cloneid)
		dfailed = dependents(sr, &r, paths, npaths, exact, &dst);
	nfrags = r.frags.frags_len;
	frags = calloc(nfrags + 1, sizeof(*frags));
	ports = calloc(nfrags + 1, sizeof(*ports));
	hosts = calloc(nfrags + 1, sizeof(*hosts));
	if (!buf)
		buf = malloc(READ_CHUNK);
	if (!frags || !ports || !hosts || !buf ||
	    frags_in_order(&r, frags, ports, hosts) != NSR_OK) {
		snprintf(msg, sizeof(msg), "save set %u: out of memory", ssid);
		say(&run, NSR_SESSION_ERROR, "%s", msg);
		goto out;
	}
	memset(&ro, 0, sizeof(ro));
	memset(&cb, 0, sizeof(cb));
	ro.dest = o->dest;
	ro.paths = paths;
	ro.npaths = npaths;
	ro.exact = exact;
	ro.conflict = o->conflict;
	ro.keep_damaged = o->keep_damaged;
	ro.workers = o->workers;
	ro.to_fd = o->to_fd;
	ro.out_fd = o->out_fd;
	cb.restored = on_restored;
	cb.skipped = on_skipped;
	cb.error = on_error;
	cb.warn = on_warn;
	cb.ctx = &run;
	rc = rs ? NSR_OK : nsr_restore_new(&rs, &ro, &cb);
	if (rc) {
		snprintf(msg, sizeof(msg), "cannot start the restore: %s",
			 nsr_strerror(rc));
		say(&run, NSR_SESSION_ERROR, "%s", msg);
		goto out;
	}
	say(&run, NSR_SESSION_NOTICE, "Recovering save set %u (%s:%s) into %s",
	    ssid, r.ss_client, r.ss_name,
	    o->to_fd ? "a command" : o->dest ? o->dest
					      : "its original place");
	/* One volume at a time: the run of fragments on it, from its mover. */
	for (size_t i = 0, j; i < nfrags && !msg[0]; i = j) {
		for (j = i + 1; j < nfrags && memcmp(frags[j].volid,
						     frags[i].volid, 16) == 0;)
			j++;
		nsr_buf_reset(&err);
		if (nsr_mmd_connect(hosts[i] && hosts[i][0] ? hosts[i]
							    : o->server,
				    ports[i], &m, &err) != NSR_OK ||
		    nsr_mmd_read_open(m, ssid, frags + i, j - i, &err) !=
			    NSR_OK) {
			if (!fed && other_copy(&run, nsrd, &a, &r, &err)) {
				retry = 1;
				break;
			}
			snprintf(msg, sizeof(msg),
				 "cannot read save set %u from volume "
				 "%s: %s",
				 ssid, volume_name(&r, frags[i].volid),
				 err.data);
			say(&run, NSR_SESSION_ERROR, "%s", msg);
			break;
		}
		eof = 0;
		while (!eof) {
			size_t got = 0;

			nsr_buf_reset(&err);
			rc = nsr_mmd_read_next(m, buf, READ_CHUNK, &got, &eof,
					       &err);
			if (rc && is_damage(rc)) {
				/* Named by the mover; what follows was
				 * delivered. */
				say(&run, NSR_SESSION_ERROR, "%s",
				    err.len ? err.data : nsr_strerror(rc));
				damaged++;
				eof = 1;
				break;
			}
			if (rc && !fed &&
			    other_copy(&run, nsrd, &a, &r, &err)) {
				retry = 1;
				break;
			}
			if (rc) {
				snprintf(msg, sizeof(msg),
					 "reading save set %u failed: %s", ssid,
					 err.len ? err.data : nsr_strerror(rc));
				say(&run, NSR_SESSION_ERROR, "%s", msg);
				break;
			}
			fed |= got > 0;
			if (got &&
			    (rc = nsr_restore_feed(rs, buf, got)) != NSR_OK) {
				snprintf(msg, sizeof(msg),
					 "save set %u: bad save stream: %s",
					 ssid, nsr_strerror(rc));
				say(&run, NSR_SESSION_ERROR, "%s", msg);
				break;
			}
		}
		nsr_mmd_close(m);
		m = NULL;
		if (retry)
			break;
	}
	if (retry) { /* another copy: nothing of this one was restored */
		nsr_mmd_close(m);
		m = NULL;
		free(frags);
		free(ports);
		free(hosts);
		frags = NULL;
		ports = NULL;
		hosts = NULL;
		retry = 0;
		goto again;
	}
	if (eof && !msg[0]) {
		rc = nsr_restore_finish(rs);
		if (rc == NSR_ERR_CORRUPT || (rc == NSR_OK && damaged)) {
			name_lost(&run, o, r.ss_client, r.savetime,
				  npaths == 1 ? paths[0] : r.ss_name, paths,
				  npaths);
			snprintf(msg, sizeof(msg),
				 "save set %u is damaged: every intact "
				 "file was recovered, the damaged ones are "
				 "named above",
				 ssid);
		}
		else if (rc)
			snprintf(msg, sizeof(msg),
				 "save set %u: stream incomplete: %s", ssid,
				 nsr_strerror(rc));
		if (rc)
			say(&run, NSR_SESSION_ERROR, "%s", msg);
	}
	nsr_restore_stats(rs, &st);
	if (!msg[0] && st.errors) {
		snprintf(msg, sizeof(msg),
			 "%llu file(s) of save set %u could not be "
			 "recovered intact",
			 (unsigned long long)st.errors, ssid);
		say(&run, NSR_SESSION_ERROR, "%s", msg);
	}
	if (!msg[0] && run.oom) {
		snprintf(msg, sizeof(msg), "save set %u: out of memory while "
			 "keeping track of the restored files", ssid);
		say(&run, NSR_SESSION_ERROR, "%s", msg);
	}
	say(&run, NSR_SESSION_NOTICE, "Received %llu file(s) from NSR server "
	    "`%s'", (unsigned long long)st.files, o->server);
	result = msg[0] ? 1 : 0;
out:
	if (out) {
		*out = st;
		session_add_stats(out, &dst);
	}
	if (r.jobid)
		rec_end(&run, nsrd, r.jobid, result ? NSR_ERR_IO : 0, st.bytes,
			st.files, msg);
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
	return result | dfailed;
}

/* nsr_session_recover_open - connect to nsrd on the server. */
int nsr_session_recover_open(const struct nsr_session_recover_opts *o,
			     struct nsr_session_recover **out,
			     struct nsr_buf *err)
{
	struct nsr_session_recover *sr;
	int rc;

	*out = NULL;
	if (!o->server || !o->client)
		return NSR_ERR_INVAL;
	sr = calloc(1, sizeof(*sr));
	if (!sr)
		return NSR_ERR_NOMEM;
	sr->o = o;
	rc = nsr_nsrd_open(o->server, &sr->nsrd, err);
	if (rc != NSR_OK) {
		free(sr);
		return rc;
	}
	*out = sr;
	return NSR_OK;
}

/* nsr_session_recover_copy - pin the copy read of save set ssid. */
void nsr_session_recover_copy(struct nsr_session_recover *sr, uint32_t ssid,
			      uint32_t cloneid)
{
	sr->want_ssid = ssid;
	sr->want_cloneid = cloneid;
}

/* nsr_session_recover_close - close and free (NULL is fine). */
void nsr_session_recover_close(struct nsr_session_recover *sr)
{
	if (!sr)
		return;
	nsr_ixclnt_close(sr->ix);
	nsr_nsrd_close(sr->nsrd);
	free(sr);
}
