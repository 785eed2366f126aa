/*
 * dev_aftd.c - adv_file devices (AFTD): a directory on a disk file system
 * holding the file `label` and one file per save-set session, named
 * `ss.NNNNNNNNNN` (the session file number, decimal), so concurrent
 * sessions never share a file.  Appends that run out of space are cut
 * back to where they started: what was written before stays intact and
 * the device is marked full.
 *
 * Crash-safe naming: a session file is created as `ss.NNNNNNNNNN.part`
 * and only renamed to its final name (nsr_dev_file_commit) once its
 * fragment's end is durable; readers and listings see final names only.
 * A `.part` file is the file of a session still being written, or the
 * leftover of one that never ended (aborted, or its writer died):
 * nsr_dev_file_discard removes it at an abort, nsr_dev_file_sweep every
 * one left by a crash.  Several movers (processes) may write one AFTD at
 * once (dynamic nsrmmd), so a writer holds an exclusive flock(2) on its
 * `.part` file from creation to close, and the sweep removes only the
 * ones it can lock: their writer is gone (the kernel drops the lock of a
 * dead process).
 * Invariants:
 *  1. a final name is only ever given to a file whose data, up to its
 *     end, was fdatasync'ed before the rename;
 *  2. a number is never used twice: creation skips numbers that exist
 *     under either name;
 *  3. a `.part` file is removed by a sweep only while the sweep holds its
 *     lock, and written by its creator only while the creator holds it;
 *  4. no file of the directory is opened through a symbolic link: session
 *     files are created with O_EXCL and opened with O_NOFOLLOW, the label
 *     is read with O_NOFOLLOW, so whoever can write into the directory
 *     cannot make a mover read or write outside it.  The directory itself
 *     is the administrator's choice (nsrd checks it exists when the device
 *     is set) and is never created by a mover (nsrmmd opens an AFTD
 *     without create);
 *  5. a session file is written and read through the page cache with
 *     drop-behind (nsr_drop_write, nsr_drop_read in fileio.h): the pages
 *     of what was written back or read a little before are dropped, and
 *     all of a file's after the fdatasync that ends a save set
 *     (nsr_drop_synced), so a mover leaves neither its writes, however
 *     short the file, nor its reads in memory.  Reads
 *     were made with O_DIRECT for a while; side by side, page-cache reads
 *     with the kernel's read-ahead and drop-behind recovered large files
 *     1.2 x faster and read a volume alone 2 to 5 x faster (one block at
 *     a time, O_DIRECT kept the disk waiting:
 *     tests/bench/recover/RESULTS.md).
 */
#include "nsr/compat.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/clock.h"
#include "nsr/cmp.h"
#include "nsr/err.h"
#include "nsr/fileio.h"

#include "dev_int.h"

#define AFTD_LABEL "label"
#define AFTD_PREFIX "ss."
#define AFTD_PART ".part"

/* With a quota, the directory itself is summed again after this handle
 * appended a sixteenth of the quota (at most AFTD_RESCAN_MAX), and
 * whenever the count says an append would pass it: other movers write
 * into the same directory (dynamic nsrmmd), and removals free space.
 * A sum stats every file of the volume (a third of a second at 200,000
 * files) with the handle's appends waiting, so once a sum takes more
 * than AFTD_RESCAN_SLOW_US the periodic one also waits until
 * AFTD_RESCAN_SHARE times its duration has passed since it: summing
 * takes at most a tenth of the time, and what other movers wrote
 * meanwhile is seen that much later. */
#define AFTD_RESCAN_MAX (32u << 20)
#define AFTD_RESCAN_SHARE 10
#define AFTD_RESCAN_SLOW_US 1000

struct aftd {
	pthread_mutex_t lock; /* next, used, inflight, since_scan, info.full */
	uint32_t next;	      /* the next session file number to try */
	uint64_t quota;	      /* 0 = none */
	uint64_t used;	      /* bytes in session files (with a quota) */
	uint64_t inflight;    /* of used: reserved, not yet written */
	uint64_t since_scan;  /* appended since the directory was summed */
	long long scan_at_us; /* monotonic: the last sum ended */
	long long scan_us;    /* how long it took */
};

