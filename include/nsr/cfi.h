/*
 * cfi.h - the client file index: which files each save set of a client
 * holds, and where in the save stream.
 *
 * Layout (see nsr_index(5)): <root>/index/<client>/ holds
 *   catalog          the committed save sets (replaced atomically)
 *   ss-<ssid>.rec    one append-only record file per save set
 *   lock             flock'ed by the one writer (readers take no lock:
 *                    they only see whole catalogues, renamed into place)
 * Each record carries its own CRC-32C.  A save set becomes visible only
 * when nsr_cfi_commit() has fsync'ed its record file and durably replaced
 * the catalogue; record files of uncommitted save sets are ignored and
 * removed by the next writer open.
 *
 * Paths are stored as saved (absolute for absolute saves).  Browsing is
 * "as of a time": a lookup at browse time T uses the committed save sets
 * with savetime <= T, and for each path the version from the newest of them
 * that holds it (a full save followed by incrementals merges naturally).
 * A save set also records the complete entry list of each directory it
 * read (nsr_cfi_add_list); a directory browsed at T then shows only the
 * names of its newest list at or before T (and what save sets newer than
 * that list hold in it), so files deleted or renamed away before T are
 * gone.  A directory with no list at or before T (an index written before
 * lists existed) shows every child of every save set at or before T.
 *
 * Errors are sticky: after a failed write, a save set accepts only
 * nsr_cfi_abort(); after a failed catalogue update (commit or delete) the
 * handle answers NSR_ERR_STATE to everything until it is closed and
 * reopened, which reloads the state from disk.
 *
 * Entry pointers handed to visit callbacks are valid only during the call.
 * A callback returning non-zero stops the walk and that value is returned.
 */
#ifndef NSR_CFI_H
#define NSR_CFI_H

#include <stddef.h>
#include <stdint.h>

struct nsr_asm_file;

/* bound of one encoded entry: 46 bytes and a path of up to 65535 (a
 * directory list record may be a little larger: nsr_index(5)) */
#define NSR_CFI_MAX_RECORD (46 + 65535)
#define NSR_CFI_CLIENT_MAX 255

/* An entry's mode bit beside the permission bits (07777): a regular file
 * whose data is split over the save sets of its PSS save point (asm.h);
 * a recover of it reads the master's dependents too. */
#define NSR_CFI_SPLIT 0200000u
#define NSR_CFI_MODE_MAX (07777u | NSR_CFI_SPLIT)

/* One index entry: a file of a save set. */
struct nsr_cfi_entry {
	const char *path;
	int type; /* enum nsr_asm_ftype */
	uint32_t mode;
	uint32_t uid, gid;
	uint64_t size;
	int64_t mtime;	     /* seconds */
	uint32_t mtime_nsec;
	uint64_t offset;     /* stream offset of the FILE record */
};

/* A committed save set as the catalogue describes it. */
struct nsr_cfi_saveset {
	uint64_t ssid;
	int64_t savetime;
	uint64_t entries;
	const char *name;
};

typedef int (*nsr_cfi_visit_fn)(void *ctx, const struct nsr_cfi_saveset *ss,
				const struct nsr_cfi_entry *e);
typedef int (*nsr_cfi_ss_fn)(void *ctx, const struct nsr_cfi_saveset *ss);

enum nsr_cfi_flags {
	NSR_CFI_RDONLY = 1, /* browse only: no lock, no changes */
	NSR_CFI_CREATE = 2, /* create <root>/index/<client> if missing */
};

struct nsr_cfi;

/* nsr_cfi_open - open the index of client under root.  NSR_ERR_INVAL (bad
 * client name: empty, "/" or leading "."), NSR_ERR_NOTFOUND (no index and no
 * CREATE), NSR_ERR_BUSY (another writer holds it), NSR_ERR_CORRUPT (bad
 * catalogue), NSR_ERR_SYSTEM, NSR_ERR_NOMEM. */
int nsr_cfi_open(struct nsr_cfi **out, const char *root, const char *client,
		 int flags);
/* nsr_cfi_close - close (NULL is fine); uncommitted save sets are dropped,
 * so a daemon that closes idle indexes must skip busy ones
 * (nsr_cfi_busy). */
void nsr_cfi_close(struct nsr_cfi *c);

