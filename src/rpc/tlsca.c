/*
 * tlsca.c - the datazone's certificates: the host key, the small CA on
 * the server, enrolment requests, signing, installing, revoking.  The
 * files are described in nsr/tls.h; nsrtrust(8) is the command.
 *
 * Invariants:
 *  1. every change under <root>/tls happens under an exclusive flock of
 *     <root>/tls/.lock, so daemons starting together and nsrtrust never
 *     make two CAs or two keys;
 *  2. files appear whole: written to a temporary name, fsync'ed, renamed;
 *     private keys are created mode 0600 and never widened;
 *  3. a certificate is issued only for a name nsr_host_check accepts,
 *     with a random 63-bit serial, and recorded in "issued" before it is
 *     handed out, so revocation can find it.
 */
#include "nsr/compat.h"

#include <ctype.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/host.h"
#include "nsr/tls.h"
#include "rpc_int.h"

/* The CA's common name: this prefix, then the server's host name. */
#define CA_CN_PREFIX "OpenNSR datazone CA "

#define CA_DAYS (20 * 365)
#define HOST_DAYS (10 * 365)
#define PATHMAX 4200

/* tls_lock - invariant 1: create <root>/tls and lock it; fd or <0. */
static int tls_lock(const char *root, struct nsr_buf *err)
{
	char dir[PATHMAX], lock[PATHMAX];
	int fd;

	if (nsr_tls_path(root, "", dir, sizeof(dir)) ||
	    nsr_tls_path(root, ".lock", lock, sizeof(lock)))
		return NSR_ERR_TOOBIG;
	if (nsr_mkdir_p(dir, 0700) != NSR_OK) {
		nsr_buf_addf(err, "cannot create %s: %s", dir,
			     strerror(errno));
		return NSR_ERR_SYSTEM;
	}
	fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || flock(fd, LOCK_EX) != 0) {
		nsr_buf_addf(err, "cannot lock %s: %s", lock, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NSR_ERR_SYSTEM;
	}
	return fd;
}

/* tls_unlock - release the lock from tls_lock. */
static void tls_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}

/* exists - 1 if <root>/tls/<name> exists. */
static int exists(const char *root, const char *name)
{
	char p[PATHMAX];
	struct stat st;

	return nsr_tls_path(root, name, p, sizeof(p)) == 0 &&
	       stat(p, &st) == 0;
}

/* put_file - invariant 2: <root>/tls/<name> holds data[n] (mode). */
static int put_file(const char *root, const char *name, const void *data,
		    size_t n, mode_t mode, struct nsr_buf *err)
{
	char p[PATHMAX];
	int rc;

	if (nsr_tls_path(root, name, p, sizeof(p)))
		return NSR_ERR_TOOBIG;
	rc = nsr_file_replace(p, data, n, mode);
	if (rc)
		nsr_buf_addf(err, "cannot write %s: %s", p, strerror(errno));
	return rc;
}

/* bio_text - the bytes written to a memory BIO. */
static int bio_text(BIO *b, const char **p, size_t *n)
{
	char *d = NULL;
	long len = BIO_get_mem_data(b, &d);

	*p = d;
	*n = len > 0 ? (size_t)len : 0;
	return len > 0 ? NSR_OK : NSR_ERR_NOMEM;
}

/* put_pem - write a key (private, mode 0600), a certificate or a request
 * as PEM to <root>/tls/<name>. */
static int put_pem(const char *root, const char *name, EVP_PKEY *key,
		   X509 *cert, X509_REQ *req, struct nsr_buf *err)
{
	BIO *b = BIO_new(BIO_s_mem());
	const char *p;
	size_t n;
	int ok, rc;

	if (!b)
		return NSR_ERR_NOMEM;
	ok = key    ? PEM_write_bio_PrivateKey(b, key, NULL, NULL, 0, NULL,
						NULL)
	     : cert ? PEM_write_bio_X509(b, cert)
		    : PEM_write_bio_X509_REQ(b, req);
	rc = ok && bio_text(b, &p, &n) == NSR_OK
		     ? put_file(root, name, p, n, key ? 0600 : 0644, err)
		     : NSR_ERR_NOMEM;
	BIO_free(b);
	if (cert)
		nsr_tls_changed(); /* tls.c invariant 4 */
	return rc;
}

