/*
 * nsrclone, nsrstage - copy save sets to volumes of another pool; stage
 * them there (the copy read is removed once the new one is complete).
 *
 *   nsrclone [-s server] -b pool [-v] -S ssid[/cloneid] ...
 *   nsrclone [-s server] -b pool [-v] -V volume ...
 *   nsrclone [-s server] -b pool [-v] [-t time] [-g group] [-q query]
 *   nsrstage [-s server] -b pool -m [-v] { -S ssid[/cloneid] ... |
 *            -V volume ... }
 *
 * The run of each clone is the client library's (clone.h); this program
 * picks the save sets, runs them one after another and reports.
 */
#include "nsr/compat.h"

#include <getopt.h>
#include <libgen.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/clone.h"
#include "nsr/err.h"
#include "nsr/log.h"
#include "nsr/nsrd_clnt.h"
#include "nsr/xmalloc.h"

/* usage - print --help text of nsrclone or nsrstage. */
static void usage(FILE *f, int stage)
{
	if (stage)
		fprintf(f,
			"usage: nsrstage [-s server] -b pool -m [-v] "
			"-S ssid[/cloneid] ...\n"
			"       nsrstage [-s server] -b pool -m [-v] "
			"-V volume ...\n"
			"  -m  migrate: clone each save set to a volume of "
			"pool, then remove\n"
			"      the copy read (its bytes on an AFTD are "
			"freed)\n");
	else
		fprintf(f,
			"usage: nsrclone [-s server] -b pool [-v] "
			"-S ssid[/cloneid] ...\n"
			"       nsrclone [-s server] -b pool [-v] "
			"-V volume ...\n"
			"       nsrclone [-s server] -b pool [-v] [-t time] "
			"[-g group] [-q query]\n");
	fprintf(f,
		"  -b  destination pool (its volumes take the copies)\n"
		"  -S  the operands are save set ids (ssid/cloneid: read that "
		"copy)\n"
		"  -V  the operands are volumes: every complete save set on "
		"them\n");
	if (!stage)
		fprintf(f, "  -t  save sets saved at or after time "
			   "(nsr_getdate)\n"
			   "  -g  save sets of group (with -t: a group's "
			   "run)\n"
			   "  -q  save sets matching an mminfo query\n");
	fprintf(f, "  -s  server (default: this host); -v  one line per "
		   "save set\n"
		   "exit status: 0 every save set copied, 1 some failed, 2 "
		   "usage\n");
}

/* on_notice - the library's notices, on stderr. */
static void on_notice(void *ctx, const char *msg)
{
	fprintf(stderr, "%s: %s\n", (const char *)ctx, msg);
}

/* parse_ssid - "ssid[/cloneid]" into it; -1 if malformed. */
static int parse_ssid(const char *s, struct nsr_clone_item *it)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10), c = 0;

	if (end == s || !v || v > UINT32_MAX)
		return -1;
	if (*end == '/') {
		const char *p = end + 1;

		c = strtoul(p, &end, 10);
		if (end == p || !c || c > UINT32_MAX)
			return -1;
	}
	if (*end)
		return -1;
	it->ssid = (uint32_t)v;
	it->cloneid = (uint32_t)c;
	return 0;
}

/* add_query - "attr=value" with value quoted, appended to q. */
static void add_query(struct nsr_buf *q, const char *attr, const char *op,
		      const char *value)
{
	nsr_buf_addf(q, "%s%s%s\"%s\"", q->len ? "," : "", attr, op, value);
}

/* select_items - the save sets on volumes argv[] or matching q. */
static int select_items(const char *server, const char *prog, int nvol,
			char **vols, const char *q, struct nsr_clone_item **v,
			size_t *n)
{
	struct nsr_buf err, one;
	int rc = NSR_OK;

	nsr_buf_init(&err, 0);
	nsr_buf_init(&one, 0);
	*v = NULL;
	*n = 0;
	for (int i = 0; rc == NSR_OK && i <= nvol; i++) {
		struct nsr_clone_item *got = NULL;
		size_t ng = 0;

		if (nvol && i == nvol)
			break;
		nsr_buf_reset(&one);
		if (nvol)
			add_query(&one, "volume", "=", vols[i]);
		else
			nsr_buf_addstr(&one, q);
		rc = nsr_clone_select(server, one.data, nvol > 0, &got, &ng,
				      &err);
		if (rc != NSR_OK) {
			fprintf(stderr, "%s: cannot list the save sets: %s\n",
				prog, err.data);
			break;
		}
		if (nvol && ng == 0)
			fprintf(stderr, "%s: volume %s holds no complete save "
				"set\n", prog, vols[i]);
		*v = nsr_xrealloc(*v, (*n + ng + 1) * sizeof(**v));
		memcpy(*v + *n, got, ng * sizeof(*got));
		*n += ng;
		free(got);
	}
	/* A save set on several of the volumes is copied once, in the
	 * order of the first volume that holds it. */
	if (rc == NSR_OK && nsr_clone_items_unique(*v, n) != NSR_OK) {
		fprintf(stderr, "%s: out of memory\n", prog);
		rc = NSR_ERR_NOMEM;
	}
	nsr_buf_release(&err);
	nsr_buf_release(&one);
	return rc;
}

