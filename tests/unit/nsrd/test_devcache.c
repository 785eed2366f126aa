/*
 * test_devcache.c - nsrd's memory of devices (daemons/nsrd/devcache.c):
 * a volume's record is fetched once per device within the TTL, again
 * after it, when the device names another volume, or after a forget;
 * failed fetches are not cached; a mover is handed out from memory only
 * while nsrd counts sessions on it below target sessions, the least
 * loaded first, and never one that is not alive or whose port is unknown.
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

static pid_t dead_pid;

/* alive - every pid but dead_pid. */
static int alive(pid_t pid)
{
	return pid != dead_pid;
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
	assert_int_equal(devcache_mover_pick("d1", l, 3, 4, alive, &pid,
					     &port), 0);
	devcache_mover_learn("d1", 11, 7011);
	devcache_mover_learn("d1", 13, 7013);
	devcache_mover_learn("d2", 12, 7012); /* another device's */
	assert_int_equal(devcache_mover_pick("d1", l, 3, 4, alive, &pid,
					     &port), 1);
	assert_int_equal(pid, 13);
	assert_int_equal(port, 7013);
	devcache_mover_learn("d1", 12, 7112);
	assert_int_equal(devcache_mover_pick("d1", l, 3, 4, alive, &pid,
					     &port), 1);
	assert_int_equal(pid, 12);
	assert_int_equal(port, 7112);
	/* at target sessions: ask (nsrsnmd may start another) */
	assert_int_equal(devcache_mover_pick("d1", l, 3, 1, alive, &pid,
					     &port), 0);
	/* target 0 = nsrsnmd's default of 4 */
	assert_int_equal(devcache_mover_pick("d1", l, 3, 0, alive, &pid,
					     &port), 1);
	/* a dead one is skipped and forgotten */
	dead_pid = 12;
	assert_int_equal(devcache_mover_pick("d1", l, 3, 4, alive, &pid,
					     &port), 1);
	assert_int_equal(pid, 13);
	dead_pid = 0;
	l[0].sessions = 9;
	l[2].sessions = 9;
	assert_int_equal(devcache_mover_pick("d1", l, 3, 4, alive, &pid,
					     &port), 0);
}

/* test_mover_idle - a mover nsrd counts no session on is not handed out
 * (it may have exited idle); a forgotten one neither. */
static void test_mover_idle(void **state)
{
	struct nsr_snmd_load l[1] = { { 21, 0 } };
	pid_t pid = 0;
	int port = 0;

	(void)state;
	devcache_mover_learn("d1", 21, 7021);
	assert_int_equal(devcache_mover_pick("d1", l, 1, 4, NULL, &pid,
					     &port), 0);
	l[0].sessions = 1;
	assert_int_equal(devcache_mover_pick("d1", l, 1, 4, NULL, &pid,
					     &port), 1);
	devcache_mover_forget("d1", 0);
	assert_int_equal(devcache_mover_pick("d1", l, 1, 4, NULL, &pid,
					     &port), 0);
	/* relearned with a new port: the new one */
	devcache_mover_learn("d1", 21, 7000);
	devcache_mover_learn("d1", 21, 7121);
	assert_int_equal(devcache_mover_pick("d1", l, 1, 4, NULL, &pid,
					     &port), 1);
	assert_int_equal(port, 7121);
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
