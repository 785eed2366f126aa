/*
 * nsrd_clnt.c - client of nsrd (nsrd.x) over a peer (peer.h): one
 * function per procedure, the rpcgen structs as the wire codec, statuses
 * turned into return codes and words.  Library code: no logging, no exit.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/nsrd_clnt.h"
#include "nsr/peer.h"
#include "nsr/rpc.h"

struct nsr_nsrd {
	struct nsr_peer *peer;
	char err[1024];
};

/* make - a handle; connects now unless lazy. */
static int make(const char *server, int lazy, int wait_ms,
		struct nsr_nsrd **out, struct nsr_buf *err)
{
	struct nsr_nsrd *d;
	int rc;

	*out = NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NSR_ERR_NOMEM;
	rc = nsr_peer_new(server && *server ? server : "localhost", 0,
			  NSRD_PROG, NSRD_V1, &d->peer);
	if (rc == NSR_OK) {
		nsr_peer_set_wait(d->peer, wait_ms);
		if (!lazy)
			rc = nsr_peer_connect(d->peer);
		if (rc && err)
			nsr_buf_addstr(err, nsr_peer_errmsg(d->peer));
	}
	if (rc) {
		nsr_nsrd_close(d);
		return rc;
	}
	*out = d;
	return NSR_OK;
}

/* nsr_nsrd_open - connect now. */
int nsr_nsrd_open(const char *server, struct nsr_nsrd **out,
		  struct nsr_buf *err)
{
	return make(server, 0, 0, out, err);
}

/* nsr_nsrd_new - connect on first use. */
int nsr_nsrd_new(const char *server, int wait_ms, struct nsr_nsrd **out)
{
	return make(server, 1, wait_ms, out, NULL);
}

/* nsr_nsrd_set_wait - connect wait. */
void nsr_nsrd_set_wait(struct nsr_nsrd *d, int wait_ms)
{
	nsr_peer_set_wait(d->peer, wait_ms);
}

/* nsr_nsrd_set_timeout - reply timeout. */
void nsr_nsrd_set_timeout(struct nsr_nsrd *d, int reply_ms)
{
	nsr_peer_set_timeout(d->peer, reply_ms);
}

/* nsr_nsrd_errmsg - the last failure. */
const char *nsr_nsrd_errmsg(const struct nsr_nsrd *d)
{
	return d->err[0] ? d->err : "no error";
}

/* nsr_nsrd_host - the server as named. */
const char *nsr_nsrd_host(const struct nsr_nsrd *d)
{
	return nsr_peer_host(d->peer);
}

/* nsr_nsrd_close - close and free. */
void nsr_nsrd_close(struct nsr_nsrd *d)
{
	if (!d)
		return;
	nsr_peer_free(d->peer);
	free(d);
}

/* call - one call; st is the status inside res. */
static int call(struct nsr_nsrd *d, uint32_t proc, xdrproc_t xa, void *a,
		xdrproc_t xr, void *r, const nsr_status *st, unsigned flags)
{
	int rc;

	d->err[0] = '\0';
	rc = nsr_peer_call(d->peer, proc, xa, a, xr, r, flags);
	if (rc) {
		snprintf(d->err, sizeof(d->err), "%s",
			 nsr_peer_errmsg(d->peer));
		return rc;
	}
	if (st->code) {
		snprintf(d->err, sizeof(d->err), "%s",
			 st->msg && *st->msg ? st->msg
					     : nsr_strerror(st->code));
		return st->code < 0 ? st->code : NSR_ERR_PROTO;
	}
	return NSR_OK;
}

