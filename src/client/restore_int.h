/*
 * restore_int.h - internals of the client library: a small string ->
 * string map (restore: saved path -> restored target of hard-link
 * sources; treecmp: inode -> first path) and the restore engine's state,
 * shared by restore.c (decoder events, API) and restore_fs.c (placing,
 * creating, metadata).
 */
#ifndef NSR_RESTORE_INT_H
#define NSR_RESTORE_INT_H

#include <stddef.h>

struct rst_map_slot {
	char *key, *val;
};

struct rst_map {
	struct rst_map_slot *slots;
	size_t cap, used;
};

/* rst_map_init - an empty map. */
void rst_map_init(struct rst_map *m);
/* rst_map_release - free all keys, values and slots. */
void rst_map_release(struct rst_map *m);
/* rst_map_put - set key -> val (both copied).  NSR_OK, NSR_ERR_NOMEM. */
int rst_map_put(struct rst_map *m, const char *key, const char *val);
/* rst_map_get - the value for key or NULL. */
const char *rst_map_get(const struct rst_map *m, const char *key);


/* ---- the restore engine's state, shared by restore.c and restore_fs.c */

#include <stdint.h>
#include <sys/stat.h>

#include "nsr/asm.h"
#include "nsr/restore.h"

struct nsr_asm_dec;

/* Extended attributes of one object, applied with its metadata. */
struct xa {
	char *name;
	void *val;
	size_t len;
};

struct xa_list {
	struct xa *v;
	size_t n, cap;
};

/* A directory whose metadata is applied after its contents. */
struct pending_dir {
	char *path;   /* saved path */
	char *target; /* where it is on disk */
	struct nsr_asm_file meta; /* strings not kept */
	struct xa_list xa;
	int fresh;    /* made by this restore (mkdirat): empty but for
		       * what this restore puts there */
};

/* A directory descriptor shared by the parent cache and the files queued
 * for the writer workers; closed when the last holder lets go. */
struct rst_dirh {
	int fd;
	int refs; /* atomic (__atomic builtins) */
};
/* rst_dirh_get - one more holder. */
struct rst_dirh *rst_dirh_get(struct rst_dirh *h);
/* rst_dirh_put - one holder fewer (NULL is fine). */
void rst_dirh_put(struct rst_dirh *h);

struct rst_job;	 /* a small file for a writer worker (restore_work.c) */
struct rst_work; /* the workers */

/* The file being restored. */
struct cur_file {
	int active;   /* between FILE and FILE_END */
	int write;    /* data goes to fd */
	int failed;   /* a write failed; error already reported */
	int dir;      /* a directory: attributes go to its pending entry */
	int node;     /* symlink/fifo/device made: metadata at FILE_END */
	int fd;
	int dfd;      /* regular file: its directory (the cached parent
		       * descriptor, borrowed: never closed here) */
	int replace;  /* regular file: name exists and is replaced */
	int unclaimed; /* regular file in a fresh directory: the conflict
			* policy was not looked up (nothing can be there);
			* rst_place applies it if the name exists after all */
	int made_mode; /* regular file: created with its saved mode (no
			* fchmod needed unless attributes arrive) */
	int keep_times; /* put the directory's times back (ptimes) */
	struct timespec ptimes[2];
	struct nsr_asm_file meta; /* path points into .path */
	char *path;
	char *target;
	char *name;   /* node, regular file: its name in the directory */
	char *tmp;    /* regular file: the temporary name it is written
		       * under until it is whole (NULL once placed) */
	struct xa_list xa;
	uint64_t written;
	uint64_t data_end; /* end of the last data written (the file's
			    * size unless a hole follows it) */
	struct rst_job *job; /* regular file for a worker: its data is
			      * kept until FILE_END (nothing created) */
	struct split_file *split; /* a piece of this split file: data at
				   * part_off + written (restore_split.c) */
	uint64_t part_off;
	uint32_t part;
};

/* How a worker's file took its name: an unnamed file linked by its
 * descriptor (AT_EMPTY_PATH) or through /proc/self/fd, or a temporary
 * name renamed (no O_TMPFILE, or written again by name). */
