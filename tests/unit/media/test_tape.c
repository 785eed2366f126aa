/*
 * test_tape.c - what the st driver says about nodes that are not tape
 * drives (the drive itself is tested in the tape lab, tests/tape/).
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/dev.h"
#include "nsr/err.h"
#include "nsr_test.h"

/* open_tape - nsr_dev_open as a tape; the error message into msg. */
static int open_tape(const char *path, int read_only, char *msg, size_t cap)
{
	struct nsr_dev_opts o;
	struct nsr_dev *dev = NULL;
	struct nsr_buf why;
	int rc;

	memset(&o, 0, sizeof(o));
	o.read_only = read_only;
	nsr_buf_init(&why, 0);
	rc = nsr_dev_open(NSR_DEV_TAPE, path, &o, &dev, &why);
	assert_true(rc == NSR_OK || dev == NULL);
	snprintf(msg, cap, "%s", why.len ? why.data : "");
	nsr_buf_release(&why);
	nsr_dev_close(dev);
	return rc;
}

static void test_not_a_tape(void **state)
{
	char *dir = nsr_test_tmpdir("tape-not");
	char path[600], msg[600];
	int fd;

	NSR_UNUSED(state);
	/* A character device that takes no tape commands. */
	assert_int_equal(open_tape("/dev/null", 0, msg, sizeof(msg)),
			 NSR_ERR_INVAL);
	assert_non_null(strstr(msg, "not a tape drive"));
	/* A plain file. */
	snprintf(path, sizeof(path), "%s/file", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(open_tape(path, 1, msg, sizeof(msg)), NSR_ERR_INVAL);
	assert_non_null(strstr(msg, "not a tape drive"));
	/* Nothing there. */
	snprintf(path, sizeof(path), "%s/nst9", dir);
	assert_int_equal(open_tape(path, 0, msg, sizeof(msg)),
			 NSR_ERR_NOTFOUND);
	assert_non_null(strstr(msg, "no such tape device"));
	nsr_test_rmrf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_not_a_tape),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
