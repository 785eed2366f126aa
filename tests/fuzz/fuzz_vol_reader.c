/*
 * fuzz_vol_reader.c - the volume reader on hostile volumes: label, block
 * and chunk decoding, demultiplexing and damage reporting, plus the vtape
 * file format underneath.  Input: first byte even = a whole vtape file;
 * odd = an adv_file volume: 4 bytes label length L, L label bytes, the
 * rest is session file 1.  Every begin chunk found by the scan is then
 * read back positioned, one by one and all in one pass
 * (nsr_vol_reader_read_sets).  Nothing may crash, leak or hang.
 *
 * Seeds: built with -DFUZZ_VOL_MAKE_SEED (a main() that writes a small
 * multiplexed vtape volume and an adv_file volume image to the current
 * directory: vtape2.seed, aftd2.seed, format version 2, one session per
 * block, so a positioned read spaces over the other session's blocks);
 * vtape.seed and aftd.seed are format version 1 volumes from the earlier
 * writer (chunks of both sessions in one block) and stay, so old volumes
 * keep being read.  See tests/fuzz/corpus/fuzz_vol_reader/.
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/bytes.h"
#include "nsr/dev.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/media_fmt.h"
#include "nsr/vol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_FRAGS 8

struct seen {
	struct nsr_vol_frag f[MAX_FRAGS];
	int n;
	const struct nsr_vol_reader *r;
};

/* on_begin - remember where each fragment starts. */
static int on_begin(void *arg, const struct nsr_vol_sshdr *h,
		    const struct nsr_vol_span *sp,
		    const struct nsr_vol_loc *loc)
{
	struct seen *s = arg;

	if (s->n >= MAX_FRAGS)
		return 0;
	nsr_vol_reader_frag(s->r, h, sp, loc, &s->f[s->n++]);
	return 0;
}

/* on_data - touch the bytes so ASan checks them. */
static int on_data(void *arg, uint32_t ssid, const void *p, size_t len)
{
	const uint8_t *q = p;
	static volatile uint8_t x;

	NSR_UNUSED(arg);
	NSR_UNUSED(ssid);
	if (len > 0)
		x = (uint8_t)(x ^ q[0] ^ q[len - 1]);
	return 0;
}

/* sink - data callback for positioned reads. */
static int sink(void *arg, const void *p, size_t len)
{
	return on_data(arg, 0, p, len);
}

/* on_damage - must always come with a message. */
static void on_damage(void *arg, uint32_t ssid, int rc,
		      const struct nsr_vol_loc *loc, const char *msg)
{
	NSR_UNUSED(arg);
	NSR_UNUSED(ssid);
	NSR_UNUSED(loc);
	if (rc >= 0 || msg == NULL || msg[0] == '\0')
		abort();
}

static const struct nsr_vol_scan_ops ops = {
	.begin = on_begin,
	.data = on_data,
	.damage = on_damage,
};

/* on_unfinished - a fragment without its end: nothing to check. */
static void on_unfinished(void *arg, uint32_t ssid, uint64_t bytes)
{
	NSR_UNUSED(arg);
	NSR_UNUSED(ssid);
	NSR_UNUSED(bytes);
}

static const struct nsr_vol_scan_ops sets_ops = {
	.data = on_data,
	.damage = on_damage,
	.unfinished = on_unfinished,
};

/* run_volume - open, scan, read every fragment found, one by one and
 * all in one pass. */
static void run_volume(struct nsr_dev *dev)
{
	struct nsr_vol_reader *r = NULL;
	struct seen s;
	uint64_t got;
	int i;

	memset(&s, 0, sizeof(s));
	if (nsr_vol_reader_open(dev, NULL, &r, NULL) != NSR_OK)
		return;
	s.r = r;
	(void)nsr_vol_reader_scan(r, &ops, &s);
	for (i = 0; i < s.n; i++)
		(void)nsr_vol_reader_read(r, &s.f[i], sink, NULL, &ops, NULL,
					  &got);
	/* And all of them in one pass (recover's read of several). */
	if (s.n > 0)
		(void)nsr_vol_reader_read_sets(r, s.f, (size_t)s.n, &sets_ops,
					       NULL);
	nsr_vol_reader_close(r);
}

/* codecs - the record decoders on the raw input as well. */
static void codecs(const uint8_t *p, size_t n)
{
	struct nsr_vol_label lab;
	struct media_fmt_block b;
	struct media_fmt_chunk c;
	struct nsr_vol_sshdr h;
	struct nsr_vol_span sp;
	struct nsr_vol_sstail t;
	const uint8_t *payload;

	(void)media_fmt_label_decode(p, n, &lab);
	(void)media_fmt_block_decode(p, n, &b);
	if (n >= MEDIA_FMT_BLOCK_HDR + 4)
		(void)media_fmt_block_head_decode(p, nsr_get_u32(p + n - 4),
						  &b);
	(void)media_fmt_chunk_decode(p, n, &c, &payload);
	(void)media_fmt_sshdr_decode(p, n, &h, &sp);
	(void)media_fmt_sstail_decode(p, n, &t);
}

/* as_vtape - the input as a vtape file in memory. */
static void as_vtape(const uint8_t *p, size_t n)
{
	struct nsr_dev_opts o;
	struct nsr_dev *dev = NULL;
	char path[64];
	int fd = memfd_create("fuzzvt", MFD_CLOEXEC);

	if (fd < 0)
		return;
	if (nsr_write_full(fd, p, n) == NSR_OK) {
		memset(&o, 0, sizeof(o));
		o.read_only = 1;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		if (nsr_dev_open(NSR_DEV_VTAPE, path, &o, &dev, NULL) ==
		    NSR_OK) {
			run_volume(dev);
			nsr_dev_close(dev);
		}
	}
	close(fd);
}

