/*
 * authz.c - nsrd's authorization policy (nsrd(8), AUTHORIZATION): who
 * may call the procedures its dispatch table classes as administrative
 * (resource changes, labels, mounts, volume modes and deletes, savegrp,
 * clones) or own-client (save start and the current data key; recover start
 * checks inside its handler, once it knows the save set's client).
 *
 * The caller is user@host from the transport (nsr/rpc.h): the host its
 * certificate names, the user its program stated.  The rules (who is an
 * administrator, which host is a client's own, remote access) are
 * policy.h's, asked of nsrd's resource database.  A host may save its
 * own client's data; recovering a client's data needs its own host, an
 * administrator or the client's `remote access`.  Every denial is
 * logged with who and what, and the caller gets the same words.
 * Runs under the RPC server mutex (every nsrd procedure is SERIAL, and
 * SAVE_START, which locks itself, asks through nsr_rpc_authorize under
 * it).
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/log.h"
#include "nsr/policy.h"
#include "nsrd.h"

/* is_admin - 1 if user@host is an administrator of this server. */
static int is_admin(struct nsrd *n, const char *user, const char *host)
{
	return nsr_policy_is_admin(n->res, n->server_name, user, host);
}

/* deny - the refusal's words (policy.h) into why, and logged. */
static int deny(const struct nsr_rpc_call *call, const char *what,
		enum nsr_policy_why reason, struct nsr_buf *why)
{
	int rc = nsr_policy_deny(call, what, reason, why);

	nsr_warn("%s", why->data);
	return rc;
}

/* nsrd_authz_client - may the caller read client's data (verb names
 * the operation: "recover", "browse")?  The server's administrators,
 * the client's own host, and whoever its remote access lists may. */
int nsrd_authz_client(struct nsrd *n, const struct nsr_rpc_call *call,
		      const char *client, const char *verb,
		      struct nsr_buf *why)
{
	const char *user = nsr_rpc_call_user(call);
	const char *host = nsr_rpc_call_host(call);
	char what[NSR_SHORT_MAX + 64];

	if (nsr_policy_may_read(n->res, n->server_name, client, user, host))
		return NSR_OK;
	snprintf(what, sizeof(what), "%s of client '%s'", verb, client);
	return deny(call, what, NSR_POLICY_NOT_READER, why);
}

/* describe - what an administrative call does, for the log. */
static void describe(struct nsrd *n, const struct nsr_rpc_proc *p,
		     const void *args, char *out, size_t len)
{
	const struct nsr_res *r = NULL;
	struct nsr_res *parsed = NULL;
	struct nsr_res_error perr;
	const res_text_args *t = args;

	switch (p->proc) {
	case RES_CREATE:
		memset(&perr, 0, sizeof(perr));
		if (nsr_res_parse_attrs(t->text, &parsed, &perr) == NSR_OK)
			r = parsed;
		/* fall through */
	case RES_UPDATE:
	case RES_DELETE:
		if (!r)
			r = nsr_resdb_get(n->res, t->id);
		snprintf(out, len, "res %s %s '%s'",
			 p->proc == RES_CREATE	 ? "create"
			 : p->proc == RES_UPDATE ? "update"
						 : "delete",
			 r && nsr_res_type(r) ? nsr_res_type(r) : "resource",
			 r && nsr_res_get(r, "name") ? nsr_res_get(r, "name")
						     : t->id);
		nsr_res_free(parsed);
		return;
	case LABEL:
	case MOUNT:
	case UNMOUNT:
		snprintf(out, len, "%s of device '%s'", p->name,
			 ((const label_args *)args)->device);
		return;
	case VOL_MODE:
		snprintf(out, len, "volume %s mode %s",
			 ((const vol_mode_args *)args)->volume,
			 ((const vol_mode_args *)args)->mode);
		return;
	case VOL_DELETE:
		if (((const vol_del_args *)args)->ssid)
			snprintf(out, len, "delete of save set %u",
				 ((const vol_del_args *)args)->ssid);
		else
			snprintf(out, len, "delete of volume %s",
				 ((const vol_del_args *)args)->volume);
		return;
	case SAVEGRP:
		snprintf(out, len, "savegrp of group '%s'",
			 ((const savegrp_args *)args)->group);
		return;
	case CLONE_START:
		snprintf(out, len, "clone of save set %u to pool '%s'",
			 ((const clone_start_args *)args)->ssid,
			 ((const clone_start_args *)args)->pool);
		return;
	default:
		snprintf(out, len, "%s", p->name);
	}
}

/* own_client - the client an own-client procedure's arguments name, or
 * NULL: a save's, and the data key's (KEY_CURRENT is the first call of
 * every save, so it is refused as the save). */
static const char *own_client(const struct nsr_rpc_proc *p, const void *args)
{
	switch (p->proc) {
	case SAVE_START:
		return ((const save_start_args *)args)->client;
	case KEY_CURRENT:
		return ((const key_cur_args *)args)->client;
	default:
		return NULL;
	}
}

/* nsrd_authz - the transport's question for a classed procedure. */
int nsrd_authz(void *ctx, const struct nsr_rpc_call *call,
	       const struct nsr_rpc_proc *p, const void *args,
	       struct nsr_buf *why)
{
	struct nsrd *n = ctx;
	const char *user = nsr_rpc_call_user(call);
	const char *host = nsr_rpc_call_host(call);
	const char *client;
	char what[NSR_NAME_MAX + 128];

	if (is_admin(n, user, host))
		return NSR_OK;
	if (p->proc == GRANT_KEY &&
	    nsr_policy_is_daemon(n->res, n->server_name, user, host))
		return NSR_OK;
	client = own_client(p, args);
	if (client) {
		if (nsr_policy_own_client(n->res, client, host))
			return NSR_OK;
		snprintf(what, sizeof(what), "save of client '%s'", client);
		return deny(call, what, NSR_POLICY_NOT_OWN, why);
	}
	describe(n, p, args, what, sizeof(what));
	return deny(call, what, NSR_POLICY_NOT_ADMIN, why);
}
