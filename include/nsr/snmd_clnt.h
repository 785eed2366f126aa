/*
 * snmd_clnt.h - the client library of nsrsnmd (src/rpc/nsrsnm.x), the
 * storage node manager: which data mover (nsrmmd) serves a device, started
 * on demand, and which movers run.  nsrd and the tests use it; nothing
 * else speaks the protocol.
 *
 * Calling sequence:
 *   1. nsr_snmd_open(snode, &h, err) (connect now) or
 *      nsr_snmd_new(snode, wait_ms, &h) (connect on first use, waiting up
 *      to wait_ms for a restarting nsrsnmd);
 *   2. nsr_snmd_mover(h, &dev, server, &port, &pid, err) for each new
 *      session (with the same load, asking twice is asking once: the
 *      same running mover is handed out), nsr_snmd_status(h, &movers,
 *      &n, err);
 *   3. nsr_snmd_close(h).
 * Errors: NSR_OK or a negative nsr_err code; err (may be NULL) gets the
 * reason, naming the storage node.  Not thread-safe: one handle per
 * thread or a lock around it.
 */
#ifndef NSR_SNMD_CLNT_H
#define NSR_SNMD_CLNT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct nsr_buf;
struct nsr_snmd;

/* Sessions one running mover serves now (the caller's count). */
struct nsr_snmd_load {
	pid_t pid;
	unsigned sessions;
};

/* A device as nsrsnmd needs to know it (strings and load are borrowed). */
struct nsr_snmd_device {
	const char *name;	  /* device resource name */
	const char *media_type;	  /* "adv_file", "vtape", "tape" */
	const char *path;	  /* directory, vtape file, /dev/nstN */
	uint64_t capacity;	  /* a vtape's size, an AFTD's most bytes of
				   * session files; 0 = default, none */
	uint64_t segment_size;	  /* tape/vtape: filemark every N bytes */
	unsigned target_sessions; /* 0 = default */
	unsigned max_sessions;	  /* 0 = default */
	unsigned max_movers;	  /* dynamic nsrmmd: movers it may have (AFTD;
				   * 0 or 1 = one mover for every session) */
	const struct nsr_snmd_load *load; /* its movers' sessions now */
	size_t nload;
};

/* One running mover, as nsrsnmd lists it. */
struct nsr_snmd_mover {
	char device[256];
	int port;
	pid_t pid;
};

/* nsr_snmd_open - connect to nsrsnmd on host snode now. */
int nsr_snmd_open(const char *snode, struct nsr_snmd **out,
		  struct nsr_buf *err);
/* nsr_snmd_new - a handle that connects on first use (daemons). */
int nsr_snmd_new(const char *snode, int wait_ms, struct nsr_snmd **out);
/* nsr_snmd_host - the storage node as named. */
const char *nsr_snmd_host(const struct nsr_snmd *h);
/* nsr_snmd_mover - the port (and pid, may be NULL) of a mover of dev for
 * one more session: the least loaded by dev->load, or a new one while
 * all are at target sessions and fewer than dev->max_movers run; started
 * on demand, reporting fragments to the nsrmmdbd of host server (NULL or
 * "" = report nowhere: tests, stand-alone use). */
int nsr_snmd_mover(struct nsr_snmd *h, const struct nsr_snmd_device *dev,
		   const char *server, int *port, pid_t *pid,
		   struct nsr_buf *err);
/* nsr_snmd_status - the running movers: *out is a malloc'ed array of *n
 * entries (caller frees; NULL when *n == 0). */
int nsr_snmd_status(struct nsr_snmd *h, struct nsr_snmd_mover **out,
		    size_t *n, struct nsr_buf *err);
/* nsr_snmd_close - close and free (NULL is fine). */
void nsr_snmd_close(struct nsr_snmd *h);

#endif /* NSR_SNMD_CLNT_H */
