/*
 * nsrd.h - private to nsrd: the server state shared by its handler files.
 *
 * Handlers run with NSR_RPC_SERIAL, so all of struct nsrd is accessed under
 * the RPC server-wide mutex and needs no locking of its own.
 */
#ifndef NSRD_H
#define NSRD_H

#include <stdint.h>
#include <time.h>

#include "nsr/daemon.h"
#include "nsr/res.h"
#include "nsr/resdb.h"
#include "nsr/rpc/nsrd.h"
#include "nsr/rpc_status.h"

#define NSRD_MAX_SESSIONS 1024
/* A device's "segment size" when its resource does not say: a filemark
 * every 4000 MB on tape, as the tape white paper recommends. */
#define NSRD_SEGMENT_DEFAULT "4000 MB"

/* Lease of a session: its client renews it (SAVE_RENEW) while it
 * streams; env NSR_LEASE_SEC overrides (tests). */
#define NSRD_LEASE_SEC 120
/* A session whose client connection closed is settled this much later
 * (its mover ends its part of the session first). */
#define NSRD_ORPHAN_GRACE_SEC 3

/* An admitted save or recover session.  Its owner is the client
 * connection that started it (conn): when that connection closes, or the
 * lease lapses, the tick settles the session (nsrd_settle_orphans). */
struct nsrd_session {
	int used;
	int recover;	    /* 0 = save */
	int64_t jobid;
	uint32_t ssid;
	char client[256];
	char device[256];
	time_t started;
	uint64_t conn;	    /* owning connection (0 = none: adopted) */
	time_t lease_until; /* settle after this; 0 = owner gone */
};

struct mmdb_clnt;
struct nsr_jobd;
struct nsr_ixclnt;
struct nsr_snmd;

#define NSRD_MAX_SNODES 64 /* storage nodes nsrd keeps connections to */

struct nsrd {
	struct nsr_daemon *d;
	struct nsr_resdb *res;
	struct nsr_super *super;
	char server_name[256];
	/* Long-lived connections to the server's databases (peer.h): made
	 * at start, reconnected by the client libraries, waited for while
	 * a database daemon restarts.  Used under the RPC server mutex. */
	struct mmdb_clnt *mmdb;
	struct nsr_jobd *jobd;
	struct nsr_ixclnt *ix;
	/* One connection per storage node's nsrsnmd, opened on first use. */
	struct nsr_snmd *snmd[NSRD_MAX_SNODES];
	int nsnmd;
	struct nsrd_session sessions[NSRD_MAX_SESSIONS];
	uint64_t next_conn; /* connection ids handed out */
};

extern struct nsrd g_nsrd;

/* res_rpc.c */
int nsrd_res_query(void *ctx, void *args, void *res, struct nsr_rpc_call *call);
int nsrd_res_create(void *ctx, void *args, void *res, struct nsr_rpc_call *call);
int nsrd_res_update(void *ctx, void *args, void *res, struct nsr_rpc_call *call);
int nsrd_res_delete(void *ctx, void *args, void *res, struct nsr_rpc_call *call);
/* nsrd_res_find1 - the first resource of type with this name, or NULL. */
const struct nsr_res *nsrd_res_find1(struct nsrd *n, const char *type,
				     const char *name);
/* nsrd_res_set_attr - server-side change of one attribute (e.g. a device's
 * volume name); NSR_OK or an error. */
int nsrd_res_set_attr(struct nsrd *n, const struct nsr_res *r, const char *attr,
		      const char *value);
/* nsrd_server_attr_num - numeric attribute of the NSR resource. */
long long nsrd_server_attr_num(struct nsrd *n, const char *attr, long long dflt);

/* session.c */
int nsrd_save_start(void *ctx, void *args, void *res, struct nsr_rpc_call *call);
int nsrd_save_end(void *ctx, void *args, void *res, struct nsr_rpc_call *call);
int nsrd_recover_start(void *ctx, void *args, void *res, struct nsr_rpc_call *call);
int nsrd_recover_end(void *ctx, void *args, void *res, struct nsr_rpc_call *call);
/* nsrd_save_renew - SAVE_RENEW: renew (or adopt) a save's lease. */
int nsrd_save_renew(void *ctx, void *args, void *res, struct nsr_rpc_call *call);
/* nsrd_settle_orphans - settle sessions whose client went away or whose
 * lease lapsed: the save set complete if the mover recorded all of it,
 * else aborted with the reason; the job finished; the slot freed.  Runs
 * from the tick under the RPC server mutex. */
void nsrd_settle_orphans(struct nsrd *n);
/* nsrd_reconcile - at start: every save set the media database holds in
 * progress becomes a session without owner, adopted by its client's next
 * SAVE_RENEW/SAVE_END, else settled when its lease lapses. */
void nsrd_reconcile(struct nsrd *n);
/* nsrd_next_volume - NEXT_VOLUME: the client of a save whose volume filled
 * asks for the next writable volume of the pool (spanning). */
int nsrd_next_volume(void *ctx, void *args, void *res, struct nsr_rpc_call *call);

/* media.c */
int nsrd_label(void *ctx, void *args, void *res, struct nsr_rpc_call *call);
int nsrd_mount(void *ctx, void *args, void *res, struct nsr_rpc_call *call);
int nsrd_unmount(void *ctx, void *args, void *res, struct nsr_rpc_call *call);
int nsrd_vol_mode(void *ctx, void *args, void *res, struct nsr_rpc_call *call);
int nsrd_vol_delete(void *ctx, void *args, void *res, struct nsr_rpc_call *call);
/* nsrd_label_finish, nsrd_delete_finish - settle a label or finish a
 * save set delete that a failure cut short, from its intent line: 0 =
 * settled, -1 = a peer does not answer yet (try again later). */
int nsrd_label_finish(struct nsrd *n, const char *line);
int nsrd_delete_finish(struct nsrd *n, const char *line);

/* intent.c */
/* nsrd_intent_add - durably list line under kind ("label", "delete")
 * before the operation it names starts; NSR_OK or an error (logged). */
int nsrd_intent_add(struct nsrd *n, const char *kind, const char *line);
/* nsrd_intent_drop - the operation of line is over: take it off. */
void nsrd_intent_drop(struct nsrd *n, const char *kind, const char *line);
/* nsrd_intents_resume - from the tick: settle what failures left listed
 * (every few seconds while anything is; never waits for a peer). */
void nsrd_intents_resume(struct nsrd *n);

/* nsrd_device_mover - ask the device's storage node for its mover:
 * host[hlen] gets the storage node's name ("" = this server, reached
 * through loopback) and *port the mover's port. */
struct nsr_buf;
int nsrd_device_mover(struct nsrd *n, const struct nsr_res *dev, char *host,
		      size_t hlen, int *port, struct nsr_buf *err);
/* nsrd_device_host - the storage node of a device resource into
 * host[hlen] ("" = the server itself); the device's path on that host is
 * returned (NULL if the name is malformed). */
const char *nsrd_device_host(const struct nsr_res *dev, char *host,
			     size_t hlen);


#endif /* NSRD_H */
