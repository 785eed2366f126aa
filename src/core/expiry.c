/*
 * expiry.c - browse and retention times (expiry.h).
 */
#include "nsr/compat.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "nsr/err.h"
#include "nsr/expiry.h"
#include "nsr/level.h"

/* Period names, singular prefixes matched case-insensitively. */
static const struct {
	const char *name;
	enum nsr_expiry_unit unit;
} units[] = {
	{ "Day", NSR_EXPIRY_DAYS },
	{ "Week", NSR_EXPIRY_WEEKS },
	{ "Month", NSR_EXPIRY_MONTHS },
	{ "Year", NSR_EXPIRY_YEARS },
};

/* nsr_expiry_policy_parse - a period and number of periods. */
int nsr_expiry_policy_parse(const char *period, const char *number,
			    struct nsr_expiry_policy *p)
{
	char *end;
	long count = 1;
	size_t i;

	if (!period)
		return NSR_ERR_SYNTAX;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		size_t l = strlen(units[i].name);

		if (strncasecmp(period, units[i].name, l) == 0 &&
		    (period[l] == '\0' ||
		     (strcasecmp(period + l, "s") == 0)))
			break;
	}
	if (i == sizeof(units) / sizeof(units[0]))
		return NSR_ERR_SYNTAX;
	if (number && *number) {
		if (*number < '0' || *number > '9')
			return NSR_ERR_SYNTAX; /* no sign, no blanks */
		count = strtol(number, &end, 10);
		if (*end != '\0' || count < 1 || count > 1000000)
			return NSR_ERR_SYNTAX;
	}
	p->unit = units[i].unit;
	p->count = count;
	return NSR_OK;
}

/* nsr_expiry_builtin - the preconfigured policies. */
int nsr_expiry_builtin(const char *name, struct nsr_expiry_policy *p)
{
	static const struct {
		const char *name;
		enum nsr_expiry_unit unit;
		long count;
	} b[] = {
		{ "Day", NSR_EXPIRY_DAYS, 1 },
		{ "Week", NSR_EXPIRY_WEEKS, 1 },
		{ "Month", NSR_EXPIRY_MONTHS, 1 },
		{ "Quarter", NSR_EXPIRY_MONTHS, 3 },
		{ "Year", NSR_EXPIRY_YEARS, 1 },
		{ "Decade", NSR_EXPIRY_YEARS, 10 },
	};

	for (size_t i = 0; name && i < sizeof(b) / sizeof(b[0]); i++)
		if (strcasecmp(name, b[i].name) == 0) {
			p->unit = b[i].unit;
			p->count = b[i].count;
			return NSR_OK;
		}
	return NSR_ERR_NOTFOUND;
}

/* The last sums nsr_expiry_add made on this thread.  mktime reads the
 * time zone again on every call (with TZ unset, a stat and more of
 * /etc/localtime, under glibc's zone lock), and a burst of new save sets
 * (nsrd admits 1,024 at once) asks the same few sums within one second:
 * they are remembered with the TZ they were made under. */
#define ADD_MEMO 4
static _Thread_local struct add_memo {
	int used;
	enum nsr_expiry_unit unit;
	long count;
	int64_t from, to;
	char tz[64];
} g_memo[ADD_MEMO];
static _Thread_local unsigned g_memo_next;

/* memo_tz - this process's TZ as the memo keys it ("" when unset);
 * *keep is 0 when it is too long to keep, and nothing is remembered. */
static const char *memo_tz(int *keep)
{
	const char *tz = getenv("TZ");

	*keep = !tz || strlen(tz) < sizeof(g_memo[0].tz);
	return tz ? tz : "";
}

