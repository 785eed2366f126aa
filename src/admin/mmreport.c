/*
 * mmreport.c - mminfo report layouts and export formats (mmreport.h).
 *
 * Owns turning media database rows into the text mminfo prints: the
 * column model (attribute, width, title, alignment), value formatting
 * (dates, scaled sizes, flag letters), the built-in layouts, the -S dump
 * and the CSV/JSON exports.  Values come out of rows through one function
 * per record kind, so every layout and export formats them alike.
 */
#include "nsr/compat.h"

#include <ctype.h>
#include <time.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/mmdb.h"
#include "nsr/mmreport.h"

/* Columns that are not mmdb attributes (built-in layouts only). */
enum {
	P_DATE = MMDB_A_COUNT,	/* savetime, date only */
	P_TIME,			/* savetime, time of day only */
	P_FILE,			/* first tape file of the row's fragment */
	P_RECORD		/* first record */
};

#define MAX_COLS 64
#define WIDE_TIME 22		/* time columns this wide show the clock */
#define LONG_SSID 53		/* ssid columns this wide show the long id */

struct col {
	int attr;
	int width;
	int explicit_width;
	const char *title;
};

struct nsr_mmreport {
	enum nsr_mmreport_layout layout;
	struct col cols[MAX_COLS];
	size_t ncols;
	char sep;		/* -xc<sep>; 0 = aligned text */
	int json;		/* -xj */
	int have_last;		/* SUPER: what the previous row was */
	uint32_t last_ssid, last_cloneid;
};

/* Value kinds, deciding alignment and export form. */
enum kind { K_STR, K_NUM, K_SIZE, K_TIME, K_BOOL, K_PCT };

struct cell {
	enum kind kind;
	long long num;		/* K_NUM, K_SIZE, K_TIME, K_BOOL, K_PCT */
	const char *str;	/* K_STR */
	char tmp[128];		/* storage for built strings */
};

/* ---- value extraction ---- */

/* hex - 16 bytes as 32 lowercase hex digits into out (>= 33 bytes). */
static void hex(const uint8_t id[16], char *out)
{
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", id[i]);
}

/* set_str - a string cell. */
static void set_str(struct cell *c, const char *s)
{
	c->kind = K_STR;
	c->str = s;
}

/* set_num - a number-like cell. */
static void set_num(struct cell *c, enum kind k, long long n)
{
	c->kind = k;
	c->num = n;
}

/* letters - flag letters of bits (bit i <-> letters[i]) into c->tmp. */
static void letters(struct cell *c, uint32_t bits, const char *l)
{
	size_t n = 0;

	for (size_t i = 0; l[i] && n + 1 < sizeof(c->tmp); i++)
		if (bits & (1u << i))
			c->tmp[n++] = l[i];
	c->tmp[n] = '\0';
	set_str(c, c->tmp);
}

/* vol_cell - a volume attribute. */
static void vol_cell(int attr, const struct mmdb_volume *v, struct cell *c)
{
	switch (attr) {
	case MMDB_A_VOLUME: set_str(c, v->name); break;
	case MMDB_A_VOLID: hex(v->volid, c->tmp); set_str(c, c->tmp); break;
	case MMDB_A_TYPE: set_str(c, v->type); break;
	case MMDB_A_FAMILY: set_str(c, mmdb_volume_family(v->type)); break;
	case MMDB_A_POOL: set_str(c, v->pool); break;
	case MMDB_A_LOCATION: set_str(c, v->location); break;
	case MMDB_A_DEVICE: set_str(c, v->device); break;
	case MMDB_A_WRITTEN: set_num(c, K_SIZE, (long long)v->written); break;
	case MMDB_A_READ: set_num(c, K_SIZE, (long long)v->read); break;
	case MMDB_A_CAPACITY: set_num(c, K_SIZE, (long long)v->capacity); break;
	case MMDB_A_PCTUSED:
		set_num(c, K_PCT, (v->flags & MMDB_VOL_FULL) ? -1 :
			(long long)mmdb_volume_pctused(v));
		break;
	case MMDB_A_VOLRETENT: set_num(c, K_TIME, v->volretent); break;
	case MMDB_A_OLABEL: set_num(c, K_TIME, v->olabel); break;
	case MMDB_A_LABELED: set_num(c, K_TIME, v->labeled); break;
	case MMDB_A_MOUNTS: set_num(c, K_NUM, v->mounts); break;
	case MMDB_A_RECYCLED: set_num(c, K_NUM, v->recycled); break;
	case MMDB_A_VOLBLOCKSIZE: set_num(c, K_NUM, v->block_size); break;
	case MMDB_A_NEXTFILE: set_num(c, K_NUM, v->next_file); break;
	case MMDB_A_NEXTREC:
		set_num(c, K_NUM, (long long)v->next_record);
		break;
	case MMDB_A_STATE: {
		int e = !!(v->flags & MMDB_VOL_RECYCLABLE);
		int m = !!(v->flags & MMDB_VOL_MANUAL);

		set_str(c, e && m ? "X" : e ? "E" : m ? "M" : "");
		break;
	}
	case MMDB_A_FULL:
		set_num(c, K_BOOL, !!(v->flags & MMDB_VOL_FULL));
		break;
	case MMDB_A_RECYCLABLE:
		set_num(c, K_BOOL, !!(v->flags & MMDB_VOL_RECYCLABLE));
		break;
	case MMDB_A_READONLY:
		set_num(c, K_BOOL, !!(v->flags & MMDB_VOL_READONLY));
		break;
	case MMDB_A_MANUAL:
		set_num(c, K_BOOL, !!(v->flags & MMDB_VOL_MANUAL));
		break;
	default: set_str(c, ""); break;
	}
}

