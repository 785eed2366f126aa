/*
 * run.c - nsrexecd runs save for the server (RUN_SAVE, RUN_POLL in
 * nsrexecd.x): one save process per save set, started with fork and
 * execv of the installed save program and arguments checked one by one,
 * never through a shell, and only for a server named with -S calling
 * from one of its addresses.  The call answers a run id at once; the server
 * polls the run until every save has ended, getting each one's exit
 * status and the last lines of its stderr.
 *
 * Invariants:
 *   1. every field of g_runs is used under g_runs.lock (handlers run on
 *      RPC workers, child_exit and the tick on the main thread);
 *   2. a run slot is free exactly when its id is 0; at most
 *      EXEC_RUNS_MAX runs are kept, so at most EXEC_RUNS_MAX *
 *      EXEC_SAVESETS_MAX saves run at once;
 *   3. a save set has ended (state 1) when its process was reaped and
 *      its stderr pipe reached end of file; a run is done when all its
 *      save sets have ended or never started (state 2);
 *   4. a run is forgotten when a poll has answered it done, or
 *      RUN_FORGET_SEC after it was done when nobody asks.
 */
#include "nsr/compat.h"

#include <ctype.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/daemon.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/host.h"
#include "nsr/level.h"
#include "nsr/log.h"
#include "nsr/mounts.h"
#include "nsr/pssspec.h"
#include "nsr/rpc/nsrexecd.h"
#include "nsr/rpc_status.h"
#include "nsr/xmalloc.h"
#include "execd.h"

#define RUN_FORGET_SEC 3600
#define MAX_SERVERS EXECD_SERVERS_MAX
#define MAX_SERVER_ADDRS 64
#define RESOLVE_AGAIN_SEC 60	/* a caller not known: look up again */

enum { SET_RUNNING = 0, SET_ENDED = 1, SET_NOSTART = 2 };

struct run_set {
	char *name;
	pid_t pid;	/* 0 once reaped (or never started) */
	int fd;		/* stderr pipe, -1 once at end of file */
	int state;
	int exit_code, signal;
	char tail[EXEC_TAIL_MAX];
	size_t tlen;
	int cut;	/* the tail lost its beginning */
};

struct run {
	uint64_t id;	/* 0 = free slot */
	time_t done_at;	/* 0 = not done */
	char client[NSR_SHORT_MAX];
	char group[NSR_SHORT_MAX];
	size_t n;
	struct run_set sets[EXEC_SAVESETS_MAX];
};

static struct {
	pthread_mutex_t lock;
	struct run runs[EXEC_RUNS_MAX];
	uint64_t next_id;
	char *save;		/* the save program */
	char *servers[MAX_SERVERS];
	int nservers;
	char *mounts;		/* mount table file; NULL = /proc/self/mounts */
	/* The servers' addresses, looked up at start and again (at most
	 * every RESOLVE_AGAIN_SEC) when a caller is not among them. */
	char addrs[MAX_SERVER_ADDRS][INET6_ADDRSTRLEN];
	int naddrs;
	time_t resolved;
} g_runs = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* execd_run_option - -x, -S, -M. */
int execd_run_option(int opt, const char *arg)
{
	if (opt == 'x' && arg[0] == '/') {
		free(g_runs.save);
		g_runs.save = nsr_xstrdup(arg);
		return 0;
	}
	if (opt == 'S' && nsr_host_check(arg) == NSR_OK && arg[0] != '-' &&
	    g_runs.nservers < MAX_SERVERS) {
		g_runs.servers[g_runs.nservers++] = nsr_xstrdup(arg);
		return 0;
	}
	if (opt == 'M') {
		free(g_runs.mounts);
		g_runs.mounts = nsr_xstrdup(arg);
		return 0;
	}
	return -1;
}

/* execd_run_nservers - see execd.h. */
int execd_run_nservers(void)
{
	return g_runs.nservers;
}

/* execd_run_server - see execd.h. */
const char *execd_run_server(int i)
{
	return i >= 0 && i < g_runs.nservers ? g_runs.servers[i] : NULL;
}

