/*
 * test_vol.c - volumes on vtape: labeling rules, several save sets
 * multiplexed into one volume and the third read back positioned, block
 * sizes 32 KB .. 8 MB, spanning across two vtapes, scan, and damage
 * detection (flipped bits, wrong volume id).
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "media_test.h"
#include "nsr_test.h"

static void test_label_rules(void **state)
{
	char *dir = nsr_test_tmpdir("vol-label");
	struct nsr_dev *dev = mt_vtape(dir, "t.vt", 0, 0);
	struct nsr_vol_label lab, got, lab2;
	struct nsr_vol_frag frag;
	struct nsr_vol_writer *w;
	struct nsr_vol_reader *r = NULL;
	struct nsr_buf why;
	int data = -1;

	NSR_UNUSED(state);
	nsr_buf_init(&why, 0);
	/* Unlabeled: a clear error naming the device. */
	assert_int_equal(nsr_vol_label_read(dev, &got, &why), NSR_ERR_EOD);
	assert_non_null(strstr(why.data, "t.vt"));
	assert_non_null(strstr(why.data, "no label"));
	/* Block sizes. */
	nsr_buf_reset(&why);
	assert_int_equal(nsr_vol_block_size_check(40960, 0, &why),
			 NSR_ERR_INVAL);
	assert_non_null(strstr(why.data, "40960"));
	assert_int_equal(nsr_vol_block_size_check(16u << 20, 0, NULL),
			 NSR_ERR_INVAL);
	assert_int_equal(nsr_vol_block_size_check(16384, 0, NULL),
			 NSR_ERR_INVAL);
	nsr_buf_reset(&why);
	assert_int_equal(nsr_vol_block_size_check(1u << 20, 512u << 10, &why),
			 NSR_ERR_TOOBIG);
	assert_non_null(strstr(why.data, "1024 KB"));
	assert_non_null(strstr(why.data, "524288"));
	assert_int_equal(nsr_vol_block_size_check(8u << 20, 0, NULL), NSR_OK);
	assert_int_equal(nsr_vol_label_init(&lab, "", NULL, 32768, NULL, NULL),
			 NSR_ERR_INVAL);

	mt_label(dev, "VT001", 64u << 10, &lab);
	assert_int_equal(nsr_vol_label_read(dev, &got, NULL), NSR_OK);
	assert_string_equal(got.name, "VT001");
	assert_memory_equal(got.volid, lab.volid, 16);
	assert_int_equal(got.block_size, 64u << 10);
	assert_int_equal(nsr_vol_has_data(dev, &data), NSR_OK);
	assert_int_equal(data, 0);
	/* Relabeling an empty volume is fine. */
	mt_label(dev, "VT001", 32768, &lab);

	w = mt_writer(dev);
	mt_write_ss(w, 10, 1000, 1000, &frag);
	assert_int_equal(nsr_vol_writer_close(w), NSR_OK);
	assert_int_equal(nsr_vol_has_data(dev, &data), NSR_OK);
	assert_int_equal(data, 1);

	/* Holding data: refused without force, allowed with it. */
	assert_int_equal(nsr_vol_label_init(&lab2, "VT002", NULL, 32768, NULL,
					    NULL),
			 NSR_OK);
	nsr_buf_reset(&why);
	assert_int_equal(nsr_vol_label_write(dev, &lab2, 0, &why),
			 NSR_ERR_EXISTS);
	assert_non_null(strstr(why.data, "VT001"));
	assert_int_equal(nsr_vol_label_write(dev, &lab2, 1, NULL), NSR_OK);
	assert_int_equal(nsr_vol_has_data(dev, &data), NSR_OK);
	assert_int_equal(data, 0);

	/* A drive whose largest block is 512 KB cannot take a volume
	 * labeled with 1 MB blocks: refused up front, sizes named. */
	{
		struct nsr_dev_opts o;
		struct nsr_dev *small = NULL;
		struct nsr_vol_writer *w2 = NULL;
		char path[512];

		assert_int_equal(nsr_vol_label_init(&lab2, "BIG", NULL,
						    1u << 20, NULL, NULL),
				 NSR_OK);
		assert_int_equal(nsr_vol_label_write(dev, &lab2, 1, NULL),
				 NSR_OK);
		memset(&o, 0, sizeof(o));
		o.vtape_max_record = 512u << 10;
		snprintf(path, sizeof(path), "%s/t.vt", dir);
		assert_int_equal(nsr_dev_open(NSR_DEV_VTAPE, path, &o, &small,
					      NULL),
				 NSR_OK);
		nsr_buf_reset(&why);
		assert_int_equal(nsr_vol_writer_open(small, NULL, &w2, &why),
				 NSR_ERR_MISMATCH);
		assert_null(w2);
		assert_non_null(strstr(why.data, "BIG"));
		assert_non_null(strstr(why.data, "1024 KB"));
		assert_non_null(strstr(why.data, "524288"));
		nsr_buf_reset(&why);
		assert_int_equal(nsr_vol_label_write(small, &lab2, 1, &why),
				 NSR_ERR_TOOBIG);
		assert_non_null(strstr(why.data, "524288"));
		assert_int_equal(nsr_dev_close(small), NSR_OK);
		assert_int_equal(nsr_vol_label_write(dev, &lab2, 1, NULL),
				 NSR_OK);
	}

	/* A reader asking for the old volume id is told it is another. */
	nsr_buf_reset(&why);
	assert_int_equal(nsr_vol_reader_open(dev, lab.volid, &r, &why),
			 NSR_ERR_MISMATCH);
	assert_null(r);
	assert_non_null(strstr(why.data, "BIG"));
	nsr_buf_release(&why);
	assert_int_equal(nsr_dev_close(dev), NSR_OK);
	nsr_test_rmrf(dir);
	free(dir);
}

#define NMUX 5

/* What a one-pass read of several save sets delivered, by save set. */
struct sets_got {
	struct nsr_buf data[NMUX + 1]; /* ssid 1..NMUX; [0]: ssid 99 */
	int ends, unfinished, damages;
	uint32_t damage_ssid; /* of the last damage report */
	int damage_rc;
};

