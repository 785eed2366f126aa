/*
 * fuzz_asm_decode.c - the save stream decoder on hostile input.  The
 * first input byte picks resynchronisation (low bit) and the piece size
 * the stream is fed in (1..128), so the incremental and the recovery
 * paths are exercised as well as whole-buffer decoding.  Every FILE_END
 * must claim exactly the data bytes (DATA plus HOLE) its file delivered,
 * which is the only size an unsized file (version 4) has, unless its
 * data is encrypted (version 5: this decoder has no keys) and was passed
 * over.
 */
#include "nsr/compat.h"

#include "nsr/asm.h"
#include "nsr/err.h"

#include "asm_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* touch_file - read every field handed out, so ASan sees bad pointers. */
static int touch_file(void *ctx, const struct nsr_asm_file *f, uint64_t off)
{
	struct asm_seen *s = ctx;

	if (f->unsized && (f->type != NSR_ASM_REG || f->size != 0))
		abort(); /* a FILE record the decoder should have refused */
	s->sum += strlen(f->path) + strlen(f->link) + strlen(f->user) +
		  strlen(f->group) + (size_t)off;
	s->data = s->clear = 0;
	s->unsized = f->unsized;
	return 0;
}

/* check_end - FILE_END's total is what the file delivered. */
static int check_end(void *ctx, const struct nsr_asm_file_end *fe)
{
	struct asm_seen *s = ctx;

	/* data encrypted under a key it was not given: none passed on */
	if (fe->nokey ? s->clear > 0 || fe->ck_ok : fe->bytes != s->data)
		abort();
	s->sum += s->unsized;
	return 0;
}

/* touch_xattr - read an attribute's name and value. */
static int touch_xattr(void *ctx, const char *name, const void *v, size_t n)
{
	struct asm_seen *s = ctx;
	const uint8_t *c = v;

	s->sum += strlen(name);
	for (size_t i = 0; i < n; i++)
		s->sum += c[i];
	return 0;
}

/* touch_dirent - read a directory entry name (NULL: an empty list). */
static int touch_dirent(void *ctx, const char *name, uint32_t index,
			uint32_t total)
{
	struct asm_seen *s = ctx;

	if (name == NULL && (index != 0 || total != 0))
		abort(); /* the decoder promised an empty list */
	if (name != NULL && (index >= total || strchr(name, '/') ||
			     strlen(name) > NSR_ASM_NAME_MAX))
		abort(); /* a name the decoder should have refused */
	s->sum += (name ? strlen(name) : 0) + index + total;
	return 0;
}

/* touch_header - read the header strings. */
static int touch_header(void *ctx, const struct nsr_asm_header *h)
{
	struct asm_seen *s = ctx;

	s->sum += strlen(h->client) + strlen(h->name);
	return 0;
}

/* LLVMFuzzerTestOneInput - fuzz entry point. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct nsr_asm_dec_ops ops = {
		touch_header, touch_file, asm_seen_data, asm_seen_hole,
		check_end, NULL, touch_xattr, NULL, touch_dirent, NULL,
	};
	struct asm_seen seen = {0, 0, 0, 0};

	asm_fuzz_decode(&ops, &seen, data, size);
	return seen.sum == 1 ? 0 : 0;
}
