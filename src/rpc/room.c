/*
 * room.c - where server connections wait and which thread serves them:
 * the waiting room (one epoll set watched by one thread), the bounded
 * worker pool, and the bounds of server.c's invariants 5-7.
 *
 * A connection moves silent -> ready -> busy -> idle -> ready -> ... and
 * leaves from any of them.  The room thread moves waiting connections to
 * the ready queue when bytes (or EOF) arrive, and closes those that stayed
 * silent past the grace time or idle past the idle time.  Workers take
 * ready connections in arrival order; an idle worker is woken for each, or
 * a new one started while fewer than max_threads run; a worker with
 * nothing to do for WORKER_LINGER_MS ends, so threads follow the load.
 *
 * epoll events carry (slot, generation), never a pointer: a connection
 * closed by the accepting thread may still have an event in the room
 * thread's array, and the generation check drops it.
 */
#include "nsr/compat.h"

#include <netinet/in.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "nsr/clock.h"
#include "nsr/err.h"
#include "nsr/rpc.h"
#include "rpc_int.h"
#include "server_int.h"

#define DEF_MAX_CONNS 8192
#define DEF_MAX_THREADS 1280
#define DEF_MAX_PER_PEER 1024
#define DEF_GRACE_SEC 30
#define DEF_IDLE_SEC 86400
#define DEF_READ_SEC 120
#define FD_RESERVE 256		/* descriptors kept for files, children */
#define WORKER_LINGER_MS 10000	/* an idle worker ends after this */
#define ROOM_EVENTS 256
#define ROOM_MAX_WAIT_MS 1000
#define WAKE_EVENT UINT64_MAX
#define PEER_BUCKETS 1024

/* Worker stacks.  Data chunks live in heap buffers; the largest frame is
 * nsr_file_read's 64 KiB buffer (nsrmmd reading an AFTD file).  Measured
 * with the release build's system tests: 64 KiB stacks crash nsrmmd,
 * 128 KiB pass; 512 KiB leaves room for paths the tests do not reach
 * (SQLite in nsrjobd, getaddrinfo).  The sanitizers need more. */
#if defined(__SANITIZE_ADDRESS__)
#define WORKER_STACK (1024 * 1024)
#else
#define WORKER_STACK (512 * 1024)
#endif

struct srv_peer {
	char addr[48];
	int n;
	struct srv_peer *next;
};

/* env_int - integer from the environment within [lo, hi], else def. */
static int env_int(const char *name, int def, int lo, int hi)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (!v || !*v)
		return def;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || *end || n < lo || n > hi)
		return def;
	return (int)n;
}

