/*
 * treecmp.h - compare two directory trees the way a restore must match
 * its original: object types, file contents, mode, uid, gid, mtime with
 * nanoseconds, symlink targets, device numbers, extended attributes
 * (names and values, which include ACLs) and hard-link structure (which
 * names share an inode).  atime is not compared (reading a tree
 * changes it), nor are directory sizes, link counts outside the trees,
 * or the ctime.
 *
 * Objects are reached relative to their directory's descriptor, so trees
 * of any depth with paths longer than PATH_MAX compare like others.
 *
 * Used by tools/nsrtreecmp and by tests to prove a restore is identical.
 */
#ifndef NSR_TREECMP_H
#define NSR_TREECMP_H

#include <stddef.h>

enum nsr_treecmp_flags {
	NSR_TREECMP_NO_OWNER = 1, /* do not compare uid/gid */
	NSR_TREECMP_NO_MTIME = 2, /* do not compare mtime */
	NSR_TREECMP_NO_ROOT = 4,  /* skip the metadata of the two roots */
	NSR_TREECMP_NO_XATTR = 8, /* do not compare extended attributes */
};

/* One difference: rel is the path relative to the roots ("." for the
 * roots themselves), what a short description ("only in A", "mode 0644 !=
 * 0600", "content differs", ...). */
typedef void (*nsr_treecmp_diff_fn)(void *ctx, const char *rel,
				    const char *what);

/* nsr_treecmp - compare trees a and b; every difference goes to diff (may
 * be NULL) and is counted in *ndiff.  NSR_OK when the comparison ran (even
 * with differences), NSR_ERR_SYSTEM (errno set) if a root cannot be read,
 * NSR_ERR_NOMEM.  Unreadable objects below the roots count as differences. */
int nsr_treecmp(const char *a, const char *b, int flags,
		nsr_treecmp_diff_fn diff, void *ctx, size_t *ndiff);

#endif /* NSR_TREECMP_H */
