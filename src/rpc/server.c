/*
 * server.c - ONC RPC server half of the transport: listeners, dispatch by
 * (program, version, procedure) tables, and serving one connection on a
 * worker thread.  room.c owns where connections wait and which thread
 * serves them.
 *
 * A connection costs a thread only while it has a request in progress.
 * Accepted connections wait in the waiting room (one epoll set); when bytes
 * arrive a worker from a bounded pool takes the connection, serves records
 * for as long as they keep coming (pipelined one-way calls keep their
 * worker), and hands the connection back to the waiting room as soon as no
 * byte is left, neither in its XDR buffer nor in the socket.  We hand back
 * rather than keep the connection until an idle timeout because the bound
 * that matters is threads per *active* request: 4,000 idle peers must not
 * need 4,000 threads, and a long save session must not pin one between its
 * calls.  The price would be one epoll re-arm and two thread wake-ups per
 * request of a request/reply client; a worker therefore lingers LINGER_MS
 * for the next request when no other connection waits for a worker, which
 * keeps round trips as fast as a thread per connection did
 * (tests/bench/rpc/RESULTS.md).
 *
 * Invariants:
 *  1. requests on one connection are handled one at a time, in order, so a
 *     client's pipelined one-way calls are seen in the order sent: a
 *     connection is served by at most one worker at a time (state SC_BUSY),
 *     and it is handed back only at a record boundary with nothing
 *     buffered, so no byte of it is ever left in a worker's XDR stream;
 *  2. a procedure never replies unless its handler returned NSR_OK or an
 *     error; NSR_RPC_NOREPLY procedures never write to the socket, so a
 *     pipelining client can never deadlock on unread replies;
 *  3. arguments are decoded with the rpcgen routines, whose bounds are
 *     checked before allocation; anything undecodable gets GARBAGE_ARGS;
 *  4. nsr_rpc_server_free returns only after every worker and the waiting
 *     room thread ended and every connection is closed;
 *  5. every connection is on exactly one list, the one its state names
 *     (silent, idle, ready, busy), and counted in one slot; only
 *     connections in the waiting room (silent, idle; at shutdown also
 *     ready) are ever closed by anyone but their worker;
 *  6. threads never exceed lim.max_threads and open connections never
 *     exceed lim.max_conns; a ready connection waits for a worker, it is
 *     never failed for want of one;
 *  7. a connection's destructor and close run without srv->mu held;
 *  8. when the process requires TLS (nsr/tls.h), no handler runs for a
 *     connection that did not start TLS, unless plain-hosts allows its
 *     address, nor for one whose certificate is revoked: the call is
 *     denied and the connection closed; NULL is always answered;
 *  9. a connection's stated user never changes once set (a call stating
 *     another is denied and the connection closed), and no handler of a
 *     procedure flagged NSR_RPC_OWN or NSR_RPC_ADMIN runs unless its
 *     program's authz function returned NSR_OK for that call, except one
 *     flagged NSR_RPC_LOCKS_ITSELF, which asks it (nsr_rpc_authorize)
 *     before it acts and whose refusal is answered as the transport's.
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/rpc.h"
#include "nsr/rpc_status.h"
#include "nsr/tls.h"
#include "rpc_int.h"
#include "server_int.h"

#define ACCEPT_BATCH 64
#define LINGER_MS 2 /* see pending */

struct nsr_rpc_call {
	struct srv_conn *sc;
	const struct nsr_rpc_prog *prog; /* what is called, for */
	const struct nsr_rpc_proc *proc; /* nsr_rpc_authorize */
	struct nsr_buf *why;		 /* its refusal's words */
};

/* nsr_rpc_server_new - allocate a server for the given programs. */
int nsr_rpc_server_new(const struct nsr_rpc_prog *progs, size_t nprogs,
		       struct nsr_rpc_server **out)
{
	struct nsr_rpc_server *s;
	int rc;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NSR_ERR_NOMEM;
	s->progs = progs;
	s->nprogs = nprogs;
	pthread_mutex_init(&s->serial, NULL);
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	rc = srv_room_init(s);
	if (rc != NSR_OK) {
		pthread_mutex_destroy(&s->serial);
		pthread_mutex_destroy(&s->mu);
		pthread_cond_destroy(&s->cv);
		free(s);
		return rc;
	}
	*out = s;
	return NSR_OK;
}

