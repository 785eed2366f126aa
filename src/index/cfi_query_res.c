/*
 * cfi_query_res.c - queries whose results are gathered once and kept for
 * paging: the versions of a file across save sets, objects found by name
 * pattern under a directory as of a time, and a save set's entries.  The
 * directory walk of nsr_cfi_match reuses nsr_cfi_list_dir, so it shows
 * exactly what a point-in-time browse shows.
 *
 * A result set keeps its first results in memory, up to
 * cfi_results_mem bytes, and writes the rest to a spill file: an
 * unnamed temporary file in the client's index directory (O_TMPFILE;
 * where the file system lacks it, a ".spill-" file unlinked as soon as
 * it is made, and removed by the index's next writer open if a kill
 * came in between), so the file lives exactly as long as the result
 * set's descriptor: a killed process leaves nothing, and nobody has to
 * settle it.
 *
 * Invariants:
 *  1. Results 0 .. n - 1 are in memory, n .. total - 1 in the spill
 *     file, in the query's order, which never changes once gathered.
 *  2. marks[i] is the file offset of spilled result i * step; when the
 *     marks reach cfi_results_marks, every other one is dropped and
 *     step doubles, so the marks take bounded memory and a page is read
 *     with one pread sequence from a mark, skipping fewer than step
 *     records.
 *  3. A write error makes the result set fail (r->err, sticky): the
 *     query that gathers it returns the error, never a short result.
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <unistd.h>

#include "nsr/asm.h"
#include "nsr/buf.h"
#include "nsr/cfi.h"
#include "nsr/err.h"
#include "nsr/fileio.h"

#include "cfi_int.h"

#define SPILL_FLUSH (256 * 1024) /* spill bytes buffered before a write */
#define SPILL_READ (256 * 1024)	 /* > CFI_SPILL_REC_MAX: a record fits */
#define SPILL_READ_FIRST (8 * 1024) /* the first read of a page */

/* Bytes of results a result set keeps in memory (tests make it small:
 * nsr_cfi_set_results_mem). */
static size_t cfi_results_mem = NSR_CFI_RESULTS_MEM;
/* Marks of a spilled result set (invariant 2; even). */
size_t cfi_results_marks = 16384;
/* Bytes of directories a find may keep waiting to be listed. */
size_t cfi_match_queue_max = 64u << 20;
/* Tests: make spill files as on a file system without O_TMPFILE. */
int cfi_spill_no_tmpfile;

/* One result: a copy of the entry (path owned) and where it is. */
struct res_item {
	struct nsr_cfi_entry e;
	uint64_t ssid;
	int64_t savetime;
};

struct nsr_cfi_results {
	struct res_item *v; /* in memory: results 0 .. n - 1 */
	size_t n, cap;
	size_t mem;   /* bytes they take */
	size_t total; /* results, in memory and spilled */
	const char *dir; /* where to spill (while gathering) */
	int fd;		 /* the spill file, -1 = none */
	struct nsr_buf wb; /* spill records not written yet */
	uint64_t flen;	   /* bytes written to fd */
	uint64_t *marks;   /* invariant 2 */
	size_t nmarks, capmarks, step;
	int err; /* invariant 3 */
};

/* nsr_cfi_set_results_mem - the memory bound of this process's result
 * sets. */
void nsr_cfi_set_results_mem(size_t bytes)
{
	if (bytes <= NSR_CFI_RESULTS_MEM)
		cfi_results_mem = bytes;
}

/* results_new - an empty result set spilling into dir. */
static int results_new(struct nsr_cfi_results **out, const char *dir)
{
	struct nsr_cfi_results *r = calloc(1, sizeof(*r));

	*out = r;
	if (r == NULL)
		return NSR_ERR_NOMEM;
	r->dir = dir;
	r->fd = -1;
	r->step = 16;
	nsr_buf_init(&r->wb, 0);
	return NSR_OK;
}

/* io_err - our code for the errno of a failed spill write or read. */
static int io_err(int rc)
{
	if (rc == NSR_ERR_SYSTEM && errno == EIO)
		return NSR_ERR_IO;
	return rc;
}