/* main - parse, pick the save sets, clone each, report. */
int main(int argc, char **argv)
{
	static const struct option lo[] = {{"help", no_argument, NULL, 'h'},
					   {NULL, 0, NULL, 0}};
	const char *prog = basename(argv[0]);
	int stage = strcmp(prog, "nsrstage") == 0;
	const char *server = NULL, *pool = NULL, *tm = NULL, *grp = NULL;
	const char *query = NULL;
	int by_ssid = 0, by_vol = 0, migrate = 0, verbose = 0, opt;
	int failed = 0, done = 0;
	struct nsr_clone_item *items = NULL;
	size_t nitems = 0;
	struct nsr_clone_opts o;
	struct nsr_nsrd *d = NULL;
	struct nsr_buf err, q;
	char host[256];

	nsr_log_init(prog, NSR_LOG_STDERR | NSR_LOG_BARE);
	while ((opt = getopt_long(argc, argv, "s:b:SVt:g:q:mvh", lo, NULL)) !=
	       -1) {
		switch (opt) {
		case 's': server = optarg; break;
		case 'b': pool = optarg; break;
		case 'S': by_ssid = 1; break;
		case 'V': by_vol = 1; break;
		case 't': tm = optarg; break;
		case 'g': grp = optarg; break;
		case 'q': query = optarg; break;
		case 'm': migrate = 1; break;
		case 'v': verbose = 1; break;
		case 'h': usage(stdout, stage); return 0;
		default: usage(stderr, stage); return 2;
		}
	}
	if (!pool || !*pool) {
		fprintf(stderr, "%s: name the destination pool with -b pool\n",
			prog);
		return 2;
	}
	if (by_ssid + by_vol + !!(tm || grp || query) != 1 ||
	    (stage && !by_ssid && !by_vol) ||
	    ((by_ssid || by_vol) && optind >= argc) ||
	    (!by_ssid && !by_vol && optind < argc)) {
		fprintf(stderr, "%s: choose the save sets one way: -S ssid "
			"... or -V volume ...%s\n", prog,
			stage ? "" : " or -t/-g/-q");
		usage(stderr, stage);
		return 2;
	}
	if (stage != migrate) {
		fprintf(stderr, "%s: %s\n", prog, stage
			? "staging needs -m (migrate the save sets)"
			: "-m is nsrstage's: run nsrstage -b pool -m ...");
		return 2;
	}
	if (gethostname(host, sizeof(host) - 1) != 0)
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	if (!server)
		server = host;
	nsr_buf_init(&err, 0);
	nsr_buf_init(&q, 0);

	/* Which save sets. */
	if (by_ssid) {
		items = nsr_xcalloc((size_t)(argc - optind), sizeof(*items));
		for (int i = optind; i < argc; i++)
			if (parse_ssid(argv[i], &items[nitems++]) != 0) {
				fprintf(stderr, "%s: bad save set id '%s' "
					"(ssid or ssid/cloneid)\n", prog,
					argv[i]);
				free(items);
				return 2;
			}
	} else {
		if (query)
			nsr_buf_addstr(&q, query);
		if (tm)
			add_query(&q, "savetime", ">=", tm);
		if (grp)
			add_query(&q, "group", "=", grp);
		if (select_items(server, prog, by_vol ? argc - optind : 0,
				 argv + optind, q.data, &items,
				 &nitems) != NSR_OK) {
			failed = 1;
			goto out;
		}
		if (nitems == 0 && !by_vol)
			fprintf(stderr, "%s: no complete save set matches\n",
				prog);
	}
	if (nsr_nsrd_open(server, &d, &err) != NSR_OK) {
		fprintf(stderr, "%s: cannot reach the OpenNSR server %s: %s\n",
			prog, server, err.data);
		failed = 1;
		goto out;
	}
	memset(&o, 0, sizeof(o));
	o.server = server;
	o.pool = pool;
	o.client = host;
	o.stage = stage;
	o.notice = on_notice;
	o.ctx = (void *)prog;
	for (size_t i = 0; i < nitems; i++) {
		struct nsr_clone_result res;

		nsr_buf_reset(&err);
		if (nsr_clone_ssid(d, &o, items[i].ssid, items[i].cloneid,
				   &res, &err) != NSR_OK) {
			fprintf(stderr, "%s: save set %u not %s: %s\n", prog,
				items[i].ssid, stage ? "staged" : "cloned",
				err.data);
			failed = 1;
			continue;
		}
		done++;
		if (verbose && res.spans)
			printf("save set %u: %s to volumes %s to %s (%u) as "
			       "clone %u (%llu bytes, read from clone %u)\n",
			       items[i].ssid, stage ? "staged" : "cloned",
			       res.volume, res.last_volume, res.spans + 1,
			       res.cloneid, (unsigned long long)res.bytes,
			       res.src_cloneid);
		else if (verbose)
			printf("save set %u: %s to volume %s as clone %u "
			       "(%llu bytes, read from clone %u)\n",
			       items[i].ssid, stage ? "staged" : "cloned",
			       res.volume, res.cloneid,
			       (unsigned long long)res.bytes, res.src_cloneid);
	}
	if (nitems > 1 || failed)
		fprintf(stderr, "%s: %d of %zu save set(s) %s\n", prog, done,
			nitems, stage ? "staged" : "cloned");
out:
	nsr_nsrd_close(d);
	free(items);
	nsr_buf_release(&err);
	nsr_buf_release(&q);
	return failed || (nitems == 0 && !by_vol) ? 1 : 0;
}
