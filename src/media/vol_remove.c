/*
 * vol_remove.c - give an AFTD's space back: remove the session files of
 * save sets the media database lets go of (deleted, aborted, recycled).
 *
 * Which file holds which save set is read from the volume itself: the
 * first chunk of a session file is its fragment's begin chunk, which
 * carries the ssid.  The caller may say where the media database has
 * each save set (the session file of each fragment): those files are
 * read and, when their begin chunk names the save set, removed; only
 * save sets without a file named, or whose named file holds another one,
 * are looked for in every session file of the directory.  A volume holds
 * every save set of its retention period, so the look costs one block
 * read per file of the volume, a named file one read per file removed.
 *
 * A removal is crash-safe through an intent record, DIR/remove.intent
 * (a line per save set: its ssid, and the file named for it if any;
 * written with temp + fsync + rename before any file goes, removed after
 * the directory is synced): a mover that dies halfway finds the record
 * at its next start (nsr_vol_remove_resume) and finishes the removal.
 * Removing a file that is already gone is not an error, so finishing
 * twice is harmless.
 */
#include "nsr/compat.h"

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/cmp.h"
#include "nsr/dev.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/media_fmt.h"
#include "nsr/vol.h"

#include "vol_int.h"

#define INTENT "remove.intent"
#define INTENT_MAX (NSR_VOL_REMOVE_MAX * 23 + 16)

/* vol_intent_path - DIR/name into out. */
int vol_intent_path(struct nsr_dev *dev, const char *name, char *out,
		    size_t cap)
{
	int n = snprintf(out, cap, "%s/%s", nsr_dev_path(dev), name);

	return n < 0 || (size_t)n >= cap ? NSR_ERR_TOOBIG : NSR_OK;
}

/* vol_intent_read - read DIR/name, if there is one. */
int vol_intent_read(struct nsr_dev *dev, const char *name, char *path,
		    size_t cap, struct nsr_buf *rec, size_t max)
{
	int rc = vol_intent_path(dev, name, path, cap);

	if (rc == NSR_OK)
		rc = nsr_file_read(path, rec, max);
	if (rc == NSR_ERR_NOTFOUND) {
		nsr_buf_reset(rec);
		rc = NSR_OK;
	}
	return rc;
}

/* first_ssid - the ssid of session file no's begin chunk (0: unknown,
 * its first block is unreadable, or the file is not there: then *gone,
 * if given, is 1). */
static uint32_t first_ssid(struct nsr_dev *dev, uint32_t no, uint8_t *blk,
			   uint32_t bs, int *gone)
{
	struct nsr_dev_file *f = NULL;
	struct media_fmt_block b;
	struct media_fmt_chunk c;
	const uint8_t *payload;
	size_t got = 0;
	uint32_t ssid = 0;
	int rc = nsr_dev_file_open(dev, no, &f);

	if (gone)
		*gone = rc == NSR_ERR_NOTFOUND;
	if (rc != NSR_OK)
		return 0;
	if (nsr_dev_file_pread(f, blk, bs, 0, &got) == NSR_OK && got == bs &&
	    media_fmt_block_decode(blk, got, &b) == NSR_OK && b.used > 0 &&
	    media_fmt_chunk_decode(blk + MEDIA_FMT_BLOCK_HDR, b.used, &c,
				   &payload) == NSR_OK &&
	    c.kind == MEDIA_FMT_BEGIN)
		ssid = c.ssid;
	nsr_dev_file_close(f);
	return ssid;
}

/* listed - is ssid in the sorted v[0..n)? */
static int listed(const uint32_t *v, size_t n, uint32_t ssid)
{
	return n > 0 && bsearch(&ssid, v, n, sizeof(*v), nsr_cmp_u32) != NULL;
}

/* file_bytes - the size of session file no (0 if unknown). */
static uint64_t file_bytes(struct nsr_dev *dev, uint32_t no)
{
	struct nsr_dev_file *f = NULL;
	uint64_t n = 0;

	if (nsr_dev_file_open(dev, no, &f) == NSR_OK)
		n = nsr_dev_file_size(f);
	nsr_dev_file_close(f);
	return n;
}

/* vol_test_pause - the test knob NSR_TEST_REMOVE_PAUSE_MS (<= 10 s). */
void vol_test_pause(void)
{
	nsr_test_pause("NSR_TEST_REMOVE_PAUSE_MS", 10000);
}

