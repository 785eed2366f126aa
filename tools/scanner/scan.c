/*
 * scan.c - read a whole volume with the volume reader's scan mode and
 * collect one entry per save-set fragment on it, without any help from
 * the server's databases.  Damaged blocks are reported (stderr) naming
 * the save set and the volume; the scan goes on over the rest.
 *
 * To name the damaged files too, the save stream of every save set that
 * begins on the volume is decoded as it goes by, with the decoder's
 * resynchronisation on: a damaged block leaves a gap in the stream, the
 * decoder trips over it at the next record and says which file it was
 * in.  (A file whose whole record lies inside the gap cannot be named
 * from the volume; recover names those from the client file index.)
 */
#include "nsr/compat.h"

#include <sys/stat.h>

#include "nsr/asm.h"
#include "nsr/buf.h"
#include "nsr/dev.h"
#include "nsr/err.h"
#include "nsr/mmdb.h"

#include "scan.h"

struct scan_ctx;

/* The save stream decoder of one save set. */
struct dec_slot {
	uint32_t ssid;
	struct nsr_asm_dec *d;
	struct scan_ctx *c;
};

struct scan_ctx {
	struct scan_result *res;
	struct nsr_vol_reader *r;
	const char *volname;
	struct dec_slot **decs; /* one per save set beginning here */
	size_t ndecs;
};

/* find - the entry of ssid (the last one if it appears twice) or NULL. */
static struct scan_ss *find(struct scan_result *res, uint32_t ssid)
{
	for (size_t i = res->n; i > 0; i--)
		if (res->ss[i - 1].hdr.ssid == ssid)
			return &res->ss[i - 1];
	return NULL;
}

/* add - a new entry for ssid; NULL when out of memory. */
static struct scan_ss *add(struct scan_result *res, uint32_t ssid)
{
	struct scan_ss *s;

	if (res->n == res->cap) {
		size_t cap = res->cap ? res->cap * 2 : 64;
		struct scan_ss *v = realloc(res->ss, cap * sizeof(*v));

		if (!v)
			return NULL;
		res->ss = v;
		res->cap = cap;
	}
	s = &res->ss[res->n++];
	memset(s, 0, sizeof(*s));
	s->hdr.ssid = ssid;
	return s;
}

/* get - the entry of ssid, made if missing (data before any begin). */
static struct scan_ss *get(struct scan_result *res, uint32_t ssid)
{
	struct scan_ss *s = find(res, ssid);

	return s ? s : add(res, ssid);
}

/* find_dec - the decoder of ssid or NULL. */
static struct dec_slot *find_dec(struct scan_ctx *c, uint32_t ssid)
{
	for (size_t i = 0; i < c->ndecs; i++)
		if (c->decs[i]->ssid == ssid)
			return c->decs[i];
	return NULL;
}

/* on_stream_damage - the decoder met the gap (or bad data): name the file
 * it was in. */
static int on_stream_damage(void *ctx, uint64_t offset, int why)
{
	struct dec_slot *ds = ctx;
	const char *path = nsr_asm_dec_path(ds->d);

	if (path && *path)
		fprintf(stderr, "scanner: save set %u: file %s is damaged "
			"(save stream offset %llu: %s)\n", ds->ssid, path,
			(unsigned long long)offset, nsr_strerror(why));
	else
		fprintf(stderr, "scanner: save set %u: damaged between files "
			"(save stream offset %llu: %s)\n", ds->ssid,
			(unsigned long long)offset, nsr_strerror(why));
	return 0;
}

/* start_dec - decode the stream of a save set that begins on this volume.
 * Best effort: without memory the scan goes on without file names. */
