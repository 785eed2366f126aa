/*
 * mmreport.h - mminfo's report layouts: -r reportspec, the built-in
 * reports (default, -v, -V, -m, -S, -B) and -x export formats, printing
 * media database rows (mmdb.h) as text.
 *
 * A reportspec is a comma-separated list of attribute names (mmdb_attrs[]),
 * each optionally followed by a column width in parentheses:
 * "volume(12),client,name,ssid,totalsize".  A header line with each
 * column's title comes first; without a width a column is as wide as the
 * attribute's default width or its title, whichever is more.  Values
 * longer than their column are cut, except in the last column when no
 * width was given for it.  Time
 * columns show MM/DD/YY, or MM/DD/YY HH:MM:SS AM/PM when the column is at
 * least 22 wide ("savetime(22)"); 0 prints as "undef".  Sizes (totalsize,
 * sumsize, written, read, capacity) are scaled to B, KB, MB, GB, TB or PB,
 * keeping at most four digits ("104 MB", "2540 GB").  "ssid(53)" prints
 * the long save set id (ssid/cloneid style with the 16-byte id in hex).
 *
 * Built-in layouts (columns):
 *   DEFAULT  volume client date size level name
 *   VERBOSE  volume type client date time size ssid fl lvl name      (-v)
 *   FRAGS    volume client date time size ssid fl lvl file record
 *            volid name                                             (-V)
 *   MEDIA    state volume written (%) expires read mounts capacity (-m)
 *   BOOT     date time level ssid file record volume               (-B)
 *   SUPER    a multi-line dump of every save set attribute, clone
 *            instance and fragment (-S)
 * MEDIA rows are volumes (nsr_mmreport_volume); all others are save set
 * rows (nsr_mmreport_row).  A custom report whose columns are all volume
 * attributes (pool counts as one) is a volume report too.
 *
 * Export (-x): "c<sep>" prints the header and the values separated by the
 * character <sep>, without padding or cutting, quoting a value with "..."
 * (doubling inner quotes) when it contains <sep>, a quote or a newline;
 * "j" (our extension) prints one JSON object per row, keyed by attribute
 * name, with sizes and counts as numbers, times as epoch seconds, flags as
 * true/false, no header.
 *
 * Functions return NSR_OK or a negative nsr_err; output is appended to
 * the caller's nsr_buf.
 */
#ifndef NSR_MMREPORT_H
#define NSR_MMREPORT_H

#include <stddef.h>

#include "nsr/mmquery.h"

struct nsr_buf;
struct mmdb_ss_row;
struct mmdb_volume;
struct nsr_mmreport;

enum nsr_mmreport_layout {
	NSR_MMREPORT_DEFAULT,
	NSR_MMREPORT_VERBOSE,
	NSR_MMREPORT_FRAGS,
	NSR_MMREPORT_MEDIA,
	NSR_MMREPORT_BOOT,
	NSR_MMREPORT_SUPER,
	NSR_MMREPORT_CUSTOM	/* from a -r reportspec */
};

/* nsr_mmreport_new - a report with a built-in layout (spec NULL) or, for
 * NSR_MMREPORT_CUSTOM, from a reportspec.  NSR_OK; NSR_ERR_SYNTAX with err
 * (offset into spec, message listing the known names for an unknown one);
 * NSR_ERR_NOMEM.  err may be NULL. */
int nsr_mmreport_new(enum nsr_mmreport_layout layout, const char *spec,
		     struct nsr_mmreport **out, struct nsr_mmquery_error *err);
/* nsr_mmreport_free - free the report (NULL ok). */
void nsr_mmreport_free(struct nsr_mmreport *r);

/* nsr_mmreport_set_export - -x spec: "c," / "c;" / "c\t" or "j".
 * NSR_OK or NSR_ERR_SYNTAX (message in err). */
int nsr_mmreport_set_export(struct nsr_mmreport *r, const char *xspec,
			    struct nsr_mmquery_error *err);

/* nsr_mmreport_is_volume - 1 if rows are volumes (MEDIA, or a custom
 * report of volume attributes only). */
int nsr_mmreport_is_volume(const struct nsr_mmreport *r);

/* nsr_mmreport_header - the title line (nothing for SUPER and JSON). */
int nsr_mmreport_header(struct nsr_mmreport *r, struct nsr_buf *out);
/* nsr_mmreport_row - one save set row. */
int nsr_mmreport_row(struct nsr_mmreport *r, const struct mmdb_ss_row *row,
		     struct nsr_buf *out);
/* nsr_mmreport_volume - one volume row (volume reports only;
 * NSR_ERR_INVAL otherwise). */
int nsr_mmreport_volume(struct nsr_mmreport *r, const struct mmdb_volume *v,
			struct nsr_buf *out);

/* nsr_mmreport_size - append a scaled size ("104 MB"); min_unit 0 = B,
 * 1 = KB (the media report never shows bytes). */
int nsr_mmreport_size(unsigned long long bytes, int min_unit,
		      struct nsr_buf *out);

#endif /* NSR_MMREPORT_H */
