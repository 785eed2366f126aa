/*
 * fuzz_expiry.c - NSR policy periods and numbers (nsr_expiry_policy_parse)
 * and preconfigured policy names (nsr_expiry_builtin).  The input up to
 * its first NUL is the period (and the name), the rest up to the next
 * NUL the number of periods.  The parse must agree with a reference
 * reading (one of Day, Week, Month, Year with an optional s in any case;
 * the number empty or a decimal 1..1000000), and a parsed policy added
 * to a time must move it forward.
 */
#include "nsr/compat.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nsr/err.h"
#include "nsr/expiry.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ref_period - the reference reading of a period: 1 if accepted. */
static int ref_period(const char *s)
{
	static const char *const w[] = { "day", "week", "month", "year" };

	for (size_t i = 0; i < 4; i++) {
		size_t l = strlen(w[i]);

		if (strncasecmp(s, w[i], l) == 0 &&
		    (s[l] == '\0' || (tolower((unsigned char)s[l]) == 's' &&
				      s[l + 1] == '\0')))
			return 1;
	}
	return 0;
}

/* ref_number - the reference reading of a number: its value, 0 if
 * refused. */
static long ref_number(const char *s)
{
	long v = 0;

	if (!*s)
		return 1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > 1000000)
			return 0;
		v = v * 10 + (*s - '0');
	}
	return v >= 1 && v <= 1000000 ? v : 0;
}

/* LLVMFuzzerTestOneInput - one period and number. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 2), *num;
	struct nsr_expiry_policy p;
	long want;
	int rc;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = buf[size + 1] = '\0';
	num = buf + strlen(buf) + (strlen(buf) < size ? 1 : 0);
	if (num > buf + size)
		num = buf + size;
	want = ref_period(buf) ? ref_number(num) : 0;
	rc = nsr_expiry_policy_parse(buf, num, &p);
	if ((rc == NSR_OK) != (want != 0) || (rc != NSR_OK && rc !=
					      NSR_ERR_SYNTAX))
		abort();
	if (rc == NSR_OK && (p.count != want ||
			     nsr_expiry_add(&p, 1700000000) <= 1700000000))
		abort();
	rc = nsr_expiry_builtin(buf, &p);
	if (rc == NSR_OK && (p.count < 1 || nsr_expiry_add(&p, 1700000000) <=
						    1700000000))
		abort();
	if (rc != NSR_OK && rc != NSR_ERR_NOTFOUND)
		abort();
	free(buf);
	return 0;
}
