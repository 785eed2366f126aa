/*
 * level.h - backup levels, the one owner of their names and numbers
 * (NetWorker's meaning: full; 1-9, what changed since the last backup of
 * a lower level; incr, since the last backup of any level; manual, an ad
 * hoc save).  The media database stores the number; mminfo, save and
 * the schedules spell it with nsr_level_name.
 *
 * Which earlier backup a level save builds on, and what it must save, is
 * decided here too, as pure functions the server and the client share:
 *   nsr_level_decide   from the earlier save sets of the same client and
 *                      save set name: the effective level (an incr or a
 *                      level 1-9 with no full before it becomes full),
 *                      the reference save set and the "since" time;
 *   nsr_level_changed  whether an object must be saved since that time.
 */
#ifndef NSR_LEVEL_H
#define NSR_LEVEL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

enum nsr_level {
	NSR_LEVEL_FULL = 0,
	/* 1 .. 9 are the numbered levels */
	NSR_LEVEL_INCR = 10,
	NSR_LEVEL_MANUAL = 11,
	NSR_LEVEL_MAX = 11
};

/* nsr_level_name - "full", "1".."9", "incr", "manual"; "?" if invalid. */
const char *nsr_level_name(unsigned level);
/* nsr_level_parse - inverse of nsr_level_name; -1 if not a level. */
int nsr_level_parse(const char *s);

/*
 * An earlier save set of the same client and save set name.  The caller
 * says whether it may serve as a reference (usable): only a complete save
 * set whose data can be read back may, so not one aborted, in progress,
 * incomplete, suspect (damage was read from it: what it holds cannot be
 * trusted to be there, so the next backup must cover it again) or
 * recyclable.  Manual (ad hoc) save sets never serve: they may name other
 * paths or expire before the backups that would depend on them.
 */
struct nsr_level_prev {
	unsigned level;	  /* enum nsr_level */
	int64_t savetime; /* client clock, seconds */
	uint32_t ssid;
	int usable;
};

struct nsr_level_decision {
	unsigned level; /* the effective level */
	int promoted;	/* an incr or 1-9 became full: no usable full */
	long ref;	/* index of the reference in prev, -1 = none */
	uint32_t ref_ssid;
	unsigned ref_level;
	int64_t since; /* the reference's save time; 0 = save all */
};

/*
 * nsr_level_decide - the decision for a save at requested level (enum
 * nsr_level) given the earlier save sets prev[0..n) in any order.  full
 * and manual save everything.  incr builds on the newest usable save set
 * of any level but manual, level N on the newest usable one of a lower
 * level (full counts as 0); with no usable full at all the save is
 * promoted to full.  Among equal save times the later in prev wins.
 * NSR_OK, or NSR_ERR_INVAL for a level out of range (d is then full).
 */
int nsr_level_decide(unsigned requested, const struct nsr_level_prev *prev,
		     size_t n, struct nsr_level_decision *d);

/*
 * nsr_level_changed - 1 if an object with these modification and status
 * change times must be saved by a save that builds on a backup begun at
 * since: either time at or after since (nanoseconds compared).  The
 * status change time catches what keeps the old modification time: a
 * rename, a chmod or chown, a file moved or unpacked with its old times.
 * A zero since (full) saves everything.  "At" counts: a change in the
 * instant the reference began may have missed it.
 */
int nsr_level_changed(const struct timespec *mtime,
		      const struct timespec *ctime,
		      const struct timespec *since);

#endif /* NSR_LEVEL_H */
