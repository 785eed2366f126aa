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
#include "cfi_int.h" /* the block decoder and the version 2 encoder */
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

/* cfi_test_plain_list - append list payload p[0..len) with its names
 * plain (version 2: 1 byte length, name), framed, to out. */
static inline void cfi_test_plain_list(struct nsr_buf *out, const uint8_t *p,
				       size_t len)
{
	size_t plen = nsr_get_u16(p + 12), at = 14 + plen, start = out->len;
	char prev[256] = "", name[256];
	uint8_t t[4];

	assert_int_equal(nsr_buf_add(out, t, 4), NSR_OK);
	assert_int_equal(nsr_buf_add(out, p, at), NSR_OK);
	out->data[start + 4 + 1] = 0;
	while (at < len) {
		size_t pre = p[at], sl = p[at + 1];

		memcpy(name, prev, pre);
		memcpy(name + pre, p + at + 2, sl);
		name[pre + sl] = '\0';
		at += 2 + sl;
		assert_int_equal(nsr_buf_addch(out, (int)(pre + sl)), NSR_OK);
		assert_int_equal(nsr_buf_add(out, name, pre + sl), NSR_OK);
		memcpy(prev, name, pre + sl + 1);
	}
	nsr_put_u32((uint8_t *)out->data + start,
		    (uint32_t)(out->len - start - 4));
	nsr_put_u32(t, nsr_crc32c(0, out->data + start + 4,
				  out->len - start - 4));
	assert_int_equal(nsr_buf_add(out, t, 4), NSR_OK);
}

/* cfi_test_unblock - append the entries of block payload p[0..len) as
 * version 2 entry records to out. */
static inline void cfi_test_unblock(struct nsr_buf *out, const uint8_t *p,
				    size_t len)
{
	struct cfi_blk_rd r;
	struct nsr_cfi_entry e;
	char *path = malloc(CFI_PATH_MAX + 1);

	assert_non_null(path);
	assert_int_equal(cfi_blk_open(&r, p, len), NSR_OK);
	while (cfi_blk_next(&r, &e, path) == 1)
		assert_int_equal(cfi_rec_put(out, &e), NSR_OK);
	assert_int_equal(r.left, 0);
	free(path);
}

/* cfi_test_to_v2 - turn a version 3 or 4 record file image into the
 * version 2 one main wrote before directory tables: the records without
 * the table and footer (nsr_index(5)), entries one a record, list names
 * plain, version 2, the header CRC made right.  A list that a version 4
 * table names in another save set (form 2) has no record: it is left
 * out, so callers downgrade the save set holding it too (browsing then
 * finds the same list there).  The new length. */
static inline size_t cfi_test_to_v2(struct nsr_buf *img)
{
	const uint8_t *p = (const uint8_t *)img->data;
	size_t end, at = 28;
	struct nsr_buf out;

	assert_true(nsr_get_u16(p + 4) == 3 || nsr_get_u16(p + 4) == 4);
	end = (size_t)nsr_get_u64(p + img->len - 24 + 4);
	nsr_buf_init(&out, 0);
	assert_int_equal(nsr_buf_add(&out, p, 28), NSR_OK);
	nsr_put_u16((uint8_t *)out.data + 4, 2);
	nsr_put_u32((uint8_t *)out.data + 24, nsr_crc32c(0, out.data, 24));
	while (at < end) {
		size_t len = nsr_get_u32(p + at);

		if (p[at + 4] == 0 && p[at + 5] == 1)
			cfi_test_plain_list(&out, p + at + 4, len);
		else if (p[at + 4] == 0 && p[at + 5] == 2)
			cfi_test_unblock(&out, p + at + 4, len);
		else
			assert_int_equal(nsr_buf_add(&out, p + at, len + 8),
					 NSR_OK);
		at += len + 8;
	}
	nsr_buf_reset(img);
	assert_int_equal(nsr_buf_add(img, out.data, out.len), NSR_OK);
	nsr_buf_release(&out);
	return img->len;
}

#endif /* NSR_CFI_TEST_H */
