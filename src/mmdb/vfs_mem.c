/*
 * vfs_mem.c - an in-memory media database file system for tests and
 * fuzzing, with fault injection (N-th write/sync/alloc fails) and power
 * loss simulation.  Every file keeps its current image, its last synced
 * ("durable") image and a bitmap of 512-byte sectors written since that
 * sync; a crash rebuilds each file from the durable image plus a seeded
 * random choice, per unsynced sector, of keep / drop / garble.
 *
 * One mutex serialises every operation, so multi-threaded tests are safe.
 */
#include "nsr/compat.h"

#include <pthread.h>

#include "nsr/err.h"
#include "nsr/mmdb_vfs.h"

#define MEM_SECTOR 512
#define MEM_MAXFILES 32

struct mem_node {
	char *path;
	uint8_t *cur, *dur;
	size_t cur_len, dur_len, cap, dur_cap;
	uint8_t *dirty;		/* one byte per sector */
	size_t dirty_len;
};

struct mem_fs {
	pthread_mutex_t mu;
	struct mem_node files[MEM_MAXFILES];
	size_t nfiles;
	size_t nslots;		/* slots with buffers (>= nfiles), for reset */
	uint64_t count[4];
	uint64_t fail_at[4];	/* 0 = disarmed */
	int persist[4];
	int fired;
	int crashed;
	uint64_t rng;
};

struct mmdb_file {
	struct mem_fs *fs;
	size_t idx;
};

/* fs_of - the private state of a mem vfs. */
static struct mem_fs *fs_of(const struct mmdb_vfs *vfs)
{
	return vfs->ctx;
}

/* mem_rng - xorshift64*. */
static uint64_t mem_rng(struct mem_fs *fs)
{
	fs->rng ^= fs->rng >> 12;
	fs->rng ^= fs->rng << 25;
	fs->rng ^= fs->rng >> 27;
	return fs->rng * 2685821657736338717ull;
}

/* mem_fault - count one op of kind; 1 if it must fail now (locked). */
static int mem_fault(struct mem_fs *fs, enum mmdb_fault kind)
{
	fs->count[kind]++;
	if (fs->fail_at[kind] == 0 || fs->count[kind] < fs->fail_at[kind])
		return 0;
	if (fs->count[kind] == fs->fail_at[kind] || fs->persist[kind]) {
		fs->fired = 1;
		return 1;
	}
	return 0;
}

/* mem_reserve - grow a byte array to at least n (zero-filled). */
static int mem_reserve(uint8_t **p, size_t *cap, size_t n)
{
	size_t ncap;
	uint8_t *np;

	if (n <= *cap)
		return NSR_OK;
	ncap = *cap ? *cap : 4096;
	while (ncap < n)
		ncap *= 2;
	np = realloc(*p, ncap);
	if (!np)
		return NSR_ERR_NOMEM;
	memset(np + *cap, 0, ncap - *cap);
	*p = np;
	*cap = ncap;
	return NSR_OK;
}

/* mem_find - index of path or -1 (locked). */
static long mem_find(struct mem_fs *fs, const char *path)
{
	for (size_t i = 0; i < fs->nfiles; i++)
		if (strcmp(fs->files[i].path, path) == 0)
			return (long)i;
	return -1;
}

/* mem_create - add an empty file, in a slot a reset left or a new one
 * (locked).  A reused slot keeps its zeroed buffers. */
static long mem_create(struct mem_fs *fs, const char *path)
{
	struct mem_node *n;
	char *np;

	if (fs->nfiles == MEM_MAXFILES)
		return -1;
	np = strdup(path);
	if (!np)
		return -1;
	n = &fs->files[fs->nfiles];
	if (fs->nfiles == fs->nslots) {
		memset(n, 0, sizeof(*n));
		fs->nslots++;
	}
	free(n->path);
	n->path = np;
	return (long)fs->nfiles++;
}

/* mem_open - open or create an in-memory file. */
static int mem_open(const struct mmdb_vfs *vfs, const char *path,
		    unsigned flags, struct mmdb_file **out)
{
	struct mem_fs *fs = fs_of(vfs);
	struct mmdb_file *f = NULL;
	long idx;
	int rc = NSR_OK;

	*out = NULL;
	pthread_mutex_lock(&fs->mu);
	if (fs->crashed) {
		rc = NSR_ERR_IO;
		goto out;
	}
	idx = mem_find(fs, path);
	if (idx < 0 && !(flags & MMDB_VFS_CREATE)) {
		rc = NSR_ERR_NOTFOUND;
		goto out;
	}
	if (idx < 0)
		idx = mem_create(fs, path);
	f = malloc(sizeof(*f));
	if (idx < 0 || !f) {
		rc = NSR_ERR_NOMEM;
		goto out;
	}
	f->fs = fs;
	f->idx = (size_t)idx;
	*out = f;
	f = NULL;
out:
	pthread_mutex_unlock(&fs->mu);
	free(f);
	return rc;
}

