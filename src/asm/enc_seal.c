/*
 * enc_seal.c - SEALED records on the encoder side (nsr_savestream(5)):
 * one record holds up to NSR_ASM_MAX_DATA plain bytes, deflated (when
 * that makes them smaller) and then encrypted with AES-256-GCM:
 *
 *	offset size meaning
 *	0      1    flags: NSR_ASM_SEAL_DEFLATE
 *	1      1    cipher: 0 none, 1 AES-256-GCM
 *	2      2    reserved, 0
 *	4      4    plain length (1 to NSR_ASM_MAX_DATA)
 *	8      8    key id (zero without a cipher)
 *	16     12   nonce (random per record; zero without a cipher)
 *	28     n    body: the (deflated) data, encrypted
 *	28+n   16   GCM tag (with a cipher only)
 *
 * Bytes 0..27 are the GCM additional data, so the header cannot be
 * altered unseen.  zlib compresses incompressible data at a few tens of
 * MB/s, so a record of more than SAMPLE bytes is compressed only when
 * its first SAMPLE bytes shrink to at most 7/8 (bench_seal measures
 * both cases).  The frame CRC covers the frame only, as for DATA: the
 * tag (or zlib's Adler-32 without a cipher) and the per-file checksum
 * cover the rest.
 */
#include "nsr/compat.h"

#include "nsr/bytes.h"
#include "nsr/crypt.h"
#include "nsr/err.h"

#include "asm_int.h"

#define SAMPLE ((size_t)32 * 1024) /* bytes tried before a whole record */

/* worth_it - does the start of p[0..n) compress?  (Small records are
 * just compressed.) */
static int worth_it(struct asm_seal *s, const uint8_t *p, size_t n)
{
	size_t zlen = 0;

	if (n <= 2 * SAMPLE)
		return 1;
	if (nsr_crypt_deflate(s->level, p, SAMPLE, s->z, s->zcap, &zlen))
		return 1; /* let the whole record say */
	return zlen <= SAMPLE / 8 * 7;
}

/* asm_seal_new - allocate the transform and its buffers. */
int asm_seal_new(struct asm_seal **out, const struct nsr_asm_xform *x)
{
	struct asm_seal *s;

	*out = NULL;
	if (x == NULL || x->compress < 0 || x->compress > 9 ||
	    (x->compress == 0 && x->key == NULL) ||
	    (x->key != NULL && x->key_id == NULL))
		return NSR_ERR_INVAL;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NSR_ERR_NOMEM;
	s->level = x->compress;
	s->cipher = x->key ? NSR_ASM_CIPHER_AES256GCM : NSR_ASM_CIPHER_NONE;
	if (x->key) {
		memcpy(s->key, x->key, sizeof(s->key));
		memcpy(s->id, x->key_id, sizeof(s->id));
	}
	s->zcap = nsr_crypt_deflate_bound(NSR_ASM_MAX_DATA);
	s->plain = malloc(NSR_ASM_MAX_DATA);
	s->out = malloc(NSR_ASM_FRAME_LEN + NSR_ASM_MAX_SEALED);
	s->z = s->level ? malloc(s->zcap) : NULL;
	if (s->plain == NULL || s->out == NULL || (s->level && !s->z) ||
	    (s->cipher && nsr_crypt_new(&s->c) != NSR_OK)) {
		asm_seal_free(s);
		return NSR_ERR_NOMEM;
	}
	*out = s;
	return NSR_OK;
}

/* asm_seal_free - free the transform, the key wiped. */
void asm_seal_free(struct asm_seal *s)
{
	if (s == NULL)
		return;
	nsr_crypt_wipe(s->key, sizeof(s->key));
	nsr_crypt_free(s->c);
	free(s->plain);
	free(s->z);
	free(s->out);
	free(s);
}

/* plain_record - a DATA record of p[0..n) in s->out. */
static int plain_record(struct asm_seal *s, const uint8_t *p, size_t n,
			size_t *len)
{
	asm_frame_put(s->out, NSR_ASM_REC_DATA, (uint32_t)n);
	memcpy(s->out + NSR_ASM_FRAME_LEN, p, n);
	*len = NSR_ASM_FRAME_LEN + n;
	return NSR_OK;
}

/* asm_seal_record - build the record of one piece of file data. */
int asm_seal_record(struct asm_seal *s, const uint8_t *p, size_t n,
		    size_t *len)
{
	uint8_t *hdr = s->out + NSR_ASM_FRAME_LEN;
	uint8_t *body = hdr + NSR_ASM_SEAL_HDR;
	const uint8_t *src = p;
	size_t blen = n, zlen = 0, plen;
	int flags = 0, rc;

	if (n == 0 || n > NSR_ASM_MAX_DATA)
		return NSR_ERR_INVAL;
	if (s->level && worth_it(s, p, n)) {
		rc = nsr_crypt_deflate(s->level, p, n, s->z, s->zcap, &zlen);
		if (rc)
			return rc;
		if (zlen < n) {
			src = s->z;
			blen = zlen;
			flags = NSR_ASM_SEAL_DEFLATE;
		}
	}
	if (!s->cipher && !flags)
		return plain_record(s, p, n, len);
	memset(hdr, 0, NSR_ASM_SEAL_HDR);
	hdr[0] = (uint8_t)flags;
	hdr[1] = (uint8_t)s->cipher;
	nsr_put_u32(hdr + 4, (uint32_t)n);
	plen = NSR_ASM_SEAL_HDR + blen;
	if (s->cipher) {
		memcpy(hdr + 8, s->id, sizeof(s->id));
		rc = nsr_crypt_random(hdr + 16, NSR_CRYPT_NONCE_LEN);
		if (rc == NSR_OK)
			rc = nsr_crypt_seal(s->c, s->key, hdr + 16, hdr,
					    NSR_ASM_SEAL_HDR, src, blen, body,
					    body + blen);
		if (rc)
			return rc;
		plen += NSR_CRYPT_TAG_LEN;
	} else {
		memcpy(body, src, blen);
	}
	asm_frame_put(s->out, NSR_ASM_REC_SEALED, (uint32_t)plen);
	*len = NSR_ASM_FRAME_LEN + plen;
	return NSR_OK;
}
