/*
 * clone.c - clone sessions and the choice of the copy to read.
 *
 * A save set has one or more clone instances (copies) in the media
 * database, each with its own cloneid and fragments.  CLONE_START
 * (nsrclone, nsrstage) makes a new instance in progress (clflags i) on a
 * writable volume of the destination pool that holds no copy of the save
 * set yet, and answers the fragments of the copy to read with their
 * movers and the destination's mover; the client reads one and writes the
 * other (the bytes pass through it).  When the volume to read is not
 * mounted, or the pool has no writable volume (after auto media
 * management), CLONE_START answers "not yet" with a mount request, as
 * SAVE_START and RECOVER_START do, until the mount timeout; a copy whose
 * destination fills goes on at NEXT_VOLUME.  CLONE_END marks the instance
 * complete (clflags cleared) or aborted (a), and for nsrstage then
 * removes the original copy: its bytes on an AFTD, then its record, under
 * an intent line ("unclone"), so a failure between the two leaves both
 * copies and the tick finishes the removal, never neither.
 *
 * Invariants:
 *  1. a clone instance is complete only after its mover recorded a
 *     complete or tail fragment of it (it is durable);
 *  2. at most one session per save set: a clone of a save set being
 *     cloned is refused, so the save set's ssid names the session
 *     (SAVE_RENEW renews it as a save's);
 *  3. a clone session whose client goes away is settled like a save
 *     (nsrd_clone_settle): complete if recorded, else aborted; one left in
 *     progress when nsrd stopped is settled at the next start;
 *  4. the original instance is removed only once the new one is
 *     complete.
 *
 * nsrd_copy_pick serves RECOVER_START too: a recover reads the first
 * complete copy whose volumes are all known and mounted (the original
 * first), and says which and why when it is not the original.
 */
#include "nsr/compat.h"

#include <time.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/host.h"
#include "nsr/level.h"
#include "nsr/log.h"
#include "nsr/mmd_clnt.h"
#include "nsr/mmdb_clnt.h"
#include "nsr/xmalloc.h"
#include "devcache.h"
#include "nsrd.h"

/* A clone instance as the choice sees it. */
struct copy_info {
	uint32_t cloneid;
	uint32_t flags;		/* MMDB_CLONE_* */
	int complete;		/* has a complete or tail fragment */
	int nfrags;
};

/* list_copies - the clone instances of ssid in the order the media
 * database keeps them (the original first), at most max; -1 with st set
 * if the media database cannot be asked. */
static int list_copies(struct nsrd *n, uint32_t ssid,
		       const struct mmdb_fragment *fr, size_t nf,
		       struct copy_info *out, size_t max, nsr_status *st)
{
	struct mmdb_ss_row rows[MMDB_CLONES_MAX];
	char q[32];
	size_t got = 0, k = 0;
	int done = 0, rc;

	snprintf(q, sizeof(q), "ssid=%u", ssid);
	rc = mmdb_clnt_query_open(n->mmdb, q, 0, 0);
	while (rc == NSR_OK && !done) {
		rc = mmdb_clnt_query_next_rows(n->mmdb, rows,
					       NSR_ARRAY_SIZE(rows), &got,
					       &done);
		for (size_t i = 0; rc == NSR_OK && i < got; i++) {
			size_t j = 0;

			while (j < k && out[j].cloneid !=
						rows[i].clone.cloneid)
				j++;
			if (j < k || k == max)
				continue; /* one row per volume */
			memset(&out[k], 0, sizeof(out[k]));
			out[k].cloneid = rows[i].clone.cloneid;
			out[k].flags = rows[i].clone.flags;
			k++;
		}
		if (got == 0)
			break;
	}
	if (rc != NSR_OK) {
		nsr_status_set(st, rc, "cannot list the copies of save set "
			       "%u: %s", ssid, mmdb_clnt_errmsg(n->mmdb));
		return -1;
	}
	for (size_t i = 0; i < nf; i++)
		for (size_t j = 0; j < k; j++)
			if (out[j].cloneid == fr[i].cloneid) {
				out[j].nfrags++;
				if (fr[i].flags &
				    (MMDB_FRAG_COMPLETE | MMDB_FRAG_TAIL))
					out[j].complete = 1;
			}
	return (int)k;
}

/* copy_usable - may copy c be read (data on a volume, not in progress
 * or aborted, not skipped)?  A copy whose last fragment is missing is
 * still read as far as it goes, as before clones (recover says so). */
