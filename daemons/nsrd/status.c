/*
 * status.c - STATUS, what nsrwatch shows: the devices as nsrd sees them
 * (mounted volume, sessions, limits), the movers of every storage node a
 * device names (as its nsrsnmd lists them, with the sessions nsrd counts
 * on each), the sessions, and the saves that wait (queued or mount
 * requests).  A storage node that does not answer is named in notes; the
 * rest is still answered.  Strings are never NULL (the transport cannot
 * encode NULL).
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/host.h"
#include "nsr/snmd_clnt.h"
#include "nsr/xmalloc.h"

#include "nsrd.h"

/* yes - a Yes/No attribute, with its default. */
static bool_t yes(const struct nsr_res *r, const char *attr, int dflt)
{
	const char *v = nsr_res_get(r, attr);

	if (!v || !*v)
		return dflt ? TRUE : FALSE;
	return strcasecmp(v, "Yes") == 0 ? TRUE : FALSE;
}

/* sessions_on - sessions on a device (by name), or served by a mover. */
static unsigned sessions_on(const struct nsrd *n, const char *device,
			    pid_t pid)
{
	unsigned c = 0;

	for (int i = 0; i < NSRD_MAX_SESSIONS; i++) {
		const struct nsrd_session *s = &n->sessions[i];

		if (s->used && (device ? strcmp(s->device, device) == 0
				       : s->mover_pid == pid))
			c++;
	}
	return c;
}

/* add_movers - the movers nsrsnmd on host lists (host "" = this server),
 * once per host; a host that does not answer goes into notes. */
static void add_movers(struct nsrd *n, const char *host, status_res *r,
		       struct nsr_buf *notes)
{
	struct nsr_snmd_mover *mv = NULL;
	struct nsr_snmd *sn;
	struct nsr_buf err;
	size_t nm = 0;

	for (u_int i = 0; i < r->movers.movers_len; i++)
		if (strcmp(r->movers.movers_val[i].host, host) == 0)
			return;
	if (notes->len && strstr(notes->data, *host ? host : "(server)"))
		return; /* it failed once already */
	sn = nsrd_snmd_for(n, host);
	nsr_buf_init(&err, 0);
	if (!sn || nsr_snmd_status(sn, &mv, &nm, &err) != NSR_OK) {
		nsr_buf_addf(notes, "%sstorage node %s: %s",
			     notes->len ? "; " : "", *host ? host : "(server)",
			     err.len ? err.data : "too many storage nodes");
		nsr_buf_release(&err);
		return;
	}
	nsr_buf_release(&err);
	for (size_t i = 0; i < nm && r->movers.movers_len < STATUS_MOVERS_MAX;
	     i++) {
		st_mover *m = &r->movers.movers_val[r->movers.movers_len++];

		m->host = nsr_rpc_str(host);
		m->device = nsr_rpc_str(mv[i].device);
		m->pid = (int)mv[i].pid;
		m->port = mv[i].port;
		m->sessions = sessions_on(n, NULL, mv[i].pid);
	}
	free(mv);
}

/* add_devices - every device resource, and the movers of their hosts. */
static void add_devices(struct nsrd *n, status_res *r, struct nsr_buf *notes)
{
	struct nsr_res *q = nsr_res_new();
	char host[NSR_HOST_MAX + 1];

	nsr_res_set1(q, "type", "NSR device");
	for (long i = nsr_resdb_find(n->res, q, 0);
	     i >= 0 && r->devices.devices_len < STATUS_DEVICES_MAX;
	     i = nsr_resdb_find(n->res, q, (size_t)i + 1)) {
		const struct nsr_res *dev = nsr_resdb_at(n->res, (size_t)i);
		st_device *d =
			&r->devices.devices_val[r->devices.devices_len++];
		const char *ts = nsr_res_get(dev, "target sessions");
		const char *ms = nsr_res_get(dev, "max sessions");

		host[0] = '\0';
		nsrd_device_host(dev, host, sizeof(host));
		d->name = nsr_rpc_str(nsr_res_get(dev, "name"));
		d->media_type = nsr_rpc_str(nsr_res_get(dev, "media type"));
		d->volume = nsr_rpc_str(nsr_res_get(dev, "volume name"));
		d->enabled = yes(dev, "enabled", 1);
		d->read_only = yes(dev, "read only", 0);
		d->sessions = sessions_on(n, d->name, 0);
		d->target_sessions = ts ? (unsigned)atoi(ts) : 0;
		d->max_sessions = ms ? (unsigned)atoi(ms) : 0;
		d->max_movers = nsrd_device_max_movers(n, dev, host,
						       d->target_sessions,
						       d->max_sessions);
		add_movers(n, host, r, notes);
	}
	nsr_res_free(q);
}

/* add_sessions - the session table and the waits. */
static void add_sessions(struct nsrd *n, status_res *r)
{
	for (int i = 0; i < NSRD_MAX_SESSIONS; i++) {
		const struct nsrd_session *s = &n->sessions[i];
		st_session *o;

		if (!s->used)
			continue;
		o = &r->sessions.sessions_val[r->sessions.sessions_len++];
		o->recover = s->recover ? TRUE : FALSE;
		o->client = nsr_rpc_str(s->client);
		o->ssid = s->ssid;
		o->device = nsr_rpc_str(s->device);
		o->mover_pid = (int)s->mover_pid;
		o->jobid = s->jobid;
		o->started = (int64_t)s->started;
	}
	for (int i = 0; i < NSRD_MAX_WAITS; i++) {
		const struct nsrd_wait *w = &n->waits[i];
		st_wait *o;

		if (!w->ticket)
			continue;
		o = &r->waits.waits_val[r->waits.waits_len++];
		o->ticket = w->ticket;
		o->kind = w->kind == NSRD_WAIT_VOLUME ? SAVE_WAIT_MOUNT
			  : w->kind == NSRD_WAIT_READ ? SAVE_WAIT_READ
						      : SAVE_WAIT_QUEUED;
		o->client = nsr_rpc_str(w->client);
		o->name = nsr_rpc_str(w->name);
		o->pool = nsr_rpc_str(w->pool);
		o->since = (int64_t)w->first;
		o->held = w->held;
	}
}

/* nsrd_status - STATUS. */
int nsrd_status(void *ctx, void *args, void *res, struct nsr_rpc_call *call)
{
	struct nsrd *n = ctx;
	status_res *r = res;
	struct nsr_buf notes;

	NSR_UNUSED(args);
	NSR_UNUSED(call);
	nsr_buf_init(&notes, NSR_MSG_MAX - 1);
	r->server = nsr_rpc_str(n->server_name);
	r->parallelism = (unsigned)nsrd_server_attr_num(n, "parallelism", 32);
	r->now = (int64_t)time(NULL);
	r->devices.devices_val = nsr_xcalloc(STATUS_DEVICES_MAX,
					     sizeof(st_device));
	r->movers.movers_val = nsr_xcalloc(STATUS_MOVERS_MAX,
					   sizeof(st_mover));
	r->sessions.sessions_val = nsr_xcalloc(NSRD_MAX_SESSIONS,
					       sizeof(st_session));
	r->waits.waits_val = nsr_xcalloc(NSRD_MAX_WAITS, sizeof(st_wait));
	add_devices(n, r, &notes);
	add_sessions(n, r);
	r->notes = nsr_rpc_str(notes.len ? notes.data : "");
	nsr_buf_release(&notes);
	nsr_status_set(&r->st, NSR_OK, "%s", "");
	return NSR_OK;
}