/* nsr_cfi_busy - the number of save sets begun and not yet committed or
 * aborted. */
size_t nsr_cfi_busy(const struct nsr_cfi *c);
/* nsr_cfi_tables_held - bytes of directory tables the open indexes of
 * this process hold: a save set's table, read for a lookup, is kept for
 * the next one (a committed record file never changes). */
size_t nsr_cfi_tables_held(void);
/* nsr_cfi_trim_tables - let c's directory tables go, the least recently
 * used first, until the process holds at most keep bytes of tables or c
 * holds none (a later lookup reads one again).  Only between calls on
 * c: a lookup running on c may be using them.  The bytes the process
 * still holds. */
size_t nsr_cfi_trim_tables(struct nsr_cfi *c, size_t keep);
/* nsr_cfi_error - NSR_ERR_STATE when a failed catalogue replacement left
 * the handle refusing all work until it is reopened (whatever error the
 * failing call returned), else NSR_OK. */
int nsr_cfi_error(const struct nsr_cfi *c);
/* nsr_cfi_begin - start writing save set ssid.  NSR_ERR_EXISTS if it is
 * committed or being written, NSR_ERR_READONLY. */
int nsr_cfi_begin(struct nsr_cfi *c, uint64_t ssid, int64_t savetime,
		  const char *name);
/* nsr_cfi_add - append n entries to a begun save set (buffered).
 * NSR_ERR_NOTFOUND (not begun), NSR_ERR_TOOBIG (entry over the bound). */
int nsr_cfi_add(struct nsr_cfi *c, uint64_t ssid,
		const struct nsr_cfi_entry *e, size_t n);
/* nsr_cfi_add_list - record directory dir's complete entry list in a
 * begun save set, in pieces: names[0..n) are entries first .. first+n-1
 * of a list of total names (a whole list: first 0, n = total; empty: 0,
 * 0, n 0).  Names are 1 to 255 bytes, without '/', not "." or "..",
 * sorted bytewise and unique across the pieces (as walk.h and the
 * DIRENTS record give them); a piece must continue the list (a list
 * left unfinished, as by a damaged stream, is ignored by readers).
 * NSR_ERR_INVAL (bad piece), NSR_ERR_NOTFOUND (not begun),
 * NSR_ERR_READONLY. */
int nsr_cfi_add_list(struct nsr_cfi *c, uint64_t ssid, const char *dir,
		     uint32_t total, uint32_t first,
		     const char *const *names, size_t n);
/* nsr_cfi_commit - make a begun save set durable and visible. */
int nsr_cfi_commit(struct nsr_cfi *c, uint64_t ssid);
/* nsr_cfi_abort - drop a begun save set. */
int nsr_cfi_abort(struct nsr_cfi *c, uint64_t ssid);
/* nsr_cfi_delete - remove a committed save set's entries (index purge).
 * While directory lists of other save sets refer to it, its record file
 * stays, "kept" in the catalogue and out of every browse; it goes at
 * the first delete after none does.  NSR_ERR_NOTFOUND if it is not in
 * the catalogue. */
int nsr_cfi_delete(struct nsr_cfi *c, uint64_t ssid);
/* nsr_cfi_delete_many - nsr_cfi_delete of ssids[0..n) with one
 * catalogue replacement (one fsync'ed write for the lot, not one per
 * save set).  An ssid that is not committed (absent, kept, being
 * written) or repeats is skipped; *removed (may be NULL) gets how many
 * were removed, so n - *removed were not found.  NSR_OK also when none
 * was (no catalogue write then).  On an error *removed is 0:
 * NSR_ERR_NOMEM (before any change), NSR_ERR_READONLY, NSR_ERR_STATE,
 * or the error of a failed catalogue replacement, which leaves all or
 * none of them removed on disk and the handle answering NSR_ERR_STATE
 * until it is reopened (see above). */
int nsr_cfi_delete_many(struct nsr_cfi *c, const uint64_t *ssids, size_t n,
			size_t *removed);

/* nsr_cfi_savesets - visit committed save sets, oldest first. */
int nsr_cfi_savesets(struct nsr_cfi *c, nsr_cfi_ss_fn visit, void *ctx);
/* nsr_cfi_entries - visit every entry of one committed save set in saved
 * order.  NSR_ERR_NOTFOUND, NSR_ERR_CORRUPT (bad record). */
