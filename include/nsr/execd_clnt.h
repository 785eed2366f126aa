/*
 * execd_clnt.h - the client library of nsrexecd's remote execution
 * (RUN_SAVE, RUN_POLL in src/rpc/nsrexecd.x): the server asks a client
 * host's nsrexecd to run save and learns how each save set ended.  nsrd's
 * scheduler and the tests use it; nothing else speaks these procedures.
 *
 * Calling sequence:
 *   1. nsr_execd_new(host, wait_ms, &h): a handle for nsrexecd on host,
 *      reached at the host's locator port (NSR_PORTMAP_PORT), connected on
 *      first use;
 *   2. nsr_execd_run_save(h, &args, &run, err): the saves start; run
 *      names them;
 *   3. nsr_execd_poll(h, run, &st, err) until st.done (each save set's
 *      state, exit code and last lines of stderr); after a done answer
 *      the run is forgotten on the host; nsr_execd_status_free(&st);
 *   4. nsr_execd_close(h).
 * Errors: NSR_OK or a negative nsr_err code; err (may be NULL) gets the
 * reason, naming the host (the transport's words or nsrexecd's).  Not
 * thread-safe: one handle per thread or a lock around it.
 */
#ifndef NSR_EXECD_CLNT_H
#define NSR_EXECD_CLNT_H

#include <stddef.h>
#include <stdint.h>

struct nsr_buf;
struct nsr_execd;

/* What to run (strings borrowed; NULL or "" = not given). */
struct nsr_execd_save {
	const char *server;
	const char *client;
	const char *group;
	const char *level;		/* full, incr, 1-9 */
	const char *const *savesets;	/* paths, or "All" alone */
	size_t nsavesets;
	const char *pss;		/* save --pss=SPEC */
	int parallelism;		/* save --parallelism=N; 0 = none */
};

enum nsr_execd_set_state {
	NSR_EXECD_RUNNING = 0,
	NSR_EXECD_ENDED = 1,	/* exit_code (or signal) says how */
	NSR_EXECD_NOSTART = 2,	/* tail says why */
};

struct nsr_execd_set {
	char *name;
	int state;
	int exit_code;
	int signal;
	char *tail;	/* last lines of its stderr */
};

struct nsr_execd_status {
	int done;
	size_t n;
	struct nsr_execd_set *sets;
};

/* nsr_execd_new - a handle for nsrexecd on host (connect on first use,
 * trying for up to wait_ms).  NSR_OK or NSR_ERR_NOMEM. */
int nsr_execd_new(const char *host, int wait_ms, struct nsr_execd **out);
/* nsr_execd_set_timeout - reply timeout of later calls (ms). */
void nsr_execd_set_timeout(struct nsr_execd *h, int reply_ms);
/* nsr_execd_host - the host as named. */
const char *nsr_execd_host(const struct nsr_execd *h);
/* nsr_execd_run_save - RUN_SAVE; *run gets the run's id. */
int nsr_execd_run_save(struct nsr_execd *h, const struct nsr_execd_save *a,
		       uint64_t *run, struct nsr_buf *err);
/* nsr_execd_poll - RUN_POLL: st gets every save set's state (free it
 * with nsr_execd_status_free whatever the result). */
int nsr_execd_poll(struct nsr_execd *h, uint64_t run,
		   struct nsr_execd_status *st, struct nsr_buf *err);
/* nsr_execd_revoked_notify - REVOKED_NOTIFY: the server's revocation
 * list changed; the host's nsrexecd fetches it now. */
int nsr_execd_revoked_notify(struct nsr_execd *h, struct nsr_buf *err);
/* nsr_execd_status_free - free what a poll gave; st is empty after. */
void nsr_execd_status_free(struct nsr_execd_status *st);
/* nsr_execd_close - close and free (NULL is fine). */
void nsr_execd_close(struct nsr_execd *h);

#endif /* NSR_EXECD_CLNT_H */
