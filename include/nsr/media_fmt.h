/*
 * media_fmt.h - the on-volume record formats: the label record, the block
 * header and the chunks inside blocks, and the payloads of the begin and
 * end chunks.  Encoders cannot fail on valid input; decoders take hostile
 * bytes and return an error code, never crash.  The layout tables are in
 * nsr_volume(5); all integers are big-endian.
 *
 * A data block (exactly the label's block size) is:
 *   block header (MEDIA_FMT_BLOCK_HDR bytes, checksum over the header)
 *   chunk, chunk, ...   (`used` bytes in all)
 *   zero padding to the block size
 * A chunk is a header (MEDIA_FMT_CHUNK_HDR bytes) and `len` payload bytes;
 * its checksum covers the header and the payload, so damage is pinned to
 * one save set when the chunk header survives.  A chunk never crosses a
 * block boundary.
 */
#ifndef NSR_MEDIA_FMT_H
#define NSR_MEDIA_FMT_H

#include <stddef.h>
#include <stdint.h>

#include "nsr/vol.h"

/* Format versions: 1 (blocks may hold chunks of several sessions) and 2
 * (the label is version 2 and every block names the one save set whose
 * chunks it holds, so a reader can pass over other sessions' blocks by
 * their header).  New labels get MEDIA_FMT_VERSION; a volume keeps the
 * version of its label, and its blocks are written in that version. */
#define MEDIA_FMT_VERSION 2u
#define MEDIA_FMT_VERSION_MIN 1u
#define MEDIA_FMT_LABEL_MAGIC "NSRLABEL" /* 8 bytes */
#define MEDIA_FMT_BLOCK_MAGIC 0x4e535242u /* "NSRB" */
#define MEDIA_FMT_BLOCK_HDR 64u
#define MEDIA_FMT_CHUNK_HDR 24u
/* The begin payload is at most this long (strings at their maxima). */
#define MEDIA_FMT_SSHDR_MAX 1536u
#define MEDIA_FMT_SSTAIL_LEN 20u

enum media_fmt_kind {
	MEDIA_FMT_BEGIN = 1, /* payload: save-set header + span */
	MEDIA_FMT_DATA = 2,  /* payload: save-set data (continue) */
	MEDIA_FMT_END = 3    /* payload: save-set trailer */
};

/* Block flags (version 2). */
#define MEDIA_FMT_BLK_ONE_SS 0x1u /* every chunk is of save set `ssid` */

struct media_fmt_block {
	uint16_t version;    /* 1 or 2; 0 encodes MEDIA_FMT_VERSION */
	uint8_t volid[16];
	uint32_t file;	     /* tape file / AFTD session file number */
	uint32_t block_size; /* the whole block, == the label's */
	uint64_t seq;	     /* block number within that file */
	uint32_t used;	     /* chunk bytes after the header */
	uint32_t flags;	     /* MEDIA_FMT_BLK_*; 0 in version 1 */
	uint32_t ssid;	     /* with MEDIA_FMT_BLK_ONE_SS, else 0 */
};

struct media_fmt_chunk {
	uint32_t ssid;
	uint32_t seq; /* chunk number within the fragment, from 0 */
	uint8_t kind; /* enum media_fmt_kind */
	uint32_t len; /* payload bytes */
};

/* media_fmt_label_encode - the NSR_VOL_LABEL_SIZE-byte label record. */
void media_fmt_label_encode(const struct nsr_vol_label *lab, uint8_t *out);
/* media_fmt_label_decode - decode and check a label record of len bytes:
 * NSR_OK, NSR_ERR_TRUNCATED (short), NSR_ERR_NOTFOUND (not a label:
 * wrong magic), NSR_ERR_UNSUPPORTED (newer version), NSR_ERR_CHECKSUM,
 * NSR_ERR_CORRUPT (bad field: block size, unterminated name). */
int media_fmt_label_decode(const uint8_t *p, size_t len,
			   struct nsr_vol_label *out);

/* media_fmt_block_encode - write the block header (with its checksum);
 * a version 1 header carries neither flags nor ssid. */
void media_fmt_block_encode(const struct media_fmt_block *b, uint8_t *out);
/* media_fmt_block_decode - check a block of len bytes: magic, version,
 * checksum, block_size == len, used fits, flags known.  NSR_OK,
 * NSR_ERR_TRUNCATED, NSR_ERR_CORRUPT, NSR_ERR_CHECKSUM. */
int media_fmt_block_decode(const uint8_t *p, size_t len,
			   struct media_fmt_block *out);
/* media_fmt_block_head_decode - the same checks on a block header alone:
 * p holds at least MEDIA_FMT_BLOCK_HDR bytes of a record that is reclen
 * bytes long (a reader that looked at the header only). */
int media_fmt_block_head_decode(const uint8_t *p, size_t reclen,
				struct media_fmt_block *out);

/* media_fmt_chunk_encode - write a chunk header at out whose payload is
 * already at out + MEDIA_FMT_CHUNK_HDR (c->len bytes). */
void media_fmt_chunk_encode(const struct media_fmt_chunk *c, uint8_t *out);
/* media_fmt_chunk_put - like media_fmt_chunk_encode, but copies the
 * payload (c->len bytes) to out + MEDIA_FMT_CHUNK_HDR itself, checksumming
 * it on the way (one pass over the data). */
void media_fmt_chunk_put(const struct media_fmt_chunk *c, uint8_t *out,
			 const void *payload);
/* media_fmt_chunk_decode - the chunk at p (left bytes remain in the
 * block): NSR_OK with *payload set, NSR_ERR_TRUNCATED (header or payload
 * runs past left), NSR_ERR_CORRUPT (bad kind), NSR_ERR_CHECKSUM. */
int media_fmt_chunk_decode(const uint8_t *p, size_t left,
			   struct media_fmt_chunk *c, const uint8_t **payload);

/* media_fmt_sshdr_encode - begin payload into out (cap bytes, at least
 * MEDIA_FMT_SSHDR_MAX); returns its length. */
size_t media_fmt_sshdr_encode(const struct nsr_vol_sshdr *h,
			      const struct nsr_vol_span *sp, uint8_t *out);
/* media_fmt_sshdr_decode - NSR_OK, NSR_ERR_TRUNCATED, NSR_ERR_CORRUPT. */
int media_fmt_sshdr_decode(const uint8_t *p, size_t len,
			   struct nsr_vol_sshdr *h, struct nsr_vol_span *sp);
/* media_fmt_sstail_encode - end payload (MEDIA_FMT_SSTAIL_LEN bytes). */
void media_fmt_sstail_encode(const struct nsr_vol_sstail *t, uint8_t *out);
/* media_fmt_sstail_decode - NSR_OK, NSR_ERR_TRUNCATED, NSR_ERR_CORRUPT. */
int media_fmt_sstail_decode(const uint8_t *p, size_t len,
			    struct nsr_vol_sstail *t);

#endif /* NSR_MEDIA_FMT_H */
