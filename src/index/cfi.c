/*
 * cfi.c - the client file index of one client: the catalogue of committed
 * save sets, the append-only record file of each save set, and lookups
 * as of a browse time (see cfi.h and nsr_index(5)).
 *
 * Invariants:
 *  1. A save set is visible only through the catalogue, and the catalogue
 *     names it only after its record file was fsync'ed (commit order:
 *     flush, fsync record file, replace catalogue durably).
 *  2. Readers read a record file only up to the length the catalogue
 *     recorded at commit, so bytes past it (a torn write) are never seen.
 *  3. One writer per client index (flock on "lock"); readers take no lock,
 *     they only ever see whole catalogues (atomic rename).
 *  4. Record files that the catalogue does not name are leftovers of an
 *     interrupted save or delete; a writer removes them at open.
 *  5. Errors are sticky.  A failed write to a save set's record file
 *     leaves an unknown tail, so that save set refuses further work (only
 *     abort).  A failed catalogue replacement leaves the disk in one of two
 *     states we cannot tell apart, so the whole handle refuses work with
 *     NSR_ERR_STATE until it is reopened, which reloads the truth; the
 *     record file of a save set whose commit failed that way is kept (if
 *     the new catalogue did not land, the next writer removes it).
 *  6. A directory listing is built a window at a time: the first
 *     cfi_list_window names of the listing after a name (none: from the
 *     start), every version of each, so memory is bounded whatever the
 *     directory's size and the pages of a window cost no new scan.  The
 *     last window built is kept until the catalogue changes (commit,
 *     delete) or another listing (directory, time or window size) is
 *     asked for: its hits index c->ss, which a change reorders.  Window
 *     w + 1 starts after the last name window w considered (its bound),
 *     so the windows of a listing partition its names in order and a
 *     listing of n names costs n / cfi_list_window + 1 scans when read
 *     in page order.  With the kept window, the listing keeps where
 *     every window built so far starts (the name it starts after and
 *     the listing index of its first hit; ws[0] is the start), so a
 *     page in any window already reached, before the kept one (paging
 *     backwards) or after it, costs one scan: that window's.
 *  7. A record file (version 3) ends with its directory table, appended
 *     once, at commit: after that the save set takes no more records.
 *     A committed save set's table, once read, is kept with it in c->ss
 *     (a committed record file never changes) and freed with it, or
 *     earlier by nsr_cfi_trim_tables between calls (then read again when
 *     asked for); within a call a table read stays, as lookups hold
 *     pointers into a save set's table while they read another's.
 *  8. A directory's first whole list in a save set is, in its table,
 *     either its pieces and their digest (form 1), or, when the newest
 *     earlier list of that directory has the same digest, only the
 *     digest and the ssid of the save set whose pieces hold it (form
 *     2): then the writer takes the list's records back out of pending,
 *     which it does not flush while a list may still go that way.  A
 *     form 2 list always names a form 1 holder, a committed save set
 *     when the list was added.
 *  9. A deleted save set that a committed or begun save set's list
 *     names stays, "kept", in the catalogue (c->kept) with its record
 *     file, invisible to browsing; a kept one no list names any more
 *     goes at the next delete.  A delete of many save sets replaces the
 *     catalogue once, as if each were deleted in turn.  A writer never
 *     names a kept one anew.
 */
#include "nsr/compat.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nsr/asm.h"
#include "nsr/buf.h"
#include "nsr/bytes.h"
#include "nsr/cmp.h"
#include "nsr/crc32c.h"
#include "nsr/err.h"
#include "nsr/fileio.h"

#include "cfi_int.h"
#include "cfi_query_int.h"

#define FLUSH_AT (256 * 1024) /* buffered record bytes before a write */
#define LIST_HOLD (64u << 20) /* pending bytes a list may hold back */

/* Names of a listing held at a time (invariant 6; tests make it small
 * with nsr_cfi_set_list_window). */
static size_t cfi_list_window = NSR_CFI_LIST_WINDOW;
/* Windows built since the process started (tests count scans). */
size_t cfi_list_windows;

/* A save set being written. */
struct cfi_open_ss {
	uint64_t ssid;
	int64_t savetime;
	char *name;
	int fd;
	uint64_t entries;
	uint64_t length; /* bytes written to fd */
	struct nsr_buf pending;
	int err;	 /* sticky: a write failed */
	int keep;	 /* commit was attempted: never unlink the file */
	char *ldir;	 /* the directory list being added, if any */
	uint32_t ltotal, lnext;
	char llast[CFI_LIST_NAME_MAX + 1]; /* its last name so far */
	struct cfi_dirmap *map; /* its directory table so far */
	struct cfi_blk blk;	/* the entry block being built */
	int sealed;		/* the table is in pending or written */
	/* the list being added (invariant 8) */
	struct cfi_digest *lmd; /* its digest so far */
	size_t lpend;		/* pending.len where its records start */
	size_t lpieces;		/* its records so far */
	int lfresh;		/* the directory's first list here */
	int lcand;		/* its records are all still in pending */
};

/* One candidate of a directory listing. */
struct hit {
	struct nsr_cfi_entry e; /* e.path owned */
	size_t rank;		/* 0 = newest save set */
	size_t seq;		/* order within the scan */
	size_t ssi;		/* index into c->ss */
};

/* Where a window of a listing starts (invariant 6). */
struct cfi_wstart {
	char *after; /* the name it starts after; NULL = the start */
	size_t base; /* the listing's index of its first hit */
};

/* The window of a directory listing kept, so that the next page of it
 * costs no new scan, and where each window reached starts, so that a
 * page of any of them costs one (invariant 6). */
struct cfi_listing {
	char *dir; /* NULL = none kept */
	int64_t t;
	size_t wsize; /* cfi_list_window when the listing began */
	struct hit *hits;
	size_t n;
	size_t base; /* the listing's index of hits[0] */
	char *bound; /* the last name the window considered; NULL = the
		      * window ends the listing */
	size_t w;    /* the kept window's number: ws[w] */
	struct cfi_wstart *ws; /* windows 0 .. nws - 1 reached so far */
	size_t nws, capws;
};

struct nsr_cfi {
	char *dir;
	int rdonly;
	int lock_fd;
	struct cfi_ss *ss; /* committed, sorted by savetime then ssid */
	size_t nss;
	struct cfi_ss *kept; /* deleted, holding lists (invariant 9) */
	size_t nkept;
	struct cfi_open_ss *open;
	size_t nopen;
	int err; /* sticky NSR_ERR_STATE after a failed catalogue update */
	struct cfi_listing last;
};

/* valid_client - a client name usable as one directory name. */
static int valid_client(const char *c)
{
	size_t n = c ? strlen(c) : 0;

	return n > 0 && n <= NSR_CFI_CLIENT_MAX && c[0] != '.' &&
	       strchr(c, '/') == NULL;
}

/* rec_path - malloc'ed path of a save set's record file. */
static char *rec_path(const struct nsr_cfi *c, uint64_t ssid)
{
	char *p = NULL;

	if (asprintf(&p, "%s/ss-%" PRIu64 ".rec", c->dir, ssid) < 0)
		return NULL;
	return p;
}

/* cmp_ss - order save sets by savetime, then ssid. */
static int cmp_ss(const void *a, const void *b)
{
	const struct cfi_ss *x = a, *y = b;

	if (x->savetime != y->savetime)
		return x->savetime < y->savetime ? -1 : 1;
	if (x->ssid != y->ssid)
		return x->ssid < y->ssid ? -1 : 1;
	return 0;
}

/* find_ss - index of committed ssid or -1. */
static ssize_t find_ss(const struct nsr_cfi *c, uint64_t ssid)
{
	for (size_t i = 0; i < c->nss; i++)
		if (c->ss[i].ssid == ssid)
			return (ssize_t)i;
	return -1;
}

