/*
 * restore.h - the restore engine: recreates files from a save stream.
 *
 * Calling sequence:
 *  1. nsr_restore_new() with options (destination, path filter, conflict
 *     policy) and callbacks;
 *  2. nsr_restore_feed() with the stream in pieces of any size, as they
 *     arrive (nsr_restore_sink has the sink signature of asm.h, so a saver
 *     can feed a restore directly);
 *  3. nsr_restore_finish() applies the remaining directory metadata and
 *     checks that the stream was complete; nsr_restore_stats();
 *  4. nsr_restore_free().
 *
 * Placement: with dest set, the saved path /a/b/c is created as
 * dest/a/b/c (relocation, `recover -d`), and no component below dest is
 * followed if it is a symlink (a hostile stream cannot write outside dest).
 * Without dest, files go back to the saved path.  Paths with "." or ".."
 * components or empty names are refused (reported, skipped).  Missing
 * parent directories are created (mode 0700 until their own record, if
 * any, sets the saved metadata).
 *
 * Metadata: owner and group (lchown, by number or with owner_by_name by
 * the saved names; as non-root a failure is a warning), then extended
 * attributes (ACLs, capabilities; refused ones are warnings), then mode,
 * then atime/mtime with nanoseconds (utimensat, AT_SYMLINK_NOFOLLOW for
 * symlinks).  Directory metadata is applied after their contents; an
 * existing directory that only receives new entries keeps its times.
 * Hard links are made to the restored first path; if that path was not
 * restored (filtered out, failed) the link is reported as an error.
 *
 * System calls per regular file (a restore is bound by them for small
 * files): create, write(s), futimens, rename into place, close.  Calls
 * that would change nothing are left out: no lookup of the name in a
 * directory this restore made (the conflict policy is applied at the
 * rename should the name exist after all), no chown when the new file
 * already has the saved owner and group, no chmod when it was created
 * with its saved mode (no set-ID bits, nothing the umask or a default
 * ACL narrows, no attributes), no truncate unless a hole ends it.
 *
 * Every file's data checksum is verified.  Per-file problems never stop
 * the restore.  Nor does damage to the stream itself: the damage is
 * reported with its stream offset, and the restore resumes at the next
 * intact file (nsr_asm_dec_resync), ending with NSR_ERR_CORRUPT from
 * nsr_restore_finish.  Only NSR_ERR_NOMEM, trailing bytes after the end
 * and truncation stop it for good.
 *
 * Writer workers (opts.workers): the stream is still decoded in the
 * caller's thread, which also makes directories, links and special
 * files and writes large files; a small regular file whose checksum
 * matched goes whole to a worker, which creates, writes, applies its
 * metadata and renames it into place.  Every queued file is finished
 * before a directory's metadata is applied (directories last, deepest
 * first), before a hard link is made (links after their targets),
 * before a record naming a path still queued (the stream's order
 * decides what the conflict policy sees) and before
 * nsr_restore_finish returns; callbacks and counters stay in the
 * caller's thread (a worker's problems are reported, naming the file,
 * by the next nsr_restore_feed or nsr_restore_finish).
 *
 * Split files (asm.h, version 7: a large file of a PSS save point saved
 * as a head and parts in several of its save sets): the first of its
 * records to arrive creates the file under a temporary name, as any
 * regular file, each part is written at its offset, and the file takes
 * its name with the head's metadata once the head and every part came,
 * each with a good checksum, in any order and from any of the restores
 * that share one struct nsr_restore_split (opts.split: the restores of
 * one recover, fed from one thread).  A part that failed makes the whole
 * file damaged (below).  A file waiting for its pieces holds no
 * descriptor but its directory's, which the files of one directory
 * share: each piece opens it again by its temporary name.  What is
 * still missing at nsr_restore_split_end (or, for a restore with a
 * registry of its own, at nsr_restore_finish) is reported, naming how
 * many parts came, and its bytes removed: a split file is never left
 * under its name in part.
 *
 * Damaged files: a regular file is written under a temporary name in its
 * directory (NSR_RESTORE_TMP_PREFIX) and renamed to its own name only
 * when it is whole and its checksum matches; with OVERWRITE that rename
 * is what replaces an existing file.  So a file whose data crossed
 * damage (its checksum does not match, or the stream was damaged or cut
 * short inside it) never takes its own name nor replaces anything.  It
 * is removed, or with keep_damaged renamed to name.damaged
 * (name.damaged1, ... if that exists), and
 * reported once through error() (rc NSR_ERR_CHECKSUM or
 * NSR_ERR_TRUNCATED, what "checksum: damaged, not recovered" or
 * "incomplete: damaged, kept as TARGET.damaged"); stats.damaged counts
 * them, and they are not counted as restored.
 */
