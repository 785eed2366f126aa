/*
 * vouch.c - users vouched for by nsrexecd (nsr/rpc.h, "Authorization"):
 * a process that cannot read this host's key (not root) cannot open a
 * TLS connection as this host.  It connects instead to nsrexecd's Unix
 * socket <root>/nsrexecd.sock and asks for one connection to a program;
 * nsrexecd learns its uid from the kernel (SO_PEERCRED), opens the
 * connection with this host's certificate, states the uid's name on it
 * (a NULL call with the NSR_AUTH_USER credential), answers "ok", and
 * relays bytes both ways until either side closes.  The process's own
 * first call states its own name again: the server refuses a different
 * one, so the process cannot claim to be anyone else.
 *
 * Request, one line: "HOST PORT PROG VERS\n"; answer: "ok\n" or
 * "error: WHY\n".
 */
#include "nsr/compat.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <openssl/ssl.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/rpc.h"
#include "nsr/tls.h"
#include "rpc_int.h"

#define LINE_MAX_ 600
#define REQUEST_MS 5000

/* nsr_rpc_vouch_path - "<root>/nsrexecd.sock" into out[len]. */
int nsr_rpc_vouch_path(const char *root, char *out, size_t len)
{
	int n = snprintf(out, len, "%s/nsrexecd.sock", root);

	return n < 0 || (size_t)n >= len ? NSR_ERR_TOOBIG : NSR_OK;
}

/* host_ok - 1 to 255 bytes, none a space or control character. */
static int host_ok(const char *h, size_t n)
{
	if (n == 0 || n > 255)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)h[i] <= ' ' || (unsigned char)h[i] == 0x7f)
			return 0;
	return 1;
}

/* nsr_rpc_vouch_format - "HOST PORT PROG VERS\n" of a valid request. */
int nsr_rpc_vouch_format(const struct nsr_vouch_req *r, char *out,
			 size_t len)
{
	int n;

	if (!host_ok(r->host, strnlen(r->host, sizeof(r->host))) ||
	    r->port < 1 || r->port > 65535)
		return NSR_ERR_INVAL;
	n = snprintf(out, len, "%s %d %u %u\n", r->host, r->port,
		     (unsigned)r->prog, (unsigned)r->vers);
	return n < 0 || (size_t)n >= len ? NSR_ERR_TOOBIG : NSR_OK;
}

/* number - a decimal field of p[0..n): no sign, no leading zero, at most
 * max; 1 and its value in *v, or 0. */
static int number(const char *p, size_t n, uint64_t max, uint64_t *v)
{
	uint64_t x = 0;

	if (n == 0 || n > 10 || (p[0] == '0' && n > 1))
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return 0;
		x = x * 10 + (uint64_t)(p[i] - '0');
	}
	*v = x;
	return x <= max;
}

/* nsr_rpc_vouch_parse - the four fields of a request line. */
int nsr_rpc_vouch_parse(const char *line, struct nsr_vouch_req *r)
{
	const char *f[4];
	size_t n[4];
	uint64_t v[3];
	const char *p = line;

	memset(r, 0, sizeof(*r));
	for (int i = 0; i < 4; i++) {
		const char *e = strchr(p, ' ');

		f[i] = p;
		n[i] = e ? (size_t)(e - p) : strlen(p);
		if ((i < 3) != (e != NULL))
			return NSR_ERR_SYNTAX; /* not exactly four fields */
		p = e ? e + 1 : p + n[i];
	}
	if (!host_ok(f[0], n[0]) || !number(f[1], n[1], 65535, &v[0]) ||
	    v[0] == 0 || !number(f[2], n[2], UINT32_MAX, &v[1]) ||
	    !number(f[3], n[3], UINT32_MAX, &v[2]))
		return NSR_ERR_SYNTAX;
	memcpy(r->host, f[0], n[0]);
	r->port = (int)v[0];
	r->prog = (uint32_t)v[1];
	r->vers = (uint32_t)v[2];
	return NSR_OK;
}

/* read_line - one line of at most len-1 bytes from fd within ms. */
static int read_line(int fd, char *out, size_t len, int ms)
{
	size_t n = 0;

	while (n + 1 < len) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t r;

		if (poll(&p, 1, ms) <= 0)
			return NSR_ERR_TIMEOUT;
		r = read(fd, out + n, 1);
		if (r <= 0)
			return NSR_ERR_EOF;
		if (out[n] == '\n') {
			out[n] = '\0';
			return NSR_OK;
		}
		n++;
	}
	return NSR_ERR_TOOBIG;
}

/* answer - the one-line answer to the requester. */
static void answer(int fd, const char *text)
{
	(void)nsr_write_full(fd, text, strlen(text));
}

