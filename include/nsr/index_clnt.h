/*
 * index_clnt.h - client side of nsrindexd's protocol (src/rpc/nsrindex.x),
 * used by save (adding entries), recover (browsing) and scanner -i.
 *
 * Calling sequence for a save:
 *   nsr_ixclnt_open(server, &ix, err);
 *   nsr_ixclnt_begin(ix, client, ssid, savetime, name);
 *   nsr_ixclnt_add(ix, &entry) per file    (batched: one RPC per 512)
 *   nsr_ixclnt_add_list(ix, dir, names, n) per directory read (batched)
 *   nsr_ixclnt_commit(ix)                  flushes, then durable commit
 *   nsr_ixclnt_close(ix)
 * Errors are nsr_err codes; nsr_ixclnt_errmsg() has the words.
 */
#ifndef NSR_INDEX_CLNT_H
#define NSR_INDEX_CLNT_H

#include <stdint.h>

#include "nsr/cfi.h"
#include "nsr/rpc/nsrindex.h"

struct nsr_buf;
struct nsr_ixclnt;

/* nsr_ixclnt_open - locate nsrindexd on server and connect now; on
 * failure err gets the reason naming the host. */
int nsr_ixclnt_open(const char *server, struct nsr_ixclnt **out,
		    struct nsr_buf *err);
/* nsr_ixclnt_new - a long-lived handle (for daemons): connects on its
 * first call, waiting up to wait_ms for a restarting nsrindexd; lookups
 * and deletes are repeated once after a transport failure.  A save's
 * begin/add/commit belong to one connection and are never repeated. */
int nsr_ixclnt_new(const char *server, int wait_ms, struct nsr_ixclnt **out);
void nsr_ixclnt_close(struct nsr_ixclnt *ix);
const char *nsr_ixclnt_errmsg(const struct nsr_ixclnt *ix);

int nsr_ixclnt_begin(struct nsr_ixclnt *ix, const char *client, uint64_t ssid,
		     int64_t savetime, const char *name);
/* nsr_ixclnt_add - queue one entry (copied); sends a batch when full. */
int nsr_ixclnt_add(struct nsr_ixclnt *ix, const struct nsr_cfi_entry *e);
/* nsr_ixclnt_add_list - queue directory dir's complete entry list
 * (names sorted bytewise, as walk.h gives them; copied); sends a batch
 * when full.  nsrindexd checks the names (nsr_cfi_add_list). */
int nsr_ixclnt_add_list(struct nsr_ixclnt *ix, const char *dir,
			const char *const *names, size_t n);
int nsr_ixclnt_commit(struct nsr_ixclnt *ix);
int nsr_ixclnt_abort(struct nsr_ixclnt *ix);
/* nsr_ixclnt_delete - drop the entries of a committed save set. */
int nsr_ixclnt_delete(struct nsr_ixclnt *ix, const char *client, uint64_t ssid);
/* nsr_ixclnt_delete_many - drop the entries of the committed save sets
 * ssids[0..n) of client: IX_DELETE_MANY, one catalogue replacement per
 * IX_DELETE_MAX of them, in order; from an nsrindexd that does not know
 * it (PROC_UNAVAIL, remembered by the handle) one IX_DELETE each.
 * ssids not in the index are no failure.  *done (may be NULL) gets how
 * many of the first ssids were dealt with (removed or not found) before
 * a failure, n on success; *removed (may be NULL) how many of them were
 * removed (a batch repeated after a transport failure counts what its
 * first attempt removed as not found).  The first failure stops it. */
int nsr_ixclnt_delete_many(struct nsr_ixclnt *ix, const char *client,
			   const uint64_t *ssids, size_t n, size_t *done,
			   size_t *removed);

/* Browsing: fn gets each entry (ss->ssid / ss->savetime say where it is).
 * nsr_ixclnt_find: every version of path in save sets at or before t
 * (0 = now), newest first -- the first is what a browse at t shows;
 * nsr_ixclnt_list: the contents of directory dir as of t, sorted. */
int nsr_ixclnt_find(struct nsr_ixclnt *ix, const char *client, const char *path,
		    int64_t t, nsr_cfi_visit_fn fn, void *arg);
int nsr_ixclnt_list(struct nsr_ixclnt *ix, const char *client, const char *dir,
		    int64_t t, nsr_cfi_visit_fn fn, void *arg);

/* Queries kept as cursors at nsrindexd (IX_QUERY, IX_PAGE): the results
 * are gathered once there and streamed page by page to fn (no rescan per
 * page); fn returning non-zero stops and that value is returned.
 * IX_Q_VERSIONS: every version of path at or before time (0 = now),
 * newest first; IX_Q_MATCH: objects under directory path whose names
 * match pattern (fnmatch; "" = all) as a browse at time shows them;
 * IX_Q_SAVESET: the entries of save set ssid (NSR_ERR_NOTFOUND if the
 * index has none). */
struct nsr_ixclnt_q {
	const char *client;
	int kind; /* enum ix_query_kind */
	const char *path, *pattern;
	int64_t time;
	uint64_t ssid;
};

int nsr_ixclnt_query(struct nsr_ixclnt *ix, const struct nsr_ixclnt_q *q,
		     nsr_cfi_visit_fn fn, void *arg);
/* nsr_ixclnt_savesets - a client's committed save sets, oldest first
 * (ss->name borrowed during the call). */
int nsr_ixclnt_savesets(struct nsr_ixclnt *ix, const char *client,
			nsr_cfi_ss_fn fn, void *arg);

/* Wire conversions (shared with nsrindexd).  to_wire copies the path
 * (xdr_free frees it; NSR_ERR_NOMEM without memory); from_wire borrows
 * w's path. */
int nsr_ix_entry_to_wire(const struct nsr_cfi_entry *e, ix_entry *w);
void nsr_ix_entry_from_wire(const ix_entry *w, struct nsr_cfi_entry *e);

#endif /* NSR_INDEX_CLNT_H */
