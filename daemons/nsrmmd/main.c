/*
 * nsrmmd - the data mover of one device.  nsrsnmd starts it on demand with
 * the device (-T type, -D path, -N name) and a pipe (-r fd) on which it
 * writes the port it serves on once it is ready; clients (nsrd, save,
 * recover, nsrmm) then label volumes, write save sets and read them back
 * through it (the nsrmmd.x protocol, client side in mmd_clnt.h).  It exits
 * by itself after an idle time (-i) so a leak or a wedged device cannot
 * live forever; nsrsnmd starts a fresh one when needed.
 *
 * This file: options, the procedure table, readiness and the idle tick.
 * label.c, save.c, recover.c hold the handlers, report.c the media
 * database calls.
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/daemon.h"
#include "nsr/err.h"
#include "nsr/forkserver.h"
#include "nsr/log.h"
#include "nsr/rpc_status.h"
#include "nsr/xmalloc.h"

#include "mmd.h"

#define IDLE_DEFAULT_SEC 600

struct mmd g_mmd = {
	.ready_fd = -1,
	.idle_sec = IDLE_DEFAULT_SEC,
	.mu = PTHREAD_MUTEX_INITIALIZER,
};

/* What a mover run as a user that cannot use its device adds to every
 * error it answers (mmd_check_access): the cause, and what to do. */
static char access_hint[512];

/* mmd_status - fill an nsr_status; errors are logged as well. */
void mmd_status(nsr_status *st, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	nsr_status_vset(st, code, fmt, ap);
	va_end(ap);
	if (code != NSR_OK && access_hint[0] && st->msg) {
		char *msg = st->msg;

		st->msg = NULL;
		nsr_status_set(st, code, "%s (%s)", msg, access_hint);
		free(msg);
	}
	if (code != NSR_OK && *st->msg)
		nsr_error("%s", st->msg);
}

/* mmd_check_access - run as a user (-u), can this mover use its device:
 * read and write it (and search it, a directory), or, not there yet,
 * make it in its parent directory?  If not, say so now and with every
 * error answered, rather than only "Permission denied" at the first
 * label or save. */
static void mmd_check_access(const struct nsr_daemon *d, struct mmd *m)
{
	const char *p = m->dev_path;
	char *parent = NULL;
	struct stat sb;
	int mode = R_OK | W_OK;

	if (geteuid() == 0 || !p)
		return;
	if (stat(p, &sb) == 0) {
		if (S_ISDIR(sb.st_mode))
			mode |= X_OK;
	} else if (errno == ENOENT) {
		const char *slash = strrchr(p, '/');

		parent = slash && slash != p ? strndup(p, (size_t)(slash - p))
					     : strdup(slash ? "/" : ".");
		if (!parent)
			return;
		p = parent;
		mode = W_OK | X_OK;
	} /* else it cannot even be looked at: faccessat says why */
	if (faccessat(AT_FDCWD, p, mode, AT_EACCESS) != 0 &&
	    (errno == EACCES || errno == EPERM || errno == EROFS)) {
		snprintf(access_hint, sizeof(access_hint),
			 "this data mover runs as %s (uid %u), who cannot "
			 "%s %s: give it to that user (chown %s %s), or run "
			 "the movers as root (nsrexecd without -U)",
			 d->user ? d->user : "another user",
			 (unsigned)geteuid(),
			 parent ? "create files in" : "read and write", p,
			 d->user ? d->user : "USER", p);
		nsr_warn("device %s: %s", m->dev_name, access_hint);
	}
	free(parent);
}

/* mmd_touch - remember that work happened now. */
void mmd_touch(struct mmd *m)
{
	m->last_work = time(NULL);
}

/* mmd_volid_str - hex form of a volume id. */
void mmd_volid_str(const uint8_t *volid, char *out)
{
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", volid[i]);
}

/* mmd_dev_open_extra - open a new handle on the configured device. */
int mmd_dev_open_extra(struct mmd *m, int read_only, struct nsr_dev **out,
		       struct nsr_buf *why)
{
	struct nsr_dev_opts o;
	struct nsr_buf msg;
	int rc;

