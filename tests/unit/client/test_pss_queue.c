/*
 * test_pss_queue.c - the balancer of parallel save streams (pss_int.h):
 * largest file first, master-only objects to the master in walk order,
 * a big file found last still does not leave the other streams idle at
 * the end, every object handed out once under threads, what leaving
 * streams do to the queue, and small files opened ahead.
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nsr/asm.h"
#include "nsr/err.h"
#include "nsr_test.h"
#include "../../../src/client/pss_int.h"

/* item - a queued copy of a hand-made walk entry. */
static struct pss_item *item(const char *path, int type, uint64_t size,
			     unsigned nlink)
{
	struct nsr_walk_ent e;
	struct pss_item *it = NULL;

	memset(&e, 0, sizeof(e));
	e.path = path;
	e.type = type;
	e.dirfd = AT_FDCWD;
	e.st.st_size = (off_t)size;
	e.st.st_nlink = nlink;
	assert_int_equal(pss_item_new(&e, &it), NSR_OK);
	return it;
}

/* put - an item into q that must be taken. */
static void put(struct pss_queue *q, struct pss_item *it)
{
	assert_int_equal(pss_queue_put(q, it), NSR_OK);
}

/* get_path - the next object's path for a stream ("" at the end). */
static const char *get_path(struct pss_queue *q, int master, char *buf,
			    size_t len)
{
	struct pss_item *it = NULL;
	int rc = pss_queue_get(q, master, &it);

	if (rc == NSR_ERR_EOF)
		return "";
	assert_int_equal(rc, NSR_OK);
	snprintf(buf, len, "%s", it->e.path);
	pss_item_free(it);
	return buf;
}

/* test_order - largest first; directories, links and multiply linked
 * files only to the master, in walk order, before its shared work. */
static void test_order(void **state)
{
	struct pss_queue q;
	char b[64];

	NSR_UNUSED(state);
	assert_int_equal(pss_queue_init(&q, 16, 2), NSR_OK);
	put(&q, item("/d", NSR_ASM_DIR, 0, 2));
	put(&q, item("/d/small", NSR_ASM_REG, 10, 1));
	put(&q, item("/d/big", NSR_ASM_REG, 1000, 1));
	put(&q, item("/d/linked", NSR_ASM_REG, 5000, 2));
	put(&q, item("/d/mid", NSR_ASM_REG, 100, 1));
	put(&q, item("/d/hard", NSR_ASM_HARDLINK, 0, 2));
	assert_string_equal(get_path(&q, 0, b, sizeof(b)), "/d/big");
	assert_string_equal(get_path(&q, 1, b, sizeof(b)), "/d");
	assert_string_equal(get_path(&q, 1, b, sizeof(b)), "/d/linked");
	assert_string_equal(get_path(&q, 1, b, sizeof(b)), "/d/hard");
	assert_string_equal(get_path(&q, 1, b, sizeof(b)), "/d/mid");
	/* nothing for anyone yet, and not closed */
	{
		struct pss_item *it = NULL;

		assert_string_equal(get_path(&q, 0, b, sizeof(b)), "/d/small");
		assert_int_equal(pss_queue_get(&q, 0, &it), NSR_ERR_AGAIN);
		put(&q, item("/d/sub", NSR_ASM_DIR, 0, 2));
		assert_int_equal(pss_queue_get(&q, 0, &it), NSR_ERR_AGAIN);
		pss_queue_close(&q);
		assert_int_equal(pss_queue_get(&q, 0, &it), NSR_ERR_EOF);
	}
	assert_string_equal(get_path(&q, 1, b, sizeof(b)), "/d/sub");
	assert_string_equal(get_path(&q, 1, b, sizeof(b)), "");
	pss_queue_destroy(&q);
}

/* makespan - simulated time for n streams of one speed to take and save
 * every object of q (closed), each taking its next when it is free. */
static uint64_t makespan(struct pss_queue *q, unsigned n)
{
	uint64_t busy[8] = {0}, end = 0;

	for (;;) {
		unsigned s = 0;
		struct pss_item *it = NULL;

		for (unsigned i = 1; i < n; i++)
			if (busy[i] < busy[s])
				s = i;
		if (pss_queue_get(q, s == 0, &it) != NSR_OK)
			break;
		busy[s] += it->size;
		pss_item_free(it);
	}
	for (unsigned i = 0; i < n; i++)
		end = NSR_MAX(end, busy[i]);
	return end;
}

/* test_big_last - a big file the walk finds last is not left to one
 * stream at the end while the others idle: with the window holding the
 * save point, 4 streams finish together (1000 = total / 4). */
static void test_big_last(void **state)
{
	struct pss_queue q;
	char p[32];

	NSR_UNUSED(state);
	assert_int_equal(pss_queue_init(&q, 64, 4), NSR_OK);
	for (int i = 0; i < 30; i++) {
		snprintf(p, sizeof(p), "/f%d", i);
		put(&q, item(p, NSR_ASM_REG, 100, 1));
	}
	put(&q, item("/big", NSR_ASM_REG, 1000, 1));
	pss_queue_close(&q);
	assert_int_equal(makespan(&q, 4), 1000);
	pss_queue_destroy(&q);
}

