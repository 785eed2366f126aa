/*
 * rpc.h - the one RPC transport module: ONC RPC (RFC 5531) records over TCP.
 *
 * Why our own transport and not libtirpc's clnt_vc/svc_vc: svc is
 * single-threaded (one slow peer stalls a daemon for up to 35 s), clnt_vc
 * cannot pipeline with error reporting, and neither can run over TLS.  We
 * keep the wire format exactly ONC RPC (libtirpc's xdrrec record marking,
 * xdr_callmsg/xdr_replymsg, and the rpcgen-generated xdr_* routines for
 * every message), so any ONC RPC peer interoperates, and put every byte
 * through a struct nsr_conn whose read/write ops are the only place TLS is
 * added (RFC 9289, nsr/tls.h), without touching handlers.
 *
 * Server calling sequence:
 *   1. describe each program: struct nsr_rpc_prog with a table of
 *      struct nsr_rpc_proc {proc number, xdr args/result, handler, flags};
 *   2. nsr_rpc_server_new(progs, n, &srv);
 *   3. nsr_rpc_server_listen(srv, addr, port, &bound) (port 0 = ephemeral);
 *   4. in the daemon's poll loop, when nsr_rpc_server_listen_fd(srv) is
 *      readable, call nsr_rpc_server_accept(srv): the connection waits in
 *      the server's waiting room (one epoll set, no thread) until bytes
 *      arrive; then a worker thread from a bounded pool serves its requests
 *      one at a time, in order, and hands it back when it falls silent;
 *   5. now and then (the skeleton: every second) nsr_rpc_server_stats() to
 *      learn which bounds were hit, and log them;
 *   6. at shutdown nsr_rpc_server_stop(srv) (closes listeners, shuts down
 *      every connection and joins the threads) before the state the
 *      handlers use is torn down, then nsr_rpc_server_free(srv).
 * Handlers return NSR_OK to send the result, NSR_RPC_NOREPLY for one-way
 * (batched) procedures, NSR_RPC_CLOSE to drop the connection, or a negative
 * nsr_err to answer SYSTEM_ERR.  Application errors travel inside results
 * (every result in our .x files starts with an nsr_status).  Procedures
 * flagged NSR_RPC_SERIAL run under one server-wide mutex, so simple daemons
 * need no locking of their own.  A SERIAL handler may release that mutex
 * around slow remote work (nsr_rpc_server_unlock ... nsr_rpc_server_lock)
 * and must hold it again when it returns; other SERIAL handlers run
 * meanwhile, so it leaves the state it shares consistent (reserved,
 * marked busy) before it lets go and works only on its own data until it
 * has the mutex back.  A procedure flagged NSR_RPC_LOCKS_ITSELF instead
 * runs its handler without the mutex: the handler takes it itself (or
 * has a thread holding it do its work, to serve a burst of calls in one
 * hold instead of one each) and runs nothing that needs it before.
 *
 * Authorization: every connection has a caller, user@host.  The host is
 * the name its TLS certificate certifies (signed by the datazone CA, not
 * revoked), "localhost" on a plain loopback connection and the address on
 * a plain one plain-hosts allows.  The user is the name the calling
 * program states on its first call (NSR_AUTH_USER: the name of its
 * effective uid); it is believed because only a process that can read
 * the host's key (root there) can open a TLS connection as that host.
 * A plain connection's statement is believed as is: plain-hosts (and
 * NSR_TEST_NO_TLS) trust whoever can reach the port.  A connection that
 * states a second, different user is refused.  Procedures flagged
 * NSR_RPC_OWN or NSR_RPC_ADMIN run only when their program's authz
 * function, called with the decoded arguments before the handler (under
 * the server mutex for SERIAL ones), returns NSR_OK; otherwise the caller
 * gets the procedure's result with st.code NSR_ERR_PERM and st.msg the
 * reason authz wrote (no authz function: refused).  For a procedure
 * flagged NSR_RPC_LOCKS_ITSELF the handler asks (nsr_rpc_authorize, under
 * the server mutex) before it acts on the call, and returns
 * NSR_RPC_REFUSED when refused: the caller gets the same answer.  A
 * process that cannot read the host's key (not root) reaches other hosts
 * through the local nsrexecd, which vouches for its uid (see vouch.c).
 *
 * Same-host connections (local.c): a daemon listening on TCP port P
 * also listens on the Unix-domain socket <root>/sockets/P, and a client
 * calling a program on this host (localhost, a loopback address, this
 * host's name or certified name) connects there when its root has that
 * socket: no TLS, since the kernel names both ends (SO_PEERCRED).  The
 * caller's host is then this host's certified name ("localhost" without
 * a certificate), as a TLS connection from here would give; its user is
 * the name of its uid, except that root and the daemon's own uid (which
 * can read the host's key) are believed as over TLS.  The client uses
 * the socket only if its directory, and the root above it, are writable
 * by their owner alone and the listener runs as root, as itself or as
 * the directory's owner; otherwise, and whenever the socket is missing
 * or dead, it uses TCP with TLS.  A local socket never runs TLS (a
 * STARTTLS probe there is answered as a plain NULL).
 * NSR_LOCAL_SOCKETS=0 in a client's environment makes it use TCP always
 * (as NSR_TEST_CONNECT_VIA does), in a daemon's makes it listen on TCP
 * alone.
 *
 * Bounds, read once by nsr_rpc_server_new from the environment (defaults
 * sized for 1,024 concurrent sessions, several connections each, plus
 * headroom):
 *   NSR_RPC_MAX_CONNS    open connections (8192, and at most the descriptor
 *                        limit less a reserve).  At the cap the connection
 *                        that waited longest without sending anything is
 *                        closed to admit the new one, else the one idle the
 *                        longest, sparing those a handler attached state
 *                        to (sessions) if it can; only when every
 *                        connection has a request in progress is the new
 *                        one refused;
 *   NSR_RPC_MAX_THREADS  worker threads (1280); more ready connections
 *                        than that wait for a worker, they do not fail;
 *   NSR_RPC_GRACE_SEC    a connection that sends nothing for this long
 *                        after it was accepted is closed (30; 0 = never);
 *   NSR_RPC_IDLE_SEC     a connection with no request in progress for this
 *                        long is closed (86400; 0 = never).  Long because
 *                        save keeps its nsrd connection idle for a whole
 *                        backup; dead peers are found sooner by TCP
 *                        keepalive and TCP_USER_TIMEOUT, set on every
 *                        socket (NSR_TCP_TIMEOUT_MS, 2 minutes);
 *   NSR_RPC_READ_SEC     a peer that stops sending in the middle of a
 *                        request for this long is dropped (120);
 *   NSR_RPC_MAX_PER_PEER connections from one non-loopback address (1024;
 *                        0 = no cap).  At the cap that address's own
 *                        silent or idle connection makes room, else the
 *                        new one is refused.  Loopback peers are exempt:
 *                        every local client and daemon shares 127.0.0.1
 *                        (for tests, NSR_TEST_RPC_PEER_LOOPBACK=1 caps
 *                        them too).
 *   NSR_TEST_CONNECT_VIA  tests only: host:port of a recording proxy
 *                        (tests/clients/tcprec) every client connection
 *                        of this process goes through.
 *
 * Client calling sequence:
 *   nsr_rpc_open(host, prog, vers, &c, err)      locate via nsrexecd + connect
 *   (or nsr_rpc_connect(host, port, prog, vers, timeout_ms, &c, err))
 *   nsr_rpc_call(c, proc, xargs, &args, xres, &res)  one blocking call
 *   nsr_rpc_send(c, proc, xargs, &args)         pipelined one-way call: no
 *                                              wait; flushed when the buffer
 *                                              fills or by the next call
 *   nsr_rpc_call_send(c, proc, xargs, &args, &xid)  a call whose reply is
 *   nsr_rpc_call_recv(c, xid, xres, &res)          read later: up to
 *                                              NSR_RPC_PENDING_MAX calls
 *                                              outstanding, their replies
 *                                              read oldest first, one-way
 *                                              calls flowing meanwhile
 *   xdr_free(xres, &res) ... nsr_rpc_close(c)
 * Errors: NSR_ERR_CONNECT (with "host:port: reason" in err), NSR_ERR_TIMEOUT,
 * NSR_ERR_RPC (transport/protocol; message in err), NSR_ERR_UNSUPPORTED
 * (the server answered PROC_UNAVAIL: it does not know the procedure; the
 * connection stays usable).
 */
