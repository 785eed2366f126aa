/*
 * nsrim.c - one expiry run over the media database and the indexes
 * (nsrim.h).
 */
#include "nsr/compat.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nsr/buf.h"
#include "nsr/clock.h"
#include "nsr/err.h"
#include "nsr/expiry.h"
#include "nsr/grow.h"
#include "nsr/index_clnt.h"
#include "nsr/level.h"
#include "nsr/mmdb.h"
#include "nsr/mmdb_clnt.h"
#include "nsr/nameix.h"
#include "nsr/nsrim.h"

/* Save set flag changes sent together (mmdb_clnt_ss_flags_many). */
#define PENDING_MAX 1024

/* Flags of a save set that can hold no chain back (expiry.h usable). */
#define SS_BROKEN (MMDB_SS_ABORTED | MMDB_SS_INCOMPLETE | MMDB_SS_INPROGRESS)

/* One volume as the run has seen it in the save set rows so far (an
 * open addressing table by name, FNV-1a: a datazone has thousands of
 * volumes, not millions). */
struct im_vol {
	char *name;
	unsigned nss;	/* save sets on it */
	int all;	/* every one of them recyclable (or to become so) */
	int64_t retent;	/* latest retention of them (own or effective) */
};

struct im_vols {
	struct im_vol *v;	/* in the order first seen: stable indices */
	size_t n, capv;
	struct nsr_nameix ix;	/* v by name */
};

/* One save set of the chain being read. */
struct im_ss {
	uint32_t ssid;
	unsigned level;
	uint32_t flags;
	int64_t savetime, browse, retention;
	int64_t eff_browse, eff_retention;
	int recyclable; /* flagged, or flagged by this run (or would be) */
	int cycle;	/* in its chain's oldest full cycle, taken by -l */
	int on_volume;	/* has a fragment on -V's volume */
	int out_of_scope; /* -c, -N, -V: read for its chain, not changed */
	int ixdel;	  /* its index removal, sent with the chain's:
			     IX_NONE, IX_DONE or IX_FAILED */
	size_t on0, non;  /* its volumes: chain.on[on0 .. on0 + non) */
};

/* Where a save set's index removal stands (im_ss.ixdel). */
enum { IX_NONE, IX_DONE, IX_FAILED };

/* The backup chain being read (one client and save set name): its save
 * sets in save time order and the volumes each is on.  Only one chain
 * is held at a time (invariant 3 of nsrim.h). */
struct im_chain {
	char *client, *name;
	struct im_ss *ss;
	size_t nss, capss;
	size_t *on;	/* indices into the run's vols.v */
	size_t non, capon;
	struct nsr_expiry_ss *ex;
	size_t capex;
};

/* The state of one run. */
struct im_run {
	const struct nsr_nsrim_opts *o;
	struct nsr_nsrim_stats *st;
	struct mmdb_clnt *mc;
	struct nsr_ixclnt *ix;
	struct im_chain ch;
	struct im_vols vols;
	/* Flag changes not yet sent: one MM_SS_FLAGS_MANY per PENDING_MAX
	 * (a commit each), always before the volumes are judged. */
	struct mmdb_clnt_flags pending[PENDING_MAX];
	size_t npending;
	/* Volumes' retention times to set, sent after step 4's loop. */
	struct mmdb_clnt_retent *retents;
	size_t nretents, capretents;
	int64_t now;
	unsigned writes; /* changes made so far */
	int flag_failed; /* a flag change was refused (for the message) */
};

/* writes_left - may the run make one more change?  1 yes (counted), 0
 * not with dry_run, NSR_ERR_LIMIT when o->stop_after changes were made
 * (a test's crash point). */
static int writes_left(struct im_run *r)
{
	if (r->o->dry_run)
		return 0;
	if (r->o->stop_after && r->writes >= r->o->stop_after)
		return NSR_ERR_LIMIT;
	r->writes++;
	return 1;
}

/* vol_name - nsr_nameix_name_fn of the volume table: volume i's name. */
static const char *vol_name(const void *ctx, size_t i, size_t *len)
{
	const struct im_vols *t = ctx;

	*len = strlen(t->v[i].name);
	return t->v[i].name;
}

