/*
 * res_rpc.c - nsrd's resource database over RPC (what nsradmin talks to).
 * Resources travel as nsradmin text; they are parsed, validated against
 * the schema and stored durably by resdb before the reply.  Attributes the
 * schema marks read-only (a device's mounted volume, ...) are set by the
 * server only: an update that changes one is refused.
 */
#include "nsr/compat.h"

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/log.h"
#include "nsr/xmalloc.h"
#include "nsrd.h"

/* parse_attrs - text -> resource, or a status naming the position. */
static struct nsr_res *parse_attrs(const char *text, nsr_status *st)
{
	struct nsr_res_error perr;
	struct nsr_res *r = NULL;
	struct nsr_buf msg;
	int rc;

	memset(&perr, 0, sizeof(perr));
	rc = nsr_res_parse_attrs(text, &r, &perr);
	if (rc == NSR_OK)
		return r;
	nsr_buf_init(&msg, 0);
	nsr_res_error_format(&perr, &msg);
	nsr_status_set(st, rc, "%s", msg.len ? msg.data : nsr_strerror(rc));
	nsr_buf_release(&msg);
	return NULL;
}

/* nsrd_res_find1 - the first resource of type (and name) or NULL. */
const struct nsr_res *nsrd_res_find1(struct nsrd *n, const char *type,
				     const char *name)
{
	return nsr_resdb_lookup(n->res, type, name);
}

/* nsrd_res_set_attr - server-side change of one attribute of a resource. */
int nsrd_res_set_attr(struct nsrd *n, const struct nsr_res *r, const char *attr,
		      const char *value)
{
	struct nsr_res *c = nsr_res_dup(r);
	struct nsr_buf why;
	char *id = nsr_xstrdup(nsr_res_id(r));
	int rc;

	nsr_buf_init(&why, 0);
	if (value && *value)
		rc = nsr_res_set1(c, attr, value);
	else
		rc = nsr_res_unset(c, attr);
	if (rc == NSR_OK || rc == NSR_ERR_NOTFOUND)
		rc = nsr_resdb_update(n->res, id, c, &why);
	n->res_gen++; /* admission rereads its limits */
	nsrd_admit_wake(n);
	if (rc)
		nsr_error("cannot set '%s' of resource %s: %s", attr, id,
			  why.len ? why.data : nsr_strerror(rc));
	nsr_buf_release(&why);
	nsr_res_free(c);
	free(id);
	return rc;
}

/* nsrd_server_attr_num - a numeric attribute of the NSR server resource. */
long long nsrd_server_attr_num(struct nsrd *n, const char *attr, long long dflt)
{
	const struct nsr_res *s = nsrd_res_find1(n, "NSR", NULL);
	const char *v = s ? nsr_res_get(s, attr) : NULL;

	return v && *v ? atoll(v) : dflt;
}

/* print_all - every resource matching q as text (with ids). */
static void print_all(struct nsrd *n, const struct nsr_res *q,
		      struct nsr_buf *out)
{
	struct nsr_res_print_opts po;

	memset(&po, 0, sizeof(po));
	po.hidden = 1;
	po.schema = nsr_resdb_schema(n->res);
	for (long i = nsr_resdb_find(n->res, q, 0); i >= 0;
	     i = nsr_resdb_find(n->res, q, (size_t)i + 1))
		nsr_res_print(nsr_resdb_at(n->res, (size_t)i), &po, out);
}

/* nsrd_res_query - RES_QUERY: the resources matching a query, as text. */
int nsrd_res_query(void *ctx, void *argp, void *resp, struct nsr_rpc_call *call)
{
	struct nsrd *n = ctx;
	res_query_args *a = argp;
	res_list_res *r = resp;
	struct nsr_res *q;
	struct nsr_buf out;
	long t;

	NSR_UNUSED(call);
	q = parse_attrs(a->query, &r->st);
	if (!q) {
		r->text = nsr_rpc_str("");
		return NSR_OK;
	}
	t = nsr_res_find(q, "type");
	for (size_t j = 0; t >= 0 && j < nsr_res_attr_nvalues(q, (size_t)t);
	     j++) {
		const char *v = nsr_res_attr_value(q, (size_t)t, j);

		if (nsr_res_schema_type(nsr_resdb_schema(n->res), v))
			continue;
		nsr_status_set(&r->st, NSR_ERR_INVAL, "there is no resource "
			       "type '%s'", v);
		r->text = nsr_rpc_str("");
		nsr_res_free(q);
		return NSR_OK;
	}
	nsr_buf_init(&out, 0);
	print_all(n, q, &out);
	r->text = nsr_buf_detach(&out, NULL);
	nsr_status_set(&r->st, NSR_OK, "%s", "");
	nsr_res_free(q);
	return NSR_OK;
}

