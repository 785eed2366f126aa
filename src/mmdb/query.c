/*
 * query.c - structured queries over the media database: plan choice
 * (ssid, client+name+savetime, client, savetime, volume, pool or a scan),
 * a cursor that walks key ranges of one tree under one read view, the
 * expansion of a save set into rows (clone instance x volume) and the
 * predicate evaluation with NetWorker semantics.  Memory per cursor is
 * fixed (plus a copy of the query), however many rows match.
 */
#include "nsr/compat.h"

#include "nsr/bytes.h"
#include "nsr/cmp.h"
#include "nsr/err.h"
#include "nsr/mmdb.h"
#include "nsr/mmdb_btree.h"
#include "nsr/mmdb_pager.h"

#include "mmdb_int.h"

#define KEYMAX 160
#define VCACHE 64
#define VCACHE_BIG 8192		/* after VCACHE_GROW misses */
#define VCACHE_GROW 512
#define COMBO_MAX 256

struct range {
	uint8_t lo[KEYMAX];
	size_t lolen;
	uint8_t hi[KEYMAX];	/* exclusive; hilen 0 = unbounded */
	size_t hilen;
};

struct group {
	uint8_t clone;
	uint32_t volno;		/* 0 = the clone has no fragment */
};

struct mmdb_cursor {
	struct mmdb *db;
	struct mmdb_view *v;
	int is_vol;
	enum mmdb_plan plan;
	struct mmdb_pred *preds;
	size_t npreds;
	char *strs;		/* copies of the predicate strings */

	uint32_t root;		/* tree the ranges walk */
	struct range *ranges;
	size_t nranges, rpos;
	struct mmdb_bt_cur bc;
	int in_range;

	struct ssrec *rec;	/* current save set */
	struct mmdb_saveset ss;
	uint32_t restrict_volno;
	struct group groups[MMDB_FRAGS_MAX + MMDB_CLONES_MAX];
	size_t ngroups, gpos;

	/* big volume cache, allocated once a query has missed the small
	 * one VCACHE_GROW times (long scans over many volumes) */
	uint32_t *bc_no;
	struct mmdb_volume *bc_vol;
	size_t misses;
	/* volume cache, direct mapped by volno; vc_vol[i] is valid only
	 * when vc_no[i] != 0 (so only vc_no needs clearing) */
	uint32_t vc_no[VCACHE];
	struct mmdb_volume vc_vol[VCACHE];
};

/* ---- predicate evaluation -------------------------------------------- */

struct val {
	enum { V_NUM, V_STR, V_FLAG } kind;
	int64_t num;
	const char *str;
	int flag;
	char buf[40];
};

/* hexid - 32 lowercase hex digits of a volid. */
static void hexid(const uint8_t id[16], char out[33])
{
	static const char hx[] = "0123456789abcdef";

	for (int i = 0; i < 16; i++) {
		out[2 * i] = hx[id[i] >> 4];
		out[2 * i + 1] = hx[id[i] & 15];
	}
	out[32] = '\0';
}

/* letters - the letters of set bits from a (bit, letter) table. */
static void letters(uint32_t f, const uint32_t *bits, const char *ls,
		    char *out)
{
	size_t n = 0;

	for (size_t i = 0; ls[i]; i++)
		if (f & bits[i])
			out[n++] = ls[i];
	out[n] = '\0';
}

/* vol_state - the state letters of a volume report. */
static void vol_state(const struct mmdb_volume *v, char *out)
{
	size_t n = 0;
	int rec = (v->flags & MMDB_VOL_RECYCLABLE) != 0;
	int man = (v->flags & MMDB_VOL_MANUAL) != 0;

	if (rec && man)
		out[n++] = 'X';
	else if (rec)
		out[n++] = 'E';
	else if (man)
		out[n++] = 'M';
	if (v->flags & MMDB_VOL_READONLY)
		out[n++] = 'R';
	out[n] = '\0';
}

