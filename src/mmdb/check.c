/*
 * check.c - the media database integrity checker: the page-level check of
 * the B+tree layer (checksums, order, free list, leaked pages), then the
 * schema: every record decodes, every index entry has its record and
 * every record its index entries (by lookup one way, by count the other,
 * keys being unique), string and volume references resolve.
 */
#include "nsr/compat.h"

#include "nsr/bytes.h"
#include "nsr/err.h"
#include "nsr/mmdb.h"
#include "nsr/mmdb_btree.h"
#include "nsr/mmdb_pager.h"

#include "mmdb_int.h"

struct ck {
	struct mmdb *db;
	struct mmdb_view *v;
	struct nsr_buf *report;
	int bad;
	uint64_t n_ss, n_fv, n_vol;
};

/* bad - record one problem. */
static void bad(struct ck *k, const char *fmt, uint32_t a)
{
	k->bad++;
	if (k->report) {
		nsr_buf_addf(k->report, fmt, a);
		nsr_buf_addch(k->report, '\n');
	}
}

/* exists - whether key is in tree t. */
static int exists(struct ck *k, enum mmdb_tree t, const void *key,
		  size_t klen, int *rcp)
{
	const uint8_t *val;
	size_t vl;
	int rc = mmdb_bt_get(k->v, k->db->roots[t], key, klen, &val, &vl);

	*rcp = rc == NSR_ERR_NOTFOUND ? NSR_OK : rc;
	return rc == NSR_OK;
}

/* count - entries of tree t. */
static int count(struct ck *k, enum mmdb_tree t, uint64_t *n)
{
	struct mmdb_bt_cur cur;
	int rc = mmdb_bt_seek(&cur, k->v, k->db->roots[t], NULL, 0);

	*n = 0;
	while (rc == NSR_OK && cur.valid) {
		(*n)++;
		rc = mmdb_bt_next(&cur);
	}
	return rc;
}

/* check_ss - every save set record and its index entries. */
static int check_ss(struct ck *k, struct ssrec *r)
{
	struct mmdb_bt_cur cur;
	int rc = mmdb_bt_seek(&cur, k->v, k->db->roots[T_SS], NULL, 0);

	while (rc == NSR_OK && cur.valid) {
		const uint8_t *key, *val;
		size_t kl, vl;
		uint8_t ik[20];
		uint32_t ssid;

		mmdb_bt_key(&cur, &key, &kl);
		mmdb_bt_val(&cur, &val, &vl);
		if (kl != 4) {
			bad(k, "ss: key of %u bytes", (uint32_t)kl);
			goto next;
		}
		ssid = nsr_get_u32(key);
		k->n_ss++;
		if (mmdb_ssrec_decode(val, vl, ssid, r) != NSR_OK) {
			bad(k, "ss %u: record does not decode", ssid);
			goto next;
		}
		if (r->client >= k->db->strs.n || r->name >= k->db->strs.n ||
		    r->pool >= k->db->strs.n || r->group >= k->db->strs.n ||
		    r->client == 0 || r->name == 0)
			bad(k, "ss %u: bad string reference", ssid);
		nsr_put_u32(ik, r->client);
		nsr_put_u32(ik + 4, r->name);
		mmdb_key_time(ik + 8, r->savetime);
		nsr_put_u32(ik + 16, ssid);
		if (!exists(k, T_SS_CNT, ik, 20, &rc) && rc == NSR_OK)
			bad(k, "ss %u: no client/name/time index entry", ssid);
		mmdb_key_time(ik, r->savetime);
		nsr_put_u32(ik + 8, ssid);
		if (rc == NSR_OK && !exists(k, T_SS_TIME, ik, 12, &rc) &&
		    rc == NSR_OK)
			bad(k, "ss %u: no savetime index entry", ssid);
		for (uint32_t i = 0; i < r->nfrags && rc == NSR_OK; i++) {
			int dup = 0;

			for (uint32_t j = 0; j < i; j++)
				if (r->frags[j].volno == r->frags[i].volno)
					dup = 1;
			if (dup)
				continue;
			k->n_fv++;
			nsr_put_u32(ik, r->frags[i].volno);
			nsr_put_u32(ik + 4, ssid);
			if (!exists(k, T_FRAG_VOL, ik, 8, &rc) && rc == NSR_OK)
				bad(k, "ss %u: fragment volume not indexed",
				    ssid);
			nsr_put_u32(ik, r->frags[i].volno);
			if (rc == NSR_OK && !exists(k, T_VOL_NO, ik, 4, &rc) &&
			    rc == NSR_OK)
				bad(k, "ss %u: fragment on unknown volume",
				    ssid);
		}
		if (rc != NSR_OK)
			return rc;
next:
		rc = mmdb_bt_next(&cur);
	}
	return rc;
}