/* read_limits - the bounds from the environment and RLIMIT_NOFILE. */
static void read_limits(struct nsr_rpc_limits *l)
{
	struct rlimit rl;

	l->max_conns = env_int("NSR_RPC_MAX_CONNS", DEF_MAX_CONNS, 1, 1 << 20);
	l->max_threads = env_int("NSR_RPC_MAX_THREADS", DEF_MAX_THREADS, 1,
				 1 << 16);
	l->max_per_peer = env_int("NSR_RPC_MAX_PER_PEER", DEF_MAX_PER_PEER, 0,
				  1 << 20);
	l->grace_sec = env_int("NSR_RPC_GRACE_SEC", DEF_GRACE_SEC, 0, 1 << 20);
	l->idle_sec = env_int("NSR_RPC_IDLE_SEC", DEF_IDLE_SEC, 0, 1 << 24);
	l->read_sec = env_int("NSR_RPC_READ_SEC", DEF_READ_SEC, 1, 1 << 20);
	/* Never promise more connections than we have descriptors for. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY) {
		long room = (long)rl.rlim_cur > 2 * FD_RESERVE
				    ? (long)rl.rlim_cur - FD_RESERVE
				    : (long)rl.rlim_cur / 2;

		if (room < 1)
			room = 1;
		if (l->max_conns > room)
			l->max_conns = (int)room;
	}
}

/* list_add - append sc to l (the tail is the newest). */
static void list_add(struct sc_list *l, struct srv_conn *sc)
{
	sc->next = NULL;
	sc->prev = l->tail;
	if (l->tail)
		l->tail->next = sc;
	else
		l->head = sc;
	l->tail = sc;
	l->n++;
}

/* list_del - unlink sc from l. */
static void list_del(struct sc_list *l, struct srv_conn *sc)
{
	if (sc->prev)
		sc->prev->next = sc->next;
	else
		l->head = sc->next;
	if (sc->next)
		sc->next->prev = sc->prev;
	else
		l->tail = sc->prev;
	sc->next = sc->prev = NULL;
	l->n--;
}

/* state_list - the list a state names (invariant 5). */
static struct sc_list *state_list(struct nsr_rpc_server *s, enum sc_state st)
{
	switch (st) {
	case SC_SILENT:
		return &s->silent;
	case SC_IDLE:
		return &s->idle;
	case SC_READY:
		return &s->ready;
	default:
		return &s->busy;
	}
}

/* move_to - take sc off its list and put it on st's. */
static void move_to(struct nsr_rpc_server *s, struct srv_conn *sc,
		    enum sc_state st)
{
	list_del(state_list(s, sc->state), sc);
	sc->state = st;
	list_add(state_list(s, st), sc);
	atomic_store(&s->nready, s->ready.n);
}

/* peer_hash - bucket of an address string. */
static size_t peer_hash(const char *a)
{
	size_t h = 5381;

	while (*a)
		h = h * 33 + (unsigned char)*a++;
	return h % PEER_BUCKETS;
}

/* peer_find - the count of addr, or NULL. */
static struct srv_peer *peer_find(struct nsr_rpc_server *s, const char *addr)
{
	struct srv_peer *p = s->peers[peer_hash(addr)];

	while (p && strcmp(p->addr, addr) != 0)
		p = p->next;
	return p;
}

/* peer_put - drop one connection from p's count; free it at zero. */
static void peer_put(struct nsr_rpc_server *s, struct srv_peer *p)
{
	struct srv_peer **pp;

	if (!p || --p->n > 0)
		return;
	for (pp = &s->peers[peer_hash(p->addr)]; *pp != p; pp = &(*pp)->next)
		;
	*pp = p->next;
	free(p);
}

/* peer_addr - the address part of "address:port" into buf. */
static void peer_addr(const struct nsr_conn *c, char *buf, size_t len)
{
	const char *colon = strrchr(c->peer, ':');
	size_t n = colon ? (size_t)(colon - c->peer) : strlen(c->peer);

	if (n >= len)
		n = len - 1;
	memcpy(buf, c->peer, n);
	buf[n] = '\0';
}

/* detach - mu held: take sc out of every table; the caller closes it
 * (after unlocking, invariant 7) with conn_finish. */
static void detach(struct nsr_rpc_server *s, struct srv_conn *sc)
{
	list_del(state_list(s, sc->state), sc);
	atomic_store(&s->nready, s->ready.n);
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, sc->conn.fd, NULL);
	s->slots[sc->slot] = NULL;
	s->slot_gen[sc->slot]++;
	s->free_slots[s->nfree++] = sc->slot;
	peer_put(s, sc->peer);
	sc->peer = NULL;
}

/* conn_finish - run the destructor, close, free (mu not held). */
static void conn_finish(struct srv_conn *sc)
{
	if (sc->destroy)
		sc->destroy(sc->data);
	nsr_conn_close(&sc->conn);
	free(sc);
}

/* finish_all - conn_finish every connection of a detached chain. */
static void finish_all(struct srv_conn *chain)
{
	while (chain) {
		struct srv_conn *next = chain->next;

		conn_finish(chain);
		chain = next;
	}
}

/* close_waiting - mu held: detach a waiting connection onto *reap. */
static void close_waiting(struct nsr_rpc_server *s, struct srv_conn *sc,
			  struct srv_conn **reap)
{
	detach(s, sc);
	sc->next = *reap;
	*reap = sc;
}

/* arm - mu held: (re)enter sc into the epoll set, one event at a time. */
static int arm(struct nsr_rpc_server *s, struct srv_conn *sc, int op)
{
	struct epoll_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT;
	ev.data.u64 = (uint64_t)s->slot_gen[sc->slot] << 32 | sc->slot;
	return epoll_ctl(s->epfd, op, sc->conn.fd, &ev);
}

static void *worker_main(void *arg);