/* long_ssid - longid, ssid and cloneid as six 8-digit hex groups. */
static void long_ssid(const struct mmdb_ss_row *row, struct cell *c)
{
	char h[33];

	hex(row->ss.longid, h);
	snprintf(c->tmp, sizeof(c->tmp), "%.8s-%.8s-%.8s-%.8s-%08x-%08x",
		 h, h + 8, h + 16, h + 24, (unsigned)row->ss.ssid,
		 (unsigned)row->clone.cloneid);
	set_str(c, c->tmp);
}

/* ss_flag - a save set flag attribute. */
static long long ss_flag(int attr, const struct mmdb_ss_row *row)
{
	uint32_t f = row->ss.flags;

	switch (attr) {
	case MMDB_A_INCOMPLETE:
		return !!(f & MMDB_SS_INCOMPLETE) ||
		       !!(row->clone.flags & MMDB_CLONE_INCOMPLETE);
	case MMDB_A_SUSPECT:
		return !!(f & MMDB_SS_SUSPECT) ||
		       !!(row->clone.flags & MMDB_CLONE_SUSPECT);
	case MMDB_A_SSRECYCLE: return !!(f & MMDB_SS_RECYCLABLE);
	case MMDB_A_BROWSABLE: return !!(f & MMDB_SS_BROWSABLE);
	case MMDB_A_RECOVERABLE: return !!(f & MMDB_SS_RECOVERABLE);
	case MMDB_A_INPROGRESS: return !!(f & MMDB_SS_INPROGRESS);
	case MMDB_A_COMPLETE: return !!(f & MMDB_SS_FINISHED);
	case MMDB_A_ABORTED:
		return !!(f & MMDB_SS_ABORTED) ||
		       !!(row->clone.flags & MMDB_CLONE_ABORTED);
	default: return 0;
	}
}

/* row_cell - any column of a save set row. */
static void row_cell(const struct col *col, const struct mmdb_ss_row *row,
		     struct cell *c)
{
	const struct mmdb_saveset *s = &row->ss;
	int attr = col->attr;

