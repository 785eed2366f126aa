/*
 * pager.c - the media database pager: 32 KB pages with checksums, a redo
 * write-ahead log with group commit, multi-version pages for concurrent
 * readers, the free list, checkpoints and crash recovery.  It owns the
 * database file, the WAL file and every page image in memory.
 *
 * Invariants:
 *  1. A page image in memory or on disk carries a CRC-32C over bytes
 *     4..32767 and its own page number; both are checked whenever a page is
 *     read from a file (db or WAL), never trusted.
 *  2. The db file is written only by a checkpoint or by recovery, and only
 *     with pages whose transaction is already durable in the WAL.
 *  3. mmdb_pager_commit() returns NSR_OK only after an fsync of the WAL
 *     that covers every frame of the transaction (the commit frame last).
 *  4. A transaction in the WAL counts only if every frame of it, up to and
 *     including its commit frame, has the current salt and a valid chained
 *     CRC and names a page below the database's page count as of that
 *     transaction; recovery stops at the first frame that fails, so a torn
 *     or unsynced tail is ignored as a whole and no transaction is half
 *     applied.
 *  5. The WAL is reset (new salt; truncated only at open and close, else
 *     its old frames stay as a stale tail) only after the db file holding
 *     every page of it has been fsynced.
 *  6. A read view with sequence S sees, for every page, the newest version
 *     with commit sequence <= S; S is always a durable commit.  A version
 *     is dropped only when a newer one exists with a sequence <= every live
 *     read view's and <= the durable sequence, so a view's pages stay valid
 *     until the view ends.
 *  7. map[pgno] == NULL means the db file holds the version every view
 *     wants: the page has not changed since open, or it was dropped from
 *     the cache after a checkpoint wrote it (invariant 10).
 *  8. At most one write view exists (the writer slot); it sees the newest
 *     versions, including those of commits whose fsync is still pending.
 *  9. After an I/O error in commit, sync or checkpoint, p->err is set and
 *     every later call fails with NSR_ERR_STATE until the pager is closed
 *     and reopened (recovery then decides what survived).
 * 10. A page is dropped from the cache only if its single version is in the
 *     db file, no write view pins it and no view could hold a pointer to
 *     it (retired pages are freed after every older view has ended).
 *
 * Transaction states (write view):
 *
 *         mmdb_pager_write_begin()          mmdb_pager_dirty/alloc/free
 *   IDLE -------------------------> WRITER ----------------------> DIRTY
 *    ^  ^                             |                              |
 *    |  +-- mmdb_pager_rollback() ----+------------------------------+
 *    |                                                               |
 *    |                          mmdb_pager_commit(): wal_append(),   |
 *    |                          install(), writer slot released      v
 *    |   sync_to(): one fsync by the group leader             WAL_WRITTEN
 *    +---------- DURABLE <-------------------------------------------+
 *                (durable_seq advanced: new read views see it)
 *
 *   any I/O error in wal_append / sync_to / checkpoint --> ERROR (sticky)
 */
#include "nsr/compat.h"

#include <pthread.h>
#include <sys/random.h>

#include "nsr/buf.h"
#include "nsr/bytes.h"
#include "nsr/crc32c.h"
#include "nsr/cmp.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/mmdb_pager.h"
#include "nsr/mmdb_vfs.h"

#include "pager_int.h"

/* One version of one page. */
struct pg {
	struct pg *older;
	uint64_t seq;
	uint8_t *data;
	uint8_t ref;		/* clock bit: used since the hand passed */
	uint64_t rid;		/* retirement id, 0 = in the map */
};

/* A version taken out of the map, freed once every view that could have
 * seen it has ended (views with gen <= the stamp). */
struct retired {
	struct pg *v;
	uint64_t gen;
	uint64_t rid;		/* stale if v->rid differs: v came back */
	uint32_t pgno;
};

/* Dirty page table of the write view (open addressing, pgno + 1 keys). */
struct dirty {
	uint32_t key;	/* pgno + 1, 0 = empty slot */
	uint8_t *data;
};

struct mmdb_view {
	struct mmdb_pager *p;
	int writable;
	uint64_t seq;
	uint64_t gen;			/* order of creation (eviction) */
	uint32_t npages;		/* read views: pages at seq */
	struct mmdb_view *next, *prev;	/* live read views */
	struct dirty *tab;
	size_t tab_cap, ndirty;
};

struct mmdb_pager {
	const struct mmdb_vfs *vfs;
	struct mmdb_file *db, *wal;
	unsigned flags;
	uint64_t wal_max;
	uint8_t dbid[16];

	pthread_mutex_t mu;		/* map, readers, seqs, ckpt list */
	struct pg **map;
	uint32_t map_cap;
	struct mmdb_view *readers;
	uint64_t durable_seq;		/* visible to new read views */
	uint64_t written_seq;		/* in the WAL (maybe unsynced) */
	uint8_t *ckpt_mark;		/* per page: changed since checkpoint */
	uint8_t *pin;			/* per page: in the write view, keep */
	struct pg **retd;		/* per page: retired, still allocated */
	uint64_t rid_next;
	uint32_t *ckpt;
	size_t nckpt, ckpt_cap;

	pthread_mutex_t wmu;		/* writer slot */
	pthread_cond_t wcond;
	int writer_busy;

	pthread_mutex_t smu;		/* group commit */
	pthread_cond_t scond;
	int syncing;
	uint64_t synced_seq;

	/* WAL append state: only the writer slot holder touches these. */
	uint64_t wal_end;
	uint64_t wal_salt;
	uint32_t wal_crc;
	uint8_t *wal_buf;		/* wal_append's frames, kept */

	int err;			/* sticky; read under mu */
	uint64_t n_commits, n_fsyncs, n_ckpt;

	/* bounded cache (under mu): clock eviction of clean pages */
	size_t cache_max;		/* 0 = unbounded */
	size_t ncached;			/* versions in the map */
	uint32_t hand;
	uint64_t gen;			/* last view generation handed out */
	uint64_t writer_gen;		/* the write view's, 0 = none */
	struct retired *ret;
	size_t nret, cret;
};

/* ---- small helpers --------------------------------------------------- */

/* page_seal - set page number and LSN, then the CRC of a page image. */
static void page_seal(uint8_t *page, uint32_t pgno, uint64_t lsn)
{
	nsr_put_u32(page + PH_PGNO, pgno);
	nsr_put_u64(page + PH_LSN, lsn);
	nsr_put_u32(page + PH_CRC,
		    nsr_crc32c(0, page + 4, MMDB_PAGE_SIZE - 4));
}

/* mmdb_page_verify - check the CRC and page number of a page image. */
int mmdb_page_verify(const uint8_t *page, uint32_t pgno)
{
	if (nsr_get_u32(page + PH_CRC) !=
	    nsr_crc32c(0, page + 4, MMDB_PAGE_SIZE - 4))
		return NSR_ERR_CHECKSUM;
	if (nsr_get_u32(page + PH_PGNO) != pgno)
		return NSR_ERR_CORRUPT;
	return NSR_OK;
}

/* set_err - enter the sticky error state (first error wins). */
static void set_err(struct mmdb_pager *p, int rc)
{
	pthread_mutex_lock(&p->mu);
	if (p->err == NSR_OK)
		p->err = rc;
	pthread_mutex_unlock(&p->mu);
}

