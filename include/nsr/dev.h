/*
 * dev.h - storage devices behind one interface: adv_file (AFTD, a directory
 * on a disk file system), tape (Linux st/nst in variable-block mode) and
 * vtape (a file-backed tape with the same semantics, used by tests).
 *
 * A device is an opaque struct nsr_dev with an ops table per type.  Two
 * families of operations exist; a device supports one of them and returns
 * NSR_ERR_UNSUPPORTED for the other (see nsr_dev_info.sequential):
 *
 *  - sequential (tape, vtape): records that keep their boundaries,
 *    filemarks, end of data (EOD), early warning and end of medium (EOM),
 *    positioning by file and record.  Position numbering: file 0 starts at
 *    the beginning of the tape; each filemark ends a file; record numbers
 *    count from 0 within a file.
 *  - file (adv_file): numbered session files inside the device directory,
 *    each written by one session (so concurrent sessions never interleave)
 *    and read back at byte offsets.
 *
 * Both families have the label area (nsr_dev_label_put/_get): on tape the
 * first record of file 0 followed by a filemark, on AFTD the file `label`.
 *
 * Threads: a sequential device is used by one thread at a time.  On an AFTD
 * device, different struct nsr_dev_file handles may be used from different
 * threads concurrently (file creation is serialised inside).
 *
 * Errors: NSR_OK or a negative nsr_err code; no function logs.  EOM means
 * the record or bytes were NOT written.  The library never prints; see
 * nsr_dev_errmsg() for the reason of the last failure in words (with
 * several AFTD threads failing at once it may be another thread's).
 */
#ifndef NSR_DEV_H
#define NSR_DEV_H

#include <stddef.h>
#include <stdint.h>

struct nsr_buf;

struct nsr_dev;
struct nsr_dev_file;

enum nsr_dev_type {
	NSR_DEV_AFTD = 1, /* "adv_file" */
	NSR_DEV_TAPE = 2, /* "tape" (Linux st/nst) */
	NSR_DEV_VTAPE = 3 /* "vtape" (file-backed tape, see nsr_vtape(5)) */
};

/* Open options; a zeroed struct (or NULL) gives the defaults. */
struct nsr_dev_opts {
	int read_only;		      /* open for reading only */
	int create;		      /* vtape/AFTD: create if missing */
	/* vtape: medium size in bytes (0 = unlimited) and the early-warning
	 * zone before it; used when the file is created (create = 1), then
	 * kept in its header. */
	uint64_t vtape_capacity;
	uint64_t vtape_early_warning;
	/* vtape: the largest record, as a drive's READ BLOCK LIMITS would
	 * report it (0 = 64 MB); lets tests play a drive with small limits */
	uint32_t vtape_max_record;
	uint64_t aftd_quota; /* AFTD: full beyond this many bytes of session
				files (0: only when the file system is) */
};

struct nsr_dev_info {
	enum nsr_dev_type type;
	int sequential;	      /* 1: tape/vtape ops; 0: file ops (AFTD) */
	uint32_t max_record;  /* largest record the drive takes, 0 = unknown */
	uint32_t min_record;  /* smallest record, 0 = unknown */
	int early_warning;    /* EW passed (sequential) since the last rewind */
	int full;	      /* AFTD: ran out of space (volume is full) */
	uint64_t capacity;    /* vtape: medium size, 0 = unlimited/unknown */
};

/* A position on a sequential device (or file + block on AFTD). */
struct nsr_dev_pos {
	uint32_t file;	 /* tape file number (0 = label file) */
	uint64_t record; /* record number within that file */
};

/* nsr_dev_type_parse - "adv_file", "tape" or "vtape" to the enum. */
int nsr_dev_type_parse(const char *name, enum nsr_dev_type *out);
/* nsr_dev_type_name - the resource name of a type ("adv_file", ...). */
const char *nsr_dev_type_name(enum nsr_dev_type type);

/* nsr_dev_open - open the device at path (directory, /dev/nstN, vtape
 * file).  opts may be NULL.  On success *out owns the device (free with
 * nsr_dev_close).  A tape is put in variable-block mode (MTSETBLK 0).
 * On failure why (may be NULL) gets the reason in words: "tape drive is
 * busy: ...", "not a tape drive ...", "the tape in the drive is
 * write-protected ...", "no such tape device", ...
 * NSR_ERR_NOTFOUND, NSR_ERR_BUSY, NSR_ERR_READONLY, NSR_ERR_SYSTEM
 * (errno), NSR_ERR_CORRUPT (bad vtape header), NSR_ERR_NOMEM,
 * NSR_ERR_INVAL (not a tape drive, unknown type). */
