/*
 * nsrdr.h - private to nsrdr: the media database and index step
 * (mmdb.c).
 */
#ifndef NSRDR_H
#define NSRDR_H

#include "scan.h"

/* nsrdr_fix_mmdb - in the restored media database under root/mm (no
 * daemon running): the bootstrap save set s of the scanned volume res,
 * which its own snapshot cannot hold, and the volume's written figure
 * past it; then name the save sets of the volume the database does not
 * know (saved after the snapshot) and how to add them, and take out of
 * the restored indexes the save sets the snapshot does not hold
 * complete and browsable.  0 or -1. */
int nsrdr_fix_mmdb(const char *root, const struct scan_result *res,
		   const struct scan_ss *s, const char *device);

#endif /* NSRDR_H */
