/*
 * nsrexecd - the host agent.  Today it is the locator ("portmapper") of
 * its host: daemons register the port each of their programs is served on,
 * and clients ask which port serves a program, so a client needs only the
 * server's host name.  It listens on the exec port (default 7937) and the
 * locator port (default 7938); with -s it also runs and supervises nsrsnmd,
 * making the host a storage node.  For the servers named with -S it runs
 * save (RUN_SAVE, RUN_POLL: run.c), as scheduled backups need.
 */
#include "nsr/compat.h"

#include <signal.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/daemon.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/log.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsrexecd.h"
#include "nsr/rpc_status.h"
#include "nsr/xmalloc.h"
#include "execd.h"

#define MAX_ENTRIES 1024

struct entry {
	loc_entry e;
	char name[NSR_SHORT_MAX];
};

struct execd {
	struct entry tab[MAX_ENTRIES];
	int n;
	int locator_port;
	int storage_node;
	char mover_user[64]; /* -U: with -s, the movers run as this user */
	struct nsr_super *super;
};

static struct execd g_execd;

/* find - index of prog/vers in the table or -1. */
static int find(struct execd *x, uint32_t prog, uint32_t vers)
{
	for (int i = 0; i < x->n; i++)
		if (x->tab[i].e.prog == prog && x->tab[i].e.vers == vers)
			return i;
	return -1;
}

/* drop - remove entry i. */
static void drop(struct execd *x, int i)
{
	x->tab[i] = x->tab[--x->n];
	x->tab[i].e.name = x->tab[i].name;
}

/* loc_getport - LOC_GETPORT: which port serves prog/vers here. */
static int loc_getport(void *ctx, void *argp, void *resp,
		       struct nsr_rpc_call *call)
{
	struct execd *x = ctx;
	loc_key *k = argp;
	loc_get_res *r = resp;
	int i = find(x, k->prog, k->vers);
	char msg[256];

	NSR_UNUSED(call);
	if (i >= 0 && kill(x->tab[i].e.pid, 0) != 0 && errno == ESRCH) {
		nsr_info("forgetting %s (pid %d): no longer running",
			 x->tab[i].name, x->tab[i].e.pid);
		drop(x, i);
		i = -1;
	}
	if (i < 0) {
		snprintf(msg, sizeof(msg),
			 "%s (RPC program 0x%x version %u) is not registered "
			 "on this host: is it running?",
			 nsr_rpc_prog_name(k->prog), k->prog, k->vers);
		nsr_status_set(&r->st, NSR_ERR_NOTFOUND, "%s", msg);
		return NSR_OK;
	}
	nsr_status_set(&r->st, NSR_OK, "%s", "");
	r->port = x->tab[i].e.port;
	return NSR_OK;
}

/* loc_register - LOC_REGISTER: only local daemons may register. */
static int loc_register(void *ctx, void *argp, void *resp,
			struct nsr_rpc_call *call)
{
	struct execd *x = ctx;
	loc_reg_args *a = argp;
	nsr_void_res *r = resp;
	int i;

	if (!nsr_rpc_call_peer_is_local(call)) {
		nsr_warn("refused registration of program 0x%x from %s",
			 a->prog, nsr_rpc_call_peer(call));
		nsr_status_set(&r->st, NSR_ERR_PERM, "%s",
			       "registration is accepted only from this host");
		return NSR_OK;
	}
	if (a->port <= 0 || a->port > 65535) {
		nsr_status_set(&r->st, NSR_ERR_INVAL, "%s", "bad port");
		return NSR_OK;
	}
	i = find(x, a->prog, a->vers);
	if (i < 0) {
		if (x->n >= MAX_ENTRIES) {
			nsr_status_set(&r->st, NSR_ERR_LIMIT, "%s",
				       "locator table full");
			return NSR_OK;
		}
		i = x->n++;
	}
	x->tab[i].e.prog = a->prog;
	x->tab[i].e.vers = a->vers;
	x->tab[i].e.port = a->port;
	x->tab[i].e.pid = a->pid;
	snprintf(x->tab[i].name, sizeof(x->tab[i].name), "%s", a->name);
	x->tab[i].e.name = x->tab[i].name;
	nsr_info("registered %s (pid %d): program 0x%x version %u on port %d",
		 a->name, a->pid, a->prog, a->vers, a->port);
	nsr_status_set(&r->st, NSR_OK, "%s", "");
	return NSR_OK;
}

/* loc_unregister - LOC_UNREGISTER. */
static int loc_unregister(void *ctx, void *argp, void *resp,
			  struct nsr_rpc_call *call)
{
	struct execd *x = ctx;
	loc_key *k = argp;
	nsr_void_res *r = resp;
	int i = find(x, k->prog, k->vers);