/* find_kept - index of kept ssid or -1. */
static ssize_t find_kept(const struct nsr_cfi *c, uint64_t ssid)
{
	for (size_t i = 0; i < c->nkept; i++)
		if (c->kept[i].ssid == ssid)
			return (ssize_t)i;
	return -1;
}

/* find_holder - the committed or kept save set ssid (struct
 * cfi_holders). */
static struct cfi_ss *find_holder(void *ctx, uint64_t ssid)
{
	struct nsr_cfi *c = ctx;
	ssize_t i = find_ss(c, ssid);

	if (i >= 0)
		return &c->ss[i];
	i = find_kept(c, ssid);
	return i >= 0 ? &c->kept[i] : NULL;
}

/* find_open - the begun save set ssid or NULL. */
static struct cfi_open_ss *find_open(struct nsr_cfi *c, uint64_t ssid)
{
	for (size_t i = 0; i < c->nopen; i++)
		if (c->open[i].ssid == ssid)
			return &c->open[i];
	return NULL;
}

/* check_unique - NSR_ERR_CORRUPT if two catalogue entries share an ssid
 * (sorted copy of the ids: n log n, not a pair-wise scan at every open). */
static int check_unique(const struct cfi_ss *ss, size_t n)
{
	uint64_t *id;
	int rc = NSR_OK;

	if (n < 2)
		return NSR_OK;
	id = malloc(n * sizeof(*id));
	if (id == NULL)
		return NSR_ERR_NOMEM;
	for (size_t i = 0; i < n; i++)
		id[i] = ss[i].ssid;
	qsort(id, n, sizeof(*id), nsr_cmp_u64);
	for (size_t i = 1; i < n && rc == NSR_OK; i++)
		if (id[i] == id[i - 1])
			rc = NSR_ERR_CORRUPT;
	free(id);
	return rc;
}

/* load_catalog - read the catalogue (absent = empty). */
static int load_catalog(struct nsr_cfi *c)
{
	struct nsr_buf b;
	char *path = nsr_path_join(c->dir, "catalog");
	int rc;

	nsr_buf_init(&b, 0);
	rc = nsr_file_read(path, &b, (size_t)1 << 30);
	free(path);
	if (rc == NSR_ERR_NOTFOUND) {
		rc = NSR_OK;
		goto out;
	}
	if (rc)
		goto out;
	rc = cfi_cat_get((const uint8_t *)b.data, b.len, &c->ss, &c->nss,
			 &c->kept, &c->nkept);
	if (rc)
		goto out;
	qsort(c->ss, c->nss, sizeof(*c->ss), cmp_ss);
	rc = check_unique(c->ss, c->nss);
	/* a kept one is neither browsable nor kept twice */
	for (size_t i = 0; i < c->nkept && rc == NSR_OK; i++)
		if (find_ss(c, c->kept[i].ssid) >= 0 ||
		    find_kept(c, c->kept[i].ssid) != (ssize_t)i)
			rc = NSR_ERR_CORRUPT;
out:
	nsr_buf_release(&b);
	return rc;
}

/* save_catalog - durably replace the catalogue with c->ss. */
static int save_catalog(struct nsr_cfi *c)
{
	struct nsr_buf b;
	char *path = nsr_path_join(c->dir, "catalog");
	int rc;

	nsr_buf_init(&b, 0);
	rc = cfi_cat_put(&b, c->ss, c->nss, c->kept, c->nkept);
	if (rc == NSR_OK)
		rc = nsr_file_replace(path, b.data, b.len, 0600);
	nsr_buf_release(&b);
	free(path);
	return rc;
}

/* cfi_dir_of - the index directory of c. */
const char *cfi_dir_of(const struct nsr_cfi *c)
{
	return c->dir;
}

/* remove_leftovers - record files the catalogue does not name, and
 * spill files of query results a killed process left named (only
 * without O_TMPFILE, between their creation and unlink:
 * cfi_query_res.c).  The catalogue's ssids are sorted once for the
 * look (a client keeps thousands of save sets, each with a file). */
static void remove_leftovers(struct nsr_cfi *c)
{
	uint64_t *ids = malloc((c->nss + c->nkept + 1) * sizeof(*ids));
	DIR *d = ids ? opendir(c->dir) : NULL;
	size_t n = 0;
	struct dirent *de;

	if (d == NULL) {
		free(ids);
		return;
	}
	for (size_t i = 0; i < c->nss; i++)
		ids[n++] = c->ss[i].ssid;
	for (size_t i = 0; i < c->nkept; i++)
		ids[n++] = c->kept[i].ssid;
	qsort(ids, n, sizeof(*ids), nsr_cmp_u64);
	for (de = readdir(d); de != NULL; de = readdir(d)) {
		unsigned long long id;
		char tail[8];

		if (strncmp(de->d_name, CFI_SPILL_NAME,
			    strlen(CFI_SPILL_NAME)) == 0) {
			unlinkat(dirfd(d), de->d_name, 0);
			continue;
		}
		if (sscanf(de->d_name, "ss-%llu.re%1s", &id, tail) != 2 ||
		    strcmp(tail, "c") != 0)
			continue;
		if (!bsearch(&(uint64_t){id}, ids, n, sizeof(*ids),
			     nsr_cmp_u64))
			unlinkat(dirfd(d), de->d_name, 0);
	}
	closedir(d);
	free(ids);
}

/* nsr_cfi_open - open (or create) the index of one client. */
int nsr_cfi_open(struct nsr_cfi **out, const char *root, const char *client,
		 int flags)
{
	struct nsr_cfi *c;
	struct stat st;
	char *idx = NULL;
	int rc;

	*out = NULL;
	if (root == NULL || !valid_client(client))
		return NSR_ERR_INVAL;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NSR_ERR_NOMEM;
	c->lock_fd = -1;
	c->rdonly = (flags & NSR_CFI_RDONLY) != 0;
	idx = nsr_path_join(root, "index");
	c->dir = nsr_path_join(idx, client);
	free(idx);
	if (stat(c->dir, &st) != 0) {
		rc = NSR_ERR_NOTFOUND;
		if (errno != ENOENT || !(flags & NSR_CFI_CREATE) || c->rdonly)
			goto fail;
		rc = nsr_mkdir_p(c->dir, 0700);
		if (rc)
			goto fail;
	}
	if (!c->rdonly) {
		char *lp = nsr_path_join(c->dir, "lock");

		c->lock_fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		free(lp);
		rc = NSR_ERR_SYSTEM;
		if (c->lock_fd < 0)
			goto fail;
		rc = NSR_ERR_BUSY;
		if (flock(c->lock_fd, LOCK_EX | LOCK_NB) != 0)
			goto fail;
	}
	rc = load_catalog(c);
	if (rc)
		goto fail;
	if (!c->rdonly)
		remove_leftovers(c);
	*out = c;
	return NSR_OK;
fail:
	nsr_cfi_close(c);
	return rc;
}

/* open_release - drop a begun save set (file removed). */
static void open_release(struct nsr_cfi *c, struct cfi_open_ss *o)
{
	char *p = rec_path(c, o->ssid);

	if (o->fd >= 0)
		close(o->fd);
	if (p != NULL && !o->keep)
		unlink(p);
	free(p);
	free(o->name);
	free(o->ldir);
	cfi_digest_free(o->lmd);
	cfi_dirmap_free(o->map);
	cfi_blk_release(&o->blk);
	nsr_buf_release(&o->pending);
	*o = c->open[--c->nopen];
}

/* listing_release - forget the kept listing (invariant 6). */
static void listing_release(struct cfi_listing *k)
{
	for (size_t i = 0; i < k->n; i++)
		free((char *)k->hits[i].e.path);
	free(k->hits);
	free(k->dir);
	free(k->bound);
	for (size_t i = 0; i < k->nws; i++)
		free(k->ws[i].after);
	free(k->ws);
	memset(k, 0, sizeof(*k));
}

