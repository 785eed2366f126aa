/*
 * session.h - the client's session drivers: one backup of a save set from
 * start to settled, as `save` runs it, and the recover of save sets, as
 * `recover` runs it.
 *
 * nsr_session_save() does, in order:
 *   1. SAVE_START at nsrd on the server (admission, the level decided,
 *      the save set and its job, the volume and the data mover chosen);
 *   2. connects to that mover (on the storage node nsrd names) and to
 *      nsrindexd, and begins the fragment and the index session;
 *   3. walks the paths and streams them (saver.h; for an incr or level
 *      1-9 only what changed since the save time nsrd gave, and every
 *      directory with its entry list), renewing the session's
 *      lease at nsrd while it streams, sending index entries in batches;
 *   4. ends the mover session (the data is durable and recorded), commits
 *      the index, and only then reports the save set complete (SAVE_END,
 *      whose message, in the job log, gives the read size in use at the
 *      end and, for a pipeline save, how its command ended).
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
struct nsr_session_feed;
struct nsr_session_save_result;

struct nsr_session_save_opts {
	const char *server;	/* nsrd's host (required) */
	const char *client;	/* client name (required) */
	const char *name;	/* save set name (required) */
	const char *level;	/* "" = manual; nsrd may promote it to full
				 * (the warn callback says so) */
	const char *pool;	/* "" = chosen by the server */
	const char *group;	/* save -g: the group whose run this is,
				 * for its parallelism; NULL/"" = none */
	const char *command;	/* for the job record */
	int64_t browse_time;	/* 0 = the client's policy */
	int64_t retention_time; /* 0 = the client's policy */
	int dry_run;		/* walk only; contact nobody */
	int no_index;		/* no client file index entries: the save
				 * set is complete but not browsable (the
				 * bootstrap save, nsrbootstrap(8)) */
	uint64_t bigasm;	/* > 0: each path names a file of this many
				 * bytes generated in memory (nothing is
				 * read: bigasm), not a path to walk */
	/* Pipeline save: pipe names the one file saved (an absolute
	 * pseudo-path; paths are not walked), its data the standard output
	 * of the command pipe_argv (run with execvp, no shell; NULL: this
	 * process's standard input), read pipe_read bytes at a time (0 =
	 * 64 KB; nsr_saver_add_pipe).  A command that exits non-zero or is
	 * killed fails the save set; its exit status and the tail of its
	 * stderr are in err and in the job log. */
	const char *pipe;
	const char *const *pipe_argv;
	size_t pipe_read;
	/* Encryption at rest (nsr_savestream(5)): file data encrypted with
	 * the key of the datazone pass phrase (asked of nsrd before the
	 * save set is made; no pass phrase set: the save fails, or with
	 * NSR_SESSION_ENCRYPT_IF_SET it is saved in clear and the result
	 * says so), and/or compressed first (zlib level 1-9; 0 = not). */
	int encrypt;
	int compress;
	/* 1: leave out what the client's resource asks for (aes
	 * encryption, compression): a bootstrap, which nsrdr reads from
	 * the volume without nsrd (encrypt, which nsrbootstrap sets when a
	 * datazone pass phrase is set, still applies: nsrdr -P) */
	int no_directives;
	/* Optional callbacks (ctx is handed to each). */
	void (*file)(void *ctx, const struct nsr_asm_file *f);
	void (*file_error)(void *ctx, const char *path, int err,
			   const char *what);
	void (*warn)(void *ctx, const char *msg);
	/* stream bytes produced so far, every few megabytes */
	void (*progress)(void *ctx, uint64_t stream_bytes);
	/* pipeline save: the command's stderr (its last 64 KB), once it
	 * ended, if it wrote any */
	void (*pipe_stderr)(void *ctx, const char *text, size_t len);
	void *ctx;
	/* Parallel save streams (pss.h): this session is one stream of a
	 * save point.  pss_streams > 0: the master (/sp) of that many
	 * streams; pss_master != 0: dependent pss_index (1 ..), named
	 * "<pss_index>/sp", of the master with that ssid, which follows
	 * the master's level and saves what its feed gives unfiltered. */
	unsigned pss_streams;
	uint32_t pss_master;
	unsigned pss_index;
	/* Connections to the mover for the data (nsr_mmd_set_stripes): 0
	 * automatic, 1 one, up to MMD_STRIPES_MAX. */
	unsigned stripes;
	/* Objects from a feed instead of walking paths (NULL = walk). */
	const struct nsr_session_feed *feed;
	/* Optional: after SAVE_START, before the first object is read
	 * (r has ssid, savetime, level, since). */
	void (*started)(void *ctx, const struct nsr_session_save_result *r);
	/* Optional: a save set's counters just before its SAVE_END, rc
	 * NSR_OK when it is complete (msg holds the job log note: what
	 * end_note appends, "; " first, goes to the job log too), else
	 * the code it failed with (msg holds the reason it is aborted
	 * with, which end_note may add to). */
	void (*end_note)(void *ctx, const struct nsr_saver_stats *st, int rc,
			 struct nsr_buf *msg);
};

