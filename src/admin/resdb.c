/*
 * resdb.c - the resource database: a directory with one file per resource.
 *
 * Owns loading (strict: every file must parse to exactly one resource whose
 * id is its name), id assignment, the database-wide checks (unique names,
 * singletons, create-only attributes) and durable changes: the file is
 * replaced atomically before the in-memory list changes.
 */
#include "nsr/compat.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/res.h"
#include "nsr/resdb.h"

#define RESDB_MAX_FILE (4u << 20)	/* one resource file, bytes */

struct nsr_resdb {
	char *dir;
	const struct nsr_res_schema *schema;
	nsr_resdb_hook_fn hook;
	void *hook_arg;
	struct nsr_res_list list;	/* sorted by id sequence number */
	unsigned long next_seq;
	int lockfd;			/* holds the flock; -1 if read-only */
	int readonly;
	int refs;			/* opts->refs */
	unsigned long gen;		/* changes of list so far */
	/* nsr_resdb_lookup's index of list as it was at gen idx_gen (0:
	 * none): open addressing, idx_cap slots (a power of two); and
	 * for nsr_resdb_next_of_type, next[i] the list index + 1 of the
	 * next resource of list index i's type (0: none), next_cap
	 * entries. */
	struct idx_slot *idx;
	size_t idx_cap;
	unsigned long idx_gen;
	uint32_t *next;
	size_t next_cap;
};

/* One slot of the lookup index: at is a list index + 1 (0: empty); tail,
 * while the index is built, the list index + 1 of the last resource of
 * a type key's type so far. */
struct idx_slot {
	uint32_t hash, at, tail;
};

/* id_seq - the sequence number (first component) of an id, 0 if bad. */
static unsigned long id_seq(const char *id)
{
	return strtoul(id, NULL, 10);
}

/* id_valid - 12 dot-separated decimal numbers, first one non-zero. */
static int id_valid(const char *id)
{
	int parts = 0;
	const char *p = id;

	for (;;) {
		int digits = 0;

		while (*p >= '0' && *p <= '9' && digits < 10) {
			p++;
			digits++;
		}
		if (digits == 0)
			return 0;
		parts++;
		if (*p == '\0')
			break;
		if (*p != '.')
			return 0;
		p++;
	}
	return parts == 12 && id_seq(id) != 0;
}

/* is_leftover - "<id>.tmp.<pid>": a temporary of nsr_file_replace that a
 * crash left behind; the resource file itself is intact. */
static int is_leftover(const char *name)
{
	const char *dot = strstr(name, ".tmp.");
	char id[96];
	size_t n;

	if (!dot || (size_t)(dot - name) >= sizeof(id))
		return 0;
	n = (size_t)(dot - name);
	memcpy(id, name, n);
	id[n] = '\0';
	if (!id_valid(id) || dot[5] == '\0')
		return 0;
	return strspn(dot + 5, "0123456789") == strlen(dot + 5);
}

/* set_err - fill a parse-style error naming a file. */
static void set_err(struct nsr_res_error *err, const char *file,
		    const char *msg)
{
	if (!err)
		return;
	memset(err, 0, sizeof(*err));
	snprintf(err->file, sizeof(err->file), "%s", file);
	snprintf(err->msg, sizeof(err->msg), "%s", msg);
}

/* load_one - parse dir/name into the database. */
static int load_one(struct nsr_resdb *db, const char *name,
		    struct nsr_res_error *err)
{
	struct nsr_res_list got;
	struct nsr_buf text;
	char *path = nsr_path_join(db->dir, name);
	const char *id;
	int rc;

