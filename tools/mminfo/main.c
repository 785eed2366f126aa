/*
 * mminfo - report on the media database (NetWorker's mminfo).
 *
 * Thin: parse options, check the query and report specs here (so a
 * mistake is shown against the text the user typed), send the combined
 * query to nsrmmdbd, print the streamed rows with the mmreport layouts.
 * Rows are held in memory only with -o (sorting happens here).
 */
#include "nsr/compat.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/mmdb.h"
#include "nsr/mmdb_clnt.h"
#include "nsr/mmquery.h"
#include "nsr/mmreport.h"
#include "fetch.h"

#define EXIT_USAGE 2

static const char usage_text[] =
	"usage: mminfo [-avVmSB] [-o order] [-s server] [-x exportspec]\n"
	"              [-r reportspec] [-c client] [-N name] [-t time]\n"
	"              [-q queryspec] [volname ...]\n"
	"  -a          all save sets, not only those of the last 24 hours\n"
	"  -v          verbose report (save time, ssid, flags), all states\n"
	"  -V          fragment report (file, record, volume id)\n"
	"  -m          media (volume) report\n"
	"  -S          every attribute, clone and fragment of each save set\n"
	"  -B          bootstrap report (last five weeks)\n"
	"  -r spec     custom report: attr[(width)],...\n"
	"  -q spec     query: [!]attr[op value],... (op = != < <= > >=)\n"
	"  -c client   same as -q client=client\n"
	"  -N name     same as -q name=name\n"
	"  -t time     save sets saved at or after time (nsr_getdate)\n"
	"  -o order    sort by t c n m e l (time client name media expiry\n"
	"              length), R reverses\n"
	"  -x c<sep>   delimited output; -x j: one JSON object per line\n"
	"  -s server   media database server (default: this host)\n"
	"  -h, --help  show this help\n";

struct opts {
	int all, verbose, frags, media, super, boot;
	const char *report;		/* -r */
	const char *order;		/* -o */
	const char *server;		/* -s */
	const char *xspec;		/* -x */
	struct nsr_buf query;		/* combined text for the daemon */
	int explicit_query;		/* -q -c -N -t or volnames given */
	struct nsr_mmquery *check;	/* local parse of the same */
	time_t now;
};

struct out {
	struct nsr_mmreport *rep;
	struct nsr_buf line;
	int header_done;
	int failed;
};

/* show_error - the message and, for text, the text with a caret line
 * under the mistake. */
static void show_error(const char *what, const char *text,
		       const struct nsr_mmquery_error *e)
{
	size_t len = e->len ? e->len : 1;

	fprintf(stderr, "mminfo: %s: %s\n", what, e->msg);
	if (!text || e->offset > strlen(text))
		return;
	fprintf(stderr, "  %s\n  %*s", text, (int)e->offset, "");
	for (size_t i = 0; i < len && i < 200; i++)
		fputc('^', stderr);
	fputc('\n', stderr);
}

/* add_quoted - append name<op>"value" (quotes doubled) to the query. */
static void add_quoted(struct nsr_buf *q, const char *name, const char *op,
		       const char *value)
{
	if (q->len)
		nsr_buf_addch(q, ',');
	nsr_buf_addf(q, "%s%s\"", name, op);
	for (const char *p = value; *p; p++) {
		if (*p == '"')
			nsr_buf_addch(q, '"');
		nsr_buf_addch(q, *p);
	}
	nsr_buf_addch(q, '"');
}

/* add_spec - one -q: checked locally, then appended. 0 or -1. */
static int add_spec(struct opts *o, const char *spec)
{
	struct nsr_mmquery_error e;
	int rc;

	memset(&e, 0, sizeof(e));
	rc = nsr_mmquery_add_spec(o->check, spec, o->now, &e);
	if (rc) {
		if (!e.msg[0])
			snprintf(e.msg, sizeof(e.msg), "%s", nsr_strerror(rc));
		show_error("bad query", spec, &e);
		return -1;
	}
	if (*spec) {
		if (o->query.len)
			nsr_buf_addch(&o->query, ',');
		nsr_buf_addstr(&o->query, spec);
	}
	o->explicit_query = 1;
	return 0;
}

