/*
 * test_authz.c - the caller identity and access classes of the transport
 * (nsr/rpc.h, "Authorization"): the user a client states on its
 * connection and its host reach the handler; a procedure flagged
 * NSR_RPC_ADMIN runs only when the program's authz function says yes,
 * else the caller gets the result with NSR_ERR_PERM and authz's words
 * (other fields empty) and the handler never runs; a program without an
 * authz function refuses its classed procedures; a procedure that locks
 * itself (NSR_RPC_LOCKS_ITSELF) asks the same policy from its handler,
 * and its refusal reads the same; a connection stating a second,
 * different user is refused.  Session grants (grant.c) are good
 * for their kind, save set, key and time only.
 */
#include "nsr/compat.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsr_common.h"
#include "nsr/rpc/nsrexecd.h"
#include "nsr/xmalloc.h"
#include "nsr_test.h"
#include "rpc_testsrv.h"

#define P_PUBLIC 1
#define P_ADMIN 2
#define P_SELF 3 /* administrative, NSR_RPC_LOCKS_ITSELF */

static char seen_who[200]; /* user@host the last handler saw */
static int handled;	   /* handler runs */
static int allow;	   /* what authz answers */

/* h_who - remember who called; port 42. */
static int h_who(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	loc_get_res *r = res;

	NSR_UNUSED(ctx);
	NSR_UNUSED(args);
	nsr_rpc_call_who(call, seen_who, sizeof(seen_who));
	handled++;
	r->st.msg = nsr_xstrdup("");
	r->port = 42;
	return NSR_OK;
}

/* authz - allow or refuse, naming the caller. */
static int authz(void *ctx, const struct nsr_rpc_call *call,
		 const struct nsr_rpc_proc *p, const void *args,
		 struct nsr_buf *why)
{
	char who[200];

	NSR_UNUSED(ctx);
	NSR_UNUSED(args);
	if (allow)
		return NSR_OK;
	nsr_buf_addf(why, "denied: %s by %s: not an administrator", p->name,
		     nsr_rpc_call_who(call, who, sizeof(who)));
	return NSR_ERR_PERM;
}

static struct nsr_rpc_server *g_srv; /* for h_self */
static int self_unlocked;	     /* h_self found the mutex free */

/* h_self - takes the server mutex itself, asks authorization under it,
 * and acts (port 43) only when allowed. */
static int h_self(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	loc_get_res *r = res;

	NSR_UNUSED(ctx);
	self_unlocked = nsr_rpc_server_trylock(g_srv);
	if (!self_unlocked)
		nsr_rpc_server_lock(g_srv);
	if (nsr_rpc_authorize(call, args) != NSR_OK) {
		nsr_rpc_server_unlock(g_srv);
		return NSR_RPC_REFUSED;
	}
	nsr_rpc_call_who(call, seen_who, sizeof(seen_who));
	handled++;
	nsr_rpc_server_unlock(g_srv);
	r->st.msg = nsr_xstrdup("");
	r->port = 43;
	return NSR_OK;
}

static const struct nsr_rpc_proc procs[] = {
	{P_PUBLIC, "public", NSR_XDR(xdr_loc_key), sizeof(loc_key),
	 NSR_XDR(xdr_loc_get_res), sizeof(loc_get_res), h_who, 0},
	{P_ADMIN, "admin thing", NSR_XDR(xdr_loc_key), sizeof(loc_key),
	 NSR_XDR(xdr_loc_get_res), sizeof(loc_get_res), h_who,
	 NSR_RPC_SERIAL | NSR_RPC_ADMIN},
	{P_SELF, "self thing", NSR_XDR(xdr_loc_key), sizeof(loc_key),
	 NSR_XDR(xdr_loc_get_res), sizeof(loc_get_res), h_self,
	 NSR_RPC_LOCKS_ITSELF | NSR_RPC_ADMIN},
};

static const struct nsr_rpc_prog with_authz[] = {
	{NSREXECD_PROG, NSREXECD_V1, procs, NSR_ARRAY_SIZE(procs), NULL,
	 authz},
};

static const struct nsr_rpc_prog without_authz[] = {
	{NSREXECD_PROG, NSREXECD_V1, procs, NSR_ARRAY_SIZE(procs), NULL,
	 NULL},
};

/* call - proc on c; *r gets the result (freed by the caller). */
static int call(struct nsr_rpc_clnt *c, uint32_t proc, loc_get_res *r)
{
	loc_key k = {.prog = 1, .vers = 1};

	memset(r, 0, sizeof(*r));
	return nsr_rpc_call(c, proc, NSR_XDR(xdr_loc_key), &k,
			    NSR_XDR(xdr_loc_get_res), r);
}