/* mem_close - free the handle (the file stays). */
static void mem_close(struct mmdb_file *f)
{
	free(f);
}

/* mem_read - copy out of the current image. */
static int mem_read(struct mmdb_file *f, void *buf, size_t n, uint64_t off,
		    size_t *got)
{
	struct mem_fs *fs = f->fs;
	struct mem_node *nd;
	int rc = NSR_OK;

	*got = 0;
	pthread_mutex_lock(&fs->mu);
	nd = &fs->files[f->idx];
	if (fs->crashed)
		rc = NSR_ERR_IO;
	else if (off < nd->cur_len) {
		*got = NSR_MIN(n, nd->cur_len - (size_t)off);
		memcpy(buf, nd->cur + off, *got);
	}
	pthread_mutex_unlock(&fs->mu);
	return rc;
}

/* mem_mark - mark sectors [off, off+n) dirty (locked). */
static int mem_mark(struct mem_node *nd, uint64_t off, size_t n)
{
	size_t first = (size_t)(off / MEM_SECTOR);
	size_t last = (size_t)((off + n + MEM_SECTOR - 1) / MEM_SECTOR);
	int rc = mem_reserve(&nd->dirty, &nd->dirty_len, last);

	if (rc != NSR_OK)
		return rc;
	memset(nd->dirty + first, 1, last - first);
	return NSR_OK;
}

/* mem_write - write into the current image, marking sectors unsynced. */
static int mem_write(struct mmdb_file *f, const void *buf, size_t n,
		     uint64_t off)
{
	struct mem_fs *fs = f->fs;
	struct mem_node *nd;
	int rc = NSR_OK;

	pthread_mutex_lock(&fs->mu);
	nd = &fs->files[f->idx];
	if (fs->crashed || mem_fault(fs, MMDB_FAULT_WRITE)) {
		rc = NSR_ERR_IO;
		goto out;
	}
	rc = mem_reserve(&nd->cur, &nd->cap, (size_t)off + n);
	if (rc == NSR_OK)
		rc = mem_mark(nd, off, n);
	if (rc != NSR_OK)
		goto out;
	memcpy(nd->cur + off, buf, n);
	if (off + n > nd->cur_len)
		nd->cur_len = (size_t)off + n;
out:
	pthread_mutex_unlock(&fs->mu);
	return rc;
}

/* mem_sync_node - durable image := current image (locked). */
static int mem_sync_node(struct mem_node *nd)
{
	int rc = mem_reserve(&nd->dur, &nd->dur_cap, nd->cur_len);

	if (rc != NSR_OK)
		return rc;
	if (nd->cur_len)
		memcpy(nd->dur, nd->cur, nd->cur_len);
	nd->dur_len = nd->cur_len;
	if (nd->dirty)
		memset(nd->dirty, 0, nd->dirty_len);
	return NSR_OK;
}

/* mem_sync - make one file durable, or lose power if armed. */
static int mem_sync(struct mmdb_file *f)
{
	struct mem_fs *fs = f->fs;
	int rc;

	pthread_mutex_lock(&fs->mu);
	if (fs->crashed) {
		rc = NSR_ERR_IO;
	} else if (mem_fault(fs, MMDB_FAULT_POWER)) {
		fs->crashed = 1;
		rc = NSR_ERR_IO;
	} else if (mem_fault(fs, MMDB_FAULT_SYNC)) {
		rc = NSR_ERR_IO;
	} else {
		rc = mem_sync_node(&fs->files[f->idx]);
	}
	pthread_mutex_unlock(&fs->mu);
	return rc;
}

/* mem_size - current length. */
static int mem_size(struct mmdb_file *f, uint64_t *size)
{
	struct mem_fs *fs = f->fs;
	int rc = NSR_OK;

	pthread_mutex_lock(&fs->mu);
	*size = fs->files[f->idx].cur_len;
	if (fs->crashed)
		rc = NSR_ERR_IO;
	pthread_mutex_unlock(&fs->mu);
	return rc;
}

/* mem_truncate - set the current length (counts as a write). */
static int mem_truncate(struct mmdb_file *f, uint64_t size)
{
	struct mem_fs *fs = f->fs;
	struct mem_node *nd;
	int rc = NSR_OK;

	pthread_mutex_lock(&fs->mu);
	nd = &fs->files[f->idx];
	if (fs->crashed || mem_fault(fs, MMDB_FAULT_WRITE)) {
		rc = NSR_ERR_IO;
		goto out;
	}
	rc = mem_reserve(&nd->cur, &nd->cap, (size_t)size);
	if (rc != NSR_OK)
		goto out;
	if (size < nd->cur_len)
		memset(nd->cur + size, 0, nd->cur_len - (size_t)size);
	nd->cur_len = (size_t)size;
out:
	pthread_mutex_unlock(&fs->mu);
	return rc;
}

