/*
 * bench_ixdel.c - removing many save sets from one client's file index
 * at the library level: the former way (one nsr_cfi_delete, so one
 * catalogue replacement, per save set) against one nsr_cfi_delete_many,
 * side by side on two copies of the same index.
 *
 * The index: -n save sets of one client, one second apart, each with
 * two entries (/b and a file of its own) and the entry list of /b,
 * the same in every save set, so every list after the first is a
 * reference to save set 1 (record file version 4): deleting save set 1
 * keeps its record file for the others (cfi.c invariant 9), as a
 * client's full does for its incrementals.  Deleted: every other save
 * set (the odd ssids: save set 1 among them), half of them.
 *
 * Reported per -n: seconds of the build (not compared), of the
 * deletes one by one and of the one batched call, and the catalogue's
 * bytes; both indexes are then checked (nsr_cfi_check) and must hold
 * the same save sets.
 *
 * Usage: bench_ixdel [-n N[,N...]] [-d dir]
 *   the library, both ways, side by side;
 *        bench_ixdel -B N -d root
 *   build the index of N save sets under root and stop (run-ixdel.sh);
 *        bench_ixdel -s server -n N [-1]
 *   remove the odd save sets of 1..N from the index of nsrindexd on
 *   server with nsr_ixclnt_delete_many (-1: one nsr_ixclnt_delete each)
 *   and print the seconds (run-ixdel.sh).
 * Not run by ctest; results go to tests/bench/index/RESULTS.md.
 */
#include "nsr/compat.h"

#include <sys/stat.h>
#include <unistd.h>

#include "nsr/cfi.h"
#include "nsr/clock.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/index_clnt.h"

#define BASE_TIME 1700000000LL

/* die - report a library failure and exit. */
static void die(const char *what, int rc)
{
	fprintf(stderr, "bench_ixdel: %s: %s\n", what, nsr_strerror(rc));
	exit(1);
}

/* now_s - monotonic seconds. */
static double now_s(void)
{
	return (double)nsr_clock_mono_us() / 1e6;
}

/* open_ix - the writer handle of the client of root (made if asked). */
static struct nsr_cfi *open_ix(const char *root, int create)
{
	struct nsr_cfi *c = NULL;
	int rc = nsr_cfi_open(&c, root, "bench", create ? NSR_CFI_CREATE : 0);

	if (rc)
		die("open", rc);
	return c;
}

/* build - n save sets under root (see the top of the file). */
static void build(const char *root, size_t n)
{
	static const char *const names[] = {"a", "b", "c"};
	struct nsr_cfi *c = open_ix(root, 1);
	char path[64];
	int rc = NSR_OK;

	for (size_t i = 1; i <= n && rc == NSR_OK; i++) {
		struct nsr_cfi_entry e[2] = {
			{.path = "/b", .type = 2, .mode = 0755},
			{.path = path, .type = 1, .mode = 0644, .size = i},
		};

		snprintf(path, sizeof(path), "/b/f%zu", i);
		rc = nsr_cfi_begin(c, i, BASE_TIME + (int64_t)i, "/b");
		if (rc == NSR_OK)
			rc = nsr_cfi_add(c, i, e, 2);
		if (rc == NSR_OK)
			rc = nsr_cfi_add_list(c, i, "/b", 3, 0, names, 3);
		if (rc == NSR_OK)
			rc = nsr_cfi_commit(c, i);
	}
	if (rc)
		die("build", rc);
	nsr_cfi_close(c);
}

/* count_one - count save sets (nsr_cfi_savesets), summing their ids. */
static int count_one(void *ctx, const struct nsr_cfi_saveset *ss)
{
	uint64_t *v = ctx;

	v[0]++;
	v[1] += ss->ssid;
	return 0;
}

/* verify - the index of root holds the even save sets of n, checks
 * healthy, and keeps save set 1's record file; its count and id sum in
 * v[0..2). */
static void verify(const char *root, size_t n, uint64_t *v)
{
	struct nsr_cfi *c = open_ix(root, 0);
	size_t problems = 1;
	char *p = NULL;
	struct stat st;
	int rc;

	v[0] = v[1] = 0;
	rc = nsr_cfi_savesets(c, count_one, v);
	if (rc == NSR_OK)
		rc = nsr_cfi_check_level(c, 1, NULL, NULL, &problems);
	if (rc)
		die("verify", rc);
	if (v[0] != n / 2 || problems != 0) {
		fprintf(stderr, "bench_ixdel: %s: %llu save sets, %zu "
			"problems\n", root, (unsigned long long)v[0],
			problems);
		exit(1);
	}
	if (asprintf(&p, "%s/index/bench/ss-1.rec", root) < 0 ||
	    stat(p, &st) != 0) {
		fprintf(stderr, "bench_ixdel: %s: save set 1's record file "
			"(named by the lists of others) is gone\n", root);
		exit(1);
	}
	free(p);
	nsr_cfi_close(c);
}

