/*
 * delayproxy - a TCP proxy that adds a fixed one-way delay in each
 * direction, for the latency benchmark (not run by ctest; the kernel
 * here has no netem).
 *
 * It accepts connections on 127.0.0.1:PORT (-l, -p) and forwards each
 * to its destination: the original destination of a connection that
 * iptables REDIRECTed here (getsockopt SO_ORIGINAL_DST), or the fixed
 * -c ADDR:PORT, or (-V) the host and port named by a first line
 * "CONNECT host port" as OpenNSR clients send it with
 * NSR_TEST_CONNECT_VIA=127.0.0.1:PORT (tests/system/421-stripe: on
 * loopback, without iptables).  Its own upstream sockets carry SO_MARK
 * (-m, default 0x4e), so that a rule "-m mark ! --mark 0x4e -j REDIRECT"
 * does not send them back to the proxy.
 *
 * The link model, per direction of each connection:
 *   - every chunk read from the source is held until read time + D
 *     (-d, the one-way delay in ms, fractions allowed) and only then
 *     written to the destination;
 *   - bytes read count against a window W (-w) until D after they were
 *     written on (the time an acknowledgement would take to come back),
 *     so at most W bytes are "on the wire" per round trip 2D and
 *     throughput is at most W / 2D, as with a TCP window of W.  While the
 *     window is full the proxy does not read the source: the sender's
 *     socket buffer fills and TCP back-pressure reaches it as on a real
 *     link.  W is also the bound on the memory a connection holds per
 *     direction.
 *   - end of stream (FIN) travels with the same delay (shutdown after D);
 *     a reset or error closes both sides at once (with RST).
 *
 * The held bytes wait in pipes, moved in and out with splice(2), so the
 * proxy does not copy them (it shares the CPUs with the programs it
 * measures).  A pipe holds at most pipe-max-size (1 MiB by default)
 * without CAP_SYS_RESOURCE, so each direction has a ring of pipes, made
 * as they are needed, that together hold 4 x W (the kernel may put
 * part-filled pages in a pipe); each chunk remembers its pipe, and each
 * pipe is filled and drained in the order of the chunks.  -C copies
 * through memory with read/write instead.  One thread,
 * one epoll loop, a timeout to the earliest due chunk (epoll_pwait2,
 * nanoseconds).  It stops by itself after -t seconds
 * (default 3600), or on SIGTERM/SIGINT.
 *
 *   delayproxy -p PORT -d DELAY_MS [-l ADDR] [-w WINDOW_BYTES]
 *              [-c ADDR:PORT | -V] [-m MARK] [-t SECONDS] [-C] [-v]
 *
 * Prints "delayproxy: listening on ADDR:PORT" once ready, and at exit a
 * line with the connections and bytes forwarded.  Exit 0 at the time
 * limit or signal, 1 on a setup error, 2 on bad usage.
 */
#include "nsr/compat.h"

#include <arpa/inet.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <linux/netfilter_ipv4.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define DP_READ_MAX (256 * 1024) /* largest chunk read at once */
#define DP_MAX_CONNS 1024
#define DP_PIPE_BYTES (1 << 20)	/* pipe-max-size's default */
#define DP_MAX_PIPES 256		/* per direction: 4 x W up to 64 MiB */

/* A chunk of one direction: data due at "due", or an end-of-stream mark. */
struct dp_chunk {
	struct dp_chunk *next;
	int64_t due;		/* ns, CLOCK_MONOTONIC */
	size_t len, off;	/* len 0: end of stream */
	unsigned pipe;		/* splice mode: the pipe holding the bytes */
	unsigned char data[];	/* copy mode only */
};

/* Bytes written on, counting against the window until "release". */
struct dp_credit {
	struct dp_credit *next;
	int64_t release;
	size_t len;
};

/* One direction of a connection: read from src, written to dst. */
struct dp_dir {
	int src, dst;
	struct dp_chunk *head, *tail;
	struct dp_credit *chead, *ctail;
	size_t held;		/* read, not yet released: <= window */
	bool eof_read;		/* src said end of stream */
	bool eof_sent;		/* shutdown(dst, SHUT_WR) done */
	bool pipe_full;		/* src has data no pipe can take */
	int (*pipes)[2];	/* splice mode: npipes pipes, -1 until made;
				 * NULL: copy mode */
	unsigned npipes, in;	/* ring size, the pipe being filled */
	uint64_t bytes;
};