int nsr_cfi_entries(struct nsr_cfi *c, uint64_t ssid, nsr_cfi_visit_fn visit,
		    void *ctx);
/* nsr_cfi_list_dir - the contents of directory dir as of browse time t
 * (each child once, newest version at or before t; with an entry list at
 * or before t, only what the newest list names), sorted by name. */
int nsr_cfi_list_dir(struct nsr_cfi *c, const char *dir, int64_t t,
		     nsr_cfi_visit_fn visit, void *ctx);
/* nsr_cfi_list_dir_from - the same from the skip-th entry on (paging).
 * A listing is built NSR_CFI_LIST_WINDOW names at a time and the handle
 * keeps the last such window until the catalogue changes or another
 * directory or time is listed, so pages read in order cost one scan of
 * the record files per window, not one each, and memory stays bounded
 * whatever the directory's size.  It keeps where each window reached so
 * far starts too, so a page of an earlier window (paging backwards)
 * costs one scan, that window's (a page that reaches its window's end
 * builds the next one to see what follows). */
int nsr_cfi_list_dir_from(struct nsr_cfi *c, const char *dir, int64_t t,
			  size_t skip, nsr_cfi_visit_fn visit, void *ctx);
/* Names of a listing built at a time (nsr_cfi_list_dir_from). */
#define NSR_CFI_LIST_WINDOW (256 * 1024)
/* nsr_cfi_set_list_window - a smaller window for this process (1 to
 * NSR_CFI_LIST_WINDOW; others are ignored): for tests, which cross
 * windows with few entries. */
void nsr_cfi_set_list_window(size_t n);
/* nsr_cfi_find - every version of path in save sets at or before t, newest
 * first (the first one is what a browse at t shows). */
int nsr_cfi_find(struct nsr_cfi *c, const char *path, int64_t t,
		 nsr_cfi_visit_fn visit, void *ctx);

/* nsr_cfi_entry_from_file - fill e from a stream file record (borrowing
 * f->path) and its stream offset; for saver/scanner callbacks.  A split
 * file's head gives the file's entry (its total size, NSR_CFI_SPLIT in
 * its mode); its parts are no entries: 0 then, else 1. */
int nsr_cfi_entry_from_file(struct nsr_cfi_entry *e,
			     const struct nsr_asm_file *f, uint64_t offset);

/* One problem found by nsr_cfi_check: ssid (0 for the catalogue) and a
 * short description. */
typedef void (*nsr_cfi_problem_fn)(void *ctx, uint64_t ssid,
				   const char *what);

/* nsr_cfi_check - integrity check: every committed (and kept) save set's
 * record file exists, decodes to its committed length with every CRC
 * right, holds as many entries as the catalogue says, (version 3 and 4)
 * its directory table names every record once, under its key, and
 * (version 4) each list it holds has its digest and each list it refers
 * to is held by the save set named.  *problems gets the count (0 =
 * healthy).  NSR_OK when the check ran, NSR_ERR_NOMEM, NSR_ERR_STATE. */
int nsr_cfi_check(struct nsr_cfi *c, nsr_cfi_problem_fn problem, void *ctx,
		  size_t *problems);

/* nsr_cfi_check_level - nsrck(8): level 1 checks quickly that every
 * committed save set's record file holds its committed length, with a
 * right header and (version 3 and 4) a directory table that parses; levels 2
 * to 6 do the full check of nsr_cfi_check.  NSR_ERR_INVAL (level not 1
 * to 6), else as nsr_cfi_check. */
int nsr_cfi_check_level(struct nsr_cfi *c, int level,
			nsr_cfi_problem_fn problem, void *ctx,
			size_t *problems);
/* nsr_cfi_clients - visit the names of the clients with an index under
 * root (valid names only), sorted; a visitor's non-zero value stops
 * and is returned.  NSR_ERR_NOTFOUND (no <root>/index), NSR_ERR_SYSTEM. */
int nsr_cfi_clients(const char *root, int (*visit)(void *ctx,
						   const char *client),
		    void *ctx);