/* get_file - read <root>/tls/<name> whole into out. */
static int get_file(const char *root, const char *name, struct nsr_buf *out)
{
	char p[PATHMAX];

	if (nsr_tls_path(root, name, p, sizeof(p)))
		return NSR_ERR_TOOBIG;
	return nsr_file_read(p, out, 64 << 20);
}

/* get_pem - the private key (key set) or certificate in
 * <root>/tls/<name>, or NULL. */
static void *get_pem(const char *root, const char *name, int key)
{
	char p[PATHMAX];
	void *v = NULL;
	FILE *f;

	if (nsr_tls_path(root, name, p, sizeof(p)))
		return NULL;
	f = fopen(p, "re");
	if (f) {
		v = key ? (void *)PEM_read_PrivateKey(f, NULL, NULL, NULL)
			: (void *)PEM_read_X509(f, NULL, NULL, NULL);
		fclose(f);
	}
	return v;
}

/* nsr_tls_ca_server - see tls.h. */
int nsr_tls_ca_server(const char *root, char *host, size_t len)
{
	char p[PATHMAX], cn[NSR_HOST_MAX + sizeof(CA_CN_PREFIX)];
	const size_t pl = sizeof(CA_CN_PREFIX) - 1;
	X509 *x;
	int n = -1;

	if (nsr_tls_path(root, "ca.key", p, sizeof(p)) == 0 &&
	    access(p, F_OK) == 0)
		return NSR_ERR_NOTFOUND; /* the CA is here */
	x = get_pem(root, "ca.pem", 0);
	if (x)
		n = X509_NAME_get_text_by_NID(X509_get_subject_name(x),
					      NID_commonName, cn, sizeof(cn));
	X509_free(x);
	if (n <= (int)pl || (size_t)n >= sizeof(cn) - 1 ||
	    strncmp(cn, CA_CN_PREFIX, pl) != 0)
		return NSR_ERR_NOTFOUND;
	if (strlen(cn + pl) >= len)
		return NSR_ERR_LIMIT;
	memcpy(host, cn + pl, strlen(cn + pl) + 1);
	return NSR_OK;
}

/* get_key - the private key in <root>/tls/<name>, or NULL. */
static EVP_PKEY *get_key(const char *root, const char *name)
{
	return get_pem(root, name, 1);
}

/* get_cert - the certificate in <root>/tls/<name>, or NULL. */
static X509 *get_cert(const char *root, const char *name)
{
	return get_pem(root, name, 0);
}

/* host_key - this host's key, made (P-256) if missing. */
static EVP_PKEY *host_key(const char *root, struct nsr_buf *err)
{
	EVP_PKEY *k = get_key(root, "host.key");

	if (k || exists(root, "host.key")) {
		if (!k)
			nsr_buf_addf(err, "cannot read %s/tls/host.key "
				     "(permissions?)", root);
		return k;
	}
	k = EVP_EC_gen("P-256");
	if (k && put_pem(root, "host.key", k, NULL, NULL, err) != NSR_OK) {
		EVP_PKEY_free(k);
		k = NULL;
	}
	return k;
}

/* add_ext - one X509v3 extension in OpenSSL's config syntax. */
static int add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *e;
	int ok;

	X509V3_set_ctx(&ctx, issuer, x, NULL, NULL, 0);
	e = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (!e)
		return 0;
	ok = X509_add_ext(x, e, -1);
	X509_EXTENSION_free(e);
	return ok;
}

/* make_cert - a certificate for cn's public key pub, signed by ikey
 * (issuer NULL: self-signed CA). */
