/*
 * cfi_query.c - reading the client file index: scanning a save set's
 * record file (bounded by the committed length, every record checked),
 * browsing a directory and finding a path as of a time, and the in-memory
 * decoder used by fuzzing.
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/bytes.h"
#include "nsr/crc32c.h"
#include "nsr/err.h"
#include "nsr/fileio.h"

#include "cfi_int.h"
#include "cfi_query_int.h"

/* What decode_records calls, and its scratch space. */
struct rec_cb {
	const struct nsr_cfi_saveset *ss;
	unsigned version;
	nsr_cfi_visit_fn visit;
	cfi_list_fn list;
	void *ctx;
	char *path;		/* CFI_PATH_MAX + 1: not on a stack */
	struct cfi_list_buf *lb;
};

/* rec_cb_init - scratch space for decoding records. */
static int rec_cb_init(struct rec_cb *cb, const struct nsr_cfi_saveset *ss,
		       unsigned version, nsr_cfi_visit_fn visit,
		       cfi_list_fn list, void *ctx)
{
	cb->ss = ss;
	cb->version = version;
	cb->visit = visit;
	cb->list = list;
	cb->ctx = ctx;
	cb->path = malloc(CFI_PATH_MAX + 1);
	cb->lb = malloc(sizeof(*cb->lb));
	return cb->path && cb->lb ? NSR_OK : NSR_ERR_NOMEM;
}

/* rec_cb_release - free the scratch space. */
static void rec_cb_release(struct rec_cb *cb)
{
	free(cb->path);
	free(cb->lb);
}

/* decode_one - one checked payload: an entry, or (version 2) a piece of
 * a directory list. */
static int decode_one(struct rec_cb *cb, const uint8_t *p, uint32_t len)
{
	struct nsr_cfi_entry e;
	struct cfi_list l;
	int rc;

	if (p[0] == 0) {
		if (cb->version < 2)
			return NSR_ERR_CORRUPT;
		rc = cfi_list_get(p, len, &l, cb->lb);
		if (rc == NSR_OK && cb->list)
			rc = cb->list(cb->ctx, cb->ss, &l);
		return rc;
	}
	if (len > NSR_CFI_MAX_RECORD)
		return NSR_ERR_CORRUPT;
	rc = cfi_rec_get(p, len, &e, cb->path);
	if (rc == NSR_OK && cb->visit)
		rc = cb->visit(cb->ctx, cb->ss, &e);
	return rc;
}

/* decode_records - decode the complete records at p[0..n); *used gets
 * the bytes consumed.  A record that does not fit is left for later. */
static int decode_records(struct rec_cb *cb, const uint8_t *p, size_t n,
			  size_t *used)
{
	size_t at = 0;
	int rc = NSR_OK;

	*used = 0;
	while (n - at >= 4 && rc == NSR_OK) {
		uint32_t len = nsr_get_u32(p + at);

		if (len < CFI_LIST_FIXED || len > CFI_REC_MAX) {
			rc = NSR_ERR_CORRUPT;
			break;
		}
		if (n - at < (size_t)len + 8)
			break;
		if (nsr_get_u32(p + at + 4 + len) !=
		    nsr_crc32c(0, p + at + 4, len)) {
			rc = NSR_ERR_CHECKSUM;
			break;
		}
		rc = decode_one(cb, p + at + 4, len);
		at += (size_t)len + 8;
		*used = at;
	}
	return rc;
}

/* nsr_cfi_decode_file - decode a record file image from memory. */
int nsr_cfi_decode_file(const void *data, size_t n, nsr_cfi_visit_fn visit,
			void *ctx)
{
	const uint8_t *p = data;
	struct nsr_cfi_saveset ss;
	struct rec_cb cb;
	size_t used = 0;
	unsigned version;
	int rc;

	memset(&ss, 0, sizeof(ss));
	ss.name = "";
	if (n < CFI_HDR_LEN)
		return NSR_ERR_TRUNCATED;
	rc = cfi_hdr_get(p, &ss.ssid, &ss.savetime, &version);
	if (rc)
		return rc;
	rc = rec_cb_init(&cb, &ss, version, visit, NULL, ctx);
	if (rc == NSR_OK)
		rc = decode_records(&cb, p + CFI_HDR_LEN, n - CFI_HDR_LEN,
				    &used);
	if (rc == NSR_OK && used != n - CFI_HDR_LEN)
		rc = NSR_ERR_TRUNCATED;
	rec_cb_release(&cb);
	return rc;
}