#ifndef NSR_RPC_H
#define NSR_RPC_H

#include <pthread.h>
#include <stdint.h>

#include <rpc/rpc.h>

struct nsr_buf;

/* Casting an xdr routine to xdrproc_t without tripping -Wcast-function-type. */
#define NSR_XDR(f) ((xdrproc_t)(void (*)(void))(f))

#define NSR_RPC_NOREPLY 1 /* handler return: one-way, send nothing */
#define NSR_RPC_CLOSE 2	  /* handler return: close this connection */
#define NSR_RPC_REFUSED 3 /* handler return: nsr_rpc_authorize refused */

#define NSR_RPC_SERIAL 0x1 /* run under the server-wide mutex */
/* Access classes (see "Authorization" above); a procedure with neither
 * flag is public.  The result of a classed procedure must begin with an
 * nsr_status, which carries the refusal. */
#define NSR_RPC_OWN 0x2	  /* own client: the program's authz decides */
#define NSR_RPC_ADMIN 0x4 /* administrators only: authz decides */
/* The handler runs without the server mutex and takes it itself; with
 * OWN or ADMIN it asks nsr_rpc_authorize (see "Authorization"). */
#define NSR_RPC_LOCKS_ITSELF 0x8

/* The identity a client states once per connection: a credential of this
 * private flavour ("NSRU") on its first call, whose body is the user name
 * (1 to NSR_RPC_USER_MAX bytes of [A-Za-z0-9._-], '$' last). */
