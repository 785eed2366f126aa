/*
 * nsrindexd - the client file index daemon: one index per client under
 * <root>/index/<client> (src/index, nsr_index(5)).  save adds entries in
 * batches between IX_BEGIN and IX_COMMIT (the commit is durable before the
 * reply), and the entry list of each directory it read (IX_ADD_LISTS);
 * recover browses with IX_LIST and IX_FIND, and IX_QUERY keeps the
 * results of a query (versions, find by name, a save set's entries) as a
 * cursor whose pages IX_PAGE serves without a rescan.  Each client's index
 * is opened once for writing and kept open (the index takes an exclusive
 * lock, so offline tools see it busy while nsrindexd runs).
 */
#include "nsr/compat.h"

#include "nsr/cfi.h"
#include "nsr/daemon.h"
#include "nsr/err.h"
#include "nsr/index_clnt.h"
#include "nsr/log.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsrindex.h"
#include "nsr/rpc_status.h"
#include "nsr/xmalloc.h"
#include "ixd.h"

#define MAX_OPEN 256
#define TABLE_MEM_MB 256 /* directory tables kept, all indexes (MiB) */

struct open_ix {
	char *client;
	struct nsr_cfi *cfi;
};

struct indexd {
	const char *root;
	struct open_ix open[MAX_OPEN];
	int nopen;
	int max_open; /* MAX_OPEN; tests lower it (NSR_TEST_INDEX_MAX_OPEN) */
	size_t table_mem; /* bytes of directory tables kept between calls */
	struct nsr_cfi_cursors *cursors; /* kept queries (IX_QUERY) */
};

static struct indexd g_ix;

/* drop_index - close open index i (a later call reopens it). */
static void drop_index(struct indexd *x, int i)
{
	nsr_cfi_close(x->open[i].cfi);
	free(x->open[i].client);
	memmove(&x->open[i], &x->open[i + 1],
		sizeof(x->open[0]) * (size_t)(x->nopen - i - 1));
	x->nopen--;
}

/* forget_failed - after an I/O error, or any failure that left the
 * index refusing all work (sticky: a catalogue replacement that failed,
 * say with EPERM), close it so the next request reopens it from disk. */
static void forget_failed(struct indexd *x, const char *client, int rc)
{
	for (int i = 0; i < x->nopen; i++) {
		if (strcmp(x->open[i].client, client) != 0)
			continue;
		if (rc != NSR_ERR_STATE && rc != NSR_ERR_IO &&
		    rc != NSR_ERR_NOSPACE &&
		    nsr_cfi_error(x->open[i].cfi) == NSR_OK)
			return;
		nsr_warn("closing the index of client '%s' after an error "
			 "(%s); it is reopened on the next request",
			 client, nsr_strerror(rc));
		drop_index(x, i);
		return;
	}
}

/* trim_tables - between calls (the server mutex held, no lookup
 * running): when the directory tables kept pass x->table_mem, let them
 * go down to half of it, those of the least recently used indexes
 * first, each index's least recently used tables first (a lookup reads
 * a table again when it needs it).  A call may hold more while it runs;
 * this bounds what stays after it. */
static void trim_tables(struct indexd *x)
{
	if (nsr_cfi_tables_held() <= x->table_mem)
		return;
	for (int i = 0; i < x->nopen; i++)
		if (nsr_cfi_trim_tables(x->open[i].cfi, x->table_mem / 2) <=
		    x->table_mem / 2)
			break;
}

/* get_index - the open index of client (opened on first use).  The
 * open ones are kept in the order they were last used, the least
 * recently used first. */
static int get_index(struct indexd *x, const char *client, int create,
		     struct nsr_cfi **out, nsr_status *st)
{
	int rc;