static int copy_usable(const struct copy_info *c, uint32_t want,
		       uint32_t skip)
{
	if (want && c->cloneid != want)
		return 0;
	return c->cloneid != skip && c->nfrags > 0 &&
	       !(c->flags & (MMDB_CLONE_INCOMPLETE | MMDB_CLONE_ABORTED));
}

/* copy_mounted - 1 if every volume of clone cloneid is known and
 * mounted; else 0 with the first one that is not in volume[65] ("" if
 * it is missing from the media database: -1). */
static int copy_mounted(struct nsrd *n, uint32_t cloneid,
			const struct mmdb_fragment *fr, size_t nf,
			char *volume)
{
	struct mmdb_volume vol;

	volume[0] = '\0';
	for (size_t i = 0; i < nf; i++) {
		if (fr[i].cloneid != cloneid)
			continue;
		if (mmdb_clnt_vol_get_by_id(n->mmdb, fr[i].volid, &vol) !=
		    NSR_OK)
			return -1;
		if (!nsrd_device_with_volume(n, vol.name)) {
			snprintf(volume, 65, "%s", vol.name);
			return 0;
		}
	}
	return 1;
}

/* why_not - why copy c (the original) is not read, for the message. */
static const char *why_not(const struct copy_info *c, uint32_t skip,
			   int mounted)
{
	if (c->cloneid == skip)
		return "could not be read";
	if (c->flags & MMDB_CLONE_ABORTED)
		return "is aborted";
	if (c->flags & MMDB_CLONE_INCOMPLETE)
		return "is incomplete";
	if (c->nfrags == 0)
		return "has no data left on any volume (its volume was "
		       "deleted or relabeled)";
	if (!c->complete)
		return "is incomplete";
	if (mounted < 0)
		return "is on a volume missing from the media database";
	return "is on a volume that is not mounted";
}

/* copy_frags - the fragments of clone c->cloneid with the movers of their
 * devices into c; NSR_OK or an error with st set. */
static int copy_frags(struct nsrd *n, uint32_t ssid,
		      const struct mmdb_fragment *fr, size_t nf,
		      struct nsrd_copy *c, nsr_status *st)
{
	struct nsr_buf err;
	int rc = NSR_OK;

	nsr_buf_init(&err, 0);
	c->frags = nsr_xcalloc(nf + 1, sizeof(rec_frag));
	for (size_t i = 0; i < nf && rc == NSR_OK; i++) {
		const struct nsr_res *fdev;
		struct mmdb_volume vol;
		char fhost[NSR_HOST_MAX + 1] = "";
		int fport = 0;
		pid_t fpid = 0;
		rec_frag *w;

		if (fr[i].cloneid != c->cloneid)
			continue;
		rc = mmdb_clnt_vol_get_by_id(n->mmdb, fr[i].volid, &vol);
		fdev = rc == NSR_OK ? nsrd_device_with_volume(n, vol.name)
				    : NULL;
		if (!fdev) {
			nsr_status_set(st, NSR_ERR_NOTFOUND, "a volume of save "
				       "set %u is no longer known or mounted",
				       ssid);
			rc = NSR_ERR_NOTFOUND;
			break;
		}
		nsr_buf_reset(&err);
		rc = nsrd_device_mover(n, fdev, fhost, sizeof(fhost), &fport,
				       &fpid, &err);
		if (rc != NSR_OK) {
			nsr_status_set(st, NSR_ERR_CONNECT, "cannot get the "
				       "data mover of device '%s' (volume %s "
				       "of save set %u): %s",
				       nsr_res_get(fdev, "name"), vol.name,
				       ssid, err.data);
			rc = NSR_ERR_CONNECT;
			break;
		}
		if (!c->dev || fr[i].seq == 0) {
			c->dev = fdev;
			c->port = fport;
			c->pid = fpid;
			snprintf(c->mhost, sizeof(c->mhost), "%s", fhost);
		}
		w = &c->frags[c->nfrags++];
		w->mover_port = fport;
		w->mover_host = nsr_rpc_str(fhost);
		memcpy(w->volid, fr[i].volid, 16);
		w->volume = nsr_rpc_str(vol.name);
		w->ssid = fr[i].ssid;
		w->seq = fr[i].seq;
		w->ss_offset = fr[i].ss_offset;
		w->file = fr[i].file;
		w->record = fr[i].record;
		w->offset = fr[i].offset;
		w->size = fr[i].size;
		w->complete = (fr[i].flags &
			       (MMDB_FRAG_COMPLETE | MMDB_FRAG_TAIL)) != 0;
	}
	nsr_buf_release(&err);
	return rc;
}

