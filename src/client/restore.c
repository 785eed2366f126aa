/*
 * restore.c - the restore engine (see restore.h).  It drives an asm
 * decoder (resynchronising after damage) and, per file record, lets
 * restore_fs.c check the path, apply the filter, resolve the target and
 * create the object; it writes the data (holes by seeking), completes
 * each object at its FILE_END, and owns the restore counters and the
 * public API.
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <unistd.h>

#include "nsr/asm.h"
#include "nsr/crypt.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/restore.h"

#include "restore_int.h"

/* rst_cur_idle - a cur_file holding nothing. */
void rst_cur_idle(struct cur_file *c)
{
	memset(c, 0, sizeof(*c));
	c->fd = c->dfd = -1;
}

/* rst_cur_release - close c's descriptor, free its strings and
 * attributes, and make it idle (its directory descriptor is never its
 * own: not closed). */
void rst_cur_release(struct cur_file *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->path);
	free(c->target);
	free(c->name);
	free(c->tmp);
	rst_xa_release(&c->xa);
	rst_cur_idle(c);
}

/* rst_cur_reset - forget the current file (closing its descriptor; a
 * file still under its temporary name was not restored: it goes). */
void rst_cur_reset(struct nsr_restore *r)
{
	rst_work_drop(r);
	rst_drop_tmp(r);
	rst_cur_release(&r->cur);
}

/* proc_umask - the process umask from /proc/self/status without
 * changing it (umask() would, for a moment, for every thread); -1 if it
 * cannot be read. */
static int proc_umask(void)
{
	char line[128];
	FILE *f = fopen("/proc/self/status", "re");
	int mask = -1;
	unsigned m;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "Umask: %o", &m) == 1) {
			mask = (int)(m & 0777);
			break;
		}
	fclose(f);
	return mask;
}

/* on_header - pass the stream header on. */
static int on_header(void *ctx, const struct nsr_asm_header *h)
{
	struct nsr_restore *r = ctx;

	if (r->cb.header)
		r->cb.header(r->cb.ctx, h);
	return 0;
}

/* on_file - a file record: filter, place, create. */
static int on_file(void *ctx, const struct nsr_asm_file *rec, uint64_t off)
{
	struct nsr_restore *r = ctx;
	struct nsr_asm_file mapped = *rec;
	const struct nsr_asm_file *f = &mapped;

	NSR_UNUSED(off);
	rst_map_owner(r, &mapped);
	rst_cur_reset(r);
	/* Report finished small files; all of them before a directory's
	 * metadata or a hard link (restore_int.h invariant 2). */
	if (rst_work_busy(r)) {
		int all = f->type == NSR_ASM_HARDLINK ||
			  rst_dirs_would_pop(r, f->path) ||
			  rst_work_named(r, f->path);
		int rc = rst_work_reap(r, all);

		if (rc)
			return rc;
	}
	r->cur.active = 1;
	r->cur.meta = *f;
	r->cur.path = strdup(f->path);
	if (r->cur.path == NULL)
		return NSR_ERR_NOMEM;
	r->cur.meta.path = r->cur.path;
	r->cur.meta.link = r->cur.meta.user = r->cur.meta.group = NULL;
	rst_dirs_pop_to(r, f->path);
	if (!rst_path_ok(f->path)) {
		rst_error(r, f->path, NSR_ERR_CORRUPT, "path");
		return 0;
	}
	if (!rst_selected(r, f->path)) {
		r->st.filtered++;
		return 0;
	}
	if (f->nparts != 0)
		return rst_split_start(r, f);
	if (r->to_fd)
		return rst_pipe_start(r, f);
	if (*rst_rel_of(f->path) == '\0')
		return rst_start_root(r, f);
	return rst_start_object(r, f);
}