/* wake_worker - mu held: a connection became ready; get it a worker. */
static void wake_worker(struct nsr_rpc_server *s)
{
	struct srv_worker *w = s->idle_workers;
	pthread_attr_t attr;
	pthread_t tid;

	/* Workers on their way will take what is queued: one per connection,
	 * not one per event, or a busy moment starts a thread storm. */
	if (s->ready.n <= s->ncoming)
		return;
	if (w) {
		s->idle_workers = w->next;
		w->woken = 1;
		s->ncoming++;
		pthread_cond_signal(&w->cv);
		return;
	}
	if (s->stopping)
		return;
	if (s->nthreads >= s->lim.max_threads) {
		s->ev.thread_waits++; /* invariant 6: it waits in the queue */
		return;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		s->ev.thread_fails++;
		return;
	}
	w->srv = s;
	pthread_cond_init(&w->cv, NULL);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, s->stack_size);
	if (pthread_create(&tid, &attr, worker_main, w) != 0) {
		pthread_cond_destroy(&w->cv);
		free(w);
		s->ev.thread_fails++;
	} else {
		s->nthreads++;
		s->ncoming++;
	}
	pthread_attr_destroy(&attr);
}

/* ready - mu held: bytes arrived on a waiting connection. */
static void ready(struct nsr_rpc_server *s, struct srv_conn *sc)
{
	move_to(s, sc, SC_READY);
	wake_worker(s);
}

/* served - mu held: a worker is done with sc; hand back or detach. */
static void served(struct nsr_rpc_server *s, struct srv_conn *sc,
		   enum srv_served how, struct srv_conn **reap)
{
	if (how == SRV_HANDBACK && !s->stopping) {
		move_to(s, sc, SC_IDLE);
		sc->since_ms = nsr_clock_mono_ms();
		if (arm(s, sc, EPOLL_CTL_MOD) == 0)
			return;
	}
	if (how == SRV_CLOSE && sc->conn.err == NSR_ERR_TIMEOUT)
		s->ev.closed_stalled++;
	close_waiting(s, sc, reap);
}

/* idle_wait - mu held: park w until woken, stopping, or it lingered long
 * enough to end.  Returns 0 to go on, -1 to end the thread. */
