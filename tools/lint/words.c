/* SPDX-License-Identifier: MIT */
/* Words and time spans of unit settings, as the manager reads them. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "words.h"

#define WORD_MAX 4096
#define WORDS_TEXT_MAX (UNIT_LINE_MAX + 1)

static int hex_value(char c) {
        return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* systemd's unit name unescaping: '-' is '/', "\\xNN" the byte NN. */
static void unescape(const char *in, size_t n, char *out, size_t size) {
        size_t len = 0;

        for (size_t i = 0; i < n && in[i] && len + 1 < size; i++) {
                if (in[i] == '-')
                        out[len++] = '/';
                else if (in[i] == '\\' && i + 3 < n && in[i + 1] == 'x' && hex_value(in[i + 2]) >= 0 &&
                         hex_value(in[i + 3]) >= 0) {
                        out[len++] = (char) (hex_value(in[i + 2]) << 4 | hex_value(in[i + 3]));
                        i += 3;
                } else
                        out[len++] = in[i];
        }
        out[len] = '\0';
}

/* Appends the expansion of specifier c to out (at most size bytes), the
 * values of the system manager (systemd.unit(5), "Specifiers"). */
static int specifier(const struct unit *u, char c, char *out, size_t *len, size_t size) {
        static const char *const fixed[][2] = {
                { "t", "/run" },    { "S", "/var/lib" }, { "C", "/var/cache" }, { "L", "/var/log" },
                { "E", "/etc" },    { "T", "/tmp" },     { "V", "/var/tmp" },   { "h", "/root" },
                { "u", "root" },    { "U", "0" },        { "g", "root" },       { "G", "0" },
                { "s", "/bin/sh" }, { "%", "%" },
        };
        char buf[1024] = "";
        const char *name = u && u->name ? u->name : "", *instance = u && u->instance ? u->instance : NULL;
        const char *at = strchr(name, '@'), *dot = strrchr(name, '.');
        size_t prefix = at ? (size_t) (at - name) : dot ? (size_t) (dot - name) : strlen(name), n;
        const char *last = name;

        for (size_t i = 0; i < prefix; i++)
                if (name[i] == '-' && i + 1 < prefix)
                        last = name + i + 1;
        switch (c) {
        case 'i': snprintf(buf, sizeof(buf), "%s", instance ? instance : ""); break;
        case 'I': unescape(instance ? instance : "", SIZE_MAX, buf, sizeof(buf)); break;
        case 'n': snprintf(buf, sizeof(buf), "%s", name); break;
        case 'N': snprintf(buf, sizeof(buf), "%.*s", (int) (dot ? (size_t) (dot - name) : strlen(name)), name); break;
        case 'p': snprintf(buf, sizeof(buf), "%.*s", (int) prefix, name); break;
        case 'P': unescape(name, prefix, buf, sizeof(buf)); break;
        case 'j': snprintf(buf, sizeof(buf), "%.*s", (int) (prefix - (size_t) (last - name)), last); break;
        case 'J': unescape(last, prefix - (size_t) (last - name), buf, sizeof(buf)); break;
        case 'f':
                buf[0] = '/';
                if (instance)
                        unescape(instance, SIZE_MAX, buf + 1, sizeof(buf) - 1);
                else
                        unescape(name, prefix, buf + 1, sizeof(buf) - 1);
                break;
        default:
                snprintf(buf, sizeof(buf), "%%%c", c); /* left as written: not needed here */
                for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
                        if (c == fixed[i][0][0])
                                snprintf(buf, sizeof(buf), "%s", fixed[i][1]);
        }
        n = strlen(buf);
        if (*len + n >= size)
                return -1;
        memcpy(out + *len, buf, n + 1);
        *len += n;
        return 0;
}

/* The manager expands specifiers in the whole value first, then splits. */
static int expand_specifiers(const struct unit *u, const char *text, char *out, size_t size) {
        size_t len = 0;

        out[0] = '\0';
        for (const char *p = text; *p; p++) {
                if (*p == '%') {
                        if (!p[1] || specifier(u, p[1], out, &len, size) < 0)
                                return -1;
                        p++;
                        continue;
                }
                if (len + 1 >= size)
                        return -1;
                out[len++] = *p;
                out[len] = '\0';
        }
        return 0;
}

/* A C escape after a backslash (the manager's EXTRACT_CUNESCAPE): its
 * value, and how many characters after the backslash it took. */
