/*
 * cfi_query.c - reading the client file index: scanning a save set's
 * record file (bounded by the committed length, every record checked),
 * browsing a directory and finding a path as of a time, and the in-memory
 * decoder used by fuzzing.
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/bytes.h"
#include "nsr/crc32c.h"
#include "nsr/err.h"
#include "nsr/fileio.h"

#include "cfi_int.h"
#include "cfi_query_int.h"

/* What decode_records calls, and its scratch space. */
struct rec_cb {
	const struct nsr_cfi_saveset *ss;
	unsigned version;
	nsr_cfi_visit_fn visit;
	cfi_list_fn list;
	void *ctx;
	char *path;		/* CFI_PATH_MAX + 1: not on a stack */
	struct cfi_list_buf *lb;
	const char *key;	/* through a table: the key each must have */
	size_t klen;
	uint64_t count[2];	/* entries and list pieces decoded */
};

/* rec_cb_init - scratch space for decoding records. */
static int rec_cb_init(struct rec_cb *cb, const struct nsr_cfi_saveset *ss,
		       unsigned version, nsr_cfi_visit_fn visit,
		       cfi_list_fn list, void *ctx)
{
	cb->ss = ss;
	cb->version = version;
	cb->visit = visit;
	cb->list = list;
	cb->ctx = ctx;
	cb->key = NULL;
	cb->count[0] = cb->count[1] = 0;
	cb->path = malloc(CFI_PATH_MAX + 1);
	cb->lb = malloc(sizeof(*cb->lb));
	return cb->path && cb->lb ? NSR_OK : NSR_ERR_NOMEM;
}

/* rec_cb_release - free the scratch space. */
static void rec_cb_release(struct rec_cb *cb)
{
	free(cb->path);
	free(cb->lb);
}

/* decode_block - the entries of a block, each under its key. */
static int decode_block(struct rec_cb *cb, const uint8_t *p, uint32_t len)
{
	struct cfi_blk_rd r;
	struct nsr_cfi_entry e;
	int rc = cfi_blk_open(&r, p, len);

	if (rc == NSR_OK && cb->key != NULL &&
	    cfi_key_cmp(r.key, r.klen, cb->key, cb->klen) != 0)
		rc = NSR_ERR_CORRUPT; /* not where the table says */
	while (rc == NSR_OK && (rc = cfi_blk_next(&r, &e, cb->path)) == 1) {
		cb->count[0]++;
		rc = cb->visit ? cb->visit(cb->ctx, cb->ss, &e) : NSR_OK;
	}
	return rc;
}

/* decode_one - one checked payload: an entry, or (version 2) a piece of
 * a directory list. */
static int decode_one(struct rec_cb *cb, const uint8_t *p, uint32_t len)
{
	struct nsr_cfi_entry e;
	struct cfi_list l;
	int rc;

	if (p[0] == 0 && p[1] == CFI_LIST_BLOCK)
		return cb->version < 3 ? NSR_ERR_CORRUPT
				       : decode_block(cb, p, len);
	if (p[0] == 0) {
		if (cb->version < 2 || (p[1] != 0 && cb->version < 3))
			return NSR_ERR_CORRUPT;
		rc = cfi_list_get(p, len, &l, cb->lb);
		if (rc == NSR_OK && cb->key != NULL &&
		    cfi_key_cmp(l.dir, strlen(l.dir), cb->key, cb->klen) != 0)
			rc = NSR_ERR_CORRUPT; /* not where the table says */
		cb->count[1]++;
		if (rc == NSR_OK && cb->list)
			rc = cb->list(cb->ctx, cb->ss, &l);
		return rc;
	}
	if (len > NSR_CFI_MAX_RECORD)
		return NSR_ERR_CORRUPT;
	rc = cfi_rec_get(p, len, &e, cb->path);
	if (rc == NSR_OK && cb->key != NULL &&
	    cfi_key_cmp(e.path, cfi_key_of(e.path), cb->key, cb->klen) != 0)
		rc = NSR_ERR_CORRUPT;
	cb->count[0]++;
	if (rc == NSR_OK && cb->visit)
		rc = cb->visit(cb->ctx, cb->ss, &e);
	return rc;
}

