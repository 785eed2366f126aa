/*
 * daemon.c - the shared daemon skeleton (see daemon.h for the calling
 * sequence).  Signal handlers only set flags; the loop blocks the signals
 * and unblocks them only inside ppoll(), as sshd does, so a signal cannot
 * slip in between the check and the sleep.
 *
 * The skeleton is every daemon's main(): a failure during start-up (steps
 * 1-6, out of memory included) ends the process with nsr_fatal and a
 * message that says what to do; after start-up nothing here exits.
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <grp.h>
#include <libgen.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/clock.h"
#include "nsr/daemon.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/host.h"
#include "nsr/log.h"
#include "nsr/tls.h"

static volatile sig_atomic_t got_term, got_hup, got_chld;
static int wake_pipe[2] = {-1, -1};

/* on_signal - WARNING: signal handler: set a flag, nothing else. */
static void on_signal(int sig)
{
	int saved = errno;

	if (sig == SIGTERM || sig == SIGINT)
		got_term = 1;
	else if (sig == SIGHUP)
		got_hup = 1;
	else if (sig == SIGCHLD)
		got_chld = 1;
	errno = saved;
}

/* nsr_daemon_request_stop - ask the loop to stop from any thread. */
void nsr_daemon_request_stop(void)
{
	got_term = 1;
	if (wake_pipe[1] >= 0 && write(wake_pipe[1], "x", 1) < 0)
		errno = 0;
}

/* nsr_daemon_log_fd - descriptor on daemon.log for children's stderr. */
int nsr_daemon_log_fd(const struct nsr_daemon *d)
{
	return d->log_fd;
}

/* nsr_daemon_path - malloc'ed <root>/<rel>; NULL without memory. */
char *nsr_daemon_path(const struct nsr_daemon *d, const char *rel)
{
	return nsr_path_join(d->root, rel);
}

/* start_path - <root>/<rel> during start-up, where no memory is fatal. */
static char *start_path(const struct nsr_daemon *d, const char *rel)
{
	char *p = nsr_daemon_path(d, rel);

	if (!p)
		nsr_fatal("out of memory at start-up");
	return p;
}

/* free_addrs - release the -a list. */
static void free_addrs(struct nsr_daemon *d)
{
	for (int i = 0; i < d->naddrs; i++)
		free(d->addrs[i]);
	free(d->addrs);
	d->addrs = NULL;
	d->naddrs = 0;
}

/* is_wildcard - 1 for an any-address ("0.0.0.0", "::"), which already
 * covers loopback: listening on 127.0.0.1 too would collide with it. */
static int is_wildcard(const char *a)
{
	return strcmp(a, "0.0.0.0") == 0 || strcmp(a, "::") == 0 ||
	       strcmp(a, "*") == 0;
}

/* listen_local - the same port's local socket, for clients on this
 * host (nsr/rpc.h, "Same-host connections"); without it they use TCP
 * with TLS, which works too: say why, and go on. */
static void listen_local(struct nsr_daemon *d, int port)
{
	struct nsr_buf why;

	nsr_buf_init(&why, 0);
	if (!nsr_rpc_local_enabled())
		nsr_buf_addstr(&why, "NSR_LOCAL_SOCKETS=0");
	else if (nsr_rpc_server_listen_local(d->srv, d->root, port, &why) ==
		 NSR_OK)
		d->local_sockets++;
	if (why.len)
		nsr_info("no local socket for port %d (%s): clients on this "
			 "host reach it over TCP with TLS",
			 port, why.data);
	nsr_buf_release(&why);
}

/* nsr_daemon_listen - 127.0.0.1 and every -a address, on one port, and
 * its local socket. */
int nsr_daemon_listen(struct nsr_daemon *d, int port, int *bound,
		      struct nsr_buf *err)
{
	int loopback = 1, rc;

	for (int i = 0; i < d->naddrs; i++)
		if (is_wildcard(d->addrs[i]) ||
		    strcmp(d->addrs[i], "127.0.0.1") == 0)
			loopback = 0;
	*bound = port;
	if (loopback) {
		rc = nsr_rpc_server_listen(d->srv, "127.0.0.1", port, bound);
		if (rc != NSR_OK) {
			nsr_buf_addf(err, "127.0.0.1:%d: %s", port,
				     strerror(errno));
			return rc;
		}
	}
	for (int i = 0; i < d->naddrs; i++) {
		const char *a = strcmp(d->addrs[i], "*") == 0 ? "::"
							       : d->addrs[i];
		int p = *bound;

		rc = nsr_rpc_server_listen(d->srv, a, p, bound);
		if (rc != NSR_OK) {
			nsr_buf_addf(err, "%s:%d: %s", a, p,
				     rc == NSR_ERR_LIMIT ? "too many addresses"
							 : strerror(errno));
			return rc;
		}
	}
	listen_local(d, *bound);
	return NSR_OK;
}

