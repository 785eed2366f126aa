/*
 * fuzz_rpc_record.c - the RPC transport's receive paths on hostile bytes:
 * ONC RPC record marking (libtirpc's xdrrec, read through the transport's
 * struct nsr_conn as the daemons and clients read a socket), then
 *   byte 0 even: the server's side - records of call headers
 *                (xdr_callmsg) each followed by the arguments of the
 *                procedure it names, looked up in the table of every
 *                procedure of every .x program (tests/unit/rpc/xdr_types.h),
 *                as src/rpc/server.c's conn_main and dispatch decode them;
 *   byte 0 odd:  the client's side - reply records (xdr_replymsg) carrying
 *                the result type of the procedure picked by byte 1, as
 *                nsr_rpc_call decodes them.
 * Bits 1..7 of byte 0 give the most bytes one read of the connection
 * returns (1..128, or everything for 127), so records and fragments split
 * across reads are exercised.
 *
 * Checked for every message that decodes: authentication bodies within
 * MAX_AUTH_BYTES; and the round trip - the message encoded again as the
 * sending half does (xdr_callmsg + arguments or xdr_replymsg, then
 * xdrrec_endofrecord) decodes through a fresh record stream to the same
 * header and to arguments/results with the same XDR encoding.  Anything
 * else aborts.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"

#include "../../src/rpc/rpc_int.h"
#include "../unit/rpc/xdr_types.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Record buffers: small, so refills and fragment boundaries happen often
 * (the transport uses NSR_RPC_BUFSZ; xdrrec's logic is the same). */
#define RECBUF 4000
#define MAX_RECORDS 64

/* A connection whose peer is a byte array (reads) or an nsr_buf (writes). */
struct memconn {
	struct nsr_conn conn; /* first: the ops get a struct nsr_conn * */
	const uint8_t *p;
	size_t n, off, step;
	struct nsr_buf *out;
};

/* mem_read - up to step bytes; -1 at the end, as a socket's EOF gives. */
static int mem_read(struct nsr_conn *c, void *p, int n)
{
	struct memconn *m = (struct memconn *)c;
	size_t k = NSR_MIN((size_t)n, m->n - m->off);

	k = NSR_MIN(k, m->step);
	if (k == 0)
		return -1;
	memcpy(p, m->p + m->off, k);
	m->off += k;
	return (int)k;
}

/* mem_write - append everything. */
static int mem_write(struct nsr_conn *c, const void *p, int n)
{
	struct memconn *m = (struct memconn *)c;

	if (m->out == NULL || nsr_buf_add(m->out, p, (size_t)n) != 0)
		return -1;
	return n;
}

/* mem_close - nothing to release. */
static void mem_close(struct nsr_conn *c)
{
	NSR_UNUSED(c);
}

static const struct nsr_conn_ops mem_ops = {mem_read, mem_write, mem_close,
					    NULL};

/* conn_init - a reading (p, n) or writing (out) connection. */
static void conn_init(struct memconn *m, const uint8_t *p, size_t n,
		      size_t step, struct nsr_buf *out)
{
	memset(m, 0, sizeof(*m));
	m->conn.ops = &mem_ops;
	m->conn.fd = -1;
	m->p = p;
	m->n = n;
	m->step = step;
	m->out = out;
}

/* xdr_bytes_of - the XDR encoding of v (malloc'ed, *len) or NULL. */
static char *xdr_bytes_of(xdrproc_t proc, void *v, u_int *len)
{
	u_int n = (u_int)xdr_sizeof(proc, v);
	char *b = malloc(n ? n : 1);
	XDR x;

	if (b == NULL)
		abort();
	xdrmem_create(&x, b, n, XDR_ENCODE);
	if (!proc(&x, v))
		abort(); /* what decoded must encode */
	*len = xdr_getpos(&x);
	xdr_destroy(&x);
	return b;
}

