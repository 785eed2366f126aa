/*
 * compat.h - the portability header: included first by every .c file
 * (the build also force-includes it).  Feature macros and system quirks live
 * here and nowhere else.  It ends by including banned.h, so functions we do
 * not allow become compile errors everywhere.
 */
#ifndef NSR_COMPAT_H
#define NSR_COMPAT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64
#endif

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#define NSR_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define NSR_MIN(a, b) ((a) < (b) ? (a) : (b)) /* evaluates twice */
#define NSR_MAX(a, b) ((a) > (b) ? (a) : (b)) /* evaluates twice */
#define NSR_UNUSED(x) ((void)(x))

#if defined(__GNUC__)
#define NSR_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define NSR_NORETURN __attribute__((noreturn))
#define NSR_LIKELY(x) __builtin_expect(!!(x), 1)
#define NSR_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define NSR_PRINTF(f, a)
#define NSR_NORETURN
#define NSR_LIKELY(x) (x)
#define NSR_UNLIKELY(x) (x)
#endif

/* Default server root; overridden by -R or NSR_ROOT. */
#define NSR_DEFAULT_ROOT "/nsr"
#define NSR_VERSION_STRING "0.1.0"

#include "nsr/banned.h"

#endif /* NSR_COMPAT_H */
