/*
 * access.c - access list entries (nsr/access.h): checking one when it is
 * set, matching one against a caller.  Matching is a glob with `*` only,
 * iterative (backtracking to the last star), so a hostile pattern costs
 * at most length(pattern) x length(name) steps.
 */
#include "nsr/compat.h"

#include <ctype.h>

#include "nsr/access.h"
#include "nsr/buf.h"
#include "nsr/err.h"

/* glob - 1 if s matches p, where '*' is any run; fold: ignore case. */
static int glob(const char *p, const char *s, int fold)
{
	const char *star = NULL, *back = NULL;

	while (*s) {
		if (*p == '*') {
			star = p++;
			back = s;
		} else if (*p && (fold ? tolower((unsigned char)*p) ==
						 tolower((unsigned char)*s)
					: *p == *s)) {
			p++;
			s++;
		} else if (star) {
			p = star + 1;
			s = ++back;
		} else {
			return 0;
		}
	}
	while (*p == '*')
		p++;
	return *p == '\0';
}

/* part_ok - a user or host part: [A-Za-z0-9._$:*-], not empty. */
static int part_ok(const char *s, size_t n)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!isalnum(c) && !strchr("._-$:*", c))
			return 0;
	}
	return 1;
}

/* nsr_access_check_entry - valid user@host entry? */
int nsr_access_check_entry(const char *entry, struct nsr_buf *why)
{
	const char *at = entry ? strchr(entry, '@') : NULL;
	size_t n = entry ? strlen(entry) : 0;

	if (at && n <= NSR_ACCESS_ENTRY_MAX && !strchr(at + 1, '@') &&
	    part_ok(entry, (size_t)(at - entry)) &&
	    part_ok(at + 1, strlen(at + 1)))
		return NSR_OK;
	if (why)
		nsr_buf_addf(why, "'%.*s' is not an access entry: write "
			     "user@host, with * for any run of characters "
			     "(root@backup1, *@cl1, root@*.example.com)",
			     (int)NSR_MIN(n, (size_t)NSR_ACCESS_ENTRY_MAX),
			     entry ? entry : "");
	return NSR_ERR_INVAL;
}

/* nsr_access_match_host - host pattern against a host name. */
int nsr_access_match_host(const char *pat, const char *host)
{
	const char *dot;
	char first[256];

	if (!pat || !host || !*host)
		return 0;
	if (glob(pat, host, 1))
		return 1;
	dot = strchr(host, '.');
	if (strchr(pat, '.') || !dot || (size_t)(dot - host) >= sizeof(first))
		return 0;
	memcpy(first, host, (size_t)(dot - host));
	first[dot - host] = '\0';
	return glob(pat, first, 1);
}

/* nsr_access_match - entry admits user@host? */
int nsr_access_match(const char *entry, const char *user, const char *host)
{
	char u[NSR_ACCESS_ENTRY_MAX + 1];
	const char *at;
	size_t n;

	if (nsr_access_check_entry(entry, NULL) != NSR_OK)
		return 0;
	at = strchr(entry, '@');
	n = (size_t)(at - entry);
	memcpy(u, entry, n);
	u[n] = '\0';
	if (user ? !glob(u, user, 0) : strcmp(u, "*") != 0)
		return 0;
	return nsr_access_match_host(at + 1, host);
}
