/*
 * browse.c - the interactive browser of recover (the recover> prompt):
 * the client's file index as of a browse time (nsrindexd's IX_LIST, the
 * same point-in-time view recover -a -t uses), navigated with cd/ls,
 * files marked with add/delete, and the marked ones restored together
 * through the recover session (nsr_session_recover_paths: each volume
 * read once for all marks), relocated and with the overwrite policy the
 * dialogue chose.
 *
 * Invariants:
 *  1. cwd is always a normalized absolute path ("/" or "/a/b"); when
 *     cwd_ok, it was there as of the browse time (a directory with
 *     save set cwd_ssid), so names below it are looked up from it.
 *  2. marks are normalized absolute paths, none inside another (adding a
 *     directory drops the marks under it; adding under a marked
 *     directory is refused as already marked).
 *  3. rec.dest is NULL or dest (owned); rec.conflict is conflict0 or,
 *     after force, NSR_RESTORE_OVERWRITE.
 */
#include "nsr/compat.h"

#include <fnmatch.h>
#include <time.h>
#include <unistd.h>

#include "nsr/asm.h"
#include "nsr/browse.h"
#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/getdate.h"
#include "nsr/index_clnt.h"
#include "nsr/level.h"
#include "nsr/mmdb.h"
#include "nsr/mmdb_clnt.h"
#include "nsr/nameix.h"
#include "nsr/restore.h"

#include "browse_int.h"

#define MAX_ARGS 64

struct mark {
	char *path;
	uint64_t files; /* objects it covers (1 + a directory's tree) */
	int dir;
};

struct browser {
	const struct nsr_browse_opts *o;
	struct nsr_session_recover_opts rec;
	int conflict0;
	char *dest;
	int64_t browse;
	char *cwd;
	int cwd_ok;	   /* cwd checked as of the browse time */
	uint64_t cwd_ssid; /* its save set; 0 = above the saved paths */
	struct nsr_ixclnt *ix;
	struct mmdb_clnt *mm;
	int mm_tried;
	struct mark *marks;
	size_t nmarks, cap;
	struct nsr_nameix mix; /* marks by path */
	char **roots; /* names (paths) of the save sets at or before the
		       * browse time: their parents are browsable too */
	size_t nroots, rcap;
	int failed;
	FILE *out;
	char when[64];
};

/* One entry of a directory listing (copied out of the index). */
struct item {
	char *name;
	struct nsr_cfi_entry e;
	uint64_t ssid;
	int64_t savetime;
};

struct listing {
	struct item *v;
	size_t n, cap;
};

/* browse_date - a time as the recover dialogue shows it. */
void browse_date(int64_t t, char *out, size_t n)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!localtime_r(&tt, &tm) ||
	    !strftime(out, n, "%a %b %e %H:%M:%S %Y", &tm))
		snprintf(out, n, "%" PRId64, t);
}

/* browse_type_name - words for an object type. */
const char *browse_type_name(int type)
{
	switch (type) {
	case NSR_ASM_REG:
		return "file";
	case NSR_ASM_DIR:
		return "directory";
	case NSR_ASM_SYMLINK:
		return "symlink";
	case NSR_ASM_HARDLINK:
		return "hard link";
	case NSR_ASM_FIFO:
		return "fifo";
	case NSR_ASM_CHR:
		return "character device";
	case NSR_ASM_BLK:
		return "block device";
	default:
		return "object";
	}
}

/* when - the browse time in words ("now" for 0). */
static const char *when(struct browser *b)
{
	if (!b->browse)
		return "now";
	browse_date(b->browse, b->when, sizeof(b->when));
	return b->when;
}

/* normalize - malloc'ed absolute path of arg relative to cwd, with ".",
 * ".." and repeated slashes resolved (invariant 1); NULL without
 * memory. */
static char *normalize(const char *cwd, const char *arg)
{
	size_t n = strlen(cwd) + strlen(arg) + 3, len = 0;
	char *in = malloc(n), *out = malloc(n), *save = NULL, *tok;

	if (!in || !out) {
		free(in);
		free(out);
		return NULL;
	}
	snprintf(in, n, "%s/%s", arg[0] == '/' ? "" : cwd, arg);
	out[0] = '\0';
	for (tok = strtok_r(in, "/", &save); tok;
	     tok = strtok_r(NULL, "/", &save)) {
		if (strcmp(tok, ".") == 0)
			continue;
		if (strcmp(tok, "..") == 0) {
			char *s = strrchr(out, '/');

			len = s ? (size_t)(s - out) : 0;
			out[len] = '\0';
			continue;
		}
		len += (size_t)snprintf(out + len, n - len, "/%s", tok);
	}
	if (len == 0)
		snprintf(out, n, "/");
	free(in);
	return out;
}

/* within - is path dir itself or below it (both normalized)? */
static int within(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 &&
	       (path[n] == '\0' || path[n] == '/' || n == 1);
}

/* parent_of - malloc'ed parent directory of normalized path p. */
static char *parent_of(const char *p)
{
	const char *s = strrchr(p, '/');

	return strndup(p, s == p ? 1 : (size_t)(s - p));
}