/* same_values - attribute i of r has exactly the values old has for it. */
static int same_values(const struct nsr_res *r, size_t i,
		       const struct nsr_res *old)
{
	long j = old ? nsr_res_find(old, nsr_res_attr_name(r, i)) : -1;
	size_t n = nsr_res_attr_nvalues(r, i);

	if (j < 0)
		return n == 0;
	if (nsr_res_attr_nvalues(old, (size_t)j) != n)
		return 0;
	for (size_t k = 0; k < n; k++)
		if (strcmp(nsr_res_attr_value(r, i, k),
			   nsr_res_attr_value(old, (size_t)j, k)) != 0)
			return 0;
	return 1;
}

/* touches_readonly - the name of a server-only attribute r changes (from
 * old, which is NULL on create), or NULL.  Sending a whole resource back
 * unchanged is fine. */
static const char *touches_readonly(struct nsrd *n, const struct nsr_res *r,
				    const char *type, const struct nsr_res *old)
{
	const struct nsr_res_typedef *t =
		nsr_res_schema_type(nsr_resdb_schema(n->res), type);

	for (size_t i = 0; t && i < nsr_res_nattrs(r); i++) {
		const struct nsr_res_attrdef *ad =
			nsr_res_schema_attr(t, nsr_res_attr_name(r, i));

		if (ad && (ad->flags & NSR_RES_READONLY) &&
		    !same_values(r, i, old))
			return ad->name;
	}
	return NULL;
}

/* finish_change - reply with the stored resource. */
static void finish_change(struct nsrd *n, const char *id, res_change_res *r)
{
	const struct nsr_res *stored = nsr_resdb_get(n->res, id);
	struct nsr_res_print_opts po;
	struct nsr_buf out;

	memset(&po, 0, sizeof(po));
	po.hidden = 1;
	po.schema = nsr_resdb_schema(n->res);
	nsr_buf_init(&out, 0);
	if (stored)
		nsr_res_print(stored, &po, &out);
	r->text = nsr_buf_detach(&out, NULL);
	r->id = nsr_rpc_str(id);
	nsr_status_set(&r->st, NSR_OK, "%s", "");
}

/* attr_same - 1 if attribute name has the same value in a and b. */
static int attr_same(const struct nsr_res *a, const struct nsr_res *b,
		     const char *name)
{
	const char *x = nsr_res_get(a, name), *y = nsr_res_get(b, name);

	return (!x && !y) || (x && y && strcmp(x, y) == 0);
}

/* derive_device - NetWorker's rule for a device: when a change sets its
 * target or max sessions and leaves its max nsrmmd count as it was, the
 * count becomes max sessions / target sessions + 4 (res: the resource
 * after the change; old: before it, NULL for a new one). */
static void derive_device(struct nsr_res *res, const struct nsr_res *old)
{
	const char *type = nsr_res_type(res);
	const char *ts, *ms;
	long t, m;
	char v[32];

	if (!type || strcasecmp(type, "NSR device") != 0)
		return;
	if (old ? !attr_same(res, old, "max nsrmmd count") ||
		      (attr_same(res, old, "target sessions") &&
		       attr_same(res, old, "max sessions"))
		: nsr_res_get(res, "max nsrmmd count") != NULL ||
		      (!nsr_res_get(res, "target sessions") &&
		       !nsr_res_get(res, "max sessions")))
		return;
	ts = nsr_res_get(res, "target sessions");
	ms = nsr_res_get(res, "max sessions");
	t = ts && atol(ts) > 0 ? atol(ts) : 4;
	m = ms && atol(ms) > 0 ? atol(ms) : 32;
	snprintf(v, sizeof(v), "%ld", m / t + 4);
	nsr_res_set1(res, "max nsrmmd count", v);
}

/* nsrd_res_create - RES_CREATE: validate and store a new resource. */
int nsrd_res_create(void *ctx, void *argp, void *resp,
		    struct nsr_rpc_call *call)
{
	struct nsrd *n = ctx;
	res_text_args *a = argp;
	res_change_res *r = resp;
	struct nsr_res *res;
	const char *ro;
	struct nsr_buf why;
	char *id = NULL;
	int rc;

