/*
 * rates.c - STATUS_RATES, the transfer rates nsrwatch shows: the movers
 * STATUS lists are asked for their sessions' counters (MMD_COUNTERS), and
 * each session's rate is the bytes it moved since the previous call over
 * the time between (at its first sample: since it began); a device's
 * rate is the sum of its sessions'.  The samples are kept here, one per
 * (mover, save set, direction), and dropped when the session is gone.
 * Runs serialized (NSR_RPC_SERIAL) like STATUS, so the table needs no
 * lock of its own; the movers are asked with the server mutex released
 * (their answers go to a list of the call's own), so a slow or silent
 * mover holds up no other call.  A mover that does not answer is named
 * in notes.
 */
#include "nsr/compat.h"

#include <time.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/mmd_clnt.h"
#include "nsr/xmalloc.h"

#include "nsrd.h"

#define SAMPLES_MAX 1024

struct sample {
	int used, seen;
	pid_t pid;
	uint32_t ssid;
	int recover;
	uint64_t bytes;
	double t; /* monotonic seconds */
};

static struct sample g_samples[SAMPLES_MAX];

/* mono - monotonic seconds. */
static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* rate_of - the rate of counter c of the mover pid, from its previous
 * sample (updated), or since the session began. */
static uint64_t rate_of(pid_t pid, const struct nsr_mmd_counter *c,
			double now)
{
	struct sample *s = NULL, *free_slot = NULL;
	uint64_t rate = c->usec ? c->bytes * 1000000u / c->usec : 0;

	for (int i = 0; i < SAMPLES_MAX && !s; i++) {
		struct sample *x = &g_samples[i];

		if (!x->used) {
			if (!free_slot)
				free_slot = x;
			continue;
		}
		if (x->pid == pid && x->ssid == c->ssid &&
		    x->recover == c->recover)
			s = x;
	}
	if (s && now - s->t >= 0.1 && c->bytes >= s->bytes)
		rate = (uint64_t)((double)(c->bytes - s->bytes) / (now - s->t));
	if (!s)
		s = free_slot;
	if (!s)
		return rate; /* more sessions than samples: the average */
	if (!s->used || now - s->t >= 0.1) {
		s->used = 1;
		s->pid = pid;
		s->ssid = c->ssid;
		s->recover = c->recover;
		s->bytes = c->bytes;
		s->t = now;
	}
	s->seen = 1;
	return rate;
}

/* device_rate - the reply's entry of device name, or NULL. */
static rate_device *device_rate(rates_res *r, const char *name)
{
	for (u_int i = 0; i < r->devices.devices_len; i++)
		if (strcmp(r->devices.devices_val[i].name, name) == 0)
			return &r->devices.devices_val[i];
	return NULL;
}

/* What one mover answered (asked without the server mutex). */
struct answer {
	struct nsr_mmd_counter *c; /* malloc'ed, nc entries */
	size_t nc;
	int failed;
	char err[512];
};

/* ask_mover - the counters of one mover's sessions into *a; touches no
 * shared state (runs with the server mutex released). */
static void ask_mover(const struct nsrd *n, const st_mover *mv,
		      struct answer *a)
{
	struct nsr_mmd *m = NULL;
	struct nsr_buf err;

	nsr_buf_init(&err, 0);
	memset(a, 0, sizeof(*a));
	if (nsr_mmd_connect(*mv->host ? mv->host : "127.0.0.1", mv->port, &m,
			    &err) != NSR_OK ||
	    nsr_mmd_counters(m, &a->c, &a->nc, &err) != NSR_OK) {
		free(a->c);
		a->c = NULL;
		a->nc = 0;
		a->failed = 1;
		snprintf(a->err, sizeof(a->err),
			 "mover %d of %.100s on %.100s: %.250s",
			 mv->pid, mv->device,
			 *mv->host ? mv->host : n->server_name,
			 err.data ? err.data : "no answer");
	}
	nsr_mmd_close(m);
	nsr_buf_release(&err);
}

/* add_mover - the sessions of one mover, with their rates (server mutex
 * held: the samples are shared). */
static void add_mover(const st_mover *mv, const struct answer *a,
		      rates_res *r, struct nsr_buf *notes, double now)
{
	rate_device *d = device_rate(r, mv->device);

	if (a->failed)
		nsr_buf_addf(notes, "%s%s", notes->len ? "; " : "", a->err);
	for (size_t i = 0; i < a->nc && r->sessions.sessions_len < 1024;
	     i++) {
		rate_session *o =
			&r->sessions.sessions_val[r->sessions.sessions_len++];

		o->ssid = a->c[i].ssid;
		o->recover = a->c[i].recover ? TRUE : FALSE;
		o->device = nsr_rpc_str(mv->device);
		o->mover_pid = mv->pid;
		o->bytes = a->c[i].bytes;
		o->rate = rate_of(mv->pid, &a->c[i], now);
		if (d) {
			d->rate += o->rate;
			d->sessions++;
		}
	}
}

/* nsrd_status_rates - STATUS_RATES. */
int nsrd_status_rates(void *ctx, void *args, void *res,
		      struct nsr_rpc_call *call)
{
	struct nsrd *n = ctx;
	rates_res *r = res;
	status_res st;
	struct nsr_buf notes;
	struct answer *ans;
	double now;

	NSR_UNUSED(args);
	memset(&st, 0, sizeof(st));
	nsrd_status(ctx, NULL, &st, call);
	nsr_buf_init(&notes, NSR_MSG_MAX - 1);
	if (*st.notes)
		nsr_buf_addstr(&notes, st.notes);
	r->devices.devices_val = nsr_xcalloc(st.devices.devices_len + 1,
					     sizeof(rate_device));
	for (u_int i = 0; i < st.devices.devices_len; i++)
		r->devices.devices_val[r->devices.devices_len++].name =
			nsr_rpc_str(st.devices.devices_val[i].name);
	r->sessions.sessions_val = nsr_xcalloc(1024, sizeof(rate_session));
	ans = nsr_xcalloc(st.movers.movers_len + 1, sizeof(*ans));
	nsr_rpc_server_unlock(n->d->srv);
	for (u_int i = 0; i < st.movers.movers_len; i++)
		ask_mover(n, &st.movers.movers_val[i], &ans[i]);
	nsr_rpc_server_lock(n->d->srv);
	now = mono();
	for (int i = 0; i < SAMPLES_MAX; i++)
		g_samples[i].seen = 0;
	for (u_int i = 0; i < st.movers.movers_len; i++) {
		add_mover(&st.movers.movers_val[i], &ans[i], r, &notes, now);
		free(ans[i].c);
	}
	free(ans);
	for (int i = 0; i < SAMPLES_MAX; i++)
		if (!g_samples[i].seen)
			g_samples[i].used = 0; /* the session is over */
	r->notes = nsr_rpc_str(notes.len ? notes.data : "");
	nsr_buf_release(&notes);
	xdr_free(NSR_XDR(xdr_status_res), (char *)&st);
	nsr_status_set(&r->st, NSR_OK, "%s", "");
	return NSR_OK;
}
