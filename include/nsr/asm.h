/*
 * asm.h - the save stream format: encoder and incremental decoder.
 *
 * A save stream is what `save` produces and `recover` and `scanner` read
 * back: a sequence of framed records (full layout in nsr_savestream(5)):
 *
 *	HEADER  (LONGSTR* FILE XATTR* DIRENTS* (DATA | HOLE)* FILE_END)*  END
 *
 * A path (or hard-link source) longer than NSR_ASM_PATH_MAX travels in
 * LONGSTR records of at most NSR_ASM_LONGSTR_PIECE bytes each, just before
 * its FILE record (version 2); the encoder and the decoder do this
 * themselves, so callers see whole paths of up to NSR_ASM_LONGPATH_MAX.
 *
 * A regular file whose size is not known when it starts (the output of a
 * command, save --pipe) is "unsized" (version 4): its FILE record says
 * size 0 and carries NSR_ASM_FILE_UNSIZED, any number of DATA and HOLE
 * records follow, and its FILE_END, the terminator, carries the total
 * and the checksum; file_end() is where a reader learns the size.
 *
 * A large regular file may be split over the streams of a PSS save
 * point (version 7): its head, a FILE record with NSR_ASM_FILE_SPLIT
 * (size 0, no data: the metadata and extended attributes, the total
 * size and the number of parts) in one stream, usually the master, and
 * its parts, FILE records with NSR_ASM_FILE_PART (the part's index,
 * offset and length, the total size, and the data of that range), in
 * any streams of the save point.  Each part has its own checksum; a
 * restore puts the parts together (restore.h).
 *
 * File data may be transformed on the client (version 5, SEALED records
 * in place of DATA): compressed with zlib, then encrypted with
 * AES-256-GCM under a key named by its key id (crypt.h); metadata stays
 * readable, so indexes and scanner work without the key.  A decoder
 * given no key for a record's id passes none of that file's data on and
 * says so at its FILE_END (nokey), so a wrong or missing key is an
 * error, never garbage.
 *
 * Every record starts with a 12-byte frame (type, flags, length, CRC-32C)
 * and is bounded (NSR_ASM_MAX_DATA for data, NSR_ASM_MAX_XATTR_REC for
 * extended attributes, NSR_ASM_MAX_META for the rest).  The frame CRC of
 * metadata records covers their payload too; data bytes are covered by
 * the per-file checksum carried in FILE_END, so a damaged data byte is
 * reported against the file it belongs to while the stream can still be
 * read past it.
 *
 * The encoder writes through a caller-supplied sink.  The decoder is fed
 * arbitrary pieces (down to one byte) as they arrive and calls back once per
 * event; it treats input as hostile and returns NSR_ERR_CORRUPT,
 * NSR_ERR_CHECKSUM or NSR_ERR_TOOBIG on garbage, never reading out of
 * bounds.  Once a decoder or encoder has failed it stays failed (sticky).
 */
#ifndef NSR_ASM_H
#define NSR_ASM_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define NSR_ASM_VERSION 7	/* read; 1 to 6 too */
#define NSR_ASM_VERSION_WR 4	/* written: 5 sealed, 6 a PSS dependent,
				 * 7 a PSS stream that may split files */
#define NSR_ASM_VERSION_MIN 1
#define NSR_ASM_MAGIC 0x4E534153u /* "NSAS" */
#define NSR_ASM_FRAME_LEN 12
#define NSR_ASM_MAX_DATA (1u << 20)    /* payload bound of a DATA record */
#define NSR_ASM_MAX_META (16u * 1024u) /* payload bound of other records */
#define NSR_ASM_PATH_MAX 4095	       /* a path held in the FILE record */
#define NSR_ASM_LONGPATH_MAX 65535     /* a path in LONGSTR records */
#define NSR_ASM_LONGSTR_PIECE 8192     /* path bytes per LONGSTR record */
#define NSR_ASM_NAME_MAX 255	       /* user, group, client, ss name */
#define NSR_ASM_CK_MAX 32	       /* largest file checksum (SHA-256) */
#define NSR_ASM_XATTR_NAME_MAX 255     /* as XATTR_NAME_MAX */
#define NSR_ASM_XATTR_VALUE_MAX 65536  /* as XATTR_SIZE_MAX */
#define NSR_ASM_MAX_XATTR_REC (NSR_ASM_XATTR_VALUE_MAX + 1024)
#define NSR_ASM_MAX_XATTRS 1024	       /* XATTR records per file */
#define NSR_ASM_SEAL_HDR 28	       /* SEALED payload before the body */
#define NSR_ASM_MAX_SEALED (NSR_ASM_MAX_DATA + 64) /* SEALED payload */
#define NSR_ASM_PARTS_MAX 65536u       /* parts of one split file */