/* mmdb_pager_error - NSR_ERR_STATE once an I/O error has been seen. */
int mmdb_pager_error(const struct mmdb_pager *p)
{
	struct mmdb_pager *mp = (struct mmdb_pager *)p;
	int err;

	pthread_mutex_lock(&mp->mu);
	err = mp->err;
	pthread_mutex_unlock(&mp->mu);
	return err == NSR_OK ? NSR_OK : NSR_ERR_STATE;
}

/* mmdb_pager_dbid - the database id. */
const uint8_t *mmdb_pager_dbid(const struct mmdb_pager *p)
{
	return p->dbid;
}

/* page_new - allocate one page buffer through the vfs. */
static uint8_t *page_new(struct mmdb_pager *p)
{
	return mmdb_vfs_alloc(p->vfs, MMDB_PAGE_SIZE);
}

/* map_reserve - make map[] hold pgno (locked). */
static int map_reserve(struct mmdb_pager *p, uint32_t pgno)
{
	uint32_t ncap;
	struct pg **nm;
	uint8_t *nk;

	if (pgno < p->map_cap)
		return NSR_OK;
	ncap = p->map_cap ? p->map_cap : 64;
	while (ncap <= pgno)
		ncap *= 2;
	nm = realloc(p->map, ncap * sizeof(*nm));
	if (!nm)
		return NSR_ERR_NOMEM;
	memset(nm + p->map_cap, 0, (ncap - p->map_cap) * sizeof(*nm));
	p->map = nm;
	nk = realloc(p->ckpt_mark, ncap);
	if (!nk)
		return NSR_ERR_NOMEM;
	memset(nk + p->map_cap, 0, ncap - p->map_cap);
	p->ckpt_mark = nk;
	nk = realloc(p->pin, ncap);
	if (!nk)
		return NSR_ERR_NOMEM;
	memset(nk + p->map_cap, 0, ncap - p->map_cap);
	p->pin = nk;
	nm = realloc(p->retd, ncap * sizeof(*nm));
	if (!nm)
		return NSR_ERR_NOMEM;
	memset(nm + p->map_cap, 0, (ncap - p->map_cap) * sizeof(*nm));
	p->retd = nm;
	p->map_cap = ncap;
	return NSR_OK;
}

/* ---- WAL ------------------------------------------------------------- */

/* wal_seed - the CRC seed of the first frame for a salt. */
static uint32_t wal_seed(uint64_t salt)
{
	uint8_t b[8];

	nsr_put_u64(b, salt);
	return nsr_crc32c(0, b, sizeof(b));
}

/* wal_reset - write a fresh WAL header (salt, ckpt seq), truncate, sync. */
static int wal_reset(struct mmdb_pager *p, uint64_t salt, uint64_t seq,
		     int shrink)
{
	uint8_t h[WAL_HDR_SIZE];
	int rc = NSR_OK;

	memset(h, 0, sizeof(h));
	memcpy(h, WAL_MAGIC, 8);
	nsr_put_u32(h + 8, 1);
	nsr_put_u32(h + 12, MMDB_PAGE_SIZE);
	nsr_put_u64(h + 16, salt);
	nsr_put_u64(h + 24, seq);
	nsr_put_u32(h + 60, nsr_crc32c(0, h, 60));
	/* Without shrink the old frames stay as a stale tail (their salt no
	 * longer matches) and later appends overwrite blocks in place, so
	 * the syncs need no size change; close and open shrink the file. */
	if (shrink)
		rc = p->vfs->truncate(p->wal, 0);
	if (rc == NSR_OK)
		rc = p->vfs->write(p->wal, h, sizeof(h), 0);
	if (rc == NSR_OK && shrink)
		rc = p->vfs->truncate(p->wal, WAL_ALIGN);
	if (rc == NSR_OK)
		rc = p->vfs->sync(p->wal);
	if (rc != NSR_OK)
		return rc;
	p->wal_salt = salt;
	p->wal_crc = wal_seed(salt);
	p->wal_end = WAL_ALIGN;
	return NSR_OK;
}

/* wal_align - round a WAL offset up to the transaction boundary. */
static uint64_t wal_align(uint64_t off)
{
	return (off + WAL_ALIGN - 1) / WAL_ALIGN * WAL_ALIGN;
}

/* frame_hdr - fill a frame header and advance the running CRC. */
static void frame_hdr(struct mmdb_pager *p, uint8_t *h, uint32_t pgno,
		      uint64_t seq, int commit, const uint8_t *page)
{
	uint32_t crc;

	nsr_put_u32(h, WAL_FRAME_MAGIC);
	nsr_put_u32(h + 4, pgno);
	nsr_put_u64(h + 8, seq);
	nsr_put_u64(h + 16, p->wal_salt);
	nsr_put_u32(h + 24, commit ? WAL_FLAG_COMMIT : 0);
	crc = nsr_crc32c(p->wal_crc, h, 28);
	crc = nsr_crc32c(crc, page, MMDB_PAGE_SIZE);
	nsr_put_u32(h + 28, crc);
	p->wal_crc = crc;
}

/* Where recovery found the newest committed copy of a page. */
struct rec_ent {
	uint32_t pgno;
	uint64_t off;
};

/* rec_note - remember frame offset off for pgno in a pending list. */
static int rec_note(struct rec_ent **v, size_t *n, size_t *cap,
		    uint32_t pgno, uint64_t off)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		struct rec_ent *nv = realloc(*v, nc * sizeof(*nv));

		if (!nv)
			return NSR_ERR_NOMEM;
		*v = nv;
		*cap = nc;
	}
	(*v)[*n].pgno = pgno;
	(*v)[*n].off = off;
	(*n)++;
	return NSR_OK;
}

/* ro_install - read-only recovery: a committed WAL page becomes the
 * in-memory base version of pgno (the db file is not written). */
static int ro_install(struct mmdb_pager *p, uint32_t pgno, const uint8_t *pg)
{
	struct pg *v;
	int rc;

	pthread_mutex_lock(&p->mu);
	rc = map_reserve(p, pgno);
	if (rc == NSR_OK && p->map[pgno]) {
		memcpy(p->map[pgno]->data, pg, MMDB_PAGE_SIZE);
	} else if (rc == NSR_OK) {
		v = malloc(sizeof(*v));
		if (v)
			v->data = page_new(p);
		if (!v || !v->data) {
			free(v);
			rc = NSR_ERR_NOMEM;
		} else {
			memcpy(v->data, pg, MMDB_PAGE_SIZE);
			v->older = NULL;
			v->seq = 0;
			v->ref = 1;
			v->rid = 0;
			p->map[pgno] = v;
			p->ncached++;
			/* not in the db file: never evict it */
			p->ckpt_mark[pgno] = 1;
		}
	}
	pthread_mutex_unlock(&p->mu);
	return rc;
}

/* meta_npages - the page count a verified meta page pg states, or
 * UINT32_MAX when pg is no meta page. */
static uint32_t meta_npages(const uint8_t *pg)
{
	if (pg[PH_TYPE] != MMDB_PT_META || nsr_get_u32(pg + META_NPAGES) == 0)
		return UINT32_MAX;
	return nsr_get_u32(pg + META_NPAGES);
}

/* db_npages - the page count of the db file's meta page (fr is a page
 * buffer to read it into), or UINT32_MAX when it cannot be read. */
