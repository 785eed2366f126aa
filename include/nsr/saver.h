/*
 * saver.h - the save engine: walks paths and produces a save stream.
 *
 * Calling sequence:
 *  1. nsr_saver_new() with options (client, save set name, savetime, ...)
 *     and callbacks: write (the stream sink), index (one call per saved
 *     file with its stream offset), error (one call per file problem);
 *  2. nsr_saver_add_path() for each path to save (walks it), and/or
 *     nsr_saver_add_entry() for objects walked by the caller (parallel save
 *     streams distribute one walk over several savers);
 *  3. nsr_saver_finish() writes the stream end; nsr_saver_stats();
 *  4. nsr_saver_free().
 * The stream header is written by the first add (or by finish for an empty
 * save).  Per-file problems (unreadable file, vanished file) are reported
 * through error() and counted, and the save goes on; sink failures and
 * callback failures stop it and are returned (sticky).
 *
 * nsr_saver_add_path walks up to 64 objects ahead of what it saves, and
 * opens each small regular file among them (up to 1 MiB) and asks the
 * kernel to read it ahead, so the disk serves several files at once
 * (pss_int.h; the level filter is applied before, so an incremental
 * reads nothing ahead of what it leaves out).
 *
 * File data is read with the adaptive size of readsize.h.  Holes the file
 * system reports (SEEK_DATA, for files with fewer blocks than bytes) are
 * sent as HOLE records without being read, and so are runs of all-zero
 * data of at least 4 KB, so sparse files stay sparse after restore.
 * Extended attributes (which include POSIX ACLs and file capabilities)
 * are saved unless no_xattrs is set; one that cannot be
 * read is reported through error() and the file is saved without it.
 *
 * Objects are opened relative to their directory (walk.h), so paths
 * longer than PATH_MAX are saved, up to NSR_ASM_LONGPATH_MAX bytes; a
 * longer one is reported (ENAMETOOLONG, "path") and left out.  A regular
 * file whose size or modification time changed while it was read is
 * saved as it was read, marked changed in the stream, reported through
 * error() with err 0 and what "changed during save", and counted in
 * stats.changed.
 *
 * Test knobs (environment, read by nsr_saver_new): NSR_TEST_SAVE_EACCES=
 * NAME makes opening a regular file named NAME fail with EACCES (an
 * unreadable file, even for root); NSR_TEST_SAVE_TOUCH=NAME appends a byte
 * to a regular file named NAME right after it was read (a file that
 * changes while it is saved).
 *
 * A level save (since set: incremental or level 1-9, level.h) stores
 * only the objects changed at or after since (nsr_level_changed: their
 * modification or status change time), but every directory, with the
 * complete list of its entry names (DIRENTS, nsr_savestream(5)), so
 * that deletions and renames are known.  A directory whose status
 * changed but whose entries did not (renamed or moved: status change
 * time at or after since, modification time before) is saved with
 * everything below it, whose own times did not change: else they would
 * be in no save set under their new paths.  Every save gives every list
 * it read to the list callback (the client file index keeps them).
 */
#ifndef NSR_SAVER_H
#define NSR_SAVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "nsr/asm.h"
#include "nsr/readsize.h"
#include "nsr/walk.h"

struct nsr_saver_opts {
	const char *client; /* required */
	const char *name;   /* save set name; required */
	int64_t savetime;   /* 0 = now */
	uint64_t ssid;	    /* 0 when not known */
	int ck_alg;	    /* 0 = NSR_ASM_CK_CRC32C */
	bool cross_mounts;
	size_t read_size; /* 0 = adaptive (NSR_READ_SIZE honoured) */
	nsr_readsize_clock_fn clock; /* NULL = monotonic (tests fake it) */
	void *clock_ctx;
	bool no_xattrs; /* do not save extended attributes (incl. ACLs) */
	/* Level saves: the save time of the backup this one builds on
	 * (client clock); zero = save everything (full, manual). */
	struct timespec since;
	/* The caller filtered already (nsr_saver_skip, in walk order):
	 * save every object given; since only marks a level save. */
	bool prefiltered;
	/* Compress and/or encrypt file data (asm.h); NULL = neither. */
	const struct nsr_asm_xform *xform;
	/* A PSS dependent: its master's ssid and its stream index, in the
	 * stream header (so scanner -m can link them); 0 otherwise. */
	uint32_t pss_master;
	uint32_t pss_index;
	/* A PSS stream that may be given parts of split files
	 * (nsr_saver_add_part): its header says version 7. */
	bool split;
};

