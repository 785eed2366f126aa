/*
 * getdate.c - nsr_getdate time expressions (getdate.h has the syntax).
 *
 * Owns the small date language administrators type after mminfo -t,
 * -q savetime>=..., nsrmm -e/-w and jobquery.  Text is cut into tokens
 * (numbers, words, punctuation), items are recognised left to right into
 * a set of fields, and the fields are then applied to `now` in a fixed
 * order: epoch, date, day/weekday, time of day, calendar steps, seconds.
 */
#include "nsr/compat.h"

#include <ctype.h>
#include <time.h>

#include "nsr/err.h"
#include "nsr/getdate.h"

#define GD_MAX_TOKENS 64
#define GD_MAX_WORD 16
#define GD_MAX_REL 100000000LL	/* largest count in "N units" */

enum tok_kind { T_NUM, T_WORD, T_PUNCT };

struct tok {
	enum tok_kind kind;
	size_t off, len;
	long long num;		/* T_NUM */
	int digits;		/* T_NUM */
	char word[GD_MAX_WORD + 1]; /* T_WORD, lower case */
	char ch;		/* T_PUNCT */
};

struct gd {
	struct tok t[GD_MAX_TOKENS];
	int n, i;
	struct nsr_getdate_error *err;
	/* Items seen. */
	int have_date, have_time, have_day, have_epoch, have_rel, have_now;
	int year, mon, mday;		/* have_date */
	int hour, min, sec;		/* have_time */
	int day_off;			/* have_day: today 0, yesterday -1 */
	int wday, wday_mode;		/* wday_mode: 0 none, 1 this-or-next, */
	/* 2 last, 3 next                      */
	long long epoch;
	long long rel_year, rel_mon, rel_day, rel_sec;
	long long unago_year, unago_mon, unago_day, unago_sec;
};

/* fail - record what failed at token k (k == n: end of text). */
static int fail(struct gd *g, int k, const char *msg)
{
	if (g->err) {
		if (k < g->n) {
			g->err->offset = g->t[k].off;
			g->err->len = g->t[k].len;
		} else {
			g->err->offset = g->n ? g->t[g->n - 1].off +
						g->t[g->n - 1].len : 0;
			g->err->len = 0;
		}
		snprintf(g->err->msg, sizeof(g->err->msg), "%s", msg);
	}
	return NSR_ERR_SYNTAX;
}

/* fail_off - record a failure at a raw offset (tokenizer). */
static int fail_off(struct gd *g, size_t off, size_t len, const char *msg)
{
	if (g->err) {
		g->err->offset = off;
		g->err->len = len;
		snprintf(g->err->msg, sizeof(g->err->msg), "%s", msg);
	}
	return NSR_ERR_SYNTAX;
}

/* tokenize - cut text into tokens. */
static int tokenize(struct gd *g, const char *s)
{
	size_t i = 0;

	while (s[i]) {
		struct tok *t;
		unsigned char c = (unsigned char)s[i];

		if (isspace(c) || c == ',') {
			i++;
			continue;
		}
		if (g->n == GD_MAX_TOKENS)
			return fail_off(g, i, 1, "too many words");
		t = &g->t[g->n];
		memset(t, 0, sizeof(*t));
		t->off = i;
		if (isdigit(c)) {
			t->kind = T_NUM;
			while (isdigit((unsigned char)s[i])) {
				if (t->digits == 18)
					return fail_off(g, t->off, i - t->off,
							"number too large");
				t->num = t->num * 10 + (s[i] - '0');
				t->digits++;
				i++;
			}
		} else if (isalpha(c)) {
			size_t n = 0;

			t->kind = T_WORD;
			while (isalpha((unsigned char)s[i])) {
				if (n == GD_MAX_WORD)
					return fail_off(g, t->off, i - t->off,
							"unknown word");
				t->word[n++] =
					(char)tolower((unsigned char)s[i]);
				i++;
			}
			/* Allow abbreviations with a dot: "Feb.", "a.m." */
			if (s[i] == '.' && !isdigit((unsigned char)s[i + 1]))
				i++;
		} else if (strchr("/-:+@", c)) {
			t->kind = T_PUNCT;
			t->ch = (char)c;
			i++;
		} else {
			return fail_off(g, i, 1, "unexpected character");
		}
		t->len = i - t->off;
		g->n++;
	}
	return NSR_OK;
}

