/*
 * dec.c - the incremental save stream decoder.  Input arrives in pieces
 * of any size; the decoder collects one frame header, then either buffers
 * a metadata payload (bounded per type, at most NSR_ASM_MAX_XATTR_REC) or
 * passes DATA payload straight through to the data callback.  It enforces
 * the record grammar
 *
 *	HEADER (LONGSTR* FILE XATTR* DIRENTS* (DATA|HOLE)* FILE_END)* END
 *
 * (LONGSTR from version 2 on, DIRENTS from version 3 on, unsized files
 * from version 4 on; LONGSTR carries
 * a path too long for the FILE record, which then holds an empty string
 * in its place)
 * every bound and CRC, and that each file's data adds up to its size, so
 * the callbacks only ever see well-formed events.  Errors are sticky,
 * unless resynchronisation is on (dec_resync.c).
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/bytes.h"
#include "nsr/crc32c.h"
#include "nsr/err.h"

#include "asm_int.h"

/* nsr_asm_dec_new - allocate a decoder that reports to ops. */
int nsr_asm_dec_new(struct nsr_asm_dec **out,
		    const struct nsr_asm_dec_ops *ops, void *ctx)
{
	struct nsr_asm_dec *d;

	*out = NULL;
	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return NSR_ERR_NOMEM;
	if (ops)
		d->ops = *ops;
	d->ctx = ctx;
	d->state = DEC_HEADER;
	nsr_buf_init(&d->q, 0);
	*out = d;
	return NSR_OK;
}

/* nsr_asm_dec_free - free a decoder. */
void nsr_asm_dec_free(struct nsr_asm_dec *d)
{
	if (d == NULL)
		return;
	asm_ck_release(&d->ck);
	free(d->lng[0].s);
	free(d->lng[1].s);
	free(d->win);
	nsr_buf_release(&d->q);
	asm_dec_seal_free(d);
	free(d);
}

/* asm_dec_fail - record the sticky error and return it. */
int asm_dec_fail(struct nsr_asm_dec *d, int rc)
{
	d->err = rc;
	return rc;
}

/* asm_dec_cb_rc - map a callback's non-zero return to a negative code, and
 * remember that it was the caller's (never treated as damage). */
int asm_dec_cb_rc(struct nsr_asm_dec *d, int rc)
{
	d->cb_err = 1;
	return rc < 0 ? rc : NSR_ERR_INVAL;
}

/* get_str - u16 length + bytes into out (NUL-terminated); rejects strings
 * over max or containing NUL. */
static int get_str(struct nsr_rd *r, char *out, size_t max)
{
	uint16_t n = nsr_rd_u16(r);
	const uint8_t *p;

	out[0] = '\0';
	if (nsr_rd_error(r))
		return NSR_ERR_CORRUPT;
	if (n > max)
		return NSR_ERR_CORRUPT;
	p = nsr_rd_take(r, n);
	if (p == NULL || memchr(p, '\0', n) != NULL)
		return NSR_ERR_CORRUPT;
	memcpy(out, p, n);
	out[n] = '\0';
	return NSR_OK;
}

/* get_time - seconds + nanoseconds (< 1e9). */
static int get_time(struct nsr_rd *r, struct timespec *t)
{
	uint64_t sec = nsr_rd_u64(r);
	uint32_t nsec = nsr_rd_u32(r);

	if (nsec >= 1000000000u)
		return NSR_ERR_CORRUPT;
	t->tv_sec = (time_t)(int64_t)sec;
	t->tv_nsec = (long)nsec;
	return NSR_OK;
}

