/*
 * test_mmdb_wire.c - the record <-> wire conversions of the nsrmmdbd client
 * library: every field survives a round trip through real XDR encoding,
 * and decoded hostile input that does not fit a record is refused.
 */
#include "nsr/compat.h"

#include <string.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/mmdb.h"
#include "nsr/mmdb_clnt.h"
#include "nsr/rpc.h"
#include "nsr_test.h"

/* fill_vol - a volume with every field set to a distinct value. */
static void fill_vol(struct mmdb_volume *v)
{
	memset(v, 0, sizeof(*v));
	snprintf(v->name, sizeof(v->name), "DD01.001");
	for (int i = 0; i < 16; i++)
		v->volid[i] = (uint8_t)(0xa0 + i);
	snprintf(v->pool, sizeof(v->pool), "Default");
	snprintf(v->type, sizeof(v->type), "adv_file");
	snprintf(v->location, sizeof(v->location), "rack 7");
	snprintf(v->device, sizeof(v->device), "/aftd1");
	v->block_size = 262144;
	v->flags = MMDB_VOL_FULL | MMDB_VOL_MANUAL;
	v->written = 1ULL << 40;
	v->read = 12345;
	v->capacity = 3ULL << 40;
	v->olabel = 1700000000;
	v->labeled = 1700000100;
	v->volretent = -5;
	v->recycled = 3;
	v->mounts = 18;
	v->next_file = 77;
	v->next_record = (1ULL << 33) + 1;
}

/* fill_ss - a save set with every field set, two PSS dependents. */
static void fill_ss(struct mmdb_saveset *ss)
{
	memset(ss, 0, sizeof(*ss));
	ss->ssid = 4129018274u;
	for (int i = 0; i < 16; i++)
		ss->longid[i] = (uint8_t)i;
	snprintf(ss->client, sizeof(ss->client), "web01.example.com");
	snprintf(ss->name, sizeof(ss->name), "/var");
	snprintf(ss->pool, sizeof(ss->pool), "Default");
	snprintf(ss->group, sizeof(ss->group), "nightly");
	ss->level = NSR_LEVEL_INCR;
	ss->flags = MMDB_SS_VALID | MMDB_SS_FINISHED | MMDB_SS_BROWSABLE;
	ss->savetime = 1717398001;
	ss->sscreate = 1717398002;
	ss->sscomp = 1717398100;
	ss->ssbrowse = 1720000000;
	ss->ssretent = 1730000000;
	ss->totalsize = 12ULL << 30;
	ss->nfiles = 4242;
	ss->pssid = 17;
	ss->anchor_time = 1717398000;
	ss->ndependents = 2;
	ss->dependents[0] = 100;
	ss->dependents[1] = 200;
}

/* xdr_roundtrip - encode src with x, decode into dst (zeroed first). */
static void xdr_roundtrip(xdrproc_t x, void *src, void *dst, size_t size)
{
	static char buf[65536];
	XDR enc, dec;

	xdrmem_create(&enc, buf, sizeof(buf), XDR_ENCODE);
	assert_true(x(&enc, src));
	memset(dst, 0, size);
	xdrmem_create(&dec, buf, xdr_getpos(&enc), XDR_DECODE);
	assert_true(x(&dec, dst));
	xdr_destroy(&enc);
	xdr_destroy(&dec);
}

static void test_vol_roundtrip(void **state)
{
	struct mmdb_volume v, back;
	mm_volume w, w2;

	NSR_UNUSED(state);
	fill_vol(&v);
	memset(&w, 0, sizeof(w));
	assert_int_equal(mmdb_clnt_vol_to_wire(&v, &w), NSR_OK);
	xdr_roundtrip(NSR_XDR(xdr_mm_volume), &w, &w2, sizeof(w2));
	assert_int_equal(mmdb_clnt_vol_from_wire(&w2, &back), NSR_OK);
	assert_memory_equal(&v, &back, sizeof(v));
	xdr_free(NSR_XDR(xdr_mm_volume), (char *)&w);
	xdr_free(NSR_XDR(xdr_mm_volume), (char *)&w2);
}

static void test_ss_roundtrip(void **state)
{
	struct mmdb_saveset ss, back;
	mm_saveset w, w2;

	NSR_UNUSED(state);
	fill_ss(&ss);
	memset(&w, 0, sizeof(w));
	assert_int_equal(mmdb_clnt_ss_to_wire(&ss, &w), NSR_OK);
	assert_int_equal(w.dependents.dependents_len, 2);
	xdr_roundtrip(NSR_XDR(xdr_mm_saveset), &w, &w2, sizeof(w2));
	assert_int_equal(mmdb_clnt_ss_from_wire(&w2, &back), NSR_OK);
	assert_memory_equal(&ss, &back, sizeof(ss));
	xdr_free(NSR_XDR(xdr_mm_saveset), (char *)&w);
	xdr_free(NSR_XDR(xdr_mm_saveset), (char *)&w2);
}

