/*
 * runcmd.h - run a command with a pipe to its standard input or from its
 * standard output, as save --pipe and recover --pipe do.
 *
 * The command is run with fork and execvp: argv[0] is looked up in PATH,
 * the arguments are passed as they are, and no shell ever sees them.
 * Its standard error is collected by a thread of this module, the last
 * NSR_RUNCMD_STDERR_MAX bytes kept (what came before is counted and
 * dropped), so a command that writes a lot of it never blocks on it.
 *
 * Calling sequence:
 *  1. nsr_runcmd_start(&c, argv, mode, err): the command runs;
 *  2. nsr_runcmd_fd(c): the caller's end of the pipe (the command's
 *     standard output to read, NSR_RUNCMD_READ, or its standard input to
 *     write, NSR_RUNCMD_WRITE); read or write it until done;
 *  3. nsr_runcmd_wait(c, &st): closes the caller's end (a writer's EOF),
 *     waits for the command to exit, and collects its standard error;
 *     nsr_runcmd_describe() says in words how it ended;
 *  4. nsr_runcmd_free(c): if the command was not waited for (an error in
 *     step 2), it is killed (SIGKILL) and reaped first.
 * A command that cannot be run (not found, not executable) is reported by
 * nsr_runcmd_start itself, with the system's reason.  SIGPIPE is the
 * caller's business: a writer should ignore it to see EPIPE instead.
 */
#ifndef NSR_RUNCMD_H
#define NSR_RUNCMD_H

#include <stddef.h>
#include <stdint.h>

#define NSR_RUNCMD_STDERR_MAX ((size_t)64 * 1024)

struct nsr_buf;

enum nsr_runcmd_mode {
	NSR_RUNCMD_READ = 1,  /* the caller reads the command's stdout */
	NSR_RUNCMD_WRITE = 2, /* the caller writes the command's stdin */
};

/* How a command ended. */
struct nsr_runcmd_status {
	int exited;   /* 1: exited with code; 0: killed by signal */
	int code;     /* exit status (exited) */
	int signal;   /* the signal that killed it (!exited) */
	const char *err; /* the tail of its stderr, NUL-terminated; valid
			  * until nsr_runcmd_free */
	size_t err_len;
	uint64_t err_dropped; /* stderr bytes before the kept tail */
};

struct nsr_runcmd;

/* nsr_runcmd_start - run argv (argv[0] the command, NULL-terminated)
 * with a pipe in mode.  NSR_OK, NSR_ERR_INVAL (no command or bad mode),
 * NSR_ERR_NOTFOUND (cannot run it: the reason in err), NSR_ERR_SYSTEM
 * (pipe, fork, thread: in err), NSR_ERR_NOMEM. */
int nsr_runcmd_start(struct nsr_runcmd **out, const char *const argv[],
		     int mode, struct nsr_buf *err);
/* nsr_runcmd_fd - the caller's end of the pipe (-1 after wait). */
int nsr_runcmd_fd(const struct nsr_runcmd *c);
/* nsr_runcmd_pid - the command's process id. */
long nsr_runcmd_pid(const struct nsr_runcmd *c);
/* nsr_runcmd_wait - close the caller's end, wait for the command and its
 * stderr.  NSR_OK when it exited with 0, NSR_ERR_IO when it exited
 * otherwise or was killed (st says how), NSR_ERR_SYSTEM if waitpid
 * failed.  Only once. */
int nsr_runcmd_wait(struct nsr_runcmd *c, struct nsr_runcmd_status *st);
/* nsr_runcmd_describe - "command 'name' exited with status 3" or "...
 * was killed by signal 9 (Killed)", then, if it wrote any, ": stderr:
 * <the last at most max bytes of its stderr>" (max 0: none), appended to
 * out. */
void nsr_runcmd_describe(const char *name, const struct nsr_runcmd_status *st,
			 size_t max, struct nsr_buf *out);
/* nsr_runcmd_free - kill and reap a command not waited for; free. */
void nsr_runcmd_free(struct nsr_runcmd *c);

#endif /* NSR_RUNCMD_H */