int nsr_dev_open(enum nsr_dev_type type, const char *path,
		 const struct nsr_dev_opts *opts, struct nsr_dev **out,
		 struct nsr_buf *why);
/* nsr_dev_close - close and free (NULL is fine).  Writes nothing extra;
 * on Linux st a close after writing adds a filemark (the driver does). */
int nsr_dev_close(struct nsr_dev *dev);
/* nsr_dev_get_info - current facts about the device. */
void nsr_dev_get_info(struct nsr_dev *dev, struct nsr_dev_info *out);
/* nsr_dev_path - the path given to nsr_dev_open (owned by dev). */
const char *nsr_dev_path(const struct nsr_dev *dev);
/* nsr_dev_errmsg - words on the last failure on this device ("" if
 * none); valid until the next call on dev. */
const char *nsr_dev_errmsg(const struct nsr_dev *dev);

/* Label area (all types). */
/* nsr_dev_label_put - write the label record: tape: rewind, write one
 * record, one filemark (this logically erases the rest of the tape);
 * AFTD: durably replace the file `label`. */
int nsr_dev_label_put(struct nsr_dev *dev, const void *p, size_t len);
/* nsr_dev_label_get - read the label record into p (cap bytes); *got =
 * its length.  Tape: rewind, read record 0, and leave the tape positioned
 * at file 1 record 0.  NSR_ERR_EOD / NSR_ERR_NOTFOUND for a blank medium,
 * NSR_ERR_TOOBIG if the record is longer than cap. */
int nsr_dev_label_get(struct nsr_dev *dev, void *p, size_t cap, size_t *got);

/* Sequential operations (tape, vtape). */
/* nsr_dev_write - write one record of len bytes at the current position
 * (anything after it is lost, as on tape).  NSR_OK (check early_warning
 * in nsr_dev_get_info afterwards), NSR_ERR_EOM (not written: physical end
 * of medium), NSR_ERR_TOOBIG (len > max_record), NSR_ERR_IO. */
int nsr_dev_write(struct nsr_dev *dev, const void *p, size_t len);
/* nsr_dev_read - read the next record into p.  NSR_OK with *got = record
 * length; NSR_ERR_EOF when a filemark was read (now at the start of the
 * next file); NSR_ERR_EOD at end of data; NSR_ERR_TOOBIG if the record is
 * longer than cap (position after the record, *got = 0). */
int nsr_dev_read(struct nsr_dev *dev, void *p, size_t cap, size_t *got);
/* nsr_dev_weof - write n filemarks.  n == 0 writes none but flushes the
 * drive's buffer to the medium (tape: WRITE FILEMARKS 0; vtape:
 * fdatasync): after it returns NSR_OK every record written is durable. */
int nsr_dev_weof(struct nsr_dev *dev, unsigned n);
/* nsr_dev_rewind - go to file 0 record 0; clears early warning. */
int nsr_dev_rewind(struct nsr_dev *dev);
/* nsr_dev_fsf - forward past n filemarks (to the start of a later file).
 * NSR_ERR_EOD if data ends first. */
int nsr_dev_fsf(struct nsr_dev *dev, unsigned n);
/* nsr_dev_bsf - backward past n filemarks; ends on the beginning-of-tape
 * side of the last filemark crossed (the end of the earlier file).
 * NSR_ERR_EOD if the beginning of the tape comes first (then at BOT). */
int nsr_dev_bsf(struct nsr_dev *dev, unsigned n);
/* nsr_dev_fsr - forward over n records; NSR_ERR_EOF if a filemark stops
 * it (positioned after the filemark), NSR_ERR_EOD at end of data. */
int nsr_dev_fsr(struct nsr_dev *dev, unsigned n);
/* nsr_dev_peek - look at the record at the current position without
 * reading it or moving: its first min(cap, length) bytes into p (*got)
 * and its whole length (*reclen), so a reader can decide from a header
 * whether to read the record or space over it (nsr_dev_fsr).  NSR_OK;
 * NSR_ERR_EOF when a filemark is next, NSR_ERR_EOD at end of data (the
 * position is unchanged in both cases); NSR_ERR_UNSUPPORTED where only
 * reading the record shows it (tape). */
int nsr_dev_peek(struct nsr_dev *dev, void *p, size_t cap, size_t *got,
		 size_t *reclen);
