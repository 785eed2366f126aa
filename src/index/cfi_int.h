/*
 * cfi_int.h - on-disk formats of the client file index, private to
 * src/index (published in nsr_index(5)).  All integers big-endian.
 *
 * Record file ss-<ssid>.rec:
 *	offset size meaning
 *	0      4    magic "NCFI" (0x4E434649)
 *	4      2    version (4; 1 to 3 are still read: 1 has no list
 *	            records, neither 1 nor 2 a directory table, 3 a table
 *	            without list forms)
 *	6      2    reserved, 0
 *	8      8    ssid
 *	16     8    savetime (signed epoch seconds)
 *	24     4    CRC-32C of bytes 0..23
 *	28     ...  records
 * Record:
 *	0      4    payload length L (<= CFI_REC_MAX)
 *	4      L    payload
 *	4+L    4    CRC-32C of the payload
 * Entry payload (byte 0 is not 0):
 *	0      1    type (enum nsr_asm_ftype)
 *	1      3    reserved, 0
 *	4      4    mode (<= 07777)
 *	8      4    uid
 *	12     4    gid
 *	16     8    size
 *	24     8    mtime seconds (signed)
 *	32     4    mtime nanoseconds (< 1e9)
 *	36     8    stream offset of the file record
 *	44     2    path length P (1..65535, NSR_ASM_LONGPATH_MAX)
 *	46     P    path bytes (no NUL)
 * List payload (version 2): a piece of a directory's entry list
 *	0      1    0
 *	1      3    reserved, 0
 *	4      4    total: names in the whole list
 *	8      4    index in the list of this piece's first name
 *	12     2    directory path length P (1..65535)
 *	14     P    directory path bytes (no NUL)
 *	14+P   ...  names, each 1 byte length N (1..255) and N bytes (no
 *	            NUL, no '/', not "." or ".."), sorted bytewise, unique;
 *	            none only for an empty list (total 0)
 *	With byte 1 = 1 (version 3 only), each name is instead 1 byte P
 *	(bytes shared with the name before in this piece, <= its length;
 *	0 for the first), 1 byte S and S bytes: the name is P bytes of the
 *	one before and these S (P + S <= 255)
 * Entry block payload (version 3; what the writer of version 3 uses for
 * entries): consecutive entries of one key (cfi_key_of)
 *	0      1    0
 *	1      1    2
 *	2      2    reserved, 0
 *	4      4    count C (>= 1)
 *	8      v    key length K, K key bytes
 *	...         C entries, each 10 varints and bytes: type (1..255),
 *	            mode (<= 07777), uid, gid, size, zigzag(mtime - the
 *	            entry before's, 0 for the first), nanoseconds (< 1e9),
 *	            zigzag(offset - the entry before's), P bytes shared
 *	            with the name before, S, then S name bytes.  The path
 *	            is key "/" name ("/" name for key "/", name for key "")
 *
 * Directory table (version 3), appended at commit after the last record:
 *	0      4    magic "NCFD" (0x4E434644)
 *	4      v    directory count D, then D directories, keys strictly
 *	            increasing (bytewise, a prefix first):
 *	            v key length K (0..65535), K key bytes (no NUL),
 *	            v entry count, that many offset deltas (v each),
 *	            v list piece count, that many offset deltas,
 *	            (version 4) 1 byte list form F and what it needs:
 *	            F 0: nothing (no whole list, or more than one);
 *	            F 1: 16 bytes digest: the pieces hold one whole list;
 *	            F 2: 16 bytes digest, v total, v ssid: the list is the
 *	            one (form 1, same digest and total) of this directory
 *	            in save set ssid, which this file does not hold
 *	            (version 4) after the directories: v R, then R ssids
 *	            (v each, strictly increasing): those form 2 names
 *	A list's digest is the first 16 bytes of SHA-256 over its total
 *	(4 bytes) and each name as 1 byte length and its bytes, in order.
 *	Numbers "v" are unsigned LEB128.  An entry's key is its path up to
 *	its last '/' ("/" for "/name", empty without '/'); a list piece's
 *	key is its directory.  Offsets are of the record's length field in
 *	the file, the first delta from 0, the others > 0.
 * Footer (version 3), the last 24 bytes of the committed length:
 *	0      4    magic "NCFT" (0x4E434654)
 *	4      8    file offset of the table (= end of the records)
 *	12     4    table length T (<= CFI_TAB_MAX)
 *	16     4    CRC-32C of the table
 *	20     4    CRC-32C of bytes 0..19
 *	(offset + T + 24 = committed length)
 *
 * Spill file of a query's results (cfi_query_res.c: nsrindexd's, an
 * unnamed temporary file, never in the format of the index's files):
 * records only, each a record as above whose payload is
 *	0      8    ssid of the save set holding the entry
 *	8      8    its savetime (signed)
 *	16     ...  an entry payload (46 + P bytes, as above)
 *
 * Catalogue file "catalog":
 *	0      4    magic "NCAT" (0x4E434154)
 *	4      2    version (2; 1 is still read)
 *	6      2    reserved, 0
 *	8      4    count N (<= CFI_MAX_SAVESETS)
 *	12     ...  N save sets:
 *	            8 ssid, 8 savetime, 8 entries, 8 committed length of the
 *	            record file, 2 name length, name bytes (<= 4095),
 *	            (version 2) 4 count R, R ssids (8 each): the save sets
 *	            holding lists it refers to
 *	            (version 2) 4 count K, then K kept save sets, as above
 *	            with R 0: deleted, not browsable, their record files
 *	            kept for the lists other save sets refer to
 *	end-4  4    CRC-32C of everything before
 */
