/*
 * spawn.c - the mechanism of starting one nsrmmd: a pipe whose write end
 * the mover gets (-r fd), the mover forked from the mover template
 * (nsrmmd -Z, nsr/forkserver.h; started with nsrsnmd, and again when
 * a mover is needed after it ended) or, when that
 * fails or NSR_MOVER_TEMPLATE=0, fork+exec'd through nsr_proc_spawn, and
 * a bounded wait for the line with the port the mover serves on.
 * Reaping is not done here: the daemon skeleton reaps every child on
 * SIGCHLD (movers forked from the template are our children too: we are
 * a subreaper) and calls child_exit (main.c).
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/clock.h"
#include "nsr/daemon.h"
#include "nsr/err.h"
#include "nsr/log.h"

#include "snmd.h"

/* read_port - wait for "PORT\n" on fd; NSR_OK, _TIMEOUT or _EOF. */
static int read_port(int fd, int timeout_ms, int *port)
{
	long long end = nsr_clock_mono_ms() + timeout_ms;
	char buf[32];
	size_t len = 0;

	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		long long left = end - nsr_clock_mono_ms();
		ssize_t n;
		int pr;

		if (left <= 0)
			return NSR_ERR_TIMEOUT;
		pr = poll(&p, 1, (int)left);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			return pr == 0 ? NSR_ERR_TIMEOUT : NSR_ERR_SYSTEM;
		n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		if (memchr(buf, '\n', len) || len == sizeof(buf) - 1)
			break;
	}
	buf[len] = '\0';
	*port = atoi(buf);
	return *port > 0 && *port < 65536 ? NSR_OK : NSR_ERR_EOF;
}

#define TEMPLATE_ANSWER_MS 2000 /* a fork takes a millisecond */
#define TEMPLATE_RETRY_MS 60000	/* after a failed start */

/* snmd_template_up - see snmd.h. */
int snmd_template_up(struct snmd_template *t, const char *exe)
{
	long long now = nsr_clock_mono_ms();

	if (t->off)
		return NSR_ERR_STATE;
	if (t->fs.pid > 0 && t->fs.pid == atomic_load(&t->reaped)) {
		/* It exited and was reaped: its pid is not ours now. */
		nsr_forkserver_forget(&t->fs);
		atomic_store(&t->running, 0);
	}
	if (t->fs.fd < 0) {
		if (now < t->retry_ms)
			return NSR_ERR_AGAIN;
		if (nsr_forkserver_start(&t->fs, exe, "-Z") != NSR_OK) {
			t->retry_ms = now + TEMPLATE_RETRY_MS;
			nsr_warn("cannot start the mover template (%s -Z): %s; "
				 "movers are started directly for %d s", exe,
				 strerror(errno), TEMPLATE_RETRY_MS / 1000);
			return NSR_ERR_SYSTEM;
		}
		atomic_store(&t->running, t->fs.pid);
		nsr_info("started the mover template (pid %ld): new movers "
			 "are forked from it", (long)t->fs.pid);
	}
	return NSR_OK;
}

/* via_template - the mover (argv, argv[rfd_at] its -r value) forked from
 * the template, started first if it is not running: NSR_OK with *pid,
 * else an error (logged) after which the caller fork+execs it. */
static int via_template(struct snmd_template *t, const char *exe,
			char **argv, int rfd_at, int wfd, pid_t *pid)
{
	char *saved = argv[rfd_at];
	int rc = snmd_template_up(t, exe);

	if (rc != NSR_OK)
		return rc;
	argv[rfd_at] = (char *)NSR_FORKSERVER_FD_ARG;
	rc = nsr_forkserver_spawn(&t->fs, argv, wfd, TEMPLATE_ANSWER_MS, pid);
	argv[rfd_at] = saved;
	if (t->fs.fd < 0)
		atomic_store(&t->running, 0);
	if (rc != NSR_OK)
		nsr_warn("the mover template could not fork a mover: %s; this "
			 "one is started directly%s", strerror(errno),
			 t->fs.fd < 0 ? ", the next from a new template" : "");
	return rc;
}