/* on_xattr - keep an attribute for the object it belongs to. */
static int on_xattr(void *ctx, const char *name, const void *v, size_t n)
{
	struct nsr_restore *r = ctx;

	if (r->cur.dir && r->ndirs > 0)
		return rst_xa_add(&r->dirs[r->ndirs - 1].xa, name, v, n);
	if (r->cur.write || r->cur.node)
		return rst_xa_add(&r->cur.xa, name, v, n);
	return 0;
}

/* on_data - write file data. */
static int on_data(void *ctx, const void *p, size_t n)
{
	struct nsr_restore *r = ctx;

	if (!r->cur.write)
		return 0;
	if (r->cur.split)
		return rst_split_data(r, p, n);
	if (r->cur.failed)
		return 0;
	if (r->to_fd)
		return rst_pipe_write(r, p, n);
	if (r->cur.job) {
		if (rst_work_data(r, p, n) != NSR_OK)
			return NSR_ERR_NOMEM;
		r->cur.written += n;
		r->cur.data_end = r->cur.written;
		return 0;
	}
	if (nsr_write_full(r->cur.fd, p, n) != NSR_OK) {
		rst_error(r, r->cur.path, NSR_ERR_SYSTEM, "write");
		r->cur.failed = 1;
		return 0;
	}
	r->cur.written += n;
	r->cur.data_end = r->cur.written;
	return 0;
}

/* on_hole - skip over zeros (the file stays sparse). */
static int on_hole(void *ctx, uint64_t len)
{
	struct nsr_restore *r = ctx;

	if (!r->cur.write)
		return 0;
	if (r->cur.split) { /* the file stays sparse there */
		r->cur.written += len;
		return 0;
	}
	if (r->cur.failed)
		return 0;
	if (r->to_fd)
		return rst_pipe_zeros(r, len);
	if (r->cur.job) {
		if (rst_work_hole(r, len) != NSR_OK)
			return NSR_ERR_NOMEM;
		r->cur.written += len;
		return 0;
	}
	if (lseek(r->cur.fd, (off_t)len, SEEK_CUR) < 0) {
		rst_error(r, r->cur.path, NSR_ERR_SYSTEM, "seek");
		r->cur.failed = 1;
		return 0;
	}
	r->cur.written += len;
	return 0;
}

/* rst_file_status - warn about a file saved with a read error or
 * changing. */
void rst_file_status(struct nsr_restore *r,
			const struct nsr_asm_file_end *fe)
{
	if (fe->status == NSR_ASM_FILE_READERR)
		rst_warn(r, r->cur.path, NSR_ERR_IO,
			 "saved with a read error");
	else if (fe->status == NSR_ASM_FILE_CHANGED)
		rst_warn(r, r->cur.path, NSR_ERR_MISMATCH,
			 "changed during save");
}

/* on_key - the key of an encrypted save set, from the caller. */
static int on_key(void *ctx, const uint8_t *id, uint8_t *key)
{
	struct nsr_restore *r = ctx;

	return r->key ? r->key(r->key_ctx, id, key) : -1;
}

/* rst_no_key - a file encrypted under a key not given: nothing of it
 * was written; it is reported and left out. */
void rst_no_key(struct nsr_restore *r, const struct nsr_asm_file_end *fe)
{
	char id[NSR_CRYPT_ID_HEX], what[160];

	nsr_crypt_id_hex(fe->key_id, id);
	snprintf(what, sizeof(what),
		 "cannot decrypt: key %s unknown (was the datazone pass "
		 "phrase changed and the old one removed?)", id);
	rst_error(r, r->cur.path, NSR_ERR_NOTFOUND, what);
	r->cur.failed = 1;
}

/* on_file_end - finish a regular file: size, metadata, checksum (a
 * mismatch makes it a damaged file: not left under its name). */
