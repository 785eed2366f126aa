/*
 * index_clnt.c - client calls of the nsrindexd protocol, with entry
 * batching so a save costs one round trip per 512 files, not per file
 * (or per 1 MB of paths, when long paths make the entries large), and
 * directory lists batched the same way (IX_LISTS_MAX pieces or 1 MB of
 * names per IX_ADD_LISTS).  Batches are pipelined: IX_ADD and IX_ADD_LISTS
 * go out without waiting for their replies, which are read PIPE_DEPTH
 * calls later or before any other call, so on a long link a save of many
 * files does not wait a round trip per batch.  A batch the server refused
 * fails the next add or the commit, with the server's words.
 *
 * Invariant: ix->npend replies are outstanding on the peer's open
 * connection, their xids in pend[] from phead on; no other call goes out
 * while any is (nsr_rpc_call refuses), and a transport failure closes the
 * connection and forgets them all.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/index_clnt.h"
#include "nsr/peer.h"
#include "nsr/rpc.h"

#define BATCH 512
#define BATCH_BYTES (1u << 20) /* paths queued before a batch is sent */
#define PIPE_DEPTH 8		/* batch replies outstanding at most */

struct nsr_ixclnt {
	struct nsr_peer *peer; /* nsrindexd on the server */
	char *client;
	uint64_t ssid;
	ix_entry batch[BATCH];
	unsigned n;
	size_t bytes; /* path bytes queued */
	ix_dirlist lists[IX_LISTS_MAX];
	unsigned nlists;
	size_t lbytes; /* name bytes queued */
	uint32_t pend[PIPE_DEPTH]; /* xids of batches sent, reply unread */
	unsigned npend, phead;
	int no_many; /* nsrindexd answered IX_DELETE_MANY PROC_UNAVAIL */
	char err[1024];
};

/* make - a handle; connects now unless wait_ms >= 0 (then on first
 * use, waiting up to wait_ms for a restarting nsrindexd). */
static int make(const char *server, int wait_ms, struct nsr_ixclnt **out,
		struct nsr_buf *err)
{
	struct nsr_ixclnt *ix = calloc(1, sizeof(*ix));
	int rc;

	*out = NULL;
	if (!ix)
		return NSR_ERR_NOMEM;
	rc = nsr_peer_new(server, 0, NSRINDEXD_PROG, NSRINDEXD_V1, &ix->peer);
	if (rc == NSR_OK && wait_ms >= 0) {
		nsr_peer_set_wait(ix->peer, wait_ms);
	} else if (rc == NSR_OK) {
		rc = nsr_peer_connect(ix->peer);
		if (rc && err)
			nsr_buf_addstr(err, nsr_peer_errmsg(ix->peer));
	}
	if (rc) {
		nsr_ixclnt_close(ix);
		return rc;
	}
	*out = ix;
	return NSR_OK;
}

/* nsr_ixclnt_open - locate nsrindexd on server and connect. */
int nsr_ixclnt_open(const char *server, struct nsr_ixclnt **out,
		    struct nsr_buf *err)
{
	return make(server, -1, out, err);
}

/* nsr_ixclnt_new - a long-lived handle connecting on first use. */
int nsr_ixclnt_new(const char *server, int wait_ms, struct nsr_ixclnt **out)
{
	return make(server, wait_ms > 0 ? wait_ms : 0, out, NULL);
}

/* clear_batch - free the copied strings of queued entries. */
static void clear_batch(struct nsr_ixclnt *ix)
{
	for (unsigned i = 0; i < ix->n; i++)
		free(ix->batch[i].path);
	ix->n = 0;
	ix->bytes = 0;
}

/* clear_lists - free the copied list pieces queued. */
static void clear_lists(struct nsr_ixclnt *ix)
{
	for (unsigned i = 0; i < ix->nlists; i++) {
		ix_dirlist *d = &ix->lists[i];

		for (u_int k = 0; k < d->names.names_len; k++)
			free(d->names.names_val[k]);
		free(d->names.names_val);
		free(d->path);
	}
	ix->nlists = 0;
	ix->lbytes = 0;
}