/* execd_run_server_argv - "-S NAME" for every -S server, appended to
 * argv at *n (room for 2 * EXECD_SERVERS_MAX): nsrsnmd serves them too. */
void execd_run_server_argv(char **argv, int *n)
{
	for (int i = 0; i < g_runs.nservers; i++) {
		argv[(*n)++] = (char *)"-S";
		argv[(*n)++] = g_runs.servers[i];
	}
}

/* resolve - the addresses of the -S servers into g_runs.addrs. */
static void resolve(void)
{
	struct addrinfo hints, *res, *ai;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	g_runs.naddrs = 0;
	g_runs.resolved = time(NULL);
	for (int i = 0; i < g_runs.nservers; i++) {
		if (getaddrinfo(g_runs.servers[i], NULL, &hints, &res) != 0) {
			nsr_warn("server %s does not resolve: its calls are "
				 "refused until it does", g_runs.servers[i]);
			continue;
		}
		for (ai = res; ai && g_runs.naddrs < MAX_SERVER_ADDRS;
		     ai = ai->ai_next) {
			struct sockaddr_in *v4 = (void *)ai->ai_addr;
			struct sockaddr_in6 *v6 = (void *)ai->ai_addr;
			const void *a = ai->ai_family == AF_INET
						? (const void *)&v4->sin_addr
						: (const void *)&v6->sin6_addr;

			if (inet_ntop(ai->ai_family, a,
				      g_runs.addrs[g_runs.naddrs],
				      INET6_ADDRSTRLEN))
				g_runs.naddrs++;
		}
		freeaddrinfo(res);
	}
}

/* allowed - is server one nsrexecd serves (-S)? */
static int allowed(const char *server)
{
	for (int i = 0; i < g_runs.nservers; i++)
		if (strcasecmp(g_runs.servers[i], server) == 0)
			return 1;
	return 0;
}

/* known_cert - the caller's certificate (TLS) names a -S server, or this
 * host itself on a loopback connection; a plain connection (a host an
 * administrator allowed in plain-hosts) has no certificate to check. */
static int known_cert(const struct nsr_rpc_call *call)
{
	const char *h = nsr_rpc_call_peer_host(call);
	char self[NSR_HOST_MAX + 1];

	if (!h || allowed(h))
		return 1;
	nsr_host_self(self, sizeof(self));
	return nsr_rpc_call_peer_is_local(call) && strcasecmp(h, self) == 0;
}

/* known_caller - is the caller at an address of a -S server, with a
 * certificate of one (known_cert)?  A caller on the local socket is at
 * this host's loopback address. */
static int known_caller(const struct nsr_rpc_call *call)
{
	char addr[96], *colon;
	const char *a;

	if (!known_cert(call))
		return 0;
	if (nsr_rpc_call_local(call)) {
		/* On this host's local socket: a caller here, known when
		 * this host is a -S server, by name or as loopback. */
		char self[NSR_HOST_MAX + 1];

		nsr_host_self(self, sizeof(self));
		if (allowed(self))
			return 1;
		snprintf(addr, sizeof(addr), "127.0.0.1:0");
	} else {
		snprintf(addr, sizeof(addr), "%s", nsr_rpc_call_peer(call));
	}
	colon = strrchr(addr, ':');
	if (colon)
		*colon = '\0';
	a = strncmp(addr, "::ffff:", 7) == 0 ? addr + 7 : addr;
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < g_runs.naddrs; i++)
			if (strcmp(g_runs.addrs[i], a) == 0)
				return 1;
		if (pass || time(NULL) - g_runs.resolved < RESOLVE_AGAIN_SEC)
			break;
		resolve();
	}
	return 0;
}

/* execd_run_start - the save program: -x, else next to nsrexecd, else
 * in ../bin (installed layout). */
