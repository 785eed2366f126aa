/*
 * mmdb.h - the media database: volumes, save sets, fragments and clone
 * instances, and the structured query the mminfo language compiles to.
 *
 * Layers (each with its own header): this schema layer on top of
 * mmdb_btree.h (named B+trees), on top of mmdb_pager.h (32 KB pages, WAL,
 * group commit), on top of mmdb_vfs.h (file I/O ops table).
 *
 * Calling sequence:
 *   1. mmdb_open(dir, opts, &db)           creates <dir>/mmdb and mmdb.wal
 *   2. writes: each mutating call takes a struct mmdb_txn *; NULL means
 *      "a transaction of its own" (autocommit).  For batching:
 *        mmdb_txn_begin(db, &txn); ...calls with txn...; mmdb_txn_commit(txn)
 *      One write transaction at a time per database; txn_begin blocks
 *      while another thread holds one.  mmdb_txn_commit() returns NSR_OK
 *      only once the transaction is on stable storage (fsync); concurrent
 *      committers share one fsync.  A txn is freed by commit or abort.
 *   3. reads (get, list, cursor) see the last committed state as of the
 *      moment they start, never a transaction in progress, and may run in
 *      any number of threads alongside the writer.
 *   4. mmdb_close(db) after every cursor is freed and every txn ended.
 *
 * Errors: functions return NSR_OK (0) or a negative NSR_ERR_* code:
 *   NSR_ERR_NOTFOUND  no such volume / save set;
 *   NSR_ERR_EXISTS    duplicate volume name or volid;
 *   NSR_ERR_INVAL     a field out of range (string too long, bad level);
 *   NSR_ERR_TOOBIG    a save set has too many fragments/clones/dependents;
 *   NSR_ERR_CORRUPT / NSR_ERR_CHECKSUM   damaged file;
 *   NSR_ERR_IO / NSR_ERR_NOSPACE / NSR_ERR_NOMEM   and after any I/O error
 *   during commit, NSR_ERR_STATE from every call until the db is reopened.
 *
 * Strings in the records are NUL-terminated, fixed-size arrays so records
 * can live on the caller's stack; every length bound below includes no NUL.
 * Times are Unix epoch seconds (int64_t), 0 = unset.
 */
#ifndef NSR_MMDB_H
#define NSR_MMDB_H

#include <stddef.h>
#include <stdint.h>

#include "nsr/buf.h"
#include "nsr/level.h"

struct mmdb;
struct mmdb_txn;
struct mmdb_cursor;
struct mmdb_vfs;

#define MMDB_VOLNAME_MAX 64
#define MMDB_POOL_MAX 64
#define MMDB_MEDIATYPE_MAX 32
#define MMDB_LOCATION_MAX 128
#define MMDB_DEVICE_MAX 256
#define MMDB_CLIENT_MAX 255
#define MMDB_SSNAME_MAX 1024
#define MMDB_GROUP_MAX 64
#define MMDB_PSS_MAX 8	       /* dependents of one PSS parent */
#define MMDB_FRAGS_MAX 64      /* fragments of one save set (all clones) */
#define MMDB_CLONES_MAX 16     /* clone instances of one save set */

/* ---- open / close ---------------------------------------------------- */

#define MMDB_OPEN_CREATE 0x1   /* create the database if it does not exist */
#define MMDB_OPEN_READONLY 0x2 /* refuse writes (recovery still runs) */

struct mmdb_opts {
	unsigned flags;		   /* MMDB_OPEN_* */
	const struct mmdb_vfs *vfs;  /* NULL = the POSIX implementation */
	uint64_t wal_max_bytes;	   /* checkpoint when the WAL is larger; 0 =
				      default (256 MB, NSR_TEST_MMDB_WAL_MAX) */
	size_t cache_pages;	   /* page cache bound in 32 KB pages; 0 =
				      default (16384 = 512 MB,
				      NSR_TEST_MMDB_CACHE) */
};