/* list_add - IX_LIST visitor: copy one child into the listing. */
static int list_add(void *ctx, const struct nsr_cfi_saveset *ss,
		    const struct nsr_cfi_entry *e)
{
	struct listing *l = ctx;
	const char *name = strrchr(e->path, '/');
	struct item *it;

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;

		it = realloc(l->v, cap * sizeof(*it));
		if (!it)
			return NSR_ERR_NOMEM;
		l->v = it;
		l->cap = cap;
	}
	it = &l->v[l->n];
	it->name = strdup(name ? name + 1 : e->path);
	if (!it->name)
		return NSR_ERR_NOMEM;
	it->e = *e;
	it->e.path = NULL;
	it->ssid = ss->ssid;
	it->savetime = ss->savetime;
	l->n++;
	return 0;
}

/* listing_free - free a listing. */
static void listing_free(struct listing *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].name);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* say_ixerr - an index error in words. */
static void say_ixerr(struct browser *b, const char *what, int rc)
{
	fprintf(b->out, "%s: %s\n", what,
		rc == NSR_ERR_NOMEM ? nsr_strerror(rc)
				    : nsr_ixclnt_errmsg(b->ix));
}

/* roots_free - forget the save set names. */
static void roots_free(struct browser *b)
{
	for (size_t i = 0; i < b->nroots; i++)
		free(b->roots[i]);
	b->nroots = 0;
}

/* root_add - IX_SAVESETS visitor: remember the name of a save set at or
 * before the browse time that is a path; *ctx counts them all. */
static int root_add(void *ctx, const struct nsr_cfi_saveset *ss)
{
	struct browser *b = ctx;
	char *r;

	if ((b->browse && ss->savetime > b->browse) || !ss->name ||
	    ss->name[0] != '/')
		return 0;
	for (size_t i = 0; i < b->nroots; i++)
		if (strcmp(b->roots[i], ss->name) == 0)
			return 0;
	if (b->nroots == b->rcap) {
		size_t cap = b->rcap ? 2 * b->rcap : 16;
		char **v = realloc(b->roots, cap * sizeof(*v));

		if (!v)
			return NSR_ERR_NOMEM;
		b->roots = v;
		b->rcap = cap;
	}
	r = normalize("/", ss->name);
	if (!r)
		return NSR_ERR_NOMEM;
	b->roots[b->nroots++] = r;
	return 0;
}

/* roots_load - the save set names as of the browse time. */
static int roots_load(struct browser *b)
{
	int rc;

	roots_free(b);
	rc = nsr_ixclnt_savesets(b->ix, b->o->rec.client, root_add, b);
	if (rc < 0)
		roots_free(b);
	return rc;
}

/* under_root - the name of the child of directory d leading to a save
 * set's path (d above it), or NULL; i is where to start looking and gets
 * where to go on. */
static const char *under_root(struct browser *b, const char *d, size_t *i,
			      size_t *len)
{
	size_t n = strcmp(d, "/") == 0 ? 0 : strlen(d);

	for (; *i < b->nroots; (*i)++) {
		const char *r = b->roots[*i];

		if (strncmp(r, d, n) == 0 && r[n] == '/' && r[n + 1]) {
			(*i)++;
			*len = strcspn(r + n + 1, "/");
			return r + n + 1;
		}
	}
	return NULL;
}

/* add_virtual - add to listing l of d the directories leading to save
 * set paths that it does not hold. */
static int add_virtual(struct browser *b, const char *d, struct listing *l)
{
	struct nsr_cfi_saveset ss = {.name = ""};
	struct nsr_cfi_entry e = {.type = NSR_ASM_DIR, .mode = 0755};
	const char *name;
	size_t i = 0, len, k;
	int rc = 0;

	while (!rc && (name = under_root(b, d, &i, &len))) {
		char *full = malloc(len + 2);

		if (!full)
			return NSR_ERR_NOMEM;
		snprintf(full, len + 2, "/%.*s", (int)len, name);
		for (k = 0; k < l->n && strcmp(l->v[k].name, full + 1); k++)
			;
		e.path = full;
		if (k == l->n)
			rc = list_add(l, &ss, &e);
		free(full);
	}
	return rc;
}

/* list_dir - the children of directory dir as of the browse time. */
static int list_dir(struct browser *b, const char *dir, struct listing *l)
{
	int rc;

	memset(l, 0, sizeof(*l));
	rc = nsr_ixclnt_list(b->ix, b->o->rec.client, dir, b->browse, list_add,
			     l);
	return rc < 0 ? rc : add_virtual(b, dir, l);
}

/* find_obj - is normalized path p in the index as of the browse time,
 * every directory above it too?  1 (with *it filled, name owned) if so,
 * 0 if not, or an error (said).  "/" is always there. */
