/*
 * saver.c - the save engine: turns walked objects into a save stream
 * (asm encoder) and reports one index entry per saved object.  It owns the
 * file reads (adaptive size, zero runs sent as holes), the user and group
 * name lookups, the per-file error policy (report, count, go on) and the
 * save counters.  Objects are opened and examined relative to the
 * directory descriptor the walker holds, so a path of any length (up to
 * NSR_ASM_LONGPATH_MAX, the stream's bound) is saved.
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "nsr/asm.h"
#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/level.h"
#include "nsr/readsize.h"
#include "nsr/saver.h"
#include "nsr/walk.h"

#include "pss_int.h"

#define HOLE_UNIT 4096 /* zero runs are detected in whole units */
#define SAVER_AHEAD 64 /* objects walked ahead of the saving */

struct idname {
	int valid;
	uint32_t id;
	char name[NSR_ASM_NAME_MAX + 1];
};

struct nsr_saver {
	struct nsr_saver_cb cb;
	char *client, *name;
	int64_t savetime;
	uint64_t ssid;
	uint32_t pss_master, pss_index; /* a PSS dependent's header */
	bool split;		       /* parts of split files may come */
	bool cross_mounts;
	bool no_xattrs;
	struct timespec since; /* level save: zero = save everything */
	bool prefiltered;      /* the caller filtered: keep everything */
	char *whole; /* level save: a moved directory, saved with all below */
	struct nsr_asm_enc *enc;
	struct nsr_readsize *rs;
	uint8_t *buf;
	size_t buf_cap;
	char *xbuf; /* one attribute value, NSR_ASM_XATTR_VALUE_MAX bytes */
	int header_done;
	int err; /* sticky */
	/* test knobs (saver.h): names whose open fails, or that change */
	const char *test_eacces, *test_touch;
	struct nsr_saver_stats st;
	struct idname user, group;
	size_t pipe_read; /* a pipe was saved with this read size */
};

/* nsr_saver_new - allocate a saver with its options and callbacks. */
int nsr_saver_new(struct nsr_saver **out, const struct nsr_saver_opts *o,
		  const struct nsr_saver_cb *cb)
{
	struct nsr_saver *s = NULL;
	int ck = o->ck_alg ? o->ck_alg : NSR_ASM_CK_CRC32C;
	int rc;

	*out = NULL;
	if (o->client == NULL || o->name == NULL || cb == NULL ||
	    cb->write == NULL)
		return NSR_ERR_INVAL;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NSR_ERR_NOMEM;
	s->cb = *cb;
	s->client = strdup(o->client);
	s->name = strdup(o->name);
	if (s->client == NULL || s->name == NULL) {
		rc = NSR_ERR_NOMEM;
		goto fail;
	}
	s->savetime = o->savetime ? o->savetime : (int64_t)time(NULL);
	s->ssid = o->ssid;
	s->pss_master = o->pss_master;
	s->pss_index = o->pss_index;
	s->split = o->split;
	s->cross_mounts = o->cross_mounts;
	s->no_xattrs = o->no_xattrs;
	s->test_eacces = getenv("NSR_TEST_SAVE_EACCES");
	s->test_touch = getenv("NSR_TEST_SAVE_TOUCH");
	s->since = o->since;
	s->prefiltered = o->prefiltered;
	rc = nsr_asm_enc_new(&s->enc, ck, cb->write, cb->write_ctx);
	if (rc == NSR_OK && o->xform)
		rc = nsr_asm_enc_xform(s->enc, o->xform);
	if (rc)
		goto fail;
	rc = nsr_readsize_new(&s->rs, o->read_size, o->clock, o->clock_ctx);
	if (rc)
		goto fail;
	*out = s;
	return NSR_OK;
fail:
	nsr_saver_free(s);
	return rc;
}

/* nsr_saver_free - free a saver. */
void nsr_saver_free(struct nsr_saver *s)
{
	if (s == NULL)
		return;
	nsr_asm_enc_free(s->enc);
	nsr_readsize_free(s->rs);
	free(s->buf);
	free(s->xbuf);
	free(s->client);
	free(s->name);
	free(s->whole);
	free(s);
}

/* count_reason - n more files not saved whole for reason err. */
static void count_reason(struct nsr_saver_stats *st, int err, uint64_t n)
{
	unsigned i;

	for (i = 0; i < st->nreasons && st->reasons[i].err != err; i++)
		;
	if (i == st->nreasons && st->nreasons < NSR_SAVER_REASONS)
		st->reasons[st->nreasons++].err = err;
	else if (i == st->nreasons)
		i = NSR_SAVER_REASONS; /* other */
	st->reasons[i].n += n;
}

