/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_EXAMPLE_STORE_URL_H
#define SDLIVE_EXAMPLE_STORE_URL_H

/* Which backend a store URL names, and what follows its prefix (store_url.c). */

#include <stddef.h>

/* Longest store URL accepted, without the NUL. */
#define STORE_URL_MAX 4096
/* Longest suffix the store appends to a SQLite path ("-released"). */
#define STORE_PATH_SUFFIX_MAX 16

enum store_url_kind {
        STORE_URL_SQLITE = 1,  /* "sqlite:PATH" */
        STORE_URL_POSTGRESQL,  /* "postgresql:CONNINFO" (libpq checks CONNINFO) */
};

struct store_url {
        enum store_url_kind kind;
        const char *rest; /* PATH or CONNINFO: points into the URL, not empty */
};

/* Splits a store URL (an option value: hostile input) into its backend and
 * the rest. 0, or -EINVAL with a one-line reason in why that never quotes a
 * control character: a URL longer than STORE_URL_MAX or holding a control
 * character (it would forge log lines), an unknown scheme, an empty rest, a
 * SQLite path ending in '/' or too long for PATH_MAX with the store's
 * suffixes. Pure: no allocation, no I/O. Every field of *ret is written:
 * zero on failure. */
int store_url_parse(const char *url, struct store_url *ret, char *why, size_t size);

#endif
