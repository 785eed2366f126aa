/*
 * nsrdr - disaster recovery of the server from a bootstrap on a volume
 * (NetWorker's nsrdr / mmrecov): on an empty root, with the server's
 * daemons stopped, find the newest bootstrap save set on the volumes
 * given (or the one -B names) by reading them as scanner does, restore
 * it, and put its parts in place (boot.h): the resources, the media
 * database (with the bootstrap save set itself added: mmdb.c), the jobs
 * database, the client file indexes and the datazone's TLS files.  Then
 * nsrd starts on the root as before the loss.  A bootstrap that spanned
 * volumes is whole when every one of its fragments is on a volume given
 * (-d once per device, in any order).
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
#define NSRDR_DEVS_MAX 16 /* -d given at most this often */

struct opts {
	const char *root;   /* -R */
	const char *devices[NSRDR_DEVS_MAX]; /* -d, in the order given */
	size_t ndev;
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
		"usage: nsrdr -d device [-d device ...] [-t type] [-B ssid] "
		"[-R root]\n"
		"             [-P file] [-l]\n"
		"  -d device  a volume's device (AFTD directory, vtape file "
		"or tape); once\n"
		"             per volume of a bootstrap that spans volumes\n"
		"  -t type    adv_file, vtape or tape (default: guessed from "
		"each path)\n"
		"  -B ssid    this bootstrap save set (default: the newest "
		"whole one)\n"
		"  -R root    the server's root to recover into, empty, "
		"daemons stopped\n"
		"             (default $NSR_ROOT, else %s)\n"
		"  -P file    the datazone pass phrase (the file's first "
		"line) the bootstrap\n"
		"             was encrypted with (nsrbootstrap says whether "
		"it was)\n"
		"  -l         only list the bootstrap save sets on the "
		"volumes\n"
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
			if (o->ndev == NSRDR_DEVS_MAX) {
				fprintf(stderr, "nsrdr: at most %d devices "
					"(-d)\n", NSRDR_DEVS_MAX);
				return -1;
			}
			o->devices[o->ndev++] = optarg;
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
	if (optind != argc || o->ndev == 0)
		return -1;
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

/* A scanned volume. */
struct vol {
	const char *device;
	struct nsr_dev *dev;
	struct scan_result res;
	int scanned;
};

/* One bootstrap save set found on the volumes: its fragments in order
 * (pieces[0..n)), whole when they are all there. */
struct boot {
	uint32_t ssid;
	int64_t savetime;
	struct nsrdr_piece pieces[NSRDR_DEVS_MAX];
	size_t n;
	int whole;
};

/* by_seq - order of a bootstrap's pieces: fragment number. */
static int by_seq(const void *a, const void *b)
{
	const struct nsrdr_piece *x = a, *y = b;
	uint32_t p = x->ss->span.frag_seq, q = y->ss->span.frag_seq;

	return p < q ? -1 : p > q;
}

/* gather - the bootstrap save sets of the volumes into b[0..*nb), each
 * with its pieces in order and whether they make it whole: fragments 0
 * to n-1, the first begun and the last ended well, none damaged. */
static int gather(const struct vol *v, size_t nv, struct boot **out,
		  size_t *nb)
{
	struct boot *b = NULL;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < nv; i++)
		for (size_t k = 0; k < v[i].res.n; k++) {
			const struct scan_ss *x = &v[i].res.ss[k];
			size_t j;

			if (strcmp(x->hdr.name, NSR_BOOT_SSNAME) != 0)
				continue;
			for (j = 0; j < n && b[j].ssid != x->hdr.ssid; j++)
				;
			if (j == n) {
				if (n == cap) {
					struct boot *nb2;

					cap = cap ? cap * 2 : 8;
					nb2 = realloc(b, cap * sizeof(*b));
					if (!nb2) {
						free(b);
						return NSR_ERR_NOMEM;
					}
					b = nb2;
				}
				memset(&b[n], 0, sizeof(b[n]));
				b[n].ssid = x->hdr.ssid;
				b[n++].savetime = x->hdr.savetime;
			}
			if (b[j].n < NSRDR_DEVS_MAX)
				b[j].pieces[b[j].n++] = (struct nsrdr_piece){
					&v[i].res, x, v[i].device};
		}
	for (size_t j = 0; j < n; j++) {
		struct boot *x = &b[j];
		const struct scan_ss *last;

		qsort(x->pieces, x->n, sizeof(x->pieces[0]), by_seq);
		last = x->pieces[x->n - 1].ss;
		x->whole = x->pieces[0].ss->has_begin && last->has_end &&
			   last->tail.status == NSR_VOL_SS_OK;
		for (size_t k = 0; k < x->n; k++)
			if (x->pieces[k].ss->span.frag_seq != k ||
			    x->pieces[k].ss->damaged ||
			    (k + 1 < x->n && x->pieces[k].ss->has_end))
				x->whole = 0;
	}
	*out = b;
	*nb = n;
	return NSR_OK;
}

