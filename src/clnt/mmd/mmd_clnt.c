/*
 * mmd_clnt.c - client calls for nsrmmd, the data mover (label, save
 * sessions, recover sessions; nsrsnmd has its own library, snmd_clnt).
 * It owns the conversion between the media library's structs (struct nsr_vol_*) and the XDR types, the
 * chunking of save-set data into pipelined one-way calls, and the wording
 * of transport errors.  Library code: no logging, no exit.
 */
#include "nsr/compat.h"

#include <stdarg.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/mmd_clnt.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsrmmd.h"

struct nsr_mmd {
	struct nsr_rpc_clnt *c;
	char *chunk;	  /* pending save-set data */
	size_t chunk_len; /* bytes pending */
	size_t chunk_cap; /* size of one data call */
	uint64_t seq;	  /* next data call number */
	int in_session;
};

/* why - append printf-formatted text to err (NULL is fine). */
static void why(struct nsr_buf *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void why(struct nsr_buf *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	nsr_buf_vaddf(err, fmt, ap);
	va_end(ap);
}

/* status_rc - turn a reply's nsr_status into a return code + message. */
static int status_rc(const nsr_status *st, struct nsr_buf *err)
{
	if (st->code == NSR_OK)
		return NSR_OK;
	why(err, "%s", st->msg && *st->msg ? st->msg : nsr_strerror(st->code));
	/* A peer must send a negative code; anything else is a failure too. */
	return st->code < 0 ? st->code : NSR_ERR_PROTO;
}

/* call - one blocking call on the mover connection with error wording. */
static int call(struct nsr_mmd *m, uint32_t proc, xdrproc_t xa, void *a,
		xdrproc_t xr, void *r, struct nsr_buf *err)
{
	int rc = nsr_rpc_call(m->c, proc, xa, a, xr, r);

	if (rc != NSR_OK)
		why(err, "%s", nsr_rpc_last_error(m->c));
	return rc;
}

/* nsr_mmd_connect - connect to one mover. */
int nsr_mmd_connect(const char *host, int port, struct nsr_mmd **out,
		    struct nsr_buf *err)
{
	struct nsr_mmd *m;
	int rc;

	*out = NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NSR_ERR_NOMEM;
	m->chunk_cap = NSR_MMD_CHUNK_DEFAULT;
	rc = nsr_rpc_connect(host, port, NSRMMD_PROG, NSRMMD_V1, 0, &m->c,
			     err);
	if (rc != NSR_OK) {
		free(m);
		return rc;
	}
	*out = m;
	return NSR_OK;
}

/* nsr_mmd_set_chunk - size of one data call. */
void nsr_mmd_set_chunk(struct nsr_mmd *m, size_t chunk)
{
	if (m->chunk_len > 0)
		return; /* not while data is pending */
	m->chunk_cap = NSR_MAX(NSR_MIN(chunk, (size_t)MMD_CHUNK_MAX),
			       (size_t)32768);
	free(m->chunk);
	m->chunk = NULL;
}

/* nsr_mmd_peer - the mover's address. */
const char *nsr_mmd_peer(const struct nsr_mmd *m)
{
	return nsr_rpc_peer(m->c);
}

/* nsr_mmd_close - close and free. */
void nsr_mmd_close(struct nsr_mmd *m)
{
	if (!m)
		return;
	nsr_rpc_close(m->c);
	free(m->chunk);
	free(m);
}

/* label_from_xdr - the public label from the XDR one. */
static void label_from_xdr(struct nsr_vol_label *out, const mmd_label *l)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", l->volume);
	memcpy(out->volid, l->volid, sizeof(out->volid));
	snprintf(out->pool, sizeof(out->pool), "%s", l->pool);
	out->block_size = l->block_size;
	out->created = l->created;
	snprintf(out->media_type, sizeof(out->media_type), "%s",
		 l->media_type);
}

