/*
 * ledit.c - a small line editor on termios (ledit.h).
 *
 * Invariants:
 *  1. 0 <= pos <= len <= NSR_LEDIT_MAX, buf[len] == '\0'.
 *  2. The terminal is raw only inside nsr_ledit_read, restored on every
 *     return path; switching never drops input typed ahead (TCSADRAIN:
 *     a command typed while the last one ran is the next line read).
 *  3. The history holds at most NSR_LEDIT_HISTORY lines, oldest first,
 *     none empty, no line equal to the one before it.
 */
#include "nsr/compat.h"

#include <termios.h>
#include <unistd.h>

#include "nsr/buf.h"
#include "nsr/err.h"
#include "nsr/ledit.h"

struct nsr_ledit {
	int in, out, tty;
	char buf[NSR_LEDIT_MAX + 1];
	size_t len, pos;
	char *hist[NSR_LEDIT_HISTORY];
	size_t nhist, at; /* at: history line shown (nhist = the new one) */
	char *edit;	  /* the new line, kept while walking the history */
	const char *prompt;
};

/* nsr_ledit_new - an editor for in/out. */
int nsr_ledit_new(int in, int out, int force_tty, struct nsr_ledit **le)
{
	*le = calloc(1, sizeof(**le));
	if (!*le)
		return NSR_ERR_NOMEM;
	(*le)->in = in;
	(*le)->out = out;
	(*le)->tty = force_tty || isatty(in);
	return NSR_OK;
}

/* nsr_ledit_free - free the history and the editor. */
void nsr_ledit_free(struct nsr_ledit *le)
{
	if (!le)
		return;
	for (size_t i = 0; i < le->nhist; i++)
		free(le->hist[i]);
	free(le->edit);
	free(le);
}

/* get - one byte: 1, 0 at end of input, or NSR_ERR_SYSTEM. */
static int get(struct nsr_ledit *le, char *c)
{
	ssize_t n;

	do
		n = read(le->in, c, 1);
	while (n < 0 && errno == EINTR);
	return n < 0 ? NSR_ERR_SYSTEM : (int)n;
}

/* put - write text to the terminal (errors ignored: the next read will
 * say whether the terminal is gone). */