/* spill_open - the unnamed spill file of r. */
static int spill_open(struct nsr_cfi_results *r)
{
	char *path;
	int fd;

	if (cfi_spill_no_tmpfile) {
		fd = -1;
		errno = EOPNOTSUPP;
	} else
		fd = open(r->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR &&
			errno != EINVAL)) {
		r->fd = fd;
		return fd >= 0 ? NSR_OK : NSR_ERR_SYSTEM;
	}
	/* no O_TMPFILE here: a name, gone at once (see the top) */
	path = nsr_path_join(r->dir, CFI_SPILL_NAME "XXXXXX");
	if (path == NULL)
		return NSR_ERR_NOMEM;
	fd = mkostemp(path, O_CLOEXEC);
	if (fd >= 0)
		unlink(path);
	free(path);
	r->fd = fd;
	return fd >= 0 ? NSR_OK : NSR_ERR_SYSTEM;
}

/* spill_flush - write the buffered spill records (invariant 3). */
static int spill_flush(struct nsr_cfi_results *r)
{
	int rc;

	if (r->wb.len == 0)
		return NSR_OK;
	rc = io_err(nsr_write_full(r->fd, r->wb.data, r->wb.len));
	if (rc != NSR_OK)
		return rc;
	r->flen += r->wb.len;
	nsr_buf_reset(&r->wb);
	return NSR_OK;
}

/* spill_mark - note the offset of spilled result s if it is a mark's
 * (invariant 2). */
static int spill_mark(struct nsr_cfi_results *r, size_t s)
{
	if (s % r->step != 0)
		return NSR_OK;
	if (r->nmarks == cfi_results_marks) {
		for (size_t i = 0; 2 * i < r->nmarks; i++)
			r->marks[i] = r->marks[2 * i];
		r->nmarks = (r->nmarks + 1) / 2;
		r->step *= 2;
		if (s % r->step != 0)
			return NSR_OK;
	}
	if (r->nmarks == r->capmarks) {
		size_t cap = r->capmarks ? 2 * r->capmarks : 64;
		uint64_t *m = realloc(r->marks, cap * sizeof(*m));

		if (m == NULL)
			return NSR_ERR_NOMEM;
		r->marks = m;
		r->capmarks = cap;
	}
	r->marks[r->nmarks++] = r->flen + r->wb.len;
	return NSR_OK;
}

/* spill_add - append one result to the spill file. */
static int spill_add(struct nsr_cfi_results *r,
		     const struct nsr_cfi_saveset *ss,
		     const struct nsr_cfi_entry *e)
{
	int rc = NSR_OK;

	if (r->fd < 0)
		rc = spill_open(r);
	if (rc == NSR_OK)
		rc = spill_mark(r, r->total - r->n);
	if (rc == NSR_OK)
		rc = cfi_spill_put(&r->wb, ss->ssid, ss->savetime, e);
	if (rc == NSR_OK && r->wb.len >= SPILL_FLUSH)
		rc = spill_flush(r);
	return rc;
}

/* mem_add - keep one result in memory. */
static int mem_add(struct nsr_cfi_results *r,
		   const struct nsr_cfi_saveset *ss,
		   const struct nsr_cfi_entry *e, size_t need)
{
	struct res_item *it;

	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 64;

		it = realloc(r->v, cap * sizeof(*it));
		if (!it)
			return NSR_ERR_NOMEM;
		r->v = it;
		r->cap = cap;
	}
	it = &r->v[r->n];
	it->e = *e;
	it->e.path = strdup(e->path);
	if (!it->e.path)
		return NSR_ERR_NOMEM;
	it->ssid = ss->ssid;
	it->savetime = ss->savetime;
	r->n++;
	r->mem += need;
	return NSR_OK;
}

/* results_add - visitor: append one result, in memory while it fits
 * and nothing was spilled yet, else to the spill file (invariant 1). */
static int results_add(void *ctx, const struct nsr_cfi_saveset *ss,
		       const struct nsr_cfi_entry *e)
{
	struct nsr_cfi_results *r = ctx;
	size_t need = sizeof(struct res_item) + strlen(e->path) + 1;
	int rc;

	if (r->err)
		return r->err;
	if (r->fd < 0 && r->mem + need <= cfi_results_mem)
		rc = mem_add(r, ss, e, need);
	else
		rc = spill_add(r, ss, e);
	if (rc != NSR_OK) {
		r->err = rc;
		return rc;
	}
	r->total++;
	return 0;
}

