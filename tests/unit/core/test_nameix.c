/*
 * test_nameix.c - the index of names to item numbers (nameix.h): lookups
 * by whole names and by prefixes, then random adds, deletions and moves
 * checked after every step against the items themselves (each one found
 * at its number, names not kept not found, invariant 1), in a table
 * small enough that runs wrap around its end, and in one that grows; a
 * table that cannot grow (no memory) is left as it was.
 */
#include "nsr/compat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nsr/err.h"
#include "nsr/nameix.h"
#include "nsr_test.h"

void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);

static int g_fail_calloc; /* the next calloc fails */

/* __wrap_calloc - calloc, failing once when g_fail_calloc is set. */
void *__wrap_calloc(size_t n, size_t size)
{
	if (g_fail_calloc) {
		g_fail_calloc = 0;
		return NULL;
	}
	return __real_calloc(n, size);
}

#define NAME_LEN 12

/* The items of a test: names in an array the index does not own. */
struct items {
	char (*name)[NAME_LEN];
	size_t n, cap;
};

/* item_name - nsr_nameix_name_fn over struct items. */
static const char *item_name(const void *ctx, size_t i, size_t *len)
{
	const struct items *it = ctx;

	*len = strlen(it->name[i]);
	return it->name[i];
}

/* find_str - the item named s, or NSR_NAMEIX_NONE. */
static size_t find_str(const struct nsr_nameix *x, const char *s)
{
	return nsr_nameix_find(x, s, strlen(s));
}

/* test_basic - whole names, prefixes, absent names, the empty index. */
static void test_basic(void **state)
{
	struct items it = {0};
	struct nsr_nameix x;
	static const char *const names[] = { "/", "/data", "/data/a",
					     "/home", "" };

	NSR_UNUSED(state);
	nsr_nameix_init(&x, item_name, &it);
	assert_int_equal(find_str(&x, "/data"), NSR_NAMEIX_NONE);
	nsr_nameix_del(&x, 0); /* nothing indexed: harmless */
	it.name = calloc(8, NAME_LEN);
	assert_non_null(it.name);
	for (size_t i = 0; i < 5; i++) {
		snprintf(it.name[i], NAME_LEN, "%s", names[i]);
		assert_int_equal(nsr_nameix_add(&x, i), NSR_OK);
	}
	it.n = 5;
	for (size_t i = 0; i < 5; i++)
		assert_int_equal(find_str(&x, names[i]), i);
	/* "/data" as the first 5 bytes of "/data/a/b", not copied */
	assert_int_equal(nsr_nameix_find(&x, "/data/a/b", 5), 1);
	assert_int_equal(nsr_nameix_find(&x, "/data/a/b", 7), 2);
	assert_int_equal(nsr_nameix_find(&x, "/data/a/b", 9), NSR_NAMEIX_NONE);
	assert_int_equal(find_str(&x, "/dat"), NSR_NAMEIX_NONE);
	assert_int_equal(nsr_nameix_add(&x, NSR_NAMEIX_MAX), NSR_ERR_INVAL);
	assert_int_equal(x.n, 5);
	nsr_nameix_free(&x);
	assert_int_equal(find_str(&x, "/data"), NSR_NAMEIX_NONE);
	free(it.name);
}

/* check - every item found at its number, a name of none not found,
 * invariant 1. */
static void check(const struct nsr_nameix *x, const struct items *it,
		  unsigned *seed)
{
	char absent[NAME_LEN];

	assert_int_equal(x->n, it->n);
	assert_true(x->cap == 0 || 2 * x->n <= x->cap);
	assert_true((x->cap & (x->cap - 1)) == 0);
	for (size_t i = 0; i < it->n; i++)
		assert_int_equal(find_str(x, it->name[i]), i);
	snprintf(absent, sizeof(absent), "z%u", (unsigned)rand_r(seed));
	assert_int_equal(find_str(x, absent), NSR_NAMEIX_NONE);
}

