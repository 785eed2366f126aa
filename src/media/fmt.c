/*
 * fmt.c - encode and decode the on-volume records: the label record, block
 * headers, chunk headers and the begin/end chunk payloads (nsr_volume(5)).
 * Decoders treat their input as hostile: every length is checked against
 * what is left and every string against its maximum before it is copied.
 */
#include "nsr/compat.h"

#include "nsr/bytes.h"
#include "nsr/crc32c.h"
#include "nsr/err.h"
#include "nsr/media_fmt.h"


/* Label record offsets (see nsr_volume(5)). */
#define LAB_MAGIC 0
#define LAB_VERSION 8
#define LAB_SIZE 12
#define LAB_VOLID 16
#define LAB_BSIZE 32
#define LAB_FLAGS 36
#define LAB_CREATED 40
#define LAB_NAME 48
#define LAB_POOL 112
#define LAB_MEDIA 176
#define LAB_CRC (NSR_VOL_LABEL_SIZE - 4)

/* put_field - copy a string into a NUL-padded fixed field. */
static void put_field(uint8_t *out, size_t size, const char *s)
{
	size_t n = strnlen(s, size - 1);

	memset(out, 0, size);
	memcpy(out, s, n);
}

/* get_field - a fixed field to a C string; NSR_ERR_CORRUPT if it has no
 * NUL inside the field. */
static int get_field(const uint8_t *in, size_t size, char *s)
{
	const uint8_t *nul = memchr(in, 0, size);

	if (nul == NULL)
		return NSR_ERR_CORRUPT;
	memcpy(s, in, (size_t)(nul - in) + 1);
	return NSR_OK;
}

/* media_fmt_label_encode - the fixed-size label record. */
void media_fmt_label_encode(const struct nsr_vol_label *lab, uint8_t *out)
{
	memset(out, 0, NSR_VOL_LABEL_SIZE);
	memcpy(out + LAB_MAGIC, MEDIA_FMT_LABEL_MAGIC, 8);
	nsr_put_u32(out + LAB_VERSION, lab->version >= MEDIA_FMT_VERSION_MIN &&
					       lab->version <= MEDIA_FMT_VERSION
				       ? lab->version
				       : MEDIA_FMT_VERSION);
	nsr_put_u32(out + LAB_SIZE, NSR_VOL_LABEL_SIZE);
	memcpy(out + LAB_VOLID, lab->volid, 16);
	nsr_put_u32(out + LAB_BSIZE, lab->block_size);
	nsr_put_u32(out + LAB_FLAGS, 0);
	nsr_put_u64(out + LAB_CREATED, (uint64_t)lab->created);
	put_field(out + LAB_NAME, NSR_VOL_NAME_MAX + 1, lab->name);
	put_field(out + LAB_POOL, NSR_VOL_POOL_MAX + 1, lab->pool);
	put_field(out + LAB_MEDIA, NSR_VOL_MEDIA_MAX + 1, lab->media_type);
	nsr_put_u32(out + LAB_CRC, nsr_crc32c(0, out, LAB_CRC));
}

/* media_fmt_label_decode - check and decode a label record. */
int media_fmt_label_decode(const uint8_t *p, size_t len,
			   struct nsr_vol_label *out)
{
	uint32_t bs, ver;
	int rc = NSR_OK;

	memset(out, 0, sizeof(*out));
	if (len < 16)
		return NSR_ERR_TRUNCATED;
	if (memcmp(p + LAB_MAGIC, MEDIA_FMT_LABEL_MAGIC, 8) != 0)
		return NSR_ERR_NOTFOUND;
	ver = nsr_get_u32(p + LAB_VERSION);
	if (ver < MEDIA_FMT_VERSION_MIN || ver > MEDIA_FMT_VERSION)
		return NSR_ERR_UNSUPPORTED;
	if (nsr_get_u32(p + LAB_SIZE) != NSR_VOL_LABEL_SIZE)
		return NSR_ERR_CORRUPT;
	if (len < NSR_VOL_LABEL_SIZE)
		return NSR_ERR_TRUNCATED;
	if (nsr_get_u32(p + LAB_CRC) != nsr_crc32c(0, p, LAB_CRC))
		return NSR_ERR_CHECKSUM;

