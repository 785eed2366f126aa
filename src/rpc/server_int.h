/*
 * server_int.h - private to the server half of src/rpc: the server, its
 * connections and worker threads, shared by server.c (protocol: listen,
 * dispatch, serve one connection) and room.c (the waiting room, the worker
 * pool and the bounds).  The invariants are listed at the top of server.c.
 */
#ifndef NSR_SERVER_INT_H
#define NSR_SERVER_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "nsr/rpc.h"
#include "rpc_int.h"

#define MAX_LISTEN 16 /* 2 ports x (loopback + 6 -a addresses + local) */

/* Where a connection is; it is on exactly the list named here. */
enum sc_state {
	SC_SILENT, /* waiting room, never sent a byte (grace time runs) */
	SC_IDLE,   /* waiting room, sent requests, none in progress */
	SC_READY,  /* bytes arrived, queued for a worker */
	SC_BUSY,   /* a worker is serving it */
};

struct srv_peer; /* per-address count (room.c) */

struct srv_conn {
	struct nsr_rpc_server *srv;
	struct nsr_conn conn;
	void *data;
	void (*destroy)(void *);
	enum sc_state state;
	struct srv_conn *next, *prev; /* on the list of its state */
	long long since_ms;	      /* accepted, or last request ended */
	uint32_t slot;		      /* index in srv->slots */
	struct srv_peer *peer;	      /* NULL for loopback peers */
	char user[NSR_RPC_USER_MAX + 1]; /* stated (NSR_AUTH_USER), or "" */
};

struct sc_list {
	struct srv_conn *head, *tail;
	int n;
};

/* One worker thread; its XDR stream serves one connection at a time. */
struct srv_worker {
	struct nsr_rpc_server *srv;
	struct srv_conn *sc; /* the connection being served */
	pthread_cond_t cv;
	int woken;		  /* handed work while idle */
	struct srv_worker *next;  /* on the idle-worker stack */
	XDR x;
	int have_x;
};

struct nsr_rpc_server {
	const struct nsr_rpc_prog *progs;
	size_t nprogs;
	int lfd[MAX_LISTEN];
	char *lpath[MAX_LISTEN]; /* a local socket's path (local.c), or NULL */
	ino_t lino[MAX_LISTEN];	 /* and its inode when bound */
	int nlisten;
	int stopped;		/* nsr_rpc_server_stop ran */
	pthread_mutex_t serial; /* SERIAL procedures */
	struct nsr_rpc_limits lim;
	size_t stack_size;
	int cap_loopback; /* NSR_TEST_RPC_PEER_LOOPBACK: cap loopback too */

	pthread_mutex_t mu; /* guards everything below */
	pthread_cond_t cv;  /* nthreads reached 0 */
	int stopping;
	int epfd, evfd;	       /* the waiting room and its wake-up */
	pthread_t room_tid;
	int room_started;
	struct srv_conn **slots; /* lim.max_conns entries */
	uint32_t *slot_gen;	 /* bumped when a slot is freed */
	uint32_t *free_slots;
	int nfree;
	struct sc_list silent, idle, ready, busy;
	atomic_int nready; /* ready.n, for reading without mu */
	atomic_long streams_made; /* stats: worker XDR streams made */
	struct srv_worker *idle_workers;
	int nthreads;
	int ncoming; /* workers woken or started, not yet at the queue */
	struct srv_peer **peers; /* hash buckets */
	struct nsr_rpc_stats ev; /* event counters since the last reset */
};

/* room.c */
int srv_room_init(struct nsr_rpc_server *s);
int srv_room_admit(struct nsr_rpc_server *s, int fd, int local);
int srv_room_shed(struct nsr_rpc_server *s);
void srv_room_stop(struct nsr_rpc_server *s);
void srv_room_release(struct nsr_rpc_server *s);

/* server.c */
enum srv_served { SRV_HANDBACK, SRV_CLOSE };
enum srv_served srv_serve(struct srv_worker *w, struct srv_conn *sc);
void srv_worker_release(struct srv_worker *w);

/* local.c: remove the local sockets this server bound (at stop). */
void nsr_rpc_server_unlink_local(struct nsr_rpc_server *s);

#endif /* NSR_SERVER_INT_H */