static X509 *make_cert(const char *cn, EVP_PKEY *pub, X509 *issuer,
		       EVP_PKEY *ikey, int days)
{
	X509 *x = X509_new();
	X509_NAME *name = X509_NAME_new();
	BIGNUM *bn = BN_new();
	char san[NSR_HOST_MAX + 8];
	int ok;

	ok = x && name && bn && X509_set_version(x, 2) &&
	     BN_rand(bn, 63, BN_RAND_TOP_ONE, BN_RAND_BOTTOM_ANY) &&
	     BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) &&
	     X509_gmtime_adj(X509_getm_notBefore(x), -3600) &&
	     X509_gmtime_adj(X509_getm_notAfter(x), (long)days * 86400) &&
	     X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
					(const unsigned char *)cn, -1, -1,
					0) &&
	     X509_set_subject_name(x, name) &&
	     X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer)
					    : name) &&
	     X509_set_pubkey(x, pub);
	if (ok && !issuer)
		ok = add_ext(x, x, NID_basic_constraints, "critical,CA:TRUE") &&
		     add_ext(x, x, NID_key_usage,
			     "critical,keyCertSign,cRLSign") &&
		     add_ext(x, x, NID_subject_key_identifier, "hash");
	else if (ok) {
		snprintf(san, sizeof(san), "DNS:%s", cn);
		ok = add_ext(x, issuer, NID_basic_constraints,
			     "critical,CA:FALSE") &&
		     add_ext(x, issuer, NID_key_usage,
			     "critical,digitalSignature") &&
		     add_ext(x, issuer, NID_ext_key_usage,
			     "serverAuth,clientAuth") &&
		     add_ext(x, issuer, NID_subject_alt_name, san);
	}
	ok = ok && X509_sign(x, ikey, EVP_sha256()) > 0;
	BN_free(bn);
	X509_NAME_free(name);
	if (!ok) {
		X509_free(x);
		x = NULL;
	}
	return x;
}

/* record_issued - invariant 3: append "serial host not-after". */
static int record_issued(const char *root, X509 *x, const char *host,
			 struct nsr_buf *err)
{
	char serial[64], p[PATHMAX], date[32] = "?";
	struct tm tm;
	FILE *f;
	int ok;

	nsr_tls_serial_hex(x, serial);
	if (ASN1_TIME_to_tm(X509_get0_notAfter(x), &tm))
		strftime(date, sizeof(date), "%Y-%m-%d", &tm);
	if (nsr_tls_path(root, "issued", p, sizeof(p)))
		return NSR_ERR_TOOBIG;
	f = fopen(p, "ae");
	if (!f) {
		nsr_buf_addf(err, "cannot open %s: %s", p, strerror(errno));
		return NSR_ERR_SYSTEM;
	}
	fprintf(f, "%s %s %s\n", serial, host, date);
	ok = fflush(f) == 0 && fsync(fileno(f)) == 0;
	ok = fclose(f) == 0 && ok;
	return ok ? NSR_OK : NSR_ERR_SYSTEM;
}

/* issue - sign a certificate for host's key with the CA under root. */
static X509 *issue(const char *root, const char *host, EVP_PKEY *pub,
		   struct nsr_buf *err)
{
	EVP_PKEY *cakey = get_key(root, "ca.key");
	X509 *ca = get_cert(root, "ca.pem"), *x = NULL;

	if (!cakey || !ca)
		nsr_buf_addf(err, "no usable CA under %s/tls (ca.key, "
			     "ca.pem): run this on the datazone's server",
			     root);
	else if (nsr_host_check(host) != NSR_OK)
		nsr_buf_addf(err, "'%s' is not a valid host name", host);
	else if (!(x = make_cert(host, pub, ca, cakey, HOST_DAYS)))
		nsr_buf_addf(err, "cannot make a certificate for %s", host);
	else if (record_issued(root, x, host, err) != NSR_OK) {
		X509_free(x);
		x = NULL;
	}
	EVP_PKEY_free(cakey);
	X509_free(ca);
	return x;
}

/* make_ca - a new datazone CA under root. */
static int make_ca(const char *root, const char *host, struct nsr_buf *err)
{
	EVP_PKEY *k = EVP_EC_gen("P-256");
	char cn[NSR_HOST_MAX + 32];
	X509 *x;
	int rc;

	snprintf(cn, sizeof(cn), "%s%s", CA_CN_PREFIX, host);
	x = k ? make_cert(cn, k, NULL, k, CA_DAYS) : NULL;
	rc = x ? put_pem(root, "ca.key", k, NULL, NULL, err) : NSR_ERR_NOMEM;
	if (rc == NSR_OK)
		rc = put_pem(root, "ca.pem", NULL, x, NULL, err);
	X509_free(x);
	EVP_PKEY_free(k);
	return rc;
}

/* make_request - an enrolment request for host's key. */
static X509_REQ *make_request(const char *host, EVP_PKEY *k)
{
	X509_REQ *r = X509_REQ_new();
	X509_NAME *n = r ? X509_REQ_get_subject_name(r) : NULL;

	if (!n || !X509_REQ_set_version(r, 0) ||
	    !X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC,
					(const unsigned char *)host, -1, -1,
					0) ||
	    !X509_REQ_set_pubkey(r, k) ||
	    X509_REQ_sign(r, k, EVP_sha256()) <= 0) {
		X509_REQ_free(r);
		return NULL;
	}
	return r;
}

