/*
 * tls.c - RPC-with-TLS (RFC 9289) under every connection: the AUTH_TLS
 * probe and its STARTTLS answer, the TLS 1.3 handshake with certificates
 * both ways, the TLS ops of a connection, and the policy the server
 * applies to calls (see nsr/tls.h for the whole picture).
 *
 * Invariants:
 *  1. a connection's ops are TLS exactly when c->ssl is set, and then
 *     c->peer_host and c->serial hold the peer's verified certificate;
 *  2. the handshake starts only after the probe's reply was read whole
 *     (client) or flushed (server), and the peer sends nothing between,
 *     so no TLS byte is ever left in an XDR buffer;
 *  3. one SSL_CTX per process, rebuilt when host.pem or ca.pem changes
 *     (an enrolment needs no restart); a connection holds its own
 *     reference (SSL_new), so a rebuild never pulls it away;
 *  4. no TLS byte is sent unasked: no session tickets, no close_notify,
 *     so an idle connection's socket is readable only when the peer
 *     closed it or sent a record (nsr_rpc_closed stays right);
 *  5. the revocation list and plain-hosts are re-read when their file
 *     changes (size, time or inode), under their own mutex.
 */
#include "nsr/compat.h"

#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/tls.h"
#include "rpc_int.h"

#define HANDSHAKE_MS 30000 /* the probe and the handshake, each */

static pthread_mutex_t cfg_mu = PTHREAD_MUTEX_INITIALIZER;
static char cfg_root[4096];
static int cfg_set, cfg_require;

/* The process's context and the stat of the files it came from. */
static struct {
	SSL_CTX *ctx;
	struct stat cert, ca;
	int tried; /* a load was tried for these stats */
} ctxs;

/* A text file re-read when it changes (revoked, plain-hosts). */
struct watched {
	const char *name;
	pthread_mutex_t mu;
	struct stat st;
	int have;
	struct nsr_buf text;
};

static struct watched revoked = {.name = "revoked",
				 .mu = PTHREAD_MUTEX_INITIALIZER};
static struct watched plain = {.name = "plain-hosts",
			       .mu = PTHREAD_MUTEX_INITIALIZER};

/* nsr_tls_disabled - the test and benchmark knob NSR_TEST_NO_TLS=1. */
int nsr_tls_disabled(void)
{
	const char *e = getenv("NSR_TEST_NO_TLS");

	return e && strcmp(e, "1") == 0;
}

/* nsr_tls_configure - set the root and the server policy. */
int nsr_tls_configure(const char *root, int require)
{
	if (!root || strlen(root) >= sizeof(cfg_root))
		return NSR_ERR_INVAL;
	pthread_mutex_lock(&cfg_mu);
	snprintf(cfg_root, sizeof(cfg_root), "%s", root);
	cfg_set = 1;
	cfg_require = require;
	pthread_mutex_unlock(&cfg_mu);
	return NSR_OK;
}

/* nsr_tls_root - configured root, else NSR_ROOT, else the default. */
const char *nsr_tls_root(void)
{
	const char *e;

	if (cfg_set)
		return cfg_root;
	e = getenv("NSR_ROOT");
	return e && *e ? e : NSR_DEFAULT_ROOT;
}

/* nsr_tls_required - 1 if this process's servers refuse plain calls. */
int nsr_tls_required(void)
{
	return cfg_require && !nsr_tls_disabled();
}

/* nsr_tls_path - "<root>/tls/<name>"; NSR_ERR_TOOBIG if it won't fit. */
int nsr_tls_path(const char *root, const char *name, char *out, size_t len)
{
	int n = snprintf(out, len, "%s/tls%s%s", root, *name ? "/" : "",
			 name);

	return n < 0 || (size_t)n >= len ? NSR_ERR_TOOBIG : NSR_OK;
}

/* nsr_tls_serial_hex - a certificate's serial number in hex. */
void nsr_tls_serial_hex(const struct x509_st *x, char *out)
{
	BIGNUM *bn = ASN1_INTEGER_to_BN(
		X509_get0_serialNumber((const X509 *)x), NULL);
	char *h = bn ? BN_bn2hex(bn) : NULL;

	snprintf(out, 64, "%s", h ? h : "?");
	OPENSSL_free(h);
	BN_free(bn);
}

