/*
 * session.c - the client's session driver (session.h): one save set from
 * SAVE_START to SAVE_END, over the nsrd, nsrmmd and nsrindexd client
 * libraries.  It owns the order that makes a save crash-consistent:
 * durable on the volume, then the index committed, then complete at nsrd;
 * and the lease renewals that tell nsrd this client is alive.
 *
 * Renewals come from a thread of their own with a connection of its own
 * (lease.c, shared with the recover driver), so a save that writes
 * nothing for a long time (a walk over unchanged files, a slow source)
 * keeps its lease; the stream's thread only reads what the renewer found
 * (settled, a warning).
 */
#include "nsr/compat.h"

#include <poll.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/cfi.h"
#include "nsr/err.h"
#include "nsr/index_clnt.h"
#include "nsr/mmd_clnt.h"
#include "nsr/nsrd_clnt.h"
#include "nsr/peer.h"
#include "nsr/rpc.h"
#include "nsr/runcmd.h"
#include "nsr/saver.h"
#include "nsr/session.h"

#include "session_int.h"

/* The progress callback hears of every this many stream bytes. */
#define PROGRESS_EVERY (4u << 20)
/* A pipeline command's stderr in messages to nsrd (the job log): the
 * last this many bytes (the RPC message holds 4 KB). */
#define PIPE_ERR_SHOWN 2048

struct save_run {
	const struct nsr_session_save_opts *o;
	struct nsr_nsrd *nsrd;
	const save_start_res *ss;
	struct session_lease *lease; /* lease.c: renews the session */
	struct nsr_mmd *mmd;
	struct nsr_ixclnt *ix;
	int index_lost;	/* nsrindexd went away: data goes on, browse won't */
	int stalled;	/* the test stall happened */
	char index_err[256];
	char mmd_err[1024]; /* why the stream to the mover failed */
	unsigned wait_kind; /* what SAVE_START last waited for */
	uint64_t streamed, progress_at; /* stream bytes; next progress */
	struct nsr_buf pipe_msg; /* how a pipeline command ended */
	struct session_xform xf; /* --encrypt, --compress */
};

/* warn_cb - a non-fatal problem, through the caller's callback. */
static void warn_cb(const struct save_run *s, const char *msg)
{
	if (s->o->warn)
		s->o->warn(s->o->ctx, msg);
}

/* renewed - what the lease renewer found: a warning goes to the caller
 * (from this thread), and NSR_ERR_STATE once nsrd settled the save set. */
static int renewed(struct save_run *s)
{
	char warn[512];
	int settled = session_lease_check(s->lease, 0, warn, sizeof(warn));

	if (warn[0])
		warn_cb(s, warn);
	return settled ? NSR_ERR_STATE : NSR_OK;
}

/* to_mover - the saver's sink: stream bytes to nsrmmd. */
static int to_mover(void *arg, const void *p, size_t n)
{
	struct save_run *s = arg;
	int rc;

	s->streamed += n;
	if (s->o->progress && s->streamed >= s->progress_at) {
		s->o->progress(s->o->ctx, s->streamed);
		s->progress_at = s->streamed + PROGRESS_EVERY;
	}
	if (!s->mmd)
		return NSR_OK; /* dry run */
	if (renewed(s) != NSR_OK)
		return NSR_ERR_STATE;
	rc = nsr_mmd_ss_write(s->mmd, p, n);
	if (rc != NSR_OK && !s->mmd_err[0])
		snprintf(s->mmd_err, sizeof(s->mmd_err), "%s",
			 nsr_mmd_errmsg(s->mmd));
	return rc;
}

/* nsr_session_next_volume - NEXT_VOLUME at nsrd, as a span function's
 * answer (host "" from nsrd means the server's own). */
