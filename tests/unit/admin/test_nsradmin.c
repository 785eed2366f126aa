/*
 * test_nsradmin.c - the nsradmin interpreter driven by scripts against an
 * in-memory backend (and once against a real resource database), with the
 * output compared to what an administrator should see.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/nsradmin.h"
#include "nsr/res.h"
#include "nsr/resdb.h"
#include "nsr_test.h"

/* The in-memory backend: a list and an id counter. */
struct mem {
	struct nsr_res_list l;
	int next;
	int fail_update;	/* make update fail with this code */
};

/* mem_list - copies of matching resources. */
static int mem_list(void *ctx, const struct nsr_res *q,
		    struct nsr_res_list *out, struct nsr_buf *why)
{
	struct mem *m = ctx;

	NSR_UNUSED(why);
	for (size_t i = 0; i < m->l.n; i++)
		if (nsr_res_match(m->l.items[i], q))
			assert_int_equal(nsr_res_list_take(out,
					 nsr_res_dup(m->l.items[i])), NSR_OK);
	return NSR_OK;
}

/* Every id mem_create hands out: a counter, then this suffix. */
#define MEM_ID_SUFFIX ".0.0.0.0.0.0.0.0.0.0.0"

/* mem_create - store a copy with defaults and an id. */
static int mem_create(void *ctx, const struct nsr_res *r, char **id,
		      struct nsr_buf *why)
{
	struct mem *m = ctx;
	struct nsr_res *c = nsr_res_dup(r);
	/* Room for any int, the suffix and its NUL. */
	char buf[sizeof("-2147483648") - 1 + sizeof(MEM_ID_SUFFIX)];
	int n, rc = nsr_res_fill_defaults(c, nsr_res_schema_std());

	if (rc == NSR_OK)
		rc = nsr_res_check(c, nsr_res_schema_std(), why);
	if (rc != NSR_OK) {
		nsr_res_free(c);
		return rc;
	}
	n = snprintf(buf, sizeof(buf), "%d" MEM_ID_SUFFIX, ++m->next);
	assert_true(n > 0 && (size_t)n < sizeof(buf));
	assert_int_equal(nsr_res_set1(c, NSR_RES_ID_ATTR, buf), NSR_OK);
	assert_int_equal(nsr_res_list_take(&m->l, c), NSR_OK);
	*id = strdup(buf);
	return NSR_OK;
}

/* mem_index - position of id, or -1. */
static long mem_index(struct mem *m, const char *id)
{
	for (size_t i = 0; i < m->l.n; i++)
		if (strcmp(nsr_res_id(m->l.items[i]), id) == 0)
			return (long)i;
	return -1;
}

/* mem_update - replace a resource. */
static int mem_update(void *ctx, const char *id, const struct nsr_res *r,
		      struct nsr_buf *why)
{
	struct mem *m = ctx;
	long i = mem_index(m, id);
	int rc;

	if (m->fail_update) {
		nsr_buf_addstr(why, "the server said no");
		return m->fail_update;
	}
	if (i < 0)
		return NSR_ERR_NOTFOUND;
	rc = nsr_res_check(r, nsr_res_schema_std(), why);
	if (rc != NSR_OK)
		return rc;
	nsr_res_free(m->l.items[i]);
	m->l.items[i] = nsr_res_dup(r);
	return NSR_OK;
}

/* mem_remove - drop a resource. */
static int mem_remove(void *ctx, const char *id, struct nsr_buf *why)
{
	struct mem *m = ctx;
	long i = mem_index(m, id);

	NSR_UNUSED(why);
	if (i < 0)
		return NSR_ERR_NOTFOUND;
	nsr_res_free(m->l.items[i]);
	memmove(&m->l.items[i], &m->l.items[i + 1],
		(m->l.n - (size_t)i - 1) * sizeof(m->l.items[0]));
	m->l.n--;
	return NSR_OK;
}

/* mem_schema - the standard schema. */
static const struct nsr_res_schema *mem_schema(void *ctx)
{
	NSR_UNUSED(ctx);
	return nsr_res_schema_std();
}

static const struct nsradmin_ops mem_ops = {
	mem_list, mem_create, mem_update, mem_remove, mem_schema,
};

/* What the interpreter printed and was asked. */
struct io {
	struct nsr_buf all;	/* both streams, in order */
	struct nsr_buf err;	/* the error stream alone */
	const char *answers;	/* 'y'/'n' per confirmation */
	int asked;
};