static int find_obj(struct browser *b, const char *p, struct item *it)
{
	char *up = strdup(p);
	int rc = 1;

	size_t skip = 0;

	memset(it, 0, sizeof(*it));
	it->e.type = NSR_ASM_DIR;
	if (!up)
		return NSR_ERR_NOMEM;
	if (b->cwd_ok && within(p, b->cwd)) { /* invariant 1 */
		if (strcmp(p, b->cwd) == 0) {
			it->ssid = b->cwd_ssid;
			free(up);
			return 1;
		}
		if (strcmp(b->cwd, "/") != 0)
			skip = strlen(b->cwd);
	}
	for (char *s = up + skip; rc == 1 && s && s[1];) {
		char *next = strchr(s + 1, '/'), *parent;
		struct listing l;
		size_t i;

		if (next)
			*next = '\0';
		parent = parent_of(up);
		rc = parent ? list_dir(b, parent, &l) : NSR_ERR_NOMEM;
		if (rc < 0) {
			say_ixerr(b, up, rc);
		} else {
			for (i = 0; i < l.n && strcmp(l.v[i].name, s + 1); i++)
				;
			rc = i < l.n &&
			     (next == NULL || l.v[i].e.type == NSR_ASM_DIR);
			if (rc && next == NULL) {
				*it = l.v[i];
				l.v[i].name = NULL;
			}
		}
		listing_free(&l);
		free(parent);
		if (next)
			*next = '/';
		s = next;
	}
	free(up);
	return rc;
}

/* mark_path - nsr_nameix_name_fn of the marks: the path of mark i. */
static const char *mark_path(const void *ctx, size_t i, size_t *len)
{
	const struct browser *b = ctx;

	*len = strlen(b->marks[i].path);
	return b->marks[i].path;
}

/* mark_named - the mark of exactly the len bytes at p, or NULL. */
static struct mark *mark_named(struct browser *b, const char *p, size_t len)
{
	size_t k = nsr_nameix_find(&b->mix, p, len);

	return k != NSR_NAMEIX_NONE ? &b->marks[k] : NULL;
}

/* mark_of - the mark covering p (p itself or a directory above), or
 * NULL: marks do not nest, so p and each directory above it are looked
 * up by name. */
static struct mark *mark_of(struct browser *b, const char *p)
{
	struct mark *m = mark_named(b, p, strlen(p));

	if (!m && p[0] == '/')
		m = mark_named(b, "/", 1);
	for (const char *s = strchr(p + 1, '/'); !m && s;
	     s = strchr(s + 1, '/'))
		m = mark_named(b, p, (size_t)(s - p));
	return m;
}

/* mark_drop - remove mark i. */
static void mark_drop(struct browser *b, size_t i)
{
	size_t last = b->nmarks - 1;

	nsr_nameix_del(&b->mix, i);
	if (i != last)
		nsr_nameix_move(&b->mix, last, i);
	free(b->marks[i].path);
	b->marks[i] = b->marks[last];
	b->nmarks--;
}

/* count_one - IX_Q_MATCH visitor: count objects. */
static int count_one(void *ctx, const struct nsr_cfi_saveset *ss,
		     const struct nsr_cfi_entry *e)
{
	NSR_UNUSED(ss);
	NSR_UNUSED(e);
	(*(uint64_t *)ctx)++;
	return 0;
}

/* What a name is in the browsed tree. */
enum kind {
	OBJ_FILE, /* anything but a directory */
	OBJ_DIR,  /* a directory in the index */
	OBJ_ABOVE /* a directory above the saved paths (no entry) */
};

/* kind_of - the kind of a listed or found object (entries made up for
 * the directories above the saved paths have no save set). */
static enum kind kind_of(const struct item *it)
{
	if (it->e.type != NSR_ASM_DIR)
		return OBJ_FILE;
	return it->ssid ? OBJ_DIR : OBJ_ABOVE;
}

static void mark_add(struct browser *b, const char *p, enum kind k);

/* outer_root - the next saved path (from *i on) within p that is not
 * within another saved path, or NULL. */
static const char *outer_root(struct browser *b, const char *p, size_t *i)
{
	for (; *i < b->nroots; (*i)++) {
		const char *r = b->roots[*i];
		size_t j;

		for (j = 0; j < b->nroots; j++)
			if (j != *i && strcmp(b->roots[j], r) &&
			    within(r, b->roots[j]))
				break;
		if (j == b->nroots && within(r, p))
			return b->roots[(*i)++];
	}
	return NULL;
}

/* mark_above - marking a directory above the saved paths marks the
 * outermost saved paths below it. */
static void mark_above(struct browser *b, const char *p)
{
	const char *r;
	size_t i = 0, n = 0;

	while ((r = outer_root(b, p, &i))) {
		mark_add(b, r, OBJ_DIR);
		n++;
	}
	if (n == 0)
		fprintf(b->out, "%s: nothing saved below it as of %s\n", p,
			when(b));
}

/* mark_add - mark normalized path p, an object of kind k; says what
 * happened. */
static void mark_add(struct browser *b, const char *p, enum kind k)
{
	struct nsr_ixclnt_q q = {.client = b->o->rec.client,
				 .kind = IX_Q_MATCH,
				 .path = p,
				 .time = b->browse};
	struct mark *m = mark_of(b, p);
	uint64_t files = 1;
	int rc;

	if (k == OBJ_ABOVE) {
		mark_above(b, p);
		return;
	}
	if (m) {
		fprintf(b->out, "%s: already marked%s%s\n", p,
			strcmp(m->path, p) ? " with " : "",
			strcmp(m->path, p) ? m->path : "");
		return;
	}
	if (k == OBJ_DIR) {
		rc = nsr_ixclnt_query(b->ix, &q, count_one, &files);
		if (rc < 0) {
			say_ixerr(b, p, rc);
			return;
		}
	}
	for (size_t i = b->nmarks; k == OBJ_DIR && i-- > 0;)
		if (within(b->marks[i].path, p))
			mark_drop(b, i);
	if (b->nmarks == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 16;

		m = realloc(b->marks, cap * sizeof(*m));
		if (!m) {
			fprintf(b->out, "out of memory\n");
			return;
		}
		b->marks = m;
		b->cap = cap;
	}
	m = &b->marks[b->nmarks];
	m->path = strdup(p);
	if (!m->path || nsr_nameix_add(&b->mix, b->nmarks) != NSR_OK) {
		free(m->path);
		fprintf(b->out, "out of memory\n");
		return;
	}
	m->files = files;
	m->dir = k == OBJ_DIR;
	b->nmarks++;
	fprintf(b->out, "%" PRIu64 " file(s) marked for recovery\n", files);
}

