/*
 * bench_mmdb.c - media database benchmark: the same data set and queries
 * on our engine and on SQLite (WAL, synchronous=FULL, page_size 32768),
 * measured side by side in one run.
 *
 *   bench_mmdb [-n savesets] [-b batch] [-q queries] [-d dir]
 *
 * Defaults: 1,000,000 save sets on n/200 volumes over n/500 clients, each
 * with one or two fragments (30% two), inserted in transactions of
 * -b (1000) save sets for both engines; then -q (2000) queries of each
 * kind (by ssid, by client, by client+name+savetime range, by volume)
 * with p50/p99 latency, a full scan of every save set row with its
 * volume name, and bytes on disk per save set after a checkpoint.
 * Both engines checkpoint every 256 MB of WAL, and both files are read
 * once before the queries so both start from the OS page cache.
 * Prints a markdown table with the machine and date.
 */
#include "nsr/compat.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/mmdb.h"

static uint64_t rng_state = 88172645463325252ull;

/* rnd - xorshift64*. */
static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

/* now - monotonic seconds. */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long nss = 1000000, batch = 1000, nq = 2000;
/* Browse and retention periods of the generated save sets (-B, -R). */
static long browse_days = 30, retent_days = 90;
static long nvol, ncli;
static const int64_t T0 = 1600000000;
static const char *const names[] = {
	"/", "/home", "/var", "/usr", "/data/db1", "/data/db2", "/opt/app",
	"/srv/www"
};

/* One generated save set. */
struct gen {
	unsigned client, name, nfrag;
	unsigned vol[2];
	int64_t savetime;
	uint64_t size;
	unsigned level;
};

/* gen_ss - save set i (deterministic given the rng sequence). */
static void gen_ss(long i, struct gen *g)
{
	g->client = (unsigned)(rnd() % (uint64_t)ncli);
	g->name = (unsigned)(rnd() % NSR_ARRAY_SIZE(names));
	g->savetime = T0 + i * 30;
	g->size = rnd() % 50000000000ull;
	g->level = (unsigned)(rnd() % 12);
	g->nfrag = rnd() % 10 < 3 ? 2 : 1;
	g->vol[0] = (unsigned)(rnd() % (uint64_t)nvol);
	g->vol[1] = (unsigned)(rnd() % (uint64_t)nvol);
}

/* client_name - name of client c. */
static void client_name(unsigned c, char *buf, size_t len)
{
	snprintf(buf, len, "client%05u.backup.example.com", c);
}

/* vol_name - name of volume v. */
static void vol_name(unsigned v, char *buf, size_t len)
{
	snprintf(buf, len, "DD%02u.%05u", v % 7, v);
}

/* Latency samples of one query kind. */
struct lat {
	double *s;
	long n;
	uint64_t rows;
};

/* lat_pct - percentile p of the samples (sorted in place), microseconds. */
static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double lat_pct(struct lat *l, double p)
{
	long i;

	qsort(l->s, (size_t)l->n, sizeof(double), cmp_d);
	i = (long)(p * (double)(l->n - 1) + 0.5);
	return l->s[i] * 1e6;
}

/* ---- our engine ------------------------------------------------------ */

/* die - abort the benchmark on an engine error. */
static void die(const char *what, int rc)
{
	fprintf(stderr, "bench_mmdb: %s: %s\n", what,
		rc < 0 ? nsr_strerror(rc) : sqlite3_errstr(rc));
	exit(1);
}

