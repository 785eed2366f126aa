/*
 * stage.c - the file side of a bootstrap: copying the server's state into
 * the staging directory, removing trees, and moving a restored staging
 * directory into an empty root (boot.h).  Trees are walked through
 * directory descriptors (openat, O_NOFOLLOW); only directories and
 * regular files are copied or moved, anything else is skipped.
 */
#include "nsr/compat.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nsr/boot.h"
#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"

#define BOOT_COPY_BUF (256 * 1024)
#define BOOT_DEPTH_MAX 64

/* The parts of the root copied whole (the databases go their own way). */
static const char *const boot_parts[] = {"res", "index", "tls"};

/* sys_err - NSR_ERR_SYSTEM with "what path: reason" in err. */
static int sys_err(struct nsr_buf *err, const char *what, const char *path)
{
	int e = errno;

	if (err)
		nsr_buf_addf(err, "%s %s: %s", what, path, strerror(e));
	errno = e;
	return NSR_ERR_SYSTEM;
}

/* copy_file - regular file name in sfd to a new file in dfd. */
static int copy_file(int sfd, int dfd, const char *name, char *buf,
		     struct nsr_buf *err)
{
	int in = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	int out = -1, rc = NSR_OK;
	struct stat st;
	ssize_t n;

	if (in < 0)
		return sys_err(err, "cannot open", name);
	if (fstat(in, &st) != 0) {
		rc = sys_err(err, "cannot stat", name);
		goto out;
	}
	out = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		     st.st_mode & 07777);
	if (out < 0) {
		rc = sys_err(err, "cannot create the copy of", name);
		goto out;
	}
	while ((n = read(in, buf, BOOT_COPY_BUF)) > 0)
		if (nsr_write_full(out, buf, (size_t)n) != NSR_OK) {
			rc = sys_err(err, "cannot write the copy of", name);
			goto out;
		}
	if (n < 0)
		rc = sys_err(err, "cannot read", name);
out:
	if (out >= 0 && close(out) != 0 && rc == NSR_OK)
		rc = sys_err(err, "cannot write the copy of", name);
	close(in);
	return rc;
}

/* skip_name - "." and ".."; in the top of res/ also a jobs database of
 * the older layout and its WAL files (the jobs database is copied
 * through nsrjobd; it now lives in jobs/, which is not staged). */
static int skip_name(const char *name, int top_of_res)
{
	if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return 1;
	return top_of_res && strncmp(name, "jobsdb", 6) == 0;
}

/* copy_dir - everything below directory sfd into directory dfd. */
static int copy_dir(int sfd, int dfd, int depth, int top_of_res, char *buf,
		    uint64_t *files, struct nsr_buf *err)
{
	DIR *d;
	struct dirent *e;
	int rc = NSR_OK;

	if (depth > BOOT_DEPTH_MAX) {
		nsr_buf_addstr(err, "directories nested too deep");
		return NSR_ERR_LIMIT;
	}
	d = fdopendir(sfd);
	if (d == NULL) {
		close(sfd);
		return sys_err(err, "cannot list", "a directory");
	}
	while (rc == NSR_OK && (errno = 0, e = readdir(d)) != NULL) {
		struct stat st;
		int s2, d2;

		if (skip_name(e->d_name, top_of_res))
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW))
			rc = sys_err(err, "cannot stat", e->d_name);
		else if (S_ISREG(st.st_mode)) {
			rc = copy_file(dirfd(d), dfd, e->d_name, buf, err);
			*files += rc == NSR_OK;
		} else if (S_ISDIR(st.st_mode)) {
			if (mkdirat(dfd, e->d_name, 0700) != 0 &&
			    errno != EEXIST) {
				rc = sys_err(err, "cannot make", e->d_name);
				break;
			}
			s2 = openat(dirfd(d), e->d_name, O_RDONLY |
				    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			d2 = openat(dfd, e->d_name, O_RDONLY | O_DIRECTORY |
				    O_NOFOLLOW | O_CLOEXEC);
			if (s2 < 0 || d2 < 0)
				rc = sys_err(err, "cannot open", e->d_name);
			else
				rc = copy_dir(s2, d2, depth + 1, 0, buf,
					      files, err);
			if (s2 >= 0 && rc != NSR_OK && d2 < 0)
				close(s2);
			if (d2 >= 0)
				close(d2);
		}
	}
	if (rc == NSR_OK && errno != 0)
		rc = sys_err(err, "cannot list", "a directory");
	closedir(d);
	return rc;
}

