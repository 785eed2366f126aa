/*
 * mmdtest - a small driver of the mmd client library for the storage node
 * system tests (tests/system/4xx-*.sh): ask nsrsnmd for a mover, label,
 * save stdin as a save set, recover a save set to stdout.  Not installed.
 *
 * save and savetree span like save(1): at the end of a tape volume they
 * ask nsrd on HOST for the next volume (NEXT_VOLUME).
 *
 * A fragment is passed around as one word:
 *   volid(32 hex):ssid:seq:ss_offset:file:record:offset:size:complete
 */
#include "nsr/compat.h"

#include <inttypes.h>
#include <time.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/index_clnt.h"
#include "nsr/mmd_clnt.h"
#include "nsr/nsrd_clnt.h"
#include "nsr/rpc.h"
#include "nsr/session.h"
#include "nsr/snmd_clnt.h"
#include "nsr/mmdb_clnt.h"
#include "nsr/saver.h"

/* usage - the commands. */
static int usage(void)
{
	fprintf(stderr,
		"usage: mmdtest mover SNODE TYPE PATH NAME [CAPACITY "
		"[SERVER]]\n"
		"       mmdtest status SNODE\n"
		"       mmdtest ixfind SERVER CLIENT PATH\n"
		"       mmdtest mmdb-vol SERVER NAME VOLID POOL TYPE\n"
		"       mmdtest mmdb-voldel SERVER NAME\n"
		"       mmdtest mmdb-volget SERVER NAME\n"
		"       mmdtest mmdb-ss SERVER CLIENT NAME SAVETIME\n"
		"       mmdtest mmdb-frags SERVER SSID\n"
		"       mmdtest mmdb-ssflags SERVER SSID SET CLEAR (hex)\n"
		"       mmdtest mmdb-fragwords SERVER SSID (as recover takes "
		"them)\n"
		"       mmdtest label HOST PORT VOLUME POOL BLOCKSIZE [force]\n"
		"       mmdtest readlabel HOST PORT\n"
		"       mmdtest save HOST PORT SSID CLIENT NAME [SAVETIME] < "
		"data\n"
		"       mmdtest savetree HOST PORT SSID CLIENT PATH\n"
		"       mmdtest recover HOST PORT SSID FRAG... > data\n"
		"MMDTEST_FORGE=1: save and recover bring a grant made with "
		"a key of zeros\n"
		"(nsrd's key is another: the mover must refuse it)\n");
	return 2;
}

/* forge - with MMDTEST_FORGE=1, give m a grant of kind for ssid made
 * with a key of zeros, good for an hour. */
static void forge(struct nsr_mmd *m, uint32_t kind, uint32_t ssid)
{
	static const uint8_t zeros[NSR_GRANT_KEY_LEN];
	const char *e = getenv("MMDTEST_FORGE");
	nsr_grant g;

	if (e && strcmp(e, "1") == 0 &&
	    nsr_rpc_grant_make(zeros, kind, ssid, time(NULL) + 3600, &g) ==
		    NSR_OK)
		nsr_mmd_grant(m, &g);
}

/* fail - print the library's message and return 1. */
static int fail(const char *what, int rc, struct nsr_buf *err)
{
	fprintf(stderr, "mmdtest: %s: %s (%s)\n", what,
		err->len ? err->data : "", nsr_strerror(rc));
	nsr_buf_release(err);
	return 1;
}

/* frag_print - one fragment as a word. */
static void frag_print(const struct nsr_vol_frag *f)
{
	for (int i = 0; i < 16; i++)
		printf("%02x", f->volid[i]);
	printf(":%u:%u:%" PRIu64 ":%u:%" PRIu64 ":%" PRIu64 ":%" PRIu64
	       ":%d\n", f->ssid, f->frag_seq, f->ss_offset, f->file,
	       f->record, f->offset, f->size, f->complete);
}

/* frag_parse - the word back into a fragment; 0 or -1. */
static int frag_parse(const char *s, struct nsr_vol_frag *f)
{
	unsigned v;
	int n = 0;

	memset(f, 0, sizeof(*f));
	for (int i = 0; i < 16; i++) {
		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		f->volid[i] = (uint8_t)v;
	}
	if (sscanf(s + 32, ":%u:%u:%" SCNu64 ":%u:%" SCNu64 ":%" SCNu64
		   ":%" SCNu64 ":%d%n", &f->ssid, &f->frag_seq, &f->ss_offset,
		   &f->file, &f->record, &f->offset, &f->size, &f->complete,
		   &n) != 8 || s[32 + n] != '\0')
		return -1;
	return 0;
}