static void start_dec(struct scan_ctx *c, uint32_t ssid)
{
	static const struct nsr_asm_dec_ops ops = {.damaged = on_stream_damage};
	struct dec_slot *ds, **v;

	if (find_dec(c, ssid))
		return;
	ds = calloc(1, sizeof(*ds));
	v = realloc(c->decs, (c->ndecs + 1) * sizeof(*v));
	if (!ds || !v) {
		free(ds);
		if (v)
			c->decs = v;
		return;
	}
	c->decs = v;
	ds->ssid = ssid;
	ds->c = c;
	if (nsr_asm_dec_new(&ds->d, &ops, ds) != NSR_OK) {
		free(ds);
		return;
	}
	nsr_asm_dec_resync(ds->d, 1);
	c->decs[c->ndecs++] = ds;
}

/* on_data - save set bytes: feed its decoder, if it has one. */
static int on_data(void *arg, uint32_t ssid, const void *p, size_t len)
{
	struct dec_slot *ds = find_dec(arg, ssid);

	if (ds)
		(void)nsr_asm_dec_feed(ds->d, p, len);
	return 0;
}

/* free_decs - end every decoder. */
static void free_decs(struct scan_ctx *c)
{
	for (size_t i = 0; i < c->ndecs; i++) {
		nsr_asm_dec_free(c->decs[i]->d);
		free(c->decs[i]);
	}
	free(c->decs);
	c->decs = NULL;
	c->ndecs = 0;
}

/* on_begin - a fragment starts. */
static int on_begin(void *arg, const struct nsr_vol_sshdr *hdr,
		    const struct nsr_vol_span *sp,
		    const struct nsr_vol_loc *loc)
{
	struct scan_ctx *c = arg;
	struct scan_ss *s = add(c->res, hdr->ssid);

	if (!s)
		return 1;
	s->hdr = *hdr;
	if (sp)
		s->span = *sp;
	if (loc)
		s->first = *loc;
	nsr_vol_reader_frag(c->r, hdr, sp, loc, &s->frag);
	s->has_begin = 1;
	if (!sp || sp->frag_seq == 0)
		start_dec(c, hdr->ssid);
	return 0;
}

/* on_end - a fragment ends here with the save set's totals. */
static int on_end(void *arg, uint32_t ssid, const struct nsr_vol_sstail *t,
		  uint64_t bytes_here, const struct nsr_vol_loc *loc)
{
	struct scan_ctx *c = arg;
	struct scan_ss *s = get(c->res, ssid);

	NSR_UNUSED(loc);
	if (!s)
		return 1;
	s->tail = *t;
	s->bytes_here = bytes_here;
	s->frag.size = bytes_here;
	s->frag.complete = 1;
	s->has_end = 1;
	return 0;
}

/* on_unfinished - a fragment without an end chunk on this volume. */
static void on_unfinished(void *arg, uint32_t ssid, uint64_t bytes_here)
{
	struct scan_ctx *c = arg;
	struct scan_ss *s = get(c->res, ssid);

	if (!s)
		return;
	s->bytes_here = bytes_here;
	s->frag.size = bytes_here;
	s->unfinished = 1;
}

/* on_damage - print and remember damage. */
static void on_damage(void *arg, uint32_t ssid, int rc,
		      const struct nsr_vol_loc *loc, const char *msg)
{
	struct scan_ctx *c = arg;
	struct scan_ss *s = ssid ? find(c->res, ssid) : NULL;

	c->res->damage_reports++;
	if (s)
		s->damaged = 1;
	if (ssid)
		fprintf(stderr, "scanner: save set %u (%s:%s) on volume %s is "
			"damaged at file %u block %llu: %s (%s)\n", ssid,
			s ? s->hdr.client : "?", s ? s->hdr.name : "?",
			c->volname, loc ? loc->file : 0,
			(unsigned long long)(loc ? loc->record : 0), msg,
			nsr_strerror(rc));
	else
		fprintf(stderr, "scanner: volume %s: damaged block at file %u "
			"block %llu: %s (%s)\n", c->volname,
			loc ? loc->file : 0,
			(unsigned long long)(loc ? loc->record : 0), msg,
			nsr_strerror(rc));
}

/* scan_volume - scan the volume in dev. */
int scan_volume(struct nsr_dev *dev, struct scan_result *res,
		struct nsr_buf *why)
{
	struct nsr_vol_reader *r = NULL;
	struct nsr_vol_scan_ops ops;
	struct scan_ctx c;
	int rc;