/* mmdb_opts_init - fill opts with the defaults (flags = MMDB_OPEN_CREATE). */
void mmdb_opts_init(struct mmdb_opts *opts);

/*
 * mmdb_open - open (and recover) the database in directory dir.
 * opts may be NULL (defaults).  On success *out owns the handle, free with
 * mmdb_close().  Returns NSR_ERR_NOTFOUND if absent and not MMDB_OPEN_CREATE,
 * NSR_ERR_CORRUPT/NSR_ERR_CHECKSUM on a damaged file, NSR_ERR_BUSY if
 * another process has it open.
 */
int mmdb_open(const char *dir, const struct mmdb_opts *opts,
	      struct mmdb **out);
/* mmdb_close - checkpoint (if healthy) and free the handle; NULL is a no-op. */
void mmdb_close(struct mmdb *db);

/* ---- transactions ---------------------------------------------------- */

/* mmdb_txn_begin - start the write transaction (blocks for the writer slot). */
int mmdb_txn_begin(struct mmdb *db, struct mmdb_txn **out);
/* mmdb_txn_commit - make it durable (fsync, shared by concurrent committers)
 * and visible; frees txn in every case.  On failure nothing of it is
 * visible and, for I/O errors, the database enters the sticky error state. */
int mmdb_txn_commit(struct mmdb_txn *txn);
/* mmdb_txn_abort - discard every change of txn and free it; NULL is a no-op. */
void mmdb_txn_abort(struct mmdb_txn *txn);
/* mmdb_txn_end - the end of a transaction whose work so far returned rc:
 * committed when rc is NSR_OK (commit's result), else aborted (rc); txn
 * NULL (its begin failed) is only an abort.  Frees txn in every case. */
int mmdb_txn_end(struct mmdb_txn *txn, int rc);

/* ---- records --------------------------------------------------------- */

/* Volume flags (mminfo flag attributes full, recyclable, readonly, manual). */
#define MMDB_VOL_FULL 0x1
#define MMDB_VOL_RECYCLABLE 0x2
#define MMDB_VOL_READONLY 0x4
#define MMDB_VOL_MANUAL 0x8
#define MMDB_VOL_SCANNED 0x10 /* rebuilt by scanner */
#define MMDB_VOL_ALLFLAGS 0x1f

struct mmdb_volume {
	char name[MMDB_VOLNAME_MAX + 1];	/* unique, non-empty */
	uint8_t volid[16];			/* UUID, unique, not all-zero */
	char pool[MMDB_POOL_MAX + 1];
	char type[MMDB_MEDIATYPE_MAX + 1]; /* "adv_file", "vtape", "LTO..." */
	char location[MMDB_LOCATION_MAX + 1];
	char device[MMDB_DEVICE_MAX + 1]; /* mounted on; "" = not mounted */
	uint32_t block_size;		  /* bytes, chosen at label time */
	uint32_t flags;				/* MMDB_VOL_* */
	uint64_t written;			/* bytes written */
	uint64_t read;				/* bytes read */
	uint64_t capacity; /* estimated bytes; 0 = unknown */
	int64_t olabel;				/* original label time */
	int64_t labeled;			/* last label time */
	int64_t volretent;			/* volume expiry */
	uint32_t recycled;			/* times relabeled */
	uint32_t mounts;
	uint32_t next_file;			/* append position: tape file */
	uint64_t next_record;			/*  ... record / disk offset */
};

/* Save set levels (enum nsr_level) are the shared vocabulary of level.h. */