static void test_row_roundtrip(void **state)
{
	struct mmdb_ss_row r, back;
	mm_row w, w2;

	NSR_UNUSED(state);
	memset(&r, 0, sizeof(r));
	fill_ss(&r.ss);
	fill_vol(&r.vol);
	r.has_volume = 1;
	r.clone.ssid = r.ss.ssid;
	r.clone.cloneid = 1717398001;
	r.clone.clone_time = 1717398001;
	r.clone.clretent = 1730000000;
	r.clone.flags = MMDB_CLONE_SUSPECT;
	r.copies = 2;
	r.frag_flags = MMDB_FRAG_HEAD;
	r.sumsize = 999;
	r.first_file = 4;
	r.first_record = 5;
	memset(&w, 0, sizeof(w));
	assert_int_equal(mmdb_clnt_row_to_wire(&r, &w), NSR_OK);
	xdr_roundtrip(NSR_XDR(xdr_mm_row), &w, &w2, sizeof(w2));
	assert_int_equal(mmdb_clnt_row_from_wire(&w2, &back), NSR_OK);
	assert_memory_equal(&r, &back, sizeof(r));
	xdr_free(NSR_XDR(xdr_mm_row), (char *)&w);
	xdr_free(NSR_XDR(xdr_mm_row), (char *)&w2);

	/* A row without a volume still encodes (XDR needs its strings) and
	 * comes back without one. */
	r.has_volume = 0;
	memset(&r.vol, 0, sizeof(r.vol));
	memset(&w, 0, sizeof(w));
	assert_int_equal(mmdb_clnt_row_to_wire(&r, &w), NSR_OK);
	assert_non_null(w.vol.name);
	xdr_roundtrip(NSR_XDR(xdr_mm_row), &w, &w2, sizeof(w2));
	assert_int_equal(mmdb_clnt_row_from_wire(&w2, &back), NSR_OK);
	assert_int_equal(back.has_volume, 0);
	assert_memory_equal(&r, &back, sizeof(r));
	xdr_free(NSR_XDR(xdr_mm_row), (char *)&w);
	xdr_free(NSR_XDR(xdr_mm_row), (char *)&w2);
}

static void test_frag_clone_roundtrip(void **state)
{
	struct mmdb_fragment f, fb;
	struct mmdb_clone c, cb;
	mm_fragment wf;
	mm_clone wc;

	NSR_UNUSED(state);
	memset(&f, 0, sizeof(f));
	f.ssid = 1;
	f.cloneid = 2;
	memset(f.volid, 0x5a, sizeof(f.volid));
	f.seq = 3;
	f.ss_offset = 1ULL << 35;
	f.size = 5;
	f.file = 6;
	f.record = 7;
	f.offset = 8;
	f.flags = MMDB_FRAG_TAIL;
	mmdb_clnt_frag_to_wire(&f, &wf);
	mmdb_clnt_frag_from_wire(&wf, &fb);
	assert_memory_equal(&f, &fb, sizeof(f));

	memset(&c, 0, sizeof(c));
	c.ssid = 9;
	c.cloneid = 10;
	c.clone_time = -1;
	c.clretent = 11;
	c.flags = MMDB_CLONE_ABORTED;
	mmdb_clnt_clone_to_wire(&c, &wc);
	mmdb_clnt_clone_from_wire(&wc, &cb);
	assert_memory_equal(&c, &cb, sizeof(c));
}