/* next_volume - span function: NEXT_VOLUME at nsrd on the host ctx,
 * as save asks it (nsr_session_next_volume). */
static int next_volume(void *ctx, uint32_t ssid, const char *pool,
		       const uint8_t full_volid[16], struct nsr_mmd_next *nx,
		       struct nsr_buf *err)
{
	const char *server = ctx;
	struct nsr_nsrd *d = NULL;
	int rc;

	rc = nsr_nsrd_open(server, &d, err);
	if (rc == NSR_OK)
		rc = nsr_session_next_volume(d, server, ssid, pool, full_volid,
					     nx, err);
	nsr_nsrd_close(d);
	return rc;
}

/* cmd_save - stdin as save set ssid. */
static int cmd_save(struct nsr_mmd *m, char **av)
{
	struct nsr_vol_sshdr hdr;
	struct nsr_vol_sstail tail;
	struct nsr_vol_frag frag;
	struct nsr_buf err;
	uint8_t volid[16] = {0};
	static char buf[1 << 16];
	ssize_t n;
	int rc;

	nsr_buf_init(&err, 0);
	memset(&hdr, 0, sizeof(hdr));
	hdr.ssid = (uint32_t)strtoul(av[0], NULL, 10);
	snprintf(hdr.client, sizeof(hdr.client), "%s", av[1]);
	snprintf(hdr.name, sizeof(hdr.name), "%s", av[2]);
	snprintf(hdr.level, sizeof(hdr.level), "full");
	snprintf(hdr.pool, sizeof(hdr.pool), "Default");
	hdr.savetime = av[3] ? strtoll(av[3], NULL, 10) : time(NULL);
	memset(&tail, 0, sizeof(tail));
	forge(m, NSR_GRANT_WRITE, hdr.ssid);
	rc = nsr_mmd_ss_begin(m, &hdr, volid, NULL, &err);
	if (rc != NSR_OK)
		return fail("begin", rc, &err);
	while ((n = read(0, buf, sizeof(buf))) > 0) {
		rc = nsr_mmd_ss_write(m, buf, (size_t)n);
		if (rc != NSR_OK) {
			nsr_buf_addstr(&err, nsr_mmd_errmsg(m));
			return fail("write", rc, &err);
		}
		tail.bytes += (uint64_t)n;
	}
	tail.files = 1;
	rc = nsr_mmd_ss_end(m, &tail, &frag, &err);
	if (rc != NSR_OK)
		return fail("end", rc, &err);
	frag_print(&frag);
	nsr_buf_release(&err);
	return 0;
}

struct sink_ctx {
	struct nsr_mmd *m;
	uint64_t bytes;
};

/* sink - saver output into the save session. */
static int sink(void *ctx, const void *p, size_t n)
{
	struct sink_ctx *s = ctx;

	s->bytes += n;
	return nsr_mmd_ss_write(s->m, p, n);
}