/* nsr_cfi_crosscheck - compare the committed save sets with mm[0..n),
 * the ids of the client's browsable save sets in the media database,
 * sorted ascending (repeats allowed): each id on one side only is a
 * problem ("in the index, not a browsable save set in the media
 * database", or "browsable in the media database, not in the index").
 * NSR_ERR_NOMEM, NSR_ERR_STATE. */
int nsr_cfi_crosscheck(struct nsr_cfi *c, const uint64_t *mm, size_t n,
		       nsr_cfi_problem_fn problem, void *ctx,
		       size_t *problems);

/* ---- query results kept for paging (cfi_query_res.c) ------------- */

/*
 * A query gathers its results once into a result set; a daemon keeps it
 * as the cursor of the query and serves pages from it (no rescan per
 * page).  Entries are copies: they outlive catalogue changes.  Visited
 * save sets have ssid and savetime (name "", entries 0).
 * Invariants: 1. the first results, up to about NSR_CFI_RESULTS_MEM
 * bytes, are kept in memory, the rest in a spill file: an unnamed
 * temporary file in the client's index directory, gone with the result
 * set or its process (a killed process leaves nothing), read a page at
 * a time with one seek from a sparse index of bounded size; so a result
 * set holds as many results as the disk holds; 2. the order is the
 * query's and never changes once gathered; 3. a write error on the
 * spill file (NSR_ERR_NOSPACE, NSR_ERR_IO, NSR_ERR_SYSTEM) fails the
 * query, never shortens its results.  The spill file is made in the
 * index directory even for a read-only handle: a process that may not
 * write there fails a query past the bound (NSR_ERR_SYSTEM).
 */
struct nsr_cfi_results;

#define NSR_CFI_RESULTS_MEM (4u << 20)

/* nsr_cfi_set_results_mem - a smaller memory bound of this process's
 * result sets (0 to NSR_CFI_RESULTS_MEM bytes; 0: every result spills;
 * others are ignored): for tests. */
void nsr_cfi_set_results_mem(size_t bytes);
/* nsr_cfi_versions - every version of path in save sets at or before t,
 * newest first (the first one is what a browse at t shows). */
int nsr_cfi_versions(struct nsr_cfi *c, const char *path, int64_t t,
		     struct nsr_cfi_results **out);
/* nsr_cfi_match - every object under directory dir (at any depth) whose
 * name matches the fnmatch(3) pattern (NULL or "" = every name), as a
 * browse at t shows the tree (nsr_cfi_list_dir: deletions and renames
 * honoured), directories before what they hold (breadth first).
 * NSR_ERR_INVAL (empty dir), NSR_ERR_LIMIT (the directories found and
 * not listed yet take more than 64 MiB of paths: search a smaller
 * tree). */
int nsr_cfi_match(struct nsr_cfi *c, const char *dir, const char *pattern,
		  int64_t t, struct nsr_cfi_results **out);
/* nsr_cfi_saveset_results - the entries of committed save set ssid in
 * saved order.  NSR_ERR_NOTFOUND. */
int nsr_cfi_saveset_results(struct nsr_cfi *c, uint64_t ssid,
			    struct nsr_cfi_results **out);
/* nsr_cfi_results_count - how many results. */
size_t nsr_cfi_results_count(const struct nsr_cfi_results *r);
/* nsr_cfi_results_visit - visit results from .. from + n - 1 (fewer at
 * the end); stops at a non-zero return and returns it.  Reading spilled
 * results may fail: NSR_ERR_CORRUPT (a damaged spill file), NSR_ERR_IO,
 * NSR_ERR_SYSTEM, NSR_ERR_NOMEM. */
int nsr_cfi_results_visit(const struct nsr_cfi_results *r, size_t from,
			  size_t n, nsr_cfi_visit_fn visit, void *ctx);
/* nsr_cfi_results_spilled - how many results are in the spill file. */
size_t nsr_cfi_results_spilled(const struct nsr_cfi_results *r);
/* nsr_cfi_results_free - free (NULL is fine). */
void nsr_cfi_results_free(struct nsr_cfi_results *r);

/*
 * Cursors: result sets kept under ids for a daemon's paged queries.
 * Invariants: 1. at most max are kept; keeping one more drops the least
 * recently used (kept or fetched); 2. ids start at 1 and are never
 * reused, so a dropped cursor's id finds nothing; 3. a cursor is found
 * only with the client it was kept for.
 */