static uint32_t db_npages(struct mmdb_pager *p, uint8_t *fr)
{
	size_t got = 0;

	if (p->vfs->read(p->db, fr, MMDB_PAGE_SIZE, 0, &got) != NSR_OK ||
	    got < MMDB_PAGE_SIZE || mmdb_page_verify(fr, 0) != NSR_OK)
		return UINT32_MAX;
	return meta_npages(fr);
}

/* wal_recover - replay committed WAL transactions into the db file (or,
 * read-only, into memory), then reset the WAL.  Sets p->durable_seq.
 * A frame naming a page at or past the end of the database as its
 * transaction leaves it (the meta page's count: a transaction that grows
 * the database writes the meta page, its first frame, as pages are in
 * order) ends the replay there like a frame that fails its checksum
 * (invariant 4): no writer of ours made it, and obeying it would grow
 * the file and the page map to any size a damaged WAL names. */
static int wal_recover(struct mmdb_pager *p)
{
	uint8_t h[WAL_HDR_SIZE];
	uint8_t *fr = NULL;
	struct rec_ent *pend = NULL, *done = NULL;
	size_t npend = 0, cpend = 0, ndone = 0, cdone = 0, got;
	uint64_t salt, seq = 0, off, wal_size, txseq = 0;
	uint8_t fr_hdr[WAL_FRAME_HDR];
	uint32_t crc, np = UINT32_MAX, np_tx = UINT32_MAX, pgno;
	int rc;

	rc = p->vfs->size(p->wal, &wal_size);
	if (rc != NSR_OK)
		return rc;
	rc = p->vfs->read(p->wal, h, sizeof(h), 0, &got);
	if (rc != NSR_OK)
		return rc;
	if (got < sizeof(h) || memcmp(h, WAL_MAGIC, 8) != 0 ||
	    nsr_get_u32(h + 60) != nsr_crc32c(0, h, 60) ||
	    nsr_get_u32(h + 12) != MMDB_PAGE_SIZE) {
		/* Never completed its first reset: nothing was committed
		 * through it (invariant 5), start a new one. */
		if (getrandom(&salt, sizeof(salt), 0) != sizeof(salt))
			salt = 0x6d6d6462;
		if (p->flags & MMDB_PAGER_READONLY)
			return got == 0 ? NSR_OK : NSR_ERR_CORRUPT;
		return wal_reset(p, salt, 0, 1);
	}
	salt = nsr_get_u64(h + 16);
	seq = nsr_get_u64(h + 24);
	fr = page_new(p);
	if (!fr) {
		rc = NSR_ERR_NOMEM;
		goto out;
	}
	np = np_tx = db_npages(p, fr);
	crc = wal_seed(salt);
	for (off = WAL_ALIGN; off + WAL_FRAME_SIZE <= wal_size;
	     off = (nsr_get_u32(fr_hdr + 24) & WAL_FLAG_COMMIT)
			   ? wal_align(off + WAL_FRAME_SIZE)
			   : off + WAL_FRAME_SIZE) {
		uint8_t *fh = fr_hdr;
		uint32_t c;

		rc = p->vfs->read(p->wal, fh, WAL_FRAME_HDR, off, &got);
		if (rc != NSR_OK)
			goto out;
		if (got < WAL_FRAME_HDR || nsr_get_u32(fh) != WAL_FRAME_MAGIC ||
		    nsr_get_u64(fh + 16) != salt)
			break;
		rc = p->vfs->read(p->wal, fr, MMDB_PAGE_SIZE,
				  off + WAL_FRAME_HDR, &got);
		if (rc != NSR_OK)
			goto out;
		if (got < MMDB_PAGE_SIZE)
			break;
		c = nsr_crc32c(crc, fh, 28);
		c = nsr_crc32c(c, fr, MMDB_PAGE_SIZE);
		if (c != nsr_get_u32(fh + 28) ||
		    mmdb_page_verify(fr, nsr_get_u32(fh + 4)) != NSR_OK)
			break;
		if (npend && nsr_get_u64(fh + 8) != txseq)
			break;
		pgno = nsr_get_u32(fh + 4);
		if (npend == 0)
			np_tx = np; /* a transaction begins */
		if (pgno == 0)
			np_tx = meta_npages(fr);
		if (pgno >= np_tx)
			break;
		crc = c;
		txseq = nsr_get_u64(fh + 8);
		rc = rec_note(&pend, &npend, &cpend, pgno, off);
		if (rc != NSR_OK)
			goto out;
		if (nsr_get_u32(fh + 24) & WAL_FLAG_COMMIT) {
			np = np_tx;
			for (size_t i = 0; i < npend; i++) {
				rc = rec_note(&done, &ndone, &cdone,
					      pend[i].pgno, pend[i].off);
				if (rc != NSR_OK)
					goto out;
			}
			npend = 0;
			seq = txseq;
		}
	}
	/* Apply in WAL order: later frames of a page overwrite earlier. */
	for (size_t i = 0; i < ndone; i++) {
		rc = p->vfs->read(p->wal, fr, MMDB_PAGE_SIZE,
				  done[i].off + WAL_FRAME_HDR, &got);
		if (rc == NSR_OK && got < MMDB_PAGE_SIZE)
			rc = NSR_ERR_IO;
		if (rc == NSR_OK && (p->flags & MMDB_PAGER_READONLY))
			rc = ro_install(p, done[i].pgno, fr);
		else if (rc == NSR_OK)
			rc = p->vfs->write(p->db, fr, MMDB_PAGE_SIZE,
					   (uint64_t)done[i].pgno *
						   MMDB_PAGE_SIZE);
		if (rc != NSR_OK)
			goto out;
	}
	if (ndone && !(p->flags & MMDB_PAGER_READONLY)) {
		rc = p->vfs->sync(p->db);
		if (rc != NSR_OK)
			goto out;
	}
	rc = NSR_OK;
	if (!(p->flags & MMDB_PAGER_READONLY) &&
	    (ndone || wal_size != WAL_ALIGN))
		rc = wal_reset(p, salt + 1, seq, 1);
	else {
		p->wal_salt = salt;
		p->wal_crc = wal_seed(salt);
		p->wal_end = WAL_ALIGN;
	}
out:
	p->durable_seq = p->written_seq = p->synced_seq = seq;
	free(fr);
	free(pend);
	free(done);
	return rc;
}

/* ---- open / close ---------------------------------------------------- */

/* db_create - make dir/mmdb atomically: page 0 into mmdb.new, sync,
 * rename, sync the directory.  A crash leaves no db or a valid one. */
