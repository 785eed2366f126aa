/*
 * test_tls.c - RPC-with-TLS (RFC 9289) and the datazone's certificates:
 * first-start provisioning (files, modes), the STARTTLS negotiation over
 * loopback with the handler seeing the certified host name, a plain
 * connection answered for NULL and denied for anything else, the probe
 * reply decoder on good and bad input, enrolment of a second root
 * (request, accept, install), and revocation refusing an open connection
 * at its next call and new connections at the handshake.
 */
#include "nsr/compat.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsrexecd.h"
#include "nsr/tls.h"
#include "nsr/xmalloc.h"
#include "nsr_test.h"
#include "rpc_testsrv.h"

static char *root;		/* the CA's root: this process's */
static char seen_host[256];	/* peer host the handler saw */

/* h_who - LOC_GETPORT: remember the caller's certified host name. */
static int h_who(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	loc_get_res *r = res;
	const char *h = nsr_rpc_call_peer_host(call);

	NSR_UNUSED(ctx);
	NSR_UNUSED(args);
	snprintf(seen_host, sizeof(seen_host), "%s", h ? h : "(none)");
	r->st.msg = nsr_xstrdup("");
	r->port = 42;
	return NSR_OK;
}

static const struct nsr_rpc_proc procs[] = {
	{LOC_GETPORT, "who", NSR_XDR(xdr_loc_key), sizeof(loc_key),
	 NSR_XDR(xdr_loc_get_res), sizeof(loc_get_res), h_who, 0},
};

static const struct nsr_rpc_prog progs[] = {
	{NSREXECD_PROG, NSREXECD_V1, procs, NSR_ARRAY_SIZE(procs), NULL, NULL},
};

/* who - one LOC_GETPORT call on c: its nsr_rpc_call result. */
static int who(struct nsr_rpc_clnt *c)
{
	loc_key k = {.prog = 1, .vers = 1};
	loc_get_res r;
	int rc;

	memset(&r, 0, sizeof(r));
	rc = nsr_rpc_call(c, LOC_GETPORT, NSR_XDR(xdr_loc_key), &k,
			  NSR_XDR(xdr_loc_get_res), &r);
	xdr_free(NSR_XDR(xdr_loc_get_res), (char *)&r);
	return rc;
}

/* raw_call - a plain (no TLS) call of proc on a fresh socket: 0 when
 * accepted with SUCCESS, 1 when denied AUTH_TOOWEAK, -1 otherwise. */
static int raw_call(int port, uint32_t proc)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)port)};
	uint8_t buf[512];
	struct rpc_msg m, r;
	XDR x;
	int fd = socket(AF_INET, SOCK_STREAM, 0), rc = -1;
	size_t len;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	test_call_msg(&m, proc);
	len = test_raw_exchange(fd, &m, buf, sizeof(buf));
	memset(&r, 0, sizeof(r));
	r.acpted_rply.ar_verf = _null_auth;
	r.acpted_rply.ar_results.where = NULL;
	r.acpted_rply.ar_results.proc = NSR_XDR(xdr_void);
	xdrmem_create(&x, (char *)buf, (u_int)len, XDR_DECODE);
	if (xdr_replymsg(&x, &r)) {
		if (r.rm_reply.rp_stat == MSG_ACCEPTED &&
		    r.acpted_rply.ar_stat == SUCCESS)
			rc = 0;
		else if (r.rm_reply.rp_stat == MSG_DENIED &&
			 r.rjcted_rply.rj_stat == AUTH_ERROR &&
			 r.rjcted_rply.rj_why == AUTH_TOOWEAK)
			rc = 1;
	}
	xdr_destroy(&x);
	close(fd);
	return rc;
}

/* file_mode - permission bits of <root>/tls/<name>, -1 if absent. */
static int file_mode(const char *r, const char *name)
{
	char p[4200];
	struct stat st;

	snprintf(p, sizeof(p), "%s/tls/%s", r, name);
	return stat(p, &st) == 0 ? (int)(st.st_mode & 07777) : -1;
}

/* test_provision - first start makes a CA and a host certificate with
 * private keys 0600; a second start changes nothing. */
