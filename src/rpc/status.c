/*
 * status.c - filling nsr_status and result strings (see rpc_status.h).
 */
#include "nsr/compat.h"

#include "nsr/rpc.h"
#include "nsr/rpc_status.h"
#include "nsr/xmalloc.h"

/* nsr_status_vset - va_list form of nsr_status_set. */
void nsr_status_vset(nsr_status *st, int code, const char *fmt, va_list ap)
{
	char msg[NSR_MSG_MAX];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	free(st->msg);
	st->code = code;
	st->msg = nsr_xstrdup(msg);
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

/* nsr_rpc_str - malloc'ed copy for a result field ("" for NULL). */
char *nsr_rpc_str(const char *s)
{
	return nsr_xstrdup(s ? s : "");
}
