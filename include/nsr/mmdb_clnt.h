/*
 * mmdb_clnt.h - the client library of nsrmmdbd, the media database daemon.
 *
 * Every program that reads or writes the media database over the network
 * (nsrd, nsrmmd, mminfo, scanner, nsrmm) uses this module instead of
 * writing RPC calls itself.  Functions take and return the record structs
 * of mmdb.h; conversion to and from the wire structs of nsrmmdb.x happens
 * here (and the daemon uses the same conversions).
 *
 * Calling sequence:
 *   1. mmdb_clnt_open(server, &c, &err)   locate nsrmmdbd through the
 *      nsrexecd locator of server (NULL = this host) and connect;
 *   2. any number of calls, one RPC each; a write returns NSR_OK only once
 *      the daemon has made it durable;
 *   3. queries: mmdb_clnt_query_open(c, text, ...), then
 *      mmdb_clnt_query_next_rows() / _next_vols() until *done is set; the
 *      daemon keeps the cursor per connection, so one query at a time per
 *      handle, and neither side ever holds all matching rows;
 *   4. mmdb_clnt_close(c).
 *
 * Errors: every call returns NSR_OK or a negative NSR_ERR_* code and, on
 * failure, mmdb_clnt_errmsg(c) says what failed in words for an
 * administrator (the daemon's message, or the transport's naming host and
 * port).  Codes from the daemon are those of mmdb.h (NSR_ERR_NOTFOUND,
 * NSR_ERR_EXISTS, NSR_ERR_INVAL, NSR_ERR_SYNTAX for a bad query, ...).
 * Transport failures are NSR_ERR_RPC, NSR_ERR_TIMEOUT or NSR_ERR_CONNECT.
 * After a transport failure the call's outcome is unknown (a write may or
 * may not have been committed); the handle drops the connection and the
 * next call connects again (an open query is lost: NSR_ERR_STATE).
 *
 * A handle is not thread-safe: use one per thread.
 */
#ifndef NSR_MMDB_CLNT_H
#define NSR_MMDB_CLNT_H

#include <stddef.h>
#include <stdint.h>

#include "nsr/mmdb.h"
#include "nsr/rpc/nsrmmdb.h"

struct nsr_buf;
struct mmdb_clnt;

/* ---- connection ------------------------------------------------------ */

/*
 * mmdb_clnt_open - connect to nsrmmdbd on server (NULL or "" = this host,
 * "localhost").  On success *out owns the handle (free with
 * mmdb_clnt_close).  On failure returns the code and, if err is not NULL,
 * appends the reason naming the host and port to err.
 */
int mmdb_clnt_open(const char *server, struct mmdb_clnt **out,
		   struct nsr_buf *err);
/* mmdb_clnt_connect - as mmdb_clnt_open, but to a known port (port 0 =
 * ask the locator), for tests and callers that know where nsrmmdbd is. */
int mmdb_clnt_connect(const char *server, int port, struct mmdb_clnt **out,
		      struct nsr_buf *err);
/* mmdb_clnt_new - a long-lived handle for a daemon: it connects on its
 * first call and, whenever it has to (re)connect, keeps trying for up to
 * wait_ms (nsrmmdbd may be restarting); idempotent calls are repeated
 * once after a transport failure.  NSR_OK or NSR_ERR_NOMEM. */
int mmdb_clnt_new(const char *server, int wait_ms, struct mmdb_clnt **out);
/* mmdb_clnt_set_wait - change how long (re)connecting may wait. */
void mmdb_clnt_set_wait(struct mmdb_clnt *c, int wait_ms);
/* mmdb_clnt_close - close the connection and free; NULL is a no-op. */
void mmdb_clnt_close(struct mmdb_clnt *c);
/* mmdb_clnt_errmsg - text of the last failure on c ("" if none); valid
 * until the next call on c. */
const char *mmdb_clnt_errmsg(const struct mmdb_clnt *c);
/* mmdb_clnt_answered - 1 if the last call on c got nsrmmdbd's reply
 * (its failure is the daemon's answer), 0 if no reply came (not sent,
 * connection lost, timeout): a change it asked for may or may not have
 * been made. */
