/*
 * test_res_sched.c - NSR schedule and NSR group resources are checked
 * with the schedule and time parsers (restypes.c, sched.h).
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/res.h"
#include "nsr_test.h"

/* check - the result of nsr_res_check on text (defaults filled); why
 * must contain want when it fails. */
static void check(const char *text, int rc, const char *want)
{
	const struct nsr_res_schema *s = nsr_res_schema_std();
	struct nsr_res_error err;
	struct nsr_res *r = NULL;
	struct nsr_buf why;

	if (nsr_res_parse_attrs(text, &r, &err) != NSR_OK)
		fail_msg("parse '%s': %s", text, err.msg);
	assert_int_equal(nsr_res_fill_defaults(r, s), NSR_OK);
	nsr_buf_init(&why, 0);
	assert_int_equal(nsr_res_check(r, s, &why), rc);
	if (want && (!why.data || !strstr(why.data, want)))
		fail_msg("'%s': '%s' lacks '%s'", text,
			 why.data ? why.data : "", want);
	nsr_buf_release(&why);
	nsr_res_free(r);
}

/* test_schedule - period, action and overrides are checked. */
static void test_schedule(void **state)
{
	NSR_UNUSED(state);
	check("type: NSR schedule; name: Default", NSR_OK, NULL);
	check("type: NSR schedule; name: Fri; action: "
	      "\"incr incr incr incr incr full incr\"; "
	      "override: \"full 12/24/2026\", \"skip 2026-12-25\"",
	      NSR_OK, NULL);
	check("type: NSR schedule; name: x; action: full incr", NSR_ERR_INVAL,
	      "7 levels");
	check("type: NSR schedule; name: x; period: Month", NSR_ERR_INVAL,
	      "31 levels");
	check("type: NSR schedule; name: x; override: \"full 02/30/2026\"",
	      NSR_ERR_INVAL, "is not a date");
	check("type: NSR schedule; name: x; action: "
	      "\"full incr incr incr incr incr sometimes\"",
	      NSR_ERR_INVAL, "'sometimes' is not a level");
}

/* test_group - start time, interval and level override are checked. */
static void test_group(void **state)
{
	NSR_UNUSED(state);
	check("type: NSR group; name: Nightly", NSR_OK, NULL);
	check("type: NSR group; name: n; start time: \"21:30\"; interval: "
	      "\"6:00\"; level: incr",
	      NSR_OK, NULL);
	check("type: NSR group; name: n; start time: \"25:00\"",
	      NSR_ERR_INVAL, "start time '25:00': there is no such time");
	check("type: NSR group; name: n; start time: noon", NSR_ERR_INVAL,
	      "as 21:30");
	check("type: NSR group; name: n; interval: \"0:00\"", NSR_ERR_INVAL,
	      "from 00:01 to 24:00");
	check("type: NSR group; name: n; level: weekly", NSR_ERR_INVAL,
	      "level 'weekly'");
}

/* main - run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_schedule),
		cmocka_unit_test(test_group),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
