/*
 * authz.c - nsrd's authorization policy (nsrd(8), AUTHORIZATION): who
 * may call the procedures its dispatch table classes as administrative
 * (resource changes, labels, mounts, volume modes and deletes, savegrp)
 * or own-client (save start; recover start checks inside its handler,
 * once it knows the save set's client).
 *
 * The caller is user@host from the transport (nsr/rpc.h): the host its
 * certificate names, the user its program stated.  Administrators are
 * the NSR resource's `administrator` entries, or, while it has none,
 * root on the server's host and root@localhost.  A host may save and
 * recover its own client's data (the client's name or one of its
 * aliases names the caller's host); recovering another client's data
 * needs that client's `remote access` to list the caller.  Every denial
 * is logged with who and what, and the caller gets the same words.
 * Runs under the RPC server mutex (every nsrd procedure is SERIAL).
 */
#include "nsr/compat.h"

#include "nsr/access.h"
#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/log.h"
#include "nsrd.h"

/* any_match - 1 if a value of attr of r admits user@host. */
static int any_match(const struct nsr_res *r, const char *attr,
		     const char *user, const char *host)
{
	long a = r ? nsr_res_find(r, attr) : -1;

	for (size_t j = 0; a >= 0 && j < nsr_res_attr_nvalues(r, (size_t)a);
	     j++)
		if (nsr_access_match(nsr_res_attr_value(r, (size_t)a, j), user,
				     host))
			return 1;
	return 0;
}

/* nsrd_is_admin - 1 if user@host is an administrator of this server. */
int nsrd_is_admin(struct nsrd *n, const char *user, const char *host)
{
	const struct nsr_res *s = nsrd_res_find1(n, "NSR", NULL);
	long a = s ? nsr_res_find(s, "administrator") : -1;
	char dflt[300];

	if (a >= 0 && nsr_res_attr_nvalues(s, (size_t)a) > 0)
		return any_match(s, "administrator", user, host);
	snprintf(dflt, sizeof(dflt), "root@%s", n->server_name);
	return nsr_access_match(dflt, user, host) ||
	       nsr_access_match("root@localhost", user, host);
}

/* own_client - 1 if host is the client's own: its name or an alias. */
static int own_client(struct nsrd *n, const char *client, const char *host)
{
	const struct nsr_res *c = nsrd_res_find1(n, "NSR client", client);
	long a = c ? nsr_res_find(c, "aliases") : -1;

	if (nsr_access_match_host(client, host))
		return 1;
	for (size_t j = 0; a >= 0 && j < nsr_res_attr_nvalues(c, (size_t)a);
	     j++)
		if (nsr_access_match_host(nsr_res_attr_value(c, (size_t)a, j),
					  host))
			return 1;
	return 0;
}

/* deny - log "denied: what by who: reason" and give the caller the
 * same words and what to do. */
static int deny(const struct nsr_rpc_call *call, const char *what,
		const char *reason, const char *todo, struct nsr_buf *why)
{
	char who[NSR_RPC_USER_MAX + 300];

	nsr_rpc_call_who(call, who, sizeof(who));
	nsr_warn("denied: %s by %s: %s", what, who, reason);
	nsr_buf_addf(why, "denied: %s by %s: %s; %s", what, who, reason,
		     todo);
	return NSR_ERR_PERM;
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

	if (nsrd_is_admin(n, user, host) || own_client(n, client, host) ||
	    any_match(nsrd_res_find1(n, "NSR client", client),
		      "remote access", user, host))
		return NSR_OK;
	snprintf(what, sizeof(what), "%s of client '%s'", verb, client);
	return deny(call, what, "not that client, not in its remote access",
		    "the client's remote access must list this user@host "
		    "(nsr_resource(5))", why);
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
	default:
		snprintf(out, len, "%s", p->name);
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
	char what[NSR_NAME_MAX + 128];

	if (nsrd_is_admin(n, user, host))
		return NSR_OK;
	if (p->proc == SAVE_START) {
		const save_start_args *a = args;

		if (own_client(n, a->client, host))
			return NSR_OK;
		snprintf(what, sizeof(what), "save of client '%s'",
			 a->client);
		return deny(call, what, "a host saves only its own data",
			    "run save on that client, or add this host to "
			    "the client's aliases", why);
	}
	describe(n, p, args, what, sizeof(what));
	return deny(call, what, "not an administrator",
		    "an administrator can add this user@host to the NSR "
		    "resource's administrator list (nsr_resource(5))", why);
}