int execd_run_start(struct nsr_daemon *d)
{
	const char *cand[] = {"save", "../bin/save"};

	for (size_t i = 0; !g_runs.save && i < NSR_ARRAY_SIZE(cand); i++) {
		char *p = nsr_xcheck(nsr_path_join(d->exe_dir, cand[i]));

		if (access(p, X_OK) == 0)
			g_runs.save = p;
		else
			free(p);
	}
	if (!g_runs.save || access(g_runs.save, X_OK) != 0) {
		nsr_warn("no save program %s: the server cannot start "
			 "backups here (install save next to nsrexecd or "
			 "give its path with -x)",
			 g_runs.save ? g_runs.save : "next to nsrexecd");
		return 0;
	}
	if (!g_runs.nservers)
		nsr_info("no server may run saves here (give it with -S)");
	resolve();
	return 0;
}


/* plain - text is 1..255 of [A-Za-z0-9_.,:=+-], not starting with '-'. */
static int plain(const char *text)
{
	size_t n = strlen(text);

	if (n == 0 || n >= NSR_SHORT_MAX || text[0] == '-')
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)text[i];

		if (!isalnum(c) && !strchr("_.,:=+- ", c))
			return 0;
	}
	return 1;
}

/* pss_ok - text is a PSS:streams_per_ss setting save accepts (the
 * core parser's verdict); else 0 with the reason in st. */
static int pss_ok(const char *text, nsr_status *st)
{
	struct nsr_pssspec *spec = NULL;
	struct nsr_buf why;
	int rc;

	nsr_buf_init(&why, 0);
	rc = text[0] == '-' ? NSR_ERR_SYNTAX
			    : nsr_pssspec_parse(text, &spec, &why);
	if (rc != NSR_OK)
		nsr_status_set(st, NSR_ERR_INVAL, "'%.64s' is not a parallel "
			       "save streams setting: %.200s", text,
			       why.len ? why.data : nsr_strerror(rc));
	nsr_pssspec_free(spec);
	nsr_buf_release(&why);
	return rc == NSR_OK;
}

/* check_args - the caller and every argument of a RUN_SAVE, or why not
 * into st. */
static int check_args(const exec_save_args *a,
		      const struct nsr_rpc_call *call, nsr_status *st)
{
	int lv = *a->level ? nsr_level_parse(a->level) : NSR_LEVEL_FULL;
	u_int n = a->savesets.savesets_len;

	if (nsr_host_check(a->server) != NSR_OK || a->server[0] == '-' ||
	    !allowed(a->server)) {
		nsr_status_set(st, NSR_ERR_PERM, "server '%.64s' may not run "
			       "saves on this host (nsrexecd serves %s; start "
			       "it with -S SERVER)", a->server,
			       g_runs.nservers ? "other servers" : "none");
		return -1;
	}
	if (!known_caller(call)) {
		nsr_status_set(st, NSR_ERR_PERM, "calls from %s are not from "
			       "a server this host serves (nsrexecd -S names "
			       "them; the address must be one of theirs)",
			       nsr_rpc_call_peer(call));
		return -1;
	}
	if (nsr_host_check(a->client) != NSR_OK || a->client[0] == '-') {
		nsr_status_set(st, NSR_ERR_INVAL, "'%.64s' is not a client "
			       "name", a->client);
		return -1;
	}
	if (*a->group && !plain(a->group)) {
		nsr_status_set(st, NSR_ERR_INVAL, "'%.64s' is not a group "
			       "name", a->group);
		return -1;
	}
	if (lv < 0 || lv == NSR_LEVEL_MANUAL) {
		nsr_status_set(st, NSR_ERR_INVAL, "level '%.32s': full, incr "
			       "or 1 to 9", a->level);
		return -1;
	}
	if (*a->pss && !pss_ok(a->pss, st))
		return -1;
	if (a->parallelism < 0 || a->parallelism > 1024) {
		nsr_status_set(st, NSR_ERR_INVAL, "parallelism %d: 0 to 1024",
			       a->parallelism);
		return -1;
	}
	if (n == 0) {
		nsr_status_set(st, NSR_ERR_INVAL, "%s", "no save set named");
		return -1;
	}
	for (u_int i = 0; i < n; i++) {
		const char *p = a->savesets.savesets_val[i];

		if (n == 1 && strcasecmp(p, "All") == 0)
			break;
		if (p[0] != '/' || strchr(p, '\n')) {
			nsr_status_set(st, NSR_ERR_INVAL, "save set '%.64s': "
				       "an absolute path, or All alone", p);
			return -1;
		}
	}
	return 0;
}