static int idle_wait(struct nsr_rpc_server *s, struct srv_worker *w)
{
	struct timespec ts;
	struct srv_worker **pp;

	w->woken = 0;
	w->next = s->idle_workers;
	s->idle_workers = w;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += WORKER_LINGER_MS / 1000;
	while (!w->woken && !s->stopping)
		if (pthread_cond_timedwait(&w->cv, &s->mu, &ts) == ETIMEDOUT)
			break;
	if (w->woken) {
		s->ncoming--;
		return 0;
	}
	for (pp = &s->idle_workers; *pp && *pp != w; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = w->next;
	return s->ready.head && !s->stopping ? 0 : -1;
}

/* worker_main - worker thread: serve ready connections in order. */
static void *worker_main(void *arg)
{
	struct srv_worker *w = arg;
	struct nsr_rpc_server *s = w->srv;

	pthread_mutex_lock(&s->mu);
	s->ncoming--; /* started by wake_worker */
	for (;;) {
		struct srv_conn *sc = s->ready.head, *reap = NULL;
		enum srv_served how;
		int stop;

		if (!sc) {
			if (s->stopping || idle_wait(s, w) != 0)
				break;
			continue;
		}
		move_to(s, sc, SC_BUSY);
		stop = s->stopping;
		pthread_mutex_unlock(&s->mu);
		how = stop ? SRV_CLOSE : srv_serve(w, sc);
		pthread_mutex_lock(&s->mu);
		served(s, sc, how, &reap);
		if (reap) {
			pthread_mutex_unlock(&s->mu);
			finish_all(reap);
			pthread_mutex_lock(&s->mu);
		}
	}
	srv_worker_release(w);
	pthread_cond_destroy(&w->cv);
	free(w);
	s->nthreads--;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* hung_up - the peer closed or failed and left nothing to read: close it
 * here, without a worker.  Calls sent just before a close are still read
 * and served (a client may pipeline one-way calls and hang up). */
static int hung_up(const struct srv_conn *sc, uint32_t events)
{
	int avail = 0;

	if (!(events & (EPOLLHUP | EPOLLERR | EPOLLRDHUP)))
		return 0;
	return ioctl(sc->conn.fd, FIONREAD, &avail) != 0 || avail == 0;
}

/* sweep - mu held: close waiting connections past their time; returns
 * the milliseconds until the next one is due (at most ROOM_MAX_WAIT_MS). */
static int sweep(struct nsr_rpc_server *s, long long now,
		 struct srv_conn **reap)
{
	long long grace = (long long)s->lim.grace_sec * 1000;
	long long idle = (long long)s->lim.idle_sec * 1000;
	long long next = now + ROOM_MAX_WAIT_MS;

	while (grace && s->silent.head &&
	       s->silent.head->since_ms + grace <= now) {
		close_waiting(s, s->silent.head, reap);
		s->ev.closed_silent++;
	}
	while (idle && s->idle.head && s->idle.head->since_ms + idle <= now) {
		close_waiting(s, s->idle.head, reap);
		s->ev.closed_idle++;
	}
	if (grace && s->silent.head)
		next = NSR_MIN(next, s->silent.head->since_ms + grace);
	if (idle && s->idle.head)
		next = NSR_MIN(next, s->idle.head->since_ms + idle);
	return (int)NSR_MAX(next - now, 0);
}

/* room_event - mu held: one epoll event. */
static void room_event(struct nsr_rpc_server *s, const struct epoll_event *e,
		       struct srv_conn **reap)
{
	uint32_t slot = (uint32_t)e->data.u64;
	uint32_t gen = (uint32_t)(e->data.u64 >> 32);
	struct srv_conn *sc;
	uint64_t junk;

	if (e->data.u64 == WAKE_EVENT) {
		if (read(s->evfd, &junk, sizeof(junk)) < 0)
			errno = 0;
		return;
	}
	if (slot >= (uint32_t)s->lim.max_conns || s->slot_gen[slot] != gen)
		return; /* closed since the event was queued */
	sc = s->slots[slot];
	if (!sc || (sc->state != SC_SILENT && sc->state != SC_IDLE))
		return;
	if (hung_up(sc, e->events))
		close_waiting(s, sc, reap);
	else
		ready(s, sc);
}

/* room_main - the waiting-room thread. */
static void *room_main(void *arg)
{
	struct nsr_rpc_server *s = arg;
	struct epoll_event evs[ROOM_EVENTS];
	int wait_ms = 0;

	for (;;) {
		struct srv_conn *reap = NULL;
		int n = epoll_wait(s->epfd, evs, ROOM_EVENTS, wait_ms);

		pthread_mutex_lock(&s->mu);
		if (s->stopping) {
			pthread_mutex_unlock(&s->mu);
			break;
		}
		for (int i = 0; i < n; i++)
			room_event(s, &evs[i], &reap);
		/* A worker that could not be started: try again. */
		if (s->ready.head && !s->idle_workers &&
		    s->nthreads < s->lim.max_threads)
			wake_worker(s);
		wait_ms = sweep(s, nsr_clock_mono_ms(), &reap);
		pthread_mutex_unlock(&s->mu);
		finish_all(reap);
	}
	return NULL;
}

/* srv_room_init - bounds, tables, the epoll set and the room thread. */
int srv_room_init(struct nsr_rpc_server *s)
{
	struct epoll_event ev;
	int n;

	read_limits(&s->lim);
	s->cap_loopback = env_int("NSR_TEST_RPC_PEER_LOOPBACK", 0, 0, 1);
	s->stack_size = WORKER_STACK;
	s->epfd = s->evfd = -1;
	n = s->lim.max_conns;
	s->slots = calloc((size_t)n, sizeof(*s->slots));
	s->slot_gen = calloc((size_t)n, sizeof(*s->slot_gen));
	s->free_slots = calloc((size_t)n, sizeof(*s->free_slots));
	s->peers = calloc(PEER_BUCKETS, sizeof(*s->peers));
	if (!s->slots || !s->slot_gen || !s->free_slots || !s->peers)
		goto nomem;
	for (int i = 0; i < n; i++)
		s->free_slots[i] = (uint32_t)(n - 1 - i);
	s->nfree = n;
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	s->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->epfd < 0 || s->evfd < 0)
		goto sys;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.u64 = WAKE_EVENT;
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->evfd, &ev) != 0)
		goto sys;
	if (pthread_create(&s->room_tid, NULL, room_main, s) != 0)
		goto sys;
	s->room_started = 1;
	return NSR_OK;