/* io_write - capture output. */
static void io_write(void *arg, enum nsradmin_stream s, const char *text,
		     size_t len)
{
	struct io *io = arg;

	assert_int_equal(nsr_buf_add(&io->all, text, len), NSR_OK);
	if (s == NSRADMIN_ERR)
		assert_int_equal(nsr_buf_add(&io->err, text, len), NSR_OK);
}

/* io_confirm - answer from the script, echoing the exchange. */
static int io_confirm(void *arg, const char *prompt)
{
	struct io *io = arg;
	char c = io->answers && io->answers[io->asked] ?
		 io->answers[io->asked] : 'n';

	io->asked++;
	assert_int_equal(nsr_buf_addf(&io->all, "%s %c\n", prompt, c), NSR_OK);
	return c == 'y';
}

/* run - feed a script line by line; returns the last result. */
static int run(struct nsradmin *a, const char *script)
{
	char *copy = strdup(script), *line = copy, *nl;
	int rc = NSR_OK;

	assert_non_null(copy);
	for (; *line; line = nl + 1) {
		nl = strchr(line, '\n');
		assert_non_null(nl);
		*nl = '\0';
		rc = nsradmin_feed(a, line);
		if (rc == NSRADMIN_QUIT)
			break;
	}
	free(copy);
	return rc;
}

/* setup - an interpreter over m with io capture. */
static struct nsradmin *setup(struct mem *m, struct io *io, int ask,
			      const struct nsradmin_ops *ops, void *ctx)
{
	struct nsradmin_opts o;
	struct nsradmin *a = NULL;

	memset(io, 0, sizeof(*io));
	nsr_buf_init(&io->all, 0);
	nsr_buf_init(&io->err, 0);
	if (m)
		memset(m, 0, sizeof(*m));
	memset(&o, 0, sizeof(o));
	o.ops = ops ? ops : &mem_ops;
	o.ctx = ctx ? ctx : m;
	o.write = io_write;
	o.confirm = ask ? io_confirm : NULL;
	o.arg = io;
	assert_int_equal(nsradmin_new(&o, &a), NSR_OK);
	return a;
}

/* teardown - free everything setup made. */
static void teardown(struct nsradmin *a, struct mem *m, struct io *io)
{
	nsradmin_free(a);
	if (m)
		nsr_res_list_release(&m->l);
	nsr_buf_release(&io->all);
	nsr_buf_release(&io->err);
}

static void test_session(void **state)
{
	struct mem m;
	struct io io;
	struct nsradmin *a = setup(&m, &io, 1, NULL, NULL);

	NSR_UNUSED(state);
	io.answers = "yyy";
	assert_int_equal(run(a,
		"create type: NSR client; name: web01\n"
		"cr type: NSR client;\n"
		"   name: db01; parallelism: 12\n"
		". type: NSR client; name: web01\n"
		"show name; save set; schedule; browse policy;\n"
		"     retention policy; parallelism\n"
		"p\n"
		"update parallelism: 8\n"
		"print\n"
		"quit\n"
		"print\n"), NSRADMIN_QUIT);
	assert_string_equal(io.all.data,
		"Create? y\n"
		"created resource id 1.0.0.0.0.0.0.0.0.0.0.0\n"
		"Create? y\n"
		"created resource id 2.0.0.0.0.0.0.0.0.0.0.0\n"
		"Current query set\n"
		"                        name: web01;\n"
		"                    save set: All;\n"
		"                    schedule: Default;\n"
		"               browse policy: Month;\n"
		"            retention policy: Year;\n"
		"                 parallelism: 4;\n"
		"\n"
		"                 parallelism: 8;\n"
		"Update? y\n"
		"updated resource id 1.0.0.0.0.0.0.0.0.0.0.0\n"
		"                        name: web01;\n"
		"                    save set: All;\n"
		"                    schedule: Default;\n"
		"               browse policy: Month;\n"
		"            retention policy: Year;\n"
		"                 parallelism: 8;\n"
		"\n");
	assert_int_equal(io.err.len, 0);
	assert_string_equal(nsr_res_get(m.l.items[1], "parallelism"), "12");
	teardown(a, &m, &io);
}

