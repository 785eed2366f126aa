/*
 * restore.c - the restore engine (see restore.h).  It drives an asm
 * decoder and, per file record: checks the path, applies the filter,
 * resolves the target (relocation, conflict policy), creates the object,
 * writes its data (holes by seeking), and applies its metadata.  It owns
 * the stack of directories whose mode and times wait for their contents,
 * the map of restored hard-link targets, and the restore counters.
 *
 * Parent directories are reached with openat() one component at a time
 * from the destination, with O_NOFOLLOW when relocating, so a stream that
 * first restores "a -> /etc" and then "a/passwd" cannot escape dest.
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
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/restore.h"

#include "restore_int.h"

/* Extended attributes of one object, applied with its metadata. */
struct xa {
	char *name;
	void *val;
	size_t len;
};

struct xa_list {
	struct xa *v;
	size_t n, cap;
};

/* A directory whose metadata is applied after its contents. */
struct pending_dir {
	char *path;   /* saved path */
	char *target; /* where it is on disk */
	struct nsr_asm_file meta; /* strings not kept */
	struct xa_list xa;
};

/* The file being restored. */
struct cur_file {
	int active;   /* between FILE and FILE_END */
	int write;    /* data goes to fd */
	int failed;   /* a write failed; error already reported */
	int dir;      /* a directory: attributes go to its pending entry */
	int node;     /* symlink/fifo/device made: metadata at FILE_END */
	int fd;
	struct nsr_asm_file meta; /* path points into .path */
	char *path;
	char *target;
	char *name;   /* node: its name in the parent directory */
	struct xa_list xa;
	uint64_t written;
};

struct nsr_restore {
	char *dest;
	char **filters;
	size_t nfilters;
	int conflict;
	int no_owner;
	int owner_by_name;
	int is_root;
	struct nsr_restore_cb cb;
	struct nsr_asm_dec *dec;
	int base_fd; /* dest, or "/" in place */
	int cwd_fd;  /* dest, or "." in place (relative saved paths) */
	int nofollow;
	/* cached parent directory of the last object */
	char *parent_rel;
	int parent_fd;
	struct cur_file cur;
	struct pending_dir *dirs;
	size_t ndirs, dirs_cap;
	struct rst_map links; /* saved path -> target, for hard links */
	struct nsr_restore_stats st;
	int err;
};

/* ---- reporting ------------------------------------------------------ */

/* rerror - report a per-file error. */
static void rerror(struct nsr_restore *r, const char *path, int rc,
		   const char *what)
{
	int e = rc == NSR_ERR_SYSTEM ? errno : 0;

	r->st.errors++;
	if (r->cb.error)
		r->cb.error(r->cb.ctx, path, rc, e, what);
}

/* rwarn - report metadata that could not be applied. */
static void rwarn(struct nsr_restore *r, const char *path, int rc,
		  const char *what)
{
	int e = rc == NSR_ERR_SYSTEM ? errno : 0;

	r->st.warnings++;
	if (r->cb.warn)
		r->cb.warn(r->cb.ctx, path, rc, e, what);
}

/* ---- extended attributes ------------------------------------------- */

/* xa_add - keep a copy of one attribute. */
static int xa_add(struct xa_list *l, const char *name, const void *val,
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

/* xa_release - free all attributes of a list. */
static void xa_release(struct xa_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].val);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* ---- paths ---------------------------------------------------------- */

/* path_ok - no empty, "." or ".." components, no trailing slash. */
static int path_ok(const char *p)
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

/* selected - does the filter select saved path p? */
static int selected(const struct nsr_restore *r, const char *p)
{
	if (r->nfilters == 0)
		return 1;
	for (size_t i = 0; i < r->nfilters; i++)
		if (is_under(p, r->filters[i]))
			return 1;
	return 0;
}

/* rel_of - the part of saved path p below the base: without leading '/'
 * ("" for "/"). */
static const char *rel_of(const char *p)
{
	while (*p == '/')
		p++;
	return p;
}