/* nsr_rpc_server_listen - bind and listen on addr:port. */
int nsr_rpc_server_listen(struct nsr_rpc_server *s, const char *addr, int port,
			  int *bound)
{
	struct addrinfo hints, *res = NULL;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char portstr[16];
	int fd = -1, one = 1, rc = NSR_ERR_SYSTEM;

	if (s->nlisten >= MAX_LISTEN)
		return NSR_ERR_LIMIT;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	snprintf(portstr, sizeof(portstr), "%d", port);
	if (getaddrinfo(addr ? addr : "127.0.0.1", portstr, &hints, &res) !=
	    0) {
		errno = EADDRNOTAVAIL;
		return NSR_ERR_SYSTEM;
	}
	/* Non-blocking: nsr_rpc_server_accept takes a batch until EAGAIN. */
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
		    0);
	if (fd < 0)
		goto out;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, res->ai_addr, res->ai_addrlen) != 0 ||
	    listen(fd, SOMAXCONN) != 0)
		goto out;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
		goto out;
	*bound = ss.ss_family == AF_INET6
			 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
			 : ntohs(((struct sockaddr_in *)&ss)->sin_port);
	s->lfd[s->nlisten++] = fd;
	fd = -1;
	rc = NSR_OK;
out:
	if (fd >= 0) {
		int saved = errno;

		close(fd);
		errno = saved;
	}
	freeaddrinfo(res);
	return rc;
}

/* nsr_rpc_server_nlisten - how many listening sockets. */
int nsr_rpc_server_nlisten(const struct nsr_rpc_server *s)
{
	return s->nlisten;
}

/* nsr_rpc_server_listen_fd - listening socket i, or -1. */
int nsr_rpc_server_listen_fd(const struct nsr_rpc_server *s, int i)
{
	return i >= 0 && i < s->nlisten ? s->lfd[i] : -1;
}

/* nsr_rpc_server_lock - take the mutex SERIAL procedures run under. */
void nsr_rpc_server_lock(struct nsr_rpc_server *s)
{
	pthread_mutex_lock(&s->serial);
}

/* nsr_rpc_server_trylock - take it only if free: 1 taken, 0 busy. */
int nsr_rpc_server_trylock(struct nsr_rpc_server *s)
{
	return pthread_mutex_trylock(&s->serial) == 0;
}

/* nsr_rpc_server_unlock - release it. */
void nsr_rpc_server_unlock(struct nsr_rpc_server *s)
{
	pthread_mutex_unlock(&s->serial);
}

/* nsr_rpc_cond_init - a condition variable on the monotonic clock. */
int nsr_rpc_cond_init(pthread_cond_t *c)
{
	pthread_condattr_t a;
	int rc;

	if (pthread_condattr_init(&a) != 0)
		return NSR_ERR_SYSTEM;
	rc = pthread_condattr_setclock(&a, CLOCK_MONOTONIC) == 0 &&
	     pthread_cond_init(c, &a) == 0;
	pthread_condattr_destroy(&a);
	return rc ? NSR_OK : NSR_ERR_SYSTEM;
}

/* nsr_rpc_server_wait - wait on c with the server mutex released. */
int nsr_rpc_server_wait(struct nsr_rpc_server *s, pthread_cond_t *c,
			unsigned ms)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += ms / 1000;
	t.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	return pthread_cond_timedwait(c, &s->serial, &t) == 0;
}

/* reply_head - the start of a reply to xid. */
static void reply_head(struct rpc_msg *r, uint32_t xid, enum reply_stat st)
{
	memset(r, 0, sizeof(*r));
	r->rm_xid = xid;
	r->rm_direction = REPLY;
	r->rm_reply.rp_stat = st;
}

/* send_reply - encode one accepted reply and flush it. */
static int send_reply(XDR *x, uint32_t xid, enum accept_stat st, xdrproc_t xres,
		      void *res, uint32_t low, uint32_t high)
{
	struct rpc_msg r;

	reply_head(&r, xid, MSG_ACCEPTED);
	r.acpted_rply.ar_verf = _null_auth;
	r.acpted_rply.ar_stat = st;
	if (st == SUCCESS) {
		r.acpted_rply.ar_results.where = res;
		r.acpted_rply.ar_results.proc = xres;
	} else if (st == PROG_MISMATCH) {
		r.acpted_rply.ar_vers.low = low;
		r.acpted_rply.ar_vers.high = high;
	}
	x->x_op = XDR_ENCODE;
	if (!xdr_replymsg(x, &r) || !xdrrec_endofrecord(x, TRUE))
		return NSR_ERR_RPC;
	return NSR_OK;
}