struct nsr_dev_file {
	struct nsr_dev *dev;
	int fd;
	uint32_t no;
	uint64_t size;
	struct nsr_drop drop; /* write-back and drop-behind (invariant 5) */
	int dir_synced;
};

/* aftd_path - dir/name into out; NSR_ERR_TOOBIG if it does not fit. */
static int aftd_path(struct nsr_dev *dev, const char *name, char *out,
		     size_t size)
{
	int n = snprintf(out, size, "%s/%s", dev->path, name);

	if (n < 0 || (size_t)n >= size)
		return dev_fail(dev, NSR_ERR_TOOBIG, "path too long");
	return NSR_OK;
}

/* aftd_file_path - the path of session file no. */
static int aftd_file_path(struct nsr_dev *dev, uint32_t no, char *out,
			  size_t size)
{
	char name[32];

	snprintf(name, sizeof(name), AFTD_PREFIX "%010" PRIu32, no);
	return aftd_path(dev, name, out, size);
}

/* aftd_part_path - the in-progress path of session file no. */
static int aftd_part_path(struct nsr_dev *dev, uint32_t no, char *out,
			  size_t size)
{
	char name[40];

	snprintf(name, sizeof(name), AFTD_PREFIX "%010" PRIu32 AFTD_PART, no);
	return aftd_path(dev, name, out, size);
}

/* aftd_parse_name - "ss.NNNNNNNNNN" to its number; 0 if not one. */
static uint32_t aftd_parse_name(const char *name)
{
	uint64_t v = 0;
	size_t i, n = strlen(name);

	if (n != 13 || strncmp(name, AFTD_PREFIX, 3) != 0)
		return 0;
	for (i = 3; i < n; i++) {
		if (name[i] < '0' || name[i] > '9')
			return 0;
		v = v * 10 + (uint64_t)(name[i] - '0');
	}
	return v > UINT32_MAX ? 0 : (uint32_t)v;
}

/* aftd_parse_part - the number of an in-progress file name. */
static uint32_t aftd_parse_part(const char *name)
{
	char base[14];
	size_t n = strlen(name);

	if (n != 13 + strlen(AFTD_PART) || strcmp(name + 13, AFTD_PART) != 0)
		return 0;
	memcpy(base, name, 13);
	base[13] = '\0';
	return aftd_parse_name(base);
}

/* aftd_next - the next session file in d: 1 with its entry, its
 * number and *part 1 if it is in progress; 0 at the end; -1 if the
 * directory could not be read (errno).  Other names are passed over. */
static int aftd_next(DIR *d, struct dirent **de, uint32_t *no, int *part)
{
	for (;;) {
		errno = 0;
		*de = readdir(d);
		if (*de == NULL)
			return errno ? -1 : 0;
		*part = 0;
		*no = aftd_parse_name((*de)->d_name);
		if (*no == 0) {
			*part = 1;
			*no = aftd_parse_part((*de)->d_name);
		}
		if (*no != 0)
			return 1;
	}
}

/* aftd_list - session file numbers, ascending, malloc'ed. */
static int aftd_list(struct nsr_dev *dev, uint32_t **nums, size_t *n)
{
	DIR *d = NULL;
	struct dirent *de;
	uint32_t *v = NULL, *nv, no;
	size_t cnt = 0, cap = 0;
	int rc = NSR_OK, more, part;

	d = opendir(dev->path);
	if (d == NULL)
		return dev_sys(dev, "opendir");
	while ((more = aftd_next(d, &de, &no, &part)) > 0) {
		if (part)
			continue;
		if (cnt == cap) {
			cap = cap ? cap * 2 : 64;
			nv = realloc(v, cap * sizeof(*v));
			if (nv == NULL) {
				rc = NSR_ERR_NOMEM;
				goto out;
			}
			v = nv;
		}
		v[cnt++] = no;
	}
	if (more < 0) {
		rc = dev_sys(dev, "readdir");
		goto out;
	}
	/* A volume holds every save set of its retention period: hundreds
	 * of thousands of files, in the directory's hash order. */
	if (cnt > 1)
		qsort(v, cnt, sizeof(*v), nsr_cmp_u32);
out:
	closedir(d);
	if (rc != NSR_OK || cnt == 0) {
		free(v);
		v = NULL;
		if (rc == NSR_OK)
			cnt = 0;
	}
	*nums = v;
	*n = rc == NSR_OK ? cnt : 0;
	return rc;
}