	nsr_res_list_init(&got);
	nsr_buf_init(&text, 0);
	if (!path) {
		set_err(err, name, nsr_strerror(NSR_ERR_NOMEM));
		rc = NSR_ERR_NOMEM;
		goto out;
	}
	if (!id_valid(name)) {
		set_err(err, path, "file name is not a resource id");
		rc = NSR_ERR_CORRUPT;
		goto out;
	}
	rc = nsr_file_read(path, &text, RESDB_MAX_FILE);
	if (rc != NSR_OK) {
		set_err(err, path, nsr_strerror(rc));
		goto out;
	}
	rc = nsr_res_parse(text.data, text.len, &got, err);
	if (rc != NSR_OK) {
		if (err)
			snprintf(err->file, sizeof(err->file), "%s", path);
		goto out;
	}
	rc = NSR_ERR_CORRUPT;
	if (got.n != 1) {
		set_err(err, path, got.n ? "more than one resource in the file"
					 : "no resource in the file");
		goto out;
	}
	id = nsr_res_id(got.items[0]);
	if (!id || strcmp(id, name) != 0) {
		set_err(err, path, "'" NSR_RES_ID_ATTR "' does not match the "
			"file name");
		goto out;
	}
	if (!nsr_res_type(got.items[0])) {
		set_err(err, path, "resource has no 'type' attribute");
		goto out;
	}
	rc = nsr_res_list_take(&db->list, got.items[0]);
	got.n = 0;
	if (rc == NSR_OK && id_seq(name) >= db->next_seq)
		db->next_seq = id_seq(name) + 1;
out:
	nsr_res_list_release(&got);
	nsr_buf_release(&text);
	free(path);
	return rc;
}

/* cmp_res - order by id sequence number. */
static int cmp_res(const void *a, const void *b)
{
	unsigned long x = id_seq(nsr_res_id(*(struct nsr_res *const *)a));
	unsigned long y = id_seq(nsr_res_id(*(struct nsr_res *const *)b));

	return x < y ? -1 : x > y;
}

/* load_all - read every resource file of the directory. */
static int load_all(struct nsr_resdb *db, struct nsr_res_error *err)
{
	struct dirent *de;
	DIR *d = opendir(db->dir);
	int rc = NSR_OK;

	if (!d) {
		rc = errno == ENOENT ? NSR_ERR_NOTFOUND : NSR_ERR_SYSTEM;
		set_err(err, db->dir, rc == NSR_ERR_NOTFOUND ?
			"no such directory" : strerror(errno));
		return rc;
	}
	for (de = readdir(d); de; de = readdir(d)) {
		if (de->d_name[0] == '.')
			continue;
		if (is_leftover(de->d_name)) {
			char *path = nsr_path_join(db->dir, de->d_name);

			/* An unfinished write; only the owner may tidy up. */
			if (!db->readonly && path)
				unlink(path);
			free(path);
			continue;
		}
		rc = load_one(db, de->d_name, err);
		if (rc != NSR_OK)
			break;
	}
	closedir(d);
	db->gen++;
	if (rc == NSR_OK && db->list.n)
		qsort(db->list.items, db->list.n, sizeof(db->list.items[0]),
		      cmp_res);
	return rc;
}

/* lock_dir - take the directory's exclusive lock for this handle. */
static int lock_dir(struct nsr_resdb *db, struct nsr_res_error *err)
{
	char *path = nsr_path_join(db->dir, ".lock");
	int rc = NSR_OK;

	if (!path)
		return NSR_ERR_NOMEM;
	db->lockfd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (db->lockfd < 0) {
		rc = errno == ENOENT ? NSR_ERR_NOTFOUND : NSR_ERR_SYSTEM;
		set_err(err, db->dir, rc == NSR_ERR_NOTFOUND ?
			"no such directory" : strerror(errno));
	} else if (flock(db->lockfd, LOCK_EX | LOCK_NB) != 0) {
		rc = errno == EWOULDBLOCK ? NSR_ERR_BUSY : NSR_ERR_SYSTEM;
		set_err(err, db->dir, rc == NSR_ERR_BUSY ?
			"the resource database is in use by another process "
			"(is nsrd running?)" : strerror(errno));
	}
	free(path);
	return rc;
}

/* refuse_readonly - the error for a change on a read-only handle. */
static int refuse_readonly(const struct nsr_resdb *db, struct nsr_buf *why)
{
	if (why)
		nsr_buf_addf(why, "%s is open read-only", db->dir);
	return NSR_ERR_READONLY;
}

