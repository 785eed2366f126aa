/*
 * btree.c - B+trees over media database pages: the tree catalog in page 0,
 * lookup, insert with page splits, delete with merges, cursors and the
 * structural checker.  It owns the node layout (btree_int.h); the pager
 * owns the pages.
 *
 * Every node read from a page is validated before use (cell offsets and
 * lengths inside the page, child pages inside the file, bounded depth), so
 * a damaged page yields NSR_ERR_CORRUPT, never a wild read.
 */
#include "nsr/compat.h"

#include "nsr/bytes.h"
#include "nsr/err.h"
#include "nsr/mmdb_btree.h"
#include "nsr/mmdb_pager.h"

#include "btree_int.h"

/* ---- node access ----------------------------------------------------- */

struct cell {
	const uint8_t *key;
	size_t klen;
	const uint8_t *val;
	size_t vlen;
	uint32_t child;
	const uint8_t *raw;	/* whole cell */
	size_t size;
};

/* n_cells - cell count of a node. */
static unsigned n_cells(const uint8_t *pg)
{
	return nsr_get_u16(pg + N_NCELLS);
}

/* is_leaf - whether a node is a leaf. */
static int is_leaf(const uint8_t *pg)
{
	return pg[N_TYPE] == MMDB_PT_LEAF;
}

/* node_ok - header sanity of a node page. */
static int node_ok(const uint8_t *pg)
{
	unsigned n = n_cells(pg);
	unsigned cs = nsr_get_u16(pg + N_CSTART);

	if (pg[N_TYPE] != MMDB_PT_LEAF && pg[N_TYPE] != MMDB_PT_INTERIOR)
		return NSR_ERR_CORRUPT;
	if (cs == 0)
		cs = MMDB_PAGE_SIZE;
	if (N_SLOTS + 2u * n > cs || cs > MMDB_PAGE_SIZE)
		return NSR_ERR_CORRUPT;
	return NSR_OK;
}

/* cstart - start of the cell content area. */
static unsigned cstart(const uint8_t *pg)
{
	unsigned cs = nsr_get_u16(pg + N_CSTART);

	return cs == 0 ? MMDB_PAGE_SIZE : cs;
}

/* set_cstart - store the cell content start (32768 is stored as 0). */
static void set_cstart(uint8_t *pg, unsigned cs)
{
	nsr_put_u16(pg + N_CSTART, (uint16_t)(cs == MMDB_PAGE_SIZE ? 0 : cs));
}

/* cell_get - decode and bounds-check cell i of a node. */
static int cell_get(const uint8_t *pg, unsigned i, struct cell *c)
{
	unsigned n = n_cells(pg);
	size_t off;

	if (i >= n)
		return NSR_ERR_CORRUPT;
	off = nsr_get_u16(pg + N_SLOTS + 2 * i);
	if (off < N_SLOTS + 2u * n)
		return NSR_ERR_CORRUPT;
	c->raw = pg + off;
	if (is_leaf(pg)) {
		if (off + 4 > MMDB_PAGE_SIZE)
			return NSR_ERR_CORRUPT;
		c->klen = nsr_get_u16(pg + off);
		c->vlen = nsr_get_u16(pg + off + 2);
		c->size = 4 + c->klen + c->vlen;
		c->key = pg + off + 4;
		c->val = c->key + c->klen;
		c->child = 0;
	} else {
		if (off + 6 > MMDB_PAGE_SIZE)
			return NSR_ERR_CORRUPT;
		c->klen = nsr_get_u16(pg + off);
		c->child = nsr_get_u32(pg + off + 2);
		c->size = 6 + c->klen;
		c->key = pg + off + 6;
		c->val = NULL;
		c->vlen = 0;
		if (c->child == 0)
			return NSR_ERR_CORRUPT;
	}
	if (off + c->size > MMDB_PAGE_SIZE)
		return NSR_ERR_CORRUPT;
	return NSR_OK;
}

/* child_at - child page number ci (0 = leftmost) of an interior node. */
static int child_at(const uint8_t *pg, unsigned ci, uint32_t *child)
{
	struct cell c;
	int rc;

	if (ci == 0) {
		*child = nsr_get_u32(pg + N_CHILD0);
		return *child ? NSR_OK : NSR_ERR_CORRUPT;
	}
	rc = cell_get(pg, ci - 1, &c);
	*child = c.child;
	return rc;
}

/* kcmp - bytewise key order, shorter first on a common prefix. */
static int kcmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
	int c = memcmp(a, b, NSR_MIN(al, bl));

	if (c)
		return c;
	return al < bl ? -1 : al > bl;
}

/* search - leaf: first cell with key >= k (*found if equal); interior:
 * number of cells with key <= k, i.e. the child index to descend. */
