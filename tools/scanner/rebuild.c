/*
 * rebuild.c - scanner -m.  The volume goes in (flagged scanned) if the
 * media database does not know its volume id; a save set the database
 * does not know is re-created under the ssid its chunks carry (from the
 * save-set header and, if on this volume, the trailer: MM_SS_RESTORE);
 * then each selected fragment goes in if it is missing.  So a media
 * database lost entirely comes back from the volumes alone.
 *
 * The suspect flag follows what the scan saw: a save set with damaged
 * data on this volume is marked suspect; one read whole from this volume
 * (begin to end) without damage, and not saved with read errors, is
 * cleared.  A save set that spans volumes is never cleared here (this
 * scan saw only part of it).
 */
#include "nsr/compat.h"

#include "nsr/boot.h"
#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/mmdb.h"
#include "nsr/mmdb_clnt.h"
#include "nsr/vol.h"

#include "rebuild.h"
#include "scan.h"

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

/* restore_ss - re-create a save set the database lost, from what the
 * volume records about it: browsable and complete if its trailer is here
 * and says so, incomplete otherwise (a later volume may hold the rest). */
static int restore_ss(struct mmdb_clnt *c, const struct scan_ss *s,
		      struct mmdb_saveset *ss)
{
	int level = nsr_level_parse(s->hdr.level);

	memset(ss, 0, sizeof(*ss));
	ss->ssid = s->hdr.ssid;
	snprintf(ss->client, sizeof(ss->client), "%s", s->hdr.client);
	snprintf(ss->name, sizeof(ss->name), "%s", s->hdr.name);
	snprintf(ss->pool, sizeof(ss->pool), "%s", s->hdr.pool);
	ss->level = (uint8_t)(level < 0 ? NSR_LEVEL_MANUAL : level);
	ss->savetime = s->hdr.savetime;
	ss->sscreate = s->hdr.savetime;
	ss->ssbrowse = s->hdr.browse_time;
	ss->ssretent = s->hdr.retention_time;
	ss->flags = MMDB_SS_SCANNED;
	if (s->has_end && s->tail.status != NSR_VOL_SS_ABORTED) {
		ss->flags |= MMDB_SS_FINISHED | MMDB_SS_VALID;
		/* a bootstrap is never browsable: it has no index entries */
		if (strcmp(s->hdr.name, NSR_BOOT_SSNAME) != 0)
			ss->flags |= MMDB_SS_BROWSABLE;
		if (s->tail.status == NSR_VOL_SS_SUSPECT)
			ss->flags |= MMDB_SS_SUSPECT;
		ss->totalsize = s->tail.bytes;
		ss->nfiles = s->tail.files;
		ss->sscomp = s->hdr.savetime;
	} else {
		ss->flags |= s->has_end ? MMDB_SS_ABORTED | MMDB_SS_INCOMPLETE
					: MMDB_SS_INCOMPLETE;
	}
	if (mmdb_clnt_ss_restore(c, ss, 0) != NSR_OK) {
		fprintf(stderr,
			"scanner: cannot re-create save set %u (%s:%s): "
			"%s\n",
			s->hdr.ssid, s->hdr.client, s->hdr.name,
			mmdb_clnt_errmsg(c));
		return -1;
	}
	printf("scanner: save set %u (%s:%s) re-created in the media "
	       "database\n",
	       s->hdr.ssid, s->hdr.client, s->hdr.name);
	return 0;
}

/* complete_ss - a trailer found on a later volume completes a save set
 * that an earlier volume's scan re-created as incomplete. */
static void complete_ss(struct mmdb_clnt *c, const struct scan_ss *s,
			struct mmdb_saveset *ss)
{
	if (!s->has_end || !(ss->flags & MMDB_SS_SCANNED) ||
	    (ss->flags & MMDB_SS_FINISHED) ||
	    s->tail.status == NSR_VOL_SS_ABORTED)
		return;
	ss->flags &= ~(uint32_t)MMDB_SS_INCOMPLETE;
	ss->flags |= MMDB_SS_FINISHED | MMDB_SS_VALID;
	if (strcmp(s->hdr.name, NSR_BOOT_SSNAME) != 0)
		ss->flags |= MMDB_SS_BROWSABLE;
	ss->totalsize = s->tail.bytes;
	ss->nfiles = s->tail.files;
	if (mmdb_clnt_ss_update(c, ss) != NSR_OK)
		fprintf(stderr, "scanner: cannot complete save set %u: %s\n",
			s->hdr.ssid, mmdb_clnt_errmsg(c));
}

/* update_suspect - set or clear the suspect flag as the scan found it. */
static void update_suspect(struct mmdb_clnt *c, const struct scan_ss *s,
			   const struct mmdb_saveset *ss)
{
	int whole = !s->damaged && !s->unfinished && s->has_begin &&
		    s->span.frag_seq == 0 && s->has_end &&
		    s->tail.status == NSR_VOL_SS_OK;
	int was = (ss->flags & MMDB_SS_SUSPECT) != 0;
	int rc;

	if (s->damaged && !was)
		rc = mmdb_clnt_ss_flags(c, s->hdr.ssid, MMDB_SS_SUSPECT, 0);
	else if (whole && was)
		rc = mmdb_clnt_ss_flags(c, s->hdr.ssid, 0, MMDB_SS_SUSPECT);
	else
		return;
	if (rc != NSR_OK)
		fprintf(stderr, "scanner: cannot %s save set %u suspect: %s\n",
			was ? "clear" : "mark", s->hdr.ssid,
			mmdb_clnt_errmsg(c));
	else
		printf("scanner: save set %u (%s:%s) %s\n", s->hdr.ssid,
		       s->hdr.client, s->hdr.name,
		       was ? "read without damage: no longer suspect"
			   : "is damaged: marked suspect");
}

/* add_frag - one fragment of a save set (re-created if it is lost). */
static int add_frag(struct mmdb_clnt *c, const struct scan_result *res,
		    const struct scan_ss *s)
{
	struct mmdb_saveset ss;
	struct mmdb_fragment have[MM_FRAGS_MAX], f;
	size_t n = 0;
	int rc;

	rc = mmdb_clnt_ss_get(c, s->hdr.ssid, &ss);
	if (rc == NSR_ERR_NOTFOUND) {
		if (restore_ss(c, s, &ss) != 0)
			return -1;
		rc = NSR_OK;
	} else if (rc == NSR_OK) {
		complete_ss(c, s, &ss);
	}
	if (rc == NSR_OK)
		update_suspect(c, s, &ss);
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
	scan_fragment(res, s, n ? have[0].cloneid : (uint32_t)s->hdr.savetime,
		      &f);
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
