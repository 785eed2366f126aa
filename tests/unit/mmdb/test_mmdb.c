/*
 * test_mmdb.c - the media database schema: records, indexes kept in step
 * (integrity check after every case), queries by every index against a
 * forced scan and a brute-force filter written here independently,
 * concurrent snapshot, crash loop and sticky errors at the schema level,
 * and damaged-record decoding.
 */
#include "nsr/compat.h"

#include <pthread.h>
#include <unistd.h>

#include "nsr_test.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/mmdb.h"
#include "nsr/mmdb_pager.h"
#include "nsr/mmdb_vfs.h"

#include "../../../src/mmdb/mmdb_int.h"

static uint64_t rng_state;

/* rnd - xorshift64*. */
static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

/* must_check - the integrity check passes. */
static void must_check(struct mmdb *db)
{
	struct nsr_buf rep;
	int rc;

	nsr_buf_init(&rep, 0);
	rc = mmdb_check(db, &rep);
	if (rc != NSR_OK)
		fprintf(stderr, "mmdb_check: %s\n%s", nsr_strerror(rc),
			rep.data);
	assert_int_equal(rc, NSR_OK);
	nsr_buf_release(&rep);
}

/* mkvol - a volume i. */
static void mkvol(struct mmdb_volume *v, unsigned i)
{
	memset(v, 0, sizeof(*v));
	snprintf(v->name, sizeof(v->name), "VOL%03u", i);
	v->volid[0] = 0xa0;
	v->volid[15] = (uint8_t)i;
	v->volid[14] = (uint8_t)(i >> 8);
	snprintf(v->pool, sizeof(v->pool), "pool%u", i % 3);
	snprintf(v->type, sizeof(v->type), "%s", i % 2 ? "LTO-8" : "adv_file");
	snprintf(v->location, sizeof(v->location), "rack%u", i % 4);
	v->block_size = 262144;
	v->capacity = 1000000;
	v->written = (uint64_t)i * 37000 % 1000000;
	v->olabel = 1700000000 + i;
	v->labeled = v->olabel + 10;
	v->flags = (i % 5 == 0) ? MMDB_VOL_FULL : 0;
}

/* mkss - a save set for client c, name n, time t. */
static void mkss(struct mmdb_saveset *s, unsigned c, unsigned n, int64_t t)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->client, sizeof(s->client), "client%02u.example.com", c);
	snprintf(s->name, sizeof(s->name), "/data/fs%u", n);
	snprintf(s->pool, sizeof(s->pool), "pool%u", (c + n) % 3);
	snprintf(s->group, sizeof(s->group), "grp%u", c % 2);
	s->level = (uint8_t)((t / 7) % 12);
	s->savetime = t;
	s->sscreate = t + 1;
	s->sscomp = t + 100;
	s->ssretent = t + 86400 * 30;
	s->ssbrowse = t + 86400 * 7;
	s->totalsize = (uint64_t)t % 100000;
	s->nfiles = 10 + (uint64_t)t % 50;
	s->flags = MMDB_SS_VALID | MMDB_SS_FINISHED |
		   ((t % 9 == 0) ? MMDB_SS_INCOMPLETE : MMDB_SS_BROWSABLE);
}

/* test_txn_end - mmdb_txn_end commits what went well and aborts what
 * did not: a volume put under rc NSR_OK is there, one under an error is
 * not and the error comes back; a NULL txn (a failed begin) only says
 * the error. */
static void test_txn_end(void **state)
{
	struct mmdb_vfs *vfs = mmdb_vfs_mem_new(1);
	struct mmdb_opts o;
	struct mmdb_txn *t;
	struct mmdb_volume v, got;
	struct mmdb *db;

	NSR_UNUSED(state);
	mmdb_opts_init(&o);
	o.vfs = vfs;
	assert_int_equal(mmdb_open("/m", &o, &db), NSR_OK);
	mkvol(&v, 1);
	assert_int_equal(mmdb_txn_begin(db, &t), NSR_OK);
	assert_int_equal(mmdb_vol_put(db, t, &v), NSR_OK);
	assert_int_equal(mmdb_txn_end(t, NSR_OK), NSR_OK);
	assert_int_equal(mmdb_vol_get(db, "VOL001", &got), NSR_OK);
	mkvol(&v, 2);
	assert_int_equal(mmdb_txn_begin(db, &t), NSR_OK);
	assert_int_equal(mmdb_vol_put(db, t, &v), NSR_OK);
	assert_int_equal(mmdb_txn_end(t, NSR_ERR_NOTFOUND), NSR_ERR_NOTFOUND);
	assert_int_equal(mmdb_vol_get(db, "VOL002", &got), NSR_ERR_NOTFOUND);
	assert_int_equal(mmdb_txn_end(NULL, NSR_ERR_BUSY), NSR_ERR_BUSY);
	/* the writer slot is free again */
	assert_int_equal(mmdb_txn_begin(db, &t), NSR_OK);
	assert_int_equal(mmdb_txn_end(t, NSR_OK), NSR_OK);
	must_check(db);
	mmdb_close(db);
	mmdb_vfs_mem_free(vfs);
}