/* Save set flags (ssflags letters in parentheses). */
#define MMDB_SS_CONTINUED 0x001	 /* C */
#define MMDB_SS_VALID 0x002	 /* v */
#define MMDB_SS_RECOVERABLE 0x004 /* r: index purged, recoverable only */
#define MMDB_SS_RECYCLABLE 0x008 /* E: eligible for recycling */
#define MMDB_SS_NDMP 0x010	 /* N */
#define MMDB_SS_INCOMPLETE 0x020 /* i */
#define MMDB_SS_RAW 0x040	 /* R */
#define MMDB_SS_SNAPSHOT 0x080	 /* P */
#define MMDB_SS_COVER 0x100	 /* K */
#define MMDB_SS_INPROGRESS 0x200 /* I */
#define MMDB_SS_FINISHED 0x400	 /* F: complete */
#define MMDB_SS_CHECKPOINT 0x800 /* k */
#define MMDB_SS_ABORTED 0x1000	 /* a (sumflags) */
#define MMDB_SS_BROWSABLE 0x2000 /* b (sumflags) */
#define MMDB_SS_SUSPECT 0x4000	 /* s: damage was read, or read errors */
#define MMDB_SS_SCANNED 0x8000	 /* S: scanned in */
#define MMDB_SS_ALLFLAGS 0xffff

struct mmdb_saveset {
	uint32_t ssid;			/* allocated by mmdb_ss_create */
	uint8_t longid[16];		/* allocated by mmdb_ss_create */
	char client[MMDB_CLIENT_MAX + 1];
	char name[MMDB_SSNAME_MAX + 1];
	char pool[MMDB_POOL_MAX + 1];
	char group[MMDB_GROUP_MAX + 1];
	uint8_t level;			/* enum nsr_level (level.h) */
	uint32_t flags;			/* MMDB_SS_* */
	int64_t savetime;		/* client time of the backup */
	int64_t sscreate;		/* server time of creation */
	int64_t sscomp;			/* completion time; 0 = not yet */
	int64_t ssbrowse;		/* browse expiry */
	int64_t ssretent;		/* retention expiry */
	uint64_t totalsize;		/* bytes */
	uint64_t nfiles;
	uint32_t pssid;			/* PSS parent ssid; 0 = none */
	int64_t anchor_time;		/* PSS anchor save time; 0 = none */
	uint32_t ndependents;		/* PSS dependents (parent only) */
	uint32_t dependents[MMDB_PSS_MAX];
};

/* Fragment flags: which part of the clone instance this piece is. */
#define MMDB_FRAG_HEAD 0x1
#define MMDB_FRAG_MIDDLE 0x2
#define MMDB_FRAG_TAIL 0x4
#define MMDB_FRAG_COMPLETE 0x8 /* the whole instance in one piece */

struct mmdb_fragment {
	uint32_t ssid;
	uint32_t cloneid;
	uint8_t volid[16];
	uint32_t seq;		/* fragment sequence within the clone */
	uint64_t ss_offset;	/* first byte of the save set in it */
	uint64_t size;		/* bytes */
	uint32_t file;		/* tape file number */
	uint64_t record;	/* tape record number */
	uint64_t offset;	/* byte offset on a disk volume */
	uint32_t flags;		/* MMDB_FRAG_* */
};

/* Clone instance flags (clflags). */
#define MMDB_CLONE_INCOMPLETE 0x1 /* i */
#define MMDB_CLONE_ABORTED 0x2	  /* a */
#define MMDB_CLONE_SUSPECT 0x4	  /* s */
#define MMDB_CLONE_OPAQUE 0x8	  /* o */

struct mmdb_clone {
	uint32_t ssid;
	uint32_t cloneid;	/* unique per ssid, never 0 */
	int64_t clone_time;
	int64_t clretent;	/* clone retention */
	uint32_t flags;		/* MMDB_CLONE_* */
};

/* ---- volumes --------------------------------------------------------- */

/* mmdb_vol_put - insert or replace (matched by name) a volume; NSR_ERR_EXISTS
 * if its volid belongs to a different volume name. */
int mmdb_vol_put(struct mmdb *db, struct mmdb_txn *txn,
		 const struct mmdb_volume *vol);
/* mmdb_vol_get - volume by name into *out; NSR_ERR_NOTFOUND if none. */
int mmdb_vol_get(struct mmdb *db, const char *name, struct mmdb_volume *out);
/* mmdb_vol_get_by_id - volume by volid. */
int mmdb_vol_get_by_id(struct mmdb *db, const uint8_t volid[16],
		       struct mmdb_volume *out);