/* nsr_tls_provision - first start (see tls.h). */
int nsr_tls_provision(const char *root, const char *host,
		      struct nsr_buf *err)
{
	int lk = tls_lock(root, err), rc = NSR_OK;
	EVP_PKEY *k = NULL;
	X509 *x = NULL;
	X509_REQ *r = NULL;

	if (lk < 0)
		return lk;
	if (exists(root, "host.pem"))
		goto out;
	k = host_key(root, err);
	if (!k) {
		rc = NSR_ERR_SYSTEM;
		goto out;
	}
	if (!exists(root, "ca.pem") && !exists(root, "ca.key"))
		rc = make_ca(root, host, err);
	if (rc == NSR_OK && exists(root, "ca.key")) {
		x = issue(root, host, k, err);
		rc = x ? put_pem(root, "host.pem", NULL, x, NULL, err)
		       : NSR_ERR_STATE;
	} else if (rc == NSR_OK) {
		r = make_request(host, k);
		rc = r ? put_pem(root, "host.csr", NULL, NULL, r, err)
		       : NSR_ERR_NOMEM;
		if (rc == NSR_OK) {
			nsr_buf_addf(err, "this host is not enrolled in its "
				     "datazone yet: %s/tls/host.csr waits "
				     "for 'nsrtrust accept' on the server",
				     root);
			rc = NSR_ERR_WAIT;
		}
	}
out:
	X509_REQ_free(r);
	X509_free(x);
	EVP_PKEY_free(k);
	tls_unlock(lk);
	ERR_clear_error();
	return rc;
}

/* nsr_tls_request - the key (made if missing) and a request in PEM. */
int nsr_tls_request(const char *root, const char *host, struct nsr_buf *out,
		    struct nsr_buf *err)
{
	int lk, rc;
	EVP_PKEY *k;
	X509_REQ *r = NULL;

	if (nsr_host_check(host) != NSR_OK) {
		nsr_buf_addf(err, "'%s' is not a valid host name", host);
		return NSR_ERR_INVAL;
	}
	lk = tls_lock(root, err);
	if (lk < 0)
		return lk;
	k = host_key(root, err);
	r = k ? make_request(host, k) : NULL;
	rc = r ? put_pem(root, "host.csr", NULL, NULL, r, err)
	       : NSR_ERR_SYSTEM;
	if (rc == NSR_OK)
		rc = get_file(root, "host.csr", out);
	X509_REQ_free(r);
	EVP_PKEY_free(k);
	tls_unlock(lk);
	ERR_clear_error();
	return rc;
}

/* append_pem - a certificate as PEM at the end of out. */
static int append_pem(struct nsr_buf *out, X509 *x)
{
	BIO *b = BIO_new(BIO_s_mem());
	const char *p;
	size_t n;
	int rc = NSR_ERR_NOMEM;

	if (b && PEM_write_bio_X509(b, x) && bio_text(b, &p, &n) == NSR_OK)
		rc = nsr_buf_add(out, p, n);
	BIO_free(b);
	return rc;
}

/* nsr_tls_accept - sign a request with this root's CA. */
int nsr_tls_accept(const char *root, const char *pem, size_t n,
		   struct nsr_buf *out, char *host, size_t hlen,
		   struct nsr_buf *err)
{
	BIO *b = BIO_new_mem_buf(pem, n > INT32_MAX ? -1 : (int)n);
	X509_REQ *r = b ? PEM_read_bio_X509_REQ(b, NULL, NULL, NULL) : NULL;
	EVP_PKEY *pub = r ? X509_REQ_get0_pubkey(r) : NULL;
	X509 *x = NULL, *ca = NULL;
	int lk, rc = NSR_ERR_SYNTAX;