	memset(&o, 0, sizeof(o));
	o.read_only = read_only;
	/* A vtape's file is made at its first label; an AFTD's directory
	 * is the administrator's to make (a typo must not become a new,
	 * silently filling directory), a tape drive the kernel's. */
	o.create = !read_only && m->dev_type == NSR_DEV_VTAPE;
	o.vtape_capacity = m->capacity;
	/* -C on an AFTD: the most bytes of session files it holds. */
	o.aftd_quota = m->dev_type == NSR_DEV_AFTD ? m->capacity : 0;
	nsr_buf_init(&msg, 0);
	rc = nsr_dev_open(m->dev_type, m->dev_path, &o, out, &msg);
	if (rc != NSR_OK)
		nsr_buf_addf(why, "cannot open device %s (%s %s): %s",
			     m->dev_name, nsr_dev_type_name(m->dev_type),
			     m->dev_path,
			     msg.len ? msg.data : nsr_strerror(rc));
	nsr_buf_release(&msg);
	return rc;
}

/* mmd_dev_open_locked - keep one handle open: read-write, or read-only
 * when the medium is write-protected and only reading is wanted (a vaulted
 * cartridge comes back protected and must still restore). */
int mmd_dev_open_locked(struct mmd *m, int write, struct nsr_buf *why)
{
	struct nsr_buf first;
	int rc;

	if (m->dev && (!write || !m->dev_ro))
		return NSR_OK;
	if (m->dev) {
		/* Read-only so far; the tab may have moved since. */
		nsr_dev_close(m->dev);
		m->dev = NULL;
	}
	nsr_buf_init(&first, 0);
	m->dev_ro = 0;
	rc = mmd_dev_open_extra(m, 0, &m->dev, &first);
	if (rc == NSR_ERR_READONLY && !write) {
		rc = mmd_dev_open_extra(m, 1, &m->dev, why);
		m->dev_ro = rc == NSR_OK;
		if (m->dev_ro)
			nsr_info("device %s: the volume is write-protected; "
				 "opened for reading only", m->dev_name);
	} else if (rc != NSR_OK) {
		nsr_buf_addf(why, "%s", first.data);
	}
	nsr_buf_release(&first);
	return rc;
}

/* conn_destroy - a connection closed: end what it left open. */
static void conn_destroy(void *data)
{
	struct mmd_conn *c = data;

	if (c->save)
		mmd_save_free(c->m, c->save);
	if (c->joined)
		mmd_stripe_leave(c->m, c->joined);
	if (c->read)
		mmd_read_free(c->m, c->read);
	free(c);
}

/* mmd_conn_get - the per-connection state. */
struct mmd_conn *mmd_conn_get(struct nsr_rpc_call *call, struct mmd *m)
{
	struct mmd_conn *c = nsr_rpc_call_conn_data(call);

	if (!c) {
		c = nsr_xcalloc(1, sizeof(*c));
		c->m = m;
		nsr_rpc_call_set_conn_data(call, c, conn_destroy);
	}
	return c;
}

/* Access classes (authz.c): label and remove are ADMIN (nsrd only); the
 * opening of a save set (begin, clone begin, read open) is OWN (nsrd's
 * grant for it); the other calls act on their connection's session. */