/* vols_init - an empty volume table. */
static void vols_init(struct im_vols *t)
{
	memset(t, 0, sizeof(*t));
	nsr_nameix_init(&t->ix, vol_name, t);
}

/* vols_find - the index of volume name in t, or NSR_NAMEIX_NONE. */
static size_t vols_find(const struct im_vols *t, const char *name)
{
	return nsr_nameix_find(&t->ix, name, strlen(name));
}

/* vols_add - the index of volume name in t, added (nothing on it yet)
 * if new; NSR_ERR_NOMEM as NSR_NAMEIX_NONE. */
static size_t vols_add(struct im_vols *t, const char *name)
{
	size_t i = vols_find(t, name);

	if (i != NSR_NAMEIX_NONE)
		return i;
	if (nsr_grow((void **)&t->v, t->n, &t->capv, sizeof(*t->v), 256) !=
	    NSR_OK)
		return NSR_NAMEIX_NONE;
	memset(&t->v[t->n], 0, sizeof(t->v[t->n]));
	t->v[t->n].name = strdup(name);
	if (!t->v[t->n].name)
		return NSR_NAMEIX_NONE;
	t->v[t->n].all = 1;
	if (nsr_nameix_add(&t->ix, t->n) != NSR_OK) {
		free(t->v[t->n].name);
		return NSR_NAMEIX_NONE;
	}
	return t->n++;
}

/* vols_free - every volume and the table. */
static void vols_free(struct im_vols *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].name);
	free(t->v);
	nsr_nameix_free(&t->ix);
	vols_init(t);
}

/* chain_reset - forget the chain read (keeps its arrays for the next). */
static void chain_reset(struct im_chain *ch)
{
	free(ch->client);
	free(ch->name);
	ch->client = ch->name = NULL;
	ch->nss = ch->non = 0;
}

/* chain_free - the chain and its arrays. */
static void chain_free(struct im_chain *ch)
{
	chain_reset(ch);
	free(ch->ss);
	free(ch->on);
	free(ch->ex);
	memset(ch, 0, sizeof(*ch));
}

/* by_time - order of a chain's save sets: save time, ssid. */
static int by_time(const void *a, const void *b)
{
	const struct im_ss *x = a, *y = b;

	if (x->savetime != y->savetime)
		return x->savetime < y->savetime ? -1 : 1;
	return x->ssid < y->ssid ? -1 : x->ssid > y->ssid;
}

/* browsable - does s still have its index entries? */
static int browsable(const struct im_ss *s)
{
	return (s->flags & MMDB_SS_BROWSABLE) ||
	       ((s->flags & MMDB_SS_FINISHED) &&
		!(s->flags & MMDB_SS_RECOVERABLE));
}

/* usable_full - a complete, browsable full save set? */
static int usable_full(const struct im_ss *s)
{
	return s->level == NSR_LEVEL_FULL && (s->flags & MMDB_SS_FINISHED) &&
	       !(s->flags & SS_BROKEN) && browsable(s);
}

/* oldest_cycle - -l for the chain read: if it has two browsable full
 * save sets or more, the oldest one and every save set after it and
 * before the next full (its cycle: nothing saved later builds on them)
 * lose their index entries now. */
static void oldest_cycle(struct im_run *r)
{
	struct im_chain *ch = &r->ch;
	size_t f0 = ch->nss, f1 = ch->nss;

	for (size_t i = 0; i < ch->nss && f1 == ch->nss; i++) {
		if (!usable_full(&ch->ss[i]))
			continue;
		if (f0 == ch->nss)
			f0 = i;
		else
			f1 = i;
	}
	for (size_t i = f0; f1 < ch->nss && i < f1; i++) {
		struct im_ss *s = &ch->ss[i];

		if (!browsable(s) || (s->flags & MMDB_SS_INPROGRESS))
			continue;
		s->cycle = 1;
		if (s->eff_browse > r->now)
			s->eff_browse = r->now;
	}
}

/* chain_times - effective times of the chain's save sets (expiry.h
 * rule 4), which are put in save time order. */