/* row_val - value of attribute a in a row. */
static void row_val(const struct mmdb_ss_row *r, enum mmdb_attr a,
		    int is_vol, struct val *o)
{
	static const uint32_t clbits[] = {
		MMDB_CLONE_ABORTED, MMDB_CLONE_INCOMPLETE, MMDB_CLONE_OPAQUE,
		MMDB_CLONE_SUSPECT
	};
	static const uint32_t frbits[] = {
		MMDB_FRAG_COMPLETE, MMDB_FRAG_HEAD, MMDB_FRAG_MIDDLE,
		MMDB_FRAG_TAIL
	};
	const struct mmdb_saveset *s = &r->ss;
	const struct mmdb_volume *v = &r->vol;
	uint32_t sf = s->flags, vf = r->has_volume ? v->flags : 0;

	o->kind = V_NUM;
	o->num = 0;
	o->str = "";
	o->flag = 0;
	switch (a) {
	case MMDB_A_SSID: o->num = s->ssid; break;
	case MMDB_A_CLONEID: o->num = r->clone.cloneid; break;
	case MMDB_A_NAME: o->kind = V_STR; o->str = s->name; break;
	case MMDB_A_CLIENT: o->kind = V_STR; o->str = s->client; break;
	case MMDB_A_LEVEL: o->num = s->level; break;
	case MMDB_A_SAVETIME: case MMDB_A_NSAVETIME: o->num = s->savetime;
		break;
	case MMDB_A_SSCREATE: o->num = s->sscreate; break;
	case MMDB_A_SSCOMP: o->num = s->sscomp; break;
	case MMDB_A_SSBROWSE: o->num = s->ssbrowse; break;
	case MMDB_A_SSRETENT: o->num = s->ssretent; break;
	case MMDB_A_TOTALSIZE: o->num = (int64_t)s->totalsize; break;
	case MMDB_A_NFILES: o->num = (int64_t)s->nfiles; break;
	case MMDB_A_SSFLAGS:
		o->kind = V_STR;
		mmdb_ss_flags_str(sf, o->buf, sizeof(o->buf));
		o->str = o->buf;
		break;
	case MMDB_A_SUMFLAGS:
		o->kind = V_STR;
		mmdb_sumflags_str(r, o->buf, sizeof(o->buf));
		o->str = o->buf;
		break;
	case MMDB_A_SUMSIZE: o->num = (int64_t)r->sumsize; break;
	case MMDB_A_POOL: o->kind = V_STR;
		o->str = is_vol ? v->pool : s->pool; break;
	case MMDB_A_GROUP: o->kind = V_STR; o->str = s->group; break;
	case MMDB_A_PSSID: o->num = s->pssid; break;
	case MMDB_A_ANCHOR: o->num = s->anchor_time; break;
	case MMDB_A_CLRETENT: o->num = r->clone.clretent; break;
	case MMDB_A_CLFLAGS:
		o->kind = V_STR;
		letters(r->clone.flags, clbits, "aios", o->buf);
		o->str = o->buf;
		break;
	case MMDB_A_CLTIME: o->num = r->clone.clone_time; break;
	case MMDB_A_COPIES: o->num = r->copies; break;
	case MMDB_A_FRAGFLAGS:
		o->kind = V_STR;
		letters(r->frag_flags, frbits, "chmt", o->buf);
		o->str = o->buf;
		break;
	case MMDB_A_VOLUME: o->kind = V_STR;
		o->str = r->has_volume ? v->name : ""; break;
	case MMDB_A_VOLID:
		o->kind = V_STR;
		if (r->has_volume) {
			hexid(v->volid, o->buf);
			o->str = o->buf;
		}
		break;
	case MMDB_A_TYPE: o->kind = V_STR;
		o->str = r->has_volume ? v->type : ""; break;
	case MMDB_A_FAMILY: o->kind = V_STR;
		o->str = r->has_volume ? mmdb_volume_family(v->type) : "";
		break;
	case MMDB_A_WRITTEN: o->num = (int64_t)v->written; break;
	case MMDB_A_PCTUSED: o->num = r->has_volume ?
			mmdb_volume_pctused(v) : 0; break;
	case MMDB_A_READ: o->num = (int64_t)v->read; break;
	case MMDB_A_LOCATION: o->kind = V_STR;
		o->str = r->has_volume ? v->location : ""; break;
	case MMDB_A_CAPACITY: o->num = (int64_t)v->capacity; break;
	case MMDB_A_VOLRETENT: o->num = v->volretent; break;
	case MMDB_A_STATE:
		o->kind = V_STR;
		if (r->has_volume) {
			vol_state(v, o->buf);
			o->str = o->buf;
		}
		break;
	case MMDB_A_MOUNTS: o->num = v->mounts; break;
	case MMDB_A_OLABEL: o->num = v->olabel; break;
	case MMDB_A_LABELED: o->num = v->labeled; break;
	case MMDB_A_RECYCLED: o->num = v->recycled; break;
	case MMDB_A_DEVICE: o->kind = V_STR;
		o->str = r->has_volume ? v->device : ""; break;
	case MMDB_A_VOLBLOCKSIZE: o->num = v->block_size; break;
	case MMDB_A_NEXTFILE: o->num = v->next_file; break;
	case MMDB_A_NEXTREC: o->num = (int64_t)v->next_record; break;
	case MMDB_A_INCOMPLETE: o->kind = V_FLAG;
		o->flag = !!(sf & MMDB_SS_INCOMPLETE); break;
	case MMDB_A_SUSPECT: o->kind = V_FLAG;
		o->flag = !!(sf & MMDB_SS_SUSPECT) ||
			  !!(r->clone.flags & MMDB_CLONE_SUSPECT);
		break;
	case MMDB_A_SSRECYCLE: o->kind = V_FLAG;
		o->flag = !!(sf & MMDB_SS_RECYCLABLE); break;
	case MMDB_A_BROWSABLE: o->kind = V_FLAG;
		o->flag = !!(sf & MMDB_SS_BROWSABLE); break;
	case MMDB_A_RECOVERABLE: o->kind = V_FLAG;
		o->flag = !!(sf & MMDB_SS_RECOVERABLE); break;
	case MMDB_A_INPROGRESS: o->kind = V_FLAG;
		o->flag = !!(sf & MMDB_SS_INPROGRESS); break;
	case MMDB_A_COMPLETE: o->kind = V_FLAG;
		o->flag = !!(sf & MMDB_SS_FINISHED); break;
	case MMDB_A_ABORTED: o->kind = V_FLAG;
		o->flag = !!(sf & MMDB_SS_ABORTED); break;
	case MMDB_A_FULL: o->kind = V_FLAG;
		o->flag = !!(vf & MMDB_VOL_FULL); break;
	case MMDB_A_RECYCLABLE: o->kind = V_FLAG;
		o->flag = !!(vf & MMDB_VOL_RECYCLABLE); break;
	case MMDB_A_READONLY: o->kind = V_FLAG;
		o->flag = !!(vf & MMDB_VOL_READONLY); break;
	case MMDB_A_MANUAL: o->kind = V_FLAG;
		o->flag = !!(vf & MMDB_VOL_MANUAL); break;
	case MMDB_A_COUNT: break;
	}
}

