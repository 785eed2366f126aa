/*
 * nsrd - the master daemon of an OpenNSR server: holds the resource
 * database (<root>/res/nsrdb), spawns and supervises nsrmmdbd, nsrindexd
 * and nsrjobd (restarting one that dies, with back-off), admits save and
 * recover sessions and performs volume operations for nsrmm; its
 * scheduler (sched.c) starts groups and savegrp runs on the clients.
 *
 * Not done yet (later issues): workflows, group and client parallelism
 * (only server parallelism is enforced), pool selection criteria, remote
 * storage nodes.
 */
#include "nsr/compat.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/host.h"
#include "nsr/index_clnt.h"
#include "nsr/jobd_clnt.h"
#include "nsr/log.h"
#include "nsr/mmdb_clnt.h"
#include "nsr/peer.h"
#include "nsr/rpc/nsrindex.h"
#include "nsr/rpc/nsrjob.h"
#include "nsr/rpc/nsrmmdb.h"
#include "nsr/snmd_clnt.h"
#include "nsr/xmalloc.h"
#include "nsrd.h"

struct nsrd g_nsrd;

/* Access classes (nsrd(8), AUTHORIZATION; nsrd_authz decides): public,
 * OWN (a host saves its own client's data) and ADMIN (administrators). */
#define PROC(num, name, targ, tres, fn) \
	NSR_RPC_PROC(num, name, targ, tres, fn, NSR_RPC_SERIAL)
#define OWN(num, name, targ, tres, fn) \
	NSR_RPC_PROC(num, name, targ, tres, fn, NSR_RPC_SERIAL | NSR_RPC_OWN)
#define ADMIN(num, name, targ, tres, fn) \
	NSR_RPC_PROC(num, name, targ, tres, fn, NSR_RPC_SERIAL | NSR_RPC_ADMIN)

static const struct nsr_rpc_proc nsrd_procs[] = {
	PROC(RES_QUERY, "res_query", res_query_args, res_list_res,
	     nsrd_res_query),
	ADMIN(RES_CREATE, "res_create", res_text_args, res_change_res,
	      nsrd_res_create),
	ADMIN(RES_UPDATE, "res_update", res_text_args, res_change_res,
	      nsrd_res_update),
	ADMIN(RES_DELETE, "res_delete", res_text_args, nsr_void_res,
	      nsrd_res_delete),
	/* its parts take the mutex themselves, in batches (session.c) */
	NSR_RPC_PROC(SAVE_START, "save_start", save_start_args, save_start_res,
		     nsrd_save_start, NSR_RPC_OWN | NSR_RPC_LOCKS_ITSELF),
	PROC(SAVE_END, "save_end", save_end_args, nsr_void_res, nsrd_save_end),
	/* the client is known from the save set: checked in the handler */
	PROC(RECOVER_START, "recover_start", rec_start_args, rec_start_res,
	     nsrd_recover_start),
	PROC(RECOVER_END, "recover_end", rec_end_args, nsr_void_res,
	     nsrd_recover_end),
	ADMIN(LABEL, "label", label_args, label_res, nsrd_label),
	ADMIN(MOUNT, "mount", label_args, label_res, nsrd_mount),
	ADMIN(VOL_MODE, "vol_mode", vol_mode_args, nsr_void_res,
	      nsrd_vol_mode),
	ADMIN(VOL_DELETE, "vol_delete", vol_del_args, nsr_void_res,
	      nsrd_vol_delete),
	ADMIN(UNMOUNT, "unmount", label_args, nsr_void_res, nsrd_unmount),
	PROC(NEXT_VOLUME, "next_volume", next_vol_args, next_vol_res,
	     nsrd_next_volume),
	PROC(SAVE_RENEW, "save_renew", save_renew_args, nsr_void_res,
	     nsrd_save_renew),
	{STATUS, "status", NSR_XDR(xdr_void), 0, NSR_XDR(xdr_status_res),
	 sizeof(status_res), nsrd_status, NSR_RPC_SERIAL},
	{STATUS_RATES, "status_rates", NSR_XDR(xdr_void), 0,
	 NSR_XDR(xdr_rates_res), sizeof(rates_res), nsrd_status_rates,
	 NSR_RPC_SERIAL},
	ADMIN(SAVEGRP, "savegrp", savegrp_args, savegrp_res, nsrd_savegrp),
	/* a data key only for the caller's own client (authz.c) */
	OWN(KEY_CURRENT, "key_current", key_cur_args, key_res,
	    nsrd_key_current),
	PROC(KEY_GET, "key_get", key_args, key_res, nsrd_key_get),
	ADMIN(CLONE_START, "clone_start", clone_start_args, clone_start_res,
	      nsrd_clone_start),
	ADMIN(CLONE_END, "clone_end", clone_end_args, clone_end_res,
	      nsrd_clone_end),
	/* the server's programs only (authz.c) */
	{GRANT_KEY, "grant_key", NSR_XDR(xdr_void), 0,
	 NSR_XDR(xdr_grant_key_res), sizeof(grant_key_res), nsrd_grant_key,
	 NSR_RPC_SERIAL | NSR_RPC_ADMIN},
	/* public: the list names no secret (and a revoked host's calls
	 * end at the handshake); reads a file, not struct nsrd */
	{REVOKED_GET, "revoked_get", NSR_XDR(xdr_void), 0,
	 NSR_XDR(xdr_revoked_res), sizeof(revoked_res), nsrd_revoked_get,
	 0},
};

