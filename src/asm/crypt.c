/*
 * crypt.c - keys from the datazone pass phrase, AES-256-GCM and zlib for
 * the save stream's SEALED records (crypt.h).  OpenSSL's EVP interface
 * does the cipher (AES-NI where the CPU has it); one EVP_CIPHER_CTX per
 * encoder or decoder is set up once and re-keyed per record.
 */
#include "nsr/compat.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <zlib.h>

#include "nsr/crypt.h"
#include "nsr/err.h"

/* The PBKDF2 salt and the key id label: fixed, so that a pass phrase
 * names the same key in every datazone (a rebuilt server given the old
 * pass phrase can read old volumes). */
static const char kdf_salt[] = "OpenNSR datazone pass phrase v1";
static const char id_label[] = "OpenNSR key id v1";

struct nsr_crypt {
	EVP_CIPHER_CTX *ctx;
};

/* nsr_crypt_key_id - the id: SHA-256(label || key), first 8 bytes. */
int nsr_crypt_key_id(struct nsr_crypt_key *k)
{
	uint8_t md[32];
	unsigned int n = 0;
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	int ok;

	if (c == NULL)
		return NSR_ERR_NOMEM;
	ok = EVP_DigestInit_ex(c, EVP_sha256(), NULL) == 1 &&
	     EVP_DigestUpdate(c, id_label, sizeof(id_label) - 1) == 1 &&
	     EVP_DigestUpdate(c, k->key, sizeof(k->key)) == 1 &&
	     EVP_DigestFinal_ex(c, md, &n) == 1 && n == sizeof(md);
	EVP_MD_CTX_free(c);
	if (!ok)
		return NSR_ERR_NOMEM;
	memcpy(k->id, md, sizeof(k->id));
	return NSR_OK;
}

/* nsr_crypt_derive - PBKDF2-HMAC-SHA256 of the pass phrase. */
int nsr_crypt_derive(const char *phrase, struct nsr_crypt_key *k)
{
	size_t n = phrase ? strlen(phrase) : 0;

	memset(k, 0, sizeof(*k));
	if (n == 0 || n > NSR_CRYPT_PHRASE_MAX || strchr(phrase, '\n'))
		return NSR_ERR_INVAL;
	if (PKCS5_PBKDF2_HMAC(phrase, (int)n, (const uint8_t *)kdf_salt,
			      (int)sizeof(kdf_salt) - 1, NSR_CRYPT_ITER,
			      EVP_sha256(), (int)sizeof(k->key),
			      k->key) != 1)
		return NSR_ERR_NOMEM;
	return nsr_crypt_key_id(k);
}

/* nsr_crypt_id_hex - id as hex. */
void nsr_crypt_id_hex(const uint8_t *id, char out[NSR_CRYPT_ID_HEX])
{
	static const char hx[] = "0123456789abcdef";

	for (size_t i = 0; i < NSR_CRYPT_ID_LEN; i++) {
		out[2 * i] = hx[id[i] >> 4];
		out[2 * i + 1] = hx[id[i] & 15];
	}
	out[2 * NSR_CRYPT_ID_LEN] = '\0';
}

/* hexval - one hex digit's value, -1 if it is none. */
static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* nsr_crypt_id_parse - 16 hex digits into an id. */
int nsr_crypt_id_parse(const char *hex, uint8_t *id)
{
	if (hex == NULL || strlen(hex) != 2 * NSR_CRYPT_ID_LEN)
		return NSR_ERR_SYNTAX;
	for (size_t i = 0; i < NSR_CRYPT_ID_LEN; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return NSR_ERR_SYNTAX;
		id[i] = (uint8_t)(hi << 4 | lo);
	}
	return NSR_OK;
}

/* nsr_crypt_random - random bytes from OpenSSL's generator. */
int nsr_crypt_random(void *p, size_t n)
{
	return RAND_bytes(p, (int)n) == 1 ? NSR_OK : NSR_ERR_SYSTEM;
}

/* nsr_crypt_wipe - clear secret bytes. */
void nsr_crypt_wipe(void *p, size_t n)
{
	OPENSSL_cleanse(p, n);
}

/* nsr_crypt_new - allocate a cipher context. */
int nsr_crypt_new(struct nsr_crypt **out)
{
	struct nsr_crypt *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (c == NULL)
		return NSR_ERR_NOMEM;
	c->ctx = EVP_CIPHER_CTX_new();
	if (c->ctx == NULL) {
		free(c);
		return NSR_ERR_NOMEM;
	}
	*out = c;
	return NSR_OK;
}

/* nsr_crypt_free - free a cipher context. */
void nsr_crypt_free(struct nsr_crypt *c)
{
	if (c == NULL)
		return;
	EVP_CIPHER_CTX_free(c->ctx);
	free(c);
}