static void test_provision(void **state)
{
	struct nsr_buf err, out;

	NSR_UNUSED(state);
	nsr_buf_init(&err, 0);
	nsr_buf_init(&out, 0);
	assert_int_equal(nsr_tls_provision(root, "unit-host", &err), NSR_OK);
	assert_int_equal(file_mode(root, "ca.key"), 0600);
	assert_int_equal(file_mode(root, "host.key"), 0600);
	assert_true(file_mode(root, "host.pem") >= 0);
	assert_true(file_mode(root, "ca.pem") >= 0);
	assert_int_equal(file_mode(root, "host.csr"), -1);
	assert_int_equal(nsr_tls_provision(root, "unit-host", &err), NSR_OK);
	assert_int_equal(nsr_tls_list(root, &out, &err), NSR_OK);
	assert_non_null(strstr(out.data, "unit-host"));
	assert_non_null(strstr(out.data, "valid"));
	nsr_buf_release(&err);
	nsr_buf_release(&out);
}

/* test_starttls - a client with a certificate runs TLS; the handler
 * sees the host name; a plain peer gets NULL answered and nothing else. */
static void test_starttls(void **state)
{
	struct test_server s;
	struct nsr_rpc_clnt *c;

	NSR_UNUSED(state);
	test_server_start(&s, progs, NSR_ARRAY_SIZE(progs));
	c = test_connect(s.port, NSREXECD_PROG, NSREXECD_V1);
	seen_host[0] = '\0';
	assert_int_equal(who(c), NSR_OK);
	assert_string_equal(seen_host, "unit-host");
	assert_int_equal(who(c), NSR_OK); /* and again on the same stream */
	nsr_rpc_close(c);
	assert_int_equal(raw_call(s.port, 0), 0);	/* NULL: answered */
	assert_int_equal(raw_call(s.port, LOC_GETPORT), 1); /* denied */
	test_server_stop(&s);
}

/* test_probe_reply - the decoder of the server's answer to the probe. */
static void test_probe_reply(void **state)
{
	static const uint8_t ok[] = {
		0x80, 0, 0, 32, 0, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 8, 'S', 'T', 'A', 'R', 'T', 'T', 'L', 'S', 0, 0, 0, 0};
	static const uint8_t plain[] = {0x80, 0, 0, 24, 0, 0, 0, 9, 0, 0,
					0, 1, 0, 0, 0, 0, 0, 0, 0, 0,
					0, 0, 0, 0, 0, 0, 0, 0};
	uint8_t call[NSR_TLS_CALL_MAX], bad[sizeof(ok)];
	size_t need = 0;

	NSR_UNUSED(state);
	assert_int_equal(nsr_tls_probe_reply(ok, sizeof(ok), 9, &need), 1);
	assert_int_equal(nsr_tls_probe_reply(plain, sizeof(plain), 9, NULL),
			 0);
	assert_int_equal(nsr_tls_probe_reply(ok, 10, 9, &need),
			 NSR_ERR_TRUNCATED);
	assert_int_equal(need, sizeof(ok));
	assert_int_equal(nsr_tls_probe_reply(ok, sizeof(ok), 8, NULL),
			 NSR_ERR_PROTO); /* another xid */
	memcpy(bad, ok, sizeof(ok));
	bad[0] = 0; /* not the last fragment */
	assert_int_equal(nsr_tls_probe_reply(bad, sizeof(bad), 9, NULL),
			 NSR_ERR_PROTO);
	memcpy(bad, ok, sizeof(ok));
	bad[23] = 200; /* verifier longer than the record */
	assert_int_equal(nsr_tls_probe_reply(bad, sizeof(bad), 9, NULL),
			 NSR_ERR_PROTO);
	memcpy(bad, ok, sizeof(ok));
	bad[1] = 0x7f; /* huge record */
	assert_int_equal(nsr_tls_probe_reply(bad, sizeof(bad), 9, NULL),
			 NSR_ERR_PROTO);
	/* The call: a record of ten words, AUTH_TLS credential, NULLPROC. */
	assert_int_equal(nsr_tls_probe_call(9, 100, 1, call), 44);
	assert_int_equal(call[0], 0x80);
	assert_int_equal(call[3], 40);
	assert_int_equal(call[31], NSR_AUTH_TLS);
	assert_int_equal(call[27], 0);
}