/* snmd_spawn - start one mover and learn its port. */
int snmd_spawn(const struct snmd_spawn_args *a, int timeout_ms, pid_t *pid,
	       int *port, struct nsr_buf *why)
{
	const struct snmd_slot *s = a->slot;
	char fdstr[16], numstr[16], capstr[32], segstr[32], idlestr[16];
	char *argv[32 + 2 * NSR_DAEMON_MAX_ADDRS];
	int fds[2] = {-1, -1}, n = 0, rc, rfd_at;

	*pid = 0;
	*port = 0;
	if (a->forked)
		*a->forked = 0;
	/* Close-on-exec until the write end goes to its mover alone (a
	 * template started meanwhile must not inherit it). */
	if (pipe2(fds, O_CLOEXEC) != 0) {
		nsr_buf_addf(why, "cannot make a pipe: %s", strerror(errno));
		rc = NSR_ERR_SYSTEM;
		goto out;
	}
	snprintf(fdstr, sizeof(fdstr), "%d", fds[1]);
	snprintf(numstr, sizeof(numstr), "%d", a->num);
	argv[n++] = (char *)a->exe;
	argv[n++] = (char *)"-R";
	argv[n++] = (char *)a->root;
	argv[n++] = (char *)"-T";
	argv[n++] = s->media_type;
	argv[n++] = (char *)"-D";
	argv[n++] = s->path;
	argv[n++] = (char *)"-N";
	argv[n++] = s->device;
	argv[n++] = (char *)"-n";
	argv[n++] = numstr;
	argv[n++] = (char *)"-r";
	rfd_at = n;
	argv[n++] = fdstr;
	if (*s->server) {
		argv[n++] = (char *)"-s";
		argv[n++] = s->server;
	}
	if (s->capacity) {
		snprintf(capstr, sizeof(capstr), "%llu",
			 (unsigned long long)s->capacity);
		argv[n++] = (char *)"-C";
		argv[n++] = capstr;
	}
	if (s->segment_size) {
		snprintf(segstr, sizeof(segstr), "%llu",
			 (unsigned long long)s->segment_size);
		argv[n++] = (char *)"-G";
		argv[n++] = segstr;
	}
	if (a->user && *a->user) {
		argv[n++] = (char *)"-u";
		argv[n++] = (char *)a->user;
	}
	if (a->idle_sec) {
		snprintf(idlestr, sizeof(idlestr), "%u", a->idle_sec);
		argv[n++] = (char *)"-i";
		argv[n++] = idlestr;
	}
	if (a->d)
		nsr_daemon_addr_argv(a->d, argv, &n);
	argv[n] = NULL;
	if (a->tmpl &&
	    via_template(a->tmpl, a->exe, argv, rfd_at, fds[1], pid) ==
		    NSR_OK) {
		if (a->forked)
			*a->forked = 1;
	} else if (fcntl(fds[1], F_SETFD, 0) != 0 ||
		   nsr_proc_spawn(argv, pid) != NSR_OK) {
		nsr_buf_addf(why, "cannot start %s: %s", a->exe,
			     strerror(errno));
		rc = NSR_ERR_SYSTEM;
		goto out;
	}
	close(fds[1]);
	fds[1] = -1;
	rc = read_port(fds[0], timeout_ms, port);
	if (rc == NSR_ERR_TIMEOUT) {
		nsr_buf_addf(why, "nsrmmd (pid %ld) for device %s did not "
			     "get ready within %d s; it was stopped",
			     (long)*pid, s->device, timeout_ms / 1000);
		kill(*pid, SIGKILL);
	} else if (rc != NSR_OK) {
		nsr_buf_addf(why, "nsrmmd (pid %ld) for device %s exited "
			     "before it was ready; see daemon.log for its "
			     "reason", (long)*pid, s->device);
		kill(*pid, SIGKILL);
	}
out:
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	return rc;
}
