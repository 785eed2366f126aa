/*
 * walk.c - deterministic depth-first file-system walk (see walk.h).
 *
 * The walker keeps a stack of open directory levels; each level holds the
 * sorted names of one directory (read in full when the directory is
 * entered, so the order never depends on readdir) and the index of the
 * next name.  A hash of (dev, ino) -> first path finds hard links among
 * non-directories with a link count above one.
 *
 * Only the innermost levels keep their directory open (WALK_OPEN_LEVELS):
 * an outer level gives its descriptor up and, when the walk comes back
 * to it, reopens it as ".." of the level it leaves, checked against the
 * (dev, ino) it had.  So a tree of any depth is walked with a bounded
 * number of descriptors, and no path is ever handed to the kernel whole
 * (paths longer than PATH_MAX work).
 */
#include "nsr/compat.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nsr/asm.h"
#include "nsr/err.h"
#include "nsr/walk.h"

#define WALK_OPEN_LEVELS 32 /* directory descriptors kept open at most */

struct level {
	char *path;
	int fd; /* the directory, or -1 (given up: reopened on the way back,
		 * or out of descriptors: use paths) */
	dev_t dev;
	ino_t ino;
	char **names;
	size_t n, next;
};

struct link_slot {
	dev_t dev;
	ino_t ino;
	char *path; /* NULL = empty slot */
};

struct nsr_walk {
	char **roots;
	size_t nroots, next_root;
	bool cross_mounts;
	struct level *stack;
	size_t depth, stack_cap;
	struct link_slot *links;
	size_t links_cap, links_used;
	struct nsr_walk_ent ent;
	char *path; /* storage for ent.path */
	char *link; /* storage for ent.link */
	int pending_err; /* opendir failure to report next */
	char *pending_path;
	struct stat pending_st;
};

/* dup_trimmed - copy path without trailing slashes ("/" stays "/"). */
static char *dup_trimmed(const char *p)
{
	size_t n = strlen(p);

	while (n > 1 && p[n - 1] == '/')
		n--;
	return strndup(p, n);
}

/* nsr_walk_new - set up a walk of the given paths. */
int nsr_walk_new(struct nsr_walk **out, const char *const *paths, size_t n,
		 const struct nsr_walk_opts *opts)
{
	struct nsr_walk *w;

	*out = NULL;
	if (paths == NULL && n > 0)
		return NSR_ERR_INVAL;
	for (size_t i = 0; i < n; i++)
		if (paths[i] == NULL || paths[i][0] == '\0')
			return NSR_ERR_INVAL;
	w = calloc(1, sizeof(*w));
	if (w == NULL)
		return NSR_ERR_NOMEM;
	w->roots = calloc(n ? n : 1, sizeof(char *));
	if (w->roots == NULL)
		goto nomem;
	for (size_t i = 0; i < n; i++) {
		w->roots[i] = dup_trimmed(paths[i]);
		if (w->roots[i] == NULL)
			goto nomem;
		w->nroots++;
	}
	w->cross_mounts = opts ? opts->cross_mounts : false;
	*out = w;
	return NSR_OK;
nomem:
	nsr_walk_free(w);
	return NSR_ERR_NOMEM;
}

/* level_release - free one directory level. */
static void level_release(struct level *l)
{
	if (l->fd >= 0)
		close(l->fd);
	for (size_t i = 0; i < l->n; i++)
		free(l->names[i]);
	free(l->names);
	free(l->path);
	memset(l, 0, sizeof(*l));
	l->fd = -1;
}

/* nsr_walk_free - free a walker. */
void nsr_walk_free(struct nsr_walk *w)
{
	if (w == NULL)
		return;
	for (size_t i = 0; i < w->nroots; i++)
		free(w->roots[i]);
	free(w->roots);
	while (w->depth > 0)
		level_release(&w->stack[--w->depth]);
	free(w->stack);
	for (size_t i = 0; i < w->links_cap; i++)
		free(w->links[i].path);
	free(w->links);
	free(w->path);
	free(w->link);
	free(w->pending_path);
	free(w);
}

/* cmp_names - qsort comparator: bytewise order of names. */
static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* read_names - the sorted entry names of directory fd (or of path when
 * fd < 0), without "." and ".."; NSR_ERR_SYSTEM with errno on failure. */