/* refused_then_allowed - administrative proc (called name) on c: while
 * authz says no, refused with its words and the handler does not act;
 * once it says yes, run (answering port). */
static void refused_then_allowed(struct nsr_rpc_clnt *c, uint32_t proc,
				 const char *name, int port)
{
	int before = handled;
	loc_get_res r;
	char want[128];

	allow = 0;
	assert_int_equal(call(c, proc, &r), NSR_OK);
	assert_int_equal(r.st.code, NSR_ERR_PERM);
	snprintf(want, sizeof(want), "denied: %s by tester@localhost: not an "
		 "administrator", name);
	assert_string_equal(r.st.msg, want);
	assert_int_equal(r.port, 0);
	assert_int_equal(handled, before);
	xdr_free(NSR_XDR(xdr_loc_get_res), (char *)&r);
	allow = 1;
	assert_int_equal(call(c, proc, &r), NSR_OK);
	assert_int_equal(r.st.code, NSR_OK);
	assert_int_equal(r.port, port);
	assert_int_equal(handled, before + 1);
	xdr_free(NSR_XDR(xdr_loc_get_res), (char *)&r);
}

/* test_identity_and_admin - who reaches the handler; refusal and
 * permission of an administrative procedure. */
static void test_identity_and_admin(void **state)
{
	struct test_server s;
	struct nsr_rpc_clnt *c;
	loc_get_res r;

	NSR_UNUSED(state);
	test_server_start(&s, with_authz, 1);
	c = test_connect(s.port, NSREXECD_PROG, NSREXECD_V1);
	handled = 0;
	assert_int_equal(call(c, P_PUBLIC, &r), NSR_OK);
	assert_int_equal(r.st.code, NSR_OK);
	assert_string_equal(seen_who, "tester@localhost");
	xdr_free(NSR_XDR(xdr_loc_get_res), (char *)&r);

	refused_then_allowed(c, P_ADMIN, "admin thing", 42);
	assert_int_equal(handled, 2);
	nsr_rpc_close(c);
	test_server_stop(&s);
}

/* test_locks_itself - an NSR_RPC_LOCKS_ITSELF procedure's handler runs
 * without the server mutex and asks authorization itself: refused, the
 * caller gets the transport's refusal and the handler does not act;
 * allowed, it acts; without a policy, refused. */
static void test_locks_itself(void **state)
{
	struct test_server s;
	struct nsr_rpc_clnt *c;
	loc_get_res r;

	NSR_UNUSED(state);
	test_server_start(&s, with_authz, 1);
	g_srv = s.srv;
	c = test_connect(s.port, NSREXECD_PROG, NSREXECD_V1);
	handled = 0;
	refused_then_allowed(c, P_SELF, "self thing", 43);
	assert_int_equal(self_unlocked, 1);
	assert_int_equal(handled, 1);
	assert_string_equal(seen_who, "tester@localhost");
	nsr_rpc_close(c);
	test_server_stop(&s);

	test_server_start(&s, without_authz, 1);
	g_srv = s.srv;
	c = test_connect(s.port, NSREXECD_PROG, NSREXECD_V1);
	assert_int_equal(call(c, P_SELF, &r), NSR_OK);
	assert_int_equal(r.st.code, NSR_ERR_PERM);
	assert_non_null(strstr(r.st.msg, "no authorization policy"));
	assert_int_equal(handled, 1);
	xdr_free(NSR_XDR(xdr_loc_get_res), (char *)&r);
	nsr_rpc_close(c);
	test_server_stop(&s);
}

/* test_no_policy - without an authz function classed calls are
 * refused, public ones served. */
static void test_no_policy(void **state)
{
	struct test_server s;
	struct nsr_rpc_clnt *c;
	loc_get_res r;

	NSR_UNUSED(state);
	test_server_start(&s, without_authz, 1);
	c = test_connect(s.port, NSREXECD_PROG, NSREXECD_V1);
	handled = 0;
	assert_int_equal(call(c, P_ADMIN, &r), NSR_OK);
	assert_int_equal(r.st.code, NSR_ERR_PERM);
	assert_non_null(strstr(r.st.msg, "no authorization policy"));
	assert_int_equal(handled, 0);
	xdr_free(NSR_XDR(xdr_loc_get_res), (char *)&r);
	assert_int_equal(call(c, P_PUBLIC, &r), NSR_OK);
	assert_int_equal(handled, 1);
	xdr_free(NSR_XDR(xdr_loc_get_res), (char *)&r);
	nsr_rpc_close(c);
	test_server_stop(&s);
}

