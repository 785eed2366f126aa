/*
 * tls.c - RPC-with-TLS (RFC 9289), the process's side: its root and
 * policy, the TLS context with this host's certificate, the revocation
 * list and plain-hosts the server applies to calls (see nsr/tls.h for
 * the whole picture; tlswire.c runs the exchange on a connection).
 *
 * Invariants:
 *  1. one SSL_CTX per process, rebuilt when host.pem or ca.pem changes
 *     (an enrolment needs no restart); a connection holds its own
 *     reference (SSL_new), so a rebuild never pulls it away;
 *  2. the context sends no TLS byte unasked: no session tickets (and
 *     tlswire.c sends no close_notify), so an idle connection's socket
 *     is readable only when the peer closed it or sent a record
 *     (nsr_rpc_closed stays right);
 *  3. the revocation list and plain-hosts are re-read when their file
 *     changes (size, time or inode), under their own mutex;
 *  4. the name this host's certificate states (nsr_tls_self_name, asked
 *     for every local connection) is read from the context again at
 *     most SELF_TTL_MS after it was last read, and at once after this
 *     process wrote a certificate (put_pem calls nsr_tls_changed) or set
 *     another root: a certificate another process replaces names local
 *     callers within that time, while handshakes use it at once (1).
 */
#include "nsr/compat.h"

#include <netdb.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <arpa/inet.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/host.h"
#include "nsr/tls.h"
#include "rpc_int.h"

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

/* The last name nsr_tls_self_name read (invariant 4), under cfg_mu. */
#define SELF_TTL_MS 1000
static struct {
	char name[NSR_HOST_MAX + 1];
	int ok;		   /* nsr_tls_self_name's answer then */
	int have;	   /* name and ok are valid ... */
	long long read_ms; /* ... until this (monotonic) + SELF_TTL_MS */
} self;

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
	self.have = 0;
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

/* watched_load - mu held: re-read w if its file changed; 0 if absent.
 * A stray NUL is read as the end of a line: the lines after it count. */
static int watched_load(struct watched *w)
{
	char path[4200];
	struct stat st;

	if (nsr_tls_path(nsr_tls_root(), w->name, path, sizeof(path)) ||
	    stat(path, &st) != 0) {
		w->have = 0;
		return 0;
	}
	if (w->have && nsr_stat_same(&st, &w->st))
		return 1;
	if (!w->text.data)
		nsr_buf_init(&w->text, 0);
	nsr_buf_clear(&w->text);
	if (nsr_file_read(path, &w->text, 64 << 20) != NSR_OK) {
		w->have = 0;
		return 0;
	}
	nsr_buf_unnul(&w->text, '\n');
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

/* nsr_tls_ctx_get - a reference to the process's context, or NULL when
 * this host has no certificate, or one that does not load (then *broken
 * is set, if given); the caller SSL_CTX_free's it. */
struct ssl_ctx_st *nsr_tls_ctx_get(int *broken)
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
	if (!ctxs.tried || !nsr_stat_same(&sc, &ctxs.cert) ||
	    !nsr_stat_same(&sa, &ctxs.ca)) {
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

/* nsr_tls_load - the context loaded and kept (ctx_get caches it). */
int nsr_tls_load(void)
{
	return nsr_tls_server_offer();
}

/* mono_ms - the monotonic clock in ms (not nsr_clock's, which tests may
 * stop). */
static long long mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* self_read - the name the certificate of the process's context states
 * into out[len]: 1, or 0 (none; out ""). */
static int self_read(char *out, size_t len)
{
	SSL_CTX *x = nsr_tls_ctx_get(NULL);
	X509 *cert = x ? SSL_CTX_get0_certificate(x) : NULL;
	int n = cert ? X509_NAME_get_text_by_NID(X509_get_subject_name(cert),
						  NID_commonName, out,
						  (int)len)
		     : -1;

	SSL_CTX_free(x);
	if (n <= 0 || (size_t)n >= len) {
		out[0] = '\0';
		return 0;
	}
	return 1;
}

/* nsr_tls_self_name - the host name this process's certificate states
 * into out[len]: 1, or 0 when it has none (TLS off, not enrolled); read
 * again as invariant 4 says. */
int nsr_tls_self_name(char *out, size_t len)
{
	char name[sizeof(self.name)];
	long long now = mono_ms();
	int ok;

	if (!len)
		return 0;
	out[0] = '\0';
	if (nsr_tls_disabled())
		return 0;
	pthread_mutex_lock(&cfg_mu);
	if (self.have && now - self.read_ms < SELF_TTL_MS) {
		ok = self.ok && strlen(self.name) < len;
		if (ok)
			memcpy(out, self.name, strlen(self.name) + 1);
		pthread_mutex_unlock(&cfg_mu);
		return ok;
	}
	pthread_mutex_unlock(&cfg_mu);
	ok = self_read(name, sizeof(name));
	pthread_mutex_lock(&cfg_mu);
	memcpy(self.name, name, sizeof(name));
	self.ok = ok;
	self.have = 1;
	self.read_ms = now;
	pthread_mutex_unlock(&cfg_mu);
	ok = ok && strlen(name) < len;
	if (ok)
		memcpy(out, name, strlen(name) + 1);
	return ok;
}

/* nsr_tls_changed - this process wrote a certificate under its root:
 * the next nsr_tls_self_name reads it (invariant 4). */
void nsr_tls_changed(void)
{
	pthread_mutex_lock(&cfg_mu);
	self.have = 0;
	pthread_mutex_unlock(&cfg_mu);
}

/* nsr_tls_server_offer - 1 if this process can answer STARTTLS. */
int nsr_tls_server_offer(void)
{
	SSL_CTX *x = nsr_tls_ctx_get(NULL);

	SSL_CTX_free(x);
	return x != NULL;
}
