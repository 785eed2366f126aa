/*
 * status.c - filling nsr_status and result strings (see rpc_status.h).
 */
#include "nsr/compat.h"

#include "nsr/rpc.h"
#include "nsr/rpc_status.h"
#include "nsr/xmalloc.h"

void nsr_status_vset(nsr_status *st, int code, const char *fmt, va_list ap)
{
	char msg[NSR_MSG_MAX];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	free(st->msg);
	st->code = code;
	st->msg = nsr_xstrdup(msg);
}

void nsr_status_set(nsr_status *st, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	nsr_status_vset(st, code, fmt, ap);
	va_end(ap);
}

void nsr_status_ok(nsr_status *st)
{
	nsr_status_set(st, 0, "%s", "");
}

char *nsr_rpc_str(const char *s)
{
	return nsr_xstrdup(s ? s : "");
}