/* test_records - CRUD of every record kind, indexes in step. */
static void test_records(void **state)
{
	struct mmdb_vfs *vfs = mmdb_vfs_mem_new(1);
	struct mmdb_opts o;
	struct mmdb *db;
	struct mmdb_volume v, got;
	struct mmdb_saveset s, s2;
	struct mmdb_fragment f, fl[8];
	struct mmdb_clone cl, cls[4];
	uint32_t cid, cid2, ssid1;
	size_t n;

	NSR_UNUSED(state);
	mmdb_opts_init(&o);
	o.vfs = vfs;
	assert_int_equal(mmdb_open("/m", &o, &db), NSR_OK);
	mkvol(&v, 1);
	assert_int_equal(mmdb_vol_put(db, NULL, &v), NSR_OK);
	assert_int_equal(mmdb_vol_get(db, "VOL001", &got), NSR_OK);
	assert_string_equal(got.pool, "pool1");
	assert_int_equal(got.written, v.written);
	assert_int_equal(mmdb_vol_get_by_id(db, v.volid, &got), NSR_OK);
	assert_string_equal(got.name, "VOL001");
	/* Another name with the same volid is refused. */
	snprintf(got.name, sizeof(got.name), "OTHER");
	assert_int_equal(mmdb_vol_put(db, NULL, &got), NSR_ERR_EXISTS);
	/* Update: new pool, counters. */
	snprintf(v.pool, sizeof(v.pool), "Default");
	v.mounts = 7;
	assert_int_equal(mmdb_vol_put(db, NULL, &v), NSR_OK);
	assert_int_equal(mmdb_vol_get(db, "VOL001", &got), NSR_OK);
	assert_int_equal(got.mounts, 7);
	assert_string_equal(got.pool, "Default");
	must_check(db);

	mkss(&s, 1, 1, 1700000100);
	assert_int_equal(mmdb_ss_create(db, NULL, &s, 0, &cid), NSR_OK);
	ssid1 = s.ssid;
	assert_true(ssid1 != 0);
	assert_int_equal(cid, (uint32_t)1700000100);
	mkss(&s2, 1, 1, 1700000200);
	assert_int_equal(mmdb_ss_create(db, NULL, &s2, 0, NULL), NSR_OK);
	assert_true(s2.ssid != ssid1);
	assert_int_equal(mmdb_ss_get(db, ssid1, &s2), NSR_OK);
	assert_string_equal(s2.client, "client01.example.com");
	assert_string_equal(s2.name, "/data/fs1");
	assert_int_equal(s2.savetime, 1700000100);
	assert_int_equal(s2.sscomp, 1700000200);
	assert_memory_equal(s2.longid, s.longid, 16);

	memset(&f, 0, sizeof(f));
	f.ssid = ssid1;
	f.cloneid = cid;
	memcpy(f.volid, v.volid, 16);
	f.seq = 0;
	f.size = 5000;
	f.file = 3;
	f.record = 9;
	f.flags = MMDB_FRAG_HEAD;
	assert_int_equal(mmdb_frag_add(db, NULL, &f), NSR_OK);
	mkvol(&v, 2);
	assert_int_equal(mmdb_vol_put(db, NULL, &v), NSR_OK);
	memcpy(f.volid, v.volid, 16);
	f.seq = 1;
	f.flags = MMDB_FRAG_TAIL;
	f.ss_offset = 5000;
	assert_int_equal(mmdb_frag_add(db, NULL, &f), NSR_OK);
	f.cloneid = 12345;	/* no such clone */
	assert_int_equal(mmdb_frag_add(db, NULL, &f), NSR_ERR_NOTFOUND);
	assert_int_equal(mmdb_frag_list(db, ssid1, fl, 8, &n), NSR_OK);
	assert_int_equal(n, 2);
	assert_int_equal(fl[0].file, 3);
	assert_int_equal(fl[1].ss_offset, 5000);
	assert_memory_equal(fl[1].volid, v.volid, 16);
	must_check(db);

	/* A clone on VOL002. */
	memset(&cl, 0, sizeof(cl));
	cl.ssid = ssid1;
	cl.clone_time = 1700000500;
	cl.clretent = 1800000000;
	assert_int_equal(mmdb_clone_add(db, NULL, &cl, &cid2), NSR_OK);
	assert_int_equal(cid2, 1700000500);
	cl.cloneid = cid2;
	assert_int_equal(mmdb_clone_add(db, NULL, &cl, NULL), NSR_ERR_EXISTS);
	f.cloneid = cid2;
	f.seq = 0;
	f.flags = MMDB_FRAG_COMPLETE;
	assert_int_equal(mmdb_frag_add(db, NULL, &f), NSR_OK);
	assert_int_equal(mmdb_clone_list(db, ssid1, cls, 4, &n), NSR_OK);
	assert_int_equal(n, 2);
	must_check(db);

	/* Update moves the save set in the indexes. */
	assert_int_equal(mmdb_ss_get(db, ssid1, &s2), NSR_OK);
	snprintf(s2.client, sizeof(s2.client), "renamed");
	s2.savetime = 1600000000;
	assert_int_equal(mmdb_ss_update(db, NULL, &s2), NSR_OK);
	must_check(db);

	/* Deleting VOL002 drops its fragments only. */
	assert_int_equal(mmdb_vol_delete(db, NULL, "VOL002"), NSR_OK);
	assert_int_equal(mmdb_frag_list(db, ssid1, fl, 8, &n), NSR_OK);
	assert_int_equal(n, 1);
	assert_int_equal(mmdb_vol_get(db, "VOL002", &got), NSR_ERR_NOTFOUND);
	must_check(db);

	/* Reopen: everything is still there, new ssids never collide. */
	mmdb_close(db);
	assert_int_equal(mmdb_open("/m", &o, &db), NSR_OK);
	assert_int_equal(mmdb_ss_get(db, ssid1, &s2), NSR_OK);
	assert_string_equal(s2.client, "renamed");
	mkss(&s, 3, 3, 1700000300);
	assert_int_equal(mmdb_ss_create(db, NULL, &s, 0, NULL), NSR_OK);
	assert_true(s.ssid > ssid1);
	assert_int_equal(mmdb_ss_delete(db, NULL, ssid1), NSR_OK);
	assert_int_equal(mmdb_ss_get(db, ssid1, &s2), NSR_ERR_NOTFOUND);
	must_check(db);

	/* A read-only opener sees the committed WAL contents in memory and
	 * refuses writes. */
	{
		struct mmdb_opts ro = o;
		struct mmdb *rdb;

		ro.flags = MMDB_OPEN_READONLY;
		assert_int_equal(mmdb_open("/m", &ro, &rdb), NSR_OK);
		assert_int_equal(mmdb_ss_get(rdb, s.ssid, &s2), NSR_OK);
		assert_int_equal(s2.savetime, 1700000300);
		assert_int_equal(mmdb_ss_create(rdb, NULL, &s2, 0, NULL),
				 NSR_ERR_READONLY);
		must_check(rdb);
		mmdb_close(rdb);
	}

	/* Bad arguments. */
	memset(&s, 0, sizeof(s));
	assert_int_equal(mmdb_ss_create(db, NULL, &s, 0, NULL), NSR_ERR_INVAL);
	memset(&v, 0, sizeof(v));
	snprintf(v.name, sizeof(v.name), "NOID");
	assert_int_equal(mmdb_vol_put(db, NULL, &v), NSR_ERR_INVAL);
	mmdb_close(db);
	mmdb_vfs_mem_free(vfs);
}

/* ---- query equivalence ----------------------------------------------- */

#define NVOL 20
#define NSS 400

/* build - a random data set: NVOL volumes, NSS save sets, fragments on 1-2
 * volumes, some clones; all in a few explicit transactions. */