static int search(const uint8_t *pg, const uint8_t *k, size_t klen,
		  unsigned *pos, int *found)
{
	unsigned lo = 0, hi = n_cells(pg);
	int leaf = is_leaf(pg);
	struct cell c;
	int rc;

	*found = 0;
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		int cmp;

		rc = cell_get(pg, mid, &c);
		if (rc != NSR_OK)
			return rc;
		cmp = kcmp(c.key, c.klen, k, klen);
		if (leaf ? cmp < 0 : cmp <= 0)
			lo = mid + 1;
		else
			hi = mid;
		if (cmp == 0)
			*found = 1;
	}
	*pos = lo;
	return NSR_OK;
}

/* node_used - bytes used by slots and cells. */
static size_t node_used(const uint8_t *pg)
{
	size_t used = 2u * n_cells(pg);
	struct cell c;

	for (unsigned i = 0; i < n_cells(pg); i++)
		if (cell_get(pg, i, &c) == NSR_OK)
			used += c.size;
	return used;
}

/* node_init - empty node of type (the common header is kept). */
static void node_init(uint8_t *pg, uint8_t type)
{
	memset(pg + N_TYPE, 0, MMDB_PAGE_SIZE - N_TYPE);
	pg[N_TYPE] = type;
	set_cstart(pg, MMDB_PAGE_SIZE);
}

/* node_insert_at - put raw cell at slot idx; caller made contiguous room. */
static void node_insert_at(uint8_t *pg, unsigned idx, const uint8_t *raw,
			   size_t size)
{
	unsigned n = n_cells(pg);
	unsigned cs = cstart(pg) - (unsigned)size;

	memcpy(pg + cs, raw, size);
	memmove(pg + N_SLOTS + 2 * (idx + 1), pg + N_SLOTS + 2 * idx,
		2u * (n - idx));
	nsr_put_u16(pg + N_SLOTS + 2 * idx, (uint16_t)cs);
	nsr_put_u16(pg + N_NCELLS, (uint16_t)(n + 1));
	set_cstart(pg, cs);
}

/* node_append - put raw cell after the last slot (room assumed). */
static void node_append(uint8_t *pg, const uint8_t *raw, size_t size)
{
	node_insert_at(pg, n_cells(pg), raw, size);
}

/* node_remove_at - drop slot idx (its bytes become a hole). */
static void node_remove_at(uint8_t *pg, unsigned idx)
{
	unsigned n = n_cells(pg);

	memmove(pg + N_SLOTS + 2 * idx, pg + N_SLOTS + 2 * (idx + 1),
		2u * (n - idx - 1));
	nsr_put_u16(pg + N_NCELLS, (uint16_t)(n - 1));
}

/* contig - contiguous free bytes between slots and cells. */
static size_t contig(const uint8_t *pg)
{
	return cstart(pg) - (N_SLOTS + 2u * n_cells(pg));
}

/* node_defrag - pack all cells at the end of the page (tmp: scratch). */
static int node_defrag(uint8_t *pg, uint8_t *tmp)
{
	unsigned n = n_cells(pg);
	struct cell c;
	int rc;

	memcpy(tmp, pg, MMDB_PAGE_SIZE);
	nsr_put_u16(pg + N_NCELLS, 0);
	set_cstart(pg, MMDB_PAGE_SIZE);
	for (unsigned i = 0; i < n; i++) {
		rc = cell_get(tmp, i, &c);
		if (rc != NSR_OK)
			return rc;
		node_append(pg, c.raw, c.size);
	}
	return NSR_OK;
}

/* ---- catalog --------------------------------------------------------- */

/* mmdb_bt_catalog - i-th catalog entry. */
int mmdb_bt_catalog(struct mmdb_view *v, unsigned i, char *name,
		    uint32_t *root)
{
	const uint8_t *m, *e;
	int rc = mmdb_pager_get(v, 0, &m);

	if (rc != NSR_OK)
		return rc;
	if (nsr_get_u16(m + CAT_COUNT) > MMDB_BT_TREES)
		return NSR_ERR_CORRUPT;
	if (i >= nsr_get_u16(m + CAT_COUNT))
		return NSR_ERR_NOTFOUND;
	e = m + CAT_ENTRIES + CAT_ENTRY_SIZE * i;
	memcpy(name, e, MMDB_BT_NAME_MAX);
	name[MMDB_BT_NAME_MAX] = '\0';
	*root = nsr_get_u32(e + CAT_NAME_SIZE);
	return NSR_OK;
}