/* cfi_scan - visit the entries of a record file, bounded and checked. */
int cfi_scan(const char *dir, const struct cfi_ss *s, nsr_cfi_visit_fn visit,
	     void *ctx)
{
	return cfi_scan_lists(dir, s, visit, NULL, ctx);
}

/* cfi_scan_lists - visit the entries and list pieces of a record file. */
int cfi_scan_lists(const char *dir, const struct cfi_ss *s,
		   nsr_cfi_visit_fn visit, cfi_list_fn list, void *ctx)
{
	struct nsr_cfi_saveset ss;
	struct rec_cb cb;
	struct nsr_buf b;
	char *path = NULL;
	uint64_t left = s->length, ssid = 0;
	int64_t savetime = 0;
	unsigned version = 0;
	int fd = -1, rc;

	ss.ssid = s->ssid;
	ss.savetime = s->savetime;
	ss.entries = s->entries;
	ss.name = s->name;
	nsr_buf_init(&b, 0);
	rc = rec_cb_init(&cb, &ss, 0, visit, list, ctx);
	if (rc)
		goto out;
	if (asprintf(&path, "%s/ss-%" PRIu64 ".rec", dir, s->ssid) < 0) {
		path = NULL;
		rc = NSR_ERR_NOMEM;
		goto out;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	rc = errno == ENOENT ? NSR_ERR_NOTFOUND : NSR_ERR_SYSTEM;
	if (fd < 0)
		goto out;
	/* Read chunks up to the committed length, decoding whole records
	 * and carrying a partial one over to the next chunk. */
	while (left > 0 || b.len > 0) {
		size_t want = (size_t)NSR_MIN((uint64_t)READ_CHUNK, left);
		size_t got = 0, used = 0, skip = 0;

		if (want == 0) {
			rc = NSR_ERR_CORRUPT; /* a record runs past the end */
			goto out;
		}
		rc = nsr_buf_grow(&b, want);
		if (rc)
			goto out;
		rc = nsr_read_full(fd, b.data + b.len, want, &got);
		if (rc == NSR_OK && got != want)
			rc = NSR_ERR_CORRUPT; /* shorter than committed */
		if (rc)
			goto out;
		nsr_buf_setlen(&b, b.len + got);
		if (left == s->length) { /* first chunk: the header */
			if (b.len < CFI_HDR_LEN) {
				rc = NSR_ERR_CORRUPT;
				goto out;
			}
			rc = cfi_hdr_get((uint8_t *)b.data, &ssid, &savetime,
					 &version);
			if (rc == NSR_OK && ssid != s->ssid)
				rc = NSR_ERR_CORRUPT;
			if (rc)
				goto out;
			cb.version = version;
			skip = CFI_HDR_LEN;
		}
		left -= got;
		rc = decode_records(&cb, (uint8_t *)b.data + skip,
				    b.len - skip, &used);
		if (rc)
			goto out;
		used += skip;
		memmove(b.data, b.data + used, b.len - used);
		nsr_buf_setlen(&b, b.len - used);
	}
	rc = NSR_OK;
out:
	if (fd >= 0)
		close(fd);
	free(path);
	rec_cb_release(&cb);
	nsr_buf_release(&b);
	return rc;
}

/* nsr_cfi_decode_catalog - decode a catalogue image from memory. */
int nsr_cfi_decode_catalog(const void *p, size_t n, nsr_cfi_ss_fn visit,
			   void *ctx)
{
	struct cfi_ss *ss = NULL;
	struct nsr_cfi_saveset v;
	size_t count = 0;
	int rc = cfi_cat_get(p, n, &ss, &count);

	for (size_t i = 0; rc == NSR_OK && i < count; i++) {
		v.ssid = ss[i].ssid;
		v.savetime = ss[i].savetime;
		v.entries = ss[i].entries;
		v.name = ss[i].name;
		if (visit)
			rc = visit(ctx, &v);
	}
	cfi_ss_free(ss, count);
	return rc;
}
