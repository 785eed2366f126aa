/*
 * fuzz_asm_sealed.c - SEALED records of the save stream (compressed and
 * encrypted file data, nsr_savestream(5)) on hostile input.  The decoder
 * knows one fixed key (FUZZ_KEY, its id computed once); the seeds are
 * streams sealed under it, with zlib, without, compression only, and
 * under a key the decoder does not know.  Byte 0: low bit resync, the
 * rest the piece size (1..128).  Checked: a file whose key was not known
 * had none of its data passed on; every other FILE_END claims exactly
 * the bytes its file delivered; and no byte of a record is passed on
 * twice (data per file never exceeds its FILE_END's total).
 */
#include "nsr/compat.h"

#include "nsr/asm.h"
#include "nsr/crypt.h"
#include "nsr/err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The one key the decoder is given: bytes 1..32, and its id. */
static struct nsr_crypt_key fuzz_key;
static int fuzz_key_made;

/* What the callbacks saw for the current file. */
struct seen {
	uint64_t data, holes;
	size_t sum;
};

/* on_file - a new file. */
static int on_file(void *ctx, const struct nsr_asm_file *f, uint64_t off)
{
	struct seen *s = ctx;

	s->sum += strlen(f->path) + (size_t)off;
	s->data = s->holes = 0;
	return 0;
}

/* on_data - read every byte handed out. */
static int on_data(void *ctx, const void *p, size_t n)
{
	struct seen *s = ctx;
	const uint8_t *c = p;

	for (size_t i = 0; i < n; i++)
		s->sum += c[i];
	s->data += n;
	return 0;
}

/* on_hole - a hole's bytes. */
static int on_hole(void *ctx, uint64_t len)
{
	struct seen *s = ctx;

	s->holes += len;
	return 0;
}

/* on_file_end - the claims of FILE_END against what was passed on. */
static int on_file_end(void *ctx, const struct nsr_asm_file_end *fe)
{
	struct seen *s = ctx;

	if (fe->nokey && (s->data != 0 || fe->ck_ok))
		abort(); /* data of an unknown key went out */
	if (!fe->nokey && fe->bytes != s->data + s->holes)
		abort();
	if (s->data + s->holes > fe->bytes)
		abort();
	return 0;
}

/* on_key - the fixed key, for its id only. */
static int on_key(void *ctx, const uint8_t *id, uint8_t *key)
{
	(void)ctx;
	if (memcmp(id, fuzz_key.id, sizeof(fuzz_key.id)) != 0)
		return -1;
	memcpy(key, fuzz_key.key, sizeof(fuzz_key.key));
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct nsr_asm_dec_ops ops = {
		.file = on_file,
		.data = on_data,
		.hole = on_hole,
		.file_end = on_file_end,
		.key = on_key,
	};
	struct nsr_asm_dec *d = NULL;
	struct seen s;
	size_t step;
	int rc = NSR_OK;

	if (!fuzz_key_made) {
		for (size_t i = 0; i < sizeof(fuzz_key.key); i++)
			fuzz_key.key[i] = (uint8_t)(i + 1);
		if (nsr_crypt_key_id(&fuzz_key) != NSR_OK)
			abort();
		fuzz_key_made = 1;
	}
	if (size < 1)
		return 0;
	memset(&s, 0, sizeof(s));
	step = (size_t)(data[0] >> 1) + 1;
	if (nsr_asm_dec_new(&d, &ops, &s) != NSR_OK)
		return 0;
	nsr_asm_dec_resync(d, data[0] & 1);
	for (size_t i = 1; i < size && rc == NSR_OK; i += step)
		rc = nsr_asm_dec_feed(d, data + i, NSR_MIN(step, size - i));
	if (rc == NSR_OK)
		(void)nsr_asm_dec_finish(d);
	nsr_asm_dec_free(d);
	return 0;
}
