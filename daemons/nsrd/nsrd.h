/*
 * nsrd.h - private to nsrd: the server state shared by its handler files.
 *
 * Handlers run with NSR_RPC_SERIAL, so all of struct nsrd is accessed under
 * the RPC server-wide mutex and needs no locking of its own.  SAVE_START
 * is NSR_RPC_LOCKS_ITSELF: its handler takes the mutex itself, or has the
 * leader of a batch of starts (nsrd_start_batch, batch.h) run its parts
 * under one hold of the mutex for the whole batch; either way every part
 * that touches struct nsrd runs under the mutex, as a SERIAL handler's.
 *
 * Two exceptions, the remote work of SAVE_START and of SAVE_END
 * (session.c).  A start reserves its session slot under the mutex,
 * releases the mutex while it creates the save set and the job (in a
 * batch with other starts', batch.h: their save sets in one
 * MM_SS_CREATE_MANY, then their jobs in one JOB_CREATE_MANY; a job the
 * batch could not record is recorded by its start alone), each through a
 * lane (lanes.h), and settles under the mutex again.  An end marks its
 * session, releases the mutex while it completes the save set and closes
 * the job through a lane's two halves (the ends of many saves share
 * nsrmmdbd's group commits), and frees the slot under the mutex again.
 * The lanes and the batches have locks of their own.  Invariants:
 *  1. only a lane's holder uses its handles, and only while it holds the
 *     lane (each half, the media and the jobs database handle, has a
 *     holder of its own); lanes are handed out under their own lock,
 *     never under the RPC mutex (a start waiting for a lane holds no
 *     other lock), and whoever holds both took the media half first;
 *     the shared handles (mmdb, jobd, ix, snmd) are used only under the
 *     RPC mutex, as before;
 *  2. a session marked starting has its client, group, device and mover
 *     set and counts against every limit and in its mover's load
 *     (admission stays exact); other code only counts it, lists it
 *     (status) and, when its connection closes, marks its owner gone
 *     (conn_closed): find_session, NEXT_VOLUME and settling pass it by,
 *     so SAVE_RENEW and SAVE_END cannot touch it; its handler clears the
 *     mark, or frees the slot, under the mutex before it returns, and a
 *     save set it created is then settled like any other session's.  A
 *     session marked ending is passed by by settling (its save set is
 *     being completed); SAVE_RENEW still finds it (a renewal racing the
 *     end only renews), and a second SAVE_END of it only answers; the
 *     call that marked it frees the slot under the mutex;
 *  3. nothing the unlocked part reads belongs to struct nsrd: it works on
 *     copies made under the mutex (resources may change meanwhile);
 *  3a. a save set's record is changed by reading it, changing it and
 *     writing it back whole only under the lock of its stripe
 *     (session.c, ss_lock: an end, a PSS dependent's naming in its
 *     master, a settling), so an end without the mutex and a naming
 *     under it never lose each other's change; nothing takes the RPC
 *     mutex or a lane while holding such a lock.
 *
 * The session table's counts (session.c, nsrd_session_tally):
 *  4. nlive is the number of used slots, and free_slots[0..nfree) are
 *     exactly the unused ones;
 *  5. unless tally_lost, by_client and by_group count each used save
 *     session (not a recover) under its client and group, by_device
 *     every used session with a device under it, and by_mover every one
 *     with a mover under "PID DEVICE", from the fields as they were at
 *     its last nsrd_session_tally, which every change of those fields is
 *     followed by before the mutex is released;
 *  6. sess_gen changes whenever a session is taken, freed or tallied.
 */
#ifndef NSRD_H
#define NSRD_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "nsr/daemon.h"
#include "nsr/jobdb.h"
#include "nsr/res.h"
#include "nsr/resdb.h"
#include "nsr/rpc/nsrd.h"
#include "nsr/rpc_status.h"

#include "batch.h"
#include "lanes.h"
#include "tally.h"

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
	char group[64];	    /* save -g (the group's run); "" = none */
	char device[256];
	pid_t mover_pid;    /* the device's mover it was given (0: none) */
	time_t started;
	uint64_t conn;	    /* owning connection (0 = none: adopted) */
	time_t lease_until; /* settle after this; 0 = owner gone */
	int starting;	    /* SAVE_START works unlocked (invariant 2) */
	int ending;	    /* SAVE_END works unlocked (invariant 2) */
	int clone;	    /* a clone session (clone.c) of ssid ... */
	uint32_t cloneid;   /* ... writing this new instance */
	/* What it counts in the tallies (nsrd_session_tally), given back
	 * when it is freed whatever the fields say by then. */
	struct tally_node *t_client, *t_group, *t_device, *t_mover;
};

