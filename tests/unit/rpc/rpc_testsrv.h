/*
 * rpc_testsrv.h - an RPC server on an ephemeral loopback port with an
 * accepting thread (the part of a daemon's loop the transport tests
 * need), and a client connected to it; failures fail the test.
 */
#ifndef NSR_RPC_TESTSRV_H
#define NSR_RPC_TESTSRV_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "nsr/rpc.h"

struct test_server {
	struct nsr_rpc_server *srv;
	pthread_t tid;
	int port;
	volatile int stop;
};

/* test_server_listen - a server of progs[n] on 127.0.0.1 (s->port) that
 * does not accept yet: more listeners may be added before
 * test_server_run, which accepts on all of them (at most 4). */
void test_server_listen(struct test_server *s,
			const struct nsr_rpc_prog *progs, size_t n);
void test_server_run(struct test_server *s);
/* test_server_start - serve progs[n] on 127.0.0.1 (s->port). */
void test_server_start(struct test_server *s, const struct nsr_rpc_prog *progs,
		       size_t n);
/* test_server_stop - stop accepting, free the server. */
void test_server_stop(struct test_server *s);
/* test_connect - a client of prog/vers at 127.0.0.1:port (asserted). */
struct nsr_rpc_clnt *test_connect(int port, uint32_t prog, uint32_t vers);

/* test_call_msg - *m: call 77 of NSREXECD procedure proc, no
 * credential. */
void test_call_msg(struct rpc_msg *m, uint32_t proc);
/* test_raw_exchange - send call m as one record on fd (with loc_key
 * {1, 1} as arguments unless it is procedure 0) and read the reply
 * record into buf[size] (asserted); returns the reply's length. */
size_t test_raw_exchange(int fd, struct rpc_msg *m, uint8_t *buf,
			 size_t size);

#endif /* NSR_RPC_TESTSRV_H */