/* mmdb_vol_delete - remove a volume and every fragment on it (save sets
 * left with no fragment at all stay, flagged incomplete is the caller's
 * choice).  NSR_ERR_NOTFOUND if none. */
int mmdb_vol_delete(struct mmdb *db, struct mmdb_txn *txn, const char *name);

/* ---- save sets, fragments, clones ------------------------------------ */

/*
 * mmdb_ss_create - store a new save set.  ss->ssid and ss->longid are
 * ignored on input and set on success: the ssid is a fresh u32 never held
 * by an existing save set; the first clone instance gets cloneid (0 =
 * pick one: the low 32 bits of savetime, or the next free value).
 * *cloneid_out (may be NULL) receives it.
 */
int mmdb_ss_create(struct mmdb *db, struct mmdb_txn *txn,
		   struct mmdb_saveset *ss, uint32_t cloneid,
		   uint32_t *cloneid_out);
/*
 * mmdb_ss_restore - store a save set under the ssid it already has (ss->ssid,
 * non-zero), with one clone instance cloneid (0 = from savetime): for
 * scanner rebuilding a media database from volumes, so a save set keeps the
 * id administrators and volumes know.  NSR_ERR_EXISTS if the ssid is held.
 * ss->longid is set as for mmdb_ss_create (from this database's id).
 */
int mmdb_ss_restore(struct mmdb *db, struct mmdb_txn *txn,
		    struct mmdb_saveset *ss, uint32_t cloneid);
/* mmdb_ss_update - replace the attributes of existing save set ss->ssid
 * (fragments and clones unchanged); longid is kept. */
int mmdb_ss_update(struct mmdb *db, struct mmdb_txn *txn,
		   const struct mmdb_saveset *ss);
/* mmdb_ss_get - save set by ssid. */
int mmdb_ss_get(struct mmdb *db, uint32_t ssid, struct mmdb_saveset *out);
/* mmdb_ss_delete - remove a save set with its fragments and clones. */
int mmdb_ss_delete(struct mmdb *db, struct mmdb_txn *txn, uint32_t ssid);

/* mmdb_frag_add - record a fragment; its ssid/cloneid must exist, its volid
 * must be a known volume; (ssid, cloneid, seq) is replaced if present. */
int mmdb_frag_add(struct mmdb *db, struct mmdb_txn *txn,
		  const struct mmdb_fragment *frag);
/* mmdb_frag_list - fragments of ssid (all clones, ordered by cloneid, seq)
 * into out[0..max); *n = how many exist (may exceed max). */
int mmdb_frag_list(struct mmdb *db, uint32_t ssid, struct mmdb_fragment *out,
		   size_t max, size_t *n);
/* mmdb_frag_fn - callback for mmdb_frag_by_volume; nonzero stops the walk
 * and is returned. */
typedef int (*mmdb_frag_fn)(void *arg, const struct mmdb_fragment *frag);
/* mmdb_frag_by_volume - call fn for every fragment on volid, by ssid. */
int mmdb_frag_by_volume(struct mmdb *db, const uint8_t volid[16],
			mmdb_frag_fn fn, void *arg);

/* mmdb_clone_add - add a clone instance of clone->ssid (cloneid 0 = pick a
 * free one, returned in *cloneid_out); NSR_ERR_EXISTS if the id is taken. */
int mmdb_clone_add(struct mmdb *db, struct mmdb_txn *txn,
		   const struct mmdb_clone *clone, uint32_t *cloneid_out);
/* mmdb_clone_list - clone instances of ssid, as mmdb_frag_list. */
int mmdb_clone_list(struct mmdb *db, uint32_t ssid, struct mmdb_clone *out,
		    size_t max, size_t *n);

/* mmdb_clone_set - OR set into the flags (MMDB_CLONE_*) of clone instance
 * cloneid of ssid, then clear the bits of clear; NSR_ERR_NOTFOUND if the
 * save set or the instance does not exist. */
