/*
 * attrs.c - the media database attribute table (names as mminfo spells
 * them, types, scopes, default report titles and widths), level names,
 * media families and the flag letter strings.  Pure data and small pure
 * functions; the mminfo query parser and report writer are driven by it.
 */
#include "nsr/compat.h"

#include "nsr/mmdb.h"

#define A(id, name, title, type, scope, width) \
	[id] = { id, name, title, type, scope, width }

const struct mmdb_attr_info mmdb_attrs[MMDB_A_COUNT] = {
	A(MMDB_A_SSID, "ssid", "ssid", MMDB_T_NUMBER, MMDB_S_SAVESET, 11),
	A(MMDB_A_CLONEID, "cloneid", "clone id", MMDB_T_NUMBER, MMDB_S_CLONE,
	  11),
	A(MMDB_A_NAME, "name", "name", MMDB_T_STRING, MMDB_S_SAVESET, 31),
	A(MMDB_A_CLIENT, "client", "client", MMDB_T_STRING, MMDB_S_SAVESET,
	  17),
	A(MMDB_A_LEVEL, "level", "lvl", MMDB_T_STRING, MMDB_S_SAVESET, 6),
	A(MMDB_A_SAVETIME, "savetime", "date", MMDB_T_TIME, MMDB_S_SAVESET,
	  9),
	A(MMDB_A_NSAVETIME, "nsavetime", "save time", MMDB_T_NUMBER,
	  MMDB_S_SAVESET, 11),
	A(MMDB_A_SSCREATE, "sscreate", "ss created", MMDB_T_TIME,
	  MMDB_S_SAVESET, 9),
	A(MMDB_A_SSCOMP, "sscomp", "ss completed", MMDB_T_TIME,
	  MMDB_S_SAVESET, 9),
	A(MMDB_A_SSBROWSE, "ssbrowse", "browse time", MMDB_T_TIME,
	  MMDB_S_SAVESET, 9),
	A(MMDB_A_SSRETENT, "ssretent", "retent time", MMDB_T_TIME,
	  MMDB_S_SAVESET, 9),
	A(MMDB_A_TOTALSIZE, "totalsize", "total", MMDB_T_NUMBER,
	  MMDB_S_SAVESET, 12),
	A(MMDB_A_NFILES, "nfiles", "files", MMDB_T_NUMBER, MMDB_S_SAVESET,
	  8),
	A(MMDB_A_SSFLAGS, "ssflags", "ssflags", MMDB_T_FLAGS, MMDB_S_SAVESET,
	  7),
	A(MMDB_A_SUMFLAGS, "sumflags", "fl", MMDB_T_FLAGS, MMDB_S_FRAG, 3),
	A(MMDB_A_SUMSIZE, "sumsize", "size", MMDB_T_NUMBER, MMDB_S_FRAG, 12),
	A(MMDB_A_POOL, "pool", "pool", MMDB_T_STRING, MMDB_S_SAVESET, 15),
	A(MMDB_A_GROUP, "group", "group", MMDB_T_STRING, MMDB_S_SAVESET, 15),
	A(MMDB_A_PSSID, "pssid", "pssid", MMDB_T_NUMBER, MMDB_S_SAVESET, 11),
	A(MMDB_A_ANCHOR, "anchor", "anchor time", MMDB_T_TIME,
	  MMDB_S_SAVESET, 9),
	A(MMDB_A_CLRETENT, "clretent", "clone retent", MMDB_T_TIME,
	  MMDB_S_CLONE, 9),
	A(MMDB_A_CLFLAGS, "clflags", "clflags", MMDB_T_FLAGS, MMDB_S_CLONE,
	  7),
	A(MMDB_A_CLTIME, "cltime", "clone time", MMDB_T_TIME, MMDB_S_CLONE,
	  9),
	A(MMDB_A_COPIES, "copies", "copies", MMDB_T_NUMBER, MMDB_S_SAVESET,
	  6),
	A(MMDB_A_FRAGFLAGS, "fragflags", "fragflags", MMDB_T_FLAGS,
	  MMDB_S_FRAG, 9),
	A(MMDB_A_VOLUME, "volume", "volume", MMDB_T_STRING, MMDB_S_VOLUME,
	  15),
	A(MMDB_A_VOLID, "volid", "volid", MMDB_T_STRING, MMDB_S_VOLUME, 32),
	A(MMDB_A_TYPE, "type", "type", MMDB_T_STRING, MMDB_S_VOLUME, 12),
	A(MMDB_A_FAMILY, "family", "family", MMDB_T_STRING, MMDB_S_VOLUME,
	  6),
	A(MMDB_A_WRITTEN, "written", "written", MMDB_T_NUMBER, MMDB_S_VOLUME,
	  10),
	A(MMDB_A_PCTUSED, "%used", "(%)", MMDB_T_NUMBER, MMDB_S_VOLUME, 5),
	A(MMDB_A_READ, "read", "read", MMDB_T_NUMBER, MMDB_S_VOLUME, 10),
	A(MMDB_A_LOCATION, "location", "location", MMDB_T_STRING,
	  MMDB_S_VOLUME, 15),
	A(MMDB_A_CAPACITY, "capacity", "capacity", MMDB_T_NUMBER,
	  MMDB_S_VOLUME, 10),
	A(MMDB_A_VOLRETENT, "volretent", "expires", MMDB_T_TIME,
	  MMDB_S_VOLUME, 9),
	A(MMDB_A_STATE, "state", "state", MMDB_T_FLAGS, MMDB_S_VOLUME, 5),
	A(MMDB_A_MOUNTS, "mounts", "mounts", MMDB_T_NUMBER, MMDB_S_VOLUME, 6),
	A(MMDB_A_OLABEL, "olabel", "first labeled", MMDB_T_TIME,
	  MMDB_S_VOLUME, 9),
	A(MMDB_A_LABELED, "labeled", "labeled", MMDB_T_TIME, MMDB_S_VOLUME,
	  9),
	A(MMDB_A_RECYCLED, "recycled", "recycled", MMDB_T_NUMBER,
	  MMDB_S_VOLUME, 8),
	A(MMDB_A_DEVICE, "device", "device", MMDB_T_STRING, MMDB_S_VOLUME,
	  15),
	A(MMDB_A_VOLBLOCKSIZE, "volblocksize", "block size", MMDB_T_NUMBER,
	  MMDB_S_VOLUME, 10),
	A(MMDB_A_NEXTFILE, "nextfile", "next file", MMDB_T_NUMBER,
	  MMDB_S_VOLUME, 9),
	A(MMDB_A_NEXTREC, "nextrec", "next rec", MMDB_T_NUMBER,
	  MMDB_S_VOLUME, 9),
	A(MMDB_A_INCOMPLETE, "incomplete", "incomplete", MMDB_T_FLAG,
	  MMDB_S_SAVESET, 10),
	A(MMDB_A_SUSPECT, "suspect", "suspect", MMDB_T_FLAG, MMDB_S_SAVESET,
	  7),
	A(MMDB_A_SSRECYCLE, "ssrecycle", "ssrecycle", MMDB_T_FLAG,
	  MMDB_S_SAVESET, 9),
	A(MMDB_A_BROWSABLE, "browsable", "browsable", MMDB_T_FLAG,
	  MMDB_S_SAVESET, 9),
	A(MMDB_A_RECOVERABLE, "recoverable", "recoverable", MMDB_T_FLAG,
	  MMDB_S_SAVESET, 11),
	A(MMDB_A_INPROGRESS, "inprogress", "in progress", MMDB_T_FLAG,
	  MMDB_S_SAVESET, 11),
	A(MMDB_A_COMPLETE, "complete", "complete", MMDB_T_FLAG,
	  MMDB_S_SAVESET, 8),
	A(MMDB_A_ABORTED, "aborted", "aborted", MMDB_T_FLAG, MMDB_S_SAVESET,
	  7),
	A(MMDB_A_FULL, "full", "full", MMDB_T_FLAG, MMDB_S_VOLUME, 4),
	A(MMDB_A_RECYCLABLE, "recyclable", "recyclable", MMDB_T_FLAG,
	  MMDB_S_VOLUME, 10),
	A(MMDB_A_READONLY, "readonly", "readonly", MMDB_T_FLAG, MMDB_S_VOLUME,
	  8),
	A(MMDB_A_MANUAL, "manual", "manual", MMDB_T_FLAG, MMDB_S_VOLUME, 6),
};

