/*
 * test_devcache.c - nsrd's memory of devices (daemons/nsrd/devcache.c):
 * a volume's record is fetched once per device within the TTL, again
 * after it, when the device names another volume, or after a forget;
 * failed fetches are not cached; a mover is handed out from memory only
 * while it serves fewer sessions of nsrd's than target sessions, the
 * least loaded first, an idle one only with the device settings nsrsnmd
 * last saw (the key), and never one that is not alive (an idle one
 * checked as such) or whose port is unknown.
 */
#include "nsr/compat.h"

#include "devcache.h"
#include "nsr/err.h"
#include "nsr_test.h"

static int fetches;
static int fetch_rc;

/* fetch - a fake media database: the volume's pool is its name. */
static int fetch(void *arg, const char *volume, struct mmdb_volume *v)
{
	(void)arg;
	fetches++;
	if (fetch_rc != NSR_OK)
		return fetch_rc;
	memset(v, 0, sizeof(*v));
	snprintf(v->name, sizeof(v->name), "%s", volume);
	snprintf(v->pool, sizeof(v->pool), "p-%s", volume);
	return NSR_OK;
}

/* reset - a clean cache and counters. */
static int reset(void **state)
{
	(void)state;
	devcache_clear();
	fetches = 0;
	fetch_rc = NSR_OK;
	return 0;
}

/* test_vol_ttl - fetched once within the TTL, again after it. */
static void test_vol_ttl(void **state)
{
	struct mmdb_volume v;

	(void)state;
	for (int i = 0; i < 100; i++) {
		assert_int_equal(devcache_vol_get("d1", "V1", 1000 + i, fetch,
						  NULL, &v), NSR_OK);
		assert_string_equal(v.pool, "p-V1");
	}
	assert_int_equal(fetches, 1);
	devcache_vol_get("d1", "V1", 1000 + DEVCACHE_VOL_TTL_MS - 1, fetch,
			 NULL, &v);
	assert_int_equal(fetches, 1);
	devcache_vol_get("d1", "V1", 1000 + DEVCACHE_VOL_TTL_MS, fetch, NULL,
			 &v);
	assert_int_equal(fetches, 2);
	/* a clock that goes back is not trusted */
	devcache_vol_get("d1", "V1", 10, fetch, NULL, &v);
	assert_int_equal(fetches, 3);
}

/* test_vol_change - another volume on the device, another device, a
 * forget: fetched again. */
static void test_vol_change(void **state)
{
	struct mmdb_volume v;

	(void)state;
	devcache_vol_get("d1", "V1", 0, fetch, NULL, &v);
	devcache_vol_get("d2", "V2", 0, fetch, NULL, &v);
	assert_int_equal(fetches, 2);
	devcache_vol_get("d1", "V3", 1, fetch, NULL, &v);
	assert_string_equal(v.pool, "p-V3");
	assert_int_equal(fetches, 3);
	devcache_vol_get("d2", "V2", 1, fetch, NULL, &v);
	assert_int_equal(fetches, 3);
	devcache_vol_forget("V2");
	devcache_vol_get("d2", "V2", 2, fetch, NULL, &v);
	devcache_vol_get("d1", "V3", 2, fetch, NULL, &v);
	assert_int_equal(fetches, 4);
	devcache_vol_forget(NULL);
	devcache_vol_get("d1", "V3", 3, fetch, NULL, &v);
	devcache_vol_get("d2", "V2", 3, fetch, NULL, &v);
	assert_int_equal(fetches, 6);
}

/* test_vol_errors - NOTFOUND is remembered, other errors are not. */
static void test_vol_errors(void **state)
{
	struct mmdb_volume v;

	(void)state;
	fetch_rc = NSR_ERR_IO;
	assert_int_equal(devcache_vol_get("d1", "V1", 0, fetch, NULL, &v),
			 NSR_ERR_IO);
	assert_int_equal(devcache_vol_get("d1", "V1", 0, fetch, NULL, &v),
			 NSR_ERR_IO);
	assert_int_equal(fetches, 2);
	fetch_rc = NSR_ERR_NOTFOUND;
	devcache_vol_get("d1", "V1", 0, fetch, NULL, &v);
	assert_int_equal(devcache_vol_get("d1", "V1", 1, fetch, NULL, &v),
			 NSR_ERR_NOTFOUND);
	assert_int_equal(fetches, 3);
}

/* test_vol_many - more devices than the table: still right answers. */
static void test_vol_many(void **state)
{
	struct mmdb_volume v;
	char d[32], n[32];

	(void)state;
	for (int i = 0; i < 600; i++) {
		snprintf(d, sizeof(d), "dev%d", i);
		snprintf(n, sizeof(n), "V%d", i);
		assert_int_equal(devcache_vol_get(d, n, i, fetch, NULL, &v),
				 NSR_OK);
		assert_string_equal(v.name, n);
	}
	assert_int_equal(fetches, 600);
	devcache_vol_get("dev599", "V599", 600, fetch, NULL, &v);
	assert_int_equal(fetches, 600);
}

static pid_t dead_pid;	/* alive says no for it */
static int idle_asked;	/* alive was asked about an idle mover */
static int idle_gone;	/* alive says no for every idle mover */

/* alive - every pid but dead_pid (and idle ones when idle_gone). */
static int alive(pid_t pid, int idle)
{
	idle_asked += idle;
	return pid != dead_pid && !(idle && idle_gone);
}

