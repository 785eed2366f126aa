/*
 * sched.c - NSR schedules, group start times and intervals (sched.h).
 */
#include "nsr/compat.h"

#include <ctype.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/level.h"
#include "nsr/sched.h"

#define LEVEL_WORDS "full, incr, 1 to 9 or skip"

/* fail - say why (when asked) and return NSR_ERR_SYNTAX. */
static int fail(struct nsr_buf *why, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int fail(struct nsr_buf *why, const char *fmt, ...)
{
	va_list ap;

	if (why) {
		va_start(ap, fmt);
		nsr_buf_vaddf(why, fmt, ap);
		va_end(ap);
	}
	return NSR_ERR_SYNTAX;
}

/* nsr_sched_level_parse - a level word, NSR_SCHED_SKIP or -1. */
int nsr_sched_level_parse(const char *word)
{
	if (strcasecmp(word, "skip") == 0)
		return NSR_SCHED_SKIP;
	if (strcasecmp(word, "full") == 0)
		return NSR_LEVEL_FULL;
	if (strcasecmp(word, "incr") == 0)
		return NSR_LEVEL_INCR;
	if (word[0] >= '1' && word[0] <= '9' && !word[1])
		return word[0] - '0';
	return -1;
}

/* nsr_sched_level_name - the spelling of a schedule level. */
const char *nsr_sched_level_name(int level)
{
	if (level == NSR_SCHED_SKIP)
		return "skip";
	if (level < 0 || level > NSR_LEVEL_INCR)
		return "?";
	return nsr_level_name((unsigned)level);
}

/* next_word - the next blank-separated word of *p into w[wmax]; 0 at the
 * end, -1 when a word is too long. */
static int next_word(const char **p, char *w, size_t wmax)
{
	const char *s = *p;
	size_t n = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return 0;
	while (s[n] && s[n] != ' ' && s[n] != '\t')
		n++;
	*p = s + n;
	if (n >= wmax)
		return -1;
	memcpy(w, s, n);
	w[n] = '\0';
	return 1;
}

/* month_days - days of month mon (1..12) of year. */
static int month_days(int year, int mon)
{
	static const int days[] = {31, 28, 31, 30, 31, 30,
				   31, 31, 30, 31, 30, 31};
	int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;

	return mon == 2 && leap ? 29 : days[mon - 1];
}

/* number - the decimal digits at *p (1 to maxd of them) as an int; -1
 * when there are none or too many. */
static int number(const char **p, int maxd)
{
	int v = 0, n = 0;

	while (isdigit((unsigned char)**p)) {
		if (++n > maxd)
			return -1;
		v = v * 10 + (*(*p)++ - '0');
	}
	return n ? v : -1;
}

/* parse_date - MM/DD/YYYY or YYYY-MM-DD into o. */
static int parse_date(const char *s, struct nsr_sched_override *o)
{
	const char *p = s, *yp;
	int a = number(&p, 4), y, mon, mday;

	if (a < 0 || (*p != '/' && *p != '-'))
		return -1;
	if (*p++ == '/') {
		mon = a;
		mday = number(&p, 2);
		if (*p++ != '/')
			return -1;
		yp = p;
		y = number(&p, 4);
		if (p - yp != 4)
			return -1;
	} else {
		y = a;
		if (p - s != 5)
			return -1;
		mon = number(&p, 2);
		if (*p++ != '-')
			return -1;
		mday = number(&p, 2);
	}
	if (*p || y < 1970 || mon < 1 || mon > 12 || mday < 1 ||
	    mday > month_days(y, mon))
		return -1;
	o->year = (int16_t)y;
	o->mon = (uint8_t)mon;
	o->mday = (uint8_t)mday;
	return 0;
}

/* parse_action - the levels of s->period from text. */
static int parse_action(struct nsr_sched *s, const char *text,
			struct nsr_buf *why)
{
	unsigned want = s->period == NSR_SCHED_WEEK ? 7 : 31;
	const char *p = text;
	char w[16];
	int r, lv;

	s->nlevels = 0;
	while ((r = next_word(&p, w, sizeof(w))) != 0) {
		lv = r > 0 ? nsr_sched_level_parse(w) : -1;
		if (lv < 0)
			return fail(why, "schedule action: '%.40s' is not a "
				    "level (%s)", r > 0 ? w : "a long word",
				    LEVEL_WORDS);
		if (s->nlevels == want)
			break;
		s->levels[s->nlevels++] = (uint8_t)lv;
	}
	if (s->nlevels == want && !r)
		return NSR_OK;
	if (s->period == NSR_SCHED_WEEK)
		return fail(why, "schedule action: a Week schedule has 7 "
			    "levels, Sunday to Saturday (as \"full incr "
			    "incr incr incr incr incr\"); %s given",
			    r ? "more" : "fewer");
	return fail(why, "schedule action: a Month schedule has 31 levels, "
		    "day 1 to day 31; %s given", r ? "more" : "fewer");
}

/* add_override - one "LEVEL DATE" value. */
static int add_override(struct nsr_sched *s, const char *text,
			struct nsr_buf *why)
{
	struct nsr_sched_override o;
	const char *p = text;
	char lw[16], dw[16], extra[2];
	int lv;

	if (next_word(&p, lw, sizeof(lw)) != 1 ||
	    next_word(&p, dw, sizeof(dw)) != 1 ||
	    next_word(&p, extra, sizeof(extra)) != 0)
		return fail(why, "schedule override '%.60s': write a level "
			    "and a date, as \"full 12/25/2026\" or \"incr "
			    "2026-12-25\"", text);
	lv = nsr_sched_level_parse(lw);
	if (lv < 0)
		return fail(why, "schedule override '%.60s': '%s' is not a "
			    "level (%s)", text, lw, LEVEL_WORDS);
	if (parse_date(dw, &o) != 0)
		return fail(why, "schedule override '%.60s': '%s' is not a "
			    "date (MM/DD/YYYY or YYYY-MM-DD, 1970 or later)",
			    text, dw);
	o.level = (uint8_t)lv;
	for (size_t i = 0; i < s->nover; i++)
		if (s->over[i].year == o.year && s->over[i].mon == o.mon &&
		    s->over[i].mday == o.mday)
			return fail(why, "schedule override: two levels for "
				    "%s (keep one)", dw);
	if (s->nover == NSR_SCHED_MAX_OVERRIDES)
		return fail(why, "schedule override: more than %d dates",
			    NSR_SCHED_MAX_OVERRIDES);
	s->over[s->nover++] = o;
	return NSR_OK;
}

/* nsr_sched_parse - a schedule from its attributes. */
int nsr_sched_parse(const char *period, const char *action,
		    const char *const *over, size_t nover,
		    struct nsr_sched *s, struct nsr_buf *why)
{
	int rc;

	memset(s, 0, sizeof(*s));
	if (!period || strcasecmp(period, "Week") == 0)
		s->period = NSR_SCHED_WEEK;
	else if (strcasecmp(period, "Month") == 0)
		s->period = NSR_SCHED_MONTH;
	else
		return fail(why, "schedule period '%.40s': Week or Month",
			    period);
	rc = parse_action(s, action ? action
				    : "full incr incr incr incr incr incr",
			  why);
	for (size_t i = 0; rc == NSR_OK && i < nover; i++)
		rc = add_override(s, over[i], why);
	return rc;
}

/* nsr_sched_level_on - the level on one day. */
int nsr_sched_level_on(const struct nsr_sched *s, int year, int mon,
		       int mday, int wday)
{
	for (size_t i = 0; i < s->nover; i++)
		if (s->over[i].year == year && s->over[i].mon == mon &&
		    s->over[i].mday == mday)
			return s->over[i].level;
	if (s->period == NSR_SCHED_WEEK)
		return s->levels[(unsigned)wday % 7];
	return s->levels[(unsigned)(mday - 1) % 31];
}

/* nsr_sched_level_at - the level on the local day of t. */
int nsr_sched_level_at(const struct nsr_sched *s, time_t t)
{
	struct tm tm;

	if (!localtime_r(&t, &tm))
		return s->levels[0];
	return nsr_sched_level_on(s, tm.tm_year + 1900, tm.tm_mon + 1,
				  tm.tm_mday, tm.tm_wday);
}

/* parse_hhmm - "H:MM" or "HH:MM" into hours and minutes; -1 if not. */
static int parse_hhmm(const char *text, int *h, int *m)
{
	const char *p = text;

	*h = number(&p, 2);
	if (*h < 0 || *p++ != ':' || !isdigit((unsigned char)p[0]) ||
	    !isdigit((unsigned char)p[1]) || p[2])
		return -1;
	*m = number(&p, 2);
	return 0;
}

/* nsr_sched_parse_start - a start time into seconds after midnight. */
int nsr_sched_parse_start(const char *text, int *sec, struct nsr_buf *why)
{
	int h, m;

	if (parse_hhmm(text, &h, &m) != 0)
		return fail(why, "start time '%.40s': write hours and "
			    "minutes, as 21:30", text);
	if (h > 23 || m > 59)
		return fail(why, "start time '%.40s': there is no such time "
			    "of day; 00:00 to 23:59 (a run after midnight "
			    "is 01:00, not 25:00)", text);
	*sec = h * 3600 + m * 60;
	return NSR_OK;
}

/* nsr_sched_parse_interval - an interval into seconds. */
int nsr_sched_parse_interval(const char *text, int *sec,
			     struct nsr_buf *why)
{
	int h, m;

	if (parse_hhmm(text, &h, &m) != 0)
		return fail(why, "interval '%.40s': write hours and minutes, "
			    "as 24:00 (once a day) or 6:00", text);
	if (m > 59 || h * 60 + m > 24 * 60 || h * 60 + m < 1)
		return fail(why, "interval '%.40s': from 00:01 to 24:00 "
			    "(once a day)", text);
	*sec = h * 3600 + m * 60;
	return NSR_OK;
}

/* nsr_sched_next_run - the first run after t: the start time and every
 * interval after it until midnight, each day (local time, so a run stays
 * at its time of day across DST changes). */
time_t nsr_sched_next_run(time_t t, int start, int interval)
{
	struct tm day, tm;
	time_t r;

	if (interval <= 0)
		interval = 86400;
	if (!localtime_r(&t, &day))
		return t + 86400;
	for (int d = 0; d < 3; d++) {
		for (int s = start; s < 86400; s += interval) {
			tm = day;
			tm.tm_mday += d;
			tm.tm_hour = s / 3600;
			tm.tm_min = s % 3600 / 60;
			tm.tm_sec = 0;
			tm.tm_isdst = -1;
			r = mktime(&tm);
			if (r != (time_t)-1 && r > t)
				return r;
		}
	}
	return t + 86400; /* not reached: day 1 always has a run */
}
