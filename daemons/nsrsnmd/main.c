/*
 * nsrsnmd - the storage node manager.  nsrexecd -s runs it on a storage
 * node; nsrd (and tests) ask it, with SNM_MOVER, for a data mover of a
 * device for one more session.  It keeps one slot per device with up to
 * SNMD_MOVERS_MAX movers: a running nsrmmd is handed out again (the least
 * loaded by the session counts nsrd sends), another is started while all
 * serve target sessions or more and the device may have more (dynamic
 * nsrmmd, policy.c), and a first one is started on demand (spawn.c)
 * unless the device is throttled because its movers keep dying right
 * after start.  Children are reaped through the skeleton's child_exit;
 * idle movers exit by themselves (-i); all are stopped on SIGTERM.
 * SNM_STATUS lists the running movers.
 *
 * Locking: tab_mu guards the slot table; spawn_mu serialises starts, so
 * a device never gets more movers than asked and a pipe's write end is
 * inherited by one child only.  The readiness wait holds spawn_mu, not
 * tab_mu, so the main loop's child_exit never waits on it.
 */
#include "nsr/compat.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/clock.h"
#include "nsr/daemon.h"
#include "nsr/dev.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/log.h"
#include "nsr/proc.h"
#include "nsr/rpc.h"
#include "nsr/rpc_status.h"
#include "nsr/rpc/nsrsnm.h"
#include "nsr/xmalloc.h"

#include "snmd.h"

#define MAX_SLOTS 256
#define READY_TIMEOUT_MS 10000
/* A request waits out a restart hold of at most this long. */
#define HOLD_WAIT_MS 5000

struct snmd {
	pthread_mutex_t tab_mu, spawn_mu;
	struct snmd_slot *slots[MAX_SLOTS];
	int nslots;
	unsigned idle_sec; /* -i: handed to every mover */
	char mover_user[64]; /* -U: the movers run as this user ("" = root) */
	struct nsr_daemon *d;
	char *mmd_exe;
	struct snmd_template tmpl; /* spawn.c; guarded by spawn_mu */
};

static struct snmd g_snmd = {
	.tab_mu = PTHREAD_MUTEX_INITIALIZER,
	.spawn_mu = PTHREAD_MUTEX_INITIALIZER,
};

