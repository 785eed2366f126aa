/*
 * session_pit.c - recover a path as of a browse time (recover -a [-t
 * time] path).  The client file index gives the tree under path as it
 * was at that moment: each directory with the names of its newest entry
 * list at or before the time (so what was deleted or renamed away is
 * not there), each name in its newest version.  A level chain spreads
 * that tree over several save sets; each of them then restores exactly
 * its objects (no object is in two), and they end oldest save set
 * first, so that the newest one, which holds the directories of a level
 * save, sets directory metadata last.  Save sets of the chain that share
 * a volume are read in one pass and restored side by side
 * (session_recover.c says why the tree still ends the same).
 *
 * A split file (NSR_CFI_SPLIT: a large file of a PSS save point, whose
 * head its master holds) is restored from the master and every
 * dependent of it, which hold its parts (session_recover.c).
 *
 * The walk lists one directory per IX_LIST call, and each call reads the
 * record files of every save set up to the browse time: the cost grows
 * with the number of directories times the size of the index (the index
 * has no per-directory structure yet).  Looking up the paths asked for
 * (each one's parent, and every directory above it) lists a directory
 * once for all of them: the last DIRS_KEPT listings are kept, sorted by
 * name, for the call (recover's "add *" over a large directory names
 * every file of it).
 */
#include "nsr/compat.h"

#include <stdarg.h>

#include "nsr/asm.h"
#include "nsr/buf.h"
#include "nsr/cfi.h"
#include "nsr/err.h"
#include "nsr/getdate.h"
#include "nsr/index_clnt.h"
#include "nsr/restore.h"
#include "nsr/session.h"

#include "session_int.h"

/* One object of the tree: which save set holds its version. */
struct pit_obj {
	char *path;
	uint64_t ssid;
	int64_t savetime;
	int dir;
	int split; /* a PSS master's split file: parts in its dependents */
	size_t at; /* its place in the order listed */
};

/* The trees as of the browse time, gathered by the walks. */
struct pit {
	struct pit_obj *obj;
	size_t n, cap;
	const char *want; /* root lookup: the path looked for */
	int found;	  /* root lookup: want was found */
};

/* tell - one message to the caller (printf-style). */
static void tell(struct nsr_session_recover *sr, enum nsr_session_msg kind,
		 const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void tell(struct nsr_session_recover *sr, enum nsr_session_msg kind,
		 const char *fmt, ...)
{
	struct nsr_buf text;
	va_list ap;

	if (!sr->o->message)
		return;
	nsr_buf_init(&text, 0);
	va_start(ap, fmt);
	nsr_buf_vaddf(&text, fmt, ap);
	va_end(ap);
	sr->o->message(sr->o->ctx, kind, text.data);
	nsr_buf_release(&text);
}

/* pit_room - room for one more object in p. */
static int pit_room(struct pit *p)
{
	struct pit_obj *o;

	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 256;

		o = realloc(p->obj, cap * sizeof(*o));
		if (!o)
			return NSR_ERR_NOMEM;
		p->obj = o;
		p->cap = cap;
	}
	return 0;
}

/* pit_add - remember one index entry as an object of the tree. */
static int pit_add(struct pit *p, const struct nsr_cfi_saveset *ss,
		   const struct nsr_cfi_entry *e)
{
	struct pit_obj *o;

	if (pit_room(p) != 0)
		return NSR_ERR_NOMEM;
	o = &p->obj[p->n];
	o->path = strdup(e->path);
	if (!o->path)
		return NSR_ERR_NOMEM;
	o->ssid = ss->ssid;
	o->savetime = ss->savetime;
	o->dir = e->type == NSR_ASM_DIR;
	o->split = e->type == NSR_ASM_REG && (e->mode & NSR_CFI_SPLIT) != 0;
	o->at = p->n++;
	return 0;
}

/* pit_copy - remember a copy of object o. */
static int pit_copy(struct pit *p, const struct pit_obj *o)
{
	if (pit_room(p) != 0)
		return NSR_ERR_NOMEM;
	p->obj[p->n] = *o;
	p->obj[p->n].path = strdup(o->path);
	if (!p->obj[p->n].path)
		return NSR_ERR_NOMEM;
	p->obj[p->n].at = p->n;
	p->n++;
	return 0;
}

/* pit_child - IX_LIST callback: every child is part of the tree. */
static int pit_child(void *arg, const struct nsr_cfi_saveset *ss,
		     const struct nsr_cfi_entry *e)
{
	return pit_add(arg, ss, e);
}

/* pit_root - IX_LIST/IX_FIND callback: keep the version of the wanted
 * path (the first one: newest). */
