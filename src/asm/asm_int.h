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

/* ---- SEALED records (enc_seal.c, dec_seal.c) -------------------- */

struct nsr_crypt;

/* The encoder's transform: plain data collected up to NSR_ASM_MAX_DATA
 * bytes, then compressed and/or encrypted into one SEALED record. */
struct asm_seal {
	int level;  /* zlib level, 0 = none */
	int cipher; /* enum nsr_asm_seal */
	uint8_t key[32];
	uint8_t id[8];
	struct nsr_crypt *c;
	uint8_t *plain; /* NSR_ASM_MAX_DATA bytes being collected */
	size_t fill;
	uint8_t *z; /* deflate output */
	size_t zcap;
	uint8_t *out; /* the record: frame + payload */
};

/* asm_seal_new - a transform for x.  NSR_ERR_INVAL, NSR_ERR_NOMEM. */
int asm_seal_new(struct asm_seal **out, const struct nsr_asm_xform *x);
/* asm_seal_free - free it, key wiped (NULL is fine). */
void asm_seal_free(struct asm_seal *s);
/* asm_seal_record - p[0..n) (1 to NSR_ASM_MAX_DATA bytes) as a record
 * in s->out, *len bytes with the frame: SEALED, or DATA when there is no
 * cipher and deflate did not make it smaller. */
int asm_seal_record(struct asm_seal *s, const uint8_t *p, size_t n,
		    size_t *len);

/* asm_frame_put - fill a frame header (crc over bytes 0..7 only). */
void asm_frame_put(uint8_t *fr, int type, uint32_t len);
/* asm_split_check - the rules of a FILE record's split fields (asm.h),
 * the same for encoder and decoder: NSR_OK or NSR_ERR_INVAL. */
int asm_split_check(const struct nsr_asm_file *f);
/* asm_max_len - payload bound of a record type, 0 if unknown type. */
uint32_t asm_max_len(int type);
/* asm_dirent_ok - may name[0..len) be a directory entry name (1 to 255
 * bytes, no NUL or '/', not "." or "..")? */
int asm_dirent_ok(const char *name, size_t len);


/* ---- the decoder, shared by dec.c and dec_resync.c ---------------- */

#include "nsr/buf.h"

/* The hunt window holds a whole FILE record wherever it starts. */
#define HUNT_CAP (2 * (NSR_ASM_FRAME_LEN + NSR_ASM_MAX_META))

/* A long path or link being collected from LONGSTR records. */
struct asm_long {
	char *s;	/* total + 1 bytes once started */
	uint32_t total; /* 0 = none since the last FILE */
	uint32_t got;
};

enum dec_state {
	DEC_HEADER,  /* expecting HEADER */
	DEC_BETWEEN, /* expecting FILE or END */
	DEC_IN_FILE, /* expecting DATA, HOLE or FILE_END */
	DEC_DONE,    /* END seen */
};

