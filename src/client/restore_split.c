/*
 * restore_split.c - split files put together (restore.h, "Split files";
 * invariants in restore_int.h): a large file of a PSS save point saved
 * as a head and parts in several save sets, which the restores of one
 * recover bring in any order.  Each piece's records are decoded with
 * a view of the file in the decoding restore's cur_file; between pieces
 * the file is parked in the registry.  A parked file holds no descriptor
 * of its own: only its directory (shared by the files of a directory,
 * rst_dirh), and each piece opens it by its temporary name, so a recover
 * of many split files does not run out of descriptors.
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/restore.h"

#include "restore_int.h"

/* What went wrong with a split file (the first thing that did). */
enum {
	BAD_NONE,
	BAD_CK,	  /* a piece's checksum did not match */
	BAD_CUT,  /* a piece was cut short (damage, end of stream) */
	BAD_SAID, /* reported already (write failed, no key, ...) */
};

/* One split file in assembly. */
struct split_file {
	struct split_file *next;
	char *key;		   /* its saved path */
	struct nsr_restore *owner; /* reports what is missing at the end */
	struct cur_file cur;	   /* its names, the head's metadata (no fd) */
	struct rst_dirh *dir;	   /* its directory, held */
	uint32_t nparts, got;	   /* pieces (head and parts) ended */
	unsigned busy;		   /* pieces being decoded now */
	uint64_t total;
	uint8_t *have;		   /* a bit per piece, 0 = the head */
	int dead;		   /* not created (kept, failed): passed over */
	int bad;		   /* BAD_* */
	int warned;		   /* "changed during save" said */
};

struct nsr_restore_split {
	struct split_file *files;
	struct nsr_restore **members; /* the restores that share it */
	size_t nmembers, cap;
};

/* nsr_restore_split_new - an empty registry. */
int nsr_restore_split_new(struct nsr_restore_split **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? NSR_OK : NSR_ERR_NOMEM;
}

/* rst_split_join - r shares sp from now on. */
int rst_split_join(struct nsr_restore_split *sp, struct nsr_restore *r)
{
	if (sp->nmembers == sp->cap) {
		size_t cap = sp->cap ? 2 * sp->cap : 8;
		struct nsr_restore **v =
			realloc(sp->members, cap * sizeof(*v));

		if (v == NULL)
			return NSR_ERR_NOMEM;
		sp->members = v;
		sp->cap = cap;
	}
	sp->members[sp->nmembers++] = r;
	return NSR_OK;
}

/* rst_split_leave - r (being freed) no longer shares sp. */
void rst_split_leave(struct nsr_restore_split *sp, struct nsr_restore *r)
{
	for (size_t i = 0; i < sp->nmembers; i++)
		if (sp->members[i] == r)
			sp->members[i] = sp->members[--sp->nmembers];
	for (struct split_file *e = sp->files; e; e = e->next)
		if (e->owner == r)
			e->owner = NULL;
}

/* entry_free - unlink e from sp and free it, removing its temporary
 * file if it is still there. */
static void entry_free(struct nsr_restore_split *sp, struct split_file *e)
{
	struct split_file **pp = &sp->files;

	while (*pp && *pp != e)
		pp = &(*pp)->next;
	if (*pp)
		*pp = e->next;
	if (e->cur.tmp && e->dir)
		(void)unlinkat(e->dir->fd, e->cur.tmp, 0);
	rst_cur_release(&e->cur);
	rst_dirh_put(e->dir);
	free(e->key);
	free(e->have);
	free(e);
}

/* nsr_restore_split_free - free the registry and what is left in it. */
void nsr_restore_split_free(struct nsr_restore_split *sp)
{
	if (sp == NULL)
		return;
	for (size_t i = 0; i < sp->nmembers; i++) {
		struct nsr_restore *r = sp->members[i];

		if (r->cur.split) { /* a view of a file about to go */
			r->cur.split = NULL;
			rst_cur_reset(r);
		}
		r->split = NULL;
	}
	while (sp->files)
		entry_free(sp, sp->files);
	free(sp->members);
	free(sp);
}

/* find - the entry of saved path p, or NULL. */
static struct split_file *find(struct nsr_restore_split *sp, const char *p)
{
	for (struct split_file *e = sp->files; e; e = e->next)
		if (strcmp(e->key, p) == 0)
			return e;
	return NULL;
}

/* has - did piece i end (written, or passed over as bad)? */
static int has(const struct split_file *e, uint32_t i)
{
	return (e->have[i / 8] >> (i % 8)) & 1;
}

/* entry_new - the entry of a split file whose first piece arrives. */
static struct split_file *entry_new(struct nsr_restore *r,
				    const struct nsr_asm_file *f)
{
	struct split_file *e = calloc(1, sizeof(*e));

	if (e == NULL)
		return NULL;
	e->key = strdup(f->path);
	e->have = calloc(f->nparts / 8 + 1, 1);
	if (e->key == NULL || e->have == NULL) {
		free(e->key);
		free(e->have);
		free(e);
		return NULL;
	}
	e->owner = r;
	e->nparts = f->nparts;
	e->total = f->total;
	rst_cur_idle(&e->cur);
	e->next = r->split->files;
	r->split->files = e;
	return e;
}