/* decode_records - decode the complete records at p[0..n); *used gets
 * the bytes consumed.  A record that does not fit is left for later. */
static int decode_records(struct rec_cb *cb, const uint8_t *p, size_t n,
			  size_t *used)
{
	size_t at = 0;
	int rc = NSR_OK;

	*used = 0;
	while (n - at >= 4 && rc == NSR_OK) {
		uint32_t len = nsr_get_u32(p + at);

		if (len < CFI_LIST_FIXED || len > CFI_REC_MAX) {
			rc = NSR_ERR_CORRUPT;
			break;
		}
		if (n - at < (size_t)len + 8)
			break;
		if (nsr_get_u32(p + at + 4 + len) !=
		    nsr_crc32c(0, p + at + 4, len)) {
			rc = NSR_ERR_CHECKSUM;
			break;
		}
		rc = decode_one(cb, p + at + 4, len);
		at += (size_t)len + 8;
		*used = at;
	}
	return rc;
}

/* Where records are read from by offset: a file (through a window) or
 * an image in memory; records end at end. */
struct rsrc {
	int fd;
	const uint8_t *mem;
	uint64_t end;
	uint8_t *win;
	uint64_t wat;
	size_t wlen;
};

static int check_digest(struct rsrc *r, const struct cfi_tab *t,
			const struct cfi_tdir *d);

/* rsrc_get - the checked payload of the record at off: in bounds, its
 * frame whole before end, its CRC right.  hint: bytes worth reading at
 * once from a file. */
static int rsrc_get(struct rsrc *r, uint64_t off, size_t hint,
		    const uint8_t **p, uint32_t *len)
{
	const uint8_t *f;
	uint64_t avail;

	if (off < CFI_HDR_LEN || off + 8 > r->end)
		return NSR_ERR_CORRUPT;
	if (r->mem == NULL &&
	    (off < r->wat || off + 4 > r->wat + r->wlen)) {
		size_t want = NSR_MAX(hint, (size_t)4096), got = 0;

		want = NSR_MIN(want, (size_t)(r->end - off));
		want = NSR_MIN(want, (size_t)CFI_WIN);
		if (nsr_pread_full(r->fd, r->win, want, (off_t)off, &got) ||
		    got != want)
			return NSR_ERR_CORRUPT; /* shorter than committed */
		r->wat = off;
		r->wlen = got;
	}
	f = r->mem ? r->mem + off : r->win + (off - r->wat);
	*len = nsr_get_u32(f);
	if (*len < CFI_LIST_FIXED || *len > CFI_REC_MAX ||
	    (uint64_t)*len + 8 > r->end - off)
		return NSR_ERR_CORRUPT;
	avail = r->mem ? r->end - off : r->wat + r->wlen - off;
	if ((uint64_t)*len + 8 > avail) {
		r->wlen = 0; /* reread from off, the whole record */
		r->wat = 0;
		return rsrc_get(r, off, (size_t)*len + 8, p, len);
	}
	if (nsr_get_u32(f + 4 + *len) != nsr_crc32c(0, f + 4, *len))
		return NSR_ERR_CHECKSUM;
	*p = f + 4;
	return NSR_OK;
}

/* read_dir - decode the records of directory d of table t (entries
 * (0), then list pieces (1), each in file order; from..to of them),
 * checking that each is of its kind and under its key. */