/* nsr_saver_stats_add - see saver.h. */
void nsr_saver_stats_add(struct nsr_saver_stats *t,
			 const struct nsr_saver_stats *s)
{
	t->files += s->files;
	t->bytes += s->bytes;
	t->errors += s->errors;
	t->changed += s->changed;
	t->stream_bytes += s->stream_bytes;
	t->unchanged += s->unchanged;
	t->last_read_size = NSR_MAX(t->last_read_size, s->last_read_size);
	for (unsigned i = 0; i < s->nreasons; i++)
		count_reason(t, s->reasons[i].err, s->reasons[i].n);
	t->reasons[NSR_SAVER_REASONS].n += s->reasons[NSR_SAVER_REASONS].n;
}

/* nsr_saver_reason_name - see saver.h. */
const char *nsr_saver_reason_name(int err)
{
	if (err == 0)
		return "other reasons";
	return err > 0 ? strerror(err) : nsr_strerror(err);
}

/* nsr_saver_problems_text - see saver.h. */
int nsr_saver_problems_text(const struct nsr_saver_stats *st,
			    const char *sep, struct nsr_buf *out)
{
	int rc = NSR_OK;

	if (st->errors) {
		rc = nsr_buf_addf(out, "%s%llu file(s) not saved whole: ", sep,
				  (unsigned long long)st->errors);
		if (rc == NSR_OK)
			rc = nsr_saver_reasons_text(st, out);
	}
	if (rc == NSR_OK && st->changed)
		rc = nsr_buf_addf(out, "%s%llu file(s) changed while being "
				  "saved (saved as read, marked changed)",
				  sep, (unsigned long long)st->changed);
	return rc;
}

/* nsr_saver_reasons_text - see saver.h. */
int nsr_saver_reasons_text(const struct nsr_saver_stats *st,
			   struct nsr_buf *out)
{
	int rc = NSR_OK, n = 0;

	for (unsigned i = 0; rc == NSR_OK && i <= NSR_SAVER_REASONS; i++) {
		const struct nsr_saver_reason *r = &st->reasons[i];

		if (r->n == 0 || (i < NSR_SAVER_REASONS && i >= st->nreasons))
			continue;
		rc = nsr_buf_addf(out, "%s%llu %s", n++ ? ", " : "",
				  (unsigned long long)r->n,
				  nsr_saver_reason_name(
					  i == NSR_SAVER_REASONS ? 0 : r->err));
	}
	return rc;
}

/* report - a per-file problem (err 0 = a warning, not counted). */
static void report(struct nsr_saver *s, const char *path, int err,
		   const char *what)
{
	if (err != 0) {
		s->st.errors++;
		count_reason(&s->st, err, 1);
	}
	if (s->cb.error)
		s->cb.error(s->cb.error_ctx, path, err, what);
}

/* fail - make a stream-level error sticky. */
static int fail(struct nsr_saver *s, int rc)
{
	if (s->err == 0)
		s->err = rc;
	return rc;
}

/* header - write the stream header once. */
static int header(struct nsr_saver *s)
{
	struct nsr_asm_header h;
	int rc;

	if (s->header_done)
		return NSR_OK;
	memset(&h, 0, sizeof(h));
	h.ssid = s->ssid;
	h.savetime = s->savetime;
	h.client = s->client;
	h.name = s->name;
	rc = s->pss_master ? nsr_asm_enc_pss(s->enc, s->pss_master,
					     s->pss_index)
			   : NSR_OK;
	if (rc == NSR_OK && s->split)
		rc = nsr_asm_enc_split(s->enc);
	if (rc == NSR_OK)
		rc = nsr_asm_enc_header(s->enc, &h);
	if (rc)
		return fail(s, rc);
	s->header_done = 1;
	return NSR_OK;
}

/* id_name - cached uid/gid -> name ("" when unknown). */
static const char *id_name(struct idname *c, uint32_t id, int is_group)
{
	char tmp[4096];

	if (c->valid && c->id == id)
		return c->name;
	c->valid = 1;
	c->id = id;
	c->name[0] = '\0';
	if (is_group) {
		struct group g, *gp = NULL;

		if (getgrgid_r(id, &g, tmp, sizeof(tmp), &gp) == 0 &&
		    gp != NULL && strlen(gp->gr_name) <= NSR_ASM_NAME_MAX)
			snprintf(c->name, sizeof(c->name), "%s", gp->gr_name);
	} else {
		struct passwd p, *pp = NULL;

		if (getpwuid_r(id, &p, tmp, sizeof(tmp), &pp) == 0 &&
		    pp != NULL && strlen(pp->pw_name) <= NSR_ASM_NAME_MAX)
			snprintf(c->name, sizeof(c->name), "%s", pp->pw_name);
	}
	return c->name;
}

