/*
 * test_mmreport.c - mminfo report layouts printed from fixed records in
 * UTC and compared with the exact text an administrator should see.
 */
#include "nsr/compat.h"

#include <time.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/mmdb.h"
#include "nsr/mmreport.h"
#include "nsr_test.h"

#define GB (1ULL << 30)
#define MB (1ULL << 20)

/* make_rows - two save sets on one Data Domain volume, the second one
 * incremental. */
static void make_rows(struct mmdb_ss_row rows[2])
{
	memset(rows, 0, 2 * sizeof(rows[0]));
	for (int i = 0; i < 2; i++) {
		struct mmdb_ss_row *r = &rows[i];

		snprintf(r->ss.client, sizeof(r->ss.client),
			 "web01.example.com");
		snprintf(r->ss.pool, sizeof(r->ss.pool), "Default");
		snprintf(r->ss.group, sizeof(r->ss.group), "Daily");
		r->ss.flags = MMDB_SS_VALID | MMDB_SS_FINISHED |
			      MMDB_SS_BROWSABLE;
		r->ss.savetime = 1717452003 + i * 60; /* 06/03/24 22:00:03 */
		r->ss.sscreate = r->ss.savetime;
		r->ss.sscomp = r->ss.savetime + 600;
		r->ss.ssbrowse = 1720044003;
		r->ss.ssretent = 1748988003;
		r->clone.ssid = r->ss.ssid;
		r->clone.cloneid = 1717452003 + (uint32_t)i;
		r->clone.clone_time = r->ss.savetime;
		r->clone.clretent = r->ss.ssretent;
		r->copies = 1;
		r->has_volume = 1;
		snprintf(r->vol.name, sizeof(r->vol.name), "DD01.001");
		snprintf(r->vol.type, sizeof(r->vol.type), "Data Domain");
		snprintf(r->vol.pool, sizeof(r->vol.pool), "Default");
		for (int k = 0; k < 16; k++) {
			r->vol.volid[k] = (uint8_t)(0xa0 + k);
			r->ss.longid[k] = (uint8_t)k;
		}
		r->frag_flags = MMDB_FRAG_COMPLETE;
		r->first_file = 3 + (uint32_t)i;
		r->first_record = 0;
	}
	rows[0].ss.ssid = 4129018274u;
	snprintf(rows[0].ss.name, sizeof(rows[0].ss.name), "/var");
	rows[0].ss.level = NSR_LEVEL_FULL;
	rows[0].ss.totalsize = 12 * GB;
	rows[0].sumsize = 12 * GB;
	rows[0].ss.nfiles = 5120;
	rows[1].ss.ssid = 4112241059u;
	snprintf(rows[1].ss.name, sizeof(rows[1].ss.name), "/etc");
	rows[1].ss.level = NSR_LEVEL_INCR;
	rows[1].ss.totalsize = 104 * MB;
	rows[1].sumsize = 104 * MB;
	rows[1].ss.nfiles = 77;
}

/* render - header plus both rows in a layout (spec for CUSTOM). */
static char *render(enum nsr_mmreport_layout l, const char *spec,
		    const char *x)
{
	struct nsr_mmquery_error err;
	struct mmdb_ss_row rows[2];
	struct nsr_mmreport *r = NULL;
	struct nsr_buf out;

	setenv("TZ", "UTC", 1);
	tzset();
	make_rows(rows);
	if (nsr_mmreport_new(l, spec, &r, &err) != NSR_OK)
		fail_msg("report '%s': %zu %s", spec ? spec : "", err.offset,
			 err.msg);
	if (x)
		assert_int_equal(nsr_mmreport_set_export(r, x, &err), NSR_OK);
	nsr_buf_init(&out, 0);
	assert_int_equal(nsr_mmreport_header(r, &out), NSR_OK);
	for (int i = 0; i < 2; i++)
		assert_int_equal(nsr_mmreport_row(r, &rows[i], &out), NSR_OK);
	nsr_mmreport_free(r);
	return nsr_buf_detach(&out, NULL);
}