/* nsr_cfi_close - close the index, dropping uncommitted save sets. */
void nsr_cfi_close(struct nsr_cfi *c)
{
	if (c == NULL)
		return;
	while (c->nopen > 0)
		open_release(c, &c->open[c->nopen - 1]);
	listing_release(&c->last);
	free(c->open);
	cfi_ss_free(c->ss, c->nss);
	cfi_ss_free(c->kept, c->nkept);
	if (c->lock_fd >= 0)
		close(c->lock_fd);
	free(c->dir);
	free(c);
}

/* nsr_cfi_busy - save sets begun and not yet committed or aborted. */
size_t nsr_cfi_busy(const struct nsr_cfi *c)
{
	return c->nopen;
}

/* by_use - qsort order of save sets (pointers) by their tables' last
 * use, the oldest first. */
static int by_use(const void *a, const void *b)
{
	const struct cfi_ss *x = *(struct cfi_ss *const *)a;
	const struct cfi_ss *y = *(struct cfi_ss *const *)b;

	return NSR_CMP(x->tab_used, y->tab_used);
}

/* let_go - forget s's table (invariant 7: read again when asked for). */
static void let_go(struct cfi_ss *s)
{
	cfi_tab_free(s->tab);
	s->tab = NULL;
	s->tabstate = 0;
}

/* nsr_cfi_trim_tables - let c's tables go, least recently used first,
 * until the process holds at most keep bytes of them or c none. */
size_t nsr_cfi_trim_tables(struct nsr_cfi *c, size_t keep)
{
	struct cfi_ss **v;
	size_t n = 0;

	if (nsr_cfi_tables_held() <= keep)
		return nsr_cfi_tables_held();
	v = malloc((c->nss + c->nkept + 1) * sizeof(*v));
	for (size_t i = 0; i < c->nss + c->nkept; i++) {
		struct cfi_ss *s =
			i < c->nss ? &c->ss[i] : &c->kept[i - c->nss];

		if (s->tabstate != 1)
			continue;
		if (v)
			v[n++] = s;
		else if (nsr_cfi_tables_held() > keep)
			let_go(s); /* no memory to sort: in any order */
	}
	if (v) {
		qsort(v, n, sizeof(*v), by_use);
		for (size_t i = 0; i < n && nsr_cfi_tables_held() > keep; i++)
			let_go(v[i]);
		free(v);
	}
	return nsr_cfi_tables_held();
}

/* nsr_cfi_error - the sticky error of invariant 5, or NSR_OK. */
int nsr_cfi_error(const struct nsr_cfi *c)
{
	return c->err;
}

/* nsr_cfi_begin - start the record file of a new save set. */
int nsr_cfi_begin(struct nsr_cfi *c, uint64_t ssid, int64_t savetime,
		  const char *name)
{
	struct cfi_open_ss *o, *no;
	uint8_t hdr[CFI_HDR_LEN];
	char *p;
	int rc;

	if (c->rdonly)
		return NSR_ERR_READONLY;
	if (c->err)
		return c->err;
	if (name == NULL || strlen(name) > CFI_NAME_MAX)
		return NSR_ERR_INVAL;
	if (find_ss(c, ssid) >= 0 || find_kept(c, ssid) >= 0 ||
	    find_open(c, ssid) != NULL)
		return NSR_ERR_EXISTS; /* a kept one's file is still there */
	no = realloc(c->open, (c->nopen + 1) * sizeof(*no));
	if (no == NULL)
		return NSR_ERR_NOMEM;
	c->open = no;
	o = &c->open[c->nopen];
	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->ssid = ssid;
	o->savetime = savetime;
	nsr_buf_init(&o->pending, 0);
	o->name = strdup(name);
	o->map = cfi_dirmap_new();
	rc = cfi_blk_init(&o->blk);
	p = rec_path(c, ssid);
	if (o->name == NULL || p == NULL || o->map == NULL || rc) {
		free(o->name);
		cfi_dirmap_free(o->map);
		cfi_blk_release(&o->blk);
		free(p);
		return NSR_ERR_NOMEM;
	}
	o->fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	free(p);
	if (o->fd < 0) {
		free(o->name);
		cfi_dirmap_free(o->map);
		cfi_blk_release(&o->blk);
		return NSR_ERR_SYSTEM;
	}
	c->nopen++;
	cfi_hdr_put(hdr, ssid, savetime);
	rc = nsr_buf_add(&o->pending, hdr, sizeof(hdr));
	if (rc)
		open_release(c, o);
	return rc;
}

/* flush - write buffered records of o. */
static int flush(struct cfi_open_ss *o)
{
	int rc;

	if (o->err)
		return o->err;
	if (o->pending.len == 0)
		return NSR_OK;
	rc = nsr_write_full(o->fd, o->pending.data, o->pending.len);
	if (rc) {
		o->err = rc; /* an unknown part was written: invariant 5 */
		return rc;
	}
	o->length += o->pending.len;
	nsr_buf_reset(&o->pending);
	return NSR_OK;
}

/* open_for_add - the begun save set ssid, if it may take records. */
static int open_for_add(struct nsr_cfi *c, uint64_t ssid,
			struct cfi_open_ss **out)
{
	*out = find_open(c, ssid);
	if (c->rdonly)
		return NSR_ERR_READONLY;
	if (c->err)
		return c->err;
	if (*out == NULL)
		return NSR_ERR_NOTFOUND;
	if ((*out)->sealed)
		return NSR_ERR_STATE; /* a commit began */
	return (*out)->err;
}

/* close_block - move the entry block being built, if any, into the
 * pending records and the directory table; write out what is pending
 * past FLUSH_AT. */
static int close_block(struct cfi_open_ss *o)
{
	uint64_t at = o->length + o->pending.len;
	int rc;

	if (o->blk.count == 0)
		return NSR_OK;
	rc = cfi_dirmap_add(o->map, o->blk.b.data + 8 + o->blk.kvar,
			    o->blk.klen, 0, at);
	if (rc == NSR_OK)
		rc = cfi_blk_put(&o->blk, &o->pending);
	if (rc == NSR_OK && o->pending.len >= FLUSH_AT)
		rc = flush(o);
	if (rc)
		o->err = rc;
	return rc;
}

/* add_single - append e as a record of its own (as version 2 wrote
 * every entry), after the block being built. */
static int add_single(struct cfi_open_ss *o, const struct nsr_cfi_entry *e,
		      size_t kl)
{
	uint64_t at;
	int rc = close_block(o);

	if (rc)
		return rc;
	at = o->length + o->pending.len;
	rc = cfi_rec_put(&o->pending, e);
	if (rc == NSR_OK)
		rc = cfi_dirmap_add(o->map, e->path, kl, 0, at);
	return rc;
}

/* nsr_cfi_add - append entries to a begun save set. */
int nsr_cfi_add(struct nsr_cfi *c, uint64_t ssid,
		const struct nsr_cfi_entry *e, size_t n)
{
	struct cfi_open_ss *o;
	int rc = open_for_add(c, ssid, &o);

	if (rc)
		return rc;
	o->lcand = 0; /* records now follow a list's: invariant 8 */
	for (size_t i = 0; i < n; i++) {
		size_t kl = e[i].path ? cfi_key_of(e[i].path) : 0;

		if (o->blk.count > 0 && !cfi_blk_joins(&o->blk, e[i].path, kl))
			rc = close_block(o);
		if (rc == NSR_OK)
			rc = cfi_blk_add(&o->blk, &e[i], kl);
		if (rc == NSR_ERR_UNSUPPORTED) /* alone, as version 2 did */
			rc = add_single(o, &e[i], kl);
		if (rc == NSR_ERR_INVAL)
			return NSR_ERR_TOOBIG; /* checked before any change */
		if (rc) {
			o->err = rc; /* the block may be half written */
			return rc;
		}
		o->entries++;
	}
	return NSR_OK;
}

