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

#include "fuzz_target.h"
#include "utf8_valid.h"
#include "sdlive_internal.h"

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
