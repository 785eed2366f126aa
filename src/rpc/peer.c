/*
 * peer.c - long-lived connections to one program on one host (peer.h).
 *
 * Invariants:
 *  1. p->c is either NULL or a connection on which no call has failed;
 *     after a transport failure it is closed at once, so a broken stream
 *     is never reused;
 *  2. a call is repeated only when the caller flagged it idempotent,
 *     only on a new connection, and only within the peer's wait (once
 *     when there is none);
 *  3. connecting never takes longer than the wait plus one connect and
 *     locate timeout; a host name that does not resolve ends it at once.
 */
#include "nsr/compat.h"

#include <time.h>

#include "nsr/buf.h"
#include "nsr/clock.h"
#include "nsr/err.h"
#include "nsr/peer.h"
#include "nsr/rpc.h"

#define PEER_ERR_MAX 1024
#define BACKOFF_FIRST_MS 100
#define BACKOFF_MAX_MS 2000

struct nsr_peer {
	char *host;
	int fixed_port; /* 0 = ask the locator at every connect */
	int port;	/* of the current or last connection */
	uint32_t prog, vers;
	int wait_ms, reply_ms;
	struct nsr_rpc_clnt *c;
	char err[PEER_ERR_MAX];
};

/* sleep_ms - sleep (EINTR ends it early, which is harmless here). */
static void sleep_ms(long long ms)
{
	struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};

	nanosleep(&ts, NULL);
}

/* nsr_peer_new - a peer, not yet connected. */
int nsr_peer_new(const char *host, int port, uint32_t prog, uint32_t vers,
		 struct nsr_peer **out)
{
	struct nsr_peer *p;

	*out = NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NSR_ERR_NOMEM;
	p->host = strdup(host && *host ? host : "localhost");
	if (!p->host) {
		free(p);
		return NSR_ERR_NOMEM;
	}
	p->fixed_port = port > 0 ? port : 0;
	p->prog = prog;
	p->vers = vers;
	*out = p;
	return NSR_OK;
}

/* nsr_peer_wait_default - NSR_PEER_WAIT_MS or the default. */
int nsr_peer_wait_default(void)
{
	const char *e = getenv("NSR_PEER_WAIT_MS");
	long v = e && *e ? strtol(e, NULL, 10) : -1;

	return v >= 0 && v <= 3600000 ? (int)v : NSR_PEER_WAIT_DEFAULT_MS;
}

/* nsr_peer_set_wait - how long connecting may keep trying. */
void nsr_peer_set_wait(struct nsr_peer *p, int wait_ms)
{
	p->wait_ms = wait_ms > 0 ? wait_ms : 0;
}

/* nsr_peer_set_timeout - reply timeout of later calls. */
void nsr_peer_set_timeout(struct nsr_peer *p, int reply_ms)
{
	p->reply_ms = reply_ms;
	if (p->c && reply_ms > 0)
		nsr_rpc_set_timeout(p->c, reply_ms);
}

/* connect_once - locate (unless the port is fixed) and connect. */
static int connect_once(struct nsr_peer *p, struct nsr_buf *why)
{
	int port = p->fixed_port, rc;

	if (!port) {
		rc = nsr_rpc_locate(p->host, p->prog, p->vers, &port, why);
		if (rc != NSR_OK)
			return rc;
	}
	p->port = port;
	rc = nsr_rpc_connect(p->host, port, p->prog, p->vers, 0, &p->c, why);
	if (rc != NSR_OK)
		p->c = NULL;
	else if (p->reply_ms > 0)
		nsr_rpc_set_timeout(p->c, p->reply_ms);
	return rc;
}

/* nsr_peer_connect - connect, trying again with back-off within the
 * wait: the daemon may be restarting (not registered, refused). */
int nsr_peer_connect(struct nsr_peer *p)
{
	long long end = nsr_clock_mono_ms() + p->wait_ms;
	long long delay = BACKOFF_FIRST_MS;
	struct nsr_buf why;
	int rc, tries = 0;

	/* A connection the server closed while idle (NSR_RPC_IDLE_SEC, an
	 * eviction at its connection cap) is replaced silently: nothing of
	 * the next call has been sent on it. */
	if (p->c && nsr_rpc_closed(p->c))
		nsr_peer_drop(p);
	if (p->c)
		return NSR_OK;
	nsr_buf_init(&why, PEER_ERR_MAX);
	for (;;) {
		nsr_buf_reset(&why);
		rc = connect_once(p, &why);
		tries++;
		/* NSR_ERR_PERM: certificates (nsr/tls.h) do not change by
		 * waiting. */
		if (rc == NSR_OK || rc == NSR_ERR_NOHOST ||
		    rc == NSR_ERR_NOMEM || rc == NSR_ERR_PERM ||
		    nsr_clock_mono_ms() + delay > end)
			break;
		sleep_ms(delay);
		delay = delay * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : delay * 2;
	}
	if (rc != NSR_OK) {
		char tried[64] = "";

		/* "Not registered" at the locator means the daemon cannot
		 * be reached: never let a caller read it as an answer of
		 * the daemon (a volume or save set not found). */
		if (rc == NSR_ERR_NOTFOUND)
			rc = NSR_ERR_CONNECT;
		if (tries > 1)
			snprintf(tried, sizeof(tried), " (tried %d times in "
				 "%d s)", tries, (p->wait_ms + 999) / 1000);
		snprintf(p->err, sizeof(p->err),
			 "cannot reach %s on host %s%s: "
			 "%s",
			 nsr_rpc_prog_name(p->prog), p->host, tried,
			 why.len ? why.data : nsr_strerror(rc));
	}
	nsr_buf_release(&why);
	return rc;
}