/* send_denied - an AUTH_ERROR reply (why) to call xid, flushed. */
static int send_denied(XDR *x, uint32_t xid, enum auth_stat why)
{
	struct rpc_msg r;

	reply_head(&r, xid, MSG_DENIED);
	r.rjcted_rply.rj_stat = AUTH_ERROR;
	r.rjcted_rply.rj_why = why;
	x->x_op = XDR_ENCODE;
	if (!xdr_replymsg(x, &r) || !xdrrec_endofrecord(x, TRUE))
		return NSR_ERR_RPC;
	return NSR_OK;
}

/* tls_event - count a refusal or failed handshake of kind k and say
 * who and why in the stats, for the daemon to log (invariant 8). */
static void tls_event(struct nsr_rpc_server *s, enum nsr_rpc_tls_event k,
		      const char *fmt, ...) NSR_PRINTF(3, 4);
static void tls_event(struct nsr_rpc_server *s, enum nsr_rpc_tls_event k,
		      const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&s->mu);
	s->ev.tls[k]++;
	va_start(ap, fmt);
	vsnprintf(s->ev.tls_last[k], sizeof(s->ev.tls_last[k]), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&s->mu);
}

/* starttls - RFC 9289 4.1: answer the AUTH_TLS NULL probe with the
 * STARTTLS verifier and run the handshake (invariant 2 of tls.c), or,
 * when this process has no certificate, the connection already runs
 * TLS or is a local socket (where the kernel names both ends: local.c),
 * answer it as a plain NULL (the client then knows). */
static int starttls(struct srv_conn *sc, XDR *x, uint32_t xid)
{
	struct nsr_buf err;
	struct rpc_msg r;
	int rc;

	if (sc->conn.ssl || sc->conn.local || !nsr_tls_server_offer())
		return send_reply(x, xid, SUCCESS, NSR_XDR(xdr_void), NULL, 0,
				  0);
	reply_head(&r, xid, MSG_ACCEPTED);
	r.acpted_rply.ar_verf.oa_flavor = AUTH_NONE;
	r.acpted_rply.ar_verf.oa_base = (caddr_t)NSR_TLS_STARTTLS;
	r.acpted_rply.ar_verf.oa_length = (u_int)strlen(NSR_TLS_STARTTLS);
	r.acpted_rply.ar_stat = SUCCESS;
	r.acpted_rply.ar_results.where = NULL;
	r.acpted_rply.ar_results.proc = NSR_XDR(xdr_void);
	x->x_op = XDR_ENCODE;
	if (!xdr_replymsg(x, &r) || !xdrrec_endofrecord(x, TRUE))
		return NSR_ERR_RPC;
	nsr_buf_init(&err, sizeof(sc->srv->ev.tls_last[0]));
	rc = nsr_tls_server_start(&sc->conn, &err);
	if (rc)
		tls_event(sc->srv, NSR_RPC_TLS_FAILED, "%s", err.data);
	nsr_buf_release(&err);
	return rc;
}

/* admitted - invariant 8: NSR_OK if the call may run, else the denial
 * was sent (or failed) and the connection is to close. */
static int admitted(struct srv_conn *sc, XDR *x, const struct rpc_msg *m)
{
	struct nsr_rpc_server *s = sc->srv;

	if (m->rm_call.cb_proc == 0 && !sc->conn.ssl)
		return NSR_OK;
	if (sc->conn.local) /* the kernel vouches for it (local.c) */
		return NSR_OK;
	if (!sc->conn.ssl && !nsr_tls_plain_allowed(&sc->conn)) {
		tls_event(s, NSR_RPC_TLS_PLAIN, "%s (%s procedure %u)",
			  sc->conn.peer,
			  nsr_rpc_prog_name(m->rm_call.cb_prog),
			  (unsigned)m->rm_call.cb_proc);
		send_denied(x, m->rm_xid, AUTH_TOOWEAK);
		return NSR_ERR_PERM;
	}
	if (nsr_tls_conn_revoked(&sc->conn)) {
		tls_event(s, NSR_RPC_TLS_REVOKED, "%s (%s, certificate %s)",
			  sc->conn.peer, sc->conn.peer_host, sc->conn.serial);
		send_denied(x, m->rm_xid, AUTH_REJECTEDCRED);
		return NSR_ERR_PERM;
	}
	return NSR_OK;
}

