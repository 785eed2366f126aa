/*
 * nsrck - check client file indexes on the server (nsr_cfi_check_level).
 *
 *   nsrck [-qm] [-s server] [-L level] [-R root] [client ...]
 *
 * Reads the indexes without their lock (as browsing does: only whole
 * catalogues are seen), so it may run while nsrindexd does.
 * Exit status: 0 every index checked is healthy, 1 a problem was found
 * (each one on stdout), 2 usage, 3 an index could not be checked at all
 * (the message says why).
 */
#include "nsr/compat.h"

#include <getopt.h>

#include "nsr/buf.h"
#include "nsr/cfi.h"
#include "nsr/err.h"
#include "nsr/mmdb_clnt.h"

#include "nsrck.h"

struct run {
	const char *root, *server;
	int level, quiet, mm;
	struct mmdb_clnt *m; /* -m: the media database */
	size_t problems;
	int failed;
};

/* usage - print --help text. */
static void usage(FILE *f)
{
	fprintf(f,
		"usage: nsrck [-qm] [-s server] [-L level] [-R root] "
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
		"  -s server the media database's server for -m (default: "
		"this host)\n"
		"  -q        print problems only, no summary line per client\n"
		"Exit status: 0 healthy, 1 problems found, 2 usage, 3 an "
		"index could not\n"
		"be checked.\n",
		NSR_DEFAULT_ROOT);
}

/* problem - print one problem of a client's index. */
static void problem(void *ctx, uint64_t ssid, const char *what)
{
	printf("%s: save set %" PRIu64 ": %s\n", (const char *)ctx, ssid,
	       what);
}

/* cross - -m: compare the index of client with the media database; adds
 * to *n; -1 (said why, r->failed) if the media database could not be
 * asked. */
static int cross(struct run *r, struct nsr_cfi *c, const char *client,
		 size_t *n)
{
	uint64_t *ids = NULL;
	size_t nid = 0, more = 0;
	char err[256] = "";
	int rc = nsrck_mm_ids(r->m, client, &ids, &nid, err, sizeof(err));

	if (rc == NSR_OK)
		rc = nsr_cfi_crosscheck(c, ids, nid, problem, (void *)client,
					&more);
	free(ids);
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
	struct nsr_cfi *c = NULL;
	size_t n = 0;
	int rc = nsr_cfi_open(&c, r->root, client, NSR_CFI_RDONLY);

	if (rc == NSR_OK)
		rc = nsr_cfi_check_level(c, r->level, problem, (void *)client,
					 &n);
	if (rc == NSR_OK && r->m != NULL && cross(r, c, client, &n) != 0) {
		nsr_cfi_close(c);
		return 0;
	}
	nsr_cfi_close(c);
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
	r->problems += n;
	if (!r->quiet)
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
	while ((opt = getopt_long(argc, argv, "qms:L:R:h", lo, NULL)) != -1) {
		switch (opt) {
		case 'q':
			r.quiet = 1;
			break;
		case 'm':
			r.mm = 1;
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
			mmdb_clnt_close(r.m);
			return 3;
		}
	}
	mmdb_clnt_close(r.m);
	if (r.failed)
		return 3;
	return r.problems > 0 ? 1 : 0;
}
