/*
 * xmalloc.h - allocation for daemons and tools: failure is fatal (logged,
 * exit 1), so callers need not check.  Library code that may run under a
 * size limit uses malloc and returns NSR_ERR_NOMEM instead.
 */
#ifndef NSR_XMALLOC_H
#define NSR_XMALLOC_H

#include <stddef.h>

void *nsr_xmalloc(size_t n);
void *nsr_xcalloc(size_t nmemb, size_t size);
void *nsr_xrealloc(void *p, size_t n);
char *nsr_xstrdup(const char *s);
char *nsr_xstrndup(const char *s, size_t n);
/* nsr_xasprintf - allocate a formatted string. */
char *nsr_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* NSR_XMALLOC_H */
