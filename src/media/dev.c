/*
 * dev.c - the public device interface: type names, open/close, and the
 * dispatch of every nsr_dev_* call to the type's ops table (dev_int.h).
 * It owns struct nsr_dev and its last-error message.
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <stdarg.h>

#include "nsr/buf.h"
#include "nsr/err.h"

#include "dev_int.h"

static const struct {
	const char *name;
	enum nsr_dev_type type;
	const struct dev_ops *ops;
} dev_types[] = {
	{ "adv_file", NSR_DEV_AFTD, &dev_aftd_ops },
	{ "tape", NSR_DEV_TAPE, &dev_tape_ops },
	{ "vtape", NSR_DEV_VTAPE, &dev_vtape_ops },
};

/* nsr_dev_type_parse - resource name to type. */
int nsr_dev_type_parse(const char *name, enum nsr_dev_type *out)
{
	size_t i;

	for (i = 0; i < NSR_ARRAY_SIZE(dev_types); i++) {
		if (strcmp(name, dev_types[i].name) == 0) {
			*out = dev_types[i].type;
			return NSR_OK;
		}
	}
	return NSR_ERR_INVAL;
}

/* nsr_dev_type_name - type to resource name. */
const char *nsr_dev_type_name(enum nsr_dev_type type)
{
	size_t i;

	for (i = 0; i < NSR_ARRAY_SIZE(dev_types); i++)
		if (dev_types[i].type == type)
			return dev_types[i].name;
	return "unknown";
}

/* dev_fail - remember what went wrong and return rc. */
int dev_fail(struct nsr_dev *dev, int rc, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(dev->errmsg, sizeof(dev->errmsg), "%s: ", dev->path);
	if (n < 0 || (size_t)n >= sizeof(dev->errmsg))
		return rc;
	va_start(ap, fmt);
	vsnprintf(dev->errmsg + n, sizeof(dev->errmsg) - (size_t)n, fmt, ap);
	va_end(ap);
	return rc;
}

/* dev_sys - a failed system call, errno kept. */
int dev_sys(struct nsr_dev *dev, const char *what)
{
	int e = errno;

	dev_fail(dev, NSR_ERR_SYSTEM, "%s: %s", what, strerror(e));
	errno = e;
	return NSR_ERR_SYSTEM;
}

/* nsr_dev_open - allocate, pick the ops table, open. */
int nsr_dev_open(enum nsr_dev_type type, const char *path,
		 const struct nsr_dev_opts *opts, struct nsr_dev **out,
		 struct nsr_buf *why)
{
	static const struct nsr_dev_opts defaults;
	struct nsr_dev *dev = NULL;
	size_t i;
	int rc;

	*out = NULL;
	if (opts == NULL)
		opts = &defaults;
	dev = calloc(1, sizeof(*dev));
	if (dev == NULL)
		return NSR_ERR_NOMEM;
	dev->path = strdup(path);
	if (dev->path == NULL) {
		rc = NSR_ERR_NOMEM;
		goto out;
	}
	for (i = 0; i < NSR_ARRAY_SIZE(dev_types); i++)
		if (dev_types[i].type == type)
			dev->ops = dev_types[i].ops;
	if (dev->ops == NULL) {
		rc = NSR_ERR_INVAL;
		goto out;
	}
	dev->info.type = type;
	dev->read_only = opts->read_only;
	rc = dev->ops->open(dev, opts);
	if (rc == NSR_OK) {
		*out = dev;
		dev = NULL;
	}
out:
	if (dev != NULL) {
		if (why != NULL)
			nsr_buf_addf(why, "%s",
				     dev->errmsg[0] ? dev->errmsg
						    : nsr_strerror(rc));
		free(dev->path);
		free(dev);
	}
	return rc;
}

/* nsr_dev_close - close the type's state and free. */
int nsr_dev_close(struct nsr_dev *dev)
{
	int rc;

	if (dev == NULL)
		return NSR_OK;
	rc = dev->ops->close(dev);
	free(dev->path);
	free(dev);
	return rc;
}