/* same_encoding - a and b (both of type proc) encode to the same bytes. */
static int same_encoding(xdrproc_t proc, void *a, void *b)
{
	u_int la, lb;
	char *ea = xdr_bytes_of(proc, a, &la), *eb = xdr_bytes_of(proc, b, &lb);
	int same = la == lb && memcmp(ea, eb, la) == 0;

	free(ea);
	free(eb);
	return same;
}

/* find_proc - the table entry for prog/vers/proc, or NULL. */
static const struct xdr_proc *find_proc(const struct call_body *cb)
{
	for (size_t i = 0; i < NSR_ARRAY_SIZE(xdr_procs); i++)
		if (xdr_procs[i].prog == cb->cb_prog &&
		    xdr_procs[i].vers == cb->cb_vers &&
		    xdr_procs[i].proc == cb->cb_proc)
			return &xdr_procs[i];
	return NULL;
}

/* check_auth - an authentication body as libtirpc bounds it. */
static void check_auth(const struct opaque_auth *a)
{
	if (a->oa_length > MAX_AUTH_BYTES)
		abort();
}

/* call_roundtrip - encode msg + args as nsr_rpc_send does, decode again. */
static void call_roundtrip(const struct rpc_msg *msg,
			   const struct xdr_proc *p, void *args)
{
	char cred[2 * MAX_AUTH_BYTES];
	struct memconn w, r;
	struct rpc_msg m2;
	struct nsr_buf out;
	void *args2 = calloc(1, p ? p->argsize : 1);
	XDR x;

	if (args2 == NULL)
		abort();
	nsr_buf_init(&out, 0);
	conn_init(&w, NULL, 0, 0, &out);
	xdrrec_create(&x, RECBUF, RECBUF, &w.conn, nsr_conn_xdr_read,
		      nsr_conn_xdr_write);
	x.x_op = XDR_ENCODE;
	if (!xdr_callmsg(&x, (struct rpc_msg *)(uintptr_t)msg) ||
	    (p && !p->args(&x, args)) || !xdrrec_endofrecord(&x, TRUE))
		abort();
	xdr_destroy(&x);

	conn_init(&r, (const uint8_t *)out.data, out.len, out.len, NULL);
	xdrrec_create(&x, RECBUF, RECBUF, &r.conn, nsr_conn_xdr_read,
		      nsr_conn_xdr_write);
	x.x_op = XDR_DECODE;
	memset(&m2, 0, sizeof(m2));
	m2.rm_call.cb_cred.oa_base = cred;
	m2.rm_call.cb_verf.oa_base = cred + MAX_AUTH_BYTES;
	if (!xdrrec_skiprecord(&x) || !xdr_callmsg(&x, &m2) ||
	    (p && !p->args(&x, args2)))
		abort();
	if (m2.rm_xid != msg->rm_xid || m2.rm_direction != CALL ||
	    m2.rm_call.cb_rpcvers != msg->rm_call.cb_rpcvers ||
	    m2.rm_call.cb_prog != msg->rm_call.cb_prog ||
	    m2.rm_call.cb_vers != msg->rm_call.cb_vers ||
	    m2.rm_call.cb_proc != msg->rm_call.cb_proc ||
	    m2.rm_call.cb_cred.oa_flavor != msg->rm_call.cb_cred.oa_flavor ||
	    m2.rm_call.cb_cred.oa_length != msg->rm_call.cb_cred.oa_length ||
	    memcmp(m2.rm_call.cb_cred.oa_base, msg->rm_call.cb_cred.oa_base,
		   msg->rm_call.cb_cred.oa_length) != 0 ||
	    m2.rm_call.cb_verf.oa_flavor != msg->rm_call.cb_verf.oa_flavor ||
	    m2.rm_call.cb_verf.oa_length != msg->rm_call.cb_verf.oa_length ||
	    memcmp(m2.rm_call.cb_verf.oa_base, msg->rm_call.cb_verf.oa_base,
		   msg->rm_call.cb_verf.oa_length) != 0)
		abort();
	if (p && !same_encoding(p->args, args, args2))
		abort();
	xdr_destroy(&x);
	if (p)
		xdr_free(p->args, args2);
	free(args2);
	nsr_buf_release(&out);
}