/* say_volumes - the volumes' names, for a message. */
static void say_volumes(const struct vol *v, size_t nv, char *buf,
			size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < nv && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s (%s)",
				       i ? ", " : "", v[i].res.label.name,
				       v[i].device);
}

/* pick - the bootstrap save set to restore (into *out), or -1 (the
 * reason printed); with list, print them all. */
static int pick(const struct opts *o, const struct vol *v, size_t nv,
		struct boot *out)
{
	struct nsr_boot_cand *c = NULL;
	struct boot *b = NULL;
	char t[32], names[1024];
	size_t n = 0;
	long i = -1;

	if (gather(v, nv, &b, &n) != NSR_OK ||
	    !(c = calloc(n + 1, sizeof(*c)))) {
		fprintf(stderr, "nsrdr: out of memory\n");
		free(b);
		return -1;
	}
	for (size_t k = 0; k < n; k++) {
		c[k].ssid = b[k].ssid;
		c[k].savetime = b[k].savetime;
		c[k].whole = b[k].whole;
		if (o->list)
			printf("%s  ssid %u  client %s  %s%s\n",
			       when(b[k].savetime, t, sizeof(t)), b[k].ssid,
			       b[k].pieces[0].ss->hdr.client,
			       b[k].whole ? "whole"
			       : "not whole on these volumes (unusable",
			       b[k].whole ? "" : b[k].pieces[b[k].n - 1]
						 .ss->has_end
				   ? ": a volume it spans is missing)"
				   : ": it continues on another volume, "
				     "give its device too)");
	}
	i = nsr_boot_pick(c, n, o->ssid);
	say_volumes(v, nv, names, sizeof(names));
	if (i >= 0)
		*out = b[i];
	else if (o->ssid)
		fprintf(stderr, "nsrdr: %s %s %s no whole bootstrap save "
			"set %u (nsrdr -l lists those there; one that spans "
			"needs every volume it is on, -d each)\n",
			nv == 1 ? "volume" : "volumes", names,
			nv == 1 ? "holds" : "hold", o->ssid);
	else
		fprintf(stderr, "nsrdr: %s %s %s no whole bootstrap save "
			"set: try another volume of the pool the "
			"bootstraps went to (mminfo -B listed them; one that "
			"spans needs every volume it is on, -d each), or "
			"rebuild from the volumes alone: start nsrd on the "
			"empty root, label nothing, and run scanner -m -i on "
			"every volume\n", nv == 1 ? "volume" : "volumes",
			names, nv == 1 ? "holds" : "hold");
	free(c);
	free(b);
	return i >= 0 ? 0 : -1;
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

/* read_pieces - the bootstrap's fragments, in order, into r. */
static int read_pieces(const struct vol *v, size_t nv, const struct boot *bt,
		       struct nsr_restore *r, struct nsr_buf *why)
{
	int rc = NSR_OK;