/* nsr_ixclnt_close - drop queued entries, close, free. */
void nsr_ixclnt_close(struct nsr_ixclnt *ix)
{
	if (!ix)
		return;
	clear_batch(ix);
	clear_lists(ix);
	nsr_peer_free(ix->peer);
	free(ix->client);
	free(ix);
}

/* nsr_ixclnt_errmsg - words for the last failure. */
const char *nsr_ixclnt_errmsg(const struct nsr_ixclnt *ix)
{
	return ix->err[0] ? ix->err : "no error";
}

/* lost - the connection failed with rc: close it, forget the batches
 * outstanding on it, say why in ix->err. */
static int lost(struct nsr_ixclnt *ix, int rc)
{
	nsr_peer_fail(ix->peer, rc);
	snprintf(ix->err, sizeof(ix->err), "%s", nsr_peer_errmsg(ix->peer));
	ix->npend = 0;
	ix->phead = 0;
	return rc;
}

/* recv_one - read the reply to the oldest batch outstanding. */
static int recv_one(struct nsr_ixclnt *ix)
{
	struct nsr_rpc_clnt *c = nsr_peer_clnt(ix->peer);
	uint32_t xid = ix->pend[ix->phead];
	nsr_void_res r;
	int rc;

	if (!c)
		return lost(ix, NSR_ERR_RPC);
	ix->phead = (ix->phead + 1) % PIPE_DEPTH;
	ix->npend--;
	memset(&r, 0, sizeof(r));
	rc = nsr_rpc_call_recv(c, xid, NSR_XDR(xdr_nsr_void_res), &r);
	if (rc) {
		xdr_free(NSR_XDR(xdr_nsr_void_res), &r);
		return lost(ix, rc);
	}
	rc = r.st.code;
	if (rc)
		snprintf(ix->err, sizeof(ix->err), "%s", r.st.msg);
	xdr_free(NSR_XDR(xdr_nsr_void_res), &r);
	return rc;
}

/* drain - read every outstanding reply; the first failure is returned. */
static int drain(struct nsr_ixclnt *ix)
{
	int rc = NSR_OK;

	while (ix->npend > 0) {
		int r = recv_one(ix);

		if (rc == NSR_OK)
			rc = r;
	}
	return rc;
}

/* send_batch - a batch call whose reply is read later. */
static int send_batch(struct nsr_ixclnt *ix, uint32_t proc, xdrproc_t xa,
		      void *a)
{
	uint32_t xid;
	int rc;

	if (ix->npend == PIPE_DEPTH && (rc = recv_one(ix)) != NSR_OK)
		return rc;
	/* Connect (or replace a connection the server closed while idle)
	 * only with no reply outstanding: none may be lost silently. */
	if (ix->npend == 0 && (rc = nsr_peer_connect(ix->peer)) != NSR_OK) {
		snprintf(ix->err, sizeof(ix->err), "%s",
			 nsr_peer_errmsg(ix->peer));
		return rc;
	}
	if (!nsr_peer_clnt(ix->peer))
		return lost(ix, NSR_ERR_RPC);
	rc = nsr_rpc_call_send(nsr_peer_clnt(ix->peer), proc, xa, a, &xid);
	if (rc)
		return lost(ix, rc);
	ix->pend[(ix->phead + ix->npend) % PIPE_DEPTH] = xid;
	ix->npend++;
	return NSR_OK;
}

/* void_call - one call returning nsr_void_res, after the replies of the
 * batches before it; errors into ix->err. */
static int void_call(struct nsr_ixclnt *ix, uint32_t proc, xdrproc_t xa,
		     void *a)
{
	nsr_void_res r;
	int rc = drain(ix);

	if (rc != NSR_OK && proc != IX_ABORT)
		return rc;
	memset(&r, 0, sizeof(r));
	rc = nsr_peer_call(ix->peer, proc, xa, a, NSR_XDR(xdr_nsr_void_res), &r,
			   proc == IX_DELETE ? NSR_PEER_RETRY : 0);
	if (rc) {
		snprintf(ix->err, sizeof(ix->err), "%s",
			 nsr_peer_errmsg(ix->peer));
		return rc;
	}
	rc = r.st.code;
	if (rc)
		snprintf(ix->err, sizeof(ix->err), "%s", r.st.msg);
	xdr_free(NSR_XDR(xdr_nsr_void_res), &r);
	return rc;
}