#ifndef NSR_CFI_INT_H
#define NSR_CFI_INT_H

#include <stddef.h>
#include <stdint.h>

#include "nsr/buf.h"
#include "nsr/cfi.h"

#define CFI_REC_MAGIC 0x4E434649u
#define CFI_CAT_MAGIC 0x4E434154u
#define CFI_VERSION 2	  /* catalogue; 1 is still read */
#define CFI_REC_VERSION 4 /* record file; 1 to 3 are still read */
#define CFI_DIGEST 16	  /* bytes of a list digest */
#define CFI_REF_LOOK 32	  /* newest save sets a writer looks in */
#define CFI_TAB_MAGIC 0x4E434644u
#define CFI_FOOT_MAGIC 0x4E434654u
#define CFI_FOOT_LEN 24
#define CFI_TAB_MAX (1u << 30)
#define CFI_HDR_LEN 28
#define CFI_FIXED_LEN 46
#define CFI_LIST_FIXED 14
#define CFI_LIST_NAME_MAX 255
#define CFI_LIST_FRONT 1 /* list payload byte 1: names front-coded */
#define CFI_LIST_BLOCK 2 /* payload byte 1 after a 0: an entry block */
#define CFI_BLK_SOFT (16 * 1024) /* a block grows to about this */
/* the largest record payload: a list piece with the longest path and the
 * longest name */
#define CFI_REC_MAX (CFI_LIST_FIXED + CFI_PATH_MAX + 2 + CFI_LIST_NAME_MAX)
#define CFI_PATH_MAX 65535 /* as NSR_ASM_LONGPATH_MAX: any saved path */
#define CFI_NAME_MAX 4095  /* a save set name in the catalogue */
#define CFI_MAX_SAVESETS 1000000u

/* A save set in the catalogue (owned strings). */
struct cfi_ss {
	uint64_t ssid;
	int64_t savetime;
	uint64_t entries;
	uint64_t length; /* committed bytes of the record file */
	char *name;
	int tabstate; /* 0 unknown, 1 tab loaded, 2 no table (version < 3) */
	struct cfi_tab *tab; /* the directory table, once read */
	uint64_t tab_used;   /* when tab was last asked for (cfi_tab_tick) */
	uint64_t *refs;	     /* save sets whose lists it refers to */
	uint32_t nrefs;
};

/* The list form of a directory in a table (version 4). */
struct cfi_lform {
	int form; /* 0 none, 1 the pieces hold it, 2 in save set ssid */
	uint8_t digest[CFI_DIGEST];
	uint32_t total; /* form 2 */
	uint64_t ssid;	/* form 2 */
};

/* A directory of a parsed table: key (not NUL-terminated, in the blob)
 * and where its entry (0) and list piece (1) offsets start. */
struct cfi_tdir {
	const char *key;
	size_t klen;
	size_t at[2];
	uint32_t n[2];
	struct cfi_lform lf;
};

/* A parsed directory table (cfi_dir.c). */
struct cfi_tab {
	uint8_t *blob;
	size_t len;
	struct cfi_tdir *d;
	size_t n;
	unsigned version; /* of the record file */
	uint64_t *refs;	  /* the ssids form 2 names, increasing */
	size_t nrefs;
	size_t held;	  /* bytes counted as held (cfi_tab_hold), or 0 */
};

