/*
 * info.c - nsrinfo's report: a client's file index contents, every save
 * set or those of one save time or one ssid, streamed from nsrindexd's
 * kept queries (IX_SAVESETS, then IX_QUERY/IX_PAGE per save set).
 */
#include "nsr/compat.h"

#include <time.h>

#include "nsr/asm.h"
#include "nsr/browse.h"
#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/index_clnt.h"

#include "browse_int.h"

/* The save sets of the client chosen for the report. */
struct info {
	const struct nsr_browse_info_opts *o;
	struct browse_ss *ss;
	size_t n, cap;
	size_t objects;
	char when[64];
};

/* info_ss - IX_SAVESETS visitor: keep the save sets the report wants. */
static int info_ss(void *ctx, const struct nsr_cfi_saveset *ss)
{
	struct info *in = ctx;

	if (in->o->savetime && ss->savetime != in->o->savetime)
		return 0;
	if (in->o->ssid && ss->ssid != in->o->ssid)
		return 0;
	if (in->n == in->cap) {
		size_t cap = in->cap ? 2 * in->cap : 16;
		struct browse_ss *v = realloc(in->ss, cap * sizeof(*v));

		if (!v)
			return NSR_ERR_NOMEM;
		in->ss = v;
		in->cap = cap;
	}
	in->ss[in->n].ssid = ss->ssid;
	in->ss[in->n].savetime = ss->savetime;
	in->n++;
	return 0;
}

/* info_entry - IX_QUERY visitor: one line per entry. */
static int info_entry(void *ctx, const struct nsr_cfi_saveset *ss,
		      const struct nsr_cfi_entry *e)
{
	struct info *in = ctx;
	FILE *f = in->o->out;

	if (in->o->name && strcmp(in->o->name, e->path) != 0)
		return 0;
	browse_date(ss->savetime, in->when, sizeof(in->when));
	fprintf(f, "%s%s, date=%" PRId64 " %s", e->path,
		e->type == NSR_ASM_DIR && strcmp(e->path, "/") ? "/" : "",
		ss->savetime, in->when);
	if (in->o->verbose)
		fprintf(f,
			", size=%" PRIu64 ", ssid=%" PRIu64 ", %s, mode=%04o",
			e->size, ss->ssid, browse_type_name(e->type),
			(unsigned)(e->mode & 07777));
	fputc('\n', f);
	in->objects++;
	return 0;
}

/* header - the first line, naming what is scanned. */
static void header(const struct nsr_browse_info_opts *o, char *when, size_t n)
{
	fprintf(o->out, "scanning client `%s' for ", o->client);
	if (o->ssid) {
		fprintf(o->out, "save set %" PRIu64, o->ssid);
	} else if (o->savetime) {
		browse_date(o->savetime, when, n);
		fprintf(o->out, "savetime %" PRId64 "(%s)", o->savetime, when);
	} else {
		fprintf(o->out, "all savetimes");
	}
	fprintf(o->out, " from the backup namespace\n");
}

/* nsr_browse_info - the nsrinfo report. */
int nsr_browse_info(const struct nsr_browse_info_opts *o, struct nsr_buf *err)
{
	struct nsr_ixclnt *ix = NULL;
	struct nsr_ixclnt_q q;
	struct info in;
	int rc;

	memset(&in, 0, sizeof(in));
	in.o = o;
	rc = nsr_ixclnt_open(o->server, &ix, err);
	if (rc)
		return rc;
	rc = nsr_ixclnt_savesets(ix, o->client, info_ss, &in);
	if (rc) {
		nsr_buf_addstr(err, rc == NSR_ERR_NOMEM
					    ? nsr_strerror(rc)
					    : nsr_ixclnt_errmsg(ix));
		goto out;
	}
	if (in.n == 0 && (o->savetime || o->ssid)) {
		rc = NSR_ERR_NOTFOUND;
		if (o->ssid)
			nsr_buf_addf(err,
				     "no save set %" PRIu64 " in the index of "
				     "client '%s' (mminfo -c %s lists its save "
				     "sets)",
				     o->ssid, o->client, o->client);
		else
			nsr_buf_addf(err,
				     "no save set of client '%s' has the save "
				     "time %" PRId64 " (mminfo -c %s -r "
				     "nsavetime lists them)",
				     o->client, o->savetime, o->client);
		goto out;
	}
	header(o, in.when, sizeof(in.when));
	memset(&q, 0, sizeof(q));
	q.client = o->client;
	q.kind = IX_Q_SAVESET;
	for (size_t i = 0; i < in.n && rc == NSR_OK; i++) {
		q.ssid = in.ss[i].ssid;
		rc = nsr_ixclnt_query(ix, &q, info_entry, &in);
		if (rc)
			nsr_buf_addstr(err, rc == NSR_ERR_NOMEM
						    ? nsr_strerror(rc)
						    : nsr_ixclnt_errmsg(ix));
	}
	if (rc == NSR_OK)
		fprintf(o->out, "%zu objects found\n", in.objects);
out:
	free(in.ss);
	nsr_ixclnt_close(ix);
	return rc;
}
