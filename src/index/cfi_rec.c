/*
 * cfi_rec.c - encoders and hostile-input decoders of the client file
 * index formats (cfi_int.h): record file header, entry records and the
 * catalogue.  No I/O here.
 */
#include "nsr/compat.h"

#include "nsr/bytes.h"
#include "nsr/crc32c.h"
#include "nsr/err.h"

#include "cfi_int.h"

/* cfi_hdr_put - encode the record file header. */
void cfi_hdr_put(uint8_t *out, uint64_t ssid, int64_t savetime)
{
	nsr_put_u32(out, CFI_REC_MAGIC);
	nsr_put_u16(out + 4, CFI_REC_VERSION);
	nsr_put_u16(out + 6, 0);
	nsr_put_u64(out + 8, ssid);
	nsr_put_u64(out + 16, (uint64_t)savetime);
	nsr_put_u32(out + 24, nsr_crc32c(0, out, 24));
}

/* cfi_hdr_get - check and decode the record file header. */
int cfi_hdr_get(const uint8_t *in, uint64_t *ssid, int64_t *savetime,
		unsigned *version)
{
	if (nsr_get_u32(in) != CFI_REC_MAGIC)
		return NSR_ERR_CORRUPT;
	if (nsr_get_u32(in + 24) != nsr_crc32c(0, in, 24))
		return NSR_ERR_CHECKSUM;
	*version = nsr_get_u16(in + 4);
	if (*version < 1 || *version > CFI_REC_VERSION)
		return NSR_ERR_UNSUPPORTED;
	if (nsr_get_u16(in + 6) != 0)
		return NSR_ERR_CORRUPT;
	*ssid = nsr_get_u64(in + 8);
	*savetime = (int64_t)nsr_get_u64(in + 16);
	return NSR_OK;
}

/* rec_put - append one framed entry record whose payload begins with
 * the npre bytes of pre (none in a record file; a spill record's ssid
 * and save time). */
static int rec_put(struct nsr_buf *out, const uint8_t *pre, size_t npre,
		   const struct nsr_cfi_entry *e)
{
	uint8_t fixed[4 + CFI_FIXED_LEN], crc[4];
	uint8_t *f = fixed + 4;
	size_t plen = e->path ? strlen(e->path) : 0;
	uint32_t c;
	int rc;

	if (plen == 0 || plen > CFI_PATH_MAX || e->mode > NSR_CFI_MODE_MAX ||
	    e->mtime_nsec >= 1000000000u || e->type < 1 || e->type > 255)
		return NSR_ERR_INVAL;
	nsr_put_u32(fixed, (uint32_t)(npre + CFI_FIXED_LEN + plen));
	f[0] = (uint8_t)e->type;
	f[1] = f[2] = f[3] = 0;
	nsr_put_u32(f + 4, e->mode);
	nsr_put_u32(f + 8, e->uid);
	nsr_put_u32(f + 12, e->gid);
	nsr_put_u64(f + 16, e->size);
	nsr_put_u64(f + 24, (uint64_t)e->mtime);
	nsr_put_u32(f + 32, e->mtime_nsec);
	nsr_put_u64(f + 36, e->offset);
	nsr_put_u16(f + 44, (uint16_t)plen);
	c = npre ? nsr_crc32c(0, pre, npre) : 0;
	c = nsr_crc32c(c, f, CFI_FIXED_LEN);
	c = nsr_crc32c(c, e->path, plen);
	nsr_put_u32(crc, c);
	rc = nsr_buf_add(out, fixed, 4);
	if (rc == NSR_OK && npre > 0)
		rc = nsr_buf_add(out, pre, npre);
	if (rc == NSR_OK)
		rc = nsr_buf_add(out, f, CFI_FIXED_LEN);
	if (rc == NSR_OK)
		rc = nsr_buf_add(out, e->path, plen);
	if (rc == NSR_OK)
		rc = nsr_buf_add(out, crc, sizeof(crc));
	return rc;
}

