/*
 * cfi_dir.c - the directory table of a record file (version 3): which
 * records hold the entries whose parent is a directory, and which hold
 * its list pieces, so that browsing a directory reads only those
 * records (format in cfi_int.h and nsr_index(5)).  Built in memory while
 * a save set is written, appended at commit; parsed (hostile input) and
 * searched by readers.  No I/O here.
 *
 * Invariants:
 *  1. A map's directories are unique keys; each one's offsets are
 *     appended in file order, so they are strictly increasing.
 *  2. A parsed table has strictly increasing keys (bytewise, shorter
 *     first), every offset lies in [CFI_HDR_LEN, records end) and a
 *     directory's offsets strictly increase; anything else is
 *     NSR_ERR_CORRUPT.
 */
#include "nsr/compat.h"

#include <stdatomic.h>

#include <openssl/evp.h>

#include "nsr/bytes.h"
#include "nsr/crc32c.h"
#include "nsr/cmp.h"
#include "nsr/err.h"
#include "nsr/nameix.h"

#include "cfi_int.h"

/* One directory of a map being built. */
struct cfi_dent {
	char *key;
	size_t klen;
	uint64_t *off[2]; /* 0: entries, 1: list pieces */
	size_t n[2], cap[2];
	struct cfi_lform lf; /* its list form (version 4) */
};

struct cfi_dirmap {
	struct cfi_dent *d;
	size_t n, cap;
	struct nsr_nameix ix; /* d by key */
	size_t last; /* index + 1 of the last directory used */
};

/* cfi_key_of - the table key of an entry path: everything before its
 * last '/' ("/" when that is the first byte, empty without a '/'). */
size_t cfi_key_of(const char *path)
{
	const char *s = strrchr(path, '/');

	if (s == NULL)
		return 0;
	return s == path ? 1 : (size_t)(s - path);
}

/* dent_key - nsr_nameix_name_fn of a map: directory i's key. */
static const char *dent_key(const void *ctx, size_t i, size_t *len)
{
	const struct cfi_dirmap *m = ctx;

	*len = m->d[i].klen;
	return m->d[i].key;
}

/* cfi_dirmap_new - an empty map. */
struct cfi_dirmap *cfi_dirmap_new(void)
{
	struct cfi_dirmap *m = calloc(1, sizeof(struct cfi_dirmap));

	if (m != NULL)
		nsr_nameix_init(&m->ix, dent_key, m);
	return m;
}

/* cfi_dirmap_free - free (NULL is fine). */
void cfi_dirmap_free(struct cfi_dirmap *m)
{
	if (m == NULL)
		return;
	for (size_t i = 0; i < m->n; i++) {
		free(m->d[i].key);
		free(m->d[i].off[0]);
		free(m->d[i].off[1]);
	}
	free(m->d);
	nsr_nameix_free(&m->ix);
	free(m);
}

/* lookup - the directory of key k, added if new (invariant 1). */
static int lookup(struct cfi_dirmap *m, const char *k, size_t n,
		  struct cfi_dent **out)
{
	struct cfi_dent *d;
	size_t i;
	int rc;

	if (m->last != 0) {
		d = &m->d[m->last - 1];
		if (d->klen == n && memcmp(d->key, k, n) == 0) {
			*out = d;
			return NSR_OK;
		}
	}
	i = nsr_nameix_find(&m->ix, k, n);
	if (i != NSR_NAMEIX_NONE) {
		m->last = i + 1;
		*out = &m->d[i];
		return NSR_OK;
	}
	if (m->n == m->cap) {
		size_t nc = m->cap ? m->cap * 2 : 256;
		struct cfi_dent *nd = realloc(m->d, nc * sizeof(*nd));

		if (nd == NULL)
			return NSR_ERR_NOMEM;
		m->d = nd;
		m->cap = nc;
	}
	d = &m->d[m->n];
	memset(d, 0, sizeof(*d));
	d->key = malloc(n + 1);
	if (d->key == NULL)
		return NSR_ERR_NOMEM;
	memcpy(d->key, k, n);
	d->key[n] = '\0';
	d->klen = n;
	rc = nsr_nameix_add(&m->ix, m->n);
	if (rc != NSR_OK) {
		free(d->key);
		return rc;
	}
	m->last = ++m->n;
	*out = d;
	return NSR_OK;
}