/* server_side - decode call records as conn_main/dispatch do. */
static void server_side(const uint8_t *data, size_t size, size_t step)
{
	char cred[2 * MAX_AUTH_BYTES];
	struct rpc_msg msg;
	struct memconn c;
	XDR x;

	conn_init(&c, data, size, step, NULL);
	xdrrec_create(&x, RECBUF, RECBUF, &c.conn, nsr_conn_xdr_read,
		      nsr_conn_xdr_write);
	for (int rec = 0; rec < MAX_RECORDS; rec++) {
		const struct xdr_proc *p;
		void *args;

		x.x_op = XDR_DECODE;
		if (!xdrrec_skiprecord(&x))
			break;
		memset(&msg, 0, sizeof(msg));
		msg.rm_call.cb_cred.oa_base = cred;
		msg.rm_call.cb_verf.oa_base = cred + MAX_AUTH_BYTES;
		if (!xdr_callmsg(&x, &msg) || msg.rm_direction != CALL)
			break;
		check_auth(&msg.rm_call.cb_cred);
		check_auth(&msg.rm_call.cb_verf);
		if (msg.rm_call.cb_rpcvers != 2)
			break;
		p = find_proc(&msg.rm_call);
		if (p == NULL) { /* answered PROG/PROC_UNAVAIL, no arguments */
			call_roundtrip(&msg, NULL, NULL);
			continue;
		}
		args = calloc(1, p->argsize);
		if (args == NULL)
			abort();
		if (p->args(&x, args))
			call_roundtrip(&msg, p, args);
		xdr_free(p->args, args);
		free(args);
	}
	xdr_destroy(&x);
}

/* same_reply - the header fields the client looks at are equal. */
static int same_reply(const struct rpc_msg *a, const struct rpc_msg *b)
{
	if (a->rm_xid != b->rm_xid || a->rm_direction != b->rm_direction ||
	    a->rm_reply.rp_stat != b->rm_reply.rp_stat)
		return 0;
	if (a->rm_reply.rp_stat == MSG_DENIED) {
		if (a->rjcted_rply.rj_stat != b->rjcted_rply.rj_stat)
			return 0;
		if (a->rjcted_rply.rj_stat == RPC_MISMATCH)
			return a->rjcted_rply.rj_vers.low ==
				       b->rjcted_rply.rj_vers.low &&
			       a->rjcted_rply.rj_vers.high ==
				       b->rjcted_rply.rj_vers.high;
		return a->rjcted_rply.rj_why == b->rjcted_rply.rj_why;
	}
	if (a->acpted_rply.ar_verf.oa_flavor !=
		    b->acpted_rply.ar_verf.oa_flavor ||
	    a->acpted_rply.ar_verf.oa_length !=
		    b->acpted_rply.ar_verf.oa_length ||
	    (a->acpted_rply.ar_verf.oa_length &&
	     memcmp(a->acpted_rply.ar_verf.oa_base,
		    b->acpted_rply.ar_verf.oa_base,
		    a->acpted_rply.ar_verf.oa_length) != 0) ||
	    a->acpted_rply.ar_stat != b->acpted_rply.ar_stat)
		return 0;
	if (a->acpted_rply.ar_stat == PROG_MISMATCH)
		return a->acpted_rply.ar_vers.low ==
			       b->acpted_rply.ar_vers.low &&
		       a->acpted_rply.ar_vers.high ==
			       b->acpted_rply.ar_vers.high;
	return 1;
}

/* free_verf - the verifier body xdr_replymsg allocated (oa_base was NULL). */
static void free_verf(struct rpc_msg *r)
{
	if (r->rm_reply.rp_stat == MSG_ACCEPTED) {
		free(r->acpted_rply.ar_verf.oa_base);
		r->acpted_rply.ar_verf.oa_base = NULL;
	}
}