/* pump - relay between fd and the connection until either side ends. */
static void pump(int fd, struct nsr_conn *c)
{
	char buf[65536];

	c->timeout_ms = 0;
	for (;;) {
		struct pollfd p[2] = {{.fd = fd, .events = POLLIN},
				      {.fd = c->fd, .events = POLLIN}};
		int n;

		if (nsr_conn_pending(c))
			p[1].revents = POLLIN;
		else if (poll(p, 2, -1) < 0 && errno != EINTR)
			return;
		if (p[0].revents) {
			ssize_t r = read(fd, buf, sizeof(buf));

			if (r <= 0 || c->ops->write(c, buf, (int)r) != r)
				return;
		}
		if (p[1].revents) {
			n = c->ops->read(c, buf, (int)sizeof(buf));
			if (n <= 0 || nsr_write_full(fd, buf, (size_t)n))
				return;
		}
	}
}

/* nsr_rpc_vouch_serve - nsrexecd: serve one requester fd, vouched as
 * user; returns when the relay ends (fd is left open). */
int nsr_rpc_vouch_serve(int fd, const char *user)
{
	char line[LINE_MAX_], msg[600];
	struct nsr_vouch_req q;
	struct nsr_rpc_clnt *c = NULL;
	struct nsr_buf err;
	int rc;

	if (!nsr_rpc_user_valid(user)) {
		answer(fd, "error: this user has no valid name\n");
		return NSR_ERR_PERM;
	}
	rc = read_line(fd, line, sizeof(line), REQUEST_MS);
	if (rc == NSR_OK)
		rc = nsr_rpc_vouch_parse(line, &q);
	if (rc) {
		answer(fd, "error: bad request\n");
		return rc;
	}
	nsr_buf_init(&err, 0);
	rc = nsr_rpc_connect_as(q.host, q.port, q.prog, q.vers, user, &c,
				&err);
	if (rc == NSR_OK)
		rc = nsr_rpc_call(c, 0, NSR_XDR(xdr_void), NULL,
				  NSR_XDR(xdr_void), NULL);
	if (rc) {
		snprintf(msg, sizeof(msg), "error: %s\n",
			 err.len ? err.data
			 : c	 ? nsr_rpc_last_error(c)
				 : nsr_strerror(rc));
		answer(fd, msg);
	} else {
		answer(fd, "ok\n");
		pump(fd, nsr_rpc_clnt_conn(c));
	}
	nsr_rpc_close(c);
	nsr_buf_release(&err);
	return rc;
}

/* nsr_rpc_vouch_wanted - 1 if this process should connect through
 * nsrexecd: TLS is on, it is not root, it cannot load this host's
 * certificate, and the socket exists. */
int nsr_rpc_vouch_wanted(char *path, size_t len)
{
	struct stat st;
	SSL_CTX *x;

	if (nsr_tls_disabled() || geteuid() == 0)
		return 0;
	x = nsr_tls_ctx_get(NULL);
	if (x) {
		SSL_CTX_free(x);
		return 0;
	}
	return nsr_rpc_vouch_path(nsr_tls_root(), path, len) == NSR_OK &&
	       stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* nsr_rpc_vouch_connect - c: a connection to host:port through
 * nsrexecd's socket at path (the relay runs TLS). */
int nsr_rpc_vouch_connect(struct nsr_conn *c, const char *path,
			  const char *host, int port, uint32_t prog,
			  uint32_t vers, struct nsr_buf *err)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct nsr_vouch_req q = {.port = port, .prog = prog, .vers = vers};
	char line[LINE_MAX_];
	int fd, rc;

	snprintf(q.host, sizeof(q.host), "%s", host);
	if (strlen(host) >= sizeof(q.host) ||
	    nsr_rpc_vouch_format(&q, line, sizeof(line)) != NSR_OK) {
		if (err)
			nsr_buf_addf(err, "cannot ask nsrexecd for a "
				     "connection to %s:%d", host, port);
		return NSR_ERR_INVAL;
	}
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		if (err)
			nsr_buf_addf(err, "cannot reach nsrexecd at %s: %s",
				     path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NSR_ERR_CONNECT;
	}
	rc = nsr_write_full(fd, line, strlen(line));
	if (rc == NSR_OK)
		rc = read_line(fd, line, sizeof(line), 30000);
	if (rc == NSR_OK && strcmp(line, "ok") != 0) {
		if (err)
			nsr_buf_addf(err, "nsrexecd cannot connect this user "
				     "to %s:%d: %s", host, port,
				     strncmp(line, "error: ", 7) == 0
					     ? line + 7 : line);
		rc = NSR_ERR_CONNECT;
	} else if (rc) {
		if (err)
			nsr_buf_addf(err, "nsrexecd at %s did not answer: %s",
				     path, nsr_strerror(rc));
		rc = NSR_ERR_CONNECT;
	}
	if (rc) {
		close(fd);
		return rc;
	}
	nsr_conn_init_unix(c, fd);
	snprintf(c->peer, sizeof(c->peer), "%s:%d", host, port);
	return NSR_OK;
}
