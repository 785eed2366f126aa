/*
 * bench_mmdel.c - the media database of run-mmdel.sh: one volume whose
 * deletion (or relabel) takes many save sets with it.
 *
 *        bench_mmdel -B N -d dir
 *   writes dir/mm: AFTD volumes bench.001 and bench.002 and N save sets
 *   of client "bench" (ssids 1..N, as bench_ixdel -B numbers those of
 *   its index), each with one fragment of 1 MB on bench.001; every
 *   tenth (ssid % 10 == 0) has a second clone instance on bench.002, so
 *   it survives bench.001.  bench.001's written figure is N MB.
 *        bench_mmdel -s server -n N
 *   asks nsrmmdbd on server for the fragments of save sets 1..N, one
 *   MM_FRAG_LIST each (what nsrd asks per save set to know whether a
 *   copy survives elsewhere), and prints the seconds.
 * Not run by ctest; results go to tests/bench/mmdb/RESULTS.md.
 */
#include "nsr/compat.h"

#include <unistd.h>

#include "nsr/clock.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/mmdb.h"
#include "nsr/mmdb_clnt.h"

#define BASE_TIME 1700000000LL
#define MB	  1048576ull

/* die - report a library failure and exit. */
static void die(const char *what, int rc)
{
	fprintf(stderr, "bench_mmdel: %s: %s\n", what, nsr_strerror(rc));
	exit(1);
}

/* put_vol - volume bench.00<k> (volume id k), an AFTD. */
static int put_vol(struct mmdb *db, struct mmdb_txn *t, unsigned k,
		   uint64_t written)
{
	struct mmdb_volume v;

	memset(&v, 0, sizeof(v));
	snprintf(v.name, sizeof(v.name), "bench.%03u", k);
	v.volid[0] = 0x42;
	v.volid[15] = (uint8_t)k;
	snprintf(v.pool, sizeof(v.pool), "Default");
	snprintf(v.type, sizeof(v.type), "adv_file");
	v.block_size = 262144;
	v.written = written;
	v.olabel = v.labeled = BASE_TIME;
	return mmdb_vol_put(db, t, &v);
}

/* put_frag - save set ssid's fragment of clone instance cloneid on
 * volume bench.00<k>. */
static int put_frag(struct mmdb *db, struct mmdb_txn *t, uint32_t ssid,
		    uint32_t cloneid, unsigned k)
{
	struct mmdb_fragment f;

	memset(&f, 0, sizeof(f));
	f.ssid = ssid;
	f.cloneid = cloneid;
	f.volid[0] = 0x42;
	f.volid[15] = (uint8_t)k;
	f.size = MB;
	f.offset = (uint64_t)ssid * MB;
	f.flags = MMDB_FRAG_COMPLETE;
	return mmdb_frag_add(db, t, &f);
}

/* put_ss - save set ssid with its fragments (see the top). */
static int put_ss(struct mmdb *db, struct mmdb_txn *t, uint32_t ssid)
{
	struct mmdb_saveset ss;
	struct mmdb_clone cl;
	uint32_t cid = ssid; /* cloneid 1 + ssid below: never equal */
	int rc;

	memset(&ss, 0, sizeof(ss));
	ss.ssid = ssid;
	snprintf(ss.client, sizeof(ss.client), "bench");
	snprintf(ss.name, sizeof(ss.name), "/b");
	snprintf(ss.pool, sizeof(ss.pool), "Default");
	ss.flags = MMDB_SS_VALID | MMDB_SS_FINISHED | MMDB_SS_BROWSABLE;
	ss.savetime = BASE_TIME + ssid;
	ss.sscreate = ss.savetime;
	ss.sscomp = ss.savetime + 1;
	ss.ssbrowse = ss.savetime + 86400 * 3650;
	ss.ssretent = ss.ssbrowse;
	ss.totalsize = MB;
	ss.nfiles = 1;
	rc = mmdb_ss_restore(db, t, &ss, cid);
	if (rc == NSR_OK)
		rc = put_frag(db, t, ssid, cid, 1);
	if (rc == NSR_OK && ssid % 10 == 0) {
		memset(&cl, 0, sizeof(cl));
		cl.ssid = ssid;
		cl.cloneid = cid + 1;
		cl.clone_time = ss.sscomp + 60;
		cl.clretent = ss.ssretent;
		rc = mmdb_clone_add(db, t, &cl, NULL);
		if (rc == NSR_OK)
			rc = put_frag(db, t, ssid, cid + 1, 2);
	}
	return rc;
}