	BIO_free(b);
	host[0] = '\0';
	if (!pub || X509_REQ_verify(r, pub) != 1 ||
	    X509_NAME_get_text_by_NID(X509_REQ_get_subject_name(r),
				      NID_commonName, host, (int)hlen) <= 0) {
		nsr_buf_addf(err, "not a valid enrolment request (PEM "
			     "CERTIFICATE REQUEST from 'nsrtrust request')");
		X509_REQ_free(r);
		ERR_clear_error();
		return rc;
	}
	lk = tls_lock(root, err);
	if (lk < 0) {
		X509_REQ_free(r);
		return lk;
	}
	x = issue(root, host, pub, err);
	ca = get_cert(root, "ca.pem");
	rc = x && ca ? append_pem(out, x) : NSR_ERR_STATE;
	if (rc == NSR_OK)
		rc = append_pem(out, ca);
	X509_free(x);
	X509_free(ca);
	X509_REQ_free(r);
	tls_unlock(lk);
	ERR_clear_error();
	return rc;
}

/* nsr_tls_install - install host.pem and ca.pem from a bundle. */
int nsr_tls_install(const char *root, const char *pem, size_t n,
		    struct nsr_buf *err)
{
	BIO *b = BIO_new_mem_buf(pem, n > INT32_MAX ? -1 : (int)n);
	X509 *x = b ? PEM_read_bio_X509(b, NULL, NULL, NULL) : NULL;
	X509 *ca = x ? PEM_read_bio_X509(b, NULL, NULL, NULL) : NULL;
	EVP_PKEY *k;
	int lk, rc = NSR_ERR_SYNTAX;
	char p[PATHMAX];

	BIO_free(b);
	if (!ca) {
		nsr_buf_addf(err, "not a certificate bundle (two PEM "
			     "certificates from 'nsrtrust accept')");
		goto done;
	}
	lk = tls_lock(root, err);
	if (lk < 0) {
		rc = lk;
		goto done;
	}
	k = get_key(root, "host.key");
	if (!k || X509_check_private_key(x, k) != 1) {
		nsr_buf_addf(err, "the certificate is not for this host's key "
			     "%s/tls/host.key (accept this host's own "
			     "request)", root);
		rc = NSR_ERR_MISMATCH;
	} else if (X509_verify(x, X509_get0_pubkey(ca)) != 1) {
		nsr_buf_addf(err, "the certificate is not signed by the CA "
			     "in the bundle");
		rc = NSR_ERR_MISMATCH;
	} else {
		/* A CA this root made at its first start is not the
		 * datazone's: drop it (and what it signed). */
		if (nsr_tls_path(root, "ca.key", p, sizeof(p)) == 0)
			unlink(p);
		rc = put_pem(root, "ca.pem", NULL, ca, NULL, err);
		if (rc == NSR_OK)
			rc = put_pem(root, "host.pem", NULL, x, NULL, err);
		if (rc == NSR_OK &&
		    nsr_tls_path(root, "host.csr", p, sizeof(p)) == 0)
			unlink(p);
	}
	EVP_PKEY_free(k);
	tls_unlock(lk);
done:
	X509_free(x);
	X509_free(ca);
	ERR_clear_error();
	return rc;
}

/* next_line - split "w1 w2 w3" of the next line; NULL at the end. */
static const char *next_line(const char *p, char w[3][300])
{
	int i;

	if (!*p)
		return NULL;
	for (i = 0; i < 3; i++) {
		size_t n = 0;

		while (*p == ' ' || *p == '\t')
			p++;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n' &&
		       n + 1 < sizeof(w[i]))
			w[i][n++] = *p++;
		w[i][n] = '\0';
	}
	while (*p && *p != '\n')
		p++;
	return *p ? p + 1 : p;
}

/* in_revoked - 1 if the text of "revoked" lists serial. */
static int in_revoked(const char *text, const char *serial)
{
	char w[3][300];
	const char *p = text;

	while ((p = next_line(p, w)))
		if (strcmp(w[0], serial) == 0)
			return 1;
	return 0;
}

/* nsr_tls_revoked_text - see tls.h. */
int nsr_tls_revoked_text(const char *root, struct nsr_buf *out)
{
	int rc;

	nsr_buf_reset(out);
	rc = get_file(root, "revoked", out);
	if (rc == NSR_ERR_NOTFOUND) {
		nsr_buf_reset(out);
		rc = NSR_OK;
	}
	return rc;
}

/* serial_ok - a serial as the CA writes them: hex digits. */
static int serial_ok(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isxdigit((unsigned char)*s))
			return 0;
	return 1;
}

/* merge_locked - tls_lock held: add to "revoked" each "serial host" line
 * of text it lacks, in one replacement of the file; other lines are
 * skipped.  A list whose last line has no newline (edited by hand) gets
 * one first, and every line of it is looked at, even past a stray NUL:
 * else what was added would not be found, and be added again at every
 * merge.  How many were added, or an error. */
