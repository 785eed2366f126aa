/*
 * mmdb_pager.h - fixed 32 KB pages with checksums, a write-ahead log with
 * group commit, multi-version reads, a free list, checkpoints and recovery.
 * The layer under mmdb_btree.h; it knows nothing of page contents beyond
 * the common page header and the pager fields of page 0.
 *
 * Access goes through a view: a read view sees the last durable commit as
 * of mmdb_pager_read_begin() and keeps seeing it (pages it returned stay
 * valid) until mmdb_pager_read_end(), however many commits happen
 * meanwhile; any number of read views may be used from any threads.  The
 * one write view (mmdb_pager_write_begin() waits for it) sees its own
 * changes; pages it returns stay valid until the next dirty/alloc/free.
 *
 * Common page header (every page, big-endian):
 *   off size meaning
 *     0    4 CRC-32C of bytes 4..32767
 *     4    4 page number (catches misdirected writes)
 *     8    8 commit sequence number that last wrote the page
 *    16    1 page type (MMDB_PT_*)
 *    17    7 reserved, zero
 * Page 0 (MMDB_PT_META) from offset 24: see pager_int.h / nsr_mmdb(5).
 */
#ifndef NSR_MMDB_PAGER_H
#define NSR_MMDB_PAGER_H

#include <stddef.h>
#include <stdint.h>

#include "nsr/buf.h"

struct mmdb_pager;
struct mmdb_view;
struct mmdb_vfs;

#define MMDB_PAGE_SIZE 32768u
#define MMDB_PAGE_HDR 24u
/* Bytes of page 0 from this offset on belong to the layer above. */
#define MMDB_META_USER 128u

enum mmdb_page_type {
	MMDB_PT_META = 1,
	MMDB_PT_LEAF = 2,
	MMDB_PT_INTERIOR = 3,
	MMDB_PT_FREE = 4
};

#define MMDB_PAGER_READONLY 0x1
#define MMDB_PAGER_CREATE 0x2

/*
 * mmdb_pager_open - open dir/mmdb and dir/mmdb.wal through vfs, replaying
 * committed WAL transactions.  wal_max: checkpoint once the WAL is larger
 * (bytes).  NSR_ERR_NOTFOUND without CREATE when absent, NSR_ERR_CORRUPT /
 * NSR_ERR_CHECKSUM when page 0 is damaged, NSR_ERR_BUSY when locked.
 */
int mmdb_pager_open(const struct mmdb_vfs *vfs, const char *dir,
		    unsigned flags, uint64_t wal_max, struct mmdb_pager **out);
/* mmdb_pager_close - checkpoint if healthy, close files, free everything. */
void mmdb_pager_close(struct mmdb_pager *p);
/* mmdb_pager_set_cache - keep at most about pages page versions in memory
 * (0 = unbounded).  Only pages unchanged since the last checkpoint can be
 * dropped, so the WAL limit also bounds what stays pinned. */
void mmdb_pager_set_cache(struct mmdb_pager *p, size_t pages);
/* mmdb_pager_error - NSR_OK or the sticky error (NSR_ERR_STATE if set). */
int mmdb_pager_error(const struct mmdb_pager *p);
/* mmdb_pager_dbid - the 16-byte database id chosen at creation. */
const uint8_t *mmdb_pager_dbid(const struct mmdb_pager *p);

/* mmdb_pager_read_begin - a read view of the last durable commit. */
int mmdb_pager_read_begin(struct mmdb_pager *p, struct mmdb_view **out);
/* mmdb_pager_read_end - end a read view; NULL is a no-op. */
void mmdb_pager_read_end(struct mmdb_view *v);
/* mmdb_pager_write_begin - wait for the writer slot, open the write view. */
int mmdb_pager_write_begin(struct mmdb_pager *p, struct mmdb_view **out);
/* mmdb_pager_commit - write the view's pages to the WAL, release the writer
 * slot and wait until an fsync covers them (one fsync serves every commit
 * waiting at that time).  Frees v.  After an I/O error the pager is in the
 * sticky error state. */
int mmdb_pager_commit(struct mmdb_view *v);
/* mmdb_pager_commit_undo - the same; undo(arg) (may be NULL) is called if
 * the commit fails while the writer slot is still held, so the layer above
 * can roll back its own in-memory state before the next writer starts. */
int mmdb_pager_commit_undo(struct mmdb_view *v, void (*undo)(void *),
			   void *arg);
/* mmdb_pager_rollback - drop the write view's changes and free it. */
void mmdb_pager_rollback(struct mmdb_view *v);

/* mmdb_pager_get - page pgno as seen by v (read-only). */
int mmdb_pager_get(struct mmdb_view *v, uint32_t pgno, const uint8_t **page);
/* mmdb_pager_dirty - writable copy of pgno in the write view. */
int mmdb_pager_dirty(struct mmdb_view *v, uint32_t pgno, uint8_t **page);
/* mmdb_pager_alloc - a zeroed page of type (free list first, else the file
 * grows); its header is filled in. */
int mmdb_pager_alloc(struct mmdb_view *v, uint8_t type, uint32_t *pgno,
		     uint8_t **page);
/* mmdb_pager_free - put pgno on the free list. */
int mmdb_pager_free(struct mmdb_view *v, uint32_t pgno);

/* mmdb_pager_npages - pages in the database as seen by v (0 on error). */
uint32_t mmdb_pager_npages(struct mmdb_view *v);
/* mmdb_pager_view_seq - commit sequence the view is based on. */
uint64_t mmdb_pager_view_seq(const struct mmdb_view *v);
/* mmdb_pager_view_pager - the pager a view belongs to. */
struct mmdb_pager *mmdb_pager_view_pager(const struct mmdb_view *v);

/*
 * mmdb_pager_check_free - walk the free list of v: every entry in range,
 * type FREE, not seen twice, count matching; marks each in seen[] (one
 * byte per page; a page already marked is reported).  Appends problems to
 * report; returns the number of problems found or < 0 on error.
 */
int mmdb_pager_check_free(struct mmdb_view *v, uint8_t *seen,
			  struct nsr_buf *report);

struct mmdb_pager_stats {
	uint64_t durable_seq;
	uint64_t commits;
	uint64_t fsyncs;
	uint64_t checkpoints;
	uint64_t wal_bytes;
	uint64_t db_bytes;
	uint32_t npages;
	uint32_t free_pages;
};
/* mmdb_pager_stats - counters (npages/free_pages of the durable state). */
void mmdb_pager_stats(struct mmdb_pager *p, struct mmdb_pager_stats *st);

/* mmdb_page_verify - check a page image's CRC and page number: NSR_OK,
 * NSR_ERR_CHECKSUM or NSR_ERR_CORRUPT. */
int mmdb_page_verify(const uint8_t *page, uint32_t pgno);

#endif /* NSR_MMDB_PAGER_H */
