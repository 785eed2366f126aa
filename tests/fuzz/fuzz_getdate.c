/*
 * fuzz_getdate.c - nsr_getdate time expressions typed by users (mminfo -t,
 * -q savetime>=...).  Garbage must give an error with an offset inside
 * the text, never a crash.
 */
#include "nsr/compat.h"

#include <time.h>

#include "nsr/err.h"
#include "nsr/getdate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nsr_getdate_error err;
	time_t a = 0, b = 0;
	char *text = strndup((const char *)data, size);
	int rc;

	if (!text)
		return 0;
	setenv("TZ", "UTC", 0);
	rc = nsr_getdate_err(text, (time_t)1717597815, &a, &err);
	if (rc == NSR_ERR_SYNTAX && err.offset > strlen(text))
		abort();
	/* The same input and now always give the same answer. */
	if (rc == NSR_OK &&
	    (nsr_getdate(text, (time_t)1717597815, &b) != NSR_OK || a != b))
		abort();
	free(text);
	return 0;
}