/* reply_roundtrip - encode r as send_reply does and decode it again. */
static void reply_roundtrip(const struct rpc_msg *r, const struct xdr_proc *p,
			    void *res)
{
	struct memconn w, rd;
	struct rpc_msg r1 = *r, r2;
	struct nsr_buf out;
	void *res2 = calloc(1, p->ressize);
	XDR x;

	if (res2 == NULL)
		abort();
	nsr_buf_init(&out, 0);
	conn_init(&w, NULL, 0, 0, &out);
	xdrrec_create(&x, RECBUF, RECBUF, &w.conn, nsr_conn_xdr_read,
		      nsr_conn_xdr_write);
	x.x_op = XDR_ENCODE;
	if (r1.rm_reply.rp_stat == MSG_ACCEPTED &&
	    r1.acpted_rply.ar_stat == SUCCESS) { /* a union with ar_vers */
		r1.acpted_rply.ar_results.where = res;
		r1.acpted_rply.ar_results.proc = p->res;
	}
	if (!xdr_replymsg(&x, &r1) || !xdrrec_endofrecord(&x, TRUE))
		abort();
	xdr_destroy(&x);

	conn_init(&rd, (const uint8_t *)out.data, out.len, out.len, NULL);
	xdrrec_create(&x, RECBUF, RECBUF, &rd.conn, nsr_conn_xdr_read,
		      nsr_conn_xdr_write);
	x.x_op = XDR_DECODE;
	memset(&r2, 0, sizeof(r2));
	r2.acpted_rply.ar_verf = _null_auth;
	r2.acpted_rply.ar_results.where = res2;
	r2.acpted_rply.ar_results.proc = p->res;
	if (!xdrrec_skiprecord(&x) || !xdr_replymsg(&x, &r2) ||
	    !same_reply(r, &r2))
		abort();
	if (r->rm_reply.rp_stat == MSG_ACCEPTED &&
	    r->acpted_rply.ar_stat == SUCCESS &&
	    !same_encoding(p->res, res, res2))
		abort();
	xdr_destroy(&x);
	free_verf(&r2);
	xdr_free(p->res, res2);
	free(res2);
	nsr_buf_release(&out);
}

/* client_side - decode reply records as nsr_rpc_call does. */
static void client_side(const uint8_t *data, size_t size, size_t step,
			const struct xdr_proc *p)
{
	struct memconn c;
	XDR x;

	conn_init(&c, data, size, step, NULL);
	xdrrec_create(&x, RECBUF, RECBUF, &c.conn, nsr_conn_xdr_read,
		      nsr_conn_xdr_write);
	for (int rec = 0; rec < MAX_RECORDS; rec++) {
		struct rpc_msg r;
		void *res = calloc(1, p->ressize);
		bool_t ok;

		if (res == NULL)
			abort();
		memset(&r, 0, sizeof(r));
		r.acpted_rply.ar_verf = _null_auth;
		r.acpted_rply.ar_results.where = res;
		r.acpted_rply.ar_results.proc = p->res;
		x.x_op = XDR_DECODE;
		ok = xdrrec_skiprecord(&x) && xdr_replymsg(&x, &r);
		if (ok) {
			if (r.rm_reply.rp_stat == MSG_ACCEPTED)
				check_auth(&r.acpted_rply.ar_verf);
			reply_roundtrip(&r, p, res);
		}
		free_verf(&r);
		xdr_free(p->res, res);
		free(res);
		if (!ok)
			break;
	}
	xdr_destroy(&x);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t step;

	if (size < 2 || size > (1u << 20))
		return 0;
	step = (data[0] >> 1) == 127 ? size : (size_t)(data[0] >> 1) + 1;
	if ((data[0] & 1) == 0)
		server_side(data + 1, size - 1, step);
	else
		client_side(data + 2, size - 2, step,
			    &xdr_procs[data[1] % NSR_ARRAY_SIZE(xdr_procs)]);
	return 0;
}