	if (attr < MMDB_A_COUNT && mmdb_attrs[attr].scope == MMDB_S_VOLUME &&
	    attr != MMDB_A_POOL) {
		if (row->has_volume)
			vol_cell(attr, &row->vol, c);
		else if (mmdb_attrs[attr].type == MMDB_T_FLAG)
			set_num(c, K_BOOL, 0);
		else
			set_str(c, "");
		return;
	}
	switch (attr) {
	case P_DATE: case P_TIME: set_num(c, K_TIME, s->savetime); break;
	case P_FILE: set_num(c, K_NUM, row->first_file); break;
	case P_RECORD: set_num(c, K_NUM, (long long)row->first_record); break;
	case MMDB_A_SSID:
		if (col->width >= LONG_SSID)
			long_ssid(row, c);
		else
			set_num(c, K_NUM, s->ssid);
		break;
	case MMDB_A_CLONEID: set_num(c, K_NUM, row->clone.cloneid); break;
	case MMDB_A_NAME: set_str(c, s->name); break;
	case MMDB_A_CLIENT: set_str(c, s->client); break;
	case MMDB_A_POOL: set_str(c, s->pool); break;
	case MMDB_A_GROUP: set_str(c, s->group); break;
	case MMDB_A_LEVEL: set_str(c, nsr_level_name(s->level)); break;
	case MMDB_A_SAVETIME: set_num(c, K_TIME, s->savetime); break;
	case MMDB_A_NSAVETIME: set_num(c, K_NUM, s->savetime); break;
	case MMDB_A_SSCREATE: set_num(c, K_TIME, s->sscreate); break;
	case MMDB_A_SSCOMP: set_num(c, K_TIME, s->sscomp); break;
	case MMDB_A_SSBROWSE: set_num(c, K_TIME, s->ssbrowse); break;
	case MMDB_A_SSRETENT: set_num(c, K_TIME, s->ssretent); break;
	case MMDB_A_ANCHOR: set_num(c, K_TIME, s->anchor_time); break;
	case MMDB_A_CLRETENT: set_num(c, K_TIME, row->clone.clretent); break;
	case MMDB_A_CLTIME: set_num(c, K_TIME, row->clone.clone_time); break;
	case MMDB_A_TOTALSIZE:
		set_num(c, K_SIZE, (long long)s->totalsize);
		break;
	case MMDB_A_SUMSIZE: set_num(c, K_SIZE, (long long)row->sumsize); break;
	case MMDB_A_NFILES: set_num(c, K_NUM, (long long)s->nfiles); break;
	case MMDB_A_PSSID: set_num(c, K_NUM, s->pssid); break;
	case MMDB_A_COPIES: set_num(c, K_NUM, row->copies); break;
	case MMDB_A_SSFLAGS:
		mmdb_ss_flags_str(s->flags, c->tmp, sizeof(c->tmp));
		set_str(c, c->tmp);
		break;
	case MMDB_A_SUMFLAGS:
		mmdb_sumflags_str(row, c->tmp, sizeof(c->tmp));
		set_str(c, c->tmp);
		break;
	case MMDB_A_CLFLAGS: letters(c, row->clone.flags, "iaso"); break;
	case MMDB_A_FRAGFLAGS: letters(c, row->frag_flags, "hmtc"); break;
	default:
		if (attr < MMDB_A_COUNT &&
		    mmdb_attrs[attr].type == MMDB_T_FLAG)
			set_num(c, K_BOOL, ss_flag(attr, row));
		else
			set_str(c, "");
		break;
	}
}

/* ---- formatting ---- */

/* nsr_mmreport_size - bytes scaled to at most four digits. */
int nsr_mmreport_size(unsigned long long bytes, int min_unit,
		      struct nsr_buf *out)
{
	static const char *const units[] = { "B", "KB", "MB", "GB", "TB",
					     "PB", "EB" };
	unsigned long long v = bytes;
	int u = 0;

	for (; u < min_unit; u++)
		v = v / 1024 + (v % 1024 >= 512);
	while (v >= 10000 && u < 6) {
		v = v / 1024 + (v % 1024 >= 512);
		u++;
	}
	return nsr_buf_addf(out, "%llu %s", v, units[u]);
}

/* fmt_time - date, date+time or time of day; "undef" for 0. */
static int fmt_time(long long t, int attr, int width, struct nsr_buf *out)
{
	time_t tt = (time_t)t;
	struct tm tm;
	char s[64];
	const char *f;

	if (t == 0)
		return nsr_buf_addstr(out, "undef");
	if (!localtime_r(&tt, &tm))
		return nsr_buf_addf(out, "%lld", t);
	if (attr == P_TIME)
		f = "%H:%M:%S";
	else if (attr == P_DATE || width < WIDE_TIME)
		f = "%m/%d/%y";
	else
		f = "%m/%d/%y %I:%M:%S %p";
	strftime(s, sizeof(s), f, &tm);
	return nsr_buf_addstr(out, s);
}

/* fmt_cell - a cell as report text. */
static int fmt_cell(const struct col *col, const struct cell *c, int min_unit,
		    struct nsr_buf *out)
{
	switch (c->kind) {
	case K_STR:
		return nsr_buf_addstr(out, c->str);
	case K_NUM:
		return nsr_buf_addf(out, "%lld", c->num);
	case K_SIZE:
		return nsr_mmreport_size((unsigned long long)c->num, min_unit,
					 out);
	case K_TIME:
		return fmt_time(c->num, col->attr, col->width, out);
	case K_BOOL:
		return nsr_buf_addstr(out, c->num ? "yes" : "no");
	default: /* K_PCT */
		if (c->num < 0)
			return nsr_buf_addstr(out, "full");
		return nsr_buf_addf(out, "%lld%%", c->num);
	}
}