static int read_dir(struct rec_cb *cb, struct rsrc *r,
		    const struct cfi_tab *t, const struct cfi_tdir *d,
		    int from, int to)
{
	int rc = NSR_OK;

	for (int list = from; list <= to && rc == NSR_OK; list++) {
		uint64_t *o = NULL;

		rc = cfi_tab_offs(t, d, list, &o);
		for (uint32_t i = 0; i < d->n[list] && rc == NSR_OK; i++) {
			const uint8_t *p;
			uint32_t len;
			uint64_t span = i + 1 < d->n[list]
						? o[d->n[list] - 1] - o[i]
						: 0;

			/* read ahead what the next offsets need */
			span = NSR_MIN(span, (uint64_t)CFI_WIN / 2);
			rc = rsrc_get(r, o[i], (size_t)span + 4096, &p, &len);
			if (rc == NSR_OK &&
			    (p[0] == 0 && p[1] != CFI_LIST_BLOCK) != list)
				rc = NSR_ERR_CORRUPT;
			if (rc == NSR_OK) {
				cb->key = d->key;
				cb->klen = d->klen;
				rc = decode_one(cb, p, len);
				cb->key = NULL;
			}
		}
		free(o);
	}
	return rc;
}

/* decode_file_v3 - a version 3 or 4 image: footer, table, the records before
 * it, and every record the table names read through it (the counts
 * must agree: each record is in the table once). */
static int decode_file_v3(const uint8_t *p, size_t n, unsigned version,
			  const struct nsr_cfi_saveset *ss,
			  nsr_cfi_visit_fn visit, void *ctx)
{
	struct cfi_tab *t = NULL;
	struct rec_cb cb;
	struct rsrc r = {.fd = -1, .mem = p};
	uint64_t toff, seen[2];
	uint32_t tlen, tcrc;
	uint8_t *blob;
	size_t used = 0;
	int rc;

	if (n < CFI_HDR_LEN + CFI_FOOT_LEN)
		return NSR_ERR_TRUNCATED;
	rc = cfi_foot_get(p + n - CFI_FOOT_LEN, n, &toff, &tlen, &tcrc);
	if (rc)
		return rc;
	if (nsr_crc32c(0, p + toff, tlen) != tcrc)
		return NSR_ERR_CHECKSUM;
	blob = malloc(tlen ? tlen : 1);
	if (blob == NULL)
		return NSR_ERR_NOMEM;
	memcpy(blob, p + toff, tlen);
	rc = cfi_tab_parse(blob, tlen, toff, version, &t);
	if (rc)
		return rc;
	r.end = toff;
	rc = rec_cb_init(&cb, ss, version, visit, NULL, ctx);
	if (rc == NSR_OK)
		rc = decode_records(&cb, p + CFI_HDR_LEN, toff - CFI_HDR_LEN,
				    &used);
	if (rc == NSR_OK && used != toff - CFI_HDR_LEN)
		rc = NSR_ERR_CORRUPT;
	memcpy(seen, cb.count, sizeof(seen));
	cb.visit = NULL;
	memset(cb.count, 0, sizeof(cb.count));
	for (size_t i = 0; i < t->n && rc == NSR_OK; i++)
		rc = read_dir(&cb, &r, t, &t->d[i], 0, 1);
	if (rc == NSR_OK && memcmp(seen, cb.count, sizeof(seen)) != 0)
		rc = NSR_ERR_CORRUPT;
	/* a list held for others has its digest (form 2 ones name other
	 * save sets: not checked here) */
	for (size_t i = 0; i < t->n && rc == NSR_OK; i++)
		if (t->d[i].lf.form == 1)
			rc = check_digest(&r, t, &t->d[i]);
	rec_cb_release(&cb);
	cfi_tab_free(t);
	return rc;
}

/* nsr_cfi_decode_file - decode a record file image from memory. */
int nsr_cfi_decode_file(const void *data, size_t n, nsr_cfi_visit_fn visit,
			void *ctx)
{
	const uint8_t *p = data;
	struct nsr_cfi_saveset ss;
	struct rec_cb cb;
	size_t used = 0;
	unsigned version;
	int rc;

	memset(&ss, 0, sizeof(ss));
	ss.name = "";
	if (n < CFI_HDR_LEN)
		return NSR_ERR_TRUNCATED;
	rc = cfi_hdr_get(p, &ss.ssid, &ss.savetime, &version);
	if (rc)
		return rc;
	if (version >= 3)
		return decode_file_v3(p, n, version, &ss, visit, ctx);
	rc = rec_cb_init(&cb, &ss, version, visit, NULL, ctx);
	if (rc == NSR_OK)
		rc = decode_records(&cb, p + CFI_HDR_LEN, n - CFI_HDR_LEN,
				    &used);
	if (rc == NSR_OK && used != n - CFI_HDR_LEN)
		rc = NSR_ERR_TRUNCATED;
	rec_cb_release(&cb);
	return rc;
}