#define NSR_AUTH_USER 0x4e535255
#define NSR_RPC_USER_MAX 64

/* Calls a client may have sent with nsr_rpc_call_send and not yet read
 * the reply of. */
#define NSR_RPC_PENDING_MAX 32

/* Default locator ports (nsrexecd), overridable by env NSR_EXEC_PORT and
 * NSR_PORTMAP_PORT or options. */
#define NSR_EXEC_PORT_DEFAULT 7937
#define NSR_PORTMAP_PORT_DEFAULT 7938

/* Connection: a byte stream with replaceable ops (plain TCP, or TLS
 * after the RFC 9289 STARTTLS exchange: see nsr/tls.h). */
struct nsr_conn;
struct nsr_conn_ops {
	int (*read)(struct nsr_conn *c, void *p, int n); /* >0, 0 EOF, <0 */
	int (*write)(struct nsr_conn *c, const void *p, int n); /* n or <0 */
	void (*close)(struct nsr_conn *c);
	int (*pending)(const struct nsr_conn *c); /* buffered bytes: 1/0 */
};

struct nsr_rpc_call; /* per-call context given to handlers */

typedef int (*nsr_rpc_fn)(void *ctx, void *args, void *res,
			  struct nsr_rpc_call *call);

struct nsr_rpc_proc {
	uint32_t proc;
	const char *name;
	xdrproc_t xargs;
	size_t argsize;
	xdrproc_t xres;
	size_t ressize;
	nsr_rpc_fn fn;
	unsigned flags;
};

/* An authorization decision for a classed procedure p (flags
 * NSR_RPC_OWN or NSR_RPC_ADMIN): NSR_OK lets the handler run; anything
 * else refuses the call with the words appended to why. */
typedef int (*nsr_rpc_authz_fn)(void *ctx, const struct nsr_rpc_call *call,
				const struct nsr_rpc_proc *p, const void *args,
				struct nsr_buf *why);

struct nsr_rpc_prog {
	uint32_t prog;
	uint32_t vers;
	const struct nsr_rpc_proc *procs;
	size_t nprocs;
	void *ctx;		/* handed to every handler */
	nsr_rpc_authz_fn authz; /* NULL: classed procedures are refused */
};

struct nsr_rpc_server;

/* nsr_rpc_server_new - server for these programs (the array must outlive
 * it). */
int nsr_rpc_server_new(const struct nsr_rpc_prog *progs, size_t nprogs,
		       struct nsr_rpc_server **out);
/* nsr_rpc_server_listen - bind+listen on addr:port (addr NULL = 127.0.0.1;
 * port 0 = ephemeral).  *bound gets the port.  Can be called more than once
 * (several addresses); nsr_rpc_server_listen_fd(srv, i) gives each fd. */
int nsr_rpc_server_listen(struct nsr_rpc_server *srv, const char *addr,
			  int port, int *bound);