/* full_target - dest + "/" + rel, or the saved path in place. */
static char *full_target(const struct nsr_restore *r, const char *path)
{
	char *out = NULL;
	const char *rel = rel_of(path);

	if (r->dest == NULL)
		return strdup(path);
	if (*rel == '\0')
		return strdup(r->dest);
	if (asprintf(&out, "%s/%s", r->dest, rel) < 0)
		return NULL;
	return out;
}

/* forget_parent - drop the cached parent directory. */
static void forget_parent(struct nsr_restore *r)
{
	if (r->parent_fd >= 0)
		close(r->parent_fd);
	r->parent_fd = -1;
	free(r->parent_rel);
	r->parent_rel = NULL;
}

/* open_dir_chain - open directory rel (components below base), creating
 * missing ones (0755); returns an fd or -1 with errno. */
static int open_dir_chain(struct nsr_restore *r, int base, const char *rel)
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
		if (next < 0 && errno == ENOENT) {
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

/* parent_fd - an fd of the directory that holds saved path p (cached by
 * the path prefix up to and including the last '/'); *leaf gets the last
 * component.  -1 with errno on failure. */
static int parent_fd(struct nsr_restore *r, const char *p, const char **leaf)
{
	const char *slash = strrchr(p, '/');
	size_t klen = slash ? (size_t)(slash - p) + 1 : 0;
	int base = (r->dest != NULL || p[0] == '/') ? r->base_fd : r->cwd_fd;
	char *key;

	*leaf = slash ? slash + 1 : p;
	if (r->parent_rel != NULL && strlen(r->parent_rel) == klen &&
	    strncmp(r->parent_rel, p, klen) == 0)
		return r->parent_fd;
	key = strndup(p, klen);
	if (key == NULL) {
		errno = ENOMEM;
		return -1;
	}
	forget_parent(r);
	r->parent_fd = open_dir_chain(r, base, rel_of(key));
	if (r->parent_fd < 0) {
		free(key);
		return -1;
	}
	r->parent_rel = key;
	return r->parent_fd;
}

/* ---- metadata ------------------------------------------------------- */

/* owner_failed - chown failure: an error as root, a warning otherwise. */
static void owner_failed(struct nsr_restore *r, const char *path)
{
	if (r->is_root)
		rerror(r, path, NSR_ERR_SYSTEM, "lchown");
	else
		rwarn(r, path, NSR_ERR_SYSTEM, "lchown");
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
		rwarn(r, path, NSR_ERR_SYSTEM, "setxattr");
	else
		rerror(r, path, NSR_ERR_SYSTEM, "setxattr");
}

/* meta_fd - owner, attributes, mode and times through an open descriptor
 * (owner first: chown clears set-id bits and file capabilities). */
static void meta_fd(struct nsr_restore *r, int fd, const struct nsr_asm_file *f,
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
		rerror(r, path, NSR_ERR_SYSTEM, "chmod");
	times_of(f, t);
	if (futimens(fd, t) != 0)
		rerror(r, path, NSR_ERR_SYSTEM, "utimens");
}

/* meta_at - owner, attributes, mode and times of dfd/name (also reachable
 * as target, for the attribute calls) without following it. */
static void meta_at(struct nsr_restore *r, int dfd, const char *name,
		    const struct nsr_asm_file *f, const struct xa_list *xa,
		    const char *target, const char *path)
{
	struct timespec t[2];

	if (!r->no_owner &&
	    fchownat(dfd, name, f->uid, f->gid, AT_SYMLINK_NOFOLLOW) != 0)
		owner_failed(r, path);
	for (size_t i = 0; i < xa->n; i++)
		if (lsetxattr(target, xa->v[i].name, xa->v[i].val,
			      xa->v[i].len, 0) != 0)
			xa_failed(r, path);
	if (f->type != NSR_ASM_SYMLINK && fchmodat(dfd, name, f->mode, 0) != 0)
		rerror(r, path, NSR_ERR_SYSTEM, "chmod");
	times_of(f, t);
	if (utimensat(dfd, name, t, AT_SYMLINK_NOFOLLOW) != 0)
		rerror(r, path, NSR_ERR_SYSTEM, "utimens");
}

/* dir_apply - apply a pending directory's metadata and free it. */
static void dir_apply(struct nsr_restore *r, struct pending_dir *d)
{
	int fd = open(d->target, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
				     O_CLOEXEC);

	if (fd < 0) {
		rerror(r, d->path, NSR_ERR_SYSTEM, "open dir");
	} else {
		meta_fd(r, fd, &d->meta, &d->xa, d->path);
		close(fd);
	}
	free(d->path);
	free(d->target);
	xa_release(&d->xa);
}

/* dirs_pop_to - apply directories that cannot contain path (NULL: all). */
static void dirs_pop_to(struct nsr_restore *r, const char *path)
{
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
		     const char *target)
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

enum { CLAIM_CREATE, CLAIM_MERGE, CLAIM_SKIP, CLAIM_ERROR };

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
		rerror(r, f->path, NSR_ERR_SYSTEM, "stat");
		return CLAIM_ERROR;
	}
	if (f->type == NSR_ASM_DIR && S_ISDIR(st.st_mode))
		return CLAIM_MERGE;
	if (r->conflict == NSR_RESTORE_SKIP)
		return CLAIM_SKIP;
	if (r->conflict == NSR_RESTORE_OVERWRITE) {
		if (unlinkat(dfd, leaf, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0)
		    != 0) {
			rerror(r, f->path, NSR_ERR_SYSTEM, "remove existing");
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
	rerror(r, f->path, NSR_ERR_SYSTEM, "rename");
	return CLAIM_ERROR;
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
		return linkat(AT_FDCWD, src, dfd, name, 0);
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

/* done_object - count a restored object, note hard-link sources. */
static int done_object(struct nsr_restore *r, const struct nsr_asm_file *f,
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

/* ---- decoder callbacks ---------------------------------------------- */

/* cur_reset - forget the current file (closing its descriptor). */
static void cur_reset(struct nsr_restore *r)
{
	if (r->cur.fd >= 0)
		close(r->cur.fd);
	free(r->cur.path);
	free(r->cur.target);
	free(r->cur.name);
	xa_release(&r->cur.xa);
	memset(&r->cur, 0, sizeof(r->cur));
	r->cur.fd = -1;
}

/* on_header - pass the stream header on. */
static int on_header(void *ctx, const struct nsr_asm_header *h)
{
	struct nsr_restore *r = ctx;

	if (r->cb.header)
		r->cb.header(r->cb.ctx, h);
	return 0;
}

/* start_root - the record of the restore base itself ("/" or dest). */
static int start_root(struct nsr_restore *r, const struct nsr_asm_file *f)
{
	char *t;
	int rc;

	if (f->type != NSR_ASM_DIR) {
		rerror(r, f->path, NSR_ERR_CORRUPT, "path");
		return NSR_OK;
	}
	t = full_target(r, f->path);
	if (t == NULL)
		return NSR_ERR_NOMEM;
	rc = dirs_push(r, f, t);
	if (rc == NSR_OK)
		rc = done_object(r, f, t);
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

/* start_object - create the object of a selected file record. */
static int start_object(struct nsr_restore *r, const struct nsr_asm_file *f)
{
	char name[NAME_MAX + 16];
	const char *leaf = NULL, *what = NULL;
	char *target = NULL;
	struct stat before;
	int dfd, how, keep, rc = NSR_OK;

	dfd = parent_fd(r, f->path, &leaf);
	if (dfd < 0) {
		rerror(r, f->path, NSR_ERR_SYSTEM, "parent directory");
		return NSR_OK;
	}
	keep = !parent_pending(r, f->path) && fstat(dfd, &before) == 0;
	how = claim(r, dfd, leaf, f, name, sizeof(name));
	if (how == CLAIM_ERROR)
		return NSR_OK;
	target = target_named(r, f->path, leaf, name);
	if (target == NULL)
		return NSR_ERR_NOMEM;
	if (how == CLAIM_SKIP) {
		r->st.skipped++;
		/* later names of a kept file link to the file that is there */
		if (f->type != NSR_ASM_DIR && f->type != NSR_ASM_HARDLINK &&
		    f->nlink > 1 && rst_map_put(&r->links, f->path, target))
			rc = NSR_ERR_NOMEM;
		if (r->cb.skipped)
			r->cb.skipped(r->cb.ctx, f->path, target);
		goto out;
	}
	if (f->type == NSR_ASM_DIR) {
		if (how == CLAIM_CREATE && mkdirat(dfd, name, 0700) != 0) {
			rerror(r, f->path, NSR_ERR_SYSTEM, "mkdir");
			goto out;
		}
		rc = dirs_push(r, f, target);
		if (rc == NSR_OK)
			rc = done_object(r, f, target);
		r->cur.dir = 1;
		goto out;
	}
	if (f->type == NSR_ASM_REG) {
		r->cur.fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL |
					      O_NOFOLLOW | O_CLOEXEC, 0600);
		if (r->cur.fd < 0) {
			rerror(r, f->path, NSR_ERR_SYSTEM, "create");
			goto out;
		}
		r->cur.write = 1;
		r->cur.target = target;
		target = NULL;
		goto out;
	}
	if (create_node(r, dfd, name, f, &what) != 0) {
		rerror(r, f->path, NSR_ERR_SYSTEM, what);
		goto out;
	}
	if (f->type == NSR_ASM_HARDLINK) { /* the inode has its metadata */
		rc = done_object(r, f, target);
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

/* map_owner - with owner_by_name, the local ids of the saved user and
 * group names (each kept numeric when its name is empty or unknown). */
static void map_owner(const struct nsr_restore *r, struct nsr_asm_file *f)
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

/* on_file - a file record: filter, place, create. */
static int on_file(void *ctx, const struct nsr_asm_file *rec, uint64_t off)
{
	struct nsr_restore *r = ctx;
	struct nsr_asm_file mapped = *rec;
	const struct nsr_asm_file *f = &mapped;

	NSR_UNUSED(off);
	map_owner(r, &mapped);
	cur_reset(r);
	r->cur.active = 1;
	r->cur.meta = *f;
	r->cur.path = strdup(f->path);
	if (r->cur.path == NULL)
		return NSR_ERR_NOMEM;
	r->cur.meta.path = r->cur.path;
	r->cur.meta.link = r->cur.meta.user = r->cur.meta.group = NULL;
	dirs_pop_to(r, f->path);
	if (!path_ok(f->path)) {
		rerror(r, f->path, NSR_ERR_CORRUPT, "path");
		return 0;
	}
	if (!selected(r, f->path)) {
		r->st.filtered++;
		return 0;
	}
	if (*rel_of(f->path) == '\0')
		return start_root(r, f);
	return start_object(r, f);
}

/* on_xattr - keep an attribute for the object it belongs to. */
static int on_xattr(void *ctx, const char *name, const void *v, size_t n)
{
	struct nsr_restore *r = ctx;

	if (r->cur.dir && r->ndirs > 0)
		return xa_add(&r->dirs[r->ndirs - 1].xa, name, v, n);
	if (r->cur.write || r->cur.node)
		return xa_add(&r->cur.xa, name, v, n);
	return 0;
}

/* on_data - write file data. */
static int on_data(void *ctx, const void *p, size_t n)
{
	struct nsr_restore *r = ctx;

	if (!r->cur.write || r->cur.failed)
		return 0;
	if (nsr_write_full(r->cur.fd, p, n) != NSR_OK) {
		rerror(r, r->cur.path, NSR_ERR_SYSTEM, "write");
		r->cur.failed = 1;
		return 0;
	}
	r->cur.written += n;
	return 0;
}

/* on_hole - skip over zeros (the file stays sparse). */
static int on_hole(void *ctx, uint64_t len)
{
	struct nsr_restore *r = ctx;

	if (!r->cur.write || r->cur.failed)
		return 0;
	if (lseek(r->cur.fd, (off_t)len, SEEK_CUR) < 0) {
		rerror(r, r->cur.path, NSR_ERR_SYSTEM, "seek");
		r->cur.failed = 1;
		return 0;
	}
	r->cur.written += len;
	return 0;
}

/* on_file_end - finish a regular file: size, metadata, checksum. */
static int on_file_end(void *ctx, const struct nsr_asm_file_end *fe)
{
	struct nsr_restore *r = ctx;
	int rc = NSR_OK;

	if (r->cur.node) {
		meta_at(r, r->parent_fd, r->cur.name, &r->cur.meta, &r->cur.xa,
			r->cur.target, r->cur.path);
		rc = done_object(r, &r->cur.meta, r->cur.target);
		goto out;
	}
	if (!r->cur.write)
		goto out;
	if (!r->cur.failed &&
	    ftruncate(r->cur.fd, (off_t)r->cur.meta.size) != 0) {
		rerror(r, r->cur.path, NSR_ERR_SYSTEM, "truncate");
		r->cur.failed = 1;
	}
	meta_fd(r, r->cur.fd, &r->cur.meta, &r->cur.xa, r->cur.path);
	if (!fe->ck_ok) {
		r->st.ck_errors++;
		rerror(r, r->cur.path, NSR_ERR_CHECKSUM, "checksum");
	}
	if (fe->status == NSR_ASM_FILE_READERR)
		rwarn(r, r->cur.path, NSR_ERR_IO, "saved with a read error");
	else if (fe->status == NSR_ASM_FILE_CHANGED)
		rwarn(r, r->cur.path, NSR_ERR_MISMATCH, "changed during save");
	r->st.bytes += r->cur.written;
	if (!r->cur.failed)
		rc = done_object(r, &r->cur.meta, r->cur.target);
out:
	cur_reset(r);
	return rc;
}

/* on_damaged - the stream is damaged here: abandon the current file and
 * let the decoder skip to the next intact file. */
static int on_damaged(void *ctx, uint64_t offset, int why)
{
	struct nsr_restore *r = ctx;
	char what[96];

	snprintf(what, sizeof(what),
		 "damaged stream at offset %" PRIu64 " (%s): skipped",
		 offset, nsr_strerror(why));
	if (r->cur.write || r->cur.node)
		rerror(r, r->cur.path, NSR_ERR_TRUNCATED, "incomplete");
	rerror(r, r->cur.active ? r->cur.path : "", why, what);
	cur_reset(r);
	return 0;
}

/* on_end - the stream is complete: apply what is left. */
static int on_end(void *ctx, const struct nsr_asm_trailer *t)
{
	struct nsr_restore *r = ctx;

	NSR_UNUSED(t);
	dirs_pop_to(r, NULL);
	return 0;
}

/* ---- API ------------------------------------------------------------ */

/* trimmed - copy of a path without trailing slashes ("/" stays). */
static char *trimmed(const char *p)
{
	size_t n = strlen(p);

	while (n > 1 && p[n - 1] == '/')
		n--;
	return strndup(p, n);
}

/* nsr_restore_new - allocate a restore with its options. */
int nsr_restore_new(struct nsr_restore **out,
		    const struct nsr_restore_opts *o,
		    const struct nsr_restore_cb *cb)
{
	static const struct nsr_asm_dec_ops ops = {
		on_header, on_file, on_data, on_hole, on_file_end, on_end,
		on_xattr, on_damaged,
	};
	struct nsr_restore *r;
	int rc = NSR_ERR_NOMEM;

	*out = NULL;
	if (o->conflict < NSR_RESTORE_SKIP || o->conflict > NSR_RESTORE_RENAME ||
	    (o->npaths > 0 && o->paths == NULL) ||
	    (o->dest != NULL && o->dest[0] == '\0'))
		return NSR_ERR_INVAL;
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return NSR_ERR_NOMEM;
	r->base_fd = r->cwd_fd = r->parent_fd = -1;
	r->cur.fd = -1;
	rst_map_init(&r->links);
	r->conflict = o->conflict;
	r->no_owner = o->no_owner;
	r->owner_by_name = o->owner_by_name;
	r->is_root = geteuid() == 0;
	if (cb)
		r->cb = *cb;
	r->filters = calloc(o->npaths ? o->npaths : 1, sizeof(char *));
	if (r->filters == NULL)
		goto fail;
	for (size_t i = 0; i < o->npaths; i++) {
		r->filters[i] = trimmed(o->paths[i]);
		if (r->filters[i] == NULL)
			goto fail;
		r->nfilters++;
	}
	if (o->dest != NULL) {
		r->dest = trimmed(o->dest);
		if (r->dest == NULL)
			goto fail;
		rc = nsr_mkdir_p(r->dest, 0755);
		if (rc)
			goto fail;
		/* Absolute, so targets stay valid whatever the cwd becomes. */
		free(r->dest);
		r->dest = realpath(o->dest, NULL);
		rc = NSR_ERR_SYSTEM;
		if (r->dest == NULL)
			goto fail;
		r->nofollow = 1;
		r->base_fd = open(r->dest, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		r->cwd_fd = dup(r->base_fd);
	} else {
		r->base_fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		r->cwd_fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	rc = NSR_ERR_SYSTEM;
	if (r->base_fd < 0 || r->cwd_fd < 0)
		goto fail;
	rc = nsr_asm_dec_new(&r->dec, &ops, r);
	if (rc)
		goto fail;
	/* every intact file of a damaged stream is still restored */
	nsr_asm_dec_resync(r->dec, 1);
	*out = r;
	return NSR_OK;
fail:
	nsr_restore_free(r);
	return rc;
}

/* nsr_restore_free - free a restore and close what it holds. */
void nsr_restore_free(struct nsr_restore *r)
{
	if (r == NULL)
		return;
	cur_reset(r);
	while (r->ndirs > 0) {
		r->ndirs--;
		free(r->dirs[r->ndirs].path);
		free(r->dirs[r->ndirs].target);
		xa_release(&r->dirs[r->ndirs].xa);
	}
	free(r->dirs);
	forget_parent(r);
	if (r->base_fd >= 0)
		close(r->base_fd);
	if (r->cwd_fd >= 0)
		close(r->cwd_fd);
	for (size_t i = 0; i < r->nfilters; i++)
		free(r->filters[i]);
	free(r->filters);
	free(r->dest);
	rst_map_release(&r->links);
	nsr_asm_dec_free(r->dec);
	free(r);
}

/* nsr_restore_feed - consume the next piece of the stream. */
int nsr_restore_feed(struct nsr_restore *r, const void *p, size_t n)
{
	int rc;

	if (r->err)
		return r->err;
	rc = nsr_asm_dec_feed(r->dec, p, n);
	if (rc)
		r->err = rc;
	return rc;
}

/* nsr_restore_sink - nsr_restore_feed as a stream sink. */
int nsr_restore_sink(void *restore, const void *p, size_t n)
{
	return nsr_restore_feed(restore, p, n);
}

/* nsr_restore_finish - apply pending metadata, check the stream ended. */
int nsr_restore_finish(struct nsr_restore *r)
{
	int rc = nsr_asm_dec_finish(r->dec);

	/* Whatever arrived is on disk: give its directories their metadata
	 * even when the stream was cut short, and name the file it cut. */
	if (rc != NSR_OK && (r->cur.write || r->cur.node))
		rerror(r, r->cur.path, NSR_ERR_TRUNCATED, "incomplete");
	cur_reset(r);
	dirs_pop_to(r, NULL);
	if (rc && r->err == 0)
		r->err = rc;
	return r->err;
}

/* nsr_restore_stats - copy the counters. */
void nsr_restore_stats(const struct nsr_restore *r,
		       struct nsr_restore_stats *st)
{
	*st = r->st;
}