/* test_name_matches - which certified name may answer which host. */
static void test_name_matches(void **state)
{
	NSR_UNUSED(state);
	assert_true(nsr_tls_name_matches("srv", "srv"));
	assert_true(nsr_tls_name_matches("SRV", "srv"));
	assert_true(nsr_tls_name_matches("srv.example.org", "srv"));
	assert_true(nsr_tls_name_matches("srv", "srv.example.org"));
	assert_true(nsr_tls_name_matches("127.0.0.1", "anyhost"));
	assert_true(nsr_tls_name_matches("::1", "anyhost"));
	assert_true(nsr_tls_name_matches("localhost", "anyhost"));
	assert_false(nsr_tls_name_matches("srv", "cli"));
	assert_false(nsr_tls_name_matches("srv", "srv2"));
	assert_false(nsr_tls_name_matches("srv.a.org", "srv.b.org"));
}

/* test_enrol - a second root requests, the CA accepts, it installs; the
 * bundle is refused by a root whose key it does not match. */
static void test_enrol(void **state)
{
	char *r2 = nsr_test_tmpdir("tls-enrol"), *r3 = nsr_test_tmpdir("tls-3");
	struct nsr_buf req, bundle, err, out;
	char host[256];

	NSR_UNUSED(state);
	nsr_buf_init(&req, 0);
	nsr_buf_init(&bundle, 0);
	nsr_buf_init(&err, 0);
	nsr_buf_init(&out, 0);
	assert_int_equal(nsr_tls_request(r2, "cli-2", &req, &err), NSR_OK);
	assert_non_null(strstr(req.data, "CERTIFICATE REQUEST"));
	assert_int_equal(file_mode(r2, "host.key"), 0600);
	assert_int_equal(nsr_tls_accept(root, "junk", 4, &bundle, host,
					sizeof(host), &err),
			 NSR_ERR_SYNTAX);
	assert_int_equal(nsr_tls_accept(root, req.data, req.len, &bundle,
					host, sizeof(host), &err),
			 NSR_OK);
	assert_string_equal(host, "cli-2");
	/* r3 has a key (and CA) of its own: the bundle is not for it. */
	assert_int_equal(nsr_tls_provision(r3, "other", &err), NSR_OK);
	assert_int_equal(nsr_tls_install(r3, bundle.data, bundle.len, &err),
			 NSR_ERR_MISMATCH);
	assert_int_equal(nsr_tls_install(r2, bundle.data, bundle.len, &err),
			 NSR_OK);
	assert_true(file_mode(r2, "host.pem") >= 0);
	assert_int_equal(file_mode(r2, "host.csr"), -1);
	assert_int_equal(file_mode(r2, "ca.key"), -1);
	/* An enrolled root's first start needs no CA of its own. */
	assert_int_equal(nsr_tls_provision(r2, "cli-2", &err), NSR_OK);
	assert_int_equal(file_mode(r2, "ca.key"), -1);
	/* It knows the server that enrolled it from the CA's name; the
	 * CA's own root (and r3, with a CA of its own) is that server. */
	assert_int_equal(nsr_tls_ca_server(r2, host, sizeof(host)), NSR_OK);
	assert_string_equal(host, "unit-host");
	assert_int_equal(nsr_tls_ca_server(r2, host, 9), NSR_ERR_LIMIT);
	assert_int_equal(nsr_tls_ca_server(r2, host, 10), NSR_OK);
	assert_int_equal(nsr_tls_ca_server(root, host, sizeof(host)),
			 NSR_ERR_NOTFOUND);
	assert_int_equal(nsr_tls_ca_server(r3, host, sizeof(host)),
			 NSR_ERR_NOTFOUND);
	assert_int_equal(nsr_tls_list(root, &out, &err), NSR_OK);
	assert_non_null(strstr(out.data, "cli-2"));
	assert_int_equal(nsr_tls_revoke(root, "nobody", &err), 0);
	nsr_test_rmrf(r2);
	nsr_test_rmrf(r3);
	free(r2);
	free(r3);
	nsr_buf_release(&req);
	nsr_buf_release(&bundle);
	nsr_buf_release(&err);
	nsr_buf_release(&out);
}

/* test_revoke - revoking this host's certificate: the open connection is
 * refused at its next call, a new one at the handshake. */
