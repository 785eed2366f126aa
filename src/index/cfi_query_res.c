/*
 * cfi_query_res.c - queries whose results are gathered once and kept for
 * paging: the versions of a file across save sets, objects found by name
 * pattern under a directory as of a time, and a save set's entries.  The
 * directory walk of nsr_cfi_match reuses nsr_cfi_list_dir, so it shows
 * exactly what a point-in-time browse shows.
 */
#include "nsr/compat.h"

#include <fnmatch.h>

#include "nsr/asm.h"
#include "nsr/cfi.h"
#include "nsr/err.h"

/* One result: a copy of the entry (path owned) and where it is. */
struct res_item {
	struct nsr_cfi_entry e;
	uint64_t ssid;
	int64_t savetime;
};

struct nsr_cfi_results {
	struct res_item *v;
	size_t n, cap;
};

/* results_new - an empty result set. */
static int results_new(struct nsr_cfi_results **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? NSR_OK : NSR_ERR_NOMEM;
}

/* results_add - visitor: append a copy of one entry (invariant 1). */
static int results_add(void *ctx, const struct nsr_cfi_saveset *ss,
		       const struct nsr_cfi_entry *e)
{
	struct nsr_cfi_results *r = ctx;
	struct res_item *it;

	if (r->n == NSR_CFI_RESULTS_MAX)
		return NSR_ERR_LIMIT;
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 64;

		it = realloc(r->v, cap * sizeof(*it));
		if (!it)
			return NSR_ERR_NOMEM;
		r->v = it;
		r->cap = cap;
	}
	it = &r->v[r->n];
	it->e = *e;
	it->e.path = strdup(e->path);
	if (!it->e.path)
		return NSR_ERR_NOMEM;
	it->ssid = ss->ssid;
	it->savetime = ss->savetime;
	r->n++;
	return 0;
}

/* finish - hand the results out, or free them on an error. */
static int finish(struct nsr_cfi_results *r, int rc,
		  struct nsr_cfi_results **out)
{
	if (rc > 0) /* a visitor of ours never stops early */
		rc = NSR_ERR_STATE;
	if (rc < 0) {
		nsr_cfi_results_free(r);
		r = NULL;
	}
	*out = r;
	return rc;
}

/* nsr_cfi_versions - every version of a path, newest first. */
int nsr_cfi_versions(struct nsr_cfi *c, const char *path, int64_t t,
		     struct nsr_cfi_results **out)
{
	struct nsr_cfi_results *r;
	int rc = results_new(&r);

	*out = NULL;
	if (rc)
		return rc;
	return finish(r, nsr_cfi_find(c, path, t, results_add, r), out);
}

/* The walk of nsr_cfi_match: results, and the directories still to list
 * (a queue: breadth first). */
struct match {
	struct nsr_cfi_results *r;
	const char *pattern;
	char **dirs;
	size_t ndirs, cap, next;
};

/* match_one - visitor of one listing: keep a matching name, queue a
 * directory for listing. */
static int match_one(void *ctx, const struct nsr_cfi_saveset *ss,
		     const struct nsr_cfi_entry *e)
{
	struct match *m = ctx;
	const char *name = strrchr(e->path, '/');
	int rc = 0;

	name = name ? name + 1 : e->path;
	if (!m->pattern || !*m->pattern || fnmatch(m->pattern, name, 0) == 0)
		rc = results_add(m->r, ss, e);
	if (rc || e->type != NSR_ASM_DIR)
		return rc;
	if (m->ndirs == NSR_CFI_RESULTS_MAX)
		return NSR_ERR_LIMIT;
	if (m->ndirs == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 64;
		char **d = realloc(m->dirs, cap * sizeof(*d));

		if (!d)
			return NSR_ERR_NOMEM;
		m->dirs = d;
		m->cap = cap;
	}
	m->dirs[m->ndirs] = strdup(e->path);
	if (!m->dirs[m->ndirs])
		return NSR_ERR_NOMEM;
	m->ndirs++;
	return 0;
}

/* nsr_cfi_match - objects under dir whose names match pattern as of t:
 * every directory of the tree is listed as a browse lists it. */
int nsr_cfi_match(struct nsr_cfi *c, const char *dir, const char *pattern,
		  int64_t t, struct nsr_cfi_results **out)
{
	struct match m;
	int rc;

	*out = NULL;
	if (!dir || !*dir)
		return NSR_ERR_INVAL;
	memset(&m, 0, sizeof(m));
	m.pattern = pattern;
	rc = results_new(&m.r);
	if (rc)
		return rc;
	rc = nsr_cfi_list_dir(c, dir, t, match_one, &m);
	for (; rc == NSR_OK && m.next < m.ndirs; m.next++)
		rc = nsr_cfi_list_dir(c, m.dirs[m.next], t, match_one, &m);
	for (size_t i = 0; i < m.ndirs; i++)
		free(m.dirs[i]);
	free(m.dirs);
	return finish(m.r, rc, out);
}

