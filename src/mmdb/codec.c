/*
 * codec.c - encodings of the media database records: the volume record
 * (public, self-contained) and the stored save set record (string ids,
 * clones and fragments embedded).  Integers are LEB128 varints, signed
 * values zigzag, times relative to the save time where that makes them
 * short.  Decoders treat their input as hostile: bounded reads, counts
 * checked against the record limits, trailing bytes rejected.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/bytes.h"
#include "nsr/err.h"
#include "nsr/mmdb.h"

#include "mmdb_int.h"

#define VOL_VERSION 1
#define SS_VERSION 1

/* ---- primitives ------------------------------------------------------ */

struct wr {
	uint8_t *p;
	size_t len, cap;
	int err;
};

/* put_u8 - append one byte. */
static void put_u8(struct wr *w, uint8_t b)
{
	if (w->len >= w->cap) {
		w->err = NSR_ERR_TOOBIG;
		return;
	}
	w->p[w->len++] = b;
}

/* put_var - append an unsigned LEB128 varint. */
static void put_var(struct wr *w, uint64_t v)
{
	while (v >= 0x80) {
		put_u8(w, (uint8_t)(v | 0x80));
		v >>= 7;
	}
	put_u8(w, (uint8_t)v);
}

/* zz - zigzag of a two's complement difference. */
static uint64_t zz(uint64_t d)
{
	return (d << 1) ^ (uint64_t)-(int64_t)(d >> 63);
}

/* unzz - inverse of zz. */
static uint64_t unzz(uint64_t z)
{
	return (z >> 1) ^ (uint64_t)-(int64_t)(z & 1);
}

/* put_time - a time relative to base: 0 stays 0, else zigzag + 1. */
static void put_time(struct wr *w, int64_t t, int64_t base)
{
	uint64_t z;

	if (t == 0) {
		put_var(w, 0);
		return;
	}
	z = zz((uint64_t)t - (uint64_t)base);
	if (z == UINT64_MAX) {
		w->err = NSR_ERR_INVAL;
		return;
	}
	put_var(w, z + 1);
}

/* put_bytes - append raw bytes. */
static void put_bytes(struct wr *w, const void *p, size_t n)
{
	if (w->cap - w->len < n) {
		w->err = NSR_ERR_TOOBIG;
		return;
	}
	memcpy(w->p + w->len, p, n);
	w->len += n;
}

/* put_str - varint length then bytes. */
static void put_str(struct wr *w, const char *s, size_t max)
{
	size_t n = strnlen(s, max + 1);

	if (n > max) {
		w->err = NSR_ERR_INVAL;
		return;
	}
	put_var(w, n);
	put_bytes(w, s, n);
}

/* get_var - read an unsigned varint of at most 10 bytes. */
static uint64_t get_var(struct nsr_rd *r)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 70; shift += 7) {
		uint8_t b = nsr_rd_u8(r);

		if (r->err)
			return 0;
		if (shift == 63 && b > 1) {
			r->err = NSR_ERR_CORRUPT;
			return 0;
		}
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	r->err = NSR_ERR_CORRUPT;
	return 0;
}

/* get_u32v - a varint that must fit 32 bits. */
static uint32_t get_u32v(struct nsr_rd *r)
{
	uint64_t v = get_var(r);

	if (v > UINT32_MAX) {
		r->err = NSR_ERR_CORRUPT;
		return 0;
	}
	return (uint32_t)v;
}

/* get_time - inverse of put_time. */
static int64_t get_time(struct nsr_rd *r, int64_t base)
{
	uint64_t v = get_var(r);

	if (v == 0)
		return 0;
	return (int64_t)(unzz(v - 1) + (uint64_t)base);
}

/* get_str - a length-prefixed string into out (cap includes the NUL). */
static void get_str(struct nsr_rd *r, char *out, size_t cap)
{
	uint64_t n = get_var(r);
	const uint8_t *p;

	out[0] = '\0';
	if (r->err)
		return;
	if (n >= cap) {
		r->err = NSR_ERR_CORRUPT;
		return;
	}
	p = nsr_rd_take(r, (size_t)n);
	if (!p)
		return;
	if (memchr(p, '\0', (size_t)n)) {
		r->err = NSR_ERR_CORRUPT;
		return;
	}
	memcpy(out, p, (size_t)n);
	out[n] = '\0';
}

