/*
 * asm_int.h - internals shared by the save stream encoder and decoder:
 * the frame layout and the per-file checksum context.
 *
 * Frame (12 bytes, big-endian), followed by len payload bytes:
 *
 *	offset size meaning
 *	0      1    record type (enum nsr_asm_rec)
 *	1      1    flags, 0
 *	2      2    reserved, 0
 *	4      4    payload length
 *	8      4    CRC-32C of bytes 0..7, continued over the payload for
 *	            every record type except DATA
 */
#ifndef NSR_ASM_INT_H
#define NSR_ASM_INT_H

#include <stddef.h>
#include <stdint.h>

#include "nsr/asm.h"

/* Per-file checksum in progress. */
struct asm_ck {
	int alg;
	uint32_t crc;
	void *md; /* EVP_MD_CTX for SHA-256 */
};

/* asm_ck_len - digest length of alg, 0 if unknown. */
size_t asm_ck_len(int alg);
/* asm_ck_init - start a checksum (ck->md allocated once, reused). */
int asm_ck_init(struct asm_ck *ck, int alg);
/* asm_ck_update - add n bytes. */
void asm_ck_update(struct asm_ck *ck, const void *p, size_t n);
/* asm_ck_zeros - add len zero bytes (a hole). */
void asm_ck_zeros(struct asm_ck *ck, uint64_t len);
/* asm_ck_final - write the digest (asm_ck_len bytes) to out. */
int asm_ck_final(struct asm_ck *ck, uint8_t *out);
/* asm_ck_release - free the context. */
void asm_ck_release(struct asm_ck *ck);

/* asm_frame_put - fill a frame header (crc over bytes 0..7 only). */
void asm_frame_put(uint8_t *fr, int type, uint32_t len);
/* asm_max_len - payload bound of a record type, 0 if unknown type. */
uint32_t asm_max_len(int type);

#endif /* NSR_ASM_INT_H */
