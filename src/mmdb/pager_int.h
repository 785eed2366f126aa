/*
 * pager_int.h - on-disk layouts private to the media database pager
 * (published in nsr_mmdb(5)).  All integers are big-endian.
 *
 * Page 0 (type MMDB_PT_META), after the common 24-byte header:
 *   off size meaning
 *    24    8 magic "NSRMMDB\0"
 *    32    4 format version (1)
 *    36    4 page size (32768)
 *    40    4 pages in the database (including page 0)
 *    44    4 first free page (0 = free list empty)
 *    48    4 free pages on the list
 *    52    4 reserved
 *    56   16 database id (random at creation)
 *    72   56 reserved, zero
 *   128    . owned by the B+tree layer (tree catalog)
 *
 * Free page (type MMDB_PT_FREE): offset 24, 4 bytes: next free page.
 *
 * WAL file header (64 bytes, then zero padding to offset 4096 where the
 * first frame starts; each transaction starts at a multiple of 4096, the
 * bytes after a commit frame up to the boundary are zero):
 *     0    8 magic "NSRMWAL1"
 *     8    4 version (1)
 *    12    4 page size
 *    16    8 salt (changes at every WAL reset)
 *    24    8 commit sequence number of the last checkpoint
 *    32   28 reserved, zero
 *    60    4 CRC-32C of bytes 0..59
 * WAL frame: a 32-byte header followed by one page image:
 *     0    4 magic "FRAM"
 *     4    4 page number
 *     8    8 commit sequence number
 *    16    8 salt (must equal the header's)
 *    24    4 flags: 1 = last frame of its transaction (commit)
 *    28    4 CRC-32C chained: seeded by the previous frame's CRC (the
 *            first frame by the CRC of the salt), over bytes 0..27 of this
 *            header and then the page image
 */
#ifndef NSR_MMDB_PAGER_INT_H
#define NSR_MMDB_PAGER_INT_H

#define MMDB_MAGIC "NSRMMDB"	/* 8 bytes with the NUL */
#define MMDB_VERSION 1u

#define META_MAGIC 24
#define META_VERSION 32
#define META_PAGESIZE 36
#define META_NPAGES 40
#define META_FREEHEAD 44
#define META_FREECOUNT 48
#define META_DBID 56

#define PH_CRC 0
#define PH_PGNO 4
#define PH_LSN 8
#define PH_TYPE 16

#define FREE_NEXT 24

#define WAL_MAGIC "NSRMWAL1"
#define WAL_HDR_SIZE 64u
/* The first frame and every transaction start on this boundary, so that
 * a torn write of a new transaction never touches a sector that holds
 * synced data (no "powersafe overwrite" assumption). */
#define WAL_ALIGN 4096u
#define WAL_FRAME_HDR 32u
#define WAL_FRAME_SIZE (WAL_FRAME_HDR + MMDB_PAGE_SIZE)
#define WAL_FRAME_MAGIC 0x4652414du /* "FRAM" */
#define WAL_FLAG_COMMIT 0x1u

#define MMDB_DB_NAME "mmdb"
#define MMDB_WAL_NAME "mmdb.wal"

#endif /* NSR_MMDB_PAGER_INT_H */