/* cfi_scan - visit the entries of a record file, bounded and checked. */
int cfi_scan(const char *dir, const struct cfi_ss *s, nsr_cfi_visit_fn visit,
	     void *ctx)
{
	return cfi_scan_lists(dir, s, visit, NULL, ctx);
}

/* read_tab - the header of s's file on fd, and for version 3 its
 * footer and table: *version, *end (where the records end) and *t
 * (NULL before version 3). */
static int read_tab(int fd, const struct cfi_ss *s, unsigned *version,
		    uint64_t *end, struct cfi_tab **t)
{
	uint8_t h[CFI_HDR_LEN], f[CFI_FOOT_LEN], *blob;
	uint64_t ssid, toff;
	uint32_t tlen, tcrc;
	int64_t st;
	size_t got = 0;
	int rc;

	*t = NULL;
	*end = s->length;
	if (nsr_pread_full(fd, h, sizeof(h), 0, &got) || got != sizeof(h))
		return NSR_ERR_CORRUPT;
	rc = cfi_hdr_get(h, &ssid, &st, version);
	if (rc == NSR_OK && ssid != s->ssid)
		rc = NSR_ERR_CORRUPT;
	if (rc || *version < 3)
		return rc;
	if (s->length < CFI_HDR_LEN + CFI_FOOT_LEN ||
	    nsr_pread_full(fd, f, sizeof(f),
			   (off_t)(s->length - CFI_FOOT_LEN), &got) ||
	    got != sizeof(f))
		return NSR_ERR_CORRUPT;
	rc = cfi_foot_get(f, s->length, &toff, &tlen, &tcrc);
	if (rc)
		return rc;
	blob = malloc(tlen ? tlen : 1);
	if (blob == NULL)
		return NSR_ERR_NOMEM;
	if (nsr_pread_full(fd, blob, tlen, (off_t)toff, &got) ||
	    got != tlen) {
		free(blob);
		return NSR_ERR_CORRUPT;
	}
	if (nsr_crc32c(0, blob, tlen) != tcrc) {
		free(blob);
		return NSR_ERR_CHECKSUM;
	}
	*end = toff;
	return cfi_tab_parse(blob, tlen, toff, *version, t);
}

/* records_end - where the records of s's file on fd end: the committed
 * length, or before version 3's table. */
static int records_end(int fd, const struct cfi_ss *s, uint64_t *end)
{
	struct cfi_tab *t = NULL;
	unsigned version;
	int rc = read_tab(fd, s, &version, end, &t);

	cfi_tab_free(t);
	return rc;
}

/* open_rec - open s's record file read-only. */
static int open_rec(const char *dir, const struct cfi_ss *s, int *fd)
{
	char *path = NULL;

	if (asprintf(&path, "%s/ss-%" PRIu64 ".rec", dir, s->ssid) < 0)
		return NSR_ERR_NOMEM;
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	free(path);
	if (*fd < 0)
		return errno == ENOENT ? NSR_ERR_NOTFOUND : NSR_ERR_SYSTEM;
	return NSR_OK;
}

/* load_tab - read s's table once (invariant 7 of cfi.c); *end gets where
 * its records end. */
static int load_tab(int fd, struct cfi_ss *s, uint64_t *end)
{
	unsigned version = 0;
	int rc;

	if (s->tabstate == 0) {
		rc = read_tab(fd, s, &version, end, &s->tab);
		if (rc)
			return rc;
		s->tabstate = s->tab ? 1 : 2;
		if (s->tab)
			cfi_tab_hold(s->tab);
	}
	s->tab_used = cfi_tab_tick();
	*end = s->length;
	if (s->tabstate == 1)
		*end = s->length - CFI_FOOT_LEN - s->tab->len;
	return NSR_OK;
}

