/*
 * backup.c - a consistent copy of the jobs database in a file of its own
 * (SQLite's online backup API), for the bootstrap save
 * (nsrbootstrap(8)).  The copy is written under a temporary name and
 * renamed, so a reader never finds half a copy; it is an ordinary
 * database in rollback-journal mode that nsr_jobdb_open() opens.
 */
#include "nsr/compat.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nsr/err.h"
#include "nsr/jobdb.h"

#include "jobdb_int.h"

/* copy_pages - the whole database of db into dst, in steps, so a
 * writer of another handle is never kept out for long. */
static int copy_pages(sqlite3 *src, sqlite3 *dst)
{
	sqlite3_backup *b = sqlite3_backup_init(dst, "main", src, "main");
	int src_rc;

	if (b == NULL)
		return jobdb_rc(sqlite3_errcode(dst));
	do {
		src_rc = sqlite3_backup_step(b, 256);
		if (src_rc == SQLITE_BUSY || src_rc == SQLITE_LOCKED)
			sqlite3_sleep(5);
	} while (src_rc == SQLITE_OK || src_rc == SQLITE_BUSY ||
		 src_rc == SQLITE_LOCKED);
	if (sqlite3_backup_finish(b) != SQLITE_OK && src_rc == SQLITE_DONE)
		src_rc = sqlite3_errcode(dst);
	return src_rc == SQLITE_DONE ? NSR_OK : jobdb_rc(src_rc);
}

/* nsr_jobdb_backup - copy db as it is now into the file path. */
int nsr_jobdb_backup(struct nsr_jobdb *db, const char *path,
		     uint64_t *bytes)
{
	char tmp[4096];
	sqlite3 *dst = NULL;
	struct stat st;
	int rc;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return NSR_ERR_INVAL;
	(void)unlink(tmp);
	if (sqlite3_open_v2(tmp, &dst,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
			    NULL) != SQLITE_OK) {
		rc = dst ? jobdb_rc(sqlite3_errcode(dst)) : NSR_ERR_NOMEM;
		goto out;
	}
	rc = copy_pages(db->db, dst);
	if (rc == NSR_OK &&
	    sqlite3_exec(dst, "PRAGMA journal_mode=DELETE", NULL, NULL,
			 NULL) != SQLITE_OK)
		rc = jobdb_rc(sqlite3_errcode(dst));
out:
	if (dst && sqlite3_close(dst) != SQLITE_OK && rc == NSR_OK)
		rc = NSR_ERR_IO;
	if (rc == NSR_OK && rename(tmp, path) != 0)
		rc = NSR_ERR_SYSTEM;
	if (rc == NSR_OK && stat(path, &st) != 0)
		rc = NSR_ERR_SYSTEM;
	if (rc != NSR_OK) {
		(void)unlink(tmp);
		return rc;
	}
	if (bytes)
		*bytes = (uint64_t)st.st_size;
	return NSR_OK;
}
