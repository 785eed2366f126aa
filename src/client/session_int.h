/*
 * session_int.h - the recover session, shared by the files of the
 * session driver (session_recover.c: save sets; session_pit.c: paths as
 * of a browse time), and what save and recover sessions share.
 */
#ifndef NSR_SESSION_INT_H
#define NSR_SESSION_INT_H

#include <stddef.h>
#include <stdint.h>

#include "nsr/restore.h"
#include "nsr/session.h"

struct nsr_session_recover {
	const struct nsr_session_recover_opts *o;
	struct nsr_nsrd *nsrd;
	struct nsr_ixclnt *ix; /* opened on first use (-a lookups) */
	int pss_whole; /* recover -S of a PSS master: its dependents too */
	uint32_t want_ssid, want_cloneid; /* recover -S ssid/cloneid */
};

/* session_recover_set - restore save set ssid: only paths[0..npaths)
 * and what is below them, or with exact only the objects they name (0 =
 * everything).  0 if everything came back intact, 1 otherwise. */
int session_recover_set(struct nsr_session_recover *sr, uint32_t ssid,
			const char *const *paths, size_t npaths, int exact,
			struct nsr_restore_stats *out);

/* session_add_stats - add s to t. */
void session_add_stats(struct nsr_restore_stats *t,
		       const struct nsr_restore_stats *s);

/* session_pause - wait before asking nsrd again after NSR_ERR_WAIT: the
 * retry time it gave, kept within 0.1 .. 10 s. */
void session_pause(unsigned retry_ms);

#endif /* NSR_SESSION_INT_H */
