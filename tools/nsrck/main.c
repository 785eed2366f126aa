/*
 * nsrck - check client file indexes on the server (nsr_cfi_check_level).
 *
 *   nsrck [-q] [-L level] [-R root] [client ...]
 *
 * Reads the indexes without their lock (as browsing does: only whole
 * catalogues are seen), so it may run while nsrindexd does.
 * Exit status: 0 every index checked is healthy, 1 a problem was found
 * (each one on stdout), 2 usage, 3 an index could not be checked at all
 * (the message says why).
 */
#include "nsr/compat.h"

#include <getopt.h>

#include "nsr/cfi.h"
#include "nsr/err.h"

struct run {
	const char *root;
	int level, quiet;
	size_t problems;
	int failed;
};

/* usage - print --help text. */
static void usage(FILE *f)
{
	fprintf(f,
		"usage: nsrck [-q] [-L level] [-R root] [client ...]\n"
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
	while ((opt = getopt_long(argc, argv, "qL:R:h", lo, NULL)) != -1) {
		switch (opt) {
		case 'q':
			r.quiet = 1;
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
	if (optind < argc) {
		for (int i = optind; i < argc; i++)
			check_client(&r, argv[i]);
	} else {
		rc = nsr_cfi_clients(r.root, check_client, &r);
		if (rc != NSR_OK) {
			fprintf(stderr, "nsrck: %s/index: %s (is -R the "
					"server root?)\n", r.root,
				nsr_strerror(rc));
			return 3;
		}
	}
	if (r.failed)
		return 3;
	return r.problems > 0 ? 1 : 0;
}
