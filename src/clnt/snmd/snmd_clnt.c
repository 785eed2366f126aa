/*
 * snmd_clnt.c - client of nsrsnmd (nsrsnm.x) over a peer (peer.h): the
 * conversion between struct nsr_snmd_device and the XDR snm_device, and
 * the wording of failures.  Library code: no logging, no exit.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/peer.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsrsnm.h"
#include "nsr/snmd_clnt.h"

struct nsr_snmd {
	struct nsr_peer *peer;
};

/* make - a handle; connects now unless lazy. */
static int make(const char *snode, int lazy, int wait_ms,
		struct nsr_snmd **out, struct nsr_buf *err)
{
	struct nsr_snmd *h;
	int rc;

	*out = NULL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return NSR_ERR_NOMEM;
	rc = nsr_peer_new(snode, 0, NSRSNMD_PROG, NSRSNMD_V1, &h->peer);
	if (rc == NSR_OK) {
		nsr_peer_set_wait(h->peer, wait_ms);
		if (!lazy)
			rc = nsr_peer_connect(h->peer);
		if (rc && err)
			nsr_buf_addstr(err, nsr_peer_errmsg(h->peer));
	}
	if (rc) {
		nsr_snmd_close(h);
		return rc;
	}
	*out = h;
	return NSR_OK;
}

/* nsr_snmd_open - connect now. */
int nsr_snmd_open(const char *snode, struct nsr_snmd **out,
		  struct nsr_buf *err)
{
	return make(snode, 0, 0, out, err);
}

/* nsr_snmd_new - connect on first use. */
int nsr_snmd_new(const char *snode, int wait_ms, struct nsr_snmd **out)
{
	return make(snode, 1, wait_ms, out, NULL);
}

/* nsr_snmd_host - the storage node as named. */
const char *nsr_snmd_host(const struct nsr_snmd *h)
{
	return nsr_peer_host(h->peer);
}

/* nsr_snmd_close - close and free. */
void nsr_snmd_close(struct nsr_snmd *h)
{
	if (!h)
		return;
	nsr_peer_free(h->peer);
	free(h);
}

/* done - a call's outcome: the transport's words or nsrsnmd's status. */
static int done(struct nsr_snmd *h, int rc, const nsr_status *st,
		struct nsr_buf *err)
{
	if (rc != NSR_OK) {
		if (err)
			nsr_buf_addstr(err, nsr_peer_errmsg(h->peer));
		return rc;
	}
	if (st->code == NSR_OK)
		return NSR_OK;
	if (err)
		nsr_buf_addf(err, "%s", st->msg && *st->msg
						? st->msg
						: nsr_strerror(st->code));
	/* A peer must send a negative code; anything else is a failure. */
	return st->code < 0 ? st->code : NSR_ERR_PROTO;
}

/* nsr_snmd_mover - SNM_MOVER. */
int nsr_snmd_mover(struct nsr_snmd *h, const struct nsr_snmd_device *dev,
		   const char *server, int *port, pid_t *pid,
		   struct nsr_buf *err)
{
	snm_mover_args a;
	snm_mover_res r;
	int rc;

	*port = 0;
	if (pid)
		*pid = 0;
	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.dev.name = (char *)(dev->name ? dev->name : "");
	a.dev.media_type = (char *)(dev->media_type ? dev->media_type : "");
	a.dev.path = (char *)(dev->path ? dev->path : "");
	a.dev.capacity = dev->capacity;
	a.dev.segment_size = dev->segment_size;
	a.dev.target_sessions = dev->target_sessions;
	a.dev.max_sessions = dev->max_sessions;
	a.dev.max_movers = dev->max_movers;
	a.server = (char *)(server ? server : "");
	if (dev->nload > SNM_LOAD_MAX) {
		if (err)
			nsr_buf_addf(err, "device %s: more than %d movers",
				     a.dev.name, SNM_LOAD_MAX);
		return NSR_ERR_LIMIT;
	}
	if (dev->nload) {
		a.load.load_val = calloc(dev->nload, sizeof(snm_load));
		if (!a.load.load_val)
			return NSR_ERR_NOMEM;
		a.load.load_len = (u_int)dev->nload;
		for (size_t i = 0; i < dev->nload; i++) {
			a.load.load_val[i].pid = (int)dev->load[i].pid;
			a.load.load_val[i].sessions = dev->load[i].sessions;
		}
	}
	rc = nsr_peer_call(h->peer, SNM_MOVER, NSR_XDR(xdr_snm_mover_args), &a,
			   NSR_XDR(xdr_snm_mover_res), &r, NSR_PEER_RETRY);
	free(a.load.load_val);
	rc = done(h, rc, &r.st, err);
	if (rc == NSR_OK && (r.port <= 0 || r.port > 65535)) {
		if (err)
			nsr_buf_addf(err, "nsrsnmd on %s answered a bad port "
				     "%d for device %s", nsr_snmd_host(h),
				     r.port, a.dev.name);
		rc = NSR_ERR_PROTO;
	}
	if (rc == NSR_OK) {
		*port = r.port;
		if (pid)
			*pid = r.pid;
	}
	xdr_free(NSR_XDR(xdr_snm_mover_res), (char *)&r);
	return rc;
}

/* nsr_snmd_status - SNM_STATUS. */
int nsr_snmd_status(struct nsr_snmd *h, struct nsr_snmd_mover **out,
		    size_t *n, struct nsr_buf *err)
{
	snm_status_res r;
	struct nsr_snmd_mover *v = NULL;
	int rc;

	*out = NULL;
	*n = 0;
	memset(&r, 0, sizeof(r));
	rc = nsr_peer_call(h->peer, SNM_STATUS, NSR_XDR(xdr_void), NULL,
			   NSR_XDR(xdr_snm_status_res), &r, NSR_PEER_RETRY);
	rc = done(h, rc, &r.st, err);
	if (rc == NSR_OK && r.movers.movers_len > 0) {
		v = calloc(r.movers.movers_len, sizeof(*v));
		if (!v) {
			rc = NSR_ERR_NOMEM;
		} else {
			for (u_int i = 0; i < r.movers.movers_len; i++) {
				snm_mover_info *mi = &r.movers.movers_val[i];

				snprintf(v[i].device, sizeof(v[i].device),
					 "%s", mi->device);
				v[i].port = mi->port;
				v[i].pid = mi->pid;
			}
			*out = v;
			*n = r.movers.movers_len;
		}
	}
	xdr_free(NSR_XDR(xdr_snm_status_res), (char *)&r);
	return rc;
}
