/*
 * media.c - volume operations nsrd performs for nsrmm: label, mount,
 * unmount, volume modes and deletion.  The device's data mover does the
 * I/O; nsrd keeps the media database and the device resource (which
 * volume is mounted) in step with what is on the medium.
 */
#include "nsr/compat.h"

#include <ctype.h>
#include <time.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/host.h"
#include "nsr/index_clnt.h"
#include "nsr/log.h"
#include "nsr/mmd_clnt.h"
#include "nsr/mmdb_clnt.h"
#include "nsr/size.h"
#include "nsr/vol.h"
#include "nsr/xmalloc.h"
#include "devcache.h"
#include "nsrd.h"

/* A save set with a fragment on a volume, and its client. */
struct vol_ss {
	uint32_t ssid;
	uint32_t file; /* its first session file (fragment) on the volume */
	uint32_t copies; /* its clone instances (one row each on the volume
			    that holds a fragment of it) */
	char client[MMDB_CLIENT_MAX + 1];
};

/* find_device - the device resource named name, or the only one there is. */
static const struct nsr_res *find_device(struct nsrd *n, const char *name,
					 nsr_status *st)
{
	struct nsr_res *q = nsr_res_new();
	const struct nsr_res *dev = NULL;
	long i, j;

	nsr_res_set1(q, "type", "NSR device");
	if (name && *name)
		nsr_res_set1(q, "name", name);
	i = nsr_resdb_find(n->res, q, 0);
	j = i >= 0 ? nsr_resdb_find(n->res, q, (size_t)i + 1) : -1;
	if (i < 0)
		nsr_status_set(st, NSR_ERR_NOTFOUND,
			       name && *name ? "no device '%s' is configured "
					       "(create an NSR device "
					       "resource with nsradmin)"
					     : "%sno device is configured "
					       "(create an NSR device resource "
					       "with nsradmin)",
			       name ? name : "");
	else if (j >= 0 && !(name && *name))
		nsr_status_set(st, NSR_ERR_INVAL,
			       "several devices are configured: "
			       "name one with -f");
	else
		dev = nsr_resdb_at(n->res, (size_t)i);
	nsr_res_free(q);
	return dev;
}

/* set_mounted - record on device devname which volume (and pool) it holds
 * now; volume NULL = nothing mounted.  Looks the device up by name for
 * each change: a resdb update replaces the resource, so no pointer to it
 * survives the first one. */
static void set_mounted(struct nsrd *n, const char *devname, const char *volume,
			const char *pool)
{
	static const char *const attrs[] = {"volume name", "volume pool"};
	const char *vals[] = {volume, pool};

	devcache_vol_forget(NULL);
	for (size_t i = 0; i < NSR_ARRAY_SIZE(attrs); i++) {
		const struct nsr_res *dev =
			nsrd_res_find1(n, "NSR device", devname);

		if (dev)
			nsrd_res_set_attr(n, dev, attrs[i], vals[i]);
	}
}

/* One field of a label template: a literal, or a range of numbers
 * ("001-999": zero-padded to the width of its first bound) or letters
 * ("a-z"). */
struct tfield {
	const char *lit; /* NULL for a range */
	long lo, hi;
	int width, letters;
};

/* parse_field - classify one "fields" value. */
static void parse_field(const char *v, struct tfield *f)
{
	const char *dash = strchr(v, '-');
	char *end;

	memset(f, 0, sizeof(*f));
	f->lit = v;
	if (!dash || dash == v || !dash[1])
		return;
	if (dash - v == 1 && strlen(dash + 1) == 1 &&
	    isalpha((unsigned char)v[0]) && isalpha((unsigned char)dash[1]) &&
	    v[0] <= dash[1]) {
		f->lit = NULL;
		f->letters = 1;
		f->lo = v[0];
		f->hi = dash[1];
		return;
	}
	f->lo = strtol(v, &end, 10);
	if (end != dash || !isdigit((unsigned char)v[0]))
		return;
	f->hi = strtol(dash + 1, &end, 10);
	if (*end || f->hi < f->lo)
		return;
	f->lit = NULL;
	f->width = (int)(dash - v);
}

/* template_name - the idx-th name of the template (odometer order, the
 * last field fastest): 1, or 0 past the end or if it does not fit. */
static int template_name(const struct tfield *f, size_t n, const char *sep,
			 unsigned long idx, char *out, size_t len)
{
	unsigned long digit[32];
	size_t used = 0;

	/* The digits of idx in the mixed radix of the ranges. */
	for (size_t i = n; i-- > 0;) {
		unsigned long span =
			f[i].lit ? 1 : (unsigned long)(f[i].hi - f[i].lo + 1);

		digit[i] = idx % span;
		idx /= span;
	}
	if (idx)
		return 0;
	out[0] = '\0';
	for (size_t i = 0; i < n && used < len; i++) {
		const char *s = i ? sep : "";

		if (f[i].lit)
			used += (size_t)snprintf(out + used, len - used, "%s%s",
						 s, f[i].lit);
		else if (f[i].letters)
			used += (size_t)snprintf(
				out + used, len - used, "%s%c", s,
				(char)(f[i].lo + (long)digit[i]));
		else
			used += (size_t)snprintf(out + used, len - used,
						 "%s%0*ld", s, f[i].width,
						 f[i].lo + (long)digit[i]);
	}
	return used < len;
}

#define NAMES_MAX 100000UL /* names a template is tried for */

/* name_index - the index of name among the template's names, or 0 if
 * it is none of them (names only: no question asked). */
static unsigned long name_index(const struct tfield *f, size_t nf,
				const char *sep, const char *name, char *buf,
				size_t len)
{
	for (unsigned long idx = 0; name && *name && idx < NAMES_MAX; idx++) {
		if (!template_name(f, nf, sep, idx, buf, len))
			break;
		if (strcmp(buf, name) == 0)
			return idx;
	}
	return 0;
}

/* next_volume_name - a new volume name for pool: the first name of the
 * pool's label template (NSR label: fields, separator) from its "next"
 * on (then from its first name up to there) that the media database
 * does not hold, recorded as the template's new "next"; without a
 * template, "<pool>.NNN" from .001.  Starting from "next" asks the media
 * database about one name per label, not about every volume the
 * template has named so far. */