/* file_from_stat - the stream file record for a walked object. */
static void file_from_stat(struct nsr_saver *s, const struct nsr_walk_ent *e,
			   const struct stat *st, struct nsr_asm_file *f)
{
	memset(f, 0, sizeof(*f));
	f->type = e->type;
	f->path = e->path;
	f->link = e->link;
	f->mode = st->st_mode & 07777;
	f->uid = st->st_uid;
	f->gid = st->st_gid;
	f->nlink = (uint32_t)st->st_nlink;
	f->size = e->type == NSR_ASM_REG ? (uint64_t)st->st_size : 0;
	if (e->type == NSR_ASM_CHR || e->type == NSR_ASM_BLK)
		f->rdev = st->st_rdev;
	f->atime = st->st_atim;
	f->mtime = st->st_mtim;
	f->ctime = st->st_ctim;
	f->user = id_name(&s->user, st->st_uid, 0);
	f->group = id_name(&s->group, st->st_gid, 1);
}

/* ent_name - the last component of a walked object's path. */
static const char *ent_name(const struct nsr_walk_ent *e)
{
	const char *slash = strrchr(e->path, '/');

	return slash != NULL && slash[1] != '\0' ? slash + 1 : e->path;
}

/* knob_is - does test knob value v name this object? */
static int knob_is(const char *v, const struct nsr_walk_ent *e)
{
	return v != NULL && v[0] != '\0' && strcmp(v, ent_name(e)) == 0;
}

/* test_touch - NSR_TEST_SAVE_TOUCH: append a byte to the file just read,
 * as a writer would while it is being saved. */
static void test_touch(const struct nsr_walk_ent *e)
{
	int dirfd = e->name != NULL ? e->dirfd : AT_FDCWD;
	int fd = openat(dirfd, e->name != NULL ? e->name : e->path,
			O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);

	if (fd >= 0) {
		(void)nsr_write_full(fd, "+", 1);
		close(fd);
	}
}

/* nsr_saver_open - open a walked regular file for reading (relative to its
 * directory when the walker gave one) without following links and
 * without touching its atime where allowed.  O_NONBLOCK keeps the open
 * from hanging if the name became a FIFO since the walk saw it (the caller
 * checks the type with fstat); it is cleared again for the reads. */
