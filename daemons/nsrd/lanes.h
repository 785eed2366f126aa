/*
 * lanes.h - the database handles SAVE_START works through while it has
 * released the RPC server mutex (nsrd.h invariants 1-3): NSRD_LANES
 * lanes, each a media database handle and a jobs database handle, made
 * on first use.  The two halves of a lane are taken apart: a batch of
 * starts' save sets (nsrd_create_batch, at most NSRD_CREATE_BATCHES at
 * once) holds a media database half, then each start holds a jobs
 * database half while it creates its job, so the next save sets do not
 * wait for these starts' jobs.
 *
 * Calling sequence:
 *   1. lanes_init(&ls) once;
 *   2. l = lanes_get(&ls, LANE_MMDB, &closed): NULL when closed (stopping)
 *      or out of memory; else only this thread uses l->mmdb until
 *      3. lanes_put(&ls, l, LANE_MMDB); the same with LANE_JOBD and
 *      l->jobd;
 *   4. lanes_close(&ls) at stop: no more lanes, waits until every half
 *      is given back, closes the handles.
 * lanes_get waits (on lane_mu only) while every lane's half is taken:
 * never call it holding the RPC mutex, since a lane's holder may need
 * that mutex to give its lane back.  No daemon state: tests/unit/nsrd
 * tests it.
 */
#ifndef NSRD_LANES_H
#define NSRD_LANES_H

#include <pthread.h>

/* Enough jobs database halves that starts rarely wait for one (they
 * did not with 32: tests/bench/admission/RESULTS.md); one more start
 * waits for a free half. */
#define NSRD_LANES 32

enum lane_half { LANE_MMDB = 0, LANE_JOBD = 1 };

struct lane {
	int busy[2];		/* by enum lane_half */
	struct mmdb_clnt *mmdb; /* the LANE_MMDB half */
	struct nsr_jobd *jobd;	/* the LANE_JOBD half */
};

/* Everything guarded by mu. */
struct lanes {
	pthread_mutex_t mu;
	pthread_cond_t cv[2];	/* a lane's half was given back */
	struct lane lane[NSRD_LANES];
	int closed;		/* lanes_close: no more lanes */
};

/* lanes_init - no lane taken, no handle made yet. */
void lanes_init(struct lanes *ls);
/* lanes_get - a lane whose half h is free, its handle made on first use
 * (it connects at its first call), waiting while every lane's half h is
 * taken; NULL when closed (*closed set) or out of memory. */
struct lane *lanes_get(struct lanes *ls, enum lane_half h, int *closed);
/* lanes_put - give half h of l back: one waiter for it may take it (every
 * waiter once closed). */
void lanes_put(struct lanes *ls, struct lane *l, enum lane_half h);
/* lanes_close - hand out no more; wait for every half to be given back,
 * then close every handle. */
void lanes_close(struct lanes *ls);

#endif /* NSRD_LANES_H */
