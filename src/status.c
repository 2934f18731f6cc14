/* SPDX-License-Identifier: MIT */
/*
 * STATUS= text made safe for the manager: one line of valid UTF-8 that fits
 * one datagram. Pure, no system call: also the fuzz target's entry.
 */
#include <string.h>

#include "sdlive_internal.h"

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0. */
static size_t utf8_sequence_length(const unsigned char *s, size_t n) {
        size_t len, i;
        uint32_t cp;

        if (s[0] < 0x80)
                return 1;
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
        for (i = 1; i < len; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                cp = (cp << 6) | (s[i] & 0x3f);
        }
        /* Overlong forms, surrogates and values past U+10FFFF. */
        if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
        return len;
}

size_t sdlive_status_message(char *out, const char *text) {
        static const char prefix[] = "STATUS=";
        const size_t room = SDLIVE_NOTIFY_MAX - (sizeof(prefix) - 1);
        const unsigned char *s = (const unsigned char *) text;
        size_t in_len = strlen(text), i = 0, o = sizeof(prefix) - 1;

        memcpy(out, prefix, sizeof(prefix) - 1);
        /* Copy whole characters while they fit: control characters (the
         * newline above all, which would start a new assignment such as
         * READY=1) become spaces, invalid UTF-8 bytes become '?', so the
         * manager neither splits the line nor drops it as unclean. */
        while (i < in_len) {
                size_t n = utf8_sequence_length(s + i, in_len - i);

                if (n == 0) {
                        if (o + 1 > sizeof(prefix) - 1 + room)
                                break;
                        out[o++] = '?';
                        i++;
                        continue;
                }
                if (o + n > sizeof(prefix) - 1 + room)
                        break;
                if (n == 1 && (s[i] < 0x20 || s[i] == 0x7f))
                        out[o++] = ' ';
                else
                        memcpy(out + o, s + i, n), o += n;
                i += n;
        }
        out[o] = '\0';
        return o;
}
