/*
 * vol.h - volumes: labeling, the volume writer (save-set sessions,
 * multiplexed block by block on tape, one file per session on AFTD, spanning
 * at end of medium) and the volume reader (positioned read of one save set,
 * and a scan mode for `scanner`).  The on-volume format is in
 * nsr_volume(5) and include/nsr/media_fmt.h.
 *
 * Calling sequence for a backup (nsrmmd):
 *   1. nsr_dev_open(); nsr_vol_writer_open(dev, opts, &w, why) checks
 *      the label and positions for appending;
 *   2. per save set: nsr_vol_session_begin(w, &hdr, &sb, &s);
 *      nsr_vol_session_write(s, p, n) as often as needed;
 *      nsr_vol_session_end(s, &tail, &frag) -> frag says where it lies;
 *      report frag to the media database only after _end returned NSR_OK
 *      (the data is durable then);
 *   3. nsr_vol_writer_close(w); nsr_dev_close(dev).
 * Spanning: when _write returns NSR_ERR_EOM the volume is full for every
 * session of this writer.  Call nsr_vol_session_eom(s, &frag, &carry):
 * frag describes the part that is on this volume (frag.size bytes) and
 * carry receives the bytes that were accepted but did not get onto it
 * (frag.size + carry.len == all bytes given to _write).  Begin the next
 * fragment on the next volume with frag_seq + 1 and ss_offset + frag.size,
 * write carry first, then go on.
 *
 * Threads: a writer and its sessions may be used from several threads
 * (one thread per session); calls are serialised where they share a block
 * (tape), and run in parallel on adv_file.  A reader is used by one
 * thread.  On tape, sessions that are multiplexed share the fate of their
 * blocks: end of medium hits all of them at once.
 *
 * Errors: NSR_OK or a negative nsr_err code.  Nothing here prints; every
 * object keeps the last failure in words (..._errmsg) and the label
 * functions append it to an optional struct nsr_buf *why.
 */
#ifndef NSR_VOL_H
#define NSR_VOL_H

#include <stddef.h>
#include <stdint.h>

struct nsr_buf;
struct nsr_dev;
struct nsr_vol_writer;
struct nsr_vol_session;
struct nsr_vol_reader;

#define NSR_VOL_LABEL_SIZE 32768u	  /* the fixed label record */
#define NSR_VOL_BLOCK_MIN 32768u	  /* smallest block size */
#define NSR_VOL_BLOCK_MAX (8u << 20)	  /* largest block size */
#define NSR_VOL_BLOCK_ALIGN 32768u	  /* block sizes are multiples */
#define NSR_VOL_BLOCK_DEFAULT (256u << 10) /* usual for LTO */

#define NSR_VOL_NAME_MAX 63	/* volume name bytes (NUL not counted) */
#define NSR_VOL_POOL_MAX 63	/* pool name */
#define NSR_VOL_MEDIA_MAX 31	/* media type ("LTO-8", "adv_file") */
#define NSR_VOL_CLIENT_MAX 255	/* client host name */
#define NSR_VOL_SSNAME_MAX 1023 /* save set name (a path) */
#define NSR_VOL_LEVEL_MAX 15	/* "full", "incr", "1".."9", ... */

struct nsr_vol_label {
	uint32_t version; /* format version (filled in by the codec) */
	char name[NSR_VOL_NAME_MAX + 1];
	uint8_t volid[16]; /* UUID */
	char pool[NSR_VOL_POOL_MAX + 1];
	uint32_t block_size;
	int64_t created; /* seconds since the epoch, UTC */
	char media_type[NSR_VOL_MEDIA_MAX + 1];
};

/* The save-set header, carried by each fragment's "begin" chunk. */
struct nsr_vol_sshdr {
	uint32_t ssid;
	uint8_t longid[16];
	char client[NSR_VOL_CLIENT_MAX + 1];
	char name[NSR_VOL_SSNAME_MAX + 1];
	char level[NSR_VOL_LEVEL_MAX + 1];
	char pool[NSR_VOL_POOL_MAX + 1];
	int64_t savetime;
	int64_t browse_time;
	int64_t retention_time;
};

