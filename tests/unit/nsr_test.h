/*
 * nsr_test.h - helpers shared by the cmocka unit tests.
 *
 * nsr_test_tmpdir() makes a fresh private directory under $NSR_TEST_TMPDIR
 * (or /tmp) and returns its malloc'ed path; nsr_test_rmrf() removes a tree
 * of any depth; nsr_test_mkchain() makes a deep one.
 * nsr_test_path(dir, name) is "dir/name" in one of 4 rotating static
 * buffers; nsr_test_mkfile(dir, name, text) creates it (0644) holding
 * text, failing the test if it cannot.
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
/* nsr_test_mkchain - n nested directories below fd, the i-th named by len
 * copies of letter first + i % 20; returns the deepest one's descriptor
 * (fd is closed). */
int nsr_test_mkchain(int fd, int n, char first, size_t len);
const char *nsr_test_path(const char *dir, const char *name);
void nsr_test_mkfile(const char *dir, const char *name, const char *text);
/* nsr_test_cached - pages of [off, off + len) of the file at path that
 * are in the page cache (off page-aligned). */
size_t nsr_test_cached(const char *path, uint64_t off, size_t len);

#endif
