/*
 * test_readsize.c - adaptive read size driven by a fake clock and a fake
 * device whose throughput depends on the read size.
 */
#include "nsr/compat.h"

#include "nsr/err.h"
#include "nsr/readsize.h"
#include "nsr_test.h"

/* A fake device: a read of n bytes takes overhead_ns + n / bw(n). */
struct fakedev {
	uint64_t now;
	size_t peak;	  /* size with the best throughput, 0 = none */
	double base_bw;	  /* bytes per ns at the peak / at large sizes */
	uint64_t overhead_ns;
};

/* fake_clock - the fake device's current time. */
static uint64_t fake_clock(void *ctx)
{
	return ((struct fakedev *)ctx)->now;
}

/* fake_read - advance the clock by the time one read of n bytes takes:
 * bandwidth falls off on both sides of the peak size. */
static void fake_read(struct fakedev *d, size_t n)
{
	double bw = d->base_bw;

	if (d->peak != 0) {
		double ratio = n > d->peak ? (double)n / (double)d->peak
					   : (double)d->peak / (double)n;
		bw = d->base_bw / ratio;
	}
	d->now += d->overhead_ns + (uint64_t)((double)n / bw);
}

/* run - nreads full reads; returns the final size. */
static size_t run(struct nsr_readsize *r, struct fakedev *d, int nreads)
{
	for (int i = 0; i < nreads; i++) {
		size_t n = nsr_readsize_get(r);

		assert_true(n >= NSR_READSIZE_MIN && n <= NSR_READSIZE_MAX);
		nsr_readsize_begin(r);
		fake_read(d, n);
		nsr_readsize_end(r, n);
	}
	return nsr_readsize_get(r);
}

/* setup - per-test setup. */
static int setup(void **state)
{
	NSR_UNUSED(state);
	unsetenv("NSR_READ_SIZE");
	return 0;
}

/* test_finds_peak - the size converges on the device's best size. */
static void test_finds_peak(void **state)
{
	struct fakedev d = { 0, 2 * 1024 * 1024, 1.0, 0 };
	struct nsr_readsize *r = NULL;

	NSR_UNUSED(state);
	assert_int_equal(nsr_readsize_new(&r, 0, fake_clock, &d), NSR_OK);
	assert_int_equal(nsr_readsize_get(r), NSR_READSIZE_START);
	assert_int_equal(run(r, &d, 200), 2 * 1024 * 1024);
	nsr_readsize_free(r);

	/* A peak below the start size is found by shrinking. */
	d.peak = 256 * 1024;
	assert_int_equal(nsr_readsize_new(&r, 0, fake_clock, &d), NSR_OK);
	assert_int_equal(run(r, &d, 200), 256 * 1024);
	nsr_readsize_free(r);
}

/* test_bounds - the size stays within 64 KB .. 8 MB. */
static void test_bounds(void **state)
{
	/* Per-read overhead dominates: bigger is always better -> 8 MB. */
	struct fakedev d = { 0, 0, 1.0, 5000000 };
	struct nsr_readsize *r = NULL;

	NSR_UNUSED(state);
	assert_int_equal(nsr_readsize_new(&r, 0, fake_clock, &d), NSR_OK);
	assert_int_equal(run(r, &d, 200), NSR_READSIZE_MAX);
	nsr_readsize_free(r);

	/* Peak far below the minimum: stays at 64 KB. */
	d.peak = 4096;
	d.overhead_ns = 0;
	assert_int_equal(nsr_readsize_new(&r, 0, fake_clock, &d), NSR_OK);
	assert_int_equal(run(r, &d, 200), NSR_READSIZE_MIN);
	nsr_readsize_free(r);
}

/* test_flat_stays_small - large reads do not help (no per-call cost, the
 * same bandwidth at every size): the size ends at 64 KB; a modest
 * per-call cost (0.1 ms at 1 GB/s) grows it until doubling pays less
 * than 5% (1 MB); slow-per-call storage (5 ms, as a remote file system)
 * takes 8 MB (test_bounds). */