static int chain_times(struct im_run *r)
{
	struct im_chain *ch = &r->ch;

	if (ch->nss > ch->capex) {
		struct nsr_expiry_ss *ex = realloc(ch->ex,
						   ch->nss * sizeof(*ex));

		if (!ex)
			return NSR_ERR_NOMEM;
		ch->ex = ex;
		ch->capex = ch->nss;
	}
	qsort(ch->ss, ch->nss, sizeof(*ch->ss), by_time);
	memset(ch->ex, 0, ch->nss * sizeof(*ch->ex));
	for (size_t i = 0; i < ch->nss; i++) {
		const struct im_ss *s = &ch->ss[i];
		struct nsr_expiry_ss *e = &ch->ex[i];

		e->ssid = s->ssid;
		e->level = s->level;
		e->savetime = s->savetime;
		e->usable = (s->flags & MMDB_SS_FINISHED) &&
			    !(s->flags & SS_BROKEN);
		e->browse = s->browse;
		e->retention = s->retention;
	}
	/* Same order (save time, ssid: unique keys) in and out. */
	nsr_expiry_chain(ch->ex, ch->nss);
	for (size_t i = 0; i < ch->nss; i++) {
		ch->ss[i].eff_browse = ch->ex[i].eff_browse;
		ch->ss[i].eff_retention = ch->ex[i].eff_retention;
	}
	if (r->o->oldest_cycle)
		oldest_cycle(r);
	return NSR_OK;
}

