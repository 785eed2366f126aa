/*
 * rpc_int.h - private to src/rpc: the connection object shared by the
 * server and client halves of the transport.
 */
#ifndef NSR_RPC_INT_H
#define NSR_RPC_INT_H

#include "nsr/rpc.h"

struct nsr_buf;

#define NSR_RPC_BUFSZ (256 * 1024) /* xdrrec buffer each way */

struct nsr_conn {
	const struct nsr_conn_ops *ops;
	int fd;
	int timeout_ms;	   /* read timeout; 0 = wait forever */
	int err;	   /* last transport error (nsr_err) */
	int sys_errno;	   /* its errno, when err is NSR_ERR_SYSTEM */
	int peer_loopback; /* peer address is 127/8 or ::1 */
	char peer[80];	   /* "address:port" */
	char addr[48];	   /* the peer's address alone */
	void *ssl;	   /* SSL *, once TLS started (tls.c) */
	char peer_host[256]; /* host name certified by the peer's cert */
	char serial[64];     /* that certificate's serial (hex) */
	char *wbuf;	     /* TLS records of one large write (tlswire.c) */
	int wlen, wcap;	     /* bytes in wbuf, its size */
	int coalesce;	     /* a large write is gathering its records */
	/* Same-host connections over a Unix-domain socket (local.c). */
	int local;	/* this is one: the kernel vouches for both ends */
	long peer_uid;	/* the caller's uid (server side) */
	int user_fixed; /* the caller's user is its uid's name, not stated */
	int resolved;	/* names looked up (nsr_conn_local_resolve) */
};

void nsr_conn_init_fd(struct nsr_conn *c, int fd);
void nsr_conn_init_unix(struct nsr_conn *c, int fd);
int nsr_conn_connect(struct nsr_conn *c, const char *host, int port,
		     int timeout_ms, struct nsr_buf *err);
int nsr_conn_connect_direct(struct nsr_conn *c, const char *host, int port,
			    int timeout_ms, struct nsr_buf *err);
int nsr_conn_xdr_read(void *h, void *p, int n);
int nsr_conn_xdr_write(void *h, void *p, int n);
void nsr_conn_close(struct nsr_conn *c);
int nsr_conn_tcp_read(struct nsr_conn *c, void *p, int n);
int nsr_conn_tcp_write(struct nsr_conn *c, const void *p, int n);
int nsr_conn_pending(const struct nsr_conn *c);

/* tls.c and tlswire.c: the STARTTLS exchange, the TLS ops of a
 * connection, the policy. */
int nsr_tls_client_start(struct nsr_conn *c, const char *host, uint32_t prog,
			 uint32_t vers, struct nsr_buf *err);
int nsr_tls_server_offer(void);
int nsr_tls_server_start(struct nsr_conn *c, struct nsr_buf *err);
int nsr_tls_required(void);
int nsr_tls_plain_allowed(const struct nsr_conn *c);
int nsr_tls_conn_revoked(const struct nsr_conn *c);

/* local.c: same-host connections (nsr/rpc.h, "Same-host connections").
 * nsr_conn_connect_local returns 1 when the socket is not to be used. */
int nsr_conn_connect_local(struct nsr_conn *c, const char *host, int port,
			   const char *user);
void nsr_conn_init_local(struct nsr_conn *c, int fd);
void nsr_conn_local_resolve(struct nsr_conn *c,
			    char user[NSR_RPC_USER_MAX + 1]);
/* tls.c: the host name this process's certificate states (read again
 * at most a second later, tls.c invariant 4); nsr_tls_changed: this
 * process wrote a certificate, read it at the next call. */
int nsr_tls_self_name(char *out, size_t len);
void nsr_tls_changed(void);

/* tls.c, for tlsca.c: "<root>/tls/<name>" into out[len]; the serial of a
 * certificate in hex into out[64]. */
int nsr_tls_path(const char *root, const char *name, char *out,
		 size_t len);
struct x509_st;
void nsr_tls_serial_hex(const struct x509_st *x, char *out);
/* tls.c, for tlswire.c: the process's TLS context (an SSL_CTX). */
struct ssl_ctx_st;
struct ssl_ctx_st *nsr_tls_ctx_get(int *broken);

/* vouch.c and client.c: connections through nsrexecd for a process that
 * cannot read this host's key (nsr/rpc.h, "Authorization"). */
int nsr_rpc_vouch_wanted(char *path, size_t len);
int nsr_rpc_vouch_connect(struct nsr_conn *c, const char *path,
			  const char *host, int port, uint32_t prog,
			  uint32_t vers, struct nsr_buf *err);
/* nsr_rpc_connect_as - nsr_rpc_connect stating user instead of this
 * process's name (nsrexecd vouching). */
int nsr_rpc_connect_as(const char *host, int port, uint32_t prog,
		       uint32_t vers, const char *user,
		       struct nsr_rpc_clnt **out, struct nsr_buf *err);
/* nsr_rpc_clnt_conn - the connection under a client (for the relay). */
struct nsr_conn *nsr_rpc_clnt_conn(struct nsr_rpc_clnt *c);

#endif /* NSR_RPC_INT_H */
