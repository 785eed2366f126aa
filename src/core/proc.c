/*
 * proc.c - a process as /proc sees it (proc.h).
 */
#include "nsr/compat.h"

#include "nsr/err.h"
#include "nsr/proc.h"

/* nsr_proc_stat - see proc.h: "pid (comm) S ..." from /proc/PID/stat,
 * where comm may itself hold spaces and parentheses (the last ')'
 * ends it). */
int nsr_proc_stat(pid_t pid, char *comm, size_t len, char *state)
{
	char path[64], buf[512], *lp, *rp;
	FILE *f;
	size_t n;

	if (pid <= 0)
		return NSR_ERR_NOTFOUND;
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	f = fopen(path, "re");
	if (!f)
		return NSR_ERR_NOTFOUND;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	lp = strchr(buf, '(');
	rp = strrchr(buf, ')');
	if (!lp || !rp || rp < lp || rp[1] != ' ' || !rp[2])
		return NSR_ERR_NOTFOUND;
	if (state)
		*state = rp[2];
	if (comm && len) {
		*rp = '\0';
		snprintf(comm, len, "%s", lp + 1);
	}
	return NSR_OK;
}
