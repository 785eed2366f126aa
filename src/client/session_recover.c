/*
 * session_recover.c - the client's recover session driver (session.h):
 * RECOVER_START at nsrd for each save set, their fragments read volume
 * after volume from the mover of each (on whichever storage node holds
 * it), each save set's stream restored with its metadata, RECOVER_END
 * with the outcome.
 *
 * One pass per volume: the save sets whose next fragments lie on one
 * volume are read together (MMD_READ_OPEN with ssid 0, then
 * MMD_READ_SETS_NEXT: the mover walks the volume once and tags each
 * piece with its save set), each into its own
 * restore.  Save sets restored side by side must not write the same
 * path: a point-in-time recover gives each save set of its chain a
 * disjoint part of the tree (exact paths); `recover -S a -S b` reads
 * together only save sets whose names are different trees (else one
 * after the other, in the order given), and a PSS master with its
 * dependents.  Such restores apply directory metadata only at their end
 * (dirs_last), and they end only after all of them have every file in
 * place, in the order given (oldest first for a point-in-time recover),
 * so the tree ends as the sequential restore would leave it.
 * Copies (clones): nsrd picks the copy of each save set to read (the
 * original first), or the one `recover -S ssid/cloneid` pins.  When the
 * copy it picked cannot be opened or read and nothing of that save set
 * was restored yet, its job ends and it starts again from another copy
 * (once), while the other save sets of the pass go on.
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

/* frags_in_order - nsrd's fragments in save-set order, each with its
 * mover's port and storage node (borrowed from r); NULL if out of
 * memory. */
static struct rec_piece *frags_in_order(const rec_start_res *r)
{
	size_t n = r->frags.frags_len;
	struct rec_piece *p = calloc(n + 1, sizeof(*p));

