/*
 * cfi_rebuild.c - index a save set from its save stream (scanner -i):
 * the stream is decoded incrementally and each file record becomes an
 * entry with its stream offset, each directory's entry list (DIRENTS)
 * a list; the save set is committed only if the whole stream decoded.
 */
#include "nsr/compat.h"

#include "nsr/asm.h"
#include "nsr/err.h"

#include "cfi_int.h"

#define BATCH 512
#define LIST_PIECE 4096 /* names of a directory list added at once */

struct nsr_cfi_rebuild {
	struct nsr_cfi *cfi;
	struct nsr_asm_dec *dec;
	uint64_t ssid;
	int begun;
	int resync;
	struct nsr_cfi_entry batch[BATCH];
	char *paths[BATCH];
	size_t n;
	char *dir;		 /* the last directory: DIRENTS follow it */
	char *names[LIST_PIECE]; /* its list's names not added yet */
	size_t nnames;
	uint32_t first;		 /* index of names[0] in the list */
};

/* clear_names - free the collected names of a list piece. */
static void clear_names(struct nsr_cfi_rebuild *rb)
{
	for (size_t i = 0; i < rb->nnames; i++)
		free(rb->names[i]);
	rb->nnames = 0;
}

/* flush_batch - add the collected entries. */
static int flush_batch(struct nsr_cfi_rebuild *rb)
{
	int rc = NSR_OK;

	if (rb->n > 0)
		rc = nsr_cfi_add(rb->cfi, rb->ssid, rb->batch, rb->n);
	for (size_t i = 0; i < rb->n; i++)
		free(rb->paths[i]);
	rb->n = 0;
	return rc;
}

/* on_header - start the save set (replacing a committed one). */
static int on_header(void *ctx, const struct nsr_asm_header *h)
{
	struct nsr_cfi_rebuild *rb = ctx;
	int rc;

	if (rb->ssid == 0)
		rb->ssid = h->ssid;
	if (rb->ssid == 0)
		return NSR_ERR_INVAL;
	rc = nsr_cfi_delete(rb->cfi, rb->ssid);
	if (rc != NSR_OK && rc != NSR_ERR_NOTFOUND)
		return rc;
	rc = nsr_cfi_begin(rb->cfi, rb->ssid, h->savetime, h->name);
	if (rc == NSR_OK)
		rb->begun = 1;
	return rc;
}

/* on_file - one entry per file record. */
static int on_file(void *ctx, const struct nsr_asm_file *f, uint64_t off)
{
	struct nsr_cfi_rebuild *rb = ctx;

	clear_names(rb);
	free(rb->dir);
	rb->dir = NULL;
	if (f->type == NSR_ASM_DIR) {
		rb->dir = strdup(f->path);
		if (rb->dir == NULL)
			return NSR_ERR_NOMEM;
	}
	if (!nsr_cfi_entry_from_file(&rb->batch[rb->n], f, off))
		return 0; /* a part of a split file: its head is the entry */
	rb->paths[rb->n] = strdup(f->path);
	if (rb->paths[rb->n] == NULL)
		return NSR_ERR_NOMEM;
	rb->batch[rb->n].path = rb->paths[rb->n];
	rb->n++;
	return rb->n == BATCH ? flush_batch(rb) : 0;
}

/* on_dirent - a name of the last directory's list, added in pieces
 * (the decoder checked the order and the count). */
static int on_dirent(void *ctx, const char *name, uint32_t index,
		     uint32_t total)
{
	struct nsr_cfi_rebuild *rb = ctx;
	int rc;

	if (rb->dir == NULL)
		return NSR_ERR_CORRUPT;
	if (name == NULL) /* an empty directory */
		return nsr_cfi_add_list(rb->cfi, rb->ssid, rb->dir, 0, 0,
					NULL, 0);
	if (rb->nnames == 0)
		rb->first = index;
	rb->names[rb->nnames] = strdup(name);
	if (rb->names[rb->nnames] == NULL)
		return NSR_ERR_NOMEM;
	rb->nnames++;
	if (rb->nnames < LIST_PIECE && index + 1 < total)
		return 0;
	rc = nsr_cfi_add_list(rb->cfi, rb->ssid, rb->dir, total, rb->first,
			      (const char *const *)rb->names, rb->nnames);
	clear_names(rb);
	return rc;
}

/* nsr_cfi_rebuild_new - start indexing a save stream. */
int nsr_cfi_rebuild_new(struct nsr_cfi_rebuild **out, struct nsr_cfi *c,
			uint64_t ssid)
{
	static const struct nsr_asm_dec_ops ops = {
		.header = on_header,
		.file = on_file,
		.dirent = on_dirent,
	};
	struct nsr_cfi_rebuild *rb;
	int rc;

	*out = NULL;
	rb = calloc(1, sizeof(*rb));
	if (rb == NULL)
		return NSR_ERR_NOMEM;
	rb->cfi = c;
	rb->ssid = ssid;
	rc = nsr_asm_dec_new(&rb->dec, &ops, rb);
	if (rc) {
		free(rb);
		return rc;
	}
	*out = rb;
	return NSR_OK;
}

/* nsr_cfi_rebuild_feed - consume the next piece of the stream. */
int nsr_cfi_rebuild_feed(struct nsr_cfi_rebuild *rb, const void *p, size_t n)
{
	return nsr_asm_dec_feed(rb->dec, p, n);
}

/* nsr_cfi_rebuild_finish - commit the save set if the stream was whole. */
int nsr_cfi_rebuild_finish(struct nsr_cfi_rebuild *rb)
{
	int rc = nsr_asm_dec_finish(rb->dec), damaged = 0;

	/* a damaged stream read to its end: keep what was intact */
	if (rc == NSR_ERR_CORRUPT && rb->resync && rb->begun) {
		damaged = 1;
		rc = NSR_OK;
	}
	if (rc == NSR_OK)
		rc = flush_batch(rb);
	if (rc == NSR_OK)
		rc = nsr_cfi_commit(rb->cfi, rb->ssid);
	if (rc == NSR_OK)
		rb->begun = 0;
	if (rc == NSR_OK && damaged)
		rc = NSR_ERR_CORRUPT;
	return rc;
}

/* nsr_cfi_rebuild_resync - index the intact part of damaged streams. */
void nsr_cfi_rebuild_resync(struct nsr_cfi_rebuild *rb, int on)
{
	rb->resync = on;
	nsr_asm_dec_resync(rb->dec, on);
}

/* nsr_cfi_rebuild_free - free, aborting an unfinished rebuild. */
void nsr_cfi_rebuild_free(struct nsr_cfi_rebuild *rb)
{
	if (rb == NULL)
		return;
	for (size_t i = 0; i < rb->n; i++)
		free(rb->paths[i]);
	clear_names(rb);
	free(rb->dir);
	if (rb->begun)
		nsr_cfi_abort(rb->cfi, rb->ssid);
	nsr_asm_dec_free(rb->dec);
	free(rb);
}