	for (size_t k = 0; rc == NSR_OK && k < bt->n; k++) {
		const struct nsrdr_piece *p = &bt->pieces[k];
		struct nsr_vol_reader *vr = NULL;
		size_t i;

		for (i = 0; i < nv && &v[i].res != p->res; i++)
			;
		rc = nsr_vol_reader_open(v[i].dev, p->res->label.volid, &vr,
					 why);
		if (rc == NSR_OK)
			rc = nsr_vol_reader_read(vr, &p->ss->frag, feed, r,
						 NULL, NULL, NULL);
		if (rc == NSR_ERR_EOM && k + 1 < bt->n)
			rc = NSR_OK; /* continues on the next volume */
		if (rc != NSR_OK && !why->len && vr &&
		    *nsr_vol_reader_errmsg(vr))
			nsr_buf_addf(why, "volume %s: %s", p->res->label.name,
				     nsr_vol_reader_errmsg(vr));
		nsr_vol_reader_close(vr);
	}
	return rc;
}

/* restore_into - the bootstrap bt, relocated under scratch. */
static int restore_into(const struct vol *v, size_t nv,
			const struct boot *bt, const char *scratch,
			struct got *g)
{
	struct nsr_restore_opts ro;
	struct nsr_restore_cb cb;
	struct nsr_restore *r = NULL;
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
	rc = nsr_restore_new(&r, &ro, &cb);
	if (rc == NSR_OK) {
		rc = read_pieces(v, nv, bt, r, &why);
		frc = nsr_restore_finish(r);
		if (rc == NSR_OK)
			rc = frc;
	}
	if (rc != NSR_OK)
		fprintf(stderr, "nsrdr: cannot read bootstrap save set %u: "
			"%s\n", bt->ssid,
			why.len ? why.data : nsr_strerror(rc));
	nsr_restore_free(r);
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
			bt->ssid);
		rc = NSR_ERR_CORRUPT;
	}
	return rc;
}

/* recover - restore s under root's scratch directory and install it. */
static int recover(const struct opts *o, const struct vol *v, size_t nv,
		   const struct boot *bt)
{
	const struct scan_ss *s = bt->pieces[0].ss;
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
	       "from volume %s%s\n", s->hdr.ssid, s->hdr.client,
	       when(s->hdr.savetime, t, sizeof(t)),
	       bt->pieces[0].res->label.name,
	       bt->n > 1 ? " and the volumes it continues on" : "");
	if (nsr_boot_remove_tree(scratch) != NSR_OK ||
	    nsr_mkdir_p(scratch, 0700) != NSR_OK) {
		fprintf(stderr, "nsrdr: cannot make %s: %s\n", scratch,
			strerror(errno));
		free(scratch);
		return NSRDR_EXIT_FAIL;
	}
	rc = restore_into(v, nv, bt, scratch, &g);
	if (rc == NSR_OK) {
		rc = nsr_boot_install(g.stage, o->root, &err);
		if (rc != NSR_OK)
			fprintf(stderr, "nsrdr: cannot put the bootstrap in "
				"place under %s: %s\n", o->root, err.data);
	}
	if (rc == NSR_OK && nsrdr_fix_mmdb(o->root, bt->pieces, bt->n) != 0)
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

/* main - check the root, scan the volumes, pick, recover. */
int main(int argc, char **argv)
{
	struct opts o;
	struct vol v[NSRDR_DEVS_MAX];
	struct boot bt;
	struct nsr_buf why;
	size_t nv = 0;
	int rc, ret = NSRDR_EXIT_FAIL;

	rc = parse(argc, argv, &o);
	if (rc != 0) {
		if (rc < 0)
			usage(stderr);
		return rc > 0 ? 0 : NSRDR_EXIT_USAGE;
	}
	nsr_buf_init(&why, 0);
	memset(v, 0, sizeof(v));
	if (!o.list && nsr_boot_check_empty(o.root, &why) != NSR_OK) {
		fprintf(stderr, "nsrdr: %s is not empty: it holds %s; "
			"recover into an empty root with the server's "
			"daemons stopped (move these away first)\n", o.root,
			why.data);
		nsr_buf_release(&why);
		return NSRDR_EXIT_NOT_EMPTY;
	}
	for (; nv < o.ndev; nv++) {
		v[nv].device = o.devices[nv];
		nsr_buf_reset(&why);
		if (scan_device("nsrdr", o.have_type ? o.type
					 : scan_guess_type(v[nv].device),
				v[nv].device, &v[nv].dev, &v[nv].res,
				&why) == 1) {
			nv++; /* released below */
			goto out;
		}
	}
	if (pick(&o, v, nv, &bt) != 0)
		goto out;
	if (o.list)
		ret = 0;
	else
		ret = recover(&o, v, nv, &bt);
out:
	for (size_t i = 0; i < nv; i++) {
		scan_result_release(&v[i].res);
		nsr_dev_close(v[i].dev);
	}
	nsr_buf_release(&why);
	return ret;
}