static void build(struct mmdb *db)
{
	struct mmdb_txn *t;
	struct mmdb_volume v;

	assert_int_equal(mmdb_txn_begin(db, &t), NSR_OK);
	for (unsigned i = 0; i < NVOL; i++) {
		mkvol(&v, i);
		assert_int_equal(mmdb_vol_put(db, t, &v), NSR_OK);
	}
	for (unsigned i = 0; i < NSS; i++) {
		struct mmdb_saveset s;
		struct mmdb_fragment f;
		uint32_t cid;
		unsigned nf = 1 + (unsigned)(rnd() % 2);

		if (i % 100 == 99) {
			assert_int_equal(mmdb_txn_commit(t), NSR_OK);
			assert_int_equal(mmdb_txn_begin(db, &t), NSR_OK);
		}
		mkss(&s, (unsigned)(rnd() % 12), (unsigned)(rnd() % 4),
		     1700000000 + (int64_t)(rnd() % 100000));
		assert_int_equal(mmdb_ss_create(db, t, &s, 0, &cid), NSR_OK);
		for (unsigned j = 0; j < nf; j++) {
			memset(&f, 0, sizeof(f));
			f.ssid = s.ssid;
			f.cloneid = cid;
			mkvol(&v, (unsigned)(rnd() % NVOL));
			memcpy(f.volid, v.volid, 16);
			f.seq = j;
			f.size = 1000 + j;
			f.flags = nf == 1 ? MMDB_FRAG_COMPLETE :
				  j ? MMDB_FRAG_TAIL : MMDB_FRAG_HEAD;
			assert_int_equal(mmdb_frag_add(db, t, &f), NSR_OK);
		}
		if (rnd() % 10 == 0) {
			struct mmdb_clone c = { 0 };

			c.ssid = s.ssid;
			c.clone_time = s.savetime + 50;
			assert_int_equal(mmdb_clone_add(db, t, &c, &cid),
					 NSR_OK);
			memset(&f, 0, sizeof(f));
			f.ssid = s.ssid;
			f.cloneid = cid;
			mkvol(&v, (unsigned)(rnd() % NVOL));
			memcpy(f.volid, v.volid, 16);
			f.flags = MMDB_FRAG_COMPLETE;
			assert_int_equal(mmdb_frag_add(db, t, &f), NSR_OK);
		}
	}
	assert_int_equal(mmdb_txn_commit(t), NSR_OK);
}

/* A row reduced to what identifies it. */
struct rid {
	uint32_t ssid, cloneid;
	char vol[MMDB_VOLNAME_MAX + 1];
};

/* rid_cmp - order rows for comparison. */
static int rid_cmp(const void *a, const void *b)
{
	const struct rid *x = a, *y = b;

	if (x->ssid != y->ssid)
		return x->ssid < y->ssid ? -1 : 1;
	if (x->cloneid != y->cloneid)
		return x->cloneid < y->cloneid ? -1 : 1;
	return strcmp(x->vol, y->vol);
}

/* brute - the test's own filter for the attributes the queries use. */
static int brute(const struct mmdb_pred *p, size_t n,
		 const struct mmdb_ss_row *r)
{
	for (size_t i = 0; i < n; i++) {
		int ok = 0, haveeq = 0, anyeq = 0;

		/* OR over EQ predicates of the same attribute */
		for (size_t j = 0; j < n; j++) {
			if (p[j].attr != p[i].attr || p[j].op != MMDB_OP_EQ)
				continue;
			haveeq = 1;
			switch (p[j].attr) {
			case MMDB_A_CLIENT:
				anyeq |= !strcmp(r->ss.client, p[j].str);
				break;
			case MMDB_A_NAME:
				anyeq |= !strcmp(r->ss.name, p[j].str);
				break;
			case MMDB_A_SSID:
				anyeq |= r->ss.ssid == (uint32_t)p[j].num;
				break;
			case MMDB_A_VOLUME:
				anyeq |= r->has_volume &&
					 !strcmp(r->vol.name, p[j].str);
				break;
			case MMDB_A_POOL:
				anyeq |= !strcmp(r->ss.pool, p[j].str);
				break;
			case MMDB_A_SAVETIME:
				anyeq |= r->ss.savetime == p[j].num;
				break;
			default:
				fail();
			}
		}
		if (haveeq && !anyeq)
			return 0;
		switch (p[i].op) {
		case MMDB_OP_EQ:
			ok = 1;
			break;
		case MMDB_OP_GE:
			ok = r->ss.savetime >= p[i].num;
			break;
		case MMDB_OP_LT:
			ok = r->ss.savetime < p[i].num;
			break;
		case MMDB_OP_SET:
			ok = !!(r->ss.flags & MMDB_SS_INCOMPLETE);
			break;
		case MMDB_OP_CLEAR:
			ok = !(r->ss.flags & MMDB_SS_INCOMPLETE);
			break;
		default:
			fail();
		}
		if (!ok)
			return 0;
	}
	return 1;
}

/* run_rows - rows of a query (sorted ids); *plan gets the plan. */
static size_t run_rows(struct mmdb *db, const struct mmdb_pred *p, size_t n,
		       unsigned flags, struct rid *out, size_t max,
		       enum mmdb_plan *plan, int brute_filter)
{
	struct mmdb_query q = { brute_filter ? NULL : p,
				brute_filter ? 0 : n };
	struct mmdb_cursor *c;
	struct mmdb_ss_row *row = malloc(sizeof(*row));
	size_t k = 0;
	int rc;

	assert_non_null(row);
	assert_int_equal(mmdb_ss_query(db, &q, flags, &c), NSR_OK);
	if (plan)
		*plan = mmdb_cursor_plan(c);
	for (;;) {
		rc = mmdb_ss_next(c, row);
		if (rc != 1)
			break;
		if (brute_filter && !brute(p, n, row))
			continue;
		assert_true(k < max);
		memset(&out[k], 0, sizeof(out[k]));
		out[k].ssid = row->ss.ssid;
		out[k].cloneid = row->clone.cloneid;
		snprintf(out[k].vol, sizeof(out[k].vol), "%s",
			 row->has_volume ? row->vol.name : "");
		k++;
	}
	assert_int_equal(rc, 0);
	mmdb_cursor_free(c);
	free(row);
	qsort(out, k, sizeof(*out), rid_cmp);
	return k;
}

/* same_rows - a query gives the same rows by index, by scan and brute. */
static void same_rows(struct mmdb *db, const struct mmdb_pred *p, size_t n,
		      enum mmdb_plan want)
{
	enum { MAX = NSS * 4 };
	struct rid *a = calloc(MAX, sizeof(*a)), *b = calloc(MAX, sizeof(*b));
	struct rid *c = calloc(MAX, sizeof(*c));
	enum mmdb_plan plan;
	size_t na, nb, nc;

	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	na = run_rows(db, p, n, 0, a, MAX, &plan, 0);
	nb = run_rows(db, p, n, MMDB_CUR_FORCE_SCAN, b, MAX, NULL, 0);
	nc = run_rows(db, p, n, MMDB_CUR_FORCE_SCAN, c, MAX, NULL, 1);
	assert_int_equal(plan, want);
	if (na != nc || nb != nc)
		fprintf(stderr, "plan %d: index %zu scan %zu brute %zu\n",
			(int)plan, na, nb, nc);
	assert_int_equal(na, nc);
	assert_int_equal(nb, nc);
	assert_memory_equal(a, c, na * sizeof(*a));
	assert_memory_equal(b, c, nb * sizeof(*b));
	free(a);
	free(b);
	free(c);
}