/* A step on one part of the state: from directory sfd (closed by the
 * step) into directory dfd. */
typedef int (*part_fn)(int sfd, int dfd, const char *part, void *arg,
		       struct nsr_buf *err);

/* on_part - fn from from/part into to/part (made if need be); a missing
 * from/part is nothing to do. */
static int on_part(const char *from, const char *to, const char *part,
		   part_fn fn, void *arg, struct nsr_buf *err)
{
	char *src = nsr_path_join(from, part);
	char *dst = nsr_path_join(to, part);
	int sfd = -1, dfd = -1, rc = NSR_OK;

	if (!src || !dst) {
		rc = NSR_ERR_NOMEM;
		goto out;
	}
	sfd = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0) {
		if (errno != ENOENT)
			rc = sys_err(err, "cannot open", src);
		goto out;
	}
	if (nsr_mkdir_p(dst, 0700) != NSR_OK) {
		rc = sys_err(err, "cannot make", dst);
		goto out;
	}
	dfd = open(dst, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		rc = sys_err(err, "cannot open", dst);
		goto out;
	}
	rc = fn(sfd, dfd, part, arg, err);
	sfd = -1; /* fn closed it */
	if (rc != NSR_OK)
		nsr_buf_addf(err, " (%s to %s)", src, dst);
out:
	if (sfd >= 0)
		close(sfd);
	if (dfd >= 0)
		close(dfd);
	free(src);
	free(dst);
	return rc;
}

struct copy_arg {
	char *buf;
	uint64_t files;
};

/* copy_part - a part_fn: copy, leaving the jobs database out of res/. */
static int copy_part(int sfd, int dfd, const char *part, void *arg,
		     struct nsr_buf *err)
{
	struct copy_arg *c = arg;

	return copy_dir(sfd, dfd, 0, strcmp(part, "res") == 0, c->buf,
			&c->files, err);
}

/* nsr_boot_stage - res/ (less the jobs database), index/, tls/. */
int nsr_boot_stage(const char *root, const char *stage, uint64_t *files,
		   struct nsr_buf *err)
{
	struct copy_arg c = {malloc(BOOT_COPY_BUF), 0};
	int rc = NSR_OK;

	if (c.buf == NULL)
		return NSR_ERR_NOMEM;
	for (size_t i = 0; rc == NSR_OK && i < NSR_ARRAY_SIZE(boot_parts); i++)
		rc = on_part(root, stage, boot_parts[i], copy_part, &c, err);
	free(c.buf);
	if (files)
		*files = c.files;
	return rc;
}

/* remove_below - everything in directory fd (closed here). */
static int remove_below(int fd, int depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *e;
	int rc = NSR_OK;

	if (d == NULL) {
		close(fd);
		return NSR_ERR_SYSTEM;
	}
	while ((errno = 0, e = readdir(d)) != NULL) {
		struct stat st;
		int sub;

		if (skip_name(e->d_name, 0))
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW))
			return closedir(d), NSR_ERR_SYSTEM;
		if (S_ISDIR(st.st_mode)) {
			if (depth > BOOT_DEPTH_MAX)
				return closedir(d), NSR_ERR_LIMIT;
			sub = openat(dirfd(d), e->d_name, O_RDONLY |
				     O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0 || (rc = remove_below(sub, depth + 1)))
				return closedir(d), rc ? rc : NSR_ERR_SYSTEM;
		}
		if (unlinkat(dirfd(d), e->d_name,
			     S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) != 0)
			return closedir(d), NSR_ERR_SYSTEM;
	}
	rc = errno ? NSR_ERR_SYSTEM : NSR_OK;
	closedir(d);
	return rc;
}

