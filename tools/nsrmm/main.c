/*
 * nsrmm - media management: label, mount, unmount, volume modes, delete.
 *
 *   nsrmm [-s server]                             show devices and volumes
 *   nsrmm -l [-s server] [-f device] [-b pool] [-z blocksize] [-y] [-m]
 *            [volume]
 *   nsrmm -m [-s server] [-f device] [volume]
 *   nsrmm -u [-s server] [-f device]
 *   nsrmm -o mode [-s server] volume ...
 *   nsrmm -d [-s server] [-y] { -S ssid | volume ... }
 *
 * Every operation is carried out by nsrd (which drives the device's data
 * mover and the media database); nsrmm only asks and reports.
 */
#include "nsr/compat.h"

#include <getopt.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/log.h"
#include "nsr/res.h"
#include "nsr/nsrd_clnt.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsrd.h"
#include "nsr/size.h"
#include "nsr/xmalloc.h"

/* usage - print --help text. */
static void usage(FILE *f)
{
	fprintf(f,
		"usage: nsrmm [-s server]\n"
		"       nsrmm -l [-s server] [-f device] [-b pool] [-z "
		"blocksize] [-y] [volume]\n"
		"       nsrmm -m [-s server] [-f device] [volume]\n"
		"       nsrmm -u [-s server] [-f device]\n"
		"       nsrmm -o mode [-s server] volume ...\n"
		"       nsrmm -d [-s server] [-y] { -S ssid | volume ... }\n"
		"  -l  label a volume; -b pool (default Default); -z block "
		"size\n"
		"      (32K..8M in steps of 32K; default: the device's, else "
		"256K)\n"
		"  -m  mount; -u unmount; -f device (needed when several "
		"exist)\n"
		"  -o  mode: full|notfull|readonly|notreadonly|recyclable|\n"
		"      notrecyclable|manual|notmanual\n"
		"  -d  delete volumes or a save set from the media database\n"
		"  -y  do not ask for confirmation; -q quiet; -v verbose\n");
}

/* confirm - ask on a terminal; refuse otherwise. */
static int confirm(const char *question)
{
	char line[16];

	if (!isatty(0))
		return 0;
	printf("%s [y/n] ", question);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 0;
	return line[0] == 'y' || line[0] == 'Y';
}

/* parse_bs - the -z block size in the one size grammar (size.h); 0 if
 * it is not a size or does not fit (nsrd checks the range). */
static uint32_t parse_bs(const char *s)
{
	long long v;

	if (nsr_size_parse(s, &v) != NSR_OK || v <= 0 || v > UINT32_MAX)
		return 0;
	return (uint32_t)v;
}

/* check - after one nsrd call: a transport failure (no status from
 * nsrd) is fatal; nsrd's own answer is left to the caller. */
static void check(struct nsr_nsrd *c, int rc, const nsr_status *st)
{
	if (rc != NSR_OK && st->code == 0)
		nsr_fatal("%s", nsr_nsrd_errmsg(c));
}

/* show - devices and the volumes mounted on them. */
static int show(struct nsr_nsrd *c)
{
	res_query_args q = {.query = (char *)"type: NSR device"};
	res_list_res r;
	struct nsr_res_list list;
	int rc;

	memset(&r, 0, sizeof(r));
	check(c, nsr_nsrd_res_query(c, &q, &r), &r.st);
	if (r.st.code)
		nsr_fatal("%s", r.st.msg);
	nsr_res_list_init(&list);
	rc = nsr_res_parse(r.text, strlen(r.text), &list, NULL);
	if (rc)
		nsr_fatal("the server sent unreadable resources: %s",
			  nsr_strerror(rc));
	if (!list.n)
		printf("no devices are configured\n");
	for (size_t i = 0; i < list.n; i++) {
		const char *vol = nsr_res_get(list.items[i], "volume name");
		const char *type = nsr_res_get(list.items[i], "media type");

		printf("%s %s %s\n", type ? type : "?",
		       nsr_res_get(list.items[i], "name"),
		       vol && *vol ? vol : "(no volume mounted)");
	}
	nsr_res_list_release(&list);
	xdr_free(NSR_XDR(xdr_res_list_res), &r);
	return 0;
}

/* do_label - -l, with the relabel question when the volume exists. */
static int do_label(struct nsr_nsrd *c, label_args *a, int quiet)
{
	label_res r;

	for (;;) {
		memset(&r, 0, sizeof(r));
		check(c, nsr_nsrd_label(c, a, &r), &r.st);
		if (r.st.code == NSR_ERR_EXISTS && !a->force) {
			fprintf(stderr, "nsrmm: %s\n", r.st.msg);
			xdr_free(NSR_XDR(xdr_label_res), &r);
			if (!confirm("Relabel it?"))
				return 1;
			a->force = TRUE;
			continue;
		}
		break;
	}
	if (r.st.code) {
		nsr_error("%s", r.st.msg);
		xdr_free(NSR_XDR(xdr_label_res), &r);
		return 1;
	}
	if (!quiet) {
		if (!a->volume[0])
			printf("Using volume name `%s' for pool `%s'\n",
			       r.volume, r.pool);
		printf("labeled %s volume %s (pool %s, block size %u KB) on "
		       "%s, write enabled\n",
		       r.media_type, r.volume, r.pool, r.block_size / 1024,
		       r.device[0] ? r.device : a->device);
	}
	xdr_free(NSR_XDR(xdr_label_res), &r);
	return 0;
}