static int next_volume_name(struct nsrd *n, struct mmdb_clnt *mc,
			    const char *pool, char *out, size_t len)
{
	const struct nsr_res *p = nsrd_res_find1(n, "NSR pool", pool);
	const char *tname = p ? nsr_res_get(p, "label template") : NULL;
	const struct nsr_res *t =
		tname && *tname ? nsrd_res_find1(n, "NSR label", tname) : NULL;
	const char *sep;
	struct tfield f[32];
	struct mmdb_volume v;
	unsigned long start;
	size_t nf = 0;
	long fi;

	if (t && (fi = nsr_res_find(t, "fields")) >= 0)
		for (size_t i = 0;
		     i < nsr_res_attr_nvalues(t, (size_t)fi) && nf < 32; i++)
			parse_field(nsr_res_attr_value(t, (size_t)fi, i),
				    &f[nf++]);
	if (!nf) {
		f[0].lit = pool;
		f[1].lit = NULL;
		f[1].lo = 1;
		f[1].hi = 999;
		f[1].width = 3;
		f[1].letters = 0;
		nf = 2;
		t = NULL;
	}
	sep = t && nsr_res_get(t, "separator") ? nsr_res_get(t, "separator")
					       : ".";
	start = t ? name_index(f, nf, sep, nsr_res_get(t, "next"), out, len)
		  : 0;
	/* From "next" to the last name, then from the first up to it. */
	for (int pass = 0; pass < 2; pass++) {
		unsigned long from = pass ? 0 : start;
		unsigned long to = pass ? start : NAMES_MAX;

		for (unsigned long idx = from; idx < to; idx++) {
			char nxt[MMDB_VOLNAME_MAX + 1];

			if (!template_name(f, nf, sep, idx, out, len))
				break;
			if (mmdb_clnt_vol_get(mc, out, &v) != NSR_ERR_NOTFOUND)
				continue;
			/* Record what comes next, as NetWorker shows it. */
			if (t && template_name(f, nf, sep, idx + 1, nxt,
					       sizeof(nxt)))
				nsrd_res_set_attr(n, t, "next", nxt);
			return NSR_OK;
		}
	}
	return NSR_ERR_LIMIT;
}

/* connect_mover - the device's mover, or a status. */
static struct nsr_mmd *connect_mover(struct nsrd *n, const struct nsr_res *dev,
				     nsr_status *st)
{
	struct nsr_mmd *m = NULL;
	struct nsr_buf err;
	char host[NSR_HOST_MAX + 1];
	int port;

	nsr_buf_init(&err, 0);
	if (nsrd_device_mover(n, dev, host, sizeof(host), &port, NULL, &err) !=
		    NSR_OK ||
	    nsr_mmd_connect(host[0] ? host : "localhost", port, &m, &err) !=
		    NSR_OK) {
		nsr_status_set(st, NSR_ERR_CONNECT,
			       "cannot reach the data mover of device "
			       "'%s': %s",
			       nsr_res_get(dev, "name"), err.data);
		m = NULL;
	}
	nsr_buf_release(&err);
	return m;
}

/* fill_label_res - the reply of LABEL/MOUNT. */
static void fill_label_res(label_res *r, const struct nsr_vol_label *lab,
			   const char *device)
{
	free(r->volume);
	free(r->pool);
	free(r->device);
	free(r->media_type);
	r->volume = nsr_rpc_str(lab->name);
	memcpy(r->volid, lab->volid, 16);
	r->pool = nsr_rpc_str(lab->pool);
	r->device = nsr_rpc_str(device);
	r->block_size = lab->block_size;
	r->media_type = nsr_rpc_str(lab->media_type);
}

/* init_label_res - every string set, as XDR requires. */
static void init_label_res(label_res *r)
{
	r->volume = nsr_rpc_str("");
	r->pool = nsr_rpc_str("");
	r->device = nsr_rpc_str("");
	r->media_type = nsr_rpc_str("");
}

/* other_copy - does save set ssid have a clone instance none of whose
 * fragments is on volume volid (a copy that survives its relabel)?  When
 * its fragments cannot be read, say yes: the save set then stays in the
 * media database (a record too many), where a no would delete the
 * records of copies that may survive. */
static int other_copy(struct mmdb_clnt *mc, uint32_t ssid,
		      const uint8_t volid[16])
{
	struct mmdb_fragment fr[MMDB_FRAGS_MAX];
	size_t nf = 0;
	int rc = mmdb_clnt_frag_list(mc, ssid, fr, NSR_ARRAY_SIZE(fr), &nf);

	if (rc == NSR_ERR_NOTFOUND)
		return 0; /* gone already */
	if (rc != NSR_OK) {
		nsr_warn("save set %u: cannot list its fragments (%s); it "
			 "stays in the media database", ssid,
			 mmdb_clnt_errmsg(mc));
		return 1;
	}
	for (size_t i = 0; i < nf; i++) {
		int on = 0;

		for (size_t j = 0; j < nf && !on; j++)
			on = fr[j].cloneid == fr[i].cloneid &&
			     memcmp(fr[j].volid, volid, 16) == 0;
		if (!on)
			return 1;
	}
	return 0;
}

/* vol_ssids - the save sets with a fragment on volume name, sorted by
 * the query (an ssid may repeat), with their clients: *out (free it),
 * *count.  NSR_OK or the media database's error. */
static int vol_ssids(struct nsrd *n, const char *name, struct vol_ss **out,
		     size_t *count)
{
	struct mmdb_clnt *mc = n->mmdb;
	struct mmdb_ss_row rows[64];
	struct vol_ss *v = NULL, *nv;
	size_t nv_n = 0, cap = 0, got = 0;
	char q[MMDB_VOLNAME_MAX + 16];
	int done = 0, rc;

	snprintf(q, sizeof(q), "volume=%s", name);
	rc = mmdb_clnt_query_open(mc, q, 0, 0);
	while (rc == NSR_OK && !done) {
		rc = mmdb_clnt_query_next_rows(mc, rows, NSR_ARRAY_SIZE(rows),
					       &got, &done);
		for (size_t i = 0; rc == NSR_OK && i < got; i++) {
			if (nv_n == cap) {
				cap = cap ? cap * 2 : 64;
				nv = realloc(v, cap * sizeof(*v));
				if (!nv) {
					rc = NSR_ERR_NOMEM;
					break;
				}
				v = nv;
			}
			v[nv_n].ssid = rows[i].ss.ssid;
			v[nv_n].file = rows[i].has_volume ? rows[i].first_file
							  : 0;
			v[nv_n].copies = rows[i].copies;
			snprintf(v[nv_n].client, sizeof(v[nv_n].client), "%s",
				 rows[i].ss.client);
			nv_n++;
		}
		if (got == 0)
			break;
	}
	if (rc != NSR_OK) {
		free(v);
		v = NULL;
		nv_n = 0;
	}
	*out = v;
	*count = nv_n;
	return rc;
}

/* by_client - order of save sets by client, then ssid. */
static int by_client(const void *a, const void *b)
{
	const struct vol_ss *x = a, *y = b;
	int c = strcmp(x->client, y->client);

	if (c)
		return c;
	return x->ssid < y->ssid ? -1 : x->ssid > y->ssid;
}

