/*
 * tape_check.c - the media library against a real tape driver: label,
 * multiplexed save sets with segment filemarks, positioned read-back,
 * two of the three read in one pass (what it cost is printed), scan,
 * append, and (on a second, small tape) end of medium with exact
 * spanning accounting.  Runs in the tapelab guest against /dev/nst0 (see
 * README.md); with a vtape path it runs on the host as a smoke test.
 *
 *   tape_check [-v] DEVICE [EOM_DEVICE]
 *     -v          DEVICE and EOM_DEVICE are vtape files (host smoke test)
 *
 * Prints "PASS name" / "FAIL name: why" lines and "N passed, N failed";
 * exit status 0 only if nothing failed.  On a real st device, checks of
 * behaviour that the tgt emulator is known to get wrong print XFAIL
 * instead of FAIL (on vtape they must pass).
 */
#include "nsr/compat.h"

#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/dev.h"
#include "nsr/err.h"
#include "nsr/vol.h"

static int npass, nfail, nxfail;
static int on_tape; /* a real st device (not -v): tgt gaps may show */

/* gap - a check that the tgt emulator is known to fail (not a real
 * drive): XFAIL on tape, an ordinary check on vtape. */
static void gap(int ok, const char *name, const char *why)
{
	if (ok || !on_tape) {
		if (ok)
			npass++;
		else
			nfail++;
		printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", name,
		       ok ? "" : ": ", ok ? "" : why);
	} else {
		nxfail++;
		printf("XFAIL %s: %s\n", name, why);
	}
	fflush(stdout);
}

/* check - one PASS/FAIL line. */
static void check(int ok, const char *name, const char *fmt, ...)
	NSR_PRINTF(3, 4);
static void check(int ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		npass++;
		printf("PASS %s\n", name);
	} else {
		nfail++;
		printf("FAIL %s: ", name);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf("\n");
	}
	fflush(stdout);
}

/* byte_of - save-set content. */
static uint8_t byte_of(uint32_t ssid, uint64_t off)
{
	return (uint8_t)(((off + 1) * 0x9e3779b97f4a7c15ull ^ ssid) >> 29);
}

/* fill - save-set bytes [off, off+n). */
static void fill(uint32_t ssid, uint64_t off, uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = byte_of(ssid, off + i);
}

/* collect - reader callback appending to a buffer. */
static int collect(void *arg, const void *p, size_t len)
{
	return nsr_buf_add(arg, p, len);
}

/* verify - buffer holds bytes [0, len) of ssid. */
static int verify(uint32_t ssid, const struct nsr_buf *b, uint64_t len)
{
	size_t i;

	if (b->len != len)
		return 0;
	for (i = 0; i < b->len; i++)
		if ((uint8_t)b->data[i] != byte_of(ssid, i))
			return 0;
	return 1;
}

/* What one pass over several save sets delivered (sets_*). */
struct sets_got {
	struct nsr_buf b[3];
	int ended[3];
	int bad;
};

/* sets_data - a one-pass data piece of ssid (1..3). */
static int sets_data(void *arg, uint32_t ssid, const void *p, size_t len)
{
	struct sets_got *g = arg;

	if (ssid < 1 || ssid > 3) {
		g->bad = 1;
		return 1;
	}
	return nsr_buf_add(&g->b[ssid - 1], p, len) != NSR_OK;
}

/* sets_end - ssid's end chunk in a one-pass read. */
static int sets_end(void *arg, uint32_t ssid, const struct nsr_vol_sstail *t,
		    uint64_t bytes_here, const struct nsr_vol_loc *loc)
{
	struct sets_got *g = arg;

	NSR_UNUSED(t);
	NSR_UNUSED(bytes_here);
	NSR_UNUSED(loc);
	if (ssid >= 1 && ssid <= 3)
		g->ended[ssid - 1]++;
	else
		g->bad = 1;
	return 0;
}

/* one_pass - save sets 1 and 3 of the multiplexed file in one pass;
 * each whole and ended once, nothing of save set 2 delivered. */
