/*
 * level.h - backup levels, the one owner of their names and numbers
 * (NetWorker's meaning: full; 1-9, what changed since the last backup of
 * a lower level; incr, since the last backup of any level; manual, an ad
 * hoc save).  The media database stores the number; mminfo, save and
 * the schedules spell it with nsr_level_name.
 */
#ifndef NSR_LEVEL_H
#define NSR_LEVEL_H

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

#endif /* NSR_LEVEL_H */