/* build - dir/mm as the top of the file says. */
static void build(const char *dir, uint32_t n)
{
	struct mmdb_txn *t = NULL;
	struct mmdb_opts o;
	struct mmdb *db = NULL;
	char path[4096];
	int rc;

	snprintf(path, sizeof(path), "%s/mm", dir);
	rc = nsr_mkdir_p(path, 0700);
	if (rc == NSR_OK) {
		mmdb_opts_init(&o);
		rc = mmdb_open(path, &o, &db);
	}
	if (rc)
		die(path, rc);
	rc = mmdb_txn_begin(db, &t);
	if (rc == NSR_OK)
		rc = put_vol(db, t, 1, n * MB);
	if (rc == NSR_OK)
		rc = put_vol(db, t, 2, (n / 10) * MB);
	for (uint32_t i = 1; rc == NSR_OK && i <= n; i++) {
		rc = put_ss(db, t, i);
		if (rc == NSR_OK && i % 1000 == 0) {
			rc = mmdb_txn_commit(t);
			t = NULL;
			if (rc == NSR_OK)
				rc = mmdb_txn_begin(db, &t);
		}
	}
	rc = mmdb_txn_end(t, rc);
	if (rc)
		die("build", rc);
	mmdb_close(db);
}

/* frag_lists - one MM_FRAG_LIST of each of 1..n at server; seconds. */
static double frag_lists(const char *server, uint32_t n)
{
	struct mmdb_fragment fr[MMDB_FRAGS_MAX];
	struct mmdb_clnt *c = NULL;
	struct nsr_buf err;
	uint64_t t0;
	size_t nf;
	int rc;

	nsr_buf_init(&err, 0);
	rc = mmdb_clnt_open(server, &c, &err);
	if (rc) {
		fprintf(stderr, "bench_mmdel: %s: %s\n", server, err.data);
		exit(1);
	}
	nsr_buf_release(&err);
	t0 = nsr_clock_mono_us();
	for (uint32_t i = 1; i <= n; i++) {
		rc = mmdb_clnt_frag_list(c, i, fr, MMDB_FRAGS_MAX, &nf);
		if (rc != NSR_OK && rc != NSR_ERR_NOTFOUND)
			die("frag list", rc);
	}
	mmdb_clnt_close(c);
	return (double)(nsr_clock_mono_us() - t0) / 1e6;
}

/* main - -B N -d dir, or -s server -n N. */
int main(int argc, char **argv)
{
	const char *dir = NULL, *server = NULL;
	unsigned long n = 0;
	int opt, gen = 0;

	while ((opt = getopt(argc, argv, "B:n:d:s:")) != -1) {
		if (opt == 'B' || opt == 'n') {
			n = strtoul(optarg, NULL, 10);
			gen = opt == 'B';
		} else if (opt == 'd') {
			dir = optarg;
		} else if (opt == 's') {
			server = optarg;
		} else {
			n = 0;
			break;
		}
	}
	if (n == 0 || n > UINT32_MAX / 10 || (gen ? !dir : !server)) {
		fprintf(stderr,
			"usage: bench_mmdel -B N -d dir | -s server -n N\n");
		return 2;
	}
	if (gen)
		build(dir, (uint32_t)n);
	else
		printf("%.3f\n", frag_lists(server, (uint32_t)n));
	return 0;
}