int mmdb_clnt_answered(const struct mmdb_clnt *c);
/* mmdb_clnt_set_timeout - reply timeout of each call (default 300 s). */
void mmdb_clnt_set_timeout(struct mmdb_clnt *c, int timeout_ms);

/* ---- volumes --------------------------------------------------------- */

/* mmdb_clnt_vol_get - volume by name into *out; NSR_ERR_NOTFOUND if none. */
int mmdb_clnt_vol_get(struct mmdb_clnt *c, const char *name,
		      struct mmdb_volume *out);
/* mmdb_clnt_vol_get_by_id - volume by its 16-byte volid into *out. */
int mmdb_clnt_vol_get_by_id(struct mmdb_clnt *c, const uint8_t volid[16],
			    struct mmdb_volume *out);
/* mmdb_clnt_vol_put - insert or replace (by name) a volume; NSR_ERR_EXISTS
 * if its volid belongs to another volume. */
int mmdb_clnt_vol_put(struct mmdb_clnt *c, const struct mmdb_volume *vol);
/* mmdb_clnt_vol_delete - remove a volume and every fragment on it. */
int mmdb_clnt_vol_delete(struct mmdb_clnt *c, const char *name);
/*
 * mmdb_clnt_vol_written - atomically add add_written bytes to the volume's
 * written count, OR set_flags (MMDB_VOL_*) into its flags and move its
 * append position forward to (next_file, next_record) (a position behind
 * the stored one is kept as stored, so concurrent sessions never move it
 * back).  NSR_ERR_NOTFOUND if no volume has volid.
 */
int mmdb_clnt_vol_written(struct mmdb_clnt *c, const uint8_t volid[16],
			  uint64_t add_written, uint32_t next_file,
			  uint64_t next_record, uint32_t set_flags);
/* mmdb_clnt_vol_unwritten - atomically take sub_written bytes off the
 * volume's written count (not below 0) and clear clear_flags (MMDB_VOL_*,
 * e.g. full): the data of deleted save sets was removed from it.
 * NSR_ERR_NOTFOUND if no volume has volid. */
int mmdb_clnt_vol_unwritten(struct mmdb_clnt *c, const uint8_t volid[16],
			    uint64_t sub_written, uint32_t clear_flags);

/* ---- save sets and fragments ----------------------------------------- */

/*
 * mmdb_clnt_ss_create - store a new save set.  ss->ssid and ss->longid are
 * ignored and set on success; *cloneid_out (may be NULL) gets the cloneid
 * of its first clone instance.
 */
int mmdb_clnt_ss_create(struct mmdb_clnt *c, struct mmdb_saveset *ss,
			uint32_t *cloneid_out);
/* mmdb_clnt_ss_create_many - store n new save sets (1 to
 * MM_CREATE_MANY_MAX, 64) in one call and one transaction: all of them
 * (ss[i].ssid, ss[i].longid and cloneid[i] set) or none.  As with
 * mmdb_clnt_ss_create, a failure that mmdb_clnt_answered() says got no
 * reply may or may not have created them. */
int mmdb_clnt_ss_create_many(struct mmdb_clnt *c, struct mmdb_saveset *ss,
			     size_t n, uint32_t *cloneid);
/* mmdb_clnt_ss_restore - store ss under the ssid it already has, with
 * clone instance cloneid (0 = from savetime); NSR_ERR_EXISTS if taken.
 * For scanner -m rebuilding a lost media database. */
int mmdb_clnt_ss_restore(struct mmdb_clnt *c, struct mmdb_saveset *ss,
			 uint32_t cloneid);
/* mmdb_clnt_ss_update - replace the attributes of save set ss->ssid. */
int mmdb_clnt_ss_update(struct mmdb_clnt *c, const struct mmdb_saveset *ss);
/* mmdb_clnt_ss_get - save set by ssid into *out. */
int mmdb_clnt_ss_get(struct mmdb_clnt *c, uint32_t ssid,
		     struct mmdb_saveset *out);
/* mmdb_clnt_ss_flags - OR set into the flags of save set ssid, then
 * clear the bits of clear (MMDB_SS_*), atomically at the server.
 * NSR_ERR_NOTFOUND if the save set is not in the database. */
