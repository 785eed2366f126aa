/*
 * jobquery - ask nsrjobd about jobs, nsradmin style:
 *
 *   jobquery> . type: save job; job state: completed
 *   jobquery> show job id; name; job state
 *   jobquery> print
 *
 * Lines are parsed here first (the jobs db's own parser, so a mistake is
 * shown with a caret at once) and the query's canonical text is sent to
 * nsrjobd, which parses it again, runs it and streams the rows back in
 * batches.  Commands come from the terminal (with a prompt), from -i file
 * or from standard input.
 */
#include "nsr/compat.h"

#include <getopt.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/jobd_clnt.h"
#include "nsr/jobdb.h"

#define PROMPT "jobquery> "

/* Session state. */
struct session {
	struct nsr_jobd *j;
	struct nsr_jobdb_query *q;
	enum nsr_jobdb_format fmt;
	int interactive;
	const char *src; /* "stdin" or the -i file name */
	int errors;	 /* commands that failed */
};

/* usage - --help text. */
static void usage(FILE *f)
{
	fprintf(f,
		"usage: jobquery [-s server] [-i file] [-x json]\n"
		"  -s server  host running nsrjobd (default localhost)\n"
		"  -i file    read commands from file instead of stdin\n"
		"  -x json    print jobs as JSON lines, one object per job\n"
		"  -h, --help show this help\n"
		"commands: . [attr: value; ...]   set the query\n"
		"          show [attr; ...]       set the attributes shown\n"
		"          print [attr: value; ...]  list matching jobs\n"
		"          help, quit\n");
}

/* help - the interactive help text. */
static void help(void)
{
	puts("Commands:\n"
	     "  . attr: value; attr: value   set the query (terms ANDed,\n"
	     "                               values of one term ORed)\n"
	     "  .                            clear the query (all jobs)\n"
	     "  show attr; attr              choose attributes to print\n"
	     "  show                         print every attribute\n"
	     "  print [attr: value; ...]     list the jobs that match\n"
	     "  quit                         leave\n"
	     "Attributes: job id, parent job id, type, name, client, level,"
	     " group,\n"
	     "  action, host, pid, job state, completion status, start time,"
	     "\n"
	     "  end time, bytes, files, ssids, command, job log.\n"
	     "Example: . type: save job; job state: completed");
}

/* syntax_error - show where a line went wrong. */
static void syntax_error(struct session *s, int lineno, const char *line,
			 const struct nsr_jobdb_syntax *e)
{
	size_t col = e->column ? e->column : 1;

	fprintf(stderr, "%s\n%*s^\n", line, (int)(col - 1), "");
	if (s->interactive)
		fprintf(stderr, "jobquery: column %zu: %s\n", col, e->msg);
	else
		fprintf(stderr, "jobquery: %s line %d, column %zu: %s\n",
			s->src, lineno, col, e->msg);
}

/* run_print - run the session's query on nsrjobd and print the jobs. */
static int run_print(struct session *s)
{
	struct nsr_buf err, out, desc;
	const struct nsr_jobdb_job *job;
	unsigned long n = 0;
	int rc;

	nsr_buf_init(&err, 0);
	nsr_buf_init(&out, 0);
	nsr_buf_init(&desc, 0);
	rc = nsr_jobd_query_open(s->j, s->q, &err);
	while (!rc) {
		rc = nsr_jobd_query_next(s->j, &job, &err);
		if (rc)
			break;
		nsr_buf_reset(&out);
		rc = nsr_jobd_print(s->j, s->fmt, &out);
		if (rc) {
			nsr_buf_addf(&err, "cannot format job %" PRId64 ": %s",
				     job->id, nsr_strerror(rc));
			break;
		}
		fwrite(out.data, 1, out.len, stdout);
		n++;
	}
	if (rc == NSR_ERR_EOF) {
		rc = NSR_OK;
		if (n == 0 && s->fmt == NSR_JOBDB_FMT_NSRADMIN &&
		    nsr_jobdb_query_describe(s->q, &desc) == NSR_OK) {
			desc.data[strcspn(desc.data, "\n")] = '\0';
			printf("No jobs found for query:%s\n",
			       desc.data[1] ? desc.data + 1 : " (all jobs)");
		}
	}
	fflush(stdout);
	if (rc)
		fprintf(stderr, "jobquery: %s\n", err.data);
	nsr_buf_release(&err);
	nsr_buf_release(&out);
	nsr_buf_release(&desc);
	return rc;
}

