/*
 * runcmd.c - a command behind a pipe (runcmd.h): fork and execvp, never a
 * shell; a thread keeps the tail of its standard error; wait says how it
 * ended.  Whether exec worked is learnt through a close-on-exec pipe, so
 * a command that does not exist is an error of start, not an exit
 * status of 127.
 *
 * Invariants:
 *  1. pid > 0 from a successful start until the command is reaped
 *     (wait, or free's kill), then 0;
 *  2. fd is the caller's end of the data pipe until wait closes it (-1);
 *  3. while the stderr thread runs (reader) only it touches tail, tlen
 *     and dropped; wait reads them after joining it.
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/runcmd.h"

struct nsr_runcmd {
	pid_t pid;
	int fd;	    /* caller's end of the data pipe */
	int errfd;  /* read end of the command's stderr */
	pthread_t reader;
	int reader_running;
	char *tail; /* 2 * NSR_RUNCMD_STDERR_MAX + 1 bytes */
	size_t tlen;
	uint64_t dropped;
};

/* err_main - the stderr thread: read until EOF, keep the last
 * NSR_RUNCMD_STDERR_MAX bytes. */
static void *err_main(void *arg)
{
	struct nsr_runcmd *c = arg;
	const size_t max = NSR_RUNCMD_STDERR_MAX;

	for (;;) {
		ssize_t n = read(c->errfd, c->tail + c->tlen, max);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		c->tlen += (size_t)n;
		if (c->tlen > max) { /* keep the last max bytes */
			size_t cut = c->tlen - max;

			memmove(c->tail, c->tail + cut, max);
			c->tlen = max;
			c->dropped += cut;
		}
	}
	return NULL;
}

/* child - in the forked child: wire the pipes and exec; on failure
 * report errno through report and exit 127.  Async-signal-safe calls
 * only (the parent may have threads). */
static void child(const char *const argv[], int mode, int data[2], int errp[2],
		  int report)
{
	int want = mode == NSR_RUNCMD_READ ? 1 : 0;
	int mine = mode == NSR_RUNCMD_READ ? data[1] : data[0];
	sigset_t none;
	int e;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (dup2(mine, want) < 0 || dup2(errp[1], 2) < 0)
		goto fail;
	execvp(argv[0], (char *const *)argv); /* it changes nothing */
fail:
	e = errno;
	(void)!write(report, &e, sizeof(e));
	_exit(127);
}

/* reap - wait for pid, retrying on EINTR; -1 on failure. */
static int reap(pid_t pid, int *status)
{
	pid_t r;

	do
		r = waitpid(pid, status, 0);
	while (r < 0 && errno == EINTR);
	return r == pid ? 0 : -1;
}

/* exec_result - 0 if the child exec'ed (report closed without data), else
 * the errno it sent. */
