/*
 * ledit.h - reading command lines for interactive programs (recover's
 * recover> prompt) without a readline dependency.  On a terminal a small
 * editor runs on termios: printable characters insert at the cursor,
 * Backspace deletes before it, Delete and ^D under it, Left/Right (and
 * ^B/^F) move, Home/End (^A/^E) jump, Up/Down walk the history of the
 * session, ^U clears before the cursor, ^C abandons the line (a new
 * prompt), ^D on an empty line is end of input.  The terminal is in raw
 * mode only while a line is read.  Otherwise (a pipe or a file) lines
 * are read plainly and no prompt is shown.
 * Known limit: the line is redrawn on one terminal row (carriage return,
 * prompt, text); a line wider than the terminal shows wrapped copies
 * while it is edited (what is read is right).
 */
#ifndef NSR_LEDIT_H
#define NSR_LEDIT_H

struct nsr_buf;
struct nsr_ledit;

/* Longest line accepted (longer ones: NSR_ERR_TOOBIG, the rest of the
 * line is dropped). */
#define NSR_LEDIT_MAX 8192
/* Lines the history keeps. */
#define NSR_LEDIT_HISTORY 200

/* nsr_ledit_new - an editor reading fd in and echoing on fd out; the
 * editor is used when in is a terminal (or always with force_tty, for
 * tests on a pseudo-terminal).  NSR_ERR_NOMEM. */
int nsr_ledit_new(int in, int out, int force_tty, struct nsr_ledit **le);
/* nsr_ledit_read - show prompt (terminal only) and read one line into
 * line (replacing its contents, without the newline): 1 a line, 0 end of
 * input, NSR_ERR_TOOBIG, NSR_ERR_SYSTEM (errno). */
int nsr_ledit_read(struct nsr_ledit *le, const char *prompt,
		   struct nsr_buf *line);
/* nsr_ledit_free - free (NULL is fine); the terminal is as it was. */
void nsr_ledit_free(struct nsr_ledit *le);

#endif /* NSR_LEDIT_H */