static const struct nsr_rpc_proc mmd_procs[] = {
	{MMD_LABEL, "label", NSR_XDR(xdr_mmd_label_args),
	 sizeof(mmd_label_args), NSR_XDR(xdr_mmd_label_res),
	 sizeof(mmd_label_res), mmd_h_label, NSR_RPC_ADMIN},
	{MMD_READ_LABEL, "read_label", NSR_XDR(xdr_void), 0,
	 NSR_XDR(xdr_mmd_label_res), sizeof(mmd_label_res), mmd_h_read_label,
	 0},
	{MMD_SS_BEGIN, "ss_begin", NSR_XDR(xdr_mmd_begin_args),
	 sizeof(mmd_begin_args), NSR_XDR(xdr_nsr_void_res),
	 sizeof(nsr_void_res), mmd_h_ss_begin,
	 NSR_RPC_OWN},
	{MMD_SS_DATA, "ss_data", NSR_XDR(xdr_mmd_data_args),
	 sizeof(mmd_data_args), NSR_XDR(xdr_void), 0, mmd_h_ss_data, 0},
	{MMD_SS_END, "ss_end", NSR_XDR(xdr_mmd_end_args), sizeof(mmd_end_args),
	 NSR_XDR(xdr_mmd_end_res), sizeof(mmd_end_res), mmd_h_ss_end, 0},
	{MMD_READ_OPEN, "read_open", NSR_XDR(xdr_mmd_read_args),
	 sizeof(mmd_read_args), NSR_XDR(xdr_nsr_void_res), sizeof(nsr_void_res),
	 mmd_h_read_open, NSR_RPC_OWN},
	{MMD_READ_NEXT, "read_next", NSR_XDR(xdr_mmd_next_args),
	 sizeof(mmd_next_args), NSR_XDR(xdr_mmd_next_res), sizeof(mmd_next_res),
	 mmd_h_read_next, 0},
	{MMD_SS_REMOVE, "ss_remove", NSR_XDR(xdr_mmd_remove_args),
	 sizeof(mmd_remove_args), NSR_XDR(xdr_mmd_remove_res),
	 sizeof(mmd_remove_res), mmd_h_ss_remove, NSR_RPC_ADMIN},
	{MMD_SS_SYNC, "ss_sync", NSR_XDR(xdr_mmd_sync_args),
	 sizeof(mmd_sync_args), NSR_XDR(xdr_mmd_sync_res), sizeof(mmd_sync_res),
	 mmd_h_ss_sync, 0},
	{MMD_SS_STRIPE, "ss_stripe", NSR_XDR(xdr_void), 0,
	 NSR_XDR(xdr_mmd_stripe_res), sizeof(mmd_stripe_res), mmd_h_ss_stripe,
	 0},
	{MMD_SS_JOIN, "ss_join", NSR_XDR(xdr_mmd_join_args),
	 sizeof(mmd_join_args), NSR_XDR(xdr_nsr_void_res), sizeof(nsr_void_res),
	 mmd_h_ss_join, 0},
	{MMD_READ_SETS_NEXT, "read_sets_next", NSR_XDR(xdr_mmd_next_args),
	 sizeof(mmd_next_args), NSR_XDR(xdr_mmd_sets_next_res),
	 sizeof(mmd_sets_next_res), mmd_h_read_sets_next, 0},
	{MMD_COUNTERS, "counters", NSR_XDR(xdr_void), 0,
	 NSR_XDR(xdr_mmd_counters_res), sizeof(mmd_counters_res),
	 mmd_h_counters, 0},
	{MMD_CLONE_BEGIN, "clone_begin", NSR_XDR(xdr_mmd_clone_begin_args),
	 sizeof(mmd_clone_begin_args), NSR_XDR(xdr_nsr_void_res),
	 sizeof(nsr_void_res), mmd_h_clone_begin,
	 NSR_RPC_OWN},
};

static const struct nsr_rpc_prog mmd_progs[] = {
	{NSRMMD_PROG, NSRMMD_V1, mmd_procs, NSR_ARRAY_SIZE(mmd_procs), &g_mmd,
	 mmd_authz},
};

/* mmd_option - the device, the server, the idle time, the ready pipe. */
static int mmd_option(struct nsr_daemon *d, int opt, const char *arg)
{
	struct mmd *m = d->ctx;
	char *end;

	switch (opt) {
	case 'T':
		if (nsr_dev_type_parse(arg, &m->dev_type) != NSR_OK) {
			fprintf(stderr, "nsrmmd: unknown device type '%s' "
				"(adv_file, vtape or tape)\n", arg);
			return -1;
		}
		return 0;
	case 'D':
		free(m->dev_path);
		m->dev_path = nsr_xstrdup(arg);
		return 0;
	case 'N':
		free(m->dev_name);
		m->dev_name = nsr_xstrdup(arg);
		return 0;
	case 's':
		free(m->server);
		m->server = *arg ? nsr_xstrdup(arg) : NULL;
		return 0;
	case 'C':
		m->capacity = strtoull(arg, &end, 10);
		return *end ? -1 : 0;
	case 'G':
		m->segment_size = strtoull(arg, &end, 10);
		return *end ? -1 : 0;
	case 'i':
		m->idle_sec = (unsigned)strtoul(arg, &end, 10);
		return *end || m->idle_sec == 0 ? -1 : 0;
	case 'r':
		m->ready_fd = (int)strtol(arg, &end, 10);
		return *end || m->ready_fd < 0 ? -1 : 0;
	case 'n':
		return 0; /* mover number: used by main() for the name */
	default:
		return -1;
	}
}