/* A source of walked objects for a session (pss.c feeds each stream). */
struct nsr_session_feed {
	/* next - the next object; NSR_ERR_EOF after the last; the entry
	 * stays valid until the next call (or done).  *part is NULL, or
	 * with split set the piece of a split file e is saved as
	 * (nsr_saver_add_part). */
	int (*next)(void *ctx, const struct nsr_walk_ent **e,
		    const struct nsr_saver_part **part);
	/* done - the session reads no more (rc: NSR_OK at the end, else
	 * why it stopped). */
	void (*done)(void *ctx, int rc);
	void *ctx;
	int split; /* parts of split files may come (version 7 stream) */
};

struct nsr_session_save_result {
	uint32_t ssid;		     /* 0 if no save set was made */
	int64_t savetime;
	char pool[65];
	struct nsr_saver_stats st;   /* files, bytes, per-file errors */
	char level[16];		     /* the level nsrd decided */
	int64_t since;		     /* level save: changes since, else 0 */
	uint32_t since_ssid;	     /* the save set it builds on, or 0 */
	int told_server;	     /* on failure: nsrd marked it aborted
				      * (or complete, with no_index) */
	int no_index;		     /* failed only in the index: the save
				      * set is complete, not browsable */
	char pipe_end[160];	     /* pipeline save with a command: how it
				      * ended ("command x exited with status
				      * 0"), else "" */
	unsigned stripes;	     /* connections the data went over */
	int encrypted;		     /* file data encrypted with the
				      * datazone pass phrase's key */
};

/* nsr_session_save_opts.encrypt: when the datazone has a pass phrase. */
#define NSR_SESSION_ENCRYPT_IF_SET 2

/* nsr_session_save - back up paths (absolute) as one save set.  NSR_OK
 * when the save set is complete (r->st.errors counts files that could
 * not be saved); otherwise an nsr_err code with the reason in err. */
int nsr_session_save(const struct nsr_session_save_opts *o,
		     char *const *paths, size_t npaths,
		     struct nsr_session_save_result *r, struct nsr_buf *err);

/* nsr_session_next_volume - the answer a span function (mmd_clnt.h)
 * gives when a volume fills: NEXT_VOLUME at nsrd d for save set ssid of
 * pool, never the full volume; a mover host "" from nsrd is server. */
struct nsr_nsrd;
struct nsr_mmd_next;
int nsr_session_next_volume(struct nsr_nsrd *d, const char *server,
			    uint32_t ssid, const char *pool,
			    const uint8_t full_volid[16],
			    struct nsr_mmd_next *nx, struct nsr_buf *err);

