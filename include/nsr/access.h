/*
 * access.h - access lists: who may do what, as NetWorker writes it in the
 * NSR resource's `administrator` and an NSR client's `remote access`
 * attributes (nsr_resource(5)).
 *
 * An entry is `user@host`: user is a user name or a pattern, host a host
 * name, an address or a pattern; `*` in either stands for any run of
 * characters (`*@*` is everyone, `root@*.example.com`, `*@cl1`).  Names
 * compare without regard to case for the host, exactly for the user.  A
 * host pattern without a dot also matches a caller's domain name by its
 * first label (`root@cl1` matches root@cl1.example.com).  A caller that
 * stated no user matches only entries whose user part is `*`.
 * Functions take no locks and keep no state.
 */
#ifndef NSR_ACCESS_H
#define NSR_ACCESS_H

#include <stddef.h>

struct nsr_buf;

#define NSR_ACCESS_ENTRY_MAX 512 /* longest entry accepted */

/* nsr_access_check_entry - NSR_OK if entry is a valid access list entry;
 * else NSR_ERR_INVAL and why (may be NULL) gets what is wrong and how to
 * write it. */
int nsr_access_check_entry(const char *entry, struct nsr_buf *why);
/* nsr_access_match - 1 if entry admits user (NULL: none stated) at host,
 * 0 if not or the entry is not valid. */
int nsr_access_match(const char *entry, const char *user, const char *host);
/* nsr_access_match_host - 1 if the host pattern pat matches host (the
 * host half of nsr_access_match; also how a client's name or alias is
 * compared with a caller's certified host). */
int nsr_access_match_host(const char *pat, const char *host);

#endif /* NSR_ACCESS_H */