static void test_revoke(void **state)
{
	struct test_server s;
	struct nsr_rpc_clnt *c = NULL, *c2 = NULL;
	struct nsr_buf err, out;

	NSR_UNUSED(state);
	nsr_buf_init(&err, 0);
	nsr_buf_init(&out, 0);
	test_server_start(&s, progs, NSR_ARRAY_SIZE(progs));
	c = test_connect(s.port, NSREXECD_PROG, NSREXECD_V1);
	assert_int_equal(who(c), NSR_OK);
	assert_int_equal(nsr_tls_revoke(root, "unit-host", &err), 1);
	assert_int_equal(who(c), NSR_ERR_PERM);
	assert_non_null(strstr(nsr_rpc_last_error(c), "revoked"));
	nsr_rpc_close(c);
	assert_int_not_equal(nsr_rpc_connect("127.0.0.1", s.port,
					     NSREXECD_PROG, NSREXECD_V1, 5000,
					     &c2, &err),
			     NSR_OK);
	assert_null(c2);
	assert_int_equal(nsr_tls_list(root, &out, &err), NSR_OK);
	assert_non_null(strstr(out.data, "revoked"));
	test_server_stop(&s);
	nsr_buf_release(&err);
	nsr_buf_release(&out);
}

/* test_revoked_merge - a server's revocation list merged into another
 * root's: new lines added once, known ones and lines that are not
 * "serial host" skipped, nothing written when nothing is new; a list
 * with a stray NUL and no final newline. */
static void test_revoked_merge(void **state)
{
	char *r2 = nsr_test_tmpdir("tls-merge");
	struct nsr_buf err, text, saved;
	char path[PATH_MAX];

	NSR_UNUSED(state);
	nsr_buf_init(&err, 0);
	nsr_buf_init(&text, 0);
	nsr_buf_init(&saved, 0);
	assert_int_equal(nsr_tls_provision(r2, "sn-1", &err), NSR_OK);
	assert_int_equal(nsr_tls_revoked_text(r2, &text), NSR_OK);
	assert_int_equal(text.len, 0);
	assert_int_equal(nsr_tls_revoked_merge(r2, "", &err), 0);
	assert_int_equal(nsr_tls_revoked_merge(r2, "0A1B cli\n2c old\n", &err),
			 2);
	assert_int_equal(nsr_tls_revoked_text(r2, &text), NSR_OK);
	assert_string_equal(text.data, "0A1B cli\n2c old\n");
	/* Again, and with garbage around a new one: only the new one. */
	assert_int_equal(nsr_tls_revoked_merge(r2, "0A1B cli\n2c old\n", &err),
			 0);
	assert_int_equal(nsr_tls_revoked_merge(r2, "zz bad\n\n3d\nff new x\n"
						   "4E next\n", &err),
			 1);
	assert_int_equal(nsr_tls_revoked_text(r2, &text), NSR_OK);
	assert_string_equal(text.data, "0A1B cli\n2c old\n4E next\n");
	nsr_test_rmrf(r2);
	free(r2);

	/* A list edited by hand: a stray NUL, no newline at its end.  A
	 * merge ends the last line first, and sees every line, so what it
	 * added is not added again; the check sees the lines after the
	 * NUL too (here in the process's own root). */
	snprintf(path, sizeof(path), "%s/tls/revoked", root);
	assert_int_equal(nsr_tls_revoked_text(root, &saved), NSR_OK);
	assert_int_equal(nsr_file_replace(path, "9 a\0junk\n5f b\n77 c", 18,
					  0644),
			 NSR_OK);
	assert_int_equal(nsr_tls_revoked_merge(root, "88 d\n5f b\n", &err),
			 1);
	assert_int_equal(nsr_tls_revoked_merge(root, "88 d\n", &err), 0);
	assert_int_equal(nsr_tls_revoked_text(root, &text), NSR_OK);
	assert_int_equal(text.len, 24);
	assert_memory_equal(text.data, "9 a\0junk\n5f b\n77 c\n88 d\n", 24);
	assert_true(nsr_tls_serial_revoked("5f"));
	assert_true(nsr_tls_serial_revoked("77"));
	assert_true(nsr_tls_serial_revoked("88"));
	assert_int_equal(nsr_file_replace(path, saved.data, saved.len, 0644),
			 NSR_OK);
	nsr_buf_release(&saved);
	nsr_buf_release(&err);
	nsr_buf_release(&text);
}

/* main - one CA root for the whole run, removed at the end. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_provision),
		cmocka_unit_test(test_starttls),
		cmocka_unit_test(test_probe_reply),
		cmocka_unit_test(test_name_matches),
		cmocka_unit_test(test_enrol),
		cmocka_unit_test(test_revoke),
		cmocka_unit_test(test_revoked_merge),
	};
	int rc;

	unsetenv("NSR_TEST_NO_TLS");
	root = nsr_test_tmpdir("tls");
	nsr_tls_configure(root, 1);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	nsr_test_rmrf(root);
	free(root);
	return rc;
}
