/* SPDX-License-Identifier: MIT */
/* Fuzz target for STATUS= cleaning (src/status.c).
 *
 * Input: the text (cut at its first NUL, as a C string would be). Checks:
 * the message starts with "STATUS=", fits one 4096-byte datagram, is one
 * line without control characters, is valid UTF-8; each input byte maps to
 * one output byte or its whole character, so an input that fits comes out
 * at its own length and a longer one is cut only by less than a character. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-target.h"
#include "sdlive-internal.h"

#define CHECK(cond)                                                                 \
        do {                                                                        \
                if (!(cond)) {                                                      \
                        fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, \
                                __LINE__, #cond);                                   \
                        abort();                                                    \
                }                                                                   \
        } while (0)

static bool utf8_valid(const unsigned char *s, size_t len) {
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static char out[SDLIVE_NOTIFY_MAX + 1];
        char *text = malloc(size + 1);
        size_t len, in_len, room = SDLIVE_NOTIFY_MAX - 7;

        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';
        in_len = strlen(text);

        memset(out, 0xaa, sizeof(out));
        len = sdlive_status_message(out, text);
        CHECK(len <= SDLIVE_NOTIFY_MAX);
        CHECK(out[len] == '\0' && strlen(out) == len);
        CHECK(memcmp(out, "STATUS=", 7) == 0);
        for (size_t i = 7; i < len; i++) {
                unsigned char c = (unsigned char) out[i];
                CHECK(c >= 0x20 && c != 0x7f);
        }
        CHECK(utf8_valid((const unsigned char *) out + 7, len - 7));
        if (in_len <= room)
                CHECK(len - 7 == in_len);
        else
                CHECK(len - 7 > room - 4);
        /* Printable ASCII passes through unchanged. */
        for (size_t i = 0; i < len - 7; i++) {
                unsigned char c = (unsigned char) text[i];
                if (c >= 0x20 && c < 0x7f)
                        CHECK(out[7 + i] == text[i]);
        }
        free(text);
        return 0;
}
