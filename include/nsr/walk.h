/*
 * walk.h - deterministic depth-first file-system walk for save.
 *
 * Given one or more paths, yields each object once, in pre-order (a
 * directory before its contents, so restore can create it first), with the
 * entries of a directory sorted bytewise by name.  Uses lstat: symlinks are
 * reported, never followed.  A directory on another file system than the
 * path it was reached from is reported but not entered unless cross_mounts
 * is set.  A non-directory whose (dev, ino) was seen before is reported as
 * NSR_ASM_HARDLINK with link = the first path.  Sockets are skipped.
 *
 * Directories are entered through descriptors (openat with O_NOFOLLOW,
 * checked against the lstat that found them), and entries below a root are
 * examined relative to their directory's descriptor, so renaming a parent
 * to a symlink during the walk cannot lead it, or a saver that opens
 * (dirfd, name), outside the tree.  At most a few dozen directories are
 * held open whatever the depth (an outer one is reopened as ".." of its
 * child, checked, on the way back), so trees of any depth and paths
 * longer than PATH_MAX are walked.  When descriptors run out (EMFILE), a
 * level falls back to paths.
 *
 * Problems with one object (lstat or opendir fails, readlink fails) are
 * returned as entries with err != 0 and do not stop the walk.
 */
#ifndef NSR_WALK_H
#define NSR_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

struct nsr_walk_opts {
	bool cross_mounts; /* enter directories on other file systems */
};

/*
 * One walked object; valid until the next nsr_walk_next/nsr_walk_free.
 * When err != 0 the entry only reports a problem with path: err is an errno
 * value, what names the failed call ("lstat", "opendir", "readlink"), type
 * is 0 and st is zeroed unless what is "opendir" (the directory itself was
 * already returned normally).
 */
struct nsr_walk_ent {
	const char *path;
	int type;	  /* enum nsr_asm_ftype, 0 for an error entry */
	struct stat st;	  /* from lstat */
	const char *link; /* symlink target / first path of a hard link */
	int err;
	const char *what;
	/* Where to open the object: openat(dirfd, name, ...).  dirfd is the
	 * walker's (valid until the next call) or AT_FDCWD with name = path.
	 * Entries built by hand may leave name NULL: users then use path. */
	int dirfd;
	const char *name;
	/* A directory the walk entered is listed: names[0..nnames) are all
	 * the names it held when it was read (sorted bytewise, without "."
	 * and "..", sockets included), valid until the next call.  Every
	 * other entry, and a directory not entered (another file system,
	 * or unreadable), is not.  Level saves record the list. */
	bool listed;
	const char *const *names;
	size_t nnames;
	/* A regular file already open (the walker never does this; a
	 * caller handing entries to a saver may, so that reading starts
	 * early): the saver reads fd instead of opening name, and leaves
	 * it open (its owner closes it).  false in a zeroed entry. */
	bool has_fd;
	int fd;
};

struct nsr_walk;

/* nsr_walk_new - walk paths[0..n-1] in the given order (opts may be NULL).
 * Trailing slashes are dropped ("/" stays).  NSR_ERR_INVAL, NSR_ERR_NOMEM. */
int nsr_walk_new(struct nsr_walk **out, const char *const *paths, size_t n,
		 const struct nsr_walk_opts *opts);
/* nsr_walk_next - the next entry: NSR_OK with *ent set, NSR_ERR_EOF after
 * the last, NSR_ERR_NOMEM. */
int nsr_walk_next(struct nsr_walk *w, const struct nsr_walk_ent **ent);
/* nsr_walk_free - free the walker (NULL is fine). */
void nsr_walk_free(struct nsr_walk *w);

#endif /* NSR_WALK_H */