/* nsr_rpc_server_listen_local - listen on <root>/sockets/<port> too
 * (port: the one nsr_rpc_server_listen bound), making the directory
 * (mode 0755) if missing; the socket is removed at stop.  NSR_OK, or an
 * error with the reason in err (the caller goes on with TCP alone):
 * NSR_ERR_EXISTS when a live listener holds that socket, NSR_ERR_PERM
 * when the directory is writable by others than its owner. */
int nsr_rpc_server_listen_local(struct nsr_rpc_server *srv, const char *root,
				int port, struct nsr_buf *err);
/* nsr_rpc_local_sweep - remove <root>/sockets/<port> (port 0: every
 * port's socket there) when a connect to it is refused (nothing listens)
 * and it was bound min_age_s seconds ago or more: the socket of a daemon
 * that ran without root (-u), which cannot remove its own from root's
 * directory.  For root's daemons (nsrsnmd, nsrexecd).  How many were
 * removed. */
int nsr_rpc_local_sweep(const char *root, int port, int min_age_s);
/* nsr_rpc_local_enabled - 0 when NSR_LOCAL_SOCKETS=0 (or a test proxy,
 * NSR_TEST_CONNECT_VIA, must see every connection): this process then
 * neither listens on nor connects to local sockets. */
int nsr_rpc_local_enabled(void);
/* nsr_rpc_local_path - "<root>/sockets/<port>" (port 0: the directory)
 * into out[len]; NSR_ERR_TOOBIG when it does not fit a socket address. */
int nsr_rpc_local_path(const char *root, int port, char *out, size_t len);
/* nsr_rpc_server_nlisten / listen_fd - the listening descriptors to poll. */
int nsr_rpc_server_nlisten(const struct nsr_rpc_server *srv);
int nsr_rpc_server_listen_fd(const struct nsr_rpc_server *srv, int i);
/* nsr_rpc_server_accept - accept the connections pending on listener i
 * (at most 64 per call) into the waiting room.  Returns NSR_OK,
 * NSR_ERR_LIMIT (one was refused at a cap: see the stats), or
 * NSR_ERR_SYSTEM. */
int nsr_rpc_server_accept(struct nsr_rpc_server *srv, int i);

/* The bounds in force (after the environment and the descriptor limit). */
struct nsr_rpc_limits {
	int max_conns;
	int max_threads;
	int max_per_peer; /* 0 = none */
	int grace_sec;	  /* 0 = never */
	int idle_sec;	  /* 0 = never */
	int read_sec;
};
/* nsr_rpc_server_limits - copy the bounds in force into *lim. */
void nsr_rpc_server_limits(const struct nsr_rpc_server *srv,
			   struct nsr_rpc_limits *lim);
/* nsr_rpc_server_set_max_threads - a program's own default for the
 * worker threads (before serving), unless NSR_RPC_MAX_THREADS gives one. */
void nsr_rpc_server_set_max_threads(struct nsr_rpc_server *srv, int n);

/* Kinds of TLS refusals (nsr/tls.h) the stats count. */
enum nsr_rpc_tls_event {
	NSR_RPC_TLS_PLAIN,   /* a call refused: the connection has no TLS */
	NSR_RPC_TLS_REVOKED, /* a call refused: certificate revoked */
	NSR_RPC_TLS_FAILED,  /* a TLS handshake failed */
	NSR_RPC_TLS_N
};

/* What the transport holds now, and what it did since the last reset. */
struct nsr_rpc_stats {
	long conns;	     /* open connections */
	long waiting;	     /* in the waiting room */
	long queued;	     /* bytes arrived, waiting for a worker */
	long busy;	     /* being served */
	long threads;	     /* worker threads */
	long closed_silent;  /* sent nothing within the grace time */
	long closed_idle;    /* no request within the idle time */
	long closed_stalled; /* stopped sending in the middle of a request */
	long evicted;	     /* closed at the connection cap for a new one */
	long refused;	     /* refused at the cap: every connection busy */
	long peer_evicted;   /* closed at the per-address cap for a new one */
	long peer_refused;   /* refused at the per-address cap */
	long thread_waits;   /* a request waited: every worker busy */
	long thread_fails;   /* a worker thread could not be created */
	long streams_made;   /* worker XDR streams made (two buffers each) */
	char peer_last[48];  /* address last hit by the per-address cap */
	long tls[NSR_RPC_TLS_N];	    /* TLS refusals by kind */
	char tls_last[NSR_RPC_TLS_N][200]; /* the last of each: who, why */
};
/* nsr_rpc_server_stats - fill *st; with reset, zero the event counters
 * (closed_silent to streams_made, tls) afterwards. */