/* nsrd_copy_release - see nsrd.h. */
void nsrd_copy_release(struct nsrd_copy *c)
{
	for (u_int i = 0; c->frags && i < c->nfrags; i++)
		xdr_free(NSR_XDR(xdr_rec_frag), (char *)&c->frags[i]);
	free(c->frags);
	c->frags = NULL;
	c->nfrags = 0;
}

/* nsrd_copy_pick - see nsrd.h. */
int nsrd_copy_pick(struct nsrd *n, uint32_t ssid, uint32_t want,
		   uint32_t skip, struct nsrd_copy *c, nsr_status *st)
{
	struct mmdb_fragment fr[MMDB_FRAGS_MAX];
	struct copy_info ci[MMDB_CLONES_MAX];
	size_t nf = 0;
	int nc, pick = -1, wait = -1, m0 = 1;
	char vol[65] = "", vol0[65] = "";

	memset(c, 0, sizeof(*c));
	if (nsrd_frags(n, ssid, fr, &nf, st) != NSR_OK)
		return NSR_ERR_IO;
	nc = list_copies(n, ssid, fr, nf, ci, MMDB_CLONES_MAX, st);
	if (nc < 0)
		return st->code;
	for (int i = 0; i < nc && pick < 0; i++) {
		int m;

		if (!copy_usable(&ci[i], want, skip))
			continue;
		m = copy_mounted(n, ci[i].cloneid, fr, nf, vol);
		if (i == 0)
			m0 = m;
		if (m > 0)
			pick = i;
		else if (m == 0 && wait < 0) {
			wait = i;
			snprintf(vol0, sizeof(vol0), "%s", vol);
		}
	}
	if (pick < 0 && wait >= 0) {
		c->cloneid = ci[wait].cloneid;
		snprintf(c->wait_volume, sizeof(c->wait_volume), "%s", vol0);
		return NSR_ERR_WAIT;
	}
	if (pick < 0) {
		nsr_status_set(st, NSR_ERR_NOTFOUND, want ?
			       "save set %u has no complete clone %u on a "
			       "known volume (mminfo -q ssid=%u -r "
			       "cloneid,clflags,volume lists its copies)" :
			       "save set %u has no complete copy on any known "
			       "volume (mminfo -q ssid=%u -r "
			       "cloneid,clflags,volume lists its copies)",
			       ssid, want ? want : ssid, ssid);
		return NSR_ERR_NOTFOUND;
	}
	c->cloneid = ci[pick].cloneid;
	if (copy_frags(n, ssid, fr, nf, c, st) != NSR_OK) {
		nsrd_copy_release(c);
		return st->code;
	}
	if (pick > 0 && !want)
		snprintf(c->msg, sizeof(c->msg), "the original copy of save "
			 "set %u (clone %u) %s; using clone %u on volume %s",
			 ssid, ci[0].cloneid, why_not(&ci[0], skip, m0),
			 c->cloneid, c->frags[0].volume);
	else if (skip && !want)
		snprintf(c->msg, sizeof(c->msg), "clone %u of save set %u "
			 "could not be read; using clone %u on volume %s", skip,
			 ssid, c->cloneid, c->frags[0].volume);
	else if (want)
		snprintf(c->msg, sizeof(c->msg), "using clone %u on volume %s",
			 c->cloneid, c->frags[0].volume);
	return NSR_OK;
}

/* holds_copy - 1 if a fragment of the save set (any copy) lies on volid. */
static int holds_copy(const struct mmdb_fragment *fr, size_t nf,
		      const uint8_t *volid)
{
	for (size_t i = 0; i < nf; i++)
		if (memcmp(fr[i].volid, volid, 16) == 0)
			return 1;
	return 0;
}

/* clone_start_init - every string of the reply set, as XDR requires. */
static void clone_start_init(clone_start_res *r)
{
	r->src_msg = nsr_rpc_str("");
	r->ss_client = nsr_rpc_str("");
	r->ss_name = nsr_rpc_str("");
	r->level = nsr_rpc_str("");
	r->volume = nsr_rpc_str("");
	r->mover_host = nsr_rpc_str("");
}

/* clone_source - the save set a->ssid, cloneable, and the copy to read
 * (cp); NSR_OK, NSR_ERR_WAIT (cp->wait_volume is not mounted) or an
 * error with st set. */