/* on_header - decode and check HEADER. */
static int on_header(struct nsr_asm_dec *d, struct nsr_rd *r)
{
	struct nsr_asm_header h;
	uint32_t magic = nsr_rd_u32(r);
	uint16_t version = nsr_rd_u16(r);
	int rc;

	memset(&h, 0, sizeof(h));
	h.ck_alg = nsr_rd_u8(r);
	nsr_rd_u8(r);
	h.ssid = nsr_rd_u64(r);
	h.savetime = (int64_t)nsr_rd_u64(r);
	if (nsr_rd_error(r) || magic != NSR_ASM_MAGIC)
		return NSR_ERR_CORRUPT;
	if (version < NSR_ASM_VERSION_MIN || version > NSR_ASM_VERSION)
		return NSR_ERR_UNSUPPORTED;
	if (asm_ck_len(h.ck_alg) == 0)
		return NSR_ERR_CORRUPT;
	rc = get_str(r, d->client, NSR_ASM_NAME_MAX);
	if (rc == NSR_OK)
		rc = get_str(r, d->name, NSR_ASM_PATH_MAX);
	if (rc)
		return rc;
	if (version >= 6) { /* a PSS stream: its master and index */
		d->pss_master = nsr_rd_u32(r);
		d->pss_index = nsr_rd_u8(r);
		/* version 6: a dependent; 7: a dependent or its master */
		if (nsr_rd_error(r) ||
		    (d->pss_master == 0) != (d->pss_index == 0) ||
		    (version == 6 && d->pss_master == 0))
			return NSR_ERR_CORRUPT;
	}
	d->ck_alg = h.ck_alg;
	d->version = version;
	h.version = version;
	h.client = d->client;
	h.name = d->name;
	d->state = DEC_BETWEEN;
	if (d->ops.header) {
		rc = d->ops.header(d->ctx, &h);
		if (rc)
			return asm_dec_cb_rc(d, rc);
	}
	return NSR_OK;
}

/* long_or - the string of a FILE record: the long one collected before
 * it, or short (the record's own).  NULL when they clash: both given, or
 * the long one incomplete. */
static const char *long_or(const struct asm_long *l, const char *short_s)
{
	if (l->total == 0)
		return short_s;
	if (l->got != l->total || short_s[0] != '\0')
		return NULL;
	return l->s;
}

/* on_longstr - decode LONGSTR: u8 field, 3 reserved bytes, u32 total
 * length, u32 offset of this piece, the piece.  Pieces come in order;
 * only strings too long for the FILE record travel this way. */
static int on_longstr(struct nsr_asm_dec *d, struct nsr_rd *r)
{
	int field = nsr_rd_u8(r);
	int rsv1 = nsr_rd_u8(r), rsv2 = nsr_rd_u16(r);
	uint32_t total = nsr_rd_u32(r), off = nsr_rd_u32(r);
	size_t n = r->left;
	struct asm_long *l;
	const uint8_t *p;

	if (nsr_rd_error(r) || d->version == 1 || rsv1 != 0 || rsv2 != 0 ||
	    (field != NSR_ASM_LONG_PATH && field != NSR_ASM_LONG_LINK) ||
	    total <= NSR_ASM_PATH_MAX || total > NSR_ASM_LONGPATH_MAX ||
	    n == 0 || n > NSR_ASM_LONGSTR_PIECE || n > total ||
	    off > total - n)
		return NSR_ERR_CORRUPT;
	l = &d->lng[field - 1];
	if (off == 0 && l->total == 0) {
		char *s = realloc(l->s, (size_t)total + 1);

		if (s == NULL)
			return NSR_ERR_NOMEM;
		l->s = s;
		l->total = total;
		l->got = 0;
		if (d->lng[2 - field].total == 0)
			d->long_start = d->rec_offset;
	} else if (l->total != total || off != l->got) {
		return NSR_ERR_CORRUPT;
	}
	p = nsr_rd_take(r, n);
	if (p == NULL || memchr(p, '\0', n) != NULL)
		return NSR_ERR_CORRUPT;
	memcpy(l->s + off, p, n);
	l->got += (uint32_t)n;
	l->s[l->got] = '\0';
	return NSR_OK;
}

