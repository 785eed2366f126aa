/*
 * query.c - MM_QUERY_OPEN / MM_QUERY_NEXT: mminfo queries evaluated on the
 * server and streamed in bounded batches.
 *
 * Owns the per-connection query state: the parsed query (the cursor
 * points into it) and the engine cursor.  The state lives in the
 * connection's data slot and in the g_mmdbd.queries list, so the stop path
 * can end every cursor before the database is closed, and the tick can
 * end cursors left idle (an open cursor holds back the engine's log
 * cleanup, so a forgotten one must not live forever).  Memory per
 * connection is one parsed query plus one batch, however many rows match.
 *
 * A query returns only the save set rows its caller may read (authz.c);
 * volumes are not filtered.
 *
 * Locking order: g_mmdbd.life, then g_mmdbd.qlock, then a query's mu.
 * q->mu guards the query's fields; handlers of the connection and the
 * idle reaper take it.
 */
#include "nsr/compat.h"

#include <time.h>

#include "nsr/err.h"
#include "nsr/log.h"
#include "nsr/mmdb.h"
#include "nsr/mmdb_clnt.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsrmmdb.h"
#include "nsr/xmalloc.h"
#include "mmdbd.h"
#include "qparse.h"

#define IDLE_DEFAULT 600 /* seconds a cursor may wait for the next batch */

struct mmdbd_query {
	struct mmdbd_query *next, *prev;	/* g_mmdbd.queries, qlock */
	pthread_mutex_t mu;
	struct mmdbd_qparse *parsed;		/* NULL when none open */
	struct mmdb_cursor *cur;		/* NULL when none open */
	int volumes;
	int expired;				/* ended by the reaper */
	uint64_t rows;				/* returned so far */
	struct mmdbd_reader who;		/* rows it may read only */
	time_t last;				/* last request */
	char peer[64];
};

/* idle_limit - seconds before an unused cursor is ended (env
 * NSR_TEST_MMDB_CURSOR_IDLE for tests). */
static int idle_limit(void)
{
	const char *e = getenv("NSR_TEST_MMDB_CURSOR_IDLE");
	int v = e ? atoi(e) : 0;

	return v > 0 ? v : IDLE_DEFAULT;
}

/* reset - end the open query of q (q->mu held, or q exclusively ours). */
static void reset(struct mmdbd_query *q)
{
	mmdb_cursor_free(q->cur);
	q->cur = NULL;
	mmdbd_qparse_free(q->parsed);
	q->parsed = NULL;
	q->rows = 0;
}

/* destroy - connection closed: unlist and free its query state. */
static void destroy(void *data)
{
	struct mmdbd_query *q = data;

	pthread_mutex_lock(&g_mmdbd.qlock);
	if (q->prev)
		q->prev->next = q->next;
	else
		g_mmdbd.queries = q->next;
	if (q->next)
		q->next->prev = q->prev;
	pthread_mutex_lock(&q->mu);
	reset(q);
	pthread_mutex_unlock(&q->mu);
	pthread_mutex_unlock(&g_mmdbd.qlock);
	pthread_mutex_destroy(&q->mu);
	free(q);
}

/* conn_query - this connection's query state, created on first use. */
static struct mmdbd_query *conn_query(struct nsr_rpc_call *call)
{
	struct mmdbd_query *q = nsr_rpc_call_conn_data(call);

	if (q)
		return q;
	q = nsr_xcalloc(1, sizeof(*q));
	pthread_mutex_init(&q->mu, NULL);
	snprintf(q->peer, sizeof(q->peer), "%s", nsr_rpc_call_peer(call));
	pthread_mutex_lock(&g_mmdbd.qlock);
	q->next = g_mmdbd.queries;
	if (q->next)
		q->next->prev = q;
	g_mmdbd.queries = q;
	pthread_mutex_unlock(&g_mmdbd.qlock);
	nsr_rpc_call_set_conn_data(call, q, destroy);
	return q;
}

/* mmdbd_query_close_all - end every cursor (stop path: life is held for
 * writing, so no handler holds a q->mu). */
