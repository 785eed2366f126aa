/*
 * nsr_test.h - helpers shared by the cmocka unit tests.
 *
 * nsr_test_tmpdir() makes a fresh private directory under $NSR_TEST_TMPDIR
 * (or /tmp) and returns its malloc'ed path; nsr_test_rmrf() removes a tree.
 */
#ifndef NSR_TEST_H
#define NSR_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

char *nsr_test_tmpdir(const char *tag);
void nsr_test_rmrf(const char *path);

#endif
