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

/* Who reads (authz.c): a caller and whether it may read all. */
struct mmdbd_reader {
	int all;    /* an administrator */
	int daemon; /* one of the server's programs (sees every volume) */
	int stated; /* user is the caller's stated user */
	char user[NSR_RPC_USER_MAX + 1];
	char host[256];
};
/* mmdbd_authz_init - the access policy of the resources under root. */
int mmdbd_authz_init(const char *root);
/* mmdbd_authz - authz of the dispatch table: writes (NSR_RPC_ADMIN) by
 * the server's programs (nsrd, movers, storage nodes) and
 * administrators only. */
int mmdbd_authz(void *ctx, const struct nsr_rpc_call *call,
		const struct nsr_rpc_proc *p, const void *args,
		struct nsr_buf *why);
/* mmdbd_reader_of - *r: the caller of call (resources re-read first if
 * they changed). */
void mmdbd_reader_of(const struct nsr_rpc_call *call, struct mmdbd_reader *r);
/* mmdbd_reader_may - 1 if r may read client's save sets. */
int mmdbd_reader_may(const struct mmdbd_reader *r, const char *client);
/* mmdbd_reader_deny - st says the caller may not read save set ssid of
 * client (logged). */
void mmdbd_reader_deny(const struct nsr_rpc_call *call, uint32_t ssid,
		       const char *client, nsr_status *st);

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