/* drop_index_entries - the file index entries of the save sets
 * d[0..nd) of volume vol (what: relabel or deletion) go, one
 * IX_DELETE_MANY per client (one catalogue replacement each, where one
 * request per save set rewrote the catalogue every time); a failure
 * is logged (nsrck -X removes what stays).  d is sorted here. */
static void drop_index_entries(struct nsrd *n, struct vol_ss *d, size_t nd,
			       const char *what, const char *vol)
{
	uint64_t *ids = nsr_xcalloc(nd + 1, sizeof(*ids));

	qsort(d, nd, sizeof(*d), by_client);
	for (size_t i = 0, j; i < nd; i = j) {
		size_t k = 0, done = 0;

		for (j = i; j < nd && strcmp(d[j].client, d[i].client) == 0;
		     j++)
			ids[k++] = d[j].ssid;
		if (nsr_ixclnt_delete_many(n->ix, d[i].client, ids, k, &done,
					   NULL) != NSR_OK)
			nsr_warn("%zu save set(s) (%s of volume %s) leave the "
				 "media database, but their index entries of "
				 "client %s remain until nsrindexd answers: %s",
				 k - done, what, vol, d[i].client,
				 nsr_ixclnt_errmsg(n->ix));
	}
	free(ids);
}

/* drop_only_copies - volume old is destroyed (relabeled) or deleted
 * (what says which, for the log): the save sets whose only copy was on
 * it leave the media database and the file index (mminfo never lists a
 * save set that cannot come back).  Repeatable (under the label's or
 * the delete's intent): NSR_OK, or the media database's error. */
static int drop_only_copies(struct nsrd *n, const struct mmdb_volume *old,
			    const char *what)
{
	struct mmdb_clnt *mc = n->mmdb;
	struct vol_ss *v = NULL, *d;
	size_t nv_n = 0, nd = 0, dropped = 0;
	uint32_t *ids;
	int rc = vol_ssids(n, old->name, &v, &nv_n);

	d = nsr_xcalloc(nv_n + 1, sizeof(*d));
	for (size_t i = 0, j; rc == NSR_OK && i < nv_n; i = j) {
		/* v[i..j): its rows, one per clone instance with a fragment
		 * here; only when it has more instances than that can one
		 * survive, which its fragments then say (one query each,
		 * where every save set was asked before). */
		for (j = i + 1; j < nv_n && v[j].ssid == v[i].ssid; j++)
			;
		if (j - i < v[i].copies &&
		    other_copy(mc, v[i].ssid, old->volid))
			continue;
		d[nd++] = v[i];
	}
	/* The index entries first (none: browse expired), then the media
	 * database: a crash between leaves save sets the intent's replay
	 * finds on the volume again (their index entries then not found),
	 * never index entries of save sets that are gone. */
	drop_index_entries(n, d, nd, what, old->name);
	/* One transaction per MM_DELETE_MANY_MAX save sets, where one
	 * each synced every time: a crash between two leaves the rest on
	 * the volume for the replay, as above. */
	ids = nsr_xcalloc(nd + 1, sizeof(*ids));
	for (size_t i = 0; i < nd; i++)
		ids[i] = d[i].ssid;
	if (rc == NSR_OK)
		rc = mmdb_clnt_ss_delete_many(mc, ids, nd, NULL, &dropped);
	free(ids);
	free(d);
	free(v);
	if (rc == NSR_OK && dropped)
		nsr_info("%s of volume %s: %zu save set(s) whose only copy "
			 "was on it removed from the media database and the "
			 "file index", what, old->name, dropped);
	return rc;
}

/* device_capacity - device devname's volume default capacity in bytes,
 * 0 when it has none (or it does not parse: nsrd_device_mover says so). */
static uint64_t device_capacity(struct nsrd *n, const char *devname)
{
	nsr_status st;
	const struct nsr_res *dev;
	uint64_t c = 0;

	memset(&st, 0, sizeof(st));
	dev = find_device(n, devname, &st);
	free(st.msg);
	if (dev)
		(void)nsrd_device_capacity(dev, &c); /* 0 when it fails */
	return c;
}

/* record_label - the medium in device devname holds lab: give the media
 * database its record (replacing an older volume of that name) and show
 * it mounted on the device.  Repeatable: a record with lab's volume id
 * is kept.  NSR_OK or the media database's error. */
static int record_label(struct nsrd *n, const char *devname,
			const struct nsr_vol_label *lab)
{
	struct mmdb_clnt *mc = n->mmdb;
	struct mmdb_volume old, vol;
	int rc, had_old;

	rc = mmdb_clnt_vol_get(mc, lab->name, &old);
	if (rc != NSR_OK && rc != NSR_ERR_NOTFOUND)
		return rc;
	had_old = rc == NSR_OK;
	if (had_old && memcmp(old.volid, lab->volid, 16) == 0)
		goto mounted;
	if (had_old) {
		rc = drop_only_copies(n, &old, "relabel");
		if (rc != NSR_OK)
			return rc;
		rc = mmdb_clnt_vol_delete(mc, lab->name);
		if (rc != NSR_OK && rc != NSR_ERR_NOTFOUND)
			return rc;
	}
	memset(&vol, 0, sizeof(vol));
	snprintf(vol.name, sizeof(vol.name), "%s", lab->name);
	memcpy(vol.volid, lab->volid, 16);
	snprintf(vol.pool, sizeof(vol.pool), "%s", lab->pool);
	snprintf(vol.type, sizeof(vol.type), "%s", lab->media_type);
	snprintf(vol.device, sizeof(vol.device), "%s", devname);
	vol.block_size = lab->block_size;
	vol.capacity = device_capacity(n, devname); /* mminfo's (%) */
	vol.olabel = had_old ? old.olabel : lab->created;
	vol.labeled = lab->created;
	vol.recycled = had_old ? old.recycled + 1 : 0;
	vol.mounts = 1;
	rc = mmdb_clnt_vol_put(mc, &vol);
	if (rc != NSR_OK)
		return rc;
mounted:
	set_mounted(n, devname, lab->name, lab->pool);
	return NSR_OK;
}

/* label_settle - after a label of volume in device devname begun at t0
 * whose outcome nsrd did not see (the mover or nsrd died, or the reply
 * was lost): the medium says.  1 = labeled and now recorded (*lab), 0 =
 * the label did not happen, -1 = cannot tell yet (mover or media
 * database away).  A mover that died halfway finishes the relabel when
 * it starts again (nsr_vol_label_resume), before it answers. */
static int label_settle(struct nsrd *n, const char *devname,
			const char *volume, time_t t0,
			struct nsr_vol_label *lab)
{
	const struct nsr_res *dev = nsrd_res_find1(n, "NSR device", devname);
	struct nsr_mmd *m;
	struct nsr_buf err;
	nsr_status st;
	int rc, ret = -1;