/* One piece of a regular file split over the streams of a save point
 * (asm.h, version 7): index 0 is its head (metadata and attributes, no
 * data), 1 .. nparts the data of [off, off + len) of total bytes. */
struct nsr_saver_part {
	uint32_t index, nparts;
	uint64_t off, len, total;
};

struct nsr_saver_cb {
	/* Required: stream bytes, in order.  Non-zero return aborts. */
	nsr_asm_write_fn write;
	void *write_ctx;
	/* Optional: one call per saved file, after its FILE record. */
	int (*index)(void *ctx, const struct nsr_asm_file *f, uint64_t offset);
	void *index_ctx;
	/* Optional: the complete entry list of each directory read (every
	 * save, full too), names[0..n) sorted bytewise, after the index
	 * call of the directory.  Non-zero return aborts. */
	int (*list)(void *ctx, const char *dir, const char *const *names,
		    size_t n);
	void *list_ctx;
	/* Optional: a per-file problem; err is an errno value, what the call
	 * that failed ("open", "read", "lstat", ...). */
	void (*error)(void *ctx, const char *path, int err, const char *what);
	void *error_ctx;
};

struct nsr_buf;

/* Distinct reasons counted for files not saved whole; the rest go to
 * the last entry, "other reasons". */
#define NSR_SAVER_REASONS 16

/* Files not saved whole for one reason (err: errno, or an NSR_ERR_*;
 * 0 in the last entry: other reasons). */
struct nsr_saver_reason {
	int err;
	uint64_t n;
};

struct nsr_saver_stats {
	uint64_t files;	       /* objects saved (FILE records) */
	uint64_t bytes;	       /* file data bytes */
	uint64_t errors;       /* per-file problems reported */
	uint64_t changed;      /* files that changed while they were read */
	uint64_t stream_bytes; /* bytes given to the sink */
	size_t last_read_size; /* read size in use at the end (a pipe's) */
	uint64_t unchanged;    /* level save: objects left out, unchanged */
	/* the errors by reason, in the order first met */
	struct nsr_saver_reason reasons[NSR_SAVER_REASONS + 1];
	unsigned nreasons;     /* entries used before the last */
};

/* nsr_saver_stats_add - add s's counters and reasons to t (the streams
 * of a save point); the read size is the largest. */
void nsr_saver_stats_add(struct nsr_saver_stats *t,
			 const struct nsr_saver_stats *s);
/* nsr_saver_reason_name - the words for a reason: the system's for an
 * errno or an NSR_ERR_*, "other reasons" for 0. */
const char *nsr_saver_reason_name(int err);
/* nsr_saver_reasons_text - "2 Permission denied, 1 File name too long"
 * (the system's words; "other reasons" last) appended to out. */
int nsr_saver_reasons_text(const struct nsr_saver_stats *st,
			   struct nsr_buf *out);
/* nsr_saver_problems_text - those that apply of "N file(s) not saved
 * whole: REASONS" and "N file(s) changed while being saved (saved as
 * read, marked changed)", each after sep, appended to out: the save's
 * summary lines and its job log's end line say the same. */
int nsr_saver_problems_text(const struct nsr_saver_stats *st,
			    const char *sep, struct nsr_buf *out);

struct nsr_saver;