void nsr_rpc_server_stats(struct nsr_rpc_server *srv, struct nsr_rpc_stats *st,
			  int reset);
/* nsr_rpc_server_lock/unlock - take the server-wide mutex (the one SERIAL
 * procedures run under) from other threads, e.g. the daemon's timer tick. */
void nsr_rpc_server_lock(struct nsr_rpc_server *srv);
void nsr_rpc_server_unlock(struct nsr_rpc_server *srv);
/* nsr_rpc_server_trylock - take it only if free (1), else 0: for a
 * daemon's main loop, which must never wait on a handler. */
int nsr_rpc_server_trylock(struct nsr_rpc_server *srv);
/* nsr_rpc_cond_init - a condition variable whose timed waits run on the
 * monotonic clock (nsr_rpc_server_wait's, and any handler's).  NSR_OK or
 * NSR_ERR_SYSTEM. */
int nsr_rpc_cond_init(pthread_cond_t *c);
/* nsr_rpc_server_wait - with the server mutex held (a SERIAL handler, or
 * after nsr_rpc_server_lock): wait on c, the mutex released meanwhile,
 * until c is signalled or ms milliseconds pass; the mutex is held again
 * on return, and other SERIAL handlers may have run (the rule above for
 * releasing it applies).  1 signalled (or woken early), 0 timed out. */
int nsr_rpc_server_wait(struct nsr_rpc_server *srv, pthread_cond_t *c,
			unsigned ms);
/* nsr_rpc_server_stop - stop accepting, close every connection and join
 * the workers: once it returns no handler runs and every connection's
 * close callback has run, while srv itself (its lock) stays usable. */
void nsr_rpc_server_stop(struct nsr_rpc_server *srv);
/* nsr_rpc_server_free - stop (if not yet) and free. */
void nsr_rpc_server_free(struct nsr_rpc_server *srv);

/* Per-call helpers for handlers. */
/* nsr_rpc_call_peer - "address:port" of the caller (static per call). */
const char *nsr_rpc_call_peer(const struct nsr_rpc_call *call);
/* nsr_rpc_call_peer_is_local - 1 if the caller is on 127/8 or ::1, or
 * came over a local socket. */
int nsr_rpc_call_peer_is_local(const struct nsr_rpc_call *call);
/* nsr_rpc_call_local - 1 if the caller came over a local socket (its
 * identity is the kernel's word, see "Same-host connections"). */
int nsr_rpc_call_local(const struct nsr_rpc_call *call);
/* nsr_rpc_call_peer_host - the caller's host name as its TLS certificate
 * (signed by the datazone CA, not revoked) states it, or, for a caller
 * on a local socket, this host's certified name; NULL when the
 * connection did not start TLS (a host allowed in plain-hosts) and is no
 * local one of a host with a certificate.  The identity an authorization
 * step builds on. */
const char *nsr_rpc_call_peer_host(const struct nsr_rpc_call *call);
/* nsr_rpc_authorize - for a handler of an NSR_RPC_LOCKS_ITSELF procedure,
 * under the server mutex: NSR_OK if its program's authz function lets
 * this call (with its decoded args) run; else NSR_ERR_PERM, and the
 * handler returns NSR_RPC_REFUSED, which answers with the reason. */
int nsr_rpc_authorize(struct nsr_rpc_call *call, const void *args);
/* nsr_rpc_call_user - the user the caller stated on its connection
 * (NSR_AUTH_USER), or NULL when it stated none. */
const char *nsr_rpc_call_user(const struct nsr_rpc_call *call);
/* nsr_rpc_call_host - the caller's host: nsr_rpc_call_peer_host if
 * there is one, else "localhost" on a loopback or local connection,
 * else its address. */
const char *nsr_rpc_call_host(const struct nsr_rpc_call *call);
/* nsr_rpc_call_who - "user@host" of the caller into out[len] ("?" for a
 * user not stated); returns out. */
const char *nsr_rpc_call_who(const struct nsr_rpc_call *call, char *out,
			     size_t len);
