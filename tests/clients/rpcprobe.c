/*
 * rpcprobe - does a daemon admit this host's calls?  For the TLS system
 * test: one connection through the transport (with this host's
 * certificate if it has one, NSR_ROOT), one call of a procedure with no
 * arguments.
 *
 *   rpcprobe HOST PORT DAEMON PROC      (DAEMON: nsrd, nsrexecd, ...)
 *
 * Exit 0: the call was answered (admitted; a procedure that wanted
 * arguments answers "could not decode", which is admitted too);
 * 3: denied (no TLS, or a revoked certificate); 4: no connection (the
 * TLS handshake failed: no certificate of this datazone); 5: another
 * failure; 2: usage.  The message goes to standard error.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsrd.h"
#include "nsr/rpc/nsrexecd.h"
#include "nsr/rpc/nsrindex.h"
#include "nsr/rpc/nsrjob.h"
#include "nsr/rpc/nsrmmd.h"
#include "nsr/rpc/nsrmmdb.h"
#include "nsr/rpc/nsrsnm.h"

/* prog_of - the program number of a daemon's name (version 1), 0 if
 * unknown. */
static uint32_t prog_of(const char *name)
{
	static const uint32_t progs[] = {
		NSRD_PROG,   NSREXECD_PROG, NSRINDEXD_PROG, NSRJOBD_PROG,
		NSRMMD_PROG, NSRMMDBD_PROG, NSRSNMD_PROG};

	for (size_t i = 0; i < NSR_ARRAY_SIZE(progs); i++)
		if (strcmp(nsr_rpc_prog_name(progs[i]), name) == 0)
			return progs[i];
	return 0;
}

/* main - connect, call, classify. */
int main(int argc, char **argv)
{
	struct nsr_rpc_clnt *c = NULL;
	struct nsr_buf err;
	uint32_t prog = argc == 5 ? prog_of(argv[3]) : 0;
	int rc;

	if (!prog) {
		fprintf(stderr, "usage: rpcprobe HOST PORT DAEMON PROC\n");
		return 2;
	}
	nsr_buf_init(&err, 0);
	rc = nsr_rpc_connect(argv[1], atoi(argv[2]), prog, 1, 5000, &c, &err);
	if (rc) {
		fprintf(stderr, "rpcprobe: %s\n", err.data);
		nsr_buf_release(&err);
		return 4;
	}
	nsr_buf_release(&err);
	rc = nsr_rpc_call(c, (uint32_t)strtoul(argv[4], NULL, 0),
			  NSR_XDR(xdr_void), NULL, NSR_XDR(xdr_void), NULL);
	fprintf(stderr, "rpcprobe: %s\n",
		rc ? nsr_rpc_last_error(c) : "answered");
	if (rc && strstr(nsr_rpc_last_error(c), "could not decode"))
		rc = NSR_OK;
	nsr_rpc_close(c);
	return rc == NSR_OK ? 0 : rc == NSR_ERR_PERM ? 3 : 5;
}
