/*
 * clock.c - the real time, or a test clock advanced through a file
 * (clock.h).
 */
#include "nsr/compat.h"

#include <ctype.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nsr/clock.h"
#include "nsr/err.h"

/* The test clock file's state; all of it under lock. */
static struct {
	pthread_mutex_t lock;
	struct timespec mtime; /* of the content last read */
	off_t size;
	ino_t ino;
	int64_t offset;	       /* invariant 1 */
} g_clock = {PTHREAD_MUTEX_INITIALIZER, {0, 0}, -1, 0, 0};

/* nsr_clock_parse_offset - a decimal offset in text[len]. */
int nsr_clock_parse_offset(const char *text, size_t len, int64_t *off)
{
	size_t i = 0;
	int neg = 0, digits = 0;
	int64_t v = 0;

	while (i < len && isspace((unsigned char)text[i]))
		i++;
	if (i < len && (text[i] == '-' || text[i] == '+'))
		neg = text[i++] == '-';
	for (; i < len && isdigit((unsigned char)text[i]); i++, digits++) {
		v = v * 10 + (text[i] - '0');
		if (v > NSR_CLOCK_MAX_OFFSET)
			return NSR_ERR_SYNTAX;
	}
	while (i < len && isspace((unsigned char)text[i]))
		i++;
	if (!digits || i != len)
		return NSR_ERR_SYNTAX;
	*off = neg ? -v : v;
	return NSR_OK;
}

/* reread - read the file path again if it changed since the last read. */
static void reread(const char *path)
{
	struct stat st;
	char text[64];
	ssize_t n;
	int fd;
	int64_t off;

	if (stat(path, &st) != 0) {
		g_clock.offset = 0;
		g_clock.size = -1;
		return;
	}
	if (st.st_size == g_clock.size && st.st_ino == g_clock.ino &&
	    st.st_mtim.tv_sec == g_clock.mtime.tv_sec &&
	    st.st_mtim.tv_nsec == g_clock.mtime.tv_nsec)
		return;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n < 0)
		return;
	g_clock.mtime = st.st_mtim;
	g_clock.size = st.st_size;
	g_clock.ino = st.st_ino;
	g_clock.offset = nsr_clock_parse_offset(text, (size_t)n, &off) == NSR_OK
				 ? off
				 : 0;
}

/* nsr_clock_offset - the test clock's offset, read again if it changed. */
int64_t nsr_clock_offset(void)
{
	const char *path = getenv("NSR_TEST_CLOCK");
	int64_t off;

	if (!path || !*path)
		return 0;
	pthread_mutex_lock(&g_clock.lock);
	reread(path);
	off = g_clock.offset;
	pthread_mutex_unlock(&g_clock.lock);
	return off;
}

/* nsr_clock_now - real time plus the test clock's offset. */
time_t nsr_clock_now(void)
{
	return time(NULL) + (time_t)nsr_clock_offset();
}

/* nsr_clock_mono_ms - CLOCK_MONOTONIC in milliseconds. */
long long nsr_clock_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* nsr_clock_mono_us - CLOCK_MONOTONIC in microseconds. */
long long nsr_clock_mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