/* nsr_daemon_addr_argv - "-a ADDR" for each -a address. */
void nsr_daemon_addr_argv(const struct nsr_daemon *d, char **argv, int *n)
{
	for (int i = 0; i < d->naddrs; i++) {
		argv[(*n)++] = (char *)"-a";
		argv[(*n)++] = d->addrs[i];
	}
}

/* nsr_daemon_addr_text - "127.0.0.1, a, b" for log lines. */
const char *nsr_daemon_addr_text(const struct nsr_daemon *d)
{
	static char text[1024];
	size_t len;
	int loopback = 1;

	for (int i = 0; i < d->naddrs; i++)
		if (is_wildcard(d->addrs[i]) ||
		    strcmp(d->addrs[i], "127.0.0.1") == 0)
			loopback = 0;
	snprintf(text, sizeof(text), "%s", loopback ? "127.0.0.1" : "");
	for (int i = 0; i < d->naddrs; i++) {
		len = strlen(text);
		snprintf(text + len, sizeof(text) - len, "%s%s",
			 len ? ", " : "", d->addrs[i]);
	}
	return text;
}

/* usage - print --help text. */
static void usage(const struct nsr_daemon_ops *ops, FILE *f)
{
	fprintf(f,
		"usage: %s [-bdt] [-R root] [-p port] [-a address]%s%s\n"
		"%s\n"
		"  -R root     server root directory (env NSR_ROOT, default "
		"%s)\n"
		"  -p port     TCP port to serve on (default %s)\n"
		"  -a address  also listen on address (repeatable; 127.0.0.1 "
		"always)\n"
		"  -b          run in the background once ready\n"
		"  -d          debug logging, log to stderr too\n"
		"  -t          check the configuration and exit\n"
		"%s%s"
		"  -h, --help  show this help;  -V, --version  show the "
		"version\n",
		ops->name,
		ops->extra_opts && *ops->extra_opts ? " [options]" : "", "",
		ops->summary, NSR_DEFAULT_ROOT,
		ops->default_port ? "fixed, see the man page" : "any free port",
		ops->own_dirs ? "  -u user     run as user, not root (started "
				"as root)\n"
			      : "",
		ops->extra_usage ? ops->extra_usage : "");
}

/* parse_options - step 1. Returns 0, 1 (exit 0: help/version), -1 (exit 2). */
static int parse_options(struct nsr_daemon *d, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	const struct nsr_daemon_ops *ops = d->ops;
	char optstr[128], **addrs;
	int c;

	snprintf(optstr, sizeof(optstr), "R:p:a:bdthV%s%s",
		 ops->own_dirs ? "u:" : "",
		 ops->extra_opts ? ops->extra_opts : "");
	while ((c = getopt_long(argc, argv, optstr, longopts, NULL)) != -1) {
		switch (c) {
		case 'R':
			free(d->root);
			d->root = strdup(optarg);
			if (!d->root)
				goto nomem;
			break;
		case 'p':
			d->port = atoi(optarg);
			if (d->port < 0 || d->port > 65535) {
				fprintf(stderr, "%s: bad port '%s'\n",
					ops->name, optarg);
				return -1;
			}
			break;
		case 'a':
			if (d->naddrs >= NSR_DAEMON_MAX_ADDRS) {
				fprintf(stderr, "%s: at most %d -a addresses\n",
					ops->name, NSR_DAEMON_MAX_ADDRS);
				return -1;
			}
			addrs = realloc(d->addrs, (size_t)(d->naddrs + 1) *
						  sizeof(char *));
			if (!addrs)
				goto nomem;
			d->addrs = addrs;
			d->addrs[d->naddrs] = strdup(optarg);
			if (!d->addrs[d->naddrs])
				goto nomem;
			d->naddrs++;
			break;
		case 'b':
			d->background = 1;
			break;
		case 'u':
			if (!ops->own_dirs)
				goto other; /* the daemon's own option */
			free(d->user);
			d->user = strdup(optarg);
			if (!d->user)
				goto nomem;
			break;
		case 'd':
			d->debug = 1;
			break;
		case 't':
			d->background = -1; /* check mode */
			break;
		case 'h':
			usage(ops, stdout);
			return 1;
		case 'V':
			printf("%s (OpenNSR) %s\n", ops->name,
			       NSR_VERSION_STRING);
			return 1;
		default:
		other:
			if (c != '?' && ops->option &&
			    ops->option(d, c, optarg) == 0)
				break;
			usage(ops, stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", ops->name,
			argv[optind]);
		return -1;
	}
	return 0;
nomem:
	fprintf(stderr, "%s: out of memory\n", ops->name);
	return -1;
}

/* lock_pidfile - step 3: one daemon of a kind per root. */
static int lock_pidfile(struct nsr_daemon *d, char **path_out)
{
	char rel[64], *path;
	char buf[32], old[32] = "";
	int fd, n;

	snprintf(rel, sizeof(rel), "logs/%s.pid", d->ops->name);
	path = start_path(d, rel);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		nsr_fatal("cannot open pid file %s: %s", path, strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		n = (int)read(fd, old, sizeof(old) - 1);
		old[n > 0 ? n : 0] = '\0';
		old[strcspn(old, "\n")] = '\0';
		nsr_fatal("another %s is already running on root %s (pid %s); "
			  "stop it first or use another root (-R)",
			  d->ops->name, d->root, old[0] ? old : "unknown");
	}
	n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) != 0 || pwrite(fd, buf, (size_t)n, 0) != n)
		nsr_fatal("cannot write pid file %s: %s", path,
			  strerror(errno));
	*path_out = path;
	return fd;
}