/* list_piece_ok - names[0..n) may follow what o's list holds so far:
 * valid, sorted, unique, and the piece continues the list (first 0
 * starts one, once the one before is whole). */
static int list_piece_ok(const struct cfi_open_ss *o, const char *dir,
			 uint32_t total, uint32_t first,
			 const char *const *names, size_t n)
{
	size_t plen = strlen(dir);

	if (plen == 0 || plen > CFI_PATH_MAX || (n == 0) != (total == 0) ||
	    (uint64_t)first + n > total)
		return 0;
	if (first != 0 && (o->ldir == NULL || strcmp(o->ldir, dir) != 0 ||
			   o->ltotal != total || o->lnext != first))
		return 0;
	for (size_t i = 0; i < n; i++) {
		const char *prev = i > 0 ? names[i - 1]
				   : first > 0 ? o->llast : NULL;

		if (!cfi_name_ok(names[i], strlen(names[i])) ||
		    (prev != NULL && strcmp(prev, names[i]) >= 0))
			return 0;
	}
	return 1;
}

/* list_begin - a list of dir starts: hold its records back if it is
 * the directory's first here (invariant 8). */
static int list_begin(struct cfi_open_ss *o, const char *dir, uint32_t total)
{
	size_t pieces;
	const struct cfi_lform *lf = cfi_dirmap_lform(o->map, dir, strlen(dir),
						      &pieces);

	cfi_digest_free(o->lmd);
	o->lmd = NULL;
	o->lfresh = (lf == NULL || lf->form == 0) && pieces == 0;
	o->lcand = o->lfresh;
	o->lpend = o->pending.len;
	o->lpieces = 0;
	return o->lfresh ? cfi_digest_begin(&o->lmd, total) : NSR_OK;
}

/* newest_list - the list form of dir in the newest committed save set
 * (of the newest CFI_REF_LOOK) that has one, and the save set whose
 * pieces hold that list; NULL if none. */
static const struct cfi_lform *newest_list(struct nsr_cfi *c, const char *dir,
					   uint64_t *holder)
{
	size_t n = strlen(dir), looked = 0;

	for (size_t i = c->nss; i-- > 0 && looked < CFI_REF_LOOK;) {
		const struct cfi_tdir *d;
		struct cfi_ss *s = &c->ss[i];

		if (cfi_tab_get(c->dir, s) != NSR_OK)
			return NULL; /* no reference: the list is written */
		looked++;
		if (s->tabstate != 1 || s->tab->version < 4)
			continue;
		d = cfi_tab_find(s->tab, dir, n);
		if (d != NULL && d->lf.form != 0) {
			*holder = d->lf.form == 2 ? d->lf.ssid : s->ssid;
			return &d->lf;
		}
	}
	return NULL;
}

/* list_end - the list of dir is whole: its form (invariant 8). */
static int list_end(struct nsr_cfi *c, struct cfi_open_ss *o,
		    const char *dir, uint32_t total)
{
	struct cfi_lform lf = {.form = 1};
	const struct cfi_lform *prev = NULL;
	size_t n = strlen(dir);
	uint64_t holder = 0;
	int rc = cfi_digest_end(o->lmd, lf.digest);

	o->lmd = NULL;
	if (rc)
		return rc;
	if (o->lcand)
		prev = newest_list(c, dir, &holder);
	/* the same list, held by a committed save set (never a kept one) */
	if (prev != NULL && find_ss(c, holder) >= 0 &&
	    memcmp(prev->digest, lf.digest, CFI_DIGEST) == 0) {
		nsr_buf_setlen(&o->pending, o->lpend);
		rc = cfi_dirmap_drop(o->map, dir, n, o->lpieces);
		lf.form = 2;
		lf.total = total;
		lf.ssid = holder;
	}
	if (rc == NSR_OK)
		rc = cfi_dirmap_setform(o->map, dir, n, &lf);
	o->lcand = 0;
	return rc;
}

/* nsr_cfi_add_list - append a piece of a directory's entry list. */
int nsr_cfi_add_list(struct nsr_cfi *c, uint64_t ssid, const char *dir,
		     uint32_t total, uint32_t first,
		     const char *const *names, size_t n)
{
	struct cfi_open_ss *o;
	size_t done = 0, taken;
	char *ldir = NULL;
	int rc = open_for_add(c, ssid, &o);

	if (rc)
		return rc;
	if (dir == NULL || !list_piece_ok(o, dir, total, first, names, n))
		return NSR_ERR_INVAL;
	rc = close_block(o); /* the records stay in the order given */
	if (rc)
		return rc;
	if (first == 0) {
		ldir = strdup(dir);
		if (ldir == NULL)
			return NSR_ERR_NOMEM;
		rc = list_begin(o, dir, total);
		if (rc) {
			free(ldir);
			return rc;
		}
	}
	if (o->lmd != NULL && n > 0)
		rc = cfi_digest_names(o->lmd, names, n);
	while (rc == NSR_OK) {
		uint64_t at = o->length + o->pending.len;

		/* an empty list has no names array at all */
		rc = cfi_list_put(&o->pending, dir, total, first + done,
				  names ? names + done : NULL, n - done,
				  &taken);
		if (rc == NSR_OK)
			rc = cfi_dirmap_add(o->map, dir, strlen(dir), 1, at);
		done += taken;
		o->lpieces++;
		if (o->lcand && o->pending.len >= LIST_HOLD)
			o->lcand = 0; /* too long to hold back */
		if (rc == NSR_OK && o->pending.len >= FLUSH_AT && !o->lcand)
			rc = flush(o);
		if (done >= n)
			break; /* an empty list is one record */
	}
	if (rc == NSR_OK && o->lmd != NULL && first + n == total)
		rc = list_end(c, o, dir, total);
	if (rc) {
		free(ldir);
		o->err = rc; /* part of the list may be buffered */
		return rc;
	}
	if (ldir != NULL) {
		free(o->ldir);
		o->ldir = ldir;
		o->ltotal = total;
		o->lnext = 0;
	}
	o->lnext += (uint32_t)n;
	if (n > 0)
		snprintf(o->llast, sizeof(o->llast), "%s", names[n - 1]);
	return NSR_OK;
}

/* nsr_cfi_commit - sync a save set and name it in the catalogue. */
int nsr_cfi_commit(struct nsr_cfi *c, uint64_t ssid)
{
	struct cfi_open_ss *o = find_open(c, ssid);
	struct cfi_ss *nss, *s;
	uint64_t *refs = NULL;
	uint32_t nrefs = 0;
	int rc;

	if (c->rdonly)
		return NSR_ERR_READONLY;
	if (c->err)
		return c->err;
	if (o == NULL)
		return NSR_ERR_NOTFOUND;
	if (o->err)
		return o->err;
	nss = realloc(c->ss, (c->nss + 1) * sizeof(*nss));
	if (nss == NULL)
		return NSR_ERR_NOMEM;
	c->ss = nss;
	/* the directory table closes the file (invariant 7) */
	if (!o->sealed && close_block(o) != NSR_OK)
		return o->err;
	if (!o->sealed) {
		rc = cfi_dirmap_put(o->map, &o->pending,
				    o->length + o->pending.len);
		if (rc)
			return rc;
		o->sealed = 1;
	}
	rc = flush(o);
	if (rc == NSR_OK && fsync(o->fd) != 0) {
		rc = NSR_ERR_SYSTEM;
		o->err = rc;
	}
	if (rc == NSR_OK)
		rc = cfi_dirmap_refs(o->map, &refs, &nrefs);
	if (rc)
		return rc;
	listing_release(&c->last); /* invariant 6 */
	s = &c->ss[c->nss];
	memset(s, 0, sizeof(*s));
	s->ssid = o->ssid;
	s->savetime = o->savetime;
	s->entries = o->entries;
	s->length = o->length;
	s->name = o->name;
	s->refs = refs;
	s->nrefs = nrefs;
	c->nss++;
	rc = save_catalog(c);
	if (rc) {
		free(refs);
		c->nss--;
		o->keep = 1;
		c->err = NSR_ERR_STATE; /* invariant 5 */
		return rc;
	}
	o->name = NULL;
	close(o->fd);
	o->fd = -1;
	free(o->ldir);
	cfi_digest_free(o->lmd);
	cfi_dirmap_free(o->map);
	cfi_blk_release(&o->blk);
	nsr_buf_release(&o->pending);
	*o = c->open[--c->nopen];
	qsort(c->ss, c->nss, sizeof(*c->ss), cmp_ss);
	return NSR_OK;
}

