/*
 * grant.c - session grants (nsrd(8), GRANTS).  nsrd admits a session
 * and hands its client, with the mover to use, a grant to write (a save,
 * a clone's copy) or read (a recover, a clone's source) that one save
 * set; the mover checks the grant with the datazone's grant key, so a
 * client that talks to a mover directly, bypassing nsrd's authorization,
 * opens nothing.  The key is 32 random bytes in <root>/res/grant.key
 * (mode 0600; made at the first start, temp + fsync + rename), kept
 * across restarts so that grants handed out before one stay good.  The
 * movers fetch it with GRANT_KEY, which only root on the server or on a
 * storage node (and administrators) may call, over TLS or loopback.
 */
#include "nsr/compat.h"

#include <sys/random.h>
#include <openssl/crypto.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/log.h"
#include "nsr/rpc.h"
#include "nsr/rpc_status.h"
#include "nsr/tls.h"
#include "nsr/xmalloc.h"
#include "nsrd.h"

#define KEY_FILE "res/grant.key"
/* How long a grant stays good: a recover may open a volume's mover
 * long after RECOVER_START (tape mounts), and a grant is per save set. */
#define GRANT_SEC (7 * 24 * 3600)

static uint8_t g_key[NSR_GRANT_KEY_LEN];

/* nsrd_grant_init - load the grant key, or make and keep one. */
int nsrd_grant_init(struct nsrd *n)
{
	char *path = nsr_daemon_path(n->d, KEY_FILE);
	struct nsr_buf b;
	int rc;

	if (!path)
		return NSR_ERR_NOMEM;
	nsr_buf_init(&b, 0);
	rc = nsr_file_read(path, &b, 4096);
	if (rc == NSR_OK && b.len == NSR_GRANT_KEY_LEN) {
		memcpy(g_key, b.data, NSR_GRANT_KEY_LEN);
	} else if (rc == NSR_OK) {
		nsr_error("%s holds %zu bytes, not a grant key of %d: move it "
			  "away and restart nsrd to make a new one (grants "
			  "handed out before are then refused)",
			  path, b.len, NSR_GRANT_KEY_LEN);
		rc = NSR_ERR_CORRUPT;
	} else if (rc == NSR_ERR_NOTFOUND) {
		rc = getrandom(g_key, sizeof(g_key), 0) == sizeof(g_key)
			     ? nsr_file_replace(path, g_key, sizeof(g_key),
						0600)
			     : NSR_ERR_SYSTEM;
		if (rc != NSR_OK)
			nsr_error("cannot make the grant key %s: %s", path,
				  nsr_strerror(rc));
	} else {
		nsr_error("cannot read the grant key %s: %s", path,
			  nsr_strerror(rc));
	}
	OPENSSL_cleanse(b.data, b.len);
	nsr_buf_release(&b);
	free(path);
	return rc;
}

/* nsrd_grant - *g = a grant of kind for ssid, good for GRANT_SEC. */
void nsrd_grant(uint32_t kind, uint32_t ssid, nsr_grant *g)
{
	if (nsr_rpc_grant_make(g_key, kind, ssid,
			       (int64_t)time(NULL) + GRANT_SEC, g) != NSR_OK) {
		/* An HMAC that fails is a broken libcrypto: the grant
		 * stays all zero and the mover refuses it, saying so. */
		memset(g, 0, sizeof(*g));
		nsr_error("cannot make a grant for save set %u", ssid);
	}
}

/* nsrd_revoked_get - REVOKED_GET: the revocation list of nsrd's root, to
 * anyone (see nsrd.h). */
int nsrd_revoked_get(void *ctx, void *argp, void *resp,
		     struct nsr_rpc_call *call)
{
	revoked_res *r = resp;
	struct nsr_buf text;
	int rc;

	NSR_UNUSED(ctx);
	NSR_UNUSED(argp);
	NSR_UNUSED(call);
	nsr_buf_init(&text, 0);
	rc = nsr_tls_revoked_text(g_nsrd.d->root, &text);
	if (rc == NSR_OK && text.len > NSRD_REVOKED_MAX)
		rc = NSR_ERR_TOOBIG;
	if (rc != NSR_OK) {
		r->text = nsr_rpc_str("");
		nsr_status_set(&r->st, rc, "cannot read the revocation list "
			       "%s/tls/revoked: %s", g_nsrd.d->root,
			       nsr_strerror(rc));
	} else {
		r->text = nsr_rpc_str(text.len ? text.data : "");
		nsr_status_set(&r->st, NSR_OK, "%s", "");
	}
	nsr_buf_release(&text);
	return NSR_OK;
}

/* nsrd_grant_key - GRANT_KEY: the key, to a mover (authz.c lets only
 * the server's programs and administrators through), never on a plain
 * connection from another host. */
int nsrd_grant_key(void *ctx, void *argp, void *resp, struct nsr_rpc_call *call)
{
	grant_key_res *r = resp;

	NSR_UNUSED(ctx);
	NSR_UNUSED(argp);
	if (nsr_rpc_call_peer_host(call) == NULL &&
	    !nsr_rpc_call_peer_is_local(call)) {
		nsr_status_set(&r->st, NSR_ERR_PERM,
			       "the grant key is given "
			       "only on TLS connections (%s came without: "
			       "remove it from tls/plain-hosts and enrol it "
			       "with nsrtrust)",
			       nsr_rpc_call_peer(call));
		return NSR_OK;
	}
	memcpy(r->key, g_key, sizeof(g_key));
	nsr_status_set(&r->st, NSR_OK, "%s", "");
	return NSR_OK;
}