/* set_status - fill an nsr_status; errors are logged too. */
static void set_status(nsr_status *st, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_status(nsr_status *st, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	nsr_status_vset(st, code, fmt, ap);
	va_end(ap);
	if (code != NSR_OK)
		nsr_error("%s", st->msg);
}

/* find_slot - the device's slot or NULL (holds tab_mu). */
static struct snmd_slot *find_slot(struct snmd *x, const char *device)
{
	for (int i = 0; i < x->nslots; i++)
		if (strcmp(x->slots[i]->device, device) == 0)
			return x->slots[i];
	return NULL;
}

/* slot_set - (re)configure a slot from the request (holds tab_mu). */
static void slot_set(struct snmd_slot *s, const snm_mover_args *a,
		     const char *device)
{
	if (!s->device)
		s->device = nsr_xstrdup(device);
	free(s->media_type);
	s->media_type = nsr_xstrdup(a->dev.media_type);
	free(s->path);
	s->path = nsr_xstrdup(a->dev.path);
	free(s->server);
	s->server = nsr_xstrdup(a->server);
	s->capacity = a->dev.capacity;
	s->segment_size = a->dev.segment_size;
	s->target_sessions = a->dev.target_sessions;
	s->max_sessions = a->dev.max_sessions;
	s->max_movers = a->dev.max_movers;
}

/* next_num - the lowest mover number no running mover uses. */
static int next_num(struct snmd *x)
{
	for (int n = 1;; n++) {
		int used = 0;

		for (int i = 0; i < x->nslots && !used; i++)
			for (int k = 0; k < SNMD_MOVERS_MAX && !used; k++)
				used = x->slots[i]->mv[k].pid &&
				       x->slots[i]->mv[k].num == n;
		if (!used)
			return n;
	}
}

/* alive - 1 if the mover is running (not dead, not a zombie the main
 * loop has yet to reap). */
static int alive(const struct snmd_mover *v)
{
	return v->pid > 0 && v->port > 0 && nsr_proc_live(v->pid, NULL);
}

/* slot_running - how many movers of s run; running[i] says which. */
static unsigned slot_running(const struct snmd_slot *s, int *running)
{
	unsigned n = 0;

	for (int i = 0; i < SNMD_MOVERS_MAX; i++) {
		running[i] = alive(&s->mv[i]);
		n += (unsigned)running[i];
	}
	return n;
}

/* path_owner - a slot of another device on the same path with a running
 * mover, or NULL (holds tab_mu): two devices on one medium would destroy
 * it. */
static const struct snmd_slot *path_owner(struct snmd *x, const char *path,
					  const char *device, pid_t *pid)
{
	for (int i = 0; i < x->nslots; i++) {
		const struct snmd_slot *s = x->slots[i];

		if (!s->path || strcmp(s->path, path) != 0 ||
		    strcmp(s->device, device) == 0)
			continue;
		for (int k = 0; k < SNMD_MOVERS_MAX; k++)
			if (alive(&s->mv[k])) {
				*pid = s->mv[k].pid;
				return s;
			}
	}
	return NULL;
}

/* load_of - the sessions nsrd counts on the mover pid (0 if unnamed). */
static unsigned load_of(const snm_mover_args *a, pid_t pid)
{
	for (u_int i = 0; i < a->load.load_len; i++)
		if (a->load.load_val[i].pid == pid)
			return a->load.load_val[i].sessions;
	return 0;
}

/* check_args - validate a hostile SNM_MOVER request; NULL or a message. */
static const char *check_args(const snm_mover_args *a)
{
	enum nsr_dev_type t;

	if (nsr_dev_type_parse(a->dev.media_type, &t) != NSR_OK)
		return "unknown media type (adv_file, vtape or tape)";
	if (!*a->dev.path || a->dev.path[0] != '/')
		return "the device path must be absolute";
	if (strlen(a->dev.name) > 255 || strlen(a->dev.path) > 1023)
		return "device name or path too long";
	return NULL;
}

/* start_mover - start mover k of the slot, whose entry is reserved (pid
 * -1) (holds spawn_mu, not tab_mu). */
static int start_mover(struct snmd *x, struct snmd_slot *s, int k,
		       nsr_status *st)
{
	struct snmd_mover *v = &s->mv[k];
	struct snmd_spawn_args sa;
	struct nsr_buf why;
	pid_t pid;
	int port, rc, running[SNMD_MOVERS_MAX], forked = 0;
	long long t0;
	unsigned n;

	memset(&sa, 0, sizeof(sa));
	sa.exe = x->mmd_exe;
	sa.root = x->d->root;
	sa.d = x->d;
	sa.idle_sec = x->idle_sec;
	sa.user = x->mover_user;
	sa.slot = s;
	sa.num = v->num;
	sa.tmpl = &x->tmpl;
	sa.forked = &forked;
	nsr_buf_init(&why, 4096);
	t0 = nsr_clock_mono_us();
	rc = snmd_spawn(&sa, READY_TIMEOUT_MS, &pid, &port, &why);
	t0 = nsr_clock_mono_us() - t0;
	pthread_mutex_lock(&x->tab_mu);
	if (rc == NSR_OK) {
		v->pid = pid;
		v->port = port;
		n = slot_running(s, running);
		nsr_info("started nsrmmd #%d (pid %ld%s, ready in %lld.%lld "
			 "ms) for device %s (%s %s) on port %d: %u of at most "
			 "%u movers of the device", v->num, (long)pid,
			 forked ? ", from the template" : "", t0 / 1000,
			 t0 % 1000 / 100, s->device, s->media_type, s->path,
			 port, n, snmd_policy_mover_limit(s));
	} else {
		snmd_policy_exited(s, v->started_ms, -1, snmd_policy_now());
		memset(v, 0, sizeof(*v));
		snprintf(s->last_exit, sizeof(s->last_exit), "not ready");
		set_status(st, rc == NSR_ERR_TIMEOUT ? rc : NSR_ERR_AGAIN,
			   "no data mover for device %s: %s", s->device,
			   why.data);
	}
	pthread_mutex_unlock(&x->tab_mu);
	nsr_buf_release(&why);
	return rc;
}

/* hand_out - answer with mover k of s (holds tab_mu). */
static void hand_out(const struct snmd_slot *s, int k, snm_mover_res *r)
{
	r->port = s->mv[k].port;
	r->pid = s->mv[k].pid;
	set_status(&r->st, NSR_OK, "%s", "");
}

/* free_entry - an unused mover entry of s, or -1 (holds tab_mu). */
static int free_entry(const struct snmd_slot *s)
{
	for (int k = 0; k < SNMD_MOVERS_MAX; k++)
		if (s->mv[k].pid == 0)
			return k;
	return -1;
}

/* settings_changed - the device's capacity or segment size is not what
 * its running movers were started with: said once per new pair, as
 * they keep theirs until they exit (holds tab_mu). */
static void settings_changed(struct snmd_slot *s, const snm_mover_args *a,
			     unsigned n)
{
	if (n == 0 || (a->dev.capacity == s->capacity &&
		       a->dev.segment_size == s->segment_size) ||
	    (s->told && a->dev.capacity == s->told_capacity &&
	     a->dev.segment_size == s->told_segment))
		return;
	s->told = 1;
	s->told_capacity = a->dev.capacity;
	s->told_segment = a->dev.segment_size;
	nsr_info("device %s: its volume default capacity or segment size "
		 "changed; its %u running mover(s) keep the former until they "
		 "exit when idle (-i; or stop them: the next ones start with "
		 "the new)", s->device, n);
}

/* snm_mover - SNM_MOVER: the port of a mover of the device for one more
 * session, started on demand. */
static int snm_mover(void *ctx, void *args, void *res,
		     struct nsr_rpc_call *call)
{
	struct snmd *x = ctx;
	snm_mover_args *a = args;
	snm_mover_res *r = res;
	const char *device = *a->dev.name ? a->dev.name : a->dev.path;
	const char *bad = check_args(a);
	const struct snmd_slot *owner;
	struct snmd_slot *s;
	int running[SNMD_MOVERS_MAX], k;
	unsigned sessions[SNMD_MOVERS_MAX], wait, waited = 0, nrun;
	pid_t opid = 0;
	long long now;

	NSR_UNUSED(call);
	if (bad) {
		set_status(&r->st, NSR_ERR_INVAL, "device %s (%s %s): %s",
			   device, a->dev.media_type, a->dev.path, bad);
		return NSR_OK;
	}
again:
	pthread_mutex_lock(&x->spawn_mu);
	pthread_mutex_lock(&x->tab_mu);
	owner = path_owner(x, a->dev.path, device, &opid);
	if (owner) {
		set_status(&r->st, NSR_ERR_BUSY, "device %s: %s is already "
			   "served by the mover of device %s (pid %ld); one "
			   "medium cannot have two devices", device,
			   a->dev.path, owner->device, (long)opid);
		pthread_mutex_unlock(&x->tab_mu);
		goto out;
	}
	s = find_slot(x, device);
	if (!s && x->nslots >= MAX_SLOTS) {
		pthread_mutex_unlock(&x->tab_mu);
		set_status(&r->st, NSR_ERR_LIMIT, "no data mover for device "
			   "%s: this storage node already serves %d devices",
			   device, MAX_SLOTS);
		goto out;
	}
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s) {
			pthread_mutex_unlock(&x->tab_mu);
			set_status(&r->st, NSR_ERR_NOMEM, "out of memory");
			goto out;
		}
		x->slots[x->nslots++] = s;
	}
	nrun = slot_running(s, running);
	if (nrun > 0 &&
	    (strcmp(s->path, a->dev.path) != 0 ||
	     strcmp(s->media_type, a->dev.media_type) != 0)) {
		pthread_mutex_unlock(&x->tab_mu);
		set_status(&r->st, NSR_ERR_BUSY, "device %s is served by a "
			   "mover for %s %s, not %s %s; stop using the old "
			   "definition or give the device another name",
			   device, s->media_type, s->path, a->dev.media_type,
			   a->dev.path);
		goto out;
	}
	if (s->media_type) { /* the policy's input, as nsrd says now */
		s->target_sessions = a->dev.target_sessions;
		s->max_sessions = a->dev.max_sessions;
		s->max_movers = a->dev.max_movers;
		settings_changed(s, a, nrun);
	}
	for (k = 0; k < SNMD_MOVERS_MAX; k++)
		sessions[k] = running[k] ? load_of(a, s->mv[k].pid) : 0;
	k = s->media_type ? snmd_policy_choose(s, running, sessions) : -1;
	if (k >= 0) {
		hand_out(s, k, r);
		pthread_mutex_unlock(&x->tab_mu);
		goto out;
	}
	now = snmd_policy_now();
	if (!snmd_policy_may_start(s, now, &wait) && wait <= HOLD_WAIT_MS &&
	    waited + wait <= HOLD_WAIT_MS) {
		/* A short hold (a mover killed once): the session waits it
		 * out instead of failing; a crash loop's longer holds fail
		 * the request with the reason. */
		pthread_mutex_unlock(&x->tab_mu);
		pthread_mutex_unlock(&x->spawn_mu);
		waited += wait;
		nsr_info("device %s: waiting %u ms for the restart hold of its "
			 "mover", device, wait);
		poll(NULL, 0, (int)wait + 10);
		goto again;
	}
	if (!snmd_policy_may_start(s, now, &wait)) {
		pthread_mutex_unlock(&x->tab_mu);
		set_status(&r->st, NSR_ERR_AGAIN, "the data mover of device "
			   "%s keeps failing right after its start (last: "
			   "%s); next attempt in %u.%u s; see daemon.log",
			   device, s->last_exit, wait / 1000,
			   wait % 1000 / 100);
		goto out;
	}
	k = free_entry(s);
	if (k < 0) {
		pthread_mutex_unlock(&x->tab_mu);
		set_status(&r->st, NSR_ERR_AGAIN, "device %s: its %d movers "
			   "have not all been reaped yet; try again",
			   device, SNMD_MOVERS_MAX);
		goto out;
	}
	slot_set(s, a, device);
	s->mv[k].num = next_num(x);
	s->mv[k].pid = -1; /* reserved while it starts */
	s->mv[k].port = 0;
	s->mv[k].started_ms = now;
	s->started_ms = now;
	pthread_mutex_unlock(&x->tab_mu);
	if (start_mover(x, s, k, &r->st) == NSR_OK) {
		pthread_mutex_lock(&x->tab_mu);
		hand_out(s, k, r);
		pthread_mutex_unlock(&x->tab_mu);
	}
