/* SPDX-License-Identifier: MIT */
/* Strict UTF-8 validation for the tests (the unit tests and the STATUS=
 * fuzz target): no overlong forms, no surrogates, nothing above U+10FFFF.
 * Header-only so that a fuzz target compiles it with its own flags. */
#ifndef SDLIVE_TEST_UTF8_VALID_H
#define SDLIVE_TEST_UTF8_VALID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* True when the len bytes at text are well-formed UTF-8. */
static inline bool utf8_valid(const void *text, size_t len) {
        const unsigned char *s = text;

        for (size_t i = 0; i < len;) {
                unsigned char c = s[i];
                size_t n;
                uint32_t cp, min;

                if (c < 0x80) {
                        i++;
                        continue;
                } else if ((c & 0xe0) == 0xc0) {
                        n = 2, cp = c & 0x1f, min = 0x80;
                } else if ((c & 0xf0) == 0xe0) {
                        n = 3, cp = c & 0x0f, min = 0x800;
                } else if ((c & 0xf8) == 0xf0) {
                        n = 4, cp = c & 0x07, min = 0x10000;
                } else {
                        return false;
                }
                if (i + n > len)
                        return false;
                for (size_t k = 1; k < n; k++) {
                        if ((s[i + k] & 0xc0) != 0x80)
                                return false;
                        cp = (cp << 6) | (s[i + k] & 0x3f);
                }
                if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
                        return false;
                i += n;
        }
        return true;
}

#endif