	if (!p)
		return NULL;
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
	return p;
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

/* One save set of a recover: its job, fragments, restore and outcome.
 * next is the first fragment not read yet; msg, once set, is the error
 * that stops the save set (it reads no further, and is not finished). */
struct rec_set {
	struct rec_run run;
	rec_start_res r;
	int started; /* RECOVER_START answered */
	int dependent; /* a PSS dependent of the next master in the list */
	const char *const *paths;
	size_t npaths;
	struct rec_piece *pc;
	size_t nfrags, next;
	struct nsr_restore *rs;
	size_t damaged;
	struct nsr_restore_stats st;
	char msg[1024];
	int exact, dirs_last; /* as set_start was called */
	uint32_t skip_cloneid; /* a copy that failed: not that one again */
	int fed; /* data of it reached its restore */
	int other; /* read failed before any data: another copy (why) */
	char why[512];
};

/* set_fail - the save set's error (the first one stays), said once. */
static void set_fail(struct rec_set *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void set_fail(struct rec_set *s, const char *fmt, ...)
{
	va_list ap;

	if (s->msg[0])
		return;
	va_start(ap, fmt);
	vsnprintf(s->msg, sizeof(s->msg), fmt, ap);
	va_end(ap);
	say(&s->run, NSR_SESSION_ERROR, "%s", s->msg);
}

/* pinned_copy - the copy of ssid recover -S ssid/cloneid asks for (0 =
 * the one nsrd picks). */
static uint32_t pinned_copy(const struct nsr_session_recover *sr,
			    uint32_t ssid)
{
	for (size_t i = 0; i < sr->npins; i++)
		if (sr->want_ssid[i] == ssid)
			return sr->want_cloneid[i];
	return 0;
}

/* set_start - RECOVER_START for save set ssid and a restore for it.
 * 0, or 1 with the error said (s->msg). */
static int set_start(struct nsr_session_recover *sr, struct rec_set *s,
		     uint32_t ssid, int exact, int dirs_last)
{
	const struct nsr_session_recover_opts *o = sr->o;
	rec_start_args a;
	struct nsr_restore_opts ro;
	struct nsr_restore_cb cb;
	char cmd[64];
	int rc;

	memset(&a, 0, sizeof(a));
	s->run.o = o;
	s->run.ssid = ssid;
	s->exact = exact;
	s->dirs_last = dirs_last;
	snprintf(cmd, sizeof(cmd), "recover -S %u", ssid);
	a.ssid = ssid;
	a.client = (char *)o->client;
	a.pid = getpid();
	a.command = cmd;
	a.cloneid = pinned_copy(sr, ssid);
	a.skip_cloneid = s->skip_cloneid;
	if (start(&s->run, sr->nsrd, &a, &s->r)) {
		set_fail(s, "%s", nsr_nsrd_errmsg(sr->nsrd));
		return 1;
	}
	s->started = 1;
	if (s->r.clone_msg && s->r.clone_msg[0])
		say(&s->run, NSR_SESSION_NOTICE, "%s", s->r.clone_msg);
	/* Its job's lease is renewed until its RECOVER_END (a recover that
	 * waits for its mover or a slow disk is not settled as gone). */
	if (s->r.jobid &&
	    session_lease_add(sr->lease, s->r.jobid, 0) != NSR_OK)
		say(&s->run, NSR_SESSION_WARN, "save set %u: its recover job's "
		    "lease is not renewed (too many save sets at once): nsrd "
		    "settles it after two minutes", ssid);
	s->nfrags = s->r.frags.frags_len;
	s->pc = frags_in_order(&s->r);
	if (!s->pc) {
		set_fail(s, "save set %u: out of memory", ssid);
		return 1;
	}
	memset(&ro, 0, sizeof(ro));
	memset(&cb, 0, sizeof(cb));
	ro.dest = o->dest;
	ro.paths = s->paths;
	ro.npaths = s->npaths;
	ro.exact = exact;
	ro.conflict = o->conflict;
	ro.keep_damaged = o->keep_damaged;
	ro.dirs_last = dirs_last;
	ro.workers = o->workers;
	ro.to_fd = o->to_fd;
	ro.out_fd = o->out_fd;
	ro.split = sr->split; /* their pieces meet, whichever set has them */
	ro.key = session_key_by_id; /* encrypted save sets */
	ro.key_ctx = sr->nsrd;
	cb.restored = on_restored;
	cb.skipped = on_skipped;
	cb.error = on_error;
	cb.warn = on_warn;
	cb.ctx = &s->run;
	rc = nsr_restore_new(&s->rs, &ro, &cb);
	if (rc) {
		set_fail(s, "cannot start the restore: %s", nsr_strerror(rc));
		return 1;
	}
	say(&s->run, NSR_SESSION_NOTICE,
	    "Recovering save set %u (%s:%s) into %s", ssid, s->r.ss_client,
	    s->r.ss_name,
	    o->to_fd ? "a command" : o->dest ? o->dest : "its original place");
	return 0;
}

/* reading - the save set still has fragments to read. */
static int reading(const struct rec_set *s)
{
	return s->started && !s->msg[0] && s->next < s->nfrags;
}

/* run_end - the end of fragment run on the volume of s's next one. */
static size_t run_end(const struct rec_set *s)
{
	size_t j = s->next + 1;

	while (j < s->nfrags && memcmp(s->pc[j].f.volid,
				       s->pc[s->next].f.volid, 16) == 0)
		j++;
	return j;
}

/* One pass over one volume: the save sets read in it. */
struct rec_pass {
	const struct nsr_session_recover *sr;
	struct rec_set *set[MMD_SETS_MAX];
	size_t upto[MMD_SETS_MAX]; /* end of each one's run */
	int ended[MMD_SETS_MAX];
	uint32_t ssids[MMD_SETS_MAX];
	struct nsr_vol_frag frags[MMD_FRAGS_MAX];
	size_t n, nf;
};

/* pass_plan - the volume of the first save set still reading, and every
 * save set whose next fragments are on it (within the protocol's
 * bounds).  0 if no save set is left to read. */
static int pass_plan(struct rec_set **sets, size_t n, struct rec_pass *p)
{
	const uint8_t *volid = NULL;

	memset(p, 0, sizeof(*p));
	for (size_t i = 0; i < n; i++) {
		struct rec_set *s = sets[i];
		size_t end;

		if (!reading(s))
			continue;
		if (!volid)
			volid = s->pc[s->next].f.volid;
		if (memcmp(s->pc[s->next].f.volid, volid, 16) != 0)
			continue;
		end = run_end(s);
		if (p->n == MMD_SETS_MAX || p->nf + end - s->next >
						    MMD_FRAGS_MAX)
			continue; /* in a later pass */
		for (size_t k = s->next; k < end; k++)
			p->frags[p->nf++] = s->pc[k].f;
		p->set[p->n] = s;
		p->upto[p->n] = end;
		p->ssids[p->n++] = s->run.ssid;
	}
	return p->n > 0;
}

/* pass_member - the pass's save set ssid that has not ended, or -1. */
static int pass_member(const struct rec_pass *p, uint32_t ssid)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->ssids[i] == ssid && !p->ended[i])
			return (int)i;
	return -1;
}