/* add_one - a new item of a name none has (from a small space, so that
 * names come back after their deletion). */
static void add_one(struct nsr_nameix *x, struct items *it, unsigned *seed,
		    unsigned space)
{
	char name[NAME_LEN];

	do
		snprintf(name, sizeof(name), "n%u",
			 (unsigned)rand_r(seed) % space);
	while (find_str(x, name) != NSR_NAMEIX_NONE);
	if (it->n == it->cap) {
		size_t cap = it->cap ? 2 * it->cap : 16;
		char (*v)[NAME_LEN] = realloc(it->name, cap * NAME_LEN);

		assert_non_null(v);
		it->name = v; /* moved: the index holds numbers only */
		it->cap = cap;
	}
	memcpy(it->name[it->n], name, NAME_LEN);
	assert_int_equal(nsr_nameix_add(x, it->n), NSR_OK);
	it->n++;
}

/* drop_one - delete a random item; the last one takes its number. */
static void drop_one(struct nsr_nameix *x, struct items *it, unsigned *seed)
{
	size_t i = (size_t)rand_r(seed) % it->n, last = it->n - 1;

	nsr_nameix_del(x, i);
	if (i != last) {
		nsr_nameix_move(x, last, i);
		memcpy(it->name[i], it->name[last], NAME_LEN);
	}
	it->n--;
}

/* run - steps random adds and deletions, at most most items. */
static void run(struct nsr_nameix *x, struct items *it, unsigned *seed,
		unsigned steps, size_t most, unsigned space)
{
	for (unsigned s = 0; s < steps; s++) {
		int add = it->n == 0 ||
			  (it->n < most && rand_r(seed) % 100 < 55);

		if (add)
			add_one(x, it, seed, space);
		else
			drop_one(x, it, seed);
		check(x, it, seed);
	}
}

/* test_random - deletions in a 64-slot table whose runs wrap around,
 * then growth to thousands of items and back. */
static void test_random(void **state)
{
	struct items it = {0};
	struct nsr_nameix x;
	unsigned seed = 20261129;

	NSR_UNUSED(state);
	nsr_nameix_init(&x, item_name, &it);
	run(&x, &it, &seed, 20000, 31, 80);
	assert_int_equal(x.cap, 64); /* never grew: all of it wrapped */
	run(&x, &it, &seed, 6000, 3000, 100000);
	assert_true(x.cap >= 2 * it.n);
	while (it.n) {
		drop_one(&x, &it, &seed);
		if (it.n % 97 == 0)
			check(&x, &it, &seed);
	}
	check(&x, &it, &seed);
	nsr_nameix_free(&x);
	free(it.name);
}

/* test_nomem - an add that cannot grow the table fails and changes
 * nothing; the next one grows it. */
static void test_nomem(void **state)
{
	struct items it = {0};
	struct nsr_nameix x;
	unsigned seed = 7;

	NSR_UNUSED(state);
	nsr_nameix_init(&x, item_name, &it);
	for (int i = 0; i < 32; i++)
		add_one(&x, &it, &seed, 1000);
	assert_int_equal(x.cap, 64); /* full: 2 * 32 */
	it.name = realloc(it.name, 64 * NAME_LEN);
	assert_non_null(it.name);
	snprintf(it.name[it.n], NAME_LEN, "extra");
	g_fail_calloc = 1;
	assert_int_equal(nsr_nameix_add(&x, it.n), NSR_ERR_NOMEM);
	check(&x, &it, &seed);
	assert_int_equal(find_str(&x, "extra"), NSR_NAMEIX_NONE);
	assert_int_equal(nsr_nameix_add(&x, it.n), NSR_OK);
	it.n++;
	assert_int_equal(x.cap, 128);
	check(&x, &it, &seed);
	nsr_nameix_free(&x);
	free(it.name);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_nomem),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