/* cmp_op - apply a comparison operator to a three-way result. */
static int cmp_op(enum mmdb_op op, int c)
{
	switch (op) {
	case MMDB_OP_EQ: return c == 0;
	case MMDB_OP_NE: return c != 0;
	case MMDB_OP_LT: return c < 0;
	case MMDB_OP_LE: return c <= 0;
	case MMDB_OP_GT: return c > 0;
	case MMDB_OP_GE: return c >= 0;
	default: return 0;
	}
}

/* pred_match - one predicate against a row. */
static int pred_match(const struct mmdb_pred *p, const struct mmdb_ss_row *r,
		      int is_vol)
{
	const struct mmdb_attr_info *ai = &mmdb_attrs[p->attr];
	struct val v;

	row_val(r, p->attr, is_vol, &v);
	if (v.kind == V_FLAG)
		return p->op == MMDB_OP_SET ? v.flag : !v.flag;
	if (ai->type == MMDB_T_FLAGS) {
		int all = 1;

		for (const char *c = p->str; *c; c++)
			if (!strchr(v.str, *c))
				all = 0;
		return p->op == MMDB_OP_NE ? !all : all;
	}
	if (p->attr == MMDB_A_LEVEL) {
		int64_t want = p->str ? nsr_level_parse(p->str) : p->num;

		if (want < 0)
			return p->op == MMDB_OP_NE;
		return cmp_op(p->op, (v.num > want) - (v.num < want));
	}
	if (v.kind == V_STR) {
		int c = strcmp(v.str, p->str);

		return cmp_op(p->op, (c > 0) - (c < 0));
	}
	return cmp_op(p->op, (v.num > p->num) - (v.num < p->num));
}

/* row_match - all predicates; EQ predicates on one attribute are OR'ed. */
static int row_match(const struct mmdb_cursor *c, const struct mmdb_ss_row *r)
{
	uint8_t has_eq[MMDB_A_COUNT] = { 0 }, eq_hit[MMDB_A_COUNT] = { 0 };

	for (size_t i = 0; i < c->npreds; i++) {
		const struct mmdb_pred *p = &c->preds[i];

		if (p->op == MMDB_OP_EQ &&
		    mmdb_attrs[p->attr].type != MMDB_T_FLAGS) {
			has_eq[p->attr] = 1;
			if (!eq_hit[p->attr] && pred_match(p, r, c->is_vol))
				eq_hit[p->attr] = 1;
		} else if (!pred_match(p, r, c->is_vol)) {
			return 0;
		}
	}
	for (size_t a = 0; a < MMDB_A_COUNT; a++)
		if (has_eq[a] && !eq_hit[a])
			return 0;
	return 1;
}

/* ---- cursor setup ---------------------------------------------------- */

/* parse_volid - 32 hex digits (dashes allowed) into 16 bytes. */
static int parse_volid(const char *s, uint8_t id[16])
{
	int n = 0;

	for (; *s; s++) {
		int d;

		if (*s == '-')
			continue;
		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			return -1;
		if (n >= 32)
			return -1;
		if (n % 2 == 0)
			id[n / 2] = (uint8_t)(d << 4);
		else
			id[n / 2] |= (uint8_t)d;
		n++;
	}
	return n == 32 ? 0 : -1;
}

/* copy_query - validate q and copy it (strings too) into the cursor. */
static int copy_query(struct mmdb_cursor *c, const struct mmdb_query *q,
		      int vol_only)
{
	size_t n = q ? q->npreds : 0, total = 0, off = 0;

	if (n == 0)
		return NSR_OK;
	if (!q->preds)
		return NSR_ERR_INVAL;
	for (size_t i = 0; i < n; i++) {
		const struct mmdb_pred *p = &q->preds[i];
		const struct mmdb_attr_info *ai;

		if ((unsigned)p->attr >= MMDB_A_COUNT ||
		    (unsigned)p->op > MMDB_OP_CLEAR)
			return NSR_ERR_INVAL;
		ai = &mmdb_attrs[p->attr];
		if (vol_only && ai->scope != MMDB_S_VOLUME &&
		    p->attr != MMDB_A_POOL)	/* the volume's pool */
			return NSR_ERR_INVAL;
		if ((ai->type == MMDB_T_FLAG) !=
		    (p->op == MMDB_OP_SET || p->op == MMDB_OP_CLEAR))
			return NSR_ERR_INVAL;
		if ((ai->type == MMDB_T_STRING || ai->type == MMDB_T_FLAGS) &&
		    p->attr != MMDB_A_LEVEL && !p->str)
			return NSR_ERR_INVAL;
		if (ai->type == MMDB_T_FLAGS && p->op != MMDB_OP_EQ &&
		    p->op != MMDB_OP_NE)
			return NSR_ERR_INVAL;
		if (p->str)
			total += strlen(p->str) + 1;
	}
	c->preds = calloc(n, sizeof(*c->preds));
	c->strs = malloc(total ? total : 1);
	if (!c->preds || !c->strs)
		return NSR_ERR_NOMEM;
	for (size_t i = 0; i < n; i++) {
		c->preds[i] = q->preds[i];
		if (q->preds[i].str) {
			size_t l = strlen(q->preds[i].str) + 1;
			char *dst = c->strs + off;

			memcpy(dst, q->preds[i].str, l);
			off += l;
			c->preds[i].str = dst;
			/* volids compare as 32 lowercase hex digits */
			if (c->preds[i].attr == MMDB_A_VOLID) {
				uint8_t id[16];
				char hx[33];

				if (parse_volid(dst, id) == 0 && l >= 33) {
					hexid(id, hx);
					memcpy(dst, hx, 33);
				}
			}
		}
	}
	c->npreds = n;
	return NSR_OK;
}

