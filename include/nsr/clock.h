/*
 * clock.h - the time OpenNSR's schedules run on: the real time, or in
 * tests a clock the tests advance.
 *
 * When the environment names a file in NSR_TEST_CLOCK, nsr_clock_now()
 * is the real time plus the offset in seconds the file holds (one decimal
 * integer, may be negative; a missing, empty or malformed file counts as
 * 0).  The file is read again whenever its modification time or size
 * changes, so a test advances every daemon's clock by rewriting it (with
 * a rename, so a reader never sees half a number).  Schedules over weeks
 * then run in seconds.  Without NSR_TEST_CLOCK the clock is time(NULL).
 *
 * Invariants:
 *   1. the offset used is the one of the file's last successfully read
 *      content, or 0 when it has none;
 *   2. nsr_clock_now() is safe from any thread (one mutex).
 */
#ifndef NSR_CLOCK_H
#define NSR_CLOCK_H

#include <stdint.h>
#include <time.h>

/* The largest offset a test clock may hold (about 100 years). */
#define NSR_CLOCK_MAX_OFFSET ((int64_t)100 * 366 * 86400)

/* nsr_clock_now - the current time (seconds since the epoch). */
time_t nsr_clock_now(void);

/* nsr_clock_mono_ms - milliseconds of the monotonic clock (for timeouts
 * and intervals; never the test clock). */
long long nsr_clock_mono_ms(void);
/* nsr_clock_mono_us - the same clock in microseconds. */
long long nsr_clock_mono_us(void);

/* nsr_clock_offset - the test clock's offset in seconds (0: real time). */
int64_t nsr_clock_offset(void);

/* nsr_clock_parse_offset - the offset a test clock file holds: text of
 * len bytes, a decimal integer with optional sign and surrounding blanks,
 * within +-NSR_CLOCK_MAX_OFFSET.  NSR_OK or NSR_ERR_SYNTAX. */
int nsr_clock_parse_offset(const char *text, size_t len, int64_t *off);

#endif /* NSR_CLOCK_H */
