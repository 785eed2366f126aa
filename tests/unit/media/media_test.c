/*
 * media_test.c - helpers shared by the media unit tests.
 */
#include "nsr/compat.h"

#include "nsr/err.h"
#include "media_test.h"
#include "nsr_test.h"

/* mt_byte - a byte that depends on both the save set and the offset. */
uint8_t mt_byte(uint32_t ssid, uint64_t off)
{
	uint64_t x = (off + 1) * 0x9e3779b97f4a7c15ull ^ ssid * 0x632be5abull;

	return (uint8_t)(x >> 29);
}

/* mt_fill - save-set bytes into p. */
void mt_fill(uint32_t ssid, uint64_t off, uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = mt_byte(ssid, off + i);
}

/* mt_check - compare with the expected bytes. */
int mt_check(uint32_t ssid, uint64_t off, const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != mt_byte(ssid, off + i))
			return 0;
	return 1;
}

/* mt_rand - xorshift32. */
uint32_t mt_rand(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* mt_hdr - a filled-in save-set header. */
void mt_hdr(struct nsr_vol_sshdr *h, uint32_t ssid)
{
	memset(h, 0, sizeof(*h));
	h->ssid = ssid;
	memset(h->longid, (int)ssid, 16);
	snprintf(h->client, sizeof(h->client), "client%" PRIu32, ssid % 3);
	snprintf(h->name, sizeof(h->name), "/data/set%" PRIu32, ssid);
	snprintf(h->level, sizeof(h->level), "full");
	snprintf(h->pool, sizeof(h->pool), "Default");
	h->savetime = 1763700000 + ssid;
	h->browse_time = h->savetime + 86400 * 30;
	h->retention_time = h->savetime + 86400 * 365;
}

/* mt_open - create and open dir/name as a device of type t. */
static struct nsr_dev *mt_open(enum nsr_dev_type t, const char *dir,
			       const char *name, struct nsr_dev_opts *o)
{
	struct nsr_dev *dev = NULL;
	char path[512];

	o->create = 1;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(nsr_dev_open(t, path, o, &dev, NULL), NSR_OK);
	return dev;
}

/* mt_vtape - a vtape in dir. */
struct nsr_dev *mt_vtape(const char *dir, const char *name, uint64_t cap,
			 uint64_t ew)
{
	struct nsr_dev_opts o;

	memset(&o, 0, sizeof(o));
	o.vtape_capacity = cap;
	o.vtape_early_warning = ew;
	return mt_open(NSR_DEV_VTAPE, dir, name, &o);
}

/* mt_aftd - an adv_file device in dir. */
struct nsr_dev *mt_aftd(const char *dir, const char *name, uint64_t quota)
{
	struct nsr_dev_opts o;

	memset(&o, 0, sizeof(o));
	o.aftd_quota = quota;
	return mt_open(NSR_DEV_AFTD, dir, name, &o);
}

/* mt_label - a new label on dev. */
void mt_label(struct nsr_dev *dev, const char *name, uint32_t bs,
	      struct nsr_vol_label *lab)
{
	assert_int_equal(nsr_vol_label_init(lab, name, "Default", bs, "test",
					    NULL),
			 NSR_OK);
	assert_int_equal(nsr_vol_label_write(dev, lab, 0, NULL), NSR_OK);
}

/* mt_writer - a writer for tests (no fsync). */
struct nsr_vol_writer *mt_writer(struct nsr_dev *dev)
{
	struct nsr_vol_wopts o;
	struct nsr_vol_writer *w = NULL;

	memset(&o, 0, sizeof(o));
	o.no_sync = 1;
	assert_int_equal(nsr_vol_writer_open(dev, &o, &w, NULL), NSR_OK);
	return w;
}

/* mt_write_ss - begin, write in pieces, end. */
void mt_write_ss(struct nsr_vol_writer *w, uint32_t ssid, uint64_t total,
		 size_t piece, struct nsr_vol_frag *frag)
{
	struct nsr_vol_session *s = NULL;
	struct nsr_vol_sshdr h;
	struct nsr_vol_sstail t = { total, 1, NSR_VOL_SS_OK };
	uint8_t *buf = malloc(piece);
	uint64_t off = 0;

	assert_non_null(buf);
	mt_hdr(&h, ssid);
	assert_int_equal(nsr_vol_session_begin(w, &h, NULL, &s), NSR_OK);
	while (off < total) {
		size_t n = (size_t)NSR_MIN((uint64_t)piece, total - off);

		mt_fill(ssid, off, buf, n);
		assert_int_equal(nsr_vol_session_write(s, buf, n), NSR_OK);
		off += n;
	}
	assert_int_equal(nsr_vol_session_end(s, &t, frag), NSR_OK);
	assert_int_equal(frag->size, total);
	assert_true(frag->complete);
	free(buf);
}

/* mt_collect - append delivered bytes to a struct nsr_buf. */
int mt_collect(void *arg, const void *p, size_t len)
{
	return nsr_buf_add(arg, p, len);
}

/* scan_begin - record a begin chunk. */
static int scan_begin(void *arg, const struct nsr_vol_sshdr *h,
		      const struct nsr_vol_span *sp,
		      const struct nsr_vol_loc *loc)
{
	struct mt_scan *m = arg;

	NSR_UNUSED(sp);
	NSR_UNUSED(loc);
	if (m->begins < MT_MAX_SS)
		m->begin_ssid[m->begins] = h->ssid;
	m->begins++;
	return 0;
}

/* scan_end - record an end chunk. */
static int scan_end(void *arg, uint32_t ssid, const struct nsr_vol_sstail *t,
		    uint64_t bytes_here, const struct nsr_vol_loc *loc)
{
	struct mt_scan *m = arg;

	NSR_UNUSED(t);
	NSR_UNUSED(loc);
	if (m->ends < MT_MAX_SS) {
		m->end_ssid[m->ends] = ssid;
		m->end_bytes[m->ends] = bytes_here;
	}
	m->ends++;
	return 0;
}

/* scan_damage - record damage. */
static void scan_damage(void *arg, uint32_t ssid, int rc,
			const struct nsr_vol_loc *loc, const char *msg)
{
	struct mt_scan *m = arg;

	NSR_UNUSED(loc);
	assert_non_null(msg);
	assert_true(strstr(msg, "volume ") != NULL);
	if (m->damages < MT_MAX_SS) {
		m->damage_ssid[m->damages] = ssid;
		m->damage_rc[m->damages] = rc;
	}
	m->damages++;
}

/* scan_unfinished - record a fragment without an end. */
static void scan_unfinished(void *arg, uint32_t ssid, uint64_t bytes)
{
	struct mt_scan *m = arg;

	NSR_UNUSED(bytes);
	if (m->unfinished < MT_MAX_SS)
		m->unfinished_ssid[m->unfinished] = ssid;
	m->unfinished++;
}

const struct nsr_vol_scan_ops mt_scan_ops = {
	.begin = scan_begin,
	.end = scan_end,
	.damage = scan_damage,
	.unfinished = scan_unfinished,
};

/* mt_scan_has - membership. */
int mt_scan_has(const uint32_t *list, int n, uint32_t ssid)
{
	int i;

	for (i = 0; i < n && i < MT_MAX_SS; i++)
		if (list[i] == ssid)
			return 1;
	return 0;
}