static int merge_locked(const char *root, const char *text,
			struct nsr_buf *err)
{
	struct nsr_buf rev, add, look;
	char w[3][300];
	const char *p;
	int rc, count = 0;

	nsr_buf_init(&rev, 0);
	nsr_buf_init(&add, 0);
	nsr_buf_init(&look, 0);
	rc = nsr_tls_revoked_text(root, &rev);
	if (rc != NSR_OK)
		nsr_buf_addf(err, "cannot read the revocation list: %s",
			     nsr_strerror(rc));
	if (rc == NSR_OK && rev.len > 0 && rev.data[rev.len - 1] != '\n')
		rc = nsr_buf_addch(&rev, '\n');
	if (rc == NSR_OK)
		rc = nsr_buf_add(&look, rev.data, rev.len);
	nsr_buf_unnul(&look, '\n');
	for (p = text; rc == NSR_OK && (p = next_line(p, w));) {
		if (!serial_ok(w[0]) || !w[1][0] || w[2][0] ||
		    in_revoked(look.data, w[0]) || in_revoked(add.data, w[0]))
			continue;
		rc = nsr_buf_addf(&add, "%s %s\n", w[0], w[1]);
		count++;
	}
	nsr_buf_release(&look);
	if (rc == NSR_OK && count > 0) {
		rc = nsr_buf_add(&rev, add.data, add.len);
		if (rc == NSR_OK)
			rc = put_file(root, "revoked", rev.data, rev.len, 0644,
				      err);
	}
	nsr_buf_release(&rev);
	nsr_buf_release(&add);
	return rc == NSR_OK ? count : rc;
}

/* nsr_tls_revoke - add every certificate of host to "revoked". */
int nsr_tls_revoke(const char *root, const char *host, struct nsr_buf *err)
{
	struct nsr_buf issued, pick;
	char w[3][300];
	const char *p;
	int lk, rc;

	lk = tls_lock(root, err);
	if (lk < 0)
		return lk;
	nsr_buf_init(&issued, 0);
	nsr_buf_init(&pick, 0);
	rc = get_file(root, "issued", &issued);
	if (rc == NSR_ERR_NOTFOUND)
		rc = NSR_OK;
	/* the host's certificates, "serial host": the revoked ones are
	 * passed over by the merge */
	for (p = issued.data; rc == NSR_OK && (p = next_line(p, w));)
		if (strcasecmp(w[1], host) == 0)
			rc = nsr_buf_addf(&pick, "%s %s\n", w[0], w[1]);
	if (rc == NSR_OK)
		rc = merge_locked(root, pick.data, err);
	nsr_buf_release(&issued);
	nsr_buf_release(&pick);
	tls_unlock(lk);
	return rc;
}

/* nsr_tls_revoked_merge - see tls.h. */
int nsr_tls_revoked_merge(const char *root, const char *text,
			  struct nsr_buf *err)
{
	int lk = tls_lock(root, err), rc;

	if (lk < 0)
		return lk;
	rc = merge_locked(root, text, err);
	tls_unlock(lk);
	return rc;
}

/* nsr_tls_list - the issued certificates and their state. */
int nsr_tls_list(const char *root, struct nsr_buf *out, struct nsr_buf *err)
{
	struct nsr_buf issued, rev;
	char w[3][300];
	const char *p;
	int rc;

	nsr_buf_init(&issued, 0);
	nsr_buf_init(&rev, 0);
	rc = get_file(root, "issued", &issued);
	if (rc == NSR_ERR_NOTFOUND)
		nsr_buf_addf(err, "no certificates issued under %s/tls (not "
			     "the datazone's server?)", root);
	if (rc == NSR_OK && get_file(root, "revoked", &rev) == NSR_ERR_SYSTEM)
		rc = NSR_ERR_SYSTEM;
	for (p = issued.data; rc == NSR_OK && (p = next_line(p, w));)
		if (w[0][0])
			rc = nsr_buf_addf(out, "%-24s %-18s %-10s %s\n", w[1],
					  w[0], w[2],
					  in_revoked(rev.data, w[0])
						  ? "revoked"
						  : "valid");
	nsr_buf_release(&issued);
	nsr_buf_release(&rev);
	return rc;
}