/* nsr_peer_fail - a failure on the open connection: say so, close it. */
int nsr_peer_fail(struct nsr_peer *p, int rc)
{
	/* The transport's words name the program, host and port. */
	snprintf(p->err, sizeof(p->err), "%s",
		 p->c ? nsr_rpc_last_error(p->c) : nsr_strerror(rc));
	nsr_peer_drop(p);
	return rc;
}

/* nsr_peer_call - one call, connecting first.  An idempotent call is
 * repeated on a new connection after a transport failure: once at once,
 * then with back-off for as long as the peer's wait lasts (a daemon that
 * is being killed may still accept a connection or two before its
 * successor registers). */
int nsr_peer_call(struct nsr_peer *p, uint32_t proc, xdrproc_t xargs,
		  void *args, xdrproc_t xres, void *res, unsigned flags)
{
	long long end = nsr_clock_mono_ms() + p->wait_ms;
	long long delay = BACKOFF_FIRST_MS;
	int rc;

	p->err[0] = '\0';
	for (int attempt = 0;; attempt++) {
		rc = nsr_peer_connect(p);
		if (rc != NSR_OK)
			return rc;
		rc = nsr_rpc_call(p->c, proc, xargs, args, xres, res);
		if (rc == NSR_OK)
			return NSR_OK;
		if (rc == NSR_ERR_UNSUPPORTED) { /* answered: keep the link */
			snprintf(p->err, sizeof(p->err), "%s",
				 nsr_rpc_last_error(p->c));
			return rc;
		}
		nsr_peer_fail(p, rc);
		if (!(flags & NSR_PEER_RETRY) || rc == NSR_ERR_TIMEOUT ||
		    rc == NSR_ERR_PERM ||
		    (attempt > 0 && nsr_clock_mono_ms() + delay > end))
			return rc;
		/* A partly decoded reply: free it (pointers go back to
		 * NULL) so the next decode allocates afresh. */
		xdr_free(xres, res);
		if (attempt > 0) {
			sleep_ms(delay);
			delay = delay * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS
							   : delay * 2;
		}
	}
}

/* nsr_peer_clnt - the open connection or NULL. */
struct nsr_rpc_clnt *nsr_peer_clnt(struct nsr_peer *p)
{
	return p->c;
}

/* nsr_peer_drop - close the connection. */
void nsr_peer_drop(struct nsr_peer *p)
{
	nsr_rpc_close(p->c);
	p->c = NULL;
}

/* nsr_peer_host - the host as named. */
const char *nsr_peer_host(const struct nsr_peer *p)
{
	return p->host;
}

/* nsr_peer_port - port of the current or last connection. */
int nsr_peer_port(const struct nsr_peer *p)
{
	return p->port;
}

/* nsr_peer_errmsg - the last failure in words. */
const char *nsr_peer_errmsg(const struct nsr_peer *p)
{
	return p->err[0] ? p->err : "no error";
}

/* nsr_peer_outcome - a call's result: the transport's words, or the
 * peer's status (a non-negative failure code is a protocol error). */
int nsr_peer_outcome(const struct nsr_peer *p, int rc, int code,
		     const char *msg, const char *prefix, struct nsr_buf *err)
{
	if (rc != NSR_OK) {
		if (err)
			nsr_buf_addstr(err, nsr_peer_errmsg(p));
		return rc;
	}
	if (code == NSR_OK)
		return NSR_OK;
	if (err)
		nsr_buf_addf(err, "%s%s", prefix ? prefix : "",
			     msg && *msg ? msg : nsr_strerror(code));
	return code < 0 ? code : NSR_ERR_PROTO;
}

/* nsr_peer_free - close and free. */
void nsr_peer_free(struct nsr_peer *p)
{
	if (!p)
		return;
	nsr_peer_drop(p);
	free(p->host);
	free(p);
}