/* RPC worker threads by default (NSR_RPC_MAX_THREADS overrides). */
#define NSRD_MAX_THREADS 256
/* Save set batches in nsrmmdbd at once (nsrd_create_batch): one, since
 * nsrmmdbd commits them one after the other anyway, and the starts that
 * queue meanwhile make the next batch larger (1 did better than 4 and 8:
 * tests/bench/admission/RESULTS.md). */
#define NSRD_CREATE_BATCHES 1
/* Batches of SAVE_STARTs at once (session.c, nsrd_start_batch): while
 * one creates its save sets and jobs without the mutex, the next runs its
 * admissions under it. */
#define NSRD_START_BATCHES 2

/* A session that waits to start (admit.c). */
enum nsrd_wait_kind {
	NSRD_WAIT_SLOT = 1,   /* a parallelism limit reached: queued */
	NSRD_WAIT_VOLUME = 2, /* no writable volume of its pool: a mount
			       * request */
	NSRD_WAIT_READ = 3,   /* a recover's volume is not mounted: a
			       * mount request */
	NSRD_WAIT_DEVICE = 4, /* every device of its pool with a writable
			       * volume is at max sessions: queued */
};

/* The wait table (invariant 5 of admit.c): room for 4096 waits, 4 per
 * session slot; env NSR_MAX_WAITS lowers it (tests of a full table). */
#define NSRD_MAX_WAITS 4096
/* A client's parallelism when it has no NSR client resource (NetWorker's
 * default for a new client). */
#define NSRD_CLIENT_PARALLELISM 4
/* How soon a queued session asks again: a slot granted to it is held
 * for it until it does. */
#define NSRD_QUEUE_RETRY_MS 250
/* A queued save that asks again is answered only once it is admitted,
 * or after this long (admit.c, nsrd_admit_hold), so a slot that frees
 * goes to it at once; at most NSRD_HOLDERS_MAX answers are held at a
 * time (each holds an RPC worker), the others ask again after their
 * retry time. */
#define NSRD_HOLD_MS 1000
#define NSRD_HOLDERS_MAX 64
/* A ticket nobody asked for within this long lapses (its client left). */
#define NSRD_WAIT_LAPSE_SEC 30
/* How long a save waits for a volume unless the server says otherwise
 * (NSR resource "save mount timeout", minutes). */
#define NSRD_MOUNT_TIMEOUT_MIN 30

struct nsrd_wait {
	uint64_t ticket;	/* 0 = free entry */
	int kind;		/* enum nsrd_wait_kind */
	char client[256];
	char group[64];		/* a save's group ("" = none) */
	char name[256];		/* the save set */
	char pool[64];		/* its pool (VOLUME) or the volume (READ) */
	time_t first, last;	/* queued, last asked */
	int granted;		/* SLOT: a slot is held for it (fairq.c) */
	int held;		/* SLOT: its answer is held (nsrd_admit_hold) */
};

/* What a session waits for, for nsrd_wait_answer. */
struct nsrd_wait_ask {
	int kind;		 /* enum nsrd_wait_kind */
	const char *client, *group, *name;
	const char *pool;	 /* its pool (VOLUME) or volume (READ) */
	const char *what;	 /* "save", "recover" or "clone", for the
				    messages */
	const char *timed_out;	 /* a mount request's end: "volume X was
				  * not mounted" (" within N s: " follows) */
	const char *advice;	 /* then what to do */
};

struct mmdb_clnt;
struct nsr_jobd;
struct nsr_ixclnt;
struct nsr_snmd;

#define NSRD_MAX_SNODES 64 /* storage nodes nsrd keeps connections to */

