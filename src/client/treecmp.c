/*
 * treecmp.c - compare two trees for restore verification (treecmp.h).
 * Both trees are walked side by side in sorted name order; for objects
 * present in both, type and metadata are compared, regular files byte by
 * byte.  Hard-link structure is compared by mapping each inode to the
 * first relative path it was seen at in its own tree: two names share an
 * inode in one tree exactly when they do in the other iff those first
 * paths agree for every name.
 *
 * Every object is reached relative to its directory's descriptor, never
 * by a whole path, so trees of any depth with paths longer than PATH_MAX
 * compare like any other.  Only the innermost TREECMP_OPEN_LEVELS
 * directories of each tree stay open; an outer one is reopened as ".."
 * of its child (checked by dev and inode) when the walk returns to it.
 */
#include "nsr/compat.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/treecmp.h"

#include "restore_int.h"

#define TREECMP_OPEN_LEVELS 32 /* directories per tree kept open at most */

/* One open directory of one tree (fd -1: given up, reopen by ".."). */
struct lvl {
	int fd;
	dev_t dev;
	ino_t ino;
};

struct cmp {
	int flags;
	nsr_treecmp_diff_fn diff;
	void *ctx;
	size_t ndiff;
	struct rst_map ino_a, ino_b;
	int err; /* NSR_ERR_NOMEM, NSR_ERR_SYSTEM (lost its way back) */
	struct lvl *la, *lb; /* the directories being compared, outermost
			      * first */
	size_t depth, cap;
};

/* differ - report one difference. */
static void differ(struct cmp *c, const char *rel, const char *fmt, ...)
	NSR_PRINTF(3, 4);

static void differ(struct cmp *c, const char *rel, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->ndiff++;
	if (c->diff)
		c->diff(c->ctx, rel, msg);
}

/* type_name - short name of a file type. */
static const char *type_name(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG: return "file";
	case S_IFDIR: return "dir";
	case S_IFLNK: return "symlink";
	case S_IFIFO: return "fifo";
	case S_IFCHR: return "chardev";
	case S_IFBLK: return "blockdev";
	case S_IFSOCK: return "socket";
	default: return "unknown";
	}
}

/* both_hole_until - where the next data of either file starts at or
 * after pos (SEEK_DATA; a file with only a hole left counts as size); pos
 * itself when either has data there or cannot tell. */
static off_t both_hole_until(int fa, int fb, off_t pos, off_t size)
{
	off_t da = lseek(fa, pos, SEEK_DATA), db = lseek(fb, pos, SEEK_DATA);

	if ((da < 0 && errno != ENXIO) || (db < 0 && errno != ENXIO))
		return pos;
	if (da < 0)
		da = size;
	if (db < 0)
		db = size;
	return NSR_MIN(da, db);
}

/* same_content - compare two regular files of size bytes: 1 same, 0 not,
 * -1 unreadable.  With sparse set, ranges that are holes in both files
 * are skipped (they read as zeros in both). */