	for (int i = 0; i < x->nopen; i++)
		if (strcmp(x->open[i].client, client) == 0) {
			struct open_ix used = x->open[i];

			memmove(&x->open[i], &x->open[i + 1],
				sizeof(x->open[0]) *
					(size_t)(x->nopen - i - 1));
			x->open[x->nopen - 1] = used;
			*out = used.cfi;
			trim_tables(x);
			return NSR_OK;
		}
	if (x->nopen == x->max_open) {
		/* Close the least recently used index that no save is
		 * writing: indexes reopen cheaply (a directory table is read
		 * again when needed), but closing drops uncommitted save
		 * sets. */
		int i;

		for (i = 0; i < x->nopen && nsr_cfi_busy(x->open[i].cfi); i++)
			;
		if (i == x->nopen) {
			nsr_status_set(
				st, NSR_ERR_LIMIT,
				"%d client indexes are being "
				"written at once; try again when a save ends",
				x->max_open);
			return NSR_ERR_LIMIT;
		}
		nsr_info("closing the index of client '%s' to open the one of "
			 "'%s' (%d indexes open at most)", x->open[i].client,
			 client, x->max_open);
		drop_index(x, i);
	}
	rc = nsr_cfi_open(out, x->root, client, create ? NSR_CFI_CREATE : 0);
	if (rc) {
		if (rc == NSR_ERR_NOTFOUND)
			nsr_status_set(
				st, rc,
				"no file index for client '%s' on this server",
				client);
		else
			nsr_status_set(
				st, rc,
				"cannot open the file index of client '%s': %s",
				client, nsr_strerror(rc));
		return rc;
	}
	x->open[x->nopen].client = nsr_xstrdup(client);
	x->open[x->nopen].cfi = *out;
	x->nopen++;
	trim_tables(x);
	return NSR_OK;
}

/* ix_begin - IX_BEGIN: start the index of a save set. */
static int ix_begin(void *ctx, void *argp, void *resp,
		    struct nsr_rpc_call *call)
{
	ix_begin_args *a = argp;
	nsr_void_res *r = resp;
	struct nsr_cfi *c;
	int rc;

	NSR_UNUSED(call);
	if (get_index(ctx, a->client, 1, &c, &r->st))
		return NSR_OK;
	rc = nsr_cfi_begin(c, a->ssid, a->savetime, a->name);
	forget_failed(ctx, a->client, rc);
	if (rc)
		nsr_status_set(
			&r->st, rc,
			"cannot start index of save set %llu of '%s': %s",
			(unsigned long long)a->ssid, a->client,
			nsr_strerror(rc));
	else
		nsr_status_set(&r->st, NSR_OK, "%s", "");
	return NSR_OK;
}

/* ix_add - IX_ADD: add a batch of entries. */
static int ix_add(void *ctx, void *argp, void *resp, struct nsr_rpc_call *call)
{
	ix_add_args *a = argp;
	nsr_void_res *r = resp;
	struct nsr_cfi_entry *e;
	struct nsr_cfi *c;
	int rc;

	NSR_UNUSED(call);
	if (get_index(ctx, a->client, 0, &c, &r->st))
		return NSR_OK;
	e = nsr_xcalloc(a->entries.entries_len + 1, sizeof(*e));
	for (u_int i = 0; i < a->entries.entries_len; i++)
		nsr_ix_entry_from_wire(&a->entries.entries_val[i], &e[i]);
	rc = nsr_cfi_add(c, a->ssid, e, a->entries.entries_len);
	free(e);
	forget_failed(ctx, a->client, rc);
	if (rc)
		nsr_status_set(&r->st, rc,
			       "cannot add index entries of save set %llu: %s",
			       (unsigned long long)a->ssid, nsr_strerror(rc));
	else
		nsr_status_set(&r->st, NSR_OK, "%s", "");
	return NSR_OK;
}

/* ix_add_lists - IX_ADD_LISTS: add a batch of directory list pieces. */
static int ix_add_lists(void *ctx, void *argp, void *resp,
			struct nsr_rpc_call *call)
{
	ix_lists_args *a = argp;
	nsr_void_res *r = resp;
	struct nsr_cfi *c;
	int rc = NSR_OK;
	u_int i;

