/*
 * fileio.c - descriptor loops and durable whole-file replacement.
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <time.h>
#include <libgen.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"

/* sys_err - map errno of a failed write to our code. */
static int sys_err(void)
{
	return (errno == ENOSPC || errno == EDQUOT) ? NSR_ERR_NOSPACE
						     : NSR_ERR_SYSTEM;
}

/* nsr_write_full - write all n bytes. */
int nsr_write_full(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		ssize_t w = write(fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return sys_err();
		if (w == 0) {
			errno = EIO;
			return NSR_ERR_SYSTEM;
		}
		c += w;
		n -= (size_t)w;
	}
	return NSR_OK;
}

/* nsr_pwrite_full - write all n bytes at off. */
int nsr_pwrite_full(int fd, const void *p, size_t n, off_t off)
{
	const char *c = p;

	while (n > 0) {
		ssize_t w = pwrite(fd, c, n, off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return sys_err();
		if (w == 0) {
			errno = EIO;
			return NSR_ERR_SYSTEM;
		}
		c += w;
		n -= (size_t)w;
		off += w;
	}
	return NSR_OK;
}

/* nsr_read_full - read n bytes or up to EOF. */
int nsr_read_full(int fd, void *p, size_t n, size_t *got)
{
	char *c = p;
	size_t done = 0;

	*got = 0;
	while (done < n) {
		ssize_t r = read(fd, c + done, n - done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return NSR_ERR_SYSTEM;
		if (r == 0)
			break;
		done += (size_t)r;
	}
	*got = done;
	return NSR_OK;
}

/* nsr_pread_full - read n bytes at off or up to EOF. */
int nsr_pread_full(int fd, void *p, size_t n, off_t off, size_t *got)
{
	char *c = p;
	size_t done = 0;

	*got = 0;
	while (done < n) {
		ssize_t r = pread(fd, c + done, n - done, off + (off_t)done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return NSR_ERR_SYSTEM;
		if (r == 0)
			break;
		done += (size_t)r;
	}
	*got = done;
	return NSR_OK;
}

/* nsr_file_read - append a whole (bounded) file to out. */
int nsr_file_read(const char *path, struct nsr_buf *out, size_t max)
{
	char tmp[65536];
	size_t total = 0, got;
	int fd, rc = NSR_OK;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? NSR_ERR_NOTFOUND : NSR_ERR_SYSTEM;
	for (;;) {
		rc = nsr_read_full(fd, tmp, sizeof(tmp), &got);
		if (rc || got == 0)
			break;
		total += got;
		if (max && total > max) {
			rc = NSR_ERR_TOOBIG;
			break;
		}
		rc = nsr_buf_add(out, tmp, got);
		if (rc)
			break;
	}
	close(fd);
	return rc;
}

/* nsr_stat_same - see fileio.h. */
int nsr_stat_same(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_dev == b->st_dev &&
	       a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* nsr_fsync_dir - make a rename/create in a directory durable. */
int nsr_fsync_dir(const char *path, int is_dir)
{
	char *copy = strdup(path);
	const char *dir;
	int fd, rc = NSR_OK;

	if (!copy)
		return NSR_ERR_NOMEM;
	dir = is_dir ? copy : dirname(copy);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) != 0)
		rc = NSR_ERR_SYSTEM;
	if (fd >= 0)
		close(fd);
	free(copy);
	return rc;
}

/* nsr_file_replace - durable temp+fsync+rename+fsync-dir replacement. */
int nsr_file_replace(const char *path, const void *data, size_t len,
		     mode_t mode)
{
	char *tmp = NULL;
	int fd, rc, saved;

	if (asprintf(&tmp, "%s.tmp.%ld", path, (long)getpid()) < 0)
		return NSR_ERR_NOMEM;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0) {
		free(tmp);
		return NSR_ERR_SYSTEM;
	}
	rc = nsr_write_full(fd, data, len);
	if (rc == NSR_OK && fsync(fd) != 0)
		rc = sys_err();
	saved = errno;
	if (close(fd) != 0 && rc == NSR_OK)
		rc = NSR_ERR_SYSTEM;
	if (rc == NSR_OK && rename(tmp, path) != 0)
		rc = NSR_ERR_SYSTEM;
	if (rc != NSR_OK) {
		saved = errno;
		unlink(tmp);
		errno = saved;
		free(tmp);
		return rc;
	}
	free(tmp);
	return nsr_fsync_dir(path, 0);
}

/* nsr_mkdir_p - create a directory and any missing parents. */
int nsr_mkdir_p(const char *dir, mode_t mode)
{
	char *p = strdup(dir), *s;
	int rc = NSR_OK;

	if (!p)
		return NSR_ERR_NOMEM;
	for (s = p + 1; ; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;

			*s = '\0';
			if (mkdir(p, mode) != 0 && errno != EEXIST) {
				rc = NSR_ERR_SYSTEM;
				break;
			}
			*s = c;
			if (c == '\0')
				break;
		}
	}
	free(p);
	return rc;
}

