/*
 * level.c - backup level names (level.h).
 */
#include "nsr/compat.h"

#include "nsr/level.h"

static const char *const level_names[] = {
	"full", "1", "2", "3", "4", "5", "6", "7", "8", "9", "incr", "manual"
};

/* nsr_level_name - mminfo spelling of a level. */
const char *nsr_level_name(unsigned level)
{
	return level < NSR_ARRAY_SIZE(level_names) ? level_names[level] : "?";
}

/* nsr_level_parse - level from its name; -1 if unknown. */
int nsr_level_parse(const char *s)
{
	for (size_t i = 0; i < NSR_ARRAY_SIZE(level_names); i++)
		if (strcmp(level_names[i], s) == 0)
			return (int)i;
	return -1;
}