struct nsrd {
	struct nsr_daemon *d;
	/* -U: the user the database daemons run as ("" = root, as nsrd) */
	char db_user[64];
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
	/* The live sessions, counted as they come and go (session.c;
	 * invariants 4-6 at the top), so admission needs no pass over
	 * them: */
	int nlive;			   /* slots in use */
	int nfree;			   /* free_slots[0..nfree): unused */
	uint16_t free_slots[NSRD_MAX_SESSIONS];
	struct tally by_client, by_group;  /* saves (not recovers) */
	struct tally by_device, by_mover;  /* every session; "PID DEVICE" */
	int tally_lost;			   /* a count could not be kept:
					    * admission counts by a pass */
	uint64_t sess_gen;		   /* changes to the counted state */
	uint64_t next_conn; /* connection ids handed out */
	struct nsrd_wait waits[NSRD_MAX_WAITS];
	int nwaits;	      /* live entries of waits (admit.c) */
	uint64_t next_ticket; /* tickets handed out */
	uint64_t res_gen;     /* resource changes so far (res_rpc.c) */
	uint64_t admit_fp;    /* admit.c: the state its last grant saw */
	/* admit.c: queued saves whose answer is held wait on admit_cv
	 * (under the RPC server mutex), woken when admission may have
	 * changed (nsrd_admit_wake); holders counts them. */
	pthread_cond_t admit_cv;
	int holders;
	/* SAVE_START's handles for its unlocked work (lanes.h), guarded by
	 * their own lock alone. */
	struct lanes lanes;
	/* Starting saves' save sets, created in batches (batch.h) of up to
	 * BATCH_MAX, NSRD_CREATE_BATCHES at once, each through a lane. */
	struct batch creates;
	/* SAVE_STARTs, run in batches (nsrd_start_batch), at most
	 * NSRD_START_BATCHES at once. */
	struct batch starts;
};

extern struct nsrd g_nsrd;

/* res_rpc.c */
int nsrd_res_query(void *ctx, void *args, void *res, struct nsr_rpc_call *call);
int nsrd_res_create(void *ctx, void *args, void *res,
		    struct nsr_rpc_call *call);
int nsrd_res_update(void *ctx, void *args, void *res,
		    struct nsr_rpc_call *call);
int nsrd_res_delete(void *ctx, void *args, void *res,
		    struct nsr_rpc_call *call);
/* pool.c: nsrd_pool_select - the pool of a save that names none, by the
 * pools' selection criteria (groups, clients, save sets, levels); the
 * name of the Default pool when none matches. */
const char *nsrd_pool_select(struct nsrd *n, const char *client,
			     const char *group, const char *name,
			     const char *level);
/* nsrd_res_find1 - the first resource of type with this name, or NULL. */
const struct nsr_res *nsrd_res_find1(struct nsrd *n, const char *type,
				     const char *name);
/* nsrd_res_set_attr - server-side change of one attribute (e.g. a device's
 * volume name); NSR_OK or an error. */
int nsrd_res_set_attr(struct nsrd *n, const struct nsr_res *r, const char *attr,
		      const char *value);
/* nsrd_server_attr_num - numeric attribute of the NSR resource. */
long long nsrd_server_attr_num(struct nsrd *n, const char *attr,
			       long long dflt);

/* admit.c */
/* nsrd_wait_find - the live wait of ticket, or NULL (never or lapsed). */
struct nsrd_wait *nsrd_wait_find(struct nsrd *n, uint64_t ticket);
/* nsrd_wait_join - w again (its kind may change to q's), or a new wait
 * for q with a new ticket; NULL when nsrd_wait_cap() waits already.
 * Either way it was asked for now. */
struct nsrd_wait *nsrd_wait_join(struct nsrd *n, struct nsrd_wait *w,
				 const struct nsrd_wait_ask *q);
/* nsrd_wait_end - the wait is over (how: "satisfied", "failed", ...). */
void nsrd_wait_end(struct nsrd *n, struct nsrd_wait *w, const char *how);
/* nsrd_wait_cap - how many waits may exist at once. */
int nsrd_wait_cap(void);
/* nsrd_wait_answer - a save's or recover's "not yet" (why: fmt): a mount
 * request that waited its timeout ends (NSR_ERR_TIMEOUT, q->timed_out
 * and q->advice); else the wait *w is joined or made and st says
 * NSR_ERR_WAIT with the ticket and retry time (NSR_ERR_LIMIT when the
 * table is full).  *w is NULL afterwards (it goes on, or it ended);
 * returns st->code. */
int nsrd_wait_answer(struct nsrd *n, struct nsrd_wait **w,
		     const struct nsrd_wait_ask *q, nsr_status *st,
		     uint64_t *ticket, unsigned *retry_ms, const char *fmt,
		     ...) __attribute__((format(printf, 7, 8)));
