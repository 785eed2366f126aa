/*
 * mmd_clnt.h - client side of nsrmmd, the data mover (label a volume,
 * write a save set, read one back).  nsrd, save, recover and the tests use
 * this instead of calling the RPC procedures themselves; which mover
 * serves a device is nsrsnmd's answer (snmd_clnt.h).
 *
 * Calling sequence for a backup of one save set:
 *   1. nsr_mmd_connect(host, port, &m, err): the mover nsrd named (or
 *      nsr_snmd_mover answered);
 *   2. nsr_mmd_ss_begin(m, &hdr, volid, &span, err): the volume nsrd chose;
 *   3. nsr_mmd_ss_write(m, p, n) as often as needed: data is cut into
 *      chunks and sent one-way (pipelined, no round trip per chunk);
 *      an acknowledgement (MMD_SS_SYNC) goes out every sync_every bytes
 *      and up to sync_depth of them are outstanding at once, so the
 *      data keeps flowing over a long link;
 *   4. nsr_mmd_ss_end(m, &tail, &frag, err): waits until the mover has
 *      made the data durable and reported the fragment to nsrmmdbd; the
 *      reply carries the first error of the session, if any;
 *   5. more save sets on the same connection, or nsr_mmd_close(m).
 * Spanning: install a span function first (nsr_mmd_set_span_fn).  When a
 * volume fills (tape, vtape or AFTD), its mover keeps the part on it, says from
 * which save-set offset the save set resumes, and the library calls the
 * span function (typically NEXT_VOLUME at nsrd, nsrd_clnt.h) for the next
 * volume and its mover, connects there, begins the next fragment and
 * sends again the bytes from the resume offset on, which it kept: the
 * replay buffer holds the bytes sent but not yet placed on the volume by
 * the mover, at most NSR_MMD_REPLAY_MAX (29 MiB with the default window,
 * 49 MiB once it has grown to NSR_MMD_SYNC_DEPTH_AUTO), plus
 * the chunk being filled.  This repeats for every volume that fills.
 * Without a span function a full volume fails the session (NSR_ERR_EOM).
 * After spanning, the struct nsr_mmd talks to the last volume's mover.
 * Striping: over a long link one TCP connection carries at most its
 * window per round trip, so a save session to a mover that is not on
 * loopback goes over NSR_MMD_STRIPES_AUTO connections (the mover's own
 * choice of how many may join aside; nsr_mmd_set_stripes or
 * NSR_MMD_STRIPES=N set another number, 1 = none): nsr_mmd_ss_begin opens
 * the others and nsr_mmd_ss_end closes them, nothing changes for the
 * caller.  Only AFTD movers stripe (a tape or vtape session stays on
 * one connection); a striped session that spans stripes again at the
 * next volume's mover; a connection that cannot be added is
 * done without; any connection failing during the session fails it.
 * Test knob: NSR_TEST_MMD_BAD_TOKEN=1 spoils the token joins show, so
 * the mover refuses them.
 * Grants: a mover opens a save set for writing or reading only with
 * nsrd's grant for it (nsr/rpc.h, "Grants"), which SAVE_START,
 * RECOVER_START and CLONE_START hand out with the mover; give each to
 * nsr_mmd_grant before nsr_mmd_ss_begin, nsr_mmd_clone_begin or
 * nsr_mmd_read_open (root on the mover's server needs none).
 * A recover: nsr_mmd_read_open(m, ssid, frags, n, err), then
 * nsr_mmd_read_next(m, ...) until *eof.  A mover reads only the fragments
 * on its own volume: for a save set on several volumes, read each run of
 * fragments (in frag_seq order) from the mover of its volume in turn.
 *
 * One struct nsr_mmd is one connection and holds at most one session at a
 * time; use it from one thread (open several for parallel sessions).
 *
 * Errors: NSR_OK or a negative nsr_err code.  The code is the mover's own
 * (e.g. NSR_ERR_EOM: volume full, NSR_ERR_EXISTS: volume holds data,
 * NSR_ERR_CHECKSUM: damaged data) or a transport one (NSR_ERR_CONNECT,
 * NSR_ERR_RPC, NSR_ERR_TIMEOUT).  When err is not NULL a message for the
 * administrator is appended to it (it names the host and the object).
 * Nothing here prints or logs.
 */
