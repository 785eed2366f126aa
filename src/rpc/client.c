/*
 * client.c - ONC RPC client half of the transport.
 *
 * One connection, one XDR record stream.  nsr_rpc_call() sends a call and
 * waits for the reply with the same xid; nsr_rpc_send() sends a one-way call
 * to a procedure that never replies and returns at once, so a data stream
 * is pipelined: the only limit on calls in flight is the TCP window, and a
 * long round trip costs nothing per chunk (see the project's RPC notes).
 * Failures of one-way calls are reported by the server in the result of
 * the next ordinary call of the same session.
 *
 * nsr_rpc_call_send()/nsr_rpc_call_recv() split a call in two, so a client
 * can keep a few reply-bearing calls outstanding while its one-way calls
 * go on (an acknowledgement window).  The server answers the calls of one
 * connection in order and one-way calls have no reply, so replies arrive
 * in the order of the calls: the client remembers the outstanding xids in
 * a small ring (NSR_RPC_PENDING_MAX) and reads the oldest first.
 */
#include "nsr/compat.h"

#include <linux/sockios.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/rpc.h"
#include "rpc_int.h"

#define DEFAULT_CONNECT_MS 5000
#define DEFAULT_REPLY_MS (300 * 1000)

struct nsr_rpc_clnt {
	struct nsr_conn conn;
	XDR x;
	uint32_t prog, vers, xid;
	int reply_ms;
	int broken; /* transport failed: every later call fails */
	int stated; /* the first call carried NSR_AUTH_USER */
	char as_user[NSR_RPC_USER_MAX + 1]; /* stated instead of ours */
	char err[512];
	/* Calls sent by nsr_rpc_call_send whose reply is not read yet. */
	struct {
		uint32_t xid, proc;
	} pend[NSR_RPC_PENDING_MAX];
	unsigned npend, pend_head; /* count, index of the oldest */
};

/* connect_timeout - connect timeout in ms: env NSR_CONNECT_TIMEOUT_MS or
 * 5 s. */
static int connect_timeout(void)
{
	const char *e = getenv("NSR_CONNECT_TIMEOUT_MS");
	int v = e ? atoi(e) : 0;

	return v > 0 ? v : DEFAULT_CONNECT_MS;
}

/* connect_user - connect to host:port, stating user (NULL: this
 * process's name), and set up the record stream: over this host's
 * local socket when host is this one (local.c), else TCP with TLS; a
 * process that cannot read this host's key goes through nsrexecd
 * (vouch.c). */
static int connect_user(const char *host, int port, uint32_t prog,
			uint32_t vers, int timeout_ms, const char *user,
			struct nsr_rpc_clnt **out, struct nsr_buf *err)
{
	struct nsr_rpc_clnt *c;
	char path[4200];
	int rc;

	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NSR_ERR_NOMEM;
	/* This host's daemons: their local socket, where the kernel
	 * vouches for both ends (local.c); else TCP with TLS, or through
	 * nsrexecd for a process without this host's key. */
	rc = nsr_conn_connect_local(&c->conn, host, port,
				    user ? user : nsr_rpc_self_user());
	if (rc != 1) {
		/* connected */
	} else if (!user && nsr_rpc_vouch_wanted(path, sizeof(path))) {
		rc = nsr_rpc_vouch_connect(&c->conn, path, host, port, prog,
					   vers, err);
	} else {
		rc = nsr_conn_connect(&c->conn, host, port,
				      timeout_ms > 0 ? timeout_ms
						     : connect_timeout(),
				      err);
		if (rc == NSR_OK) {
			rc = nsr_tls_client_start(&c->conn, host, prog, vers,
						  err);
			if (rc)
				nsr_conn_close(&c->conn);
		}
	}
	if (rc) {
		free(c);
		return rc;
	}
	if (user)
		snprintf(c->as_user, sizeof(c->as_user), "%s", user);
	c->prog = prog;
	c->vers = vers;
	c->reply_ms = DEFAULT_REPLY_MS;
	c->xid = (uint32_t)random() ^ (uint32_t)(uintptr_t)c;
	xdrrec_create(&c->x, NSR_RPC_BUFSZ, NSR_RPC_BUFSZ, &c->conn,
		      nsr_conn_xdr_read, nsr_conn_xdr_write);
	*out = c;
	return NSR_OK;
}

