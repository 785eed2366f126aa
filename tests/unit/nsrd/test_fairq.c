/*
 * test_fairq.c - nsrd's fair admission queue (daemons/nsrd/fairq.c):
 * grants never pass the server, group or client limit; one client with
 * many queued sessions does not starve another (round robin, oldest
 * first within a client); groups share fairly; a group limit of 0 and
 * "" (no group) mean no group limit; fairq_fits names the limit reached;
 * a long simulated run of starts and ends never exceeds a limit and
 * serves every session.
 */
#include "nsr/compat.h"

#include "fairq.h"
#include "nsr_test.h"

/* Limits of the tests: group "g3" 3, "g1" 1, others none; client "c1"
 * 1, others 2.  lookups counts the calls. */
static int lookups;

/* glim - a group's limit. */
static long glim(void *arg, const char *g)
{
	(void)arg;
	lookups++;
	return strcmp(g, "g3") == 0 ? 3 : strcmp(g, "g1") == 0 ? 1 : 0;
}

/* clim - a client's limit. */
static long clim(void *arg, const char *c)
{
	(void)arg;
	lookups++;
	return strcmp(c, "c1") == 0 ? 1 : 2;
}

/* W - a wait. */
static struct fairq_item W(const char *c, const char *g, uint64_t t)
{
	struct fairq_item it = { c, g, t, 0 };

	return it;
}

/* granted_tickets - the granted tickets in order of the array, as text. */
static const char *granted_tickets(const struct fairq_item *w, size_t n)
{
	static char buf[256];
	size_t l = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n; i++)
		if (w[i].granted)
			l += (size_t)snprintf(buf + l, sizeof(buf) - l, "%llu ",
					      (unsigned long long)w[i].ticket);
	return buf;
}

/* test_server_limit - free server slots are all granted, no more. */
static void test_server_limit(void **state)
{
	struct fairq_limits lim = { 4, glim, clim, NULL };
	struct fairq_item run[1] = { W("a", "", 0) };
	struct fairq_item w[6] = { W("b", "", 1), W("c", "", 2),
				   W("d", "", 3), W("e", "", 4),
				   W("f", "", 5), W("a", "", 6) };

	(void)state;
	assert_int_equal(fairq_grant(run, 1, w, 6, &lim), 3);
	/* "a" already has a session: the three clients without go first,
	 * oldest first. */
	assert_string_equal(granted_tickets(w, 6), "1 2 3 ");
	assert_int_equal(fairq_grant(run, 1, w, 6, &lim), 0);
	assert_int_equal(fairq_fits(run, 1, w, 6, &lim, "z", ""),
			 FAIRQ_SERVER);
}

/* test_no_starvation - a client with many queued sessions and one that
 * came later alternate. */
static void test_no_starvation(void **state)
{
	struct fairq_limits lim = { 2, glim, clim, NULL };
	struct fairq_item w[12];

	(void)state;
	for (int i = 0; i < 10; i++)
		w[i] = W("many", "", (uint64_t)i + 1);
	w[10] = W("few", "", 11);
	w[11] = W("few", "", 12);
	/* Two slots: the oldest of "many" and the oldest of "few". */
	assert_int_equal(fairq_grant(NULL, 0, w, 12, &lim), 2);
	assert_string_equal(granted_tickets(w, 12), "1 11 ");
}

/* test_client_limit - a client never passes its parallelism. */
static void test_client_limit(void **state)
{
	struct fairq_limits lim = { 100, glim, clim, NULL };
	struct fairq_item run[1] = { W("c2", "", 0) };
	struct fairq_item w[5] = { W("c1", "", 1), W("c1", "", 2),
				   W("c2", "", 3), W("c2", "", 4),
				   W("c2", "", 5) };

	(void)state;
	lookups = 0;
	assert_int_equal(fairq_grant(run, 1, w, 5, &lim), 2);
	assert_string_equal(granted_tickets(w, 5), "1 3 ");
	/* Each client's and group's limit looked up once. */
	assert_true(lookups <= 3);
	assert_int_equal(fairq_fits(run, 1, w, 5, &lim, "c1", ""),
			 FAIRQ_CLIENT);
	assert_int_equal(fairq_fits(run, 1, w, 5, &lim, "c3", ""),
			 FAIRQ_FITS);
}