/* mmdb_bt_open - look a tree up in the catalog, creating it if asked. */
int mmdb_bt_open(struct mmdb_view *v, const char *name, int create,
		 uint32_t *root)
{
	char n[MMDB_BT_NAME_MAX + 1];
	uint8_t *m, *pg, *e;
	uint32_t r;
	unsigned count;
	int rc;

	*root = 0;
	if (strlen(name) == 0 || strlen(name) > MMDB_BT_NAME_MAX)
		return NSR_ERR_INVAL;
	for (unsigned i = 0;; i++) {
		rc = mmdb_bt_catalog(v, i, n, &r);
		if (rc == NSR_ERR_NOTFOUND)
			break;
		if (rc != NSR_OK)
			return rc;
		if (strcmp(n, name) == 0) {
			*root = r;
			return r ? NSR_OK : NSR_ERR_CORRUPT;
		}
	}
	if (!create)
		return NSR_ERR_NOTFOUND;
	rc = mmdb_pager_dirty(v, 0, &m);
	if (rc != NSR_OK)
		return rc;
	count = nsr_get_u16(m + CAT_COUNT);
	if (count >= MMDB_BT_TREES)
		return NSR_ERR_TOOBIG;
	rc = mmdb_pager_alloc(v, MMDB_PT_LEAF, &r, &pg);
	if (rc != NSR_OK)
		return rc;
	node_init(pg, MMDB_PT_LEAF);
	e = m + CAT_ENTRIES + CAT_ENTRY_SIZE * count;
	memset(e, 0, CAT_ENTRY_SIZE);
	memcpy(e, name, strlen(name));
	nsr_put_u32(e + CAT_NAME_SIZE, r);
	nsr_put_u16(m + CAT_COUNT, (uint16_t)(count + 1));
	*root = r;
	return NSR_OK;
}

/* ---- lookup ---------------------------------------------------------- */

/* load - a validated node page. */
static int load(struct mmdb_view *v, uint32_t pgno, const uint8_t **pg)
{
	int rc = mmdb_pager_get(v, pgno, pg);

	if (rc == NSR_OK)
		rc = node_ok(*pg);
	return rc;
}

/* mmdb_bt_get - point lookup. */
int mmdb_bt_get(struct mmdb_view *v, uint32_t root, const void *key,
		size_t klen, const uint8_t **val, size_t *vlen)
{
	uint32_t pgno = root;
	const uint8_t *pg;
	unsigned pos;
	int found, rc;
	struct cell c;

	*val = NULL;
	*vlen = 0;
	for (int depth = 0; depth < MMDB_BT_DEPTH_MAX; depth++) {
		rc = load(v, pgno, &pg);
		if (rc == NSR_OK)
			rc = search(pg, key, klen, &pos, &found);
		if (rc != NSR_OK)
			return rc;
		if (!is_leaf(pg)) {
			rc = child_at(pg, pos, &pgno);
			if (rc != NSR_OK)
				return rc;
			continue;
		}
		if (!found)
			return NSR_ERR_NOTFOUND;
		rc = cell_get(pg, pos, &c);
		if (rc != NSR_OK)
			return rc;
		*val = c.val;
		*vlen = c.vlen;
		return NSR_OK;
	}
	return NSR_ERR_CORRUPT;
}

/* ---- insert ---------------------------------------------------------- */

/* Result of a node split, passed to the parent. */
struct split {
	int did;
	uint32_t right;
	size_t klen;
	uint8_t key[MMDB_BT_KEY_MAX];
};

/* A cell in a split: pointer and size. */
struct craw {
	const uint8_t *p;
	size_t size;
};

/* fill - rebuild node pg of type from cells[from, to). */
static void fill(uint8_t *pg, uint8_t type, uint32_t child0,
		 const struct craw *cells, size_t from, size_t to)
{
	node_init(pg, type);
	nsr_put_u32(pg + N_CHILD0, child0);
	for (size_t i = from; i < to; i++)
		node_append(pg, cells[i].p, cells[i].size);
}

/* raw_key - key bytes of a raw cell of a leaf or interior node. */
static const uint8_t *raw_key(const uint8_t *raw, int leaf, size_t *klen)
{
	*klen = nsr_get_u16(raw);
	return raw + (leaf ? 4 : 6);
}

/* split_point - first index of the right half (leaf) or the promoted cell
 * (interior) so the halves hold about equal bytes. */
static size_t split_point(const struct craw *cells, size_t t, int leaf)
{
	size_t total = 0, acc = 0, k;

	for (size_t i = 0; i < t; i++)
		total += cells[i].size + 2;
	for (k = 0; k < t; k++) {
		acc += cells[k].size + 2;
		if (acc * 2 >= total)
			break;
	}
	if (leaf)
		k++;	/* k cells stay left */
	if (k < 1)
		k = 1;
	if (k > t - 1)
		k = t - 1;
	return k;
}

/* node_split - insert raw cell at idx into full node pgno by splitting.
 * The root keeps its page: its halves move to two new pages. */
