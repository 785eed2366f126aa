/*
 * session.h - the client's session driver: one backup of a save set from
 * start to settled, as `save` (and the test clients) run it.
 *
 * nsr_session_save() does, in order:
 *   1. SAVE_START at nsrd on the server (admission, the save set and its
 *      job, the volume and the data mover chosen);
 *   2. connects to that mover (on the storage node nsrd names) and to
 *      nsrindexd, and begins the fragment and the index session;
 *   3. walks the paths and streams them (saver.h), renewing the session's
 *      lease at nsrd while it streams, sending index entries in batches;
 *   4. ends the mover session (the data is durable and recorded), commits
 *      the index, and only then reports the save set complete (SAVE_END).
 * If anything fails after step 1, the index session is aborted and the
 * save set reported aborted with the reason; if nsrd cannot be told, nsrd
 * settles it itself when the session's lease lapses (r->told_server says
 * which happened).  Nothing here prints or logs: problems reach the
 * caller through the callbacks and err.
 */
#ifndef NSR_SESSION_H
#define NSR_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "nsr/asm.h"
#include "nsr/saver.h"

struct nsr_buf;

struct nsr_session_save_opts {
	const char *server;	/* nsrd's host (required) */
	const char *client;	/* client name (required) */
	const char *name;	/* save set name (required) */
	const char *level;	/* "" = manual */
	const char *pool;	/* "" = chosen by the server */
	const char *command;	/* for the job record */
	int64_t browse_time;	/* 0 = the client's policy */
	int64_t retention_time; /* 0 = the client's policy */
	int dry_run;		/* walk only; contact nobody */
	/* Optional callbacks (ctx is handed to each). */
	void (*file)(void *ctx, const struct nsr_asm_file *f);
	void (*file_error)(void *ctx, const char *path, int err,
			   const char *what);
	void (*warn)(void *ctx, const char *msg);
	void *ctx;
};

struct nsr_session_save_result {
	uint32_t ssid;		     /* 0 if no save set was made */
	int64_t savetime;
	char pool[65];
	struct nsr_saver_stats st;   /* files, bytes, per-file errors */
	int told_server;	     /* on failure: nsrd marked it aborted
				      * (or complete, with no_index) */
	int no_index;		     /* failed only in the index: the save
				      * set is complete, not browsable */
};

/* nsr_session_save - back up paths (absolute) as one save set.  NSR_OK
 * when the save set is complete (r->st.errors counts files that could
 * not be saved); otherwise an nsr_err code with the reason in err. */
int nsr_session_save(const struct nsr_session_save_opts *o,
		     char *const *paths, size_t npaths,
		     struct nsr_session_save_result *r, struct nsr_buf *err);

#endif /* NSR_SESSION_H */
