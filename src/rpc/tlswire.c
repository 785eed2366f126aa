/*
 * tlswire.c - RPC-with-TLS (RFC 9289) on one connection: the AUTH_TLS
 * probe and its STARTTLS answer, the TLS 1.3 handshake with certificates
 * both ways (the context is tls.c's), and the TLS ops of a connection,
 * reading and writing through conn.c's timed TCP functions.
 *
 * Invariants:
 *  1. a connection's ops are TLS exactly when c->ssl is set, and then
 *     c->peer_host and c->serial hold the peer's verified certificate;
 *  2. the handshake starts only after the probe's reply was read whole
 *     (client) or flushed (server), and the peer sends nothing between,
 *     so no TLS byte is ever left in an XDR buffer;
 *  3. no close_notify is sent (tls.c invariant 2);
 *  4. c->wlen is 0 whenever no tls_write is in progress: the records of
 *     a large write are gathered in c->wbuf and sent before it returns,
 *     so a reply or a one-way call never waits in it.
 *
 * Why gather: OpenSSL hands the BIO one record (at most 16 KB) at a time,
 * so writing 1 MB of save data cost 64 send() calls; gathered, it costs
 * one per WBUF_CAP.  Reading, OpenSSL reads ahead (one read() per record
 * instead of two: header, then body).
 */
#include "nsr/compat.h"

#include <pthread.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/host.h"
#include "nsr/tls.h"
#include "rpc_int.h"

#define HANDSHAKE_MS 30000 /* the probe and the handshake, each */
/* A write of at least COALESCE_MIN bytes gathers its records, up to
 * WBUF_CAP bytes per send(). */
#define COALESCE_MIN (64 * 1024)
#define WBUF_CAP (256 * 1024)

/* The connection as an OpenSSL BIO: reads and writes go through the
 * TCP functions of conn.c, so timeouts and MSG_NOSIGNAL hold. */
static BIO_METHOD *bio_meth;
static pthread_once_t bio_once = PTHREAD_ONCE_INIT;

/* bio_read - BIO read: the connection's timed read. */
static int bio_read(BIO *b, char *p, int n)
{
	struct nsr_conn *c = BIO_get_data(b);
	int r;

	BIO_clear_retry_flags(b);
	r = nsr_conn_tcp_read(c, p, n);
	if (r < 0 && c->err == NSR_ERR_EOF)
		return 0;
	return r;
}

/* wbuf_flush - send what c->wbuf gathered; -1 on failure. */
static int wbuf_flush(struct nsr_conn *c)
{
	int n = c->wlen;

	c->wlen = 0;
	return n > 0 && nsr_conn_tcp_write(c, c->wbuf, n) != n ? -1 : 0;
}

/* bio_write - BIO write: all bytes or -1; gathered while c->coalesce
 * (invariant 4). */
static int bio_write(BIO *b, const char *p, int n)
{
	struct nsr_conn *c = BIO_get_data(b);

	BIO_clear_retry_flags(b);
	if (!c->coalesce || n > WBUF_CAP)
		return wbuf_flush(c) ? -1 : nsr_conn_tcp_write(c, p, n);
	if (!c->wbuf) {
		c->wbuf = malloc(WBUF_CAP);
		if (!c->wbuf)
			return nsr_conn_tcp_write(c, p, n);
		c->wcap = WBUF_CAP;
	}
	if (c->wlen + n > c->wcap && wbuf_flush(c))
		return -1;
	memcpy(c->wbuf + c->wlen, p, (size_t)n);
	c->wlen += n;
	return n;
}

/* bio_ctrl - only flush means anything: it sends what was gathered. */
static long bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	NSR_UNUSED(num);
	NSR_UNUSED(ptr);
	if (cmd != BIO_CTRL_FLUSH)
		return 0;
	return wbuf_flush(BIO_get_data(b)) ? 0 : 1;
}

/* bio_create - a new BIO is ready at once. */
static int bio_create(BIO *b)
{
	BIO_set_init(b, 1);
	return 1;
}

/* bio_setup - build the method once. */
static void bio_setup(void)
{
	bio_meth = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK,
				"nsr_conn");
	if (!bio_meth)
		return;
	BIO_meth_set_read(bio_meth, bio_read);
	BIO_meth_set_write(bio_meth, bio_write);
	BIO_meth_set_ctrl(bio_meth, bio_ctrl);
	BIO_meth_set_create(bio_meth, bio_create);
}

/* ssl_fail - c->err for a failed SSL call, unless the socket set one. */
static void ssl_fail(struct nsr_conn *c, SSL *s, int r)
{
	int e = SSL_get_error(s, r);

	if (c->err != NSR_OK)
		return;
	c->err = e == SSL_ERROR_ZERO_RETURN || e == SSL_ERROR_SYSCALL
			 ? NSR_ERR_EOF
			 : NSR_ERR_PROTO;
}

/* tls_read - decrypted bytes (some), -1 on failure (c->err says). */
static int tls_read(struct nsr_conn *c, void *p, int n)
{
	int r;

	c->err = NSR_OK;
	r = SSL_read(c->ssl, p, n);
	if (r > 0)
		return r;
	ssl_fail(c, c->ssl, r);
	ERR_clear_error();
	return -1;
}