static int pit_root(void *arg, const struct nsr_cfi_saveset *ss,
		    const struct nsr_cfi_entry *e)
{
	struct pit *p = arg;

	if (p->found || strcmp(e->path, p->want) != 0)
		return 0;
	p->found = 1;
	return pit_add(p, ss, e);
}

/* pit_free - free the gathered tree. */
static void pit_free(struct pit *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->obj[i].path);
	free(p->obj);
}

/* pit_truncate - forget the objects from n on. */
static void pit_truncate(struct pit *p, size_t n)
{
	while (p->n > n)
		free(p->obj[--p->n].path);
}

/* by_set - order objects by save time, save set, then path (the same
 * object found twice, by overlapping paths, lies next to itself). */
static int by_set(const void *a, const void *b)
{
	const struct pit_obj *x = a, *y = b;

	if (x->savetime != y->savetime)
		return x->savetime < y->savetime ? -1 : 1;
	if (x->ssid != y->ssid)
		return x->ssid < y->ssid ? -1 : 1;
	return strcmp(x->path, y->path);
}

#define DIRS_KEPT 16

/* The directories listed for lookups, each sorted by path (then by the
 * order listed), the least recently used replaced. */
struct listings {
	struct {
		char *dir; /* NULL: a free slot */
		struct pit ents;
		unsigned long used;
	} d[DIRS_KEPT];
	unsigned long clock;
};

/* by_path_at - qsort order of a listing. */
static int by_path_at(const void *a, const void *b)
{
	const struct pit_obj *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	return c ? c : (x->at > y->at) - (x->at < y->at);
}

/* listings_free - forget every listing. */
static void listings_free(struct listings *ls)
{
	for (size_t i = 0; i < DIRS_KEPT; i++) {
		free(ls->d[i].dir);
		pit_free(&ls->d[i].ents);
	}
	memset(ls, 0, sizeof(*ls));
}

/* listing_of - dir's listing as of browse, listed now unless kept; NULL
 * with *rc the error. */
static const struct pit *listing_of(struct nsr_session_recover *sr,
				    struct listings *ls, char *dir,
				    int64_t browse, int *rc)
{
	size_t k = 0;

	for (size_t i = 0; i < DIRS_KEPT; i++) {
		if (ls->d[i].dir && strcmp(ls->d[i].dir, dir) == 0) {
			ls->d[i].used = ++ls->clock;
			free(dir);
			return &ls->d[i].ents;
		}
		if (ls->d[i].used < ls->d[k].used)
			k = i;
	}
	free(ls->d[k].dir);
	pit_free(&ls->d[k].ents);
	memset(&ls->d[k], 0, sizeof(ls->d[k]));
	*rc = nsr_ixclnt_list(sr->ix, sr->o->client, dir, browse, pit_child,
			      &ls->d[k].ents);
	if (*rc < 0) {
		pit_free(&ls->d[k].ents);
		memset(&ls->d[k].ents, 0, sizeof(ls->d[k].ents));
		free(dir);
		return NULL;
	}
	if (ls->d[k].ents.n > 1)
		qsort(ls->d[k].ents.obj, ls->d[k].ents.n,
		      sizeof(*ls->d[k].ents.obj), by_path_at);
	ls->d[k].dir = dir;
	ls->d[k].used = ++ls->clock;
	return &ls->d[k].ents;
}

/* first_named - the first object of sorted listing l with path, or
 * NULL. */
static const struct pit_obj *first_named(const struct pit *l,
					 const char *path)
{
	size_t lo = 0, hi = l->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(l->obj[mid].path, path) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < l->n && strcmp(l->obj[lo].path, path) == 0 ? &l->obj[lo]
							       : NULL;
}

/* lookup - the version of path listed in its parent directory as of
 * browse (so a path deleted before browse is not found: the first
 * listed, the newest); "/" by its newest version, added to p.  p->found
 * stays 0 if there is none. */
static int lookup(struct nsr_session_recover *sr, struct listings *ls,
		  struct pit *p, const char *path, int64_t browse)
{
	const char *client = sr->o->client;
	const char *slash = strrchr(path, '/');
	const struct pit_obj *o;
	const struct pit *l;
	char *parent;
	int rc = 0;

	p->want = path;
	p->found = 0;
	if (strcmp(path, "/") == 0 || !slash)
		return nsr_ixclnt_find(sr->ix, client, path, browse, pit_root,
				       p);
	parent = strndup(path, slash == path ? 1 : (size_t)(slash - path));
	if (!parent)
		return NSR_ERR_NOMEM;
	l = listing_of(sr, ls, parent, browse, &rc);
	if (!l)
		return rc;
	o = first_named(l, path);
	if (!o)
		return 0;
	p->found = 1;
	return pit_copy(p, o);
}