/* expect - render and compare. */
static void expect(enum nsr_mmreport_layout l, const char *spec,
		   const char *x, const char *want)
{
	char *got = render(l, spec, x);

	if (strcmp(got, want) != 0)
		fail_msg("layout %d '%s':\n--- got\n%s--- want\n%s", (int)l,
			 spec ? spec : "", got, want);
	free(got);
}

static void test_default_and_verbose(void **state)
{
	NSR_UNUSED(state);
	expect(NSR_MMREPORT_DEFAULT, NULL, NULL,
	       "volume         client            date         size level  "
	       "name\n"
	       "DD01.001       web01.example.com 06/03/24    12 GB full   "
	       "/var\n"
	       "DD01.001       web01.example.com 06/03/24   104 MB incr   "
	       "/etc\n");
	expect(NSR_MMREPORT_VERBOSE, NULL, NULL,
	       "volume         type        client            date     time"
	       "         size       ssid fl  lvl    name\n"
	       "DD01.001       Data Domain web01.example.com 06/03/24 22:00:03"
	       "    12 GB 4129018274 cb  full   /var\n"
	       "DD01.001       Data Domain web01.example.com 06/03/24 22:01:03"
	       "   104 MB 4112241059 cb  incr   /etc\n");
}

static void test_boot_and_frags(void **state)
{
	char *got;

	NSR_UNUSED(state);
	expect(NSR_MMREPORT_BOOT, NULL, NULL,
	       "date     time     level        ssid   file   record volume\n"
	       "06/03/24 22:00:03 full   4129018274      3        0 DD01.001\n"
	       "06/03/24 22:01:03 incr   4112241059      4        0 "
	       "DD01.001\n");
	got = render(NSR_MMREPORT_FRAGS, NULL, NULL);
	assert_non_null(strstr(got, "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf /var\n"));
	assert_non_null(strstr(got, " 1717452003 cb  full        3        0 "));
	free(got);
}

static void test_custom(void **state)
{
	NSR_UNUSED(state);
	expect(NSR_MMREPORT_CUSTOM, "volume(12),client(5),name,ssid,totalsize",
	       NULL,
	       "volume       clien name                                   ssid"
	       "        total\n"
	       "DD01.001     web01 /var                             4129018274"
	       "        12 GB\n"
	       "DD01.001     web01 /etc                             4112241059"
	       "       104 MB\n");
	/* Wide time columns show the clock; the long ssid has 53 chars. */
	expect(NSR_MMREPORT_CUSTOM, "name(6), savetime(22/23),sscomp(23),"
	       "ssid(53)", NULL,
	       "name   date                    ss completed            ssid\n"
	       "/var   06/03/24 10:00:03 PM    06/03/24 10:10:03 PM    "
	       "00010203-04050607-08090a0b-0c0d0e0f-f61bd1a2-665e3ce3\n"
	       "/etc   06/03/24 10:01:03 PM    06/03/24 10:11:03 PM    "
	       "00010203-04050607-08090a0b-0c0d0e0f-f51bd1a3-665e3ce4\n");
	expect(NSR_MMREPORT_CUSTOM, "ssid,cloneid,incomplete,copies,pool",
	       NULL,
	       "       ssid    clone id incomplete copies pool\n"
	       " 4129018274  1717452003 no              1 Default\n"
	       " 4112241059  1717452004 no              1 Default\n");
}

static void test_export(void **state)
{
	NSR_UNUSED(state);
	expect(NSR_MMREPORT_CUSTOM, "savetime,ssid,cloneid,pool,volume,type",
	       "c;",
	       "date;ssid;clone id;pool;volume;type\n"
	       "06/03/24;4129018274;1717452003;Default;DD01.001;Data Domain\n"
	       "06/03/24;4112241059;1717452004;Default;DD01.001;Data Domain\n");
	expect(NSR_MMREPORT_CUSTOM, "name,totalsize", "c/",
	       "name/total\n\"/var\"/12 GB\n\"/etc\"/104 MB\n");
	expect(NSR_MMREPORT_CUSTOM, "ssid,name,totalsize,savetime,incomplete",
	       "j",
	       "{\"ssid\":4129018274,\"name\":\"/var\",\"totalsize\":"
	       "12884901888,\"savetime\":1717452003,\"incomplete\":false}\n"
	       "{\"ssid\":4112241059,\"name\":\"/etc\",\"totalsize\":"
	       "109051904,\"savetime\":1717452063,\"incomplete\":false}\n");
}