/* mmd_check - -t and start-up: the device must be given. */
static int mmd_check(struct nsr_daemon *d)
{
	struct mmd *m = d->ctx;

	if (!m->dev_type || !m->dev_path) {
		nsr_error("no device: give -T type and -D path");
		return -1;
	}
	if (!m->dev_name)
		m->dev_name = nsr_xstrdup(m->dev_path);
	return 0;
}

/* sweep_leftovers - AFTD: remove the session files of sessions that
 * never ended (a mover killed mid-save), before any session starts. */
static void sweep_leftovers(struct mmd *m)
{
	struct nsr_dev *dev = NULL;
	struct nsr_buf why;
	uint32_t n = 0;
	uint64_t bytes = 0;

	if (m->dev_type != NSR_DEV_AFTD)
		return;
	nsr_buf_init(&why, 0);
	if (mmd_dev_open_extra(m, 0, &dev, &why) != NSR_OK) {
		nsr_warn("leftover session files not checked: %s", why.data);
		goto out;
	}
	mmd_label_resume(m, dev);
	mmd_remove_resume(m, dev);
	if (nsr_dev_file_sweep(dev, &n, &bytes) != NSR_OK)
		nsr_error("device %s: cannot remove leftover session files: %s",
			  m->dev_name, nsr_dev_errmsg(dev));
	else if (n > 0)
		nsr_info("device %s: removed %u session file(s) of sessions "
			 "that never ended (%llu bytes)", m->dev_name, n,
			 (unsigned long long)bytes);
out:
	nsr_dev_close(dev);
	nsr_buf_release(&why);
}

/* mmd_init - check the configuration; the device opens on first use. */
static int mmd_init(struct nsr_daemon *d)
{
	struct mmd *m = d->ctx;
	const char *e = getenv("NSR_TEST_NO_SYNC");

	if (mmd_check(d) != 0)
		return -1;
	mmd_check_access(d, m);
	m->no_sync = e && *e == '1';
	/* Tests: a small vtape without a device attribute for it. */
	e = getenv("NSR_TEST_VTAPE_CAPACITY");
	if (m->capacity == 0 && m->dev_type == NSR_DEV_VTAPE && e && *e)
		m->capacity = strtoull(e, NULL, 10);
	m->last_work = time(NULL);
	sweep_leftovers(m);
	return 0;
}

/* mmd_started - tell nsrsnmd our port through the ready pipe. */
static int mmd_started(struct nsr_daemon *d)
{
	struct mmd *m = d->ctx;
	char buf[32];
	int n;

	nsr_info("mover for device %s (%s %s), media database on %s, idle "
		 "exit after %u s", m->dev_name, nsr_dev_type_name(m->dev_type),
		 m->dev_path, m->server ? m->server : "(none)", m->idle_sec);
	if (m->ready_fd < 0)
		return 0;
	m->parent = getppid();
	/* Started by nsrsnmd: the log file is the only sink. */
	nsr_log_init(d->ops->name, 0);
	n = snprintf(buf, sizeof(buf), "%d\n", d->bound_port);
	if (write(m->ready_fd, buf, (size_t)n) != n) {
		nsr_error("cannot tell nsrsnmd the port (fd %d): %s",
			  m->ready_fd, strerror(errno));
		return -1;
	}
	close(m->ready_fd);
	m->ready_fd = -1;
	return 0;
}

/* mmd_tick - exit after the idle time with no session and no reader,
 * or when nsrsnmd, which started us, is gone (we were re-parented). */