	NSR_UNUSED(call);
	if (get_index(ctx, a->client, 0, &c, &r->st))
		return NSR_OK;
	for (i = 0; i < a->lists.lists_len && rc == NSR_OK; i++) {
		const ix_dirlist *d = &a->lists.lists_val[i];

		rc = nsr_cfi_add_list(c, a->ssid, d->path, d->total, d->first,
				      (const char *const *)d->names.names_val,
				      d->names.names_len);
	}
	forget_failed(ctx, a->client, rc);
	if (rc)
		nsr_status_set(&r->st, rc,
			       "cannot add the entry list of directory %s to "
			       "save set %llu: %s",
			       a->lists.lists_val[i - 1].path,
			       (unsigned long long)a->ssid, nsr_strerror(rc));
	else
		nsr_status_set(&r->st, NSR_OK, "%s", "");
	return NSR_OK;
}

/* ss_op - commit, abort or delete one save set's entries. */
static int ss_op(struct indexd *x, ix_ss_args *a, nsr_void_res *r,
		 int (*op)(struct nsr_cfi *, uint64_t), const char *what)
{
	struct nsr_cfi *c;
	int rc;

	if (get_index(x, a->client, 0, &c, &r->st))
		return NSR_OK;
	rc = op(c, a->ssid);
	forget_failed(x, a->client, rc);
	if (rc)
		nsr_status_set(
			&r->st, rc,
			"cannot %s the index of save set %llu of '%s': %s",
			what, (unsigned long long)a->ssid, a->client,
			nsr_strerror(rc));
	else
		nsr_status_set(&r->st, NSR_OK, "%s", "");
	return NSR_OK;
}

/* ix_commit - IX_COMMIT: make a save set's entries durable and visible. */
static int ix_commit(void *ctx, void *argp, void *resp,
		     struct nsr_rpc_call *call)
{
	NSR_UNUSED(call);
	return ss_op(ctx, argp, resp, nsr_cfi_commit, "commit");
}

/* ix_abort - IX_ABORT: drop an uncommitted save set's entries. */
static int ix_abort(void *ctx, void *argp, void *resp,
		    struct nsr_rpc_call *call)
{
	NSR_UNUSED(call);
	return ss_op(ctx, argp, resp, nsr_cfi_abort, "abort");
}

/* ix_delete - IX_DELETE: drop a committed save set's entries. */
static int ix_delete(void *ctx, void *argp, void *resp,
		     struct nsr_rpc_call *call)
{
	NSR_UNUSED(call);
	return ss_op(ctx, argp, resp, nsr_cfi_delete, "delete");
}

/* ix_delete_many - IX_DELETE_MANY: drop the entries of many committed
 * save sets of one client with one catalogue replacement. */
static int ix_delete_many(void *ctx, void *argp, void *resp,
			  struct nsr_rpc_call *call)
{
	ix_delete_args *a = argp;
	ix_delete_res *r = resp;
	u_int n = a->ssids.ssids_len;
	struct nsr_cfi *c;
	size_t removed = 0;
	int rc;

	NSR_UNUSED(call);
	if (get_index(ctx, a->client, 0, &c, &r->st))
		return NSR_OK;
	rc = nsr_cfi_delete_many(c, a->ssids.ssids_val, n, &removed);
	forget_failed(ctx, a->client, rc);
	if (rc) {
		nsr_status_set(&r->st, rc,
			       "cannot delete %u save sets from the index of "
			       "'%s': %s", n, a->client, nsr_strerror(rc));
		return NSR_OK;
	}
	r->removed = (u_int)removed;
	r->notfound = n - (u_int)removed;
	nsr_status_set(&r->st, NSR_OK, "%s", "");
	return NSR_OK;
}

/* Paging collector for IX_LIST / IX_FIND. */
struct collect {
	ix_lookup_res *r;
	unsigned skip, seen;
	int err; /* an entry could not be converted */
};