static int db_create(struct mmdb_pager *p, const char *dir,
		     const char *dbpath)
{
	char *tmp = nsr_path_join(dir, MMDB_DB_NAME ".new");
	struct mmdb_file *f = NULL;
	uint8_t *pg = page_new(p);
	int rc = NSR_ERR_NOMEM;

	if (!pg || !tmp)
		goto out;
	memset(pg, 0, MMDB_PAGE_SIZE);
	pg[PH_TYPE] = MMDB_PT_META;
	memcpy(pg + META_MAGIC, MMDB_MAGIC, 8);
	nsr_put_u32(pg + META_VERSION, MMDB_VERSION);
	nsr_put_u32(pg + META_PAGESIZE, MMDB_PAGE_SIZE);
	nsr_put_u32(pg + META_NPAGES, 1);
	if (getrandom(pg + META_DBID, 16, 0) != 16)
		memset(pg + META_DBID, 0x5a, 16);
	page_seal(pg, 0, 0);
	rc = p->vfs->open(p->vfs, tmp, MMDB_VFS_CREATE, &f);
	if (rc == NSR_OK)
		rc = p->vfs->truncate(f, 0);
	if (rc == NSR_OK)
		rc = p->vfs->write(f, pg, MMDB_PAGE_SIZE, 0);
	if (rc == NSR_OK)
		rc = p->vfs->sync(f);
	if (rc == NSR_OK)
		rc = p->vfs->rename(p->vfs, tmp, dbpath);
	if (rc == NSR_OK)
		rc = p->vfs->sync_dir(p->vfs, dir);
out:
	if (f)
		p->vfs->close(f);
	free(tmp);
	free(pg);
	return rc;
}

/* meta_check - validate page 0 of the db file and load the db id. */
static int meta_check(struct mmdb_pager *p)
{
	uint8_t *pg = page_new(p);
	uint64_t size;
	size_t got;
	int rc;

	if (!pg)
		return NSR_ERR_NOMEM;
	rc = p->vfs->read(p->db, pg, MMDB_PAGE_SIZE, 0, &got);
	if (rc != NSR_OK)
		goto out;
	rc = NSR_ERR_CORRUPT;
	if (got < MMDB_PAGE_SIZE)
		goto out;
	rc = mmdb_page_verify(pg, 0);
	if (rc != NSR_OK)
		goto out;
	rc = NSR_ERR_CORRUPT;
	if (pg[PH_TYPE] != MMDB_PT_META ||
	    memcmp(pg + META_MAGIC, MMDB_MAGIC, 8) != 0 ||
	    nsr_get_u32(pg + META_VERSION) != MMDB_VERSION ||
	    nsr_get_u32(pg + META_PAGESIZE) != MMDB_PAGE_SIZE ||
	    nsr_get_u32(pg + META_NPAGES) == 0 ||
	    nsr_get_u32(pg + META_FREEHEAD) >= nsr_get_u32(pg + META_NPAGES))
		goto out;
	rc = p->vfs->size(p->db, &size);
	if (rc != NSR_OK)
		goto out;
	rc = NSR_ERR_CORRUPT;
	if (size < (uint64_t)nsr_get_u32(pg + META_NPAGES) * MMDB_PAGE_SIZE)
		goto out;
	memcpy(p->dbid, pg + META_DBID, 16);
	rc = NSR_OK;
out:
	free(pg);
	return rc;
}

/* open_files - open (or create) the db and WAL files. */
static int open_files(struct mmdb_pager *p, const char *dir)
{
	char *dbpath = nsr_path_join(dir, MMDB_DB_NAME);
	char *walpath = nsr_path_join(dir, MMDB_WAL_NAME);
	int ro = (p->flags & MMDB_PAGER_READONLY) != 0;
	unsigned vf = ro ? MMDB_VFS_READONLY : 0;
	int rc = NSR_ERR_NOMEM;

	if (!dbpath || !walpath)
		goto out;
	rc = p->vfs->open(p->vfs, dbpath, vf, &p->db);
	if (rc == NSR_ERR_NOTFOUND && (p->flags & MMDB_PAGER_CREATE) && !ro) {
		rc = db_create(p, dir, dbpath);
		if (rc == NSR_OK)
			rc = p->vfs->open(p->vfs, dbpath, vf, &p->db);
	}
	if (rc == NSR_OK)
		rc = p->vfs->lock(p->db);
	if (rc != NSR_OK)
		goto out;
	rc = p->vfs->open(p->vfs, walpath, ro ? vf : MMDB_VFS_CREATE, &p->wal);
	if (rc == NSR_ERR_NOTFOUND && ro)
		rc = NSR_OK;	/* no WAL: nothing to recover */
	if (rc == NSR_OK && !ro)
		rc = p->vfs->sync_dir(p->vfs, dir);
out:
	free(dbpath);
	free(walpath);
	return rc;
}

/* mmdb_pager_open - open, recover and validate a database. */
int mmdb_pager_open(const struct mmdb_vfs *vfs, const char *dir,
		    unsigned flags, uint64_t wal_max, struct mmdb_pager **out)
{
	struct mmdb_pager *p;
	int rc;

	*out = NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NSR_ERR_NOMEM;
	p->vfs = vfs ? vfs : mmdb_vfs_posix();
	p->flags = flags;
	p->wal_max = wal_max ? wal_max : (256u << 20);
	pthread_mutex_init(&p->mu, NULL);
	pthread_mutex_init(&p->wmu, NULL);
	pthread_cond_init(&p->wcond, NULL);
	pthread_mutex_init(&p->smu, NULL);
	pthread_cond_init(&p->scond, NULL);
	rc = open_files(p, dir);
	if (rc == NSR_OK && p->wal)
		rc = wal_recover(p);
	if (rc == NSR_OK)
		rc = meta_check(p);
	if (rc != NSR_OK) {
		p->err = rc;	/* no checkpoint at close */
		mmdb_pager_close(p);
		return rc;
	}
	*out = p;
	return NSR_OK;
}

static int checkpoint(struct mmdb_pager *p, int shrink);

/* mmdb_pager_close - checkpoint when healthy and free everything. */
void mmdb_pager_close(struct mmdb_pager *p)
{
	if (!p)
		return;
	if (p->err == NSR_OK && p->wal && p->nckpt &&
	    !(p->flags & MMDB_PAGER_READONLY))
		(void)checkpoint(p, 1);
	for (uint32_t i = 0; i < p->map_cap; i++) {
		struct pg *v = p->map[i];

		while (v) {
			struct pg *o = v->older;

			free(v->data);
			free(v);
			v = o;
		}
	}
	/* Retired first, in order (a stale entry's version is in the map). */
	for (size_t i = 0; i < p->nret; i++) {
		if (p->ret[i].v->rid != p->ret[i].rid)
			continue;
		free(p->ret[i].v->data);
		free(p->ret[i].v);
	}
	free(p->ret);
	free(p->retd);
	free(p->wal_buf);
	free(p->map);
	free(p->pin);
	free(p->ckpt_mark);
	free(p->ckpt);
	if (p->wal)
		p->vfs->close(p->wal);
	if (p->db)
		p->vfs->close(p->db);
	pthread_mutex_destroy(&p->mu);
	pthread_mutex_destroy(&p->wmu);
	pthread_cond_destroy(&p->wcond);
	pthread_mutex_destroy(&p->smu);
	pthread_cond_destroy(&p->scond);
	free(p);
}

/* ---- bounded cache --------------------------------------------------- */

static uint64_t horizon(struct mmdb_pager *p);

/* min_view_gen - oldest live view generation, UINT64_MAX if none (locked). */
static uint64_t min_view_gen(struct mmdb_pager *p)
{
	uint64_t g = p->writer_gen ? p->writer_gen : UINT64_MAX;

	for (struct mmdb_view *r = p->readers; r; r = r->next)
		if (r->gen < g)
			g = r->gen;
	return g;
}

/* reclaim - free retired versions no live view can hold (locked).  The
 * list is in retirement order, so generations never decrease along it; an
 * entry whose version was taken back into the map is stale and dropped
 * (it always comes before the entry of a later retirement). */