struct nsr_cfi_cursors;

/* nsr_cfi_cursors_new - an empty set of at most max (>= 1) cursors. */
int nsr_cfi_cursors_new(size_t max, struct nsr_cfi_cursors **out);
/* nsr_cfi_cursors_keep - keep r (owned from now on) for client; its id,
 * or 0 without memory (r is freed). */
uint64_t nsr_cfi_cursors_keep(struct nsr_cfi_cursors *k, const char *client,
			      struct nsr_cfi_results *r);
/* nsr_cfi_cursors_get - the results of cursor id of client (now the
 * most recently used), or NULL if not kept. */
const struct nsr_cfi_results *
nsr_cfi_cursors_get(struct nsr_cfi_cursors *k, const char *client,
		    uint64_t id);
/* nsr_cfi_cursors_drop - drop cursor id of client (unknown: nothing). */
void nsr_cfi_cursors_drop(struct nsr_cfi_cursors *k, const char *client,
			  uint64_t id);
/* nsr_cfi_cursors_free - drop all and free (NULL is fine). */
void nsr_cfi_cursors_free(struct nsr_cfi_cursors *k);

/* ---- rebuild from a save stream (scanner -i) ------------------------- */

struct nsr_cfi_rebuild;

/* nsr_cfi_rebuild_new - index the stream fed next as save set ssid (0 =
 * the ssid in the stream header; NSR_ERR_INVAL at the header if both are
 * 0).  A committed save set with that ssid is deleted when the stream
 * header arrives; the new one is committed by a successful finish. */
int nsr_cfi_rebuild_new(struct nsr_cfi_rebuild **out, struct nsr_cfi *c,
			uint64_t ssid);
/* nsr_cfi_rebuild_resync - on = 1: index the intact files of a damaged
 * stream (nsr_asm_dec_resync); finish then commits them and returns
 * NSR_ERR_CORRUPT to say the save set was damaged. */
void nsr_cfi_rebuild_resync(struct nsr_cfi_rebuild *rb, int on);
/* nsr_cfi_rebuild_feed - stream bytes in pieces of any size. */
int nsr_cfi_rebuild_feed(struct nsr_cfi_rebuild *rb, const void *p, size_t n);
/* nsr_cfi_rebuild_finish - commit if the stream was complete (or, with
 * resync, damaged but read to its end: NSR_ERR_CORRUPT after the commit). */
int nsr_cfi_rebuild_finish(struct nsr_cfi_rebuild *rb);
/* nsr_cfi_rebuild_free - free; an unfinished rebuild is aborted. */
void nsr_cfi_rebuild_free(struct nsr_cfi_rebuild *rb);

/* ---- record codec (exposed for tests and fuzzing) -------------------- */

/* nsr_cfi_decode_file - decode a whole save set record file image: header
 * then records; visit gets each entry (ss has ssid/savetime from the file
 * header, name ""); directory list records are checked, not visited.
 * NSR_ERR_CORRUPT, NSR_ERR_CHECKSUM, NSR_ERR_TRUNCATED for a torn last
 * record. */
int nsr_cfi_decode_file(const void *p, size_t n, nsr_cfi_visit_fn visit,
			void *ctx);

/* nsr_cfi_decode_spill - decode a whole spill file image of query
 * results (nsr_index(5)); visit gets each entry with its ssid and
 * savetime (name "").  NSR_ERR_CORRUPT, NSR_ERR_CHECKSUM,
 * NSR_ERR_TRUNCATED for a torn last record, NSR_ERR_NOMEM. */
int nsr_cfi_decode_spill(const void *p, size_t n, nsr_cfi_visit_fn visit,
			 void *ctx);

/* nsr_cfi_decode_catalog - decode a catalogue file image and visit its
 * save sets in stored order.  NSR_ERR_CORRUPT, NSR_ERR_CHECKSUM,
 * NSR_ERR_UNSUPPORTED, NSR_ERR_NOMEM. */
int nsr_cfi_decode_catalog(const void *p, size_t n, nsr_cfi_ss_fn visit,
			   void *ctx);

#endif /* NSR_CFI_H */
