/*
 * xmalloc.c - allocation wrappers whose failure is fatal.
 */
#include "nsr/compat.h"

#include <unistd.h>

#include "nsr/xmalloc.h"

/* xmalloc_die - report and exit; async-signal-safe writes only. */
NSR_NORETURN static void xmalloc_die(size_t n)
{
	char msg[96];
	int len;

	len = snprintf(msg, sizeof(msg), "fatal: out of memory (%zu bytes)\n", n);
	if (len > 0 && write(2, msg, (size_t)len) < 0)
		_exit(1);
	exit(1);
}

/* nsr_xmalloc - malloc or die. */
void *nsr_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		xmalloc_die(n);
	return p;
}

/* nsr_xcalloc - calloc or die. */
void *nsr_xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (!p)
		xmalloc_die(nmemb * size);
	return p;
}

/* nsr_xrealloc - realloc or die. */
void *nsr_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		xmalloc_die(n);
	return q;
}

/* nsr_xstrdup - strdup or die. */
char *nsr_xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		xmalloc_die(strlen(s) + 1);
	return p;
}

/* nsr_xstrndup - strndup or die. */
char *nsr_xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);

	if (!p)
		xmalloc_die(n + 1);
	return p;
}

/* nsr_xasprintf - asprintf or die. */
char *nsr_xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p = NULL;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&p, fmt, ap);
	va_end(ap);
	if (n < 0)
		xmalloc_die(0);
	return p;
}
