/*
 * mmdb.c - nsrdr's media database step.  The snapshot in a bootstrap is
 * of the moment before the bootstrap was saved, so it lists neither the
 * bootstrap save set nor its bytes on the volume.  nsrdr knows both from
 * the volume it read the bootstrap from and adds them, as nsrd would have
 * recorded them: complete, not browsable, level full, the clone id of
 * its save time, the fragments where the scans found it (one per volume
 * it spans).  (The completion
 * time is not on the volume: the save time stands for it.)
 *
 * The client file indexes were copied after the snapshot was taken, so a
 * save that ended (or began) between the two has index entries but no
 * complete save set in the snapshot.  fix_indexes takes every such save
 * set out of the restored indexes, so that browsing shows exactly the
 * save sets mminfo lists as browsable, as at the snapshot (nsrck -m
 * finds nothing); scanner adds them back from their volume if wanted.
 */
#include "nsr/compat.h"

#include "nsr/cfi.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/level.h"
#include "nsr/mmdb.h"
#include "nsr/vol.h"

#include "nsrdr.h"

/* add_volume - the volume's record: raise its figures past the bootstrap
 * (or add it from the label if the snapshot does not have it). */
static int add_volume(struct mmdb *db, struct mmdb_txn *txn,
		      const struct scan_result *res, const struct scan_ss *s)
{
	const struct nsr_vol_label *l = &res->label;
	struct mmdb_volume v;
	int rc = mmdb_vol_get_by_id(db, l->volid, &v);

	if (rc == NSR_ERR_NOTFOUND) {
		memset(&v, 0, sizeof(v));
		snprintf(v.name, sizeof(v.name), "%s", l->name);
		memcpy(v.volid, l->volid, sizeof(v.volid));
		snprintf(v.pool, sizeof(v.pool), "%s", l->pool);
		v.block_size = l->block_size;
		v.flags = MMDB_VOL_SCANNED;
		v.olabel = l->created;
		v.labeled = l->created;
	} else if (rc != NSR_OK) {
		return rc;
	}
	v.written += s->bytes_here;
	if (s->first.file >= v.next_file)
		v.next_file = s->first.file + 1;
	return mmdb_vol_put(db, txn, &v);
}

/* add_saveset - the bootstrap save set (its header from the first
 * piece, its end from the last) and a fragment per piece. */
static int add_saveset(struct mmdb *db, struct mmdb_txn *txn,
		       const struct nsrdr_piece *p, size_t n)
{
	const struct scan_ss *s = p[0].ss, *e = p[n - 1].ss;
	struct mmdb_saveset ss;
	struct mmdb_fragment f;
	int level = nsr_level_parse(s->hdr.level);
	int rc;

	memset(&ss, 0, sizeof(ss));
	ss.ssid = s->hdr.ssid;
	snprintf(ss.client, sizeof(ss.client), "%s", s->hdr.client);
	snprintf(ss.name, sizeof(ss.name), "%s", s->hdr.name);
	snprintf(ss.pool, sizeof(ss.pool), "%s", s->hdr.pool);
	ss.level = (uint8_t)(level < 0 ? NSR_LEVEL_FULL : level);
	ss.flags = MMDB_SS_FINISHED | MMDB_SS_VALID;
	if (e->tail.status == NSR_VOL_SS_SUSPECT)
		ss.flags |= MMDB_SS_SUSPECT;
	ss.savetime = s->hdr.savetime;
	ss.sscreate = s->hdr.savetime;
	ss.sscomp = s->hdr.savetime;
	ss.ssbrowse = s->hdr.browse_time;
	ss.ssretent = s->hdr.retention_time;
	ss.totalsize = e->tail.bytes;
	ss.nfiles = e->tail.files;
	rc = mmdb_ss_restore(db, txn, &ss, 0);
	for (size_t i = 0; rc == NSR_OK && i < n; i++) {
		scan_fragment(p[i].res, p[i].ss, (uint32_t)s->hdr.savetime,
			      &f);
		rc = mmdb_frag_add(db, txn, &f);
	}
	return rc;
}

/* report_unknown - save sets on the volume the snapshot does not have. */
static void report_unknown(struct mmdb *db, const struct scan_result *res,
			   const struct scan_ss *boot, const char *device)
{
	struct mmdb_saveset ss;

	for (size_t i = 0; i < res->n; i++) {
		const struct scan_ss *s = &res->ss[i];

		if (s == boot || !s->has_begin ||
		    mmdb_ss_get(db, s->hdr.ssid, &ss) != NSR_ERR_NOTFOUND)
			continue;
		printf("nsrdr: save set %u (%s:%s) on volume %s is newer than "
		       "the bootstrap: once nsrd runs, add it with scanner -m "
		       "-S %u %s\n", s->hdr.ssid, s->hdr.client, s->hdr.name,
		       res->label.name, s->hdr.ssid, device);
	}
}

