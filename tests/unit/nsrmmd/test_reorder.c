/*
 * test_reorder.c - the reorder buffer of a striped save session
 * (daemons/nsrmmd/reorder.c): chunks put out of order leave in order;
 * a duplicate (held, or already gone) is refused as a protocol error; a
 * chunk beyond the chunk or byte bound is refused with NSR_ERR_LIMIT
 * (and taken once the gap closes), while the next chunk is always taken;
 * empty chunks keep their turn; a shuffled stream over four
 * "connections" comes out byte for byte as sent; release frees what is
 * still held (the sanitizer build checks for leaks).
 */
#include "nsr/compat.h"

#include "nsr/err.h"

#include "nsr_test.h"
#include "reorder.h"

/* chunk - a malloc'ed chunk of len bytes, each the low byte of seq. */
static void *chunk(uint64_t seq, size_t len)
{
	unsigned char *p = malloc(len ? len : 1);

	assert_non_null(p);
	memset(p, (int)(seq & 0xff), len);
	return p;
}

/* put - put chunk seq of len bytes, expecting rc (frees it if refused). */
static void put(struct mmd_reorder *r, uint64_t seq, size_t len, int rc)
{
	void *p = chunk(seq, len);
	int got = mmd_reorder_put(r, seq, p, len);

	assert_int_equal(got, rc);
	if (got != NSR_OK)
		free(p);
}

/* take - expect chunk seq (len bytes) to leave next. */
static void take(struct mmd_reorder *r, uint64_t seq, size_t len)
{
	void *p;
	size_t n;

	assert_int_equal(mmd_reorder_take(r, &p, &n), 1);
	assert_int_equal(n, len);
	if (len)
		assert_int_equal(((unsigned char *)p)[0], seq & 0xff);
	assert_int_equal(mmd_reorder_next(r), seq + 1);
	free(p);
}

/* nothing - nothing may leave now. */
static void nothing(struct mmd_reorder *r)
{
	void *p;
	size_t n;

	assert_int_equal(mmd_reorder_take(r, &p, &n), 0);
	assert_null(p);
}

/* test_out_of_order - 2, 1, 0 put; 0, 1, 2 leave. */
static void test_out_of_order(void **state)
{
	struct mmd_reorder r;

	(void)state;
	assert_int_equal(mmd_reorder_init(&r, 8, 1 << 20), NSR_OK);
	put(&r, 2, 100, NSR_OK);
	put(&r, 1, 200, NSR_OK);
	nothing(&r);
	assert_int_equal(mmd_reorder_held(&r), 2);
	put(&r, 0, 300, NSR_OK);
	take(&r, 0, 300);
	take(&r, 1, 200);
	take(&r, 2, 100);
	nothing(&r);
	assert_int_equal(mmd_reorder_held(&r), 0);
	/* In order, one at a time, as an unstriped session would. */
	for (uint64_t i = 3; i < 40; i++) {
		put(&r, i, 10, NSR_OK);
		take(&r, i, 10);
	}
	mmd_reorder_release(&r);
}

/* test_duplicate - a chunk held, or gone, cannot come again. */
static void test_duplicate(void **state)
{
	struct mmd_reorder r;

	(void)state;
	assert_int_equal(mmd_reorder_init(&r, 8, 1 << 20), NSR_OK);
	put(&r, 3, 10, NSR_OK);
	put(&r, 3, 10, NSR_ERR_PROTO); /* held */
	assert_int_equal(mmd_reorder_check(&r, 3, 10), NSR_ERR_PROTO);
	put(&r, 0, 10, NSR_OK);
	take(&r, 0, 10);
	put(&r, 0, 10, NSR_ERR_PROTO); /* already gone */
	assert_int_equal(mmd_reorder_held(&r), 1);
	mmd_reorder_release(&r); /* frees chunk 3 */
}