static int on_file_end(void *ctx, const struct nsr_asm_file_end *fe)
{
	struct nsr_restore *r = ctx;
	int rc = NSR_OK;

	if (r->cur.node) {
		rst_meta_at(r, r->parent_fd, r->cur.name, &r->cur.meta,
			    &r->cur.xa, r->cur.target, r->cur.path);
		rc = rst_done_object(r, &r->cur.meta, r->cur.target);
		goto out;
	}
	if (r->cur.split)
		return rst_split_file_end(r, fe);
	if (!r->cur.write)
		goto out;
	if (fe->nokey) {
		rst_no_key(r, fe);
		goto out;
	}
	if (r->to_fd) {
		rc = rst_pipe_end(r, fe);
		goto out;
	}
	if (r->cur.meta.unsized) /* its size is known only now */
		r->cur.meta.size = fe->bytes;
	if (r->cur.job && fe->ck_ok) { /* whole and good: to a worker */
		rst_file_status(r, fe);
		r->st.bytes += r->cur.written;
		rc = rst_work_submit(r);
		goto out;
	}
	if (r->cur.job) /* damaged: kept apart here, as any other */
		rst_work_materialize(r);
	/* A new file is as long as its data; only a trailing hole (or a
	 * size that disagrees with the data) needs the size set. */
	if (!r->cur.failed && r->cur.meta.size != r->cur.data_end &&
	    ftruncate(r->cur.fd, (off_t)r->cur.meta.size) != 0) {
		rst_error(r, r->cur.path, NSR_ERR_SYSTEM, "truncate");
		r->cur.failed = 1;
	}
	rst_meta_reg(r);
	if (!fe->ck_ok && !r->cur.failed) {
		r->st.ck_errors++;
		r->st.bytes += r->cur.written;
		rst_damaged(r, NSR_ERR_CHECKSUM, "checksum");
		goto out;
	}
	rst_file_status(r, fe);
	r->st.bytes += r->cur.written;
	if (!r->cur.failed)
		rst_place(r);
	if (!r->cur.failed)
		rc = rst_done_object(r, &r->cur.meta, r->cur.target);
out:
	rst_cur_reset(r);
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
	if (r->cur.split) { /* the file is damaged, said when it ends */
		rst_error(r, r->cur.path, why, what);
		return rst_split_abandon(r);
	}
	if (r->cur.job) /* what arrived, kept apart like any damaged file */
		rst_work_materialize(r);
	if (r->cur.write && !r->cur.failed)
		rst_damaged(r, NSR_ERR_TRUNCATED, "incomplete");
	else if (r->cur.write || r->cur.node)
		rst_error(r, r->cur.path, NSR_ERR_TRUNCATED, "incomplete");
	rst_error(r, r->cur.active ? r->cur.path : "", why, what);
	rst_cur_reset(r);
	return 0;
}

