/*
 * ident.c - the caller identity a client states on its connections
 * (NSR_AUTH_USER, see "Authorization" in nsr/rpc.h): which names are
 * valid, and the name this process states.
 */
#include "nsr/compat.h"

#include <pthread.h>
#include <pwd.h>
#include <unistd.h>

#include "nsr/rpc.h"

static pthread_once_t self_once = PTHREAD_ONCE_INIT;
static char self_name[NSR_RPC_USER_MAX + 1];

/* nsr_rpc_user_valid - 1 to NSR_RPC_USER_MAX of [A-Za-z0-9._-], a '$'
 * allowed last (machine accounts), not starting with '-' or '.'. */
int nsr_rpc_user_valid(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n > NSR_RPC_USER_MAX || name[0] == '-' ||
	    name[0] == '.')
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		    c == '-' || (c == '$' && i == n - 1))
			continue;
		return 0;
	}
	return 1;
}

/* nsr_rpc_cred_user - the name an NSR_AUTH_USER credential states. */
int nsr_rpc_cred_user(const void *body, size_t len,
		      char out[NSR_RPC_USER_MAX + 1])
{
	out[0] = '\0';
	if (len == 0 || len > NSR_RPC_USER_MAX || memchr(body, '\0', len))
		return 0;
	memcpy(out, body, len);
	out[len] = '\0';
	if (nsr_rpc_user_valid(out))
		return 1;
	out[0] = '\0';
	return 0;
}

/* self_init - look the effective uid's name up once.  NSR_TEST_USER
 * (tests) states another name: it grants nothing a process could not
 * state anyway, since stating is believed only of a process that holds
 * the host's key (or on a connection plain-hosts trusts). */
static void self_init(void)
{
	const char *e = getenv("NSR_TEST_USER");
	struct passwd pw, *res = NULL;
	char buf[4096];

	if (e && nsr_rpc_user_valid(e)) {
		snprintf(self_name, sizeof(self_name), "%s", e);
		return;
	}
	if (getpwuid_r(geteuid(), &pw, buf, sizeof(buf), &res) == 0 && res &&
	    nsr_rpc_user_valid(res->pw_name))
		snprintf(self_name, sizeof(self_name), "%s", res->pw_name);
	else if (geteuid() == 0)
		snprintf(self_name, sizeof(self_name), "root");
}

/* nsr_rpc_self_user - the name this process states, or NULL. */
const char *nsr_rpc_self_user(void)
{
	pthread_once(&self_once, self_init);
	return self_name[0] ? self_name : NULL;
}
