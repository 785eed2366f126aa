/*
 * mmquery.h - mminfo's query language (-q queryspec, -t, -c, -N) compiled
 * into the media database's struct mmdb_query (mmdb.h).
 *
 * A queryspec is a comma-separated list of constraints
 *
 *	[!]name[comparator value]	comparator: = != < <= > >=
 *
 * Names are mminfo's attribute names (mmdb_attrs[]: ssid, client, name,
 * savetime, totalsize, %used, volume, pool, ...).  Flag attributes take no
 * comparator ("incomplete", "!suspect"); every other attribute needs one.
 * '!' before a compared attribute negates the comparison (!client=a is
 * client!=a; !size>5 is size<=5).  Values: time attributes take nsr_getdate
 * text ("savetime>=3 days ago"); numbers may carry a size unit, 1024-based
 * (B, K/KB, M/MB, G/GB, T/TB, P/PB: "totalsize>10GB", "1.5GB"); level takes
 * full, incr, 1-9 or manual; a value containing ',' is quoted with ' or ",
 * a doubled quote inside standing for one.  Blanks around names, operators
 * and unquoted values are ignored.
 *
 * Meaning (applied by mmdb): repeated '=' on one string attribute is OR
 * ("client=mars,client=saturn"), everything else AND, so repeated numeric
 * constraints form a range ("%used>20,%used<80").  All constraints of all
 * -q/-t/-c/-N options given to one query are combined this way.
 *
 * The query object owns every string its predicates point to.  Functions
 * return NSR_OK or a negative nsr_err; on NSR_ERR_SYNTAX the error struct
 * says where (byte offset into the text given, 0-based; column = offset+1)
 * and what was wrong, and the query is left as it was.
 */
#ifndef NSR_MMQUERY_H
#define NSR_MMQUERY_H

#include <stddef.h>
#include <time.h>

struct mmdb_query;
struct nsr_mmquery;

/* Longest queryspec accepted (NSR_ERR_TOOBIG beyond). */
#define NSR_MMQUERY_MAX_TEXT 65536
/* Most predicates in one query (NSR_ERR_TOOBIG beyond). */
#define NSR_MMQUERY_MAX_PREDS 1024

struct nsr_mmquery_error {
	size_t offset;		/* where the problem starts in the text */
	size_t len;		/* how many bytes are wrong (0 = at end) */
	char msg[2048]; /* e.g. "unknown attribute 'sise' (known: ...)" */
};

/* nsr_mmquery_new - an empty query (matches everything).  NSR_OK or
 * NSR_ERR_NOMEM. */
int nsr_mmquery_new(struct nsr_mmquery **out);
/* nsr_mmquery_free - free the query and its strings (NULL ok). */
void nsr_mmquery_free(struct nsr_mmquery *q);

/* nsr_mmquery_add_spec - add the constraints of one -q queryspec; time
 * values are evaluated relative to now.  err may be NULL. */
int nsr_mmquery_add_spec(struct nsr_mmquery *q, const char *spec, time_t now,
			 struct nsr_mmquery_error *err);
/* nsr_mmquery_add_time - -t time: savetime >= time (nsr_getdate text). */
int nsr_mmquery_add_time(struct nsr_mmquery *q, const char *text, time_t now,
			 struct nsr_mmquery_error *err);
/* nsr_mmquery_add_client - -c client: client = client (taken verbatim). */
int nsr_mmquery_add_client(struct nsr_mmquery *q, const char *client);
/* nsr_mmquery_add_name - -N name: name = name (taken verbatim). */
int nsr_mmquery_add_name(struct nsr_mmquery *q, const char *name);
/* nsr_mmquery_add_volume - a volname operand: volume = name. */
int nsr_mmquery_add_volume(struct nsr_mmquery *q, const char *volume);

/* nsr_mmquery_quote - append value to out as a quoted queryspec value
 * ('...', inner quotes doubled), so that any text (commas, blanks,
 * quotes) compares verbatim: "name=" then the quoted value.  NSR_OK or
 * NSR_ERR_NOMEM. */
struct nsr_buf;
int nsr_mmquery_quote(const char *value, struct nsr_buf *out);

/* nsr_mmquery_get - the compiled query for mmdb_ss_query/mmdb_vol_query.
 * Valid until the next add or free. */
const struct mmdb_query *nsr_mmquery_get(const struct nsr_mmquery *q);
/* nsr_mmquery_volume_only - 1 if every predicate is about volumes (so it
 * can drive mmdb_vol_query for mminfo -m), else 0 (also 0 when empty). */
int nsr_mmquery_volume_only(const struct nsr_mmquery *q);


#endif /* NSR_MMQUERY_H */
