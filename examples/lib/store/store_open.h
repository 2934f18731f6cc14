/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_EXAMPLE_STORE_OPEN_H
#define SDLIVE_EXAMPLE_STORE_OPEN_H

/* The backend constructors, called by the factory (store_open.c) and
 * defined by each backend's open file (sqlite_open.c, pg_open.c). Kept
 * out of store_backend.h, which the backends include for the shared
 * helpers, so the factory and the helpers do not depend on each other. */

#include "store_backend.h"

/* On failure they return < 0 with a message in errbuf and leave *ret
 * NULL. */
int store_sqlite_open(const char *path, bool readonly, struct store **ret, char *errbuf, size_t errlen);
#if SDLIVE_STORE_HAVE_POSTGRES
int store_pg_open(const char *conninfo, bool readonly, struct store **ret, char *errbuf, size_t errlen);
#endif

#endif