/* nsr_rpc_connect - connect to host:port and set up the record stream. */
int nsr_rpc_connect(const char *host, int port, uint32_t prog, uint32_t vers,
		    int timeout_ms, struct nsr_rpc_clnt **out,
		    struct nsr_buf *err)
{
	return connect_user(host, port, prog, vers, timeout_ms, NULL, out,
			    err);
}

/* nsr_rpc_connect_as - connect stating another user (nsrexecd). */
int nsr_rpc_connect_as(const char *host, int port, uint32_t prog,
		       uint32_t vers, const char *user,
		       struct nsr_rpc_clnt **out, struct nsr_buf *err)
{
	if (!nsr_rpc_user_valid(user))
		return NSR_ERR_INVAL;
	return connect_user(host, port, prog, vers, 0, user, out, err);
}

/* nsr_rpc_clnt_conn - the connection under c. */
struct nsr_conn *nsr_rpc_clnt_conn(struct nsr_rpc_clnt *c)
{
	return &c->conn;
}

/* nsr_rpc_set_timeout - reply timeout of later calls. */
void nsr_rpc_set_timeout(struct nsr_rpc_clnt *c, int timeout_ms)
{
	c->reply_ms = timeout_ms;
}

/* fail - remember the transport failure and its text. */
static int fail(struct nsr_rpc_clnt *c, int rc, const char *what)
{
	c->broken = 1;
	if (c->conn.err == NSR_ERR_TIMEOUT)
		rc = NSR_ERR_TIMEOUT;
	/* The words name the program, the host and port, and the system's
	 * reason ("Connection timed out" when a cut link ran out
	 * TCP_USER_TIMEOUT). */
	snprintf(c->err, sizeof(c->err), "%s %s at %s: %s", what,
		 nsr_rpc_prog_name(c->prog), c->conn.peer,
		 c->conn.err == NSR_ERR_TIMEOUT ? "no reply (timed out)"
		 : c->conn.err == NSR_ERR_EOF	? "connection closed by peer"
		 : c->conn.err == NSR_ERR_SYSTEM && c->conn.sys_errno
			 ? strerror(c->conn.sys_errno)
			 : nsr_strerror(rc));
	return rc;
}

/* encode_call - put one call record into the stream. */
static int encode_call(struct nsr_rpc_clnt *c, uint32_t proc, xdrproc_t xargs,
		       void *args, int flush)
{
	const char *user;
	struct rpc_msg m;

	if (c->broken)
		return NSR_ERR_RPC;
	memset(&m, 0, sizeof(m));
	m.rm_xid = ++c->xid;
	m.rm_direction = CALL;
	m.rm_call.cb_rpcvers = 2;
	m.rm_call.cb_prog = c->prog;
	m.rm_call.cb_vers = c->vers;
	m.rm_call.cb_proc = proc;
	m.rm_call.cb_cred = _null_auth;
	m.rm_call.cb_verf = _null_auth;
	/* The caller's identity, once per connection (nsr/rpc.h). */
	user = c->stated	? NULL
	       : c->as_user[0] ? c->as_user
				: nsr_rpc_self_user();
	if (user) {
		m.rm_call.cb_cred.oa_flavor = NSR_AUTH_USER;
		m.rm_call.cb_cred.oa_base = (caddr_t)(uintptr_t)user;
		m.rm_call.cb_cred.oa_length = (u_int)strlen(user);
	}
	c->stated = 1;
	c->x.x_op = XDR_ENCODE;
	if (!xdr_callmsg(&c->x, &m) || !xargs(&c->x, args) ||
	    !xdrrec_endofrecord(&c->x, flush))
		return fail(c, NSR_ERR_RPC, "cannot send to");
	return NSR_OK;
}

/* nsr_rpc_send - one-way call: buffered, no reply expected. */
int nsr_rpc_send(struct nsr_rpc_clnt *c, uint32_t proc, xdrproc_t xargs,
		 void *args)
{
	return encode_call(c, proc, xargs, args, FALSE);
}

/* nsr_rpc_send_now - one-way call, written out at once. */
int nsr_rpc_send_now(struct nsr_rpc_clnt *c, uint32_t proc, xdrproc_t xargs,
		     void *args)
{
	return encode_call(c, proc, xargs, args, TRUE);
}