/* cfi_tab_get - s's table, read once: NSR_OK with s->tabstate set (1:
 * s->tab holds it). */
int cfi_tab_get(const char *dir, struct cfi_ss *s)
{
	uint64_t end;
	int fd = -1, rc;

	if (s->tabstate != 0) {
		s->tab_used = cfi_tab_tick();
		return NSR_OK;
	}
	rc = open_rec(dir, s, &fd);
	if (rc == NSR_OK)
		rc = load_tab(fd, s, &end);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* The first whole list of a directory's pieces, passed on (a form 1
 * list, read for a form 2 one or checked by nsrck): the pieces must
 * begin with one whole list of total names; later ones are skipped. */
struct first_list {
	cfi_list_fn inner;
	void *ctx;
	uint32_t total, got;
	int learn; /* total: the first piece's */
	int done;
};

/* first_piece - pass on a piece of the first list, checked. */
static int first_piece(void *vctx, const struct nsr_cfi_saveset *ss,
		       const struct cfi_list *l)
{
	struct first_list *f = vctx;
	int rc;

	if (f->done)
		return NSR_OK;
	if (f->learn && f->got == 0)
		f->total = l->total;
	if (l->first != f->got || l->total != f->total)
		return NSR_ERR_CORRUPT;
	rc = f->inner(f->ctx, ss, l);
	f->got += (uint32_t)l->n;
	f->done = f->got == f->total;
	return rc;
}

/* first_from - the first whole list of directory d of table t (form
 * 1), read from r, as save set ss's, through inner; total: what it must
 * hold (-1: any). */
static int first_from(struct rsrc *r, const struct cfi_tab *t,
		      const struct cfi_tdir *d, int64_t total,
		      const struct nsr_cfi_saveset *ss, cfi_list_fn inner,
		      void *ctx)
{
	struct first_list f = {.inner = inner, .ctx = ctx,
			       .total = (uint32_t)total, .learn = total < 0};
	struct rec_cb cb;
	int rc = rec_cb_init(&cb, ss, t->version, NULL, first_piece, &f);

	if (rc == NSR_OK)
		rc = read_dir(&cb, r, t, d, 1, 1);
	if (rc == NSR_OK && !f.done)
		rc = NSR_ERR_CORRUPT; /* form 1 without a whole list */
	rec_cb_release(&cb);
	return rc;
}

/* read_first - first_from on s's record file. */
static int read_first(const char *dir, struct cfi_ss *s,
		      const struct cfi_tdir *d, int64_t total,
		      const struct nsr_cfi_saveset *ss, cfi_list_fn inner,
		      void *ctx)
{
	struct rsrc r = {.fd = -1};
	int rc = open_rec(dir, s, &r.fd);

	if (rc == NSR_OK)
		rc = load_tab(r.fd, s, &r.end);
	r.win = malloc(CFI_WIN);
	if (rc == NSR_OK && r.win == NULL)
		rc = NSR_ERR_NOMEM;
	if (rc == NSR_OK)
		rc = first_from(&r, s->tab, d, total, ss, inner, ctx);
	free(r.win);
	if (r.fd >= 0)
		close(r.fd);
	return rc;
}

/* digest_piece - add a piece's names to a digest, begun at the first
 * (check_digest). */
static int digest_piece(void *ctx, const struct nsr_cfi_saveset *ss,
			const struct cfi_list *l)
{
	struct cfi_digest **g = ctx;
	int rc = NSR_OK;

	NSR_UNUSED(ss);
	if (*g == NULL)
		rc = cfi_digest_begin(g, l->total);
	return rc ? rc : cfi_digest_names(*g, l->names, l->n);
}

/* check_digest - the first list of form 1 directory d of table t, read
 * from r, has the digest the table gives.  NSR_ERR_CHECKSUM if not. */