static void reclaim(struct mmdb_pager *p)
{
	uint64_t g;
	size_t i = 0;

	if (p->nret == 0)
		return;
	g = min_view_gen(p);
	while (i < p->nret) {
		struct retired *e = &p->ret[i];

		if (e->v->rid == e->rid) {
			if (e->gen >= g)
				break;
			if (p->retd[e->pgno] == e->v)
				p->retd[e->pgno] = NULL;
			free(e->v->data);
			free(e->v);
		}
		i++;
	}
	if (i == 0)
		return;
	memmove(p->ret, p->ret + i, (p->nret - i) * sizeof(*p->ret));
	p->nret -= i;
}

/* cache_trim - over the limit, take clean pages out of the map with a
 * clock hand (locked).  Only a page whose single version is also in the
 * db file (unchanged since the last checkpoint) qualifies, so a later
 * lookup can reload it (invariant 7); the memory is freed by reclaim()
 * once no view that could hold a pointer to it is left (invariant 6). */
static void cache_trim(struct mmdb_pager *p)
{
	uint64_t h;

	if (p->cache_max == 0 || p->ncached <= p->cache_max ||
	    p->map_cap == 0)
		return;
	h = horizon(p);
	for (size_t n = 0; n < 2 * (size_t)p->map_cap &&
			   p->ncached > p->cache_max; n++) {
		uint32_t pgno = p->hand++ % p->map_cap;
		struct pg *v = p->map[pgno];

		if (!v || v->older || p->ckpt_mark[pgno] || p->pin[pgno] ||
		    v->seq > h || pgno == 0)
			continue;
		if (v->ref) {
			v->ref = 0;
			continue;
		}
		if (p->nret == p->cret) {
			size_t nc = p->cret ? p->cret * 2 : 64;
			struct retired *nr = realloc(p->ret, nc * sizeof(*nr));

			if (!nr)
				break;
			p->ret = nr;
			p->cret = nc;
		}
		p->map[pgno] = NULL;
		v->rid = ++p->rid_next;
		p->retd[pgno] = v;
		p->ret[p->nret].v = v;
		p->ret[p->nret].gen = p->gen;
		p->ret[p->nret].rid = v->rid;
		p->ret[p->nret].pgno = pgno;
		p->nret++;
		p->ncached--;
	}
	reclaim(p);
}

/* mmdb_pager_set_cache - bound the page cache (0 = unbounded). */
void mmdb_pager_set_cache(struct mmdb_pager *p, size_t pages)
{
	pthread_mutex_lock(&p->mu);
	p->cache_max = pages;
	cache_trim(p);
	pthread_mutex_unlock(&p->mu);
}

/* ---- page lookup ----------------------------------------------------- */

/* load_base - read pgno from the db file into map as version 0. */
static int load_base(struct mmdb_pager *p, uint32_t pgno)
{
	uint8_t *buf = page_new(p);
	struct pg *v = NULL;
	size_t got;
	int rc;

	if (!buf)
		return NSR_ERR_NOMEM;
	rc = p->vfs->read(p->db, buf, MMDB_PAGE_SIZE,
			  (uint64_t)pgno * MMDB_PAGE_SIZE, &got);
	if (rc == NSR_OK && got < MMDB_PAGE_SIZE)
		rc = NSR_ERR_CORRUPT;
	if (rc == NSR_OK)
		rc = mmdb_page_verify(buf, pgno);
	if (rc == NSR_OK) {
		v = malloc(sizeof(*v));
		if (!v)
			rc = NSR_ERR_NOMEM;
	}
	if (rc != NSR_OK)
		goto out;
	pthread_mutex_lock(&p->mu);
	rc = map_reserve(p, pgno);
	if (rc == NSR_OK && !p->map[pgno]) {
		v->older = NULL;
		v->seq = 0;
		v->data = buf;
		v->ref = 1;
		v->rid = 0;
		p->map[pgno] = v;
		p->ncached++;
		v = NULL;
		buf = NULL;
		cache_trim(p);
	}
	pthread_mutex_unlock(&p->mu);
out:
	free(buf);
	free(v);
	return rc;
}

/* committed - the version of pgno for sequence seq (UINT64_MAX = newest),
 * loading it from the db file if never loaded. */
static int committed(struct mmdb_pager *p, uint32_t pgno, uint64_t seq,
		     uint8_t **data)
{
	struct pg *v;
	int rc;

	for (;;) {
		pthread_mutex_lock(&p->mu);
		v = pgno < p->map_cap ? p->map[pgno] : NULL;
		if (!v && pgno < p->map_cap && p->retd[pgno]) {
			/* retired but not freed: the same clean image */
			v = p->retd[pgno];
			p->retd[pgno] = NULL;
			v->rid = 0;
			p->map[pgno] = v;
			p->ncached++;
		}
		if (v) {
			while (v && v->seq > seq)
				v = v->older;
			if (v)
				v->ref = 1;
			pthread_mutex_unlock(&p->mu);
			if (!v)
				return NSR_ERR_CORRUPT;
			*data = v->data;
			return NSR_OK;
		}
		pthread_mutex_unlock(&p->mu);
		rc = load_base(p, pgno);
		if (rc != NSR_OK)
			return rc;
	}
}

/* dirty_find - slot for pgno in the dirty table (empty if absent). */
static struct dirty *dirty_find(struct mmdb_view *v, uint32_t pgno)
{
	size_t mask = v->tab_cap - 1;
	size_t i = (pgno * 2654435761u) & mask;

	while (v->tab[i].key && v->tab[i].key != pgno + 1)
		i = (i + 1) & mask;
	return &v->tab[i];
}

/* dirty_grow - double the dirty table. */
static int dirty_grow(struct mmdb_view *v)
{
	struct dirty *old = v->tab;
	size_t ocap = v->tab_cap;
	size_t ncap = ocap ? ocap * 2 : 64;
	struct dirty *nt = calloc(ncap, sizeof(*nt));

	if (!nt)
		return NSR_ERR_NOMEM;
	v->tab = nt;
	v->tab_cap = ncap;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].key)
			*dirty_find(v, old[i].key - 1) = old[i];
	free(old);
	return NSR_OK;
}

/* mmdb_pager_npages - page count seen by the view. */
uint32_t mmdb_pager_npages(struct mmdb_view *v)
{
	const uint8_t *m;

	if (mmdb_pager_get(v, 0, &m) != NSR_OK)
		return 0;
	return nsr_get_u32(m + META_NPAGES);
}

/* mmdb_pager_get - read-only page for the view. */
int mmdb_pager_get(struct mmdb_view *v, uint32_t pgno, const uint8_t **page)
{
	uint8_t *d;
	int rc;

	*page = NULL;
	if (v->writable && v->tab_cap) {
		struct dirty *e = dirty_find(v, pgno);

		if (e->key) {
			*page = e->data;
			return NSR_OK;
		}
	}
	if (pgno != 0) {
		const uint8_t *m;
		uint32_t np = v->npages;

		if (np == 0) {
			rc = mmdb_pager_get(v, 0, &m);
			if (rc != NSR_OK)
				return rc;
			np = nsr_get_u32(m + META_NPAGES);
			if (!v->writable)
				v->npages = np;
		}
		if (pgno >= np)
			return NSR_ERR_CORRUPT;
	}
	rc = committed(v->p, pgno, v->writable ? UINT64_MAX : v->seq, &d);
	if (rc == NSR_OK)
		*page = d;
	return rc;
}

