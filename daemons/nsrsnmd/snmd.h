/*
 * snmd.h - nsrsnmd internals: the table of movers (one slot per device),
 * the mechanism that starts and stops nsrmmd processes (spawn.c) and the
 * policy that decides when a mover may be started (policy.c).
 */
#ifndef NSRSNMD_SNMD_H
#define NSRSNMD_SNMD_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

struct nsr_buf;

/* One device and its mover (if running). */
struct snmd_slot {
	char *device;	  /* device resource name (the key) */
	char *media_type; /* adv_file, vtape, tape */
	char *path;
	char *server;	  /* "" = report nowhere */
	uint64_t capacity;
	unsigned target_sessions, max_sessions;

	pid_t pid;	  /* 0 = no mover */
	int port;
	int num;	  /* mover number (nsrmmd -n) */
	time_t started;

	/* Throttle state (policy.c). */
	unsigned quick_fails; /* abnormal exits soon after start, in a row */
	time_t hold_until;    /* no start before this time */
	char last_exit[64];   /* how the last mover ended */
};

/* What the mechanism needs to start one nsrmmd. */
struct snmd_spawn_args {
	const char *exe;	 /* path of nsrmmd */
	const char *root;
	const char *listen_addr; /* NULL = default */
	unsigned idle_sec;	 /* 0 = nsrmmd's default */
	const struct snmd_slot *slot;
};

/* spawn.c */
/* snmd_spawn - start nsrmmd for a->slot and wait (<= timeout_ms) for the
 * port it serves on.  NSR_OK with *pid and *port; else an error with the
 * reason in why (a child that did not get ready is killed and left for
 * the SIGCHLD reaper). */
int snmd_spawn(const struct snmd_spawn_args *a, int timeout_ms, pid_t *pid,
	       int *port, struct nsr_buf *why);

/* policy.c */
/* snmd_policy_mover_limit - how many movers a device may have: tape and
 * vtape 1; adv_file max_sessions / target_sessions + 4. */
unsigned snmd_policy_mover_limit(const struct snmd_slot *s);
/* snmd_policy_may_start - 1 if a mover may be started now, else 0 with
 * the seconds to wait in *wait. */
int snmd_policy_may_start(const struct snmd_slot *s, time_t now,
			  unsigned *wait);
/* snmd_policy_exited - a mover of s ended with wait status (or, with
 * status -1, died before it was ready): update the throttle.  Returns 1
 * if the device is now throttled. */
int snmd_policy_exited(struct snmd_slot *s, int status, time_t now);

#endif /* NSRSNMD_SNMD_H */
