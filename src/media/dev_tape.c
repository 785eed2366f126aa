/*
 * dev_tape.c - the Linux st/nst tape driver through MTIOCTOP/MTIOCGET.
 * The drive is used in variable-block mode (MTSETBLK 0): one write() is
 * one record of exactly the label's block size.  Use the non-rewinding
 * node (/dev/nstN): closing it after writing adds a filemark (the driver
 * does), closing never rewinds.
 *
 * End of medium (st's protocol, as checked in the tapelab): the first
 * write past early warning fails with ENOSPC and writes nothing; the
 * driver then lets writes through until the physical end.  We report that
 * as early warning: the failed write is retried once and, if it succeeds,
 * returns NSR_OK with info.early_warning set; the volume writer stops
 * there.  A write that still fails is NSR_ERR_EOM (not written).
 *
 * The drive's block limits come from READ BLOCK LIMITS (SG_IO on the st
 * node; needs CAP_SYS_RAWIO).  When that is refused, max_record stays 0
 * (unknown) and a record the drive rejects gives NSR_ERR_TOOBIG (EINVAL
 * from st).
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <scsi/sg.h>
#include <sys/ioctl.h>
#include <sys/mtio.h>
#include <unistd.h>

#include "nsr/err.h"

#include "dev_int.h"

struct tape {
	int fd;
};

/* tp_fd - the descriptor of dev. */
static int tp_fd(struct nsr_dev *dev)
{
	return ((struct tape *)dev->priv)->fd;
}

/* tp_op - one MTIOCTOP operation; -1 with errno on failure. */
static int tp_op(struct nsr_dev *dev, short op, int count)
{
	struct mtop mt;

	mt.mt_op = op;
	mt.mt_count = count;
	return ioctl(tp_fd(dev), MTIOCTOP, &mt);
}

/* tp_status - MTIOCGET; NSR_OK or NSR_ERR_SYSTEM. */
static int tp_status(struct nsr_dev *dev, struct mtget *g)
{
	memset(g, 0, sizeof(*g));
	if (ioctl(tp_fd(dev), MTIOCGET, g) != 0)
		return dev_sys(dev, "MTIOCGET");
	return NSR_OK;
}

/* tp_read_limits - one READ BLOCK LIMITS through SG_IO; sets the info
 * on success. */
static int tp_read_limits(struct nsr_dev *dev)
{
	unsigned char cdb[6] = { 0x05, 0, 0, 0, 0, 0 };
	unsigned char data[6], sense[32];
	struct sg_io_hdr io;

	memset(&io, 0, sizeof(io));
	memset(data, 0, sizeof(data));
	io.interface_id = 'S';
	io.dxfer_direction = SG_DXFER_FROM_DEV;
	io.cmd_len = sizeof(cdb);
	io.cmdp = cdb;
	io.dxfer_len = sizeof(data);
	io.dxferp = data;
	io.mx_sb_len = sizeof(sense);
	io.sbp = sense;
	io.timeout = 10000;
	if (ioctl(tp_fd(dev), SG_IO, &io) != 0 || io.status != 0 ||
	    io.host_status != 0 || io.driver_status != 0)
		return NSR_ERR_IO;
	/* Byte 0 holds the granularity; the maximum is bytes 1..3. */
	dev->info.max_record = ((uint32_t)data[1] << 16) |
			       ((uint32_t)data[2] << 8) | data[3];
	dev->info.min_record = ((uint32_t)data[4] << 8) | data[5];
	return NSR_OK;
}

/* tp_block_limits - the drive's block limits, if SG_IO is allowed.  The
 * first command after a login may fail with a UNIT ATTENTION, so one
 * retry. */
static void tp_block_limits(struct nsr_dev *dev)
{
	if (tp_read_limits(dev) != NSR_OK)
		(void)tp_read_limits(dev);
}

/* tp_open - open the node, variable-block mode, block limits. */
/* tp_open_error - why open(2) of the tape node failed, in words that say
 * what to do (st reports these conditions through errno at open). */
static int tp_open_error(struct nsr_dev *dev)
{
	switch (errno) {
	case ENOENT:
		return dev_fail(dev, NSR_ERR_NOTFOUND, "no such tape device");
	case EBUSY:
		return dev_fail(dev, NSR_ERR_BUSY,
				"tape drive is busy: another program has it "
				"open; wait for it to finish or stop it");
	case EROFS:
		return dev_fail(dev, NSR_ERR_READONLY,
				"the tape in the drive is write-protected; "
				"load a writable tape or move the tab");
	case ENOMEDIUM:
		return dev_fail(dev, NSR_ERR_NOTFOUND,
				"no tape in the drive; load one");
	default:
		return dev_sys(dev, "open tape");
	}
}

