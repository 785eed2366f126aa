/*
 * restypes.c - the resource type schema: the built-in table of standard
 * types with their documented defaults, default filling and the checks
 * that need only one resource (resdb.c adds the database-wide ones).
 */
#include "nsr/compat.h"

#include <ctype.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/res.h"
#include "nsr/sched.h"
#include "nsr/size.h"

#define REQ NSR_RES_REQUIRED
#define UNIQ NSR_RES_UNIQUE
#define ONE NSR_RES_SINGLE
#define HID NSR_RES_HIDDEN
#define CRE NSR_RES_CREATEONLY
#define NUM NSR_RES_NUMBER
#define RO NSR_RES_READONLY

#define YESNO "Yes|No"
#define ENDIS "Enabled|Disabled"

/* Shorthands: text attribute, single text, choice, number. */
#define T(n) { n, NULL, 0, NULL, 0, 0 }
#define S(n, d) { n, d, ONE, NULL, 0, 0 }
#define C(n, d, ch) { n, d, ONE, ch, 0, 0 }
#define N(n, d, lo, hi) { n, d, ONE | NUM, NULL, lo, hi }
#define NAME_UNIQUE { "name", NULL, REQ | ONE | UNIQ, NULL, 0, 0 }

static const struct nsr_res_attrdef server_attrs[] = {
	{ "name", NULL, REQ | ONE, NULL, 0, 0 },
	T("comment"),
	N("parallelism", "32", 1, 1024),
	C("manual saves", "Enabled", ENDIS),
	N("jobsdb retention in hours", "72", 1, 1000000),
	N("jobsdb maximum size", "0", 0, INT64_MAX),
	N("job inactivity timeout", "0", 0, 1000000),
	N("save mount timeout", "30", 1, 100000), /* minutes */
	T("administrator"),
	C("accept new sessions", "Yes", YESNO),
	C("accept new recover sessions", "Yes", YESNO),
	C("keep incomplete backups", "No", YESNO),
	C("public archives", "No", YESNO),
	C("volume priority", "NearLine Priority",
	  "NearLine Priority|SmartMedia Priority"),
	{ "datazone pass phrase", NULL, ONE | HID, NULL, 0, 0 },
	{ "version", NULL, ONE | RO, NULL, 0, 0 },
};

static const struct nsr_res_attrdef client_attrs[] = {
	{ "name", NULL, REQ | ONE, NULL, 0, 0 },
	T("comment"),
	T("aliases"),
	{ "save set", "All", 0, NULL, 0, 0 },
	S("schedule", "Default"),
	S("browse policy", "Month"),
	S("retention policy", "Year"),
	{ "group", "Default", 0, NULL, 0, 0 },
	S("pool", NULL),
	N("parallelism", "4", 1, 1024),
	C("parallel save streams per save set", "No", YESNO),
	C("aes encryption", "No", YESNO),
	C("compression", "No", YESNO),
	T("save operations"),
	T("remote access"),
	S("remote user", NULL),
	{ "password", NULL, ONE | HID, NULL, 0, 0 },
	S("backup command", NULL),
	S("pre command", NULL),
	S("post command", NULL),
	{ "storage nodes", "nsrserverhost", 0, NULL, 0, 0 },
	T("recover storage nodes"),
	T("clone storage nodes"),
	S("server network interface", NULL),
	N("priority", "500", 1, 1000),
	C("scheduled backup", "Enabled", ENDIS),
	C("client direct", "Enabled", ENDIS),
	C("checkpoint enabled", "No", YESNO),
	C("checkpoint granularity", "Directory", "Directory|File"),
	S("directive", NULL),
	S("index path", NULL),
	S("executable path", NULL),
	C("archive services", "Disabled", ENDIS),
	S("owner notification", NULL),
	T("tags"),
};

