/*
 * fuzz_forkserver.c - the request decoder of the fork server
 * (nsr/forkserver.h; nsrsnmd's mover template reads it).  The input is
 * a request as it would arrive; byte 0 (when there is one) also sets
 * the room the decoder gets (1 .. 256 argument slots).  An accepted
 * request must agree with a second, plain reading (every argument ends
 * in a NUL, the first is not empty, it fits the slots and
 * NSR_FORKSERVER_ARGS_MAX) and pack back to the same bytes; a refused
 * one must be one the reading refuses.  A disagreement aborts.
 */
#include "nsr/compat.h"

#include "nsr/forkserver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ref_count - the plain reading: the number of arguments, or -1. */
static int ref_count(const uint8_t *d, size_t n, size_t max)
{
	size_t args = 0;

	if (n == 0 || d[n - 1] != 0 || d[0] == 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		args += d[i] == 0;
	if (args + 1 > max || args + 1 > NSR_FORKSERVER_ARGS_MAX)
		return -1;
	return (int)args;
}

/* LLVMFuzzerTestOneInput - one request. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[257], *buf, *back;
	size_t max = size ? (size_t)data[0] + 1 : 8, len;
	int n, ref;

	if (size > NSR_FORKSERVER_MSG_MAX)
		return 0;
	buf = malloc(size + 1);
	back = malloc(NSR_FORKSERVER_MSG_MAX);
	if (!buf || !back)
		abort();
	memcpy(buf, data, size);
	ref = ref_count(data, size, max);
	n = nsr_forkserver_unpack(buf, size, argv, max);
	if (n != ref)
		abort();
	if (n >= 0) {
		if (argv[n] != NULL)
			abort();
		len = nsr_forkserver_pack(argv, back, NSR_FORKSERVER_MSG_MAX);
		if (len != size || memcmp(back, data, size) != 0)
			abort();
	}
	free(buf);
	free(back);
	return 0;
}
