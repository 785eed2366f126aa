/*
 * sched.h - the vocabulary of scheduled backups: NetWorker's NSR schedule
 * (which level a client's backup runs at on a given day) and a group's
 * start time and interval.
 *
 * A schedule has
 *   period    "Week" or "Month";
 *   action    one level per day of the period, blank separated: 7 for a
 *             Week (Sunday first), 31 for a Month (day 1 first; days a
 *             month lacks are not used);
 *   override  values "LEVEL DATE" that replace the action on that date,
 *             DATE as MM/DD/YYYY or YYYY-MM-DD ("full 12/25/2026").
 * A level is full, incr, 1 to 9, or skip (no backup that day); case does
 * not matter.  Dates are days of the local time zone (TZ).
 *
 * A group's start time is HH:MM (00:00 to 23:59, "3:33" too); its
 * interval HH:MM (00:01 to 24:00): the group runs at the start time and
 * every interval after it until midnight, every day.
 *
 * Every parser writes what is wrong and how to write it right to why
 * (may be NULL) and returns NSR_ERR_SYNTAX.
 */
#ifndef NSR_SCHED_H
#define NSR_SCHED_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

struct nsr_buf;

/* A schedule's level beyond enum nsr_level: no backup that day. */
#define NSR_SCHED_SKIP 100
/* At most this many overrides in one schedule. */
#define NSR_SCHED_MAX_OVERRIDES 1024
/* Longest text of one action or override value the parsers accept. */
#define NSR_SCHED_TEXT_MAX 1024

enum nsr_sched_period { NSR_SCHED_WEEK = 0, NSR_SCHED_MONTH = 1 };

struct nsr_sched_override {
	int16_t year;	/* e.g. 2026 */
	uint8_t mon;	/* 1..12 */
	uint8_t mday;	/* 1..31, valid for that month */
	uint8_t level;	/* enum nsr_level or NSR_SCHED_SKIP */
};

/* A parsed schedule.  Invariants: 1. nlevels is 7 for a Week and 31 for
 * a Month; 2. no two overrides have the same date. */
struct nsr_sched {
	int period;	/* enum nsr_sched_period */
	unsigned nlevels;
	uint8_t levels[31];
	size_t nover;
	struct nsr_sched_override over[NSR_SCHED_MAX_OVERRIDES];
};

/* nsr_sched_level_parse - a schedule level word: enum nsr_level (full,
 * 1-9, incr), NSR_SCHED_SKIP, or -1. */
int nsr_sched_level_parse(const char *word);
/* nsr_sched_level_name - "full", "1".."9", "incr", "skip"; "?" else. */
const char *nsr_sched_level_name(int level);

/* nsr_sched_parse - a schedule from its resource's attributes (period
 * and action may be NULL: the defaults "Week" and "full incr incr incr
 * incr incr incr"); over[0..nover) are the override values. */
int nsr_sched_parse(const char *period, const char *action,
		    const char *const *over, size_t nover,
		    struct nsr_sched *s, struct nsr_buf *why);
/* nsr_sched_level_on - the level of s on the day year-mon-mday (wday:
 * 0 = Sunday). */
int nsr_sched_level_on(const struct nsr_sched *s, int year, int mon,
		       int mday, int wday);
/* nsr_sched_level_at - the level of s on the local day of t. */
int nsr_sched_level_at(const struct nsr_sched *s, time_t t);
/* nsr_sched_parse_start - a group start time "HH:MM" into seconds after
 * midnight (0 .. 86340). */
int nsr_sched_parse_start(const char *text, int *sec, struct nsr_buf *why);
/* nsr_sched_parse_interval - a group interval "HH:MM" into seconds
 * (60 .. 86400). */
int nsr_sched_parse_interval(const char *text, int *sec,
			     struct nsr_buf *why);
/* nsr_sched_next_run - the first run of a group (start and interval in
 * seconds, as parsed) strictly after t, in local time. */
time_t nsr_sched_next_run(time_t t, int start, int interval);

#endif /* NSR_SCHED_H */