/* finish - write what is buffered and hand the results out, or free
 * them on an error. */
static int finish(struct nsr_cfi_results *r, int rc,
		  struct nsr_cfi_results **out)
{
	if (rc > 0) /* a visitor of ours never stops early */
		rc = NSR_ERR_STATE;
	if (rc == NSR_OK && r->fd >= 0)
		rc = spill_flush(r);
	if (rc < 0) {
		nsr_cfi_results_free(r);
		r = NULL;
	} else {
		nsr_buf_release(&r->wb);
		r->dir = NULL;
	}
	*out = r;
	return rc;
}

/* nsr_cfi_versions - every version of a path, newest first. */
int nsr_cfi_versions(struct nsr_cfi *c, const char *path, int64_t t,
		     struct nsr_cfi_results **out)
{
	struct nsr_cfi_results *r;
	int rc = results_new(&r, cfi_dir_of(c));

	*out = NULL;
	if (rc)
		return rc;
	return finish(r, nsr_cfi_find(c, path, t, results_add, r), out);
}

/* The walk of nsr_cfi_match: results, and the directories still to list
 * (a queue: breadth first; dirs[next .. ndirs) are waiting, qbytes
 * their bytes, at most cfi_match_queue_max). */
struct match {
	struct nsr_cfi_results *r;
	const char *pattern;
	char **dirs;
	size_t ndirs, cap, next, qbytes;
};

/* match_queue - queue directory path for listing. */
static int match_queue(struct match *m, const char *path)
{
	size_t need = strlen(path) + 1 + sizeof(char *);

	if (m->qbytes + need > cfi_match_queue_max)
		return NSR_ERR_LIMIT;
	if (m->next > 0 && m->ndirs == m->cap) {
		/* the listed ones are gone: move the waiting down */
		memmove(m->dirs, m->dirs + m->next,
			(m->ndirs - m->next) * sizeof(*m->dirs));
		m->ndirs -= m->next;
		m->next = 0;
	}
	if (m->ndirs == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 64;
		char **d = realloc(m->dirs, cap * sizeof(*d));

		if (!d)
			return NSR_ERR_NOMEM;
		m->dirs = d;
		m->cap = cap;
	}
	m->dirs[m->ndirs] = strdup(path);
	if (!m->dirs[m->ndirs])
		return NSR_ERR_NOMEM;
	m->ndirs++;
	m->qbytes += need;
	return NSR_OK;
}

/* match_one - visitor of one listing: keep a matching name, queue a
 * directory for listing. */
static int match_one(void *ctx, const struct nsr_cfi_saveset *ss,
		     const struct nsr_cfi_entry *e)
{
	struct match *m = ctx;
	const char *name = strrchr(e->path, '/');
	int rc = 0;

	name = name ? name + 1 : e->path;
	if (!m->pattern || !*m->pattern || fnmatch(m->pattern, name, 0) == 0)
		rc = results_add(m->r, ss, e);
	if (rc || e->type != NSR_ASM_DIR)
		return rc;
	return match_queue(m, e->path);
}

/* nsr_cfi_match - objects under dir whose names match pattern as of t:
 * every directory of the tree is listed as a browse lists it. */
int nsr_cfi_match(struct nsr_cfi *c, const char *dir, const char *pattern,
		  int64_t t, struct nsr_cfi_results **out)
{
	struct match m;
	char *d;
	int rc;

	*out = NULL;
	if (!dir || !*dir)
		return NSR_ERR_INVAL;
	memset(&m, 0, sizeof(m));
	m.pattern = pattern;
	rc = results_new(&m.r, cfi_dir_of(c));
	if (rc)
		return rc;
	rc = nsr_cfi_list_dir(c, dir, t, match_one, &m);
	while (rc == NSR_OK && m.next < m.ndirs) {
		/* taken off the queue before listing: the listing may
		 * move the queue */
		d = m.dirs[m.next++];
		m.qbytes -= strlen(d) + 1 + sizeof(char *);
		rc = nsr_cfi_list_dir(c, d, t, match_one, &m);
		free(d);
	}
	for (size_t i = m.next; i < m.ndirs; i++)
		free(m.dirs[i]);
	free(m.dirs);
	return finish(m.r, rc, out);
}