/* remove_one - remove session file no, counted in out; NSR_OK also
 * when it is gone already. */
static int remove_one(struct nsr_dev *dev, uint32_t no,
		      struct nsr_vol_removed *out)
{
	uint64_t sz = file_bytes(dev, no);
	int rc = nsr_dev_file_remove(dev, no);

	if (rc == NSR_ERR_NOTFOUND)
		return NSR_OK;
	if (rc == NSR_OK) {
		out->files++;
		out->bytes += sz;
		vol_test_pause();
	}
	return rc;
}

/* remove_named - the files where[] names, each removed if its begin
 * chunk is its save set's (or counted done if it is gone already); the
 * ssids still to look for everywhere into left[0..*nleft), sorted: those
 * without a file named, or with one that holds something else. */
static int remove_named(struct nsr_dev *dev, const uint32_t *ssids,
			const uint32_t *where, size_t n, uint8_t *blk,
			uint32_t bs, struct nsr_vol_removed *out,
			uint32_t *left, size_t *nleft)
{
	int rc = NSR_OK, gone;

	*nleft = 0;
	for (size_t i = 0; i < n; i++) {
		if (where && where[i]) {
			uint32_t ssid = first_ssid(dev, where[i], blk, bs,
						   &gone);

			if (gone)
				continue;
			if (ssid == ssids[i]) {
				rc = remove_one(dev, where[i], out);
				if (rc != NSR_OK)
					return rc;
				continue;
			}
		}
		left[(*nleft)++] = ssids[i];
	}
	if (*nleft > 1)
		qsort(left, *nleft, sizeof(*left), nsr_cmp_u32);
	return rc;
}

/* remove_listed - the removal itself, under a written intent record:
 * the named files first, then a look through every session file for
 * what is left. */
static int remove_listed(struct nsr_dev *dev, const uint32_t *ssids,
			 const uint32_t *where, size_t n,
			 struct nsr_vol_removed *out, struct nsr_buf *why)
{
	struct nsr_vol_label lab;
	uint32_t *nums = NULL, *left = NULL;
	uint8_t *blk = NULL;
	size_t nf = 0, nleft = 0;
	char path[PATH_MAX];
	int rc;

	rc = vol_read_label(dev, &lab, why);
	if (rc != NSR_OK)
		return rc;
	rc = vol_intent_path(dev, INTENT, path, sizeof(path));
	blk = malloc(lab.block_size);
	left = malloc((n ? n : 1) * sizeof(*left));
	if (rc == NSR_OK && (blk == NULL || left == NULL))
		rc = NSR_ERR_NOMEM;
	if (rc == NSR_OK)
		rc = remove_named(dev, ssids, where, n, blk, lab.block_size,
				  out, left, &nleft);
	if (rc == NSR_OK && nleft > 0)
		rc = nsr_dev_file_list(dev, &nums, &nf);
	for (size_t i = 0; rc == NSR_OK && nleft > 0 && i < nf; i++) {
		uint32_t ssid = first_ssid(dev, nums[i], blk, lab.block_size,
					   NULL);

		if (ssid != 0 && listed(left, nleft, ssid))
			rc = remove_one(dev, nums[i], out);
	}
	if (rc == NSR_OK && nsr_fsync_dir(nsr_dev_path(dev), 1) != NSR_OK)
		rc = NSR_ERR_SYSTEM;
	/* Done and durable: the intent record goes. */
	if (rc == NSR_OK && unlink(path) != 0 && errno != ENOENT)
		rc = NSR_ERR_SYSTEM;
	if (rc == NSR_OK)
		(void)nsr_fsync_dir(nsr_dev_path(dev), 1);
	if (rc != NSR_OK)
		vol_why(why, "%s: cannot remove the session files of %zu save "
			"set(s): %s", nsr_dev_path(dev), n,
			rc == NSR_ERR_SYSTEM ? strerror(errno)
					     : nsr_dev_errmsg(dev));
	free(blk);
	free(left);
	free(nums);
	return rc;
}

/* nsr_vol_remove_intent_format - see vol.h. */
int nsr_vol_remove_intent_format(const uint32_t *ssids, const uint32_t *where,
				 size_t n, struct nsr_buf *out)
{
	int rc = NSR_OK;

	for (size_t i = 0; rc == NSR_OK && i < n; i++)
		rc = where && where[i]
			     ? nsr_buf_addf(out, "%" PRIu32 " %" PRIu32 "\n",
					    ssids[i], where[i])
			     : nsr_buf_addf(out, "%" PRIu32 "\n", ssids[i]);
	return rc;
}