static int clone_source(struct nsrd *n, const clone_start_args *a,
			struct mmdb_saveset *ss, struct nsrd_copy *cp,
			nsr_status *st)
{
	if (mmdb_clnt_ss_get(n->mmdb, a->ssid, ss) != NSR_OK) {
		nsr_status_set(st, NSR_ERR_NOTFOUND, "save set %u is not in "
			       "the media database (mminfo -q ssid=%u)",
			       a->ssid, a->ssid);
		return NSR_ERR_NOTFOUND;
	}
	if (!(ss->flags & MMDB_SS_FINISHED)) {
		nsr_status_set(st, NSR_ERR_STATE, "save set %u (%s:%s) is %s; "
			       "only complete save sets can be cloned",
			       a->ssid, ss->client, ss->name,
			       (ss->flags & MMDB_SS_INPROGRESS)
				       ? "still in progress"
				       : "incomplete (aborted)");
		return NSR_ERR_STATE;
	}
	if (nsrd_session_find(n, 0, a->ssid)) {
		nsr_status_set(st, NSR_ERR_BUSY, "save set %u is being saved "
			       "or cloned already: run nsrclone again once "
			       "that has ended", a->ssid);
		return NSR_ERR_BUSY;
	}
	return nsrd_copy_pick(n, a->ssid, a->cloneid, 0, cp, st);
}

/* clone_wait - CLONE_START's "not yet", a mount request as a save's or a
 * recover's: for the volume to read (volume), else for a writable
 * volume of the pool (why: what pick_device said).  *w as
 * nsrd_wait_answer leaves it. */
static void clone_wait(struct nsrd *n, const clone_start_args *a,
		       clone_start_res *r, struct nsrd_wait **w,
		       const char *volume, const char *why)
{
	char what[32], tmo[512], advice[512], msg[NSR_MSG_MAX];
	struct nsrd_wait_ask q;

	snprintf(what, sizeof(what), "save set %u", a->ssid);
	snprintf(msg, sizeof(msg), "%s", why ? why : "");
	memset(&q, 0, sizeof(q));
	q.client = a->client;
	q.group = "";
	q.name = what;
	q.what = "clone";
	q.timed_out = tmo;
	q.advice = advice;
	if (volume) {
		snprintf(tmo, sizeof(tmo), "volume %s (holding save set %u) "
			 "was not mounted", volume, a->ssid);
		snprintf(advice, sizeof(advice), "mount it (nsrmm -m %s -f "
			 "DEVICE), then run nsrclone again", volume);
		q.kind = NSRD_WAIT_READ;
		q.pool = volume;
		nsrd_wait_answer(n, w, &q, &r->st, &r->ticket, &r->retry_ms,
				 "volume %s (holding save set %u) is not "
				 "mounted; mount it with: nsrmm -m %s -f "
				 "DEVICE", volume, a->ssid, volume);
		return;
	}
	snprintf(tmo, sizeof(tmo), "no writable volume of pool '%s' was "
		 "mounted", a->pool);
	snprintf(advice, sizeof(advice), "label one (nsrmm -l -b '%s' -f "
		 "DEVICE) or mount one (nsrmm -m VOLUME), then run nsrclone "
		 "again", a->pool);
	q.kind = NSRD_WAIT_VOLUME;
	q.pool = a->pool;
	nsrd_wait_answer(n, w, &q, &r->st, &r->ticket, &r->retry_ms, "%s",
			 msg);
}

/* nsrd_clone_start - CLONE_START: see the top of this file. */
int nsrd_clone_start(void *ctx, void *argp, void *resp,
		     struct nsr_rpc_call *call)
{
	struct nsrd *n = ctx;
	clone_start_args *a = argp;
	clone_start_res *r = resp;
	struct mmdb_fragment fr[MMDB_FRAGS_MAX];
	struct mmdb_saveset ss;
	struct mmdb_volume vol;
	struct mmdb_clone cl;
	struct nsrd_copy cp;
	struct nsrd_session *s = NULL;
	const struct nsr_res *dev;
	struct nsr_buf err;
	uint8_t excl[MMDB_FRAGS_MAX * 16];
	size_t nf = 0;
	char ssidtxt[32], mhost[NSR_HOST_MAX + 1] = "";
	int port = 0, rc;
	struct nsrd_wait *wt = nsrd_wait_find(n, a->ticket);

