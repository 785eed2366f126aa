/*
 * cfi_test.h - helpers the client file index tests share: entries as
 * text, a directory listing as text, and a counter.
 */
#ifndef NSR_CFI_TEST_H
#define NSR_CFI_TEST_H

#include "nsr/buf.h"
#include "nsr/bytes.h"
#include "nsr/cfi.h"
#include "nsr/crc32c.h"
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

/* cfi_test_to_v2 - turn a version 3 record file image into the version 2
 * one main wrote before directory tables: the records without the table
 * and footer (nsr_index(5)), version 2, the header CRC made right.  The
 * new length. */
static inline size_t cfi_test_to_v2(struct nsr_buf *img)
{
	uint8_t *p = (uint8_t *)img->data;

	assert_int_equal(nsr_get_u16(p + 4), 3);
	nsr_buf_setlen(img, (size_t)nsr_get_u64(p + img->len - 24 + 4));
	nsr_put_u16(p + 4, 2);
	nsr_put_u32(p + 24, nsr_crc32c(0, p, 24));
	return img->len;
}

#endif /* NSR_CFI_TEST_H */
