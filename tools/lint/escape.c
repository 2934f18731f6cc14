/* SPDX-License-Identifier: MIT */
/* Untrusted text made valid UTF-8 (JSON) or harmless on a terminal. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "escape.h"

/* The length of the valid UTF-8 sequence at p (RFC 3629: no overlong form,
 * no surrogate, nothing over U+10FFFF), 0 if p starts none. */
static size_t utf8_length(const unsigned char *p) {
        unsigned char lo = 0x80, hi = 0xbf;
        size_t n;

        if (p[0] < 0x80)
                return 1;
        if (p[0] >= 0xc2 && p[0] <= 0xdf)
                n = 2;
        else if (p[0] >= 0xe0 && p[0] <= 0xef) {
                n = 3;
                lo = p[0] == 0xe0 ? 0xa0 : 0x80;
                hi = p[0] == 0xed ? 0x9f : 0xbf;
        } else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
                n = 4;
                lo = p[0] == 0xf0 ? 0x90 : 0x80;
                hi = p[0] == 0xf4 ? 0x8f : 0xbf;
        } else
                return 0;
        if (p[1] < lo || p[1] > hi)
                return 0;
        for (size_t i = 2; i < n; i++)
                if (p[i] < 0x80 || p[i] > 0xbf)
                        return 0;
        return n;
}

/* Appends n bytes if they fit whole; false when out is full. */
static bool put(char *out, size_t size, size_t *len, const void *bytes, size_t n) {
        if (*len + n >= size)
                return false;
        memcpy(out + *len, bytes, n);
        *len += n;
        out[*len] = '\0';
        return true;
}

void escape_utf8(const char *in, char *out, size_t size) {
        const unsigned char *p = (const unsigned char *) in;
        size_t len = 0;

        out[0] = '\0';
        while (*p) {
                size_t n = utf8_length(p);

                if (!(n ? put(out, size, &len, p, n) : put(out, size, &len, "\xef\xbf\xbd", 3)))
                        return;
                p += n ? n : 1;
        }
}

void escape_terminal(const char *in, char *out, size_t size) {
        const unsigned char *p = (const unsigned char *) in;
        size_t len = 0;

        out[0] = '\0';
        while (*p) {
                size_t n = utf8_length(p);
                bool control = n == 0 || p[0] < 0x20 || p[0] == 0x7f || (n == 2 && p[0] == 0xc2 && p[1] < 0xa0);
                char hex[8];

                if (control) {
                        snprintf(hex, sizeof(hex), "\\x%02x", p[0]);
                        if (!put(out, size, &len, hex, 4))
                                return;
                        p++;
                        continue;
                }
                if (!(p[0] == '\\' ? put(out, size, &len, "\\\\", 2) : put(out, size, &len, p, n)))
                        return;
                p += n;
        }
}
