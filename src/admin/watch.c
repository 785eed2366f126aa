/*
 * watch.c - nsrwatch's views of nsrd's STATUS (see watch.h): a text
 * screen in sections (server, devices, movers, sessions, pending) and
 * the same content as JSON for scripts.  Every function appends to a
 * struct nsr_buf and returns its first error.
 */
#include "nsr/compat.h"

#include <time.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/watch.h"

/* count_waits - waits of one kind. */
static unsigned count_waits(const status_res *st, unsigned kind)
{
	unsigned c = 0;

	for (u_int i = 0; i < st->waits.waits_len; i++)
		c += st->waits.waits_val[i].kind == kind;
	return c;
}

/* age - seconds since t at the status's time (0 if in the future). */
static long long age(const status_res *st, int64_t t)
{
	return st->now > t ? (long long)(st->now - t) : 0;
}

/* text_devices - one line per device. */
static int text_devices(const status_res *st, struct nsr_buf *o)
{
	int rc = nsr_buf_addf(o, "\nDevices\n  %-24s %-9s %-16s %8s %11s %7s\n",
			      "name", "type", "volume", "sessions",
			      "target/max", "movers");

	for (u_int i = 0; rc == NSR_OK && i < st->devices.devices_len; i++) {
		const st_device *d = &st->devices.devices_val[i];
		unsigned mv = 0;
		char lim[32];

		for (u_int k = 0; k < st->movers.movers_len; k++)
			mv += strcmp(st->movers.movers_val[k].device,
				     d->name) == 0;
		snprintf(lim, sizeof(lim), "%u/%u", d->target_sessions,
			 d->max_sessions);
		rc = nsr_buf_addf(
			o, "  %-24s %-9s %-16s %8u %11s %3u of %u%s\n", d->name,
			d->media_type, *d->volume ? d->volume : "(none)",
			d->sessions, lim, mv, d->max_movers,
			!d->enabled    ? " disabled"
			: d->read_only ? " read-only"
				       : "");
	}
	if (rc == NSR_OK && st->devices.devices_len == 0)
		rc = nsr_buf_addstr(o, "  (no devices are configured)\n");
	return rc;
}

/* text_movers - one line per running mover. */
static int text_movers(const status_res *st, struct nsr_buf *o)
{
	int rc = nsr_buf_addf(o, "\nMovers\n  %-16s %-24s %8s %6s %8s\n",
			      "host", "device", "pid", "port", "sessions");

	for (u_int i = 0; rc == NSR_OK && i < st->movers.movers_len; i++) {
		const st_mover *m = &st->movers.movers_val[i];

		rc = nsr_buf_addf(o, "  %-16s %-24s %8d %6d %8u\n",
				  *m->host ? m->host : st->server, m->device,
				  m->pid, m->port, m->sessions);
	}
	if (rc == NSR_OK && st->movers.movers_len == 0)
		rc = nsr_buf_addstr(o, "  (none running)\n");
	return rc;
}

/* text_sessions - one line per session. */
static int text_sessions(const status_res *st, struct nsr_buf *o)
{
	int rc = nsr_buf_addf(
		o, "\nSessions\n  %-8s %-20s %10s %-24s %8s %8s\n", "type",
		"client", "ssid", "device", "mover", "running");

	for (u_int i = 0; rc == NSR_OK && i < st->sessions.sessions_len; i++) {
		const st_session *s = &st->sessions.sessions_val[i];

		rc = nsr_buf_addf(o, "  %-8s %-20s %10u %-24s %8d %6llds\n",
				  s->recover ? "recover" : "save", s->client,
				  s->ssid, s->device, s->mover_pid,
				  age(st, s->started));
	}
	if (rc == NSR_OK && st->sessions.sessions_len == 0)
		rc = nsr_buf_addstr(o, "  (none)\n");
	return rc;
}

/* text_pending - the waits: mount requests first, then the queue. */
static int text_pending(const status_res *st, struct nsr_buf *o)
{
	int rc = nsr_buf_addstr(o, "\nPending\n");

	for (unsigned kind = SAVE_WAIT_READ; rc == NSR_OK && kind >= 1;
	     kind--)
		for (u_int i = 0; rc == NSR_OK && i < st->waits.waits_len;
		     i++) {
			const st_wait *w = &st->waits.waits_val[i];

			if (w->kind != kind)
				continue;
			rc = kind == SAVE_WAIT_READ
				     ? nsr_buf_addf(
					       o,
					       "  mount request %llu: "
					       "recover of %s for %s "
					       "needs volume %s (%llds)\n",
					       (unsigned long long)w->ticket,
					       w->name, w->client, w->pool,
					       age(st, w->since))
			     : kind == SAVE_WAIT_MOUNT
				     ? nsr_buf_addf(
					       o,
					       "  mount request %llu: "
					       "save of %s:%s waits for a "
					       "writable volume of pool "
					       "%s (%llds)\n",
					       (unsigned long long)w->ticket,
					       w->client, w->name, w->pool,
					       age(st, w->since))
				     : nsr_buf_addf(
					       o,
					       "  queued %llu: save of "
					       "%s:%s (%llds)\n",
					       (unsigned long long)w->ticket,
					       w->client, w->name,
					       age(st, w->since));
		}
	if (rc == NSR_OK && st->waits.waits_len == 0)
		rc = nsr_buf_addstr(o, "  (nothing waits)\n");
	return rc;
}

