/*
 * mmdb_testclnt - test helper for tests/system/1xx-*.sh (built with the
 * tests, not installed): drives nsrmmdbd through the client library only,
 * as nsrd and nsrmmd will.
 *
 *   populate            a fixed datazone: 4 volumes, 40 save sets with
 *                       clones and fragments, at fixed times (golden files)
 *   recent              two save sets on DD01.001 named /recent (completed
 *                       an hour ago) and /older (completed two days ago)
 *   storm N THREADS     create save sets + fragments from THREADS
 *                       connections until N are done or the daemon fails;
 *                       prints "ack SSID" for each acknowledged one
 *   verify FILE         every "ack SSID" line of FILE must be a save set
 *                       with its fragment; prints how many were checked
 *   written VOL N THREADS   N MM_VOL_WRITTEN calls of 1 byte per thread
 *   check               MM_CHECK: print the report, exit 1 if damaged
 *   get SSID            print one save set's main attributes and flags
 *   create-many N       one MM_SS_CREATE_MANY of N save sets of client
 *                       "many" named /many/1 .. /many/N, in progress;
 *                       prints "made SSID CLONEID NAME" for each
 *   flags SSID SET CLEAR ...   one MM_SS_FLAGS_MANY with these changes
 *                       in order (numbers in any base strtoul takes);
 *                       prints how many save sets were missing
 *   delete SSID ...     mmdb_clnt_ss_delete_many of these save sets
 *                       (one MM_SS_DELETE_MANY per 1,024); prints
 *                       "deleted D of N"
 *   retent VOL TIME ...   one MM_VOL_RETENT_MANY: each volume (by name;
 *                       one not in the database is sent with a made-up
 *                       id) to retention time TIME; prints how many were
 *                       missing, then each known volume's volretent
 *   recyclable VOL      mark VOL recyclable as nsrim does (MM_VOL_WRITTEN
 *                       setting the flag): prints "marked", or the
 *                       daemon's refusal and exits 1
 *   query TEXT [vol]    open TEXT on the daemon (no local parsing), print
 *                       the row count or the daemon's message; "vol"
 *                       makes it a volume query; 7 rows per call
 *   hold TEXT SECS      open TEXT, read one batch, print "holding", wait
 *                       SECS seconds with the cursor open, then ask for
 *                       the next batch and print what happened
 * Exit: 0 ok, 1 failure, 2 usage, 3 storm stopped by a daemon failure.
 */
#include "nsr/compat.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/mmdb.h"
#include "nsr/mmdb_clnt.h"

#define BASE_TIME 1717372800 /* 2024-06-03 00:00:00 UTC */

static const char *g_server;
static pthread_mutex_t g_out = PTHREAD_MUTEX_INITIALIZER;

/* die - print and exit 1. */
static void die(const char *what, struct mmdb_clnt *c, int rc)
{
	fprintf(stderr, "mmdb_testclnt: %s: %s (%s)\n", what,
		c ? mmdb_clnt_errmsg(c) : "", nsr_strerror(rc));
	exit(1);
}

/* connect_or_die - open a client handle. */
static struct mmdb_clnt *connect_or_die(void)
{
	struct mmdb_clnt *c = NULL;
	struct nsr_buf err;
	int rc;

	nsr_buf_init(&err, 0);
	rc = mmdb_clnt_open(g_server, &c, &err);
	if (rc) {
		fprintf(stderr, "mmdb_testclnt: %s\n", err.data);
		exit(1);
	}
	nsr_buf_release(&err);
	return c;
}

