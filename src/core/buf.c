/*
 * buf.c - growable buffer (see buf.h for the invariants).
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"

static char nsr_buf_empty[1];

/* nsr_buf_init - set up an empty buffer with an optional hard cap. */
void nsr_buf_init(struct nsr_buf *b, size_t max)
{
	b->data = nsr_buf_empty;
	b->len = 0;
	b->cap = 0;
	b->max = max;
}

/* nsr_buf_release - free contents. */
void nsr_buf_release(struct nsr_buf *b)
{
	if (b->cap)
		free(b->data);
	nsr_buf_init(b, b->max);
}

/* nsr_buf_clear - release + init. */
void nsr_buf_clear(struct nsr_buf *b)
{
	nsr_buf_release(b);
}

/* nsr_buf_unnul - see buf.h. */
void nsr_buf_unnul(struct nsr_buf *b, char c)
{
	char *p = b->data, *end = b->data + b->len;

	while ((p = memchr(p, '\0', (size_t)(end - p))) != NULL)
		*p++ = c;
}

/* nsr_buf_reset - empty, keep allocation. */
void nsr_buf_reset(struct nsr_buf *b)
{
	nsr_buf_setlen(b, 0);
}

/* nsr_buf_grow - ensure room for extra bytes plus the terminator. */
int nsr_buf_grow(struct nsr_buf *b, size_t extra)
{
	size_t need, ncap;
	char *p;

	if (extra > SIZE_MAX - b->len - 1)
		return NSR_ERR_TOOBIG;
	need = b->len + extra;
	if (b->max && need > b->max)
		return NSR_ERR_TOOBIG;
	if (need + 1 <= b->cap)
		return NSR_OK;
	ncap = b->cap ? b->cap : 64;
	while (ncap < need + 1)
		ncap = ncap > SIZE_MAX / 2 ? need + 1 : ncap * 2;
	if (b->max && ncap > b->max + 1)
		ncap = b->max + 1;
	p = b->cap ? realloc(b->data, ncap) : malloc(ncap);
	if (!p)
		return NSR_ERR_NOMEM;
	if (!b->cap)
		p[0] = '\0';
	b->data = p;
	b->cap = ncap;
	return NSR_OK;
}

/* nsr_buf_add - append bytes. */
int nsr_buf_add(struct nsr_buf *b, const void *p, size_t len)
{
	int rc;

	if (len == 0)
		return NSR_OK;
	rc = nsr_buf_grow(b, len);
	if (rc)
		return rc;
	memcpy(b->data + b->len, p, len);
	b->len += len;
	b->data[b->len] = '\0';
	return NSR_OK;
}

/* nsr_buf_addstr - append a C string. */
int nsr_buf_addstr(struct nsr_buf *b, const char *s)
{
	return nsr_buf_add(b, s, strlen(s));
}

/* nsr_buf_addch - append one byte. */
int nsr_buf_addch(struct nsr_buf *b, int c)
{
	char ch = (char)c;

	return nsr_buf_add(b, &ch, 1);
}

/* nsr_buf_vaddf - append formatted text. */
int nsr_buf_vaddf(struct nsr_buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n, rc;

	va_copy(cp, ap);
	n = vsnprintf(b->data + b->len, b->cap ? b->cap - b->len : 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return NSR_ERR_INVAL;
	if (b->cap && (size_t)n < b->cap - b->len) {
		if (b->max && b->len + (size_t)n > b->max) {
			b->data[b->len] = '\0';
			return NSR_ERR_TOOBIG;
		}
		b->len += (size_t)n;
		return NSR_OK;
	}
	rc = nsr_buf_grow(b, (size_t)n);
	if (rc) {
		if (b->cap)
			b->data[b->len] = '\0';
		return rc;
	}
	va_copy(cp, ap);
	n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, cp);
	va_end(cp);
	if (n < 0)
		return NSR_ERR_INVAL;
	b->len += (size_t)n;
	return NSR_OK;
}

/* nsr_buf_addf - append printf-formatted text. */
int nsr_buf_addf(struct nsr_buf *b, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = nsr_buf_vaddf(b, fmt, ap);
	va_end(ap);
	return rc;
}

/* nsr_buf_setlen - truncate or extend within capacity. */
void nsr_buf_setlen(struct nsr_buf *b, size_t len)
{
	if (!b->cap)
		return;
	if (len >= b->cap)
		len = b->cap - 1;
	b->len = len;
	b->data[len] = '\0';
}

/* nsr_buf_detach - hand the data to the caller. */
char *nsr_buf_detach(struct nsr_buf *b, size_t *len_out)
{
	char *p;

	if (len_out)
		*len_out = b->len;
	if (!b->cap) {
		p = malloc(1);
		if (p)
			p[0] = '\0';
	} else {
		p = b->data;
	}
	nsr_buf_init(b, b->max);
	return p;
}

/* nsr_buf_avail - writable bytes before a grow is needed. */
size_t nsr_buf_avail(const struct nsr_buf *b)
{
	return b->cap ? b->cap - b->len - 1 : 0;
}

/* utf8_len - length of a valid UTF-8 sequence at s, or 0. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 ||
						  cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* nsr_buf_add_json_str - a JSON string literal of s (NULL: null);
 * invalid UTF-8 becomes U+FFFD. */
int nsr_buf_add_json_str(struct nsr_buf *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int rc;

	if (!s)
		return nsr_buf_addstr(out, "null");
	rc = nsr_buf_addch(out, '"');
	while (!rc && *p) {
		size_t n = utf8_len(p);

		if (n == 0) {
			rc = nsr_buf_addstr(out, "\\ufffd");
			p++;
		} else if (*p == '"' || *p == '\\') {
			rc = nsr_buf_addf(out, "\\%c", *p);
			p++;
		} else if (*p == '\n') {
			rc = nsr_buf_addstr(out, "\\n");
			p++;
		} else if (*p < 0x20 || *p == 0x7f) {
			rc = nsr_buf_addf(out, "\\u%04x", *p);
			p++;
		} else {
			rc = nsr_buf_add(out, p, n);
			p += n;
		}
	}
	if (!rc)
		rc = nsr_buf_addch(out, '"');
	return rc;
}