/* add_range - append a key range [lo, hi) (hilen 0 = open). */
static int add_range(struct mmdb_cursor *c, const void *lo, size_t lolen,
		     const void *hi, size_t hilen)
{
	struct range *nr, *r;

	if (lolen > KEYMAX || hilen > KEYMAX)
		return NSR_ERR_INVAL;
	nr = realloc(c->ranges, (c->nranges + 1) * sizeof(*nr));
	if (!nr)
		return NSR_ERR_NOMEM;
	c->ranges = nr;
	r = &nr[c->nranges++];
	if (lolen)
		memcpy(r->lo, lo, lolen);
	r->lolen = lolen;
	if (hilen)
		memcpy(r->hi, hi, hilen);
	r->hilen = hilen;
	return NSR_OK;
}

/* add_exact - a range holding exactly key k. */
static int add_exact(struct mmdb_cursor *c, const void *k, size_t klen)
{
	uint8_t hi[KEYMAX + 1];

	if (klen + 1 > KEYMAX)
		return NSR_ERR_INVAL;
	memcpy(hi, k, klen);
	hi[klen] = 0;
	return add_range(c, k, klen, hi, klen + 1);
}

/* add_u32_prefix - a range of keys starting with the 4 bytes of id. */
static int add_u32_prefix(struct mmdb_cursor *c, uint32_t id)
{
	uint8_t lo[4], hi[4];

	nsr_put_u32(lo, id);
	if (id == UINT32_MAX)	/* the largest prefix: open end */
		return add_range(c, lo, 4, NULL, 0);
	nsr_put_u32(hi, id + 1);
	return add_range(c, lo, 4, hi, 4);
}

/* time_bounds - savetime range implied by the predicates. */
static int time_bounds(const struct mmdb_cursor *c, int64_t *lo, int64_t *hi)
{
	int64_t eqlo = INT64_MAX, eqhi = INT64_MIN;
	int bounded = 0, haveeq = 0;

	*lo = INT64_MIN;
	*hi = INT64_MAX;
	for (size_t i = 0; i < c->npreds; i++) {
		const struct mmdb_pred *p = &c->preds[i];

		if (p->attr != MMDB_A_SAVETIME && p->attr != MMDB_A_NSAVETIME)
			continue;
		switch (p->op) {
		case MMDB_OP_EQ:
			haveeq = 1;
			eqlo = NSR_MIN(eqlo, p->num);
			eqhi = NSR_MAX(eqhi, p->num);
			break;
		case MMDB_OP_GE: *lo = NSR_MAX(*lo, p->num); bounded = 1;
			break;
		case MMDB_OP_GT:
			if (p->num == INT64_MAX)
				return -1;
			*lo = NSR_MAX(*lo, p->num + 1);
			bounded = 1;
			break;
		case MMDB_OP_LE: *hi = NSR_MIN(*hi, p->num); bounded = 1;
			break;
		case MMDB_OP_LT:
			if (p->num == INT64_MIN)
				return -1;
			*hi = NSR_MIN(*hi, p->num - 1);
			bounded = 1;
			break;
		default:
			break;
		}
	}
	if (haveeq) {
		*lo = NSR_MAX(*lo, eqlo);
		*hi = NSR_MIN(*hi, eqhi);
		bounded = 1;
	}
	if (*lo > *hi)
		return -1;	/* nothing can match */
	return bounded;
}

/* add_time_range - [prefix|lo, prefix|hi] over time8 keys. */
static int add_time_range(struct mmdb_cursor *c, const uint8_t *prefix,
			  size_t plen, int64_t lo, int64_t hi)
{
	uint8_t a[KEYMAX], b[KEYMAX];

	if (plen) {
		memcpy(a, prefix, plen);
		memcpy(b, prefix, plen);
	}
	mmdb_key_time(a + plen, lo);
	if (hi == INT64_MAX) {
		/* up to the end of the prefix: the next prefix, if any */
		size_t i = plen;

		while (i > 0 && b[i - 1] == 0xff)
			b[--i] = 0;
		if (i == 0)
			return add_range(c, a, plen + 8, NULL, 0);
		b[i - 1]++;
		return add_range(c, a, plen + 8, b, plen);
	}
	mmdb_key_time(b + plen, hi + 1);
	return add_range(c, a, plen + 8, b, plen + 8);
}

