/*
 * fairq.h - nsrd's fair admission queue, a pure function over the
 * running sessions and the queued ones (no daemon state: unit-tested in
 * tests/unit/nsrd).  admit.c calls it under the RPC server mutex.
 */
#ifndef NSRD_FAIRQ_H
#define NSRD_FAIRQ_H

#include <stddef.h>
#include <stdint.h>

/* A session that runs, or one that waits (ticket != 0).  group "" = in
 * no group (a manual save): no group limit applies to it. */
struct fairq_item {
	const char *client;
	const char *group;
	uint64_t ticket;  /* waits: their order of arrival (older first) */
	int granted;	  /* waits: in/out, a slot is held for it */
};

/* The limits: server parallelism, and lookups of a group's parallelism
 * (0 = no limit) and a client's parallelism (>= 1).  Each lookup is made
 * at most once per distinct name and call. */
struct fairq_limits {
	long server;
	long (*group_limit)(void *arg, const char *group);
	long (*client_limit)(void *arg, const char *client);
	void *arg;
};

/* fairq_grant - hold slots for waits while the limits allow: granted
 * waits count as running.  Each slot goes to the eligible wait (its
 * client and group below their limits) whose group, then client, has
 * the fewest sessions running or granted, the oldest ticket breaking
 * ties: round robin over the groups and clients that wait, oldest first
 * within a client.  Returns the number of waits newly granted, or -1
 * when out of memory (nothing changed). */
long fairq_grant(const struct fairq_item *run, size_t nrun,
		 struct fairq_item *wait, size_t nwait,
		 const struct fairq_limits *lim);

/* What fairq_fits answers: it fits, or the first limit it would pass. */
enum fairq_fit {
	FAIRQ_FITS = 0,
	FAIRQ_SERVER = 1,
	FAIRQ_GROUP = 2,
	FAIRQ_CLIENT = 3,
};

/* fairq_fits - would one more session of client in group stay within
 * the limits, counting run and the granted waits?  enum fairq_fit, or -1
 * when out of memory. */
int fairq_fits(const struct fairq_item *run, size_t nrun,
	       const struct fairq_item *wait, size_t nwait,
	       const struct fairq_limits *lim, const char *client,
	       const char *group);

#endif /* NSRD_FAIRQ_H */