static int read_names(int fd, const char *path, char ***names, size_t *count)
{
	int dfd = fd >= 0 ? dup(fd) : -1;
	DIR *d = fd >= 0 ? (dfd >= 0 ? fdopendir(dfd) : NULL) : opendir(path);
	struct dirent *de;
	char **v = NULL;
	size_t n = 0, cap = 0;
	int rc = NSR_OK, saved;

	*names = NULL;
	*count = 0;
	if (d == NULL) {
		int saved = errno;

		if (dfd >= 0)
			close(dfd);
		errno = saved;
		return NSR_ERR_SYSTEM;
	}
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (de == NULL)
			break;
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			char **nv = realloc(v, ncap * sizeof(*nv));

			if (nv == NULL) {
				rc = NSR_ERR_NOMEM;
				goto out;
			}
			v = nv;
			cap = ncap;
		}
		v[n] = strdup(de->d_name);
		if (v[n] == NULL) {
			rc = NSR_ERR_NOMEM;
			goto out;
		}
		n++;
	}
	if (errno != 0)
		rc = NSR_ERR_SYSTEM;
out:
	saved = errno;
	closedir(d);
	if (rc != NSR_OK) {
		for (size_t i = 0; i < n; i++)
			free(v[i]);
		free(v);
		errno = saved;
		return rc;
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_names);
	*names = v;
	*count = n;
	return NSR_OK;
}

/* shed_fd - out of descriptors: let the outermost level that holds one
 * (other than keep, the descriptor in use) go over to paths.  1 if one
 * was closed. */
static int shed_fd(struct nsr_walk *w, int keep)
{
	for (size_t i = 0; i < w->depth; i++)
		if (w->stack[i].fd >= 0 && w->stack[i].fd != keep) {
			close(w->stack[i].fd);
			w->stack[i].fd = -1;
			return 1;
		}
	return 0;
}

/* out_of_fds - did the last call fail for lack of descriptors? */
static int out_of_fds(void)
{
	return errno == EMFILE || errno == ENFILE;
}

/* open_level_fd - open directory (dirfd, name) without following it and
 * check it is the one lstat saw; -1 with errno (ESTALE if it was swapped).
 * When descriptors run out, outer levels give theirs up first. */
static int open_level_fd(struct nsr_walk *w, int dirfd, const char *name,
			 const struct stat *st)
{
	struct stat now;
	int fd = openat(dirfd, name,
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	while (fd < 0 && out_of_fds() && shed_fd(w, dirfd))
		fd = openat(dirfd, name,
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &now) != 0 || now.st_dev != st->st_dev ||
	    now.st_ino != st->st_ino) {
		close(fd);
		errno = ESTALE;
		return -1;
	}
	return fd;
}

/* keep_few_open - past WALK_OPEN_LEVELS open levels, the outermost
 * gives its descriptor up (the two innermost, in use, never do). */
static void keep_few_open(struct nsr_walk *w)
{
	size_t open_n = 0;

	for (size_t i = 0; i < w->depth; i++)
		open_n += w->stack[i].fd >= 0;
	for (size_t i = 0; open_n > WALK_OPEN_LEVELS && i + 2 < w->depth;
	     i++) {
		if (w->stack[i].fd < 0)
			continue;
		close(w->stack[i].fd);
		w->stack[i].fd = -1;
		open_n--;
	}
}

/* reopen_parent - the directory of level up as ".." of fd, if it still
 * is the one the walk entered; -1 otherwise. */
static int reopen_parent(int fd, const struct level *up)
{
	int pfd = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat st;

	if (pfd < 0)
		return -1;
	if (fstat(pfd, &st) != 0 || st.st_dev != up->dev ||
	    st.st_ino != up->ino) {
		close(pfd);
		return -1;
	}
	return pfd;
}

/* push_level - enter directory path (reached as dirfd/name); on a system
 * error the failure is queued as an "opendir" error entry. */