/* add_time - -t: checked locally, then appended as savetime>=. */
static int add_time(struct opts *o, const char *text)
{
	struct nsr_mmquery_error e;
	int rc;

	memset(&e, 0, sizeof(e));
	rc = nsr_mmquery_add_time(o->check, text, o->now, &e);
	if (rc) {
		if (!e.msg[0])
			snprintf(e.msg, sizeof(e.msg), "%s", nsr_strerror(rc));
		show_error("bad time", text, &e);
		return -1;
	}
	add_quoted(&o->query, "savetime", ">=", text);
	o->explicit_query = 1;
	return 0;
}

/* parse_args - options into o; 0, 1 (help shown), -1 (usage error). */
static int parse_args(struct opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
	int ch, rc = 0;

	while (rc == 0 &&
	       (ch = getopt_long(argc, argv, "avVmSBr:q:c:N:t:o:s:x:h",
				 longopts, NULL)) != -1) {
		switch (ch) {
		case 'a': o->all = 1; break;
		case 'v': o->verbose = 1; break;
		case 'V': o->frags = 1; break;
		case 'm': o->media = 1; break;
		case 'S': o->super = 1; break;
		case 'B': o->boot = 1; break;
		case 'r': o->report = optarg; break;
		case 'o': o->order = optarg; break;
		case 's': o->server = optarg; break;
		case 'x': o->xspec = optarg; break;
		case 'q': rc = add_spec(o, optarg); break;
		case 't': rc = add_time(o, optarg); break;
		case 'c':
			add_quoted(&o->query, "client", "=", optarg);
			rc = nsr_mmquery_add_client(o->check, optarg) ? -1 : 0;
			o->explicit_query = 1;
			break;
		case 'N':
			add_quoted(&o->query, "name", "=", optarg);
			rc = nsr_mmquery_add_name(o->check, optarg) ? -1 : 0;
			o->explicit_query = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 1;
		default:
			fputs(usage_text, stderr);
			return -1;
		}
	}
	if (rc)
		return -1;
	for (int i = optind; i < argc; i++) {
		add_quoted(&o->query, "volume", "=", argv[i]);
		o->explicit_query = 1;
	}
	if (o->media + o->super + o->boot + (o->report != NULL) > 1) {
		fprintf(stderr, "mminfo: give only one of -m, -S, -B and -r\n");
		return -1;
	}
	if (o->order && !mminfo_order_valid(o->order)) {
		fprintf(stderr, "mminfo: bad -o order '%s': use the letters "
			"t c n m e l and R\n", o->order);
		return -1;
	}
	return 0;
}

/* make_report - the layout the options ask for; 0 or -1 (shown). */
static int make_report(struct opts *o, struct nsr_mmreport **rep)
{
	enum nsr_mmreport_layout l = NSR_MMREPORT_DEFAULT;
	struct nsr_mmquery_error e;
	int rc;

	if (o->report)
		l = NSR_MMREPORT_CUSTOM;
	else if (o->media)
		l = NSR_MMREPORT_MEDIA;
	else if (o->boot)
		l = NSR_MMREPORT_BOOT;
	else if (o->super)
		l = NSR_MMREPORT_SUPER;
	else if (o->frags)
		l = NSR_MMREPORT_FRAGS;
	else if (o->verbose)
		l = NSR_MMREPORT_VERBOSE;
	memset(&e, 0, sizeof(e));
	rc = nsr_mmreport_new(l, o->report, rep, &e);
	if (rc) {
		if (!e.msg[0])
			snprintf(e.msg, sizeof(e.msg), "%s", nsr_strerror(rc));
		show_error("bad report spec", o->report, &e);
		return -1;
	}
	if (o->xspec) {
		memset(&e, 0, sizeof(e));
		rc = nsr_mmreport_set_export(*rep, o->xspec, &e);
		if (rc) {
			if (!e.msg[0])
				snprintf(e.msg, sizeof(e.msg), "%s",
					 nsr_strerror(rc));
			show_error("bad export spec", o->xspec, &e);
			return -1;
		}
	}
	return 0;
}

/*
 * implicit_query - NetWorker's defaults: without -a or any query, only
 * save sets completed in the last 24 hours; unless -v, -V, -S or a query
 * widens it, only browsable ones; -B shows the bootstraps of the last five
 * weeks.  Volume reports cover every volume.
 */
static void implicit_query(struct opts *o, int volume_report)
{
	if (volume_report)
		return;
	if (o->boot) {
		add_quoted(&o->query, "name", "=", "bootstrap");
		add_quoted(&o->query, "savetime", ">=", "5 weeks ago");
		return;
	}
	if (!o->all && !o->explicit_query && !o->order)
		add_quoted(&o->query, "sscomp", ">=", "24 hours ago");
	if (!o->explicit_query && !o->verbose && !o->frags && !o->super) {
		if (o->query.len)
			nsr_buf_addch(&o->query, ',');
		nsr_buf_addstr(&o->query, "browsable");
	}
}