/* collect_eq - string values of EQ predicates on attribute a. */
static size_t collect_eq(const struct mmdb_cursor *c, enum mmdb_attr a,
			 const char **out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < c->npreds; i++)
		if (c->preds[i].attr == a && c->preds[i].op == MMDB_OP_EQ &&
		    c->preds[i].str) {
			if (n < max)
				out[n] = c->preds[i].str;
			n++;
		}
	return n;
}

/* plan_ss - choose the access path of a save set query. */
static int plan_ss(struct mmdb_cursor *c, unsigned flags)
{
	struct mmdb *db = c->db;
	const char *cl[COMBO_MAX], *nm[COMBO_MAX], *vn[COMBO_MAX];
	uint32_t ids[COMBO_MAX];
	size_t ncl, nnm, nvn, nvi, nids = 0;
	int64_t tlo, thi;
	int tb, rc = NSR_OK;

	c->plan = MMDB_PLAN_SCAN;
	c->root = db->roots[T_SS];
	tb = time_bounds(c, &tlo, &thi);
	if (flags & MMDB_CUR_FORCE_SCAN)
		return add_range(c, "", 0, NULL, 0);
	if (tb < 0)
		return NSR_OK;	/* no ranges: no rows */
	/* 1. ssid = ... (not in chain order) */
	for (size_t i = 0; !(flags & MMDB_CUR_CHAINS) && i < c->npreds;
	     i++) {
		const struct mmdb_pred *p = &c->preds[i];

		if (p->attr != MMDB_A_SSID || p->op != MMDB_OP_EQ)
			continue;
		if (nids == COMBO_MAX) {
			nids = 0;	/* too many: another plan */
			break;
		}
		if (p->num >= 0 && p->num <= UINT32_MAX)
			ids[nids++] = (uint32_t)p->num;
		else
			ids[nids++] = 0;	/* matches nothing */
	}
	if (nids > 0) {
		c->plan = MMDB_PLAN_SSID;
		qsort(ids, nids, sizeof(ids[0]), nsr_cmp_u32);
		for (size_t i = 0; i < nids && rc == NSR_OK; i++) {
			uint8_t k[4];

			if (ids[i] == 0 || (i > 0 && ids[i] == ids[i - 1]))
				continue;
			nsr_put_u32(k, ids[i]);
			rc = add_exact(c, k, 4);
		}
		return rc;
	}
	ncl = collect_eq(c, MMDB_A_CLIENT, cl, COMBO_MAX);
	nnm = collect_eq(c, MMDB_A_NAME, nm, COMBO_MAX);
	nvn = collect_eq(c, MMDB_A_VOLUME, vn, COMBO_MAX);
	nvi = collect_eq(c, MMDB_A_VOLID, vn + (nvn < COMBO_MAX ? nvn : 0),
			 COMBO_MAX - NSR_MIN(nvn, (size_t)COMBO_MAX));
	/* 2. client = ..., name = ... [, savetime range] */
	if (ncl && nnm && ncl * nnm <= COMBO_MAX) {
		c->plan = MMDB_PLAN_CLIENT_NAME_TIME;
		c->root = db->roots[T_SS_CNT];
		for (size_t i = 0; i < ncl && rc == NSR_OK; i++)
			for (size_t j = 0; j < nnm && rc == NSR_OK; j++) {
				uint32_t ci, ni;
				uint8_t pre[8];

				if (mmdb_str_find(db, cl[i], &ci) != NSR_OK ||
				    mmdb_str_find(db, nm[j], &ni) != NSR_OK)
					continue;
				nsr_put_u32(pre, ci);
				nsr_put_u32(pre + 4, ni);
				rc = add_time_range(c, pre, 8, tlo, thi);
			}
		return rc;
	}
	/* 3. volume = ... / volid = ... (not in chain order) */
	if ((nvn || nvi) && nvn + nvi <= COMBO_MAX &&
	    !(flags & MMDB_CUR_CHAINS)) {
		c->plan = MMDB_PLAN_VOLUME;
		c->root = db->roots[T_FRAG_VOL];
		for (size_t i = 0; i < nvn + nvi && rc == NSR_OK; i++) {
			uint32_t volno;
			uint8_t id[16];
			int r2;

			if (i < nvn)
				r2 = mmdb_volno_by_name(db, c->v, vn[i],
							&volno);
			else if (parse_volid(vn[i], id) == 0)
				r2 = mmdb_volno_by_id(db, c->v, id, &volno);
			else
				continue;
			if (r2 == NSR_ERR_NOTFOUND)
				continue;
			rc = r2;
			if (rc == NSR_OK)
				rc = add_u32_prefix(c, volno);
		}
		return rc;
	}
	/* 4. client = ... */
	if (ncl && ncl <= COMBO_MAX) {
		c->plan = MMDB_PLAN_CLIENT;
		c->root = db->roots[T_SS_CNT];
		for (size_t i = 0; i < ncl && rc == NSR_OK; i++) {
			uint32_t ci;

			if (mmdb_str_find(db, cl[i], &ci) == NSR_OK)
				rc = add_u32_prefix(c, ci);
		}
		return rc;
	}
	/* 5. chain order: the whole client, name, time index */
	if (flags & MMDB_CUR_CHAINS) {
		c->plan = MMDB_PLAN_CLIENT;
		c->root = db->roots[T_SS_CNT];
		return add_range(c, "", 0, NULL, 0);
	}
	/* 6. savetime range */
	if (tb > 0) {
		c->plan = MMDB_PLAN_SAVETIME;
		c->root = db->roots[T_SS_TIME];
		return add_time_range(c, NULL, 0, tlo, thi);
	}
	/* 7. scan */
	return add_range(c, "", 0, NULL, 0);
}

