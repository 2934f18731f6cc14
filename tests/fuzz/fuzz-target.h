/* SPDX-License-Identifier: MIT */
/* The libFuzzer entry point, also called by the plain replay driver. */
#ifndef SDLIVE_FUZZ_TARGET_H
#define SDLIVE_FUZZ_TARGET_H

#include <stddef.h>
#include <stdint.h>

/* Returns 0; any broken invariant aborts. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