out:
	pthread_mutex_unlock(&x->spawn_mu);
	return NSR_OK;
}

/* snm_status - SNM_STATUS: the running movers. */
static int snm_status(void *ctx, void *args, void *res,
		      struct nsr_rpc_call *call)
{
	struct snmd *x = ctx;
	snm_status_res *r = res;
	u_int n = 0;

	NSR_UNUSED(args);
	NSR_UNUSED(call);
	pthread_mutex_lock(&x->tab_mu);
	r->movers.movers_val = nsr_xcalloc(256, sizeof(snm_mover_info));
	for (int i = 0; i < x->nslots; i++) {
		struct snmd_slot *s = x->slots[i];

		for (int k = 0; k < SNMD_MOVERS_MAX && n < 256; k++) {
			if (!alive(&s->mv[k]))
				continue;
			r->movers.movers_val[n].device =
				nsr_xstrdup(s->device);
			r->movers.movers_val[n].port = s->mv[k].port;
			r->movers.movers_val[n].pid = s->mv[k].pid;
			n++;
		}
	}
	r->movers.movers_len = n;
	pthread_mutex_unlock(&x->tab_mu);
	set_status(&r->st, NSR_OK, "%s", "");
	return NSR_OK;
}

static const struct nsr_rpc_proc snm_procs[] = {
	{SNM_MOVER, "mover", NSR_XDR(xdr_snm_mover_args),
	 sizeof(snm_mover_args), NSR_XDR(xdr_snm_mover_res),
	 sizeof(snm_mover_res), snm_mover, NSR_RPC_ADMIN},
	{SNM_STATUS, "status", NSR_XDR(xdr_void), 0,
	 NSR_XDR(xdr_snm_status_res), sizeof(snm_status_res), snm_status, 0},
};