	r->id = nsr_rpc_str("");
	r->text = nsr_rpc_str("");
	res = parse_attrs(a->text, &r->st);
	if (!res)
		return NSR_OK;
	ro = touches_readonly(n, res,
			      nsr_res_type(res) ? nsr_res_type(res) : "", NULL);
	if (ro) {
		nsr_status_set(&r->st, NSR_ERR_READONLY,
			    "attribute '%s' is set by the server only", ro);
		nsr_res_free(res);
		return NSR_OK;
	}
	derive_device(res, NULL);
	nsr_buf_init(&why, 0);
	rc = nsr_resdb_create(n->res, res, &id, &why);
	if (rc) {
		nsr_status_set(&r->st, rc, "%s",
			       why.len ? why.data : nsr_strerror(rc));
	} else {
		free(r->id);
		free(r->text);
		finish_change(n, id, r);
		n->res_gen++;
		nsrd_admit_wake(n);
		nsr_info("created resource %s (%s: %s) for %s", id,
			 nsr_res_type(res) ? nsr_res_type(res) : "?",
			 nsr_res_get(res, "name") ? nsr_res_get(res, "name")
						  : "",
			 nsr_rpc_call_peer(call));
	}
	free(id);
	nsr_buf_release(&why);
	nsr_res_free(res);
	return NSR_OK;
}

/* nsrd_res_update - RES_UPDATE: merge attributes into a resource. */
int nsrd_res_update(void *ctx, void *argp, void *resp,
		    struct nsr_rpc_call *call)
{
	struct nsrd *n = ctx;
	res_text_args *a = argp;
	res_change_res *r = resp;
	const struct nsr_res *old = nsr_resdb_get(n->res, a->id);
	struct nsr_res *chg = NULL, *merged = NULL;
	const char *ro;
	struct nsr_buf why;
	int rc;

	r->id = nsr_rpc_str(a->id);
	r->text = nsr_rpc_str("");
	if (!old) {
		nsr_status_set(&r->st, NSR_ERR_NOTFOUND,
			       "no resource with id %s", a->id);
		return NSR_OK;
	}
	chg = parse_attrs(a->text, &r->st);
	if (!chg)
		return NSR_OK;
	ro = touches_readonly(n, chg, nsr_res_type(old), old);
	if (ro) {
		nsr_status_set(&r->st, NSR_ERR_READONLY,
			    "attribute '%s' is set by the server only", ro);
		nsr_res_free(chg);
		return NSR_OK;
	}
	merged = nsr_res_dup(old);
	nsr_buf_init(&why, 0);
	rc = nsr_res_merge(merged, chg, a->append);
	if (rc == NSR_OK)
		derive_device(merged, old);
	if (rc == NSR_OK)
		rc = nsr_resdb_update(n->res, a->id, merged, &why);
	if (rc) {
		nsr_status_set(&r->st, rc, "%s",
			       why.len ? why.data : nsr_strerror(rc));
	} else {
		free(r->id);
		free(r->text);
		finish_change(n, a->id, r);
		n->res_gen++;
		nsrd_admit_wake(n);
		nsr_info("updated resource %s for %s", a->id,
			 nsr_rpc_call_peer(call));
	}
	nsr_buf_release(&why);
	nsr_res_free(chg);
	nsr_res_free(merged);
	return NSR_OK;
}

/* nsrd_res_delete - RES_DELETE: remove a resource (the veto hook may
 * refuse). */
int nsrd_res_delete(void *ctx, void *argp, void *resp,
		    struct nsr_rpc_call *call)
{
	struct nsrd *n = ctx;
	res_text_args *a = argp;
	nsr_void_res *r = resp;
	struct nsr_buf why;
	int rc;

	nsr_buf_init(&why, 0);
	rc = nsr_resdb_delete(n->res, a->id, &why);
	if (rc)
		nsr_status_set(&r->st, rc, "%s",
			       why.len ? why.data : nsr_strerror(rc));
	else {
		n->res_gen++;
		nsrd_admit_wake(n);
		nsr_status_set(&r->st, NSR_OK, "%s", "");
		nsr_info("deleted resource %s for %s", a->id,
			 nsr_rpc_call_peer(call));
	}
	nsr_buf_release(&why);
	return NSR_OK;
}