/* mmdb_key_time - 8-byte order-preserving key form of a signed time. */
void mmdb_key_time(uint8_t *p, int64_t t)
{
	nsr_put_u64(p, (uint64_t)t ^ (1ull << 63));
}

/* mmdb_key_time_get - inverse of mmdb_key_time. */
int64_t mmdb_key_time_get(const uint8_t *p)
{
	return (int64_t)(nsr_get_u64(p) ^ (1ull << 63));
}

/* ---- volume ---------------------------------------------------------- */

/* mmdb_vol_encode - append the volume record to buf. */
int mmdb_vol_encode(const struct mmdb_volume *v, struct nsr_buf *buf)
{
	uint8_t tmp[1024];
	struct wr w = { tmp, 0, sizeof(tmp), 0 };

	put_u8(&w, VOL_VERSION);
	put_str(&w, v->name, MMDB_VOLNAME_MAX);
	put_bytes(&w, v->volid, 16);
	put_str(&w, v->pool, MMDB_POOL_MAX);
	put_str(&w, v->type, MMDB_MEDIATYPE_MAX);
	put_str(&w, v->location, MMDB_LOCATION_MAX);
	put_str(&w, v->device, MMDB_DEVICE_MAX);
	put_var(&w, v->block_size);
	put_var(&w, v->flags);
	put_var(&w, v->written);
	put_var(&w, v->read);
	put_var(&w, v->capacity);
	put_time(&w, v->olabel, 0);
	put_time(&w, v->labeled, v->olabel);
	put_time(&w, v->volretent, v->olabel);
	put_var(&w, v->recycled);
	put_var(&w, v->mounts);
	put_var(&w, v->next_file);
	put_var(&w, v->next_record);
	if (w.err)
		return w.err;
	return nsr_buf_add(buf, tmp, w.len);
}

/* mmdb_vol_decode - parse a volume record. */
int mmdb_vol_decode(const void *p, size_t len, struct mmdb_volume *v)
{
	struct nsr_rd r;

	memset(v, 0, sizeof(*v));
	nsr_rd_init(&r, p, len);
	if (nsr_rd_u8(&r) != VOL_VERSION)
		return r.err ? r.err : NSR_ERR_CORRUPT;
	get_str(&r, v->name, sizeof(v->name));
	nsr_rd_bytes(&r, v->volid, 16);
	get_str(&r, v->pool, sizeof(v->pool));
	get_str(&r, v->type, sizeof(v->type));
	get_str(&r, v->location, sizeof(v->location));
	get_str(&r, v->device, sizeof(v->device));
	v->block_size = get_u32v(&r);
	v->flags = get_u32v(&r);
	v->written = get_var(&r);
	v->read = get_var(&r);
	v->capacity = get_var(&r);
	v->olabel = get_time(&r, 0);
	v->labeled = get_time(&r, v->olabel);
	v->volretent = get_time(&r, v->olabel);
	v->recycled = get_u32v(&r);
	v->mounts = get_u32v(&r);
	v->next_file = get_u32v(&r);
	v->next_record = get_var(&r);
	if (r.err)
		return r.err;
	if (r.left != 0 || v->name[0] == '\0' ||
	    (v->flags & ~(uint32_t)MMDB_VOL_ALLFLAGS))
		return NSR_ERR_CORRUPT;
	return NSR_OK;
}

/* ---- save set -------------------------------------------------------- */

