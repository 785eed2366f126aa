/*
 * mm.c - nsrck -m: the ids of a client's browsable save sets, as the
 * media database (nsrmmdbd) has them.
 */
#include "nsr/compat.h"

#include "nsr/cmp.h"
#include "nsr/err.h"
#include "nsr/mmdb_clnt.h"

#include "nsrck.h"

/* nsrck_mm_ids - the sorted ids of client's save sets that are finished
 * and browsable (one per clone row; repeats are fine); *ids is
 * malloc'ed.  The error text, if any, goes to err. */
int nsrck_mm_ids(struct mmdb_clnt *m, const char *client, uint64_t **ids,
		 size_t *n, char *err, size_t errn)
{
	struct mmdb_ss_row *rows = calloc(MM_BATCH_MAX, sizeof(*rows));
	char *q = NULL;
	size_t got = 0, cap = 0;
	int done = 0, rc;

	*ids = NULL;
	*n = 0;
	if (rows == NULL || asprintf(&q, "client=%s", client) < 0) {
		free(rows);
		return NSR_ERR_NOMEM;
	}
	rc = mmdb_clnt_query_open(m, q, 0, 0);
	while (rc == NSR_OK && !done) {
		rc = mmdb_clnt_query_next_rows(m, rows, MM_BATCH_MAX, &got,
					       &done);
		for (size_t i = 0; rc == NSR_OK && i < got; i++) {
			uint32_t f = rows[i].ss.flags;

			if (!(f & MMDB_SS_BROWSABLE) ||
			    (f & MMDB_SS_INPROGRESS))
				continue;
			if (*n == cap) {
				uint64_t *v;

				cap = cap ? cap * 2 : 256;
				v = realloc(*ids, cap * sizeof(*v));
				if (v == NULL) {
					rc = NSR_ERR_NOMEM;
					break;
				}
				*ids = v;
			}
			(*ids)[(*n)++] = rows[i].ss.ssid;
		}
	}
	if (rc != NSR_OK)
		snprintf(err, errn, "%s", mmdb_clnt_errmsg(m));
	else if (*n > 1)
		qsort(*ids, *n, sizeof(**ids), nsr_cmp_u64);
	free(rows);
	free(q);
	return rc;
}