static void test_super(void **state)
{
	NSR_UNUSED(state);
	expect(NSR_MMREPORT_SUPER, NULL, NULL,
	       "ssid=4129018274 savetime=06/03/24 10:00:03 PM (1717452003) "
	       "web01.example.com:/var\n"
	       "\tlevel=full sflags=vF size=12884901888 files=5120 "
	       "pool=Default group=Daily\n"
	       "\tcreate=06/03/24 10:00:03 PM complete=06/03/24 10:10:03 PM"
	       " browse=07/03/24 10:00:03 PM retent=06/03/25 10:00:03 PM\n"
	       "\tclone #1717452003: time=06/03/24 10:00:03 PM"
	       " retent=06/03/25 10:00:03 PM flags= copies=1\n"
	       "\t\tvolume=DD01.001 volid=a0a1a2a3a4a5a6a7a8a9aaabacadaeaf "
	       "file=3 record=0 size=12884901888 flags=c\n"
	       "ssid=4112241059 savetime=06/03/24 10:01:03 PM (1717452063) "
	       "web01.example.com:/etc\n"
	       "\tlevel=incr sflags=vF size=109051904 files=77 "
	       "pool=Default group=Daily\n"
	       "\tcreate=06/03/24 10:01:03 PM complete=06/03/24 10:11:03 PM"
	       " browse=07/03/24 10:00:03 PM retent=06/03/25 10:00:03 PM\n"
	       "\tclone #1717452004: time=06/03/24 10:01:03 PM"
	       " retent=06/03/25 10:00:03 PM flags= copies=1\n"
	       "\t\tvolume=DD01.001 volid=a0a1a2a3a4a5a6a7a8a9aaabacadaeaf "
	       "file=4 record=0 size=109051904 flags=c\n");
}

static void test_media(void **state)
{
	struct mmdb_volume v[3];
	struct nsr_mmreport *r = NULL;
	struct nsr_buf out;

	NSR_UNUSED(state);
	setenv("TZ", "UTC", 1);
	tzset();
	memset(v, 0, sizeof(v));
	snprintf(v[0].name, sizeof(v[0].name), "DD01.001");
	v[0].written = 1884 * GB;
	v[0].capacity = 15ULL * 1024 * GB;
	v[0].volretent = 1828994403; /* 12/16/27 */
	v[0].mounts = 18;
	v[0].flags = MMDB_VOL_RECYCLABLE;
	snprintf(v[1].name, sizeof(v[1].name), "TAPE0042");
	v[1].written = 2247 * GB;
	v[1].capacity = 2540 * GB;
	v[1].flags = MMDB_VOL_FULL | MMDB_VOL_MANUAL;
	v[1].volretent = 1736726400; /* 01/13/25 */
	v[1].read = 300;
	v[1].mounts = 6;
	snprintf(v[2].name, sizeof(v[2].name), "TAPE0043");
	v[2].capacity = 2540 * GB;
	v[2].mounts = 4;
	assert_int_equal(nsr_mmreport_new(NSR_MMREPORT_MEDIA, NULL, &r, NULL),
			 NSR_OK);
	assert_true(nsr_mmreport_is_volume(r));
	nsr_buf_init(&out, 0);
	assert_int_equal(nsr_mmreport_header(r, &out), NSR_OK);
	for (int i = 0; i < 3; i++)
		assert_int_equal(nsr_mmreport_volume(r, &v[i], &out), NSR_OK);
	assert_string_equal(out.data,
		"state volume                written  (%)  expires     read "
		"mounts capacity\n"
		"E     DD01.001              1884 GB  12% 12/16/27     0 KB "
		"    18    15 TB\n"
		"M     TAPE0042              2247 GB full 01/13/25     0 KB "
		"     6  2540 GB\n"
		"      TAPE0043                 0 KB   0%    undef     0 KB "
		"     4  2540 GB\n");
	nsr_buf_release(&out);
	nsr_mmreport_free(r);

	assert_int_equal(nsr_mmreport_new(NSR_MMREPORT_CUSTOM,
					  "volume,%used,pool,location", &r,
					  NULL), NSR_OK);
	assert_true(nsr_mmreport_is_volume(r));
	nsr_mmreport_free(r);
	assert_int_equal(nsr_mmreport_new(NSR_MMREPORT_DEFAULT, NULL, &r,
					  NULL), NSR_OK);
	assert_false(nsr_mmreport_is_volume(r));
	nsr_buf_init(&out, 0);
	assert_int_equal(nsr_mmreport_volume(r, &v[0], &out), NSR_ERR_INVAL);
	nsr_buf_release(&out);
	nsr_mmreport_free(r);
}