static void test_flat_stays_small(void **state)
{
	struct fakedev d = { 0, 0, 1.0, 0 };
	struct nsr_readsize *r = NULL;

	NSR_UNUSED(state);
	assert_int_equal(nsr_readsize_new(&r, 0, fake_clock, &d), NSR_OK);
	assert_int_equal(run(r, &d, 200), NSR_READSIZE_MIN);
	nsr_readsize_free(r);

	d.overhead_ns = 100000;
	assert_int_equal(nsr_readsize_new(&r, 0, fake_clock, &d), NSR_OK);
	assert_int_equal(run(r, &d, 200), 1024 * 1024);
	nsr_readsize_free(r);
}

/* test_readapts - a change of device moves the size again. */
static void test_readapts(void **state)
{
	struct fakedev d = { 0, 4 * 1024 * 1024, 1.0, 0 };
	struct nsr_readsize *r = NULL;

	NSR_UNUSED(state);
	assert_int_equal(nsr_readsize_new(&r, 0, fake_clock, &d), NSR_OK);
	assert_int_equal(run(r, &d, 200), 4 * 1024 * 1024);
	/* The device changes: its best size is now 128 KB. */
	d.peak = 128 * 1024;
	assert_int_equal(run(r, &d, 400), 128 * 1024);
	nsr_readsize_free(r);
}

/* test_forced - NSR_READ_SIZE and an explicit size fix the size. */
static void test_forced(void **state)
{
	struct fakedev d = { 0, 2 * 1024 * 1024, 1.0, 0 };
	struct nsr_readsize *r = NULL;
	size_t v = 0;

	NSR_UNUSED(state);
	setenv("NSR_READ_SIZE", "512K", 1);
	assert_int_equal(nsr_readsize_new(&r, 0, fake_clock, &d), NSR_OK);
	assert_true(nsr_readsize_forced(r));
	for (int i = 0; i < 100; i++) {
		nsr_readsize_begin(r);
		fake_read(&d, nsr_readsize_get(r));
		nsr_readsize_end(r, nsr_readsize_get(r));
		assert_int_equal(nsr_readsize_get(r), 512 * 1024);
	}
	nsr_readsize_free(r);
	setenv("NSR_READ_SIZE", "12x", 1);
	assert_int_equal(nsr_readsize_new(&r, 0, fake_clock, &d),
			 NSR_ERR_INVAL);
	assert_null(r);
	/* An explicit force wins over the environment and is clamped. */
	assert_int_equal(nsr_readsize_new(&r, 1, fake_clock, &d), NSR_OK);
	assert_int_equal(nsr_readsize_get(r), NSR_READSIZE_FORCE_MIN);
	nsr_readsize_free(r);
	unsetenv("NSR_READ_SIZE");

	assert_int_equal(nsr_readsize_parse("8M", &v), NSR_OK);
	assert_int_equal(v, 8 * 1024 * 1024);
	assert_int_equal(nsr_readsize_parse("65536", &v), NSR_OK);
	assert_int_equal(v, 65536);
	assert_int_equal(nsr_readsize_parse("", &v), NSR_ERR_INVAL);
	assert_int_equal(nsr_readsize_parse("-5", &v), NSR_ERR_INVAL);
	assert_int_equal(nsr_readsize_parse("0", &v), NSR_ERR_INVAL);
	assert_int_equal(nsr_readsize_parse("4KB", &v), NSR_ERR_INVAL);
	/* a count of K or M whose product wraps 64 bits (found by fuzzing) */
	assert_int_equal(nsr_readsize_parse("14735777980934040722k", &v),
			 NSR_ERR_INVAL);
	assert_int_equal(nsr_readsize_parse("18014398509481985K", &v),
			 NSR_ERR_INVAL);
	assert_int_equal(nsr_readsize_parse("17592186044416M", &v),
			 NSR_ERR_INVAL);
	assert_int_equal(nsr_readsize_parse("1048576M", &v), NSR_OK);
	assert_int_equal(v, (size_t)1 << 40);
}

/* main - run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_finds_peak, setup),
		cmocka_unit_test_setup(test_bounds, setup),
		cmocka_unit_test_setup(test_flat_stays_small, setup),
		cmocka_unit_test_setup(test_readapts, setup),
		cmocka_unit_test_setup(test_forced, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
