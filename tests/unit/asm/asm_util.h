/*
 * asm_util.h - helpers shared by the save stream unit tests: a sink that
 * collects the stream in a buffer and a decoder run over it in pieces.
 */
#ifndef ASM_UTIL_H
#define ASM_UTIL_H

#include "nsr/asm.h"
#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr_test.h"

/* mem_sink - collect the stream in a buffer. */
static inline int mem_sink(void *ctx, const void *p, size_t n)
{
	return nsr_buf_add(ctx, p, n);
}

/* start_stream - an encoder on s (emptied) with a header for save set
 * name written. */
static inline struct nsr_asm_enc *start_stream(struct nsr_buf *s,
					       const char *name)
{
	struct nsr_asm_header h = {0, 0, 7, 1700000000, "c", name};
	struct nsr_asm_enc *e = NULL;

	nsr_buf_reset(s);
	assert_int_equal(nsr_asm_enc_new(&e, NSR_ASM_CK_CRC32C, mem_sink, s),
			 NSR_OK);
	assert_int_equal(nsr_asm_enc_header(e, &h), NSR_OK);
	return e;
}

/* decode_steps - decode s fed in pieces of step bytes with ops and ctx;
 * the first error, or finish's verdict. */
static inline int decode_steps(const struct nsr_buf *s, size_t step,
			       const struct nsr_asm_dec_ops *ops, void *ctx)
{
	struct nsr_asm_dec *d = NULL;
	int rc = NSR_OK;

	assert_int_equal(nsr_asm_dec_new(&d, ops, ctx), NSR_OK);
	for (size_t i = 0; i < s->len && rc == NSR_OK; i += step)
		rc = nsr_asm_dec_feed(d, s->data + i,
				      NSR_MIN(step, s->len - i));
	if (rc == NSR_OK)
		rc = nsr_asm_dec_finish(d);
	nsr_asm_dec_free(d);
	return rc;
}

#endif /* ASM_UTIL_H */