/* take_user - invariant 9: remember the user a call states (NSR_AUTH_USER
 * credential); NSR_OK, or the denial was sent and the connection is to
 * close. */
static int take_user(struct srv_conn *sc, XDR *x, const struct rpc_msg *m)
{
	const struct opaque_auth *a = &m->rm_call.cb_cred;
	char name[NSR_RPC_USER_MAX + 1];

	/* A local caller: the name of its uid, this host (local.c). */
	nsr_conn_local_resolve(&sc->conn, sc->user);
	if (a->oa_flavor != NSR_AUTH_USER)
		return NSR_OK;
	if (!nsr_rpc_cred_user(a->oa_base, a->oa_length, name) ||
	    ((sc->user[0] || sc->conn.user_fixed) &&
	     strcmp(sc->user, name) != 0))
		goto bad;
	memcpy(sc->user, name, strlen(name) + 1);
	return NSR_OK;
bad:
	send_denied(x, m->rm_xid, AUTH_BADCRED);
	return NSR_ERR_PERM;
}

/* send_refused - answer call xid of p with p's result whose status is
 * NSR_ERR_PERM and why (invariant 9).  Every other field takes the value
 * XDR decodes from zero bytes (0, "", empty, absent), so any result type
 * can be sent without knowing its layout beyond the leading status. */
static int send_refused(XDR *x, uint32_t xid, const struct nsr_rpc_proc *p,
			const char *why)
{
	static char zeros[16384]; /* only ever read */
	void *res = calloc(1, p->ressize ? p->ressize : 1);
	XDR m;
	int ok, rc;

	if (!res)
		return send_reply(x, xid, SYSTEM_ERR, NULL, NULL, 0, 0);
	xdrmem_create(&m, zeros, sizeof(zeros), XDR_DECODE);
	ok = p->ressize >= sizeof(nsr_status) && p->xres(&m, res);
	xdr_destroy(&m);
	if (!ok) {
		xdr_free(p->xres, res);
		free(res);
		return send_denied(x, xid, AUTH_TOOWEAK);
	}
	nsr_status_set(res, NSR_ERR_PERM, "%s", why);
	rc = send_reply(x, xid, SUCCESS, p->xres, res, 0, 0);
	xdr_free(p->xres, res);
	free(res);
	return rc;
}

/* authorized - invariant 9: 1 if the call of p may run; else *why says
 * why not. */
static int authorized(const struct nsr_rpc_prog *prog,
		      const struct nsr_rpc_proc *p,
		      const struct nsr_rpc_call *call, const void *args,
		      struct nsr_buf *why)
{
	if (!(p->flags & (NSR_RPC_OWN | NSR_RPC_ADMIN)))
		return 1;
	if (!prog->authz) {
		nsr_buf_addf(why, "%s refuses %s: it has no authorization "
			     "policy for it", nsr_rpc_prog_name(prog->prog),
			     p->name);
		return 0;
	}
	if (prog->authz(prog->ctx, call, p, args, why) == NSR_OK)
		return 1;
	if (!why->len)
		nsr_buf_addf(why, "permission denied");
	return 0;
}

/* nsr_rpc_authorize - see rpc.h: authorized() asked by the handler. */
int nsr_rpc_authorize(struct nsr_rpc_call *call, const void *args)
{
	return authorized(call->prog, call->proc, call, args, call->why)
		       ? NSR_OK
		       : NSR_ERR_PERM;
}

/* find_proc - look up the handler; sets *st to the RPC status if none. */
static const struct nsr_rpc_proc *find_proc(
	const struct nsr_rpc_server *s, const struct call_body *cb,
	const struct nsr_rpc_prog **prog_out, enum accept_stat *st,
	uint32_t *low, uint32_t *high)
{
	int prog_seen = 0;

	*low = UINT32_MAX;
	*high = 0;
	for (size_t i = 0; i < s->nprogs; i++) {
		const struct nsr_rpc_prog *p = &s->progs[i];

		if (p->prog != cb->cb_prog)
			continue;
		prog_seen = 1;
		*low = NSR_MIN(*low, p->vers);
		*high = NSR_MAX(*high, p->vers);
		if (p->vers != cb->cb_vers)
			continue;
		*prog_out = p;
		for (size_t j = 0; j < p->nprocs; j++)
			if (p->procs[j].proc == cb->cb_proc)
				return &p->procs[j];
		*st = PROC_UNAVAIL;
		return NULL;
	}
	*st = prog_seen ? PROG_MISMATCH : PROG_UNAVAIL;
	return NULL;
}

