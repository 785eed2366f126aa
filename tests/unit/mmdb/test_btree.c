/*
 * test_btree.c - the media database engine below the schema: B+tree
 * against an in-memory model over long random operation sequences (fixed
 * seeds), splits, merges, large cells, reopen, multi-version reads, group
 * commit, fault injection at every write/sync/allocation and power loss at
 * every sync.  Every case ends with the whole-file integrity check.
 *
 * Knobs: NSR_TEST_MMDB_OPS (operations of the random test, default 20000).
 */
#include "nsr/compat.h"

#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nsr_test.h"

#include "nsr/buf.h"
#include "nsr/bytes.h"
#include "nsr/err.h"
#include "nsr/mmdb_btree.h"
#include "nsr/mmdb_pager.h"
#include "nsr/mmdb_vfs.h"
#include "nsr/crc32c.h"
#include "pager_int.h"

#define NKEYS 4000

/* The model: value per key id, NULL = absent. */
struct model {
	uint8_t *val[NKEYS];
	size_t len[NKEYS];
};

static uint64_t rng_state;

/* rnd - xorshift64* with a fixed seed per test. */
static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

/* mkkey - variable-length key for id, ordered like id. */
static size_t mkkey(unsigned id, uint8_t *k)
{
	size_t len = 4 + id % 37;

	nsr_put_u32(k, id);
	for (size_t j = 4; j < len; j++)
		k[j] = (uint8_t)(id * 7 + j);
	return len;
}

/* mkval - a value of random length (sometimes large, to force splits). */
static size_t mkval(uint8_t *v, unsigned id, uint64_t salt)
{
	size_t len = (rnd() % 16 == 0) ? 1000 + rnd() % 6000 : rnd() % 200;

	for (size_t j = 0; j < len; j++)
		v[j] = (uint8_t)(id + salt + j * 13);
	return len;
}

/* model_set - record a value in the model. */
static void model_set(struct model *m, unsigned id, const uint8_t *v,
		      size_t len)
{
	free(m->val[id]);
	m->val[id] = malloc(len ? len : 1);
	assert_non_null(m->val[id]);
	memcpy(m->val[id], v, len);
	m->len[id] = len;
}

/* model_del - remove a key from the model. */
static void model_del(struct model *m, unsigned id)
{
	free(m->val[id]);
	m->val[id] = NULL;
	m->len[id] = 0;
}

/* model_copy - deep copy. */
static void model_copy(struct model *dst, const struct model *src)
{
	for (unsigned i = 0; i < NKEYS; i++) {
		free(dst->val[i]);
		dst->val[i] = NULL;
		dst->len[i] = 0;
		if (src->val[i])
			model_set(dst, i, src->val[i], src->len[i]);
	}
}

/* model_free - release the values. */
static void model_free(struct model *m)
{
	for (unsigned i = 0; i < NKEYS; i++)
		free(m->val[i]);
	memset(m, 0, sizeof(*m));
}

/* db_matches - whether tree "t" under a read view equals the model, by a
 * full cursor walk and by point lookups. */
static int db_matches(struct mmdb_pager *p, const struct model *m)
{
	struct mmdb_view *v;
	struct mmdb_bt_cur cur;
	uint32_t root;
	unsigned next = 0;
	int ok = 1, rc;

	assert_int_equal(mmdb_pager_read_begin(p, &v), NSR_OK);
	rc = mmdb_bt_open(v, "t", 0, &root);
	if (rc == NSR_ERR_NOTFOUND) {
		for (unsigned i = 0; i < NKEYS; i++)
			if (m->val[i])
				ok = 0;
		mmdb_pager_read_end(v);
		return ok;
	}
	assert_int_equal(rc, NSR_OK);
	assert_int_equal(mmdb_bt_seek(&cur, v, root, NULL, 0), NSR_OK);
	while (cur.valid && ok) {
		const uint8_t *k, *val;
		size_t kl, vl;
		unsigned id;

		mmdb_bt_key(&cur, &k, &kl);
		mmdb_bt_val(&cur, &val, &vl);
		id = nsr_get_u32(k);
		while (next < id && ok)
			if (m->val[next++])
				ok = 0;
		if (id >= NKEYS || !m->val[id] || m->len[id] != vl ||
		    memcmp(m->val[id], val, vl) != 0)
			ok = 0;
		next = id + 1;
		assert_int_equal(mmdb_bt_next(&cur), NSR_OK);
	}
	while (next < NKEYS && ok)
		if (m->val[next++])
			ok = 0;
	for (unsigned i = 0; i < NKEYS && ok; i += 97) {
		uint8_t k[64];
		size_t kl = mkkey(i, k);
		const uint8_t *val;
		size_t vl;

		rc = mmdb_bt_get(v, root, k, kl, &val, &vl);
		if (m->val[i])
			ok = rc == NSR_OK && vl == m->len[i] &&
			     memcmp(val, m->val[i], vl) == 0;
		else
			ok = rc == NSR_ERR_NOTFOUND;
	}
	mmdb_pager_read_end(v);
	return ok;
}