/* create - the first piece makes the file under a temporary name, as
 * any regular file (the conflict policy applied; mode 0600 until it is
 * whole), and the entry takes it from r's cur, holding its directory;
 * r's cur keeps the descriptor, as a view of the file. */
static int create(struct nsr_restore *r, struct split_file *e,
		  const struct nsr_asm_file *f)
{
	int rc = rst_start_object(r, f);
	char *path;
	int fd;

	if (rc != NSR_OK || !r->cur.write) {
		e->dead = 1; /* kept (skip policy) or failed: said */
		return rc;
	}
	path = strdup(r->cur.path);
	if (path == NULL) {
		rst_drop_tmp(r);
		e->dead = 1;
		return NSR_ERR_NOMEM;
	}
	/* the file was made in the cached parent: hold it */
	e->dir = rst_dirh_get(r->parent_h);
	fd = r->cur.fd;
	e->cur = r->cur;
	e->cur.fd = -1;
	e->cur.dfd = e->dir->fd;
	rst_cur_idle(&r->cur); /* what on_file set again, as a view */
	r->cur.fd = fd;
	r->cur.path = path;
	r->cur.meta = *f;
	r->cur.meta.path = path;
	r->cur.meta.link = r->cur.meta.user = r->cur.meta.group = NULL;
	return NSR_OK;
}

/* reopen - a descriptor of the file named tmp in dir, a split file's
 * temporary name, never following a link put in its place; -1 with
 * errno. */