/* make_vol - fill a volume record. */
static void make_vol(struct mmdb_volume *v, int i, const char *name,
		     const char *pool, const char *type, uint64_t cap)
{
	memset(v, 0, sizeof(*v));
	snprintf(v->name, sizeof(v->name), "%s", name);
	v->volid[0] = 0x4e;
	v->volid[15] = (uint8_t)(i + 1);
	snprintf(v->pool, sizeof(v->pool), "%s", pool);
	snprintf(v->type, sizeof(v->type), "%s", type);
	snprintf(v->location, sizeof(v->location), "%s",
		 strcmp(type, "adv_file") ? "LIB1" : "");
	v->block_size = 262144;
	v->capacity = cap;
	v->olabel = BASE_TIME - 86400 * 30;
	v->labeled = v->olabel;
	v->volretent = BASE_TIME + 86400 * 365;
	v->mounts = (uint32_t)i + 1;
}

static const char *const clients[] = {"web01.example.com", "db02",
				      "mail.example.com", "app01"};
static const char *const names[] = {"/", "/var", "/home", "/etc",
				    "index:db02"};

/* populate - the fixed datazone of the golden tests. */
static int populate(void)
{
	struct mmdb_clnt *c = connect_or_die();
	struct mmdb_volume vols[4];
	int rc;

	make_vol(&vols[0], 0, "DD01.001", "Default", "adv_file", 0);
	make_vol(&vols[1], 1, "TAPE0042", "Default", "LTO Ultrium-7",
		 2500ULL << 30);
	make_vol(&vols[2], 2, "TAPE0043", "Offsite", "LTO Ultrium-7",
		 2500ULL << 30);
	make_vol(&vols[3], 3, "Clone.001", "Clone", "adv_file", 0);
	vols[1].flags = MMDB_VOL_FULL;
	for (int i = 0; i < 4; i++) {
		rc = mmdb_clnt_vol_put(c, &vols[i]);
		if (rc)
			die("vol_put", c, rc);
	}
	for (int i = 0; i < 40; i++) {
		struct mmdb_saveset ss;
		struct mmdb_fragment f;
		uint32_t cloneid;
		int vi = i % 3;
		uint64_t size = (uint64_t)(i + 1) * 37 * 1024 * 1024 +
				(uint64_t)i * 1000;

		memset(&ss, 0, sizeof(ss));
		snprintf(ss.client, sizeof(ss.client), "%s", clients[i % 4]);
		snprintf(ss.name, sizeof(ss.name), "%s", names[i % 5]);
		snprintf(ss.pool, sizeof(ss.pool), "%s", vols[vi].pool);
		snprintf(ss.group, sizeof(ss.group), "nightly");
		ss.level = i % 7 == 0 ? NSR_LEVEL_FULL
			 : i % 7 == 3 ? 1 : NSR_LEVEL_INCR;
		ss.savetime = BASE_TIME + i * 3600;
		ss.sscreate = ss.savetime + 1;
		ss.sscomp = ss.savetime + 600;
		ss.ssbrowse = ss.savetime + 86400 * 30;
		ss.ssretent = ss.savetime + 86400 * 90;
		ss.flags = MMDB_SS_VALID | MMDB_SS_FINISHED |
			   MMDB_SS_BROWSABLE;
		if (i == 13) {
			ss.flags = MMDB_SS_VALID | MMDB_SS_INCOMPLETE |
				   MMDB_SS_ABORTED;
			ss.sscomp = 0;
		}
		if (i == 17)
			ss.flags |= MMDB_SS_SUSPECT;
		ss.totalsize = size;
		ss.nfiles = (uint64_t)i * 11 + 1;
		rc = mmdb_clnt_ss_create(c, &ss, &cloneid);
		if (rc)
			die("ss_create", c, rc);
		memset(&f, 0, sizeof(f));
		f.ssid = ss.ssid;
		f.cloneid = cloneid;
		memcpy(f.volid, vols[vi].volid, 16);
		f.size = size;
		f.file = (uint32_t)i + 1;
		f.record = 0;
		f.offset = (uint64_t)i * 4096;
		f.flags = MMDB_FRAG_COMPLETE;
		rc = mmdb_clnt_frag_add(c, &f);
		if (rc)
			die("frag_add", c, rc);
		rc = mmdb_clnt_vol_written(c, vols[vi].volid, size,
					   (uint32_t)i + 2, 0, 0);
		if (rc)
			die("vol_written", c, rc);
	}
	/* Marked recyclable by hand (nsrmm -o recyclable) after its save
	 * sets: a fragment recorded on a recyclable volume unmarks it. */
	rc = mmdb_clnt_vol_get(c, "TAPE0043", &vols[2]);
	vols[2].flags |= MMDB_VOL_RECYCLABLE;
	if (rc == NSR_OK)
		rc = mmdb_clnt_vol_put(c, &vols[2]);
	if (rc)
		die("vol_put TAPE0043", c, rc);
	mmdb_clnt_close(c);
	return 0;
}

