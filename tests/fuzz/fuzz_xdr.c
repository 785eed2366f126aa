/*
 * fuzz_xdr.c - every RPC message decoder on hostile bytes.  The first
 * input byte picks the message type (tests/unit/rpc/xdr_types.h), the rest
 * is decoded with the rpcgen routines; whatever happens must be a clean
 * success or failure, with everything freed.
 */
#include "nsr/compat.h"

#include "../unit/rpc/xdr_types.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct xdr_type *t;
	void *v;
	XDR x;

	if (size < 1 || size > (1u << 20))
		return 0;
	t = &xdr_types[data[0] % NSR_ARRAY_SIZE(xdr_types)];
	v = calloc(1, t->size);
	if (!v)
		return 0;
	xdrmem_create(&x, (char *)(uintptr_t)(data + 1), (u_int)(size - 1),
		      XDR_DECODE);
	(void)t->proc(&x, v);
	xdr_destroy(&x);
	xdr_free(t->proc, v);
	free(v);
	return 0;
}
