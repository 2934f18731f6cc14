/* SPDX-License-Identifier: MIT */
#include "printable.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (at most n bytes) and its code
 * point, or 0 when s does not start one. */
static size_t utf8_sequence(const unsigned char *s, size_t n, uint32_t *ret_cp) {
        size_t len;
        uint32_t cp;

        if (s[0] < 0x80) {
                *ret_cp = s[0];
                return 1;
        }
        if (s[0] >= 0xc2 && s[0] <= 0xdf)
                len = 2, cp = s[0] & 0x1f;
        else if (s[0] >= 0xe0 && s[0] <= 0xef)
                len = 3, cp = s[0] & 0x0f;
        else if (s[0] >= 0xf0 && s[0] <= 0xf4)
                len = 4, cp = s[0] & 0x07;
        else
                return 0;
        if (len > n)
                return 0;
        for (size_t i = 1; i < len; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                cp = (cp << 6) | (s[i] & 0x3f);
        }
        /* Overlong forms, surrogates and values past U+10FFFF. */
        if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
        *ret_cp = cp;
        return len;
}

/* Characters that act on a terminal or reorder or break the line. */
static bool is_control(uint32_t cp) {
        return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x061c || cp == 0x200e || cp == 0x200f ||
               (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

const char *printable(const char *text, char *out, size_t size) {
        const unsigned char *s = (const unsigned char *) text;
        size_t in_len = strlen(text), i = 0, o = 0;

        while (i < in_len) {
                uint32_t cp = 0;
                size_t n = utf8_sequence(s + i, in_len - i, &cp);
                bool escape = n == 0 || is_control(cp);
                size_t bytes = n ? n : 1;
                size_t need = escape ? 4 * bytes : cp == '\\' ? 2 : n;

                if (o + need >= size)
                        break;
                if (escape)
                        for (size_t k = 0; k < bytes; k++, o += 4)
                                snprintf(out + o, 5, "\\x%02x", s[i + k]);
                else if (cp == '\\')
                        memcpy(out + o, "\\\\", 2), o += 2;
                else
                        memcpy(out + o, s + i, n), o += n;
                i += bytes;
        }
        out[o] = '\0';
        return out;
}
