/*
 * rows.h - the save set rows mminfo keeps to sort them (-o).
 *
 * A row as a struct is about 2.3 KB, mostly the room its strings may
 * take; kept that way a sorted report of a million rows took 2.3 GB.  A
 * kept row is its XDR form instead (mm_row, the protocol's own codec: a
 * few hundred bytes) in one arena, beside its sort keys, whose strings
 * (client, save set name, volume) are each held once and compared by
 * rank.  A row comes back whole when it is emitted, one at a time.
 */
#ifndef NSR_MMINFO_ROWS_H
#define NSR_MMINFO_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "nsr/buf.h"
#include "nsr/mmdb.h"
#include "nsr/nameix.h"

struct mminfo_rkey;

/* The distinct strings of the kept rows' keys. */
struct mminfo_strs {
	struct nsr_buf b; /* NUL-terminated strings */
	size_t *off;	  /* string i at b.data + off[i] */
	uint32_t *rank;	  /* string i's place in strcmp(3) order */
	size_t n, cap;
	struct nsr_nameix ix; /* the strings by their bytes */
};

struct mminfo_rows {
	struct nsr_buf xdr;	  /* the rows' XDR forms, one after another */
	struct mminfo_rkey *key;  /* a row's sort keys and XDR offset */
	size_t n, cap;
	struct mminfo_strs s;
};

/* mminfo_rows_init - no rows kept. */
void mminfo_rows_init(struct mminfo_rows *r);

/* mminfo_rows_add - keep row: NSR_OK, NSR_ERR_NOMEM, or NSR_ERR_INVAL
 * (it does not encode; nothing kept then). */
int mminfo_rows_add(struct mminfo_rows *r, const struct mmdb_ss_row *row);

/* mminfo_rows_emit - call fn(arg, row) for every kept row, sorted by the
 * order letters (mminfo_order_valid; "" keeps arrival order; ties keep
 * it too): NSR_OK, NSR_ERR_NOMEM, NSR_ERR_CORRUPT (a kept row does not
 * decode), or fn's nonzero return, which stops it.  Once: the sort
 * turns the keys' strings into ranks. */
int mminfo_rows_emit(struct mminfo_rows *r, const char *order,
		     int (*fn)(void *arg, const struct mmdb_ss_row *row),
		     void *arg);

/* mminfo_rows_free - free what is kept; no rows kept again. */
void mminfo_rows_free(struct mminfo_rows *r);

#endif /* NSR_MMINFO_ROWS_H */