/* nsr_mmd_label - MMD_LABEL. */
int nsr_mmd_label(struct nsr_mmd *m, const char *volume, const char *pool,
		  uint32_t block_size, int force, struct nsr_vol_label *out,
		  struct nsr_buf *err)
{
	mmd_label_args a;
	mmd_label_res r;
	int rc;

	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.volume = (char *)volume;
	a.pool = (char *)(pool ? pool : "Default");
	a.block_size = block_size;
	a.force = force ? TRUE : FALSE;
	rc = call(m, MMD_LABEL, NSR_XDR(xdr_mmd_label_args), &a,
		  NSR_XDR(xdr_mmd_label_res), &r, err);
	if (rc != NSR_OK)
		return rc;
	rc = status_rc(&r.st, err);
	if (rc == NSR_OK && out)
		label_from_xdr(out, &r.label);
	xdr_free(NSR_XDR(xdr_mmd_label_res), (char *)&r);
	return rc;
}

/* nsr_mmd_ss_remove - MMD_SS_REMOVE. */
int nsr_mmd_ss_remove(struct nsr_mmd *m, const uint32_t *ssids, size_t n,
		      uint32_t *files, uint64_t *bytes, struct nsr_buf *err)
{
	mmd_remove_args a;
	mmd_remove_res r;
	int rc;

	if (files)
		*files = 0;
	if (bytes)
		*bytes = 0;
	if (n > MMD_REMOVE_MAX) {
		why(err, "at most %d save sets can be removed in one call",
		    MMD_REMOVE_MAX);
		return NSR_ERR_LIMIT;
	}
	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.ssids.ssids_len = (u_int)n;
	a.ssids.ssids_val = (u_int *)ssids;
	rc = call(m, MMD_SS_REMOVE, NSR_XDR(xdr_mmd_remove_args), &a,
		  NSR_XDR(xdr_mmd_remove_res), &r, err);
	if (rc != NSR_OK)
		return rc;
	rc = status_rc(&r.st, err);
	if (rc == NSR_OK && files)
		*files = r.files;
	if (rc == NSR_OK && bytes)
		*bytes = r.bytes;
	xdr_free(NSR_XDR(xdr_mmd_remove_res), (char *)&r);
	return rc;
}

/* nsr_mmd_read_label - MMD_READ_LABEL. */
int nsr_mmd_read_label(struct nsr_mmd *m, struct nsr_vol_label *out,
		       int *has_data, struct nsr_buf *err)
{
	mmd_label_res r;
	int rc;

	memset(&r, 0, sizeof(r));
	memset(out, 0, sizeof(*out));
	if (has_data)
		*has_data = 0;
	rc = call(m, MMD_READ_LABEL, NSR_XDR(xdr_void), NULL,
		  NSR_XDR(xdr_mmd_label_res), &r, err);
	if (rc != NSR_OK)
		return rc;
	rc = status_rc(&r.st, err);
	if (rc == NSR_OK) {
		label_from_xdr(out, &r.label);
		if (has_data)
			*has_data = r.has_data ? 1 : 0;
	}
	xdr_free(NSR_XDR(xdr_mmd_label_res), (char *)&r);
	return rc;
}

/* nsr_mmd_ss_begin - MMD_SS_BEGIN. */
int nsr_mmd_ss_begin(struct nsr_mmd *m, const struct nsr_vol_sshdr *hdr,
		     const uint8_t volid[16], const struct nsr_vol_span *sp,
		     struct nsr_buf *err)
{
	mmd_begin_args a;
	nsr_void_res r;
	int rc;

