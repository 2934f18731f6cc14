/* SPDX-License-Identifier: MIT */
/*
 * printable() (examples/lib/common) against what a hostile name can hold:
 * known cases written out, then every string of one and two bytes and a
 * million random ones of up to 12. Each result must be valid UTF-8 with no
 * C0 control, DEL, C1 control or bidirectional control in it, fit in
 * PRINTABLE_SIZE(), and give back the input when its escapes are undone
 * (nothing dropped, nothing ambiguous). A buffer too small cuts at a
 * whole character or escape, always terminated.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "printable.h"
#include "soft_check.h"
#include "utf8_valid.h"

#define RANDOM_STRINGS 1000000
#define RANDOM_LEN_MAX 12

/* The code point at s (valid UTF-8), its length in *len. */
static uint32_t decode(const unsigned char *s, size_t *len) {
        static const unsigned char lead_mask[] = { 0x7f, 0x1f, 0x0f, 0x07 };
        size_t n = s[0] < 0x80 ? 1 : s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
        uint32_t cp = s[0] & lead_mask[n - 1];

        for (size_t i = 1; i < n; i++)
                cp = cp << 6 | (s[i] & 0x3f);
        *len = n;
        return cp;
}

static int hex_digit(char c) {
        return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Undoes the escapes of out into back; -1 when out has a malformed one. */
static int unescape(const char *out, char *back, size_t size) {
        size_t o = 0;

        for (const char *p = out; *p; o++) {
                if (o + 1 >= size)
                        return -1;
                if (*p != '\\') {
                        back[o] = *p++;
                        continue;
                }
                if (p[1] == '\\') {
                        back[o] = '\\', p += 2;
                        continue;
                }
                if (p[1] != 'x' || hex_digit(p[2]) < 0 || hex_digit(p[3]) < 0)
                        return -1;
                back[o] = (char) (hex_digit(p[2]) << 4 | hex_digit(p[3]));
                p += 4;
        }
        back[o] = '\0';
        return 0;
}

static int forbidden(uint32_t cp) {
        return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x061c || cp == 0x200e || cp == 0x200f ||
               (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

/* The properties every result has; returns the number of failures. */
static int check_one(const char *in) {
        char out[PRINTABLE_SIZE(RANDOM_LEN_MAX)], back[RANDOM_LEN_MAX + 1];
        size_t n = strlen(in), len;
        int failures = check_failures;

        printable(in, out, PRINTABLE_SIZE(n));
        len = strlen(out);
        CHECK(len < PRINTABLE_SIZE(n), "result of %zu bytes for %zu bytes of text", len, n);
        CHECK(utf8_valid(out, len), "result is not UTF-8");
        if (utf8_valid(out, len))
                for (size_t i = 0, k; i < len; i += k) {
                        uint32_t cp = decode((const unsigned char *) out + i, &k);
                        CHECK(!forbidden(cp), "U+%04X in the result", (unsigned) cp);
                }
        CHECK(unescape(out, back, sizeof(back)) == 0 && strcmp(back, in) == 0, "'%s' does not undo to the input",
              out);
        return check_failures - failures;
}

static void known_cases(void) {
        static const struct {
                const char *in, *out;
        } cases[] = {
                { "node-a", "node-a" },
                { "", "" },
                { "a b=c", "a b=c" },
                { "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\xa7", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\xa7" },
                { "\x1b[2J\x1b]0;t\x07", "\\x1b[2J\\x1b]0;t\\x07" },
                { "a\rb\nc\td", "a\\x0db\\x0ac\\x09d" },
                { "\x7f", "\\x7f" },
                { "\\x1b", "\\\\x1b" },
                { "\xc2\x9b" "31m", "\\xc2\\x9b" "31m" },     /* CSI as a C1 code point */
                { "\x9b" "31m", "\\x9b" "31m" },              /* CSI as a raw byte */
                { "\xc2\xa0", "\xc2\xa0" },                   /* U+00A0, past C1 */
                { "\xe2\x80\xae" "evil", "\\xe2\\x80\\xae" "evil" }, /* RIGHT-TO-LEFT OVERRIDE */
                { "\xe2\x81\xa6", "\\xe2\\x81\\xa6" },         /* LEFT-TO-RIGHT ISOLATE */
                { "\xe2\x80\xa8", "\\xe2\\x80\\xa8" },         /* LINE SEPARATOR */
                { "\xed\xa0\x80", "\\xed\\xa0\\x80" },         /* a surrogate */
                { "\xc0\xaf", "\\xc0\\xaf" },                 /* overlong '/' */
                { "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80" }, /* past U+10FFFF */
                { "\xe2\x82", "\\xe2\\x82" },                 /* cut short */
                { "\xff\xfe", "\\xff\\xfe" },
        };
        char out[64];

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                printable(cases[i].in, out, sizeof(out));
                CHECK(strcmp(out, cases[i].out) == 0, "case %zu: '%s', expected '%s'", i, out, cases[i].out);
        }
        /* Too small a buffer: whole escapes and characters only. */
        CHECK(strcmp(printable("\x1b\x1b", out, 8), "\\x1b") == 0, "cut inside an escape: '%s'", out);
        CHECK(strcmp(printable("ab\xc3\xa9", out, 4), "ab") == 0, "cut inside a character: '%s'", out);
        CHECK(strcmp(printable("ab", out, 1), "") == 0, "one byte of room: '%s'", out);
}

int main(void) {
        char in[RANDOM_LEN_MAX + 1];
        unsigned long checked = 0;

        known_cases();
        for (unsigned a = 1; a < 256; a++) {
                in[0] = (char) a, in[1] = '\0';
                check_one(in), checked++;
                for (unsigned b = 1; b < 256; b++) {
                        in[1] = (char) b, in[2] = '\0';
                        check_one(in), checked++;
                }
        }
        srand(20261203);
        for (unsigned i = 0; i < RANDOM_STRINGS && check_failures < 20; i++) {
                size_t n = 1 + (size_t) rand() % RANDOM_LEN_MAX;

                for (size_t k = 0; k < n; k++) {
                        /* Mostly the bytes of UTF-8 and controls, so that
                         * valid sequences come up as often as broken ones. */
                        static const unsigned char pool[] = { 0x01, 0x07, 0x0a, 0x1b, 0x5c, 0x61, 0x7f, 0x80,
                                                              0x85, 0x9b, 0xa0, 0xa8, 0xae, 0xc2, 0xc3, 0xe2,
                                                              0xed, 0xf0, 0xf4, 0xff, 0x81, 0x9f, 0xbf, 0x90 };
                        unsigned r = (unsigned) rand();

                        in[k] = (char) (r % 4 ? pool[(r >> 2) % sizeof(pool)] : 1 + (r >> 2) % 255);
                }
                in[n] = '\0';
                check_one(in), checked++;
        }
        printf("printable: %lu strings escaped, %d failures\n", checked, check_failures);
        return check_failures ? 1 : 0;
}
