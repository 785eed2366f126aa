/*
 * nsrbootstrap - back up the server's own state (resources, a media
 * database snapshot, a jobs database copy, the client file indexes and
 * the datazone's TLS files) as one level full save set named
 * "bootstrap" of the server's client, through the normal save path
 * (boot.h says what the set holds).  Runs on the server, with its root;
 * nsrd runs it after each scheduled group.  nsrdr(8) puts it back.
 */
#include "nsr/compat.h"

#include <getopt.h>
#include <unistd.h>

#include "nsr/boot.h"
#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/host.h"
#include "nsr/jobd_clnt.h"
#include "nsr/mmdb_clnt.h"
#include "nsr/rpc.h"
#include "nsr/session.h"

/* How long to wait for another bootstrap of the root (two groups that
 * end together each start one). */
#define NSRBOOTSTRAP_LOCK_WAIT_MS (10 * 60 * 1000)

struct opts {
	const char *root;   /* -R */
	const char *server; /* -s */
	const char *client; /* -c */
	const char *pool;   /* -b */
	const char *group;  /* -g */
	int quiet;	    /* -q */
};

/* usage - short and exact. */
static void usage(FILE *f)
{
	fprintf(f,
		"usage: nsrbootstrap [-q] [-R root] [-s server] [-c client] "
		"[-b pool] [-g group]\n"
		"  -R root    the server's root (default $NSR_ROOT, else %s)\n"
		"  -s server  the server (default: this host)\n"
		"  -c client  the server's client name (default: this host)\n"
		"  -b pool    pool to write to (default: chosen by the "
		"server)\n"
		"  -g group   the group whose run this bootstrap follows\n"
		"  -q         print only errors\n"
		"The bootstrap is encrypted with the datazone pass phrase "
		"when one is set\n"
		"(nsrdr -P needs it), else saved in clear, with a warning.\n"
		"  -h, --help this help\n"
		"exit: 0 bootstrap saved, 1 failed, 2 usage error\n",
		NSR_DEFAULT_ROOT);
}

/* parse - the options; 0, 1 (help) or -1 (usage error). */
static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {{"help", no_argument, NULL, 'h'},
					   {NULL, 0, NULL, 0}};
	const char *env = getenv("NSR_ROOT");
	int c;

	memset(o, 0, sizeof(*o));
	o->root = env && *env ? env : NSR_DEFAULT_ROOT;
	while ((c = getopt_long(argc, argv, "R:s:c:b:g:qh", lo, NULL)) != -1) {
		switch (c) {
		case 'R': o->root = optarg; break;
		case 's': o->server = optarg; break;
		case 'c': o->client = optarg; break;
		case 'b': o->pool = optarg; break;
		case 'g': o->group = optarg; break;
		case 'q': o->quiet = 1; break;
		case 'h': usage(stdout); return 1;
		default: return -1;
		}
	}
	return optind == argc ? 0 : -1;
}

/* test_stall - the test knob NSR_TEST_BOOT_STALL_SEC (<= 600): wait
 * that long between the databases' snapshot and the copy of the indexes
 * (a test ends a save in between; nsrdr(8) makes the indexes agree). */
static void test_stall(void)
{
	const char *e = getenv("NSR_TEST_BOOT_STALL_SEC");
	long v = e ? strtol(e, NULL, 10) : 0;

	if (v > 0 && v <= 600)
		sleep((unsigned)v);
}

/* snapshot_dbs - the media database snapshot and the jobs database copy
 * into the staging directory, written there by their daemons. */
static int snapshot_dbs(const struct opts *o, const char *stage,
			struct nsr_buf *err)
{
	struct mmdb_clnt *mc = NULL;
	struct nsr_jobd *j = NULL;
	uint64_t seq = 0, mbytes = 0, jbytes = 0;
	char *p;
	int rc;

	rc = mmdb_clnt_open(o->server, &mc, err);
	if (rc == NSR_OK) {
		rc = mmdb_clnt_snapshot(mc, &seq, &mbytes);
		if (rc != NSR_OK)
			nsr_buf_addf(err, "media database snapshot: %s",
				     mmdb_clnt_errmsg(mc));
		mmdb_clnt_close(mc);
	}
	if (rc != NSR_OK)
		return rc;
	rc = nsr_jobd_open(o->server, &j, err);
	if (rc == NSR_OK) {
		rc = nsr_jobd_backup(j, &jbytes, err);
		nsr_jobd_close(j);
	}
	if (rc != NSR_OK) {
		nsr_buf_addstr(err, " (jobs database copy)");
		return rc;
	}
	/* The daemons wrote into their root: it must be ours. */
	p = nsr_path_join(stage, NSR_BOOT_MMDB);