static char cunescape(const char *p, size_t *taken) {
        static const char letters[] = "a\ab\bf\fn\nr\rt\tv\vs ";

        *taken = 1;
        for (size_t i = 0; letters[i]; i += 2)
                if (p[0] == letters[i])
                        return letters[i + 1];
        if (p[0] == 'x' && hex_value(p[1]) >= 0 && hex_value(p[2]) >= 0) {
                *taken = 3;
                return (char) (hex_value(p[1]) << 4 | hex_value(p[2]));
        }
        return p[0];
}

int words_split(const struct unit *u, const char *text, char **words, int max, enum words_specifiers mode) {
        static char expanded[WORDS_TEXT_MAX];
        const char *p = text;
        int n = 0;

        if (mode == WORDS_EXPAND_TEXT) {
                if (expand_specifiers(u, text, expanded, sizeof(expanded)) < 0)
                        return -1;
                p = expanded;
        }
        for (;;) {
                char word[WORD_MAX], *copy;
                size_t len = 0;
                char quote = 0;

                while (*p && isspace((unsigned char) *p))
                        p++;
                /* The words are not leaked: the caller owns words[0 .. n-1];
                 * gcc's analyser loses them in the caller's array. */
#ifndef __clang__
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif
                if (!*p)
                        return n;
#ifndef __clang__
#pragma GCC diagnostic pop
#endif
                if (n >= max)
                        goto fail;
                while (*p && (quote || !isspace((unsigned char) *p))) {
                        char c = *p++;

                        if (!quote && (c == '"' || c == '\'')) {
                                quote = c;
                                continue;
                        }
                        if (quote && c == quote) {
                                quote = 0;
                                continue;
                        }
                        if (c == '\\' && quote != '\'') {
                                size_t taken;

                                if (!*p)
                                        goto fail;
                                c = cunescape(p, &taken);
                                p += taken;
                        }
                        if (len + 1 >= sizeof(word))
                                goto fail;
                        word[len++] = c;
                        word[len] = '\0';
                }
                if (quote)
                        goto fail;
                word[len] = '\0';
                if (mode == WORDS_EXPAND_WORDS) {
                        if (expand_specifiers(u, word, expanded, sizeof(expanded)) < 0)
                                goto fail;
                        copy = strdup(expanded);
                } else
                        copy = strdup(word);
                if (!copy)
                        goto fail;
                words[n++] = copy;
        }
fail:
        while (n > 0)
                free(words[--n]);
        return -1;
}

int unit_parse_timespan(const char *text, uint64_t *ret_usec) {
        static const struct {
                const char *suffix;
                uint64_t usec;
        } units[] = {
                { "usec", 1 },        { "us", 1 },           { "µs", 1 },          { "msec", 1000 },
                { "ms", 1000 },       { "seconds", 1000000 }, { "second", 1000000 }, { "sec", 1000000 },
                { "s", 1000000 },     { "minutes", 60000000 }, { "minute", 60000000 }, { "min", 60000000 },
                { "m", 60000000 },    { "hours", 3600000000 }, { "hour", 3600000000 }, { "hr", 3600000000 },
                { "h", 3600000000 },  { "days", 86400000000 }, { "day", 86400000000 }, { "d", 86400000000 },
                { "weeks", 604800000000 }, { "week", 604800000000 }, { "w", 604800000000 },
        };
        const char *p = text;
        uint64_t total = 0;
        bool any = false;

        while (isspace((unsigned char) *p))
                p++;
        if (!strcmp(p, "infinity")) {
                *ret_usec = UNIT_INFINITY;
                return 0;
        }
        while (*p) {
                char *end;
                double value;
                size_t i, len;

                if (!isdigit((unsigned char) *p) && *p != '.')
                        return -1;
                value = strtod(p, &end);
                if (end == p || value < 0 || value > 1e15)
                        return -1;
                p = end;
                while (isspace((unsigned char) *p))
                        p++;
                for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
                        len = strlen(units[i].suffix);
                        if (!strncmp(p, units[i].suffix, len) && !isalpha((unsigned char) p[len]))
                                break;
                }
                if (i < sizeof(units) / sizeof(units[0])) {
                        total += (uint64_t) (value * (double) units[i].usec);
                        p += len;
                } else if (*p == '\0' || isdigit((unsigned char) *p)) {
                        total += (uint64_t) (value * 1e6); /* a bare number: seconds */
                } else
                        return -1;
                any = true;
                while (isspace((unsigned char) *p))
                        p++;
        }
        if (!any)
                return -1;
        *ret_usec = total;
        return 0;
}