/* on_file - decode and check FILE. */
static int on_file(struct nsr_asm_dec *d, struct nsr_rd *r)
{
	struct nsr_asm_file f;
	int rc, has_link, needs_link, flags;

	memset(&f, 0, sizeof(f));
	f.type = nsr_rd_u8(r);
	flags = nsr_rd_u8(r);
	nsr_rd_u16(r);
	f.mode = nsr_rd_u32(r);
	f.uid = nsr_rd_u32(r);
	f.gid = nsr_rd_u32(r);
	f.nlink = nsr_rd_u32(r);
	f.size = nsr_rd_u64(r);
	f.rdev = nsr_rd_u64(r);
	rc = get_time(r, &f.atime);
	if (rc == NSR_OK)
		rc = get_time(r, &f.mtime);
	if (rc == NSR_OK)
		rc = get_time(r, &f.ctime);
	if (rc == NSR_OK)
		rc = get_str(r, d->path, NSR_ASM_PATH_MAX);
	if (rc == NSR_OK)
		rc = get_str(r, d->link, NSR_ASM_PATH_MAX);
	if (rc == NSR_OK)
		rc = get_str(r, d->user, NSR_ASM_NAME_MAX);
	if (rc == NSR_OK)
		rc = get_str(r, d->group, NSR_ASM_NAME_MAX);
	if (rc == NSR_OK &&
	    (flags & (NSR_ASM_FILE_SPLIT | NSR_ASM_FILE_PART)) != 0) {
		f.part = nsr_rd_u32(r);
		f.nparts = nsr_rd_u32(r);
		f.part_off = nsr_rd_u64(r);
		f.total = nsr_rd_u64(r);
		/* a head is part 0, a part is not */
		if ((flags & NSR_ASM_FILE_PART) != 0 ? f.part == 0
						     : f.part != 0)
			return NSR_ERR_CORRUPT;
	}
	if (rc || nsr_rd_error(r))
		return NSR_ERR_CORRUPT;
	f.path = long_or(&d->lng[0], d->path);
	f.link = long_or(&d->lng[1], d->link);
	if (f.path == NULL || f.link == NULL)
		return NSR_ERR_CORRUPT;

	/* The same rules the encoder enforces. */
	needs_link = f.type == NSR_ASM_SYMLINK || f.type == NSR_ASM_HARDLINK;
	has_link = f.link[0] != '\0';
	if (f.type < NSR_ASM_REG || f.type > NSR_ASM_BLK || f.mode > 07777 ||
	    f.path[0] == '\0' || needs_link != has_link ||
	    (f.type != NSR_ASM_REG && f.size != 0))
		return NSR_ERR_CORRUPT;
	/* Flags from version 4 on (0: the header was lost, maybe new). */
	f.unsized = (flags & NSR_ASM_FILE_UNSIZED) != 0;
	if ((flags & ~(NSR_ASM_FILE_UNSIZED | NSR_ASM_FILE_SPLIT |
		       NSR_ASM_FILE_PART)) != 0 ||
	    (flags & (flags - 1)) != 0 || /* one flag at most */
	    (flags != 0 && d->version != 0 && d->version < 4) ||
	    ((flags & ~NSR_ASM_FILE_UNSIZED) != 0 && d->version != 0 &&
	     d->version < 7) ||
	    (f.unsized && (f.type != NSR_ASM_REG || f.size != 0)) ||
	    asm_split_check(&f) != NSR_OK)
		return NSR_ERR_CORRUPT;
	d->path_long = f.path != d->path;
	if (d->lng[0].total == 0 && d->lng[1].total == 0)
		d->long_start = d->rec_offset;
	d->lng[0].total = d->lng[0].got = 0;
	d->lng[1].total = d->lng[1].got = 0;

	f.user = d->user;
	f.group = d->group;
	rc = asm_ck_init(&d->ck, d->ck_alg);
	if (rc)
		return rc;
	/* unsized: no bound on its data but the counter's own */
	d->file_size = f.unsized ? UINT64_MAX : f.size;
	d->file_unsized = f.unsized;
	d->file_part = f.part != 0;
	d->file_done = 0;
	d->file_xattrs = 0;
	d->file_data = 0;
	d->file_type = f.type;
	d->dir_listed = 0;
	d->file_nokey = 0;
	d->state = DEC_IN_FILE;
	if (d->ops.file) {
		rc = d->ops.file(d->ctx, &f, d->long_start);
		if (rc)
			return asm_dec_cb_rc(d, rc);
	}
	return NSR_OK;
}

/* on_xattr - decode XATTR: u16 name length, name, u32 value length,
 * value. */
