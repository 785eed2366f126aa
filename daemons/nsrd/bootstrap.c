/*
 * bootstrap.c - after each scheduled group run nsrd saves a bootstrap of
 * its own state (nsrbootstrap(8)): it starts nsrbootstrap, installed
 * next to nsrd, with its root and server name and the group's name, and
 * does not wait for it (the main loop reaps it; its messages go to the
 * daemon log).  nsrbootstrap itself keeps two bootstraps of one root
 * from running at once.
 */
#include "nsr/compat.h"

#include <unistd.h>

#include "nsr/boot.h"
#include "nsr/daemon.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/log.h"
#include "nsrd.h"

/* nsrd_bootstrap_after_group - start nsrbootstrap for group's run. */
void nsrd_bootstrap_after_group(struct nsrd *n, const char *group)
{
	(void)nsrd_bootstrap_start(n, group);
}

/* nsrd_bootstrap_start - start nsrbootstrap for group; its pid, or 0
 * (logged). */
pid_t nsrd_bootstrap_start(struct nsrd *n, const char *group)
{
	char *prog = nsr_path_join(n->d->exe_dir, "nsrbootstrap");
	char o_root[] = "-R", o_server[] = "-s", o_group[] = "-g";
	char grp[NSR_SHORT_MAX];
	char *argv[] = {prog, o_root, n->d->root, o_server, n->server_name,
			o_group, grp, NULL};
	pid_t pid = 0;

	snprintf(grp, sizeof(grp), "%s", group);

	if (prog == NULL)
		return 0;
	if (access(prog, X_OK) != 0)
		nsr_warn("no bootstrap after group %s: %s is missing (install "
			 "nsrbootstrap next to nsrd)", group, prog);
	else if (nsr_proc_spawn_flags(argv, 0, nsr_daemon_log_fd(n->d),
				      &pid) != NSR_OK) {
		nsr_warn("no bootstrap after group %s: cannot start %s: %s",
			 group, prog, strerror(errno));
		pid = 0;
	} else {
		nsr_info("group %s: bootstrap save started (nsrbootstrap, "
			 "pid %ld)", group, (long)pid);
	}
	free(prog);
	return pid;
}

/* nsrd_bootstrap_is - the name of a bootstrap save set. */
int nsrd_bootstrap_is(const char *name)
{
	return strcmp(name, NSR_BOOT_SSNAME) == 0;
}
