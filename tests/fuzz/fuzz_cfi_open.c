/*
 * fuzz_cfi_open - a hostile record file committed in an index: the input
 * is the file image, named by a catalogue (the ssid of its header, its
 * whole length as the committed one), then the index is opened read-only
 * and browsed and checked through the file, not from memory (the
 * directory table loaded from disk, records read through its window).
 *
 * Checked, against nsr_cfi_decode_file on the same bytes: when that
 * accepts the image, nsr_cfi_check_level finds no problem at levels 1
 * and 6, every directory of a visited entry lists, every visited path is
 * found (at least once), and listings hold only direct children and are
 * the same built whole and in windows of 1 to 3 names; when it
 * refuses the image, level 6 reports exactly one problem.  An accepted
 * version 4 image whose table names lists in other save sets (form 2;
 * this index has no other) is one problem at level 6, none at level 1,
 * and is not browsed.  The index
 * lives under $NSR_TEST_TMPDIR (or /tmp) for the whole run and is
 * removed at exit.
 */
#include "nsr/compat.h"

#include <sys/stat.h>
#include <unistd.h>

#include "nsr/bytes.h"
#include "nsr/cfi.h"
#include "nsr/crc32c.h"
#include "nsr/err.h"
#include "nsr/fileio.h"

#include "../../src/index/cfi_int.h" /* the table: lists held elsewhere */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define KEEP 8 /* paths kept to look up again */

/* What the decoder visited: a count and the first KEEP paths. */
struct seen {
	uint64_t n;
	char *path[KEEP];
	size_t np;
};

/* keep - note a visited entry. */
static int keep(void *ctx, const struct nsr_cfi_saveset *ss,
		const struct nsr_cfi_entry *e)
{
	struct seen *s = ctx;

	(void)ss;
	s->n++;
	if (s->np < KEEP) {
		s->path[s->np] = strdup(e->path);
		if (s->path[s->np] == NULL)
			abort();
		s->np++;
	}
	return 0;
}

static char dir[PATH_MAX]; /* the scratch root */

/* remove_root - at exit: the scratch index (its one record file is
 * removed after each input). */
static void remove_root(void)
{
	char p[PATH_MAX + 32];

	snprintf(p, sizeof(p), "%s/index/fz/catalog", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/index/fz", dir);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/index", dir);
	rmdir(p);
	rmdir(dir);
}

/* root_dir - the scratch root, made once. */
static const char *root_dir(void)
{
	const char *base;

	if (dir[0] != '\0')
		return dir;
	base = getenv("NSR_TEST_TMPDIR");
	if (base == NULL || *base == '\0' ||
	    nsr_mkdir_p(base, 0755) != NSR_OK)
		base = "/tmp";
	snprintf(dir, sizeof(dir), "%s/fuzzcfiopen.XXXXXX", base);
	if (mkdtemp(dir) == NULL)
		abort();
	atexit(remove_root);
	return dir;
}

/* commit_image - write the image as ss-<ssid>.rec of client "fz" and a
 * catalogue naming it with n entries. */
static void commit_image(const char *root, const uint8_t *p, size_t size,
			 uint64_t ssid, uint64_t n)
{
	uint8_t cat[12 + 34 + 1 + 4];
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/index/fz", root);
	if (nsr_mkdir_p(path, 0700) != NSR_OK)
		abort();
	snprintf(path, sizeof(path), "%s/index/fz/ss-%" PRIu64 ".rec", root,
		 ssid);
	if (nsr_file_replace(path, p, size, 0600) != NSR_OK)
		abort();
	nsr_put_u32(cat, 0x4E434154u); /* nsr_index(5) catalogue */
	nsr_put_u16(cat + 4, 1);
	nsr_put_u16(cat + 6, 0);
	nsr_put_u32(cat + 8, 1);
	nsr_put_u64(cat + 12, ssid);
	nsr_put_u64(cat + 20, (uint64_t)nsr_get_u64(p + 16));
	nsr_put_u64(cat + 28, n);
	nsr_put_u64(cat + 36, size);
	nsr_put_u16(cat + 44, 1);
	cat[46] = '/';
	nsr_put_u32(cat + 47, nsr_crc32c(0, cat, 47));
	snprintf(path, sizeof(path), "%s/index/fz/catalog", root);
	if (nsr_file_replace(path, cat, sizeof(cat), 0600) != NSR_OK)
		abort();
}

/* struct child - a listing's directory, for only_children. */
struct child {
	const char *dir;
	size_t n;
	uint32_t crc; /* of the listed paths in order, with their NULs */
};