static int on_xattr(struct nsr_asm_dec *d, struct nsr_rd *r)
{
	const uint8_t *value;
	uint32_t vlen;
	int rc;

	if (d->file_data || d->dir_listed || d->file_part ||
	    d->file_xattrs >= NSR_ASM_MAX_XATTRS)
		return NSR_ERR_CORRUPT;
	rc = get_str(r, d->xname, NSR_ASM_XATTR_NAME_MAX);
	if (rc || d->xname[0] == '\0')
		return NSR_ERR_CORRUPT;
	vlen = nsr_rd_u32(r);
	if (nsr_rd_error(r) || vlen > NSR_ASM_XATTR_VALUE_MAX)
		return NSR_ERR_CORRUPT;
	value = nsr_rd_take(r, vlen);
	if (value == NULL)
		return NSR_ERR_CORRUPT;
	d->file_xattrs++;
	if (d->ops.xattr) {
		rc = d->ops.xattr(d->ctx, d->xname, value, vlen);
		if (rc)
			return asm_dec_cb_rc(d, rc);
	}
	return NSR_OK;
}

/* dirents_begin - the frame of a DIRENTS record: the first starts the
 * list at index 0, each next one goes on where the last stopped. */
static int dirents_begin(struct nsr_asm_dec *d, uint32_t total,
			 uint32_t first)
{
	/* Version 0: the header was lost (resync), the stream may be new. */
	if (d->file_type != NSR_ASM_DIR || (d->version && d->version < 3))
		return NSR_ERR_CORRUPT;
	if (!d->dir_listed) {
		if (first != 0)
			return NSR_ERR_CORRUPT;
		d->dir_listed = 1;
		d->dir_total = total;
		d->dir_next = 0;
		return NSR_OK;
	}
	/* An empty list is one record; a continuation carries names. */
	if (total != d->dir_total || first != d->dir_next || total == 0)
		return NSR_ERR_CORRUPT;
	return NSR_OK;
}

/* dirent_next - the next name of a DIRENTS record into d->dname. */
static int dirent_next(struct nsr_asm_dec *d, struct nsr_rd *r)
{
	uint16_t n = nsr_rd_u16(r);
	const uint8_t *p = nsr_rd_take(r, n);

	if (p == NULL || d->dir_next >= d->dir_total ||
	    !asm_dirent_ok((const char *)p, n))
		return NSR_ERR_CORRUPT;
	memcpy(d->dname, p, n);
	d->dname[n] = '\0';
	if (d->dir_next > 0 && strcmp(d->dprev, d->dname) >= 0)
		return NSR_ERR_CORRUPT; /* unsorted or repeated */
	return NSR_OK;
}

/* on_dirents - decode DIRENTS: u32 total, u32 first index, names. */
static int on_dirents(struct nsr_asm_dec *d, struct nsr_rd *r)
{
	uint32_t total = nsr_rd_u32(r), first = nsr_rd_u32(r);
	int rc;

	if (nsr_rd_error(r))
		return NSR_ERR_CORRUPT;
	rc = dirents_begin(d, total, first);
	if (rc)
		return rc;
	if (total == 0) {
		if (r->left != 0)
			return NSR_ERR_CORRUPT;
		rc = d->ops.dirent ? d->ops.dirent(d->ctx, NULL, 0, 0) : 0;
		return rc ? asm_dec_cb_rc(d, rc) : NSR_OK;
	}
	if (r->left == 0)
		return NSR_ERR_CORRUPT;
	while (r->left > 0) {
		rc = dirent_next(d, r);
		if (rc)
			return rc;
		if (d->ops.dirent) {
			rc = d->ops.dirent(d->ctx, d->dname, d->dir_next,
					   total);
			if (rc)
				return asm_dec_cb_rc(d, rc);
		}
		memcpy(d->dprev, d->dname, sizeof(d->dprev));
		d->dir_next++;
	}
	return NSR_OK;
}

/* on_hole - decode HOLE. */
static int on_hole(struct nsr_asm_dec *d, struct nsr_rd *r)
{
	uint64_t len = nsr_rd_u64(r);
	int rc;

	if (nsr_rd_error(r) || len == 0 ||
	    len > d->file_size - d->file_done)
		return NSR_ERR_CORRUPT;
	asm_ck_zeros(&d->ck, len);
	d->file_done += len;
	d->file_data = 1;
	if (d->ops.hole) {
		rc = d->ops.hole(d->ctx, len);
		if (rc)
			return asm_dec_cb_rc(d, rc);
	}
	return NSR_OK;
}

