/*
 * forkserver.h - start a program many times without exec'ing it each
 * time.  A fork server is the program itself, started once in a serving
 * mode: it has loaded and relocated its libraries, and each request makes
 * a copy of it (fork) that runs with the request's arguments as if it had
 * just been started.  What it saves is the exec and the dynamic loader:
 * most of a data mover's start (nsrsnmd(8) starts one per 64 sessions).
 *
 * The caller (nsr_forkserver_start) becomes a child subreaper: the server
 * forks twice and the first copy exits, so each new process is the
 * caller's child, reaped by the caller's SIGCHLD handling like one it
 * fork+exec'd itself.  A request is one SOCK_SEQPACKET message (the
 * arguments, each ending in a NUL) with one descriptor passed along
 * (SCM_RIGHTS); an argument that is exactly NSR_FORKSERVER_FD_ARG becomes
 * that descriptor's number in the new process.  The answer is the new
 * process's pid (or -errno).
 *
 * Invariants:
 *  1. The server is single-threaded and does nothing between requests
 *     but wait for one: a copy starts from the state of a fresh start
 *     (no threads, no locks held, no daemon state).
 *  2. A new process is the caller's child when the answer comes (the
 *     server reaps the first copy before it answers) and runs only once
 *     its parent is the caller; if the caller is gone by then, it exits
 *     at once.
 *  3. The server exits when the caller's end of the socket closes, so a
 *     caller that dies leaves no server behind.
 *  4. A new process shows its own arguments in ps (its command line is
 *     rewritten in the room the server was started with).
 */
#ifndef NSR_FORKSERVER_H
#define NSR_FORKSERVER_H

#include <stddef.h>
#include <sys/types.h>

#define NSR_FORKSERVER_FD_ARG "@fd"
#define NSR_FORKSERVER_MSG_MAX 16384 /* bytes of arguments in a request */
#define NSR_FORKSERVER_ARGS_MAX 128  /* arguments in a request */

struct nsr_forkserver {
	pid_t pid; /* 0: not running */
	int fd;	   /* the caller's end, -1 when not running */
};

/* nsr_forkserver_pack - argv (NULL-terminated) into buf[cap] as a
 * request; its length, or 0 when it does not fit or has no argument. */
size_t nsr_forkserver_pack(char *const argv[], char *buf, size_t cap);
/* nsr_forkserver_unpack - a request of len bytes in buf into argv[max]
 * (pointers into buf, NULL-terminated): the argument count, or -1 when
 * it is not a request (empty, not ending in a NUL, more than max - 1 or
 * NSR_FORKSERVER_ARGS_MAX arguments, an empty first argument). */
int nsr_forkserver_unpack(char *buf, size_t len, char **argv, size_t max);

/* nsr_forkserver_start - start exe as a fork server: exe flag FD ROOM,
 * FD the server's end of the socket, ROOM blank space for the command
 * lines of the processes it makes (invariant 4).  The caller becomes a
 * child subreaper.  NSR_OK or NSR_ERR_SYSTEM (errno set).  Forks: call
 * it where the caller's other forks cannot run at the same time (they
 * would inherit the server's end). */
int nsr_forkserver_start(struct nsr_forkserver *fs, const char *exe,
			 const char *flag);
/* nsr_forkserver_spawn - a new process running argv[1..] (argv[0] is
 * the program's name as it will show) with keep_fd passed along: its pid
 * in *pid and NSR_OK.  Errors (errno set): NSR_ERR_TIMEOUT, the server
 * did not answer within timeout_ms (it is killed), and NSR_ERR_SYSTEM,
 * it is gone: both give the server up (fs->fd -1: start it again or
 * fork+exec); NSR_ERR_AGAIN, it could not fork; NSR_ERR_INVAL, argv does
 * not fit a request; NSR_ERR_STATE, no server runs; NSR_ERR_NOMEM. */
int nsr_forkserver_spawn(struct nsr_forkserver *fs, char *const argv[],
			 int keep_fd, int timeout_ms, pid_t *pid);
/* nsr_forkserver_forget - the server exited and the caller reaped it:
 * close the socket and forget its pid (no signal: it may be another
 * process's now). */
void nsr_forkserver_forget(struct nsr_forkserver *fs);
/* nsr_forkserver_stop - close the socket and stop the server (SIGTERM,
 * then SIGKILL after grace_ms); nothing if it is not running. */
void nsr_forkserver_stop(struct nsr_forkserver *fs, int grace_ms);

/* nsr_forkserver_serve - the server's side, called by the program's
 * main() when started with the flag: argv as main got it (argv[2] the
 * socket's descriptor; the room of argv[0..argc-1] is reused for the
 * copies' command lines).  Returns 0 when the caller's end closed, -1 on
 * a bad start (logged to stderr), or 1 in a new process, whose arguments
 * are then in *nargc, *nargv (they stay allocated for its lifetime). */
int nsr_forkserver_serve(int argc, char **argv, int *nargc, char ***nargv);

#endif /* NSR_FORKSERVER_H */