/* tp_open - open the tape node (read-only or read-write) and learn the
 * drive. */
static int tp_open(struct nsr_dev *dev, const struct nsr_dev_opts *o)
{
	struct tape *t;

	NSR_UNUSED(o);
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NSR_ERR_NOMEM;
	t->fd = open(dev->path, (dev->read_only ? O_RDONLY : O_RDWR) |
					O_CLOEXEC);
	if (t->fd < 0) {
		int rc = tp_open_error(dev);

		free(t);
		return rc;
	}
	dev->priv = t;
	if (tp_op(dev, MTSETBLK, 0) != 0) {
		int rc = errno == ENOTTY || errno == EINVAL
				 ? dev_fail(dev, NSR_ERR_INVAL,
					    "not a tape drive (it does not "
					    "take tape commands); give the "
					    "drive's no-rewind node, e.g. "
					    "/dev/nst0")
				 : dev_sys(dev,
					   "MTSETBLK 0 (variable-block mode)");

		close(t->fd);
		free(t);
		dev->priv = NULL;
		return rc;
	}
	dev->info.sequential = 1;
	tp_block_limits(dev);
	return NSR_OK;
}

/* tp_close - close the node (st adds a filemark after writing). */
static int tp_close(struct nsr_dev *dev)
{
	struct tape *t = dev->priv;
	int rc = NSR_OK;

	if (t == NULL)
		return NSR_OK;
	if (close(t->fd) != 0)
		rc = dev_sys(dev, "close tape");
	free(t);
	return rc;
}

/* tp_write - one record, with st's early-warning protocol. */
static int tp_write(struct nsr_dev *dev, const void *p, size_t len)
{
	ssize_t n;
	int tries;

	for (tries = 0; tries < 2; tries++) {
		n = write(tp_fd(dev), p, len);
		if (n == (ssize_t)len)
			return NSR_OK;
		if (n >= 0)
			return dev_fail(dev, NSR_ERR_IO,
					"short write (%zd of %zu bytes)", n,
					len);
		if (errno == EINTR) {
			tries--;
			continue;
		}
		if (errno == EINVAL)
			return dev_fail(dev, NSR_ERR_TOOBIG,
					"drive refused a %zu-byte record "
					"(block size over the drive's limit "
					"%" PRIu32 "?)",
					len, dev->info.max_record);
		if (errno != ENOSPC)
			return dev_sys(dev, "write");
		if (dev->info.early_warning)
			break;
		dev->info.early_warning = 1;
	}
	return dev_fail(dev, NSR_ERR_EOM, "end of medium");
}

/* tp_read - one record; 0 bytes is a filemark or end of data. */
static int tp_read(struct nsr_dev *dev, void *p, size_t cap, size_t *got)
{
	struct mtget g;
	ssize_t n;

	do
		n = read(tp_fd(dev), p, cap);
	while (n < 0 && errno == EINTR);
	if (n > 0) {
		*got = (size_t)n;
		return NSR_OK;
	}
	if (n < 0 && errno == ENOMEM)
		return dev_fail(dev, NSR_ERR_TOOBIG,
				"record longer than the %zu-byte buffer", cap);
	if (tp_status(dev, &g) == NSR_OK && GMT_EOD(g.mt_gstat))
		return NSR_ERR_EOD;
	if (n == 0)
		return NSR_ERR_EOF;
	if (errno == EIO || errno == ENOSPC)
		return NSR_ERR_EOD;
	return dev_sys(dev, "read");
}

/* tp_weof - n filemarks (0: flush the drive's buffer). */
static int tp_weof(struct nsr_dev *dev, unsigned n)
{
	if (tp_op(dev, MTWEOF, (int)n) != 0) {
		if (errno == ENOSPC)
			return dev_fail(dev, NSR_ERR_EOM,
					"end of medium writing a filemark");
		return dev_sys(dev, "MTWEOF");
	}
	return NSR_OK;
}

/* tp_rewind - rewind; clears early warning. */
static int tp_rewind(struct nsr_dev *dev)
{
	if (tp_op(dev, MTREW, 1) != 0)
		return dev_sys(dev, "MTREW");
	dev->info.early_warning = 0;
	return NSR_OK;
}

/* tp_space - a spacing op; a failure means a boundary was hit. */
static int tp_space(struct nsr_dev *dev, short op, unsigned n, int bsr)
{
	struct mtget g;

	if (n == 0 || tp_op(dev, op, (int)n) == 0)
		return NSR_OK;
	if (errno != EIO && errno != ENOSPC)
		return dev_sys(dev, "space");
	if (tp_status(dev, &g) != NSR_OK)
		return NSR_ERR_SYSTEM;
	if (GMT_EOD(g.mt_gstat) || GMT_BOT(g.mt_gstat))
		return NSR_ERR_EOD;
	return bsr ? NSR_ERR_EOF : (op == MTFSR ? NSR_ERR_EOF : NSR_ERR_EOD);
}

