/*
 * authz.c - who may use a mover (nsrmmd(8), AUTHORIZATION).
 *
 * Label and remove (classed NSR_RPC_ADMIN in the dispatch table): nsrd,
 * i.e. root on the mover's server, which has checked its own caller
 * against the administrator list (nsrd(8), AUTHORIZATION).  A mover on
 * the server's own host (server "localhost") also takes root of this
 * host.
 *
 * Opening a save set, to write it (MMD_SS_BEGIN, MMD_CLONE_BEGIN) or read
 * it (MMD_READ_OPEN), classed NSR_RPC_OWN: the same root, or anyone who
 * brings nsrd's grant for that save set (nsr/rpc.h, "Grants"): nsrd hands
 * grants out only to the sessions it admitted, after its own checks (a
 * client's own data, remote access, administrators).  A read of several
 * save sets in one pass needs a grant for each.  The mover checks grants
 * with the datazone's grant key, fetched from nsrd (GRANT_KEY) at the
 * first grant it sees and again, at most every KEY_REFETCH_SEC, when a
 * grant does not match (nsrd's key file was replaced).  The calls of an
 * open session (data, sync, end, reads) need nothing more: they act only
 * on the session of their own connection; striped connections join with
 * the session's token (stripe.c).  Every refusal is logged with who and
 * what.
 */
#include "nsr/compat.h"

#include <pthread.h>
#include <time.h>

#include <openssl/crypto.h>

#include "nsr/access.h"
#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/host.h"
#include "nsr/log.h"
#include "nsr/nsrd_clnt.h"
#include "nsr/rpc.h"
#include "mmd.h"

#define KEY_REFETCH_SEC 10

static pthread_mutex_t g_key_mu = PTHREAD_MUTEX_INITIALIZER;
static uint8_t g_key[NSR_GRANT_KEY_LEN];
static int g_have_key;
static time_t g_fetched;

/* local_server - 1 if the mover's server is this host. */
static int local_server(const char *server)
{
	return strcmp(server, "localhost") == 0 ||
	       strncmp(server, "127.", 4) == 0 || strcmp(server, "::1") == 0;
}

/* server_root - 1 if the caller is root on the mover's server. */
static int server_root(const char *server, const struct nsr_rpc_call *call)
{
	const char *user = nsr_rpc_call_user(call);
	const char *host = nsr_rpc_call_host(call);
	char self[NSR_HOST_MAX + 1];

	nsr_host_self(self, sizeof(self));
	return user && strcmp(user, "root") == 0 &&
	       (nsr_access_match_host(server, host) ||
		strcmp(host, "localhost") == 0 ||
		(local_server(server) && nsr_access_match_host(self, host)));
}

/* fetch_key - GRANT_KEY from nsrd of server into g_key (holds g_key_mu). */
static int fetch_key(const char *server, struct nsr_buf *why)
{
	struct nsr_nsrd *d = NULL;
	grant_key_res r;
	struct nsr_buf err;
	int rc;

	memset(&r, 0, sizeof(r));
	nsr_buf_init(&err, 0);
	g_fetched = time(NULL);
	rc = nsr_nsrd_open(local_server(server) ? NULL : server, &d, &err);
	if (rc == NSR_OK) {
		rc = nsr_nsrd_grant_key(d, &r);
		if (rc != NSR_OK)
			nsr_buf_addf(&err, "%s", nsr_nsrd_errmsg(d));
	}
	if (rc == NSR_OK) {
		memcpy(g_key, r.key, sizeof(g_key));
		g_have_key = 1;
		nsr_info("session grants are checked with the grant key of "
			 "nsrd of %s",
			 server);
	} else {
		nsr_buf_addf(why,
			     "cannot check nsrd's grant: the grant key "
			     "of server %s is not to be had (%s); ",
			     server, err.data);
	}
	OPENSSL_cleanse(r.key, sizeof(r.key));
	xdr_free(NSR_XDR(xdr_grant_key_res), (char *)&r);
	nsr_nsrd_close(d);
	nsr_buf_release(&err);
	return rc;
}

/* check_grant - NSR_OK if g grants kind on ssid (see the top).  A grant
 * of another kind, save set or time is refused without the key; one
 * whose mac does not match has the key fetched again first, at most
 * every KEY_REFETCH_SEC (nsrd's key file was replaced). */
