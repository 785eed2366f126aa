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
	unsigned readers;	      /* recover sessions on the device */
	time_t last_work;	      /* for the idle timeout */
};

extern struct mmd g_mmd;

/* What one client connection has open (its conn_data). */
struct mmd_save;
struct mmd_read;
struct mmd_conn {
	struct mmd *m;
	struct mmd_save *save; /* save.c */
	struct mmd_read *read; /* recover.c */
	int warned;	       /* data without a session was logged */
};

/* mmd_conn_get - this connection's state, made on first use. */
struct mmd_conn *mmd_conn_get(struct nsr_rpc_call *call, struct mmd *m);
/* mmd_save_free - abort and free an unfinished save session. */
void mmd_save_free(struct mmd *m, struct mmd_save *s);
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

/* Handlers (label.c, save.c, recover.c). */
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
int mmd_h_ss_remove(void *ctx, void *args, void *res,
		    struct nsr_rpc_call *call);
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