/* dispatch - run one decoded call; returns NSR_OK to continue, else close. */
static int dispatch(struct srv_conn *sc, XDR *x, struct rpc_msg *msg)
{
	struct nsr_rpc_server *s = sc->srv;
	const struct nsr_rpc_prog *prog = NULL;
	const struct nsr_rpc_proc *p;
	struct nsr_rpc_call call = {.sc = sc};
	enum accept_stat st = SUCCESS;
	uint32_t low, high, xid = msg->rm_xid;
	void *args = NULL, *res = NULL;
	struct nsr_buf why;
	int rc, ok;

	if (msg->rm_call.cb_rpcvers != 2)
		return NSR_ERR_PROTO;
	if (msg->rm_call.cb_cred.oa_flavor == NSR_AUTH_TLS) {
		if (msg->rm_call.cb_proc != 0) {
			send_denied(x, xid, AUTH_BADCRED);
			return NSR_ERR_PROTO;
		}
		return starttls(sc, x, xid);
	}
	rc = admitted(sc, x, msg);
	if (rc == NSR_OK)
		rc = take_user(sc, x, msg);
	if (rc)
		return rc;
	p = find_proc(s, &msg->rm_call, &prog, &st, &low, &high);
	if (!p) {
		if (msg->rm_call.cb_proc == 0 && st == PROC_UNAVAIL) /* NULL */
			return send_reply(x, xid, SUCCESS, NSR_XDR(xdr_void),
					  NULL, 0, 0);
		return send_reply(x, xid, st, NULL, NULL, low, high);
	}
	args = calloc(1, p->argsize ? p->argsize : 1);
	res = calloc(1, p->ressize ? p->ressize : 1);
	if (!args || !res) {
		free(args);
		free(res);
		return send_reply(x, xid, SYSTEM_ERR, NULL, NULL, 0, 0);
	}
	if (!p->xargs(x, args)) {
		xdr_free(p->xargs, args);
		free(args);
		free(res);
		return send_reply(x, xid, GARBAGE_ARGS, NULL, NULL, 0, 0);
	}
	nsr_buf_init(&why, 0);
	call.prog = prog;
	call.proc = p;
	call.why = &why;
	if (p->flags & NSR_RPC_LOCKS_ITSELF) {
		rc = p->fn(prog->ctx, args, res, &call);
		ok = rc != NSR_RPC_REFUSED;
	} else {
		if (p->flags & NSR_RPC_SERIAL)
			pthread_mutex_lock(&s->serial);
		ok = authorized(prog, p, &call, args, &why);
		if (ok)
			rc = p->fn(prog->ctx, args, res, &call);
		if (p->flags & NSR_RPC_SERIAL)
			pthread_mutex_unlock(&s->serial);
	}
	if (!ok)
		rc = send_refused(x, xid, p, why.len ? why.data : "denied");
	else if (rc == NSR_OK)
		rc = send_reply(x, xid, SUCCESS, p->xres, res, 0, 0);
	else if (rc == NSR_RPC_NOREPLY)
		rc = NSR_OK;
	else if (rc == NSR_RPC_CLOSE)
		rc = NSR_ERR_PROTO;
	else
		rc = send_reply(x, xid, SYSTEM_ERR, NULL, NULL, 0, 0);
	nsr_buf_release(&why);
	xdr_free(p->xargs, args);
	xdr_free(p->xres, res);
	free(args);
	free(res);
	return rc;
}

/* wk_read - xdrrec read callback: the worker's current connection. */
static int wk_read(void *h, void *p, int n)
{
	struct srv_worker *w = h;

	return nsr_conn_xdr_read(&w->sc->conn, p, n);
}

/* wk_write - xdrrec write callback (see wk_read). */
static int wk_write(void *h, void *p, int n)
{
	struct srv_worker *w = h;

	return nsr_conn_xdr_write(&w->sc->conn, p, n);
}

/* srv_worker_release - free the worker's XDR stream (NULL-safe state). */
void srv_worker_release(struct srv_worker *w)
{
	if (w->have_x)
		xdr_destroy(&w->x);
	w->have_x = 0;
}