sys:
	srv_room_release(s);
	return NSR_ERR_SYSTEM;
nomem:
	srv_room_release(s);
	return NSR_ERR_NOMEM;
}

/* make_room - mu held: at a cap, pick the connection to close for a new
 * one (of peer p only, if p): the oldest silent one, else the one idle
 * longest that holds no per-connection state, else the one idle longest
 * (a handler's state is a session: an open save stream, a query cursor).
 * NULL if every candidate has a request in progress.  Linear, but only
 * at a cap. */
static struct srv_conn *make_room(struct nsr_rpc_server *s,
				  const struct srv_peer *p)
{
	struct srv_conn *sc, *stateful = NULL;

	for (sc = s->silent.head; sc; sc = sc->next)
		if (!p || sc->peer == p)
			return sc;
	for (sc = s->idle.head; sc; sc = sc->next) {
		if (p && sc->peer != p)
			continue;
		if (!sc->data)
			return sc;
		if (!stateful)
			stateful = sc;
	}
	return stateful;
}

/* sock_options - timeouts in the middle of a request (the kernel's, so a
 * read costs no poll).  Keepalive and TCP_USER_TIMEOUT, which find peers
 * that vanished without a FIN, are set for every socket by
 * nsr_conn_init_fd (NSR_TCP_TIMEOUT_MS). */
static void sock_options(int fd, int read_sec)
{
	struct timeval tv = {.tv_sec = read_sec};

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* admit_peer - mu held: the per-address cap.  NSR_OK and *pp (the count
 * to charge, NULL for loopback), or NSR_ERR_LIMIT. */
static int admit_peer(struct nsr_rpc_server *s, struct srv_conn *sc,
		      struct srv_peer **pp, struct srv_conn **reap)
{
	char addr[sizeof(((struct srv_peer *)0)->addr)];
	struct srv_peer *p;
	struct srv_conn *victim;

	*pp = NULL;
	if ((sc->conn.peer_loopback && !s->cap_loopback) ||
	    s->lim.max_per_peer == 0)
		return NSR_OK;
	peer_addr(&sc->conn, addr, sizeof(addr));
	p = peer_find(s, addr);
	if (p && p->n >= s->lim.max_per_peer) {
		snprintf(s->ev.peer_last, sizeof(s->ev.peer_last), "%s", addr);
		victim = make_room(s, p);
		if (!victim) {
			s->ev.peer_refused++;
			return NSR_ERR_LIMIT;
		}
		close_waiting(s, victim, reap);
		s->ev.peer_evicted++;
		p = peer_find(s, addr); /* the victim may have freed it */
	}
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return NSR_ERR_NOMEM;
		snprintf(p->addr, sizeof(p->addr), "%s", addr);
		p->next = s->peers[peer_hash(addr)];
		s->peers[peer_hash(addr)] = p;
	}
	*pp = p;
	return NSR_OK;
}

/* admit - mu held: enter sc into the waiting room, making room at a cap. */
static int admit(struct nsr_rpc_server *s, struct srv_conn *sc,
		 struct srv_conn **reap)
{
	struct srv_peer *p;
	int rc;

	if (s->stopping)
		return NSR_ERR_LIMIT;
	rc = admit_peer(s, sc, &p, reap);
	if (rc != NSR_OK)
		return rc;
	if (s->nfree == 0) {
		struct srv_conn *victim = make_room(s, NULL);

		if (!victim) {
			s->ev.refused++;
			if (p && p->n == 0) {
				p->n = 1;
				peer_put(s, p);
			}
			return NSR_ERR_LIMIT;
		}
		close_waiting(s, victim, reap);
		s->ev.evicted++;
	}
	sc->slot = s->free_slots[--s->nfree];
	s->slots[sc->slot] = sc;
	sc->peer = p;
	if (p)
		p->n++;
	sc->state = SC_SILENT;
	sc->since_ms = nsr_clock_mono_ms();
	list_add(&s->silent, sc);
	if (arm(s, sc, EPOLL_CTL_ADD) != 0) {
		detach(s, sc);
		return NSR_ERR_SYSTEM;
	}
	return NSR_OK;
}