/* has_glob - does a name hold a wildcard? */
static int has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* each_target - call fn for every object arg names: one path, or with
 * wildcards in its last component every matching name of its directory
 * as of the browse time.  Says which names are not in the index. */
static void each_target(struct browser *b, const char *arg,
			void (*fn)(struct browser *, const char *, enum kind))
{
	char *p = normalize(b->cwd, arg), *dir = NULL;
	struct listing l = {0};
	struct item it;
	size_t hits = 0;
	int rc;

	if (!p) {
		fprintf(b->out, "out of memory\n");
		return;
	}
	if (!has_glob(strrchr(p, '/') + 1)) {
		rc = find_obj(b, p, &it);
		if (rc == 0)
			fprintf(b->out, "%s: not in the index as of %s\n", p,
				when(b));
		if (rc == 1)
			fn(b, p, kind_of(&it));
		free(it.name);
		free(p);
		return;
	}
	dir = parent_of(p);
	rc = dir ? list_dir(b, dir, &l) : NSR_ERR_NOMEM;
	if (rc < 0)
		say_ixerr(b, dir ? dir : p, rc);
	for (size_t i = 0; rc >= 0 && i < l.n; i++) {
		char *one;

		if (fnmatch(strrchr(p, '/') + 1, l.v[i].name, 0) != 0)
			continue;
		one = normalize(dir, l.v[i].name);
		if (one)
			fn(b, one, kind_of(&l.v[i]));
		free(one);
		hits++;
	}
	if (rc >= 0 && hits == 0)
		fprintf(b->out, "%s: no match in the index as of %s\n", p,
			when(b));
	listing_free(&l);
	free(dir);
	free(p);
}

/* mark_del - unmark normalized path p: its mark, or the marks below
 * it. */
static void mark_del(struct browser *b, const char *p, enum kind k)
{
	struct mark *m = mark_of(b, p);
	uint64_t files = 0;
	size_t n = 0;

	NSR_UNUSED(k);
	if (m && strcmp(m->path, p) != 0) {
		fprintf(b->out,
			"%s: inside the marked directory %s; delete %s, "
			"then add what you want of it\n",
			p, m->path, m->path);
		return;
	}
	if (m) { /* p's own mark: none lies inside it */
		files = m->files;
		mark_drop(b, (size_t)(m - b->marks));
		n = 1;
	}
	for (size_t i = b->nmarks; !m && i-- > 0;)
		if (within(b->marks[i].path, p)) {
			files += b->marks[i].files;
			mark_drop(b, i);
			n++;
		}
	if (n == 0)
		fprintf(b->out, "%s: not marked\n", p);
	else
		fprintf(b->out, "%" PRIu64 " file(s) unmarked\n", files);
}

/* mode_text - "drwxr-xr-x" of a type and mode. */
static void mode_text(int type, uint32_t mode, char out[11])
{
	static const char t[] = "?-dlhpcb";
	const char *rwx = "rwxrwxrwx";

	out[0] = type >= 0 && type < (int)sizeof(t) - 1 ? t[type] : '?';
	for (int i = 0; i < 9; i++)
		out[1 + i] = mode & (1u << (8 - i)) ? rwx[i] : '-';
	out[10] = '\0';
}

/* cmd_ls - ls/dir: the listing of cwd or of the named directories (a
 * name of a file lists that file), "*" before marked entries, "/" after
 * directories; long with the mode, size, mtime and save time. */
static void cmd_ls(struct browser *b, int argc, char **argv, int longfmt)
{
	for (int a = 0; a < argc || a == 0; a++) {
		char *p = normalize(b->cwd, a < argc ? argv[a] : ".");
		struct listing l = {0};
		struct item it = {0};
		int rc = p ? find_obj(b, p, &it) : NSR_ERR_NOMEM;

		if (rc == 0)
			fprintf(b->out, "%s: not in the index as of %s\n", p,
				when(b));
		if (rc == 1 && it.e.type == NSR_ASM_DIR) {
			rc = list_dir(b, p, &l);
			if (rc < 0)
				say_ixerr(b, p, rc);
			if (argc > 1)
				fprintf(b->out, "%s:\n", p);
		} else if (rc == 1) {
			l.v = &it;
			l.n = 1;
		}
		for (size_t i = 0; rc >= 0 && i < l.n; i++) {
			const struct item *x = &l.v[i];
			char *full = it.e.type == NSR_ASM_DIR
					     ? normalize(p, x->name)
					     : strdup(p);
			int marked = full && mark_of(b, full);
			const char *slash = x->e.type == NSR_ASM_DIR ? "/" : "";
			char m[11], t1[64];

			free(full);
			if (!longfmt) {
				fprintf(b->out, "%s%s%s\n", marked ? "*" : "",
					x->name, slash);
				continue;
			}
			mode_text(x->e.type, x->e.mode, m);
			browse_date(x->e.mtime, t1, sizeof(t1));
			fprintf(b->out, "%c%s %12" PRIu64 " %s %s%s\n",
				marked ? '*' : ' ', m, x->e.size, t1, x->name,
				slash);
		}
		if (l.v == &it)
			l.v = NULL, l.n = 0;
		listing_free(&l);
		free(it.name);
		free(p);
	}
}

