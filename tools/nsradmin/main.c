/*
 * nsradmin - administer resources, interactively or from a script.
 *
 *   nsradmin [-s server] [-i file] [query]
 *   nsradmin -d resdir [-i file] [query]       offline, nsrd must be down
 *
 * The command interpreter is src/admin (nsradmin.h); this file supplies its
 * backend: nsrd over RPC (resources travel as nsradmin text), or a local
 * resource directory with -d.
 */
#include "nsr/compat.h"

#include <getopt.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/log.h"
#include "nsr/nsradmin.h"
#include "nsr/res.h"
#include "nsr/resdb.h"
#include "nsr/nsrd_clnt.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsrd.h"
#include "nsr/xmalloc.h"

/* res_text - a resource as nsradmin text (with hidden attributes). */
static char *res_text(const struct nsr_res *r)
{
	struct nsr_res_print_opts po;
	struct nsr_buf b;

	memset(&po, 0, sizeof(po));
	po.hidden = 1;
	nsr_buf_init(&b, 0);
	if (r)
		nsr_res_print(r, &po, &b);
	return nsr_buf_detach(&b, NULL);
}

/* done - the outcome of one nsrd call into why (nsrd's message or the
 * transport's, which names host and port). */
static int done(struct nsr_nsrd *c, int rc, struct nsr_buf *why)
{
	if (rc)
		nsr_buf_addstr(why, nsr_nsrd_errmsg(c));
	return rc;
}

/* rpc_list - RES_QUERY backend: resources matching query. */
static int rpc_list(void *ctx, const struct nsr_res *query,
		    struct nsr_res_list *out, struct nsr_buf *why)
{
	struct nsr_nsrd *c = ctx;
	char *q = res_text(query);
	res_query_args a = {.query = q};
	res_list_res r;
	int rc;

	memset(&r, 0, sizeof(r));
	rc = done(c, nsr_nsrd_res_query(c, &a, &r), why);
	free(q);
	if (rc == NSR_OK) {
		rc = nsr_res_parse(r.text, strlen(r.text), out, NULL);
		if (rc != NSR_OK)
			nsr_buf_addstr(why, "the server sent resources that "
				       "do not parse");
	}
	xdr_free(NSR_XDR(xdr_res_list_res), &r);
	return rc;
}

/* change - RES_CREATE or RES_UPDATE. */
static int change(struct nsr_nsrd *c, uint32_t proc, const char *id,
		  const struct nsr_res *res, char **id_out, struct nsr_buf *why)
{
	char *text = res_text(res);
	res_text_args a = {
		.text = text, .id = (char *)(id ? id : ""), .append = FALSE};
	res_change_res r;
	int rc;

	memset(&r, 0, sizeof(r));
	rc = done(c, proc == RES_CREATE ? nsr_nsrd_res_create(c, &a, &r)
					: nsr_nsrd_res_update(c, &a, &r), why);
	free(text);
	if (rc == NSR_OK && id_out)
		*id_out = nsr_xstrdup(r.id);
	xdr_free(NSR_XDR(xdr_res_change_res), &r);
	return rc;
}

/* rpc_create - RES_CREATE backend. */
static int rpc_create(void *ctx, const struct nsr_res *r, char **id_out,
		      struct nsr_buf *why)
{
	return change(ctx, RES_CREATE, NULL, r, id_out, why);
}

/* rpc_update - RES_UPDATE backend (the whole resource). */
static int rpc_update(void *ctx, const char *id, const struct nsr_res *r,
		      struct nsr_buf *why)
{
	return change(ctx, RES_UPDATE, id, r, NULL, why);
}

/* rpc_remove - RES_DELETE backend. */
static int rpc_remove(void *ctx, const char *id, struct nsr_buf *why)
{
	struct nsr_nsrd *c = ctx;
	res_text_args a = {
		.text = (char *)"", .id = (char *)id, .append = FALSE};
	nsr_void_res r;
	int rc;

	memset(&r, 0, sizeof(r));
	rc = done(c, nsr_nsrd_res_delete(c, &a, &r), why);
	xdr_free(NSR_XDR(xdr_nsr_void_res), &r);
	return rc;
}

/* rpc_schema - the standard schema (nsrd validates against the same). */
static const struct nsr_res_schema *rpc_schema(void *ctx)
{
	NSR_UNUSED(ctx);
	return nsr_res_schema_std();
}

static const struct nsradmin_ops rpc_ops = {
	.list = rpc_list, .create = rpc_create, .update = rpc_update,
	.remove = rpc_remove, .schema = rpc_schema,
};