/* recent - save sets relative to now, for mminfo's default report. */
static int recent(void)
{
	struct mmdb_clnt *c = connect_or_die();
	struct mmdb_volume v;
	int64_t now = (int64_t)time(NULL);
	int rc;

	rc = mmdb_clnt_vol_get(c, "DD01.001", &v);
	if (rc)
		die("vol_get DD01.001", c, rc);
	for (int i = 0; i < 2; i++) {
		struct mmdb_saveset ss;
		struct mmdb_fragment f;
		uint32_t cloneid;

		memset(&ss, 0, sizeof(ss));
		snprintf(ss.client, sizeof(ss.client), "web01.example.com");
		snprintf(ss.name, sizeof(ss.name), i ? "/older" : "/recent");
		snprintf(ss.pool, sizeof(ss.pool), "Default");
		ss.level = NSR_LEVEL_FULL;
		ss.sscomp = now - (i ? 2 * 86400 : 3600);
		ss.savetime = ss.sscomp - 600;
		ss.sscreate = ss.savetime;
		ss.ssbrowse = now + 86400 * 30;
		ss.ssretent = now + 86400 * 90;
		ss.flags = MMDB_SS_VALID | MMDB_SS_FINISHED |
			   MMDB_SS_BROWSABLE;
		ss.totalsize = 1 << 20;
		rc = mmdb_clnt_ss_create(c, &ss, &cloneid);
		if (rc)
			die("ss_create", c, rc);
		memset(&f, 0, sizeof(f));
		f.ssid = ss.ssid;
		f.cloneid = cloneid;
		memcpy(f.volid, v.volid, 16);
		f.size = ss.totalsize;
		f.flags = MMDB_FRAG_COMPLETE;
		rc = mmdb_clnt_frag_add(c, &f);
		if (rc)
			die("frag_add", c, rc);
	}
	mmdb_clnt_close(c);
	return 0;
}

struct storm {
	int id;
	int count;
	int failed;
	uint8_t volid[16];
};

/* storm_thread - create save sets with a fragment each until count or a
 * failure; every acknowledged ssid is printed (and flushed) at once. */
static void *storm_thread(void *arg)
{
	struct storm *s = arg;
	struct mmdb_clnt *c = connect_or_die();

	for (int i = 0; i < s->count; i++) {
		struct mmdb_saveset ss;
		struct mmdb_fragment f;
		uint32_t cloneid;
		int rc;

		memset(&ss, 0, sizeof(ss));
		snprintf(ss.client, sizeof(ss.client), "storm%d", s->id);
		snprintf(ss.name, sizeof(ss.name), "/data/%d", i);
		snprintf(ss.pool, sizeof(ss.pool), "Default");
		ss.level = NSR_LEVEL_INCR;
		ss.savetime = BASE_TIME + s->id * 100000 + i;
		ss.flags = MMDB_SS_VALID | MMDB_SS_FINISHED;
		ss.totalsize = 4096;
		rc = mmdb_clnt_ss_create(c, &ss, &cloneid);
		if (!rc) {
			memset(&f, 0, sizeof(f));
			f.ssid = ss.ssid;
			f.cloneid = cloneid;
			memcpy(f.volid, s->volid, 16);
			f.size = 4096;
			f.flags = MMDB_FRAG_COMPLETE;
			rc = mmdb_clnt_frag_add(c, &f);
		}
		if (rc) {
			pthread_mutex_lock(&g_out);
			fprintf(stderr, "storm %d stopped after %d: %s\n",
				s->id, i, mmdb_clnt_errmsg(c));
			pthread_mutex_unlock(&g_out);
			s->failed = 1;
			break;
		}
		pthread_mutex_lock(&g_out);
		printf("ack %u\n", ss.ssid);
		fflush(stdout);
		pthread_mutex_unlock(&g_out);
	}
	mmdb_clnt_close(c);
	return NULL;
}

