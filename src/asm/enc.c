/*
 * enc.c - the save stream encoder: turns header, file, data and end calls
 * into framed records written to a sink.  It owns the per-file checksum
 * and the stream totals, and enforces record order and bounds, so a stream
 * it produced always decodes.  Errors are sticky.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/bytes.h"
#include "nsr/crc32c.h"
#include "nsr/err.h"

#include "asm_int.h"

enum enc_state { ENC_START, ENC_BETWEEN, ENC_IN_FILE, ENC_DONE };

struct nsr_asm_enc {
	nsr_asm_write_fn sink;
	void *sink_ctx;
	int ck_alg;
	int state;
	int err; /* sticky */
	uint64_t offset;
	struct nsr_buf rec; /* metadata record being built; preallocated */
	struct asm_ck ck;
	uint64_t file_size, file_done;
	int file_xattrs; /* XATTR records of the current file */
	int file_data;	 /* data or a hole was written: no more XATTR */
	struct nsr_asm_trailer tot;
	uint32_t pss_master, pss_index; /* version 6 header */
	int file_type;	 /* of the current file */
	int file_listed; /* its DIRENTS were written: no more XATTR */
	int file_unsized; /* its size is known at FILE_END only */
	int file_part;	  /* a part of a split file: no XATTR */
	int split;	  /* version 7: split files may follow */
	struct asm_seal *seal; /* the data transform, NULL = none */
};

/* sink_write - pass bytes to the sink, tracking the offset. */
static int sink_write(struct nsr_asm_enc *e, const void *p, size_t n)
{
	int rc = e->sink(e->sink_ctx, p, n);

	if (rc != 0) {
		e->err = rc < 0 ? rc : NSR_ERR_IO;
		return e->err;
	}
	e->offset += n;
	return NSR_OK;
}

/* put_u8 - append a byte to the record being built. */
static void put_u8(struct nsr_buf *b, uint8_t v)
{
	nsr_buf_addch(b, v);
}

/* put_u16 - append a big-endian 16-bit value. */
static void put_u16(struct nsr_buf *b, uint16_t v)
{
	uint8_t t[2];

	nsr_put_u16(t, v);
	nsr_buf_add(b, t, sizeof(t));
}

/* put_u32 - append a big-endian 32-bit value. */
static void put_u32(struct nsr_buf *b, uint32_t v)
{
	uint8_t t[4];

	nsr_put_u32(t, v);
	nsr_buf_add(b, t, sizeof(t));
}

/* put_u64 - append a big-endian 64-bit value. */
static void put_u64(struct nsr_buf *b, uint64_t v)
{
	uint8_t t[8];

	nsr_put_u64(t, v);
	nsr_buf_add(b, t, sizeof(t));
}

/* put_str - u16 length + bytes; NSR_ERR_TOOBIG over max. */
static int put_str(struct nsr_buf *b, const char *s, size_t max)
{
	size_t n = s ? strlen(s) : 0;

	if (n > max)
		return NSR_ERR_TOOBIG;
	put_u16(b, (uint16_t)n);
	nsr_buf_add(b, s ? s : "", n);
	return NSR_OK;
}

/* put_time - seconds + nanoseconds. */
static void put_time(struct nsr_buf *b, const struct timespec *t)
{
	put_u64(b, (uint64_t)(int64_t)t->tv_sec);
	put_u32(b, (uint32_t)t->tv_nsec);
}

/* rec_start - begin a metadata record: room for the frame. */
static void rec_start(struct nsr_asm_enc *e)
{
	nsr_buf_reset(&e->rec);
	nsr_buf_add(&e->rec, "\0\0\0\0\0\0\0\0\0\0\0\0", NSR_ASM_FRAME_LEN);
}