/* check_vol - every volume record and its index entries. */
static int check_vol(struct ck *k)
{
	struct mmdb_bt_cur cur;
	int rc = mmdb_bt_seek(&cur, k->v, k->db->roots[T_VOL], NULL, 0);

	while (rc == NSR_OK && cur.valid) {
		const uint8_t *key, *val, *x;
		size_t kl, vl, xl;
		struct mmdb_volume vol;
		uint8_t pk[MMDB_POOL_MAX + 1 + MMDB_VOLNAME_MAX], nk[4];
		size_t pl;

		mmdb_bt_key(&cur, &key, &kl);
		mmdb_bt_val(&cur, &val, &vl);
		k->n_vol++;
		if (vl < 4 ||
		    mmdb_vol_decode(val + 4, vl - 4, &vol) != NSR_OK ||
		    strlen(vol.name) != kl || memcmp(vol.name, key, kl) != 0) {
			bad(k, "volume record %u does not decode",
			    (uint32_t)k->n_vol);
			goto next;
		}
		memcpy(nk, val, 4);
		rc = mmdb_bt_get(k->v, k->db->roots[T_VOL_ID], vol.volid, 16,
				 &x, &xl);
		if (rc == NSR_OK && (xl != kl || memcmp(x, key, kl) != 0))
			bad(k, "volume %u: volid index names another volume",
			    nsr_get_u32(nk));
		if (rc == NSR_ERR_NOTFOUND) {
			bad(k, "volume %u: volid not indexed", nsr_get_u32(nk));
			rc = NSR_OK;
		}
		if (rc == NSR_OK)
			rc = mmdb_bt_get(k->v, k->db->roots[T_VOL_NO], nk, 4,
					 &x, &xl);
		if (rc == NSR_OK && (xl != kl || memcmp(x, key, kl) != 0))
			bad(k, "volume %u: number index names another volume",
			    nsr_get_u32(nk));
		if (rc == NSR_ERR_NOTFOUND) {
			bad(k, "volume %u: number not indexed",
			    nsr_get_u32(nk));
			rc = NSR_OK;
		}
		pl = strlen(vol.pool);
		memcpy(pk, vol.pool, pl);
		pk[pl] = 0;
		memcpy(pk + pl + 1, vol.name, kl);
		if (rc == NSR_OK && !exists(k, T_VOL_POOL, pk, pl + 1 + kl,
					    &rc) && rc == NSR_OK)
			bad(k, "volume %u: pool not indexed", nsr_get_u32(nk));
		if (rc != NSR_OK)
			return rc;
next:
		rc = mmdb_bt_next(&cur);
	}
	return rc;
}

/* check_counts - index sizes equal the record-derived counts, so with
 * unique keys and the lookups above, indexes and records correspond
 * one to one. */
static int check_counts(struct ck *k)
{
	static const struct {
		enum mmdb_tree t;
		int which;	/* 0 ss, 1 frag_vol, 2 vol */
	} idx[] = {
		{ T_SS_CNT, 0 }, { T_SS_TIME, 0 }, { T_FRAG_VOL, 1 },
		{ T_VOL_ID, 2 }, { T_VOL_NO, 2 }, { T_VOL_POOL, 2 },
	};
	int rc = NSR_OK;

	for (size_t i = 0; i < NSR_ARRAY_SIZE(idx) && rc == NSR_OK; i++) {
		uint64_t n, want = idx[i].which == 0 ? k->n_ss :
				   idx[i].which == 1 ? k->n_fv : k->n_vol;

		rc = count(k, idx[i].t, &n);
		if (rc == NSR_OK && n != want) {
			k->bad++;
			if (k->report)
				nsr_buf_addf(k->report, "index %s has %" PRIu64
					     " entries, records imply %"
					     PRIu64 "\n",
					     mmdb_tree_names[idx[i].t], n,
					     want);
		}
	}
	return rc;
}

/* mmdb_check - full integrity check of the last committed state. */
int mmdb_check(struct mmdb *db, struct nsr_buf *report)
{
	struct ck k;
	struct ssrec *r = malloc(sizeof(*r));
	int rc;

	if (!r)
		return NSR_ERR_NOMEM;
	memset(&k, 0, sizeof(k));
	k.db = db;
	k.report = report;
	rc = mmdb_pager_read_begin(db->pager, &k.v);
	if (rc != NSR_OK)
		goto out;
	rc = mmdb_bt_check_all(k.v, report);
	if (rc < 0)
		goto out;
	k.bad = rc;
	rc = NSR_OK;
	/* Record-level checks only on a structurally sound file. */
	if (k.bad == 0)
		rc = check_ss(&k, r);
	if (rc == NSR_OK && k.bad == 0)
		rc = check_vol(&k);
	if (rc == NSR_OK && k.bad == 0)
		rc = check_counts(&k);
	if (rc == NSR_ERR_CORRUPT || rc == NSR_ERR_CHECKSUM) {
		k.bad++;
		rc = NSR_OK;
	}
out:
	mmdb_pager_read_end(k.v);
	free(r);
	if (rc != NSR_OK)
		return rc;
	return k.bad ? NSR_ERR_CORRUPT : NSR_OK;
}
