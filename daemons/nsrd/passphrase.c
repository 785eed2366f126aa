/*
 * passphrase.c - the data keys of encryption at rest (KEY_CURRENT,
 * KEY_GET).  The datazone pass phrase is the NSR resource's hidden
 * attribute "datazone pass phrase"; every pass phrase whose key nsrd has
 * given out is kept, oldest first, one per line, in <root>/res/
 * passphrases (mode 0600, temp + fsync + rename), so that save sets
 * encrypted before the pass phrase changed stay recoverable.  Removing a
 * line there makes the save sets of that pass phrase unrecoverable (the
 * administrator's decision; recover says which key it lacks).
 *
 * Keys are derived with PBKDF2 (crypt.h) once per pass phrase and kept
 * in memory.  They are given only to callers that came over TLS (a host
 * certificate of the datazone) or from this host (loopback), never on a
 * plain connection from another host.  Not done: authorization beyond
 * that (any host of the datazone may ask for any key).
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/crypt.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/log.h"
#include "nsr/xmalloc.h"
#include "nsrd.h"

#define PHRASES_FILE "res/passphrases"
#define PHRASES_MAX (1024 * 1024) /* bytes of the file */
#define KEYS_KEPT 64		  /* derived keys kept in memory */

/* A pass phrase and its key. */
struct kept {
	char *phrase;
	struct nsr_crypt_key k;
};

static struct kept kept[KEYS_KEPT];
static size_t nkept, next_evict;

/* derive - the key of phrase, from memory or derived now. */
static int derive(const char *phrase, struct nsr_crypt_key *k)
{
	struct kept *slot;
	int rc;

	for (size_t i = 0; i < nkept; i++)
		if (strcmp(kept[i].phrase, phrase) == 0) {
			*k = kept[i].k;
			return NSR_OK;
		}
	rc = nsr_crypt_derive(phrase, k);
	if (rc)
		return rc;
	if (nkept < KEYS_KEPT) {
		slot = &kept[nkept++];
	} else {
		slot = &kept[next_evict];
		next_evict = (next_evict + 1) % KEYS_KEPT;
		nsr_crypt_wipe(slot->phrase, strlen(slot->phrase));
		free(slot->phrase);
	}
	slot->phrase = nsr_xstrdup(phrase);
	slot->k = *k;
	return NSR_OK;
}

/* phrases_read - the kept pass phrases ("" when there are none). */
static int phrases_read(struct nsrd *n, struct nsr_buf *out)
{
	char *path = nsr_daemon_path(n->d, PHRASES_FILE);
	int rc = nsr_file_read(path, out, PHRASES_MAX);

	free(path);
	if (rc == NSR_ERR_NOTFOUND) {
		nsr_buf_reset(out);
		rc = NSR_OK;
	}
	return rc;
}

/* next_line - the line at *p (without its newline) into line; advances
 * *p.  0 at the end. */
static int next_line(const char **p, char *line, size_t cap)
{
	const char *nl;
	size_t l;

	if (**p == '\0')
		return 0;
	nl = strchr(*p, '\n');
	l = nl ? (size_t)(nl - *p) : strlen(*p);
	line[0] = '\0';
	if (l < cap) {
		memcpy(line, *p, l);
		line[l] = '\0';
	}
	*p += l + (nl != NULL);
	return 1;
}

/* keep_phrase - add phrase (of key id) to the kept ones unless it is
 * there. */
static int keep_phrase(struct nsrd *n, const char *phrase, const uint8_t *id)
{
	char hex[NSR_CRYPT_ID_HEX];
	char line[NSR_CRYPT_PHRASE_MAX + 1];
	struct nsr_buf b;
	const char *p;
	char *path;
	int rc;

	nsr_buf_init(&b, 0);
	rc = phrases_read(n, &b);
	for (p = b.data; rc == NSR_OK && next_line(&p, line, sizeof(line));)
		if (strcmp(line, phrase) == 0)
			goto out;
	if (rc)
		goto out;
	nsr_crypt_id_hex(id, hex);
	if (b.len > 0 && b.data[b.len - 1] != '\n')
		nsr_buf_addch(&b, '\n');
	nsr_buf_addf(&b, "%s\n", phrase);
	path = nsr_daemon_path(n->d, PHRASES_FILE);
	rc = nsr_file_replace(path, b.data, b.len, 0600);
	if (rc)
		nsr_error("cannot keep the datazone pass phrase in %s: %s",
			  path, rc == NSR_ERR_SYSTEM ? strerror(errno)
						     : nsr_strerror(rc));
	else
		nsr_info("the datazone pass phrase of key %s is kept in %s",
			 hex, path);
	free(path);
out:
	nsr_crypt_wipe(line, sizeof(line));
	nsr_crypt_wipe(b.data, b.len);
	nsr_buf_release(&b);
	return rc;
}

/* current_phrase - the datazone pass phrase, or NULL. */
static const char *current_phrase(struct nsrd *n)
{
	const struct nsr_res *s = nsrd_res_find1(n, "NSR", NULL);
	const char *v = s ? nsr_res_get(s, "datazone pass phrase") : NULL;

	return v && *v ? v : NULL;
}

