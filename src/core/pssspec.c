/*
 * pssspec.c - the PSS:streams_per_ss parser and matcher (pssspec.h).
 * Invariants of a parsed spec:
 *  1. n <= NSR_PSS_SPEC_MAX; every count is 1 .. NSR_PSS_STREAMS_MAX;
 *  2. every pattern is non-empty, at most NSR_PSS_PATTERN_MAX bytes, with
 *     no surrounding blanks and no comma;
 *  3. bare is 0, or the count of a spec that is a count alone (n == 0).
 */
#include "nsr/compat.h"

#include <ctype.h>
#include <fnmatch.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/pssspec.h"

#define PREFIX "PSS:streams_per_ss="

struct pss_item {
	char *pattern;
	unsigned streams;
	int wild; /* has a wildcard character */
};

struct nsr_pssspec {
	struct pss_item item[NSR_PSS_SPEC_MAX];
	unsigned n;
	unsigned bare;
};

/* syntax - an error at item position pos (1-based). */
static int syntax(struct nsr_buf *err, unsigned pos, const char *why)
{
	if (err)
		nsr_buf_addf(err, "PSS:streams_per_ss item %u: %s", pos, why);
	return NSR_ERR_SYNTAX;
}

/* all_digits - is [p, p+n) a non-empty run of decimal digits? */
static int all_digits(const char *p, size_t n)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)p[i]))
			return 0;
	return 1;
}

/* add_item - one pattern with its count. */
static int add_item(struct nsr_pssspec *s, const char *p, size_t n,
		    unsigned streams)
{
	struct pss_item *it = &s->item[s->n];

	it->pattern = strndup(p, n);
	if (!it->pattern)
		return NSR_ERR_NOMEM;
	it->streams = streams;
	it->wild = strpbrk(it->pattern, "*?[") != NULL;
	s->n++;
	return NSR_OK;
}

/* parse_items - the comma-separated items of text into s. */
static int parse_items(struct nsr_pssspec *s, const char *text,
		       struct nsr_buf *err)
{
	unsigned count = 0, pos = 0, since_count = 0, counts = 0;
	const char *p = text;

	for (;;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		int rc;

		pos++;
		while (n > 0 && isspace((unsigned char)*p)) {
			p++;
			n--;
		}
		while (n > 0 && isspace((unsigned char)p[n - 1]))
			n--;
		if (n == 0)
			return syntax(err, pos, "empty item");
		if (all_digits(p, n)) {
			if (counts && since_count == 0)
				return syntax(err, pos, "a stream count "
					      "with no save point after the "
					      "one before it");
			count = 0;
			for (size_t i = 0; i < n && count <= 1000; i++)
				count = count * 10 + (unsigned)(p[i] - '0');
			if (count < 1 || count > NSR_PSS_STREAMS_MAX)
				return syntax(err, pos, "stream count out of "
					      "range (1 to 8)");
			counts++;
			since_count = 0;
		} else {
			if (count == 0)
				return syntax(err, pos, "a save point before "
					      "any stream count");
			if (n > NSR_PSS_PATTERN_MAX)
				return syntax(err, pos, "save point pattern "
					      "too long");
			if (s->n == NSR_PSS_SPEC_MAX)
				return syntax(err, pos, "too many save point "
					      "patterns (at most 64)");
			rc = add_item(s, p, n, count);
			if (rc != NSR_OK)
				return rc;
			since_count++;
		}
		if (!end)
			break;
		p = end + 1;
	}
	if (since_count == 0 && !(counts == 1 && s->n == 0))
		return syntax(err, pos, "a stream count with no save point "
			      "after it");
	if (s->n == 0)
		s->bare = count;
	return NSR_OK;
}

/* nsr_pssspec_parse - text into a spec. */
int nsr_pssspec_parse(const char *text, struct nsr_pssspec **out,
		      struct nsr_buf *err)
{
	struct nsr_pssspec *s;
	int rc;

	*out = NULL;
	if (!text)
		return NSR_ERR_INVAL;
	while (isspace((unsigned char)*text))
		text++;
	if (strncmp(text, PREFIX, strlen(PREFIX)) == 0)
		text += strlen(PREFIX);
	s = calloc(1, sizeof(*s));
	if (!s)
		return NSR_ERR_NOMEM;
	rc = parse_items(s, text, err);
	if (rc != NSR_OK) {
		nsr_pssspec_free(s);
		return rc;
	}
	*out = s;
	return NSR_OK;
}

/* nsr_pssspec_streams - the count for save point sp. */
unsigned nsr_pssspec_streams(const struct nsr_pssspec *s, const char *sp)
{
	unsigned got = 0;

	if (!s)
		return NSR_PSS_STREAMS_DEFAULT;
	for (unsigned i = 0; i < s->n; i++)
		if (!s->item[i].wild && strcmp(s->item[i].pattern, sp) == 0)
			return s->item[i].streams;
	for (unsigned i = 0; i < s->n; i++)
		if (s->item[i].wild &&
		    fnmatch(s->item[i].pattern, sp, FNM_NOESCAPE) == 0)
			got = s->item[i].streams;
	if (got)
		return got;
	return s->bare ? s->bare : NSR_PSS_STREAMS_DEFAULT;
}

/* nsr_pssspec_from_ops - the spec among save operations values. */
int nsr_pssspec_from_ops(const char *const *ops, size_t n,
			 struct nsr_buf *spec)
{
	size_t i = 0;
	int rc = NSR_OK;

	while (i < n && strncmp(ops[i], PREFIX, strlen(PREFIX)) != 0)
		i++;
	if (i == n)
		return 0;
	rc = nsr_buf_addstr(spec, ops[i]);
	for (i++; rc == NSR_OK && i < n && !strchr(ops[i], '='); i++)
		rc = nsr_buf_addf(spec, ",%s", ops[i]);
	return rc == NSR_OK ? 1 : rc;
}

/* nsr_pssspec_count - patterns in the spec. */
unsigned nsr_pssspec_count(const struct nsr_pssspec *s)
{
	return s ? s->n : 0;
}

/* nsr_pssspec_free - free a spec. */
void nsr_pssspec_free(struct nsr_pssspec *s)
{
	if (!s)
		return;
	for (unsigned i = 0; i < s->n; i++)
		free(s->item[i].pattern);
	free(s);
}