/* Where a fragment begins inside its save set. */
struct nsr_vol_span {
	uint32_t frag_seq;  /* 0 for the first volume, then 1, 2, ... */
	uint64_t ss_offset; /* save-set byte offset of this fragment */
};

/* The save-set trailer, carried by the "end" chunk. */
enum nsr_vol_ss_status {
	NSR_VOL_SS_OK = 0,	 /* complete */
	NSR_VOL_SS_ABORTED = 1, /* the client or the server aborted it */
	NSR_VOL_SS_SUSPECT = 2	/* complete, but the client had read errors */
};
struct nsr_vol_sstail {
	uint64_t bytes; /* save-set total (all fragments) */
	uint64_t files;
	uint32_t status; /* enum nsr_vol_ss_status */
};

/* Where one fragment of a save set lies on one volume. */
struct nsr_vol_frag {
	uint8_t volid[16];
	uint32_t ssid;
	uint32_t frag_seq;  /* as given to _begin */
	uint64_t ss_offset; /* save-set offset of the first byte */
	uint32_t file;	    /* tape file / AFTD session file number */
	uint64_t record;    /* first block: tape record in file / AFTD block */
	uint64_t offset;    /* AFTD: byte offset (record * block size) */
	uint64_t size;	    /* save-set data bytes in this fragment */
	int complete;	    /* the end chunk is on this volume */
};

/* Labeling. */
/* nsr_vol_label_init - fill lab with a new volume id (libuuid), the
 * current time and the given names; checks lengths and the block size. */
int nsr_vol_label_init(struct nsr_vol_label *lab, const char *name,
		       const char *pool, uint32_t block_size,
		       const char *media_type, struct nsr_buf *why);
/* nsr_vol_block_size_check - NSR_OK if bs is 32 KB .. 8 MB in steps of
 * 32 KB and fits dev_max (0 = unknown); else NSR_ERR_INVAL/NSR_ERR_TOOBIG
 * with the sizes in why. */
int nsr_vol_block_size_check(uint32_t bs, uint32_t dev_max,
			     struct nsr_buf *why);
/* nsr_vol_label_write - label the medium in dev.  If the medium already
 * holds a label and data, NSR_ERR_EXISTS unless force (the caller has
 * checked retention).  Relabeling starts an empty volume; on an AFTD
 * crash-safely (an intent record, see nsr_vol_label_resume). */
int nsr_vol_label_write(struct nsr_dev *dev, const struct nsr_vol_label *lab,
			int force, struct nsr_buf *why);
/* nsr_vol_label_resume - AFTD: if dev holds the intent record of a
 * relabel a crash cut short (nsr_vol_label_write writes it first), finish
 * the relabel (*finished = 1); NSR_OK with *finished = 0 when there was
 * none.  Call before sessions start. */
int nsr_vol_label_resume(struct nsr_dev *dev, int *finished,
			 struct nsr_buf *why);
/* nsr_vol_label_read - read and verify the label (checksum, version,
 * block size).  NSR_ERR_EOD/NSR_ERR_NOTFOUND: unlabeled;
 * NSR_ERR_CORRUPT/NSR_ERR_CHECKSUM: unreadable; why names the device. */
int nsr_vol_label_read(struct nsr_dev *dev, struct nsr_vol_label *out,
		       struct nsr_buf *why);
/* nsr_vol_has_data - *yes = 1 if the labeled volume holds any save set
 * data (tape: a record after the label file; AFTD: a session file). */
int nsr_vol_has_data(struct nsr_dev *dev, int *yes);

/* Writer. */
struct nsr_vol_wopts {
	const uint8_t *expect_volid; /* NULL or: refuse another volume */
	uint64_t segment_size;	     /* tape: a filemark every N bytes
					(0 = only at close) */
	int no_sync;		     /* tests/bench: skip fsync on AFTD */
};
/* nsr_vol_writer_open - read the label (verify expect_volid), position
 * for appending.  *out owns nothing of dev (dev must outlive it).
 * NSR_ERR_MISMATCH (other volume / block size the drive cannot take);
 * why (may be NULL) gets the reason in words. */