/*
 * Recover sessions:
 *   1. nsr_session_recover_open(&opts, &sr, err)   connects to nsrd;
 *      nsr_session_recover_copy(sr, ssid, cloneid) pins the copy
 *      (clone) of a save set to read (recover -S ssid/cloneid);
 *   2. nsr_session_recover_ssid(sr, ssid, paths, n, &st) for a save set
 *      (only the paths named, if any), nsr_session_recover_ssids(sr,
 *      ssids, n, paths, npaths, &st) for several (in the order given;
 *      those of one volume that cannot write the same path, by their
 *      names, read in one pass), or nsr_session_recover_paths(sr,
 *      paths, n, browse, &st) for paths as the client file index shows
 *      them at browse time (0 = now): a directory with the tree below
 *      it as it was then, each object from the save set holding its
 *      version (a full and the level saves after it), deleted ones left
 *      out, all paths in one recover (each volume read once for all of
 *      them); a path that was not there then is refused and the others
 *      are still restored.  Each returns 0 if
 *      everything came back intact, 1 otherwise (the messages say why);
 *   3. nsr_session_recover_close(sr).
 * A save set is read volume after volume from the mover nsrd names for
 * each (on the storage node holding it) into one restored stream; the
 * save sets of a point-in-time tree or a list that share a volume are
 * read from it in one pass, each into its own restore.  A save set
 * whose copy nsrd picked cannot be opened or read before any of it was
 * restored is read again from another copy (once).  A
 * damaged block is skipped: every intact file is recovered, the damaged
 * and the lost ones are named.
 */
enum nsr_session_msg {
	NSR_SESSION_NOTICE, /* progress for a terminal ("Recovering ...") */
	NSR_SESSION_WARN,   /* restored, with a reservation */
	NSR_SESSION_ERROR   /* something was not recovered, and why */
};

struct nsr_session_recover_opts {
	const char *server;	/* nsrd's host (required) */
	const char *client;	/* whose index, who recovers (required) */
	const char *dest;	/* relocate under dest (NULL = in place) */
	int conflict;		/* enum nsr_restore_conflict */
	int keep_damaged;	/* keep a damaged file as name.damaged */
	int workers;		/* writer threads for small files
				 * (restore.h workers; 0, 1: none) */
	int to_fd;		/* 1: the one file selected goes to out_fd
				 * (recover --pipe; restore.h to_fd) */
	int out_fd;
	/* Optional callbacks (ctx is handed to each). */
	void (*restored)(void *ctx, const struct nsr_asm_file *f,
			 const char *target);
	void (*message)(void *ctx, enum nsr_session_msg kind,
			const char *text);
	void *ctx;
};

struct nsr_session_recover;
struct nsr_restore_stats;

int nsr_session_recover_open(const struct nsr_session_recover_opts *o,
			     struct nsr_session_recover **out,
			     struct nsr_buf *err);
int nsr_session_recover_ssid(struct nsr_session_recover *sr, uint32_t ssid,
			     const char *const *paths, size_t npaths,
			     struct nsr_restore_stats *st);
int nsr_session_recover_ssids(struct nsr_session_recover *sr,
			      const uint32_t *ssids, size_t n,
			      const char *const *paths, size_t npaths,
			      struct nsr_restore_stats *st);
int nsr_session_recover_paths(struct nsr_session_recover *sr,
			      const char *const *paths, size_t n,
			      int64_t browse, struct nsr_restore_stats *st);
/* nsr_session_recover_copy - recover -S ssid/cloneid: the recovers of
 * save set ssid that follow (alone, in a list or as part of a tree) read
 * its clone instance cloneid (0 = the copy nsrd picks: the original, or
 * another complete copy when the original's volume is gone or cannot be
 * read, which the message callback hears).  NSR_ERR_LIMIT past 64 save
 * sets pinned. */
int nsr_session_recover_copy(struct nsr_session_recover *sr, uint32_t ssid,
			     uint32_t cloneid);
void nsr_session_recover_close(struct nsr_session_recover *sr);

#endif /* NSR_SESSION_H */