/* rec_emit - frame and write the metadata record built in e->rec. */
static int rec_emit(struct nsr_asm_enc *e, int type)
{
	uint8_t *fr = (uint8_t *)e->rec.data;
	size_t len = e->rec.len - NSR_ASM_FRAME_LEN;
	uint32_t crc;

	if (len > asm_max_len(type))
		return NSR_ERR_TOOBIG;
	asm_frame_put(fr, type, (uint32_t)len);
	crc = nsr_crc32c(0, fr, 8);
	crc = nsr_crc32c(crc, fr + NSR_ASM_FRAME_LEN, len);
	nsr_put_u32(fr + 8, crc);
	return sink_write(e, e->rec.data, e->rec.len);
}

/* nsr_asm_enc_new - allocate an encoder writing to a sink. */
int nsr_asm_enc_new(struct nsr_asm_enc **out, int ck_alg,
		    nsr_asm_write_fn sink, void *sink_ctx)
{
	struct nsr_asm_enc *e;

	*out = NULL;
	if (sink == NULL || asm_ck_len(ck_alg) == 0)
		return NSR_ERR_INVAL;
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return NSR_ERR_NOMEM;
	e->sink = sink;
	e->sink_ctx = sink_ctx;
	e->ck_alg = ck_alg;
	e->state = ENC_START;
	/* Every record fits in MAX_XATTR_REC (strings are bounded before
	 * they are added), so after this the put_* helpers never allocate
	 * or fail. */
	nsr_buf_init(&e->rec, 0);
	if (nsr_buf_grow(&e->rec, NSR_ASM_FRAME_LEN + NSR_ASM_MAX_XATTR_REC)
	    != 0) {
		nsr_asm_enc_free(e);
		return NSR_ERR_NOMEM;
	}
	*out = e;
	return NSR_OK;
}

/* nsr_asm_enc_free - free an encoder. */
void nsr_asm_enc_free(struct nsr_asm_enc *e)
{
	if (e == NULL)
		return;
	nsr_buf_release(&e->rec);
	asm_ck_release(&e->ck);
	asm_seal_free(e->seal);
	free(e);
}

/* nsr_asm_enc_xform - transform file data (before the header). */
int nsr_asm_enc_xform(struct nsr_asm_enc *e, const struct nsr_asm_xform *x)
{
	struct asm_seal *s;
	int rc;

	if (e->err)
		return e->err;
	if (e->state != ENC_START || e->seal != NULL)
		return NSR_ERR_STATE;
	rc = asm_seal_new(&s, x);
	if (rc == NSR_OK)
		e->seal = s;
	return rc;
}

/* enc_check - common entry check: sticky error and expected state. */
static int enc_check(struct nsr_asm_enc *e, int state)
{
	if (e->err)
		return e->err;
	if (e->state != state)
		return NSR_ERR_STATE;
	return NSR_OK;
}

/* nsr_asm_enc_pss - the PSS fields of the header to come. */
int nsr_asm_enc_pss(struct nsr_asm_enc *e, uint32_t master, uint32_t index)
{
	int rc = enc_check(e, ENC_START);

	if (rc)
		return rc;
	if (master == 0 || index == 0 || index > 255)
		return NSR_ERR_INVAL;
	e->pss_master = master;
	e->pss_index = index;
	return NSR_OK;
}

/* nsr_asm_enc_split - split files may follow (version 7 header). */
int nsr_asm_enc_split(struct nsr_asm_enc *e)
{
	int rc = enc_check(e, ENC_START);

	if (rc == NSR_OK)
		e->split = 1;
	return rc;
}

