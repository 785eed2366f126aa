/*
 * mmdb_vfs.h - the I/O shim under the media database pager: every file
 * operation and every large allocation of the engine goes through one ops
 * table, as SQLite's VFS does, so tests can inject faults and power loss.
 *
 * Two implementations ship with the library:
 *   mmdb_vfs_posix()   real files (pread/pwrite/fdatasync, flock);
 *   mmdb_vfs_mem_new() files in memory with fault injection:
 *     - fail the N-th write, sync or allocation (counted from arming),
 *     - power loss at the N-th sync: that sync does not happen, every later
 *       operation fails with NSR_ERR_IO, and mmdb_vfs_mem_crash() then turns
 *       every file back into its last synced image, keeping, dropping or
 *       garbling each unsynced 512-byte sector (pseudo-randomly, seeded).
 *
 * All functions return NSR_OK or a negative NSR_ERR_* code.
 */
#ifndef NSR_MMDB_VFS_H
#define NSR_MMDB_VFS_H

#include <stddef.h>
#include <stdint.h>

struct mmdb_file;

#define MMDB_VFS_CREATE 0x1
#define MMDB_VFS_READONLY 0x2

struct mmdb_vfs {
	/* open - open path (NSR_ERR_NOTFOUND if absent and not CREATE). */
	int (*open)(const struct mmdb_vfs *vfs, const char *path,
		    unsigned flags, struct mmdb_file **out);
	/* close - close and free f (NULL is a no-op). */
	void (*close)(struct mmdb_file *f);
	/* read - read up to n bytes at off; *got < n only at end of file. */
	int (*read)(struct mmdb_file *f, void *buf, size_t n, uint64_t off,
		    size_t *got);
	/* write - write all n bytes at off. */
	int (*write)(struct mmdb_file *f, const void *buf, size_t n,
		     uint64_t off);
	/* sync - make every write so far durable (fdatasync). */
	int (*sync)(struct mmdb_file *f);
	/* size - current file size. */
	int (*size)(struct mmdb_file *f, uint64_t *size);
	/* truncate - set the file size. */
	int (*truncate)(struct mmdb_file *f, uint64_t size);
	/* lock - take an exclusive advisory lock (NSR_ERR_BUSY if held). */
	int (*lock)(struct mmdb_file *f);
	/* rename - atomically replace path to with path from. */
	int (*rename)(const struct mmdb_vfs *vfs, const char *from,
		      const char *to);
	/* sync_dir - make a file creation or rename in dir durable. */
	int (*sync_dir)(const struct mmdb_vfs *vfs, const char *dir);
	/* alloc - malloc for engine buffers (NULL on failure); free() frees. */
	void *(*alloc)(const struct mmdb_vfs *vfs, size_t n);
	void *ctx;	/* implementation data */
};

/* mmdb_vfs_posix - the process-wide POSIX implementation. */
const struct mmdb_vfs *mmdb_vfs_posix(void);

/* mmdb_vfs_alloc - vfs->alloc, or malloc if vfs has none. */
void *mmdb_vfs_alloc(const struct mmdb_vfs *vfs, size_t n);

/* ---- in-memory implementation with fault injection (tests) ---------- */

/* mmdb_vfs_mem_new - a fresh empty in-memory file system; free with
 * mmdb_vfs_mem_free() after every database on it is closed. */
struct mmdb_vfs *mmdb_vfs_mem_new(uint64_t seed);
void mmdb_vfs_mem_free(struct mmdb_vfs *vfs);
/* mmdb_vfs_mem_reset - test knob: make vfs like a fresh
 * mmdb_vfs_mem_new(seed) again (no file, no fault armed, counts at 0)
 * while keeping the file buffers, so a fuzzer that runs one input after
 * another does not reallocate and fault in a whole image each time.  No
 * database may be open on vfs. */
void mmdb_vfs_mem_reset(struct mmdb_vfs *vfs, uint64_t seed);

/* Fault kinds for mmdb_vfs_mem_fail_at. */
enum mmdb_fault {
	MMDB_FAULT_WRITE,	/* the N-th write returns NSR_ERR_IO */
	MMDB_FAULT_SYNC,	/* the N-th sync returns NSR_ERR_IO */
	MMDB_FAULT_ALLOC,	/* the N-th alloc returns NULL */
	MMDB_FAULT_POWER	/* power is lost at the N-th sync */
};

/* mmdb_vfs_mem_fail_at - arm one fault at the n-th (1-based) operation of
 * its kind from now; n = 0 disarms.  persist: fail every later one too. */
void mmdb_vfs_mem_fail_at(struct mmdb_vfs *vfs, enum mmdb_fault kind,
			  uint64_t n, int persist);
/* mmdb_vfs_mem_fired - nonzero once an armed fault has happened. */
int mmdb_vfs_mem_fired(const struct mmdb_vfs *vfs);
/* mmdb_vfs_mem_crash - simulate the reboot after a power loss (see top);
 * garble: also corrupt some unsynced sectors instead of only dropping. */
void mmdb_vfs_mem_crash(struct mmdb_vfs *vfs, int garble);
/* mmdb_vfs_mem_count - operations of kind seen so far (POWER = syncs). */
uint64_t mmdb_vfs_mem_count(const struct mmdb_vfs *vfs, enum mmdb_fault kind);
/* mmdb_vfs_mem_put - create/replace file path with content (fuzzing);
 * the content counts as synced. */
int mmdb_vfs_mem_put(struct mmdb_vfs *vfs, const char *path, const void *p,
		     size_t n);

#endif /* NSR_MMDB_VFS_H */
