/*
 * fuzz_tls_revoked.c - the merge of a server's revocation list into a
 * host's (nsr_tls_revoked_merge, what nsrexecd does with REVOKED_GET's
 * answer).  Byte 0 picks where the rest splits: before it, the host's
 * tls/revoked as it is (any bytes); after it, the text merged in (up to
 * its first NUL, as a C string arrives).  Properties: the merge returns
 * a count or an error, never crashes; the file afterwards is the old
 * bytes unchanged (with a newline ending their last line when lines
 * were added) followed by exactly count lines "hex-serial host\n"; the
 * same merge again adds nothing, whatever stray bytes the old file
 * held.  Each input works in a fresh
 * directory under $NSR_TEST_TMPDIR (or /tmp), removed at the end.
 */
#include "nsr/compat.h"

#include <ctype.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/tls.h"

#include "fuzz_tmp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* added_ok - p[0..n) is exactly count lines "hex host\n" (host without
 * blanks or NUL). */
static int added_ok(const char *p, size_t n, int count)
{
	int lines = 0;

	for (size_t i = 0; i < n;) {
		size_t s = i;

		while (i < n && isxdigit((unsigned char)p[i]))
			i++;
		if (i == s || i >= n || p[i++] != ' ')
			return 0;
		s = i;
		while (i < n && p[i] != '\n' && p[i] != ' ' && p[i] != '\t' &&
		       p[i] != '\0')
			i++;
		if (i == s || i >= n || p[i++] != '\n')
			return 0;
		lines++;
	}
	return lines == count;
}

/* LLVMFuzzerTestOneInput - fuzz entry point. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *base = getenv("NSR_TEST_TMPDIR");
	char root[PATH_MAX], file[PATH_MAX + 16];
	struct nsr_buf err, before, after;
	size_t cut;
	char *text;
	int n, again;
	size_t nl;

	if (size < 1)
		return 0;
	cut = (size - 1) * data[0] / 255;
	if (base == NULL || *base == '\0')
		base = "/tmp";
	mkdir(base, 0755);
	snprintf(root, sizeof(root), "%s/fuzzrevoked.XXXXXX", base);
	if (mkdtemp(root) == NULL)
		return 0;
	snprintf(file, sizeof(file), "%s/tls", root);
	mkdir(file, 0700);
	snprintf(file, sizeof(file), "%s/tls/revoked", root);
	text = strndup((const char *)data + 1 + cut, size - 1 - cut);
	nsr_buf_init(&err, 0);
	nsr_buf_init(&before, 0);
	nsr_buf_init(&after, 0);
	if (text == NULL || (cut > 0 && nsr_file_replace(file, data + 1, cut,
							  0644) != NSR_OK))
		goto out;
	(void)nsr_tls_revoked_text(root, &before);
	n = nsr_tls_revoked_merge(root, text, &err);
	if (n < 0)
		goto out; /* an error, said in err */
	if (nsr_tls_revoked_text(root, &after) != NSR_OK)
		abort();
	if (after.len < before.len ||
	    memcmp(after.data, before.data, before.len) != 0)
		abort(); /* revocations are only ever added */
	nl = n > 0 && before.len > 0 &&
	     before.data[before.len - 1] != '\n';
	if (nl && after.data[before.len] != '\n')
		abort();
	if (!added_ok(after.data + before.len + nl,
		      after.len - before.len - nl, n))
		abort();
	again = nsr_tls_revoked_merge(root, text, &err);
	if (again != 0)
		abort(); /* nothing is added twice */
out:
	free(text);
	nsr_buf_release(&err);
	nsr_buf_release(&before);
	nsr_buf_release(&after);
	fuzz_rmrf(root);
	return 0;
}
