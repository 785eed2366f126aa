/*
 * execd.h - private to nsrexecd: running save for the server (run.c).
 */
#ifndef EXECD_H
#define EXECD_H

#include <sys/types.h>

#include "nsr/rpc.h"

struct nsr_daemon;

/* execd_run_option - -x save program, -S allowed server, -M mount table;
 * 0 or -1 (bad argument). */
int execd_run_option(int opt, const char *arg);
/* Servers -S may name. */
#define EXECD_SERVERS_MAX 16
/* execd_run_server_argv - append "-S NAME" for each -S server (nsrsnmd
 * serves the same servers); argv needs room for 2 * EXECD_SERVERS_MAX. */
void execd_run_server_argv(char **argv, int *n);
/* execd_run_nservers, execd_run_server - the -S servers. */
int execd_run_nservers(void);
const char *execd_run_server(int i);
/* execd_run_start - find the save program; 0, or -1 when it is missing
 * (logged). */
int execd_run_start(struct nsr_daemon *d);
/* execd_run_save, execd_run_poll - the RUN_SAVE and RUN_POLL handlers. */
int execd_run_save(void *ctx, void *argp, void *resp,
		   struct nsr_rpc_call *call);
int execd_run_poll(void *ctx, void *argp, void *resp,
		   struct nsr_rpc_call *call);
/* execd_run_exited - a reaped child: 1 if it was one of our saves. */
int execd_run_exited(pid_t pid, int status);
/* execd_run_tick - read the saves' stderr; forget old unpolled runs. */
void execd_run_tick(void);
/* execd_run_stop - SIGTERM every running save; free everything. */
void execd_run_stop(void);

/* vouch.c: vouching for this host's users (nsrexecd(8), VOUCHING). */
/* execd_vouch_start - serve <root>/nsrexecd.sock (logged if it cannot). */
void execd_vouch_start(struct nsr_daemon *d);
/* execd_vouch_stop - stop serving it. */
void execd_vouch_stop(struct nsr_daemon *d);

/* revoked.c: the servers' revocations merged into this host's
 * (nsrexecd(8), REVOCATIONS). */
#define EXECD_REVOKED_POLL_SEC 30 /* NSR_REVOKED_POLL_SEC overrides */
/* execd_revoked_start - poll the lists of the -S servers and of the
 * server that enrolled this host from a thread (none on the server
 * itself without -S). */
void execd_revoked_start(struct nsr_daemon *d);
/* execd_revoked_stop - stop polling. */
void execd_revoked_stop(void);
/* execd_revoked_notify - REVOKED_NOTIFY: poll now (at most once a
 * second; nothing without -S). */
int execd_revoked_notify(void *ctx, void *argp, void *resp,
			 struct nsr_rpc_call *call);

#endif /* EXECD_H */