/* sets_data - one save set's data into its buffer, in order. */
static int sets_data(void *arg, uint32_t ssid, const void *p, size_t len)
{
	struct sets_got *g = arg;

	assert_true(ssid == 99 || (ssid >= 1 && ssid <= NMUX));
	return nsr_buf_add(&g->data[ssid == 99 ? 0 : ssid], p, len);
}

/* sets_end - a fragment's end chunk. */
static int sets_end(void *arg, uint32_t ssid, const struct nsr_vol_sstail *t,
		    uint64_t bytes, const struct nsr_vol_loc *loc)
{
	struct sets_got *g = arg;

	NSR_UNUSED(ssid);
	NSR_UNUSED(t);
	NSR_UNUSED(bytes);
	NSR_UNUSED(loc);
	g->ends++;
	return 0;
}

/* sets_unfinished - a fragment without its end here. */
static void sets_unfinished(void *arg, uint32_t ssid, uint64_t bytes)
{
	NSR_UNUSED(ssid);
	NSR_UNUSED(bytes);
	((struct sets_got *)arg)->unfinished++;
}

/* sets_damage - damage reported for a wanted save set. */
static void sets_damage(void *arg, uint32_t ssid, int rc,
			const struct nsr_vol_loc *loc, const char *msg)
{
	struct sets_got *g = arg;

	NSR_UNUSED(loc);
	NSR_UNUSED(msg);
	g->damages++;
	g->damage_ssid = ssid;
	g->damage_rc = rc;
}

static const struct nsr_vol_scan_ops sets_ops = {
	.data = sets_data,
	.end = sets_end,
	.unfinished = sets_unfinished,
	.damage = sets_damage,
};

/* sets_read - read the save sets of want[0..n) in one pass and check
 * every one's data; *st gets the pass's counts. */
static void sets_read(struct nsr_vol_reader *r, const struct nsr_vol_frag *f,
		      const int *want, size_t n, const uint64_t *total,
		      struct nsr_vol_rstats *st)
{
	struct nsr_vol_frag pick[NMUX + 1];
	struct sets_got g;

	memset(&g, 0, sizeof(g));
	for (int i = 0; i <= NMUX; i++)
		nsr_buf_init(&g.data[i], 0);
	for (size_t i = 0; i < n; i++)
		pick[i] = f[want[i]];
	assert_int_equal(nsr_vol_reader_read_sets(r, pick, n, &sets_ops, &g),
			 NSR_OK);
	nsr_vol_reader_stats(r, st);
	assert_int_equal(g.ends, (int)n);
	assert_int_equal(g.unfinished, 0);
	assert_int_equal(g.damages, 0);
	for (size_t i = 0; i < n; i++) {
		uint32_t id = pick[i].ssid;
		const struct nsr_buf *b = &g.data[id == 99 ? 0 : id];

		assert_int_equal(b->len, id == 99 ? 100000 : total[id - 1]);
		assert_true(mt_check(id, 0, (const uint8_t *)b->data,
				     b->len));
	}
	for (int i = 0; i <= NMUX; i++)
		nsr_buf_release(&g.data[i]);
}

/* mux_case - five save sets multiplexed onto a volume labeled in format
 * version ver, the third read back positioned; *st gets that read's
 * block counts, sets[0] those of one pass for save sets 2, 3 and 5,
 * sets[1] those of one pass for 99 (alone, first) and 4. */
static void mux_case(uint32_t ver, struct nsr_vol_rstats *st,
		     struct nsr_vol_rstats sets[2])
{
	static const int three[] = { 1, 2, 4 }, apart[] = { 5, 3 };
	static const uint64_t total[NMUX] = { 300000, 1000000, 650001, 7,
					      420000 };
	char *dir = nsr_test_tmpdir("vol-mux");
	struct nsr_dev *dev = mt_vtape(dir, "mux.vt", 0, 0);
	struct nsr_vol_session *s[NMUX];
	struct nsr_vol_frag frag[NMUX + 1];
	struct nsr_vol_label lab;
	struct nsr_vol_writer *w;
	struct nsr_vol_reader *r = NULL;
	struct nsr_vol_sshdr h;
	struct nsr_vol_sstail t;
	struct mt_scan scan;
	uint64_t off[NMUX] = { 0 }, got = 0;
	struct nsr_buf out;
	uint8_t *buf = malloc(60000);
	uint32_t seed = 12345;
	int i, j, live = NMUX;

	assert_int_equal(nsr_vol_label_init(&lab, "MUX1", "Default", 32768,
					    "test", NULL),
			 NSR_OK);
	lab.version = ver;
	assert_int_equal(nsr_vol_label_write(dev, &lab, 0, NULL), NSR_OK);
	w = mt_writer(dev);
	/* A first save set alone, so the others start further in. */
	mt_write_ss(w, 99, 100000, 4096, &frag[0]);
	assert_int_equal(frag[0].file, 1);
	assert_int_equal(frag[0].record, 0);
	for (i = 0; i < NMUX; i++) {
		mt_hdr(&h, (uint32_t)(i + 1));
		assert_int_equal(nsr_vol_session_begin(w, &h, NULL, &s[i]),
				 NSR_OK);
	}
	/* Round robin with random piece sizes until all are done. */
	while (live > 0) {
		for (i = 0; i < NMUX; i++) {
			size_t n = 1 + mt_rand(&seed) % 60000;

			if (s[i] == NULL)
				continue;
			n = (size_t)NSR_MIN((uint64_t)n, total[i] - off[i]);
			mt_fill((uint32_t)(i + 1), off[i], buf, n);
			assert_int_equal(nsr_vol_session_write(s[i], buf, n),
					 NSR_OK);
			off[i] += n;
			if (off[i] == total[i]) {
				t.bytes = total[i];
				t.files = 3;
				t.status = NSR_VOL_SS_OK;
				assert_int_equal(nsr_vol_session_end(s[i], &t,
								     &frag[i]),
						 NSR_OK);
				s[i] = NULL;
				live--;
			}
		}
	}
	assert_int_equal(nsr_vol_writer_close(w), NSR_OK);
	/* Each began in a block of its own (one session per block). */
	for (i = 0; i < NMUX; i++) {
		assert_int_equal(frag[i].size, total[i]);
		assert_true(frag[i].record > 0);
		for (j = 0; j < i; j++)
			assert_true(frag[i].record != frag[j].record);
	}