enum rst_named { RST_NAMED_FD, RST_NAMED_PROC, RST_NAMED_TMP, RST_NAMED_N };

struct nsr_restore {
	char *dest;
	char **filters; /* sorted when exact */
	size_t nfilters;
	int exact;	/* filters name objects, not subtrees */
	int conflict;
	int no_owner;
	int owner_by_name;
	int keep_damaged;
	int dirs_last;	/* directory metadata only when finishing */
	int finishing;	/* nsr_restore_finish is under way */
	int is_root;
	unsigned tmp_seq; /* for temporary names */
	pid_t pid;	  /* ours, for temporary names */
	struct nsr_restore_cb cb;
	nsr_asm_key_fn key; /* keys of encrypted data, NULL = none */
	void *key_ctx;
	struct nsr_asm_dec *dec;
	int base_fd; /* dest, or "/" in place */
	int cwd_fd;  /* dest, or "." in place (relative saved paths) */
	int nofollow;
	/* cached parent directory of the last object */
	char *parent_rel;
	int parent_fd;		 /* parent_h->fd */
	struct rst_dirh *parent_h;
	/* what a file created in parent_fd gets without being told: */
	int64_t parent_gid;  /* its group (-1: unknown) */
	int parent_plain;    /* 1: no default ACL (the mode given to
			      * openat, less the umask, is its mode) */
	int umask;	     /* the process umask (-1: unknown) */
	uid_t euid;
	gid_t egid;
	struct cur_file cur;
	struct pending_dir *dirs;
	size_t ndirs, dirs_cap;
	struct rst_map links; /* saved path -> target, for hard links */
	struct nsr_restore_stats st;
	int err;
	int to_fd;  /* the pipe target: data to out_fd (restore_pipe.c) */
	int out_fd;
	int piped;  /* its one file was started */
	struct rst_work *work; /* writer workers; NULL: all written here */
	struct nsr_restore_split *split; /* split files in assembly */
	int own_split;	/* the registry is this restore's own */
	/* how the workers' files took their names (enum rst_named),
	 * counted as they are reaped */
	uint64_t named[RST_NAMED_N];
};

/* ---- writer workers (restore_work.c) ----
 * Invariants:
 *  1. Only the thread that feeds the restore calls callbacks, counts
 *     statistics or touches anything but a job it has taken from the
 *     queue: workers record problems in their job (rst_probs) and the
 *     feeding thread reports them when it reaps the job.
 *  2. A job is created by the feeding thread in the directory on top of
 *     the pending stack; every queued job is written and reaped before
 *     any directory's metadata is applied (rst_dirs_pop_to drains) and
 *     before a hard link or the end of the restore (on_file, finish):
 *     directories last, hard links after their targets; and before a
 *     record naming a path a queued job has (the stream's order decides
 *     which of the two the conflict policy sees as existing).
 *  3. A job holds a reference to its directory (rst_dirh), so the
 *     parent cache may move on while it waits.
 *  4. A job's file takes its name only after its data and metadata are
 *     written (temporary name and rename, as in the feeding thread); a
 *     job whose checksum did not match is never queued. */

/* RST_JOB_MAX - files up to this size go whole to a worker. */
#define RST_JOB_MAX (1024 * 1024)
/* rst_work_start - n writer workers (n >= 2).  NSR_OK, NSR_ERR_NOMEM,
 * NSR_ERR_SYSTEM (no thread). */
int rst_work_start(struct nsr_restore *r, int n);
/* rst_work_stop - wait for and reap every job, stop the workers. */
void rst_work_stop(struct nsr_restore *r);
/* rst_work_defer - the current regular file (in dir, named name, mode
 * the mode to create it with) becomes a job. */
int rst_work_defer(struct nsr_restore *r, struct rst_dirh *dir,
		   mode_t mode);
/* rst_work_data - append data to the current job. */
int rst_work_data(struct nsr_restore *r, const void *p, size_t n);
/* rst_work_hole - append a hole to the current job. */
int rst_work_hole(struct nsr_restore *r, uint64_t len);
/* rst_work_submit - queue the current job (whole, checksum good). */
int rst_work_submit(struct nsr_restore *r);
/* rst_work_materialize - write the current job here and now under its
 * temporary name (cur.fd, cur.tmp set; on failure reported, cur.failed
 * set), for a file that turned out damaged. */