struct cfi_dirmap;

/* An entry block being built (cfi_dir.c). */
struct cfi_blk {
	struct nsr_buf b; /* the payload so far */
	size_t klen, kvar; /* key length, bytes of its varint */
	uint32_t count;	   /* entries; 0 = no block begun */
	int64_t mtime;	   /* of the entry before */
	uint64_t off;
	char *prev; /* the name before, plen bytes */
	size_t plen;
};

/* A block being read (cfi_dir.c). */
struct cfi_blk_rd {
	const uint8_t *p;
	size_t len, at;
	const char *key;
	size_t klen;
	uint32_t left, count;
	int64_t mtime;
	uint64_t off;
	size_t plen;
};

/* A decoded piece of a directory list: names[0..n) are the list's
 * entries first .. first+n-1 (borrowed from the decoder's buffers). */
struct cfi_list {
	const char *dir;
	uint32_t total, first;
	size_t n;
	const char **names;
};

/* Scratch space of the list decoder (cfi_list_get). */
struct cfi_list_buf {
	char dir[CFI_PATH_MAX + 1];
	char names[CFI_REC_MAX];
	const char *ptr[CFI_REC_MAX / 2];
};

/* What a record file scan calls: entries and (version 2) list pieces;
 * either may be NULL. */
typedef int (*cfi_list_fn)(void *ctx, const struct nsr_cfi_saveset *ss,
			   const struct cfi_list *l);

/* cfi_dir.c: the directory table (see there). */
size_t cfi_key_of(const char *path);
int cfi_key_cmp(const char *a, size_t an, const char *b, size_t bn);
struct cfi_dirmap *cfi_dirmap_new(void);
void cfi_dirmap_free(struct cfi_dirmap *m);
int cfi_dirmap_add(struct cfi_dirmap *m, const char *k, size_t n, int list,
		   uint64_t off);
int cfi_dirmap_put(struct cfi_dirmap *m, struct nsr_buf *out, uint64_t at);
const struct cfi_lform *cfi_dirmap_lform(struct cfi_dirmap *m, const char *k,
					 size_t n, size_t *pieces);
int cfi_dirmap_setform(struct cfi_dirmap *m, const char *k, size_t n,
		       const struct cfi_lform *lf);
int cfi_dirmap_drop(struct cfi_dirmap *m, const char *k, size_t n,
		    size_t pieces);
int cfi_dirmap_refs(const struct cfi_dirmap *m, uint64_t **out, uint32_t *n);
struct cfi_digest;
int cfi_digest_begin(struct cfi_digest **d, uint32_t total);
int cfi_digest_names(struct cfi_digest *d, const char *const *names,
		     size_t n);
int cfi_digest_end(struct cfi_digest *d, uint8_t out[CFI_DIGEST]);
void cfi_digest_free(struct cfi_digest *d);
int cfi_var_get(const uint8_t *p, size_t n, size_t *at, uint64_t *v);
int cfi_foot_get(const uint8_t *f, uint64_t len, uint64_t *toff,
		 uint32_t *tlen, uint32_t *tcrc);
int cfi_tab_parse(uint8_t *blob, size_t n, uint64_t end, unsigned version,
		  struct cfi_tab **out);
const struct cfi_tdir *cfi_tab_find(const struct cfi_tab *t, const char *k,
				    size_t n);
int cfi_tab_offs(const struct cfi_tab *t, const struct cfi_tdir *d, int list,
		 uint64_t **out);
void cfi_tab_free(struct cfi_tab *t);
void cfi_tab_hold(struct cfi_tab *t);
uint64_t cfi_tab_tick(void);
int cfi_blk_init(struct cfi_blk *k);
void cfi_blk_release(struct cfi_blk *k);
int cfi_blk_joins(const struct cfi_blk *k, const char *path, size_t kl);
int cfi_blk_add(struct cfi_blk *k, const struct nsr_cfi_entry *e, size_t kl);
int cfi_blk_put(struct cfi_blk *k, struct nsr_buf *out);
int cfi_blk_open(struct cfi_blk_rd *r, const uint8_t *p, size_t len);
int cfi_blk_next(struct cfi_blk_rd *r, struct nsr_cfi_entry *e, char *path);

