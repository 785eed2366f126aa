/*
 * xmalloc.h - allocation for programs (daemons/, tools/, tests/): failure
 * is fatal (a message on stderr, exit 1), so callers need not check.
 * Header only, and never included under src/: library code returns
 * NSR_ERR_NOMEM (or NULL, where its interface says so) instead, because a
 * library must not decide that its caller dies (tests/system/006 checks).
 */
#ifndef NSR_XMALLOC_H
#define NSR_XMALLOC_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* nsr_xdie - report that n bytes could not be had and exit(1). */
__attribute__((noreturn)) static inline void nsr_xdie(size_t n)
{
	char msg[96];
	int len;

	len = snprintf(msg, sizeof(msg), "fatal: out of memory (%zu bytes)\n",
		       n);
	if (len > 0 && write(2, msg, (size_t)len) < 0)
		_exit(1);
	exit(1);
}

/* nsr_xmalloc - malloc or die. */
static inline void *nsr_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		nsr_xdie(n);
	return p;
}

/* nsr_xcalloc - calloc or die. */
static inline void *nsr_xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (!p)
		nsr_xdie(nmemb * size);
	return p;
}

/* nsr_xrealloc - realloc or die. */
static inline void *nsr_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		nsr_xdie(n);
	return q;
}

/* nsr_xstrdup - strdup or die. */
static inline char *nsr_xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		nsr_xdie(strlen(s) + 1);
	return p;
}

/* nsr_xstrndup - strndup or die. */
static inline char *nsr_xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);

	if (!p)
		nsr_xdie(n + 1);
	return p;
}

/* nsr_xasprintf - a newly allocated formatted string, or die. */
__attribute__((format(printf, 1, 2))) static inline char *
nsr_xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p = NULL;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&p, fmt, ap);
	va_end(ap);
	if (n < 0)
		nsr_xdie(0);
	return p;
}

/* nsr_xcheck - p, the result of a library call that returns NULL only
 * when out of memory (nsr_path_join, nsr_daemon_path), or die. */
static inline void *nsr_xcheck(void *p)
{
	if (!p)
		nsr_xdie(0);
	return p;
}

#endif /* NSR_XMALLOC_H */