/* on_file_end - decode FILE_END and compare the checksum. */
static int on_file_end(struct nsr_asm_dec *d, struct nsr_rd *r)
{
	struct nsr_asm_file_end fe;
	uint8_t mine[NSR_ASM_CK_MAX];
	int rc;

	memset(&fe, 0, sizeof(fe));
	fe.status = nsr_rd_u8(r);
	fe.ck_alg = nsr_rd_u8(r);
	fe.ck_len = nsr_rd_u8(r);
	nsr_rd_u8(r);
	fe.bytes = nsr_rd_u64(r);
	if (d->ck_guess && asm_ck_len(fe.ck_alg) != 0 &&
	    fe.ck_alg != d->ck_alg) {
		/* the header was lost and the guess was wrong: this file
		 * cannot be verified; later ones use the right type */
		d->ck_alg = fe.ck_alg;
		d->ck_guess = 0;
		fe.ck_alg = -1;
	}
	if (nsr_rd_error(r) || fe.status > NSR_ASM_FILE_CHANGED ||
	    (fe.ck_alg != -1 && (fe.ck_alg != d->ck_alg ||
				 fe.ck_len != asm_ck_len(d->ck_alg))) ||
	    fe.bytes != d->file_done ||
	    (!d->file_unsized && d->file_done != d->file_size) ||
	    (d->dir_listed && d->dir_next != d->dir_total))
		return NSR_ERR_CORRUPT;
	if (fe.ck_len > NSR_ASM_CK_MAX)
		return NSR_ERR_CORRUPT;
	nsr_rd_bytes(r, fe.ck, fe.ck_len);
	if (nsr_rd_error(r))
		return NSR_ERR_CORRUPT;
	rc = asm_ck_final(&d->ck, mine);
	if (rc)
		return rc;
	if (fe.ck_alg == -1) {
		fe.ck_alg = d->ck_alg;
		fe.ck_ok = 0;
	} else {
		fe.ck_ok = memcmp(mine, fe.ck, fe.ck_len) == 0;
	}
	if (d->file_nokey) { /* data passed over: nothing to check */
		fe.nokey = 1;
		fe.ck_ok = 0;
		memcpy(fe.key_id, d->nokey_id, sizeof(fe.key_id));
	}
	d->tot.files++;
	d->tot.bytes += d->file_done;
	if (fe.status != NSR_ASM_FILE_OK)
		d->tot.errors++;
	d->state = DEC_BETWEEN;
	if (d->ops.file_end) {
		rc = d->ops.file_end(d->ctx, &fe);
		if (rc)
			return asm_dec_cb_rc(d, rc);
	}
	d->path[0] = '\0';
	d->path_long = 0;
	return NSR_OK;
}

/* on_end - decode END and check the totals. */
static int on_end(struct nsr_asm_dec *d, struct nsr_rd *r)
{
	struct nsr_asm_trailer t;
	int rc;

	t.files = nsr_rd_u64(r);
	t.bytes = nsr_rd_u64(r);
	t.errors = nsr_rd_u64(r);
	if (nsr_rd_error(r) || d->lng[0].total != 0 || d->lng[1].total != 0)
		return NSR_ERR_CORRUPT;
	/* after damage some files were skipped: the totals cannot agree */
	if (!d->damaged && (t.files != d->tot.files ||
			    t.bytes != d->tot.bytes ||
			    t.errors != d->tot.errors))
		return NSR_ERR_CORRUPT;
	d->state = DEC_DONE;
	if (d->ops.end) {
		rc = d->ops.end(d->ctx, &t);
		if (rc)
			return asm_dec_cb_rc(d, rc);
	}
	return NSR_OK;
}

/* asm_dec_on_meta - a complete metadata record: check CRC, dispatch, and insist
 * the payload was consumed exactly. */