	out->version = ver;
	memcpy(out->volid, p + LAB_VOLID, 16);
	bs = nsr_get_u32(p + LAB_BSIZE);
	if (bs < NSR_VOL_BLOCK_MIN || bs > NSR_VOL_BLOCK_MAX ||
	    bs % NSR_VOL_BLOCK_ALIGN != 0)
		rc = NSR_ERR_CORRUPT;
	out->block_size = bs;
	out->created = (int64_t)nsr_get_u64(p + LAB_CREATED);
	if (rc == NSR_OK)
		rc = get_field(p + LAB_NAME, NSR_VOL_NAME_MAX + 1, out->name);
	if (rc == NSR_OK)
		rc = get_field(p + LAB_POOL, NSR_VOL_POOL_MAX + 1, out->pool);
	if (rc == NSR_OK)
		rc = get_field(p + LAB_MEDIA, NSR_VOL_MEDIA_MAX + 1,
			       out->media_type);
	if (rc == NSR_OK && out->name[0] == '\0')
		rc = NSR_ERR_CORRUPT;
	if (rc != NSR_OK)
		memset(out, 0, sizeof(*out));
	return rc;
}

/* media_fmt_block_encode - the block header with its checksum. */
void media_fmt_block_encode(const struct media_fmt_block *b, uint8_t *out)
{
	uint16_t ver = b->version ? b->version : MEDIA_FMT_VERSION;

	memset(out, 0, MEDIA_FMT_BLOCK_HDR);
	nsr_put_u32(out, MEDIA_FMT_BLOCK_MAGIC);
	nsr_put_u16(out + 4, ver);
	nsr_put_u16(out + 6, MEDIA_FMT_BLOCK_HDR);
	memcpy(out + 8, b->volid, 16);
	nsr_put_u32(out + 24, b->file);
	nsr_put_u32(out + 28, b->block_size);
	nsr_put_u64(out + 32, b->seq);
	nsr_put_u32(out + 40, b->used);
	if (ver >= 2) {
		nsr_put_u32(out + 44, b->flags);
		nsr_put_u32(out + 48, b->ssid);
	}
	nsr_put_u32(out + 60, nsr_crc32c(0, out, 60));
}

/* media_fmt_block_head_decode - check a block header; reclen is the
 * length of the record it heads. */
int media_fmt_block_head_decode(const uint8_t *p, size_t reclen,
				struct media_fmt_block *out)
{
	uint16_t ver;

	memset(out, 0, sizeof(*out));
	if (reclen < MEDIA_FMT_BLOCK_HDR)
		return NSR_ERR_TRUNCATED;
	ver = nsr_get_u16(p + 4);
	if (nsr_get_u32(p) != MEDIA_FMT_BLOCK_MAGIC ||
	    ver < MEDIA_FMT_VERSION_MIN || ver > MEDIA_FMT_VERSION ||
	    nsr_get_u16(p + 6) != MEDIA_FMT_BLOCK_HDR)
		return NSR_ERR_CORRUPT;
	if (nsr_get_u32(p + 60) != nsr_crc32c(0, p, 60))
		return NSR_ERR_CHECKSUM;
	out->version = ver;
	memcpy(out->volid, p + 8, 16);
	out->file = nsr_get_u32(p + 24);
	out->block_size = nsr_get_u32(p + 28);
	out->seq = nsr_get_u64(p + 32);
	out->used = nsr_get_u32(p + 40);
	if (ver >= 2) {
		/* Version 1 left these zero but never read them. */
		out->flags = nsr_get_u32(p + 44);
		out->ssid = nsr_get_u32(p + 48);
		if ((out->flags & ~MEDIA_FMT_BLK_ONE_SS) != 0 ||
		    ((out->flags & MEDIA_FMT_BLK_ONE_SS) != 0) !=
			    (out->ssid != 0))
			return NSR_ERR_CORRUPT;
	}
	if (out->block_size != reclen)
		return reclen < out->block_size ? NSR_ERR_TRUNCATED
						: NSR_ERR_CORRUPT;
	if (out->used > reclen - MEDIA_FMT_BLOCK_HDR)
		return NSR_ERR_CORRUPT;
	return NSR_OK;
}