/* expand - the save sets of a: as given, or All's local file systems. */
static int expand(const exec_save_args *a, struct nsr_mounts *m,
		  nsr_status *st)
{
	u_int n = a->savesets.savesets_len;
	int rc;

	m->n = 0;
	if (!(n == 1 && strcasecmp(a->savesets.savesets_val[0], "All") == 0))
		return 0;
	rc = nsr_mounts_read(g_runs.mounts, m);
	if (rc == NSR_OK && m->n == 0)
		rc = NSR_ERR_NOTFOUND;
	if (rc != NSR_OK) {
		nsr_status_set(st, rc, "save set All: cannot list the local "
			       "file systems of %s: %s",
			       g_runs.mounts ? g_runs.mounts
					     : "/proc/self/mounts",
			       rc == NSR_ERR_NOTFOUND ? "none found"
						      : nsr_strerror(rc));
		return -1;
	}
	return 0;
}

/* spawn - start save for one save set: argv fixed, stderr to a pipe. */
static void spawn(const exec_save_args *a, struct run_set *s)
{
	char pss[NSR_SHORT_MAX + 8], par[32];
	char *argv[16];
	int n = 0, fds[2], rc;

	argv[n++] = g_runs.save;
	argv[n++] = (char *)"-s";
	argv[n++] = a->server;
	argv[n++] = (char *)"-c";
	argv[n++] = a->client;
	if (*a->level) {
		argv[n++] = (char *)"-l";
		argv[n++] = a->level;
	}
	if (*a->group) {
		argv[n++] = (char *)"-g";
		argv[n++] = a->group;
	}
	if (*a->pss) {
		snprintf(pss, sizeof(pss), "--pss=%s", a->pss);
		argv[n++] = pss;
	}
	if (a->parallelism > 0) {
		snprintf(par, sizeof(par), "--parallelism=%d",
			 a->parallelism);
		argv[n++] = par;
	}
	argv[n++] = (char *)"--";
	argv[n++] = s->name;
	argv[n] = NULL;
	s->fd = -1;
	if (pipe2(fds, O_CLOEXEC) != 0) {
		s->state = SET_NOSTART;
		s->tlen = (size_t)snprintf(s->tail, sizeof(s->tail),
					   "cannot start save: pipe: %s",
					   strerror(errno));
		return;
	}
	rc = nsr_proc_spawn_flags(argv, 0, fds[1], &s->pid);
	close(fds[1]);
	if (rc != NSR_OK) {
		close(fds[0]);
		s->pid = 0;
		s->state = SET_NOSTART;
		s->tlen = (size_t)snprintf(s->tail, sizeof(s->tail),
					   "cannot start %s: %s", g_runs.save,
					   strerror(errno));
		return;
	}
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	s->fd = fds[0];
}

/* free_run - release r's memory; the slot is free after. */
static void free_run(struct run *r)
{
	for (size_t i = 0; i < r->n; i++) {
		if (r->sets[i].fd >= 0)
			close(r->sets[i].fd);
		free(r->sets[i].name);
	}
	memset(r, 0, sizeof(*r));
}

/* execd_run_save - RUN_SAVE: check, expand All, start the saves. */
int execd_run_save(void *ctx, void *argp, void *resp,
		   struct nsr_rpc_call *call)
{
	exec_save_args *a = argp;
	exec_run_res *res = resp;
	struct nsr_mounts m;
	struct run *r = NULL;
	size_t n;