/* go_background - fork; the parent waits for "ready" from the child. */
static int go_background(int *ready_fd)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe2(p, O_CLOEXEC) != 0)
		nsr_fatal("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		nsr_fatal("fork: %s", strerror(errno));
	if (pid > 0) {
		close(p[1]);
		if (read(p[0], &c, 1) == 1 && c == 'R')
			_exit(0);
		_exit(1); /* the child failed; it logged why */
	}
	close(p[0]);
	setsid();
	*ready_fd = p[1];
	return 0;
}

/* install_signals - block our signals; handlers only set flags. */
static void install_signals(sigset_t *orig)
{
	struct sigaction sa;
	sigset_t block;
	int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGCHLD};

	sigemptyset(&block);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NSR_ARRAY_SIZE(sigs); i++) {
		sigaddset(&block, sigs[i]);
		sigaction(sigs[i], &sa, NULL);
	}
	signal(SIGPIPE, SIG_IGN);
	sigprocmask(SIG_BLOCK, &block, orig);
}

/* register_all - step 5: tell the local locator where we serve. */
static void register_all(struct nsr_daemon *d)
{
	const struct nsr_rpc_prog *p = d->ops->progs;
	struct timespec ts = {0, 200 * 1000 * 1000};

	for (size_t i = 0; i < d->ops->nprogs; i++) {
		struct nsr_buf err;
		int rc = NSR_ERR_CONNECT;

		nsr_buf_init(&err, 0);
		/* nsrexecd may still be starting: try for ten seconds. */
		for (int tries = 0; tries < 50 && rc; tries++) {
			nsr_buf_reset(&err);
			rc = nsr_rpc_register(p[i].prog, p[i].vers,
					      d->bound_port, &err);
			if (rc)
				nanosleep(&ts, NULL);
		}
		if (rc)
			nsr_fatal("cannot register with nsrexecd on "
				  "127.0.0.1:%d: %s",
				  nsr_rpc_locator_port(), err.data);
		nsr_buf_release(&err);
	}
}

/* reap_children - SIGCHLD: hand every exited child to the daemon. */
static void reap_children(struct nsr_daemon *d)
{
	pid_t pid;
	int status;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		if (d->ops->child_exit)
			d->ops->child_exit(d, pid, status);
}

/* raise_nofile - RLIMIT_NOFILE soft up to hard: the transport sizes its
 * connection cap from it (nsr_rpc_server_new), so call this first. */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
			errno = 0; /* keep the soft limit; the cap follows it */
	}
}

/*
 * fix_mmap_threshold - keep glibc from caching big blocks in its arenas.
 * Every RPC worker owns two NSR_RPC_BUFSZ (256 KiB) XDR buffers and a
 * daemon may run a thousand workers.  glibc serves such blocks with mmap,
 * which costs only the pages touched (a small request touches a few),
 * until the first one is freed: then its dynamic threshold rises above
 * the size and later buffers come from the arenas, whose pages stay
 * resident once touched.  nsrd grew from 63 MB to 535 MB from its second
 * burst of 1,024 sessions on (tests/bench/admission/RESULTS.md); with the
 * threshold fixed at glibc's default it stays under 40 MB.  Setting it
 * also fixes the trim threshold at glibc's 128 KiB, so an arena whose
 * free top grew past that gave it back at the next free and faulted it
 * in again at the next malloc: in a burst of 1,024 starts that was 40 %
 * of nsrjobd's CPU (SQLite's allocations per transaction) and a quarter
 * of nsrmmdbd's (the pager's undo copies).  Every daemon therefore keeps
 * up to TRIM_KEEP free at the top of each arena (at most 8 per CPU, so
 * a bounded sum), which only memory it used before can fill.
 *
 * A data mover is the other way round: it allocates a buffer per data
 * call (up to 8 MiB) and frees it once written, a few thousand times a
 * second; mmapped, each costs page faults and zeroing, and a trimmed
 * arena top faults again: a third of nsrmmd's CPU for a large save
 * (tests/bench/save/RESULTS.md).  Such a daemon sets malloc_keep.
 */
#define TRIM_KEEP (4u << 20)
static void fix_mmap_threshold(const struct nsr_daemon_ops *ops)
{
#if defined(__GLIBC__)
	size_t keep = ops->malloc_keep ? ops->malloc_keep : 128 * 1024;
	size_t trim = ops->malloc_keep ? 4 * keep : TRIM_KEEP;

	if (!mallopt(M_MMAP_THRESHOLD, (int)keep))
		errno = 0; /* keep the default behaviour */
	if (!mallopt(M_TRIM_THRESHOLD, (int)trim))
		errno = 0;
#else
	(void)ops;
#endif
}

