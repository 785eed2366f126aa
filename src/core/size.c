/*
 * size.c - byte counts as administrators write them (size.h).
 */
#include "nsr/compat.h"

#include <ctype.h>
#include <limits.h>

#include "nsr/err.h"
#include "nsr/size.h"

/* nsr_size_parse - a byte count with an optional 1024-based unit. */
int nsr_size_parse(const char *text, long long *out)
{
	static const char units[] = "BKMGTP";
	const char *p = text;
	unsigned long long whole = 0, frac = 0, fscale = 1;
	int shift = 0;
	const char *u;

	while (isspace((unsigned char)*p))
		p++;
	if (!isdigit((unsigned char)*p))
		return NSR_ERR_SYNTAX;
	for (; isdigit((unsigned char)*p); p++) {
		if (whole > (ULLONG_MAX - 9) / 10)
			return NSR_ERR_TOOBIG;
		whole = whole * 10 + (unsigned)(*p - '0');
	}
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return NSR_ERR_SYNTAX;
		for (; isdigit((unsigned char)*p); p++) {
			if (fscale < 1000000) {	/* six digits are plenty */
				frac = frac * 10 + (unsigned)(*p - '0');
				fscale *= 10;
			}
		}
	}
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p) {
		u = strchr(units, toupper((unsigned char)*p));
		if (!u)
			return NSR_ERR_SYNTAX;
		shift = (int)(u - units) * 10;
		p++;
		if (shift && (*p == 'B' || *p == 'b'))
			p++;
		while (isspace((unsigned char)*p))
			p++;
		if (*p)
			return NSR_ERR_SYNTAX;
	}
	if (shift && whole > (1ULL << (63 - shift)))
		return NSR_ERR_TOOBIG;
	whole <<= shift;
	/* frac * 2^shift / fscale in two steps: frac < 2^20, so frac << 50
	 * would wrap ("0.123456 PB") */
	if (shift > 40)
		frac = ((frac << 40) / fscale << (shift - 40)) +
		       (((frac << 40) % fscale) << (shift - 40)) / fscale;
	else
		frac = (frac << shift) / fscale;
	if (whole + frac < whole ||
	    whole + frac > (unsigned long long)LLONG_MAX)
		return NSR_ERR_TOOBIG;
	*out = (long long)(whole + frac);
	return NSR_OK;
}