/* right_aligned - numbers and sizes line up on the right. */
static int right_aligned(const struct col *col)
{
	enum mmdb_attr_type t;

	if (col->attr == P_FILE || col->attr == P_RECORD)
		return 1;
	if (col->attr >= MMDB_A_COUNT || col->attr == MMDB_A_LEVEL)
		return 0;
	if (col->attr == MMDB_A_SSID && col->width >= LONG_SSID)
		return 0;
	t = mmdb_attrs[col->attr].type;
	/* Volume dates line up right, as "undef" does in mminfo -m. */
	return t == MMDB_T_NUMBER || (t == MMDB_T_TIME &&
				      mmdb_attrs[col->attr].scope ==
				      MMDB_S_VOLUME);
}

/* add_field - one padded/cut field (last: no padding, cut only if the
 * width was explicit). */
static int add_field(const struct col *col, const char *s, size_t len,
		     int last, struct nsr_buf *out)
{
	size_t w = (size_t)col->width;
	int rc = NSR_OK;

	if (len > w && (!last || col->explicit_width))
		len = w;
	if (last && !right_aligned(col))
		return nsr_buf_add(out, s, len);
	if (right_aligned(col) && len < w)
		rc = nsr_buf_addf(out, "%*s", (int)(w - len), "");
	if (rc == NSR_OK)
		rc = nsr_buf_add(out, s, len);
	if (rc == NSR_OK && !right_aligned(col) && len < w)
		rc = nsr_buf_addf(out, "%*s", (int)(w - len), "");
	return rc;
}

/* add_csv - one exported value, quoted if needed. */
static int add_csv(char sep, const char *s, struct nsr_buf *out)
{
	int rc;

	if (!strchr(s, sep) && !strchr(s, '"') && !strchr(s, '\n'))
		return nsr_buf_addstr(out, s);
	rc = nsr_buf_addch(out, '"');
	for (; *s && rc == NSR_OK; s++)
		rc = *s == '"' ? nsr_buf_addstr(out, "\"\"")
			       : nsr_buf_addch(out, *s);
	if (rc == NSR_OK)
		rc = nsr_buf_addch(out, '"');
	return rc;
}

/* col_key - the JSON key of a column. */
static const char *col_key(const struct col *col)
{
	static const char *const pseudo[] = { "date", "time", "file",
					      "record" };

	if (col->attr >= MMDB_A_COUNT)
		return pseudo[col->attr - MMDB_A_COUNT];
	return mmdb_attrs[col->attr].name;
}

/* add_json_cell - one "key":value pair. */
static int add_json_cell(const struct col *col, const struct cell *c,
			 struct nsr_buf *out)
{
	int rc = nsr_buf_add_json_str(out, col_key(col));

	if (rc == NSR_OK)
		rc = nsr_buf_addch(out, ':');
	if (rc != NSR_OK)
		return rc;
	switch (c->kind) {
	case K_STR:
		return nsr_buf_add_json_str(out, c->str);
	case K_BOOL:
		return nsr_buf_addstr(out, c->num ? "true" : "false");
	case K_PCT:
		return c->num < 0 ? nsr_buf_addstr(out, "100")
				  : nsr_buf_addf(out, "%lld", c->num);
	default:
		return nsr_buf_addf(out, "%lld", c->num);
	}
}

/* emit - one row of cells in the report's format. */
static int emit(struct nsr_mmreport *r, struct cell *cells, int min_unit,
		struct nsr_buf *out)
{
	struct nsr_buf v;
	int rc = NSR_OK;

