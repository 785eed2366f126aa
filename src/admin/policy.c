/*
 * policy.c - the authorization rules over a resource database
 * (nsr/policy.h), and the self-refreshing read-only copy other daemons
 * of the server ask.
 *
 * Invariants:
 *  1. the rules exist once, here: nsrd asks them of its own database,
 *     nsrmmdbd and nsrindexd of their copy;
 *  2. a copy is replaced only by a complete new load; a load that fails
 *     keeps the copy before it (the files are replaced atomically, so a
 *     failure is a real damage, logged by nsrd when it loads);
 *  3. every use of the copy holds p->mu.
 */
#include "nsr/compat.h"

#include <pthread.h>
#include <sys/stat.h>
#include <time.h>

#include "nsr/access.h"
#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/host.h"
#include "nsr/policy.h"
#include "nsr/res.h"
#include "nsr/resdb.h"
#include "nsr/rpc.h"

struct nsr_policy {
	pthread_mutex_t mu;
	char *dir;		   /* <root>/res/nsrdb */
	char server[NSR_HOST_MAX + 1];
	struct nsr_resdb *db;	   /* the copy, or NULL */
	struct stat st;		   /* of dir when db was loaded */
};

/* find1 - the first resource of type named name (NULL: any), or NULL. */
static const struct nsr_res *find1(const struct nsr_resdb *db,
				   const char *type, const char *name)
{
	struct nsr_res *q;
	long i;

	if (!db || !(q = nsr_res_new()))
		return NULL;
	nsr_res_set1(q, "type", type);
	if (name)
		nsr_res_set1(q, "name", name);
	i = nsr_resdb_find(db, q, 0);
	nsr_res_free(q);
	return i >= 0 ? nsr_resdb_at(db, (size_t)i) : NULL;
}

/* any_match - 1 if a value of attr of r admits user@host. */
static int any_match(const struct nsr_res *r, const char *attr,
		     const char *user, const char *host)
{
	long a = r ? nsr_res_find(r, attr) : -1;

	for (size_t j = 0; a >= 0 && j < nsr_res_attr_nvalues(r, (size_t)a);
	     j++)
		if (nsr_access_match(nsr_res_attr_value(r, (size_t)a, j), user,
				     host))
			return 1;
	return 0;
}

/* nsr_policy_is_admin - the administrator list, or its default. */
int nsr_policy_is_admin(const struct nsr_resdb *db, const char *server,
			const char *user, const char *host)
{
	const struct nsr_res *s = find1(db, "NSR", NULL);
	long a = s ? nsr_res_find(s, "administrator") : -1;
	char dflt[NSR_HOST_MAX + 8];

	if (a >= 0 && nsr_res_attr_nvalues(s, (size_t)a) > 0)
		return any_match(s, "administrator", user, host);
	snprintf(dflt, sizeof(dflt), "root@%s", server);
	return nsr_access_match(dflt, user, host) ||
	       nsr_access_match("root@localhost", user, host);
}

/* nsr_policy_own_client - the client's name or an alias is host. */
int nsr_policy_own_client(const struct nsr_resdb *db, const char *client,
			  const char *host)
{
	const struct nsr_res *c = find1(db, "NSR client", client);
	long a = c ? nsr_res_find(c, "aliases") : -1;

	if (nsr_access_match_host(client, host))
		return 1;
	for (size_t j = 0; a >= 0 && j < nsr_res_attr_nvalues(c, (size_t)a);
	     j++)
		if (nsr_access_match_host(nsr_res_attr_value(c, (size_t)a, j),
					  host))
			return 1;
	return 0;
}

/* nsr_policy_may_read - administrator, own host, or remote access. */
int nsr_policy_may_read(const struct nsr_resdb *db, const char *server,
			const char *client, const char *user,
			const char *host)
{
	return nsr_policy_is_admin(db, server, user, host) ||
	       nsr_policy_own_client(db, client, host) ||
	       any_match(find1(db, "NSR client", client), "remote access",
			 user, host);
}

/* storage_node - 1 if host is a storage node: a device on it (rd=HOST:
 * in its name or access information) or an NSR storage node. */
static int storage_node(const struct nsr_resdb *db, const char *host)
{
	static const char *const attrs[] = {"name",
					    "device access information"};
	char h[NSR_HOST_MAX + 1];

	if (find1(db, "NSR storage node", host))
		return 1;
	for (size_t i = 0; db && i < nsr_resdb_count(db); i++) {
		const struct nsr_res *r = nsr_resdb_at(db, i);

		if (!nsr_res_type(r) || strcmp(nsr_res_type(r), "NSR device"))
			continue;
		for (size_t k = 0; k < NSR_ARRAY_SIZE(attrs); k++) {
			const char *v = nsr_res_get(r, attrs[k]);

			if (v && nsr_host_remote_device(v, h, sizeof(h)) &&
			    h[0] && nsr_access_match_host(h, host))
				return 1;
		}
	}
	return 0;
}

/* nsr_policy_is_daemon - administrators, root on the server or on a
 * storage node. */
int nsr_policy_is_daemon(const struct nsr_resdb *db, const char *server,
			 const char *user, const char *host)
{
	if (nsr_policy_is_admin(db, server, user, host))
		return 1;
	if (!user || strcmp(user, "root") != 0)
		return 0;
	return nsr_access_match_host(server, host) ||
	       strcmp(host, "localhost") == 0 || storage_node(db, host);
}

