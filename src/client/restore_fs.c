/*
 * restore_fs.c - the file-system side of the restore engine: where a saved
 * path goes (relocation, filter, conflict policy, parent directories
 * reached with openat() one component at a time, with O_NOFOLLOW when
 * relocating, so a stream that first restores "a -> /etc" and then
 * "a/passwd" cannot escape the destination), how each object type is
 * created, and how metadata and extended attributes are applied,
 * directories after their contents.  Everything is reached through
 * directory descriptors, one component at a time, so paths longer than
 * PATH_MAX restore like any other.  restore.c drives it from the
 * decoder's events.
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "nsr/asm.h"
#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/restore.h"

#include "restore_int.h"

/* ---- reporting ------------------------------------------------------ */

/* rst_error - report a per-file error. */
void rst_error(struct nsr_restore *r, const char *path, int rc,
		   const char *what)
{
	int e = rc == NSR_ERR_SYSTEM ? errno : 0;

	r->st.errors++;
	if (r->cb.error)
		r->cb.error(r->cb.ctx, path, rc, e, what);
}

/* rst_warn - report metadata that could not be applied. */
void rst_warn(struct nsr_restore *r, const char *path, int rc,
		  const char *what)
{
	int e = rc == NSR_ERR_SYSTEM ? errno : 0;

	r->st.warnings++;
	if (r->cb.warn)
		r->cb.warn(r->cb.ctx, path, rc, e, what);
}

/* ---- extended attributes ------------------------------------------- */

/* rst_xa_add - keep a copy of one attribute. */
int rst_xa_add(struct xa_list *l, const char *name, const void *val,
		  size_t len)
{
	struct xa *x;

	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 4;
		struct xa *nv = realloc(l->v, ncap * sizeof(*nv));

		if (nv == NULL)
			return NSR_ERR_NOMEM;
		l->v = nv;
		l->cap = ncap;
	}
	x = &l->v[l->n];
	x->name = strdup(name);
	x->val = malloc(len ? len : 1);
	if (x->name == NULL || x->val == NULL) {
		free(x->name);
		free(x->val);
		return NSR_ERR_NOMEM;
	}
	memcpy(x->val, val, len);
	x->len = len;
	l->n++;
	return NSR_OK;
}

/* rst_xa_release - free all attributes of a list. */
void rst_xa_release(struct xa_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].val);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* ---- paths ---------------------------------------------------------- */

/* rst_path_ok - no empty, "." or ".." components, no trailing slash. */
int rst_path_ok(const char *p)
{
	const char *c = p;

	if (strcmp(p, "/") == 0)
		return 1;
	if (*c == '/')
		c++;
	for (;;) {
		const char *e = strchr(c, '/');
		size_t n = e ? (size_t)(e - c) : strlen(c);

		if (n == 0 || (n == 1 && c[0] == '.') ||
		    (n == 2 && c[0] == '.' && c[1] == '.'))
			return 0;
		if (e == NULL)
			return 1;
		c = e + 1;
	}
}

