/*
 * fileio.h - whole-file and descriptor helpers, including the durable
 * replace idiom: write a temp file, fsync it, rename it over the target,
 * fsync the directory.  After nsr_file_replace() returns NSR_OK the new
 * contents survive a crash; if it fails the old file is untouched.
 */
#ifndef NSR_FILEIO_H
#define NSR_FILEIO_H

#include <stddef.h>
#include <stdint.h>
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
/* nsr_test_pause - a test knob giving milliseconds: sleep that long when
 * it is set to a number from 1 to max_ms (else nothing), as something
 * slow would at that point. */
void nsr_test_pause(const char *knob, long max_ms);
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

/* Drop-behind, for a file written or read front to back that will not
 * be read again soon (a volume's files: src/media):
 * the writer starts the write-back of every NSR_DROP_STRETCH bytes it
 * appended (sync_file_range WRITE: the disk works while the next ones
 * are made, instead of receiving everything at the final fdatasync), and
 * writer and reader ask the pages of what lies NSR_DROP_LAG stretches
 * behind out of the page cache (POSIX_FADV_DONTNEED, without waiting:
 * pages still being written stay and are asked again the next time).
 * Caching such data only pushes out what other programs use, and a page
 * cache that grows by every byte moved makes each transfer take memory
 * nobody has touched for long, which on our virtual machines cost more
 * CPU than the copies themselves (a large-file save ran 3 to 4 times
 * faster: tests/bench/tls/RESULTS.md).  Waiting for each stretch before
 * dropping it was measured too: it took the disk's queue away.
 * NSR_DROP_BEHIND=0 in the environment keeps the pages.  Durability
 * still comes only from fdatasync. */
#define NSR_DROP_STRETCH (8u << 20)
#define NSR_DROP_LAG 2u

/* struct nsr_drop - how far the write-back and the drop-behind of a file
 * have come. */
struct nsr_drop {
	uint64_t started; /* write-back started below this offset */
	uint64_t dropped; /* pages below it asked out of the page cache */
	int keep;	  /* NSR_DROP_BEHIND=0: pages stay cached */
};

/* nsr_drop_init - nothing of the file from offset at on is written back
 * or dropped yet; reads NSR_DROP_BEHIND. */
void nsr_drop_init(struct nsr_drop *d, uint64_t at);
/* nsr_drop_write - the file was written up to end: if [d->started, end)
 * holds NSR_DROP_STRETCH bytes or more, start their write-back and move
 * d->started to end; then, unless d->keep, drop the pages of what lies
 * NSR_DROP_LAG stretches or more behind end (and, once more, of the
 * stretch dropped before) and move d->dropped there.  Marks past end
 * (the file was cut back) move to end.  Failures are left to the
 * fdatasync that makes the data durable. */
void nsr_drop_write(int fd, struct nsr_drop *d, uint64_t end);
/* nsr_drop_read - the file is read at off: unless d->keep, drop the
 * pages of what lies NSR_DROP_LAG stretches or more behind off and move
 * d->dropped there; a read before d->dropped moves it back to off. */
void nsr_drop_read(int fd, struct nsr_drop *d, uint64_t off);
/* nsr_drop_synced - the file is durable (fdatasync'ed) up to end: unless
 * d->keep, drop the pages of all of it, from its start, before end's
 * page (the one it ends in stays: the next append would read it back),
 * so a file too short for nsr_drop_write to drop anything leaves no
 * pages behind either, nor do pages an earlier drop found still being
 * written; d->started moves to end, d->dropped to that page. */
void nsr_drop_synced(int fd, struct nsr_drop *d, uint64_t end);

#endif /* NSR_FILEIO_H */