	if (!dev)
		return 0; /* the device is gone: nothing to finish */
	memset(&st, 0, sizeof(st));
	nsr_buf_init(&err, 0);
	m = connect_mover(n, dev, &st);
	rc = m ? nsr_mmd_read_label(m, lab, NULL, &err) : NSR_ERR_CONNECT;
	nsr_mmd_close(m);
	if (rc == NSR_ERR_EOD || rc == NSR_ERR_NOTFOUND ||
	    (rc == NSR_OK && (strcmp(lab->name, volume) != 0 ||
			      lab->created + 2 < t0)))
		ret = 0; /* unlabeled, or another (older) label */
	else if (rc == NSR_OK)
		ret = record_label(n, devname, lab) == NSR_OK ? 1 : -1;
	xdr_free(NSR_XDR(xdr_nsr_status), (char *)&st);
	nsr_buf_release(&err);
	return ret;
}

/* label_line - the intent line of a label: "t0 TAB device TAB volume". */
static void label_line(char *out, size_t len, time_t t0, const char *dev,
		       const char *volume)
{
	snprintf(out, len, "%lld\t%s\t%s", (long long)t0, dev, volume);
}

/* nsrd_label_finish - from the tick: settle a label a crash left open
 * (line as label_line made it).  0 = settled, -1 = try again later. */
int nsrd_label_finish(struct nsrd *n, const char *line)
{
	struct nsr_vol_label lab;
	char dev[256], vol[MMDB_VOLNAME_MAX + 1];
	long long t0;
	int got;

	if (sscanf(line, "%lld\t%255[^\t]\t%64[^\t\n]", &t0, dev, vol) != 3)
		return 0;
	got = label_settle(n, dev, vol, (time_t)t0, &lab);
	if (got > 0)
		nsr_info("labeled volume %s (pool %s) on device %s: the "
			 "label was made before a failure and is now "
			 "recorded", lab.name, lab.pool, dev);
	else if (got == 0)
		nsr_info("volume %s on device %s: the label cut short by a "
			 "failure did not happen", vol, dev);
	return got < 0 ? -1 : 0;
}

/* nsrd_label - LABEL: label the volume in a device (nsrmm -l).  The
 * label goes under an intent record, so a failure of nsrd, the mover or
 * the media database between the medium and the record is settled by
 * the tick (nsrd_label_finish): labeled completely or not at all. */
int nsrd_label(void *ctx, void *argp, void *resp, struct nsr_rpc_call *call)
{
	struct nsrd *n = ctx;
	label_args *a = argp;
	label_res *r = resp;
	const struct nsr_res *dev;
	struct mmdb_clnt *mc = NULL;
	struct nsr_mmd *m = NULL;
	struct mmdb_volume old;
	struct nsr_vol_label lab;
	struct nsr_buf err;
	const char *pool = a->pool[0] ? a->pool : "Default";
	char name[MMDB_VOLNAME_MAX + 1], devname[256], line[512];
	time_t t0;
	uint32_t bs;
	int rc, got;

	NSR_UNUSED(call);
	init_label_res(r);
	nsr_buf_init(&err, 0);
	dev = find_device(n, a->device, &r->st);
	if (!dev)
		goto out;
	snprintf(devname, sizeof(devname), "%s", nsr_res_get(dev, "name"));
	if (!nsrd_res_find1(n, "NSR pool", pool)) {
		nsr_status_set(&r->st, NSR_ERR_NOTFOUND,
			       "pool '%s' does not exist", pool);
		goto out;
	}
	bs = a->block_size;
	if (!bs) {
		const char *dbs = nsr_res_get(dev, "device block size");
		long long v = 0;

		/* "handler default" (NetWorker's value) = the default. */
		if (dbs && *dbs && strcasecmp(dbs, "handler default") != 0 &&
		    (nsr_size_parse(dbs, &v) != NSR_OK || v <= 0 ||
		     v > UINT32_MAX)) {
			nsr_status_set(&r->st, NSR_ERR_INVAL, "device %s: "
				       "device block size '%s' is not a size "
				       "(e.g. 256 KB); fix it with nsradmin",
				       devname, dbs);
			goto out;
		}
		bs = v ? (uint32_t)v : NSR_VOL_BLOCK_DEFAULT;
	}
	if (nsr_vol_block_size_check(bs, 0, &err) != NSR_OK) {
		nsr_status_set(&r->st, NSR_ERR_INVAL, "%s", err.data);
		goto out;
	}
	mc = n->mmdb;
	if (a->volume[0])
		snprintf(name, sizeof(name), "%s", a->volume);
	else if (next_volume_name(n, mc, pool, name, sizeof(name)) != NSR_OK) {
		nsr_status_set(&r->st, NSR_ERR_LIMIT,
			       "no free volume name left in the "
			       "label template of pool '%s'",
			       pool);
		goto out;
	}
	if (mmdb_clnt_vol_get(mc, name, &old) == NSR_OK && !a->force) {
		nsr_status_set(&r->st, NSR_ERR_EXISTS,
			       "volume %s is already in the media "
			       "database (%llu bytes written); relabeling "
			       "makes its save sets "
			       "unrecoverable: use -y to relabel it anyway",
			       name, (unsigned long long)old.written);
		goto out;
	}
	t0 = time(NULL);
	label_line(line, sizeof(line), t0, devname, name);
	if (nsrd_intent_add(n, "label", line) != NSR_OK) {
		nsr_status_set(&r->st, NSR_ERR_IO, "cannot label device '%s': "
			       "nsrd cannot write its intent record (see "
			       "the log)", devname);
		goto out;
	}
	m = connect_mover(n, dev, &r->st);
	if (!m) {
		nsrd_intent_drop(n, "label", line);
		goto out;
	}
	rc = nsr_mmd_label(m, name, pool, bs, a->force, &lab, &err);
	nsr_mmd_close(m);
	m = NULL;
	if (rc != NSR_OK) {
		/* The label may be made with its reply lost: ask the medium. */
		got = label_settle(n, devname, name, t0, &lab);
		if (got == 0) {
			nsrd_intent_drop(n, "label", line);
			nsr_status_set(&r->st, NSR_ERR_IO,
				       "cannot label device "
				       "'%s': %s",
				       devname, err.data);
			goto out;
		}
		if (got < 0) {
			nsr_status_set(
				&r->st, NSR_ERR_IO,
				"labeling volume %s "
				"on device '%s' was cut short (%s); nsrd "
				"finishes it, or finds it did not "
				"happen, once the data mover and the "
				"media database answer again (see "
				"mminfo -m)",
				name, devname, err.data);
			goto out;
		}
	} else if (record_label(n, devname, &lab) != NSR_OK) {
		nsr_status_set(&r->st, NSR_ERR_IO, "volume %s was labeled but "
			       "the media database did not record it: %s; nsrd "
			       "records it once the media database answers "
			       "again", name, mmdb_clnt_errmsg(mc));
		goto out;
	}
	nsrd_intent_drop(n, "label", line);
	fill_label_res(r, &lab, devname);
	nsr_status_set(&r->st, NSR_OK, "%s", "");
	nsr_info("labeled volume %s (pool %s, block size %u) on device %s",
		 lab.name, lab.pool, lab.block_size, devname);
out:
	nsr_mmd_close(m);
	nsr_buf_release(&err);
	return NSR_OK;
}

