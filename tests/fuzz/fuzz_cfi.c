/*
 * fuzz_cfi.c - the client file index decoders on hostile input: the
 * first byte picks the record file decoder (even) or the catalogue
 * decoder (odd); the rest is the file image.
 */
#include "nsr/compat.h"

#include "nsr/cfi.h"
#include "nsr/err.h"

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

/* LLVMFuzzerTestOneInput - fuzz entry point. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t sum = 0;

	if (size < 1)
		return 0;
	if (data[0] & 1)
		nsr_cfi_decode_catalog(data + 1, size - 1, touch_ss, &sum);
	else
		nsr_cfi_decode_file(data + 1, size - 1, touch_entry, &sum);
	return 0;
}