static const struct nsr_rpc_prog nsrd_progs[] = {
	{NSRD_PROG, NSRD_V1, nsrd_procs, NSR_ARRAY_SIZE(nsrd_procs), &g_nsrd,
	 nsrd_authz},
};

/* veto_device - a device's path is absolute and, on the server, exists;
 * a device in use (a volume mounted, sessions on it) is not deleted. */
static int veto_device(enum nsr_resdb_op op, const struct nsr_res *old,
		       const struct nsr_res *new_res, struct nsr_buf *why)
{
	const struct nsr_res *r = op == NSR_RESDB_DELETE ? old : new_res;
	const char *name = r ? nsr_res_get(r, "name") : NULL;
	const char *vol, *path, *opath;
	char host[NSR_HOST_MAX + 1] = "", ohost[NSR_HOST_MAX + 1] = "";
	int busy = 0;

	if (!r || !name)
		return NSR_OK;
	if (op != NSR_RESDB_DELETE) {
		path = nsrd_device_host(r, host, sizeof(host));
		if (path && path[0] != '/') {
			nsr_buf_addf(why, "device %s: the path '%s' is not "
				     "absolute; give the whole path (as "
				     "/backup/aftd1 or rd=HOST:/backup/aftd1)",
				     name, path);
			return NSR_ERR_INVAL;
		}
		/* devpath.c: checked when set, for a device on the server */
		opath = old ? nsrd_device_host(old, ohost, sizeof(ohost))
			    : NULL;
		if (path && !host[0] && (!opath || strcmp(opath, path) != 0))
			return nsrd_device_path_check(
				name, nsr_res_get(r, "media type"), path, why);
		return NSR_OK;
	}
	vol = nsr_res_get(old, "volume name");
	if (vol && *vol) {
		nsr_buf_addf(why, "device %s has volume %s mounted; unmount it "
			     "first (nsrmm -u -f %s)", name, vol, name);
		return NSR_ERR_BUSY;
	}
	busy = nsrd_device_sessions(&g_nsrd, name);
	if (busy) {
		nsr_buf_addf(why, "device %s serves %d session(s) now; delete "
			     "it when they have ended", name, busy);
		return NSR_ERR_BUSY;
	}
	return NSR_OK;
}

/* veto - rules the schema cannot express. */
static int veto(void *arg, enum nsr_resdb_op op, const struct nsr_res *old,
		const struct nsr_res *new_res, struct nsr_buf *why)
{
	const char *type = old ? nsr_res_type(old)
			       : new_res ? nsr_res_type(new_res) : NULL;
	const char *name = old ? nsr_res_get(old, "name") : NULL;

	NSR_UNUSED(arg);
	if (type && strcasecmp(type, "NSR device") == 0)
		return veto_device(op, old, new_res, why);
	if (op != NSR_RESDB_DELETE || !type)
		return NSR_OK;
	if (strcasecmp(type, "NSR") == 0) {
		nsr_buf_addstr(
			why,
			"the server resource (type: NSR) cannot be deleted");
		return NSR_ERR_PERM;
	}
	if (name && strcmp(name, "Default") == 0 &&
	    (strcasecmp(type, "NSR pool") == 0 ||
	     strcasecmp(type, "NSR group") == 0 ||
	     strcasecmp(type, "NSR schedule") == 0)) {
		nsr_buf_addf(why,
			     "the preconfigured %s 'Default' cannot be deleted",
			     type);
		return NSR_ERR_PERM;
	}
	return NSR_OK;
}

