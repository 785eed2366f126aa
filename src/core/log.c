/*
 * log.c - line-oriented logging to a file and/or stderr (see log.h).
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "nsr/log.h"

static char log_name[64] = "nsr";
static int log_flags = NSR_LOG_STDERR;
static int log_fd = -1;
static enum nsr_log_level log_min = NSR_LOG_INFO;

static const char *const log_words[] = {"debug", "info", "warn", "error",
					"fatal", "panic"};

/* nsr_log_init - set the program name and stderr behaviour. */
void nsr_log_init(const char *progname, int flags)
{
	const char *slash = strrchr(progname, '/');
	const char *dbg = getenv("NSR_DEBUG");

	snprintf(log_name, sizeof(log_name), "%s", slash ? slash + 1 : progname);
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

/* log_write_all - best-effort full write; logging must not fail loudly. */
static void log_write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

/* nsr_vlog - format one line and write it to the configured sinks. */
void nsr_vlog(enum nsr_log_level lvl, const char *fmt, va_list ap)
{
	char line[4096], stamp[32], text[3800];
	struct tm tm;
	time_t now;
	int saved = errno, n;

	if (lvl < log_min)
		return;
	vsnprintf(text, sizeof(text), fmt, ap);
	now = time(NULL);
	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &tm);
	if (log_fd >= 0) {
		n = snprintf(line, sizeof(line), "%s %s[%ld]: %s: %s\n", stamp,
			     log_name, (long)getpid(), log_words[lvl], text);
		if (n > 0)
			log_write_all(log_fd, line,
				      NSR_MIN((size_t)n, sizeof(line) - 1));
	}
	if (log_flags & NSR_LOG_STDERR) {
		if (log_flags & NSR_LOG_BARE)
			n = lvl == NSR_LOG_INFO
				    ? snprintf(line, sizeof(line), "%s: %s\n",
					       log_name, text)
				    : snprintf(line, sizeof(line), "%s: %s: %s\n",
					       log_name, log_words[lvl], text);
		else
			n = snprintf(line, sizeof(line), "%s %s[%ld]: %s: %s\n",
				     stamp, log_name, (long)getpid(),
				     log_words[lvl], text);
		if (n > 0)
			log_write_all(2, line, NSR_MIN((size_t)n, sizeof(line) - 1));
	}
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
	char text[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	nsr_log(NSR_LOG_PANIC, "%s:%d: %s", file, line, text);
	abort();
}
