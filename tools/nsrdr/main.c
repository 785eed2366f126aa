/*
 * nsrdr - disaster recovery of the server from a bootstrap on a volume
 * (NetWorker's nsrdr / mmrecov): on an empty root, with the server's
 * daemons stopped, find the newest bootstrap save set on the volume (or
 * the one -B names) by reading the volume as scanner does, restore it,
 * and put its parts in place (boot.h): the resources, the media database
 * (with the bootstrap save set itself added: mmdb.c), the jobs database,
 * the client file indexes and the datazone's TLS files.  Then nsrd
 * starts on the root as before the loss.
 */
#include "nsr/compat.h"

#include <getopt.h>
#include <sys/stat.h>
#include <time.h>

#include "nsr/boot.h"
#include "nsr/buf.h"
#include "nsr/crypt.h"
#include "nsr/dev.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/restore.h"
#include "nsr/vol.h"

#include "nsrdr.h"
#include "scan.h"

#define NSRDR_EXIT_FAIL 1
#define NSRDR_EXIT_USAGE 2
#define NSRDR_EXIT_NOT_EMPTY 3

struct opts {
	const char *root;   /* -R */
	const char *device; /* -d */
	enum nsr_dev_type type;
	int have_type;
	uint32_t ssid;	    /* -B; 0 = the newest */
	int list;	    /* -l */
	const char *phrase_file; /* -P */
};

/* What the restore found. */
struct got {
	char stage[4096]; /* the restored staging directory, or "" */
	uint64_t errors;
	int no_key;	  /* a file's key was not given (-P) */
	int have_key;	  /* key: the -P pass phrase's */
	struct nsr_crypt_key key;
};

/* usage - short and exact. */
static void usage(FILE *f)
{
	fprintf(f,
		"usage: nsrdr -d device [-t type] [-B ssid] [-R root] "
		"[-P file] [-l]\n"
		"  -d device  the volume's device (AFTD directory, vtape "
		"file or tape)\n"
		"  -t type    adv_file, vtape or tape (default: guessed from "
		"the path)\n"
		"  -B ssid    this bootstrap save set (default: the newest "
		"on the volume)\n"
		"  -R root    the server's root to recover into, empty, "
		"daemons stopped\n"
		"             (default $NSR_ROOT, else %s)\n"
		"  -P file    the datazone pass phrase (the file's first "
		"line) the bootstrap\n"
		"             was encrypted with (nsrbootstrap says whether "
		"it was)\n"
		"  -l         only list the bootstrap save sets on the "
		"volume\n"
		"  -h, --help this help\n"
		"exit: 0 recovered (or listed), 1 failed or no bootstrap, 2 "
		"usage error,\n"
		"      3 the root is not empty\n", NSR_DEFAULT_ROOT);
}

/* parse - the options; 0, 1 (help) or -1 (usage error). */
static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {{"help", no_argument, NULL, 'h'},
					   {NULL, 0, NULL, 0}};
	const char *env = getenv("NSR_ROOT");
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	o->root = env && *env ? env : NSR_DEFAULT_ROOT;
	while ((c = getopt_long(argc, argv, "d:t:B:R:P:lh", lo, NULL)) != -1) {
		switch (c) {
		case 'd':
			o->device = optarg;
			break;
		case 't':
			if (nsr_dev_type_parse(optarg, &o->type) != NSR_OK) {
				fprintf(stderr, "nsrdr: unknown device type "
					"'%s'\n", optarg);
				return -1;
			}
			o->have_type = 1;
			break;
		case 'B':
			errno = 0;
			o->ssid = (uint32_t)strtoul(optarg, &end, 10);
			if (*end || errno || !*optarg || o->ssid == 0) {
				fprintf(stderr, "nsrdr: bad ssid '%s'\n",
					optarg);
				return -1;
			}
			break;
		case 'R':
			o->root = optarg;
			break;
		case 'l':
			o->list = 1;
			break;
		case 'P':
			o->phrase_file = optarg;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			return -1;
		}
	}
	if (optind != argc || !o->device)
		return -1;
	if (!o->have_type)
		o->type = scan_guess_type(o->device);
	return 0;
}

/* when - a save time as text. */
static const char *when(int64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	strftime(buf, len, "%Y-%m-%d %H:%M:%S", localtime_r(&tt, &tm));
	return buf;
}

/* pick - the bootstrap save set of the scan to restore, or NULL (the
 * reason printed); with list, print them all. */