/* nsr_cfi_abort - drop a begun save set. */
int nsr_cfi_abort(struct nsr_cfi *c, uint64_t ssid)
{
	struct cfi_open_ss *o = find_open(c, ssid);

	if (o == NULL)
		return NSR_ERR_NOTFOUND;
	open_release(c, o);
	return NSR_OK;
}

/* unlink_ss - remove a save set's record file. */
static void unlink_ss(const struct nsr_cfi *c, uint64_t ssid)
{
	char *p = rec_path(c, ssid);

	if (p != NULL)
		unlink(p);
	free(p);
}

/* sorted_unique - a sorted copy of v[0..n) without repeats, in *out
 * (free it), its length in *m.  NSR_ERR_NOMEM. */
static int sorted_unique(const uint64_t *v, size_t n, uint64_t **out,
			 size_t *m)
{
	uint64_t *s = malloc((n ? n : 1) * sizeof(*s));
	size_t k = 0;

	*out = NULL;
	*m = 0;
	if (s == NULL)
		return NSR_ERR_NOMEM;
	if (n > 0)
		memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), nsr_cmp_u64);
	for (size_t i = 0; i < n; i++)
		if (k == 0 || s[i] != s[k - 1])
			s[k++] = s[i];
	*out = s;
	*m = k;
	return NSR_OK;
}

/* has - is id in the sorted ids v[0..n)? */
static int has(const uint64_t *v, size_t n, uint64_t id)
{
	return n > 0 && bsearch(&id, v, n, sizeof(*v), nsr_cmp_u64) != NULL;
}

/* Deleting save sets: what nsr_cfi_delete_many moves where. */
struct cfi_del {
	uint64_t *want;	     /* the ssids asked for, then those found:
				sorted, unique */
	size_t nwant;
	uint64_t *look;	     /* found and kept ones, sorted */
	unsigned char *named; /* look[i] is named by a list that stays */
	size_t nlook;
	struct cfi_ss *gone; /* deleted and not kept: files to remove */
	size_t ngone;
	struct cfi_ss *drop; /* kept ones no list names any more */
	size_t ndrop;
};

/* del_release - free what a delete gathered, removing no file. */
static void del_release(struct cfi_del *d)
{
	free(d->want);
	free(d->look);
	free(d->named);
	cfi_ss_free(d->gone, d->ngone);
	cfi_ss_free(d->drop, d->ndrop);
}

/* del_mark - mark in d->named each of d->look that ids[0..n) hold. */
static void del_mark(struct cfi_del *d, const uint64_t *ids, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const uint64_t *p = bsearch(&ids[i], d->look, d->nlook,
					    sizeof(*p), nsr_cmp_u64);

		if (p != NULL)
			d->named[p - d->look] = 1;
	}
}

/* del_named - which of the found and kept save sets the lists of the
 * committed ones that stay and of the begun ones name (invariant 9):
 * one pass over every list reference, each looked up among those few,
 * where a pass per save set looked up made a delete of many
 * quadratic.  NSR_ERR_NOMEM. */
static int del_named(struct nsr_cfi *c, struct cfi_del *d)
{
	size_t n = 0;
	uint64_t *o;
	uint32_t no;

	d->look = malloc((d->nwant + c->nkept + 1) * sizeof(*d->look));
	d->named = calloc(d->nwant + c->nkept + 1, 1);
	if (d->look == NULL || d->named == NULL)
		return NSR_ERR_NOMEM;
	for (size_t i = 0; i < d->nwant; i++)
		d->look[n++] = d->want[i];
	for (size_t i = 0; i < c->nkept; i++)
		d->look[n++] = c->kept[i].ssid;
	qsort(d->look, n, sizeof(*d->look), nsr_cmp_u64);
	d->nlook = n;
	for (size_t i = 0; i < c->nss; i++)
		if (c->ss[i].nrefs > 0 &&
		    !has(d->want, d->nwant, c->ss[i].ssid))
			del_mark(d, c->ss[i].refs, c->ss[i].nrefs);
	for (size_t i = 0; i < c->nopen; i++) {
		if (cfi_dirmap_refs(c->open[i].map, &o, &no) != NSR_OK)
			return NSR_ERR_NOMEM;
		del_mark(d, o, no);
		free(o);
	}
	return NSR_OK;
}

/* del_is_named - is ssid (one of d->look) named by a list that stays? */
static int del_is_named(const struct cfi_del *d, uint64_t ssid)
{
	const uint64_t *p = bsearch(&ssid, d->look, d->nlook, sizeof(*p),
				    nsr_cmp_u64);

	return p == NULL || d->named[p - d->look];
}

/* del_prepare - everything a delete of d->want allocates, before any
 * change: *found gets how many of them are committed.  NSR_ERR_NOMEM. */
static int del_prepare(struct nsr_cfi *c, struct cfi_del *d, size_t *found)
{
	struct cfi_ss *nk;
	size_t k = 0;
	uint64_t *ids;

	*found = 0;
	for (size_t i = 0; i < c->nss; i++)
		k += has(d->want, d->nwant, c->ss[i].ssid);
	*found = k;
	if (k == 0)
		return NSR_OK;
	/* the ssids found, sorted: the ones whose lists no longer count */
	ids = malloc(k * sizeof(*ids));
	if (ids == NULL)
		return NSR_ERR_NOMEM;
	k = 0;
	for (size_t i = 0; i < c->nss; i++)
		if (has(d->want, d->nwant, c->ss[i].ssid))
			ids[k++] = c->ss[i].ssid;
	qsort(ids, k, sizeof(*ids), nsr_cmp_u64);
	free(d->want);
	d->want = ids;
	d->nwant = k;
	d->gone = malloc(k * sizeof(*d->gone));
	d->drop = malloc((c->nkept + 1) * sizeof(*d->drop));
	nk = realloc(c->kept, (c->nkept + k) * sizeof(*nk));
	if (nk != NULL)
		c->kept = nk;
	if (d->gone == NULL || d->drop == NULL || nk == NULL)
		return NSR_ERR_NOMEM;
	return del_named(c, d);
}

/* del_apply - take d->want out of c->ss: each one a list names becomes
 * kept, the others go to d->gone; the kept ones no list names any more
 * go to d->drop (invariant 9).  Nothing fails. */
static void del_apply(struct nsr_cfi *c, struct cfi_del *d)
{
	size_t keep = 0;

	for (size_t i = 0; i < c->nss; i++) {
		struct cfi_ss s = c->ss[i];

		if (!has(d->want, d->nwant, s.ssid)) {
			c->ss[keep++] = s; /* the order stays sorted */
			continue;
		}
		if (!del_is_named(d, s.ssid)) {
			d->gone[d->ngone++] = s;
			continue;
		}
		free(s.refs); /* a kept one names none */
		s.refs = NULL;
		s.nrefs = 0;
		c->kept[c->nkept++] = s;
	}
	c->nss = keep;
	for (size_t k = c->nkept; k-- > 0;) {
		if (del_is_named(d, c->kept[k].ssid))
			continue;
		d->drop[d->ndrop++] = c->kept[k];
		c->kept[k] = c->kept[--c->nkept];
	}
}