/* cmd_savetree - a real save stream of PATH as save set ssid. */
static int cmd_savetree(struct nsr_mmd *m, char **av)
{
	struct nsr_saver_opts so;
	struct nsr_saver_cb cb;
	struct nsr_saver_stats st;
	struct nsr_saver *sv = NULL;
	struct nsr_vol_sshdr hdr;
	struct nsr_vol_sstail tail;
	struct nsr_vol_frag frag;
	struct nsr_buf err;
	uint8_t volid[16] = {0};
	struct sink_ctx sc = {m, 0};
	int rc;

	nsr_buf_init(&err, 0);
	memset(&hdr, 0, sizeof(hdr));
	hdr.ssid = (uint32_t)strtoul(av[0], NULL, 10);
	snprintf(hdr.client, sizeof(hdr.client), "%s", av[1]);
	snprintf(hdr.name, sizeof(hdr.name), "%s", av[2]);
	snprintf(hdr.level, sizeof(hdr.level), "full");
	snprintf(hdr.pool, sizeof(hdr.pool), "Default");
	hdr.savetime = time(NULL);
	forge(m, NSR_GRANT_WRITE, hdr.ssid);
	rc = nsr_mmd_ss_begin(m, &hdr, volid, NULL, &err);
	if (rc != NSR_OK)
		return fail("begin", rc, &err);
	memset(&so, 0, sizeof(so));
	so.client = hdr.client;
	so.name = hdr.name;
	so.savetime = hdr.savetime;
	so.ssid = hdr.ssid;
	memset(&cb, 0, sizeof(cb));
	cb.write = sink;
	cb.write_ctx = &sc;
	rc = nsr_saver_new(&sv, &so, &cb);
	if (rc == NSR_OK)
		rc = nsr_saver_add_path(sv, av[2]);
	if (rc == NSR_OK)
		rc = nsr_saver_finish(sv);
	memset(&st, 0, sizeof(st));
	if (sv)
		nsr_saver_stats(sv, &st);
	nsr_saver_free(sv);
	if (rc != NSR_OK)
		return fail("save stream", rc, &err);
	memset(&tail, 0, sizeof(tail));
	tail.bytes = sc.bytes;
	tail.files = st.files;
	rc = nsr_mmd_ss_end(m, &tail, &frag, &err);
	if (rc != NSR_OK)
		return fail("end", rc, &err);
	frag_print(&frag);
	nsr_buf_release(&err);
	return 0;
}

/* cmd_recover - save set ssid from the given fragments to stdout. */
static int cmd_recover(struct nsr_mmd *m, int ac, char **av)
{
	struct nsr_vol_frag frags[16];
	struct nsr_buf err;
	static char buf[1 << 20];
	size_t got, nf = 0;
	int eof = 0, rc;

	nsr_buf_init(&err, 0);
	for (int i = 1; i < ac && nf < NSR_ARRAY_SIZE(frags); i++)
		if (frag_parse(av[i], &frags[nf++]) != 0) {
			nsr_buf_release(&err);
			return usage();
		}
	forge(m, NSR_GRANT_READ, (uint32_t)strtoul(av[0], NULL, 10));
	rc = nsr_mmd_read_open(m, (uint32_t)strtoul(av[0], NULL, 10), frags,
			       nf, &err);
	if (rc != NSR_OK)
		return fail("read open", rc, &err);
	while (!eof) {
		rc = nsr_mmd_read_next(m, buf, sizeof(buf), &got, &eof, &err);
		if (rc != NSR_OK)
			return fail("read", rc, &err);
		if (got && write(1, buf, got) != (ssize_t)got)
			return 1;
	}
	nsr_buf_release(&err);
	return 0;
}

/* cmd_mover - SNM_MOVER. */
static int cmd_mover(char **av)
{
	struct nsr_snmd_device d;
	struct nsr_snmd *h = NULL;
	struct nsr_buf err;
	int port, rc;
	pid_t pid;

	nsr_buf_init(&err, 0);
	memset(&d, 0, sizeof(d));
	d.media_type = av[1];
	d.path = av[2];
	d.name = av[3];
	if (av[4])
		d.capacity = strtoull(av[4], NULL, 10);
	rc = nsr_snmd_open(av[0], &h, &err);
	if (rc == NSR_OK)
		rc = nsr_snmd_mover(h, &d, av[4] ? av[5] : NULL, &port, &pid,
				    &err);
	nsr_snmd_close(h);
	if (rc != NSR_OK)
		return fail("mover", rc, &err);
	printf("%d %ld\n", port, (long)pid);
	nsr_buf_release(&err);
	return 0;
}

/* cmd_status - SNM_STATUS. */
static int cmd_status(char **av)
{
	struct nsr_snmd_mover *v = NULL;
	struct nsr_snmd *h = NULL;
	struct nsr_buf err;
	size_t n = 0;
	int rc;

	nsr_buf_init(&err, 0);
	rc = nsr_snmd_open(av[0], &h, &err);
	if (rc == NSR_OK)
		rc = nsr_snmd_status(h, &v, &n, &err);
	nsr_snmd_close(h);
	if (rc != NSR_OK)
		return fail("status", rc, &err);
	for (size_t i = 0; i < n; i++)
		printf("%s %d %ld\n", v[i].device, v[i].port, (long)v[i].pid);
	free(v);
	nsr_buf_release(&err);
	return 0;
}