static int exec_result(int report)
{
	int e = 0;
	ssize_t n;

	do
		n = read(report, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(e) ? (e ? e : EIO) : 0;
}

/* close_pair - close both ends of a pipe that are still open. */
static void close_pair(int p[2])
{
	for (int i = 0; i < 2; i++)
		if (p[i] >= 0)
			close(p[i]);
	p[0] = p[1] = -1;
}

/* nsr_runcmd_start - run the command behind a pipe. */
int nsr_runcmd_start(struct nsr_runcmd **out, const char *const argv[],
		     int mode, struct nsr_buf *err)
{
	int data[2] = {-1, -1}, errp[2] = {-1, -1}, rep[2] = {-1, -1};
	struct nsr_runcmd *c;
	int e, st;

	*out = NULL;
	if (argv == NULL || argv[0] == NULL || argv[0][0] == '\0' ||
	    (mode != NSR_RUNCMD_READ && mode != NSR_RUNCMD_WRITE))
		return NSR_ERR_INVAL;
	c = calloc(1, sizeof(*c));
	if (c == NULL || (c->tail = malloc(2 * NSR_RUNCMD_STDERR_MAX + 1))
				 == NULL) {
		free(c);
		return NSR_ERR_NOMEM;
	}
	c->fd = c->errfd = -1;
	if (pipe2(data, O_CLOEXEC) != 0 || pipe2(errp, O_CLOEXEC) != 0 ||
	    pipe2(rep, O_CLOEXEC) != 0) {
		nsr_buf_addf(err, "cannot make a pipe: %s", strerror(errno));
		goto fail;
	}
	c->pid = fork();
	if (c->pid < 0) {
		c->pid = 0;
		nsr_buf_addf(err, "cannot start %s: fork: %s", argv[0],
			     strerror(errno));
		goto fail;
	}
	if (c->pid == 0)
		child(argv, mode, data, errp, rep[1]);
	close(rep[1]);
	rep[1] = -1;
	e = exec_result(rep[0]);
	if (e != 0) {
		(void)reap(c->pid, &st);
		c->pid = 0;
		nsr_buf_addf(err, "cannot run %s: %s", argv[0], strerror(e));
		close_pair(rep);
		close_pair(data);
		close_pair(errp);
		nsr_runcmd_free(c);
		return NSR_ERR_NOTFOUND;
	}
	close_pair(rep);
	if (mode == NSR_RUNCMD_READ) {
		c->fd = data[0];
		close(data[1]);
	} else {
		c->fd = data[1];
		close(data[0]);
	}
	data[0] = data[1] = -1;
	c->errfd = errp[0];
	close(errp[1]);
	errp[0] = errp[1] = -1;
	e = pthread_create(&c->reader, NULL, err_main, c);
	if (e != 0) {
		nsr_buf_addf(err, "cannot start a thread: %s", strerror(e));
		nsr_runcmd_free(c);
		return NSR_ERR_SYSTEM;
	}
	c->reader_running = 1;
	*out = c;
	return NSR_OK;
fail:
	close_pair(rep);
	close_pair(data);
	close_pair(errp);
	nsr_runcmd_free(c);
	return NSR_ERR_SYSTEM;
}

/* nsr_runcmd_fd - the caller's end of the pipe. */
int nsr_runcmd_fd(const struct nsr_runcmd *c)
{
	return c->fd;
}

/* nsr_runcmd_pid - the command's process id. */
long nsr_runcmd_pid(const struct nsr_runcmd *c)
{
	return (long)c->pid;
}

/* finish_reader - join the stderr thread and close its pipe. */
static void finish_reader(struct nsr_runcmd *c)
{
	if (c->reader_running) {
		pthread_join(c->reader, NULL);
		c->reader_running = 0;
	}
	if (c->errfd >= 0)
		close(c->errfd);
	c->errfd = -1;
	c->tail[c->tlen] = '\0';
}

/* nsr_runcmd_wait - close our end, reap, collect stderr. */
int nsr_runcmd_wait(struct nsr_runcmd *c, struct nsr_runcmd_status *st)
{
	int status = 0, rc;

	memset(st, 0, sizeof(*st));
	if (c->pid == 0)
		return NSR_ERR_STATE;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	rc = reap(c->pid, &status);
	c->pid = 0;
	/* the stderr pipe ends when the command (and what it started
	 * holding the pipe) is gone */
	finish_reader(c);
	st->err = c->tail;
	st->err_len = c->tlen;
	st->err_dropped = c->dropped;
	if (rc != 0)
		return NSR_ERR_SYSTEM;
	st->exited = WIFEXITED(status);
	st->code = st->exited ? WEXITSTATUS(status) : 0;
	st->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	return st->exited && st->code == 0 ? NSR_OK : NSR_ERR_IO;
}

/* nsr_runcmd_describe - how the command ended, in words, with the tail
 * of what it wrote to stderr. */
void nsr_runcmd_describe(const char *name, const struct nsr_runcmd_status *st,
			 size_t max, struct nsr_buf *out)
{
	size_t n = st->err_len;
	const char *e = st->err;

	if (st->exited)
		nsr_buf_addf(out, "command %s exited with status %d", name,
			     st->code);
	else
		nsr_buf_addf(out, "command %s was killed by signal %d (%s)",
			     name, st->signal, strsignal(st->signal));
	while (n > 0 && (e[n - 1] == '\n' || e[n - 1] == '\r'))
		n--;
	if (max == 0 || n == 0)
		return;
	if (n > max || st->err_dropped) {
		nsr_buf_addstr(out, "; its stderr ended with: ...");
		e += n > max ? n - max : 0;
		n = NSR_MIN(n, max);
	} else {
		nsr_buf_addstr(out, "; its stderr: ");
	}
	nsr_buf_add(out, e, n);
}

/* nsr_runcmd_free - kill and reap a command still running; free. */
void nsr_runcmd_free(struct nsr_runcmd *c)
{
	int status;

	if (c == NULL)
		return;
	if (c->fd >= 0)
		close(c->fd);
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		(void)reap(c->pid, &status);
	}
	if (c->tail != NULL)
		finish_reader(c);
	free(c->tail);
	free(c);
}