int nsr_saver_open(const struct nsr_walk_ent *e)
{
	int flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
	int dirfd = e->name != NULL ? e->dirfd : AT_FDCWD;
	const char *name = e->name != NULL ? e->name : e->path;
	int fd = openat(dirfd, name, flags | O_NOATIME);

	if (fd < 0 && errno == EPERM)
		fd = openat(dirfd, name, flags);
	if (fd >= 0)
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

/* close_file - close what nsr_saver_open opened here (a descriptor
 * the entry brought stays its owner's). */
static void close_file(const struct nsr_walk_ent *e, int fd)
{
	if (!e->has_fd || fd != e->fd)
		close(fd);
}

/* is_zero - are all n bytes zero? */
static int is_zero(const uint8_t *p, size_t n)
{
	return n > 0 && p[0] == 0 && memcmp(p, p + 1, n - 1) == 0;
}

/* emit_chunk - send n bytes as DATA and HOLE records: whole zero units
 * become holes. */
static int emit_chunk(struct nsr_saver *s, const uint8_t *p, size_t n)
{
	size_t i = 0;
	int rc;

	while (i < n) {
		size_t j = i, unit;

		/* A run of zero units. */
		while (j < n) {
			unit = NSR_MIN((size_t)HOLE_UNIT, n - j);
			if (unit < HOLE_UNIT || !is_zero(p + j, unit))
				break;
			j += unit;
		}
		if (j > i) {
			rc = nsr_asm_enc_hole(s->enc, j - i);
			if (rc)
				return rc;
			i = j;
			continue;
		}
		/* A run of non-zero units. */
		while (j < n) {
			unit = NSR_MIN((size_t)HOLE_UNIT, n - j);
			if (unit == HOLE_UNIT && is_zero(p + j, unit))
				break;
			j += unit;
		}
		rc = nsr_asm_enc_data(s->enc, p + i, j - i);
		if (rc)
			return rc;
		i = j;
	}
	return NSR_OK;
}

/* read_buf - a buffer of at least n bytes. */
static int read_buf(struct nsr_saver *s, size_t n)
{
	uint8_t *nb;

	if (s->buf_cap >= n)
		return NSR_OK;
	nb = realloc(s->buf, n);
	if (nb == NULL)
		return NSR_ERR_NOMEM;
	s->buf = nb;
	s->buf_cap = n;
	return NSR_OK;
}

/* skip_hole - when the file system reports a hole at base + *done
 * (SEEK_DATA), send it as a HOLE record without reading it and move past
 * it.  Clears *sparse where the file system cannot tell. */
static int skip_hole(struct nsr_saver *s, int fd, uint64_t base,
		     uint64_t *done, uint64_t size, int *sparse)
{
	off_t data = lseek(fd, (off_t)(base + *done), SEEK_DATA);
	uint64_t to;
	int rc;

	if (data < 0 && errno != ENXIO) {
		*sparse = 0;
		return lseek(fd, (off_t)(base + *done), SEEK_SET) < 0
			       ? NSR_ERR_SYSTEM
			       : NSR_OK;
	}
	/* ENXIO: nothing but a hole up to the end of the file */
	to = data < 0 ? size : NSR_MIN((uint64_t)data - base, size);
	if (to > *done) {
		rc = nsr_asm_enc_hole(s->enc, to - *done);
		if (rc)
			return rc;
		*done = to;
	}
	if (*done < size && lseek(fd, (off_t)(base + *done), SEEK_SET) < 0)
		return NSR_ERR_SYSTEM;
	return NSR_OK;
}

/* send_data - stream size bytes of fd from offset base (where fd is
 * positioned); sets *status.  Short files are padded with zeros (a
 * hole), so the data always matches the record.  sparse: the file has
 * fewer blocks than bytes, so ask for its holes. */
static int send_data(struct nsr_saver *s, int fd, const char *path,
		     uint64_t base, uint64_t size, int sparse, int *status)
{
	uint64_t done = 0;
	int rc;

	*status = NSR_ASM_FILE_OK;
	while (done < size) {
		size_t want = nsr_readsize_get(s->rs);
		size_t got = 0;

		if (sparse) {
			rc = skip_hole(s, fd, base, &done, size, &sparse);
			if (rc == NSR_ERR_SYSTEM) {
				report(s, path, errno, "lseek");
				*status = NSR_ASM_FILE_READERR;
				break;
			}
			if (rc)
				return rc;
			if (done == size)
				break;
		}

		want = (size_t)NSR_MIN((uint64_t)want, size - done);
		rc = read_buf(s, want);
		if (rc)
			return rc;
		nsr_readsize_begin(s->rs);
		rc = nsr_read_full(fd, s->buf, want, &got);
		if (rc != NSR_OK) {
			report(s, path, errno, "read");
			*status = NSR_ASM_FILE_READERR;
			break;
		}
		/* Only full reads say something about the device's rate. */
		if (got == want && want == nsr_readsize_get(s->rs))
			nsr_readsize_end(s->rs, got);
		rc = emit_chunk(s, s->buf, got);
		if (rc)
			return rc;
		done += got;
		if (got < want) {
			*status = NSR_ASM_FILE_CHANGED;
			break;
		}
	}
	if (done < size)
		return nsr_asm_enc_hole(s->enc, size - done);
	return NSR_OK;
}

/* list_xattrs - the NUL-separated attribute names of fd (or of path
 * when fd < 0), malloc'ed; *len 0 when there are none.  -1 with errno. */
static int list_xattrs(int fd, const char *path, char **names, ssize_t *len)
{
	for (int tries = 0; tries < 3; tries++) {
		ssize_t n = fd >= 0 ? flistxattr(fd, NULL, 0)
				    : llistxattr(path, NULL, 0);
		ssize_t got;

		*names = NULL;
		*len = 0;
		if (n <= 0)
			return n < 0 && errno != ENOTSUP ? -1 : 0;
		*names = malloc((size_t)n);
		if (*names == NULL)
			return -1;
		got = fd >= 0 ? flistxattr(fd, *names, (size_t)n)
			      : llistxattr(path, *names, (size_t)n);
		if (got >= 0) {
			*len = got;
			return 0;
		}
		free(*names);
		*names = NULL;
		if (errno != ERANGE) /* ERANGE: the list grew; ask again */
			return -1;
	}
	return -1;
}

/* save_xattrs - XATTR records for the object just started (fd, or path
 * when fd < 0; problems are reported against shown).  Attributes that
 * cannot be read are reported. */
static int save_xattrs(struct nsr_saver *s, int fd, const char *path,
		       const char *shown)
{
	char *value, *names = NULL;
	ssize_t len = 0;
	int rc = NSR_OK;

	if (s->no_xattrs)
		return NSR_OK;
	if (s->xbuf == NULL)
		s->xbuf = malloc(NSR_ASM_XATTR_VALUE_MAX);
	if (s->xbuf == NULL)
		return NSR_ERR_NOMEM;
	value = s->xbuf;
	if (list_xattrs(fd, path, &names, &len) != 0) {
		report(s, shown, errno, "listxattr");
		return NSR_OK;
	}
	for (ssize_t at = 0; at < len && rc == NSR_OK;) {
		const char *name = names + at;
		ssize_t n = fd >= 0 ? fgetxattr(fd, name, value,
						NSR_ASM_XATTR_VALUE_MAX)
				    : lgetxattr(path, name, value,
						NSR_ASM_XATTR_VALUE_MAX);

		at += (ssize_t)strlen(name) + 1;
		if (n < 0) {
			if (errno != ENODATA) /* ENODATA: removed meanwhile */
				report(s, shown, errno, "getxattr");
			continue;
		}
		rc = nsr_asm_enc_xattr(s->enc, name, value, (size_t)n);
		if (rc == NSR_ERR_TOOBIG || rc == NSR_ERR_INVAL) {
			report(s, shown, E2BIG, "xattr");
			rc = NSR_OK;
		}
	}
	free(names);
	return rc;
}

/* save_regular - FILE record + data + FILE_END for a regular file, or
 * with pt for one piece of a split one (nsr_saver_add_part).  The file
 * is opened first: one that cannot be opened is reported and left out
 * of the stream rather than saved empty. */
static int save_regular(struct nsr_saver *s, const struct nsr_walk_ent *e,
			const struct nsr_saver_part *pt)
{
	struct nsr_asm_file f;
	struct stat st, after;
	const struct stat *was = &st; /* what a change is measured by */
	uint64_t off = 0, base = 0;
	int fd, rc, status = NSR_ASM_FILE_OK;

	if (knob_is(s->test_eacces, e)) {
		fd = -1;
		errno = EACCES;
	} else {
		fd = e->has_fd ? e->fd : nsr_saver_open(e);
	}
	if (fd < 0) {
		report(s, e->path, errno, "open");
		return NSR_OK;
	}
	if (fstat(fd, &st) != 0) {
		report(s, e->path, errno, "fstat");
		close_file(e, fd);
		return NSR_OK;
	}
	if (!S_ISREG(st.st_mode)) { /* replaced since the walk saw it */
		report(s, e->path, ESTALE, "open");
		close_file(e, fd);
		return NSR_OK;
	}
	file_from_stat(s, e, &st, &f);
	if (pt) { /* its pieces were cut by what the walk saw */
		was = &e->st;
		f.part = pt->index;
		f.nparts = pt->nparts;
		f.total = pt->total;
		f.part_off = pt->off;
		f.size = pt->len;
		base = pt->off;
		if (base && lseek(fd, (off_t)base, SEEK_SET) < 0) {
			report(s, e->path, errno, "lseek");
			close_file(e, fd);
			return NSR_OK;
		}
	}
	rc = nsr_asm_enc_file(s->enc, &f, &off);
	if (rc == NSR_ERR_TOOBIG || rc == NSR_ERR_INVAL) {
		report(s, e->path, ENAMETOOLONG, "path");
		close_file(e, fd);
		return NSR_OK;
	}
	if (rc == NSR_OK && s->cb.index && f.part == 0)
		rc = s->cb.index(s->cb.index_ctx, &f, off);
	if (rc == NSR_OK && f.part == 0)
		rc = save_xattrs(s, fd, e->path, e->path);
	if (rc == NSR_OK)
		rc = send_data(s, fd, e->path, base, f.size,
			       (uint64_t)st.st_blocks * 512 <
				       (uint64_t)st.st_size,
			       &status);
	if (rc == NSR_OK && knob_is(s->test_touch, e))
		test_touch(e);
	if (rc == NSR_OK && status == NSR_ASM_FILE_OK &&
	    (fstat(fd, &after) != 0 || after.st_size != was->st_size ||
	     after.st_mtim.tv_sec != was->st_mtim.tv_sec ||
	     after.st_mtim.tv_nsec != was->st_mtim.tv_nsec))
		status = NSR_ASM_FILE_CHANGED;
	if (rc == NSR_OK && status == NSR_ASM_FILE_CHANGED) {
		s->st.changed++;
		report(s, e->path, 0, "changed during save");
	}
	close_file(e, fd);
	if (rc == NSR_OK)
		rc = nsr_asm_enc_file_end(s->enc, status);
	if (rc)
		return rc < 0 ? rc : NSR_ERR_INVAL;
	if (f.part == 0)
		s->st.files++;
	s->st.bytes += f.size;
	return NSR_OK;
}

/* nsr_saver_add_part - one piece of a split file. */
int nsr_saver_add_part(struct nsr_saver *s, const struct nsr_walk_ent *e,
		       const struct nsr_saver_part *p)
{
	int rc;

	if (s->err)
		return s->err;
	if (!s->split || e->type != NSR_ASM_REG || e->err != 0 ||
	    p->nparts == 0 || p->index > p->nparts ||
	    (p->index == 0) != (p->len == 0))
		return NSR_ERR_INVAL;
	rc = header(s);
	if (rc == NSR_OK)
		rc = save_regular(s, e, p);
	return rc ? fail(s, rc) : NSR_OK;
}

/* made_file - the file record of data made here rather than walked (a
 * generated or a piped file): mode 0600, this process's owner, now. */
static void made_file(struct nsr_saver *s, const char *path,
		      struct nsr_asm_file *f)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	memset(f, 0, sizeof(*f));
	f->type = NSR_ASM_REG;
	f->path = path;
	f->mode = 0600;
	f->uid = (uint32_t)getuid();
	f->gid = (uint32_t)getgid();
	f->nlink = 1;
	f->atime = f->mtime = f->ctime = now;
	f->user = id_name(&s->user, f->uid, 0);
	f->group = id_name(&s->group, f->gid, 1);
}

