/*
 * fuzz_ledit.c - the line editor's key decoder (escape sequences, control
 * keys, history) on hostile keystrokes.  Byte 0: odd = the editor (forced
 * on, as on a terminal), even = plain lines.  Every input must end in
 * lines, end of input or an error, with everything freed; an edited line
 * holds no control byte and fits the bound; plain lines are exactly the
 * input's lines (one over the bound refused whole).
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/ledit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nsr_ledit *le = NULL;
	struct nsr_buf line;
	int p[2], null, rc, lines = 0;

	if (size < 1 || size > 32768 || pipe(p) != 0)
		return 0;
	null = open("/dev/null", O_WRONLY);
	/* the first byte: editor (odd) or plain lines (even) */
	if (write(p[1], data + 1, size - 1) != (ssize_t)(size - 1) ||
	    null < 0 || nsr_ledit_new(p[0], null, data[0] & 1, &le) != 0)
		goto out;
	close(p[1]);
	p[1] = -1;
	nsr_buf_init(&line, 0);
	const char *in = (const char *)data + 1, *end = in + size - 1;

	do {
		rc = nsr_ledit_read(le, "> ", &line);
		if (rc == 1 && line.len > NSR_LEDIT_MAX)
			abort();
		for (size_t i = 0; rc == 1 && (data[0] & 1) && i < line.len;
		     i++)
			if ((unsigned char)line.data[i] < 32 ||
			    line.data[i] == 127)
				abort();
		if (!(data[0] & 1) && rc != 0) {
			const char *nl = memchr(in, '\n', (size_t)(end - in));
			size_t n = (size_t)((nl ? nl : end) - in);

			if (rc == 1 && (n != line.len ||
					memcmp(in, line.data, n) != 0))
				abort();
			if (rc == -8 && n <= NSR_LEDIT_MAX)
				abort();
			in += n + (nl != NULL);
		}
	} while ((rc == 1 || rc == -8 /* NSR_ERR_TOOBIG */) &&
		 ++lines < 100000);
	nsr_buf_release(&line);
out:
	nsr_ledit_free(le);
	close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	if (null >= 0)
		close(null);
	return 0;
}