static int node_split(struct mmdb_view *v, uint32_t pgno, uint8_t *pg,
		      unsigned idx, const uint8_t *raw, size_t size,
		      int is_root, int append, struct split *sp)
{
	uint8_t *tmp = malloc(MMDB_PAGE_SIZE);
	struct craw *cells = NULL;
	unsigned n = n_cells(pg);
	int leaf = is_leaf(pg);
	uint8_t type = pg[N_TYPE];
	uint32_t child0 = nsr_get_u32(pg + N_CHILD0), rchild0 = 0, l, r;
	size_t t = n + 1, k, sklen, lto, rfrom;
	const uint8_t *skey;
	uint8_t *lp, *rp;
	struct cell c;
	int rc = NSR_ERR_NOMEM;

	cells = malloc(t * sizeof(*cells));
	if (!tmp || !cells)
		goto out;
	memcpy(tmp, pg, MMDB_PAGE_SIZE);
	for (unsigned i = 0, j = 0; i < t; i++) {
		if (i == idx) {
			cells[i].p = raw;
			cells[i].size = size;
			continue;
		}
		rc = cell_get(tmp, j++, &c);
		if (rc != NSR_OK)
			goto out;
		cells[i].p = c.raw;
		cells[i].size = c.size;
	}
	/* Appending at the right edge: keep the left page full. */
	k = append ? t - 1 : split_point(cells, t, leaf);
	skey = raw_key(cells[k].p, leaf, &sklen);
	if (leaf) {
		lto = k;
		rfrom = k;
	} else {
		lto = k;
		rfrom = k + 1;
		rchild0 = nsr_get_u32(cells[k].p + 2);
	}
	if (is_root) {
		rc = mmdb_pager_alloc(v, type, &l, &lp);
		if (rc == NSR_OK)
			rc = mmdb_pager_alloc(v, type, &r, &rp);
		if (rc != NSR_OK)
			goto out;
		fill(lp, type, child0, cells, 0, lto);
		fill(rp, type, rchild0, cells, rfrom, t);
		/* pg may have moved if the dirty table grew: it did not,
		 * page buffers are stable; rebuild the root in place. */
		node_init(pg, MMDB_PT_INTERIOR);
		nsr_put_u32(pg + N_CHILD0, l);
		{
			uint8_t ic[6 + MMDB_BT_KEY_MAX];

			nsr_put_u16(ic, (uint16_t)sklen);
			nsr_put_u32(ic + 2, r);
			memcpy(ic + 6, skey, sklen);
			node_append(pg, ic, 6 + sklen);
		}
		sp->did = 0;
	} else {
		rc = mmdb_pager_alloc(v, type, &r, &rp);
		if (rc != NSR_OK)
			goto out;
		memcpy(sp->key, skey, sklen);	/* before pg is rebuilt */
		sp->klen = sklen;
		fill(rp, type, rchild0, cells, rfrom, t);
		fill(pg, type, child0, cells, 0, lto);
		sp->did = 1;
		sp->right = r;
	}
	NSR_UNUSED(pgno);
	rc = NSR_OK;
out:
	free(tmp);
	free(cells);
	return rc;
}

/* node_put - insert raw cell at idx of writable node pg, splitting when it
 * does not fit. */
static int node_put(struct mmdb_view *v, uint32_t pgno, uint8_t *pg,
		    unsigned idx, const uint8_t *raw, size_t size,
		    int is_root, int append, struct split *sp)
{
	sp->did = 0;
	if (contig(pg) < size + 2 &&
	    MMDB_PAGE_SIZE - N_SLOTS - node_used(pg) >= size + 2) {
		uint8_t *tmp = malloc(MMDB_PAGE_SIZE);
		int rc;

		if (!tmp)
			return NSR_ERR_NOMEM;
		rc = node_defrag(pg, tmp);
		free(tmp);
		if (rc != NSR_OK)
			return rc;
	}
	if (contig(pg) >= size + 2) {
		node_insert_at(pg, idx, raw, size);
		return NSR_OK;
	}
	return node_split(v, pgno, pg, idx, raw, size, is_root, append, sp);
}

/* ins - insert raw leaf cell (key k) into the subtree at pgno. */
static int ins(struct mmdb_view *v, uint32_t pgno, int depth, int rightmost,
	       const uint8_t *raw, size_t size, const uint8_t *k, size_t klen,
	       struct split *sp)
{
	const uint8_t *ro;
	uint8_t *pg;
	unsigned pos, n;
	int found, rc;

	sp->did = 0;
	if (depth >= MMDB_BT_DEPTH_MAX)
		return NSR_ERR_CORRUPT;
	rc = load(v, pgno, &ro);
	if (rc == NSR_OK)
		rc = search(ro, k, klen, &pos, &found);
	if (rc != NSR_OK)
		return rc;
	n = n_cells(ro);
	if (is_leaf(ro)) {
		rc = mmdb_pager_dirty(v, pgno, &pg);
		if (rc != NSR_OK)
			return rc;
		if (found)
			node_remove_at(pg, pos);
		return node_put(v, pgno, pg, pos, raw, size, depth == 0,
				rightmost && pos == n_cells(pg), sp);
	} else {
		struct split csp;
		uint8_t ic[6 + MMDB_BT_KEY_MAX];
		uint32_t child;

		rc = child_at(ro, pos, &child);
		if (rc == NSR_OK)
			rc = ins(v, child, depth + 1, rightmost && pos == n,
				 raw, size, k, klen, &csp);
		if (rc != NSR_OK || !csp.did)
			return rc;
		nsr_put_u16(ic, (uint16_t)csp.klen);
		nsr_put_u32(ic + 2, csp.right);
		memcpy(ic + 6, csp.key, csp.klen);
		rc = mmdb_pager_dirty(v, pgno, &pg);
		if (rc != NSR_OK)
			return rc;
		return node_put(v, pgno, pg, pos, ic, 6 + csp.klen,
				depth == 0, rightmost && pos == n, sp);
	}
}