/* count_keys - entries in tree t (debug aid for failures). */
static unsigned count_keys(struct mmdb_pager *p, int *bad)
{
	struct mmdb_view *v;
	struct mmdb_bt_cur cur;
	uint32_t root;
	unsigned n = 0;

	*bad = 0;
	if (mmdb_pager_read_begin(p, &v) != NSR_OK)
		return 0;
	if (mmdb_bt_open(v, "t", 0, &root) == NSR_OK &&
	    mmdb_bt_seek(&cur, v, root, NULL, 0) == NSR_OK)
		while (cur.valid) {
			n++;
			if (mmdb_bt_next(&cur) != NSR_OK)
				*bad = 1;
		}
	mmdb_pager_read_end(v);
	return n;
}

/* model_count - keys present in the model. */
static unsigned model_count(const struct model *m)
{
	unsigned n = 0;

	for (unsigned i = 0; i < NKEYS; i++)
		n += m->val[i] != NULL;
	return n;
}

/* check_all - integrity check of the durable state must be clean. */
static void check_all(struct mmdb_pager *p)
{
	struct mmdb_view *v;
	struct nsr_buf rep;
	int rc;

	nsr_buf_init(&rep, 0);
	assert_int_equal(mmdb_pager_read_begin(p, &v), NSR_OK);
	rc = mmdb_bt_check_all(v, &rep);
	if (rc != 0)
		fprintf(stderr, "check: %d\n%s", rc, rep.data);
	assert_int_equal(rc, 0);
	mmdb_pager_read_end(v);
	nsr_buf_release(&rep);
}

/* apply_txn - one transaction of nops random puts/deletes on tree "t",
 * applied to *m as well (the caller decides what the model keeps).
 * Returns the first error, NSR_OK after a successful commit. */
static int apply_txn(struct mmdb_pager *p, struct model *m, int nops,
		     unsigned keyspace, int *committing)
{
	struct mmdb_view *v = NULL;
	uint8_t val[8000];
	uint32_t root;
	int rc;

	*committing = 0;
	rc = mmdb_pager_write_begin(p, &v);
	if (rc != NSR_OK)
		return rc;
	rc = mmdb_bt_open(v, "t", 1, &root);
	for (int i = 0; i < nops && rc == NSR_OK; i++) {
		unsigned id = (unsigned)(rnd() % keyspace);
		uint8_t k[64];
		size_t kl = mkkey(id, k);

		if (rnd() % 3 == 0) {
			rc = mmdb_bt_del(v, root, k, kl);
			if (rc == NSR_ERR_NOTFOUND && !m->val[id])
				rc = NSR_OK;
			else if (rc == NSR_OK)
				model_del(m, id);
		} else {
			size_t vl = mkval(val, id, rnd());

			rc = mmdb_bt_put(v, root, k, kl, val, vl);
			if (rc == NSR_OK)
				model_set(m, id, val, vl);
		}
	}
	if (rc != NSR_OK) {
		mmdb_pager_rollback(v);
		return rc;
	}
	*committing = 1;
	return mmdb_pager_commit(v);
}

/* open_mem - open the db on a mem vfs. */
static int open_mem(struct mmdb_vfs *vfs, uint64_t wal_max,
		    struct mmdb_pager **p)
{
	return mmdb_pager_open(vfs, "/db", MMDB_PAGER_CREATE, wal_max, p);
}

/* test_random_model - long random sequence against the model, with
 * rollbacks, reopens and checkpoints. */