/* nsr_cfi_delete_many - remove committed save sets with one catalogue
 * replacement; keep the record files of those lists of others name,
 * and let go of kept ones no list names any more (invariant 9). */
int nsr_cfi_delete_many(struct nsr_cfi *c, const uint64_t *ssids, size_t n,
			size_t *removed)
{
	struct cfi_del d = {0};
	size_t found = 0;
	int rc;

	if (removed != NULL)
		*removed = 0;
	if (c->rdonly)
		return NSR_ERR_READONLY;
	if (c->err)
		return c->err;
	rc = sorted_unique(ssids, n, &d.want, &d.nwant);
	if (rc == NSR_OK)
		rc = del_prepare(c, &d, &found);
	if (rc != NSR_OK || found == 0)
		goto out;
	listing_release(&c->last); /* invariant 6 */
	del_apply(c, &d);
	rc = save_catalog(c);
	if (rc) {
		/* the handle is done (invariant 5): own, never unlink */
		c->err = NSR_ERR_STATE;
		goto out;
	}
	/* Invariant 4: a crash here leaves leftovers, removed later. */
	for (size_t k = 0; k < d.ngone; k++)
		unlink_ss(c, d.gone[k].ssid);
	for (size_t k = 0; k < d.ndrop; k++)
		unlink_ss(c, d.drop[k].ssid);
	if (removed != NULL)
		*removed = found;
out:
	del_release(&d);
	return rc;
}

/* nsr_cfi_delete - remove one committed save set: a delete of many
 * with one. */
int nsr_cfi_delete(struct nsr_cfi *c, uint64_t ssid)
{
	size_t removed = 0;
	int rc = nsr_cfi_delete_many(c, &ssid, 1, &removed);

	if (rc == NSR_OK && removed == 0)
		return NSR_ERR_NOTFOUND;
	return rc;
}

/* ss_view - the public view of a committed save set. */
static void ss_view(const struct cfi_ss *s, struct nsr_cfi_saveset *v)
{
	v->ssid = s->ssid;
	v->savetime = s->savetime;
	v->entries = s->entries;
	v->name = s->name;
}

/* nsr_cfi_savesets - visit the committed save sets. */
int nsr_cfi_savesets(struct nsr_cfi *c, nsr_cfi_ss_fn visit, void *ctx)
{
	struct nsr_cfi_saveset v;
	int rc;

	if (c->err)
		return c->err;
	for (size_t i = 0; i < c->nss; i++) {
		ss_view(&c->ss[i], &v);
		rc = visit(ctx, &v);
		if (rc)
			return rc;
	}
	return NSR_OK;
}

/* nsr_cfi_entries - visit the entries of one save set. */
int nsr_cfi_entries(struct nsr_cfi *c, uint64_t ssid, nsr_cfi_visit_fn visit,
		    void *ctx)
{
	ssize_t i = find_ss(c, ssid);

	if (c->err)
		return c->err;
	if (i < 0)
		return NSR_ERR_NOTFOUND;
	return cfi_scan(c->dir, &c->ss[i], visit, ctx);
}

/* trim - copy without trailing slashes ("/" stays). */
static char *trim(const char *p)
{
	size_t n = strlen(p);

	while (n > 1 && p[n - 1] == '/')
		n--;
	return strndup(p, n);
}

/* child_of - is p a direct child of directory d? */
static int child_of(const char *p, const char *d)
{
	size_t n = strlen(d);

	if (strcmp(d, "/") == 0)
		return p[0] == '/' && p[1] != '\0' &&
		       strchr(p + 1, '/') == NULL;
	return strncmp(p, d, n) == 0 && p[n] == '/' && p[n + 1] != '\0' &&
	       strchr(p + n + 1, '/') == NULL;
}

/* A directory's entry list, gathered from its pieces. */
struct dlist {
	char **names; /* those in the window's range, sorted */
	size_t n, cap;
	uint32_t seen; /* names of the list gathered, kept or not */
	uint32_t total;
	size_t rank; /* of the save set holding it */
};

struct list_ctx {
	const char *dir;
	size_t dlen;	    /* strlen(dir), 0 for "/" */
	struct hit *hits;
	size_t n, cap, rank, ssi;
	struct dlist got;   /* the newest whole list of dir */
	struct dlist build; /* the one being gathered */
	int have;	    /* got is set */
	/* the window (invariant 6): names after `after`, up to `bound` */
	const char *after;  /* a child's name; NULL = from the start */
	char *bound;	    /* NULL = not past cfi_list_window names */
};

/* dlist_release - free a gathered list. */
static void dlist_release(struct dlist *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->names[i]);
	free(d->names);
	memset(d, 0, sizeof(*d));
}

/* in_window - is the child name in the window's range? */
static int in_window(const struct list_ctx *l, const char *name)
{
	return (l->after == NULL || strcmp(name, l->after) > 0) &&
	       (l->bound == NULL || strcmp(name, l->bound) <= 0);
}

/* name_of - the child's name in a child's path. */
static const char *name_of(const struct list_ctx *l, const char *path)
{
	return path + l->dlen + 1;
}

/* list_piece - gather the newest whole entry list of the directory (a
 * piece that does not continue the list drops it: never a partial one);
 * only the names in the window's range are kept. */
static int list_piece(void *vctx, const struct nsr_cfi_saveset *ss,
		      const struct cfi_list *p)
{
	struct list_ctx *l = vctx;
	struct dlist *b = &l->build;

	NSR_UNUSED(ss);
	if (l->have || strcmp(p->dir, l->dir) != 0)
		return 0;
	if (p->first == 0 || b->rank != l->rank || p->first != b->seen ||
	    p->total != b->total) {
		dlist_release(b);
		if (p->first != 0)
			return 0;
		b->total = p->total;
		b->rank = l->rank;
	}
	if (b->n + p->n > b->cap) {
		size_t cap = b->n + p->n + 64;
		char **v = realloc(b->names, cap * sizeof(*v));

		if (v == NULL)
			return NSR_ERR_NOMEM;
		b->names = v;
		b->cap = cap;
	}
	for (size_t i = 0; i < p->n; i++) {
		b->seen++;
		if (!in_window(l, p->names[i]))
			continue;
		b->names[b->n] = strdup(p->names[i]);
		if (b->names[b->n] == NULL)
			return NSR_ERR_NOMEM;
		b->n++;
	}
	if (b->seen == b->total) {
		l->got = *b;
		memset(b, 0, sizeof(*b));
		l->have = 1;
	}
	return 0;
}