/* want_other - the copy nsrd picked for s cannot be read (why): if
 * nothing of s was restored yet, nsrd named the copy, none was pinned
 * and this is the first failure, mark s to start again from another
 * copy after the pass (other_copy): 1.  Else 0 (s fails).  This is per
 * save set: the others of the pass keep what they read. */
static int want_other(const struct nsr_session_recover *sr,
		      struct rec_set *s, const char *why)
{
	if (s->fed || s->other || s->msg[0] || s->skip_cloneid ||
	    !s->r.cloneid || pinned_copy(sr, s->run.ssid))
		return 0;
	s->other = 1;
	snprintf(s->why, sizeof(s->why), "%s", why);
	return 1;
}

/* pass_fail - every save set of the pass not ended fails with why (or
 * is read again from another copy, want_other). */
static void pass_fail(const struct nsr_session_recover *sr,
		      struct rec_pass *p, const char *what, const char *why)
{
	for (size_t i = 0; i < p->n; i++) {
		if (p->ended[i] || p->set[i]->other ||
		    want_other(sr, p->set[i], why))
			continue;
		set_fail(p->set[i], "%s save set %u from volume %s: %s",
			 what, p->ssids[i],
			 volume_name(&p->set[i]->r, p->frags[0].volid),
			 why);
	}
}

/* pass_piece - one piece from the mover: data to its save set's
 * restore, or the end of its run with the outcome (nsr_mmd_piece_fn).
 * Non-zero: a piece of a save set the pass did not ask for. */
static int pass_piece(void *arg, const struct nsr_mmd_sets_piece *pc)
{
	struct rec_pass *p = arg;
	int i = pass_member(p, pc->ssid), rc;
	struct rec_set *s;

	if (i < 0)
		return NSR_ERR_PROTO;
	s = p->set[i];
	if (pc->len && !s->msg[0] && !s->other) {
		s->fed = 1;
		rc = nsr_restore_feed(s->rs, pc->data, pc->len);
		if (rc != NSR_OK)
			set_fail(s, "save set %u: bad save stream: %s",
				 s->run.ssid, nsr_strerror(rc));
	}
	if (!pc->ss_end)
		return 0;
	p->ended[i] = 1;
	s->next = p->upto[i];
	if (pc->ss_code == NSR_OK || s->msg[0] || s->other)
		return 0;
	if (is_damage(pc->ss_code)) {
		/* Named by the mover; what follows was delivered. */
		say(&s->run, NSR_SESSION_ERROR, "%s", pc->ss_msg);
		s->damaged++;
		return 0;
	}
	if (!want_other(p->sr, s, pc->ss_msg))
		set_fail(s, "reading save set %u failed: %s", s->run.ssid,
			 pc->ss_msg);
	return 0;
}

/* pass_run - read the planned save sets in one pass over their volume,
 * from the mover of the first one's fragment. */
