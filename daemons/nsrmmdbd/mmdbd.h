/*
 * mmdbd.h - state shared by the files of nsrmmdbd (private to the daemon).
 *
 * Locking: handlers run in one thread per connection, concurrently (the
 * engine serialises writers itself and lets readers run alongside, and
 * concurrent commits share one fsync).  g_mmdbd.life is held for reading
 * by every handler and for writing by the stop path, so the database is
 * never closed under a handler; open query cursors are listed under
 * g_mmdbd.qlock so the stop path can end them before mmdb_close() and the
 * tick can end idle ones (see query.c).
 */
#ifndef NSR_MMDBD_H
#define NSR_MMDBD_H

#include <pthread.h>
#include <stdint.h>

#include "nsr/mmdb.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsrmmdb.h"
#include "nsr/rpc_status.h"

struct mmdbd_query;

struct mmdbd {
	struct mmdb *db;		/* NULL once stopping */
	char *dir;			/* <root>/mm */
	pthread_rwlock_t life;
	pthread_mutex_t qlock;
	struct mmdbd_query *queries;	/* open cursors, under qlock */
};

extern struct mmdbd g_mmdbd;
extern const struct nsr_rpc_prog mmdbd_progs[1];

/* mmdbd_db_status - st for a failed engine call: what failed (fmt) plus
 * the reason and, where there is one, what the administrator can do. */
void mmdbd_db_status(nsr_status *st, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Query procedures (query.c). */
int mmdbd_query_open(void *ctx, void *args, void *res,
		     struct nsr_rpc_call *call);
int mmdbd_query_next(void *ctx, void *args, void *res,
		     struct nsr_rpc_call *call);
/* mmdbd_snapshot - MM_SNAPSHOT (snapshot.c). */
int mmdbd_snapshot(void *ctx, void *args, void *res,
		   struct nsr_rpc_call *call);
/* mmdbd_query_close_all - end every open cursor (stop path, life held for
 * writing, before mmdb_close). */
void mmdbd_query_close_all(void);
/* mmdbd_query_reap - end cursors left idle too long (from the tick). */
void mmdbd_query_reap(void);

#endif /* NSR_MMDBD_H */
