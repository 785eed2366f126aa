/*
 * batch.h - requests from many threads combined into batches, one
 * thread running each batch for the others (flat combining), with at
 * most a few batches running at once.  nsrd creates the save sets of
 * starting saves this way (session.c): while a batch is in nsrmmdbd the
 * next starts queue, and the first of them takes them all into the next
 * batch, so a burst of starts shares page writes and fsyncs.
 *
 * Calling sequence:
 *   1. batch_init(&b, leaders, run, ctx) once;
 *   2. from any thread, rc = batch_do(&b, arg): queues arg and returns
 *      once a batch holding it has run; the caller's thread may be the
 *      one running it.  run(ctx, items, n) gets 1 to BATCH_MAX items in
 *      the order they were queued and sets each item's rc.
 * run is called without the batch's lock and may block; it must not
 * call batch_do.  No daemon state: tests/unit/nsrd tests it.
 */
#ifndef NSRD_BATCH_H
#define NSRD_BATCH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define BATCH_MAX 64 /* items per batch */

/* One queued request. */
struct batch_item {
	void *arg;
	int rc;		/* set by run */
	_Atomic uint32_t state; /* batch.c's ITEM_*; its thread waits on it */
	struct batch_item *next;
};

typedef void (*batch_run_fn)(void *ctx, struct batch_item **items,
			     size_t n);

/* Everything guarded by mu. */
struct batch {
	pthread_mutex_t mu;
	struct batch_item *head, *tail; /* queued, not yet taken */
	int leaders;			/* batches running */
	int max_leaders;
	batch_run_fn run;
	void *ctx;
	unsigned long batches, items;	/* run so far (statistics) */
};

/* batch_init - an empty queue; at most max_leaders (>= 1) batches run at
 * once. */
void batch_init(struct batch *b, int max_leaders, batch_run_fn run,
		void *ctx);
/* batch_do - queue arg, wait until a batch holding it ran; its rc. */
int batch_do(struct batch *b, void *arg);

#endif /* NSRD_BATCH_H */
