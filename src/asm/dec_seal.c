/*
 * dec_seal.c - SEALED records on the decoder side (layout in
 * enc_seal.c and nsr_savestream(5)).  The whole payload is collected
 * first: no plaintext is passed on before its GCM tag is checked.  The
 * key comes from the caller's key() callback, asked once per id (the
 * answer, known or not, is kept).  A file whose key is not known has its
 * data passed over (counted, never given to data()) and its FILE_END
 * says nokey; a tag that does not match is damage (NSR_ERR_CHECKSUM).
 * A stream's data is all in clear or all encrypted under one key (what
 * the encoder writes): anything else is NSR_ERR_CORRUPT, so a file never
 * mixes records passed on with records passed over.  Not covered: the
 * structure itself (which records and files there are) is protected by
 * CRCs, not by a MAC; someone able to rewrite a volume can drop or
 * replace whole records or files.
 */
#include "nsr/compat.h"

#include "nsr/bytes.h"
#include "nsr/crypt.h"
#include "nsr/err.h"

#include "asm_int.h"

/* asm_dec_seal_free - free the buffers and wipe the key kept. */
void asm_dec_seal_free(struct nsr_asm_dec *d)
{
	nsr_crypt_wipe(d->key, sizeof(d->key));
	nsr_crypt_free(d->crypt);
	free(d->sbuf);
	free(d->pbuf);
	free(d->zbuf);
	d->crypt = NULL;
	d->sbuf = d->pbuf = d->zbuf = NULL;
	d->scap = d->pcap = d->zcap = 0;
}

/* grow - *p of at least need bytes (bounded by the record limits). */
static int grow(uint8_t **p, size_t *cap, size_t need)
{
	uint8_t *n;

	if (need <= *cap)
		return NSR_OK;
	n = realloc(*p, need);
	if (n == NULL)
		return NSR_ERR_NOMEM;
	*p = n;
	*cap = need;
	return NSR_OK;
}

/* asm_dec_seal_frame - a SEALED frame: version, room, a sane length. */
int asm_dec_seal_frame(struct nsr_asm_dec *d)
{
	/* Version 0: the header was lost (resync), the stream may be new. */
	if (d->version && d->version < 5)
		return NSR_ERR_CORRUPT;
	if (d->len <= NSR_ASM_SEAL_HDR)
		return NSR_ERR_CORRUPT;
	/* on_frame checked len against NSR_ASM_MAX_SEALED */
	return grow(&d->sbuf, &d->scap, d->len);
}

/* asm_dec_seal_mode - all data of a stream in clear or all under one
 * key: a record encrypted under another key, or in clear among
 * encrypted ones (or the reverse), is not what an encoder writes. */
int asm_dec_seal_mode(struct nsr_asm_dec *d, const uint8_t *id)
{
	int mode = id ? 2 : 1;

	if (d->seal_mode == 0) {
		d->seal_mode = mode;
		if (id)
			memcpy(d->seal_id, id, sizeof(d->seal_id));
		return NSR_OK;
	}
	if (d->seal_mode != mode ||
	    (id && memcmp(d->seal_id, id, sizeof(d->seal_id)) != 0))
		return NSR_ERR_CORRUPT;
	return NSR_OK;
}

/* have_key - is the key of id known?  Asks the caller once per id. */
static int have_key(struct nsr_asm_dec *d, const uint8_t *id)
{
	if (d->kid_state != 0 && memcmp(d->kid, id, sizeof(d->kid)) == 0)
		return d->kid_state > 0;
	memcpy(d->kid, id, sizeof(d->kid));
	nsr_crypt_wipe(d->key, sizeof(d->key));
	d->kid_state = -1;
	if (d->ops.key && d->ops.key(d->ctx, id, d->key) == 0)
		d->kid_state = 1;
	return d->kid_state > 0;
}