/* nsr_expiry_add - from + the policy in local calendar terms. */
int64_t nsr_expiry_add(const struct nsr_expiry_policy *p, int64_t from)
{
	time_t t = (time_t)from;
	struct tm tm;
	int c = (int)p->count, keep;
	const char *tz = memo_tz(&keep);
	struct add_memo *m;

	for (unsigned i = 0; keep && i < ADD_MEMO; i++) {
		m = &g_memo[i];
		if (m->used && m->unit == p->unit && m->count == p->count &&
		    m->from == from && strcmp(m->tz, tz) == 0)
			return m->to;
	}
	localtime_r(&t, &tm);
	switch (p->unit) {
	case NSR_EXPIRY_DAYS: tm.tm_mday += c; break;
	case NSR_EXPIRY_WEEKS: tm.tm_mday += 7 * c; break;
	case NSR_EXPIRY_MONTHS: tm.tm_mon += c; break;
	case NSR_EXPIRY_YEARS: tm.tm_year += c; break;
	}
	tm.tm_isdst = -1;
	t = mktime(&tm);
	if (keep) {
		m = &g_memo[g_memo_next++ % ADD_MEMO];
		m->used = 1;
		m->unit = p->unit;
		m->count = p->count;
		m->from = from;
		m->to = (int64_t)t;
		snprintf(m->tz, sizeof(m->tz), "%s", tz);
	}
	return (int64_t)t;
}

/* nsr_expiry_times - rules 1-3 of expiry.h. */
void nsr_expiry_times(const struct nsr_expiry_in *in, int64_t *browse,
		      int64_t *retention)
{
	static const struct nsr_expiry_policy month = { NSR_EXPIRY_MONTHS, 1 };
	static const struct nsr_expiry_policy year = { NSR_EXPIRY_YEARS, 1 };
	int64_t b, r;

	b = in->browse_time ? in->browse_time
			    : nsr_expiry_add(in->browse ? in->browse : &month,
					     in->base);
	if (in->retention_time) {
		r = in->retention_time;
	} else {
		r = nsr_expiry_add(in->retention ? in->retention : &year,
				   in->base);
		if (in->pool_retention) {
			int64_t pr = nsr_expiry_add(in->pool_retention,
						    in->base);

			if (pr > r)
				r = pr;
		}
	}
	if (r < b)
		r = b;
	*browse = b;
	*retention = r;
}

/* by_time - qsort order of a chain: save time, then ssid. */
static int by_time(const void *a, const void *b)
{
	const struct nsr_expiry_ss *x = a, *y = b;

	if (x->savetime != y->savetime)
		return x->savetime < y->savetime ? -1 : 1;
	return x->ssid < y->ssid ? -1 : x->ssid > y->ssid;
}

/* parent_of - index of the save set v[i] builds on, or -1. */
static long parent_of(const struct nsr_expiry_ss *v, size_t i)
{
	unsigned l = v[i].level;

	if (l == NSR_LEVEL_FULL || l >= NSR_LEVEL_MANUAL)
		return -1;
	for (size_t j = i; j-- > 0;) {
		if (!v[j].usable || v[j].level >= NSR_LEVEL_MANUAL)
			continue;
		if (l == NSR_LEVEL_INCR || v[j].level < l)
			return (long)j;
	}
	return -1;
}

/* nsr_expiry_chain - rule 4: newest first, each usable save set hands
 * its effective times to the one it depends on (always an earlier one,
 * so its own are final when handed on); an unusable one (aborted,
 * incomplete) holds nothing back. */
void nsr_expiry_chain(struct nsr_expiry_ss *v, size_t n)
{
	if (n == 0)
		return;
	qsort(v, n, sizeof(*v), by_time);
	for (size_t i = 0; i < n; i++) {
		v[i].eff_browse = v[i].browse;
		v[i].eff_retention = v[i].retention;
		v[i].parent = 0;
	}
	for (size_t i = n; i-- > 0;) {
		long p = v[i].usable ? parent_of(v, i) : -1;

		if (p < 0)
			continue;
		v[i].parent = v[p].ssid;
		if (v[i].eff_browse > v[p].eff_browse)
			v[p].eff_browse = v[i].eff_browse;
		if (v[i].eff_retention > v[p].eff_retention)
			v[p].eff_retention = v[i].eff_retention;
	}
}