/* nsrd_mount - MOUNT: read the label of a device's volume and record it
 * mounted. */
int nsrd_mount(void *ctx, void *argp, void *resp, struct nsr_rpc_call *call)
{
	struct nsrd *n = ctx;
	label_args *a = argp;
	label_res *r = resp;
	const struct nsr_res *dev;
	struct mmdb_clnt *mc = NULL;
	struct nsr_mmd *m = NULL;
	struct nsr_vol_label lab;
	struct mmdb_volume vol;
	struct nsr_buf err;
	int has_data = 0;
	char devname[256];

	NSR_UNUSED(call);
	init_label_res(r);
	nsr_buf_init(&err, 0);
	dev = find_device(n, a->device, &r->st);
	if (!dev)
		goto out;
	snprintf(devname, sizeof(devname), "%s", nsr_res_get(dev, "name"));
	m = connect_mover(n, dev, &r->st);
	if (!m)
		goto out;
	if (nsr_mmd_read_label(m, &lab, &has_data, &err) != NSR_OK) {
		nsr_status_set(&r->st, NSR_ERR_NOTFOUND,
			       "cannot mount device '%s': %s", devname,
			       err.data);
		goto out;
	}
	if (a->volume[0] && strcmp(a->volume, lab.name) != 0) {
		nsr_status_set(&r->st, NSR_ERR_MISMATCH,
			       "device '%s' holds volume %s, "
			       "not %s",
			       devname, lab.name, a->volume);
		goto out;
	}
	mc = n->mmdb;
	if (mmdb_clnt_vol_get(mc, lab.name, &vol) != NSR_OK ||
	    memcmp(vol.volid, lab.volid, 16) != 0) {
		nsr_status_set(&r->st, NSR_ERR_NOTFOUND,
			       "volume %s on device '%s' is not "
			       "in the media database (or was relabeled "
			       "elsewhere); add it "
			       "with: scanner -m %s",
			       lab.name, devname, devname);
		goto out;
	}
	snprintf(vol.device, sizeof(vol.device), "%s", devname);
	vol.mounts++;
	mmdb_clnt_vol_put(mc, &vol);
	set_mounted(n, devname, lab.name, lab.pool);
	fill_label_res(r, &lab, devname);
	nsr_status_set(&r->st, NSR_OK, "%s", "");
	nsr_info("mounted volume %s on device %s", lab.name, devname);
out:
	nsr_mmd_close(m);
	nsr_buf_release(&err);
	return NSR_OK;
}

/* nsrd_unmount - UNMOUNT: forget which volume a device holds. */
int nsrd_unmount(void *ctx, void *argp, void *resp, struct nsr_rpc_call *call)
{
	struct nsrd *n = ctx;
	label_args *a = argp;
	nsr_void_res *r = resp;
	const struct nsr_res *dev = find_device(n, a->device, &r->st);
	char devname[256];

	NSR_UNUSED(call);
	if (!dev)
		return NSR_OK;
	snprintf(devname, sizeof(devname), "%s", nsr_res_get(dev, "name"));
	set_mounted(n, devname, NULL, NULL);
	nsr_status_set(&r->st, NSR_OK, "%s", "");
	nsr_info("unmounted device %s", devname);
	return NSR_OK;
}

/* Volume modes nsrmm -o accepts: flag and whether it is set. */
static const struct {
	const char *name;
	uint32_t flag;
	int set;
} modes[] = {
	{"full", MMDB_VOL_FULL, 1},
	{"notfull", MMDB_VOL_FULL, 0},
	{"readonly", MMDB_VOL_READONLY, 1},
	{"notreadonly", MMDB_VOL_READONLY, 0},
	{"recyclable", MMDB_VOL_RECYCLABLE, 1},
	{"notrecyclable", MMDB_VOL_RECYCLABLE, 0},
	{"manual", MMDB_VOL_MANUAL, 1},
	{"notmanual", MMDB_VOL_MANUAL, 0},
};

/* nsrd_vol_mode - VOL_MODE: set or clear a volume flag (nsrmm -o). */
int nsrd_vol_mode(void *ctx, void *argp, void *resp, struct nsr_rpc_call *call)
{
	vol_mode_args *a = argp;
	nsr_void_res *r = resp;
	struct mmdb_clnt *mc = NULL;
	struct mmdb_volume vol;
	struct nsr_buf err;
	size_t i;

	NSR_UNUSED(call);
	nsr_buf_init(&err, 0);
	for (i = 0; i < NSR_ARRAY_SIZE(modes); i++)
		if (strcmp(modes[i].name, a->mode) == 0)
			break;
	if (i == NSR_ARRAY_SIZE(modes)) {
		nsr_status_set(&r->st, NSR_ERR_INVAL,
			       "unknown mode '%s' (use full, notfull, "
			       "readonly, notreadonly, recyclable, "
			       "notrecyclable, manual, "
			       "notmanual)",
			       a->mode);
		goto out;
	}
	mc = ((struct nsrd *)ctx)->mmdb;
	if (mmdb_clnt_vol_get(mc, a->volume, &vol) != NSR_OK) {
		nsr_status_set(&r->st, NSR_ERR_NOTFOUND,
			       "no volume %s in the media database", a->volume);
		goto out;
	}
	if (modes[i].set)
		vol.flags |= modes[i].flag;
	else
		vol.flags &= ~modes[i].flag;
	if (mmdb_clnt_vol_put(mc, &vol) != NSR_OK) {
		nsr_status_set(&r->st, NSR_ERR_IO,
			       "cannot change volume %s: %s", a->volume,
			       mmdb_clnt_errmsg(mc));
		goto out;
	}
	devcache_vol_forget(a->volume);
	nsr_status_set(&r->st, NSR_OK, "%s", "");
	nsr_info("volume %s marked %s", a->volume, a->mode);
out:
	nsr_buf_release(&err);
	return NSR_OK;
}

/* free_unrecorded - a save set without fragments (aborted, or its
 * mover died before it recorded one) may still have a session file on an
 * AFTD: ask the mover of every mounted AFTD to remove it.  Best effort. */