/* any_version - IX_FIND callback: a version exists. */
static int any_version(void *arg, const struct nsr_cfi_saveset *ss,
		       const struct nsr_cfi_entry *e)
{
	NSR_UNUSED(ss);
	NSR_UNUSED(e);
	*(int *)arg = 1;
	return 1;
}

/* gone - path has versions at or before browse that its parent's
 * listing leaves out: an entry list says it was no longer there.  (One
 * with no version at all is above the saved tree.) */
static int gone(struct nsr_session_recover *sr, const char *path,
		int64_t browse)
{
	int found = 0;
	int rc = nsr_ixclnt_find(sr->ix, sr->o->client, path, browse,
				 any_version, &found);

	return rc < 0 ? rc : found;
}

/* visible_above - 1 if every directory above path was there as of
 * browse (a directory renamed away keeps its old lists, so its old
 * children still list), 0 if one was not, or an error. */
static int visible_above(struct nsr_session_recover *sr,
			 struct listings *ls, const char *path, int64_t browse)
{
	char *up = strdup(path);
	int rc = 1;

	if (!up)
		return NSR_ERR_NOMEM;
	for (char *s = strchr(up + 1, '/'); s && rc == 1;
	     s = strchr(s + 1, '/')) {
		struct pit above;

		memset(&above, 0, sizeof(above));
		*s = '\0';
		rc = lookup(sr, ls, &above, up, browse);
		if (rc >= 0 && above.found) {
			rc = 1;
		} else if (rc >= 0) {
			rc = gone(sr, up, browse);
			if (rc >= 0)
				rc = !rc;
		}
		*s = '/';
		pit_free(&above);
	}
	free(up);
	return rc;
}

/* find_root - the version of path as of browse, if it was there then,
 * added to p (p->found stays 0 if not). */
static int find_root(struct nsr_session_recover *sr, struct listings *ls,
		     struct pit *p, const char *path, int64_t browse)
{
	int rc = visible_above(sr, ls, path, browse);

	p->found = 0;
	if (rc <= 0)
		return rc;
	return lookup(sr, ls, p, path, browse);
}

/* walk_tree - list every directory of the tree whose root is object
 * from (breadth first: the array grows while it is walked). */
static int walk_tree(struct nsr_session_recover *sr, struct pit *p,
		     size_t from, int64_t browse)
{
	int rc = NSR_OK;

	for (size_t i = from; i < p->n && rc >= 0; i++) {
		char *dir;

		if (!p->obj[i].dir)
			continue;
		dir = strdup(p->obj[i].path); /* p->obj may move */
		if (!dir)
			return NSR_ERR_NOMEM;
		rc = nsr_ixclnt_list(sr->ix, sr->o->client, dir, browse,
				     pit_child, p);
		if (rc < 0)
			tell(sr, NSR_SESSION_ERROR, "%s: %s", dir,
			     rc == NSR_ERR_NOMEM ? nsr_strerror(rc)
						 : nsr_ixclnt_errmsg(sr->ix));
		free(dir);
	}
	return rc < 0 ? rc : NSR_OK;
}

/* restore_sets - each save set restores exactly its objects (disjoint
 * parts of the tree), those sharing a volume read in one pass, finished
 * oldest first.  0 if all came back intact, 1 otherwise. */
static int restore_sets(struct nsr_session_recover *sr, struct pit *p,
			struct nsr_restore_stats *out)
{
	const char **paths = calloc(p->n + 1, sizeof(char *));
	const char **split = calloc(p->n + 1, sizeof(char *));
	struct session_want *w = calloc(p->n + 1, sizeof(*w));
	size_t nw = 0;
	int failed;

	if (!paths || !split || !w) {
		tell(sr, NSR_SESSION_ERROR, "out of memory");
		free(paths);
		free(split);
		free(w);
		return 1;
	}
	qsort(p->obj, p->n, sizeof(*p->obj), by_set);
	for (size_t i = 0, j, k = 0, m = 0; i < p->n; i = j) {
		w[nw].ssid = (uint32_t)p->obj[i].ssid;
		w[nw].paths = paths + k;
		w[nw].split = split + m;
		for (j = i; j < p->n && p->obj[j].ssid == p->obj[i].ssid; j++) {
			if (j > i && strcmp(p->obj[j].path,
					    p->obj[j - 1].path) == 0)
				continue;
			paths[k++] = p->obj[j].path;
			if (p->obj[j].split)
				split[m++] = p->obj[j].path;
		}
		w[nw].npaths = (size_t)(paths + k - w[nw].paths);
		w[nw].nsplit = (size_t)(split + m - w[nw].split);
		nw++;
	}
	failed = session_recover_sets(sr, w, nw, 1, out);
	free(paths);
	free(split);
	free(w);
	return failed;
}