static const struct nsr_res_attrdef device_attrs[] = {
	NAME_UNIQUE,
	T("comment"),
	{ "media type", NULL, REQ | ONE | CRE, "adv_file|vtape|tape", 0, 0 },
	S("device access information", NULL),
	C("enabled", "Yes", "Yes|No|Service"),
	C("read only", "No", YESNO),
	N("target sessions", "4", 1, 1024),
	N("max sessions", "32", 1, 1024),
	N("max nsrmmd count", "12", 1, 1024), /* MS/TS + 4 */
	{ "device block size", "handler default", ONE | HID, NULL, 0, 0 },
	S("segment size", "4000 MB"),
	S("volume default capacity", NULL),
	C("auto media management", "No", YESNO),
	S("remote user", NULL),
	{ "password", NULL, ONE | HID, NULL, 0, 0 },
	{ "volume name", NULL, ONE | RO, NULL, 0, 0 },
	{ "volume pool", NULL, ONE | RO, NULL, 0, 0 },
	{ "write enabled", NULL, ONE | RO, NULL, 0, 0 },
};

static const struct nsr_res_attrdef pool_attrs[] = {
	NAME_UNIQUE,
	T("comment"),
	C("enabled", "Yes", YESNO),
	C("pool type", "Backup",
	  "Backup|Backup Clone|Archive|Archive Clone"),
	T("groups"),
	T("clients"),
	T("save sets"),
	T("levels"),
	T("devices"),
	S("label template", NULL),
	C("store index entries", "Yes", YESNO),
	S("retention policy", NULL),
	C("auto media verify", "No", YESNO),
	C("recycle to other pools", "No", YESNO),
	C("recycle from other pools", "No", YESNO),
	N("max volumes to recycle", "200", 0, 1000000),
	N("max parallelism", "0", 0, 1024),
	S("media type required", NULL),
	S("media type preferred", NULL),
	S("barcode prefix", NULL),
};

static const struct nsr_res_attrdef label_attrs[] = {
	NAME_UNIQUE,
	T("comment"),
	{ "fields", NULL, REQ, NULL, 0, 0 },
	S("separator", "."),
	S("next", NULL),
};

static const struct nsr_res_attrdef node_attrs[] = {
	NAME_UNIQUE,
	T("comment"),
	C("type of storage node", "SCSI", "SCSI|NDMP|SILO"),
	C("dynamic nsrmmds", "Yes", YESNO),
	C("enabled", "Yes", "Yes|No|Service"),
	T("clone storage nodes"),
	S("device sharing mode", NULL),
	C("dedicated storage node", "No", YESNO),
	T("AFTD allowed directories"),
	S("remote user", NULL),
	{ "password", NULL, ONE | HID, NULL, 0, 0 },
};

static const struct nsr_res_attrdef group_attrs[] = {
	NAME_UNIQUE,
	T("comment"),
	C("autostart", "Disabled", "Enabled|Disabled|Start now"),
	S("start time", "3:33"),
	S("interval", "24:00"),
	N("client retries", "1", 0, 1000),
	N("inactivity timeout", "30", 0, 1000000),
	C("clones", "No", YESNO),
	S("clone pool", "Default Clone"),
	N("savegrp parallelism", "0", 0, 1000),
	N("soft runtime limit", "0", 0, 1000000),
	N("hard runtime limit", "0", 0, 1000000),
	C("autorestart", "Disabled", ENDIS),
	S("restart window", "12:00"),
	C("force incremental", "Yes", YESNO),
	S("level", NULL),
	S("schedule", NULL),
	T("options"),
};

static const struct nsr_res_attrdef schedule_attrs[] = {
	NAME_UNIQUE,
	T("comment"),
	C("period", "Week", "Week|Month"),
	S("action", "full incr incr incr incr incr incr"),
	T("override"),
};

static const struct nsr_res_attrdef policy_attrs[] = {
	NAME_UNIQUE,
	T("comment"),
	C("period", "Months", "Days|Weeks|Months|Years"),
	N("number of periods", "1", 1, 1000000),
};

#define TYPE(name, flags, attrs) \
	{ name, flags, attrs, NSR_ARRAY_SIZE(attrs) }

