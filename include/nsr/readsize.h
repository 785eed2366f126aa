/*
 * readsize.h - adaptive read size for save's file reads.
 *
 * The size moves between NSR_READSIZE_MIN (64 KB) and NSR_READSIZE_MAX
 * (8 MB) by hill climbing on the measured read rate: reads are grouped
 * into windows; after each window the rate (bytes/second) is compared with
 * the previous window's.  While it improves by more than 5% the size keeps
 * moving the same way (doubling at first); when it drops by more than 5%
 * the direction reverses; in between the size holds.  Measurements use a
 * caller-supplied clock so tests can drive it with a fake one.
 *
 * NSR_READ_SIZE in the environment (bytes, or with a K/M suffix) forces a
 * fixed size, which may be anything from 4 KB to 64 MB.
 */
#ifndef NSR_READSIZE_H
#define NSR_READSIZE_H

#include <stddef.h>
#include <stdint.h>

#define NSR_READSIZE_MIN ((size_t)64 * 1024)
#define NSR_READSIZE_MAX ((size_t)8 * 1024 * 1024)
#define NSR_READSIZE_START ((size_t)1024 * 1024)
#define NSR_READSIZE_FORCE_MIN ((size_t)4 * 1024)
#define NSR_READSIZE_FORCE_MAX ((size_t)64 * 1024 * 1024)

/* Monotonic clock in nanoseconds. */
typedef uint64_t (*nsr_readsize_clock_fn)(void *ctx);

struct nsr_readsize;

/* nsr_readsize_new - clock NULL = CLOCK_MONOTONIC; force 0 = consult
 * NSR_READ_SIZE, else use that fixed size (clamped to the FORCE bounds).
 * NSR_ERR_INVAL if NSR_READ_SIZE is set but malformed; NSR_ERR_NOMEM. */
int nsr_readsize_new(struct nsr_readsize **out, size_t force,
		     nsr_readsize_clock_fn clock, void *clock_ctx);
/* nsr_readsize_free - free (NULL is fine). */
void nsr_readsize_free(struct nsr_readsize *r);
/* nsr_readsize_get - the size to use for the next read. */
size_t nsr_readsize_get(const struct nsr_readsize *r);
/* nsr_readsize_begin - call right before a read (takes the start time). */
void nsr_readsize_begin(struct nsr_readsize *r);
/* nsr_readsize_end - call after it with the bytes it returned; may change
 * the size for the next read. */
void nsr_readsize_end(struct nsr_readsize *r, size_t bytes);
/* nsr_readsize_forced - 1 when the size is fixed (NSR_READ_SIZE/force). */
int nsr_readsize_forced(const struct nsr_readsize *r);
/* nsr_readsize_parse - "65536", "512K", "8M" -> bytes.  NSR_ERR_INVAL. */
int nsr_readsize_parse(const char *s, size_t *out);

#endif /* NSR_READSIZE_H */