#ifndef NSR_MMD_CLNT_H
#define NSR_MMD_CLNT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "nsr/rpc/nsrmmd.h"
#include "nsr/vol.h"

struct nsr_buf;
struct nsr_mmd;

/* Default size of the one-way data calls made by nsr_mmd_ss_write. */
#define NSR_MMD_CHUNK_DEFAULT (1u << 20)
/* Acknowledgement window: a sync every EVERY bytes, DEPTH outstanding. */
#define NSR_MMD_SYNC_EVERY_DEFAULT (4u << 20)
#define NSR_MMD_SYNC_DEPTH_DEFAULT 4u
#define NSR_MMD_SYNC_DEPTH_MAX 16u
/* The depth grows up to this while the link is idle behind a full window
 * (32 MB outstanding with the default every: 640 MB/s at 50 ms). */
#define NSR_MMD_SYNC_DEPTH_AUTO 8u
/* Most bytes kept for a replay: the window, the data between two syncs,
 * and a mover's lag (one block of the volume at most). */
#define NSR_MMD_REPLAY_MAX(every, depth, chunk) \
	((depth) * ((every) + (chunk)) + NSR_VOL_BLOCK_MAX + (chunk))

/* Connections of one save session to a mover not on loopback. */
#define NSR_MMD_STRIPES_AUTO 4u

/* The next volume of a save set whose volume filled, and its mover. */
struct nsr_mmd_next {
	char host[256];		/* the mover's host */
	int port;		/* and port */
	uint8_t volid[16];	/* the volume to go on with */
	char volume[NSR_VOL_NAME_MAX + 1]; /* its name, for messages */
};
/* nsr_mmd_span_fn - fill *next for save set ssid of pool, whose volume
 * full_volid filled; NSR_OK, or an nsr_err code with words in err (the
 * save fails then, and the part on the full volume is not recorded). */
typedef int (*nsr_mmd_span_fn)(void *ctx, uint32_t ssid, const char *pool,
			       const uint8_t full_volid[16],
			       struct nsr_mmd_next *next, struct nsr_buf *err);

/* Connections to one mover. */
/* nsr_mmd_connect - connect to the mover at host:port. */
int nsr_mmd_connect(const char *host, int port, struct nsr_mmd **out,
		    struct nsr_buf *err);
/* nsr_mmd_set_chunk - size of the data calls (32 KiB .. 8 MiB); not
 * while a save session is open. */
void nsr_mmd_set_chunk(struct nsr_mmd *m, size_t chunk);
/* nsr_mmd_set_window - the acknowledgement window: a sync every `every`
 * bytes (32 KiB .. 64 MiB), depth (1 .. NSR_MMD_SYNC_DEPTH_MAX) of them
 * outstanding, growing one at a time up to cap (<= depth: fixed) while
 * the window is full and TCP has sent every byte (a long link: the
 * window, not the network, held data back).  At connect: every
 * NSR_MMD_SYNC_EVERY_DEFAULT, depth NSR_MMD_SYNC_DEPTH_DEFAULT, cap
 * NSR_MMD_SYNC_DEPTH_AUTO; the test knob
 * NSR_TEST_MMD_WINDOW="EVERY,DEPTH[,CHUNK]" sets a fixed one instead. */
void nsr_mmd_set_window(struct nsr_mmd *m, size_t every, unsigned depth,
			unsigned cap);
/* nsr_mmd_window_depth - syncs the window holds now. */
unsigned nsr_mmd_window_depth(const struct nsr_mmd *m);
/* nsr_mmd_set_stripes - connections per save session: 0 automatic
 * (1 on loopback, else NSR_MMD_STRIPES_AUTO), 1 none, at most
 * MMD_STRIPES_MAX.  At connect: NSR_MMD_STRIPES from the environment,
 * else 0.  Takes effect at the next nsr_mmd_ss_begin. */
void nsr_mmd_set_stripes(struct nsr_mmd *m, unsigned n);
/* nsr_mmd_stripes - connections the last save session used (1: not
 * striped; 0: none begun). */
unsigned nsr_mmd_stripes(const struct nsr_mmd *m);
/* nsr_mmd_grant - keep nsrd's grant g for this connection's sessions
 * (one per kind and save set, the last given wins; up to MMD_SETS_MAX):
 * sent with the session's begin or read.  NSR_ERR_LIMIT when full. */