/* print_ix - one index entry: ssid, size, path. */
static int print_ix(void *ctx, const struct nsr_cfi_saveset *ss,
		    const struct nsr_cfi_entry *e)
{
	NSR_UNUSED(ctx);
	printf("%llu %llu %s\n", (unsigned long long)ss->ssid,
	       (unsigned long long)e->size, e->path);
	return 0;
}

/* cmd_ixfind - the index versions of a path. */
static int cmd_ixfind(char **av)
{
	struct nsr_ixclnt *ix = NULL;
	struct nsr_buf err;
	int rc;

	nsr_buf_init(&err, 0);
	rc = nsr_ixclnt_open(av[0], &ix, &err);
	if (rc != NSR_OK)
		return fail("index", rc, &err);
	rc = nsr_ixclnt_find(ix, av[1], av[2], 0, print_ix, NULL);
	if (rc != NSR_OK) {
		nsr_buf_addstr(&err, nsr_ixclnt_errmsg(ix));
		nsr_ixclnt_close(ix);
		return fail("find", rc, &err);
	}
	nsr_ixclnt_close(ix);
	nsr_buf_release(&err);
	return 0;
}

/* cmd_mmdb - media database set-up and inspection for the tests. */
static int cmd_mmdb(const char *cmd, int ac, char **av)
{
	struct mmdb_clnt *c = NULL;
	struct nsr_buf err;
	int rc = NSR_ERR_INVAL;

	nsr_buf_init(&err, 0);
	if (ac < 1)
		return usage();
	rc = mmdb_clnt_open(av[0], &c, &err);
	if (rc != NSR_OK)
		return fail("mmdb", rc, &err);
	if (strcmp(cmd, "mmdb-vol") == 0 && ac == 5) {
		struct mmdb_volume v;
		unsigned x;

		memset(&v, 0, sizeof(v));
		snprintf(v.name, sizeof(v.name), "%s", av[1]);
		for (int i = 0; i < 16; i++) {
			if (sscanf(av[2] + 2 * i, "%2x", &x) != 1)
				break;
			v.volid[i] = (uint8_t)x;
		}
		snprintf(v.pool, sizeof(v.pool), "%s", av[3]);
		snprintf(v.type, sizeof(v.type), "%s", av[4]);
		v.block_size = 32768;
		rc = mmdb_clnt_vol_put(c, &v);
	} else if (strcmp(cmd, "mmdb-volget") == 0 && ac == 2) {
		struct mmdb_volume v;

		rc = mmdb_clnt_vol_get(c, av[1], &v);
		if (rc == NSR_OK)
			printf("%s flags 0x%x written %llu\n", v.name, v.flags,
			       (unsigned long long)v.written);
	} else if (strcmp(cmd, "mmdb-voldel") == 0 && ac == 2) {
		rc = mmdb_clnt_vol_delete(c, av[1]);
	} else if (strcmp(cmd, "mmdb-ss") == 0 && ac == 4) {
		struct mmdb_saveset ss;

		memset(&ss, 0, sizeof(ss));
		snprintf(ss.client, sizeof(ss.client), "%s", av[1]);
		snprintf(ss.name, sizeof(ss.name), "%s", av[2]);
		snprintf(ss.pool, sizeof(ss.pool), "Default");
		ss.savetime = strtoll(av[3], NULL, 10);
		ss.flags = MMDB_SS_VALID;
		rc = mmdb_clnt_ss_create(c, &ss, NULL);
		if (rc == NSR_OK)
			printf("%u\n", ss.ssid);
	} else if (strcmp(cmd, "mmdb-ssflags") == 0 && ac == 4) {
		rc = mmdb_clnt_ss_flags(c, (uint32_t)strtoul(av[1], NULL, 10),
					(uint32_t)strtoul(av[2], NULL, 16),
					(uint32_t)strtoul(av[3], NULL, 16));
	} else if (strcmp(cmd, "mmdb-frags") == 0 && ac == 2) {
		struct mmdb_fragment f[16];
		size_t n = 0;

		rc = mmdb_clnt_frag_list(c, (uint32_t)strtoul(av[1], NULL, 10),
					 f, NSR_ARRAY_SIZE(f), &n);
		for (size_t i = 0; rc == NSR_OK && i < n; i++)
			printf("%u %u %u %llu %llu %llu 0x%x\n", f[i].ssid,
			       f[i].cloneid, f[i].seq,
			       (unsigned long long)f[i].size,
			       (unsigned long long)f[i].file,
			       (unsigned long long)f[i].offset, f[i].flags);
	} else if (strcmp(cmd, "mmdb-fragwords") == 0 && ac == 2) {
		struct mmdb_fragment f[16];
		struct nsr_vol_frag w;
		size_t n = 0;

		rc = mmdb_clnt_frag_list(c, (uint32_t)strtoul(av[1], NULL, 10),
					 f, NSR_ARRAY_SIZE(f), &n);
		for (size_t i = 0; rc == NSR_OK && i < n; i++) {
			memset(&w, 0, sizeof(w));
			memcpy(w.volid, f[i].volid, sizeof(w.volid));
			w.ssid = f[i].ssid;
			w.frag_seq = f[i].seq;
			w.ss_offset = f[i].ss_offset;
			w.file = f[i].file;
			w.record = f[i].record;
			w.offset = f[i].offset;
			w.size = f[i].size;
			w.complete = (f[i].flags & (MMDB_FRAG_COMPLETE |
						    MMDB_FRAG_TAIL)) != 0;
			frag_print(&w);
		}
	} else {
		mmdb_clnt_close(c);
		nsr_buf_release(&err);
		return usage();
	}
	if (rc != NSR_OK)
		nsr_buf_addstr(&err, mmdb_clnt_errmsg(c));
	mmdb_clnt_close(c);
	if (rc != NSR_OK)
		return fail(cmd, rc, &err);
	nsr_buf_release(&err);
	return 0;
}