static void pass_run(struct nsr_session_recover *sr, struct rec_pass *p)
{
	const struct rec_piece *lead = &p->set[0]->pc[p->set[0]->next];
	struct nsr_mmd *m = NULL;
	struct nsr_buf err;
	int eof = 0, rc;

	nsr_buf_init(&err, 0);
	p->sr = sr;
	if (nsr_mmd_connect(lead->host && lead->host[0] ? lead->host
							: sr->o->server,
			    lead->port, &m, &err) != NSR_OK) {
		pass_fail(sr, p, "cannot read", err.data);
		goto out;
	}
	/* nsrd's grant of each save set of the pass (at most MMD_SETS_MAX,
	 * as many as nsr_mmd_grant keeps). */
	for (size_t i = 0; i < p->n; i++)
		nsr_mmd_grant(m, &p->set[i]->r.grant);
	if (nsr_mmd_read_sets_open(m, p->frags, p->nf, &err) != NSR_OK) {
		pass_fail(sr, p, "cannot read", err.data);
		goto out;
	}
	while (!eof) {
		nsr_buf_reset(&err);
		rc = nsr_mmd_read_sets_next(m, READ_CHUNK, pass_piece, p, &eof,
					    &err);
		if (rc == NSR_ERR_PROTO && !err.len)
			nsr_buf_addf(&err, "the mover sent data of a save set "
				     "that was not asked for");
		if (rc != NSR_OK) {
			pass_fail(sr, p, "reading", err.data);
			break;
		}
	}
	pass_fail(sr, p, "reading",
		  "the mover ended the pass before its end");
out:
	nsr_mmd_close(m);
	nsr_buf_release(&err);
}

/* other_copy - s was marked by want_other: say so, end its job and
 * start it again from another copy than the one that failed (nsrd picks
 * it; its clone_msg says which).  Its next fragments are read in a later
 * pass of the same group. */
static void other_copy(struct nsr_session_recover *sr, struct rec_set *s)
{
	uint32_t ssid = s->run.ssid, bad = s->r.cloneid;
	char msg[1024];

	snprintf(msg, sizeof(msg), "cannot read copy %u of save set %u: %s; "
		 "trying another copy", bad, ssid, s->why);
	say(&s->run, NSR_SESSION_WARN, "%s", msg);
	if (s->r.jobid) {
		session_lease_remove(sr->lease, s->r.jobid);
		rec_end(&s->run, sr->nsrd, s->r.jobid, NSR_ERR_IO, 0, 0, msg);
	}
	nsr_restore_free(s->rs); /* nothing was fed to it */
	s->rs = NULL;
	free(s->pc);
	s->pc = NULL;
	xdr_free(NSR_XDR(xdr_rec_start_res), (char *)&s->r);
	memset(&s->r, 0, sizeof(s->r));
	s->started = 0;
	s->nfrags = 0;
	s->next = 0;
	s->other = 0;
	s->skip_cloneid = bad;
	set_start(sr, s, ssid, s->exact, s->dirs_last);
}

/* set_finish - the end of a save set's restore: finish it, name what
 * damage cost, report, close its job.  0 if it came back intact. */