static void one_pass(struct nsr_vol_reader *r, const struct nsr_vol_frag *f,
		     const uint64_t *total)
{
	struct nsr_vol_scan_ops ops = {0};
	struct nsr_vol_frag two[2] = {f[0], f[2]};
	struct nsr_vol_rstats st;
	struct sets_got g;
	int rc;

	memset(&g, 0, sizeof(g));
	for (int i = 0; i < 3; i++)
		nsr_buf_init(&g.b[i], 0);
	ops.data = sets_data;
	ops.end = sets_end;
	rc = nsr_vol_reader_read_sets(r, two, 2, &ops, &g);
	nsr_vol_reader_stats(r, &st);
	check(rc == NSR_OK && !g.bad && verify(1, &g.b[0], total[0]) &&
		      verify(3, &g.b[2], total[2]) && g.ended[0] == 1 &&
		      g.ended[2] == 1 && g.b[1].len == 0,
	      "one pass: save sets 1 and 3, whole, nothing of 2",
	      "rc %s: %zu and %zu bytes, ends %d %d: %s", nsr_strerror(rc),
	      g.b[0].len, g.b[2].len, g.ended[0], g.ended[2],
	      nsr_vol_reader_errmsg(r));
	printf("  one pass: %" PRIu64 " blocks read, %" PRIu64 " of them "
	       "save set 2's (skipped), %" PRIu64 " passed unread, %" PRIu64
	       " positioning(s)\n", st.blocks_read, st.blocks_skipped,
	       st.blocks_passed, st.positions);
	for (int i = 0; i < 3; i++)
		nsr_buf_release(&g.b[i]);
}

/* hdr - a save-set header. */
static void hdr(struct nsr_vol_sshdr *h, uint32_t ssid)
{
	memset(h, 0, sizeof(*h));
	h->ssid = ssid;
	snprintf(h->client, sizeof(h->client), "tapelab");
	snprintf(h->name, sizeof(h->name), "/set/%" PRIu32, ssid);
	snprintf(h->level, sizeof(h->level), "full");
}

/* open_dev - the device, tape or vtape. */
static struct nsr_dev *open_dev(const char *path, int vtape, uint64_t cap)
{
	struct nsr_dev_opts o;
	struct nsr_dev *dev = NULL;
	int rc;

	memset(&o, 0, sizeof(o));
	o.create = 1;
	o.vtape_capacity = cap;
	o.vtape_early_warning = cap / 16;
	rc = nsr_dev_open(vtape ? NSR_DEV_VTAPE : NSR_DEV_TAPE, path, &o, &dev,
			  NULL);
	check(rc == NSR_OK, "open device", "%s: %s", path,
	      rc ? nsr_strerror(rc) : "");
	return dev;
}

/* rec_is - the next read gives a record of len bytes. */
static int rec_is(struct nsr_dev *dev, uint8_t *buf, size_t cap, size_t len)
{
	size_t got = 0;

	return nsr_dev_read(dev, buf, cap, &got) == NSR_OK && got == len &&
	       buf[0] == (uint8_t)len && buf[len - 1] == (uint8_t)(len >> 3);
}

/* put_rec - write one record of len bytes tagged by its length. */
static int put_rec(struct nsr_dev *dev, uint8_t *buf, size_t len)
{
	memset(buf, 0, len);
	buf[0] = (uint8_t)len;
	buf[len - 1] = (uint8_t)(len >> 3);
	return nsr_dev_write(dev, buf, len);
}

/* pos_is - tell gives (file, rec); NSR_ERR_STATE is accepted where the
 * driver may legitimately not know (after backward motion). */
static int pos_is(struct nsr_dev *dev, uint32_t file, uint64_t rec,
		  int may_forget)
{
	struct nsr_dev_pos p;
	int rc = nsr_dev_tell(dev, &p);

	if (rc == NSR_ERR_STATE && may_forget)
		return 1;
	return rc == NSR_OK && p.file == file && p.record == rec;
}

/* dev_semantics - the same device semantics tests/unit/media checks on
 * vtape, here through whatever driver DEVICE is. */
