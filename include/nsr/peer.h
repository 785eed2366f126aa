/*
 * peer.h - a long-lived connection to one program on one host: the unit
 * every client library (src/clnt/<daemon>) is built on.
 *
 * A peer is named by host name and program; the port comes from that
 * host's locator (nsrexecd) unless given.  The connection is opened on the
 * first call, kept open, and dropped after a transport failure; the next
 * call opens it again.  While connecting, a peer with a wait time keeps
 * trying with back-off (100 ms doubling to 2 s) until the wait is over, so
 * a daemon that is restarting costs its callers a delay, not a failure.
 * A host name that does not resolve is never retried.
 *
 * Calling sequence:
 *   1. nsr_peer_new(host, port, prog, vers, &p)     (port 0 = locate);
 *   2. optionally nsr_peer_set_wait(p, ms), nsr_peer_set_timeout(p, ms);
 *   3. nsr_peer_call(p, proc, xargs, &a, xres, &r, flags) as often as
 *      needed (the caller frees r with xdr_free whatever the result);
 *      NSR_PEER_RETRY marks an idempotent procedure: after a transport
 *      failure it is repeated on a new connection, once at once and then
 *      with back-off while the wait lasts;
 *   4. nsr_peer_free(p).
 * A one-way data stream uses nsr_peer_clnt(p) after nsr_peer_connect(p).
 *
 * Errors are NSR_ERR_CONNECT (cannot reach: refused, not registered with
 * the locator, timed out), NSR_ERR_NOTFOUND (the host name does not
 * resolve), NSR_ERR_RPC / NSR_ERR_TIMEOUT (the call failed on the way; its
 * outcome is unknown), NSR_ERR_UNSUPPORTED (the program there does not
 * know the procedure, PROC_UNAVAIL: an older version; the call did
 * nothing and the connection stays open), or NSR_ERR_PROTO.
 * nsr_peer_errmsg() says, in words for an administrator, which program
 * on which host (and port) failed and why.  A peer is not thread-safe:
 * one per thread, or a lock around it.
 */
#ifndef NSR_PEER_H
#define NSR_PEER_H

#include <stdint.h>

#include <rpc/rpc.h>

struct nsr_rpc_clnt;
struct nsr_peer;

#define NSR_PEER_RETRY 0x1 /* idempotent: repeat after a transport failure */

/* Default wait for daemons reaching the server's databases: env
 * NSR_PEER_WAIT_MS, else this. */
#define NSR_PEER_WAIT_DEFAULT_MS 30000

/* nsr_peer_new - a peer for prog/vers on host (port 0 = ask the host's
 * locator).  Does not connect.  NSR_OK or NSR_ERR_NOMEM. */
int nsr_peer_new(const char *host, int port, uint32_t prog, uint32_t vers,
		 struct nsr_peer **out);
/* nsr_peer_set_wait - keep trying to connect for up to wait_ms (0 = one
 * attempt, the default). */
void nsr_peer_set_wait(struct nsr_peer *p, int wait_ms);
/* nsr_peer_wait_default - NSR_PEER_WAIT_MS from the environment, or
 * NSR_PEER_WAIT_DEFAULT_MS. */
int nsr_peer_wait_default(void);
/* nsr_peer_set_timeout - reply timeout of later calls (0 = transport
 * default). */
void nsr_peer_set_timeout(struct nsr_peer *p, int reply_ms);
/* nsr_peer_connect - connect now if not connected (honours the wait). */
int nsr_peer_connect(struct nsr_peer *p);
/* nsr_peer_call - one call (connecting first if needed). */
int nsr_peer_call(struct nsr_peer *p, uint32_t proc, xdrproc_t xargs,
		  void *args, xdrproc_t xres, void *res, unsigned flags);
/* nsr_peer_clnt - the open connection (NULL when not connected); for
 * pipelined one-way calls.  After a failure on it call nsr_peer_drop. */
struct nsr_rpc_clnt *nsr_peer_clnt(struct nsr_peer *p);
/* nsr_peer_drop - close the connection; the next call reconnects. */
void nsr_peer_drop(struct nsr_peer *p);
/* nsr_peer_fail - remember a failure on the connection from
 * nsr_peer_clnt (its transport text), close it, return rc. */
int nsr_peer_fail(struct nsr_peer *p, int rc);
/* nsr_peer_host / nsr_peer_port - the host as named and the port of the
 * current or last connection (0 if never connected). */
const char *nsr_peer_host(const struct nsr_peer *p);
int nsr_peer_port(const struct nsr_peer *p);
/* nsr_peer_errmsg - the last failure, naming program, host and port. */
const char *nsr_peer_errmsg(const struct nsr_peer *p);
/* nsr_peer_outcome - what a client library returns for a call that
 * gave rc and, when rc is NSR_OK, the peer's status code and msg: rc with
 * nsr_peer_errmsg in err, or code with prefix and msg in err (a
 * non-negative failure code is NSR_ERR_PROTO).  err may be NULL. */
struct nsr_buf;
int nsr_peer_outcome(const struct nsr_peer *p, int rc, int code,
		     const char *msg, const char *prefix, struct nsr_buf *err);
/* nsr_peer_free - close and free (NULL is fine). */
void nsr_peer_free(struct nsr_peer *p);

#endif /* NSR_PEER_H */
