/*
 * jobd_clnt.h - client side of nsrjobd's protocol (src/rpc/nsrjob.x):
 * what nsrd, save, recover and jobquery call to record jobs and read them
 * back, so nobody writes the RPC calls twice.
 *
 * Calling sequence of a job's owner (nsrd, save, recover):
 *   1. nsr_jobd_open(server, &j, &err)        locate nsrjobd and connect;
 *   2. nsr_jobd_create(j, &job, &id, &err)    the job row (state QUEUED if
 *                                             job.state is 0), or
 *      nsr_jobd_create_log(j, &job, lines, n, &id, &err) the row and its
 *                                             first log lines at once;
 *   3. nsr_jobd_set_state(j, id, ACTIVE, NULL, &err) when it starts,
 *      nsr_jobd_log(j, id, "line", &err) as it goes,
 *      nsr_jobd_update(j, id, NSR_JOBDB_F_BYTES | ..., &v, &err) for other
 *      fields, nsr_jobd_set_state(j, id, COMPLETED, "succeeded", &err) at
 *      the end (the server stamps the end time);
 *   4. nsr_jobd_close(j).
 *
 * Calling sequence of a reader (jobquery):
 *   1. nsr_jobd_query_open(j, q, &err)        q is a parsed query session
 *                                             (nsr_jobdb_query_parse); the
 *                                             server parses its canonical
 *                                             text again and keeps a cursor
 *                                             for this connection;
 *   2. while nsr_jobd_query_next(j, &job, &err) == NSR_OK:
 *          nsr_jobd_print(j, fmt, &out) or read *job directly;
 *      NSR_ERR_EOF ends the result;
 *   3. another query_open, or close.
 * The rows arrive in batches of at most NSR_JOBD_BATCH jobs, so neither
 * side holds more than one batch whatever the result size.
 *
 * Errors: every function returns NSR_OK or a negative NSR_ERR_* code.
 * NSR_ERR_CONNECT / _RPC / _TIMEOUT when nsrjobd cannot be reached or the
 * call failed; otherwise the server's code (NSR_ERR_NOTFOUND for an unknown
 * job id, NSR_ERR_SYNTAX for a bad query, ...).  err (may be NULL) gets a
 * message for an administrator: what failed and where ("line 1, column 8:
 * expected ':' after attribute name").  A handle is used by one thread at a
 * time.  The library never logs and never exits.
 */
#ifndef NSR_JOBD_CLNT_H
#define NSR_JOBD_CLNT_H

#include <stdint.h>

#include "nsr/jobdb.h"
#include "nsr/rpc/nsrjob.h"

struct nsr_buf;
struct nsr_rpc_clnt;
struct nsr_jobd; /* one connection to nsrjobd */

#define NSR_JOBD_BATCH 64 /* jobs asked for per JOB_QUERY_NEXT */

/* nsr_jobd_open - locate nsrjobd on server (NULL = localhost) through its
 * nsrexecd and connect.  *out is NULL on failure; err says why. */
int nsr_jobd_open(const char *server, struct nsr_jobd **out,
		  struct nsr_buf *err);
/* nsr_jobd_connect - connect to nsrjobd at host:port directly (tests). */
int nsr_jobd_connect(const char *host, int port, struct nsr_jobd **out,
		     struct nsr_buf *err);
/* nsr_jobd_close - close the connection; NULL is allowed. */
void nsr_jobd_close(struct nsr_jobd *j);
/* nsr_jobd_new - a long-lived handle for a daemon: connects on its
 * first call and, whenever it has to (re)connect, keeps trying for up to
 * wait_ms (nsrjobd may be restarting).  NSR_OK or NSR_ERR_NOMEM. */
int nsr_jobd_new(const char *server, int wait_ms, struct nsr_jobd **out);
/* nsr_jobd_set_timeout - reply timeout of later calls (ms). */
void nsr_jobd_set_timeout(struct nsr_jobd *j, int reply_ms);

/* nsr_jobd_create - record a new job; *id gets its id.  Text members may
 * be NULL; type must be set; state 0 means QUEUED. */
int nsr_jobd_create(struct nsr_jobd *j, const struct nsr_jobdb_job *job,
		    int64_t *id, struct nsr_buf *err);
/* nsr_jobd_create_log - nsr_jobd_create and nsr_jobd_log of each of
 * lines[0 .. nlines - 1] in one call and one transaction of nsrjobd
 * (JOB_CREATE_LOG): the job is recorded with all its lines or not at all
 * (*id 0).  Lines are cut as nsr_jobd_log cuts them and stamped when
 * recorded.  At most JOB_CREATE_LINES_MAX (8) lines, else NSR_ERR_INVAL;
 * with none it is nsr_jobd_create. */
int nsr_jobd_create_log(struct nsr_jobd *j, const struct nsr_jobdb_job *job,
			const char *const *lines, size_t nlines, int64_t *id,
			struct nsr_buf *err);
/* nsr_jobd_create_many - nsr_jobd_create_log of v[0..n) (v[i].time is
 * not sent: lines are stamped when recorded) in one call and one
 * transaction of nsrjobd (JOB_CREATE_MANY): all of them (ids[i] for
 * v[i]) or none (every id 0).  n at most JOB_CREATE_MANY_MAX (64), each
 * with at most JOB_CREATE_LINES_MAX lines, else NSR_ERR_INVAL.
 * *answered (if not NULL) is 1 when nsrjobd answered, success or
 * refusal (then nothing was made), 0 when the call failed on the way
 * (the jobs may or may not have been made). */