/* mmdb_bt_put - insert or replace. */
int mmdb_bt_put(struct mmdb_view *v, uint32_t root, const void *key,
		size_t klen, const void *val, size_t vlen)
{
	uint8_t *raw;
	struct split *sp;
	int rc;

	if (klen == 0 || klen > MMDB_BT_KEY_MAX ||
	    klen + vlen > MMDB_BT_CELL_MAX)
		return NSR_ERR_TOOBIG;
	raw = malloc(4 + klen + vlen);
	sp = malloc(sizeof(*sp));
	if (!raw || !sp) {
		free(raw);
		free(sp);
		return NSR_ERR_NOMEM;
	}
	nsr_put_u16(raw, (uint16_t)klen);
	nsr_put_u16(raw + 2, (uint16_t)vlen);
	memcpy(raw + 4, key, klen);
	if (vlen)
		memcpy(raw + 4 + klen, val, vlen);
	rc = ins(v, root, 0, 1, raw, 4 + klen + vlen, raw + 4, klen, sp);
	free(raw);
	free(sp);
	return rc;
}

/* ---- delete ---------------------------------------------------------- */

/* underfull - whether a node should try to merge with a sibling. */
static int underfull(const uint8_t *pg)
{
	return node_used(pg) < (MMDB_PAGE_SIZE - N_SLOTS) / 4;
}

/* merge - merge children li and li+1 of interior node ppgno when both fit
 * in one page; the right one is freed. */
static int merge(struct mmdb_view *v, uint32_t ppgno, unsigned li)
{
	const uint8_t *pro, *lro, *rro;
	uint8_t *lp, *pp, *tmp = NULL;
	uint32_t l, r;
	struct cell sep, c;
	size_t need;
	uint8_t ic[6 + MMDB_BT_KEY_MAX];
	int rc;

	rc = load(v, ppgno, &pro);
	if (rc == NSR_OK)
		rc = child_at(pro, li, &l);
	if (rc == NSR_OK)
		rc = child_at(pro, li + 1, &r);
	if (rc == NSR_OK)
		rc = cell_get(pro, li, &sep);
	if (rc == NSR_OK)
		rc = load(v, l, &lro);
	if (rc == NSR_OK)
		rc = load(v, r, &rro);
	if (rc != NSR_OK)
		return rc;
	if (lro[N_TYPE] != rro[N_TYPE])
		return NSR_ERR_CORRUPT;
	need = node_used(lro) + node_used(rro);
	if (!is_leaf(lro))
		need += 2 + 6 + sep.klen;
	if (need > MMDB_PAGE_SIZE - N_SLOTS)
		return NSR_OK;	/* stays as it is */
	tmp = malloc(MMDB_PAGE_SIZE);
	if (!tmp)
		return NSR_ERR_NOMEM;
	/* Copy the right node first: freeing it zeroes its page. */
	memcpy(tmp, rro, MMDB_PAGE_SIZE);
	nsr_put_u16(ic, (uint16_t)sep.klen);
	nsr_put_u32(ic + 2, nsr_get_u32(tmp + N_CHILD0));
	memcpy(ic + 6, sep.key, sep.klen);
	rc = mmdb_pager_dirty(v, l, &lp);
	if (rc != NSR_OK)
		goto out;
	{
		uint8_t *t2 = malloc(MMDB_PAGE_SIZE);

		if (!t2) {
			rc = NSR_ERR_NOMEM;
			goto out;
		}
		rc = node_defrag(lp, t2);
		free(t2);
		if (rc != NSR_OK)
			goto out;
	}
	if (!is_leaf(lp))
		node_append(lp, ic, 6 + sep.klen);
	for (unsigned i = 0; i < n_cells(tmp); i++) {
		rc = cell_get(tmp, i, &c);
		if (rc != NSR_OK)
			goto out;
		node_append(lp, c.raw, c.size);
	}
	rc = mmdb_pager_dirty(v, ppgno, &pp);
	if (rc != NSR_OK)
		goto out;
	node_remove_at(pp, li);	/* the separator, pointing at r */
	rc = mmdb_pager_free(v, r);
out:
	free(tmp);
	return rc;
}

/* del - remove key from the subtree at pgno; *under if it got underfull. */
static int del(struct mmdb_view *v, uint32_t pgno, int depth,
	       const uint8_t *k, size_t klen, int *under)
{
	const uint8_t *ro;
	uint8_t *pg;
	unsigned pos;
	int found, rc, cu = 0;
	uint32_t child;

	*under = 0;
	if (depth >= MMDB_BT_DEPTH_MAX)
		return NSR_ERR_CORRUPT;
	rc = load(v, pgno, &ro);
	if (rc == NSR_OK)
		rc = search(ro, k, klen, &pos, &found);
	if (rc != NSR_OK)
		return rc;
	if (is_leaf(ro)) {
		if (!found)
			return NSR_ERR_NOTFOUND;
		rc = mmdb_pager_dirty(v, pgno, &pg);
		if (rc != NSR_OK)
			return rc;
		node_remove_at(pg, pos);
		*under = underfull(pg);
		return NSR_OK;
	}
	rc = child_at(ro, pos, &child);
	if (rc == NSR_OK)
		rc = del(v, child, depth + 1, k, klen, &cu);
	if (rc != NSR_OK)
		return rc;
	if (cu && n_cells(ro) > 0) {
		rc = merge(v, pgno, pos > 0 ? pos - 1 : 0);
		if (rc != NSR_OK)
			return rc;
	}
	rc = load(v, pgno, &ro);
	if (rc != NSR_OK)
		return rc;
	*under = underfull(ro);
	return NSR_OK;
}

