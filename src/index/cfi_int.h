/*
 * cfi_int.h - on-disk formats of the client file index, private to
 * src/index (published in nsr_index(5)).  All integers big-endian.
 *
 * Record file ss-<ssid>.rec:
 *	offset size meaning
 *	0      4    magic "NCFI" (0x4E434649)
 *	4      2    version (1)
 *	6      2    reserved, 0
 *	8      8    ssid
 *	16     8    savetime (signed epoch seconds)
 *	24     4    CRC-32C of bytes 0..23
 *	28     ...  records
 * Record:
 *	0      4    payload length L (<= NSR_CFI_MAX_RECORD)
 *	4      L    payload
 *	4+L    4    CRC-32C of the payload
 * Payload:
 *	0      1    type (enum nsr_asm_ftype)
 *	1      3    reserved, 0
 *	4      4    mode (<= 07777)
 *	8      4    uid
 *	12     4    gid
 *	16     8    size
 *	24     8    mtime seconds (signed)
 *	32     4    mtime nanoseconds (< 1e9)
 *	36     8    stream offset of the file record
 *	44     2    path length P (1..65535, NSR_ASM_LONGPATH_MAX)
 *	46     P    path bytes (no NUL)
 *
 * Catalogue file "catalog":
 *	0      4    magic "NCAT" (0x4E434154)
 *	4      2    version (1)
 *	6      2    reserved, 0
 *	8      4    count N (<= CFI_MAX_SAVESETS)
 *	12     ...  N save sets:
 *	            8 ssid, 8 savetime, 8 entries, 8 committed length of the
 *	            record file, 2 name length, name bytes (<= 4095)
 *	end-4  4    CRC-32C of everything before
 */
#ifndef NSR_CFI_INT_H
#define NSR_CFI_INT_H

#include <stddef.h>
#include <stdint.h>

#include "nsr/buf.h"
#include "nsr/cfi.h"

#define CFI_REC_MAGIC 0x4E434649u
#define CFI_CAT_MAGIC 0x4E434154u
#define CFI_VERSION 1
#define CFI_HDR_LEN 28
#define CFI_FIXED_LEN 46
#define CFI_PATH_MAX 65535 /* as NSR_ASM_LONGPATH_MAX: any saved path */
#define CFI_NAME_MAX 4095  /* a save set name in the catalogue */
#define CFI_MAX_SAVESETS 1000000u

/* A save set in the catalogue (owned strings). */
struct cfi_ss {
	uint64_t ssid;
	int64_t savetime;
	uint64_t entries;
	uint64_t length; /* committed bytes of the record file */
	char *name;
};

/* cfi_hdr_put - the 28-byte record file header. */
void cfi_hdr_put(uint8_t *out, uint64_t ssid, int64_t savetime);
/* cfi_hdr_get - check and decode it: NSR_OK, NSR_ERR_CORRUPT,
 * NSR_ERR_CHECKSUM, NSR_ERR_UNSUPPORTED. */
int cfi_hdr_get(const uint8_t *in, uint64_t *ssid, int64_t *savetime);
/* cfi_rec_put - append the framed record of e to out. */
int cfi_rec_put(struct nsr_buf *out, const struct nsr_cfi_entry *e);
/* cfi_rec_get - decode one payload (frame and CRC already checked); path
 * is written NUL-terminated to pathbuf (CFI_PATH_MAX + 1 bytes). */
int cfi_rec_get(const uint8_t *p, size_t len, struct nsr_cfi_entry *e,
		char *pathbuf);
/* cfi_cat_put - encode a catalogue of n save sets into out. */
int cfi_cat_put(struct nsr_buf *out, const struct cfi_ss *ss, size_t n);
/* cfi_cat_get - decode a catalogue; *ss is malloc'ed (free with
 * cfi_ss_free). */
int cfi_cat_get(const uint8_t *p, size_t n, struct cfi_ss **ss, size_t *count);
/* cfi_ss_free - free n save sets and the array. */
void cfi_ss_free(struct cfi_ss *ss, size_t n);

#endif /* NSR_CFI_INT_H */