/* share_resources - -U: the database daemons' user may read the resource
 * database (they check every call against its policy): the directory
 * and its files go to the user's group, group-readable, the directory
 * setgid so files nsrd writes later keep that group (resdb writes them
 * 0640).  The files stay root's, and nothing else under res/ changes
 * (the pass phrases and keys there stay root's alone). */
static int share_resources(struct nsrd *n, const char *dir)
{
	struct nsr_buf why;
	struct dirent *e;
	uid_t uid;
	gid_t gid;
	DIR *dd = NULL;
	int err;

	nsr_buf_init(&why, 0);
	err = nsr_daemon_user_lookup(n->db_user, &uid, &gid, &why);
	if (err != NSR_OK)
		nsr_error("-U %s", why.data); /* gone since the start */
	nsr_buf_release(&why);
	if (err != NSR_OK)
		return -1;
	if (chown(dir, 0, gid) != 0 || chmod(dir, 02750) != 0 ||
	    (dd = opendir(dir)) == NULL)
		err = errno;
	while (dd && (e = readdir(dd)) != NULL) {
		if (e->d_name[0] == '.')
			continue; /* ., .. and the lock */
		if (!err &&
		    (fchownat(dirfd(dd), e->d_name, 0, gid,
			      AT_SYMLINK_NOFOLLOW) != 0 ||
		     fchmodat(dirfd(dd), e->d_name, 0640, 0) != 0))
			err = errno;
	}
	if (dd)
		closedir(dd);
	if (err) {
		nsr_error("cannot share %s with user %s: %s", dir, n->db_user,
			  strerror(err));
		return -1;
	}
	nsr_info("nsrmmdbd, nsrindexd and nsrjobd run as %s (uid %u); the "
		 "resource database is readable to its group %u", n->db_user,
		 (unsigned)uid, (unsigned)gid);
	return 0;
}

/* nsrd_option - -U USER: run the database daemons as USER. */
static int nsrd_option(struct nsr_daemon *d, int opt, const char *arg)
{
	struct nsrd *n = d->ctx;

	if (opt != 'U')
		return -1;
	return nsr_daemon_user_opt(d, opt, arg, n->db_user,
				   sizeof(n->db_user));
}

/* nsrd_init - load (and seed) the resource database. */
static int nsrd_init(struct nsr_daemon *d)
{
	struct nsrd *n = d->ctx;
	struct nsr_resdb_opts o;
	struct nsr_res_error perr;
	struct nsr_buf why;
	char *dir = nsr_xcheck(nsr_daemon_path(d, "res/nsrdb"));
	int rc;

	n->d = d;
	if (nsrd_sessions_init(n) != 0) {
		nsr_error("out of memory for the session table");
		return -1;
	}
	if (nsr_rpc_cond_init(&n->admit_cv) != NSR_OK) {
		nsr_error("cannot make a condition variable: %s",
			  strerror(errno));
		return -1;
	}
	nsr_host_self(n->server_name, sizeof(n->server_name));
	memset(&o, 0, sizeof(o));
	o.hook = veto;
	o.refs = 1; /* references between resources: resref.c */
	o.create = 1;
	memset(&perr, 0, sizeof(perr));
	rc = nsr_resdb_open(dir, &o, &n->res, &perr);
	nsr_buf_init(&why, 0);
	if (rc) {
		nsr_res_error_format(&perr, &why);
		nsr_error("cannot load the resource database %s: %s; fix or "
			  "move the "
			  "file named, then start nsrd again",
			  dir, why.len ? why.data : nsr_strerror(rc));
		free(dir);
		nsr_buf_release(&why);
		return -1;
	}
	rc = nsr_resdb_seed(n->res, n->server_name, &why);
	if (rc)
		nsr_error("cannot create the preconfigured resources: %s",
			  why.len ? why.data : nsr_strerror(rc));
	if (!rc)
		rc = nsrd_grant_init(n);
	if (!rc && n->db_user[0])
		rc = share_resources(n, dir);
	nsr_info("resource database %s: %zu resources", dir,
		 nsr_resdb_count(n->res));
	nsr_buf_release(&why);
	free(dir);
	return rc ? -1 : 0;
}