	memset(res, 0, sizeof(*res));
	rc = nsr_vol_reader_open(dev, NULL, &r, why);
	if (rc != NSR_OK)
		return rc;
	res->label = *nsr_vol_reader_label(r);
	memset(&c, 0, sizeof(c));
	c.res = res;
	c.r = r;
	c.volname = res->label.name;
	memset(&ops, 0, sizeof(ops));
	ops.begin = on_begin;
	ops.data = on_data;
	ops.end = on_end;
	ops.unfinished = on_unfinished;
	ops.damage = on_damage;
	rc = nsr_vol_reader_scan(r, &ops, &c);
	res->damaged_blocks = nsr_vol_reader_damaged_blocks(r);
	free_decs(&c);
	if (rc != NSR_OK && res->damage_reports == 0)
		nsr_buf_addf(why, "%s", nsr_vol_reader_errmsg(r));
	nsr_vol_reader_close(r);
	return rc;
}

/* scan_result_release - free the entries. */
void scan_result_release(struct scan_result *res)
{
	free(res->ss);
	memset(res, 0, sizeof(*res));
}

/* scan_flag - E, B or C. */
char scan_flag(const struct scan_ss *s)
{
	if (s->has_end)
		return 'E';
	if (s->has_begin && s->span.frag_seq == 0)
		return 'B';
	return 'C';
}

/* scan_level_letter - one letter for a level as mminfo prints it. */
char scan_level_letter(const char *level)
{
	if (strcmp(level, "full") == 0)
		return 'f';
	if (strcmp(level, "incr") == 0)
		return 'i';
	if (level[0] >= '0' && level[0] <= '9' && level[1] == '\0')
		return level[0];
	return ' ';
}

/* scan_guess_type - a directory is an AFTD, /dev/... a tape, else a
 * vtape. */
enum nsr_dev_type scan_guess_type(const char *path)
{
	struct stat st;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return NSR_DEV_AFTD;
	if (strncmp(path, "/dev/", 5) == 0)
		return NSR_DEV_TAPE;
	return NSR_DEV_VTAPE;
}

/* scan_device - open read-only and scan. */
int scan_device(const char *prog, enum nsr_dev_type type,
		const char *device, struct nsr_dev **dev,
		struct scan_result *res, struct nsr_buf *why)
{
	struct nsr_dev_opts dopts;
	int rc;

	memset(&dopts, 0, sizeof(dopts));
	dopts.read_only = 1;
	rc = nsr_dev_open(type, device, &dopts, dev, why);
	if (rc != NSR_OK) {
		fprintf(stderr, "%s: cannot open %s device %s: %s\n", prog,
			nsr_dev_type_name(type), device, why->data);
		return 1;
	}
	rc = scan_volume(*dev, res, why);
	if (rc != NSR_OK && res->label.name[0] == '\0') {
		fprintf(stderr, "%s: cannot read the volume in %s: %s\n",
			prog, device, why->len ? why->data : nsr_strerror(rc));
		return 1;
	}
	return rc;
}

/* scan_fragment - MMDB_FRAG_* from where the fragment begins and ends. */
void scan_fragment(const struct scan_result *res, const struct scan_ss *s,
		   uint32_t cloneid, struct mmdb_fragment *f)
{
	memset(f, 0, sizeof(*f));
	f->ssid = s->hdr.ssid;
	f->cloneid = cloneid;
	memcpy(f->volid, res->label.volid, 16);
	f->seq = s->frag.frag_seq;
	f->ss_offset = s->frag.ss_offset;
	f->size = s->frag.size;
	f->file = s->frag.file;
	f->record = s->frag.record;
	f->offset = s->frag.offset;
	if (s->span.frag_seq == 0)
		f->flags = s->has_end ? MMDB_FRAG_COMPLETE : MMDB_FRAG_HEAD;
	else
		f->flags = s->has_end ? MMDB_FRAG_TAIL : MMDB_FRAG_MIDDLE;
}