static int same_content(int da, const char *a, int db, const char *b,
			off_t size, int sparse)
{
	static char ba[65536], bb[65536];
	int fa = openat(da, a, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	int fb = openat(db, b, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	int same = -1;
	off_t pos = 0;

	if (fa < 0 || fb < 0)
		goto out;
	for (;;) {
		size_t na = 0, nb = 0;

		if (sparse && pos < size)
			pos = both_hole_until(fa, fb, pos, size);
		if (nsr_pread_full(fa, ba, sizeof(ba), pos, &na) != NSR_OK ||
		    nsr_pread_full(fb, bb, sizeof(bb), pos, &nb) != NSR_OK)
			goto out;
		if (na != nb || memcmp(ba, bb, na) != 0) {
			same = 0;
			goto out;
		}
		if (na == 0) {
			same = 1;
			goto out;
		}
		pos += (off_t)na;
	}
out:
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
	return same;
}

/* link_group - the first relative path of st's inode in map m. */
static const char *link_group(struct cmp *c, struct rst_map *m,
			      const struct stat *st, const char *rel)
{
	char key[64];
	const char *g;

	snprintf(key, sizeof(key), "%ju:%ju", (uintmax_t)st->st_dev,
		 (uintmax_t)st->st_ino);
	g = rst_map_get(m, key);
	if (g != NULL)
		return g;
	if (rst_map_put(m, key, rel) != NSR_OK) {
		c->err = NSR_ERR_NOMEM;
		return rel;
	}
	return rst_map_get(m, key);
}

static void cmp_tree(struct cmp *c, int da, const char *a, int db,
		     const char *b, const char *rel, int is_root);

/* cmp_names - qsort comparator for C strings. */
static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* names_of - sorted names of directory fd (NULL + *n = 0 on failure). */
static char **names_of(int fd, size_t *n)
{
	int dfd = dup(fd);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *de;
	char **out = NULL, **nv;
	size_t cap = 0;
	int failed = 0;

	*n = 0;
	if (d == NULL) {
		if (dfd >= 0)
			close(dfd);
		return NULL;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (*n + 1 >= cap) {
			cap = cap ? 2 * cap : 16;
			nv = realloc(out, cap * sizeof(*nv));
			if (nv == NULL) {
				failed = 1;
				break;
			}
			out = nv;
		}
		out[(*n)++] = strdup(de->d_name);
		out[*n] = NULL;
	}
	closedir(d);
	if (failed) {
		while (*n > 0)
			free(out[--*n]);
		free(out);
		return NULL;
	}
	if (out == NULL)
		out = calloc(1, sizeof(*out));
	if (out != NULL && *n > 1)
		qsort(out, *n, sizeof(*out), cmp_names);
	return out;
}

/* lvl_open - open directory (dfd, name) as the next level of one tree,
 * checked against st. */
static int lvl_open(struct lvl *l, int dfd, const char *name,
		    const struct stat *st)
{
	struct stat now;

	l->dev = st->st_dev;
	l->ino = st->st_ino;
	l->fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					  O_CLOEXEC);
	if (l->fd >= 0 && (fstat(l->fd, &now) != 0 ||
			   now.st_dev != st->st_dev ||
			   now.st_ino != st->st_ino)) {
		close(l->fd);
		l->fd = -1;
	}
	return l->fd;
}

/* lvl_reopen_parent - the level above, given up, as ".." of this one. */
static int lvl_reopen_parent(struct lvl *up, const struct lvl *here)
{
	struct stat st;
	int fd;

	if (up->fd >= 0)
		return 0;
	fd = openat(here->fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, &st) != 0 || st.st_dev != up->dev ||
			st.st_ino != up->ino)) {
		close(fd);
		fd = -1;
	}
	up->fd = fd;
	return fd >= 0 ? 0 : -1;
}

/* push_levels - enter directories a and b; the outermost open levels
 * give their descriptors up past TREECMP_OPEN_LEVELS.  0 or -1. */
static int push_levels(struct cmp *c, int da, const char *a,
		       const struct stat *sa, int db, const char *b,
		       const struct stat *sb)
{
	size_t k;

	if (c->depth == c->cap) {
		size_t ncap = c->cap ? 2 * c->cap : 64;
		struct lvl *na = realloc(c->la, ncap * sizeof(*na));
		struct lvl *nb = na ? realloc(c->lb, ncap * sizeof(*nb)) : NULL;

		if (na != NULL)
			c->la = na;
		if (nb == NULL) {
			c->err = NSR_ERR_NOMEM;
			return -1;
		}
		c->lb = nb;
		c->cap = ncap;
	}
	k = c->depth;
	lvl_open(&c->la[k], da, a, sa);
	lvl_open(&c->lb[k], db, b, sb);
	if (c->la[k].fd < 0 || c->lb[k].fd < 0) {
		if (c->la[k].fd >= 0)
			close(c->la[k].fd);
		if (c->lb[k].fd >= 0)
			close(c->lb[k].fd);
		return -1;
	}
	c->depth++;
	if (k >= TREECMP_OPEN_LEVELS) {
		struct lvl *ga = &c->la[k - TREECMP_OPEN_LEVELS];
		struct lvl *gb = &c->lb[k - TREECMP_OPEN_LEVELS];

		if (ga->fd >= 0)
			close(ga->fd);
		if (gb->fd >= 0)
			close(gb->fd);
		ga->fd = gb->fd = -1;
	}
	return 0;
}

