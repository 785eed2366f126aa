/*
 * nsrck.h - what nsrck's files share.
 */
#ifndef NSRCK_H
#define NSRCK_H

#include <stddef.h>
#include <stdint.h>

struct mmdb_clnt;

/* nsrck_mm_ids - the sorted ids of client's finished, browsable save
 * sets in the media database (mm.c). */
int nsrck_mm_ids(struct mmdb_clnt *m, const char *client, uint64_t **ids,
		 size_t *n, char *err, size_t errn);

#endif /* NSRCK_H */