static int check_digest(struct rsrc *r, const struct cfi_tab *t,
			const struct cfi_tdir *d)
{
	struct nsr_cfi_saveset ss = {.name = ""};
	struct cfi_digest *g = NULL;
	uint8_t md[CFI_DIGEST];
	int rc = first_from(r, t, d, -1, &ss, digest_piece, &g);

	if (rc == NSR_OK && g == NULL)
		rc = NSR_ERR_CORRUPT;
	if (rc == NSR_OK) {
		rc = cfi_digest_end(g, md);
		g = NULL;
	}
	cfi_digest_free(g);
	if (rc == NSR_OK && memcmp(md, d->lf.digest, CFI_DIGEST) != 0)
		rc = NSR_ERR_CHECKSUM;
	return rc;
}

/* cfi_holder - the directory k[0..n) of the save set holding the list a
 * form 2 names (lf): found, with a table, and of form 1 with the same
 * digest.  NSR_ERR_CORRUPT otherwise. */
int cfi_holder(const char *dir, const struct cfi_holders *h,
	       const struct cfi_lform *lf, const char *k, size_t n,
	       struct cfi_ss **hs, const struct cfi_tdir **hd)
{
	struct cfi_ss *s = h ? h->find(h->ctx, lf->ssid) : NULL;
	const struct cfi_tdir *d;
	int rc;

	if (s == NULL)
		return NSR_ERR_CORRUPT; /* the index lost the holder */
	rc = cfi_tab_get(dir, s);
	if (rc)
		return rc;
	if (s->tabstate != 1 || s->tab->version < 4)
		return NSR_ERR_CORRUPT;
	d = cfi_tab_find(s->tab, k, n);
	if (d == NULL || d->lf.form != 1 ||
	    memcmp(d->lf.digest, lf->digest, CFI_DIGEST) != 0)
		return NSR_ERR_CORRUPT;
	*hs = s;
	*hd = d;
	return NSR_OK;
}

/* cfi_scan_dir - the records of one directory, through the table; a
 * list held by another save set (form 2) is read from there, before
 * the directory's own pieces. */
int cfi_scan_dir(const char *dir, struct cfi_ss *s, const char *k, size_t n,
		 nsr_cfi_visit_fn visit, cfi_list_fn list, void *ctx,
		 const struct cfi_holders *h)
{
	const struct cfi_tdir *d, *hd;
	struct nsr_cfi_saveset ss;
	struct rsrc r = {.fd = -1};
	struct cfi_ss *hs;
	struct rec_cb cb;
	int rc;

	/* A table read before that does not hold the directory: nothing
	 * to read, and no file to open (a walk asks every save set about
	 * every directory). */
	if (s->tabstate == 1 && cfi_tab_find(s->tab, k, n) == NULL)
		return NSR_OK;
	rc = open_rec(dir, s, &r.fd);
	if (rc == NSR_OK)
		rc = load_tab(r.fd, s, &r.end);
	if (rc || s->tabstate != 1) {
		if (r.fd >= 0)
			close(r.fd);
		return rc ? rc : cfi_scan_lists(dir, s, visit, list, ctx);
	}
	d = cfi_tab_find(s->tab, k, n);
	if (d == NULL) {
		close(r.fd);
		return NSR_OK;
	}
	ss.ssid = s->ssid;
	ss.savetime = s->savetime;
	ss.entries = s->entries;
	ss.name = s->name;
	r.win = malloc(CFI_WIN);
	rc = rec_cb_init(&cb, &ss, s->tab->version, visit, list, ctx);
	if (rc == NSR_OK && r.win == NULL)
		rc = NSR_ERR_NOMEM;
	if (rc == NSR_OK)
		rc = read_dir(&cb, &r, s->tab, d, 0, 0);
	if (rc == NSR_OK && list != NULL && d->lf.form == 2) {
		rc = cfi_holder(dir, h, &d->lf, k, n, &hs, &hd);
		if (rc == NSR_OK)
			rc = read_first(dir, hs, hd, d->lf.total, &ss, list,
					ctx);
	}
	if (rc == NSR_OK && list != NULL)
		rc = read_dir(&cb, &r, s->tab, d, 1, 1);
	rec_cb_release(&cb);
	free(r.win);
	close(r.fd);
	return rc;
}

