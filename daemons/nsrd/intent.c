/*
 * intent.c - nsrd's intent records.  An operation that spans a data mover
 * and the media database (labeling a volume, deleting a save set and its
 * bytes) writes a line naming it to <root>/res/<kind>.intent (temp +
 * fsync + rename) before its first step and takes the line off after its
 * last.  Whatever dies halfway (nsrd, the mover, nsrmmdbd), the tick
 * finds the line and finishes the operation, or confirms that it did not
 * happen, once the peers answer again: nsrd_intents_resume.
 *
 * Handlers and the tick both run under the RPC server mutex, so the
 * files have one writer at a time.
 */
#include "nsr/compat.h"

#include <time.h>

#include "nsr/buf.h"
#include "nsr/daemon.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/log.h"
#include "nsr/mmdb_clnt.h"
#include "nsr/peer.h"
#include "nsrd.h"

#define INTENT_MAX 65536 /* bytes of one intent file */
#define INTENT_RETRY_SEC 2

/* intent_file - the path of kind's intent file (free it). */
static char *intent_file(struct nsrd *n, const char *kind)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "res/%s.intent", kind);
	return nsr_daemon_path(n->d, rel);
}

/* intent_read - kind's lines into out ("" when there is no file). */
static int intent_read(struct nsrd *n, const char *kind, struct nsr_buf *out)
{
	char *path = intent_file(n, kind);
	int rc = nsr_file_read(path, out, INTENT_MAX);

	free(path);
	if (rc == NSR_ERR_NOTFOUND) {
		nsr_buf_reset(out);
		rc = NSR_OK;
	}
	return rc;
}

/* intent_write - replace kind's file with lines, durably. */
static int intent_write(struct nsrd *n, const char *kind,
			const struct nsr_buf *lines)
{
	char *path = intent_file(n, kind);
	int rc = nsr_file_replace(path, lines->data, lines->len, 0644);

	if (rc != NSR_OK)
		nsr_error("cannot write %s: %s", path, rc == NSR_ERR_SYSTEM
			  ? strerror(errno) : nsr_strerror(rc));
	free(path);
	return rc;
}

/* has_line - is line (without its newline) one of the lines of b? */
static const char *has_line(const struct nsr_buf *b, const char *line)
{
	size_t len = strlen(line);

	for (const char *p = b->data; *p;) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);

		if (l == len && memcmp(p, line, len) == 0)
			return p;
		p += l + (nl != NULL);
	}
	return NULL;
}

/* nsrd_intent_add - list line under kind before the operation starts. */
int nsrd_intent_add(struct nsrd *n, const char *kind, const char *line)
{
	struct nsr_buf b;
	int rc;

	nsr_buf_init(&b, 0);
	rc = intent_read(n, kind, &b);
	if (rc == NSR_OK && !has_line(&b, line)) {
		nsr_buf_addf(&b, "%s\n", line);
		rc = intent_write(n, kind, &b);
	}
	nsr_buf_release(&b);
	return rc;
}

/* nsrd_intent_drop - the operation of line is finished (or did not
 * happen): take it off. */
void nsrd_intent_drop(struct nsrd *n, const char *kind, const char *line)
{
	struct nsr_buf b, keep;
	const char *at;

	nsr_buf_init(&b, 0);
	nsr_buf_init(&keep, 0);
	if (intent_read(n, kind, &b) == NSR_OK) {
		at = has_line(&b, line);
		if (at) {
			nsr_buf_add(&keep, b.data, (size_t)(at - b.data));
			at += strlen(line);
			nsr_buf_addstr(&keep, *at == '\n' ? at + 1 : at);
			(void)intent_write(n, kind, &keep);
		}
	}
	nsr_buf_release(&keep);
	nsr_buf_release(&b);
}

/* resume_kind - try every line of kind once. */
static void resume_kind(struct nsrd *n, const char *kind,
			int (*finish)(struct nsrd *, const char *))
{
	struct nsr_buf b;
	char line[1024];

	nsr_buf_init(&b, 0);
	if (intent_read(n, kind, &b) != NSR_OK)
		goto out;
	for (const char *p = b.data; *p;) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);

		if (l > 0 && l < sizeof(line)) {
			memcpy(line, p, l);
			line[l] = '\0';
			if (finish(n, line) == 0)
				nsrd_intent_drop(n, kind, line);
		}
		p += l + (nl != NULL);
	}
out:
	nsr_buf_release(&b);
}

/* nsrd_intents_resume - from the tick: finish what is listed, every
 * INTENT_RETRY_SEC while something is; a peer that does not answer
 * yet is tried again later, never waited for here. */
void nsrd_intents_resume(struct nsrd *n)
{
	static time_t next;
	time_t now = time(NULL);

	if (now < next || !n->mmdb)
		return;
	next = now + INTENT_RETRY_SEC;
	mmdb_clnt_set_wait(n->mmdb, 0);
	resume_kind(n, "label", nsrd_label_finish);
	resume_kind(n, "delete", nsrd_delete_finish);
	resume_kind(n, "voldelete", nsrd_voldelete_finish);
	resume_kind(n, "unclone", nsrd_unclone_finish);
	mmdb_clnt_set_wait(n->mmdb, nsr_peer_wait_default());
}