/* nsr_resdb_open - open and load a resource directory. */
int nsr_resdb_open(const char *dir, const struct nsr_resdb_opts *opts,
		   struct nsr_resdb **out, struct nsr_res_error *err)
{
	struct nsr_resdb *db = NULL;
	int rc;

	*out = NULL;
	if (err)
		memset(err, 0, sizeof(*err));
	db = calloc(1, sizeof(*db));
	if (!db)
		return NSR_ERR_NOMEM;
	nsr_res_list_init(&db->list);
	db->next_seq = 1;
	db->gen = 1;
	db->lockfd = -1;
	db->readonly = opts && opts->readonly;
	db->refs = opts && opts->refs;
	db->schema = opts && opts->schema ? opts->schema : nsr_res_schema_std();
	if (opts) {
		db->hook = opts->hook;
		db->hook_arg = opts->hook_arg;
	}
	db->dir = strdup(dir);
	if (!db->dir) {
		rc = NSR_ERR_NOMEM;
		goto out;
	}
	if (opts && opts->create && !db->readonly) {
		rc = nsr_mkdir_p(dir, 0700);
		if (rc != NSR_OK) {
			set_err(err, dir, strerror(errno));
			goto out;
		}
	}
	if (!db->readonly) {
		rc = lock_dir(db, err);
		if (rc != NSR_OK)
			goto out;
	}
	rc = load_all(db, err);
	if (rc != NSR_OK)
		goto out;
	*out = db;
	db = NULL;
out:
	nsr_resdb_close(db);
	return rc;
}

/* nsr_resdb_close - free the handle. */
void nsr_resdb_close(struct nsr_resdb *db)
{
	if (!db)
		return;
	nsr_res_list_release(&db->list);
	free(db->idx);
	free(db->next);
	if (db->lockfd >= 0)
		close(db->lockfd);	/* releases the lock */
	free(db->dir);
	free(db);
}

/* nsr_resdb_schema - the schema in use. */
const struct nsr_res_schema *nsr_resdb_schema(const struct nsr_resdb *db)
{
	return db->schema;
}

/* nsr_resdb_count - number of resources. */
size_t nsr_resdb_count(const struct nsr_resdb *db)
{
	return db->list.n;
}

/* nsr_resdb_at - resource i. */
const struct nsr_res *nsr_resdb_at(const struct nsr_resdb *db, size_t i)
{
	return i < db->list.n ? db->list.items[i] : NULL;
}

/* index_of - position of the resource with this id, or -1. */
static long index_of(const struct nsr_resdb *db, const char *id)
{
	for (size_t i = 0; i < db->list.n; i++)
		if (strcmp(nsr_res_id(db->list.items[i]), id) == 0)
			return (long)i;
	return -1;
}

/* nsr_resdb_get - the resource with this id. */
const struct nsr_res *nsr_resdb_get(const struct nsr_resdb *db,
				    const char *id)
{
	long i = index_of(db, id);

	return i < 0 ? NULL : db->list.items[i];
}

/* nsr_resdb_find - next match at or after start. */
long nsr_resdb_find(const struct nsr_resdb *db, const struct nsr_res *query,
		    size_t start)
{
	for (size_t i = start; i < db->list.n; i++)
		if (nsr_res_match(db->list.items[i], query))
			return (long)i;
	return -1;
}

/* key_hash - FNV-1a of type as nsr_res_name_eq compares it (case and
 * blank runs folded, outer blanks dropped), then of name exactly (NULL:
 * the key of the type alone). */
