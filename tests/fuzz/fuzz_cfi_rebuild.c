/*
 * fuzz_cfi_rebuild.c - rebuilding a client file index from a save stream
 * read off a volume (scanner -i: src/index/cfi_rebuild.c) on hostile
 * streams.  Byte 0: bit 0 resync (index the intact files of a damaged
 * stream), bit 1 take the ssid from the stream header (else 7), bits 2..7
 * the piece size the stream is fed in (1 + 16 * value); the rest is the
 * stream.
 *
 * Checked, against the save stream decoder run separately on the same
 * bytes: a save set is in the catalogue exactly when the rebuild says so
 * (finish NSR_OK, or NSR_ERR_CORRUPT with resync after a header); then its
 * entries are the decoder's file records, path and stream offset, in
 * order, and nsr_cfi_check finds no problem.  A failed rebuild leaves no
 * save set behind.  The index lives under $NSR_TEST_TMPDIR (or /tmp) for
 * the whole run; each input's save set is deleted after it.
 */
#include "nsr/compat.h"

#include <ftw.h>
#include <sys/stat.h>

#include "nsr/asm.h"
#include "nsr/cfi.h"
#include "nsr/err.h"
#include "nsr/fileio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FIXED_SSID 7

/* What the stream decoder saw: the header's ssid and every file record. */
struct seen {
	uint64_t ssid;
	int header;
	size_t n, cap;
	char **path;
	uint64_t *off;
	size_t at; /* nsr_cfi_entries walk position */
	int bad;   /* an entry differed */
};

/* seen_header - remember the stream's ssid. */
static int seen_header(void *ctx, const struct nsr_asm_header *h)
{
	struct seen *s = ctx;

	s->header = 1;
	s->ssid = h->ssid;
	return 0;
}

/* seen_file - remember a file record's path and offset. */
static int seen_file(void *ctx, const struct nsr_asm_file *f, uint64_t off)
{
	struct seen *s = ctx;

	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 16;
		s->path = realloc(s->path, s->cap * sizeof(*s->path));
		s->off = realloc(s->off, s->cap * sizeof(*s->off));
		if (!s->path || !s->off)
			abort();
	}
	s->path[s->n] = strdup(f->path);
	if (s->path[s->n] == NULL)
		abort();
	s->off[s->n++] = off;
	return 0;
}

/* seen_free - release the copies. */
static void seen_free(struct seen *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->path[i]);
	free(s->path);
	free(s->off);
}

/* match_entry - nsr_cfi_entries visitor: the next file the decoder saw. */
static int match_entry(void *ctx, const struct nsr_cfi_saveset *ss,
		       const struct nsr_cfi_entry *e)
{
	struct seen *s = ctx;

	NSR_UNUSED(ss);
	if (s->at >= s->n || strcmp(s->path[s->at], e->path) != 0 ||
	    s->off[s->at] != e->offset)
		s->bad = 1;
	s->at++;
	return 0;
}

/* problem - nsr_cfi_check found something: that is a failure here. */
static void problem(void *ctx, uint64_t ssid, const char *what)
{
	NSR_UNUSED(ctx);
	fprintf(stderr, "cfi_check: ssid %llu: %s\n", (unsigned long long)ssid,
		what);
}

/* the_index - the scratch index, opened once. */
static struct nsr_cfi *the_index(void)
{
	static struct nsr_cfi *c;
	static char dir[PATH_MAX];
	const char *base;

	if (c)
		return c;
	base = getenv("NSR_TEST_TMPDIR");
	if (base == NULL || *base == '\0' ||
	    nsr_mkdir_p(base, 0755) != NSR_OK)
		base = "/tmp";
	snprintf(dir, sizeof(dir), "%s/fuzzcfirb.XXXXXX", base);
	if (mkdtemp(dir) == NULL ||
	    nsr_cfi_open(&c, dir, "fuzz", NSR_CFI_CREATE) != NSR_OK)
		abort();
	return c;
}

/* decode_alone - the stream decoder by itself on the whole input. */
static void decode_alone(const uint8_t *p, size_t n, int resync,
			 struct seen *s)
{
	static const struct nsr_asm_dec_ops ops = {
		seen_header, seen_file, NULL, NULL, NULL, NULL, NULL, NULL,
		NULL, NULL,
	};
	struct nsr_asm_dec *d = NULL;

	if (nsr_asm_dec_new(&d, &ops, s) != NSR_OK)
		abort();
	nsr_asm_dec_resync(d, resync);
	/* finish too: after damage, resync queues what follows and may hand
	 * out the rest of the files only there */
	if (nsr_asm_dec_feed(d, p, n) == NSR_OK)
		(void)nsr_asm_dec_finish(d);
	nsr_asm_dec_free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nsr_cfi *c = the_index();
	struct nsr_cfi_rebuild *rb = NULL;
	struct seen s;
	uint64_t ssid, want;
	size_t step, problems = 0;
	int resync, rc = NSR_OK, finished = 0, committed, entries_rc;

	if (size < 1 || size > (4u << 20))
		return 0;
	resync = data[0] & 1;
	want = (data[0] & 2) ? 0 : FIXED_SSID;
	step = (size_t)(data[0] >> 2) * 16 + 1;
	data++;
	size--;

	if (nsr_cfi_rebuild_new(&rb, c, want) != NSR_OK)
		abort();
	nsr_cfi_rebuild_resync(rb, resync);
	for (size_t i = 0; i < size && rc == NSR_OK; i += step)
		rc = nsr_cfi_rebuild_feed(rb, data + i,
					  NSR_MIN(step, size - i));
	if (rc == NSR_OK) {
		rc = nsr_cfi_rebuild_finish(rb);
		finished = 1;
	}
	nsr_cfi_rebuild_free(rb);

	memset(&s, 0, sizeof(s));
	decode_alone(data, size, resync, &s);
	ssid = want ? want : s.ssid;
	/* finish says NSR_ERR_CORRUPT after committing a damaged stream's
	 * intact files (resync, header seen); any other failure commits
	 * nothing */
	committed = finished &&
		    (rc == NSR_OK || (rc == NSR_ERR_CORRUPT && resync &&
				      s.header && ssid != 0));
	if (ssid == 0) {
		if (rc == NSR_OK)
			abort(); /* committed a save set without an ssid */
		seen_free(&s);
		return 0;
	}
	entries_rc = nsr_cfi_entries(c, ssid, match_entry, &s);
	if (committed && (entries_rc != NSR_OK || s.bad || s.at != s.n))
		abort();
	if (!committed && entries_rc != NSR_ERR_NOTFOUND)
		abort(); /* a failed rebuild left a save set */
	if (nsr_cfi_check(c, problem, NULL, &problems) != NSR_OK ||
	    problems != 0)
		abort();
	if (committed && nsr_cfi_delete(c, ssid) != NSR_OK)
		abort();
	seen_free(&s);
	return 0;
}
