/*
 * grant.c - session grants (nsr/rpc.h, "Grants"): nsrd's leave for a
 * client to write or read one save set at a data mover, checked by the
 * mover without a call back.  A grant is HMAC-SHA256, cut to 16 bytes,
 * under the datazone's 32-byte grant key, of the text "NSR-GRANT-1" and
 * kind, ssid and expires, each big-endian (4, 4 and 8 bytes).
 *
 * nsrd makes a grant for every session it admits, a burst of them at
 * once from many threads; HMAC() fetches SHA-256 and builds a keyed
 * context every time, behind OpenSSL's shared locks.  So the context
 * keyed last is kept (under tmpl_mu) and each mac works on a copy of it.
 */
#include "nsr/compat.h"

#include <pthread.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "nsr/err.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsr_common.h"

#define GRANT_TAG "NSR-GRANT-1"

/* put32, put64 - big-endian. */
static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 3; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static pthread_mutex_t tmpl_mu = PTHREAD_MUTEX_INITIALIZER;
static EVP_MAC_CTX *tmpl;		/* HMAC-SHA256 keyed with tmpl_key */
static uint8_t tmpl_key[NSR_GRANT_KEY_LEN];

/* keyed - a new HMAC-SHA256 context keyed with key (a copy of the kept
 * one, which is made or remade for key first), or NULL. */
static EVP_MAC_CTX *keyed(const uint8_t *key)
{
	OSSL_PARAM p[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
						 (char *)"SHA256", 0),
		OSSL_PARAM_construct_end()};
	EVP_MAC_CTX *c = NULL;

	pthread_mutex_lock(&tmpl_mu);
	if (!tmpl || CRYPTO_memcmp(tmpl_key, key, sizeof(tmpl_key)) != 0) {
		EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);

		EVP_MAC_CTX_free(tmpl);
		tmpl = mac ? EVP_MAC_CTX_new(mac) : NULL;
		EVP_MAC_free(mac); /* the context holds its own reference */
		if (tmpl && !EVP_MAC_init(tmpl, key, NSR_GRANT_KEY_LEN, p)) {
			EVP_MAC_CTX_free(tmpl);
			tmpl = NULL;
		}
		if (tmpl)
			memcpy(tmpl_key, key, sizeof(tmpl_key));
	}
	if (tmpl)
		c = EVP_MAC_CTX_dup(tmpl);
	pthread_mutex_unlock(&tmpl_mu);
	return c;
}

/* mac_of - the 16-byte mac of (kind, ssid, expires) under key. */
static int mac_of(const uint8_t *key, uint32_t kind, uint32_t ssid,
		  int64_t expires, uint8_t out[16])
{
	uint8_t msg[sizeof(GRANT_TAG) - 1 + 16], md[EVP_MAX_MD_SIZE];
	EVP_MAC_CTX *c = keyed(key);
	size_t mdlen = 0;
	int ok;

	memcpy(msg, GRANT_TAG, sizeof(GRANT_TAG) - 1);
	put32(msg + sizeof(GRANT_TAG) - 1, kind);
	put32(msg + sizeof(GRANT_TAG) + 3, ssid);
	put64(msg + sizeof(GRANT_TAG) + 7, (uint64_t)expires);
	ok = c && EVP_MAC_update(c, msg, sizeof(msg)) &&
	     EVP_MAC_final(c, md, &mdlen, sizeof(md)) && mdlen >= 16;
	EVP_MAC_CTX_free(c);
	if (ok)
		memcpy(out, md, 16);
	OPENSSL_cleanse(md, sizeof(md));
	return ok ? NSR_OK : NSR_ERR_SYSTEM;
}

/* nsr_rpc_grant_make - a grant of kind for ssid until expires. */
int nsr_rpc_grant_make(const uint8_t *key, uint32_t kind, uint32_t ssid,
		       int64_t expires, nsr_grant *g)
{
	memset(g, 0, sizeof(*g));
	g->kind = kind;
	g->ssid = ssid;
	g->expires = expires;
	return mac_of(key, kind, ssid, expires, (uint8_t *)g->mac);
}

/* nsr_rpc_grant_check - NSR_OK if g is a valid grant of kind for ssid at
 * time now; NSR_ERR_PERM if it is not (another kind or save set, expired,
 * or not made with key), NSR_ERR_SYSTEM if the mac cannot be made. */
int nsr_rpc_grant_check(const uint8_t *key, const nsr_grant *g, uint32_t kind,
			uint32_t ssid, int64_t now)
{
	uint8_t want[16];
	int rc;

	if (!g || g->kind != kind || g->ssid != ssid || ssid == 0 ||
	    g->expires < now)
		return NSR_ERR_PERM;
	rc = mac_of(key, kind, ssid, g->expires, want);
	if (rc != NSR_OK)
		return rc;
	return CRYPTO_memcmp(want, g->mac, sizeof(want)) == 0 ? NSR_OK
							      : NSR_ERR_PERM;
}