/* collect_one - add one browse result to the reply page (skip, then fill). */
static int collect_one(void *arg, const struct nsr_cfi_saveset *ss,
		       const struct nsr_cfi_entry *e)
{
	struct collect *c = arg;
	ix_entry *w;

	if (c->seen++ < c->skip)
		return 0;
	if (c->r->entries.entries_len == IX_BATCH_MAX) {
		c->r->more = TRUE;
		return 1;
	}
	w = &c->r->entries.entries_val[c->r->entries.entries_len];
	c->err = nsr_ix_entry_to_wire(e, w);
	if (c->err != NSR_OK)
		return 1;
	c->r->entries.entries_len++;
	w->ssid = ss->ssid;
	w->savetime = ss->savetime;
	return 0;
}

/* lookup - shared body of IX_LIST and IX_FIND. */
static int lookup(struct indexd *x, ix_lookup_args *a, ix_lookup_res *r,
		  int find)
{
	struct collect col = {.r = r, .skip = a->skip};
	struct nsr_cfi *c;
	int64_t t = a->time ? a->time : INT64_MAX;
	int rc;

	r->entries.entries_val = nsr_xcalloc(IX_BATCH_MAX, sizeof(ix_entry));
	if (get_index(x, a->client, 0, &c, &r->st))
		return NSR_OK;
	/* A listing's pages come from the listing the index keeps. */
	col.skip = find ? a->skip : 0;
	rc = find ? nsr_cfi_find(c, a->path, t, collect_one, &col)
		  : nsr_cfi_list_dir_from(c, a->path, t, a->skip,
					  collect_one, &col);
	if (rc >= 0 && col.err != NSR_OK)
		rc = col.err;
	if (rc < 0)
		nsr_status_set(&r->st, rc,
			       "cannot browse the index of '%s': %s", a->client,
			       nsr_strerror(rc));
	else
		nsr_status_set(&r->st, NSR_OK, "%s", "");
	return NSR_OK;
}

/* ix_list - IX_LIST: a directory's contents as of a time. */
static int ix_list(void *ctx, void *argp, void *resp, struct nsr_rpc_call *call)
{
	NSR_UNUSED(call);
	return lookup(ctx, argp, resp, 0);
}

/* ix_find - IX_FIND: every version of a path as of a time, newest first. */
static int ix_find(void *ctx, void *argp, void *resp, struct nsr_rpc_call *call)
{
	NSR_UNUSED(call);
	return lookup(ctx, argp, resp, 1);
}

/* Filling a page of an ix_page_res. */
struct page {
	ix_page_res *r;
	int err;
};

/* page_one - add one result to the page. */
static int page_one(void *arg, const struct nsr_cfi_saveset *ss,
		    const struct nsr_cfi_entry *e)
{
	struct page *p = arg;
	ix_entry *w = &p->r->entries.entries_val[p->r->entries.entries_len];

	p->err = nsr_ix_entry_to_wire(e, w);
	if (p->err != NSR_OK)
		return 1;
	w->ssid = ss->ssid;
	w->savetime = ss->savetime;
	p->r->entries.entries_len++;
	return 0;
}

/* page_fill - answer results at .. at + max - 1 of cursor id (spilled
 * ones are read back from the query's spill file). */
static void page_fill(const struct nsr_cfi_results *res, uint64_t id,
		      uint64_t at, u_int max, ix_page_res *r)
{
	struct page p = {.r = r};
	size_t n = nsr_cfi_results_count(res);
	int rc = NSR_OK;

	if (max == 0 || max > IX_BATCH_MAX)
		max = IX_BATCH_MAX;
	r->cursor = id;
	r->total = n;
	r->entries.entries_val = nsr_xcalloc(max, sizeof(ix_entry));
	if (at < n)
		rc = nsr_cfi_results_visit(res, (size_t)at, max, page_one, &p);
	if (p.err)
		nsr_status_set(&r->st, p.err, "cannot send a result: %s",
			       nsr_strerror(p.err));
	else if (rc < 0) /* what was filled goes with the reply, unused */
		nsr_status_set(&r->st, rc,
			       "cannot read the results of query %llu from "
			       "its spill file under the index directory: "
			       "%s; run the query again",
			       (unsigned long long)id, nsr_strerror(rc));
	else
		nsr_status_set(&r->st, NSR_OK, "%s", "");
}