static int check_grant(const char *server, const nsr_grant *g,
		       uint32_t kind, uint32_t ssid, struct nsr_buf *why)
{
	int64_t now = time(NULL);
	int rc = NSR_ERR_PERM;

	if (!g || ssid == 0 || g->ssid != ssid || g->kind != kind ||
	    g->expires < now)
		return NSR_ERR_PERM;
	pthread_mutex_lock(&g_key_mu);
	if (!g_have_key)
		fetch_key(server, why);
	if (g_have_key)
		rc = nsr_rpc_grant_check(g_key, g, kind, ssid, now);
	if (rc == NSR_ERR_PERM && g_have_key &&
	    now - g_fetched >= KEY_REFETCH_SEC &&
	    fetch_key(server, why) == NSR_OK)
		rc = nsr_rpc_grant_check(g_key, g, kind, ssid, now);
	pthread_mutex_unlock(&g_key_mu);
	return rc;
}

/* read_grant - the read grant of args' list for ssid, or NULL. */
static const nsr_grant *read_grant(const mmd_read_args *a, uint32_t ssid)
{
	for (u_int i = 0; i < a->grants.grants_len; i++)
		if (a->grants.grants_val[i].ssid == ssid &&
		    a->grants.grants_val[i].kind == NSR_GRANT_READ)
			return &a->grants.grants_val[i];
	return NULL;
}

/* granted - the grant check of an own-class procedure: NSR_OK, or
 * NSR_ERR_PERM with *ssid_out the save set refused. */
static int granted(const char *server, const struct nsr_rpc_proc *p,
		   const void *args, uint32_t *ssid_out, struct nsr_buf *why)
{
	const mmd_begin_args *b = NULL;
	const mmd_read_args *r;

	if (p->proc == MMD_SS_BEGIN)
		b = args;
	else if (p->proc == MMD_CLONE_BEGIN)
		b = &((const mmd_clone_begin_args *)args)->b;
	if (b) {
		*ssid_out = b->ssid;
		return check_grant(server, &b->grant, NSR_GRANT_WRITE, b->ssid,
				   why);
	}
	if (p->proc != MMD_READ_OPEN)
		return NSR_ERR_PERM;
	r = args;
	*ssid_out = r->ssid;
	if (r->ssid && check_grant(server, read_grant(r, r->ssid),
				   NSR_GRANT_READ, r->ssid, why) != NSR_OK)
		return NSR_ERR_PERM;
	for (u_int i = 0; i < r->frags.frags_len; i++) {
		uint32_t s = r->frags.frags_val[i].ssid;

		if (r->ssid && (s == 0 || s == r->ssid))
			continue;
		*ssid_out = s;
		if (check_grant(server, read_grant(r, s), NSR_GRANT_READ, s,
				why) != NSR_OK)
			return NSR_ERR_PERM;
	}
	return NSR_OK;
}

/* mmd_authz - authz of the dispatch table (see above); refusals logged. */
int mmd_authz(void *ctx, const struct nsr_rpc_call *call,
	      const struct nsr_rpc_proc *p, const void *args,
	      struct nsr_buf *why)
{
	struct mmd *m = ctx;
	const char *server = m->server ? m->server : "localhost";
	char who[NSR_RPC_USER_MAX + 300];
	uint32_t ssid = 0;

	if (server_root(server, call))
		return NSR_OK;
	nsr_rpc_call_who(call, who, sizeof(who));
	if (p->flags & NSR_RPC_OWN) {
		struct nsr_buf note;

		nsr_buf_init(&note, 0);
		if (granted(server, p, args, &ssid, &note) == NSR_OK) {
			nsr_buf_release(&note);
			return NSR_OK;
		}
		nsr_buf_addf(why,
			     "denied: %s of save set %u on device %s by "
			     "%s: %sno grant of nsrd of %s for it; save and "
			     "recover through the server",
			     p->name, ssid, m->dev_name, who,
			     note.len ? note.data : "", server);
		nsr_buf_release(&note);
	} else {
		nsr_buf_addf(why,
			     "denied: %s on device %s by %s: not nsrd "
			     "of %s; use nsrmm through the server",
			     p->name, m->dev_name, who, server);
	}
	nsr_warn("%s", why->data);
	return NSR_ERR_PERM;
}