/* dirty_add - install a private copy for pgno (data may be NULL: zeroed). */
static int dirty_add(struct mmdb_view *v, uint32_t pgno, const uint8_t *src,
		     uint8_t **page)
{
	struct dirty *e;
	uint8_t *copy;
	int rc;

	if ((v->ndirty + 1) * 2 > v->tab_cap) {
		rc = dirty_grow(v);
		if (rc != NSR_OK)
			return rc;
	}
	copy = page_new(v->p);
	if (!copy)
		return NSR_ERR_NOMEM;
	if (src)
		memcpy(copy, src, MMDB_PAGE_SIZE);
	else
		memset(copy, 0, MMDB_PAGE_SIZE);
	e = dirty_find(v, pgno);
	e->key = pgno + 1;
	e->data = copy;
	v->ndirty++;
	*page = copy;
	return NSR_OK;
}

/* pin - keep pgno's committed versions in the map until the write view
 * ends, so the version it replaces stays for older views (invariant 6). */
static int pin(struct mmdb_pager *p, uint32_t pgno)
{
	int rc;

	pthread_mutex_lock(&p->mu);
	rc = map_reserve(p, pgno);
	if (rc == NSR_OK)
		p->pin[pgno] = 1;
	pthread_mutex_unlock(&p->mu);
	return rc;
}

/* mmdb_pager_dirty - writable copy of pgno. */
int mmdb_pager_dirty(struct mmdb_view *v, uint32_t pgno, uint8_t **page)
{
	const uint8_t *cur;
	int rc;

	*page = NULL;
	if (!v->writable)
		return NSR_ERR_READONLY;
	if (v->tab_cap) {
		struct dirty *e = dirty_find(v, pgno);

		if (e->key) {
			*page = e->data;
			return NSR_OK;
		}
	}
	rc = pin(v->p, pgno);
	if (rc == NSR_OK)
		rc = mmdb_pager_get(v, pgno, &cur);
	if (rc != NSR_OK)
		return rc;
	return dirty_add(v, pgno, cur, page);
}

/* mmdb_pager_alloc - take a page from the free list or grow the file. */
int mmdb_pager_alloc(struct mmdb_view *v, uint8_t type, uint32_t *pgno,
		     uint8_t **page)
{
	uint8_t *meta, *pg;
	uint32_t head, n;
	int rc;

	*page = NULL;
	*pgno = 0;
	rc = mmdb_pager_dirty(v, 0, &meta);
	if (rc != NSR_OK)
		return rc;
	head = nsr_get_u32(meta + META_FREEHEAD);
	if (head) {
		rc = mmdb_pager_dirty(v, head, &pg);
		if (rc != NSR_OK)
			return rc;
		if (pg[PH_TYPE] != MMDB_PT_FREE)
			return NSR_ERR_CORRUPT;
		nsr_put_u32(meta + META_FREEHEAD, nsr_get_u32(pg + FREE_NEXT));
		nsr_put_u32(meta + META_FREECOUNT,
			    nsr_get_u32(meta + META_FREECOUNT) - 1);
		memset(pg, 0, MMDB_PAGE_SIZE);
		n = head;
	} else {
		n = nsr_get_u32(meta + META_NPAGES);
		if (n == UINT32_MAX)
			return NSR_ERR_NOSPACE;
		rc = pin(v->p, n);
		if (rc == NSR_OK)
			rc = dirty_add(v, n, NULL, &pg);
		if (rc != NSR_OK)
			return rc;
		nsr_put_u32(meta + META_NPAGES, n + 1);
	}
	pg[PH_TYPE] = type;
	nsr_put_u32(pg + PH_PGNO, n);
	*pgno = n;
	*page = pg;
	return NSR_OK;
}

/* mmdb_pager_free - push pgno onto the free list. */
int mmdb_pager_free(struct mmdb_view *v, uint32_t pgno)
{
	uint8_t *meta, *pg;
	int rc;

	if (pgno == 0)
		return NSR_ERR_INVAL;
	rc = mmdb_pager_dirty(v, 0, &meta);
	if (rc == NSR_OK)
		rc = mmdb_pager_dirty(v, pgno, &pg);
	if (rc != NSR_OK)
		return rc;
	memset(pg, 0, MMDB_PAGE_SIZE);
	pg[PH_TYPE] = MMDB_PT_FREE;
	nsr_put_u32(pg + FREE_NEXT, nsr_get_u32(meta + META_FREEHEAD));
	nsr_put_u32(meta + META_FREEHEAD, pgno);
	nsr_put_u32(meta + META_FREECOUNT,
		    nsr_get_u32(meta + META_FREECOUNT) + 1);
	return NSR_OK;
}

/* ---- views ----------------------------------------------------------- */

/* mmdb_pager_view_seq - the view's base commit. */
uint64_t mmdb_pager_view_seq(const struct mmdb_view *v)
{
	return v->seq;
}

/* mmdb_pager_view_pager - owner of the view. */
struct mmdb_pager *mmdb_pager_view_pager(const struct mmdb_view *v)
{
	return v->p;
}

/* mmdb_pager_read_begin - register a read view at the durable commit. */
int mmdb_pager_read_begin(struct mmdb_pager *p, struct mmdb_view **out)
{
	struct mmdb_view *v;
	int rc = NSR_OK;

	*out = NULL;
	v = calloc(1, sizeof(*v));
	if (!v)
		return NSR_ERR_NOMEM;
	v->p = p;
	pthread_mutex_lock(&p->mu);
	if (p->err != NSR_OK) {
		rc = NSR_ERR_STATE;
	} else {
		v->seq = p->durable_seq;
		v->gen = ++p->gen;
		v->next = p->readers;
		if (p->readers)
			p->readers->prev = v;
		p->readers = v;
	}
	pthread_mutex_unlock(&p->mu);
	if (rc != NSR_OK) {
		free(v);
		return rc;
	}
	*out = v;
	return NSR_OK;
}

/* mmdb_pager_read_end - unregister and free a read view. */
void mmdb_pager_read_end(struct mmdb_view *v)
{
	struct mmdb_pager *p;

	if (!v)
		return;
	p = v->p;
	pthread_mutex_lock(&p->mu);
	if (v->prev)
		v->prev->next = v->next;
	else
		p->readers = v->next;
	if (v->next)
		v->next->prev = v->prev;
	reclaim(p);
	pthread_mutex_unlock(&p->mu);
	free(v);
}

/* sync_to - group commit: return once an fsync covered seq. */
static int sync_to(struct mmdb_pager *p, uint64_t seq)
{
	int rc = NSR_OK;

	pthread_mutex_lock(&p->smu);
	while (p->synced_seq < seq) {
		uint64_t target;

		if (mmdb_pager_error(p) != NSR_OK) {
			rc = NSR_ERR_STATE;
			break;
		}
		if (p->syncing) {
			pthread_cond_wait(&p->scond, &p->smu);
			continue;
		}
		/* Leader: one fsync for everything written so far. */
		p->syncing = 1;
		pthread_mutex_lock(&p->mu);
		target = p->written_seq;
		pthread_mutex_unlock(&p->mu);
		pthread_mutex_unlock(&p->smu);
		rc = p->vfs->sync(p->wal);
		pthread_mutex_lock(&p->smu);
		p->syncing = 0;
		pthread_mutex_lock(&p->mu);
		p->n_fsyncs++;
		if (rc == NSR_OK) {
			p->synced_seq = target;
			if (target > p->durable_seq)
				p->durable_seq = target;
		} else if (p->err == NSR_OK) {
			p->err = rc;
		}
		pthread_mutex_unlock(&p->mu);
		pthread_cond_broadcast(&p->scond);
		if (rc != NSR_OK)
			break;
	}
	pthread_mutex_unlock(&p->smu);
	return rc;
}