/* pop_levels - leave the innermost directories, reopening the level
 * above if it gave its descriptors up. */
static void pop_levels(struct cmp *c)
{
	size_t k = --c->depth;

	if (k > 0 && (lvl_reopen_parent(&c->la[k - 1], &c->la[k]) != 0 ||
		      lvl_reopen_parent(&c->lb[k - 1], &c->lb[k]) != 0))
		c->err = NSR_ERR_SYSTEM; /* moved meanwhile: cannot go on */
	close(c->la[k].fd);
	close(c->lb[k].fd);
}

/* cmp_dirs - merge the sorted listings of two directories. */
static void cmp_dirs(struct cmp *c, int da, const char *a,
		     const struct stat *sa, int db, const char *b,
		     const struct stat *sb, const char *rel)
{
	size_t na = 0, nb = 0, i = 0, j = 0;
	char **la = NULL, **lb = NULL;

	if (push_levels(c, da, a, sa, db, b, sb) != 0) {
		differ(c, rel, "directory unreadable");
		return;
	}
	la = names_of(c->la[c->depth - 1].fd, &na);
	lb = names_of(c->lb[c->depth - 1].fd, &nb);
	if (la == NULL || lb == NULL) {
		differ(c, rel, "directory unreadable");
		goto out;
	}
	while ((i < na || j < nb) && !c->err) {
		int d = i == na ? 1 : j == nb ? -1 : strcmp(la[i], lb[j]);
		const char *nm = d <= 0 ? la[i] : lb[j];
		char *r = NULL;

		if (nm == NULL) { /* strdup failed */
			c->err = NSR_ERR_NOMEM;
			break;
		}
		if (strcmp(rel, ".") == 0)
			r = strdup(nm);
		else if (asprintf(&r, "%s/%s", rel, nm) < 0)
			r = NULL;
		if (r == NULL) {
			c->err = NSR_ERR_NOMEM;
			break;
		}
		if (d < 0) {
			differ(c, r, "only in first tree");
			i++;
		} else if (d > 0) {
			differ(c, r, "only in second tree");
			j++;
		} else {
			/* this level's descriptors: reopened by a deeper
			 * level that took them, before it returned */
			cmp_tree(c, c->la[c->depth - 1].fd, nm,
				 c->lb[c->depth - 1].fd, nm, r, 0);
			i++;
			j++;
		}
		free(r);
	}
out:
	for (size_t k = 0; la && k < na; k++)
		free(la[k]);
	for (size_t k = 0; lb && k < nb; k++)
		free(lb[k]);
	free(la);
	free(lb);
	pop_levels(c);
}

/* cmp_symlinks - compare link targets. */
static void cmp_symlinks(struct cmp *c, int da, const char *a, int db,
			 const char *b, const char *rel)
{
	char ta[PATH_MAX + 1], tb[PATH_MAX + 1];
	ssize_t na = readlinkat(da, a, ta, PATH_MAX);
	ssize_t nb = readlinkat(db, b, tb, PATH_MAX);

	if (na < 0 || nb < 0) {
		differ(c, rel, "symlink unreadable");
		return;
	}
	ta[na] = '\0';
	tb[nb] = '\0';
	if (strcmp(ta, tb) != 0)
		differ(c, rel, "symlink target '%s' != '%s'", ta, tb);
}

/* xnames - sorted attribute names of path (NULL-terminated array over
 * one malloc'ed block in *block); NULL on failure. */