/* aftd_scan - one pass over the directory: the highest session file
 * number, final or in progress, into *max (0 if none), and with total
 * the size of all session files, the ones in progress included (whoever
 * writes them).  One readdir pass whatever the directory holds. */
static int aftd_scan(struct nsr_dev *dev, uint32_t *max, uint64_t *total)
{
	DIR *d = opendir(dev->path);
	struct dirent *de;
	struct stat st;
	uint32_t no;
	int rc = NSR_OK, more, part;

	*max = 0;
	if (total)
		*total = 0;
	if (d == NULL)
		return dev_sys(dev, "opendir");
	while ((more = aftd_next(d, &de, &no, &part)) > 0) {
		if (no > *max)
			*max = no;
		/* invariant 4; a file removed meanwhile counts nothing */
		if (total &&
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ==
			    0 &&
		    S_ISREG(st.st_mode))
			*total += (uint64_t)st.st_size;
	}
	if (more < 0)
		rc = dev_sys(dev, "readdir");
	closedir(d);
	return rc;
}

/* aftd_timed_scan - aftd_scan, its end and duration kept in a (for
 * aftd_rescan_due). */
static int aftd_timed_scan(struct nsr_dev *dev, struct aftd *a,
			   uint32_t *max, uint64_t *total)
{
	long long t0 = nsr_clock_mono_us();
	int rc = aftd_scan(dev, max, total);

	a->scan_at_us = nsr_clock_mono_us();
	a->scan_us = a->scan_at_us - t0;
	return rc;
}

/* aftd_rescan_locked - a->lock held: the count from the directory, plus
 * this handle's appends not yet written.  A failed sum keeps the count
 * (retried after the next stretch). */
static void aftd_rescan_locked(struct nsr_dev *dev, struct aftd *a)
{
	uint64_t disk;
	uint32_t max;

	if (aftd_timed_scan(dev, a, &max, &disk) == NSR_OK)
		a->used = disk + a->inflight;
	a->since_scan = 0;
}

/* aftd_rescan_due - a->lock held: the periodic sum is due (see
 * AFTD_RESCAN_MAX). */
static int aftd_rescan_due(const struct aftd *a)
{
	return a->since_scan >= NSR_MIN(a->quota / 16,
					(uint64_t)AFTD_RESCAN_MAX) &&
	       (a->scan_us < AFTD_RESCAN_SLOW_US ||
		nsr_clock_mono_us() - a->scan_at_us >=
			AFTD_RESCAN_SHARE * a->scan_us);
}