/* plan_vol - choose the access path of a volume query. */
static int plan_vol(struct mmdb_cursor *c, unsigned flags)
{
	struct mmdb *db = c->db;
	const char *vn[COMBO_MAX], *pl[COMBO_MAX];
	size_t nvn, nvi, npl;
	int rc = NSR_OK;

	c->plan = MMDB_PLAN_VOLSCAN;
	c->root = db->roots[T_VOL];
	if (flags & MMDB_CUR_FORCE_SCAN)
		return add_range(c, "", 0, NULL, 0);
	nvn = collect_eq(c, MMDB_A_VOLUME, vn, COMBO_MAX);
	nvi = collect_eq(c, MMDB_A_VOLID, vn + (nvn < COMBO_MAX ? nvn : 0),
			 COMBO_MAX - NSR_MIN(nvn, (size_t)COMBO_MAX));
	npl = collect_eq(c, MMDB_A_POOL, pl, COMBO_MAX);
	if ((nvn || nvi) && nvn + nvi <= COMBO_MAX) {
		c->plan = MMDB_PLAN_VOLNAME;
		for (size_t i = 0; i < nvn + nvi && rc == NSR_OK; i++) {
			char name[MMDB_VOLNAME_MAX + 1];
			const uint8_t *val;
			uint8_t id[16];
			size_t vl;

			if (i < nvn) {
				if (strlen(vn[i]) == 0 ||
				    strlen(vn[i]) > MMDB_VOLNAME_MAX)
					continue;
				rc = add_exact(c, vn[i], strlen(vn[i]));
				continue;
			}
			if (parse_volid(vn[i], id) != 0)
				continue;
			if (mmdb_bt_get(c->v, db->roots[T_VOL_ID], id, 16,
					&val, &vl) != NSR_OK ||
			    vl == 0 || vl > MMDB_VOLNAME_MAX)
				continue;
			memcpy(name, val, vl);
			rc = add_exact(c, name, vl);
		}
		return rc;
	}
	if (npl && npl <= COMBO_MAX) {
		c->plan = MMDB_PLAN_POOL;
		c->root = db->roots[T_VOL_POOL];
		for (size_t i = 0; i < npl && rc == NSR_OK; i++) {
			uint8_t lo[KEYMAX], hi[KEYMAX];
			size_t l = strlen(pl[i]);

			if (l > MMDB_POOL_MAX)
				continue;
			memcpy(lo, pl[i], l);
			lo[l] = 0;
			memcpy(hi, pl[i], l);
			hi[l] = 1;
			rc = add_range(c, lo, l + 1, hi, l + 1);
		}
		return rc;
	}
	return add_range(c, "", 0, NULL, 0);
}

/* range_cmp - order ranges by lower bound, then upper bound. */
static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;
	int c = memcmp(x->lo, y->lo, NSR_MIN(x->lolen, y->lolen));

	if (c == 0 && x->lolen != y->lolen)
		c = x->lolen < y->lolen ? -1 : 1;
	if (c == 0)
		c = memcmp(x->hi, y->hi, NSR_MIN(x->hilen, y->hilen));
	if (c == 0 && x->hilen != y->hilen)
		c = x->hilen < y->hilen ? -1 : 1;
	return c;
}

/* ranges_unique - sort the ranges and drop duplicates (repeated values in
 * a query give identical ranges; distinct values give disjoint ones). */
static void ranges_unique(struct mmdb_cursor *c)
{
	size_t j = 0;

	if (c->nranges < 2)
		return;
	qsort(c->ranges, c->nranges, sizeof(*c->ranges), range_cmp);
	for (size_t i = 1; i < c->nranges; i++)
		if (range_cmp(&c->ranges[j], &c->ranges[i]) != 0)
			c->ranges[++j] = c->ranges[i];
	c->nranges = j + 1;
}

/* cursor_new - common part of both query kinds. */
static int cursor_new(struct mmdb *db, const struct mmdb_query *q,
		      unsigned flags, int is_vol, struct mmdb_cursor **out)
{
	struct mmdb_cursor *c;
	int rc;

	*out = NULL;
	c = malloc(sizeof(*c));
	if (!c)
		return NSR_ERR_NOMEM;
	/* Everything but the volume cache bodies starts zeroed. */
	memset(c, 0, offsetof(struct mmdb_cursor, vc_vol));
	c->db = db;
	c->is_vol = is_vol;
	rc = copy_query(c, q, is_vol);
	if (rc == NSR_OK && !is_vol) {
		c->rec = malloc(sizeof(*c->rec));
		if (!c->rec)
			rc = NSR_ERR_NOMEM;
	}
	if (rc == NSR_OK)
		rc = mmdb_pager_read_begin(db->pager, &c->v);
	if (rc == NSR_OK)
		rc = is_vol ? plan_vol(c, flags) : plan_ss(c, flags);
	if (rc == NSR_OK)
		ranges_unique(c);
	if (rc != NSR_OK) {
		mmdb_cursor_free(c);
		return rc;
	}
	*out = c;
	return NSR_OK;
}