/* Hostile wire structs: strings or counts that do not fit are refused. */
static void test_hostile(void **state)
{
	char longname[MMDB_SSNAME_MAX + 2];
	u_int deps[MMDB_PSS_MAX + 1] = {0};
	struct mmdb_saveset ss;
	struct mmdb_volume v;
	mm_saveset ws;
	mm_volume wv;

	NSR_UNUSED(state);
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';

	memset(&wv, 0, sizeof(wv));
	wv.name = longname;
	assert_int_equal(mmdb_clnt_vol_from_wire(&wv, &v), NSR_ERR_INVAL);
	longname[MMDB_VOLNAME_MAX] = '\0';	/* exactly the maximum */
	assert_int_equal(mmdb_clnt_vol_from_wire(&wv, &v), NSR_OK);
	assert_int_equal(strlen(v.name), MMDB_VOLNAME_MAX);
	assert_string_equal(v.pool, "");	/* NULL reads as "" */

	memset(longname, 'x', sizeof(longname) - 1);
	memset(&ws, 0, sizeof(ws));
	ws.name = longname;
	assert_int_equal(mmdb_clnt_ss_from_wire(&ws, &ss), NSR_ERR_INVAL);
	ws.name = (char *)"/ok";
	ws.level = NSR_LEVEL_MAX + 1;
	assert_int_equal(mmdb_clnt_ss_from_wire(&ws, &ss), NSR_ERR_INVAL);
	ws.level = NSR_LEVEL_FULL;
	ws.dependents.dependents_len = MMDB_PSS_MAX + 1;
	ws.dependents.dependents_val = deps;
	assert_int_equal(mmdb_clnt_ss_from_wire(&ws, &ss), NSR_ERR_INVAL);
	ws.dependents.dependents_len = MMDB_PSS_MAX;
	assert_int_equal(mmdb_clnt_ss_from_wire(&ws, &ss), NSR_OK);
	assert_int_equal(ss.ndependents, MMDB_PSS_MAX);
}

/*
 * Hostile bytes: every truncation and many bit flips of an encoded query
 * batch either fail to decode or decode into something from_wire checks;
 * nothing crashes or leaks (ASan).
 */
static void test_mutations(void **state)
{
	static char buf[16384], mut[16384];
	struct mmdb_ss_row r, back;
	mm_next_res res, dec;
	mm_row w[2];
	uint32_t seed = 12345;
	u_int len;
	XDR x;

	NSR_UNUSED(state);
	memset(&r, 0, sizeof(r));
	fill_ss(&r.ss);
	fill_vol(&r.vol);
	r.has_volume = 1;
	memset(w, 0, sizeof(w));
	assert_int_equal(mmdb_clnt_row_to_wire(&r, &w[0]), NSR_OK);
	assert_int_equal(mmdb_clnt_row_to_wire(&r, &w[1]), NSR_OK);
	memset(&res, 0, sizeof(res));
	res.st.msg = (char *)"";
	res.rows.rows_len = 2;
	res.rows.rows_val = w;
	xdrmem_create(&x, buf, sizeof(buf), XDR_ENCODE);
	assert_true(xdr_mm_next_res(&x, &res));
	len = xdr_getpos(&x);
	xdr_destroy(&x);

	for (u_int i = 0; i < len + 600; i++) {
		u_int cut = i < len ? i : len;

		memcpy(mut, buf, len);
		if (i >= len) {	/* flip a few bits somewhere */
			for (int k = 0; k < 3; k++) {
				seed = seed * 1103515245u + 12345u;
				mut[(seed >> 8) % len] ^=
					(char)(1u << ((seed >> 4) % 8));
			}
		}
		memset(&dec, 0, sizeof(dec));
		xdrmem_create(&x, mut, cut, XDR_DECODE);
		if (xdr_mm_next_res(&x, &dec)) {
			assert_true(i >= len);	/* no truncation decodes */
			for (u_int j = 0; j < dec.rows.rows_len; j++)
				(void)mmdb_clnt_row_from_wire(
					&dec.rows.rows_val[j], &back);
		}
		xdr_destroy(&x);
		xdr_free(NSR_XDR(xdr_mm_next_res), (char *)&dec);
	}
	xdr_free(NSR_XDR(xdr_mm_row), (char *)&w[0]);
	xdr_free(NSR_XDR(xdr_mm_row), (char *)&w[1]);
}

/* Opening with nothing listening fails with a message naming the host. */
static void test_open_unreachable(void **state)
{
	struct mmdb_clnt *c = (struct mmdb_clnt *)1;
	struct nsr_buf err;
	int rc;

	NSR_UNUSED(state);
	/* A locator port nobody listens on (port 1 needs root to bind). */
	setenv("NSR_PORTMAP_PORT", "1", 1);
	setenv("NSR_CONNECT_TIMEOUT_MS", "2000", 1);
	nsr_buf_init(&err, 0);
	rc = mmdb_clnt_open("127.0.0.1", &c, &err);
	assert_true(rc < 0);
	assert_null(c);
	assert_non_null(strstr(err.data, "127.0.0.1"));
	nsr_buf_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vol_roundtrip),
		cmocka_unit_test(test_ss_roundtrip),
		cmocka_unit_test(test_row_roundtrip),
		cmocka_unit_test(test_frag_clone_roundtrip),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_mutations),
		cmocka_unit_test(test_open_unreachable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
