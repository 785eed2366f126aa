/*
 * nsrdr.h - private to nsrdr: the media database and index step
 * (mmdb.c).
 */
#ifndef NSRDR_H
#define NSRDR_H

#include "scan.h"

/* One fragment of the bootstrap save set on a scanned volume. */
struct nsrdr_piece {
	const struct scan_result *res; /* the volume */
	const struct scan_ss *ss;      /* the fragment on it */
	const char *device;	       /* where the volume is */
};

/* nsrdr_fix_mmdb - in the restored media database under root/mm (no
 * daemon running): the bootstrap save set of pieces p[0..n) (in fragment
 * order), which its own snapshot cannot hold, and each volume's written
 * figure past it; then name the save sets of those volumes the database
 * does not know (saved after the snapshot) and how to add them, and take
 * out of the restored indexes the save sets the snapshot does not hold
 * complete and browsable.  0 or -1. */
int nsrdr_fix_mmdb(const char *root, const struct nsrdr_piece *p, size_t n);

#endif /* NSRDR_H */
