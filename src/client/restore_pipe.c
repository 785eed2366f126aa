/*
 * restore_pipe.c - the restore's pipe target (restore.h, to_fd): the data
 * of the one regular file selected goes to a descriptor, a command's
 * standard input (recover --pipe), instead of into a file.  Nothing is
 * created: other objects are passed over, holes are written as zeros, no
 * metadata is applied, and a file whose checksum does not match is
 * reported (the bytes are gone already: the command must not trust
 * them, and recover fails).  A command that stops reading (EPIPE) ends
 * the writing with a warning; its own exit status tells whether that
 * was right.
 *
 * Invariants:
 *  1. at most one regular file is written per restore (r->piped);
 *  2. cur.fd is a dup of out_fd while that file is written, closed by
 *     cur_reset like any file's.
 */
#include "nsr/compat.h"

#include <unistd.h>

#include "nsr/err.h"
#include "nsr/fileio.h"
#include "nsr/restore.h"

#include "restore_int.h"

/* rst_pipe_start - a selected object: the first regular file is the one
 * written to out_fd; anything else is passed over. */
int rst_pipe_start(struct nsr_restore *r, const struct nsr_asm_file *f)
{
	if (f->type != NSR_ASM_REG) {
		r->st.filtered++;
		return 0;
	}
	if (r->piped) {
		rst_error(r, f->path, NSR_ERR_INVAL,
			  "not sent: only one file goes to the command (name "
			  "it)");
		return 0;
	}
	r->cur.fd = dup(r->out_fd);
	if (r->cur.fd < 0) {
		rst_error(r, f->path, NSR_ERR_SYSTEM, "pipe");
		return 0;
	}
	r->piped = 1;
	r->cur.write = 1;
	r->cur.target = strdup("(the command's standard input)");
	return r->cur.target ? 0 : NSR_ERR_NOMEM;
}

/* rst_pipe_write - data to the command; EPIPE (it stopped reading) is a
 * warning, any other failure an error; either ends the writing. */
int rst_pipe_write(struct nsr_restore *r, const void *p, size_t n)
{
	if (nsr_write_full(r->cur.fd, p, n) == NSR_OK) {
		r->cur.written += n;
		return 0;
	}
	if (errno == EPIPE)
		rst_warn(r, r->cur.path, NSR_ERR_SYSTEM,
			 "the command stopped reading");
	else
		rst_error(r, r->cur.path, NSR_ERR_SYSTEM, "write");
	r->cur.failed = 1;
	return 0;
}

/* rst_pipe_zeros - a hole: len zero bytes to the command. */
int rst_pipe_zeros(struct nsr_restore *r, uint64_t len)
{
	static const uint8_t zero[65536];

	while (len > 0 && !r->cur.failed) {
		size_t n = (size_t)NSR_MIN(len, (uint64_t)sizeof(zero));

		rst_pipe_write(r, zero, n);
		len -= n;
	}
	return 0;
}

/* rst_pipe_end - the file's end: its checksum decides. */
int rst_pipe_end(struct nsr_restore *r, const struct nsr_asm_file_end *fe)
{
	if (r->cur.failed)
		return 0;
	r->st.bytes += r->cur.written;
	if (!fe->ck_ok) {
		r->st.ck_errors++;
		r->st.damaged++;
		rst_error(r, r->cur.path, NSR_ERR_CHECKSUM,
			  "checksum: damaged data went to the command");
		return 0;
	}
	r->cur.meta.size = fe->bytes;
	r->st.files++;
	if (r->cb.restored)
		r->cb.restored(r->cb.ctx, &r->cur.meta, r->cur.target);
	return 0;
}