/* pending - after a request: 0 if no byte of sc is left in the XDR
 * buffer or the socket (after a short linger when no other connection
 * waits for a worker: a request/reply client's next call usually comes
 * within it, and then wakes this thread directly instead of the room
 * thread and a worker), 1 if more is in the XDR buffer, 2 if only in the
 * connection or the socket, 3 if the socket is readable and its peer
 * has shut down (an end of file may be all there is), -1 if the stream
 * failed. */
static int pending(struct srv_worker *w, struct srv_conn *sc)
{
	struct pollfd pfd = {.fd = sc->conn.fd, .events = POLLIN | POLLRDHUP};
	int linger = atomic_load(&sc->srv->nready) ? 0 : LINGER_MS;

	/* xdrrec_eof skips what is left of the current record (unread
	 * arguments of a refused call) and says whether the buffer is empty;
	 * it reads only within the current record.  It also says "empty"
	 * when that read fails, which leaves the stream mid-record: the
	 * connection must then close, never go back to the waiting room. */
	sc->conn.err = NSR_OK;
	w->x.x_op = XDR_DECODE;
	if (!xdrrec_eof(&w->x))
		return 1;
	if (sc->conn.err != NSR_OK)
		return -1;
	if (nsr_conn_pending(&sc->conn))
		return 2;
	if (poll(&pfd, 1, linger) == 0)
		return 0;
	return pfd.revents & (POLLRDHUP | POLLHUP) ? 3 : 2;
}

/* closed_cleanly - 1 if sc's peer closed at a record boundary: nothing
 * is buffered in the connection and the socket, readable, holds EOF.
 * Only for connections without TLS (a TLS peer's close comes as a
 * record, read through the stream).  The caller's XDR stream is then
 * at a boundary and empty, so it is kept for the next connection:
 * every session's connection ends this way, and a stream costs two
 * NSR_RPC_BUFSZ buffers to make again. */