static char **xnames(const char *path, char **block)
{
	ssize_t n = llistxattr(path, NULL, 0), got;
	size_t count = 0, k = 0;
	char **v;

	*block = NULL;
	if (n < 0 && errno != ENOTSUP)
		return NULL;
	*block = malloc(n > 0 ? (size_t)n : 1);
	if (*block == NULL)
		return NULL;
	**block = '\0';
	got = n > 0 ? llistxattr(path, *block, (size_t)n) : 0;
	if (got < 0)
		got = 0;
	for (ssize_t i = 0; i < got; i++)
		count += (*block)[i] == '\0';
	v = calloc(count + 1, sizeof(char *));
	if (v == NULL) {
		free(*block);
		*block = NULL;
		return NULL;
	}
	for (ssize_t i = 0; i < got; i += (ssize_t)strlen(*block + i) + 1)
		v[k++] = *block + i;
	if (k > 1)
		qsort(v, k, sizeof(*v), cmp_names);
	return v;
}

/* same_xattr - do a and b hold the same value for name? */
static int same_xattr(const char *a, const char *b, const char *name)
{
	ssize_t na = lgetxattr(a, name, NULL, 0);
	ssize_t nb = lgetxattr(b, name, NULL, 0);
	char *va = NULL, *vb = NULL;
	int same = 0;

	if (na < 0 || nb < 0 || na != nb)
		return 0;
	va = malloc((size_t)na + 1);
	vb = malloc((size_t)nb + 1);
	if (va != NULL && vb != NULL &&
	    lgetxattr(a, name, va, (size_t)na) == na &&
	    lgetxattr(b, name, vb, (size_t)nb) == nb)
		same = memcmp(va, vb, (size_t)na) == 0;
	free(va);
	free(vb);
	return same;
}

/* cmp_xattrs - compare the extended attributes of a and b. */
static void cmp_xattrs(struct cmp *c, const char *a, const char *b,
		       const char *rel)
{
	char *ba = NULL, *bb = NULL;
	char **la = xnames(a, &ba), **lb = xnames(b, &bb);
	size_t i = 0, j = 0;

	if (la == NULL || lb == NULL) {
		differ(c, rel, "extended attributes unreadable");
		goto out;
	}
	while (la[i] != NULL || lb[j] != NULL) {
		int d = la[i] == NULL ? 1 : lb[j] == NULL ? -1
						       : strcmp(la[i], lb[j]);

		if (d < 0) {
			differ(c, rel, "xattr %s only in first tree", la[i++]);
		} else if (d > 0) {
			differ(c, rel, "xattr %s only in second tree", lb[j++]);
		} else {
			if (!same_xattr(a, b, la[i]))
				differ(c, rel, "xattr %s differs", la[i]);
			i++;
			j++;
		}
	}
out:
	free(la);
	free(lb);
	free(ba);
	free(bb);
}

/* cmp_xattrs_at - cmp_xattrs of (da, a) and (db, b): there is no
 * l*xattrat, so through /proc, whatever the path's length (on the heap:
 * this runs once per level of a deep tree's recursion). */
static void cmp_xattrs_at(struct cmp *c, int da, const char *a, int db,
			  const char *b, const char *rel)
{
	size_t na = strlen(a) + 64, nb = strlen(b) + 64;
	char *pa = malloc(na), *pb = malloc(nb);

	if (pa == NULL || pb == NULL)
		c->err = NSR_ERR_NOMEM;
	else if (nsr_at_path(pa, na, da, a) != NULL &&
		 nsr_at_path(pb, nb, db, b) != NULL)
		cmp_xattrs(c, pa, pb, rel);
	free(pa);
	free(pb);
}

/* cmp_meta - mode, owner, mtime. */
static void cmp_meta(struct cmp *c, const struct stat *sa,
		     const struct stat *sb, const char *rel)
{
	if (!S_ISLNK(sa->st_mode) && (sa->st_mode & 07777) !=
				     (sb->st_mode & 07777))
		differ(c, rel, "mode %04o != %04o", sa->st_mode & 07777,
		       sb->st_mode & 07777);
	if (!(c->flags & NSR_TREECMP_NO_OWNER) &&
	    (sa->st_uid != sb->st_uid || sa->st_gid != sb->st_gid))
		differ(c, rel, "owner %u:%u != %u:%u", sa->st_uid, sa->st_gid,
		       sb->st_uid, sb->st_gid);
	if (!(c->flags & NSR_TREECMP_NO_MTIME) &&
	    (sa->st_mtim.tv_sec != sb->st_mtim.tv_sec ||
	     sa->st_mtim.tv_nsec != sb->st_mtim.tv_nsec))
		differ(c, rel, "mtime %jd.%09ld != %jd.%09ld",
		       (intmax_t)sa->st_mtim.tv_sec, sa->st_mtim.tv_nsec,
		       (intmax_t)sb->st_mtim.tv_sec, sb->st_mtim.tv_nsec);
}