/* nsrd_admit - may a save of client in group ("" = none) start now, w
 * being its wait (NULL: it asks first)?  1 yes; 0 no, why[len] says
 * which limit (then queue it: nsrd_wait_answer, NSRD_WAIT_SLOT). */
int nsrd_admit(struct nsrd *n, struct nsrd_wait *w, const char *client,
	       const char *group, char *why, size_t len);
/* nsrd_wait_lapse - drop the waits nobody asked for lately (tick). */
void nsrd_wait_lapse(struct nsrd *n);
/* nsrd_admit_hold - a queued save (ticket) asks again and is not
 * admitted yet: hold its answer until it is (1) or NSRD_HOLD_MS pass, or
 * when NSRD_HOLDERS_MAX answers are held already (0; why[len] says which
 * limit).  Releases the RPC server mutex while it waits. */
int nsrd_admit_hold(struct nsrd *n, uint64_t ticket, const char *client,
		    const char *group, char *why, size_t len);
/* nsrd_admit_wake - admission may have changed (a session ended, a wait
 * with a grant ended, limits changed): wake the held answers. */
void nsrd_admit_wake(struct nsrd *n);
/* nsrd_mount_timeout - seconds a save waits for a volume. */
time_t nsrd_mount_timeout(struct nsrd *n);

/* session.c */
/* nsrd_session_free - the session's slot is free again (and admission
 * may have changed: nsrd_admit_wake). */
void nsrd_session_free(struct nsrd *n, struct nsrd_session *s);
/* nsrd_session_tally - count s in the tallies by its client, group,
 * device and mover as they are now (invariant 5); call after setting
 * any of them. */
void nsrd_session_tally(struct nsrd *n, struct nsrd_session *s);
/* nsrd_sessions_init - the empty session table and its tallies; 0, or
 * -1 when out of memory. */
int nsrd_sessions_init(struct nsrd *n);
/* nsrd_tally_check - tests (NSR_TEST_TALLY_CHECK=1): the tallies
 * against a pass over the table; nsrd aborts on a difference. */
void nsrd_tally_check(struct nsrd *n);
/* nsrd_device_sessions - the sessions on device now (all with NULL). */
int nsrd_device_sessions(struct nsrd *n, const char *device);
/* nsrd_save_start - SAVE_START, NSR_RPC_LOCKS_ITSELF (see the top). */
int nsrd_save_start(void *ctx, void *args, void *res,
		    struct nsr_rpc_call *call);
int nsrd_save_end(void *ctx, void *args, void *res, struct nsr_rpc_call *call);
int nsrd_recover_start(void *ctx, void *args, void *res,
		       struct nsr_rpc_call *call);
int nsrd_recover_end(void *ctx, void *args, void *res,
		     struct nsr_rpc_call *call);
/* nsrd_save_renew - SAVE_RENEW: renew (or adopt) a save's lease. */
int nsrd_save_renew(void *ctx, void *args, void *res,
		    struct nsr_rpc_call *call);
/* nsrd_settle_orphans - settle sessions whose client went away or whose
 * lease lapsed: the save set complete if the mover recorded all of it,
 * else aborted with the reason; the job finished; the slot freed.  Runs
 * from the tick under the RPC server mutex. */
void nsrd_settle_orphans(struct nsrd *n);
/* nsrd_reconcile - at start: every save set the media database holds in
 * progress becomes a session without owner, adopted by its client's next
 * SAVE_RENEW/SAVE_END, else settled when its lease lapses. */
void nsrd_reconcile(struct nsrd *n);
/* nsrd_start_batch - batch.h's run function of n->starts (session.c):
 * the SAVE_STARTs of items (struct start), each authorized and its first
 * part run in one hold of the RPC mutex, the save sets and jobs of the
 * admitted ones created in one batch without it, their second parts in
 * one more hold; a queued save asking again is left to its thread. */
void nsrd_start_batch(void *ctx, struct batch_item **items, size_t n);
/* nsrd_create_batch - batch.h's run function of n->creates (session.c):
 * the save sets of n starting saves in one call to nsrmmdbd. */
void nsrd_create_batch(void *ctx, struct batch_item **items, size_t n);
/* nsrd_next_volume - NEXT_VOLUME: the client of a save whose volume filled
 * asks for the next writable volume of the pool (spanning). */