static int reopen(int dir, const char *tmp)
{
	return openat(dir, tmp, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
}

/* rst_split_start - a head or part record: r's cur becomes a view of
 * its file (invariant 1). */
int rst_split_start(struct nsr_restore *r, const struct nsr_asm_file *f)
{
	struct split_file *e = r->split ? find(r->split, f->path) : NULL;
	int rc;

	if (r->split == NULL) /* its recover ended its split files */
		return NSR_ERR_STATE;
	if (r->to_fd && e == NULL) { /* said once, its pieces passed over */
		e = entry_new(r, f);
		if (e == NULL)
			return NSR_ERR_NOMEM;
		e->dead = 1;
		rst_error(r, f->path, NSR_ERR_UNSUPPORTED,
			  "split over the save sets of its save point: it "
			  "cannot go to a command; recover it to a file");
		return NSR_OK;
	}
	if (e && (e->nparts != f->nparts || e->total != f->total)) {
		if (e->bad == BAD_NONE)
			rst_error(r, f->path, NSR_ERR_CORRUPT,
				  "split file: its pieces disagree on its "
				  "size");
		e->bad = BAD_SAID;
		return NSR_OK;
	}
	if (e && (e->dead || has(e, f->part)))
		return NSR_OK; /* passed over (invariant 3) */
	if (e == NULL) {
		e = entry_new(r, f);
		if (e == NULL)
			return NSR_ERR_NOMEM;
		rc = create(r, e, f);
		if (rc != NSR_OK || e->dead)
			return rc;
	} else if (e->bad == BAD_NONE &&
		   (r->cur.fd = reopen(e->dir->fd, e->cur.tmp)) < 0) {
		rst_error(r, f->path, NSR_ERR_SYSTEM, "open again");
		e->bad = BAD_SAID;
	}
	/* A piece is written once: a second record of it, even while the
	 * first is decoded by another restore, is passed over. */
	e->have[f->part / 8] |= (uint8_t)(1u << (f->part % 8));
	e->busy++;
	r->cur.active = 1;
	r->cur.write = 1;
	r->cur.failed = e->bad != BAD_NONE; /* no more writes then */
	r->cur.split = e;
	r->cur.part = f->part;
	r->cur.part_off = f->part_off;
	r->cur.written = 0;
	return NSR_OK;
}

/* rst_split_data - data of the current piece at its offset. */
int rst_split_data(struct nsr_restore *r, const void *p, size_t n)
{
	struct split_file *e = r->cur.split;

	if (!r->cur.failed &&
	    nsr_pwrite_full(r->cur.fd, p, n,
			    (off_t)(r->cur.part_off + r->cur.written)) !=
		    NSR_OK) {
		rst_error(r, r->cur.path, NSR_ERR_SYSTEM, "write");
		r->cur.failed = 1;
		e->bad = BAD_SAID;
	}
	r->cur.written += n;
	return NSR_OK;
}

/* complete - head and every part ended: the file takes its name with
 * the head's metadata, or goes (invariant 2).  r's cur is idle. */
static int complete(struct nsr_restore *r, struct split_file *e)
{
	struct rst_newreg n;
	struct rst_probs probs = { 0 };
	int rc = NSR_OK;

	r->cur = e->cur;
	rst_cur_idle(&e->cur);
	if (e->bad == BAD_NONE &&
	    (r->cur.fd = reopen(r->cur.dfd, r->cur.tmp)) < 0) {
		rst_error(r, r->cur.path, NSR_ERR_SYSTEM, "open again");
		e->bad = BAD_SAID;
	}
	r->cur.meta.size = e->total;
	r->cur.meta.part = r->cur.meta.nparts = 0;
	r->cur.meta.total = r->cur.meta.part_off = 0;
	if (e->bad == BAD_NONE &&
	    ftruncate(r->cur.fd, (off_t)e->total) != 0) {
		rst_error(r, r->cur.path, NSR_ERR_SYSTEM, "truncate");
		e->bad = BAD_SAID;
	}
	if (e->bad == BAD_CK) {
		r->st.ck_errors++;
		rst_damaged(r, NSR_ERR_CHECKSUM, "checksum");
	} else if (e->bad == BAD_CUT) {
		rst_damaged(r, NSR_ERR_TRUNCATED, "incomplete");
	} else if (e->bad != BAD_NONE) {
		rst_drop_tmp(r);
	} else {
		/* the group its directory gave it is not known here, nor
		 * whether it was made with its mode: both are set */
		n = (struct rst_newreg){ &r->cur.meta, &r->cur.xa,
					 r->no_owner, r->euid, -1, 0 };
		rst_reg_meta(r->cur.fd, &n, &probs);
		rst_report(r, r->cur.path, &probs);
		rst_place(r);
		if (!r->cur.failed)
			rc = rst_done_object(r, &r->cur.meta, r->cur.target);
	}
	rst_cur_reset(r); /* its directory is e's to let go */
	entry_free(r->split, e);
	return rc;
}

/* piece_done - the view of the piece ends; the file is placed if this
 * was its last piece. */
static int piece_done(struct nsr_restore *r, struct split_file *e)
{
	r->cur.split = NULL;
	rst_cur_reset(r);
	e->busy--;
	e->got++;
	if (e->got == e->nparts + 1 && e->busy == 0)
		return complete(r, e);
	return NSR_OK;
}

/* rst_split_file_end - the end of a piece. */
int rst_split_file_end(struct nsr_restore *r,
		       const struct nsr_asm_file_end *fe)
{
	struct split_file *e = r->cur.split;

	if (fe->nokey) {
		if (e->bad == BAD_NONE)
			rst_no_key(r, fe);
		e->bad = BAD_SAID;
	} else if (!fe->ck_ok && !r->cur.failed) {
		if (e->bad == BAD_NONE)
			e->bad = BAD_CK;
	} else if (!r->cur.failed && !e->warned &&
		   fe->status != NSR_ASM_FILE_OK) {
		rst_file_status(r, fe);
		e->warned = 1;
	}
	if (!r->cur.failed)
		r->st.bytes += r->cur.written;
	if (r->cur.part == 0) { /* the head's metadata and attributes */
		struct xa_list xa = e->cur.xa;

		e->cur.meta = r->cur.meta;
		e->cur.meta.path = e->cur.path;
		e->cur.xa = r->cur.xa;
		r->cur.xa = xa;
	}
	return piece_done(r, e);
}

/* rst_split_abandon - the current piece was cut short: the file is
 * damaged (said when its last piece ends, or at the end). */
int rst_split_abandon(struct nsr_restore *r)
{
	struct split_file *e = r->cur.split;

	if (e->bad == BAD_NONE)
		e->bad = BAD_CUT;
	return piece_done(r, e);
}

/* nsr_restore_split_end - report and remove what is not whole. */
size_t nsr_restore_split_end(struct nsr_restore_split *sp)
{
	size_t n = 0;

	for (size_t i = 0; i < sp->nmembers; i++)
		if (sp->members[i]->cur.split) /* stopped inside a piece */
			(void)rst_split_abandon(sp->members[i]);
	while (sp->files) {
		struct split_file *e = sp->files;
		uint32_t parts = 0, master = 0, index = 0;
		struct nsr_buf what;
		char ss[32] = "";

		if (e->dead || e->owner == NULL) {
			entry_free(sp, e);
			continue;
		}
		for (uint32_t i = 1; i <= e->nparts; i++)
			parts += (uint32_t)has(e, i);
		/* a dependent's stream names its master */
		nsr_asm_dec_pss(e->owner->dec, &master, &index);
		if (master)
			snprintf(ss, sizeof(ss), " %u", master);
		nsr_buf_init(&what, 0);
		nsr_buf_addf(&what, "split over the save sets of its save "
			     "point: %s and %u of its %u parts were read, not "
			     "all; not recovered (recover its master save "
			     "set%s, which brings its dependents, or the "
			     "file by name)",
			     has(e, 0) ? "its head" : "not its head", parts,
			     e->nparts, ss);
		rst_error(e->owner, e->key, NSR_ERR_TRUNCATED, what.data);
		nsr_buf_release(&what);
		entry_free(sp, e);
		n++;
	}
	return n;
}