static void dev_semantics(struct nsr_dev *dev)
{
	static const size_t f0[] = { 100, 70000, 32768 };
	struct nsr_dev_pos p;
	uint8_t *buf = malloc(1u << 20);
	size_t i, got = 0;
	int ok, rc, rc2;

	ok = nsr_dev_rewind(dev) == NSR_OK;
	for (i = 0; ok && i < 3; i++)
		ok = put_rec(dev, buf, f0[i]) == NSR_OK;
	ok = ok && nsr_dev_weof(dev, 1) == NSR_OK &&
	     put_rec(dev, buf, 5000) == NSR_OK &&
	     put_rec(dev, buf, 6000) == NSR_OK &&
	     nsr_dev_weof(dev, 1) == NSR_OK;
	check(ok, "dev: records and filemarks written", "%s",
	      nsr_dev_errmsg(dev));
	check(pos_is(dev, 2, 0, 0), "dev: tell after writing",
	      "%s", nsr_dev_errmsg(dev));
	ok = nsr_dev_rewind(dev) == NSR_OK;
	for (i = 0; ok && i < 3; i++)
		ok = rec_is(dev, buf, 1u << 20, f0[i]);
	check(ok, "dev: records keep their boundaries", "%s",
	      nsr_dev_errmsg(dev));
	check(nsr_dev_read(dev, buf, 1u << 20, &got) == NSR_ERR_EOF &&
		      pos_is(dev, 1, 0, 0),
	      "dev: read at a filemark gives EOF, next file",
	      "%s", nsr_dev_errmsg(dev));
	check(rec_is(dev, buf, 1u << 20, 5000) &&
		      rec_is(dev, buf, 1u << 20, 6000) &&
		      nsr_dev_read(dev, buf, 1u << 20, &got) == NSR_ERR_EOF &&
		      nsr_dev_read(dev, buf, 1u << 20, &got) == NSR_ERR_EOD,
	      "dev: second file, then end of data", "%s", nsr_dev_errmsg(dev));
	check(nsr_dev_rewind(dev) == NSR_OK && nsr_dev_fsf(dev, 1) == NSR_OK &&
		      pos_is(dev, 1, 0, 0) && rec_is(dev, buf, 1u << 20, 5000),
	      "dev: FSF", "%s", nsr_dev_errmsg(dev));
	rc = nsr_dev_bsf(dev, 1);
	rc2 = nsr_dev_read(dev, buf, 1u << 20, &got);
	gap(rc == NSR_OK && rc2 == NSR_ERR_EOF,
	    "dev: BSF ends just before the filemark",
	    "tgt's reverse SPACE filemarks steps one block too far "
	    "(space_filemark_reverse in usr/bs_ssc.c)");
	/* The rest positions on its own, independent of the above. */
	p.file = 0;
	p.record = 3;
	rc = nsr_dev_seek(dev, &p);
	if (rc == NSR_OK)
		rc = nsr_dev_bsr(dev, 2);
	rc2 = nsr_dev_read(dev, buf, 1u << 20, &got);
	check(rc == NSR_OK && rc2 == NSR_OK && got == 70000, "dev: BSR",
	      "bsr %s, read %s, %zu bytes (%s)", nsr_strerror(rc),
	      nsr_strerror(rc2), got, nsr_dev_errmsg(dev));
	p.record = 1;
	rc = nsr_dev_seek(dev, &p);
	gap(rc == NSR_OK && nsr_dev_fsr(dev, 5) == NSR_ERR_EOF &&
		    rec_is(dev, buf, 1u << 20, 5000),
	    "dev: FSR stops after a filemark",
	    "tgt's SPACE blocks does not stop at filemarks "
	    "(space_blocks in usr/bs_ssc.c)");
	check(nsr_dev_rewind(dev) == NSR_OK && nsr_dev_fsf(dev, 1) == NSR_OK,
	      "dev: back to file 1", "%s", nsr_dev_errmsg(dev));
	rc = nsr_dev_bsr(dev, 1);
	gap(rc == NSR_ERR_EOF &&
		    nsr_dev_read(dev, buf, 1u << 20, &got) == NSR_ERR_EOF &&
		    rec_is(dev, buf, 1u << 20, 5000),
	    "dev: BSR crosses a filemark and stops before it",
	    "tgt's SPACE blocks does not stop at filemarks "
	    "(space_blocks in usr/bs_ssc.c)");
	check(nsr_dev_fsf(dev, 5) == NSR_ERR_EOD, "dev: FSF past the end",
	      "%s", nsr_dev_errmsg(dev));
	p.file = 1;
	p.record = 1;
	check(nsr_dev_seek(dev, &p) == NSR_OK &&
		      rec_is(dev, buf, 1u << 20, 6000),
	      "dev: seek to file 1 record 1", "%s", nsr_dev_errmsg(dev));
	check(nsr_dev_rewind(dev) == NSR_OK && nsr_dev_fsr(dev, 1) == NSR_OK &&
		      nsr_dev_read(dev, buf, 32768, &got) == NSR_ERR_TOOBIG &&
		      rec_is(dev, buf, 1u << 20, 32768),
	      "dev: short buffer: TOOBIG, record skipped",
	      "%s", nsr_dev_errmsg(dev));
	check(nsr_dev_rewind(dev) == NSR_OK && nsr_dev_eod(dev) == NSR_OK &&
		      pos_is(dev, 2, 0, 0),
	      "dev: EOD", "%s", nsr_dev_errmsg(dev));
	free(buf);
}

