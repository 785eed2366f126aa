/*
 * resdb.h - the resource database: a directory of resources, one file each.
 *
 * Layout: <dir>/<id>, where <id> is the resource's identifier, e.g.
 * "12.0.101.74.33.160.0.0.0.0.0.0" (the first number is a sequence number,
 * unique in the database; the rest come from the creation time).  Each file
 * holds one resource in nsradmin's text format (res.h), including the hidden
 * attribute "resource identifier" equal to the file name.  Files whose names
 * start with '.' are ignored; "<id>.tmp.<pid>" files (nsr_file_replace
 * temporaries left by a crash before the rename) are removed by a writable
 * open and skipped by a read-only one.
 *
 * Every change is written with nsr_file_replace() (temp file, fsync, rename,
 * fsync directory) before the in-memory copy changes, so after a call
 * returns NSR_OK the change is durable, and after a failure both memory and
 * disk hold the old state.
 *
 * Loading is strict: a file that does not parse, holds more or fewer than
 * one resource, or whose id does not match its name makes nsr_resdb_open()
 * fail with an error naming the file and line; nothing is dropped silently.
 *
 * Validation: every create/update is checked against the schema given at
 * open time (res.h: known type, known attributes, required, single-valued,
 * choices, numbers) plus what needs the whole database: NSR_RES_UNIQUE
 * attributes unique per type, NSR_RES_CREATEONLY attributes unchanged,
 * NSR_RES_SINGLETON types created once.  On create missing attributes get
 * the schema defaults.  A caller hook may veto any change (e.g. "the
 * Default group cannot be deleted").
 *
 * A handle is not thread-safe.  One process owns a directory: a writable
 * open takes an exclusive lock on <dir>/.lock (flock) and fails with
 * NSR_ERR_BUSY while another handle holds it, so nsradmin -d cannot edit
 * the files under a running nsrd.  A read-only open (opts->readonly) takes
 * no lock, changes nothing on disk and refuses every change.
 * Functions return NSR_OK or a negative nsr_err code; when they fail for a
 * reason a user should see (validation, parse), they append a one-line
 * English explanation to the caller's `why` buffer (which may be NULL).
 */
#ifndef NSR_RESDB_H
#define NSR_RESDB_H

#include <stddef.h>

#include "nsr/res.h"

struct nsr_buf;
struct nsr_resdb;

/* What a change is, for the veto hook. */
enum nsr_resdb_op {
	NSR_RESDB_CREATE = 1,
	NSR_RESDB_UPDATE = 2,
	NSR_RESDB_DELETE = 3,
};

/* Veto hook: old is NULL for create, new is NULL for delete; new already
 * has defaults filled and passed the schema checks.  Return NSR_OK to
 * allow, or an error (NSR_ERR_INVAL, NSR_ERR_PERM, ...) after appending a
 * reason to why. */
typedef int (*nsr_resdb_hook_fn)(void *arg, enum nsr_resdb_op op,
				 const struct nsr_res *old,
				 const struct nsr_res *new_res,
				 struct nsr_buf *why);

struct nsr_resdb_opts {
	const struct nsr_res_schema *schema; /* NULL = nsr_res_schema_std() */
	nsr_resdb_hook_fn hook;		     /* NULL = allow everything */
	void *hook_arg;
	int create;			     /* mkdir -p the directory */
	int readonly;			     /* no lock, no changes (nsrd -t) */
	int refs;			     /* check references (below) */
};

/* nsr_resdb_check_refs - resref.c: the references of a change (old is
 * NULL for create, new_res NULL for delete): a client's group, schedule,
 * pool and policies, a group's schedule and clone pool, a pool's groups,
 * label template and devices must exist (NSR_ERR_NOTFOUND), and a
 * resource something names cannot be deleted or renamed (NSR_ERR_BUSY);
 * an enabled Backup pool cannot claim the saves another one claims (the
 * same selection criteria set, each with a value in common:
 * NSR_ERR_EXISTS); why gets a reason naming them.  With opts->refs
 * every change is checked before the veto hook. */
int nsr_resdb_check_refs(const struct nsr_resdb *db, enum nsr_resdb_op op,
			 const struct nsr_res *old,
			 const struct nsr_res *new_res, struct nsr_buf *why);

