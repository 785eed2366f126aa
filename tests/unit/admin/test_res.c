/*
 * test_res.c - nsradmin resource text: parse, print, edit, match, schema.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/res.h"
#include "nsr_test.h"

/* parse_one - parse an attribute list, failing the test on error. */
static struct nsr_res *parse_one(const char *text)
{
	struct nsr_res_error err;
	struct nsr_res *r = NULL;
	int rc = nsr_res_parse_attrs(text, &r, &err);

	if (rc != NSR_OK)
		fail_msg("parse '%s': %u:%u: %s", text, err.line, err.col,
			 err.msg);
	return r;
}

static void test_parse_file(void **state)
{
	const char *text =
		"# two resources\n"
		"                        type: NSR client;\n"
		"                        name: web01;\n"
		"                    save set: /var, /etc,\n"
		"                              \"/home/with, comma\";\n"
		"                 Parallelism: 4;\n"
		"\n"
		"\n"
		"type: NSR pool; name: Default  # trailing comment\n"
		"\n";
	struct nsr_res_list l;
	struct nsr_res_error err;
	const struct nsr_res *r;
	long i;

	NSR_UNUSED(state);
	nsr_res_list_init(&l);
	assert_int_equal(nsr_res_parse(text, strlen(text), &l, &err), NSR_OK);
	assert_int_equal(l.n, 2);
	r = l.items[0];
	assert_int_equal(nsr_res_nattrs(r), 4);
	assert_string_equal(nsr_res_type(r), "NSR client");
	i = nsr_res_find(r, "SAVE   SET");
	assert_int_equal(i, 2);
	assert_int_equal(nsr_res_attr_nvalues(r, (size_t)i), 3);
	assert_string_equal(nsr_res_attr_value(r, (size_t)i, 2),
			    "/home/with, comma");
	assert_string_equal(nsr_res_attr_name(r, 3), "Parallelism");
	assert_string_equal(nsr_res_get(r, "parallelism"), "4");
	assert_string_equal(nsr_res_get(l.items[1], "name"), "Default");
	nsr_res_list_release(&l);
}

static void test_parse_values(void **state)
{
	struct nsr_res *r;

	NSR_UNUSED(state);
	r = parse_one(
		"comment: ; start time: 3:33; x: \"a\\\"b\\\\c\\n\", \"\";"
		" flag; device access information: host:/aftd1");
	assert_int_equal(nsr_res_nattrs(r), 5);
	assert_int_equal(nsr_res_attr_nvalues(r, 0), 0);
	assert_null(nsr_res_get(r, "comment"));
	assert_string_equal(nsr_res_get(r, "start time"), "3:33");
	assert_string_equal(nsr_res_attr_value(r, 2, 0), "a\"b\\c\n");
	assert_string_equal(nsr_res_attr_value(r, 2, 1), "");
	assert_int_equal(nsr_res_find(r, "flag"), 3);
	assert_int_equal(nsr_res_attr_nvalues(r, 3), 0);
	assert_string_equal(nsr_res_get(r, "device access information"),
			    "host:/aftd1");
	nsr_res_free(r);

	/* Newlines are blanks inside one attribute list. */
	r = parse_one("type: NSR client;\nname: a,\n b");
	assert_int_equal(nsr_res_attr_nvalues(r, 1), 2);
	nsr_res_free(r);

	r = parse_one("");
	assert_int_equal(nsr_res_nattrs(r), 0);
	nsr_res_free(r);
}

/* expect_error - text must fail at line:col with msg containing what. */
static void expect_error(const char *text, int rc, unsigned line,
			 unsigned col, const char *what)
{
	struct nsr_res_list l;
	struct nsr_res_error err;

	nsr_res_list_init(&l);
	assert_int_equal(nsr_res_parse(text, strlen(text), &l, &err), rc);
	assert_int_equal(l.n, 0);
	if (err.line != line || err.col != col || !strstr(err.msg, what))
		fail_msg("'%s': got %u:%u '%s', want %u:%u '%s'", text,
			 err.line, err.col, err.msg, line, col, what);
}

