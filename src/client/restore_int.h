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
};

struct nsr_restore {
	char *dest;
	char **filters; /* sorted when exact */
	size_t nfilters;
	int exact;	/* filters name objects, not subtrees */
	int conflict;
	int no_owner;
	int owner_by_name;
	int keep_damaged;
	int is_root;
	unsigned tmp_seq; /* for temporary names */
	pid_t pid;	  /* ours, for temporary names */
	struct nsr_restore_cb cb;
	struct nsr_asm_dec *dec;
	int base_fd; /* dest, or "/" in place */
	int cwd_fd;  /* dest, or "." in place (relative saved paths) */
	int nofollow;
	/* cached parent directory of the last object */
	char *parent_rel;
	int parent_fd;
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
};

/* rst_pipe_start - the pipe target's FILE: the first regular file. */
int rst_pipe_start(struct nsr_restore *r, const struct nsr_asm_file *f);
/* rst_pipe_write - data to the pipe target. */
int rst_pipe_write(struct nsr_restore *r, const void *p, size_t n);
/* rst_pipe_zeros - a hole to the pipe target, as zeros. */
int rst_pipe_zeros(struct nsr_restore *r, uint64_t len);
/* rst_pipe_end - the pipe target's FILE_END: checksum, counters. */
int rst_pipe_end(struct nsr_restore *r, const struct nsr_asm_file_end *fe);

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
/* rst_meta_reg - the current regular file's metadata through its open
 * descriptor, leaving out what its creation already gave it (owner and
 * group, mode). */
void rst_meta_reg(struct nsr_restore *r);
/* rst_meta_at - the same for dfd/name, not following it. */
void rst_meta_at(struct nsr_restore *r, int dfd, const char *name,
		 const struct nsr_asm_file *f, const struct xa_list *xa,
		 const char *target, const char *path);
/* rst_dirs_pop_to - apply directories that cannot contain path (NULL:
 * all). */
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