/* count_rec - count an entry (cfi_check_tab). */
static int count_rec(void *ctx, const struct nsr_cfi_saveset *ss,
		     const struct nsr_cfi_entry *e)
{
	NSR_UNUSED(ss);
	NSR_UNUSED(e);
	((uint64_t *)ctx)[0]++;
	return 0;
}

/* count_list - count a list piece (cfi_check_tab). */
static int count_list(void *ctx, const struct nsr_cfi_saveset *ss,
		      const struct cfi_list *l)
{
	NSR_UNUSED(ss);
	NSR_UNUSED(l);
	((uint64_t *)ctx)[1]++;
	return 0;
}

/* cfi_quick - the quick check of s: its file holds the committed length,
 * its header is right and (version 3) its footer and table parse.  No
 * record is read. */
int cfi_quick(const char *dir, const struct cfi_ss *s)
{
	struct cfi_tab *t = NULL;
	struct stat st;
	unsigned version;
	uint64_t end;
	int fd, rc = open_rec(dir, s, &fd);

	if (rc)
		return rc;
	if (fstat(fd, &st) != 0)
		rc = NSR_ERR_SYSTEM;
	else if ((uint64_t)st.st_size < s->length)
		rc = NSR_ERR_TRUNCATED;
	else
		rc = read_tab(fd, s, &version, &end, &t);
	cfi_tab_free(t);
	close(fd);
	return rc;
}

/* check_forms - each directory's list form: a form 1 list's pieces
 * begin with one whole list of its digest, a form 2 one's holder has
 * that list (version 4). */
static int check_forms(const char *dir, struct cfi_ss *s,
		       const struct cfi_holders *h)
{
	struct rsrc r = {.fd = -1};
	int rc = open_rec(dir, s, &r.fd);

	r.win = malloc(CFI_WIN);
	if (rc == NSR_OK && r.win == NULL)
		rc = NSR_ERR_NOMEM;
	if (rc == NSR_OK)
		rc = load_tab(r.fd, s, &r.end);
	for (size_t i = 0; rc == NSR_OK && i < s->tab->n; i++) {
		const struct cfi_tdir *d = &s->tab->d[i], *hd;
		struct cfi_ss *hs;

		if (d->lf.form == 2)
			rc = cfi_holder(dir, h, &d->lf, d->key, d->klen, &hs,
					&hd);
		else if (d->lf.form == 1)
			rc = check_digest(&r, s->tab, d);
	}
	free(r.win);
	if (r.fd >= 0)
		close(r.fd);
	return rc;
}

/* cfi_check_tab - every record named once by the table, under its key. */
int cfi_check_tab(const char *dir, struct cfi_ss *s,
		  const struct cfi_holders *h)
{
	struct nsr_cfi_saveset ss = {.ssid = s->ssid, .name = ""};
	struct rsrc r = {.fd = -1};
	struct rec_cb cb;
	uint64_t seen[2] = {0, 0}, all[2] = {0, 0};
	int rc;

	rc = open_rec(dir, s, &r.fd);
	if (rc == NSR_OK)
		rc = load_tab(r.fd, s, &r.end);
	if (rc || s->tabstate != 1)
		goto out;
	r.win = malloc(CFI_WIN);
	rc = rec_cb_init(&cb, &ss, 3, NULL, NULL, NULL);
	if (rc == NSR_OK && r.win == NULL)
		rc = NSR_ERR_NOMEM;
	for (size_t i = 0; i < s->tab->n && rc == NSR_OK; i++)
		rc = read_dir(&cb, &r, s->tab, &s->tab->d[i], 0, 1);
	memcpy(seen, cb.count, sizeof(seen));
	rec_cb_release(&cb);
	if (rc == NSR_OK)
		rc = cfi_scan_lists(dir, s, count_rec, count_list, all);
	if (rc == NSR_OK && memcmp(seen, all, sizeof(seen)) != 0)
		rc = NSR_ERR_CORRUPT;
	if (rc == NSR_OK)
		rc = check_forms(dir, s, h);
out:
	free(r.win);
	if (r.fd >= 0)
		close(r.fd);
	return rc;
}