/* nsrd_level_decide - level.c: the effective level of a save of
 * client:name asked at requested, with the reference from the media
 * database (level.h); msg gets a notice for the client when the level
 * changed, log a line for the job log.  streams: a PSS master's stream
 * count (0 = not PSS), a change of which forces a full; *latest the
 * newest save time of the earlier save sets read (read when the level is
 * not full or streams > 0, else 0).  NSR_OK or the media database's
 * error. */
struct nsr_level_decision;
int nsrd_level_decide(struct nsrd *n, const char *client, const char *name,
		      unsigned requested, unsigned streams,
		      struct nsr_level_decision *d, int64_t *latest,
		      struct nsr_buf *msg, struct nsr_buf *log);
int nsrd_next_volume(void *ctx, void *args, void *res,
		     struct nsr_rpc_call *call);

/* media.c */
int nsrd_label(void *ctx, void *args, void *res, struct nsr_rpc_call *call);
int nsrd_mount(void *ctx, void *args, void *res, struct nsr_rpc_call *call);
int nsrd_unmount(void *ctx, void *args, void *res, struct nsr_rpc_call *call);
int nsrd_vol_mode(void *ctx, void *args, void *res, struct nsr_rpc_call *call);
int nsrd_vol_delete(void *ctx, void *args, void *res,
		    struct nsr_rpc_call *call);
/* nsrd_snmd_for - the connection to nsrsnmd on host ("" = this server);
 * NULL when NSRD_MAX_SNODES are known already. */
struct nsr_snmd *nsrd_snmd_for(struct nsrd *n, const char *host);
/* nsrd_device_max_movers - movers the device may have (dynamic nsrmmd:
 * its max nsrmmd count unless its storage node says dynamic nsrmmds:
 * No); host is its storage node ("" = this server). */
unsigned nsrd_device_max_movers(struct nsrd *n, const struct nsr_res *dev,
				const char *host, unsigned ts, unsigned ms);
/* nsrd_status - STATUS: what nsrwatch shows (status.c). */
int nsrd_status(void *ctx, void *args, void *res, struct nsr_rpc_call *call);
/* nsrd_status_rates - STATUS_RATES: rates from the movers' counters
 * (rates.c). */
int nsrd_status_rates(void *ctx, void *args, void *res,
		      struct nsr_rpc_call *call);
/* nsrd_label_finish, nsrd_delete_finish - settle a label or finish a
 * save set delete that a failure cut short, from its intent line: 0 =
 * settled, -1 = a peer does not answer yet (try again later). */
int nsrd_label_finish(struct nsrd *n, const char *line);
int nsrd_delete_finish(struct nsrd *n, const char *line);
/* nsrd_voldelete_finish - finish a volume delete (the intent line is the
 * volume's name): 0 = done, -1 = try again later. */
int nsrd_voldelete_finish(struct nsrd *n, const char *line);

/* sched.c: the scheduler (groups, savegrp) */
/* nsrd_sched_start - start the scheduler thread once the databases
 * answer; nsrd_sched_stop - stop it (first thing at stop). */
int nsrd_sched_start(struct nsrd *n);
void nsrd_sched_stop(struct nsrd *n);
/* grant.c: session grants for the movers (nsrd(8), GRANTS). */
int nsrd_grant_init(struct nsrd *n);
void nsrd_grant(uint32_t kind, uint32_t ssid, nsr_grant *g);
/* revnotify.c: nsrd_revoked_tick - when <root>/tls/revoked changed
 * since the last tick, tell the nsrexecd of every host the resources
 * name (REVOKED_NOTIFY, from a thread of its own; RPC mutex held);
 * nsrd_revoked_stop - stop that thread. */
void nsrd_revoked_tick(struct nsrd *n);
void nsrd_revoked_stop(void);
/* nsrd_revoked_get - REVOKED_GET: <root>/tls/revoked as text, public
 * (storage nodes' and clients' nsrexecd merge it into theirs). */
int nsrd_revoked_get(void *ctx, void *args, void *res,
		     struct nsr_rpc_call *call);
int nsrd_grant_key(void *ctx, void *args, void *res,
		   struct nsr_rpc_call *call);
/* passphrase.c: the data keys of encryption at rest. */
int nsrd_key_current(void *ctx, void *args, void *res,
		     struct nsr_rpc_call *call);