int nsr_mmd_grant(struct nsr_mmd *m, const nsr_grant *g);
/* nsr_mmd_set_span_fn - the function asked for the next volume when a
 * volume fills during a save session (NULL: fail instead). */
void nsr_mmd_set_span_fn(struct nsr_mmd *m, nsr_mmd_span_fn fn, void *ctx);
/* nsr_mmd_peer - "host:port" of the mover (the last one after spanning). */
const char *nsr_mmd_peer(const struct nsr_mmd *m);
/* nsr_mmd_errmsg - words on the failure nsr_mmd_ss_write returned. */
const char *nsr_mmd_errmsg(const struct nsr_mmd *m);
/* nsr_mmd_spans - how many volumes the save session went on to. */
unsigned nsr_mmd_spans(const struct nsr_mmd *m);
/* nsr_mmd_close - close the connection (an open session is aborted by the
 * mover: no end chunk, nothing reported) and free (NULL is fine). */
void nsr_mmd_close(struct nsr_mmd *m);

/* Volumes. */
/* nsr_mmd_label - label the volume in the mover's device (block_size 0 =
 * the default).  A volume that holds data is refused (NSR_ERR_EXISTS)
 * unless force.  *out (may be NULL) gets the new label. */
int nsr_mmd_label(struct nsr_mmd *m, const char *volume, const char *pool,
		  uint32_t block_size, int force, struct nsr_vol_label *out,
		  struct nsr_buf *err);
/* nsr_mmd_ss_remove - ask the mover of an AFTD to remove the session
 * files of save sets ssids[0..n) (n <= MMD_REMOVE_MAX), crash-safely;
 * where (may be NULL) names the session file of each as the media
 * database has it (0: not known; see nsr_vol_remove_ss), so the mover
 * need not read every file of the volume.  *files and *bytes (either may
 * be NULL) get what was removed.  NSR_ERR_UNSUPPORTED from the mover of
 * a tape. */
int nsr_mmd_ss_remove(struct nsr_mmd *m, const uint32_t *ssids,
		      const uint32_t *where, size_t n, uint32_t *files,
		      uint64_t *bytes, struct nsr_buf *err);
/* nsr_mmd_read_label - read the label of the volume in the device;
 * *has_data (may be NULL) says whether it holds save sets.
 * NSR_ERR_NOTFOUND / NSR_ERR_EOD: the medium is not labeled. */
int nsr_mmd_read_label(struct nsr_mmd *m, struct nsr_vol_label *out,
		       int *has_data, struct nsr_buf *err);

/* Save sessions. */
/* nsr_mmd_ss_begin - start writing a fragment of save set hdr->ssid to
 * the volume volid (the mover refuses another volume: NSR_ERR_MISMATCH;
 * all zero = whatever volume is in the device).  sp may be NULL (the
 * first fragment, at offset 0).  The mover reports the fragment under
 * clone id (uint32_t)hdr->savetime, the id nsrmmdbd gives the first clone
 * of a save set created with cloneid 0. */
int nsr_mmd_ss_begin(struct nsr_mmd *m, const struct nsr_vol_sshdr *hdr,
		     const uint8_t volid[16], const struct nsr_vol_span *sp,
		     struct nsr_buf *err);
/* nsr_mmd_clone_begin - as nsr_mmd_ss_begin for the first fragment, but
 * the session writes a copy of an existing save set (nsrclone): the
 * mover reports its fragments under clone instance cloneid, which nsrd
 * made (never 0).  Write and end it as a save session. */
int nsr_mmd_clone_begin(struct nsr_mmd *m, const struct nsr_vol_sshdr *hdr,
			const uint8_t volid[16], uint32_t cloneid,
			struct nsr_buf *err);
/* nsr_mmd_ss_write - queue save-set data (any size).  Returns a transport
 * error, a mover's error that came with an acknowledgement, or a failure
 * to span (words in nsr_mmd_errmsg); the session is failed then and
 * nsr_mmd_ss_end returns the same. */