/* nsr_policy_open - a handle; the copy comes at the first refresh. */
int nsr_policy_open(const char *root, struct nsr_policy **out)
{
	struct nsr_policy *p = calloc(1, sizeof(*p));
	size_t n = strlen(root) + sizeof("/res/nsrdb");

	*out = NULL;
	if (!p || !(p->dir = malloc(n))) {
		free(p);
		return NSR_ERR_NOMEM;
	}
	snprintf(p->dir, n, "%s/res/nsrdb", root);
	nsr_host_self(p->server, sizeof(p->server));
	pthread_mutex_init(&p->mu, NULL);
	*out = p;
	return NSR_OK;
}

/* changed - 1 if dir differs from when the copy was loaded. */
static int changed(const struct stat *a, const struct stat *b)
{
	return a->st_ino != b->st_ino || a->st_dev != b->st_dev ||
	       a->st_mtim.tv_sec != b->st_mtim.tv_sec ||
	       a->st_mtim.tv_nsec != b->st_mtim.tv_nsec;
}

/* nsr_policy_refresh - invariant 2: load anew when the directory
 * changed, keeping the old copy if the load fails.  A directory changed
 * in the last two seconds is read again at every call: a second change
 * within the file system's time stamp granularity leaves no trace. */
void nsr_policy_refresh(struct nsr_policy *p)
{
	struct nsr_resdb_opts o;
	struct nsr_resdb *db = NULL;
	struct stat st;
	time_t now = time(NULL);

	pthread_mutex_lock(&p->mu);
	if (stat(p->dir, &st) != 0 ||
	    (p->db && !changed(&st, &p->st) && now - st.st_mtim.tv_sec > 2))
		goto out;
	memset(&o, 0, sizeof(o));
	o.readonly = 1;
	if (nsr_resdb_open(p->dir, &o, &db, NULL) == NSR_OK) {
		nsr_resdb_close(p->db);
		p->db = db;
		p->st = st;
	}
out:
	pthread_mutex_unlock(&p->mu);
}

/* nsr_policy_admin - nsr_policy_is_admin on the copy. */
int nsr_policy_admin(struct nsr_policy *p, const char *user,
		     const char *host)
{
	int yes;

	pthread_mutex_lock(&p->mu);
	yes = nsr_policy_is_admin(p->db, p->server, user, host);
	pthread_mutex_unlock(&p->mu);
	return yes;
}

/* nsr_policy_reader - nsr_policy_may_read on the copy. */
int nsr_policy_reader(struct nsr_policy *p, const char *client,
		      const char *user, const char *host)
{
	int yes;

	pthread_mutex_lock(&p->mu);
	yes = nsr_policy_may_read(p->db, p->server, client, user, host);
	pthread_mutex_unlock(&p->mu);
	return yes;
}

/* nsr_policy_call_admin - the caller of call, an administrator? */
int nsr_policy_call_admin(struct nsr_policy *p,
			  const struct nsr_rpc_call *call)
{
	nsr_policy_refresh(p);
	return nsr_policy_admin(p, nsr_rpc_call_user(call),
				nsr_rpc_call_host(call));
}

/* nsr_policy_call_daemon - the caller of call, one of the server's
 * programs? */
int nsr_policy_call_daemon(struct nsr_policy *p,
			   const struct nsr_rpc_call *call)
{
	int yes;

	nsr_policy_refresh(p);
	pthread_mutex_lock(&p->mu);
	yes = nsr_policy_is_daemon(p->db, p->server, nsr_rpc_call_user(call),
				   nsr_rpc_call_host(call));
	pthread_mutex_unlock(&p->mu);
	return yes;
}

/* nsr_policy_call_own - the caller's host, client's own? */
int nsr_policy_call_own(struct nsr_policy *p, const struct nsr_rpc_call *call,
			const char *client)
{
	int yes;

	nsr_policy_refresh(p);
	pthread_mutex_lock(&p->mu);
	yes = nsr_policy_own_client(p->db, client, nsr_rpc_call_host(call));
	pthread_mutex_unlock(&p->mu);
	return yes;
}

/* nsr_policy_call_reader - the caller of call, a reader of client? */
int nsr_policy_call_reader(struct nsr_policy *p,
			   const struct nsr_rpc_call *call,
			   const char *client)
{
	nsr_policy_refresh(p);
	return nsr_policy_reader(p, client, nsr_rpc_call_user(call),
				 nsr_rpc_call_host(call));
}

/* nsr_policy_deny - "denied: what by who: reason; what to do". */
int nsr_policy_deny(const struct nsr_rpc_call *call, const char *what,
		    enum nsr_policy_why reason, struct nsr_buf *why)
{
	static const char *const words[][2] = {
		[NSR_POLICY_NOT_ADMIN] = {
			"not an administrator",
			"an administrator can add this user@host to the NSR "
			"resource's administrator list (nsr_resource(5))"},
		[NSR_POLICY_NOT_READER] = {
			"not that client, not in its remote access",
			"the client's remote access must list this user@host "
			"(nsr_resource(5))"},
		[NSR_POLICY_NOT_OWN] = {
			"a host saves only its own data",
			"run save on that client, or add this host to the "
			"client's aliases"},
		[NSR_POLICY_NOT_DAEMON] = {
			"not a program of the server or a storage node",
			"this change is made through nsrd (nsrmm, nsradmin) "
			"by an administrator"},
	};
	char who[NSR_RPC_USER_MAX + NSR_HOST_MAX + 2];

	nsr_rpc_call_who(call, who, sizeof(who));
	nsr_buf_addf(why, "denied: %s by %s: %s; %s", what, who,
		     words[reason][0], words[reason][1]);
	return NSR_ERR_PERM;
}

/* nsr_policy_close - free the copy and the handle. */
void nsr_policy_close(struct nsr_policy *p)
{
	if (!p)
		return;
	nsr_resdb_close(p->db);
	pthread_mutex_destroy(&p->mu);
	free(p->dir);
	free(p);
}