int mmdb_clnt_ss_flags(struct mmdb_clnt *c, uint32_t ssid, uint32_t set,
		       uint32_t clear);
/* One change of mmdb_clnt_ss_flags_many. */
struct mmdb_clnt_flags {
	uint32_t ssid, set, clear;
};
/* mmdb_clnt_ss_flags_many - n changes as mmdb_clnt_ss_flags, one
 * transaction per MM_FLAGS_MAX of them (one commit each); save sets not
 * in the database are skipped and counted in *missing (may be NULL). */
int mmdb_clnt_ss_flags_many(struct mmdb_clnt *c,
			    const struct mmdb_clnt_flags *v, size_t n,
			    unsigned *missing);
/* One volume's retention time for mmdb_clnt_vol_retent_many. */
struct mmdb_clnt_retent {
	uint8_t volid[16];
	int64_t volretent;
};
/* mmdb_clnt_vol_retent_many - set the retention time (volretent) of n
 * volumes, one transaction per MM_FLAGS_MAX of them (recording a
 * fragment only ever raises it to its save set's retention; nsrim sets
 * the latest effective retention of each volume's save sets).  Volumes
 * not in the database are skipped and counted in *missing (may be
 * NULL). */
int mmdb_clnt_vol_retent_many(struct mmdb_clnt *c,
			      const struct mmdb_clnt_retent *v, size_t n,
			      unsigned *missing);
/* mmdb_clnt_ss_delete - remove a save set with its fragments and clones. */
int mmdb_clnt_ss_delete(struct mmdb_clnt *c, uint32_t ssid);
/* mmdb_clnt_ss_delete_many - remove the save sets ssids[0..n) as
 * mmdb_clnt_ss_delete does, one transaction (one commit) per
 * MM_DELETE_MANY_MAX of them, all of a batch or none; one not in the
 * database (or repeated) is skipped, not a failure.  Against an
 * nsrmmdbd that does not know MM_SS_DELETE_MANY (an older version) it
 * sends one MM_SS_DELETE each.  *done (may be NULL) gets how many of
 * ssids were dealt with, in order (all of them on NSR_OK, those before
 * the failing batch or save set otherwise), *deleted (may be NULL) how
 * many of those were removed.  NSR_OK or the first failure. */
int mmdb_clnt_ss_delete_many(struct mmdb_clnt *c, const uint32_t *ssids,
			     size_t n, size_t *done, size_t *deleted);
/* mmdb_clnt_frag_add - record a fragment (its save set, clone and volume
 * must exist); (ssid, cloneid, seq) is replaced if present. */
int mmdb_clnt_frag_add(struct mmdb_clnt *c, const struct mmdb_fragment *f);
/* mmdb_clnt_frag_list - fragments of ssid into out[0..max); *n = how many
 * the daemon returned (at most MM_FRAGS_MAX; entries beyond max are
 * dropped). */
int mmdb_clnt_frag_list(struct mmdb_clnt *c, uint32_t ssid,
			struct mmdb_fragment *out, size_t max, size_t *n);

/* mmdb_clnt_clone_add - add a clone instance to save set cl->ssid
 * (cl->cloneid 0 = the daemon picks a free id, into *cloneid_out, which
 * may be NULL); NSR_ERR_TOOBIG past MMDB_CLONES_MAX instances. */
int mmdb_clnt_clone_add(struct mmdb_clnt *c, const struct mmdb_clone *cl,
			uint32_t *cloneid_out);
/* mmdb_clnt_clone_set - OR set into the flags (MMDB_CLONE_*) of clone
 * instance cloneid of ssid, then clear clear, atomically. */
int mmdb_clnt_clone_set(struct mmdb_clnt *c, uint32_t ssid, uint32_t cloneid,
			uint32_t set, uint32_t clear);
/* mmdb_clnt_clone_remove - remove clone instance cloneid of ssid with its
 * fragments, taking their bytes off each AFTD volume's written figure
 * (remove the files first, nsr_mmd_ss_remove).  NSR_ERR_STATE if it is
 * the save set's only instance, NSR_ERR_NOTFOUND if it is gone. */
