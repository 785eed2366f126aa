/*
 * status.c - filling nsr_status and result strings (see rpc_status.h).
 */
#include "nsr/compat.h"

#include "nsr/rpc.h"
#include "nsr/rpc_status.h"
#include "nsr/xmalloc.h"

void nsr_status_set(nsr_status *st, int code, const char *fmt, ...)
{
	va_list ap;
	char msg[2048];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	free(st->msg);
	st->code = code;
	st->msg = nsr_xstrdup(msg);
}

void nsr_status_ok(nsr_status *st)
{
	nsr_status_set(st, 0, "%s", "");
}

char *nsr_rpc_str(const char *s)
{
	return nsr_xstrdup(s ? s : "");
}
