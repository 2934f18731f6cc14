/* SPDX-License-Identifier: MIT */
/* The libFuzzer entry point, also called by the plain replay driver. */
#ifndef SDLIVE_FUZZ_TARGET_H
#define SDLIVE_FUZZ_TARGET_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Returns 0; any broken invariant aborts. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A broken invariant: say which, where, and abort (libFuzzer keeps the input). */
#define CHECK(cond)                                                                 \
        do {                                                                        \
                if (!(cond)) {                                                      \
                        fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, \
                                __LINE__, #cond);                                   \
                        abort();                                                    \
                }                                                                   \
        } while (0)

#endif
