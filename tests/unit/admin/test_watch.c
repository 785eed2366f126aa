/*
 * test_watch.c - nsrwatch's views (src/admin/watch.c) of a STATUS answer
 * built by hand: the text screen names every device, mover, session and
 * wait with its figures; the JSON form carries the same, escaped; empty
 * lists say so.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/watch.h"
#include "nsr_test.h"

/* sample - a status with one of everything (strings are literals). */
static void sample(status_res *st, st_device *d, st_mover *m,
		   st_session *s, st_wait *w)
{
	memset(st, 0, sizeof(*st));
	st->server = (char *)"srv";
	st->parallelism = 8;
	st->now = 1000;
	st->notes = (char *)"";
	memset(d, 0, sizeof(*d));
	d->name = (char *)"aftd1";
	d->media_type = (char *)"adv_file";
	d->volume = (char *)"Disk.001";
	d->enabled = TRUE;
	d->sessions = 3;
	d->target_sessions = 1;
	d->max_sessions = 8;
	d->max_movers = 4;
	st->devices.devices_len = 1;
	st->devices.devices_val = d;
	m[0].host = (char *)"";
	m[0].device = (char *)"aftd1";
	m[0].pid = 4242;
	m[0].port = 40000;
	m[0].sessions = 2;
	m[1] = m[0];
	m[1].pid = 4243;
	m[1].sessions = 1;
	st->movers.movers_len = 2;
	st->movers.movers_val = m;
	memset(s, 0, sizeof(*s));
	s->client = (char *)"cli";
	s->ssid = 77;
	s->device = (char *)"aftd1";
	s->mover_pid = 4242;
	s->started = 990;
	st->sessions.sessions_len = 1;
	st->sessions.sessions_val = s;
	w[0].ticket = 5;
	w[0].kind = SAVE_WAIT_QUEUED;
	w[0].client = (char *)"cli";
	w[0].name = (char *)"/q";
	w[0].pool = (char *)"Default";
	w[0].since = 997;
	w[0].held = 1; /* its SAVE_START answer held at nsrd */
	w[1] = w[0];
	w[1].held = 0;
	w[1].ticket = 6;
	w[1].kind = SAVE_WAIT_MOUNT;
	w[1].name = (char *)"/a \"quoted\" name";
	w[1].pool = (char *)"Far";
	w[1].since = 940;
	st->waits.waits_len = 2;
	st->waits.waits_val = w;
}

/* test_text - the screen. */
static void test_text(void **state)
{
	status_res st;
	st_device d;
	st_mover m[2];
	st_session s;
	st_wait w[2];
	struct nsr_buf b;

	NSR_UNUSED(state);
	sample(&st, &d, m, &s, w);
	nsr_buf_init(&b, 0);
	assert_int_equal(nsr_watch_text(&st, &b), NSR_OK);
	assert_non_null(strstr(b.data,
			       "server srv (parallelism 8): 1 sessions, "
			       "1 queued, 1 mount requests"));
	assert_non_null(strstr(b.data, "aftd1"));
	assert_non_null(strstr(b.data, "Disk.001"));
	assert_non_null(strstr(b.data, "1/8   2 of 4"));
	assert_non_null(strstr(b.data, "srv              aftd1"));
	assert_non_null(strstr(b.data, "    4243  40000        1"));
	assert_non_null(strstr(b.data, "10s"));
	/* mount requests come before the queue */
	assert_true(strstr(b.data, "mount request 6: save of cli:/a \"quoted\" "
			   "name waits for a writable volume of pool Far (60s)")
		    < strstr(b.data, "queued 5: save of cli:/q (3s)"));
	assert_null(strstr(b.data, "Notes"));
	/* nothing at all */
	st.devices.devices_len = st.movers.movers_len = 0;
	st.sessions.sessions_len = st.waits.waits_len = 0;
	st.notes = (char *)"storage node sn2: no answer";
	nsr_buf_reset(&b);
	assert_int_equal(nsr_watch_text(&st, &b), NSR_OK);
	assert_non_null(strstr(b.data, "(no devices are configured)"));
	assert_non_null(strstr(b.data, "(none running)"));
	assert_non_null(strstr(b.data, "(nothing waits)"));
	assert_non_null(strstr(b.data, "Notes: storage node sn2: no answer"));
	nsr_buf_release(&b);
}