/* gcm_init - set up the context for one record. */
static int gcm_init(struct nsr_crypt *c, int enc, const uint8_t *key,
		    const uint8_t *nonce, const void *aad, size_t aad_len)
{
	int n = 0;

	if (EVP_CipherInit_ex(c->ctx, EVP_aes_256_gcm(), NULL, NULL, NULL,
			      enc) != 1 ||
	    EVP_CIPHER_CTX_ctrl(c->ctx, EVP_CTRL_GCM_SET_IVLEN,
				NSR_CRYPT_NONCE_LEN, NULL) != 1 ||
	    EVP_CipherInit_ex(c->ctx, NULL, NULL, key, nonce, enc) != 1)
		return NSR_ERR_NOMEM;
	if (aad_len > 0 && EVP_CipherUpdate(c->ctx, NULL, &n, aad,
					    (int)aad_len) != 1)
		return NSR_ERR_NOMEM;
	return NSR_OK;
}

/* nsr_crypt_seal - AES-256-GCM encryption of one record. */
int nsr_crypt_seal(struct nsr_crypt *c, const uint8_t *key,
		   const uint8_t *nonce, const void *aad, size_t aad_len,
		   const void *in, size_t n, void *out, uint8_t *tag)
{
	int len = 0, fin = 0;
	int rc = gcm_init(c, 1, key, nonce, aad, aad_len);

	if (rc)
		return rc;
	if (n > INT32_MAX ||
	    (n > 0 && EVP_EncryptUpdate(c->ctx, out, &len, in, (int)n) != 1) ||
	    EVP_EncryptFinal_ex(c->ctx, (uint8_t *)out + len, &fin) != 1 ||
	    (size_t)(len + fin) != n ||
	    EVP_CIPHER_CTX_ctrl(c->ctx, EVP_CTRL_GCM_GET_TAG,
				NSR_CRYPT_TAG_LEN, tag) != 1)
		return NSR_ERR_NOMEM;
	return NSR_OK;
}

/* nsr_crypt_open - AES-256-GCM decryption and tag check of one record. */
int nsr_crypt_open(struct nsr_crypt *c, const uint8_t *key,
		   const uint8_t *nonce, const void *aad, size_t aad_len,
		   const void *in, size_t n, void *out, const uint8_t *tag)
{
	uint8_t t[NSR_CRYPT_TAG_LEN];
	int len = 0, fin = 0;
	int rc = gcm_init(c, 0, key, nonce, aad, aad_len);

	if (rc)
		return rc;
	memcpy(t, tag, sizeof(t));
	if (n > INT32_MAX ||
	    (n > 0 && EVP_DecryptUpdate(c->ctx, out, &len, in, (int)n) != 1) ||
	    EVP_CIPHER_CTX_ctrl(c->ctx, EVP_CTRL_GCM_SET_TAG,
				NSR_CRYPT_TAG_LEN, t) != 1)
		return NSR_ERR_NOMEM;
	if (EVP_DecryptFinal_ex(c->ctx, (uint8_t *)out + len, &fin) != 1)
		return NSR_ERR_CHECKSUM;
	return (size_t)(len + fin) == n ? NSR_OK : NSR_ERR_CHECKSUM;
}

/* nsr_crypt_deflate_bound - zlib's bound for n bytes. */
size_t nsr_crypt_deflate_bound(size_t n)
{
	return (size_t)compressBound((uLong)n);
}

/* nsr_crypt_deflate - zlib compression of one record's data. */
int nsr_crypt_deflate(int level, const void *in, size_t n, void *out,
		      size_t cap, size_t *out_len)
{
	uLongf len = (uLongf)cap;
	int zr;

	if (level < 1 || level > 9)
		return NSR_ERR_INVAL;
	zr = compress2(out, &len, in, (uLong)n, level);
	if (zr == Z_BUF_ERROR)
		return NSR_ERR_TOOBIG;
	if (zr != Z_OK)
		return NSR_ERR_NOMEM;
	*out_len = (size_t)len;
	return NSR_OK;
}

/* nsr_crypt_inflate - zlib decompression to exactly want bytes, all of
 * the input consumed. */
int nsr_crypt_inflate(const void *in, size_t n, void *out, size_t want)
{
	uLongf len = (uLongf)want;
	uLong src = (uLong)n;
	int zr = uncompress2(out, &len, in, &src);

	if (zr == Z_MEM_ERROR)
		return NSR_ERR_NOMEM;
	if (zr != Z_OK || len != want || src != n)
		return NSR_ERR_CORRUPT;
	return NSR_OK;
}