/* CALL - the body of one wrapper (may evaluate r twice). */
#define CALL(proc, targ, tres, flags)                                      \
	call(d, proc, NSR_XDR(xdr_##targ), a, NSR_XDR(xdr_##tres), r, &r->st, \
	     flags)

/* nsr_nsrd_res_query - RES_QUERY. */
int nsr_nsrd_res_query(struct nsr_nsrd *d, res_query_args *a,
		       res_list_res *r)
{
	return CALL(RES_QUERY, res_query_args, res_list_res, NSR_PEER_RETRY);
}

/* nsr_nsrd_res_create - RES_CREATE. */
int nsr_nsrd_res_create(struct nsr_nsrd *d, res_text_args *a,
			res_change_res *r)
{
	return CALL(RES_CREATE, res_text_args, res_change_res, 0);
}

/* nsr_nsrd_res_update - RES_UPDATE. */
int nsr_nsrd_res_update(struct nsr_nsrd *d, res_text_args *a,
			res_change_res *r)
{
	return CALL(RES_UPDATE, res_text_args, res_change_res, 0);
}

/* nsr_nsrd_res_delete - RES_DELETE. */
int nsr_nsrd_res_delete(struct nsr_nsrd *d, res_text_args *a,
			nsr_void_res *r)
{
	return CALL(RES_DELETE, res_text_args, nsr_void_res, 0);
}

/* nsr_nsrd_save_start - SAVE_START. */
int nsr_nsrd_save_start(struct nsr_nsrd *d, save_start_args *a,
			save_start_res *r)
{
	return CALL(SAVE_START, save_start_args, save_start_res, 0);
}

/* nsr_nsrd_save_end - SAVE_END (settling twice settles once). */
int nsr_nsrd_save_end(struct nsr_nsrd *d, save_end_args *a, nsr_void_res *r)
{
	return CALL(SAVE_END, save_end_args, nsr_void_res, NSR_PEER_RETRY);
}

/* nsr_nsrd_status - STATUS (nsrwatch). */
int nsr_nsrd_status(struct nsr_nsrd *d, status_res *r)
{
	void *a = NULL;

	return call(d, STATUS, NSR_XDR(xdr_void), a, NSR_XDR(xdr_status_res),
		    r, &r->st, NSR_PEER_RETRY);
}

/* nsr_nsrd_grant_key - GRANT_KEY (a data mover). */
int nsr_nsrd_grant_key(struct nsr_nsrd *d, grant_key_res *r)
{
	void *a = NULL;

	return call(d, GRANT_KEY, NSR_XDR(xdr_void), a,
		    NSR_XDR(xdr_grant_key_res), r, &r->st, NSR_PEER_RETRY);
}

/* nsr_nsrd_revoked_get - REVOKED_GET (nsrexecd's revocation poll). */
int nsr_nsrd_revoked_get(struct nsr_nsrd *d, revoked_res *r)
{
	void *a = NULL;

	return call(d, REVOKED_GET, NSR_XDR(xdr_void), a,
		    NSR_XDR(xdr_revoked_res), r, &r->st, NSR_PEER_RETRY);
}

/* nsr_nsrd_status_rates - STATUS_RATES (nsrwatch). */
int nsr_nsrd_status_rates(struct nsr_nsrd *d, rates_res *r)
{
	void *a = NULL;

	return call(d, STATUS_RATES, NSR_XDR(xdr_void), a,
		    NSR_XDR(xdr_rates_res), r, &r->st, NSR_PEER_RETRY);
}

/* nsr_nsrd_key_current - KEY_CURRENT: the key of the pass phrase and
 * the client's transform. */
int nsr_nsrd_key_current(struct nsr_nsrd *d, key_cur_args *a, key_res *r)
{
	return CALL(KEY_CURRENT, key_cur_args, key_res, NSR_PEER_RETRY);
}

/* nsr_nsrd_key_get - KEY_GET: the key of an id. */
int nsr_nsrd_key_get(struct nsr_nsrd *d, key_args *a, key_res *r)
{
	return CALL(KEY_GET, key_args, key_res, NSR_PEER_RETRY);
}

/* nsr_nsrd_savegrp - SAVEGRP (not repeated: it starts a group run). */
int nsr_nsrd_savegrp(struct nsr_nsrd *d, savegrp_args *a, savegrp_res *r)
{
	return CALL(SAVEGRP, savegrp_args, savegrp_res, 0);
}

/* nsr_nsrd_save_renew - SAVE_RENEW. */
int nsr_nsrd_save_renew(struct nsr_nsrd *d, save_renew_args *a,
			nsr_void_res *r)
{
	return CALL(SAVE_RENEW, save_renew_args, nsr_void_res,
		    NSR_PEER_RETRY);
}

/* nsr_nsrd_recover_start - RECOVER_START. */
int nsr_nsrd_recover_start(struct nsr_nsrd *d, rec_start_args *a,
			   rec_start_res *r)
{
	return CALL(RECOVER_START, rec_start_args, rec_start_res, 0);
}

/* nsr_nsrd_recover_end - RECOVER_END. */
int nsr_nsrd_recover_end(struct nsr_nsrd *d, rec_end_args *a,
			 nsr_void_res *r)
{
	return CALL(RECOVER_END, rec_end_args, nsr_void_res, NSR_PEER_RETRY);
}

/* nsr_nsrd_next_volume - NEXT_VOLUME. */
int nsr_nsrd_next_volume(struct nsr_nsrd *d, next_vol_args *a,
			 next_vol_res *r)
{
	return CALL(NEXT_VOLUME, next_vol_args, next_vol_res, 0);
}

/* nsr_nsrd_label - LABEL. */
int nsr_nsrd_label(struct nsr_nsrd *d, label_args *a, label_res *r)
{
	return CALL(LABEL, label_args, label_res, 0);
}

/* nsr_nsrd_mount - MOUNT. */
int nsr_nsrd_mount(struct nsr_nsrd *d, label_args *a, label_res *r)
{
	return CALL(MOUNT, label_args, label_res, 0);
}

/* nsr_nsrd_unmount - UNMOUNT. */
int nsr_nsrd_unmount(struct nsr_nsrd *d, label_args *a, nsr_void_res *r)
{
	return CALL(UNMOUNT, label_args, nsr_void_res, 0);
}

/* nsr_nsrd_vol_mode - VOL_MODE. */
int nsr_nsrd_vol_mode(struct nsr_nsrd *d, vol_mode_args *a, nsr_void_res *r)
{
	return CALL(VOL_MODE, vol_mode_args, nsr_void_res, 0);
}

/* nsr_nsrd_vol_delete - VOL_DELETE. */
int nsr_nsrd_vol_delete(struct nsr_nsrd *d, vol_del_args *a,
			nsr_void_res *r)
{
	return CALL(VOL_DELETE, vol_del_args, nsr_void_res, 0);
}

/* nsr_nsrd_clone_start - CLONE_START (not repeated: it makes a clone). */
int nsr_nsrd_clone_start(struct nsr_nsrd *d, clone_start_args *a,
			 clone_start_res *r)
{
	return CALL(CLONE_START, clone_start_args, clone_start_res, 0);
}

/* nsr_nsrd_clone_end - CLONE_END (settling twice settles once). */
int nsr_nsrd_clone_end(struct nsr_nsrd *d, clone_end_args *a,
		       clone_end_res *r)
{
	return CALL(CLONE_END, clone_end_args, clone_end_res, NSR_PEER_RETRY);
}