/* raw_call - a call of P_PUBLIC stating user on fd: the reply's
 * rp_stat (MSG_ACCEPTED or MSG_DENIED). */
static int raw_call(int fd, const char *user)
{
	uint8_t buf[512];
	struct rpc_msg m, r;
	loc_get_res res;
	XDR x;
	size_t len;
	int st;

	test_call_msg(&m, P_PUBLIC);
	m.rm_call.cb_cred.oa_flavor = NSR_AUTH_USER;
	m.rm_call.cb_cred.oa_base = (caddr_t)(uintptr_t)user;
	m.rm_call.cb_cred.oa_length = (u_int)strlen(user);
	len = test_raw_exchange(fd, &m, buf, sizeof(buf));
	memset(&r, 0, sizeof(r));
	memset(&res, 0, sizeof(res));
	r.acpted_rply.ar_results.where = (caddr_t)&res;
	r.acpted_rply.ar_results.proc = NSR_XDR(xdr_loc_get_res);
	xdrmem_create(&x, (char *)buf, (u_int)len, XDR_DECODE);
	assert_true(xdr_replymsg(&x, &r));
	xdr_destroy(&x);
	st = r.rm_reply.rp_stat;
	if (st == MSG_ACCEPTED)
		xdr_free(NSR_XDR(xdr_loc_get_res), (char *)&res);
	return st;
}

/* test_user_fixed - a connection's user does not change; a bad name is
 * refused. */
static void test_user_fixed(void **state)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	struct test_server s;
	int fd;

	NSR_UNUSED(state);
	test_server_start(&s, with_authz, 1);
	a.sin_port = htons((uint16_t)s.port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(raw_call(fd, "alice"), MSG_ACCEPTED);
	assert_string_equal(seen_who, "alice@localhost");
	assert_int_equal(raw_call(fd, "alice"), MSG_ACCEPTED);
	assert_int_equal(raw_call(fd, "root"), MSG_DENIED);
	close(fd);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(raw_call(fd, "ro ot"), MSG_DENIED);
	close(fd);
	test_server_stop(&s);
}

/* test_cred_user - the names a credential may state. */
static void test_cred_user(void **state)
{
	char name[NSR_RPC_USER_MAX + 1];
	char long_name[NSR_RPC_USER_MAX + 2];

	NSR_UNUSED(state);
	assert_int_equal(nsr_rpc_cred_user("root", 4, name), 1);
	assert_string_equal(name, "root");
	assert_int_equal(nsr_rpc_cred_user("HOST$", 5, name), 1);
	assert_int_equal(nsr_rpc_cred_user("a$b", 3, name), 0);
	assert_string_equal(name, "");
	assert_int_equal(nsr_rpc_cred_user("-x", 2, name), 0);
	assert_int_equal(nsr_rpc_cred_user(".x", 2, name), 0);
	assert_int_equal(nsr_rpc_cred_user("a\0b", 3, name), 0);
	assert_int_equal(nsr_rpc_cred_user("", 0, name), 0);
	memset(long_name, 'u', sizeof(long_name));
	assert_int_equal(nsr_rpc_cred_user(long_name, NSR_RPC_USER_MAX, name),
			 1);
	assert_int_equal(
		nsr_rpc_cred_user(long_name, NSR_RPC_USER_MAX + 1, name), 0);
}

/* test_vouch_line - the request line to nsrexecd's socket: strict
 * fields, and the formatter writes what the parser reads. */
static void test_vouch_line(void **state)
{
	static const char *bad[] = {
		"",		"h 1 1",      "h 1 1 1 1", "h  1 1 1",
		" h 1 1 1",	"h 0 1 1",    "h 65536 1 1", "h +1 1 1",
		"h -1 1 1",	"h 01 1 1",   "h 1 1 4294967296",
		"h 1 1 1 ",	"h\t 1 1 1", "h 1 1 x",
	};
	struct nsr_vouch_req r, q;
	char line[600];

	NSR_UNUSED(state);
	assert_int_equal(nsr_rpc_vouch_parse("sn 7938 537461011 1", &r),
			 NSR_OK);
	assert_string_equal(r.host, "sn");
	assert_int_equal(r.port, 7938);
	assert_int_equal(r.prog, 537461011u);
	assert_int_equal(r.vers, 1u);
	assert_int_equal(nsr_rpc_vouch_parse("::1 65535 4294967295 0", &r),
			 NSR_OK);
	assert_int_equal(r.prog, 4294967295u);
	assert_int_equal(nsr_rpc_vouch_format(&r, line, sizeof(line)),
			 NSR_OK);
	assert_string_equal(line, "::1 65535 4294967295 0\n");
	for (size_t i = 0; i < NSR_ARRAY_SIZE(bad); i++)
		assert_int_equal(nsr_rpc_vouch_parse(bad[i], &r),
				 NSR_ERR_SYNTAX);
	memset(&q, 0, sizeof(q));
	snprintf(q.host, sizeof(q.host), "a b");
	q.port = 1;
	assert_int_equal(nsr_rpc_vouch_format(&q, line, sizeof(line)),
			 NSR_ERR_INVAL);
	snprintf(q.host, sizeof(q.host), "h");
	q.port = 0;
	assert_int_equal(nsr_rpc_vouch_format(&q, line, sizeof(line)),
			 NSR_ERR_INVAL);
}