/* test_mover_pick - least loaded known mover below target, else ask. */
static void test_mover_pick(void **state)
{
	struct nsr_snmd_load l[3] = { { 11, 3 }, { 12, 1 }, { 13, 2 } };
	pid_t pid = 0;
	int port = 0;

	(void)state;
	dead_pid = 0;
	/* nothing learned: ask */
	assert_int_equal(devcache_mover_pick("d1", l, 3, 4, 5, alive, &pid,
					     &port), 0);
	devcache_mover_learn("d1", 11, 7011, 5);
	devcache_mover_learn("d1", 13, 7013, 5);
	devcache_mover_learn("d2", 12, 7012, 5); /* another device's */
	assert_int_equal(devcache_mover_pick("d1", l, 3, 4, 5, alive, &pid,
					     &port), 1);
	assert_int_equal(pid, 13);
	assert_int_equal(port, 7013);
	devcache_mover_learn("d1", 12, 7112, 5);
	assert_int_equal(devcache_mover_pick("d1", l, 3, 4, 5, alive, &pid,
					     &port), 1);
	assert_int_equal(pid, 12);
	assert_int_equal(port, 7112);
	/* at target sessions: ask (nsrsnmd may start another) */
	assert_int_equal(devcache_mover_pick("d1", l, 3, 1, 5, alive, &pid,
					     &port), 0);
	/* target 0 = nsrsnmd's default of 4 */
	assert_int_equal(devcache_mover_pick("d1", l, 3, 0, 5, alive, &pid,
					     &port), 1);
	/* a dead one is skipped and forgotten */
	dead_pid = 12;
	assert_int_equal(devcache_mover_pick("d1", l, 3, 4, 5, alive, &pid,
					     &port), 1);
	assert_int_equal(pid, 13);
	dead_pid = 0;
	l[0].sessions = 9;
	l[2].sessions = 9;
	assert_int_equal(devcache_mover_pick("d1", l, 3, 4, 5, alive, &pid,
					     &port), 0);
}

/* test_mover_idle - a known mover nsrd counts no session on is the
 * least loaded (nsrsnmd would pick it too) and is handed out once alive
 * says it has not exited (asked as idle) and while the device's settings
 * are those it was handed out with; one that has exited is forgotten,
 * and then nsrsnmd is asked; a forgotten one is not handed out. */
static void test_mover_idle(void **state)
{
	struct nsr_snmd_load l[2] = { { 22, 2 }, { 21, 0 } };
	pid_t pid = 0;
	int port = 0;

	(void)state;
	dead_pid = 0;
	idle_asked = idle_gone = 0;
	devcache_mover_learn("d1", 22, 7022, 5);
	devcache_mover_learn("d1", 21, 7021, 5);
	devcache_mover_learn("d1", 23, 7023, 5); /* not in load: idle too */
	assert_int_equal(devcache_mover_pick("d1", l, 2, 4, 5, alive, &pid,
					     &port), 1);
	assert_true(pid == 21 || pid == 23);
	assert_int_equal(idle_asked, 1);
	/* the device's settings changed: not the idle ones, the busy one
	 * below target still */
	assert_int_equal(devcache_mover_pick("d1", l, 2, 4, 6, alive, &pid,
					     &port), 1);
	assert_int_equal(pid, 22);
	assert_int_equal(devcache_mover_pick("d1", l, 2, 2, 6, alive, &pid,
					     &port), 0);
	/* idle ones that exited: forgotten, the busy one below target */
	idle_gone = 1;
	assert_int_equal(devcache_mover_pick("d1", l, 2, 4, 5, alive, &pid,
					     &port), 1);
	assert_int_equal(pid, 22);
	assert_int_equal(port, 7022);
	assert_int_equal(idle_asked, 3);
	idle_gone = 0;
	l[1].pid = 23; /* forgotten: not handed out, counted or not */
	assert_int_equal(devcache_mover_pick("d1", l, 2, 2, 5, alive, &pid,
					     &port), 0);
	devcache_mover_forget("d1", 0);
	l[0].sessions = 0;
	assert_int_equal(devcache_mover_pick("d1", l, 2, 4, 5, NULL, &pid,
					     &port), 0);
	/* relearned with a new port: the new one */
	devcache_mover_learn("d1", 21, 7000, 5);
	devcache_mover_learn("d1", 21, 7121, 5);
	assert_int_equal(devcache_mover_pick("d1", l, 2, 4, 5, NULL, &pid,
					     &port), 1);
	assert_int_equal(pid, 21);
	assert_int_equal(port, 7121);
}

/* test_mover_key - the key changes with every setting nsrsnmd is told
 * beside the name and the load, and only with those. */
static void test_mover_key(void **state)
{
	struct nsr_snmd_load l[1] = { { 1, 1 } };
	struct nsr_snmd_device a = {"aftd1", "adv_file", "/d/a", 0, 0, 64,
				    1024, 32, NULL, 0};
	struct nsr_snmd_device b = a;
	uint64_t k = devcache_mover_key(&a);

	(void)state;
	b.name = "other";
	b.load = l;
	b.nload = 1;
	assert_true(devcache_mover_key(&b) == k);
	for (int f = 0; f < 7; f++) { /* each setting changed alone */
		b = a;
		switch (f) {
		case 0: b.capacity = 1; break;
		case 1: b.segment_size = 1; break;
		case 2: b.target_sessions = 4; break;
		case 3: b.max_sessions = 8; break;
		case 4: b.max_movers = 4; break;
		case 5: b.path = "/d/b"; break;
		default: b.media_type = "vtape"; break;
		}
		assert_true(devcache_mover_key(&b) != k);
	}
}

/* main - run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_vol_ttl, reset),
		cmocka_unit_test_setup(test_vol_change, reset),
		cmocka_unit_test_setup(test_vol_errors, reset),
		cmocka_unit_test_setup(test_vol_many, reset),
		cmocka_unit_test_setup(test_mover_pick, reset),
		cmocka_unit_test_setup(test_mover_idle, reset),
		cmocka_unit_test_setup(test_mover_key, reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