	nsr_buf_init(&v, 0);
	if (r->json)
		rc = nsr_buf_addch(out, '{');
	for (size_t i = 0; i < r->ncols && rc == NSR_OK; i++) {
		const struct col *col = &r->cols[i];

		if (r->json) {
			if (i)
				rc = nsr_buf_addch(out, ',');
			if (rc == NSR_OK)
				rc = add_json_cell(col, &cells[i], out);
			continue;
		}
		nsr_buf_reset(&v);
		rc = fmt_cell(col, &cells[i], min_unit, &v);
		if (rc == NSR_OK && i)
			rc = nsr_buf_addch(out, r->sep ? r->sep : ' ');
		if (rc != NSR_OK)
			break;
		if (r->sep)
			rc = add_csv(r->sep, v.data, out);
		else
			rc = add_field(col, v.data, v.len, i + 1 == r->ncols,
				       out);
	}
	if (rc == NSR_OK && r->json)
		rc = nsr_buf_addch(out, '}');
	if (rc == NSR_OK)
		rc = nsr_buf_addch(out, '\n');
	nsr_buf_release(&v);
	return rc;
}

/* ---- layouts ---- */

/* add_col - append a column (title NULL = the attribute's). */
static int add_col(struct nsr_mmreport *r, int attr, int width, int expl,
		   const char *title)
{
	struct col *c;

	if (r->ncols == MAX_COLS)
		return NSR_ERR_TOOBIG;
	c = &r->cols[r->ncols++];
	c->attr = attr;
	c->width = width;
	c->explicit_width = expl;
	c->title = title ? title : mmdb_attrs[attr].title;
	return NSR_OK;
}

struct preset {
	int attr;
	int width;
	const char *title;
};

static const struct preset p_default[] = {
	{ MMDB_A_VOLUME, 14, "volume" }, { MMDB_A_CLIENT, 17, "client" },
	{ P_DATE, 8, "date" }, { MMDB_A_TOTALSIZE, 8, "size" },
	{ MMDB_A_LEVEL, 6, "level" }, { MMDB_A_NAME, 0, "name" },
};

static const struct preset p_verbose[] = {
	{ MMDB_A_VOLUME, 14, "volume" }, { MMDB_A_TYPE, 11, "type" },
	{ MMDB_A_CLIENT, 17, "client" }, { P_DATE, 8, "date" },
	{ P_TIME, 8, "time" }, { MMDB_A_TOTALSIZE, 8, "size" },
	{ MMDB_A_SSID, 10, "ssid" }, { MMDB_A_SUMFLAGS, 3, "fl" },
	{ MMDB_A_LEVEL, 6, "lvl" }, { MMDB_A_NAME, 0, "name" },
};

static const struct preset p_frags[] = {
	{ MMDB_A_VOLUME, 14, "volume" }, { MMDB_A_CLIENT, 17, "client" },
	{ P_DATE, 8, "date" }, { P_TIME, 8, "time" },
	{ MMDB_A_SUMSIZE, 8, "size" }, { MMDB_A_SSID, 10, "ssid" },
	{ MMDB_A_CLONEID, 10, "clone id" }, { MMDB_A_SUMFLAGS, 3, "fl" },
	{ MMDB_A_LEVEL, 6, "lvl" }, { P_FILE, 6, "file" },
	{ P_RECORD, 8, "record" }, { MMDB_A_VOLID, 32, "volid" },
	{ MMDB_A_NAME, 0, "name" },
};

static const struct preset p_media[] = {
	{ MMDB_A_STATE, 5, "state" }, { MMDB_A_VOLUME, 20, "volume" },
	{ MMDB_A_WRITTEN, 8, "written" }, { MMDB_A_PCTUSED, 4, "(%)" },
	{ MMDB_A_VOLRETENT, 8, "expires" }, { MMDB_A_READ, 8, "read" },
	{ MMDB_A_MOUNTS, 6, "mounts" }, { MMDB_A_CAPACITY, 8, "capacity" },
};

static const struct preset p_boot[] = {
	{ P_DATE, 8, "date" }, { P_TIME, 8, "time" },
	{ MMDB_A_LEVEL, 6, "level" }, { MMDB_A_SSID, 10, "ssid" },
	{ P_FILE, 6, "file" }, { P_RECORD, 8, "record" },
	{ MMDB_A_VOLUME, 0, "volume" },
};

/* use_preset - load a built-in column set. */
static int use_preset(struct nsr_mmreport *r, const struct preset *p,
		      size_t n)
{
	int rc = NSR_OK;

	for (size_t i = 0; i < n && rc == NSR_OK; i++)
		rc = add_col(r, p[i].attr, p[i].width, 0, p[i].title);
	return rc;
}

/* qerr - fill a query-style error. */
static int qerr(struct nsr_mmquery_error *err, size_t off, size_t len,
		const char *fmt, ...) NSR_PRINTF(4, 5);