/* cfi_hdr_put - the 28-byte record file header (version 3). */
void cfi_hdr_put(uint8_t *out, uint64_t ssid, int64_t savetime);
/* cfi_hdr_get - check and decode it: NSR_OK, NSR_ERR_CORRUPT,
 * NSR_ERR_CHECKSUM, NSR_ERR_UNSUPPORTED.  *version gets 1, 2 or 3. */
int cfi_hdr_get(const uint8_t *in, uint64_t *ssid, int64_t *savetime,
		unsigned *version);
/* cfi_name_ok - a name a directory list may hold (1..255 bytes, no '/',
 * not "." or ".."; n bytes, NUL-free checked by the caller). */
int cfi_name_ok(const char *name, size_t n);
/* cfi_list_put - append one list record of dir holding names[0..n) from
 * index first of a list of total; as many names as fit, *taken says how
 * many (at least one when n > 0).  NSR_ERR_INVAL (bad path). */
int cfi_list_put(struct nsr_buf *out, const char *dir, uint32_t total,
		 uint32_t first, const char *const *names, size_t n,
		 size_t *taken);
/* cfi_list_get - decode one list payload (frame and CRC checked) into l,
 * borrowing b.  NSR_ERR_CORRUPT. */
int cfi_list_get(const uint8_t *p, size_t len, struct cfi_list *l,
		 struct cfi_list_buf *b);
/* cfi_rec_put - append the framed record of e to out. */
int cfi_rec_put(struct nsr_buf *out, const struct nsr_cfi_entry *e);
/* cfi_rec_get - decode one payload (frame and CRC already checked); path
 * is written NUL-terminated to pathbuf (CFI_PATH_MAX + 1 bytes). */
int cfi_rec_get(const uint8_t *p, size_t len, struct nsr_cfi_entry *e,
		char *pathbuf);
#define CFI_SPILL_PRE 16 /* ssid and savetime before the entry */
#define CFI_SPILL_NAME ".spill-" /* a spill file's name while it has one */
/* the largest spill record, framed */
#define CFI_SPILL_REC_MAX (8 + CFI_SPILL_PRE + CFI_FIXED_LEN + CFI_PATH_MAX)
/* cfi_spill_put - append the framed spill record of e, found in save
 * set ssid saved at savetime, to out.  NSR_ERR_INVAL (bad entry). */
int cfi_spill_put(struct nsr_buf *out, uint64_t ssid, int64_t savetime,
		  const struct nsr_cfi_entry *e);
/* cfi_spill_get - decode the spill record at p[0..n): its length checked
 * against n, its CRC, its entry as cfi_rec_get does (path into pathbuf,
 * CFI_PATH_MAX + 1 bytes); *used gets its framed length.
 * NSR_ERR_TRUNCATED (n holds less than the record), NSR_ERR_CORRUPT,
 * NSR_ERR_CHECKSUM. */
int cfi_spill_get(const uint8_t *p, size_t n, size_t *used, uint64_t *ssid,
		  int64_t *savetime, struct nsr_cfi_entry *e, char *pathbuf);
/* cfi_dir_of - the index directory of c (<root>/index/<client>). */
const char *cfi_dir_of(const struct nsr_cfi *c);
/* Largest even number of marks a spilled result set keeps (tests make
 * it small; cfi_query_res.c). */
extern size_t cfi_results_marks;
/* Bytes of directory paths a find keeps waiting (64 MiB; tests make it
 * small). */
extern size_t cfi_match_queue_max;
/* Non-zero: spill files are made as without O_TMPFILE (tests). */
extern int cfi_spill_no_tmpfile;

/* cfi_cat_put - encode a catalogue of n save sets and nk kept ones
 * (their refs are not written) into out. */
int cfi_cat_put(struct nsr_buf *out, const struct cfi_ss *ss, size_t n,
		const struct cfi_ss *kept, size_t nk);
/* cfi_cat_get - decode a catalogue; *ss and *kept are malloc'ed (free
 * with cfi_ss_free; kept NULL: the kept ones are dropped). */
int cfi_cat_get(const uint8_t *p, size_t n, struct cfi_ss **ss, size_t *count,
		struct cfi_ss **kept, size_t *nkept);
/* cfi_ss_free - free n save sets and the array. */
void cfi_ss_free(struct cfi_ss *ss, size_t n);

/* Listing windows built so far (each one a scan of the record files). */
extern size_t cfi_list_windows;

#endif /* NSR_CFI_INT_H */