/* wait_serving - wait (bounded) until prog answers on this host: it is
 * registered with the locator only once it listens, so a connection
 * means it serves. */
static int wait_serving(uint32_t prog, uint32_t vers, int wait_ms)
{
	struct nsr_peer *p = NULL;
	int rc = nsr_peer_new("localhost", 0, prog, vers, &p);

	if (rc == NSR_OK) {
		nsr_peer_set_wait(p, wait_ms);
		rc = nsr_peer_connect(p);
		if (rc != NSR_OK)
			nsr_error("%s did not start serving: %s",
				  nsr_rpc_prog_name(prog), nsr_peer_errmsg(p));
	}
	nsr_peer_free(p);
	return rc;
}

/* nsrd_connect_databases - the long-lived handles of the databases, once
 * each database daemon serves (so "nsrd -b" returns only when a label or
 * save can be done at once). */
static int nsrd_connect_databases(struct nsrd *n)
{
	static const uint32_t progs[][2] = {{NSRMMDBD_PROG, NSRMMDBD_V1},
					    {NSRINDEXD_PROG, NSRINDEXD_V1},
					    {NSRJOBD_PROG, NSRJOBD_V1}};
	int wait = nsr_peer_wait_default();

	for (size_t i = 0; i < NSR_ARRAY_SIZE(progs); i++)
		if (wait_serving(progs[i][0], progs[i][1],
				 wait > 60000 ? wait : 60000) != NSR_OK)
			return -1;
	/* Bookkeeping waits less than the media database and the index. */
	if (mmdb_clnt_new("localhost", wait, &n->mmdb) != NSR_OK ||
	    nsr_ixclnt_new("localhost", wait, &n->ix) != NSR_OK ||
	    nsr_jobd_new("localhost", wait < 10000 ? wait : 10000,
			 &n->jobd) != NSR_OK) {
		nsr_error("out of memory");
		return -1;
	}
	nsrd_reconcile(n);
	nsrd_clone_reconcile(n);
	return nsrd_sched_start(n);
}

/* nsrd_started - spawn the server daemons under supervision. */
static int nsrd_started(struct nsr_daemon *d)
{
	struct nsrd *n = d->ctx;
	static const char *const kids[] = {"nsrmmdbd", "nsrindexd", "nsrjobd"};

	n->super = nsr_xcheck(nsr_super_new());
	for (size_t i = 0; i < NSR_ARRAY_SIZE(kids); i++) {
		char *path = nsr_xcheck(nsr_path_join(d->exe_dir, kids[i]));
		char *argv[6 + 2 * NSR_DAEMON_MAX_ADDRS] = {path, (char *)"-R",
							     d->root};
		int na = 3;

		nsr_daemon_addr_argv(d, argv, &na);
		/* -U: the database daemons need only their own files */
		if (n->db_user[0]) {
			argv[na++] = (char *)"-u";
			argv[na++] = n->db_user;
		}
		argv[na] = NULL;

		if (nsr_super_add(n->super, kids[i], argv) != NSR_OK)
			nsr_xdie(0);
		free(path);
	}
	nsr_super_set_stderr(n->super, nsr_daemon_log_fd(d));
	nsr_super_start_all(n->super);
	return nsrd_connect_databases(n);
}

/* nsrd_tick - the periodic tick: restart children whose back-off has
 * passed (without the RPC mutex: a handler may hold it while it waits
 * for exactly that child), then settle sessions whose owner is gone. */
static void nsrd_tick(struct nsr_daemon *d)
{
	struct nsrd *n = d->ctx;

	nsr_super_tick(n->super);
	nsrd_nsrim_tick(n);
	/* A handler may hold the mutex for a while (waiting for a database
	 * to come back): settling can wait for a later tick, the loop not. */
	if (nsr_rpc_server_trylock(d->srv)) {
		nsrd_settle_orphans(n);
		nsrd_wait_lapse(n);
		nsrd_intents_resume(n);
		nsrd_revoked_tick(n);
		nsr_rpc_server_unlock(d->srv);
	}
}

