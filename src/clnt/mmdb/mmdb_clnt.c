/*
 * mmdb_clnt.c - client side of the nsrmmdbd protocol: one function per
 * procedure of nsrmmdb.x, taking and returning mmdb.h records.
 *
 * Owns the connection to nsrmmdbd and the text of the last failure.  A
 * transport failure drops the connection; the next call reconnects once
 * (the failed call itself is never repeated: a write may have committed).
 */
#include "nsr/compat.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/mmdb.h"
#include "nsr/mmdb_clnt.h"
#include "nsr/peer.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsrmmdb.h"

#define MMDB_CLNT_ERR_MAX 1024

enum query_kind { QUERY_NONE, QUERY_ROWS, QUERY_VOLS };

struct mmdb_clnt {
	struct nsr_peer *peer;		/* nsrmmdbd on the server */
	enum query_kind query;		/* what the open cursor returns */
	int answered;			/* the last call got a reply */
	int no_many;			/* nsrmmdbd lacks MM_SS_DELETE_MANY */
	char err[MMDB_CLNT_ERR_MAX];
};

/* set_err - remember a failure text; returns rc. */
static int set_err(struct mmdb_clnt *c, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int set_err(struct mmdb_clnt *c, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	return rc;
}

/* mmdb_clnt_open - locate nsrmmdbd on server and connect. */
int mmdb_clnt_open(const char *server, struct mmdb_clnt **out,
		   struct nsr_buf *err)
{
	return mmdb_clnt_connect(server, 0, out, err);
}

/* mmdb_clnt_new - a handle that connects on its first call, waiting
 * up to wait_ms for a restarting nsrmmdbd. */
int mmdb_clnt_new(const char *server, int wait_ms, struct mmdb_clnt **out)
{
	struct mmdb_clnt *c;
	int rc;

	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NSR_ERR_NOMEM;
	rc = nsr_peer_new(server && *server ? server : "localhost", 0,
			  NSRMMDBD_PROG, NSRMMDBD_V1, &c->peer);
	if (rc) {
		free(c);
		return rc;
	}
	nsr_peer_set_wait(c->peer, wait_ms);
	*out = c;
	return NSR_OK;
}

/* mmdb_clnt_set_wait - how long (re)connecting may wait. */
void mmdb_clnt_set_wait(struct mmdb_clnt *c, int wait_ms)
{
	nsr_peer_set_wait(c->peer, wait_ms);
}

/* mmdb_clnt_connect - connect to server:port (0 = locate). */
int mmdb_clnt_connect(const char *server, int port, struct mmdb_clnt **out,
		      struct nsr_buf *err)
{
	struct mmdb_clnt *c;
	int rc;

	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NSR_ERR_NOMEM;
	rc = nsr_peer_new(server && *server ? server : "localhost", port,
			  NSRMMDBD_PROG, NSRMMDBD_V1, &c->peer);
	if (rc == NSR_OK)
		rc = nsr_peer_connect(c->peer);
	if (rc) {
		if (err)
			nsr_buf_addstr(err, c->peer ? nsr_peer_errmsg(c->peer)
						    : nsr_strerror(rc));
		mmdb_clnt_close(c);
		return rc;
	}
	*out = c;
	return NSR_OK;
}

/* mmdb_clnt_close - close and free. */
void mmdb_clnt_close(struct mmdb_clnt *c)
{
	if (!c)
		return;
	nsr_peer_free(c->peer);
	free(c);
}

/* mmdb_clnt_answered - did the last call get nsrmmdbd's reply? */
int mmdb_clnt_answered(const struct mmdb_clnt *c)
{
	return c->answered;
}

/* mmdb_clnt_errmsg - the last failure text. */
const char *mmdb_clnt_errmsg(const struct mmdb_clnt *c)
{
	return c->err;
}

/* mmdb_clnt_set_timeout - reply timeout for later calls. */
void mmdb_clnt_set_timeout(struct mmdb_clnt *c, int timeout_ms)
{
	nsr_peer_set_timeout(c->peer, timeout_ms);
}

/* retry_ok - procedures that may be repeated after a transport failure
 * because doing them twice is doing them once (reads, whole-record
 * writes).  Creating records, adding bytes and cursors are not. */
static unsigned retry_ok(uint32_t proc)
{
	switch (proc) {
	case MM_VOL_GET:
	case MM_VOL_GET_BY_ID:
	case MM_VOL_PUT:
	case MM_SS_UPDATE:
	case MM_SS_GET:
	case MM_FRAG_ADD:	/* (ssid, cloneid, seq) is replaced */
	case MM_FRAG_LIST:
	case MM_CHECK:
	case MM_SNAPSHOT:	/* the file is written again whole */
	case MM_QUERY_OPEN:	/* replaces the connection's cursor */
	case MM_CLONE_SET:	/* flags set/cleared; a removal found done
				   says NSR_ERR_NOTFOUND */
	case MM_SS_FLAGS_MANY:	/* flags set/cleared again: the same */
	case MM_SS_DELETE_MANY: /* deleted again: those gone are counted
				   missing */
		return NSR_PEER_RETRY;
	}
	return 0;
}

/*
 * call - one RPC through the peer (which connects, waits for a
 * restarting daemon and repeats idempotent calls), and turn a transport
 * failure or the result's nsr_status into the return code and c->err.
 * st is the status inside res (valid once the call succeeded).  The
 * caller frees res with xdr_free whatever the result.
 */
static int call(struct mmdb_clnt *c, uint32_t proc, xdrproc_t xargs,
		void *args, xdrproc_t xres, void *res, const nsr_status *st)
{
	int rc;

	c->err[0] = '\0';
	rc = nsr_peer_call(c->peer, proc, xargs, args, xres, res,
			   retry_ok(proc));
	c->answered = rc == NSR_OK;
	if (rc) {
		if (rc != NSR_ERR_UNSUPPORTED) /* else it did nothing */
			c->query = QUERY_NONE;
		return set_err(c, rc, "%s", nsr_peer_errmsg(c->peer));
	}
	if (st->code) {
		/* Codes are ours (negative); anything else is a protocol
		 * violation and must not read as success or as garbage. */
		rc = st->code < 0 ? st->code : NSR_ERR_PROTO;
		return set_err(c, rc, "%s", st->msg && *st->msg ? st->msg
					: nsr_strerror(rc));
	}
	return NSR_OK;
}

/* void_call - a call whose result is an nsr_void_res. */
static int void_call(struct mmdb_clnt *c, uint32_t proc, xdrproc_t xargs,
		     void *args)
{
	nsr_void_res res;
	int rc;

	memset(&res, 0, sizeof(res));
	rc = call(c, proc, xargs, args, NSR_XDR(xdr_nsr_void_res), &res,
		  &res.st);
	xdr_free(NSR_XDR(xdr_nsr_void_res), (char *)&res);
	return rc;
}

/* bad_reply - a reply that does not fit our records. */
static int bad_reply(struct mmdb_clnt *c, const char *what)
{
	return set_err(c, NSR_ERR_PROTO,
		       "nsrmmdbd on %s sent a malformed %s",
		       nsr_peer_host(c->peer), what);
}

/* vol_res_call - a call answering one volume. */
static int vol_res_call(struct mmdb_clnt *c, uint32_t proc, xdrproc_t xargs,
			void *args, struct mmdb_volume *out)
{
	mm_vol_res res;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&res, 0, sizeof(res));
	rc = call(c, proc, xargs, args, NSR_XDR(xdr_mm_vol_res), &res,
		  &res.st);
	if (!rc && mmdb_clnt_vol_from_wire(&res.vol, out))
		rc = bad_reply(c, "volume");
	xdr_free(NSR_XDR(xdr_mm_vol_res), (char *)&res);
	return rc;
}