/* cmp_name - bsearch order of names. */
static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* listed - may the newest version of a child, h, be shown?  Without a
 * list, yes (every save set's entries merge); with one, if the list
 * names it or a save set newer than the list's holds it. */
static int listed(const struct list_ctx *l, const struct hit *h)
{
	const char *name = strrchr(h->e.path, '/') + 1;

	if (!l->have || h->rank < l->got.rank)
		return 1;
	return l->got.n > 0 && bsearch(&name, l->got.names, l->got.n,
				       sizeof(char *), cmp_name) != NULL;
}

/* cmp_hit - by path, then newest save set, then first seen. */
static int cmp_hit(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;
	int d = strcmp(x->e.path, y->e.path);

	if (d != 0)
		return d;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* dlist_trim - drop the names of d past the window's bound. */
static void dlist_trim(const struct list_ctx *l, struct dlist *d)
{
	while (d->n > 0 && strcmp(d->names[d->n - 1], l->bound) > 0)
		free(d->names[--d->n]);
}

/* list_shrink - sort the hits, keep each child's newest version and, of
 * more than cfi_list_window children, the first cfi_list_window: the window's
 * bound becomes the last one kept (invariant 6). */
static int list_shrink(struct list_ctx *l)
{
	size_t n = 0;
	char *bound;
	int rc = NSR_OK;

	if (l->n > 1)
		qsort(l->hits, l->n, sizeof(*l->hits), cmp_hit);
	for (size_t i = 0; i < l->n; i++) {
		const char *last = n ? l->hits[n - 1].e.path : NULL;

		if (last == NULL || strcmp(l->hits[i].e.path, last) != 0) {
			if (n < cfi_list_window) {
				l->hits[n++] = l->hits[i];
				continue;
			}
			/* a child past the window: the bound comes down to
			 * the last one kept */
			last = name_of(l, last);
			if (l->bound == NULL || strcmp(last, l->bound) < 0) {
				bound = strdup(last);
				if (bound == NULL)
					rc = NSR_ERR_NOMEM;
				else {
					free(l->bound);
					l->bound = bound;
				}
			}
		}
		free((char *)l->hits[i].e.path);
	}
	l->n = n;
	if (l->bound != NULL) {
		dlist_trim(l, &l->got);
		dlist_trim(l, &l->build);
	}
	return rc;
}

/* list_visit - collect direct children of the directory in the window;
 * past twice the window's size, shrink (list_shrink). */
static int list_visit(void *vctx, const struct nsr_cfi_saveset *ss,
		      const struct nsr_cfi_entry *e)
{
	struct list_ctx *l = vctx;
	struct hit *h;

	NSR_UNUSED(ss);
	if (!child_of(e->path, l->dir) || !in_window(l, name_of(l, e->path)))
		return 0;
	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 64;
		struct hit *nh = realloc(l->hits, ncap * sizeof(*nh));

		if (nh == NULL)
			return NSR_ERR_NOMEM;
		l->hits = nh;
		l->cap = ncap;
	}
	h = &l->hits[l->n];
	h->e = *e;
	h->e.path = strdup(e->path);
	if (h->e.path == NULL)
		return NSR_ERR_NOMEM;
	h->rank = l->rank;
	h->seq = l->n;
	h->ssi = l->ssi;
	l->n++;
	return l->n >= 2 * cfi_list_window ? list_shrink(l) : 0;
}

/* list_build - the window of children of l->dir as of t after l->after
 * (invariant 6) that a browse shows, sorted, in l->hits[0..l->n) (paths
 * owned); l->bound is set when children past the window are left. */
static int list_build(struct nsr_cfi *c, struct list_ctx *l, int64_t t)
{
	struct cfi_holders h = {.find = find_holder, .ctx = c};
	size_t n = 0;
	int rc = NSR_OK;

	l->dlen = strcmp(l->dir, "/") == 0 ? 0 : strlen(l->dir);
	/* Newest save set at or before t first. */
	for (size_t i = c->nss; i-- > 0 && rc == NSR_OK;) {
		if (c->ss[i].savetime > t)
			continue;
		l->ssi = i;
		rc = cfi_scan_dir(c->dir, &c->ss[i], l->dir, strlen(l->dir),
				  list_visit, l->have ? NULL : list_piece, l,
				  &h);
		l->rank++;
	}
	if (rc == NSR_OK)
		rc = list_shrink(l);
	/* Keep the newest version of each path, if the list shows it. */
	for (size_t i = 0; i < l->n; i++) {
		if (rc == NSR_OK && listed(l, &l->hits[i]))
			l->hits[n++] = l->hits[i];
		else
			free((char *)l->hits[i].e.path);
	}
	l->n = n;
	return rc;
}

/* nsr_cfi_set_list_window - the window of this process's listings. */
void nsr_cfi_set_list_window(size_t n)
{
	if (n >= 1 && n <= NSR_CFI_LIST_WINDOW)
		cfi_list_window = n;
}

/* ws_add - note where the next window of listing k starts: after name
 * after (NULL: the start), at listing index base. */
static int ws_add(struct cfi_listing *k, const char *after, size_t base)
{
	struct cfi_wstart *v;

	if (k->nws == k->capws) {
		size_t cap = k->capws ? 2 * k->capws : 8;

		v = realloc(k->ws, cap * sizeof(*v));
		if (v == NULL)
			return NSR_ERR_NOMEM;
		k->ws = v;
		k->capws = cap;
	}
	v = &k->ws[k->nws];
	v->base = base;
	v->after = NULL;
	if (after != NULL) {
		v->after = strdup(after);
		if (v->after == NULL)
			return NSR_ERR_NOMEM;
	}
	k->nws++;
	return NSR_OK;
}

/* ws_find - the last window reached whose first hit is at or before
 * listing index skip (window 0 starts at 0). */
static size_t ws_find(const struct cfi_listing *k, size_t skip)
{
	size_t lo = 0, hi = k->nws;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->ws[mid].base <= skip)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* window_build - make window w (reached: k->ws[w]) of listing k the
 * kept one: one scan of the record files (invariant 6). */
static int window_build(struct nsr_cfi *c, struct cfi_listing *k, size_t w)
{
	struct list_ctx l;
	int rc;

	memset(&l, 0, sizeof(l));
	l.dir = k->dir;
	l.after = k->ws[w].after;
	cfi_list_windows++;
	rc = list_build(c, &l, k->t);
	dlist_release(&l.got);
	dlist_release(&l.build);
	for (size_t i = 0; i < k->n; i++)
		free((char *)k->hits[i].e.path);
	free(k->hits);
	free(k->bound);
	k->hits = l.hits;
	k->n = l.n;
	k->base = k->ws[w].base;
	k->bound = l.bound;
	k->w = w;
	return rc;
}

/* listing_begin - make listing d (owned from now on) as of t the kept
 * one, from its first window. */
static int listing_begin(struct nsr_cfi *c, struct cfi_listing *k, char *d,
			 int64_t t)
{
	int rc;

	listing_release(k);
	k->dir = d;
	k->t = t;
	k->wsize = cfi_list_window;
	rc = ws_add(k, NULL, 0);
	return rc == NSR_OK ? window_build(c, k, 0) : rc;
}

/* nsr_cfi_list_dir_from - browse a directory as of a time: the newest
 * version of each child, and when a save set at or before t recorded the
 * directory's entry list, only the children the newest such list names
 * (or that a later save set at or before t holds); from the skip-th on,
 * window by window, starting with the kept window when it is the same
 * listing and it holds the skip-th, else with the last window reached
 * that starts at or before it (invariant 6). */
int nsr_cfi_list_dir_from(struct nsr_cfi *c, const char *dir, int64_t t,
			  size_t skip, nsr_cfi_visit_fn visit, void *ctx)
{
	struct cfi_listing *k = &c->last;
	struct nsr_cfi_saveset v;
	char *d;
	size_t w;
	int rc = NSR_OK;

	if (c->err)
		return c->err;
	if (dir == NULL || dir[0] == '\0')
		return NSR_ERR_INVAL;
	d = trim(dir);
	if (d == NULL)
		return NSR_ERR_NOMEM;
	if (k->dir == NULL || strcmp(k->dir, d) != 0 || k->t != t ||
	    k->wsize != cfi_list_window) {
		rc = listing_begin(c, k, d, t);
	} else {
		free(d);
		w = ws_find(k, skip);
		if (w != k->w)
			rc = window_build(c, k, w);
	}
	while (rc == NSR_OK) {
		for (size_t i = skip > k->base ? skip - k->base : 0;
		     i < k->n && rc == NSR_OK; i++) {
			ss_view(&c->ss[k->hits[i].ssi], &v);
			rc = visit(ctx, &v, &k->hits[i].e);
		}
		if (rc != NSR_OK || k->bound == NULL)
			break;
		/* the next window, noted when it is reached first */
		if (k->w + 1 == k->nws)
			rc = ws_add(k, k->bound, k->base + k->n);
		if (rc == NSR_OK)
			rc = window_build(c, k, k->w + 1);
	}
	if (rc < 0)
		listing_release(k);
	return rc;
}

/* nsr_cfi_list_dir - browse a directory as of a time from its start. */
int nsr_cfi_list_dir(struct nsr_cfi *c, const char *dir, int64_t t,
		     nsr_cfi_visit_fn visit, void *ctx)
{
	return nsr_cfi_list_dir_from(c, dir, t, 0, visit, ctx);
}

struct find_ctx {
	const char *path;
	nsr_cfi_visit_fn visit;
	void *ctx;
};

/* find_visit - pass on entries for the wanted path. */
static int find_visit(void *vctx, const struct nsr_cfi_saveset *ss,
		      const struct nsr_cfi_entry *e)
{
	struct find_ctx *f = vctx;

	if (strcmp(e->path, f->path) != 0)
		return 0;
	return f->visit(f->ctx, ss, e);
}

/* nsr_cfi_find - every version of a path as of a time. */
int nsr_cfi_find(struct nsr_cfi *c, const char *path, int64_t t,
		 nsr_cfi_visit_fn visit, void *ctx)
{
	struct find_ctx f;
	char *p;
	int rc = NSR_OK;

	if (c->err)
		return c->err;
	if (path == NULL || path[0] == '\0')
		return NSR_ERR_INVAL;
	p = trim(path);
	if (p == NULL)
		return NSR_ERR_NOMEM;
	f.path = p;
	f.visit = visit;
	f.ctx = ctx;
	for (size_t i = c->nss; i-- > 0 && rc == NSR_OK;)
		if (c->ss[i].savetime <= t)
			rc = cfi_scan_dir(c->dir, &c->ss[i], p, cfi_key_of(p),
					  find_visit, NULL, &f, NULL);
	free(p);
	return rc;
}

/* nsr_cfi_entry_from_file - index entry of a stream file record. */
int nsr_cfi_entry_from_file(struct nsr_cfi_entry *e,
			    const struct nsr_asm_file *f, uint64_t offset)
{
	memset(e, 0, sizeof(*e));
	if (f->part != 0)
		return 0;
	e->path = f->path;
	e->type = f->type;
	e->mode = f->mode;
	e->uid = f->uid;
	e->gid = f->gid;
	e->size = f->size;
	e->mtime = (int64_t)f->mtime.tv_sec;
	e->mtime_nsec = (uint32_t)f->mtime.tv_nsec;
	e->offset = offset;
	if (f->nparts != 0) { /* a split file's head */
		e->size = f->total;
		e->mode |= NSR_CFI_SPLIT;
	}
	return 1;
}

/* count_entry - count one entry (nsr_cfi_check). */
static int count_entry(void *ctx, const struct nsr_cfi_saveset *ss,
		       const struct nsr_cfi_entry *e)
{
	NSR_UNUSED(ss);
	NSR_UNUSED(e);
	(*(uint64_t *)ctx)++;
	return 0;
}

/* check_one - check save set s at level (see nsr_cfi_check_level); 1
 * and a problem in what (NSR_ERR_NOMEM: -1), or 0. */
static int check_one(struct nsr_cfi *c, struct cfi_ss *s, int level,
		     char *what, size_t wn)
{
	struct cfi_holders h = {.find = find_holder, .ctx = c};
	uint64_t n = 0;
	int rc, tab = NSR_OK;

	if (level < 2) {
		rc = cfi_quick(c->dir, s);
		if (rc == NSR_ERR_NOMEM)
			return -1;
		if (rc == NSR_OK)
			return 0;
		snprintf(what, wn, "record file: %s", nsr_strerror(rc));
		return 1;
	}
	rc = cfi_scan(c->dir, s, count_entry, &n);
	if (rc == NSR_OK)
		tab = cfi_check_tab(c->dir, s, &h);
	if (rc == NSR_ERR_NOMEM || tab == NSR_ERR_NOMEM)
		return -1;
	if (rc != NSR_OK)
		snprintf(what, wn, "record file: %s", nsr_strerror(rc));
	else if (n != s->entries)
		snprintf(what, wn,
			 "%" PRIu64 " entries, catalogue says %" PRIu64, n,
			 s->entries);
	else if (tab != NSR_OK)
		snprintf(what, wn, "directory table: %s", nsr_strerror(tab));
	else
		return 0;
	return 1;
}

/* nsr_cfi_check_level - verify every committed save set, quickly
 * (level 1) or fully. */
int nsr_cfi_check_level(struct nsr_cfi *c, int level,
			nsr_cfi_problem_fn problem, void *ctx,
			size_t *problems)
{
	char what[128];

	*problems = 0;
	if (c->err)
		return c->err;
	if (level < 1 || level > 6)
		return NSR_ERR_INVAL;
	/* the kept ones too: browsing reads their lists */
	for (size_t i = 0; i < c->nss + c->nkept; i++) {
		struct cfi_ss *s = i < c->nss ? &c->ss[i]
					      : &c->kept[i - c->nss];
		int r = check_one(c, s, level, what, sizeof(what));

		if (r < 0)
			return NSR_ERR_NOMEM;
		if (r == 0)
			continue;
		(*problems)++;
		if (problem)
			problem(ctx, s->ssid, what);
	}
	return NSR_OK;
}

/* nsr_cfi_check - the full check. */
int nsr_cfi_check(struct nsr_cfi *c, nsr_cfi_problem_fn problem, void *ctx,
		  size_t *problems)
{
	return nsr_cfi_check_level(c, 6, problem, ctx, problems);
}

/* nsr_cfi_clients - visit the client names that have an index under
 * root, sorted. */
int nsr_cfi_clients(const char *root, int (*visit)(void *ctx,
						   const char *client),
		    void *ctx)
{
	char *idx = nsr_path_join(root, "index");
	struct dirent **names = NULL;
	int n, rc = NSR_OK;

	if (idx == NULL)
		return NSR_ERR_NOMEM;
	n = scandir(idx, &names, NULL, alphasort);
	free(idx);
	if (n < 0)
		return errno == ENOENT ? NSR_ERR_NOTFOUND : NSR_ERR_SYSTEM;
	for (int i = 0; i < n; i++) {
		if (rc == NSR_OK && valid_client(names[i]->d_name))
			rc = visit(ctx, names[i]->d_name);
		free(names[i]);
	}
	free(names);
	return rc;
}

/* nsr_cfi_crosscheck - the index's save sets against the media
 * database's browsable ones (mm, sorted ascending). */
int nsr_cfi_crosscheck(struct nsr_cfi *c, const uint64_t *mm, size_t n,
		       nsr_cfi_problem_fn problem, void *ctx,
		       size_t *problems)
{
	uint64_t *id;
	size_t i = 0, j = 0;

	*problems = 0;
	if (c->err)
		return c->err;
	id = malloc((c->nss ? c->nss : 1) * sizeof(*id));
	if (id == NULL)
		return NSR_ERR_NOMEM;
	for (size_t k = 0; k < c->nss; k++)
		id[k] = c->ss[k].ssid;
	qsort(id, c->nss, sizeof(*id), nsr_cmp_u64);
	/* a merge of two sorted lists; equal ids on both sides agree */
	while (i < c->nss || j < n) {
		if (j > 0 && j < n && mm[j] == mm[j - 1]) {
			j++; /* one row per clone or volume */
		} else if (i < c->nss && j < n && id[i] == mm[j]) {
			i++;
			j++;
		} else if (j == n || (i < c->nss && id[i] < mm[j])) {
			(*problems)++;
			if (problem)
				problem(ctx, id[i], "in the index, not a "
						    "browsable save set in "
						    "the media database");
			i++;
		} else {
			(*problems)++;
			if (problem)
				problem(ctx, mm[j], "browsable in the media "
						    "database, not in the "
						    "index");
			j++;
		}
	}
	free(id);
	return NSR_OK;
}