static void test_random_model(void **state)
{
	struct mmdb_vfs *vfs = mmdb_vfs_mem_new(1);
	struct mmdb_pager *p = NULL;
	struct model m = { 0 }, committed = { 0 };
	const char *env = getenv("NSR_TEST_MMDB_OPS");
	long ops = env ? atol(env) : 20000;
	long done = 0;
	int committing;

	NSR_UNUSED(state);
	rng_state = 42;
	assert_int_equal(open_mem(vfs, 2u << 20, &p), NSR_OK);
	while (done < ops) {
		int n = 1 + (int)(rnd() % 60);
		unsigned keyspace = (done / 5000) % 2 ? NKEYS : NKEYS / 4;

		if (rnd() % 10 == 0) {
			/* A rolled back transaction leaves no trace. */
			struct mmdb_view *v;
			uint32_t root;
			uint8_t k[64];

			assert_int_equal(mmdb_pager_write_begin(p, &v), NSR_OK);
			assert_int_equal(mmdb_bt_open(v, "t", 1, &root),
					 NSR_OK);
			for (int i = 0; i < 50; i++)
				assert_int_equal(
					mmdb_bt_put(v, root, k,
						    mkkey((unsigned)i, k), k,
						    10),
					NSR_OK);
			mmdb_pager_rollback(v);
		}
		assert_int_equal(apply_txn(p, &m, n, keyspace, &committing),
				 NSR_OK);
		model_copy(&committed, &m);
		done += n;
		if (rnd() % 40 == 0) {
			mmdb_pager_close(p);
			assert_int_equal(open_mem(vfs, 2u << 20, &p), NSR_OK);
		}
		if (rnd() % 25 == 0) {
			assert_true(db_matches(p, &committed));
			check_all(p);
		}
	}
	/* Delete everything: merges must bring the tree back to one page
	 * and every other page onto the free list. */
	{
		struct mmdb_view *v;
		uint32_t root;
		struct mmdb_pager_stats st;

		assert_int_equal(mmdb_pager_write_begin(p, &v), NSR_OK);
		assert_int_equal(mmdb_bt_open(v, "t", 1, &root), NSR_OK);
		for (unsigned i = 0; i < NKEYS; i++) {
			uint8_t k[64];

			if (m.val[i])
				assert_int_equal(mmdb_bt_del(v, root, k,
							     mkkey(i, k)),
						 NSR_OK);
			model_del(&m, i);
		}
		assert_int_equal(mmdb_pager_commit(v), NSR_OK);
		assert_true(db_matches(p, &m));
		check_all(p);
		mmdb_pager_stats(p, &st);
		/* page 0, the catalog's one tree root */
		assert_int_equal(st.npages - st.free_pages, 2);
	}
	mmdb_pager_close(p);
	model_free(&m);
	model_free(&committed);
	mmdb_vfs_mem_free(vfs);
}

/* test_small_cache - the random model and an old reader with a cache of
 * 8 pages: pages are dropped and reloaded all the time. */
static void test_small_cache(void **state)
{
	struct mmdb_vfs *vfs = mmdb_vfs_mem_new(9);
	struct mmdb_pager *p = NULL;
	struct model m = { 0 }, snap = { 0 };
	struct mmdb_view *old;
	int committing;

	NSR_UNUSED(state);
	rng_state = 4242;
	assert_int_equal(open_mem(vfs, 1u << 20, &p), NSR_OK);
	mmdb_pager_set_cache(p, 8);
	for (int i = 0; i < 30; i++)
		assert_int_equal(apply_txn(p, &m, 60, NKEYS, &committing),
				 NSR_OK);
	model_copy(&snap, &m);
	assert_int_equal(mmdb_pager_read_begin(p, &old), NSR_OK);
	for (int i = 0; i < 120; i++) {
		assert_int_equal(apply_txn(p, &m, 60, NKEYS, &committing),
				 NSR_OK);
		if (i % 20 == 0) {
			assert_true(db_matches(p, &m));
			check_all(p);
		}
	}
	/* the old view still reads its own state, page by page */
	{
		uint32_t root;
		struct mmdb_bt_cur cur;
		unsigned n = 0, want = 0;

		for (unsigned i = 0; i < NKEYS; i++)
			want += snap.val[i] != NULL;
		assert_int_equal(mmdb_bt_open(old, "t", 0, &root), NSR_OK);
		assert_int_equal(mmdb_bt_seek(&cur, old, root, NULL, 0),
				 NSR_OK);
		while (cur.valid) {
			const uint8_t *k, *val;
			size_t kl, vl;
			unsigned id;

			mmdb_bt_key(&cur, &k, &kl);
			mmdb_bt_val(&cur, &val, &vl);
			id = nsr_get_u32(k);
			assert_non_null(snap.val[id]);
			assert_int_equal(vl, snap.len[id]);
			assert_memory_equal(val, snap.val[id], vl);
			n++;
			assert_int_equal(mmdb_bt_next(&cur), NSR_OK);
		}
		assert_int_equal(n, want);
	}
	mmdb_pager_read_end(old);
	mmdb_pager_close(p);
	assert_int_equal(open_mem(vfs, 1u << 20, &p), NSR_OK);
	mmdb_pager_set_cache(p, 8);
	assert_true(db_matches(p, &m));
	check_all(p);
	mmdb_pager_close(p);
	model_free(&m);
	model_free(&snap);
	mmdb_vfs_mem_free(vfs);
}