/* cmd_cd - change the browse directory. */
static void cmd_cd(struct browser *b, int argc, char **argv)
{
	char *p = normalize(b->cwd, argc > 0 ? argv[0] : "/");
	struct item it;
	int rc = p ? find_obj(b, p, &it) : NSR_ERR_NOMEM;

	if (rc == 0)
		fprintf(b->out, "%s: not in the index as of %s\n", p, when(b));
	else if (rc == 1 && it.e.type != NSR_ASM_DIR)
		fprintf(b->out, "%s: not a directory\n", p);
	if (rc == 1 && it.e.type == NSR_ASM_DIR) {
		free(b->cwd);
		b->cwd = p;
		b->cwd_ssid = it.ssid;
		p = NULL;
	}
	if (rc >= 0)
		free(it.name);
	free(p);
}

/* level_of - the level of save set ssid in words ("?" when the media
 * database cannot say). */
static const char *level_of(struct browser *b, uint64_t ssid)
{
	struct mmdb_saveset ss;

	if (!b->mm && !b->mm_tried) {
		b->mm_tried = 1;
		if (mmdb_clnt_open(b->o->rec.server, &b->mm, NULL) != NSR_OK)
			b->mm = NULL;
	}
	if (!b->mm || ssid > UINT32_MAX ||
	    mmdb_clnt_ss_get(b->mm, (uint32_t)ssid, &ss) != NSR_OK)
		return "?";
	return nsr_level_name(ss.level);
}

/* One versions table being printed. */
struct vers {
	struct browser *b;
	size_t n;
	int shown; /* the version a browse at the browse time shows */
};

/* vers_one - IX_Q_VERSIONS visitor: one line per version, newest
 * first; ">" before the one the browse time shows. */
static int vers_one(void *ctx, const struct nsr_cfi_saveset *ss,
		    const struct nsr_cfi_entry *e)
{
	struct vers *v = ctx;
	struct browser *b = v->b;
	int cur = !v->shown && (!b->browse || ss->savetime <= b->browse);
	char t[64];

	if (v->n++ == 0)
		fprintf(b->out, "  %-26s %-6s %14s %12s  %s\n", "save time",
			"level", "size", "ssid", "type");
	v->shown |= cur;
	browse_date(ss->savetime, t, sizeof(t));
	fprintf(b->out, "%c %-26s %-6s %14" PRIu64 " %12" PRIu64 "  %s\n",
		cur ? '>' : ' ', t, level_of(b, ss->ssid), e->size, ss->ssid,
		browse_type_name(e->type));
	return 0;
}

/* cmd_versions - every backed-up version of the named objects (cwd when
 * none), whatever the browse time. */
static void cmd_versions(struct browser *b, int argc, char **argv)
{
	for (int a = 0; a < argc || a == 0; a++) {
		char *p = normalize(b->cwd, a < argc ? argv[a] : ".");
		struct nsr_ixclnt_q q = {.client = b->o->rec.client,
					 .kind = IX_Q_VERSIONS,
					 .path = p};
		struct vers v = {.b = b};
		int rc;

		if (!p) {
			fprintf(b->out, "out of memory\n");
			return;
		}
		fprintf(b->out, "versions of %s:\n", p);
		rc = nsr_ixclnt_query(b->ix, &q, vers_one, &v);
		if (rc < 0)
			say_ixerr(b, p, rc);
		else if (v.n == 0)
			fprintf(b->out, "%s: no version in the index\n", p);
		else
			fprintf(b->out, "%zu version(s)\n", v.n);
		free(p);
	}
}

/* One find being printed. */
struct found {
	struct browser *b;
	size_t n;
};

/* found_one - IX_Q_MATCH visitor: one path per line, "*" before a
 * marked one, "/" after a directory. */
static int found_one(void *ctx, const struct nsr_cfi_saveset *ss,
		     const struct nsr_cfi_entry *e)
{
	struct found *f = ctx;

	NSR_UNUSED(ss);
	fprintf(f->b->out, "%s%s%s\n", mark_of(f->b, e->path) ? "*" : "",
		e->path, e->type == NSR_ASM_DIR ? "/" : "");
	f->n++;
	return 0;
}

/* find_in - IX_Q_MATCH below directory d (and d itself when it is a
 * saved path whose name matches: a directory above the saved paths has
 * no entry of its own to match). */
static int find_in(struct browser *b, const char *d, const char *pattern,
		   struct found *f, int self)
{
	struct nsr_ixclnt_q q = {.client = b->o->rec.client,
				 .kind = IX_Q_MATCH,
				 .path = d,
				 .pattern = pattern,
				 .time = b->browse};
	const char *name = strrchr(d, '/') + 1;

