/*
 * log.c - line-oriented logging to a file and/or stderr (see log.h).
 * A message is formatted on the stack when it fits, else on the heap, so
 * nothing is cut; one longer than NSR_LOG_TEXT_MAX is shortened in the
 * middle with a marker that says how much was left out.  A thread that
 * logs a burst of lines may hold them (nsr_log_hold): they go to the log
 * file together, in one write, at nsr_log_release.
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "nsr/log.h"

static char log_name[64] = "nsr";
static int log_flags = NSR_LOG_STDERR;
static int log_fd = -1;
static enum nsr_log_level log_min = NSR_LOG_INFO;

static const char *const log_words[] = {"debug", "info", "warn", "error",
					"fatal", "panic"};

/* The lines this thread holds for the log file (nsr_log_hold): buf NULL
 * when it holds none (or had no memory: then lines go at once). */
#define LOG_HOLD_MAX (32u * 1024u) /* written when the next would not fit */
static _Thread_local struct {
	int depth;
	char *buf;
	size_t len;
} held;

/* nsr_log_init - set the program name and stderr behaviour. */
void nsr_log_init(const char *progname, int flags)
{
	const char *slash = strrchr(progname, '/');
	const char *dbg = getenv("NSR_DEBUG");

	snprintf(log_name, sizeof(log_name), "%s",
		 slash ? slash + 1 : progname);
	log_flags = flags;
	if (dbg && *dbg && strcmp(dbg, "0") != 0)
		log_min = NSR_LOG_DEBUG;
}

/* nsr_log_open_file - also append lines to path. */
int nsr_log_open_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);

	if (fd < 0)
		return -1;
	if (log_fd >= 0)
		close(log_fd);
	log_fd = fd;
	return 0;
}

/* nsr_log_set_level - minimum level written. */
void nsr_log_set_level(enum nsr_log_level lvl)
{
	log_min = lvl;
}

/* nsr_log_progname - the name given to nsr_log_init. */
const char *nsr_log_progname(void)
{
	return log_name;
}

/* log_writev_all - best-effort full write of a line in pieces, with one
 * writev() when it can (so lines do not interleave); logging must not
 * fail loudly. */