/* nsr_asm_enc_header - write the HEADER record. */
int nsr_asm_enc_header(struct nsr_asm_enc *e, const struct nsr_asm_header *h)
{
	int rc = enc_check(e, ENC_START);

	if (rc)
		return rc;
	rec_start(e);
	put_u32(&e->rec, NSR_ASM_MAGIC);
	/* A higher version only where its records or fields are there:
	 * older readers still read every other stream. */
	put_u16(&e->rec, e->split	  ? 7
			 : e->pss_master ? 6
			 : e->seal	  ? 5
					  : NSR_ASM_VERSION_WR);
	put_u8(&e->rec, (uint8_t)e->ck_alg);
	put_u8(&e->rec, 0);
	put_u64(&e->rec, h->ssid);
	put_u64(&e->rec, (uint64_t)h->savetime);
	rc = put_str(&e->rec, h->client, NSR_ASM_NAME_MAX);
	if (rc == NSR_OK)
		rc = put_str(&e->rec, h->name, NSR_ASM_PATH_MAX);
	if (rc == NSR_OK && (e->pss_master || e->split)) {
		put_u32(&e->rec, e->pss_master);
		put_u8(&e->rec, (uint8_t)e->pss_index);
	}
	if (rc == NSR_OK)
		rc = rec_emit(e, NSR_ASM_REC_HEADER);
	if (rc == NSR_OK)
		e->state = ENC_BETWEEN;
	return rc;
}

/* file_valid - the checks the decoder will apply to a FILE record. */
static int file_valid(const struct nsr_asm_file *f)
{
	int needs_link = f->type == NSR_ASM_SYMLINK ||
			 f->type == NSR_ASM_HARDLINK;
	int has_link = f->link != NULL && f->link[0] != '\0';

	if (f->type < NSR_ASM_REG || f->type > NSR_ASM_BLK)
		return NSR_ERR_INVAL;
	if (f->path == NULL || f->path[0] == '\0' || f->mode > 07777)
		return NSR_ERR_INVAL;
	if (needs_link != has_link)
		return NSR_ERR_INVAL;
	if (f->type != NSR_ASM_REG && f->size != 0)
		return NSR_ERR_INVAL;
	if (f->unsized && (f->type != NSR_ASM_REG || f->size != 0))
		return NSR_ERR_INVAL;
	if (asm_split_check(f) != NSR_OK)
		return NSR_ERR_INVAL;
	if (f->atime.tv_nsec < 0 || f->atime.tv_nsec >= 1000000000 ||
	    f->mtime.tv_nsec < 0 || f->mtime.tv_nsec >= 1000000000 ||
	    f->ctime.tv_nsec < 0 || f->ctime.tv_nsec >= 1000000000)
		return NSR_ERR_INVAL;
	return NSR_OK;
}

/* str_fits - a FILE string: in the record, or in LONGSTR records. */
static int str_fits(const char *s, size_t max)
{
	return s == NULL || strlen(s) <= max;
}

/* put_longstr - a string over NSR_ASM_PATH_MAX as LONGSTR records. */
static int put_longstr(struct nsr_asm_enc *e, int field, const char *s)
{
	size_t total = strlen(s);
	int rc = NSR_OK;

	for (size_t off = 0; off < total && rc == NSR_OK;) {
		size_t n = NSR_MIN(total - off, (size_t)NSR_ASM_LONGSTR_PIECE);

		rec_start(e);
		put_u8(&e->rec, (uint8_t)field);
		put_u8(&e->rec, 0);
		put_u16(&e->rec, 0);
		put_u32(&e->rec, (uint32_t)total);
		put_u32(&e->rec, (uint32_t)off);
		nsr_buf_add(&e->rec, s + off, n);
		rc = rec_emit(e, NSR_ASM_REC_LONGSTR);
		off += n;
	}
	return rc;
}

/* short_or_empty - what the FILE record holds of a string: itself, or
 * "" when LONGSTR records carry it. */
static const char *short_or_empty(const char *s)
{
	return s != NULL && strlen(s) > NSR_ASM_PATH_MAX ? "" : s;
}

/* nsr_asm_enc_file - write a FILE record (after the LONGSTR records of a
 * long path or link) and start its checksum. */