/* Record types (the first byte of a frame).  A new type gets the next
 * number here, its bound in asm_max_len (cksum.c), its place in the
 * grammar in type_allowed (dec.c), a decoder in asm_dec_on_meta and a
 * section in nsr_savestream(5). */
enum nsr_asm_rec {
	NSR_ASM_REC_HEADER = 1,
	NSR_ASM_REC_FILE = 2,
	NSR_ASM_REC_DATA = 3,
	NSR_ASM_REC_HOLE = 4,
	NSR_ASM_REC_FILE_END = 5,
	NSR_ASM_REC_END = 6,
	NSR_ASM_REC_XATTR = 7,
	NSR_ASM_REC_LONGSTR = 8, /* version 2: a piece of a long path */
	NSR_ASM_REC_DIRENTS = 9, /* version 3: a directory's entry names */
	NSR_ASM_REC_SEALED = 10, /* version 5: compressed/encrypted data */
};

/* SEALED record flags and ciphers (bytes 0 and 1 of its payload). */
enum nsr_asm_seal {
	NSR_ASM_SEAL_DEFLATE = 0x01, /* flag: the body is zlib data */
	NSR_ASM_CIPHER_NONE = 0,
	NSR_ASM_CIPHER_AES256GCM = 1,
};

/* Which string of the next FILE record a LONGSTR record carries. */
enum nsr_asm_longstr {
	NSR_ASM_LONG_PATH = 1,
	NSR_ASM_LONG_LINK = 2,
};

/* File types recorded in a FILE record (sockets are never saved). */
enum nsr_asm_ftype {
	NSR_ASM_REG = 1,
	NSR_ASM_DIR = 2,
	NSR_ASM_SYMLINK = 3,
	NSR_ASM_HARDLINK = 4, /* link to an earlier path of the same stream */
	NSR_ASM_FIFO = 5,
	NSR_ASM_CHR = 6,
	NSR_ASM_BLK = 7,
};

/* Per-file data checksum algorithms. */
enum nsr_asm_ck {
	NSR_ASM_CK_CRC32C = 1, /* 4 bytes */
	NSR_ASM_CK_SHA256 = 2, /* 32 bytes, OpenSSL */
};

/* FILE_END status: whether the data is the whole file as it was read. */
enum nsr_asm_fstatus {
	NSR_ASM_FILE_OK = 0,
	NSR_ASM_FILE_READERR = 1, /* read failed; data is short (zero-filled) */
	NSR_ASM_FILE_CHANGED = 2, /* size changed while it was being read */
};

/* FILE record flags (byte 1 of the record; 0 before version 4). */
enum nsr_asm_fflag {
	NSR_ASM_FILE_UNSIZED = 0x01, /* version 4: size known at FILE_END */
	NSR_ASM_FILE_SPLIT = 0x02,   /* version 7: a split file's head */
	NSR_ASM_FILE_PART = 0x04,    /* version 7: a part of a split file */
};

/* The stream header.  Strings are NUL-terminated, at most NAME_MAX bytes. */
struct nsr_asm_header {
	uint32_t version;
	int ck_alg;	  /* enum nsr_asm_ck */
	uint64_t ssid;	  /* 0 when not known at save time */
	int64_t savetime; /* client time, epoch seconds */
	const char *client;
	const char *name; /* save set name, e.g. "/home" */
};

