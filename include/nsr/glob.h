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
 * nothing.  Some cases answer 1 whatever the rest (an overlap said,
 * never one missed): a '[' inside a set that is not a known class,
 * "[=c=]" or "[.c.]" (glibc reads those in ways of its own), and
 * patterns too long to compare (their lengths' product over 4 M). */
int nsr_glob_overlap(const char *a, const char *b);

#endif /* NSR_GLOB_H */