/* recv_reply - read the reply to call xid (procedure proc). */
static int recv_reply(struct nsr_rpc_clnt *c, uint32_t xid, uint32_t proc,
		      xdrproc_t xres, void *res)
{
	struct rpc_msg r;
	int ok;

	c->conn.timeout_ms = c->reply_ms;
	memset(&r, 0, sizeof(r));
	r.acpted_rply.ar_verf = _null_auth;
	r.acpted_rply.ar_results.where = res;
	r.acpted_rply.ar_results.proc = xres;
	c->x.x_op = XDR_DECODE;
	ok = xdrrec_skiprecord(&c->x) && xdr_replymsg(&c->x, &r);
	/* A non-empty verifier is allocated by the decoder (we ask for
	 * none); it overlays other fields in a denied reply. */
	if (r.rm_reply.rp_stat == MSG_ACCEPTED &&
	    r.acpted_rply.ar_verf.oa_base != _null_auth.oa_base)
		free(r.acpted_rply.ar_verf.oa_base);
	if (!ok)
		return fail(c, NSR_ERR_RPC, "no valid reply from");
	c->conn.timeout_ms = 0;
	if (r.rm_xid != xid)
		return fail(c, NSR_ERR_PROTO, "out-of-order reply from");
	if (r.rm_reply.rp_stat != MSG_ACCEPTED) {
		int weak = r.rjcted_rply.rj_stat == AUTH_ERROR &&
			   r.rjcted_rply.rj_why == AUTH_TOOWEAK;
		int badcred = r.rjcted_rply.rj_stat == AUTH_ERROR &&
			      r.rjcted_rply.rj_why == AUTH_BADCRED;

		snprintf(c->err, sizeof(c->err), "%s rejected the call%s",
			 c->conn.peer,
			 weak ? ": it needs TLS and this host has no "
				"certificate of its datazone (see nsrtrust(8))"
			 : badcred ? ": the user this program states is not "
				     "the one its connection was opened for"
			 : r.rjcted_rply.rj_stat == AUTH_ERROR
				 ? ": this host's certificate was revoked"
				 : "");
		c->broken = 1;
		return NSR_ERR_PERM;
	}
	switch (r.acpted_rply.ar_stat) {
	case SUCCESS:
		return NSR_OK;
	case PROG_UNAVAIL:
		snprintf(c->err, sizeof(c->err),
			 "%s does not serve program 0x%x", c->conn.peer,
			 c->prog);
		break;
	case PROG_MISMATCH:
		snprintf(c->err, sizeof(c->err),
			 "%s serves program 0x%x versions %u-%u, not %u",
			 c->conn.peer, c->prog,
			 (unsigned)r.acpted_rply.ar_vers.low,
			 (unsigned)r.acpted_rply.ar_vers.high, c->vers);
		break;
	case PROC_UNAVAIL: /* an older server: the connection is sound */
		snprintf(c->err, sizeof(c->err),
			 "%s does not know procedure %u", c->conn.peer, proc);
		return NSR_ERR_UNSUPPORTED;
	case GARBAGE_ARGS:
		snprintf(c->err, sizeof(c->err),
			 "%s could not decode the arguments of procedure %u",
			 c->conn.peer, proc);
		break;
	default:
		snprintf(c->err, sizeof(c->err),
			 "%s failed procedure %u (system error)", c->conn.peer,
			 proc);
		break;
	}
	return NSR_ERR_RPC;
}

/* nsr_rpc_call - call and wait for the matching reply. */
int nsr_rpc_call(struct nsr_rpc_clnt *c, uint32_t proc, xdrproc_t xargs,
		 void *args, xdrproc_t xres, void *res)
{
	int rc;

	if (c->npend > 0) {
		snprintf(c->err, sizeof(c->err), "%u replies from %s are "
			 "still to be read", c->npend, c->conn.peer);
		return NSR_ERR_STATE;
	}
	rc = encode_call(c, proc, xargs, args, TRUE);
	if (rc)
		return rc;
	return recv_reply(c, c->xid, proc, xres, res);
}