/* test_clone_set_remove - a clone instance's flags change; removing the
 * original keeps the other copy's fragments (renumbered), drops the
 * volume index entry of a volume no fragment is left on, and refuses the
 * last copy. */
static void test_clone_set_remove(void **state)
{
	struct mmdb_vfs *vfs = mmdb_vfs_mem_new(1);
	struct mmdb_opts o;
	struct mmdb *db;
	struct mmdb_volume va, vb, vc;
	struct mmdb_saveset s;
	struct mmdb_fragment f, fl[8];
	struct mmdb_clone cl, cls[4];
	uint32_t c1, c2, c3;
	size_t n;

	NSR_UNUSED(state);
	mmdb_opts_init(&o);
	o.vfs = vfs;
	assert_int_equal(mmdb_open("/m", &o, &db), NSR_OK);
	mkvol(&va, 10);
	mkvol(&vb, 11);
	mkvol(&vc, 12);
	assert_int_equal(mmdb_vol_put(db, NULL, &va), NSR_OK);
	assert_int_equal(mmdb_vol_put(db, NULL, &vb), NSR_OK);
	assert_int_equal(mmdb_vol_put(db, NULL, &vc), NSR_OK);
	mkss(&s, 1, 1, 1700000100);
	assert_int_equal(mmdb_ss_create(db, NULL, &s, 0, &c1), NSR_OK);
	memset(&f, 0, sizeof(f));
	f.ssid = s.ssid;
	f.cloneid = c1;
	memcpy(f.volid, va.volid, 16);
	f.size = 700;
	f.flags = MMDB_FRAG_COMPLETE;
	assert_int_equal(mmdb_frag_add(db, NULL, &f), NSR_OK);
	memset(&cl, 0, sizeof(cl));
	cl.ssid = s.ssid;
	cl.clone_time = 1700000900;
	cl.flags = MMDB_CLONE_INCOMPLETE;
	assert_int_equal(mmdb_clone_add(db, NULL, &cl, &c2), NSR_OK);
	cl.clone_time = 1700000950;
	assert_int_equal(mmdb_clone_add(db, NULL, &cl, &c3), NSR_OK);
	f.cloneid = c2;
	memcpy(f.volid, vb.volid, 16);
	assert_int_equal(mmdb_frag_add(db, NULL, &f), NSR_OK);
	f.cloneid = c3;
	memcpy(f.volid, vc.volid, 16);
	assert_int_equal(mmdb_frag_add(db, NULL, &f), NSR_OK);
	must_check(db);

	/* Flags: complete c2, abort c3; an unknown clone is NOTFOUND. */
	assert_int_equal(mmdb_clone_set(db, NULL, s.ssid, c2, 0,
					MMDB_CLONE_INCOMPLETE), NSR_OK);
	assert_int_equal(mmdb_clone_set(db, NULL, s.ssid, c3,
					MMDB_CLONE_ABORTED, 0), NSR_OK);
	assert_int_equal(mmdb_clone_set(db, NULL, s.ssid, 999, 1, 0),
			 NSR_ERR_NOTFOUND);
	assert_int_equal(mmdb_clone_list(db, s.ssid, cls, 4, &n), NSR_OK);
	assert_int_equal(n, 3);
	assert_int_equal(cls[1].flags, 0);
	assert_int_equal(cls[2].flags,
			 MMDB_CLONE_INCOMPLETE | MMDB_CLONE_ABORTED);

	/* Remove the original: the others keep their fragments. */
	assert_int_equal(mmdb_clone_remove(db, NULL, s.ssid, c1), NSR_OK);
	must_check(db);
	assert_int_equal(mmdb_frag_list(db, s.ssid, fl, 8, &n), NSR_OK);
	assert_int_equal(n, 2);
	assert_int_equal(fl[0].cloneid, c2);
	assert_memory_equal(fl[0].volid, vb.volid, 16);
	assert_int_equal(fl[1].cloneid, c3);
	assert_memory_equal(fl[1].volid, vc.volid, 16);
	assert_int_equal(mmdb_clone_remove(db, NULL, s.ssid, c1),
			 NSR_ERR_NOTFOUND);
	assert_int_equal(mmdb_clone_remove(db, NULL, s.ssid, c3), NSR_OK);
	assert_int_equal(mmdb_clone_remove(db, NULL, s.ssid, c2),
			 NSR_ERR_STATE);
	assert_int_equal(mmdb_clone_list(db, s.ssid, cls, 4, &n), NSR_OK);
	assert_int_equal(n, 1);
	assert_int_equal(cls[0].cloneid, c2);
	must_check(db);
	/* The volumes let go of it: deleting them leaves the copy on B. */
	assert_int_equal(mmdb_vol_delete(db, NULL, va.name), NSR_OK);
	assert_int_equal(mmdb_vol_delete(db, NULL, vc.name), NSR_OK);
	assert_int_equal(mmdb_frag_list(db, s.ssid, fl, 8, &n), NSR_OK);
	assert_int_equal(n, 1);
	must_check(db);
	mmdb_close(db);
	mmdb_vfs_mem_free(vfs);
}

/* test_restore - a save set stored under the ssid it already has (scanner
 * rebuilding a lost database): kept, found by its indexes, refused when
 * the ssid is taken, and never handed out again by mmdb_ss_create. */
static void test_restore(void **state)
{
	struct mmdb_vfs *vfs = mmdb_vfs_mem_new(1);
	struct mmdb_opts o;
	struct mmdb *db;
	struct mmdb_saveset s, got;
	struct mmdb_clone cls[2];
	size_t n;

	NSR_UNUSED(state);
	mmdb_opts_init(&o);
	o.vfs = vfs;
	assert_int_equal(mmdb_open("/m", &o, &db), NSR_OK);
	mkss(&s, 1, 1, 1700000300);
	s.ssid = 0;
	assert_int_equal(mmdb_ss_restore(db, NULL, &s, 0), NSR_ERR_INVAL);
	/* The allocator's next ssid (1) and a large one. */
	s.ssid = 1;
	assert_int_equal(mmdb_ss_restore(db, NULL, &s, 0), NSR_OK);
	mkss(&s, 1, 2, 1700000400);
	s.ssid = 4000000000u;
	assert_int_equal(mmdb_ss_restore(db, NULL, &s, 77), NSR_OK);
	assert_int_equal(mmdb_ss_get(db, 4000000000u, &got), NSR_OK);
	assert_string_equal(got.name, s.name);
	assert_true(got.savetime == 1700000400);
	assert_int_equal(mmdb_clone_list(db, 4000000000u, cls, 2, &n), NSR_OK);
	assert_int_equal(n, 1);
	assert_int_equal(cls[0].cloneid, 77);
	/* Taken: refused, nothing changed. */
	mkss(&s, 2, 3, 1700000500);
	s.ssid = 4000000000u;
	assert_int_equal(mmdb_ss_restore(db, NULL, &s, 0), NSR_ERR_EXISTS);
	assert_int_equal(mmdb_ss_get(db, 4000000000u, &got), NSR_OK);
	assert_true(got.savetime == 1700000400);
	/* A new save set does not get a restored ssid. */
	mkss(&s, 1, 4, 1700000600);
	assert_int_equal(mmdb_ss_create(db, NULL, &s, 0, NULL), NSR_OK);
	assert_true(s.ssid != 1 && s.ssid != 4000000000u);
	must_check(db);
	mmdb_close(db);
	mmdb_vfs_mem_free(vfs);
}

