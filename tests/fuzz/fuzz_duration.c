/* SPDX-License-Identifier: MIT */
/* Fuzz target for the daemons' duration parser and formatter
 * (examples/lib/common/duration.c).
 *
 * Input: the option value as the command line would pass it (cut at the
 * first NUL). Beyond "no crash", it checks the parser against an
 * independent reading done in 128-bit arithmetic: the same verdict, the
 * same value, -ERANGE exactly when the value does not fit in 64 bits; and
 * that the formatter fits its buffer for the parsed value and for the
 * input's first 8 bytes read as a raw value (overflow near UINT64_MAX). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "fuzz_target.h"

#define INPUT_MAX 64

static const struct {
        const char *suffix;
        unsigned __int128 usec;
} units[] = {
        { "", 1000000 }, { "us", 1 }, { "ms", 1000 }, { "s", 1000000 }, { "sec", 1000000 },
        { "m", 60000000 }, { "min", 60000000 }, { "h", 3600000000ULL }, { "d", 86400000000ULL },
};

/* 0 with *ret, -EINVAL, or -ERANGE; 128 bits are enough to see overflow. */
static int reference(const char *s, uint64_t *ret) {
        unsigned __int128 v = 0;
        bool big = false;
        size_t i = 0;

        if (s[0] < '0' || s[0] > '9')
                return -EINVAL;
        for (; s[i] >= '0' && s[i] <= '9'; i++) {
                v = v * 10 + (unsigned) (s[i] - '0');
                if (v > UINT64_MAX) {
                        big = true;
                        v = (unsigned __int128) UINT64_MAX + 1;
                }
        }
        for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
                if (strcmp(s + i, units[u].suffix) != 0)
                        continue;
                if (big || v * units[u].usec > UINT64_MAX)
                        return -ERANGE;
                *ret = (uint64_t) (v * units[u].usec);
                return 0;
        }
        return -EINVAL;
}

static void check_format(uint64_t usec) {
        char buf[DURATION_FORMAT_MAX + 8];

        memset(buf, 'X', sizeof(buf));
        duration_format(buf, DURATION_FORMAT_MAX, usec);
        CHECK(memchr(buf, '\0', DURATION_FORMAT_MAX) != NULL);
        CHECK(buf[0] >= '0' && buf[0] <= '9');
        CHECK(buf[DURATION_FORMAT_MAX] == 'X');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char text[INPUT_MAX + 1];
        uint64_t got = 0, want = 0, raw = 0;
        size_t len = size < INPUT_MAX ? size : INPUT_MAX;
        int r, expected;

        memcpy(text, data, len);
        text[len] = '\0';
        r = duration_parse(text, &got);
        expected = reference(text, &want);
        CHECK(r == expected);
        if (r == 0) {
                CHECK(got == want);
                check_format(got);
        }
        memcpy(&raw, data, size < sizeof(raw) ? size : sizeof(raw));
        check_format(raw);
        check_format(UINT64_MAX - raw);
        return 0;
}
