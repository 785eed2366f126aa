/*
 * vol_label.c - labeling volumes: make a new label, check block sizes,
 * write a label (refusing to overwrite a volume that holds data unless
 * forced), read and verify a label.  Messages for administrators name the
 * device, the volume and the sizes; they go to the caller's buffer.
 *
 * Relabeling an AFTD empties it, which is more than one step, so it goes
 * through an intent record: DIR/label.intent holds the new label record
 * (temp + fsync + rename) before the first session file goes, and is
 * removed after the new label is durable.  A relabel a crash cut short is
 * finished by nsr_vol_label_resume: once the intent is durable the
 * relabel happens completely; before, not at all.
 */
#include "nsr/compat.h"

#include <stdarg.h>
#include <time.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "nsr/buf.h"
#include "nsr/bytes.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/media_fmt.h"

#include "vol_int.h"

#define LABEL_INTENT "label.intent"

/* vol_why - append an explanation if the caller wants one. */
void vol_why(struct nsr_buf *why, const char *fmt, ...)
{
	va_list ap;

	if (why == NULL)
		return;
	va_start(ap, fmt);
	(void)nsr_buf_vaddf(why, fmt, ap);
	va_end(ap);
}

/* vol_volid_str - hex form of a volume id. */
void vol_volid_str(const uint8_t *volid, char *out)
{
	static const char hex[] = "0123456789abcdef";
	int i;

	for (i = 0; i < 16; i++) {
		out[2 * i] = hex[volid[i] >> 4];
		out[2 * i + 1] = hex[volid[i] & 15];
	}
	out[32] = '\0';
}

/* nsr_vol_block_size_check - the allowed block sizes. */
int nsr_vol_block_size_check(uint32_t bs, uint32_t dev_max,
			     struct nsr_buf *why)
{
	if (bs < NSR_VOL_BLOCK_MIN || bs > NSR_VOL_BLOCK_MAX ||
	    bs % NSR_VOL_BLOCK_ALIGN != 0) {
		vol_why(why,
			"block size %" PRIu32 " is not allowed: it must be "
			"%u KB to %u KB in multiples of %u KB",
			bs, NSR_VOL_BLOCK_MIN >> 10, NSR_VOL_BLOCK_MAX >> 10,
			NSR_VOL_BLOCK_ALIGN >> 10);
		return NSR_ERR_INVAL;
	}
	if (dev_max != 0 && bs > dev_max) {
		vol_why(why,
			"block size %" PRIu32 " KB is larger than the drive's "
			"largest block %" PRIu32 " bytes",
			bs >> 10, dev_max);
		return NSR_ERR_TOOBIG;
	}
	return NSR_OK;
}

/* copy_name - bounded copy with a length check. */
static int copy_name(char *dst, size_t size, const char *src,
		     const char *what, struct nsr_buf *why)
{
	size_t n = strlen(src);

	if (n >= size) {
		vol_why(why, "%s \"%s\" is longer than %zu bytes", what, src,
			size - 1);
		return NSR_ERR_INVAL;
	}
	memcpy(dst, src, n + 1);
	return NSR_OK;
}

/* nsr_vol_label_init - a new label with a fresh volume id. */
int nsr_vol_label_init(struct nsr_vol_label *lab, const char *name,
		       const char *pool, uint32_t block_size,
		       const char *media_type, struct nsr_buf *why)
{
	int rc;

	memset(lab, 0, sizeof(*lab));
	if (name == NULL || name[0] == '\0') {
		vol_why(why, "a volume needs a name");
		return NSR_ERR_INVAL;
	}
	rc = copy_name(lab->name, sizeof(lab->name), name, "volume name",
		       why);
	if (rc == NSR_OK)
		rc = copy_name(lab->pool, sizeof(lab->pool),
			       pool ? pool : "Default", "pool name", why);
	if (rc == NSR_OK)
		rc = copy_name(lab->media_type, sizeof(lab->media_type),
			       media_type ? media_type : "", "media type",
			       why);
	if (rc == NSR_OK)
		rc = nsr_vol_block_size_check(block_size, 0, why);
	if (rc != NSR_OK) {
		memset(lab, 0, sizeof(*lab));
		return rc;
	}
	lab->version = MEDIA_FMT_VERSION;
	uuid_generate(lab->volid);
	lab->block_size = block_size;
	lab->created = (int64_t)time(NULL);
	return NSR_OK;
}