static void free_unrecorded(struct nsrd *n, uint32_t ssid)
{
	struct nsr_res *q = nsr_res_new();
	struct nsr_buf err;
	nsr_status st;
	long k = -1;

	nsr_buf_init(&err, 0);
	memset(&st, 0, sizeof(st));
	nsr_res_set1(q, "type", "NSR device");
	nsr_res_set1(q, "media type", "adv_file");
	while ((k = nsr_resdb_find(n->res, q, (size_t)(k + 1))) >= 0) {
		const struct nsr_res *dev = nsr_resdb_at(n->res, (size_t)k);
		const char *vol = nsr_res_get(dev, "volume name");
		struct nsr_mmd *m;
		uint32_t files = 0;

		if (!vol || !*vol)
			continue;
		m = connect_mover(n, dev, &st);
		nsr_buf_reset(&err);
		if (!m ||
		    nsr_mmd_ss_remove(m, &ssid, NULL, 1, &files, NULL, &err) !=
			      NSR_OK)
			nsr_warn("save set %u: cannot look for its data on "
				 "volume %s: %s", ssid, vol,
				 m ? err.data : st.msg ? st.msg : "");
		else if (files > 0)
			nsr_info("save set %u: %u unrecorded session file(s) "
				 "removed from volume %s", ssid, files, vol);
		nsr_mmd_close(m);
		xdr_free(NSR_XDR(xdr_nsr_status), (char *)&st);
		memset(&st, 0, sizeof(st));
	}
	nsr_res_free(q);
	nsr_buf_release(&err);
}

/* free_ss_space - before a save set's record goes: have the mover of each
 * mounted AFTD volume holding its fragments remove their bytes (the
 * media database takes them off the volume's written figure with the
 * record, MM_SS_DELETE).  Non-zero (st set) if a mover could not; the
 * record is then kept, so the delete can be finished later. */
static int free_ss_space(struct nsrd *n, struct mmdb_clnt *mc, uint32_t ssid,
			 uint32_t cloneid, nsr_status *st)
{
	struct mmdb_fragment fr[MM_FRAGS_MAX];
	struct mmdb_volume vol;
	struct nsr_buf err;
	size_t nf = 0;
	int ret = 0;

	if (mmdb_clnt_frag_list(mc, ssid, fr, NSR_ARRAY_SIZE(fr), &nf) !=
	    NSR_OK || nf == 0) {
		if (!cloneid)
			free_unrecorded(n, ssid);
		return 0;
	}
	if (cloneid) { /* one copy only: not a volume of another one */
		size_t k = 0;

		for (size_t i = 0; i < nf; i++)
			if (fr[i].cloneid == cloneid)
				fr[k++] = fr[i];
		nf = k;
	}
	nsr_buf_init(&err, 0);
	for (size_t i = 0; i < nf && !ret; i++) {
		struct nsr_res *q;
		const struct nsr_res *dev = NULL;
		struct nsr_mmd *m;
		uint64_t bytes = 0;
		uint32_t files = 0, ids[MM_FRAGS_MAX], where[MM_FRAGS_MAX];
		size_t nw = 0;
		long k;
		int seen = 0;

		for (size_t j = 0; j < i; j++)
			seen |= memcmp(fr[j].volid, fr[i].volid, 16) == 0;
		/* Its session files on this volume, as recorded: the mover
		 * reads those, not every file of the volume. */
		for (size_t j = i; j < nf; j++)
			if (memcmp(fr[j].volid, fr[i].volid, 16) == 0) {
				ids[nw] = ssid;
				where[nw++] = fr[j].file;
			}
		if (seen ||
		    mmdb_clnt_vol_get_by_id(mc, fr[i].volid, &vol) != NSR_OK ||
		    strcmp(vol.type, "adv_file") != 0)
			continue;
		q = nsr_res_new();
		nsr_res_set1(q, "type", "NSR device");
		nsr_res_set1(q, "volume name", vol.name);
		k = nsr_resdb_find(n->res, q, 0);
		if (k >= 0)
			dev = nsr_resdb_at(n->res, (size_t)k);
		nsr_res_free(q);
		if (!dev) {
			nsr_warn("save set %u: volume %s is not mounted: its "
				 "bytes stay on it until it is relabeled", ssid,
				 vol.name);
			continue;
		}
		m = connect_mover(n, dev, st);
		nsr_buf_reset(&err);
		if (!m || nsr_mmd_ss_remove(m, ids, where, nw, &files, &bytes,
					    &err) != NSR_OK) {
			if (m)
				nsr_status_set(st, NSR_ERR_IO, "cannot remove "
					       "the data of save set %u from "
					       "volume %s: %s", ssid,
					       vol.name, err.data);
			ret = -1;
		} else if (files > 0) {
			nsr_info("save set %u: %llu bytes freed on volume %s",
				 ssid, (unsigned long long)bytes, vol.name);
		}
		nsr_mmd_close(m);
	}
	nsr_buf_release(&err);
	return ret;
}

/* delete_ss - a save set's bytes, record and index entries, in that
 * order, each step repeatable: 0 = done, 1 = gone but its index entries
 * remain (nsrindexd away), -1 = not done yet (st says why). */
static int delete_ss(struct nsrd *n, uint32_t ssid, const char *client,
		     nsr_status *st)
{
	struct mmdb_clnt *mc = n->mmdb;
	struct mmdb_saveset ss;
	int rc = mmdb_clnt_ss_get(mc, ssid, &ss);

	if (rc != NSR_OK && rc != NSR_ERR_NOTFOUND) {
		nsr_status_set(st, rc, "save set %u: the media database is "
			       "not available: %s", ssid,
			       mmdb_clnt_errmsg(mc));
		return -1;
	}
	if (rc == NSR_OK) {
		devcache_vol_forget(NULL); /* its volumes may not be full */
		if (free_ss_space(n, mc, ssid, 0, st) != 0)
			return -1;
		rc = mmdb_clnt_ss_delete(mc, ssid);
		if (rc != NSR_OK && rc != NSR_ERR_NOTFOUND) {
			nsr_status_set(st, rc, "cannot delete save set %u: %s",
				       ssid, mmdb_clnt_errmsg(mc));
			return -1;
		}
	}
	/* The file index entries go with the save set (none left: an
	 * earlier try removed them, or they expired with browse time). */
	rc = nsr_ixclnt_delete(n->ix, client, ssid);
	if (rc != NSR_OK && rc != NSR_ERR_NOTFOUND) {
		nsr_warn("save set %u deleted, but its index entries of "
			 "client %s remain until nsrindexd answers: %s", ssid,
			 client, nsr_ixclnt_errmsg(n->ix));
		return 1;
	}
	return 0;
}

/* delete_line - the intent line of a delete: "ssid TAB client". */
static void delete_line(char *out, size_t len, uint32_t ssid,
			const char *client)
{
	snprintf(out, len, "%u\t%s", ssid, client);
}