/* nsr_saver_add_pipe - fd's bytes until end of file as the unsized
 * regular file path, read_size bytes a read; its index entry once its
 * size is known. */
int nsr_saver_add_pipe(struct nsr_saver *s, const char *path, int fd,
		       size_t read_size)
{
	struct nsr_asm_file f;
	uint64_t off = 0, done = 0;
	size_t got = 0;
	int rc;

	if (s->err)
		return s->err;
	if (read_size == 0)
		read_size = NSR_SAVER_PIPE_DEFAULT;
	if (read_size < NSR_SAVER_PIPE_MIN || read_size > NSR_SAVER_PIPE_MAX)
		return NSR_ERR_INVAL;
	rc = header(s);
	if (rc == NSR_OK)
		rc = read_buf(s, read_size);
	if (rc != NSR_OK)
		return fail(s, rc);
	s->pipe_read = read_size;
	made_file(s, path, &f);
	f.unsized = 1;
	rc = nsr_asm_enc_file(s->enc, &f, &off);
	do {
		/* whole reads (a pipe gives what it holds): records of
		 * read_size bytes, as the command's block size would */
		if (rc == NSR_OK && nsr_read_full(fd, s->buf, read_size,
						  &got) != NSR_OK)
			rc = NSR_ERR_IO;
		if (rc == NSR_OK)
			rc = emit_chunk(s, s->buf, got);
		done += got;
	} while (rc == NSR_OK && got == read_size);
	if (rc == NSR_OK)
		rc = nsr_asm_enc_file_end(s->enc, NSR_ASM_FILE_OK);
	f.unsized = 0;
	f.size = done;
	if (rc == NSR_OK && s->cb.index)
		rc = s->cb.index(s->cb.index_ctx, &f, off);
	if (rc != NSR_OK)
		return fail(s, rc < 0 ? rc : NSR_ERR_INVAL);
	s->st.files++;
	s->st.bytes += done;
	return NSR_OK;
}