/* cmp_tree - compare objects a and b (names in directories da and db;
 * AT_FDCWD with the roots' paths) at relative path rel. */
static void cmp_tree(struct cmp *c, int da, const char *a, int db,
		     const char *b, const char *rel, int is_root)
{
	struct stat sa, sb;

	if (c->err)
		return;
	if (fstatat(da, a, &sa, AT_SYMLINK_NOFOLLOW) != 0 ||
	    fstatat(db, b, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
		differ(c, rel, "cannot stat");
		return;
	}
	if ((sa.st_mode & S_IFMT) != (sb.st_mode & S_IFMT)) {
		differ(c, rel, "type %s != %s", type_name(sa.st_mode),
		       type_name(sb.st_mode));
		return;
	}
	if (!(is_root && (c->flags & NSR_TREECMP_NO_ROOT))) {
		cmp_meta(c, &sa, &sb, rel);
		if (!(c->flags & NSR_TREECMP_NO_XATTR))
			cmp_xattrs_at(c, da, a, db, b, rel);
	}
	if (!S_ISDIR(sa.st_mode) && (sa.st_nlink > 1 || sb.st_nlink > 1)) {
		const char *ga = link_group(c, &c->ino_a, &sa, rel);
		const char *gb = link_group(c, &c->ino_b, &sb, rel);

		if (strcmp(ga, gb) != 0)
			differ(c, rel, "hard links differ: '%s' vs '%s'", ga,
			       gb);
	}
	if (S_ISREG(sa.st_mode)) {
		int same;

		if (sa.st_size != sb.st_size) {
			differ(c, rel, "size %jd != %jd", (intmax_t)sa.st_size,
			       (intmax_t)sb.st_size);
			return;
		}
		same = same_content(da, a, db, b, sa.st_size,
				    sa.st_blocks * 512 < sa.st_size ||
					    sb.st_blocks * 512 < sb.st_size);
		if (same < 0)
			differ(c, rel, "content unreadable");
		else if (same == 0)
			differ(c, rel, "content differs");
	} else if (S_ISLNK(sa.st_mode)) {
		cmp_symlinks(c, da, a, db, b, rel);
	} else if (S_ISCHR(sa.st_mode) || S_ISBLK(sa.st_mode)) {
		if (sa.st_rdev != sb.st_rdev)
			differ(c, rel, "device number differs");
	} else if (S_ISDIR(sa.st_mode)) {
		cmp_dirs(c, da, a, &sa, db, b, &sb, rel);
	}
}

/* nsr_treecmp - compare two trees, reporting each difference. */
int nsr_treecmp(const char *a, const char *b, int flags,
		nsr_treecmp_diff_fn diff, void *ctx, size_t *ndiff)
{
	struct cmp c;
	struct stat st;
	int rc = NSR_OK;

	*ndiff = 0;
	if (lstat(a, &st) != 0 || lstat(b, &st) != 0)
		return NSR_ERR_SYSTEM;
	memset(&c, 0, sizeof(c));
	c.flags = flags;
	c.diff = diff;
	c.ctx = ctx;
	rst_map_init(&c.ino_a);
	rst_map_init(&c.ino_b);
	cmp_tree(&c, AT_FDCWD, a, AT_FDCWD, b, ".", 1);
	if (c.err)
		rc = c.err;
	*ndiff = c.ndiff;
	rst_map_release(&c.ino_a);
	rst_map_release(&c.ino_b);
	free(c.la);
	free(c.lb);
	return rc;
}
