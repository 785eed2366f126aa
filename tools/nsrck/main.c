/*
 * nsrck - check client file indexes on the server (nsr_cfi_check_level),
 * and with -X repair them.
 *
 *   nsrck [-qmX] [-s server] [-L level] [-R root] [client ...]
 *
 * Reads the indexes without their lock (as browsing does: only whole
 * catalogues are seen), so it may run while nsrindexd does.  -X (which
 * implies -m) has nsrindexd remove the save sets that are not
 * browsable save sets of the client in the media database; a save set
 * browsable there but missing from the index is named with the scanner
 * command that adds it back.  A damaged record is reported, not
 * repaired (nsrck(8) BUGS).  Exit status: 0 every index checked is
 * healthy (or was repaired), 1 a problem was found and remains (each one
 * on stdout), 2 usage, 3 an index could not be checked or repaired at
 * all (the message says why).
 */
#include "nsr/compat.h"

#include <getopt.h>

#include "nsr/buf.h"
#include "nsr/cfi.h"
#include "nsr/err.h"
#include "nsr/index_clnt.h"
#include "nsr/mmdb_clnt.h"

#include "nsrck.h"

struct run {
	const char *root, *server;
	int level, quiet, mm, fix;
	struct mmdb_clnt *m; /* -m: the media database */
	struct nsr_ixclnt *ix; /* -X: nsrindexd */
	size_t problems;
	int failed;
};

/* What one client's check found that -X removes. */
struct found {
	struct run *r;
	const char *client;
	uint64_t *mm;		/* the media database's browsable ids */
	size_t nmm;
	int crossing;		/* comparing with them (cross) */
	uint64_t *rm;		/* save sets to remove */
	size_t nrm, cap;
};

/* usage - print --help text. */
static void usage(FILE *f)
{
	fprintf(f,
		"usage: nsrck [-qmX] [-s server] [-L level] [-R root] "
		"[client ...]\n"
		"  Check the client file index of each client (default: "
		"every client\n"
		"  with an index under ROOT/index).\n"
		"  -L level  1: each save set's record file is there, whole, "
		"with a right\n"
		"            header and directory table (fast); 2 to 6 "
		"(default 6): every\n"
		"            record read and checked against the catalogue "
		"and the table;\n"
		"            7 (rebuild from volumes) is not done here: use "
		"scanner -i\n"
		"  -R root   server root (default $NSR_ROOT, else %s)\n"
		"  -m        also compare with the media database: save sets "
		"in the index\n"
		"            and not browsable there, and the reverse\n"
		"  -X        repair: -m, and have nsrindexd remove the save "
		"sets that are\n"
		"            not browsable in the media database\n"
		"  -s server the server for -m and -X (default: this host)\n"
		"  -q        print problems only, no summary line per client\n"
		"Exit status: 0 healthy (or repaired), 1 problems found "
		"(and left), 2 usage,\n"
		"3 an index could not be checked or repaired.\n",
		NSR_DEFAULT_ROOT);
}

