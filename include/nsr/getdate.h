/*
 * getdate.h - NetWorker's nsr_getdate time expressions ("3 days ago",
 * "yesterday 22:00", "02/24/22", "24 February 2022", "last monday").
 *
 * An expression is a sequence of items, each used at most once, in the
 * local time zone (TZ):
 *   date      MM/DD, MM/DD/YY, MM/DD/YYYY, YYYY-MM-DD, "24 February 2022",
 *             "February 24, 2022", "Feb 24" (current year); two-digit years
 *             below 70 are 20YY, others 19YY
 *   time      HH:MM[:SS] [am|pm], "10pm", noon, midnight; YYYY-MM-DDTHH:MM
 *   day       today, yesterday, tomorrow; a weekday ("monday" = today or the
 *             next one), "last monday" (before today), "next monday"
 *   relative  [+|-]N unit [ago], "a week ago", "last week", "next month",
 *             "this week"; unit = second(s), sec(s), minute(s), min(s),
 *             hour(s), day(s), week(s), fortnight(s), month(s), year(s);
 *             "ago" negates the relative items before it
 *   now       the reference time itself
 *   epoch     a number alone, or "@N": seconds since 1970-01-01 UTC
 * A date or day item without a time means 00:00:00 of that day ("today" is
 * the last midnight); an expression with only relative items keeps the
 * time of day of `now`.  Day, month and year steps are calendar steps
 * (correct across DST changes); hours, minutes and seconds are exact.
 * Case does not matter; ',' is a blank; a '.' may end a word ("Feb.").
 */
#ifndef NSR_GETDATE_H
#define NSR_GETDATE_H

#include <stddef.h>
#include <time.h>

/* What failed: the byte offset and length of the offending word (len 0 =
 * end of text) and a short English reason. */
struct nsr_getdate_error {
	size_t offset;
	size_t len;
	char msg[96];
};

/* Longest expression accepted (NSR_ERR_TOOBIG beyond). */
#define NSR_GETDATE_MAX 256

/* nsr_getdate - evaluate text relative to now into *out.  NSR_OK;
 * NSR_ERR_SYNTAX (not an expression or an impossible date/time, e.g.
 * 02/30/24, 25:00), NSR_ERR_TOOBIG (text too long), NSR_ERR_INVAL (result
 * not representable).  *out is untouched on failure. */
int nsr_getdate(const char *text, time_t now, time_t *out);

/* nsr_getdate_err - nsr_getdate that also says where it failed (err may be
 * NULL; filled only on failure). */
int nsr_getdate_err(const char *text, time_t now, time_t *out,
		    struct nsr_getdate_error *err);

/* nsr_getdate_text - t as an expression nsr_getdate reads back to the
 * same second, "MM/DD/YY HH:MM:SS" in the local time zone (as mminfo
 * shows save times), into out (n >= 18; the number of seconds if the
 * time cannot be shown that way). */
void nsr_getdate_text(time_t t, char *out, size_t n);

#endif /* NSR_GETDATE_H */