	/* Read the third back, positioned, demultiplexed. */
	assert_int_equal(nsr_dev_rewind(dev), NSR_OK);
	assert_int_equal(nsr_vol_reader_open(dev, lab.volid, &r, NULL),
			 NSR_OK);
	assert_int_equal(nsr_vol_reader_label(r)->version, ver);
	nsr_buf_init(&out, 0);
	assert_int_equal(nsr_vol_reader_read(r, &frag[2], mt_collect, &out,
					     NULL, NULL, &got),
			 NSR_OK);
	nsr_vol_reader_stats(r, st);
	assert_int_equal(got, total[2]);
	assert_int_equal(out.len, total[2]);
	assert_true(mt_check(3, 0, (const uint8_t *)out.data, out.len));
	/* And the tiny one. */
	nsr_buf_reset(&out);
	assert_int_equal(nsr_vol_reader_read(r, &frag[3], mt_collect, &out,
					     NULL, NULL, &got),
			 NSR_OK);
	assert_int_equal(out.len, 7);
	assert_true(mt_check(4, 0, (const uint8_t *)out.data, 7));
	/* A wrong position is refused, not misread. */
	frag[2].record += 3;
	assert_int_equal(nsr_vol_reader_read(r, &frag[2], mt_collect, &out,
					     NULL, NULL, &got),
			 NSR_ERR_NOTFOUND);

	/* Several in one pass: 2, 3 and 5 from where 2 begins; then 99
	 * and 4, positioned again after 99 (the others lie between). */
	frag[2].record -= 3;
	frag[5] = frag[0];
	sets_read(r, frag, three, 3, total, &sets[0]);
	sets_read(r, frag, apart, 2, total, &sets[1]);
	/* A fragment that is not on the volume is lost, the others come
	 * (one whose begin turns up elsewhere in the walk is taken there). */
	{
		struct nsr_vol_frag two[2] = { frag[1], frag[2] };
		struct sets_got g;

		memset(&g, 0, sizeof(g));
		for (i = 0; i <= NMUX; i++)
			nsr_buf_init(&g.data[i], 0);
		two[1].frag_seq = 7; /* no such fragment there */
		assert_int_equal(nsr_vol_reader_read_sets(r, two, 2, &sets_ops,
							  &g),
				 NSR_OK);
		assert_int_equal(g.ends, 1);
		assert_int_equal(g.damages, 1);
		assert_int_equal(g.unfinished, 1);
		assert_int_equal(g.data[3].len, 0);
		assert_int_equal(g.data[2].len, total[1]);
		for (i = 0; i <= NMUX; i++)
			nsr_buf_release(&g.data[i]);
	}

	/* Scan sees every save set begin and end with its size. */
	memset(&scan, 0, sizeof(scan));
	assert_int_equal(nsr_vol_reader_scan(r, &mt_scan_ops, &scan), NSR_OK);
	assert_int_equal(scan.begins, NMUX + 1);
	assert_int_equal(scan.ends, NMUX + 1);
	assert_int_equal(scan.damages, 0);
	assert_int_equal(scan.unfinished, 0);
	for (i = 0; i < scan.ends; i++) {
		uint32_t id = scan.end_ssid[i];

		assert_int_equal(scan.end_bytes[i],
				 id == 99 ? 100000 : total[id - 1]);
	}
	nsr_vol_reader_close(r);
	nsr_buf_release(&out);
	free(buf);
	assert_int_equal(nsr_dev_close(dev), NSR_OK);
	nsr_test_rmrf(dir);
	free(dir);
}

static void test_multiplex_read_third(void **state)
{
	/* Blocks of save set 3: 650001 bytes in 32 KB blocks, less the
	 * block and chunk headers and a sliver left at a block's end. */
	const uint64_t own = 650001 / (32768 - 64 - 2 * 24 - 256) + 1;
	struct nsr_vol_rstats v1, v2, tape, s1[2], s2[2], stape[2];

	NSR_UNUSED(state);
	/* A version 1 volume (blocks name no save set) is still read, by
	 * looking into every block from the first to the last of ours. */
	mux_case(1, &v1, s1);
	assert_int_equal(v1.blocks_passed, 0);
	assert_int_equal(v1.blocks_skipped, 0);
	assert_true(v1.blocks_read > 2 * own);
	/* Version 2 on vtape: the other save sets' blocks are spaced over
	 * by their header, only ours are read. */
	mux_case(2, &v2, s2);
	assert_true(v2.blocks_read <= own);
	assert_int_equal(v2.blocks_skipped, 0);
	assert_true(v2.blocks_passed > own);
	assert_int_equal(v2.blocks_read + v2.blocks_passed, v1.blocks_read);
	/* A device that must read a record to see it (tape): the other
	 * save sets' blocks are read, but their chunks are not looked at. */
	setenv("NSR_TEST_VTAPE_NO_PEEK", "1", 1);
	mux_case(2, &tape, stape);
	unsetenv("NSR_TEST_VTAPE_NO_PEEK");
	assert_int_equal(tape.blocks_passed, 0);
	assert_int_equal(tape.blocks_read, v1.blocks_read);
	assert_int_equal(tape.blocks_skipped, v2.blocks_passed);

	/* One pass for three save sets: positioned once; on vtape only
	 * their blocks are read, the others' spaced over; a device that
	 * must read them reads each block once, as the single read does. */
	assert_int_equal(s1[0].positions, 1);
	assert_int_equal(s2[0].positions, 1);
	assert_int_equal(s2[0].blocks_skipped, 0);
	assert_true(s2[0].blocks_passed > 0);
	assert_true(s2[0].blocks_read > 2 * own);
	assert_int_equal(s2[0].blocks_read + s2[0].blocks_passed,
			 stape[0].blocks_read);
	assert_int_equal(stape[0].blocks_skipped, s2[0].blocks_passed);
	assert_true(s1[0].blocks_read <= v1.blocks_read + 2 * own + 64);
	/* 99 and 4 lie apart: the pass positions again in between rather
	 * than read what lies there. */
	assert_int_equal(s2[1].positions, 2);
	assert_int_equal(stape[1].positions, 2);
	assert_true(stape[1].blocks_read < stape[0].blocks_read);
}

