/*
 * err.c - text for the library error codes of err.h.
 */
#include "nsr/compat.h"

#include "nsr/err.h"

/* nsr_strerror - a static English string for an nsr_err code. */
const char *nsr_strerror(int rc)
{
	switch (rc) {
	case NSR_OK: return "success";
	case NSR_ERR_NOMEM: return "out of memory";
	case NSR_ERR_SYSTEM: return errno ? strerror(errno) : "system error";
	case NSR_ERR_IO: return "I/O error";
	case NSR_ERR_CORRUPT: return "data is corrupt";
	case NSR_ERR_INVAL: return "invalid argument";
	case NSR_ERR_NOTFOUND: return "not found";
	case NSR_ERR_EXISTS: return "already exists";
	case NSR_ERR_TOOBIG: return "too big";
	case NSR_ERR_TRUNCATED: return "truncated input";
	case NSR_ERR_BUSY: return "resource busy";
	case NSR_ERR_NOSPACE: return "no space left";
	case NSR_ERR_RPC: return "RPC failure";
	case NSR_ERR_PROTO: return "protocol error";
	case NSR_ERR_TIMEOUT: return "timed out";
	case NSR_ERR_READONLY: return "read-only";
	case NSR_ERR_CHECKSUM: return "checksum mismatch";
	case NSR_ERR_EOM: return "end of medium";
	case NSR_ERR_EOF: return "end of file (filemark)";
	case NSR_ERR_EOD: return "end of data";
	case NSR_ERR_STATE: return "in error state";
	case NSR_ERR_UNSUPPORTED: return "operation not supported";
	case NSR_ERR_PERM: return "permission denied";
	case NSR_ERR_SYNTAX: return "syntax error";
	case NSR_ERR_LIMIT: return "limit reached";
	case NSR_ERR_CONNECT: return "cannot connect";
	case NSR_ERR_MISMATCH: return "mismatch";
	case NSR_ERR_AGAIN: return "try again";
	case NSR_ERR_NOHOST: return "host name does not resolve";
	case NSR_ERR_WAIT: return "waiting: ask again later";
	}
	return "unknown error";
}
