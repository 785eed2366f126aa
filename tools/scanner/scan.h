/*
 * scan.h - what scanner learns from one volume: its label and, per save
 * set fragment found on it, the header, where it starts, how many bytes
 * are on this volume, the trailer if the end is here, and damage.
 */
#ifndef SCANNER_SCAN_H
#define SCANNER_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "nsr/dev.h"
#include "nsr/vol.h"

struct scan_ss {
	struct nsr_vol_sshdr hdr;
	struct nsr_vol_span span;  /* fragment number and save-set offset */
	struct nsr_vol_loc first;  /* where its begin chunk is */
	struct nsr_vol_frag frag;  /* the fragment, as nsr_vol_reader_read
				      takes it (size, complete filled in) */
	uint64_t bytes_here;	   /* data bytes on this volume */
	struct nsr_vol_sstail tail; /* valid if has_end */
	int has_begin, has_end, unfinished, damaged;
	int selected; /* passes the command line's filters */
};

struct scan_result {
	struct nsr_vol_label label;
	struct scan_ss *ss;
	size_t n, cap;
	unsigned damage_reports; /* damage seen (also not tied to a save set) */
	uint64_t damaged_blocks; /* each damaged block once */
};

/* scan_volume - open dev's volume and scan it all into res (caller frees
 * with scan_result_release).  Damage is printed to stderr as it is
 * found, naming the save set and volume.  NSR_OK if the volume was read
 * without damage, the first damage code otherwise (res is complete
 * either way), or an error opening the volume (why says it). */
int scan_volume(struct nsr_dev *dev, struct scan_result *res,
		struct nsr_buf *why);
/* scan_result_release - free what scan_volume allocated. */
void scan_result_release(struct scan_result *res);
/* scan_flag - the one-letter note of a fragment: E end here, B begins
 * here and continues elsewhere, C continued from another volume. */
char scan_flag(const struct scan_ss *s);
/* scan_level_letter - "full" -> 'f', "incr" -> 'i', "5" -> '5', ad hoc
 * (manual / empty) -> ' '. */
char scan_level_letter(const char *level);

/* scan_device - open device (type) read-only into *dev (the caller closes
 * it) and scan its volume into res; problems are printed to stderr after
 * "prog: ".  NSR_OK, or the scan's damage code with res complete (*why
 * given then), or 1: nothing could be read (printed). */
int scan_device(const char *prog, enum nsr_dev_type type,
		const char *device, struct nsr_dev **dev,
		struct scan_result *res, struct nsr_buf *why);
/* scan_fragment - the media database's fragment record of s on the
 * scanned volume, as clone cloneid. */
struct mmdb_fragment;
void scan_fragment(const struct scan_result *res, const struct scan_ss *s,
		   uint32_t cloneid, struct mmdb_fragment *f);

/* scan_guess_type - a device named by path alone: a directory is an
 * AFTD, /dev/... a tape, else a vtape. */
enum nsr_dev_type scan_guess_type(const char *path);

#endif /* SCANNER_SCAN_H */
