/*
 * fuzz_cfi.c - the client file index decoders on hostile input: the
 * first byte picks the record file decoder (even), the catalogue
 * decoder (odd) or, 2, the spill file decoder of query results; the
 * rest is the file image.  What the spill decoder visits re-encodes to
 * the bytes it read.  A version 3 or 4 record
 * file that decodes (its directory table agreeing with its records)
 * decodes to the same entries as the version 2 file of the same records
 * (the table and footer cut, the header made version 2), unless it
 * holds records version 2 does not have (entry blocks, front-coded
 * lists): then the version 2 reading refuses it as corrupt.
 */
#include "nsr/compat.h"

#include "nsr/bytes.h"
#include "nsr/cfi.h"
#include "nsr/crc32c.h"
#include "nsr/err.h"
#include "../../src/index/cfi_int.h" /* the spill record encoder */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* touch_entry - read every field of an entry. */
static int touch_entry(void *ctx, const struct nsr_cfi_saveset *ss,
		       const struct nsr_cfi_entry *e)
{
	size_t *sum = ctx;

	*sum += strlen(e->path) + strlen(ss->name) + (size_t)e->size +
		(size_t)e->offset;
	return 0;
}

/* touch_ss - read every field of a save set. */
static int touch_ss(void *ctx, const struct nsr_cfi_saveset *ss)
{
	size_t *sum = ctx;

	*sum += strlen(ss->name) + (size_t)ss->ssid + (size_t)ss->entries;
	return 0;
}

/* same_as_v2 - the v3 or v4 image p[0..n) read as v2 gives sum too, or is
 * corrupt there. */
static void same_as_v2(const uint8_t *p, size_t n, size_t sum)
{
	uint64_t end = nsr_get_u64(p + n - 24 + 4);
	uint8_t *v2 = malloc((size_t)end);
	size_t sum2 = 0;
	int rc;

	if (v2 == NULL)
		return;
	memcpy(v2, p, (size_t)end);
	nsr_put_u16(v2 + 4, 2);
	nsr_put_u32(v2 + 24, nsr_crc32c(0, v2, 24));
	rc = nsr_cfi_decode_file(v2, (size_t)end, touch_entry, &sum2);
	if ((rc == NSR_OK && sum2 != sum) ||
	    (rc != NSR_OK && rc != NSR_ERR_CORRUPT))
		abort();
	free(v2);
}

/* respill - encode a visited spill entry again into the nsr_buf ctx. */
static int respill(void *ctx, const struct nsr_cfi_saveset *ss,
		   const struct nsr_cfi_entry *e)
{
	if (cfi_spill_put(ctx, ss->ssid, ss->savetime, e) != NSR_OK)
		abort();
	return 0;
}

/* spill - decode p[0..n) as a spill file: what decodes is its prefix
 * encoded again (all of it when the decoder says NSR_OK). */
static void spill(const uint8_t *p, size_t n)
{
	struct nsr_buf b;
	int rc;

	nsr_buf_init(&b, 0);
	rc = nsr_cfi_decode_spill(p, n, respill, &b);
	if (b.len > n || (b.len > 0 && memcmp(b.data, p, b.len) != 0) ||
	    (rc == NSR_OK && b.len != n))
		abort();
	nsr_buf_release(&b);
}

/* LLVMFuzzerTestOneInput - fuzz entry point. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t sum = 0;

	if (size < 1)
		return 0;
	if (data[0] == 2)
		spill(data + 1, size - 1);
	else if (data[0] & 1)
		nsr_cfi_decode_catalog(data + 1, size - 1, touch_ss, &sum);
	else if (nsr_cfi_decode_file(data + 1, size - 1, touch_entry, &sum) ==
			 NSR_OK &&
		 nsr_get_u16(data + 1 + 4) >= 3)
		same_as_v2(data + 1, size - 1, sum);
	return 0;
}
