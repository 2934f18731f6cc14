/* SPDX-License-Identifier: MIT */
/* Fuzz target for the store URL parser (examples/lib/store/store_url.c).
 *
 * Input: the option value as the command line would pass it (cut at the
 * first NUL). Beyond "no crash": a URL is accepted exactly when an
 * independent reading accepts it, with the same backend and rest; the
 * reason of a refusal is one line without control characters and fits its
 * buffer. */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_target.h"
#include "store_url.h"

/* The accepting reading: kind, or 0 for a refusal. */
static int reference(const char *url, const char **rest) {
        size_t len = strlen(url), n;

        if (len > STORE_URL_MAX)
                return 0;
        for (size_t i = 0; i < len; i++)
                if ((unsigned char) url[i] < 0x20 || url[i] == 0x7f)
                        return 0;
        if (len > 7 && memcmp(url, "sqlite:", 7) == 0) {
                *rest = url + 7;
                n = len - 7;
                return url[len - 1] != '/' && n + STORE_PATH_SUFFIX_MAX < PATH_MAX ? STORE_URL_SQLITE : 0;
        }
        if (len > 11 && memcmp(url, "postgresql:", 11) == 0) {
                *rest = url + 11;
                return STORE_URL_POSTGRESQL;
        }
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *url = malloc(size + 1), why[256];
        const char *rest = NULL;
        struct store_url u;
        int r, kind;

        if (!url)
                return 0;
        memcpy(url, data, size);
        url[size] = '\0';
        memset(why, 'x', sizeof why);
        memset(&u, 0xa5, sizeof u); /* every field must be written over it */
        r = store_url_parse(url, &u, why, sizeof why);
        kind = reference(url, &rest);
        CHECK(memchr(why, '\0', sizeof why) != NULL);
        if (r == 0) {
                CHECK(kind != 0);
                CHECK((int) u.kind == kind);
                CHECK(u.rest == rest && *u.rest);
                CHECK(why[0] == '\0');
        } else {
                CHECK(kind == 0);
                CHECK(u.kind == 0 && u.rest == NULL);
                CHECK(why[0] != '\0');
                for (const char *c = why; *c; c++)
                        CHECK((unsigned char) *c >= 0x20 && *c != 0x7f);
        }
        /* NULL and a zero-sized reason buffer are refused without a write. */
        CHECK(store_url_parse(NULL, &u, why, sizeof why) < 0);
        CHECK(store_url_parse(url, &u, why, 0) == r);
        free(url);
        return 0;
}