/* nsrd_delete_finish - from the tick: finish a save set delete a crash
 * or an absent peer cut short.  0 = done, -1 = try again later. */
int nsrd_delete_finish(struct nsrd *n, const char *line)
{
	char client[256];
	unsigned ssid;
	nsr_status st;
	int rc;

	if (sscanf(line, "%u\t%255[^\n]", &ssid, client) != 2)
		return 0;
	memset(&st, 0, sizeof(st));
	rc = delete_ss(n, ssid, client, &st);
	xdr_free(NSR_XDR(xdr_nsr_status), (char *)&st);
	if (rc == 0)
		nsr_info("save set %u: the delete cut short by a failure is "
			 "finished", ssid);
	return rc == 0 ? 0 : -1;
}

/* free_volume_space - volume vol is being deleted: have the mover of the
 * device it is mounted on (an AFTD) remove the session files of every
 * save set on it.  0 = done or nothing to do (not an AFTD, or not
 * mounted: then its bytes stay until it is relabeled), -1 = not done (st
 * says why; the volume record is kept). */
static int free_volume_space(struct nsrd *n, const struct mmdb_volume *vol,
			     const struct nsr_res *dev, nsr_status *st)
{
	struct vol_ss *v = NULL;
	uint32_t *ids = NULL, *where = NULL;
	size_t nv = 0, nid = 0;
	struct nsr_mmd *m = NULL;
	struct nsr_buf err;
	uint64_t total = 0;
	int rc, ret = -1;

	if (strcmp(vol->type, "adv_file") != 0)
		return 0;
	if (!dev) {
		nsr_warn("volume %s is not mounted: its bytes stay on its "
			 "device until it is relabeled", vol->name);
		return 0;
	}
	nsr_buf_init(&err, 0);
	rc = vol_ssids(n, vol->name, &v, &nv);
	if (rc != NSR_OK) {
		nsr_status_set(st, rc, "volume %s: the media database is not "
			       "available: %s", vol->name,
			       mmdb_clnt_errmsg(n->mmdb));
		goto out;
	}
	ids = calloc(nv ? nv : 1, sizeof(*ids));
	where = calloc(nv ? nv : 1, sizeof(*where));
	if (!ids || !where) {
		nsr_status_set(st, NSR_ERR_NOMEM, "volume %s: out of memory",
			       vol->name);
		goto out;
	}
	/* Each save set with the session file the media database has for
	 * it here: the mover reads those, not every file of the volume. */
	for (size_t i = 0; i < nv; i++)
		if (nid == 0 || ids[nid - 1] != v[i].ssid ||
		    where[nid - 1] != v[i].file) {
			ids[nid] = v[i].ssid;
			where[nid++] = v[i].file;
		}
	if (nid > 0 && !(m = connect_mover(n, dev, st)))
		goto out;
	for (size_t i = 0; i < nid; i += MMD_REMOVE_MAX) {
		size_t k = NSR_MIN(nid - i, (size_t)MMD_REMOVE_MAX);
		uint64_t bytes = 0;

		nsr_buf_reset(&err);
		if (nsr_mmd_ss_remove(m, ids + i, where + i, k, NULL, &bytes,
				      &err) != NSR_OK) {
			nsr_status_set(st, NSR_ERR_IO, "cannot remove the data "
				       "of volume %s: %s", vol->name,
				       err.data);
			goto out;
		}
		total += bytes;
	}
	if (nid > 0)
		nsr_info("volume %s: %llu bytes of %zu save set(s) freed on "
			 "its device before its deletion", vol->name,
			 (unsigned long long)total, nid);
	ret = 0;
out:
	nsr_mmd_close(m);
	free(ids);
	free(where);
	free(v);
	nsr_buf_release(&err);
	return ret;
}

/* delete_volume - a volume's bytes on a mounted AFTD, the save sets whose
 * only copy it held (with their index entries), and its record, in that
 * order, each step repeatable: 0 = done (or already gone), -1 = not done
 * yet (st says why). */
static int delete_volume(struct nsrd *n, const char *name, nsr_status *st)
{
	struct mmdb_clnt *mc = n->mmdb;
	const struct nsr_res *dev = NULL;
	struct mmdb_volume vol;
	struct nsr_res *q;
	char devname[256] = "";
	long i;
	int rc = mmdb_clnt_vol_get(mc, name, &vol);

	if (rc == NSR_ERR_NOTFOUND)
		return 0;
	if (rc != NSR_OK) {
		nsr_status_set(st, rc, "volume %s: the media database is not "
			       "available: %s", name, mmdb_clnt_errmsg(mc));
		return -1;
	}
	q = nsr_res_new();
	if (!q) {
		nsr_status_set(st, NSR_ERR_NOMEM, "volume %s: out of memory",
			       name);
		return -1;
	}
	nsr_res_set1(q, "type", "NSR device");
	nsr_res_set1(q, "volume name", name);
	i = nsr_resdb_find(n->res, q, 0);
	nsr_res_free(q);
	if (i >= 0) {
		dev = nsr_resdb_at(n->res, (size_t)i);
		snprintf(devname, sizeof(devname), "%s",
			 nsr_res_get(dev, "name"));
	}
	if (free_volume_space(n, &vol, dev, st) != 0)
		return -1;
	rc = drop_only_copies(n, &vol, "deletion");
	if (rc == NSR_OK)
		rc = mmdb_clnt_vol_delete(mc, name);
	devcache_vol_forget(name);
	if (rc != NSR_OK && rc != NSR_ERR_NOTFOUND) {
		nsr_status_set(st, rc, "cannot delete volume %s: %s", name,
			       mmdb_clnt_errmsg(mc));
		return -1;
	}
	if (*devname)
		set_mounted(n, devname, NULL, NULL);
	nsr_info("volume %s deleted from the media database", name);
	return 0;
}

/* nsrd_voldelete_finish - from the tick: finish a volume delete a crash
 * or an absent peer cut short.  0 = done, -1 = try again later. */
int nsrd_voldelete_finish(struct nsrd *n, const char *line)
{
	nsr_status st;
	int rc;

	memset(&st, 0, sizeof(st));
	rc = delete_volume(n, line, &st);
	xdr_free(NSR_XDR(xdr_nsr_status), (char *)&st);
	if (rc == 0)
		nsr_info("volume %s: the delete cut short by a failure is "
			 "finished", line);
	return rc;
}

/* nsrd_vol_delete - VOL_DELETE: remove a save set with its bytes on AFTDs
 * and its index entries, or a volume with its bytes on a mounted AFTD
 * and the save sets whose only copy it held (each under an intent
 * record, so a delete that dies halfway is finished by the tick). */
