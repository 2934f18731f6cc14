/* SPDX-License-Identifier: MIT */
/* Words and time spans of unit settings, as the manager reads them. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "words.h"

#define WORD_MAX 4096

/* Appends the expansion of specifier c to out (at most size bytes). */
static int specifier(const struct unit *u, char c, char *out, size_t *len, size_t size) {
        char buf[512] = "";
        const char *name = u && u->name ? u->name : "";
        const char *at = strchr(name, '@'), *dot = strrchr(name, '.');
        size_t n;

        switch (c) {
        case '%': strcpy(buf, "%"); break;
        case 'i':
        case 'I': snprintf(buf, sizeof(buf), "%s", u && u->instance ? u->instance : ""); break;
        case 'n': snprintf(buf, sizeof(buf), "%s", name); break;
        case 'N': snprintf(buf, sizeof(buf), "%.*s", (int) (dot ? (size_t) (dot - name) : strlen(name)), name); break;
        case 'p':
                snprintf(buf, sizeof(buf), "%.*s",
                         (int) (at ? (size_t) (at - name) : dot ? (size_t) (dot - name) : strlen(name)), name);
                break;
        default: /* left as written: the linter does not need its value */
                snprintf(buf, sizeof(buf), "%%%c", c);
        }
        n = strlen(buf);
        if (*len + n >= size)
                return -1;
        memcpy(out + *len, buf, n + 1);
        *len += n;
        return 0;
}

int words_split(const struct unit *u, const char *text, char **words, int max, bool specifiers) {
        const char *p = text;
        int n = 0;

        for (;;) {
                char word[WORD_MAX];
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
                                if (!*p)
                                        goto fail;
                                c = *p++;
                        } else if (c == '%' && specifiers) {
                                if (!*p || specifier(u, *p++, word, &len, sizeof(word)) < 0)
                                        goto fail;
                                continue;
                        }
                        if (len + 1 >= sizeof(word))
                                goto fail;
                        word[len++] = c;
                        word[len] = '\0';
                }
                if (quote)
                        goto fail;
                word[len] = '\0';
                char *copy = strdup(word);

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
