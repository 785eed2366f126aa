/*
 * browse_int.h - what the browse module's files share.
 */
#ifndef NSR_BROWSE_INT_H
#define NSR_BROWSE_INT_H

#include <stddef.h>
#include <stdint.h>

/* A save set picked from a client's index. */
struct browse_ss {
	uint64_t ssid;
	int64_t savetime;
};

/* browse_date - t as "Tue Nov 24 10:00:00 2026" (local time). */
void browse_date(int64_t t, char *out, size_t n);
/* browse_type_name - "file", "directory", ... of an nsr_asm_ftype. */
const char *browse_type_name(int type);

#endif /* NSR_BROWSE_INT_H */