void rst_work_materialize(struct nsr_restore *r);
/* rst_work_drop - forget the current job. */
void rst_work_drop(struct nsr_restore *r);
/* rst_work_reap - report finished jobs; with all, wait for every one. */
int rst_work_reap(struct nsr_restore *r, int all);
/* rst_work_named - is a job for saved path p in flight?  (A later record
 * of the same name waits for it: first come, first named.) */
int rst_work_named(const struct nsr_restore *r, const char *p);
/* rst_work_busy - are jobs queued or unreported? */
int rst_work_busy(const struct nsr_restore *r);
/* rst_cur_idle - a cur_file holding nothing (restore.c). */
void rst_cur_idle(struct cur_file *c);
/* rst_cur_release - close and free what c holds, then idle (its
 * directory descriptor is not its own). */
void rst_cur_release(struct cur_file *c);
/* rst_cur_reset - forget the current file (restore.c). */
void rst_cur_reset(struct nsr_restore *r);

/* rst_pipe_start - the pipe target's FILE: the first regular file. */
int rst_pipe_start(struct nsr_restore *r, const struct nsr_asm_file *f);
/* rst_pipe_write - data to the pipe target. */
int rst_pipe_write(struct nsr_restore *r, const void *p, size_t n);
/* rst_pipe_zeros - a hole to the pipe target, as zeros. */
int rst_pipe_zeros(struct nsr_restore *r, uint64_t len);
/* rst_pipe_end - the pipe target's FILE_END: checksum, counters. */
int rst_pipe_end(struct nsr_restore *r, const struct nsr_asm_file_end *fe);

/* ---- split files (restore_split.c) ----
 * Invariants:
 *  1. A split file in assembly is one entry of the registry, by saved
 *     path; its file (descriptor, temporary name, its own directory
 *     descriptor) belongs to the entry while parked, and to the cur of
 *     the one restore whose record of it is being decoded (entry.in)
 *     meanwhile: never to both.
 *  2. It takes its name only once its head and all its parts were
 *     written whole (every part's bit set, no part bad); anything else
 *     at the end removes its bytes and is reported once.
 *  3. A part already written is not written again (a second record of
 *     it is passed over). */
/* rst_split_start - the FILE record of a head or part (selected). */
int rst_split_start(struct nsr_restore *r, const struct nsr_asm_file *f);
/* rst_split_data - data of the current piece at its place. */
int rst_split_data(struct nsr_restore *r, const void *p, size_t n);
/* rst_split_file_end - the piece's FILE_END: its bit, or the file bad;
 * the file placed when it is whole. */
int rst_split_file_end(struct nsr_restore *r,
		       const struct nsr_asm_file_end *fe);
/* rst_split_abandon - the current piece was cut (damage, end of
 * stream): the file is damaged. */
int rst_split_abandon(struct nsr_restore *r);
/* rst_split_join - r shares registry sp.  NSR_OK, NSR_ERR_NOMEM. */
int rst_split_join(struct nsr_restore_split *sp, struct nsr_restore *r);
/* rst_split_leave - r, being freed, leaves sp. */
void rst_split_leave(struct nsr_restore_split *sp, struct nsr_restore *r);
/* rst_no_key - report a file encrypted under a key not given (restore.c). */
void rst_no_key(struct nsr_restore *r, const struct nsr_asm_file_end *fe);
/* rst_file_status - warn about data saved with a read error or changing
 * (restore.c). */
void rst_file_status(struct nsr_restore *r,
		     const struct nsr_asm_file_end *fe);

/* rst_error - report a per-file error (rc, with errno for NSR_ERR_SYSTEM). */
void rst_error(struct nsr_restore *r, const char *path, int rc,
	       const char *what);
/* rst_warn - report metadata that could not be applied. */
void rst_warn(struct nsr_restore *r, const char *path, int rc,
	      const char *what);
/* rst_xa_add - keep a copy of one extended attribute. */
int rst_xa_add(struct xa_list *l, const char *name, const void *val,
	       size_t len);
