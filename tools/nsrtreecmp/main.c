/*
 * nsrtreecmp - compare two directory trees the way a restore must match
 * its original (see nsrtreecmp(1)); the logic is nsr_treecmp().
 */
#include "nsr/compat.h"

#include <getopt.h>

#include "nsr/err.h"
#include "nsr/treecmp.h"

static const char usage[] =
	"usage: nsrtreecmp [-qMORX] DIR1 DIR2\n"
	"  -q  print nothing, only set the exit status\n"
	"  -M  do not compare modification times\n"
	"  -O  do not compare owners and groups\n"
	"  -R  do not compare the metadata of DIR1 and DIR2 themselves\n"
	"  -X  do not compare extended attributes\n"
	"exit status: 0 identical, 1 different, 2 error\n";

/* print_diff - one line per difference. */
static void print_diff(void *ctx, const char *rel, const char *what)
{
	NSR_UNUSED(ctx);
	printf("%s: %s\n", rel, what);
}

/* main - run the tests. */
int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int flags = 0, quiet = 0, ch, rc;
	size_t ndiff = 0;

	for (;;) {
		ch = getopt_long(argc, argv, "qMORXh", longopts, NULL);
		if (ch == -1)
			break;
		switch (ch) {
		case 'q':
			quiet = 1;
			break;
		case 'M':
			flags |= NSR_TREECMP_NO_MTIME;
			break;
		case 'O':
			flags |= NSR_TREECMP_NO_OWNER;
			break;
		case 'R':
			flags |= NSR_TREECMP_NO_ROOT;
			break;
		case 'X':
			flags |= NSR_TREECMP_NO_XATTR;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (argc - optind != 2) {
		fputs(usage, stderr);
		return 2;
	}
	rc = nsr_treecmp(argv[optind], argv[optind + 1], flags,
			 quiet ? NULL : print_diff, NULL, &ndiff);
	if (rc != NSR_OK) {
		fprintf(stderr, "nsrtreecmp: cannot compare: %s\n",
			rc == NSR_ERR_SYSTEM ? strerror(errno)
					     : nsr_strerror(rc));
		return 2;
	}
	if (!quiet && ndiff > 0)
		fprintf(stderr, "nsrtreecmp: %zu difference%s\n", ndiff,
			ndiff == 1 ? "" : "s");
	return ndiff == 0 ? 0 : 1;
}
