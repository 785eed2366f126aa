/*
 * nsrd_clnt.h - the client library of nsrd (src/rpc/nsrd.x): the one way
 * every tool and daemon calls the server's master daemon.
 *
 * Calling sequence:
 *   1. nsr_nsrd_open(server, &d, err): locate nsrd through the server's
 *      nsrexecd and connect (err names host, program and port on
 *      failure);
 *   2. any number of calls: nsr_nsrd_<proc>(d, &args, &res), one per
 *      procedure of nsrd.x, with the rpcgen structs as the wire codec;
 *      the caller frees res with nsr_nsrd_free_<type> (xdr_free) whatever
 *      the result;
 *   3. nsr_nsrd_close(d).
 * Every call returns NSR_OK, the nsr_err code nsrd put in the result's
 * status (its message in nsr_nsrd_errmsg), or a transport error
 * (NSR_ERR_CONNECT, NSR_ERR_RPC, NSR_ERR_TIMEOUT, NSR_ERR_NOHOST) whose
 * message names the host, program and port.  Reads and the lease renewal
 * are repeated once on a new connection after a transport failure; the
 * connection waits up to nsr_nsrd_set_wait() ms for a restarting nsrd.
 * A handle is not thread-safe.
 */
#ifndef NSR_NSRD_CLNT_H
#define NSR_NSRD_CLNT_H

#include "nsr/rpc/nsrd.h"

struct nsr_buf;
struct nsr_nsrd;

/* nsr_nsrd_open - connect to nsrd on server (NULL = this host). */
int nsr_nsrd_open(const char *server, struct nsr_nsrd **out,
		  struct nsr_buf *err);
/* nsr_nsrd_new - a handle that connects on its first call (daemons). */
int nsr_nsrd_new(const char *server, int wait_ms, struct nsr_nsrd **out);
/* nsr_nsrd_set_wait - keep trying to (re)connect for up to wait_ms. */
void nsr_nsrd_set_wait(struct nsr_nsrd *d, int wait_ms);
/* nsr_nsrd_set_timeout - reply timeout of later calls (ms). */
void nsr_nsrd_set_timeout(struct nsr_nsrd *d, int reply_ms);
/* nsr_nsrd_errmsg - the last failure in words for an administrator. */
const char *nsr_nsrd_errmsg(const struct nsr_nsrd *d);
/* nsr_nsrd_host - the server as named. */
const char *nsr_nsrd_host(const struct nsr_nsrd *d);
/* nsr_nsrd_close - close and free (NULL is fine). */
void nsr_nsrd_close(struct nsr_nsrd *d);

/* Resources (nsradmin). */
int nsr_nsrd_res_query(struct nsr_nsrd *d, res_query_args *a,
		       res_list_res *r);
int nsr_nsrd_res_create(struct nsr_nsrd *d, res_text_args *a,
			res_change_res *r);
int nsr_nsrd_res_update(struct nsr_nsrd *d, res_text_args *a,
			res_change_res *r);
int nsr_nsrd_res_delete(struct nsr_nsrd *d, res_text_args *a,
			nsr_void_res *r);
/* nsr_nsrd_status - devices, movers, sessions and waits (nsrwatch). */
int nsr_nsrd_status(struct nsr_nsrd *d, status_res *r);
/* nsr_nsrd_grant_key - GRANT_KEY: the datazone's grant key, for a data
 * mover to check session grants (root on the server or a storage node). */
int nsr_nsrd_grant_key(struct nsr_nsrd *d, grant_key_res *r);
/* nsr_nsrd_revoked_get - REVOKED_GET: the datazone's revocation list
 * ("serial host" lines) in r->text. */
int nsr_nsrd_revoked_get(struct nsr_nsrd *d, revoked_res *r);
/* nsr_nsrd_status_rates - transfer rates per session and device, from
 * the movers' counters (nsrwatch). */
int nsr_nsrd_status_rates(struct nsr_nsrd *d, rates_res *r);

/* nsr_nsrd_key_current - what the client's resource asks for (aes
 * encryption, compression) and, when a->want_key or it asks for
 * encryption, the data key of the datazone pass phrase; the error says
 * when no pass phrase is set. */
int nsr_nsrd_key_current(struct nsr_nsrd *d, key_cur_args *a, key_res *r);
/* nsr_nsrd_key_get - the data key of a key id (recover), from the
 * current or a previous pass phrase; NSR_ERR_NOTFOUND if none has it. */
int nsr_nsrd_key_get(struct nsr_nsrd *d, key_args *a, key_res *r);
/* nsr_nsrd_savegrp - run a group now, or preview it (savegrp). */
int nsr_nsrd_savegrp(struct nsr_nsrd *d, savegrp_args *a, savegrp_res *r);

/* Sessions (save, recover, the movers). */
int nsr_nsrd_save_start(struct nsr_nsrd *d, save_start_args *a,
			save_start_res *r);
int nsr_nsrd_save_end(struct nsr_nsrd *d, save_end_args *a, nsr_void_res *r);
int nsr_nsrd_save_renew(struct nsr_nsrd *d, save_renew_args *a,
			nsr_void_res *r);
int nsr_nsrd_recover_start(struct nsr_nsrd *d, rec_start_args *a,
			   rec_start_res *r);
int nsr_nsrd_recover_end(struct nsr_nsrd *d, rec_end_args *a,
			 nsr_void_res *r);
int nsr_nsrd_next_volume(struct nsr_nsrd *d, next_vol_args *a,
			 next_vol_res *r);
/* Media (nsrmm). */
int nsr_nsrd_label(struct nsr_nsrd *d, label_args *a, label_res *r);
int nsr_nsrd_mount(struct nsr_nsrd *d, label_args *a, label_res *r);
int nsr_nsrd_unmount(struct nsr_nsrd *d, label_args *a, nsr_void_res *r);
int nsr_nsrd_vol_mode(struct nsr_nsrd *d, vol_mode_args *a, nsr_void_res *r);
int nsr_nsrd_vol_delete(struct nsr_nsrd *d, vol_del_args *a,
			nsr_void_res *r);

/* Clones (nsrclone, nsrstage): a clone session renews its lease with
 * nsr_nsrd_save_renew (its ssid and jobid). */
int nsr_nsrd_clone_start(struct nsr_nsrd *d, clone_start_args *a,
			 clone_start_res *r);
int nsr_nsrd_clone_end(struct nsr_nsrd *d, clone_end_args *a,
		       clone_end_res *r);

#endif /* NSR_NSRD_CLNT_H */