/* nsr_boot_remove_tree - path and everything below it. */
int nsr_boot_remove_tree(const char *path)
{
	struct stat st;
	int fd, rc;

	if (lstat(path, &st) != 0)
		return errno == ENOENT ? NSR_OK : NSR_ERR_SYSTEM;
	if (!S_ISDIR(st.st_mode))
		return unlink(path) == 0 ? NSR_OK : NSR_ERR_SYSTEM;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return NSR_ERR_SYSTEM;
	rc = remove_below(fd, 0);
	if (rc == NSR_OK && rmdir(path) != 0)
		rc = NSR_ERR_SYSTEM;
	return rc;
}

/* merge_dir - move every entry of directory sfd into dfd: a file
 * replaces what dfd has under its name, a directory is renamed in
 * whole, or merged into one dfd already has. */
static int merge_dir(int sfd, int dfd, int depth, struct nsr_buf *err)
{
	DIR *d = fdopendir(sfd);
	struct dirent *e;
	int rc = NSR_OK;

	if (d == NULL) {
		close(sfd);
		return sys_err(err, "cannot list", "a directory");
	}
	while (rc == NSR_OK && (errno = 0, e = readdir(d)) != NULL) {
		struct stat st, have;
		int s2, d2;

		if (skip_name(e->d_name, 0))
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW)) {
			rc = sys_err(err, "cannot stat", e->d_name);
			break;
		}
		if (!S_ISDIR(st.st_mode) ||
		    fstatat(dfd, e->d_name, &have, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISDIR(have.st_mode)) {
			if (renameat(dirfd(d), e->d_name, dfd, e->d_name) != 0)
				rc = sys_err(err, "cannot move", e->d_name);
			continue;
		}
		if (depth > BOOT_DEPTH_MAX) {
			rc = NSR_ERR_LIMIT;
			break;
		}
		s2 = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY |
			    O_NOFOLLOW | O_CLOEXEC);
		d2 = openat(dfd, e->d_name, O_RDONLY | O_DIRECTORY |
			    O_NOFOLLOW | O_CLOEXEC);
		if (s2 < 0 || d2 < 0) {
			rc = sys_err(err, "cannot open", e->d_name);
			if (s2 >= 0)
				close(s2);
		} else {
			rc = merge_dir(s2, d2, depth + 1, err);
		}
		if (d2 >= 0)
			close(d2);
	}
	closedir(d);
	return rc;
}

/* move_file - stage/name to root/rel (its directory made as needed). */
static int move_file(const char *stage, const char *name, const char *root,
		     const char *dir, const char *rel, struct nsr_buf *err)
{
	char *src = nsr_path_join(stage, name);
	char *ddir = nsr_path_join(root, dir);
	char *dst = nsr_path_join(root, rel);
	int rc = NSR_OK;

	if (!src || !ddir || !dst)
		rc = NSR_ERR_NOMEM;
	else if (nsr_mkdir_p(ddir, 0700) != NSR_OK)
		rc = sys_err(err, "cannot make", ddir);
	else if (rename(src, dst) != 0)
		rc = sys_err(err, "cannot move the bootstrap's file to", dst);
	free(src);
	free(ddir);
	free(dst);
	return rc;
}

/* move_part - a part_fn: merge, then sync the directory. */
static int move_part(int sfd, int dfd, const char *part, void *arg,
		     struct nsr_buf *err)
{
	int rc = merge_dir(sfd, dfd, 0, err);

	NSR_UNUSED(arg);
	if (rc == NSR_OK && fsync(dfd) != 0)
		rc = sys_err(err, "cannot sync", part);
	return rc;
}

/* nsr_boot_install - the restored staging directory into root. */
int nsr_boot_install(const char *stage, const char *root,
		     struct nsr_buf *err)
{
	int rc;

	rc = move_file(stage, NSR_BOOT_MMDB, root, "mm", "mm/mmdb", err);
	if (rc == NSR_OK)
		rc = move_file(stage, NSR_BOOT_JOBSDB, root, "jobs",
			       "jobs/jobsdb", err);
	for (size_t i = 0; rc == NSR_OK && i < NSR_ARRAY_SIZE(boot_parts); i++)
		rc = on_part(stage, root, boot_parts[i], move_part, NULL, err);
	return rc;
}