/* main - one command of the test driver. */
int main(int argc, char **argv)
{
	struct nsr_mmd *m = NULL;
	struct nsr_vol_label lab;
	struct nsr_buf err;
	int rc, has_data, ret = 1;

	if (argc < 3)
		return usage();
	if (strcmp(argv[1], "mover") == 0)
		return argc >= 6 && argc <= 8 ? cmd_mover(argv + 2) : usage();
	if (strcmp(argv[1], "status") == 0)
		return cmd_status(argv + 2);
	if (strncmp(argv[1], "mmdb-", 5) == 0)
		return cmd_mmdb(argv[1], argc - 2, argv + 2);
	if (strcmp(argv[1], "ixfind") == 0)
		return argc == 5 ? cmd_ixfind(argv + 2) : usage();
	if (argc < 4)
		return usage();
	nsr_buf_init(&err, 0);
	rc = nsr_mmd_connect(argv[2], atoi(argv[3]), &m, &err);
	if (rc != NSR_OK)
		return fail("connect", rc, &err);
	nsr_mmd_set_span_fn(m, next_volume, argv[2]);
	if (strcmp(argv[1], "label") == 0 && argc >= 7) {
		rc = nsr_mmd_label(m, argv[4], argv[5],
				   (uint32_t)strtoul(argv[6], NULL, 10),
				   argc > 7 && strcmp(argv[7], "force") == 0,
				   &lab, &err);
		ret = rc ? fail("label", rc, &err) : 0;
		if (!rc)
			printf("%s %s %u\n", lab.name, lab.pool,
			       lab.block_size);
	} else if (strcmp(argv[1], "readlabel") == 0) {
		rc = nsr_mmd_read_label(m, &lab, &has_data, &err);
		ret = rc ? fail("read label", rc, &err) : 0;
		if (!rc) {
			printf("%s %s %u %s ", lab.name, lab.pool,
			       lab.block_size, has_data ? "data" : "empty");
			for (int i = 0; i < 16; i++)
				printf("%02x", lab.volid[i]);
			printf("\n");
		}
	} else if (strcmp(argv[1], "save") == 0 && (argc == 7 || argc == 8)) {
		ret = cmd_save(m, argv + 4);
	} else if (strcmp(argv[1], "savetree") == 0 && argc == 7) {
		ret = cmd_savetree(m, argv + 4);
	} else if (strcmp(argv[1], "recover") == 0 && argc >= 6) {
		ret = cmd_recover(m, argc - 4, argv + 4);
	} else {
		ret = usage();
	}
	nsr_mmd_close(m);
	nsr_buf_release(&err);
	return ret;
}
