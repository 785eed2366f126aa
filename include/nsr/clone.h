/*
 * clone.h - copying save sets to volumes of another pool (nsrclone) and
 * staging them there (nsrstage): the client side of a clone session.
 *
 * Calling sequence:
 *   1. nsr_nsrd_open(server, &d, err) (nsrd_clnt.h);
 *   2. optionally nsr_clone_select(server, query, pin, &v, &n, err): the
 *      save sets (ssid, cloneid) that match mminfo query text, one entry
 *      per save set, for -q, -V, -t and -g;
 *   3. nsr_clone_ssid(d, &opts, ssid, cloneid, &res, err) for each save
 *      set, one after another:
 *        a. CLONE_START at nsrd: a new clone instance of the save set in
 *           progress on a writable volume of opts.pool that holds no copy
 *           of it, the fragments of the copy to read and both movers;
 *        b. the bytes of the copy read from its volume's mover (each run
 *           of fragments from the mover of its volume) are written,
 *           pipelined, to the destination mover under the new cloneid
 *           (they pass through this process: the simplest honest form;
 *           movers do not talk to each other); the session's lease is
 *           renewed at nsrd while it copies;
 *        c. the destination mover makes the copy durable and records its
 *           fragment, then CLONE_END marks the instance complete; with
 *           opts.stage the copy read is removed afterwards (its AFTD bytes
 *           freed), so a failure between leaves both copies.
 *      On any failure the new instance is ended aborted, the copy read
 *      stays untouched, and err says why.
 *   4. nsr_nsrd_close(d).
 * Nothing here prints or logs: notices (which copy is read and why, what
 * staging freed) reach the caller through opts.notice.
 *
 * Errors: NSR_OK or a negative nsr_err code: nsrd's (NSR_ERR_NOTFOUND: no
 * such save set, pool or writable volume; NSR_ERR_STATE: not complete,
 * its volume not mounted; NSR_ERR_EXISTS: the volume holds a copy
 * already; NSR_ERR_BUSY: a clone of it runs), a mover's or a transport
 * one, with words in err.
 */
#ifndef NSR_CLONE_H
#define NSR_CLONE_H

#include <stddef.h>
#include <stdint.h>

struct nsr_buf;
struct nsr_nsrd;

struct nsr_clone_opts {
	const char *server;	/* nsrd's host (movers named "" are there) */
	const char *pool;	/* destination pool (required) */
	const char *client;	/* who clones, for the job record */
	const char *command;	/* for the job record */
	int stage;		/* remove the copy read once the new one is
				 * complete (nsrstage -m) */
	/* Optional: one line for the administrator. */
	void (*notice)(void *ctx, const char *msg);
	void *ctx;
};

struct nsr_clone_result {
	uint32_t cloneid;	/* the new instance */
	uint32_t src_cloneid;	/* the copy read */
	uint64_t bytes;		/* copied */
	char volume[65];	/* destination volume (the first) */
	char last_volume[65];	/* the last, when the copy spans */
	unsigned spans;		/* volumes the copy went on to */
};

/* A save set to clone: cloneid 0 = any complete copy. */
struct nsr_clone_item {
	uint32_t ssid;
	uint32_t cloneid;
};

/* nsr_clone_ssid - clone save set ssid (the copy cloneid, 0 = nsrd picks
 * one) to a volume of o->pool through d; *res (may be NULL) gets what was
 * made.  See the calling sequence. */
int nsr_clone_ssid(struct nsr_nsrd *d, const struct nsr_clone_opts *o,
		   uint32_t ssid, uint32_t cloneid,
		   struct nsr_clone_result *res, struct nsr_buf *err);

/* nsr_clone_items_unique - v[0..*n) with each ssid once, its first
 * entry kept, in the order they first came; *n the new count.  NSR_OK or
 * NSR_ERR_NOMEM (v unchanged). */
int nsr_clone_items_unique(struct nsr_clone_item *v, size_t *n);

/* nsr_clone_select - the complete save sets matching mminfo query text
 * (nsr_mmquery syntax, e.g. "volume=V", "savetime>=yesterday",
 * "group=G"), each once, in ssid order, into a malloc'ed *out (*n
 * entries); the caller frees it.  With pin, each entry names the copy
 * of the first matching row (for "volume=V": the copy on V, which
 * nsrstage -V then moves), else cloneid 0 (any copy).  NSR_OK (possibly
 * none), or the media database's error with words in err. */
int nsr_clone_select(const char *server, const char *query, int pin,
		     struct nsr_clone_item **out, size_t *n,
		     struct nsr_buf *err);

#endif /* NSR_CLONE_H */
