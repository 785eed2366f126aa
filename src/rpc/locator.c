/*
 * locator.c - client side of the nsrexecd locator: find which port serves
 * an OpenNSR program on a host, and register our own programs locally.
 */
#include "nsr/compat.h"

#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsrexecd.h"

/* nsr_rpc_locator_port - env NSR_PORTMAP_PORT or the default 7938. */
int nsr_rpc_locator_port(void)
{
	const char *e = getenv("NSR_PORTMAP_PORT");
	int v = e ? atoi(e) : 0;

	return v > 0 && v < 65536 ? v : NSR_PORTMAP_PORT_DEFAULT;
}

/* loc_connect - connect to host's locator (timeout_ms 0 = default). */
static int loc_connect(const char *host, int timeout_ms,
		       struct nsr_rpc_clnt **c, struct nsr_buf *err)
{
	int rc = nsr_rpc_connect(host, nsr_rpc_locator_port(), NSREXECD_PROG,
				 NSREXECD_V1, timeout_ms, c, err);

	if ((rc == NSR_ERR_CONNECT || rc == NSR_ERR_TIMEOUT) && err)
		nsr_buf_addstr(err, " (is nsrexecd running there?)");
	return rc;
}

/* nsr_rpc_locate - ask host's locator for the port of prog/vers. */
int nsr_rpc_locate(const char *host, uint32_t prog, uint32_t vers, int *port,
		   struct nsr_buf *err)
{
	struct nsr_rpc_clnt *c = NULL;
	loc_key key = {.prog = prog, .vers = vers};
	loc_get_res res;
	int rc;

	*port = 0;
	rc = loc_connect(host, 0, &c, err);
	if (rc)
		return rc;
	nsr_rpc_set_timeout(c, 10000);
	memset(&res, 0, sizeof(res));
	rc = nsr_rpc_call(c, LOC_GETPORT, NSR_XDR(xdr_loc_key), &key,
			  NSR_XDR(xdr_loc_get_res), &res);
	if (rc) {
		if (err)
			nsr_buf_addstr(err, nsr_rpc_last_error(c));
	} else if (res.st.code) {
		rc = res.st.code;
		if (err)
			nsr_buf_addf(err, "%s: %s", host, res.st.msg);
	} else {
		*port = res.port;
	}
	xdr_free(NSR_XDR(xdr_loc_get_res), &res);
	nsr_rpc_close(c);
	return rc;
}

/* nsr_rpc_open - locate prog on host and connect to it. */
int nsr_rpc_open(const char *host, uint32_t prog, uint32_t vers,
		 struct nsr_rpc_clnt **out, struct nsr_buf *err)
{
	int port, rc;

	*out = NULL;
	rc = nsr_rpc_locate(host, prog, vers, &port, err);
	if (rc)
		return rc;
	return nsr_rpc_connect(host, port, prog, vers, 0, out, err);
}

/* loc_simple - one call with an nsr_void_res result to the local locator,
 * within timeout_ms for the connect and for the reply. */
static int loc_simple(uint32_t proc, xdrproc_t xargs, void *args,
		      int timeout_ms, struct nsr_buf *err)
{
	struct nsr_rpc_clnt *c = NULL;
	nsr_void_res res;
	int rc;

	rc = loc_connect("127.0.0.1", timeout_ms, &c, err);
	if (rc)
		return rc;
	nsr_rpc_set_timeout(c, timeout_ms);
	memset(&res, 0, sizeof(res));
	rc = nsr_rpc_call(c, proc, xargs, args, NSR_XDR(xdr_nsr_void_res),
			  &res);
	if (rc && err)
		nsr_buf_addstr(err, nsr_rpc_last_error(c));
	if (!rc && res.st.code) {
		rc = res.st.code;
		if (err)
			nsr_buf_addstr(err, res.st.msg);
	}
	xdr_free(NSR_XDR(xdr_nsr_void_res), &res);
	nsr_rpc_close(c);
	return rc;
}

/* nsr_rpc_register - register prog/vers on port with the local locator. */
int nsr_rpc_register(uint32_t prog, uint32_t vers, int port,
		     struct nsr_buf *err)
{
	char name[NSR_SHORT_MAX];
	loc_reg_args a;

	snprintf(name, sizeof(name), "%s", program_invocation_short_name);
	a.prog = prog;
	a.vers = vers;
	a.port = port;
	a.pid = (int)getpid();
	a.name = name;
	return loc_simple(LOC_REGISTER, NSR_XDR(xdr_loc_reg_args), &a, 10000,
			  err);
}

/* nsr_rpc_unregister - forget prog/vers at the local locator.  Best effort
 * within one second: at shutdown nsrexecd may be stopping too, and the
 * locator forgets entries of dead processes by itself. */
int nsr_rpc_unregister(uint32_t prog, uint32_t vers)
{
	loc_key k = {.prog = prog, .vers = vers};

	return loc_simple(LOC_UNREGISTER, NSR_XDR(xdr_loc_key), &k, 1000, NULL);
}