/* put_file - write dir/name with n bytes. */
static int put_file(const char *dir, const char *name, const uint8_t *p,
		    size_t n)
{
	char path[600];
	int fd, rc;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	rc = nsr_write_full(fd, p, n);
	close(fd);
	return rc;
}

/* as_aftd - the input as an adv_file volume in a scratch directory. */
static void as_aftd(const uint8_t *p, size_t n)
{
	static char dir[512];
	struct nsr_dev_opts o;
	struct nsr_dev *dev = NULL;
	uint32_t l;

	if (dir[0] == '\0') {
		const char *base = getenv("NSR_TEST_TMPDIR");

		if (base == NULL || nsr_mkdir_p(base, 0755) != NSR_OK)
			base = "/tmp";
		snprintf(dir, sizeof(dir), "%s/fuzzvolXXXXXX", base);
		if (mkdtemp(dir) == NULL)
			abort();
	}
	if (n < 4)
		return;
	l = nsr_get_u32(p);
	p += 4;
	n -= 4;
	if (l > n)
		l = (uint32_t)n;
	if (put_file(dir, "label", p, l) != NSR_OK ||
	    put_file(dir, "ss.0000000001", p + l, n - l) != NSR_OK)
		abort();
	memset(&o, 0, sizeof(o));
	o.read_only = 1;
	if (nsr_dev_open(NSR_DEV_AFTD, dir, &o, &dev, NULL) == NSR_OK) {
		run_volume(dev);
		nsr_dev_close(dev);
	}
}

/* LLVMFuzzerTestOneInput - one volume image. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	codecs(data + 1, size - 1);
	if (data[0] & 1)
		as_aftd(data + 1, size - 1);
	else
		as_vtape(data + 1, size - 1);
	return 0;
}

#ifdef FUZZ_VOL_MAKE_SEED
/* Seed maker: cc -DFUZZ_VOL_MAKE_SEED ... then run in the corpus dir. */
#include "nsr/fileio.h"

/* seed_volume - label dev, two multiplexed save sets of three and two
 * blocks, their blocks interleaved. */
static void seed_volume(struct nsr_dev *dev)
{
	struct nsr_vol_label lab;
	struct nsr_vol_writer *w = NULL;
	struct nsr_vol_session *a = NULL, *b = NULL;
	struct nsr_vol_sshdr h;
	struct nsr_vol_sstail t = { 70000, 2, 0 };
	struct nsr_vol_wopts wo = { NULL, 0, 1 };
	char buf[1000];
	int i;

	nsr_vol_label_init(&lab, "SEED", "Default", 32768, "vtape", NULL);
	if (nsr_vol_label_write(dev, &lab, 1, NULL) != NSR_OK ||
	    nsr_vol_writer_open(dev, &wo, &w, NULL) != NSR_OK)
		abort();
	memset(&h, 0, sizeof(h));
	snprintf(h.client, sizeof(h.client), "client");
	snprintf(h.name, sizeof(h.name), "/etc");
	snprintf(h.level, sizeof(h.level), "full");
	h.ssid = 1;
	nsr_vol_session_begin(w, &h, NULL, &a);
	h.ssid = 2;
	nsr_vol_session_begin(w, &h, NULL, &b);
	for (i = 0; i < 70; i++) {
		memset(buf, 'a' + i % 26, sizeof(buf));
		nsr_vol_session_write(a, buf, sizeof(buf));
		nsr_vol_session_write(b, buf, sizeof(buf) / 2);
	}
	nsr_vol_session_end(a, &t, NULL);
	t.bytes = 35000;
	nsr_vol_session_end(b, &t, NULL);
	nsr_vol_writer_close(w);
}

/* main - write vtape2.seed and aftd2.seed. */
int main(void)
{
	struct nsr_dev_opts o = { 0, 1, 0, 0, 0 };
	struct nsr_dev *dev = NULL;
	struct nsr_buf b, out;
	uint8_t hdr[4];

	unlink("seed.vt");
	if (nsr_dev_open(NSR_DEV_VTAPE, "seed.vt", &o, &dev, NULL) != NSR_OK)
		abort();
	seed_volume(dev);
	nsr_dev_close(dev);
	nsr_buf_init(&b, 0);
	nsr_buf_init(&out, 0);
	nsr_file_read("seed.vt", &b, 0);
	nsr_buf_addch(&out, 0);
	nsr_buf_add(&out, b.data, b.len);
	nsr_file_replace("vtape2.seed", out.data, out.len, 0644);
	unlink("seed.vt");

	if (nsr_dev_open(NSR_DEV_AFTD, "seed.d", &o, &dev, NULL) != NSR_OK)
		abort();
	seed_volume(dev);
	nsr_dev_close(dev);
	nsr_buf_reset(&b);
	nsr_buf_reset(&out);
	nsr_buf_addch(&out, 1);
	nsr_file_read("seed.d/label", &b, 0);
	nsr_put_u32(hdr, (uint32_t)b.len);
	nsr_buf_add(&out, hdr, 4);
	nsr_buf_add(&out, b.data, b.len);
	nsr_buf_reset(&b);
	nsr_file_read("seed.d/ss.0000000001", &b, 0);
	nsr_buf_add(&out, b.data, b.len);
	nsr_file_replace("aftd2.seed", out.data, out.len, 0644);
	nsr_buf_release(&b);
	nsr_buf_release(&out);
	return 0;
}
#endif