/* test_sequential_fill - appending in key order keeps pages full. */
static void test_sequential_fill(void **state)
{
	struct mmdb_vfs *vfs = mmdb_vfs_mem_new(2);
	struct mmdb_pager *p = NULL;
	struct mmdb_view *v;
	struct mmdb_pager_stats st;
	uint32_t root;
	uint8_t val[100];

	NSR_UNUSED(state);
	memset(val, 'x', sizeof(val));
	assert_int_equal(open_mem(vfs, 0, &p), NSR_OK);
	assert_int_equal(mmdb_pager_write_begin(p, &v), NSR_OK);
	assert_int_equal(mmdb_bt_open(v, "seq", 1, &root), NSR_OK);
	for (uint32_t i = 0; i < 30000; i++) {
		uint8_t k[8];

		nsr_put_u64(k, i);
		assert_int_equal(mmdb_bt_put(v, root, k, 8, val, 100),
				 NSR_OK);
	}
	assert_int_equal(mmdb_pager_commit(v), NSR_OK);
	mmdb_pager_stats(p, &st);
	/* 30000 cells of 114 bytes = 3.4 MB: 105 full pages; allow 10%. */
	assert_true(st.npages < 120);
	check_all(p);
	mmdb_pager_close(p);
	mmdb_vfs_mem_free(vfs);
}

/* test_mvcc_reader - a read view keeps its snapshot across commits. */
static void test_mvcc_reader(void **state)
{
	struct mmdb_vfs *vfs = mmdb_vfs_mem_new(3);
	struct mmdb_pager *p = NULL;
	struct model m = { 0 }, snap = { 0 };
	struct mmdb_view *r1;
	int committing;

	NSR_UNUSED(state);
	rng_state = 7;
	assert_int_equal(open_mem(vfs, 1u << 20, &p), NSR_OK);
	for (int i = 0; i < 20; i++)
		assert_int_equal(apply_txn(p, &m, 50, NKEYS, &committing),
				 NSR_OK);
	model_copy(&snap, &m);
	assert_int_equal(mmdb_pager_read_begin(p, &r1), NSR_OK);
	/* Many commits (and checkpoints) while r1 is open. */
	for (int i = 0; i < 40; i++)
		assert_int_equal(apply_txn(p, &m, 50, NKEYS, &committing),
				 NSR_OK);
	{
		uint32_t root;
		struct mmdb_bt_cur cur;
		unsigned n = 0, want = 0;

		for (unsigned i = 0; i < NKEYS; i++)
			want += snap.val[i] != NULL;
		assert_int_equal(mmdb_bt_open(r1, "t", 0, &root), NSR_OK);
		assert_int_equal(mmdb_bt_seek(&cur, r1, root, NULL, 0),
				 NSR_OK);
		while (cur.valid) {
			const uint8_t *k, *val;
			size_t kl, vl;
			unsigned id;

			mmdb_bt_key(&cur, &k, &kl);
			mmdb_bt_val(&cur, &val, &vl);
			id = nsr_get_u32(k);
			assert_non_null(snap.val[id]);
			assert_int_equal(vl, snap.len[id]);
			assert_memory_equal(val, snap.val[id], vl);
			n++;
			assert_int_equal(mmdb_bt_next(&cur), NSR_OK);
		}
		assert_int_equal(n, want);
	}
	mmdb_pager_read_end(r1);
	assert_true(db_matches(p, &m));
	check_all(p);
	mmdb_pager_close(p);
	model_free(&m);
	model_free(&snap);
	mmdb_vfs_mem_free(vfs);
}

/* run_fault - one fault-injection or crash run; returns 1 if the fault
 * fired (so the caller continues with the next n), 0 if the workload
 * completed without it. */
