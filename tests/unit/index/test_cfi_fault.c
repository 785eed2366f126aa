/*
 * test_cfi_fault.c - fault injection for the client file index: write,
 * fsync and rename are wrapped at link time and fail at the N-th call.
 * For N = 1, 2, 3, ... a commit of a new save set and the delete of an
 * old one run with the fault armed; afterwards the index is reopened and
 * must pass nsr_cfi_check(), hold the new save set whole or not at all,
 * and agree with what the calls reported.  The loop ends when an
 * operation sequence completes without reaching the fault.  The spill
 * file of query results gets the same loop: a query whose spill write
 * fails fails whole.
 */
#include "nsr/compat.h"

#include <unistd.h>

#include "nsr/asm.h"
#include "nsr/cfi.h"
#include "nsr/err.h"
#include "nsr_test.h"
#include "cfi_test.h"

ssize_t __real_write(int fd, const void *p, size_t n);
int __real_fsync(int fd);
int __real_rename(const char *a, const char *b);
ssize_t __wrap_write(int fd, const void *p, size_t n);
int __wrap_fsync(int fd);
int __wrap_rename(const char *a, const char *b);

static int fault_at; /* 0 = off */
static int calls;
static int fault_errno = ENOSPC; /* what a failed write says */

/* fault - count a call; 1 when this one must fail. */
static int fault(void)
{
	return fault_at != 0 && ++calls == fault_at;
}

/* __wrap_write - write, or a full disk at the chosen call. */
ssize_t __wrap_write(int fd, const void *p, size_t n)
{
	if (fault()) {
		/* a short write first, as a filling disk does */
		if (n > 1 && __real_write(fd, p, n / 2) > 0) {
			errno = fault_errno;
			return -1;
		}
		errno = fault_errno;
		return -1;
	}
	return __real_write(fd, p, n);
}

/* __wrap_fsync - fsync, or an I/O error at the chosen call. */
int __wrap_fsync(int fd)
{
	if (fault()) {
		errno = EIO;
		return -1;
	}
	return __real_fsync(fd);
}

/* __wrap_rename - rename, or an I/O error at the chosen call. */
int __wrap_rename(const char *a, const char *b)
{
	if (fault()) {
		errno = EIO;
		return -1;
	}
	return __real_rename(a, b);
}

#define NENT 3000

/* add_entries - NENT entries to save set ssid in batches. */
static int add_entries(struct nsr_cfi *c, uint64_t ssid)
{
	struct nsr_cfi_entry e[100];
	char paths[100][48];
	int rc = NSR_OK;

	for (int i = 0; i < NENT && rc == NSR_OK; i += 100) {
		for (int k = 0; k < 100; k++) {
			snprintf(paths[k], sizeof(paths[k]),
				 "/data/some/longer/dir/file%06d", i + k);
			memset(&e[k], 0, sizeof(e[k]));
			e[k].path = paths[k];
			e[k].type = NSR_ASM_REG;
			e[k].mode = 0644;
			e[k].size = (uint64_t)(i + k);
		}
		rc = nsr_cfi_add(c, ssid, e, 100);
	}
	return rc;
}

/* present - entries of ssid, -1 if it is not committed. */
static int present(struct nsr_cfi *c, uint64_t ssid)
{
	int n = 0;
	int rc = nsr_cfi_entries(c, ssid, cfi_test_count, &n);

	if (rc == NSR_ERR_NOTFOUND)
		return -1;
	assert_int_equal(rc, NSR_OK);
	return n;
}

/* reopen_healthy - the index of "cl" under root opened for writing,
 * after a fault: it must check healthy. */
static struct nsr_cfi *reopen_healthy(const char *root)
{
	struct nsr_cfi *c = NULL;
	size_t problems = 99;

	assert_int_equal(nsr_cfi_open(&c, root, "cl", 0), NSR_OK);
	assert_int_equal(nsr_cfi_check(c, NULL, NULL, &problems), NSR_OK);
	assert_int_equal(problems, 0);
	return c;
}

/* round_end - close c and remove root (freed) after a fault round. */
static void round_end(struct nsr_cfi *c, char *root)
{
	nsr_cfi_close(c);
	nsr_test_rmrf(root);
	free(root);
}