#ifndef NSR_RESTORE_H
#define NSR_RESTORE_H

#include <stddef.h>
#include <stdint.h>

#include "nsr/asm.h"

/* What to do when the target path already exists (directories are always
 * merged: an existing directory just gets the saved metadata). */
enum nsr_restore_conflict {
	NSR_RESTORE_SKIP = 0,	   /* keep the existing object (default) */
	NSR_RESTORE_OVERWRITE = 1, /* replace it */
	NSR_RESTORE_RENAME = 2,	   /* restore as path.R (path.R1, ...) */
};

/* What a kept damaged file's name gets appended (keep_damaged). */
#define NSR_RESTORE_DAMAGED_SUFFIX ".damaged"
/* A regular file is written as .nsr-restore.PID.N in its directory and
 * renamed to its name once whole (replacing an existing file only then,
 * with OVERWRITE); a restore that dies leaves such names behind. */
#define NSR_RESTORE_TMP_PREFIX ".nsr-restore."

struct nsr_restore_opts {
	const char *dest;	    /* relocation directory; NULL = in place */
	const char *const *paths;   /* filter: these paths and below; */
	size_t npaths;		    /*   0 = everything */
	int exact;		    /* 1 = these paths only, not what is
				     *     below them (any number: sorted
				     *     and searched) */
	int conflict;		    /* enum nsr_restore_conflict */
	int no_owner;		    /* 1 = never lchown */
	int owner_by_name;	    /* 1 = owner and group by the saved user
				     *     and group names where they exist
				     *     here, else by number */
	int keep_damaged;	    /* 1 = keep a damaged file's bytes as
				     *     name.damaged (default: remove) */
	int to_fd;		    /* 1 = the pipe target: the data of the
				     *     one regular file selected goes to
				     *     out_fd (recover --pipe), nothing
				     *     is created; a second file is an
				     *     error, other objects are passed
				     *     over, a checksum mismatch is an
				     *     error after the bytes went out */
	int out_fd;
	/* The keys of encrypted save sets (asm.h): asked once per key id;
	 * NULL = none.  A file whose key is not given is not written and
	 * is reported ("cannot decrypt: key ID unknown ..."). */
	nsr_asm_key_fn key;
	void *key_ctx;
	int dirs_last;		    /* 1 = directory metadata only in
				     *     nsr_restore_finish, not as the
				     *     stream leaves a directory: for
				     *     several restores filling one tree
				     *     at once (recover's one pass over
				     *     interleaved save sets), each
				     *     finished after all were flushed */
	/* Split files in assembly, shared with the other restores of one
	 * recover (nsr_restore_split_new); NULL: a registry of this
	 * restore's own, ended by nsr_restore_finish. */
	struct nsr_restore_split *split;
	int workers;		    /* >= 2: small files (up to 1 MiB) in
				     *     directories being restored are
				     *     written by this many threads
				     *     (see below); 0 or 1: all by the
				     *     caller's thread */
};

