/*
 * authz.c - who may read which client's save sets from the media
 * database (nsrd(8), AUTHORIZATION): administrators all, a host its own
 * client's, and whoever a client's remote access lists; the rules are
 * policy.h's, on a copy of the server's resources re-read when they
 * change.  A query shows only the rows its caller may read; a save set
 * asked for by id is refused.  Writes (the dispatch table classes them
 * NSR_RPC_ADMIN) are for the server's own programs: nsrd, movers on the
 * server and its storage nodes, and administrators (nsrim, scanner).
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/log.h"
#include "nsr/policy.h"
#include "mmdbd.h"

static struct nsr_policy *policy;

/* mmdbd_authz_init - the policy of the resources under root (kept for
 * the life of the process: handlers may ask until it exits). */
int mmdbd_authz_init(const char *root)
{
	return nsr_policy_open(root, &policy);
}

/* mmdbd_authz - authz of the dispatch table: a write by one of the
 * server's programs or an administrator (refusals logged). */
int mmdbd_authz(void *ctx, const struct nsr_rpc_call *call,
		const struct nsr_rpc_proc *p, const void *args,
		struct nsr_buf *why)
{
	char what[64];

	NSR_UNUSED(ctx);
	NSR_UNUSED(args);
	if (nsr_policy_call_daemon(policy, call))
		return NSR_OK;
	snprintf(what, sizeof(what), "media database %s", p->name);
	nsr_policy_deny(call, what, NSR_POLICY_NOT_DAEMON, why);
	nsr_warn("%s", why->data);
	return NSR_ERR_PERM;
}

/* mmdbd_reader_of - who calls, and whether they may read everything. */
void mmdbd_reader_of(const struct nsr_rpc_call *call, struct mmdbd_reader *r)
{
	const char *u = nsr_rpc_call_user(call);

	memset(r, 0, sizeof(*r));
	r->stated = u != NULL;
	snprintf(r->user, sizeof(r->user), "%s", u ? u : "");
	snprintf(r->host, sizeof(r->host), "%s", nsr_rpc_call_host(call));
	nsr_policy_refresh(policy);
	r->all = nsr_policy_admin(policy, u, r->host);
	r->daemon = r->all || nsr_policy_call_daemon(policy, call);
}

/* mmdbd_reader_may - 1 if r may read client's save sets. */
int mmdbd_reader_may(const struct mmdbd_reader *r, const char *client)
{
	return r->all || nsr_policy_reader(policy, client,
					   r->stated ? r->user : NULL,
					   r->host);
}

/* mmdbd_reader_deny - st: the caller may not read save set ssid of
 * client (logged). */
void mmdbd_reader_deny(const struct nsr_rpc_call *call, uint32_t ssid,
		       const char *client, nsr_status *st)
{
	struct nsr_buf why;
	char what[300];

	nsr_buf_init(&why, 0);
	snprintf(what, sizeof(what), "read of save set %u of client '%s'",
		 ssid, client);
	nsr_policy_deny(call, what, NSR_POLICY_NOT_READER, &why);
	nsr_warn("%s", why.data);
	nsr_status_set(st, NSR_ERR_PERM, "%s", why.data);
	nsr_buf_release(&why);
}
