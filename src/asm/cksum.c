/*
 * cksum.c - the per-file data checksum of the save stream (CRC-32C or
 * SHA-256), and the frame helpers shared by encoder and decoder.
 */
#include "nsr/compat.h"

#include <openssl/evp.h>

#include "nsr/bytes.h"
#include "nsr/crc32c.h"
#include "nsr/err.h"

#include "asm_int.h"

static const uint8_t zeros[64 * 1024];

/* asm_ck_len - digest length of an algorithm, 0 if unknown. */
size_t asm_ck_len(int alg)
{
	if (alg == NSR_ASM_CK_CRC32C)
		return 4;
	if (alg == NSR_ASM_CK_SHA256)
		return 32;
	return 0;
}

/* asm_ck_init - start a file checksum, reusing the digest context. */
int asm_ck_init(struct asm_ck *ck, int alg)
{
	ck->alg = alg;
	ck->crc = 0;
	if (alg == NSR_ASM_CK_CRC32C)
		return NSR_OK;
	if (alg != NSR_ASM_CK_SHA256)
		return NSR_ERR_INVAL;
	if (ck->md == NULL)
		ck->md = EVP_MD_CTX_new();
	if (ck->md == NULL)
		return NSR_ERR_NOMEM;
	if (EVP_DigestInit_ex(ck->md, EVP_sha256(), NULL) != 1)
		return NSR_ERR_NOMEM;
	return NSR_OK;
}

/* asm_ck_update - add bytes to the checksum. */
void asm_ck_update(struct asm_ck *ck, const void *p, size_t n)
{
	if (ck->alg == NSR_ASM_CK_CRC32C)
		ck->crc = nsr_crc32c(ck->crc, p, n);
	else if (ck->md != NULL)
		EVP_DigestUpdate(ck->md, p, n);
}

/* gf2_mul - a * b modulo the reflected CRC-32C polynomial. */
static uint32_t gf2_mul(uint32_t a, uint32_t b)
{
	uint32_t m = (uint32_t)1 << 31, p = 0;

	for (;;) {
		if (a & m) {
			p ^= b;
			if ((a & (m - 1)) == 0)
				break;
		}
		m >>= 1;
		b = (b & 1) ? (b >> 1) ^ 0x82F63B78u : b >> 1;
	}
	return p;
}

/* crc32c_zeros - continue a CRC-32C over len zero bytes in O(log len):
 * running zeros through the register multiplies it by x^(8 len) modulo
 * the polynomial (the same algebra as zlib's crc32_combine). */
static uint32_t crc32c_zeros(uint32_t crc, uint64_t len)
{
	uint32_t reg = ~crc, sq = (uint32_t)1 << 30; /* x^1 */

	for (int k = 0; k < 3; k++)
		sq = gf2_mul(sq, sq); /* x^8: one zero byte */
	/* x^(8 len) is the product of x^(8 * 2^k) over the bits of len */
	while (len) {
		if (len & 1)
			reg = gf2_mul(sq, reg);
		sq = gf2_mul(sq, sq);
		len >>= 1;
	}
	return ~reg;
}

/* asm_ck_zeros - add a run of zero bytes (a hole). */
void asm_ck_zeros(struct asm_ck *ck, uint64_t len)
{
	if (ck->alg == NSR_ASM_CK_CRC32C) {
		ck->crc = crc32c_zeros(ck->crc, len);
		return;
	}
	while (len > 0) {
		size_t n = len > sizeof(zeros) ? sizeof(zeros) : (size_t)len;

		asm_ck_update(ck, zeros, n);
		len -= n;
	}
}

/* asm_ck_final - write the digest. */
int asm_ck_final(struct asm_ck *ck, uint8_t *out)
{
	unsigned int n = 0;

	if (ck->alg == NSR_ASM_CK_CRC32C) {
		nsr_put_u32(out, ck->crc);
		return NSR_OK;
	}
	if (ck->md == NULL || EVP_DigestFinal_ex(ck->md, out, &n) != 1)
		return NSR_ERR_NOMEM;
	return NSR_OK;
}

/* asm_ck_release - free the digest context. */
void asm_ck_release(struct asm_ck *ck)
{
	EVP_MD_CTX_free(ck->md);
	ck->md = NULL;
}

/* asm_frame_put - fill a frame header, CRC over its first 8 bytes. */
void asm_frame_put(uint8_t *fr, int type, uint32_t len)
{
	fr[0] = (uint8_t)type;
	fr[1] = 0;
	fr[2] = 0;
	fr[3] = 0;
	nsr_put_u32(fr + 4, len);
	nsr_put_u32(fr + 8, nsr_crc32c(0, fr, 8));
}

/* asm_max_len - payload bound of a record type (0 = unknown type). */
uint32_t asm_max_len(int type)
{
	switch (type) {
	case NSR_ASM_REC_DATA:
		return NSR_ASM_MAX_DATA;
	case NSR_ASM_REC_XATTR:
		return NSR_ASM_MAX_XATTR_REC;
	case NSR_ASM_REC_SEALED:
		return NSR_ASM_MAX_SEALED;
	case NSR_ASM_REC_HEADER:
	case NSR_ASM_REC_FILE:
	case NSR_ASM_REC_HOLE:
	case NSR_ASM_REC_FILE_END:
	case NSR_ASM_REC_END:
	case NSR_ASM_REC_LONGSTR:
	case NSR_ASM_REC_DIRENTS:
		return NSR_ASM_MAX_META;
	default:
		return 0;
	}
}

/* asm_dirent_ok - is this a valid directory entry name? */
int asm_dirent_ok(const char *name, size_t len)
{
	if (len == 0 || len > NSR_ASM_NAME_MAX ||
	    memchr(name, '\0', len) != NULL || memchr(name, '/', len) != NULL)
		return 0;
	return !(len == 1 && name[0] == '.') &&
	       !(len == 2 && name[0] == '.' && name[1] == '.');
}

/* nsr_asm_ftype_name - printable name of a file type. */
const char *nsr_asm_ftype_name(int type)
{
	static const char *const names[] = {
		"?", "file", "dir", "symlink", "hardlink",
		"fifo", "chardev", "blockdev",
	};

	if (type < 0 || (size_t)type >= NSR_ARRAY_SIZE(names))
		return "?";
	return names[type];
}

/* asm_split_check - a whole file has no split fields; a head (part 0)
 * has no data of its own and a total; a part is within its file. */
int asm_split_check(const struct nsr_asm_file *f)
{
	if (f->nparts == 0)
		return f->part == 0 && f->part_off == 0 && f->total == 0
			       ? NSR_OK
			       : NSR_ERR_INVAL;
	if (f->type != NSR_ASM_REG || f->unsized ||
	    f->nparts > NSR_ASM_PARTS_MAX || f->part > f->nparts ||
	    f->total == 0)
		return NSR_ERR_INVAL;
	if (f->part == 0)
		return f->size == 0 && f->part_off == 0 ? NSR_OK
							: NSR_ERR_INVAL;
	if (f->size == 0 || f->part_off >= f->total ||
	    f->size > f->total - f->part_off)
		return NSR_ERR_INVAL;
	return NSR_OK;
}
