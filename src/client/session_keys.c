/*
 * session_keys.c - encryption at rest for the session drivers: the data
 * transform of a save (save --encrypt asks nsrd for the key of the
 * datazone pass phrase before the save set is made; --compress needs
 * nothing), and the key lookup a restore calls for each key id it meets
 * (KEY_GET at nsrd, which derives it from the current or a kept pass
 * phrase).  Keys come over the TLS connection to nsrd only and are wiped
 * when the session ends.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/crypt.h"
#include "nsr/err.h"
#include "nsr/nsrd_clnt.h"
#include "nsr/rpc.h"

#include "session_int.h"

/* take_key - the key of a reply into x. */
static int take_key(const key_res *r, struct session_xform *x)
{
	if (nsr_crypt_id_parse(r->key_id, x->key.id) != NSR_OK)
		return NSR_ERR_PROTO;
	memcpy(x->key.key, r->key, sizeof(x->key.key));
	x->xf.key = x->key.key;
	x->xf.key_id = x->key.id;
	return NSR_OK;
}

/* session_xform - the transform o and the client's resource ask for:
 * x->on 0 when none, x->xf.key set when it encrypts.  A dry run (d
 * NULL) asks nobody. */
int session_xform(struct nsr_nsrd *d, const struct nsr_session_save_opts *o,
		  struct session_xform *x, struct nsr_buf *err)
{
	key_cur_args a;
	key_res r;
	int rc;

	memset(x, 0, sizeof(*x));
	x->xf.compress = o->compress;
	x->on = o->compress > 0;
	if (d == NULL || (o->no_directives && !o->encrypt))
		return NSR_OK;
	a.client = (char *)o->client;
	a.want_key = o->encrypt != 0;
	memset(&r, 0, sizeof(r));
	rc = nsr_nsrd_key_current(d, &a, &r);
	if (rc == NSR_ERR_PROTO && !o->encrypt) {
		/* an nsrd without KEY_CURRENT: no client directives */
		rc = NSR_OK;
	} else if (rc == NSR_ERR_NOTFOUND &&
		   o->encrypt == NSR_SESSION_ENCRYPT_IF_SET) {
		rc = NSR_OK; /* no pass phrase: in clear, as asked */
	} else if (rc == NSR_OK) {
		if (!x->xf.compress && r.client_compress &&
		    !o->no_directives)
			x->xf.compress = 1;
		x->on = x->xf.compress > 0;
		if (o->encrypt || (r.client_encrypt && !o->no_directives)) {
			rc = take_key(&r, x);
			x->on = 1;
		}
	}
	if (rc != NSR_OK)
		nsr_buf_addf(err, "%s%s",
			     o->encrypt || r.client_encrypt ? "cannot encrypt: "
							    : "",
			     rc == NSR_ERR_PROTO && !nsr_nsrd_errmsg(d)[0]
				     ? "nsrd sent a malformed key id"
				     : nsr_nsrd_errmsg(d));
	nsr_crypt_wipe(r.key, sizeof(r.key));
	xdr_free(NSR_XDR(xdr_key_res), (char *)&r);
	return rc;
}

/* session_xform_wipe - forget the key. */
void session_xform_wipe(struct session_xform *x)
{
	nsr_crypt_wipe(x, sizeof(*x));
}

/* session_key_by_id - nsr_asm_key_fn over nsrd (ctx): KEY_GET. */
int session_key_by_id(void *ctx, const uint8_t *id, uint8_t *key)
{
	struct nsr_nsrd *d = ctx;
	char hex[NSR_CRYPT_ID_HEX];
	key_args a;
	key_res r;
	int rc;

	nsr_crypt_id_hex(id, hex);
	a.key_id = hex;
	memset(&r, 0, sizeof(r));
	rc = nsr_nsrd_key_get(d, &a, &r);
	if (rc == NSR_OK)
		memcpy(key, r.key, NSR_CRYPT_KEY_LEN);
	nsr_crypt_wipe(r.key, sizeof(r.key));
	xdr_free(NSR_XDR(xdr_key_res), (char *)&r);
	return rc == NSR_OK ? 0 : -1;
}