static int qerr(struct nsr_mmquery_error *err, size_t off, size_t len,
		const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return NSR_ERR_SYNTAX;
	err->offset = off;
	err->len = len;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return NSR_ERR_SYNTAX;
}

/* unknown_attr - the error for a name not in mmdb_attrs[]. */
static int unknown_attr(struct nsr_mmquery_error *err, size_t off,
			const char *name, size_t len)
{
	struct nsr_buf b;
	int rc;

	nsr_buf_init(&b, 0);
	for (size_t i = 0; i < MMDB_A_COUNT; i++)
		nsr_buf_addf(&b, "%s%s", i ? ", " : "", mmdb_attrs[i].name);
	rc = qerr(err, off, len, "unknown attribute '%.*s' (known: %s)",
		  (int)len, name, b.data);
	nsr_buf_release(&b);
	return rc;
}

/* parse_width - "(N)" or "(N/M)" at s[*i]; the larger number counts. */
static int parse_width(const char *s, size_t *i, int *width,
		       struct nsr_mmquery_error *err)
{
	size_t start = *i;
	long w = 0;

	(*i)++;
	for (int part = 0; part < 2; part++) {
		long n = 0;

		if (!isdigit((unsigned char)s[*i]))
			return qerr(err, *i, 1, "expected a column width");
		while (isdigit((unsigned char)s[*i])) {
			n = n * 10 + (s[*i] - '0');
			if (n > 4096)
				return qerr(err, start, *i - start + 1,
					    "column width too large (at most "
					    "4096)");
			(*i)++;
		}
		w = NSR_MAX(w, n);
		if (s[*i] != '/')
			break;
		(*i)++;
	}
	if (s[*i] != ')')
		return qerr(err, *i, 1, "expected ')' after the width");
	(*i)++;
	if (w == 0)
		return qerr(err, start, *i - start, "column width must be at "
			    "least 1");
	*width = (int)w;
	return NSR_OK;
}

/* parse_spec - a -r reportspec into columns. */
static int parse_spec(struct nsr_mmreport *r, const char *s,
		      struct nsr_mmquery_error *err)
{
	size_t i = 0;

	if (strnlen(s, NSR_MMQUERY_MAX_TEXT + 1) > NSR_MMQUERY_MAX_TEXT)
		return qerr(err, 0, 0, "report spec too long");
	for (;;) {
		const struct mmdb_attr_info *a;
		size_t start, end;
		char name[64];
		int width = 0, expl = 0, rc;

		while (s[i] == ' ' || s[i] == '\t')
			i++;
		start = i;
		while (s[i] && s[i] != ',' && s[i] != '(')
			i++;
		end = i;
		while (end > start && (s[end - 1] == ' ' || s[end - 1] == '\t'))
			end--;
		if (end == start)
			return qerr(err, start, 0,
				    "expected an attribute name");
		if (end - start >= sizeof(name))
			return unknown_attr(err, start, s + start, end - start);
		memcpy(name, s + start, end - start);
		name[end - start] = '\0';
		a = mmdb_attr_lookup(name);
		if (!a)
			return unknown_attr(err, start, name, end - start);
		if (s[i] == '(') {
			expl = 1;
			rc = parse_width(s, &i, &width, err);
			if (rc != NSR_OK)
				return rc;
			while (s[i] == ' ' || s[i] == '\t')
				i++;
		}
		if (r->ncols == MAX_COLS)
			return qerr(err, start, end - start, "too many columns "
				    "(at most %d)", MAX_COLS);
		/* Without a width, the title must fit. */
		if (!width)
			width = NSR_MAX(a->width, (int)strlen(a->title));
		rc = add_col(r, a->id, width, expl, NULL);
		if (rc != NSR_OK)
			return rc;
		if (s[i] == '\0')
			return NSR_OK;
		if (s[i] != ',')
			return qerr(err, i, 1, "expected ',' between columns");
		i++;
	}
}

/* nsr_mmreport_new - a report for a layout or a reportspec. */
int nsr_mmreport_new(enum nsr_mmreport_layout layout, const char *spec,
		     struct nsr_mmreport **out, struct nsr_mmquery_error *err)
{
	struct nsr_mmreport *r = calloc(1, sizeof(*r));
	int rc;