/* aftd_open - check (or create) the directory; find the next number. */
static int aftd_open(struct nsr_dev *dev, const struct nsr_dev_opts *o)
{
	struct aftd *a = NULL;
	struct stat st;
	uint32_t max;
	int rc;

	if (stat(dev->path, &st) != 0) {
		if (errno != ENOENT || !o->create || dev->read_only)
			return errno == ENOENT
				       ? dev_fail(dev, NSR_ERR_NOTFOUND,
						  "no such directory; create "
						  "it on the storage node "
						  "(mkdir -p %s) or correct "
						  "the device's path",
						  dev->path)
				       : dev_sys(dev, "stat");
		rc = nsr_mkdir_p(dev->path, 0755);
		if (rc != NSR_OK)
			return dev_fail(dev, rc, "cannot create directory");
	} else if (!S_ISDIR(st.st_mode)) {
		return dev_fail(dev, NSR_ERR_INVAL, "not a directory");
	}
	a = calloc(1, sizeof(*a));
	if (a == NULL)
		return NSR_ERR_NOMEM;
	a->quota = o->aftd_quota;
	rc = NSR_OK;
	/* A reader neither numbers files nor counts space. */
	if (!dev->read_only) {
		rc = aftd_timed_scan(dev, a, &max, a->quota ? &a->used : NULL);
		a->next = max + 1; /* past every final and leftover: inv. 2 */
	}
	if (rc != NSR_OK) {
		free(a);
		return rc;
	}
	pthread_mutex_init(&a->lock, NULL);
	dev->priv = a;
	dev->info.sequential = 0;
	return NSR_OK;
}

/* aftd_close - free the state. */
static int aftd_close(struct nsr_dev *dev)
{
	struct aftd *a = dev->priv;

	if (a != NULL) {
		pthread_mutex_destroy(&a->lock);
		free(a);
	}
	return NSR_OK;
}

/* aftd_label_put - durably replace dir/label. */
static int aftd_label_put(struct nsr_dev *dev, const void *p, size_t len)
{
	char path[PATH_MAX];
	int rc;

	rc = aftd_path(dev, AFTD_LABEL, path, sizeof(path));
	if (rc != NSR_OK)
		return rc;
	rc = nsr_file_replace(path, p, len, 0644);
	if (rc == NSR_ERR_SYSTEM)
		return dev_sys(dev, "write label");
	if (rc != NSR_OK)
		return dev_fail(dev, rc, "cannot write label: %s",
				nsr_strerror(rc));
	return NSR_OK;
}

/* aftd_label_get - read dir/label (never through a link: invariant 4). */
static int aftd_label_get(struct nsr_dev *dev, void *p, size_t cap,
			  size_t *got)
{
	char path[PATH_MAX];
	struct stat st;
	size_t n = 0;
	int fd, rc;

	rc = aftd_path(dev, AFTD_LABEL, path, sizeof(path));
	if (rc != NSR_OK)
		return rc;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT
			       ? dev_fail(dev, NSR_ERR_NOTFOUND,
					  "no label file (unlabeled volume)")
		       : errno == ELOOP
			       ? dev_fail(dev, NSR_ERR_PERM,
					  "the label file is a symbolic "
					  "link; refused")
			       : dev_fail(dev, NSR_ERR_SYSTEM,
					  "cannot read label: %s",
					  strerror(errno));
	if (fstat(fd, &st) != 0)
		rc = dev_sys(dev, "stat label");
	else if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > cap)
		rc = dev_fail(dev, NSR_ERR_TOOBIG, "label file over %zu bytes "
			      "or not a file", cap);
	else
		rc = nsr_read_full(fd, p, (size_t)st.st_size, &n);
	if (rc == NSR_ERR_SYSTEM)
		rc = dev_sys(dev, "read label");
	close(fd);
	if (rc == NSR_OK)
		*got = n;
	return rc;
}

/* part_locked - take the writer's lock of a new in-progress file; 0 if
 * a sweep holds it or has already removed the file (invariant 3). */
static int part_locked(int fd)
{
	struct stat st;

	if (flock(fd, LOCK_EX | LOCK_NB) != 0)
		return 0;
	return fstat(fd, &st) == 0 && st.st_nlink > 0;
}

/* aftd_file_create - the next session file, created exclusively and
 * locked while it is written. */