int nsr_vol_writer_open(struct nsr_dev *dev, const struct nsr_vol_wopts *o,
			struct nsr_vol_writer **out, struct nsr_buf *why);
/* nsr_vol_writer_label - the volume's label (owned by w). */
const struct nsr_vol_label *nsr_vol_writer_label(
	const struct nsr_vol_writer *w);
/* nsr_vol_writer_flush - write the partly filled multiplex block (tape)
 * now.  Sessions call it implicitly at _end. */
int nsr_vol_writer_flush(struct nsr_vol_writer *w);
/* nsr_vol_writer_close - flush, write the closing filemark (tape), free.
 * Open sessions must have ended first (NSR_ERR_BUSY otherwise; w is
 * still freed). */
int nsr_vol_writer_close(struct nsr_vol_writer *w);
/* nsr_vol_writer_errmsg - words on the last failure. */
const char *nsr_vol_writer_errmsg(struct nsr_vol_writer *w);

/* nsr_vol_session_begin - start a fragment of save set hdr->ssid.  sp may
 * be NULL (frag 0 at offset 0).  Writes the begin chunk. */
int nsr_vol_session_begin(struct nsr_vol_writer *w,
			  const struct nsr_vol_sshdr *hdr,
			  const struct nsr_vol_span *sp,
			  struct nsr_vol_session **out);
/* nsr_vol_session_write - append save-set data (any size).  NSR_OK or
 * NSR_ERR_EOM (volume full: use nsr_vol_session_eom) or another error. */
int nsr_vol_session_write(struct nsr_vol_session *s, const void *p,
			  size_t len);
/* nsr_vol_session_end - write the end chunk, make it durable (flush the
 * block on tape, fsync on AFTD) and free s.  *frag (may be NULL) gets the
 * fragment.  If it returns NSR_ERR_EOM, s is NOT freed: call _eom. */
int nsr_vol_session_end(struct nsr_vol_session *s,
			const struct nsr_vol_sstail *tail,
			struct nsr_vol_frag *frag);
/* nsr_vol_session_eom - after NSR_ERR_EOM: fill *frag with the part on
 * this volume (synced first), append the unwritten rest to carry, free s.
 * frag->size == 0 means nothing of this fragment reached the volume (not
 * even its begin chunk): record no fragment for this volume. */
int nsr_vol_session_eom(struct nsr_vol_session *s, struct nsr_vol_frag *frag,
			struct nsr_buf *carry);
/* nsr_vol_session_bytes - progress: *on_volume = data bytes in blocks
 * already written to the device (not yet synced), *buffered = accepted
 * bytes still in a block buffer.  Either pointer may be NULL. */
void nsr_vol_session_bytes(struct nsr_vol_session *s, uint64_t *on_volume,
			   uint64_t *buffered);
/* nsr_vol_session_abort - stop without an end chunk (the reader reports
 * the save set as incomplete); frees s. */
void nsr_vol_session_abort(struct nsr_vol_session *s);

/* Reader. */
/* nsr_vol_data_fn - receives save-set bytes in order.  Return 0 to go
 * on; a negative nsr_err code stops the read, which returns that code
 * (a positive value stops it with NSR_ERR_INVAL). */
typedef int (*nsr_vol_data_fn)(void *arg, const void *p, size_t len);

/* What a scan or a damaged read reports. */
struct nsr_vol_loc {
	uint32_t file;
	uint64_t record; /* block number in the file */
};
struct nsr_vol_scan_ops {
	/* a begin chunk: a fragment of hdr->ssid starts at loc */
	int (*begin)(void *arg, const struct nsr_vol_sshdr *hdr,
		     const struct nsr_vol_span *sp,
		     const struct nsr_vol_loc *loc);
	/* a data chunk (may be NULL to skip) */
	int (*data)(void *arg, uint32_t ssid, const void *p, size_t len);
	/* an end chunk; bytes_here = data bytes of this fragment */
	int (*end)(void *arg, uint32_t ssid, const struct nsr_vol_sstail *t,
		   uint64_t bytes_here, const struct nsr_vol_loc *loc);
	/* damage: rc (NSR_ERR_CHECKSUM, _CORRUPT, _MISMATCH, _TRUNCATED);
	 * ssid 0 = not known which save set (a bad block; the save sets
	 * hit are then reported one by one as they are found); msg says
	 * what and where. */
	void (*damage)(void *arg, uint32_t ssid, int rc,
		       const struct nsr_vol_loc *loc, const char *msg);
	/* a fragment that has no end chunk on this volume (spans on, or the
	 * session was aborted) */
	void (*unfinished)(void *arg, uint32_t ssid, uint64_t bytes_here);
};