	NSR_UNUSED(ctx);
	if (!g_runs.save || access(g_runs.save, X_OK) != 0) {
		nsr_status_set(&res->st, NSR_ERR_NOTFOUND, "no save program "
			       "on this host (nsrexecd -x PATH names it)");
		return NSR_OK;
	}
	if (check_args(a, call, &res->st) != 0 ||
	    expand(a, &m, &res->st) != 0) {
		nsr_warn("refused a save for %s: %s", nsr_rpc_call_peer(call),
			 res->st.msg);
		return NSR_OK;
	}
	pthread_mutex_lock(&g_runs.lock);
	for (size_t i = 0; !r && i < EXEC_RUNS_MAX; i++)
		if (!g_runs.runs[i].id)
			r = &g_runs.runs[i];
	if (!r) {
		pthread_mutex_unlock(&g_runs.lock);
		nsr_mounts_free(&m);
		nsr_status_set(&res->st, NSR_ERR_LIMIT, "%d runs are under "
			       "way on this host already; try again when one "
			       "has ended", EXEC_RUNS_MAX);
		return NSR_OK;
	}
	r->id = ++g_runs.next_id;
	snprintf(r->client, sizeof(r->client), "%s", a->client);
	snprintf(r->group, sizeof(r->group), "%s", a->group);
	n = m.n ? m.n : a->savesets.savesets_len;
	for (size_t i = 0; i < n; i++) {
		r->sets[i].name = nsr_xstrdup(
			m.n ? m.path[i] : a->savesets.savesets_val[i]);
		r->n = i + 1;
		spawn(a, &r->sets[i]);
	}
	res->run = r->id;
	nsr_info("run %llu for %s: group %s, client %s, level %s, %zu save "
		 "set(s)", (unsigned long long)r->id, nsr_rpc_call_peer(call),
		 *a->group ? a->group : "-", a->client,
		 *a->level ? a->level : "-", n);
	pthread_mutex_unlock(&g_runs.lock);
	nsr_mounts_free(&m);
	nsr_status_set(&res->st, NSR_OK, "%s", "");
	return NSR_OK;
}

/* keep_tail - append p[n] to s's tail, keeping its last bytes. */
static void keep_tail(struct run_set *s, const char *p, size_t n)
{
	size_t cap = sizeof(s->tail) - 1;

	if (n >= cap) {
		memcpy(s->tail, p + n - cap, cap);
		s->tlen = cap;
		s->cut = 1;
		return;
	}
	if (s->tlen + n > cap) {
		size_t drop = s->tlen + n - cap;

		memmove(s->tail, s->tail + drop, s->tlen - drop);
		s->tlen -= drop;
		s->cut = 1;
	}
	memcpy(s->tail + s->tlen, p, n);
	s->tlen += n;
}