/* media_fmt_block_decode - check a whole block's header. */
int media_fmt_block_decode(const uint8_t *p, size_t len,
			   struct media_fmt_block *out)
{
	return media_fmt_block_head_decode(p, len, out);
}

/* chunk_crc - checksum of a chunk: header bytes 0..19, then payload. */
static uint32_t chunk_crc(const uint8_t *hdr, const uint8_t *payload,
			  uint32_t len)
{
	return nsr_crc32c(nsr_crc32c(0, hdr, 20), payload, len);
}

/* media_fmt_chunk_encode - header for the payload that follows it. */
void media_fmt_chunk_encode(const struct media_fmt_chunk *c, uint8_t *out)
{
	nsr_put_u32(out, c->ssid);
	nsr_put_u32(out + 4, c->seq);
	out[8] = c->kind;
	out[9] = out[10] = out[11] = 0;
	nsr_put_u32(out + 12, c->len);
	nsr_put_u32(out + 16, 0);
	nsr_put_u32(out + 20, chunk_crc(out, out + MEDIA_FMT_CHUNK_HDR,
					c->len));
}

/* media_fmt_chunk_put - header, payload copied and checksummed at once. */
void media_fmt_chunk_put(const struct media_fmt_chunk *c, uint8_t *out,
			 const void *payload)
{
	uint32_t crc;

	nsr_put_u32(out, c->ssid);
	nsr_put_u32(out + 4, c->seq);
	out[8] = c->kind;
	out[9] = out[10] = out[11] = 0;
	nsr_put_u32(out + 12, c->len);
	nsr_put_u32(out + 16, 0);
	crc = nsr_crc32c(0, out, 20);
	crc = nsr_crc32c_copy(crc, out + MEDIA_FMT_CHUNK_HDR, payload,
				c->len);
	nsr_put_u32(out + 20, crc);
}

/* media_fmt_chunk_decode - one chunk at p with left bytes in the block. */
int media_fmt_chunk_decode(const uint8_t *p, size_t left,
			   struct media_fmt_chunk *c, const uint8_t **payload)
{
	memset(c, 0, sizeof(*c));
	*payload = NULL;
	if (left < MEDIA_FMT_CHUNK_HDR)
		return NSR_ERR_TRUNCATED;
	c->ssid = nsr_get_u32(p);
	c->seq = nsr_get_u32(p + 4);
	c->kind = p[8];
	c->len = nsr_get_u32(p + 12);
	if (c->len > left - MEDIA_FMT_CHUNK_HDR)
		return NSR_ERR_TRUNCATED;
	if (nsr_get_u32(p + 20) != chunk_crc(p, p + MEDIA_FMT_CHUNK_HDR,
					     c->len))
		return NSR_ERR_CHECKSUM;
	if (c->kind < MEDIA_FMT_BEGIN || c->kind > MEDIA_FMT_END)
		return NSR_ERR_CORRUPT;
	*payload = p + MEDIA_FMT_CHUNK_HDR;
	return NSR_OK;
}

/* put_str - a u16 length and the bytes; returns the bytes written. */
static size_t put_str(uint8_t *out, const char *s, size_t max)
{
	size_t n = strnlen(s, max);

	nsr_put_u16(out, (uint16_t)n);
	memcpy(out + 2, s, n);
	return n + 2;
}