static const struct nsr_rpc_prog snm_progs[] = {
	{NSRSNMD_PROG, NSRSNMD_V1, snm_procs, NSR_ARRAY_SIZE(snm_procs),
	 &g_snmd, snmd_authz},
};

/* snmd_option - -i idle seconds for the movers, -S a server served. */
static int snmd_option(struct nsr_daemon *d, int opt, const char *arg)
{
	struct snmd *x = d->ctx;
	char *end;

	if (opt == 'S')
		return snmd_authz_server(arg);
	if (opt == 'U')
		return nsr_daemon_user_opt(d, opt, arg, x->mover_user,
					   sizeof(x->mover_user));
	if (opt != 'i')
		return -1;
	x->idle_sec = (unsigned)strtoul(arg, &end, 10);
	return *end || x->idle_sec == 0 ? -1 : 0;
}

/* snmd_init - find nsrmmd next to us. */
static int snmd_init(struct nsr_daemon *d)
{
	struct snmd *x = d->ctx;
	const char *e;

	x->d = d;
	x->mmd_exe = nsr_xcheck(nsr_path_join(d->exe_dir, "nsrmmd"));
	x->tmpl.fs.fd = -1;
	e = getenv("NSR_MOVER_TEMPLATE");
	x->tmpl.off = e && strcmp(e, "0") == 0;
	e = getenv("NSR_MOVER_IDLE");
	if (!x->idle_sec && e && atoi(e) > 0)
		x->idle_sec = (unsigned)atoi(e);
	if (access(x->mmd_exe, X_OK) != 0) {
		nsr_error("cannot run the data mover %s: %s", x->mmd_exe,
			  strerror(errno));
		return -1;
	}
	/* Ready before the first request: a group's first sessions wait
	 * for their movers' starts (else fork+exec, or started later). */
	pthread_mutex_lock(&x->spawn_mu);
	snmd_template_up(&x->tmpl, x->mmd_exe);
	pthread_mutex_unlock(&x->spawn_mu);
	return 0;
}

