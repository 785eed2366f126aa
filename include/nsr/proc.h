/*
 * proc.h - what Linux's /proc says of a process: its command name (the
 * kernel's comm, at most 15 bytes: the name of the program it runs) and
 * its state letter (R, S, D, Z for a zombie not reaped yet, X, ...), and
 * the CPU time it used.
 * Used where a pid alone is not enough: a child that has exited but is
 * not reaped still answers kill(pid, 0), and a pid may be another
 * program's once its first owner is gone.
 */
#ifndef NSR_PROC_H
#define NSR_PROC_H

#include <stddef.h>
#include <sys/types.h>

/* nsr_proc_stat - pid's command name into comm[len] (NULL: not wanted)
 * and state letter into *state (NULL: not wanted): NSR_OK, or
 * NSR_ERR_NOTFOUND when there is no such process (or /proc says nothing
 * readable of it). */
int nsr_proc_stat(pid_t pid, char *comm, size_t len, char *state);
/* nsr_proc_live - 1 if pid runs: kill(pid, 0) finds it, /proc does not
 * call it a zombie and, when comm is given, it runs the program of that
 * command name (a pid may be another program's once its owner is gone);
 * 0 otherwise.  When /proc says nothing, kill's word, unless comm was
 * to be checked. */
int nsr_proc_live(pid_t pid, const char *comm);
/* nsr_proc_cpu - the CPU time (user + system, seconds) pid (0: this
 * process) has used so far into *sec: NSR_OK or NSR_ERR_NOTFOUND. */
int nsr_proc_cpu(pid_t pid, double *sec);

#endif /* NSR_PROC_H */
