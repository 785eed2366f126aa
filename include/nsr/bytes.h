/*
 * bytes.h - big-endian encode/decode helpers for binary formats (volume
 * labels, block and chunk headers, database pages, stream records).
 *
 * struct nsr_rd is a bounded read cursor: every get checks the remaining
 * length and returns NSR_ERR_TRUNCATED instead of reading past the end, so a
 * decoder built on it cannot overrun hostile input.  Once a get fails, the
 * cursor is marked failed and every later get fails too (check once at end
 * with nsr_rd_error()).
 */
#ifndef NSR_BYTES_H
#define NSR_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct nsr_rd {
	const uint8_t *p;
	size_t left;
	int err; /* first error seen, 0 if none */
};

static inline void nsr_put_u16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}
static inline void nsr_put_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}
static inline void nsr_put_u64(uint8_t *p, uint64_t v)
{
	nsr_put_u32(p, (uint32_t)(v >> 32));
	nsr_put_u32(p + 4, (uint32_t)v);
}
static inline uint16_t nsr_get_u16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}
static inline uint32_t nsr_get_u32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) |
	       ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}
static inline uint64_t nsr_get_u64(const uint8_t *p)
{
	return ((uint64_t)nsr_get_u32(p) << 32) | nsr_get_u32(p + 4);
}

/* nsr_rd_init - cursor over len bytes at p. */
static inline void nsr_rd_init(struct nsr_rd *r, const void *p, size_t len)
{
	r->p = (const uint8_t *)p;
	r->left = len;
	r->err = 0;
}

/* nsr_rd_take - advance over n bytes; returns their start or NULL. */
const uint8_t *nsr_rd_take(struct nsr_rd *r, size_t n);
uint8_t nsr_rd_u8(struct nsr_rd *r);
uint16_t nsr_rd_u16(struct nsr_rd *r);
uint32_t nsr_rd_u32(struct nsr_rd *r);
uint64_t nsr_rd_u64(struct nsr_rd *r);
/* nsr_rd_bytes - copy n bytes into out (zeroed on failure). */
void nsr_rd_bytes(struct nsr_rd *r, void *out, size_t n);
/* nsr_rd_error - NSR_OK or the first error (NSR_ERR_TRUNCATED). */
static inline int nsr_rd_error(const struct nsr_rd *r)
{
	return r->err;
}

#endif /* NSR_BYTES_H */