/* mmdb_ss_query - cursor over save set rows. */
int mmdb_ss_query(struct mmdb *db, const struct mmdb_query *q, unsigned flags,
		  struct mmdb_cursor **out)
{
	return cursor_new(db, q, flags, 0, out);
}

/* mmdb_vol_query - cursor over volumes. */
int mmdb_vol_query(struct mmdb *db, const struct mmdb_query *q,
		   unsigned flags, struct mmdb_cursor **out)
{
	return cursor_new(db, q, flags, 1, out);
}

/* mmdb_cursor_plan - the chosen access path. */
enum mmdb_plan mmdb_cursor_plan(const struct mmdb_cursor *c)
{
	return c->plan;
}

/* mmdb_cursor_free - release the view and memory. */
void mmdb_cursor_free(struct mmdb_cursor *c)
{
	if (!c)
		return;
	mmdb_pager_read_end(c->v);
	free(c->preds);
	free(c->strs);
	free(c->ranges);
	free(c->rec);
	free(c->bc_no);
	free(c->bc_vol);
	free(c);
}

/* ---- iteration ------------------------------------------------------- */

/* next_entry - next key/value inside the ranges: 1, 0 at the end, < 0. */
static int next_entry(struct mmdb_cursor *c, const uint8_t **k, size_t *kl,
		      const uint8_t **val, size_t *vl)
{
	int rc;

	for (;;) {
		const struct range *r;
		size_t n;
		int cmp;

		if (c->rpos >= c->nranges)
			return 0;
		r = &c->ranges[c->rpos];
		if (!c->in_range) {
			rc = mmdb_bt_seek(&c->bc, c->v, c->root, r->lo,
					  r->lolen);
			c->in_range = 1;
		} else {
			rc = mmdb_bt_next(&c->bc);
		}
		if (rc != NSR_OK)
			return rc;
		if (!c->bc.valid) {
			c->rpos = c->nranges;
			return 0;
		}
		mmdb_bt_key(&c->bc, k, kl);
		if (!*k)
			return NSR_ERR_CORRUPT;
		if (r->hilen) {
			n = NSR_MIN(*kl, r->hilen);
			cmp = memcmp(*k, r->hi, n);
			if (cmp > 0 || (cmp == 0 && *kl >= r->hilen)) {
				c->rpos++;
				c->in_range = 0;
				continue;
			}
		}
		mmdb_bt_val(&c->bc, val, vl);
		return 1;
	}
}

/* vol_cached - volume of volno through the cursor's cache. */
static int vol_cached(struct mmdb_cursor *c, uint32_t volno,
		      const struct mmdb_volume **out)
{
	uint32_t *nos = c->vc_no;
	struct mmdb_volume *vols = c->vc_vol;
	size_t slot;
	int rc;

	if (!c->bc_no && c->misses >= VCACHE_GROW) {
		c->bc_no = calloc(VCACHE_BIG, sizeof(*c->bc_no));
		c->bc_vol = malloc(VCACHE_BIG * sizeof(*c->bc_vol));
		if (!c->bc_no || !c->bc_vol) {	/* stay with the small one */
			free(c->bc_no);
			free(c->bc_vol);
			c->bc_no = NULL;
			c->bc_vol = NULL;
			c->misses = 0;
		}
	}
	if (c->bc_no) {
		nos = c->bc_no;
		vols = c->bc_vol;
		slot = volno % VCACHE_BIG;
	} else {
		slot = volno % VCACHE;
	}
	if (nos[slot] != volno) {
		c->misses++;
		nos[slot] = 0;
		rc = mmdb_vol_by_no(c->db, c->v, volno, &vols[slot]);
		if (rc != NSR_OK)
			return rc;
		nos[slot] = volno;
	}
	*out = &vols[slot];
	return NSR_OK;
}

/* make_groups - the (clone, volume) rows of the current record. */
static void make_groups(struct mmdb_cursor *c)
{
	const struct ssrec *r = c->rec;

	c->ngroups = 0;
	c->gpos = 0;
	for (uint32_t ci = 0; ci < r->nclones; ci++) {
		size_t first = c->ngroups;

		for (uint32_t i = 0; i < r->nfrags; i++) {
			const struct ss_frag *f = &r->frags[i];
			int dup = 0;

			if (f->clone != ci)
				continue;
			if (c->restrict_volno && f->volno != c->restrict_volno)
				continue;
			for (size_t g = first; g < c->ngroups; g++)
				if (c->groups[g].volno == f->volno)
					dup = 1;
			if (dup)
				continue;
			c->groups[c->ngroups].clone = (uint8_t)ci;
			c->groups[c->ngroups].volno = f->volno;
			c->ngroups++;
		}
		if (c->ngroups == first && !c->restrict_volno) {
			c->groups[c->ngroups].clone = (uint8_t)ci;
			c->groups[c->ngroups].volno = 0;
			c->ngroups++;
		}
	}
}

/* fill_row - row for group g of the current record. */
static int fill_row(struct mmdb_cursor *c, const struct group *g,
		    struct mmdb_ss_row *row)
{
	const struct ssrec *r = c->rec;
	const struct ss_clone *cl = &r->clones[g->clone];
	uint32_t best = UINT32_MAX;
	int rc;