/* query_failed - the status of a query that failed with rc. */
static void query_failed(ix_page_res *r, const char *client, int rc)
{
	const char *what = "";

	if (rc == NSR_ERR_LIMIT)
		what = " (more than 64 MiB of directory names waiting to be "
		       "searched: search a subdirectory)";
	else if (rc == NSR_ERR_NOSPACE)
		what = " (no space for the query's spill file in the "
		       "client's index directory: free space there or "
		       "narrow the query)";
	else if (rc == NSR_ERR_IO)
		what = " (an I/O error writing the query's spill file in "
		       "the client's index directory: check that disk)";
	nsr_status_set(&r->st, rc, "cannot query the index of '%s': %s%s",
		       client, nsr_strerror(rc), what);
}

/* ix_query - IX_QUERY: run a query once, keep its results as a cursor
 * and answer the first page. */
static int ix_query(void *ctx, void *argp, void *resp,
		    struct nsr_rpc_call *call)
{
	ix_query_args *a = argp;
	ix_page_res *r = resp;
	struct nsr_cfi_results *res = NULL;
	struct indexd *x = ctx;
	struct nsr_cfi *c;
	uint64_t id;
	int64_t t = a->time ? a->time : INT64_MAX;
	int rc;

	NSR_UNUSED(call);
	if (get_index(ctx, a->client, 0, &c, &r->st))
		return NSR_OK;
	switch (a->kind) {
	case IX_Q_VERSIONS:
		rc = nsr_cfi_versions(c, a->path, t, &res);
		break;
	case IX_Q_MATCH:
		rc = nsr_cfi_match(c, a->path, a->pattern, t, &res);
		break;
	case IX_Q_SAVESET:
		rc = nsr_cfi_saveset_results(c, a->ssid, &res);
		break;
	default:
		rc = NSR_ERR_INVAL;
	}
	/* A query writes nothing to the index: a full disk or an I/O
	 * error on its spill file leaves the index as it was, open (and
	 * the saves writing it going on). */
	forget_failed(ctx, a->client,
		      rc == NSR_ERR_NOSPACE || rc == NSR_ERR_IO ? NSR_OK : rc);
	if (rc == NSR_ERR_NOTFOUND && a->kind == IX_Q_SAVESET) {
		nsr_status_set(&r->st, rc,
			       "no save set %llu in the index of client '%s'",
			       (unsigned long long)a->ssid, a->client);
		return NSR_OK;
	}
	if (rc) {
		query_failed(r, a->client, rc);
		return NSR_OK;
	}
	if (nsr_cfi_results_spilled(res) > 0)
		nsr_info("query of client '%s': %zu results, %zu of them in "
			 "a spill file (unnamed, in its index directory)",
			 a->client, nsr_cfi_results_count(res),
			 nsr_cfi_results_spilled(res));
	id = nsr_cfi_cursors_keep(x->cursors, a->client, res);
	if (!id) {
		nsr_status_set(&r->st, NSR_ERR_NOMEM,
			       "out of memory keeping a query");
		return NSR_OK;
	}
	page_fill(nsr_cfi_cursors_get(x->cursors, a->client, id), id, 0,
		  a->max, r);
	return NSR_OK;
}

/* ix_page - IX_PAGE: a later page of a kept query. */
static int ix_page(void *ctx, void *argp, void *resp,
		   struct nsr_rpc_call *call)
{
	ix_page_args *a = argp;
	ix_page_res *r = resp;
	struct indexd *x = ctx;
	const struct nsr_cfi_results *res =
		nsr_cfi_cursors_get(x->cursors, a->client, a->cursor);