/* chain_order - rows of a MMDB_CUR_CHAINS cursor over q come a backup
 * chain at a time (no chain seen twice), in save time order within one,
 * a save set's rows together; the number of rows. */
static size_t chain_order(struct mmdb *db, const struct mmdb_query *q)
{
	char (*ended)[2][MMDB_SSNAME_MAX + 1] = calloc(NSS, sizeof(*ended));
	uint8_t *seen = calloc(NSS + 1, 1);
	struct mmdb_ss_row *row = malloc(sizeof(*row));
	struct mmdb_cursor *c;
	size_t nended = 0, rows = 0;
	uint32_t last = 0;
	int64_t t = 0;
	int rc;

	assert_non_null(ended);
	assert_non_null(seen);
	assert_non_null(row);
	assert_int_equal(mmdb_ss_query(db, q, MMDB_CUR_CHAINS, &c), NSR_OK);
	assert_int_equal(mmdb_cursor_plan(c), MMDB_PLAN_CLIENT);
	while ((rc = mmdb_ss_next(c, row)) == 1) {
		const struct mmdb_saveset *ss = &row->ss;

		rows++;
		if (ss->ssid == last)
			continue;
		assert_true(ss->ssid <= NSS);
		assert_false(seen[ss->ssid]);	/* its rows together */
		seen[ss->ssid] = 1;
		last = ss->ssid;
		if (nended && !strcmp(ended[nended - 1][0], ss->client) &&
		    !strcmp(ended[nended - 1][1], ss->name)) {
			assert_true(ss->savetime >= t);
			t = ss->savetime;
			continue;
		}
		for (size_t i = 0; i < nended; i++)
			assert_false(!strcmp(ended[i][0], ss->client) &&
				     !strcmp(ended[i][1], ss->name));
		assert_true(nended < NSS);
		snprintf(ended[nended][0], sizeof(ended[0][0]), "%s",
			 ss->client);
		snprintf(ended[nended++][1], sizeof(ended[0][1]), "%s",
			 ss->name);
		t = ss->savetime;
	}
	assert_int_equal(rc, 0);
	mmdb_cursor_free(c);
	free(row);
	free(seen);
	free(ended);
	return rows;
}

/* built - a database on vfs holding build()'s data set from seed. */
static struct mmdb *built(struct mmdb_vfs *vfs, uint64_t seed)
{
	struct mmdb_opts o;
	struct mmdb *db;

	rng_state = seed;
	mmdb_opts_init(&o);
	o.vfs = vfs;
	assert_int_equal(mmdb_open("/m", &o, &db), NSR_OK);
	build(db);
	return db;
}

/* same_chain_rows - a chain order cursor over p gives the rows a brute
 * force scan does, in chain order (chain_order). */
static void same_chain_rows(struct mmdb *db, struct mmdb_pred *p, size_t n)
{
	enum { MAX = NSS * 4 };
	struct rid *a = calloc(MAX, sizeof(*a)), *b = calloc(MAX, sizeof(*b));
	struct mmdb_query q = { p, n };
	size_t na, nb;

	assert_non_null(a);
	assert_non_null(b);
	na = run_rows(db, p, n, MMDB_CUR_CHAINS, a, MAX, NULL, 0);
	nb = run_rows(db, p, n, MMDB_CUR_FORCE_SCAN, b, MAX, NULL, 1);
	assert_true(nb > 0);
	assert_int_equal(na, nb);
	assert_memory_equal(a, b, na * sizeof(*a));
	assert_int_equal(chain_order(db, &q), na);
	free(a);
	free(b);
}

/* test_query_chains - chain order (nsrim's): the rows of a scan, with
 * and without predicates, grouped by chain in save time order. */
static void test_query_chains(void **state)
{
	struct mmdb_vfs *vfs = mmdb_vfs_mem_new(2);
	struct mmdb *db = built(vfs, 99);
	struct mmdb_pred p[2];

	NSR_UNUSED(state);
	same_chain_rows(db, NULL, 0);
	/* Predicates still apply; a volume or time one picks no index. */
	p[0] = (struct mmdb_pred){ MMDB_A_VOLUME, MMDB_OP_EQ, 0, "VOL003" };
	p[1] = (struct mmdb_pred){ MMDB_A_SAVETIME, MMDB_OP_GE, 1700040000,
				   NULL };
	same_chain_rows(db, p, 2);
	mmdb_close(db);
	mmdb_vfs_mem_free(vfs);
}