static const struct nsr_res_typedef std_types[] = {
	TYPE("NSR", NSR_RES_SINGLETON, server_attrs),
	TYPE("NSR client", 0, client_attrs),
	TYPE("NSR device", 0, device_attrs),
	TYPE("NSR group", 0, group_attrs),
	TYPE("NSR label", 0, label_attrs),
	TYPE("NSR policy", 0, policy_attrs),
	TYPE("NSR pool", 0, pool_attrs),
	TYPE("NSR schedule", 0, schedule_attrs),
	TYPE("NSR storage node", 0, node_attrs),
};

static const struct nsr_res_schema std_schema = {
	std_types, NSR_ARRAY_SIZE(std_types)
};

/* nsr_res_schema_std - the built-in schema. */
const struct nsr_res_schema *nsr_res_schema_std(void)
{
	return &std_schema;
}

/* nsr_res_schema_type - a type by name. */
const struct nsr_res_typedef *
nsr_res_schema_type(const struct nsr_res_schema *s, const char *type)
{
	if (!type)
		return NULL;
	for (size_t i = 0; i < s->ntypes; i++)
		if (nsr_res_name_eq(s->types[i].type, type))
			return &s->types[i];
	return NULL;
}

/* nsr_res_schema_attr - an attribute of a type by name. */
const struct nsr_res_attrdef *
nsr_res_schema_attr(const struct nsr_res_typedef *t, const char *name)
{
	for (size_t i = 0; i < t->nattrs; i++)
		if (nsr_res_name_eq(t->attrs[i].name, name))
			return &t->attrs[i];
	return NULL;
}

/* set_default - give r attribute a with its default values ("a, b"). */
static int set_default(struct nsr_res *r, const struct nsr_res_attrdef *a)
{
	struct nsr_res *tmp = NULL;
	struct nsr_buf text;
	int rc;

	if (!a->defval)
		return nsr_res_set(r, a->name, NULL, 0);
	nsr_buf_init(&text, 0);
	rc = nsr_buf_addf(&text, "%s: %s", a->name, a->defval);
	if (rc == NSR_OK)
		rc = nsr_res_parse_attrs(text.data, &tmp, NULL);
	if (rc == NSR_OK)
		rc = nsr_res_merge(r, tmp, 0);
	nsr_res_free(tmp);
	nsr_buf_release(&text);
	return rc;
}

/* nsr_res_fill_defaults - add missing attributes with defaults. */
int nsr_res_fill_defaults(struct nsr_res *r, const struct nsr_res_schema *s)
{
	const struct nsr_res_typedef *t = nsr_res_schema_type(s,
							     nsr_res_type(r));
	int rc;

	if (!t)
		return NSR_ERR_INVAL;
	for (size_t i = 0; i < t->nattrs; i++) {
		if (nsr_res_find(r, t->attrs[i].name) >= 0)
			continue;
		rc = set_default(r, &t->attrs[i]);
		if (rc != NSR_OK)
			return rc;
	}
	return NSR_OK;
}

/* in_choices - 1 if v is one of "a|b|c" (case-insensitive). */
static int in_choices(const char *v, const char *choices)
{
	size_t vlen = strlen(v);
	const char *p = choices;

	for (;;) {
		const char *bar = strchr(p, '|');
		size_t n = bar ? (size_t)(bar - p) : strlen(p);

		if (n == vlen && strncasecmp(p, v, n) == 0)
			return 1;
		if (!bar)
			return 0;
		p = bar + 1;
	}
}

/* is_number - a decimal integer in [min, max]. */
static int is_number(const char *v, long long min, long long max)
{
	char *end;
	long long n;

	if (!isdigit((unsigned char)v[0]) && !(v[0] == '-' &&
					       isdigit((unsigned char)v[1])))
		return 0;
	errno = 0;
	n = strtoll(v, &end, 10);
	if (errno || *end)
		return 0;
	return n >= min && n <= max;
}