/* nsr_saver_add_generated - a bigasm-style test file: size bytes made in
 * memory (a random megabyte, its first 8 bytes the megabyte's number, so
 * no two are alike), saved as the regular file path.  Nothing is read
 * from disk. */
int nsr_saver_add_generated(struct nsr_saver *s, const char *path,
			    uint64_t size)
{
	const size_t unit = 1u << 20;
	struct nsr_asm_file f;
	uint64_t off = 0, done = 0, seed = 0x9e3779b97f4a7c15u;
	int rc;

	if (s->err)
		return s->err;
	rc = header(s);
	if (rc == NSR_OK)
		rc = read_buf(s, unit);
	if (rc != NSR_OK)
		return fail(s, rc);
	for (size_t i = 0; i + 8 <= unit; i += 8) { /* xorshift64 */
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		memcpy(s->buf + i, &seed, 8);
	}
	made_file(s, path, &f);
	f.size = size;
	rc = nsr_asm_enc_file(s->enc, &f, &off);
	if (rc == NSR_OK && s->cb.index)
		rc = s->cb.index(s->cb.index_ctx, &f, off);
	for (uint64_t mb = 0; rc == NSR_OK && done < size; mb++) {
		size_t n = (size_t)NSR_MIN((uint64_t)unit, size - done);

		memcpy(s->buf, &mb, NSR_MIN(n, sizeof(mb)));
		rc = nsr_asm_enc_data(s->enc, s->buf, n);
		done += n;
	}
	if (rc == NSR_OK)
		rc = nsr_asm_enc_file_end(s->enc, NSR_ASM_FILE_OK);
	if (rc != NSR_OK)
		return fail(s, rc < 0 ? rc : NSR_ERR_INVAL);
	s->st.files++;
	s->st.bytes += size;
	return NSR_OK;
}

