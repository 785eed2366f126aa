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

#include "asm_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The one key the decoder is given: bytes 1..32, and its id. */
static struct nsr_crypt_key fuzz_key;
static int fuzz_key_made;

/* on_file - a new file. */
static int on_file(void *ctx, const struct nsr_asm_file *f, uint64_t off)
{
	struct asm_seen *s = ctx;

	s->sum += strlen(f->path) + (size_t)off;
	s->data = s->clear = 0;
	return 0;
}

/* on_file_end - the claims of FILE_END against what was passed on. */
static int on_file_end(void *ctx, const struct nsr_asm_file_end *fe)
{
	struct asm_seen *s = ctx;

	if (fe->nokey && (s->clear != 0 || fe->ck_ok))
		abort(); /* data of an unknown key went out */
	if (!fe->nokey && fe->bytes != s->data)
		abort();
	if (s->data > fe->bytes)
		abort();
	return 0;
}

/* on_key - the fixed key, for its id only. */
static int on_key(void *ctx, const uint8_t *id, uint8_t *key)
{
	NSR_UNUSED(ctx);
	if (memcmp(id, fuzz_key.id, sizeof(fuzz_key.id)) != 0)
		return -1;
	memcpy(key, fuzz_key.key, sizeof(fuzz_key.key));
	return 0;
}

/* LLVMFuzzerTestOneInput - fuzz entry point. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct nsr_asm_dec_ops ops = {
		.file = on_file,
		.data = asm_seen_data,
		.hole = asm_seen_hole,
		.file_end = on_file_end,
		.key = on_key,
	};
	struct asm_seen s;

	if (!fuzz_key_made) {
		for (size_t i = 0; i < sizeof(fuzz_key.key); i++)
			fuzz_key.key[i] = (uint8_t)(i + 1);
		if (nsr_crypt_key_id(&fuzz_key) != NSR_OK)
			abort();
		fuzz_key_made = 1;
	}
	memset(&s, 0, sizeof(s));
	asm_fuzz_decode(&ops, &s, data, size);
	return s.sum == 1 ? 0 : 0;
}
