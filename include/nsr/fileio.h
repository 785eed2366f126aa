/*
 * fileio.h - whole-file and descriptor helpers, including the durable
 * replace idiom: write a temp file, fsync it, rename it over the target,
 * fsync the directory.  After nsr_file_replace() returns NSR_OK the new
 * contents survive a crash; if it fails the old file is untouched.
 */
#ifndef NSR_FILEIO_H
#define NSR_FILEIO_H

#include <stddef.h>
#include <sys/types.h>

struct stat;

struct nsr_buf;

/* nsr_write_full - write all n bytes (retrying on EINTR/short writes).
 * NSR_OK, NSR_ERR_NOSPACE (ENOSPC/EDQUOT) or NSR_ERR_SYSTEM. */
int nsr_write_full(int fd, const void *p, size_t n);
/* nsr_pwrite_full - the same at an offset. */
int nsr_pwrite_full(int fd, const void *p, size_t n, off_t off);
/* nsr_read_full - read up to n bytes, stopping early only at EOF; *got
 * gets the count.  NSR_OK or NSR_ERR_SYSTEM. */
int nsr_read_full(int fd, void *p, size_t n, size_t *got);
/* nsr_pread_full - the same at an offset. */
int nsr_pread_full(int fd, void *p, size_t n, off_t off, size_t *got);
/* nsr_file_read - read a whole file into out (appended), bounded by max
 * bytes (NSR_ERR_TOOBIG beyond).  NSR_ERR_NOTFOUND if it does not exist. */
int nsr_file_read(const char *path, struct nsr_buf *out, size_t max);
/* nsr_file_replace - durably replace path with data (temp+fsync+rename+
 * fsync dir).  mode is used for a new file. */
int nsr_file_replace(const char *path, const void *data, size_t len,
		     mode_t mode);
/* nsr_fsync_dir - fsync the directory that contains path (or path itself if
 * it is a directory when is_dir). */
int nsr_fsync_dir(const char *path, int is_dir);
/* nsr_stat_same - a and b describe the same unchanged file: same device
 * and inode, size and modification time (a file replaced by rename, or
 * written, differs). */
int nsr_stat_same(const struct stat *a, const struct stat *b);
/* nsr_test_once - a test knob (environment variable knob) naming a
 * file: 1, and the file made, the first time it is set and the file
 * does not exist yet; else 0.  For faults a test injects once. */
int nsr_test_once(const char *knob);
/* nsr_mkdir_p - create dir and its parents (mode for new ones). */
int nsr_mkdir_p(const char *dir, mode_t mode);
/* nsr_path_join - malloc'ed "a/b", NULL without memory (programs may
 * wrap it in nsr_xcheck from xmalloc.h). */
char *nsr_path_join(const char *a, const char *b);
/* nsr_at_path - a short path naming (dirfd, name) however long the
 * directory's own path is, for calls without an *at form (the l*xattr
 * family): "/proc/self/fd/N/name", or name when dirfd is AT_FDCWD.
 * Written to out (cap bytes); NULL when it does not fit. */
const char *nsr_at_path(char *out, size_t cap, int dirfd, const char *name);

#endif /* NSR_FILEIO_H */
