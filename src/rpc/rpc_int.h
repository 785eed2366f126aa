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
};

void nsr_conn_init_fd(struct nsr_conn *c, int fd);
int nsr_conn_connect(struct nsr_conn *c, const char *host, int port,
		     int timeout_ms, struct nsr_buf *err);
int nsr_conn_xdr_read(void *h, void *p, int n);
int nsr_conn_xdr_write(void *h, void *p, int n);
void nsr_conn_close(struct nsr_conn *c);

#endif /* NSR_RPC_INT_H */