int nsr_session_next_volume(struct nsr_nsrd *d, const char *server,
			    uint32_t ssid, const char *pool,
			    const uint8_t full_volid[16],
			    struct nsr_mmd_next *nx, struct nsr_buf *err)
{
	next_vol_args a;
	next_vol_res r;
	int rc;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.ssid = ssid;
	a.pool = (char *)pool;
	memcpy(a.exclude, full_volid, sizeof(a.exclude));
	rc = nsr_nsrd_next_volume(d, &a, &r);
	if (rc != NSR_OK) {
		nsr_buf_addstr(err, nsr_nsrd_errmsg(d));
	} else {
		snprintf(nx->host, sizeof(nx->host), "%s",
			 r.mover_host[0] ? r.mover_host : server);
		nx->port = r.mover_port;
		memcpy(nx->volid, r.volid, sizeof(nx->volid));
		snprintf(nx->volume, sizeof(nx->volume), "%s", r.volume);
	}
	xdr_free(NSR_XDR(xdr_next_vol_res), (char *)&r);
	return rc;
}

/* next_volume - the save's span function. */
static int next_volume(void *ctx, uint32_t ssid, const char *pool,
		       const uint8_t full_volid[16], struct nsr_mmd_next *nx,
		       struct nsr_buf *err)
{
	struct save_run *s = ctx;

	return nsr_session_next_volume(s->nsrd, s->o->server, ssid, pool,
				       full_volid, nx, err);
}

/* test_stall - the test knob NSR_TEST_SAVE_STALL_SEC (<= 600): once,
 * after the first file, write nothing for that long, as a walk over
 * unchanged files or a slow source does. */
static void test_stall(struct save_run *s)
{
	const char *e = getenv("NSR_TEST_SAVE_STALL_SEC");
	long sec = e && *e ? strtol(e, NULL, 10) : 0;

	if (s->stalled || sec <= 0 || sec > 600)
		return;
	s->stalled = 1;
	sleep((unsigned)sec);
}

/* test_exit - the test knob NSR_TEST_SAVE_EXIT_BEFORE_END: once the data
 * is durable and the index committed, exit without telling nsrd, as a
 * client killed at that point (nsrd settles the save set from what the
 * mover recorded). */
static void test_exit(int rc)
{
	const char *e = getenv("NSR_TEST_SAVE_EXIT_BEFORE_END");

	if (rc == NSR_OK && e && *e)
		_exit(9);
}

/* index_failed - the index is bookkeeping for browsing: losing it must
 * not lose the backup.  The data goes on; finish() says so. */
static void index_failed(struct save_run *s)
{
	s->index_lost = 1;
	snprintf(s->index_err, sizeof(s->index_err), "%s",
		 nsr_ixclnt_errmsg(s->ix));
	warn_cb(s, "the file index connection failed; the save goes on "
		"without index entries");
}

/* to_index - one index entry per saved file. */
static int to_index(void *arg, const struct nsr_asm_file *f, uint64_t off)
{
	struct save_run *s = arg;
	struct nsr_cfi_entry e;

	test_stall(s);

	if (s->o->file)
		s->o->file(s->o->ctx, f);
	if (!s->ix || s->index_lost)
		return NSR_OK;
	if (!nsr_cfi_entry_from_file(&e, f, off))
		return NSR_OK;
	if (nsr_ixclnt_add(s->ix, &e) != NSR_OK)
		index_failed(s);
	return NSR_OK;
}

/* to_index_list - a directory's entry list to the index. */
static int to_index_list(void *arg, const char *dir,
			 const char *const *names, size_t n)
{
	struct save_run *s = arg;

	if (!s->ix || s->index_lost)
		return NSR_OK;
	if (nsr_ixclnt_add_list(s->ix, dir, names, n) != NSR_OK)
		index_failed(s);
	return NSR_OK;
}

/* on_file_error - a per-file problem: to the caller; the save goes on. */
static void on_file_error(void *arg, const char *path, int err,
			  const char *what)
{
	struct save_run *s = arg;

	if (s->o->file_error)
		s->o->file_error(s->o->ctx, path, err, what);
}

/* wait_turn - nsrd said "not yet" (queued, or a mount request): tell
 * the caller when the reason changes, wait the time nsrd asked, and keep
 * the ticket for the next SAVE_START. */