#define NSS 3

/* main_test - label, multiplex, read back, scan, append. */
static void main_test(struct nsr_dev *dev)
{
	static const uint64_t total[NSS] = { 3000000, 1234567, 2500000 };
	struct nsr_vol_label lab, got;
	struct nsr_vol_wopts wo = { NULL, 1u << 20, 0 };
	struct nsr_vol_writer *w = NULL;
	struct nsr_vol_session *s[NSS];
	struct nsr_vol_frag frag[NSS], extra;
	struct nsr_vol_reader *r = NULL;
	struct nsr_vol_sstail t = { 0, 1, 0 };
	struct nsr_vol_sshdr h;
	struct nsr_dev_info info;
	struct nsr_buf why, out;
	uint64_t off[NSS] = { 0 }, n = 0;
	uint8_t *buf = malloc(100000);
	int i, rc, live = NSS, data = 0;

	nsr_buf_init(&why, 0);
	nsr_buf_init(&out, 0);
	nsr_dev_get_info(dev, &info);
	printf("  drive block limits: %" PRIu32 " .. %" PRIu32 " bytes\n",
	       info.min_record, info.max_record);
	rc = nsr_vol_label_init(&lab, "LAB001", "Default", 256u << 10,
				"LTO-emul", &why);
	if (rc == NSR_OK)
		rc = nsr_vol_label_write(dev, &lab, 1, &why);
	check(rc == NSR_OK, "label 256 KB", "%s", why.data);
	rc = nsr_vol_label_read(dev, &got, &why);
	check(rc == NSR_OK && memcmp(got.volid, lab.volid, 16) == 0 &&
		      got.block_size == (256u << 10),
	      "read label back", "%s", why.data);
	rc = nsr_vol_has_data(dev, &data);
	check(rc == NSR_OK && data == 0, "new volume holds no data", "rc %d",
	      rc);

	rc = nsr_vol_writer_open(dev, &wo, &w, &why);
	check(rc == NSR_OK, "writer open", "%s", why.data);
	if (rc != NSR_OK)
		goto out;
	for (i = 0; i < NSS; i++) {
		hdr(&h, (uint32_t)(i + 1));
		rc = nsr_vol_session_begin(w, &h, NULL, &s[i]);
		if (rc != NSR_OK)
			break;
	}
	check(rc == NSR_OK, "three sessions", "%s", nsr_strerror(rc));
	while (rc == NSR_OK && live > 0) {
		for (i = 0; rc == NSR_OK && i < NSS; i++) {
			size_t k = 1000 + (size_t)(off[i] * 7 % 90000);

			if (s[i] == NULL)
				continue;
			k = (size_t)NSR_MIN((uint64_t)k, total[i] - off[i]);
			fill((uint32_t)(i + 1), off[i], buf, k);
			rc = nsr_vol_session_write(s[i], buf, k);
			off[i] += k;
			if (rc == NSR_OK && off[i] == total[i]) {
				t.bytes = total[i];
				rc = nsr_vol_session_end(s[i], &t, &frag[i]);
				s[i] = NULL;
				live--;
			}
		}
	}
	check(rc == NSR_OK, "multiplexed write", "%s: %s", nsr_strerror(rc),
	      nsr_vol_writer_errmsg(w));
	rc = nsr_vol_writer_close(w);
	check(rc == NSR_OK, "writer close (filemark)", "%s",
	      nsr_strerror(rc));
	check(frag[0].file == 1 && frag[1].file == 1 && frag[0].record == 0,
	      "fragments start in file 1", "file %" PRIu32 " rec %" PRIu64,
	      frag[0].file, frag[0].record);

	/* Append one more save set: it starts in a new tape file. */
	rc = nsr_vol_writer_open(dev, &wo, &w, &why);
	if (rc == NSR_OK) {
		hdr(&h, 9);
		rc = nsr_vol_session_begin(w, &h, NULL, &s[0]);
		fill(9, 0, buf, 50000);
		if (rc == NSR_OK)
			rc = nsr_vol_session_write(s[0], buf, 50000);
		t.bytes = 50000;
		if (rc == NSR_OK)
			rc = nsr_vol_session_end(s[0], &t, &extra);
		if (rc == NSR_OK)
			rc = nsr_vol_writer_close(w);
	}
	check(rc == NSR_OK && extra.file > frag[0].file && extra.record == 0,
	      "append after EOD", "rc %s file %" PRIu32, nsr_strerror(rc),
	      extra.file);

	/* Positioned read of the second save set. */
	rc = nsr_vol_reader_open(dev, lab.volid, &r, &why);
	check(rc == NSR_OK, "reader open", "%s", why.data);
	if (rc != NSR_OK)
		goto out;
	rc = nsr_vol_reader_read(r, &frag[1], collect, &out, NULL, NULL, &n);
	check(rc == NSR_OK && verify(2, &out, total[1]),
	      "positioned read of save set 2", "rc %s, %zu bytes: %s",
	      nsr_strerror(rc), out.len, nsr_vol_reader_errmsg(r));
	nsr_buf_reset(&out);
	one_pass(r, frag, total);
	rc = nsr_vol_reader_read(r, &extra, collect, &out, NULL, NULL, &n);
	check(rc == NSR_OK && verify(9, &out, 50000),
	      "positioned read of the appended save set", "rc %s",
	      nsr_strerror(rc));
	rc = nsr_vol_reader_scan(r, NULL, NULL);
	check(rc == NSR_OK, "scan: no damage", "%s: %s", nsr_strerror(rc),
	      nsr_vol_reader_errmsg(r));
	nsr_vol_reader_close(r);

	/* Relabel protection. */
	nsr_buf_reset(&why);
	rc = nsr_vol_label_write(dev, &lab, 0, &why);
	check(rc == NSR_ERR_EXISTS, "relabel refused without force", "%s",
	      nsr_strerror(rc));
out:
	nsr_buf_release(&why);
	nsr_buf_release(&out);
	free(buf);
}

