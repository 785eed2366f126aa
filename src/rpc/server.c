/*
 * server.c - ONC RPC server half of the transport: listeners, one thread
 * per connection, dispatch by (program, version, procedure) tables.
 *
 * Invariants:
 *  1. requests on one connection are handled one at a time, in order, so a
 *     client's pipelined one-way calls are seen in the order sent;
 *  2. a procedure never replies unless its handler returned NSR_OK or an
 *     error; NSR_RPC_NOREPLY procedures never write to the socket, so a
 *     pipelining client can never deadlock on unread replies;
 *  3. arguments are decoded with the rpcgen routines, whose bounds are
 *     checked before allocation; anything undecodable gets GARBAGE_ARGS;
 *  4. nsr_rpc_server_free returns only after every connection thread ended.
 */
#include "nsr/compat.h"

#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/rpc.h"
#include "rpc_int.h"

#define MAX_LISTEN 16 /* 2 ports x (loopback + 6 -a addresses) */
#define MAX_CONNS 512

struct srv_conn {
	struct nsr_rpc_server *srv;
	struct nsr_conn conn;
	void *data;
	void (*destroy)(void *);
	struct srv_conn *next, *prev;
};

struct nsr_rpc_server {
	const struct nsr_rpc_prog *progs;
	size_t nprogs;
	int lfd[MAX_LISTEN];
	int nlisten;
	pthread_mutex_t serial; /* SERIAL procedures */
	pthread_mutex_t mu;	/* guards conns, nconns, stopping */
	pthread_cond_t cv;
	struct srv_conn *conns;
	int nconns;
	int stopping;
};

struct nsr_rpc_call {
	struct srv_conn *sc;
};

/* nsr_rpc_server_new - allocate a server for the given programs. */
int nsr_rpc_server_new(const struct nsr_rpc_prog *progs, size_t nprogs,
		       struct nsr_rpc_server **out)
{
	struct nsr_rpc_server *s;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NSR_ERR_NOMEM;
	s->progs = progs;
	s->nprogs = nprogs;
	pthread_mutex_init(&s->serial, NULL);
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
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
	if (getaddrinfo(addr ? addr : "127.0.0.1", portstr, &hints, &res) != 0) {
		errno = EADDRNOTAVAIL;
		return NSR_ERR_SYSTEM;
	}
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto out;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, 128) != 0)
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

/* nsr_rpc_server_unlock - release it. */
void nsr_rpc_server_unlock(struct nsr_rpc_server *s)
{
	pthread_mutex_unlock(&s->serial);
}

