/*
 * remove.c - MMD_SS_REMOVE: give an AFTD the space of save sets the media
 * database let go of.  The work (finding each save set's session file by
 * its begin chunk, the intent record that makes it crash-safe) is
 * nsr_vol_remove_ss in src/media; this file opens a handle of its own on
 * the device, so sessions writing at the same time are not disturbed (an
 * in-progress file is never one that is removed), and finishes at start
 * a removal that a crash cut short.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/log.h"
#include "nsr/vol.h"
#include "nsr/xmalloc.h"

#include "mmd.h"

/* mmd_remove_resume - finish an interrupted removal (before serving). */
void mmd_remove_resume(struct mmd *m, struct nsr_dev *dev)
{
	struct nsr_vol_removed rm;
	struct nsr_buf why;

	nsr_buf_init(&why, 0);
	if (nsr_vol_remove_resume(dev, &rm, &why) != NSR_OK)
		nsr_error("device %s: cannot finish an interrupted removal of "
			  "save sets: %s", m->dev_name, why.data);
	else if (rm.files > 0)
		nsr_info("device %s: finished an interrupted removal: %u "
			 "session file(s), %llu bytes", m->dev_name, rm.files,
			 (unsigned long long)rm.bytes);
	nsr_buf_release(&why);
}

/* mmd_h_ss_remove - MMD_SS_REMOVE. */
int mmd_h_ss_remove(void *ctx, void *args, void *res,
		    struct nsr_rpc_call *call)
{
	struct mmd *m = ctx;
	mmd_remove_args *a = args;
	mmd_remove_res *r = res;
	struct nsr_dev *dev = NULL;
	struct nsr_vol_removed rm;
	struct nsr_buf why;
	int rc;

	nsr_buf_init(&why, 0);
	if (m->dev_type != NSR_DEV_AFTD) {
		mmd_status(&r->st, NSR_ERR_UNSUPPORTED, "device %s is a %s: "
			   "its space comes back when the volume is relabeled",
			   m->dev_name, nsr_dev_type_name(m->dev_type));
		goto out;
	}
	pthread_mutex_lock(&m->mu);
	mmd_touch(m);
	pthread_mutex_unlock(&m->mu);
	if (a->where.where_len != 0 &&
	    a->where.where_len != a->ssids.ssids_len) {
		mmd_status(&r->st, NSR_ERR_INVAL, "a removal names files for "
			   "%u of its %u save sets: all or none",
			   a->where.where_len, a->ssids.ssids_len);
		goto out;
	}
	rc = mmd_dev_open_extra(m, 0, &dev, &why);
	if (rc == NSR_OK)
		rc = nsr_vol_remove_ss(dev, a->ssids.ssids_val,
				       a->where.where_len ? a->where.where_val
							  : NULL,
				       a->ssids.ssids_len, &rm, &why);
	if (rc != NSR_OK) {
		mmd_status(&r->st, rc, "cannot remove %u save set(s) from "
			   "device %s: %s", a->ssids.ssids_len, m->dev_name,
			   why.len ? why.data : nsr_strerror(rc));
		goto out;
	}
	r->files = rm.files;
	r->bytes = rm.bytes;
	nsr_info("device %s: removed %u session file(s) (%llu bytes) of %u "
		 "save set(s), asked by %s", m->dev_name, rm.files,
		 (unsigned long long)rm.bytes, a->ssids.ssids_len,
		 nsr_rpc_call_peer(call));
	mmd_status(&r->st, NSR_OK, "%s", "");
out:
	nsr_dev_close(dev);
	nsr_buf_release(&why);
	return NSR_OK;
}