/* snmd_child_exit - a mover ended: free its entry, update the throttle. */
static void snmd_child_exit(struct nsr_daemon *d, pid_t pid, int status)
{
	struct snmd *x = d->ctx;
	int normal = WIFEXITED(status) && WEXITSTATUS(status) == 0;
	char how[64];
	int port = 0;

	nsr_exit_status_text(status, how, sizeof(how));
	if (pid == atomic_load(&x->tmpl.running)) {
		atomic_store(&x->tmpl.reaped, pid);
		nsr_warn("the mover template (pid %ld) ended: %s; the next "
			 "mover starts a new one", (long)pid, how);
		return;
	}
	pthread_mutex_lock(&x->tab_mu);
	for (int i = 0; i < x->nslots; i++) {
		struct snmd_slot *s = x->slots[i];

		for (int k = 0; k < SNMD_MOVERS_MAX; k++) {
			struct snmd_mover *v = &s->mv[k];
			long long started = v->started_ms;
			int num = v->num;

			if (v->pid != pid)
				continue;
			port = v->port;
			memset(v, 0, sizeof(*v));
			snprintf(s->last_exit, sizeof(s->last_exit), "%s",
				 how);
			if (normal)
				nsr_info("nsrmmd #%d (pid %ld) for device %s "
					 "exited", num, (long)pid, s->device);
			else
				nsr_warn("nsrmmd #%d (pid %ld) for device %s "
					 "ended: %s; a new one starts when the "
					 "device is needed", num, (long)pid,
					 s->device, how);
			if (snmd_policy_exited(s, started, status,
					       snmd_policy_now()))
				nsr_warn("device %s: its mover failed %u "
					 "times right after start; holding "
					 "new starts for %lld ms", s->device,
					 s->quick_fails,
					 s->hold_until - snmd_policy_now());
			goto out;
		}
	}
out:
	pthread_mutex_unlock(&x->tab_mu);
	/* A mover run as another user (-U) could not remove its local
	 * socket from root's directory (nsr/rpc.h). */
	if (port > 0)
		nsr_rpc_local_sweep(d->root, port, 0);
}