/* out_write - interpreter output to stdout or stderr. */
static void out_write(void *arg, enum nsradmin_stream s, const char *text,
		      size_t len)
{
	NSR_UNUSED(arg);
	fwrite(text, 1, len, s == NSRADMIN_ERR ? stderr : stdout);
	if (s == NSRADMIN_ERR)
		fflush(stderr);
}

/* ask - a yes/no question on the terminal. */
static int ask(void *arg, const char *prompt)
{
	char line[32];

	NSR_UNUSED(arg);
	printf("%s ", prompt);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 0;
	return line[0] == 'y' || line[0] == 'Y';
}

/* usage - print --help text. */
static void usage(FILE *f)
{
	fprintf(f, "usage: nsradmin [-s server] [-i file] [query]\n"
		   "       nsradmin -d resdir [-i file] [query]\n"
		   "  -s server  talk to nsrd on server (default: this host)\n"
		   "  -d resdir  edit a resource directory directly (nsrd must "
		   "be stopped)\n"
		   "  -i file    read commands from file ('-' = standard "
		   "input), no prompt\n"
		   "  query      initial query, e.g. 'type: NSR client'\n"
		   "Commands: . print show create update append delete types "
		   "option unset "
		   "help quit\n");
}

/* main - parse options, do the work, exit status. */
int main(int argc, char **argv)
{
	static const struct option lo[] = {{"help", no_argument, NULL, 'h'},
					   {NULL, 0, NULL, 0}};
	const char *server = NULL, *resdir = NULL, *input = NULL;
	struct nsr_nsrd *c = NULL;
	struct nsr_resdb *db = NULL;
	struct nsradmin *a = NULL;
	struct nsradmin_opts o;
	struct nsr_buf err, q;
	FILE *in = stdin;
	char *line = NULL;
	size_t cap = 0;
	int opt, tty, failed = 0, rc;
	char host[256];

	nsr_log_init("nsradmin", NSR_LOG_STDERR | NSR_LOG_BARE);
	while ((opt = getopt_long(argc, argv, "s:d:i:h", lo, NULL)) != -1) {
		switch (opt) {
		case 's': server = optarg; break;
		case 'd': resdir = optarg; break;
		case 'i': input = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	nsr_buf_init(&err, 0);
	memset(&o, 0, sizeof(o));
	o.write = out_write;
	if (resdir) {
		struct nsr_resdb_opts ro;
		struct nsr_res_error perr;

		memset(&ro, 0, sizeof(ro));
		ro.refs = 1; /* the references nsrd checks too */
		memset(&perr, 0, sizeof(perr));
		if (nsr_resdb_open(resdir, &ro, &db, &perr) != NSR_OK) {
			nsr_res_error_format(&perr, &err);
			nsr_fatal("cannot open %s: %s", resdir, err.data);
		}
		o.ops = nsradmin_resdb_ops();
		o.ctx = db;
	} else {
		if (gethostname(host, sizeof(host) - 1) != 0)
			snprintf(host, sizeof(host), "localhost");
		host[sizeof(host) - 1] = '\0';
		if (nsr_nsrd_open(server ? server : host, &c, &err))
			nsr_fatal("cannot reach nsrd on %s: %s",
				  server ? server : host, err.data);
		o.ops = &rpc_ops;
		o.ctx = c;
	}
	if (input && strcmp(input, "-") != 0) {
		in = fopen(input, "r");
		if (!in)
			nsr_fatal("cannot open %s: %s", input, strerror(errno));
	}
	tty = !input && isatty(0);
	if (tty)
		o.confirm = ask;
	if (nsradmin_new(&o, &a) != NSR_OK)
		nsr_fatal("out of memory");
	nsr_buf_init(&q, 0);
	for (int i = optind; i < argc; i++)
		nsr_buf_addf(&q, "%s%s", i > optind ? " " : "", argv[i]);
	if (q.len && nsradmin_set_query(a, q.data) != NSR_OK)
		failed = 1;
	if (tty)
		printf("OpenNSR administration program.\n"
		       "Use the \"help\" command for help.\n");
	for (;;) {
		ssize_t n;

		if (tty) {
			fputs(nsradmin_prompt(a), stdout);
			fflush(stdout);
		}
		n = getline(&line, &cap, in);
		if (n < 0)
			break;
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		rc = nsradmin_feed(a, line);
		if (rc == NSRADMIN_QUIT)
			break;
		if (rc < 0)
			failed = 1;
	}
	if (nsradmin_pending(a)) {
		fprintf(stderr,
			"nsradmin: input ended inside a continued command\n");
		failed = 1;
	}
	free(line);
	nsradmin_free(a);
	if (in != stdin)
		fclose(in);
	nsr_resdb_close(db);
	nsr_nsrd_close(c);
	nsr_buf_release(&err);
	nsr_buf_release(&q);
	return failed;
}