/* void_done - the end of a call with an nsr_void_res result; 0 or 1. */
static int void_done(struct nsr_nsrd *c, int rc, nsr_void_res *rp)
{
	nsr_void_res r = *rp;
	int bad;

	check(c, rc, &r.st);
	bad = r.st.code != 0;
	if (bad)
		nsr_error("%s", r.st.msg);
	xdr_free(NSR_XDR(xdr_nsr_void_res), &r);
	return bad;
}

/* main - parse options, do the work, exit status. */
int main(int argc, char **argv)
{
	static const struct option lo[] = {{"help", no_argument, NULL, 'h'},
					   {NULL, 0, NULL, 0}};
	const char *server = NULL, *device = "", *pool = "", *mode = NULL;
	int op = 0, yes = 0, quiet = 0, opt, failed = 0;
	uint32_t bs = 0, ssid = 0;
	struct nsr_nsrd *c = NULL;
	struct nsr_buf err;
	char host[256];

	nsr_log_init("nsrmm", NSR_LOG_STDERR | NSR_LOG_BARE);
	while ((opt = getopt_long(argc, argv, "lmuo:dS:s:f:b:z:yqvCh", lo,
				  NULL)) != -1) {
		switch (opt) {
		case 'l': case 'm': case 'u': case 'd':
			if (op && !(op == 'l' && opt == 'm')) {
				fprintf(stderr, "nsrmm: choose one of -l, -m, "
						"-u, -o, -d\n");
				return 2;
			}
			if (op != 'l')
				op = opt;
			break;
		case 'o':
			if (op) {
				fprintf(stderr, "nsrmm: choose one of -l, -m, "
						"-u, -o, -d\n");
				return 2;
			}
			op = 'o';
			mode = optarg;
			break;
		case 'S': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);

			if (end == optarg || (*end && *end != '/') || !v ||
			    v > UINT32_MAX) {
				fprintf(stderr, "nsrmm: bad save set id '%s'\n",
					optarg);
				return 2;
			}
			ssid = (uint32_t)v;
			break;
		}
		case 's': server = optarg; break;
		case 'f': device = optarg; break;
		case 'b': pool = optarg; break;
		case 'z':
			bs = parse_bs(optarg);
			if (!bs) {
				fprintf(stderr,
					"nsrmm: bad block size '%s' (e.g. "
					"256K, 1M)\n",
					optarg);
				return 2;
			}
			break;
		case 'y': yes = 1; break;
		case 'q': quiet = 1; break;
		case 'v': case 'C': break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (gethostname(host, sizeof(host) - 1) != 0)
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	if (!server)
		server = host;
	nsr_buf_init(&err, 0);
	if (nsr_nsrd_open(server, &c, &err) != NSR_OK)
		nsr_fatal("cannot reach the OpenNSR server %s: %s", server,
			  err.data);

	switch (op) {
	case 0:
		failed = show(c);
		break;
	case 'l': case 'm': case 'u': {
		label_args a = {
			.device = (char *)device,
			.pool = (char *)pool,
			.volume = (char *)(optind < argc ? argv[optind] : ""),
			.block_size = bs,
			.force = yes};

		if (op == 'l') {
			failed = do_label(c, &a, quiet);
		} else if (op == 'u') {
			nsr_void_res r = {{0, NULL}};

			failed = void_done(c, nsr_nsrd_unmount(c, &a, &r), &r);
		} else {
			label_res r;

			memset(&r, 0, sizeof(r));
			check(c, nsr_nsrd_mount(c, &a, &r), &r.st);
			failed = r.st.code != 0;
			if (failed)
				nsr_error("%s", r.st.msg);
			else if (!quiet)
				printf("%s volume %s mounted on %s\n",
				       r.media_type, r.volume, r.device);
			xdr_free(NSR_XDR(xdr_label_res), &r);
		}
		break;
	}
	case 'o':
		if (optind >= argc) {
			fprintf(stderr, "nsrmm: -o needs a volume name\n");
			failed = 2;
		}
		for (int i = optind; i < argc; i++) {
			vol_mode_args a = {.volume = argv[i],
					   .mode = (char *)mode};
			nsr_void_res r = {{0, NULL}};

			failed |=
				void_done(c, nsr_nsrd_vol_mode(c, &a, &r), &r);
		}
		break;
	case 'd':
		if (!ssid && optind >= argc) {
			fprintf(stderr,
				"nsrmm: -d needs -S ssid or a volume name\n");
			failed = 2;
			break;
		}
		if (!yes && !confirm(ssid ? "Delete this save set from the "
					    "media database?"
					  : "Delete these volumes from the "
					    "media database?")) {
			fprintf(stderr,
				"nsrmm: not deleted (confirm, or use -y)\n");
			failed = 1;
			break;
		}
		if (ssid) {
			vol_del_args a = {.volume = (char *)"", .ssid = ssid};
			nsr_void_res r = {{0, NULL}};

			failed = void_done(c, nsr_nsrd_vol_delete(c, &a, &r),
					   &r);
		}
		for (int i = optind; i < argc; i++) {
			vol_del_args a = {.volume = argv[i], .ssid = 0};
			nsr_void_res r = {{0, NULL}};

			failed |= void_done(c, nsr_nsrd_vol_delete(c, &a, &r),
					    &r);
		}
		break;
	}
	nsr_nsrd_close(c);
	nsr_buf_release(&err);
	return failed;
}