	if (p == NULL)
		return NSR_ERR_NOMEM;
	if (access(p, R_OK) != 0) {
		nsr_buf_addf(err, "the snapshot nsrmmdbd of %s made is not in "
			     "%s: run nsrbootstrap on the server with the "
			     "server's root (-R)", o->server, stage);
		rc = NSR_ERR_NOTFOUND;
	}
	free(p);
	if (rc == NSR_OK && !o->quiet)
		printf("nsrbootstrap: media database snapshot (commit %llu, "
		       "%llu bytes), jobs database copy (%llu bytes)\n",
		       (unsigned long long)seq, (unsigned long long)mbytes,
		       (unsigned long long)jbytes);
	fflush(stdout); /* a progress line, also into a file */
	return rc;
}

/* warn - the session's warnings, on stderr. */
static void warn(void *ctx, const char *msg)
{
	NSR_UNUSED(ctx);
	fprintf(stderr, "nsrbootstrap: %s\n", msg);
}

/* file_error - a file of the staging directory that could not be saved. */
static void file_error(void *ctx, const char *path, int err,
		       const char *what)
{
	NSR_UNUSED(ctx);
	fprintf(stderr, "nsrbootstrap: %s: %s (%s)\n", path, what,
		nsr_strerror(err));
}

/* save_stage - the staging directory as the bootstrap save set: its file
 * data encrypted with the datazone pass phrase's key when one is set
 * (nsrdr -P then needs the pass phrase), else in clear, with a warning:
 * it holds the CA's key and the kept pass phrases. */
static int save_stage(const struct opts *o, char *stage,
		      struct nsr_session_save_result *r, struct nsr_buf *err)
{
	struct nsr_session_save_opts so;
	int rc;

	memset(&so, 0, sizeof(so));
	so.server = o->server;
	so.client = o->client;
	so.name = NSR_BOOT_SSNAME;
	so.level = "full";
	so.pool = o->pool ? o->pool : "";
	so.group = o->group;
	so.command = "nsrbootstrap";
	so.no_index = 1;
	so.no_directives = 1; /* not the client resource's choice */
	so.encrypt = NSR_SESSION_ENCRYPT_IF_SET;
	so.warn = warn;
	so.file_error = file_error;
	rc = nsr_session_save(&so, &stage, 1, r, err);
	if (rc == NSR_OK && !r->encrypted)
		fprintf(stderr, "nsrbootstrap: warning: no datazone pass "
			"phrase is set, so the bootstrap is saved in clear: "
			"its volume holds the datazone CA's key as it is; set "
			"the NSR resource's 'datazone pass phrase' to have it "
			"encrypted\n");
	return rc;
}

/* main - lock, stage, save, clean up. */
int main(int argc, char **argv)
{
	struct opts o;
	struct nsr_session_save_result r;
	struct nsr_buf err;
	char host[NSR_HOST_MAX + 1];
	char *stage = NULL;
	uint64_t files = 0;
	int lock = -1, rc;

	rc = parse(argc, argv, &o);
	if (rc != 0) {
		if (rc < 0)
			usage(stderr);
		return rc > 0 ? 0 : 2;
	}
	nsr_host_self(host, sizeof(host));
	if (!o.server)
		o.server = host;
	if (!o.client)
		o.client = host;
	nsr_buf_init(&err, 0);
	memset(&r, 0, sizeof(r));
	rc = nsr_boot_lock(o.root, NSRBOOTSTRAP_LOCK_WAIT_MS, &lock, &err);
	if (rc == NSR_OK)
		rc = nsr_boot_prepare(o.root, &stage, &err);
	if (rc == NSR_OK)
		rc = snapshot_dbs(&o, stage, &err);
	if (rc == NSR_OK)
		test_stall();
	if (rc == NSR_OK)
		rc = nsr_boot_stage(o.root, stage, &files, &err);
	if (rc == NSR_OK)
		rc = save_stage(&o, stage, &r, &err);
	if (rc == NSR_OK && r.st.errors) {
		nsr_buf_addf(&err, "%llu files of the staging directory could "
			     "not be saved", (unsigned long long)r.st.errors);
		rc = NSR_ERR_IO;
	}
	if (stage)
		(void)nsr_boot_remove_tree(stage);
	nsr_boot_unlock(lock);
	if (rc != NSR_OK) {
		fprintf(stderr, "nsrbootstrap: bootstrap of %s failed: %s\n",
			o.server, err.len ? err.data : nsr_strerror(rc));
		free(stage);
		nsr_buf_release(&err);
		return 1;
	}
	if (!o.quiet)
		printf("nsrbootstrap: bootstrap save set %u of %s saved to "
		       "pool %s (%llu bytes, %llu files%s; list with mminfo "
		       "-B)\n", r.ssid, o.client, r.pool,
		       (unsigned long long)r.st.stream_bytes,
		       (unsigned long long)r.st.files,
		       r.encrypted ? ", encrypted with the datazone pass "
				   "phrase: nsrdr -P needs it"
				 : ", in clear");
	free(stage);
	nsr_buf_release(&err);
	return 0;
}