static void test_parse_errors(void **state)
{
	struct nsr_buf b;
	struct nsr_res_error err;

	NSR_UNUSED(state);
	expect_error("type: NSR\nname: x\n", NSR_ERR_SYNTAX, 2, 1,
		     "blank line");
	expect_error("name: \"abc\n", NSR_ERR_SYNTAX, 1, 7, "unterminated");
	expect_error("name: a,, b\n", NSR_ERR_SYNTAX, 1, 9, "expected a value");
	expect_error("name: a,\n", NSR_ERR_SYNTAX, 2, 1, "after ','");
	expect_error("name: \"a\" b\n", NSR_ERR_SYNTAX, 1, 11, "after a value");
	expect_error("na,me: a\n", NSR_ERR_SYNTAX, 1, 3, "expected ':'");
	expect_error("name: a; NAME: b\n", NSR_ERR_SYNTAX, 1, 10, "twice");
	expect_error("x: \"\\q\"\n", NSR_ERR_SYNTAX, 1, 6, "escape");
	expect_error(": a\n", NSR_ERR_SYNTAX, 1, 1, "attribute name");
	/* A good resource before a bad one: nothing is returned. */
	expect_error("type: NSR;\n\ntype: NSR pool; name: \"x\n",
		     NSR_ERR_SYNTAX, 3, 23, "unterminated");

	memset(&err, 0, sizeof(err));
	snprintf(err.file, sizeof(err.file), "res/7.0.1.2.3.4.0.0.0.0.0.0");
	err.line = 3;
	err.col = 5;
	snprintf(err.msg, sizeof(err.msg), "expected a value");
	nsr_buf_init(&b, 0);
	assert_int_equal(nsr_res_error_format(&err, &b), NSR_OK);
	assert_string_equal(
		b.data, "res/7.0.1.2.3.4.0.0.0.0.0.0:3:5: expected a value");
	nsr_buf_release(&b);
}

static void test_parse_limits(void **state)
{
	struct nsr_buf t;
	struct nsr_res_list l;
	struct nsr_res_error err;

	NSR_UNUSED(state);
	nsr_buf_init(&t, 0);
	nsr_res_list_init(&l);
	assert_int_equal(nsr_buf_addstr(&t, "name: "), NSR_OK);
	for (int i = 0; i < NSR_RES_MAX_VALUE + 1; i++)
		assert_int_equal(nsr_buf_addch(&t, 'x'), NSR_OK);
	assert_int_equal(nsr_res_parse(t.data, t.len, &l, &err),
			 NSR_ERR_TOOBIG);
	assert_int_equal(err.col, 7);
	/* A NUL byte is an error, not an early end. */
	assert_int_equal(nsr_res_parse("name: a\0b\n", 10, &l, &err),
			 NSR_ERR_SYNTAX);
	assert_int_equal(l.n, 0);
	nsr_buf_release(&t);
}

static void test_print_layout(void **state)
{
	struct nsr_res *r;
	struct nsr_buf b;
	struct nsr_res_print_opts po;
	const char *show[] = { "name", "Parallelism" };

	NSR_UNUSED(state);
	r = parse_one("type: NSR client; name: web01; save set: All; "
		      "comment: ; parallelism: 4; resource identifier: 1.0.0."
		      "0.0.0.0.0.0.0.0.0");
	nsr_buf_init(&b, 0);
	assert_int_equal(nsr_res_print(r, NULL, &b), NSR_OK);
	assert_string_equal(b.data,
			    "                        type: NSR client;\n"
			    "                        name: web01;\n"
			    "                    save set: All;\n"
			    "                     comment: ;\n"
			    "                 parallelism: 4;\n"
			    "\n");
	nsr_buf_reset(&b);
	memset(&po, 0, sizeof(po));
	po.show = show;
	po.nshow = 2;
	assert_int_equal(nsr_res_print(r, &po, &b), NSR_OK);
	assert_string_equal(b.data,
			    "                        name: web01;\n"
			    "                 parallelism: 4;\n"
			    "\n");
	nsr_buf_reset(&b);
	po.nshow = 0;
	po.hidden = 1;
	assert_int_equal(nsr_res_print(r, &po, &b), NSR_OK);
	assert_non_null(strstr(b.data, "         resource identifier: "
				       "1.0.0.0.0.0.0.0.0.0.0.0;\n"));
	nsr_buf_release(&b);
	nsr_res_free(r);
}