	if (m->in_session) {
		why(err, "a save session is already open on this connection");
		return NSR_ERR_BUSY;
	}
	if (!m->chunk) {
		m->chunk = malloc(m->chunk_cap);
		if (!m->chunk)
			return NSR_ERR_NOMEM;
	}
	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.ssid = hdr->ssid;
	memcpy(a.longid, hdr->longid, sizeof(a.longid));
	a.client = (char *)hdr->client;
	a.name = (char *)hdr->name;
	a.level = (char *)hdr->level;
	a.pool = (char *)hdr->pool;
	a.savetime = hdr->savetime;
	a.browse_time = hdr->browse_time;
	a.retention_time = hdr->retention_time;
	memcpy(a.volid, volid, sizeof(a.volid));
	a.frag_seq = sp ? sp->frag_seq : 0;
	a.ss_offset = sp ? sp->ss_offset : 0;
	rc = call(m, MMD_SS_BEGIN, NSR_XDR(xdr_mmd_begin_args), &a,
		  NSR_XDR(xdr_nsr_void_res), &r, err);
	if (rc != NSR_OK)
		return rc;
	rc = status_rc(&r.st, err);
	xdr_free(NSR_XDR(xdr_nsr_void_res), (char *)&r);
	if (rc == NSR_OK) {
		m->in_session = 1;
		m->seq = 0;
		m->chunk_len = 0;
	}
	return rc;
}

/* send_chunk - one one-way MMD_SS_DATA with the pending bytes. */
static int send_chunk(struct nsr_mmd *m, const void *p, size_t len)
{
	mmd_data_args a;
	int rc;

	a.seq = m->seq;
	a.data.data_len = (u_int)len;
	a.data.data_val = (char *)p;
	rc = nsr_rpc_send(m->c, MMD_SS_DATA, NSR_XDR(xdr_mmd_data_args), &a);
	if (rc == NSR_OK)
		m->seq++;
	return rc;
}

/* nsr_mmd_ss_write - collect data into chunks and send full ones. */
int nsr_mmd_ss_write(struct nsr_mmd *m, const void *p, size_t len)
{
	const char *q = p;
	int rc;

	if (!m->in_session)
		return NSR_ERR_STATE;
	/* Large writes with nothing pending go out without a copy. */
	while (m->chunk_len == 0 && len >= m->chunk_cap) {
		rc = send_chunk(m, q, m->chunk_cap);
		if (rc != NSR_OK)
			return rc;
		q += m->chunk_cap;
		len -= m->chunk_cap;
	}
	while (len > 0) {
		size_t n = NSR_MIN(len, m->chunk_cap - m->chunk_len);

		memcpy(m->chunk + m->chunk_len, q, n);
		m->chunk_len += n;
		q += n;
		len -= n;
		if (m->chunk_len == m->chunk_cap) {
			rc = send_chunk(m, m->chunk, m->chunk_len);
			if (rc != NSR_OK)
				return rc;
			m->chunk_len = 0;
		}
	}
	return NSR_OK;
}

/* nsr_mmd_frag_from_wire - the public fragment from the XDR one. */
void nsr_mmd_frag_from_wire(struct nsr_vol_frag *out, const mmd_frag *f)
{
	memset(out, 0, sizeof(*out));
	memcpy(out->volid, f->volid, sizeof(out->volid));
	out->ssid = f->ssid;
	out->frag_seq = f->seq;
	out->ss_offset = f->ss_offset;
	out->file = f->file;
	out->record = f->record;
	out->offset = f->offset;
	out->size = f->size;
	out->complete = f->complete ? 1 : 0;
}

/* nsr_mmd_frag_to_wire - the XDR fragment from the public one. */
void nsr_mmd_frag_to_wire(mmd_frag *out, const struct nsr_vol_frag *f)
{
	memset(out, 0, sizeof(*out));
	memcpy(out->volid, f->volid, sizeof(out->volid));
	out->ssid = f->ssid;
	out->seq = f->frag_seq;
	out->ss_offset = f->ss_offset;
	out->file = f->file;
	out->record = f->record;
	out->offset = f->offset;
	out->size = f->size;
	out->complete = f->complete ? TRUE : FALSE;
}

/* nsr_mmd_ss_end - flush the last chunk, MMD_SS_END. */
int nsr_mmd_ss_end(struct nsr_mmd *m, const struct nsr_vol_sstail *tail,
		   struct nsr_vol_frag *frag, struct nsr_buf *err)
{
	mmd_end_args a;
	mmd_end_res r;
	int rc;