/* key_reply - fill the reply with key k. */
static void key_reply(key_res *r, const struct nsr_crypt_key *k)
{
	char hex[NSR_CRYPT_ID_HEX];

	nsr_crypt_id_hex(k->id, hex);
	free(r->key_id);
	r->key_id = nsr_rpc_str(hex);
	memcpy(r->key, k->key, sizeof(r->key));
	nsr_status_set(&r->st, NSR_OK, "%s", "");
}

/* over_tls - may keys go to this caller: over TLS, or on this host (a
 * plain connection from loopback, allowed by plain-hosts: the key does
 * not cross a wire)?  Sets the status if not. */
static int over_tls(struct nsr_rpc_call *call, key_res *r)
{
	r->key_id = nsr_rpc_str("");
	if (nsr_rpc_call_peer_host(call) != NULL ||
	    nsr_rpc_call_peer_is_local(call))
		return 1;
	nsr_status_set(&r->st, NSR_ERR_PERM, "data keys are given only on "
		       "TLS connections (%s came without: remove it from "
		       "tls/plain-hosts and enrol it with nsrtrust)",
		       nsr_rpc_call_peer(call));
	return 0;
}

/* client_wants - the transform client c's resource asks for. */
static void client_wants(struct nsrd *n, const char *client, key_res *r)
{
	const struct nsr_res *c = nsrd_res_find1(n, "NSR client", client);
	const char *aes = c ? nsr_res_get(c, "aes encryption") : NULL;
	const char *z = c ? nsr_res_get(c, "compression") : NULL;

	r->client_encrypt = aes && strcasecmp(aes, "Yes") == 0;
	r->client_compress = z && strcasecmp(z, "Yes") == 0;
}

/* nsrd_key_current - KEY_CURRENT: what the client's resource asks for
 * and, when encryption is wanted, the key of the datazone pass phrase,
 * which is kept from now on. */
int nsrd_key_current(void *ctx, void *argp, void *resp,
		     struct nsr_rpc_call *call)
{
	struct nsrd *n = ctx;
	key_cur_args *a = argp;
	key_res *r = resp;
	const char *phrase = current_phrase(n);
	struct nsr_crypt_key k;
	int rc;

	if (!over_tls(call, r))
		return NSR_OK;
	client_wants(n, a->client, r);
	if (!a->want_key && !r->client_encrypt) {
		nsr_status_set(&r->st, NSR_OK, "%s", "");
		return NSR_OK;
	}
	if (phrase == NULL) {
		nsr_status_set(&r->st, NSR_ERR_NOTFOUND,
			       "no datazone pass phrase is set%s: set the NSR "
			       "resource's 'datazone pass phrase' with "
			       "nsradmin first", a->want_key ? "" :
			       " (the client resource asks for aes "
			       "encryption)");
		return NSR_OK;
	}
	rc = derive(phrase, &k);
	if (rc == NSR_ERR_INVAL) {
		nsr_status_set(&r->st, rc, "the datazone pass phrase is not "
			       "usable: it must be one line of 1 to %d bytes",
			       NSR_CRYPT_PHRASE_MAX);
		return NSR_OK;
	}
	if (rc == NSR_OK)
		rc = keep_phrase(n, phrase, k.id);
	if (rc) {
		nsr_status_set(&r->st, rc, "cannot make the data key of the "
			       "datazone pass phrase: %s (see daemon.log)",
			       nsr_strerror(rc));
		return NSR_OK;
	}
	key_reply(r, &k);
	nsr_crypt_wipe(&k, sizeof(k));
	return NSR_OK;
}

/* nsrd_key_get - KEY_GET: the key of an id, from the datazone pass
 * phrase or one kept. */
int nsrd_key_get(void *ctx, void *argp, void *resp,
		 struct nsr_rpc_call *call)
{
	struct nsrd *n = ctx;
	key_args *a = argp;
	key_res *r = resp;
	const char *phrase = current_phrase(n), *p;
	char line[NSR_CRYPT_PHRASE_MAX + 1];
	struct nsr_crypt_key k;
	uint8_t id[NSR_CRYPT_ID_LEN];
	struct nsr_buf b;
	int found = 0;

	if (!over_tls(call, r))
		return NSR_OK;
	if (nsr_crypt_id_parse(a->key_id, id) != NSR_OK) {
		nsr_status_set(&r->st, NSR_ERR_INVAL, "'%s' is not a key id "
			       "(16 hex digits)", a->key_id);
		return NSR_OK;
	}
	if (phrase && derive(phrase, &k) == NSR_OK)
		found = memcmp(k.id, id, sizeof(id)) == 0;
	nsr_buf_init(&b, 0);
	if (!found && phrases_read(n, &b) != NSR_OK)
		nsr_error("cannot read the kept pass phrases (%s): %s",
			  PHRASES_FILE, strerror(errno));
	for (p = b.data; !found && p && next_line(&p, line, sizeof(line));)
		found = line[0] && derive(line, &k) == NSR_OK &&
			memcmp(k.id, id, sizeof(id)) == 0;
	nsr_crypt_wipe(line, sizeof(line));
	nsr_crypt_wipe(b.data, b.len);
	nsr_buf_release(&b);
	if (found)
		key_reply(r, &k);
	else
		nsr_status_set(&r->st, NSR_ERR_NOTFOUND, "key %s unknown: "
			       "neither the datazone pass phrase nor one kept "
			       "in %s makes it", a->key_id, PHRASES_FILE);
	nsr_crypt_wipe(&k, sizeof(k));
	return NSR_OK;
}