/* is_word - line (trimmed) is exactly word, case-insensitively. */
static int is_word(const char *line, const char *word)
{
	size_t n = strlen(word);

	while (*line == ' ' || *line == '\t')
		line++;
	if (strncasecmp(line, word, n) != 0)
		return 0;
	line += n;
	while (*line == ' ' || *line == '\t')
		line++;
	return *line == '\0';
}

/* do_line - one command; 1 = quit, 0 = go on (errors are counted). */
static int do_line(struct session *s, int lineno, char *line)
{
	struct nsr_jobdb_syntax e;
	enum nsr_jobdb_cmd cmd;
	int rc;

	line[strcspn(line, "\r\n")] = '\0';
	if (is_word(line, "quit") || is_word(line, "q") ||
	    is_word(line, "exit"))
		return 1;
	if (is_word(line, "help") || is_word(line, "?")) {
		help();
		return 0;
	}
	rc = nsr_jobdb_query_parse(s->q, line, strlen(line), &cmd, &e);
	if (rc == NSR_ERR_SYNTAX || rc == NSR_ERR_TOOBIG) {
		syntax_error(s, lineno, line, &e);
		s->errors++;
		return 0;
	}
	if (rc) {
		fprintf(stderr, "jobquery: %s\n", nsr_strerror(rc));
		s->errors++;
		return 0;
	}
	if (cmd == NSR_JOBDB_CMD_PRINT && run_print(s) != NSR_OK)
		s->errors++;
	return 0;
}

/* run - read and run commands until EOF or quit. */
static void run(struct session *s, FILE *in)
{
	char *line = NULL;
	size_t cap = 0;
	int lineno = 0;

	for (;;) {
		if (s->interactive) {
			fputs(PROMPT, stdout);
			fflush(stdout);
		}
		if (getline(&line, &cap, in) < 0)
			break;
		if (do_line(s, ++lineno, line))
			break;
	}
	if (s->interactive && feof(in))
		putchar('\n');
	free(line);
}

/* main - parse options, run the query language, exit status. */
int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct session s;
	const char *server = NULL, *file = NULL;
	struct nsr_buf err;
	FILE *in = stdin;
	int c, rc = 1;

	memset(&s, 0, sizeof(s));
	s.src = "stdin";
	while ((c = getopt_long(argc, argv, "s:i:x:h", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			server = optarg;
			break;
		case 'i':
			file = optarg;
			break;
		case 'x':
			if (strcasecmp(optarg, "json") != 0) {
				fprintf(stderr, "jobquery: unknown output "
					"format '%s' (only json)\n", optarg);
				return 2;
			}
			s.fmt = NSR_JOBDB_FMT_JSON;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "jobquery: unexpected argument '%s'\n",
			argv[optind]);
		usage(stderr);
		return 2;
	}
	nsr_buf_init(&err, 0);
	if (file) {
		in = fopen(file, "r");
		if (!in) {
			fprintf(stderr, "jobquery: cannot open %s: %s\n", file,
				strerror(errno));
			goto out;
		}
		s.src = file;
	}
	s.interactive = !file && isatty(0);
	if (nsr_jobdb_query_new(&s.q) != NSR_OK) {
		fprintf(stderr, "jobquery: out of memory\n");
		goto out;
	}
	if (nsr_jobd_open(server, &s.j, &err) != NSR_OK) {
		/* The client library's words name nsrjobd and the host. */
		fprintf(stderr, "jobquery: %s\n", err.data);
		goto out;
	}
	run(&s, in);
	rc = s.errors ? 1 : 0;
out:
	if (in && in != stdin)
		fclose(in);
	nsr_jobd_close(s.j);
	nsr_jobdb_query_free(s.q);
	nsr_buf_release(&err);
	return rc;
}
