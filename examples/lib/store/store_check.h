/* SPDX-License-Identifier: MIT */
#ifndef SDLIVE_EXAMPLE_STORE_CHECK_H
#define SDLIVE_EXAMPLE_STORE_CHECK_H

/* Argument checks of the public entry points (store.c). Each returns 0 or
 * -EINVAL with a message on s. */

#include "store_backend.h"

/* Every entry point starts here: -EINVAL for a NULL handle, else clears
 * the previous message. */
int store_begin_call(struct store *s);
/* A name of 1 to STORE_NAME_MAX bytes; `what` names it in the message. */
int store_check_name(struct store *s, const char *what, const char *name);
/* A complete fence: lease and holder names, an issued generation, an
 * identity of at most STORE_ID_MAX bytes (or NULL); and a deadline for
 * acting not yet passed (-ESTALE), checked before the call connects. */
int store_check_fence(struct store *s, const struct store_fence *f);
/* A generation that was ever issued: 1 to INT64_MAX. */
int store_check_generation(struct store *s, uint64_t generation);
/* A lease time of 1 us to ten years. */
int store_check_ttl(struct store *s, uint64_t ttl_usec);
/* A run and job number that can exist. */
int store_check_job(struct store *s, uint64_t run, uint32_t job);
/* Room for 1 to INT32_MAX items at out. */
int store_check_batch(struct store *s, const void *out, size_t max);

#endif
