/*
 * crypt.h - encryption at rest: keys derived from the datazone pass
 * phrase, and the AES-256-GCM and zlib transforms that the save stream
 * applies to file data (SEALED records, nsr_savestream(5)).
 *
 * A key is 32 bytes derived from a pass phrase with PBKDF2-HMAC-SHA256
 * (NSR_CRYPT_ITER rounds, a fixed salt, so the same pass phrase gives the
 * same key on a rebuilt server).  It is named by its key id, the first 8
 * bytes of SHA-256 over a label and the key: a stream carries the id,
 * never the key, so recover knows which pass phrase it needs.
 *
 * The functions return NSR_OK or a negative nsr_err; nsr_crypt_open says
 * NSR_ERR_CHECKSUM when the tag does not match (a wrong key or damaged or
 * altered bytes: nothing of the plaintext is to be used then).
 */
#ifndef NSR_CRYPT_H
#define NSR_CRYPT_H

#include <stddef.h>
#include <stdint.h>

#define NSR_CRYPT_KEY_LEN 32
#define NSR_CRYPT_ID_LEN 8
#define NSR_CRYPT_ID_HEX (2 * NSR_CRYPT_ID_LEN + 1) /* with the NUL */
#define NSR_CRYPT_NONCE_LEN 12
#define NSR_CRYPT_TAG_LEN 16
#define NSR_CRYPT_ITER 100000
#define NSR_CRYPT_PHRASE_MAX 1024 /* bytes of a pass phrase */

/* A data key and its id. */
struct nsr_crypt_key {
	uint8_t id[NSR_CRYPT_ID_LEN];
	uint8_t key[NSR_CRYPT_KEY_LEN];
};

/* nsr_crypt_derive - the key of a pass phrase (1 to NSR_CRYPT_PHRASE_MAX
 * bytes, no newline).  NSR_ERR_INVAL, NSR_ERR_NOMEM. */
int nsr_crypt_derive(const char *phrase, struct nsr_crypt_key *k);
/* nsr_crypt_key_id - fill k->id from k->key. */
int nsr_crypt_key_id(struct nsr_crypt_key *k);
/* nsr_crypt_id_hex - id as 16 lower-case hex digits into out. */
void nsr_crypt_id_hex(const uint8_t *id, char out[NSR_CRYPT_ID_HEX]);
/* nsr_crypt_id_parse - 16 hex digits into id.  NSR_ERR_SYNTAX. */
int nsr_crypt_id_parse(const char *hex, uint8_t *id);
/* nsr_crypt_random - n random bytes (nonces).  NSR_ERR_SYSTEM. */
int nsr_crypt_random(void *p, size_t n);
/* nsr_crypt_wipe - clear secret bytes (not optimised away). */
void nsr_crypt_wipe(void *p, size_t n);

struct nsr_crypt;

/* nsr_crypt_new - an AES-256-GCM context (reused for every record). */
int nsr_crypt_new(struct nsr_crypt **out);
/* nsr_crypt_free - free (NULL is fine). */
void nsr_crypt_free(struct nsr_crypt *c);
/* nsr_crypt_seal - encrypt in[0..n) into out (n bytes) under key and
 * nonce, authenticating aad too; the tag goes to tag. */
int nsr_crypt_seal(struct nsr_crypt *c, const uint8_t *key,
		   const uint8_t *nonce, const void *aad, size_t aad_len,
		   const void *in, size_t n, void *out, uint8_t *tag);
/* nsr_crypt_open - decrypt and verify; NSR_ERR_CHECKSUM when the tag
 * does not match (out then holds nothing usable). */
int nsr_crypt_open(struct nsr_crypt *c, const uint8_t *key,
		   const uint8_t *nonce, const void *aad, size_t aad_len,
		   const void *in, size_t n, void *out, const uint8_t *tag);

/* nsr_crypt_deflate_bound - the most deflate may make of n bytes. */
size_t nsr_crypt_deflate_bound(size_t n);
/* nsr_crypt_deflate - compress in[0..n) (zlib format, level 1 to 9) into
 * out (cap bytes), *out_len the size.  NSR_ERR_TOOBIG if it does not fit,
 * NSR_ERR_NOMEM. */
int nsr_crypt_deflate(int level, const void *in, size_t n, void *out,
		      size_t cap, size_t *out_len);
/* nsr_crypt_inflate - decompress in[0..n) into exactly want bytes at
 * out.  NSR_ERR_CORRUPT if the data is not a zlib stream of exactly that
 * many bytes, NSR_ERR_NOMEM. */
int nsr_crypt_inflate(const void *in, size_t n, void *out, size_t want);

#endif /* NSR_CRYPT_H */
