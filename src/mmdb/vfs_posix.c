/*
 * vfs_posix.c - the POSIX implementation of the media database I/O shim:
 * plain file descriptors, pread/pwrite, fdatasync, flock.  It owns nothing
 * but the descriptors it opens.
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/mmdb_vfs.h"

struct mmdb_file {
	int fd;
};

/* px_open - open a file descriptor for path. */
static int px_open(const struct mmdb_vfs *vfs, const char *path,
		   unsigned flags, struct mmdb_file **out)
{
	struct mmdb_file *f;
	int oflags = (flags & MMDB_VFS_READONLY) ? O_RDONLY : O_RDWR;
	int fd;

	*out = NULL;
	if (flags & MMDB_VFS_CREATE)
		oflags |= O_CREAT;
	fd = open(path, oflags | O_CLOEXEC, 0600);
	if (fd < 0)
		return errno == ENOENT ? NSR_ERR_NOTFOUND : NSR_ERR_SYSTEM;
	f = mmdb_vfs_alloc(vfs, sizeof(*f));
	if (!f) {
		close(fd);
		return NSR_ERR_NOMEM;
	}
	f->fd = fd;
	*out = f;
	return NSR_OK;
}

/* px_close - close and free. */
static void px_close(struct mmdb_file *f)
{
	if (!f)
		return;
	close(f->fd);
	free(f);
}

/* px_read - pread until n bytes or end of file. */
static int px_read(struct mmdb_file *f, void *buf, size_t n, uint64_t off,
		   size_t *got)
{
	int rc = nsr_pread_full(f->fd, buf, n, (off_t)off, got);

	return rc == NSR_OK ? NSR_OK : NSR_ERR_IO;
}

/* px_write - pwrite all n bytes. */
static int px_write(struct mmdb_file *f, const void *buf, size_t n,
		    uint64_t off)
{
	if (nsr_pwrite_full(f->fd, buf, n, (off_t)off) != NSR_OK)
		return errno == ENOSPC ? NSR_ERR_NOSPACE : NSR_ERR_IO;
	return NSR_OK;
}

/* px_sync - fdatasync. */
static int px_sync(struct mmdb_file *f)
{
	return fdatasync(f->fd) == 0 ? NSR_OK : NSR_ERR_IO;
}

/* px_size - fstat size. */
static int px_size(struct mmdb_file *f, uint64_t *size)
{
	struct stat st;

	if (fstat(f->fd, &st) != 0)
		return NSR_ERR_SYSTEM;
	*size = (uint64_t)st.st_size;
	return NSR_OK;
}

/* px_truncate - ftruncate. */
static int px_truncate(struct mmdb_file *f, uint64_t size)
{
	return ftruncate(f->fd, (off_t)size) == 0 ? NSR_OK : NSR_ERR_IO;
}

/* px_lock - non-blocking exclusive flock. */
static int px_lock(struct mmdb_file *f)
{
	if (flock(f->fd, LOCK_EX | LOCK_NB) == 0)
		return NSR_OK;
	return errno == EWOULDBLOCK ? NSR_ERR_BUSY : NSR_ERR_SYSTEM;
}

/* px_rename - rename(2). */
static int px_rename(const struct mmdb_vfs *vfs, const char *from,
		     const char *to)
{
	NSR_UNUSED(vfs);
	return rename(from, to) == 0 ? NSR_OK : NSR_ERR_SYSTEM;
}

/* px_sync_dir - fsync a directory. */
static int px_sync_dir(const struct mmdb_vfs *vfs, const char *dir)
{
	NSR_UNUSED(vfs);
	return nsr_fsync_dir(dir, 1) == NSR_OK ? NSR_OK : NSR_ERR_IO;
}

static const struct mmdb_vfs posix_vfs = {
	.open = px_open,
	.close = px_close,
	.read = px_read,
	.write = px_write,
	.sync = px_sync,
	.size = px_size,
	.truncate = px_truncate,
	.lock = px_lock,
	.rename = px_rename,
	.sync_dir = px_sync_dir,
	.alloc = NULL,
	.ctx = NULL,
};

/* mmdb_vfs_posix - the shared POSIX ops table. */
const struct mmdb_vfs *mmdb_vfs_posix(void)
{
	return &posix_vfs;
}

/* mmdb_vfs_alloc - allocate through the vfs hook or malloc. */
void *mmdb_vfs_alloc(const struct mmdb_vfs *vfs, size_t n)
{
	if (vfs && vfs->alloc)
		return vfs->alloc(vfs, n);
	return malloc(n);
}