/* nsr_at_path - (dirfd, name) as a path through /proc/self/fd. */
const char *nsr_at_path(char *out, size_t cap, int dirfd, const char *name)
{
	int n;

	if (dirfd == AT_FDCWD)
		n = snprintf(out, cap, "%s", name);
	else
		n = snprintf(out, cap, "/proc/self/fd/%d/%s", dirfd, name);
	return n < 0 || (size_t)n >= cap ? NULL : out;
}

/* nsr_path_join - "a/b" without a doubled slash; NULL without memory. */
char *nsr_path_join(const char *a, const char *b)
{
	size_t la = strlen(a);
	char *p = NULL;

	if (asprintf(&p, la && a[la - 1] == '/' ? "%s%s" : "%s/%s", a, b) < 0)
		return NULL;
	return p;
}

/* nsr_test_once - see fileio.h. */
int nsr_test_once(const char *knob)
{
	const char *e = getenv(knob);
	int fd;

	if (!e || !*e)
		return 0;
	fd = open(e, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/* nsr_test_pause - sleep the knob's milliseconds (1 to max_ms). */
void nsr_test_pause(const char *knob, long max_ms)
{
	const char *e = getenv(knob);
	long ms = e && *e ? strtol(e, NULL, 10) : 0;
	struct timespec ts;

	if (ms <= 0 || ms > max_ms)
		return;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* nsr_drop_init - a file whose write-back starts at offset at. */
void nsr_drop_init(struct nsr_drop *d, uint64_t at)
{
	const char *e = getenv("NSR_DROP_BEHIND");

	d->started = at;
	d->dropped = at;
	d->keep = e != NULL && strcmp(e, "0") == 0;
}

/* drop_due - where the pages to drop end for a file at pos: what lies
 * NSR_DROP_LAG stretches or more behind it, when that is a whole stretch
 * past d->dropped (and pages are not kept); else 0. */
static uint64_t drop_due(const struct nsr_drop *d, uint64_t pos)
{
	const uint64_t st = NSR_DROP_STRETCH;

	if (d->keep || pos - d->dropped < (NSR_DROP_LAG + 1) * st)
		return 0;
	return pos - NSR_DROP_LAG * st;
}

/* page_down - x rounded down to a page: the kernel drops only whole
 * pages of a range, so a range that starts inside a page must start at
 * that page, or the page a previous range ended in is never dropped
 * (records of a vtape file do not end on pages). */
static uint64_t page_down(uint64_t x)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);

	return x - x % pg;
}

/* nsr_drop_read - drop what was read NSR_DROP_LAG stretches behind. */
void nsr_drop_read(int fd, struct nsr_drop *d, uint64_t off)
{
	uint64_t upto, from;

	if (d->dropped > off)
		d->dropped = off;
	upto = drop_due(d, off);
	if (upto == 0)
		return;
	from = page_down(d->dropped);
	(void)posix_fadvise(fd, (off_t)from, (off_t)(upto - from),
			    POSIX_FADV_DONTNEED);
	d->dropped = upto;
}

/* nsr_drop_write - start write-back of full NSR_DROP_STRETCH stretches
 * and drop what lies NSR_DROP_LAG stretches behind. */
void nsr_drop_write(int fd, struct nsr_drop *d, uint64_t end)
{
	const uint64_t st = NSR_DROP_STRETCH;
	uint64_t upto, from;

	if (d->started > end)
		d->started = end;
	if (d->dropped > end)
		d->dropped = end;
	if (end - d->started < st)
		return;
	(void)sync_file_range(fd, (off64_t)d->started,
			      (off64_t)(end - d->started),
			      SYNC_FILE_RANGE_WRITE);
	d->started = end;
	upto = drop_due(d, end);
	if (upto == 0)
		return;
	/* The newest stretches stay in flight.  Pages still being written
	 * are not dropped (nothing waits for them): the stretch dropped
	 * last time is asked again, which takes its stragglers. */
	from = page_down(d->dropped >= st ? d->dropped - st : 0);
	(void)posix_fadvise(fd, (off_t)from, (off_t)(upto - from),
			    POSIX_FADV_DONTNEED);
	d->dropped = upto;
}

/* nsr_drop_synced - after an fdatasync every page up to end is clean:
 * drop them all, from the start of the file.  Not only from the stretch
 * dropped last: a drop asked while its pages were still being written
 * leaves them, and on a slow disk that can be any stretch (a loaded CI
 * machine kept 8 MiB of a 40 MiB vtape); dropping what is not cached
 * costs next to nothing. */
void nsr_drop_synced(int fd, struct nsr_drop *d, uint64_t end)
{
	uint64_t upto;

	d->started = end;
	if (d->keep)
		return;
	upto = page_down(end);
	if (upto > 0)
		(void)posix_fadvise(fd, 0, (off_t)upto, POSIX_FADV_DONTNEED);
	d->dropped = upto;
}