static void mmd_tick(struct nsr_daemon *d)
{
	struct mmd *m = d->ctx;
	int idle;

	if (m->parent && getppid() != m->parent) {
		nsr_warn("nsrsnmd (pid %ld) is gone, exiting", (long)m->parent);
		nsr_daemon_request_stop();
		return;
	}

	pthread_mutex_lock(&m->mu);
	idle = m->sessions == 0 && m->readers == 0 &&
	       time(NULL) - m->last_work >= (time_t)m->idle_sec;
	pthread_mutex_unlock(&m->mu);
	if (idle) {
		nsr_info("idle for %u s, exiting", m->idle_sec);
		nsr_daemon_request_stop();
	}
}

/* mmd_stop - close the writer and the device if no session uses them.
 * Sessions still open are aborted when the skeleton closes their
 * connections after this, and the last one closes the writer. */
static void mmd_stop(struct nsr_daemon *d)
{
	struct mmd *m = d->ctx;

	pthread_mutex_lock(&m->mu);
	if (m->sessions > 0 || m->readers > 0) {
		nsr_warn("stopping with %u save and %u recover sessions open; "
			 "they are aborted", m->sessions, m->readers);
	} else {
		if (m->w) {
			nsr_vol_writer_close(m->w);
			m->w = NULL;
		}
		nsr_dev_close(m->dev);
		m->dev = NULL;
	}
	pthread_mutex_unlock(&m->mu);
}

/* A mover writes nothing under the root: only its device, which the
 * administrator gives to the user it runs as (-u; nsrsnmd -U). */
static const char *const mmd_dirs[] = {NULL};

static const struct nsr_daemon_ops mmd_ops = {
	.name = "nsrmmd",
	.summary = "OpenNSR data mover: labels, writes and reads the volumes "
		   "of one device",
	.extra_opts = "T:D:N:s:C:G:i:r:n:",
	.extra_usage =
		"  -T type     device type: adv_file, vtape or tape\n"
		"  -D path     device path (directory, vtape file, /dev/nstN)\n"
		"  -N name     device resource name (default: the path)\n"
		"  -s server   host of nsrmmdbd to report to (default: none)\n"
		"  -C bytes    vtape capacity, or an AFTD's most bytes\n"
		"  -G bytes    tape/vtape: a filemark after every this many\n"
		"              bytes, so reads can position fast (0: none)\n"
		"  -i seconds  exit when idle this long (default 600)\n"
		"  -r fd       write the bound port to fd when ready\n"
		"  -n number   mover number (names the pid file nsrmmd.N)\n"
		"  -Z fd       (first, alone) be nsrsnmd's mover template: "
		"fork a mover\n"
		"              per request on socket fd (nsrsnmd starts it)\n",
	.no_register = 1,
	.tick_ms = 1000,
	.progs = mmd_progs,
	.nprogs = NSR_ARRAY_SIZE(mmd_progs),
	.option = mmd_option,
	.check = mmd_check,
	.own_dirs = mmd_dirs,
	.init = mmd_init,
	/* A buffer per data call, freed once written: keep them for reuse
	 * (above MMD_CHUNK_MAX and its XDR framing). */
	.malloc_keep = 16u << 20,
	.started = mmd_started,
	.tick = mmd_tick,
	.stop = mmd_stop,
};

/* main - run the daemon on the skeleton. */
int main(int argc, char **argv)
{
	struct nsr_daemon_ops ops = mmd_ops;
	char name[32];
	int rc;

	/* nsrsnmd's mover template: movers are copies of this process,
	 * each returning here with its own arguments (nsr/forkserver.h). */
	if (argc > 1 && strcmp(argv[1], "-Z") == 0) {
		rc = nsr_forkserver_serve(argc, argv, &argc, &argv);
		if (rc != 1)
			return rc == 0 ? 0 : 1;
	}
	/* Several movers share a root: each needs its own pid file. */
	for (int i = 1; i + 1 < argc; i++) {
		if (strcmp(argv[i], "-n") == 0 && atoi(argv[i + 1]) > 0) {
			snprintf(name, sizeof(name), "nsrmmd.%d",
				 atoi(argv[i + 1]));
			ops.name = name;
		}
	}
	return nsr_daemon_main(argc, argv, &ops, &g_mmd);
}