/* storm - N records from THREADS connections onto volume STORM.001. */
static int storm(int n, int threads)
{
	struct mmdb_clnt *c = connect_or_die();
	struct storm *st = calloc((size_t)threads, sizeof(*st));
	pthread_t *tid = calloc((size_t)threads, sizeof(*tid));
	struct mmdb_volume v;
	int failed = 0, rc;

	if (!st || !tid)
		die("out of memory", NULL, NSR_ERR_NOMEM);
	make_vol(&v, 9, "STORM.001", "Default", "adv_file", 0);
	rc = mmdb_clnt_vol_put(c, &v);
	if (rc)
		die("vol_put", c, rc);
	mmdb_clnt_close(c);
	for (int i = 0; i < threads; i++) {
		st[i].id = i;
		st[i].count = n / threads + (i < n % threads);
		memcpy(st[i].volid, v.volid, 16);
		pthread_create(&tid[i], NULL, storm_thread, &st[i]);
	}
	for (int i = 0; i < threads; i++) {
		pthread_join(tid[i], NULL);
		failed |= st[i].failed;
	}
	free(st);
	free(tid);
	return failed ? 3 : 0;
}

/* verify - every acknowledged ssid in file is there with its fragment. */
static int verify(const char *file)
{
	struct mmdb_clnt *c = connect_or_die();
	FILE *f = fopen(file, "r");
	char line[128];
	unsigned long checked = 0, missing = 0;

	if (!f) {
		perror(file);
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		struct mmdb_saveset ss;
		struct mmdb_fragment fr[4];
		unsigned ssid;
		size_t n = 0;
		int rc;

		if (sscanf(line, "ack %u", &ssid) != 1)
			continue;
		checked++;
		rc = mmdb_clnt_ss_get(c, ssid, &ss);
		if (!rc)
			rc = mmdb_clnt_frag_list(c, ssid, fr, 4, &n);
		if (rc || n != 1) {
			missing++;
			fprintf(stderr, "acknowledged save set %u: %s\n", ssid,
				rc ? mmdb_clnt_errmsg(c) : "fragment missing");
		}
	}
	fclose(f);
	mmdb_clnt_close(c);
	printf("verified %lu acknowledged save sets, %lu missing\n", checked,
	       missing);
	return missing ? 1 : 0;
}

struct writer {
	uint8_t volid[16];
	int n;
	int failed;
};

/* written_thread - n one-byte MM_VOL_WRITTEN calls. */
static void *written_thread(void *arg)
{
	struct writer *w = arg;
	struct mmdb_clnt *c = connect_or_die();

	for (int i = 0; i < w->n; i++) {
		if (mmdb_clnt_vol_written(c, w->volid, 1, 0, 0, 0)) {
			fprintf(stderr, "vol_written: %s\n",
				mmdb_clnt_errmsg(c));
			w->failed = 1;
			break;
		}
	}
	mmdb_clnt_close(c);
	return NULL;
}