/* test_grants - a grant is good for its kind, save set and key until
 * it expires, and for nothing else; one changed bit of it spoils it. */
static void test_grants(void **state)
{
	uint8_t key[NSR_GRANT_KEY_LEN], other[NSR_GRANT_KEY_LEN];
	nsr_grant g, t;

	NSR_UNUSED(state);
	for (size_t i = 0; i < sizeof(key); i++) {
		key[i] = (uint8_t)(i * 7 + 1);
		other[i] = key[i];
	}
	other[31] ^= 1;
	assert_int_equal(nsr_rpc_grant_make(key, NSR_GRANT_READ, 42, 1000,
					    &g),
			 NSR_OK);
	assert_int_equal(g.kind, NSR_GRANT_READ);
	assert_int_equal(g.ssid, 42);
	assert_int_equal(g.expires, 1000);
	assert_int_equal(nsr_rpc_grant_check(key, &g, NSR_GRANT_READ, 42, 999),
			 NSR_OK);
	assert_int_equal(nsr_rpc_grant_check(key, &g, NSR_GRANT_READ, 42,
					     1000),
			 NSR_OK);
	/* Expired, another save set, another kind, another key. */
	assert_int_equal(nsr_rpc_grant_check(key, &g, NSR_GRANT_READ, 42,
					     1001),
			 NSR_ERR_PERM);
	assert_int_equal(nsr_rpc_grant_check(key, &g, NSR_GRANT_READ, 43, 0),
			 NSR_ERR_PERM);
	assert_int_equal(nsr_rpc_grant_check(key, &g, NSR_GRANT_WRITE, 42, 0),
			 NSR_ERR_PERM);
	assert_int_equal(nsr_rpc_grant_check(other, &g, NSR_GRANT_READ, 42,
					     0),
			 NSR_ERR_PERM);
	assert_int_equal(nsr_rpc_grant_check(key, NULL, NSR_GRANT_READ, 42, 0),
			 NSR_ERR_PERM);
	/* The holder cannot stretch its fields: each is under the mac. */
	t = g;
	t.expires = 2000;
	assert_int_equal(nsr_rpc_grant_check(key, &t, NSR_GRANT_READ, 42,
					     1500),
			 NSR_ERR_PERM);
	t = g;
	t.ssid = 43;
	assert_int_equal(nsr_rpc_grant_check(key, &t, NSR_GRANT_READ, 43, 0),
			 NSR_ERR_PERM);
	t = g;
	t.kind = NSR_GRANT_WRITE;
	assert_int_equal(nsr_rpc_grant_check(key, &t, NSR_GRANT_WRITE, 42, 0),
			 NSR_ERR_PERM);
	for (int bit = 0; bit < 128; bit++) {
		t = g;
		t.mac[bit / 8] = (char)(t.mac[bit / 8] ^ (1 << (bit % 8)));
		assert_int_equal(nsr_rpc_grant_check(key, &t, NSR_GRANT_READ,
						     42, 0),
				 NSR_ERR_PERM);
	}
	/* The mac is HMAC-SHA256 of the documented text (grant.c), cut to
	 * 16 bytes, whatever key the kept context had before: a mover of
	 * another build checks what this nsrd made. */
	{
		uint8_t msg[] = "NSR-GRANT-1\0\0\0\2\0\0\0\x2a"
				"\0\0\0\0\0\0\x03\xe8",
			md[EVP_MAX_MD_SIZE];
		unsigned int mdlen = 0;

		assert_int_equal(nsr_rpc_grant_make(other, NSR_GRANT_READ, 42,
						    1000, &t),
				 NSR_OK);
		assert_int_equal(nsr_rpc_grant_make(key, NSR_GRANT_READ, 42,
						    1000, &t),
				 NSR_OK);
		assert_int_equal(NSR_GRANT_READ, 2);
		assert_non_null(HMAC(EVP_sha256(), key, sizeof(key), msg,
				     sizeof(msg) - 1, md, &mdlen));
		assert_memory_equal(t.mac, md, 16);
		assert_memory_equal(g.mac, md, 16);
	}
	/* A grant of save set 0 grants nothing. */
	assert_int_equal(nsr_rpc_grant_make(key, NSR_GRANT_READ, 0, 1000, &t),
			 NSR_OK);
	assert_int_equal(nsr_rpc_grant_check(key, &t, NSR_GRANT_READ, 0, 0),
			 NSR_ERR_PERM);
}

