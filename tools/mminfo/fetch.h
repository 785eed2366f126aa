/*
 * fetch.h - mminfo's side of a query: stream the rows nsrmmdbd sends in
 * batches to a callback, or, with an -o ordering, collect and sort them
 * first (then all matching rows are held in mminfo's memory).
 */
#ifndef NSR_MMINFO_FETCH_H
#define NSR_MMINFO_FETCH_H

#include <stddef.h>
#include <stdint.h>

#include "nsr/mmdb.h"

struct mmdb_clnt;

typedef int (*mminfo_row_fn)(void *arg, const struct mmdb_ss_row *row);
typedef int (*mminfo_vol_fn)(void *arg, const struct mmdb_volume *vol);

/* mminfo_order_valid - 1 if every letter of order is one of "tcnmelR". */
int mminfo_order_valid(const char *order);

/*
 * mminfo_fetch_rows - run query on the daemon and call fn for every save
 * set row, in order (NULL or "" = as the daemon streams them).  *count gets
 * the number of rows.  Returns NSR_OK, the client library's code (message
 * in mmdb_clnt_errmsg), NSR_ERR_NOMEM, or fn's nonzero return.
 */
int mminfo_fetch_rows(struct mmdb_clnt *c, const char *query, int64_t now,
		      const char *order, mminfo_row_fn fn, void *arg,
		      size_t *count);
/* mminfo_fetch_vols - the same for a volume query (order letters m, e, l,
 * t apply; c and n do not and are ignored). */
int mminfo_fetch_vols(struct mmdb_clnt *c, const char *query, int64_t now,
		      const char *order, mminfo_vol_fn fn, void *arg,
		      size_t *count);
/*
 * mminfo_fetch_vols_of_rows - for a volume report with a save set query
 * (mminfo -m -c client): run query over save set rows and call fn once
 * for every volume holding one of them, in order of first appearance or
 * sorted by order.  Memory: one batch plus the distinct volumes.
 */
int mminfo_fetch_vols_of_rows(struct mmdb_clnt *c, const char *query,
			      int64_t now, const char *order,
			      mminfo_vol_fn fn, void *arg, size_t *count);

#endif /* NSR_MMINFO_FETCH_H */