static void test_scripted_no_tty(void **state)
{
	struct mem m;
	struct io io;
	struct nsradmin *a = setup(&m, &io, 0, NULL, NULL);

	NSR_UNUSED(state);
	/* The field's printf | nsradmin -i - idiom, without prompts. */
	assert_int_equal(run(a,
		"create type: NSR client; name: web01\n"
		". type: NSR client; name: web01\n"
		"update scheduled backup: disabled\n"
		"append save set: /var, /etc\n"
		"show save set; scheduled backup\n"
		"print\n"), NSR_OK);
	assert_string_equal(io.all.data,
		"created resource id 1.0.0.0.0.0.0.0.0.0.0.0\n"
		"Current query set\n"
		"            scheduled backup: disabled;\n"
		"updated resource id 1.0.0.0.0.0.0.0.0.0.0.0\n"
		"                    save set: /var, /etc;\n"
		"updated resource id 1.0.0.0.0.0.0.0.0.0.0.0\n"
		"                    save set: All, /var, /etc;\n"
		"            scheduled backup: disabled;\n"
		"\n");
	teardown(a, &m, &io);
}

static void test_delete_and_none(void **state)
{
	struct mem m;
	struct io io;
	struct nsradmin *a = setup(&m, &io, 1, NULL, NULL);

	NSR_UNUSED(state);
	io.answers = "yyny";
	run(a, "create type: NSR pool; name: A\n"
	       "create type: NSR pool; name: B\n"
	       "show name\n");
	nsr_buf_reset(&io.all);
	assert_int_equal(run(a, "delete type: NSR pool\n"), NSR_OK);
	assert_string_equal(io.all.data,
		"                        name: A;\n"
		"\n"
		"Delete? n\n"
		"                        name: B;\n"
		"\n"
		"Delete? y\n"
		"deleted resource id 2.0.0.0.0.0.0.0.0.0.0.0\n");
	assert_int_equal(m.l.n, 1);
	nsr_buf_reset(&io.all);
	assert_int_equal(run(a, "print type: NSR pool; name: B\n"), NSR_OK);
	assert_string_equal(io.all.data,
		"No resources found for query:\n"
		"                        type: NSR pool;\n"
		"                        name: B;\n");
	assert_string_equal(io.err.data, io.all.data);
	/* A type that does not exist is an error, not "none found". */
	nsr_buf_reset(&io.all);
	nsr_buf_reset(&io.err);
	assert_int_equal(run(a, "print type: NSR bogus\n"), NSR_ERR_INVAL);
	assert_string_equal(io.err.data,
		"print: there is no resource type 'NSR bogus'; the \"types\" "
		"command lists them\n");
	assert_int_equal(run(a, ". type: NSR bogus; name: x\ndelete\n"),
			 NSR_ERR_INVAL);
	teardown(a, &m, &io);
}

static void test_errors(void **state)
{
	struct mem m;
	struct io io;
	struct nsradmin *a = setup(&m, &io, 0, NULL, NULL);

	NSR_UNUSED(state);
	assert_int_equal(nsradmin_feed(a, "u parallelism: 3"), NSR_ERR_SYNTAX);
	assert_int_equal(nsradmin_feed(a, "frobnicate"), NSR_ERR_SYNTAX);
	assert_int_equal(nsradmin_feed(a, "create type: NSR pool; name: a,,b"),
			 NSR_ERR_SYNTAX);
	assert_int_equal(nsradmin_feed(a, "create type: NSR pool;"),
			 NSRADMIN_MORE);
	assert_true(nsradmin_pending(a));
	assert_int_equal(nsradmin_feed(a, "  name: \"x"), NSR_ERR_SYNTAX);
	assert_false(nsradmin_pending(a));
	assert_int_equal(nsradmin_feed(a, "update parallelism: 3"),
			 NSR_ERR_INVAL);
	assert_int_equal(nsradmin_feed(a, "create type: NSR device; name: d"),
			 NSR_ERR_INVAL);
	assert_int_equal(nsradmin_feed(a, "delete"), NSR_ERR_INVAL);
	assert_int_equal(nsradmin_feed(a, "option regexp"), NSR_ERR_INVAL);
	assert_int_equal(nsradmin_feed(a, "visual"), NSR_ERR_UNSUPPORTED);
	assert_int_equal(nsradmin_feed(a, "create"), NSR_ERR_SYNTAX);
	assert_int_equal(nsradmin_feed(a, "p: x"), NSR_ERR_SYNTAX);
	assert_string_equal(io.err.data,
		"ambiguous command 'u': unset, update\n"
		"unknown command 'frobnicate' (type 'help' for a list)\n"
		"create: column 32: expected a value after ','\n"
		"create: line 2, column 9: unterminated quoted value\n"
		"update: no current query; select resources with '. query' "
		"first\n"
		"create failed: NSR device: attribute 'media type' is "
		"required\n"
		"delete: no current query; refusing to delete every "
		"resource\n"
		"option: unknown or unsupported option 'regexp' (Dynamic, "
		"Hidden, Resource ID)\n"
		"visual: not supported by this nsradmin\n"
		"create: expected an attribute list, e.g. create type: NSR "
		"client; name: web01\n"
		"unknown command 'p:' (type 'help' for a list)\n");
	assert_int_equal(m.l.n, 0);

	/* A backend failure names the resource and keeps going. */
	nsr_buf_reset(&io.err);
	run(a, "create type: NSR pool; name: a\n. type: NSR pool\n");
	m.fail_update = NSR_ERR_PERM;
	assert_int_equal(nsradmin_feed(a, "update comment: x"), NSR_ERR_PERM);
	assert_string_equal(io.err.data,
			    "update failed: the server said no\n");
	teardown(a, &m, &io);
}