static int closed_cleanly(struct srv_conn *sc)
{
	char b;

	if (sc->conn.ssl || nsr_conn_pending(&sc->conn))
		return 0;
	return recv(sc->conn.fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

/*
 * srv_serve - worker: serve sc's records until none is pending.
 * SRV_HANDBACK: at a record boundary, nothing buffered (invariant 1);
 * SRV_CLOSE: EOF, error, timeout, or the handler asked; the worker's XDR
 * stream is then released, since it may hold half a record, unless the
 * peer closed between records (closed_cleanly).
 */
enum srv_served srv_serve(struct srv_worker *w, struct srv_conn *sc)
{
	char cred[2 * MAX_AUTH_BYTES];
	struct rpc_msg msg;
	int rc;

	w->sc = sc;
	if (!w->have_x) {
		xdrrec_create(&w->x, NSR_RPC_BUFSZ, NSR_RPC_BUFSZ, w, wk_read,
			      wk_write);
		w->have_x = 1;
		atomic_fetch_add(&sc->srv->streams_made, 1);
	}
	for (rc = 3;;) {
		/* At a record boundary; the XDR buffer is empty unless
		 * pending() said 1 (invariant 1).  The room hands over a
		 * connection without saying why it is readable (3). */
		if (rc == 3 && closed_cleanly(sc))
			return SRV_CLOSE;
		w->x.x_op = XDR_DECODE;
		if (!xdrrec_skiprecord(&w->x))
			break;
		memset(&msg, 0, sizeof(msg));
		msg.rm_call.cb_cred.oa_base = cred;
		msg.rm_call.cb_verf.oa_base = cred + MAX_AUTH_BYTES;
		if (!xdr_callmsg(&w->x, &msg) || msg.rm_direction != CALL)
			break;
		if (dispatch(sc, &w->x, &msg) != NSR_OK)
			break;
		rc = pending(w, sc);
		if (rc < 0)
			break;
		if (rc == 0)
			return SRV_HANDBACK;
	}
	srv_worker_release(w);
	return SRV_CLOSE;
}

/* nsr_rpc_server_accept - accept pending connections into the room. */
int nsr_rpc_server_accept(struct nsr_rpc_server *s, int i)
{
	int rc = NSR_OK;

	if (i < 0 || i >= s->nlisten)
		return NSR_ERR_INVAL;
	for (int n = 0; n < ACCEPT_BATCH; n++) {
		int fd = accept4(s->lfd[i], NULL, NULL, SOCK_CLOEXEC);
		int r;

		if (fd < 0) {
			if (errno == EINTR)
				continue;
			/* Out of descriptors: a waiting connection makes room,
			 * as at the connection cap (the cap is meant to keep
			 * this from happening). */
			if ((errno == EMFILE || errno == ENFILE) &&
			    srv_room_shed(s) == NSR_OK)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK ||
			    errno == ECONNABORTED)
				break;
			return n > 0 ? rc : NSR_ERR_SYSTEM;
		}
		r = srv_room_admit(s, fd, s->lpath[i] != NULL);
		if (r != NSR_OK)
			rc = r;
	}
	return rc;
}

/* nsr_rpc_server_stop - close listeners, end every connection, join. */
void nsr_rpc_server_stop(struct nsr_rpc_server *s)
{
	if (!s || s->stopped)
		return;
	for (int i = 0; i < s->nlisten; i++)
		close(s->lfd[i]);
	nsr_rpc_server_unlink_local(s);
	srv_room_stop(s);
	s->stopped = 1;
}

/* nsr_rpc_server_free - stop (if not yet) and free. */
void nsr_rpc_server_free(struct nsr_rpc_server *s)
{
	if (!s)
		return;
	nsr_rpc_server_stop(s);
	srv_room_release(s);
	pthread_mutex_destroy(&s->serial);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free(s);
}

/* nsr_rpc_server_limits - the bounds in force. */
void nsr_rpc_server_limits(const struct nsr_rpc_server *s,
			   struct nsr_rpc_limits *lim)
{
	*lim = s->lim;
}

/* nsr_rpc_server_set_max_threads - the program's default, not the
 * administrator's (the environment wins). */
void nsr_rpc_server_set_max_threads(struct nsr_rpc_server *s, int n)
{
	const char *e = getenv("NSR_RPC_MAX_THREADS");

	if (n > 0 && !(e && *e))
		s->lim.max_threads = n;
}

/* nsr_rpc_call_peer - "address:port" of the caller. */
const char *nsr_rpc_call_peer(const struct nsr_rpc_call *call)
{
	return call->sc->conn.peer;
}

/* nsr_rpc_call_peer_is_local - the caller connected from loopback. */
int nsr_rpc_call_peer_is_local(const struct nsr_rpc_call *call)
{
	return call->sc->conn.peer_loopback;
}

/* nsr_rpc_call_local - the caller came over a local socket. */
int nsr_rpc_call_local(const struct nsr_rpc_call *call)
{
	return call->sc->conn.local;
}

/* nsr_rpc_call_peer_host - the certified host name (a local caller's:
 * this host's), NULL without TLS. */
const char *nsr_rpc_call_peer_host(const struct nsr_rpc_call *call)
{
	const struct nsr_conn *c = &call->sc->conn;

	return c->ssl || (c->local && c->peer_host[0]) ? c->peer_host : NULL;
}

/* nsr_rpc_call_user - the stated user, NULL if none. */
const char *nsr_rpc_call_user(const struct nsr_rpc_call *call)
{
	return call->sc->user[0] ? call->sc->user : NULL;
}

/* nsr_rpc_call_host - certified name, "localhost" or the address. */
const char *nsr_rpc_call_host(const struct nsr_rpc_call *call)
{
	const struct nsr_conn *c = &call->sc->conn;
	const char *certified = nsr_rpc_call_peer_host(call);

	if (certified)
		return certified;
	return c->peer_loopback ? "localhost" : c->addr;
}

/* nsr_rpc_call_who - "user@host" of the caller. */
const char *nsr_rpc_call_who(const struct nsr_rpc_call *call, char *out,
			     size_t len)
{
	const char *u = nsr_rpc_call_user(call);

	snprintf(out, len, "%s@%s", u ? u : "?", nsr_rpc_call_host(call));
	return out;
}

/* nsr_rpc_call_conn_data - the per-connection slot. */
void *nsr_rpc_call_conn_data(const struct nsr_rpc_call *call)
{
	return call->sc->data;
}

/* nsr_rpc_call_set_conn_data - attach state to the connection (freed at
 * close). */
void nsr_rpc_call_set_conn_data(struct nsr_rpc_call *call, void *data,
				void (*destroy)(void *data))
{
	call->sc->data = data;
	call->sc->destroy = destroy;
}