/* drain - read what s's pipe holds; close it at end of file. */
static void drain(struct run_set *s)
{
	char buf[4096];
	ssize_t k;

	while (s->fd >= 0) {
		k = read(s->fd, buf, sizeof(buf));
		if (k > 0) {
			keep_tail(s, buf, (size_t)k);
			continue;
		}
		if (k < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		close(s->fd);
		s->fd = -1;
	}
}

/* settle - mark ended what was reaped and read to the end; the run done
 * when nothing runs (invariant 3). */
static void settle(struct run *r, time_t now)
{
	int running = 0;

	for (size_t i = 0; i < r->n; i++) {
		struct run_set *s = &r->sets[i];

		drain(s);
		if (s->state == SET_RUNNING && !s->pid && s->fd < 0)
			s->state = SET_ENDED;
		running += s->state == SET_RUNNING;
	}
	if (!running && !r->done_at)
		r->done_at = now;
}

/* execd_run_exited - record the exit status of one of our saves. */
int execd_run_exited(pid_t pid, int status)
{
	int mine = 0;

	pthread_mutex_lock(&g_runs.lock);
	for (size_t i = 0; !mine && i < EXEC_RUNS_MAX; i++) {
		struct run *r = &g_runs.runs[i];

		for (size_t j = 0; r->id && j < r->n; j++) {
			struct run_set *s = &r->sets[j];

			if (s->pid != pid)
				continue;
			s->pid = 0;
			s->exit_code = WIFEXITED(status) ? WEXITSTATUS(status)
							 : -1;
			s->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
			nsr_info("run %llu: save of %s:%s ended (exit %d%s)",
				 (unsigned long long)r->id, r->client, s->name,
				 s->exit_code, s->signal ? ", killed" : "");
			settle(r, time(NULL));
			mine = 1;
			break;
		}
	}
	pthread_mutex_unlock(&g_runs.lock);
	return mine;
}

/* execd_run_tick - drain pipes; forget runs nobody polled (inv. 4). */
void execd_run_tick(void)
{
	time_t now = time(NULL);

	pthread_mutex_lock(&g_runs.lock);
	for (size_t i = 0; i < EXEC_RUNS_MAX; i++) {
		struct run *r = &g_runs.runs[i];

		if (!r->id)
			continue;
		settle(r, now);
		if (r->done_at && now - r->done_at > RUN_FORGET_SEC)
			free_run(r);
	}
	pthread_mutex_unlock(&g_runs.lock);
}

/* tail_text - s's tail as whole lines (a cut first line dropped). */
static char *tail_text(const struct run_set *s)
{
	const char *p = s->tail, *end = s->tail + s->tlen;
	const char *nl;

	if (s->cut && (nl = memchr(p, '\n', s->tlen)) && nl + 1 < end)
		p = nl + 1;
	return nsr_xstrndup(p, (size_t)(end - p));
}

/* execd_run_poll - RUN_POLL: each save set's state; done ends the run. */
int execd_run_poll(void *ctx, void *argp, void *resp,
		   struct nsr_rpc_call *call)
{
	exec_poll_args *a = argp;
	exec_poll_res *res = resp;
	struct run *r = NULL;

	NSR_UNUSED(ctx);
	NSR_UNUSED(call);
	pthread_mutex_lock(&g_runs.lock);
	for (size_t i = 0; !r && i < EXEC_RUNS_MAX; i++)
		if (a->run && g_runs.runs[i].id == a->run)
			r = &g_runs.runs[i];
	if (!r) {
		pthread_mutex_unlock(&g_runs.lock);
		nsr_status_set(&res->st, NSR_ERR_NOTFOUND, "no run %llu on "
			       "this host (ended and reported, or nsrexecd "
			       "restarted)", (unsigned long long)a->run);
		return NSR_OK;
	}
	settle(r, time(NULL));
	res->sets.sets_len = (u_int)r->n;
	res->sets.sets_val = nsr_xcalloc(r->n + 1, sizeof(exec_saveset));
	for (size_t i = 0; i < r->n; i++) {
		exec_saveset *o = &res->sets.sets_val[i];

		o->name = nsr_xstrdup(r->sets[i].name);
		o->state = r->sets[i].state;
		o->exit_code = r->sets[i].exit_code;
		o->signal = r->sets[i].signal;
		o->tail = tail_text(&r->sets[i]);
	}
	res->done = r->done_at != 0;
	if (res->done)
		free_run(r);
	pthread_mutex_unlock(&g_runs.lock);
	nsr_status_set(&res->st, NSR_OK, "%s", "");
	return NSR_OK;
}

/* execd_run_stop - TERM the saves still running; free everything. */
void execd_run_stop(void)
{
	pthread_mutex_lock(&g_runs.lock);
	for (size_t i = 0; i < EXEC_RUNS_MAX; i++) {
		struct run *r = &g_runs.runs[i];

		for (size_t j = 0; r->id && j < r->n; j++)
			if (r->sets[j].pid > 0)
				kill(r->sets[j].pid, SIGTERM);
		if (r->id)
			free_run(r);
	}
	pthread_mutex_unlock(&g_runs.lock);
	free(g_runs.save);
	g_runs.save = NULL;
	for (int i = 0; i < g_runs.nservers; i++)
		free(g_runs.servers[i]);
	g_runs.nservers = 0;
	free(g_runs.mounts);
	g_runs.mounts = NULL;
}
