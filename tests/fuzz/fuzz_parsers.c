/*
 * fuzz_parsers.c - the small parsers of words and numbers that come from
 * users, resources and the environment.  Byte 0 picks the parser, the
 * rest (up to its first NUL) is the text:
 *   0  nsr_readsize_parse      NSR_READ_SIZE ("65536", "512K", "8M")
 *   1  nsr_size_parse          sizes in queries, nsrmm -z, devices ("1.5 TB")
 *   2  nsr_level_parse         save set levels ("full", "incr", "1".."9")
 *   3  nsr_jobdb_type_parse    job types ("save job", any case)
 *   4  nsr_jobdb_state_parse   job states ("COMPLETED", any case)
 *   5  nsr_dev_type_parse      device media types ("adv_file", "vtape")
 *   6  nsr_glob_overlap        two save set patterns, a newline apart
 *                              ("/d*" and "*a" of two pools)
 * Each is held to what a correct parser guarantees: the two number
 * parsers agree with a straightforward reference reading of the grammar
 * (accepted exactly when it is a size in range, with the same value) and
 * read back what the number formats print; the word parsers accept only
 * what the matching name function prints (in any case where they say so)
 * and parse every name back to its value; the overlap of two patterns
 * is symmetric, and for a pattern and a plain name (no *, ?, [ or \)
 * it is fnmatch(3)'s verdict: exactly so without sets, with sets at
 * least every match (glob.h reads odd ones loosely; test_glob checks
 * plain sets exactly).  A disagreement aborts.
 */
#include "nsr/compat.h"

#include <ctype.h>
#include <fnmatch.h>
#include <strings.h>

#include "nsr/dev.h"
#include "nsr/err.h"
#include "nsr/glob.h"
#include "nsr/jobdb.h"
#include "nsr/mmdb.h"
#include "nsr/mmquery.h"
#include "nsr/readsize.h"
#include "nsr/size.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef unsigned __int128 u128;

#define BIG ((u128)1 << 100) /* saturation: far beyond every bound */

/* add_digit - v * 10 + d, saturating at BIG. */
static u128 add_digit(u128 v, int d)
{
	return v >= BIG ? BIG : v * 10 + (u128)d;
}

/* check_readsize - digits, optional k/K/m/M, nothing else; 1..2^40. */
static void check_readsize(const char *s)
{
	const char *p = s;
	u128 v = 0;
	size_t got = 1, back;
	int rc = nsr_readsize_parse(s, &got), ok;
	char text[48];

	for (; *p >= '0' && *p <= '9'; p++)
		v = add_digit(v, *p - '0');
	ok = p > s;
	if (*p == 'k' || *p == 'K') {
		v *= 1024;
		p++;
	} else if (*p == 'm' || *p == 'M') {
		v *= 1024 * 1024;
		p++;
	}
	ok = ok && *p == '\0' && v >= 1 && v <= ((u128)1 << 40);
	if (ok != (rc == NSR_OK) || (ok && (u128)got != v) ||
	    (!ok && (rc != NSR_ERR_INVAL || got != 0)))
		abort();
	if (!ok)
		return;
	/* what %zu prints reads back; so does a whole number of K or M */
	snprintf(text, sizeof(text), "%zu", got);
	if (nsr_readsize_parse(text, &back) != NSR_OK || back != got)
		abort();
	if (got % 1024 == 0) {
		snprintf(text, sizeof(text), "%zuK", got / 1024);
		if (nsr_readsize_parse(text, &back) != NSR_OK || back != got)
			abort();
	}
}

/* size_ref - the reference reading of an mmquery size: 1 with *v, 0 not
 * a size, 2 a size over LLONG_MAX. */
static int size_ref(const char *s, long long *out)
{
	static const char units[] = "BKMGTP";
	const unsigned char *p = (const unsigned char *)s;
	u128 whole = 0, frac = 0, fscale = 1, v;
	int shift = 0, nfrac = 0;

	while (isspace(*p))
		p++;
	if (!isdigit(*p))
		return 0;
	for (; isdigit(*p); p++)
		whole = add_digit(whole, *p - '0');
	if (*p == '.') {
		p++;
		if (!isdigit(*p))
			return 0;
		for (; isdigit(*p); p++, nfrac++)
			if (nfrac < 6) { /* the first six digits count */
				frac = frac * 10 + (u128)(*p - '0');
				fscale *= 10;
			}
	}
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p) {
		const char *u = strchr(units, toupper(*p));

		if (u == NULL)
			return 0;
		shift = (int)(u - units) * 10;
		p++;
		if (shift && (*p == 'B' || *p == 'b'))
			p++;
		while (isspace(*p))
			p++;
		if (*p)
			return 0;
	}
	if (whole >= ((u128)1 << 64)) /* over LLONG_MAX in any unit */
		return 2;
	v = (whole << shift) + ((frac << shift) / fscale);
	if (v > (u128)LLONG_MAX)
		return 2;
	*out = (long long)v;
	return 1;
}