/* check_attr - the per-attribute rules for attribute i of r. */
static int check_attr(const struct nsr_res *r, size_t i,
		      const struct nsr_res_attrdef *d, const char *type,
		      struct nsr_buf *why)
{
	size_t n = nsr_res_attr_nvalues(r, i);
	const char *name = nsr_res_attr_name(r, i);

	if ((d->flags & NSR_RES_SINGLE) && n > 1) {
		if (why)
			nsr_buf_addf(why, "%s: attribute '%s' takes one value, "
				     "%zu given", type, name, n);
		return NSR_ERR_INVAL;
	}
	for (size_t j = 0; j < n; j++) {
		const char *v = nsr_res_attr_value(r, i, j);

		if (d->choices && !in_choices(v, d->choices)) {
			if (why)
				nsr_buf_addf(why, "%s: '%s' is not a valid "
					     "value for '%s' (one of %s)",
					     type, v, name, d->choices);
			return NSR_ERR_INVAL;
		}
		if ((d->flags & NSR_RES_NUMBER) &&
		    !is_number(v, d->min, d->max)) {
			if (why)
				nsr_buf_addf(why, "%s: '%s' is not a valid "
					     "value for '%s' (a number from "
					     "%lld to %lld)", type, v, name,
					     d->min, d->max);
			return NSR_ERR_INVAL;
		}
	}
	return NSR_OK;
}

/* Pairs of numeric attributes where the first may not exceed the second. */
static const struct {
	const char *type, *low, *high;
} ordered[] = {
	{ "NSR device", "target sessions", "max sessions" },
};

/* check_order - the ordered[] rules for r's type. */
static int check_order(const struct nsr_res *r, const char *type,
		       struct nsr_buf *why)
{
	for (size_t i = 0; i < NSR_ARRAY_SIZE(ordered); i++) {
		const char *lo, *hi;

		if (!nsr_res_name_eq(type, ordered[i].type))
			continue;
		lo = nsr_res_get(r, ordered[i].low);
		hi = nsr_res_get(r, ordered[i].high);
		if (!lo || !hi ||
		    strtoll(lo, NULL, 10) <= strtoll(hi, NULL, 10))
			continue;
		if (why)
			nsr_buf_addf(why, "%s: '%s' (%s) may not exceed '%s' "
				     "(%s)", type, ordered[i].low, lo,
				     ordered[i].high, hi);
		return NSR_ERR_INVAL;
	}
	return NSR_OK;
}

/* check_schedule - an NSR schedule's period, action and overrides parse
 * (sched.h). */
static int check_schedule(const struct nsr_res *r, struct nsr_buf *why)
{
	long i = nsr_res_find(r, "override");
	size_t n = i >= 0 ? nsr_res_attr_nvalues(r, (size_t)i) : 0;
	const char **ov = calloc(n + 1, sizeof(*ov));
	struct nsr_sched *s = malloc(sizeof(*s));
	int rc = NSR_ERR_NOMEM;

	if (ov && s) {
		for (size_t j = 0; j < n; j++)
			ov[j] = nsr_res_attr_value(r, (size_t)i, j);
		rc = nsr_sched_parse(nsr_res_get(r, "period"),
				     nsr_res_get(r, "action"), ov, n, s, why);
		if (rc != NSR_OK)
			rc = NSR_ERR_INVAL;
	}
	free(ov);
	free(s);
	return rc;
}

/* check_group - an NSR group's start time, interval and level override
 * parse (sched.h). */
static int check_group(const struct nsr_res *r, struct nsr_buf *why)
{
	const char *v = nsr_res_get(r, "start time");
	int sec, rc = NSR_OK;

	if (v && *v)
		rc = nsr_sched_parse_start(v, &sec, why);
	v = nsr_res_get(r, "interval");
	if (rc == NSR_OK && v && *v)
		rc = nsr_sched_parse_interval(v, &sec, why);
	v = nsr_res_get(r, "level");
	if (rc == NSR_OK && v && *v && nsr_sched_level_parse(v) < 0) {
		if (why)
			nsr_buf_addf(why, "level '%.40s': full, incr, 1 to 9 "
				     "or skip (or empty: each client's "
				     "schedule decides)", v);
		rc = NSR_ERR_INVAL;
	}
	if (rc != NSR_OK)
		rc = NSR_ERR_INVAL;
	return rc;
}