/* nsrd_child_exit - SIGCHLD: hand a dead child to the supervisor. */
static void nsrd_child_exit(struct nsr_daemon *d, pid_t pid, int status)
{
	struct nsrd *n = d->ctx;

	if (nsrd_bootstrap_exited(n, pid, status))
		return;
	nsr_super_exited(n->super, pid, status);
}

/* nsrd_stop - stop the supervised daemons, newest first. */
static void nsrd_stop(struct nsr_daemon *d)
{
	struct nsrd *n = d->ctx;

	nsrd_revoked_stop();
	nsrd_sched_stop(n);
	nsrd_nsrim_stop(n);
	lanes_close(&n->lanes);
	mmdb_clnt_close(n->mmdb);
	nsr_ixclnt_close(n->ix);
	nsr_jobd_close(n->jobd);
	n->mmdb = NULL;
	n->ix = NULL;
	n->jobd = NULL;
	for (int i = 0; i < n->nsnmd; i++)
		nsr_snmd_close(n->snmd[i]);
	n->nsnmd = 0;
	if (n->super) {
		nsr_super_stop_all(n->super, 15000);
		nsr_super_free(n->super);
		n->super = NULL;
	}
}

/* nsrd_check - -t: the resource database loads. */
static int nsrd_check(struct nsr_daemon *d)
{
	struct nsr_res_error perr;
	struct nsr_resdb *db = NULL;
	struct nsr_buf why;
	char *dir = nsr_xcheck(nsr_daemon_path(d, "res/nsrdb"));
	int rc;

	struct nsr_resdb_opts o;

	memset(&o, 0, sizeof(o));
	o.readonly = 1; /* a running nsrd holds the database lock */
	memset(&perr, 0, sizeof(perr));
	rc = nsr_resdb_open(dir, &o, &db, &perr);
	if (rc && rc != NSR_ERR_NOTFOUND) {
		nsr_buf_init(&why, 0);
		nsr_res_error_format(&perr, &why);
		nsr_error("%s: %s", dir, why.data);
		nsr_buf_release(&why);
	}
	nsr_resdb_close(db);
	free(dir);
	return rc && rc != NSR_ERR_NOTFOUND ? -1 : 0;
}

static const struct nsr_daemon_ops nsrd_ops = {
	.name = "nsrd",
	.summary = "OpenNSR server master daemon: resources, sessions, media "
		   "operations",
	.tick_ms = 500,
	/* Its handlers never wait long (a save that must wait is told to
	 * ask again; at most NSRD_HOLDERS_MAX queued asks are held, up to
	 * NSRD_HOLD_MS), so 1,024 sessions need far fewer workers than
	 * connections; each worker keeps per-thread state (malloc's cache,
	 * OpenSSL's) while it lives: tests/bench/admission. */
	.max_threads = NSRD_MAX_THREADS,
	.progs = nsrd_progs,
	.nprogs = NSR_ARRAY_SIZE(nsrd_progs),
	.extra_opts = "U:",
	.extra_usage = "  -U user     run the database daemons (nsrmmdbd, "
		       "nsrindexd, nsrjobd) as user\n",
	.option = nsrd_option,
	.check = nsrd_check,
	.init = nsrd_init,
	.started = nsrd_started,
	.tick = nsrd_tick,
	.child_exit = nsrd_child_exit,
	.stop = nsrd_stop,
};

/* main - parse options, do the work, exit status. */
int main(int argc, char **argv)
{
	int rc;

	lanes_init(&g_nsrd.lanes);
	batch_init(&g_nsrd.creates, NSRD_CREATE_BATCHES, nsrd_create_batch,
		   &g_nsrd);
	batch_init(&g_nsrd.starts, NSRD_START_BATCHES, nsrd_start_batch,
		   &g_nsrd);
	rc = nsr_daemon_main(argc, argv, &nsrd_ops, &g_nsrd);
	nsr_resdb_close(g_nsrd.res);
	return rc;
}
