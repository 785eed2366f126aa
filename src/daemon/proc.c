/*
 * proc.c - spawning and supervising child processes (mechanism only; the
 * daemons decide which children to run).  Modelled on Postfix's master:
 * a child that dies is restarted, but one that keeps dying right after its
 * start is throttled with a doubling back-off so we never fork-loop.
 */
#include "nsr/compat.h"

#include <signal.h>
#include <sys/prctl.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nsr/daemon.h"
#include "nsr/err.h"
#include "nsr/log.h"

#define QUICK_DEATH_SEC 10
#define MAX_BACKOFF_SEC 60

struct child {
	char *name;
	char **argv;
	pid_t pid;
	time_t started;
	time_t restart_at; /* 0 = no restart pending */
	unsigned backoff;  /* seconds */
};

struct nsr_super {
	struct child *kids;
	size_t n;
	int stopping;
	int errfd; /* children's stderr, -1 = inherit */
};

/* nsr_proc_spawn - fork+exec with a clean signal state. */
int nsr_proc_spawn(char *const argv[], pid_t *pid_out)
{
	return nsr_proc_spawn_flags(argv, 0, -1, pid_out);
}

/* nsr_proc_spawn_flags - nsr_proc_spawn with NSR_SPAWN_* flags; errfd >= 0
 * becomes the child's stderr (stdin and stdout then go to /dev/null). */
int nsr_proc_spawn_flags(char *const argv[], unsigned flags, int errfd,
			 pid_t *pid_out)
{
	pid_t parent = getpid();
	sigset_t none;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return NSR_ERR_SYSTEM;
	if (pid == 0) {
		/* WARNING: forked child of a threaded process: only
		 * async-signal-safe calls until exec. */
		struct sigaction dfl;
		int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGCHLD, SIGPIPE};

		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		for (size_t i = 0; i < NSR_ARRAY_SIZE(sigs); i++)
			sigaction(sigs[i], &dfl, NULL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (errfd >= 0) {
			int nul = open("/dev/null", O_RDWR);

			if (nul >= 0) {
				dup2(nul, 0);
				dup2(nul, 1);
			}
			dup2(errfd, 2);
		}
		if (flags & NSR_SPAWN_PDEATHSIG) {
			prctl(PR_SET_PDEATHSIG, SIGTERM);
			if (getppid() != parent) /* the parent already died */
				_exit(1);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	*pid_out = pid;
	return NSR_OK;
}

/* nsr_exit_status_text - describe a wait status. */
const char *nsr_exit_status_text(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exit %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "status 0x%x", status);
	return buf;
}

/* nsr_proc_stop - TERM, wait up to grace_ms, then KILL. */
int nsr_proc_stop(pid_t pid, int grace_ms)
{
	int status = 0;
	struct timespec ts = {0, 20 * 1000 * 1000};

	if (kill(pid, SIGTERM) != 0)
		return 0;
	for (int waited = 0; waited < grace_ms; waited += 20) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return status;
}

/* nsr_super_new - an empty supervisor (NULL without memory). */
struct nsr_super *nsr_super_new(void)
{
	struct nsr_super *s = calloc(1, sizeof(struct nsr_super));

	if (s)
		s->errfd = -1;
	return s;
}

/* nsr_super_set_stderr - children get fd as stderr (e.g. the log). */
void nsr_super_set_stderr(struct nsr_super *s, int fd)
{
	s->errfd = fd;
}

/* free_argv - free a NULL-terminated copy of an argument vector. */
static void free_argv(char **argv)
{
	for (char **a = argv; a && *a; a++)
		free(*a);
	free(argv);
}

/* nsr_super_add - remember a child to run (argv is copied); the table is
 * unchanged on failure. */
int nsr_super_add(struct nsr_super *s, const char *name, char *const argv[])
{
	struct child *kids, *c;
	size_t n = 0;

	while (argv[n])
		n++;
	kids = realloc(s->kids, (s->n + 1) * sizeof(*s->kids));
	if (!kids)
		return NSR_ERR_NOMEM;
	s->kids = kids;
	c = &s->kids[s->n];
	memset(c, 0, sizeof(*c));
	c->name = strdup(name);
	c->argv = calloc(n + 1, sizeof(char *));
	for (size_t i = 0; c->argv && i < n; i++)
		if (!(c->argv[i] = strdup(argv[i])))
			break;
	if (!c->name || !c->argv || (n && !c->argv[n - 1])) {
		free(c->name);
		free_argv(c->argv);
		return NSR_ERR_NOMEM;
	}
	c->backoff = 1;
	s->n++;
	return NSR_OK;
}

/* start_one - spawn one child now. */
static void start_one(const struct nsr_super *s, struct child *c)
{
	c->restart_at = 0;
	/* Supervised children die with their supervisor, so an abnormal
	 * end of nsrd never leaves orphans holding the root's pid locks. */
	if (nsr_proc_spawn_flags(c->argv, NSR_SPAWN_PDEATHSIG, s->errfd,
				 &c->pid) != NSR_OK) {
		nsr_error("cannot start %s (%s): %s; retrying in %u s", c->name,
			  c->argv[0], strerror(errno), c->backoff);
		c->pid = 0;
		c->restart_at = time(NULL) + c->backoff;
		return;
	}
	c->started = time(NULL);
	nsr_info("started %s, pid %ld", c->name, (long)c->pid);
}

/* nsr_super_start_all - start every child not running. */
void nsr_super_start_all(struct nsr_super *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (!s->kids[i].pid)
			start_one(s, &s->kids[i]);
}

/* nsr_super_exited - handle the death of one of our children. */
int nsr_super_exited(struct nsr_super *s, pid_t pid, int status)
{
	char why[64];

	for (size_t i = 0; i < s->n; i++) {
		struct child *c = &s->kids[i];

		if (c->pid != pid)
			continue;
		c->pid = 0;
		if (s->stopping)
			return 1;
		if (time(NULL) - c->started < QUICK_DEATH_SEC)
			c->backoff = NSR_MIN(c->backoff * 2, MAX_BACKOFF_SEC);
		else
			c->backoff = 1;
		c->restart_at = time(NULL) + c->backoff;
		nsr_warn("%s (pid %ld) died: %s; restarting in %u s", c->name,
			 (long)pid,
			 nsr_exit_status_text(status, why, sizeof(why)),
			 c->backoff);
		return 1;
	}
	return 0;
}

/* nsr_super_tick - restart children whose back-off has passed. */
void nsr_super_tick(struct nsr_super *s)
{
	time_t now = time(NULL);

	if (s->stopping)
		return;
	for (size_t i = 0; i < s->n; i++) {
		struct child *c = &s->kids[i];

		if (!c->pid && c->restart_at && now >= c->restart_at)
			start_one(s, c);
	}
}

/* nsr_super_stop_all - stop every child, newest first. */
void nsr_super_stop_all(struct nsr_super *s, int grace_ms)
{
	char why[64];

	s->stopping = 1;
	for (size_t i = s->n; i-- > 0;) {
		struct child *c = &s->kids[i];
		int status;

		if (!c->pid)
			continue;
		status = nsr_proc_stop(c->pid, grace_ms);
		nsr_info("stopped %s (pid %ld): %s", c->name, (long)c->pid,
			 nsr_exit_status_text(status, why, sizeof(why)));
		c->pid = 0;
	}
}

/* nsr_super_free - free the table (children must be stopped). */
void nsr_super_free(struct nsr_super *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		free_argv(s->kids[i].argv);
		free(s->kids[i].name);
	}
	free(s->kids);
	free(s);
}
