/*
 * rpc_status.h - filling the nsr_status that begins every OpenNSR RPC
 * result, and the rule behind it: XDR cannot encode a NULL string, and the
 * transport xdr_free()s results after sending, so every string in a result
 * is a malloc'ed copy, never NULL.
 */
#ifndef NSR_RPC_STATUS_H
#define NSR_RPC_STATUS_H

#include <stdarg.h>

#include "nsr/rpc/nsr_common.h"

/* nsr_status_set - code (0 or a negative nsr_err) and a formatted message
 * for an administrator (always allocated; "" for none; cut to the
 * protocol's NSR_MSG_MAX so the reply can always be encoded).  A message
 * already in st is freed. */
void nsr_status_set(nsr_status *st, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* nsr_status_vset - va_list form of nsr_status_set. */
void nsr_status_vset(nsr_status *st, int code, const char *fmt, va_list ap);
/* nsr_status_ok - code 0, empty message. */
void nsr_status_ok(nsr_status *st);
/* nsr_rpc_str - malloc'ed copy of s for a result field ("" for NULL). */
char *nsr_rpc_str(const char *s);

/* One line of a procedure table (see struct nsr_rpc_proc in rpc.h). */
#define NSR_RPC_PROC(num, name, targ, tres, fn, flags) \
	{num, name, NSR_XDR(xdr_##targ), sizeof(targ), NSR_XDR(xdr_##tres), \
	 sizeof(tres), fn, flags}

#endif /* NSR_RPC_STATUS_H */
