/* SPDX-License-Identifier: MIT */
/* Parsing a store URL ("sqlite:PATH", "postgresql:CONNINFO") into its
 * backend and the rest; hostile input is refused here (fuzzed). */

#include "store_url.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static bool starts_with(const char *s, const char *prefix) {
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

int store_url_parse(const char *url, struct store_url *ret, char *why, size_t size) {
        size_t len;

        if (size > 0)
                why[0] = '\0';
        *ret = (struct store_url) { 0 };
        if (!url) {
                snprintf(why, size, "no store URL given");
                return -EINVAL;
        }
        len = strnlen(url, STORE_URL_MAX + 1);
        if (len > STORE_URL_MAX) {
                snprintf(why, size, "store URL longer than %d bytes", STORE_URL_MAX);
                return -EINVAL;
        }
        for (size_t i = 0; i < len; i++)
                if ((unsigned char) url[i] < 0x20 || url[i] == 0x7f) {
                        snprintf(why, size, "store URL holds a control character (byte %zu)", i);
                        return -EINVAL;
                }
        if (starts_with(url, "sqlite:")) {
                const char *path = url + strlen("sqlite:");
                size_t n = len - strlen("sqlite:");

                if (n == 0) {
                        snprintf(why, size, "store URL \"%s\" names no file", url);
                        return -EINVAL;
                }
                if (path[n - 1] == '/') {
                        snprintf(why, size, "store URL \"%.200s\" names a directory, not a file", url);
                        return -EINVAL;
                }
                if (n + STORE_PATH_SUFFIX_MAX >= PATH_MAX) {
                        snprintf(why, size, "store path is longer than %d bytes", PATH_MAX - STORE_PATH_SUFFIX_MAX - 1);
                        return -EINVAL;
                }
                *ret = (struct store_url) { .kind = STORE_URL_SQLITE, .rest = path };
                return 0;
        }
        if (starts_with(url, "postgresql:")) {
                const char *conninfo = url + strlen("postgresql:");

                if (!*conninfo) {
                        snprintf(why, size, "store URL \"%s\" names no database", url);
                        return -EINVAL;
                }
                *ret = (struct store_url) { .kind = STORE_URL_POSTGRESQL, .rest = conninfo };
                return 0;
        }
        snprintf(why, size, "store URL \"%.200s\" is neither sqlite:PATH nor postgresql:CONNINFO", url);
        return -EINVAL;
}