/* nsr_vol_label_read - read, decode and explain. */
int nsr_vol_label_read(struct nsr_dev *dev, struct nsr_vol_label *out,
		       struct nsr_buf *why)
{
	uint8_t *rec;
	size_t got = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	rec = malloc(NSR_VOL_LABEL_SIZE);
	if (rec == NULL)
		return NSR_ERR_NOMEM;
	rc = nsr_dev_label_get(dev, rec, NSR_VOL_LABEL_SIZE, &got);
	if (rc == NSR_ERR_TOOBIG) {
		vol_why(why, "%s: the first record is longer than a label "
			"(%u bytes): not an OpenNSR volume",
			nsr_dev_path(dev), NSR_VOL_LABEL_SIZE);
		rc = NSR_ERR_CORRUPT;
	} else if (rc == NSR_ERR_EOD || rc == NSR_ERR_EOF ||
		   rc == NSR_ERR_NOTFOUND) {
		vol_why(why, "%s: no label (unlabeled volume)",
			nsr_dev_path(dev));
	} else if (rc != NSR_OK) {
		vol_why(why, "%s: cannot read the label: %s",
			nsr_dev_path(dev), nsr_dev_errmsg(dev));
	} else {
		rc = media_fmt_label_decode(rec, got, out);
		if (rc == NSR_ERR_NOTFOUND)
			vol_why(why, "%s: the first record (%zu bytes) is not "
				"an OpenNSR label", nsr_dev_path(dev), got);
		else if (rc == NSR_ERR_UNSUPPORTED)
			vol_why(why, "%s: label format version %" PRIu32
				" is newer than this program (%u)",
				nsr_dev_path(dev),
				got >= 12 ? nsr_get_u32(rec + 8) : 0u,
				MEDIA_FMT_VERSION);
		else if (rc != NSR_OK)
			vol_why(why, "%s: unreadable label (%zu bytes): %s",
				nsr_dev_path(dev), got, nsr_strerror(rc));
	}
	free(rec);
	return rc;
}

/* vol_read_label - read the label and check its block size fits. */
int vol_read_label(struct nsr_dev *dev, struct nsr_vol_label *lab,
		   struct nsr_buf *why)
{
	struct nsr_dev_info info;
	int rc;

	rc = nsr_vol_label_read(dev, lab, why);
	if (rc != NSR_OK)
		return rc;
	nsr_dev_get_info(dev, &info);
	if (info.max_record != 0 && lab->block_size > info.max_record) {
		vol_why(why, "%s: volume %s was labeled with %" PRIu32
			" KB blocks but the drive takes at most %" PRIu32
			" bytes", nsr_dev_path(dev), lab->name,
			lab->block_size >> 10, info.max_record);
		return NSR_ERR_MISMATCH;
	}
	return NSR_OK;
}

/* nsr_vol_has_data - does anything follow the label? */
int nsr_vol_has_data(struct nsr_dev *dev, int *yes)
{
	struct nsr_dev_info info;
	uint8_t *rec = NULL;
	uint32_t *nums = NULL;
	size_t n = 0, got = 0;
	int rc;

	*yes = 0;
	nsr_dev_get_info(dev, &info);
	if (!info.sequential) {
		rc = nsr_dev_file_list(dev, &nums, &n);
		free(nums);
		*yes = rc == NSR_OK && n > 0;
		return rc;
	}
	rec = malloc(NSR_VOL_LABEL_SIZE);
	if (rec == NULL)
		return NSR_ERR_NOMEM;
	rc = nsr_dev_label_get(dev, rec, NSR_VOL_LABEL_SIZE, &got);
	/* Probe with a label-sized buffer: st refuses tiny reads. */
	if (rc == NSR_OK)
		rc = nsr_dev_read(dev, rec, NSR_VOL_LABEL_SIZE, &got);
	free(rec);
	if (rc == NSR_OK || rc == NSR_ERR_TOOBIG) {
		*yes = 1;
		rc = NSR_OK;
	} else if (rc == NSR_ERR_EOD || rc == NSR_ERR_EOF) {
		rc = NSR_OK;
	}
	return rc;
}

/* remove_sessions - relabeling an AFTD empties it. */
static int remove_sessions(struct nsr_dev *dev, struct nsr_buf *why)
{
	uint32_t *nums = NULL, left = 0;
	uint64_t bytes = 0;
	size_t n = 0, i;
	int rc;

	rc = nsr_dev_file_list(dev, &nums, &n);
	for (i = 0; rc == NSR_OK && i < n; i++) {
		rc = nsr_dev_file_remove(dev, nums[i]);
		if (rc == NSR_ERR_NOTFOUND)
			rc = NSR_OK;
		vol_test_pause();
	}
	if (rc == NSR_OK) /* and leftovers of unfinished sessions */
		rc = nsr_dev_file_sweep(dev, &left, &bytes);
	if (rc != NSR_OK)
		vol_why(why, "%s: cannot empty the volume: %s",
			nsr_dev_path(dev), nsr_dev_errmsg(dev));
	free(nums);
	return rc;
}