static void test_block_sizes(void **state)
{
	static const uint32_t sizes[] = { 32u << 10, 256u << 10, 1u << 20,
					  8u << 20 };
	char *dir = nsr_test_tmpdir("vol-bs");
	size_t k;

	NSR_UNUSED(state);
	for (k = 0; k < NSR_ARRAY_SIZE(sizes); k++) {
		char name[32];
		struct nsr_dev *dev;
		struct nsr_vol_label lab;
		struct nsr_vol_writer *w;
		struct nsr_vol_reader *r = NULL;
		struct nsr_vol_frag f1, f2;
		struct nsr_buf out;
		uint64_t got = 0;

		snprintf(name, sizeof(name), "bs%zu.vt", k);
		dev = mt_vtape(dir, name, 0, 0);
		mt_label(dev, "BS", sizes[k], &lab);
		w = mt_writer(dev);
		mt_write_ss(w, 1, 3u << 20, 100000, &f1);
		mt_write_ss(w, 2, 12345, 1000, &f2);
		assert_int_equal(nsr_vol_writer_close(w), NSR_OK);
		assert_int_equal(nsr_vol_reader_open(dev, NULL, &r, NULL),
				 NSR_OK);
		assert_int_equal(nsr_vol_reader_label(r)->block_size,
				 sizes[k]);
		nsr_buf_init(&out, 0);
		assert_int_equal(nsr_vol_reader_read(r, &f1, mt_collect, &out,
						     NULL, NULL, &got),
				 NSR_OK);
		assert_int_equal(out.len, 3u << 20);
		assert_true(mt_check(1, 0, (uint8_t *)out.data, out.len));
		nsr_buf_reset(&out);
		assert_int_equal(nsr_vol_reader_read(r, &f2, mt_collect, &out,
						     NULL, NULL, &got),
				 NSR_OK);
		assert_int_equal(out.len, 12345);
		/* Every record on the tape is exactly one block. */
		assert_int_equal(f2.record,
				 (3u << 20) / (sizes[k] - 64 - 24) + 1 -
					 ((3u << 20) % (sizes[k] - 88) == 0));
		nsr_buf_release(&out);
		nsr_vol_reader_close(r);
		assert_int_equal(nsr_dev_close(dev), NSR_OK);
	}
	nsr_test_rmrf(dir);
	free(dir);
}

/* span_write - write ssid's bytes [from, to) to s; stop at EOM. */
static int span_write(struct nsr_vol_session *s, uint32_t ssid,
		      uint64_t from, uint64_t to, uint64_t *done)
{
	static uint8_t buf[50000];
	int rc = NSR_OK;

	*done = from;
	while (*done < to && rc == NSR_OK) {
		size_t n = (size_t)NSR_MIN((uint64_t)sizeof(buf), to - *done);

		mt_fill(ssid, *done, buf, n);
		rc = nsr_vol_session_write(s, buf, n);
		*done += n;
	}
	return rc;
}