static int run_fault(enum mmdb_fault kind, uint64_t n, int garble)
{
	struct mmdb_vfs *vfs = mmdb_vfs_mem_new(n * 31 + (uint64_t)kind);
	struct mmdb_pager *p = NULL;
	struct model m = { 0 }, acked = { 0 };
	int rc = NSR_OK, committing = 0, fired;

	rng_state = 99;
	mmdb_vfs_mem_fail_at(vfs, kind, n, 0);
	rc = open_mem(vfs, 200000, &p);
	for (int t = 0; t < 12 && rc == NSR_OK; t++) {
		rc = apply_txn(p, &m, 25, 600, &committing);
		if (rc == NSR_OK)
			model_copy(&acked, &m);
	}
	fired = mmdb_vfs_mem_fired(vfs);
	if (rc != NSR_OK && p && committing && kind != MMDB_FAULT_ALLOC) {
		/* Sticky: after an I/O error in commit, nothing works. */
		struct mmdb_view *v = NULL;

		assert_int_equal(mmdb_pager_read_begin(p, &v), NSR_ERR_STATE);
		assert_int_equal(mmdb_pager_write_begin(p, &v),
				 NSR_ERR_STATE);
	}
	mmdb_pager_close(p);
	p = NULL;
	if (kind == MMDB_FAULT_POWER)
		mmdb_vfs_mem_crash(vfs, garble);
	mmdb_vfs_mem_fail_at(vfs, kind, 0, 0);
	if (rc != NSR_OK)
		assert_true(fired);
	rc = open_mem(vfs, 200000, &p);
	if (rc != NSR_OK)
		fprintf(stderr, "reopen after fault %d at %" PRIu64 ": %s\n",
			(int)kind, n, nsr_strerror(rc));
	assert_int_equal(rc, NSR_OK);
	/* Every acknowledged transaction is there; the one in flight is
	 * there completely or not at all. */
	if (!db_matches(p, &acked)) {
		if (!committing || !db_matches(p, &m))
		{
			int bad;
			unsigned nk = count_keys(p, &bad);

			fprintf(stderr, "fault %d at %" PRIu64 ": lost data "
				"(committing %d): db %u keys (bad %d), acked "
				"%u, all %u\n", (int)kind, n, committing, nk,
				bad, model_count(&acked), model_count(&m));
		}
		assert_true(committing);
		assert_true(db_matches(p, &m));
	} else {
		model_copy(&m, &acked);
	}
	check_all(p);
	/* And the database keeps working. */
	assert_int_equal(apply_txn(p, &m, 10, 600, &committing), NSR_OK);
	check_all(p);
	mmdb_pager_close(p);
	model_free(&m);
	model_free(&acked);
	mmdb_vfs_mem_free(vfs);
	return fired;
}

/* test_faults - fail the n-th write, sync, allocation; n = 1, 2, ... */
static void test_faults(void **state)
{
	static const enum mmdb_fault kinds[] = {
		MMDB_FAULT_WRITE, MMDB_FAULT_SYNC, MMDB_FAULT_ALLOC
	};

	NSR_UNUSED(state);
	for (size_t k = 0; k < NSR_ARRAY_SIZE(kinds); k++) {
		uint64_t n;

		for (n = 1; n < 100000; n++)
			if (!run_fault(kinds[k], n, 0))
				break;
		assert_true(n > 1);
	}
}

/* test_power_loss - lose power at sync 1, 2, 3, ... (torn sectors). */
static void test_power_loss(void **state)
{
	uint64_t n;

	NSR_UNUSED(state);
	for (n = 1; n < 100000; n++)
		if (!run_fault(MMDB_FAULT_POWER, n, (int)(n & 1)))
			break;
	assert_true(n > 10);
}

/* ---- group commit ---------------------------------------------------- */

static volatile int gate_blocked, gate_open;
static int (*inner_sync)(struct mmdb_file *f);

/* gated_sync - the first sync waits until the test opens the gate. */
static int gated_sync(struct mmdb_file *f)
{
	if (!gate_blocked) {
		gate_blocked = 1;
		while (!gate_open)
			usleep(1000);
	}
	return inner_sync(f);
}

struct committer {
	struct mmdb_pager *p;
	unsigned id;
	int rc;
};

/* committer_main - one transaction writing key id. */
static void *committer_main(void *arg)
{
	struct committer *c = arg;
	struct mmdb_view *v;
	uint32_t root;
	uint8_t k[64];
	size_t kl = mkkey(c->id, k);

	c->rc = mmdb_pager_write_begin(c->p, &v);
	if (c->rc != NSR_OK)
		return NULL;
	c->rc = mmdb_bt_open(v, "t", 1, &root);
	if (c->rc == NSR_OK)
		c->rc = mmdb_bt_put(v, root, k, kl, k, kl);
	if (c->rc != NSR_OK) {
		mmdb_pager_rollback(v);
		return NULL;
	}
	c->rc = mmdb_pager_commit(v);
	return NULL;
}

/* test_group_commit - three committers, two fsyncs: B and C write their
 * frames while A's fsync is in progress and share the next one. */