/* test_json - the object. */
static void test_json(void **state)
{
	status_res st;
	st_device d;
	st_mover m[2];
	st_session s;
	st_wait w[2];
	struct nsr_buf b;

	NSR_UNUSED(state);
	sample(&st, &d, m, &s, w);
	nsr_buf_init(&b, 0);
	assert_int_equal(nsr_watch_json(&st, &b), NSR_OK);
	assert_non_null(strstr(b.data, "{\"server\":\"srv\",\"parallelism\":8,"
			       "\"time\":1000,\"devices\":[{\"name\":\"aftd1\","
			       "\"type\":\"adv_file\",\"volume\":\"Disk.001\","
			       "\"enabled\":true,\"read_only\":false,"
			       "\"sessions\":3,\"target_sessions\":1,"
			       "\"max_sessions\":8,\"max_movers\":4}]"));
	assert_non_null(strstr(b.data,
			       "\"movers\":[{\"host\":\"srv\",\"device\""
			       ":\"aftd1\",\"pid\":4242,\"port\":40000,"
			       "\"sessions\":2},{"));
	assert_non_null(strstr(b.data, "\"sessions\":[{\"type\":\"save\","
			       "\"client\":\"cli\",\"device\":\"aftd1\","
			       "\"ssid\":77,\"mover_pid\":4242,\"jobid\":0,"
			       "\"seconds\":10}]"));
	assert_non_null(strstr(b.data, "{\"kind\":\"queued\",\"ticket\":5,"
			       "\"client\":\"cli\",\"name\":\"/q\","
			       "\"pool\":\"Default\",\"held\":true,"
			       "\"seconds\":3}"));
	assert_non_null(strstr(
		b.data, "{\"kind\":\"mount request\",\"ticket\":6,"
			"\"client\":\"cli\",\"name\":\"/a \\\"quoted\\\" "
			"name\",\"pool\":\"Far\",\"held\":false,"
			"\"seconds\":60}"));
	assert_non_null(strstr(b.data, ",\"notes\":\"\"}\n"));
	assert_int_equal(b.data[b.len - 1], '\n');
	nsr_buf_release(&b);
}

/* test_rates - the rates: a Rates section and a "rates" member. */
static void test_rates(void **state)
{
	status_res st;
	st_device d;
	st_mover m[2];
	st_session s;
	st_wait w[2];
	rates_res rt;
	rate_device rd;
	rate_session rs[2];
	struct nsr_buf b;

	NSR_UNUSED(state);
	sample(&st, &d, m, &s, w);
	memset(&rt, 0, sizeof(rt));
	rt.notes = (char *)"";
	rd.name = (char *)"aftd1";
	rd.sessions = 2;
	rd.rate = 150000000;
	rt.devices.devices_len = 1;
	rt.devices.devices_val = &rd;
	memset(rs, 0, sizeof(rs));
	rs[0].ssid = 77;
	rs[0].device = (char *)"aftd1";
	rs[0].mover_pid = 4242;
	rs[0].bytes = 2500000000u;
	rs[0].rate = 100000000;
	rs[1] = rs[0];
	rs[1].ssid = 78;
	rs[1].recover = TRUE;
	rs[1].bytes = 1000000;
	rs[1].rate = 50000000;
	rt.sessions.sessions_len = 2;
	rt.sessions.sessions_val = rs;
	nsr_buf_init(&b, 0);
	assert_int_equal(nsr_watch_text_rates(&st, &rt, &b), NSR_OK);
	assert_non_null(strstr(b.data, "\nRates\n  device  aftd1 "));
	assert_non_null(strstr(b.data, "150.0 MB/s  (2 sessions)"));
	assert_non_null(strstr(b.data, "  save    ssid 77 on     aftd1 "));
	assert_non_null(strstr(b.data, "100.0 MB/s  2500.0 MB so far"));
	assert_non_null(strstr(b.data, "  recover ssid 78 on "));
	/* the section sits before Pending */
	assert_true(strstr(b.data, "Rates") < strstr(b.data, "Pending"));
	nsr_buf_reset(&b);
	assert_int_equal(nsr_watch_json_rates(&st, &rt, &b), NSR_OK);
	assert_non_null(strstr(b.data,
			       ",\"rates\":{\"devices\":[{\"name\":\"aftd1\","
			       "\"sessions\":2,\"bytes_per_sec\":150000000}],"
			       "\"sessions\":[{\"type\":\"save\",\"ssid\":77,"
			       "\"device\":\"aftd1\",\"mover_pid\":4242,"
			       "\"bytes\":2500000000,\"bytes_per_sec\":"
			       "100000000},{\"type\":\"recover\","
			       "\"ssid\":78,"));
	assert_non_null(strstr(b.data,
			       "\"notes\":\"\"},\"notes\":\"\"}\n"));
	/* without rates, no member and no section */
	nsr_buf_reset(&b);
	assert_int_equal(nsr_watch_json_rates(&st, NULL, &b), NSR_OK);
	assert_null(strstr(b.data, "rates"));
	nsr_buf_reset(&b);
	assert_int_equal(nsr_watch_text_rates(&st, NULL, &b), NSR_OK);
	assert_null(strstr(b.data, "Rates"));
	nsr_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_rates),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
