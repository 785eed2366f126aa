/*
 * rebuild.c - scanner -m.  The volume goes in (flagged scanned) if the
 * media database does not know its volume id; each selected fragment goes
 * in if its save set is known and the fragment is missing.  A save set
 * the database has lost cannot be re-created under its original ssid
 * through nsrmmdbd today (MM_SS_CREATE allocates the ssid), and the data
 * on the volume is tagged with the original one, so such save sets are
 * reported and left out rather than recorded under a wrong id.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/mmdb.h"
#include "nsr/mmdb_clnt.h"

#include "rebuild.h"

/* add_volume - the volume record, unless the database has it. */
static int add_volume(struct mmdb_clnt *c, enum nsr_dev_type type,
		      const struct scan_result *res)
{
	const struct nsr_vol_label *l = &res->label;
	struct mmdb_volume v;
	int rc;

	rc = mmdb_clnt_vol_get_by_id(c, l->volid, &v);
	if (rc == NSR_OK)
		return 0;
	if (rc != NSR_ERR_NOTFOUND) {
		fprintf(stderr, "scanner: cannot look up volume %s: %s\n",
			l->name, mmdb_clnt_errmsg(c));
		return -1;
	}
	memset(&v, 0, sizeof(v));
	snprintf(v.name, sizeof(v.name), "%s", l->name);
	memcpy(v.volid, l->volid, sizeof(v.volid));
	snprintf(v.pool, sizeof(v.pool), "%s", l->pool);
	snprintf(v.type, sizeof(v.type), "%s", nsr_dev_type_name(type));
	v.block_size = l->block_size;
	v.flags = MMDB_VOL_SCANNED;
	v.olabel = l->created;
	v.labeled = l->created;
	for (size_t i = 0; i < res->n; i++) {
		v.written += res->ss[i].bytes_here;
		if (res->ss[i].first.file >= v.next_file)
			v.next_file = res->ss[i].first.file + 1;
	}
	if (mmdb_clnt_vol_put(c, &v) != NSR_OK) {
		fprintf(stderr, "scanner: cannot add volume %s: %s\n", l->name,
			mmdb_clnt_errmsg(c));
		return -1;
	}
	printf("scanner: volume %s added to the media database\n", l->name);
	return 0;
}

/* frag_flags - MMDB_FRAG_* of a fragment. */
static uint32_t frag_flags(const struct scan_ss *s)
{
	if (s->span.frag_seq == 0)
		return s->has_end ? MMDB_FRAG_COMPLETE : MMDB_FRAG_HEAD;
	return s->has_end ? MMDB_FRAG_TAIL : MMDB_FRAG_MIDDLE;
}

/* add_frag - one fragment of a save set the database knows. */
static int add_frag(struct mmdb_clnt *c, const struct scan_result *res,
		    const struct scan_ss *s)
{
	struct mmdb_saveset ss;
	struct mmdb_fragment have[MM_FRAGS_MAX], f;
	size_t n = 0;
	int rc;

	rc = mmdb_clnt_ss_get(c, s->hdr.ssid, &ss);
	if (rc == NSR_ERR_NOTFOUND) {
		fprintf(stderr, "scanner: save set %u (%s:%s) is not in the "
			"media database, and nsrmmdbd cannot re-create it "
			"under its ssid: not added\n", s->hdr.ssid,
			s->hdr.client, s->hdr.name);
		return -1;
	}
	if (rc == NSR_OK)
		rc = mmdb_clnt_frag_list(c, s->hdr.ssid, have,
					 NSR_ARRAY_SIZE(have), &n);
	if (rc != NSR_OK) {
		fprintf(stderr, "scanner: save set %u: %s\n", s->hdr.ssid,
			mmdb_clnt_errmsg(c));
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (memcmp(have[i].volid, res->label.volid, 16) == 0 &&
		    have[i].seq == s->span.frag_seq)
			return 0; /* already recorded */
	memset(&f, 0, sizeof(f));
	f.ssid = s->hdr.ssid;
	f.cloneid = n ? have[0].cloneid : (uint32_t)s->hdr.savetime;
	memcpy(f.volid, res->label.volid, 16);
	f.seq = s->frag.frag_seq;
	f.ss_offset = s->frag.ss_offset;
	f.size = s->frag.size;
	f.file = s->frag.file;
	f.record = s->frag.record;
	f.offset = s->frag.offset;
	f.flags = frag_flags(s);
	if (mmdb_clnt_frag_add(c, &f) != NSR_OK) {
		fprintf(stderr, "scanner: cannot add the fragment of save set "
			"%u: %s\n", s->hdr.ssid, mmdb_clnt_errmsg(c));
		return -1;
	}
	printf("scanner: save set %u (%s:%s): fragment %u on volume %s "
	       "added\n", s->hdr.ssid, s->hdr.client, s->hdr.name, f.seq,
	       res->label.name);
	return 0;
}

/* rebuild_mmdb - volume, then fragments. */
int rebuild_mmdb(const char *server, enum nsr_dev_type type,
		 const struct scan_result *res)
{
	struct mmdb_clnt *c = NULL;
	struct nsr_buf err;
	int ret = 0;

	nsr_buf_init(&err, 0);
	if (mmdb_clnt_open(server, &c, &err) != NSR_OK) {
		fprintf(stderr, "scanner: cannot reach the media database: "
			"%s\n", err.data);
		nsr_buf_release(&err);
		return -1;
	}
	if (add_volume(c, type, res) != 0)
		ret = -1;
	for (size_t i = 0; i < res->n; i++)
		if (res->ss[i].selected && res->ss[i].has_begin &&
		    add_frag(c, res, &res->ss[i]) != 0)
			ret = -1;
	mmdb_clnt_close(c);
	nsr_buf_release(&err);
	return ret;
}