/* roundtrip - print r, parse it back, compare attribute by attribute. */
static void roundtrip(const struct nsr_res *r)
{
	struct nsr_res_print_opts po;
	struct nsr_res_list l;
	struct nsr_res_error err;
	struct nsr_buf b;
	const struct nsr_res *c;

	memset(&po, 0, sizeof(po));
	po.hidden = 1;
	nsr_buf_init(&b, 0);
	nsr_res_list_init(&l);
	assert_int_equal(nsr_res_print(r, &po, &b), NSR_OK);
	if (nsr_res_parse(b.data, b.len, &l, &err) != NSR_OK)
		fail_msg("reparse %u:%u %s:\n%s", err.line, err.col, err.msg,
			 b.data);
	assert_int_equal(l.n, 1);
	c = l.items[0];
	assert_int_equal(nsr_res_nattrs(c), nsr_res_nattrs(r));
	for (size_t i = 0; i < nsr_res_nattrs(r); i++) {
		assert_string_equal(nsr_res_attr_name(c, i),
				    nsr_res_attr_name(r, i));
		assert_int_equal(nsr_res_attr_nvalues(c, i),
				 nsr_res_attr_nvalues(r, i));
		for (size_t j = 0; j < nsr_res_attr_nvalues(r, i); j++)
			assert_string_equal(nsr_res_attr_value(c, i, j),
					    nsr_res_attr_value(r, i, j));
	}
	nsr_res_list_release(&l);
	nsr_buf_release(&b);
}

static void test_print_roundtrip(void **state)
{
	const char *odd[] = { "", " lead", "trail ", "a,b", "a;b", "#x",
			      "\"q", "in\"side", "back\\slash", "new\nline",
			      "tab\there", "cr\r", "plain words" };
	char many[64];
	struct nsr_res *r;

	NSR_UNUSED(state);
	r = nsr_res_new();
	assert_non_null(r);
	assert_int_equal(nsr_res_set1(r, "type", "NSR client"), NSR_OK);
	assert_int_equal(nsr_res_set(r, "odd values", odd,
				     NSR_ARRAY_SIZE(odd)), NSR_OK);
	assert_int_equal(nsr_res_set(r, "empty", NULL, 0), NSR_OK);
	for (int i = 0; i < 40; i++) {
		const char *v = many;

		snprintf(many, sizeof(many), "/filesystem/number/%d", i);
		assert_int_equal(nsr_res_append(r, "save set", &v, 1), NSR_OK);
	}
	assert_int_equal(nsr_res_set1(r, "an attribute name longer than the "
				      "column", "x"), NSR_OK);
	roundtrip(r);
	nsr_res_free(r);
}

static void test_wrap(void **state)
{
	struct nsr_res *r;
	struct nsr_buf b;
	char *nl;

	NSR_UNUSED(state);
	r = parse_one("save set: /aaaaaaaaaaaaaaaa, /bbbbbbbbbbbbbbbb, "
		      "/cccccccccccccccc, /dddddddddddddddd");
	nsr_buf_init(&b, 0);
	assert_int_equal(nsr_res_print(r, NULL, &b), NSR_OK);
	assert_string_equal(b.data,
			    "                    save set: /aaaaaaaaaaaaaaaa, "
			    "/bbbbbbbbbbbbbbbb,\n"
			    "                              /cccccccccccccccc, "
			    "/dddddddddddddddd;\n\n");
	for (char *p = b.data; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		assert_non_null(nl);
		assert_true(nl - p <= 79);
	}
	nsr_buf_release(&b);
	nsr_res_free(r);
}

