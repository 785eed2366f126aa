/*
 * ptydrive - run a command on a pseudo-terminal and drive it from a
 * script, for the system tests of interactive programs (no expect or
 * python needed).  Not installed.
 *
 *   ptydrive [-t seconds] SCRIPT command [arg ...]
 *
 * SCRIPT lines (escapes \r \n \t \e \\ and \xHH in TEXT):
 *   send TEXT     type TEXT
 *   expect TEXT   wait until the output since the last match holds TEXT
 *   # ...         a comment
 * Everything the command prints is copied to standard output.  Exit
 * status: the command's (128 + signal if killed), 3 when an expect times
 * out (each waits -t seconds, default 20) or the command does not end in
 * time after the script (it is then killed), 2 on usage or setup errors.
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nsr/buf.h"

/* The command being driven. */
struct drive {
	int fd; /* the terminal's master side */
	pid_t pid;
	int timeout_ms;
	struct nsr_buf seen; /* output since the last match */
};

/* unescape - TEXT with its escapes resolved, in place; the length. */
static size_t unescape(char *s)
{
	char *w = s;

	for (char *r = s; *r; r++) {
		if (*r != '\\' || !r[1]) {
			*w++ = *r;
			continue;
		}
		switch (*++r) {
		case 'r':
			*w++ = '\r';
			break;
		case 'n':
			*w++ = '\n';
			break;
		case 't':
			*w++ = '\t';
			break;
		case 'e':
			*w++ = 27;
			break;
		case 'x': {
			char hex[3] = {r[1], r[1] ? r[2] : 0, 0};

			*w++ = (char)strtol(hex, NULL, 16);
			r += hex[1] ? 2 : (hex[0] ? 1 : 0);
			break;
		}
		default:
			*w++ = *r;
			break;
		}
	}
	*w = '\0';
	return (size_t)(w - s);
}

/* now_ms - a monotonic clock in milliseconds. */
static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* pump - read what the command printed for up to ms: 1 read something,
 * 0 nothing in time, -1 the terminal closed (the command ended). */
static int pump(struct drive *d, int ms)
{
	struct pollfd p = {.fd = d->fd, .events = POLLIN};
	char buf[4096];
	ssize_t n;

	if (poll(&p, 1, ms) <= 0)
		return 0;
	n = read(d->fd, buf, sizeof(buf));
	if (n <= 0)
		return -1;
	fwrite(buf, 1, (size_t)n, stdout);
	fflush(stdout);
	return nsr_buf_add(&d->seen, buf, (size_t)n) == 0 ? 1 : -1;
}

/* expect - wait for text in the output; 0 found, -1 not in time. */
static int expect(struct drive *d, const char *text)
{
	long long end = now_ms() + d->timeout_ms;

	for (;;) {
		char *hit = strstr(d->seen.data, text);

		if (hit) {
			size_t keep = d->seen.len -
				      (size_t)(hit - d->seen.data) -
				      strlen(text);

			memmove(d->seen.data, d->seen.data + d->seen.len - keep,
				keep);
			nsr_buf_setlen(&d->seen, keep);
			return 0;
		}
		if (now_ms() >= end || pump(d, (int)(end - now_ms())) < 0) {
			fprintf(stderr, "ptydrive: did not see \"%s\"\n", text);
			return -1;
		}
	}
}

/* start - the command on a new pseudo-terminal. */
static int start(struct drive *d, char **argv)
{
	int fd = posix_openpt(O_RDWR | O_NOCTTY), slave;
	const char *name;

	if (fd < 0 || grantpt(fd) || unlockpt(fd) || !(name = ptsname(fd)))
		return -1;
	d->fd = fd;
	d->pid = fork();
	if (d->pid < 0)
		return -1;
	if (d->pid > 0)
		return 0;
	setsid();
	slave = open(name, O_RDWR);
	if (slave < 0)
		_exit(2);
	ioctl(slave, TIOCSCTTY, 0);
	dup2(slave, 0);
	dup2(slave, 1);
	dup2(slave, 2);
	if (slave > 2)
		close(slave);
	close(fd);
	execvp(argv[0], argv);
	_exit(127);
}

/* finish - read to the end and reap the command (killed if it does not
 * end in time); its exit status, or 3. */
static int finish(struct drive *d)
{
	long long end = now_ms() + d->timeout_ms;
	int st;

	while (now_ms() < end && pump(d, 100) >= 0)
		;
	for (;;) {
		pid_t r = waitpid(d->pid, &st, WNOHANG);

		if (r == d->pid)
			break;
		if (now_ms() >= end) {
			fprintf(stderr, "ptydrive: the command did not end\n");
			kill(d->pid, SIGKILL);
			waitpid(d->pid, &st, 0);
			return 3;
		}
		usleep(20000);
	}
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}

/* main - parse options, do the work, exit status. */
int main(int argc, char **argv)
{
	struct drive d = {.timeout_ms = 20000};
	char line[4096];
	FILE *script;
	int i = 1, rc = 0;

	if (argc > 2 && strcmp(argv[1], "-t") == 0) {
		d.timeout_ms = atoi(argv[2]) * 1000;
		i = 3;
	}
	if (argc - i < 2 || d.timeout_ms <= 0) {
		fprintf(stderr,
			"usage: ptydrive [-t seconds] SCRIPT command ...\n");
		return 2;
	}
	script = fopen(argv[i], "r");
	if (!script) {
		fprintf(stderr, "ptydrive: cannot open %s\n", argv[i]);
		return 2;
	}
	nsr_buf_init(&d.seen, 0);
	if (start(&d, argv + i + 1)) {
		fprintf(stderr, "ptydrive: cannot start %s on a terminal\n",
			argv[i + 1]);
		return 2;
	}
	while (rc == 0 && fgets(line, sizeof(line), script)) {
		size_t n;

		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "send ", 5) == 0) {
			n = unescape(line + 5);
			if (write(d.fd, line + 5, n) != (ssize_t)n)
				rc = 3;
		} else if (strncmp(line, "expect ", 7) == 0) {
			unescape(line + 7);
			rc = expect(&d, line + 7) ? 3 : 0;
		}
	}
	fclose(script);
	if (rc) {
		kill(d.pid, SIGKILL);
		waitpid(d.pid, NULL, 0);
	} else {
		rc = finish(&d);
	}
	close(d.fd);
	nsr_buf_release(&d.seen);
	return rc;
}