struct dp_conn;

/* What an epoll event points at: one socket of a connection. */
struct dp_end {
	struct dp_conn *conn;
	int i;			/* index into conn->fd */
};

struct dp_conn {
	struct dp_conn *link;	/* the list of connections */
	struct dp_end end[2];
	int fd[2];		/* 0: the client side, 1: upstream */
	uint32_t mask[2];	/* epoll interest registered for fd[i] */
	bool gone[2];		/* fd[i] hung up: out of the epoll set */
	bool connecting;	/* upstream connect() in progress */
	bool kick;		/* an event came: pump at the next sweep */
	bool dead;
	int64_t next;		/* earliest due work, INT64_MAX if none */
	struct dp_dir dir[2];	/* 0: client -> upstream, 1: back */
};

struct dp_opts {
	const char *listen_addr;
	int port;
	int64_t delay_ns;
	size_t window;
	struct sockaddr_in fixed;	/* -c, sin_port 0 if not given */
	int mark;
	int seconds;
	bool copy;		/* -C: read/write instead of splice */
	bool verbose;
	bool via;		/* -V: "CONNECT host port" line first */
};

static volatile sig_atomic_t dp_stop;
static int dp_epfd = -1;
static struct dp_conn *dp_conns;
static unsigned dp_nconns;
static uint64_t dp_total_conns, dp_total_bytes[2];

/* on_signal - WARNING: signal handler; only sets the flag. */
static void on_signal(int sig)
{
	NSR_UNUSED(sig);
	dp_stop = 1;
}

/* now_ns - CLOCK_MONOTONIC in nanoseconds. */
static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* usage - print the synopsis to f. */
static void usage(FILE *f)
{
	fprintf(f, "usage: delayproxy -p PORT -d DELAY_MS [-l ADDR] "
		   "[-w WINDOW_BYTES] [-c ADDR:PORT | -V] [-m MARK] "
		   "[-t SECONDS] [-C] [-v]\n");
}

/* parse_num - a whole number in [lo, hi] (any base strtoll takes). */
static int parse_num(const char *s, long long lo, long long hi, long long *out)
{
	char *end = NULL;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 0);
	if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/* parse_ms - milliseconds, fractions allowed (2.5), 0 to 10 s, in ns. */
static int parse_ms(const char *s, int64_t *ns)
{
	char *end = NULL;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(v >= 0 && v <= 10000))
		return -1;
	*ns = (int64_t)(v * 1e6 + 0.5);
	return 0;
}

/* parse_addr_port - "A.B.C.D:PORT" into sa. */
static int parse_addr_port(const char *s, struct sockaddr_in *sa)
{
	char host[64];
	const char *colon = strrchr(s, ':');
	long long port;
	size_t n;

	if (colon == NULL)
		return -1;
	n = (size_t)(colon - s);
	if (n == 0 || n >= sizeof(host))
		return -1;
	memcpy(host, s, n);
	host[n] = '\0';
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	if (inet_pton(AF_INET, host, &sa->sin_addr) != 1)
		return -1;
	if (parse_num(colon + 1, 1, 65535, &port) != 0)
		return -1;
	sa->sin_port = htons((uint16_t)port);
	return 0;
}