	clone_start_init(r);
	memset(&cp, 0, sizeof(cp));
	nsr_buf_init(&err, 0);
	if (!nsrd_res_find1(n, "NSR pool", a->pool)) {
		nsr_status_set(&r->st, NSR_ERR_NOTFOUND, "pool '%s' does not "
			       "exist (nsradmin -p: print type: NSR pool)",
			       a->pool);
		goto out;
	}
	rc = clone_source(n, a, &ss, &cp, &r->st);
	if (rc == NSR_ERR_WAIT)
		clone_wait(n, a, r, &wt, cp.wait_volume, NULL);
	if (rc != NSR_OK)
		goto out;
	if (nsrd_frags(n, a->ssid, fr, &nf, &r->st) != NSR_OK)
		goto out;
	/* Never a volume that holds a copy (any of its fragments). */
	for (size_t i = 0; i < nf; i++)
		memcpy(excl + 16 * i, fr[i].volid, 16);
	dev = nsrd_pick_device(n, a->pool, excl, nf, &vol, &r->st);
	if (!dev && nf && r->st.code == NSR_ERR_NOTFOUND) {
		/* Only volumes holding a copy are writable: say so. */
		dev = nsrd_pick_device(n, a->pool, NULL, 0, &vol, &r->st);
		if (dev)
			nsr_status_set(&r->st, NSR_OK, "%s", "");
	}
	if (!dev && r->st.code == NSR_ERR_NOTFOUND &&
	    nsrd_auto_recycle(n, a->pool)) /* media.c */
		dev = nsrd_pick_device(n, a->pool, excl, nf, &vol, &r->st);
	if (!dev && r->st.code == NSR_ERR_NOTFOUND) {
		/* A mount request: wait for a volume, up to the timeout. */
		clone_wait(n, a, r, &wt, NULL, r->st.msg);
		goto out;
	}
	if (!dev) {
		int code = r->st.code ? r->st.code : NSR_ERR_NOTFOUND;

		nsr_status_set(&r->st, code, "cannot clone save set %u to "
			       "pool '%s': %s", a->ssid, a->pool,
			       r->st.msg ? r->st.msg : "");
		goto out;
	}
	if (holds_copy(fr, nf, vol.volid)) {
		nsr_status_set(&r->st, NSR_ERR_EXISTS, "volume %s (pool '%s') "
			       "holds a copy of save set %u already, and a "
			       "save set gets at most one copy per volume: "
			       "label or mount another volume of pool '%s'",
			       vol.name, a->pool, a->ssid, a->pool);
		goto out;
	}
	s = nsrd_session_new(n, call);
	if (!s) {
		nsr_status_set(&r->st, NSR_ERR_LIMIT, "too many sessions");
		goto out;
	}
	s->clone = 1;
	s->ssid = a->ssid;
	snprintf(s->client, sizeof(s->client), "%s", a->client);
	snprintf(s->device, sizeof(s->device), "%s", nsr_res_get(dev, "name"));
	nsrd_session_tally(n, s);
	if (nsrd_device_mover(n, dev, mhost, sizeof(mhost), &port,
			      &s->mover_pid, &err) != NSR_OK) {
		nsr_status_set(&r->st, NSR_ERR_CONNECT, "cannot get the data "
			       "mover of device '%s': %s", s->device,
			       err.data);
		goto out;
	}
	nsrd_session_tally(n, s); /* and in its mover's load */
	memset(&cl, 0, sizeof(cl));
	cl.ssid = a->ssid;
	cl.clone_time = time(NULL);
	cl.clretent = ss.ssretent;
	cl.flags = MMDB_CLONE_INCOMPLETE;
	if (mmdb_clnt_clone_add(n->mmdb, &cl, &s->cloneid) != NSR_OK) {
		nsr_status_set(&r->st, NSR_ERR_IO, "cannot add a clone "
			       "instance to save set %u: %s", a->ssid,
			       mmdb_clnt_errmsg(n->mmdb));
		goto out;
	}
	snprintf(ssidtxt, sizeof(ssidtxt), "%u", a->ssid);
	s->jobid = nsrd_job_create(NSR_JOBDB_TYPE_CLONE, a->client, ss.name,
				   nsr_level_name(ss.level), a->pid,
				   a->command, ssidtxt);
	r->jobid = s->jobid;
	r->cloneid = s->cloneid;
	r->src_cloneid = cp.cloneid;
	free(r->src_msg);
	r->src_msg = nsr_rpc_str(cp.msg);
	r->frags.frags_val = cp.frags;
	r->frags.frags_len = cp.nfrags;
	cp.frags = NULL;
	cp.nfrags = 0;
	memcpy(r->longid, ss.longid, 16);
	free(r->ss_client);
	r->ss_client = nsr_rpc_str(ss.client);
	free(r->ss_name);
	r->ss_name = nsr_rpc_str(ss.name);
	free(r->level);
	r->level = nsr_rpc_str(nsr_level_name(ss.level));
	r->savetime = ss.savetime;
	r->browse_time = ss.ssbrowse;
	r->retention_time = ss.ssretent;
	r->totalsize = ss.totalsize;
	r->nfiles = ss.nfiles;
	free(r->volume);
	r->volume = nsr_rpc_str(vol.name);
	memcpy(r->volid, vol.volid, 16);
	free(r->mover_host);
	r->mover_host = nsr_rpc_str(mhost);
	r->mover_port = port;
	nsrd_grant(NSR_GRANT_READ, a->ssid, &r->read_grant);
	nsrd_grant(NSR_GRANT_WRITE, a->ssid, &r->write_grant);
	nsr_status_set(&r->st, NSR_OK, "%s", "");
	nsr_info("clone of save set %u (%s:%s) for %s: clone %u of clone %u, "
		 "job %lld, volume %s on %s", a->ssid, ss.client, ss.name,
		 a->client, s->cloneid, cp.cloneid, (long long)s->jobid,
		 vol.name, s->device);
	s = NULL; /* started: the session lives on */
out:
	if (wt) /* it waited: over now */
		nsrd_wait_end(n, wt, r->st.code == NSR_OK ? "satisfied"
							  : "failed");
	if (s)
		nsrd_session_free(n, s);
	nsrd_copy_release(&cp);
	nsr_buf_release(&err);
	return NSR_OK;
}