/* collapse - while the root is an interior node with one child, pull the
 * child up into the root page. */
static int collapse(struct mmdb_view *v, uint32_t root)
{
	for (int i = 0; i < MMDB_BT_DEPTH_MAX; i++) {
		const uint8_t *ro, *cro;
		uint8_t *pg;
		uint32_t child;
		int rc = load(v, root, &ro);

		if (rc != NSR_OK)
			return rc;
		if (is_leaf(ro) || n_cells(ro) > 0)
			return NSR_OK;
		child = nsr_get_u32(ro + N_CHILD0);
		rc = load(v, child, &cro);
		if (rc == NSR_OK)
			rc = mmdb_pager_dirty(v, root, &pg);
		if (rc != NSR_OK)
			return rc;
		memcpy(pg + N_TYPE, cro + N_TYPE, MMDB_PAGE_SIZE - N_TYPE);
		rc = mmdb_pager_free(v, child);
		if (rc != NSR_OK)
			return rc;
	}
	return NSR_ERR_CORRUPT;
}

/* mmdb_bt_del - remove a key, merging pages that became underfull. */
int mmdb_bt_del(struct mmdb_view *v, uint32_t root, const void *key,
		size_t klen)
{
	int under, rc;

	if (klen == 0 || klen > MMDB_BT_KEY_MAX)
		return NSR_ERR_NOTFOUND;
	rc = del(v, root, 0, key, klen, &under);
	if (rc == NSR_OK)
		rc = collapse(v, root);
	return rc;
}

/* ---- cursors --------------------------------------------------------- */

/* descend - push the leftmost path from pgno down to a leaf. */
static int descend(struct mmdb_bt_cur *cur, uint32_t pgno)
{
	for (;;) {
		const uint8_t *pg;
		int rc;

		if (cur->depth >= MMDB_BT_DEPTH_MAX)
			return NSR_ERR_CORRUPT;
		rc = load(cur->v, pgno, &pg);
		if (rc != NSR_OK)
			return rc;
		cur->st[cur->depth].pg = pg;
		cur->st[cur->depth].idx = 0;
		cur->depth++;
		if (is_leaf(pg))
			return NSR_OK;
		pgno = nsr_get_u32(pg + N_CHILD0);
		if (pgno == 0)
			return NSR_ERR_CORRUPT;
	}
}

/* settle - move forward until the cursor is on an entry or at the end. */
static int settle(struct mmdb_bt_cur *cur)
{
	for (;;) {
		int top = cur->depth - 1;
		uint32_t child;
		int rc;

		if ((unsigned)cur->st[top].idx < n_cells(cur->st[top].pg)) {
			cur->valid = 1;
			return NSR_OK;
		}
		/* Leaf exhausted: climb to an interior node with a next
		 * child, then go down its leftmost path. */
		cur->depth--;
		while (cur->depth > 0) {
			int l = cur->depth - 1;

			if ((unsigned)cur->st[l].idx < n_cells(cur->st[l].pg)) {
				cur->st[l].idx++;
				break;
			}
			cur->depth--;
		}
		if (cur->depth == 0) {
			cur->valid = 0;
			return NSR_OK;
		}
		rc = child_at(cur->st[cur->depth - 1].pg,
			      (unsigned)cur->st[cur->depth - 1].idx, &child);
		if (rc == NSR_OK)
			rc = descend(cur, child);
		if (rc != NSR_OK) {
			cur->valid = 0;
			return rc;
		}
	}
}

/* mmdb_bt_seek - position at the first key >= key. */
int mmdb_bt_seek(struct mmdb_bt_cur *cur, struct mmdb_view *v, uint32_t root,
		 const void *key, size_t klen)
{
	uint32_t pgno = root;
	int rc;

	cur->v = v;
	cur->root = root;
	cur->depth = 0;
	cur->valid = 0;
	for (;;) {
		const uint8_t *pg;
		unsigned pos = 0;
		int found;

		if (cur->depth >= MMDB_BT_DEPTH_MAX)
			return NSR_ERR_CORRUPT;
		rc = load(v, pgno, &pg);
		if (rc == NSR_OK && klen)
			rc = search(pg, key, klen, &pos, &found);
		if (rc != NSR_OK)
			return rc;
		cur->st[cur->depth].pg = pg;
		cur->st[cur->depth].idx = (int)pos;
		cur->depth++;
		if (is_leaf(pg))
			break;
		rc = child_at(pg, pos, &pgno);
		if (rc != NSR_OK)
			return rc;
	}
	return settle(cur);
}