/* mem_lock - always granted (one process). */
static int mem_lock(struct mmdb_file *f)
{
	NSR_UNUSED(f);
	return NSR_OK;
}

/* mem_rename - rename a file (durable at once, like a journaled fs after
 * the directory sync that callers do anyway). */
static int mem_rename(const struct mmdb_vfs *vfs, const char *from,
		      const char *to)
{
	struct mem_fs *fs = fs_of(vfs);
	long src, dst;
	int rc = NSR_OK;
	char *np;

	pthread_mutex_lock(&fs->mu);
	src = mem_find(fs, from);
	dst = mem_find(fs, to);
	if (fs->crashed) {
		rc = NSR_ERR_IO;
	} else if (src < 0) {
		rc = NSR_ERR_NOTFOUND;
	} else {
		np = strdup(to);
		if (!np) {
			rc = NSR_ERR_NOMEM;
			goto out;
		}
		free(fs->files[src].path);
		fs->files[src].path = np;
		if (dst >= 0) {
			/* The old target becomes an unnamed, empty slot
			 * (open handles keep their index). */
			struct mem_node *d = &fs->files[dst];

			d->path[0] = '\0';
			memset(d->cur, 0, d->cur_len);
			d->cur_len = d->dur_len = 0;
		}
	}
out:
	pthread_mutex_unlock(&fs->mu);
	return rc;
}

/* mem_sync_dir - nothing to do: creations are durable at once. */
static int mem_sync_dir(const struct mmdb_vfs *vfs, const char *dir)
{
	NSR_UNUSED(dir);
	return fs_of(vfs)->crashed ? NSR_ERR_IO : NSR_OK;
}

/* mem_alloc - malloc that can be made to fail. */
static void *mem_alloc(const struct mmdb_vfs *vfs, size_t n)
{
	struct mem_fs *fs = fs_of(vfs);
	int fail;

	pthread_mutex_lock(&fs->mu);
	fail = mem_fault(fs, MMDB_FAULT_ALLOC);
	pthread_mutex_unlock(&fs->mu);
	return fail ? NULL : malloc(n);
}

/* mmdb_vfs_mem_new - a new empty in-memory file system. */
struct mmdb_vfs *mmdb_vfs_mem_new(uint64_t seed)
{
	struct mmdb_vfs *vfs = calloc(1, sizeof(*vfs));
	struct mem_fs *fs = calloc(1, sizeof(*fs));

	if (!vfs || !fs) {
		free(vfs);
		free(fs);
		return NULL;
	}
	pthread_mutex_init(&fs->mu, NULL);
	fs->rng = seed | 1;
	vfs->open = mem_open;
	vfs->close = mem_close;
	vfs->read = mem_read;
	vfs->write = mem_write;
	vfs->sync = mem_sync;
	vfs->size = mem_size;
	vfs->truncate = mem_truncate;
	vfs->lock = mem_lock;
	vfs->rename = mem_rename;
	vfs->sync_dir = mem_sync_dir;
	vfs->alloc = mem_alloc;
	vfs->ctx = fs;
	return vfs;
}

/* mmdb_vfs_mem_free - free every file and the vfs. */
void mmdb_vfs_mem_free(struct mmdb_vfs *vfs)
{
	struct mem_fs *fs;

	if (!vfs)
		return;
	fs = fs_of(vfs);
	for (size_t i = 0; i < fs->nslots; i++) {
		free(fs->files[i].path);
		free(fs->files[i].cur);
		free(fs->files[i].dur);
		free(fs->files[i].dirty);
	}
	pthread_mutex_destroy(&fs->mu);
	free(fs);
	free(vfs);
}

/* mmdb_vfs_mem_fail_at - arm or disarm a fault. */
void mmdb_vfs_mem_fail_at(struct mmdb_vfs *vfs, enum mmdb_fault kind,
			  uint64_t n, int persist)
{
	struct mem_fs *fs = fs_of(vfs);

	pthread_mutex_lock(&fs->mu);
	fs->fail_at[kind] = n ? fs->count[kind] + n : 0;
	fs->persist[kind] = persist;
	fs->fired = 0;
	pthread_mutex_unlock(&fs->mu);
}

/* mmdb_vfs_mem_fired - whether an armed fault happened. */
int mmdb_vfs_mem_fired(const struct mmdb_vfs *vfs)
{
	struct mem_fs *fs = fs_of(vfs);
	int fired;

	pthread_mutex_lock(&fs->mu);
	fired = fs->fired;
	pthread_mutex_unlock(&fs->mu);
	return fired;
}