	if (!nsr_rpc_call_peer_is_local(call)) {
		nsr_status_set(&r->st, NSR_ERR_PERM, "%s",
			       "only local daemons may unregister");
		return NSR_OK;
	}
	if (i >= 0)
		drop(x, i);
	nsr_status_set(&r->st, NSR_OK, "%s", "");
	return NSR_OK;
}

/* loc_dump - LOC_DUMP: the whole table (for rpcinfo-like listing). */
static int loc_dump(void *ctx, void *argp, void *resp,
		    struct nsr_rpc_call *call)
{
	struct execd *x = ctx;
	loc_dump_res *r = resp;

	NSR_UNUSED(argp);
	NSR_UNUSED(call);
	nsr_status_set(&r->st, NSR_OK, "%s", "");
	r->entries.entries_len = (u_int)x->n;
	r->entries.entries_val =
		nsr_xcalloc((size_t)x->n + 1, sizeof(loc_entry));
	for (int i = 0; i < x->n; i++) {
		r->entries.entries_val[i] = x->tab[i].e;
		r->entries.entries_val[i].name = nsr_xstrdup(x->tab[i].name);
	}
	return NSR_OK;
}

static const struct nsr_rpc_proc execd_procs[] = {
	{LOC_GETPORT, "getport", NSR_XDR(xdr_loc_key), sizeof(loc_key),
	 NSR_XDR(xdr_loc_get_res), sizeof(loc_get_res), loc_getport,
	 NSR_RPC_SERIAL},
	{LOC_REGISTER, "register", NSR_XDR(xdr_loc_reg_args),
	 sizeof(loc_reg_args), NSR_XDR(xdr_nsr_void_res), sizeof(nsr_void_res),
	 loc_register, NSR_RPC_SERIAL},
	{LOC_UNREGISTER, "unregister", NSR_XDR(xdr_loc_key), sizeof(loc_key),
	 NSR_XDR(xdr_nsr_void_res), sizeof(nsr_void_res), loc_unregister,
	 NSR_RPC_SERIAL},
	{LOC_DUMP, "dump", NSR_XDR(xdr_void), 0, NSR_XDR(xdr_loc_dump_res),
	 sizeof(loc_dump_res), loc_dump, NSR_RPC_SERIAL},
	NSR_RPC_PROC(RUN_SAVE, "run_save", exec_save_args, exec_run_res,
		     execd_run_save, NSR_RPC_SERIAL),
	NSR_RPC_PROC(RUN_POLL, "run_poll", exec_poll_args, exec_poll_res,
		     execd_run_poll, NSR_RPC_SERIAL),
	{REVOKED_NOTIFY, "revoked_notify", NSR_XDR(xdr_void), 0,
	 NSR_XDR(xdr_nsr_void_res), sizeof(nsr_void_res),
	 execd_revoked_notify, 0},
};

static const struct nsr_rpc_prog execd_progs[] = {
	{NSREXECD_PROG, NSREXECD_V1, execd_procs, NSR_ARRAY_SIZE(execd_procs),
	 &g_execd, NULL},
};

/* execd_option - -l locator port, -s storage node, -U the movers' user;
 * -x, -S, -M: run.c. */
static int execd_option(struct nsr_daemon *d, int opt, const char *arg)
{
	if (opt == 'l') {
		g_execd.locator_port = atoi(arg);
		return g_execd.locator_port > 0 && g_execd.locator_port < 65536
			       ? 0
			       : -1;
	}
	if (opt == 's') {
		g_execd.storage_node = 1;
		return 0;
	}
	if (opt == 'U')
		return nsr_daemon_user_opt(d, opt, arg, g_execd.mover_user,
					   sizeof(g_execd.mover_user));
	return execd_run_option(opt, arg);
}

/* Dead local sockets of daemons run without root (-u), which cannot
 * remove their own from root's sockets/ (nsr/rpc.h): removed at start,
 * at stop and every SWEEP_TICKS ticks, once bound SWEEP_AGE_S ago. */
#define SWEEP_TICKS 60
#define SWEEP_AGE_S 10

/* sweep - remove the dead sockets, saying how many. */
static void sweep(struct nsr_daemon *d)
{
	int n = nsr_rpc_local_sweep(d->root, 0, SWEEP_AGE_S);

	if (n > 0)
		nsr_info("removed %d local socket(s) no daemon listens on "
			 "(daemons run without root cannot remove theirs)", n);
}