/* nsr_dev_get_info - copy the current facts. */
void nsr_dev_get_info(struct nsr_dev *dev, struct nsr_dev_info *out)
{
	*out = dev->info;
}

/* nsr_dev_path - the path it was opened with. */
const char *nsr_dev_path(const struct nsr_dev *dev)
{
	return dev->path;
}

/* nsr_dev_errmsg - the last failure in words. */
const char *nsr_dev_errmsg(const struct nsr_dev *dev)
{
	return dev->errmsg;
}

/* DISPATCH - call op if the type has it, else NSR_ERR_UNSUPPORTED. */
#define DISPATCH(dev, op, ...)                                               \
	((dev)->ops->op != NULL ? (dev)->ops->op(__VA_ARGS__)                \
				: dev_fail((dev), NSR_ERR_UNSUPPORTED,       \
					   "%s not supported by %s", #op,    \
					   nsr_dev_type_name(                \
						   (dev)->info.type)))

/* nsr_dev_label_put - write the label record. */
int nsr_dev_label_put(struct nsr_dev *dev, const void *p, size_t len)
{
	if (dev->read_only)
		return dev_fail(dev, NSR_ERR_READONLY, "opened read-only");
	return DISPATCH(dev, label_put, dev, p, len);
}

/* nsr_dev_label_get - read the label record. */
int nsr_dev_label_get(struct nsr_dev *dev, void *p, size_t cap, size_t *got)
{
	*got = 0;
	return DISPATCH(dev, label_get, dev, p, cap, got);
}

/* nsr_dev_write - one record. */
int nsr_dev_write(struct nsr_dev *dev, const void *p, size_t len)
{
	if (dev->read_only)
		return dev_fail(dev, NSR_ERR_READONLY, "opened read-only");
	return DISPATCH(dev, write, dev, p, len);
}

/* nsr_dev_read - the next record. */
int nsr_dev_read(struct nsr_dev *dev, void *p, size_t cap, size_t *got)
{
	*got = 0;
	return DISPATCH(dev, read, dev, p, cap, got);
}

/* nsr_dev_weof - n filemarks. */
int nsr_dev_weof(struct nsr_dev *dev, unsigned n)
{
	if (dev->read_only)
		return dev_fail(dev, NSR_ERR_READONLY, "opened read-only");
	return DISPATCH(dev, weof, dev, n);
}

/* nsr_dev_rewind - to the beginning. */
int nsr_dev_rewind(struct nsr_dev *dev)
{
	return DISPATCH(dev, rewind, dev);
}

/* nsr_dev_fsf - forward over filemarks. */
int nsr_dev_fsf(struct nsr_dev *dev, unsigned n)
{
	return DISPATCH(dev, fsf, dev, n);
}

/* nsr_dev_bsf - backward over filemarks. */
int nsr_dev_bsf(struct nsr_dev *dev, unsigned n)
{
	return DISPATCH(dev, bsf, dev, n);
}

/* nsr_dev_fsr - forward over records. */
int nsr_dev_fsr(struct nsr_dev *dev, unsigned n)
{
	return DISPATCH(dev, fsr, dev, n);
}

/* nsr_dev_peek - the head of the next record, without moving. */
int nsr_dev_peek(struct nsr_dev *dev, void *p, size_t cap, size_t *got,
		 size_t *reclen)
{
	*got = 0;
	*reclen = 0;
	return DISPATCH(dev, peek, dev, p, cap, got, reclen);
}

/* nsr_dev_bsr - backward over records. */
int nsr_dev_bsr(struct nsr_dev *dev, unsigned n)
{
	return DISPATCH(dev, bsr, dev, n);
}

/* nsr_dev_eod - to end of data. */
int nsr_dev_eod(struct nsr_dev *dev)
{
	return DISPATCH(dev, eod, dev);
}

/* nsr_dev_seek - to a file and record. */
int nsr_dev_seek(struct nsr_dev *dev, const struct nsr_dev_pos *pos)
{
	return DISPATCH(dev, seek, dev, pos);
}

