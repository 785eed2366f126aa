/*
 * asmdump - print what a save stream (nsr_savestream(5)) on stdin holds,
 * for the system tests: one line "TYPE PATH" per object, and after a
 * directory that carries an entry list, "list PATH: NAME NAME ...".
 * Exit 0 when the stream decoded whole, 1 otherwise.  Not installed.
 */
#include "nsr/compat.h"

#include <unistd.h>

#include "nsr/asm.h"
#include "nsr/buf.h"
#include "nsr/err.h"

struct dump {
	char path[NSR_ASM_PATH_MAX + 1];
	struct nsr_buf list;
};

/* on_file - "TYPE PATH". */
static int on_file(void *ctx, const struct nsr_asm_file *f, uint64_t off)
{
	struct dump *d = ctx;

	NSR_UNUSED(off);
	snprintf(d->path, sizeof(d->path), "%s", f->path);
	printf("%s %s\n", nsr_asm_ftype_name(f->type), f->path);
	return 0;
}

/* on_dirent - collect the list; print it with its last name. */
static int on_dirent(void *ctx, const char *name, uint32_t index,
		     uint32_t total)
{
	struct dump *d = ctx;

	if (index == 0)
		nsr_buf_reset(&d->list);
	if (name)
		nsr_buf_addf(&d->list, " %s", name);
	if (name == NULL || index + 1 == total)
		printf("list %s:%s\n", d->path, d->list.data);
	return 0;
}

/* main - decode stdin. */
int main(void)
{
	static const struct nsr_asm_dec_ops ops = {
		.file = on_file,
		.dirent = on_dirent,
	};
	struct nsr_asm_dec *dec = NULL;
	struct dump d;
	char buf[65536];
	ssize_t n;
	int rc;

	memset(&d, 0, sizeof(d));
	nsr_buf_init(&d.list, 0);
	rc = nsr_asm_dec_new(&dec, &ops, &d);
	while (rc == NSR_OK && (n = read(0, buf, sizeof(buf))) > 0)
		rc = nsr_asm_dec_feed(dec, buf, (size_t)n);
	if (rc == NSR_OK)
		rc = nsr_asm_dec_finish(dec);
	if (rc != NSR_OK)
		fprintf(stderr, "asmdump: %s\n", nsr_strerror(rc));
	nsr_asm_dec_free(dec);
	nsr_buf_release(&d.list);
	return rc == NSR_OK ? 0 : 1;
}
