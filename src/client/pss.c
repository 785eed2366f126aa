/*
 * pss.c - parallel save streams (pss.h): per save point one traversal
 * thread and one thread per stream, each stream a save session fed from
 * the save point's queue (pss_queue.c), under one limit of active
 * streams over all save points (client parallelism).
 *
 * Invariants (run->mu held):
 *  1. active <= cp: a stream takes from its queue only while it holds
 *     one of cp slots (active), taken for its first object, given back
 *     while its queue has nothing for it yet, when it has nothing more
 *     for it, or when it fails;
 *  2. claimed is the number of streams of started save points whose
 *     session has not ended; a save point of n streams starts only
 *     when claimed + min(n, cp) <= cp, so its sessions find nsrd's
 *     client parallelism free (nsrd counts a session until its
 *     SAVE_END: one started sooner would be queued there and ask again
 *     only after nsrd's retry time, idling its slot meanwhile);
 *  3. a stream leaves its queue exactly once, and gives its claim back
 *     once, when its session has ended;
 *  4. the user's callbacks run one at a time, under mu;
 *  5. the last stream of a save point to reach SAVE_END (every other
 *     one has, or its session is over without a save set) writes the
 *     PSS summary into its job log message, complete or aborted; when
 *     a stream whose SAVE_START failed is the last to end, there is no
 *     job to write it to, and no summary.
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/pss.h"
#include "nsr/saver.h"
#include "nsr/session.h"
#include "nsr/size.h"
#include "nsr/walk.h"

#include "pss_int.h"

#define WINDOW_PER_STREAM 32 /* objects waiting per stream, at most */
#define CLOCK_WAIT_MAX 15    /* seconds to wait for the master's time */

struct pss_run;
struct pss_sp;

struct pss_stream {
	struct pss_sp *sp;
	unsigned index; /* 0 = master */
	char *name;
	struct nsr_session_save_opts so;
	struct nsr_session_feed feed;
	pthread_t thread;
	int thread_started;
	struct pss_item *cur; /* handed to the session */
	int active, left;     /* invariants 1, 3 */
	int claim;	      /* holds a claim (invariants 2, 3) */
	int cut_off;	      /* its queue was aborted (another failed) */
	double vt;	      /* rate knob: when the stream is free again */
	uint64_t reported;    /* stream bytes told to progress */
	uint64_t end_bytes;   /* stream bytes at SAVE_END (invariant 5) */
	int end_rc;	      /* how its save set ended (NSR_OK complete) */
	int noted;	      /* its save set reached SAVE_END */
	int over;	      /* its session is over */
	struct nsr_session_save_result res;
	int rc;
	struct nsr_buf err;
};

struct pss_sp {
	struct pss_run *run;
	const char *path;
	unsigned n;
	struct pss_stream st[NSR_PSS_STREAMS_MAX];
	struct pss_queue q;
	pthread_t walker;
	int walker_started;
	struct nsr_saver *filter; /* level saves: the traversal's filter */
	int walk_rc;
	struct nsr_pss_result *out;
	double t0;	/* when its master started */
};

struct pss_run {
	const struct nsr_pss_opts *o;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned cp, active, claimed;
	double rate; /* test knob: bytes per second per stream, 0 = none */
	uint64_t bytes;
};

