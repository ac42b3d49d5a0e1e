/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Minimal assertions for C tests. Each CHECK prints one PASS:/FAIL: line that
 * tests/run-all.sh counts; check_exit() returns the test's exit status.
 */
#ifndef TESTS_CHECK_H
#define TESTS_CHECK_H

#include <stdio.h>

static int check_failures;

#define CHECK(cond, ...)                                                     \
	do {                                                                 \
		if (cond) {                                                  \
			printf("PASS: ");                                    \
		} else {                                                     \
			printf("FAIL: %s:%d: ", __FILE__, __LINE__);         \
			check_failures++;                                    \
		}                                                            \
		printf(__VA_ARGS__);                                         \
		printf("\n");                                                \
		fflush(stdout);                                              \
	} while (0)

/* For checks inside loops: prints only on failure, returns the condition. */
#define CHECK_QUIET(cond, ...)                                               \
	((cond) ? 1 : (printf("FAIL: %s:%d: ", __FILE__, __LINE__),          \
		       printf(__VA_ARGS__), printf("\n"), fflush(stdout),    \
		       check_failures++, 0))

static inline int check_exit(void)
{
	return check_failures ? 1 : 0;
}

#endif