/*
 * A file record: the stat summary of one saved object.  path is the path as
 * saved (absolute when the save was given an absolute path), at most
 * NSR_ASM_LONGPATH_MAX bytes.  link is the
 * symlink target (SYMLINK) or the earlier path (HARDLINK), else "" or NULL
 * when encoding.  user/group may be "" when the id has no name.
 */
struct nsr_asm_file {
	int type;      /* enum nsr_asm_ftype */
	uint32_t mode; /* permission bits incl. set-id/sticky (07777) */
	uint32_t uid, gid;
	uint32_t nlink; /* link count when saved (restore tracks > 1) */
	uint64_t size; /* bytes of data that follow (REG), else 0 */
	uint64_t rdev; /* CHR/BLK device number (makedev form) */
	struct timespec atime, mtime, ctime;
	const char *path;
	const char *link;
	const char *user;
	const char *group;
	/* 1: a regular file of unknown size (size is 0): the data runs
	 * until FILE_END, whose bytes field gives the total (version 4) */
	int unsized;
	/* A split file (version 7), nparts > 0: with part 0 the head
	 * (size 0, no data follows; its metadata and attributes), with
	 * part 1 .. nparts the data of [part_off, part_off + size) of the
	 * file of total bytes (size > 0, no attributes).  Regular files
	 * only, never unsized; nparts <= NSR_ASM_PARTS_MAX. */
	uint32_t part, nparts;
	uint64_t part_off, total;
};

/* FILE_END as decoded.  ck_ok is 1 when the checksum computed over the
 * decoded data equals the recorded one. */
struct nsr_asm_file_end {
	int status; /* enum nsr_asm_fstatus */
	uint64_t bytes; /* data bytes (DATA + HOLE) the record claims */
	int ck_alg;
	size_t ck_len;
	uint8_t ck[NSR_ASM_CK_MAX];
	int ck_ok;
	/* 1: the file's data is encrypted under a key the decoder was not
	 * given (key_id names it); none of it was passed on, ck_ok is 0 */
	int nokey;
	uint8_t key_id[8];
};

/* Stream totals from the END record (checked by the decoder). */
struct nsr_asm_trailer {
	uint64_t files;
	uint64_t bytes;	 /* file data bytes */
	uint64_t errors; /* files with a non-OK status */
};

/* Sink: write n bytes; return NSR_OK or a negative nsr_err (sticky). */
typedef int (*nsr_asm_write_fn)(void *ctx, const void *p, size_t n);

/* Key lookup for SEALED records: fill key[32] for the 8-byte id and
 * return 0, or non-zero when the key is not known. */
typedef int (*nsr_asm_key_fn)(void *ctx, const uint8_t *id, uint8_t *key);

/* The transform of file data (nsr_asm_enc_xform). */
struct nsr_asm_xform {
	int compress;	    /* 0 = none, 1-9 = zlib level */
	const uint8_t *key; /* 32 bytes: AES-256-GCM; NULL = none */
	const uint8_t *key_id; /* 8 bytes, with key */
};

/* ---- encoder ---------------------------------------------------------- */

struct nsr_asm_enc;

/* nsr_asm_enc_new - encoder writing to sink; ck_alg is the per-file checksum.
 * NSR_OK, NSR_ERR_INVAL (bad ck_alg), NSR_ERR_NOMEM. */
int nsr_asm_enc_new(struct nsr_asm_enc **out, int ck_alg,
		    nsr_asm_write_fn sink, void *sink_ctx);
/* nsr_asm_enc_xform - transform file data from now on: before the
 * header, which then says version 5 (6 for a PSS dependent).  Data goes
 * out in SEALED records of up to NSR_ASM_MAX_DATA plain bytes (a
 * compressed record whose data did not shrink keeps it as it was).  The
 * key is copied.  NSR_ERR_STATE after the header, NSR_ERR_INVAL (nothing
 * to do, bad level), NSR_ERR_NOMEM. */
int nsr_asm_enc_xform(struct nsr_asm_enc *e, const struct nsr_asm_xform *x);
/* nsr_asm_enc_free - free the encoder (NULL is fine); writes nothing. */
void nsr_asm_enc_free(struct nsr_asm_enc *e);
/* nsr_asm_enc_pss - before the header: the stream is PSS dependent
 * index (1 .. 255) of master save set master (nonzero); the header is
 * then version 6 and carries both.  NSR_ERR_INVAL, NSR_ERR_STATE. */