/* nsr_dev_bsr - backward over n records; NSR_ERR_EOF if a filemark stops
 * it (the filemark is crossed: positioned before it, at the end of the
 * earlier file, as SCSI SPACE does), NSR_ERR_EOD at the beginning of the
 * tape. */
int nsr_dev_bsr(struct nsr_dev *dev, unsigned n);
/* nsr_dev_eod - go to end of data (where appending continues). */
int nsr_dev_eod(struct nsr_dev *dev);
/* nsr_dev_seek - go to pos (file, record): rewind/locate + FSF + FSR. */
int nsr_dev_seek(struct nsr_dev *dev, const struct nsr_dev_pos *pos);
/* nsr_dev_tell - the current position.  On tape NSR_ERR_STATE when the
 * driver does not know it (after BSF, or BSR over a filemark, st forgets
 * the record number until the next rewind or forward file space). */
int nsr_dev_tell(struct nsr_dev *dev, struct nsr_dev_pos *pos);
/* nsr_dev_offline - rewind and unload (vtape: rewind). */
int nsr_dev_offline(struct nsr_dev *dev);

/* File operations (adv_file).  Session files are numbered 1, 2, ... */
/* nsr_dev_file_create - a new empty session file with the next free
 * number (*fileno); *out is open for appending.  NSR_ERR_READONLY. */
int nsr_dev_file_create(struct nsr_dev *dev, uint32_t *fileno,
			struct nsr_dev_file **out);
/* nsr_dev_file_open - open session file fileno for reading.
 * NSR_ERR_NOTFOUND if it does not exist. */
int nsr_dev_file_open(struct nsr_dev *dev, uint32_t fileno,
		      struct nsr_dev_file **out);
/* nsr_dev_file_append - append len bytes.  On ENOSPC/EDQUOT the file is
 * cut back to its length before the call (nothing earlier is damaged),
 * the device is marked full and NSR_ERR_EOM is returned. */
int nsr_dev_file_append(struct nsr_dev_file *f, const void *p, size_t len);
/* nsr_dev_file_pread - read up to len bytes at off; *got is short only at
 * end of file.  Read through the page cache with the kernel's read-ahead
 * (POSIX_FADV_SEQUENTIAL; a read-ahead thread of our own was measured and
 * gave nothing but CPU, tests/bench/media/RESULTS.md), and what lies a
 * few megabytes behind the reads is dropped from it (dev_aftd.c invariant
 * 5). */
int nsr_dev_file_pread(struct nsr_dev_file *f, void *p, size_t len,
		       uint64_t off, size_t *got);
/* nsr_dev_file_sync - make everything appended so far durable (fdatasync
 * of the file; the first sync also syncs the directory entry). */
int nsr_dev_file_sync(struct nsr_dev_file *f);
/* nsr_dev_file_size - current length in bytes. */
uint64_t nsr_dev_file_size(const struct nsr_dev_file *f);
/* nsr_dev_file_close - close and free (NULL is fine); does not sync. */
int nsr_dev_file_close(struct nsr_dev_file *f);
/* nsr_dev_file_list - the session file numbers, ascending, in a malloc'ed
 * array *nums (caller frees; NULL when *n == 0). */
int nsr_dev_file_list(struct nsr_dev *dev, uint32_t **nums, size_t *n);
/* nsr_dev_file_remove - delete session file fileno. */
int nsr_dev_file_remove(struct nsr_dev *dev, uint32_t fileno);
/*
 * Crash-safe session files: nsr_dev_file_create makes the file under an
 * in-progress name (ss.NNNNNNNNNN.part, invisible to nsr_dev_file_list
 * and nsr_dev_file_open); once its data is durable (nsr_dev_file_sync)
 * nsr_dev_file_commit renames it to its final name and syncs the
 * directory.  nsr_dev_file_discard removes a file that will not be
 * committed (an aborted session) and frees f.  nsr_dev_file_sweep
 * removes every in-progress file left by sessions whose writer died:
 * call it where no session can be writing (a mover starting); *count and
 * *bytes get what was removed.  Sweeping a tape does nothing (NSR_OK).
 */
int nsr_dev_file_commit(struct nsr_dev_file *f);
int nsr_dev_file_discard(struct nsr_dev_file *f);
int nsr_dev_file_sweep(struct nsr_dev *dev, uint32_t *count,
		       uint64_t *bytes);

#endif /* NSR_DEV_H */
