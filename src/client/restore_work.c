/*
 * restore_work.c - the restore engine's writer workers.  The stream is
 * decoded in the thread that feeds the restore; a small regular file
 * (up to RST_JOB_MAX) in a directory being restored is kept in memory
 * until its FILE_END and, its checksum good, handed whole to one of
 * several workers, which creates it without a name (O_TMPFILE), writes
 * its data (holes by seeking), applies its metadata and links it under
 * its name; a file that replaces another, or a file system without
 * O_TMPFILE, goes under a temporary name renamed into place instead.
 * Either way a cut or damaged file never takes its name, and the
 * unnamed one leaves nothing behind when the process dies; one directory
 * insertion instead of an insertion and a rename took a third less time
 * per file in a bare test on ext4 (tests/bench/recover/RESULTS.md).  The
 * feeding thread reports each finished job (restore_int.h has the
 * invariants); larger files are written by the feeding thread as
 * before.  Creating and naming small files is what bounds a restore of
 * many of them: several in flight keep the disk busy.  On kernels that
 * refuse linkat(AT_EMPTY_PATH) to a process without CAP_DAC_READ_SEARCH
 * the file is linked through /proc/self/fd; where neither works, the
 * first job finds out and every job goes by temporary name.  Each of
 * these ways around is tested on any file system through the test
 * faults of NSR_TEST_RESTORE_FAULT (enum work_fault).
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/restore.h"

#include "restore_int.h"

/* Queue bounds: jobs waiting or being written, and their data bytes. */
#define WORK_MAX_JOBS 256
#define WORK_MAX_BYTES (64u * 1024 * 1024)

/* A piece of a job's data: dlen bytes from the buffer, then hole zeros. */
struct seg {
	size_t dlen;
	uint64_t hole;
};

struct rst_job {
	struct rst_job *next;
	struct rst_dirh *dir;	   /* its directory (a reference) */
	char *path, *target, *name;
	char tmp[96];		   /* temporary name, in dir */
	struct nsr_asm_file meta;  /* .path = path, other strings NULL */
	struct xa_list xa;
	mode_t mode;		   /* to create it with */
	int made_mode;		   /* mode is its saved mode */
	int replace, unclaimed, no_owner;
	uid_t euid;
	int64_t gid;		   /* the group creation gives it */
	unsigned char *data;
	size_t len, cap;
	struct seg *seg;
	size_t nseg, segcap;
	uint64_t data_end;
	/* results, written by the worker */
	struct rst_probs probs;
	int fatal;  /* not created/renamed (problems say why) */
	int exists; /* unclaimed and its name was taken: still under tmp */
	int anon;   /* created with O_TMPFILE: no name yet */
	int *no_anon; /* the restore's "O_TMPFILE does not serve" flag */
	int fault;    /* the restore's test fault (enum work_fault) */
	int named;    /* how it took its name (enum rst_named), or -1 */
};

/* Test faults (NSR_TEST_RESTORE_FAULT), so the ways around a file system
 * without O_TMPFILE or without linking an unnamed file are tested on one
 * that has both: "tmpfile" (opening an unnamed file fails as where
 * O_TMPFILE is not supported), "emptypath" (linking it by its descriptor
 * fails as without CAP_DAC_READ_SEARCH), "link" (it cannot be linked at
 * all, so it is written again by name). */
enum work_fault { FAULT_NONE, FAULT_TMPFILE, FAULT_EMPTYPATH, FAULT_LINK };

struct rst_work {
	pthread_mutex_t mu;
	pthread_cond_t more; /* a job was queued, or stop */
	pthread_cond_t done; /* a job was finished */
	struct rst_job *head, *tail; /* queued */
	struct rst_job *fin;	     /* finished, not yet reaped */
	size_t pending;		     /* queued or being written */
	size_t unreaped;	     /* pending + finished */
	size_t bytes;		     /* data bytes of pending jobs */
	int stop;
	int nthreads;
	int no_anon; /* O_TMPFILE or linking it failed once: not tried again
		      * (read and set atomically by the workers) */
	int fault;   /* enum work_fault, read once at the start */
	/* saved paths of the jobs since the last full drain (feeding
	 * thread only): a name the stream brings twice waits for the
	 * first (rst_work_named) */
	struct rst_map names;
	pthread_t *threads;
};

/* rst_dirh_get - one more holder. */
struct rst_dirh *rst_dirh_get(struct rst_dirh *h)
{
	__atomic_add_fetch(&h->refs, 1, __ATOMIC_RELAXED);
	return h;
}