/* check_name - a volume name the protocol can carry; else NSR_ERR_INVAL
 * (an over-long string would fail to encode and cost the connection). */
static int check_name(struct mmdb_clnt *c, const char *name)
{
	if (name && strlen(name) > MM_VOLNAME_MAX)
		return set_err(c, NSR_ERR_INVAL, "volume name \"%.40s...\" is "
			       "longer than %d characters", name,
			       MM_VOLNAME_MAX);
	return NSR_OK;
}

/* mmdb_clnt_vol_get - MM_VOL_GET. */
int mmdb_clnt_vol_get(struct mmdb_clnt *c, const char *name,
		      struct mmdb_volume *out)
{
	mm_name_args a;

	if (check_name(c, name)) {
		memset(out, 0, sizeof(*out));
		return NSR_ERR_INVAL;
	}
	a.name = (char *)(name ? name : "");
	return vol_res_call(c, MM_VOL_GET, NSR_XDR(xdr_mm_name_args), &a, out);
}

/* mmdb_clnt_vol_get_by_id - MM_VOL_GET_BY_ID. */
int mmdb_clnt_vol_get_by_id(struct mmdb_clnt *c, const uint8_t volid[16],
			    struct mmdb_volume *out)
{
	mm_volid id;

	memcpy(id, volid, sizeof(id));
	return vol_res_call(c, MM_VOL_GET_BY_ID, NSR_XDR(xdr_mm_volid), id,
			    out);
}

