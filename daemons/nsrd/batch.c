/*
 * batch.c - flat combining of requests into batches (batch.h).  The
 * thread whose item is at the head of the queue, when fewer than
 * max_leaders batches run, takes up to BATCH_MAX items from the head and
 * runs them; every other thread sleeps on its own item's condition until
 * its item is done or it is the head and may lead.  Invariants (under
 * mu): an item is either queued (head..tail) or taken by exactly one
 * leader; done is set only after run returned; the head is woken
 * whenever it might lead (a leader ended, or took items and left a slot).
 */
#include "nsr/compat.h"

#include "batch.h"

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

/* lead - take up to BATCH_MAX items from the head and run them; called
 * and returns with mu held. */
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
	if (b->head && b->leaders < b->max_leaders)
		pthread_cond_signal(&b->head->cv);
	pthread_mutex_unlock(&b->mu);
	b->run(b->ctx, v, n);
	pthread_mutex_lock(&b->mu);
	b->leaders--;
	b->batches++;
	b->items += n;
	for (size_t i = 0; i < n; i++) {
		v[i]->done = 1;
		pthread_cond_signal(&v[i]->cv);
	}
	if (b->head)
		pthread_cond_signal(&b->head->cv);
}

/* batch_do - see batch.h. */
int batch_do(struct batch *b, void *arg)
{
	struct batch_item it;

	memset(&it, 0, sizeof(it));
	it.arg = arg;
	pthread_cond_init(&it.cv, NULL);
	pthread_mutex_lock(&b->mu);
	if (b->tail)
		b->tail->next = &it;
	else
		b->head = &it;
	b->tail = &it;
	while (!it.done) {
		if (b->head == &it && b->leaders < b->max_leaders)
			lead(b);
		else
			pthread_cond_wait(&it.cv, &b->mu);
	}
	pthread_mutex_unlock(&b->mu);
	pthread_cond_destroy(&it.cv);
	return it.rc;
}
