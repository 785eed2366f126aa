/*
 * expiry.h - when a save set leaves the file index (browse time) and when
 * it may be recycled (retention time): NetWorker's time policies (NSR
 * policy: a period and a number of periods), the rules that combine a
 * client's, a pool's and a save's own times, and the dependency rule of
 * backup chains.
 *
 * Rules (nsrd applies them at SAVE_START, nsrim at expiry):
 *   1. browse = the save's explicit browse time (save -w), else base +
 *      the client's browse policy;
 *   2. retention = the save's explicit retention time (save -y / -e),
 *      else base + the client's retention policy, or base + the pool's
 *      retention policy when the pool has one and it is longer (the
 *      longer of the two wins);
 *   3. retention is never before browse (a later browse time extends the
 *      retention to it: data that can be browsed must be recoverable);
 *   4. a save set others depend on (the full and levels an incremental
 *      or level backup builds on) keeps the latest browse and retention
 *      times of those that depend on it, directly or through others: a
 *      chain expires only as a whole, from its newest member back.
 */
#ifndef NSR_EXPIRY_H
#define NSR_EXPIRY_H

#include <stddef.h>
#include <stdint.h>

enum nsr_expiry_unit {
	NSR_EXPIRY_DAYS,
	NSR_EXPIRY_WEEKS,
	NSR_EXPIRY_MONTHS,
	NSR_EXPIRY_YEARS
};

/* A time policy: count periods of unit. */
struct nsr_expiry_policy {
	enum nsr_expiry_unit unit;
	long count; /* >= 1 */
};

/* nsr_expiry_policy_parse - the policy of an NSR policy resource's
 * "period" (Days, Weeks, Months, Years; singular and any case accepted)
 * and "number of periods" (NULL = 1).  NSR_OK or NSR_ERR_SYNTAX. */
int nsr_expiry_policy_parse(const char *period, const char *number,
			    struct nsr_expiry_policy *p);

/* nsr_expiry_builtin - a preconfigured policy by name (Day, Week, Month,
 * Quarter, Year, Decade; any case).  NSR_OK or NSR_ERR_NOTFOUND. */
int nsr_expiry_builtin(const char *name, struct nsr_expiry_policy *p);

/* nsr_expiry_add - from + the policy, in local calendar terms (a month
 * later is the same day of the next month, normalised). */
int64_t nsr_expiry_add(const struct nsr_expiry_policy *p, int64_t from);

/* What the times of a new save set come from (pointers may be NULL:
 * no such policy; the client's then count as NetWorker's defaults,
 * browse Month and retention Year). */
struct nsr_expiry_in {
	int64_t base;	       /* the time policies count from */
	int64_t browse_time;   /* explicit (save -w); 0 = none */
	int64_t retention_time; /* explicit (save -y); 0 = none */
	const struct nsr_expiry_policy *browse;	      /* client's */
	const struct nsr_expiry_policy *retention;     /* client's */
	const struct nsr_expiry_policy *pool_retention; /* pool's */
};

/* nsr_expiry_times - rules 1-3: the browse and retention times of a new
 * save set. */
void nsr_expiry_times(const struct nsr_expiry_in *in, int64_t *browse,
		      int64_t *retention);

/* A save set of one backup chain (one client and save set name). */
struct nsr_expiry_ss {
	uint32_t ssid;
	unsigned level;	  /* enum nsr_level */
	int64_t savetime;
	int usable;	  /* complete: may be built on (level.h) */
	int64_t browse, retention;	   /* its own times */
	int64_t eff_browse, eff_retention; /* out: rule 4 applied */
	uint32_t parent;  /* out: ssid it depends on; 0 = none */
};

/* nsr_expiry_chain - rule 4 over v[0..n), the save sets of one client and
 * save set name in any order (v is sorted by save time, then ssid): each
 * incr depends on the newest earlier usable save set but manual, a level
 * N one on the newest earlier usable one of a lower level (full = 0), as
 * nsr_level_decide chose it; full and manual depend on nothing, nothing
 * depends on a manual one and an unusable one depends on nothing (it
 * holds no save set back).  Sets eff_* and parent. */
void nsr_expiry_chain(struct nsr_expiry_ss *v, size_t n);

#endif /* NSR_EXPIRY_H */
