/*
 * cfi_test.h - helpers the client file index tests share: entries as
 * text, a directory listing as text, and a counter.
 */
#ifndef NSR_CFI_TEST_H
#define NSR_CFI_TEST_H

#include "nsr/buf.h"
#include "nsr/cfi.h"
#include "nsr_test.h"

/* cfi_test_show - render a visited entry as "ssid path size\n" into the
 * nsr_buf ctx. */
static inline int cfi_test_show(void *ctx, const struct nsr_cfi_saveset *ss,
				const struct nsr_cfi_entry *e)
{
	return nsr_buf_addf(ctx, "%" PRIu64 " %s %" PRIu64 "\n", ss->ssid,
			    e->path, e->size);
}

/* cfi_test_ls - the listing of dir as of t, as text (in b). */
static inline const char *cfi_test_ls(struct nsr_cfi *c, const char *dir,
				      int64_t t, struct nsr_buf *b)
{
	nsr_buf_reset(b);
	assert_int_equal(nsr_cfi_list_dir(c, dir, t, cfi_test_show, b),
			 NSR_OK);
	return b->data;
}

/* cfi_test_count - count visited entries in the int ctx. */
static inline int cfi_test_count(void *ctx, const struct nsr_cfi_saveset *ss,
				 const struct nsr_cfi_entry *e)
{
	NSR_UNUSED(ss);
	NSR_UNUSED(e);
	(*(int *)ctx)++;
	return 0;
}

#endif /* NSR_CFI_TEST_H */