/* mm_insert - load the data set; returns seconds. */
static double mm_insert(struct mmdb *db)
{
	struct mmdb_txn *t = NULL;
	double t0 = now();
	int rc;

	rng_state = 88172645463325252ull;
	rc = mmdb_txn_begin(db, &t);
	for (long v = 0; v < nvol && rc == NSR_OK; v++) {
		struct mmdb_volume vol;

		memset(&vol, 0, sizeof(vol));
		vol_name((unsigned)v, vol.name, sizeof(vol.name));
		vol.volid[0] = 0x11;
		vol.volid[12] = (uint8_t)(v >> 24);
		vol.volid[13] = (uint8_t)(v >> 16);
		vol.volid[14] = (uint8_t)(v >> 8);
		vol.volid[15] = (uint8_t)v;
		snprintf(vol.pool, sizeof(vol.pool), "pool%ld", v % 4);
		snprintf(vol.type, sizeof(vol.type), "Data Domain");
		snprintf(vol.location, sizeof(vol.location), "dd%ld", v % 7);
		vol.block_size = 262144;
		vol.capacity = 4000000000000ull;
		vol.olabel = T0;
		vol.labeled = T0;
		rc = mmdb_vol_put(db, t, &vol);
	}
	if (rc == NSR_OK)
		rc = mmdb_txn_commit(t);
	if (rc != NSR_OK)
		die("volumes", rc);
	for (long i = 0; i < nss; i++) {
		struct mmdb_saveset ss;
		struct gen g;
		uint32_t cid;

		if (i % batch == 0) {
			rc = mmdb_txn_begin(db, &t);
			if (rc != NSR_OK)
				die("begin", rc);
		}
		gen_ss(i, &g);
		memset(&ss, 0, sizeof(ss));
		client_name(g.client, ss.client, sizeof(ss.client));
		snprintf(ss.name, sizeof(ss.name), "%s", names[g.name]);
		snprintf(ss.pool, sizeof(ss.pool), "pool%u", g.vol[0] % 4);
		snprintf(ss.group, sizeof(ss.group), "group%u", g.client % 20);
		ss.level = (uint8_t)g.level;
		ss.flags = MMDB_SS_VALID | MMDB_SS_FINISHED | MMDB_SS_BROWSABLE;
		ss.savetime = g.savetime;
		ss.sscreate = g.savetime + 2;
		ss.sscomp = g.savetime + 600;
		ss.ssbrowse = g.savetime + 86400 * browse_days;
		ss.ssretent = g.savetime + 86400 * retent_days;
		ss.totalsize = g.size;
		ss.nfiles = g.size / 100000;
		rc = mmdb_ss_create(db, t, &ss, 0, &cid);
		for (unsigned f = 0; f < g.nfrag && rc == NSR_OK; f++) {
			struct mmdb_fragment fr;

			memset(&fr, 0, sizeof(fr));
			fr.ssid = ss.ssid;
			fr.cloneid = cid;
			fr.volid[0] = 0x11;
			fr.volid[12] = (uint8_t)(g.vol[f] >> 24);
			fr.volid[13] = (uint8_t)(g.vol[f] >> 16);
			fr.volid[14] = (uint8_t)(g.vol[f] >> 8);
			fr.volid[15] = (uint8_t)g.vol[f];
			fr.seq = f;
			fr.ss_offset = f ? g.size / 2 : 0;
			fr.size = g.nfrag == 2 ? g.size / 2 : g.size;
			fr.offset = (uint64_t)i * 1000;
			fr.flags = g.nfrag == 1 ? MMDB_FRAG_COMPLETE :
				   f ? MMDB_FRAG_TAIL : MMDB_FRAG_HEAD;
			rc = mmdb_frag_add(db, t, &fr);
		}
		if (rc != NSR_OK)
			die("insert", rc);
		if (i % batch == batch - 1 || i == nss - 1) {
			rc = mmdb_txn_commit(t);
			if (rc != NSR_OK)
				die("commit", rc);
		}
	}
	return now() - t0;
}

/* mm_run - run one query, consuming every row; returns rows. */
static uint64_t mm_run(struct mmdb *db, const struct mmdb_pred *p, size_t n,
		       struct mmdb_ss_row *row)
{
	struct mmdb_query q = { p, n };
	struct mmdb_cursor *c;
	uint64_t rows = 0, sink = 0;
	int rc = mmdb_ss_query(db, &q, 0, &c);

