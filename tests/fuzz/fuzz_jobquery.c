/*
 * fuzz_jobquery.c - the jobquery language (src/jobdb/query.c, cursor.c).
 *
 * The input is split into lines and fed to one session, as jobquery -i
 * would.  Properties checked on every accepted line: the canonical form
 * (nsr_jobdb_query_describe) parses back to the same canonical form, and
 * the filter runs as SQL on a small in-memory jobs db and prints in both
 * formats without any error but end-of-rows.  A failure aborts.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/jobdb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* sample_db - an in-memory db with a few varied jobs, made once. */
static struct nsr_jobdb *sample_db(void)
{
	static struct nsr_jobdb *db;
	static const char *const names[] = {"/var", "a[1]*", "", "x;y\"z"};

	if (db)
		return db;
	if (nsr_jobdb_open(":memory:", NULL, &db))
		abort();
	for (int i = 0; i < 12; i++) {
		struct nsr_jobdb_job j = {0};
		int64_t id = 0;

		j.type = 1 + i % 7;
		j.state = 1 + i % 5;
		j.name = names[i % 4];
		j.client = i % 3 ? "web01" : NULL;
		j.start_time = 1000 + i;
		j.bytes = i * 1000;
		j.parent_id = i > 2 ? 1 : 0;
		if (nsr_jobdb_create(db, &j, &id) ||
		    nsr_jobdb_log_append(db, id, 5, names[(i + 1) % 4]))
			abort();
	}
	return db;
}

/* check_roundtrip - the canonical text of q parses to itself. */
static void check_roundtrip(const struct nsr_jobdb_query *q)
{
	struct nsr_jobdb_query *r = NULL;
	struct nsr_buf a, b;
	enum nsr_jobdb_cmd cmd;
	char *nl;

	nsr_buf_init(&a, 0);
	nsr_buf_init(&b, 0);
	if (nsr_jobdb_query_new(&r) || nsr_jobdb_query_describe(q, &a))
		abort();
	nl = strchr(a.data, '\n');
	if (!nl ||
	    nsr_jobdb_query_parse(r, a.data, (size_t)(nl - a.data), &cmd,
				  NULL) ||
	    nsr_jobdb_query_parse(r, nl + 1, strlen(nl + 1), &cmd, NULL) ||
	    nsr_jobdb_query_describe(r, &b) || strcmp(a.data, b.data) != 0)
		abort();
	nsr_jobdb_query_free(r);
	nsr_buf_release(&a);
	nsr_buf_release(&b);
}

/* run_query - stream q's rows and print them in both formats. */
static void run_query(const struct nsr_jobdb_query *q)
{
	struct nsr_jobdb_cursor *c = NULL;
	const struct nsr_jobdb_job *job;
	struct nsr_buf out;
	int rc;

	nsr_buf_init(&out, 0);
	if (nsr_jobdb_cursor_open(sample_db(), q, &c))
		abort();
	for (;;) {
		rc = nsr_jobdb_cursor_next(c, &job);
		if (rc != NSR_OK)
			break;
		if (nsr_jobdb_cursor_print(c, NSR_JOBDB_FMT_NSRADMIN, &out) ||
		    nsr_jobdb_cursor_print(c, NSR_JOBDB_FMT_JSON, &out))
			abort();
		nsr_buf_reset(&out);
	}
	if (rc != NSR_ERR_EOF)
		abort();
	nsr_jobdb_cursor_close(c);
	nsr_buf_release(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nsr_jobdb_query *q = NULL;
	const char *p = (const char *)data, *end = p + size;

	if (nsr_jobdb_query_new(&q))
		return 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		struct nsr_jobdb_syntax err;
		enum nsr_jobdb_cmd cmd;
		int rc = nsr_jobdb_query_parse(q, p, len, &cmd, &err);

		if (rc == NSR_OK) {
			check_roundtrip(q);
			if (cmd == NSR_JOBDB_CMD_PRINT)
				run_query(q);
		} else if ((rc != NSR_ERR_SYNTAX && rc != NSR_ERR_TOOBIG) ||
			   err.column < 1 || err.column > len + 1) {
			abort();
		}
		p += len + 1;
	}
	nsr_jobdb_query_free(q);
	return 0;
}