/* mmdb_clnt_vol_put - MM_VOL_PUT. */
int mmdb_clnt_vol_put(struct mmdb_clnt *c, const struct mmdb_volume *vol)
{
	mm_volume w;
	int rc;

	memset(&w, 0, sizeof(w));
	rc = mmdb_clnt_vol_to_wire(vol, &w);
	if (!rc)
		rc = void_call(c, MM_VOL_PUT, NSR_XDR(xdr_mm_volume), &w);
	else
		set_err(c, rc, "%s", nsr_strerror(rc));
	xdr_free(NSR_XDR(xdr_mm_volume), (char *)&w);
	return rc;
}

/* mmdb_clnt_vol_delete - MM_VOL_DELETE. */
int mmdb_clnt_vol_delete(struct mmdb_clnt *c, const char *name)
{
	mm_name_args a;

	if (check_name(c, name))
		return NSR_ERR_INVAL;
	a.name = (char *)(name ? name : "");
	return void_call(c, MM_VOL_DELETE, NSR_XDR(xdr_mm_name_args), &a);
}

/* mmdb_clnt_vol_written - MM_VOL_WRITTEN. */
int mmdb_clnt_vol_written(struct mmdb_clnt *c, const uint8_t volid[16],
			  uint64_t add_written, uint32_t next_file,
			  uint64_t next_record, uint32_t set_flags)
{
	mm_vol_written_args a;

	memset(&a, 0, sizeof(a));
	memcpy(a.volid, volid, sizeof(a.volid));
	a.add_written = add_written;
	a.next_file = next_file;
	a.next_record = next_record;
	a.set_flags = set_flags;
	return void_call(c, MM_VOL_WRITTEN, NSR_XDR(xdr_mm_vol_written_args),
			 &a);
}

/* mmdb_clnt_vol_unwritten - MM_VOL_WRITTEN taking bytes off. */
int mmdb_clnt_vol_unwritten(struct mmdb_clnt *c, const uint8_t volid[16],
			    uint64_t sub_written, uint32_t clear_flags)
{
	mm_vol_written_args a;

	memset(&a, 0, sizeof(a));
	memcpy(a.volid, volid, sizeof(a.volid));
	a.sub_written = sub_written;
	a.clear_flags = clear_flags;
	return void_call(c, MM_VOL_WRITTEN, NSR_XDR(xdr_mm_vol_written_args),
			 &a);
}

/* mmdb_clnt_ss_create - MM_SS_CREATE. */
int mmdb_clnt_ss_create(struct mmdb_clnt *c, struct mmdb_saveset *ss,
			uint32_t *cloneid_out)
{
	mm_saveset w;
	mm_ss_create_res res;
	int rc;

	if (cloneid_out)
		*cloneid_out = 0;
	memset(&w, 0, sizeof(w));
	memset(&res, 0, sizeof(res));
	rc = mmdb_clnt_ss_to_wire(ss, &w);
	if (rc) {
		set_err(c, rc, "%s", nsr_strerror(rc));
		goto out;
	}
	rc = call(c, MM_SS_CREATE, NSR_XDR(xdr_mm_saveset), &w,
		  NSR_XDR(xdr_mm_ss_create_res), &res, &res.st);
	if (rc)
		goto out;
	ss->ssid = res.ssid;
	memcpy(ss->longid, res.longid, sizeof(ss->longid));
	if (cloneid_out)
		*cloneid_out = res.cloneid;
out:
	xdr_free(NSR_XDR(xdr_mm_saveset), (char *)&w);
	xdr_free(NSR_XDR(xdr_mm_ss_create_res), (char *)&res);
	return rc;
}

