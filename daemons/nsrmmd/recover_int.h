/*
 * recover_int.h - the recover sessions of nsrmmd, shared by recover.c
 * (one save set: MMD_READ_OPEN/NEXT) and recover_sets.c (several save
 * sets of one volume in one pass: MMD_READ_OPEN with ssid 0, then
 * MMD_READ_SETS_NEXT).  A session is
 * a reader thread filling a bounded queue of pieces that the RPC
 * handlers drain; recover.c states the invariants.
 */
#ifndef NSRMMD_RECOVER_INT_H
#define NSRMMD_RECOVER_INT_H

#include <pthread.h>
#include <stdint.h>

#include "nsr/mmd_clnt.h"
#include "nsr/vol.h"

#define QUEUE_MAX (4u << 20)
#define PIECE_CAP NSR_MMD_CHUNK_DEFAULT

/* One queued piece: data of save set ssid, or (end set, len 0) the end
 * of ssid's stream on this volume with its outcome (sets sessions). */
struct mmd_piece {
	struct mmd_piece *next;
	size_t len, off;
	char *data; /* PIECE_CAP bytes; a reply's data_val as it is */
	uint32_t ssid;
	int end;   /* an end mark */
	int code;  /* end mark: NSR_OK or the save set's first error */
	char *msg; /* end mark: the error in words, or NULL */
};

/* One save set of a sets session (recover_sets.c; reader thread). */
struct mmd_rset {
	uint32_t ssid;
	size_t nfrags, next; /* its fragments here; the next to end */
	size_t first;	     /* index of its first in mmd_read.frags */
	uint64_t got;	     /* bytes of the current fragment */
	uint64_t ndamage;    /* damage reports that named it */
	int ctr;	     /* counters.c handle */
	int err;
	char *errmsg;
};

struct mmd_read {
	struct mmd *m;
	uint32_t ssid;		    /* one save set (0 in a sets session) */
	int ctr;		    /* counters.c handle (one save set) */
	struct nsr_vol_frag *frags; /* those on this volume, by frag_seq */
	size_t nfrags;
	struct mmd_rset *sets;	    /* sets session: its save sets */
	size_t nsets;
	struct nsr_dev *own_dev;    /* AFTD: our own read-only handle */
	struct nsr_dev *dev;	    /* the device the reader uses */
	struct nsr_vol_reader *rd;
	char volname[NSR_VOL_NAME_MAX + 1];

	pthread_t thread;
	int started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct mmd_piece *head, *tail;
	struct mmd_piece *fill; /* being filled by the reader (invariant 1) */
	size_t q_bytes;
	int done, cancel;
	uint64_t ndamage; /* damaged blocks of ours (sets: all counted so
			     far; reader thread) */
	struct nsr_vol_rstats cost; /* blocks read and passed, all frags */
	int err;
	char *errmsg;
};

/* mmd_piece_free - free a piece, its buffer and message (NULL is fine). */
void mmd_piece_free(struct mmd_piece *pc);
/* mmd_read_queue - append pc to the session's queue (reader thread). */
void mmd_read_queue(struct mmd_read *r, struct mmd_piece *pc);
/* mmd_read_seal - queue the piece being filled, if any (reader thread). */
void mmd_read_seal(struct mmd_read *r);
/* mmd_read_push - data of save set ssid into the queue, waiting for
 * room; 1 if the session was cancelled (reader thread). */
int mmd_read_push(struct mmd_read *r, uint32_t ssid, const void *p,
		  size_t len);
/* mmd_read_device - take the device for reading r (holds m->mu; the
 * caller has counted r in m->readers). */
int mmd_read_device(struct mmd *m, struct mmd_read *r, struct nsr_buf *why);
/* mmd_read_new - a recover session on connection c, replacing any older
 * one: the device taken for reading and the label read (*out), or an
 * error with the reason in why. */
struct mmd_conn;
int mmd_read_new(struct mmd *m, struct mmd_conn *c, struct mmd_read **out,
		 struct nsr_buf *why);
/* mmd_read_max - the most a reply may carry when the client asks max. */
size_t mmd_read_max(u_int max);
/* mmd_read_wait - lock r->mu and wait until data is queued or the
 * reader is done (returns holding r->mu). */
void mmd_read_wait(struct mmd_read *r);
/* mmd_read_sets_open - MMD_READ_OPEN with ssid 0: every save set with
 * fragments in a, in one pass (recover_sets.c); the reply in r. */
int mmd_read_sets_open(struct mmd *m, struct mmd_conn *c,
		       const mmd_read_args *a, nsr_void_res *r);
/* mmd_damage_total - msg (taken; NULL is fine) with " (N damaged blocks
 * in all)" added when n > 1. */
char *mmd_damage_total(char *msg, uint64_t n);
/* mmd_mark_suspect - set save set ssid's suspect flag in the media
 * database (logged either way). */
void mmd_mark_suspect(struct mmd *m, uint32_t ssid, uint64_t ndamage);

#endif /* NSRMMD_RECOVER_INT_H */