/* tls_write - encrypt and send all n bytes, or -1. */
static int tls_write(struct nsr_conn *c, const void *p, int n)
{
	int r;

	c->err = NSR_OK;
	if (n == 0)
		return 0;
	c->coalesce = n >= COALESCE_MIN;
	r = SSL_write(c->ssl, p, n);
	c->coalesce = 0;
	if (wbuf_flush(c) == 0 && r == n)
		return n;
	ssl_fail(c, c->ssl, r > 0 ? -1 : r);
	ERR_clear_error();
	return -1;
}

/* tls_close - free the session (no close_notify: invariant 3). */
static void tls_close(struct nsr_conn *c)
{
	SSL_free(c->ssl);
	c->ssl = NULL;
	free(c->wbuf);
	c->wbuf = NULL;
	c->wlen = c->wcap = 0;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

/* tls_pending - decrypted or unprocessed bytes held by OpenSSL. */
static int tls_pending(const struct nsr_conn *c)
{
	return SSL_has_pending(c->ssl);
}

static const struct nsr_conn_ops tls_ops = {
	.read = tls_read,
	.write = tls_write,
	.close = tls_close,
	.pending = tls_pending,
};

/* handshake - run TLS as client or server on c; fills the peer's name
 * and serial (invariant 1).  err (may be NULL) gets the reason. */
static int handshake(struct nsr_conn *c, int client, struct nsr_buf *err)
{
	SSL_CTX *x = nsr_tls_ctx_get(NULL);
	SSL *s;
	BIO *b;
	X509 *peer;
	int r, saved = c->timeout_ms;
	long vr;

	if (!x)
		return NSR_ERR_STATE;
	pthread_once(&bio_once, bio_setup);
	s = bio_meth ? SSL_new(x) : NULL;
	SSL_CTX_free(x);
	b = s ? BIO_new(bio_meth) : NULL;
	if (!b) {
		SSL_free(s);
		return NSR_ERR_NOMEM;
	}
	BIO_set_data(b, c);
	SSL_set_bio(s, b, b);
	SSL_set_read_ahead(s, 1);
	c->err = NSR_OK;
	c->timeout_ms = HANDSHAKE_MS;
	r = client ? SSL_connect(s) : SSL_accept(s);
	c->timeout_ms = saved;
	vr = SSL_get_verify_result(s);
	peer = r == 1 ? SSL_get0_peer_certificate(s) : NULL;
	if (!peer) {
		unsigned long e = ERR_peek_last_error();

		if (err)
			nsr_buf_addf(err, "TLS handshake with %s failed: %s",
				     c->peer,
				     vr != X509_V_OK
					     ? X509_verify_cert_error_string(vr)
				     : e ? ERR_reason_error_string(e)
				     : c->err == NSR_ERR_TIMEOUT
					     ? "timed out"
					     : "connection closed");
		ERR_clear_error();
		SSL_free(s);
		return vr != X509_V_OK ? NSR_ERR_PERM : NSR_ERR_PROTO;
	}
	c->peer_host[0] = '\0';
	X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName,
				  c->peer_host, sizeof(c->peer_host));
	nsr_tls_serial_hex(peer, c->serial);
	c->ssl = s;
	c->ops = &tls_ops;
	return NSR_OK;
}

/* nsr_tls_server_start - after the STARTTLS reply went out; err gets
 * why the handshake failed. */
int nsr_tls_server_start(struct nsr_conn *c, struct nsr_buf *err)
{
	return handshake(c, 0, err);
}

/* put32 - big-endian 32 bits. */
static uint8_t *put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return p + 4;
}

/* get32 - big-endian 32 bits. */
static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/* nsr_tls_probe_call - RFC 9289 section 4.1: NULL with AUTH_TLS. */
size_t nsr_tls_probe_call(uint32_t xid, uint32_t prog, uint32_t vers,
			  uint8_t *out)
{
	static const uint32_t body_words = 10;
	uint8_t *p = out;

	p = put32(p, 0x80000000u | body_words * 4); /* last fragment */
	p = put32(p, xid);
	p = put32(p, CALL);
	p = put32(p, 2); /* RPC version */
	p = put32(p, prog);
	p = put32(p, vers);
	p = put32(p, 0); /* NULLPROC */
	p = put32(p, NSR_AUTH_TLS);
	p = put32(p, 0); /* empty credential body */
	p = put32(p, AUTH_NONE);
	p = put32(p, 0);
	return (size_t)(p - out);
}

