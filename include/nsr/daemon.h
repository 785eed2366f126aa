/*
 * daemon.h - the skeleton every OpenNSR daemon runs on (Postfix's
 * single_server_main idea): option parsing, root directory, log file, pid
 * lock, listening, locator registration, signal flags, the ppoll loop with
 * a periodic tick, orderly stop.  A daemon's main.c is one call:
 *
 *   int main(int argc, char **argv)
 *   {
 *           return nsr_daemon_main(argc, argv, &my_ops, &my_ctx);
 *   }
 *
 * Calling sequence inside nsr_daemon_main:
 *   1. parse options (-R root, -p port, -a addr, -b, -t, -d, -h, -V, and the
 *      daemon's own via ops->extra_opts/ops->option);
 *   2. -t: call ops->check (if any), report, exit;
 *   3. make <root>/{logs,tmp,res,mm,index}, open <root>/logs/daemon.log,
 *      lock <root>/logs/<name>.pid (a second copy on one root is fatal);
 *      ops->prepare; listen on 127.0.0.1 and every -a address (one
 *      port) and on the local socket (nothing is accepted before step
 *      7); with -u USER (daemons that name their own_dirs): give those
 *      directories to USER, load the TLS certificate, and run as USER
 *      from here on (root no more: initgroups, setgid, setuid);
 *   4. ops->init (open databases; may fail fatally with a reason);
 *   5. register every program with the local nsrexecd locator (not for
 *      nsrexecd itself);
 *   6. ops->started (spawn children); with -b, tell the waiting parent
 *      that we are ready (so "nsrd -b" returns only once nsrd serves);
 *   7. loop: ppoll on the listeners with signals unblocked only inside
 *      ppoll; SIGCHLD -> ops->child_exit per reaped child, SIGHUP ->
 *      ops->reload, SIGTERM/SIGINT -> stop; every tick_ms -> ops->tick;
 *   8. stop: unregister, ops->stop, close connections, remove pid file,
 *      log "stopped", return 0.
 */
#ifndef NSR_DAEMON_H
#define NSR_DAEMON_H

#include <signal.h>
#include <sys/types.h>

#include "nsr/rpc.h"

struct nsr_buf;
struct nsr_daemon;

/* At most this many -a addresses. */
#define NSR_DAEMON_MAX_ADDRS 6

struct nsr_daemon_ops {
	const char *name;	 /* "nsrd" */
	const char *summary;	 /* one line for --help */
	const char
		*extra_opts; /* getopt letters of daemon options, e.g. "s:" */
	const char *extra_usage; /* their --help lines */
	int default_port;	 /* 0 = ephemeral */
	int no_register;	 /* nsrexecd: it is the locator */
	unsigned tick_ms;	 /* 0 = no tick */
	int max_threads; /* RPC workers by default (0: the transport's) */
	/* Freed blocks up to this size stay in malloc's arenas for reuse
	 * (M_MMAP_THRESHOLD; 4 times it may stay free at an arena's top):
	 * 0 for glibc's default, 128 KiB (daemon.c, fix_mmap_threshold). */
	size_t malloc_keep;
	const struct nsr_rpc_prog *progs;
	size_t nprogs;
	/* The directories under the root that hold all this daemon writes
	 * (NULL-terminated): with them it takes -u USER and runs as USER,
	 * its directories given to USER at every start.  NULL: it needs
	 * root (nsrd, nsrexecd, ...) and refuses -u. */
	const char *const *own_dirs;
	/* option - a daemon option; 0 or -1 (message already printed). */
	int (*option)(struct nsr_daemon *d, int opt, const char *arg);
	/* check - -t: validate configuration; 0 ok, -1 bad (logged). */
	int (*check)(struct nsr_daemon *d);
	/* prepare - step 3, still as started (root), before -u gives it up:
	 * work that needs more than the user will have (moving files of an
	 * older layout into own_dirs); 0 or -1 (fatal, logged). */
	int (*prepare)(struct nsr_daemon *d);
	/* init - open state before serving; 0 or -1 (fatal, logged). */
	int (*init)(struct nsr_daemon *d);
	/* started - serving and registered; 0 or -1 (fatal). */
	int (*started)(struct nsr_daemon *d);
	void (*tick)(struct nsr_daemon *d);
	void (*child_exit)(struct nsr_daemon *d, pid_t pid, int status);
	void (*reload)(struct nsr_daemon *d);
	void (*stop)(struct nsr_daemon *d);
};

struct nsr_daemon {
	const struct nsr_daemon_ops *ops;
	void *ctx;		/* the daemon's own state */
	char *root;		/* server root (-R, NSR_ROOT, /nsr) */
	char **addrs;		/* -a, repeatable; 127.0.0.1 is always served */
	int naddrs;
	int port;		/* -p (requested) */
	int bound_port;		/* actual port */
	int local_sockets;	/* local sockets listened on (rpc.h) */
	int background;		/* -b */
	int debug;		/* -d */
	char *user;		/* -u: run as this user (NULL: as started) */
	char *exe_dir;		/* directory of this executable */
	int log_fd;		/* <root>/logs/daemon.log, for children */
	struct nsr_rpc_server *srv;
};

