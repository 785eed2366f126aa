/*
 * jobd_testclnt - test helper for the jobs system tests (not installed).
 * Drives nsrjobd through the client library the way nsrd, save and
 * recover will, and reads a jobs db file directly through the library so
 * a test can compare what jobquery printed over RPC with the local truth.
 *
 *   jobd_testclnt create key=value...     print the new job id
 *   jobd_testclnt update ID key=value...
 *   jobd_testclnt log ID text
 *   jobd_testclnt purge [hours]           print "jobs N logs N batches N"
 *   jobd_testclnt query TEXT              raw query text; print job ids
 *   jobd_testclnt fill-db PATH N [key=value...]   N jobs straight into a db
 *   jobd_testclnt print-db PATH           stdin: jobquery lines; prints
 *                                         what the library prints
 *   jobd_testclnt check-db PATH           integrity check; print job count
 *   jobd_testclnt count-db PATH           print the job count only
 *   jobd_testclnt codec                   self-test of the job_row.log
 *                                         codec (round trip, garbage)
 *
 * Keys: type, parent, client, name, level, group, action, host, pid,
 * state, status, start, end, bytes, files, ssids, command, log (repeat to
 * add log lines).  A time < 0 means that many seconds before now.
 */
#include "nsr/compat.h"

#include <time.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/jobd_clnt.h"
#include "nsr/jobdb.h"

#define MAX_LOGS 16

struct spec {
	struct nsr_jobdb_job job;
	unsigned fields;
	const char *log[MAX_LOGS];
	int nlog;
};

