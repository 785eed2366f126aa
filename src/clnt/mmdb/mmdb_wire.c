/*
 * mmdb_wire.c - conversion between the media database records of mmdb.h
 * and the wire structs of nsrmmdb.x.
 *
 * Owns nothing: *_to_wire allocate the wire strings the caller frees with
 * xdr_free(); *_from_wire treat the wire struct as hostile (a decoded
 * request or reply) and refuse strings or counts that do not fit the
 * fixed-size record fields.
 */
#include "nsr/compat.h"

#include <stdlib.h>
#include <string.h>

#include "nsr/err.h"
#include "nsr/mmdb.h"
#include "nsr/mmdb_clnt.h"

/* dup_str - malloc'ed copy of record string s (at most cap bytes, so an
 * unterminated array is never overrun) into *dst; NSR_ERR_NOMEM. */
static int dup_str(char **dst, const char *s, size_t cap)
{
	*dst = strndup(s ? s : "", cap);
	return *dst ? NSR_OK : NSR_ERR_NOMEM;
}

/* copy_str - wire string src into the record array dst of size cap+1;
 * NSR_ERR_INVAL if longer than cap. */
static int copy_str(char *dst, size_t cap, const char *src)
{
	size_t len;

	if (!src)
		src = "";
	len = strnlen(src, cap + 1);
	if (len > cap)
		return NSR_ERR_INVAL;
	memcpy(dst, src, len);
	dst[len] = '\0';
	return NSR_OK;
}

/* mmdb_clnt_vol_to_wire - volume record to wire (strings allocated). */
int mmdb_clnt_vol_to_wire(const struct mmdb_volume *v, mm_volume *w)
{
	memcpy(w->volid, v->volid, sizeof(w->volid));
	w->block_size = v->block_size;
	w->flags = v->flags;
	w->written = v->written;
	w->read = v->read;
	w->capacity = v->capacity;
	w->olabel = v->olabel;
	w->labeled = v->labeled;
	w->volretent = v->volretent;
	w->recycled = v->recycled;
	w->mounts = v->mounts;
	w->next_file = v->next_file;
	w->next_record = v->next_record;
	if (dup_str(&w->name, v->name, MMDB_VOLNAME_MAX) ||
	    dup_str(&w->pool, v->pool, MMDB_POOL_MAX) ||
	    dup_str(&w->type, v->type, MMDB_MEDIATYPE_MAX) ||
	    dup_str(&w->location, v->location, MMDB_LOCATION_MAX) ||
	    dup_str(&w->device, v->device, MMDB_DEVICE_MAX))
		return NSR_ERR_NOMEM;
	return NSR_OK;
}

/* mmdb_clnt_vol_from_wire - checked wire volume to record. */
int mmdb_clnt_vol_from_wire(const mm_volume *w, struct mmdb_volume *v)
{
	memset(v, 0, sizeof(*v));
	if (copy_str(v->name, MMDB_VOLNAME_MAX, w->name) ||
	    copy_str(v->pool, MMDB_POOL_MAX, w->pool) ||
	    copy_str(v->type, MMDB_MEDIATYPE_MAX, w->type) ||
	    copy_str(v->location, MMDB_LOCATION_MAX, w->location) ||
	    copy_str(v->device, MMDB_DEVICE_MAX, w->device))
		return NSR_ERR_INVAL;
	memcpy(v->volid, w->volid, sizeof(v->volid));
	v->block_size = w->block_size;
	v->flags = w->flags;
	v->written = w->written;
	v->read = w->read;
	v->capacity = w->capacity;
	v->olabel = w->olabel;
	v->labeled = w->labeled;
	v->volretent = w->volretent;
	v->recycled = w->recycled;
	v->mounts = w->mounts;
	v->next_file = w->next_file;
	v->next_record = w->next_record;
	return NSR_OK;
}

/* mmdb_clnt_ss_to_wire - save set record to wire (strings allocated). */
int mmdb_clnt_ss_to_wire(const struct mmdb_saveset *ss, mm_saveset *w)
{
	uint32_t nd = NSR_MIN(ss->ndependents, (uint32_t)MMDB_PSS_MAX);

	w->ssid = ss->ssid;
	memcpy(w->longid, ss->longid, sizeof(w->longid));
	w->level = ss->level;
	w->flags = ss->flags;
	w->savetime = ss->savetime;
	w->sscreate = ss->sscreate;
	w->sscomp = ss->sscomp;
	w->ssbrowse = ss->ssbrowse;
	w->ssretent = ss->ssretent;
	w->totalsize = ss->totalsize;
	w->nfiles = ss->nfiles;
	w->pssid = ss->pssid;
	w->anchor_time = ss->anchor_time;
	if (dup_str(&w->client, ss->client, MMDB_CLIENT_MAX) ||
	    dup_str(&w->name, ss->name, MMDB_SSNAME_MAX) ||
	    dup_str(&w->pool, ss->pool, MMDB_POOL_MAX) ||
	    dup_str(&w->group, ss->group, MMDB_GROUP_MAX))
		return NSR_ERR_NOMEM;
	if (nd) {
		w->dependents.dependents_val = calloc(nd, sizeof(u_int));
		if (!w->dependents.dependents_val)
			return NSR_ERR_NOMEM;
		for (uint32_t i = 0; i < nd; i++)
			w->dependents.dependents_val[i] = ss->dependents[i];
		w->dependents.dependents_len = nd;
	}
	return NSR_OK;
}