/* pass_over - data of a file whose key is not known: counted, not
 * passed on (the checksum cannot be computed: FILE_END says nokey). */
static int pass_over(struct nsr_asm_dec *d, const uint8_t *id, size_t n)
{
	if (!d->file_nokey)
		memcpy(d->nokey_id, id, sizeof(d->nokey_id));
	d->file_nokey = 1;
	d->file_done += n;
	d->file_data = 1;
	return NSR_OK;
}

/* open_body - decrypt the body into out; NSR_ERR_CHECKSUM on a bad tag. */
static int open_body(struct nsr_asm_dec *d, const uint8_t *hdr,
		     const uint8_t *body, size_t blen, uint8_t *out)
{
	int rc;

	if (d->crypt == NULL) {
		rc = nsr_crypt_new(&d->crypt);
		if (rc)
			return rc;
	}
	return nsr_crypt_open(d->crypt, d->key, hdr + 16, hdr,
			      NSR_ASM_SEAL_HDR, body, blen, out, body + blen);
}

/* asm_dec_on_sealed - check, decrypt, inflate, pass on. */
int asm_dec_on_sealed(struct nsr_asm_dec *d)
{
	const uint8_t *hdr = d->sbuf, *body = hdr + NSR_ASM_SEAL_HDR;
	int flags = hdr[0], cipher = hdr[1];
	uint32_t plain = nsr_get_u32(hdr + 4);
	size_t blen = d->len - NSR_ASM_SEAL_HDR;
	static const uint8_t zero[20];
	uint8_t *out;
	int rc;

	if ((flags & ~NSR_ASM_SEAL_DEFLATE) != 0 || hdr[2] != 0 ||
	    hdr[3] != 0 || cipher > NSR_ASM_CIPHER_AES256GCM ||
	    plain == 0 || plain > NSR_ASM_MAX_DATA ||
	    plain > d->file_size - d->file_done)
		return NSR_ERR_CORRUPT;
	if (cipher == NSR_ASM_CIPHER_NONE &&
	    (!(flags & NSR_ASM_SEAL_DEFLATE) || memcmp(hdr + 8, zero, 20)))
		return NSR_ERR_CORRUPT; /* else it would be a DATA record */
	if (cipher) {
		if (blen <= NSR_CRYPT_TAG_LEN)
			return NSR_ERR_CORRUPT;
		blen -= NSR_CRYPT_TAG_LEN;
	}
	if (!(flags & NSR_ASM_SEAL_DEFLATE) && blen != plain)
		return NSR_ERR_CORRUPT;
	if (blen > NSR_ASM_MAX_DATA)
		return NSR_ERR_CORRUPT;
	rc = asm_dec_seal_mode(d, cipher ? hdr + 8 : NULL);
	if (rc)
		return rc;
	if (cipher && (d->file_nokey || !have_key(d, hdr + 8)))
		return pass_over(d, hdr + 8, plain);
	rc = grow(&d->pbuf, &d->pcap, plain);
	if (rc == NSR_OK && cipher && (flags & NSR_ASM_SEAL_DEFLATE))
		rc = grow(&d->zbuf, &d->zcap, blen);
	if (rc)
		return rc;
	out = flags & NSR_ASM_SEAL_DEFLATE ? d->zbuf : d->pbuf;
	if (cipher) {
		rc = open_body(d, hdr, body, blen, out);
		if (rc)
			return rc;
		body = out;
	}
	if (flags & NSR_ASM_SEAL_DEFLATE) {
		rc = nsr_crypt_inflate(body, blen, d->pbuf, plain);
		if (rc)
			return rc;
		body = d->pbuf;
	}
	asm_ck_update(&d->ck, body, plain);
	d->file_done += plain;
	d->file_data = 1;
	if (d->ops.data) {
		rc = d->ops.data(d->ctx, body, plain);
		if (rc)
			return asm_dec_cb_rc(d, rc);
	}
	return NSR_OK;
}