int nsrd_key_get(void *ctx, void *args, void *res, struct nsr_rpc_call *call);
/* nsrd_savegrp - SAVEGRP: run a group now, or preview it. */
int nsrd_savegrp(void *ctx, void *args, void *res, struct nsr_rpc_call *call);

/* bootstrap.c: nsrd_bootstrap_after_group - start a bootstrap save
 * (nsrbootstrap) after a run of group; nsrd does not wait for it. */
void nsrd_bootstrap_after_group(struct nsrd *n, const char *group);
/* nsrd_bootstrap_start - start nsrbootstrap for group: its pid, or 0. */
pid_t nsrd_bootstrap_start(struct nsrd *n, const char *group);
/* sched.c: nsrd_bootstrap_exited - a reaped child: if it was the
 * bootstrap of a savegrp -O run, end that run's job by its exit; 1 if
 * so, 0 if the child was another. */
int nsrd_bootstrap_exited(struct nsrd *n, pid_t pid, int status);
/* nsrd_bootstrap_is - is a save set of this name a bootstrap (its job a
 * bootstrap save job, no index entries expected)? */
int nsrd_bootstrap_is(const char *name);

/* intent.c */
/* nsrd_intent_add - durably list line under kind ("label", "delete")
 * before the operation it names starts; NSR_OK or an error (logged). */
int nsrd_intent_add(struct nsrd *n, const char *kind, const char *line);
/* nsrd_intent_drop - the operation of line is over: take it off. */
void nsrd_intent_drop(struct nsrd *n, const char *kind, const char *line);
/* nsrd_intents_resume - from the tick: settle what failures left listed
 * (every few seconds while anything is; never waits for a peer). */
void nsrd_intents_resume(struct nsrd *n);

/* nsrd_device_capacity - the device's volume default capacity in bytes
 * into *bytes (0: none): NSR_OK, or NSR_ERR_SYNTAX when it is not a size
 * (a resource database older than its check). */
int nsrd_device_capacity(const struct nsr_res *dev, uint64_t *bytes);
/* nsrd_device_mover - ask the device's storage node for a mover for one
 * more session (the least loaded, or a new one under dynamic nsrmmd):
 * host[hlen] gets the storage node's name ("" = this server, reached
 * through loopback), *port the mover's port and *pid (may be NULL) its
 * process id, which the session records so the next request counts it. */
struct nsr_buf;
int nsrd_device_mover(struct nsrd *n, const struct nsr_res *dev, char *host,
		      size_t hlen, int *port, pid_t *pid,
		      struct nsr_buf *err);
/* nsrd_device_host - the storage node of a device resource into
 * host[hlen] ("" = the server itself); the device's path on that host is
 * returned (NULL if the name is malformed). */
const char *nsrd_device_host(const struct nsr_res *dev, char *host,
			     size_t hlen);

/* Session helpers of session.c for clone.c: new_session, find_session,
 * pick_device (with nsrd's media database handle and any number of
 * volume ids, 16 bytes each, never chosen), device_with_volume,
 * and the job record's start and end. */
struct mmdb_volume;
struct nsrd_session *nsrd_session_new(struct nsrd *n,
				      struct nsr_rpc_call *call);
struct nsrd_session *nsrd_session_find(struct nsrd *n, int64_t jobid,
				       uint32_t ssid);
const struct nsr_res *nsrd_pick_device(struct nsrd *n, const char *pool,
				       const uint8_t *exclude, size_t nexcl,
				       struct mmdb_volume *vol, nsr_status *st);
const struct nsr_res *nsrd_device_with_volume(struct nsrd *n,
					      const char *volume);
/* nsrd_frags - the fragments of every copy of save set ssid (at most
 * MMDB_FRAGS_MAX) into fr, their count into *nf; NSR_OK, or NSR_ERR_IO
 * with the media database's words in st. */
struct mmdb_fragment;
int nsrd_frags(struct nsrd *n, uint32_t ssid, struct mmdb_fragment *fr,
	       size_t *nf, nsr_status *st);
int64_t nsrd_job_create(enum nsr_jobdb_type type, const char *client,
			const char *name, const char *level, int64_t pid,
			const char *command, const char *ssids);
void nsrd_job_finish(int64_t id, int ok, uint64_t bytes, const char *msg);

/* clone.c: clone sessions (nsrclone, nsrstage) and the choice of the
 * copy a recover or a clone reads. */