/* mmdb_clnt_ss_from_wire - checked wire save set to record. */
int mmdb_clnt_ss_from_wire(const mm_saveset *w, struct mmdb_saveset *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (copy_str(ss->client, MMDB_CLIENT_MAX, w->client) ||
	    copy_str(ss->name, MMDB_SSNAME_MAX, w->name) ||
	    copy_str(ss->pool, MMDB_POOL_MAX, w->pool) ||
	    copy_str(ss->group, MMDB_GROUP_MAX, w->group))
		return NSR_ERR_INVAL;
	if (w->level > NSR_LEVEL_MAX ||
	    w->dependents.dependents_len > MMDB_PSS_MAX ||
	    (w->dependents.dependents_len && !w->dependents.dependents_val))
		return NSR_ERR_INVAL;
	ss->ssid = w->ssid;
	memcpy(ss->longid, w->longid, sizeof(ss->longid));
	ss->level = (uint8_t)w->level;
	ss->flags = w->flags;
	ss->savetime = w->savetime;
	ss->sscreate = w->sscreate;
	ss->sscomp = w->sscomp;
	ss->ssbrowse = w->ssbrowse;
	ss->ssretent = w->ssretent;
	ss->totalsize = w->totalsize;
	ss->nfiles = w->nfiles;
	ss->pssid = w->pssid;
	ss->anchor_time = w->anchor_time;
	ss->ndependents = w->dependents.dependents_len;
	for (uint32_t i = 0; i < ss->ndependents; i++)
		ss->dependents[i] = w->dependents.dependents_val[i];
	return NSR_OK;
}

/* mmdb_clnt_frag_to_wire - fragment record to wire. */
void mmdb_clnt_frag_to_wire(const struct mmdb_fragment *f, mm_fragment *w)
{
	w->ssid = f->ssid;
	w->cloneid = f->cloneid;
	memcpy(w->volid, f->volid, sizeof(w->volid));
	w->seq = f->seq;
	w->ss_offset = f->ss_offset;
	w->size = f->size;
	w->file = f->file;
	w->record = f->record;
	w->offset = f->offset;
	w->flags = f->flags;
}

/* mmdb_clnt_frag_from_wire - wire fragment to record (all values valid). */
void mmdb_clnt_frag_from_wire(const mm_fragment *w, struct mmdb_fragment *f)
{
	memset(f, 0, sizeof(*f));
	f->ssid = w->ssid;
	f->cloneid = w->cloneid;
	memcpy(f->volid, w->volid, sizeof(f->volid));
	f->seq = w->seq;
	f->ss_offset = w->ss_offset;
	f->size = w->size;
	f->file = w->file;
	f->record = w->record;
	f->offset = w->offset;
	f->flags = w->flags;
}

/* mmdb_clnt_clone_to_wire - clone instance record to wire. */
void mmdb_clnt_clone_to_wire(const struct mmdb_clone *cl, mm_clone *w)
{
	w->ssid = cl->ssid;
	w->cloneid = cl->cloneid;
	w->clone_time = cl->clone_time;
	w->clretent = cl->clretent;
	w->flags = cl->flags;
}

/* mmdb_clnt_clone_from_wire - wire clone instance to record. */
void mmdb_clnt_clone_from_wire(const mm_clone *w, struct mmdb_clone *cl)
{
	memset(cl, 0, sizeof(*cl));
	cl->ssid = w->ssid;
	cl->cloneid = w->cloneid;
	cl->clone_time = w->clone_time;
	cl->clretent = w->clretent;
	cl->flags = w->flags;
}

/* mmdb_clnt_row_to_wire - save set row to wire (strings allocated; a row
 * without a volume still carries an empty volume, XDR needs its strings). */
int mmdb_clnt_row_to_wire(const struct mmdb_ss_row *r, mm_row *w)
{
	static const struct mmdb_volume novol;
	int rc;

	rc = mmdb_clnt_ss_to_wire(&r->ss, &w->ss);
	if (rc)
		return rc;
	mmdb_clnt_clone_to_wire(&r->clone, &w->clone);
	w->copies = r->copies;
	w->has_volume = r->has_volume ? TRUE : FALSE;
	rc = mmdb_clnt_vol_to_wire(r->has_volume ? &r->vol : &novol, &w->vol);
	if (rc)
		return rc;
	w->frag_flags = r->frag_flags;
	w->sumsize = r->sumsize;
	w->first_file = r->first_file;
	w->first_record = r->first_record;
	return NSR_OK;
}

/* mmdb_clnt_row_from_wire - checked wire row to record. */
int mmdb_clnt_row_from_wire(const mm_row *w, struct mmdb_ss_row *r)
{
	int rc;

	memset(r, 0, sizeof(*r));
	rc = mmdb_clnt_ss_from_wire(&w->ss, &r->ss);
	if (rc)
		return rc;
	mmdb_clnt_clone_from_wire(&w->clone, &r->clone);
	r->copies = w->copies;
	r->has_volume = w->has_volume ? 1 : 0;
	if (r->has_volume) {
		rc = mmdb_clnt_vol_from_wire(&w->vol, &r->vol);
		if (rc)
			return rc;
	}
	r->frag_flags = w->frag_flags;
	r->sumsize = w->sumsize;
	r->first_file = w->first_file;
	r->first_record = w->first_record;
	return NSR_OK;
}