/* number - a decimal 1..UINT32_MAX at *p (digits only), *p moved past
 * it; 0 if there is none. */
static uint32_t number(const char **p, const char *end)
{
	uint64_t v = 0;
	const char *q = *p;

	while (q < end && *q >= '0' && *q <= '9' && v <= UINT32_MAX)
		v = v * 10 + (uint64_t)(*q++ - '0');
	if (q == *p || v == 0 || v > UINT32_MAX)
		return 0;
	*p = q;
	return (uint32_t)v;
}

/* nsr_vol_remove_intent_parse - see vol.h. */
size_t nsr_vol_remove_intent_parse(const char *text, size_t len,
				   uint32_t *ssids, uint32_t *where,
				   size_t max)
{
	const char *p = text, *end = text + len;
	size_t n = 0;

	while (n < max && p < end) {
		uint32_t ssid = number(&p, end), file = 0;

		if (ssid == 0)
			break;
		if (p < end && *p == ' ') {
			p++;
			file = number(&p, end);
			if (file == 0)
				break;
		}
		if (p >= end || *p != '\n')
			break;
		p++;
		ssids[n] = ssid;
		where[n++] = file;
	}
	return n;
}

/* nsr_vol_remove_ss - remove the session files of ssids, crash-safely. */
int nsr_vol_remove_ss(struct nsr_dev *dev, const uint32_t *ssids,
		      const uint32_t *where, size_t n,
		      struct nsr_vol_removed *out, struct nsr_buf *why)
{
	struct nsr_dev_info info;
	struct nsr_buf rec;
	char path[PATH_MAX];
	int rc;

	memset(out, 0, sizeof(*out));
	nsr_dev_get_info(dev, &info);
	if (info.sequential) {
		vol_why(why, "%s: a tape's space comes back when it is "
			"relabeled, not save set by save set",
			nsr_dev_path(dev));
		return NSR_ERR_UNSUPPORTED;
	}
	if (n > NSR_VOL_REMOVE_MAX)
		return NSR_ERR_LIMIT;
	if (n == 0)
		return NSR_OK;
	rc = vol_intent_path(dev, INTENT, path, sizeof(path));
	if (rc != NSR_OK)
		return rc;
	nsr_buf_init(&rec, 0);
	rc = nsr_vol_remove_intent_format(ssids, where, n, &rec);
	if (rc == NSR_OK)
		rc = nsr_file_replace(path, rec.data, rec.len, 0644);
	nsr_buf_release(&rec);
	if (rc != NSR_OK) {
		vol_why(why, "%s: cannot write the intent record: %s",
			path, rc == NSR_ERR_SYSTEM ? strerror(errno)
						   : nsr_strerror(rc));
		return rc;
	}
	return remove_listed(dev, ssids, where, n, out, why);
}

/* nsr_vol_remove_resume - finish a removal a crash interrupted. */
int nsr_vol_remove_resume(struct nsr_dev *dev, struct nsr_vol_removed *out,
			  struct nsr_buf *why)
{
	struct nsr_buf rec;
	uint32_t *v = NULL, *where = NULL;
	size_t n = 0;
	char path[PATH_MAX];
	int rc;

	memset(out, 0, sizeof(*out));
	nsr_buf_init(&rec, 0);
	rc = vol_intent_read(dev, INTENT, path, sizeof(path), &rec,
			     INTENT_MAX);
	if (rc != NSR_OK || rec.len == 0) {
		nsr_buf_release(&rec);
		return rc;
	}
	v = calloc(NSR_VOL_REMOVE_MAX, sizeof(*v));
	where = calloc(NSR_VOL_REMOVE_MAX, sizeof(*where));
	rc = v && where ? NSR_OK : NSR_ERR_NOMEM;
	/* A line that does not parse ends the list: the record is written
	 * whole (rename) or not at all. */
	if (rc == NSR_OK)
		n = nsr_vol_remove_intent_parse(rec.data, rec.len, v, where,
						NSR_VOL_REMOVE_MAX);
	if (rc == NSR_OK)
		rc = remove_listed(dev, v, where, n, out, why);
	free(v);
	free(where);
	nsr_buf_release(&rec);
	return rc;
}