int mmdb_clone_set(struct mmdb *db, struct mmdb_txn *txn, uint32_t ssid,
		   uint32_t cloneid, uint32_t set, uint32_t clear);
/* mmdb_clone_remove - remove clone instance cloneid of ssid with its
 * fragments (a staged save set lets go of its original copy); the other
 * instances and their fragments stay.  NSR_ERR_NOTFOUND if there is no
 * such instance, NSR_ERR_STATE if it is the save set's only one (that
 * goes with mmdb_ss_delete). */
int mmdb_clone_remove(struct mmdb *db, struct mmdb_txn *txn, uint32_t ssid,
		      uint32_t cloneid);

/* ---- attributes (table-driven for the mminfo language) --------------- */

enum mmdb_attr_type {
	MMDB_T_NUMBER,	/* unsigned count/size, compared numerically */
	MMDB_T_TIME,	/* epoch seconds; the parser accepts nsr_getdate text */
	MMDB_T_STRING,	/* compared bytewise; repeated '=' means OR */
	MMDB_T_FLAG,	/* no comparator: "name" = set, "!name" = not set */
	MMDB_T_FLAGS	/* a letter string (ssflags, sumflags): report only,
			   query "=" matches when all given letters are set */
};

/* Which record an attribute belongs to. */
enum mmdb_attr_scope {
	MMDB_S_SAVESET, /* save set record */
	MMDB_S_CLONE,	/* clone instance of the row */
	MMDB_S_VOLUME,	/* volume of the row */
	MMDB_S_FRAG	/* fragments of the row's clone on the row's volume */
};

/* Attribute ids; names (as mminfo spells them) are in mmdb_attrs[]. */
enum mmdb_attr {
	MMDB_A_SSID, MMDB_A_CLONEID, MMDB_A_NAME, MMDB_A_CLIENT,
	MMDB_A_LEVEL, MMDB_A_SAVETIME, MMDB_A_NSAVETIME, MMDB_A_SSCREATE,
	MMDB_A_SSCOMP, MMDB_A_SSBROWSE, MMDB_A_SSRETENT, MMDB_A_TOTALSIZE,
	MMDB_A_NFILES, MMDB_A_SSFLAGS, MMDB_A_SUMFLAGS, MMDB_A_SUMSIZE,
	MMDB_A_POOL, MMDB_A_GROUP, MMDB_A_PSSID, MMDB_A_ANCHOR,
	MMDB_A_CLRETENT, MMDB_A_CLFLAGS, MMDB_A_CLTIME, MMDB_A_COPIES,
	MMDB_A_FRAGFLAGS,
	MMDB_A_VOLUME, MMDB_A_VOLID, MMDB_A_TYPE, MMDB_A_FAMILY,
	MMDB_A_WRITTEN, MMDB_A_PCTUSED, MMDB_A_READ, MMDB_A_LOCATION,
	MMDB_A_CAPACITY, MMDB_A_VOLRETENT, MMDB_A_STATE, MMDB_A_MOUNTS,
	MMDB_A_OLABEL, MMDB_A_LABELED, MMDB_A_RECYCLED, MMDB_A_DEVICE,
	MMDB_A_VOLBLOCKSIZE, MMDB_A_NEXTFILE, MMDB_A_NEXTREC,
	/* flag attributes */
	MMDB_A_INCOMPLETE, MMDB_A_SUSPECT, MMDB_A_SSRECYCLE, MMDB_A_BROWSABLE,
	MMDB_A_RECOVERABLE, MMDB_A_INPROGRESS, MMDB_A_COMPLETE,
	MMDB_A_ABORTED, MMDB_A_FULL, MMDB_A_RECYCLABLE, MMDB_A_READONLY,
	MMDB_A_MANUAL,
	MMDB_A_COUNT
};