/* mmdb_bt_last - position on the last entry. */
int mmdb_bt_last(struct mmdb_bt_cur *cur, struct mmdb_view *v, uint32_t root)
{
	uint32_t pgno = root;
	int rc;

	cur->v = v;
	cur->root = root;
	cur->depth = 0;
	cur->valid = 0;
	for (;;) {
		const uint8_t *pg;
		unsigned n;

		if (cur->depth >= MMDB_BT_DEPTH_MAX)
			return NSR_ERR_CORRUPT;
		rc = load(v, pgno, &pg);
		if (rc != NSR_OK)
			return rc;
		n = n_cells(pg);
		cur->st[cur->depth].pg = pg;
		cur->depth++;
		if (is_leaf(pg)) {
			if (n == 0)
				break;
			cur->st[cur->depth - 1].idx = (int)n - 1;
			cur->valid = 1;
			return NSR_OK;
		}
		cur->st[cur->depth - 1].idx = (int)n;
		rc = child_at(pg, n, &pgno);
		if (rc != NSR_OK)
			return rc;
	}
	/* An empty rightmost leaf (left by deletes that could not merge):
	 * walk the whole tree, remembering the last entry. */
	{
		struct mmdb_bt_cur c;

		rc = mmdb_bt_seek(&c, v, root, NULL, 0);
		cur->valid = 0;
		while (rc == NSR_OK && c.valid) {
			*cur = c;
			rc = mmdb_bt_next(&c);
		}
		return rc;
	}
}

/* mmdb_bt_next - step to the next entry. */
int mmdb_bt_next(struct mmdb_bt_cur *cur)
{
	if (!cur->valid)
		return NSR_OK;
	cur->st[cur->depth - 1].idx++;
	return settle(cur);
}

/* cur_cell - the cell under the cursor; 0 if there is none. */
static int cur_cell(const struct mmdb_bt_cur *cur, struct cell *c)
{
	return cur->valid &&
	       cell_get(cur->st[cur->depth - 1].pg,
			(unsigned)cur->st[cur->depth - 1].idx, c) == NSR_OK;
}

/* mmdb_bt_key - key under the cursor (validated when positioned). */
void mmdb_bt_key(const struct mmdb_bt_cur *cur, const uint8_t **key,
		 size_t *klen)
{
	struct cell c;
	int ok = cur_cell(cur, &c);

	*key = ok ? c.key : NULL;
	*klen = ok ? c.klen : 0;
}

/* mmdb_bt_val - value under the cursor. */
void mmdb_bt_val(const struct mmdb_bt_cur *cur, const uint8_t **val,
		 size_t *vlen)
{
	struct cell c;
	int ok = cur_cell(cur, &c);

	*val = ok ? c.val : NULL;
	*vlen = ok ? c.vlen : 0;
}

/* ---- checker --------------------------------------------------------- */

struct chk {
	struct mmdb_view *v;
	uint8_t *seen;
	uint32_t npages;
	struct nsr_buf *report;
	mmdb_bt_entry_fn fn;
	void *arg;
	int leaf_depth;
	uint64_t n;
	int bad;
	int stop;
	uint8_t *used;		/* byte map of one page */
};

/* problem - record one problem. */
static void problem(struct chk *ck, uint32_t pgno, const char *what)
{
	ck->bad++;
	if (ck->report)
		nsr_buf_addf(ck->report, "page %u: %s\n", pgno, what);
}

/* chk_cells - cell layout of one node: in bounds, not overlapping, keys
 * ordered and within [lo, hi). */
static int chk_cells(struct chk *ck, uint32_t pgno, const uint8_t *pg,
		     const uint8_t *lo, size_t lol, const uint8_t *hi,
		     size_t hil)
{
	struct cell c, prev = { 0 };

	memset(ck->used, 0, MMDB_PAGE_SIZE);
	for (unsigned i = 0; i < n_cells(pg); i++) {
		if (cell_get(pg, i, &c) != NSR_OK) {
			problem(ck, pgno, "cell out of bounds");
			return 1;
		}
		for (size_t b = 0; b < c.size; b++) {
			size_t off = (size_t)(c.raw - pg) + b;

			if (ck->used[off]) {
				problem(ck, pgno, "cells overlap");
				return 1;
			}
			ck->used[off] = 1;
		}
		if (c.klen == 0 || c.klen > MMDB_BT_KEY_MAX)
			problem(ck, pgno, "bad key length");
		if (i > 0 && kcmp(prev.key, prev.klen, c.key, c.klen) >= 0)
			problem(ck, pgno, "keys out of order");
		if (lo && kcmp(c.key, c.klen, lo, lol) < 0)
			problem(ck, pgno, "key below its parent's bound");
		if (hi && kcmp(c.key, c.klen, hi, hil) >= 0)
			problem(ck, pgno, "key above its parent's bound");
		prev = c;
	}
	return 0;
}

