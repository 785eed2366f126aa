/*
 * pss_queue.c - the balancer of parallel save streams (pss_int.h): walked
 * objects copied out of the walker, and the queue every stream of a save
 * point takes them from.
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <unistd.h>

#include "nsr/asm.h"
#include "nsr/err.h"
#include "nsr/saver.h"
#include "nsr/size.h"

#include "pss_int.h"

/* dup_str - strdup of s, or NULL for NULL (*ok cleared on failure). */
static char *dup_str(const char *s, int *ok)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*ok = 0;
	return d;
}

/* copy_names - a directory's entry list. */
static int copy_names(struct nsr_walk_ent *d, const struct nsr_walk_ent *e)
{
	char **v;
	int ok = 1;

	if (!e->listed)
		return NSR_OK;
	v = calloc(e->nnames + 1, sizeof(*v));
	if (!v)
		return NSR_ERR_NOMEM;
	d->names = (const char *const *)v;
	for (size_t i = 0; i < e->nnames && ok; i++) {
		v[i] = dup_str(e->names[i], &ok);
		d->nnames = i + 1;
	}
	return ok ? NSR_OK : NSR_ERR_NOMEM;
}

/* Descriptors open ahead, over every queue of the process (bounded so a
 * save of many save points stays far from its descriptor limit). */
static unsigned opened_ahead;

/* open_ahead - a small regular file is opened when it is queued and its
 * data read ahead (POSIX_FADV_WILLNEED starts the reads and returns):
 * with a window of files in flight the disk has many reads to serve
 * at once, where the streams alone ask one each (pss_int.h).  Nothing
 * is said when it fails: the saver opens the file itself then, and
 * reports what goes wrong. */
static void open_ahead(struct pss_item *it)
{
	int fd;

	if (it->e.type != NSR_ASM_REG || it->e.err != 0 || it->size == 0 ||
	    it->size > PSS_AHEAD_MAX)
		return;
	if (__atomic_add_fetch(&opened_ahead, 1, __ATOMIC_RELAXED) >
	    PSS_AHEAD_FDS) {
		__atomic_sub_fetch(&opened_ahead, 1, __ATOMIC_RELAXED);
		return;
	}
	fd = nsr_saver_open(&it->e);
	if (fd < 0) {
		__atomic_sub_fetch(&opened_ahead, 1, __ATOMIC_RELAXED);
		return;
	}
	(void)posix_fadvise(fd, 0, (off_t)it->size, POSIX_FADV_WILLNEED);
	it->e.has_fd = true;
	it->e.fd = fd;
}

/* master_only - objects the master stream must save (pss_int.h). */
static int master_only(const struct nsr_walk_ent *e)
{
	return e->err != 0 || e->type == NSR_ASM_DIR ||
	       e->type == NSR_ASM_HARDLINK ||
	       (e->type == NSR_ASM_REG && e->st.st_nlink > 1);
}

/* pss_item_new - copy a walked object. */
int pss_item_new(const struct nsr_walk_ent *e, struct pss_item **out)
{
	struct pss_item *it = calloc(1, sizeof(*it));
	int ok = 1;

	*out = NULL;
	if (!it)
		return NSR_ERR_NOMEM;
	it->e = *e;
	it->e.path = dup_str(e->path, &ok);
	it->e.link = dup_str(e->link, &ok);
	it->e.what = dup_str(e->what, &ok);
	it->e.name = NULL;
	it->e.dirfd = AT_FDCWD;
	it->e.names = NULL;
	it->e.nnames = 0;
	if (ok && e->name && e->dirfd != AT_FDCWD) {
		/* The walker closes its descriptor: keep one of our own.
		 * Out of descriptors, the path serves (up to PATH_MAX). */
		int fd = fcntl(e->dirfd, F_DUPFD_CLOEXEC, 0);

		if (fd >= 0) {
			it->e.dirfd = fd;
			it->e.name = dup_str(e->name, &ok);
		}
	} else if (ok && e->name) {
		it->e.name = dup_str(e->name, &ok);
	}
	if (!ok || copy_names(&it->e, e) != NSR_OK) {
		pss_item_free(it);
		return NSR_ERR_NOMEM;
	}
	it->size = e->type == NSR_ASM_REG && e->err == 0
			   ? (uint64_t)e->st.st_size
			   : 0;
	it->master = master_only(e);
	it->e.has_fd = false;
	open_ahead(it);
	*out = it;
	return NSR_OK;
}

/* pss_part_size - PSS_PART_DEFAULT or NSR_PSS_PART_SIZE. */
uint64_t pss_part_size(void)
{
	const char *v = getenv("NSR_PSS_PART_SIZE");
	long long n;

	if (v && nsr_size_parse(v, &n) == NSR_OK && n >= (1LL << 20) &&
	    n <= (1LL << 30))
		return (uint64_t)n;
	return PSS_PART_DEFAULT;
}

/* pss_split_plan - whole, or how many parts of how many bytes: as many
 * as parts of at most part bytes need, rounded up to a multiple of the
 * streams (each stream gets an equal share when nothing else waits),
 * each a multiple of 64 KiB but the last. */
