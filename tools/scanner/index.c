/*
 * index.c - scanner -i.  A save set whose begin and end are both on this
 * volume is read back with the volume reader, its save stream decoded with
 * the stream decoder, and each FILE record becomes an index entry (that
 * of a file of unsized data, save --pipe, at its FILE_END, which gives
 * the size) sent to
 * nsrindexd (IX_DELETE of what the index had, IX_BEGIN, batched IX_ADD,
 * IX_COMMIT).  A stream that does not decode to its end is aborted, so the
 * index never holds half a save set (but the old entries are gone then:
 * they described a save set whose data does not decode).  Save sets that
 * span volumes are reported and left out, and so are bootstraps
 * (nsrbootstrap(8): a bootstrap has no index entries).
 */
#include "nsr/compat.h"

#include "nsr/asm.h"
#include "nsr/boot.h"
#include "nsr/buf.h"
#include "nsr/cfi.h"
#include "nsr/err.h"
#include "nsr/index_clnt.h"

#include "index.h"

struct ix_ctx {
	struct nsr_ixclnt *ix;
	struct nsr_asm_dec *dec;
	uint64_t files;
	int rc; /* first failure of the index calls */
	/* an unsized file's entry, waiting for its size (FILE_END) */
	struct nsr_cfi_entry pend;
	char *pend_path; /* NULL: none waiting */
};

/* add_entry - one index entry. */
static int add_entry(struct ix_ctx *c, const struct nsr_cfi_entry *e)
{
	int rc = nsr_ixclnt_add(c->ix, e);

	if (rc != NSR_OK) {
		c->rc = rc;
		return rc;
	}
	c->files++;
	return 0;
}

/* on_file - one FILE record: one index entry, or for an unsized file
 * one kept until its FILE_END says how big it is. */
static int on_file(void *arg, const struct nsr_asm_file *f, uint64_t offset)
{
	struct ix_ctx *c = arg;
	struct nsr_cfi_entry e;

	if (!nsr_cfi_entry_from_file(&e, f, offset))
		return 0; /* a part of a split file: its head is the entry */
	if (!f->unsized)
		return add_entry(c, &e);
	free(c->pend_path);
	c->pend = e;
	c->pend_path = strdup(f->path);
	if (c->pend_path == NULL)
		return NSR_ERR_NOMEM;
	c->pend.path = c->pend_path;
	return 0;
}

/* on_file_end - the size of a waiting unsized file: its entry. */
static int on_file_end(void *arg, const struct nsr_asm_file_end *fe)
{
	struct ix_ctx *c = arg;
	int rc;

	if (c->pend_path == NULL)
		return 0;
	c->pend.size = fe->bytes;
	rc = add_entry(c, &c->pend);
	free(c->pend_path);
	c->pend_path = NULL;
	return rc;
}

/* feed - volume data into the stream decoder. */
static int feed(void *arg, const void *p, size_t len)
{
	struct ix_ctx *c = arg;

	return nsr_asm_dec_feed(c->dec, p, len) != NSR_OK;
}

/* index_one - read, decode and index one save set. */
static int index_one(struct nsr_ixclnt *ix, struct nsr_vol_reader *r,
		     const struct scan_result *res, const struct scan_ss *s)
{
	static const struct nsr_asm_dec_ops ops = {.file = on_file,
						   .file_end = on_file_end};
	struct ix_ctx c;
	int rc, drc;

	memset(&c, 0, sizeof(c));
	c.ix = ix;
	if (nsr_asm_dec_new(&c.dec, &ops, &c) != NSR_OK)
		return -1;
	/* Replace what the index has of this save set. */
	rc = nsr_ixclnt_delete(ix, s->hdr.client, s->hdr.ssid);
	if (rc != NSR_OK && rc != NSR_ERR_NOTFOUND) {
		fprintf(stderr,
			"scanner: save set %u: cannot replace its index "
			"entries: %s\n",
			s->hdr.ssid, nsr_ixclnt_errmsg(ix));
		nsr_asm_dec_free(c.dec);
		return -1;
	}
	rc = nsr_ixclnt_begin(ix, s->hdr.client, s->hdr.ssid, s->hdr.savetime,
			      s->hdr.name);
	if (rc != NSR_OK) {
		fprintf(stderr, "scanner: save set %u: cannot start its index "
			"entries: %s\n", s->hdr.ssid, nsr_ixclnt_errmsg(ix));
		nsr_asm_dec_free(c.dec);
		return -1;
	}
	rc = nsr_vol_reader_read(r, &s->frag, feed, &c, NULL, NULL, NULL);
	drc = nsr_asm_dec_finish(c.dec);
	if (rc == NSR_OK && drc == NSR_OK && c.rc == NSR_OK)
		rc = nsr_ixclnt_commit(ix);
	if (rc != NSR_OK || drc != NSR_OK || c.rc != NSR_OK) {
		fprintf(stderr, "scanner: save set %u (%s:%s) on volume %s: "
			"not indexed: %s\n", s->hdr.ssid, s->hdr.client,
			s->hdr.name, res->label.name,
			c.rc != NSR_OK ? nsr_ixclnt_errmsg(ix)
			: rc != NSR_OK ? (*nsr_vol_reader_errmsg(r)
					  ? nsr_vol_reader_errmsg(r)
					  : nsr_strerror(rc))
				       : "the save stream does not decode");
		nsr_ixclnt_abort(ix);
		nsr_asm_dec_free(c.dec);
		free(c.pend_path);
		return -1;
	}
	free(c.pend_path);
	printf("scanner: save set %u (%s:%s): %llu index entries rebuilt\n",
	       s->hdr.ssid, s->hdr.client, s->hdr.name,
	       (unsigned long long)c.files);
	nsr_asm_dec_free(c.dec);
	return 0;
}

/* rebuild_index - every selected whole save set. */
int rebuild_index(const char *server, struct nsr_dev *dev,
		  const struct scan_result *res)
{
	struct nsr_ixclnt *ix = NULL;
	struct nsr_vol_reader *r = NULL;
	struct nsr_buf err;
	int ret = 0;

	nsr_buf_init(&err, 0);
	if (nsr_ixclnt_open(server, &ix, &err) != NSR_OK) {
		fprintf(stderr, "scanner: cannot reach the client file index: "
			"%s\n", err.data);
		nsr_buf_release(&err);
		return -1;
	}
	if (nsr_vol_reader_open(dev, res->label.volid, &r, &err) != NSR_OK) {
		fprintf(stderr, "scanner: cannot read the volume again: %s\n",
			err.data);
		ret = -1;
		goto out;
	}
	for (size_t i = 0; i < res->n; i++) {
		const struct scan_ss *s = &res->ss[i];

		if (!s->selected)
			continue;
		if (strcmp(s->hdr.name, NSR_BOOT_SSNAME) == 0) {
			printf("scanner: save set %u (%s:%s) is a bootstrap: "
			       "no index entries, by design\n", s->hdr.ssid,
			       s->hdr.client, s->hdr.name);
			continue;
		}
		if (!s->has_begin || !s->has_end || s->span.frag_seq != 0) {
			fprintf(stderr, "scanner: save set %u (%s:%s) is not "
				"whole on volume %s: not indexed (spanning "
				"save sets are not supported yet)\n",
				s->hdr.ssid, s->hdr.client, s->hdr.name,
				res->label.name);
			ret = -1;
			continue;
		}
		if (index_one(ix, r, res, s) != 0)
			ret = -1;
	}
out:
	nsr_vol_reader_close(r);
	nsr_ixclnt_close(ix);
	nsr_buf_release(&err);
	return ret;
}