/* checkpoint - copy every page changed since the last checkpoint into the
 * db file, sync it, reset the WAL.  Caller holds the writer slot and every
 * written commit is durable. */
static int checkpoint(struct mmdb_pager *p, int shrink)
{
	int rc = NSR_OK;
	uint64_t seq;

	qsort(p->ckpt, p->nckpt, sizeof(*p->ckpt), nsr_cmp_u32);
	for (size_t i = 0; i < p->nckpt && rc == NSR_OK; i++) {
		uint32_t pgno = p->ckpt[i];
		uint8_t *data;

		pthread_mutex_lock(&p->mu);
		data = p->map[pgno]->data;	/* newest = durable */
		pthread_mutex_unlock(&p->mu);
		rc = p->vfs->write(p->db, data, MMDB_PAGE_SIZE,
				   (uint64_t)pgno * MMDB_PAGE_SIZE);
	}
	if (rc == NSR_OK)
		rc = p->vfs->sync(p->db);
	pthread_mutex_lock(&p->mu);
	seq = p->durable_seq;
	pthread_mutex_unlock(&p->mu);
	if (rc == NSR_OK)
		rc = wal_reset(p, p->wal_salt + 1, seq, shrink);
	if (rc != NSR_OK) {
		set_err(p, rc);
		return rc;
	}
	pthread_mutex_lock(&p->mu);
	for (size_t i = 0; i < p->nckpt; i++)
		p->ckpt_mark[p->ckpt[i]] = 0;
	p->nckpt = 0;
	p->n_ckpt++;
	pthread_mutex_unlock(&p->mu);
	return NSR_OK;
}

/* writer_release - give up the writer slot. */
static void writer_release(struct mmdb_pager *p)
{
	pthread_mutex_lock(&p->wmu);
	p->writer_busy = 0;
	pthread_mutex_unlock(&p->wmu);
	pthread_cond_signal(&p->wcond);
}

/* mmdb_pager_write_begin - take the writer slot (checkpointing first if
 * the WAL has grown past its limit). */
int mmdb_pager_write_begin(struct mmdb_pager *p, struct mmdb_view **out)
{
	struct mmdb_view *v = NULL;
	int rc;

	*out = NULL;
	if (p->flags & MMDB_PAGER_READONLY)
		return NSR_ERR_READONLY;
	pthread_mutex_lock(&p->wmu);
	while (p->writer_busy)
		pthread_cond_wait(&p->wcond, &p->wmu);
	p->writer_busy = 1;
	pthread_mutex_unlock(&p->wmu);
	rc = mmdb_pager_error(p);
	if (rc == NSR_OK && p->wal_end > p->wal_max) {
		rc = sync_to(p, p->written_seq);
		if (rc == NSR_OK)
			rc = checkpoint(p, 0);
	}
	if (rc == NSR_OK) {
		v = calloc(1, sizeof(*v));
		if (!v)
			rc = NSR_ERR_NOMEM;
	}
	if (rc != NSR_OK) {
		writer_release(p);
		return rc;
	}
	v->p = p;
	v->writable = 1;
	v->seq = p->written_seq;
	pthread_mutex_lock(&p->mu);
	v->gen = p->writer_gen = ++p->gen;
	pthread_mutex_unlock(&p->mu);
	*out = v;
	return NSR_OK;
}

/* view_free - free a write view and any pages it still owns. */
static void view_free(struct mmdb_view *v)
{
	struct mmdb_pager *p = v->p;

	pthread_mutex_lock(&p->mu);
	for (size_t i = 0; i < v->tab_cap; i++)
		if (v->tab[i].key && v->tab[i].key - 1 < p->map_cap)
			p->pin[v->tab[i].key - 1] = 0;
	pthread_mutex_unlock(&p->mu);
	for (size_t i = 0; i < v->tab_cap; i++)
		if (v->tab[i].key)
			free(v->tab[i].data);
	free(v->tab);
	free(v);
}

/* mmdb_pager_rollback - discard the write view. */
void mmdb_pager_rollback(struct mmdb_view *v)
{
	struct mmdb_pager *p;

	if (!v)
		return;
	p = v->p;
	view_free(v);
	pthread_mutex_lock(&p->mu);
	p->writer_gen = 0;
	cache_trim(p);
	pthread_mutex_unlock(&p->mu);
	writer_release(p);
}

/* horizon - oldest sequence any view may still ask for (locked). */
static uint64_t horizon(struct mmdb_pager *p)
{
	uint64_t h = p->durable_seq;

	for (struct mmdb_view *r = p->readers; r; r = r->next)
		if (r->seq < h)
			h = r->seq;
	return h;
}

/* reserve_install - make room so install() cannot fail (locked). */
static int reserve_install(struct mmdb_pager *p, const uint32_t *pgnos,
			   size_t n)
{
	int rc = map_reserve(p, pgnos[n - 1]);	/* pgnos sorted */

	if (rc != NSR_OK)
		return rc;
	if (p->nckpt + n > p->ckpt_cap) {
		size_t nc = p->ckpt_cap ? p->ckpt_cap : 256;
		uint32_t *nv;

		while (nc < p->nckpt + n)
			nc *= 2;
		nv = realloc(p->ckpt, nc * sizeof(*nv));
		if (!nv)
			return NSR_ERR_NOMEM;
		p->ckpt = nv;
		p->ckpt_cap = nc;
	}
	return NSR_OK;
}

/* install - publish the committed pages as version seq (locked; room was
 * made by reserve_install). */
static void install(struct mmdb_pager *p, const uint32_t *pgnos,
		    uint8_t **pages, size_t n, uint64_t seq, struct pg **nodes)
{
	uint64_t h = horizon(p);

	for (size_t i = 0; i < n; i++) {
		uint32_t pgno = pgnos[i];
		struct pg *v = nodes[i], *keep, *o;

		v->seq = seq;
		v->data = pages[i];
		v->ref = 1;
		v->rid = 0;
		v->older = p->map[pgno];
		p->map[pgno] = v;
		p->ncached++;
		p->pin[pgno] = 0;
		/* Invariant 6: keep the newest version <= h, drop older. */
		keep = v;
		while (keep && keep->seq > h)
			keep = keep->older;
		o = keep ? keep->older : NULL;
		if (keep)
			keep->older = NULL;
		while (o) {
			struct pg *n2 = o->older;

			/* no view can want it (invariant 6): free now */
			free(o->data);
			free(o);
			p->ncached--;
			o = n2;
		}
		if (!p->ckpt_mark[pgno]) {
			p->ckpt[p->nckpt++] = pgno;
			p->ckpt_mark[pgno] = 1;
		}
	}
}

