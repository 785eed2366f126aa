/*
 * fuzz_pssspec.c - the PSS:streams_per_ss parser (pssspec.h).  The input
 * up to its first NUL is the spec; what follows (NUL-separated) are save
 * point names to match.  The parser must agree with a second, plain
 * reading of the grammar (accepted exactly when every item is a count in
 * range or a pattern after one, no count dangling), keep its limits, and
 * give every save point a count in 1 .. 8.  A disagreement aborts.
 */
#include "nsr/compat.h"

#include <ctype.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/pssspec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ref_accepts - the reference reading: 1 if text is a valid spec. */
static int ref_accepts(const char *text, unsigned *npat)
{
	const char *p = text;
	int have_count = 0, dangling = 0, counts = 0;

	*npat = 0;
	while (isspace((unsigned char)*p))
		p++;
	if (strncmp(p, "PSS:streams_per_ss=", 19) == 0)
		p += 19;
	for (;;) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p), digits = 0;
		const char *a = p;

		while (n && isspace((unsigned char)*a)) {
			a++;
			n--;
		}
		while (n && isspace((unsigned char)a[n - 1]))
			n--;
		if (n == 0)
			return 0;
		while (digits < n && isdigit((unsigned char)a[digits]))
			digits++;
		if (digits == n) {
			unsigned long v = 0;

			if (dangling)
				return 0;
			for (size_t i = 0; i < n && v <= 8; i++)
				v = v * 10 + (unsigned long)(a[i] - '0');
			if (v < 1 || v > 8)
				return 0;
			have_count = 1;
			dangling = 1;
			counts++;
		} else {
			if (!have_count || n > NSR_PSS_PATTERN_MAX ||
			    *npat == NSR_PSS_SPEC_MAX)
				return 0;
			(*npat)++;
			dangling = 0;
		}
		if (!e)
			break;
		p = e + 1;
	}
	return !dangling || (counts == 1 && *npat == 0);
}

/* LLVMFuzzerTestOneInput - parse, compare, match. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct nsr_pssspec *s = NULL;
	struct nsr_buf err;
	unsigned npat = 0;
	size_t tl;
	int rc, ref;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	tl = strlen(text);
	nsr_buf_init(&err, 0);
	rc = nsr_pssspec_parse(text, &s, &err);
	ref = ref_accepts(text, &npat);
	if (rc != NSR_OK && rc != NSR_ERR_SYNTAX)
		abort();
	if ((rc == NSR_OK) != ref)
		abort();
	if (rc == NSR_ERR_SYNTAX && (s || !strstr(err.data, "item ")))
		abort();
	if (rc == NSR_OK && nsr_pssspec_count(s) != npat)
		abort();
	for (size_t at = tl + 1; rc == NSR_OK && at <= size;) {
		const char *sp = text + at;
		unsigned n = nsr_pssspec_streams(s, sp);

		if (n < 1 || n > NSR_PSS_STREAMS_MAX)
			abort();
		at += strlen(sp) + 1;
	}
	nsr_pssspec_free(s);
	nsr_buf_release(&err);
	free(text);
	return 0;
}