/* cfi_scan_lists - visit the entries and list pieces of a record file. */
int cfi_scan_lists(const char *dir, const struct cfi_ss *s,
		   nsr_cfi_visit_fn visit, cfi_list_fn list, void *ctx)
{
	struct nsr_cfi_saveset ss;
	struct rec_cb cb;
	struct nsr_buf b;
	char *path = NULL;
	uint64_t left = s->length, ssid = 0;
	int64_t savetime = 0;
	unsigned version = 0;
	int fd = -1, rc, skip_hdr = 1;

	ss.ssid = s->ssid;
	ss.savetime = s->savetime;
	ss.entries = s->entries;
	ss.name = s->name;
	nsr_buf_init(&b, 0);
	rc = rec_cb_init(&cb, &ss, 0, visit, list, ctx);
	if (rc)
		goto out;
	if (asprintf(&path, "%s/ss-%" PRIu64 ".rec", dir, s->ssid) < 0) {
		path = NULL;
		rc = NSR_ERR_NOMEM;
		goto out;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	rc = errno == ENOENT ? NSR_ERR_NOTFOUND : NSR_ERR_SYSTEM;
	if (fd < 0)
		goto out;
	rc = records_end(fd, s, &left);
	if (rc)
		goto out;
	/* Read chunks up to the committed length, decoding whole records
	 * and carrying a partial one over to the next chunk. */
	while (left > 0 || b.len > 0) {
		size_t want = (size_t)NSR_MIN((uint64_t)READ_CHUNK, left);
		size_t got = 0, used = 0, skip = 0;

		if (want == 0) {
			rc = NSR_ERR_CORRUPT; /* a record runs past the end */
			goto out;
		}
		rc = nsr_buf_grow(&b, want);
		if (rc)
			goto out;
		rc = nsr_read_full(fd, b.data + b.len, want, &got);
		if (rc == NSR_OK && got != want)
			rc = NSR_ERR_CORRUPT; /* shorter than committed */
		if (rc)
			goto out;
		nsr_buf_setlen(&b, b.len + got);
		if (skip_hdr) { /* first chunk: the header */
			skip_hdr = 0;
			if (b.len < CFI_HDR_LEN) {
				rc = NSR_ERR_CORRUPT;
				goto out;
			}
			rc = cfi_hdr_get((uint8_t *)b.data, &ssid, &savetime,
					 &version);
			if (rc == NSR_OK && ssid != s->ssid)
				rc = NSR_ERR_CORRUPT;
			if (rc)
				goto out;
			cb.version = version;
			skip = CFI_HDR_LEN;
		}
		left -= got;
		rc = decode_records(&cb, (uint8_t *)b.data + skip,
				    b.len - skip, &used);
		if (rc)
			goto out;
		used += skip;
		memmove(b.data, b.data + used, b.len - used);
		nsr_buf_setlen(&b, b.len - used);
	}
	rc = NSR_OK;
out:
	if (fd >= 0)
		close(fd);
	free(path);
	rec_cb_release(&cb);
	nsr_buf_release(&b);
	return rc;
}

/* nsr_cfi_decode_catalog - decode a catalogue image from memory. */
int nsr_cfi_decode_catalog(const void *p, size_t n, nsr_cfi_ss_fn visit,
			   void *ctx)
{
	struct cfi_ss *ss = NULL;
	struct nsr_cfi_saveset v;
	size_t count = 0;
	int rc = cfi_cat_get(p, n, &ss, &count, NULL, NULL);

	for (size_t i = 0; rc == NSR_OK && i < count; i++) {
		v.ssid = ss[i].ssid;
		v.savetime = ss[i].savetime;
		v.entries = ss[i].entries;
		v.name = ss[i].name;
		if (visit)
			rc = visit(ctx, &v);
	}
	cfi_ss_free(ss, count);
	return rc;
}