/* nsr_resdb_open - load every resource under dir.  *out gets the handle
 * (caller frees with nsr_resdb_close).  NSR_OK; NSR_ERR_NOTFOUND (no such
 * directory and !opts->create); NSR_ERR_BUSY (locked by another handle);
 * NSR_ERR_CORRUPT / NSR_ERR_SYNTAX with err naming the file, line and
 * problem; NSR_ERR_SYSTEM; NSR_ERR_NOMEM.
 * opts and err may be NULL.  Resources loaded are not re-validated against
 * the schema (a schema change must not make a database unloadable). */
int nsr_resdb_open(const char *dir, const struct nsr_resdb_opts *opts,
		   struct nsr_resdb **out, struct nsr_res_error *err);
/* nsr_resdb_close - free the handle (NULL ok).  Nothing to flush. */
void nsr_resdb_close(struct nsr_resdb *db);

/* nsr_resdb_schema - the schema in use (never NULL). */
const struct nsr_res_schema *nsr_resdb_schema(const struct nsr_resdb *db);

/* nsr_resdb_count - number of resources. */
size_t nsr_resdb_count(const struct nsr_resdb *db);
/* nsr_resdb_at - resource i (i < count), in id order.  Valid until the
 * next change to the database. */
const struct nsr_res *nsr_resdb_at(const struct nsr_resdb *db, size_t i);
/* nsr_resdb_get - the resource with this id, or NULL. */
const struct nsr_res *nsr_resdb_get(const struct nsr_resdb *db,
				    const char *id);
/* nsr_resdb_find - the index of the first resource at or after start that
 * matches query (nsr_res_match), or -1.  Loop with start = found + 1. */
long nsr_resdb_find(const struct nsr_resdb *db, const struct nsr_res *query,
		    size_t start);

/* nsr_resdb_lookup - the first resource (in id order) of type (compared
 * as nsr_res_name_eq does) that has name among the values of its "name"
 * attribute (name NULL: the first of the type), or NULL: what
 * nsr_resdb_find gives for such a query, from an index instead of a scan
 * (made again at the first lookup after a change; not for concurrent
 * use, like every change).  Valid until the next change. */
const struct nsr_res *nsr_resdb_lookup(struct nsr_resdb *db,
				       const char *type, const char *name);
/* nsr_resdb_next_of_type - the index of the first resource of type after
 * index after (-1: the first of all), or -1: what nsr_resdb_find gives
 * for a query of the type alone from after + 1, from the index
 * nsr_resdb_lookup uses (a chain per type) instead of a scan.  Loop
 * with after = the index found; the same rules as nsr_resdb_lookup. */
long nsr_resdb_next_of_type(struct nsr_resdb *db, const char *type,
			    long after);

/* nsr_resdb_create - validate r, fill defaults, assign an id and store it.
 * r is not changed; *id_out (may be NULL) gets a malloc'ed copy of the new
 * id.  An id attribute in r is ignored.  Create, update and delete return
 * NSR_ERR_READONLY on a read-only handle.  NSR_OK; NSR_ERR_INVAL (schema),
 * NSR_ERR_EXISTS (unique/singleton), a hook's error, NSR_ERR_NOSPACE /
 * NSR_ERR_SYSTEM (write), NSR_ERR_NOMEM. */
int nsr_resdb_create(struct nsr_resdb *db, const struct nsr_res *r,
		     char **id_out, struct nsr_buf *why);
/* nsr_resdb_update - replace the resource with this id by r (whole
 * resource: attributes r lacks go back to their defaults; the id is kept).
 * Errors as create plus NSR_ERR_NOTFOUND, NSR_ERR_READONLY (the type or a
 * create-only attribute changed). */
int nsr_resdb_update(struct nsr_resdb *db, const char *id,
		     const struct nsr_res *r, struct nsr_buf *why);
/* nsr_resdb_delete - remove the resource and its file.  NSR_OK,
 * NSR_ERR_NOTFOUND, a hook's error, NSR_ERR_SYSTEM. */
int nsr_resdb_delete(struct nsr_resdb *db, const char *id,
		     struct nsr_buf *why);

/* nsr_resdb_seed - create the preconfigured resources that are missing
 * (the NSR server resource named server_name, pools Default/Default Clone/
 * Archive/Archive Clone with their label templates, group Default,
 * schedule Default, policies Week/Month/Quarter/Year/Decade).  Existing
 * ones are left alone; running it twice changes nothing. */
int nsr_resdb_seed(struct nsr_resdb *db, const char *server_name,
		   struct nsr_buf *why);

#endif /* NSR_RESDB_H */