/* level_save - is this an incremental or level 1-9 save? */
static bool level_save(const struct nsr_saver *s)
{
	return s->since.tv_sec != 0 || s->since.tv_nsec != 0;
}

/* save_dirents - every directory's entry list goes to the list callback
 * (the index: full saves too, so that browsing knows what a directory
 * held); a level save records it in the stream too.  A list the walker
 * did not give, as of an entry built by hand, is bad input: reported,
 * and the directory goes without one. */
static int save_dirents(struct nsr_saver *s, const struct nsr_walk_ent *e)
{
	int rc = NSR_OK;

	if (e->type != NSR_ASM_DIR || !e->listed)
		return NSR_OK;
	if (level_save(s))
		rc = nsr_asm_enc_dirents(s->enc, e->names, e->nnames);
	if (rc == NSR_ERR_INVAL || rc == NSR_ERR_TOOBIG) {
		report(s, e->path, EINVAL, "entry list");
		return NSR_OK;
	}
	if (rc == NSR_OK && s->cb.list)
		rc = s->cb.list(s->cb.list_ctx, e->path, e->names, e->nnames);
	return rc;
}

/* moved - a directory whose status changed since the reference but
 * whose entries did not (status change time at or after it, modification
 * time before): renamed or moved (or its mode or owner changed).  Its
 * children keep their times, so a level save would store them under no
 * path that exists now; it saves them all. */
static bool moved(const struct nsr_saver *s, const struct nsr_walk_ent *e)
{
	return e->type == NSR_ASM_DIR &&
	       nsr_level_changed(&e->st.st_ctim, &e->st.st_ctim, &s->since) &&
	       !nsr_level_changed(&e->st.st_mtim, &e->st.st_mtim, &s->since);
}

/* below - is path p inside directory d? */
static bool below(const char *p, const char *d)
{
	size_t n = strlen(d);

	return strncmp(p, d, n) == 0 && (p[n] == '/' || strcmp(d, "/") == 0);
}

/* unchanged - a level save leaves out what did not change since its
 * reference; directories are always recorded, and everything below a
 * moved one (the walk gives a directory's objects right after it). */
static int unchanged(struct nsr_saver *s, const struct nsr_walk_ent *e,
		     bool *out)
{
	*out = false;
	if (!level_save(s) || s->prefiltered)
		return NSR_OK;
	if (s->whole != NULL && below(e->path, s->whole))
		return NSR_OK;
	free(s->whole);
	s->whole = NULL;
	if (moved(s, e)) {
		s->whole = strdup(e->path);
		return s->whole ? NSR_OK : NSR_ERR_NOMEM;
	}
	*out = e->type != NSR_ASM_DIR &&
	       !nsr_level_changed(&e->st.st_mtim, &e->st.st_ctim, &s->since);
	return NSR_OK;
}

/* nsr_saver_skip - the level filter alone (parallel save streams filter
 * in the traversal, then hand objects to several savers). */
int nsr_saver_skip(struct nsr_saver *s, const struct nsr_walk_ent *e,
		   bool *skip)
{
	int rc;

	*skip = false;
	if (e->err != 0)
		return NSR_OK;
	rc = unchanged(s, e, skip);
	if (rc == NSR_OK && *skip)
		s->st.unchanged++;
	return rc;
}