/* lookup - index of word in a NULL-terminated table, or -1. */
static int lookup(const char *word, const char *const *table)
{
	for (int i = 0; table[i]; i++)
		if (strcmp(word, table[i]) == 0)
			return i;
	return -1;
}

static const char *const months[] = {
	"january", "february", "march", "april", "may", "june", "july",
	"august", "september", "october", "november", "december",
	"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct",
	"nov", "dec", "sept", NULL
};

static const char *const wdays[] = {
	"sunday", "monday", "tuesday", "wednesday", "thursday", "friday",
	"saturday", "sun", "mon", "tue", "wed", "thu", "fri", "sat",
	"tues", "wednes", "thur", "thurs", NULL
};

/* month_of - 1..12 for a month word at token k, else 0. */
static int month_of(const struct gd *g, int k)
{
	int m;

	if (k >= g->n || g->t[k].kind != T_WORD)
		return 0;
	m = lookup(g->t[k].word, months);
	if (m < 0)
		return 0;
	return m == 24 ? 9 : m % 12 + 1;
}

/* wday_of - 0..6 for a weekday word at token k, else -1. */
static int wday_of(const struct gd *g, int k)
{
	static const int extra[] = { 2, 3, 4, 4 };
	int w;

	if (k >= g->n || g->t[k].kind != T_WORD)
		return -1;
	w = lookup(g->t[k].word, wdays);
	if (w < 0)
		return -1;
	return w < 14 ? w % 7 : extra[w - 14];
}

struct unit {
	const char *name;
	char kind; /* 's' seconds, 'd' days, 'm' months, 'y' years */
	int mult;
};

static const struct unit units[] = {
	{ "second", 's', 1 }, { "seconds", 's', 1 }, { "sec", 's', 1 },
	{ "secs", 's', 1 }, { "minute", 's', 60 }, { "minutes", 's', 60 },
	{ "min", 's', 60 }, { "mins", 's', 60 }, { "hour", 's', 3600 },
	{ "hours", 's', 3600 }, { "day", 'd', 1 }, { "days", 'd', 1 },
	{ "week", 'd', 7 }, { "weeks", 'd', 7 }, { "fortnight", 'd', 14 },
	{ "fortnights", 'd', 14 }, { "month", 'm', 1 }, { "months", 'm', 1 },
	{ "year", 'y', 1 }, { "years", 'y', 1 },
};

/* unit_of - the unit named by token k, or NULL. */
static const struct unit *unit_of(const struct gd *g, int k)
{
	if (k >= g->n || g->t[k].kind != T_WORD)
		return NULL;
	for (size_t i = 0; i < NSR_ARRAY_SIZE(units); i++)
		if (strcmp(g->t[k].word, units[i].name) == 0)
			return &units[i];
	return NULL;
}

/* is_punct - token k is the punctuation c. */
static int is_punct(const struct gd *g, int k, char c)
{
	return k < g->n && g->t[k].kind == T_PUNCT && g->t[k].ch == c;
}

/* is_word - token k is the word w. */
static int is_word(const struct gd *g, int k, const char *w)
{
	return k < g->n && g->t[k].kind == T_WORD &&
	       strcmp(g->t[k].word, w) == 0;
}

/* is_num - token k is a number. */
static int is_num(const struct gd *g, int k)
{
	return k < g->n && g->t[k].kind == T_NUM;
}