static const struct scan_ss *pick(const struct opts *o,
				  const struct scan_result *res)
{
	struct nsr_boot_cand *c = calloc(res->n + 1, sizeof(*c));
	const struct scan_ss *s = NULL;
	char t[32];
	size_t n = 0, *at = calloc(res->n + 1, sizeof(*at));
	long i;

	if (!c || !at) {
		fprintf(stderr, "nsrdr: out of memory\n");
		goto out;
	}
	for (size_t k = 0; k < res->n; k++) {
		const struct scan_ss *x = &res->ss[k];

		if (strcmp(x->hdr.name, NSR_BOOT_SSNAME) != 0)
			continue;
		c[n].ssid = x->hdr.ssid;
		c[n].savetime = x->hdr.savetime;
		c[n].whole = x->has_begin && x->has_end &&
			     x->span.frag_seq == 0 && !x->damaged &&
			     x->tail.status == NSR_VOL_SS_OK;
		at[n++] = k;
		if (o->list)
			printf("%s  ssid %u  client %s  %s\n",
			       when(x->hdr.savetime, t, sizeof(t)),
			       x->hdr.ssid, x->hdr.client,
			       c[n - 1].whole ? "whole"
			       : "not whole on this volume (unusable)");
	}
	i = nsr_boot_pick(c, n, o->ssid);
	if (i >= 0)
		s = &res->ss[at[i]];
	else if (o->ssid)
		fprintf(stderr, "nsrdr: volume %s in %s holds no whole "
			"bootstrap save set %u (nsrdr -l -d %s lists those "
			"it holds)\n", res->label.name, o->device, o->ssid,
			o->device);
	else
		fprintf(stderr, "nsrdr: volume %s in %s holds no whole "
			"bootstrap save set: try another volume of the "
			"pool the bootstraps went to (mminfo -B listed "
			"them), or rebuild from the volumes alone: start "
			"nsrd on the empty root, label nothing, and run "
			"scanner -m -i on every volume\n", res->label.name,
			o->device);
out:
	free(c);
	free(at);
	return s;
}

/* on_restored - the staging directory, from where mmdb went. */
static void on_restored(void *ctx, const struct nsr_asm_file *f,
			const char *target)
{
	struct got *g = ctx;

	NSR_UNUSED(f);
	if (!g->stage[0])
		(void)nsr_boot_stage_of(target, g->stage, sizeof(g->stage));
}

/* on_error - a file of the bootstrap that did not come back. */
static void on_error(void *ctx, const char *path, int rc, int sys_errno,
		     const char *what)
{
	struct got *g = ctx;

	g->errors++;
	if (strstr(what, "cannot decrypt"))
		g->no_key = 1;
	fprintf(stderr, "nsrdr: %s: %s: %s\n", path, what,
		rc == NSR_ERR_SYSTEM ? strerror(sys_errno) : nsr_strerror(rc));
}

/* key_of - the data key of id: the -P pass phrase's, if it is that. */
static int key_of(void *ctx, const uint8_t *id, uint8_t *key)
{
	const struct got *g = ctx;

	if (!g->have_key || memcmp(id, g->key.id, NSR_CRYPT_ID_LEN) != 0)
		return NSR_ERR_NOTFOUND;
	memcpy(key, g->key.key, NSR_CRYPT_KEY_LEN);
	return NSR_OK;
}

/* load_phrase - the key of the pass phrase in file (its first line). */
static int load_phrase(const char *file, struct got *g)
{
	struct nsr_buf b;
	char *nl;
	int rc;

	nsr_buf_init(&b, 0);
	rc = nsr_file_read(file, &b, NSR_CRYPT_PHRASE_MAX + 2);
	if (rc != NSR_OK) {
		fprintf(stderr, "nsrdr: cannot read the pass phrase file %s: "
			"%s\n", file, rc == NSR_ERR_SYSTEM ? strerror(errno) :
			nsr_strerror(rc));
		nsr_buf_release(&b);
		return rc;
	}
	nl = memchr(b.data, '\n', b.len);
	if (nl)
		*nl = '\0';
	rc = nsr_crypt_derive(b.data, &g->key);
	nsr_crypt_wipe(b.data, b.len);
	nsr_buf_release(&b);
	if (rc != NSR_OK) {
		fprintf(stderr, "nsrdr: the first line of %s is not a usable "
			"pass phrase (1 to %d bytes)\n", file,
			NSR_CRYPT_PHRASE_MAX);
		return rc;
	}
	g->have_key = 1;
	return NSR_OK;
}

/* feed - volume data into the restore. */
static int feed(void *arg, const void *p, size_t len)
{
	return nsr_restore_feed(arg, p, len) != NSR_OK;
}

/* restore_into - the save set s, relocated under scratch. */
static int restore_into(struct nsr_dev *dev, const struct scan_result *res,
			const struct scan_ss *s, const char *scratch,
			struct got *g)
{
	struct nsr_restore_opts ro;
	struct nsr_restore_cb cb;
	struct nsr_restore *r = NULL;
	struct nsr_vol_reader *vr = NULL;
	struct nsr_buf why;
	int rc, frc;