static void test_spanning(void **state)
{
	const uint64_t total = 3u << 20;
	char *dir = nsr_test_tmpdir("vol-span");
	struct nsr_dev *d1 = mt_vtape(dir, "v1.vt", 1u << 20, 200000);
	struct nsr_dev *d2 = mt_vtape(dir, "v2.vt", 0, 0);
	struct nsr_vol_label l1, l2;
	struct nsr_vol_writer *w;
	struct nsr_vol_session *a = NULL, *b = NULL;
	struct nsr_vol_reader *r = NULL;
	struct nsr_vol_frag fa1, fb1, fa2, fb2;
	struct nsr_vol_sshdr h;
	struct nsr_vol_span sp;
	struct nsr_vol_sstail t = { total, 1, NSR_VOL_SS_OK };
	struct nsr_buf ca, cb, out;
	uint64_t da = 0, db = 0, got = 0;
	int rca = NSR_OK, rcb = NSR_OK;

	NSR_UNUSED(state);
	nsr_buf_init(&ca, 0);
	nsr_buf_init(&cb, 0);
	nsr_buf_init(&out, 0);
	mt_label(d1, "SPAN.1", 32768, &l1);
	mt_label(d2, "SPAN.2", 32768, &l2);

	/* Two sessions multiplexed until the first volume is full. */
	w = mt_writer(d1);
	mt_hdr(&h, 7);
	assert_int_equal(nsr_vol_session_begin(w, &h, NULL, &a), NSR_OK);
	mt_hdr(&h, 8);
	assert_int_equal(nsr_vol_session_begin(w, &h, NULL, &b), NSR_OK);
	while (rca == NSR_OK || rcb == NSR_OK) {
		uint64_t to;

		if (rca == NSR_OK) {
			to = NSR_MIN(da + 70000, total);
			rca = span_write(a, 7, da, to, &da);
			assert_true(da < total);
		}
		if (rcb == NSR_OK) {
			to = NSR_MIN(db + 30000, total);
			rcb = span_write(b, 8, db, to, &db);
			assert_true(db < total);
		}
	}
	assert_int_equal(rca, NSR_ERR_EOM);
	assert_int_equal(rcb, NSR_ERR_EOM);
	/* New sessions are refused once the volume is full. */
	mt_hdr(&h, 9);
	{
		struct nsr_vol_session *c = NULL;

		assert_int_equal(nsr_vol_session_begin(w, &h, NULL, &c),
				 NSR_ERR_EOM);
		assert_null(c);
	}
	{
		uint64_t on = 0, buffered = 0;

		nsr_vol_session_bytes(a, &on, &buffered);
		assert_int_equal(buffered, 0);
		assert_true(on > 0 && on < da);
	}
	assert_int_equal(nsr_vol_session_eom(a, &fa1, &ca), NSR_OK);
	assert_int_equal(nsr_vol_session_eom(b, &fb1, &cb), NSR_OK);
	assert_int_equal(nsr_vol_writer_close(w), NSR_OK);
	/* Exact accounting: on volume + carried == everything given. */
	assert_int_equal(fa1.size + ca.len, da);
	assert_int_equal(fb1.size + cb.len, db);
	assert_true(fa1.size > 0 && fb1.size > 0);
	assert_false(fa1.complete);
	assert_true(mt_check(7, fa1.size, (uint8_t *)ca.data, ca.len));
	assert_true(mt_check(8, fb1.size, (uint8_t *)cb.data, cb.len));

	/* Continue both on the second volume as fragment 1. */
	w = mt_writer(d2);
	mt_hdr(&h, 7);
	sp.frag_seq = 1;
	sp.ss_offset = fa1.size;
	assert_int_equal(nsr_vol_session_begin(w, &h, &sp, &a), NSR_OK);
	mt_hdr(&h, 8);
	sp.ss_offset = fb1.size;
	assert_int_equal(nsr_vol_session_begin(w, &h, &sp, &b), NSR_OK);
	assert_int_equal(nsr_vol_session_write(a, ca.data, ca.len), NSR_OK);
	{
		uint64_t on = 1, buffered = 0;

		/* Everything accepted is either out or buffered. */
		nsr_vol_session_bytes(a, &on, &buffered);
		assert_int_equal(on + buffered, ca.len);
	}
	assert_int_equal(nsr_vol_session_write(b, cb.data, cb.len), NSR_OK);
	assert_int_equal(span_write(a, 7, da, total, &da), NSR_OK);
	assert_int_equal(span_write(b, 8, db, total, &db), NSR_OK);
	assert_int_equal(nsr_vol_session_end(a, &t, &fa2), NSR_OK);
	assert_int_equal(nsr_vol_session_end(b, &t, &fb2), NSR_OK);
	assert_int_equal(nsr_vol_writer_close(w), NSR_OK);
	assert_int_equal(fa2.frag_seq, 1);
	assert_int_equal(fa2.ss_offset, fa1.size);
	assert_int_equal(fa1.size + fa2.size, total);
	assert_int_equal(fb1.size + fb2.size, total);

	/* Read save set 7 back across both volumes. */
	assert_int_equal(nsr_vol_reader_open(d1, l1.volid, &r, NULL), NSR_OK);
	assert_int_equal(nsr_vol_reader_read(r, &fa1, mt_collect, &out, NULL,
					     NULL, &got),
			 NSR_ERR_EOM);
	assert_int_equal(got, fa1.size);
	nsr_vol_reader_close(r);
	assert_int_equal(nsr_vol_reader_open(d2, l2.volid, &r, NULL), NSR_OK);
	assert_int_equal(nsr_vol_reader_read(r, &fa2, mt_collect, &out, NULL,
					     NULL, &got),
			 NSR_OK);
	nsr_vol_reader_close(r);
	assert_int_equal(out.len, total);
	assert_true(mt_check(7, 0, (uint8_t *)out.data, out.len));
	/* A fragment is refused on the wrong volume. */
	assert_int_equal(nsr_vol_reader_open(d2, NULL, &r, NULL), NSR_OK);
	assert_int_equal(nsr_vol_reader_read(r, &fb1, mt_collect, &out, NULL,
					     NULL, &got),
			 NSR_ERR_MISMATCH);
	nsr_vol_reader_close(r);

	nsr_buf_release(&ca);
	nsr_buf_release(&cb);
	nsr_buf_release(&out);
	assert_int_equal(nsr_dev_close(d1), NSR_OK);
	assert_int_equal(nsr_dev_close(d2), NSR_OK);
	nsr_test_rmrf(dir);
	free(dir);
}

/* flip_byte - xor one byte of a file. */
static void flip_byte(const char *path, off_t off)
{
	int fd = open(path, O_RDWR);
	uint8_t c;

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &c, 1, off), 1);
	c ^= 0x20;
	assert_int_equal(pwrite(fd, &c, 1, off), 1);
	close(fd);
}

