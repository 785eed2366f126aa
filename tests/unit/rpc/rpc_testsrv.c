/*
 * rpc_testsrv.c - the transport tests' server and client (rpc_testsrv.h).
 */
#include "nsr/compat.h"

#include <poll.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr_test.h"
#include "rpc_testsrv.h"

/* accept_loop - the part of the daemon loop that accepts connections. */
static void *accept_loop(void *arg)
{
	struct test_server *s = arg;
	struct pollfd p = {.fd = nsr_rpc_server_listen_fd(s->srv, 0),
			   .events = POLLIN};

	while (!s->stop)
		if (poll(&p, 1, 50) > 0)
			nsr_rpc_server_accept(s->srv, 0);
	return NULL;
}

/* test_server_start - a server of progs on an ephemeral port. */
void test_server_start(struct test_server *s, const struct nsr_rpc_prog *progs,
		       size_t n)
{
	memset(s, 0, sizeof(*s));
	assert_int_equal(nsr_rpc_server_new(progs, n, &s->srv), NSR_OK);
	assert_int_equal(
		nsr_rpc_server_listen(s->srv, "127.0.0.1", 0, &s->port),
		NSR_OK);
	assert_true(s->port > 0);
	pthread_create(&s->tid, NULL, accept_loop, s);
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