/* nsr_vol_reader_open - read and verify the label (and expect_volid if
 * not NULL).  dev must outlive the reader.  why (may be NULL) gets the
 * reason for a failure in words. */
int nsr_vol_reader_open(struct nsr_dev *dev, const uint8_t *expect_volid,
			struct nsr_vol_reader **out, struct nsr_buf *why);
/* nsr_vol_reader_label - the label read at open (owned by r). */
const struct nsr_vol_label *nsr_vol_reader_label(
	const struct nsr_vol_reader *r);
/* nsr_vol_reader_read - position to frag (file/record on tape, file and
 * offset on AFTD) and deliver that fragment's data, demultiplexed, to fn;
 * blocks of other save sets are passed over unread where the format and
 * the device allow (nsr_vol_reader_stats says how many).
 * *bytes (may be NULL) gets the count delivered.  NSR_OK: the end chunk
 * was reached; NSR_ERR_EOM: the volume ends before it (continue with the
 * next fragment); NSR_ERR_CHECKSUM/_CORRUPT: data of this save set was
 * damaged (reported to ops->damage if ops is not NULL; reading goes on). */
int nsr_vol_reader_read(struct nsr_vol_reader *r,
			const struct nsr_vol_frag *frag, nsr_vol_data_fn fn,
			void *arg, const struct nsr_vol_scan_ops *ops,
			void *ops_arg, uint64_t *bytes);
/* nsr_vol_reader_read_sets - one pass for several save sets: frags (n,
 * at most NSR_VOL_SETS_MAX, each a different save set or fragment on
 * this volume) are read in one walk from the first one's place, each
 * save set's data, in order, to ops->data with its ssid.  Between
 * fragments the reader positions forward (tape: seek; AFTD: the next
 * session file) rather than read what no wanted save set holds, and a
 * block whose header names an unwanted save set is passed as in
 * nsr_vol_reader_read.  Each fragment ends once, through ops->end (its
 * end chunk: *t and the bytes delivered) or ops->unfinished (the volume
 * holds no more of it: it continues elsewhere, or was cut short).  Damage
 * is reported per save set to ops->damage: a gap in its chunks or a lost
 * end after damaged blocks (rc NSR_ERR_CHECKSUM/_CORRUPT), a fragment
 * whose begin is not where it says (NSR_ERR_NOTFOUND, then
 * unfinished); damaged blocks of other save sets are not reported.
 * ops->begin may be NULL.  A non-zero return of a callback stops the
 * read.  NSR_OK, or an I/O error (words in nsr_vol_reader_errmsg) that
 * ended the pass: the fragments not ended then are not reported. */
#define NSR_VOL_SETS_MAX 128
int nsr_vol_reader_read_sets(struct nsr_vol_reader *r,
			     const struct nsr_vol_frag *frags, size_t n,
			     const struct nsr_vol_scan_ops *ops, void *arg);
/* nsr_vol_reader_frag - the fragment a scan's begin callback describes
 * (volume id, ssid, span, file/record and, on AFTD, byte offset), ready
 * for nsr_vol_reader_read; size and complete come from the end callback
 * (bytes_here) and are left 0 here. */
void nsr_vol_reader_frag(const struct nsr_vol_reader *r,
			 const struct nsr_vol_sshdr *hdr,
			 const struct nsr_vol_span *sp,
			 const struct nsr_vol_loc *loc,
			 struct nsr_vol_frag *out);
/* nsr_vol_reader_scan - read the whole volume and report every chunk
 * through ops (NULL members are skipped).  NSR_OK if no damage was seen,
 * else the first damage code (the scan still covers the rest). */
