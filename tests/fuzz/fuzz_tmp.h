/*
 * fuzz_tmp.h - what the fuzz targets that write files share: removing
 * the fresh directory each input worked in.
 */
#ifndef FUZZ_TMP_H
#define FUZZ_TMP_H

#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>

#include "nsr/compat.h"

/* fuzz_rm_one - nftw callback: remove one entry.  A directory restored
 * read-only cannot be emptied before it is writable: the nftw before
 * the removal (fuzz_rmrf) makes it so.  Nothing else is changed, as a
 * chmod would follow a restored symlink out of the tree. */
static inline int fuzz_rm_one(const char *p, const struct stat *st, int flag,
			      struct FTW *f)
{
	NSR_UNUSED(st);
	NSR_UNUSED(flag);
	NSR_UNUSED(f);
	return remove(p);
}

/* fuzz_open_dir - nftw callback: make a directory writable. */
static inline int fuzz_open_dir(const char *p, const struct stat *st,
				int flag, struct FTW *f)
{
	NSR_UNUSED(st);
	NSR_UNUSED(f);
	if (flag == FTW_D || flag == FTW_DNR)
		chmod(p, 0700);
	return 0;
}

/* fuzz_rmrf - remove the tree at dir, not following symlinks. */
static inline void fuzz_rmrf(const char *dir)
{
	nftw(dir, fuzz_open_dir, 16, FTW_PHYS);
	nftw(dir, fuzz_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

#endif /* FUZZ_TMP_H */
