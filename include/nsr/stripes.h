/*
 * stripes.h - striped locks: a fixed table of NSR_STRIPES mutexes, a key
 * (a save set id, a volume id) mapped to one of them, so that changes of
 * one record never interleave while changes of different records mostly
 * go on side by side.  A holder of several takes them as a set, in index
 * order, so two such holders, or one of them and a holder of one, never
 * deadlock.
 *
 * Calling sequence: nsr_stripes_init once (a daemon's start, or
 * pthread_once); then nsr_stripes_lock(s, nsr_stripe_of(&key, len)) ...
 * nsr_stripes_unlock, or nsr_stripe_set_add for each key, then
 * nsr_stripes_lock_set ... nsr_stripes_unlock_set.
 */
#ifndef NSR_STRIPES_H
#define NSR_STRIPES_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define NSR_STRIPES 64

struct nsr_stripes {
	pthread_mutex_t mu[NSR_STRIPES];
};

/* A set of stripes (bit i: stripe i). */
typedef uint64_t nsr_stripe_set;

/* nsr_stripes_init - every stripe's mutex, once before any use. */
void nsr_stripes_init(struct nsr_stripes *s);
/* nsr_stripe_of - the stripe of a key of len bytes (FNV-1a). */
unsigned nsr_stripe_of(const void *key, size_t len);
/* nsr_stripes_lock, nsr_stripes_unlock - one stripe. */
void nsr_stripes_lock(struct nsr_stripes *s, unsigned stripe);
void nsr_stripes_unlock(struct nsr_stripes *s, unsigned stripe);
/* nsr_stripe_set_add - stripe into *set. */
void nsr_stripe_set_add(nsr_stripe_set *set, unsigned stripe);
/* nsr_stripes_lock_set - every stripe of set, in index order;
 * nsr_stripes_unlock_set - let them go. */
void nsr_stripes_lock_set(struct nsr_stripes *s, nsr_stripe_set set);
void nsr_stripes_unlock_set(struct nsr_stripes *s, nsr_stripe_set set);

#endif /* NSR_STRIPES_H */