/* mmdb_clnt_ss_create_many - MM_SS_CREATE_MANY: n (1 to
 * MM_CREATE_MANY_MAX) save sets in one transaction. */
int mmdb_clnt_ss_create_many(struct mmdb_clnt *c, struct mmdb_saveset *ss,
			     size_t n, uint32_t *cloneid)
{
	mm_saveset w[MM_CREATE_MANY_MAX];
	mm_ss_create_many_args a;
	mm_ss_create_many_res res;
	size_t made = 0;
	int rc = NSR_OK;

	memset(w, 0, sizeof(w));
	memset(&res, 0, sizeof(res));
	c->answered = 1; /* refused here: nothing was created */
	if (n == 0 || n > MM_CREATE_MANY_MAX) {
		rc = set_err(c, NSR_ERR_INVAL, "%zu save sets to create in "
			     "one call: 1 to %d", n, MM_CREATE_MANY_MAX);
		goto out;
	}
	for (; made < n && rc == NSR_OK; made++)
		rc = mmdb_clnt_ss_to_wire(&ss[made], &w[made]);
	if (rc) {
		set_err(c, rc, "%s", nsr_strerror(rc));
		goto out;
	}
	a.sets.sets_len = (u_int)n;
	a.sets.sets_val = w;
	rc = call(c, MM_SS_CREATE_MANY, NSR_XDR(xdr_mm_ss_create_many_args),
		  &a, NSR_XDR(xdr_mm_ss_create_many_res), &res, &res.st);
	if (rc)
		goto out;
	if (res.made.made_len != n) {
		rc = set_err(c, NSR_ERR_PROTO, "nsrmmdbd answered %u of %zu "
			     "save sets created (malformed reply)",
			     res.made.made_len, n);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const mm_ss_create_res *m = &res.made.made_val[i];

		ss[i].ssid = m->ssid;
		memcpy(ss[i].longid, m->longid, sizeof(ss[i].longid));
		cloneid[i] = m->cloneid;
	}
out:
	for (size_t i = 0; i < made; i++)
		xdr_free(NSR_XDR(xdr_mm_saveset), (char *)&w[i]);
	xdr_free(NSR_XDR(xdr_mm_ss_create_many_res), (char *)&res);
	return rc;
}

/* mmdb_clnt_ss_restore - MM_SS_RESTORE: store ss under ss->ssid. */
int mmdb_clnt_ss_restore(struct mmdb_clnt *c, struct mmdb_saveset *ss,
			 uint32_t cloneid)
{
	mm_ss_restore_args a;
	mm_ss_create_res res;
	int rc;

	memset(&a, 0, sizeof(a));
	memset(&res, 0, sizeof(res));
	rc = mmdb_clnt_ss_to_wire(ss, &a.ss);
	if (rc) {
		set_err(c, rc, "%s", nsr_strerror(rc));
		goto out;
	}
	a.cloneid = cloneid;
	rc = call(c, MM_SS_RESTORE, NSR_XDR(xdr_mm_ss_restore_args), &a,
		  NSR_XDR(xdr_mm_ss_create_res), &res, &res.st);
	if (!rc)
		memcpy(ss->longid, res.longid, sizeof(ss->longid));
out:
	xdr_free(NSR_XDR(xdr_mm_ss_restore_args), (char *)&a);
	xdr_free(NSR_XDR(xdr_mm_ss_create_res), (char *)&res);
	return rc;
}

/* mmdb_clnt_ss_update - MM_SS_UPDATE. */
int mmdb_clnt_ss_update(struct mmdb_clnt *c, const struct mmdb_saveset *ss)
{
	mm_saveset w;
	int rc;

	memset(&w, 0, sizeof(w));
	rc = mmdb_clnt_ss_to_wire(ss, &w);
	if (!rc)
		rc = void_call(c, MM_SS_UPDATE, NSR_XDR(xdr_mm_saveset), &w);
	else
		set_err(c, rc, "%s", nsr_strerror(rc));
	xdr_free(NSR_XDR(xdr_mm_saveset), (char *)&w);
	return rc;
}

