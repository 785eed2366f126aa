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

#endif /* NSR_MEDIA_DEV_INT_H */
