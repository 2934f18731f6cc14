/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_TEST_SOFT_CHECK_H
#define SDLIVE_TEST_SOFT_CHECK_H

/*
 * CHECK(cond, fmt, ...) for test programs that report every failed check
 * and go on: it prints "FAIL file:line: message" on stderr and counts the
 * failure in check_failures; the program exits non-zero when that is not
 * 0. One counter per program: include it from the test's one source file.
 */

#include <stdio.h>

static int check_failures;

#define CHECK(cond, ...)                                                     \
        do {                                                                 \
                if (!(cond)) {                                               \
                        fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
                        fprintf(stderr, __VA_ARGS__);                        \
                        fputc('\n', stderr);                                 \
                        check_failures++;                                    \
                }                                                            \
        } while (0)

#endif
