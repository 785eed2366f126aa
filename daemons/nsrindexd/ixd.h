/*
 * ixd.h - private to nsrindexd: its authorization (authz.c).
 */
#ifndef NSR_IXD_H
#define NSR_IXD_H

struct nsr_buf;
struct nsr_rpc_call;
struct nsr_rpc_proc;

/* ix_authz_init - the access policy of the resources under root. */
int ix_authz_init(const char *root);
/* ix_authz - authz of the dispatch table: the caller may read the index
 * of the client args names first. */
int ix_authz(void *ctx, const struct nsr_rpc_call *call,
	     const struct nsr_rpc_proc *p, const void *args,
	     struct nsr_buf *why);

#endif /* NSR_IXD_H */
