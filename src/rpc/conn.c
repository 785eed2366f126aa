/*
 * conn.c - the byte-stream layer under every RPC connection.
 *
 * Plain TCP here; tls.c swaps in TLS ops after the STARTTLS exchange
 * (RFC 9289), reading and writing through the two TCP functions below:
 * nothing above these files reads or writes a socket.  Reads honour a
 * per-connection timeout so a silent peer cannot hold a thread forever,
 * and every socket has TCP_USER_TIMEOUT and keepalives, so a cut link or
 * a vanished host ends a connection within NSR_TCP_TIMEOUT_MS (2 minutes
 * by default) on both sides.
 */
#include "nsr/compat.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <fcntl.h>
#include <arpa/inet.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "rpc_int.h"

/* nsr_conn_tcp_read - read with the connection's timeout; -1 on
 * EOF/error/timeout. */
int nsr_conn_tcp_read(struct nsr_conn *c, void *p, int n)
{
	for (;;) {
		ssize_t r;

		if (c->timeout_ms > 0) {
			struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
			int pr = poll(&pfd, 1, c->timeout_ms);

			if (pr == 0) {
				c->err = NSR_ERR_TIMEOUT;
				return -1;
			}
			if (pr < 0 && errno == EINTR)
				continue;
			if (pr < 0) {
				c->err = NSR_ERR_SYSTEM;
				c->sys_errno = errno;
				return -1;
			}
		}
		r = read(c->fd, p, (size_t)n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			/* EAGAIN: SO_RCVTIMEO (server connections) expired. */
			if (r == 0)
				c->err = NSR_ERR_EOF;
			else if (errno == EAGAIN || errno == EWOULDBLOCK)
				c->err = NSR_ERR_TIMEOUT;
			else
				c->err = NSR_ERR_SYSTEM;
			c->sys_errno = r < 0 ? errno : 0;
			return -1;
		}
		return (int)r;
	}
}

/* nsr_conn_tcp_write - write all n bytes; -1 on error. */
int nsr_conn_tcp_write(struct nsr_conn *c, const void *p, int n)
{
	const char *s = p;
	int left = n;

	while (left > 0) {
		ssize_t w = send(c->fd, s, (size_t)left, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			/* EAGAIN: SO_SNDTIMEO (server connections). */
			if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				c->err = NSR_ERR_TIMEOUT;
			else
				c->err = NSR_ERR_SYSTEM;
			c->sys_errno = w < 0 ? errno : 0;
			return -1;
		}
		s += w;
		left -= (int)w;
	}
	return n;
}

/* tcp_close - close the socket. */
static void tcp_close(struct nsr_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

static const struct nsr_conn_ops tcp_ops = {
	.read = nsr_conn_tcp_read,
	.write = nsr_conn_tcp_write,
	.close = tcp_close,
};

/* tcp_timeout_ms - how long unacknowledged data or a silent peer may
 * last before the kernel drops the connection: env NSR_TCP_TIMEOUT_MS,
 * else 2 minutes (a cut link then fails a session in bounded time
 * instead of after the kernel's 15 minutes of retransmissions). */
static int tcp_timeout_ms(void)
{
	const char *e = getenv("NSR_TCP_TIMEOUT_MS");
	long v = e && *e ? strtol(e, NULL, 10) : 0;

	return v >= 1000 && v <= 3600000 ? (int)v : 120000;
}

/* tcp_liveness - TCP_USER_TIMEOUT for data in flight and keepalives for
 * idle connections, both bounded by tcp_timeout_ms. */
static void tcp_liveness(int fd)
{
	int one = 1, ms = tcp_timeout_ms();
	int idle = ms / 2000 > 0 ? ms / 2000 : 1, intvl = idle / 4 + 1;
	int cnt = 4;
	unsigned user = (unsigned)ms;

	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user, sizeof(user));
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
}

/* nsr_conn_init_unix - wrap a connected Unix-domain socket: no TCP
 * options, no address (local.c and vouch.c name its peer). */
void nsr_conn_init_unix(struct nsr_conn *c, int fd)
{
	memset(c, 0, sizeof(*c));
	c->ops = &tcp_ops;
	c->fd = fd;
	snprintf(c->peer, sizeof(c->peer), "local socket");
	snprintf(c->addr, sizeof(c->addr), "local");
}

/* nsr_conn_init_fd - wrap a connected TCP socket. */
void nsr_conn_init_fd(struct nsr_conn *c, int fd)
{
	int one = 1;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[INET6_ADDRSTRLEN] = "?";
	int port = 0;

	memset(c, 0, sizeof(*c));
	c->ops = &tcp_ops;
	c->fd = fd;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	tcp_liveness(fd);
	if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0) {
		if (ss.ss_family == AF_INET) {
			struct sockaddr_in *a = (struct sockaddr_in *)&ss;

			inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
			port = ntohs(a->sin_port);
		} else if (ss.ss_family == AF_INET6) {
			struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

			inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
			port = ntohs(a->sin6_port);
		}
		c->peer_loopback =
			(ss.ss_family == AF_INET &&
			 (ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >>
			  24) == 127) ||
			(ss.ss_family == AF_INET6 &&
			 IN6_IS_ADDR_LOOPBACK(
				 &((struct sockaddr_in6 *)&ss)->sin6_addr));
	}
	snprintf(c->peer, sizeof(c->peer), "%s:%d", host, port);
	snprintf(c->addr, sizeof(c->addr), "%s", host);
}