static int aftd_file_create(struct nsr_dev *dev, uint32_t *fileno,
			    struct nsr_dev_file **out)
{
	struct aftd *a = dev->priv;
	struct nsr_dev_file *f;
	char path[PATH_MAX], final[PATH_MAX];
	struct stat st;
	int fd = -1, rc = NSR_OK;
	uint32_t no = 0;

	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return NSR_ERR_NOMEM;
	pthread_mutex_lock(&a->lock);
	while (fd < 0) {
		no = a->next++;
		rc = aftd_part_path(dev, no, path, sizeof(path));
		if (rc == NSR_OK)
			rc = aftd_file_path(dev, no, final, sizeof(final));
		if (rc != NSR_OK)
			break;
		if (lstat(final, &st) == 0)
			continue; /* invariant 2 */
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd >= 0 && !part_locked(fd)) {
			/* A sweep of another mover took it between our
			 * create and our lock (and removed it): next one. */
			close(fd);
			fd = -1;
			continue;
		}
		if (fd < 0 && errno != EEXIST) {
			rc = errno == ENOSPC || errno == EDQUOT
				     ? dev_fail(dev, NSR_ERR_EOM,
						"file system full")
				     : dev_sys(dev, "create session file");
			if (rc == NSR_ERR_EOM)
				dev->info.full = 1;
			break;
		}
	}
	pthread_mutex_unlock(&a->lock);
	if (fd < 0) {
		free(f);
		return rc;
	}
	f->dev = dev;
	f->fd = fd;
	nsr_drop_init(&f->drop, 0);
	f->no = no;
	*fileno = no;
	*out = f;
	return NSR_OK;
}

/* aftd_file_open - an existing session file, read-only. */
static int aftd_file_open(struct nsr_dev *dev, uint32_t fileno,
			  struct nsr_dev_file **out)
{
	struct nsr_dev_file *f;
	char path[PATH_MAX];
	struct stat st;
	int rc;

