/*
 * forkserver.c - a program started once that makes copies of itself on
 * request (nsr/forkserver.h has the protocol and the invariants).  Used
 * by nsrsnmd for its data movers, whose start is mostly exec and the
 * dynamic loader's relocations (tests/bench/admission/RESULTS.md).
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nsr/clock.h"
#include "nsr/daemon.h"
#include "nsr/err.h"
#include "nsr/forkserver.h"

#define ROOM 8192		/* bytes of command line for the copies */
#define REPARENT_WAIT_MS 1000	/* invariant 2's wait, at most */

/* The copy's arguments: reachable from here while it runs. */
static char **g_child_argv;

/* nsr_forkserver_pack - see forkserver.h. */
size_t nsr_forkserver_pack(char *const argv[], char *buf, size_t cap)
{
	size_t len = 0, n = 0;

	for (; argv[n]; n++) {
		size_t l = strlen(argv[n]) + 1;

		if (n + 1 >= NSR_FORKSERVER_ARGS_MAX || l > cap - len)
			return 0;
		memcpy(buf + len, argv[n], l);
		len += l;
	}
	return n && argv[0][0] ? len : 0;
}

/* nsr_forkserver_unpack - see forkserver.h. */
int nsr_forkserver_unpack(char *buf, size_t len, char **argv, size_t max)
{
	size_t n = 0, i = 0;

	if (len == 0 || buf[len - 1] != '\0' || buf[0] == '\0')
		return -1;
	while (i < len) {
		if (n + 1 >= max || n + 1 >= NSR_FORKSERVER_ARGS_MAX)
			return -1;
		argv[n++] = buf + i;
		i += strlen(buf + i) + 1;
	}
	argv[n] = NULL;
	return (int)n;
}

/* nsr_forkserver_start - see forkserver.h. */
int nsr_forkserver_start(struct nsr_forkserver *fs, const char *exe,
			 const char *flag)
{
	char fdstr[16], *room, *argv[5];
	int sv[2], rc = NSR_ERR_SYSTEM, e;

	fs->pid = 0;
	fs->fd = -1;
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
		return NSR_ERR_SYSTEM;
	room = malloc(ROOM + 1);
	if (!room) {
		errno = ENOMEM;
		goto out;
	}
	memset(room, ' ', ROOM);
	room[ROOM] = '\0';
	snprintf(fdstr, sizeof(fdstr), "%d", sv[1]);
	argv[0] = (char *)exe;
	argv[1] = (char *)flag;
	argv[2] = fdstr;
	argv[3] = room;
	argv[4] = NULL;
	/* Only the server's end may cross its exec. */
	if (fcntl(sv[1], F_SETFD, 0) == 0 &&
	    nsr_proc_spawn(argv, &fs->pid) == NSR_OK) {
		fs->fd = sv[0];
		sv[0] = -1;
		rc = NSR_OK;
	}
out:
	e = errno;
	free(room);
	if (sv[0] >= 0)
		close(sv[0]);
	close(sv[1]);
	errno = e;
	return rc;
}

/* lost - the server is gone or useless: close our end; a server that
 * hangs (alive) is killed, one that exited is left to the caller's
 * reaping (its pid may already be reaped and reused). */
static void lost(struct nsr_forkserver *fs, int hung)
{
	int e = errno;

	if (hung && fs->pid > 0)
		kill(fs->pid, SIGKILL);
	close(fs->fd);
	fs->fd = -1;
	fs->pid = 0;
	errno = e;
}

/* nsr_forkserver_forget - see forkserver.h. */
void nsr_forkserver_forget(struct nsr_forkserver *fs)
{
	if (fs->fd >= 0)
		lost(fs, 0);
	fs->pid = 0;
}