static void test_edit(void **state)
{
	const char *two[] = { "a", "b" };
	const char *bc[] = { "b", "c" };
	struct nsr_res *r, *u, *c;

	NSR_UNUSED(state);
	r = parse_one("type: NSR pool; name: Default; devices: a");
	assert_int_equal(nsr_res_set(r, "Devices", two, 2), NSR_OK);
	assert_int_equal(nsr_res_attr_nvalues(r, 2), 2);
	assert_string_equal(nsr_res_attr_name(r, 2), "devices");
	assert_int_equal(nsr_res_append(r, "devices", bc, 2), NSR_OK);
	assert_int_equal(nsr_res_attr_nvalues(r, 2), 3);
	assert_string_equal(nsr_res_attr_value(r, 2, 2), "c");
	assert_int_equal(nsr_res_set1(r, "bad:name", "x"), NSR_ERR_INVAL);
	assert_int_equal(nsr_res_set1(r, " lead", "x"), NSR_ERR_INVAL);
	assert_int_equal(nsr_res_unset(r, "nope"), NSR_ERR_NOTFOUND);
	assert_int_equal(nsr_res_unset(r, "NAME"), NSR_OK);
	assert_int_equal(nsr_res_find(r, "name"), -1);
	assert_int_equal(nsr_res_find(r, "devices"), 1);

	u = parse_one("comment: new; devices: d");
	c = nsr_res_dup(r);
	assert_int_equal(nsr_res_merge(c, u, 0), NSR_OK);
	assert_int_equal(nsr_res_attr_nvalues(c, 1), 1);
	assert_string_equal(nsr_res_get(c, "comment"), "new");
	nsr_res_free(c);
	c = nsr_res_dup(r);
	assert_int_equal(nsr_res_merge(c, u, 1), NSR_OK);
	assert_int_equal(nsr_res_attr_nvalues(c, 1), 4);
	nsr_res_free(c);
	/* The original was not touched by the copies. */
	assert_int_equal(nsr_res_attr_nvalues(r, 1), 3);
	nsr_res_free(u);
	nsr_res_free(r);
}

static void test_match(void **state)
{
	struct nsr_res *r, *q;

	NSR_UNUSED(state);
	r = parse_one("type: NSR client; name: web01; group: Default, Daily");
	q = parse_one("type: nsr CLIENT; name: web01");
	assert_true(nsr_res_match(r, q));
	nsr_res_free(q);
	q = parse_one("type: NSR client; name: WEB01");
	assert_false(nsr_res_match(r, q));
	nsr_res_free(q);
	q = parse_one("group: Daily");
	assert_true(nsr_res_match(r, q));
	nsr_res_free(q);
	q = parse_one("group: Daily, Weekly");
	assert_false(nsr_res_match(r, q));
	nsr_res_free(q);
	q = parse_one("Group");
	assert_true(nsr_res_match(r, q));
	nsr_res_free(q);
	q = parse_one("pool");
	assert_false(nsr_res_match(r, q));
	nsr_res_free(q);
	q = parse_one("");
	assert_true(nsr_res_match(r, q));
	nsr_res_free(q);
	assert_true(nsr_res_match(r, NULL));
	assert_true(nsr_res_name_eq(" save\t set ", "Save Set"));
	assert_false(nsr_res_name_eq("saveset", "save set"));
	assert_false(nsr_res_name_eq("save set x", "save set"));
	nsr_res_free(r);
}

