/*
 * index.h - scanner -i: rebuild client file index entries from the save
 * streams on the volume, through nsrindexd.
 */
#ifndef SCANNER_INDEX_H
#define SCANNER_INDEX_H

#include "nsr/dev.h"

#include "scan.h"

/* rebuild_index - for each selected save set that is whole on this
 * volume, read its stream back, decode it and enter one index entry per
 * file (replacing the save set's entries if the index has them).  Prints
 * what it does; 0, or -1 if any save set could not be indexed. */
int rebuild_index(const char *server, struct nsr_dev *dev,
		  const struct scan_result *res);

#endif /* SCANNER_INDEX_H */