/* mmdb_attr_lookup - attribute by name. */
const struct mmdb_attr_info *mmdb_attr_lookup(const char *name)
{
	for (size_t i = 0; i < MMDB_A_COUNT; i++)
		if (strcmp(mmdb_attrs[i].name, name) == 0)
			return &mmdb_attrs[i];
	return NULL;
}

/* mmdb_volume_family - "disk" for disk-like media types, else "tape". */
const char *mmdb_volume_family(const char *type)
{
	static const char *const disk[] = {
		"adv_file", "Data Domain", "file", "disk"
	};

	for (size_t i = 0; i < NSR_ARRAY_SIZE(disk); i++)
		if (strcmp(type, disk[i]) == 0)
			return "disk";
	return "tape";
}

/* mmdb_volume_pctused - percentage of capacity written. */
unsigned mmdb_volume_pctused(const struct mmdb_volume *vol)
{
	if (vol->flags & MMDB_VOL_FULL)
		return 100;
	if (vol->capacity == 0)
		return 0;
	if (vol->written >= vol->capacity)
		return 100;
	return (unsigned)(vol->written * 100 / vol->capacity);
}

/* mmdb_ss_flags_str - ssflags letters in NetWorker order. */
void mmdb_ss_flags_str(uint32_t flags, char *buf, size_t len)
{
	static const struct {
		uint32_t bit;
		char c;
	} map[] = {
		{ MMDB_SS_CONTINUED, 'C' }, { MMDB_SS_VALID, 'v' },
		{ MMDB_SS_RECOVERABLE, 'r' }, { MMDB_SS_RECYCLABLE, 'E' },
		{ MMDB_SS_NDMP, 'N' }, { MMDB_SS_INCOMPLETE, 'i' },
		{ MMDB_SS_RAW, 'R' }, { MMDB_SS_SNAPSHOT, 'P' },
		{ MMDB_SS_COVER, 'K' }, { MMDB_SS_INPROGRESS, 'I' },
		{ MMDB_SS_FINISHED, 'F' }, { MMDB_SS_CHECKPOINT, 'k' },
		{ MMDB_SS_SUSPECT, 's' },
	};
	size_t n = 0;

	if (len == 0)
		return;
	for (size_t i = 0; i < NSR_ARRAY_SIZE(map) && n + 1 < len; i++)
		if (flags & map[i].bit)
			buf[n++] = map[i].c;
	buf[n] = '\0';
}

