/*
 * nsr_test.c - temporary directories for unit tests.
 */
#include "nsr/compat.h"

#include <ftw.h>
#include <unistd.h>

#include "nsr/fileio.h"
#include "nsr/xmalloc.h"
#include "nsr_test.h"

/* nsr_test_tmpdir - fresh private directory for one test. */
char *nsr_test_tmpdir(const char *tag)
{
	const char *base = getenv("NSR_TEST_TMPDIR");
	char *tmpl;

	if (!base || !*base)
		base = "/tmp";
	nsr_mkdir_p(base, 0755);
	tmpl = nsr_xasprintf("%s/%s.XXXXXX", base, tag);
	if (!mkdtemp(tmpl)) {
		fprintf(stderr, "mkdtemp %s: %s\n", tmpl, strerror(errno));
		abort();
	}
	return tmpl;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	NSR_UNUSED(st);
	NSR_UNUSED(flag);
	NSR_UNUSED(f);
	return remove(p);
}

/* nsr_test_rmrf - remove a tree (depth first, no symlink following). */
void nsr_test_rmrf(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}