/*
 * Callbacks, all optional.  path is the saved path, target the path written
 * (after relocation/rename).  rc is an nsr_err code; when it is
 * NSR_ERR_SYSTEM, sys_errno holds the errno.  what names the step
 * ("create", "write", "checksum", "lchown", "hardlink", ...).
 */
struct nsr_restore_cb {
	void (*restored)(void *ctx, const struct nsr_asm_file *f,
			 const char *target);
	void (*skipped)(void *ctx, const char *path, const char *target);
	void (*error)(void *ctx, const char *path, int rc, int sys_errno,
		      const char *what);
	void (*warn)(void *ctx, const char *path, int rc, int sys_errno,
		     const char *what);
	void (*header)(void *ctx, const struct nsr_asm_header *h);
	void *ctx;
};

struct nsr_restore_stats {
	uint64_t files;	    /* objects restored */
	uint64_t bytes;	    /* data bytes written */
	uint64_t skipped;   /* existing objects kept (SKIP policy) */
	uint64_t filtered;  /* objects not matching the filter */
	uint64_t errors;    /* per-file errors reported */
	uint64_t ck_errors; /* of which checksum mismatches */
	uint64_t damaged;   /* damaged files removed or kept as .damaged */
	uint64_t warnings;  /* metadata not applied (e.g. owner as non-root) */
};

struct nsr_restore;

/* nsr_restore_new - NSR_OK, NSR_ERR_INVAL (bad policy), NSR_ERR_NOMEM,
 * NSR_ERR_SYSTEM (dest cannot be opened).  Options are copied. */
int nsr_restore_new(struct nsr_restore **out,
		    const struct nsr_restore_opts *opts,
		    const struct nsr_restore_cb *cb);
/* nsr_restore_free - free (NULL is fine); closes any open output file. */
void nsr_restore_free(struct nsr_restore *r);
/* nsr_restore_feed - consume n stream bytes.  NSR_OK or a stream error
 * (see nsr_asm_dec_feed); per-file problems go to the callbacks. */
int nsr_restore_feed(struct nsr_restore *r, const void *p, size_t n);
/* nsr_restore_sink - nsr_restore_feed with the nsr_asm_write_fn shape. */
int nsr_restore_sink(void *restore, const void *p, size_t n);
/* nsr_restore_finish - apply pending directory metadata; NSR_OK if the
 * stream was complete and intact, NSR_ERR_TRUNCATED if it stopped early,
 * NSR_ERR_CORRUPT if damage was skipped, or the sticky error. */
int nsr_restore_finish(struct nsr_restore *r);
/* nsr_restore_flush - wait until every file queued to the writer
 * workers is in place (their problems are reported by the next call).
 * NSR_OK or the sticky error. */
int nsr_restore_flush(struct nsr_restore *r);
/* nsr_restore_stats - counters so far. */
void nsr_restore_stats(const struct nsr_restore *r,
		       struct nsr_restore_stats *st);
/* nsr_restore_add_paths - more exact paths (opts.exact) to restore,
 * before the records that name them arrive.  NSR_OK, NSR_ERR_INVAL (not
 * exact), NSR_ERR_NOMEM. */
int nsr_restore_add_paths(struct nsr_restore *r, const char *const *paths,
			  size_t n);

struct nsr_restore_split;

/* nsr_restore_split_new - an empty registry of split files in assembly
 * for the restores of one recover.  NSR_OK, NSR_ERR_NOMEM. */
int nsr_restore_split_new(struct nsr_restore_split **out);
/* nsr_restore_split_end - every split file not whole yet is reported as
 * an error by the restore that started it (which must not be freed yet)
 * and its bytes removed; the number of such files. */
size_t nsr_restore_split_end(struct nsr_restore_split *sp);
/* nsr_restore_split_free - free the registry (NULL is fine), removing
 * the bytes of files left in it without a report. */
void nsr_restore_split_free(struct nsr_restore_split *sp);

#endif /* NSR_RESTORE_H */
