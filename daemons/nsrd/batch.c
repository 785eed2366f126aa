/*
 * batch.c - flat combining of requests into batches (batch.h).  The
 * thread whose item is at the head of the queue, when fewer than
 * max_leaders batches run, takes up to BATCH_MAX items from the head and
 * runs them; every other thread sleeps on its own item's state (a futex)
 * until its item is done or it is the head and may lead.
 *
 * Invariants:
 *  1. an item is either queued (head..tail, under mu) or taken by exactly
 *     one leader;
 *  2. an item's state goes to ITEM_DONE only after run returned, set by
 *     its leader without mu, after which the leader never reads the item
 *     again (its thread may return at once): the leader's wake-up may
 *     reach a futex word that is no longer the item's, a spurious wake-up
 *     every futex waiter (ours and the C library's) tolerates;
 *  3. ITEM_LEAD (the head may lead) is set only under mu and only over
 *     ITEM_WAIT, and taken back only over ITEM_LEAD, so no ITEM_DONE is
 *     ever overwritten;
 *  4. the head is told whenever it might lead (a leader ended, or took
 *     items and left a slot).
 * A done item's thread thus returns without taking mu again: a batch's
 * end costs one wake-up per item, not a wake-up and a turn at mu each.
 */
#include "nsr/compat.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "batch.h"

enum { ITEM_WAIT = 0, ITEM_LEAD = 1, ITEM_DONE = 2 };

/* batch_init - see batch.h. */
void batch_init(struct batch *b, int max_leaders, batch_run_fn run,
		void *ctx)
{
	memset(b, 0, sizeof(*b));
	pthread_mutex_init(&b->mu, NULL);
	b->max_leaders = max_leaders > 0 ? max_leaders : 1;
	b->run = run;
	b->ctx = ctx;
}

/* wake - wake the thread waiting on the futex word w, if any. */
static void wake(_Atomic uint32_t *w)
{
	syscall(SYS_futex, (void *)w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* tell_head - mu held: the head may lead (invariant 3). */
static void tell_head(struct batch *b)
{
	uint32_t wait = ITEM_WAIT;

	if (b->head && b->leaders < b->max_leaders &&
	    atomic_compare_exchange_strong(&b->head->state, &wait, ITEM_LEAD))
		wake(&b->head->state);
}

/* lead - take up to BATCH_MAX items from the head and run them; called
 * with mu held, returns with it released and every item taken done. */
static void lead(struct batch *b)
{
	struct batch_item *v[BATCH_MAX];
	size_t n = 0;

	while (b->head && n < BATCH_MAX) {
		v[n++] = b->head;
		b->head = b->head->next;
	}
	if (!b->head)
		b->tail = NULL;
	b->leaders++;
	tell_head(b);
	pthread_mutex_unlock(&b->mu);
	b->run(b->ctx, v, n);
	pthread_mutex_lock(&b->mu);
	b->leaders--;
	b->batches++;
	b->items += n;
	tell_head(b);
	pthread_mutex_unlock(&b->mu);
	for (size_t i = 0; i < n; i++) { /* invariant 2 */
		_Atomic uint32_t *w = &v[i]->state;

		atomic_store_explicit(w, ITEM_DONE, memory_order_release);
		wake(w);
	}
}

/* batch_do - see batch.h. */
int batch_do(struct batch *b, void *arg)
{
	struct batch_item it;
	uint32_t s, hint;

	memset(&it, 0, sizeof(it));
	it.arg = arg;
	atomic_init(&it.state, ITEM_WAIT);
	pthread_mutex_lock(&b->mu);
	if (b->tail)
		b->tail->next = &it;
	else
		b->head = &it;
	b->tail = &it;
	for (;;) {
		if (b->head == &it && b->leaders < b->max_leaders) {
			lead(b);
			return it.rc;
		}
		hint = ITEM_LEAD; /* a hint now stale: wait for the next */
		atomic_compare_exchange_strong(&it.state, &hint, ITEM_WAIT);
		pthread_mutex_unlock(&b->mu);
		while ((s = atomic_load_explicit(&it.state,
						 memory_order_acquire)) ==
		       ITEM_WAIT)
			syscall(SYS_futex, (void *)&it.state,
				FUTEX_WAIT_PRIVATE, ITEM_WAIT, NULL, NULL, 0);
		if (s == ITEM_DONE)
			return it.rc;
		pthread_mutex_lock(&b->mu);
	}
}
