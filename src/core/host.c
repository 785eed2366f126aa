/*
 * host.c - host names (host.h).
 */
#include "nsr/compat.h"

#include <ctype.h>
#include <unistd.h>

#include "nsr/err.h"
#include "nsr/host.h"

/* nsr_host_self - gethostname, or "localhost". */
void nsr_host_self(char *out, size_t len)
{
	if (len == 0)
		return;
	if (gethostname(out, len - 1) != 0 || !out[0])
		snprintf(out, len, "localhost");
	out[len - 1] = '\0';
}

/* nsr_host_same - a and b name the same host: equal, or equal up to
 * the first dot of either (a short name and its domain name). */
int nsr_host_same(const char *a, const char *b)
{
	size_t la = strcspn(a, "."), lb = strcspn(b, ".");

	return strcasecmp(a, b) == 0 ||
	       (la == lb && strncasecmp(a, b, la) == 0 &&
		(a[la] == '\0' || b[lb] == '\0'));
}

/* nsr_host_check - a host name we accept. */
int nsr_host_check(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n > NSR_HOST_MAX)
		return NSR_ERR_INVAL;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];

		if (!isalnum(c) && c != '-' && c != '.' && c != '_' &&
		    c != ':')
			return NSR_ERR_INVAL;
	}
	return NSR_OK;
}

/* nsr_host_remote_device - "rd=HOST:PATH" -> HOST and PATH. */
const char *nsr_host_remote_device(const char *name, char *host,
				   size_t hlen)
{
	const char *colon;
	size_t n;

	if (hlen)
		host[0] = '\0';
	if (strncmp(name, "rd=", 3) != 0)
		return name;
	colon = strchr(name + 3, ':');
	if (!colon)
		return NULL;
	n = (size_t)(colon - (name + 3));
	if (n == 0 || n >= hlen)
		return NULL;
	memcpy(host, name + 3, n);
	host[n] = '\0';
	if (nsr_host_check(host) != NSR_OK) {
		host[0] = '\0';
		return NULL;
	}
	return colon + 1;
}
