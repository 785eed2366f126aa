/*
 * glob.h - questions about shell wildcard patterns as fnmatch(3) reads
 * them with no flags ('*' matches any string, '/' too; '?' one byte;
 * "[...]" a set, '!' or '^' first for its complement, ranges, classes
 * such as [:alpha:]; a backslash quotes the next byte; a '[' without
 * its ']' is itself), in the C locale, over strings of non-NUL bytes.
 */
#ifndef NSR_GLOB_H
#define NSR_GLOB_H

/* nsr_glob_overlap - could one string match both patterns a and b?  1
 * yes, 0 no, as fnmatch would answer for every string: "[[=a=]]" and
 * "[[.a.]]" are 'a'; a pattern that ends in a lone backslash matches
 * nothing.  Some cases err towards 1 (an overlap said, never one
 * missed): inside a set, a class name fnmatch does not know and a
 * collating symbol of more than one byte are taken as any byte, a
 * malformed "[=" as its bytes (glibc may match less); and patterns too
 * long to compare (their lengths' product over 4 M) are said to
 * overlap. */
int nsr_glob_overlap(const char *a, const char *b);

#endif /* NSR_GLOB_H */