/* nsr_forkserver_spawn - see forkserver.h. */
int nsr_forkserver_spawn(struct nsr_forkserver *fs, char *const argv[],
			 int keep_fd, int timeout_ms, pid_t *pid)
{
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} c;
	struct iovec iov;
	struct msghdr mh;
	struct cmsghdr *cm;
	long long end = nsr_clock_mono_ms() + timeout_ms;
	int32_t ans;
	size_t len;
	ssize_t n;
	char *buf;

	*pid = 0;
	if (fs->fd < 0) {
		errno = ESRCH;
		return NSR_ERR_STATE;
	}
	buf = malloc(NSR_FORKSERVER_MSG_MAX);
	if (!buf)
		return NSR_ERR_NOMEM;
	len = nsr_forkserver_pack(argv, buf, NSR_FORKSERVER_MSG_MAX);
	if (!len) {
		free(buf);
		errno = E2BIG;
		return NSR_ERR_INVAL;
	}
	memset(&mh, 0, sizeof(mh));
	memset(&c, 0, sizeof(c));
	iov.iov_base = buf;
	iov.iov_len = len;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = c.b;
	mh.msg_controllen = sizeof(c.b);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &keep_fd, sizeof(int));
	do
		n = sendmsg(fs->fd, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	free(buf);
	if (n != (ssize_t)len) {
		lost(fs, 0);
		return NSR_ERR_SYSTEM;
	}
	for (;;) {
		struct pollfd p = {.fd = fs->fd, .events = POLLIN};
		long long left = end - nsr_clock_mono_ms();
		int pr = left > 0 ? poll(&p, 1, (int)left) : 0;

		if (pr < 0 && errno == EINTR)
			continue;
		if (pr == 0) {
			lost(fs, 1);
			errno = ETIMEDOUT;
			return NSR_ERR_TIMEOUT;
		}
		if (pr < 0) {
			lost(fs, 1);
			return NSR_ERR_SYSTEM;
		}
		n = recv(fs->fd, &ans, sizeof(ans), 0);
		if (n < 0 && errno == EINTR)
			continue;
		break;
	}
	if (n != (ssize_t)sizeof(ans)) {
		lost(fs, 0);
		errno = EPIPE;
		return NSR_ERR_SYSTEM;
	}
	if (ans <= 0) {
		errno = ans < 0 ? -ans : EPROTO;
		return NSR_ERR_AGAIN;
	}
	*pid = (pid_t)ans;
	return NSR_OK;
}

/* nsr_forkserver_stop - see forkserver.h. */
void nsr_forkserver_stop(struct nsr_forkserver *fs, int grace_ms)
{
	if (fs->fd >= 0)
		close(fs->fd); /* invariant 3: it exits by itself */
	fs->fd = -1;
	if (fs->pid > 0)
		nsr_proc_stop(fs->pid, grace_ms);
	fs->pid = 0;
}

/* title - the command line in room[len]: as many whole arguments as fit,
 * each ending in a NUL, the rest zeroed (invariant 4). */
static void title(char *room, size_t len, char *const argv[])
{
	size_t at = 0;

	for (size_t i = 0; argv[i]; i++) {
		size_t l = strlen(argv[i]) + 1;

		if (l > len - at)
			break;
		memmove(room + at, argv[i], l);
		at += l;
	}
	memset(room + at, 0, len - at);
}

/* reply - the answer to a request: a pid or -errno. */
static void reply(int fd, int32_t ans)
{
	ssize_t n;

	do
		n = send(fd, &ans, sizeof(ans), MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
}

/* child - in the new process: wait to be the caller's child (invariant
 * 2), then the request's arguments with "@fd" made keep's number, copied
 * (the server's buffer is on a stack about to unwind). */
static int child(pid_t first, pid_t caller, int keep, char **av, int ac,
		 char *room, size_t roomlen, int *nargc, char ***nargv)
{
	char fdstr[16];
	int pfd = (int)syscall(SYS_pidfd_open, first, 0);

	/* The first copy's pidfd polls readable once it has exited, after
	 * its children went to the caller; without pidfds, 1 ms naps. */
	if (pfd >= 0) {
		struct pollfd p = {.fd = pfd, .events = POLLIN};

		while (poll(&p, 1, REPARENT_WAIT_MS) < 0 && errno == EINTR)
			;
		close(pfd);
	}
	for (int i = 0; getppid() == first && i < REPARENT_WAIT_MS; i++)
		poll(NULL, 0, 1);
	if (getppid() != caller)
		_exit(1); /* the caller is gone, or not a subreaper */
	snprintf(fdstr, sizeof(fdstr), "%d", keep);
	g_child_argv = calloc((size_t)ac + 1, sizeof(char *));
	if (!g_child_argv)
		_exit(1);
	for (int i = 0; i < ac; i++) {
		const char *v = strcmp(av[i], NSR_FORKSERVER_FD_ARG) == 0
					? fdstr
					: av[i];

		g_child_argv[i] = strdup(v);
		if (!g_child_argv[i])
			_exit(1);
	}
	title(room, roomlen, g_child_argv);
	*nargc = ac;
	*nargv = g_child_argv;
	return 1;
}

/* room_of - the bytes argv's strings take, when they lie one after the
 * other (as the kernel puts them); else only argv[0]'s. */
static size_t room_of(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (argv[i] != argv[i - 1] + strlen(argv[i - 1]) + 1)
			return strlen(argv[0]) + 1;
	return (size_t)(argv[argc - 1] + strlen(argv[argc - 1]) + 1 -
			argv[0]);
}

/* take_fd - the one descriptor a request passed, or -1 (any others are
 * closed). */
static int take_fd(struct msghdr *mh)
{
	int keep = -1;

	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm;
	     cm = CMSG_NXTHDR(mh, cm)) {
		size_t nfd;

		if (cm->cmsg_level != SOL_SOCKET ||
		    cm->cmsg_type != SCM_RIGHTS)
			continue;
		nfd = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < nfd; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int),
			       sizeof(int));
			if (keep < 0)
				keep = fd;
			else
				close(fd);
		}
	}
	return keep;
}