	if (rc != NSR_OK)
		die("query", rc);
	for (;;) {
		rc = mmdb_ss_next(c, row);
		if (rc != 1)
			break;
		rows++;
		sink += row->ss.ssid + (uint64_t)row->vol.name[0];
	}
	if (rc < 0)
		die("next", rc);
	mmdb_cursor_free(c);
	return rows + (sink == UINT64_MAX);
}

/* ---- SQLite ---------------------------------------------------------- */

static const char *const sq_schema =
	"PRAGMA page_size=32768;"
	"PRAGMA journal_mode=WAL;"
	"PRAGMA synchronous=FULL;"
	"PRAGMA wal_autocheckpoint=8192;"	/* 256 MB, as mmdb's default */
	"CREATE TABLE vol(volno INTEGER PRIMARY KEY, name TEXT UNIQUE, "
	" volid BLOB UNIQUE, pool TEXT, type TEXT, location TEXT, device TEXT,"
	" block_size INT, flags INT, written INT, read INT, capacity INT,"
	" olabel INT, labeled INT, volretent INT, recycled INT, mounts INT,"
	" next_file INT, next_record INT);"
	"CREATE INDEX vol_pool ON vol(pool);"
	"CREATE TABLE ss(ssid INTEGER PRIMARY KEY, client TEXT, name TEXT,"
	" pool TEXT, grp TEXT, level INT, flags INT, savetime INT,"
	" sscreate INT, sscomp INT, ssbrowse INT, ssretent INT,"
	" totalsize INT, nfiles INT, pssid INT, anchor INT);"
	"CREATE INDEX ss_cnt ON ss(client, name, savetime);"
	"CREATE INDEX ss_time ON ss(savetime);"
	"CREATE TABLE clone(ssid INT, cloneid INT, clone_time INT,"
	" clretent INT, flags INT, PRIMARY KEY(ssid, cloneid)) WITHOUT ROWID;"
	"CREATE TABLE frag(ssid INT, cloneid INT, seq INT, volno INT,"
	" ss_offset INT, size INT, file INT, record INT, off INT, flags INT,"
	" PRIMARY KEY(ssid, cloneid, seq)) WITHOUT ROWID;"
	"CREATE INDEX frag_vol ON frag(volno, ssid);";

/* sq_ok - abort on a SQLite error. */
static void sq_ok(int rc, const char *what)
{
	if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW)
		die(what, rc);
}

/* sq_prep - prepare a statement. */
static sqlite3_stmt *sq_prep(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;

	sq_ok(sqlite3_prepare_v2(db, sql, -1, &st, NULL), sql);
	return st;
}

