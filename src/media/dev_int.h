/*
 * dev_int.h - private to src/media: struct nsr_dev and the ops table each
 * device type fills in (dev_aftd.c, dev_tape.c, dev_vtape.c).  dev.c
 * dispatches the public nsr_dev_* calls through the table; a NULL entry
 * means the type does not support the operation (NSR_ERR_UNSUPPORTED).
 */
#ifndef NSR_MEDIA_DEV_INT_H
#define NSR_MEDIA_DEV_INT_H

#include <stdarg.h>

#include "nsr/dev.h"

struct dev_ops {
	int (*open)(struct nsr_dev *dev, const struct nsr_dev_opts *o);
	int (*close)(struct nsr_dev *dev);
	int (*label_put)(struct nsr_dev *dev, const void *p, size_t len);
	int (*label_get)(struct nsr_dev *dev, void *p, size_t cap,
			 size_t *got);
	/* sequential */
	int (*write)(struct nsr_dev *dev, const void *p, size_t len);
	int (*read)(struct nsr_dev *dev, void *p, size_t cap, size_t *got);
	int (*peek)(struct nsr_dev *dev, void *p, size_t cap, size_t *got,
		    size_t *reclen);
	int (*weof)(struct nsr_dev *dev, unsigned n);
	int (*rewind)(struct nsr_dev *dev);
	int (*fsf)(struct nsr_dev *dev, unsigned n);
	int (*bsf)(struct nsr_dev *dev, unsigned n);
	int (*fsr)(struct nsr_dev *dev, unsigned n);
	int (*bsr)(struct nsr_dev *dev, unsigned n);
	int (*eod)(struct nsr_dev *dev);
	int (*seek)(struct nsr_dev *dev, const struct nsr_dev_pos *pos);
	int (*tell)(struct nsr_dev *dev, struct nsr_dev_pos *pos);
	int (*offline)(struct nsr_dev *dev);
	/* files (AFTD) */
	int (*file_create)(struct nsr_dev *dev, uint32_t *fileno,
			   struct nsr_dev_file **out);
	int (*file_open)(struct nsr_dev *dev, uint32_t fileno,
			 struct nsr_dev_file **out);
	int (*file_list)(struct nsr_dev *dev, uint32_t **nums, size_t *n);
	int (*file_remove)(struct nsr_dev *dev, uint32_t fileno);
	int (*file_sweep)(struct nsr_dev *dev, uint32_t *count,
			  uint64_t *bytes);
};

struct nsr_dev {
	const struct dev_ops *ops;
	char *path;
	struct nsr_dev_info info;
	int read_only;
	char errmsg[512];
	void *priv; /* the type's own state */
};

extern const struct dev_ops dev_aftd_ops;
extern const struct dev_ops dev_tape_ops;
extern const struct dev_ops dev_vtape_ops;

/* dev_seq_label_put - label on a sequential device: rewind, one record,
 * one filemark. */
int dev_seq_label_put(struct nsr_dev *dev, const void *p, size_t len);
/* dev_seq_label_get - rewind, read record 0 and step over the filemark
 * that follows it. */
int dev_seq_label_get(struct nsr_dev *dev, void *p, size_t cap, size_t *got);

/* dev_fail - record a message for nsr_dev_errmsg and return rc. */
int dev_fail(struct nsr_dev *dev, int rc, const char *fmt, ...)
	NSR_PRINTF(3, 4);
/* dev_sys - dev_fail for a failed system call: appends strerror(errno)
 * and returns NSR_ERR_SYSTEM, keeping errno. */
int dev_sys(struct nsr_dev *dev, const char *what);

/* File-backed devices (AFTD session files, vtape files) start the
 * write-back of what they appended every DEV_WRITEBACK bytes, so that the
 * disk works while the data mover frames the next blocks instead of
 * receiving the whole session at the final fdatasync.  The pages of what
 * was started DEV_DROP_LAG stretches before are dropped from the page
 * cache ("drop-behind", without waiting: pages still being written stay
 * and are asked again next time), and so are those of what an AFTD
 * reader read as far behind: a backup's blocks are not read again soon,
 * caching them only pushes out what other programs use, and a page cache
 * that grows by every byte saved or read makes each transfer take memory
 * nobody has touched for long, which on our virtual machines cost a
 * mover several times the CPU of the copy itself (a large-file save ran
 * 3 to 4 times faster with drop-behind: tests/bench/tls/RESULTS.md).
 * Waiting for each stretch before dropping it was measured too: it took
 * the disk's queue away (vtape writes 0.6-0.8 x dd instead of 1.3 x).
 * NSR_DEV_DROP_BEHIND=0 keeps the pages.  Durability still comes only
 * from fdatasync. */
#define DEV_WRITEBACK (8u << 20)
#define DEV_DROP_LAG 2u

/* struct dev_wb - how far the write-back and the drop-behind of a file
 * written or read front to back have come. */
struct dev_wb {
	uint64_t started; /* write-back started below this offset */
	uint64_t dropped; /* pages below it asked out of the page cache */
	int keep;	  /* NSR_DEV_DROP_BEHIND=0: pages stay cached */
};

/* dev_wb_init - nothing of the file from offset at on is written back
 * yet; reads NSR_DEV_DROP_BEHIND. */
void dev_wb_init(struct dev_wb *wb, uint64_t at);

/* dev_readbehind - a file is read at off: unless wb->keep, drop the
 * pages of what lies DEV_DROP_LAG stretches or more behind off and move
 * wb->dropped there; a read before wb->dropped moves it back to off. */
void dev_readbehind(int fd, struct dev_wb *wb, uint64_t off);

/* dev_writeback - if [wb->started, end) holds DEV_WRITEBACK bytes or
 * more, start their write-back (sync_file_range WRITE: does not wait for
 * the disk) and move wb->started to end; then, unless wb->keep, drop the
 * pages of what lies DEV_DROP_LAG stretches or more behind end (and, once
 * more, of the stretch dropped before) and move wb->dropped there.
 * Marks past end (the file was cut back) move to end.  Failures are left
 * to the fdatasync that makes the data durable. */
void dev_writeback(int fd, struct dev_wb *wb, uint64_t end);

#endif /* NSR_MEDIA_DEV_INT_H */