	if (self && fnmatch(pattern, name, 0) == 0) {
		fprintf(b->out, "%s%s/\n", mark_of(b, d) ? "*" : "", d);
		f->n++;
	}
	return nsr_ixclnt_query(b->ix, &q, found_one, f);
}

/* cmd_find - the objects under a directory (default the current one)
 * whose names match a pattern, as of the browse time (nsrindexd walks
 * the tree as a browse shows it: IX_Q_MATCH); from a directory above
 * the saved paths, below each of them. */
static void cmd_find(struct browser *b, int argc, char **argv)
{
	struct found f = {.b = b};
	struct item it;
	const char *r;
	size_t i = 0;
	char *p;
	int rc;

	if (argc < 1 || argc > 2) {
		fprintf(b->out, "find: name a pattern and optionally a "
				"directory, e.g. find \"*.conf\" /etc\n");
		return;
	}
	p = normalize(b->cwd, argc > 1 ? argv[1] : ".");
	rc = p ? find_obj(b, p, &it) : NSR_ERR_NOMEM;
	if (rc == 0)
		fprintf(b->out, "%s: not in the index as of %s\n", p, when(b));
	if (rc == 1) {
		enum kind k = kind_of(&it);

		free(it.name);
		rc = k == OBJ_ABOVE ? NSR_OK : find_in(b, p, argv[0], &f, 0);
		while (k == OBJ_ABOVE && rc >= 0 && (r = outer_root(b, p, &i)))
			rc = find_in(b, r, argv[0], &f, 1);
		if (rc >= 0)
			fprintf(b->out, "%zu object(s) found\n", f.n);
	}
	if (rc < 0)
		say_ixerr(b, p ? p : argv[0], rc);
	free(p);
}

/* cmd_changetime - show or change the browse time (nsr_getdate). */
static void cmd_changetime(struct browser *b, int argc, char **argv)
{
	struct nsr_getdate_error why;
	struct nsr_buf text;
	struct item it;
	char *root;
	time_t t;
	int rc;

	if (argc == 0) {
		fprintf(b->out, "browse time: %s\n", when(b));
		return;
	}
	nsr_buf_init(&text, 0);
	for (int i = 0; i < argc; i++)
		nsr_buf_addf(&text, "%s%s", i ? " " : "", argv[i]);
	memset(&why, 0, sizeof(why));
	if (nsr_getdate_err(text.data, time(NULL), &t, &why) != NSR_OK) {
		fprintf(b->out,
			"%s: not a time I understand (%s); e.g. "
			"changetime yesterday, changetime "
			"\"11/24/2026 10:00\"\n",
			text.data, why.msg[0] ? why.msg : "syntax");
	} else {
		b->browse = t;
		fprintf(b->out, "time changed to %s\n", when(b));
		if (roots_load(b) < 0)
			say_ixerr(b, "changetime", NSR_ERR_RPC);
		b->cwd_ok = 0;
		rc = find_obj(b, b->cwd, &it);
		if (rc == 1 && it.e.type == NSR_ASM_DIR) {
			b->cwd_ok = 1;
			b->cwd_ssid = it.ssid;
		} else if (rc >= 0 && (root = strdup("/"))) {
			fprintf(b->out,
				"%s was not in the index then; now in /\n",
				b->cwd);
			free(b->cwd);
			b->cwd = root;
			b->cwd_ok = 1;
			b->cwd_ssid = 0;
		}
		if (rc >= 0)
			free(it.name);
	}
	nsr_buf_release(&text);
}

/* cmd_destination - where marked files go. */
static void cmd_destination(struct browser *b)
{
	static const char *const pol[] = {"kept (not recovered)", "overwritten",
					  "renamed (.R)"};
	int c = b->rec.conflict;

	if (b->rec.dest)
		fprintf(b->out, "recover files into %s\n", b->rec.dest);
	else
		fprintf(b->out, "recover files into their original location\n");
	fprintf(b->out, "existing files are %s\n",
		c >= 0 && c <= 2 ? pol[c] : "?");
}

/* cmd_relocate - recover under another directory. */
static void cmd_relocate(struct browser *b, int argc, char **argv)
{
	char cwd[4096], *d;

	if (argc != 1) {
		fprintf(b->out, "relocate: name one directory to recover "
				"into, e.g. relocate /tmp/restore\n");
		cmd_destination(b);
		return;
	}
	if (argv[0][0] != '/' && getcwd(cwd, sizeof(cwd)))
		d = normalize(cwd, argv[0]);
	else
		d = normalize("/", argv[0]);
	if (!d) {
		fprintf(b->out, "out of memory\n");
		return;
	}
	free(b->dest);
	b->dest = d;
	b->rec.dest = d;
	cmd_destination(b);
}

/* cmd_force - toggle overwriting existing files. */
static void cmd_force(struct browser *b)
{
	b->rec.conflict = b->rec.conflict == NSR_RESTORE_OVERWRITE
				  ? b->conflict0
				  : NSR_RESTORE_OVERWRITE;
	if (b->rec.conflict == NSR_RESTORE_OVERWRITE &&
	    b->conflict0 == NSR_RESTORE_OVERWRITE)
		b->rec.conflict = NSR_RESTORE_SKIP;
	cmd_destination(b);
}