	NSR_UNUSED(call);
	if (!res) {
		nsr_status_set(&r->st, NSR_ERR_NOTFOUND,
			       "query %llu of client '%s' is no longer kept "
			       "(at most %d are); run the query again",
			       (unsigned long long)a->cursor, a->client,
			       IX_CURSORS_MAX);
		return NSR_OK;
	}
	page_fill(res, a->cursor, a->at, a->max, r);
	return NSR_OK;
}

/* ix_close - IX_CLOSE: drop a kept query (an unknown one is fine). */
static int ix_close(void *ctx, void *argp, void *resp,
		    struct nsr_rpc_call *call)
{
	ix_page_args *a = argp;
	nsr_void_res *r = resp;
	struct indexd *x = ctx;

	NSR_UNUSED(call);
	nsr_cfi_cursors_drop(x->cursors, a->client, a->cursor);
	nsr_status_set(&r->st, NSR_OK, "%s", "");
	return NSR_OK;
}

/* A page of IX_SAVESETS being filled. */
struct ss_page {
	ix_savesets_res *r;
	u_int skip, seen;
};

/* ss_one - add one save set to the page. */
static int ss_one(void *arg, const struct nsr_cfi_saveset *ss)
{
	struct ss_page *p = arg;
	ix_saveset *w;

	if (p->seen++ < p->skip)
		return 0;
	if (p->r->savesets.savesets_len == IX_SAVESETS_MAX) {
		p->r->more = TRUE;
		return 1;
	}
	w = &p->r->savesets.savesets_val[p->r->savesets.savesets_len++];
	w->ssid = ss->ssid;
	w->savetime = ss->savetime;
	w->entries = ss->entries;
	w->name = nsr_xstrdup(ss->name ? ss->name : "");
	return 0;
}

/* ix_savesets - IX_SAVESETS: a client's committed save sets. */
static int ix_savesets(void *ctx, void *argp, void *resp,
		       struct nsr_rpc_call *call)
{
	ix_savesets_args *a = argp;
	ix_savesets_res *r = resp;
	struct ss_page p = {.r = r, .skip = a->skip};
	struct nsr_cfi *c;
	int rc;

	NSR_UNUSED(call);
	r->savesets.savesets_val =
		nsr_xcalloc(IX_SAVESETS_MAX, sizeof(ix_saveset));
	if (get_index(ctx, a->client, 0, &c, &r->st))
		return NSR_OK;
	rc = nsr_cfi_savesets(c, ss_one, &p);
	if (rc < 0)
		nsr_status_set(&r->st, rc,
			       "cannot read the save sets of '%s': %s",
			       a->client, nsr_strerror(rc));
	else
		nsr_status_set(&r->st, NSR_OK, "%s", "");
	return NSR_OK;
}

/* Access classes: reading or writing an index is OWN (ix_authz: reads
 * by the client's own host, an administrator, or its remote access;
 * writes by its own host or the server's programs); every OWN
 * procedure's arguments begin with the client's name. */
#define PROC(num, name, targ, tres, fn) \
	NSR_RPC_PROC(num, name, targ, tres, fn, NSR_RPC_SERIAL)
#define OWN(num, name, targ, tres, fn) \
	NSR_RPC_PROC(num, name, targ, tres, fn, NSR_RPC_SERIAL | NSR_RPC_OWN)