/* flush_line - write the report text gathered in out->line. */
static int flush_line(struct out *out)
{
	if (out->line.len && fwrite(out->line.data, 1, out->line.len,
				    stdout) != out->line.len)
		out->failed = 1;
	nsr_buf_reset(&out->line);
	return out->failed ? NSR_ERR_IO : NSR_OK;
}

/* header - the title line before the first row. */
static int header(struct out *out)
{
	int rc;

	if (out->header_done)
		return NSR_OK;
	out->header_done = 1;
	rc = nsr_mmreport_header(out->rep, &out->line);
	return rc ? rc : flush_line(out);
}

/* print_row - one save set row. */
static int print_row(void *arg, const struct mmdb_ss_row *row)
{
	struct out *out = arg;
	int rc = header(out);

	if (!rc)
		rc = nsr_mmreport_row(out->rep, row, &out->line);
	return rc ? rc : flush_line(out);
}

/* print_vol - one volume row. */
static int print_vol(void *arg, const struct mmdb_volume *vol)
{
	struct out *out = arg;
	int rc = header(out);

	if (!rc)
		rc = nsr_mmreport_volume(out->rep, vol, &out->line);
	return rc ? rc : flush_line(out);
}

/* run - connect, query, print.  Returns the exit status. */
static int run(struct opts *o, struct nsr_mmreport *rep)
{
	struct mmdb_clnt *c = NULL;
	struct nsr_buf err;
	struct out out;
	int vols = nsr_mmreport_is_volume(rep), rc;
	size_t n = 0;

	memset(&out, 0, sizeof(out));
	out.rep = rep;
	nsr_buf_init(&out.line, 0);
	nsr_buf_init(&err, 0);
	implicit_query(o, vols);
	rc = mmdb_clnt_open(o->server, &c, &err);
	if (rc) {
		fprintf(stderr, "mminfo: %s\n", err.data);
		goto out;
	}
	if (vols) {
		rc = mminfo_fetch_vols(c, o->query.data, o->now, o->order,
				       print_vol, &out, &n);
		/* Save set attributes in a volume report: the volumes that
		 * hold the matching save sets, as NetWorker's mminfo -m -c. */
		if (rc == NSR_ERR_INVAL && n == 0 && !out.header_done)
			rc = mminfo_fetch_vols_of_rows(c, o->query.data, o->now,
						       o->order, print_vol,
						       &out, &n);
	} else {
		rc = mminfo_fetch_rows(c, o->query.data, o->now, o->order,
				       print_row, &out, &n);
	}
	if (rc && out.failed)
		fprintf(stderr, "mminfo: cannot write the report\n");
	else if (rc && rc != NSR_ERR_NOMEM)
		fprintf(stderr, "mminfo: %s\n", mmdb_clnt_errmsg(c));
	else if (rc)
		fprintf(stderr, "mminfo: out of memory (-o holds every row; "
			"narrow the query)\n");
	else if (n == 0)
		fprintf(stderr, "mminfo: no matches found for the query\n");
out:
	if (fflush(stdout) != 0 && !rc) {
		fprintf(stderr, "mminfo: cannot write the report\n");
		rc = NSR_ERR_IO;
	}
	mmdb_clnt_close(c);
	nsr_buf_release(&err);
	nsr_buf_release(&out.line);
	if (rc == NSR_ERR_SYNTAX)
		return EXIT_USAGE;
	return rc || n == 0 ? 1 : 0;
}

/* main - parse options, query, report, exit status. */
int main(int argc, char **argv)
{
	struct nsr_mmreport *rep = NULL;
	struct opts o;
	int rc;

	memset(&o, 0, sizeof(o));
	o.now = time(NULL);
	nsr_buf_init(&o.query, 0);
	if (nsr_mmquery_new(&o.check)) {
		fprintf(stderr, "mminfo: out of memory\n");
		return 1;
	}
	rc = parse_args(&o, argc, argv);
	if (rc == 0)
		rc = make_report(&o, &rep);
	if (rc == 0)
		rc = run(&o, rep);
	else
		rc = rc > 0 ? 0 : EXIT_USAGE;
	nsr_mmreport_free(rep);
	nsr_mmquery_free(o.check);
	nsr_buf_release(&o.query);
	return rc;
}