static int wait_turn(struct save_run *s, save_start_args *a,
		     save_start_res *ss)
{
	unsigned retry_ms = ss->retry_ms;

	if (ss->ticket == 0)
		return NSR_ERR_PROTO;
	if (a->ticket == 0 || ss->wait_kind != s->wait_kind) {
		char line[1200];

		snprintf(line, sizeof(line), "waiting: %s",
			 nsr_nsrd_errmsg(s->nsrd));
		warn_cb(s, line);
	}
	s->wait_kind = ss->wait_kind;
	a->ticket = ss->ticket;
	xdr_free(NSR_XDR(xdr_save_start_res), (char *)ss);
	memset(ss, 0, sizeof(*ss));
	session_pause(retry_ms);
	return NSR_OK;
}

/* session_pause - wait the retry time nsrd gave, within 0.1 .. 10 s. */
void session_pause(unsigned retry_ms)
{
	poll(NULL, 0, (int)NSR_MIN(NSR_MAX(retry_ms, 100u), 10000u));
}

/* start - SAVE_START at nsrd. */
static int start(struct save_run *s, save_start_res *ss, struct nsr_buf *err)
{
	const struct nsr_session_save_opts *o = s->o;
	save_start_args a;
	int rc;

	rc = nsr_nsrd_open(o->server, &s->nsrd, err);
	if (rc != NSR_OK)
		return rc;
	/* A restarting nsrd is waited for at the end of the save. */
	nsr_nsrd_set_wait(s->nsrd, nsr_peer_wait_default());
	rc = session_xform(s->nsrd, o, &s->xf, err); /* before the save set */
	if (rc != NSR_OK)
		return rc;
	memset(&a, 0, sizeof(a));
	a.client = (char *)o->client;
	a.name = (char *)o->name;
	a.level = (char *)(o->level ? o->level : "");
	a.pool = (char *)(o->pool ? o->pool : "");
	a.group = (char *)(o->group ? o->group : "");
	a.savetime = time(NULL);
	a.browse_time = o->browse_time;
	a.retention_time = o->retention_time;
	a.pid = getpid();
	a.command = (char *)(o->command ? o->command : "");
	a.pss_streams = o->pss_streams;
	a.pss_master = o->pss_master;
	a.pss_index = o->pss_index;
	for (;;) {
		rc = nsr_nsrd_save_start(s->nsrd, &a, ss);
		if (rc != NSR_ERR_WAIT)
			break;
		rc = wait_turn(s, &a, ss);
		if (rc != NSR_OK)
			break;
	}
	if (rc != NSR_OK)
		nsr_buf_addstr(err, nsr_nsrd_errmsg(s->nsrd));
	return rc;
}

/* The index session, begun on a thread of its own while the mover's
 * fragment begins: each costs several round trips (locator, TCP, TLS,
 * the first call), which on a long link add up if taken one after the
 * other. */
struct ix_opener {
	const char *server, *client, *name;
	uint64_t ssid;
	int64_t savetime;
	struct nsr_ixclnt *ix; /* open (begun or not), or NULL */
	int rc;
	char err[1024];
};

/* ix_open_main - locate nsrindexd, connect, IX_BEGIN (thread body). */
static void *ix_open_main(void *arg)
{
	struct ix_opener *x = arg;
	struct nsr_buf err;

	nsr_buf_init(&err, 0);
	x->rc = nsr_ixclnt_open(x->server, &x->ix, &err);
	if (x->rc == NSR_OK) {
		x->rc = nsr_ixclnt_begin(x->ix, x->client, x->ssid,
					 x->savetime, x->name);
		if (x->rc != NSR_OK)
			nsr_buf_addstr(&err, nsr_ixclnt_errmsg(x->ix));
	}
	snprintf(x->err, sizeof(x->err), "%s", err.len ? err.data : "");
	nsr_buf_release(&err);
	return NULL;
}