/* written - concurrent written-byte updates; prints the final count. */
static int written(const char *vol, int n, int threads)
{
	struct mmdb_clnt *c = connect_or_die();
	struct writer w[16];
	pthread_t tid[16];
	struct mmdb_volume v;
	int rc, failed = 0;

	threads = NSR_MIN(NSR_MAX(threads, 1), 16);
	rc = mmdb_clnt_vol_get(c, vol, &v);
	if (rc)
		die("vol_get", c, rc);
	for (int i = 0; i < threads; i++) {
		memcpy(w[i].volid, v.volid, 16);
		w[i].n = n;
		w[i].failed = 0;
		pthread_create(&tid[i], NULL, written_thread, &w[i]);
	}
	for (int i = 0; i < threads; i++) {
		pthread_join(tid[i], NULL);
		failed |= w[i].failed;
	}
	rc = mmdb_clnt_vol_get(c, vol, &v);
	if (rc)
		die("vol_get", c, rc);
	printf("%llu\n", (unsigned long long)v.written);
	mmdb_clnt_close(c);
	return failed;
}

/* check - MM_CHECK. */
static int check(void)
{
	struct mmdb_clnt *c = connect_or_die();
	struct nsr_buf rep;
	int rc;

	nsr_buf_init(&rep, 0);
	rc = mmdb_clnt_check(c, &rep);
	fputs(rep.data, stdout);
	if (rc)
		fprintf(stderr, "mmdb_testclnt: check: %s\n",
			mmdb_clnt_errmsg(c));
	else
		printf("consistent\n");
	nsr_buf_release(&rep);
	mmdb_clnt_close(c);
	return rc ? 1 : 0;
}

/* get - print a save set. */
static int get(uint32_t ssid)
{
	struct mmdb_clnt *c = connect_or_die();
	struct mmdb_saveset ss;
	int rc = mmdb_clnt_ss_get(c, ssid, &ss);

	if (rc) {
		fprintf(stderr, "mmdb_testclnt: %s\n", mmdb_clnt_errmsg(c));
	} else {
		printf("ssid %u client %s name %s level %u size %llu "
		       "flags 0x%x\n",
		       ss.ssid, ss.client, ss.name, (unsigned)ss.level,
		       (unsigned long long)ss.totalsize, ss.flags);
	}
	mmdb_clnt_close(c);
	return rc ? 1 : 0;
}

/* create_many - one MM_SS_CREATE_MANY of n save sets. */
static int create_many(size_t n)
{
	struct mmdb_clnt *c = connect_or_die();
	struct mmdb_saveset *ss = calloc(n ? n : 1, sizeof(*ss));
	uint32_t *cloneid = calloc(n ? n : 1, sizeof(*cloneid));
	int rc;

	if (!ss || !cloneid) {
		fprintf(stderr, "mmdb_testclnt: out of memory\n");
		exit(1);
	}
	for (size_t i = 0; i < n; i++) {
		snprintf(ss[i].client, sizeof(ss[i].client), "many");
		snprintf(ss[i].name, sizeof(ss[i].name), "/many/%zu", i + 1);
		snprintf(ss[i].pool, sizeof(ss[i].pool), "Default");
		ss[i].level = NSR_LEVEL_FULL;
		ss[i].flags = MMDB_SS_INPROGRESS;
		ss[i].savetime = (int64_t)time(NULL) + (int64_t)i;
	}
	rc = mmdb_clnt_ss_create_many(c, ss, n, cloneid);
	if (rc)
		fprintf(stderr, "mmdb_testclnt: %s\n", mmdb_clnt_errmsg(c));
	for (size_t i = 0; !rc && i < n; i++)
		printf("made %u %u %s\n", ss[i].ssid, cloneid[i], ss[i].name);
	free(ss);
	free(cloneid);
	mmdb_clnt_close(c);
	return rc ? 1 : 0;
}

