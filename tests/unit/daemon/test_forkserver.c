/*
 * test_forkserver.c - nsr/forkserver.h with this program as the server
 * (started with -Z, as nsrsnmd starts nsrmmd): requests pack and unpack
 * and garbage is refused; a copy is the caller's child (invariant 2),
 * gets its arguments with "@fd" made the passed descriptor's number and
 * shows them in /proc/PID/cmdline (invariant 4); a bad request is
 * answered and the server serves on; the server exits when the caller's
 * end closes (invariant 3); a server that does not answer is killed and
 * the call says so.
 */
#include "nsr/compat.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nsr/err.h"
#include "nsr/forkserver.h"
#include "nsr_test.h"

static char g_exe[4096];

/* test_pack - a round trip; what is not a request is refused. */
static void test_pack(void **state)
{
	char a0[] = "nsrmmd", a1[] = "-D", a2[] = "/a b", a3[] = "",
	     a4[] = "@fd", x[] = "x", bad[] = {0, 'a', 0};
	char *in[] = {a0, a1, a2, a3, a4, NULL};
	char buf[64], *out[8], *many[NSR_FORKSERVER_ARGS_MAX + 1];
	size_t len;

	NSR_UNUSED(state);
	len = nsr_forkserver_pack(in, buf, sizeof(buf));
	assert_int_equal(len, 7 + 3 + 5 + 1 + 4);
	assert_int_equal(nsr_forkserver_unpack(buf, len, out, 8), 5);
	for (int i = 0; i < 5; i++)
		assert_string_equal(out[i], in[i]);
	assert_null(out[5]);
	/* too small a buffer, no arguments, an empty name */
	assert_int_equal(nsr_forkserver_pack(in, buf, 10), 0);
	assert_int_equal(nsr_forkserver_pack(in + 5, buf, sizeof(buf)), 0);
	assert_int_equal(nsr_forkserver_pack(in + 3, buf, sizeof(buf)), 0);
	/* not ending in a NUL, empty, an empty first, too many for argv */
	assert_int_equal(nsr_forkserver_unpack(buf, len - 1, out, 8), -1);
	assert_int_equal(nsr_forkserver_unpack(buf, 0, out, 8), -1);
	assert_int_equal(nsr_forkserver_unpack(bad, 3, out, 8), -1);
	len = nsr_forkserver_pack(in, buf, sizeof(buf));
	assert_int_equal(nsr_forkserver_unpack(buf, len, out, 5), -1);
	assert_int_equal(nsr_forkserver_unpack(buf, len, out, 6), 5);
	for (int i = 0; i < NSR_FORKSERVER_ARGS_MAX; i++)
		many[i] = x;
	many[NSR_FORKSERVER_ARGS_MAX] = NULL;
	assert_int_equal(nsr_forkserver_pack(many, buf, sizeof(buf)), 0);
}

/* read_all - what fd gives until EOF (bounded by len). */
static size_t read_all(int fd, char *buf, size_t len)
{
	size_t at = 0;
	ssize_t n;

	while (at < len - 1 && (n = read(fd, buf + at, len - 1 - at)) > 0)
		at += (size_t)n;
	buf[at] = '\0';
	return at;
}

