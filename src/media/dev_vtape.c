/*
 * dev_vtape.c - vtape: a tape kept in one file, with the semantics of a
 * real drive (nsr_vtape(5)): records keep their boundaries, filemarks end
 * files, writing anywhere ends the data there, a configurable capacity
 * gives early warning and then end of medium.
 *
 * The file is a 64-byte header, then entries: a record is an 8-byte header
 * (kind 1, length), the data and an 8-byte trailer equal to the header; a
 * filemark is a header and trailer of kind 2, length 0.  The trailer lets a
 * tool go backwards; end of file is end of data.  We keep an index of the
 * entries in memory (16 bytes per entry plus 8 per filemark), built
 * lazily: reading forward indexes each entry as it is reached (so a
 * sequential read touches the file once), and only EOD, FSF and seeks
 * beyond the known part scan ahead, reading just the entry headers.
 * Positioning within the known part is O(log n); reading a record is one
 * header read (from the page the data is on) and one read for the data
 * and its trailer.
 *
 * Invariants:
 *  1. ent[0..nent) describe the start of the file exactly; end == offset
 *     after the last indexed entry; when `complete`, end is end of data
 *     (a torn entry after it, from a crash, is ignored and overwritten by
 *     the next write);
 *  2. fm[0..nfm) are the indices of the filemark entries, ascending;
 *  3. 0 <= pos <= nent; pos == nent && complete is end of data;
 *  4. writing at pos discards everything after it (file truncated), so
 *     after a write the index is complete.
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "nsr/bytes.h"
#include "nsr/crc32c.h"
#include "nsr/err.h"
#include "nsr/fileio.h"

#include "dev_int.h"

#define VT_MAGIC "NSRVTAPE"
#define VT_VERSION 1u
#define VT_HDR 64u
#define VT_ENT 8u /* entry header, and again as trailer */
#define VT_REC 1u
#define VT_FM 2u
#define VT_MAX_REC 0x7fffffffu

struct vt_ent {
	uint64_t off; /* of the entry header */
	uint32_t len; /* record length, 0 for a filemark */
	uint32_t kind;
};

struct vtape {
	int fd;
	uint64_t capacity; /* bytes after the header; 0 = unlimited */
	uint64_t ew;	   /* early-warning zone size */
	struct vt_ent *ent;
	size_t nent, aent;
	size_t *fm;
	size_t nfm, afm;
	size_t pos;
	uint64_t end;
	uint64_t fsize;	/* the file's size */
	struct nsr_drop drop; /* write-back and drop-behind */
	int complete;	/* the index reaches end of data */
	int torn;	/* the file has bytes after end (from a torn write) */
	int random;	/* readahead off: a reader picks records by header */
};

/* vt_of - the vtape state of dev. */
static struct vtape *vt_of(struct nsr_dev *dev)
{
	return dev->priv;
}

/* vt_push - append an entry to the index. */
static int vt_push(struct vtape *vt, uint64_t off, uint32_t kind,
		   uint32_t len)
{
	if (vt->nent == vt->aent) {
		size_t na = vt->aent ? vt->aent * 2 : 1024;
		struct vt_ent *e = realloc(vt->ent, na * sizeof(*e));

		if (e == NULL)
			return NSR_ERR_NOMEM;
		vt->ent = e;
		vt->aent = na;
	}
	if (kind == VT_FM) {
		if (vt->nfm == vt->afm) {
			size_t na = vt->afm ? vt->afm * 2 : 64;
			size_t *f = realloc(vt->fm, na * sizeof(*f));

			if (f == NULL)
				return NSR_ERR_NOMEM;
			vt->fm = f;
			vt->afm = na;
		}
		vt->fm[vt->nfm++] = vt->nent;
	}
	vt->ent[vt->nent].off = off;
	vt->ent[vt->nent].len = len;
	vt->ent[vt->nent].kind = kind;
	vt->nent++;
	vt->end = off + 2 * VT_ENT + len;
	return NSR_OK;
}