/* flags - argv holds n triples SSID SET CLEAR: one MM_SS_FLAGS_MANY. */
static int flags(char **argv, size_t n)
{
	struct mmdb_clnt *c = connect_or_die();
	struct mmdb_clnt_flags v[16];
	unsigned missing = 0;
	int rc;

	n = NSR_MIN(n, NSR_ARRAY_SIZE(v));
	for (size_t i = 0; i < n; i++) {
		v[i].ssid = (uint32_t)strtoul(argv[3 * i], NULL, 0);
		v[i].set = (uint32_t)strtoul(argv[3 * i + 1], NULL, 0);
		v[i].clear = (uint32_t)strtoul(argv[3 * i + 2], NULL, 0);
	}
	rc = mmdb_clnt_ss_flags_many(c, v, n, &missing);
	if (rc)
		fprintf(stderr, "mmdb_testclnt: %s\n", mmdb_clnt_errmsg(c));
	else
		printf("missing %u\n", missing);
	mmdb_clnt_close(c);
	return rc ? 1 : 0;
}

/* delete_many - argv holds n ssids: mmdb_clnt_ss_delete_many of them. */
static int delete_many(char **argv, size_t n)
{
	struct mmdb_clnt *c = connect_or_die();
	uint32_t *v = calloc(n ? n : 1, sizeof(*v));
	size_t deleted = 0;
	int rc;

	if (!v)
		die("delete", c, NSR_ERR_NOMEM);
	for (size_t i = 0; i < n; i++)
		v[i] = (uint32_t)strtoul(argv[i], NULL, 0);
	rc = mmdb_clnt_ss_delete_many(c, v, n, NULL, &deleted);
	if (rc)
		fprintf(stderr, "mmdb_testclnt: %s\n", mmdb_clnt_errmsg(c));
	else
		printf("deleted %zu of %zu\n", deleted, n);
	free(v);
	mmdb_clnt_close(c);
	return rc ? 1 : 0;
}

/* retent - argv holds n pairs VOL TIME: one MM_VOL_RETENT_MANY. */
static int retent(char **argv, size_t n)
{
	struct mmdb_clnt *c = connect_or_die();
	struct mmdb_clnt_retent v[16];
	struct mmdb_volume vol;
	unsigned missing = 0;
	int rc;

	n = NSR_MIN(n, NSR_ARRAY_SIZE(v));
	for (size_t i = 0; i < n; i++) {
		memset(v[i].volid, 0xee, sizeof(v[i].volid));
		if (mmdb_clnt_vol_get(c, argv[2 * i], &vol) == NSR_OK)
			memcpy(v[i].volid, vol.volid, sizeof(v[i].volid));
		v[i].volretent = strtoll(argv[2 * i + 1], NULL, 10);
	}
	rc = mmdb_clnt_vol_retent_many(c, v, n, &missing);
	if (rc)
		fprintf(stderr, "mmdb_testclnt: %s\n", mmdb_clnt_errmsg(c));
	else
		printf("missing %u\n", missing);
	for (size_t i = 0; rc == 0 && i < n; i++)
		if (mmdb_clnt_vol_get(c, argv[2 * i], &vol) == NSR_OK)
			printf("%s volretent %lld\n", vol.name,
			       (long long)vol.volretent);
	mmdb_clnt_close(c);
	return rc ? 1 : 0;
}

/* recyclable - mark volume name recyclable as nsrim does. */
static int recyclable(const char *name)
{
	struct mmdb_clnt *c = connect_or_die();
	struct mmdb_volume vol;
	int rc = mmdb_clnt_vol_get(c, name, &vol);

	if (rc == NSR_OK)
		rc = mmdb_clnt_vol_written(c, vol.volid, 0, 0, 0,
					   MMDB_VOL_RECYCLABLE);
	if (rc)
		printf("refused: %s\n", mmdb_clnt_errmsg(c));
	else
		printf("marked\n");
	mmdb_clnt_close(c);
	return rc ? 1 : 0;
}