/* connect_one - non-blocking connect to one address within timeout_ms. */
static int connect_one(const struct addrinfo *ai, int timeout_ms, int *fd_out)
{
	int fd, flags, soerr = 0;
	socklen_t sl = sizeof(soerr);
	struct pollfd pfd;

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
		    ai->ai_protocol);
	if (fd < 0)
		return NSR_ERR_SYSTEM;
	flags = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, flags | O_NONBLOCK);
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
		if (errno != EINPROGRESS) {
			soerr = errno;
			goto fail;
		}
		pfd.fd = fd;
		pfd.events = POLLOUT;
		for (;;) {
			int pr = poll(&pfd, 1, timeout_ms);

			if (pr < 0 && errno == EINTR)
				continue;
			if (pr == 0) {
				soerr = ETIMEDOUT;
				goto fail;
			}
			break;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0)
			soerr = errno;
		if (soerr)
			goto fail;
	}
	fcntl(fd, F_SETFL, flags);
	*fd_out = fd;
	return NSR_OK;
fail:
	close(fd);
	errno = soerr;
	return soerr == ETIMEDOUT ? NSR_ERR_TIMEOUT : NSR_ERR_CONNECT;
}

/* via_proxy - tests only: NSR_TEST_CONNECT_VIA=host:port sends every
 * connection through a recording proxy (tests/clients/tcprec), which
 * reads "CONNECT host port\n" and forwards what follows unchanged.
 * NSR_OK and *c connected, or an error; 1 when the knob is unset. */
static int via_proxy(struct nsr_conn *c, const char *host, int port,
		     int timeout_ms, struct nsr_buf *err)
{
	const char *v = getenv("NSR_TEST_CONNECT_VIA"), *colon;
	char phost[256], line[320];
	int rc, n;

	if (!v || !*v || !(colon = strrchr(v, ':')) ||
	    (size_t)(colon - v) >= sizeof(phost))
		return 1;
	snprintf(phost, sizeof(phost), "%.*s", (int)(colon - v), v);
	rc = nsr_conn_connect_direct(c, phost, atoi(colon + 1), timeout_ms,
				     err);
	if (rc)
		return rc;
	n = snprintf(line, sizeof(line), "CONNECT %s %d\n", host, port);
	if (n <= 0 || (size_t)n >= sizeof(line) ||
	    nsr_conn_tcp_write(c, line, n) != n) {
		nsr_conn_close(c);
		return NSR_ERR_CONNECT;
	}
	snprintf(c->peer, sizeof(c->peer), "%s:%d", host, port);
	return NSR_OK;
}

/* nsr_conn_connect - connect to host:port within timeout_ms. */
int nsr_conn_connect(struct nsr_conn *c, const char *host, int port,
		     int timeout_ms, struct nsr_buf *err)
{
	int rc = via_proxy(c, host, port, timeout_ms, err);

	return rc == 1 ? nsr_conn_connect_direct(c, host, port, timeout_ms,
						 err)
		       : rc;
}

/* nsr_conn_connect_direct - connect to host:port (no proxy). */
int nsr_conn_connect_direct(struct nsr_conn *c, const char *host, int port,
			    int timeout_ms, struct nsr_buf *err)
{
	struct addrinfo hints, *res = NULL, *ai;
	char portstr[16];
	int rc, fd = -1, gai, saved = 0;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(portstr, sizeof(portstr), "%d", port);
	gai = getaddrinfo(host, portstr, &hints, &res);
	if (gai != 0) {
		if (err)
			nsr_buf_addf(err, "host name '%s' does not resolve: %s "
				     "(check the name, /etc/hosts or DNS)",
				     host, gai_strerror(gai));
		return gai == EAI_AGAIN ? NSR_ERR_CONNECT : NSR_ERR_NOHOST;
	}
	rc = NSR_ERR_CONNECT;
	for (ai = res; ai; ai = ai->ai_next) {
		rc = connect_one(ai, timeout_ms, &fd);
		if (rc == NSR_OK)
			break;
		saved = errno;
	}
	freeaddrinfo(res);
	if (rc != NSR_OK) {
		if (err)
			nsr_buf_addf(err, "cannot connect to %s:%d: %s", host,
				     port,
				     rc == NSR_ERR_TIMEOUT ? "timed out"
							   : strerror(saved));
		return rc;
	}
	nsr_conn_init_fd(c, fd);
	snprintf(c->peer, sizeof(c->peer), "%s:%d", host, port);
	return NSR_OK;
}

/* xdrrec callbacks: the handle is the struct nsr_conn. */
int nsr_conn_xdr_read(void *h, void *p, int n)
{
	struct nsr_conn *c = h;

	return c->ops->read(c, p, n);
}

/* nsr_conn_xdr_write - xdrrec write callback (see nsr_conn_xdr_read). */
int nsr_conn_xdr_write(void *h, void *p, int n)
{
	struct nsr_conn *c = h;

	return c->ops->write(c, p, n);
}

/* nsr_conn_pending - 1 if bytes already read from the socket wait in
 * the connection (decrypted TLS data), so polling the socket would miss
 * them. */
int nsr_conn_pending(const struct nsr_conn *c)
{
	return c->ops && c->ops->pending ? c->ops->pending(c) : 0;
}

/* nsr_conn_close - close through the ops. */
void nsr_conn_close(struct nsr_conn *c)
{
	if (c->ops)
		c->ops->close(c);
}
