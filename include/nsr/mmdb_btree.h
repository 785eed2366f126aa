/*
 * mmdb_btree.h - named B+trees of variable-length byte-string keys and
 * values over the pager's 32 KB pages.  Keys compare bytewise (memcmp,
 * then shorter first).  A tree's root page never moves, so the catalog in
 * page 0 maps each name to a fixed root.
 *
 * Bounds: key 1..MMDB_BT_KEY_MAX bytes, key + value <= MMDB_BT_CELL_MAX
 * bytes (values are not spilled to overflow pages; media database records
 * are below 4 KB), at most MMDB_BT_TREES trees with names of at most
 * MMDB_BT_NAME_MAX bytes.  NSR_ERR_TOOBIG beyond.
 *
 * Pointers returned into pages (values, cursor keys) stay valid for a read
 * view until the view ends; for the write view until the next change.
 */
#ifndef NSR_MMDB_BTREE_H
#define NSR_MMDB_BTREE_H

#include <stddef.h>
#include <stdint.h>

#include "nsr/buf.h"

struct mmdb_view;

#define MMDB_BT_KEY_MAX 1024u
#define MMDB_BT_CELL_MAX 8000u
#define MMDB_BT_TREES 64u
#define MMDB_BT_NAME_MAX 27u
#define MMDB_BT_DEPTH_MAX 16

/* mmdb_bt_open - root page of tree name; with create (write view only) a
 * missing tree is made.  NSR_ERR_NOTFOUND if absent and not create. */
int mmdb_bt_open(struct mmdb_view *v, const char *name, int create,
		 uint32_t *root);
/* mmdb_bt_catalog - the i-th tree of the catalog (for the checker):
 * NSR_ERR_NOTFOUND past the end.  name needs MMDB_BT_NAME_MAX + 1 bytes. */
int mmdb_bt_catalog(struct mmdb_view *v, unsigned i, char *name,
		    uint32_t *root);

/* mmdb_bt_get - value of key; NSR_ERR_NOTFOUND if absent. */
int mmdb_bt_get(struct mmdb_view *v, uint32_t root, const void *key,
		size_t klen, const uint8_t **val, size_t *vlen);
/* mmdb_bt_put - insert or replace key. */
int mmdb_bt_put(struct mmdb_view *v, uint32_t root, const void *key,
		size_t klen, const void *val, size_t vlen);
/* mmdb_bt_del - remove key; NSR_ERR_NOTFOUND if absent. */
int mmdb_bt_del(struct mmdb_view *v, uint32_t root, const void *key,
		size_t klen);

/* A cursor; caller-owned storage, no release needed.  Do not change the
 * tree through the same write view while a cursor is positioned in it. */
struct mmdb_bt_cur {
	struct mmdb_view *v;
	uint32_t root;
	int depth;		/* entries in st[]; 0 = not positioned */
	int valid;		/* 1 = on an entry */
	struct {
		const uint8_t *pg;
		int idx;	/* leaf: cell; interior: child index */
	} st[MMDB_BT_DEPTH_MAX];
};

/* mmdb_bt_seek - position on the first key >= key (klen 0 = first key);
 * cur->valid = 0 if there is none. */
int mmdb_bt_seek(struct mmdb_bt_cur *cur, struct mmdb_view *v, uint32_t root,
		 const void *key, size_t klen);
/* mmdb_bt_last - position on the last key (cur->valid = 0 if empty). */
int mmdb_bt_last(struct mmdb_bt_cur *cur, struct mmdb_view *v,
		 uint32_t root);
/* mmdb_bt_next - advance; cur->valid = 0 at the end. */
int mmdb_bt_next(struct mmdb_bt_cur *cur);
/* mmdb_bt_key / mmdb_bt_val - the entry under a valid cursor. */
void mmdb_bt_key(const struct mmdb_bt_cur *cur, const uint8_t **key,
		 size_t *klen);
void mmdb_bt_val(const struct mmdb_bt_cur *cur, const uint8_t **val,
		 size_t *vlen);

/* mmdb_bt_entry_fn - called by mmdb_bt_check for every entry in order. */
typedef int (*mmdb_bt_entry_fn)(void *arg, const uint8_t *key, size_t klen,
				const uint8_t *val, size_t vlen);
/*
 * mmdb_bt_check - verify tree root: page types, bounds, cell layout, key
 * order within and across pages, equal leaf depth; marks every page in
 * seen[] (one byte per page; reports pages already marked).  Calls fn (may
 * be NULL) for each entry; a nonzero return stops and is returned.
 * Problems are appended to report; returns the number of problems (>= 0)
 * or < 0 if the check could not run.
 */
int mmdb_bt_check(struct mmdb_view *v, uint32_t root, uint8_t *seen,
		  struct nsr_buf *report, mmdb_bt_entry_fn fn, void *arg,
		  uint64_t *nentries);

/*
 * mmdb_bt_check_all - the whole file as seen by v: every tree of the
 * catalog (mmdb_bt_check), the free list, and that every page but page 0
 * is in exactly one tree or on the free list.  Returns the number of
 * problems (>= 0) or < 0 if the check could not run.
 */
int mmdb_bt_check_all(struct mmdb_view *v, struct nsr_buf *report);

#endif /* NSR_MMDB_BTREE_H */
