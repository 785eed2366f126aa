/*
 * test_proc.c - nsr_proc_stat: this process's command name and state; a
 * child that exited is a zombie until reaped, then not found; bad pids
 * are not found; nsr_proc_live: running, by name, never a zombie;
 * nsr_proc_cpu: the CPU time used grows.
 */
#include "nsr/compat.h"

#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nsr/err.h"
#include "nsr/proc.h"
#include "nsr_test.h"

/* test_self - the test program by its name, running. */
static void test_self(void **state)
{
	char comm[32], st = 0, tiny[4];

	NSR_UNUSED(state);
	assert_int_equal(nsr_proc_stat(getpid(), comm, sizeof(comm), &st),
			 NSR_OK);
	assert_string_equal(comm, "test_proc");
	assert_int_equal(st, 'R');
	/* cut to the buffer; either output may be left out */
	assert_int_equal(nsr_proc_stat(getpid(), tiny, sizeof(tiny), NULL),
			 NSR_OK);
	assert_string_equal(tiny, "tes");
	assert_int_equal(nsr_proc_stat(getpid(), NULL, 0, NULL), NSR_OK);
	/* live, and by that name only */
	assert_int_equal(nsr_proc_live(getpid(), NULL), 1);
	assert_int_equal(nsr_proc_live(getpid(), "test_proc"), 1);
	assert_int_equal(nsr_proc_live(getpid(), "nsrmmd"), 0);
	assert_int_equal(nsr_proc_live(0, NULL), 0);
}

/* test_zombie - an exited child is 'Z' until reaped, then gone. */
static void test_zombie(void **state)
{
	char st = 0;
	pid_t pid = fork();
	int status;

	NSR_UNUSED(state);
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	/* Bounded: the child exits at once; 5 s at most. */
	for (int i = 0; i < 500; i++) {
		assert_int_equal(nsr_proc_stat(pid, NULL, 0, &st), NSR_OK);
		if (st == 'Z')
			break;
		usleep(10000);
	}
	assert_int_equal(st, 'Z');
	assert_int_equal(nsr_proc_live(pid, NULL), 0); /* kill finds it */
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(nsr_proc_live(pid, NULL), 0);
	assert_int_equal(nsr_proc_stat(pid, NULL, 0, &st), NSR_ERR_NOTFOUND);
	assert_int_equal(nsr_proc_stat(0, NULL, 0, &st), NSR_ERR_NOTFOUND);
	assert_int_equal(nsr_proc_stat(-1, NULL, 0, &st), NSR_ERR_NOTFOUND);
}

/* test_cpu - this process's CPU time (pid 0 and its own pid) grows
 * while it computes (bounded: 5 s of wall time); a reaped child has
 * none to give. */
static void test_cpu(void **state)
{
	double a = -1, b = -1, c = -1;
	struct timespec t0, t;
	volatile unsigned long x = 0;
	pid_t pid;
	int st;

	NSR_UNUSED(state);
	assert_int_equal(nsr_proc_cpu(0, &a), NSR_OK);
	assert_true(a >= 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 1000000; i++)
			x += (unsigned long)i;
		assert_int_equal(nsr_proc_cpu(getpid(), &b), NSR_OK);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (b <= a && t.tv_sec - t0.tv_sec < 5);
	assert_true(b > a);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_int_equal(nsr_proc_cpu(pid, &c), NSR_ERR_NOTFOUND);
	assert_int_equal(nsr_proc_cpu(-1, &c), NSR_ERR_NOTFOUND);
}

/* main - run the tests. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self),
		cmocka_unit_test(test_zombie),
		cmocka_unit_test(test_cpu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
