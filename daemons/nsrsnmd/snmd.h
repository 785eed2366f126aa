/*
 * snmd.h - nsrsnmd internals: the table of movers (one slot per device),
 * the mechanism that starts and stops nsrmmd processes (spawn.c) and the
 * policy that decides when a mover may be started (policy.c).
 */
#ifndef NSRSNMD_SNMD_H
#define NSRSNMD_SNMD_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "nsr/forkserver.h"

struct nsr_buf;
struct nsr_daemon;

/* Movers one device may have at most (dynamic nsrmmd). */
#define SNMD_MOVERS_MAX 32

/* One running (or starting) mover of a device. */
struct snmd_mover {
	pid_t pid;	  /* 0 = free entry */
	int port;	  /* 0 while starting */
	int num;	  /* mover number (nsrmmd -n), unique on the host */
	long long started_ms; /* monotonic */
};

/* One device and its movers. */
struct snmd_slot {
	char *device;	  /* device resource name (the key) */
	char *media_type; /* adv_file, vtape, tape */
	char *path;
	char *server;	  /* "" = report nowhere */
	uint64_t capacity;
	uint64_t segment_size; /* nsrmmd -G */
	/* Another capacity or segment size asked while movers run with
	 * these (said once per pair: running movers keep theirs). */
	int told;
	uint64_t told_capacity, told_segment;
	unsigned target_sessions, max_sessions;
	unsigned max_movers;	/* as nsrd asked last (dynamic nsrmmd) */

	struct snmd_mover mv[SNMD_MOVERS_MAX];
	long long started_ms;	/* monotonic: the last start */

	/* Throttle state (policy.c). */
	unsigned quick_fails; /* abnormal exits soon after start, in a row */
	long long hold_until; /* no start before this (monotonic ms) */
	char last_exit[64];   /* how the last mover ended */
};

/* The mover template (nsr/forkserver.h): movers are forked from it, not
 * exec'd; guarded by spawn_mu, but for the atomics child_exit reads and
 * sets. */
struct snmd_template {
	struct nsr_forkserver fs;
	int off;		/* NSR_MOVER_TEMPLATE=0: fork+exec each one */
	long long retry_ms;	/* its start failed: not again before then */
	_Atomic pid_t running;	/* fs.pid, for child_exit */
	_Atomic pid_t reaped;	/* set by child_exit: running, exited */
};

/* What the mechanism needs to start one nsrmmd. */
struct snmd_spawn_args {
	const char *exe;	 /* path of nsrmmd */
	const char *root;
	const struct nsr_daemon *d; /* its -a addresses go to the mover */
	unsigned idle_sec;	 /* 0 = nsrmmd's default */
	const char *user;	 /* "" or the user the mover runs as (-u) */
	const struct snmd_slot *slot;
	int num;		 /* the new mover's number */
	struct snmd_template *tmpl; /* NULL: fork+exec */
	int *forked;		 /* out: 1 if forked from the template */
};

/* spawn.c */
/* snmd_spawn - start nsrmmd for a->slot and wait (<= timeout_ms) for the
 * port it serves on.  NSR_OK with *pid and *port; else an error with the
 * reason in why (a child that did not get ready is killed and left for
 * the SIGCHLD reaper). */
int snmd_spawn(const struct snmd_spawn_args *a, int timeout_ms, pid_t *pid,
	       int *port, struct nsr_buf *why);

/* snmd_template_up - start the mover template unless it runs, is off
 * (NSR_MOVER_TEMPLATE=0) or failed to start less than a minute ago
 * (logged): NSR_OK when it runs (holds spawn_mu). */
int snmd_template_up(struct snmd_template *t, const char *exe);

/* policy.c */
/* snmd_policy_mover_limit - how many movers a device may have: tape and
 * vtape 1 (one drive, one writer); adv_file what nsrd asked (its "max
 * nsrmmd count" with dynamic nsrmmd on, else 1), at most
 * SNMD_MOVERS_MAX. */
unsigned snmd_policy_mover_limit(const struct snmd_slot *s);
/* snmd_policy_choose - the mover of s to hand one more session: the
 * index in s->mv of the least loaded running one (sessions[i] each, as
 * nsrd counts them), or -1 to start another: none runs, or all serve
 * target sessions or more and fewer than the limit run. */
int snmd_policy_choose(const struct snmd_slot *s, const int *running,
		       const unsigned *sessions);
/* snmd_policy_now - the monotonic clock in ms the policy works with. */
long long snmd_policy_now(void);
/* snmd_policy_may_start - 1 if a mover may be started at now (ms), else
 * 0 with the milliseconds to wait in *wait_ms. */
int snmd_policy_may_start(const struct snmd_slot *s, long long now,
			  unsigned *wait_ms);
/* snmd_policy_exited - a mover of s started at started_ms ended with wait
 * status (or, with status -1, died before it was ready): update the
 * throttle.  Returns 1 if the device is now throttled. */
int snmd_policy_exited(struct snmd_slot *s, long long started_ms, int status,
		       long long now);

/* authz.c: who may ask for a mover (root here or of an -S server). */
struct nsr_rpc_call;
struct nsr_rpc_proc;
int snmd_authz_server(const char *name);
void snmd_authz_free(void);
int snmd_authz(void *ctx, const struct nsr_rpc_call *call,
	       const struct nsr_rpc_proc *p, const void *args,
	       struct nsr_buf *why);

#endif /* NSRSNMD_SNMD_H */