/* nsr_ixclnt_begin - IX_BEGIN for a save set. */
int nsr_ixclnt_begin(struct nsr_ixclnt *ix, const char *client, uint64_t ssid,
		     int64_t savetime, const char *name)
{
	ix_begin_args a;

	free(ix->client);
	ix->client = strdup(client);
	if (!ix->client)
		return NSR_ERR_NOMEM;
	ix->ssid = ssid;
	a.client = ix->client;
	a.ssid = ssid;
	a.savetime = savetime;
	a.name = (char *)name;
	return void_call(ix, IX_BEGIN, NSR_XDR(xdr_ix_begin_args), &a);
}

/* flush - send the queued batch. */
static int flush(struct nsr_ixclnt *ix)
{
	ix_add_args a;
	int rc;

	if (!ix->n)
		return NSR_OK;
	a.client = ix->client;
	a.ssid = ix->ssid;
	a.entries.entries_len = ix->n;
	a.entries.entries_val = ix->batch;
	rc = send_batch(ix, IX_ADD, NSR_XDR(xdr_ix_add_args), &a);
	clear_batch(ix);
	return rc;
}

/* nsr_ix_entry_to_wire - index entry into its wire form (path copied);
 * NSR_ERR_NOMEM (and *w zeroed) without memory. */
int nsr_ix_entry_to_wire(const struct nsr_cfi_entry *e, ix_entry *w)
{
	memset(w, 0, sizeof(*w));
	w->path = strdup(e->path);
	if (!w->path)
		return NSR_ERR_NOMEM;
	w->type = e->type;
	w->mode = e->mode;
	w->uid = e->uid;
	w->gid = e->gid;
	w->size = e->size;
	w->mtime = e->mtime;
	w->mtime_nsec = e->mtime_nsec;
	w->offset = e->offset;
	return NSR_OK;
}

/* nsr_ix_entry_from_wire - wire form into an index entry (path borrowed). */
void nsr_ix_entry_from_wire(const ix_entry *w, struct nsr_cfi_entry *e)
{
	memset(e, 0, sizeof(*e));
	e->path = w->path;
	e->type = w->type;
	e->mode = w->mode;
	e->uid = w->uid;
	e->gid = w->gid;
	e->size = w->size;
	e->mtime = w->mtime;
	e->mtime_nsec = w->mtime_nsec;
	e->offset = w->offset;
}

/* nsr_ixclnt_add - queue one entry; send the batch when full. */
int nsr_ixclnt_add(struct nsr_ixclnt *ix, const struct nsr_cfi_entry *e)
{
	int rc = nsr_ix_entry_to_wire(e, &ix->batch[ix->n]);

	if (rc != NSR_OK)
		return rc;
	ix->bytes += strlen(e->path);
	ix->n++;
	return ix->n == BATCH || ix->bytes >= BATCH_BYTES ? flush(ix)
							  : NSR_OK;
}

/* flush_lists - send the queued list pieces. */
static int flush_lists(struct nsr_ixclnt *ix)
{
	ix_lists_args a = {ix->client, ix->ssid, {ix->nlists, ix->lists}};
	int rc = NSR_OK;

	if (ix->nlists)
		rc = send_batch(ix, IX_ADD_LISTS,
				NSR_XDR(xdr_ix_lists_args), &a);
	clear_lists(ix);
	return rc;
}