int nsrd_vol_delete(void *ctx, void *argp, void *resp,
		    struct nsr_rpc_call *call)
{
	struct nsrd *n = ctx;
	vol_del_args *a = argp;
	nsr_void_res *r = resp;
	struct mmdb_clnt *mc = NULL;
	struct mmdb_saveset ss;
	struct mmdb_volume vol;
	char line[512];
	int rc;

	NSR_UNUSED(call);
	mc = n->mmdb;
	if (a->ssid) {
		if (mmdb_clnt_ss_get(mc, a->ssid, &ss) != NSR_OK) {
			nsr_status_set(&r->st, NSR_ERR_NOTFOUND,
				       "no save set %u in the media "
				       "database",
				       a->ssid);
			return NSR_OK;
		}
		delete_line(line, sizeof(line), a->ssid, ss.client);
		if (nsrd_intent_add(n, "delete", line) != NSR_OK) {
			nsr_status_set(&r->st, NSR_ERR_IO, "save set %u kept: "
				       "nsrd cannot write its intent record "
				       "(see the log)", a->ssid);
			return NSR_OK;
		}
		rc = delete_ss(n, a->ssid, ss.client, &r->st);
		if (rc < 0) {
			/* Its bytes may be half gone: finish, don't undo. */
			nsr_status_set(&r->st, r->st.code, "%s; nsrd finishes "
				       "the delete once the data mover and "
				       "the media database answer again",
				       r->st.msg);
			return NSR_OK;
		}
		if (rc == 0)
			nsrd_intent_drop(n, "delete", line);
		nsr_status_set(&r->st, NSR_OK, "%s", "");
		return NSR_OK;
	}
	if (mmdb_clnt_vol_get(mc, a->volume, &vol) != NSR_OK) {
		nsr_status_set(&r->st, NSR_ERR_NOTFOUND, "no volume %s in the "
			       "media database", a->volume);
		return NSR_OK;
	}
	if (nsrd_intent_add(n, "voldelete", a->volume) != NSR_OK) {
		nsr_status_set(&r->st, NSR_ERR_IO, "volume %s kept: nsrd "
			       "cannot write its intent record (see the log)",
			       a->volume);
		return NSR_OK;
	}
	if (delete_volume(n, a->volume, &r->st) != 0) {
		nsr_status_set(&r->st, r->st.code, "%s; nsrd finishes the "
			       "delete once the data mover and the media "
			       "database answer again", r->st.msg);
		return NSR_OK;
	}
	nsrd_intent_drop(n, "voldelete", a->volume);
	nsr_status_set(&r->st, NSR_OK, "%s", "");
	return NSR_OK;
}

/* device_busy - has any session (save or recover) device devname? */
static int device_busy(struct nsrd *n, const char *devname)
{
	for (size_t i = 0; i < NSR_ARRAY_SIZE(n->sessions); i++)
		if (n->sessions[i].used &&
		    strcmp(n->sessions[i].device, devname) == 0)
			return 1;
	return 0;
}

/* pool_yes - is attribute attr of pool resource name "Yes"? */
static int pool_yes(struct nsrd *n, const char *name, const char *attr)
{
	const struct nsr_res *p = nsrd_res_find1(n, "NSR pool", name);
	const char *v = p ? nsr_res_get(p, attr) : NULL;

	return v && strcasecmp(v, "Yes") == 0;
}

/* may_recycle - may a save to pool reuse a recyclable volume of pool
 * from?  Its own pool's always; another pool's when pool has "recycle
 * from other pools" and from has "recycle to other pools". */
static int may_recycle(struct nsrd *n, const char *pool, const char *from)
{
	if (strcmp(pool, from) == 0)
		return 1;
	return pool_yes(n, pool, "recycle from other pools") &&
	       pool_yes(n, from, "recycle to other pools");
}

/* nsrd_auto_recycle - auto media management: a save to pool found no
 * writable volume mounted.  A recyclable volume mounted on an idle,
 * enabled, writable device (of pool, else of a pool that recycles to
 * it) is relabeled through the label path (LABEL with -y: its save sets
 * leave the media database and the index, an AFTD's files are removed),
 * keeping its name and block size, into pool.  1 if one was relabeled
 * (the caller picks a device again), else 0. */
int nsrd_auto_recycle(struct nsrd *n, const char *pool)
{
	struct nsr_res *q = nsr_res_new();
	int done = 0;

	if (!q)
		return 0;
	nsr_res_set1(q, "type", "NSR device");
	for (int pass = 0; pass < 2 && !done; pass++)
		for (long i = nsr_resdb_find(n->res, q, 0); i >= 0 && !done;
		     i = nsr_resdb_find(n->res, q, (size_t)i + 1)) {
			const struct nsr_res *dev =
				nsr_resdb_at(n->res, (size_t)i);
			const char *vname = nsr_res_get(dev, "volume name");
			const char *en = nsr_res_get(dev, "enabled");
			const char *ro = nsr_res_get(dev, "read only");
			const char *dn = nsr_res_get(dev, "name");
			struct mmdb_volume v;
			label_args a;
			label_res r;

			if (!vname || !*vname || !dn ||
			    (en && strcasecmp(en, "Yes") != 0) ||
			    (ro && strcasecmp(ro, "Yes") == 0) ||
			    device_busy(n, dn) ||
			    mmdb_clnt_vol_get(n->mmdb, vname, &v) != NSR_OK ||
			    !(v.flags & MMDB_VOL_RECYCLABLE) ||
			    (v.flags & (MMDB_VOL_READONLY | MMDB_VOL_MANUAL)))
				continue;
			/* pass 0: the pool's own; pass 1: other pools' */
			if ((pass == 0) != (strcmp(v.pool, pool) == 0) ||
			    !may_recycle(n, pool, v.pool))
				continue;
			nsr_info("auto media management: relabeling recyclable "
				 "volume %s (pool %s) on device %s for a save "
				 "to pool %s", v.name, v.pool, dn, pool);
			memset(&a, 0, sizeof(a));
			memset(&r, 0, sizeof(r));
			a.device = (char *)dn;
			a.pool = (char *)pool;
			a.volume = v.name;
			a.block_size = v.block_size;
			a.force = 1;
			nsrd_label(n, &a, &r, NULL);
			done = r.st.code == NSR_OK;
			if (!done)
				nsr_warn("auto media management: relabeling "
					 "volume %s failed: %s", v.name,
					 r.st.msg ? r.st.msg : "");
			xdr_free(NSR_XDR(xdr_label_res), (char *)&r);
		}
	nsr_res_free(q);
	return done;
}

/* nsrd_free_copy_space - see nsrd.h. */
int nsrd_free_copy_space(struct nsrd *n, uint32_t ssid, uint32_t cloneid,
			 nsr_status *st)
{
	return free_ss_space(n, n->mmdb, ssid, cloneid, st);
}