int nsr_jobd_create_many(struct nsr_jobd *j, const struct nsr_jobdb_new *v,
			 size_t n, int64_t *ids, int *answered,
			 struct nsr_buf *err);
/* nsr_jobd_update - store the members of v named in fields (a mask of
 * enum nsr_jobdb_field) into job id. */
int nsr_jobd_update(struct nsr_jobd *j, int64_t id, unsigned fields,
		    const struct nsr_jobdb_job *v, struct nsr_buf *err);
/* nsr_jobd_set_state - set job id's state and, if status is not NULL,
 * its completion status text.  A finished state (COMPLETED, FAILED,
 * ABORTED) stamps the end time on the server if none is set. */
int nsr_jobd_set_state(struct nsr_jobd *j, int64_t id,
		       enum nsr_jobdb_state state, const char *status,
		       struct nsr_buf *err);
/* nsr_jobd_log - append one line to job id's log, stamped now by the
 * server.  Lines longer than 4096 bytes are cut (NSR_ERR_TOOBIG is not
 * returned: a log line is never worth failing a job for). */
int nsr_jobd_log(struct nsr_jobd *j, int64_t id, const char *line,
		 struct nsr_buf *err);
/* nsr_jobd_logf - nsr_jobd_log with a printf format. */
int nsr_jobd_logf(struct nsr_jobd *j, int64_t id, struct nsr_buf *err,
		  const char *fmt, ...) NSR_PRINTF(4, 5);

/* nsr_jobd_query_open - start a query: q's filter runs on the server; q's
 * show list decides what nsr_jobd_print prints and whether logs are
 * fetched.  q is copied (as text); the caller keeps it.  Ends any query
 * already open on this connection. */
int nsr_jobd_query_open(struct nsr_jobd *j, const struct nsr_jobdb_query *q,
			struct nsr_buf *err);
/* nsr_jobd_query_open_text - the same with raw jobquery text (statements
 * one per line, as a user typed them); every attribute is shown and logs
 * are fetched when with_log is set.  Syntax errors come back from the
 * server as NSR_ERR_SYNTAX with "line L, column C: what was expected". */
int nsr_jobd_query_open_text(struct nsr_jobd *j, const char *text,
			     int with_log, struct nsr_buf *err);
/* nsr_jobd_query_next - the next matching job, in job id order; *job
 * points into the handle and is valid until the next call.  NSR_OK,
 * NSR_ERR_EOF after the last one, or an error. */
int nsr_jobd_query_next(struct nsr_jobd *j, const struct nsr_jobdb_job **job,
			struct nsr_buf *err);
/* nsr_jobd_log_read - call fn for each log line of the current job (only
 * when logs were fetched; seq = 1, 2, ...).  A non-zero return of fn stops
 * and is returned. */
int nsr_jobd_log_read(struct nsr_jobd *j, nsr_jobdb_log_fn fn, void *arg);
/* nsr_jobd_print - append the current job, limited to the query's show
 * list, to out with the jobs library's own printer (nsr_jobdb_print), so
 * the bytes equal nsr_jobdb_cursor_print's: aligned nsradmin "attribute:
 * value;" blocks or one JSON object per line.  Needs a query opened with
 * nsr_jobd_query_open (NSR_ERR_STATE otherwise). */
int nsr_jobd_print(struct nsr_jobd *j, enum nsr_jobdb_format fmt,
		   struct nsr_buf *out);

/* nsr_jobd_purge - purge now on the server: finished jobs that ended more
 * than retention_hours ago (0 = the daemon's configured retention).  *st
 * (may be NULL) gets the counts. */
int nsr_jobd_purge(struct nsr_jobd *j, unsigned retention_hours,
		   struct nsr_jobdb_purge_stats *st, struct nsr_buf *err);
/* nsr_jobd_backup - have nsrjobd write a copy of the jobs database as
 * <root>/bootstrap/jobsdb (the directory must exist: nsrbootstrap(8));
 * *bytes (may be NULL) gets its size. */
int nsr_jobd_backup(struct nsr_jobd *j, uint64_t *bytes,
		    struct nsr_buf *err);

/*
 * Wire helpers shared with nsrjobd.  The `log` string of a job_row holds
 * the job's log lines, one per text line: "<seq> <time> <text>\n" with
 * '\\' and newlines in the text written as "\\\\" and "\\n".
 */
/* nsr_jobd_log_encode - append one encoded log line to out. */
int nsr_jobd_log_encode(struct nsr_buf *out, int64_t seq, int64_t time,
			const char *line);
/* nsr_jobd_log_decode - call fn for each line of an encoded log;
 * NSR_ERR_CORRUPT if it is malformed, else fn's first non-zero return. */
int nsr_jobd_log_decode(const char *log, nsr_jobdb_log_fn fn, void *arg);

/* The job record on the wire, for both ends of the protocol (the one
 * codec of nsrjob.x's job_rec).  Both borrow: no copies, nothing to free.
 * nsr_jobd_rec_from_job - unset (NULL) members travel as "".
 * nsr_jobd_job_from_rec - "" comes back as NULL. */
void nsr_jobd_rec_from_job(job_rec *r, const struct nsr_jobdb_job *job);
void nsr_jobd_job_from_rec(struct nsr_jobdb_job *job, const job_rec *r);

#endif /* NSR_JOBD_CLNT_H */
