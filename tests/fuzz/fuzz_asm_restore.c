/*
 * fuzz_asm_restore.c - the restore engine on hostile streams: each input
 * (after a first byte giving the piece size and, by its lowest bit,
 * whether two writer workers write the small files) is restored into a fresh
 * directory under $NSR_TEST_TMPDIR (or /tmp), which is then removed.  With
 * the first byte's second bit, its two halves are two streams restored
 * side by side by two restores sharing one registry of split files, fed
 * in turns (the pieces of a split file meet across save sets).  Any
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

#include "fuzz_tmp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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

/* two - the input's halves as two streams restored side by side with
 * one registry of split files, fed step bytes each in turn. */
static void two(struct nsr_restore_opts *o, const uint8_t *data, size_t size,
		size_t step)
{
	struct nsr_restore *r[2] = { NULL, NULL };
	const uint8_t *p[2] = { data, data + size / 2 };
	size_t n[2] = { size / 2, size - size / 2 };
	int rc[2] = { NSR_OK, NSR_OK };

	if (nsr_restore_split_new(&o->split) != NSR_OK)
		return;
	o->dirs_last = 1;
	if (nsr_restore_new(&r[0], o, NULL) == NSR_OK &&
	    nsr_restore_new(&r[1], o, NULL) == NSR_OK) {
		for (size_t at = 0; at < n[0] || at < n[1]; at += step)
			for (int k = 0; k < 2; k++)
				if (at < n[k] && rc[k] == NSR_OK)
					rc[k] = nsr_restore_feed(
						r[k], p[k] + at,
						NSR_MIN(step, n[k] - at));
		nsr_restore_flush(r[0]);
		nsr_restore_flush(r[1]);
		nsr_restore_split_end(o->split);
		nsr_restore_finish(r[0]);
		nsr_restore_finish(r[1]);
	}
	nsr_restore_free(r[0]);
	nsr_restore_free(r[1]);
	nsr_restore_split_free(o->split);
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
	if (step & 32)
		two(&o, data, size, step);
	else if (nsr_restore_new(&r, &o, NULL) == NSR_OK) {
		for (size_t i = 0; i < size && rc == NSR_OK; i += step)
			rc = nsr_restore_feed(r, data + i,
					      NSR_MIN(step, size - i));
		nsr_restore_finish(r);
		nsr_restore_free(r);
	}
	if (!only_dest(dir))
		abort(); /* something was written outside dest */
	fuzz_rmrf(dir);
	return 0;
}