/* only_children - a listed entry is a direct child of the directory. */
static int only_children(void *ctx, const struct nsr_cfi_saveset *ss,
			 const struct nsr_cfi_entry *e)
{
	struct child *c = ctx;
	size_t n = strlen(c->dir);
	const char *rest;

	(void)ss;
	if (strcmp(c->dir, "/") == 0)
		rest = e->path[0] == '/' ? e->path + 1 : NULL;
	else
		rest = strncmp(e->path, c->dir, n) == 0 && e->path[n] == '/'
			       ? e->path + n + 1 : NULL;
	if (rest == NULL || *rest == '\0' || strchr(rest, '/') != NULL)
		abort();
	c->n++;
	c->crc = nsr_crc32c(c->crc, e->path, strlen(e->path) + 1);
	c->crc = nsr_crc32c(c->crc, &ss->ssid, sizeof(ss->ssid));
	return 0;
}

/* count - count visited entries. */
static int count(void *ctx, const struct nsr_cfi_saveset *ss,
		 const struct nsr_cfi_entry *e)
{
	(void)ss;
	(void)e;
	(*(size_t *)ctx)++;
	return 0;
}

/* browse - list the parent of every kept path and find the path. */
static void browse(struct nsr_cfi *c, const struct seen *s)
{
	for (size_t i = 0; i < s->np; i++) {
		char *dir = strdup(s->path[i]), *slash;
		struct child ch = {0};
		size_t found = 0;
		size_t len = strlen(s->path[i]);

		if (dir == NULL)
			abort();
		slash = strrchr(dir, '/');
		if (slash != NULL && slash != dir && slash[1] != '\0') {
			*slash = '\0';
			ch.dir = dir;
		} else if (slash == dir && dir[1] != '\0') {
			ch.dir = "/";
		}
		if (ch.dir != NULL) {
			/* whole, then in windows of 1 to 3 names (another
			 * time, so not from the kept window): the same */
			struct child w = {.dir = ch.dir};

			nsr_cfi_set_list_window(NSR_CFI_LIST_WINDOW);
			if (nsr_cfi_list_dir(c, ch.dir, INT64_MAX,
					     only_children, &ch) != NSR_OK)
				abort();
			nsr_cfi_set_list_window(1 + i % 3);
			if (nsr_cfi_list_dir(c, ch.dir, INT64_MAX - 1,
					     only_children, &w) != NSR_OK ||
			    w.n != ch.n || w.crc != ch.crc)
				abort();
		}
		/* find trims trailing slashes: such a path is not found */
		if (len > 1 && s->path[i][len - 1] != '/' &&
		    (nsr_cfi_find(c, s->path[i], INT64_MAX, count,
				  &found) != NSR_OK ||
		     found == 0))
			abort();
		free(dir);
	}
}

/* names_others - does the (accepted) image's table name a list in
 * another save set? */
static int names_others(const uint8_t *p, size_t n)
{
	struct cfi_tab *t = NULL;
	uint64_t toff;
	uint32_t tlen, tcrc;
	uint8_t *blob;
	int others = 0;

	if (nsr_get_u16(p + 4) < 4 ||
	    cfi_foot_get(p + n - CFI_FOOT_LEN, n, &toff, &tlen, &tcrc) ||
	    (blob = malloc(tlen ? tlen : 1)) == NULL)
		return 0;
	memcpy(blob, p + toff, tlen);
	if (cfi_tab_parse(blob, tlen, toff, 4, &t) != NSR_OK)
		abort(); /* nsr_cfi_decode_file accepted it */
	others = t->nrefs > 0;
	cfi_tab_free(t);
	return others;
}

/* LLVMFuzzerTestOneInput - fuzz entry point. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *root = root_dir();
	struct seen s = {0};
	struct nsr_cfi *c = NULL;
	size_t problems = 0;
	char path[PATH_MAX + 64];
	uint64_t ssid;
	int ok, others;

	if (size < 28)
		return 0;
	ssid = nsr_get_u64(data + 8);
	ok = nsr_cfi_decode_file(data, size, keep, &s) == NSR_OK;
	others = ok && names_others(data, size);
	commit_image(root, data, size, ssid, s.n);
	if (nsr_cfi_open(&c, root, "fz", NSR_CFI_RDONLY) != NSR_OK)
		abort();
	if (nsr_cfi_check_level(c, 6, NULL, NULL, &problems) != NSR_OK ||
	    problems != (ok && !others ? 0u : 1u))
		abort();
	if (ok) {
		if (nsr_cfi_check_level(c, 1, NULL, NULL, &problems) !=
			    NSR_OK ||
		    problems != 0)
			abort();
		if (!others)
			browse(c, &s);
	}
	nsr_cfi_close(c);
	for (size_t i = 0; i < s.np; i++)
		free(s.path[i]);
	snprintf(path, sizeof(path), "%s/index/fz/ss-%" PRIu64 ".rec", root,
		 ssid);
	unlink(path); /* the next input has its own ssid */
	return 0;
}