	if (frag)
		memset(frag, 0, sizeof(*frag));
	if (!m->in_session) {
		why(err, "no save session is open on this connection");
		return NSR_ERR_STATE;
	}
	m->in_session = 0;
	if (m->chunk_len > 0) {
		rc = send_chunk(m, m->chunk, m->chunk_len);
		m->chunk_len = 0;
		if (rc != NSR_OK) {
			why(err, "%s", nsr_rpc_last_error(m->c));
			return rc;
		}
	}
	memset(&r, 0, sizeof(r));
	a.bytes = tail->bytes;
	a.files = tail->files;
	a.status = tail->status;
	rc = call(m, MMD_SS_END, NSR_XDR(xdr_mmd_end_args), &a,
		  NSR_XDR(xdr_mmd_end_res), &r, err);
	if (rc != NSR_OK)
		return rc;
	rc = status_rc(&r.st, err);
	if (rc == NSR_OK && frag)
		nsr_mmd_frag_from_wire(frag, &r.frag);
	xdr_free(NSR_XDR(xdr_mmd_end_res), (char *)&r);
	return rc;
}

/* nsr_mmd_read_open - MMD_READ_OPEN. */
int nsr_mmd_read_open(struct nsr_mmd *m, uint32_t ssid,
		      const struct nsr_vol_frag *frags, size_t n,
		      struct nsr_buf *err)
{
	mmd_read_args a;
	nsr_void_res r;
	int rc;

	if (n == 0 || n > MMD_FRAGS_MAX) {
		why(err, "save set %u: %zu fragments (1..%d allowed)", ssid, n,
		    MMD_FRAGS_MAX);
		return NSR_ERR_INVAL;
	}
	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	a.ssid = ssid;
	a.frags.frags_len = (u_int)n;
	a.frags.frags_val = calloc(n, sizeof(mmd_frag));
	if (!a.frags.frags_val)
		return NSR_ERR_NOMEM;
	for (size_t i = 0; i < n; i++)
		nsr_mmd_frag_to_wire(&a.frags.frags_val[i], &frags[i]);
	rc = call(m, MMD_READ_OPEN, NSR_XDR(xdr_mmd_read_args), &a,
		  NSR_XDR(xdr_nsr_void_res), &r, err);
	free(a.frags.frags_val);
	if (rc != NSR_OK)
		return rc;
	rc = status_rc(&r.st, err);
	xdr_free(NSR_XDR(xdr_nsr_void_res), (char *)&r);
	return rc;
}

/* nsr_mmd_read_next - MMD_READ_NEXT into the caller's buffer. */
int nsr_mmd_read_next(struct nsr_mmd *m, void *p, size_t cap, size_t *got,
		      int *eof, struct nsr_buf *err)
{
	mmd_next_args a;
	mmd_next_res r;
	int rc;

	*got = 0;
	*eof = 0;
	memset(&r, 0, sizeof(r));
	a.max = (u_int)NSR_MIN(cap, (size_t)MMD_CHUNK_MAX);
	rc = call(m, MMD_READ_NEXT, NSR_XDR(xdr_mmd_next_args), &a,
		  NSR_XDR(xdr_mmd_next_res), &r, err);
	if (rc != NSR_OK)
		return rc;
	rc = status_rc(&r.st, err);
	if (rc == NSR_OK && r.data.data_len > a.max) {
		why(err, "mover %s sent %u bytes, %u were asked for",
		    nsr_rpc_peer(m->c), r.data.data_len, a.max);
		rc = NSR_ERR_PROTO;
	}
	if (rc == NSR_OK) {
		if (r.data.data_len > 0)
			memcpy(p, r.data.data_val, r.data.data_len);
		*got = r.data.data_len;
		*eof = r.eof ? 1 : 0;
	}
	xdr_free(NSR_XDR(xdr_mmd_next_res), (char *)&r);
	return rc;
}