/* by_id - order of ids. */
static int by_id(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* problem - print one problem of a client's index.  With -X, during
 * the comparison with the media database (f->crossing): a save set the
 * index lacks gets the command that adds it back, one the media
 * database does not hold browsable is remembered for removal. */
static void problem(void *ctx, uint64_t ssid, const char *what)
{
	struct found *f = ctx;

	printf("%s: save set %" PRIu64 ": %s\n", f->client, ssid, what);
	if (!f->r->fix || !f->crossing || ssid == 0)
		return;
	if (f->nmm && bsearch(&ssid, f->mm, f->nmm, sizeof(*f->mm), by_id)) {
		printf("%s: save set %" PRIu64 ": scanner -i -S %" PRIu64
		       " DEVICE (the device of its volume) adds its entries "
		       "back\n", f->client, ssid, ssid);
		return;
	}
	if (f->nrm == f->cap) { /* repeats go in repair() */
		size_t cap = f->cap ? f->cap * 2 : 16;
		uint64_t *v = realloc(f->rm, cap * sizeof(*v));

		if (!v)
			return; /* not removed: still counted as a problem */
		f->rm = v;
		f->cap = cap;
	}
	f->rm[f->nrm++] = ssid;
}

/* repair - -X: have nsrindexd remove the save sets found (sorted, each
 * once), in one request per IX_DELETE_MAX of them; the number removed
 * (or gone meanwhile), or -1 (said why, r->failed) if nsrindexd would
 * not remove them all. */
static long repair(struct run *r, struct found *f)
{
	size_t n = 0, done = 0;
	int rc;

	if (f->nrm > 1)
		qsort(f->rm, f->nrm, sizeof(*f->rm), by_id);
	for (size_t i = 0; i < f->nrm; i++)
		if (n == 0 || f->rm[i] != f->rm[n - 1])
			f->rm[n++] = f->rm[i];
	rc = nsr_ixclnt_delete_many(r->ix, f->client, f->rm, n, &done, NULL);
	for (size_t i = 0; i < done; i++)
		printf("%s: save set %" PRIu64 ": removed from the index\n",
		       f->client, f->rm[i]);
	if (rc != NSR_OK) {
		fprintf(stderr, "nsrck: %s: cannot remove save set %" PRIu64
			" from the index: %s\n", f->client, f->rm[done],
			nsr_ixclnt_errmsg(r->ix));
		r->failed = 1;
		return -1;
	}
	return (long)done;
}

/* cross - -m: compare the index of client with the media database; adds
 * to *n; -1 (said why, r->failed) if the media database could not be
 * asked. */
static int cross(struct run *r, struct nsr_cfi *c, struct found *f,
		 size_t *n)
{
	const char *client = f->client;
	uint64_t *ids = NULL;
	size_t nid = 0, more = 0;
	char err[256] = "";
	int rc = nsrck_mm_ids(r->m, client, &ids, &nid, err, sizeof(err));

	f->mm = ids; /* the caller frees them (problem() uses them) */
	f->nmm = nid;
	f->crossing = 1;
	if (rc == NSR_OK)
		rc = nsr_cfi_crosscheck(c, ids, nid, problem, f, &more);
	f->crossing = 0;
	if (rc != NSR_OK) {
		fprintf(stderr, "nsrck: %s: cannot compare with the media "
				"database: %s%s%s\n", client, nsr_strerror(rc),
			err[0] ? ": " : "", err);
		r->failed = 1;
		return -1;
	}
	*n += more;
	return 0;
}

/* check_client - check one client's index; prints and counts. */
static int check_client(void *vctx, const char *client)
{
	struct run *r = vctx;
	struct found f = {.r = r, .client = client};
	struct nsr_cfi *c = NULL;
	size_t n = 0;
	long fixed = 0;
	int rc = nsr_cfi_open(&c, r->root, client, NSR_CFI_RDONLY);

	if (rc == NSR_OK)
		rc = nsr_cfi_check_level(c, r->level, problem, &f, &n);
	if (rc == NSR_OK && r->m != NULL && cross(r, c, &f, &n) != 0) {
		nsr_cfi_close(c);
		free(f.rm);
		free(f.mm);
		return 0;
	}
	nsr_cfi_close(c);
	if (rc == NSR_OK && r->fix)
		fixed = repair(r, &f);
	free(f.rm);
	free(f.mm);
	if (fixed < 0)
		return 0;
	if (rc != NSR_OK) {
		fprintf(stderr, "nsrck: %s: cannot check the index: %s%s\n",
			client, nsr_strerror(rc),
			rc == NSR_ERR_NOTFOUND ? " (no index for this client)"
			: rc == NSR_ERR_CORRUPT || rc == NSR_ERR_CHECKSUM
				? " (the catalogue is damaged)"
				: "");
		r->failed = 1;
		return 0;
	}
	r->problems += n - (size_t)fixed;
	if (!r->quiet && r->fix)
		printf("%s: level %d: %zu problem%s, %ld repaired\n", client,
		       r->level, n, n == 1 ? "" : "s", fixed);
	else if (!r->quiet)
		printf("%s: level %d: %zu problem%s\n", client, r->level, n,
		       n == 1 ? "" : "s");
	return 0;
}

/* main - parse options, check each client, exit status. */
int main(int argc, char **argv)
{
	static const struct option lo[] = {{"help", no_argument, NULL, 'h'},
					   {NULL, 0, NULL, 0}};
	const char *env = getenv("NSR_ROOT");
	struct run r = {.level = 6};
	char *end;
	int opt, rc;

	r.root = env && *env ? env : NSR_DEFAULT_ROOT;
	while ((opt = getopt_long(argc, argv, "qmXs:L:R:h", lo, NULL)) != -1) {
		switch (opt) {
		case 'q':
			r.quiet = 1;
			break;
		case 'm':
			r.mm = 1;
			break;
		case 'X':
			r.fix = r.mm = 1;
			break;
		case 's':
			r.server = optarg;
			break;
		case 'L':
			r.level = (int)strtol(optarg, &end, 10);
			if (*end != '\0' || r.level < 1 || r.level > 7) {
				fprintf(stderr, "nsrck: -L %s: the level is "
						"1 to 7\n", optarg);
				return 2;
			}
			break;
		case 'R':
			r.root = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (r.level == 7) {
		fprintf(stderr, "nsrck: -L 7 (rebuild an index from volumes) "
				"is not done by nsrck: run scanner -i on the "
				"volumes of the save sets\n");
		return 2;
	}
	if (r.mm) {
		struct nsr_buf err;

		nsr_buf_init(&err, 0);
		rc = mmdb_clnt_open(r.server, &r.m, &err);
		if (rc != NSR_OK) {
			fprintf(stderr, "nsrck: -m: %s\n",
				err.len ? err.data : nsr_strerror(rc));
			nsr_buf_release(&err);
			return 3;
		}
		if (r.fix && (rc = nsr_ixclnt_open(r.server, &r.ix, &err)) !=
				     NSR_OK) {
			fprintf(stderr, "nsrck: -X: %s\n",
				err.len ? err.data : nsr_strerror(rc));
			nsr_buf_release(&err);
			mmdb_clnt_close(r.m);
			return 3;
		}
		nsr_buf_release(&err);
	}
	if (optind < argc) {
		for (int i = optind; i < argc; i++)
			check_client(&r, argv[i]);
	} else {
		rc = nsr_cfi_clients(r.root, check_client, &r);
		if (rc != NSR_OK) {
			fprintf(stderr, "nsrck: %s/index: %s (is -R the "
					"server root?)\n", r.root,
				nsr_strerror(rc));
			nsr_ixclnt_close(r.ix);
			mmdb_clnt_close(r.m);
			return 3;
		}
	}
	nsr_ixclnt_close(r.ix);
	mmdb_clnt_close(r.m);
	if (r.failed)
		return 3;
	return r.problems > 0 ? 1 : 0;
}