/* die - print and exit 1. */
static void die(const char *fmt, ...) NSR_PRINTF(1, 2) NSR_NORETURN;

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("jobd_testclnt: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* num - a number; times < 0 count back from now. */
static int64_t num(const char *v, int is_time)
{
	char *end;
	long long n = strtoll(v, &end, 10);

	if (!*v || *end)
		die("bad number '%s'", v);
	if (is_time && n < 0)
		n += (long long)time(NULL);
	return n;
}

/* set_key - apply one key=value to s. */
static void set_key(struct spec *s, const char *kv)
{
	const char *eq = strchr(kv, '=');
	const char *v;
	size_t k;
	struct nsr_jobdb_job *j = &s->job;

	if (!eq)
		die("expected key=value, got '%s'", kv);
	v = eq + 1;
	k = (size_t)(eq - kv);
#define KEY(name) (k == strlen(name) && strncmp(kv, name, k) == 0)
	if (KEY("type")) {
		j->type = nsr_jobdb_type_parse(v);
		if (!j->type)
			j->type = (enum nsr_jobdb_type)num(v, 0);
		s->fields |= NSR_JOBDB_F_TYPE;
	} else if (KEY("state")) {
		j->state = nsr_jobdb_state_parse(v);
		if (!j->state)
			j->state = (enum nsr_jobdb_state)num(v, 0);
		s->fields |= NSR_JOBDB_F_STATE;
	} else if (KEY("parent")) {
		j->parent_id = num(v, 0);
		s->fields |= NSR_JOBDB_F_PARENT;
	} else if (KEY("client")) {
		j->client = v;
		s->fields |= NSR_JOBDB_F_CLIENT;
	} else if (KEY("name")) {
		j->name = v;
		s->fields |= NSR_JOBDB_F_NAME;
	} else if (KEY("level")) {
		j->level = v;
		s->fields |= NSR_JOBDB_F_LEVEL;
	} else if (KEY("group")) {
		j->group = v;
		s->fields |= NSR_JOBDB_F_GROUP;
	} else if (KEY("action")) {
		j->action = v;
		s->fields |= NSR_JOBDB_F_ACTION;
	} else if (KEY("host")) {
		j->host = v;
		s->fields |= NSR_JOBDB_F_HOST;
	} else if (KEY("pid")) {
		j->pid = num(v, 0);
		s->fields |= NSR_JOBDB_F_PID;
	} else if (KEY("status")) {
		j->status = v;
		s->fields |= NSR_JOBDB_F_STATUS;
	} else if (KEY("start")) {
		j->start_time = num(v, 1);
		s->fields |= NSR_JOBDB_F_START;
	} else if (KEY("end")) {
		j->end_time = num(v, 1);
		s->fields |= NSR_JOBDB_F_END;
	} else if (KEY("bytes")) {
		j->bytes = num(v, 0);
		s->fields |= NSR_JOBDB_F_BYTES;
	} else if (KEY("files")) {
		j->files = num(v, 0);
		s->fields |= NSR_JOBDB_F_FILES;
	} else if (KEY("ssids")) {
		j->ssids = v;
		s->fields |= NSR_JOBDB_F_SSIDS;
	} else if (KEY("command")) {
		j->command = v;
		s->fields |= NSR_JOBDB_F_COMMAND;
	} else if (KEY("log")) {
		if (s->nlog == MAX_LOGS)
			die("too many log lines");
		s->log[s->nlog++] = v;
	} else {
		die("unknown key in '%s'", kv);
	}
#undef KEY
}

/* parse_spec - keys from argv[from..]. */
static void parse_spec(struct spec *s, int argc, char **argv, int from)
{
	memset(s, 0, sizeof(*s));
	for (int i = from; i < argc; i++)
		set_key(s, argv[i]);
}

/* open_server - connect to nsrjobd through the locator. */
static struct nsr_jobd *open_server(struct nsr_buf *err)
{
	struct nsr_jobd *j = NULL;

	if (nsr_jobd_open(NULL, &j, err))
		die("%s", err->data);
	return j;
}

/* cmd_query - raw query text to the server; print job ids, one a line. */
static int cmd_query(struct nsr_jobd *j, const char *text,
		     struct nsr_buf *err)
{
	const struct nsr_jobdb_job *job;
	int rc = nsr_jobd_query_open_text(j, text, 0, err);

	while (!rc) {
		rc = nsr_jobd_query_next(j, &job, err);
		if (!rc)
			printf("%" PRId64 "\n", job->id);
	}
	return rc == NSR_ERR_EOF ? NSR_OK : rc;
}

/* cmd_rpc - create, update, log, purge over RPC. */
static int cmd_rpc(int argc, char **argv)
{
	struct nsr_buf err;
	struct nsr_jobd *j;
	struct spec s;
	int64_t id = 0;
	int rc = NSR_OK;

	nsr_buf_init(&err, 0);
	j = open_server(&err);
	if (strcmp(argv[1], "create") == 0) {
		parse_spec(&s, argc, argv, 2);
		rc = nsr_jobd_create(j, &s.job, &id, &err);
		for (int i = 0; !rc && i < s.nlog; i++)
			rc = nsr_jobd_log(j, id, s.log[i], &err);
		if (!rc)
			printf("%" PRId64 "\n", id);
	} else if (strcmp(argv[1], "update") == 0 && argc >= 3) {
		id = num(argv[2], 0);
		parse_spec(&s, argc, argv, 3);
		rc = nsr_jobd_update(j, id, s.fields, &s.job, &err);
		for (int i = 0; !rc && i < s.nlog; i++)
			rc = nsr_jobd_log(j, id, s.log[i], &err);
	} else if (strcmp(argv[1], "log") == 0 && argc == 4) {
		rc = nsr_jobd_log(j, num(argv[2], 0), argv[3], &err);
	} else if (strcmp(argv[1], "purge") == 0 && argc <= 3) {
		struct nsr_jobdb_purge_stats st;

		rc = nsr_jobd_purge(j,
				    argc == 3 ? (unsigned)num(argv[2], 0) : 0,
				    &st, &err);
		if (!rc)
			printf("jobs %" PRIu64 " logs %" PRIu64 " batches %"
			       PRIu64 "\n", st.jobs, st.logs, st.batches);
	} else if (strcmp(argv[1], "query") == 0 && argc == 3) {
		rc = cmd_query(j, argv[2], &err);
	} else {
		die("bad command or arguments (see the source)");
	}
	nsr_jobd_close(j);
	if (rc)
		fprintf(stderr, "jobd_testclnt: %s (%s)\n", err.data,
			nsr_strerror(rc));
	nsr_buf_release(&err);
	return rc ? 1 : 0;
}

/* cmd_fill - N jobs straight into a db file (nsrjobd not running). */
static int cmd_fill(int argc, char **argv)
{
	struct nsr_jobdb *db = NULL;
	struct spec s;
	long long n = num(argv[3], 0);
	int rc;

	parse_spec(&s, argc, argv, 4);
	if (!s.job.type)
		s.job.type = NSR_JOBDB_TYPE_SAVE;
	rc = nsr_jobdb_open(argv[2], NULL, &db);
	for (long long i = 0; !rc && i < n; i++) {
		int64_t id;

		rc = nsr_jobdb_create(db, &s.job, &id);
		for (int k = 0; !rc && k < s.nlog; k++)
			rc = nsr_jobdb_log_append(db, id, s.job.start_time,
						  s.log[k]);
	}
	nsr_jobdb_close(db);
	if (rc)
		die("fill %s: %s", argv[2], nsr_strerror(rc));
	return 0;
}

/* cmd_print - run jobquery lines from stdin on a db file locally. */
static int cmd_print(const char *path)
{
	struct nsr_jobdb *db = NULL;
	struct nsr_jobdb_query *q = NULL;
	struct nsr_jobdb_cursor *c = NULL;
	struct nsr_buf out;
	char *line = NULL;
	size_t cap = 0;
	int rc;

	nsr_buf_init(&out, 0);
	rc = nsr_jobdb_open(path, NULL, &db);
	if (!rc)
		rc = nsr_jobdb_query_new(&q);
	while (!rc && getline(&line, &cap, stdin) >= 0) {
		enum nsr_jobdb_cmd cmd;
		const struct nsr_jobdb_job *job;

		rc = nsr_jobdb_query_parse(q, line, strlen(line), &cmd, NULL);
		if (rc || cmd != NSR_JOBDB_CMD_PRINT)
			continue;
		rc = nsr_jobdb_cursor_open(db, q, &c);
		while (!rc) {
			rc = nsr_jobdb_cursor_next(c, &job);
			if (rc)
				break;
			nsr_buf_reset(&out);
			rc = nsr_jobdb_cursor_print(c, NSR_JOBDB_FMT_NSRADMIN,
						    &out);
			fwrite(out.data, 1, out.len, stdout);
		}
		if (rc == NSR_ERR_EOF)
			rc = NSR_OK;
		nsr_jobdb_cursor_close(c);
		c = NULL;
	}
	free(line);
	nsr_buf_release(&out);
	nsr_jobdb_query_free(q);
	nsr_jobdb_close(db);
	if (rc)
		die("print %s: %s", path, nsr_strerror(rc));
	return 0;
}

/* cmd_check - job count of a db file, after an integrity check if full. */
static int cmd_check(const char *path, int full)
{
	struct nsr_jobdb *db = NULL;
	uint64_t n = 0;
	int rc = nsr_jobdb_open(path, NULL, &db);

	if (!rc && full)
		rc = nsr_jobdb_check(db);
	if (!rc)
		rc = nsr_jobdb_count(db, &n);
	nsr_jobdb_close(db);
	if (rc)
		die("check %s: %s", path, nsr_strerror(rc));
	printf("%" PRIu64 "\n", n);
	return 0;
}

/* Collects decoded log lines for cmd_codec. */
struct collect {
	struct nsr_buf out;
	int64_t lines;
};

/* collect_line - re-encode a decoded line (so a round trip compares). */
static int collect_line(void *arg, int64_t seq, int64_t time,
			const char *line)
{
	struct collect *c = arg;

	c->lines++;
	return nsr_jobd_log_encode(&c->out, seq, time, line);
}

/* decode - decode text, re-encoding into c; returns the decoder's rc. */
static int decode(const char *text, struct collect *c)
{
	nsr_buf_reset(&c->out);
	c->lines = 0;
	return nsr_jobd_log_decode(text, collect_line, c);
}

/* cmd_codec - the job_row.log codec: round trips, malformed input, and
 * deterministic bit flips and truncations (hostile input from the
 * network must give NSR_OK or NSR_ERR_CORRUPT, never a crash). */
static int cmd_codec(void)
{
	static const char *const lines[] = {
		"", "plain", "back\\slash", "new\nline\n", "\\n",
		"utf-8: \xc3\xa9t\xc3\xa9", "tab\there", " lead and trail ",
	};
	static const char *const bad[] = {
		"1 2 x", "x 2 y\n", "1 y z\n", "1 2 bad\\q\n", "1 2 end\\\n",
		"1\n", "1 2\n", "\n", "99999999999999999999 1 x\n",
	};
	struct collect c;
	struct nsr_buf enc;
	unsigned long cases = 0, corrupt = 0;
	int rc;

	nsr_buf_init(&c.out, 0);
	nsr_buf_init(&enc, 0);
	for (size_t i = 0; i < NSR_ARRAY_SIZE(lines); i++)
		if (nsr_jobd_log_encode(&enc, (int64_t)i + 1,
					1700000000 + (int64_t)i, lines[i]))
			die("encode failed");
	rc = decode(enc.data, &c);
	if (rc || c.lines != (int64_t)NSR_ARRAY_SIZE(lines) ||
	    strcmp(c.out.data, enc.data) != 0)
		die("round trip failed: %s", nsr_strerror(rc));
	cases++;
	for (size_t i = 0; i < NSR_ARRAY_SIZE(bad); i++, cases++)
		if (decode(bad[i], &c) != NSR_ERR_CORRUPT)
			die("malformed log %zu was accepted", i);
	/* Every single-bit flip and every truncation of the valid text. */
	for (size_t at = 0; at < enc.len; at++) {
		for (int bit = 0; bit < 8; bit++) {
			char *m = strdup(enc.data);

			if (!m)
				die("out of memory");
			m[at] = (char)(m[at] ^ (1 << bit));
			rc = decode(m, &c);
			if (rc != NSR_OK && rc != NSR_ERR_CORRUPT)
				die("flip %zu/%d: %s", at, bit,
				    nsr_strerror(rc));
			corrupt += rc != NSR_OK;
			cases++;
			free(m);
		}
		{
			char *m = strndup(enc.data, at);

			if (!m)
				die("out of memory");
			rc = decode(m, &c);
			/* A cut inside a line loses its newline: corrupt. */
			if (rc != (at == 0 || enc.data[at - 1] == '\n'
					   ? NSR_OK : NSR_ERR_CORRUPT))
				die("truncation at %zu: %s", at,
				    nsr_strerror(rc));
			cases++;
			free(m);
		}
	}
	printf("codec ok: %lu cases, %lu mutations rejected\n", cases,
	       corrupt);
	nsr_buf_release(&c.out);
	nsr_buf_release(&enc);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		die("usage: jobd_testclnt command args (see the source)");
	if (strcmp(argv[1], "codec") == 0 && argc == 2)
		return cmd_codec();
	if (strcmp(argv[1], "fill-db") == 0 && argc >= 4)
		return cmd_fill(argc, argv);
	if (strcmp(argv[1], "print-db") == 0 && argc == 3)
		return cmd_print(argv[2]);
	if (strcmp(argv[1], "check-db") == 0 && argc == 3)
		return cmd_check(argv[2], 1);
	if (strcmp(argv[1], "count-db") == 0 && argc == 3)
		return cmd_check(argv[2], 0);
	return cmd_rpc(argc, argv);
}