/* nsr_tls_probe_reply - decode the probe's reply (see tls.h). */
int nsr_tls_probe_reply(const uint8_t *p, size_t n, uint32_t xid,
			size_t *need)
{
	uint32_t mark, len, vlen, flavor, w[5];
	size_t off, i;

	if (need)
		*need = 4;
	if (n < 4)
		return NSR_ERR_TRUNCATED;
	mark = get32(p);
	len = mark & 0x7fffffffu;
	/* One fragment, bounded: the reply to a NULL call is small. */
	if (!(mark & 0x80000000u) || len < 24 || len > NSR_TLS_REPLY_MAX ||
	    len % 4)
		return NSR_ERR_PROTO;
	if (need)
		*need = 4 + (size_t)len;
	if (n < 4 + (size_t)len)
		return NSR_ERR_TRUNCATED;
	if (n > 4 + (size_t)len)
		return NSR_ERR_PROTO;
	/* xid, REPLY, MSG_ACCEPTED, verifier flavour, verifier length */
	for (i = 0; i < 5; i++)
		w[i] = get32(p + 4 + 4 * i);
	if (w[0] != xid || w[1] != REPLY || w[2] != MSG_ACCEPTED)
		return NSR_ERR_PROTO;
	flavor = w[3];
	vlen = w[4];
	if (vlen > MAX_AUTH_BYTES)
		return NSR_ERR_PROTO;
	off = 4 + 20 + ((size_t)vlen + 3) / 4 * 4;
	/* then accept_stat SUCCESS and no results (void) */
	if (off + 4 != 4 + (size_t)len || get32(p + off) != SUCCESS)
		return NSR_ERR_PROTO;
	if (flavor == AUTH_NONE && vlen == strlen(NSR_TLS_STARTTLS) &&
	    memcmp(p + 24, NSR_TLS_STARTTLS, vlen) == 0)
		return 1;
	return 0;
}

/* read_probe_reply - read one reply record of the probe into buf. */
static int read_probe_reply(struct nsr_conn *c, uint32_t xid, uint8_t *buf)
{
	size_t have = 0, need = 4;
	int rc;

	for (;;) {
		int r;

		rc = nsr_tls_probe_reply(buf, have, xid, &need);
		if (rc != NSR_ERR_TRUNCATED)
			return rc;
		r = nsr_conn_tcp_read(c, buf + have, (int)(need - have));
		if (r < 0)
			return c->err ? c->err : NSR_ERR_EOF;
		have += (size_t)r;
	}
}

/* nsr_tls_name_matches - the server certified as cn may answer for
 * host: an address or "localhost" (this host's own daemons) takes any
 * certificate of the datazone, a name must be the certified one. */
int nsr_tls_name_matches(const char *host, const char *cn)
{
	struct in6_addr a6;
	struct in_addr a4;

	if (inet_pton(AF_INET, host, &a4) == 1 ||
	    inet_pton(AF_INET6, host, &a6) == 1 ||
	    strcasecmp(host, "localhost") == 0 ||
	    strncasecmp(host, "localhost.", 10) == 0)
		return 1;
	return nsr_host_same(host, cn);
}

/* nsr_tls_client_start - STARTTLS then the handshake, when this host has
 * a certificate; a host without one stays plain (servers then answer
 * only NULL).  A host with one never falls back to plain, and refuses a
 * server whose certificate names another host than the one it called. */
int nsr_tls_client_start(struct nsr_conn *c, const char *host, uint32_t prog,
			 uint32_t vers, struct nsr_buf *err)
{
	uint8_t call[NSR_TLS_CALL_MAX], reply[4 + NSR_TLS_REPLY_MAX];
	uint32_t xid = (uint32_t)random();
	int rc, saved = c->timeout_ms, broken = 0;
	SSL_CTX *x = nsr_tls_ctx_get(&broken);
	size_t n;

	if (!x && broken && err)
		nsr_buf_addf(err, "cannot load this host's certificate from "
			     "%s/tls (host.pem, host.key, ca.pem: readable? "
			     "see nsrtrust(8))", nsr_tls_root());
	if (!x)
		return broken ? NSR_ERR_PERM : NSR_OK;
	SSL_CTX_free(x);
	n = nsr_tls_probe_call(xid, prog, vers, call);
	c->timeout_ms = HANDSHAKE_MS;
	rc = nsr_conn_tcp_write(c, call, (int)n) < 0
		     ? NSR_ERR_CONNECT
		     : read_probe_reply(c, xid, reply);
	c->timeout_ms = saved;
	if (rc == 1) {
		/* NSR_ERR_PERM: the certificates do not fit (waiting will
		 * not help); NSR_ERR_CONNECT: the handshake broke off. */
		rc = handshake(c, 1, err);
		if (rc)
			return rc == NSR_ERR_PERM ? rc : NSR_ERR_CONNECT;
		if (nsr_tls_name_matches(host, c->peer_host))
			return NSR_OK;
		if (err)
			nsr_buf_addf(err, "%s answered with the certificate "
				     "of %s, not of %s: refused (another "
				     "host at that address?)",
				     c->peer, c->peer_host, host);
		return NSR_ERR_PERM;
	}
	if (err)
		nsr_buf_addf(err, "%s %s: %s", c->peer,
			     rc == 0 ? "does not offer TLS"
				     : "did not answer the STARTTLS probe",
			     rc == 0 ? "it is not an OpenNSR daemon of this "
				       "version, or runs with NSR_TEST_NO_TLS"
				     : rc == NSR_ERR_TIMEOUT ? "timed out"
				     : rc == NSR_ERR_EOF ? "connection closed"
							 : "malformed reply");
	return NSR_ERR_CONNECT;
}
