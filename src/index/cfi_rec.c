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
	nsr_put_u16(out + 4, CFI_VERSION);
	nsr_put_u16(out + 6, 0);
	nsr_put_u64(out + 8, ssid);
	nsr_put_u64(out + 16, (uint64_t)savetime);
	nsr_put_u32(out + 24, nsr_crc32c(0, out, 24));
}

/* cfi_hdr_get - check and decode the record file header. */
int cfi_hdr_get(const uint8_t *in, uint64_t *ssid, int64_t *savetime)
{
	if (nsr_get_u32(in) != CFI_REC_MAGIC)
		return NSR_ERR_CORRUPT;
	if (nsr_get_u32(in + 24) != nsr_crc32c(0, in, 24))
		return NSR_ERR_CHECKSUM;
	if (nsr_get_u16(in + 4) != CFI_VERSION)
		return NSR_ERR_UNSUPPORTED;
	if (nsr_get_u16(in + 6) != 0)
		return NSR_ERR_CORRUPT;
	*ssid = nsr_get_u64(in + 8);
	*savetime = (int64_t)nsr_get_u64(in + 16);
	return NSR_OK;
}

/* cfi_rec_put - append one framed entry record. */
int cfi_rec_put(struct nsr_buf *out, const struct nsr_cfi_entry *e)
{
	uint8_t fixed[4 + CFI_FIXED_LEN], crc[4];
	uint8_t *f = fixed + 4;
	size_t plen = e->path ? strlen(e->path) : 0;
	uint32_t c;
	int rc;

	if (plen == 0 || plen > CFI_PATH_MAX || e->mode > 07777 ||
	    e->mtime_nsec >= 1000000000u || e->type < 1 || e->type > 255)
		return NSR_ERR_INVAL;
	nsr_put_u32(fixed, (uint32_t)(CFI_FIXED_LEN + plen));
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
	c = nsr_crc32c(0, f, CFI_FIXED_LEN);
	c = nsr_crc32c(c, e->path, plen);
	nsr_put_u32(crc, c);
	rc = nsr_buf_add(out, fixed, sizeof(fixed));
	if (rc == NSR_OK)
		rc = nsr_buf_add(out, e->path, plen);
	if (rc == NSR_OK)
		rc = nsr_buf_add(out, crc, sizeof(crc));
	return rc;
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
	if (e->mode > 07777 || e->mtime_nsec >= 1000000000u)
		return NSR_ERR_CORRUPT;
	memcpy(pathbuf, p + CFI_FIXED_LEN, plen);
	pathbuf[plen] = '\0';
	e->path = pathbuf;
	return NSR_OK;
}

/* cfi_cat_put - encode the catalogue. */
int cfi_cat_put(struct nsr_buf *out, const struct cfi_ss *ss, size_t n)
{
	uint8_t t[34];
	int rc;

	nsr_put_u32(t, CFI_CAT_MAGIC);
	nsr_put_u16(t + 4, CFI_VERSION);
	nsr_put_u16(t + 6, 0);
	nsr_put_u32(t + 8, (uint32_t)n);
	rc = nsr_buf_add(out, t, 12);
	for (size_t i = 0; i < n && rc == NSR_OK; i++) {
		size_t nl = strlen(ss[i].name);

		if (nl > CFI_NAME_MAX)
			return NSR_ERR_TOOBIG;
		nsr_put_u64(t, ss[i].ssid);
		nsr_put_u64(t + 8, (uint64_t)ss[i].savetime);
		nsr_put_u64(t + 16, ss[i].entries);
		nsr_put_u64(t + 24, ss[i].length);
		nsr_put_u16(t + 32, (uint16_t)nl);
		rc = nsr_buf_add(out, t, 34);
		if (rc == NSR_OK)
			rc = nsr_buf_add(out, ss[i].name, nl);
	}
	if (rc == NSR_OK) {
		nsr_put_u32(t, nsr_crc32c(0, out->data, out->len));
		rc = nsr_buf_add(out, t, 4);
	}
	return rc;
}

/* cfi_ss_free - free an array of save sets. */
void cfi_ss_free(struct cfi_ss *ss, size_t n)
{
	for (size_t i = 0; ss != NULL && i < n; i++)
		free(ss[i].name);
	free(ss);
}

/* cfi_cat_get - decode and check a catalogue. */
int cfi_cat_get(const uint8_t *p, size_t n, struct cfi_ss **out,
		size_t *count)
{
	struct nsr_rd r;
	struct cfi_ss *ss = NULL;
	uint32_t cnt;
	size_t i = 0;
	int rc = NSR_ERR_CORRUPT;

	*out = NULL;
	*count = 0;
	if (n < 16)
		return NSR_ERR_CORRUPT;
	if (nsr_get_u32(p) != CFI_CAT_MAGIC)
		return NSR_ERR_CORRUPT;
	if (nsr_get_u32(p + n - 4) != nsr_crc32c(0, p, n - 4))
		return NSR_ERR_CHECKSUM;
	if (nsr_get_u16(p + 4) != CFI_VERSION)
		return NSR_ERR_UNSUPPORTED;
	cnt = nsr_get_u32(p + 8);
	/* each save set takes at least 34 bytes: bounds the allocation */
	if (nsr_get_u16(p + 6) != 0 || cnt > CFI_MAX_SAVESETS ||
	    (size_t)cnt > (n - 16) / 34)
		return NSR_ERR_CORRUPT;
	ss = calloc(cnt ? cnt : 1, sizeof(*ss));
	if (ss == NULL)
		return NSR_ERR_NOMEM;
	nsr_rd_init(&r, p + 12, n - 16);
	for (i = 0; i < cnt; i++) {
		const uint8_t *name;
		uint16_t nl;

		ss[i].ssid = nsr_rd_u64(&r);
		ss[i].savetime = (int64_t)nsr_rd_u64(&r);
		ss[i].entries = nsr_rd_u64(&r);
		ss[i].length = nsr_rd_u64(&r);
		nl = nsr_rd_u16(&r);
		name = nsr_rd_take(&r, nl);
		if (name == NULL || nl > CFI_NAME_MAX ||
		    memchr(name, '\0', nl) != NULL ||
		    ss[i].length < CFI_HDR_LEN)
			goto fail;
		ss[i].name = strndup((const char *)name, nl);
		if (ss[i].name == NULL) {
			rc = NSR_ERR_NOMEM;
			goto fail;
		}
	}
	if (r.left != 0)
		goto fail;
	*out = ss;
	*count = cnt;
	return NSR_OK;
fail:
	cfi_ss_free(ss, cnt);
	return rc;
}
