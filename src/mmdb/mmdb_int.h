/*
 * mmdb_int.h - internals shared by the media database schema files:
 * the database handle, transactions, the string table, the stored save
 * set record (strings as ids, clones and fragments embedded) and the key
 * layouts of the trees (published in nsr_mmdb(5)).
 *
 * Trees (keys big-endian; "time8" = epoch seconds + 2^63 as u64):
 *   ss        ssid(4)                          -> save set record
 *   ss_cnt    client id(4) name id(4) time8 ssid(4) -> ""   savetime index
 *   ss_time   time8 ssid(4)                    -> ""
 *   vol       volume name                      -> volno(4) volume record
 *   vol_id    volid(16)                        -> volume name
 *   vol_no    volno(4)                         -> volume name
 *   vol_pool  pool NUL volume name             -> ""
 *   frag_vol  volno(4) ssid(4)                 -> ""  (ss has fragments
 *                                                  on that volume)
 *   str       string id(4)                     -> string bytes
 */
#ifndef NSR_MMDB_INT_H
#define NSR_MMDB_INT_H

#include <pthread.h>

#include "nsr/buf.h"
#include "nsr/mmdb.h"
#include "nsr/mmdb_btree.h"
#include "nsr/mmdb_pager.h"

enum mmdb_tree {
	T_SS, T_SS_CNT, T_SS_TIME, T_VOL, T_VOL_ID, T_VOL_NO, T_VOL_POOL,
	T_FRAG_VOL, T_STR, T_COUNT
};

extern const char *const mmdb_tree_names[T_COUNT];

/* In-memory string table: id <-> string, ids dense from 1 (0 = ""). */
struct strtab {
	pthread_rwlock_t lock;
	char **str;		/* str[id], NUL-terminated */
	uint32_t *len;
	uint32_t n;		/* ids in use: 1 .. n-1 */
	uint32_t cap;
	uint32_t *hash;		/* open addressing: id, 0 = empty */
	uint32_t hcap;
};

struct mmdb {
	struct mmdb_pager *pager;
	uint32_t roots[T_COUNT];
	struct strtab strs;
	/* allocation counters, owned by the writer slot */
	uint32_t next_ssid;
	uint32_t next_volno;
};

struct mmdb_txn {
	struct mmdb *db;
	struct mmdb_view *v;
	int failed;		/* an operation failed: commit refuses */
	uint32_t save_ssid, save_volno, save_nstr;
};

struct ss_frag {
	uint8_t clone;		/* index into clones[] */
	uint32_t volno;
	uint32_t seq;
	uint64_t ss_offset, size;
	uint32_t file;
	uint64_t record, offset;
	uint32_t flags;
};

struct ss_clone {
	uint32_t cloneid;
	int64_t clone_time, clretent;
	uint32_t flags;
};

/* The stored save set record. */
struct ssrec {
	uint32_t ssid;
	uint32_t client, name, pool, group;	/* string ids */
	uint8_t level;
	uint32_t flags;
	int64_t savetime, sscreate, sscomp, ssbrowse, ssretent;
	uint64_t totalsize, nfiles;
	uint32_t pssid;
	int64_t anchor_time;
	uint32_t ndeps;
	uint32_t deps[MMDB_PSS_MAX];
	uint32_t nclones;
	struct ss_clone clones[MMDB_CLONES_MAX];
	uint32_t nfrags;
	struct ss_frag frags[MMDB_FRAGS_MAX];
};

/* codec.c */
int mmdb_ssrec_encode(const struct ssrec *r, uint8_t *out, size_t cap,
		      size_t *len);
int mmdb_ssrec_decode(const uint8_t *p, size_t len, uint32_t ssid,
		      struct ssrec *r);
void mmdb_key_time(uint8_t *p, int64_t t);
int64_t mmdb_key_time_get(const uint8_t *p);

/* strtab in mmdb.c */
int mmdb_str_get(struct mmdb *db, uint32_t id, char *out, size_t cap);
int mmdb_str_find(struct mmdb *db, const char *s, uint32_t *id);

/* mmdb.c helpers used by query.c and check.c */
int mmdb_ss_load(struct mmdb *db, struct mmdb_view *v, uint32_t ssid,
		 struct ssrec *r);
int mmdb_ss_export(struct mmdb *db, const struct ssrec *r,
		   struct mmdb_saveset *out);
int mmdb_vol_by_no(struct mmdb *db, struct mmdb_view *v, uint32_t volno,
		   struct mmdb_volume *out);
int mmdb_volno_by_name(struct mmdb *db, struct mmdb_view *v,
		       const char *name, uint32_t *volno);
int mmdb_volno_by_id(struct mmdb *db, struct mmdb_view *v,
		     const uint8_t volid[16], uint32_t *volno);

#define SSREC_MAX 7900	/* encoded save set record bound (< cell max) */

#endif /* NSR_MMDB_INT_H */