/* copy_state - the flags and completeness of clone cloneid of ssid
 * (*found 0 if it is gone); -1 if the media database is away. */
static int copy_state(struct nsrd *n, uint32_t ssid, uint32_t cloneid,
		      struct copy_info *out, int *found)
{
	struct mmdb_fragment fr[MMDB_FRAGS_MAX];
	struct copy_info ci[MMDB_CLONES_MAX];
	nsr_status st;
	size_t nf = 0;
	int nc, rc;

	*found = 0;
	memset(&st, 0, sizeof(st));
	rc = mmdb_clnt_frag_list(n->mmdb, ssid, fr, MMDB_FRAGS_MAX, &nf);
	if (rc == NSR_ERR_NOTFOUND)
		return 0;
	if (rc != NSR_OK)
		return -1;
	nf = NSR_MIN(nf, (size_t)MMDB_FRAGS_MAX);
	nc = list_copies(n, ssid, fr, nf, ci, MMDB_CLONES_MAX, &st);
	xdr_free(NSR_XDR(xdr_nsr_status), (char *)&st);
	if (nc < 0)
		return -1;
	for (int i = 0; i < nc; i++)
		if (ci[i].cloneid == cloneid) {
			*out = ci[i];
			*found = 1;
		}
	return 0;
}

/* unclone_do - the original copy's bytes (AFTD), then its record; each
 * step repeatable.  0 done, -1 not yet (st says why). */
static int unclone_do(struct nsrd *n, uint32_t ssid, uint32_t cloneid,
		      nsr_status *st)
{
	int rc;

	devcache_vol_forget(NULL); /* its volumes may not be full */
	if (nsrd_free_copy_space(n, ssid, cloneid, st) != 0)
		return -1;
	rc = mmdb_clnt_clone_remove(n->mmdb, ssid, cloneid);
	if (rc == NSR_OK || rc == NSR_ERR_NOTFOUND)
		return 0;
	nsr_status_set(st, rc, "cannot remove clone %u of save set %u: %s",
		       cloneid, ssid, mmdb_clnt_errmsg(n->mmdb));
	return -1;
}

/* unclone_line - the intent line of a removal: "ssid TAB cloneid". */
static void unclone_line(char *out, size_t len, uint32_t ssid,
			 uint32_t cloneid)
{
	snprintf(out, len, "%u\t%u", ssid, cloneid);
}