/* test_faults_keep_index_consistent - the fault loop. */
static void test_faults_keep_index_consistent(void **state)
{
	int last_calls = 0, rounds = 0;

	NSR_UNUSED(state);
	for (int n = 1; n < 1000; n++) {
		char *root = nsr_test_tmpdir("cfifault");
		struct nsr_cfi *c = NULL;
		int rc_commit, rc_delete = NSR_OK, tried_delete = 0, has2, has1;

		/* a committed save set 1, without faults */
		assert_int_equal(nsr_cfi_open(&c, root, "cl", NSR_CFI_CREATE),
				 NSR_OK);
		assert_int_equal(nsr_cfi_begin(c, 1, 100, "/data"), NSR_OK);
		assert_int_equal(add_entries(c, 1), NSR_OK);
		assert_int_equal(nsr_cfi_commit(c, 1), NSR_OK);

		/* save set 2 and the purge of 1, with the fault armed */
		calls = 0;
		fault_at = n;
		rc_commit = nsr_cfi_begin(c, 2, 200, "/data");
		if (rc_commit == NSR_OK)
			rc_commit = add_entries(c, 2);
		if (rc_commit == NSR_OK)
			rc_commit = nsr_cfi_commit(c, 2);
		if (rc_commit != NSR_OK && calls >= n) {
			/* a caller retrying after the failure must not get a
			 * damaged save set committed */
			fault_at = 0;
			rc_commit = nsr_cfi_commit(c, 2);
			fault_at = n;
		}
		if (rc_commit != NSR_OK)
			nsr_cfi_abort(c, 2);
		if (rc_commit == NSR_OK) {
			tried_delete = 1;
			rc_delete = nsr_cfi_delete(c, 1);
		}
		fault_at = 0;
		last_calls = calls;
		nsr_cfi_close(c);

		/* reopen: consistent, and no less than what was promised */
		c = reopen_healthy(root);
		has2 = present(c, 2);
		has1 = present(c, 1);
		assert_true(has2 == -1 || has2 == NENT);
		assert_true(has1 == -1 || has1 == NENT);
		if (rc_commit == NSR_OK)
			assert_int_equal(has2, NENT);
		if (!tried_delete)
			assert_int_equal(has1, NENT);
		else if (rc_delete == NSR_OK)
			assert_int_equal(has1, -1);
		round_end(c, root);
		rounds++;
		if (last_calls < n) /* the fault was never reached: done */
			break;
	}
	/* the sequence made several faultable calls, each one tried */
	assert_true(rounds > 5);
	assert_true(last_calls < rounds);
}

/* test_faults_delete_many - save sets 1 and 2 of three removed in one
 * call (with an absent ssid) while the N-th write, fsync or rename
 * fails, for N = 1, 2, ...: a failure leaves the handle stuck
 * (NSR_ERR_STATE) and the index, reopened, healthy with both or
 * neither of them (one catalogue replacement), save set 3 intact;
 * a success leaves neither. */
static void test_faults_delete_many(void **state)
{
	const uint64_t gone[] = {2, 9, 1};
	int rounds = 0;

	NSR_UNUSED(state);
	for (int n = 1; n < 1000; n++) {
		char *root = nsr_test_tmpdir("cfifault");
		struct nsr_cfi *c = NULL;
		size_t removed = 99;
		int rc, has1, has2;

		assert_int_equal(nsr_cfi_open(&c, root, "cl", NSR_CFI_CREATE),
				 NSR_OK);
		for (uint64_t s = 1; s <= 3; s++) {
			assert_int_equal(nsr_cfi_begin(c, s, 100 * (int64_t)s,
						       "/data"),
					 NSR_OK);
			assert_int_equal(add_entries(c, s), NSR_OK);
			assert_int_equal(nsr_cfi_commit(c, s), NSR_OK);
		}
		calls = 0;
		fault_at = n;
		rc = nsr_cfi_delete_many(c, gone, 3, &removed);
		fault_at = 0;
		if (rc != NSR_OK) {
			assert_int_equal(removed, 0);
			assert_int_equal(nsr_cfi_error(c), NSR_ERR_STATE);
			assert_int_equal(nsr_cfi_delete_many(c, gone, 3,
							     &removed),
					 NSR_ERR_STATE);
		} else {
			assert_int_equal(removed, 2);
		}
		nsr_cfi_close(c);

		c = reopen_healthy(root);
		has1 = present(c, 1);
		has2 = present(c, 2);
		assert_int_equal(has1, has2);
		assert_true(has1 == -1 || has1 == NENT);
		if (rc == NSR_OK)
			assert_int_equal(has1, -1);
		assert_int_equal(present(c, 3), NENT);
		round_end(c, root);
		rounds++;
		if (calls < n) /* the fault was never reached: done */
			break;
	}
	/* the write, fsyncs and rename of the one catalogue replacement */
	assert_true(rounds > 2);
}