int nsr_asm_enc_pss(struct nsr_asm_enc *e, uint32_t master, uint32_t index);
/* nsr_asm_enc_split - before the header: split files (head and part
 * records) may follow; the header is then version 7 (with the PSS
 * fields, zero for a master).  NSR_ERR_STATE after the header. */
int nsr_asm_enc_split(struct nsr_asm_enc *e);
/* nsr_asm_enc_header - write the HEADER record (first, exactly once).
 * h->ck_alg and h->version are ignored (the encoder's are written). */
int nsr_asm_enc_header(struct nsr_asm_enc *e, const struct nsr_asm_header *h);
/* nsr_asm_enc_file - start a file; *offset (may be NULL) gets the stream
 * offset of its FILE record.  For REG, DATA/HOLE for f->size bytes and a
 * FILE_END must follow; for other types call nsr_asm_enc_file_end at once.
 * With f->unsized (REG, size 0) any amount of DATA/HOLE may follow and
 * FILE_END records how much there was.
 * A path or link over NSR_ASM_PATH_MAX bytes is written as LONGSTR records
 * first (*offset is then that of the first of them).  NSR_ERR_TOOBIG for
 * strings over their bound, NSR_ERR_STATE out of order. */
int nsr_asm_enc_file(struct nsr_asm_enc *e, const struct nsr_asm_file *f,
		     uint64_t *offset);
/* nsr_asm_enc_xattr - one extended attribute of the current file; only
 * between nsr_asm_enc_file and its first data.  NSR_ERR_TOOBIG (name over
 * 255 bytes, value over 64 KB, more than NSR_ASM_MAX_XATTRS), NSR_ERR_INVAL
 * (empty name), NSR_ERR_STATE. */
int nsr_asm_enc_xattr(struct nsr_asm_enc *e, const char *name,
		      const void *value, size_t len);
/* nsr_asm_enc_dirents - the complete list of the entry names of the
 * current file, a directory: names[0..n) sorted bytewise, each unique,
 * 1 to 255 bytes, without '/', not "." or ".." (walk.h gives them so).
 * At most once per directory, after its XATTRs (none may follow), split
 * into as many DIRENTS records as needed; n = 0 says it is empty.
 * NSR_ERR_INVAL (a bad or unsorted name), NSR_ERR_TOOBIG, NSR_ERR_STATE
 * (not a directory, or listed already). */
int nsr_asm_enc_dirents(struct nsr_asm_enc *e, const char *const *names,
			size_t n);
/* nsr_asm_enc_data - append file data (split into records as needed). */
int nsr_asm_enc_data(struct nsr_asm_enc *e, const void *p, size_t n);
/* nsr_asm_enc_hole - append len zero bytes as a HOLE record. */
int nsr_asm_enc_hole(struct nsr_asm_enc *e, uint64_t len);
/* nsr_asm_enc_file_end - finish the file with its checksum and status. */
int nsr_asm_enc_file_end(struct nsr_asm_enc *e, int status);
/* nsr_asm_enc_end - write the END record with totals; nothing may follow. */
int nsr_asm_enc_end(struct nsr_asm_enc *e);
/* nsr_asm_enc_offset - bytes written to the sink so far. */
uint64_t nsr_asm_enc_offset(const struct nsr_asm_enc *e);
/* nsr_asm_enc_totals - the totals so far (as END will record them). */
void nsr_asm_enc_totals(const struct nsr_asm_enc *e, struct nsr_asm_trailer *t);

/* ---- decoder ---------------------------------------------------------- */

/*
 * Decoder callbacks; any may be NULL.  Pointers passed are valid only during
 * the call.  A callback returning non-zero stops decoding: the value is
 * returned from nsr_asm_dec_feed and the decoder stays failed with it.
 * data() receives the data of the current file in pieces of any size.
 * xattr() receives each extended attribute of the current file, after
 * file() and before its data.
 */