/* mbs - bytes per second as MB/s (decimal) into out. */
static const char *mbs(uint64_t rate, char *out, size_t cap)
{
	snprintf(out, cap, "%.1f MB/s", (double)rate / 1e6);
	return out;
}

/* text_rates - the Rates section: each device, then each session. */
static int text_rates(const rates_res *rt, struct nsr_buf *o)
{
	int rc = nsr_buf_addstr(o, "\nRates\n");
	char r1[32];

	for (u_int i = 0; rc == NSR_OK && i < rt->devices.devices_len; i++) {
		const rate_device *d = &rt->devices.devices_val[i];

		rc = nsr_buf_addf(o, "  device  %-30s %14s  (%u sessions)\n",
				  d->name, mbs(d->rate, r1, sizeof(r1)),
				  d->sessions);
	}
	for (u_int i = 0; rc == NSR_OK && i < rt->sessions.sessions_len;
	     i++) {
		const rate_session *s = &rt->sessions.sessions_val[i];
		char what[64];

		snprintf(what, sizeof(what), "ssid %u on", s->ssid);
		rc = nsr_buf_addf(o, "  %-7s %-14s %-15s %14s  %.1f MB so "
				  "far\n", s->recover ? "recover" : "save",
				  what, s->device, mbs(s->rate, r1, sizeof(r1)),
				  (double)s->bytes / 1e6);
	}
	if (rc == NSR_OK && *rt->notes)
		rc = nsr_buf_addf(o, "  (%s)\n", rt->notes);
	return rc;
}

/* nsr_watch_text - the status as a screen of text lines. */
int nsr_watch_text(const status_res *st, struct nsr_buf *out)
{
	return nsr_watch_text_rates(st, NULL, out);
}

/* nsr_watch_text_rates - the screen, with the rates if any. */
int nsr_watch_text_rates(const status_res *st, const rates_res *rt,
			 struct nsr_buf *out)
{
	char when[32];
	time_t t = (time_t)st->now;
	struct tm tm;
	int rc;

	localtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	rc = nsr_buf_addf(out, "server %s (parallelism %u): %u sessions, %u "
			  "queued, %u mount requests    %s\n", st->server,
			  st->parallelism, st->sessions.sessions_len,
			  count_waits(st, SAVE_WAIT_QUEUED),
			  count_waits(st, SAVE_WAIT_MOUNT) +
				  count_waits(st, SAVE_WAIT_READ), when);
	if (rc == NSR_OK)
		rc = text_devices(st, out);
	if (rc == NSR_OK)
		rc = text_movers(st, out);
	if (rc == NSR_OK)
		rc = text_sessions(st, out);
	if (rc == NSR_OK && rt)
		rc = text_rates(rt, out);
	if (rc == NSR_OK)
		rc = text_pending(st, out);
	if (rc == NSR_OK && *st->notes)
		rc = nsr_buf_addf(out, "\nNotes: %s\n", st->notes);
	return rc;
}

/* kv - "key":"string" with a leading comma unless first. */
static int kv(struct nsr_buf *o, int first, const char *key, const char *v)
{
	int rc = nsr_buf_addf(o, "%s\"%s\":", first ? "" : ",", key);

	return rc == NSR_OK ? nsr_buf_add_json_str(o, v) : rc;
}