/* one_n - build, copy, delete both ways, verify, print a row. */
static void one_n(const char *dir, size_t n)
{
	char *a = NULL, *b = NULL, *cmd = NULL, *cat = NULL;
	uint64_t *ids = calloc(n / 2 + 1, sizeof(*ids));
	uint64_t va[2], vb[2];
	struct nsr_cfi *c;
	size_t k = 0, removed = 0;
	double t0, tb, to, tn;
	struct stat st;
	int rc;

	if (ids == NULL || asprintf(&a, "%s/one-%zu", dir, n) < 0 ||
	    asprintf(&b, "%s/many-%zu", dir, n) < 0 ||
	    asprintf(&cmd, "rm -rf '%s' '%s' && mkdir -p '%s'", a, b, a) < 0)
		die("setup", NSR_ERR_NOMEM);
	if (system(cmd) != 0)
		die("rm/mkdir", NSR_ERR_SYSTEM);
	free(cmd);
	t0 = now_s();
	build(a, n);
	tb = now_s() - t0;
	if (asprintf(&cmd, "cp -a '%s' '%s' && sync", a, b) < 0 ||
	    system(cmd) != 0)
		die("cp", NSR_ERR_SYSTEM);
	free(cmd);
	if (asprintf(&cat, "%s/index/bench/catalog", a) < 0 ||
	    stat(cat, &st) != 0)
		die("stat catalog", NSR_ERR_SYSTEM);
	for (size_t i = 1; i <= n; i += 2)
		ids[k++] = i;

	/* the former way: one call, one catalogue replacement, each */
	c = open_ix(a, 0);
	t0 = now_s();
	for (size_t i = 0; i < k; i++)
		if ((rc = nsr_cfi_delete(c, ids[i])) != NSR_OK)
			die("delete", rc);
	to = now_s() - t0;
	nsr_cfi_close(c);

	/* one call */
	c = open_ix(b, 0);
	t0 = now_s();
	rc = nsr_cfi_delete_many(c, ids, k, &removed);
	tn = now_s() - t0;
	if (rc)
		die("delete_many", rc);
	nsr_cfi_close(c);
	if (removed != k)
		die("delete_many removed fewer", NSR_ERR_NOTFOUND);

	verify(a, n, va);
	verify(b, n, vb);
	if (va[1] != vb[1])
		die("the two indexes differ", NSR_ERR_MISMATCH);
	printf("| %zu | %zu | %.1f | %lld | %.2f | %.4f | %.0fx |\n", n, k,
	       tb, (long long)st.st_size, to, tn, tn > 0 ? to / tn : 0.0);
	fflush(stdout);
	if (asprintf(&cmd, "rm -rf '%s' '%s'", a, b) < 0 || system(cmd) != 0)
		die("rm", NSR_ERR_SYSTEM);
	free(cmd);
	free(cat);
	free(ids);
	free(a);
	free(b);
}

/* remote - remove the odd save sets of 1..n from client "bench" at
 * nsrindexd on server, one request each (one) or in one call; print
 * the seconds. */
static void remote(const char *server, size_t n, int one)
{
	uint64_t *ids = calloc(n / 2 + 1, sizeof(*ids));
	struct nsr_ixclnt *ix = NULL;
	size_t k = 0, removed = 0;
	double t0;
	int rc = nsr_ixclnt_new(server, 10000, &ix);

	if (rc || ids == NULL)
		die("connect", rc ? rc : NSR_ERR_NOMEM);
	for (size_t i = 1; i <= n; i += 2)
		ids[k++] = i;
	t0 = now_s();
	for (size_t i = 0; one && i < k && rc == NSR_OK; i++) {
		rc = nsr_ixclnt_delete(ix, "bench", ids[i]);
		removed += rc == NSR_OK;
	}
	if (!one)
		rc = nsr_ixclnt_delete_many(ix, "bench", ids, k, NULL,
					    &removed);
	if (rc) {
		fprintf(stderr, "bench_ixdel: %s\n", nsr_ixclnt_errmsg(ix));
		exit(1);
	}
	printf("%.3f %zu\n", now_s() - t0, removed);
	nsr_ixclnt_close(ix);
	free(ids);
}

/* main - parse options, run each -n (or -B, -s). */
int main(int argc, char **argv)
{
	const char *dir = "/tmp/bench_ixdel", *ns = "2000,10000";
	const char *server = NULL;
	char *list, *save = NULL, *tok;
	size_t build_n = 0;
	int opt, one = 0;

	while ((opt = getopt(argc, argv, "n:d:B:s:1")) != -1) {
		if (opt == 'n')
			ns = optarg;
		else if (opt == 'd')
			dir = optarg;
		else if (opt == 'B')
			build_n = (size_t)strtoull(optarg, NULL, 10);
		else if (opt == 's')
			server = optarg;
		else if (opt == '1')
			one = 1;
		else {
			fprintf(stderr, "usage: bench_ixdel [-n N[,N...]] "
				"[-d dir] | -B N -d root | -s server -n N "
				"[-1]\n");
			return 2;
		}
	}
	if (build_n) {
		build(dir, build_n);
		return 0;
	}
	if (server) {
		remote(server, (size_t)strtoull(ns, NULL, 10), one);
		return 0;
	}
	if (nsr_mkdir_p(dir, 0700) != NSR_OK)
		die(dir, NSR_ERR_SYSTEM);
	printf("| save sets | deleted | build s | catalogue bytes | "
	       "one by one s | one call s | ratio |\n"
	       "|---|---|---|---|---|---|---|\n");
	list = strdup(ns);
	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save))
		one_n(dir, (size_t)strtoull(tok, NULL, 10));
	free(list);
	return 0;
}