/* test_query_plans - every index against scan and brute force. */
static void test_query_plans(void **state)
{
	struct mmdb_vfs *vfs = mmdb_vfs_mem_new(2);
	struct mmdb *db = built(vfs, 1234);

	NSR_UNUSED(state);
	must_check(db);
	for (int round = 0; round < 25; round++) {
		char c1[64], c2[64], n1[32], v1[16], v2[16];
		int64_t t0 = 1700000000 + (int64_t)(rnd() % 100000);
		int64_t t1 = t0 + (int64_t)(rnd() % 30000);
		struct mmdb_pred p[4];

		snprintf(c1, sizeof(c1), "client%02u.example.com",
			 (unsigned)(rnd() % 13));
		snprintf(c2, sizeof(c2), "client%02u.example.com",
			 (unsigned)(rnd() % 13));
		snprintf(n1, sizeof(n1), "/data/fs%u", (unsigned)(rnd() % 5));
		snprintf(v1, sizeof(v1), "VOL%03u", (unsigned)(rnd() % 21));
		snprintf(v2, sizeof(v2), "VOL%03u", (unsigned)(rnd() % 21));

		/* ssid = a, ssid = b (OR) */
		p[0] = (struct mmdb_pred){ MMDB_A_SSID, MMDB_OP_EQ,
					   (int64_t)(rnd() % (NSS + 5)), NULL };
		p[1] = (struct mmdb_pred){ MMDB_A_SSID, MMDB_OP_EQ,
					   (int64_t)(rnd() % (NSS + 5)), NULL };
		same_rows(db, p, 2, MMDB_PLAN_SSID);
		/* client = a, client = b, name = n, savetime range */
		p[0] = (struct mmdb_pred){ MMDB_A_CLIENT, MMDB_OP_EQ, 0, c1 };
		p[1] = (struct mmdb_pred){ MMDB_A_CLIENT, MMDB_OP_EQ, 0, c2 };
		p[2] = (struct mmdb_pred){ MMDB_A_NAME, MMDB_OP_EQ, 0, n1 };
		p[3] = (struct mmdb_pred){ MMDB_A_SAVETIME, MMDB_OP_GE, t0,
					   NULL };
		same_rows(db, p, 4, MMDB_PLAN_CLIENT_NAME_TIME);
		same_rows(db, p, 3, MMDB_PLAN_CLIENT_NAME_TIME);
		/* client only, with a flag */
		p[1] = (struct mmdb_pred){ MMDB_A_INCOMPLETE,
					   round % 2 ? MMDB_OP_SET :
						       MMDB_OP_CLEAR, 0, NULL };
		same_rows(db, p, 2, MMDB_PLAN_CLIENT);
		/* savetime range */
		p[0] = (struct mmdb_pred){ MMDB_A_SAVETIME, MMDB_OP_GE, t0,
					   NULL };
		p[1] = (struct mmdb_pred){ MMDB_A_SAVETIME, MMDB_OP_LT, t1,
					   NULL };
		same_rows(db, p, 2, MMDB_PLAN_SAVETIME);
		/* volume = a, volume = b, and a pool (save set attribute) */
		p[0] = (struct mmdb_pred){ MMDB_A_VOLUME, MMDB_OP_EQ, 0, v1 };
		p[1] = (struct mmdb_pred){ MMDB_A_VOLUME, MMDB_OP_EQ, 0, v2 };
		p[2] = (struct mmdb_pred){ MMDB_A_POOL, MMDB_OP_EQ, 0,
					   "pool1" };
		same_rows(db, p, 2, MMDB_PLAN_VOLUME);
		same_rows(db, p, 3, MMDB_PLAN_VOLUME);
		/* no index usable: pool only */
		same_rows(db, p + 2, 1, MMDB_PLAN_SCAN);
		same_rows(db, NULL, 0, MMDB_PLAN_SCAN);
		/* change the data between rounds */
		if (round % 5 == 4) {
			struct mmdb_saveset s;
			uint32_t victim = 1 + (uint32_t)(rnd() % NSS);

			if (mmdb_ss_get(db, victim, &s) == NSR_OK)
				assert_int_equal(mmdb_ss_delete(db, NULL,
								victim),
						 NSR_OK);
			snprintf(v1, sizeof(v1), "VOL%03u",
				 (unsigned)(rnd() % NVOL));
			{
				int rc = mmdb_vol_delete(db, NULL, v1);

				/* it may be gone from an earlier round */
				assert_true(rc == NSR_OK ||
					    rc == NSR_ERR_NOTFOUND);
			}
			must_check(db);
		}
	}
	/* Malformed predicates are refused. */
	{
		struct mmdb_pred bad = { MMDB_A_CLIENT, MMDB_OP_SET, 0, NULL };
		struct mmdb_query q = { &bad, 1 };
		struct mmdb_cursor *c;

		assert_int_equal(mmdb_ss_query(db, &q, 0, &c), NSR_ERR_INVAL);
		bad = (struct mmdb_pred){ MMDB_A_CLIENT, MMDB_OP_EQ, 0, NULL };
		assert_int_equal(mmdb_ss_query(db, &q, 0, &c), NSR_ERR_INVAL);
		bad = (struct mmdb_pred){ MMDB_A_SSID, MMDB_OP_EQ, 1, NULL };
		assert_int_equal(mmdb_vol_query(db, &q, 0, &c), NSR_ERR_INVAL);
	}
	mmdb_close(db);
	mmdb_vfs_mem_free(vfs);
}

/* vol_names - names of a volume query, in cursor order. */
static size_t vol_names(struct mmdb *db, const struct mmdb_pred *p, size_t n,
			unsigned flags, char out[][MMDB_VOLNAME_MAX + 1],
			enum mmdb_plan *plan)
{
	struct mmdb_query q = { p, n };
	struct mmdb_cursor *c;
	struct mmdb_volume v;
	size_t k = 0;
	int rc;

	memset(out, 0, NVOL * sizeof(out[0]));
	assert_int_equal(mmdb_vol_query(db, &q, flags, &c), NSR_OK);
	*plan = mmdb_cursor_plan(c);
	for (;;) {
		rc = mmdb_vol_next(c, &v);
		if (rc != 1)
			break;
		snprintf(out[k++], MMDB_VOLNAME_MAX + 1, "%s", v.name);
	}
	assert_int_equal(rc, 0);
	mmdb_cursor_free(c);
	qsort(out, k, MMDB_VOLNAME_MAX + 1,
	      (int (*)(const void *, const void *))strcmp);
	return k;
}

/* test_vol_query - pool and name indexes against a scan. */
static void test_vol_query(void **state)
{
	struct mmdb_vfs *vfs = mmdb_vfs_mem_new(3);
	struct mmdb_opts o;
	struct mmdb *db;
	char a[NVOL][MMDB_VOLNAME_MAX + 1], b[NVOL][MMDB_VOLNAME_MAX + 1];
	enum mmdb_plan pa, pb;
	struct mmdb_pred p[3];
	size_t na, nb, want = 0;

	NSR_UNUSED(state);
	rng_state = 5;
	mmdb_opts_init(&o);
	o.vfs = vfs;
	assert_int_equal(mmdb_open("/m", &o, &db), NSR_OK);
	build(db);
	p[0] = (struct mmdb_pred){ MMDB_A_POOL, MMDB_OP_EQ, 0, "pool1" };
	p[1] = (struct mmdb_pred){ MMDB_A_FULL, MMDB_OP_CLEAR, 0, NULL };
	na = vol_names(db, p, 2, 0, a, &pa);
	nb = vol_names(db, p, 2, MMDB_CUR_FORCE_SCAN, b, &pb);
	assert_int_equal(pa, MMDB_PLAN_POOL);
	assert_int_equal(pb, MMDB_PLAN_VOLSCAN);
	for (unsigned i = 0; i < NVOL; i++)
		want += i % 3 == 1 && i % 5 != 0;
	assert_int_equal(na, want);
	assert_int_equal(nb, want);
	assert_memory_equal(a, b, na * sizeof(a[0]));
	p[0] = (struct mmdb_pred){ MMDB_A_VOLUME, MMDB_OP_EQ, 0, "VOL004" };
	p[1] = (struct mmdb_pred){ MMDB_A_VOLUME, MMDB_OP_EQ, 0, "VOL007" };
	p[2] = (struct mmdb_pred){ MMDB_A_VOLID, MMDB_OP_EQ, 0,
		"a000000000000000000000000000000b" };
	na = vol_names(db, p, 2, 0, a, &pa);
	assert_int_equal(pa, MMDB_PLAN_VOLNAME);
	assert_int_equal(na, 2);
	assert_string_equal(a[0], "VOL004");
	na = vol_names(db, p + 2, 1, 0, a, &pa);
	assert_int_equal(na, 1);
	assert_string_equal(a[0], "VOL011");
	mmdb_close(db);
	mmdb_vfs_mem_free(vfs);
}