int nsr_asm_enc_file(struct nsr_asm_enc *e, const struct nsr_asm_file *f,
		     uint64_t *offset)
{
	uint64_t start = e->offset;
	int rc = enc_check(e, ENC_BETWEEN);

	if (rc == NSR_OK)
		rc = file_valid(f);
	if (rc == NSR_OK && f->nparts && !e->split)
		rc = NSR_ERR_STATE;
	if (rc)
		return rc;
	/* Every bound before the first byte: nothing half-written. */
	if (!str_fits(f->path, NSR_ASM_LONGPATH_MAX) ||
	    !str_fits(f->link, NSR_ASM_LONGPATH_MAX) ||
	    !str_fits(f->user, NSR_ASM_NAME_MAX) ||
	    !str_fits(f->group, NSR_ASM_NAME_MAX))
		return NSR_ERR_TOOBIG;
	if (!str_fits(f->path, NSR_ASM_PATH_MAX))
		rc = put_longstr(e, NSR_ASM_LONG_PATH, f->path);
	if (rc == NSR_OK && !str_fits(f->link, NSR_ASM_PATH_MAX))
		rc = put_longstr(e, NSR_ASM_LONG_LINK, f->link);
	if (rc)
		return rc;
	rec_start(e);
	put_u8(&e->rec, (uint8_t)f->type);
	put_u8(&e->rec, f->unsized	       ? NSR_ASM_FILE_UNSIZED
			: f->nparts && f->part ? NSR_ASM_FILE_PART
			: f->nparts	       ? NSR_ASM_FILE_SPLIT
					       : 0);
	put_u16(&e->rec, 0);
	put_u32(&e->rec, f->mode);
	put_u32(&e->rec, f->uid);
	put_u32(&e->rec, f->gid);
	put_u32(&e->rec, f->nlink);
	put_u64(&e->rec, f->size);
	put_u64(&e->rec, f->rdev);
	put_time(&e->rec, &f->atime);
	put_time(&e->rec, &f->mtime);
	put_time(&e->rec, &f->ctime);
	rc = put_str(&e->rec, short_or_empty(f->path), NSR_ASM_PATH_MAX);
	if (rc == NSR_OK)
		rc = put_str(&e->rec, short_or_empty(f->link),
			     NSR_ASM_PATH_MAX);
	if (rc == NSR_OK)
		rc = put_str(&e->rec, f->user, NSR_ASM_NAME_MAX);
	if (rc == NSR_OK)
		rc = put_str(&e->rec, f->group, NSR_ASM_NAME_MAX);
	if (rc == NSR_OK && f->nparts) {
		put_u32(&e->rec, f->part);
		put_u32(&e->rec, f->nparts);
		put_u64(&e->rec, f->part_off);
		put_u64(&e->rec, f->total);
	}
	if (rc == NSR_OK)
		rc = asm_ck_init(&e->ck, e->ck_alg);
	if (rc == NSR_OK)
		rc = rec_emit(e, NSR_ASM_REC_FILE);
	if (rc)
		return rc;
	e->state = ENC_IN_FILE;
	/* unsized: no bound but the counter's own */
	e->file_size = f->unsized ? UINT64_MAX : f->size;
	e->file_unsized = f->unsized != 0;
	e->file_part = f->part != 0;
	e->file_done = 0;
	e->file_xattrs = 0;
	e->file_data = 0;
	e->file_type = f->type;
	e->file_listed = 0;
	if (offset)
		*offset = start;
	return NSR_OK;
}

/* nsr_asm_enc_xattr - write one extended attribute record. */
int nsr_asm_enc_xattr(struct nsr_asm_enc *e, const char *name,
		      const void *value, size_t len)
{
	int rc = enc_check(e, ENC_IN_FILE);

	if (rc)
		return rc;
	if (e->file_data || e->file_listed || e->file_part)
		return NSR_ERR_STATE;
	if (name == NULL || name[0] == '\0')
		return NSR_ERR_INVAL;
	if (len > NSR_ASM_XATTR_VALUE_MAX ||
	    e->file_xattrs >= NSR_ASM_MAX_XATTRS)
		return NSR_ERR_TOOBIG;
	rec_start(e);
	rc = put_str(&e->rec, name, NSR_ASM_XATTR_NAME_MAX);
	if (rc)
		return rc;
	put_u32(&e->rec, (uint32_t)len);
	nsr_buf_add(&e->rec, value, len);
	rc = rec_emit(e, NSR_ASM_REC_XATTR);
	if (rc == NSR_OK)
		e->file_xattrs++;
	return rc;
}