struct mmdb_attr_info {
	enum mmdb_attr id;
	const char *name;	/* as typed in -q and -r: "savetime", "%used" */
	const char *title;	/* default report column title */
	enum mmdb_attr_type type;
	enum mmdb_attr_scope scope;
	int width;		/* default report column width */
};

/* mmdb_attrs - the attribute table, indexed by enum mmdb_attr. */
extern const struct mmdb_attr_info mmdb_attrs[MMDB_A_COUNT];
/* mmdb_attr_lookup - attribute by its mminfo name (case-sensitive); NULL if
 * unknown. */
const struct mmdb_attr_info *mmdb_attr_lookup(const char *name);

/* mmdb_volume_family - "tape" or "disk" for a media type string. */
const char *mmdb_volume_family(const char *type);
/* mmdb_volume_pctused - written * 100 / capacity (0 if capacity unknown),
 * 100 if the volume is marked full. */
unsigned mmdb_volume_pctused(const struct mmdb_volume *vol);

/* ---- queries --------------------------------------------------------- */

enum mmdb_op {
	MMDB_OP_EQ, MMDB_OP_NE, MMDB_OP_LT, MMDB_OP_LE, MMDB_OP_GT,
	MMDB_OP_GE,
	MMDB_OP_SET,	/* flag attribute set ("incomplete") */
	MMDB_OP_CLEAR	/* flag attribute not set ("!incomplete") */
};

/*
 * One predicate.  NUMBER/TIME attributes use num, STRING and FLAGS use str
 * (MMDB_A_VOLID: 32 hex digits or 16 raw bytes via str), FLAG attributes
 * only op SET/CLEAR, MMDB_A_LEVEL: str ("full") or num.
 */
struct mmdb_pred {
	enum mmdb_attr attr;
	enum mmdb_op op;
	int64_t num;
	const char *str;
};

/*
 * A query: the conjunction of attribute groups, NetWorker style: EQ
 * predicates on the same attribute are OR'ed ("client=a,client=b",
 * "ssid=1,ssid=2"), everything else is AND'ed (so "savetime>=a,
 * savetime<=b" is a range; FLAGS "=" predicates all must hold).  The
 * cursor copies the query: the caller may free it after mmdb_*_query().
 * "pool" is the save set's pool in a save set query and the volume's pool
 * in a volume query.
 */
struct mmdb_query {
	const struct mmdb_pred *preds;
	size_t npreds;
};

/*
 * A save set row: one per (save set, clone instance, volume) the clone has
 * fragments on; a clone with no fragment yields one row with has_volume 0.
 */
struct mmdb_ss_row {
	struct mmdb_saveset ss;
	struct mmdb_clone clone;	/* the row's clone instance */
	uint32_t copies;		/* clone instances of the save set */
	int has_volume;
	struct mmdb_volume vol;		/* valid if has_volume */
	uint32_t frag_flags;		/* OR of MMDB_FRAG_* on this volume */
	uint64_t sumsize;		/* bytes of the clone on this volume */
	uint32_t first_file;		/* first fragment on this volume */
	uint64_t first_record;
};

/* Which access path a cursor uses (for tests and "explain"). */
enum mmdb_plan {
	MMDB_PLAN_SCAN, MMDB_PLAN_SSID, MMDB_PLAN_CLIENT_NAME_TIME,
	MMDB_PLAN_CLIENT, MMDB_PLAN_SAVETIME, MMDB_PLAN_VOLUME,
	MMDB_PLAN_VOLNAME, MMDB_PLAN_POOL, MMDB_PLAN_VOLSCAN
};

/* Cursor flags. */
#define MMDB_CUR_FORCE_SCAN 0x1 /* ignore indexes (tests compare plans) */
/* Save set rows grouped by backup chain: client, save set name, save
 * time (clients and names in the engine's string id order, not
 * alphabetical); predicates still apply.  nsrim reads one chain at a
 * time this way and forgets it. */
#define MMDB_CUR_CHAINS 0x2

