/* SPDX-License-Identifier: MIT */
/* The failure countdowns of a test program that wraps libc calls
 * (-Wl,--wrap=NAME): a countdown of 1 makes the next call fail, 0 none.
 * It also gives the wrapped calloc() such a program shares, failing with
 * ENOMEM on fail_calloc (the program links with -Wl,--wrap=calloc).
 * Defines functions: include it from the program's one source file. */
#ifndef SDLIVE_WRAP_COUNTDOWN_H
#define SDLIVE_WRAP_COUNTDOWN_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

/* True when this call is the one the countdown names (and stops it). */
static bool fails_now(int *countdown) {
        return *countdown > 0 && --*countdown == 0;
}

static int fail_calloc;

void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size) {
        if (fails_now(&fail_calloc)) {
                errno = ENOMEM;
                return NULL;
        }
        return __real_calloc(n, size);
}

#endif