/* ---- snapshot while writing ------------------------------------------ */

struct writer {
	struct mmdb *db;
	int n;
	int rc;
};

/* writer_main - autocommit save set creations. */
static void *writer_main(void *arg)
{
	struct writer *w = arg;

	for (int i = 0; i < w->n && w->rc == NSR_OK; i++) {
		struct mmdb_saveset s;

		mkss(&s, (unsigned)i % 7, 1, 1700000000 + i);
		w->rc = mmdb_ss_create(w->db, NULL, &s, 0, NULL);
	}
	return NULL;
}

/* buf_sink - mmdb_snapshot sink into an nsr_buf. */
static int buf_sink(void *arg, const void *p, size_t n)
{
	return nsr_buf_add(arg, p, n);
}

/* test_snapshot - a snapshot taken during commits is one commit's state. */
static void test_snapshot(void **state)
{
	struct mmdb_vfs *vfs = mmdb_vfs_mem_new(4);
	struct mmdb_opts o;
	struct mmdb *db, *copy;
	struct mmdb_stats st0, st;
	struct writer w;
	pthread_t th;
	struct nsr_buf img;
	uint64_t seq;

	NSR_UNUSED(state);
	rng_state = 9;
	mmdb_opts_init(&o);
	o.vfs = vfs;
	o.wal_max_bytes = 1u << 20;	/* checkpoints during the run */
	assert_int_equal(mmdb_open("/m", &o, &db), NSR_OK);
	build(db);
	assert_int_equal(mmdb_stats(db, &st0), NSR_OK);
	w.db = db;
	w.n = 300;
	w.rc = NSR_OK;
	nsr_buf_init(&img, 0);
	assert_int_equal(pthread_create(&th, NULL, writer_main, &w), 0);
	for (int i = 0; i < 20000; i++) {
		assert_int_equal(mmdb_stats(db, &st), NSR_OK);
		if (st.commit_seq >= st0.commit_seq + 100)
			break;
	}
	assert_int_equal(mmdb_snapshot(db, buf_sink, &img, &seq), NSR_OK);
	pthread_join(th, NULL);
	assert_int_equal(w.rc, NSR_OK);
	assert_int_equal(img.len % MMDB_PAGE_SIZE, 0);
	/* Open the image as a database of its own. */
	assert_int_equal(mmdb_vfs_mem_put(vfs, "/copy/mmdb", img.data,
					  img.len), NSR_OK);
	assert_int_equal(mmdb_open("/copy", &o, &copy), NSR_OK);
	must_check(copy);
	assert_int_equal(mmdb_stats(copy, &st), NSR_OK);
	/* one save set per commit after st0 */
	assert_int_equal(st.savesets, st0.savesets + (seq - st0.commit_seq));
	mmdb_close(copy);
	assert_int_equal(mmdb_stats(db, &st), NSR_OK);
	assert_int_equal(st.savesets, st0.savesets + 300);
	must_check(db);
	mmdb_close(db);
	nsr_buf_release(&img);
	mmdb_vfs_mem_free(vfs);
}

/* ---- readers alongside the writer ------------------------------------ */

struct reader {
	struct mmdb *db;
	volatile int *stop;
	int checks;
	int rc;
};

/* reader_main - integrity checks and scans while the writer commits: each
 * must see one consistent commit (index counts equal record counts), and
 * the number of rows never goes backwards. */
static void *reader_main(void *arg)
{
	struct reader *r = arg;
	struct mmdb_ss_row *row = malloc(sizeof(*row));
	uint64_t last = 0;

	while (!*r->stop && r->rc == NSR_OK && row) {
		struct mmdb_cursor *c;
		uint64_t n = 0;
		int rc;

		r->rc = mmdb_check(r->db, NULL);
		__atomic_add_fetch(&r->checks, 1, __ATOMIC_RELAXED);
		if (r->rc != NSR_OK)
			break;
		r->rc = mmdb_ss_query(r->db, NULL, 0, &c);
		if (r->rc != NSR_OK)
			break;
		for (;;) {
			rc = mmdb_ss_next(c, row);
			if (rc != 1)
				break;
			n++;
		}
		mmdb_cursor_free(c);
		if (rc < 0 || n < last)
			r->rc = rc < 0 ? rc : NSR_ERR_CORRUPT;
		last = n;
	}
	free(row);
	return NULL;
}

/* test_concurrent_readers - two readers check and scan during commits. */
static void test_concurrent_readers(void **state)
{
	struct mmdb_vfs *vfs = mmdb_vfs_mem_new(8);
	struct mmdb_opts o;
	struct mmdb *db;
	struct reader rd[2];
	pthread_t th[2];
	volatile int stop = 0;
	struct writer w;

	NSR_UNUSED(state);
	rng_state = 10;
	mmdb_opts_init(&o);
	o.vfs = vfs;
	o.wal_max_bytes = 1u << 20;
	o.cache_pages = 12;	/* evict and reload under the readers */
	assert_int_equal(mmdb_open("/m", &o, &db), NSR_OK);
	build(db);
	for (int i = 0; i < 2; i++) {
		rd[i] = (struct reader){ db, &stop, 0, NSR_OK };
		assert_int_equal(pthread_create(&th[i], NULL, reader_main,
						&rd[i]), 0);
	}
	w.db = db;
	w.n = 200;
	w.rc = NSR_OK;
	writer_main(&w);
	/* On a loaded machine a reader may not have run yet: give each one
	 * check (10 s at most) before stopping them. */
	for (int t = 0; t < 1000; t++) {
		if (__atomic_load_n(&rd[0].checks, __ATOMIC_RELAXED) > 0 &&
		    __atomic_load_n(&rd[1].checks, __ATOMIC_RELAXED) > 0)
			break;
		usleep(10000);
	}
	stop = 1;
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(rd[i].rc, NSR_OK);
		assert_true(rd[i].checks > 0);
	}
	assert_int_equal(w.rc, NSR_OK);
	must_check(db);
	mmdb_close(db);
	mmdb_vfs_mem_free(vfs);
}

/* ---- crash loop and faults ------------------------------------------- */