static void test_corruption_vtape(void **state)
{
	char *dir = nsr_test_tmpdir("vol-bad");
	struct nsr_dev *dev = mt_vtape(dir, "bad.vt", 0, 0);
	struct nsr_vol_label lab;
	struct nsr_vol_writer *w;
	struct nsr_vol_reader *r = NULL;
	struct nsr_vol_frag f1, f2, f3;
	struct mt_scan scan;
	struct nsr_buf out;
	char path[512];
	uint64_t got;
	int i, rc;

	NSR_UNUSED(state);
	mt_label(dev, "BAD", 32768, &lab);
	w = mt_writer(dev);
	mt_write_ss(w, 1, 200000, 10000, &f1); /* blocks 0..6 of file 1 */
	mt_write_ss(w, 2, 200000, 10000, &f2);
	mt_write_ss(w, 3, 200000, 10000, &f3);
	assert_int_equal(nsr_vol_writer_close(w), NSR_OK);
	assert_int_equal(nsr_dev_close(dev), NSR_OK);

	/* Flip a payload bit in the 3rd block of save set 2.  vtape file:
	 * 64-byte header, records framed by 8+8 bytes; label record first,
	 * then a filemark (16 bytes). */
	snprintf(path, sizeof(path), "%s/bad.vt", dir);
	flip_byte(path, 64 + (16 + 32768) + 16 +
				(off_t)(f2.record + 2) * (16 + 32768) + 8 +
				5000);
	dev = mt_vtape(dir, "bad.vt", 0, 0);
	assert_int_equal(nsr_vol_reader_open(dev, NULL, &r, NULL), NSR_OK);
	memset(&scan, 0, sizeof(scan));
	rc = nsr_vol_reader_scan(r, &mt_scan_ops, &scan);
	/* A payload bit fails the chunk checksum; a bit in a chunk's
	 * length can also make it run past the block. */
	assert_true(rc == NSR_ERR_CHECKSUM || rc == NSR_ERR_TRUNCATED);
	/* Save set 2 is named as damaged; 1 and 3 are whole. */
	assert_true(mt_scan_has(scan.damage_ssid, scan.damages, 2));
	assert_false(mt_scan_has(scan.damage_ssid, scan.damages, 1));
	assert_false(mt_scan_has(scan.damage_ssid, scan.damages, 3));
	assert_int_equal(scan.ends, 3);
	for (i = 0; i < 3; i++)
		if (scan.end_ssid[i] != 2)
			assert_int_equal(scan.end_bytes[i], 200000);
	/* Positioned reads: 3 is fine, 2 reports the damage. */
	nsr_buf_init(&out, 0);
	assert_int_equal(nsr_vol_reader_read(r, &f3, mt_collect, &out, NULL,
					     NULL, &got),
			 NSR_OK);
	assert_true(mt_check(3, 0, (uint8_t *)out.data, out.len));
	nsr_buf_reset(&out);
	memset(&scan, 0, sizeof(scan));
	assert_int_equal(nsr_vol_reader_read(r, &f2, mt_collect, &out,
					     &mt_scan_ops, &scan, &got),
			 rc);
	assert_true(got < 200000);
	assert_true(mt_scan_has(scan.damage_ssid, scan.damages, 2));
	/* In one pass: 2's damage is its own, 1 and 3 come whole. */
	{
		struct nsr_vol_frag all[3] = { f1, f2, f3 };
		struct sets_got g;

		memset(&g, 0, sizeof(g));
		for (i = 0; i <= NMUX; i++)
			nsr_buf_init(&g.data[i], 0);
		assert_int_equal(nsr_vol_reader_read_sets(r, all, 3, &sets_ops,
							  &g),
				 NSR_OK);
		assert_int_equal(g.damages, 1);
		assert_int_equal(g.damage_ssid, 2);
		assert_int_equal(g.damage_rc, rc);
		assert_int_equal(g.data[1].len, 200000);
		assert_int_equal(g.data[3].len, 200000);
		assert_true(g.data[2].len < 200000);
		assert_true(mt_check(3, 0, (uint8_t *)g.data[3].data, 200000));
		for (i = 0; i <= NMUX; i++)
			nsr_buf_release(&g.data[i]);
	}
	nsr_vol_reader_close(r);
	assert_int_equal(nsr_dev_close(dev), NSR_OK);

	/* A block header bit: the block is unreadable (ssid unknown), and
	 * the save set in it is then named by its chunk gap. */
	flip_byte(path, 64 + (16 + 32768) + 16 +
				(off_t)(f1.record + 1) * (16 + 32768) + 8 + 30);
	dev = mt_vtape(dir, "bad.vt", 0, 0);
	assert_int_equal(nsr_vol_reader_open(dev, NULL, &r, NULL), NSR_OK);
	memset(&scan, 0, sizeof(scan));
	assert_int_not_equal(nsr_vol_reader_scan(r, &mt_scan_ops, &scan),
			     NSR_OK);
	assert_true(mt_scan_has(scan.damage_ssid, scan.damages, 0));
	assert_true(mt_scan_has(scan.damage_ssid, scan.damages, 1));
	assert_true(mt_scan_has(scan.damage_ssid, scan.damages, 2));
	assert_false(mt_scan_has(scan.damage_ssid, scan.damages, 3));
	nsr_vol_reader_close(r);
	assert_int_equal(nsr_dev_close(dev), NSR_OK);

	/* The first block of a fragment unreadable: in one pass that
	 * fragment is lost as damage (not "not found"), the others come. */
	flip_byte(path, 64 + (16 + 32768) + 16 +
				(off_t)f3.record * (16 + 32768) + 8 + 30);
	dev = mt_vtape(dir, "bad.vt", 0, 0);
	assert_int_equal(nsr_vol_reader_open(dev, NULL, &r, NULL), NSR_OK);
	{
		struct nsr_vol_frag two[2] = { f2, f3 };
		struct sets_got g;

		memset(&g, 0, sizeof(g));
		for (i = 0; i <= NMUX; i++)
			nsr_buf_init(&g.data[i], 0);
		assert_int_equal(nsr_vol_reader_read_sets(r, two, 2, &sets_ops,
							  &g),
				 NSR_OK);
		assert_int_equal(g.damage_ssid, 3);
		assert_true(g.damage_rc != NSR_ERR_NOTFOUND &&
			    g.damage_rc < 0);
		assert_int_equal(g.data[3].len, 0);
		assert_true(g.data[2].len > 0);
		assert_int_equal(g.unfinished, 1);
		for (i = 0; i <= NMUX; i++)
			nsr_buf_release(&g.data[i]);
	}
	nsr_vol_reader_close(r);
	nsr_buf_release(&out);
	assert_int_equal(nsr_dev_close(dev), NSR_OK);
	nsr_test_rmrf(dir);
	free(dir);
}

