/*
 * cfi_query_int.h - scanning record files, shared by the index modules.
 */
#ifndef NSR_CFI_QUERY_INT_H
#define NSR_CFI_QUERY_INT_H

#include "cfi_int.h"

#define READ_CHUNK (256 * 1024)
#define CFI_WIN (256 * 1024) /* > CFI_REC_MAX + 8: a record fits */

/* How a reader finds the save set, committed or kept, that holds the
 * list a form 2 list names: find returns it or NULL. */
struct cfi_holders {
	struct cfi_ss *(*find)(void *ctx, uint64_t ssid);
	void *ctx;
};

/* cfi_scan - visit every entry of committed save set s whose record file
 * lives in dir.  NSR_ERR_NOTFOUND (file missing), NSR_ERR_CORRUPT,
 * NSR_ERR_CHECKSUM, NSR_ERR_SYSTEM, or a visitor's non-zero value. */
int cfi_scan(const char *dir, const struct cfi_ss *s, nsr_cfi_visit_fn visit,
	     void *ctx);
/* cfi_scan_lists - the same, calling list (may be NULL) for each piece
 * of a directory list too. */
int cfi_scan_lists(const char *dir, const struct cfi_ss *s,
		   nsr_cfi_visit_fn visit, cfi_list_fn list, void *ctx);

/* cfi_scan_dir - visit the entries whose key (cfi_key_of) is k[0..n)
 * and the list pieces of directory k, of committed save set s; through
 * its directory table (read once and kept in s) when it has one, else
 * by a scan of every record (the visitors filter).  Each record found
 * through the table is checked to be of its kind and under k. */
int cfi_scan_dir(const char *dir, struct cfi_ss *s, const char *k, size_t n,
		 nsr_cfi_visit_fn visit, cfi_list_fn list, void *ctx,
		 const struct cfi_holders *h);
/* cfi_tab_get - read s's directory table once (s->tabstate 1: s->tab;
 * 2: s has none). */
int cfi_tab_get(const char *dir, struct cfi_ss *s);
/* cfi_holder - the save set and directory holding the list a form 2
 * list names (form 1, same digest); NSR_ERR_CORRUPT if the index has
 * no such save set or it holds no such list. */
int cfi_holder(const char *dir, const struct cfi_holders *h,
	       const struct cfi_lform *lf, const char *k, size_t n,
	       struct cfi_ss **hs, const struct cfi_tdir **hd);
/* cfi_quick - nsrck -L 1: s's file holds its committed length, its
 * header is right and (version 3) its footer and directory table parse;
 * no record is read. */
int cfi_quick(const char *dir, const struct cfi_ss *s);
/* cfi_check_tab - for nsr_cfi_check: s's directory table (if any) names
 * every record once, under its key, and (version 4) each list form is
 * right: a form 1 list's digest, a form 2 list's holder.  NSR_OK also
 * without a table. */
int cfi_check_tab(const char *dir, struct cfi_ss *s,
		  const struct cfi_holders *h);

#endif /* NSR_CFI_QUERY_INT_H */