	*out = NULL;
	if (!r)
		return NSR_ERR_NOMEM;
	r->layout = layout;
	switch (layout) {
	case NSR_MMREPORT_DEFAULT:
		rc = use_preset(r, p_default, NSR_ARRAY_SIZE(p_default));
		break;
	case NSR_MMREPORT_VERBOSE:
		rc = use_preset(r, p_verbose, NSR_ARRAY_SIZE(p_verbose));
		break;
	case NSR_MMREPORT_FRAGS:
		rc = use_preset(r, p_frags, NSR_ARRAY_SIZE(p_frags));
		break;
	case NSR_MMREPORT_MEDIA:
		rc = use_preset(r, p_media, NSR_ARRAY_SIZE(p_media));
		break;
	case NSR_MMREPORT_BOOT:
		rc = use_preset(r, p_boot, NSR_ARRAY_SIZE(p_boot));
		break;
	case NSR_MMREPORT_SUPER:
		rc = NSR_OK;
		break;
	case NSR_MMREPORT_CUSTOM:
		rc = spec ? parse_spec(r, spec, err)
			  : qerr(err, 0, 0, "missing report spec");
		break;
	default:
		rc = NSR_ERR_INVAL;
		break;
	}
	if (rc != NSR_OK) {
		free(r);
		return rc;
	}
	*out = r;
	return NSR_OK;
}

/* nsr_mmreport_free - free a report. */
void nsr_mmreport_free(struct nsr_mmreport *r)
{
	free(r);
}

/* nsr_mmreport_set_export - -xc<sep> or -xj. */
int nsr_mmreport_set_export(struct nsr_mmreport *r, const char *x,
			    struct nsr_mmquery_error *err)
{
	if (r->layout == NSR_MMREPORT_SUPER)
		return qerr(err, 0, 0, "-x does not apply to the -S report");
	if (x[0] == 'c' && x[1] && !x[2] && x[1] != '"' && x[1] != '\n') {
		r->sep = x[1];
		r->json = 0;
		return NSR_OK;
	}
	if (x[0] == 'j' && !x[1]) {
		r->json = 1;
		r->sep = 0;
		return NSR_OK;
	}
	return qerr(err, 0, strlen(x), "unknown export format '%s' (use "
		    "c<separator>, e.g. -xc, or j for JSON lines)", x);
}

/* nsr_mmreport_is_volume - rows are volumes. */
int nsr_mmreport_is_volume(const struct nsr_mmreport *r)
{
	int vol = 0;

	if (r->layout == NSR_MMREPORT_MEDIA)
		return 1;
	if (r->layout != NSR_MMREPORT_CUSTOM)
		return 0;
	/* Volumes have a pool too; it alone does not make a volume report. */
	for (size_t i = 0; i < r->ncols; i++) {
		int a = r->cols[i].attr;

		if (a == MMDB_A_POOL)
			continue;
		if (a >= MMDB_A_COUNT || mmdb_attrs[a].scope != MMDB_S_VOLUME)
			return 0;
		vol = 1;
	}
	return vol;
}

/* nsr_mmreport_header - the title line. */
int nsr_mmreport_header(struct nsr_mmreport *r, struct nsr_buf *out)
{
	int rc = NSR_OK;

	if (r->json || r->layout == NSR_MMREPORT_SUPER)
		return NSR_OK;
	for (size_t i = 0; i < r->ncols && rc == NSR_OK; i++) {
		const char *t = r->cols[i].title;

		if (i)
			rc = nsr_buf_addch(out, r->sep ? r->sep : ' ');
		if (rc != NSR_OK)
			break;
		if (r->sep)
			rc = add_csv(r->sep, t, out);
		else
			rc = add_field(&r->cols[i], t, strlen(t),
				       i + 1 == r->ncols, out);
	}
	/* Titles never end in blanks. */
	while (out->len && out->data[out->len - 1] == ' ')
		nsr_buf_setlen(out, out->len - 1);
	if (rc == NSR_OK)
		rc = nsr_buf_addch(out, '\n');
	return rc;
}

/* super_time - "<label>=MM/DD/YY HH:MM:SS AM" or "<label>=undef"; label
 * carries its own leading separator. */
static int super_time(struct nsr_buf *out, const char *label, int64_t t)
{
	int rc = nsr_buf_addf(out, "%s=", label);

	if (rc == NSR_OK)
		rc = fmt_time(t, MMDB_A_SAVETIME, WIDE_TIME, out);
	return rc;
}