static int set_finish(struct nsr_session_recover *sr, struct rec_set *s)
{
	const struct nsr_session_recover_opts *o = sr->o;
	uint32_t ssid = s->run.ssid;
	int rc;

	if (s->started && !s->msg[0] && s->rs) {
		rc = nsr_restore_finish(s->rs);
		if (rc == NSR_ERR_CORRUPT || (rc == NSR_OK && s->damaged)) {
			name_lost(&s->run, o, s->r.ss_client, s->r.savetime,
				  s->npaths == 1 ? s->paths[0] : s->r.ss_name,
				  s->paths, s->npaths);
			set_fail(s, "save set %u is damaged: every intact file "
				 "was recovered, the damaged ones are named "
				 "above", ssid);
		} else if (rc) {
			set_fail(s, "save set %u: stream incomplete: %s", ssid,
				 nsr_strerror(rc));
		}
	}
	if (s->rs)
		nsr_restore_stats(s->rs, &s->st);
	if (s->started) {
		if (s->st.errors)
			set_fail(s, "%llu file(s) of save set %u could not "
				 "be recovered intact",
				 (unsigned long long)s->st.errors, ssid);
		if (s->run.oom)
			set_fail(s, "save set %u: out of memory while keeping "
				 "track of the restored files", ssid);
		say(&s->run, NSR_SESSION_NOTICE, "Received %llu file(s) from "
		    "NSR server `%s'", (unsigned long long)s->st.files,
		    o->server);
	}
	if (s->r.jobid) {
		char warn[512];

		if (session_lease_check(sr->lease, s->r.jobid, warn,
					sizeof(warn)))
			say(&s->run, NSR_SESSION_WARN, "save set %u: nsrd "
			    "settled this recover's job while it ran (see the "
			    "server's log)", ssid);
		else if (warn[0])
			say(&s->run, NSR_SESSION_WARN, "%s", warn);
		session_lease_remove(sr->lease, s->r.jobid);
	}
	if (s->r.jobid)
		rec_end(&s->run, sr->nsrd, s->r.jobid,
			s->msg[0] ? NSR_ERR_IO : 0, s->st.bytes, s->st.files,
			s->msg);
	return s->msg[0] ? 1 : 0;
}

/* set_free - free what a save set holds. */
static void set_free(struct rec_set *s)
{
	nsr_restore_free(s->rs);
	free(s->pc);
	for (size_t i = 0; i < s->run.nseen; i++)
		free(s->run.seen[i]);
	free(s->run.seen);
	xdr_free(NSR_XDR(xdr_rec_start_res), (char *)&s->r);
}

/* path_within - a is b or below it. */
static int path_within(const char *a, const char *b)
{
	size_t n = strlen(b);

	return strcmp(b, "/") == 0 ||
	       (strncmp(a, b, n) == 0 && (a[n] == '\0' || a[n] == '/'));
}

/* overlaps - may save sets x and y restore the same path?  By their
 * names (save points): unless one is below the other, they are
 * different trees.  A PSS dependent goes with its master. */
static int overlaps(const struct rec_set *x, const struct rec_set *y)
{
	if (x->dependent || y->dependent || !x->started || !y->started)
		return 0;
	return path_within(x->r.ss_name, y->r.ss_name) ||
	       path_within(y->r.ss_name, x->r.ss_name);
}

/* group_end - from sets[i], the end of the group read side by side: with
 * exact (the disjoint parts of a point-in-time tree) all of them, else
 * as long as no two save sets may restore the same path.  Into a command
 * (to_fd) one at a time: their bytes must not mix. */
static size_t group_end(const struct nsr_session_recover *sr,
			struct rec_set *const *sets, size_t n, size_t i,
			int exact)
{
	size_t j;

	if (sr->o->to_fd)
		return i + 1;
	if (exact)
		return n;
	for (j = i + 1; j < n; j++)
		for (size_t k = i; k < j; k++)
			if (overlaps(sets[k], sets[j]))
				return j;
	return j;
}

/* new_set - a save set appended to the list (its address stays: the
 * restore's callbacks hold it).  NULL if out of memory. */
static struct rec_set *new_set(struct rec_set ***v, size_t *n, size_t *cap)
{
	struct rec_set *s;

	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 8;
		struct rec_set **nv = realloc(*v, c * sizeof(*nv));

		if (!nv)
			return NULL;
		*v = nv;
		*cap = c;
	}
	s = calloc(1, sizeof(*s));
	if (s)
		(*v)[(*n)++] = s;
	return s;
}

/* add_split - the parts of a master's split files, wanted by a
 * point-in-time recover: each dependent restores them too (one started
 * already gets them as more exact paths; another one is started). */