static int push_level(struct nsr_walk *w, const char *path, int dirfd,
		      const char *name, const struct stat *st)
{
	struct level l;
	int rc;

	memset(&l, 0, sizeof(l));
	l.fd = open_level_fd(w, dirfd, name, st);
	if (l.fd < 0)
		goto sys_fail;
	if (w->depth == w->stack_cap) {
		size_t ncap = w->stack_cap ? w->stack_cap * 2 : 16;
		struct level *ns = realloc(w->stack, ncap * sizeof(*ns));

		if (ns == NULL)
			return NSR_ERR_NOMEM;
		w->stack = ns;
		w->stack_cap = ncap;
	}
	rc = read_names(l.fd, path, &l.names, &l.n);
	while (rc == NSR_ERR_SYSTEM && out_of_fds()) {
		/* Make room: an outer level's descriptor, else this level's
		 * own (it then works by path).  Never the parent's: the entry
		 * being returned names it. */
		if (!shed_fd(w, dirfd)) {
			if (l.fd < 0)
				break;
			close(l.fd);
			l.fd = -1;
		}
		rc = read_names(l.fd, path, &l.names, &l.n);
	}
	if (rc == NSR_ERR_SYSTEM) {
sys_fail:
		if (l.fd >= 0)
			close(l.fd);
		free(w->pending_path);
		w->pending_path = strdup(path);
		if (w->pending_path == NULL)
			return NSR_ERR_NOMEM;
		w->pending_err = errno ? errno : EIO;
		w->pending_st = *st;
		return NSR_OK;
	}
	if (rc) {
		level_release(&l);
		return rc;
	}
	l.path = strdup(path);
	if (l.path == NULL) {
		level_release(&l);
		return NSR_ERR_NOMEM;
	}
	l.dev = st->st_dev;
	l.ino = st->st_ino;
	w->stack[w->depth++] = l;
	keep_few_open(w);
	/* The entry being returned is this directory: it has its list. */
	w->ent.listed = true;
	w->ent.names = (const char *const *)l.names;
	w->ent.nnames = l.n;
	return NSR_OK;
}

/* link_hash - slot index for (dev, ino). */
static size_t link_hash(dev_t dev, ino_t ino, size_t cap)
{
	uint64_t h = ((uint64_t)ino * 0x9E3779B97F4A7C15ull) ^ (uint64_t)dev;

	h ^= h >> 29;
	return (size_t)(h & (cap - 1));
}

/* links_grow - double the hard-link table. */
static int links_grow(struct nsr_walk *w)
{
	size_t ncap = w->links_cap ? w->links_cap * 2 : 64;
	struct link_slot *nl = calloc(ncap, sizeof(*nl));

	if (nl == NULL)
		return NSR_ERR_NOMEM;
	for (size_t i = 0; i < w->links_cap; i++) {
		struct link_slot *s = &w->links[i];
		size_t j;

		if (s->path == NULL)
			continue;
		j = link_hash(s->dev, s->ino, ncap);
		while (nl[j].path != NULL)
			j = (j + 1) & (ncap - 1);
		nl[j] = *s;
	}
	free(w->links);
	w->links = nl;
	w->links_cap = ncap;
	return NSR_OK;
}

/* link_seen - the first path of (dev, ino), recording path if new.
 * *first is NULL when this is the first time. */
static int link_seen(struct nsr_walk *w, const struct stat *st,
		     const char *path, const char **first)
{
	size_t j;

	*first = NULL;
	if ((w->links_used + 1) * 2 > w->links_cap && links_grow(w) != NSR_OK)
		return NSR_ERR_NOMEM;
	j = link_hash(st->st_dev, st->st_ino, w->links_cap);
	while (w->links[j].path != NULL) {
		if (w->links[j].dev == st->st_dev &&
		    w->links[j].ino == st->st_ino) {
			*first = w->links[j].path;
			return NSR_OK;
		}
		j = (j + 1) & (w->links_cap - 1);
	}
	w->links[j].path = strdup(path);
	if (w->links[j].path == NULL)
		return NSR_ERR_NOMEM;
	w->links[j].dev = st->st_dev;
	w->links[j].ino = st->st_ino;
	w->links_used++;
	return NSR_OK;
}

/* set_path - keep a copy of path as the entry's path. */
static int set_path(struct nsr_walk *w, const char *path)
{
	char *p = strdup(path);

	if (p == NULL)
		return NSR_ERR_NOMEM;
	free(w->path);
	w->path = p;
	w->ent.path = p;
	return NSR_OK;
}

/* error_ent - make the current entry an error report. */
static void error_ent(struct nsr_walk *w, int err, const char *what)
{
	w->ent.type = 0;
	w->ent.err = err ? err : EIO;
	w->ent.what = what;
	w->ent.link = NULL;
}

/* visit - lstat path (as dirfd/name; AT_FDCWD means by path) and fill
 * the entry; *emit = 0 to skip it (socket).  parent_dev is the device of
 * the containing directory (ignored for a root). */