/* get_str - read a u16-counted string into s (max bytes + NUL). */
static void get_str(struct nsr_rd *r, char *s, size_t max)
{
	uint16_t n;
	const uint8_t *p;

	/* nsr_rd_take overwrites an earlier error; keep the first one. */
	s[0] = '\0';
	if (r->err != 0)
		return;
	n = nsr_rd_u16(r);
	if (r->err == 0 && n > max)
		r->err = NSR_ERR_CORRUPT;
	if (r->err != 0)
		return;
	p = nsr_rd_take(r, n);
	if (p == NULL)
		return;
	if (memchr(p, 0, n) != NULL) {
		r->err = NSR_ERR_CORRUPT;
		return;
	}
	memcpy(s, p, n);
	s[n] = '\0';
}

/* media_fmt_sshdr_encode - the begin chunk payload. */
size_t media_fmt_sshdr_encode(const struct nsr_vol_sshdr *h,
			      const struct nsr_vol_span *sp, uint8_t *out)
{
	size_t n = 56;

	nsr_put_u32(out, h->ssid);
	memcpy(out + 4, h->longid, 16);
	nsr_put_u64(out + 20, (uint64_t)h->savetime);
	nsr_put_u64(out + 28, (uint64_t)h->browse_time);
	nsr_put_u64(out + 36, (uint64_t)h->retention_time);
	nsr_put_u32(out + 44, sp->frag_seq);
	nsr_put_u64(out + 48, sp->ss_offset);
	n += put_str(out + n, h->client, NSR_VOL_CLIENT_MAX);
	n += put_str(out + n, h->name, NSR_VOL_SSNAME_MAX);
	n += put_str(out + n, h->level, NSR_VOL_LEVEL_MAX);
	n += put_str(out + n, h->pool, NSR_VOL_POOL_MAX);
	return n;
}

/* media_fmt_sshdr_decode - the begin chunk payload. */
int media_fmt_sshdr_decode(const uint8_t *p, size_t len,
			   struct nsr_vol_sshdr *h, struct nsr_vol_span *sp)
{
	struct nsr_rd r;

	memset(h, 0, sizeof(*h));
	memset(sp, 0, sizeof(*sp));
	nsr_rd_init(&r, p, len);
	h->ssid = nsr_rd_u32(&r);
	nsr_rd_bytes(&r, h->longid, 16);
	h->savetime = (int64_t)nsr_rd_u64(&r);
	h->browse_time = (int64_t)nsr_rd_u64(&r);
	h->retention_time = (int64_t)nsr_rd_u64(&r);
	sp->frag_seq = nsr_rd_u32(&r);
	sp->ss_offset = nsr_rd_u64(&r);
	get_str(&r, h->client, NSR_VOL_CLIENT_MAX);
	get_str(&r, h->name, NSR_VOL_SSNAME_MAX);
	get_str(&r, h->level, NSR_VOL_LEVEL_MAX);
	get_str(&r, h->pool, NSR_VOL_POOL_MAX);
	if (nsr_rd_error(&r) == NSR_OK && r.left != 0)
		return NSR_ERR_CORRUPT;
	return nsr_rd_error(&r);
}

/* media_fmt_sstail_encode - the end chunk payload. */
void media_fmt_sstail_encode(const struct nsr_vol_sstail *t, uint8_t *out)
{
	nsr_put_u64(out, t->bytes);
	nsr_put_u64(out + 8, t->files);
	nsr_put_u32(out + 16, t->status);
}

/* media_fmt_sstail_decode - the end chunk payload. */
int media_fmt_sstail_decode(const uint8_t *p, size_t len,
			    struct nsr_vol_sstail *t)
{
	memset(t, 0, sizeof(*t));
	if (len < MEDIA_FMT_SSTAIL_LEN)
		return NSR_ERR_TRUNCATED;
	if (len > MEDIA_FMT_SSTAIL_LEN)
		return NSR_ERR_CORRUPT;
	t->bytes = nsr_get_u64(p);
	t->files = nsr_get_u64(p + 8);
	t->status = nsr_get_u32(p + 16);
	if (t->status > NSR_VOL_SS_SUSPECT)
		return NSR_ERR_CORRUPT;
	return NSR_OK;
}
