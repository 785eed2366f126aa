/*
 * mmd.h - state shared by the files of nsrmmd, the data mover of one
 * device.
 *
 * Locking: struct mmd.mu guards every field below it (the device handle,
 * the volume writer, the session and reader counts, the idle clock).
 * The volume writer is itself safe for several session threads, so data
 * is written outside mu; only opening/closing the writer and labeling take
 * it.  A sequential device (tape, vtape) is either written or read, never
 * both; an AFTD is read through a second device handle while it is written.
 */
#ifndef NSRMMD_MMD_H
#define NSRMMD_MMD_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>

#include "nsr/dev.h"
#include "nsr/rpc.h"
#include "nsr/vol.h"
#include "nsr/rpc/nsrmmd.h"

#include "reorder.h"

struct mmd {
	/* Configuration (options; fixed once serving). */
	char *dev_name;		/* device resource name */
	char *dev_path;		/* directory, vtape file, /dev/nstN */
	enum nsr_dev_type dev_type;
	uint64_t capacity;	/* vtape capacity, 0 = driver default */
	uint64_t segment_size;	/* tape/vtape: filemark every N bytes (-G) */
	char *server;		/* host of nsrmmdbd */
	unsigned idle_sec;	/* exit after this long without work */
	int ready_fd;		/* write the bound port here, -1 = none */
	int no_sync;		/* NSR_TEST_NO_SYNC: skip fsync (tests) */
	pid_t parent;		/* nsrsnmd, when started by it (-r) */

	pthread_mutex_t mu;
	struct nsr_dev *dev;	      /* open device, NULL = closed */
	int dev_ro;		      /* dev is read-only: write-protected */
	struct nsr_vol_writer *w;     /* open writer, NULL = none */
	unsigned sessions;	      /* save sessions using w */
	unsigned saves;		      /* save sessions begun, not yet freed
				       * (those past an end of medium too) */
	unsigned readers;	      /* recover sessions on the device */
	time_t last_work;	      /* for the idle timeout */
	struct mmd_stripe *stripes;   /* striped sessions (stripe.c) */
};

extern struct mmd g_mmd;

/* One save session (save.c), bound to the connection that began it. */
struct mmd_save {
	struct nsr_vol_session *vs; /* NULL after an end of medium */
	struct nsr_vol_sshdr hdr;
	uint32_t cloneid;
	uint8_t volid[16];
	char volname[NSR_VOL_NAME_MAX + 1];
	struct nsr_vol_span span; /* this fragment's place in the save set */
	uint64_t next_seq; /* expected data call number */
	uint64_t bytes;	   /* data bytes received */
	int ctr;	   /* counters.c handle */
	int held;	   /* counted in m->sessions (invariant 2) */
	int eom;	   /* the volume filled: the session stops here */
	int eom_told;	   /* a reply said so to the client */
	int settled;	   /* the client settled it (MMD_SS_END after eom) */
	struct nsr_vol_frag eom_frag; /* the part on the full volume */
	uint64_t dropped;  /* data bytes dropped after the end of medium */
	int err;	   /* first error, NSR_OK if none */
	char *errmsg;
	struct mmd_stripe *stripe; /* stripe.c: NULL unless striped */
};

/* A save session striped over several connections (stripe.c).  Once a
 * session has one, every use of the session from its connections holds
 * mu (the first connection's handlers too). */
struct mmd_stripe {
	pthread_mutex_t mu;
	pthread_cond_t cv;	 /* a chunk was written or the session ended */
	struct mmd_save *s;	 /* NULL once the session is gone */
	struct mmd_reorder ro;	 /* chunks that came early */
	uint8_t token[16];	 /* what MMD_SS_JOIN must show */
	uint32_t ssid;
	char peer_host[256];	 /* the first connection's TLS host, or "" */
	int closed;		 /* MMD_SS_END came: no more data */
	int late_warned;	 /* data after the end was logged */
	/* Under struct mmd.mu: */
	unsigned conns;		 /* connections that joined */
	unsigned refs;		 /* the session + joined connections */
	struct mmd_stripe *next; /* in m->stripes */
};

/* What one client connection has open (its conn_data). */
struct mmd_read;
struct mmd_conn {
	struct mmd *m;
	struct mmd_save *save;	   /* save.c */
	struct mmd_read *read;	   /* recover.c */
	struct mmd_stripe *joined; /* stripe.c: a session this one joined */
	int warned;		   /* data without a session was logged */
};

/* mmd_authz - authz of the dispatch table: label and remove only for
 * nsrd, root on the mover's server (authz.c). */
int mmd_authz(void *ctx, const struct nsr_rpc_call *call,
	      const struct nsr_rpc_proc *p, const void *args,
	      struct nsr_buf *why);

/* mmd_conn_get - this connection's state, made on first use. */
struct mmd_conn *mmd_conn_get(struct nsr_rpc_call *call, struct mmd *m);
/* mmd_save_free - abort and free an unfinished save session. */
void mmd_save_free(struct mmd *m, struct mmd_save *s);
/* mmd_save_fail - remember the first error of a session (takes msg). */
void mmd_save_fail(struct mmd_save *s, int rc, char *msg);
/* mmd_save_chunk - write data call seq of a session in order, or drop
 * it after the session's first error or end of medium. */