struct nsr_asm_dec {
	struct nsr_asm_dec_ops ops;
	void *ctx;
	uint32_t pss_master, pss_index; /* version 6 and 7 headers */
	int state;
	int err;
	uint64_t offset;     /* stream bytes consumed */
	uint64_t rec_offset; /* offset of the current record's frame */
	uint8_t frame[NSR_ASM_FRAME_LEN];
	size_t frame_fill;
	int in_payload;	     /* frame complete, reading payload */
	int type;
	uint32_t len, got;
	uint8_t meta[NSR_ASM_MAX_XATTR_REC];
	char xname[NSR_ASM_XATTR_NAME_MAX + 1];
	int file_xattrs; /* XATTR records of the current file */
	int file_data;	 /* DATA or HOLE seen: no more XATTR */
	/* the current header/file, decoded strings NUL-terminated */
	int ck_alg;
	int version;	     /* from the header, 0 if lost */
	struct asm_long lng[2]; /* [NSR_ASM_LONG_PATH - 1], [..._LINK - 1] */
	uint64_t long_start; /* offset of the first LONGSTR of the file */
	int path_long;	     /* the current file's path is lng[0].s */
	char client[NSR_ASM_NAME_MAX + 1];
	char name[NSR_ASM_PATH_MAX + 1];
	char path[NSR_ASM_PATH_MAX + 1];
	char link[NSR_ASM_PATH_MAX + 1];
	char user[NSR_ASM_NAME_MAX + 1];
	char group[NSR_ASM_NAME_MAX + 1];
	uint64_t file_size, file_done;
	int file_unsized;    /* size known at FILE_END (file_size: max) */
	int file_part;	     /* a part of a split file: no XATTR */
	struct asm_ck ck;
	struct nsr_asm_trailer tot;
	int cb_err;	     /* the error came from a callback */
	/* resynchronisation after damage (nsr_asm_dec_resync) */
	int resync;	     /* enabled */
	int damaged;	     /* damage seen: totals are not checked */
	int ck_guess;	     /* header lost: the checksum type is a guess */
	int hunting;	     /* looking for the next FILE or END record */
	int at_end;	     /* finish: no more input will come */
	uint8_t *win;	     /* hunt window, HUNT_CAP bytes */
	size_t win_len, win_pos;
	struct nsr_buf q;    /* bytes to decode before new input */
	size_t q_pos;
	/* the entry list of the current directory (DIRENTS) */
	int file_type;	     /* of the current file */
	int dir_listed;	     /* a DIRENTS record was seen */
	uint32_t dir_total, dir_next;
	char dname[NSR_ASM_NAME_MAX + 1]; /* the name being decoded */
	char dprev[NSR_ASM_NAME_MAX + 1]; /* the one before it */
	/* SEALED records (dec_seal.c) */
	uint8_t *sbuf;	     /* the record's payload */
	uint8_t *pbuf;	     /* its plain data */
	uint8_t *zbuf;	     /* decrypted zlib data */
	size_t scap, pcap, zcap; /* their sizes, grown as records need */
	struct nsr_crypt *crypt;
	int kid_state;	     /* 0 none asked, 1 known, -1 unknown */
	uint8_t kid[8];	     /* the id last asked for */
	uint8_t key[32];     /* its key when known */
	int file_nokey;	     /* this file's data is passed over */
	uint8_t nokey_id[8];
	/* A stream's file data is either all in clear (DATA, SEALED
	 * without a cipher) or all encrypted under one key: 0 not known
	 * yet, 1 in clear, 2 encrypted under seal_id. */
	int seal_mode;
	uint8_t seal_id[8];
};

/* asm_dec_seal_mode - a data record in clear (id NULL) or encrypted
 * under id: NSR_ERR_CORRUPT if the stream's earlier data was not. */
int asm_dec_seal_mode(struct nsr_asm_dec *d, const uint8_t *id);

/* asm_dec_seal_frame - a SEALED frame: room for its payload, and the
 * checks that need no payload. */
int asm_dec_seal_frame(struct nsr_asm_dec *d);
/* asm_dec_on_sealed - a complete SEALED record: decrypt, inflate and
 * pass the data on (or pass it over for want of the key). */
int asm_dec_on_sealed(struct nsr_asm_dec *d);
/* asm_dec_seal_free - release what dec_seal.c allocated. */
void asm_dec_seal_free(struct nsr_asm_dec *d);

/* asm_dec_fail - make rc the decoder's sticky error and return it. */
int asm_dec_fail(struct nsr_asm_dec *d, int rc);
/* asm_dec_cb_rc - a callback's non-zero return as a negative code. */
int asm_dec_cb_rc(struct nsr_asm_dec *d, int rc);
/* asm_dec_on_meta - check and dispatch a complete metadata record. */
int asm_dec_on_meta(struct nsr_asm_dec *d);
/* asm_dec_recoverable - may decoding go on after rc (resync on)? */
int asm_dec_recoverable(const struct nsr_asm_dec *d, int rc);
/* asm_dec_start_hunt - damage: report it and start looking for the next
 * intact record, from the byte after the damaged record's start. */
int asm_dec_start_hunt(struct nsr_asm_dec *d, int why, size_t frame_bytes);
/* asm_dec_hunt - scan the window; resume at an intact record. */
int asm_dec_hunt(struct nsr_asm_dec *d);
/* asm_dec_win_take - move input into the hunt window. */
size_t asm_dec_win_take(struct nsr_asm_dec *d, const uint8_t *c, size_t n);
/* asm_dec_drain - at the end of input: resume at records a damaged
 * length swallowed, and decode what is left. */
int asm_dec_drain(struct nsr_asm_dec *d);

#endif /* NSR_ASM_INT_H */
