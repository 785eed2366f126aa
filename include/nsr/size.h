/*
 * size.h - byte counts as administrators write them, the one grammar every
 * tool, daemon and resource uses: a number with an optional fraction and
 * an optional 1024-based unit, B, K/KB, M/MB, G/GB, T/TB, P/PB (any case,
 * blanks allowed before the unit): "512", "256K", "4000 MB", "1.5 TB".
 * Nothing may follow the unit.
 */
#ifndef NSR_SIZE_H
#define NSR_SIZE_H

/* nsr_size_parse - text into bytes.  NSR_OK; NSR_ERR_SYNTAX for text
 * that is not a size (junk after it included); NSR_ERR_TOOBIG past 2^63. */
int nsr_size_parse(const char *text, long long *out);

#endif /* NSR_SIZE_H */