/* query - the daemon's own parsing and streaming, in batches of 7. */
static int query(const char *text, int volumes)
{
	struct mmdb_clnt *c = connect_or_die();
	struct mmdb_ss_row rows[7];
	struct mmdb_volume vols[7];
	unsigned long total = 0, batches = 0;
	size_t n;
	int done = 0, rc;

	rc = mmdb_clnt_query_open(c, text, volumes, 0);
	while (!rc && !done) {
		if (volumes)
			rc = mmdb_clnt_query_next_vols(c, vols, 7, &n, &done);
		else
			rc = mmdb_clnt_query_next_rows(c, rows, 7, &n, &done);
		total += n;
		batches++;
	}
	if (rc)
		fprintf(stderr, "%s\n", mmdb_clnt_errmsg(c));
	else
		printf("%lu rows in %lu batches\n", total, batches);
	mmdb_clnt_close(c);
	return rc ? 1 : 0;
}

/* hold - keep a cursor open on the daemon for a while. */
static int hold(const char *text, int secs)
{
	struct mmdb_clnt *c = connect_or_die();
	struct mmdb_ss_row rows[7];
	size_t n = 0;
	int done = 0, rc;

	rc = mmdb_clnt_query_open(c, text, 0, 0);
	if (!rc)
		rc = mmdb_clnt_query_next_rows(c, rows, 7, &n, &done);
	if (rc)
		die("query", c, rc);
	printf("holding %zu\n", n);
	fflush(stdout);
	sleep((unsigned)secs);
	rc = mmdb_clnt_query_next_rows(c, rows, 7, &n, &done);
	if (rc)
		printf("next batch: %s\n", mmdb_clnt_errmsg(c));
	else
		printf("next batch: %zu rows\n", n);
	mmdb_clnt_close(c);
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	int a = 1;

	if (argc > 2 && !strcmp(argv[1], "-s")) {
		g_server = argv[2];
		a = 3;
	}
	if (a < argc && !strcmp(argv[a], "populate"))
		return populate();
	if (a < argc && !strcmp(argv[a], "recent"))
		return recent();
	if (a + 2 < argc && !strcmp(argv[a], "storm"))
		return storm(atoi(argv[a + 1]), NSR_MAX(atoi(argv[a + 2]), 1));
	if (a + 1 < argc && !strcmp(argv[a], "verify"))
		return verify(argv[a + 1]);
	if (a + 3 < argc && !strcmp(argv[a], "written"))
		return written(argv[a + 1], atoi(argv[a + 2]),
			       atoi(argv[a + 3]));
	if (a < argc && !strcmp(argv[a], "check"))
		return check();
	if (a + 1 < argc && !strcmp(argv[a], "get"))
		return get((uint32_t)strtoul(argv[a + 1], NULL, 10));
	if (a + 1 < argc && !strcmp(argv[a], "create-many"))
		return create_many(strtoul(argv[a + 1], NULL, 10));
	if (a + 3 < argc && !strcmp(argv[a], "flags"))
		return flags(argv + a + 1, (size_t)(argc - a - 1) / 3);
	if (a + 1 < argc && !strcmp(argv[a], "delete"))
		return delete_many(argv + a + 1, (size_t)(argc - a - 1));
	if (a + 2 < argc && !strcmp(argv[a], "retent"))
		return retent(argv + a + 1, (size_t)(argc - a - 1) / 2);
	if (a + 1 < argc && !strcmp(argv[a], "recyclable"))
		return recyclable(argv[a + 1]);
	if (a + 1 < argc && !strcmp(argv[a], "query"))
		return query(argv[a + 1],
			     a + 2 < argc && !strcmp(argv[a + 2], "vol"));
	if (a + 2 < argc && !strcmp(argv[a], "hold"))
		return hold(argv[a + 1], atoi(argv[a + 2]));
	fprintf(stderr,
		"usage: mmdb_testclnt [-s server] populate | recent | "
		"storm N THREADS | verify FILE | written VOL N THREADS | "
		"check | get SSID | create-many N | flags SSID SET CLEAR ... | "
		"delete SSID ... | retent VOL TIME ... | recyclable VOL | "
		"query TEXT "
		"[vol] | hold TEXT SECS\n");
	return 2;
}