/* sq_insert - the same data set into SQLite; returns seconds. */
static double sq_insert(sqlite3 *db)
{
	sqlite3_stmt *iv, *is, *ic, *ifr;
	double t0 = now();
	char buf[128];

	rng_state = 88172645463325252ull;
	iv = sq_prep(db, "INSERT INTO vol(volno, name, volid, pool, type,"
		     " location, block_size, flags, written, read, capacity,"
		     " olabel, labeled) VALUES(?,?,?,?,'Data Domain',?,"
		     "262144,0,0,0,4000000000000,?,?)");
	is = sq_prep(db, "INSERT INTO ss VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
		     "0,0)");
	ic = sq_prep(db, "INSERT INTO clone VALUES(?,?,?,?,0)");
	ifr = sq_prep(db, "INSERT INTO frag VALUES(?,?,?,?,?,?,0,0,?,?)");
	sq_ok(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL), "begin");
	for (long v = 0; v < nvol; v++) {
		uint8_t id[16] = { 0x11 };
		char pool[16], loc[16];

		id[12] = (uint8_t)(v >> 24);
		id[13] = (uint8_t)(v >> 16);
		id[14] = (uint8_t)(v >> 8);
		id[15] = (uint8_t)v;
		vol_name((unsigned)v, buf, sizeof(buf));
		snprintf(pool, sizeof(pool), "pool%ld", v % 4);
		snprintf(loc, sizeof(loc), "dd%ld", v % 7);
		sqlite3_bind_int64(iv, 1, v + 1);
		sqlite3_bind_text(iv, 2, buf, -1, SQLITE_TRANSIENT);
		sqlite3_bind_blob(iv, 3, id, 16, SQLITE_TRANSIENT);
		sqlite3_bind_text(iv, 4, pool, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(iv, 5, loc, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(iv, 6, T0);
		sqlite3_bind_int64(iv, 7, T0);
		sq_ok(sqlite3_step(iv), "insert vol");
		sqlite3_reset(iv);
	}
	sq_ok(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), "commit");
	for (long i = 0; i < nss; i++) {
		struct gen g;
		char pool[16], grp[16];

		if (i % batch == 0)
			sq_ok(sqlite3_exec(db, "BEGIN", NULL, NULL, NULL),
			      "begin");
		gen_ss(i, &g);
		client_name(g.client, buf, sizeof(buf));
		snprintf(pool, sizeof(pool), "pool%u", g.vol[0] % 4);
		snprintf(grp, sizeof(grp), "group%u", g.client % 20);
		sqlite3_bind_int64(is, 1, i + 1);
		sqlite3_bind_text(is, 2, buf, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(is, 3, names[g.name], -1, SQLITE_STATIC);
		sqlite3_bind_text(is, 4, pool, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(is, 5, grp, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int(is, 6, (int)g.level);
		sqlite3_bind_int(is, 7, MMDB_SS_VALID | MMDB_SS_FINISHED |
					MMDB_SS_BROWSABLE);
		sqlite3_bind_int64(is, 8, g.savetime);
		sqlite3_bind_int64(is, 9, g.savetime + 2);
		sqlite3_bind_int64(is, 10, g.savetime + 600);
		sqlite3_bind_int64(is, 11, g.savetime + 86400 * 30);
		sqlite3_bind_int64(is, 12, g.savetime + 86400 * 90);
		sqlite3_bind_int64(is, 13, (int64_t)g.size);
		sqlite3_bind_int64(is, 14, (int64_t)(g.size / 100000));
		sq_ok(sqlite3_step(is), "insert ss");
		sqlite3_reset(is);
		sqlite3_bind_int64(ic, 1, i + 1);
		sqlite3_bind_int64(ic, 2, (uint32_t)g.savetime);
		sqlite3_bind_int64(ic, 3, g.savetime);
		sqlite3_bind_int64(ic, 4, g.savetime + 86400 * 90);
		sq_ok(sqlite3_step(ic), "insert clone");
		sqlite3_reset(ic);
		for (unsigned f = 0; f < g.nfrag; f++) {
			sqlite3_bind_int64(ifr, 1, i + 1);
			sqlite3_bind_int64(ifr, 2, (uint32_t)g.savetime);
			sqlite3_bind_int(ifr, 3, (int)f);
			sqlite3_bind_int64(ifr, 4, g.vol[f] + 1);
			sqlite3_bind_int64(ifr, 5,
					   (int64_t)(f ? g.size / 2 : 0));
			sqlite3_bind_int64(ifr, 6, (int64_t)(g.nfrag == 2 ?
						g.size / 2 : g.size));
			sqlite3_bind_int64(ifr, 7, i * 1000);
			sqlite3_bind_int(ifr, 8, g.nfrag == 1 ? 8 : f ? 4 : 1);
			sq_ok(sqlite3_step(ifr), "insert frag");
			sqlite3_reset(ifr);
		}
		if (i % batch == batch - 1 || i == nss - 1)
			sq_ok(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL),
			      "commit");
	}
	sqlite3_finalize(iv);
	sqlite3_finalize(is);
	sqlite3_finalize(ic);
	sqlite3_finalize(ifr);
	return now() - t0;
}

#define SQ_ROW "SELECT ss.ssid, ss.client, ss.name, ss.savetime, " \
	"ss.level, ss.totalsize, ss.flags, clone.cloneid, vol.name, " \
	"frag.size FROM "
#define SQ_JOIN                                                                \
	" JOIN clone ON clone.ssid = ss.ssid"                                  \
	" LEFT JOIN frag ON frag.ssid = ss.ssid AND frag.cloneid = "           \
	"clone.cloneid"                                                        \
	" LEFT JOIN vol ON vol.volno = frag.volno"

/* sq_run - step a bound statement to the end; returns rows. */
static uint64_t sq_run(sqlite3_stmt *st)
{
	uint64_t rows = 0, sink = 0;
	int rc;

	for (;;) {
		rc = sqlite3_step(st);
		if (rc != SQLITE_ROW)
			break;
		rows++;
		sink += (uint64_t)sqlite3_column_int64(st, 0);
		(void)sqlite3_column_text(st, 1);
		(void)sqlite3_column_text(st, 2);
		(void)sqlite3_column_text(st, 8);
	}
	sq_ok(rc, "query");
	sqlite3_reset(st);
	return rows + (sink == UINT64_MAX);
}

/* ---- driver ---------------------------------------------------------- */

enum { Q_SSID, Q_CLIENT, Q_CNT, Q_VOL, Q_KINDS };
static const char *const qnames[Q_KINDS] = {
	"by ssid", "by client", "by client+name+time", "by volume"
};

/* Query parameters, the same for both engines. */
struct qparam {
	uint32_t ssid;
	char client[64];
	char name[32];
	int64_t t0, t1;
	char vol[32];
};

/* make_params - nq random parameters per kind. */
static struct qparam *make_params(void)
{
	struct qparam *p = calloc((size_t)nq, sizeof(*p));

	if (!p)
		exit(1);
	rng_state = 12345;
	for (long i = 0; i < nq; i++) {
		p[i].ssid = 1 + (uint32_t)(rnd() % (uint64_t)nss);
		client_name((unsigned)(rnd() % (uint64_t)ncli), p[i].client,
			    sizeof(p[i].client));
		snprintf(p[i].name, sizeof(p[i].name), "%s",
			 names[rnd() % NSR_ARRAY_SIZE(names)]);
		p[i].t0 = T0 + (int64_t)(rnd() % (uint64_t)nss) * 30;
		p[i].t1 = p[i].t0 + (int64_t)nss * 30 / 4;
		vol_name((unsigned)(rnd() % (uint64_t)nvol), p[i].vol,
			 sizeof(p[i].vol));
	}
	return p;
}

/* mm_query - one query of kind k on our engine; returns rows. */
static uint64_t mm_query(struct mmdb *db, int k, const struct qparam *q,
			 struct mmdb_ss_row *row)
{
	struct mmdb_pred p[4];
	size_t n = 0;

	switch (k) {
	case Q_SSID:
		p[n++] = (struct mmdb_pred){ MMDB_A_SSID, MMDB_OP_EQ, q->ssid,
					     NULL };
		break;
	case Q_CLIENT:
		p[n++] = (struct mmdb_pred){ MMDB_A_CLIENT, MMDB_OP_EQ, 0,
					     q->client };
		break;
	case Q_CNT:
		p[n++] = (struct mmdb_pred){ MMDB_A_CLIENT, MMDB_OP_EQ, 0,
					     q->client };
		p[n++] = (struct mmdb_pred){ MMDB_A_NAME, MMDB_OP_EQ, 0,
					     q->name };
		p[n++] = (struct mmdb_pred){ MMDB_A_SAVETIME, MMDB_OP_GE, q->t0,
					     NULL };
		p[n++] = (struct mmdb_pred){ MMDB_A_SAVETIME, MMDB_OP_LE, q->t1,
					     NULL };
		break;
	default:
		p[n++] = (struct mmdb_pred){ MMDB_A_VOLUME, MMDB_OP_EQ, 0,
					     q->vol };
		break;
	}
	return mm_run(db, p, n, row);
}

/* sq_query - the same query on SQLite. */
static uint64_t sq_query(sqlite3_stmt **st, int k, const struct qparam *q)
{
	switch (k) {
	case Q_SSID:
		sqlite3_bind_int64(st[k], 1, q->ssid);
		break;
	case Q_CLIENT:
		sqlite3_bind_text(st[k], 1, q->client, -1, SQLITE_STATIC);
		break;
	case Q_CNT:
		sqlite3_bind_text(st[k], 1, q->client, -1, SQLITE_STATIC);
		sqlite3_bind_text(st[k], 2, q->name, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st[k], 3, q->t0);
		sqlite3_bind_int64(st[k], 4, q->t1);
		break;
	default:
		sqlite3_bind_text(st[k], 1, q->vol, -1, SQLITE_STATIC);
		break;
	}
	return sq_run(st[k]);
}

/* run_queries - every query kind on both engines, interleaved query by
 * query so machine noise hits both alike; the first tenth warms up. */
static void run_queries(struct mmdb *db, sqlite3 *sq, const struct qparam *qp,
			struct lat *ml, struct lat *sl)
{
	struct mmdb_ss_row *row = malloc(sizeof(*row));
	sqlite3_stmt *st[Q_KINDS];

	st[Q_SSID] = sq_prep(sq, SQ_ROW "ss" SQ_JOIN " WHERE ss.ssid = ?1");
	st[Q_CLIENT] = sq_prep(sq, SQ_ROW "ss" SQ_JOIN
			       " WHERE ss.client = ?1");
	st[Q_CNT] = sq_prep(sq, SQ_ROW "ss" SQ_JOIN
			    " WHERE ss.client = ?1 AND ss.name = ?2 AND"
			    " ss.savetime >= ?3 AND ss.savetime <= ?4");
	st[Q_VOL] = sq_prep(sq, "SELECT ss.ssid, ss.client, ss.name,"
			    " ss.savetime, ss.level, ss.totalsize, ss.flags,"
			    " frag.cloneid, vol.name, frag.size FROM vol"
			    " JOIN frag ON frag.volno = vol.volno"
			    " JOIN ss ON ss.ssid = frag.ssid"
			    " WHERE vol.name = ?1");
	for (int k = 0; k < Q_KINDS; k++) {
		for (long i = -nq / 10; i < nq; i++) {
			const struct qparam *q = &qp[i < 0 ? -i : i];
			double t0, t1, t2;
			uint64_t mr, sr;

			t0 = now();
			mr = mm_query(db, k, q, row);
			t1 = now();
			sr = sq_query(st, k, q);
			t2 = now();
			if (i < 0)
				continue;
			ml[k].s[i] = t1 - t0;
			sl[k].s[i] = t2 - t1;
			ml[k].rows += mr;
			sl[k].rows += sr;
		}
		ml[k].n = sl[k].n = nq;
		sqlite3_finalize(st[k]);
	}
	free(row);
}

/* file_size - bytes of path (0 if absent). */
static uint64_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* warm - read a file once so both engines start their queries with
 * their files in the OS page cache (the one loaded first would otherwise
 * have been pushed out by the other's writes). */
static void warm(const char *path)
{
	char *buf = malloc(1 << 20);
	FILE *f = fopen(path, "rb");

	if (f && buf)
		while (fread(buf, 1, 1 << 20, f) > 0)
			;
	if (f)
		fclose(f);
	free(buf);
}

/* cpu_model - the "model name" line of /proc/cpuinfo. */
static void cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');

		if (strncmp(line, "model name", 10) == 0 && c) {
			c++;
			while (*c == ' ')
				c++;
			c[strcspn(c, "\n")] = '\0';
			snprintf(buf, len, "%s", c);
			break;
		}
	}
	fclose(f);
}

/* usage - print the synopsis and exit 2. */
static void usage(void)
{
	fprintf(stderr, "usage: bench_mmdb [-n savesets] [-b batch] "
		"[-q queries] [-d dir] [-G [-B days] [-R days]]\n"
		"  -G  only generate the media database in DIR/mm (save "
		"times from\n      %lld, one every 30 s; browse -B, "
		"retention -R days after)\n", (long long)T0);
	exit(2);
}

int main(int argc, char **argv)
{
	char dir[256] = "/tmp/bench_mmdb", path[300], model[128], date[64];
	struct mmdb *db;
	struct mmdb_opts o;
	sqlite3 *sq;
	struct lat ml[Q_KINDS], sl[Q_KINDS];
	struct qparam *qp;
	double mm_ins, sq_ins, mm_scan, sq_scan, t0;
	uint64_t mm_rows, sq_rows, mm_bytes, sq_bytes;
	time_t tnow = time(NULL);
	int opt, rc, gen_only = 0;

	while ((opt = getopt(argc, argv, "n:b:q:d:GB:R:h")) != -1) {
		switch (opt) {
		case 'G': gen_only = 1; break;
		case 'B': browse_days = atol(optarg); break;
		case 'R': retent_days = atol(optarg); break;
		case 'n': nss = atol(optarg); break;
		case 'b': batch = atol(optarg); break;
		case 'q': nq = atol(optarg); break;
		case 'd': snprintf(dir, sizeof(dir), "%s", optarg); break;
		default: usage();
		}
	}
	if (nss < 1000 || batch < 1 || nq < 10)
		usage();
	nvol = nss / 200;
	ncli = nss / 500;
	for (int k = 0; k < Q_KINDS; k++) {
		ml[k].s = calloc((size_t)nq, sizeof(double));
		sl[k].s = calloc((size_t)nq, sizeof(double));
		ml[k].rows = sl[k].rows = 0;
	}
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path) != 0 || nsr_mkdir_p(dir, 0700) != NSR_OK) {
		fprintf(stderr, "bench_mmdb: cannot prepare %s\n", dir);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/mm", dir);
	nsr_mkdir_p(path, 0700);

	/* Inserts, our engine then SQLite. */
	mmdb_opts_init(&o);
	rc = mmdb_open(path, &o, &db);
	if (rc != NSR_OK)
		die("open", rc);
	mm_ins = mm_insert(db);
	mmdb_close(db);		/* checkpoint */
	if (gen_only) {
		printf("generated %ld save sets on %ld volumes in %s/mm "
		       "(%.1f s)\n", nss, nvol, dir, mm_ins);
		return 0;
	}
	snprintf(path, sizeof(path), "%s/sq.db", dir);
	sq_ok(sqlite3_open(path, &sq), "sqlite open");
	sq_ok(sqlite3_exec(sq, sq_schema, NULL, NULL, NULL), "schema");
	sq_ins = sq_insert(sq);
	sq_ok(sqlite3_wal_checkpoint_v2(sq, NULL, SQLITE_CHECKPOINT_TRUNCATE,
					NULL, NULL), "checkpoint");
	/* Fair query conditions: statistics for the planner, and a page
	 * cache that can hold the whole database as ours does. */
	sq_ok(sqlite3_exec(sq, "ANALYZE; PRAGMA cache_size=-4000000;", NULL,
			   NULL, NULL), "analyze");
	snprintf(path, sizeof(path), "%s/mm/mmdb", dir);
	mm_bytes = file_size(path);
	snprintf(path, sizeof(path), "%s/mm/mmdb.wal", dir);
	mm_bytes += file_size(path);
	snprintf(path, sizeof(path), "%s/sq.db", dir);
	sq_bytes = file_size(path);
	snprintf(path, sizeof(path), "%s/sq.db-wal", dir);
	sq_bytes += file_size(path);

	/* Queries on both, same parameters, files in the OS cache. */
	snprintf(path, sizeof(path), "%s/mm/mmdb", dir);
	warm(path);
	snprintf(path, sizeof(path), "%s/sq.db", dir);
	warm(path);
	snprintf(path, sizeof(path), "%s/mm", dir);
	rc = mmdb_open(path, &o, &db);
	if (rc != NSR_OK)
		die("reopen", rc);
	qp = make_params();
	run_queries(db, sq, qp, ml, sl);
	{
		struct mmdb_ss_row *row = malloc(sizeof(*row));
		sqlite3_stmt *st = sq_prep(sq, SQ_ROW "ss" SQ_JOIN);

		t0 = now();
		mm_rows = mm_run(db, NULL, 0, row);
		mm_scan = now() - t0;
		t0 = now();
		sq_rows = sq_run(st);
		sq_scan = now() - t0;
		sqlite3_finalize(st);
		free(row);
	}
	{
		struct nsr_buf rep;

		nsr_buf_init(&rep, 1 << 20);
		rc = mmdb_check(db, &rep);
		if (rc != NSR_OK)
			fprintf(stderr, "bench_mmdb: check: %s\n%s",
				nsr_strerror(rc), rep.data);
		nsr_buf_release(&rep);
	}
	mmdb_close(db);
	sqlite3_close(sq);

	/* Report. */
	cpu_model(model, sizeof(model));
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", gmtime(&tnow));
	printf("## bench_mmdb %ld save sets, %ld volumes, %ld clients, "
	       "batch %ld\n\n", nss, nvol, ncli, batch);
	printf("machine: %ld CPUs, %s; date %s; SQLite %s\n\n",
	       sysconf(_SC_NPROCESSORS_ONLN), model, date,
	       sqlite3_libversion());
	printf("| measure | mmdb | SQLite | mmdb/SQLite |\n");
	printf("|---|---:|---:|---:|\n");
	printf("| insert (save sets/s) | %.0f | %.0f | %.2f |\n",
	       (double)nss / mm_ins, (double)nss / sq_ins, sq_ins / mm_ins);
	for (int k = 0; k < Q_KINDS; k++) {
		double m50 = lat_pct(&ml[k], 0.5), s50 = lat_pct(&sl[k], 0.5);
		double m99 = lat_pct(&ml[k], 0.99), s99 = lat_pct(&sl[k], 0.99);

		printf("| %s p50 (us), %.1f rows avg | %.1f | %.1f | %.2f |\n",
		       qnames[k], (double)ml[k].rows / (double)nq, m50, s50,
		       m50 / s50);
		printf("| %s p99 (us) | %.1f | %.1f | %.2f |\n", qnames[k], m99,
		       s99, m99 / s99);
		if (ml[k].rows != sl[k].rows)
			printf("| %s rows differ | %" PRIu64 " | %" PRIu64
			       " | |\n", qnames[k], ml[k].rows, sl[k].rows);
	}
	printf("| full scan (s), %" PRIu64 " / %" PRIu64 " rows | %.2f | "
	       "%.2f | %.2f |\n", mm_rows, sq_rows, mm_scan, sq_scan,
	       mm_scan / sq_scan);
	printf("| bytes on disk per save set | %.0f | %.0f | %.2f |\n",
	       (double)mm_bytes / (double)nss, (double)sq_bytes / (double)nss,
	       (double)mm_bytes / (double)sq_bytes);
	printf("| integrity check | %s | | |\n", rc == NSR_OK ? "ok" : "FAIL");
	return rc == NSR_OK ? 0 : 1;
}