/* check_size - nsr_size_parse against the reference. */
static void check_size(const char *s)
{
	static const char units[] = "KMGTP";
	long long got = -1, want = -1, back;
	int rc = nsr_size_parse(s, &got);
	int ref = size_ref(s, &want);
	char text[48];

	if (ref == 1 && (rc != NSR_OK || got != want))
		abort();
	if (ref == 2 && rc != NSR_ERR_TOOBIG)
		abort();
	if (ref == 0 && rc != NSR_ERR_SYNTAX && rc != NSR_ERR_TOOBIG)
		abort();
	if (ref != 1)
		return;
	snprintf(text, sizeof(text), "%lld", got);
	if (nsr_size_parse(text, &back) != NSR_OK || back != got)
		abort();
	for (int i = 0; i < 5; i++) {
		long long unit = 1LL << (10 * (i + 1));

		if (got % unit)
			break;
		snprintf(text, sizeof(text), "%lld %cB", got / unit, units[i]);
		if (nsr_size_parse(text, &back) != NSR_OK ||
		    back != got)
			abort();
	}
}

/* check_level - only nsr_level_name's spellings, exactly. */
static void check_level(const char *s)
{
	int l = nsr_level_parse(s);

	if (l < -1 || l > NSR_LEVEL_MAX ||
	    (l >= 0 && strcmp(nsr_level_name((unsigned)l), s) != 0))
		abort();
	for (unsigned i = 0; i <= NSR_LEVEL_MAX; i++)
		if (nsr_level_parse(nsr_level_name(i)) != (int)i)
			abort();
}

/* upper - s in upper case (static buffer; s is short). */
static const char *upper(const char *s)
{
	static char buf[4096];
	size_t i;

	for (i = 0; s[i] && i + 1 < sizeof(buf); i++)
		buf[i] = (char)toupper((unsigned char)s[i]);
	buf[i] = '\0';
	return buf;
}

/* check_jobtype - a type name in any case, nothing else. */
static void check_jobtype(const char *s)
{
	enum nsr_jobdb_type t = nsr_jobdb_type_parse(s);
	const char *name = nsr_jobdb_type_name(t);

	if (t != 0 &&
	    (name == NULL || strcasecmp(name, s) != 0 ||
	     (strlen(s) < 4096 && nsr_jobdb_type_parse(upper(s)) != t)))
		abort();
	for (int i = 1; nsr_jobdb_type_name((enum nsr_jobdb_type)i); i++)
		if (nsr_jobdb_type_parse(nsr_jobdb_type_name(
			    (enum nsr_jobdb_type)i)) != (enum nsr_jobdb_type)i)
			abort();
	if (nsr_jobdb_type_name(0) != NULL)
		abort();
}

/* check_jobstate - a state name in any case, nothing else. */
static void check_jobstate(const char *s)
{
	enum nsr_jobdb_state t = nsr_jobdb_state_parse(s);
	const char *name = nsr_jobdb_state_name(t);

	if (t != 0 &&
	    (name == NULL || strcasecmp(name, s) != 0 ||
	     (strlen(s) < 4096 && nsr_jobdb_state_parse(upper(s)) != t)))
		abort();
	for (int i = 1; nsr_jobdb_state_name((enum nsr_jobdb_state)i); i++)
		if (nsr_jobdb_state_parse(nsr_jobdb_state_name((
			    enum nsr_jobdb_state)i)) != (enum nsr_jobdb_state)i)
			abort();
	if (nsr_jobdb_state_name(0) != NULL)
		abort();
}

/* check_devtype - exactly the three resource names. */
static void check_devtype(const char *s)
{
	static const enum nsr_dev_type all[] = {NSR_DEV_AFTD, NSR_DEV_TAPE,
						NSR_DEV_VTAPE};
	enum nsr_dev_type t = 0;
	int rc = nsr_dev_type_parse(s, &t);

	if (rc == NSR_OK && strcmp(nsr_dev_type_name(t), s) != 0)
		abort();
	if (rc != NSR_OK && rc != NSR_ERR_INVAL)
		abort();
	for (size_t i = 0; i < NSR_ARRAY_SIZE(all); i++)
		if (nsr_dev_type_parse(nsr_dev_type_name(all[i]), &t) !=
			    NSR_OK ||
		    t != all[i])
			abort();
	if (strcmp(nsr_dev_type_name(0), "unknown") != 0 ||
	    nsr_dev_type_parse("unknown", &t) == NSR_OK)
		abort();
}

/* check_glob - "a\nb": the overlap is symmetric, and fnmatch's verdict
 * when b is a plain name. */
static void check_glob(char *s)
{
	char *b = strchr(s, '\n');
	int ab, ba;

	if (b == NULL)
		return;
	*b++ = '\0';
	ab = nsr_glob_overlap(s, b);
	ba = nsr_glob_overlap(b, s);
	if (ab != ba || (ab != 0 && ab != 1))
		abort();
	if (strpbrk(b, "*?[\\") == NULL &&
	    (strchr(s, '[') ? fnmatch(s, b, 0) == 0 && !ab
			    : ab != (fnmatch(s, b, 0) == 0)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;

	if (size < 1)
		return 0;
	s = strndup((const char *)data + 1, size - 1);
	if (s == NULL)
		return 0;
	switch (data[0] % 7) {
	case 0: check_readsize(s); break;
	case 1: check_size(s); break;
	case 2: check_level(s); break;
	case 3: check_jobtype(s); break;
	case 4: check_jobstate(s); break;
	case 5: check_devtype(s); break;
	default: check_glob(s); break;
	}
	free(s);
	return 0;
}
