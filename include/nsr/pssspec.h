/*
 * pssspec.h - how many parallel save streams each save point gets: the
 * client resource's `PSS:streams_per_ss` (NetWorker's syntax), as save's
 * --pss option takes it too.
 *
 * Grammar: an optional "PSS:streams_per_ss=" prefix, then comma-separated
 * items (blanks around an item are ignored).  An item of digits only is a
 * stream count, 1 .. NSR_PSS_STREAMS_MAX; every other item is a save point
 * pattern (fnmatch(3) wildcards * ? [..], backslash an ordinary character,
 * '/' matched by *) that gets the count last given before it:
 *     1,* , 2,/data[1-3] , 8,/data[4-5]
 *     2,C:\ , D:\ , 8 , E:\ , F:\HR
 * A count must be followed by at least one pattern, except when it is the
 * whole spec ("3": every save point gets 3).  A pattern before any count,
 * an empty item, a count out of range, more than NSR_PSS_SPEC_MAX patterns
 * or a pattern longer than NSR_PSS_PATTERN_MAX bytes is an error.
 *
 * Which count a save point gets: a pattern without wildcards equal to the
 * save point wins; else the last wildcard pattern that matches it; else
 * the bare count, if the spec is one; else NSR_PSS_STREAMS_DEFAULT.
 */
#ifndef NSR_PSSSPEC_H
#define NSR_PSSSPEC_H

#include <stddef.h>

#define NSR_PSS_STREAMS_DEFAULT 4 /* streams per save point by default */
#define NSR_PSS_STREAMS_MAX 8	  /* at most (master + 7 dependents) */
#define NSR_PSS_SPEC_MAX 64	  /* patterns in one spec */
#define NSR_PSS_PATTERN_MAX 1024  /* bytes in one pattern */

struct nsr_buf;
struct nsr_pssspec;

/* nsr_pssspec_parse - text into a spec (*out, free with
 * nsr_pssspec_free).  NSR_OK; NSR_ERR_SYNTAX with the reason and the
 * item's position in err (may be NULL); NSR_ERR_NOMEM. */
int nsr_pssspec_parse(const char *text, struct nsr_pssspec **out,
		      struct nsr_buf *err);
/* nsr_pssspec_streams - the streams save point sp gets (1 .. 8); a NULL
 * spec gives NSR_PSS_STREAMS_DEFAULT. */
unsigned nsr_pssspec_streams(const struct nsr_pssspec *s, const char *sp);
/* nsr_pssspec_from_ops - the spec text of a client resource's save
 * operations values ops[0..n) into spec (appended; nothing if none
 * names PSS:streams_per_ss): the value that begins with
 * "PSS:streams_per_ss=", and, as the resource syntax splits an unquoted
 * value at its commas, the values after it up to the next one that holds
 * '=' (another save operation), joined with commas.  1 if found, 0 if
 * not, NSR_ERR_NOMEM. */
int nsr_pssspec_from_ops(const char *const *ops, size_t n,
			 struct nsr_buf *spec);
/* nsr_pssspec_count - patterns in the spec (0 for a bare count). */
unsigned nsr_pssspec_count(const struct nsr_pssspec *s);
/* nsr_pssspec_free - free a spec (NULL is fine). */
void nsr_pssspec_free(struct nsr_pssspec *s);

#endif /* NSR_PSSSPEC_H */