/* save_other - FILE record + FILE_END for a non-regular object. */
static int save_other(struct nsr_saver *s, const struct nsr_walk_ent *e)
{
	struct nsr_asm_file f;
	char at[64 + NAME_MAX];
	const char *xpath = e->path;
	uint64_t off = 0;
	int rc;

	/* the attribute calls by a short path: (dirfd, name) through /proc */
	if (e->name != NULL && e->dirfd != AT_FDCWD &&
	    nsr_at_path(at, sizeof(at), e->dirfd, e->name) != NULL)
		xpath = at;
	file_from_stat(s, e, &e->st, &f);
	rc = nsr_asm_enc_file(s->enc, &f, &off);
	if (rc == NSR_ERR_TOOBIG || rc == NSR_ERR_INVAL) {
		report(s, e->path, ENAMETOOLONG, "path");
		return NSR_OK;
	}
	if (rc == NSR_OK && s->cb.index)
		rc = s->cb.index(s->cb.index_ctx, &f, off);
	if (rc == NSR_OK && e->type != NSR_ASM_HARDLINK)
		rc = save_xattrs(s, -1, xpath, e->path);
	if (rc == NSR_OK)
		rc = save_dirents(s, e);
	if (rc == NSR_OK)
		rc = nsr_asm_enc_file_end(s->enc, NSR_ASM_FILE_OK);
	if (rc)
		return rc < 0 ? rc : NSR_ERR_INVAL;
	s->st.files++;
	return NSR_OK;
}

static int add_kept(struct nsr_saver *s, const struct nsr_walk_ent *e);

/* nsr_saver_add_entry - save one walked object. */
int nsr_saver_add_entry(struct nsr_saver *s, const struct nsr_walk_ent *e)
{
	bool skip;
	int rc;

	if (s->err)
		return s->err;
	rc = nsr_saver_skip(s, e, &skip);
	if (rc)
		return fail(s, rc);
	return skip ? NSR_OK : add_kept(s, e);
}

/* add_kept - save one object the level filter kept (an error entry is
 * reported and counted). */
static int add_kept(struct nsr_saver *s, const struct nsr_walk_ent *e)
{
	int rc;

	if (s->err)
		return s->err;
	rc = header(s);
	if (rc)
		return rc;
	if (e->err != 0) {
		report(s, e->path, e->err, e->what ? e->what : "walk");
		return NSR_OK;
	}
	if (e->type == NSR_ASM_REG)
		rc = save_regular(s, e, NULL);
	else
		rc = save_other(s, e);
	if (rc)
		return fail(s, rc);
	return NSR_OK;
}

/* nsr_saver_add_path - walk a path and save everything under it.  The
 * walk runs up to SAVER_AHEAD objects ahead of the saving (level filter
 * applied, in walk order), each copied with its small file opened and
 * read ahead (pss_int.h), so the disk serves several files' reads at
 * once while one is saved. */
int nsr_saver_add_path(struct nsr_saver *s, const char *path)
{
	struct nsr_walk_opts wo = { s->cross_mounts };
	struct pss_item *ring[SAVER_AHEAD];
	struct nsr_walk *w = NULL;
	const struct nsr_walk_ent *e = NULL;
	size_t head = 0, n = 0;
	int rc, eof = 0;

	if (s->err)
		return s->err;
	rc = nsr_walk_new(&w, &path, 1, &wo);
	if (rc)
		return rc;
	for (;;) {
		while (rc == NSR_OK && !eof && n < SAVER_AHEAD) {
			struct pss_item *it;
			bool skip;

			rc = nsr_walk_next(w, &e);
			if (rc == NSR_ERR_EOF) {
				rc = NSR_OK;
				eof = 1;
				break;
			}
			if (rc == NSR_OK)
				rc = nsr_saver_skip(s, e, &skip);
			if (rc == NSR_OK && !skip &&
			    (rc = pss_item_new(e, &it)) == NSR_OK)
				ring[(head + n++) % SAVER_AHEAD] = it;
		}
		if (rc != NSR_OK || n == 0)
			break;
		rc = add_kept(s, &ring[head]->e);
		pss_item_free(ring[head]);
		head = (head + 1) % SAVER_AHEAD;
		n--;
	}
	while (n > 0) {
		pss_item_free(ring[head]);
		head = (head + 1) % SAVER_AHEAD;
		n--;
	}
	nsr_walk_free(w);
	if (rc)
		return fail(s, rc);
	return NSR_OK;
}

/* nsr_saver_finish - write the END record. */
int nsr_saver_finish(struct nsr_saver *s)
{
	int rc;

	if (s->err)
		return s->err;
	rc = header(s);
	if (rc == NSR_OK)
		rc = nsr_asm_enc_end(s->enc);
	if (rc)
		return fail(s, rc);
	return NSR_OK;
}

/* nsr_saver_stats - copy the counters. */
void nsr_saver_stats(const struct nsr_saver *s, struct nsr_saver_stats *st)
{
	*st = s->st;
	st->stream_bytes = nsr_asm_enc_offset(s->enc);
	st->last_read_size = s->pipe_read ? s->pipe_read
					  : nsr_readsize_get(s->rs);
}