/* super_row - the -S dump of one row. */
static int super_row(struct nsr_mmreport *r, const struct mmdb_ss_row *row,
		     struct nsr_buf *out)
{
	const struct mmdb_saveset *s = &row->ss;
	char fl[64], h[33];
	int rc = NSR_OK;

	if (!r->have_last || r->last_ssid != s->ssid) {
		mmdb_ss_flags_str(s->flags, fl, sizeof(fl));
		rc = nsr_buf_addf(out, "ssid=%u savetime=", (unsigned)s->ssid);
		if (rc == NSR_OK)
			rc = fmt_time(s->savetime, MMDB_A_SAVETIME, WIDE_TIME,
				      out);
		if (rc == NSR_OK)
			rc = nsr_buf_addf(out, " (%lld) %s:%s\n\tlevel=%s "
					  "sflags=%s size=%llu files=%llu "
					  "pool=%s group=%s\n",
					  (long long)s->savetime, s->client,
					  s->name, nsr_level_name(s->level),
					  fl, (unsigned long long)s->totalsize,
					  (unsigned long long)s->nfiles,
					  s->pool, s->group);
		if (rc == NSR_OK)
			rc = super_time(out, "\tcreate", s->sscreate);
		if (rc == NSR_OK)
			rc = super_time(out, " complete", s->sscomp);
		if (rc == NSR_OK)
			rc = super_time(out, " browse", s->ssbrowse);
		if (rc == NSR_OK)
			rc = super_time(out, " retent", s->ssretent);
		if (rc == NSR_OK && (s->pssid || s->ndependents)) {
			rc = nsr_buf_addf(out, "\n\tpssid=%u dependents=",
					  (unsigned)s->pssid);
			for (uint32_t i = 0; i < s->ndependents &&
			     i < MMDB_PSS_MAX && rc == NSR_OK; i++)
				rc = nsr_buf_addf(out, "%s%u", i ? "," : "",
						  (unsigned)s->dependents[i]);
		}
		if (rc == NSR_OK)
			rc = nsr_buf_addch(out, '\n');
		r->have_last = 1;
		r->last_ssid = s->ssid;
		r->last_cloneid =
			row->clone.cloneid + 1; /* force a clone line */
	}
	if (rc == NSR_OK && r->last_cloneid != row->clone.cloneid) {
		struct cell c;

		letters(&c, row->clone.flags, "iaso");
		rc = nsr_buf_addf(out,
				  "\tclone #%u:", (unsigned)row->clone.cloneid);
		if (rc == NSR_OK)
			rc = super_time(out, " time", row->clone.clone_time);
		if (rc == NSR_OK)
			rc = super_time(out, " retent", row->clone.clretent);
		if (rc == NSR_OK)
			rc = nsr_buf_addf(out, " flags=%s copies=%u\n", c.str,
					  (unsigned)row->copies);
		r->last_cloneid = row->clone.cloneid;
	}
	if (rc == NSR_OK && row->has_volume) {
		struct cell c;

		letters(&c, row->frag_flags, "hmtc");
		hex(row->vol.volid, h);
		rc = nsr_buf_addf(out, "\t\tvolume=%s volid=%s file=%u "
				  "record=%llu size=%llu flags=%s\n",
				  row->vol.name, h, (unsigned)row->first_file,
				  (unsigned long long)row->first_record,
				  (unsigned long long)row->sumsize, c.str);
	}
	return rc;
}

/* nsr_mmreport_row - one save set row. */
int nsr_mmreport_row(struct nsr_mmreport *r, const struct mmdb_ss_row *row,
		     struct nsr_buf *out)
{
	struct cell cells[MAX_COLS];

	if (r->layout == NSR_MMREPORT_SUPER)
		return super_row(r, row, out);
	for (size_t i = 0; i < r->ncols; i++) {
		memset(&cells[i], 0, sizeof(cells[i]));
		row_cell(&r->cols[i], row, &cells[i]);
	}
	return emit(r, cells, 0, out);
}

/* nsr_mmreport_volume - one volume row. */
int nsr_mmreport_volume(struct nsr_mmreport *r, const struct mmdb_volume *v,
			struct nsr_buf *out)
{
	struct cell cells[MAX_COLS];

	if (!nsr_mmreport_is_volume(r))
		return NSR_ERR_INVAL;
	for (size_t i = 0; i < r->ncols; i++) {
		memset(&cells[i], 0, sizeof(cells[i]));
		vol_cell(r->cols[i].attr, v, &cells[i]);
	}
	return emit(r, cells, 1, out);
}