static void put(struct nsr_ledit *le, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(le->out, s, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/* redraw - the prompt and the line, the cursor at pos. */
static void redraw(struct nsr_ledit *le)
{
	char back[32];

	put(le, "\r", 1);
	put(le, le->prompt, strlen(le->prompt));
	put(le, le->buf, le->len);
	put(le, "\x1b[K", 3);
	if (le->pos < le->len) {
		snprintf(back, sizeof(back), "\x1b[%zuD", le->len - le->pos);
		put(le, back, strlen(back));
	}
}

/* set_line - replace the line with s (cut at the bound), cursor at its
 * end. */
static void set_line(struct nsr_ledit *le, const char *s)
{
	le->len = strnlen(s, NSR_LEDIT_MAX);
	memcpy(le->buf, s, le->len);
	le->buf[le->len] = '\0';
	le->pos = le->len;
}

/* history_go - show history line at (nhist: the line being edited). */
static void history_go(struct nsr_ledit *le, size_t at)
{
	if (at > le->nhist || at == le->at)
		return;
	if (le->at == le->nhist) {
		free(le->edit);
		le->edit = strdup(le->buf);
	}
	le->at = at;
	set_line(le,
		 at == le->nhist ? (le->edit ? le->edit : "") : le->hist[at]);
	redraw(le);
}

/* history_add - remember a line entered (invariant 3). */
static void history_add(struct nsr_ledit *le)
{
	char *s;

	if (le->len == 0 ||
	    (le->nhist && strcmp(le->hist[le->nhist - 1], le->buf) == 0))
		return;
	s = strdup(le->buf);
	if (!s)
		return;
	if (le->nhist == NSR_LEDIT_HISTORY) {
		free(le->hist[0]);
		memmove(le->hist, le->hist + 1,
			(NSR_LEDIT_HISTORY - 1) * sizeof(char *));
		le->nhist--;
	}
	le->hist[le->nhist++] = s;
}

/* insert - a printable byte at the cursor. */
static void insert(struct nsr_ledit *le, char c)
{
	if (le->len == NSR_LEDIT_MAX)
		return;
	memmove(le->buf + le->pos + 1, le->buf + le->pos,
		le->len - le->pos + 1);
	le->buf[le->pos++] = c;
	le->len++;
	if (le->pos == le->len)
		put(le, &c, 1); /* at the end: no redraw needed */
	else
		redraw(le);
}

/* erase - delete the byte at i (i < len). */
static void erase(struct nsr_ledit *le, size_t i)
{
	memmove(le->buf + i, le->buf + i + 1, le->len - i);
	le->len--;
	if (le->pos > i)
		le->pos--;
	redraw(le);
}

/* escape - an escape sequence (ESC seen): arrows, Home, End, Delete. */
static int escape(struct nsr_ledit *le)
{
	char c, d = 0;
	int rc = get(le, &c);

	if (rc <= 0 || (c != '[' && c != 'O'))
		return rc;
	rc = get(le, &c);
	if (rc <= 0)
		return rc;
	if (c >= '0' && c <= '9') {
		rc = get(le, &d); /* the '~' of ESC [ 3 ~ */
		if (rc <= 0)
			return rc;
	}
	switch (c) {
	case 'A':
		history_go(le, le->at ? le->at - 1 : 0);
		break;
	case 'B':
		history_go(le, le->at + 1);
		break;
	case 'C':
		if (le->pos < le->len)
			le->pos++;
		redraw(le);
		break;
	case 'D':
		if (le->pos > 0)
			le->pos--;
		redraw(le);
		break;
	case 'H':
	case '1':
		le->pos = 0;
		redraw(le);
		break;
	case 'F':
	case '4':
		le->pos = le->len;
		redraw(le);
		break;
	case '3':
		if (d == '~' && le->pos < le->len)
			erase(le, le->pos);
		break;
	default:
		break;
	}
	return 1;
}

/* edit - the editor loop: 1 a line, 0 end of input, or an error. */
static int edit(struct nsr_ledit *le)
{
	for (;;) {
		char c;
		int rc = get(le, &c);

		if (rc <= 0)
			return rc;
		switch (c) {
		case '\r':
		case '\n':
			put(le, "\r\n", 2);
			return 1;
		case 3: /* ^C: abandon the line */
			put(le, "^C\r\n", 4);
			le->len = le->pos = 0;
			le->buf[0] = '\0';
			le->at = le->nhist;
			redraw(le);
			break;
		case 4: /* ^D */
			if (le->len == 0) {
				put(le, "\r\n", 2);
				return 0;
			}
			if (le->pos < le->len)
				erase(le, le->pos);
			break;
		case 127:
		case 8:
			if (le->pos > 0)
				erase(le, le->pos - 1);
			break;
		case 1:
			le->pos = 0;
			redraw(le);
			break; /* ^A */
		case 5:
			le->pos = le->len;
			redraw(le);
			break; /* ^E */
		case 2:
			if (le->pos)
				le->pos--;
			redraw(le);
			break; /* ^B */
		case 6:	       /* ^F */
			if (le->pos < le->len)
				le->pos++;
			redraw(le);
			break;
		case 21: /* ^U */
			memmove(le->buf, le->buf + le->pos,
				le->len - le->pos + 1);
			le->len -= le->pos;
			le->pos = 0;
			redraw(le);
			break;
		case 27:
			rc = escape(le);
			if (rc <= 0)
				return rc;
			break;
		default:
			if ((unsigned char)c >= 32)
				insert(le, c);
			break;
		}
	}
}

/* read_tty - a line through the editor, the terminal raw meanwhile. */
static int read_tty(struct nsr_ledit *le, const char *prompt)
{
	struct termios old, raw;
	int have = tcgetattr(le->in, &old) == 0, rc;

	if (have) {
		raw = old;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO | ISIG | IEXTEN);
		raw.c_iflag &= ~(tcflag_t)(ICRNL | IXON);
		raw.c_cc[VMIN] = 1;
		raw.c_cc[VTIME] = 0;
		tcsetattr(le->in, TCSADRAIN, &raw); /* typed ahead: kept */
	}
	le->prompt = prompt;
	le->len = le->pos = 0;
	le->buf[0] = '\0';
	le->at = le->nhist;
	redraw(le);
	rc = edit(le);
	if (have)
		tcsetattr(le->in, TCSADRAIN, &old); /* invariant 2 */
	if (rc == 1)
		history_add(le);
	return rc;
}

/* read_plain - a line from a pipe or file (no prompt). */
static int read_plain(struct nsr_ledit *le)
{
	size_t n = 0;
	int rc, got = 0, over = 0;
	char c;

	while ((rc = get(le, &c)) == 1) {
		got = 1;
		if (c == '\n')
			break;
		if (n == NSR_LEDIT_MAX)
			over = 1;
		else
			le->buf[n++] = c;
	}
	le->buf[n] = '\0';
	le->len = n;
	if (rc < 0)
		return rc;
	if (over)
		return NSR_ERR_TOOBIG;
	return got;
}

/* nsr_ledit_read - one line. */
int nsr_ledit_read(struct nsr_ledit *le, const char *prompt,
		   struct nsr_buf *line)
{
	int rc = le->tty ? read_tty(le, prompt) : read_plain(le);

	nsr_buf_reset(line);
	if (rc == 1 && nsr_buf_add(line, le->buf, le->len) != NSR_OK)
		return NSR_ERR_NOMEM;
	return rc;
}