/* A consumer thread of test_threads. */
struct consumer {
	struct pss_queue *q;
	int master;
	unsigned got, wrong; /* objects; master-only ones not master */
	uint8_t *seen;
};

/* consume - take until the end, as a stream does. */
static void *consume(void *arg)
{
	struct consumer *c = arg;
	struct pss_item *it;
	int rc;

	for (;;) {
		rc = pss_queue_get(c->q, c->master, &it);
		if (rc == NSR_ERR_AGAIN) {
			pss_queue_wait(c->q, c->master);
			continue;
		}
		if (rc != NSR_OK)
			break;
		if (it->master && !c->master)
			c->wrong++;
		c->seen[it->size]++;
		c->got++;
		pss_item_free(it);
	}
	pss_queue_leave(c->q, c->master);
	return NULL;
}

/* test_threads - a traversal and 4 streams: every object once, in a
 * window of 8, master-only ones to the master. */
static void test_threads(void **state)
{
	enum { N = 2000 };
	struct pss_queue q;
	struct consumer c[4];
	pthread_t t[4];
	uint8_t seen[4][N];
	unsigned total = 0;

	NSR_UNUSED(state);
	memset(seen, 0, sizeof(seen));
	assert_int_equal(pss_queue_init(&q, 8, 4), NSR_OK);
	for (int i = 0; i < 4; i++) {
		c[i] = (struct consumer){ &q, i == 0, 0, 0, seen[i] };
		assert_int_equal(pthread_create(&t[i], NULL, consume, &c[i]),
				 0);
	}
	for (unsigned i = 0; i < N; i++) /* size = number; every 7th a dir */
		put(&q, item("/x", i % 7 ? NSR_ASM_REG : NSR_ASM_DIR, i, 1));
	pss_queue_close(&q);
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(c[i].wrong, 0);
		total += c[i].got;
	}
	assert_int_equal(total, N);
	for (unsigned i = 0; i < N; i++) {
		unsigned n = 0;

		for (int k = 0; k < 4; k++)
			n += seen[k][i];
		/* directories have size 0: all counted under 0 */
		if (i % 7)
			assert_int_equal(n, 1);
	}
	pss_queue_destroy(&q);
}

/* test_leave - the master leaving early stops the traversal; streams
 * leaving after everything was taken do not. */
static void test_leave(void **state)
{
	struct pss_queue q;
	struct pss_item *it = item("/a", NSR_ASM_REG, 1, 1), *got = NULL;

	NSR_UNUSED(state);
	assert_int_equal(pss_queue_init(&q, 4, 2), NSR_OK);
	pss_queue_leave(&q, 1);
	assert_int_equal(pss_queue_put(&q, it), NSR_ERR_STATE);
	assert_int_equal(pss_queue_get(&q, 0, &got), NSR_ERR_STATE);
	pss_item_free(it);
	pss_queue_destroy(&q);

	assert_int_equal(pss_queue_init(&q, 4, 2), NSR_OK);
	put(&q, item("/b", NSR_ASM_REG, 1, 1));
	pss_queue_close(&q);
	pss_queue_leave(&q, 1); /* drained for the master: fine */
	assert_int_equal(pss_queue_get(&q, 0, &got), NSR_OK);
	pss_item_free(got);
	assert_int_equal(pss_queue_get(&q, 0, &got), NSR_ERR_EOF);
	pss_queue_leave(&q, 0);
	assert_int_equal(q.aborted, 0);
	pss_queue_destroy(&q);
}

/* at - a queued copy of the entry for file name in directory dfd, as
 * the walker gives it. */
static struct pss_item *at(int dfd, const char *name, unsigned nlink)
{
	struct nsr_walk_ent e;
	struct pss_item *it = NULL;

	memset(&e, 0, sizeof(e));
	assert_int_equal(fstatat(dfd, name, &e.st, AT_SYMLINK_NOFOLLOW), 0);
	e.path = name;
	e.name = name;
	e.dirfd = dfd;
	e.type = NSR_ASM_REG;
	e.st.st_nlink = nlink;
	assert_int_equal(pss_item_new(&e, &it), NSR_OK);
	return it;
}

/* test_open_ahead - a small regular file is opened when queued (its own
 * descriptor, reading the file), one for the master too; a large or an
 * empty one is not, nor one past PSS_AHEAD_FDS, and a freed item gives
 * its descriptor back. */