int nsr_vol_reader_scan(struct nsr_vol_reader *r,
			const struct nsr_vol_scan_ops *ops, void *arg);
/* nsr_vol_reader_damaged_blocks - how many damaged blocks the last
 * nsr_vol_reader_scan met (each once, whatever it cost how many save
 * sets) or the last nsr_vol_reader_read found to hold data of its save
 * set (damaged blocks of other save sets multiplexed with it are not
 * counted, nor reported to its ops->damage).  A read reports the damaged
 * blocks of one stretch once, naming the first. */
uint64_t nsr_vol_reader_damaged_blocks(const struct nsr_vol_reader *r);
/* What the last scan or read cost, in blocks of the label's size. */
struct nsr_vol_rstats {
	uint64_t blocks_read;	 /* transferred from the device */
	uint64_t blocks_skipped; /* of those: another save set's, chunks
				    not looked at (format version 2) */
	uint64_t blocks_passed;	 /* another save set's, spaced over by
				    their header without reading (vtape) */
	uint64_t positions;	 /* seeks (tape) or session files opened
				    (AFTD) */
};
/* nsr_vol_reader_stats - *out = the counts of the last scan or read. */
void nsr_vol_reader_stats(const struct nsr_vol_reader *r,
			  struct nsr_vol_rstats *out);
/* nsr_vol_reader_close - free (NULL is fine). */
void nsr_vol_reader_close(struct nsr_vol_reader *r);
/* nsr_vol_reader_errmsg - words on the last failure. */
const char *nsr_vol_reader_errmsg(const struct nsr_vol_reader *r);

/* Giving an AFTD's space back (vol_remove.c). */
#define NSR_VOL_REMOVE_MAX 1024 /* save sets in one removal */
struct nsr_vol_removed {
	uint32_t files; /* session files removed */
	uint64_t bytes; /* their size on disk */
};
/* nsr_vol_remove_ss - remove the session files of save sets ssids[0..n)
 * from the AFTD in dev (opened for writing; the ssid of each file is read
 * from its begin chunk).  where (may be NULL) says where the media
 * database has each: where[i] the session file of a fragment of ssids[i]
 * (0: not known; a save set with several files here is given once per
 * file).  A named file whose begin chunk is its save set's is removed, a
 * named file that is gone counts as removed, and only the other save
 * sets are looked for in every session file (a block read per file).
 * Crash-safe: an intent record is made durable first and removed last,
 * and nsr_vol_remove_resume finishes what a crash interrupted.  Files of
 * other save sets, and in-progress ones, are not touched; a save set with
 * no file here is no error.  NSR_OK, NSR_ERR_UNSUPPORTED (tape),
 * NSR_ERR_LIMIT (n over NSR_VOL_REMOVE_MAX), or a device error with
 * why. */
int nsr_vol_remove_ss(struct nsr_dev *dev, const uint32_t *ssids,
		      const uint32_t *where, size_t n,
		      struct nsr_vol_removed *out, struct nsr_buf *why);
/* nsr_vol_remove_intent_format - the intent record of a removal, appended
 * to out: a line per save set, "SSID\n", or "SSID FILE\n" when where
 * (may be NULL) names its file.  NSR_OK or NSR_ERR_NOMEM. */
int nsr_vol_remove_intent_format(const uint32_t *ssids, const uint32_t *where,
				 size_t n, struct nsr_buf *out);
/* nsr_vol_remove_intent_parse - read such a record of len bytes (not
 * NUL-terminated) into ssids and where (0 where a line names no file),
 * at most max lines; the count read.  Reading stops at the first line
 * that is not "SSID\n" or "SSID FILE\n" with decimal numbers from 1 to
 * 4294967295. */
size_t nsr_vol_remove_intent_parse(const char *text, size_t len,
				   uint32_t *ssids, uint32_t *where,
				   size_t max);
/* nsr_vol_remove_resume - if dev holds the intent record of an
 * interrupted removal, finish it (*out says what was removed now);
 * NSR_OK when there was none.  Call before sessions start. */
int nsr_vol_remove_resume(struct nsr_dev *dev, struct nsr_vol_removed *out,
			  struct nsr_buf *why);

#endif /* NSR_VOL_H */