/* nsrd_unclone_finish - see nsrd.h. */
int nsrd_unclone_finish(struct nsrd *n, const char *line)
{
	unsigned ssid, cloneid;
	nsr_status st;
	int rc;

	if (sscanf(line, "%u\t%u", &ssid, &cloneid) != 2)
		return 0;
	memset(&st, 0, sizeof(st));
	rc = unclone_do(n, ssid, cloneid, &st);
	xdr_free(NSR_XDR(xdr_nsr_status), (char *)&st);
	if (rc == 0)
		nsr_info("save set %u: the removal of its staged copy %u cut "
			 "short by a failure is finished", ssid, cloneid);
	return rc;
}

/* stage_remove - nsrstage: the new copy is complete, the original copy
 * (cloneid) goes, under an intent line.  Its volumes go into note. */
static void stage_remove(struct nsrd *n, uint32_t ssid, uint32_t cloneid,
			 clone_end_res *r)
{
	struct mmdb_fragment fr[MMDB_FRAGS_MAX];
	struct mmdb_volume v;
	struct nsr_buf note;
	char line[64];
	size_t nf = 0;

	nsr_buf_init(&note, 0);
	if (mmdb_clnt_frag_list(n->mmdb, ssid, fr, MMDB_FRAGS_MAX, &nf) ==
	    NSR_OK)
		for (size_t i = 0; i < nf && i < MMDB_FRAGS_MAX; i++)
			if (fr[i].cloneid == cloneid &&
			    mmdb_clnt_vol_get_by_id(n->mmdb, fr[i].volid,
						    &v) == NSR_OK)
				nsr_buf_addf(&note, "%s%s (%llu bytes)",
					     note.len ? ", " : "", v.name,
					     (unsigned long long)fr[i].size);
	unclone_line(line, sizeof(line), ssid, cloneid);
	if (nsrd_intent_add(n, "unclone", line) != NSR_OK) {
		nsr_status_set(&r->st, NSR_ERR_IO, "save set %u is staged, "
			       "but its original copy %u is kept: nsrd cannot "
			       "write its intent record (see the log)", ssid,
			       cloneid);
		goto out;
	}
	if (unclone_do(n, ssid, cloneid, &r->st) != 0) {
		nsr_status_set(&r->st, r->st.code, "save set %u is staged, "
			       "but its original copy %u is not removed yet: "
			       "%s; nsrd finishes the removal once the data "
			       "mover and the media database answer", ssid,
			       cloneid, r->st.msg);
		goto out;
	}
	nsrd_intent_drop(n, "unclone", line);
	free(r->note);
	r->note = nsr_rpc_str(note.data);
	nsr_info("save set %u staged: its copy %u removed from %s", ssid,
		 cloneid, note.len ? note.data : "(no volume)");
out:
	nsr_buf_release(&note);
}

/* nsrd_clone_end - CLONE_END: settle the new copy; for nsrstage, then
 * remove the original. */
int nsrd_clone_end(void *ctx, void *argp, void *resp,
		   struct nsr_rpc_call *call)
{
	struct nsrd *n = ctx;
	clone_end_args *a = argp;
	clone_end_res *r = resp;
	/* One session per save set (invariant 2): its ssid names it. */
	struct nsrd_session *s = nsrd_session_find(n, 0, a->ssid);
	struct copy_info c;
	int found = 0, ok = a->status == 0, rc;