/* vt_fm_before - number of filemarks with index < pos. */
static size_t vt_fm_before(const struct vtape *vt, size_t pos)
{
	size_t lo = 0, hi = vt->nfm;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (vt->fm[mid] < pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* vt_write_header - a new vtape file's header. */
static int vt_write_header(struct nsr_dev *dev, struct vtape *vt)
{
	uint8_t h[VT_HDR];

	memset(h, 0, sizeof(h));
	memcpy(h, VT_MAGIC, 8);
	nsr_put_u32(h + 8, VT_VERSION);
	nsr_put_u32(h + 12, VT_HDR);
	nsr_put_u64(h + 16, vt->capacity);
	nsr_put_u64(h + 24, vt->ew);
	nsr_put_u32(h + 60, nsr_crc32c(0, h, 60));
	if (pwrite(vt->fd, h, sizeof(h), 0) != (ssize_t)sizeof(h))
		return dev_sys(dev, "write vtape header");
	return NSR_OK;
}

/* vt_load - check the header; the index starts empty. */
static int vt_load(struct nsr_dev *dev, struct vtape *vt)
{
	uint8_t h[VT_HDR];
	struct stat st;
	ssize_t n;

	if (fstat(vt->fd, &st) != 0)
		return dev_sys(dev, "fstat");
	n = pread(vt->fd, h, sizeof(h), 0);
	if (n != (ssize_t)sizeof(h) || memcmp(h, VT_MAGIC, 8) != 0 ||
	    nsr_get_u32(h + 60) != nsr_crc32c(0, h, 60) ||
	    nsr_get_u32(h + 8) != VT_VERSION || nsr_get_u32(h + 12) != VT_HDR)
		return dev_fail(dev, NSR_ERR_CORRUPT,
				"not a vtape file (bad header)");
	/* The file's write permission is the cartridge's write-protect
	 * tab, also for root (who could open it anyway). */
	if (!dev->read_only && (st.st_mode & 0222) == 0)
		return dev_fail(dev, NSR_ERR_READONLY,
				"the vtape is write-protected (its file has "
				"no write permission); chmod u+w it to write");
	vt->capacity = nsr_get_u64(h + 16);
	vt->ew = nsr_get_u64(h + 24);
	vt->end = VT_HDR;
	vt->fsize = (uint64_t)st.st_size;
	nsr_drop_init(&vt->drop, vt->fsize);
	return NSR_OK;
}

/* vt_more_hdr - index the entry at vt->end whose header is e (already
 * read): 1 if added, 0 if it is not a whole entry (end of data), or a
 * negative error. */
static int vt_more_hdr(struct nsr_dev *dev, struct vtape *vt,
		       const uint8_t *e)
{
	uint8_t t[VT_ENT];
	uint64_t off = vt->end;
	uint32_t kind, len;
	int rc;

	NSR_UNUSED(dev);
	kind = nsr_get_u32(e);
	len = nsr_get_u32(e + 4);
	if ((kind != VT_REC && kind != VT_FM) || (kind == VT_FM && len != 0) ||
	    len > VT_MAX_REC || off + 2 * VT_ENT + len > vt->fsize)
		goto done;
	if (kind == VT_FM &&
	    (pread(vt->fd, t, VT_ENT, (off_t)(off + VT_ENT)) != VT_ENT ||
	     memcmp(e, t, VT_ENT) != 0))
		goto done;
	rc = vt_push(vt, off, kind, len);
	return rc != NSR_OK ? rc : 1;
done:
	vt->complete = 1;
	vt->torn = vt->end != vt->fsize;
	return 0;
}

/* vt_more - index the next entry: 1 if one was added, 0 at the end of
 * data (the index is then complete), or a negative error. */
static int vt_more(struct nsr_dev *dev, struct vtape *vt)
{
	uint8_t e[VT_ENT];
	ssize_t n;

	if (vt->complete)
		return 0;
	if (vt->end + 2 * VT_ENT > vt->fsize) {
		vt->complete = 1;
		vt->torn = vt->end != vt->fsize;
		return 0;
	}
	n = pread(vt->fd, e, VT_ENT, (off_t)vt->end);
	if (n < 0)
		return dev_sys(dev, "read");
	if (n != VT_ENT) {
		vt->complete = 1;
		vt->torn = 1;
		return 0;
	}
	return vt_more_hdr(dev, vt, e);
}

/* vt_have - make sure entry idx is indexed: 1 if it exists, 0 if it is
 * past the end of data, or a negative error. */
static int vt_have(struct nsr_dev *dev, struct vtape *vt, size_t idx)
{
	int rc;

	while (vt->nent <= idx) {
		rc = vt_more(dev, vt);
		if (rc <= 0)
			return rc;
	}
	return 1;
}

/* vt_index_all - index up to the end of data. */
static int vt_index_all(struct nsr_dev *dev, struct vtape *vt)
{
	int rc;

	do
		rc = vt_more(dev, vt);
	while (rc > 0);
	return rc;
}

/* vt_open - open or create the vtape file. */
static int vt_open(struct nsr_dev *dev, const struct nsr_dev_opts *o)
{
	struct vtape *vt;
	int flags = dev->read_only ? O_RDONLY : O_RDWR;
	int rc;

	vt = calloc(1, sizeof(*vt));
	if (vt == NULL)
		return NSR_ERR_NOMEM;
	dev->priv = vt;
	vt->fd = open(dev->path, flags | O_CLOEXEC);
	if (vt->fd < 0 && errno == ENOENT && o->create && !dev->read_only) {
		vt->fd = open(dev->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
			      0644);
		if (vt->fd < 0) {
			rc = dev_sys(dev, "create");
			goto out;
		}
		vt->capacity = o->vtape_capacity;
		vt->ew = o->vtape_early_warning;
		rc = vt_write_header(dev, vt);
		if (rc != NSR_OK)
			goto out;
	}
	if (vt->fd < 0) {
		if (errno == ENOENT)
			rc = dev_fail(dev, NSR_ERR_NOTFOUND,
				      "no such vtape file");
		else if (!dev->read_only &&
			 (errno == EACCES || errno == EROFS))
			rc = dev_fail(dev, NSR_ERR_READONLY,
				      "the vtape is write-protected (%s); "
				      "open it read-only or allow writing",
				      strerror(errno));
		else
			rc = dev_sys(dev, "open");
		goto out;
	}
	rc = vt_load(dev, vt);
	if (rc != NSR_OK)
		goto out;
	/* Tapes are read front to back: ask for a bigger readahead. */
	(void)posix_fadvise(vt->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	dev->info.sequential = 1;
	dev->info.max_record = 64u << 20;
	if (o->vtape_max_record != 0)
		dev->info.max_record = NSR_MIN(o->vtape_max_record,
					       VT_MAX_REC);
	dev->info.min_record = 1;
	dev->info.capacity = vt->capacity;
out:
	if (rc != NSR_OK) {
		if (vt->fd >= 0)
			close(vt->fd);
		free(vt);
		dev->priv = NULL;
	}
	return rc;
}

/* vt_close - free the index and close the file. */
static int vt_close(struct nsr_dev *dev)
{
	struct vtape *vt = vt_of(dev);
	int rc = NSR_OK;

	if (vt == NULL)
		return NSR_OK;
	if (close(vt->fd) != 0)
		rc = dev_sys(dev, "close");
	free(vt->ent);
	free(vt->fm);
	free(vt);
	dev->priv = NULL;
	return rc;
}

/* vt_cut - drop every entry from pos on (writing ends the data here). */
static int vt_cut(struct nsr_dev *dev, struct vtape *vt)
{
	if (vt->pos == vt->nent && vt->fsize == vt->end)
		return NSR_OK;
	if (vt->pos < vt->nent) {
		vt->end = vt->ent[vt->pos].off;
		vt->nent = vt->pos;
		vt->nfm = vt_fm_before(vt, vt->pos);
	}
	if (ftruncate(vt->fd, (off_t)vt->end) != 0)
		return dev_sys(dev, "truncate");
	vt->fsize = vt->end;
	vt->complete = 1;
	vt->torn = 0;
	return NSR_OK;
}

/* bad_spot - test knob NSR_TEST_VTAPE_EIO_AT=N: a damaged spot N bytes
 * into every vtape, so a record written across it fails with EIO, as a
 * drive reports a medium error (fault-injection tests).  from/to are
 * tape positions without the header. */
static int bad_spot(uint64_t from, uint64_t to)
{
	const char *e = getenv("NSR_TEST_VTAPE_EIO_AT");
	unsigned long long at;

	if (!e || !*e)
		return 0;
	at = strtoull(e, NULL, 10);
	return at > 0 && from <= at && at < to;
}

/* vt_put - write one entry at pos (data may be NULL for a filemark). */
static int vt_put(struct nsr_dev *dev, uint32_t kind, const void *p,
		  uint32_t len)
{
	struct vtape *vt = vt_of(dev);
	uint8_t e[VT_ENT];
	struct iovec iov[3];
	uint64_t used;
	ssize_t n, want = (ssize_t)(2 * VT_ENT + len);
	int rc;

	rc = vt_cut(dev, vt);
	if (rc != NSR_OK)
		return rc;
	used = vt->end - VT_HDR + 2 * VT_ENT + len;
	if (kind == VT_REC && bad_spot(vt->end - VT_HDR, used)) {
		errno = EIO;
		return dev_fail(dev, NSR_ERR_IO, "medium error at byte %" PRIu64
				" of the tape (NSR_TEST_VTAPE_EIO_AT)",
				vt->end - VT_HDR);
	}
	if (kind == VT_REC && vt->capacity != 0 && used > vt->capacity)
		return dev_fail(dev, NSR_ERR_EOM,
				"end of medium (capacity %" PRIu64 " bytes)",
				vt->capacity);
	nsr_put_u32(e, kind);
	nsr_put_u32(e + 4, len);
	iov[0].iov_base = e;
	iov[0].iov_len = VT_ENT;
	iov[1].iov_base = (void *)(uintptr_t)p;
	iov[1].iov_len = len;
	iov[2].iov_base = e;
	iov[2].iov_len = VT_ENT;
	n = pwritev(vt->fd, iov, 3, (off_t)vt->end);
	if (n != want) {
		int e2 = n < 0 ? errno : ENOSPC;

		/* Leave no torn entry behind. */
		if (ftruncate(vt->fd, (off_t)vt->end) != 0) {
			vt->torn = 1;
			vt->fsize = vt->end + (uint64_t)NSR_MAX(n, 0);
		}
		errno = e2;
		if (e2 == ENOSPC || e2 == EDQUOT)
			return dev_fail(dev, NSR_ERR_EOM,
					"end of medium (file system full)");
		return dev_sys(dev, "write");
	}
	rc = vt_push(vt, vt->end, kind, len);
	if (rc != NSR_OK)
		return rc;
	vt->fsize = vt->end;
	vt->pos = vt->nent;
	nsr_drop_write(vt->fd, &vt->drop, vt->end);
	if (vt->capacity != 0 && used + vt->ew >= vt->capacity)
		dev->info.early_warning = 1;
	return NSR_OK;
}

/* vt_write - one record. */
static int vt_write(struct nsr_dev *dev, const void *p, size_t len)
{
	if (len == 0)
		return dev_fail(dev, NSR_ERR_INVAL, "empty record");
	if (len > dev->info.max_record)
		return dev_fail(dev, NSR_ERR_TOOBIG,
				"record of %zu bytes over the limit %" PRIu32,
				len, dev->info.max_record);
	return vt_put(dev, VT_REC, p, (uint32_t)len);
}

/* vt_weof - n filemarks; n == 0 flushes (fdatasync), as a drive's
 * WRITE FILEMARKS 0 empties its buffer. */
static int vt_weof(struct nsr_dev *dev, unsigned n)
{
	struct vtape *vt = vt_of(dev);
	unsigned i;
	int rc;

	if (n == 0) {
		if (fdatasync(vt->fd) != 0)
			return dev_sys(dev, "fdatasync");
		nsr_drop_synced(vt->fd, &vt->drop, vt->end);
		return NSR_OK;
	}
	for (i = 0; i < n; i++) {
		rc = vt_put(dev, VT_FM, NULL, 0);
		if (rc != NSR_OK)
			return rc;
	}
	return NSR_OK;
}

/* vt_read - the record at pos. */
static int vt_read(struct nsr_dev *dev, void *p, size_t cap, size_t *got)
{
	struct vtape *vt = vt_of(dev);
	const struct vt_ent *e;
	uint8_t t[2 * VT_ENT];
	struct iovec iov[2];
	ssize_t n, want;
	int rc, peek;

	rc = vt_have(dev, vt, vt->pos);
	if (rc <= 0)
		return rc < 0 ? rc : NSR_ERR_EOD;
	e = &vt->ent[vt->pos];
	vt->pos++;
	if (e->kind == VT_FM)
		return NSR_ERR_EOF;
	if (e->len > cap)
		return dev_fail(dev, NSR_ERR_TOOBIG,
				"record of %" PRIu32 " bytes, buffer %zu",
				e->len, cap);
	/* Data, trailer and, while the index is still being built, the
	 * next entry's header: one system call per record. */
	peek = vt->pos == vt->nent && !vt->complete;
	iov[0].iov_base = p;
	iov[0].iov_len = e->len;
	iov[1].iov_base = t;
	iov[1].iov_len = peek ? 2 * VT_ENT : VT_ENT;
	want = (ssize_t)(e->len + VT_ENT);
	n = preadv(vt->fd, iov, 2, (off_t)(e->off + VT_ENT));
	if (n < want) {
		vt->pos--;
		if (n >= 0)
			return dev_fail(dev, NSR_ERR_IO, "short read");
		return dev_sys(dev, "read");
	}
	if (nsr_get_u32(t) != VT_REC || nsr_get_u32(t + 4) != e->len) {
		vt->pos--;
		return dev_fail(dev, NSR_ERR_IO,
				"record trailer does not match its header");
	}
	nsr_drop_read(vt->fd, &vt->drop, e->off);
	*got = e->len;
	if (peek && n == want + (ssize_t)VT_ENT &&
	    vt->end + 2 * VT_ENT <= vt->fsize) {
		rc = vt_more_hdr(dev, vt, t + VT_ENT);
		if (rc < 0)
			return rc;
	}
	return NSR_OK;
}

/* vt_pattern - tell the kernel how the file is read: readahead off once
 * a reader looks at records' heads to space over some (readahead would
 * bring those in anyway), on again at the next positioning. */
static void vt_pattern(struct vtape *vt, int random)
{
	if (vt->random == random)
		return;
	(void)posix_fadvise(vt->fd, 0, 0,
			    random ? POSIX_FADV_RANDOM : POSIX_FADV_SEQUENTIAL);
	vt->random = random;
}

/* vt_peek - the head of the record at pos; pos does not move. */
static int vt_peek(struct nsr_dev *dev, void *p, size_t cap, size_t *got,
		   size_t *reclen)
{
	struct vtape *vt = vt_of(dev);
	const struct vt_ent *e;
	const char *knob = getenv("NSR_TEST_VTAPE_NO_PEEK");
	size_t want;
	ssize_t n;
	int rc;

	/* Test knob: behave as a drive, which must read to see. */
	if (knob != NULL && *knob != '\0')
		return dev_fail(dev, NSR_ERR_UNSUPPORTED,
				"peek refused (NSR_TEST_VTAPE_NO_PEEK)");
	rc = vt_have(dev, vt, vt->pos);
	if (rc <= 0)
		return rc < 0 ? rc : NSR_ERR_EOD;
	e = &vt->ent[vt->pos];
	if (e->kind == VT_FM)
		return NSR_ERR_EOF;
	vt_pattern(vt, 1);
	want = NSR_MIN(cap, (size_t)e->len);
	n = pread(vt->fd, p, want, (off_t)(e->off + VT_ENT));
	if (n < 0)
		return dev_sys(dev, "read");
	if ((size_t)n != want)
		return dev_fail(dev, NSR_ERR_IO, "short read");
	*got = want;
	*reclen = e->len;
	return NSR_OK;
}

/* vt_rewind - to the beginning of the tape. */
static int vt_rewind(struct nsr_dev *dev)
{
	vt_pattern(vt_of(dev), 0);
	vt_of(dev)->pos = 0;
	dev->info.early_warning = 0;
	return NSR_OK;
}

/* vt_fsf - forward past n filemarks. */
static int vt_fsf(struct nsr_dev *dev, unsigned n)
{
	struct vtape *vt = vt_of(dev);
	size_t k;
	int rc;

	if (n == 0)
		return NSR_OK;
	k = vt_fm_before(vt, vt->pos) + n - 1;
	while (k >= vt->nfm) {
		rc = vt_more(dev, vt);
		if (rc < 0)
			return rc;
		if (rc == 0)
			break;
	}
	if (k >= vt->nfm) {
		vt->pos = vt->nent;
		return NSR_ERR_EOD;
	}
	vt->pos = vt->fm[k] + 1;
	return NSR_OK;
}

/* vt_bsf - backward past n filemarks, ending before the last one. */
static int vt_bsf(struct nsr_dev *dev, unsigned n)
{
	struct vtape *vt = vt_of(dev);
	size_t before;

	if (n == 0)
		return NSR_OK;
	before = vt_fm_before(vt, vt->pos);
	if (before < n) {
		vt->pos = 0;
		return NSR_ERR_EOD;
	}
	vt->pos = vt->fm[before - n];
	return NSR_OK;
}

/* vt_fsr - forward over n records; a filemark met on the way stops it
 * on its end-of-tape side (crossed). */
static int vt_fsr(struct nsr_dev *dev, unsigned n)
{
	struct vtape *vt = vt_of(dev);
	unsigned i;
	int rc;

	for (i = 0; i < n; i++) {
		rc = vt_have(dev, vt, vt->pos);
		if (rc < 0)
			return rc;
		if (rc == 0)
			return NSR_ERR_EOD;
		if (vt->ent[vt->pos++].kind == VT_FM)
			return NSR_ERR_EOF;
	}
	return NSR_OK;
}

/* vt_bsr - backward over n records; a filemark met on the way stops it
 * on its beginning-of-tape side (crossed, as SPACE does on a drive). */
static int vt_bsr(struct nsr_dev *dev, unsigned n)
{
	struct vtape *vt = vt_of(dev);
	unsigned i;

	for (i = 0; i < n; i++) {
		if (vt->pos == 0)
			return NSR_ERR_EOD;
		if (vt->ent[--vt->pos].kind == VT_FM)
			return NSR_ERR_EOF;
	}
	return NSR_OK;
}

/* vt_eod - to end of data. */
static int vt_eod(struct nsr_dev *dev)
{
	struct vtape *vt = vt_of(dev);
	int rc = vt_index_all(dev, vt);

	vt->pos = vt->nent;
	return rc;
}

/* vt_seek - start of file pos->file, then pos->record records on. */
static int vt_seek(struct nsr_dev *dev, const struct nsr_dev_pos *pos)
{
	struct vtape *vt = vt_of(dev);
	size_t start = 0;
	int rc;

	vt_pattern(vt, 0);
	while (pos->file > vt->nfm) {
		rc = vt_more(dev, vt);
		if (rc < 0)
			return rc;
		if (rc == 0)
			break;
	}
	if (pos->file > 0) {
		if (pos->file > vt->nfm) {
			vt->pos = vt->nent;
			return dev_fail(dev, NSR_ERR_EOD,
					"no file %" PRIu32 " on the tape",
					pos->file);
		}
		start = vt->fm[pos->file - 1] + 1;
	}
	vt->pos = start;
	if (pos->record > UINT_MAX)
		return NSR_ERR_EOD;
	return vt_fsr(dev, (unsigned)pos->record);
}

/* vt_tell - file and record of pos. */
static int vt_tell(struct nsr_dev *dev, struct nsr_dev_pos *pos)
{
	struct vtape *vt = vt_of(dev);
	size_t f = vt_fm_before(vt, vt->pos);

	pos->file = (uint32_t)f;
	pos->record = vt->pos - (f == 0 ? 0 : vt->fm[f - 1] + 1);
	return NSR_OK;
}

const struct dev_ops dev_vtape_ops = {
	.open = vt_open,
	.close = vt_close,
	.label_put = dev_seq_label_put,
	.label_get = dev_seq_label_get,
	.write = vt_write,
	.read = vt_read,
	.peek = vt_peek,
	.weof = vt_weof,
	.rewind = vt_rewind,
	.fsf = vt_fsf,
	.bsf = vt_bsf,
	.fsr = vt_fsr,
	.bsr = vt_bsr,
	.eod = vt_eod,
	.seek = vt_seek,
	.tell = vt_tell,
	.offline = vt_rewind,
};