/* cfi_rec_put - append one framed entry record. */
int cfi_rec_put(struct nsr_buf *out, const struct nsr_cfi_entry *e)
{
	return rec_put(out, NULL, 0, e);
}

/* cfi_spill_put - append one spill record: e found in save set ssid
 * saved at savetime. */
int cfi_spill_put(struct nsr_buf *out, uint64_t ssid, int64_t savetime,
		  const struct nsr_cfi_entry *e)
{
	uint8_t pre[CFI_SPILL_PRE];

	nsr_put_u64(pre, ssid);
	nsr_put_u64(pre + 8, (uint64_t)savetime);
	return rec_put(out, pre, sizeof(pre), e);
}

/* cfi_spill_get - decode the spill record at p[0..n). */
int cfi_spill_get(const uint8_t *p, size_t n, size_t *used, uint64_t *ssid,
		  int64_t *savetime, struct nsr_cfi_entry *e, char *pathbuf)
{
	size_t len;

	*used = 0;
	if (n < 4)
		return NSR_ERR_TRUNCATED;
	len = nsr_get_u32(p);
	if (len <= CFI_SPILL_PRE + CFI_FIXED_LEN ||
	    len > CFI_SPILL_PRE + CFI_FIXED_LEN + CFI_PATH_MAX)
		return NSR_ERR_CORRUPT;
	if (n - 4 < len + 4)
		return NSR_ERR_TRUNCATED;
	if (nsr_get_u32(p + 4 + len) != nsr_crc32c(0, p + 4, len))
		return NSR_ERR_CHECKSUM;
	*ssid = nsr_get_u64(p + 4);
	*savetime = (int64_t)nsr_get_u64(p + 12);
	if (cfi_rec_get(p + 4 + CFI_SPILL_PRE, len - CFI_SPILL_PRE, e,
			pathbuf) != NSR_OK)
		return NSR_ERR_CORRUPT;
	*used = len + 8;
	return NSR_OK;
}

/* cfi_rec_get - decode one entry payload. */
int cfi_rec_get(const uint8_t *p, size_t len, struct nsr_cfi_entry *e,
		char *pathbuf)
{
	size_t plen;

	memset(e, 0, sizeof(*e));
	if (len < CFI_FIXED_LEN)
		return NSR_ERR_CORRUPT;
	plen = nsr_get_u16(p + 44);
	if (plen == 0 || plen > CFI_PATH_MAX || len != CFI_FIXED_LEN + plen ||
	    p[1] != 0 || p[2] != 0 || p[3] != 0 || p[0] == 0)
		return NSR_ERR_CORRUPT;
	if (memchr(p + CFI_FIXED_LEN, '\0', plen) != NULL)
		return NSR_ERR_CORRUPT;
	e->type = p[0];
	e->mode = nsr_get_u32(p + 4);
	e->uid = nsr_get_u32(p + 8);
	e->gid = nsr_get_u32(p + 12);
	e->size = nsr_get_u64(p + 16);
	e->mtime = (int64_t)nsr_get_u64(p + 24);
	e->mtime_nsec = nsr_get_u32(p + 32);
	e->offset = nsr_get_u64(p + 36);
	if (e->mode > NSR_CFI_MODE_MAX || e->mtime_nsec >= 1000000000u)
		return NSR_ERR_CORRUPT;
	memcpy(pathbuf, p + CFI_FIXED_LEN, plen);
	pathbuf[plen] = '\0';
	e->path = pathbuf;
	return NSR_OK;
}

/* nsr_cfi_decode_spill - decode a whole spill file image. */
int nsr_cfi_decode_spill(const void *p, size_t n, nsr_cfi_visit_fn visit,
			 void *ctx)
{
	struct nsr_cfi_saveset ss = {.name = ""};
	struct nsr_cfi_entry e;
	char *path = malloc(CFI_PATH_MAX + 1);
	size_t at = 0, used;
	int rc = path ? NSR_OK : NSR_ERR_NOMEM;

	while (rc == NSR_OK && at < n) {
		rc = cfi_spill_get((const uint8_t *)p + at, n - at, &used,
				   &ss.ssid, &ss.savetime, &e, path);
		if (rc == NSR_OK) {
			at += used;
			rc = visit(ctx, &ss, &e);
		}
	}
	free(path);
	return rc;
}

