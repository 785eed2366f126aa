/*
 * rpc_testsrv.c - the transport tests' server and client (rpc_testsrv.h).
 */
#include "nsr/compat.h"

#include <poll.h>

#include <arpa/inet.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/rpc/nsrexecd.h"
#include "nsr_test.h"
#include "rpc_testsrv.h"

/* accept_loop - the part of the daemon loop that accepts connections,
 * on every listener the server had when it started. */
static void *accept_loop(void *arg)
{
	struct test_server *s = arg;
	struct pollfd p[4];
	int n = nsr_rpc_server_nlisten(s->srv);

	if (n > (int)NSR_ARRAY_SIZE(p))
		n = (int)NSR_ARRAY_SIZE(p);
	for (int i = 0; i < n; i++) {
		p[i].fd = nsr_rpc_server_listen_fd(s->srv, i);
		p[i].events = POLLIN;
	}
	while (!s->stop)
		if (poll(p, (nfds_t)n, 50) > 0)
			for (int i = 0; i < n; i++)
				if (p[i].revents & POLLIN)
					nsr_rpc_server_accept(s->srv, i);
	return NULL;
}

/* test_server_listen - a server of progs on an ephemeral port, not yet
 * accepting. */
void test_server_listen(struct test_server *s,
			const struct nsr_rpc_prog *progs, size_t n)
{
	memset(s, 0, sizeof(*s));
	assert_int_equal(nsr_rpc_server_new(progs, n, &s->srv), NSR_OK);
	assert_int_equal(
		nsr_rpc_server_listen(s->srv, "127.0.0.1", 0, &s->port),
		NSR_OK);
	assert_true(s->port > 0);
}

/* test_server_run - accept on its listeners from now on. */
void test_server_run(struct test_server *s)
{
	pthread_create(&s->tid, NULL, accept_loop, s);
}

/* test_server_start - a server of progs on an ephemeral port. */
void test_server_start(struct test_server *s, const struct nsr_rpc_prog *progs,
		       size_t n)
{
	test_server_listen(s, progs, n);
	test_server_run(s);
}

/* test_server_stop - join the accepting thread, free the server. */
void test_server_stop(struct test_server *s)
{
	s->stop = 1;
	pthread_join(s->tid, NULL);
	nsr_rpc_server_free(s->srv);
}

/* test_connect - connect or fail the test. */
struct nsr_rpc_clnt *test_connect(int port, uint32_t prog, uint32_t vers)
{
	struct nsr_rpc_clnt *c = NULL;
	struct nsr_buf err;

	nsr_buf_init(&err, 0);
	assert_int_equal(
		nsr_rpc_connect("127.0.0.1", port, prog, vers, 5000, &c, &err),
		NSR_OK);
	nsr_buf_release(&err);
	return c;
}

/* test_call_msg - a bare call message. */
void test_call_msg(struct rpc_msg *m, uint32_t proc)
{
	memset(m, 0, sizeof(*m));
	m->rm_xid = 77;
	m->rm_direction = CALL;
	m->rm_call.cb_rpcvers = 2;
	m->rm_call.cb_prog = NSREXECD_PROG;
	m->rm_call.cb_vers = NSREXECD_V1;
	m->rm_call.cb_proc = proc;
	m->rm_call.cb_cred = _null_auth;
	m->rm_call.cb_verf = _null_auth;
}

/* test_raw_exchange - one call record out, one reply record in. */
size_t test_raw_exchange(int fd, struct rpc_msg *m, uint8_t *buf,
			 size_t size)
{
	loc_key k = {.prog = 1, .vers = 1};
	uint32_t mark, len;
	size_t got;
	XDR x;

	xdrmem_create(&x, (char *)buf + 4, (u_int)(size - 4), XDR_ENCODE);
	assert_true(xdr_callmsg(&x, m));
	if (m->rm_call.cb_proc)
		assert_true(xdr_loc_key(&x, &k));
	len = xdr_getpos(&x);
	xdr_destroy(&x);
	mark = htonl(0x80000000u | len);
	memcpy(buf, &mark, 4);
	assert_int_equal(write(fd, buf, 4 + len), (ssize_t)(4 + len));
	assert_int_equal(nsr_read_full(fd, buf, 4, &got), NSR_OK);
	assert_int_equal(got, 4);
	memcpy(&mark, buf, 4);
	len = ntohl(mark) & 0x7fffffffu;
	assert_true(len < size);
	assert_int_equal(nsr_read_full(fd, buf, len, &got), NSR_OK);
	assert_int_equal(got, len);
	return len;
}