static const struct nsr_rpc_proc ix_procs[] = {
	OWN(IX_BEGIN, "begin", ix_begin_args, nsr_void_res, ix_begin),
	OWN(IX_ADD, "add", ix_add_args, nsr_void_res, ix_add),
	OWN(IX_COMMIT, "commit", ix_ss_args, nsr_void_res, ix_commit),
	OWN(IX_ABORT, "abort", ix_ss_args, nsr_void_res, ix_abort),
	OWN(IX_DELETE, "delete", ix_ss_args, nsr_void_res, ix_delete),
	OWN(IX_LIST, "list", ix_lookup_args, ix_lookup_res, ix_list),
	OWN(IX_FIND, "find", ix_lookup_args, ix_lookup_res, ix_find),
	OWN(IX_ADD_LISTS, "add lists", ix_lists_args, nsr_void_res,
	     ix_add_lists),
	OWN(IX_QUERY, "query", ix_query_args, ix_page_res, ix_query),
	OWN(IX_PAGE, "page", ix_page_args, ix_page_res, ix_page),
	PROC(IX_CLOSE, "close query", ix_page_args, nsr_void_res, ix_close),
	OWN(IX_SAVESETS, "save sets", ix_savesets_args, ix_savesets_res,
	    ix_savesets),
	OWN(IX_DELETE_MANY, "delete many", ix_delete_args, ix_delete_res,
	    ix_delete_many),
};

static const struct nsr_rpc_prog ix_progs[] = {
	{NSRINDEXD_PROG, NSRINDEXD_V1, ix_procs, NSR_ARRAY_SIZE(ix_procs),
	 &g_ix, ix_authz},
};

/* ix_init - remember the root (indexes open on first use), make the
 * table of kept queries. */
static int ix_init(struct nsr_daemon *d)
{
	const char *e = getenv("NSR_TEST_INDEX_MAX_OPEN");
	const char *w = getenv("NSR_TEST_INDEX_LIST_WINDOW");
	const char *m = getenv("NSR_TEST_INDEX_RESULTS_MEM");
	const char *t = getenv("NSR_INDEX_TABLE_MEM");
	int n = e ? atoi(e) : 0;
	long wn = w ? atol(w) : 0, tm = TABLE_MEM_MB;
	char *end = NULL;

	g_ix.root = d->root;
	if (ix_authz_init(d->root) != NSR_OK) {
		nsr_error("out of memory for the access policy");
		return -1;
	}
	if (nsr_cfi_cursors_new(IX_CURSORS_MAX, &g_ix.cursors) != NSR_OK) {
		nsr_error("out of memory for the kept queries");
		return -1;
	}
	g_ix.max_open = n >= 1 && n <= MAX_OPEN ? n : MAX_OPEN;
	if (t != NULL) {
		errno = 0;
		tm = strtol(t, &end, 10);
		if (errno || end == t || *end || tm < 0 || tm > 65536) {
			nsr_error("NSR_INDEX_TABLE_MEM=%s: give MiB from 0 to "
				  "65536", t);
			return -1;
		}
	}
	g_ix.table_mem = (size_t)tm << 20;
	if (wn > 0) /* the range is checked there */
		nsr_cfi_set_list_window((size_t)wn);
	if (m != NULL && atol(m) >= 0) /* so is this one's */
		nsr_cfi_set_results_mem((size_t)atol(m));
	return 0;
}

/* ix_stop - close every open index. */
static void ix_stop(struct nsr_daemon *d)
{
	NSR_UNUSED(d);
	for (int i = 0; i < g_ix.nopen; i++) {
		nsr_cfi_close(g_ix.open[i].cfi);
		free(g_ix.open[i].client);
	}
	g_ix.nopen = 0;
	nsr_cfi_cursors_free(g_ix.cursors);
	g_ix.cursors = NULL;
}

/* Everything nsrindexd writes is under <root>/index (-u runs it as a
 * user). */
static const char *const ix_dirs[] = {"index", NULL};

static const struct nsr_daemon_ops ix_ops = {
	.name = "nsrindexd",
	.summary = "OpenNSR client file index daemon",
	.progs = ix_progs,
	.nprogs = NSR_ARRAY_SIZE(ix_progs),
	.own_dirs = ix_dirs,
	.init = ix_init,
	.stop = ix_stop,
};

/* main - parse options, do the work, exit status. */
int main(int argc, char **argv)
{
	return nsr_daemon_main(argc, argv, &ix_ops, &g_ix);
}