/* nsr_forkserver_serve - see forkserver.h. */
int nsr_forkserver_serve(int argc, char **argv, int *nargc, char ***nargv)
{
	static char buf[NSR_FORKSERVER_MSG_MAX + 1];
	char *av[NSR_FORKSERVER_ARGS_MAX], *end, *room;
	pid_t caller = getppid();
	size_t roomlen;
	long fd;

	if (argc < 3 || (fd = strtol(argv[2], &end, 10)) < 0 || *end ||
	    fd > 65535 || fcntl((int)fd, F_GETFD) < 0) {
		fprintf(stderr, "%s: %s FD: started by nsrsnmd only (FD its "
			"socket)\n", argv[0], argc > 1 ? argv[1] : "-Z");
		return -1;
	}
	room = argv[0];
	roomlen = room_of(argc, argv);
	title(room, roomlen, (char *[]){argv[0], argv[1], argv[2], NULL});
	for (;;) {
		union {
			char b[CMSG_SPACE(4 * sizeof(int))];
			struct cmsghdr align;
		} c;
		struct iovec iov = {buf, sizeof(buf) - 1};
		struct msghdr mh;
		int keep, ac, st, pp[2] = {-1, -1};
		int32_t ans;
		pid_t first, w;
		ssize_t n;

		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = c.b;
		mh.msg_controllen = sizeof(c.b);
		n = recvmsg((int)fd, &mh, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0; /* invariant 3 */
		keep = take_fd(&mh);
		ac = (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || keep < 0
			     ? -1
			     : nsr_forkserver_unpack(buf, (size_t)n, av,
						     NSR_ARRAY_SIZE(av));
		if (ac < 0) {
			reply((int)fd, -EINVAL);
			if (keep >= 0)
				close(keep);
			continue;
		}
		/* The first copy says the second's pid and exits; once it is
		 * reaped, the second is the caller's child: then the answer
		 * (invariant 2). */
		ans = -ECHILD;
		first = pipe2(pp, O_CLOEXEC) == 0 ? fork() : -1;
		if (first == 0) {
			pid_t me = getpid(), g = fork();

			if (g != 0) {
				ans = g > 0 ? (int32_t)g : -errno;
				_exit(write(pp[1], &ans, sizeof(ans)) ==
				      sizeof(ans) ? 0 : 1);
			}
			close(pp[0]);
			close(pp[1]);
			close((int)fd);
			return child(me, caller, keep, av, ac, room, roomlen,
				     nargc, nargv);
		}
		if (first < 0)
			ans = -errno;
		close(keep);
		if (first > 0) {
			close(pp[1]);
			if (read(pp[0], &ans, sizeof(ans)) != sizeof(ans))
				ans = -ECHILD; /* it died before it said */
			close(pp[0]);
			do
				w = waitpid(first, &st, 0);
			while (w < 0 && errno == EINTR);
		} else if (pp[0] >= 0) {
			close(pp[0]);
			close(pp[1]);
		}
		reply((int)fd, ans);
	}
}