/* eom_test - fill a small tape; the two fragments add up exactly. */
static void eom_test(struct nsr_dev *dev, struct nsr_dev *dev2)
{
	struct nsr_vol_label lab;
	struct nsr_vol_wopts wo = { NULL, 0, 0 };
	struct nsr_vol_writer *w = NULL;
	struct nsr_vol_session *s = NULL;
	struct nsr_vol_reader *r = NULL;
	struct nsr_vol_frag frag, frag2;
	struct nsr_vol_sshdr h;
	struct nsr_vol_span sp;
	struct nsr_vol_sstail t = { 0, 1, 0 };
	struct nsr_buf carry, out, why;
	uint8_t *buf = malloc(1u << 20);
	uint64_t off = 0, n = 0;
	int rc;

	nsr_buf_init(&carry, 0);
	nsr_buf_init(&out, 0);
	nsr_buf_init(&why, 0);
	rc = nsr_vol_label_init(&lab, "EOM001", "Default", 256u << 10, "",
				NULL);
	if (rc == NSR_OK)
		rc = nsr_vol_label_write(dev, &lab, 1, &why);
	if (rc == NSR_OK)
		rc = nsr_vol_writer_open(dev, &wo, &w, &why);
	hdr(&h, 77);
	if (rc == NSR_OK)
		rc = nsr_vol_session_begin(w, &h, NULL, &s);
	check(rc == NSR_OK, "eom: label + begin", "%s %s", nsr_strerror(rc),
	      why.data);
	if (rc != NSR_OK)
		goto out;
	while (rc == NSR_OK && off < (8ull << 30)) {
		fill(77, off, buf, 1u << 20);
		rc = nsr_vol_session_write(s, buf, 1u << 20);
		off += 1u << 20;
	}
	check(rc == NSR_ERR_EOM, "eom: write ends with NSR_ERR_EOM",
	      "%s after %" PRIu64 " bytes", nsr_strerror(rc), off);
	rc = nsr_vol_session_eom(s, &frag, &carry);
	check(rc == NSR_OK && frag.size + carry.len == off && frag.size > 0,
	      "eom: on volume + carry == written", "%" PRIu64 " + %zu vs %"
	      PRIu64, frag.size, carry.len, off);
	printf("  %" PRIu64 " bytes on the first tape\n", frag.size);
	rc = nsr_vol_writer_close(w);
	check(rc == NSR_OK, "eom: close after EOM (filemark)", "%s",
	      nsr_strerror(rc));

	/* The rest (the carry only, to keep it short) on the next tape. */
	if (dev2 != NULL) {
		rc = nsr_vol_label_init(&lab, "EOM002", "Default", 256u << 10,
					"", NULL);
		if (rc == NSR_OK)
			rc = nsr_vol_label_write(dev2, &lab, 1, &why);
		if (rc == NSR_OK)
			rc = nsr_vol_writer_open(dev2, &wo, &w, &why);
		sp.frag_seq = 1;
		sp.ss_offset = frag.size;
		if (rc == NSR_OK)
			rc = nsr_vol_session_begin(w, &h, &sp, &s);
		if (rc == NSR_OK)
			rc = nsr_vol_session_write(s, carry.data, carry.len);
		t.bytes = off;
		if (rc == NSR_OK)
			rc = nsr_vol_session_end(s, &t, &frag2);
		if (rc == NSR_OK)
			rc = nsr_vol_writer_close(w);
		check(rc == NSR_OK && frag2.size == carry.len,
		      "eom: continued on the second tape", "%s",
		      nsr_strerror(rc));
	}
	rc = nsr_vol_reader_open(dev, NULL, &r, &why);
	if (rc == NSR_OK)
		rc = nsr_vol_reader_read(r, &frag, collect, &out, NULL, NULL,
					 &n);
	check(rc == NSR_ERR_EOM && verify(77, &out, frag.size),
	      "eom: first fragment reads back", "rc %s, %zu bytes",
	      nsr_strerror(rc), out.len);
	nsr_vol_reader_close(r);
out:
	nsr_buf_release(&carry);
	nsr_buf_release(&out);
	nsr_buf_release(&why);
	free(buf);
}