static int add_split(struct nsr_session_recover *sr, const struct rec_set *m,
		     const struct session_want *w, struct rec_set ***sets,
		     size_t *nsets, size_t *cap)
{
	for (u_int k = 0; k < m->r.pss_dependents.pss_dependents_len; k++) {
		uint32_t d = m->r.pss_dependents.pss_dependents_val[k];
		struct rec_set *t = NULL;

		for (size_t i = 0; i < *nsets && !t; i++)
			if ((*sets)[i]->run.ssid == d)
				t = (*sets)[i];
		if (t && t->rs) {
			if (nsr_restore_add_paths(t->rs, w->split, w->nsplit))
				return NSR_ERR_NOMEM;
			continue;
		}
		if (t) /* it failed to start: said already */
			continue;
		t = new_set(sets, nsets, cap);
		if (!t)
			return NSR_ERR_NOMEM;
		t->paths = w->split;
		t->npaths = w->nsplit;
		t->dependent = 1;
		set_start(sr, t, d, 1, 1);
	}
	return NSR_OK;
}

/* start_all - RECOVER_START for every wanted save set, a PSS master's
 * dependents (recover -S of a whole master) placed before it, and
 * those holding parts of the split files a point-in-time recover
 * wants. */
static int start_all(struct nsr_session_recover *sr,
		     const struct session_want *want, size_t n, int exact,
		     struct rec_set ***sets, size_t *nsets)
{
	struct rec_set **of = calloc(n ? n : 1, sizeof(*of)); /* want's */
	size_t cap = 0;
	int dirs_last = n > 1 || sr->pss_whole, rc = NSR_OK;

	for (size_t i = 0; i < n; i++)
		if (want[i].nsplit)
			dirs_last = 1; /* several restores fill one tree */

	for (size_t i = 0; i < n; i++) {
		struct rec_set *s = new_set(sets, nsets, &cap);
		u_int nd;

		if (!s || !of) {
			free(of);
			return NSR_ERR_NOMEM;
		}
		of[i] = s;
		s->paths = want[i].paths;
		s->npaths = want[i].npaths;
		set_start(sr, s, want[i].ssid, exact, dirs_last);
		nd = s->r.pss_dependents.pss_dependents_len;
		if (!sr->pss_whole || nd == 0)
			continue;
		for (u_int k = 0; k < nd; k++) {
			struct rec_set *d = new_set(sets, nsets, &cap);

			if (!d) {
				free(of);
				return NSR_ERR_NOMEM;
			}
			d->paths = want[i].paths;
			d->npaths = want[i].npaths;
			d->dependent = 1;
			set_start(sr, d,
				  s->r.pss_dependents.pss_dependents_val[k],
				  exact, dirs_last);
			/* the master moves behind its dependents */
			(*sets)[*nsets - 2] = d;
			(*sets)[*nsets - 1] = s;
		}
	}
	/* every wanted set started first: add_split finds them */
	for (size_t i = 0; i < n && exact && rc == NSR_OK; i++)
		if (want[i].nsplit && of[i]->started)
			rc = add_split(sr, of[i], &want[i], sets, nsets, &cap);
	free(of);
	return rc;
}

/* session_recover_sets - restore want[0..n), each volume read once. */
int session_recover_sets(struct nsr_session_recover *sr,
			 const struct session_want *want, size_t n, int exact,
			 struct nsr_restore_stats *out)
{
	struct rec_set **sets = NULL;
	struct rec_pass *p = malloc(sizeof(*p));
	size_t nsets = 0;
	int failed = 0;

