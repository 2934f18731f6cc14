/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_EXAMPLE_DURATION_H
#define SDLIVE_EXAMPLE_DURATION_H

#include <stddef.h>
#include <stdint.h>

/*
 * Parses a duration into microseconds: a whole number followed by an optional
 * unit, no spaces: "us", "ms", "s"/"sec", "m"/"min", "h", "d". A bare number
 * is seconds ("90" = 90 s). Examples: "500ms", "2s", "1min", "1h", "7d".
 * Returns 0, -EINVAL for anything else (empty, sign, fraction, unknown unit,
 * whatever the number), -ERANGE when a well-formed value does not fit in
 * uint64_t microseconds.
 */
int duration_parse(const char *text, uint64_t *ret_usec);

/*
 * Formats usec for humans ("250ms", "1.5s", "3min 20s", "2h 5min", "7d") into
 * buf and returns buf. Durations are rounded to the unit shown.
 */
char *duration_format(char *buf, size_t size, uint64_t usec);

/* Room for any duration_format() result. */
#define DURATION_FORMAT_MAX 32

#endif