/* The copy of a save set to read and the movers of its volumes. */
struct nsrd_copy {
	uint32_t cloneid;
	rec_frag *frags;	/* allocated; its strings too (xdr_free) */
	u_int nfrags;
	const struct nsr_res *dev; /* device of the first fragment */
	char mhost[256];	/* its mover's host ("" = this server) */
	int port;
	pid_t pid;
	char msg[512];		/* "" or why not the original copy */
	char wait_volume[65];	/* NSR_ERR_WAIT: mount this one first */
};
/* nsrd_copy_pick - the clone instance of save set ssid to read: want (0
 * = any complete one whose volumes are known, the original first, those
 * with every volume mounted before others), never skip (0 = none).
 * NSR_OK with c filled (free with nsrd_copy_release); NSR_ERR_WAIT when
 * the copy's volume c->wait_volume is not mounted; else an error with st
 * set. */
int nsrd_copy_pick(struct nsrd *n, uint32_t ssid, uint32_t want,
		   uint32_t skip, struct nsrd_copy *c, nsr_status *st);
/* nsrd_copy_release - free what nsrd_copy_pick left in c. */
void nsrd_copy_release(struct nsrd_copy *c);
/* nsrd_clone_start, nsrd_clone_end - CLONE_START and CLONE_END. */
int nsrd_clone_start(void *ctx, void *args, void *res,
		     struct nsr_rpc_call *call);
int nsrd_clone_end(void *ctx, void *args, void *res,
		   struct nsr_rpc_call *call);
/* nsrd_clone_settle - a clone session whose client went away: complete
 * if the mover recorded all of it, else aborted.  0 settled, -1 the
 * media database is away (next tick). */
int nsrd_clone_settle(struct nsrd *n, struct nsrd_session *s,
		      const char *why);
/* nsrd_clone_reconcile - at start: clones left in progress are settled
 * (their clients cannot be adopted). */
void nsrd_clone_reconcile(struct nsrd *n);
/* nsrd_unclone_finish - from the tick: finish removing a staged save
 * set's original copy (intent "unclone"): 0 done, -1 later. */
int nsrd_unclone_finish(struct nsrd *n, const char *line);
/* nsrd_free_copy_space - media.c: have the movers of mounted AFTDs
 * holding fragments of clone instance cloneid of ssid (0 = all) remove
 * their bytes; non-zero (st set) if one could not. */
int nsrd_free_copy_space(struct nsrd *n, uint32_t ssid, uint32_t cloneid,
			 nsr_status *st);

/* expire.c */
struct mmdb_saveset;
/* nsrd_expiry_new - browse and retention times of a new save set of
 * client in pool (explicit times 0 = from the policies; expiry.h). */
void nsrd_expiry_new(struct nsrd *n, const char *client, const char *pool,
		     int64_t browse_time, int64_t retention_time,
		     struct mmdb_saveset *ss);

/* nsrd_auto_recycle - auto media management (media.c): relabel a mounted
 * recyclable volume for a save to pool; 1 if one was. */
int nsrd_auto_recycle(struct nsrd *n, const char *pool);

/* nsrim.c */
/* nsrd_nsrim_tick - from the tick: the daily nsrim run when due. */
void nsrd_nsrim_tick(struct nsrd *n);
/* nsrd_nsrim_stop - wait for a run under way. */
void nsrd_nsrim_stop(struct nsrd *n);

/* authz.c: the authorization policy (nsrd(8), AUTHORIZATION). */
/* nsrd_authz - the authz function of nsrd's dispatch table. */
int nsrd_authz(void *ctx, const struct nsr_rpc_call *call,
	       const struct nsr_rpc_proc *p, const void *args,
	       struct nsr_buf *why);
/* nsrd_authz_client - NSR_OK if the caller may read client's data (its
 * host, an administrator, or in its remote access); else NSR_ERR_PERM,
 * logged, with the reason in why. */
int nsrd_authz_client(struct nsrd *n, const struct nsr_rpc_call *call,
		      const char *client, const char *verb,
		      struct nsr_buf *why);

/* devpath.c */
/* nsrd_device_path_check - NSR_OK if a device on the server names what
 * its media type needs (an existing directory, a tape node, a vtape
 * file or a new one in an existing directory); else NSR_ERR_INVAL and
 * why says what to do. */
int nsrd_device_path_check(const char *name, const char *type,
			   const char *path, struct nsr_buf *why);

#endif /* NSRD_H */