	rc = aftd_file_path(dev, fileno, path, sizeof(path));
	if (rc != NSR_OK)
		return rc;
	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return NSR_ERR_NOMEM;
	/* Never out of the directory through a link (invariant 4). */
	f->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (f->fd < 0 || fstat(f->fd, &st) != 0) {
		rc = errno == ENOENT
			     ? dev_fail(dev, NSR_ERR_NOTFOUND,
					"no session file %" PRIu32, fileno)
			     : errno == ELOOP
			     ? dev_fail(dev, NSR_ERR_PERM,
					"session file %" PRIu32 " is a "
					"symbolic link; refused", fileno)
			     : dev_sys(dev, "open session file");
		if (f->fd >= 0)
			close(f->fd);
		free(f);
		return rc;
	}
	/* Session files are read front to back. */
	(void)posix_fadvise(f->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	nsr_drop_init(&f->drop, 0);
	f->dev = dev;
	f->no = fileno;
	f->size = (uint64_t)st.st_size;
	f->dir_synced = 1;
	*out = f;
	return NSR_OK;
}

/* aftd_file_remove - unlink a session file. */
static int aftd_file_remove(struct nsr_dev *dev, uint32_t fileno)
{
	struct aftd *a = dev->priv;
	struct stat st;
	char path[PATH_MAX];
	int rc;

	rc = aftd_file_path(dev, fileno, path, sizeof(path));
	if (rc != NSR_OK)
		return rc;
	if (a->quota != 0 && stat(path, &st) == 0) {
		pthread_mutex_lock(&a->lock);
		a->used -= NSR_MIN(a->used, (uint64_t)st.st_size);
		pthread_mutex_unlock(&a->lock);
	}
	if (unlink(path) != 0)
		return errno == ENOENT
			       ? dev_fail(dev, NSR_ERR_NOTFOUND,
					  "no session file %" PRIu32, fileno)
			       : dev_sys(dev, "unlink");
	return NSR_OK;
}

/* rename_noreplace - rename from to to unless to exists (EEXIST then):
 * RENAME_NOREPLACE, or where the file system lacks it (EINVAL), a hard
 * link and an unlink, which refuse an existing name too. */
static int rename_noreplace(const char *from, const char *to)
{
	if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	if (link(from, to) != 0)
		return -1;
	(void)unlink(from); /* a part name left is swept at the next open */
	return 0;
}

/* nsr_dev_file_commit - give a durable session file its final name.
 * Never over another file: a mover of another process may have taken
 * the same number between this one's check and its create (the check is
 * per process), and replacing its recorded file would lose it. */
int nsr_dev_file_commit(struct nsr_dev_file *f)
{
	char part[PATH_MAX], final[PATH_MAX];
	int rc;

	rc = aftd_part_path(f->dev, f->no, part, sizeof(part));
	if (rc == NSR_OK)
		rc = aftd_file_path(f->dev, f->no, final, sizeof(final));
	if (rc != NSR_OK)
		return rc;
	if (rename_noreplace(part, final) != 0)
		return errno == EEXIST
			       ? dev_fail(f->dev, NSR_ERR_EXISTS,
					  "session file %" PRIu32
					  " exists already (another "
					  "mover's): not replaced",
					  f->no)
			       : dev_sys(f->dev, "rename session file");
	if (nsr_fsync_dir(f->dev->path, 1) != NSR_OK)
		return dev_sys(f->dev, "fsync directory");
	f->dir_synced = 1;
	return NSR_OK;
}

/* aftd_unlink_counted - unlink path, giving its bytes back to the quota;
 * *bytes (may be NULL) gets its size. */
static int aftd_unlink_counted(struct nsr_dev *dev, const char *path,
			       uint64_t *bytes)
{
	struct aftd *a = dev->priv;
	struct stat st;
	uint64_t sz = 0;

	if (lstat(path, &st) == 0)
		sz = (uint64_t)st.st_size;
	if (unlink(path) != 0)
		return errno == ENOENT ? NSR_ERR_NOTFOUND
				       : dev_sys(dev, "unlink");
	if (a->quota != 0) {
		pthread_mutex_lock(&a->lock);
		a->used -= NSR_MIN(a->used, sz);
		pthread_mutex_unlock(&a->lock);
	}
	if (bytes != NULL)
		*bytes = sz;
	return NSR_OK;
}

/* nsr_dev_file_discard - remove an in-progress session file and free. */
int nsr_dev_file_discard(struct nsr_dev_file *f)
{
	char part[PATH_MAX];
	int rc;

	if (f == NULL)
		return NSR_OK;
	rc = aftd_part_path(f->dev, f->no, part, sizeof(part));
	if (rc == NSR_OK)
		rc = aftd_unlink_counted(f->dev, part, NULL);
	if (rc == NSR_ERR_NOTFOUND)
		rc = NSR_OK; /* committed already, or gone */
	nsr_dev_file_close(f);
	return rc;
}

/* aftd_sweep - remove every in-progress file no live writer holds
 * (leftovers of sessions that never ended); *count and *bytes say how
 * many and how big. */
static int aftd_sweep(struct nsr_dev *dev, uint32_t *count, uint64_t *bytes)
{
	DIR *d = opendir(dev->path);
	struct dirent *de;
	char path[PATH_MAX];
	uint64_t sz = 0;
	uint32_t no;
	int rc = NSR_OK, fd, more, part;

	if (d == NULL)
		return dev_sys(dev, "opendir");
	while ((more = aftd_next(d, &de, &no, &part)) > 0) {
		if (!part)
			continue;
		rc = aftd_path(dev, de->d_name, path, sizeof(path));
		if (rc != NSR_OK)
			break;
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) {
			/* gone, or a live writer's (another mover's) */
			if (fd >= 0)
				close(fd);
			continue;
		}
		rc = aftd_unlink_counted(dev, path, &sz);
		close(fd);
		if (rc == NSR_ERR_NOTFOUND)
			rc = NSR_OK;
		else if (rc != NSR_OK)
			break;
		else {
			(*count)++;
			*bytes += sz;
		}
	}
	if (rc == NSR_OK && more < 0)
		rc = dev_sys(dev, "readdir");
	closedir(d);
	if (rc == NSR_OK && *count > 0 &&
	    nsr_fsync_dir(dev->path, 1) != NSR_OK)
		rc = dev_sys(dev, "fsync directory");
	return rc;
}