/* test_bounds - too far ahead, or too many bytes: NSR_ERR_LIMIT, and
 * accepted once the gap closes; the next chunk is always taken. */
static void test_bounds(void **state)
{
	struct mmd_reorder r;

	(void)state;
	assert_int_equal(mmd_reorder_init(&r, 4, 1000), NSR_OK);
	put(&r, 3, 100, NSR_OK);
	put(&r, 4, 100, NSR_ERR_LIMIT);	    /* 4 slots: 0..3 */
	put(&r, 1000000, 1, NSR_ERR_LIMIT); /* a wild number */
	put(&r, 2, 901, NSR_ERR_LIMIT);	    /* 100 + 901 > 1000 */
	assert_int_equal(mmd_reorder_check(&r, 2, 901), NSR_ERR_LIMIT);
	assert_int_equal(mmd_reorder_check(&r, 2, 900), NSR_OK);
	/* The next chunk goes past the byte bound: it leaves at once. */
	put(&r, 0, 5000, NSR_OK);
	take(&r, 0, 5000);
	nothing(&r);
	put(&r, 4, 100, NSR_OK); /* now 1..4 */
	put(&r, 5, 100, NSR_ERR_LIMIT);
	put(&r, 1, 10, NSR_OK);
	take(&r, 1, 10);
	nothing(&r); /* 2 still missing */
	put(&r, 2, 10, NSR_OK);
	take(&r, 2, 10);
	take(&r, 3, 100);
	take(&r, 4, 100);
	nothing(&r);
	mmd_reorder_release(&r);
}

/* test_empty - a chunk of no bytes keeps its turn. */
static void test_empty(void **state)
{
	struct mmd_reorder r;

	(void)state;
	assert_int_equal(mmd_reorder_init(&r, 4, 100), NSR_OK);
	assert_int_equal(mmd_reorder_put(&r, 1, NULL, 0), NSR_OK);
	put(&r, 0, 7, NSR_OK);
	take(&r, 0, 7);
	take(&r, 1, 0);
	mmd_reorder_release(&r);
}

#define SHUF_N	   4000
#define SHUF_CONNS 4

/* test_shuffled - chunk n goes over connection n % 4; the connections
 * deliver at random rates, a chunk beyond the bound waits on its
 * connection (as the mover's handler does); the output is the input. */
static void test_shuffled(void **state)
{
	struct mmd_reorder r;
	uint64_t head[SHUF_CONNS]; /* next chunk of each connection */
	uint64_t out = 0, sum_in = 0, sum_out = 0;
	unsigned seed = 12345;

	(void)state;
	assert_int_equal(mmd_reorder_init(&r, 16, 64 * 1024), NSR_OK);
	for (int i = 0; i < SHUF_CONNS; i++)
		head[i] = (uint64_t)i;
	while (out < SHUF_N) {
		int k = rand_r(&seed) % SHUF_CONNS;
		uint64_t seq = head[k];
		size_t len = (size_t)(seq % 4096) + 1;
		void *p;
		size_t n;

		if (seq >= SHUF_N ||
		    mmd_reorder_check(&r, seq, len) == NSR_ERR_LIMIT)
			continue; /* this connection waits */
		put(&r, seq, len, NSR_OK);
		sum_in += seq * len;
		head[k] += SHUF_CONNS;
		while (mmd_reorder_take(&r, &p, &n)) {
			assert_int_equal(mmd_reorder_next(&r) - 1, out);
			assert_int_equal(n, (size_t)(out % 4096) + 1);
			assert_int_equal(((unsigned char *)p)[n - 1],
					 out & 0xff);
			sum_out += out * n;
			out++;
			free(p);
		}
		assert_true(r.bytes <= 64 * 1024);
	}
	assert_true(sum_in == sum_out);
	assert_int_equal(mmd_reorder_held(&r), 0);
	mmd_reorder_release(&r);
}

/* main - run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_out_of_order),
		cmocka_unit_test(test_duplicate),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_shuffled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