/* cfi_dirmap_add - note that the record at off holds an entry (list 0)
 * whose key is k[0..n), or a list piece (list 1) of directory k. */
int cfi_dirmap_add(struct cfi_dirmap *m, const char *k, size_t n, int list,
		   uint64_t off)
{
	struct cfi_dent *d;
	int rc = lookup(m, k, n, &d);

	if (rc)
		return rc;
	if (d->n[list] == d->cap[list]) {
		size_t nc = d->cap[list] ? d->cap[list] * 2 : 4;
		uint64_t *no = realloc(d->off[list], nc * sizeof(*no));

		if (no == NULL)
			return NSR_ERR_NOMEM;
		d->off[list] = no;
		d->cap[list] = nc;
	}
	d->off[list][d->n[list]++] = off;
	return NSR_OK;
}

/* find - the directory of key k in m, or NULL (never adds). */
static struct cfi_dent *find(struct cfi_dirmap *m, const char *k, size_t n)
{
	size_t i = nsr_nameix_find(&m->ix, k, n);

	return i != NSR_NAMEIX_NONE ? &m->d[i] : NULL;
}

/* cfi_dirmap_lform - the list form of directory k so far and its list
 * pieces (NULL and 0: the map has nothing of k). */
const struct cfi_lform *cfi_dirmap_lform(struct cfi_dirmap *m, const char *k,
					 size_t n, size_t *pieces)
{
	struct cfi_dent *d = find(m, k, n);

	*pieces = d ? d->n[1] : 0;
	return d ? &d->lf : NULL;
}

/* cfi_dirmap_setform - set the list form of directory k (added if
 * new). */
int cfi_dirmap_setform(struct cfi_dirmap *m, const char *k, size_t n,
		       const struct cfi_lform *lf)
{
	struct cfi_dent *d;
	int rc = lookup(m, k, n, &d);

	if (rc == NSR_OK)
		d->lf = *lf;
	return rc;
}

/* cfi_dirmap_drop - forget the last pieces list offsets of directory k
 * (records the writer took back). */
int cfi_dirmap_drop(struct cfi_dirmap *m, const char *k, size_t n,
		    size_t pieces)
{
	struct cfi_dent *d = find(m, k, n);

	if (d == NULL || d->n[1] < pieces)
		return NSR_ERR_STATE;
	d->n[1] -= pieces;
	return NSR_OK;
}

/* cfi_dirmap_refs - the distinct ssids the map's form 2 lists name,
 * increasing, in a malloc'ed array (NULL when none). */
int cfi_dirmap_refs(const struct cfi_dirmap *m, uint64_t **out, uint32_t *n)
{
	uint64_t *v = NULL;
	size_t k = 0;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < m->n; i++) {
		if (m->d[i].lf.form != 2)
			continue;
		if (v == NULL) {
			v = malloc(m->n * sizeof(*v));
			if (v == NULL)
				return NSR_ERR_NOMEM;
		}
		v[k++] = m->d[i].lf.ssid;
	}
	if (k > 1)
		qsort(v, k, sizeof(*v), nsr_cmp_u64);
	for (size_t i = 0; i < k; i++)
		if (*n == 0 || v[i] != v[*n - 1])
			v[(*n)++] = v[i];
	*out = v;
	return NSR_OK;
}

/* cfi_key_cmp - bytewise order of keys, a prefix first. */
int cfi_key_cmp(const char *a, size_t an, const char *b, size_t bn)
{
	int d = memcmp(a, b, NSR_MIN(an, bn));

	if (d != 0)
		return d;
	return (an > bn) - (an < bn);
}

/* cmp_dent - sort order of a map's directories. */
static int cmp_dent(const void *x, const void *y)
{
	const struct cfi_dent *a = x, *b = y;

	return cfi_key_cmp(a->key, a->klen, b->key, b->klen);
}