/* cfi_name_ok - a name a directory list may hold. */
int cfi_name_ok(const char *name, size_t n)
{
	if (n == 0 || n > CFI_LIST_NAME_MAX || memchr(name, '/', n) != NULL)
		return 0;
	return !(name[0] == '.' && (n == 1 || (n == 2 && name[1] == '.')));
}

/* cfi_list_put - append one framed list record (as many names as fit). */
int cfi_list_put(struct nsr_buf *out, const char *dir, uint32_t total,
		 uint32_t first, const char *const *names, size_t n,
		 size_t *taken)
{
	size_t plen = strlen(dir), at, len = CFI_LIST_FIXED + plen, k = 0;
	uint8_t *p, *p0;
	int rc;

	*taken = 0;
	if (plen == 0 || plen > CFI_PATH_MAX)
		return NSR_ERR_INVAL;
	/* bounded as if nothing were shared: the record stays within
	 * CFI_REC_MAX, and so do the decoded names (struct cfi_list_buf) */
	while (k < n && len + 2 + strlen(names[k]) <= CFI_REC_MAX)
		len += 2 + strlen(names[k++]);
	rc = nsr_buf_grow(out, len + 8);
	if (rc)
		return rc;
	at = out->len;
	p0 = p = (uint8_t *)out->data + at + 4;
	memset(p, 0, 4);
	p[1] = CFI_LIST_FRONT;
	nsr_put_u32(p + 4, total);
	nsr_put_u32(p + 8, first);
	nsr_put_u16(p + 12, (uint16_t)plen);
	memcpy(p + CFI_LIST_FIXED, dir, plen);
	p += CFI_LIST_FIXED + plen;
	for (size_t i = 0; i < k; i++) {
		size_t nl = strlen(names[i]), pre = 0;

		while (i > 0 && pre < nl && names[i - 1][pre] == names[i][pre])
			pre++;
		*p++ = (uint8_t)pre;
		*p++ = (uint8_t)(nl - pre);
		memcpy(p, names[i] + pre, nl - pre);
		p += nl - pre;
	}
	len = (size_t)(p - p0);
	nsr_put_u32(p0 - 4, (uint32_t)len);
	nsr_put_u32(p, nsr_crc32c(0, p0, len));
	nsr_buf_setlen(out, at + len + 8);
	*taken = k;
	return NSR_OK;
}

/* cfi_list_get - decode and check one list payload. */
int cfi_list_get(const uint8_t *p, size_t len, struct cfi_list *l,
		 struct cfi_list_buf *b)
{
	size_t plen, at, used = 0;
	int front;

	memset(l, 0, sizeof(*l));
	if (len < CFI_LIST_FIXED || len > CFI_REC_MAX || p[0] != 0 ||
	    (p[1] != 0 && p[1] != CFI_LIST_FRONT) || p[2] != 0 || p[3] != 0)
		return NSR_ERR_CORRUPT;
	front = p[1] == CFI_LIST_FRONT;
	l->total = nsr_get_u32(p + 4);
	l->first = nsr_get_u32(p + 8);
	plen = nsr_get_u16(p + 12);
	if (plen == 0 || CFI_LIST_FIXED + plen > len ||
	    memchr(p + CFI_LIST_FIXED, '\0', plen) != NULL)
		return NSR_ERR_CORRUPT;
	memcpy(b->dir, p + CFI_LIST_FIXED, plen);
	b->dir[plen] = '\0';
	l->dir = b->dir;
	l->names = b->ptr;
	for (at = CFI_LIST_FIXED + plen; at < len;) {
		size_t pre = 0, nl;
		char *name = b->names + used;

		if (front) {
			pre = p[at++];
			if (at >= len || pre > (l->n ? strlen(b->ptr[l->n - 1])
						     : 0))
				return NSR_ERR_CORRUPT;
		}
		nl = p[at++];
		if (nl > len - at || pre + nl > CFI_LIST_NAME_MAX ||
		    used + pre + nl + 1 > sizeof(b->names) ||
		    l->n >= NSR_ARRAY_SIZE(b->ptr) ||
		    memchr(p + at, '\0', nl) != NULL)
			return NSR_ERR_CORRUPT;
		if (pre > 0)
			memcpy(name, b->ptr[l->n - 1], pre);
		memcpy(name + pre, p + at, nl);
		name[pre + nl] = '\0';
		if (!cfi_name_ok(name, pre + nl))
			return NSR_ERR_CORRUPT;
		if (l->n > 0 && strcmp(l->names[l->n - 1], name) >= 0)
			return NSR_ERR_CORRUPT; /* sorted and unique */
		b->ptr[l->n++] = name;
		used += pre + nl + 1;
		at += nl;
	}
	/* only an empty list has no names; a piece stays within its list */
	if ((l->n == 0 && l->total != 0) ||
	    (uint64_t)l->first + l->n > l->total)
		return NSR_ERR_CORRUPT;
	return NSR_OK;
}