/* nsr_rpc_user_valid - 1 if name is a user name a caller may state. */
int nsr_rpc_user_valid(const char *name);
/* nsr_rpc_cred_user - the user an NSR_AUTH_USER credential body of len
 * bytes states, into out: 1 if it is a valid name (no NUL inside), 0 if
 * the credential is to be refused. */
int nsr_rpc_cred_user(const void *body, size_t len,
		      char out[NSR_RPC_USER_MAX + 1]);
/* nsr_rpc_self_user - the name this process states: its effective uid's
 * name (tests: NSR_TEST_USER); NULL if it has none that is valid.  The
 * name is looked up at the first call and kept: a daemon that calls it
 * before it gives up root (nsr/daemon.h, -u) goes on stating root, as
 * it holds the host's key. */
const char *nsr_rpc_self_user(void);
/*
 * Grants: nsrd hands a client, with the mover of its session, a grant to
 * write or read one save set there (struct nsr_grant, nsr_common.x); the
 * mover checks it with the datazone's grant key (fetched once from nsrd,
 * GRANT_KEY) and needs no call back.  The mac covers kind, ssid and
 * expiry (grant.c).
 */
struct nsr_grant;
/* nsr_rpc_grant_make - *g = a grant of kind for ssid until expires. */
int nsr_rpc_grant_make(const uint8_t *key, uint32_t kind, uint32_t ssid,
		       int64_t expires, struct nsr_grant *g);
/* nsr_rpc_grant_check - NSR_OK if g grants kind on ssid at now; else
 * NSR_ERR_PERM (other kind or ssid, expired, another key). */
int nsr_rpc_grant_check(const uint8_t *key, const struct nsr_grant *g,
			uint32_t kind, uint32_t ssid, int64_t now);

/* nsr_rpc_vouch_path - "<root>/nsrexecd.sock", the Unix socket where
 * nsrexecd vouches for local users, into out[len]. */
int nsr_rpc_vouch_path(const char *root, char *out, size_t len);
/* A request to nsrexecd's vouching socket: one line, "HOST PORT PROG
 * VERS\n" (vouch.c). */
struct nsr_vouch_req {
	char host[256]; /* 1-255 bytes, none of them space or control */
	int port;	/* 1-65535 */
	uint32_t prog, vers;
};
/* nsr_rpc_vouch_format - the request line of r (with its newline) into
 * out[len]; NSR_ERR_INVAL if r is not a valid request. */
int nsr_rpc_vouch_format(const struct nsr_vouch_req *r, char *out,
			 size_t len);
/* nsr_rpc_vouch_parse - a request line (without its newline): exactly
 * four fields separated by single spaces, decimal numbers without sign
 * or leading zeros in range; NSR_ERR_SYNTAX for anything else. */
int nsr_rpc_vouch_parse(const char *line, struct nsr_vouch_req *r);
/* nsr_rpc_vouch_serve - nsrexecd: serve one connection fd of that
 * socket whose peer the kernel says is user (SO_PEERCRED): read the
 * request, connect as this host stating user, relay until either side
 * closes (fd is left open).  NSR_OK or why it could not connect. */
int nsr_rpc_vouch_serve(int fd, const char *user);
/* nsr_rpc_call_conn_data - per-connection slot: a handler may attach state
 * to its connection (freed with the given destructor when it closes). */
void *nsr_rpc_call_conn_data(const struct nsr_rpc_call *call);
void nsr_rpc_call_set_conn_data(struct nsr_rpc_call *call, void *data,
				void (*destroy)(void *data));

/* Client. */
struct nsr_rpc_clnt;

/* nsr_rpc_connect - connect to host:port within timeout_ms. */
int nsr_rpc_connect(const char *host, int port, uint32_t prog, uint32_t vers,
		    int timeout_ms, struct nsr_rpc_clnt **out,
		    struct nsr_buf *err);
/* nsr_rpc_open - ask host's locator (nsrexecd) for prog's port, connect. */
int nsr_rpc_open(const char *host, uint32_t prog, uint32_t vers,
		 struct nsr_rpc_clnt **out, struct nsr_buf *err);
