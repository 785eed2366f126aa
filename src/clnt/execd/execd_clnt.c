/*
 * execd_clnt.c - client of nsrexecd's RUN_SAVE and RUN_POLL over a peer
 * (peer.h).  Library code: no logging, no exit.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/execd_clnt.h"
#include "nsr/peer.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsrexecd.h"

struct nsr_execd {
	struct nsr_peer *peer;
};

/* nsr_execd_new - a handle; nsrexecd answers on the locator port. */
int nsr_execd_new(const char *host, int wait_ms, struct nsr_execd **out)
{
	struct nsr_execd *h = calloc(1, sizeof(*h));
	int rc;

	*out = NULL;
	if (!h)
		return NSR_ERR_NOMEM;
	rc = nsr_peer_new(host, nsr_rpc_locator_port(), NSREXECD_PROG,
			  NSREXECD_V1, &h->peer);
	if (rc != NSR_OK) {
		free(h);
		return rc;
	}
	nsr_peer_set_wait(h->peer, wait_ms);
	*out = h;
	return NSR_OK;
}

/* nsr_execd_set_timeout - reply timeout of later calls. */
void nsr_execd_set_timeout(struct nsr_execd *h, int reply_ms)
{
	nsr_peer_set_timeout(h->peer, reply_ms);
}

/* nsr_execd_host - the host as named. */
const char *nsr_execd_host(const struct nsr_execd *h)
{
	return nsr_peer_host(h->peer);
}

/* nsr_execd_close - close and free. */
void nsr_execd_close(struct nsr_execd *h)
{
	if (!h)
		return;
	nsr_peer_free(h->peer);
	free(h);
}

/* done - a call's outcome: the transport's words or nsrexecd's status. */
static int done(struct nsr_execd *h, int rc, const nsr_status *st,
		struct nsr_buf *err)
{
	char prefix[NSR_SHORT_MAX + 32];

	snprintf(prefix, sizeof(prefix), "nsrexecd on %s: ",
		 nsr_execd_host(h));
	return nsr_peer_outcome(h->peer, rc, st->code, st->msg, prefix, err);
}

/* nsr_execd_run_save - RUN_SAVE (not repeated: it starts processes). */
int nsr_execd_run_save(struct nsr_execd *h, const struct nsr_execd_save *a,
		       uint64_t *run, struct nsr_buf *err)
{
	exec_save_args x;
	exec_run_res r;
	int rc;

	*run = 0;
	if (a->nsavesets > EXEC_SAVESETS_MAX) {
		if (err)
			nsr_buf_addf(err, "%zu save sets: at most %d in one "
				     "run", a->nsavesets, EXEC_SAVESETS_MAX);
		return NSR_ERR_LIMIT;
	}
	memset(&x, 0, sizeof(x));
	memset(&r, 0, sizeof(r));
	x.server = (char *)(a->server ? a->server : "");
	x.client = (char *)(a->client ? a->client : "");
	x.group = (char *)(a->group ? a->group : "");
	x.level = (char *)(a->level ? a->level : "");
	x.savesets.savesets_len = (u_int)a->nsavesets;
	x.savesets.savesets_val = (exec_path *)(uintptr_t)a->savesets;
	x.pss = (char *)(a->pss ? a->pss : "");
	x.parallelism = a->parallelism;
	rc = nsr_peer_call(h->peer, RUN_SAVE, NSR_XDR(xdr_exec_save_args), &x,
			   NSR_XDR(xdr_exec_run_res), &r, 0);
	rc = done(h, rc, &r.st, err);
	if (rc == NSR_OK)
		*run = r.run;
	xdr_free(NSR_XDR(xdr_exec_run_res), (char *)&r);
	return rc;
}

/* nsr_execd_revoked_notify - REVOKED_NOTIFY (asks for a fetch: not
 * repeated). */
int nsr_execd_revoked_notify(struct nsr_execd *h, struct nsr_buf *err)
{
	nsr_void_res r;
	void *a = NULL;
	int rc;

	memset(&r, 0, sizeof(r));
	rc = nsr_peer_call(h->peer, REVOKED_NOTIFY, NSR_XDR(xdr_void), a,
			   NSR_XDR(xdr_nsr_void_res), &r, 0);
	rc = done(h, rc, &r.st, err);
	xdr_free(NSR_XDR(xdr_nsr_void_res), (char *)&r);
	return rc;
}

/* nsr_execd_poll - RUN_POLL (idempotent until it answers done). */
int nsr_execd_poll(struct nsr_execd *h, uint64_t run,
		   struct nsr_execd_status *st, struct nsr_buf *err)
{
	exec_poll_args a = {run};
	exec_poll_res r;
	int rc;

	memset(st, 0, sizeof(*st));
	memset(&r, 0, sizeof(r));
	rc = nsr_peer_call(h->peer, RUN_POLL, NSR_XDR(xdr_exec_poll_args), &a,
			   NSR_XDR(xdr_exec_poll_res), &r, NSR_PEER_RETRY);
	rc = done(h, rc, &r.st, err);
	if (rc == NSR_OK && r.sets.sets_len) {
		st->sets = calloc(r.sets.sets_len, sizeof(*st->sets));
		if (!st->sets)
			rc = NSR_ERR_NOMEM;
	}
	for (u_int i = 0; rc == NSR_OK && i < r.sets.sets_len; i++) {
		exec_saveset *s = &r.sets.sets_val[i];
		struct nsr_execd_set *o = &st->sets[i];

		o->name = strdup(s->name);
		o->tail = strdup(s->tail);
		o->state = s->state;
		o->exit_code = s->exit_code;
		o->signal = s->signal;
		st->n = i + 1;
		if (!o->name || !o->tail)
			rc = NSR_ERR_NOMEM;
	}
	if (rc == NSR_OK)
		st->done = r.done;
	xdr_free(NSR_XDR(xdr_exec_poll_res), (char *)&r);
	return rc;
}

/* nsr_execd_status_free - free a poll's answer. */
void nsr_execd_status_free(struct nsr_execd_status *st)
{
	for (size_t i = 0; i < st->n; i++) {
		free(st->sets[i].name);
		free(st->sets[i].tail);
	}
	free(st->sets);
	memset(st, 0, sizeof(*st));
}