/* mmdb_vfs_mem_count - operations of one kind so far. */
uint64_t mmdb_vfs_mem_count(const struct mmdb_vfs *vfs, enum mmdb_fault kind)
{
	struct mem_fs *fs = fs_of(vfs);
	uint64_t n;

	pthread_mutex_lock(&fs->mu);
	/* every sync is counted under POWER; SYNC only counts those that
	 * got past the power check */
	n = fs->count[kind == MMDB_FAULT_SYNC ? MMDB_FAULT_POWER : kind];
	pthread_mutex_unlock(&fs->mu);
	return n;
}

/* crash_node - rebuild one file after a power loss (locked). */
static void crash_node(struct mem_fs *fs, struct mem_node *nd, int garble)
{
	size_t len = (mem_rng(fs) & 1) ? nd->cur_len : nd->dur_len;
	uint8_t *img;
	size_t cap = 0;

	img = NULL;
	if (mem_reserve(&img, &cap, len ? len : 1) != NSR_OK)
		abort();
	if (nd->dur)
		memcpy(img, nd->dur, NSR_MIN(len, nd->dur_len));
	for (size_t s = 0; s * MEM_SECTOR < len; s++) {
		size_t off = s * MEM_SECTOR;
		size_t n = NSR_MIN((size_t)MEM_SECTOR, len - off);
		uint64_t r;

		if (s >= nd->dirty_len || !nd->dirty[s])
			continue;
		r = mem_rng(fs) % 4;
		if (r == 0 || r == 1) {		/* the write got through */
			if (off < nd->cur_len)
				memcpy(img + off, nd->cur + off,
				       NSR_MIN(n, nd->cur_len - off));
		} else if (r == 3 && garble) {	/* torn sector */
			for (size_t i = 0; i < n; i++)
				img[off + i] = (uint8_t)mem_rng(fs);
		}
	}
	free(nd->cur);
	nd->cur = img;
	nd->cap = cap;
	nd->cur_len = len;
	if (mem_sync_node(nd) != NSR_OK)
		abort();
}

/* mmdb_vfs_mem_crash - reboot after a power loss. */
void mmdb_vfs_mem_crash(struct mmdb_vfs *vfs, int garble)
{
	struct mem_fs *fs = fs_of(vfs);

	pthread_mutex_lock(&fs->mu);
	for (size_t i = 0; i < fs->nfiles; i++)
		crash_node(fs, &fs->files[i], garble);
	fs->crashed = 0;
	memset(fs->fail_at, 0, sizeof(fs->fail_at));
	pthread_mutex_unlock(&fs->mu);
}

/* mmdb_vfs_mem_put - install a file with the given (synced) content. */
int mmdb_vfs_mem_put(struct mmdb_vfs *vfs, const char *path, const void *p,
		     size_t n)
{
	struct mem_fs *fs = fs_of(vfs);
	struct mem_node *nd;
	long idx;
	int rc;

	pthread_mutex_lock(&fs->mu);
	idx = mem_find(fs, path);
	if (idx < 0)
		idx = mem_create(fs, path);
	if (idx < 0) {
		rc = NSR_ERR_NOMEM;
		goto out;
	}
	nd = &fs->files[idx];
	rc = mem_reserve(&nd->cur, &nd->cap, n ? n : 1);
	if (rc != NSR_OK)
		goto out;
	if (n)
		memcpy(nd->cur, p, n);
	if (nd->cur_len > n)	/* zero past the end, as mem_reserve left it */
		memset(nd->cur + n, 0, nd->cur_len - n);
	nd->cur_len = n;
	rc = mem_sync_node(nd);
out:
	pthread_mutex_unlock(&fs->mu);
	return rc;
}

/* mmdb_vfs_mem_reset - back to the state of mmdb_vfs_mem_new(seed), no
 * file and nothing armed or counted, but keep the file buffers for reuse. */
void mmdb_vfs_mem_reset(struct mmdb_vfs *vfs, uint64_t seed)
{
	struct mem_fs *fs = fs_of(vfs);

	pthread_mutex_lock(&fs->mu);
	for (size_t i = 0; i < fs->nfiles; i++) {
		struct mem_node *nd = &fs->files[i];

		memset(nd->cur, 0, nd->cur_len);
		if (nd->dirty)
			memset(nd->dirty, 0, nd->dirty_len);
		nd->cur_len = nd->dur_len = 0;
	}
	fs->nfiles = 0;
	memset(fs->count, 0, sizeof(fs->count));
	memset(fs->fail_at, 0, sizeof(fs->fail_at));
	memset(fs->persist, 0, sizeof(fs->persist));
	fs->fired = 0;
	fs->crashed = 0;
	fs->rng = seed | 1;
	pthread_mutex_unlock(&fs->mu);
}
