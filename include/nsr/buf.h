/*
 * buf.h - the one growable byte/string buffer used everywhere.
 *
 * Invariants (after nsr_buf_init and until nsr_buf_release):
 *  - b->data is never NULL and b->data[b->len] == '\0' (always terminated,
 *    so text can be used as a C string; binary data may contain NULs);
 *  - b->len <= capacity; capacity is private (do not touch b->cap);
 *  - if b->max != 0, len never exceeds max: growing past it returns
 *    NSR_ERR_TOOBIG and leaves the buffer unchanged (decoders use this).
 * Callers may read b->data and b->len; they change them only through these
 * functions.  nsr_buf_detach() is the one way to take ownership of data.
 */
#ifndef NSR_BUF_H
#define NSR_BUF_H

#include <stddef.h>

struct nsr_buf {
	char *data;
	size_t len;
	size_t cap; /* private */
	size_t max; /* 0 = unbounded */
};

/* nsr_buf_init - set up an empty buffer; max is a hard cap (0 = none). */
void nsr_buf_init(struct nsr_buf *b, size_t max);
/* nsr_buf_release - free contents; the buffer must be init'ed again. */
void nsr_buf_release(struct nsr_buf *b);
/* nsr_buf_clear - release + init, keeping the same max. */
void nsr_buf_clear(struct nsr_buf *b);
/* nsr_buf_unnul - replace every NUL in the contents by c (a text file
 * edited by hand may hold stray NULs; its lines are read past them). */
void nsr_buf_unnul(struct nsr_buf *b, char c);
/* nsr_buf_reset - make it empty, keep the allocation. */
void nsr_buf_reset(struct nsr_buf *b);
/* nsr_buf_grow - ensure room for extra more bytes: NSR_OK, NSR_ERR_TOOBIG,
 * NSR_ERR_NOMEM. */
int nsr_buf_grow(struct nsr_buf *b, size_t extra);
/* nsr_buf_add - append len bytes. */
int nsr_buf_add(struct nsr_buf *b, const void *p, size_t len);
/* nsr_buf_addstr - append a C string. */
int nsr_buf_addstr(struct nsr_buf *b, const char *s);
/* nsr_buf_addch - append one byte. */
int nsr_buf_addch(struct nsr_buf *b, int c);
/* nsr_buf_addf - append printf-formatted text. */
int nsr_buf_addf(struct nsr_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* nsr_buf_vaddf - va_list form of nsr_buf_addf. */
int nsr_buf_vaddf(struct nsr_buf *b, const char *fmt, va_list ap);
/* nsr_buf_setlen - truncate (or, within capacity, extend) to len. */
void nsr_buf_setlen(struct nsr_buf *b, size_t len);
/* nsr_buf_detach - hand the data to the caller (who frees it with free());
 * the buffer is re-initialised empty.  *len_out (may be NULL) gets len. */
char *nsr_buf_detach(struct nsr_buf *b, size_t *len_out);
/* nsr_buf_avail - bytes that can be written at data+len without growing. */
size_t nsr_buf_avail(const struct nsr_buf *b);

/* nsr_buf_add_json_str - append s as a JSON string literal ("null" for
 * NULL); control characters escaped, invalid UTF-8 as U+FFFD. */
int nsr_buf_add_json_str(struct nsr_buf *b, const char *s);

#endif /* NSR_BUF_H */