/* test_spawn - a copy: our child, its arguments, its command line. */
static void test_spawn(void **state)
{
	struct nsr_forkserver fs;
	char a0[] = "tf-copy", a1[] = "report", a2[] = "@fd",
	     a3[] = "/a path";
	char *argv[] = {a0, a1, a2, a3, NULL};
	char buf[256], want[64], path[64];
	int p[2], fd, st;
	pid_t pid;
	size_t n;

	NSR_UNUSED(state);
	assert_int_equal(nsr_forkserver_start(&fs, g_exe, "-Z"), NSR_OK);
	assert_true(fs.pid > 0 && fs.fd >= 0);
	for (int round = 0; round < 2; round++) {
		assert_int_equal(pipe2(p, O_CLOEXEC), 0);
		assert_int_equal(nsr_forkserver_spawn(&fs, argv, p[1], 5000,
						      &pid),
				 NSR_OK);
		close(p[1]);
		assert_true(pid > 0 && pid != fs.pid);
		/* "ppid FD ARG3", then it waits to be stopped */
		n = read_all(p[0], buf, sizeof(buf));
		close(p[0]);
		assert_true(n > 0);
		snprintf(want, sizeof(want), "%ld ", (long)getpid());
		assert_int_equal(strncmp(buf, want, strlen(want)), 0);
		assert_non_null(strstr(buf, " /a path\n"));
		assert_null(strstr(buf, "@fd"));
		snprintf(path, sizeof(path), "/proc/%ld/cmdline", (long)pid);
		fd = open(path, O_RDONLY);
		assert_true(fd >= 0);
		n = read_all(fd, buf, sizeof(buf));
		close(fd);
		assert_true(n > 30);
		assert_string_equal(buf, "tf-copy");
		assert_string_equal(buf + 8, "report");
		assert_string_equal(buf + 8 + 7 + strlen(buf + 15) + 1,
				    "/a path");
		kill(pid, SIGTERM);
		assert_int_equal(waitpid(pid, &st, 0), pid); /* ours */
		assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
	}
	/* invariant 3: our end closed, it exits by itself */
	close(fs.fd);
	fs.fd = -1;
	assert_int_equal(waitpid(fs.pid, &st, 0), fs.pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* test_bad_request - no descriptor, or more arguments than a request
 * holds: refused, and the server serves the next one; a server that
 * exited and was reaped is forgotten without a signal. */
static void test_bad_request(void **state)
{
	struct nsr_forkserver fs;
	char a0[] = "tf-copy", a1[] = "report", a2[] = "@fd", a3[] = "x";
	char *argv[] = {a0, a1, a2, a3, NULL};
	char *many[NSR_FORKSERVER_ARGS_MAX + 1];
	pid_t server;
	int32_t ans = 0;
	int p[2], st;
	pid_t pid;

	NSR_UNUSED(state);
	assert_int_equal(nsr_forkserver_start(&fs, g_exe, "-Z"), NSR_OK);
	assert_int_equal(send(fs.fd, "x\0", 2, 0), 2); /* no descriptor */
	assert_int_equal(recv(fs.fd, &ans, sizeof(ans), 0), sizeof(ans));
	assert_int_equal(ans, -EINVAL);
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	/* too many arguments for a request: refused here, server kept */
	for (int i = 0; i < NSR_FORKSERVER_ARGS_MAX; i++)
		many[i] = a3;
	many[NSR_FORKSERVER_ARGS_MAX] = NULL;
	assert_int_equal(nsr_forkserver_spawn(&fs, many, p[1], 5000, &pid),
			 NSR_ERR_INVAL);
	assert_true(fs.fd >= 0);
	assert_int_equal(nsr_forkserver_spawn(&fs, argv, p[1], 5000, &pid),
			 NSR_OK);
	close(p[1]);
	close(p[0]);
	kill(pid, SIGTERM);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	nsr_forkserver_stop(&fs, 5000);
	assert_int_equal(fs.pid, 0);
	assert_int_equal(fs.fd, -1);
	/* forget: one that exited and was reaped */
	assert_int_equal(nsr_forkserver_start(&fs, g_exe, "-Z"), NSR_OK);
	server = fs.pid;
	kill(server, SIGKILL);
	assert_int_equal(waitpid(server, &st, 0), server);
	nsr_forkserver_forget(&fs);
	assert_int_equal(fs.pid, 0);
	assert_int_equal(fs.fd, -1);
	assert_int_equal(nsr_forkserver_spawn(&fs, argv, 0, 100, &pid),
			 NSR_ERR_STATE);
}

/* test_hung - a server that does not answer: a timeout, and it is
 * killed; a call without a server says so. */
static void test_hung(void **state)
{
	struct nsr_forkserver fs;
	char a0[] = "tf-copy", a1[] = "report", a2[] = "@fd", a3[] = "x";
	char *argv[] = {a0, a1, a2, a3, NULL};
	int p[2], st;
	pid_t pid, server;

	NSR_UNUSED(state);
	assert_int_equal(nsr_forkserver_start(&fs, g_exe, "-Z"), NSR_OK);
	server = fs.pid;
	kill(server, SIGSTOP);
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_int_equal(nsr_forkserver_spawn(&fs, argv, p[1], 200, &pid),
			 NSR_ERR_TIMEOUT);
	assert_int_equal(fs.fd, -1);
	assert_int_equal(waitpid(server, &st, 0), server);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	assert_int_equal(nsr_forkserver_spawn(&fs, argv, p[1], 200, &pid),
			 NSR_ERR_STATE);
	close(p[0]);
	close(p[1]);
}

/* copy - what a copy does: "PPID FD ARG3" to its descriptor, then wait
 * (at most 10 s) to be stopped. */
static int copy(int argc, char **argv)
{
	char line[128];
	int fd, n;

	if (argc != 4 || strcmp(argv[1], "report") != 0)
		return 2;
	fd = atoi(argv[2]);
	n = snprintf(line, sizeof(line), "%ld %d %s\n", (long)getppid(), fd,
		     argv[3]);
	if (write(fd, line, (size_t)n) != n)
		return 3;
	close(fd);
	for (int i = 0; i < 100; i++)
		poll(NULL, 0, 100);
	return 0;
}

/* main - the tests, or the server (-Z) and its copies. */
int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pack),
		cmocka_unit_test(test_spawn),
		cmocka_unit_test(test_bad_request),
		cmocka_unit_test(test_hung),
	};
	ssize_t n;

	if (argc > 1 && strcmp(argv[1], "-Z") == 0) {
		int rc = nsr_forkserver_serve(argc, argv, &argc, &argv);

		return rc == 1 ? copy(argc, argv) : rc == 0 ? 0 : 1;
	}
	n = readlink("/proc/self/exe", g_exe, sizeof(g_exe) - 1);
	if (n <= 0)
		return 1;
	g_exe[n] = '\0';
	return cmocka_run_group_tests(tests, NULL, NULL);
}