static uint32_t key_hash(const char *type, const char *name)
{
	uint32_t h = 2166136261u;
	int blank = 0;

	while (*type == ' ' || *type == '\t')
		type++;
	for (; *type; type++) {
		if (*type == ' ' || *type == '\t') {
			blank = 1;
			continue;
		}
		if (blank)
			h = (h ^ ' ') * 16777619u;
		blank = 0;
		h = (h ^ (unsigned char)tolower((unsigned char)*type)) *
		    16777619u;
	}
	h = (h ^ (name ? 1u : 2u)) * 16777619u;
	for (; name && *name; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	return h;
}

/* key_match - does r have type and (unless NULL) name as a value of its
 * "name" attribute (the match nsr_resdb_find makes of such a query)? */
static int key_match(const struct nsr_res *r, const char *type,
		     const char *name)
{
	long k;

	if (!nsr_res_type(r) || !nsr_res_name_eq(nsr_res_type(r), type))
		return 0;
	if (!name)
		return 1;
	k = nsr_res_find(r, "name");
	for (size_t j = 0; k >= 0 && j < nsr_res_attr_nvalues(r, (size_t)k);
	     j++)
		if (strcmp(nsr_res_attr_value(r, (size_t)k, j), name) == 0)
			return 1;
	return 0;
}

/* idx_put - the key (type, name) of list index i, unless an earlier
 * resource holds it (the first one is what a lookup finds); its slot. */
static struct idx_slot *idx_put(struct nsr_resdb *db, const char *type,
				const char *name, size_t i)
{
	uint32_t h = key_hash(type, name);
	size_t mask = db->idx_cap - 1;

	for (size_t p = h & mask;; p = (p + 1) & mask) {
		struct idx_slot *e = &db->idx[p];

		if (!e->at) {
			e->hash = h;
			e->at = (uint32_t)i + 1;
			return e;
		}
		if (e->hash == h &&
		    key_match(db->list.items[e->at - 1], type, name))
			return e;
	}
}

/* idx_build - the index of the list as it is now; 0 or -1 (no memory:
 * lookups then scan; the test knob NSR_TEST_RESDB_NO_INDEX=1 makes it
 * so, for tests of the scans). */
static int idx_build(struct nsr_resdb *db)
{
	const char *knob = getenv("NSR_TEST_RESDB_NO_INDEX");
	size_t keys = 0, cap = 16;

	if (knob && strcmp(knob, "1") == 0)
		return -1;

	for (size_t i = 0; i < db->list.n; i++) {
		long k = nsr_res_find(db->list.items[i], "name");

		keys += 1 + (k < 0 ? 0
				   : nsr_res_attr_nvalues(db->list.items[i],
							  (size_t)k));
	}
	while (cap < 2 * keys + 2)
		cap *= 2;
	if (db->list.n > db->next_cap) {
		size_t nc = db->list.n * 2;
		uint32_t *nx = realloc(db->next, nc * sizeof(*nx));

		if (!nx)
			return -1;
		db->next = nx;
		db->next_cap = nc;
	}
	if (cap != db->idx_cap) {
		struct idx_slot *v = calloc(cap, sizeof(*v));

		if (!v)
			return -1;
		free(db->idx);
		db->idx = v;
		db->idx_cap = cap;
	} else {
		memset(db->idx, 0, cap * sizeof(*db->idx));
	}
	for (size_t i = 0; i < db->list.n; i++) {
		const struct nsr_res *r = db->list.items[i];
		const char *type = nsr_res_type(r);
		long k = nsr_res_find(r, "name");
		struct idx_slot *t;

		db->next[i] = 0;
		if (!type)
			continue;
		t = idx_put(db, type, NULL, i); /* chain i after its type's */
		if (t->tail)
			db->next[t->tail - 1] = (uint32_t)i + 1;
		t->tail = (uint32_t)i + 1;
		for (size_t j = 0;
		     k >= 0 && j < nsr_res_attr_nvalues(r, (size_t)k); j++)
			idx_put(db, type, nsr_res_attr_value(r, (size_t)k, j),
				i);
	}
	db->idx_gen = db->gen;
	return 0;
}

/* idx_find - the list index lookup or next_of_type wants from start on:
 * of the first resource from start with key (type, name), from the
 * index when it is up to date or can be made (then start is 0), else
 * by a scan; -1 if none. */
static long idx_find(struct nsr_resdb *db, const char *type,
		     const char *name, size_t start)
{
	uint32_t h = key_hash(type, name);
	size_t mask;

	if (start || (db->idx_gen != db->gen && idx_build(db) != 0)) {
		for (size_t i = start; i < db->list.n; i++)
			if (key_match(db->list.items[i], type, name))
				return (long)i;
		return -1;
	}
	mask = db->idx_cap - 1;
	for (size_t p = h & mask; db->idx[p].at; p = (p + 1) & mask)
		if (db->idx[p].hash == h &&
		    key_match(db->list.items[db->idx[p].at - 1], type, name))
			return (long)db->idx[p].at - 1;
	return -1;
}

/* nsr_resdb_lookup - see resdb.h. */
const struct nsr_res *nsr_resdb_lookup(struct nsr_resdb *db,
				       const char *type, const char *name)
{
	long i = idx_find(db, type, name, 0);

	return i >= 0 ? db->list.items[i] : NULL;
}

/* nsr_resdb_next_of_type - see resdb.h: after a resource of the type,
 * the next one by the index's chain; otherwise (or without an index) as
 * idx_find does. */
long nsr_resdb_next_of_type(struct nsr_resdb *db, const char *type,
			    long after)
{
	size_t i = after < 0 ? 0 : (size_t)after + 1;

	if (after < 0)
		return idx_find(db, type, NULL, 0);
	if ((size_t)after < db->list.n && db->idx_gen == db->gen &&
	    key_match(db->list.items[after], type, NULL))
		return (long)db->next[after] - 1;
	return idx_find(db, type, NULL, i);
}

/* same_values - 1 if attribute name has equal value lists in a and b. */
static int same_values(const struct nsr_res *a, const struct nsr_res *b,
		       const char *name)
{
	long i = nsr_res_find(a, name), j = nsr_res_find(b, name);
	size_t n;

	n = i < 0 ? 0 : nsr_res_attr_nvalues(a, (size_t)i);
	if (n != (j < 0 ? 0 : nsr_res_attr_nvalues(b, (size_t)j)))
		return 0;
	for (size_t k = 0; k < n; k++)
		if (strcmp(nsr_res_attr_value(a, (size_t)i, k),
			   nsr_res_attr_value(b, (size_t)j, k)) != 0)
			return 0;
	return 1;
}

/* check_db - the rules that need the other resources; self is the index
 * of the resource being replaced, or -1. */
static int check_db(const struct nsr_resdb *db, const struct nsr_res *r,
		    long self, struct nsr_buf *why)
{
	const struct nsr_res_typedef *t =
		nsr_res_schema_type(db->schema, nsr_res_type(r));
	int any = (t->flags & NSR_RES_SINGLETON) != 0;

	/* Most types have one unique attribute and many have none. */
	for (size_t k = 0; k < t->nattrs && !any; k++)
		any = (t->attrs[k].flags & NSR_RES_UNIQUE) != 0;
	for (size_t i = 0; any && i < db->list.n; i++) {
		const struct nsr_res *o = db->list.items[i];

		if ((long)i == self ||
		    !nsr_res_name_eq(nsr_res_type(o), t->type))
			continue;
		if (t->flags & NSR_RES_SINGLETON) {
			if (why)
				nsr_buf_addf(why, "%s: only one resource of "
					     "this type may exist", t->type);
			return NSR_ERR_EXISTS;
		}
		for (size_t k = 0; k < t->nattrs; k++) {
			const struct nsr_res_attrdef *d = &t->attrs[k];
			const char *v, *w;

			if (!(d->flags & NSR_RES_UNIQUE))
				continue;
			v = nsr_res_get(r, d->name);
			w = nsr_res_get(o, d->name);
			if (!v || !w || strcasecmp(v, w) != 0)
				continue;
			if (why)
				nsr_buf_addf(why, "%s: a resource with %s '%s' "
					     "already exists", t->type,
					     d->name, v);
			return NSR_ERR_EXISTS;
		}
	}
	return NSR_OK;
}

/* prepare - copy r, fill defaults and run every check but the hook. */
static int prepare(const struct nsr_resdb *db, const struct nsr_res *r,
		   long self, struct nsr_res **out, struct nsr_buf *why)
{
	struct nsr_res *c = nsr_res_dup(r);
	int rc;

	*out = NULL;
	if (!c)
		return NSR_ERR_NOMEM;
	nsr_res_unset(c, NSR_RES_ID_ATTR);
	if (!nsr_res_schema_type(db->schema, nsr_res_type(c))) {
		rc = nsr_res_check(c, db->schema, why); /* says why */
		if (rc == NSR_OK)
			rc = NSR_ERR_INVAL;
		goto out;
	}
	rc = nsr_res_fill_defaults(c, db->schema);
	if (rc == NSR_OK)
		rc = nsr_res_check(c, db->schema, why);
	if (rc == NSR_OK)
		rc = check_db(db, c, self, why);
	if (rc == NSR_OK) {
		*out = c;
		c = NULL;
	}
out:
	nsr_res_free(c);
	return rc;
}

/* write_res - durably store r in its file. */
static int write_res(const struct nsr_resdb *db, const struct nsr_res *r,
		     struct nsr_buf *why)
{
	struct nsr_res_print_opts po;
	struct nsr_buf text;
	char *path = nsr_path_join(db->dir, nsr_res_id(r));
	int rc;

	memset(&po, 0, sizeof(po));
	po.hidden = 1;
	nsr_buf_init(&text, 0);
	rc = path ? nsr_res_print(r, &po, &text) : NSR_ERR_NOMEM;
	if (rc == NSR_OK)
		/* 0640: the group of the directory may read (nsrd -U gives
		 * it to the database daemons' user; else root's group) */
		rc = nsr_file_replace(path, text.data, text.len, 0640);
	if (rc != NSR_OK && rc != NSR_ERR_NOMEM && why)
		nsr_buf_addf(why, "cannot write %s: %s", path,
			     rc == NSR_ERR_SYSTEM ? strerror(errno)
						  : nsr_strerror(rc));
	nsr_buf_release(&text);
	free(path);
	return rc;
}

/* new_id - "seq.0.t3.t2.t1.t0.0.0.0.0.0.0" from the sequence and time. */
static int new_id(struct nsr_resdb *db, char *id, size_t size)
{
	uint32_t t = (uint32_t)time(NULL);

	for (;;) {
		snprintf(id, size, "%lu.0.%u.%u.%u.%u.0.0.0.0.0.0",
			 db->next_seq++, (unsigned)(t >> 24) & 0xff,
			 (unsigned)(t >> 16) & 0xff, (unsigned)(t >> 8) & 0xff,
			 (unsigned)t & 0xff);
		if (index_of(db, id) < 0)
			return NSR_OK;
	}
}

/* call_hook - ask the caller's veto hook, if any. */
static int call_hook(const struct nsr_resdb *db, enum nsr_resdb_op op,
		     const struct nsr_res *old, const struct nsr_res *nr,
		     struct nsr_buf *why)
{
	int rc = db->refs ? nsr_resdb_check_refs(db, op, old, nr, why)
			  : NSR_OK;

	if (rc != NSR_OK || !db->hook)
		return rc;
	return db->hook(db->hook_arg, op, old, nr, why);
}

/* nsr_resdb_create - validate, assign an id, store. */
int nsr_resdb_create(struct nsr_resdb *db, const struct nsr_res *r,
		     char **id_out, struct nsr_buf *why)
{
	struct nsr_res *c = NULL;
	char id[96];
	char *idcopy = NULL;
	int rc;

	if (id_out)
		*id_out = NULL;
	if (db->readonly)
		return refuse_readonly(db, why);
	rc = prepare(db, r, -1, &c, why);
	if (rc != NSR_OK)
		goto out;
	rc = call_hook(db, NSR_RESDB_CREATE, NULL, c, why);
	if (rc != NSR_OK)
		goto out;
	new_id(db, id, sizeof(id));
	rc = nsr_res_set1(c, NSR_RES_ID_ATTR, id);
	if (rc != NSR_OK)
		goto out;
	if (id_out) {
		idcopy = strdup(id);
		if (!idcopy) {
			rc = NSR_ERR_NOMEM;
			goto out;
		}
	}
	/* Make room first so nothing can fail after the file is written. */
	rc = nsr_res_list_take(&db->list, NULL);
	if (rc != NSR_OK)
		goto out;
	db->list.n--;
	rc = write_res(db, c, why);
	if (rc != NSR_OK)
		goto out;
	db->list.items[db->list.n++] = c;
	db->gen++;
	c = NULL;
	if (id_out) {
		*id_out = idcopy;
		idcopy = NULL;
	}
out:
	free(idcopy);
	nsr_res_free(c);
	return rc;
}

/* nsr_resdb_update - replace a resource's attributes. */
int nsr_resdb_update(struct nsr_resdb *db, const char *id,
		     const struct nsr_res *r, struct nsr_buf *why)
{
	const struct nsr_res_typedef *t;
	struct nsr_res *c = NULL, *old;
	long i = index_of(db, id);
	int rc;

	if (db->readonly)
		return refuse_readonly(db, why);
	if (i < 0) {
		if (why)
			nsr_buf_addf(why, "no resource with id %s", id);
		return NSR_ERR_NOTFOUND;
	}
	old = db->list.items[i];
	if (!nsr_res_type(r) || !nsr_res_name_eq(nsr_res_type(r),
						  nsr_res_type(old))) {
		if (why)
			nsr_buf_addstr(why, "the type of a resource cannot "
				       "change");
		return NSR_ERR_READONLY;
	}
	rc = prepare(db, r, i, &c, why);
	if (rc != NSR_OK)
		goto out;
	t = nsr_res_schema_type(db->schema, nsr_res_type(c));
	for (size_t k = 0; k < t->nattrs; k++) {
		if (!(t->attrs[k].flags & NSR_RES_CREATEONLY) ||
		    same_values(old, c, t->attrs[k].name))
			continue;
		if (why)
			nsr_buf_addf(why, "%s: '%s' cannot be changed after "
				     "the resource is created", t->type,
				     t->attrs[k].name);
		rc = NSR_ERR_READONLY;
		goto out;
	}
	rc = call_hook(db, NSR_RESDB_UPDATE, old, c, why);
	if (rc == NSR_OK)
		rc = nsr_res_set1(c, NSR_RES_ID_ATTR, id);
	if (rc == NSR_OK)
		rc = write_res(db, c, why);
	if (rc != NSR_OK)
		goto out;
	db->list.items[i] = c;
	db->gen++;
	c = old;
out:
	nsr_res_free(c);
	return rc;
}

/* nsr_resdb_delete - remove a resource and its file. */
int nsr_resdb_delete(struct nsr_resdb *db, const char *id,
		     struct nsr_buf *why)
{
	long i = index_of(db, id);
	char *path;
	int rc;

	if (db->readonly)
		return refuse_readonly(db, why);
	if (i < 0) {
		if (why)
			nsr_buf_addf(why, "no resource with id %s", id);
		return NSR_ERR_NOTFOUND;
	}
	rc = call_hook(db, NSR_RESDB_DELETE, db->list.items[i], NULL, why);
	if (rc != NSR_OK)
		return rc;
	path = nsr_path_join(db->dir, id);
	if (!path)
		return NSR_ERR_NOMEM;
	if (unlink(path) != 0 && errno != ENOENT) {
		if (why)
			nsr_buf_addf(why, "cannot remove %s: %s", path,
				     strerror(errno));
		free(path);
		return NSR_ERR_SYSTEM;
	}
	rc = nsr_fsync_dir(path, 0);
	free(path);
	nsr_res_free(db->list.items[i]);
	memmove(&db->list.items[i], &db->list.items[i + 1],
		(db->list.n - (size_t)i - 1) * sizeof(db->list.items[0]));
	db->list.n--;
	db->gen++;
	return rc;
}
