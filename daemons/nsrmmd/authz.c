/*
 * authz.c - who may label a mover's volume or remove save sets from it
 * (the procedures its dispatch table classes NSR_RPC_ADMIN): nsrd, i.e.
 * root on the mover's server, which has checked its own caller against
 * the administrator list (nsrd(8), AUTHORIZATION).  A mover on the
 * server's own host (server "localhost") also takes root of this host.
 * Save and recover sessions are not classed here: nsrd hands them out.
 */
#include "nsr/compat.h"

#include "nsr/access.h"
#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/host.h"
#include "nsr/log.h"
#include "mmd.h"

/* local_server - 1 if the mover's server is this host. */
static int local_server(const char *server)
{
	return strcmp(server, "localhost") == 0 ||
	       strncmp(server, "127.", 4) == 0 || strcmp(server, "::1") == 0;
}

/* mmd_authz - authz of the dispatch table (see above); refusals logged. */
int mmd_authz(void *ctx, const struct nsr_rpc_call *call,
	      const struct nsr_rpc_proc *p, const void *args,
	      struct nsr_buf *why)
{
	struct mmd *m = ctx;
	const char *user = nsr_rpc_call_user(call);
	const char *host = nsr_rpc_call_host(call);
	const char *server = m->server ? m->server : "localhost";
	char self[NSR_HOST_MAX + 1], who[NSR_RPC_USER_MAX + 300];

	NSR_UNUSED(args);
	nsr_host_self(self, sizeof(self));
	if (user && strcmp(user, "root") == 0 &&
	    (nsr_access_match_host(server, host) ||
	     strcmp(host, "localhost") == 0 ||
	     (local_server(server) && nsr_access_match_host(self, host))))
		return NSR_OK;
	nsr_rpc_call_who(call, who, sizeof(who));
	nsr_buf_addf(why, "denied: %s on device %s by %s: not nsrd of %s; "
		     "use nsrmm through the server", p->name, m->dev_name,
		     who, server);
	nsr_warn("%s", why->data);
	return NSR_ERR_PERM;
}
