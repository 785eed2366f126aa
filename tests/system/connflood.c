/*
 * connflood.c - test helper: open many idle TCP connections to one
 * address and hold them, sending nothing, the way a scanner or a broken
 * client fleet would.  Used by 005-conn-flood.sh.
 *
 *   connflood [-n count] [-t max_sec] [-r ready_file] host:port
 *
 * Connects in batches (each bounded in time), writes the number opened
 * to ready_file, then holds the connections until SIGTERM/SIGINT or
 * max_sec (default 120) and counts those the server closed.  Prints
 * "opened N closed-by-server M" and exits 0 if all count were opened, 1
 * if not, 2 on a usage error.
 */
#include "nsr/compat.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BATCH 200
#define BATCH_MS 5000

static volatile sig_atomic_t got_stop;

/* on_stop - WARNING: signal handler: set a flag, nothing else. */
static void on_stop(int sig)
{
	(void)sig;
	got_stop = 1;
}

/* now_ms - monotonic milliseconds. */
static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* connect_batch - start n non-blocking connects; wait until each is
 * established or failed, within BATCH_MS.  Returns how many are up. */
static int connect_batch(const struct sockaddr_in *a, struct pollfd *p, int n)
{
	long long end = now_ms() + BATCH_MS;
	int up = 0, pending = 0;

	for (int i = 0; i < n; i++) {
		p[i].fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		p[i].events = POLLOUT;
		if (p[i].fd < 0)
			continue;
		if (connect(p[i].fd, (const struct sockaddr *)a,
			    sizeof(*a)) == 0) {
			p[i].events = 0;
			up++;
		} else if (errno == EINPROGRESS) {
			pending++;
		} else {
			close(p[i].fd);
			p[i].fd = -1;
		}
	}
	while (pending > 0 && now_ms() < end) {
		int r = poll(p, (nfds_t)n, (int)(end - now_ms()));

		if (r <= 0)
			continue;
		for (int i = 0; i < n; i++) {
			int err = 0;
			socklen_t sl = sizeof(err);

			if (!(p[i].events & POLLOUT) || !p[i].revents)
				continue;
			pending--;
			p[i].events = 0;
			if (getsockopt(p[i].fd, SOL_SOCKET, SO_ERROR, &err,
				       &sl) || err) {
				close(p[i].fd);
				p[i].fd = -1;
			} else {
				up++;
			}
		}
	}
	for (int i = 0; i < n; i++)
		if (p[i].fd >= 0 && (p[i].events & POLLOUT)) {
			close(p[i].fd); /* did not connect in time */
			p[i].fd = -1;
		}
	return up;
}

/* hold - wait for EOFs until stopped or the deadline; returns how many
 * connections the server closed. */
static int hold(struct pollfd *p, int n, long long end)
{
	int closed = 0;
	char buf[256];

	for (int i = 0; i < n; i++)
		p[i].events = POLLIN;
	while (!got_stop && now_ms() < end) {
		int r = poll(p, (nfds_t)n, 200);

		for (int i = 0; r > 0 && i < n; i++) {
			if (p[i].fd < 0 || !p[i].revents)
				continue;
			if (read(p[i].fd, buf, sizeof(buf)) <= 0) {
				close(p[i].fd);
				p[i].fd = -1;
				closed++;
			}
		}
	}
	return closed;
}

int main(int argc, char **argv)
{
	const char *ready = NULL;
	struct sockaddr_in a;
	struct pollfd *p;
	struct rlimit rl;
	char host[64], *colon;
	int count = 4000, max_sec = 120, c, opened = 0, closed;
	long long end;

	while ((c = getopt(argc, argv, "n:t:r:")) != -1) {
		if (c == 'n')
			count = atoi(optarg);
		else if (c == 't')
			max_sec = atoi(optarg);
		else if (c == 'r')
			ready = optarg;
		else
			return 2;
	}
	if (optind != argc - 1 || count <= 0 || max_sec <= 0)
		return 2;
	snprintf(host, sizeof(host), "%s", argv[optind]);
	colon = strrchr(host, ':');
	if (!colon)
		return 2;
	*colon = '\0';
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)atoi(colon + 1));
	if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
		return 2;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	signal(SIGTERM, on_stop);
	signal(SIGINT, on_stop);
	signal(SIGPIPE, SIG_IGN);
	end = now_ms() + (long long)max_sec * 1000;
	p = calloc((size_t)count, sizeof(*p));
	if (!p)
		return 1;
	for (int i = 0; i < count; i++)
		p[i].fd = -1;
	for (int i = 0; i < count && !got_stop && now_ms() < end; i += BATCH)
		opened += connect_batch(&a, p + i, NSR_MIN(BATCH, count - i));
	if (ready) {
		char tmp[4096];
		FILE *f;

		/* Whole or not at all: the test polls for the file. */
		snprintf(tmp, sizeof(tmp), "%s.tmp", ready);
		f = fopen(tmp, "w");
		if (f) {
			fprintf(f, "%d\n", opened);
			if (fclose(f) == 0)
				rename(tmp, ready);
		}
	}
	closed = hold(p, count, end);
	printf("opened %d closed-by-server %d\n", opened, closed);
	for (int i = 0; i < count; i++)
		if (p[i].fd >= 0)
			close(p[i].fd);
	free(p);
	return opened == count ? 0 : 1;
}
