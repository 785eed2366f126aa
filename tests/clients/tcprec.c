/*
 * tcprec - a recording TCP proxy for the TLS system test: every byte that
 * passes, in both directions, is appended to a file, so a test can show
 * what a wire capture would hold (no tcpdump needed).
 *
 *   tcprec PORTFILE OUTFILE
 *
 * Listens on an ephemeral 127.0.0.1 port and writes it to PORTFILE.  A
 * client (a program run with NSR_TEST_CONNECT_VIA=127.0.0.1:PORT, see
 * src/rpc/conn.c) opens each connection with "CONNECT host port\n"; the
 * proxy connects there and forwards everything after that line both
 * ways until either side closes.  Runs until killed (SIGTERM).
 *
 * Invariants: 1. at most MAXP connection pairs, refused beyond;
 * 2. every byte forwarded was appended to OUTFILE first.
 */
#include "nsr/compat.h"

#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>
#include <fcntl.h>
#include <arpa/inet.h>

#include "nsr/err.h"
#include "nsr/fileio.h"

#define MAXP 256

struct pair {
	int a, b; /* client side, server side; -1 when free */
};

static struct pair pairs[MAXP];
static int out_fd;

/* dial - connect to host:port; fd or -1. */
static int dial(const char *host, const char *port)
{
	struct addrinfo hints, *res = NULL, *ai;
	int fd = -1;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, port, &hints, &res) != 0)
		return -1;
	for (ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	return fd;
}

/* pass - record and forward n bytes to fd; -1 on failure. */
static int pass(int fd, const char *p, size_t n)
{
	if (nsr_write_full(out_fd, p, n) != NSR_OK)
		return -1;
	return nsr_write_full(fd, p, n) == NSR_OK ? 0 : -1;
}

/* start - read the CONNECT line of a new client, dial, forward the rest
 * of what came with it. */
static void start(int c)
{
	char buf[4096], host[256], port[16];
	size_t have = 0;
	char *nl = NULL;
	int s, i;

	while (!nl && have < sizeof(buf) - 1) {
		ssize_t r = read(c, buf + have, sizeof(buf) - 1 - have);

		if (r <= 0)
			break;
		have += (size_t)r;
		buf[have] = '\0';
		nl = strchr(buf, '\n');
	}
	if (!nl || sscanf(buf, "CONNECT %255s %15s", host, port) != 2 ||
	    (s = dial(host, port)) < 0) {
		close(c);
		return;
	}
	for (i = 0; i < MAXP && pairs[i].a >= 0; i++)
		;
	nl++;
	if (i == MAXP ||
	    (nl < buf + have && pass(s, nl, (size_t)(buf + have - nl)))) {
		close(c);
		close(s);
		return;
	}
	pairs[i].a = c;
	pairs[i].b = s;
}

/* finish - close a pair. */
static void finish(struct pair *p)
{
	close(p->a);
	close(p->b);
	p->a = p->b = -1;
}

/* main - listen, then forward and record until killed. */
int main(int argc, char **argv)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sa);
	struct pollfd pf[1 + 2 * MAXP];
	char buf[65536], text[32];
	int lfd, one = 1, n;
	FILE *f;

	if (argc != 3) {
		fprintf(stderr, "usage: tcprec PORTFILE OUTFILE\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	out_fd = open(argv[2], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (out_fd < 0 || lfd < 0 ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(lfd, 64) != 0 ||
	    getsockname(lfd, (struct sockaddr *)&sa, &sl) != 0) {
		perror("tcprec");
		return 1;
	}
	snprintf(text, sizeof(text), "%d\n", ntohs(sa.sin_port));
	f = fopen(argv[1], "we");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		perror(argv[1]);
		return 1;
	}
	for (int i = 0; i < MAXP; i++)
		pairs[i].a = pairs[i].b = -1;
	for (;;) {
		pf[0].fd = lfd;
		pf[0].events = POLLIN;
		for (int i = 0; i < MAXP; i++) {
			pf[1 + 2 * i].fd = pairs[i].a;
			pf[2 + 2 * i].fd = pairs[i].b;
			pf[1 + 2 * i].events = pf[2 + 2 * i].events = POLLIN;
			pf[1 + 2 * i].revents = pf[2 + 2 * i].revents = 0;
		}
		if (poll(pf, 1 + 2 * MAXP, -1) < 0)
			continue;
		if (pf[0].revents & POLLIN) {
			int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

			if (c >= 0)
				start(c);
		}
		for (int i = 0; i < MAXP; i++) {
			for (int d = 0; d < 2 && pairs[i].a >= 0; d++) {
				struct pollfd *p = &pf[1 + 2 * i + d];

				if (!p->revents)
					continue;
				n = (int)read(p->fd, buf, sizeof(buf));
				if (n <= 0 ||
				    pass(d ? pairs[i].a : pairs[i].b, buf,
					 (size_t)n))
					finish(&pairs[i]);
			}
		}
	}
}