/* count_text - "3,978": n with thousands separators, into buf. */
static const char *count_text(long n, char *buf, size_t len)
{
	char digits[32];
	size_t nd, o = 0;

	snprintf(digits, sizeof(digits), "%ld", n < 0 ? 0 : n);
	nd = strlen(digits);
	for (size_t i = 0; i < nd && o + 2 < len; i++) {
		if (i > 0 && (nd - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}

/* log_rpc_limits - say which transport bounds are in force. */
static void log_rpc_limits(struct nsr_daemon *d)
{
	struct nsr_rpc_limits l;
	struct rlimit rl;
	char c[32], t[32], f[32];

	nsr_rpc_server_limits(d->srv, &l);
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		rl.rlim_cur = 0;
	nsr_info("connections: at most %s (%s descriptors), %s worker threads, "
		 "%d per remote address, silent ones closed after %d s, idle "
		 "ones after %d s", count_text(l.max_conns, c, sizeof(c)),
		 count_text(rl.rlim_cur == RLIM_INFINITY ? -1
							  : (long)rl.rlim_cur,
			    f, sizeof(f)),
		 count_text(l.max_threads, t, sizeof(t)), l.max_per_peer,
		 l.grace_sec, l.idle_sec);
}

/* Transport events seen and not yet logged.  A burst (4,000 silent
 * connections timing out over a few seconds) becomes one line once it has
 * been quiet for RPC_LOG_QUIET_MS; events that keep coming are logged
 * every RPC_LOG_EVERY_MS. */
#define RPC_LOG_QUIET_MS 1500
#define RPC_LOG_EVERY_MS 10000
enum { EV_SILENT, EV_IDLE, EV_STALLED, EV_EVICTED, EV_REFUSED,
       EV_PEER_EVICTED, EV_PEER_REFUSED, EV_THREADS, EV_THREAD_FAIL,
       EV_TLS_PLAIN, EV_TLS_REVOKED, EV_TLS_FAILED, /* NSR_RPC_TLS_* */
       EV_N };
struct rpc_log {
	long pending[EV_N];
	long long first[EV_N]; /* when pending became non-zero */
	long long last[EV_N];  /* the latest event */
	char peer[48];
	char tls[EV_N][200]; /* the TLS events' last who and why */
};

/* tls_log_line - one line for a TLS refusal kind k (see nsr/tls.h). */
static void tls_log_line(int k, const char *c, const char *last)
{
	if (k == EV_TLS_PLAIN)
		nsr_warn("refused %s calls without TLS, the last from %s: "
			 "a host without a certificate of this datazone "
			 "(nsrtrust(8); plain-hosts admits a host)", c, last);
	else if (k == EV_TLS_REVOKED)
		nsr_warn("refused %s calls of a revoked host, the last from "
			 "%s", c, last);
	else
		nsr_warn("%s TLS handshakes failed, the last: %s (a host "
			 "without a valid certificate of this datazone: see "
			 "nsrtrust(8))", c, last);
}

/* rpc_log_line - one line for event kind k with n occurrences. */
static void rpc_log_line(const struct nsr_rpc_limits *l, int k, long n,
			 const char *peer)
{
	char c[32], m[32];

	count_text(n, c, sizeof(c));
	switch (k) {
	case EV_SILENT:
		nsr_info("closed %s connections that sent nothing within %d s "
			 "(NSR_RPC_GRACE_SEC)", c, l->grace_sec);
		break;
	case EV_IDLE:
		nsr_info("closed %s connections idle for %d s "
			 "(NSR_RPC_IDLE_SEC)", c, l->idle_sec);
		break;
	case EV_STALLED:
		nsr_warn("dropped %s connections that stopped sending in the "
			 "middle of a request for %d s (NSR_RPC_READ_SEC)",
			 c, l->read_sec);
		break;
	case EV_EVICTED:
		nsr_warn("connection limit %s reached: closed %s silent or "
			 "idle connections to admit new ones "
			 "(NSR_RPC_MAX_CONNS)",
			 count_text(l->max_conns, m, sizeof(m)), c);
		break;
	case EV_REFUSED:
		nsr_warn("connection limit %s reached with every connection "
			 "busy: refused %s new connections (NSR_RPC_MAX_CONNS)",
			 count_text(l->max_conns, m, sizeof(m)), c);
		break;
	case EV_PEER_EVICTED:
		nsr_warn("per-address limit %s reached by %s: closed %s of its "
			 "silent or idle connections (NSR_RPC_MAX_PER_PEER)",
			 count_text(l->max_per_peer, m, sizeof(m)), peer, c);
		break;
	case EV_PEER_REFUSED:
		nsr_warn("per-address limit %s reached by %s: refused %s new "
			 "connections (NSR_RPC_MAX_PER_PEER)",
			 count_text(l->max_per_peer, m, sizeof(m)), peer, c);
		break;
	case EV_THREADS:
		nsr_warn("all %s worker threads busy: %s requests waited for "
			 "one (NSR_RPC_MAX_THREADS)",
			 count_text(l->max_threads, m, sizeof(m)), c);
		break;
	case EV_THREAD_FAIL:
		nsr_warn("could not start a worker thread %s times; requests "
			 "wait for a running one", c);
		break;
	default:
		tls_log_line(k, c, peer);
		break;
	}
}

/* rpc_log_events - collect the transport's events, log the due ones. */
static void rpc_log_events(struct nsr_daemon *d, struct rpc_log *lg)
{
	struct nsr_rpc_limits l;
	struct nsr_rpc_stats st;
	long long now = nsr_clock_mono_ms();
	long got[EV_N];

	nsr_rpc_server_stats(d->srv, &st, 1);
	nsr_rpc_server_limits(d->srv, &l);
	got[EV_SILENT] = st.closed_silent;
	got[EV_IDLE] = st.closed_idle;
	got[EV_STALLED] = st.closed_stalled;
	got[EV_EVICTED] = st.evicted;
	got[EV_REFUSED] = st.refused;
	got[EV_PEER_EVICTED] = st.peer_evicted;
	got[EV_PEER_REFUSED] = st.peer_refused;
	got[EV_THREADS] = st.thread_waits;
	got[EV_THREAD_FAIL] = st.thread_fails;
	if (st.peer_last[0])
		snprintf(lg->peer, sizeof(lg->peer), "%s", st.peer_last);
	for (int t = 0; t < NSR_RPC_TLS_N; t++) {
		got[EV_TLS_PLAIN + t] = st.tls[t];
		if (st.tls[t]) {
			char *to = lg->tls[EV_TLS_PLAIN + t];

			_Static_assert(sizeof(lg->tls[0]) ==
					       sizeof(st.tls_last[0]),
				       "TLS event texts of one size");
			memcpy(to, st.tls_last[t], sizeof(lg->tls[0]));
			to[sizeof(lg->tls[0]) - 1] = '\0';
		}
	}
	for (int k = 0; k < EV_N; k++) {
		if (got[k]) {
			if (!lg->pending[k])
				lg->first[k] = now;
			lg->pending[k] += got[k];
			lg->last[k] = now;
		}
		if (!lg->pending[k] || (now - lg->last[k] < RPC_LOG_QUIET_MS &&
					now - lg->first[k] < RPC_LOG_EVERY_MS))
			continue;
		rpc_log_line(&l, k, lg->pending[k],
			     k >= EV_TLS_PLAIN ? lg->tls[k] : lg->peer);
		lg->pending[k] = 0;
	}
}

/* accept_failed - the listeners rest ACCEPT_REST_MS; say why, at most
 * every RPC_LOG_EVERY_MS. */
#define ACCEPT_REST_MS 200
static void accept_failed(long long *accept_after, long long *warned)
{
	long long now = nsr_clock_mono_ms();

	*accept_after = now + ACCEPT_REST_MS;
	if (*warned && now - *warned < RPC_LOG_EVERY_MS)
		return;
	*warned = now;
	if (errno == EMFILE || errno == ENFILE)
		nsr_warn("cannot accept connections: out of file descriptors "
			 "with every connection busy; raise the limit (ulimit "
			 "-n) or lower NSR_RPC_MAX_CONNS");
	else
		nsr_warn("cannot accept connections: %s", strerror(errno));
}

/* run_loop - step 7. */
static void run_loop(struct nsr_daemon *d, const sigset_t *orig)
{
	struct pollfd pfd[20]; /* listeners (<= 16) + wake pipe */
	long long next_tick = nsr_clock_mono_ms() + d->ops->tick_ms;
	long long next_stats = nsr_clock_mono_ms() + 1000;
	long long accept_after = 0, warned = 0;
	int n = nsr_rpc_server_nlisten(d->srv);
	struct rpc_log lg;

	memset(&lg, 0, sizeof(lg));
	while (!got_term) {
		struct timespec ts, *tsp = &ts;
		long long due = next_stats;
		long long left;
		int pr;

		/* After a failed accept (out of descriptors with every
		 * connection busy) the listeners rest, or ppoll would spin. */
		for (int i = 0; i < n; i++) {
			pfd[i].fd = nsr_rpc_server_listen_fd(d->srv, i);
			if (nsr_clock_mono_ms() < accept_after)
				pfd[i].fd = -1;
			pfd[i].events = POLLIN;
		}
		if (accept_after > nsr_clock_mono_ms() && accept_after < due)
			due = accept_after;
		pfd[n].fd = wake_pipe[0];
		pfd[n].events = POLLIN;
		if (d->ops->tick_ms && next_tick < due)
			due = next_tick;
		left = NSR_MAX(due - nsr_clock_mono_ms(), 0);
		ts.tv_sec = left / 1000;
		ts.tv_nsec = (left % 1000) * 1000000;
		pr = ppoll(pfd, (nfds_t)n + 1, tsp, orig);
		if (pr < 0 && errno != EINTR)
			nsr_fatal("ppoll: %s", strerror(errno));
		if (got_chld) {
			got_chld = 0;
			reap_children(d);
		}
		if (got_hup) {
			got_hup = 0;
			nsr_info("reloading on SIGHUP");
			if (d->ops->reload)
				d->ops->reload(d);
		}
		for (int i = 0; pr > 0 && i < n; i++)
			if (pfd[i].revents & POLLIN &&
			    nsr_rpc_server_accept(d->srv, i) == NSR_ERR_SYSTEM)
				accept_failed(&accept_after, &warned);
		if (nsr_clock_mono_ms() >= next_stats) {
			rpc_log_events(d, &lg);
			next_stats = nsr_clock_mono_ms() + 1000;
		}
		if (d->ops->tick_ms && nsr_clock_mono_ms() >= next_tick) {
			d->ops->tick(d);
			next_tick = nsr_clock_mono_ms() + d->ops->tick_ms;
		}
	}
}

/* exe_directory - where our binary lives (children are found there). */
static char *exe_directory(const char *argv0)
{
	char buf[4096];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

	if (n <= 0) {
		snprintf(buf, sizeof(buf), "%s", argv0);
		n = (ssize_t)strlen(buf);
	}
	buf[n] = '\0';
	return strdup(dirname(buf)); /* NULL without memory */
}

/* make_root - step 3: the standard directories under the root. */
static void make_root(struct nsr_daemon *d)
{
	static const char *const dirs[] = {"",	  "logs", "tmp",
					   "res", "mm",	  "index"};

	for (size_t i = 0; i < NSR_ARRAY_SIZE(dirs); i++) {
		char *p = start_path(d, dirs[i]);

		if (nsr_mkdir_p(p, 0755) != NSR_OK)
			nsr_fatal("cannot create %s: %s (check -R or NSR_ROOT)",
				  p, strerror(errno));
		free(p);
	}
}

/* Who run_as_user gives the daemon's directories to (nftw passes no
 * context to its callback). */
static uid_t tree_uid;
static gid_t tree_gid;

/* give_one - nftw: lchown one entry (links themselves, never their
 * targets). */
static int give_one(const char *path, const struct stat *st, int flag,
		    struct FTW *ftw)
{
	NSR_UNUSED(flag);
	NSR_UNUSED(ftw);
	if (st->st_uid == tree_uid && st->st_gid == tree_gid)
		return 0;
	return lchown(path, tree_uid, tree_gid) == 0 ? 0 : -1;
}

/* tls_readable - with -u: the certificates (public) and the revocation
 * list stay readable to the user, through a searchable (not listable)
 * tls directory; the private keys keep mode 0600 and are read once,
 * before root is given up (nsr/tls.h). */
static void tls_readable(struct nsr_daemon *d)
{
	static const char *const pub[] = {"host.pem", "ca.pem", "revoked"};
	char *dir = start_path(d, "tls");
	struct stat st;

	if (stat(dir, &st) == 0 && (st.st_mode & 0111) != 0111 &&
	    chmod(dir, (st.st_mode & 07777) | 0111) != 0)
		nsr_fatal("cannot make %s searchable: %s", dir,
			  strerror(errno));
	for (size_t i = 0; i < NSR_ARRAY_SIZE(pub); i++) {
		char *p = nsr_path_join(dir, pub[i]);

		if (p && stat(p, &st) == 0 && (st.st_mode & 0444) != 0444 &&
		    chmod(p, (st.st_mode & 07777) | 0444) != 0)
			nsr_fatal("cannot make %s readable: %s", p,
				  strerror(errno));
		free(p);
	}
	free(dir);
}

/* nsr_daemon_user_lookup - a user other than root, and its ids. */
int nsr_daemon_user_lookup(const char *name, uid_t *uid, gid_t *gid,
			   struct nsr_buf *why)
{
	struct passwd pw, *res = NULL;
	char buf[4096];
	int e = getpwnam_r(name, &pw, buf, sizeof(buf), &res);

	if (!res) {
		nsr_buf_addf(why, "%s: no such user%s%s (make one, e.g. "
			     "useradd --system --no-create-home %s)", name,
			     e ? ": " : "", e ? strerror(e) : "", name);
		return NSR_ERR_NOTFOUND;
	}
	if (pw.pw_uid == 0) {
		nsr_buf_addf(why, "%s: that is root; name an unprivileged "
			     "user", name);
		return NSR_ERR_INVAL;
	}
	if (uid)
		*uid = pw.pw_uid;
	if (gid)
		*gid = pw.pw_gid;
	return NSR_OK;
}

/* nsr_daemon_user_opt - -U USER, checked (and that we are root to
 * use it) and copied. */
int nsr_daemon_user_opt(const struct nsr_daemon *d, int opt, const char *arg,
			char *out, size_t cap)
{
	struct nsr_buf why;
	int rc;

	nsr_buf_init(&why, 0);
	if (!*arg || strlen(arg) >= cap) {
		nsr_buf_addf(&why, "a user name of 1 to %zu characters",
			     cap - 1);
		rc = NSR_ERR_INVAL;
	} else {
		rc = nsr_daemon_user_lookup(arg, NULL, NULL, &why);
	}
	if (rc == NSR_OK && geteuid() != 0) {
		nsr_buf_addf(&why, "%s: %s needs root to start daemons as "
			     "another user (start it as root, or leave -%c "
			     "out)", arg, d->ops->name, opt);
		rc = NSR_ERR_PERM;
	}
	if (rc == NSR_OK)
		snprintf(out, cap, "%s", arg);
	else
		fprintf(stderr, "%s: -%c %s\n", d->ops->name, opt,
			why.data ? why.data : "");
	nsr_buf_release(&why);
	return rc == NSR_OK ? 0 : -1;
}

/* run_as_user - step 3 with -u: the daemon's directories to the user,
 * the TLS context loaded while the key is readable, then root given up
 * for good.  Anything that fails is fatal: a daemon never runs as
 * another user than the one asked for. */
static void run_as_user(struct nsr_daemon *d)
{
	struct nsr_buf why;
	uid_t uid;
	gid_t gid;

	if (!d->user)
		return;
	nsr_buf_init(&why, 0);
	if (nsr_daemon_user_lookup(d->user, &uid, &gid, &why) != NSR_OK)
		nsr_fatal("-u %s", why.data);
	nsr_buf_release(&why);
	if (geteuid() != 0) {
		if (geteuid() == uid)
			return; /* started as that user already */
		nsr_fatal("-u %s: only root can run a daemon as another "
			  "user", d->user);
	}
	tree_uid = uid;
	tree_gid = gid;
	for (const char *const *r = d->ops->own_dirs; *r; r++) {
		char *p = start_path(d, *r);

		if (nsr_mkdir_p(p, 0750) != NSR_OK ||
		    nftw(p, give_one, 16, FTW_PHYS | FTW_MOUNT) != 0)
			nsr_fatal("cannot give %s to %s: %s", p, d->user,
				  strerror(errno));
		free(p);
	}
	if (!nsr_tls_disabled()) {
		tls_readable(d);
		if (!nsr_tls_load())
			nsr_warn("no TLS certificate loaded before giving up "
				 "root: calls to this daemon will be refused");
	}
	/* The daemon states the user it was started as (root) on its calls
	 * to other daemons, as before: it holds this host's key, which is
	 * what makes a stated user believed (nsr/rpc.h, Authorization). */
	(void)nsr_rpc_self_user();
	if (initgroups(d->user, gid) != 0 || setgid(gid) != 0 ||
	    setuid(uid) != 0)
		nsr_fatal("cannot run as %s: %s", d->user, strerror(errno));
	if (setuid(0) == 0 || geteuid() == 0)
		nsr_fatal("-u %s: root could be taken back; refusing to run",
			  d->user);
	nsr_info("running as %s (uid %u, gid %u), not root", d->user,
		 (unsigned)uid, (unsigned)gid);
}

/* setup_tls - step 3: this process's TLS root and policy (every call
 * but NULL needs TLS), and at first start the certificates (nsr/tls.h):
 * a key, and a CA and certificate when the root has none; a root of an
 * enrolled host without a certificate gets an enrolment request. */
static void setup_tls(struct nsr_daemon *d)
{
	char host[NSR_HOST_MAX + 1];
	struct nsr_buf err;
	int rc;

	if (nsr_tls_configure(d->root, 1) != NSR_OK)
		nsr_fatal("root %s: path too long", d->root);
	if (nsr_tls_disabled())
		return;
	nsr_host_self(host, sizeof(host));
	nsr_buf_init(&err, 0);
	rc = nsr_tls_provision(d->root, host, &err);
	if (rc == NSR_ERR_WAIT)
		nsr_warn("%s; until then other hosts refuse this one's calls",
			 err.data);
	else if (rc != NSR_OK)
		nsr_warn("cannot set up this host's TLS certificate: %s (%s); "
			 "its calls to other daemons will be refused",
			 err.data, nsr_strerror(rc));
	nsr_buf_release(&err);
}

/* nsr_daemon_main - the whole life of a daemon. */
int nsr_daemon_main(int argc, char **argv, const struct nsr_daemon_ops *ops,
		    void *ctx)
{
	struct nsr_daemon d;
	const char *env_root = getenv("NSR_ROOT");
	char *logpath, *pidpath = NULL;
	int pidfd, ready_fd = -1, rc;
	sigset_t orig;

	fix_mmap_threshold(ops);
	memset(&d, 0, sizeof(d));
	d.ops = ops;
	d.ctx = ctx;
	d.root = strdup(env_root && *env_root ? env_root : NSR_DEFAULT_ROOT);
	d.port = ops->default_port;
	d.exe_dir = exe_directory(argv[0]);
	if (!d.root || !d.exe_dir) {
		fprintf(stderr, "%s: out of memory\n", ops->name);
		free(d.root);
		free(d.exe_dir);
		free(d.user);
		return 1;
	}
	d.log_fd = -1;
	nsr_log_init(ops->name, NSR_LOG_STDERR);

	/* 1-2. Options and -t. */
	rc = parse_options(&d, argc, argv);
	if (rc) {
		free(d.root);
		free_addrs(&d);
		free(d.exe_dir);
		free(d.user);
		return rc > 0 ? 0 : 2;
	}
	if (d.debug)
		nsr_log_set_level(NSR_LOG_DEBUG);
	if (d.background < 0) {
		rc = ops->check ? ops->check(&d) : 0;
		printf("%s: configuration %s\n", ops->name,
		       rc ? "has errors" : "ok");
		free(d.root);
		free_addrs(&d);
		free(d.exe_dir);
		free(d.user);
		return rc ? 1 : 0;
	}

	/* 3. Root, log, pid lock. */
	make_root(&d);
	if (d.background > 0)
		go_background(&ready_fd);
	logpath = start_path(&d, "logs/daemon.log");
	if (nsr_log_open_file(logpath) != 0)
		nsr_fatal("cannot open log %s: %s", logpath, strerror(errno));
	d.log_fd = open(logpath, O_WRONLY | O_APPEND | O_CLOEXEC);
	{
		struct stat a, b;

		/* A child of a backgrounded daemon inherits the log as its
		 * stderr: write each line once. */
		if (fstat(2, &a) == 0 && stat(logpath, &b) == 0 &&
		    a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			nsr_log_init(ops->name, 0);
	}
	free(logpath);
	pidfd = lock_pidfile(&d, &pidpath);
	setup_tls(&d);
	if (ops->prepare && ops->prepare(&d) != 0)
		nsr_fatal("preparation failed; see the messages above");
	/* Listening comes before -u gives root up: the local socket goes
	 * in root's sockets/ (clients take it as root's, since root bound
	 * it there; nsr/rpc.h), and nothing is accepted before step 7. */
	raise_nofile();
	if (nsr_rpc_server_new(ops->progs, ops->nprogs, &d.srv) != NSR_OK)
		nsr_fatal("cannot start the RPC server: %s", strerror(errno));
	nsr_rpc_server_set_max_threads(d.srv, ops->max_threads);
	{
		struct nsr_buf err;

		nsr_buf_init(&err, 0);
		if (nsr_daemon_listen(&d, d.port, &d.bound_port, &err) !=
		    NSR_OK)
			nsr_fatal("cannot listen on %s (check -a and -p)",
				  err.data);
		nsr_buf_release(&err);
	}
	run_as_user(&d);
	install_signals(&orig);
	if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
		nsr_fatal("pipe: %s", strerror(errno));

	/* 4. State. */
	if (ops->init && ops->init(&d) != 0)
		nsr_fatal("initialisation failed; see the messages above");

	/* 5. Register. */
	if (!ops->no_register)
		register_all(&d);

	/* 6. Started. */
	nsr_info("started, version %s, root %s, listening on %s port "
		 "%d%s%s",
		 NSR_VERSION_STRING, d.root, nsr_daemon_addr_text(&d),
		 d.bound_port,
		 d.local_sockets ? " and on its local socket" : "",
		 nsr_tls_disabled()
			 ? " (NSR_TEST_NO_TLS: no TLS, for tests only)"
			 : " (TLS with certificates)");
	log_rpc_limits(&d);
	if (ops->started && ops->started(&d) != 0)
		nsr_fatal("start-up failed; see the messages above");
	if (ready_fd >= 0) {
		int nul = open("/dev/null", O_RDWR);

		/* From here on the log file is the only sink; anything written
		 * to stderr (a sanitizer report, a crash message) lands there
		 * too instead of vanishing.  (d.log_fd was opened at step 3,
		 * while this process could still open the file as root.) */
		if (nul >= 0) {
			dup2(nul, 0);
			dup2(nul, 1);
			dup2(d.log_fd >= 0 ? d.log_fd : nul, 2);
			close(nul);
		}
		nsr_log_init(ops->name, 0);
		if (write(ready_fd, "R", 1) != 1)
			nsr_warn("cannot signal readiness: %s",
				 strerror(errno));
		close(ready_fd);
	}

	/* 7-8. Loop, then stop. */
	run_loop(&d, &orig);
	nsr_info("stopping on request");
	if (!ops->no_register)
		for (size_t i = 0; i < ops->nprogs; i++)
			nsr_rpc_unregister(ops->progs[i].prog,
					   ops->progs[i].vers);
	/* No handler runs once the daemon tears its state down (invariant:
	 * handlers never see a closed database or peer). */
	nsr_rpc_server_stop(d.srv);
	if (ops->stop)
		ops->stop(&d);
	nsr_rpc_server_free(d.srv);
	unlink(pidpath);
	close(pidfd);
	if (d.log_fd >= 0)
		close(d.log_fd);
	nsr_info("stopped");
	free(pidpath);
	free(d.root);
	free_addrs(&d);
	free(d.exe_dir);
	free(d.user);
	return 0;
}