/* test_group_limit - groups: limit held, shared fairly, 0 = none. */
static void test_group_limit(void **state)
{
	struct fairq_limits lim = { 100, glim, clim, NULL };
	struct fairq_item w[8] = { W("a", "g1", 1), W("b", "g1", 2),
				   W("c", "g3", 3), W("d", "g3", 4),
				   W("e", "g3", 5), W("f", "g3", 6),
				   W("g", "big", 7), W("h", "big", 8) };

	(void)state;
	assert_int_equal(fairq_grant(NULL, 0, w, 8, &lim), 6);
	assert_string_equal(granted_tickets(w, 8), "1 3 4 5 7 8 ");
	assert_int_equal(fairq_fits(NULL, 0, w, 8, &lim, "x", "g3"),
			 FAIRQ_GROUP);
	assert_int_equal(fairq_fits(NULL, 0, w, 8, &lim, "x", "big"),
			 FAIRQ_FITS);
}

/* test_groups_share - with the server the limit, groups alternate. */
static void test_groups_share(void **state)
{
	struct fairq_limits lim = { 4, glim, clim, NULL };
	struct fairq_item w[8];

	(void)state;
	for (int i = 0; i < 6; i++)
		w[i] = W(i % 2 ? "p" : "q", "busy", (uint64_t)i + 1);
	w[6] = W("r", "quiet", 7);
	w[7] = W("s", "quiet", 8);
	assert_int_equal(fairq_grant(NULL, 0, w, 8, &lim), 4);
	assert_string_equal(granted_tickets(w, 8), "1 2 7 8 ");
}

/* Simulation: sessions of 5 clients in 2 groups start and end. */
#define SIM_N 200

/* check_limits - no client or group over its limit among run. */
static void check_limits(const struct fairq_item *run, size_t nrun)
{
	for (size_t a = 0; a < nrun; a++) {
		long nc = 0, ng = 0;

		for (size_t b = 0; b < nrun; b++) {
			nc += !strcmp(run[a].client, run[b].client);
			ng += !strcmp(run[a].group, run[b].group);
		}
		assert_true(nc <= clim(NULL, run[a].client));
		if (glim(NULL, run[a].group))
			assert_true(ng <= glim(NULL, run[a].group));
	}
}

/* test_simulation - limits hold at every step; every session runs;
 * the client that comes last with few sessions is not kept behind the
 * backlog of the one that flooded the queue. */
static void test_simulation(void **state)
{
	struct fairq_limits lim = { 4, glim, clim, NULL };
	static const char *cl[] = { "c1", "c3", "c4" };
	struct fairq_item q[SIM_N], run[SIM_N];
	size_t nq = 0, nrun = 0;
	int finished = 0, step = 0, c5_first = -1;

	(void)state;
	for (int i = 0; i < SIM_N; i++) {
		/* c2 floods the queue; c5 comes last with a few. */
		const char *c = i >= SIM_N - 10 ? "c5"
				: i % 4		? "c2"
						: cl[i % 3];

		q[nq++] = W(c, strcmp(c, "c5") && strcmp(c, "c2") ? "g3"
							       : "big",
			    (uint64_t)i + 1);
	}
	while (finished < SIM_N && step++ < 10 * SIM_N) {
		size_t k = 0;

		assert_true(fairq_grant(run, nrun, q, nq, &lim) >= 0);
		for (size_t i = 0; i < nq; i++) { /* granted ones start */
			if (!q[i].granted) {
				q[k++] = q[i];
				continue;
			}
			if (!strcmp(q[i].client, "c5") && c5_first < 0)
				c5_first = finished;
			run[nrun] = q[i];
			run[nrun++].granted = 0;
		}
		nq = k;
		assert_true(nrun <= 4);
		check_limits(run, nrun);
		if (nrun) { /* the oldest running session ends */
			memmove(run, run + 1, (nrun - 1) * sizeof(*run));
			nrun--;
			finished++;
		}
	}
	assert_int_equal(finished, SIM_N);
	assert_int_equal(nq, 0);
	/* c5 came last but started long before c2's backlog was through. */
	assert_true(c5_first >= 0 && c5_first < 10);
}

/* main - run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_server_limit),
		cmocka_unit_test(test_no_starvation),
		cmocka_unit_test(test_client_limit),
		cmocka_unit_test(test_group_limit),
		cmocka_unit_test(test_groups_share),
		cmocka_unit_test(test_simulation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