int mmdb_clnt_clone_remove(struct mmdb_clnt *c, uint32_t ssid,
			   uint32_t cloneid);

/* ---- queries --------------------------------------------------------- */

/*
 * mmdb_clnt_query_open - open a cursor on the daemon for mminfo query text
 * (the -q language; "" or NULL = everything), over volumes with
 * MMDB_CLNT_Q_VOLUMES (1) in how, else over save set rows, in backup
 * chain order with MMDB_CLNT_Q_CHAINS (mmdb.h MMDB_CUR_CHAINS).  now is
 * the time relative dates ("yesterday") are evaluated against (0 = the
 * caller's current time).  A syntax error gives NSR_ERR_SYNTAX (or
 * NSR_ERR_INVAL) with the parser's message, which points at the mistake,
 * in mmdb_clnt_errmsg().
 */
#define MMDB_CLNT_Q_VOLUMES 0x1
#define MMDB_CLNT_Q_CHAINS 0x2
int mmdb_clnt_query_open(struct mmdb_clnt *c, const char *query,
			 unsigned how, int64_t now);
/*
 * mmdb_clnt_query_next_rows - up to max (<= MM_BATCH_MAX is asked for)
 * save set rows into rows[0..*n); *done is set when the cursor is
 * exhausted (the last batch may carry rows and done together).
 * NSR_ERR_STATE if no save set query is open on this connection.
 */
int mmdb_clnt_query_next_rows(struct mmdb_clnt *c, struct mmdb_ss_row *rows,
			      size_t max, size_t *n, int *done);
/* mmdb_clnt_query_next_vols - as _next_rows for a volume query. */
int mmdb_clnt_query_next_vols(struct mmdb_clnt *c, struct mmdb_volume *vols,
			      size_t max, size_t *n, int *done);

/* ---- maintenance ----------------------------------------------------- */

/* mmdb_clnt_check - run the database check on the daemon; the report lines
 * are appended to report (may be NULL).  NSR_OK if consistent,
 * NSR_ERR_CORRUPT if not. */
int mmdb_clnt_check(struct mmdb_clnt *c, struct nsr_buf *report);
/* mmdb_clnt_snapshot - have the daemon write a consistent snapshot of the
 * database as <root>/bootstrap/mmdb (the directory must exist: see
 * nsrbootstrap(8)); *commit_seq and *bytes (may be NULL) get the commit
 * it reflects and its size. */
int mmdb_clnt_snapshot(struct mmdb_clnt *c, uint64_t *commit_seq,
		       uint64_t *bytes);

/* ---- wire conversion (for nsrmmdbd and tests) ------------------------ */

/*
 * *_to_wire fill a wire struct from a record: strings are malloc'ed (never
 * NULL, "" when empty) and freed with xdr_free(xdr_<type>, w); NSR_OK or
 * NSR_ERR_NOMEM (w is then still safe to xdr_free).  The wire struct must
 * be zeroed by the caller first.
 * *_from_wire check a decoded wire struct (hostile input) and fill the
 * record: NSR_ERR_INVAL if a string is too long or a count out of range;
 * a NULL string reads as "".
 */
int mmdb_clnt_vol_to_wire(const struct mmdb_volume *v, mm_volume *w);
int mmdb_clnt_vol_from_wire(const mm_volume *w, struct mmdb_volume *v);
int mmdb_clnt_ss_to_wire(const struct mmdb_saveset *ss, mm_saveset *w);
int mmdb_clnt_ss_from_wire(const mm_saveset *w, struct mmdb_saveset *ss);
void mmdb_clnt_frag_to_wire(const struct mmdb_fragment *f, mm_fragment *w);
void mmdb_clnt_frag_from_wire(const mm_fragment *w, struct mmdb_fragment *f);
void mmdb_clnt_clone_to_wire(const struct mmdb_clone *cl, mm_clone *w);
void mmdb_clnt_clone_from_wire(const mm_clone *w, struct mmdb_clone *cl);
int mmdb_clnt_row_to_wire(const struct mmdb_ss_row *r, mm_row *w);
int mmdb_clnt_row_from_wire(const mm_row *w, struct mmdb_ss_row *r);

#endif /* NSR_MMDB_CLNT_H */