/* mmdb_clnt_ss_get - MM_SS_GET. */
int mmdb_clnt_ss_get(struct mmdb_clnt *c, uint32_t ssid,
		     struct mmdb_saveset *out)
{
	mm_ss_res res;
	u_int id = ssid;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&res, 0, sizeof(res));
	rc = call(c, MM_SS_GET, NSR_XDR(xdr_u_int), &id,
		  NSR_XDR(xdr_mm_ss_res), &res, &res.st);
	if (!rc && mmdb_clnt_ss_from_wire(&res.ss, out))
		rc = bad_reply(c, "save set");
	xdr_free(NSR_XDR(xdr_mm_ss_res), (char *)&res);
	return rc;
}

/* mmdb_clnt_ss_delete - MM_SS_DELETE. */
int mmdb_clnt_ss_delete(struct mmdb_clnt *c, uint32_t ssid)
{
	u_int id = ssid;

	return void_call(c, MM_SS_DELETE, NSR_XDR(xdr_u_int), &id);
}

/* delete_singly - MM_SS_DELETE of each of ssids[0..n), for an
 * nsrmmdbd that does not know MM_SS_DELETE_MANY; adds to *done and
 * *deleted as mmdb_clnt_ss_delete_many says. */
static int delete_singly(struct mmdb_clnt *c, const uint32_t *ssids, size_t n,
			 size_t *done, size_t *deleted)
{
	for (size_t i = 0; i < n; i++) {
		int rc = mmdb_clnt_ss_delete(c, ssids[i]);

		if (rc != NSR_OK && rc != NSR_ERR_NOTFOUND)
			return rc;
		*deleted += rc == NSR_OK;
		(*done)++;
	}
	return NSR_OK;
}

/* delete_batch - one MM_SS_DELETE_MANY of ssids[0..n) (n <=
 * MM_DELETE_MANY_MAX); adds to *done and *deleted.  NSR_ERR_UNSUPPORTED
 * (remembered) when nsrmmdbd does not know the procedure. */
static int delete_batch(struct mmdb_clnt *c, const uint32_t *ssids, size_t n,
			size_t *done, size_t *deleted)
{
	mm_ss_delete_many_args a;
	mm_ss_delete_many_res r;
	int rc;

	a.ssids.ssids_len = (u_int)n;
	a.ssids.ssids_val = (u_int *)(uintptr_t)ssids; /* only encoded */
	memset(&r, 0, sizeof(r));
	rc = call(c, MM_SS_DELETE_MANY, NSR_XDR(xdr_mm_ss_delete_many_args), &a,
		  NSR_XDR(xdr_mm_ss_delete_many_res), &r, &r.st);
	if (rc == NSR_ERR_UNSUPPORTED && r.st.code == NSR_OK)
		c->no_many = 1; /* an nsrmmdbd older than it */
	if (rc == NSR_OK) {
		*done += n;
		*deleted += r.deleted;
	}
	xdr_free(NSR_XDR(xdr_mm_ss_delete_many_res), (char *)&r);
	return rc;
}

/* delete_batch_max - save sets per MM_SS_DELETE_MANY: MM_DELETE_MANY_MAX,
 * or fewer with the test knob NSR_TEST_MMDB_DELETE_BATCH (so a crash
 * can land between two batches of a few save sets). */
static size_t delete_batch_max(void)
{
	const char *e = getenv("NSR_TEST_MMDB_DELETE_BATCH");
	unsigned long v = e ? strtoul(e, NULL, 10) : 0;

	if (v == 0 || v > MM_DELETE_MANY_MAX)
		return MM_DELETE_MANY_MAX;
	return (size_t)v;
}

/* mmdb_clnt_ss_delete_many - MM_SS_DELETE_MANY in batches of at most
 * MM_DELETE_MANY_MAX, or MM_SS_DELETE of each for an older nsrmmdbd. */