int asm_dec_on_meta(struct nsr_asm_dec *d)
{
	struct nsr_rd r;
	uint32_t crc;
	int rc;

	crc = nsr_crc32c(0, d->frame, 8);
	crc = nsr_crc32c(crc, d->meta, d->len);
	if (crc != nsr_get_u32(d->frame + 8))
		return NSR_ERR_CHECKSUM;
	nsr_rd_init(&r, d->meta, d->len);
	switch (d->type) {
	case NSR_ASM_REC_HEADER:
		rc = on_header(d, &r);
		break;
	case NSR_ASM_REC_FILE:
		rc = on_file(d, &r);
		break;
	case NSR_ASM_REC_HOLE:
		rc = on_hole(d, &r);
		break;
	case NSR_ASM_REC_XATTR:
		rc = on_xattr(d, &r);
		break;
	case NSR_ASM_REC_DIRENTS:
		rc = on_dirents(d, &r);
		break;
	case NSR_ASM_REC_FILE_END:
		rc = on_file_end(d, &r);
		break;
	case NSR_ASM_REC_LONGSTR:
		rc = on_longstr(d, &r);
		break;
	default:
		rc = on_end(d, &r);
		break;
	}
	if (rc == NSR_OK && r.left != 0)
		rc = NSR_ERR_CORRUPT;
	return rc;
}

/* type_allowed - is a record of this type legal in the current state? */
static int type_allowed(const struct nsr_asm_dec *d, int type)
{
	switch (d->state) {
	case DEC_HEADER:
		return type == NSR_ASM_REC_HEADER;
	case DEC_BETWEEN:
		return type == NSR_ASM_REC_FILE || type == NSR_ASM_REC_END ||
		       type == NSR_ASM_REC_LONGSTR;
	case DEC_IN_FILE:
		return type == NSR_ASM_REC_DATA || type == NSR_ASM_REC_HOLE ||
		       type == NSR_ASM_REC_SEALED ||
		       type == NSR_ASM_REC_FILE_END ||
		       type == NSR_ASM_REC_XATTR ||
		       type == NSR_ASM_REC_DIRENTS;
	default:
		return 0;
	}
}

/* on_frame - a complete frame header: validate it. */
static int on_frame(struct nsr_asm_dec *d)
{
	const uint8_t *f = d->frame;
	uint32_t max;

	d->type = f[0];
	d->len = nsr_get_u32(f + 4);
	d->got = 0;
	max = asm_max_len(d->type);
	if (f[1] != 0 || f[2] != 0 || f[3] != 0 || max == 0)
		return NSR_ERR_CORRUPT;
	if ((d->type == NSR_ASM_REC_DATA || d->type == NSR_ASM_REC_SEALED) &&
	    nsr_get_u32(f + 8) != nsr_crc32c(0, f, 8))
		return NSR_ERR_CHECKSUM;
	if (d->len > max)
		return NSR_ERR_TOOBIG;
	if (!type_allowed(d, d->type))
		return NSR_ERR_CORRUPT;
	if (d->type == NSR_ASM_REC_DATA &&
	    (d->len == 0 || d->len > d->file_size - d->file_done))
		return NSR_ERR_CORRUPT;
	if (d->type == NSR_ASM_REC_DATA)
		return asm_dec_seal_mode(d, NULL);
	if (d->type == NSR_ASM_REC_SEALED)
		return asm_dec_seal_frame(d);
	return NSR_OK;
}

/* take_data - pass up to n bytes of a DATA payload through. */
static int take_data(struct nsr_asm_dec *d, const uint8_t *p, size_t n)
{
	int rc;

	asm_ck_update(&d->ck, p, n);
	d->file_done += n;
	d->file_data = 1;
	if (d->ops.data) {
		rc = d->ops.data(d->ctx, p, n);
		if (rc)
			return asm_dec_cb_rc(d, rc);
	}
	return NSR_OK;
}

/* decode - run the record grammar over c[0..n); *used gets the bytes
 * consumed, including those of a record that failed. */