static void test_open_ahead(void **state)
{
	char dir[] = "/tmp/test_pss_ahead.XXXXXX", buf[16] = "";
	static struct pss_item *many[PSS_AHEAD_FDS + 4];
	struct pss_item *small, *big, *empty, *linked;
	size_t with = 0;
	int dfd, fd;

	NSR_UNUSED(state);
	assert_non_null(mkdtemp(dir));
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	fd = openat(dfd, "small", O_WRONLY | O_CREAT, 0600);
	assert_int_equal(write(fd, "small data", 10), 10);
	close(fd);
	fd = openat(dfd, "big", O_WRONLY | O_CREAT, 0600);
	assert_int_equal(ftruncate(fd, (off_t)PSS_AHEAD_MAX + 1), 0);
	close(fd);
	fd = openat(dfd, "empty", O_WRONLY | O_CREAT, 0600);
	close(fd);

	small = at(dfd, "small", 1);
	big = at(dfd, "big", 1);
	empty = at(dfd, "empty", 1);
	linked = at(dfd, "small", 2);
	assert_true(small->e.has_fd);
	assert_true(small->e.fd != dfd);
	assert_int_equal(pread(small->e.fd, buf, sizeof(buf), 0), 10);
	assert_memory_equal(buf, "small data", 10);
	assert_false(big->e.has_fd);
	assert_false(empty->e.has_fd);
	assert_true(linked->e.has_fd); /* the master's, read ahead too */
	pss_item_free(big);
	pss_item_free(empty);
	pss_item_free(linked);

	/* one is open now (small): the budget takes PSS_AHEAD_FDS - 1
	 * more, then none until one is freed */
	for (size_t i = 0; i < NSR_ARRAY_SIZE(many); i++) {
		many[i] = at(dfd, "small", 1);
		with += many[i]->e.has_fd;
	}
	assert_int_equal(with, PSS_AHEAD_FDS - 1);
	assert_false(many[NSR_ARRAY_SIZE(many) - 1]->e.has_fd);
	pss_item_free(small);
	small = at(dfd, "small", 1);
	assert_true(small->e.has_fd);
	pss_item_free(small);
	for (size_t i = 0; i < NSR_ARRAY_SIZE(many); i++)
		pss_item_free(many[i]);
	small = at(dfd, "small", 1);
	assert_true(small->e.has_fd);
	pss_item_free(small);

	assert_int_equal(unlinkat(dfd, "small", 0), 0);
	assert_int_equal(unlinkat(dfd, "big", 0), 0);
	assert_int_equal(unlinkat(dfd, "empty", 0), 0);
	close(dfd);
	assert_int_equal(rmdir(dir), 0);
}

/* test_split_plan - whole below two parts or with one stream; parts of
 * at most the part size, as many as a multiple of the streams where
 * that fits, each a multiple of 64 KiB but the last; never over
 * NSR_ASM_PARTS_MAX parts; NSR_PSS_PART_SIZE taken when it is sane. */
static void test_split_plan(void **state)
{
	const uint64_t M = 1 << 20;
	uint64_t plen;
	uint32_t n;

	NSR_UNUSED(state);
	assert_int_equal(pss_split_plan(2 * M - 1, 4, M, &plen), 0);
	assert_int_equal(pss_split_plan(100 * M, 1, M, &plen), 0);
	assert_int_equal(pss_split_plan(2 * M, 2, M, &plen), 2);
	assert_int_equal(plen, M);
	/* 8 parts of at most 1 MiB for 4 streams: 960 KiB + 64 KiB */
	assert_int_equal(pss_split_plan(7 * M + 1, 4, M, &plen), 8);
	assert_int_equal(plen, 960 * 1024);
	/* 440 MiB in 64 MiB parts: 7, so 8 for 4 streams, of 55 MiB */
	assert_int_equal(pss_split_plan(440 * M, 4, 64 * M, &plen), 8);
	assert_int_equal(plen, 55 * M);
	/* 3 streams, at most 2 MiB: 5 parts, so 6, of 27 x 64 KiB, the
	 * last one shorter */
	assert_int_equal(pss_split_plan(10 * M, 3, 2 * M, &plen), 6);
	assert_int_equal(plen, 27 * 64 * 1024);
	assert_true(5 * plen < 10 * M && 6 * plen > 10 * M);
	/* 1 TiB in 1 MiB parts would be 2^20 parts: bigger parts */
	assert_int_equal(pss_split_plan(M * M, 8, M, &plen),
			 NSR_ASM_PARTS_MAX);
	assert_int_equal(plen, 16 * M);
	n = pss_split_plan(M * M + 1, 8, M, &plen);
	assert_true(n > NSR_ASM_PARTS_MAX - 512 && n <= NSR_ASM_PARTS_MAX);
	assert_true(plen * n >= M * M + 1 && plen * (n - 1) < M * M + 1);
	unsetenv("NSR_PSS_PART_SIZE");
	assert_int_equal(pss_part_size(), PSS_PART_DEFAULT);
	setenv("NSR_PSS_PART_SIZE", "4M", 1);
	assert_int_equal(pss_part_size(), 4 * M);
	setenv("NSR_PSS_PART_SIZE", "4K", 1); /* below 1 MiB: the default */
	assert_int_equal(pss_part_size(), PSS_PART_DEFAULT);
	setenv("NSR_PSS_PART_SIZE", "junk", 1);
	assert_int_equal(pss_part_size(), PSS_PART_DEFAULT);
	unsetenv("NSR_PSS_PART_SIZE");
}

/* main - run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_big_last),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_leave),
		cmocka_unit_test(test_open_ahead),
		cmocka_unit_test(test_split_plan),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
