/*
 * rebuild.h - scanner -m: put what a scan found back into the media
 * database through nsrmmdbd.
 */
#ifndef SCANNER_REBUILD_H
#define SCANNER_REBUILD_H

#include "nsr/dev.h"

#include "scan.h"

/* rebuild_mmdb - add the volume (if the database does not know it) and
 * the fragments of the selected save sets (if missing).  Prints what it
 * does; returns 0, or -1 if anything could not be recorded. */
int rebuild_mmdb(const char *server, enum nsr_dev_type type,
		 const struct scan_result *res);

#endif /* SCANNER_REBUILD_H */