/* check_device - an NSR device's sizes parse (size.h): the segment size
 * (0 for none) and the volume default capacity (empty for none, else at
 * least 1 MB). */
static int check_device(const struct nsr_res *r, struct nsr_buf *why)
{
	const char *v = nsr_res_get(r, "segment size");
	long long n;

	if (v && nsr_size_parse(v, &n) != NSR_OK) {
		if (why)
			nsr_buf_addf(why, "segment size '%.40s' is not a size "
				     "(e.g. 4000 MB; 0 for no filemarks "
				     "between segments)", v);
		return NSR_ERR_INVAL;
	}
	v = nsr_res_get(r, "volume default capacity");
	if (v && *v &&
	    (nsr_size_parse(v, &n) != NSR_OK || n < (1LL << 20))) {
		if (why)
			nsr_buf_addf(why, "volume default capacity '%.40s' is "
				     "not a size of 1 MB or more (e.g. 500 "
				     "GB; empty for none)", v);
		return NSR_ERR_INVAL;
	}
	return NSR_OK;
}

/* check_syntax - attributes with a syntax of their own. */
static int check_syntax(const struct nsr_res *r, const char *type,
			struct nsr_buf *why)
{
	if (nsr_res_name_eq(type, "NSR device"))
		return check_device(r, why);
	if (nsr_res_name_eq(type, "NSR schedule"))
		return check_schedule(r, why);
	if (nsr_res_name_eq(type, "NSR group"))
		return check_group(r, why);
	return NSR_OK;
}

/* nsr_res_check - check r against its type definition. */
int nsr_res_check(const struct nsr_res *r, const struct nsr_res_schema *s,
		  struct nsr_buf *why)
{
	const char *type = nsr_res_type(r);
	const struct nsr_res_typedef *t = nsr_res_schema_type(s, type);
	int rc;

	if (!type) {
		if (why)
			nsr_buf_addstr(why, "resource has no 'type' attribute");
		return NSR_ERR_INVAL;
	}
	if (!t) {
		if (why)
			nsr_buf_addf(why, "unknown resource type '%s'", type);
		return NSR_ERR_INVAL;
	}
	if (nsr_res_attr_nvalues(r, (size_t)nsr_res_find(r, "type")) != 1) {
		if (why)
			nsr_buf_addstr(why, "'type' takes exactly one value");
		return NSR_ERR_INVAL;
	}
	for (size_t i = 0; i < nsr_res_nattrs(r); i++) {
		const char *name = nsr_res_attr_name(r, i);
		const struct nsr_res_attrdef *d = nsr_res_schema_attr(t, name);

		if (nsr_res_name_eq(name, "type") ||
		    nsr_res_name_eq(name, NSR_RES_ID_ATTR))
			continue;
		if (!d) {
			if (t->flags & NSR_RES_OPEN)
				continue;
			if (why)
				nsr_buf_addf(why, "%s: no such attribute '%s'",
					     t->type, name);
			return NSR_ERR_INVAL;
		}
		rc = check_attr(r, i, d, t->type, why);
		if (rc != NSR_OK)
			return rc;
	}
	for (size_t i = 0; i < t->nattrs; i++) {
		const struct nsr_res_attrdef *d = &t->attrs[i];
		const char *v;

		if (!(d->flags & NSR_RES_REQUIRED))
			continue;
		v = nsr_res_get(r, d->name);
		if (!v || !*v) {
			if (why)
				nsr_buf_addf(why, "%s: attribute '%s' is "
					     "required", t->type, d->name);
			return NSR_ERR_INVAL;
		}
	}
	rc = check_order(r, t->type, why);
	return rc == NSR_OK ? check_syntax(r, t->type, why) : rc;
}