/* add_rel - add count units to the relative offsets. */
static void add_rel(struct gd *g, long long count, const struct unit *u)
{
	switch (u->kind) {
	case 's':
		g->rel_sec += count * u->mult;
		break;
	case 'd':
		g->rel_day += count * u->mult;
		break;
	case 'm':
		g->rel_mon += count;
		break;
	default:
		g->rel_year += count;
		break;
	}
	g->have_rel = 1;
}

/* days_in - days in month mon (1..12) of year. */
static int days_in(int year, int mon)
{
	static const int d[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30,
				 31 };
	int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;

	return mon == 2 && leap ? 29 : d[mon - 1];
}

/* set_date - record a calendar date, checking it exists. */
static int set_date(struct gd *g, int at, long long y, long long m,
		    long long d)
{
	if (g->have_date || g->have_day || g->wday_mode)
		return fail(g, at, "more than one date");
	if (m < 1 || m > 12)
		return fail(g, at, "month out of range (1-12)");
	if (y < 1900 || y > 9999)
		return fail(g, at, "year out of range");
	if (d < 1 || d > days_in((int)y, (int)m))
		return fail(g, at, "no such day in that month");
	g->have_date = 1;
	g->year = (int)y;
	g->mon = (int)m;
	g->mday = (int)d;
	return NSR_OK;
}

/* full_year - 70..99 -> 19YY, 00..69 -> 20YY; others as given. */
static long long full_year(const struct tok *t)
{
	if (t->digits <= 2)
		return t->num < 70 ? 2000 + t->num : 1900 + t->num;
	return t->num;
}

/* ampm - 0 for am, 12 for pm, -1 if token k is neither. */
static int ampm(const struct gd *g, int k)
{
	if (is_word(g, k, "am"))
		return 0;
	if (is_word(g, k, "pm"))
		return 12;
	return -1;
}

/* parse_time - HH[:MM[:SS]] [am|pm] starting at token i (a number). */
static int parse_time(struct gd *g)
{
	int at = g->i;
	long long h = g->t[g->i].num, m = 0, s = 0;
	int ap;

	if (g->have_time)
		return fail(g, at, "more than one time of day");
	g->i++;
	if (is_punct(g, g->i, ':')) {
		if (!is_num(g, g->i + 1))
			return fail(g, g->i + 1, "expected minutes after ':'");
		m = g->t[g->i + 1].num;
		g->i += 2;
		if (is_punct(g, g->i, ':')) {
			if (!is_num(g, g->i + 1))
				return fail(g, g->i + 1,
					    "expected seconds after ':'");
			s = g->t[g->i + 1].num;
			g->i += 2;
		}
	}
	ap = ampm(g, g->i);
	if (ap >= 0) {
		if (h < 1 || h > 12)
			return fail(g, at,
				    "hour out of range for am/pm (1-12)");
		h = h % 12 + ap;
		g->i++;
	}
	if (h > 23)
		return fail(g, at, "hour out of range (0-23)");
	if (m > 59)
		return fail(g, at, "minutes out of range (0-59)");
	if (s > 60)
		return fail(g, at, "seconds out of range (0-60)");
	g->have_time = 1;
	g->hour = (int)h;
	g->min = (int)m;
	g->sec = (int)s;
	return NSR_OK;
}

/* year_follows - token k is a number that reads as a year, not a time or
 * a count. */
static int year_follows(const struct gd *g, int k)
{
	if (!is_num(g, k) || (g->t[k].digits != 2 && g->t[k].digits != 4))
		return 0;
	return !is_punct(g, k + 1, ':') && ampm(g, k + 1) < 0 &&
	       !unit_of(g, k + 1);
}