/* open_index - connect to nsrindexd on first use. */
static int open_index(struct nsr_session_recover *sr)
{
	struct nsr_buf err;
	int rc;

	if (sr->ix)
		return NSR_OK;
	nsr_buf_init(&err, 0);
	rc = nsr_ixclnt_open(sr->o->server, &sr->ix, &err);
	if (rc != NSR_OK)
		tell(sr, NSR_SESSION_ERROR,
		     "cannot reach the index daemon on %s: %s", sr->o->server,
		     err.data);
	nsr_buf_release(&err);
	return rc;
}

/* The versions of a path the index has, whatever the browse time. */
struct vers {
	size_t n;
	int64_t first, last; /* save times */
};

/* vers_visit - IX_Q_VERSIONS visitor: count, keep the oldest and the
 * newest save time. */
static int vers_visit(void *ctx, const struct nsr_cfi_saveset *ss,
		      const struct nsr_cfi_entry *e)
{
	struct vers *v = ctx;

	NSR_UNUSED(e);
	if (v->n++ == 0 || ss->savetime < v->first)
		v->first = ss->savetime;
	if (v->n == 1 || ss->savetime > v->last)
		v->last = ss->savetime;
	return 0;
}

/* not_there - path is not in the client's index as of browse (0 =
 * now): say so, and with a browse time, which versions there are, so
 * the administrator can choose another time. */
static void not_there(struct nsr_session_recover *sr, const char *path,
		      int64_t browse)
{
	struct nsr_ixclnt_q q = { .client = sr->o->client,
				  .kind = IX_Q_VERSIONS,
				  .path = path };
	struct vers v = { 0, 0, 0 };
	char at[32], a[32], b[32];

	if (!browse || nsr_ixclnt_query(sr->ix, &q, vers_visit, &v) < 0 ||
	    v.n == 0) {
		tell(sr, NSR_SESSION_ERROR, "%s: not in the index of client %s",
		     path, sr->o->client);
		return;
	}
	nsr_getdate_text((time_t)browse, at, sizeof(at));
	nsr_getdate_text((time_t)v.first, a, sizeof(a));
	nsr_getdate_text((time_t)v.last, b, sizeof(b));
	if (v.n == 1)
		tell(sr, NSR_SESSION_ERROR, "%s: not in the index of client "
		     "%s as of %s; its one version there is of %s (recover "
		     "it with -t '%s')", path, sr->o->client, at, a, a);
	else
		tell(sr, NSR_SESSION_ERROR, "%s: not in the index of client "
		     "%s as of %s; its %zu versions there are of %s to %s "
		     "(choose one with -t)", path, sr->o->client, at, v.n, a,
		     b);
}

/* nsr_session_recover_paths - each of paths[0..n) (and, for a
 * directory, the tree under it) as of browse (0 = now) in the client's
 * file index, all of them restored together from the save sets holding
 * each object's version: a volume is read once for all.  A path that was
 * not there then is said and the others are still restored. */
int nsr_session_recover_paths(struct nsr_session_recover *sr,
			      const char *const *paths, size_t n,
			      int64_t browse, struct nsr_restore_stats *out)
{
	struct nsr_restore_stats st;
	struct listings *ls = calloc(1, sizeof(*ls));
	struct pit p;
	int failed = 0;

	memset(&p, 0, sizeof(p));
	memset(&st, 0, sizeof(st));
	if (!ls || open_index(sr) != NSR_OK) {
		if (!ls)
			tell(sr, NSR_SESSION_ERROR, "out of memory");
		free(ls);
		if (out)
			*out = st;
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		size_t root = p.n;
		int rc = find_root(sr, ls, &p, paths[i], browse);

		if (rc < 0)
			tell(sr, NSR_SESSION_ERROR, "%s: %s", paths[i],
			     rc == NSR_ERR_NOMEM
				     ? nsr_strerror(rc)
				     : nsr_ixclnt_errmsg(sr->ix));
		else if (!p.found)
			not_there(sr, paths[i], browse);
		else if (p.obj[root].dir)
			rc = walk_tree(sr, &p, root, browse);
		if (rc < 0 || !p.found) {
			/* Nothing of a tree whose listing failed: it would
			 * look whole with holes in it. */
			pit_truncate(&p, root);
			failed = 1;
		}
	}
	listings_free(ls);
	free(ls);
	if (p.n > 0)
		failed |= restore_sets(sr, &p, &st);
	if (out)
		*out = st;
	pit_free(&p);
	return failed;
}