	memcpy(&row->ss, &c->ss, sizeof(row->ss));
	row->clone.ssid = r->ssid;
	row->clone.cloneid = cl->cloneid;
	row->clone.clone_time = cl->clone_time;
	row->clone.clretent = cl->clretent;
	row->clone.flags = cl->flags;
	row->copies = r->nclones;
	row->has_volume = g->volno != 0;
	row->frag_flags = 0;
	row->sumsize = 0;
	row->first_file = 0;
	row->first_record = 0;
	if (!row->has_volume) {
		memset(&row->vol, 0, sizeof(row->vol));
		return NSR_OK;
	}
	{
		const struct mmdb_volume *vol;

		rc = vol_cached(c, g->volno, &vol);
		if (rc != NSR_OK)
			return rc;
		memcpy(&row->vol, vol, sizeof(row->vol));
	}
	for (uint32_t i = 0; i < r->nfrags; i++) {
		const struct ss_frag *f = &r->frags[i];

		if (f->clone != g->clone || f->volno != g->volno)
			continue;
		row->frag_flags |= f->flags;
		row->sumsize += f->size;
		if (f->seq < best) {
			best = f->seq;
			row->first_file = f->file;
			row->first_record = f->record;
		}
	}
	return NSR_OK;
}

/* load_next_ss - advance to the next save set of the plan: 1, 0, < 0. */
static int load_next_ss(struct mmdb_cursor *c)
{
	const uint8_t *k, *val;
	size_t kl, vl;
	uint32_t ssid;
	int rc;

	rc = next_entry(c, &k, &kl, &val, &vl);
	if (rc <= 0)
		return rc;
	c->restrict_volno = 0;
	switch (c->plan) {
	case MMDB_PLAN_SCAN:
	case MMDB_PLAN_SSID:
		if (kl != 4)
			return NSR_ERR_CORRUPT;
		rc = mmdb_ssrec_decode(val, vl, nsr_get_u32(k), c->rec);
		break;
	case MMDB_PLAN_VOLUME:
		if (kl != 8)
			return NSR_ERR_CORRUPT;
		c->restrict_volno = nsr_get_u32(k);
		ssid = nsr_get_u32(k + 4);
		rc = mmdb_ss_load(c->db, c->v, ssid, c->rec);
		break;
	default:	/* ss_cnt / ss_time: the ssid is the last 4 bytes */
		if (kl < 4)
			return NSR_ERR_CORRUPT;
		ssid = nsr_get_u32(k + kl - 4);
		rc = mmdb_ss_load(c->db, c->v, ssid, c->rec);
		break;
	}
	if (rc == NSR_ERR_NOTFOUND)
		rc = NSR_ERR_CORRUPT;	/* an index entry without record */
	if (rc == NSR_OK)
		rc = mmdb_ss_export(c->db, c->rec, &c->ss);
	if (rc != NSR_OK)
		return rc;
	make_groups(c);
	return 1;
}

/* mmdb_ss_next - next matching save set row. */
int mmdb_ss_next(struct mmdb_cursor *c, struct mmdb_ss_row *row)
{
	int rc;

	if (c->is_vol)
		return NSR_ERR_INVAL;
	for (;;) {
		while (c->gpos < c->ngroups) {
			rc = fill_row(c, &c->groups[c->gpos++], row);
			if (rc != NSR_OK)
				return rc;
			if (row_match(c, row))
				return 1;
		}
		rc = load_next_ss(c);
		if (rc <= 0)
			return rc;
	}
}

/* mmdb_vol_next - next matching volume. */
int mmdb_vol_next(struct mmdb_cursor *c, struct mmdb_volume *vol)
{
	struct mmdb_ss_row *row;
	int rc;

	if (!c->is_vol)
		return NSR_ERR_INVAL;
	row = calloc(1, sizeof(*row));
	if (!row)
		return NSR_ERR_NOMEM;
	row->has_volume = 1;
	for (;;) {
		const uint8_t *k, *val;
		size_t kl, vl;

		rc = next_entry(c, &k, &kl, &val, &vl);
		if (rc <= 0)
			break;
		if (c->plan == MMDB_PLAN_POOL) {
			const uint8_t *nul = memchr(k, 0, kl);
			char name[MMDB_VOLNAME_MAX + 1];
			size_t nl;

			rc = NSR_ERR_CORRUPT;
			if (!nul)
				break;
			nl = kl - (size_t)(nul + 1 - k);
			if (nl == 0 || nl > MMDB_VOLNAME_MAX)
				break;
			memcpy(name, nul + 1, nl);
			name[nl] = '\0';
			rc = mmdb_bt_get(c->v, c->db->roots[T_VOL], name, nl,
					 &val, &vl);
			if (rc == NSR_ERR_NOTFOUND)
				rc = NSR_ERR_CORRUPT;
			if (rc != NSR_OK)
				break;
		}
		rc = NSR_ERR_CORRUPT;
		if (vl < 4)
			break;
		rc = mmdb_vol_decode(val + 4, vl - 4, &row->vol);
		if (rc != NSR_OK)
			break;
		if (row_match(c, row)) {
			*vol = row->vol;
			rc = 1;
			break;
		}
	}
	free(row);
	return rc;
}
