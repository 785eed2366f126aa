/*
 * boot.h - the bootstrap: a backup of the server's own state, and the
 * disaster recovery that puts it back (nsrbootstrap(8), nsrdr(8)).
 *
 * A bootstrap is a level full save set of the server's client named
 * "bootstrap" (NSR_BOOT_SSNAME), not browsable, whose one save path is
 * the staging directory <root>/bootstrap (NSR_BOOT_DIR) holding:
 *   mmdb     a consistent snapshot of the media database (MM_SNAPSHOT,
 *            written there by nsrmmdbd);
 *   jobsdb   a copy of the jobs database (JOB_BACKUP, by nsrjobd);
 *   res/     <root>/res without the jobs database (the resource files
 *            res/nsrdb/, nsrim's last run);
 *   index/   <root>/index, the client file indexes as committed files;
 *   tls/     <root>/tls: the datazone CA (key included), this host's key
 *            and certificate, revocations.
 *
 * Making one (nsrbootstrap):
 *   1. nsr_boot_lock() on the root, nsr_boot_prepare() (an empty staging
 *      directory);
 *   2. the snapshot and the jobs copy through the daemons;
 *   3. nsr_boot_stage() copies res/, index/ and tls/;
 *   4. the save (session.h, no_index), then nsr_boot_remove_tree() of
 *      the staging directory and nsr_boot_unlock().
 * Putting one back (nsrdr), on a root that nsr_boot_check_empty() finds
 * empty: restore the save set under a scratch directory, find the staging
 * directory in it (nsr_boot_stage_of()), nsr_boot_install().
 *
 * Everything here works on local paths under a root; nothing speaks a
 * protocol.
 */
#ifndef NSR_BOOT_H
#define NSR_BOOT_H

#include <stddef.h>
#include <stdint.h>

struct nsr_buf;

#define NSR_BOOT_SSNAME "bootstrap" /* the save set's name */
#define NSR_BOOT_DIR "bootstrap"    /* staging directory under the root */
#define NSR_BOOT_MMDB "mmdb"	    /* media database snapshot in it */
#define NSR_BOOT_JOBSDB "jobsdb"    /* jobs database copy in it */

/* nsr_boot_lock - take <root>/bootstrap.lock (one bootstrap at a time),
 * waiting up to wait_ms for another holder to let go; *fd gets the lock's
 * descriptor.  NSR_ERR_BUSY if another still holds it. */
int nsr_boot_lock(const char *root, unsigned wait_ms, int *fd,
		  struct nsr_buf *err);
/* nsr_boot_unlock - give the lock back. */
void nsr_boot_unlock(int fd);
/* nsr_boot_prepare - an empty <root>/bootstrap (what an earlier, failed
 * run left is removed); its path in *stage (caller frees). */
int nsr_boot_prepare(const char *root, char **stage, struct nsr_buf *err);
/* nsr_boot_stage - copy root's res/ (less the jobs database), index/ and
 * tls/ into stage; *files (may be NULL) gets how many files. */
int nsr_boot_stage(const char *root, const char *stage, uint64_t *files,
		   struct nsr_buf *err);
/* nsr_boot_remove_tree - remove path and everything below it (symbolic
 * links are removed, never followed); a missing path is NSR_OK. */
int nsr_boot_remove_tree(const char *path);
/* nsr_boot_check_empty - NSR_OK if root holds no media database, jobs
 * database, resources or client file index; else NSR_ERR_EXISTS, err
 * naming what is there. */
int nsr_boot_check_empty(const char *root, struct nsr_buf *err);
/* nsr_boot_stage_of - the staging directory of a restored bootstrap,
 * from the path a restored file has: for ".../bootstrap/mmdb" the
 * directory ".../bootstrap" into out[cap] (NSR_OK); anything else is
 * NSR_ERR_NOTFOUND. */
int nsr_boot_stage_of(const char *path, char *out, size_t cap);
/* nsr_boot_install - move a restored staging directory's contents into
 * root: mmdb to mm/mmdb, jobsdb to res/jobsdb, res/, index/ and tls/
 * merged into root's (files of the bootstrap win).  stage and root must
 * be on one file system (rename). */
int nsr_boot_install(const char *stage, const char *root,
		     struct nsr_buf *err);

/* One bootstrap save set found on a volume, for nsr_boot_pick. */
struct nsr_boot_cand {
	uint32_t ssid;
	int64_t savetime;
	int whole;	/* begin and a good end on this volume */
};
/* nsr_boot_pick - the candidate to restore: with want != 0 that ssid
 * (if whole), else the whole one with the newest save time (the later
 * on the volume of two with the same time); -1 if none. */
long nsr_boot_pick(const struct nsr_boot_cand *c, size_t n, uint32_t want);

#endif /* NSR_BOOT_H */