/* tp_fsf - forward over filemarks. */
static int tp_fsf(struct nsr_dev *dev, unsigned n)
{
	return tp_space(dev, MTFSF, n, 0);
}

/* tp_bsf - backward over filemarks. */
static int tp_bsf(struct nsr_dev *dev, unsigned n)
{
	return tp_space(dev, MTBSF, n, 0);
}

/* tp_fsr - forward over records. */
static int tp_fsr(struct nsr_dev *dev, unsigned n)
{
	return tp_space(dev, MTFSR, n, 0);
}

/* tp_bsr - backward over records. */
static int tp_bsr(struct nsr_dev *dev, unsigned n)
{
	return tp_space(dev, MTBSR, n, 1);
}

/* tp_eod_slow - end of data by counting: rewind, FSF one file at a
 * time, then FSR one record at a time, so st knows the position. */
static int tp_eod_slow(struct nsr_dev *dev)
{
	struct mtget g;

	if (tp_rewind(dev) != NSR_OK)
		return NSR_ERR_SYSTEM;
	while (tp_op(dev, MTFSF, 1) == 0)
		;
	/* The last FSF stopped at end of data inside the last file;
	 * step back to its start and count its records. */
	if (tp_status(dev, &g) != NSR_OK)
		return NSR_ERR_SYSTEM;
	if (g.mt_fileno < 0)
		return dev_fail(dev, NSR_ERR_STATE,
				"cannot find end of data (position unknown)");
	if (tp_op(dev, MTBSF, 1) == 0 && tp_op(dev, MTFSF, 1) != 0)
		return dev_sys(dev, "MTFSF");
	if (g.mt_fileno == 0 && tp_rewind(dev) != NSR_OK)
		return NSR_ERR_SYSTEM;
	while (tp_op(dev, MTFSR, 1) == 0)
		;
	return NSR_OK;
}

/* tp_eod - space to end of data; if the driver then does not know the
 * file number (a drive without SPACE residue), count the way there. */
static int tp_eod(struct nsr_dev *dev)
{
	struct mtget g;

	if (tp_op(dev, MTEOM, 1) != 0)
		return dev_sys(dev, "MTEOM");
	if (tp_status(dev, &g) == NSR_OK && g.mt_fileno >= 0 &&
	    g.mt_fileno < 0x7fffff && g.mt_blkno >= 0)
		return NSR_OK;
	return tp_eod_slow(dev);
}

/* tp_seek - rewind, FSF to the file, FSR to the record. */
static int tp_seek(struct nsr_dev *dev, const struct nsr_dev_pos *pos)
{
	int rc;

	rc = tp_rewind(dev);
	if (rc == NSR_OK && pos->file > 0)
		rc = tp_fsf(dev, pos->file);
	if (rc == NSR_OK && pos->record > 0) {
		if (pos->record > INT_MAX)
			return dev_fail(dev, NSR_ERR_INVAL, "record too far");
		rc = tp_fsr(dev, (unsigned)pos->record);
	}
	return rc;
}

/* tp_tell - the driver's file and block numbers. */
static int tp_tell(struct nsr_dev *dev, struct nsr_dev_pos *pos)
{
	struct mtget g;
	int rc = tp_status(dev, &g);

	if (rc != NSR_OK)
		return rc;
	if (g.mt_fileno < 0 || g.mt_blkno < 0)
		return dev_fail(dev, NSR_ERR_STATE,
				"driver lost the position (rewind first)");
	pos->file = (uint32_t)g.mt_fileno;
	pos->record = (uint64_t)g.mt_blkno;
	return NSR_OK;
}

/* tp_offline - rewind and unload. */
static int tp_offline(struct nsr_dev *dev)
{
	if (tp_op(dev, MTOFFL, 1) != 0)
		return dev_sys(dev, "MTOFFL");
	dev->info.early_warning = 0;
	return NSR_OK;
}

const struct dev_ops dev_tape_ops = {
	.open = tp_open,
	.close = tp_close,
	.label_put = dev_seq_label_put,
	.label_get = dev_seq_label_get,
	.write = tp_write,
	.read = tp_read,
	.weof = tp_weof,
	.rewind = tp_rewind,
	.fsf = tp_fsf,
	.bsf = tp_bsf,
	.fsr = tp_fsr,
	.bsr = tp_bsr,
	.eod = tp_eod,
	.seek = tp_seek,
	.tell = tp_tell,
	.offline = tp_offline,
};
