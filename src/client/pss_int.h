/*
 * pss_int.h - the balancer of parallel save streams (pss_queue.c): the
 * objects one traversal found, waiting for the streams of a save point.
 *
 * Every stream takes its next object from one shared queue when it is
 * ready for it, so no stream idles while objects wait, and nothing is
 * bound to a stream before that stream is free.  Of the waiting objects
 * (a window of bounded length: the traversal waits when it is full) the
 * largest file goes first, so the big files start early and the small
 * ones fill the gaps at the end (longest processing time first).
 * Directories, hard links (and files with more than one link, which a
 * hard link may name), and walk errors go to the master stream only, in
 * walk order: restoring the master last then makes every link's target
 * exist first and sets directory metadata after the files were written.
 * A large regular file (at least two parts, pss_split_plan) is not
 * pinned to one stream: its head goes to the master and its parts to
 * the shared queue, each an object any stream may take, so the streams
 * read it side by side (asm.h, split files).
 *
 * A small regular file (up to PSS_AHEAD_MAX bytes) is opened when it is
 * queued and its data read ahead, so the disk serves the reads of the
 * whole window at once rather than one per stream; at most
 * PSS_AHEAD_FDS such descriptors are open in the process, and an item
 * closes its own when it is freed.  The saver's own walk-ahead
 * (nsr_saver_add_path, one stream) keeps its objects as pss_items too.
 *
 * Invariants (mu held):
 *  1. nshared + nmaster <= window except after a put into an empty
 *     queue (one object always fits);
 *  2. an object is handed out once, a master-only one to the master;
 *  3. aborted: every put and get fails at once, and stays so;
 *  4. closed: no more puts; a get with nothing for it is NSR_ERR_EOF.
 */
#ifndef NSR_PSS_INT_H
#define NSR_PSS_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "nsr/saver.h"
#include "nsr/walk.h"

#define PSS_AHEAD_MAX ((uint64_t)1 << 20) /* bytes of a file opened ahead */
#define PSS_AHEAD_FDS 256u		    /* descriptors open ahead */

/* One walked object, copied with what it points to; e.dirfd is a
 * duplicate the item owns (or AT_FDCWD with e.name NULL), and so is
 * e.fd when e.has_fd (a file opened ahead). */
struct pss_item {
	struct nsr_walk_ent e;
	uint64_t size;	/* bytes of a regular file: the balancing key */
	int master;	/* for the master stream only */
	struct nsr_saver_part part; /* nparts > 0: a piece of a split file */
	struct pss_item *next;
};

struct pss_queue {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct pss_item **shared; /* any stream, largest first */
	size_t nshared;
	struct pss_item *mhead, *mtail; /* master only, in order */
	size_t nmaster;
	size_t window;
	unsigned consumers; /* streams still taking */
	int closed, aborted;
};

/* pss_item_new - a copy of e that outlives the walker's next step. */
int pss_item_new(const struct nsr_walk_ent *e, struct pss_item **out);
/* PSS_PART_DEFAULT - the part size of split files unless
 * NSR_PSS_PART_SIZE (environment, 1 MiB to 1 GiB) says another. */
#define PSS_PART_DEFAULT ((uint64_t)64 << 20)
/* pss_part_size - the part size in use (PSS_PART_DEFAULT, or the
 * environment's when it is valid). */
uint64_t pss_part_size(void);
/* pss_split_plan - how a regular file of size bytes is saved by a save
 * point of streams streams: 0 whole (one stream, or under two parts of
 * part bytes), else its number of parts, *plen bytes each (the last
 * shorter): parts of at most part bytes (more when NSR_ASM_PARTS_MAX
 * parts would not hold it), as many as a multiple of streams, each a
 * multiple of 64 KiB. */
uint32_t pss_split_plan(uint64_t size, unsigned streams, uint64_t part,
			uint64_t *plen);
/* pss_item_free - free an item (NULL is fine). */
void pss_item_free(struct pss_item *it);

/* pss_queue_init - an empty queue of window objects for consumers
 * streams (the master among them). */
int pss_queue_init(struct pss_queue *q, size_t window, unsigned consumers);
/* pss_queue_destroy - free the queue and what it still holds. */
void pss_queue_destroy(struct pss_queue *q);
/* pss_queue_put - hand it over, waiting while the window is full;
 * NSR_ERR_STATE (it stays the caller's) once aborted. */
int pss_queue_put(struct pss_queue *q, struct pss_item *it);
/* pss_queue_get - the next object for a stream (master: its own first,
 * in order; then the largest shared) if there is one now; NSR_ERR_AGAIN
 * if not yet (pss_queue_wait, then ask again: another stream may take
 * it first), NSR_ERR_EOF when closed with nothing left for it,
 * NSR_ERR_STATE once aborted. */
int pss_queue_get(struct pss_queue *q, int master, struct pss_item **out);
/* pss_queue_wait - wait until a get may find something, or an end. */
void pss_queue_wait(struct pss_queue *q, int master);
/* pss_queue_close - the traversal is done. */
void pss_queue_close(struct pss_queue *q);
/* pss_queue_leave - a stream takes no more; when the master leaves
 * before the traversal is done and its objects taken, or the last one
 * leaves before everything was taken, what is left could not be saved:
 * aborted. */
void pss_queue_leave(struct pss_queue *q, int master);
/* pss_queue_abort - stop everybody. */
void pss_queue_abort(struct pss_queue *q);

#endif /* NSR_PSS_INT_H */
