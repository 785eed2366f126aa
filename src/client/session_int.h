/*
 * session_int.h - the recover session, shared by the files of the
 * session driver (session_recover.c: save sets; session_pit.c: paths as
 * of a browse time), and what save and recover sessions share.
 */
#ifndef NSR_SESSION_INT_H
#define NSR_SESSION_INT_H

#include <stddef.h>
#include <stdint.h>

#include "nsr/crypt.h"
#include "nsr/restore.h"
#include "nsr/session.h"

struct nsr_buf;
struct nsr_nsrd;

#define SESSION_PINS_MAX 64 /* save sets with a copy pinned */

struct nsr_session_recover {
	const struct nsr_session_recover_opts *o;
	struct nsr_nsrd *nsrd;
	struct nsr_ixclnt *ix; /* opened on first use (-a lookups) */
	int pss_whole; /* recover -S of a PSS master: its dependents too */
	struct nsr_restore_split *split; /* the split files of one
					  * session_recover_sets */
	struct session_lease *lease; /* renews every started save set's job */
	/* recover -S ssid/cloneid: the copies pinned */
	uint32_t want_ssid[SESSION_PINS_MAX], want_cloneid[SESSION_PINS_MAX];
	size_t npins;
};

/* session_recover_set - restore save set ssid: only paths[0..npaths)
 * and what is below them, or with exact only the objects they name (0 =
 * everything).  0 if everything came back intact, 1 otherwise. */
int session_recover_set(struct nsr_session_recover *sr, uint32_t ssid,
			const char *const *paths, size_t npaths, int exact,
			struct nsr_restore_stats *out);

/* One save set a recover wants: only paths[0..npaths) (0 = all);
 * split[0..nsplit), of them, are split files (a PSS master's, in a
 * point-in-time recover: exact), whose parts its dependents hold. */
struct session_want {
	uint32_t ssid;
	const char *const *paths;
	size_t npaths;
	const char *const *split;
	size_t nsplit;
};

/* session_recover_sets - restore the save sets want[0..n), reading each
 * volume once for all of them that have fragments on it; those read
 * together are restored side by side and must not write the same path
 * (with exact: disjoint objects, as a point-in-time recover gives each
 * save set of its chain; without: checked by save set name), and end in
 * the order given.  0 if all came back intact, 1 otherwise. */
int session_recover_sets(struct nsr_session_recover *sr,
			 const struct session_want *want, size_t n, int exact,
			 struct nsr_restore_stats *out);

/* session_add_stats - add s to t. */
void session_add_stats(struct nsr_restore_stats *t,
		       const struct nsr_restore_stats *s);

/* session_pause - wait before asking nsrd again after NSR_ERR_WAIT: the
 * retry time it gave, kept within 0.1 .. 10 s. */
void session_pause(unsigned retry_ms);

/* lease.c: the leases of a client's sessions, renewed at nsrd from one
 * thread of their own (a save by ssid, a recover by job id). */
struct session_lease;
/* session_lease_period - seconds between renewals. */
time_t session_lease_period(void);
/* session_lease_start - a renewer for client's sessions at server. */
int session_lease_start(const char *server, const char *client,
			struct session_lease **out, struct nsr_buf *err);
/* session_lease_add - renew jobid's session (ssid 0 for a recover). */
int session_lease_add(struct session_lease *l, int64_t jobid, uint32_t ssid);
/* session_lease_remove - stop renewing jobid's session. */
void session_lease_remove(struct session_lease *l, int64_t jobid);
/* session_lease_check - the last warning (into warn) and 1 if nsrd
 * settled jobid's session (0 = any). */
int session_lease_check(struct session_lease *l, int64_t jobid, char *warn,
			size_t wlen);
/* session_lease_stop - stop the renewer and free it (NULL is fine). */
void session_lease_stop(struct session_lease *l);

/* The data transform of a save (session_keys.c). */
struct session_xform {
	int on;
	struct nsr_asm_xform xf;
	struct nsr_crypt_key key;
};

/* session_xform - what o asks for (--encrypt: the key of the datazone
 * pass phrase from nsrd d; NULL d: a dry run, compression only).  The
 * reason in err when nsrd gives no key. */
int session_xform(struct nsr_nsrd *d, const struct nsr_session_save_opts *o,
		  struct session_xform *x, struct nsr_buf *err);
/* session_xform_wipe - forget the key. */
void session_xform_wipe(struct session_xform *x);
/* session_key_by_id - a restore's key lookup (nsr_asm_key_fn) with the
 * struct nsr_nsrd as ctx: 0 and the key, or -1 when nsrd has none. */
int session_key_by_id(void *ctx, const uint8_t *id, uint8_t *key);

#endif /* NSR_SESSION_INT_H */
