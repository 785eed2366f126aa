/*
 * fuzz_boot.c - what nsrdr does with a restored bootstrap (src/boot): the
 * restored staging directory comes from a volume, so its tree is hostile.
 * Byte 0 picks the mode.  Even: the rest is a path, as the restore engine
 * reports it; nsr_boot_stage_of either refuses it or gives a proper
 * prefix of it ending in "/bootstrap", followed by "/mmdb".  Odd: the
 * rest builds a tree in a fresh staging directory, two bytes per entry
 * (what: file, directory, symbolic link to a directory outside, step up;
 * which name of a small set that includes every name install looks for),
 * and nsr_boot_install moves it into a fresh root.  Then nothing may have
 * appeared outside the staging directory and the root (a link was
 * followed), the outside directory stays empty, and a success means the
 * root has its media database file.
 */
#include "nsr/compat.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nsr/boot.h"
#include "nsr/buf.h"
#include "nsr/err.h"

#define FUZZ_DEPTH_MAX 8

#include "fuzz_tmp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[] = {
	"mmdb", "jobsdb", "res", "index", "tls", "nsrdb", "mm", "c1",
	"ca.pem", "bootstrap", "x", "res.1",
};

/* count - entries of dir other than those named in keep (NULL-ended). */
static int count(const char *dir, const char *const *keep)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		int kept = !strcmp(de->d_name, ".") ||
			   !strcmp(de->d_name, "..");

		for (size_t i = 0; keep && keep[i]; i++)
			kept |= strcmp(de->d_name, keep[i]) == 0;
		n += !kept;
	}
	closedir(d);
	return n;
}

/* check_stage_of - mode 0: the path's staging directory. */
static void check_stage_of(const uint8_t *data, size_t size)
{
	char path[512], out[512];
	size_t n = NSR_MIN(size, sizeof(path) - 1), len;

	memcpy(path, data, n);
	path[n] = '\0';
	if (nsr_boot_stage_of(path, out, sizeof(out)) != NSR_OK)
		return;
	len = strlen(out);
	if (len < sizeof("/bootstrap") - 1 ||
	    strncmp(path, out, len) != 0 ||
	    strcmp(path + len, "/" NSR_BOOT_MMDB) != 0 ||
	    strcmp(out + len - (sizeof("/bootstrap") - 1), "/bootstrap"))
		abort();
}

/* build - the tree the input describes, below stage. */
static void build(const char *stage, const char *outside,
		  const uint8_t *data, size_t size)
{
	char cur[4096];
	size_t depth = 0, n = strlen(stage);

	if (n >= sizeof(cur))
		return;
	memcpy(cur, stage, n + 1);
	for (size_t i = 0; i + 1 < size; i += 2) {
		const char *name = names[data[i + 1] % NSR_ARRAY_SIZE(names)];
		char p[4200];
		int fd;

		snprintf(p, sizeof(p), "%s/%s", cur, name);
		switch (data[i] % 4) {
		case 0:
			fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW,
				  0600);
			if (fd >= 0)
				close(fd);
			break;
		case 1:
			if (depth < FUZZ_DEPTH_MAX &&
			    (mkdir(p, 0700) == 0 || errno == EEXIST) &&
			    strlen(p) < sizeof(cur)) {
				struct stat st;

				if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
					memcpy(cur, p, strlen(p) + 1);
					depth++;
				}
			}
			break;
		case 2:
			(void)symlink(outside, p);
			break;
		default:
			if (depth > 0) {
				*strrchr(cur, '/') = '\0';
				depth--;
			}
			break;
		}
	}
}

/* LLVMFuzzerTestOneInput - fuzz entry point. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keep[] = {"stage", "root", "outside", NULL};
	const char *base = getenv("NSR_TEST_TMPDIR");
	char dir[PATH_MAX], stage[PATH_MAX + 8], root[PATH_MAX + 8];
	char outside[PATH_MAX + 16], mmdb[PATH_MAX + 16];
	struct nsr_buf err;
	int rc;

	if (size < 1)
		return 0;
	if (!(data[0] & 1)) {
		check_stage_of(data + 1, size - 1);
		return 0;
	}
	if (base == NULL || *base == '\0')
		base = "/tmp";
	mkdir(base, 0755);
	snprintf(dir, sizeof(dir), "%s/fuzzboot.XXXXXX", base);
	if (mkdtemp(dir) == NULL)
		return 0;
	snprintf(stage, sizeof(stage), "%s/stage", dir);
	snprintf(root, sizeof(root), "%s/root", dir);
	snprintf(outside, sizeof(outside), "%s/outside", dir);
	if (mkdir(stage, 0700) || mkdir(root, 0700) || mkdir(outside, 0700))
		abort();
	build(stage, outside, data + 1, size - 1);
	nsr_buf_init(&err, 0);
	rc = nsr_boot_install(stage, root, &err);
	nsr_buf_release(&err);
	if (count(dir, keep) != 0 || count(outside, NULL) != 0)
		abort(); /* something went outside stage and root */
	snprintf(mmdb, sizeof(mmdb), "%s/mm/mmdb", root);
	if (rc == NSR_OK && access(mmdb, F_OK) != 0 &&
	    faccessat(AT_FDCWD, mmdb, F_OK, AT_SYMLINK_NOFOLLOW) != 0)
		abort(); /* success without a media database */
	fuzz_rmrf(dir);
	return 0;
}