int nsr_mmd_ss_write(struct nsr_mmd *m, const void *p, size_t len);
/* nsr_mmd_ss_end - send the rest, end the session with the totals in
 * tail, wait for the mover: NSR_OK once the fragment (*frag, may be NULL)
 * is durable and recorded in the media database, or the session's first
 * error.  If the save set filled a volume and went on to other volumes
 * (through the span function), *frag is the last fragment; the earlier
 * ones are in the media database.  A last fragment that does not hold
 * every byte sent since it began is an error (NSR_ERR_PROTO), never a
 * success.  The session is over whatever the result. */
int nsr_mmd_ss_end(struct nsr_mmd *m, const struct nsr_vol_sstail *tail,
		   struct nsr_vol_frag *frag, struct nsr_buf *err);

/* Recover sessions. */
/* nsr_mmd_read_open - start reading save set ssid from its fragments
 * (those on the mover's volume are read in order of frag_seq). */
int nsr_mmd_read_open(struct nsr_mmd *m, uint32_t ssid,
		      const struct nsr_vol_frag *frags, size_t n,
		      struct nsr_buf *err);
/* nsr_mmd_read_next - the next piece of the save set's data stream: up to
 * cap bytes into p (*got), *eof = 1 after the last byte.  Damaged blocks
 * are skipped by the mover: every intact byte is delivered first, then,
 * instead of eof, NSR_ERR_CHECKSUM/NSR_ERR_CORRUPT with the save set, the
 * volume and the first damaged block (file, record) in err; the stream
 * has a gap there, which the restore resynchronises over. */
int nsr_mmd_read_next(struct nsr_mmd *m, void *p, size_t cap, size_t *got,
		      int *eof, struct nsr_buf *err);

/* One pass for several save sets of one volume. */
/* nsr_mmd_read_sets_open - start reading, in one pass over the mover's
 * volume, every save set that has fragments in frags (n, at most
 * MMD_FRAGS_MAX, at most MMD_SETS_MAX save sets; those on other volumes
 * are left out by the mover); each must have one on the volume. */
int nsr_mmd_read_sets_open(struct nsr_mmd *m, const struct nsr_vol_frag *frags,
			   size_t n, struct nsr_buf *err);
/* One piece of a sets read. */
struct nsr_mmd_sets_piece {
	uint32_t ssid;	    /* whose data (or end) it is */
	const void *data;   /* its data (len bytes; until fn returns) */
	size_t len;
	int ss_end;	    /* ssid's last piece from this volume */
	int ss_code;	    /* with ss_end: NSR_OK or its error (damage as
			       for nsr_mmd_read_next) */
	const char *ss_msg; /* with ss_end: the error in words */
};
/* What takes each piece; non-zero stops (and is returned). */
typedef int (*nsr_mmd_piece_fn)(void *arg,
				const struct nsr_mmd_sets_piece *pc);
/* nsr_mmd_read_sets_next - the next reply: its pieces (at most cap data
 * bytes in all), in volume order, to fn; *eof = 1 once every save set
 * has ended.  A transport or session error is returned; a save set's
 * own error comes in its last piece. */
int nsr_mmd_read_sets_next(struct nsr_mmd *m, size_t cap,
			   nsr_mmd_piece_fn fn, void *arg, int *eof,
			   struct nsr_buf *err);

/* What one session of a mover has moved (MMD_COUNTERS). */
struct nsr_mmd_counter {
	uint32_t ssid;
	int recover;	/* 1: sent to a recover client; 0: saved */
	uint64_t bytes; /* data bytes so far */
	uint64_t usec;	/* since the session began */
};
/* nsr_mmd_counters - the mover's open sessions: *out (malloc'ed, caller
 * frees; NULL when *n is 0). */
int nsr_mmd_counters(struct nsr_mmd *m, struct nsr_mmd_counter **out,
		     size_t *n, struct nsr_buf *err);

/* Fragments on the wire, for the mover and its clients alike: no strings,
 * so nothing to check or free. */
/* nsr_mmd_frag_to_wire - the XDR fragment from the public one. */
void nsr_mmd_frag_to_wire(mmd_frag *out, const struct nsr_vol_frag *f);
/* nsr_mmd_frag_from_wire - the public fragment from the XDR one. */
void nsr_mmd_frag_from_wire(struct nsr_vol_frag *out, const mmd_frag *f);

#endif /* NSR_MMD_CLNT_H */