int mmdb_clnt_ss_delete_many(struct mmdb_clnt *c, const uint32_t *ssids,
			     size_t n, size_t *done, size_t *deleted)
{
	size_t d = 0, k, del = 0, max = delete_batch_max();
	int rc = NSR_OK;

	while (d < n && rc == NSR_OK) {
		k = NSR_MIN(n - d, max);
		if (!c->no_many)
			rc = delete_batch(c, ssids + d, k, &d, &del);
		if (c->no_many)
			rc = delete_singly(c, ssids + d, k, &d, &del);
	}
	if (done)
		*done = d;
	if (deleted)
		*deleted = del;
	return rc;
}

/* mmdb_clnt_ss_flags - MM_SS_FLAGS. */
int mmdb_clnt_ss_flags(struct mmdb_clnt *c, uint32_t ssid, uint32_t set,
		       uint32_t clear)
{
	mm_ss_flags_args a;

	memset(&a, 0, sizeof(a));
	a.ssid = ssid;
	a.set = set;
	a.clear = clear;
	return void_call(c, MM_SS_FLAGS, NSR_XDR(xdr_mm_ss_flags_args), &a);
}

/* mmdb_clnt_ss_flags_many - MM_SS_FLAGS_MANY per MM_FLAGS_MAX changes. */
int mmdb_clnt_ss_flags_many(struct mmdb_clnt *c,
			    const struct mmdb_clnt_flags *v, size_t n,
			    unsigned *missing)
{
	mm_ss_flags_args items[MM_FLAGS_MAX];
	int rc = NSR_OK;

	if (missing)
		*missing = 0;
	for (size_t at = 0; rc == NSR_OK && at < n;) {
		size_t k = NSR_MIN(n - at, (size_t)MM_FLAGS_MAX);
		mm_ss_flags_many_args a;
		mm_ss_flags_many_res r;

		for (size_t i = 0; i < k; i++) {
			items[i].ssid = v[at + i].ssid;
			items[i].set = v[at + i].set;
			items[i].clear = v[at + i].clear;
		}
		a.items.items_len = (u_int)k;
		a.items.items_val = items;
		memset(&r, 0, sizeof(r));
		rc = call(c, MM_SS_FLAGS_MANY,
			  NSR_XDR(xdr_mm_ss_flags_many_args), &a,
			  NSR_XDR(xdr_mm_ss_flags_many_res), &r, &r.st);
		if (rc == NSR_OK && missing)
			*missing += r.missing;
		xdr_free(NSR_XDR(xdr_mm_ss_flags_many_res), (char *)&r);
		at += k;
	}
	return rc;
}

/* mmdb_clnt_vol_retent_many - MM_VOL_RETENT_MANY per MM_FLAGS_MAX. */
int mmdb_clnt_vol_retent_many(struct mmdb_clnt *c,
			      const struct mmdb_clnt_retent *v, size_t n,
			      unsigned *missing)
{
	int rc = NSR_OK;

	if (missing)
		*missing = 0;
	for (size_t at = 0; rc == NSR_OK && at < n;) {
		size_t k = NSR_MIN(n - at, (size_t)MM_FLAGS_MAX);
		mm_vol_retent_many_args a;
		mm_ss_flags_many_res r;

		a.items.items_val = calloc(k, sizeof(mm_vol_retent));
		if (!a.items.items_val)
			return NSR_ERR_NOMEM;
		for (size_t i = 0; i < k; i++) {
			memcpy(a.items.items_val[i].volid, v[at + i].volid,
			       16);
			a.items.items_val[i].volretent = v[at + i].volretent;
		}
		a.items.items_len = (u_int)k;
		memset(&r, 0, sizeof(r));
		rc = call(c, MM_VOL_RETENT_MANY,
			  NSR_XDR(xdr_mm_vol_retent_many_args), &a,
			  NSR_XDR(xdr_mm_ss_flags_many_res), &r, &r.st);
		if (rc == NSR_OK && missing)
			*missing += r.missing;
		xdr_free(NSR_XDR(xdr_mm_ss_flags_many_res), (char *)&r);
		free(a.items.items_val);
		at += k;
	}
	return rc;
}

/* mmdb_clnt_frag_add - MM_FRAG_ADD. */
int mmdb_clnt_frag_add(struct mmdb_clnt *c, const struct mmdb_fragment *f)
{
	mm_fragment w;

	memset(&w, 0, sizeof(w));
	mmdb_clnt_frag_to_wire(f, &w);
	return void_call(c, MM_FRAG_ADD, NSR_XDR(xdr_mm_fragment), &w);
}