	memset(&ro, 0, sizeof(ro));
	memset(&cb, 0, sizeof(cb));
	ro.dest = scratch;
	ro.conflict = NSR_RESTORE_OVERWRITE;
	ro.key = key_of;
	ro.key_ctx = g;
	cb.restored = on_restored;
	cb.error = on_error;
	cb.ctx = g;
	nsr_buf_init(&why, 0);
	rc = nsr_vol_reader_open(dev, res->label.volid, &vr, &why);
	if (rc == NSR_OK)
		rc = nsr_restore_new(&r, &ro, &cb);
	if (rc == NSR_OK) {
		rc = nsr_vol_reader_read(vr, &s->frag, feed, r, NULL, NULL,
					 NULL);
		frc = nsr_restore_finish(r);
		if (rc == NSR_OK)
			rc = frc;
		if (rc != NSR_OK && !why.len && *nsr_vol_reader_errmsg(vr))
			nsr_buf_addstr(&why, nsr_vol_reader_errmsg(vr));
	}
	if (rc != NSR_OK)
		fprintf(stderr, "nsrdr: cannot read bootstrap save set %u "
			"from volume %s: %s\n", s->hdr.ssid, res->label.name,
			why.len ? why.data : nsr_strerror(rc));
	nsr_restore_free(r);
	nsr_vol_reader_close(vr);
	nsr_buf_release(&why);
	if (rc == NSR_OK && g->errors)
		rc = NSR_ERR_IO;
	if (g->no_key)
		fprintf(stderr, "nsrdr: the bootstrap is encrypted with a "
			"datazone pass phrase %s: give the pass phrase it was "
			"saved with in a file, nsrdr -P FILE\n",
			g->have_key ? "other than the one given" : "");
	if (rc == NSR_OK && !g->stage[0]) {
		fprintf(stderr, "nsrdr: save set %u holds no media database "
			"snapshot: it is not a bootstrap nsrbootstrap made\n",
			s->hdr.ssid);
		rc = NSR_ERR_CORRUPT;
	}
	return rc;
}

/* recover - restore s under root's scratch directory and install it. */
static int recover(const struct opts *o, struct nsr_dev *dev,
		   const struct scan_result *res, const struct scan_ss *s)
{
	struct got g;
	struct nsr_buf err;
	char *scratch = nsr_path_join(o->root, NSR_BOOT_DIR ".dr");
	char t[32];
	int rc;

	memset(&g, 0, sizeof(g));
	nsr_buf_init(&err, 0);
	if (scratch == NULL)
		return NSRDR_EXIT_FAIL;
	if (o->phrase_file && load_phrase(o->phrase_file, &g) != NSR_OK) {
		free(scratch);
		return NSRDR_EXIT_FAIL;
	}
	printf("nsrdr: recovering bootstrap save set %u of %s, saved %s, "
	       "from volume %s\n", s->hdr.ssid, s->hdr.client,
	       when(s->hdr.savetime, t, sizeof(t)), res->label.name);
	if (nsr_boot_remove_tree(scratch) != NSR_OK ||
	    nsr_mkdir_p(scratch, 0700) != NSR_OK) {
		fprintf(stderr, "nsrdr: cannot make %s: %s\n", scratch,
			strerror(errno));
		free(scratch);
		return NSRDR_EXIT_FAIL;
	}
	rc = restore_into(dev, res, s, scratch, &g);
	if (rc == NSR_OK) {
		rc = nsr_boot_install(g.stage, o->root, &err);
		if (rc != NSR_OK)
			fprintf(stderr, "nsrdr: cannot put the bootstrap in "
				"place under %s: %s\n", o->root, err.data);
	}
	if (rc == NSR_OK &&
	    nsrdr_fix_mmdb(o->root, res, s, o->device) != 0)
		rc = NSR_ERR_IO;
	(void)nsr_boot_remove_tree(scratch);
	free(scratch);
	nsr_buf_release(&err);
	nsr_crypt_wipe(&g.key, sizeof(g.key));
	if (rc != NSR_OK)
		return NSRDR_EXIT_FAIL;
	printf("nsrdr: %s now holds the server's resources, media database, "
	       "jobs database, client file indexes and TLS files (the "
	       "datazone CA) as of %s; start the server: nsrd -R %s\n",
	       o->root, when(s->hdr.savetime, t, sizeof(t)), o->root);
	return 0;
}

/* main - check the root, scan the volume, pick, recover. */
int main(int argc, char **argv)
{
	struct opts o;
	struct nsr_dev *dev = NULL;
	struct scan_result res;
	struct nsr_buf why;
	const struct scan_ss *s;
	int rc, ret = NSRDR_EXIT_FAIL;

	rc = parse(argc, argv, &o);
	if (rc != 0) {
		if (rc < 0)
			usage(stderr);
		return rc > 0 ? 0 : NSRDR_EXIT_USAGE;
	}
	nsr_buf_init(&why, 0);
	memset(&res, 0, sizeof(res));
	if (!o.list && nsr_boot_check_empty(o.root, &why) != NSR_OK) {
		fprintf(stderr, "nsrdr: %s is not empty: it holds %s; "
			"recover into an empty root with the server's "
			"daemons stopped (move these away first)\n", o.root,
			why.data);
		nsr_buf_release(&why);
		return NSRDR_EXIT_NOT_EMPTY;
	}
	if (scan_device("nsrdr", o.type, o.device, &dev, &res, &why) == 1)
		goto out;
	s = pick(&o, &res);
	if (o.list)
		ret = s ? 0 : NSRDR_EXIT_FAIL;
	else if (s)
		ret = recover(&o, dev, &res, s);
out:
	scan_result_release(&res);
	nsr_dev_close(dev);
	nsr_buf_release(&why);
	return ret;
}
