/*
 * browse.h - browsing a client's file index from the client side: the
 * report of nsrinfo, and the interactive browser of recover (the
 * recover> prompt), which marks files in the index as of a browse time
 * and restores them through the recover session (session.h).
 *
 * Everything talks to nsrindexd through src/clnt/index and to nsrmmdbd
 * (levels of save sets, for `versions`) through src/clnt/mmdb; nothing
 * here exits: errors return nsr_err codes with words in err.
 */
#ifndef NSR_BROWSE_H
#define NSR_BROWSE_H

#include <stdint.h>
#include <stdio.h>

#include "nsr/session.h"

struct nsr_buf;

/* ---- nsrinfo ---------------------------------------------------------- */

struct nsr_browse_info_opts {
	const char *server; /* nsrindexd's host */
	const char *client; /* whose index */
	int64_t savetime;   /* only save sets of exactly this time; 0 = all */
	uint64_t ssid;	    /* only this save set; 0 = all */
	const char *name;   /* only entries with exactly this path; NULL */
	int verbose;	    /* size, type, mode, ssid per entry */
	FILE *out;
};

/* nsr_browse_info - print the client's index contents NetWorker style:
 * "scanning client `c' for ...", one "path, date=T <date>" line per
 * entry, "N objects found".  NSR_ERR_NOTFOUND with words in err for an
 * unknown client, a save time no save set has, or an unknown ssid;
 * NSR_ERR_CONNECT etc. when the server cannot be reached. */
int nsr_browse_info(const struct nsr_browse_info_opts *o, struct nsr_buf *err);

/* ---- the interactive browser ------------------------------------------ */

/* Reads one line (without its newline) into line after showing prompt:
 * 1 = a line, 0 = end of input, < 0 = an error. */
typedef int (*nsr_browse_read_fn)(void *ctx, const char *prompt,
				  struct nsr_buf *line);

struct nsr_browse_opts {
	/* the recover session's options: server, client, dest, conflict
	 * and callbacks; relocate and force change a copy of them */
	struct nsr_session_recover_opts rec;
	int64_t browse;	 /* browse time; 0 = now */
	const char *cwd; /* starting directory (NULL = "/") */
	nsr_browse_read_fn read;
	void *read_ctx;
	FILE *out; /* answers (errors too: the session is a dialogue) */
};

/* nsr_browse_run - the recover> dialogue until quit or end of input.
 * Returns 0 when every recover asked for succeeded, 1 when one failed
 * (a script driving it through stdin can trust it), or an nsr_err code
 * when the browser could not start (index unreachable, no index for the
 * client: words in err). */
int nsr_browse_run(const struct nsr_browse_opts *o, struct nsr_buf *err);

#endif /* NSR_BROWSE_H */