/* nsr_daemon_user_lookup - name is a user of this host other than root
 * (one a daemon may run as, -u): NSR_OK with its ids (uid, gid may be
 * NULL), else NSR_ERR_NOTFOUND or NSR_ERR_INVAL with the reason in words
 * appended to why. */
int nsr_daemon_user_lookup(const char *name, uid_t *uid, gid_t *gid,
			   struct nsr_buf *why);
/* nsr_daemon_user_opt - a daemon option naming the user it starts other
 * daemons as (-U): checked with nsr_daemon_user_lookup, refused unless
 * this process is root, and copied into out[cap]; 0, or -1 with the
 * reason printed on stderr (option() then fails the start). */
int nsr_daemon_user_opt(const struct nsr_daemon *d, int opt, const char *arg,
			char *out, size_t cap);

/* nsr_daemon_main - run the daemon; returns the process exit status. */
int nsr_daemon_main(int argc, char **argv, const struct nsr_daemon_ops *ops,
		    void *ctx);
/* nsr_daemon_path - malloc'ed <root>/<rel> (NULL without memory). */
char *nsr_daemon_path(const struct nsr_daemon *d, const char *rel);
/* nsr_daemon_log_fd - a descriptor open on <root>/logs/daemon.log for
 * children's stderr (owned by the skeleton; -1 before init). */
int nsr_daemon_log_fd(const struct nsr_daemon *d);
/* nsr_daemon_request_stop - ask the loop to stop (thread-safe). */
void nsr_daemon_request_stop(void);
/* nsr_daemon_listen - listen on 127.0.0.1 and every -a address at port
 * (0 = one free port for all of them); *bound gets the port.  NSR_OK or
 * the first failure, with "address:port: reason" appended to err. */
int nsr_daemon_listen(struct nsr_daemon *d, int port, int *bound,
		      struct nsr_buf *err);
/* nsr_daemon_addr_argv - append "-a ADDR" for every -a address to argv
 * (which has room for 2 * d->naddrs more entries after *n), so children
 * serve the same addresses; the strings are borrowed from d. */
void nsr_daemon_addr_argv(const struct nsr_daemon *d, char **argv, int *n);
/* nsr_daemon_addr_text - the listening addresses for a log line
 * ("127.0.0.1, 198.18.0.1"), static storage. */
const char *nsr_daemon_addr_text(const struct nsr_daemon *d);

/*
 * Child processes (proc.c).  Calling sequence for a supervisor:
 *   1. nsr_super_add(s, name, argv) for each child (argv copied);
 *   2. nsr_super_start_all(s) once serving;
 *   3. on SIGCHLD: for each reaped pid call nsr_super_exited(s, pid, status):
 *      a child that died is restarted after a back-off (1 s, doubling up to
 *      60 s while it keeps dying within 10 s of its start), logged once per
 *      death; the restart happens in nsr_super_tick(s), called every tick;
 *   4. nsr_super_stop_all(s, grace_ms) at shutdown: SIGTERM, wait, SIGKILL.
 */
struct nsr_super;

/* nsr_super_new - an empty supervisor (NULL without memory). */
struct nsr_super *nsr_super_new(void);
/* nsr_super_add - remember a child (argv copied); NSR_ERR_NOMEM. */
int nsr_super_add(struct nsr_super *s, const char *name, char *const argv[]);
/* nsr_super_set_stderr - give children fd as stderr (stdin/stdout become
 * /dev/null); nsr_daemon_log_fd() is the usual choice. */
void nsr_super_set_stderr(struct nsr_super *s, int fd);
void nsr_super_start_all(struct nsr_super *s);
/* nsr_super_exited - 1 if pid was one of ours (then handled), else 0. */
int nsr_super_exited(struct nsr_super *s, pid_t pid, int status);
void nsr_super_tick(struct nsr_super *s);
void nsr_super_stop_all(struct nsr_super *s, int grace_ms);
void nsr_super_free(struct nsr_super *s);

/* nsr_proc_spawn - fork+exec argv (argv[0] a path) with default signal
 * mask and handlers; returns NSR_OK and the pid, or NSR_ERR_SYSTEM. */
int nsr_proc_spawn(char *const argv[], pid_t *pid);
/* nsr_proc_spawn_flags - the same with flags: NSR_SPAWN_PDEATHSIG makes
 * the child get SIGTERM when the *thread* that spawned it ends (Linux
 * prctl semantics), so use it only from a daemon's main thread.
 * nsr_super_* use it for every supervised child. */
#define NSR_SPAWN_PDEATHSIG 0x1
int nsr_proc_spawn_flags(char *const argv[], unsigned flags, int errfd,
			 pid_t *pid);
/* nsr_proc_stop - SIGTERM pid, wait up to grace_ms for it to exit
 * (it must be our child), then SIGKILL; returns its wait status. */
int nsr_proc_stop(pid_t pid, int grace_ms);
/* nsr_exit_status_text - "exit 3", "signal 9 (Killed)" into buf. */
const char *nsr_exit_status_text(int status, char *buf, size_t len);

#endif /* NSR_DAEMON_H */