/* nsr_cfi_saveset_results - a save set's entries in saved order. */
int nsr_cfi_saveset_results(struct nsr_cfi *c, uint64_t ssid,
			    struct nsr_cfi_results **out)
{
	struct nsr_cfi_results *r;
	int rc = results_new(&r, cfi_dir_of(c));

	*out = NULL;
	if (rc)
		return rc;
	return finish(r, nsr_cfi_entries(c, ssid, results_add, r), out);
}

/* nsr_cfi_results_count - how many results. */
size_t nsr_cfi_results_count(const struct nsr_cfi_results *r)
{
	return r ? r->total : 0;
}

/* A reader of a spill file: buf[at .. len) is what was read and not
 * decoded yet, pos the file offset after it; each read asks for twice
 * the bytes of the one before (from SPILL_READ_FIRST up to what buf
 * holds), so a short page reads little. */
struct spill_rd {
	const struct nsr_cfi_results *r;
	uint8_t *buf;
	size_t len, at, chunk;
	uint64_t pos;
	char *path;
};

/* spill_next - decode the next spilled result (a file shorter than its
 * results, or a damaged record, is NSR_ERR_CORRUPT). */
static int spill_next(struct spill_rd *d, struct nsr_cfi_saveset *ss,
		      struct nsr_cfi_entry *e)
{
	size_t used, got, want;
	int rc;

	for (;;) {
		rc = cfi_spill_get(d->buf + d->at, d->len - d->at, &used,
				   &ss->ssid, &ss->savetime, e, d->path);
		if (rc != NSR_ERR_TRUNCATED)
			break;
		if (d->pos >= d->r->flen)
			return NSR_ERR_CORRUPT;
		memmove(d->buf, d->buf + d->at, d->len - d->at);
		d->len -= d->at;
		d->at = 0;
		d->chunk = d->chunk ? 2 * d->chunk : SPILL_READ_FIRST;
		want = SPILL_READ - d->len;
		if (want > d->chunk)
			want = d->chunk;
		if (want > d->r->flen - d->pos)
			want = (size_t)(d->r->flen - d->pos);
		rc = io_err(nsr_pread_full(d->r->fd, d->buf + d->len, want,
					   (off_t)d->pos, &got));
		if (rc != NSR_OK)
			return rc;
		if (got == 0)
			return NSR_ERR_CORRUPT;
		d->len += got;
		d->pos += got;
	}
	if (rc == NSR_OK)
		d->at += used;
	return rc == NSR_ERR_CHECKSUM ? NSR_ERR_CORRUPT : rc;
}

/* spill_visit - visit spilled results s .. s + n - 1 (all there): from
 * the mark at or before s, skipping the records before it
 * (invariant 2). */
static int spill_visit(const struct nsr_cfi_results *r, size_t s, size_t n,
		       nsr_cfi_visit_fn visit, void *ctx)
{
	struct spill_rd d = {.r = r};
	struct nsr_cfi_saveset ss = {.name = ""};
	struct nsr_cfi_entry e;
	size_t k = s / r->step, skip;
	int rc = NSR_OK;

	if (k >= r->nmarks)
		return NSR_ERR_STATE;
	skip = s - k * r->step;
	d.pos = r->marks[k];
	d.buf = malloc(SPILL_READ);
	d.path = malloc(CFI_PATH_MAX + 1);
	if (d.buf == NULL || d.path == NULL)
		rc = NSR_ERR_NOMEM;
	while (rc == NSR_OK && n > 0) {
		rc = spill_next(&d, &ss, &e);
		if (rc != NSR_OK)
			break;
		if (skip > 0) {
			skip--;
			continue;
		}
		rc = visit(ctx, &ss, &e);
		n--;
	}
	free(d.buf);
	free(d.path);
	return rc;
}

/* nsr_cfi_results_visit - visit a page of results: from memory, then
 * from the spill file (invariant 1). */