static void test_group_commit(void **state)
{
	struct mmdb_vfs *mem = mmdb_vfs_mem_new(5);
	struct mmdb_vfs gated = *mem;
	struct mmdb_pager *p = NULL;
	struct mmdb_pager_stats st0, st;
	struct committer c[3];
	pthread_t th[3];

	NSR_UNUSED(state);
	inner_sync = mem->sync;
	assert_int_equal(open_mem(mem, 0, &p), NSR_OK);
	mmdb_pager_close(p);
	gated.sync = gated_sync;
	gate_blocked = 0;
	gate_open = 0;
	/* Opening syncs too: let those through. */
	gate_blocked = 1;
	assert_int_equal(mmdb_pager_open(&gated, "/db", 0, 0, &p), NSR_OK);
	mmdb_pager_stats(p, &st0);
	gate_blocked = 0;
	for (int i = 0; i < 3; i++) {
		c[i].p = p;
		c[i].id = (unsigned)i + 1;
		assert_int_equal(pthread_create(&th[i], NULL, committer_main,
						&c[i]), 0);
		if (i == 0)
			while (!gate_blocked)
				usleep(1000);
	}
	do {
		usleep(1000);
		mmdb_pager_stats(p, &st);
	} while (st.commits < st0.commits + 3);
	gate_open = 1;
	for (int i = 0; i < 3; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(c[i].rc, NSR_OK);
	}
	mmdb_pager_stats(p, &st);
	assert_int_equal(st.commits - st0.commits, 3);
	assert_int_equal(st.fsyncs - st0.fsyncs, 2);
	mmdb_pager_close(p);
	/* All three survive a power loss right after. */
	mmdb_vfs_mem_crash(mem, 1);
	assert_int_equal(open_mem(mem, 0, &p), NSR_OK);
	{
		struct model m = { 0 };

		for (unsigned i = 1; i <= 3; i++) {
			uint8_t k[64];
			size_t kl = mkkey(i, k);

			model_set(&m, i, k, kl);
		}
		assert_true(db_matches(p, &m));
		model_free(&m);
	}
	mmdb_pager_close(p);
	mmdb_vfs_mem_free(mem);
}

/* test_posix_reopen - real files: write, reopen, damage a page. */
static void test_posix_reopen(void **state)
{
	char *dir = nsr_test_tmpdir("mmdb_bt");
	struct mmdb_pager *p = NULL;
	struct model m = { 0 };
	int committing;

	NSR_UNUSED(state);
	rng_state = 11;
	assert_int_equal(mmdb_pager_open(NULL, dir, MMDB_PAGER_CREATE, 0, &p),
			 NSR_OK);
	for (int i = 0; i < 10; i++)
		assert_int_equal(apply_txn(p, &m, 40, NKEYS, &committing),
				 NSR_OK);
	mmdb_pager_close(p);	/* checkpoints into the db file */
	assert_int_equal(mmdb_pager_open(NULL, dir, 0, 0, &p), NSR_OK);
	assert_true(db_matches(p, &m));
	check_all(p);
	mmdb_pager_close(p);
	/* Flip a byte in page 1: the checksum catches it. */
	{
		char *path = malloc(strlen(dir) + 8);
		FILE *f;
		struct mmdb_view *v;
		struct nsr_buf rep;

		assert_non_null(path);
		snprintf(path, strlen(dir) + 8, "%s/mmdb", dir);
		f = fopen(path, "r+b");
		assert_non_null(f);
		{
			int ch;

			fseek(f, MMDB_PAGE_SIZE + 100, SEEK_SET);
			ch = fgetc(f);
			fseek(f, MMDB_PAGE_SIZE + 100, SEEK_SET);
			fputc(ch ^ 0xff, f);
		}
		fclose(f);
		free(path);
		assert_int_equal(mmdb_pager_open(NULL, dir, 0, 0, &p), NSR_OK);
		nsr_buf_init(&rep, 0);
		assert_int_equal(mmdb_pager_read_begin(p, &v), NSR_OK);
		assert_true(mmdb_bt_check_all(v, &rep) > 0);
		assert_non_null(strstr(rep.data, "checksum"));
		mmdb_pager_read_end(v);
		nsr_buf_release(&rep);
		mmdb_pager_close(p);
	}
	model_free(&m);
	nsr_test_rmrf(dir);
	free(dir);
}

/* copy_file - dir/name to dir2/name (whole). */
static void copy_file(const char *dir, const char *dir2, const char *name)
{
	char a[4200], b[4200];
	struct nsr_buf data;
	FILE *f;
	size_t n;
	char buf[65536];

	snprintf(a, sizeof(a), "%s/%s", dir, name);
	snprintf(b, sizeof(b), "%s/%s", dir2, name);
	nsr_buf_init(&data, 0);
	f = fopen(a, "rb");
	assert_non_null(f);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		assert_int_equal(nsr_buf_add(&data, buf, n), NSR_OK);
	fclose(f);
	f = fopen(b, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data.data, 1, data.len, f), data.len);
	fclose(f);
	nsr_buf_release(&data);
}