/* nsr_dev_file_append - append; on a full disk cut back and say EOM. */
int nsr_dev_file_append(struct nsr_dev_file *f, const void *p, size_t len)
{
	struct nsr_dev *dev = f->dev;
	struct aftd *a = dev->priv;
	int rc = NSR_OK, reserved = 0;

	if (a->quota != 0) {
		/* Reserve the space first so that threads cannot overshoot
		 * the quota together; what other movers wrote is seen at the
		 * next sum of the directory. */
		pthread_mutex_lock(&a->lock);
		if (a->used + len > a->quota || aftd_rescan_due(a))
			aftd_rescan_locked(dev, a);
		if (a->used + len > a->quota) {
			rc = NSR_ERR_NOSPACE;
		} else {
			a->used += len;
			a->inflight += len;
			a->since_scan += len;
		}
		reserved = rc == NSR_OK;
		pthread_mutex_unlock(&a->lock);
	}
	if (rc == NSR_OK)
		rc = nsr_pwrite_full(f->fd, p, len, (off_t)f->size);
	if (reserved) {
		pthread_mutex_lock(&a->lock);
		a->inflight -= len;
		if (rc != NSR_OK)
			a->used -= len;
		pthread_mutex_unlock(&a->lock);
	}
	if (rc == NSR_OK) {
		f->size += len;
		nsr_drop_write(f->fd, &f->drop, f->size);
		return NSR_OK;
	}
	if (rc != NSR_ERR_NOSPACE)
		return dev_sys(dev, "write session file");
	/* Out of space: drop the partial append so the file ends on the
	 * last whole write, and mark the volume full. */
	if (ftruncate(f->fd, (off_t)f->size) != 0)
		return dev_sys(dev, "truncate after ENOSPC");
	pthread_mutex_lock(&a->lock);
	dev->info.full = 1;
	pthread_mutex_unlock(&a->lock);
	return dev_fail(dev, NSR_ERR_EOM,
			"file system full: volume is full (session file %"
			PRIu32 " kept at %" PRIu64 " bytes)", f->no, f->size);
}

/* nsr_dev_file_pread - read at an offset, dropping behind (invariant
 * 5). */
int nsr_dev_file_pread(struct nsr_dev_file *f, void *p, size_t len,
		       uint64_t off, size_t *got)
{
	if (nsr_pread_full(f->fd, p, len, (off_t)off, got) != NSR_OK)
		return dev_sys(f->dev, "read session file");
	nsr_drop_read(f->fd, &f->drop, off);
	return NSR_OK;
}

/* nsr_dev_file_sync - fdatasync, and the directory the first time; the
 * pages written are dropped then (invariant 5). */
int nsr_dev_file_sync(struct nsr_dev_file *f)
{
	if (fdatasync(f->fd) != 0)
		return dev_sys(f->dev, "fdatasync session file");
	nsr_drop_synced(f->fd, &f->drop, f->size);
	if (!f->dir_synced) {
		if (nsr_fsync_dir(f->dev->path, 1) != NSR_OK)
			return dev_sys(f->dev, "fsync directory");
		f->dir_synced = 1;
	}
	return NSR_OK;
}

/* nsr_dev_file_size - bytes in the file. */
uint64_t nsr_dev_file_size(const struct nsr_dev_file *f)
{
	return f->size;
}

/* nsr_dev_file_close - close and free. */
int nsr_dev_file_close(struct nsr_dev_file *f)
{
	int rc = NSR_OK;

	if (f == NULL)
		return NSR_OK;
	if (close(f->fd) != 0)
		rc = dev_sys(f->dev, "close session file");
	free(f);
	return rc;
}

const struct dev_ops dev_aftd_ops = {
	.open = aftd_open,
	.close = aftd_close,
	.label_put = aftd_label_put,
	.label_get = aftd_label_get,
	.file_create = aftd_file_create,
	.file_open = aftd_file_open,
	.file_list = aftd_list,
	.file_remove = aftd_file_remove,
	.file_sweep = aftd_sweep,
};