/* put_label - write the label record rec. */
static int put_label(struct nsr_dev *dev, const uint8_t *rec,
		     struct nsr_buf *why)
{
	int rc = nsr_dev_label_put(dev, rec, NSR_VOL_LABEL_SIZE);

	if (rc != NSR_OK)
		vol_why(why, "%s: cannot write the label: %s",
			nsr_dev_path(dev), nsr_dev_errmsg(dev));
	return rc;
}

/* finish_relabel - the steps after the intent record at path: empty the
 * volume, write the new label, drop the intent.  Repeatable. */
static int finish_relabel(struct nsr_dev *dev, const uint8_t *rec,
			  const char *path, struct nsr_buf *why)
{
	int rc = remove_sessions(dev, why);

	if (rc == NSR_OK)
		rc = put_label(dev, rec, why);
	if (rc == NSR_OK && unlink(path) != 0 && errno != ENOENT) {
		vol_why(why, "%s: %s", path, strerror(errno));
		rc = NSR_ERR_SYSTEM;
	}
	if (rc == NSR_OK)
		(void)nsr_fsync_dir(nsr_dev_path(dev), 1);
	return rc;
}

/* relabel_aftd - relabel an AFTD under its intent record. */
static int relabel_aftd(struct nsr_dev *dev, const uint8_t *rec,
			struct nsr_buf *why)
{
	char path[PATH_MAX];
	int rc = vol_intent_path(dev, LABEL_INTENT, path, sizeof(path));

	if (rc == NSR_OK)
		rc = nsr_file_replace(path, rec, NSR_VOL_LABEL_SIZE, 0644);
	if (rc != NSR_OK) {
		vol_why(why, "%s: cannot write the intent record of the "
			"relabel: %s", path, rc == NSR_ERR_SYSTEM
			? strerror(errno) : nsr_strerror(rc));
		return rc;
	}
	return finish_relabel(dev, rec, path, why);
}

/* nsr_vol_label_write - label (or, with force, relabel) the medium. */
int nsr_vol_label_write(struct nsr_dev *dev, const struct nsr_vol_label *lab,
			int force, struct nsr_buf *why)
{
	struct nsr_vol_label old;
	struct nsr_dev_info info;
	uint8_t *rec = NULL;
	int rc, data = 0;

	nsr_dev_get_info(dev, &info);
	rc = nsr_vol_block_size_check(lab->block_size, info.max_record, why);
	if (rc != NSR_OK)
		return rc;
	if (nsr_vol_label_read(dev, &old, NULL) == NSR_OK) {
		rc = nsr_vol_has_data(dev, &data);
		if (rc != NSR_OK) {
			vol_why(why, "%s: cannot tell whether volume %s holds "
				"data: %s", nsr_dev_path(dev), old.name,
				nsr_dev_errmsg(dev));
			return rc;
		}
		if (data && !force) {
			vol_why(why, "%s: volume %s (pool %s) holds data; "
				"relabeling it needs force",
				nsr_dev_path(dev), old.name, old.pool);
			return NSR_ERR_EXISTS;
		}
	}
	rec = malloc(NSR_VOL_LABEL_SIZE);
	if (rec == NULL)
		return NSR_ERR_NOMEM;
	media_fmt_label_encode(lab, rec);
	if (info.sequential)
		rc = put_label(dev, rec, why);
	else
		rc = relabel_aftd(dev, rec, why);
	free(rec);
	return rc;
}

/* nsr_vol_label_resume - finish a relabel a crash cut short. */
int nsr_vol_label_resume(struct nsr_dev *dev, int *finished,
			 struct nsr_buf *why)
{
	struct nsr_vol_label lab;
	struct nsr_buf rec;
	char path[PATH_MAX];
	int rc;

	*finished = 0;
	nsr_buf_init(&rec, 0);
	rc = vol_intent_read(dev, LABEL_INTENT, path, sizeof(path), &rec,
			     NSR_VOL_LABEL_SIZE);
	if (rc != NSR_OK || rec.len == 0) {
		nsr_buf_release(&rec);
		return rc;
	}
	/* Written whole (rename) or not at all; anything else is not
	 * ours to finish. */
	if (rc == NSR_OK &&
	    media_fmt_label_decode((const uint8_t *)rec.data, rec.len,
				   &lab) != NSR_OK) {
		vol_why(why, "%s: the intent record of a relabel is not a "
			"label; remove it by hand", path);
		rc = NSR_ERR_CORRUPT;
	}
	if (rc == NSR_OK)
		rc = finish_relabel(dev, (const uint8_t *)rec.data, path, why);
	*finished = rc == NSR_OK;
	nsr_buf_release(&rec);
	return rc;
}