/* nsr_saver_new - NSR_OK, NSR_ERR_INVAL (missing client/name/write, bad
 * ck_alg, bad NSR_READ_SIZE), NSR_ERR_NOMEM.  opts strings are copied. */
int nsr_saver_new(struct nsr_saver **out, const struct nsr_saver_opts *opts,
		  const struct nsr_saver_cb *cb);
/* nsr_saver_free - free (NULL is fine); does not write the stream end. */
void nsr_saver_free(struct nsr_saver *s);
/* nsr_saver_add_path - walk path and save everything under it. */
int nsr_saver_add_path(struct nsr_saver *s, const char *path);
/* nsr_saver_add_entry - save one walked object (error entries are
 * reported and counted).  A regular file with has_fd is read from fd
 * (which stays open) instead of being opened. */
int nsr_saver_add_entry(struct nsr_saver *s, const struct nsr_walk_ent *ent);
/* nsr_saver_add_part - save one piece of the walked regular file e,
 * split (opts.split must be set): the head is indexed with the file's
 * total size and counted as a file; a part is not indexed and adds its
 * bytes.  A file that changed from what the walk saw (its size or
 * modification time) while a part was read is saved as read and marked
 * changed, as a whole file is.  NSR_ERR_INVAL (bad part, no split). */
int nsr_saver_add_part(struct nsr_saver *s, const struct nsr_walk_ent *e,
		       const struct nsr_saver_part *p);
/* nsr_saver_open - open the regular file of a walked entry for reading
 * as the saver does (relative to its directory, not following a link,
 * without changing its atime where allowed, never hanging on a FIFO
 * put in its place): a descriptor, or -1 with errno.  For callers that
 * open ahead (has_fd in walk.h); the saver still checks the type. */
int nsr_saver_open(const struct nsr_walk_ent *e);
/* nsr_saver_skip - would a level save leave e out (unchanged)?  Only
 * the decision (counted in stats.unchanged), for a caller that hands
 * the objects kept to other savers (parallel save streams, pss.h): it
 * must give this saver every walked object, in walk order. */
int nsr_saver_skip(struct nsr_saver *s, const struct nsr_walk_ent *e,
		   bool *skip);
/* nsr_saver_add_generated - NetWorker's bigasm test directive: save size
 * bytes generated in memory (incompressible, every megabyte different)
 * as the regular file path, reading nothing from disk, to measure the
 * path client -> network -> mover -> device alone. */
int nsr_saver_add_generated(struct nsr_saver *s, const char *path,
			    uint64_t size);
/* nsr_saver_add_pipe - a pipeline save's source: everything read from
 * fd until end of file (a command's standard output, or save's own
 * standard input) saved as the regular file path, a file of unsized data
 * (nsr_savestream(5)), in reads of read_size bytes (NSR_SAVER_PIPE_MIN
 * to NSR_SAVER_PIPE_MAX; 0 = NSR_SAVER_PIPE_DEFAULT).  The index call
 * comes after the data, with the size then known.  fd is not closed.
 * NSR_ERR_INVAL (read_size out of range), NSR_ERR_IO (a read failed:
 * errno tells), or the sink's error; all of them sticky. */
#define NSR_SAVER_PIPE_DEFAULT ((size_t)64 * 1024)
#define NSR_SAVER_PIPE_MIN ((size_t)4 * 1024)
#define NSR_SAVER_PIPE_MAX ((size_t)8 * 1024 * 1024)
int nsr_saver_add_pipe(struct nsr_saver *s, const char *path, int fd,
		       size_t read_size);
/* nsr_saver_finish - write the END record.  NSR_OK or the sticky error. */
int nsr_saver_finish(struct nsr_saver *s);
/* nsr_saver_stats - counters so far. */
void nsr_saver_stats(const struct nsr_saver *s, struct nsr_saver_stats *st);

#endif /* NSR_SAVER_H */
