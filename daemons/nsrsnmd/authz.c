/*
 * authz.c - who may ask this storage node for a data mover (SNM_MOVER,
 * classed NSR_RPC_ADMIN): root of this host (the server's own nsrd, or
 * an administrator here) or root of a server this storage node serves
 * (nsrexecd -S, handed to nsrsnmd as -S).  A mover is started on the
 * device path and for the server the request names, and the mover then
 * takes the labels and removals of that server's root: so a remote
 * caller may only name itself as the server.  Anyone else (a client
 * of the datazone with a valid certificate, a user) is refused with the
 * reason, and the refusal is logged.
 */
#include "nsr/compat.h"

#include "nsr/access.h"
#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/host.h"
#include "nsr/log.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsrsnm.h"
#include "nsr/xmalloc.h"

#include "snmd.h"

#define SERVERS_MAX 16

static char *g_servers[SERVERS_MAX];
static int g_nservers;

/* snmd_authz_server - -S NAME: a server this storage node serves; -1 on a
 * bad name or too many. */
int snmd_authz_server(const char *name)
{
	if (nsr_host_check(name) != NSR_OK || name[0] == '-' ||
	    g_nservers >= SERVERS_MAX)
		return -1;
	g_servers[g_nservers++] = nsr_xstrdup(name);
	return 0;
}

/* snmd_authz_free - forget the -S servers. */
void snmd_authz_free(void)
{
	for (int i = 0; i < g_nservers; i++)
		free(g_servers[i]);
	g_nservers = 0;
}

/* served - the -S server host is, or NULL. */
static const char *served(const char *host)
{
	for (int i = 0; i < g_nservers; i++)
		if (nsr_access_match_host(g_servers[i], host))
			return g_servers[i];
	return NULL;
}

/* snmd_authz - authz of the dispatch table (see above). */
int snmd_authz(void *ctx, const struct nsr_rpc_call *call,
	       const struct nsr_rpc_proc *p, const void *args,
	       struct nsr_buf *why)
{
	const snm_mover_args *a = p->proc == SNM_MOVER ? args : NULL;
	const char *user = nsr_rpc_call_user(call);
	const char *host = nsr_rpc_call_host(call);
	const char *srv;
	char self[NSR_HOST_MAX + 1], who[NSR_RPC_USER_MAX + 300];

	NSR_UNUSED(ctx);
	nsr_host_self(self, sizeof(self));
	nsr_rpc_call_who(call, who, sizeof(who));
	if (!user || strcmp(user, "root") != 0) {
		nsr_buf_addf(why,
			     "denied: %s by %s: only root of this host or "
			     "of a server it serves (nsrexecd -S) may start "
			     "data movers",
			     p->name, who);
	} else if (strcmp(host, "localhost") == 0 ||
		   nsr_access_match_host(self, host)) {
		return NSR_OK;
	} else if (!(srv = served(host))) {
		nsr_buf_addf(why,
			     "denied: %s by %s: %s is not a server of "
			     "this storage node (start its nsrexecd with -S "
			     "%s to serve it)",
			     p->name, who, host, host);
	} else if (a && !nsr_access_match_host(srv, a->server) &&
		   !nsr_access_match_host(a->server, host)) {
		nsr_buf_addf(why,
			     "denied: %s by %s: a mover for server '%s' "
			     "may only be asked for by that server",
			     p->name, who, a->server);
	} else {
		return NSR_OK;
	}
	nsr_warn("%s", why->data);
	return NSR_ERR_PERM;
}
