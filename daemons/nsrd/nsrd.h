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

/* An admitted save or recover session. */
struct nsrd_session {
	int used;
	int recover;	    /* 0 = save */
	int64_t jobid;
	uint32_t ssid;
	char client[256];
	char device[256];
	time_t started;
};

struct nsrd {
	struct nsr_daemon *d;
	struct nsr_resdb *res;
	struct nsr_super *super;
	char server_name[256];
	struct nsrd_session sessions[NSRD_MAX_SESSIONS];
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
/* nsrd_next_volume - NEXT_VOLUME: a mover whose volume filled asks for the
 * next writable volume of the pool (spanning). */
int nsrd_next_volume(void *ctx, void *args, void *res, struct nsr_rpc_call *call);

/* media.c */
int nsrd_label(void *ctx, void *args, void *res, struct nsr_rpc_call *call);
int nsrd_mount(void *ctx, void *args, void *res, struct nsr_rpc_call *call);
int nsrd_unmount(void *ctx, void *args, void *res, struct nsr_rpc_call *call);
int nsrd_vol_mode(void *ctx, void *args, void *res, struct nsr_rpc_call *call);
int nsrd_vol_delete(void *ctx, void *args, void *res, struct nsr_rpc_call *call);
/* nsrd_device_mover - ask the storage node for the device's mover port. */
struct nsr_buf;
int nsrd_device_mover(struct nsrd *n, const struct nsr_res *dev, int *port,
		      struct nsr_buf *err);

/* nsrd_open_mmdb - a connection to nsrmmdbd, or NULL with st saying why. */
struct mmdb_clnt;
struct mmdb_clnt *nsrd_open_mmdb(nsr_status *st);

#endif /* NSRD_H */