/* execd_started - open the locator port, start nsrsnmd on storage nodes. */
static int execd_started(struct nsr_daemon *d)
{
	struct nsr_buf err;
	int bound;

	sweep(d);
	if (!g_execd.locator_port)
		g_execd.locator_port = nsr_rpc_locator_port();
	nsr_buf_init(&err, 0);
	if (g_execd.locator_port != d->bound_port &&
	    nsr_daemon_listen(d, g_execd.locator_port, &bound, &err) !=
		    NSR_OK) {
		nsr_error("cannot listen on locator port %d: %s",
			  g_execd.locator_port, err.data);
		nsr_buf_release(&err);
		return -1;
	}
	nsr_buf_release(&err);
	nsr_info("locator on port %d", g_execd.locator_port);
	execd_run_start(d);
	execd_vouch_start(d);
	execd_revoked_start(d);
	/* Children find the locator through the environment. */
	{
		char port[16];

		snprintf(port, sizeof(port), "%d", g_execd.locator_port);
		setenv("NSR_PORTMAP_PORT", port, 1);
	}
	if (g_execd.storage_node) {
		char *snmd = nsr_xcheck(nsr_path_join(d->exe_dir, "nsrsnmd"));
		char *argv[6 + 2 * NSR_DAEMON_MAX_ADDRS +
			   2 * EXECD_SERVERS_MAX] = {snmd, (char *)"-R",
						     d->root};
		int n = 3;

		nsr_daemon_addr_argv(d, argv, &n);
		execd_run_server_argv(argv, &n);
		if (g_execd.mover_user[0]) {
			argv[n++] = (char *)"-U";
			argv[n++] = g_execd.mover_user;
		}
		argv[n] = NULL;

		g_execd.super = nsr_xcheck(nsr_super_new());
		if (nsr_super_add(g_execd.super, "nsrsnmd", argv) != NSR_OK)
			nsr_xdie(0);
		nsr_super_set_stderr(g_execd.super, nsr_daemon_log_fd(d));
		nsr_super_start_all(g_execd.super);
		free(snmd);
	}
	return 0;
}

/* execd_tick - the periodic tick: restart nsrsnmd after its back-off;
 * now and then the dead local sockets. */
static void execd_tick(struct nsr_daemon *d)
{
	static unsigned ticks;

	if (g_execd.super)
		nsr_super_tick(g_execd.super);
	execd_run_tick();
	if (++ticks % SWEEP_TICKS == 0)
		sweep(d);
}

/* execd_child_exit - SIGCHLD: hand a dead child to the supervisor. */
static void execd_child_exit(struct nsr_daemon *d, pid_t pid, int status)
{
	NSR_UNUSED(d);
	if (execd_run_exited(pid, status))
		return;
	if (g_execd.super)
		nsr_super_exited(g_execd.super, pid, status);
}

/* execd_stop - stop nsrsnmd; forget the table's borrowed names. */
static void execd_stop(struct nsr_daemon *d)
{
	execd_revoked_stop();
	execd_vouch_stop(d);
	execd_run_stop();
	if (g_execd.super) {
		nsr_super_stop_all(g_execd.super, 10000);
		nsr_super_free(g_execd.super);
		g_execd.super = NULL;
	}
	for (int i = 0; i < g_execd.n; i++)
		g_execd.tab[i].e.name = NULL;
	sweep(d);
}

static const struct nsr_daemon_ops execd_ops = {
	.name = "nsrexecd",
	.summary = "OpenNSR host agent: locator for RPC programs, storage node "
		   "supervisor, runs save for its servers",
	.extra_opts = "l:sx:S:M:U:",
	.extra_usage =
		"  -l port     locator port (env NSR_PORTMAP_PORT, default "
		"7938)\n"
		"  -s          storage node: run and supervise nsrsnmd\n"
		"  -U user     with -s: the data movers run as user\n"
		"  -S server   a server that may run save here and, with -s,\n"
		"              use this storage node's devices (repeatable)\n"
		"  -x path     the save program (default: next to nsrexecd)\n"
		"  -M file     mount table for the save set All (default "
		"/proc/self/mounts)\n",
	.default_port = NSR_EXEC_PORT_DEFAULT,
	.no_register = 1,
	.tick_ms = 1000,
	.progs = execd_progs,
	.nprogs = NSR_ARRAY_SIZE(execd_progs),
	.option = execd_option,
	.started = execd_started,
	.tick = execd_tick,
	.child_exit = execd_child_exit,
	.stop = execd_stop,
};

/* main - parse options, do the work, exit status. */
int main(int argc, char **argv)
{
	const char *p = getenv("NSR_EXEC_PORT");
	struct nsr_daemon_ops ops = execd_ops;

	if (p && atoi(p) > 0)
		ops.default_port = atoi(p);
	return nsr_daemon_main(argc, argv, &ops, &g_execd);
}