/* parse_number - an item that starts with a number. */
static int parse_number(struct gd *g)
{
	const struct tok *t = &g->t[g->i];
	const struct unit *u;
	int at = g->i, m, rc;

	if (is_punct(g, at + 1, '/')) {		/* MM/DD[/YY[YY]] */
		long long y;

		if (!is_num(g, at + 2))
			return fail(g, at + 2, "expected a day after '/'");
		y = 0;
		g->i = at + 3;
		if (is_punct(g, g->i, '/')) {
			if (!is_num(g, g->i + 1))
				return fail(g, g->i + 1,
					    "expected a year after '/'");
			y = full_year(&g->t[g->i + 1]);
			g->i += 2;
		} else {
			y = -1;
		}
		return set_date(g, at, y < 0 ? g->year : y, t->num,
				g->t[at + 2].num);
	}
	if (is_punct(g, at + 1, '-') && t->digits == 4) { /* YYYY-MM-DD */
		if (!is_num(g, at + 2) || !is_punct(g, at + 3, '-') ||
		    !is_num(g, at + 4))
			return fail(g, at, "expected YYYY-MM-DD");
		rc = set_date(g, at, t->num, g->t[at + 2].num,
			      g->t[at + 4].num);
		g->i = at + 5;
		if (rc == NSR_OK && is_word(g, g->i, "t") &&
		    is_num(g, g->i + 1)) {
			g->i++;
			rc = parse_time(g);
		}
		return rc;
	}
	if (is_punct(g, at + 1, ':') || ampm(g, at + 1) >= 0)
		return parse_time(g);
	u = unit_of(g, at + 1);
	if (u) {
		if (t->num > GD_MAX_REL)
			return fail(g, at, "number too large");
		add_rel(g, t->num, u);
		g->i = at + 2;
		return NSR_OK;
	}
	m = month_of(g, at + 1);
	if (m) {					/* 24 February [2022] */
		long long y = g->year;

		g->i = at + 2;
		if (year_follows(g, g->i)) {
			y = full_year(&g->t[g->i]);
			g->i++;
		}
		return set_date(g, at, y, m, t->num);
	}
	if (g->n == 1) {
		g->have_epoch = 1;
		g->epoch = t->num;
		g->i++;
		return NSR_OK;
	}
	return fail(g, at, "expected a date, a time or a unit after the "
		    "number");
}

/* parse_signed - "+N unit" / "-N unit". */
static int parse_signed(struct gd *g)
{
	int at = g->i;
	long long sign = g->t[at].ch == '-' ? -1 : 1;
	const struct unit *u;

	if (!is_num(g, at + 1))
		return fail(g, at + 1, "expected a number after the sign");
	u = unit_of(g, at + 2);
	if (!u)
		return fail(g, at + 2, "expected a unit (days, hours, ...)");
	if (g->t[at + 1].num > GD_MAX_REL)
		return fail(g, at + 1, "number too large");
	add_rel(g, sign * g->t[at + 1].num, u);
	g->i = at + 3;
	return NSR_OK;
}

/* set_day - today/yesterday/tomorrow. */
static int set_day(struct gd *g, int off)
{
	if (g->have_date || g->have_day || g->wday_mode)
		return fail(g, g->i, "more than one date");
	g->have_day = 1;
	g->day_off = off;
	g->i++;
	return NSR_OK;
}

/* set_wday - a weekday with mode 1 (this or next), 2 (last), 3 (next). */
static int set_wday(struct gd *g, int at, int w, int mode)
{
	if (g->have_date || g->have_day || g->wday_mode)
		return fail(g, at, "more than one date");
	g->wday = w;
	g->wday_mode = mode;
	return NSR_OK;
}

/* parse_lastnext - last/next/this followed by a unit or a weekday. */
static int parse_lastnext(struct gd *g, int sign)
{
	int at = g->i, w = wday_of(g, at + 1);
	const struct unit *u = unit_of(g, at + 1);

	g->i = at + 2;
	if (w >= 0)
		return set_wday(g, at, w, sign < 0 ? 2 : sign > 0 ? 3 : 1);
	if (u) {
		add_rel(g, sign, u);
		return NSR_OK;
	}
	return fail(g, at + 1, "expected a unit or a weekday");
}

