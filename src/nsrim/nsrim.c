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
#include "nsr/index_clnt.h"
#include "nsr/level.h"
#include "nsr/mmdb.h"
#include "nsr/mmdb_clnt.h"
#include "nsr/nsrim.h"

/* Save set flag changes sent together (mmdb_clnt_ss_flags_many). */
#define PENDING_MAX 1024

/* Flags of a save set that can hold no chain back (expiry.h usable). */
#define SS_BROKEN (MMDB_SS_ABORTED | MMDB_SS_INCOMPLETE | MMDB_SS_INPROGRESS)

/* Client, save set and volume names, each kept once however many save
 * sets share it (a million save sets name a few thousand of each):
 * open addressing, FNV-1a. */
struct im_pool {
	char **slot;
	size_t cap, n;
};

/* One save set as the run sees it (names in the pool). */
struct im_ss {
	uint32_t ssid;
	const char *client;
	const char *name;
	unsigned level;
	uint32_t flags;
	int64_t savetime, browse, retention;
	int64_t eff_browse, eff_retention;
	int recyclable; /* flagged, or flagged by this run (or would be) */
	int cycle;	/* in its chain's oldest full cycle, taken by -l */
	int out_of_scope; /* -c, -N, -V: read for its chain, not changed */
};

/* A save set on a volume (one per row with a volume). */
struct im_on {
	const char *vol; /* in the pool */
	uint32_t ssid;
};