/* nsr_rpc_call_send - send a call now; its reply is read later. */
int nsr_rpc_call_send(struct nsr_rpc_clnt *c, uint32_t proc, xdrproc_t xargs,
		      void *args, uint32_t *xid)
{
	unsigned i;
	int rc;

	*xid = 0;
	if (c->npend == NSR_RPC_PENDING_MAX) {
		snprintf(c->err, sizeof(c->err), "%u calls to %s are already "
			 "waiting for their replies", c->npend, c->conn.peer);
		return NSR_ERR_LIMIT;
	}
	rc = encode_call(c, proc, xargs, args, TRUE);
	if (rc)
		return rc;
	i = (c->pend_head + c->npend) % NSR_RPC_PENDING_MAX;
	c->pend[i].xid = c->xid;
	c->pend[i].proc = proc;
	c->npend++;
	*xid = c->xid;
	return NSR_OK;
}

/* nsr_rpc_call_recv - read the reply to the oldest outstanding call. */
int nsr_rpc_call_recv(struct nsr_rpc_clnt *c, uint32_t xid, xdrproc_t xres,
		      void *res)
{
	uint32_t proc;

	if (c->npend == 0 || c->pend[c->pend_head].xid != xid) {
		snprintf(c->err, sizeof(c->err), "call 0x%x to %s is not the "
			 "oldest one waiting for its reply", xid, c->conn.peer);
		return NSR_ERR_STATE;
	}
	proc = c->pend[c->pend_head].proc;
	c->pend_head = (c->pend_head + 1) % NSR_RPC_PENDING_MAX;
	c->npend--;
	if (c->broken)
		return NSR_ERR_RPC;
	return recv_reply(c, xid, proc, xres, res);
}

/* nsr_rpc_fd - see rpc.h. */
int nsr_rpc_fd(const struct nsr_rpc_clnt *c)
{
	return c->conn.fd;
}

/* nsr_rpc_pending - calls sent with nsr_rpc_call_send, reply unread. */
unsigned nsr_rpc_pending(const struct nsr_rpc_clnt *c)
{
	return c->npend;
}

/* nsr_rpc_closed - 1 if the server has closed this idle connection (an
 * idle timeout or an eviction): nothing is pending and reading would
 * return end of file at once.  Then a call can go on a new connection
 * without the risk of doing it twice: nothing was sent. */
int nsr_rpc_closed(struct nsr_rpc_clnt *c)
{
	struct pollfd p = {.fd = c->conn.fd, .events = POLLIN};
	char b;

	if (c->broken || c->conn.fd < 0)
		return 1;
	if (c->npend > 0 || poll(&p, 1, 0) <= 0)
		return 0;
	return recv(c->conn.fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0 ||
	       (p.revents & (POLLERR | POLLHUP)) != 0;
}

/* nsr_rpc_unsent - bytes written to the connection that its TCP has not
 * sent yet (SIOCOUTQNSD), or -1 if it cannot tell.  Zero while a caller
 * waits for a reply means the network could carry more than it was
 * given: the caller's own window, not TCP's, is holding data back.  On
 * a local socket, where nothing is "sent", the bytes the peer has not
 * read yet (SIOCOUTQ) mean the same. */
long nsr_rpc_unsent(const struct nsr_rpc_clnt *c)
{
	int n = 0;

	if (c->broken || c->conn.fd < 0 ||
	    ioctl(c->conn.fd, c->conn.local ? SIOCOUTQ : SIOCOUTQNSD, &n))
		return -1;
	return n;
}

/* nsr_rpc_peer_local - the peer's address is loopback, or it is a
 * local socket. */
int nsr_rpc_peer_local(const struct nsr_rpc_clnt *c)
{
	return c->conn.peer_loopback;
}

/* nsr_rpc_peer - "host:port" of the peer. */
const char *nsr_rpc_peer(const struct nsr_rpc_clnt *c)
{
	return c->conn.peer;
}

/* nsr_rpc_last_error - words for the last failure. */
const char *nsr_rpc_last_error(const struct nsr_rpc_clnt *c)
{
	return c->err[0] ? c->err : "no error";
}

/* nsr_rpc_close - close the connection and free the client. */
void nsr_rpc_close(struct nsr_rpc_clnt *c)
{
	if (!c)
		return;
	xdr_destroy(&c->x);
	nsr_conn_close(&c->conn);
	free(c);
}