static void test_schema(void **state)
{
	const struct nsr_res_schema *s = nsr_res_schema_std();
	struct nsr_res *r;
	struct nsr_buf why;

	NSR_UNUSED(state);
	nsr_buf_init(&why, 0);
	assert_non_null(nsr_res_schema_type(s, "nsr device"));
	assert_null(nsr_res_schema_type(s, "NSR toaster"));

	r = parse_one("type: NSR client; name: web01");
	assert_int_equal(nsr_res_fill_defaults(r, s), NSR_OK);
	assert_string_equal(nsr_res_get(r, "save set"), "All");
	assert_string_equal(nsr_res_get(r, "parallelism"), "4");
	assert_string_equal(nsr_res_get(r, "browse policy"), "Month");
	assert_string_equal(nsr_res_get(r, "retention policy"), "Year");
	assert_int_equal(nsr_res_check(r, s, &why), NSR_OK);
	assert_int_equal(nsr_res_set1(r, "parallelism", "0"), NSR_OK);
	assert_int_equal(nsr_res_check(r, s, &why), NSR_ERR_INVAL);
	assert_non_null(strstr(why.data, "parallelism"));
	nsr_res_free(r);

	r = parse_one("type: NSR; name: bksrv");
	assert_int_equal(nsr_res_fill_defaults(r, s), NSR_OK);
	assert_string_equal(nsr_res_get(r, "parallelism"), "32");
	assert_string_equal(nsr_res_get(r, "jobsdb retention in hours"), "72");
	assert_string_equal(nsr_res_get(r, "manual saves"), "Enabled");
	nsr_res_free(r);

	r = parse_one("type: NSR group; name: Nightly");
	assert_int_equal(nsr_res_fill_defaults(r, s), NSR_OK);
	assert_string_equal(nsr_res_get(r, "autostart"), "Disabled");
	assert_string_equal(nsr_res_get(r, "start time"), "3:33");
	nsr_res_free(r);

	nsr_buf_reset(&why);
	r = parse_one("type: NSR device; name: /aftd1; media type: floppy");
	assert_int_equal(nsr_res_check(r, s, &why), NSR_ERR_INVAL);
	assert_non_null(strstr(why.data, "adv_file|vtape|tape"));
	nsr_res_free(r);

	nsr_buf_reset(&why);
	r = parse_one("type: NSR device; name: /aftd1; media type: tape; "
		      "target sessions: 40; max sessions: 32");
	assert_int_equal(nsr_res_check(r, s, &why), NSR_ERR_INVAL);
	assert_non_null(strstr(why.data, "'target sessions' (40) may not "
				       "exceed 'max sessions' (32)"));
	assert_int_equal(nsr_res_set1(r, "max sessions", "40"), NSR_OK);
	assert_int_equal(nsr_res_check(r, s, &why), NSR_OK);
	/* sizes: the segment size (0 allowed), the capacity (>= 1 MB) */
	assert_int_equal(nsr_res_set1(r, "segment size", "0"), NSR_OK);
	assert_int_equal(nsr_res_set1(r, "volume default capacity", "1 MB"),
			 NSR_OK);
	assert_int_equal(nsr_res_check(r, s, &why), NSR_OK);
	assert_int_equal(nsr_res_set1(r, "volume default capacity",
				      "1048575"),
			 NSR_OK);
	assert_int_equal(nsr_res_check(r, s, &why), NSR_ERR_INVAL);
	assert_non_null(strstr(why.data, "not a size of 1 MB or more"));
	assert_int_equal(nsr_res_set1(r, "volume default capacity", ""),
			 NSR_OK);
	assert_int_equal(nsr_res_set1(r, "segment size", "4000 MBs"), NSR_OK);
	nsr_buf_reset(&why);
	assert_int_equal(nsr_res_check(r, s, &why), NSR_ERR_INVAL);
	assert_non_null(strstr(why.data, "segment size '4000 MBs' is not a "
				       "size"));
	nsr_res_free(r);

	nsr_buf_reset(&why);
	r = parse_one("type: NSR device; name: /aftd1");
	assert_int_equal(nsr_res_check(r, s, &why), NSR_ERR_INVAL);
	assert_non_null(strstr(why.data, "'media type' is required"));
	nsr_res_free(r);

	nsr_buf_reset(&why);
	r = parse_one("type: NSR pool; name: a, b");
	assert_int_equal(nsr_res_check(r, s, &why), NSR_ERR_INVAL);
	assert_non_null(strstr(why.data, "takes one value"));
	nsr_res_free(r);

	nsr_buf_reset(&why);
	r = parse_one("type: NSR pool; name: a; colour: blue");
	assert_int_equal(nsr_res_check(r, s, &why), NSR_ERR_INVAL);
	assert_non_null(strstr(why.data, "no such attribute 'colour'"));
	nsr_res_free(r);

	nsr_buf_reset(&why);
	r = parse_one("name: a");
	assert_int_equal(nsr_res_check(r, s, &why), NSR_ERR_INVAL);
	assert_int_equal(nsr_res_fill_defaults(r, s), NSR_ERR_INVAL);
	nsr_res_free(r);
	nsr_buf_release(&why);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_file),
		cmocka_unit_test(test_parse_values),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_limits),
		cmocka_unit_test(test_print_layout),
		cmocka_unit_test(test_print_roundtrip),
		cmocka_unit_test(test_wrap),
		cmocka_unit_test(test_edit),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_schema),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