/* srv_room_admit - a new connection: wrap fd (a local listener's when
 * local) and admit it, or close it. */
int srv_room_admit(struct nsr_rpc_server *s, int fd, int local)
{
	struct srv_conn *sc, *reap = NULL;
	int rc;

	sc = calloc(1, sizeof(*sc));
	if (!sc) {
		close(fd);
		return NSR_ERR_NOMEM;
	}
	sc->srv = s;
	if (local) /* a same-host listener's (local.c) */
		nsr_conn_init_local(&sc->conn, fd);
	else
		nsr_conn_init_fd(&sc->conn, fd);
	sock_options(fd, s->lim.read_sec);
	pthread_mutex_lock(&s->mu);
	rc = admit(s, sc, &reap);
	pthread_mutex_unlock(&s->mu);
	finish_all(reap);
	if (rc != NSR_OK)
		conn_finish(sc);
	return rc;
}

/* srv_room_shed - close one waiting connection (the oldest silent, else
 * the longest idle) to free a descriptor; NSR_ERR_LIMIT if none. */
int srv_room_shed(struct nsr_rpc_server *s)
{
	struct srv_conn *victim, *reap = NULL;
	int saved = errno;

	pthread_mutex_lock(&s->mu);
	victim = make_room(s, NULL);
	if (victim) {
		close_waiting(s, victim, &reap);
		s->ev.evicted++;
	}
	pthread_mutex_unlock(&s->mu);
	finish_all(reap);
	errno = saved;
	return victim ? NSR_OK : NSR_ERR_LIMIT;
}

/* srv_room_stop - close every waiting connection, end every thread. */
void srv_room_stop(struct nsr_rpc_server *s)
{
	struct srv_conn *reap = NULL;
	uint64_t one = 1;

	pthread_mutex_lock(&s->mu);
	s->stopping = 1;
	while (s->silent.head)
		close_waiting(s, s->silent.head, &reap);
	while (s->idle.head)
		close_waiting(s, s->idle.head, &reap);
	while (s->ready.head)
		close_waiting(s, s->ready.head, &reap);
	for (struct srv_conn *sc = s->busy.head; sc; sc = sc->next)
		shutdown(sc->conn.fd, SHUT_RDWR);
	for (struct srv_worker *w = s->idle_workers; w; w = w->next)
		pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&s->mu);
	if (s->evfd >= 0 && write(s->evfd, &one, sizeof(one)) < 0)
		errno = 0;
	if (s->room_started)
		pthread_join(s->room_tid, NULL);
	s->room_started = 0;
	finish_all(reap);
	pthread_mutex_lock(&s->mu);
	while (s->nthreads > 0)
		pthread_cond_wait(&s->cv, &s->mu);
	pthread_mutex_unlock(&s->mu);
}

/* srv_room_release - free the tables (after srv_room_stop). */
void srv_room_release(struct nsr_rpc_server *s)
{
	if (s->epfd >= 0)
		close(s->epfd);
	if (s->evfd >= 0)
		close(s->evfd);
	s->epfd = s->evfd = -1;
	free(s->slots);
	free(s->slot_gen);
	free(s->free_slots);
	free(s->peers);
	s->slots = NULL;
	s->slot_gen = NULL;
	s->free_slots = NULL;
	s->peers = NULL;
}

/* nsr_rpc_server_stats - what the transport holds and did. */
void nsr_rpc_server_stats(struct nsr_rpc_server *s, struct nsr_rpc_stats *st,
			  int reset)
{
	pthread_mutex_lock(&s->mu);
	*st = s->ev;
	st->waiting = s->silent.n + s->idle.n;
	st->queued = s->ready.n;
	st->busy = s->busy.n;
	st->conns = st->waiting + st->queued + st->busy;
	st->threads = s->nthreads;
	st->streams_made = reset ? atomic_exchange(&s->streams_made, 0)
				 : atomic_load(&s->streams_made);
	if (reset)
		memset(&s->ev, 0, sizeof(s->ev));
	pthread_mutex_unlock(&s->mu);
}