/* on_end - the stream is complete: apply what is left. */
static int on_end(void *ctx, const struct nsr_asm_trailer *t)
{
	struct nsr_restore *r = ctx;
	int rc;

	NSR_UNUSED(t);
	rc = rst_work_reap(r, 1);
	rst_dirs_pop_to(r, NULL);
	return rc;
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
		on_xattr, on_damaged, NULL, on_key,
	};
	struct nsr_restore *r;
	int rc = NSR_ERR_NOMEM;

	*out = NULL;
	if (o->conflict < NSR_RESTORE_SKIP ||
	    o->conflict > NSR_RESTORE_RENAME ||
	    (o->npaths > 0 && o->paths == NULL) ||
	    (o->dest != NULL && o->dest[0] == '\0') ||
	    (o->to_fd && o->out_fd < 0))
		return NSR_ERR_INVAL;
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return NSR_ERR_NOMEM;
	r->base_fd = r->cwd_fd = r->parent_fd = -1;
	r->parent_gid = -1;
	r->umask = proc_umask();
	r->euid = geteuid();
	r->egid = getegid();
	r->pid = getpid();
	rst_cur_idle(&r->cur);
	rst_map_init(&r->links);
	r->conflict = o->conflict;
	r->no_owner = o->no_owner;
	r->owner_by_name = o->owner_by_name;
	r->keep_damaged = o->keep_damaged;
	r->dirs_last = o->dirs_last;
	r->to_fd = o->to_fd;
	r->out_fd = o->out_fd;
	r->key = o->key;
	r->key_ctx = o->key_ctx;
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
	r->exact = o->exact;
	if (r->exact)
		qsort(r->filters, r->nfilters, sizeof(char *), rst_cmp_str);
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
	r->split = o->split;
	if (r->split == NULL) {
		rc = nsr_restore_split_new(&r->split);
		if (rc)
			goto fail;
		r->own_split = 1;
	}
	rc = rst_split_join(r->split, r);
	if (rc)
		goto fail;
	/* every intact file of a damaged stream is still restored */
	nsr_asm_dec_resync(r->dec, 1);
	/* no workers is fine too: everything is written here then */
	if (o->workers > 1 && !r->to_fd)
		(void)rst_work_start(r, o->workers);
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
	if (r->cur.split)
		(void)rst_split_abandon(r);
	rst_cur_reset(r);
	rst_work_stop(r);
	if (r->own_split)
		nsr_restore_split_free(r->split);
	else if (r->split)
		rst_split_leave(r->split, r);
	while (r->ndirs > 0) {
		r->ndirs--;
		free(r->dirs[r->ndirs].path);
		free(r->dirs[r->ndirs].target);
		rst_xa_release(&r->dirs[r->ndirs].xa);
	}
	free(r->dirs);
	rst_forget_parent(r);
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
	int rc = nsr_asm_dec_finish(r->dec), rc2;

	/* Whatever arrived is on disk: give its directories their metadata
	 * even when the stream was cut short, and name the file it cut. */
	if (r->cur.split) /* cut inside a piece of a split file */
		(void)rst_split_abandon(r);
	if (rc != NSR_OK && r->cur.job)
		rst_work_materialize(r);
	if (rc != NSR_OK && r->cur.write && !r->cur.failed)
		rst_damaged(r, NSR_ERR_TRUNCATED, "incomplete");
	else if (rc != NSR_OK && (r->cur.write || r->cur.node))
		rst_error(r, r->cur.path, NSR_ERR_TRUNCATED, "incomplete");
	rst_cur_reset(r);
	rc2 = rst_work_reap(r, 1);
	if (r->own_split) /* what never became whole is said now */
		(void)nsr_restore_split_end(r->split);
	r->finishing = 1;
	rst_dirs_pop_to(r, NULL);
	if (rc == NSR_OK)
		rc = rc2;
	if (rc && r->err == 0)
		r->err = rc;
	return r->err;
}

/* nsr_restore_flush - every queued file in place. */
int nsr_restore_flush(struct nsr_restore *r)
{
	int rc = rst_work_reap(r, 1);

	if (rc && r->err == 0)
		r->err = rc;
	return r->err;
}

/* nsr_restore_add_paths - more exact paths, kept sorted. */
int nsr_restore_add_paths(struct nsr_restore *r, const char *const *paths,
			  size_t n)
{
	char **v;
	int rc = NSR_OK;

	if (!r->exact)
		return NSR_ERR_INVAL;
	v = realloc(r->filters, (r->nfilters + n + 1) * sizeof(*v));
	if (v == NULL)
		return NSR_ERR_NOMEM;
	r->filters = v;
	for (size_t i = 0; i < n && rc == NSR_OK; i++) {
		v[r->nfilters] = trimmed(paths[i]);
		if (v[r->nfilters] != NULL)
			r->nfilters++;
		else
			rc = NSR_ERR_NOMEM;
	}
	qsort(r->filters, r->nfilters, sizeof(char *), rst_cmp_str);
	return rc;
}

/* nsr_restore_stats - copy the counters. */
void nsr_restore_stats(const struct nsr_restore *r,
		       struct nsr_restore_stats *st)
{
	*st = r->st;
}
