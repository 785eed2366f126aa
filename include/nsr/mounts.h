/*
 * mounts.h - a host's local file systems, as the save set "All" means
 * them: the mount points of /proc/self/mounts (or a file in that format)
 * whose file system type is neither a pseudo file system (proc, sysfs,
 * tmpfs, cgroup, ...) nor a network one (nfs, cifs, fuse, ...).  Each
 * mount point appears once, in the order of the table (a point mounted
 * twice counts once); octal escapes (\040) are decoded.
 */
#ifndef NSR_MOUNTS_H
#define NSR_MOUNTS_H

#include <stddef.h>

/* At most this many mount points are returned. */
#define NSR_MOUNTS_MAX 64

struct nsr_mounts {
	size_t n;
	char *path[NSR_MOUNTS_MAX];
};

/* nsr_mounts_is_local - 1 if fstype is a local, non-pseudo type. */
int nsr_mounts_is_local(const char *fstype);

/* nsr_mounts_parse - the local mount points of a mount table text[len].
 * NSR_OK, NSR_ERR_CORRUPT for a line that is not "DEV DIR TYPE ...",
 * NSR_ERR_LIMIT over NSR_MOUNTS_MAX, NSR_ERR_NOMEM.  m is emptied first;
 * free it with nsr_mounts_free whatever the result. */
int nsr_mounts_parse(const char *text, size_t len, struct nsr_mounts *m);

/* nsr_mounts_read - nsr_mounts_parse of the file path (NULL:
 * /proc/self/mounts); NSR_ERR_SYSTEM when it cannot be read. */
int nsr_mounts_read(const char *path, struct nsr_mounts *m);

/* nsr_mounts_free - free the paths; m is empty after. */
void nsr_mounts_free(struct nsr_mounts *m);

#endif /* NSR_MOUNTS_H */
