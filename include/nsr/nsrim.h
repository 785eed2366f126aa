/*
 * nsrim.h - apply the browse and retention policies to the media
 * database and the client file indexes (nsrim(8), and nsrd once a day).
 *
 * One run, at time now (nsr_clock_now() unless given):
 *   1. every save set of the media database is read, one backup chain
 *      (client and save set name) at a time in the media database's
 *      chain order, and given its effective browse and retention times
 *      (expiry.h rule 4: a full or level others build on lives as long
 *      as the latest of them);
 *   2. a completed save set past its effective browse time loses its
 *      index entries (nsrindexd: a chain's in one IX_DELETE_MANY, before
 *      any of its flags change), then is flagged recoverable and no
 *      longer browsable (sumflags r): it stays recoverable by ssid
 *      (recover -S) until its volume is relabeled;
 *   3. a save set past its effective retention time is flagged
 *      recyclable (E);
 *   4. a volume (not manual, not already recyclable) becomes recyclable
 *      when every save set on it is, or when it holds none but has held
 *      data.  Nothing is erased: the bytes of recyclable save sets stay
 *      on the volume (an AFTD's files too) until it is relabeled, by hand
 *      or by nsrd's auto media management.
 * Save sets in progress are left alone.  A run may be narrowed (nsrim -c,
 * -N, -V): every save set is still read, so chains are whole, but only
 * the save sets of that client, of that save set name and with a
 * fragment on that volume change, and with a volume only it is judged.
 *
 * Invariants (crash safety):
 *   1. every change is idempotent and ordered so that an interrupted run
 *      leaves a state the next run completes: index entries go before the
 *      browsable flag does (a save set flagged recoverable has no
 *      entries), a save set is flagged recyclable only after it lost its
 *      entries, a volume only after every save set on it was flagged;
 *   2. a run with dry_run changes nothing and reports what a run would
 *      do; repeating a run at the same time changes nothing more;
 *   3. memory is flat: a run holds one chain's save sets, a count per
 *      volume and at most 1,024 flag changes not yet sent, whatever the
 *      number of save sets (steps 2-3 of a chain are done before the
 *      next is read; step 4 needs only the counts).
 */
#ifndef NSR_NSRIM_H
#define NSR_NSRIM_H

#include <stdint.h>
#include <stdio.h>

struct nsr_buf;

struct nsr_nsrim_opts {
	const char *server; /* NULL = this host */
	int dry_run;	    /* -n: report only */
	int verbose;	    /* -v: a line per save set changed */
	int64_t now;	    /* 0 = nsr_clock_now() */
	FILE *out;	    /* report lines; NULL = none */
	unsigned stop_after; /* tests: stop (NSR_ERR_LIMIT) after this many
				changes, as a crash would; 0 = never */
	const char *client;  /* -c: only this client's save sets change */
	const char *name;    /* -N: only save sets of this name change */
	const char *volume;  /* -V: only save sets on it change, and only it
				is judged */
	int oldest_cycle;    /* -l: each chain's oldest full cycle leaves
				the index now, when a newer full exists */
};

struct nsr_nsrim_stats {
	unsigned savesets;	  /* save sets looked at (in the run's scope) */
	unsigned browse_expired;  /* index entries removed now */
	unsigned recyclable;	  /* save sets flagged recyclable now */
	unsigned volumes;	  /* volumes looked at */
	unsigned vol_recyclable;  /* volumes flagged recyclable now */
	unsigned index_failures;  /* index removals that failed (retried
				     by the next run) */
	unsigned vol_retent;	  /* volumes whose retention time (the
				     latest of their save sets') changed */
	unsigned oldest_cycle;	  /* of browse_expired: by -l */
};

/* nsr_nsrim_run - one run (see above); st gets the counts (also with
 * dry_run: what would change).  NSR_OK (possibly with index_failures),
 * or an NSR_ERR_* code with the reason in err (a run cut short is
 * completed by the next one). */
int nsr_nsrim_run(const struct nsr_nsrim_opts *o, struct nsr_nsrim_stats *st,
		  struct nsr_buf *err);

/* nsr_nsrim_summary - the one-line summary of st into buf (NetWorker's
 * style: counts of save sets and volumes changed). */
void nsr_nsrim_summary(const struct nsr_nsrim_stats *st, int dry_run,
		       char *buf, size_t len);

#endif /* NSR_NSRIM_H */
