/*
 * scanner - read a volume with no help from the server: print its label
 * and one line per save set on it; with -m, put the volume and the
 * fragments of the save sets found back into the media database; with
 * -i, rebuild their client file index entries.  The scan itself is in
 * scan.c, the media database part in rebuild.c, the index in index.c.
 */
#include "nsr/compat.h"

#include <getopt.h>
#include <time.h>

#include "nsr/buf.h"
#include "nsr/dev.h"
#include "nsr/err.h"

#include "index.h"
#include "rebuild.h"
#include "scan.h"

struct opts {
	enum nsr_dev_type type;
	int have_type;
	int rebuild;	 /* -m */
	int index;	 /* -i */
	int have_ssid;
	uint32_t ssid;	 /* -S */
	const char *client; /* -c */
	const char *name;   /* -N */
	const char *server; /* -s */
	int quiet;	    /* -q */
	const char *device;
};

/* usage - short and exact. */
static void usage(FILE *f)
{
	fprintf(f,
		"usage: scanner [-imq] [-t type] [-S ssid] [-c client] "
		"[-N name] [-s server] device\n"
		"  -t type    adv_file, vtape or tape (default: guessed from "
		"the path)\n"
		"  -S ssid    only this save set\n"
		"  -c client  only save sets of this client\n"
		"  -N name    only save sets with this name\n"
		"  -m         rebuild the media database entries (volume, "
		"fragments)\n"
		"  -i         rebuild the client file index entries\n"
		"  -s server  server running nsrmmdbd and nsrindexd (default: "
		"this host)\n"
		"  -q         no table, only errors and the summary\n"
		"  -h, --help this help\n"
		"exit: 0 ok, 1 damage or failure, 2 usage error\n");
}

/* parse - the options; 0, 1 (help: exit 0) or -1 (usage error). */
static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	char *end;
	int c;

	memset(o, 0, sizeof(o[0]));
	while ((c = getopt_long(argc, argv, "t:S:c:N:s:imqh", longopts,
				NULL)) != -1) {
		switch (c) {
		case 't':
			if (nsr_dev_type_parse(optarg, &o->type) != NSR_OK) {
				fprintf(stderr, "scanner: unknown device type "
					"'%s'\n", optarg);
				return -1;
			}
			o->have_type = 1;
			break;
		case 'S':
			errno = 0;
			o->ssid = (uint32_t)strtoul(optarg, &end, 10);
			if (*end || errno || !*optarg) {
				fprintf(stderr, "scanner: bad ssid '%s'\n",
					optarg);
				return -1;
			}
			o->have_ssid = 1;
			break;
		case 'c':
			o->client = optarg;
			break;
		case 'N':
			o->name = optarg;
			break;
		case 's':
			o->server = optarg;
			break;
		case 'm':
			o->rebuild = 1;
			break;
		case 'i':
			o->index = 1;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			return -1;
		}
	}
	if (optind + 1 != argc)
		return -1;
	o->device = argv[optind];
	if (!o->have_type)
		o->type = scan_guess_type(o->device);
	return 0;
}

/* wanted - does the save set pass -S, -c and -N? */
static int wanted(const struct opts *o, const struct scan_ss *s)
{
	if (o->have_ssid && s->hdr.ssid != o->ssid)
		return 0;
	if (o->client && strcmp(o->client, s->hdr.client) != 0)
		return 0;
	if (o->name && strcmp(o->name, s->hdr.name) != 0)
		return 0;
	return 1;
}

/* print_label - the volume's label. */
static void print_label(const struct opts *o, const struct nsr_vol_label *l)
{
	char when[32], id[33];
	time_t t = (time_t)l->created;
	struct tm tm;

	for (int i = 0; i < 16; i++)
		snprintf(id + 2 * i, 3, "%02x", l->volid[i]);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S",
		 localtime_r(&t, &tm));
	printf("scanner: %s volume %s on %s: pool %s, volume id %s, block "
	       "size %u, labeled %s\n", nsr_dev_type_name(o->type), l->name,
	       o->device, l->pool, id, l->block_size, when);
}

/* print_ss - one table line. */
static void print_ss(const struct scan_ss *s)
{
	char when[32];
	time_t t = (time_t)s->hdr.savetime;
	struct tm tm;

	strftime(when, sizeof(when), "%m/%d/%Y %H:%M:%S",
		 localtime_r(&t, &tm));
	printf("%-20s %-24s %s %c %12llu %8llu %10u %c%s\n", s->hdr.client,
	       s->hdr.name, when, scan_level_letter(s->hdr.level),
	       (unsigned long long)s->bytes_here,
	       (unsigned long long)(s->has_end ? s->tail.files : 0),
	       s->hdr.ssid, scan_flag(s), s->damaged ? " damaged" : "");
}

/* main - open the device, scan, print, rebuild on request. */
int main(int argc, char **argv)
{
	struct opts o;
	struct nsr_dev *dev = NULL;
	struct scan_result res;
	struct nsr_buf why;
	size_t shown = 0, damaged = 0;
	int rc, ret = 1;

	rc = parse(argc, argv, &o);
	if (rc != 0) {
		if (rc < 0)
			usage(stderr);
		return rc > 0 ? 0 : 2;
	}
	nsr_buf_init(&why, 0);
	memset(&res, 0, sizeof(res));
	rc = scan_device("scanner", o.type, o.device, &dev, &res, &why);
	if (rc == 1)
		goto out;
	print_label(&o, &res.label);
	if (!o.quiet)
		printf("%-20s %-24s %-19s %c %12s %8s %10s %c\n", "client",
		       "name", "save time", 'l', "size", "files", "ssid", 'S');
	for (size_t i = 0; i < res.n; i++) {
		if (!wanted(&o, &res.ss[i]))
			continue;
		res.ss[i].selected = 1;
		shown++;
		damaged += res.ss[i].damaged != 0;
		if (!o.quiet)
			print_ss(&res.ss[i]);
	}
	if (rc != NSR_OK && res.damage_reports == 0)
		fprintf(stderr, "scanner: reading volume %s stopped early: "
			"%s\n", res.label.name,
			why.len ? why.data : nsr_strerror(rc));
	printf("scanner: %zu save sets on volume %s%s", shown,
	       res.label.name, res.damage_reports ? "" : "\n");
	if (res.damage_reports)
		printf(", %zu damaged (%llu damaged blocks)\n", damaged,
		       (unsigned long long)res.damaged_blocks);
	ret = rc == NSR_OK ? 0 : 1;
	if (o.rebuild && rebuild_mmdb(o.server, o.type, &res) != 0)
		ret = 1;
	if (o.index && rebuild_index(o.server, dev, &res) != 0)
		ret = 1;
out:
	scan_result_release(&res);
	nsr_dev_close(dev);
	nsr_buf_release(&why);
	return ret;
}
