/*
 * cfi_query_int.h - scanning record files, shared by the index modules.
 */
#ifndef NSR_CFI_QUERY_INT_H
#define NSR_CFI_QUERY_INT_H

#include "cfi_int.h"

#define READ_CHUNK (256 * 1024)

/* cfi_scan - visit every entry of committed save set s whose record file
 * lives in dir.  NSR_ERR_NOTFOUND (file missing), NSR_ERR_CORRUPT,
 * NSR_ERR_CHECKSUM, NSR_ERR_SYSTEM, or a visitor's non-zero value. */
int cfi_scan(const char *dir, const struct cfi_ss *s, nsr_cfi_visit_fn visit,
	     void *ctx);
/* cfi_scan_lists - the same, calling list (may be NULL) for each piece
 * of a directory list too. */
int cfi_scan_lists(const char *dir, const struct cfi_ss *s,
		   nsr_cfi_visit_fn visit, cfi_list_fn list, void *ctx);

#endif /* NSR_CFI_QUERY_INT_H */