/* cmd_list - the marked files. */
static void cmd_list(struct browser *b)
{
	uint64_t files = 0;

	for (size_t i = 0; i < b->nmarks; i++) {
		fprintf(b->out, "%s%s\n", b->marks[i].path,
			b->marks[i].dir && strcmp(b->marks[i].path, "/") ? "/"
									 : "");
		files += b->marks[i].files;
	}
	fprintf(b->out, "%" PRIu64 " file(s) marked for recovery\n", files);
}

/* cmd_recover - restore the marked files as of the browse time through
 * the recover session; the marks are kept if something failed. */
static void cmd_recover(struct browser *b)
{
	struct nsr_session_recover *sr = NULL;
	struct nsr_restore_stats sum;
	const char **paths;
	struct nsr_buf err;
	uint64_t files = 0;
	int failed = 0;

	if (b->nmarks == 0) {
		fprintf(b->out, "No files marked for recovery; mark them "
				"with add first.\n");
		return;
	}
	for (size_t i = 0; i < b->nmarks; i++)
		files += b->marks[i].files;
	fprintf(b->out, "Recovering %" PRIu64 " file(s) into %s\n", files,
		b->rec.dest ? b->rec.dest : "their original location");
	fflush(b->out);
	nsr_buf_init(&err, 0);
	memset(&sum, 0, sizeof(sum));
	if (nsr_session_recover_open(&b->rec, &sr, &err) != NSR_OK) {
		fprintf(b->out, "cannot reach the OpenNSR server %s: %s\n",
			b->rec.server, err.data);
		failed = 1;
	}
	paths = sr ? calloc(b->nmarks, sizeof(*paths)) : NULL;
	if (sr && !paths) {
		fprintf(b->out, "recover: out of memory\n");
		failed = 1;
	} else if (sr) {
		for (size_t i = 0; i < b->nmarks; i++)
			paths[i] = b->marks[i].path;
		failed |= nsr_session_recover_paths(sr, paths, b->nmarks,
						    b->browse, &sum);
		free(paths);
	}
	nsr_session_recover_close(sr);
	nsr_buf_release(&err);
	fflush(stdout);
	if (failed) {
		b->failed = 1;
		fprintf(b->out,
			"Recover failed: %" PRIu64 " file(s) "
			"recovered; the messages above say what was "
			"not; the marks are kept\n",
			sum.files);
		return;
	}
	if (sum.skipped)
		fprintf(b->out,
			"%" PRIu64 " existing file(s) kept (force or "
			"-iY overwrites, -iR renames)\n",
			sum.skipped);
	browse_date(time(NULL), b->when, sizeof(b->when));
	fprintf(b->out, "Recover completion time: %s\n", b->when);
	while (b->nmarks)
		mark_drop(b, b->nmarks - 1);
}

/* cmd_help - the commands. */
static void cmd_help(struct browser *b)
{
	fputs("commands (names relative to the current directory; "
	      "wildcards * ? [ ] in add,\n"
	      "delete and the last part of a name):\n"
	      "  ls [name...]       list a directory as of the browse time "
	      "(* marked, / directory)\n"
	      "  dir [name...]      the same, long: mode, size, modified, "
	      "name (also ll)\n"
	      "  cd [dir]           change directory (default /); pwd "
	      "shows it\n"
	      "  add [name...]      mark for recovery (directories with "
	      "their tree)\n"
	      "  delete name...     unmark\n"
	      "  list               show the marked files\n"
	      "  versions [name...] every backed-up version (> the one the "
	      "browse time shows)\n"
	      "  find pattern [dir] names matching pattern below dir, as of "
	      "the browse time\n"
	      "  changetime [time]  show or change the browse time "
	      "(nsr_getdate(1))\n"
	      "  destination        where files go and what happens to "
	      "existing ones\n"
	      "  relocate dir       recover into dir instead of the "
	      "original location\n"
	      "  force              toggle overwriting existing files\n"
	      "  recover            recover the marked files\n"
	      "  help, ?            this list\n"
	      "  quit, exit         leave (marked files are not "
	      "recovered)\n",
	      b->out);
}

/* split - split line into words in place (spaces separate; "..." and
 * '...' quote, backslash escapes); returns the count, -1 when there are
 * more than max or a quote is not closed. */
static int split(char *line, char **argv, int max)
{
	int argc = 0;
	char *r = line, *w = line;

	for (;;) {
		char q = 0;

		while (*r == ' ' || *r == '\t')
			r++;
		if (!*r)
			return argc;
		if (argc == max)
			return -1;
		argv[argc++] = w;
		for (; *r && (q || (*r != ' ' && *r != '\t')); r++) {
			if (!q && (*r == '"' || *r == '\'')) {
				q = *r;
			} else if (q && *r == q) {
				q = 0;
			} else if (*r == '\\' && r[1] && q != '\'') {
				*w++ = *++r;
			} else {
				*w++ = *r;
			}
		}
		if (q)
			return -1;
		if (*r)
			r++;
		*w++ = '\0';
	}
}