/* test_sticky_after_catalogue_failure - the handle refuses work. */
static void test_sticky_after_catalogue_failure(void **state)
{
	char *root = nsr_test_tmpdir("cfifault");
	struct nsr_cfi *c = NULL;
	int n = 0;

	NSR_UNUSED(state);
	assert_int_equal(nsr_cfi_open(&c, root, "cl", NSR_CFI_CREATE), NSR_OK);
	assert_int_equal(nsr_cfi_begin(c, 1, 100, "/data"), NSR_OK);
	assert_int_equal(add_entries(c, 1), NSR_OK);
	/* fail the rename that would install the new catalogue: count the
	 * calls of a dry run first */
	calls = 0;
	fault_at = -1; /* count only */
	assert_int_equal(nsr_cfi_commit(c, 1), NSR_OK);
	fault_at = 0;
	nsr_cfi_close(c);
	nsr_test_rmrf(root);
	assert_int_equal(nsr_cfi_open(&c, root, "cl", NSR_CFI_CREATE), NSR_OK);
	assert_int_equal(nsr_cfi_begin(c, 1, 100, "/data"), NSR_OK);
	assert_int_equal(add_entries(c, 1), NSR_OK);
	fault_at = calls - 1; /* the rename comes before the last fsync */
	calls = 0;
	assert_int_equal(nsr_cfi_error(c), NSR_OK);
	assert_int_not_equal(nsr_cfi_commit(c, 1), NSR_OK);
	fault_at = 0;
	/* whatever the commit returned, the handle says it is stuck */
	assert_int_equal(nsr_cfi_error(c), NSR_ERR_STATE);
	assert_int_equal(nsr_cfi_savesets(c, NULL, NULL), NSR_ERR_STATE);
	assert_int_equal(nsr_cfi_begin(c, 3, 1, "/x"), NSR_ERR_STATE);
	assert_int_equal(nsr_cfi_entries(c, 1, cfi_test_count, &n),
			 NSR_ERR_STATE);
	nsr_cfi_close(c);
	assert_int_equal(nsr_cfi_open(&c, root, "cl", 0), NSR_OK);
	assert_int_equal(present(c, 1), -1);
	nsr_cfi_close(c);
	nsr_test_rmrf(root);
	free(root);
}

/* spill_text - every result of r as text, read in pages of 7. */
static void spill_text(const struct nsr_cfi_results *r, struct nsr_buf *b)
{
	size_t n = nsr_cfi_results_count(r);

	nsr_buf_reset(b);
	for (size_t at = 0; at < n; at += 7)
		assert_int_equal(nsr_cfi_results_visit(r, at, 7, cfi_test_show,
						       b),
				 NSR_OK);
}

/* test_spill_write_fails - a save set's entries gathered with every
 * result spilled, the N-th write of the spill file failing (a full
 * disk, then an I/O error) for N = 1, 2, ...: the query fails with that
 * error and no results, never with short ones, the index stays usable,
 * and once the fault is not reached the results are the in-memory
 * ones. */
static void test_spill_write_fails(void **state)
{
	const int errs[] = {ENOSPC, EIO};
	const int codes[] = {NSR_ERR_NOSPACE, NSR_ERR_IO};
	char *root = nsr_test_tmpdir("cfifault");
	struct nsr_cfi *c = NULL;
	struct nsr_cfi_results *r = NULL;
	struct nsr_buf want, got;

	NSR_UNUSED(state);
	nsr_buf_init(&want, 0);
	nsr_buf_init(&got, 0);
	assert_int_equal(nsr_cfi_open(&c, root, "cl", NSR_CFI_CREATE), NSR_OK);
	assert_int_equal(nsr_cfi_begin(c, 1, 100, "/data"), NSR_OK);
	assert_int_equal(add_entries(c, 1), NSR_OK);
	assert_int_equal(nsr_cfi_commit(c, 1), NSR_OK);
	assert_int_equal(nsr_cfi_saveset_results(c, 1, &r), NSR_OK);
	assert_int_equal(nsr_cfi_results_spilled(r), 0);
	spill_text(r, &want);
	nsr_cfi_results_free(r);
	nsr_cfi_set_results_mem(0);
	for (size_t k = 0; k < NSR_ARRAY_SIZE(errs); k++) {
		int n, rc;

		fault_errno = errs[k];
		for (n = 1; n < 100; n++) {
			calls = 0;
			fault_at = n;
			rc = nsr_cfi_saveset_results(c, 1, &r);
			fault_at = 0;
			if (calls < n)
				break;
			assert_int_equal(rc, codes[k]);
			assert_null(r);
		}
		/* NENT results of 90 bytes or more: several writes */
		assert_true(n > 1 && n < 100);
		assert_int_equal(rc, NSR_OK);
		assert_int_equal(nsr_cfi_results_spilled(r), NENT);
		spill_text(r, &got);
		assert_string_equal(got.data, want.data);
		nsr_cfi_results_free(r);
	}
	fault_errno = ENOSPC;
	nsr_cfi_set_results_mem(NSR_CFI_RESULTS_MEM);
	nsr_cfi_close(c);
	nsr_buf_release(&want);
	nsr_buf_release(&got);
	nsr_test_rmrf(root);
	free(root);
}

/* main - run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_faults_keep_index_consistent),
		cmocka_unit_test(test_faults_delete_many),
		cmocka_unit_test(test_sticky_after_catalogue_failure),
		cmocka_unit_test(test_spill_write_fails),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
