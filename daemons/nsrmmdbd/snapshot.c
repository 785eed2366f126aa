/*
 * snapshot.c - MM_SNAPSHOT: a consistent copy of the media database (as
 * of the last commit; writers go on meanwhile) written as
 * <root>/bootstrap/mmdb for the bootstrap save (nsrbootstrap(8)), through
 * mmdb.tmp and a rename.  The staging directory must exist: nsrbootstrap
 * makes it, so a call from elsewhere cannot make nsrmmdbd write where
 * nobody asked for a bootstrap.
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nsr/boot.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/log.h"
#include "nsr/mmdb.h"
#include "nsr/rpc.h"
#include "nsr/rpc/nsrmmdb.h"
#include "nsr/xmalloc.h"
#include "mmdbd.h"

struct sink {
	int fd;
	uint64_t bytes;
};

/* put - mmdb_snapshot's sink: append to the file. */
static int put(void *arg, const void *buf, size_t len)
{
	struct sink *s = arg;
	int rc = nsr_write_full(s->fd, buf, len);

	s->bytes += rc == NSR_OK ? len : 0;
	return rc;
}

/* write_snapshot - the snapshot into dir/mmdb; NSR_OK or an error. */
static int write_snapshot(const char *dir, uint64_t *seq, uint64_t *bytes)
{
	char *tmp = nsr_xcheck(nsr_path_join(dir, NSR_BOOT_MMDB ".tmp"));
	char *dst = nsr_xcheck(nsr_path_join(dir, NSR_BOOT_MMDB));
	struct sink s = {-1, 0};
	int rc;

	s.fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (s.fd < 0) {
		rc = NSR_ERR_SYSTEM;
		goto out;
	}
	rc = mmdb_snapshot(g_mmdbd.db, put, &s, seq);
	if (close(s.fd) != 0 && rc == NSR_OK)
		rc = NSR_ERR_SYSTEM;
	if (rc == NSR_OK && rename(tmp, dst) != 0)
		rc = NSR_ERR_SYSTEM;
	if (rc != NSR_OK)
		(void)unlink(tmp);
	*bytes = s.bytes;
out:
	free(tmp);
	free(dst);
	return rc;
}

/* mmdbd_snapshot - MM_SNAPSHOT. */
int mmdbd_snapshot(void *ctx, void *args, void *res,
		   struct nsr_rpc_call *call)
{
	mm_snapshot_res *r = res;
	char *dir = nsr_xcheck(nsr_path_join(g_mmdbd.dir, "../" NSR_BOOT_DIR));
	uint64_t seq = 0, bytes = 0;
	struct stat st;
	int rc;

	NSR_UNUSED(ctx);
	NSR_UNUSED(args);
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		nsr_status_set(&r->st, NSR_ERR_NOTFOUND, "no staging directory "
			       "%s: a snapshot is made only for nsrbootstrap, "
			       "which makes it", dir);
		free(dir);
		return NSR_OK;
	}
	pthread_rwlock_rdlock(&g_mmdbd.life);
	if (g_mmdbd.db == NULL) {
		pthread_rwlock_unlock(&g_mmdbd.life);
		nsr_status_set(&r->st, NSR_ERR_AGAIN, "nsrmmdbd is shutting "
			       "down: retry once it is restarted");
		free(dir);
		return NSR_OK;
	}
	rc = write_snapshot(dir, &seq, &bytes);
	pthread_rwlock_unlock(&g_mmdbd.life);
	if (rc == NSR_ERR_SYSTEM)
		nsr_status_set(&r->st, rc, "cannot write the media database "
			       "snapshot into %s: %s", dir, strerror(errno));
	else if (rc != NSR_OK)
		mmdbd_db_status(&r->st, rc, "cannot make a snapshot of the "
				"media database %s", g_mmdbd.dir);
	else
		nsr_status_set(&r->st, NSR_OK, "%s", "");
	r->commit_seq = seq;
	r->bytes = bytes;
	nsr_info("media database snapshot for %s: %s (commit %llu, %llu "
		 "bytes)", nsr_rpc_call_peer(call),
		 rc ? nsr_strerror(rc) : "written",
		 (unsigned long long)seq, (unsigned long long)bytes);
	free(dir);
	return NSR_OK;
}
