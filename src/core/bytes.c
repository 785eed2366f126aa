/*
 * bytes.c - the bounded read cursor of bytes.h.
 */
#include "nsr/compat.h"

#include "nsr/bytes.h"
#include "nsr/err.h"

/* nsr_rd_take - advance over n bytes; NULL (and sticky error) if short. */
const uint8_t *nsr_rd_take(struct nsr_rd *r, size_t n)
{
	const uint8_t *p;

	if (r->err || n > r->left) {
		r->err = NSR_ERR_TRUNCATED;
		return NULL;
	}
	p = r->p;
	r->p += n;
	r->left -= n;
	return p;
}

/* nsr_rd_u8 - one byte, 0 once the cursor has failed. */
uint8_t nsr_rd_u8(struct nsr_rd *r)
{
	const uint8_t *p = nsr_rd_take(r, 1);

	return p ? p[0] : 0;
}

/* nsr_rd_u16 - a big-endian 16-bit value, 0 on failure. */
uint16_t nsr_rd_u16(struct nsr_rd *r)
{
	const uint8_t *p = nsr_rd_take(r, 2);

	return p ? nsr_get_u16(p) : 0;
}

/* nsr_rd_u32 - a big-endian 32-bit value, 0 on failure. */
uint32_t nsr_rd_u32(struct nsr_rd *r)
{
	const uint8_t *p = nsr_rd_take(r, 4);

	return p ? nsr_get_u32(p) : 0;
}

/* nsr_rd_u64 - a big-endian 64-bit value, 0 on failure. */
uint64_t nsr_rd_u64(struct nsr_rd *r)
{
	const uint8_t *p = nsr_rd_take(r, 8);

	return p ? nsr_get_u64(p) : 0;
}

/* nsr_rd_bytes - copy n bytes out, zero-filled on failure. */
void nsr_rd_bytes(struct nsr_rd *r, void *out, size_t n)
{
	const uint8_t *p = nsr_rd_take(r, n);

	if (p)
		memcpy(out, p, n);
	else
		memset(out, 0, n);
}
