/*
 * policy.h - who may do what in a datazone, read from its resources
 * (nsrd(8), AUTHORIZATION): the NSR resource's `administrator` list
 * (none: root on the server's host and root@localhost), each client's
 * name and `aliases` (the hosts that are that client) and its `remote
 * access` list (who else may read its data).  Entries are access list
 * entries (access.h).
 *
 * Two ways in: functions over a resource database (nsrd's own, under its
 * lock), and a policy handle for the other daemons of the server (media
 * database, indexes), which holds a read-only copy of <root>/res/nsrdb,
 * re-read when the directory changes (nsr_policy_refresh), and locks
 * itself, so any thread may ask.
 */
#ifndef NSR_POLICY_H
#define NSR_POLICY_H

struct nsr_resdb;

/* nsr_policy_is_admin - 1 if user@host (user NULL: none stated) is an
 * administrator of server (its host name) by db (NULL: the default). */
int nsr_policy_is_admin(const struct nsr_resdb *db, const char *server,
			const char *user, const char *host);
/* nsr_policy_own_client - 1 if host is client's own: the client's name
 * or one of its aliases names it. */
int nsr_policy_own_client(const struct nsr_resdb *db, const char *client,
			  const char *host);
/* nsr_policy_may_read - 1 if user@host may read client's data (save
 * sets, index entries, recover): an administrator, the client's own
 * host, or listed in its remote access. */
int nsr_policy_may_read(const struct nsr_resdb *db, const char *server,
			const char *client, const char *user,
			const char *host);

/* nsr_policy_is_daemon - 1 if user@host may write the server's
 * databases as one of its programs: an administrator, root on the
 * server's host or localhost, or root on a storage node (a host a
 * device names as rd=HOST:, or an NSR storage node resource). */
int nsr_policy_is_daemon(const struct nsr_resdb *db, const char *server,
			 const char *user, const char *host);

struct nsr_policy;

/* nsr_policy_open - a handle on <root>/res/nsrdb (loaded at the first
 * refresh; a database that cannot be read leaves only the default
 * administrators).  NSR_OK or NSR_ERR_NOMEM. */
int nsr_policy_open(const char *root, struct nsr_policy **out);
/* nsr_policy_refresh - re-read the resources if the directory changed
 * since the last look (every call changes show at the next call). */
void nsr_policy_refresh(struct nsr_policy *p);
/* nsr_policy_admin / nsr_policy_reader - nsr_policy_is_admin and
 * nsr_policy_may_read on the handle's copy. */
int nsr_policy_admin(struct nsr_policy *p, const char *user,
		     const char *host);
int nsr_policy_reader(struct nsr_policy *p, const char *client,
		      const char *user, const char *host);
struct nsr_buf;
struct nsr_rpc_call;

/* nsr_policy_call_admin - refresh, then 1 if the caller of call is an
 * administrator. */
int nsr_policy_call_admin(struct nsr_policy *p,
			  const struct nsr_rpc_call *call);
/* nsr_policy_call_daemon - refresh, then nsr_policy_is_daemon of the
 * caller of call. */
int nsr_policy_call_daemon(struct nsr_policy *p,
			   const struct nsr_rpc_call *call);
/* nsr_policy_call_own - refresh, then 1 if the caller's host is
 * client's own (nsr_policy_own_client). */
int nsr_policy_call_own(struct nsr_policy *p, const struct nsr_rpc_call *call,
			const char *client);
/* nsr_policy_call_reader - refresh, then 1 if the caller of call may
 * read client's data. */
int nsr_policy_call_reader(struct nsr_policy *p,
			   const struct nsr_rpc_call *call,
			   const char *client);

/* Why a call is refused. */
enum nsr_policy_why {
	NSR_POLICY_NOT_ADMIN,  /* not in the administrator list */
	NSR_POLICY_NOT_READER, /* not the client, not in remote access */
	NSR_POLICY_NOT_OWN,    /* a host saves only its own data */
	NSR_POLICY_NOT_DAEMON, /* writes are the server's programs' */
};
/* nsr_policy_deny - the words of every refusal into why: "denied: WHAT
 * by USER@HOST: REASON; what to do"; returns NSR_ERR_PERM.  The daemon
 * logs them. */
int nsr_policy_deny(const struct nsr_rpc_call *call, const char *what,
		    enum nsr_policy_why reason, struct nsr_buf *why);

/* nsr_policy_close - free the handle (NULL is fine). */
void nsr_policy_close(struct nsr_policy *p);

#endif /* NSR_POLICY_H */