void mmd_save_chunk(struct mmd *m, struct mmd_save *s, uint64_t seq,
		    const void *p, size_t len);

/* Striping (stripe.c). */
/* mmd_stripe_data - a data call of a striped session, from any of its
 * connections: written in order, held if early, waited for if too
 * early. */
void mmd_stripe_data(struct mmd *m, struct mmd_stripe *st,
		     mmd_data_args *a);
/* mmd_stripe_wait_locked - wait (holding st->mu) until every data call
 * numbered below seq is written or the session failed or ended. */
void mmd_stripe_wait_locked(struct mmd_stripe *st, uint64_t seq);
/* mmd_stripe_end_locked - MMD_SS_END came (holding st->mu): no data
 * after it; fail the session if chunks still wait for a gap. */
void mmd_stripe_end_locked(struct mmd_stripe *st);
/* mmd_stripe_detach - the session is going away: joined connections
 * drop what they still get. */
void mmd_stripe_detach(struct mmd *m, struct mmd_stripe *st);
/* mmd_stripe_leave - a joined connection closed: fail the session if it
 * was still open. */
void mmd_stripe_leave(struct mmd *m, struct mmd_stripe *st);

/* mmd_read_free - stop and free a recover session. */
void mmd_read_free(struct mmd *m, struct mmd_read *r);

/* mmd_status - fill an nsr_status (msg malloc'ed) and log errors. */
void mmd_status(nsr_status *st, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* mmd_touch - note activity now (caller holds mu). */
void mmd_touch(struct mmd *m);
/* mmd_dev_open_locked - open the device if it is not open (holds mu).
 * For reading (write 0) a write-protected medium is opened read-only;
 * for writing it is refused with the device's reason. */
int mmd_dev_open_locked(struct mmd *m, int write, struct nsr_buf *why);
/* mmd_dev_open_extra - a second handle on the device (AFTD reads). */
int mmd_dev_open_extra(struct mmd *m, int read_only, struct nsr_dev **out,
		       struct nsr_buf *why);
/* mmd_volid_str - a volume id as 32 hex digits into out[33]. */
void mmd_volid_str(const uint8_t *volid, char *out);

/* Session counters (counters.c), for MMD_COUNTERS: a handle per open
 * session (0 = not counted: the table was full). */
/* mmd_ctr_open - count a session of save set ssid from now. */
int mmd_ctr_open(uint32_t ssid, int recover);
/* mmd_ctr_add - n more data bytes moved by session h. */
void mmd_ctr_add(int h, uint64_t n);
/* mmd_ctr_close - session h is over (0 is fine). */
void mmd_ctr_close(int h);

/* Handlers (label.c, save.c, recover.c, recover_sets.c, counters.c). */
int mmd_h_label(void *ctx, void *args, void *res, struct nsr_rpc_call *call);
int mmd_h_read_label(void *ctx, void *args, void *res,
		   struct nsr_rpc_call *call);
int mmd_h_ss_begin(void *ctx, void *args, void *res, struct nsr_rpc_call *call);
int mmd_h_clone_begin(void *ctx, void *args, void *res,
		      struct nsr_rpc_call *call);
int mmd_h_ss_data(void *ctx, void *args, void *res, struct nsr_rpc_call *call);
int mmd_h_ss_end(void *ctx, void *args, void *res, struct nsr_rpc_call *call);
int mmd_h_ss_sync(void *ctx, void *args, void *res, struct nsr_rpc_call *call);
int mmd_h_read_open(void *ctx, void *args, void *res,
		  struct nsr_rpc_call *call);
int mmd_h_read_next(void *ctx, void *args, void *res,
		  struct nsr_rpc_call *call);
int mmd_h_read_sets_next(void *ctx, void *args, void *res,
			 struct nsr_rpc_call *call);
int mmd_h_counters(void *ctx, void *args, void *res,
		   struct nsr_rpc_call *call);
int mmd_h_ss_remove(void *ctx, void *args, void *res,
		    struct nsr_rpc_call *call);
int mmd_h_ss_stripe(void *ctx, void *args, void *res,
		    struct nsr_rpc_call *call);
int mmd_h_ss_join(void *ctx, void *args, void *res, struct nsr_rpc_call *call);
/* mmd_label_resume - at start: finish a relabel a crash interrupted
 * (label.c). */
void mmd_label_resume(struct mmd *m, struct nsr_dev *dev);
/* mmd_remove_resume - at start: finish a removal a crash interrupted
 * (remove.c). */
void mmd_remove_resume(struct mmd *m, struct nsr_dev *dev);

/* Media database reports (report.c): plain calls to nsrmmdbd. */
/* mmd_report_frag - MM_FRAG_ADD for a fragment just made durable. */
int mmd_report_frag(struct mmd *m, const struct nsr_vol_frag *f,
		    uint32_t cloneid, struct nsr_buf *why);
/* mmd_report_written - MM_VOL_WRITTEN: bytes, append position, flags. */
int mmd_report_written(struct mmd *m, const uint8_t volid[16], uint64_t add,
		       uint32_t next_file, uint64_t next_record,
		       uint32_t set_flags, struct nsr_buf *why);

#endif /* NSRMMD_MMD_H */