int nsr_cfi_results_visit(const struct nsr_cfi_results *r, size_t from,
			  size_t n, nsr_cfi_visit_fn visit, void *ctx)
{
	struct nsr_cfi_saveset ss = {.name = ""};
	size_t i = from;
	int rc = 0;

	if (r == NULL)
		return 0;
	for (; i < r->n && i - from < n && !rc; i++) {
		ss.ssid = r->v[i].ssid;
		ss.savetime = r->v[i].savetime;
		rc = visit(ctx, &ss, &r->v[i].e);
	}
	if (rc || i >= r->total || i - from >= n)
		return rc;
	n -= i - from;
	if (n > r->total - i)
		n = r->total - i;
	return spill_visit(r, i - r->n, n, visit, ctx);
}

/* nsr_cfi_results_spilled - results in the spill file. */
size_t nsr_cfi_results_spilled(const struct nsr_cfi_results *r)
{
	return r ? r->total - r->n : 0;
}

/* nsr_cfi_results_free - free a result set (its spill file goes with
 * the descriptor). */
void nsr_cfi_results_free(struct nsr_cfi_results *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		free((char *)r->v[i].e.path);
	free(r->v);
	if (r->fd >= 0)
		close(r->fd);
	nsr_buf_release(&r->wb);
	free(r->marks);
	free(r);
}

/* One kept cursor; id 0 = a free slot. */
struct cursor {
	uint64_t id, used;
	char *client;
	struct nsr_cfi_results *r;
};

struct nsr_cfi_cursors {
	struct cursor *v;
	size_t max;
	uint64_t next_id, tick;
};

/* nsr_cfi_cursors_new - an empty cursor set. */
int nsr_cfi_cursors_new(size_t max, struct nsr_cfi_cursors **out)
{
	struct nsr_cfi_cursors *k;

	*out = NULL;
	if (max == 0)
		return NSR_ERR_INVAL;
	k = calloc(1, sizeof(*k));
	if (!k)
		return NSR_ERR_NOMEM;
	k->v = calloc(max, sizeof(*k->v));
	if (!k->v) {
		free(k);
		return NSR_ERR_NOMEM;
	}
	k->max = max;
	k->next_id = 1;
	*out = k;
	return NSR_OK;
}

/* cursor_clear - free one slot's contents. */
static void cursor_clear(struct cursor *c)
{
	nsr_cfi_results_free(c->r);
	free(c->client);
	memset(c, 0, sizeof(*c));
}

/* nsr_cfi_cursors_keep - keep r in a free slot or the least recently
 * used one (invariant 1) under a new id (invariant 2). */
uint64_t nsr_cfi_cursors_keep(struct nsr_cfi_cursors *k, const char *client,
			      struct nsr_cfi_results *r)
{
	struct cursor *c = &k->v[0];
	char *name = strdup(client);

	if (!name) {
		nsr_cfi_results_free(r);
		return 0;
	}
	for (size_t i = 0; i < k->max; i++) {
		if (!k->v[i].id) {
			c = &k->v[i];
			break;
		}
		if (k->v[i].used < c->used)
			c = &k->v[i];
	}
	cursor_clear(c);
	c->id = k->next_id++;
	c->used = ++k->tick;
	c->client = name;
	c->r = r;
	return c->id;
}

/* find_cursor - the slot of cursor id of client (invariant 3). */
static struct cursor *find_cursor(struct nsr_cfi_cursors *k, const char *client,
				  uint64_t id)
{
	for (size_t i = 0; id && i < k->max; i++)
		if (k->v[i].id == id && strcmp(k->v[i].client, client) == 0)
			return &k->v[i];
	return NULL;
}

/* nsr_cfi_cursors_get - a kept cursor's results, now most recently
 * used. */
const struct nsr_cfi_results *nsr_cfi_cursors_get(struct nsr_cfi_cursors *k,
						  const char *client,
						  uint64_t id)
{
	struct cursor *c = find_cursor(k, client, id);

	if (!c)
		return NULL;
	c->used = ++k->tick;
	return c->r;
}

/* nsr_cfi_cursors_drop - drop one cursor. */
void nsr_cfi_cursors_drop(struct nsr_cfi_cursors *k, const char *client,
			  uint64_t id)
{
	struct cursor *c = find_cursor(k, client, id);

	if (c)
		cursor_clear(c);
}

/* nsr_cfi_cursors_free - drop all and free. */
void nsr_cfi_cursors_free(struct nsr_cfi_cursors *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->max; i++)
		cursor_clear(&k->v[i]);
	free(k->v);
	free(k);
}