/* The state of one run. */
struct im_run {
	const struct nsr_nsrim_opts *o;
	struct nsr_nsrim_stats *st;
	struct mmdb_clnt *mc;
	struct nsr_ixclnt *ix;
	struct im_ss *ss;
	size_t nss, capss;
	struct im_on *on;
	size_t non, capon;
	struct im_pool names;
	/* Flag changes not yet sent: one MM_SS_FLAGS_MANY per PENDING_MAX
	 * (a commit each), always before the volumes are judged. */
	struct mmdb_clnt_flags pending[PENDING_MAX];
	size_t npending;
	/* Volumes' retention times to set, sent after step 4's loop. */
	struct mmdb_clnt_retent *retents;
	size_t nretents, capretents;
	int64_t now;
	unsigned writes; /* changes made so far */
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

/* fnv - FNV-1a of a string. */
static uint64_t fnv(const char *s)
{
	uint64_t h = 14695981039346656037ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

/* pool_grow - double the table (at half load). */
static int pool_grow(struct im_pool *p)
{
	size_t cap = p->cap ? p->cap * 2 : 1024;
	char **slot = calloc(cap, sizeof(*slot));

	if (!slot)
		return NSR_ERR_NOMEM;
	for (size_t i = 0; i < p->cap; i++) {
		size_t k;

		if (!p->slot[i])
			continue;
		for (k = fnv(p->slot[i]) & (cap - 1); slot[k];
		     k = (k + 1) & (cap - 1))
			;
		slot[k] = p->slot[i];
	}
	free(p->slot);
	p->slot = slot;
	p->cap = cap;
	return NSR_OK;
}

/* intern - the pool's copy of s (made if new); NULL without memory. */
static const char *intern(struct im_pool *p, const char *s)
{
	size_t k;

	if (2 * (p->n + 1) > p->cap && pool_grow(p) != NSR_OK)
		return NULL;
	for (k = fnv(s) & (p->cap - 1); p->slot[k]; k = (k + 1) & (p->cap - 1))
		if (strcmp(p->slot[k], s) == 0)
			return p->slot[k];
	p->slot[k] = strdup(s);
	if (p->slot[k])
		p->n++;
	return p->slot[k];
}

/* pool_free - every name and the table. */
static void pool_free(struct im_pool *p)
{
	for (size_t i = 0; i < p->cap; i++)
		free(p->slot[i]);
	free(p->slot);
	memset(p, 0, sizeof(*p));
}

/* grow - make room for one more element of size sz in *v. */
static int grow(void **v, size_t n, size_t *cap, size_t sz)
{
	void *nv;

	if (n < *cap)
		return NSR_OK;
	nv = realloc(*v, (*cap ? *cap * 2 : 256) * sz);
	if (!nv)
		return NSR_ERR_NOMEM;
	*v = nv;
	*cap = *cap ? *cap * 2 : 256;
	return NSR_OK;
}

/* add_row - remember a row's save set (once) and its volume. */
static int add_row(struct im_run *r, const struct mmdb_ss_row *row)
{
	struct im_ss *s;

	if (row->has_volume) {
		if (grow((void **)&r->on, r->non, &r->capon,
			 sizeof(*r->on)) != NSR_OK)
			return NSR_ERR_NOMEM;
		r->on[r->non].vol = intern(&r->names, row->vol.name);
		if (!r->on[r->non].vol)
			return NSR_ERR_NOMEM;
		r->on[r->non++].ssid = row->ss.ssid;
	}
	if (r->nss && r->ss[r->nss - 1].ssid == row->ss.ssid)
		return NSR_OK; /* more rows of it: dedup() drops the rest */
	if (grow((void **)&r->ss, r->nss, &r->capss, sizeof(*r->ss)) != NSR_OK)
		return NSR_ERR_NOMEM;
	s = &r->ss[r->nss++];
	memset(s, 0, sizeof(*s));
	s->ssid = row->ss.ssid;
	s->client = intern(&r->names, row->ss.client);
	s->name = intern(&r->names, row->ss.name);
	if (!s->client || !s->name)
		return NSR_ERR_NOMEM;
	s->level = row->ss.level;
	s->flags = row->ss.flags;
	s->savetime = row->ss.savetime;
	s->browse = row->ss.ssbrowse;
	s->retention = row->ss.ssretent;
	s->recyclable = !!(s->flags & MMDB_SS_RECYCLABLE);
	return NSR_OK;
}

/* by_chain - order: client, save set name, save time, ssid (pooled
 * names: equal strings are the same pointer). */
static int by_chain(const void *a, const void *b)
{
	const struct im_ss *x = a, *y = b;
	int d = x->client == y->client ? 0 : strcmp(x->client, y->client);

	if (!d && x->name != y->name)
		d = strcmp(x->name, y->name);
	if (!d && x->savetime != y->savetime)
		d = x->savetime < y->savetime ? -1 : 1;
	if (!d)
		d = x->ssid < y->ssid ? -1 : x->ssid > y->ssid;
	return d;
}

/* by_ssid - order of im_ss by ssid (for bsearch). */
static int by_ssid(const void *a, const void *b)
{
	const struct im_ss *x = a, *y = b;

	return x->ssid < y->ssid ? -1 : x->ssid > y->ssid;
}

/* by_vol - order of im_on by volume name. */
static int by_vol(const void *a, const void *b)
{
	const struct im_on *x = a, *y = b;

	return x->vol == y->vol ? 0 : strcmp(x->vol, y->vol);
}

/* read_savesets - every save set row of the media database. */
static int read_savesets(struct im_run *r, struct nsr_buf *err)
{
	struct mmdb_ss_row rows[64];
	size_t got = 0;
	int done = 0, rc;

	rc = mmdb_clnt_query_open(r->mc, "", 0, r->now);
	while (rc == NSR_OK && !done) {
		rc = mmdb_clnt_query_next_rows(r->mc, rows,
					       sizeof(rows) / sizeof(rows[0]),
					       &got, &done);
		for (size_t i = 0; rc == NSR_OK && i < got; i++)
			rc = add_row(r, &rows[i]);
		if (rc == NSR_OK && got == 0 && !done)
			break;
	}
	if (rc != NSR_OK)
		nsr_buf_addf(err, "cannot read the save sets of the media "
			     "database: %s", rc == NSR_ERR_NOMEM ?
			     "out of memory" : mmdb_clnt_errmsg(r->mc));
	return rc;
}

/* dedup - one entry per save set (sorted by ssid). */
static void dedup(struct im_run *r)
{
	size_t k = 0;

	if (r->nss == 0)
		return;
	qsort(r->ss, r->nss, sizeof(*r->ss), by_ssid);
	for (size_t i = 0; i < r->nss; i++)
		if (k == 0 || r->ss[k - 1].ssid != r->ss[i].ssid)
			r->ss[k++] = r->ss[i];
	r->nss = k;
}

/* scope - mark the save sets a narrowed run (-c, -N, -V) leaves alone;
 * r->ss is in ssid order.  The number in scope. */
static size_t scope(struct im_run *r)
{
	const struct nsr_nsrim_opts *o = r->o;
	size_t n = 0;

	for (size_t i = 0; i < r->nss; i++) {
		struct im_ss *s = &r->ss[i];

		s->out_of_scope = (o->client && strcmp(s->client, o->client)) ||
				  (o->name && strcmp(s->name, o->name)) ||
				  o->volume;
	}
	for (size_t i = 0; o->volume && i < r->non; i++) {
		struct im_ss k, *s;

		if (strcmp(r->on[i].vol, o->volume) != 0)
			continue;
		k.ssid = r->on[i].ssid;
		s = bsearch(&k, r->ss, r->nss, sizeof(*r->ss), by_ssid);
		if (s && (!o->client || !strcmp(s->client, o->client)) &&
		    (!o->name || !strcmp(s->name, o->name)))
			s->out_of_scope = 0;
	}
	for (size_t i = 0; i < r->nss; i++)
		n += !r->ss[i].out_of_scope;
	return n;
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

/* oldest_cycle - -l for the chain ss[a..b) (in save time order): if it
 * has two browsable full save sets or more, the oldest one and every
 * save set after it and before the next full (its cycle: nothing saved
 * later builds on them) lose their index entries now. */
static void oldest_cycle(struct im_run *r, size_t a, size_t b)
{
	size_t f0 = b, f1 = b;

	for (size_t i = a; i < b && f1 == b; i++) {
		if (!usable_full(&r->ss[i]))
			continue;
		if (f0 == b)
			f0 = i;
		else
			f1 = i;
	}
	for (size_t i = f0; f1 < b && i < f1; i++) {
		struct im_ss *s = &r->ss[i];

		if (!browsable(s) || (s->flags & MMDB_SS_INPROGRESS))
			continue;
		s->cycle = 1;
		if (s->eff_browse > r->now)
			s->eff_browse = r->now;
	}
}

/* chains - effective times of every save set (expiry.h rule 4). */
static int chains(struct im_run *r)
{
	struct nsr_expiry_ss *v;

	if (r->nss == 0)
		return NSR_OK;
	qsort(r->ss, r->nss, sizeof(*r->ss), by_chain);
	v = calloc(r->nss, sizeof(*v));
	if (!v)
		return NSR_ERR_NOMEM;
	for (size_t a = 0, b; a < r->nss; a = b) {
		for (b = a; b < r->nss && r->ss[a].client == r->ss[b].client &&
			    r->ss[a].name == r->ss[b].name;
		     b++) {
			struct nsr_expiry_ss *e = &v[b - a];

			e->ssid = r->ss[b].ssid;
			e->level = r->ss[b].level;
			e->savetime = r->ss[b].savetime;
			e->usable = (r->ss[b].flags & MMDB_SS_FINISHED) &&
				    !(r->ss[b].flags & SS_BROKEN);
			e->browse = r->ss[b].browse;
			e->retention = r->ss[b].retention;
		}
		/* Same order (save time, ssid: unique keys) in and out. */
		nsr_expiry_chain(v, b - a);
		for (size_t i = a; i < b; i++) {
			r->ss[i].eff_browse = v[i - a].eff_browse;
			r->ss[i].eff_retention = v[i - a].eff_retention;
		}
		if (r->o->oldest_cycle)
			oldest_cycle(r, a, b);
	}
	free(v);
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
		r->o->dry_run ? "would: " : "", s->client, s->name, s->ssid,
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

/* expire_one - steps 2 and 3 for one save set; NSR_OK or the media
 * database's error (an index failure is counted, the save set then
 * keeps its flags for the next run: invariant 1). */
static int expire_one(struct im_run *r, struct im_ss *s)
{
	int live = browsable(s);
	int rc, w;

	if ((s->flags & MMDB_SS_INPROGRESS) || s->out_of_scope)
		return NSR_OK;
	if (live && s->eff_browse <= r->now) {
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
			rc = nsr_ixclnt_delete(r->ix, s->client, s->ssid);
			if (rc != NSR_OK && rc != NSR_ERR_NOTFOUND) {
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
	if (!live && !s->recyclable && s->eff_retention <= r->now) {
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
	struct im_on key, *on;
	size_t lo, hi;
	int all = 1;

	*nss = 0;
	*retent = 0;
	memset(&key, 0, sizeof(key));
	key.vol = v->name;
	on = r->non ? bsearch(&key, r->on, r->non, sizeof(*r->on), by_vol)
		    : NULL;
	if (on) {
		lo = hi = (size_t)(on - r->on);
		while (lo > 0 && r->on[lo - 1].vol == on->vol)
			lo--;
		while (hi < r->non && r->on[hi].vol == on->vol)
			hi++;
		for (size_t i = lo; i < hi; i++) {
			struct im_ss k, *s;

			k.ssid = r->on[i].ssid;
			s = bsearch(&k, r->ss, r->nss, sizeof(*r->ss),
				    by_ssid);
			(*nss)++;
			if (!s || !s->recyclable)
				all = 0;
			if (s)
				*retent = NSR_MAX(*retent,
						  NSR_MAX(s->eff_retention,
							  s->retention));
		}
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
	if (grow((void **)&r->retents, r->nretents, &r->capretents,
		 sizeof(*r->retents)) != NSR_OK) {
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

/* expire_all - steps 2 and 3 for every save set.  What was counted as
 * made is sent, also when a test's crash point stopped the run
 * (NSR_ERR_LIMIT). */
static int expire_all(struct im_run *r, struct nsr_buf *err)
{
	int rc = NSR_OK, f;

	for (size_t i = 0; rc == NSR_OK && i < r->nss; i++)
		rc = expire_one(r, &r->ss[i]);
	if (rc == NSR_OK || rc == NSR_ERR_LIMIT) {
		f = flush(r);
		if (f != NSR_OK)
			rc = f;
	}
	if (rc != NSR_OK && rc != NSR_ERR_LIMIT)
		nsr_buf_addf(err, "cannot flag save sets in the media "
			     "database: %s", mmdb_clnt_errmsg(r->mc));
	return rc;
}

/* nsr_nsrim_run - steps 1-4 of nsrim.h. */
int nsr_nsrim_run(const struct nsr_nsrim_opts *o, struct nsr_nsrim_stats *st,
		  struct nsr_buf *err)
{
	struct im_run r;
	int rc;

	memset(&r, 0, sizeof(r));
	memset(st, 0, sizeof(*st));
	r.o = o;
	r.st = st;
	r.now = o->now ? o->now : (int64_t)nsr_clock_now();
	rc = mmdb_clnt_open(o->server, &r.mc, err);
	if (rc == NSR_OK && !o->dry_run)
		rc = nsr_ixclnt_open(o->server, &r.ix, err);
	if (rc == NSR_OK)
		rc = read_savesets(&r, err);
	if (rc == NSR_OK) {
		dedup(&r);
		if (r.non)
			qsort(r.on, r.non, sizeof(*r.on), by_vol);
		st->savesets = (unsigned)scope(&r);
	}
	if (rc == NSR_OK && (rc = chains(&r)) != NSR_OK)
		nsr_buf_addf(err, "out of memory");
	if (rc == NSR_OK)
		rc = expire_all(&r, err);
	if (rc == NSR_OK) {
		if (r.nss)
			qsort(r.ss, r.nss, sizeof(*r.ss), by_ssid);
		rc = volumes(&r, err);
	}
	if (rc == NSR_ERR_LIMIT)
		nsr_buf_addf(err, "stopped after %u changes "
			     "(NSR_TEST_NSRIM_STOP_AFTER)", r.writes);
	nsr_ixclnt_close(r.ix);
	mmdb_clnt_close(r.mc);
	free(r.ss);
	free(r.on);
	free(r.retents);
	pool_free(&r.names);
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
