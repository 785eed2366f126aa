/*
 * fuzz_asm_restore.c - the restore engine on hostile streams: each input
 * (after a first byte giving the piece size and, by its lowest bit,
 * whether two writer workers write the small files) is restored into a fresh
 * directory under $NSR_TEST_TMPDIR (or /tmp), which is then removed.  Any
 * crash or sanitizer report is a failure; so is a file appearing next to
 * the destination (the stream escaped it).
 */
#include "nsr/compat.h"

#include <dirent.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nsr/err.h"
#include "nsr/restore.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* rm_one - nftw callback: remove one entry. */
static int rm_one(const char *p, const struct stat *st, int flag,
		  struct FTW *f)
{
	NSR_UNUSED(st);
	NSR_UNUSED(flag);
	NSR_UNUSED(f);
	chmod(p, 0700); /* restored read-only directories */
	return remove(p);
}

/* only_dest - is dest the only entry of dir? */
static int only_dest(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int ok = 1;

	if (d == NULL)
		return 1;
	for (de = readdir(d); de != NULL; de = readdir(d))
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0 &&
		    strcmp(de->d_name, "dest") != 0)
			ok = 0;
	closedir(d);
	return ok;
}

/* LLVMFuzzerTestOneInput - fuzz entry point. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *base = getenv("NSR_TEST_TMPDIR");
	char dir[PATH_MAX], dest[PATH_MAX + 8];
	struct nsr_restore_opts o;
	struct nsr_restore *r = NULL;
	size_t step;
	int rc = NSR_OK;

	if (size < 1)
		return 0;
	step = (size_t)data[0] * 16 + 1;
	data++;
	size--;
	if (base == NULL || *base == '\0')
		base = "/tmp";
	mkdir(base, 0755);
	snprintf(dir, sizeof(dir), "%s/fuzzrestore.XXXXXX", base);
	if (mkdtemp(dir) == NULL)
		return 0;
	snprintf(dest, sizeof(dest), "%s/dest", dir);
	memset(&o, 0, sizeof(o));
	o.dest = dest;
	o.conflict = NSR_RESTORE_RENAME;
	o.workers = (step & 16) ? 2 : 0; /* writer workers for half */
	if (nsr_restore_new(&r, &o, NULL) == NSR_OK) {
		for (size_t i = 0; i < size && rc == NSR_OK; i += step)
			rc = nsr_restore_feed(r, data + i,
					      NSR_MIN(step, size - i));
		nsr_restore_finish(r);
		nsr_restore_free(r);
	}
	if (!only_dest(dir))
		abort(); /* something was written outside dest */
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}