/* queue_piece - queue names[0..n) as entries first.. of dir's list. */
static int queue_piece(struct nsr_ixclnt *ix, const char *dir,
		       uint32_t total, uint32_t first,
		       const char *const *names, size_t n)
{
	ix_dirlist *d = &ix->lists[ix->nlists];

	memset(d, 0, sizeof(*d));
	d->total = total;
	d->first = first;
	d->path = strdup(dir);
	d->names.names_val = calloc(n + 1, sizeof(char *));
	ix->nlists++; /* clear_lists frees what was copied */
	if (!d->path || !d->names.names_val)
		return NSR_ERR_NOMEM;
	for (size_t i = 0; i < n; i++) {
		d->names.names_val[i] = strdup(names[i]);
		if (!d->names.names_val[i])
			return NSR_ERR_NOMEM;
		d->names.names_len++;
		ix->lbytes += strlen(names[i]);
	}
	ix->lbytes += strlen(dir);
	return ix->nlists == IX_LISTS_MAX || ix->lbytes >= BATCH_BYTES
		       ? flush_lists(ix)
		       : NSR_OK;
}

/* nsr_ixclnt_add_list - queue a directory's entry list, in pieces of
 * IX_NAMES_MAX names; sends a batch when full. */
int nsr_ixclnt_add_list(struct nsr_ixclnt *ix, const char *dir,
			const char *const *names, size_t n)
{
	size_t at = 0;
	int rc;

	if (n > UINT32_MAX)
		return NSR_ERR_TOOBIG;
	do {
		size_t k = NSR_MIN(n - at, (size_t)IX_NAMES_MAX);

		rc = queue_piece(ix, dir, (uint32_t)n, (uint32_t)at,
				 names + at, k);
		at += k;
	} while (rc == NSR_OK && at < n);
	return rc;
}

/* nsr_ixclnt_commit - send the rest, then IX_COMMIT. */
int nsr_ixclnt_commit(struct nsr_ixclnt *ix)
{
	ix_ss_args a;
	int rc = flush(ix);

	if (rc == NSR_OK)
		rc = flush_lists(ix);
	if (rc)
		return rc;
	a.client = ix->client;
	a.ssid = ix->ssid;
	return void_call(ix, IX_COMMIT, NSR_XDR(xdr_ix_ss_args), &a);
}

/* nsr_ixclnt_abort - drop the queue, IX_ABORT. */
int nsr_ixclnt_abort(struct nsr_ixclnt *ix)
{
	ix_ss_args a;

	clear_batch(ix);
	clear_lists(ix);
	if (!ix->client)
		return NSR_OK;
	a.client = ix->client;
	a.ssid = ix->ssid;
	return void_call(ix, IX_ABORT, NSR_XDR(xdr_ix_ss_args), &a);
}

/* nsr_ixclnt_delete - IX_DELETE of a committed save set. */
int nsr_ixclnt_delete(struct nsr_ixclnt *ix, const char *client, uint64_t ssid)
{
	ix_ss_args a;

	a.client = (char *)client;
	a.ssid = ssid;
	return void_call(ix, IX_DELETE, NSR_XDR(xdr_ix_ss_args), &a);
}

/* visit_page - hand one page of entries to fn. */
static int visit_page(const ix_entry *v, u_int n, nsr_cfi_visit_fn fn,
		      void *arg)
{
	int rc = 0;

	for (u_int i = 0; !rc && i < n; i++) {
		struct nsr_cfi_saveset ss = {.ssid = v[i].ssid,
					     .savetime = v[i].savetime,
					     .name = ""};
		struct nsr_cfi_entry e;

		nsr_ix_entry_from_wire(&v[i], &e);
		rc = fn(arg, &ss, &e);
	}
	return rc;
}

/* status_call - one retried call whose result starts with an nsr_status
 * (r of rsize bytes, zeroed first); errors into ix->err.  On a transport
 * failure r holds nothing to free. */
static int status_call(struct nsr_ixclnt *ix, uint32_t proc, xdrproc_t xa,
		       void *a, xdrproc_t xr, void *r, size_t rsize)
{
	nsr_status *st = r;
	int rc;

	memset(r, 0, rsize);
	rc = drain(ix); /* a batch refused before: st stays zero */
	if (rc)
		return rc;
	rc = nsr_peer_call(ix->peer, proc, xa, a, xr, r, NSR_PEER_RETRY);
	if (rc) {
		snprintf(ix->err, sizeof(ix->err), "%s",
			 nsr_peer_errmsg(ix->peer));
		return rc;
	}
	rc = st->code;
	if (rc)
		snprintf(ix->err, sizeof(ix->err), "%s", st->msg);
	return rc;
}