/* same_stat - 1 if two stats name the same unchanged file. */
static int same_stat(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_dev == b->st_dev &&
	       a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* watched_load - mu held: re-read w if its file changed; 0 if absent. */
static int watched_load(struct watched *w)
{
	char path[4200];
	struct stat st;
	FILE *f;
	char line[512];

	if (nsr_tls_path(nsr_tls_root(), w->name, path, sizeof(path)) ||
	    stat(path, &st) != 0) {
		w->have = 0;
		return 0;
	}
	if (w->have && same_stat(&st, &w->st))
		return 1;
	if (!w->text.data)
		nsr_buf_init(&w->text, 0);
	nsr_buf_clear(&w->text);
	f = fopen(path, "re");
	if (!f) {
		w->have = 0;
		return 0;
	}
	while (fgets(line, sizeof(line), f))
		if (nsr_buf_addstr(&w->text, line) != NSR_OK)
			break;
	fclose(f);
	w->st = st;
	w->have = 1;
	return 1;
}

/* first_word - copy the first whitespace-separated word of line. */
static const char *first_word(const char *line, char *out, size_t len)
{
	size_t n = 0;

	while (*line == ' ' || *line == '\t')
		line++;
	while (*line && *line != ' ' && *line != '\t' && *line != '\n' &&
	       n + 1 < len)
		out[n++] = *line++;
	out[n] = '\0';
	while (*line && *line != '\n')
		line++;
	return *line ? line + 1 : line;
}

/* watched_has - 1 if some line of w starts with a word match() accepts. */
static int watched_has(struct watched *w,
		       int (*match)(const char *word, const void *arg),
		       const void *arg)
{
	char word[300];
	const char *p;
	int hit = 0;

	pthread_mutex_lock(&w->mu);
	if (watched_load(w)) {
		for (p = w->text.data; *p && !hit;) {
			p = first_word(p, word, sizeof(word));
			if (word[0] && word[0] != '#' && match(word, arg))
				hit = 1;
		}
	}
	pthread_mutex_unlock(&w->mu);
	return hit;
}

/* match_equal - the word is the string. */
static int match_equal(const char *word, const void *arg)
{
	return strcasecmp(word, arg) == 0;
}

/* nsr_tls_serial_revoked - the serial is in the revocation list. */
int nsr_tls_serial_revoked(const char *serial)
{
	return watched_has(&revoked, match_equal, serial);
}

/* match_addr - the word is the address, or a name resolving to it. */
static int match_addr(const char *word, const void *arg)
{
	struct addrinfo hints, *res = NULL, *ai;
	char a[INET6_ADDRSTRLEN];
	int hit = 0;

	if (strcasecmp(word, arg) == 0)
		return 1;
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(word, NULL, &hints, &res) != 0)
		return 0;
	for (ai = res; ai && !hit; ai = ai->ai_next) {
		const void *src =
			ai->ai_family == AF_INET
				? (const void *)&((struct sockaddr_in *)
							  ai->ai_addr)
					  ->sin_addr
				: (const void *)&((struct sockaddr_in6 *)
							  ai->ai_addr)
					  ->sin6_addr;

		if (inet_ntop(ai->ai_family, src, a, sizeof(a)) &&
		    strcasecmp(a, arg) == 0)
			hit = 1;
	}
	freeaddrinfo(res);
	return hit;
}

/* nsr_tls_plain_allowed - may this plain connection make calls? */
int nsr_tls_plain_allowed(const struct nsr_conn *c)
{
	if (!nsr_tls_required())
		return 1;
	return watched_has(&plain, match_addr, c->addr);
}

/* nsr_tls_conn_revoked - the connection's certificate was revoked. */
int nsr_tls_conn_revoked(const struct nsr_conn *c)
{
	return c->ssl && nsr_tls_serial_revoked(c->serial);
}

/* verify_cb - chain checked by OpenSSL; refuse a revoked leaf. */
static int verify_cb(int ok, X509_STORE_CTX *st)
{
	X509 *x = X509_STORE_CTX_get_current_cert(st);
	char serial[64];

	if (!ok || !x || X509_STORE_CTX_get_error_depth(st) != 0)
		return ok;
	nsr_tls_serial_hex(x, serial);
	if (nsr_tls_serial_revoked(serial)) {
		X509_STORE_CTX_set_error(st, X509_V_ERR_CERT_REVOKED);
		return 0;
	}
	return 1;
}