void mmdbd_query_close_all(void)
{
	pthread_mutex_lock(&g_mmdbd.qlock);
	for (struct mmdbd_query *q = g_mmdbd.queries; q; q = q->next) {
		pthread_mutex_lock(&q->mu);
		reset(q);
		pthread_mutex_unlock(&q->mu);
	}
	pthread_mutex_unlock(&g_mmdbd.qlock);
}

/* mmdbd_query_reap - end cursors idle longer than the limit (tick). */
void mmdbd_query_reap(void)
{
	time_t now = time(NULL);
	int limit = idle_limit();

	pthread_mutex_lock(&g_mmdbd.qlock);
	for (struct mmdbd_query *q = g_mmdbd.queries; q; q = q->next) {
		/* A busy query is in use, not idle. */
		if (pthread_mutex_trylock(&q->mu) != 0)
			continue;
		if (q->cur && now - q->last > limit) {
			nsr_info("query of %s ended after %d s without a "
				 "request (%llu rows sent)", q->peer, limit,
				 (unsigned long long)q->rows);
			reset(q);
			q->expired = 1;
		}
		pthread_mutex_unlock(&q->mu);
	}
	pthread_mutex_unlock(&g_mmdbd.qlock);
}

/* open_cursor - parse text and open the cursor into q (life, q->mu held). */
static int open_cursor(struct mmdbd_query *q, const mm_query_args *a,
		       nsr_status *st)
{
	struct mmdbd_qparse *p = NULL;
	struct mmdb_cursor *cur = NULL;
	char err[1024];
	int rc;

	err[0] = '\0';
	rc = mmdbd_qparse(a->query, a->volumes, a->now, &p, err, sizeof(err));
	if (rc) {
		nsr_status_set(st, rc, "%s", err[0] ? err : nsr_strerror(rc));
		return rc;
	}
	if (a->volumes)
		rc = mmdb_vol_query(g_mmdbd.db, mmdbd_qparse_query(p), 0, &cur);
	else
		rc = mmdb_ss_query(g_mmdbd.db, mmdbd_qparse_query(p),
				   a->chains ? MMDB_CUR_CHAINS : 0, &cur);
	if (rc == NSR_ERR_INVAL) {
		nsr_status_set(st, rc, "query \"%s\" cannot be evaluated%s",
			     a->query, a->volumes ? " on volumes: use only "
			     "volume attributes" : "");
	} else if (rc) {
		mmdbd_db_status(st, rc, "cannot start query \"%s\"", a->query);
	}
	if (rc) {
		mmdbd_qparse_free(p);
		return rc;
	}
	q->parsed = p;
	q->cur = cur;
	q->volumes = a->volumes ? 1 : 0;
	return NSR_OK;
}

/* mmdbd_query_open - MM_QUERY_OPEN: replace this connection's query. */
int mmdbd_query_open(void *ctx, void *args, void *res,
		     struct nsr_rpc_call *call)
{
	mm_query_args *a = args;
	nsr_void_res *r = res;
	struct mmdbd_query *q = conn_query(call);

	NSR_UNUSED(ctx);
	pthread_rwlock_rdlock(&g_mmdbd.life);
	pthread_mutex_lock(&q->mu);
	reset(q);
	q->expired = 0;
	q->last = time(NULL);
	mmdbd_reader_of(call, &q->who);
	if (!g_mmdbd.db)
		nsr_status_set(&r->st, NSR_ERR_AGAIN, "nsrmmdbd is shutting "
			     "down: retry once it is restarted");
	else if (open_cursor(q, a, &r->st) == NSR_OK)
		nsr_status_set(&r->st, NSR_OK, "%s", "");
	pthread_mutex_unlock(&q->mu);
	pthread_rwlock_unlock(&g_mmdbd.life);
	return NSR_OK;
}

/* next_rows - up to max save set rows into r; *done at the end. */
static int next_rows(struct mmdbd_query *q, u_int max, mm_next_res *r)
{
	struct mmdb_ss_row row;
	int rc = 0;

	r->rows.rows_val = nsr_xcalloc(max + 1, sizeof(mm_row));
	while (r->rows.rows_len < max) {
		rc = mmdb_ss_next(q->cur, &row);
		if (rc <= 0)
			break;
		if (!mmdbd_reader_may(&q->who, row.ss.client))
			continue;
		if (mmdb_clnt_row_to_wire(&row,
					  &r->rows.rows_val[r->rows.rows_len]))
			nsr_fatal("out of memory");
		r->rows.rows_len++;
	}
	r->done = rc == 0 ? TRUE : FALSE;
	return rc < 0 ? rc : NSR_OK;
}