/* An index being fixed: the save sets to take out of it. */
struct ix_fix {
	const char *root;
	struct mmdb *db;
	const char *client;
	uint64_t *out;
	size_t nout, cap;
	int rc;
};

/* stale - gather ss if it is not a complete, browsable save set of the
 * client in the restored media database. */
static int stale(void *ctx, const struct nsr_cfi_saveset *ss)
{
	struct ix_fix *f = ctx;
	struct mmdb_saveset m;
	int rc = ss->ssid > UINT32_MAX
			 ? NSR_ERR_NOTFOUND
			 : mmdb_ss_get(f->db, (uint32_t)ss->ssid, &m);

	if (rc != NSR_OK && rc != NSR_ERR_NOTFOUND)
		return f->rc = rc;
	if (rc == NSR_OK && !strcmp(m.client, f->client) &&
	    (m.flags & MMDB_SS_BROWSABLE) &&
	    !(m.flags & (MMDB_SS_INPROGRESS | MMDB_SS_ABORTED)))
		return 0;
	if (f->nout == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 16;
		uint64_t *v = realloc(f->out, cap * sizeof(*v));

		if (!v)
			return f->rc = NSR_ERR_NOMEM;
		f->out = v;
		f->cap = cap;
	}
	f->out[f->nout++] = ss->ssid;
	return 0;
}

/* fix_index - take the stale save sets out of one client's index. */
static int fix_index(void *ctx, const char *client)
{
	struct ix_fix *f = ctx;
	struct nsr_cfi *c = NULL;
	int rc;

	f->client = client;
	f->nout = 0;
	f->rc = NSR_OK;
	rc = nsr_cfi_open(&c, f->root, client, 0);
	if (rc == NSR_OK)
		rc = nsr_cfi_savesets(c, stale, f);
	if (rc == NSR_OK)
		rc = f->rc;
	for (size_t i = 0; rc == NSR_OK && i < f->nout; i++) {
		rc = nsr_cfi_delete(c, f->out[i]);
		if (rc == NSR_ERR_NOTFOUND) {
			rc = NSR_OK; /* kept for others' lists only */
			continue;
		}
		if (rc == NSR_OK)
			printf("nsrdr: save set %llu of client %s taken out "
			       "of its index: it ended after the bootstrap's "
			       "media database snapshot, which does not hold "
			       "it complete\n", (unsigned long long)f->out[i],
			       client);
	}
	nsr_cfi_close(c);
	if (rc != NSR_OK)
		fprintf(stderr, "nsrdr: cannot fix the index of client %s: "
			"%s\n", client, nsr_strerror(rc));
	return rc;
}

/* fix_indexes - every restored index against the restored media
 * database (see the top of this file). */
static int fix_indexes(const char *root, struct mmdb *db)
{
	struct ix_fix f;
	int rc;

	memset(&f, 0, sizeof(f));
	f.root = root;
	f.db = db;
	rc = nsr_cfi_clients(root, fix_index, &f);
	free(f.out);
	return rc == NSR_ERR_NOTFOUND ? NSR_OK : rc;
}

/* nsrdr_fix_mmdb - open root/mm, add, commit, close. */
int nsrdr_fix_mmdb(const char *root, const struct nsrdr_piece *p, size_t n)
{
	const struct scan_ss *s = p[0].ss;
	char *dir = nsr_path_join(root, "mm");
	struct mmdb *db = NULL;
	struct mmdb_txn *txn = NULL;
	int rc;

	if (dir == NULL)
		return -1;
	rc = mmdb_open(dir, NULL, &db);
	if (rc == NSR_OK)
		rc = mmdb_txn_begin(db, &txn);
	for (size_t i = 0; rc == NSR_OK && i < n; i++)
		rc = add_volume(db, txn, p[i].res, p[i].ss);
	if (rc == NSR_OK)
		rc = add_saveset(db, txn, p, n);
	if (txn)
		rc = mmdb_txn_end(txn, rc);
	if (rc == NSR_OK) {
		for (size_t i = 0; i < n; i++)
			report_unknown(db, p[i].res, p[i].ss, p[i].device);
		rc = fix_indexes(root, db);
		if (rc != NSR_OK)
			fprintf(stderr, "nsrdr: the restored indexes under %s "
				"may name save sets the media database does "
				"not hold complete (nsrck -m lists them)\n",
				root);
	} else {
		fprintf(stderr, "nsrdr: cannot record the bootstrap save set "
			"%u in the restored media database %s: %s\n",
			s->hdr.ssid, dir, nsr_strerror(rc));
	}
	mmdb_close(db);
	free(dir);
	return rc == NSR_OK ? 0 : -1;
}
