/*
 * tls.h - RPC-with-TLS (RFC 9289) and the datazone's certificates.
 *
 * Every connection between OpenNSR processes of two hosts starts as ONC
 * RPC over TCP (one to a daemon of the same host goes over its local
 * socket instead, without TLS: nsr/rpc.h, "Same-host connections").
 * A client holding a host certificate first sends a NULL call with the
 * AUTH_TLS credential (flavour 7, empty body); the server answers with
 * the verifier {AUTH_NONE, "STARTTLS"} and both run a TLS 1.3 handshake
 * on the same socket, each presenting its host certificate and checking
 * the other's against the datazone CA and the revocation list.  The
 * transport (src/rpc) does all of it; handlers are unchanged and learn
 * the caller's certified host name from nsr_rpc_call_peer_host().
 *
 * Files, all under <root>/tls (directory mode 0700):
 *   ca.key ca.pem   the datazone CA (ca.key only on the server, 0600)
 *   host.key        this host's private key (0600)
 *   host.pem        this host's certificate, signed by the CA
 *   host.csr        an enrolment request, while the host is not enrolled
 *   issued          on the CA's host: "serial host not-after" per line
 *   revoked         "serial host" per line; read again whenever it changes
 *   plain-hosts     addresses or host names allowed to call without TLS
 * A daemon's first start (nsr_tls_provision) makes the key, and, when the
 * root has no CA yet, a CA and a certificate signed by it: one root on
 * one host works with no step.  Another host enrols with nsrtrust(8):
 * request there, accept on the server, install there.
 *
 * Policy (servers that called nsr_tls_configure with require set, i.e.
 * every daemon): a connection that did not start TLS gets only NULL
 * answered; any other call is denied (AUTH_ERROR, AUTH_TOOWEAK) and the
 * connection closed, unless its address is in plain-hosts.  A connection
 * whose certificate is revoked is denied at its next call.  For
 * benchmarks and tests only, NSR_TEST_NO_TLS=1 in the environment of
 * every process turns TLS off entirely (clients never start it, servers
 * never require it).
 */
#ifndef NSR_TLS_H
#define NSR_TLS_H

#include <stddef.h>
#include <stdint.h>

struct nsr_buf;

#define NSR_AUTH_TLS 7		 /* RFC 9289 credential flavour */
#define NSR_TLS_STARTTLS "STARTTLS" /* the server's verifier body */
#define NSR_TLS_CALL_MAX 64	 /* bytes of the encoded probe call */
#define NSR_TLS_REPLY_MAX 1024	 /* longest probe reply accepted */

/* nsr_tls_configure - this process's root (its certificates are under
 * <root>/tls) and whether its servers refuse calls without TLS.  Without
 * it a process uses NSR_ROOT or the default root and requires nothing. */
int nsr_tls_configure(const char *root, int require);
/* nsr_tls_disabled - 1 when NSR_TEST_NO_TLS=1 (tests, benchmarks). */
int nsr_tls_disabled(void);
/* nsr_tls_root - the root in use (configured, NSR_ROOT or default). */
const char *nsr_tls_root(void);
/* nsr_tls_load - load this host's certificate and key now, for a daemon
 * about to give up root (nsr/daemon.h, -u): the process keeps them and
 * uses them while the certificate and CA files stay as they are (it can
 * no longer read the key: after a new certificate, restart it).  1 when
 * loaded, 0 when this host has none (or TLS is off). */
int nsr_tls_load(void);

/* nsr_tls_probe_call - encode the AUTH_TLS NULL call (record-marked)
 * into out[NSR_TLS_CALL_MAX]; returns its length. */
size_t nsr_tls_probe_call(uint32_t xid, uint32_t prog, uint32_t vers,
			  uint8_t *out);
/* nsr_tls_probe_reply - decode a whole reply record (mark included) to
 * the probe with this xid: 1 the server offers STARTTLS, 0 it answered
 * without (no TLS there), NSR_ERR_TRUNCATED when more bytes are needed
 * (*need gets the total), NSR_ERR_PROTO for anything else. */
int nsr_tls_probe_reply(const uint8_t *p, size_t n, uint32_t xid,
			size_t *need);

/* nsr_tls_name_matches - 1 if a server certified as cn may answer a
 * client that called host: host is an address or localhost (any
 * certificate of the datazone), or names cn (short or domain name). */
int nsr_tls_name_matches(const char *host, const char *cn);

/* Certificates (tlsca.c).  Host names are checked with nsr_host_check. */
/* nsr_tls_provision - first start: <root>/tls, the host key, and, if the
 * root has no CA and no certificate yet, a new CA and a host certificate
 * for host signed by it.  A root with a CA signs a missing host
 * certificate; a root without (an enrolled host) writes host.csr. */
int nsr_tls_provision(const char *root, const char *host,
		      struct nsr_buf *err);
/* nsr_tls_request - make the key if missing and an enrolment request
 * (PEM) for host into out. */
int nsr_tls_request(const char *root, const char *host, struct nsr_buf *out,
		    struct nsr_buf *err);
/* nsr_tls_accept - on the CA's root: sign the request in pem[n]; out gets
 * the new certificate then the CA certificate (PEM), host[hlen] the
 * name it certifies. */
int nsr_tls_accept(const char *root, const char *pem, size_t n,
		   struct nsr_buf *out, char *host, size_t hlen,
		   struct nsr_buf *err);
/* nsr_tls_install - on the enrolling host: check the bundle from
 * nsr_tls_accept against host.key and install host.pem and ca.pem
 * (dropping a CA the first start may have made here). */
int nsr_tls_install(const char *root, const char *pem, size_t n,
		    struct nsr_buf *err);
/* nsr_tls_revoke - revoke every certificate issued to host; returns how
 * many (0: none known) or an error. */
int nsr_tls_revoke(const char *root, const char *host, struct nsr_buf *err);
/* nsr_tls_revoked_text - the revocation list of root ("serial host"
 * lines; empty when there is none) into out (reset first). */
int nsr_tls_revoked_text(const char *root, struct nsr_buf *out);
/* nsr_tls_revoked_merge - add to root's revocation list every line of
 * text (a server's list: "serial host", serial hex) it lacks, in one
 * replacement of the file; lines that are not such a pair are skipped.
 * Returns how many were added (0: nothing changed, nothing written) or
 * an error (err says why).  Revocations are only ever added. */
int nsr_tls_revoked_merge(const char *root, const char *text,
			  struct nsr_buf *err);
/* nsr_tls_list - one line per issued certificate: host, serial, expiry,
 * state (valid/revoked). */
int nsr_tls_list(const char *root, struct nsr_buf *out, struct nsr_buf *err);
/* nsr_tls_ca_server - the server whose CA this root's certificates
 * come from, as the CA's name says ("OpenNSR datazone CA HOST"), into
 * host: NSR_OK; NSR_ERR_NOTFOUND if root has no CA certificate of that
 * form or holds the CA's key itself (this host is the server);
 * NSR_ERR_LIMIT if the name does not fit in len. */
int nsr_tls_ca_server(const char *root, char *host, size_t len);
/* nsr_tls_serial_revoked - 1 if the certificate with this serial (hex)
 * is in <root>/tls/revoked (re-read when it changes). */
int nsr_tls_serial_revoked(const char *serial);

#endif /* NSR_TLS_H */