/* put_var - append an unsigned LEB128 number. */
static int put_var(struct nsr_buf *b, uint64_t v)
{
	uint8_t t[10];
	size_t n = 0;

	do {
		t[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v != 0);
	return nsr_buf_add(b, t, n);
}

/* cfi_var_get - decode one LEB128 number at p[*at..n); NSR_ERR_CORRUPT
 * past the end or longer than 64 bits. */
int cfi_var_get(const uint8_t *p, size_t n, size_t *at, uint64_t *v)
{
	uint64_t r = 0;

	for (unsigned sh = 0; sh < 64; sh += 7) {
		uint8_t c;

		if (*at >= n)
			return NSR_ERR_CORRUPT;
		c = p[(*at)++];
		if (sh == 63 && c > 1)
			return NSR_ERR_CORRUPT;
		r |= (uint64_t)(c & 0x7f) << sh;
		if (!(c & 0x80)) {
			*v = r;
			return NSR_OK;
		}
	}
	return NSR_ERR_CORRUPT;
}

/* put_offs - a count and its offsets as deltas. */
static int put_offs(struct nsr_buf *b, const uint64_t *off, size_t n)
{
	uint64_t prev = 0;
	int rc = put_var(b, n);

	for (size_t i = 0; i < n && rc == NSR_OK; i++) {
		rc = put_var(b, off[i] - prev);
		prev = off[i];
	}
	return rc;
}

/* put_form - a directory's list form (version 4). */
static int put_form(struct nsr_buf *b, const struct cfi_lform *lf)
{
	uint8_t f = (uint8_t)lf->form;
	int rc = nsr_buf_add(b, &f, 1);

	if (rc == NSR_OK && lf->form != 0)
		rc = nsr_buf_add(b, lf->digest, CFI_DIGEST);
	if (rc == NSR_OK && lf->form == 2)
		rc = put_var(b, lf->total);
	if (rc == NSR_OK && lf->form == 2)
		rc = put_var(b, lf->ssid);
	return rc;
}

/* put_refs - the ssids the table's form 2 lists name. */
static int put_refs(const struct cfi_dirmap *m, struct nsr_buf *b)
{
	uint64_t *v;
	uint32_t n;
	int rc = cfi_dirmap_refs(m, &v, &n);

	if (rc == NSR_OK)
		rc = put_var(b, n);
	for (uint32_t i = 0; i < n && rc == NSR_OK; i++)
		rc = put_var(b, v[i]);
	free(v);
	return rc;
}

/* cfi_dirmap_put - append the table of m and the footer to out; the
 * table starts at file offset at.  The map is sorted in place. */
int cfi_dirmap_put(struct cfi_dirmap *m, struct nsr_buf *out, uint64_t at)
{
	size_t start = out->len;
	uint8_t f[CFI_FOOT_LEN];
	int rc;

	m->last = 0; /* numbers go stale with the sort: the map is done */
	nsr_nameix_free(&m->ix);
	if (m->n > 1)
		qsort(m->d, m->n, sizeof(*m->d), cmp_dent);
	nsr_put_u32(f, CFI_TAB_MAGIC);
	rc = nsr_buf_add(out, f, 4);
	if (rc == NSR_OK)
		rc = put_var(out, m->n);
	for (size_t i = 0; i < m->n && rc == NSR_OK; i++) {
		struct cfi_dent *d = &m->d[i];

		rc = put_var(out, d->klen);
		if (rc == NSR_OK)
			rc = nsr_buf_add(out, d->key, d->klen);
		if (rc == NSR_OK)
			rc = put_offs(out, d->off[0], d->n[0]);
		if (rc == NSR_OK)
			rc = put_offs(out, d->off[1], d->n[1]);
		if (rc == NSR_OK)
			rc = put_form(out, &d->lf);
	}
	if (rc == NSR_OK)
		rc = put_refs(m, out);
	if (rc) {
		nsr_buf_setlen(out, start);
		return rc;
	}
	nsr_put_u32(f, CFI_FOOT_MAGIC);
	nsr_put_u64(f + 4, at);
	nsr_put_u32(f + 12, (uint32_t)(out->len - start));
	nsr_put_u32(f + 16, nsr_crc32c(0, out->data + start,
				       out->len - start));
	nsr_put_u32(f + 20, nsr_crc32c(0, f, 20));
	if (out->len - start > CFI_TAB_MAX) {
		nsr_buf_setlen(out, start);
		return NSR_ERR_TOOBIG;
	}
	rc = nsr_buf_add(out, f, sizeof(f));
	if (rc)
		nsr_buf_setlen(out, start);
	return rc;
}

/* cfi_foot_get - check and decode a footer of a file of committed
 * length len: the table's offset and length. */
int cfi_foot_get(const uint8_t *f, uint64_t len, uint64_t *toff,
		 uint32_t *tlen, uint32_t *tcrc)
{
	if (nsr_get_u32(f) != CFI_FOOT_MAGIC)
		return NSR_ERR_CORRUPT;
	if (nsr_get_u32(f + 20) != nsr_crc32c(0, f, 20))
		return NSR_ERR_CHECKSUM;
	*toff = nsr_get_u64(f + 4);
	*tlen = nsr_get_u32(f + 12);
	*tcrc = nsr_get_u32(f + 16);
	if (len < CFI_HDR_LEN + CFI_FOOT_LEN || *toff < CFI_HDR_LEN ||
	    *tlen > CFI_TAB_MAX || *toff + *tlen + CFI_FOOT_LEN != len)
		return NSR_ERR_CORRUPT;
	return NSR_OK;
}

/* get_offs - check a count and its deltas (invariant 2); *at moves past
 * them. */
static int get_offs(const uint8_t *p, size_t n, size_t *at, uint64_t end,
		    uint32_t *count)
{
	uint64_t c, prev = 0, d;

	if (cfi_var_get(p, n, at, &c) || c > n - *at)
		return NSR_ERR_CORRUPT; /* each delta takes a byte */
	for (uint64_t i = 0; i < c; i++) {
		if (cfi_var_get(p, n, at, &d) || (i > 0 && d == 0) ||
		    d >= end - prev)
			return NSR_ERR_CORRUPT;
		prev += d;
		if (prev < CFI_HDR_LEN)
			return NSR_ERR_CORRUPT;
	}
	*count = (uint32_t)c;
	return NSR_OK;
}

/* Bytes of the tables save sets hold (cfi_tab_hold), in the process. */
static _Atomic size_t g_tab_held;

/* Uses of tables so far: the clock of cfi_ss.tab_used. */
static _Atomic uint64_t g_tab_tick;

/* cfi_tab_hold - t is now held by a save set (invariant 7 of cfi.c):
 * count its bytes until it is freed. */
void cfi_tab_hold(struct cfi_tab *t)
{
	t->held = sizeof(*t) + t->len + t->n * sizeof(*t->d) +
		  t->nrefs * sizeof(*t->refs);
	atomic_fetch_add(&g_tab_held, t->held);
}

/* cfi_tab_tick - the next tick of the tables' use clock. */
uint64_t cfi_tab_tick(void)
{
	return atomic_fetch_add(&g_tab_tick, 1) + 1;
}

/* nsr_cfi_tables_held - see cfi.h. */
size_t nsr_cfi_tables_held(void)
{
	return atomic_load(&g_tab_held);
}

/* cfi_tab_free - free a parsed table (NULL is fine). */
void cfi_tab_free(struct cfi_tab *t)
{
	if (t == NULL)
		return;
	if (t->held)
		atomic_fetch_sub(&g_tab_held, t->held);
	free(t->blob);
	free(t->d);
	free(t->refs);
	free(t);
}

/* get_form - a directory's list form; form 1 needs a piece. */
static int get_form(const uint8_t *p, size_t n, size_t *at,
		    struct cfi_tdir *d)
{
	struct cfi_lform *lf = &d->lf;
	uint64_t v;

	if (*at >= n || p[*at] > 2)
		return NSR_ERR_CORRUPT;
	lf->form = p[(*at)++];
	if (lf->form == 0)
		return NSR_OK;
	if (n - *at < CFI_DIGEST || (lf->form == 1 && d->n[1] == 0))
		return NSR_ERR_CORRUPT;
	memcpy(lf->digest, p + *at, CFI_DIGEST);
	*at += CFI_DIGEST;
	if (lf->form == 1)
		return NSR_OK;
	if (cfi_var_get(p, n, at, &v) || v > UINT32_MAX)
		return NSR_ERR_CORRUPT;
	lf->total = (uint32_t)v;
	return cfi_var_get(p, n, at, &lf->ssid);
}

/* get_refs - the table's ssids: strictly increasing, and exactly those
 * its form 2 lists name. */
static int get_refs(struct cfi_tab *t, size_t *at)
{
	const uint8_t *p = t->blob;
	uint8_t *used;
	uint64_t c;
	int rc = NSR_OK;

	if (cfi_var_get(p, t->len, at, &c) || c > t->len - *at)
		return NSR_ERR_CORRUPT;
	t->refs = malloc((c ? c : 1) * sizeof(*t->refs));
	if (t->refs == NULL)
		return NSR_ERR_NOMEM;
	for (t->nrefs = 0; t->nrefs < c; t->nrefs++) {
		uint64_t *r = &t->refs[t->nrefs];

		if (cfi_var_get(p, t->len, at, r) ||
		    (t->nrefs > 0 && *r <= r[-1]))
			return NSR_ERR_CORRUPT;
	}
	used = calloc(c ? c : 1, 1);
	if (used == NULL)
		return NSR_ERR_NOMEM;
	for (size_t i = 0; i < t->n && rc == NSR_OK; i++) {
		const uint64_t *r;

		if (t->d[i].lf.form != 2)
			continue;
		r = bsearch(&t->d[i].lf.ssid, t->refs, t->nrefs,
			    sizeof(*t->refs), nsr_cmp_u64);
		if (r == NULL)
			rc = NSR_ERR_CORRUPT;
		else
			used[r - t->refs] = 1;
	}
	for (size_t i = 0; i < c && rc == NSR_OK; i++)
		if (!used[i])
			rc = NSR_ERR_CORRUPT;
	free(used);
	return rc;
}

/* cfi_tab_parse - check table bytes blob[0..n) (owned from now on, also
 * on failure) of a file whose records end at end; NSR_ERR_CORRUPT,
 * NSR_ERR_NOMEM. */
int cfi_tab_parse(uint8_t *blob, size_t n, uint64_t end, unsigned version,
		  struct cfi_tab **out)
{
	struct cfi_tab *t = calloc(1, sizeof(*t));
	uint64_t nd;
	size_t at = 4;
	int rc = NSR_ERR_CORRUPT;

	*out = NULL;
	if (t == NULL) {
		free(blob);
		return NSR_ERR_NOMEM;
	}
	t->blob = blob;
	t->len = n;
	if (n < 5 || nsr_get_u32(blob) != CFI_TAB_MAGIC ||
	    cfi_var_get(blob, n, &at, &nd) || nd > (n - at) / 3)
		goto fail; /* a directory takes at least 3 bytes */
	t->d = calloc(nd ? nd : 1, sizeof(*t->d));
	if (t->d == NULL) {
		rc = NSR_ERR_NOMEM;
		goto fail;
	}
	for (t->n = 0; t->n < nd; t->n++) {
		struct cfi_tdir *d = &t->d[t->n];
		uint64_t kl;

		if (cfi_var_get(blob, n, &at, &kl) || kl > CFI_PATH_MAX ||
		    kl > n - at || memchr(blob + at, '\0', kl) != NULL)
			goto fail;
		d->key = (const char *)blob + at;
		d->klen = (size_t)kl;
		at += kl;
		if (t->n > 0 && cfi_key_cmp(d[-1].key, d[-1].klen, d->key,
					    d->klen) >= 0)
			goto fail;
		d->at[0] = at;
		if (get_offs(blob, n, &at, end, &d->n[0]))
			goto fail;
		d->at[1] = at;
		if (get_offs(blob, n, &at, end, &d->n[1]))
			goto fail;
		if (version >= 4 && get_form(blob, n, &at, d))
			goto fail;
	}
	t->version = version;
	if (version >= 4) {
		rc = get_refs(t, &at);
		if (rc)
			goto fail;
		rc = NSR_ERR_CORRUPT;
	}
	if (at != n)
		goto fail;
	*out = t;
	return NSR_OK;
fail:
	cfi_tab_free(t);
	return rc;
}

/* cfi_tab_find - the directory of key k in t, or NULL. */
const struct cfi_tdir *cfi_tab_find(const struct cfi_tab *t, const char *k,
				    size_t n)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int d = cfi_key_cmp(t->d[mid].key, t->d[mid].klen, k, n);

		if (d == 0)
			return &t->d[mid];
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* cfi_tab_offs - decode the offsets of list (0 entries, 1 pieces) of d
 * into a malloc'ed array (checked at parse: cannot fail but for memory). */
int cfi_tab_offs(const struct cfi_tab *t, const struct cfi_tdir *d, int list,
		 uint64_t **out)
{
	size_t at = d->at[list];
	uint64_t c = 0, v = 0, prev = 0;
	uint64_t *o;

	*out = NULL;
	o = malloc((d->n[list] ? d->n[list] : 1) * sizeof(*o));
	if (o == NULL)
		return NSR_ERR_NOMEM;
	cfi_var_get(t->blob, t->len, &at, &c);
	(void)c;
	for (uint32_t i = 0; i < d->n[list]; i++) {
		cfi_var_get(t->blob, t->len, &at, &v);
		prev += v;
		o[i] = prev;
	}
	*out = o;
	return NSR_OK;
}

/* ---- entry blocks (version 3) ---------------------------------------- */

/* zig - signed to unsigned for varints (small magnitudes stay short). */
static uint64_t zig(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

/* zag - the inverse of zig. */
static int64_t zag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* cfi_blk_init - an empty block builder. */
int cfi_blk_init(struct cfi_blk *k)
{
	memset(k, 0, sizeof(*k));
	nsr_buf_init(&k->b, 0);
	k->prev = malloc(CFI_PATH_MAX + 1);
	return k->prev ? NSR_OK : NSR_ERR_NOMEM;
}

/* cfi_blk_release - free a builder. */
void cfi_blk_release(struct cfi_blk *k)
{
	nsr_buf_release(&k->b);
	free(k->prev);
	k->prev = NULL;
}

/* cfi_blk_joins - may an entry of path (key length kl) join the block
 * (same key, room left)? */
int cfi_blk_joins(const struct cfi_blk *k, const char *path, size_t kl)
{
	size_t nl = strlen(path) - kl;

	return k->count > 0 && kl == k->klen &&
	       memcmp(k->b.data + 8 + k->kvar, path, kl) == 0 &&
	       k->b.len + 96 + nl <= CFI_BLK_SOFT;
}

/* cfi_blk_add - add entry e (checked as cfi_rec_put does: NSR_ERR_INVAL)
 * whose key length is kl; a new block when the builder is empty.
 * NSR_ERR_UNSUPPORTED, before any change, for a path a block cannot
 * rebuild from key and name ("//x": its key is "/" too). */
int cfi_blk_add(struct cfi_blk *k, const struct nsr_cfi_entry *e, size_t kl)
{
	size_t plen = e->path ? strlen(e->path) : 0, ns, nl, pre = 0;
	const char *name;
	int rc = NSR_OK;

	if (plen == 0 || plen > CFI_PATH_MAX || e->mode > NSR_CFI_MODE_MAX ||
	    e->mtime_nsec >= 1000000000u || e->type < 1 || e->type > 255)
		return NSR_ERR_INVAL;
	/* the name: what follows the key and its '/' (none for key "") */
	ns = kl == 0 ? 0 : (kl == 1 && e->path[0] == '/') ? 1 : kl + 1;
	name = e->path + ns;
	nl = plen - ns;
	if (memchr(name, '/', nl) != NULL)
		return NSR_ERR_UNSUPPORTED;
	if (k->count == 0) {
		uint8_t h[8] = {0, CFI_LIST_BLOCK, 0, 0, 0, 0, 0, 0};
		size_t at;

		nsr_buf_reset(&k->b);
		rc = nsr_buf_add(&k->b, h, sizeof(h));
		at = k->b.len;
		if (rc == NSR_OK)
			rc = put_var(&k->b, kl);
		k->kvar = k->b.len - at;
		if (rc == NSR_OK)
			rc = nsr_buf_add(&k->b, e->path, kl);
		k->klen = kl;
		k->mtime = 0;
		k->off = 0;
		k->plen = 0;
	}
	while (pre < k->plen && pre < nl && k->prev[pre] == name[pre])
		pre++;
	if (rc == NSR_OK)
		rc = put_var(&k->b, (uint64_t)e->type);
	if (rc == NSR_OK)
		rc = put_var(&k->b, e->mode);
	if (rc == NSR_OK)
		rc = put_var(&k->b, e->uid);
	if (rc == NSR_OK)
		rc = put_var(&k->b, e->gid);
	if (rc == NSR_OK)
		rc = put_var(&k->b, e->size);
	if (rc == NSR_OK)
		rc = put_var(&k->b, zig((int64_t)((uint64_t)e->mtime -
						  (uint64_t)k->mtime)));
	if (rc == NSR_OK)
		rc = put_var(&k->b, e->mtime_nsec);
	if (rc == NSR_OK)
		rc = put_var(&k->b, zig((int64_t)(e->offset - k->off)));
	if (rc == NSR_OK)
		rc = put_var(&k->b, pre);
	if (rc == NSR_OK)
		rc = put_var(&k->b, nl - pre);
	if (rc == NSR_OK)
		rc = nsr_buf_add(&k->b, name + pre, nl - pre);
	if (rc)
		return rc;
	memcpy(k->prev + pre, name + pre, nl - pre);
	k->plen = nl;
	k->mtime = e->mtime;
	k->off = e->offset;
	k->count++;
	return NSR_OK;
}

/* cfi_blk_put - append the block, framed, to out and empty the
 * builder. */
int cfi_blk_put(struct cfi_blk *k, struct nsr_buf *out)
{
	uint8_t t[4];
	int rc;

	nsr_put_u32((uint8_t *)k->b.data + 4, k->count);
	nsr_put_u32(t, (uint32_t)k->b.len);
	rc = nsr_buf_grow(out, k->b.len + 8);
	if (rc)
		return rc;
	nsr_buf_add(out, t, 4);
	nsr_buf_add(out, k->b.data, k->b.len);
	nsr_put_u32(t, nsr_crc32c(0, k->b.data, k->b.len));
	nsr_buf_add(out, t, 4);
	k->count = 0;
	return NSR_OK;
}

/* cfi_blk_open - start reading block payload p[0..len) (frame checked):
 * its key and count.  NSR_ERR_CORRUPT. */
int cfi_blk_open(struct cfi_blk_rd *r, const uint8_t *p, size_t len)
{
	uint64_t kl;

	memset(r, 0, sizeof(*r));
	r->p = p;
	r->len = len;
	r->at = 8;
	if (len < 8 || p[0] != 0 || p[1] != CFI_LIST_BLOCK || p[2] != 0 ||
	    p[3] != 0)
		return NSR_ERR_CORRUPT;
	r->left = nsr_get_u32(p + 4);
	if (r->left == 0 || cfi_var_get(p, len, &r->at, &kl) ||
	    kl > CFI_PATH_MAX || kl > len - r->at ||
	    memchr(p + r->at, '\0', kl) != NULL)
		return NSR_ERR_CORRUPT;
	r->key = (const char *)p + r->at;
	r->klen = (size_t)kl;
	r->at += kl;
	if (r->left > (len - r->at) / 10)
		return NSR_ERR_CORRUPT; /* an entry takes at least 10 bytes */
	return NSR_OK;
}

/* cfi_blk_next - the next entry into e, its path built in path
 * (CFI_PATH_MAX + 1 bytes, kept between calls: the next name shares
 * its start); 1 = an entry, 0 = the end (every byte used),
 * NSR_ERR_CORRUPT. */
int cfi_blk_next(struct cfi_blk_rd *r, struct nsr_cfi_entry *e, char *path)
{
	uint64_t v[10];
	size_t ns = r->klen == 0 ? 0 : r->klen == 1 && r->key[0] == '/'
					  ? 1 : r->klen + 1;

	if (r->left == 0)
		return r->at == r->len ? 0 : NSR_ERR_CORRUPT;
	for (int i = 0; i < 10; i++)
		if (cfi_var_get(r->p, r->len, &r->at, &v[i]))
			return NSR_ERR_CORRUPT;
	/* type, mode, uid, gid, size, mtime, nsec, offset, shared, rest */
	if (v[0] < 1 || v[0] > 255 || v[1] > NSR_CFI_MODE_MAX ||
	    v[2] > UINT32_MAX || v[3] > UINT32_MAX || v[6] >= 1000000000u ||
	    v[8] > r->plen || v[9] > r->len - r->at ||
	    v[8] + v[9] > CFI_PATH_MAX - ns ||
	    memchr(r->p + r->at, '\0', (size_t)v[9]) != NULL ||
	    memchr(r->p + r->at, '/', (size_t)v[9]) != NULL)
		return NSR_ERR_CORRUPT;
	if (r->count == 0) {
		memcpy(path, r->key, r->klen);
		if (ns > r->klen)
			path[r->klen] = '/';
	}
	memcpy(path + ns + v[8], r->p + r->at, (size_t)v[9]);
	r->at += (size_t)v[9];
	r->plen = (size_t)(v[8] + v[9]);
	path[ns + r->plen] = '\0';
	if (ns + r->plen == 0)
		return NSR_ERR_CORRUPT; /* an empty path */
	r->mtime = (int64_t)((uint64_t)r->mtime + (uint64_t)zag(v[5]));
	r->off += (uint64_t)zag(v[7]);
	memset(e, 0, sizeof(*e));
	e->path = path;
	e->type = (int)v[0];
	e->mode = (uint32_t)v[1];
	e->uid = (uint32_t)v[2];
	e->gid = (uint32_t)v[3];
	e->size = v[4];
	e->mtime = r->mtime;
	e->mtime_nsec = (uint32_t)v[6];
	e->offset = r->off;
	r->count++;
	r->left--;
	return 1;
}

/* ---- list digests (version 4) ---------------------------------------- */

struct cfi_digest {
	EVP_MD_CTX *md;
};

/* cfi_digest_free - free (NULL is fine). */
void cfi_digest_free(struct cfi_digest *d)
{
	if (d == NULL)
		return;
	EVP_MD_CTX_free(d->md);
	free(d);
}

/* cfi_digest_begin - start the digest of a list of total names. */
int cfi_digest_begin(struct cfi_digest **out, uint32_t total)
{
	struct cfi_digest *d = calloc(1, sizeof(*d));
	uint8_t t[4];

	*out = NULL;
	if (d == NULL)
		return NSR_ERR_NOMEM;
	d->md = EVP_MD_CTX_new();
	nsr_put_u32(t, total);
	if (d->md == NULL ||
	    EVP_DigestInit_ex(d->md, EVP_sha256(), NULL) != 1 ||
	    EVP_DigestUpdate(d->md, t, 4) != 1) {
		cfi_digest_free(d);
		return NSR_ERR_NOMEM;
	}
	*out = d;
	return NSR_OK;
}

/* cfi_digest_names - add names[0..n) (each 1..255 bytes), in order. */
int cfi_digest_names(struct cfi_digest *d, const char *const *names,
		     size_t n)
{
	uint8_t buf[4096];
	size_t at = 0;

	for (size_t i = 0; i <= n; i++) {
		size_t nl = i < n ? strlen(names[i]) : 0;

		if ((i == n || at + 1 + nl > sizeof(buf)) && at > 0) {
			if (EVP_DigestUpdate(d->md, buf, at) != 1)
				return NSR_ERR_NOMEM;
			at = 0;
		}
		if (i == n)
			break;
		buf[at++] = (uint8_t)nl;
		memcpy(buf + at, names[i], nl);
		at += nl;
	}
	return NSR_OK;
}

/* cfi_digest_end - the first CFI_DIGEST bytes of the digest; frees d. */
int cfi_digest_end(struct cfi_digest *d, uint8_t out[CFI_DIGEST])
{
	uint8_t md[EVP_MAX_MD_SIZE];
	unsigned n = 0;
	int ok = EVP_DigestFinal_ex(d->md, md, &n) == 1 && n >= CFI_DIGEST;

	cfi_digest_free(d);
	if (!ok)
		return NSR_ERR_NOMEM;
	memcpy(out, md, CFI_DIGEST);
	return NSR_OK;
}