/*
 * mmdb_ss_query - open a cursor over save set rows matching q (NULL or
 * empty = all), ordered by the chosen index.  The cursor reads one
 * consistent committed state and holds O(1) memory however many rows
 * match.  NSR_ERR_INVAL on a malformed predicate (wrong op for the type,
 * NULL string).  Free with mmdb_cursor_free().
 */
int mmdb_ss_query(struct mmdb *db, const struct mmdb_query *q, unsigned flags,
		  struct mmdb_cursor **out);
/* mmdb_ss_next - next row into *row: 1 = a row, 0 = no more, < 0 error. */
int mmdb_ss_next(struct mmdb_cursor *cur, struct mmdb_ss_row *row);

/* mmdb_vol_query - cursor over volumes matching q (volume-scope attributes
 * only, NSR_ERR_INVAL otherwise). */
int mmdb_vol_query(struct mmdb *db, const struct mmdb_query *q,
		   unsigned flags, struct mmdb_cursor **out);
/* mmdb_vol_next - next volume: 1 = a row, 0 = no more, < 0 error. */
int mmdb_vol_next(struct mmdb_cursor *cur, struct mmdb_volume *vol);

/* mmdb_cursor_plan - the access path the cursor chose. */
enum mmdb_plan mmdb_cursor_plan(const struct mmdb_cursor *cur);
/* mmdb_cursor_free - end the cursor; NULL is a no-op. */
void mmdb_cursor_free(struct mmdb_cursor *cur);

/* mmdb_ss_flags_str - ssflags letters of flags into buf (>= 20 bytes). */
void mmdb_ss_flags_str(uint32_t flags, char *buf, size_t len);
/* mmdb_sumflags_str - the 2-3 letter sumflags of a row into buf (>= 4). */
void mmdb_sumflags_str(const struct mmdb_ss_row *row, char *buf, size_t len);

/* ---- maintenance ----------------------------------------------------- */

/*
 * mmdb_check - verify every page checksum, B+tree order, that every index
 * entry matches a record and vice versa, and the free list.  Problems are
 * appended as lines to report (may be NULL).  NSR_OK if consistent,
 * NSR_ERR_CORRUPT if not, another code if the check itself failed.
 */
int mmdb_check(struct mmdb *db, struct nsr_buf *report);

/* mmdb_write_fn - sink for mmdb_snapshot; return NSR_OK or an error that
 * aborts the snapshot. */
typedef int (*mmdb_write_fn)(void *arg, const void *buf, size_t len);
/*
 * mmdb_snapshot - stream a consistent copy of the database as of the last
 * commit, as a complete database file (open it by placing it as <dir>/mmdb),
 * while writers continue.  *commit_seq (may be NULL) gets the commit it
 * reflects.
 */
int mmdb_snapshot(struct mmdb *db, mmdb_write_fn fn, void *arg,
		  uint64_t *commit_seq);

struct mmdb_stats {
	uint64_t commit_seq;	/* last durable commit */
	uint64_t commits;	/* since open */
	uint64_t fsyncs; /* WAL fsyncs since open (group commit < commits) */
	uint64_t checkpoints;
	uint64_t pages;		/* pages in the file */
	uint64_t free_pages;
	uint64_t savesets;
	uint64_t volumes;
	uint64_t file_bytes;	/* db file + WAL */
};
/* mmdb_stats - counters for tests, benchmarks and nsrmmdbd status; the
 * save set and volume counts walk their trees (O(n)). */
int mmdb_stats(struct mmdb *db, struct mmdb_stats *st);

/* ---- record encodings (hostile-input safe) --------------------------- */

/* Encode a record into buf (appending); decode from p[0..len):
 * NSR_ERR_CORRUPT / NSR_ERR_TRUNCATED on bad input, never reads past len. */
int mmdb_vol_encode(const struct mmdb_volume *vol, struct nsr_buf *buf);
int mmdb_vol_decode(const void *p, size_t len, struct mmdb_volume *out);

#endif /* NSR_MMDB_H */
