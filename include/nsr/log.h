/*
 * log.h - logging for daemons and tools (library code never logs).
 *
 * Severity words have fixed meanings (as Postfix's msg_*):
 *   info   - something worth knowing happened;
 *   warn   - something is off, work continues;
 *   error  - this request failed (nsr_error returns -1, for
 *            "return nsr_error(...)");
 *   fatal  - the environment or configuration prevents running: exit(1);
 *   panic  - our own bug: log file:line and abort() for a core.
 * Each line is "YYYY-MM-DD HH:MM:SS name[pid]: severity: text" and goes to
 * the log file (if opened) and/or stderr, written with one writev() so
 * lines from threads and processes do not interleave.  Nothing is cut
 * silently: a message over NSR_LOG_TEXT_MAX bytes is shortened in the
 * middle with "...[N bytes]...", saying how much was left out.
 */
#ifndef NSR_LOG_H
#define NSR_LOG_H

#include <stddef.h>

enum nsr_log_level { NSR_LOG_DEBUG, NSR_LOG_INFO, NSR_LOG_WARN, NSR_LOG_ERROR,
		     NSR_LOG_FATAL, NSR_LOG_PANIC };

#define NSR_LOG_STDERR 0x1 /* also write to stderr */
#define NSR_LOG_BARE 0x2   /* stderr lines are "name: text" (for tools) */
#define NSR_LOG_TEXT_MAX (64u * 1024u) /* a message longer is shortened */
#define NSR_LOG_PATH_SHOW 1024 /* a path in a message: shorten past this */

/* nsr_log_shorten - s into out (cap bytes), or when s is longer than max
 * bytes (or than out can hold with a marker) its head and tail around
 * "...[N bytes]..." (N = bytes left out).  Returns the length written. */
size_t nsr_log_shorten(char *out, size_t cap, const char *s, size_t max);

/* nsr_log_init - set the program name and stderr flags (no file yet). */
void nsr_log_init(const char *progname, int flags);
/* nsr_log_open_file - append to path as well; returns 0 or -1 (errno). */
int nsr_log_open_file(const char *path);
/* nsr_log_set_level - minimum level written (default INFO; NSR_DEBUG=1 env
 * turns on debug). */
void nsr_log_set_level(enum nsr_log_level lvl);
/* nsr_log_progname - the name given to nsr_log_init. */
const char *nsr_log_progname(void);

/* nsr_log_hold - until the matching nsr_log_release (they nest), the
 * lines this thread writes to the log file wait and go together in one
 * write, also when 32 KB of them piled up, or at a fatal or panic line
 * (which is written at once); stderr is not held.  For a thread that logs
 * a line for each of many requests it handles at once, so that they cost
 * one write instead of one each. */
void nsr_log_hold(void);
/* nsr_log_release - see nsr_log_hold. */
void nsr_log_release(void);

void nsr_log(enum nsr_log_level lvl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void nsr_vlog(enum nsr_log_level lvl, const char *fmt, va_list ap);

#define nsr_debug(...) nsr_log(NSR_LOG_DEBUG, __VA_ARGS__)
#define nsr_info(...) nsr_log(NSR_LOG_INFO, __VA_ARGS__)
#define nsr_warn(...) nsr_log(NSR_LOG_WARN, __VA_ARGS__)
/* nsr_error - log at error level and return -1. */
int nsr_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* nsr_fatal - log at fatal level and exit(1). */
void nsr_fatal(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
/* nsr_panic - log "panic: file:line: text" and abort(). */
#define nsr_panic(...) nsr_panic_at(__FILE__, __LINE__, __VA_ARGS__)
void nsr_panic_at(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));

#endif /* NSR_LOG_H */
