/*
 * fuzz_tls_probe.c - the RFC 9289 framing of our own: the decoder of the
 * server's answer to the AUTH_TLS probe (nsr_tls_probe_reply), and the
 * probe call itself.
 *
 * Byte 0 even: bytes 1-4 are the expected xid, the rest the reply.  What
 * the decoder says must agree with itself: a verdict (1 or 0) only for a
 * whole record, every proper prefix of it then "truncated" with the same
 * total needed, and garbage an error, never a crash.
 * Byte 0 odd: bytes 1-12 are xid, program, version; the encoded probe
 * must decode with libtirpc's xdr_callmsg to exactly that call with the
 * AUTH_TLS credential, empty, and procedure 0.
 */
#include "nsr/compat.h"

#include <rpc/rpc.h>

#include "nsr/err.h"
#include "nsr/tls.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* be32 - big-endian word at p. */
static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/* check_reply - the decoder agrees with itself on p[n]. */
static void check_reply(const uint8_t *p, size_t n, uint32_t xid)
{
	size_t need = 0, need2 = 0;
	int rc = nsr_tls_probe_reply(p, n, xid, &need);

	if (rc != 1 && rc != 0 && rc != NSR_ERR_TRUNCATED &&
	    rc != NSR_ERR_PROTO)
		abort();
	if (rc == NSR_ERR_TRUNCATED && need <= n)
		abort();
	if (rc == 1 || rc == 0) {
		if (need != n || n > 4 + NSR_TLS_REPLY_MAX)
			abort();
		for (size_t k = 0; k < n; k += 1 + k / 4)
			if (nsr_tls_probe_reply(p, k, xid, &need2) !=
				    NSR_ERR_TRUNCATED ||
			    (k >= 4 && need2 != n))
				abort();
	}
}

/* check_call - the probe is a valid ONC RPC call with AUTH_TLS. */
static void check_call(const uint8_t *d)
{
	uint8_t buf[NSR_TLS_CALL_MAX];
	char cred[MAX_AUTH_BYTES], verf[MAX_AUTH_BYTES];
	uint32_t xid = be32(d), prog = be32(d + 4), vers = be32(d + 8);
	size_t n = nsr_tls_probe_call(xid, prog, vers, buf);
	struct rpc_msg m;
	XDR x;

	if (n > sizeof(buf) || n < 4 || be32(buf) != (0x80000000u | (n - 4)))
		abort();
	memset(&m, 0, sizeof(m));
	m.rm_call.cb_cred.oa_base = cred;
	m.rm_call.cb_verf.oa_base = verf;
	xdrmem_create(&x, (char *)buf + 4, (u_int)(n - 4), XDR_DECODE);
	if (!xdr_callmsg(&x, &m) || xdr_getpos(&x) != n - 4 ||
	    m.rm_xid != xid || m.rm_direction != CALL ||
	    m.rm_call.cb_prog != prog || m.rm_call.cb_vers != vers ||
	    m.rm_call.cb_proc != 0 ||
	    m.rm_call.cb_cred.oa_flavor != NSR_AUTH_TLS ||
	    m.rm_call.cb_cred.oa_length != 0 ||
	    m.rm_call.cb_verf.oa_flavor != AUTH_NONE)
		abort();
	xdr_destroy(&x);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 13)
		return 0;
	if (data[0] & 1)
		check_call(data + 1);
	else
		check_reply(data + 5, size - 5, be32(data + 1));
	return 0;
}
