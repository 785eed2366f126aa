/*
 * label.c - MMD_LABEL and MMD_READ_LABEL: write a new label on the volume
 * in the device (refusing one that holds save sets unless forced; the
 * caller has checked retention) and read the label back.  Labeling needs
 * the device to itself: no save or recover session may be open.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/log.h"
#include "nsr/xmalloc.h"

#include "mmd.h"

/* label_to_xdr - fill the XDR label (strings malloc'ed). */
static void label_to_xdr(mmd_label *out, const struct nsr_vol_label *lab)
{
	out->volume = nsr_xstrdup(lab->name);
	memcpy(out->volid, lab->volid, sizeof(out->volid));
	out->pool = nsr_xstrdup(lab->pool);
	out->block_size = lab->block_size;
	out->created = lab->created;
	out->media_type = nsr_xstrdup(lab->media_type);
}

/* label_empty - every string of a result label must be non-NULL. */
static void label_empty(mmd_label *out)
{
	if (!out->volume)
		out->volume = nsr_xstrdup("");
	if (!out->pool)
		out->pool = nsr_xstrdup("");
	if (!out->media_type)
		out->media_type = nsr_xstrdup("");
}

/* mmd_h_label - MMD_LABEL. */
int mmd_h_label(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	struct mmd *m = ctx;
	mmd_label_args *a = args;
	mmd_label_res *r = res;
	struct nsr_vol_label lab;
	struct nsr_buf why;
	uint32_t bs = a->block_size ? a->block_size : NSR_VOL_BLOCK_DEFAULT;
	int rc;

	NSR_UNUSED(call);
	nsr_buf_init(&why, 4096);
	pthread_mutex_lock(&m->mu);
	mmd_touch(m);
	/* Not while a save session lives, one past the end of medium
	 * included: its part on the volume is recorded only when its
	 * client settles it (save.c invariants 2 and 6). */
	if (m->sessions > 0 || m->saves > 0 || m->readers > 0) {
		mmd_status(&r->st, NSR_ERR_BUSY,
			   "cannot label volume %s in device %s: %u save and "
			   "%u recover sessions are using the device; try "
			   "again when they have finished", a->volume,
			   m->dev_name, NSR_MAX(m->sessions, m->saves),
			   m->readers);
		goto out;
	}
	if (m->w) {
		nsr_vol_writer_close(m->w);
		m->w = NULL;
	}
	rc = mmd_dev_open_locked(m, 1, &why);
	if (rc == NSR_OK)
		rc = nsr_vol_label_init(&lab, a->volume, a->pool, bs,
					nsr_dev_type_name(m->dev_type), &why);
	if (rc == NSR_OK)
		rc = nsr_vol_label_write(m->dev, &lab, a->force ? 1 : 0, &why);
	if (rc == NSR_ERR_EXISTS) {
		mmd_status(&r->st, rc,
			   "the volume in device %s holds save sets: not "
			   "relabeled as %s; check its retention and label "
			   "again with force to overwrite it (%s)",
			   m->dev_name, a->volume, why.data);
		goto out;
	}
	if (rc != NSR_OK) {
		mmd_status(&r->st, rc,
			   "cannot label volume %s in device %s: %s", a->volume,
			   m->dev_name, why.len ? why.data : nsr_strerror(rc));
		goto out;
	}
	label_to_xdr(&r->label, &lab);
	nsr_info("labeled volume %s (pool %s, block size %u) in device %s%s",
		 lab.name, lab.pool, lab.block_size, m->dev_name,
		 a->force ? " (forced)" : "");
	mmd_status(&r->st, NSR_OK, "%s", "");
out:
	pthread_mutex_unlock(&m->mu);
	label_empty(&r->label);
	nsr_buf_release(&why);
	return NSR_OK;
}

/* mmd_label_resume - finish an interrupted relabel (before serving). */
void mmd_label_resume(struct mmd *m, struct nsr_dev *dev)
{
	struct nsr_buf why;
	int finished = 0;

	nsr_buf_init(&why, 0);
	if (nsr_vol_label_resume(dev, &finished, &why) != NSR_OK)
		nsr_error("device %s: cannot finish an interrupted relabel: "
			  "%s", m->dev_name, why.data);
	else if (finished)
		nsr_info("device %s: finished an interrupted relabel",
			 m->dev_name);
	nsr_buf_release(&why);
}

/* mmd_h_read_label - MMD_READ_LABEL. */
int mmd_h_read_label(void *ctx, void *args, void *res,
		     struct nsr_rpc_call *call)
{
	struct mmd *m = ctx;
	mmd_label_res *r = res;
	struct nsr_vol_label lab;
	struct nsr_buf why;
	int rc, has_data = 0;

	NSR_UNUSED(args);
	NSR_UNUSED(call);
	nsr_buf_init(&why, 4096);
	pthread_mutex_lock(&m->mu);
	mmd_touch(m);
	if (m->w) {
		/* Being written: the writer has the label, and data. */
		label_to_xdr(&r->label, nsr_vol_writer_label(m->w));
		r->has_data = TRUE;
		mmd_status(&r->st, NSR_OK, "%s", "");
		goto out;
	}
	if (m->readers > 0 && m->dev_type != NSR_DEV_AFTD) {
		mmd_status(&r->st, NSR_ERR_BUSY,
			   "device %s is being read by %u recover sessions",
			   m->dev_name, m->readers);
		goto out;
	}
	rc = mmd_dev_open_locked(m, 0, &why);
	if (rc == NSR_OK)
		rc = nsr_vol_label_read(m->dev, &lab, &why);
	if (rc == NSR_OK)
		rc = nsr_vol_has_data(m->dev, &has_data);
	if (rc == NSR_ERR_EOD || rc == NSR_ERR_NOTFOUND) {
		mmd_status(&r->st, rc, "the volume in device %s has no label "
			   "(label it first)", m->dev_name);
		goto out;
	}
	if (rc != NSR_OK) {
		mmd_status(&r->st, rc, "cannot read the label in device %s: %s",
			   m->dev_name, why.len ? why.data : nsr_strerror(rc));
		goto out;
	}
	label_to_xdr(&r->label, &lab);
	r->has_data = has_data ? TRUE : FALSE;
	mmd_status(&r->st, NSR_OK, "%s", "");
out:
	pthread_mutex_unlock(&m->mu);
	label_empty(&r->label);
	nsr_buf_release(&why);
	return NSR_OK;
}