/* main - run the checks. */
/* busy_test - st lets one program at a time open a drive: a second open
 * is refused, and says so in words. */
static void busy_test(const char *path)
{
	struct nsr_dev *d = NULL;
	struct nsr_buf why;
	int rc;

	nsr_buf_init(&why, 0);
	rc = nsr_dev_open(NSR_DEV_TAPE, path, NULL, &d, &why);
	check(rc == NSR_ERR_BUSY && strstr(why.data ? why.data : "", "busy"),
	      "second open of the drive is refused as busy", "rc %d: %s", rc,
	      why.data ? why.data : "");
	nsr_dev_close(d);
	nsr_buf_release(&why);
}

int main(int argc, char **argv)
{
	struct nsr_dev *dev, *dev2 = NULL, *dev3 = NULL;
	int vtape = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && strcmp(argv[1], "-v") == 0) {
		vtape = 1;
		argc--;
		argv++;
	}
	on_tape = !vtape;
	if (argc < 2) {
		fprintf(stderr, "usage: tape_check [-v] DEVICE [EOM_DEVICE "
				"[SECOND]]\n");
		return 2;
	}
	dev = open_dev(argv[1], vtape, 0);
	if (dev != NULL && !vtape)
		busy_test(argv[1]);
	if (dev != NULL) {
		dev_semantics(dev);
		main_test(dev);
		nsr_dev_close(dev);
	}
	if (argc > 2) {
		dev2 = open_dev(argv[2], vtape, 64u << 20);
		if (argc > 3)
			dev3 = open_dev(argv[3], vtape, 0);
		if (dev2 != NULL)
			eom_test(dev2, dev3);
		nsr_dev_close(dev2);
		nsr_dev_close(dev3);
	}
	if (nxfail)
		printf("%d known tgt emulator gaps (XFAIL)\n", nxfail);
	printf("%d passed, %d failed\n", npass, nfail);
	return nfail ? 1 : 0;
}