/* parse_opts - the command line into o; 0, or 2 (usage error). */
static int parse_opts(int argc, char **argv, struct dp_opts *o)
{
	long long v;
	int c;

	memset(o, 0, sizeof(*o));
	o->listen_addr = "127.0.0.1";
	o->delay_ns = -1;
	o->window = 4u << 20;
	o->mark = 0x4e;
	o->seconds = 3600;
	while ((c = getopt(argc, argv, "p:d:l:w:c:m:t:CvVh")) != -1) {
		switch (c) {
		case 'p':
			if (parse_num(optarg, 1, 65535, &v) != 0)
				goto bad;
			o->port = (int)v;
			break;
		case 'd':
			if (parse_ms(optarg, &o->delay_ns) != 0)
				goto bad;
			break;
		case 'l':
			o->listen_addr = optarg;
			break;
		case 'w':
			if (parse_num(optarg, 65536, 1LL << 32, &v) != 0)
				goto bad;
			o->window = (size_t)v;
			break;
		case 'c':
			if (parse_addr_port(optarg, &o->fixed) != 0)
				goto bad;
			break;
		case 'm':
			if (parse_num(optarg, 0, INT_MAX, &v) != 0)
				goto bad;
			o->mark = (int)v;
			break;
		case 't':
			if (parse_num(optarg, 1, 86400, &v) != 0)
				goto bad;
			o->seconds = (int)v;
			break;
		case 'C':
			o->copy = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'V':
			o->via = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			goto bad;
		}
	}
	if (optind != argc || o->port == 0 || o->delay_ns < 0)
		goto bad;
	return 0;
bad:
	usage(stderr);
	return 2;
}