static void test_sizes(void **state)
{
	static const struct {
		unsigned long long bytes;
		int min;
		const char *want;
	} cases[] = {
		{ 0, 0, "0 B" }, { 0, 1, "0 KB" }, { 9999, 0, "9999 B" },
		{ 10000, 0, "10 KB" }, { 300, 1, "0 KB" }, { 512, 1, "1 KB" },
		{ 104 * MB, 0, "104 MB" }, { 12 * GB, 0, "12 GB" },
		{ 2540 * GB, 1, "2540 GB" }, { 15ULL << 40, 1, "15 TB" },
		{ ~0ULL, 0, "16 EB" },
	};
	struct nsr_buf b;

	NSR_UNUSED(state);
	nsr_buf_init(&b, 0);
	for (size_t i = 0; i < NSR_ARRAY_SIZE(cases); i++) {
		nsr_buf_reset(&b);
		assert_int_equal(nsr_mmreport_size(cases[i].bytes, cases[i].min,
						   &b), NSR_OK);
		assert_string_equal(b.data, cases[i].want);
	}
	nsr_buf_release(&b);
}

static void test_spec_errors(void **state)
{
	static const struct {
		const char *spec;
		size_t off;
		const char *what;
	} cases[] = {
		{ "volume,sise", 7, "unknown attribute 'sise' (known: ssid" },
		{ "volume(", 7, "expected a column width" },
		{ "volume(12", 9, "expected ')'" },
		{ "volume(0)", 6, "at least 1" },
		{ "volume(99999)", 6, "too large" },
		{ "volume,,name", 7, "expected an attribute name" },
		{ "volume(3)x", 9, "expected ','" },
		{ "", 0, "expected an attribute name" },
	};
	struct nsr_mmquery_error err;
	struct nsr_mmreport *r = NULL;

	NSR_UNUSED(state);
	for (size_t i = 0; i < NSR_ARRAY_SIZE(cases); i++) {
		memset(&err, 0, sizeof(err));
		assert_int_equal(nsr_mmreport_new(NSR_MMREPORT_CUSTOM,
						  cases[i].spec, &r, &err),
				 NSR_ERR_SYNTAX);
		assert_null(r);
		if (err.offset != cases[i].off ||
		    !strstr(err.msg, cases[i].what))
			fail_msg("'%s': got %zu '%s'", cases[i].spec,
				 err.offset, err.msg);
	}
	assert_int_equal(nsr_mmreport_new(NSR_MMREPORT_DEFAULT, NULL, &r,
					  NULL), NSR_OK);
	assert_int_equal(nsr_mmreport_set_export(r, "xm", &err),
			 NSR_ERR_SYNTAX);
	assert_int_equal(nsr_mmreport_set_export(r, "c", &err),
			 NSR_ERR_SYNTAX);
	nsr_mmreport_free(r);
	assert_int_equal(nsr_mmreport_new(NSR_MMREPORT_SUPER, NULL, &r,
					  NULL), NSR_OK);
	assert_int_equal(nsr_mmreport_set_export(r, "j", &err),
			 NSR_ERR_SYNTAX);
	nsr_mmreport_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_and_verbose),
		cmocka_unit_test(test_boot_and_frags),
		cmocka_unit_test(test_custom),
		cmocka_unit_test(test_export),
		cmocka_unit_test(test_super),
		cmocka_unit_test(test_media),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_spec_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