/* put_ss - one save set of the catalogue (version 2), with its refs
 * when refs is set. */
static int put_ss(struct nsr_buf *out, const struct cfi_ss *s, int refs)
{
	size_t nl = strlen(s->name);
	uint32_t nr = refs ? s->nrefs : 0;
	uint8_t t[34];
	int rc;

	if (nl > CFI_NAME_MAX)
		return NSR_ERR_TOOBIG;
	nsr_put_u64(t, s->ssid);
	nsr_put_u64(t + 8, (uint64_t)s->savetime);
	nsr_put_u64(t + 16, s->entries);
	nsr_put_u64(t + 24, s->length);
	nsr_put_u16(t + 32, (uint16_t)nl);
	rc = nsr_buf_add(out, t, 34);
	if (rc == NSR_OK)
		rc = nsr_buf_add(out, s->name, nl);
	nsr_put_u32(t, nr);
	if (rc == NSR_OK)
		rc = nsr_buf_add(out, t, 4);
	for (uint32_t i = 0; i < nr && rc == NSR_OK; i++) {
		nsr_put_u64(t, s->refs[i]);
		rc = nsr_buf_add(out, t, 8);
	}
	return rc;
}

/* cfi_cat_put - encode the catalogue (version 2). */
int cfi_cat_put(struct nsr_buf *out, const struct cfi_ss *ss, size_t n,
		const struct cfi_ss *kept, size_t nk)
{
	uint8_t t[12];
	int rc;

	nsr_put_u32(t, CFI_CAT_MAGIC);
	nsr_put_u16(t + 4, CFI_VERSION);
	nsr_put_u16(t + 6, 0);
	nsr_put_u32(t + 8, (uint32_t)n);
	rc = nsr_buf_add(out, t, 12);
	for (size_t i = 0; i < n && rc == NSR_OK; i++)
		rc = put_ss(out, &ss[i], 1);
	nsr_put_u32(t, (uint32_t)nk);
	if (rc == NSR_OK)
		rc = nsr_buf_add(out, t, 4);
	for (size_t i = 0; i < nk && rc == NSR_OK; i++)
		rc = put_ss(out, &kept[i], 0);
	if (rc == NSR_OK) {
		nsr_put_u32(t, nsr_crc32c(0, out->data, out->len));
		rc = nsr_buf_add(out, t, 4);
	}
	return rc;
}

/* cfi_ss_free - free an array of save sets. */
void cfi_ss_free(struct cfi_ss *ss, size_t n)
{
	for (size_t i = 0; ss != NULL && i < n; i++) {
		free(ss[i].name);
		free(ss[i].refs);
		cfi_tab_free(ss[i].tab);
	}
	free(ss);
}

/* get_ss - decode cnt save sets of a catalogue of version v into a
 * malloc'ed array; refs (version 2) only when refs is set, else their
 * count must be 0. */