/* mmd_open - connect to the mover nsrd chose and begin the fragment. */
static int mmd_open(struct save_run *s, struct nsr_buf *err)
{
	const struct nsr_session_save_opts *o = s->o;
	const save_start_res *ss = s->ss;
	struct nsr_vol_sshdr hdr;
	int rc;

	rc = nsr_mmd_connect(ss->mover_host[0] ? ss->mover_host : o->server,
			     ss->mover_port, &s->mmd, err);
	if (rc != NSR_OK) {
		nsr_buf_addstr(err, " (the data mover nsrd chose)");
		return rc;
	}
	nsr_mmd_set_span_fn(s->mmd, next_volume, s);
	nsr_mmd_grant(s->mmd, &ss->grant);
	if (o->stripes)
		nsr_mmd_set_stripes(s->mmd, o->stripes);
	memset(&hdr, 0, sizeof(hdr));
	hdr.ssid = ss->ssid;
	memcpy(hdr.longid, ss->longid, 16);
	snprintf(hdr.client, sizeof(hdr.client), "%s", o->client);
	snprintf(hdr.name, sizeof(hdr.name), "%s", o->name);
	snprintf(hdr.level, sizeof(hdr.level), "%s",
		 ss->level[0] ? ss->level
		 : o->level && o->level[0] ? o->level : "manual");
	snprintf(hdr.pool, sizeof(hdr.pool), "%s", ss->pool);
	hdr.savetime = ss->savetime;
	hdr.browse_time = ss->browse_time;
	hdr.retention_time = ss->retention_time;
	return nsr_mmd_ss_begin(s->mmd, &hdr, (const uint8_t *)ss->volid,
				NULL, err);
}

/* open_paths - the mover's fragment and, at the same time, the index
 * session (on this thread if no other can start).  An index begun for a
 * save that then fails is aborted by the caller, as s->ix is set. */
static int open_paths(struct save_run *s, struct nsr_buf *err)
{
	struct ix_opener x = {.server = s->o->server,
			      .client = s->o->client,
			      .name = s->o->name,
			      .ssid = s->ss->ssid,
			      .savetime = s->ss->savetime};
	pthread_t tid;
	int started = 0, rc;

	if (!s->o->no_index)
		started = pthread_create(&tid, NULL, ix_open_main, &x) == 0;
	rc = mmd_open(s, err);
	if (started)
		pthread_join(tid, NULL);
	else if (rc == NSR_OK && !s->o->no_index)
		ix_open_main(&x);
	s->ix = x.ix;
	if (rc == NSR_OK && x.rc != NSR_OK && !s->o->no_index) {
		nsr_buf_addstr(err, x.err);
		rc = x.rc;
	}
	return rc;
}

/* feed_all - every object of the session's feed into the saver. */
static int feed_all(struct save_run *s, struct nsr_saver *sv)
{
	const struct nsr_session_feed *f = s->o->feed;
	const struct nsr_walk_ent *e = NULL;
	const struct nsr_saver_part *part = NULL;
	int rc;

	while ((rc = f->next(f->ctx, &e, &part)) == NSR_OK)
		if ((rc = part ? nsr_saver_add_part(sv, e, part)
			       : nsr_saver_add_entry(sv, e)) != NSR_OK)
			break;
	if (rc == NSR_ERR_EOF)
		rc = NSR_OK;
	if (f->done)
		f->done(f->ctx, rc);
	return rc;
}

/* pipe_source - a pipeline save: the command's standard output (or
 * this process's standard input) through the saver; then the command's
 * end: its stderr to the caller, how it ended in s->pipe_msg, and a
 * failure of the command as the save's (err says why). */
static int pipe_source(struct save_run *s, struct nsr_saver *sv,
		       struct nsr_session_save_result *r, struct nsr_buf *err)
{
	const struct nsr_session_save_opts *o = s->o;
	struct nsr_runcmd *cmd = NULL;
	struct nsr_runcmd_status st;
	int rc, wrc, e;