/* rst_dirh_put - one holder fewer: the last closes the directory. */
void rst_dirh_put(struct rst_dirh *h)
{
	if (h != NULL &&
	    __atomic_sub_fetch(&h->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		close(h->fd);
		free(h);
	}
}

/* job_free - free a job and let go of its directory. */
static void job_free(struct rst_job *j)
{
	if (j == NULL)
		return;
	rst_dirh_put(j->dir);
	free(j->path);
	free(j->target);
	free(j->name);
	rst_xa_release(&j->xa);
	free(j->data);
	free(j->seg);
	free(j);
}

/* job_open_anon - an unnamed file in the job's directory (O_TMPFILE)
 * when it takes a free name and O_TMPFILE serves; else -1. */
static int job_open_anon(struct rst_job *j)
{
	int fd;

	if (j->replace || __atomic_load_n(j->no_anon, __ATOMIC_RELAXED))
		return -1;
	if (j->fault == FAULT_TMPFILE) {
		fd = -1;
		errno = EOPNOTSUPP;
	} else {
		fd = openat(j->dir->fd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC,
			    j->mode);
	}
	if (fd < 0)
		__atomic_store_n(j->no_anon, 1, __ATOMIC_RELAXED);
	return fd;
}

/* with_tmp_name - try(j, arg) under the job's temporary name, then with
 * .1 to .99 added while it fails with EEXIST; its last result (>= 0 on
 * success, -1 with errno). */
static int with_tmp_name(struct rst_job *j,
			 int (*try)(struct rst_job *, void *), void *arg)
{
	size_t base = strlen(j->tmp);
	int rc = -1;

	for (int i = 0; i < 100; i++) {
		if (i > 0)
			snprintf(j->tmp + base, sizeof(j->tmp) - base, ".%d",
				 i);
		rc = try(j, arg);
		if (rc >= 0 || errno != EEXIST)
			break;
	}
	return rc;
}

/* create_tmp - with_tmp_name's try: create the file under j->tmp. */
static int create_tmp(struct rst_job *j, void *arg)
{
	NSR_UNUSED(arg);
	return openat(j->dir->fd, j->tmp,
		      O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		      j->mode);
}

/* job_create - create the job's file, unnamed when anon_ok and it can
 * be, else under a free temporary name, and write its data; the
 * descriptor, or -1 (a problem recorded, nothing left behind). */
static int job_create(struct rst_job *j, int anon_ok)
{
	size_t off = 0;
	int fd = anon_ok ? job_open_anon(j) : -1;

	j->anon = fd >= 0;
	if (fd < 0)
		fd = with_tmp_name(j, create_tmp, NULL);
	if (fd < 0) {
		rst_prob(&j->probs, RP_CREATE);
		return -1;
	}
	for (size_t i = 0; i < j->nseg; i++) {
		if (nsr_write_full(fd, j->data + off, j->seg[i].dlen) !=
		    NSR_OK) {
			rst_prob(&j->probs, RP_WRITE);
			goto fail;
		}
		off += j->seg[i].dlen;
		if (j->seg[i].hole &&
		    lseek(fd, (off_t)j->seg[i].hole, SEEK_CUR) < 0) {
			rst_prob(&j->probs, RP_WRITE);
			goto fail;
		}
	}
	if (j->meta.size != j->data_end &&
	    ftruncate(fd, (off_t)j->meta.size) != 0) {
		rst_prob(&j->probs, RP_TRUNCATE);
		goto fail;
	}
	return fd;
fail:
	close(fd);
	if (!j->anon)
		(void)unlinkat(j->dir->fd, j->tmp, 0);
	return -1;
}

/* link_anon - give the unnamed file fd the name name in the job's
 * directory, never over something there; 0, or -1 with errno. */
static int link_anon(struct rst_job *j, int fd, const char *name)
{
	char proc[64];

	/* Without CAP_DAC_READ_SEARCH AT_EMPTY_PATH fails with ENOENT;
	 * the /proc link works for anyone. */
	if (j->fault == FAULT_LINK) {
		errno = EPERM;
		return -1;
	}
	if (j->fault != FAULT_EMPTYPATH) {
		if (linkat(fd, "", j->dir->fd, name, AT_EMPTY_PATH) == 0) {
			j->named = RST_NAMED_FD;
			return 0;
		}
		if (errno == EEXIST)
			return -1;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (linkat(AT_FDCWD, proc, j->dir->fd, name, AT_SYMLINK_FOLLOW) != 0)
		return -1;
	j->named = RST_NAMED_PROC;
	return 0;
}

/* link_tmp - with_tmp_name's try: link the unnamed file *arg as j->tmp. */
static int link_tmp(struct rst_job *j, void *arg)
{
	return link_anon(j, *(int *)arg, j->tmp);
}

/* job_link - the unnamed file fd takes its name; when that is taken and
 * the file unclaimed, a free temporary name (j->exists, as job_rename).
 * 0, 1 when it could not be linked at all (not an EEXIST: the caller
 * writes it again by name), or -1 with errno. */
static int job_link(struct rst_job *j, int fd)
{
	if (link_anon(j, fd, j->name) == 0)
		return 0;
	if (errno != EEXIST)
		return 1;
	if (!j->unclaimed || with_tmp_name(j, link_tmp, &fd) < 0)
		return -1;
	j->exists = 1;
	return 0;
}

/* job_rename - the whole file takes its name (not over something that
 * is there, unless it replaces it); 0, or -1 with errno. */
static int job_rename(struct rst_job *j)
{
	int d = j->dir->fd;
	struct stat st;

	if (j->replace)
		return renameat(d, j->tmp, d, j->name);
	if (renameat2(d, j->tmp, d, j->name, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	if (fstatat(d, j->name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		errno = EEXIST;
		return -1;
	}
	return renameat(d, j->tmp, d, j->name);
}

/* job_run - a worker's part: create, write, metadata, name. */
static void job_run(struct rst_job *j)
{
	struct rst_newreg n = { &j->meta, &j->xa, j->no_owner, j->euid,
				j->gid, j->made_mode };
	int fd = job_create(j, 1), rc;

	if (fd < 0) {
		j->fatal = 1;
		return;
	}
	rst_reg_meta(fd, &n, &j->probs);
	if (j->anon) {
		int e;

		rc = job_link(j, fd);
		e = errno;
		close(fd);
		errno = e;
		if (rc == 1) {
			/* This file system cannot name an O_TMPFILE file:
			 * the metadata's problems are counted again. */
			__atomic_store_n(j->no_anon, 1, __ATOMIC_RELAXED);
			memset(&j->probs, 0, sizeof(j->probs));
			job_run(j);
			return;
		}
		if (rc != 0) {
			rst_prob(&j->probs, RP_RENAME);
			j->fatal = 1;
		}
		free(j->data);
		j->data = NULL;
		return;
	}
	close(fd);
	if (job_rename(j) != 0) {
		if (errno == EEXIST && j->unclaimed) {
			j->exists = 1; /* the policy decides, when reaped */
			return;
		}
		rst_prob(&j->probs, RP_RENAME);
		(void)unlinkat(j->dir->fd, j->tmp, 0);
		j->fatal = 1;
	} else {
		j->named = RST_NAMED_TMP;
	}
	free(j->data);
	j->data = NULL;
}

/* worker - take jobs until told to stop with none left. */
static void *worker(void *arg)
{
	struct rst_work *w = arg;
	struct rst_job *j;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (w->head == NULL && !w->stop)
			pthread_cond_wait(&w->more, &w->mu);
		if (w->head == NULL)
			break;
		j = w->head;
		w->head = j->next;
		if (w->head == NULL)
			w->tail = NULL;
		pthread_mutex_unlock(&w->mu);
		job_run(j);
		pthread_mutex_lock(&w->mu);
		w->bytes -= j->len;
		w->pending--;
		j->next = w->fin;
		w->fin = j;
		pthread_cond_broadcast(&w->done);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* rst_work_start - n writer workers. */
int rst_work_start(struct nsr_restore *r, int n)
{
	struct rst_work *w = calloc(1, sizeof(*w));

	if (w == NULL)
		return NSR_ERR_NOMEM;
	w->threads = calloc((size_t)n, sizeof(pthread_t));
	if (w->threads == NULL) {
		free(w);
		return NSR_ERR_NOMEM;
	}
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->more, NULL);
	pthread_cond_init(&w->done, NULL);
	rst_map_init(&w->names);
	{
		const char *e = getenv("NSR_TEST_RESTORE_FAULT");

		w->fault = !e			     ? FAULT_NONE
			   : strcmp(e, "tmpfile") == 0   ? FAULT_TMPFILE
			   : strcmp(e, "emptypath") == 0 ? FAULT_EMPTYPATH
			   : strcmp(e, "link") == 0	     ? FAULT_LINK
							     : FAULT_NONE;
	}
	r->work = w;
	for (int i = 0; i < n; i++) {
		if (pthread_create(&w->threads[i], NULL, worker, w) != 0)
			break;
		w->nthreads++;
	}
	if (w->nthreads == 0) {
		rst_work_stop(r);
		return NSR_ERR_SYSTEM;
	}
	return NSR_OK;
}

/* rst_work_stop - reap every job, stop and free the workers. */
void rst_work_stop(struct nsr_restore *r)
{
	struct rst_work *w = r->work;

	if (w == NULL)
		return;
	rst_work_reap(r, 1);
	pthread_mutex_lock(&w->mu);
	w->stop = 1;
	pthread_cond_broadcast(&w->more);
	pthread_mutex_unlock(&w->mu);
	for (int i = 0; i < w->nthreads; i++)
		pthread_join(w->threads[i], NULL);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->more);
	pthread_cond_destroy(&w->done);
	rst_map_release(&w->names);
	free(w->threads);
	free(w);
	r->work = NULL;
}

/* rst_work_defer - the current regular file becomes a job. */
int rst_work_defer(struct nsr_restore *r, struct rst_dirh *dir, mode_t mode)
{
	struct rst_job *j = calloc(1, sizeof(*j));

	if (j == NULL)
		return NSR_ERR_NOMEM;
	j->named = -1;
	j->data = malloc(r->cur.meta.size ? r->cur.meta.size : 1);
	if (j->data == NULL) {
		free(j);
		return NSR_ERR_NOMEM;
	}
	j->cap = r->cur.meta.size ? r->cur.meta.size : 1;
	j->dir = rst_dirh_get(dir);
	snprintf(j->tmp, sizeof(j->tmp), NSR_RESTORE_TMP_PREFIX "%ld.%u",
		 (long)r->pid, r->tmp_seq++);
	j->mode = mode;
	j->no_anon = &r->work->no_anon;
	j->fault = r->work->fault;
	j->made_mode = r->cur.made_mode;
	j->replace = r->cur.replace;
	j->unclaimed = r->cur.unclaimed;
	j->no_owner = r->no_owner;
	j->euid = r->euid;
	j->gid = r->parent_gid;
	r->cur.job = j;
	r->cur.write = 1;
	return NSR_OK;
}

/* rst_work_data - append data to the current job. */
int rst_work_data(struct nsr_restore *r, const void *p, size_t n)
{
	struct rst_job *j = r->cur.job;

	if (j->len + n > j->cap) {
		size_t ncap = (j->len + n) * 2;
		unsigned char *nd = realloc(j->data, ncap);

		if (nd == NULL)
			return NSR_ERR_NOMEM;
		j->data = nd;
		j->cap = ncap;
	}
	memcpy(j->data + j->len, p, n);
	j->len += n;
	if (j->nseg == 0 || j->seg[j->nseg - 1].hole != 0) {
		if (rst_work_hole(r, 0) != NSR_OK)
			return NSR_ERR_NOMEM;
	}
	j->seg[j->nseg - 1].dlen += n;
	j->data_end = r->cur.written + n;
	return NSR_OK;
}

/* rst_work_hole - append a hole (len 0: start a new piece). */
int rst_work_hole(struct nsr_restore *r, uint64_t len)
{
	struct rst_job *j = r->cur.job;

	if (len > 0 && j->nseg > 0) {
		j->seg[j->nseg - 1].hole += len;
		return NSR_OK;
	}
	if (j->nseg == j->segcap) {
		size_t ncap = j->segcap ? j->segcap * 2 : 2;
		struct seg *ns = realloc(j->seg, ncap * sizeof(*ns));

		if (ns == NULL)
			return NSR_ERR_NOMEM;
		j->seg = ns;
		j->segcap = ncap;
	}
	j->seg[j->nseg].dlen = 0;
	j->seg[j->nseg].hole = len;
	j->nseg++;
	return NSR_OK;
}

/* take_cur - move the current file's names, metadata and attributes
 * into its job. */
static void take_cur(struct nsr_restore *r, struct rst_job *j)
{
	j->path = r->cur.path;
	j->target = r->cur.target;
	j->name = r->cur.name;
	r->cur.path = r->cur.target = r->cur.name = NULL;
	j->meta = r->cur.meta;
	j->meta.path = j->path;
	j->xa = r->cur.xa;
	memset(&r->cur.xa, 0, sizeof(r->cur.xa));
	j->made_mode = r->cur.made_mode;
}

/* rst_work_submit - queue the current job; waits while the queue is
 * full. */
int rst_work_submit(struct nsr_restore *r)
{
	struct rst_work *w = r->work;
	struct rst_job *j = r->cur.job;

	take_cur(r, j);
	r->cur.job = NULL;
	r->cur.write = 0;
	if (rst_map_put(&w->names, j->path, "") != NSR_OK) {
		job_free(j);
		return NSR_ERR_NOMEM;
	}
	pthread_mutex_lock(&w->mu);
	while (w->pending >= WORK_MAX_JOBS ||
	       (w->pending > 0 && w->bytes + j->len > WORK_MAX_BYTES))
		pthread_cond_wait(&w->done, &w->mu);
	j->next = NULL;
	if (w->tail)
		w->tail->next = j;
	else
		w->head = j;
	w->tail = j;
	w->pending++;
	w->unreaped++;
	w->bytes += j->len;
	pthread_cond_signal(&w->more);
	pthread_mutex_unlock(&w->mu);
	return NSR_OK;
}

/* rst_work_materialize - write the current job here, now. */
void rst_work_materialize(struct nsr_restore *r)
{
	struct rst_job *j = r->cur.job;
	int fd;

	r->cur.job = NULL;
	fd = job_create(j, 0); /* the feeding thread goes on by name */
	if (fd < 0) {
		rst_report(r, r->cur.path, &j->probs);
		r->cur.failed = 1;
	} else {
		r->cur.fd = fd;
		r->cur.tmp = strdup(j->tmp);
		if (r->cur.tmp == NULL) { /* cannot name it: drop it */
			(void)unlinkat(j->dir->fd, j->tmp, 0);
			r->cur.failed = 1;
			r->err = NSR_ERR_NOMEM;
		}
	}
	/* cur.dfd is the cached parent, which is j->dir (invariant 2) */
	job_free(j);
}

/* rst_work_drop - forget the current job. */
void rst_work_drop(struct nsr_restore *r)
{
	job_free(r->cur.job);
	r->cur.job = NULL;
}

/* finish_job - report a job the workers are done with (a taken name is
 * settled through the current file, by the policy; a record in progress
 * there, as when a flush comes while a stream stopped inside one, is
 * kept aside meanwhile). */
static int finish_job(struct nsr_restore *r, struct rst_job *j)
{
	struct cur_file keep;
	int rc = NSR_OK;

	rst_report(r, j->path, &j->probs);
	if (j->exists) {
		keep = r->cur;
		rst_cur_idle(&r->cur);
		r->cur.active = r->cur.write = 1;
		r->cur.unclaimed = 1;
		r->cur.meta = j->meta;
		r->cur.path = j->path;
		r->cur.target = j->target;
		r->cur.name = j->name;
		j->path = j->target = j->name = NULL;
		r->cur.tmp = strdup(j->tmp);
		r->cur.dfd = j->dir->fd;
		if (r->cur.tmp == NULL) {
			(void)unlinkat(j->dir->fd, j->tmp, 0);
			rc = NSR_ERR_NOMEM;
		} else {
			rst_place(r);
			if (!r->cur.failed)
				rc = rst_done_object(r, &r->cur.meta,
						     r->cur.target);
		}
		rst_cur_reset(r);
		r->cur = keep;
	} else if (!j->fatal) {
		rc = rst_done_object(r, &j->meta, j->target);
		if (j->named >= 0)
			r->named[j->named]++;
	}
	job_free(j);
	return rc;
}

/* rst_work_reap - report finished jobs; with all, wait for every one. */
int rst_work_reap(struct nsr_restore *r, int all)
{
	struct rst_work *w = r->work;
	struct rst_job *fin, *rev = NULL, *next;
	int rc = NSR_OK, rc2;

	if (w == NULL)
		return NSR_OK;
	pthread_mutex_lock(&w->mu);
	while (all && w->pending > 0)
		pthread_cond_wait(&w->done, &w->mu);
	fin = w->fin;
	w->fin = NULL;
	pthread_mutex_unlock(&w->mu);
	if (all) { /* nothing in flight: forget the names */
		rst_map_release(&w->names);
		rst_map_init(&w->names);
	}
	for (; fin != NULL; fin = next) { /* oldest first */
		next = fin->next;
		fin->next = rev;
		rev = fin;
	}
	for (; rev != NULL; rev = next) {
		next = rev->next;
		pthread_mutex_lock(&w->mu);
		w->unreaped--;
		pthread_mutex_unlock(&w->mu);
		rc2 = finish_job(r, rev);
		if (rc == NSR_OK)
			rc = rc2;
	}
	return rc;
}

/* rst_work_named - is a job for saved path p queued or unreported since
 * the last full drain? */
int rst_work_named(const struct nsr_restore *r, const char *p)
{
	return r->work != NULL && rst_map_get(&r->work->names, p) != NULL;
}

/* rst_work_busy - are jobs queued or unreported? */
int rst_work_busy(const struct nsr_restore *r)
{
	struct rst_work *w = r->work;
	size_t n;

	if (w == NULL)
		return 0;
	pthread_mutex_lock(&w->mu);
	n = w->unreaped;
	pthread_mutex_unlock(&w->mu);
	return n > 0;
}