/* nsr_rpc_set_timeout - reply timeout for nsr_rpc_call (default 300 s). */
void nsr_rpc_set_timeout(struct nsr_rpc_clnt *c, int timeout_ms);
/* nsr_rpc_call - send a call and wait for its reply (results decoded into
 * res, which the caller frees with xdr_free(xres, res)).  NSR_ERR_STATE
 * while replies of nsr_rpc_call_send calls are unread. */
int nsr_rpc_call(struct nsr_rpc_clnt *c, uint32_t proc, xdrproc_t xargs,
		 void *args, xdrproc_t xres, void *res);
/* nsr_rpc_call_send - send a call (flushed at once) without waiting for
 * its reply; *xid names it for nsr_rpc_call_recv.  NSR_ERR_LIMIT when
 * NSR_RPC_PENDING_MAX replies are unread.  The server answers the calls
 * of a connection in order, so replies are read oldest first. */
int nsr_rpc_call_send(struct nsr_rpc_clnt *c, uint32_t proc, xdrproc_t xargs,
		      void *args, uint32_t *xid);
/* nsr_rpc_call_recv - wait for the reply to call xid, which must be the
 * oldest unread one (NSR_ERR_STATE otherwise), and decode it into res
 * (freed by the caller with xdr_free).  Errors as nsr_rpc_call. */
int nsr_rpc_call_recv(struct nsr_rpc_clnt *c, uint32_t xid, xdrproc_t xres,
		      void *res);
/* nsr_rpc_pending - how many sent calls still have their reply unread. */
unsigned nsr_rpc_pending(const struct nsr_rpc_clnt *c);
/* nsr_rpc_fd - the connection's descriptor, for a caller that polls many
 * connections with one call outstanding on each: readable once its reply
 * (or the end) arrives; nsr_rpc_call_recv then reads it. */
int nsr_rpc_fd(const struct nsr_rpc_clnt *c);
/* nsr_rpc_send - a one-way call to a procedure that never replies. */
int nsr_rpc_send(struct nsr_rpc_clnt *c, uint32_t proc, xdrproc_t xargs,
		 void *args);
/* nsr_rpc_send_now - nsr_rpc_send, and the buffer written out at once
 * (a connection whose next call may come much later). */
int nsr_rpc_send_now(struct nsr_rpc_clnt *c, uint32_t proc, xdrproc_t xargs,
		     void *args);
/* nsr_rpc_closed - 1 if the peer has closed this idle connection (no
 * reply outstanding, end of file waiting): a caller may reconnect and
 * send its call there without risk of doing it twice. */
int nsr_rpc_closed(struct nsr_rpc_clnt *c);
/* nsr_rpc_unsent - bytes this client wrote that its TCP has not sent yet
 * (-1: unknown); see nsr_mmd_set_window for the use. */
long nsr_rpc_unsent(const struct nsr_rpc_clnt *c);
/* nsr_rpc_peer_local - 1 if the peer's address is 127/8 or ::1. */
int nsr_rpc_peer_local(const struct nsr_rpc_clnt *c);
/* nsr_rpc_peer - "host:port" this client talks to. */
const char *nsr_rpc_peer(const struct nsr_rpc_clnt *c);
/* nsr_rpc_last_error - text of the last failure on this client. */
const char *nsr_rpc_last_error(const struct nsr_rpc_clnt *c);
/* nsr_rpc_close - close and free (NULL is fine). */
void nsr_rpc_close(struct nsr_rpc_clnt *c);

/* nsr_rpc_prog_name - "nsrd", "nsrmmdbd", ... for a program number. */
const char *nsr_rpc_prog_name(uint32_t prog);

/* Locator helpers (the nsrexecd "portmapper"). */
/* nsr_rpc_locator_port - port of the locator: env NSR_PORTMAP_PORT or 7938. */
int nsr_rpc_locator_port(void);
/* nsr_rpc_register - tell the local locator that prog/vers is served on port
 * by pid; NSR_OK or an error (err gets the reason). */
int nsr_rpc_register(uint32_t prog, uint32_t vers, int port,
		     struct nsr_buf *err);
/* nsr_rpc_unregister - forget prog/vers at the local locator. */
int nsr_rpc_unregister(uint32_t prog, uint32_t vers);
/* nsr_rpc_locate - ask host's locator for prog/vers: *port or an error. */
int nsr_rpc_locate(const char *host, uint32_t prog, uint32_t vers, int *port,
		   struct nsr_buf *err);

#endif /* NSR_RPC_H */