/* parse_word - an item that starts with a word. */
static int parse_word(struct gd *g)
{
	int at = g->i, m, w;
	const char *word = g->t[at].word;

	if (strcmp(word, "now") == 0) {
		if (g->have_now)
			return fail(g, at, "'now' given twice");
		g->have_now = 1;
		g->i++;
		return NSR_OK;
	}
	if (strcmp(word, "today") == 0)
		return set_day(g, 0);
	if (strcmp(word, "yesterday") == 0)
		return set_day(g, -1);
	if (strcmp(word, "tomorrow") == 0)
		return set_day(g, 1);
	if (strcmp(word, "noon") == 0 || strcmp(word, "midnight") == 0) {
		if (g->have_time)
			return fail(g, at, "more than one time of day");
		g->have_time = 1;
		g->hour = word[0] == 'n' ? 12 : 0;
		g->min = g->sec = 0;
		g->i++;
		return NSR_OK;
	}
	if (strcmp(word, "ago") == 0) {
		if (!g->have_rel || (g->rel_year == g->unago_year &&
				     g->rel_mon == g->unago_mon &&
				     g->rel_day == g->unago_day &&
				     g->rel_sec == g->unago_sec))
			return fail(g, at, "'ago' without a time span before "
				    "it");
		g->rel_year = g->unago_year - (g->rel_year - g->unago_year);
		g->rel_mon = g->unago_mon - (g->rel_mon - g->unago_mon);
		g->rel_day = g->unago_day - (g->rel_day - g->unago_day);
		g->rel_sec = g->unago_sec - (g->rel_sec - g->unago_sec);
		g->unago_year = g->rel_year;
		g->unago_mon = g->rel_mon;
		g->unago_day = g->rel_day;
		g->unago_sec = g->rel_sec;
		g->i++;
		return NSR_OK;
	}
	if (strcmp(word, "last") == 0)
		return parse_lastnext(g, -1);
	if (strcmp(word, "next") == 0)
		return parse_lastnext(g, 1);
	if (strcmp(word, "this") == 0)
		return parse_lastnext(g, 0);
	if ((strcmp(word, "a") == 0 || strcmp(word, "an") == 0) &&
	    unit_of(g, at + 1)) {
		add_rel(g, 1, unit_of(g, at + 1));
		g->i = at + 2;
		return NSR_OK;
	}
	m = month_of(g, at);
	if (m) {				/* February 24[,] [2022] */
		long long y = g->year;

		if (!is_num(g, at + 1))
			return fail(g, at + 1,
				    "expected a day after the month");
		g->i = at + 2;
		if (year_follows(g, g->i)) {
			y = full_year(&g->t[g->i]);
			g->i++;
		}
		return set_date(g, at, y, m, g->t[at + 1].num);
	}
	w = wday_of(g, at);
	if (w >= 0) {
		g->i++;
		return set_wday(g, at, w, 1);
	}
	return fail(g, at, "unknown word");
}

/* parse_items - recognise every item of the expression. */
static int parse_items(struct gd *g)
{
	int rc = NSR_OK;

	if (g->n == 0)
		return fail(g, 0, "empty time expression");
	if (is_punct(g, 0, '@')) {
		if (g->n != 2 || !is_num(g, 1))
			return fail(g, 1, "expected seconds after '@'");
		g->have_epoch = 1;
		g->epoch = g->t[1].num;
		return NSR_OK;
	}
	while (g->i < g->n && rc == NSR_OK) {
		const struct tok *t = &g->t[g->i];

		if (t->kind == T_NUM)
			rc = parse_number(g);
		else if (t->kind == T_WORD)
			rc = parse_word(g);
		else if (t->ch == '+' || t->ch == '-')
			rc = parse_signed(g);
		else
			rc = fail(g, g->i, "unexpected punctuation");
	}
	return rc;
}