/* is_under - is p equal to or below d (saved paths)? */
static int is_under(const char *p, const char *d)
{
	size_t n = strlen(d);

	if (strcmp(d, "/") == 0)
		return p[0] == '/';
	return strncmp(p, d, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

/* rst_cmp_str - qsort/bsearch order of C strings. */
int rst_cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* rst_selected - does the filter select saved path p? */
int rst_selected(const struct nsr_restore *r, const char *p)
{
	if (r->nfilters == 0)
		return 1;
	if (r->exact)
		return bsearch(&p, r->filters, r->nfilters, sizeof(char *),
			       rst_cmp_str) != NULL;
	for (size_t i = 0; i < r->nfilters; i++)
		if (is_under(p, r->filters[i]))
			return 1;
	return 0;
}

/* rst_rel_of - the part of saved path p below the base: without leading '/'
 * ("" for "/"). */
const char *rst_rel_of(const char *p)
{
	while (*p == '/')
		p++;
	return p;
}

/* full_target - dest + "/" + rel, or the saved path in place. */
static char *full_target(const struct nsr_restore *r, const char *path)
{
	char *out = NULL;
	const char *rel = rst_rel_of(path);

	if (r->dest == NULL)
		return strdup(path);
	if (*rel == '\0')
		return strdup(r->dest);
	if (asprintf(&out, "%s/%s", r->dest, rel) < 0)
		return NULL;
	return out;
}

/* rst_forget_parent - drop the cached parent directory. */
void rst_forget_parent(struct nsr_restore *r)
{
	rst_dirh_put(r->parent_h);
	r->parent_h = NULL;
	r->parent_fd = -1;
	free(r->parent_rel);
	r->parent_rel = NULL;
	r->parent_gid = -1;
	r->parent_plain = 0;
}

/* open_dir_chain - open directory rel (components below base), creating
 * missing ones (0755) when create is set; returns an fd or -1 with
 * errno. */
static int open_dir_chain(struct nsr_restore *r, int base, const char *rel,
			  int create)
{
	int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
	int fd = dup(base);
	char comp[NAME_MAX + 1];
	const char *c = rel;

	if (r->nofollow)
		flags |= O_NOFOLLOW;
	while (fd >= 0 && *c != '\0') {
		const char *e = strchr(c, '/');
		size_t n = e ? (size_t)(e - c) : strlen(c);
		int next;

		if (n > NAME_MAX) {
			close(fd);
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(comp, c, n);
		comp[n] = '\0';
		next = openat(fd, comp, flags);
		if (next < 0 && errno == ENOENT && create) {
			if (mkdirat(fd, comp, 0755) != 0 && errno != EEXIST) {
				int saved = errno;

				close(fd);
				errno = saved;
				return -1;
			}
			next = openat(fd, comp, flags);
		}
		if (next < 0) {
			int saved = errno;

			close(fd);
			errno = saved;
			return -1;
		}
		close(fd);
		fd = next;
		c = e ? e + 1 : c + n;
	}
	return fd;
}

/* parent_defaults - what a file created in the cached parent gets
 * without being told: its group (the directory's if set-group-ID, else
 * ours) and whether its mode is just the one asked for less the umask
 * (not when a default ACL decides it). */
static void parent_defaults(struct nsr_restore *r)
{
	struct stat st;

	r->parent_gid = -1;
	r->parent_plain = 0;
	if (fstat(r->parent_fd, &st) != 0)
		return;
	r->parent_gid = (st.st_mode & S_ISGID) ? (int64_t)st.st_gid
					       : (int64_t)r->egid;
	r->parent_plain = fgetxattr(r->parent_fd, "system.posix_acl_default",
				    NULL, 0) < 0 &&
			  (errno == ENODATA || errno == ENOTSUP);
}

/* parent_fd - an fd of the directory that holds saved path p (cached by
 * the path prefix up to and including the last '/'); *leaf gets the last
 * component.  Below the cached directory (a tree being descended) only
 * the new components are opened, so a deep tree costs one open per
 * level.  -1 with errno on failure. */
static int parent_fd(struct nsr_restore *r, const char *p, const char **leaf)
{
	const char *slash = strrchr(p, '/');
	size_t klen = slash ? (size_t)(slash - p) + 1 : 0;
	size_t clen = r->parent_rel != NULL ? strlen(r->parent_rel) : 0;
	int base = (r->dest != NULL || p[0] == '/') ? r->base_fd : r->cwd_fd;
	const char *rel;
	struct rst_dirh *h;
	char *key;
	int fd;

	*leaf = slash ? slash + 1 : p;
	if (r->parent_rel != NULL && clen == klen &&
	    strncmp(r->parent_rel, p, klen) == 0)
		return r->parent_fd;
	key = strndup(p, klen);
	if (key == NULL) {
		errno = ENOMEM;
		return -1;
	}
	rel = rst_rel_of(key);
	if (r->parent_rel != NULL && clen > 0 && clen < klen &&
	    strncmp(r->parent_rel, p, clen) == 0) {
		base = r->parent_fd; /* p is below the cached directory */
		rel = key + clen;
	}
	fd = open_dir_chain(r, base, rel, 1);
	h = fd >= 0 ? malloc(sizeof(*h)) : NULL;
	if (h == NULL) {
		if (fd >= 0)
			close(fd);
		free(key);
		errno = fd >= 0 ? ENOMEM : errno;
		return -1;
	}
	h->fd = fd;
	h->refs = 1;
	rst_forget_parent(r);
	r->parent_h = h;
	r->parent_fd = fd;
	r->parent_rel = key;
	parent_defaults(r);
	return r->parent_fd;
}

/* target_parent - a new descriptor of the directory holding target (a
 * path this restore made: under dest, or a saved path in place), reached
 * component by component from the base, creating nothing; *leaf gets
 * target's last component ("." for the base itself).  -1 with errno. */
static int target_parent(struct nsr_restore *r, const char *target,
			 const char **leaf)
{
	size_t dl = r->dest != NULL ? strlen(r->dest) : 0;
	int base = r->base_fd;
	const char *rel = target, *slash;
	char *key;
	int fd;

	if (r->dest != NULL && strncmp(target, r->dest, dl) == 0 &&
	    (target[dl] == '/' || target[dl] == '\0'))
		rel = target + dl;
	else if (r->dest == NULL && target[0] != '/')
		base = r->cwd_fd;
	rel = rst_rel_of(rel);
	slash = strrchr(rel, '/');
	*leaf = slash != NULL ? slash + 1 : (*rel != '\0' ? rel : ".");
	key = strndup(rel, slash != NULL ? (size_t)(slash - rel) : 0);
	if (key == NULL) {
		errno = ENOMEM;
		return -1;
	}
	fd = open_dir_chain(r, base, key, 0);
	free(key);
	return fd;
}

/* ---- metadata ------------------------------------------------------- */

/* owner_failed - chown failure: an error as root, a warning otherwise. */
static void owner_failed(struct nsr_restore *r, const char *path)
{
	if (r->is_root)
		rst_error(r, path, NSR_ERR_SYSTEM, "lchown");
	else
		rst_warn(r, path, NSR_ERR_SYSTEM, "lchown");
}

/* times_of - the utimensat pair of a record. */
static void times_of(const struct nsr_asm_file *f, struct timespec t[2])
{
	t[0] = f->atime;
	t[1] = f->mtime;
}

/* xa_failed - an attribute could not be set: a warning when the file
 * system or our privilege does not allow it, else an error. */
static void xa_failed(struct nsr_restore *r, const char *path)
{
	if (errno == EPERM || errno == ENOTSUP || errno == EACCES)
		rst_warn(r, path, NSR_ERR_SYSTEM, "setxattr");
	else
		rst_error(r, path, NSR_ERR_SYSTEM, "setxattr");
}

/* rst_meta_fd - owner, attributes, mode and times through an open descriptor
 * (owner first: chown clears set-id bits and file capabilities). */
void rst_meta_fd(struct nsr_restore *r, int fd, const struct nsr_asm_file *f,
		    const struct xa_list *xa, const char *path)
{
	struct timespec t[2];

	if (!r->no_owner && fchown(fd, f->uid, f->gid) != 0)
		owner_failed(r, path);
	for (size_t i = 0; i < xa->n; i++)
		if (fsetxattr(fd, xa->v[i].name, xa->v[i].val, xa->v[i].len,
			      0) != 0)
			xa_failed(r, path);
	if (fchmod(fd, f->mode) != 0)
		rst_error(r, path, NSR_ERR_SYSTEM, "chmod");
	times_of(f, t);
	if (futimens(fd, t) != 0)
		rst_error(r, path, NSR_ERR_SYSTEM, "utimens");
}

/* rst_reg_meta - owner, attributes, mode and times of a new regular file
 * through fd, without the calls that would change nothing: chown when
 * the file already has the saved owner and group (ours, and the group
 * its directory gives), chmod when it was created with its saved mode
 * and no attribute (an ACL changes the mode bits) came after.  Problems
 * go to p (with their errno), reported by rst_report.  No state of the
 * restore is touched: the writer workers call it. */
void rst_reg_meta(int fd, const struct rst_newreg *n, struct rst_probs *p)
{
	const struct nsr_asm_file *f = n->f;
	struct timespec t[2];

	if (!n->no_owner &&
	    (f->uid != n->euid || n->gid < 0 || f->gid != (gid_t)n->gid) &&
	    fchown(fd, f->uid, f->gid) != 0)
		rst_prob(p, RP_OWNER);
	for (size_t i = 0; i < n->xa->n; i++)
		if (fsetxattr(fd, n->xa->v[i].name, n->xa->v[i].val,
			      n->xa->v[i].len, 0) != 0)
			rst_prob(p, RP_XATTR);
	if ((!n->made_mode || n->xa->n > 0) && fchmod(fd, f->mode) != 0)
		rst_prob(p, RP_CHMOD);
	times_of(f, t);
	if (futimens(fd, t) != 0)
		rst_prob(p, RP_UTIMENS);
}

/* rst_prob - note a problem of kind k with the current errno. */
void rst_prob(struct rst_probs *p, int k)
{
	if (p->n < RST_MAXPROBS) {
		p->v[p->n].kind = k;
		p->v[p->n].err = errno;
		p->n++;
	}
}

/* rst_report - report recorded problems of the file at path, each as
 * rst_meta_fd would have (with its errno). */
void rst_report(struct nsr_restore *r, const char *path,
		const struct rst_probs *p)
{
	static const char *const what[] = {
		[RP_CHMOD] = "chmod", [RP_UTIMENS] = "utimens",
		[RP_CREATE] = "create", [RP_WRITE] = "write",
		[RP_TRUNCATE] = "truncate",
		[RP_RENAME] = "rename into place",
	};

	for (int i = 0; i < p->n; i++) {
		errno = p->v[i].err;
		if (p->v[i].kind == RP_OWNER)
			owner_failed(r, path);
		else if (p->v[i].kind == RP_XATTR)
			xa_failed(r, path);
		else
			rst_error(r, path, NSR_ERR_SYSTEM, what[p->v[i].kind]);
	}
}

/* rst_meta_reg - rst_reg_meta for the current regular file, reported. */
void rst_meta_reg(struct nsr_restore *r)
{
	struct rst_newreg n = { &r->cur.meta, &r->cur.xa, r->no_owner,
				r->euid, r->parent_gid, r->cur.made_mode };
	struct rst_probs p = { 0 };

	rst_reg_meta(r->cur.fd, &n, &p);
	rst_report(r, r->cur.path, &p);
}

/* rst_meta_at - owner, attributes, mode and times of dfd/name (also reachable
 * as target, for the attribute calls) without following it. */
void rst_meta_at(struct nsr_restore *r, int dfd, const char *name,
		    const struct nsr_asm_file *f, const struct xa_list *xa,
		    const char *target, const char *path)
{
	char at[64 + NAME_MAX];
	const char *xpath = nsr_at_path(at, sizeof(at), dfd, name);
	struct timespec t[2];

	if (!r->no_owner &&
	    fchownat(dfd, name, f->uid, f->gid, AT_SYMLINK_NOFOLLOW) != 0)
		owner_failed(r, path);
	/* no lsetxattrat: the object through /proc (any length) */
	for (size_t i = 0; i < xa->n; i++)
		if (lsetxattr(xpath != NULL ? xpath : target, xa->v[i].name,
			      xa->v[i].val, xa->v[i].len, 0) != 0)
			xa_failed(r, path);
	if (f->type != NSR_ASM_SYMLINK && fchmodat(dfd, name, f->mode, 0) != 0)
		rst_error(r, path, NSR_ERR_SYSTEM, "chmod");
	times_of(f, t);
	if (utimensat(dfd, name, t, AT_SYMLINK_NOFOLLOW) != 0)
		rst_error(r, path, NSR_ERR_SYSTEM, "utimens");
}

/* open_target_dir - open a directory this restore made or merged. */
static int open_target_dir(struct nsr_restore *r, const char *target)
{
	int flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	const char *leaf;
	int pfd, fd, saved;

	if (strlen(target) < PATH_MAX)
		return open(target, flags);
	pfd = target_parent(r, target, &leaf);
	if (pfd < 0)
		return -1;
	fd = openat(pfd, leaf, flags);
	saved = errno;
	close(pfd);
	errno = saved;
	return fd;
}

/* dir_apply - apply a pending directory's metadata and free it. */
static void dir_apply(struct nsr_restore *r, struct pending_dir *d)
{
	int fd = open_target_dir(r, d->target);

	if (fd < 0) {
		rst_error(r, d->path, NSR_ERR_SYSTEM, "open dir");
	} else {
		rst_meta_fd(r, fd, &d->meta, &d->xa, d->path);
		close(fd);
	}
	free(d->path);
	free(d->target);
	rst_xa_release(&d->xa);
}

/* rst_dirs_would_pop - would rst_dirs_pop_to(path) apply a directory? */
int rst_dirs_would_pop(const struct nsr_restore *r, const char *path)
{
	const char *top;

	if (r->ndirs == 0 || (r->dirs_last && !r->finishing))
		return 0;
	top = r->dirs[r->ndirs - 1].path;
	return !is_under(path, top) || strcmp(path, top) == 0;
}

/* rst_dirs_pop_to - apply directories that cannot contain path (NULL: all).
 * The writer workers must be drained first (restore_int.h invariant 2:
 * the callers do, while the current file is free). */
void rst_dirs_pop_to(struct nsr_restore *r, const char *path)
{
	if (r->dirs_last && !r->finishing)
		return;
	while (r->ndirs > 0) {
		struct pending_dir *d = &r->dirs[r->ndirs - 1];

		if (path != NULL && is_under(path, d->path) &&
		    strcmp(path, d->path) != 0)
			break;
		dir_apply(r, d);
		r->ndirs--;
	}
}

/* dirs_push - remember a directory for after its contents. */
static int dirs_push(struct nsr_restore *r, const struct nsr_asm_file *f,
		     const char *target, int fresh)
{
	struct pending_dir *d;

	if (r->ndirs == r->dirs_cap) {
		size_t ncap = r->dirs_cap ? r->dirs_cap * 2 : 16;
		struct pending_dir *nd = realloc(r->dirs, ncap * sizeof(*nd));

		if (nd == NULL)
			return NSR_ERR_NOMEM;
		r->dirs = nd;
		r->dirs_cap = ncap;
	}
	d = &r->dirs[r->ndirs];
	memset(&d->xa, 0, sizeof(d->xa));
	d->meta = *f;
	d->meta.path = d->meta.link = d->meta.user = d->meta.group = NULL;
	d->fresh = fresh;
	d->path = strdup(f->path);
	d->target = strdup(target);
	if (d->path == NULL || d->target == NULL) {
		free(d->path);
		free(d->target);
		return NSR_ERR_NOMEM;
	}
	r->ndirs++;
	return NSR_OK;
}

/* ---- creating objects ----------------------------------------------- */

enum { CLAIM_CREATE, CLAIM_MERGE, CLAIM_SKIP, CLAIM_ERROR, CLAIM_REPLACE };

/* claim - apply the conflict policy at dfd/leaf; name gets the name to
 * create (leaf or leaf.R...). */
static int claim(struct nsr_restore *r, int dfd, const char *leaf,
		 const struct nsr_asm_file *f, char *name, size_t cap)
{
	struct stat st;

	snprintf(name, cap, "%s", leaf);
	if (fstatat(dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		if (errno == ENOENT)
			return CLAIM_CREATE;
		rst_error(r, f->path, NSR_ERR_SYSTEM, "stat");
		return CLAIM_ERROR;
	}
	if (f->type == NSR_ASM_DIR && S_ISDIR(st.st_mode))
		return CLAIM_MERGE;
	if (r->conflict == NSR_RESTORE_SKIP)
		return CLAIM_SKIP;
	if (r->conflict == NSR_RESTORE_OVERWRITE && f->type == NSR_ASM_REG &&
	    !S_ISDIR(st.st_mode))
		return CLAIM_REPLACE; /* once whole, by rename: see rst_place */
	if (r->conflict == NSR_RESTORE_OVERWRITE) {
		if (unlinkat(dfd, leaf, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0)
		    != 0) {
			rst_error(r, f->path, NSR_ERR_SYSTEM,
				  "remove existing");
			return CLAIM_ERROR;
		}
		return CLAIM_CREATE;
	}
	for (int i = 0; i < 1000; i++) {
		int n = i == 0 ? snprintf(name, cap, "%s.R", leaf)
			       : snprintf(name, cap, "%s.R%d", leaf, i);

		if (n < 0 || (size_t)n >= cap || n > NAME_MAX) {
			errno = ENAMETOOLONG;
			break;
		}
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 &&
		    errno == ENOENT)
			return CLAIM_CREATE;
	}
	rst_error(r, f->path, NSR_ERR_SYSTEM, "rename");
	return CLAIM_ERROR;
}

/* link_to - a hard link at dfd/name to src, a target already restored
 * (by its directory when src is too long for a path). */
static int link_to(struct nsr_restore *r, const char *src, int dfd,
		   const char *name)
{
	const char *leaf;
	int pfd, rc, saved;

	if (strlen(src) < PATH_MAX)
		return linkat(AT_FDCWD, src, dfd, name, 0);
	pfd = target_parent(r, src, &leaf);
	if (pfd < 0)
		return -1;
	rc = linkat(pfd, leaf, dfd, name, 0);
	saved = errno;
	close(pfd);
	errno = saved;
	return rc;
}

/* create_node - make a non-regular, non-directory object. */
static int create_node(struct nsr_restore *r, int dfd, const char *name,
		       const struct nsr_asm_file *f, const char **what)
{
	const char *src;

	switch (f->type) {
	case NSR_ASM_SYMLINK:
		*what = "symlink";
		return symlinkat(f->link, dfd, name);
	case NSR_ASM_HARDLINK:
		*what = "hardlink";
		src = rst_map_get(&r->links, f->link);
		if (src == NULL) {
			errno = ENOENT;
			*what = "hardlink target not restored";
			return -1;
		}
		return link_to(r, src, dfd, name);
	case NSR_ASM_FIFO:
		*what = "mkfifo";
		return mkfifoat(dfd, name, 0600);
	case NSR_ASM_CHR:
	case NSR_ASM_BLK:
		*what = "mknod";
		return mknodat(dfd, name,
			       (f->type == NSR_ASM_CHR ? S_IFCHR : S_IFBLK) |
				       0600,
			       (dev_t)f->rdev);
	default:
		*what = "type";
		errno = EINVAL;
		return -1;
	}
}

/* rst_done_object - count a restored object, note hard-link sources. */
int rst_done_object(struct nsr_restore *r, const struct nsr_asm_file *f,
		       const char *target)
{
	r->st.files++;
	if (f->type != NSR_ASM_DIR && f->type != NSR_ASM_HARDLINK &&
	    f->nlink > 1 && rst_map_put(&r->links, f->path, target) != NSR_OK)
		return NSR_ERR_NOMEM;
	if (r->cb.restored)
		r->cb.restored(r->cb.ctx, f, target);
	return NSR_OK;
}

/* target_named - the full target with the created name in place of the
 * last component (a rename appends a suffix to it). */
static char *target_named(const struct nsr_restore *r, const char *path,
			  const char *leaf, const char *name)
{
	char *t = full_target(r, path), *out = NULL;

	if (t == NULL || strcmp(leaf, name) == 0)
		return t;
	if (asprintf(&out, "%s%s", t, name + strlen(leaf)) < 0)
		out = NULL;
	free(t);
	return out;
}

/* skip_object - the SKIP policy keeps what is at target. */
static int skip_object(struct nsr_restore *r, const struct nsr_asm_file *f,
		       const char *target)
{
	int rc = NSR_OK;

	r->st.skipped++;
	/* later names of a kept file link to the file that is there */
	if (f->type != NSR_ASM_DIR && f->type != NSR_ASM_HARDLINK &&
	    f->nlink > 1 && rst_map_put(&r->links, f->path, target))
		rc = NSR_ERR_NOMEM;
	if (r->cb.skipped)
		r->cb.skipped(r->cb.ctx, f->path, target);
	return rc;
}

/* rst_start_root - the record of the restore base itself ("/" or dest). */
int rst_start_root(struct nsr_restore *r, const struct nsr_asm_file *f)
{
	char *t;
	int rc;

	if (f->type != NSR_ASM_DIR) {
		rst_error(r, f->path, NSR_ERR_CORRUPT, "path");
		return NSR_OK;
	}
	t = full_target(r, f->path);
	if (t == NULL)
		return NSR_ERR_NOMEM;
	rc = dirs_push(r, f, t, 0);
	if (rc == NSR_OK)
		rc = rst_done_object(r, f, t);
	r->cur.dir = 1;
	free(t);
	return rc;
}

/* parent_pending - is the parent of saved path p the directory on top of
 * the pending stack (whose times are set after its contents anyway)? */
static int parent_pending(const struct nsr_restore *r, const char *p)
{
	const char *slash = strrchr(p, '/');
	size_t plen = slash ? (size_t)(slash - p) : 0;
	const char *top;

	if (r->ndirs == 0 || slash == NULL)
		return r->ndirs > 0 && slash == NULL;
	top = r->dirs[r->ndirs - 1].path;
	if (plen == 0) /* "/x" */
		return strcmp(top, "/") == 0;
	return strlen(top) == plen && strncmp(top, p, plen) == 0;
}

/* keep_parent_times - after creating in an existing directory that is not
 * itself being restored, put its times back: restoring a file does not
 * disturb the directory it goes into. */
static void keep_parent_times(int dfd, const struct stat *before)
{
	struct timespec t[2];

	t[0] = before->st_atim;
	t[1] = before->st_mtim;
	futimens(dfd, t);
}

/* start_reg - a regular file is written under a temporary name in its
 * directory (dfd) and only takes its name (name) once it is whole
 * (rst_place), so a damaged or cut file never replaces anything and is
 * never left under its own name.  NSR_OK (cur.write set, or the failure
 * reported) or NSR_ERR_NOMEM. */
static int start_reg(struct nsr_restore *r, int dfd, const char *name,
		     const struct nsr_asm_file *f, int replace, int defer)
{
	mode_t mode = 0600;
	char tmp[64];

	r->cur.name = strdup(name);
	if (r->cur.name == NULL)
		return NSR_ERR_NOMEM;
	/* Created with its saved mode when that is what it gets (no
	 * set-ID bits, nothing the umask or a default ACL takes away):
	 * then no chmod later. */
	if (r->umask >= 0 && r->parent_plain && (f->mode & 07000) == 0 &&
	    (f->mode & 0777 & (mode_t)r->umask) == 0 && f->nparts == 0) {
		mode = f->mode & 0777;
		r->cur.made_mode = 1;
	}
	r->cur.replace = replace;
	r->cur.dfd = dfd;
	if (defer) /* a worker creates it, once it is whole */
		return rst_work_defer(r, r->parent_h, mode);
	for (int i = 0; i < 100 && r->cur.fd < 0; i++) {
		snprintf(tmp, sizeof(tmp), NSR_RESTORE_TMP_PREFIX "%ld.%u",
			 (long)r->pid, r->tmp_seq++);
		r->cur.fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL |
					     O_NOFOLLOW | O_CLOEXEC, mode);
		if (r->cur.fd < 0 && errno != EEXIST)
			break;
	}
	if (r->cur.fd < 0) {
		rst_error(r, f->path, NSR_ERR_SYSTEM, "create");
		return NSR_OK;
	}
	r->cur.tmp = strdup(tmp);
	r->cur.dfd = dfd; /* the cached parent, open until the next record */
	if (r->cur.tmp == NULL) {
		(void)unlinkat(dfd, tmp, 0);
		return NSR_ERR_NOMEM;
	}
	r->cur.write = 1;
	return NSR_OK;
}

/* parent_times_back - after a rename or removal in a directory that is
 * not itself being restored, put its times back. */
static void parent_times_back(struct nsr_restore *r)
{
	if (r->cur.keep_times && r->cur.dfd >= 0)
		futimens(r->cur.dfd, r->cur.ptimes);
}

/* rst_drop_tmp - remove the temporary name of an unfinished file. */
void rst_drop_tmp(struct nsr_restore *r)
{
	if (r->cur.tmp == NULL || r->cur.dfd < 0)
		return;
	(void)unlinkat(r->cur.dfd, r->cur.tmp, 0);
	parent_times_back(r);
	free(r->cur.tmp);
	r->cur.tmp = NULL;
}

/* late_claim - an unclaimed file's name exists after all: the conflict
 * policy now, then rst_place again (the file stays under its temporary
 * name meanwhile); kept existing files leave it dropped, with
 * cur.failed set so that it is not counted as restored. */
static void late_claim(struct nsr_restore *r)
{
	const struct nsr_asm_file *f = &r->cur.meta;
	char name[NAME_MAX + 16];
	char *t;
	int how;

	r->cur.unclaimed = 0;
	how = claim(r, r->cur.dfd, r->cur.name, f, name, sizeof(name));
	if (how == CLAIM_ERROR || how == CLAIM_SKIP) {
		if (how == CLAIM_SKIP && skip_object(r, f, r->cur.target))
			r->err = NSR_ERR_NOMEM;
		r->cur.failed = 1;
		rst_drop_tmp(r);
		return;
	}
	r->cur.replace = how == CLAIM_REPLACE;
	if (strcmp(name, r->cur.name) != 0) { /* RENAME: name.R... */
		t = target_named(r, f->path, r->cur.name, name);
		free(r->cur.name);
		r->cur.name = strdup(name);
		if (t == NULL || r->cur.name == NULL) {
			free(t);
			r->err = NSR_ERR_NOMEM;
			r->cur.failed = 1;
			rst_drop_tmp(r);
			return;
		}
		free(r->cur.target);
		r->cur.target = t;
	}
	rst_place(r);
}

/* rst_place - a whole file takes its name. */
void rst_place(struct nsr_restore *r)
{
	int rc;

	if (r->cur.tmp == NULL)
		return;
	if (r->cur.replace) {
		rc = renameat(r->cur.dfd, r->cur.tmp, r->cur.dfd, r->cur.name);
	} else {
		/* Not over something that appeared meanwhile. */
		rc = renameat2(r->cur.dfd, r->cur.tmp, r->cur.dfd, r->cur.name,
			       RENAME_NOREPLACE);
		if (rc != 0 && (errno == EINVAL || errno == ENOSYS)) {
			struct stat st;

			if (fstatat(r->cur.dfd, r->cur.name, &st,
				    AT_SYMLINK_NOFOLLOW) == 0) {
				rc = -1;
				errno = EEXIST;
			} else {
				rc = renameat(r->cur.dfd, r->cur.tmp,
					      r->cur.dfd, r->cur.name);
			}
		}
	}
	if (rc != 0 && errno == EEXIST && r->cur.unclaimed) {
		late_claim(r);
		return;
	}
	if (rc != 0) {
		rst_error(r, r->cur.path, NSR_ERR_SYSTEM, "rename into place");
		r->cur.failed = 1;
		rst_drop_tmp(r);
		return;
	}
	free(r->cur.tmp);
	r->cur.tmp = NULL;
	parent_times_back(r);
}

/* rst_start_object - create the object of a selected file record. */
int rst_start_object(struct nsr_restore *r, const struct nsr_asm_file *f)
{
	char name[NAME_MAX + 16];
	const char *leaf = NULL, *what = NULL;
	char *target = NULL;
	struct stat before;
	int dfd, how, keep, pending, rc = NSR_OK;

	dfd = parent_fd(r, f->path, &leaf);
	if (dfd < 0) {
		rst_error(r, f->path, NSR_ERR_SYSTEM, "parent directory");
		return NSR_OK;
	}
	pending = parent_pending(r, f->path);
	keep = !pending && fstat(dfd, &before) == 0;
	if (f->type == NSR_ASM_REG && pending && r->dirs[r->ndirs - 1].fresh &&
	    strlen(leaf) <= NAME_MAX) {
		/* A directory this restore made holds only what it put
		 * there: no lookup; rst_place applies the policy should the
		 * name exist after all. */
		snprintf(name, sizeof(name), "%s", leaf);
		how = CLAIM_CREATE;
		r->cur.unclaimed = 1;
	} else {
		how = claim(r, dfd, leaf, f, name, sizeof(name));
	}
	if (how == CLAIM_ERROR)
		return NSR_OK;
	target = target_named(r, f->path, leaf, name);
	if (target == NULL)
		return NSR_ERR_NOMEM;
	if (how == CLAIM_SKIP) {
		rc = skip_object(r, f, target);
		goto out;
	}
	if (f->type == NSR_ASM_DIR) {
		if (how == CLAIM_CREATE && mkdirat(dfd, name, 0700) != 0) {
			rst_error(r, f->path, NSR_ERR_SYSTEM, "mkdir");
			goto out;
		}
		rc = dirs_push(r, f, target, how == CLAIM_CREATE);
		if (rc == NSR_OK)
			rc = rst_done_object(r, f, target);
		r->cur.dir = 1;
		goto out;
	}
	if (f->type == NSR_ASM_REG) {
		rc = start_reg(r, dfd, name, f, how == CLAIM_REPLACE,
			       r->work != NULL && pending && !f->unsized &&
				       f->nparts == 0 &&
				       f->size <= RST_JOB_MAX);
		if (rc != NSR_OK || !r->cur.write)
			goto out;
		if (keep) {
			r->cur.keep_times = 1;
			r->cur.ptimes[0] = before.st_atim;
			r->cur.ptimes[1] = before.st_mtim;
		}
		r->cur.target = target;
		target = NULL;
		goto out;
	}
	if (create_node(r, dfd, name, f, &what) != 0) {
		rst_error(r, f->path, NSR_ERR_SYSTEM, what);
		goto out;
	}
	if (f->type == NSR_ASM_HARDLINK) { /* the inode has its metadata */
		rc = rst_done_object(r, f, target);
		goto out;
	}
	/* Metadata once the attributes (which follow) are known. */
	r->cur.name = strdup(name);
	if (r->cur.name == NULL) {
		rc = NSR_ERR_NOMEM;
		goto out;
	}
	r->cur.node = 1;
	r->cur.target = target;
	target = NULL;
out:
	if (keep && how != CLAIM_SKIP)
		keep_parent_times(dfd, &before);
	free(target);
	return rc;
}

/* damaged_name - a free name leaf.damaged (.damaged1, ...) in dfd. */
static int damaged_name(int dfd, const char *leaf, char *out, size_t cap)
{
	struct stat st;

	for (int i = 0; i < 1000; i++) {
		int n = i == 0 ? snprintf(out, cap, "%s%s", leaf,
					  NSR_RESTORE_DAMAGED_SUFFIX)
			       : snprintf(out, cap, "%s%s%d", leaf,
					  NSR_RESTORE_DAMAGED_SUFFIX, i);

		if (n < 0 || (size_t)n >= cap || n > NAME_MAX) {
			errno = ENAMETOOLONG;
			return -1;
		}
		if (fstatat(dfd, out, &st, AT_SYMLINK_NOFOLLOW) != 0 &&
		    errno == ENOENT)
			return 0;
	}
	errno = EEXIST;
	return -1;
}

/* rst_damaged - a damaged regular file never takes its name: dropped,
 * or with keep_damaged given the name name.damaged. */
void rst_damaged(struct nsr_restore *r, int rc, const char *step)
{
	char name[NAME_MAX + 16];
	struct nsr_buf what;

	r->st.damaged++;
	r->cur.failed = 1; /* not counted as restored */
	nsr_buf_init(&what, 0);
	if (!r->keep_damaged || r->cur.tmp == NULL) {
		rst_drop_tmp(r);
		nsr_buf_addf(&what, "%s: damaged, not recovered", step);
		rst_error(r, r->cur.path, rc, what.data);
		nsr_buf_release(&what);
		return;
	}
	if (damaged_name(r->cur.dfd, r->cur.name, name, sizeof(name)) != 0 ||
	    renameat2(r->cur.dfd, r->cur.tmp, r->cur.dfd, name,
		      RENAME_NOREPLACE) != 0) {
		rst_error(r, r->cur.path, NSR_ERR_SYSTEM,
			  "damaged, cannot keep it");
		rst_drop_tmp(r);
		return;
	}
	free(r->cur.tmp);
	r->cur.tmp = NULL;
	parent_times_back(r);
	nsr_buf_addf(&what, "%s: damaged, kept as %s%s", step,
		     r->cur.target, name + strlen(r->cur.name));
	rst_error(r, r->cur.path, rc, what.data);
	nsr_buf_release(&what);
}

/* rst_map_owner - with owner_by_name, the local ids of the saved user and
 * group names (each kept numeric when its name is empty or unknown). */
void rst_map_owner(const struct nsr_restore *r, struct nsr_asm_file *f)
{
	char tmp[4096];

	if (!r->owner_by_name)
		return;
	if (f->user != NULL && f->user[0] != '\0') {
		struct passwd pw, *pp = NULL;

		if (getpwnam_r(f->user, &pw, tmp, sizeof(tmp), &pp) == 0 &&
		    pp != NULL)
			f->uid = pp->pw_uid;
	}
	if (f->group != NULL && f->group[0] != '\0') {
		struct group gr, *gp = NULL;

		if (getgrnam_r(f->group, &gr, tmp, sizeof(tmp), &gp) == 0 &&
		    gp != NULL)
			f->gid = gp->gr_gid;
	}
}