/* send_reply - encode one accepted reply and flush it. */
static int send_reply(XDR *x, uint32_t xid, enum accept_stat st, xdrproc_t xres,
		      void *res, uint32_t low, uint32_t high)
{
	struct rpc_msg r;

	memset(&r, 0, sizeof(r));
	r.rm_xid = xid;
	r.rm_direction = REPLY;
	r.rm_reply.rp_stat = MSG_ACCEPTED;
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

/* find_proc - look up the handler; sets *st to the RPC status if none. */
static const struct nsr_rpc_proc *find_proc(const struct nsr_rpc_server *s,
					    const struct call_body *cb,
					    const struct nsr_rpc_prog **prog_out,
					    enum accept_stat *st, uint32_t *low,
					    uint32_t *high)
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
	int rc;

	if (msg->rm_call.cb_rpcvers != 2)
		return NSR_ERR_PROTO;
	p = find_proc(s, &msg->rm_call, &prog, &st, &low, &high);
	if (!p) {
		if (msg->rm_call.cb_proc == 0 && st == PROC_UNAVAIL) /* NULL */
			return send_reply(x, xid, SUCCESS, NSR_XDR(xdr_void), NULL, 0, 0);
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
	if (p->flags & NSR_RPC_SERIAL)
		pthread_mutex_lock(&s->serial);
	rc = p->fn(prog->ctx, args, res, &call);
	if (p->flags & NSR_RPC_SERIAL)
		pthread_mutex_unlock(&s->serial);
	if (rc == NSR_OK)
		rc = send_reply(x, xid, SUCCESS, p->xres, res, 0, 0);
	else if (rc == NSR_RPC_NOREPLY)
		rc = NSR_OK;
	else if (rc == NSR_RPC_CLOSE)
		rc = NSR_ERR_PROTO;
	else
		rc = send_reply(x, xid, SYSTEM_ERR, NULL, NULL, 0, 0);
	xdr_free(p->xargs, args);
	xdr_free(p->xres, res);
	free(args);
	free(res);
	return rc;
}

/* conn_main - thread body: read records until EOF, error or shutdown. */
static void *conn_main(void *arg)
{
	struct srv_conn *sc = arg;
	struct nsr_rpc_server *s = sc->srv;
	char cred[2 * MAX_AUTH_BYTES];
	struct rpc_msg msg;
	XDR x;

	xdrrec_create(&x, NSR_RPC_BUFSZ, NSR_RPC_BUFSZ, &sc->conn,
		      nsr_conn_xdr_read, nsr_conn_xdr_write);
	for (;;) {
		x.x_op = XDR_DECODE;
		if (!xdrrec_skiprecord(&x))
			break;
		memset(&msg, 0, sizeof(msg));
		msg.rm_call.cb_cred.oa_base = cred;
		msg.rm_call.cb_verf.oa_base = cred + MAX_AUTH_BYTES;
		if (!xdr_callmsg(&x, &msg) || msg.rm_direction != CALL)
			break;
		if (dispatch(sc, &x, &msg) != NSR_OK)
			break;
	}
	xdr_destroy(&x);
	if (sc->destroy)
		sc->destroy(sc->data);
	pthread_mutex_lock(&s->mu);
	if (sc->prev)
		sc->prev->next = sc->next;
	else
		s->conns = sc->next;
	if (sc->next)
		sc->next->prev = sc->prev;
	s->nconns--;
	nsr_conn_close(&sc->conn);
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	free(sc);
	return NULL;
}

/* nsr_rpc_server_accept - accept one connection and start its thread. */
int nsr_rpc_server_accept(struct nsr_rpc_server *s, int i)
{
	struct srv_conn *sc;
	pthread_attr_t attr;
	pthread_t tid;
	int fd;

	fd = accept4(s->lfd[i], NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return NSR_ERR_SYSTEM;
	pthread_mutex_lock(&s->mu);
	if (s->stopping || s->nconns >= MAX_CONNS) {
		pthread_mutex_unlock(&s->mu);
		close(fd);
		return NSR_ERR_LIMIT;
	}
	sc = calloc(1, sizeof(*sc));
	if (!sc) {
		pthread_mutex_unlock(&s->mu);
		close(fd);
		return NSR_ERR_NOMEM;
	}
	sc->srv = s;
	nsr_conn_init_fd(&sc->conn, fd);
	sc->next = s->conns;
	if (s->conns)
		s->conns->prev = sc;
	s->conns = sc;
	s->nconns++;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 1024 * 1024);
	if (pthread_create(&tid, &attr, conn_main, sc) != 0) {
		s->conns = sc->next;
		if (sc->next)
			sc->next->prev = NULL;
		s->nconns--;
		pthread_mutex_unlock(&s->mu);
		pthread_attr_destroy(&attr);
		close(fd);
		free(sc);
		return NSR_ERR_SYSTEM;
	}
	pthread_attr_destroy(&attr);
	pthread_mutex_unlock(&s->mu);
	return NSR_OK;
}

/* nsr_rpc_server_free - close listeners, end every connection, free. */
void nsr_rpc_server_free(struct nsr_rpc_server *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->nlisten; i++)
		close(s->lfd[i]);
	pthread_mutex_lock(&s->mu);
	s->stopping = 1;
	for (struct srv_conn *sc = s->conns; sc; sc = sc->next)
		shutdown(sc->conn.fd, SHUT_RDWR);
	while (s->nconns > 0)
		pthread_cond_wait(&s->cv, &s->mu);
	pthread_mutex_unlock(&s->mu);
	pthread_mutex_destroy(&s->serial);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free(s);
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

/* nsr_rpc_call_conn_data - the per-connection slot. */
void *nsr_rpc_call_conn_data(const struct nsr_rpc_call *call)
{
	return call->sc->data;
}

/* nsr_rpc_call_set_conn_data - attach state to the connection (freed at close). */
void nsr_rpc_call_set_conn_data(struct nsr_rpc_call *call, void *data,
				void (*destroy)(void *data))
{
	call->sc->data = data;
	call->sc->destroy = destroy;
}