/* test_wal_past_end - a committed WAL frame, valid in every checksum,
 * that names a page far past the database's end (as a damaged or
 * hostile WAL could) ends recovery there: the transactions before it
 * are replayed, and neither the file nor the page map grows to reach
 * it. */
static void test_wal_past_end(void **state)
{
	char *dir = nsr_test_tmpdir("mmdb_wal"), *dir2;
	struct mmdb_pager *p = NULL;
	struct model m = { 0 };
	char walpath[4200], dbpath[4200];
	uint8_t *fr = malloc(WAL_FRAME_SIZE), hdr[WAL_HDR_SIZE];
	const uint32_t far = 1000000; /* 32 GB into the file */
	struct stat st;
	uint64_t off, salt;
	uint32_t crc = 0;
	FILE *f;
	int committing;

	NSR_UNUSED(state);
	assert_non_null(fr);
	dir2 = malloc(strlen(dir) + 3);
	assert_non_null(dir2);
	snprintf(dir2, strlen(dir) + 3, "%s/c", dir);
	assert_int_equal(mkdir(dir2, 0700), 0);
	rng_state = 5;
	/* Committed transactions left in the WAL: copy the files while the
	 * pager is open (nothing checkpointed yet). */
	assert_int_equal(mmdb_pager_open(NULL, dir, MMDB_PAGER_CREATE,
					 64u << 20, &p),
			 NSR_OK);
	for (int i = 0; i < 4; i++)
		assert_int_equal(apply_txn(p, &m, 30, NKEYS, &committing),
				 NSR_OK);
	copy_file(dir, dir2, MMDB_DB_NAME);
	copy_file(dir, dir2, MMDB_WAL_NAME);
	mmdb_pager_close(p);
	/* Find the end of the chain: the last frame's CRC, and where the
	 * next transaction would start. */
	snprintf(walpath, sizeof(walpath), "%s/%s", dir2, MMDB_WAL_NAME);
	snprintf(dbpath, sizeof(dbpath), "%s/%s", dir2, MMDB_DB_NAME);
	f = fopen(walpath, "r+b");
	assert_non_null(f);
	assert_int_equal(fread(hdr, 1, sizeof(hdr), f), sizeof(hdr));
	salt = nsr_get_u64(hdr + 16);
	off = WAL_ALIGN;
	for (;;) {
		assert_int_equal(fseek(f, (long)off, SEEK_SET), 0);
		if (fread(fr, 1, WAL_FRAME_SIZE, f) != WAL_FRAME_SIZE ||
		    nsr_get_u32(fr) != WAL_FRAME_MAGIC ||
		    nsr_get_u64(fr + 16) != salt)
			break;
		crc = nsr_get_u32(fr + 28);
		off = (nsr_get_u32(fr + 24) & WAL_FLAG_COMMIT)
			      ? (off + WAL_FRAME_SIZE + WAL_ALIGN - 1) /
					WAL_ALIGN * WAL_ALIGN
			      : off + WAL_FRAME_SIZE;
	}
	assert_true(crc != 0);
	/* A one-frame transaction for page `far`: a valid page image
	 * (zeros, numbered and sealed), a chained CRC. */
	memset(fr, 0, WAL_FRAME_SIZE);
	nsr_put_u32(fr + WAL_FRAME_HDR + PH_PGNO, far);
	nsr_put_u32(fr + WAL_FRAME_HDR + PH_CRC,
		    nsr_crc32c(0, fr + WAL_FRAME_HDR + 4, MMDB_PAGE_SIZE - 4));
	nsr_put_u32(fr, WAL_FRAME_MAGIC);
	nsr_put_u32(fr + 4, far);
	nsr_put_u64(fr + 8, 999);
	nsr_put_u64(fr + 16, salt);
	nsr_put_u32(fr + 24, WAL_FLAG_COMMIT);
	crc = nsr_crc32c(crc, fr, 28);
	nsr_put_u32(fr + 28, nsr_crc32c(crc, fr + WAL_FRAME_HDR,
					MMDB_PAGE_SIZE));
	assert_int_equal(fseek(f, (long)off, SEEK_SET), 0);
	assert_int_equal(fwrite(fr, 1, WAL_FRAME_SIZE, f), WAL_FRAME_SIZE);
	fclose(f);
	/* Recovery replays the four transactions and stops at the frame. */
	assert_int_equal(mmdb_pager_open(NULL, dir2, 0, 0, &p), NSR_OK);
	assert_true(db_matches(p, &m));
	check_all(p);
	mmdb_pager_close(p);
	assert_int_equal(stat(dbpath, &st), 0);
	assert_true((uint64_t)st.st_size < (uint64_t)far * MMDB_PAGE_SIZE);
	model_free(&m);
	free(fr);
	free(dir2);
	nsr_test_rmrf(dir);
	free(dir);
}

