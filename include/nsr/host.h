/*
 * host.h - host names, the one owner of how OpenNSR names hosts.
 *
 * Resources and the media database record host names, never addresses.
 * A device on a storage node other than the server is named as
 * NetWorker names it: "rd=HOST:PATH" (remote device).
 */
#ifndef NSR_HOST_H
#define NSR_HOST_H

#include <stddef.h>

#define NSR_HOST_MAX 255 /* longest host name accepted */

/* nsr_host_self - this host's name (gethostname; "localhost" if it has
 * none) into out[len]. */
void nsr_host_self(char *out, size_t len);
/* nsr_host_same - 1 if a and b name the same host: equal ignoring case,
 * or a short name and a domain name of it ("sn1", "sn1.example.com"). */
int nsr_host_same(const char *a, const char *b);
/* nsr_host_check - NSR_OK if name is a plausible host name (1-255 of
 * letters, digits, '-', '.', '_', ':' for IPv6 literals), else
 * NSR_ERR_INVAL. */
int nsr_host_check(const char *name);
/* nsr_host_remote_device - split a device name: "rd=sn1:/dev/nst0" gives
 * host "sn1" (into host[hlen]) and returns a pointer to "/dev/nst0" inside
 * name; a name without "rd=" gives host "" and returns name.  NULL when
 * the name starts with "rd=" but has no valid "HOST:" part. */
const char *nsr_host_remote_device(const char *name, char *host,
				   size_t hlen);

#endif /* NSR_HOST_H */