static int decode(struct nsr_asm_dec *d, const uint8_t *c, size_t n,
		  size_t *used)
{
	size_t start_n = n;
	int rc = NSR_OK;

	while (n > 0 && rc == NSR_OK) {
		size_t k;

		if (d->state == DEC_DONE) {
			rc = NSR_ERR_CORRUPT;
			break;
		}
		if (!d->in_payload) {
			/* Collect the frame header. */
			if (d->frame_fill == 0)
				d->rec_offset = d->offset;
			k = NSR_MIN(n, NSR_ASM_FRAME_LEN - d->frame_fill);
			memcpy(d->frame + d->frame_fill, c, k);
			d->frame_fill += k;
			d->offset += k;
			c += k;
			n -= k;
			if (d->frame_fill < NSR_ASM_FRAME_LEN)
				break;
			d->frame_fill = 0;
			rc = on_frame(d);
			if (rc)
				break;
			d->in_payload = 1;
		} else {
			k = NSR_MIN(n, (size_t)(d->len - d->got));
			if (d->type == NSR_ASM_REC_DATA)
				rc = take_data(d, c, k);
			else if (d->type == NSR_ASM_REC_SEALED)
				memcpy(d->sbuf + d->got, c, k);
			else
				memcpy(d->meta + d->got, c, k);
			d->got += (uint32_t)k;
			d->offset += k;
			c += k;
			n -= k;
			if (rc)
				break;
		}
		/* A payload is complete (possibly empty). */
		if (d->in_payload && d->got == d->len) {
			d->in_payload = 0;
			if (d->type == NSR_ASM_REC_SEALED)
				rc = asm_dec_on_sealed(d);
			else if (d->type != NSR_ASM_REC_DATA)
				rc = asm_dec_on_meta(d);
		}
	}
	*used = start_n - n;
	return rc;
}

/* nsr_asm_dec_feed - consume the next piece of the stream. */
int nsr_asm_dec_feed(struct nsr_asm_dec *d, const void *p, size_t n)
{
	const uint8_t *c = p;
	int rc;

	if (d->err)
		return d->err;
	/* Queued bytes (the tail of a hunt) come before new input. */
	if (d->q_pos < d->q.len && n > 0) {
		rc = nsr_buf_add(&d->q, c, n);
		if (rc)
			return asm_dec_fail(d, rc);
		n = 0;
	}
	for (;;) {
		int from_q = d->q_pos < d->q.len;
		const uint8_t *in =
			from_q ? (uint8_t *)d->q.data + d->q_pos : c;
		size_t avail = from_q ? d->q.len - d->q_pos : n, used;

		if (avail == 0)
			break;
		if (d->hunting)
			used = asm_dec_win_take(d, in, avail);
		else
			rc = decode(d, in, avail, &used);
		/* account for what was taken before anything rebuilds q */
		if (from_q) {
			d->q_pos += used;
			if (d->q_pos == d->q.len) {
				nsr_buf_reset(&d->q);
				d->q_pos = 0;
			}
		} else {
			c += used;
			n -= used;
		}
		if (d->hunting) {
			rc = asm_dec_hunt(d);
			if (!d->hunting && n > 0) {
				/* resumed: the window's tail is queued;
				 * the rest of the input follows it */
				int arc = nsr_buf_add(&d->q, c, n);

				n = 0;
				if (arc)
					return asm_dec_fail(d, arc);
			}
		}
		if (rc && asm_dec_recoverable(d, rc))
			rc = asm_dec_start_hunt(d, rc, NSR_ASM_FRAME_LEN);
		if (rc)
			return asm_dec_fail(d, rc);
	}
	return NSR_OK;
}

/* nsr_asm_dec_finish - check that the stream ended with END. */
int nsr_asm_dec_finish(struct nsr_asm_dec *d)
{
	int rc;

	if (d->err)
		return d->err;
	if (d->resync && !d->cb_err) {
		rc = asm_dec_drain(d);
		if (rc)
			return rc;
	}
	if (d->damaged)
		return asm_dec_fail(d, NSR_ERR_CORRUPT);
	if (d->state != DEC_DONE)
		return asm_dec_fail(d, NSR_ERR_TRUNCATED);
	return NSR_OK;
}

/* nsr_asm_dec_offset - stream bytes consumed so far. */
uint64_t nsr_asm_dec_offset(const struct nsr_asm_dec *d)
{
	return d->offset;
}

/* nsr_asm_dec_pss - the PSS fields of the header. */
void nsr_asm_dec_pss(const struct nsr_asm_dec *d, uint32_t *master,
		     uint32_t *index)
{
	*master = d->pss_master;
	*index = d->pss_index;
}

/* nsr_asm_dec_path - path of the file being decoded, for messages. */
const char *nsr_asm_dec_path(const struct nsr_asm_dec *d)
{
	return d->path_long ? d->lng[0].s : d->path;
}
