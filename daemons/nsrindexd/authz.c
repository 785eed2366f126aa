/*
 * authz.c - who may read which client's file index (nsrd(8),
 * AUTHORIZATION): administrators every index, a host its own client's,
 * and whoever a client's remote access lists; the rules are policy.h's,
 * on a copy of the server's resources re-read when they change.  The
 * dispatch table classes the procedures that read or write an index
 * NSR_RPC_OWN; every one of them takes the client's name as its first
 * argument.  Writes are for the client's own host (its saves), the
 * server's programs (nsrd, storage nodes) and administrators.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/log.h"
#include "nsr/policy.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsrindex.h"
#include "ixd.h"

static struct nsr_policy *policy;

/* ix_authz_init - the policy of the resources under root (kept for the
 * life of the process). */
int ix_authz_init(const char *root)
{
	return nsr_policy_open(root, &policy);
}

/* writes - 1 if proc changes an index. */
static int writes(uint32_t proc)
{
	return proc == IX_BEGIN || proc == IX_ADD || proc == IX_COMMIT ||
	       proc == IX_ABORT || proc == IX_DELETE || proc == IX_ADD_LISTS ||
	       proc == IX_DELETE_MANY;
}

/* ix_authz - the transport's question: may the caller read the index of
 * the client named first in args? */
int ix_authz(void *ctx, const struct nsr_rpc_call *call,
	     const struct nsr_rpc_proc *p, const void *args,
	     struct nsr_buf *why)
{
	const char *client = *(char *const *)args;
	char what[300];

	NSR_UNUSED(ctx);
	if (writes(p->proc)) {
		if (nsr_policy_call_own(policy, call, client) ||
		    nsr_policy_call_daemon(policy, call))
			return NSR_OK;
		snprintf(what, sizeof(what), "index %s of client '%s'",
			 p->name, client);
		nsr_policy_deny(call, what, NSR_POLICY_NOT_OWN, why);
		nsr_warn("%s", why->data);
		return NSR_ERR_PERM;
	}
	if (nsr_policy_call_reader(policy, call, client))
		return NSR_OK;
	snprintf(what, sizeof(what), "index %s of client '%s'", p->name,
		 client);
	nsr_policy_deny(call, what, NSR_POLICY_NOT_READER, why);
	nsr_warn("%s", why->data);
	return NSR_ERR_PERM;
}