static void test_options_types_query(void **state)
{
	struct mem m;
	struct io io;
	struct nsradmin *a = setup(&m, &io, 0, NULL, NULL);

	NSR_UNUSED(state);
	run(a, "create type: NSR device; name: /aftd1; media type: adv_file;"
	       " volume name: V1\n");
	nsr_buf_reset(&io.all);
	assert_int_equal(nsradmin_set_query(a, "type: NSR device"), NSR_OK);
	run(a, "show name; password; volume name; resource identifier\n"
	       "option\n"
	       "p\n"
	       "option Hidden Dynamic, Resource ID\n"
	       "option\n"
	       "p\n"
	       "unset hidden\n"
	       ".\n"
	       "types\n"
	       "?\n");
	{
		const char *want =
		"Display options:\n"
		"\tDynamic: Off;\n\tHidden: Off;\n\tResource ID: Off;\n"
		"                        name: /aftd1;\n"
		"\n"
		"Display options:\n"
		"\tDynamic: On;\n\tHidden: On;\n\tResource ID: On;\n"
		"                        name: /aftd1;\n"
		"                 volume name: V1;\n"
		"                    password: ;\n"
		"         resource identifier: 1.0.0.0.0.0.0.0.0.0.0.0;\n"
		"\n"
		"Current query:\n"
		"                        type: NSR device;\n"
		"\n"
		"Known types: NSR, NSR client, NSR device, NSR group, "
		"NSR label, NSR policy, NSR pool, NSR schedule, "
		"NSR storage node;\n"
		"Legal commands are:\n";

		if (strncmp(io.all.data, want, strlen(want)) != 0)
			fail_msg("unexpected output:\n%s", io.all.data);
	}
	assert_int_equal(io.err.len, 0);
	teardown(a, &m, &io);
}

static void test_resdb_backend(void **state)
{
	char *tmp = nsr_test_tmpdir("nsradmin");
	struct nsr_resdb *db = NULL;
	struct nsr_resdb_opts o;
	struct nsradmin *a;
	struct io io;
	struct nsr_res *q = NULL;

	NSR_UNUSED(state);
	memset(&o, 0, sizeof(o));
	assert_int_equal(nsr_resdb_open(tmp, &o, &db, NULL), NSR_OK);
	a = setup(NULL, &io, 0, nsradmin_resdb_ops(), db);
	run(a, "create type: NSR pool; name: Fast; label template: Fast\n"
	       "create type: NSR pool; name: fast\n"
	       ". type: NSR pool; name: Fast\n"
	       "update max parallelism: 4\n");
	assert_string_equal(io.err.data,
		"create failed: NSR pool: a resource with name 'fast' already "
		"exists\n");
	nsradmin_free(a);
	nsr_resdb_close(db);
	/* The change reached the disk. */
	assert_int_equal(nsr_resdb_open(tmp, &o, &db, NULL), NSR_OK);
	assert_int_equal(nsr_resdb_count(db), 1);
	assert_string_equal(nsr_res_get(nsr_resdb_at(db, 0), "max parallelism"),
			    "4");
	nsr_resdb_close(db);
	nsr_res_free(q);
	nsr_buf_release(&io.all);
	nsr_buf_release(&io.err);
	nsr_test_rmrf(tmp);
	free(tmp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_session),
		cmocka_unit_test(test_scripted_no_tty),
		cmocka_unit_test(test_delete_and_none),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_options_types_query),
		cmocka_unit_test(test_resdb_backend),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