/* dirents_check - names sorted, unique and each a valid entry name. */
static int dirents_check(const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (names[i] == NULL ||
		    !asm_dirent_ok(names[i], strlen(names[i])))
			return NSR_ERR_INVAL;
		if (i > 0 && strcmp(names[i - 1], names[i]) >= 0)
			return NSR_ERR_INVAL;
	}
	return n > UINT32_MAX ? NSR_ERR_TOOBIG : NSR_OK;
}

/* nsr_asm_enc_dirents - a directory's entry list as DIRENTS records:
 * u32 total, u32 index of the record's first name, then names. */
int nsr_asm_enc_dirents(struct nsr_asm_enc *e, const char *const *names,
			size_t n)
{
	size_t i = 0;
	int rc = enc_check(e, ENC_IN_FILE);

	if (rc)
		return rc;
	if (e->file_type != NSR_ASM_DIR || e->file_listed)
		return NSR_ERR_STATE;
	rc = dirents_check(names, n);
	if (rc)
		return rc;
	e->file_listed = 1;
	do {
		rec_start(e);
		put_u32(&e->rec, (uint32_t)n);
		put_u32(&e->rec, (uint32_t)i);
		while (i < n && e->rec.len + 2 + strlen(names[i]) <=
					NSR_ASM_FRAME_LEN + NSR_ASM_MAX_META)
			put_str(&e->rec, names[i++], NSR_ASM_NAME_MAX);
		rc = rec_emit(e, NSR_ASM_REC_DIRENTS);
	} while (rc == NSR_OK && i < n);
	return rc;
}

/* seal_emit - one record of transformed data. */
static int seal_emit(struct nsr_asm_enc *e, const uint8_t *p, size_t n)
{
	size_t len;
	int rc = asm_seal_record(e->seal, p, n, &len);

	if (rc) {
		e->err = rc;
		return rc;
	}
	return sink_write(e, e->seal->out, len);
}

/* seal_flush - emit the data collected so far (before a hole or the
 * end of the file). */
static int seal_flush(struct nsr_asm_enc *e)
{
	struct asm_seal *s = e->seal;
	int rc;

	if (s == NULL || s->fill == 0)
		return NSR_OK;
	rc = seal_emit(e, s->plain, s->fill);
	s->fill = 0;
	return rc;
}

/* seal_data - collect file data into records of NSR_ASM_MAX_DATA plain
 * bytes (whole ones straight from the caller's buffer). */
static int seal_data(struct nsr_asm_enc *e, const uint8_t *c, size_t n)
{
	struct asm_seal *s = e->seal;
	int rc = NSR_OK;

	asm_ck_update(&e->ck, c, n);
	e->file_done += n;
	while (n > 0 && rc == NSR_OK) {
		size_t k;

		if (s->fill == 0 && n >= NSR_ASM_MAX_DATA) {
			rc = seal_emit(e, c, NSR_ASM_MAX_DATA);
			k = NSR_ASM_MAX_DATA;
		} else {
			k = NSR_MIN(n, NSR_ASM_MAX_DATA - s->fill);
			memcpy(s->plain + s->fill, c, k);
			s->fill += k;
			if (s->fill == NSR_ASM_MAX_DATA)
				rc = seal_flush(e);
		}
		c += k;
		n -= k;
	}
	return rc;
}