static void test_segments_and_crash_append(void **state)
{
	char *dir = nsr_test_tmpdir("vol-seg");
	struct nsr_dev *dev = mt_vtape(dir, "seg.vt", 0, 0);
	struct nsr_vol_wopts o = { NULL, 4 * 32768, 1 };
	struct nsr_vol_label lab;
	struct nsr_vol_writer *w = NULL;
	struct nsr_vol_reader *r = NULL;
	struct nsr_vol_session *s = NULL;
	struct nsr_vol_frag f1, f3;
	struct nsr_vol_sshdr h;
	struct mt_scan scan;
	struct nsr_dev_pos pos;
	struct stat st;
	char path[512];
	struct nsr_buf out;
	uint8_t buf[20000];
	uint64_t got;

	NSR_UNUSED(state);
	nsr_buf_init(&out, 0);
	mt_label(dev, "SEG", 32768, &lab);
	/* A filemark every 4 blocks: a 1 MB save set crosses 8 of them. */
	assert_int_equal(nsr_vol_writer_open(dev, &o, &w, NULL), NSR_OK);
	mt_write_ss(w, 1, 1u << 20, 20000, &f1);
	assert_int_equal(nsr_vol_writer_close(w), NSR_OK);
	assert_int_equal(nsr_dev_eod(dev), NSR_OK);
	assert_int_equal(nsr_dev_tell(dev, &pos), NSR_OK);
	assert_true(pos.file >= 9);

	/* A writer that dies: a begun save set, blocks out, no end, no
	 * closing filemark. */
	w = mt_writer(dev);
	mt_hdr(&h, 2);
	assert_int_equal(nsr_vol_session_begin(w, &h, NULL, &s), NSR_OK);
	mt_fill(2, 0, buf, sizeof(buf));
	assert_int_equal(nsr_vol_session_write(s, buf, sizeof(buf)), NSR_OK);
	assert_int_equal(nsr_vol_session_write(s, buf, sizeof(buf)), NSR_OK);
	assert_int_equal(nsr_vol_writer_flush(w), NSR_OK);
	nsr_vol_session_abort(s);
	assert_int_equal(nsr_vol_writer_close(w), NSR_OK);
	assert_int_equal(nsr_dev_close(dev), NSR_OK);
	/* Cut the closing filemark (16 bytes) as if the writer had died. */
	snprintf(path, sizeof(path), "%s/seg.vt", dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(truncate(path, st.st_size - 16), 0);
	dev = mt_vtape(dir, "seg.vt", 0, 0);

	/* The next writer appends after it in the same tape file. */
	w = mt_writer(dev);
	mt_write_ss(w, 3, 300000, 7000, &f3);
	assert_int_equal(nsr_vol_writer_close(w), NSR_OK);
	assert_int_equal(f3.file, pos.file);
	assert_int_equal(f3.record, 2);

	assert_int_equal(nsr_vol_reader_open(dev, NULL, &r, NULL), NSR_OK);
	assert_int_equal(nsr_vol_reader_read(r, &f1, mt_collect, &out, NULL,
					     NULL, &got),
			 NSR_OK);
	assert_int_equal(out.len, 1u << 20);
	assert_true(mt_check(1, 0, (uint8_t *)out.data, out.len));
	nsr_buf_reset(&out);
	assert_int_equal(nsr_vol_reader_read(r, &f3, mt_collect, &out, NULL,
					     NULL, &got),
			 NSR_OK);
	assert_true(mt_check(3, 0, (uint8_t *)out.data, out.len));
	assert_int_equal(out.len, 300000);
	/* The scan: 1 and 3 whole, 2 unfinished, nothing damaged. */
	memset(&scan, 0, sizeof(scan));
	assert_int_equal(nsr_vol_reader_scan(r, &mt_scan_ops, &scan), NSR_OK);
	assert_int_equal(scan.begins, 3);
	assert_int_equal(scan.ends, 2);
	assert_int_equal(scan.unfinished, 1);
	assert_int_equal(scan.unfinished_ssid[0], 2);
	assert_int_equal(scan.damages, 0);
	nsr_vol_reader_close(r);
	nsr_buf_release(&out);
	assert_int_equal(nsr_dev_close(dev), NSR_OK);
	nsr_test_rmrf(dir);
	free(dir);
}

static void test_sticky_write_error(void **state)
{
	char *dir = nsr_test_tmpdir("vol-ro");
	struct nsr_dev *dev = mt_vtape(dir, "ro.vt", 0, 0);
	struct nsr_vol_label lab;
	struct nsr_vol_writer *w = NULL;
	struct nsr_vol_session *s = NULL, *t = NULL;
	struct nsr_vol_sshdr h;
	struct nsr_vol_sstail tl = { 1, 1, 0 };
	struct nsr_dev_opts o;
	uint8_t buf[40000];
	char path[512];

	NSR_UNUSED(state);
	mt_label(dev, "RO", 32768, &lab);
	assert_int_equal(nsr_dev_close(dev), NSR_OK);
	/* A device that refuses every write: the first block fails, the
	 * writer stays failed, and nothing claims to be on the volume. */
	memset(&o, 0, sizeof(o));
	o.read_only = 1;
	snprintf(path, sizeof(path), "%s/ro.vt", dir);
	assert_int_equal(nsr_dev_open(NSR_DEV_VTAPE, path, &o, &dev, NULL),
			 NSR_OK);
	assert_int_equal(nsr_vol_writer_open(dev, NULL, &w, NULL), NSR_OK);
	mt_hdr(&h, 5);
	assert_int_equal(nsr_vol_session_begin(w, &h, NULL, &s), NSR_OK);
	memset(buf, 1, sizeof(buf));
	assert_int_equal(nsr_vol_session_write(s, buf, sizeof(buf)),
			 NSR_ERR_READONLY);
	assert_non_null(strstr(nsr_vol_writer_errmsg(w), "read-only"));
	assert_int_equal(nsr_vol_session_write(s, buf, 10), NSR_ERR_READONLY);
	assert_int_equal(nsr_vol_session_end(s, &tl, NULL), NSR_ERR_READONLY);
	mt_hdr(&h, 6);
	assert_int_equal(nsr_vol_session_begin(w, &h, NULL, &t),
			 NSR_ERR_READONLY);
	assert_null(t);
	nsr_vol_writer_close(w);
	assert_int_equal(nsr_dev_close(dev), NSR_OK);
	nsr_test_rmrf(dir);
	free(dir);
}

static void test_scan_open_limit(void **state)
{
	enum { NS = 1100 };
	char *dir = nsr_test_tmpdir("vol-many");
	struct nsr_dev *dev = mt_vtape(dir, "many.vt", 0, 0);
	static struct nsr_vol_session *s[NS];
	struct nsr_vol_label lab;
	struct nsr_vol_writer *w;
	struct nsr_vol_reader *r = NULL;
	struct nsr_vol_sshdr h;
	struct mt_scan scan;
	int i;

	NSR_UNUSED(state);
	/* More sessions open at once than a scan follows (1024): the
	 * rest are reported (NSR_ERR_LIMIT), the scan still finishes. */
	mt_label(dev, "MANY", 32768, &lab);
	w = mt_writer(dev);
	for (i = 0; i < NS; i++) {
		mt_hdr(&h, (uint32_t)(i + 1));
		assert_int_equal(nsr_vol_session_begin(w, &h, NULL, &s[i]),
				 NSR_OK);
	}
	/* Their begin chunks go out before they are aborted. */
	assert_int_equal(nsr_vol_writer_flush(w), NSR_OK);
	for (i = 0; i < NS; i++)
		nsr_vol_session_abort(s[i]);
	assert_int_equal(nsr_vol_writer_close(w), NSR_OK);
	assert_int_equal(nsr_vol_reader_open(dev, NULL, &r, NULL), NSR_OK);
	memset(&scan, 0, sizeof(scan));
	assert_int_equal(nsr_vol_reader_scan(r, &mt_scan_ops, &scan),
			 NSR_ERR_LIMIT);
	assert_int_equal(scan.begins, 1024);
	assert_int_equal(scan.damages, NS - 1024);
	assert_int_equal(scan.damage_rc[0], NSR_ERR_LIMIT);
	assert_int_equal(scan.unfinished, 1024);
	nsr_vol_reader_close(r);
	assert_int_equal(nsr_dev_close(dev), NSR_OK);
	nsr_test_rmrf(dir);
	free(dir);
}

/* copy_prefix - the first n bytes of from into to. */
static void copy_prefix(const char *from, const char *to, off_t n)
{
	static uint8_t buf[65536];
	int in = open(from, O_RDONLY), out;
	off_t done = 0;

	assert_true(in >= 0);
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(out >= 0);
	while (done < n) {
		size_t k = (size_t)NSR_MIN((off_t)sizeof(buf), n - done);

		assert_int_equal(pread(in, buf, k, done), (ssize_t)k);
		assert_int_equal(pwrite(out, buf, k, done), (ssize_t)k);
		done += (off_t)k;
	}
	close(in);
	close(out);
}

static void test_crash_points(void **state)
{
	char *dir = nsr_test_tmpdir("vol-crash");
	struct nsr_dev *dev = mt_vtape(dir, "c.vt", 0, 0);
	struct nsr_vol_label lab;
	struct nsr_vol_writer *w;
	struct nsr_vol_frag f[3];
	struct mt_scan scan;
	struct stat st;
	char path[512], cut[512];
	off_t done_at[3], start, n;
	int i, k, cuts = 0;

	NSR_UNUSED(state);
	snprintf(path, sizeof(path), "%s/c.vt", dir);
	snprintf(cut, sizeof(cut), "%s/cut.vt", dir);
	mt_label(dev, "CRASH", 32768, &lab);
	assert_int_equal(stat(path, &st), 0);
	start = st.st_size;
	w = mt_writer(dev);
	for (i = 0; i < 3; i++) {
		mt_write_ss(w, (uint32_t)(i + 1), 70000 + 10000 * (uint64_t)i,
			    6000, &f[i]);
		assert_int_equal(stat(path, &st), 0);
		done_at[i] = st.st_size; /* the end chunk is out */
	}
	assert_int_equal(nsr_vol_writer_close(w), NSR_OK);
	assert_int_equal(nsr_dev_close(dev), NSR_OK);
	assert_int_equal(stat(path, &st), 0);

	/* Cut the volume anywhere (a crash with a torn last write): the
	 * scan never reports damage, and exactly the save sets whose end
	 * chunk got out are complete, with the right sizes. */
	for (n = start - 16; n <= st.st_size; n += 1777, cuts++) {
		struct nsr_vol_reader *r = NULL;
		struct nsr_dev_opts o;

		copy_prefix(path, cut, n);
		memset(&o, 0, sizeof(o));
		o.read_only = 1;
		assert_int_equal(nsr_dev_open(NSR_DEV_VTAPE, cut, &o, &dev,
					      NULL),
				 NSR_OK);
		/* The first cut drops the label's filemark: still a
		 * labeled, empty volume. */
		assert_int_equal(nsr_vol_reader_open(dev, NULL, &r, NULL),
				 NSR_OK);
		memset(&scan, 0, sizeof(scan));
		assert_int_equal(nsr_vol_reader_scan(r, &mt_scan_ops, &scan),
				 NSR_OK);
		assert_int_equal(scan.damages, 0);
		for (i = 0, k = 0; i < 3; i++)
			k += n >= done_at[i];
		assert_int_equal(scan.ends, k);
		for (i = 0; i < scan.ends; i++)
			assert_int_equal(scan.end_bytes[i],
					 60000 + 10000 * scan.end_ssid[i]);
		assert_int_equal(scan.begins, scan.ends + scan.unfinished);
		nsr_vol_reader_close(r);
		assert_int_equal(nsr_dev_close(dev), NSR_OK);
	}
	assert_true(cuts > 50);
	nsr_test_rmrf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_label_rules),
		cmocka_unit_test(test_multiplex_read_third),
		cmocka_unit_test(test_block_sizes),
		cmocka_unit_test(test_spanning),
		cmocka_unit_test(test_corruption_vtape),
		cmocka_unit_test(test_segments_and_crash_append),
		cmocka_unit_test(test_crash_points),
		cmocka_unit_test(test_sticky_write_error),
		cmocka_unit_test(test_scan_open_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