	if (o->pipe_argv == NULL) {
		rc = nsr_saver_add_pipe(sv, o->pipe, 0, o->pipe_read);
		if (rc == NSR_ERR_IO)
			nsr_buf_addf(err, "cannot read the standard input: %s",
				     strerror(errno));
		return rc;
	}
	rc = nsr_runcmd_start(&cmd, o->pipe_argv, NSR_RUNCMD_READ, err);
	if (rc != NSR_OK)
		return rc;
	rc = nsr_saver_add_pipe(sv, o->pipe, nsr_runcmd_fd(cmd), o->pipe_read);
	e = errno;
	/* closes the pipe first: a command still writing (the save failed)
	 * gets EPIPE and ends */
	wrc = nsr_runcmd_wait(cmd, &st);
	if (st.err_len > 0 && o->pipe_stderr)
		o->pipe_stderr(o->ctx, st.err, st.err_len);
	nsr_runcmd_describe(o->pipe_argv[0], &st, 0, &s->pipe_msg);
	snprintf(r->pipe_end, sizeof(r->pipe_end), "%s", s->pipe_msg.data);
	nsr_buf_reset(&s->pipe_msg);
	nsr_runcmd_describe(o->pipe_argv[0], &st, PIPE_ERR_SHOWN,
			    &s->pipe_msg);
	if (rc == NSR_ERR_IO)
		nsr_buf_addf(err, "cannot read the output of %s: %s",
			     o->pipe_argv[0], strerror(e));
	else if (rc == NSR_OK && wrc == NSR_ERR_SYSTEM)
		nsr_buf_addf(err, "cannot wait for %s: %s", o->pipe_argv[0],
			     strerror(errno));
	else if (rc == NSR_OK && wrc != NSR_OK)
		nsr_buf_addf(err, "the save set is not complete: %s",
			     s->pipe_msg.data);
	if (rc == NSR_OK)
		rc = wrc;
	nsr_runcmd_free(cmd);
	return rc;
}

/* stream - walk the paths through a saver into the mover. */
static int stream(struct save_run *s, char *const *paths, size_t npaths,
		  struct nsr_session_save_result *r, struct nsr_buf *err)
{
	struct nsr_saver_opts so;
	struct nsr_saver_cb cb;
	struct nsr_saver *sv = NULL;
	size_t err_len = err->len;
	int rc;

	memset(&so, 0, sizeof(so));
	memset(&cb, 0, sizeof(cb));
	so.client = s->o->client;
	so.name = s->o->name;
	so.savetime = s->ss ? s->ss->savetime : time(NULL);
	so.ssid = s->ss ? s->ss->ssid : 0;
	so.since.tv_sec = s->ss ? (time_t)s->ss->since : 0;
	so.pss_master = s->o->pss_master;
	so.pss_index = s->o->pss_index;
	cb.write = to_mover;
	cb.write_ctx = s;
	cb.index = to_index;
	cb.index_ctx = s;
	cb.list = to_index_list;
	cb.list_ctx = s;
	cb.error = on_file_error;
	cb.error_ctx = s;
	/* A feed's objects were filtered by whoever walked them (a
	 * stream may get them out of walk order). */
	so.prefiltered = s->o->feed != NULL;
	so.split = s->o->feed != NULL && s->o->feed->split;
	if (s->o->dry_run)
		(void)session_xform(NULL, s->o, &s->xf, err);
	so.xform = s->xf.on ? &s->xf.xf : NULL;
	rc = nsr_saver_new(&sv, &so, &cb);
	if (rc == NSR_OK && s->o->feed)
		rc = feed_all(s, sv);
	else if (rc == NSR_OK && s->o->pipe)
		rc = pipe_source(s, sv, r, err);
	for (size_t i = 0; rc == NSR_OK && !s->o->feed && !s->o->pipe &&
			   i < npaths; i++)
		rc = s->o->bigasm
			     ? nsr_saver_add_generated(sv, paths[i],
						       s->o->bigasm)
			     : nsr_saver_add_path(sv, paths[i]);
	if (rc == NSR_OK)
		rc = nsr_saver_finish(sv);
	if (sv)
		nsr_saver_stats(sv, &r->st);
	nsr_saver_free(sv);
	if (rc != NSR_OK && err->len == err_len)
		nsr_buf_addf(err, "save stream failed: %s",
			     s->mmd_err[0] ? s->mmd_err
			     : rc == NSR_ERR_STATE
				     ? "the server settled the save set while "
				       "this client could not reach it"
				     : nsr_strerror(rc));
	return rc;
}