/* rst_xa_release - free all attributes of a list. */
void rst_xa_release(struct xa_list *l);
/* rst_path_ok - no empty, "." or ".." components, no trailing slash. */
int rst_path_ok(const char *p);
/* rst_cmp_str - qsort/bsearch order of C strings (char * elements). */
int rst_cmp_str(const void *a, const void *b);
/* rst_selected - does the filter select saved path p? */
int rst_selected(const struct nsr_restore *r, const char *p);
/* rst_rel_of - saved path p without its leading slashes. */
const char *rst_rel_of(const char *p);
/* rst_forget_parent - drop the cached parent directory. */
void rst_forget_parent(struct nsr_restore *r);
/* rst_map_owner - with owner_by_name, local ids for the saved names. */
void rst_map_owner(const struct nsr_restore *r, struct nsr_asm_file *f);
/* rst_meta_fd - owner, attributes, mode and times through a descriptor. */
void rst_meta_fd(struct nsr_restore *r, int fd, const struct nsr_asm_file *f,
		 const struct xa_list *xa, const char *path);
/* Problems met by code that must not report them at once (the writer
 * workers): a kind and its errno, reported later by rst_report. */
enum { RP_OWNER, RP_XATTR, RP_CHMOD, RP_UTIMENS, RP_CREATE, RP_WRITE,
       RP_TRUNCATE, RP_RENAME };
#define RST_MAXPROBS 8
struct rst_probs {
	int n;
	struct {
		int kind, err;
	} v[RST_MAXPROBS];
};
/* What the metadata of a new regular file needs to know. */
struct rst_newreg {
	const struct nsr_asm_file *f;
	const struct xa_list *xa;
	int no_owner;
	uid_t euid;
	int64_t gid;   /* the group it got at creation (-1: unknown) */
	int made_mode; /* created with its saved mode */
};
/* rst_prob - note a problem of kind k with the current errno. */
void rst_prob(struct rst_probs *p, int k);
/* rst_report - report recorded problems of the file at path. */
void rst_report(struct nsr_restore *r, const char *path,
		const struct rst_probs *p);
/* rst_reg_meta - a new regular file's metadata through fd, leaving out
 * what its creation already gave it (owner and group, mode); touches no
 * restore state (workers call it). */
void rst_reg_meta(int fd, const struct rst_newreg *n, struct rst_probs *p);
/* rst_meta_reg - rst_reg_meta of the current regular file, reported. */
void rst_meta_reg(struct nsr_restore *r);
/* rst_meta_at - the same for dfd/name, not following it. */
void rst_meta_at(struct nsr_restore *r, int dfd, const char *name,
		 const struct nsr_asm_file *f, const struct xa_list *xa,
		 const char *target, const char *path);
/* rst_dirs_would_pop - would rst_dirs_pop_to(path) apply a directory? */
int rst_dirs_would_pop(const struct nsr_restore *r, const char *path);
/* rst_dirs_pop_to - apply directories that cannot contain path (NULL:
 * all); the workers drained first (invariant 2). */
void rst_dirs_pop_to(struct nsr_restore *r, const char *path);
/* rst_done_object - count a restored object, note hard-link sources. */
int rst_done_object(struct nsr_restore *r, const struct nsr_asm_file *f,
		    const char *target);
/* rst_damaged - the current regular file's data is damaged (step names
 * how it showed, rc the code): drop it, or with keep_damaged give it the
 * name target.damaged, and report it once. */
void rst_damaged(struct nsr_restore *r, int rc, const char *step);
/* rst_place - the current regular file is whole: move it from its
 * temporary name to its own (replacing what is there with OVERWRITE).
 * On failure it is reported and dropped (cur.failed set). */
void rst_place(struct nsr_restore *r);
/* rst_drop_tmp - remove the current file's temporary name, if any. */
void rst_drop_tmp(struct nsr_restore *r);
/* rst_start_root - the record of the restore base itself. */
int rst_start_root(struct nsr_restore *r, const struct nsr_asm_file *f);
/* rst_start_object - create the object of a selected file record. */
int rst_start_object(struct nsr_restore *r, const struct nsr_asm_file *f);

#endif /* NSR_RESTORE_INT_H */