/* nsr_asm_enc_data - write file data as DATA (or SEALED) records. */
int nsr_asm_enc_data(struct nsr_asm_enc *e, const void *p, size_t n)
{
	const uint8_t *c = p;
	int rc = enc_check(e, ENC_IN_FILE);

	if (rc)
		return rc;
	if (n > 0)
		e->file_data = 1;
	if (n > e->file_size - e->file_done)
		return NSR_ERR_INVAL;
	if (e->seal)
		return seal_data(e, c, n);
	while (n > 0) {
		size_t chunk = NSR_MIN(n, (size_t)NSR_ASM_MAX_DATA);
		uint8_t fr[NSR_ASM_FRAME_LEN];

		asm_frame_put(fr, NSR_ASM_REC_DATA, (uint32_t)chunk);
		rc = sink_write(e, fr, sizeof(fr));
		if (rc == NSR_OK)
			rc = sink_write(e, c, chunk);
		if (rc)
			return rc;
		asm_ck_update(&e->ck, c, chunk);
		e->file_done += chunk;
		c += chunk;
		n -= chunk;
	}
	return NSR_OK;
}

/* nsr_asm_enc_hole - write a run of zeros as a HOLE record. */
int nsr_asm_enc_hole(struct nsr_asm_enc *e, uint64_t len)
{
	int rc = enc_check(e, ENC_IN_FILE);

	if (rc)
		return rc;
	if (len == 0)
		return NSR_OK;
	if (len > e->file_size - e->file_done)
		return NSR_ERR_INVAL;
	e->file_data = 1;
	rc = seal_flush(e);
	if (rc)
		return rc;
	rec_start(e);
	put_u64(&e->rec, len);
	rc = rec_emit(e, NSR_ASM_REC_HOLE);
	if (rc)
		return rc;
	asm_ck_zeros(&e->ck, len);
	e->file_done += len;
	return NSR_OK;
}

/* nsr_asm_enc_file_end - write FILE_END with the file checksum. */
int nsr_asm_enc_file_end(struct nsr_asm_enc *e, int status)
{
	uint8_t ck[NSR_ASM_CK_MAX];
	size_t ck_len = asm_ck_len(e->ck_alg);
	int rc = enc_check(e, ENC_IN_FILE);

	if (rc)
		return rc;
	if ((!e->file_unsized && e->file_done != e->file_size) ||
	    status < NSR_ASM_FILE_OK || status > NSR_ASM_FILE_CHANGED)
		return NSR_ERR_INVAL;
	rc = seal_flush(e);
	if (rc == NSR_OK)
		rc = asm_ck_final(&e->ck, ck);
	if (rc)
		return rc;
	rec_start(e);
	put_u8(&e->rec, (uint8_t)status);
	put_u8(&e->rec, (uint8_t)e->ck_alg);
	put_u8(&e->rec, (uint8_t)ck_len);
	put_u8(&e->rec, 0);
	put_u64(&e->rec, e->file_done);
	nsr_buf_add(&e->rec, ck, ck_len);
	rc = rec_emit(e, NSR_ASM_REC_FILE_END);
	if (rc)
		return rc;
	e->tot.files++;
	e->tot.bytes += e->file_done;
	if (status != NSR_ASM_FILE_OK)
		e->tot.errors++;
	e->state = ENC_BETWEEN;
	return NSR_OK;
}

/* nsr_asm_enc_end - write the END record with the totals. */
int nsr_asm_enc_end(struct nsr_asm_enc *e)
{
	int rc = enc_check(e, ENC_BETWEEN);

	if (rc)
		return rc;
	rec_start(e);
	put_u64(&e->rec, e->tot.files);
	put_u64(&e->rec, e->tot.bytes);
	put_u64(&e->rec, e->tot.errors);
	rc = rec_emit(e, NSR_ASM_REC_END);
	if (rc == NSR_OK)
		e->state = ENC_DONE;
	return rc;
}

/* nsr_asm_enc_offset - bytes written so far. */
uint64_t nsr_asm_enc_offset(const struct nsr_asm_enc *e)
{
	return e->offset;
}

/* nsr_asm_enc_totals - the totals END will record. */
void nsr_asm_enc_totals(const struct nsr_asm_enc *e, struct nsr_asm_trailer *t)
{
	*t = e->tot;
}