uint32_t pss_split_plan(uint64_t size, unsigned streams, uint64_t part,
			uint64_t *plen)
{
	const uint64_t align = 64 * 1024;
	uint64_t n, len;

	*plen = 0;
	if (streams < 2 || part == 0 || size / 2 < part)
		return 0;
	n = (size + part - 1) / part;
	n = (n + streams - 1) / streams * streams;
	if (n > NSR_ASM_PARTS_MAX)
		n = NSR_ASM_PARTS_MAX;
	len = (size + n - 1) / n;
	len = (len + align - 1) / align * align;
	*plen = len;
	return (uint32_t)((size + len - 1) / len);
}

/* pss_item_free - free an item and close its descriptor. */
void pss_item_free(struct pss_item *it)
{
	if (!it)
		return;
	if (it->e.dirfd != AT_FDCWD && it->e.dirfd >= 0)
		close(it->e.dirfd);
	if (it->e.has_fd) {
		close(it->e.fd);
		__atomic_sub_fetch(&opened_ahead, 1, __ATOMIC_RELAXED);
	}
	free((char *)it->e.path);
	free((char *)it->e.link);
	free((char *)it->e.what);
	free((char *)it->e.name);
	for (size_t i = 0; i < it->e.nnames; i++)
		free((char *)it->e.names[i]);
	free((void *)it->e.names);
	free(it);
}

/* pss_queue_init - an empty queue. */
int pss_queue_init(struct pss_queue *q, size_t window, unsigned consumers)
{
	memset(q, 0, sizeof(*q));
	q->window = window ? window : 1;
	q->shared = calloc(q->window + 1, sizeof(*q->shared));
	if (!q->shared)
		return NSR_ERR_NOMEM;
	q->consumers = consumers;
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
	return NSR_OK;
}

/* pss_queue_destroy - free the queue and the objects left in it. */
void pss_queue_destroy(struct pss_queue *q)
{
	struct pss_item *it, *next;

	if (!q->shared)
		return;
	for (size_t i = 0; i < q->nshared; i++)
		pss_item_free(q->shared[i]);
	for (it = q->mhead; it; it = next) {
		next = it->next;
		pss_item_free(it);
	}
	free(q->shared);
	pthread_cond_destroy(&q->cv);
	pthread_mutex_destroy(&q->mu);
	memset(q, 0, sizeof(*q));
}

/* pss_queue_put - add an object, waiting for room (invariant 1). */
int pss_queue_put(struct pss_queue *q, struct pss_item *it)
{
	pthread_mutex_lock(&q->mu);
	while (!q->aborted && q->nshared + q->nmaster >= q->window)
		pthread_cond_wait(&q->cv, &q->mu);
	if (q->aborted) {
		pthread_mutex_unlock(&q->mu);
		return NSR_ERR_STATE;
	}
	it->next = NULL;
	if (it->master) {
		if (q->mtail)
			q->mtail->next = it;
		else
			q->mhead = it;
		q->mtail = it;
		q->nmaster++;
	} else {
		q->shared[q->nshared++] = it;
	}
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
	return NSR_OK;
}

/* take - the object for a stream, or NULL (mu held). */
static struct pss_item *take(struct pss_queue *q, int master)
{
	struct pss_item *it = NULL;
	size_t best = 0;

	if (master && q->mhead) {
		it = q->mhead;
		q->mhead = it->next;
		if (!q->mhead)
			q->mtail = NULL;
		q->nmaster--;
		return it;
	}
	if (q->nshared == 0)
		return NULL;
	for (size_t i = 1; i < q->nshared; i++)
		if (q->shared[i]->size > q->shared[best]->size)
			best = i;
	it = q->shared[best];
	q->shared[best] = q->shared[--q->nshared];
	return it;
}

/* ready - is there an object for a stream, or an end (mu held)? */
static int ready(const struct pss_queue *q, int master)
{
	return q->aborted || q->closed || q->nshared > 0 ||
	       (master && q->mhead);
}

/* pss_queue_get - the next object for a stream, if there is one now. */
int pss_queue_get(struct pss_queue *q, int master, struct pss_item **out)
{
	int rc;

	pthread_mutex_lock(&q->mu);
	*out = q->aborted ? NULL : take(q, master);
	rc = q->aborted ? NSR_ERR_STATE
	     : *out	? NSR_OK
	     : q->closed ? NSR_ERR_EOF
			 : NSR_ERR_AGAIN;
	if (*out)
		pthread_cond_broadcast(&q->cv); /* room for the traversal */
	pthread_mutex_unlock(&q->mu);
	return rc;
}

/* pss_queue_wait - wait until there may be something for a stream. */
void pss_queue_wait(struct pss_queue *q, int master)
{
	pthread_mutex_lock(&q->mu);
	while (!ready(q, master))
		pthread_cond_wait(&q->cv, &q->mu);
	pthread_mutex_unlock(&q->mu);
}

/* pss_queue_close - no more objects come. */
void pss_queue_close(struct pss_queue *q)
{
	pthread_mutex_lock(&q->mu);
	q->closed = 1;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

/* pss_queue_abort - fail every put and get from now on. */
void pss_queue_abort(struct pss_queue *q)
{
	pthread_mutex_lock(&q->mu);
	q->aborted = 1;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

/* pss_queue_leave - one stream fewer. */
void pss_queue_leave(struct pss_queue *q, int master)
{
	pthread_mutex_lock(&q->mu);
	int drained = q->closed && q->nmaster == 0;

	if (q->consumers > 0)
		q->consumers--;
	/* What is left, or still comes, could not be saved. */
	if ((master && !drained) ||
	    (q->consumers == 0 && !(drained && q->nshared == 0)))
		q->aborted = 1;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
}