/* nsr_dev_tell - where we are. */
int nsr_dev_tell(struct nsr_dev *dev, struct nsr_dev_pos *pos)
{
	memset(pos, 0, sizeof(*pos));
	return DISPATCH(dev, tell, dev, pos);
}

/* nsr_dev_offline - rewind and unload. */
int nsr_dev_offline(struct nsr_dev *dev)
{
	return DISPATCH(dev, offline, dev);
}

/* nsr_dev_file_create - a new session file. */
int nsr_dev_file_create(struct nsr_dev *dev, uint32_t *fileno,
			struct nsr_dev_file **out)
{
	*out = NULL;
	if (dev->read_only)
		return dev_fail(dev, NSR_ERR_READONLY, "opened read-only");
	return DISPATCH(dev, file_create, dev, fileno, out);
}

/* nsr_dev_file_open - an existing session file, for reading. */
int nsr_dev_file_open(struct nsr_dev *dev, uint32_t fileno,
		      struct nsr_dev_file **out)
{
	*out = NULL;
	return DISPATCH(dev, file_open, dev, fileno, out);
}

/* nsr_dev_file_list - the session file numbers. */
int nsr_dev_file_list(struct nsr_dev *dev, uint32_t **nums, size_t *n)
{
	*nums = NULL;
	*n = 0;
	return DISPATCH(dev, file_list, dev, nums, n);
}

/* nsr_dev_file_remove - delete one session file. */
int nsr_dev_file_remove(struct nsr_dev *dev, uint32_t fileno)
{
	if (dev->read_only)
		return dev_fail(dev, NSR_ERR_READONLY, "opened read-only");
	return DISPATCH(dev, file_remove, dev, fileno);
}

/* nsr_dev_file_sweep - remove the leftovers of unfinished sessions. */
int nsr_dev_file_sweep(struct nsr_dev *dev, uint32_t *count, uint64_t *bytes)
{
	*count = 0;
	*bytes = 0;
	if (dev->read_only)
		return dev_fail(dev, NSR_ERR_READONLY, "opened read-only");
	if (dev->ops->file_sweep == NULL)
		return NSR_OK; /* tape: nothing is left behind in files */
	return dev->ops->file_sweep(dev, count, bytes);
}

/* dev_seq_label_put - rewind, write the label record and a filemark. */
int dev_seq_label_put(struct nsr_dev *dev, const void *p, size_t len)
{
	int rc;

	rc = dev->ops->rewind(dev);
	if (rc == NSR_OK)
		rc = dev->ops->write(dev, p, len);
	if (rc == NSR_OK)
		rc = dev->ops->weof(dev, 1);
	if (rc == NSR_OK)
		rc = dev->ops->weof(dev, 0);
	return rc;
}

/* dev_seq_label_get - rewind, read record 0, move past its filemark. */
int dev_seq_label_get(struct nsr_dev *dev, void *p, size_t cap, size_t *got)
{
	uint8_t *probe = NULL;
	size_t n = 0;
	int rc;

	rc = dev->ops->rewind(dev);
	if (rc != NSR_OK)
		return rc;
	rc = dev->ops->read(dev, p, cap, got);
	if (rc == NSR_ERR_EOD || rc == NSR_ERR_EOF)
		return dev_fail(dev, rc, "blank medium (no label record)");
	if (rc != NSR_OK)
		return rc;
	/* The label file holds one record; the next read meets its
	 * filemark.  Anything else is not our label layout.  The probe
	 * buffer is as big as the label's, because st refuses reads below
	 * the drive's minimum block (EINVAL). */
	probe = malloc(cap);
	if (probe == NULL)
		return NSR_ERR_NOMEM;
	rc = dev->ops->read(dev, probe, cap, &n);
	free(probe);
	if (rc == NSR_ERR_EOF || rc == NSR_ERR_EOD)
		return NSR_OK;
	if (rc == NSR_OK || rc == NSR_ERR_TOOBIG)
		return dev_fail(dev, NSR_ERR_CORRUPT,
				"label file holds more than one record");
	return rc;
}