/* vol_visible - may q's caller see volume v?  Administrators and the
 * server's programs see every volume; anyone else the volumes that hold
 * a save set they may read (mminfo -m shows a client's user where its
 * data is, not the datazone's other volumes). */
static int vol_visible(const struct mmdbd_query *q,
		       const struct mmdb_volume *v)
{
	struct mmdb_pred pred = {MMDB_A_VOLUME, MMDB_OP_EQ, 0, v->name};
	struct mmdb_query vq = {&pred, 1};
	struct mmdb_cursor *cur = NULL;
	struct mmdb_ss_row row;
	int seen = 0;

	if (q->who.daemon)
		return 1;
	if (mmdb_ss_query(g_mmdbd.db, &vq, 0, &cur) != NSR_OK)
		return 0;
	while (!seen && mmdb_ss_next(cur, &row) > 0)
		seen = mmdbd_reader_may(&q->who, row.ss.client);
	mmdb_cursor_free(cur);
	return seen;
}

/* next_vols - up to max volumes into r; *done at the end. */
static int next_vols(struct mmdbd_query *q, u_int max, mm_next_res *r)
{
	struct mmdb_volume v;
	int rc = 0;

	r->vols.vols_val = nsr_xcalloc(max + 1, sizeof(mm_volume));
	while (r->vols.vols_len < max) {
		rc = mmdb_vol_next(q->cur, &v);
		if (rc <= 0)
			break;
		if (!vol_visible(q, &v))
			continue;
		if (mmdb_clnt_vol_to_wire(&v,
					  &r->vols.vols_val[r->vols.vols_len]))
			nsr_fatal("out of memory");
		r->vols.vols_len++;
	}
	r->done = rc == 0 ? TRUE : FALSE;
	return rc < 0 ? rc : NSR_OK;
}

/* no_query - the status when no cursor is open on this connection. */
static void no_query(const struct mmdbd_query *q, nsr_status *st)
{
	if (q && q->expired)
		nsr_status_set(st, NSR_ERR_STATE,
			       "the query was ended after %d "
			       "s without a request (an open query holds back "
			       "the media database's log cleanup): open it "
			       "again",
			       idle_limit());
	else
		nsr_status_set(st, NSR_ERR_STATE, "no query is open on this "
			     "connection (open one first; a restarted "
			     "nsrmmdbd forgets it)");
}

/* mmdbd_query_next - MM_QUERY_NEXT: the next batch of the open query. */
int mmdbd_query_next(void *ctx, void *args, void *res,
		     struct nsr_rpc_call *call)
{
	mm_next_args *a = args;
	mm_next_res *r = res;
	struct mmdbd_query *q = nsr_rpc_call_conn_data(call);
	u_int max = NSR_MIN(NSR_MAX(a->max, 1u), (u_int)MM_BATCH_MAX);
	int rc;

	NSR_UNUSED(ctx);
	if (!q) {
		no_query(q, &r->st);
		return NSR_OK;
	}
	pthread_rwlock_rdlock(&g_mmdbd.life);
	pthread_mutex_lock(&q->mu);
	if (!q->cur) {
		no_query(q, &r->st);
		goto out;
	}
	rc = q->volumes ? next_vols(q, max, r) : next_rows(q, max, r);
	q->rows += q->volumes ? r->vols.vols_len : r->rows.rows_len;
	q->last = time(NULL);
	if (rc)
		mmdbd_db_status(&r->st, rc, "query failed after %llu rows",
				(unsigned long long)q->rows);
	else
		nsr_status_set(&r->st, NSR_OK, "%s", "");
	if (rc || r->done)
		reset(q);
out:
	pthread_mutex_unlock(&q->mu);
	pthread_rwlock_unlock(&g_mmdbd.life);
	return NSR_OK;
}
