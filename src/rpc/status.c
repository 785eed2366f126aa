/*
 * status.c - filling nsr_status and result strings (see rpc_status.h).
 */
#include "nsr/compat.h"

#include "nsr/rpc.h"
#include "nsr/rpc_status.h"

/* nsr_status_vset - va_list form of nsr_status_set. */
void nsr_status_vset(nsr_status *st, int code, const char *fmt, va_list ap)
{
	char msg[NSR_MSG_MAX];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	free(st->msg);
	st->code = code;
	st->msg = strdup(msg); /* NULL without memory: the reply fails to
				* encode and the caller sees an RPC error */
}

/* nsr_status_set - code and a formatted message, cut to NSR_MSG_MAX. */
void nsr_status_set(nsr_status *st, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	nsr_status_vset(st, code, fmt, ap);
	va_end(ap);
}

/* nsr_status_ok - code 0, empty message. */
void nsr_status_ok(nsr_status *st)
{
	nsr_status_set(st, 0, "%s", "");
}

/* nsr_rpc_str - malloc'ed copy for a result field ("" for NULL); NULL
 * without memory (the reply then fails to encode: an RPC error). */
char *nsr_rpc_str(const char *s)
{
	return strdup(s ? s : "");
}
