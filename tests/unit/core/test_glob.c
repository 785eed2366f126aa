/*
 * test_glob.c - nsr_glob_overlap (glob.h): cases an administrator writes
 * in pool save set lists, then random short patterns checked against
 * fnmatch(3) itself: an overlap is claimed exactly when some string of
 * up to six bytes matches both.
 */
#include "nsr/compat.h"

#include <fnmatch.h>

#include "nsr/glob.h"
#include "nsr_test.h"

/* test_cases - overlaps and disjoint pairs by hand. */
static void test_cases(void **state)
{
	static const struct {
		const char *a, *b;
		int want;
	} c[] = {
		{ "/d*", "*a", 1 },	    /* "/da" */
		{ "/d*", "/e*", 0 },
		{ "/data*", "/dat?", 1 },
		{ "/data/*", "/home/*", 0 },
		{ "*.log", "*.txt", 0 },
		{ "*", "/anything", 1 },
		{ "", "", 1 },
		{ "", "*", 1 },
		{ "", "?", 0 },
		{ "/d[0-4]", "/d[5-9]", 0 },
		{ "/d[0-5]", "/d[5-9]", 1 },
		{ "/d[!0-9]", "/d7", 0 },
		{ "/d[!0-9]", "/dx", 1 },
		{ "/d[[:digit:]]", "/d[a-z]", 0 },
		{ "/d[[:alpha:]]*", "/dz", 1 },
		{ "\\*", "a", 0 },	    /* a quoted star is itself */
		{ "\\*", "[*]", 1 },
		{ "/x[", "/x[", 1 },	    /* '[' without ']' is itself */
		{ "/x[", "/xa", 0 },
		{ "[]]", "]", 1 },
		{ "*a*b*", "*b*a*", 1 },    /* "ab a" both ways: "aba" */
		{ "a*", "*b", 1 },
		{ "a?c", "*b*", 1 },
		{ "a?c", "*bb*", 0 },
		{ "/srv/*/data", "/srv/db/*", 1 },
		{ "/srv/*/data", "/srv/db/logs", 0 },
		{ "[[=a=]]", "a", 1 },	    /* 'a' in the C locale */
		{ "[[=a=]]", "b", 0 },
		{ "[[:nope:]]", "*", 1 },   /* unknown class: errs to 1 */
		{ "a\\", "*", 0 },	    /* nor with a trailing backslash */
	};

	NSR_UNUSED(state);
	for (size_t i = 0; i < NSR_ARRAY_SIZE(c); i++) {
		if (nsr_glob_overlap(c[i].a, c[i].b) != c[i].want ||
		    nsr_glob_overlap(c[i].b, c[i].a) != c[i].want)
			fail_msg("\"%s\" and \"%s\": want %d", c[i].a, c[i].b,
				 c[i].want);
	}
}

/* witness - some string of up to len bytes over "abc*", built in s from
 * position at, matching both patterns? */
static int witness(const char *a, const char *b, char *s, size_t at,
		   size_t len)
{
	s[at] = '\0';
	if (fnmatch(a, s, 0) == 0 && fnmatch(b, s, 0) == 0)
		return 1;
	if (at == len)
		return 0;
	for (const char *c = "abc*"; *c; c++) {
		s[at] = *c;
		if (witness(a, b, s, at + 1, len))
			return 1;
	}
	return 0;
}

/* test_random - up to three atoms each, 5,000 pairs, against fnmatch. */
static void test_random(void **state)
{
	static const char *const atom[] = { "a", "b", "?", "*", "[ab]",
					    "[!a]", "[b-c]", "\\*" };
	uint32_t seed = 12345;

	NSR_UNUSED(state);
	for (int k = 0; k < 5000; k++) {
		char p[2][32], s[8];

		for (int w = 0; w < 2; w++) {
			size_t n, len = 0;

			seed = seed * 1103515245u + 12345u;
			n = (seed >> 16) % 4;
			p[w][0] = '\0';
			for (size_t i = 0; i < n; i++) {
				seed = seed * 1103515245u + 12345u;
				len += (size_t)snprintf(
					p[w] + len, sizeof(p[w]) - len, "%s",
					atom[(seed >> 16) %
					     NSR_ARRAY_SIZE(atom)]);
			}
		}
		if (nsr_glob_overlap(p[0], p[1]) !=
		    witness(p[0], p[1], s, 0, 6))
			fail_msg("\"%s\" and \"%s\": overlap %d, witness %d",
				 p[0], p[1], nsr_glob_overlap(p[0], p[1]),
				 witness(p[0], p[1], s, 0, 6));
	}
}

/* main - run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