/* listen_on - a listening socket on addr:port, or -1. */
static int listen_on(const char *addr, int port)
{
	struct sockaddr_in sa;
	int fd, one = 1;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		fprintf(stderr, "delayproxy: bad listen address '%s'\n", addr);
		return -1;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fd, 128) < 0) {
		fprintf(stderr, "delayproxy: cannot listen on %s:%d: %s\n",
			addr, port, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* ep_set - make fd's epoll interest "want" (tracked in *cur). */
static void ep_set(int fd, uint32_t *cur, uint32_t want, struct dp_end *ptr)
{
	struct epoll_event ev;

	if (*cur == want)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.events = want;
	ev.data.ptr = ptr;
	if (epoll_ctl(dp_epfd, EPOLL_CTL_MOD, fd, &ev) == 0)
		*cur = want;
}

/* dir_release - free a direction's queues. */
static void dir_release(struct dp_dir *d)
{
	while (d->head != NULL) {
		struct dp_chunk *c = d->head;

		d->head = c->next;
		free(c);
	}
	while (d->chead != NULL) {
		struct dp_credit *k = d->chead;

		d->chead = k->next;
		free(k);
	}
	d->tail = NULL;
	d->ctail = NULL;
	for (unsigned p = 0; d->pipes != NULL && p < d->npipes; p++)
		for (int i = 0; i < 2; i++)
			if (d->pipes[p][i] >= 0)
				close(d->pipes[p][i]);
	free(d->pipes);
	d->pipes = NULL;
}

/* dir_splice_in - splice up to room bytes from d->src into the ring,
 * moving on to the next pipe while one is full; the bytes moved (0: end
 * of stream), or -1 with errno (EAGAIN: nothing to read, or every pipe
 * full, then d->pipe_full). */
static ssize_t dir_splice_in(struct dp_dir *d, size_t room, unsigned *pipe)
{
	for (unsigned tries = 0; tries < d->npipes; tries++) {
		int *p = d->pipes[d->in], avail = 0;
		ssize_t n;

		if (p[0] < 0) {
			if (pipe2(p, O_NONBLOCK | O_CLOEXEC) != 0) {
				p[0] = p[1] = -1;
				return -1;
			}
			fcntl(p[0], F_SETPIPE_SZ, DP_PIPE_BYTES);
		}
		n = splice(d->src, NULL, p[1], NULL, room,
			   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n >= 0) {
			*pipe = d->in;
			return n;
		}
		if (errno != EAGAIN)
			return -1;
		/* The socket is empty, or this pipe is full. */
		if (ioctl(d->src, FIONREAD, &avail) != 0 || avail == 0) {
			errno = EAGAIN;
			return -1;
		}
		d->in = (d->in + 1) % d->npipes;
	}
	d->pipe_full = true;
	errno = EAGAIN;
	return -1;
}

/* conn_kill - close both sides at once, with RST (a failed link). */
static void conn_kill(struct dp_conn *c, const char *why, bool verbose)
{
	struct linger lg = { 1, 0 };

	if (c->dead)
		return;
	if (verbose)
		fprintf(stderr, "delayproxy: closing a connection: %s\n", why);
	for (int i = 0; i < 2; i++) {
		if (c->fd[i] < 0)
			continue;
		setsockopt(c->fd[i], SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(c->fd[i]);	/* also leaves the epoll set */
		c->fd[i] = -1;
	}
	dir_release(&c->dir[0]);
	dir_release(&c->dir[1]);
	c->dead = true;
}

/* dir_read - read what the window allows from d->src into the queue;
 * -1 on a read error (the connection is to be killed). */
static int dir_read(struct dp_dir *d, const struct dp_opts *o, int64_t now)
{
	while (!d->eof_read && d->held < o->window) {
		size_t room = NSR_MIN(o->window - d->held, (size_t)DP_READ_MAX);
		bool spliced = d->pipes != NULL;
		struct dp_chunk *c = malloc(sizeof(*c) + (spliced ? 0 : room));
		unsigned pipe = 0;
		ssize_t n;

		if (c == NULL)
			return -1;
		if (spliced)
			n = dir_splice_in(d, room, &pipe);
		else
			n = read(d->src, c->data, room);
		if (n < 0) {
			int e = errno;

			free(c);
			if (e == EAGAIN || e == EWOULDBLOCK)
				return 0;
			if (e == EINTR)
				continue;
			return -1;
		}
		c->next = NULL;
		c->due = now + o->delay_ns;
		c->len = (size_t)n;
		c->off = 0;
		c->pipe = pipe;
		if (n == 0)
			d->eof_read = true;
		else
			d->held += (size_t)n;
		if (d->tail != NULL)
			d->tail->next = c;
		else
			d->head = c;
		d->tail = c;
		if (!spliced && (size_t)n < room)
			return 0;	/* drained for now */
	}
	return 0;
}

/* dir_write - write the chunks that are due to d->dst; credit them back
 * after the delay.  -1 on a write error. */
static int dir_write(struct dp_dir *d, const struct dp_opts *o, int64_t now)
{
	while (d->head != NULL && d->head->due <= now) {
		struct dp_chunk *c = d->head;

		if (c->len == 0) {	/* end of stream */
			shutdown(d->dst, SHUT_WR);
			d->eof_sent = true;
		} else {
			ssize_t n;

			if (d->pipes != NULL)
				n = splice(d->pipes[c->pipe][0], NULL, d->dst,
					   NULL, c->len - c->off,
					   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
			else
				n = write(d->dst, c->data + c->off,
					  c->len - c->off);
			if (n < 0) {
				if (errno == EAGAIN || errno == EWOULDBLOCK)
					return 0;
				if (errno == EINTR)
					continue;
				return -1;
			}
			c->off += (size_t)n;
			d->bytes += (uint64_t)n;
			d->pipe_full = false;
			if (c->off < c->len)
				continue;
			struct dp_credit *k = malloc(sizeof(*k));

			if (k == NULL)
				return -1;
			k->next = NULL;
			k->release = now + o->delay_ns;
			k->len = c->len;
			if (d->ctail != NULL)
				d->ctail->next = k;
			else
				d->chead = k;
			d->ctail = k;
		}
		d->head = c->next;
		if (d->head == NULL)
			d->tail = NULL;
		free(c);
	}
	return 0;
}

/* dir_credit - release the window bytes whose acknowledgement is due. */
static void dir_credit(struct dp_dir *d, int64_t now)
{
	while (d->chead != NULL && d->chead->release <= now) {
		struct dp_credit *k = d->chead;

		d->held -= k->len;
		d->chead = k->next;
		if (d->chead == NULL)
			d->ctail = NULL;
		free(k);
	}
}

/* dir_next - the earliest time after now this direction has work, or
 * INT64_MAX.  A chunk already due is still queued only because its
 * destination would block: EPOLLOUT wakes us for it, not a timeout
 * (which would spin while the receiver is slow). */
static int64_t dir_next(const struct dp_dir *d, int64_t now)
{
	int64_t t = INT64_MAX;

	if (d->head != NULL && d->head->due > now)
		t = d->head->due;
	if (d->chead != NULL && d->chead->release < t)
		t = d->chead->release;
	return t;
}

/* conn_pump - move what is due on both directions, then set the epoll
 * interest: read while the window has room, write while a due chunk
 * waits for the socket. */
static void conn_pump(struct dp_conn *c, const struct dp_opts *o, int64_t now)
{
	uint32_t want[2] = { 0, 0 };

	if (c->dead || c->connecting)
		return;
	for (int i = 0; i < 2; i++) {
		struct dp_dir *d = &c->dir[i];

		dir_credit(d, now);
		if (dir_read(d, o, now) < 0 || dir_write(d, o, now) < 0) {
			conn_kill(c, strerror(errno), o->verbose);
			return;
		}
	}
	if (c->dir[0].eof_sent && c->dir[1].eof_sent) {
		for (int i = 0; i < 2; i++) {
			close(c->fd[i]);
			c->fd[i] = -1;
		}
		dir_release(&c->dir[0]);
		dir_release(&c->dir[1]);
		c->dead = true;
		return;
	}
	for (int i = 0; i < 2; i++) {
		struct dp_dir *d = &c->dir[i];
		int s = i, t = 1 - i;	/* fd index of src and dst */

		if (!d->eof_read && d->held < o->window && !d->pipe_full)
			want[s] |= EPOLLIN;
		if (d->head != NULL && d->head->due <= now)
			want[t] |= EPOLLOUT;
	}
	for (int i = 0; i < 2; i++)
		if (!c->gone[i])
			ep_set(c->fd[i], &c->mask[i], want[i], &c->end[i]);
}

/* dir_pipes - splice mode for d: a ring of pipes (made when first
 * filled) for 4 x W; NULL (copy mode) with -C or without memory. */
static void dir_pipes(struct dp_dir *d, const struct dp_opts *o)
{
	size_t n = (4 * o->window + DP_PIPE_BYTES - 1) / DP_PIPE_BYTES;

	d->pipes = NULL;
	if (o->copy)
		return;
	n = NSR_MIN(NSR_MAX(n, (size_t)2), (size_t)DP_MAX_PIPES);
	d->pipes = malloc(n * sizeof(*d->pipes));
	if (d->pipes == NULL)
		return;
	for (size_t p = 0; p < n; p++)
		d->pipes[p][0] = d->pipes[p][1] = -1;
	d->npipes = (unsigned)n;
	d->in = 0;
}

/* via_dst - -V: read "CONNECT host port\n" (within 2 s; the client sends
 * it right after connecting) and resolve it into dst; 0 or -1. */
static int via_dst(int fd, struct sockaddr_in *dst)
{
	struct addrinfo hints, *ai = NULL;
	struct pollfd p = {.fd = fd, .events = POLLIN};
	char line[320], host[256], port[16];
	size_t n = 0;

	while (n + 1 < sizeof(line)) {
		ssize_t k = read(fd, line + n, 1);

		if (k == 1 && line[n] == '\n')
			break;
		if (k == 1) {
			n++;
			continue;
		}
		if (k == 0 || (errno != EAGAIN && errno != EINTR) ||
		    poll(&p, 1, 2000) != 1)
			return -1;
	}
	line[n] = '\0';
	if (sscanf(line, "CONNECT %255s %15s", host, port) != 2)
		return -1;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, port, &hints, &ai) != 0 || ai == NULL)
		return -1;
	memcpy(dst, ai->ai_addr, sizeof(*dst));
	freeaddrinfo(ai);
	return 0;
}

/* conn_open - accept one connection and start its upstream connect. */
static void conn_open(int lfd, const struct dp_opts *o)
{
	struct sockaddr_in dst;
	socklen_t len = sizeof(dst);
	struct dp_conn *c = NULL;
	struct epoll_event ev;
	int cfd, ufd = -1, one = 1;

	cfd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (cfd < 0)
		return;
	if (dp_nconns >= DP_MAX_CONNS) {
		fprintf(stderr, "delayproxy: %d connections: refusing more\n",
			DP_MAX_CONNS);
		goto fail;
	}
	/* Where was it going?  The CONNECT line (-V), the REDIRECTed
	 * destination, else -c. */
	if (o->via) {
		if (via_dst(cfd, &dst) != 0) {
			fprintf(stderr, "delayproxy: no CONNECT line: "
				"closed\n");
			goto fail;
		}
	} else if (getsockopt(cfd, SOL_IP, SO_ORIGINAL_DST, &dst, &len) != 0 ||
	    (dst.sin_addr.s_addr == htonl(INADDR_LOOPBACK) &&
	     dst.sin_port == htons((uint16_t)o->port))) {
		if (o->fixed.sin_port == 0) {
			fprintf(stderr, "delayproxy: a connection without an "
				"original destination and no -c: closed\n");
			goto fail;
		}
		dst = o->fixed;
	}
	ufd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (ufd < 0)
		goto fail;
	if (o->mark != 0 && setsockopt(ufd, SOL_SOCKET, SO_MARK, &o->mark,
				       sizeof(o->mark)) != 0) {
		fprintf(stderr, "delayproxy: SO_MARK: %s\n", strerror(errno));
		goto fail;
	}
	setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(ufd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(ufd, (struct sockaddr *)&dst, sizeof(dst)) != 0 &&
	    errno != EINPROGRESS)
		goto fail;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		goto fail;
	c->fd[0] = cfd;
	c->fd[1] = ufd;
	for (int i = 0; i < 2; i++) {
		c->end[i].conn = c;
		c->end[i].i = i;
	}
	c->connecting = true;
	c->dir[0].src = cfd;
	c->dir[0].dst = ufd;
	c->dir[1].src = ufd;
	c->dir[1].dst = cfd;
	for (int i = 0; i < 2; i++)
		dir_pipes(&c->dir[i], o);
	memset(&ev, 0, sizeof(ev));
	ev.data.ptr = &c->end[0];
	ev.events = 0;
	if (epoll_ctl(dp_epfd, EPOLL_CTL_ADD, cfd, &ev) != 0)
		goto fail;
	ev.data.ptr = &c->end[1];
	ev.events = EPOLLOUT;
	if (epoll_ctl(dp_epfd, EPOLL_CTL_ADD, ufd, &ev) != 0)
		goto fail;
	c->mask[1] = EPOLLOUT;
	c->kick = true;
	c->next = INT64_MAX;
	c->link = dp_conns;
	dp_conns = c;
	dp_nconns++;
	dp_total_conns++;
	if (o->verbose) {
		char a[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &dst.sin_addr, a, sizeof(a));
		fprintf(stderr, "delayproxy: connection to %s:%d\n", a,
			ntohs(dst.sin_port));
	}
	return;
fail:
	if (c != NULL) {
		dir_release(&c->dir[0]);
		dir_release(&c->dir[1]);
		free(c);
	}
	if (ufd >= 0)
		close(ufd);
	close(cfd);
}

/* conn_event - an epoll event on socket e of a connection. */
static void conn_event(struct dp_end *e, uint32_t events,
		       const struct dp_opts *o)
{
	struct dp_conn *c = e->conn;

	if (c->dead)
		return;
	c->kick = true;
	if (events & EPOLLERR) {	/* a reset, or the connect failed */
		int err = 0;
		socklen_t len = sizeof(err);

		for (int i = 0; i < 2 && err == 0; i++)
			getsockopt(c->fd[i], SOL_SOCKET, SO_ERROR, &err, &len);
		conn_kill(c, err != 0 ? strerror(err) : "socket error",
			  o->verbose);
		return;
	}
	if (c->connecting) {
		int err = 0;
		socklen_t len = sizeof(err);

		if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
			return;
		getsockopt(c->fd[1], SOL_SOCKET, SO_ERROR, &err, &len);
		if (err != 0) {
			conn_kill(c, strerror(err), o->verbose);
			return;
		}
		c->connecting = false;
	}
	/* A hang-up (both directions closed) would be reported at every
	 * wait: take the socket out of the epoll set; conn_pump still reads
	 * its end of stream.  Reads and writes are done by conn_pump. */
	if ((events & EPOLLHUP) && !c->gone[e->i]) {
		epoll_ctl(dp_epfd, EPOLL_CTL_DEL, c->fd[e->i], NULL);
		c->gone[e->i] = true;
	}
}

/* conns_sweep - pump every connection, free the dead ones; the earliest
 * time any has work next, or INT64_MAX. */
static int64_t conns_sweep(const struct dp_opts *o)
{
	struct dp_conn **pp = &dp_conns;
	int64_t next = INT64_MAX, now = now_ns();

	while (*pp != NULL) {
		struct dp_conn *c = *pp;

		if (c->kick || c->next <= now) {
			c->kick = false;
			conn_pump(c, o, now);
			c->next = INT64_MAX;
			for (int i = 0; i < 2; i++)
				c->next = NSR_MIN(c->next,
						  dir_next(&c->dir[i], now));
		}
		if (c->dead) {
			dp_total_bytes[0] += c->dir[0].bytes;
			dp_total_bytes[1] += c->dir[1].bytes;
			*pp = c->link;
			dp_nconns--;
			free(c);
			continue;
		}
		if (c->next < next)
			next = c->next;
		pp = &c->link;
	}
	return next;
}

/* run_loop - until the time limit or a signal. */
static void run_loop(int lfd, const struct dp_opts *o)
{
	int64_t end = now_ns() + (int64_t)o->seconds * 1000000000;
	struct epoll_event evs[64];
	sigset_t none;

	sigemptyset(&none);
	while (!dp_stop) {
		int64_t next = conns_sweep(o), now = now_ns(), wait;
		struct timespec ts;
		int n;

		if (now >= end)
			break;
		wait = NSR_MIN(next, end) - now;
		if (wait < 0)
			wait = 0;
		ts.tv_sec = wait / 1000000000;
		ts.tv_nsec = wait % 1000000000;
		n = epoll_pwait2(dp_epfd, evs, (int)NSR_ARRAY_SIZE(evs), &ts,
				 &none);
		if (n < 0 && errno != EINTR) {
			fprintf(stderr, "delayproxy: epoll: %s\n",
				strerror(errno));
			break;
		}
		for (int i = 0; i < n; i++) {
			if (evs[i].data.ptr == NULL)
				conn_open(lfd, o);
			else
				conn_event(evs[i].data.ptr, evs[i].events, o);
		}
	}
}

int main(int argc, char **argv)
{
	struct dp_opts o;
	struct epoll_event ev;
	struct sigaction sa;
	sigset_t block;
	int lfd = -1, rc;

	rc = parse_opts(argc, argv, &o);
	if (rc != 0)
		return rc;
	signal(SIGPIPE, SIG_IGN);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	/* Signals only arrive inside epoll_pwait2 (its mask is empty). */
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, NULL);

	lfd = listen_on(o.listen_addr, o.port);
	dp_epfd = epoll_create1(EPOLL_CLOEXEC);
	if (lfd < 0 || dp_epfd < 0) {
		rc = 1;
		goto out;
	}
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.ptr = NULL;
	if (epoll_ctl(dp_epfd, EPOLL_CTL_ADD, lfd, &ev) != 0) {
		rc = 1;
		goto out;
	}
	printf("delayproxy: listening on %s:%d, delay %.3f ms each way, "
	       "window %zu bytes, mark 0x%x, for %d s\n", o.listen_addr, o.port,
	       (double)o.delay_ns / 1e6, o.window, o.mark, o.seconds);
	fflush(stdout);
	run_loop(lfd, &o);
	while (dp_conns != NULL) {
		struct dp_conn *c = dp_conns;

		dp_total_bytes[0] += c->dir[0].bytes;
		dp_total_bytes[1] += c->dir[1].bytes;
		conn_kill(c, "stopping", false);
		dp_conns = c->link;
		free(c);
	}
	printf("delayproxy: stopped: %llu connections, %llu bytes forwarded, "
	       "%llu bytes back\n", (unsigned long long)dp_total_conns,
	       (unsigned long long)dp_total_bytes[0],
	       (unsigned long long)dp_total_bytes[1]);
	rc = 0;
out:
	if (lfd >= 0)
		close(lfd);
	if (dp_epfd >= 0)
		close(dp_epfd);
	return rc;
}