/* chk_node - check the subtree at pgno with keys in [lo, hi). */
static int chk_node(struct chk *ck, uint32_t pgno, int depth,
		    const uint8_t *lo, size_t lol, const uint8_t *hi,
		    size_t hil)
{
	const uint8_t *pg;
	struct cell c;
	int rc;

	if (ck->stop)
		return NSR_OK;
	if (pgno == 0 || pgno >= ck->npages) {
		problem(ck, pgno, "page number out of range");
		return NSR_OK;
	}
	if (ck->seen[pgno]) {
		problem(ck, pgno, "page referenced twice");
		return NSR_OK;
	}
	ck->seen[pgno] = 1;
	if (depth >= MMDB_BT_DEPTH_MAX) {
		problem(ck, pgno, "tree too deep");
		return NSR_OK;
	}
	rc = mmdb_pager_get(ck->v, pgno, &pg);
	if (rc == NSR_ERR_CHECKSUM || rc == NSR_ERR_CORRUPT) {
		problem(ck, pgno, nsr_strerror(rc));
		return NSR_OK;
	}
	if (rc != NSR_OK)
		return rc;
	if (node_ok(pg) != NSR_OK) {
		problem(ck, pgno, "bad node header");
		return NSR_OK;
	}
	if (chk_cells(ck, pgno, pg, lo, lol, hi, hil))
		return NSR_OK;
	if (is_leaf(pg)) {
		if (ck->leaf_depth < 0)
			ck->leaf_depth = depth;
		else if (ck->leaf_depth != depth)
			problem(ck, pgno, "leaves at different depths");
		for (unsigned i = 0; i < n_cells(pg) && !ck->stop; i++) {
			(void)cell_get(pg, i, &c);
			ck->n++;
			if (ck->fn) {
				rc = ck->fn(ck->arg, c.key, c.klen, c.val,
					    c.vlen);
				if (rc != 0) {
					ck->stop = rc;
					return NSR_OK;
				}
			}
		}
		return NSR_OK;
	}
	for (unsigned ci = 0; ci <= n_cells(pg); ci++) {
		const uint8_t *clo = lo, *chi = hi;
		size_t clol = lol, chil = hil;
		uint32_t child;

		if (ci > 0) {
			(void)cell_get(pg, ci - 1, &c);
			clo = c.key;
			clol = c.klen;
		}
		if (ci < n_cells(pg)) {
			(void)cell_get(pg, ci, &c);
			chi = c.key;
			chil = c.klen;
		}
		if (child_at(pg, ci, &child) != NSR_OK) {
			problem(ck, pgno, "bad child pointer");
			continue;
		}
		rc = chk_node(ck, child, depth + 1, clo, clol, chi, chil);
		if (rc != NSR_OK)
			return rc;
	}
	return NSR_OK;
}

/* mmdb_bt_check - structural check of one tree. */
int mmdb_bt_check(struct mmdb_view *v, uint32_t root, uint8_t *seen,
		  struct nsr_buf *report, mmdb_bt_entry_fn fn, void *arg,
		  uint64_t *nentries)
{
	struct chk ck;
	int rc;

	memset(&ck, 0, sizeof(ck));
	ck.v = v;
	ck.seen = seen;
	ck.npages = mmdb_pager_npages(v);
	ck.report = report;
	ck.fn = fn;
	ck.arg = arg;
	ck.leaf_depth = -1;
	ck.used = malloc(MMDB_PAGE_SIZE);
	if (!ck.used)
		return NSR_ERR_NOMEM;
	rc = chk_node(&ck, root, 0, NULL, 0, NULL, 0);
	free(ck.used);
	if (nentries)
		*nentries = ck.n;
	if (rc != NSR_OK)
		return rc;
	if (ck.stop)
		return ck.stop;
	return ck.bad;
}

/* mmdb_bt_check_all - every tree, the free list, no leaked page. */
int mmdb_bt_check_all(struct mmdb_view *v, struct nsr_buf *report)
{
	uint32_t npages = mmdb_pager_npages(v), root;
	char name[MMDB_BT_NAME_MAX + 1];
	uint8_t *seen;
	int bad = 0, rc;

	if (npages == 0)
		return NSR_ERR_CORRUPT;
	seen = calloc(npages, 1);
	if (!seen)
		return NSR_ERR_NOMEM;
	seen[0] = 1;
	for (unsigned i = 0;; i++) {
		rc = mmdb_bt_catalog(v, i, name, &root);
		if (rc == NSR_ERR_NOTFOUND)
			break;
		if (rc == NSR_OK)
			rc = mmdb_bt_check(v, root, seen, report, NULL, NULL,
					   NULL);
		if (rc < 0)
			goto out;
		bad += rc;
	}
	rc = mmdb_pager_check_free(v, seen, report);
	if (rc < 0)
		goto out;
	bad += rc;
	for (uint32_t i = 1; i < npages; i++) {
		if (seen[i])
			continue;
		bad++;
		if (report)
			nsr_buf_addf(report, "page %u: in no tree and not "
				     "free (leaked)\n", i);
	}
	rc = bad;
out:
	free(seen);
	return rc;
}
