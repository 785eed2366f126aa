/*
 * qparse.c - adapter from MM_QUERY_OPEN's text to struct mmdb_query, on
 * top of the mminfo query language of mmquery.h.
 *
 * A syntax error becomes a message that quotes the query and marks the
 * mistake, e.g.
 *   query "clinet=mars": column 1: unknown attribute 'clinet' (...)
 */
#include "nsr/compat.h"

#include "nsr/err.h"
#include "nsr/mmquery.h"
#include "qparse.h"

struct mmdbd_qparse {
	struct nsr_mmquery *q;
};

/* mmdbd_qparse - parse text into a query. */
int mmdbd_qparse(const char *text, int volumes, int64_t now,
		 struct mmdbd_qparse **out, char *err, size_t errlen)
{
	struct mmdbd_qparse *p;
	struct nsr_mmquery_error e;
	int rc;

	/* Whether the attributes suit a volume query is the engine's call
	 * (mmdb_vol_query: NSR_ERR_INVAL), pool for example suits both. */
	NSR_UNUSED(volumes);

	*out = NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NSR_ERR_NOMEM;
	rc = nsr_mmquery_new(&p->q);
	if (rc)
		goto fail;
	memset(&e, 0, sizeof(e));
	if (text && *text) {
		rc = nsr_mmquery_add_spec(p->q, text, (time_t)now, &e);
		if (rc == NSR_ERR_SYNTAX || (rc && e.msg[0])) {
			snprintf(err, errlen, "query \"%s\": column %zu: %s",
				 text, e.offset + 1, e.msg);
			goto fail;
		}
		if (rc) {
			snprintf(err, errlen, "query \"%.200s\": %s", text,
				 nsr_strerror(rc));
			goto fail;
		}
	}
	*out = p;
	return NSR_OK;
fail:
	mmdbd_qparse_free(p);
	return rc;
}

/* mmdbd_qparse_query - the compiled query. */
const struct mmdb_query *mmdbd_qparse_query(const struct mmdbd_qparse *p)
{
	return nsr_mmquery_get(p->q);
}

/* mmdbd_qparse_free - free the query. */
void mmdbd_qparse_free(struct mmdbd_qparse *p)
{
	if (!p)
		return;
	nsr_mmquery_free(p->q);
	free(p);
}
