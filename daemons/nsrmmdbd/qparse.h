/*
 * qparse.h - the mminfo query text of MM_QUERY_OPEN turned into the
 * engine's struct mmdb_query (a thin adapter over the mmquery parser).
 */
#ifndef NSR_MMDBD_QPARSE_H
#define NSR_MMDBD_QPARSE_H

#include <stddef.h>
#include <stdint.h>

#include "nsr/mmdb.h"

struct mmdbd_qparse;

/* mmdbd_qparse - parse text ("" = everything) with relative times against
 * now; *out owns the query.  On failure NSR_ERR_SYNTAX / NSR_ERR_INVAL and
 * err gets the parser's message pointing at the mistake. */
int mmdbd_qparse(const char *text, int volumes, int64_t now,
		 struct mmdbd_qparse **out, char *err, size_t errlen);
/* mmdbd_qparse_query - the parsed query (valid until _free). */
const struct mmdb_query *mmdbd_qparse_query(const struct mmdbd_qparse *p);
/* mmdbd_qparse_free - NULL is a no-op. */
void mmdbd_qparse_free(struct mmdbd_qparse *p);

#endif /* NSR_MMDBD_QPARSE_H */