/* nsr_cfi_saveset_results - a save set's entries in saved order. */
int nsr_cfi_saveset_results(struct nsr_cfi *c, uint64_t ssid,
			    struct nsr_cfi_results **out)
{
	struct nsr_cfi_results *r;
	int rc = results_new(&r);

	*out = NULL;
	if (rc)
		return rc;
	return finish(r, nsr_cfi_entries(c, ssid, results_add, r), out);
}

/* nsr_cfi_results_count - how many results. */
size_t nsr_cfi_results_count(const struct nsr_cfi_results *r)
{
	return r ? r->n : 0;
}

/* nsr_cfi_results_visit - visit a page of results. */
int nsr_cfi_results_visit(const struct nsr_cfi_results *r, size_t from,
			  size_t n, nsr_cfi_visit_fn visit, void *ctx)
{
	struct nsr_cfi_saveset ss = {.name = ""};
	int rc = 0;

	for (size_t i = from; r && i < r->n && i - from < n && !rc; i++) {
		ss.ssid = r->v[i].ssid;
		ss.savetime = r->v[i].savetime;
		rc = visit(ctx, &ss, &r->v[i].e);
	}
	return rc;
}

/* nsr_cfi_results_free - free a result set. */
void nsr_cfi_results_free(struct nsr_cfi_results *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		free((char *)r->v[i].e.path);
	free(r->v);
	free(r);
}

/* One kept cursor; id 0 = a free slot. */
struct cursor {
	uint64_t id, used;
	char *client;
	struct nsr_cfi_results *r;
};

struct nsr_cfi_cursors {
	struct cursor *v;
	size_t max;
	uint64_t next_id, tick;
};

/* nsr_cfi_cursors_new - an empty cursor set. */
int nsr_cfi_cursors_new(size_t max, struct nsr_cfi_cursors **out)
{
	struct nsr_cfi_cursors *k;

	*out = NULL;
	if (max == 0)
		return NSR_ERR_INVAL;
	k = calloc(1, sizeof(*k));
	if (!k)
		return NSR_ERR_NOMEM;
	k->v = calloc(max, sizeof(*k->v));
	if (!k->v) {
		free(k);
		return NSR_ERR_NOMEM;
	}
	k->max = max;
	k->next_id = 1;
	*out = k;
	return NSR_OK;
}

/* cursor_clear - free one slot's contents. */
static void cursor_clear(struct cursor *c)
{
	nsr_cfi_results_free(c->r);
	free(c->client);
	memset(c, 0, sizeof(*c));
}

/* nsr_cfi_cursors_keep - keep r in a free slot or the least recently
 * used one (invariant 1) under a new id (invariant 2). */
uint64_t nsr_cfi_cursors_keep(struct nsr_cfi_cursors *k, const char *client,
			      struct nsr_cfi_results *r)
{
	struct cursor *c = &k->v[0];
	char *name = strdup(client);

	if (!name) {
		nsr_cfi_results_free(r);
		return 0;
	}
	for (size_t i = 0; i < k->max; i++) {
		if (!k->v[i].id) {
			c = &k->v[i];
			break;
		}
		if (k->v[i].used < c->used)
			c = &k->v[i];
	}
	cursor_clear(c);
	c->id = k->next_id++;
	c->used = ++k->tick;
	c->client = name;
	c->r = r;
	return c->id;
}

/* find_cursor - the slot of cursor id of client (invariant 3). */
static struct cursor *find_cursor(struct nsr_cfi_cursors *k, const char *client,
				  uint64_t id)
{
	for (size_t i = 0; id && i < k->max; i++)
		if (k->v[i].id == id && strcmp(k->v[i].client, client) == 0)
			return &k->v[i];
	return NULL;
}

/* nsr_cfi_cursors_get - a kept cursor's results, now most recently
 * used. */
const struct nsr_cfi_results *nsr_cfi_cursors_get(struct nsr_cfi_cursors *k,
						  const char *client,
						  uint64_t id)
{
	struct cursor *c = find_cursor(k, client, id);

	if (!c)
		return NULL;
	c->used = ++k->tick;
	return c->r;
}

/* nsr_cfi_cursors_drop - drop one cursor. */
void nsr_cfi_cursors_drop(struct nsr_cfi_cursors *k, const char *client,
			  uint64_t id)
{
	struct cursor *c = find_cursor(k, client, id);

	if (c)
		cursor_clear(c);
}

/* nsr_cfi_cursors_free - drop all and free. */
void nsr_cfi_cursors_free(struct nsr_cfi_cursors *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->max; i++)
		cursor_clear(&k->v[i]);
	free(k->v);
	free(k);
}