/* mem_file_is - path on vfs is n bytes long: k bytes v, then zeros. */
static void mem_file_is(struct mmdb_vfs *vfs, const char *path, size_t n,
			size_t k, uint8_t v)
{
	struct mmdb_file *f = NULL;
	uint8_t buf[8192];
	uint64_t size;
	size_t got;

	assert_true(n <= sizeof(buf));
	assert_int_equal(vfs->open(vfs, path, 0, &f), NSR_OK);
	assert_int_equal(vfs->size(f, &size), NSR_OK);
	assert_int_equal(size, n);
	assert_int_equal(vfs->read(f, buf, sizeof(buf), 0, &got), NSR_OK);
	assert_int_equal(got, n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(buf[i], i < k ? v : 0);
	vfs->close(f);
}

/* test_mem_reset - a reset mem vfs is like a new one (no file, nothing
 * armed or counted), and holes read as zero in the reused buffers. */
static void test_mem_reset(void **state)
{
	struct mmdb_vfs *vfs = mmdb_vfs_mem_new(4);
	struct mmdb_file *f = NULL;
	uint8_t data[6000];

	NSR_UNUSED(state);
	assert_non_null(vfs);
	memset(data, 0xa5, sizeof(data));
	assert_int_equal(vfs->open(vfs, "/d/a", MMDB_VFS_CREATE, &f), NSR_OK);
	assert_int_equal(vfs->write(f, data, sizeof(data), 0), NSR_OK);
	assert_int_equal(vfs->sync(f), NSR_OK);
	vfs->close(f);
	/* a shorter put leaves no old bytes past its end */
	assert_int_equal(mmdb_vfs_mem_put(vfs, "/d/b", data, 3000), NSR_OK);
	assert_int_equal(mmdb_vfs_mem_put(vfs, "/d/b", data, 100), NSR_OK);
	assert_int_equal(vfs->open(vfs, "/d/b", 0, &f), NSR_OK);
	assert_int_equal(vfs->truncate(f, 3000), NSR_OK);
	vfs->close(f);
	mem_file_is(vfs, "/d/b", 3000, 100, 0xa5);
	mmdb_vfs_mem_fail_at(vfs, MMDB_FAULT_WRITE, 1, 1);

	mmdb_vfs_mem_reset(vfs, 4);
	assert_int_equal(vfs->open(vfs, "/d/a", 0, &f), NSR_ERR_NOTFOUND);
	assert_int_equal(vfs->open(vfs, "/d/b", 0, &f), NSR_ERR_NOTFOUND);
	assert_int_equal(mmdb_vfs_mem_count(vfs, MMDB_FAULT_POWER), 0);
	assert_int_equal(mmdb_vfs_mem_fired(vfs), 0);
	/* the new files get the old buffers: a hole must read as zero */
	assert_int_equal(vfs->open(vfs, "/e", MMDB_VFS_CREATE, &f), NSR_OK);
	assert_int_equal(vfs->write(f, data, 10, 5000), NSR_OK);
	vfs->close(f);
	assert_int_equal(mmdb_vfs_mem_put(vfs, "/e2", data, 0), NSR_OK);
	assert_int_equal(vfs->open(vfs, "/e2", 0, &f), NSR_OK);
	assert_int_equal(vfs->truncate(f, 4000), NSR_OK);
	vfs->close(f);
	mem_file_is(vfs, "/e2", 4000, 0, 0);
	assert_int_equal(mmdb_vfs_mem_count(vfs, MMDB_FAULT_WRITE), 2);
	{
		uint8_t buf[5010];
		size_t got;

		assert_int_equal(vfs->open(vfs, "/e", 0, &f), NSR_OK);
		assert_int_equal(vfs->read(f, buf, sizeof(buf), 0, &got),
				 NSR_OK);
		assert_int_equal(got, 5010);
		for (size_t i = 0; i < 5000; i++)
			assert_int_equal(buf[i], 0);
		assert_int_equal(buf[5009], 0xa5);
		vfs->close(f);
	}
	mmdb_vfs_mem_free(vfs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_model),
		cmocka_unit_test(test_small_cache),
		cmocka_unit_test(test_sequential_fill),
		cmocka_unit_test(test_mvcc_reader),
		cmocka_unit_test(test_faults),
		cmocka_unit_test(test_power_loss),
		cmocka_unit_test(test_group_commit),
		cmocka_unit_test(test_posix_reopen),
		cmocka_unit_test(test_wal_past_end),
		cmocka_unit_test(test_mem_reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