	NSR_UNUSED(call);
	r->note = nsr_rpc_str("");
	if (copy_state(n, a->ssid, a->cloneid, &c, &found) != 0) {
		nsr_status_set(&r->st, NSR_ERR_IO, "the media database is not "
			       "available: %s", mmdb_clnt_errmsg(n->mmdb));
		return NSR_OK;
	}
	if (!found) {
		nsr_status_set(&r->st, NSR_ERR_NOTFOUND, "save set %u has no "
			       "clone %u", a->ssid, a->cloneid);
		return NSR_OK;
	}
	if (!(c.flags & MMDB_CLONE_INCOMPLETE)) {
		/* Settled before: a repeated CLONE_END. */
	} else if (c.flags & MMDB_CLONE_ABORTED) {
		if (ok) {
			nsr_status_set(&r->st, NSR_ERR_STATE, "clone %u of "
				       "save set %u was settled as aborted "
				       "while nsrclone was away: run it "
				       "again", a->cloneid, a->ssid);
			return NSR_OK;
		}
	} else {
		if (ok && !c.complete) {
			ok = 0;
			nsr_status_set(&r->st, NSR_ERR_STATE, "the data mover "
				       "recorded no complete copy of save set "
				       "%u: clone %u aborted", a->ssid,
				       a->cloneid);
		}
		rc = mmdb_clnt_clone_set(n->mmdb, a->ssid, a->cloneid,
					 ok ? 0 : MMDB_CLONE_ABORTED,
					 ok ? MMDB_CLONE_INCOMPLETE : 0);
		if (rc != NSR_OK) {
			nsr_status_set(&r->st, NSR_ERR_IO, "cannot settle "
				       "clone %u of save set %u: %s",
				       a->cloneid, a->ssid,
				       mmdb_clnt_errmsg(n->mmdb));
			return NSR_OK; /* the session settles it later */
		}
		nsrd_job_finish(a->jobid, ok, a->bytes,
				ok ? "clone completed" : a->msg);
		nsr_info("clone %u of save set %u %s (%llu bytes)%s%s",
			 a->cloneid, a->ssid, ok ? "completed" : "FAILED",
			 (unsigned long long)a->bytes, ok ? "" : ": ",
			 ok ? "" : a->msg);
	}
	if (s && s->clone && s->cloneid == a->cloneid)
		nsrd_session_free(n, s);
	if (r->st.msg && r->st.code)
		return NSR_OK;
	nsr_status_set(&r->st, NSR_OK, "%s", "");
	if (ok && a->remove_cloneid && a->remove_cloneid != a->cloneid)
		stage_remove(n, a->ssid, a->remove_cloneid, r);
	return NSR_OK;
}

/* nsrd_clone_settle - see nsrd.h. */
int nsrd_clone_settle(struct nsrd *n, struct nsrd_session *s,
		      const char *why)
{
	struct copy_info c;
	char msg[512];
	int found = 0;

	if (copy_state(n, s->ssid, s->cloneid, &c, &found) != 0)
		return -1;
	if (!found || !(c.flags & MMDB_CLONE_INCOMPLETE) ||
	    (c.flags & MMDB_CLONE_ABORTED))
		return 0; /* gone, or its CLONE_END came */
	if (mmdb_clnt_clone_set(n->mmdb, s->ssid, s->cloneid,
				c.complete ? 0 : MMDB_CLONE_ABORTED,
				c.complete ? MMDB_CLONE_INCOMPLETE : 0) !=
	    NSR_OK)
		return -1;
	snprintf(msg, sizeof(msg), "%s %s: clone %u settled as %s", why,
		 c.complete ? "after its data mover had recorded all of it"
			    : "before the copy was complete",
		 s->cloneid, c.complete ? "complete" : "aborted (the original "
						       "is untouched)");
	nsrd_job_finish(s->jobid, c.complete, 0, msg);
	nsr_warn("save set %u: %s", s->ssid, msg);
	return 0;
}

/* nsrd_clone_reconcile - see nsrd.h. */
void nsrd_clone_reconcile(struct nsrd *n)
{
	struct mmdb_ss_row rows[64];
	struct nsrd_session left[64];
	size_t got = 0, nl = 0;
	int done = 0, rc;

	rc = mmdb_clnt_query_open(n->mmdb, "clflags=i", 0, time(NULL));
	while (rc == NSR_OK && !done && nl < NSR_ARRAY_SIZE(left)) {
		rc = mmdb_clnt_query_next_rows(n->mmdb, rows,
					       NSR_ARRAY_SIZE(rows), &got,
					       &done);
		for (size_t i = 0; rc == NSR_OK && i < got &&
				   nl < NSR_ARRAY_SIZE(left); i++) {
			if (rows[i].clone.flags & MMDB_CLONE_ABORTED)
				continue;
			memset(&left[nl], 0, sizeof(left[nl]));
			left[nl].clone = 1;
			left[nl].ssid = rows[i].ss.ssid;
			left[nl].cloneid = rows[i].clone.cloneid;
			nl++;
		}
		if (got == 0)
			break;
	}
	if (rc != NSR_OK)
		nsr_error("cannot list the clones left in progress: %s; they "
			  "stay in progress until nsrd starts again",
			  mmdb_clnt_errmsg(n->mmdb));
	/* Settled after the walk: settling opens queries of its own. */
	for (size_t i = 0; i < nl; i++)
		if (nsrd_clone_settle(n, &left[i], "nsrd stopped while the "
				      "clone was in progress") != 0)
			nsr_error("cannot settle clone %u of save set %u: %s",
				  left[i].cloneid, left[i].ssid,
				  mmdb_clnt_errmsg(n->mmdb));
}