/* crash_run - workload with power lost at sync n; 1 if it fired. */
static int crash_run(uint64_t n)
{
	struct mmdb_vfs *vfs = mmdb_vfs_mem_new(n);
	struct mmdb_opts o;
	struct mmdb *db = NULL;
	uint32_t acked[64];
	size_t nacked = 0;
	int rc, fired;

	mmdb_opts_init(&o);
	o.vfs = vfs;
	o.wal_max_bytes = 300000;
	mmdb_vfs_mem_fail_at(vfs, MMDB_FAULT_POWER, n, 0);
	rc = mmdb_open("/m", &o, &db);
	for (int i = 0; i < 24 && rc == NSR_OK; i++) {
		struct mmdb_txn *t;
		struct mmdb_saveset s;
		struct mmdb_volume v;
		struct mmdb_fragment f;
		uint32_t cid = 0;

		rc = mmdb_txn_begin(db, &t);
		if (rc != NSR_OK)
			break;
		mkvol(&v, (unsigned)i % 5);
		mkss(&s, (unsigned)i % 3, (unsigned)i % 2, 1700000000 + i);
		rc = mmdb_vol_put(db, t, &v);
		if (rc == NSR_OK)
			rc = mmdb_ss_create(db, t, &s, 0, &cid);
		memset(&f, 0, sizeof(f));
		f.ssid = s.ssid;
		f.cloneid = cid;
		memcpy(f.volid, v.volid, 16);
		f.flags = MMDB_FRAG_COMPLETE;
		if (rc == NSR_OK)
			rc = mmdb_frag_add(db, t, &f);
		if (rc != NSR_OK) {
			mmdb_txn_abort(t);
			break;
		}
		rc = mmdb_txn_commit(t);
		if (rc == NSR_OK)
			acked[nacked++] = s.ssid;
	}
	mmdb_close(db);
	fired = mmdb_vfs_mem_fired(vfs);
	mmdb_vfs_mem_crash(vfs, (int)(n & 1));
	assert_int_equal(mmdb_open("/m", &o, &db), NSR_OK);
	must_check(db);
	for (size_t i = 0; i < nacked; i++) {
		struct mmdb_saveset s;
		struct mmdb_fragment f[4];
		size_t nf;

		assert_int_equal(mmdb_ss_get(db, acked[i], &s), NSR_OK);
		assert_int_equal(s.savetime, 1700000000 + (int64_t)i);
		assert_int_equal(mmdb_frag_list(db, acked[i], f, 4, &nf),
				 NSR_OK);
		assert_int_equal(nf, 1);
	}
	mmdb_close(db);
	mmdb_vfs_mem_free(vfs);
	return fired;
}

/* test_crash_loop - power loss at sync 1, 2, 3, ... */
static void test_crash_loop(void **state)
{
	uint64_t n;

	NSR_UNUSED(state);
	for (n = 1; n < 10000; n++)
		if (!crash_run(n))
			break;
	assert_true(n > 20);
}

/* test_sticky - after a failed commit every call fails until reopen. */
static void test_sticky(void **state)
{
	struct mmdb_vfs *vfs = mmdb_vfs_mem_new(6);
	struct mmdb_opts o;
	struct mmdb *db;
	struct mmdb_saveset s;

	NSR_UNUSED(state);
	mmdb_opts_init(&o);
	o.vfs = vfs;
	assert_int_equal(mmdb_open("/m", &o, &db), NSR_OK);
	mkss(&s, 1, 1, 1700000000);
	assert_int_equal(mmdb_ss_create(db, NULL, &s, 0, NULL), NSR_OK);
	mmdb_vfs_mem_fail_at(vfs, MMDB_FAULT_SYNC, 1, 0);
	mkss(&s, 1, 1, 1700000001);
	assert_int_equal(mmdb_ss_create(db, NULL, &s, 0, NULL), NSR_ERR_IO);
	/* the fault is gone, but the handle stays in the error state */
	assert_int_equal(mmdb_ss_create(db, NULL, &s, 0, NULL),
			 NSR_ERR_STATE);
	assert_int_equal(mmdb_ss_get(db, 1, &s), NSR_ERR_STATE);
	mmdb_close(db);
	assert_int_equal(mmdb_open("/m", &o, &db), NSR_OK);
	assert_int_equal(mmdb_ss_get(db, 1, &s), NSR_OK);
	must_check(db);
	mmdb_close(db);
	mmdb_vfs_mem_free(vfs);
}

/* test_decoders - damaged records give errors, never crashes. */
static void test_decoders(void **state)
{
	struct mmdb_volume v, out;
	struct ssrec *r = calloc(1, sizeof(*r)), *r2 = calloc(1, sizeof(*r2));
	uint8_t enc[SSREC_MAX], tmp[SSREC_MAX];
	struct nsr_buf b;
	size_t len;

	NSR_UNUSED(state);
	assert_non_null(r);
	assert_non_null(r2);
	mkvol(&v, 3);
	nsr_buf_init(&b, 0);
	assert_int_equal(mmdb_vol_encode(&v, &b), NSR_OK);
	assert_int_equal(mmdb_vol_decode(b.data, b.len, &out), NSR_OK);
	assert_memory_equal(&v, &out, sizeof(v));
	for (size_t cut = 0; cut < b.len; cut++)
		assert_int_not_equal(mmdb_vol_decode(b.data, cut, &out),
				     NSR_OK);
	r->ssid = 77;
	r->client = 3;
	r->name = 4;
	r->savetime = 1700000000;
	r->sscomp = 1700000100;
	r->nclones = 2;
	r->clones[0].cloneid = 1700000000;
	r->clones[1].cloneid = 42;
	r->clones[1].clone_time = -5;
	r->nfrags = 3;
	for (int i = 0; i < 3; i++) {
		r->frags[i].clone = (uint8_t)(i % 2);
		r->frags[i].volno = 9 + (uint32_t)i;
		r->frags[i].size = UINT64_MAX - (uint64_t)i;
	}
	assert_int_equal(mmdb_ssrec_encode(r, enc, sizeof(enc), &len), NSR_OK);
	assert_int_equal(mmdb_ssrec_decode(enc, len, 77, r2), NSR_OK);
	assert_memory_equal(r, r2, sizeof(*r));
	rng_state = 77;
	for (int i = 0; i < 20000; i++) {
		memcpy(tmp, enc, len);
		tmp[rnd() % len] ^= (uint8_t)(1u << (rnd() % 8));
		(void)mmdb_ssrec_decode(tmp, (size_t)(rnd() % (len + 1)), 1,
					r2);
		(void)mmdb_vol_decode(b.data, (size_t)(rnd() % (b.len + 1)),
				      &out);
	}
	for (size_t cut = 0; cut < len; cut++)
		assert_int_not_equal(mmdb_ssrec_decode(enc, cut, 77, r2),
				     NSR_OK);
	nsr_buf_release(&b);
	free(r);
	free(r2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_txn_end),
		cmocka_unit_test(test_clone_set_remove),
		cmocka_unit_test(test_restore),
		cmocka_unit_test(test_query_plans),
		cmocka_unit_test(test_query_chains),
		cmocka_unit_test(test_vol_query),
		cmocka_unit_test(test_snapshot),
		cmocka_unit_test(test_concurrent_readers),
		cmocka_unit_test(test_crash_loop),
		cmocka_unit_test(test_sticky),
		cmocka_unit_test(test_decoders),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