/* mmdb_clnt_frag_list - MM_FRAG_LIST. */
int mmdb_clnt_frag_list(struct mmdb_clnt *c, uint32_t ssid,
			struct mmdb_fragment *out, size_t max, size_t *n)
{
	mm_frag_list_res res;
	u_int id = ssid;
	size_t i;
	int rc;

	*n = 0;
	memset(&res, 0, sizeof(res));
	rc = call(c, MM_FRAG_LIST, NSR_XDR(xdr_u_int), &id,
		  NSR_XDR(xdr_mm_frag_list_res), &res, &res.st);
	if (!rc) {
		for (i = 0; i < res.frags.frags_len && i < max; i++)
			mmdb_clnt_frag_from_wire(&res.frags.frags_val[i],
						 &out[i]);
		*n = res.frags.frags_len;
	}
	xdr_free(NSR_XDR(xdr_mm_frag_list_res), (char *)&res);
	return rc;
}

/* mmdb_clnt_clone_add - MM_CLONE_ADD. */
int mmdb_clnt_clone_add(struct mmdb_clnt *c, const struct mmdb_clone *cl,
			uint32_t *cloneid_out)
{
	mm_clone w;
	mm_clone_add_res res;
	int rc;

	memset(&w, 0, sizeof(w));
	memset(&res, 0, sizeof(res));
	mmdb_clnt_clone_to_wire(cl, &w);
	rc = call(c, MM_CLONE_ADD, NSR_XDR(xdr_mm_clone), &w,
		  NSR_XDR(xdr_mm_clone_add_res), &res, &res.st);
	if (!rc && cloneid_out)
		*cloneid_out = res.cloneid;
	xdr_free(NSR_XDR(xdr_mm_clone_add_res), (char *)&res);
	return rc;
}

/* mmdb_clnt_clone_set - MM_CLONE_SET changing flags. */
int mmdb_clnt_clone_set(struct mmdb_clnt *c, uint32_t ssid, uint32_t cloneid,
			uint32_t set, uint32_t clear)
{
	mm_clone_set_args a;

	memset(&a, 0, sizeof(a));
	a.ssid = ssid;
	a.cloneid = cloneid;
	a.set = set;
	a.clear = clear;
	return void_call(c, MM_CLONE_SET, NSR_XDR(xdr_mm_clone_set_args), &a);
}

/* mmdb_clnt_clone_remove - MM_CLONE_SET removing the instance. */
int mmdb_clnt_clone_remove(struct mmdb_clnt *c, uint32_t ssid,
			   uint32_t cloneid)
{
	mm_clone_set_args a;

	memset(&a, 0, sizeof(a));
	a.ssid = ssid;
	a.cloneid = cloneid;
	a.remove = TRUE;
	return void_call(c, MM_CLONE_SET, NSR_XDR(xdr_mm_clone_set_args), &a);
}

/* mmdb_clnt_query_open - MM_QUERY_OPEN. */
int mmdb_clnt_query_open(struct mmdb_clnt *c, const char *query,
			 unsigned how, int64_t now)
{
	int volumes = (how & MMDB_CLNT_Q_VOLUMES) != 0;
	mm_query_args a;
	int rc;

	c->query = QUERY_NONE;
	if (query && strlen(query) > MM_QUERY_MAX)
		return set_err(c, NSR_ERR_TOOBIG, "query is %zu bytes long; "
			       "nsrmmdbd takes at most %d", strlen(query),
			       MM_QUERY_MAX);
	memset(&a, 0, sizeof(a));
	a.query = (char *)(query ? query : "");
	a.volumes = volumes ? TRUE : FALSE;
	a.chains = (how & MMDB_CLNT_Q_CHAINS) ? TRUE : FALSE;
	a.now = now ? now : (int64_t)time(NULL);
	rc = void_call(c, MM_QUERY_OPEN, NSR_XDR(xdr_mm_query_args), &a);
	if (!rc)
		c->query = volumes ? QUERY_VOLS : QUERY_ROWS;
	return rc;
}

