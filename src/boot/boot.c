/*
 * boot.c - the bookkeeping of a bootstrap (boot.h): the lock that keeps
 * two bootstraps of one root apart, the staging directory, whether a
 * root is empty enough for a disaster recovery, and which bootstrap save
 * set of a volume to restore.
 */
#include "nsr/compat.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nsr/boot.h"
#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"

#define BOOT_LOCK_POLL_MS 200

/* nsr_boot_lock - <root>/bootstrap.lock, held with flock. */
int nsr_boot_lock(const char *root, unsigned wait_ms, int *fd,
		  struct nsr_buf *err)
{
	char *path = nsr_path_join(root, NSR_BOOT_DIR ".lock");
	const struct timespec poll = {0, BOOT_LOCK_POLL_MS * 1000000L};
	unsigned waited = 0;
	int f;

	*fd = -1;
	if (path == NULL)
		return NSR_ERR_NOMEM;
	f = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (f < 0) {
		nsr_buf_addf(err, "cannot open %s: %s", path, strerror(errno));
		free(path);
		return NSR_ERR_SYSTEM;
	}
	while (flock(f, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK &&
	       waited < wait_ms) {
		nanosleep(&poll, NULL);
		waited += BOOT_LOCK_POLL_MS;
	}
	if (flock(f, LOCK_EX | LOCK_NB) != 0) {
		nsr_buf_addf(err, "another bootstrap of %s is under way (%s "
			     "is locked): wait for it to end", root, path);
		close(f);
		free(path);
		return NSR_ERR_BUSY;
	}
	free(path);
	*fd = f;
	return NSR_OK;
}

/* nsr_boot_unlock - close the lock file (the lock goes with it). */
void nsr_boot_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}

/* nsr_boot_prepare - a fresh, empty staging directory, owned like
 * <root>/mm: nsrmmdbd writes its snapshot into it, also when it runs as
 * a user of its own (nsrd -U). */
int nsr_boot_prepare(const char *root, char **stage, struct nsr_buf *err)
{
	char *p = nsr_path_join(root, NSR_BOOT_DIR);
	char *mm = nsr_path_join(root, "mm");
	struct stat st;

	*stage = NULL;
	if (p == NULL || mm == NULL) {
		free(p);
		free(mm);
		return NSR_ERR_NOMEM;
	}
	if (nsr_boot_remove_tree(p) != NSR_OK || mkdir(p, 0700) != 0 ||
	    (stat(mm, &st) == 0 && st.st_uid != geteuid() &&
	     chown(p, st.st_uid, st.st_gid) != 0)) {
		nsr_buf_addf(err, "cannot make an empty staging directory "
			     "%s: %s", p, strerror(errno));
		free(p);
		free(mm);
		return NSR_ERR_SYSTEM;
	}
	free(mm);
	*stage = p;
	return NSR_OK;
}

/* has_entries - does directory path exist with anything in it? */
static int has_entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int any = 0;

	if (d == NULL)
		return errno != ENOENT;
	while (!any && (e = readdir(d)) != NULL)
		any = strcmp(e->d_name, ".") != 0 &&
		      strcmp(e->d_name, "..") != 0;
	closedir(d);
	return any;
}

/* nsr_boot_check_empty - nothing a recovery would overwrite. */
int nsr_boot_check_empty(const char *root, struct nsr_buf *err)
{
	static const struct {
		const char *rel;
		int dir;
		const char *what;
	} parts[] = {
		{"mm/mmdb", 0, "a media database"},
		{"jobs/jobsdb", 0, "a jobs database"},
		{"res/jobsdb", 0, "a jobs database (older layout)"},
		{"res/nsrdb", 1, "resources"},
		{"index", 1, "client file indexes"},
	};
	int rc = NSR_OK;

	for (size_t i = 0; i < NSR_ARRAY_SIZE(parts); i++) {
		char *p = nsr_path_join(root, parts[i].rel);
		int there;

		if (p == NULL)
			return NSR_ERR_NOMEM;
		there = parts[i].dir ? has_entries(p) : access(p, F_OK) == 0;
		if (there) {
			nsr_buf_addf(err, "%s%s (%s)", rc ? ", " : "",
				     parts[i].what, p);
			rc = NSR_ERR_EXISTS;
		}
		free(p);
	}
	return rc;
}

/* nsr_boot_stage_of - ".../bootstrap/mmdb" -> ".../bootstrap". */
int nsr_boot_stage_of(const char *path, char *out, size_t cap)
{
	static const char tail[] = "/" NSR_BOOT_DIR "/" NSR_BOOT_MMDB;
	size_t n = strlen(path), t = sizeof(tail) - 1;

	if (n <= t || strcmp(path + n - t, tail) != 0)
		return NSR_ERR_NOTFOUND;
	n -= sizeof(NSR_BOOT_MMDB); /* keep ".../bootstrap" */
	if (n + 1 > cap)
		return NSR_ERR_TOOBIG;
	memcpy(out, path, n);
	out[n] = '\0';
	return NSR_OK;
}

/* nsr_boot_pick - the asked-for or the newest whole candidate. */
long nsr_boot_pick(const struct nsr_boot_cand *c, size_t n, uint32_t want)
{
	long best = -1;

	for (size_t i = 0; i < n; i++) {
		if (!c[i].whole)
			continue;
		if (want) {
			if (c[i].ssid == want)
				return (long)i;
			continue;
		}
		if (best < 0 || c[i].savetime >= c[best].savetime)
			best = (long)i;
	}
	return best;
}
