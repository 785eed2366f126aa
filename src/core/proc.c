/*
 * proc.c - a process as /proc sees it (proc.h).
 */
#include "nsr/compat.h"

#include <signal.h>
#include <unistd.h>

#include "nsr/err.h"
#include "nsr/proc.h"

/* stat_fields - /proc/PID/stat of pid (0: this process) into buf[len];
 * *rp at the ')' that ends its command name, which may itself hold
 * spaces and parentheses ("pid (comm) S ...").  NSR_OK or
 * NSR_ERR_NOTFOUND. */
static int stat_fields(pid_t pid, char *buf, size_t len, char **rp)
{
	char path[64];
	FILE *f;
	size_t n;

	if (pid < 0)
		return NSR_ERR_NOTFOUND;
	if (pid)
		snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/stat");
	f = fopen(path, "re");
	if (!f)
		return NSR_ERR_NOTFOUND;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	*rp = strrchr(buf, ')');
	return *rp && (*rp)[1] == ' ' && (*rp)[2] ? NSR_OK : NSR_ERR_NOTFOUND;
}

/* nsr_proc_stat - see proc.h. */
int nsr_proc_stat(pid_t pid, char *comm, size_t len, char *state)
{
	char buf[512], *lp, *rp;

	if (pid <= 0 || stat_fields(pid, buf, sizeof(buf), &rp) != NSR_OK)
		return NSR_ERR_NOTFOUND;
	lp = strchr(buf, '(');
	if (!lp || lp > rp)
		return NSR_ERR_NOTFOUND;
	if (state)
		*state = rp[2];
	if (comm && len) {
		*rp = '\0';
		snprintf(comm, len, "%s", lp + 1);
	}
	return NSR_OK;
}

/* nsr_proc_live - see nsr/proc.h. */
int nsr_proc_live(pid_t pid, const char *comm)
{
	char name[32], state = 0;

	if (pid <= 0 || (kill(pid, 0) != 0 && errno != EPERM))
		return 0;
	if (nsr_proc_stat(pid, name, sizeof(name), &state) != NSR_OK)
		return !comm;
	return state != 'Z' && state != 'X' &&
	       (!comm || strcmp(name, comm) == 0);
}

/* nsr_proc_cpu - see proc.h: utime and stime, the 12th and 13th fields
 * after the command name, in clock ticks. */
int nsr_proc_cpu(pid_t pid, double *sec)
{
	char buf[1024], *rp;
	unsigned long ut, st;

	if (stat_fields(pid, buf, sizeof(buf), &rp) != NSR_OK ||
	    sscanf(rp + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu "
		   "%lu", &ut, &st) != 2)
		return NSR_ERR_NOTFOUND;
	*sec = (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
	return NSR_OK;
}