/* json_lists - devices, movers, sessions and pending as arrays. */
static int json_lists(const status_res *st, struct nsr_buf *o)
{
	int rc = nsr_buf_addstr(o, ",\"devices\":[");

	for (u_int i = 0; rc == NSR_OK && i < st->devices.devices_len; i++) {
		const st_device *d = &st->devices.devices_val[i];

		rc = nsr_buf_addstr(o, i ? ",{" : "{");
		rc = rc ? rc : kv(o, 1, "name", d->name);
		rc = rc ? rc : kv(o, 0, "type", d->media_type);
		rc = rc ? rc : kv(o, 0, "volume", d->volume);
		rc = rc ? rc : nsr_buf_addf(o, ",\"enabled\":%s,\"read_only\""
					    ":%s,\"sessions\":%u,\"target_"
					    "sessions\":%u,\"max_sessions\":%u"
					    ",\"max_movers\":%u}",
					    d->enabled ? "true" : "false",
					    d->read_only ? "true" : "false",
					    d->sessions, d->target_sessions,
					    d->max_sessions, d->max_movers);
	}
	rc = rc ? rc : nsr_buf_addstr(o, "],\"movers\":[");
	for (u_int i = 0; rc == NSR_OK && i < st->movers.movers_len; i++) {
		const st_mover *m = &st->movers.movers_val[i];

		rc = nsr_buf_addstr(o, i ? ",{" : "{");
		rc = rc ? rc
			: kv(o, 1, "host", *m->host ? m->host : st->server);
		rc = rc ? rc : kv(o, 0, "device", m->device);
		rc = rc ? rc : nsr_buf_addf(o, ",\"pid\":%d,\"port\":%d,"
					    "\"sessions\":%u}", m->pid, m->port,
					    m->sessions);
	}
	rc = rc ? rc : nsr_buf_addstr(o, "],\"sessions\":[");
	for (u_int i = 0; rc == NSR_OK && i < st->sessions.sessions_len; i++) {
		const st_session *s = &st->sessions.sessions_val[i];

		rc = nsr_buf_addf(o, "%s{\"type\":\"%s\"", i ? "," : "",
				  s->recover ? "recover" : "save");
		rc = rc ? rc : kv(o, 0, "client", s->client);
		rc = rc ? rc : kv(o, 0, "device", s->device);
		rc = rc ? rc : nsr_buf_addf(o, ",\"ssid\":%u,\"mover_pid\":%d,"
					    "\"jobid\":%lld,\"seconds\":%lld}",
					    s->ssid, s->mover_pid,
					    (long long)s->jobid,
					    age(st, s->started));
	}
	rc = rc ? rc : nsr_buf_addstr(o, "],\"pending\":[");
	for (u_int i = 0; rc == NSR_OK && i < st->waits.waits_len; i++) {
		const st_wait *w = &st->waits.waits_val[i];

		rc = nsr_buf_addf(o, "%s{\"kind\":\"%s\",\"ticket\":%llu",
				  i ? "," : "", w->kind == SAVE_WAIT_MOUNT
				  ? "mount request" : w->kind == SAVE_WAIT_READ
				  ? "recover mount request" : "queued",
				  (unsigned long long)w->ticket);
		rc = rc ? rc : kv(o, 0, "client", w->client);
		rc = rc ? rc : kv(o, 0, "name", w->name);
		rc = rc ? rc : kv(o, 0, "pool", w->pool);
		rc = rc ? rc : nsr_buf_addf(o, ",\"held\":%s",
					    w->held ? "true" : "false");
		rc = rc ? rc : nsr_buf_addf(o, ",\"seconds\":%lld}",
					    age(st, w->since));
	}
	return rc ? rc : nsr_buf_addch(o, ']');
}

/* json_rates - "rates":{"devices":[...],"sessions":[...],"notes":..}. */
static int json_rates(const rates_res *rt, struct nsr_buf *o)
{
	int rc = nsr_buf_addstr(o, ",\"rates\":{\"devices\":[");

	for (u_int i = 0; rc == NSR_OK && i < rt->devices.devices_len; i++) {
		const rate_device *d = &rt->devices.devices_val[i];

		rc = nsr_buf_addstr(o, i ? ",{" : "{");
		rc = rc ? rc : kv(o, 1, "name", d->name);
		rc = rc ? rc : nsr_buf_addf(o, ",\"sessions\":%u,"
					    "\"bytes_per_sec\":%llu}",
					    d->sessions,
					    (unsigned long long)d->rate);
	}
	rc = rc ? rc : nsr_buf_addstr(o, "],\"sessions\":[");
	for (u_int i = 0; rc == NSR_OK && i < rt->sessions.sessions_len;
	     i++) {
		const rate_session *s = &rt->sessions.sessions_val[i];

		rc = nsr_buf_addf(o, "%s{\"type\":\"%s\",\"ssid\":%u",
				  i ? "," : "", s->recover ? "recover" : "save",
				  s->ssid);
		rc = rc ? rc : kv(o, 0, "device", s->device);
		rc = rc ? rc : nsr_buf_addf(o, ",\"mover_pid\":%d,\"bytes\":"
					    "%llu,\"bytes_per_sec\":%llu}",
					    s->mover_pid,
					    (unsigned long long)s->bytes,
					    (unsigned long long)s->rate);
	}
	rc = rc ? rc : nsr_buf_addch(o, ']');
	rc = rc ? rc : kv(o, 0, "notes", rt->notes);
	return rc ? rc : nsr_buf_addch(o, '}');
}

/* nsr_watch_json - the status as one JSON object and a newline. */
int nsr_watch_json(const status_res *st, struct nsr_buf *out)
{
	return nsr_watch_json_rates(st, NULL, out);
}

/* nsr_watch_json_rates - the JSON object, with the rates if any. */
int nsr_watch_json_rates(const status_res *st, const rates_res *rt,
			 struct nsr_buf *out)
{
	int rc = nsr_buf_addch(out, '{');

	rc = rc ? rc : kv(out, 1, "server", st->server);
	rc = rc ? rc : nsr_buf_addf(out, ",\"parallelism\":%u,\"time\":%lld",
				    st->parallelism, (long long)st->now);
	rc = rc ? rc : json_lists(st, out);
	rc = rc || !rt ? rc : json_rates(rt, out);
	rc = rc ? rc : kv(out, 0, "notes", st->notes);
	return rc ? rc : nsr_buf_addstr(out, "}\n");
}