/* now_sec - the monotonic clock in seconds. */
static double now_sec(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* trace - the stream callback (mu held). */
static void trace(struct pss_stream *st, int on)
{
	const struct nsr_pss_opts *o = st->sp->run->o;

	if (o->stream)
		o->stream(o->save->ctx, st->sp->path, st->index, on,
			  st->sp->run->active);
}

/* slot_take - wait for one of the cp slots (invariant 1). */
static void slot_take(struct pss_stream *st)
{
	struct pss_run *run = st->sp->run;

	pthread_mutex_lock(&run->mu);
	while (run->active >= run->cp)
		pthread_cond_wait(&run->cv, &run->mu);
	run->active++;
	st->active = 1;
	trace(st, 1);
	pthread_mutex_unlock(&run->mu);
}

/* slot_give - give the slot back, if held. */
static void slot_give(struct pss_stream *st)
{
	struct pss_run *run = st->sp->run;

	pthread_mutex_lock(&run->mu);
	if (st->active) {
		run->active--;
		st->active = 0;
		trace(st, 0);
		pthread_cond_broadcast(&run->cv);
	}
	pthread_mutex_unlock(&run->mu);
}

/* stream_leave - the stream takes nothing more (invariant 3). */
static void stream_leave(struct pss_stream *st)
{
	struct pss_run *run = st->sp->run;
	int first;

	slot_give(st);
	pss_item_free(st->cur);
	st->cur = NULL;
	pthread_mutex_lock(&run->mu);
	first = !st->left;
	st->left = 1;
	pthread_mutex_unlock(&run->mu);
	if (first)
		pss_queue_leave(&st->sp->q, st->index == 0);
}

/* stream_end - the stream's session is over (or never began): it leaves
 * its queue if it has not, and gives its claim back (invariants 2, 3). */
static void stream_end(struct pss_stream *st)
{
	struct pss_run *run = st->sp->run;

	stream_leave(st);
	pthread_mutex_lock(&run->mu);
	st->over = 1;
	if (st->claim) {
		st->claim = 0;
		run->claimed--;
	}
	pthread_cond_broadcast(&run->cv);
	pthread_mutex_unlock(&run->mu);
}

/* throttle - the rate knob: an active stream sends at most rate bytes
 * of file data per second, its own work included (the time it takes to
 * save a file counts against the next one's budget), from when it last
 * became busy (fresh: it waited for a slot or for objects). */
static void throttle(struct pss_stream *st, uint64_t size, int fresh)
{
	double rate = st->sp->run->rate, now, wait;
	struct timespec ts;

	if (rate <= 0)
		return;
	now = now_sec();
	if (fresh || st->vt == 0)
		st->vt = now;
	st->vt += (double)size / rate;
	wait = st->vt - now;
	if (wait <= 0)
		return;
	ts.tv_sec = (time_t)wait;
	ts.tv_nsec = (long)((wait - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* feed_next - a stream's next object: a slot first, then the queue. */
static int feed_next(void *ctx, const struct nsr_walk_ent **e,
		     const struct nsr_saver_part **part)
{
	struct pss_stream *st = ctx;
	int rc, fresh = 0;

	pss_item_free(st->cur);
	st->cur = NULL;
	for (;;) {
		if (!st->active) {
			slot_take(st);
			fresh = 1;
		}
		rc = pss_queue_get(&st->sp->q, st->index == 0, &st->cur);
		if (rc != NSR_ERR_AGAIN)
			break;
		/* Nothing yet: an idle slot would keep another stream of
		 * this or another save point (the master, maybe, whose
		 * objects the traversal waits on) from working. */
		slot_give(st);
		pss_queue_wait(&st->sp->q, st->index == 0);
	}
	if (rc == NSR_ERR_STATE) {
		st->cut_off = 1;
		return NSR_ERR_IO;
	}
	if (rc != NSR_OK)
		return rc;
	throttle(st, st->cur->size, fresh);
	*e = &st->cur->e;
	*part = st->cur->part.nparts ? &st->cur->part : NULL;
	return NSR_OK;
}

/* feed_done - the session reads no more: its slot goes to another. */
static void feed_done(void *ctx, int rc)
{
	NSR_UNUSED(rc);
	stream_leave(ctx);
}

/* w_file - the file callback, one at a time (invariant 4). */
static void w_file(void *ctx, const struct nsr_asm_file *f)
{
	struct pss_stream *st = ctx;
	struct pss_run *run = st->sp->run;

	pthread_mutex_lock(&run->mu);
	run->o->save->file(run->o->save->ctx, f);
	pthread_mutex_unlock(&run->mu);
}

/* w_file_error - the per-file problem callback. */
static void w_file_error(void *ctx, const char *path, int err,
			 const char *what)
{
	struct pss_stream *st = ctx;
	struct pss_run *run = st->sp->run;

	pthread_mutex_lock(&run->mu);
	run->o->save->file_error(run->o->save->ctx, path, err, what);
	pthread_mutex_unlock(&run->mu);
}

/* w_warn - a warning, naming the stream's save set. */
static void w_warn(void *ctx, const char *msg)
{
	struct pss_stream *st = ctx;
	struct pss_run *run = st->sp->run;
	struct nsr_buf b;

	nsr_buf_init(&b, 0);
	nsr_buf_addf(&b, "%s: %s", st->name, msg);
	pthread_mutex_lock(&run->mu);
	run->o->save->warn(run->o->save->ctx, b.data);
	pthread_mutex_unlock(&run->mu);
	nsr_buf_release(&b);
}

/* w_progress - the bytes of all streams together. */
static void w_progress(void *ctx, uint64_t stream_bytes)
{
	struct pss_stream *st = ctx;
	struct pss_run *run = st->sp->run;

	pthread_mutex_lock(&run->mu);
	run->bytes += stream_bytes - st->reported;
	st->reported = stream_bytes;
	if (run->o->stream_bytes)
		run->o->stream_bytes(run->o->save->ctx, st->sp->path, st->index,
				     stream_bytes);
	run->o->save->progress(run->o->save->ctx, run->bytes);
	pthread_mutex_unlock(&run->mu);
}

/* never_write - the filter saver's sink: it writes nothing. */
static int never_write(void *ctx, const void *p, size_t n)
{
	NSR_UNUSED(ctx);
	NSR_UNUSED(p);
	NSR_UNUSED(n);
	return NSR_ERR_STATE;
}

/* put_item - one object of the traversal into the queue; NSR_ERR_STATE
 * once the streams stopped. */
static int put_item(struct pss_sp *sp, struct pss_item *it)
{
	if (pss_queue_put(&sp->q, it) != NSR_OK) {
		pss_item_free(it);
		return NSR_ERR_STATE;
	}
	return NSR_OK;
}

/* put_split - a large file as its head (to the master) and nparts
 * parts of plen bytes (to any stream), pss_int.h. */
static int put_split(struct pss_sp *sp, const struct nsr_walk_ent *e,
		     uint32_t nparts, uint64_t plen)
{
	uint64_t total = (uint64_t)e->st.st_size;
	int rc = NSR_OK;

	for (uint32_t i = 0; i <= nparts && rc == NSR_OK; i++) {
		struct pss_item *it;

		rc = pss_item_new(e, &it);
		if (rc != NSR_OK)
			break;
		it->part.index = i;
		it->part.nparts = nparts;
		it->part.total = total;
		it->part.off = i ? (uint64_t)(i - 1) * plen : 0;
		it->part.len = i ? NSR_MIN(plen, total - it->part.off) : 0;
		it->size = it->part.len;
		it->master = i == 0;
		rc = put_item(sp, it);
	}
	return rc;
}

/* walker_main - the save point's one traversal: what a level save keeps
 * into the queue, in walk order. */
static void *walker_main(void *arg)
{
	struct pss_sp *sp = arg;
	const char *path = sp->path;
	struct nsr_walk *w = NULL;
	const struct nsr_walk_ent *e;
	struct pss_item *it;
	uint64_t part = pss_part_size(), plen;
	int rc = nsr_walk_new(&w, &path, 1, NULL);

	while (rc == NSR_OK && (rc = nsr_walk_next(w, &e)) == NSR_OK) {
		bool skip = false;
		uint32_t nparts = 0;

		if (sp->filter)
			rc = nsr_saver_skip(sp->filter, e, &skip);
		if (rc != NSR_OK || skip)
			continue;
		if (e->type == NSR_ASM_REG && e->err == 0 &&
		    e->st.st_nlink == 1)
			nparts = pss_split_plan((uint64_t)e->st.st_size,
						sp->n, part, &plen);
		if (nparts) {
			rc = put_split(sp, e, nparts, plen);
			continue;
		}
		rc = pss_item_new(e, &it);
		if (rc == NSR_OK)
			rc = put_item(sp, it);
	}
	nsr_walk_free(w);
	if (rc == NSR_ERR_EOF) {
		pss_queue_close(&sp->q);
		rc = NSR_OK;
	} else {
		pss_queue_abort(&sp->q);
	}
	sp->walk_rc = rc == NSR_ERR_STATE ? NSR_OK : rc;
	return NULL;
}

/* last_end - is s the last stream of its save point to reach its end
 * (mu held)?  Every other one has (noted), or its session is over
 * without a save set (it never got one, or its thread never ran). */
static int last_end(const struct pss_stream *s)
{
	const struct pss_sp *sp = s->sp;

	for (unsigned k = 0; k < sp->n; k++) {
		const struct pss_stream *o = &sp->st[k];

		if (o != s && !o->noted && !o->over)
			return 0;
	}
	return 1;
}

/* w_end_note - a stream's save set reaches SAVE_END, complete (rc
 * NSR_OK) or aborted; the last of its save point adds the PSS summary to
 * its job log: streams, bytes per stream and which were aborted, time
 * (invariant 5). */
static void w_end_note(void *ctx, const struct nsr_saver_stats *st, int rc,
		       struct nsr_buf *msg)
{
	struct pss_stream *s = ctx;
	struct pss_sp *sp = s->sp;
	unsigned aborted = 0, made = 0;

	pthread_mutex_lock(&sp->run->mu);
	s->end_bytes = st->stream_bytes;
	s->end_rc = rc;
	s->noted = 1;
	if (last_end(s)) {
		nsr_buf_addf(msg, "; PSS summary of %s: %u streams (client "
			     "parallelism %u), stream bytes", sp->path, sp->n,
			     sp->run->cp);
		for (unsigned k = 0; k < sp->n; k++) {
			const struct pss_stream *o = &sp->st[k];

			made += o->noted;
			aborted += o->noted && o->end_rc != NSR_OK;
			nsr_buf_addf(msg, "%s %s %" PRIu64 "%s", k ? "," : "",
				     o->name, o->end_bytes,
				     !o->noted ? " (no save set)"
				     : o->end_rc != NSR_OK ? " (aborted)" : "");
		}
		nsr_buf_addf(msg, "; %.1f s", now_sec() - sp->t0);
		if (aborted || made < sp->n)
			nsr_buf_addf(msg, "; the save point failed: %u of its "
				     "%u save sets aborted, %u never made",
				     aborted, made, sp->n - made);
	}
	pthread_mutex_unlock(&sp->run->mu);
}

/* stream_opts - the session options of stream index of sp. */
static int stream_opts(struct pss_sp *sp, unsigned index)
{
	const struct nsr_session_save_opts *t = sp->run->o->save;
	struct pss_stream *st = &sp->st[index];
	struct nsr_session_save_opts *so = &st->so;
	struct nsr_buf b;

	nsr_buf_init(&b, 0);
	if (index)
		nsr_buf_addf(&b, "<%u>", index);
	if (nsr_buf_addstr(&b, sp->path) != NSR_OK)
		return NSR_ERR_NOMEM;
	st->name = b.data; /* the buffer's text is the caller's now */
	*so = *t;
	so->name = st->name;
	so->bigasm = 0;
	so->dry_run = 0;
	so->file = t->file ? w_file : NULL;
	so->file_error = t->file_error ? w_file_error : NULL;
	so->warn = t->warn ? w_warn : NULL;
	so->progress = t->progress ? w_progress : NULL;
	so->ctx = st;
	so->pss_streams = index ? 0 : sp->n;
	so->pss_master = 0;
	so->pss_index = index;
	so->started = NULL;
	so->end_note = w_end_note;
	st->feed.next = feed_next;
	st->feed.done = feed_done;
	st->feed.ctx = st;
	st->feed.split = sp->n > 1;
	so->feed = &st->feed;
	return NSR_OK;
}

/* test_dep_delay - the test knob NSR_TEST_PSS_DEP_DELAY_MS (<= 10000):
 * each dependent starts its session that much later, as a slow thread
 * would (its master may be complete by then). */
static void test_dep_delay(void)
{
	nsr_test_pause("NSR_TEST_PSS_DEP_DELAY_MS", 10000);
}

/* dependent_main - one dependent stream's session. */
static void *dependent_main(void *arg)
{
	struct pss_stream *st = arg;

	test_dep_delay();
	st->rc = nsr_session_save(&st->so, NULL, 0, &st->res, &st->err);
	stream_end(st);
	return NULL;
}

/* wait_clock - the traversal begins at or after the master's save time
 * (nsrd may set it a few seconds ahead to keep backups in time order),
 * so a later incr that builds on it misses no change. */
static void wait_clock(int64_t savetime)
{
	for (int i = 0; i < CLOCK_WAIT_MAX * 10 && time(NULL) < savetime; i++)
		usleep(100000);
}

/* never_run - dependents first..end-1 get no thread: their sessions are
 * over before they began (invariant 5). */
static void never_run(struct pss_sp *sp, unsigned first, unsigned end)
{
	pthread_mutex_lock(&sp->run->mu);
	for (unsigned k = first; k < end; k++)
		sp->st[k].over = 1;
	pthread_mutex_unlock(&sp->run->mu);
}

/* on_started - the master has its save set: the level and save time of
 * the group are known; the traversal and the dependents start. */
static void on_started(void *ctx, const struct nsr_session_save_result *r)
{
	struct pss_stream *m = ctx;
	struct pss_sp *sp = m->sp;

	wait_clock(r->savetime);
	if (r->since) {
		struct nsr_saver_opts fo;
		struct nsr_saver_cb cb;

		memset(&fo, 0, sizeof(fo));
		memset(&cb, 0, sizeof(cb));
		fo.client = m->so.client;
		fo.name = m->so.name;
		fo.since.tv_sec = (time_t)r->since;
		cb.write = never_write;
		if (nsr_saver_new(&sp->filter, &fo, &cb) != NSR_OK) {
			sp->walk_rc = NSR_ERR_NOMEM;
			pss_queue_abort(&sp->q);
			never_run(sp, 1, sp->n);
			return;
		}
	}
	if (pthread_create(&sp->walker, NULL, walker_main, sp) != 0) {
		sp->walk_rc = NSR_ERR_SYSTEM;
		pss_queue_abort(&sp->q);
		never_run(sp, 1, sp->n);
		return;
	}
	sp->walker_started = 1;
	for (unsigned k = 1; k < sp->n; k++) {
		struct pss_stream *d = &sp->st[k];

		d->so.pss_master = r->ssid;
		if (pthread_create(&d->thread, NULL, dependent_main, d) == 0)
			d->thread_started = 1;
		else
			never_run(sp, k, k + 1);
	}
}

/* first_failure - the stream whose failure says why (one that stopped
 * only because another failed says nothing new). */
static const struct pss_stream *first_failure(const struct pss_sp *sp)
{
	const struct pss_stream *any = NULL;

	for (unsigned k = 0; k < sp->n; k++) {
		const struct pss_stream *st = &sp->st[k];

		if (st->rc == NSR_OK)
			continue;
		if (!st->cut_off)
			return st;
		if (!any)
			any = st;
	}
	return any;
}

/* collect - the save point's outcome. */
static void collect(struct pss_sp *sp)
{
	struct nsr_pss_result *out = sp->out;
	const struct pss_stream *bad = first_failure(sp);
	struct nsr_saver_stats fs;

	out->streams = sp->n;
	out->master = sp->st[0].res;
	memset(&out->master.st, 0, sizeof(out->master.st));
	for (unsigned k = 0; k < sp->n; k++) {
		nsr_saver_stats_add(&out->master.st, &sp->st[k].res.st);
		if (k)
			out->dependents[k - 1] = sp->st[k].res.ssid;
	}
	if (sp->filter) {
		nsr_saver_stats(sp->filter, &fs);
		out->master.st.unchanged += fs.unchanged;
	}
	if (bad) {
		out->rc = bad->rc;
		snprintf(out->err, sizeof(out->err), "%s: %s", bad->name,
			 bad->err.len ? bad->err.data : nsr_strerror(bad->rc));
	} else if (sp->walk_rc != NSR_OK) {
		out->rc = sp->walk_rc;
		snprintf(out->err, sizeof(out->err), "%s: the traversal "
			 "failed: %s", sp->path, nsr_strerror(sp->walk_rc));
	}
}

/* master_main - a save point: the master's session (which starts the
 * rest), then wait for the traversal and the dependents. */
static void *master_main(void *arg)
{
	struct pss_sp *sp = arg;
	struct pss_stream *m = &sp->st[0];

	sp->t0 = now_sec();
	m->rc = nsr_session_save(&m->so, NULL, 0, &m->res, &m->err);
	stream_end(m);
	if (sp->walker_started)
		pthread_join(sp->walker, NULL);
	for (unsigned k = 1; k < sp->n; k++) {
		if (sp->st[k].thread_started)
			pthread_join(sp->st[k].thread, NULL);
		else
			stream_end(&sp->st[k]);
		if (!sp->st[k].thread_started && sp->st[k].rc == NSR_OK &&
		    m->rc == NSR_OK) {
			sp->st[k].rc = NSR_ERR_SYSTEM;
			nsr_buf_addstr(&sp->st[k].err,
				       "cannot start the stream's thread");
		}
	}
	collect(sp);
	return NULL;
}

/* sp_init - a save point's streams and queue. */
static int sp_init(struct pss_run *run, struct pss_sp *sp, const char *path,
		   struct nsr_pss_result *out)
{
	int rc;

	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", path);
	sp->run = run;
	sp->path = path;
	sp->out = out;
	sp->n = nsr_pssspec_streams(run->o->spec, path);
	for (unsigned k = 0; k < sp->n; k++) {
		sp->st[k].sp = sp;
		sp->st[k].index = k;
		nsr_buf_init(&sp->st[k].err, 0);
		rc = stream_opts(sp, k);
		if (rc != NSR_OK)
			return rc;
	}
	sp->st[0].so.started = on_started;
	return pss_queue_init(&sp->q, WINDOW_PER_STREAM * sp->n, sp->n);
}

/* sp_free - free a save point's resources. */
static void sp_free(struct pss_sp *sp)
{
	for (unsigned k = 0; k < sp->n; k++) {
		free(sp->st[k].name);
		nsr_buf_release(&sp->st[k].err);
	}
	nsr_saver_free(sp->filter);
	pss_queue_destroy(&sp->q);
}

/* test_rate - the NSR_TEST_PSS_RATE knob, bytes per second (0 = none). */
static double test_rate(void)
{
	const char *e = getenv("NSR_TEST_PSS_RATE");
	long long v = 0;

	if (!e || !*e || nsr_size_parse(e, &v) != NSR_OK || v <= 0)
		return 0;
	return (double)v;
}

/* nsr_pss_save - the save points, each with its streams, under cp. */
int nsr_pss_save(const struct nsr_pss_opts *o, char *const *sps, size_t n,
		 struct nsr_pss_result *res)
{
	struct pss_run run;
	struct pss_sp *sp;
	size_t started = 0;
	int rc = NSR_OK;

	if (!o || !o->save || !sps || n == 0 || !res)
		return NSR_ERR_INVAL;
	sp = calloc(n, sizeof(*sp));
	if (!sp)
		return NSR_ERR_NOMEM;
	memset(&run, 0, sizeof(run));
	run.o = o;
	run.cp = o->parallelism ? o->parallelism : NSR_PSS_STREAMS_DEFAULT;
	run.rate = test_rate();
	pthread_mutex_init(&run.mu, NULL);
	pthread_cond_init(&run.cv, NULL);
	for (size_t i = 0; i < n && rc == NSR_OK; i++)
		rc = sp_init(&run, &sp[i], sps[i], &res[i]);
	/* Save points start in order, when their streams' sessions find
	 * room (invariant 2). */
	for (size_t i = 0; i < n && rc == NSR_OK; i++) {
		pthread_mutex_lock(&run.mu);
		while (run.claimed + NSR_MIN(sp[i].n, run.cp) > run.cp)
			pthread_cond_wait(&run.cv, &run.mu);
		run.claimed += sp[i].n;
		for (unsigned k = 0; k < sp[i].n; k++)
			sp[i].st[k].claim = 1;
		pthread_mutex_unlock(&run.mu);
		if (pthread_create(&sp[i].st[0].thread, NULL, master_main,
				   &sp[i]) != 0) {
			for (unsigned k = 0; k < sp[i].n; k++)
				stream_end(&sp[i].st[k]);
			rc = NSR_ERR_SYSTEM;
			break;
		}
		started++;
	}
	for (size_t i = 0; i < started; i++) {
		pthread_join(sp[i].st[0].thread, NULL);
		if (rc == NSR_OK && res[i].rc != NSR_OK)
			rc = res[i].rc;
	}
	for (size_t i = 0; i < n; i++)
		sp_free(&sp[i]);
	free(sp);
	pthread_cond_destroy(&run.cv);
	pthread_mutex_destroy(&run.mu);
	return rc;
}