static int get_ss(struct nsr_rd *r, unsigned v, uint32_t cnt, int refs,
		  struct cfi_ss **out)
{
	struct cfi_ss *ss;
	int rc = NSR_ERR_CORRUPT;
	uint32_t i;

	/* each save set takes at least 34 bytes: bounds the allocation */
	*out = NULL;
	if (cnt > CFI_MAX_SAVESETS || (size_t)cnt > r->left / 34)
		return NSR_ERR_CORRUPT;
	ss = calloc(cnt ? cnt : 1, sizeof(*ss));
	if (ss == NULL)
		return NSR_ERR_NOMEM;
	for (i = 0; i < cnt; i++) {
		const uint8_t *name;
		uint16_t nl;
		uint32_t nr = 0;

		ss[i].ssid = nsr_rd_u64(r);
		ss[i].savetime = (int64_t)nsr_rd_u64(r);
		ss[i].entries = nsr_rd_u64(r);
		ss[i].length = nsr_rd_u64(r);
		nl = nsr_rd_u16(r);
		name = nsr_rd_take(r, nl);
		if (name == NULL || nl > CFI_NAME_MAX ||
		    memchr(name, '\0', nl) != NULL ||
		    ss[i].length < CFI_HDR_LEN)
			goto fail;
		ss[i].name = strndup((const char *)name, nl);
		if (ss[i].name == NULL) {
			rc = NSR_ERR_NOMEM;
			goto fail;
		}
		if (v >= 2)
			nr = nsr_rd_u32(r);
		if (nr > r->left / 8 || (nr > 0 && !refs))
			goto fail;
		ss[i].refs = malloc((nr ? nr : 1) * sizeof(uint64_t));
		if (ss[i].refs == NULL) {
			rc = NSR_ERR_NOMEM;
			goto fail;
		}
		for (ss[i].nrefs = 0; ss[i].nrefs < nr; ss[i].nrefs++)
			ss[i].refs[ss[i].nrefs] = nsr_rd_u64(r);
	}
	*out = ss;
	return NSR_OK;
fail:
	cfi_ss_free(ss, cnt);
	return rc;
}

/* cfi_cat_get - decode and check a catalogue (version 1 or 2). */
int cfi_cat_get(const uint8_t *p, size_t n, struct cfi_ss **out,
		size_t *count, struct cfi_ss **kept, size_t *nkept)
{
	struct nsr_rd r;
	struct cfi_ss *ss = NULL, *k = NULL;
	uint32_t cnt, kc = 0;
	unsigned v;
	int rc;

	*out = NULL;
	*count = 0;
	if (kept != NULL) {
		*kept = NULL;
		*nkept = 0;
	}
	if (n < 16)
		return NSR_ERR_CORRUPT;
	if (nsr_get_u32(p) != CFI_CAT_MAGIC)
		return NSR_ERR_CORRUPT;
	if (nsr_get_u32(p + n - 4) != nsr_crc32c(0, p, n - 4))
		return NSR_ERR_CHECKSUM;
	v = nsr_get_u16(p + 4);
	if (v < 1 || v > CFI_VERSION)
		return NSR_ERR_UNSUPPORTED;
	cnt = nsr_get_u32(p + 8);
	if (nsr_get_u16(p + 6) != 0)
		return NSR_ERR_CORRUPT;
	nsr_rd_init(&r, p + 12, n - 16);
	rc = get_ss(&r, v, cnt, 1, &ss);
	if (rc)
		return rc;
	if (v >= 2) {
		kc = nsr_rd_u32(&r);
		rc = r.err ? NSR_ERR_CORRUPT : get_ss(&r, v, kc, 0, &k);
	}
	if (rc == NSR_OK && (r.err || r.left != 0))
		rc = NSR_ERR_CORRUPT;
	if (rc) {
		cfi_ss_free(ss, cnt);
		cfi_ss_free(k, kc);
		return rc;
	}
	*out = ss;
	*count = cnt;
	if (kept != NULL) {
		*kept = k;
		*nkept = kc;
	} else {
		cfi_ss_free(k, kc);
	}
	return NSR_OK;
}