static void log_writev_all(int fd, struct iovec *v, int n)
{
	for (int tries = 0; n > 0 && tries < 64; tries++) {
		ssize_t w = writev(fd, v, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		while (n > 0 && (size_t)w >= v->iov_len) {
			w -= (ssize_t)v->iov_len;
			v++;
			n--;
		}
		if (n > 0) {
			v->iov_base = (char *)v->iov_base + w;
			v->iov_len -= (size_t)w;
		}
	}
}

/* nsr_log_shorten - s, or if it is longer than max bytes (or than out
 * can hold) its head and tail around a marker saying how much was left
 * out; cuts only on character boundaries of a UTF-8 string. */
size_t nsr_log_shorten(char *out, size_t cap, const char *s, size_t max)
{
	size_t n = strlen(s), head, tail;
	char mark[48];
	int m;

	if (cap <= 2 * sizeof(mark)) { /* no room for a marker */
		snprintf(out, cap, "%s", s);
		return strlen(out);
	}
	if (max > cap - sizeof(mark))
		max = cap - sizeof(mark);
	if (n <= max) {
		memcpy(out, s, n + 1);
		return n;
	}
	head = max / 2;
	tail = max - head;
	/* not inside a UTF-8 sequence */
	while (head > 0 && ((unsigned char)s[head] & 0xC0) == 0x80)
		head--;
	while (tail > 0 && ((unsigned char)s[n - tail] & 0xC0) == 0x80)
		tail--;
	m = snprintf(mark, sizeof(mark), "...[%zu bytes]...",
		     n - head - tail);
	memcpy(out, s, head);
	memcpy(out + head, mark, (size_t)m);
	memcpy(out + head + (size_t)m, s + n - tail, tail);
	out[head + (size_t)m + tail] = '\0';
	return head + (size_t)m + tail;
}

/* log_format - fmt into buf (cap bytes) when it fits, else into a heap
 * copy (*heap, to free), shortened in the middle past NSR_LOG_TEXT_MAX.
 * Returns the text. */
static const char *log_format(char *buf, size_t cap, char **heap,
			      const char *fmt, va_list ap)
{
	va_list again;
	char *full, *cut;
	int n;

	*heap = NULL;
	va_copy(again, ap);
	n = vsnprintf(buf, cap, fmt, ap);
	if (n < 0 || (size_t)n < cap) {
		va_end(again);
		return n < 0 ? fmt : buf;
	}
	full = malloc((size_t)n + 1);
	if (full == NULL) {
		va_end(again);
		/* say so rather than cut silently */
		snprintf(buf + cap - 40, 40, "...[%d bytes lost: no memory]",
			 n - (int)(cap - 40));
		return buf;
	}
	vsnprintf(full, (size_t)n + 1, fmt, again);
	va_end(again);
	if ((size_t)n <= NSR_LOG_TEXT_MAX) {
		*heap = full;
		return full;
	}
	cut = malloc(NSR_LOG_TEXT_MAX + 65);
	if (cut != NULL)
		nsr_log_shorten(cut, NSR_LOG_TEXT_MAX + 65, full,
				NSR_LOG_TEXT_MAX);
	free(full);
	*heap = cut;
	return cut != NULL ? cut : fmt;
}

/* log_line - write "prefix" + text + newline to fd in one go. */
static void log_line(int fd, const char *prefix, const char *text)
{
	struct iovec v[3];

	v[0].iov_base = (char *)prefix;
	v[0].iov_len = strlen(prefix);
	v[1].iov_base = (char *)text;
	v[1].iov_len = strlen(text);
	v[2].iov_base = (char *)"\n";
	v[2].iov_len = 1;
	log_writev_all(fd, v, 3);
}

/* held_flush - write the lines this thread holds, in one write. */
static void held_flush(void)
{
	struct iovec v = {held.buf, held.len};

	if (held.buf && held.len && log_fd >= 0)
		log_writev_all(log_fd, &v, 1);
	held.len = 0;
}

/* held_add - prefix and text as one line among those this thread holds;
 * 0, or -1 when it is to be written now (nothing held; longer than the
 * buffer: then after the lines held before it). */
static int held_add(const char *prefix, const char *text)
{
	size_t a = strlen(prefix), b = strlen(text);

	if (!held.buf)
		return -1;
	if (a + b + 1 > LOG_HOLD_MAX) {
		held_flush();
		return -1;
	}
	if (held.len + a + b + 1 > LOG_HOLD_MAX)
		held_flush();
	memcpy(held.buf + held.len, prefix, a);
	memcpy(held.buf + held.len + a, text, b);
	held.buf[held.len + a + b] = '\n';
	held.len += a + b + 1;
	return 0;
}

/* nsr_log_hold - see log.h. */
void nsr_log_hold(void)
{
	if (held.depth++ == 0) {
		held.buf = malloc(LOG_HOLD_MAX);
		held.len = 0;
	}
}

/* nsr_log_release - see log.h. */
void nsr_log_release(void)
{
	if (held.depth == 0 || --held.depth > 0)
		return;
	held_flush();
	free(held.buf);
	held.buf = NULL;
}

/* nsr_vlog - format one line and write it to the configured sinks. */
void nsr_vlog(enum nsr_log_level lvl, const char *fmt, va_list ap)
{
	char pre[160], stamp[32], small[1024], *heap = NULL;
	const char *text;
	struct tm tm;
	time_t now;
	int saved = errno;

	if (lvl < log_min)
		return;
	text = log_format(small, sizeof(small), &heap, fmt, ap);
	now = time(NULL);
	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(pre, sizeof(pre), "%s %s[%ld]: %s: ", stamp, log_name,
		 (long)getpid(), log_words[lvl]);
	if (lvl >= NSR_LOG_FATAL) /* the process ends: nothing held */
		held_flush();
	if (log_fd >= 0 && (lvl >= NSR_LOG_FATAL || held_add(pre, text) != 0))
		log_line(log_fd, pre, text);
	if (log_flags & NSR_LOG_STDERR) {
		if ((log_flags & NSR_LOG_BARE) && lvl == NSR_LOG_INFO)
			snprintf(pre, sizeof(pre), "%s: ", log_name);
		else if (log_flags & NSR_LOG_BARE)
			snprintf(pre, sizeof(pre), "%s: %s: ", log_name,
				 log_words[lvl]);
		log_line(2, pre, text);
	}
	free(heap);
	errno = saved;
}

/* nsr_log - log one line at lvl. */
void nsr_log(enum nsr_log_level lvl, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	nsr_vlog(lvl, fmt, ap);
	va_end(ap);
}

/* nsr_error - log at error level, return -1. */
int nsr_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	nsr_vlog(NSR_LOG_ERROR, fmt, ap);
	va_end(ap);
	return -1;
}

/* nsr_fatal - log at fatal level, exit(1). */
void nsr_fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	nsr_vlog(NSR_LOG_FATAL, fmt, ap);
	va_end(ap);
	exit(1);
}

/* nsr_panic_at - log file:line and abort(). */
void nsr_panic_at(const char *file, int line, const char *fmt, ...)
{
	char small[1024], *heap = NULL;
	const char *text;
	va_list ap;

	va_start(ap, fmt);
	text = log_format(small, sizeof(small), &heap, fmt, ap);
	va_end(ap);
	nsr_log(NSR_LOG_PANIC, "%s:%d: %s", file, line, text);
	free(heap);
	abort();
}