/* delete_singly - IX_DELETE of each of ssids[0..n), for an nsrindexd
 * that does not know IX_DELETE_MANY; adds to *done and *removed as
 * nsr_ixclnt_delete_many says. */
static int delete_singly(struct nsr_ixclnt *ix, const char *client,
			 const uint64_t *ssids, size_t n, size_t *done,
			 size_t *removed)
{
	for (size_t i = 0; i < n; i++) {
		int rc = nsr_ixclnt_delete(ix, client, ssids[i]);

		if (rc != NSR_OK && rc != NSR_ERR_NOTFOUND)
			return rc;
		*removed += rc == NSR_OK;
		(*done)++;
	}
	return NSR_OK;
}

/* delete_batch - one IX_DELETE_MANY of ssids[0..n) (n <=
 * IX_DELETE_MAX); adds to *done and *removed.  NSR_ERR_UNSUPPORTED
 * (remembered) when nsrindexd does not know the procedure. */
static int delete_batch(struct nsr_ixclnt *ix, const char *client,
			const uint64_t *ssids, size_t n, size_t *done,
			size_t *removed)
{
	ix_delete_args a;
	ix_delete_res r;
	int rc;

	a.client = (char *)client;
	a.ssids.ssids_len = (u_int)n;
	a.ssids.ssids_val = (void *)(uintptr_t)ssids; /* only encoded */
	rc = status_call(ix, IX_DELETE_MANY, NSR_XDR(xdr_ix_delete_args), &a,
			 NSR_XDR(xdr_ix_delete_res), &r, sizeof(r));
	if (rc == NSR_ERR_UNSUPPORTED && r.st.code == NSR_OK)
		ix->no_many = 1; /* an nsrindexd older than it */
	if (rc == NSR_OK) {
		*done += n;
		*removed += r.removed;
	}
	xdr_free(NSR_XDR(xdr_ix_delete_res), &r);
	return rc;
}

/* nsr_ixclnt_delete_many - IX_DELETE_MANY in batches of at most
 * IX_DELETE_MAX, or IX_DELETE of each for an older nsrindexd. */
int nsr_ixclnt_delete_many(struct nsr_ixclnt *ix, const char *client,
			   const uint64_t *ssids, size_t n, size_t *done,
			   size_t *removed)
{
	size_t d = 0, r = 0;
	int rc = NSR_OK;

	while (d < n && rc == NSR_OK) {
		size_t k = NSR_MIN(n - d, (size_t)IX_DELETE_MAX);

		if (!ix->no_many)
			rc = delete_batch(ix, client, ssids + d, k, &d, &r);
		if (ix->no_many)
			rc = delete_singly(ix, client, ssids + d, k, &d, &r);
	}
	if (done)
		*done = d;
	if (removed)
		*removed = r;
	return rc;
}

/* lookup - page through IX_LIST/IX_FIND results. */
static int lookup(struct nsr_ixclnt *ix, uint32_t proc, const char *client,
		  const char *path, int64_t t, nsr_cfi_visit_fn fn, void *arg)
{
	ix_lookup_args a;
	ix_lookup_res r;
	unsigned skip = 0;
	int rc, more;

	do {
		a.client = (char *)client;
		a.path = (char *)path;
		a.time = t;
		a.skip = skip;
		rc = status_call(ix, proc, NSR_XDR(xdr_ix_lookup_args), &a,
				 NSR_XDR(xdr_ix_lookup_res), &r, sizeof(r));
		if (rc && !r.st.code)
			return rc;
		if (!rc)
			rc = visit_page(r.entries.entries_val,
					r.entries.entries_len, fn, arg);
		skip += r.entries.entries_len;
		more = r.more && r.entries.entries_len > 0;
		xdr_free(NSR_XDR(xdr_ix_lookup_res), &r);
	} while (!rc && more);
	return rc;
}