/* compute - apply the items to now. */
static int compute(struct gd *g, time_t now, time_t *out)
{
	struct tm tm;
	time_t t;

	if (g->have_epoch) {
		*out = (time_t)g->epoch;
		return NSR_OK;
	}
	if (llabs(g->rel_year) > 100000 || llabs(g->rel_mon) > 1200000 ||
	    llabs(g->rel_day) > 40000000)
		return NSR_ERR_INVAL;
	if (!localtime_r(&now, &tm))
		return NSR_ERR_INVAL;
	if (g->have_date) {
		tm.tm_year = g->year - 1900;
		tm.tm_mon = g->mon - 1;
		tm.tm_mday = g->mday;
	}
	if (g->have_day)
		tm.tm_mday += g->day_off;
	if (g->wday_mode) {
		int ahead = (g->wday - tm.tm_wday + 7) % 7;
		int behind = (tm.tm_wday - g->wday + 7) % 7;

		if (g->wday_mode == 1)
			tm.tm_mday += ahead;
		else if (g->wday_mode == 2)
			tm.tm_mday -= behind ? behind : 7;
		else
			tm.tm_mday += ahead ? ahead : 7;
	}
	if ((g->have_date || g->have_day || g->wday_mode) && !g->have_time)
		tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
	if (g->have_time) {
		tm.tm_hour = g->hour;
		tm.tm_min = g->min;
		tm.tm_sec = g->sec;
	}
	tm.tm_year += (int)g->rel_year;
	tm.tm_mon += (int)g->rel_mon;
	tm.tm_mday += (int)g->rel_day;
	tm.tm_isdst = -1;
	t = mktime(&tm);
	if (t == (time_t)-1)
		return NSR_ERR_INVAL;
	if (__builtin_add_overflow(t, (time_t)g->rel_sec, &t))
		return NSR_ERR_INVAL;
	*out = t;
	return NSR_OK;
}

/* nsr_getdate_err - evaluate text, saying where it failed. */
int nsr_getdate_err(const char *text, time_t now, time_t *out,
		    struct nsr_getdate_error *err)
{
	struct gd *g;
	struct tm tm;
	int rc;

	if (strnlen(text, NSR_GETDATE_MAX + 1) > NSR_GETDATE_MAX) {
		if (err) {
			err->offset = NSR_GETDATE_MAX;
			err->len = 0;
			snprintf(err->msg, sizeof(err->msg), "too long");
		}
		return NSR_ERR_TOOBIG;
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		return NSR_ERR_NOMEM;
	g->err = err;
	if (localtime_r(&now, &tm))
		g->year = tm.tm_year + 1900;
	rc = tokenize(g, text);
	if (rc == NSR_OK)
		rc = parse_items(g);
	if (rc == NSR_OK && g->have_epoch && g->n > 2)
		rc = fail(g, 0, "a raw time must stand alone");
	if (rc == NSR_OK) {
		rc = compute(g, now, out);
		if (rc != NSR_OK && err) {
			err->offset = 0;
			err->len = strlen(text);
			snprintf(err->msg, sizeof(err->msg),
				 "time out of range");
		}
	}
	free(g);
	return rc;
}

/* nsr_getdate - evaluate text relative to now. */
int nsr_getdate(const char *text, time_t now, time_t *out)
{
	return nsr_getdate_err(text, now, out, NULL);
}

/* nsr_getdate_text - see getdate.h.  Two-digit years read back only
 * from 1970 to 2069; other years are written with four digits. */
void nsr_getdate_text(time_t t, char *out, size_t n)
{
	struct tm tm;
	const char *f = "%m/%d/%y %H:%M:%S";

	if (!localtime_r(&t, &tm)) {
		snprintf(out, n, "%lld", (long long)t);
		return;
	}
	if (tm.tm_year < 70 || tm.tm_year >= 170)
		f = "%m/%d/%Y %H:%M:%S";
	if (strftime(out, n, f, &tm) == 0)
		snprintf(out, n, "%lld", (long long)t);
}