/* run_one - one command line; 1 when the dialogue ends. */
static int run_one(struct browser *b, char *line)
{
	char *argv[MAX_ARGS];
	int argc = split(line, argv, MAX_ARGS);
	const char *c;

	if (argc < 0) {
		fprintf(b->out,
			"cannot read that line: an unclosed quote or "
			"more than %d words\n",
			MAX_ARGS - 1);
		return 0;
	}
	if (argc == 0)
		return 0;
	c = argv[0];
	argc--;
	if (!strcmp(c, "quit") || !strcmp(c, "exit"))
		return 1;
	if (!strcmp(c, "ls"))
		cmd_ls(b, argc, argv + 1, 0);
	else if (!strcmp(c, "dir") || !strcmp(c, "ll"))
		cmd_ls(b, argc, argv + 1, 1);
	else if (!strcmp(c, "cd"))
		cmd_cd(b, argc, argv + 1);
	else if (!strcmp(c, "pwd"))
		fprintf(b->out, "%s\n", b->cwd);
	else if (!strcmp(c, "add"))
		for (int i = 0; i < argc || i == 0; i++)
			each_target(b, argc ? argv[1 + i] : ".", mark_add);
	else if (!strcmp(c, "delete") && argc == 0)
		fprintf(b->out, "delete: name what to unmark (list shows the "
				"marked files)\n");
	else if (!strcmp(c, "delete"))
		for (int i = 0; i < argc; i++)
			each_target(b, argv[1 + i], mark_del);
	else if (!strcmp(c, "list"))
		cmd_list(b);
	else if (!strcmp(c, "versions"))
		cmd_versions(b, argc, argv + 1);
	else if (!strcmp(c, "find"))
		cmd_find(b, argc, argv + 1);
	else if (!strcmp(c, "changetime"))
		cmd_changetime(b, argc, argv + 1);
	else if (!strcmp(c, "destination"))
		cmd_destination(b);
	else if (!strcmp(c, "relocate"))
		cmd_relocate(b, argc, argv + 1);
	else if (!strcmp(c, "force"))
		cmd_force(b);
	else if (!strcmp(c, "recover"))
		cmd_recover(b);
	else if (!strcmp(c, "help") || !strcmp(c, "?"))
		cmd_help(b);
	else
		fprintf(b->out,
			"%s: unknown command; help lists the "
			"commands\n",
			c);
	return 0;
}

/* any_ss - IX_SAVESETS visitor: the client has a save set at or before
 * the browse time. */
static int any_ss(void *ctx, const struct nsr_cfi_saveset *ss)
{
	struct browser *b = ctx;

	return !b->browse || ss->savetime <= b->browse;
}

/* start - connect, check the client has an index with a save set at or
 * before the browse time, and pick the starting directory. */
static int start(struct browser *b, struct nsr_buf *err)
{
	struct item it;
	int rc = nsr_ixclnt_open(b->rec.server, &b->ix, err);

	if (rc)
		return rc;
	rc = nsr_ixclnt_savesets(b->ix, b->rec.client, any_ss, b);
	if (rc < 0) {
		nsr_buf_addstr(err, nsr_ixclnt_errmsg(b->ix));
		return rc;
	}
	if (rc == 0) {
		nsr_buf_addf(err,
			     "client %s has no backup in its index as of %s",
			     b->rec.client, when(b));
		return NSR_ERR_NOTFOUND;
	}
	rc = roots_load(b);
	if (rc < 0) {
		nsr_buf_addstr(err, nsr_ixclnt_errmsg(b->ix));
		return rc;
	}
	b->cwd = normalize("/", b->o->cwd ? b->o->cwd : "/");
	if (!b->cwd)
		return NSR_ERR_NOMEM;
	rc = find_obj(b, b->cwd, &it);
	b->cwd_ok = 1;
	b->cwd_ssid = it.ssid;
	if (rc >= 0)
		free(it.name);
	if (rc == 1 && it.e.type == NSR_ASM_DIR)
		return NSR_OK;
	free(b->cwd);
	b->cwd = strdup("/");
	b->cwd_ssid = 0;
	return b->cwd ? NSR_OK : NSR_ERR_NOMEM;
}

/* nsr_browse_run - the recover> dialogue. */
int nsr_browse_run(const struct nsr_browse_opts *o, struct nsr_buf *err)
{
	struct browser b;
	struct nsr_buf line;
	int rc;

	memset(&b, 0, sizeof(b));
	nsr_nameix_init(&b.mix, mark_path, &b);
	b.o = o;
	b.rec = o->rec;
	b.conflict0 = o->rec.conflict;
	b.browse = o->browse;
	b.out = o->out;
	if (o->rec.dest) {
		b.dest = strdup(o->rec.dest);
		b.rec.dest = b.dest;
	}
	nsr_buf_init(&line, 0);
	rc = start(&b, err);
	while (rc == NSR_OK) {
		int got;

		fflush(b.out);
		nsr_buf_reset(&line);
		got = o->read(o->read_ctx, "recover> ", &line);
		if (got <= 0 || run_one(&b, line.data))
			break;
	}
	if (rc == NSR_OK)
		rc = b.failed;
	while (b.nmarks)
		mark_drop(&b, b.nmarks - 1);
	free(b.marks);
	nsr_nameix_free(&b.mix);
	roots_free(&b);
	free(b.roots);
	free(b.cwd);
	free(b.dest);
	nsr_ixclnt_close(b.ix);
	mmdb_clnt_close(b.mm);
	nsr_buf_release(&line);
	return rc;
}