/* mmdb_ssrec_encode - encode a stored save set record into out[0..cap). */
int mmdb_ssrec_encode(const struct ssrec *s, uint8_t *out, size_t cap,
		      size_t *len)
{
	struct wr w = { out, 0, cap, 0 };
	int64_t base = s->savetime;

	*len = 0;
	if (s->ndeps > MMDB_PSS_MAX || s->nclones > MMDB_CLONES_MAX ||
	    s->nfrags > MMDB_FRAGS_MAX)
		return NSR_ERR_TOOBIG;
	put_u8(&w, SS_VERSION);
	put_var(&w, s->flags);
	put_u8(&w, s->level);
	put_var(&w, s->client);
	put_var(&w, s->name);
	put_var(&w, s->pool);
	put_var(&w, s->group);
	put_var(&w, zz((uint64_t)s->savetime));
	put_time(&w, s->sscreate, base);
	put_time(&w, s->sscomp, base);
	put_time(&w, s->ssbrowse, base);
	put_time(&w, s->ssretent, base);
	put_var(&w, s->totalsize);
	put_var(&w, s->nfiles);
	put_var(&w, s->pssid);
	put_time(&w, s->anchor_time, base);
	put_var(&w, s->ndeps);
	for (uint32_t i = 0; i < s->ndeps; i++)
		put_var(&w, s->deps[i]);
	put_var(&w, s->nclones);
	for (uint32_t i = 0; i < s->nclones; i++) {
		const struct ss_clone *c = &s->clones[i];

		put_var(&w, zz((uint64_t)c->cloneid - (uint64_t)base));
		put_time(&w, c->clone_time, base);
		put_time(&w, c->clretent, base);
		put_var(&w, c->flags);
	}
	put_var(&w, s->nfrags);
	for (uint32_t i = 0; i < s->nfrags; i++) {
		const struct ss_frag *f = &s->frags[i];

		put_u8(&w, f->clone);
		put_var(&w, f->volno);
		put_var(&w, f->seq);
		put_var(&w, f->ss_offset);
		put_var(&w, f->size);
		put_var(&w, f->file);
		put_var(&w, f->record);
		put_var(&w, f->offset);
		put_var(&w, f->flags);
	}
	if (w.err)
		return w.err;
	*len = w.len;
	return NSR_OK;
}

/* mmdb_ssrec_decode - parse a stored save set record (ssid from its key). */
int mmdb_ssrec_decode(const uint8_t *p, size_t len, uint32_t ssid,
		      struct ssrec *s)
{
	struct nsr_rd r;
	int64_t base;

	memset(s, 0, offsetof(struct ssrec, clones));
	s->nclones = 0;
	s->nfrags = 0;
	s->ssid = ssid;
	nsr_rd_init(&r, p, len);
	if (nsr_rd_u8(&r) != SS_VERSION)
		return r.err ? r.err : NSR_ERR_CORRUPT;
	s->flags = get_u32v(&r);
	s->level = nsr_rd_u8(&r);
	s->client = get_u32v(&r);
	s->name = get_u32v(&r);
	s->pool = get_u32v(&r);
	s->group = get_u32v(&r);
	s->savetime = (int64_t)unzz(get_var(&r));
	base = s->savetime;
	s->sscreate = get_time(&r, base);
	s->sscomp = get_time(&r, base);
	s->ssbrowse = get_time(&r, base);
	s->ssretent = get_time(&r, base);
	s->totalsize = get_var(&r);
	s->nfiles = get_var(&r);
	s->pssid = get_u32v(&r);
	s->anchor_time = get_time(&r, base);
	s->ndeps = get_u32v(&r);
	if (r.err)
		return r.err;
	if (s->ndeps > MMDB_PSS_MAX || s->level > NSR_LEVEL_MAX ||
	    (s->flags & ~(uint32_t)MMDB_SS_ALLFLAGS))
		return NSR_ERR_CORRUPT;
	for (uint32_t i = 0; i < s->ndeps; i++)
		s->deps[i] = get_u32v(&r);
	s->nclones = get_u32v(&r);
	if (r.err)
		return r.err;
	if (s->nclones > MMDB_CLONES_MAX)
		return NSR_ERR_CORRUPT;
	for (uint32_t i = 0; i < s->nclones; i++) {
		struct ss_clone *c = &s->clones[i];

		c->cloneid = (uint32_t)(unzz(get_var(&r)) + (uint64_t)base);
		c->clone_time = get_time(&r, base);
		c->clretent = get_time(&r, base);
		c->flags = get_u32v(&r);
	}
	s->nfrags = get_u32v(&r);
	if (r.err)
		return r.err;
	if (s->nfrags > MMDB_FRAGS_MAX)
		return NSR_ERR_CORRUPT;
	for (uint32_t i = 0; i < s->nfrags; i++) {
		struct ss_frag *f = &s->frags[i];

		f->clone = nsr_rd_u8(&r);
		f->volno = get_u32v(&r);
		f->seq = get_u32v(&r);
		f->ss_offset = get_var(&r);
		f->size = get_var(&r);
		f->file = get_u32v(&r);
		f->record = get_var(&r);
		f->offset = get_var(&r);
		f->flags = get_u32v(&r);
		if (!r.err && (f->clone >= s->nclones || f->volno == 0))
			return NSR_ERR_CORRUPT;
	}
	if (r.err)
		return r.err;
	if (r.left != 0)
		return NSR_ERR_CORRUPT;
	return NSR_OK;
}