static int visit(struct nsr_walk *w, const char *path, int is_root,
		 dev_t parent_dev, int dirfd, const char *name, int *emit)
{
	struct stat *st = &w->ent.st;
	const char *first = NULL;
	int rc;

	*emit = 1;
	memset(&w->ent, 0, sizeof(w->ent));
	rc = set_path(w, path);
	if (rc)
		return rc;
	if (dirfd == AT_FDCWD)
		name = w->path;
	w->ent.dirfd = dirfd;
	w->ent.name = name;
	if (fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW) != 0) {
		memset(st, 0, sizeof(*st));
		error_ent(w, errno, "lstat");
		return NSR_OK;
	}
	switch (st->st_mode & S_IFMT) {
	case S_IFREG:
		w->ent.type = NSR_ASM_REG;
		break;
	case S_IFDIR:
		w->ent.type = NSR_ASM_DIR;
		break;
	case S_IFLNK:
		w->ent.type = NSR_ASM_SYMLINK;
		break;
	case S_IFIFO:
		w->ent.type = NSR_ASM_FIFO;
		break;
	case S_IFCHR:
		w->ent.type = NSR_ASM_CHR;
		break;
	case S_IFBLK:
		w->ent.type = NSR_ASM_BLK;
		break;
	default: /* sockets and anything unknown are not saved */
		*emit = 0;
		return NSR_OK;
	}
	if (w->ent.type != NSR_ASM_DIR && st->st_nlink > 1) {
		rc = link_seen(w, st, path, &first);
		if (rc)
			return rc;
		if (first != NULL) {
			w->ent.type = NSR_ASM_HARDLINK;
			w->ent.link = first;
			return NSR_OK;
		}
	}
	if (w->ent.type == NSR_ASM_SYMLINK) {
		size_t cap = NSR_ASM_PATH_MAX + 2;
		ssize_t n;

		if (w->link == NULL)
			w->link = malloc(cap);
		if (w->link == NULL)
			return NSR_ERR_NOMEM;
		n = readlinkat(dirfd, name, w->link, cap - 1);
		if (n < 0 || (size_t)n >= cap - 1) {
			error_ent(w, n < 0 ? errno : ENAMETOOLONG, "readlink");
			return NSR_OK;
		}
		w->link[n] = '\0';
		w->ent.link = w->link;
		return NSR_OK;
	}
	if (w->ent.type == NSR_ASM_DIR &&
	    (is_root || w->cross_mounts || st->st_dev == parent_dev))
		return push_level(w, path, dirfd, name, st);
	return NSR_OK;
}

/* join - "dir/name" into a malloc'ed string ("/" + name = "/name"). */
static char *join(const char *dir, const char *name)
{
	char *out = NULL;
	int slash = dir[0] != '\0' && dir[strlen(dir) - 1] != '/';

	if (asprintf(&out, "%s%s%s", dir, slash ? "/" : "", name) < 0)
		return NULL;
	return out;
}

/* nsr_walk_next - the next object of the walk. */
int nsr_walk_next(struct nsr_walk *w, const struct nsr_walk_ent **ent)
{
	*ent = NULL;
	for (;;) {
		struct level *top;
		const char *name;
		char *path;
		int rc, emit = 0;

		if (w->pending_err) {
			memset(&w->ent, 0, sizeof(w->ent));
			rc = set_path(w, w->pending_path);
			if (rc)
				return rc;
			w->ent.st = w->pending_st;
			w->ent.dirfd = AT_FDCWD;
			w->ent.name = w->path;
			error_ent(w, w->pending_err, "opendir");
			w->pending_err = 0;
			*ent = &w->ent;
			return NSR_OK;
		}
		if (w->depth == 0) {
			if (w->next_root == w->nroots)
				return NSR_ERR_EOF;
			rc = visit(w, w->roots[w->next_root++], 1, 0, AT_FDCWD,
				   NULL, &emit);
			if (rc)
				return rc;
			if (emit) {
				*ent = &w->ent;
				return NSR_OK;
			}
			continue;
		}
		top = &w->stack[w->depth - 1];
		if (top->next == top->n) {
			int up = -1;

			/* back to a level that gave its descriptor up */
			if (w->depth >= 2 && w->stack[w->depth - 2].fd < 0 &&
			    top->fd >= 0)
				up = reopen_parent(top->fd,
						   &w->stack[w->depth - 2]);
			level_release(top);
			w->depth--;
			if (up >= 0)
				w->stack[w->depth - 1].fd = up;
			continue;
		}
		name = top->names[top->next++];
		path = join(top->path, name);
		if (path == NULL)
			return NSR_ERR_NOMEM;
		/* top may move (push_level reallocs): pass values only */
		rc = visit(w, path, 0, top->dev,
			   top->fd >= 0 ? top->fd : AT_FDCWD, name, &emit);
		free(path);
		if (rc)
			return rc;
		if (emit) {
			*ent = &w->ent;
			return NSR_OK;
		}
	}
}