/* finish - durable on the volume, then the index, then complete.  An
 * index that could not be committed after the data was durable leaves
 * the save set complete but not browsable (*noindex). */
static int finish(struct save_run *s, const struct nsr_saver_stats *st,
		  int *noindex, struct nsr_buf *err)
{
	struct nsr_vol_sstail tail = {
		.bytes = st->stream_bytes,
		.files = st->files,
		.status = st->errors ? NSR_VOL_SS_SUSPECT : NSR_VOL_SS_OK};
	struct nsr_vol_frag frag;
	int rc;

	rc = nsr_mmd_ss_end(s->mmd, &tail, &frag, err);
	if (rc != NSR_OK)
		return rc;
	if (s->o->no_index) {
		*noindex = 1; /* asked for: complete, not browsable */
		return NSR_OK;
	}
	rc = s->index_lost ? NSR_ERR_RPC : nsr_ixclnt_commit(s->ix);
	if (rc != NSR_OK) {
		nsr_buf_addf(err, "the data of save set %u is on its volume, "
			     "but its file index entries were lost (%s): it "
			     "can be recovered with recover -S %u, not "
			     "browsed", s->ss->ssid,
			     s->index_lost ? s->index_err
					   : nsr_ixclnt_errmsg(s->ix),
			     s->ss->ssid);
		*noindex = 1;
	}
	return rc;
}

/* save_end - report the outcome to nsrd. */
static int save_end(struct save_run *s, int status, uint64_t size,
		    uint64_t files, const char *msg, struct nsr_buf *err)
{
	save_end_args a;
	nsr_void_res r;
	char text[3072];
	int rc;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.ssid = s->ss->ssid;
	a.jobid = s->ss->jobid;
	a.status = status;
	a.totalsize = size;
	a.nfiles = files;
	/* within the RPC's bound, and a job log line's */
	snprintf(text, sizeof(text), "%s", msg ? msg : "");
	a.msg = text;
	rc = nsr_nsrd_save_end(s->nsrd, &a, &r);
	if (rc != NSR_OK && err)
		nsr_buf_addstr(err, nsr_nsrd_errmsg(s->nsrd));
	xdr_free(NSR_XDR(xdr_nsr_void_res), (char *)&r);
	return rc;
}

/* end_msg - SAVE_END's message for the job log of a complete save set:
 * the read size in use at the end, the files not saved whole by reason
 * and those that changed while they were read (the summary's figures;
 * files, bytes and times are the job's own), how a pipeline command
 * ended (s->pipe_msg, which this replaces) and the caller's note. */
static void end_msg(struct save_run *s, const struct nsr_saver_stats *st)
{
	struct nsr_buf m;

	nsr_buf_init(&m, 0);
	nsr_buf_addf(&m, "read size %zu KB", st->last_read_size / 1024);
	nsr_saver_problems_text(st, "; ", &m);
	if (s->pipe_msg.len)
		nsr_buf_addf(&m, "; %s", s->pipe_msg.data);
	if (s->o->end_note)
		s->o->end_note(s->o->ctx, st, NSR_OK, &m);
	nsr_buf_release(&s->pipe_msg);
	s->pipe_msg = m;
}

/* fail_end - SAVE_END (status) of a save set that failed with rc:
 * aborted, with the reason in err and the caller's note (end_note) in
 * the job log. */