/* libcrypto failing on purpose: the code under test is linked with
 * -Wl,--wrap for these two (CMakeLists.txt). */
static int g_fail_dup, g_fail_fetch;
EVP_MAC_CTX *__real_EVP_MAC_CTX_dup(const EVP_MAC_CTX *src);
EVP_MAC_CTX *__wrap_EVP_MAC_CTX_dup(const EVP_MAC_CTX *src);
EVP_MAC *__real_EVP_MAC_fetch(OSSL_LIB_CTX *lib, const char *alg,
			      const char *props);
EVP_MAC *__wrap_EVP_MAC_fetch(OSSL_LIB_CTX *lib, const char *alg,
			      const char *props);

/* __wrap_EVP_MAC_CTX_dup - the copy of the kept HMAC context, or none. */
EVP_MAC_CTX *__wrap_EVP_MAC_CTX_dup(const EVP_MAC_CTX *src)
{
	return g_fail_dup ? NULL : __real_EVP_MAC_CTX_dup(src);
}

/* __wrap_EVP_MAC_fetch - HMAC from libcrypto, or none. */
EVP_MAC *__wrap_EVP_MAC_fetch(OSSL_LIB_CTX *lib, const char *alg,
			      const char *props)
{
	return g_fail_fetch ? NULL : __real_EVP_MAC_fetch(lib, alg, props);
}

/* test_grant_nomac - libcrypto that cannot make an HMAC context: no
 * grant is made (nsrd then hands out an all-zero one) and none checks
 * (NSR_ERR_SYSTEM, not a yes); an all-zero grant is refused by a
 * working check; once libcrypto works again, so do grants. */
static void test_grant_nomac(void **state)
{
	uint8_t key[NSR_GRANT_KEY_LEN], other[NSR_GRANT_KEY_LEN];
	nsr_grant g, zero;

	NSR_UNUSED(state);
	for (size_t i = 0; i < sizeof(key); i++) {
		key[i] = (uint8_t)(i * 5 + 3);
		other[i] = (uint8_t)(i * 11 + 1);
	}
	assert_int_equal(nsr_rpc_grant_make(key, NSR_GRANT_WRITE, 7, 1000,
					    &g),
			 NSR_OK);
	g_fail_dup = 1; /* the kept context, no copy */
	assert_int_equal(nsr_rpc_grant_make(key, NSR_GRANT_WRITE, 7, 1000,
					    &zero),
			 NSR_ERR_SYSTEM);
	assert_int_equal(nsr_rpc_grant_check(key, &g, NSR_GRANT_WRITE, 7, 0),
			 NSR_ERR_SYSTEM);
	g_fail_dup = 0;
	g_fail_fetch = 1; /* another key: no context to key at all */
	assert_int_equal(nsr_rpc_grant_make(other, NSR_GRANT_WRITE, 7, 1000,
					    &zero),
			 NSR_ERR_SYSTEM);
	assert_int_equal(nsr_rpc_grant_check(other, &g, NSR_GRANT_WRITE, 7,
					     0),
			 NSR_ERR_SYSTEM);
	g_fail_fetch = 0;
	memset(&zero, 0, sizeof(zero)); /* what nsrd hands out then */
	zero.kind = NSR_GRANT_WRITE;
	zero.ssid = 7;
	zero.expires = 1000;
	assert_int_equal(nsr_rpc_grant_check(key, &zero, NSR_GRANT_WRITE, 7,
					     0),
			 NSR_ERR_PERM);
	assert_int_equal(nsr_rpc_grant_check(key, &g, NSR_GRANT_WRITE, 7, 0),
			 NSR_OK);
}

/* main - run the tests as user "tester" without TLS. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identity_and_admin),
		cmocka_unit_test(test_no_policy),
		cmocka_unit_test(test_user_fixed),
		cmocka_unit_test(test_cred_user),
		cmocka_unit_test(test_vouch_line),
		cmocka_unit_test(test_grants),
		cmocka_unit_test(test_grant_nomac),
		cmocka_unit_test(test_locks_itself),
	};

	setenv("NSR_TEST_NO_TLS", "1", 1);
	setenv("NSR_TEST_USER", "tester", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