/* query_next - MM_QUERY_NEXT into res (caller frees); checks the kind. */
static int query_next(struct mmdb_clnt *c, enum query_kind kind, size_t max,
		      mm_next_res *res)
{
	mm_next_args a;

	if (c->query != kind)
		return set_err(c, NSR_ERR_STATE,
			       "no %s query is open on this connection",
			       kind == QUERY_VOLS ? "volume" : "save set");
	a.max = (u_int)NSR_MIN(max, (size_t)MM_BATCH_MAX);
	return call(c, MM_QUERY_NEXT, NSR_XDR(xdr_mm_next_args), &a,
		    NSR_XDR(xdr_mm_next_res), res, &res->st);
}

/* next_batch - the next batch of a query into out: save set rows
 * (QUERY_ROWS, out is struct mmdb_ss_row[max]) or volumes (QUERY_VOLS,
 * out is struct mmdb_volume[max]); every element checked on the way in. */
static int next_batch(struct mmdb_clnt *c, int kind, void *out, size_t max,
		      size_t *n, int *done)
{
	int rows = kind == QUERY_ROWS;
	mm_next_res res;
	u_int len;
	int rc;

	*n = 0;
	*done = 0;
	memset(&res, 0, sizeof(res));
	rc = query_next(c, kind, max, &res);
	if (rc)
		goto out;
	len = rows ? res.rows.rows_len : res.vols.vols_len;
	if (len > max || len > MM_BATCH_MAX) {
		rc = bad_reply(c, rows ? "batch (more rows than asked for)"
				       : "batch (more volumes than asked for)");
		goto out;
	}
	for (u_int i = 0; i < len; i++) {
		int bad = rows ? mmdb_clnt_row_from_wire(
					 &res.rows.rows_val[i],
					 (struct mmdb_ss_row *)out + i)
			       : mmdb_clnt_vol_from_wire(
					 &res.vols.vols_val[i],
					 (struct mmdb_volume *)out + i);

		if (bad) {
			rc = bad_reply(c, rows ? "save set row" : "volume");
			goto out;
		}
	}
	*n = len;
	*done = res.done ? 1 : 0;
	if (*done)
		c->query = QUERY_NONE;
out:
	xdr_free(NSR_XDR(xdr_mm_next_res), (char *)&res);
	return rc;
}

/* mmdb_clnt_query_next_rows - next batch of save set rows. */
int mmdb_clnt_query_next_rows(struct mmdb_clnt *c, struct mmdb_ss_row *rows,
			      size_t max, size_t *n, int *done)
{
	return next_batch(c, QUERY_ROWS, rows, max, n, done);
}

/* mmdb_clnt_query_next_vols - next batch of volumes. */
int mmdb_clnt_query_next_vols(struct mmdb_clnt *c, struct mmdb_volume *vols,
			      size_t max, size_t *n, int *done)
{
	return next_batch(c, QUERY_VOLS, vols, max, n, done);
}

/* mmdb_clnt_check - MM_CHECK. */
int mmdb_clnt_check(struct mmdb_clnt *c, struct nsr_buf *report)
{
	mm_check_res res;
	int rc;

	memset(&res, 0, sizeof(res));
	rc = call(c, MM_CHECK, NSR_XDR(xdr_void), NULL,
		  NSR_XDR(xdr_mm_check_res), &res, &res.st);
	/* The report comes with NSR_ERR_CORRUPT too: that is its point. */
	if (report && res.report && (!rc || rc == NSR_ERR_CORRUPT))
		nsr_buf_addstr(report, res.report);
	xdr_free(NSR_XDR(xdr_mm_check_res), (char *)&res);
	return rc;
}

/* mmdb_clnt_snapshot - MM_SNAPSHOT. */
int mmdb_clnt_snapshot(struct mmdb_clnt *c, uint64_t *commit_seq,
		       uint64_t *bytes)
{
	mm_snapshot_res res;
	int rc;

	memset(&res, 0, sizeof(res));
	rc = call(c, MM_SNAPSHOT, NSR_XDR(xdr_void), NULL,
		  NSR_XDR(xdr_mm_snapshot_res), &res, &res.st);
	if (rc == NSR_OK && commit_seq)
		*commit_seq = res.commit_seq;
	if (rc == NSR_OK && bytes)
		*bytes = res.bytes;
	xdr_free(NSR_XDR(xdr_mm_snapshot_res), (char *)&res);
	return rc;
}
