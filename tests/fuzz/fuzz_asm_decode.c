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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What the callbacks saw: sum keeps the reads from being optimised
 * away; data counts the current file's bytes. */
struct seen {
	size_t sum;
	uint64_t data;
	int unsized;
};

/* touch_file - read every field handed out, so ASan sees bad pointers. */
static int touch_file(void *ctx, const struct nsr_asm_file *f, uint64_t off)
{
	struct seen *s = ctx;

	if (f->unsized && (f->type != NSR_ASM_REG || f->size != 0))
		abort(); /* a FILE record the decoder should have refused */
	s->sum += strlen(f->path) + strlen(f->link) + strlen(f->user) +
		  strlen(f->group) + (size_t)off;
	s->data = 0;
	s->unsized = f->unsized;
	return 0;
}

/* touch_data - read every data byte. */
static int touch_data(void *ctx, const void *p, size_t n)
{
	struct seen *s = ctx;
	const uint8_t *c = p;

	for (size_t i = 0; i < n; i++)
		s->sum += c[i];
	s->data += n;
	return 0;
}

/* count_hole - a hole's bytes count as the file's data. */
static int count_hole(void *ctx, uint64_t len)
{
	struct seen *s = ctx;

	s->data += len;
	return 0;
}

/* check_end - FILE_END's total is what the file delivered. */
static int check_end(void *ctx, const struct nsr_asm_file_end *fe)
{
	struct seen *s = ctx;

	/* data encrypted under a key it was not given: none passed on */
	if (fe->nokey ? s->data > fe->bytes || fe->ck_ok : fe->bytes != s->data)
		abort();
	s->sum += s->unsized;
	return 0;
}

/* touch_xattr - read an attribute's name and value. */
static int touch_xattr(void *ctx, const char *name, const void *v, size_t n)
{
	struct seen *s = ctx;
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
	struct seen *s = ctx;

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
	struct seen *s = ctx;

	s->sum += strlen(h->client) + strlen(h->name);
	return 0;
}

/* LLVMFuzzerTestOneInput - fuzz entry point. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct nsr_asm_dec_ops ops = {
		touch_header, touch_file, touch_data, count_hole, check_end,
		NULL, touch_xattr, NULL, touch_dirent, NULL,
	};
	struct nsr_asm_dec *d = NULL;
	struct seen seen = {0, 0, 0};
	size_t step;
	int rc = NSR_OK, resync;

	if (size < 1)
		return 0;
	resync = data[0] & 1;
	step = (size_t)(data[0] >> 1) + 1;
	data++;
	size--;
	if (nsr_asm_dec_new(&d, &ops, &seen) != NSR_OK)
		return 0;
	nsr_asm_dec_resync(d, resync);
	for (size_t i = 0; i < size && rc == NSR_OK; i += step)
		rc = nsr_asm_dec_feed(d, data + i, NSR_MIN(step, size - i));
	if (rc == NSR_OK)
		rc = nsr_asm_dec_finish(d);
	nsr_asm_dec_free(d);
	return seen.sum == 1 ? 0 : 0;
}