/* when - a time as the report prints it. */
static const char *when(int64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	localtime_r(&tt, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M", &tm);
	return buf;
}

/* say_ss - the -v line of a save set changed. */
static void say_ss(struct im_run *r, const struct im_ss *s, const char *what,
		   int64_t t)
{
	char a[32], b[32];

	if (!r->o->out || !r->o->verbose)
		return;
	fprintf(r->o->out, "%s%s:%s ssid %u level %s saved %s: %s (%s)\n",
		r->o->dry_run ? "would: " : "", r->ch.client, r->ch.name,
		s->ssid,
		nsr_level_name(s->level), when(s->savetime, a, sizeof(a)),
		what, when(t, b, sizeof(b)));
}

/* flush - send the flag changes gathered so far. */
static int flush(struct im_run *r)
{
	int rc = NSR_OK;

	if (r->npending > 0)
		rc = mmdb_clnt_ss_flags_many(r->mc, r->pending, r->npending,
					     NULL);
	r->npending = 0;
	if (rc != NSR_OK)
		r->flag_failed = 1;
	return rc;
}

/* set_flags - one save set's flag change, sent with the others; a
 * second change of the save set just before is folded into it. */
static int set_flags(struct im_run *r, uint32_t ssid, uint32_t set,
		     uint32_t clear)
{
	struct mmdb_clnt_flags *p =
		r->npending ? &r->pending[r->npending - 1] : NULL;

	if (p && p->ssid == ssid) {
		p->set = (p->set & ~clear) | set;
		p->clear = (p->clear & ~set) | clear;
		return NSR_OK;
	}
	if (r->npending == PENDING_MAX) {
		int rc = flush(r);

		if (rc != NSR_OK)
			return rc;
	}
	r->pending[r->npending].ssid = ssid;
	r->pending[r->npending].set = set;
	r->pending[r->npending++].clear = clear;
	return NSR_OK;
}

/* in_step2 - will step 2 take save set s out of the index? */
static int in_step2(const struct im_run *r, const struct im_ss *s)
{
	return !(s->flags & MMDB_SS_INPROGRESS) && !s->out_of_scope &&
	       browsable(s) && s->eff_browse <= r->now;
}

/* in_step3 - will step 3 flag s recyclable (live: still browsable)? */
static int in_step3(const struct im_run *r, const struct im_ss *s, int live)
{
	return !live && !s->recyclable && s->eff_retention <= r->now;
}

/* index_removals - step 2's index removals of the chain read, ahead of
 * expire_one, in one IX_DELETE_MANY (a catalogue replacement) per
 * IX_DELETE_MAX save sets instead of one request each: those that
 * expire_one would make were each to succeed, in the chain's order,
 * none past o->stop_after's changes (expire_one's count), so a run cut
 * short has removed what it did before.  Each save set's outcome goes
 * to its ixdel, for expire_one.  Nothing with dry_run. */
static void index_removals(struct im_run *r)
{
	struct im_chain *ch = &r->ch;
	unsigned writes = r->writes, stop = r->o->stop_after;
	uint64_t *ids = NULL;
	size_t k = 0, done = 0;

	for (size_t i = 0; i < ch->nss; i++)
		ch->ss[i].ixdel = IX_NONE;
	if (r->o->dry_run)
		return;
	ids = malloc((ch->nss + 1) * sizeof(*ids));
	if (!ids) /* expire_one asks one at a time */
		return;
	for (size_t i = 0; i < ch->nss && !(stop && writes >= stop); i++) {
		struct im_ss *s = &ch->ss[i];
		int step2 = in_step2(r, s);

		if (step2) {
			ids[k++] = s->ssid;
			writes += 2; /* the removal and the flags after it */
		}
		if (!(s->flags & MMDB_SS_INPROGRESS) && !s->out_of_scope &&
		    in_step3(r, s, browsable(s) && !step2))
			writes++;
	}
	if (k > 0)
		(void)nsr_ixclnt_delete_many(r->ix, ch->client, ids, k, &done,
					     NULL);
	for (size_t i = 0, j = 0; i < ch->nss && j < k; i++)
		if (ch->ss[i].ssid == ids[j])
			ch->ss[i].ixdel = j++ < done ? IX_DONE : IX_FAILED;
	free(ids);
}

/* remove_index - save set s's index entries: what index_removals got
 * for it, or one request.  NSR_OK also when there were none. */
static int remove_index(struct im_run *r, const struct im_ss *s)
{
	int rc;

	if (s->ixdel == IX_DONE)
		return NSR_OK;
	if (s->ixdel == IX_FAILED)
		return NSR_ERR_RPC; /* the words are in r->ix */
	rc = nsr_ixclnt_delete(r->ix, r->ch.client, s->ssid);
	return rc == NSR_ERR_NOTFOUND ? NSR_OK : rc;
}

/* expire_one - steps 2 and 3 for one save set; NSR_OK or the media
 * database's error (an index failure is counted, the save set then
 * keeps its flags for the next run: invariant 1). */
static int expire_one(struct im_run *r, struct im_ss *s)
{
	int live = browsable(s);
	int rc, w;

	if ((s->flags & MMDB_SS_INPROGRESS) || s->out_of_scope)
		return NSR_OK;
	if (in_step2(r, s)) {
		say_ss(r, s, s->cycle ? "oldest full cycle (-l): index "
					"entries removed"
				      : "browse time passed: index entries "
					"removed",
		       s->eff_browse);
		r->st->browse_expired++;
		if (s->cycle)
			r->st->oldest_cycle++;
		if ((w = writes_left(r)) < 0)
			return w;
		if (w) {
			rc = remove_index(r, s);
			if (rc != NSR_OK) {
				r->st->index_failures++;
				if (r->o->out)
					fprintf(r->o->out, "nsrim: save set "
						"%u: cannot remove its index "
						"entries (%s); the next run "
						"tries again\n", s->ssid,
						nsr_ixclnt_errmsg(r->ix));
				return NSR_OK;
			}
			if ((w = writes_left(r)) < 0)
				return w;
			rc = set_flags(r, s->ssid, MMDB_SS_RECOVERABLE,
				       MMDB_SS_BROWSABLE);
			if (rc != NSR_OK)
				return rc;
		}
		live = 0;
	}
	if (in_step3(r, s, live)) {
		say_ss(r, s, "retention time passed: recyclable",
		       s->eff_retention);
		r->st->recyclable++;
		if ((w = writes_left(r)) < 0)
			return w;
		if (w) {
			rc = set_flags(r, s->ssid, MMDB_SS_RECYCLABLE, 0);
			if (rc != NSR_OK)
				return rc;
		}
		s->recyclable = 1;
	}
	return NSR_OK;
}

/* vol_state - step 4 for volume v: 1 if it is to become recyclable;
 * *retent gets the latest effective retention of its save sets (0 when
 * it holds none). */
static int vol_state(struct im_run *r, const struct mmdb_volume *v,
		     unsigned *nss, int64_t *retent)
{
	size_t i = vols_find(&r->vols, v->name);
	int all = 1;

	*nss = 0;
	*retent = 0;
	if (i != NSR_NAMEIX_NONE) {
		*nss = r->vols.v[i].nss;
		*retent = r->vols.v[i].retent;
		all = r->vols.v[i].all;
	}
	if (v->flags & (MMDB_VOL_RECYCLABLE | MMDB_VOL_MANUAL))
		return 0;
	if (*nss == 0) /* none: recyclable once it has held data */
		return v->written > 0 || v->next_file > 0 ||
		       v->next_record > 0;
	return all;
}

/* set_volretent - volume v's retention time becomes retent (the latest
 * effective retention of its save sets) if it is another. */
static int set_volretent(struct im_run *r, const struct mmdb_volume *v,
			 int64_t retent, struct nsr_buf *err)
{
	char a[64], b[64];
	int rc;

	if (retent == 0 || retent == v->volretent)
		return NSR_OK;
	r->st->vol_retent++;
	if (r->o->out && r->o->verbose)
		fprintf(r->o->out, "%svolume %s: retention time %s (was %s)\n",
			r->o->dry_run ? "would: " : "", v->name,
			when(retent, a, sizeof(a)),
			v->volretent ? when(v->volretent, b, sizeof(b))
				     : "not set");
	if ((rc = writes_left(r)) <= 0)
		return rc;
	if (nsr_grow((void **)&r->retents, r->nretents, &r->capretents,
		 sizeof(*r->retents), 256) != NSR_OK) {
		nsr_buf_addstr(err, "out of memory");
		return NSR_ERR_NOMEM;
	}
	memcpy(r->retents[r->nretents].volid, v->volid, 16);
	r->retents[r->nretents++].volretent = retent;
	return NSR_OK;
}

/* send_retents - the volumes' retention times gathered, in one
 * transaction per MM_FLAGS_MAX; rc is the run's so far, returned unless
 * this fails. */
static int send_retents(struct im_run *r, int rc, struct nsr_buf *err)
{
	int src;

	if (r->nretents == 0)
		return rc;
	src = mmdb_clnt_vol_retent_many(r->mc, r->retents, r->nretents,
					NULL);
	r->nretents = 0;
	if (src == NSR_OK)
		return rc;
	nsr_buf_addf(err, "%scannot set the retention time of volumes: %s",
		     err->len ? "; " : "", mmdb_clnt_errmsg(r->mc));
	return src;
}

/* volumes - step 4 over every volume. */
static int volumes(struct im_run *r, struct nsr_buf *err)
{
	struct mmdb_volume vols[32], *all = NULL, *nv;
	size_t got = 0, n = 0, cap = 0;
	int done = 0, rc;

	rc = mmdb_clnt_query_open(r->mc, "", 1, r->now);
	while (rc == NSR_OK && !done) {
		rc = mmdb_clnt_query_next_vols(r->mc, vols,
					       sizeof(vols) / sizeof(vols[0]),
					       &got, &done);
		for (size_t i = 0; rc == NSR_OK && i < got; i++) {
			if (n == cap) {
				cap = cap ? cap * 2 : 64;
				nv = realloc(all, cap * sizeof(*all));
				if (!nv) {
					rc = NSR_ERR_NOMEM;
					break;
				}
				all = nv;
			}
			all[n++] = vols[i];
		}
		if (rc == NSR_OK && got == 0 && !done)
			break;
	}
	if (rc != NSR_OK) {
		nsr_buf_addf(err, "cannot read the volumes of the media "
			     "database: %s", rc == NSR_ERR_NOMEM ?
			     "out of memory" : mmdb_clnt_errmsg(r->mc));
		free(all);
		return rc;
	}
	for (size_t i = 0; rc == NSR_OK && i < n; i++) {
		int64_t retent;
		unsigned nss;
		int recycle;

		if (r->o->volume && strcmp(all[i].name, r->o->volume) != 0)
			continue;
		r->st->volumes++;
		recycle = vol_state(r, &all[i], &nss, &retent);
		rc = set_volretent(r, &all[i], retent, err);
		if (rc != NSR_OK || !recycle)
			continue;
		r->st->vol_recyclable++;
		if (r->o->out)
			fprintf(r->o->out, "%svolume %s (pool %s): recyclable "
				"(%u save set(s), all recyclable); its data "
				"stays until it is relabeled\n",
				r->o->dry_run ? "would: " : "", all[i].name,
				all[i].pool, nss);
		if ((rc = writes_left(r)) < 0)
			break;
		if (rc) {
			rc = mmdb_clnt_vol_written(r->mc, all[i].volid, 0,
						   0, 0, MMDB_VOL_RECYCLABLE);
			if (rc == NSR_ERR_STATE) {
				/* a save set recorded on it since it was
				 * read (nsrmmdbd refuses the mark) */
				r->st->vol_recyclable--;
				if (r->o->out)
					fprintf(r->o->out, "nsrim: %s\n",
						mmdb_clnt_errmsg(r->mc));
				rc = NSR_OK;
			}
			if (rc == NSR_ERR_NOTFOUND)
				rc = NSR_OK;
			if (rc != NSR_OK)
				nsr_buf_addf(err, "cannot mark volume %s "
					     "recyclable: %s", all[i].name,
					     mmdb_clnt_errmsg(r->mc));
		} else {
			rc = NSR_OK;
		}
	}
	free(all);
	return send_retents(r, rc, err);
}

/* chain_end - steps 1-3 for the chain read, then what its save sets
 * tell about their volumes; the chain is forgotten.  NSR_OK, or the
 * media database's error, or NSR_ERR_LIMIT (a test's crash point). */
static int chain_end(struct im_run *r)
{
	const struct nsr_nsrim_opts *o = r->o;
	struct im_chain *ch = &r->ch;
	int out = (o->client && strcmp(ch->client, o->client)) ||
		  (o->name && strcmp(ch->name, o->name));
	int rc = NSR_OK;

	if (ch->nss == 0)
		return NSR_OK;
	rc = chain_times(r);
	for (size_t i = 0; rc == NSR_OK && i < ch->nss; i++)
		ch->ss[i].out_of_scope =
			out || (o->volume && !ch->ss[i].on_volume);
	if (rc == NSR_OK)
		index_removals(r);
	for (size_t i = 0; rc == NSR_OK && i < ch->nss; i++) {
		struct im_ss *s = &ch->ss[i];

		r->st->savesets += !s->out_of_scope;
		rc = expire_one(r, s);
		for (size_t j = 0; rc == NSR_OK && j < s->non; j++) {
			struct im_vol *v = &r->vols.v[ch->on[s->on0 + j]];

			v->nss++;
			if (!s->recyclable)
				v->all = 0;
			v->retent = NSR_MAX(v->retent,
					    NSR_MAX(s->eff_retention,
						    s->retention));
		}
	}
	chain_reset(ch);
	return rc;
}

/* add_row - one save set row into the chain being read, ending it first
 * if the row starts another (rows come in chain order, a save set's
 * rows together: one per volume it is on). */
static int add_row(struct im_run *r, const struct mmdb_ss_row *row)
{
	struct im_chain *ch = &r->ch;
	struct im_ss *s = ch->nss ? &ch->ss[ch->nss - 1] : NULL;
	int rc;

	if (!s || s->ssid != row->ss.ssid) {
		if (s && (strcmp(ch->client, row->ss.client) ||
			  strcmp(ch->name, row->ss.name))) {
			if ((rc = chain_end(r)) != NSR_OK)
				return rc;
		}
		if (!ch->client) {
			ch->client = strdup(row->ss.client);
			ch->name = strdup(row->ss.name);
			if (!ch->client || !ch->name)
				return NSR_ERR_NOMEM;
		}
		if (nsr_grow((void **)&ch->ss, ch->nss, &ch->capss,
			 sizeof(*ch->ss), 256) != NSR_OK)
			return NSR_ERR_NOMEM;
		s = &ch->ss[ch->nss++];
		memset(s, 0, sizeof(*s));
		s->ssid = row->ss.ssid;
		s->level = row->ss.level;
		s->flags = row->ss.flags;
		s->savetime = row->ss.savetime;
		s->browse = row->ss.ssbrowse;
		s->retention = row->ss.ssretent;
		s->recyclable = !!(s->flags & MMDB_SS_RECYCLABLE);
		s->on0 = ch->non;
	}
	if (row->has_volume) {
		size_t v = vols_add(&r->vols, row->vol.name);

		if (v == NSR_NAMEIX_NONE)
			return NSR_ERR_NOMEM;
		for (size_t j = 0; j < s->non; j++)
			if (ch->on[s->on0 + j] == v)
				return NSR_OK; /* another clone there */
		if (nsr_grow((void **)&ch->on, ch->non, &ch->capon,
			 sizeof(*ch->on), 256) != NSR_OK)
			return NSR_ERR_NOMEM;
		ch->on[ch->non++] = v;
		s->non++;
		if (r->o->volume && !strcmp(row->vol.name, r->o->volume))
			s->on_volume = 1;
	}
	return NSR_OK;
}

/* expire_all - steps 1-3 over every save set, read one chain at a
 * time in chain order.  What was counted as made is sent, also when a
 * test's crash point stopped the run (NSR_ERR_LIMIT). */
static int expire_all(struct im_run *r, struct nsr_buf *err)
{
	struct mmdb_ss_row rows[64];
	size_t got = 0;
	int done = 0, rc, f;

	rc = mmdb_clnt_query_open(r->mc, "", MMDB_CLNT_Q_CHAINS, r->now);
	while (rc == NSR_OK && !done) {
		rc = mmdb_clnt_query_next_rows(r->mc, rows,
					       sizeof(rows) / sizeof(rows[0]),
					       &got, &done);
		for (size_t i = 0; rc == NSR_OK && i < got; i++)
			rc = add_row(r, &rows[i]);
		if (rc == NSR_OK && got == 0 && !done)
			break;
	}
	if (rc == NSR_OK)
		rc = chain_end(r);
	if (rc == NSR_OK || rc == NSR_ERR_LIMIT) {
		f = flush(r);
		if (f != NSR_OK)
			rc = f;
	}
	if (rc == NSR_OK || rc == NSR_ERR_LIMIT)
		return rc;
	if (rc == NSR_ERR_NOMEM)
		nsr_buf_addstr(err, "out of memory");
	else
		nsr_buf_addf(err, "cannot %s the media database: %s",
			     r->flag_failed ? "flag save sets in"
					    : "read the save sets of",
			     mmdb_clnt_errmsg(r->mc));
	return rc;
}

/* nsr_nsrim_run - steps 1-4 of nsrim.h. */
int nsr_nsrim_run(const struct nsr_nsrim_opts *o, struct nsr_nsrim_stats *st,
		  struct nsr_buf *err)
{
	struct im_run r;
	int rc;

	memset(&r, 0, sizeof(r));
	vols_init(&r.vols);
	memset(st, 0, sizeof(*st));
	r.o = o;
	r.st = st;
	r.now = o->now ? o->now : (int64_t)nsr_clock_now();
	rc = mmdb_clnt_open(o->server, &r.mc, err);
	if (rc == NSR_OK && !o->dry_run)
		rc = nsr_ixclnt_open(o->server, &r.ix, err);
	if (rc == NSR_OK)
		rc = expire_all(&r, err);
	if (rc == NSR_OK)
		rc = volumes(&r, err);
	if (rc == NSR_ERR_LIMIT)
		nsr_buf_addf(err, "stopped after %u changes "
			     "(NSR_TEST_NSRIM_STOP_AFTER)", r.writes);
	nsr_ixclnt_close(r.ix);
	mmdb_clnt_close(r.mc);
	chain_free(&r.ch);
	vols_free(&r.vols);
	free(r.retents);
	return rc;
}

/* nsr_nsrim_summary - the summary line. */
void nsr_nsrim_summary(const struct nsr_nsrim_stats *st, int dry_run,
		       char *buf, size_t len)
{
	char cyc[64] = "";

	if (st->oldest_cycle)
		snprintf(cyc, sizeof(cyc), ", %u of them the oldest cycle",
			 st->oldest_cycle);
	snprintf(buf, len, "nsrim: %u save set(s) checked: %u %s their "
		 "index entries (browse policy%s), %u %s recyclable "
		 "(retention policy); %u volume(s) checked, %u %s "
		 "recyclable%s",
		 st->savesets, st->browse_expired,
		 dry_run ? "would lose" : "lost", cyc, st->recyclable,
		 dry_run ? "would become" : "became", st->volumes,
		 st->vol_recyclable, dry_run ? "would become" : "became",
		 st->index_failures ? "; some index entries could not be "
				      "removed: run nsrim again" : "");
}
