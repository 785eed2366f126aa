/*
 * level.c - which backup a level save builds on.  At SAVE_START of an
 * incr or a level 1-9, nsrd reads the earlier save sets of the same
 * client and save set name from the media database and lets
 * nsr_level_decide (level.h) choose: the effective level (full when no
 * full is there to build on), the reference save set and its save time,
 * from which the client stores what changed.  Which earlier save sets
 * may serve is decided here, from their flags.  A parallel save streams
 * backup is a master save set naming its dependents: when the number of
 * streams differs from the reference's (a save set without dependents
 * is one stream), the save becomes a full, so that every backup of a
 * full-incr sequence has the same number of save sets.
 */
#include "nsr/compat.h"

#include <time.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/level.h"
#include "nsr/mmdb_clnt.h"
#include "nsr/mmquery.h"
#include "nsr/xmalloc.h"
#include "nsrd.h"

/* Flags that keep a save set (or its clone instance) from serving: not
 * complete, or its data cannot be trusted to be read back (suspect: a
 * read found damage), or about to go (recyclable). */
#define SS_UNUSABLE                                                            \
	(MMDB_SS_ABORTED | MMDB_SS_INCOMPLETE | MMDB_SS_INPROGRESS |           \
	 MMDB_SS_SUSPECT | MMDB_SS_RECYCLABLE)
#define CLONE_UNUSABLE                                                         \
	(MMDB_CLONE_INCOMPLETE | MMDB_CLONE_ABORTED | MMDB_CLONE_SUSPECT)

/* usable - may this row's save set serve as a reference?  One intact
 * clone instance is enough. */
static int usable(const struct mmdb_ss_row *r)
{
	return (r->ss.flags & MMDB_SS_FINISHED) &&
	       !(r->ss.flags & SS_UNUSABLE) &&
	       !(r->clone.flags & CLONE_UNUSABLE);
}

/* The earlier save sets of a save set name, as level.h and PSS see them
 * (prev and streams have n entries). */
struct earlier_sets {
	struct nsr_level_prev *prev;
	unsigned *streams; /* master's dependents + 1 */
	size_t n;
	int64_t latest;	   /* newest save time of any of them */
};

/* earlier - the save sets of client:name from the media database (one
 * entry per row). */
static int earlier(struct mmdb_clnt *mc, const char *client, const char *name,
		   struct earlier_sets *es)
{
	struct mmdb_ss_row rows[64];
	struct nsr_buf q;
	size_t got = 0, cap = 0;
	int done = 0, rc;

	memset(es, 0, sizeof(*es));
	nsr_buf_init(&q, 0);
	nsr_buf_addstr(&q, "client=");
	nsr_mmquery_quote(client, &q);
	nsr_buf_addstr(&q, ",name=");
	nsr_mmquery_quote(name, &q);
	rc = mmdb_clnt_query_open(mc, q.data, 0, time(NULL));
	while (rc == NSR_OK && !done) {
		rc = mmdb_clnt_query_next_rows(mc, rows, 64, &got, &done);
		for (size_t i = 0; rc == NSR_OK && i < got; i++) {
			struct nsr_level_prev *p;

			if (es->n == cap) {
				cap = cap ? cap * 2 : 64;
				es->prev = nsr_xrealloc(es->prev,
						cap * sizeof(*es->prev));
				es->streams = nsr_xrealloc(es->streams,
						cap * sizeof(*es->streams));
			}
			es->streams[es->n] = rows[i].ss.ndependents + 1;
			es->latest = NSR_MAX(es->latest, rows[i].ss.savetime);
			p = &es->prev[es->n++];
			p->level = rows[i].ss.level;
			p->savetime = rows[i].ss.savetime;
			p->ssid = rows[i].ss.ssid;
			p->usable = usable(&rows[i]);
		}
	}
	nsr_buf_release(&q);
	return rc;
}

/* nsrd_level_decide - the level decision of a save of client:name asked
 * at level requested; msg gets what the administrator should know (why
 * the level changed), the log line what the job log records. */
int nsrd_level_decide(struct nsrd *n, const char *client, const char *name,
		      unsigned requested, unsigned streams,
		      struct nsr_level_decision *d, int64_t *latest,
		      struct nsr_buf *msg, struct nsr_buf *log)
{
	struct earlier_sets es;
	unsigned was = 0;
	int rc = NSR_OK;

	memset(&es, 0, sizeof(es));
	if ((requested != NSR_LEVEL_FULL && requested != NSR_LEVEL_MANUAL) ||
	    streams > 0)
		rc = earlier(n->mmdb, client, name, &es);
	if (rc == NSR_OK)
		rc = nsr_level_decide(requested, es.prev, es.n, d);
	if (rc == NSR_OK && d->ref >= 0 &&
	    es.streams[d->ref] != NSR_MAX(streams, 1u)) {
		was = es.streams[d->ref];
		rc = nsr_level_decide(NSR_LEVEL_FULL, es.prev, es.n, d);
	}
	*latest = es.latest;
	free(es.prev);
	free(es.streams);
	if (rc != NSR_OK)
		return rc;
	if (was) {
		nsr_buf_addf(msg,
			     "the number of parallel save streams of "
			     "%.256s:%.1024s changed (%u, was %u): level %s "
			     "promoted to full", client, name,
			     NSR_MAX(streams, 1u), was,
			     nsr_level_name(requested));
		nsr_buf_addstr(log, msg->data);
	} else if (d->promoted) {
		/* Bounded for the reply (level_msg<2048>, nsrd.x). */
		nsr_buf_addf(msg,
			     "no complete full backup of %.256s:%.1024s "
			     "to build on (aborted, suspect and manual save "
			     "sets do not count): level %s promoted to full",
			     client, name, nsr_level_name(requested));
		nsr_buf_addstr(log, msg->data);
	} else if (d->ref >= 0) {
		time_t t = (time_t)d->since;
		char when[64];
		struct tm tm;

		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S",
			 localtime_r(&t, &tm));
		nsr_buf_addf(log,
			     "level %s: what changed since %s, the save "
			     "time of save set %u (level %s)",
			     nsr_level_name(d->level), when, d->ref_ssid,
			     nsr_level_name(d->ref_level));
	}
	return NSR_OK;
}
