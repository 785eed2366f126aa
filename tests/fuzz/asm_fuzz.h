/*
 * asm_fuzz.h - what the save stream fuzz targets share (fuzz_asm_decode,
 * fuzz_asm_sealed): the byte-0 convention (low bit resync, the rest the
 * piece size 1..128), the feeding loop, and data callbacks that read
 * every byte and count the current file's data.
 */
#ifndef ASM_FUZZ_H
#define ASM_FUZZ_H

#include "nsr/asm.h"
#include "nsr/err.h"

/* What the callbacks saw: sum keeps the reads from being optimised
 * away; data counts the current file's bytes (DATA and HOLE), clear
 * those passed on as data. */
struct asm_seen {
	size_t sum;
	uint64_t data;
	uint64_t clear;
	int unsized;
};

/* asm_seen_data - read every data byte. */
static inline int asm_seen_data(void *ctx, const void *p, size_t n)
{
	struct asm_seen *s = ctx;
	const uint8_t *c = p;

	for (size_t i = 0; i < n; i++)
		s->sum += c[i];
	s->data += n;
	s->clear += n;
	return 0;
}

/* asm_seen_hole - a hole's bytes count as the file's data. */
static inline int asm_seen_hole(void *ctx, uint64_t len)
{
	struct asm_seen *s = ctx;

	s->data += len;
	return 0;
}

/* asm_fuzz_decode - decode data[1..size) as byte 0 says, with ops and
 * seen (an asm_seen first). */
static inline void asm_fuzz_decode(const struct nsr_asm_dec_ops *ops,
				   void *seen, const uint8_t *data,
				   size_t size)
{
	struct nsr_asm_dec *d = NULL;
	size_t step;
	int rc = NSR_OK;

	if (size < 1)
		return;
	step = (size_t)(data[0] >> 1) + 1;
	if (nsr_asm_dec_new(&d, ops, seen) != NSR_OK)
		return;
	nsr_asm_dec_resync(d, data[0] & 1);
	for (size_t i = 1; i < size && rc == NSR_OK; i += step)
		rc = nsr_asm_dec_feed(d, data + i, NSR_MIN(step, size - i));
	if (rc == NSR_OK)
		(void)nsr_asm_dec_finish(d);
	nsr_asm_dec_free(d);
}

#endif /* ASM_FUZZ_H */