/* ctx_build - a TLS 1.3 context with this host's certificate. */
static SSL_CTX *ctx_build(const char *cert, const char *key, const char *ca)
{
	SSL_CTX *x = SSL_CTX_new(TLS_method());

	if (!x)
		return NULL;
	if (!SSL_CTX_set_min_proto_version(x, TLS1_3_VERSION) ||
	    SSL_CTX_use_certificate_file(x, cert, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_use_PrivateKey_file(x, key, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_check_private_key(x) != 1 ||
	    SSL_CTX_load_verify_locations(x, ca, NULL) != 1) {
		ERR_clear_error();
		SSL_CTX_free(x);
		return NULL;
	}
	SSL_CTX_set_verify(x, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
			   verify_cb);
	SSL_CTX_set_num_tickets(x, 0);
	SSL_CTX_set_options(x, SSL_OP_NO_TICKET);
	SSL_CTX_set_session_cache_mode(x, SSL_SESS_CACHE_OFF);
	return x;
}

/* ctx_get - a reference to the process's context, or NULL when this
 * host has no certificate, or one that does not load (then *broken is
 * set, if given); the caller SSL_CTX_free's it. */
static SSL_CTX *ctx_get(int *broken)
{
	char cert[4200], key[4200], ca[4200];
	const char *root;
	struct stat sc, sa;
	SSL_CTX *x = NULL;

	if (nsr_tls_disabled())
		return NULL;
	pthread_mutex_lock(&cfg_mu);
	root = nsr_tls_root();
	if (nsr_tls_path(root, "host.pem", cert, sizeof(cert)) ||
	    nsr_tls_path(root, "host.key", key, sizeof(key)) ||
	    nsr_tls_path(root, "ca.pem", ca, sizeof(ca)) ||
	    stat(cert, &sc) != 0 || stat(ca, &sa) != 0) {
		SSL_CTX_free(ctxs.ctx);
		ctxs.ctx = NULL;
		ctxs.tried = 0;
		pthread_mutex_unlock(&cfg_mu);
		return NULL;
	}
	if (!ctxs.tried || !same_stat(&sc, &ctxs.cert) ||
	    !same_stat(&sa, &ctxs.ca)) {
		SSL_CTX_free(ctxs.ctx);
		ctxs.ctx = ctx_build(cert, key, ca);
		ctxs.cert = sc;
		ctxs.ca = sa;
		ctxs.tried = 1;
	}
	if (!ctxs.ctx && broken)
		*broken = 1;
	if (ctxs.ctx && SSL_CTX_up_ref(ctxs.ctx))
		x = ctxs.ctx;
	pthread_mutex_unlock(&cfg_mu);
	return x;
}

/* nsr_tls_server_offer - 1 if this process can answer STARTTLS. */
int nsr_tls_server_offer(void)
{
	SSL_CTX *x = ctx_get(NULL);

	SSL_CTX_free(x);
	return x != NULL;
}

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

/* bio_write - BIO write: all bytes or -1. */
static int bio_write(BIO *b, const char *p, int n)
{
	BIO_clear_retry_flags(b);
	return nsr_conn_tcp_write(BIO_get_data(b), p, n);
}

/* bio_ctrl - only flush means anything (writes are not buffered). */
static long bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	NSR_UNUSED(b);
	NSR_UNUSED(num);
	NSR_UNUSED(ptr);
	return cmd == BIO_CTRL_FLUSH ? 1 : 0;
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
	r = SSL_write(c->ssl, p, n);
	if (r == n)
		return n;
	ssl_fail(c, c->ssl, r);
	ERR_clear_error();
	return -1;
}

/* tls_close - free the session (no close_notify: invariant 4). */
static void tls_close(struct nsr_conn *c)
{
	SSL_free(c->ssl);
	c->ssl = NULL;
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
	SSL_CTX *x = ctx_get(NULL);
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

/* short_eq - a and b name the same host: equal, or equal up to the
 * first dot of either (a short name and its domain name). */
static int short_eq(const char *a, const char *b)
{
	size_t la = strcspn(a, "."), lb = strcspn(b, ".");

	return strcasecmp(a, b) == 0 ||
	       (la == lb && strncasecmp(a, b, la) == 0 &&
		(a[la] == '\0' || b[lb] == '\0'));
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
	return short_eq(host, cn);
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
	SSL_CTX *x = ctx_get(&broken);
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
	if (rc == 1 && handshake(c, 1, err) != NSR_OK)
		return NSR_ERR_CONNECT;
	if (rc == 1 && !nsr_tls_name_matches(host, c->peer_host)) {
		if (err)
			nsr_buf_addf(err, "%s answered with the certificate "
				     "of %s, not of %s: refused (another "
				     "host at that address?)",
				     c->peer, c->peer_host, host);
		return NSR_ERR_CONNECT;
	}
	if (rc == 1)
		return NSR_OK;
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