/* mmdb_sumflags_str - part letter, status letter, optional type letter. */
void mmdb_sumflags_str(const struct mmdb_ss_row *row, char *buf, size_t len)
{
	char s[4];
	uint32_t f = row->ss.flags, ff = row->frag_flags;
	size_t n = 0;

	if (len == 0)
		return;
	if ((ff & MMDB_FRAG_COMPLETE) ||
	    (ff & (MMDB_FRAG_HEAD | MMDB_FRAG_TAIL)) ==
		    (MMDB_FRAG_HEAD | MMDB_FRAG_TAIL))
		s[n++] = 'c';
	else if (ff & MMDB_FRAG_HEAD)
		s[n++] = 'h';
	else if (ff & MMDB_FRAG_TAIL)
		s[n++] = 't';
	else if (ff & MMDB_FRAG_MIDDLE)
		s[n++] = 'm';
	else
		s[n++] = 'c';
	if (f & MMDB_SS_INPROGRESS)
		s[n++] = 'I';
	else if (f & MMDB_SS_ABORTED)
		s[n++] = 'a';
	else if (f & MMDB_SS_INCOMPLETE)
		s[n++] = 'i';
	else if (f & MMDB_SS_RECYCLABLE)
		s[n++] = 'E';
	else if (f & MMDB_SS_SCANNED)
		s[n++] = 'S';
	else if (f & MMDB_SS_BROWSABLE)
		s[n++] = 'b';
	else
		s[n++] = 'r';
	if (f & MMDB_SS_NDMP)
		s[n++] = 'N';
	else if (f & MMDB_SS_RAW)
		s[n++] = 'R';
	else if (f & MMDB_SS_SNAPSHOT)
		s[n++] = 'P';
	s[n] = '\0';
	snprintf(buf, len, "%s", s);
}