/* nsr_ixclnt_find - every version of a path (IX_FIND, paged). */
int nsr_ixclnt_find(struct nsr_ixclnt *ix, const char *client, const char *path,
		    int64_t t, nsr_cfi_visit_fn fn, void *arg)
{
	return lookup(ix, IX_FIND, client, path, t, fn, arg);
}

/* nsr_ixclnt_list - a directory's contents (IX_LIST, paged). */
int nsr_ixclnt_list(struct nsr_ixclnt *ix, const char *client, const char *dir,
		    int64_t t, nsr_cfi_visit_fn fn, void *arg)
{
	return lookup(ix, IX_LIST, client, dir, t, fn, arg);
}

/* nsr_ixclnt_query - run a query kept as a cursor at nsrindexd and visit
 * its results page by page; the cursor is closed at the end. */
int nsr_ixclnt_query(struct nsr_ixclnt *ix, const struct nsr_ixclnt_q *q,
		     nsr_cfi_visit_fn fn, void *arg)
{
	ix_query_args a;
	ix_page_args pa;
	ix_page_res r;
	uint64_t at;
	int rc, more;

	memset(&a, 0, sizeof(a));
	a.client = (char *)q->client;
	a.kind = q->kind;
	a.path = (char *)(q->path ? q->path : "");
	a.pattern = (char *)(q->pattern ? q->pattern : "");
	a.time = q->time;
	a.ssid = q->ssid;
	a.max = IX_BATCH_MAX;
	rc = status_call(ix, IX_QUERY, NSR_XDR(xdr_ix_query_args), &a,
			 NSR_XDR(xdr_ix_page_res), &r, sizeof(r));
	pa.client = a.client;
	pa.cursor = r.cursor;
	pa.max = IX_BATCH_MAX;
	for (at = 0;;) {
		if (!rc)
			rc = visit_page(r.entries.entries_val,
					r.entries.entries_len, fn, arg);
		at += r.entries.entries_len;
		more = !rc && r.entries.entries_len > 0 && at < r.total;
		xdr_free(NSR_XDR(xdr_ix_page_res), &r);
		if (!more)
			break;
		pa.at = at;
		rc = status_call(ix, IX_PAGE, NSR_XDR(xdr_ix_page_args), &pa,
				 NSR_XDR(xdr_ix_page_res), &r, sizeof(r));
	}
	if (pa.cursor) {
		char keep[sizeof(ix->err)];

		memcpy(keep, ix->err, sizeof(keep));
		void_call(ix, IX_CLOSE, NSR_XDR(xdr_ix_page_args), &pa);
		memcpy(ix->err, keep, sizeof(keep));
	}
	return rc;
}

/* nsr_ixclnt_savesets - a client's committed save sets (IX_SAVESETS). */
int nsr_ixclnt_savesets(struct nsr_ixclnt *ix, const char *client,
			nsr_cfi_ss_fn fn, void *arg)
{
	ix_savesets_args a;
	ix_savesets_res r;
	int rc, more;

	a.client = (char *)client;
	a.skip = 0;
	do {
		rc = status_call(ix, IX_SAVESETS, NSR_XDR(xdr_ix_savesets_args),
				 &a, NSR_XDR(xdr_ix_savesets_res), &r,
				 sizeof(r));
		if (rc && !r.st.code)
			return rc;
		for (u_int i = 0; !rc && i < r.savesets.savesets_len; i++) {
			const ix_saveset *w = &r.savesets.savesets_val[i];
			struct nsr_cfi_saveset ss = {.ssid = w->ssid,
						     .savetime = w->savetime,
						     .entries = w->entries,
						     .name = w->name};

			rc = fn(arg, &ss);
		}
		a.skip += r.savesets.savesets_len;
		more = r.more && r.savesets.savesets_len > 0;
		xdr_free(NSR_XDR(xdr_ix_savesets_res), &r);
	} while (!rc && more);
	return rc;
}