/* wal_append - write the frames of one transaction at the WAL end. */
static int wal_append(struct mmdb_pager *p, uint32_t *pgnos, uint8_t **pages,
		      size_t n, uint64_t seq)
{
	enum { BATCH = 16 };
	uint64_t off = p->wal_end;
	uint32_t crc = p->wal_crc;
	uint8_t *buf;
	int rc = NSR_OK;

	/* Made once and kept: half a megabyte, which glibc would map and
	 * fault in again at every commit. */
	if (!p->wal_buf)
		p->wal_buf = mmdb_vfs_alloc(p->vfs,
					    BATCH * WAL_FRAME_SIZE + WAL_ALIGN);
	buf = p->wal_buf;
	if (!buf)
		return NSR_ERR_NOMEM;
	for (size_t i = 0; i < n && rc == NSR_OK; i += BATCH) {
		size_t k = NSR_MIN((size_t)BATCH, n - i), len;

		for (size_t j = 0; j < k; j++) {
			uint8_t *f = buf + j * WAL_FRAME_SIZE;

			page_seal(pages[i + j], pgnos[i + j], seq);
			frame_hdr(p, f, pgnos[i + j], seq, i + j == n - 1,
				  pages[i + j]);
			memcpy(f + WAL_FRAME_HDR, pages[i + j],
			       MMDB_PAGE_SIZE);
		}
		len = k * WAL_FRAME_SIZE;
		if (i + k == n) {
			/* Zero padding up to the next transaction boundary. */
			size_t pad = wal_align(off + len) - (off + len);

			memset(buf + len, 0, pad);
			len += pad;
		}
		rc = p->vfs->write(p->wal, buf, len, off);
		off += len;
	}
	if (rc != NSR_OK) {
		p->wal_crc = crc;
		return rc;
	}
	p->wal_end = off;
	return NSR_OK;
}

/* mmdb_pager_commit - WAL append, publish, release the slot, group sync. */
int mmdb_pager_commit(struct mmdb_view *v)
{
	return mmdb_pager_commit_undo(v, NULL, NULL);
}

/* mmdb_pager_commit_undo - commit; undo(arg) runs if it fails before the
 * writer slot is released. */
int mmdb_pager_commit_undo(struct mmdb_view *v, void (*undo)(void *),
			   void *arg)
{
	struct mmdb_pager *p = v->p;
	uint32_t *pgnos = NULL;
	uint8_t **pages = NULL;
	struct pg **nodes = NULL;
	size_t n = 0;
	uint64_t seq = 0;
	int rc;

	rc = mmdb_pager_error(p);
	if (rc != NSR_OK || v->ndirty == 0)
		goto out;
	rc = NSR_ERR_NOMEM;
	pgnos = mmdb_vfs_alloc(p->vfs, v->ndirty * sizeof(*pgnos));
	pages = mmdb_vfs_alloc(p->vfs, v->ndirty * sizeof(*pages));
	nodes = calloc(v->ndirty, sizeof(*nodes));
	if (!pgnos || !pages || !nodes)
		goto out;
	for (size_t i = 0; i < v->tab_cap; i++)
		if (v->tab[i].key)
			pgnos[n++] = v->tab[i].key - 1;
	qsort(pgnos, n, sizeof(*pgnos), nsr_cmp_u32);
	for (size_t i = 0; i < n; i++) {
		pages[i] = dirty_find(v, pgnos[i])->data;
		nodes[i] = mmdb_vfs_alloc(p->vfs, sizeof(struct pg));
		if (!nodes[i])
			goto out;
	}
	pthread_mutex_lock(&p->mu);
	rc = reserve_install(p, pgnos, n);
	pthread_mutex_unlock(&p->mu);
	if (rc != NSR_OK)
		goto out;
	seq = p->written_seq + 1;
	rc = wal_append(p, pgnos, pages, n, seq);
	if (rc != NSR_OK) {
		set_err(p, rc);
		goto out;
	}
	pthread_mutex_lock(&p->mu);
	install(p, pgnos, pages, n, seq, nodes);
	p->written_seq = seq;
	p->n_commits++;
	pthread_mutex_unlock(&p->mu);
	/* The map owns the pages and nodes now. */
	for (size_t i = 0; i < v->tab_cap; i++)
		v->tab[i].key = 0;
	for (size_t i = 0; i < n; i++)
		nodes[i] = NULL;
	v->ndirty = 0;
out:
	if (nodes)
		for (size_t i = 0; i < n; i++)
			free(nodes[i]);
	free(pgnos);
	free(pages);
	free(nodes);
	if (rc != NSR_OK && undo)
		undo(arg);
	mmdb_pager_rollback(v);	/* frees the view, releases the slot */
	if (rc != NSR_OK || seq == 0)
		return rc;
	return sync_to(p, seq);
}

/* ---- checks and stats ------------------------------------------------ */

/* mmdb_pager_check_free - validate the free list. */
int mmdb_pager_check_free(struct mmdb_view *v, uint8_t *seen,
			  struct nsr_buf *report)
{
	const uint8_t *meta, *pg;
	uint32_t npages, head, count, n = 0;
	int bad = 0, rc;

	rc = mmdb_pager_get(v, 0, &meta);
	if (rc != NSR_OK)
		return rc;
	npages = nsr_get_u32(meta + META_NPAGES);
	head = nsr_get_u32(meta + META_FREEHEAD);
	count = nsr_get_u32(meta + META_FREECOUNT);
	while (head) {
		if (head >= npages) {
			if (report)
				nsr_buf_addf(report, "free list: page %u out "
					     "of range\n", head);
			return bad + 1;
		}
		if (seen[head]) {
			if (report)
				nsr_buf_addf(report, "free list: page %u used "
					     "twice\n", head);
			return bad + 1;
		}
		seen[head] = 1;
		rc = mmdb_pager_get(v, head, &pg);
		if (rc != NSR_OK)
			return rc;
		if (pg[PH_TYPE] != MMDB_PT_FREE) {
			if (report)
				nsr_buf_addf(report, "free list: page %u has "
					     "type %u\n", head, pg[PH_TYPE]);
			bad++;
		}
		n++;
		head = nsr_get_u32(pg + FREE_NEXT);
	}
	if (n != count) {
		if (report)
			nsr_buf_addf(report, "free list: %u pages, header "
				     "says %u\n", n, count);
		bad++;
	}
	return bad;
}

/* mmdb_pager_stats - counters. */
void mmdb_pager_stats(struct mmdb_pager *p, struct mmdb_pager_stats *st)
{
	struct mmdb_view *v;
	const uint8_t *meta;

	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&p->mu);
	st->durable_seq = p->durable_seq;
	st->commits = p->n_commits;
	st->fsyncs = p->n_fsyncs;
	st->checkpoints = p->n_ckpt;
	pthread_mutex_unlock(&p->mu);
	if (p->wal)
		(void)p->vfs->size(p->wal, &st->wal_bytes);
	(void)p->vfs->size(p->db, &st->db_bytes);
	if (mmdb_pager_read_begin(p, &v) == NSR_OK) {
		if (mmdb_pager_get(v, 0, &meta) == NSR_OK) {
			st->npages = nsr_get_u32(meta + META_NPAGES);
			st->free_pages = nsr_get_u32(meta + META_FREECOUNT);
		}
		mmdb_pager_read_end(v);
	}
}