	if (p && nsr_restore_split_new(&sr->split) != NSR_OK) {
		free(p);
		p = NULL;
	}
	if (!p || start_all(sr, want, n, exact, &sets, &nsets)) {
		if (sr->o->message)
			sr->o->message(sr->o->ctx, NSR_SESSION_ERROR,
				       "out of memory");
		failed = 1;
	}
	for (size_t i = 0, j; i < nsets && p; i = j) {
		j = group_end(sr, sets, nsets, i, exact);
		while (pass_plan(sets + i, j - i, p)) {
			pass_run(sr, p);
			for (size_t k = 0; k < p->n; k++)
				if (p->set[k]->other)
					other_copy(sr, p->set[k]);
		}
		/* Every file in place before any directory gets its
		 * metadata: the save sets filled one tree side by side. */
		for (size_t k = i; k < j; k++)
			if (sets[k]->rs && j - i > 1)
				nsr_restore_flush(sets[k]->rs);
		/* a split file whose pieces did not all come is said by
		 * the save set that started it, as one of its errors */
		(void)nsr_restore_split_end(sr->split);
		for (size_t k = i; k < j; k++)
			failed |= set_finish(sr, sets[k]);
	}
	for (size_t i = 0; i < nsets; i++) {
		if (out)
			session_add_stats(out, &sets[i]->st);
		set_free(sets[i]);
		free(sets[i]);
	}
	free(sets);
	free(p);
	nsr_restore_split_free(sr->split);
	sr->split = NULL;
	return failed;
}

/* session_recover_set - one save set (see session_recover_sets). */
int session_recover_set(struct nsr_session_recover *sr, uint32_t ssid,
			const char *const *paths, size_t npaths, int exact,
			struct nsr_restore_stats *out)
{
	struct session_want w = {ssid, paths, npaths, NULL, 0};

	return session_recover_sets(sr, &w, 1, exact, out);
}

/* nsr_session_recover_ssids - restore save sets ssids[0..n) (filtered by
 * paths, if any), in that order, each volume read once for the save
 * sets on it that are restored side by side.  0 if all came back
 * intact, 1 otherwise. */
int nsr_session_recover_ssids(struct nsr_session_recover *sr,
			      const uint32_t *ssids, size_t n,
			      const char *const *paths, size_t npaths,
			      struct nsr_restore_stats *out)
{
	struct session_want *w = calloc(n + 1, sizeof(*w));
	int failed;

	if (!w)
		return 1;
	for (size_t i = 0; i < n; i++) {
		w[i].ssid = ssids[i];
		w[i].paths = paths;
		w[i].npaths = npaths;
	}
	if (out)
		memset(out, 0, sizeof(*out));
	sr->pss_whole = 1;
	failed = session_recover_sets(sr, w, n, 0, out);
	sr->pss_whole = 0;
	free(w);
	return failed;
}

/* nsr_session_recover_ssid - restore save set ssid (filtered by paths,
 * if any).  0 if everything came back intact, 1 otherwise. */
int nsr_session_recover_ssid(struct nsr_session_recover *sr, uint32_t ssid,
			     const char *const *paths, size_t npaths,
			     struct nsr_restore_stats *out)
{
	return nsr_session_recover_ssids(sr, &ssid, 1, paths, npaths, out);
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
	if (rc == NSR_OK)
		rc = session_lease_start(o->server, o->client, &sr->lease,
					 err);
	if (rc != NSR_OK) {
		nsr_nsrd_close(sr->nsrd);
		free(sr);
		return rc;
	}
	*out = sr;
	return NSR_OK;
}

/* nsr_session_recover_copy - pin (or with cloneid 0 unpin) the copy
 * read of save set ssid. */
int nsr_session_recover_copy(struct nsr_session_recover *sr, uint32_t ssid,
			     uint32_t cloneid)
{
	size_t i = 0;

	while (i < sr->npins && sr->want_ssid[i] != ssid)
		i++;
	if (i == sr->npins) {
		if (!cloneid)
			return NSR_OK;
		if (sr->npins == SESSION_PINS_MAX)
			return NSR_ERR_LIMIT;
		sr->npins++;
	}
	sr->want_ssid[i] = ssid;
	sr->want_cloneid[i] = cloneid;
	return NSR_OK;
}

/* nsr_session_recover_close - close and free (NULL is fine). */
void nsr_session_recover_close(struct nsr_session_recover *sr)
{
	if (!sr)
		return;
	session_lease_stop(sr->lease);
	nsr_ixclnt_close(sr->ix);
	nsr_nsrd_close(sr->nsrd);
	free(sr);
}