static int fail_end(struct save_run *s, const struct nsr_saver_stats *st,
		    int rc, int status, const struct nsr_buf *err)
{
	struct nsr_buf m;
	int end;

	nsr_buf_init(&m, 0);
	nsr_buf_addstr(&m, err->len ? err->data : nsr_strerror(rc));
	if (s->o->end_note)
		s->o->end_note(s->o->ctx, st, rc, &m);
	end = save_end(s, status, 0, 0, m.data ? m.data : "", NULL);
	nsr_buf_release(&m);
	return end;
}

/* nsr_session_save - one save set, start to settled. */
int nsr_session_save(const struct nsr_session_save_opts *o,
		     char *const *paths, size_t npaths,
		     struct nsr_session_save_result *r, struct nsr_buf *err)
{
	struct save_run s;
	save_start_res ss;
	int rc, end;

	memset(r, 0, sizeof(*r));
	memset(&s, 0, sizeof(s));
	memset(&ss, 0, sizeof(ss));
	s.o = o;
	if (!o->server || !o->client || !o->name ||
	    (npaths == 0 && !o->feed))
		return NSR_ERR_INVAL;
	nsr_buf_init(&s.pipe_msg, 0);
	if (o->dry_run) {
		rc = stream(&s, paths, npaths, r, err);
		goto out;
	}

	rc = start(&s, &ss, err);
	if (rc != NSR_OK)
		goto out;
	s.ss = &ss;
	rc = session_lease_start(o->server, o->client ? o->client : "",
				 &s.lease, err);
	if (rc == NSR_OK)
		rc = session_lease_add(s.lease, ss.jobid, ss.ssid);
	if (rc != NSR_OK) {
		r->told_server = fail_end(&s, &r->st, rc, NSR_ERR_SYSTEM,
					  err) == NSR_OK;
		goto out;
	}
	r->ssid = ss.ssid;
	r->savetime = ss.savetime;
	snprintf(r->pool, sizeof(r->pool), "%s", ss.pool);
	snprintf(r->level, sizeof(r->level), "%s", ss.level);
	r->since = ss.since;
	r->since_ssid = ss.since_ssid;
	if (ss.level_msg[0])
		warn_cb(&s, ss.level_msg);
	if (o->started)
		o->started(o->ctx, r);
	rc = open_paths(&s, err);
	if (rc == NSR_OK)
		rc = stream(&s, paths, npaths, r, err);
	if (rc == NSR_OK)
		rc = finish(&s, &r->st, &r->no_index, err);
	test_exit(rc);
	if (rc == NSR_OK || r->no_index) {
		end_msg(&s, &r->st);
		end = save_end(&s, r->no_index ? SAVE_END_NOINDEX : 0,
			       r->st.stream_bytes, r->st.files,
			       s.pipe_msg.data, err);

		/* NSR_ERR_STATE: nsrd had settled it (aborted) already. */
		r->told_server = end == NSR_OK || end == NSR_ERR_STATE;
		if (rc == NSR_OK)
			rc = end;
		goto out;
	}
	/* Failed after the save set was made: abort it with the reason.
	 * NSR_ERR_STATE: nsrd settled it (aborted) already, which is why
	 * the mover went away (it said so only if a renewal heard it). */
	if (s.ix)
		nsr_ixclnt_abort(s.ix);
	end = fail_end(&s, &r->st, rc, NSR_ERR_IO, err);
	if (end == NSR_ERR_STATE && !strstr(err->data, "settled"))
		nsr_buf_addstr(err, " (the server had settled the save set "
				    "already: it heard nothing from this "
				    "client within its lease)");
	r->told_server = end == NSR_OK || end == NSR_ERR_STATE;
out:
	session_lease_stop(s.lease);
	r->encrypted = s.xf.xf.key != NULL;
	if (s.mmd)
		r->stripes = nsr_mmd_stripes(s.mmd);
	nsr_mmd_close(s.mmd);
	nsr_ixclnt_close(s.ix);
	nsr_nsrd_close(s.nsrd);
	xdr_free(NSR_XDR(xdr_save_start_res), (char *)&ss);
	nsr_buf_release(&s.pipe_msg);
	session_xform_wipe(&s.xf);
	return rc;
}
