/*
 * fuzz_mounts.c - mount tables as nsrexecd reads them to expand the save
 * set "All" (mounts.h).  Whatever the bytes, the result is an error or
 * at most NSR_MOUNTS_MAX distinct absolute paths of local file systems.
 */
#include "nsr/compat.h"

#include "nsr/err.h"
#include "nsr/mounts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nsr_mounts m;
	int rc = nsr_mounts_parse((const char *)data, size, &m);

	if (m.n > NSR_MOUNTS_MAX)
		abort();
	for (size_t i = 0; i < m.n; i++) {
		if (m.path[i][0] != '/')
			abort();
		for (size_t j = 0; j < i; j++)
			if (strcmp(m.path[i], m.path[j]) == 0)
				abort();
	}
	if (rc != NSR_OK && rc != NSR_ERR_CORRUPT && rc != NSR_ERR_LIMIT &&
	    rc != NSR_ERR_NOMEM)
		abort();
	nsr_mounts_free(&m);
	return 0;
}