/* snmd_stop - stop every mover (SIGTERM, then SIGKILL after 10 s). */
static void snmd_stop(struct nsr_daemon *d)
{
	struct snmd *x = d->ctx;

	pthread_mutex_lock(&x->spawn_mu);
	pthread_mutex_lock(&x->tab_mu);
	/* Tell them all first, so they stop in parallel. */
	for (int i = 0; i < x->nslots; i++)
		for (int k = 0; k < SNMD_MOVERS_MAX; k++)
			if (x->slots[i]->mv[k].pid > 0)
				kill(x->slots[i]->mv[k].pid, SIGTERM);
	for (int i = 0; i < x->nslots; i++) {
		struct snmd_slot *s = x->slots[i];

		for (int k = 0; k < SNMD_MOVERS_MAX; k++) {
			struct snmd_mover *v = &s->mv[k];

			if (v->pid <= 0)
				continue;
			nsr_info("stopping nsrmmd #%d (pid %ld) for device %s",
				 v->num, (long)v->pid, s->device);
			nsr_proc_stop(v->pid, 10000);
		}
		free(s->device);
		free(s->media_type);
		free(s->path);
		free(s->server);
		free(s);
	}
	x->nslots = 0;
	pthread_mutex_unlock(&x->tab_mu);
	if (x->tmpl.fs.pid > 0 &&
	    x->tmpl.fs.pid != atomic_load(&x->tmpl.reaped))
		nsr_forkserver_stop(&x->tmpl.fs, 10000);
	pthread_mutex_unlock(&x->spawn_mu);
	free(x->mmd_exe);
	x->mmd_exe = NULL;
	snmd_authz_free();
}

static const struct nsr_daemon_ops snmd_ops = {
	.name = "nsrsnmd",
	.summary = "OpenNSR storage node manager: starts the data movers "
		   "(nsrmmd) of this host's devices",
	.extra_opts = "i:S:U:",
	.extra_usage = "  -i seconds  idle time after which movers exit "
		       "(env NSR_MOVER_IDLE, default 600)\n"
		       "  -S server   a server whose nsrd may ask for movers "
		       "(repeatable; nsrexecd passes its own -S)\n"
		       "  -U user     the movers run as user (nsrexecd passes "
		       "its own -U)\n",
	.progs = snm_progs,
	.nprogs = NSR_ARRAY_SIZE(snm_progs),
	.tick_ms = 0,
	.option = snmd_option,
	.init = snmd_init,
	.child_exit = snmd_child_exit,
	.stop = snmd_stop,
};

/* main - run the daemon on the skeleton. */
int main(int argc, char **argv)
{
	return nsr_daemon_main(argc, argv, &snmd_ops, &g_snmd);
}