struct nsr_asm_dec_ops {
	int (*header)(void *ctx, const struct nsr_asm_header *h);
	int (*file)(void *ctx, const struct nsr_asm_file *f, uint64_t offset);
	int (*data)(void *ctx, const void *p, size_t n);
	int (*hole)(void *ctx, uint64_t len);
	int (*file_end)(void *ctx, const struct nsr_asm_file_end *fe);
	int (*end)(void *ctx, const struct nsr_asm_trailer *t);
	int (*xattr)(void *ctx, const char *name, const void *value,
		     size_t len);
	/* With resync on: damage at stream offset (the record that failed,
	 * why = the error).  The current file, if any, is abandoned (no
	 * file_end follows for it); decoding resumes at the next intact
	 * FILE or END record. */
	int (*damaged)(void *ctx, uint64_t offset, int why);
	/* The entry list of the current file, a directory (recorded by
	 * level saves, so that deletions and renames are known): one call
	 * per name, in order, index 0 .. total-1 (the decoder checks the
	 * order, the count and each name); an empty list is one call with
	 * name NULL and index = total = 0.  A directory without DIRENTS
	 * records has no list (a full save, or one not entered). */
	int (*dirent)(void *ctx, const char *name, uint32_t index,
		      uint32_t total);
	/* SEALED records: the key of an id (asked once per id and
	 * decoder, the answer kept).  NULL: no keys; encrypted data is
	 * passed over, every such file ends with nokey. */
	nsr_asm_key_fn key;
};

struct nsr_asm_dec;

/* nsr_asm_dec_new - a decoder calling ops with ctx.  NSR_ERR_NOMEM. */
int nsr_asm_dec_new(struct nsr_asm_dec **out,
		    const struct nsr_asm_dec_ops *ops, void *ctx);
/* nsr_asm_dec_free - free (NULL is fine). */
void nsr_asm_dec_free(struct nsr_asm_dec *d);
/* nsr_asm_dec_feed - consume n bytes.  The file() callback gets the
 * whole path however long, and as offset that of the file's first record
 * (its first LONGSTR if it has any).  NSR_OK, NSR_ERR_CORRUPT (bad
 * structure), NSR_ERR_CHECKSUM (frame CRC), NSR_ERR_TOOBIG (record over its
 * bound), NSR_ERR_UNSUPPORTED (version), NSR_ERR_NOMEM, or a callback's
 * value.  Bytes after END are NSR_ERR_CORRUPT. */
int nsr_asm_dec_feed(struct nsr_asm_dec *d, const void *p, size_t n);
/* nsr_asm_dec_finish - NSR_OK if END was decoded, NSR_ERR_TRUNCATED if the
 * stream stopped early, NSR_ERR_CORRUPT if damage was skipped (resync),
 * or the sticky error. */
int nsr_asm_dec_finish(struct nsr_asm_dec *d);
/* nsr_asm_dec_resync - on = 1: damage (a bad frame, CRC, bound or
 * structure) no longer stops the decoder: it calls damaged(), skips to the
 * next intact FILE or END record and goes on, so a damaged stream still
 * yields every file that is intact.  Off by default. */
void nsr_asm_dec_resync(struct nsr_asm_dec *d, int on);
/* nsr_asm_dec_damaged - how many times damage was skipped. */
int nsr_asm_dec_damaged(const struct nsr_asm_dec *d);
/* nsr_asm_dec_offset - stream bytes consumed so far. */
uint64_t nsr_asm_dec_offset(const struct nsr_asm_dec *d);
/* nsr_asm_dec_pss - after the header: a PSS dependent's master ssid
 * and stream index (version 6 and 7 headers), else 0 and 0. */
void nsr_asm_dec_pss(const struct nsr_asm_dec *d, uint32_t *master,
		     uint32_t *index);
/* nsr_asm_dec_path - path of the file being decoded ("" between files),
 * for error messages. */
const char *nsr_asm_dec_path(const struct nsr_asm_dec *d);

/* nsr_asm_ftype_name - "file", "dir", "symlink", ... for a type. */
const char *nsr_asm_ftype_name(int type);

#endif /* NSR_ASM_H */
